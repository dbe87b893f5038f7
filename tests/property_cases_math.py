"""Property cases of the gradient classes of ``chainer.functions.math``
(see ``property_cases``): each runs a forward function, then a backward
pass from a gradient of ones that applies the target class once (or applies
the gradient node as the forward's backward would)."""

from chainer.functions.math.matmul import BatchMatMul
from chainer.functions.math.sparse_matmul import CooMatMulGradSP
import chainer.functions as F
import numpy as np

from property_cases import B
from property_cases import case
from property_cases import CHAINER_MAJOR
from property_cases import Spec
from property_cases import var


def _backward(f):
    """``f`` on Variables of its arguments, then backward from ones."""
    def run(*arrays):
        y = f(*[var(a) for a in arrays])
        y.grad = np.ones_like(y.array)
        y.backward()
    return run


# Element-wise gradients of one input: g_x shaped as x, everything batched.

for _target, _fn in [
        ('SinGrad', F.sin), ('CosGrad', F.cos), ('ArcsinGrad', F.arcsin),
        ('ArccosGrad', F.arccos), ('ArctanGrad', F.arctan),
        ('AbsoluteGrad', F.absolute)]:
    def _build(d, n, fn=_fn):
        return Spec(_backward(fn), [B(d.x(n))])
    case(_target)(_build)


for _target, _fn in [
        ('DivFromConstantGrad', lambda x, c: c / x),
        ('PowVarConstGrad', lambda x, c: x ** c),
        ('PowConstVarGrad', lambda x, c: c ** x)]:
    def _build(d, n, fn=_fn):
        c = d.pick([0.5, 2.0, 3.0])
        # the scalar constant is read once
        return Spec(_backward(lambda x: fn(x, c)), [B(d.x(n))],
                    const_reads=1)
    case(_target)(_build)


@case('ClipGrad')
def _clip_grad(d, n):
    lo, hi = 0.3, 0.7
    if CHAINER_MAJOR >= 7:
        lo, hi = d.pick([(0.3, 0.7), (None, 0.7), (0.3, None)])
    # the gradient reads g_y and the mask, both batched: no constant
    return Spec(_backward(lambda x: F.clip(x, lo, hi)), [B(d.x(n))])


# Gradients of two broadcasting inputs: the second input is batched like
# the first, or a batch-independent array broadcast over the batch (then
# its gradient, summed over the batch, is a fixed part of mwrite and of the
# FLOPs).

def _broadcast_grad_case(target, fn, broadcast=True, reads_b=True):
    @case(target)
    def build(d, n):
        a = d.x(n)
        if not broadcast or d.bool():
            return Spec(_backward(fn), [B(a), B(d.u(*a.shape))])
        tail = a.shape[d.int(1, a.ndim):]
        b = d.u(*(1 if d.bool() else s for s in tail))
        return Spec(_backward(fn), [B(a), b], affine=('flops', 'mwrite'),
                    fixed_mread=None if reads_b else 0)
    return build


_broadcast_grad_case('DivGrad', lambda a, b: a / b)
_broadcast_grad_case('PowVarVarGrad', lambda a, b: a ** b)
# MaximumGrad reads a mask shaped as g_y instead of the inputs
_broadcast_grad_case('MaximumGrad', F.maximum, reads_b=False)
_broadcast_grad_case('MinimumGrad', F.minimum)
# Chainer's Arctan2Grad does not sum broadcast axes: same shapes only
_broadcast_grad_case('Arctan2Grad', F.arctan2, broadcast=False)


@case('LinearInterpolateGrad')
def _linear_interpolate_grad(d, n):
    x = d.x(n)
    return Spec(_backward(F.linear_interpolate),
                [B(x), B(d.u(*x.shape)), B(d.u(*x.shape))])


@case('BatchL2NormSquaredGrad')
def _batch_l2_norm_squared_grad(d, n):
    return Spec(_backward(F.batch_l2_norm_squared), [B(d.x(n))])


@case('BatchMatMulGrad')
def _batch_matmul_grad(d, n):
    p, k, m = d.dims(3)
    transa, transb = d.bool(), d.bool()
    a = d.u(n, k, p) if transa else d.u(n, p, k)
    b = d.u(n, m, k) if transb else d.u(n, k, m)

    def f(a, b):
        # F.batch_matmul is deprecated (a warning): apply the node
        return BatchMatMul(transa, transb).apply((a, b))[0]
    return Spec(_backward(f), [B(a), B(b)])


@case('CooMatMulGradSP')
def _coo_matmul_grad_sp(d, n):
    # The gradient of C = A B with respect to the z stored values of the
    # sparse A (M, K), as CooMatMul's backward applies it: g_C (M, N) times
    # the transposed B (K, N), the batch being the N columns. Its CPU
    # forward needs no SciPy.
    m, k = d.dims(2)
    z = d.int(1, m * k)
    flat = d.rng.choice(m * k, z, replace=False)
    row, col = (flat // k).astype(np.int32), (flat % k).astype(np.int32)

    def f(row, col, gc, b):
        node = CooMatMulGradSP(row, col, (m, k), transb=True)
        return node.apply((gc, b))
    # the index arrays are read once whatever the batch; one gradient per
    # stored value: mwrite does not grow with the batch of columns, nor do
    # the no-FMA FLOPs' -z
    return Spec(f, [row, col, B(d.u(m, n), axis=1), B(d.u(k, n), axis=1)],
                affine=('flops', 'mwrite'))
