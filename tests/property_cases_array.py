"""Property cases of the gradient classes of ``chainer.functions.array``
(see ``property_cases`` for the markers and the Spec).

Each gradient case draws its call as the case of the forward function
does, then runs that function on a Variable and a backward pass from a
gradient of ones, so that the gradient class is applied exactly once.
Every one of them writes the gradient of the input, of the input's shape
(zeros included): ``writes_outputs`` holds.
"""

import chainer.functions as F
import numpy as np

from property_cases import _diagonal
from property_cases import _get_item_basic
from property_cases import _get_item_int_arrays
from property_cases import _get_item_mask
from property_cases import _im2col
from property_cases import _numpy_float_alias
from property_cases import _resize_images_inputs
from property_cases import B
from property_cases import case
from property_cases import Spec
from property_cases import var


def _backward(y):
    y.grad = np.ones_like(y.array)
    y.backward()


def _through_backward(spec):
    """The forward case ``spec`` (its first argument on the batch axis),
    run forward and backward. The gradient reads the output gradient and
    the forward's batch-independent arrays (index arrays) as the forward
    reads its input and them."""
    forward = spec.fn

    def f(x, *rest):
        _backward(forward(var(x), *rest))
    return Spec(f, spec.args, fixed_mread=spec.fixed_mread)


@case('AsStridedGrad')
def _as_strided_grad(d, n):
    # as the AsStrided case, on the flat x of n rows of m >= 2: Chainer's
    # backward returns a gradient without x's axes of length 1, and fails
    # when every axis of the windows but the batch has length 1
    m = d.int(2, 5)
    w = d.int(1, m)

    def f(x):
        _backward(F.as_strided(var(x), (x.size // m, m - w + 1, w),
                               (m, 1, 1)))
    return Spec(f, [B(d.u(n * m))])


@case('DiagonalGrad')
def _diagonal_grad(d, n):
    return _through_backward(_diagonal(d, n))


@case('GetItemGrad', 'basic')
def _get_item_grad_basic(d, n):
    return _through_backward(_get_item_basic(d, n))


@case('GetItemGrad', 'int-arrays')
def _get_item_grad_int_arrays(d, n):
    # index arrays may repeat elements: the gradients are summed
    return _through_backward(_get_item_int_arrays(d, n))


@case('GetItemGrad', 'mask')
def _get_item_grad_mask(d, n):
    # the gradient has the real selection's size: no upper bound here
    return _through_backward(_get_item_mask(d, n))


@case('Im2ColGrad')
def _im2col_grad(d, n):
    return _through_backward(_im2col(d, n))


@case('RepeatGrad')
def _repeat_grad(d, n):
    # as the Repeat case, but a single repeat count (or a tuple of one) is
    # at least 1: Chainer's backward fails on it (0 among several works)
    x = d.x(n)
    if d.bool():
        axis, repeats = None, d.int(1, 3)
    else:
        axis = d.int(1, x.ndim - 1)
        if d.bool():
            repeats = d.int(1, 3)
        else:
            lo = 0 if x.shape[axis] > 1 else 1
            repeats = tuple(d.int(lo, 3) for _ in range(x.shape[axis]))

    def f(x):
        _backward(F.repeat(var(x), repeats, axis))
    return Spec(f, [B(x)])


@case('ResizeImagesGrad')
def _resize_images_grad(d, n):
    x, size, kwargs = _resize_images_inputs(d, n)

    def f(x):
        # the backward computes its weights with numpy.float too
        with _numpy_float_alias():
            _backward(F.resize_images(var(x), size, **kwargs))
    return Spec(f, [B(x)])
