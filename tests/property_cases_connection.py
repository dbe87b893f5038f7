"""Property cases of the gradient classes of ``chainer.functions.connection``
(see ``property_cases`` for the markers and the Spec).

Each callable runs the forward function on Variables and a backward pass
from a gradient of ones, so that the target gradient class is applied
exactly once. A gradient node does not read the forward's parameters it
does not need, so ``fixed_mread`` is given explicitly; the weight
gradients write a batch-independent array and sum over the batch (their
FLOPs without FMA are ``|gW| (2M - 1)``), hence ``affine``.
"""

import chainer.functions as F
import numpy as np

from property_cases import _args
from property_cases import _conv_nd_inputs
from property_cases import _linear_inputs
from property_cases import _window
from property_cases import B
from property_cases import case
from property_cases import Spec
from property_cases import var


def _backward(y):
    y.grad = np.ones_like(y.array)
    y.backward()


WEIGHT_GRAD = ('flops', 'mwrite')


@case('Convolution2DGradW')
def _conv2d_grad_w(d, n):
    kh, sy, ph, dy, h = _window(d)
    kw, sx, pw, dx, w = _window(d)
    g = d.int(1, 2)
    c, o = g * d.int(1, 2), g * d.int(1, 2)
    cover_all = d.bool()
    x, W = d.u(n, c, h, w), d.u(o, c // g, kh, kw)

    def f(x, W):
        # only W needs a gradient: x's would be a Deconvolution2DFunction
        _backward(F.convolution_2d(x, var(W), None, (sy, sx), (ph, pw),
                                   cover_all, dilate=(dy, dx), groups=g))
    # reads x and gy, not W
    return Spec(f, [B(x), W], fixed_mread=0, affine=WEIGHT_GRAD)


@case('Convolution2DGradW', 'deconvolution')
def _deconv2d_grad_w(d, n):
    # Deconvolution2DFunction's weight gradient: (gy, x) in x's place
    kh, kw = d.dims(2, hi=3)
    s = d.int(1, 2)
    g = d.int(1, 2)
    c, o = g * d.int(1, 2), g * d.int(1, 2)
    x, W = d.u(n, c, d.int(1, 3), d.int(1, 3)), d.u(c, o // g, kh, kw)

    def f(x, W):
        # x needs a gradient too: Chainer 7.8.1's deconvolution fails when
        # only W does (_set_cover_all gets the arrays, not their shapes)
        _backward(F.deconvolution_2d(var(x), var(W), stride=s, groups=g))
    return Spec(f, [B(x), W], fixed_mread=0, affine=WEIGHT_GRAD)


@case('ConvolutionNDGradW')
def _conv_nd_grad_w(d, n):
    x, W, (s, p, cover_all, dil, g) = _conv_nd_inputs(d, n)

    def f(x, W):
        _backward(F.convolution_nd(x, var(W), None, s, p, cover_all, dil, g))
    return Spec(f, [B(x), W], fixed_mread=0, affine=WEIGHT_GRAD)


@case('LinearGradData')
def _linear_grad_data(d, n):
    x, W, b, axes = _linear_inputs(d, n)

    def f(x, W, b=None):
        # only x needs a gradient
        _backward(F.linear(var(x), W, b, n_batch_axes=axes))
    # reads W and gy, not b
    return Spec(f, _args(B(x), W, b), fixed_mread=W.size)


@case('LinearGradWeight')
def _linear_grad_weight(d, n):
    x, W, b, axes = _linear_inputs(d, n)

    def f(x, W, b=None):
        _backward(F.linear(x, var(W), b, n_batch_axes=axes))
    # reads x and gy
    return Spec(f, _args(B(x), W, b), fixed_mread=0, affine=WEIGHT_GRAD)


@case('BilinearFunctionGrad')
def _bilinear_grad(d, n):
    j, k, out = d.dims(3, hi=3)
    e1, e2, W = d.u(n, j), d.u(n, k), d.u(j, k, out)
    rest = [d.u(j, out), d.u(k, out), d.u(out)] if d.bool() else []

    def f(*arrays):
        _backward(F.bilinear(*[var(a) for a in arrays]))
    # reads W (and V1, V2, not b); writes gW (and gV1, gV2, gb) whatever
    # the batch
    return Spec(f, [B(e1), B(e2), W] + rest,
                fixed_mread=sum(a.size for a in [W] + rest[:2]),
                affine=('flops', 'mwrite'))


@case('EmbedIDGrad')
def _embed_id_grad(d, n):
    v, dim = d.dims(2)
    ignore = d.pick([None, -1])
    x = d.ints((n,) + d.dims(d.int(0, 2), hi=3), 0 if ignore is None else -1,
               v)

    def f(x, W):
        _backward(F.embed_id(x, var(W), ignore))
    # reads the ids and gy (the label is an id-typed constant read once);
    # writes gW whole
    return Spec(f, [B(x), d.u(v, dim)],
                fixed_mread=0 if ignore is None else 1, affine=('mwrite',),
                unscaled={
                    # only the rows beyond the V rows of W must be added:
                    # max(0, |x| - V) D is not affine in the batch
                    'flops': 'max(0, |x| - V) D additions'})
