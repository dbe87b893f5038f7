"""Property cases of the gradient classes of
``chainer.functions.normalization`` (see ``property_cases`` for the markers
and the Spec).

Each callable runs the forward function on Variables and a backward pass
from a gradient of ones, so that the target gradient class is applied
exactly once. A gradient node reads what the forward pass kept for it
(per-channel statistics, eigenvectors, ...) and not every forward input,
so ``fixed_mread`` is given explicitly; per-channel or per-group work and
the gradients of the parameters do not grow with the batch, hence
``affine``.
"""

import chainer.functions as F
from chainer.functions.normalization.group_normalization import _MulInvStd
import numpy as np

from property_cases import _channels_input
from property_cases import B
from property_cases import case
from property_cases import Spec
from property_cases import var


def _backward(y):
    y.grad = np.ones_like(y.array)
    y.backward()


PER_CHANNEL = ('flops', 'mwrite')


@case('BatchNormalizationGrad')
def _batch_normalization_grad(d, n):
    c = d.int(1, 3)
    x = _channels_input(d, n, c, samples=True)

    def f(x, gamma, beta):
        _backward(F.batch_normalization(var(x), var(gamma), var(beta)))
    # reads gamma and the C means and C inverse deviations the forward
    # kept, not beta
    return Spec(f, [B(x), d.u(c), d.u(c)], fixed_mread=3 * c,
                affine=PER_CHANNEL)


@case('FixedBatchNormalizationGrad')
def _fixed_batch_normalization_grad(d, n):
    c = d.int(1, 3)
    x = _channels_input(d, n, c)

    def f(x, gamma, beta, mean, var_):
        _backward(F.fixed_batch_normalization(var(x), gamma, beta, mean,
                                              var_))
    # reads gamma, mean and var, not beta
    return Spec(f, [B(x), d.u(c), d.u(c), d.u(c), d.u(c)],
                fixed_mread=3 * c, affine=PER_CHANNEL)


@case('DecorrelatedBatchNormalizationGrad')
def _decorrelated_batch_normalization_grad(d, n):
    g, c = d.int(1, 2), d.int(1, 2)
    x = _channels_input(d, n, g * c, samples=True)

    def f(x):
        # a batch of one has no covariance: not this test's business
        with np.errstate(divide='ignore', invalid='ignore'):
            _backward(F.decorrelated_batch_normalization(var(x), groups=g))
    # the g C eigenvalues and g C^2 eigenvectors the forward kept; the
    # per-group matrices do not grow with the batch
    return Spec(f, [B(x)], fixed_mread=g * c + g * c * c,
                affine=('flops',))


@case('FixedDecorrelatedBatchNormalizationGrad')
def _fixed_decorrelated_batch_normalization_grad(d, n):
    g, c = d.int(1, 2), d.int(1, 2)
    x = _channels_input(d, n, g * c)

    def f(x, mean, projection):
        _backward(F.fixed_decorrelated_batch_normalization(
            var(x), mean, projection, g))
    return Spec(f, [B(x), d.u(g, c), d.u(g, c, c)], affine=PER_CHANNEL,
                writes_outputs='Chainer returns a (g, m, m) array for the '
                               'projection gradient; the cost model writes '
                               'the (g, C, C) gradient')


def _group_normalization_grad(d, n):
    g, c = d.int(1, 2), d.int(1, 2)
    x = _channels_input(d, n, g * c)

    def f(x, gamma, beta):
        _backward(F.group_normalization(var(x), g, var(gamma), var(beta)))
    return x, g * c, f


@case('_XHat')
def _group_norm_x_hat(d, n):
    x, _, f = _group_normalization_grad(d, n)
    # reads x and one mean and inverse deviation per row (sample and group)
    return Spec(f, [B(x), d.u(x.shape[1]), d.u(x.shape[1])], fixed_mread=0)


@case('_ScaleShiftGrad')
def _group_norm_scale_shift_grad(d, n):
    x, c, f = _group_normalization_grad(d, n)
    # reads gamma; its and beta's gradients do not grow with the batch
    return Spec(f, [B(x), d.u(c), d.u(c)], fixed_mread=c,
                affine=PER_CHANNEL)


@case('_XHatGrad')
def _group_norm_x_hat_grad(d, n):
    x, c, f = _group_normalization_grad(d, n)
    # reads the gradient, x_hat and the inverse deviations: all per row
    return Spec(f, [B(x), d.u(c), d.u(c)], fixed_mread=0)


@case('_MulInvStd')
def _group_norm_mul_inv_std(d, n):
    # applied only by the double backprop of GroupNormalization, several
    # times: the node is applied directly on (n, K) rows
    k = d.int(1, 4)

    def f(x, y, mean, inv_std):
        return _MulInvStd(1e-5, mean, inv_std, None).apply((x, y))
    return Spec(f, [B(d.u(n, k)), B(d.u(n, k)), B(d.u(n)), B(d.u(n))])


@case('_SetItemZero')
def _l2_set_item_zero(d, n):
    x = d.x(n)
    axis = d.int(1, x.ndim - 1)

    def f(x):
        _backward(F.normalize(var(x), axis=axis))
    # the values (one per slice: every norm is non-zero here) and the mask
    # both grow with the batch
    return Spec(f, [B(x)], fixed_mread=0)


@case('LocalResponseNormalizationGrad')
def _local_response_normalization_grad(d, n):
    x = _channels_input(d, n, d.int(1, 6))
    window = d.pick([1, 3, 5])

    def f(x):
        _backward(F.local_response_normalization(var(x), window))
    # the coefficient 2 alpha beta is a scalar read once
    return Spec(f, [B(x)], const_reads=1)
