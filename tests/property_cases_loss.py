"""Property cases of the gradient classes of ``chainer.functions.loss`` (see
``property_cases`` for the markers and the Spec).

Each callable runs the loss on a Variable and a backward pass from a
gradient of ones, so that the target gradient class is applied exactly
once. Labels and samples are on the batch axis; a scalar constant (the
ignore label) is read once.
"""

import chainer.functions as F
import numpy as np

from property_cases import _args
from property_cases import _reduce
from property_cases import B
from property_cases import case
from property_cases import Spec
from property_cases import var


def _backward(y):
    y.grad = np.ones_like(y.array)
    y.backward()


@case('SigmoidCrossEntropyGrad')
def _sigmoid_cross_entropy_grad(d, n):
    x = d.x(n, 1, 2)
    normalize = d.bool()
    reduce, _ = _reduce(d)

    def f(x, t):
        _backward(F.sigmoid_cross_entropy(var(x), t, normalize, reduce))
    # the ignore label is a scalar read once; for 'mean' the incoming
    # gradient is one value and s = g_y / count is one division
    return Spec(f, [B(x), B(d.ints(x.shape, -1, 2))],
                const_reads=1 + int(reduce == 'mean'),
                affine=('flops',) if reduce == 'mean' else ())


@case('_SoftmaxCrossEntropyGrad_NoDoubleBackprop', 'labels')
def _softmax_cross_entropy_grad(d, n):
    c = d.int(1, 4)
    rest = d.dims(d.int(0, 1), hi=3)
    t = d.ints((n,) + rest, -1, c)
    t.flat[0] = 0  # never every label ignored
    normalize, cache = d.bool(), d.bool()
    reduce, _ = _reduce(d)
    weight = d.u(c) if d.bool() else None

    def f(x, t, w=None):
        _backward(F.softmax_cross_entropy(
            var(x), t, normalize, cache, class_weight=w, reduce=reduce))
    # the ignore label is a scalar read once; for 'mean' the incoming
    # gradient is one value, scaled once by the coefficient
    return Spec(f, _args(B(d.u(n, c, *rest)), B(t), weight),
                const_reads=1 + int(reduce == 'mean'),
                affine=('flops',) if reduce == 'mean' else ())


@case('_SoftmaxCrossEntropyGrad_NoDoubleBackprop', 'soft-target',
      requires='7')
def _softmax_cross_entropy_grad_soft(d, n):
    c = d.int(1, 4)
    t = d.u(n, c)
    t /= t.sum(axis=1, keepdims=True)
    loss = d.pick(['cross-entropy', 'kl-divergence'])
    cache = d.bool()
    reduce, _ = _reduce(d)

    def f(x, t):
        _backward(F.softmax_cross_entropy(var(x), t, cache_score=cache,
                                          reduce=reduce,
                                          soft_target_loss=loss))
    # for 'mean' the incoming gradient is one value, scaled once
    return Spec(f, [B(d.u(n, c)), B(t)], const_reads=int(reduce == 'mean'),
                affine=('flops',) if reduce == 'mean' else ())


@case('NegativeSamplingFunctionGrad')
def _negative_sampling_grad(d, n):
    v, dim, k = d.int(1, 5), d.int(1, 3), d.int(1, 3)
    reduce = d.pick(['sum', 'no'])
    rng = d.rng

    def sampler(shape):
        return rng.randint(0, v, shape).astype(np.int32)

    def f(x, t, W):
        _backward(F.negative_sampling(var(x), t, var(W), sampler, k,
                                      reduce=reduce))
    unscaled = {
        # at most the V rows of W are read: min(n (k+1) D, |W|) is not
        # affine
        'mread': 'min(n (k+1) D, |W|) elements of W are read'}
    return Spec(f, [B(d.u(n, dim)), B(d.ints((n,), 0, v)), d.u(v, dim)],
                # the whole gradient of W is written whatever the batch
                affine=('mwrite',), unscaled=unscaled,
                writes_outputs='the outputs include None for t')
