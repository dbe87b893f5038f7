"""Calculators of chainer.functions.math: reductions, products and linear
algebra.  Expected numbers are derived by hand from the docstring formulas.
"""

import numpy as np
import pytest

import chainer
import chainer.functions as F
from chainer.functions.math.cumprod import Cumprodsum
from chainer.functions.math.einsum import DiagEinSum
from chainer.functions.math.matmul import BatchMatMul
from chainer.functions.math.matmul import MatMul
from chainer.functions.math.sparse_matmul import CooMatMul
from chainer.functions.math.tensordot import TensorDot

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.cost_calculators import calculators
from chainer_computational_cost.cost_calculators import validate_cost

from helpers import cost
from helpers import flops_by_layer


def _z(*shape):
    return np.zeros(shape, np.float32)


def _r(*shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


def _direct(node, in_data, fma=True):
    """Cost of a node that cannot be run here, from the registry."""
    calc = calculators[type(node)]
    return validate_cost(calc(node, in_data, fma_1flop=fma),
                         calc.__name__, type(node).__name__)


# Max, Min, ArgMax, ArgMin

def test_max():
    x = _z(2, 3, 4)
    # y: (2, 4), |y| = 8; 24 - 8 = 16 comparisons
    c = cost(F.max, x, axis=1)
    assert c == (16, 24, 8, {'axis': (1,)})
    assert c.mwrite == F.max(x, axis=1).size
    # keepdims: y (2, 1, 4), same counts
    assert cost(F.max, x, axis=1, keepdims=True) == \
        (16, 24, 8, {'axis': (1,)})
    # all axes: |y| = 1; 24 - 1 = 23
    assert cost(F.max, x) == (23, 24, 1, {'axis': None})


def test_max_batch1():
    x = _z(1, 3, 4)
    # axis (1, 2): y (1,), 12 - 1 = 11
    c = cost(F.max, x, axis=(1, 2))
    assert c == (11, 12, 1, {'axis': (1, 2)})
    assert c.mwrite == F.max(x, axis=(1, 2)).size


def test_min():
    x = _z(3, 5)
    # axis 0: y (5,), 15 - 5 = 10
    assert cost(F.min, x, axis=0) == (10, 15, 5, {'axis': (0,)})
    # axis -1: y (3,), 15 - 3 = 12
    c = cost(F.min, x, axis=-1)
    assert c == (12, 15, 3, {'axis': (-1,)})
    assert c.mwrite == F.min(x, axis=-1).size


def test_argmax():
    x = _z(2, 3, 4)
    # axis 2: y (2, 3), 24 - 6 = 18
    c = cost(F.argmax, x, axis=2)
    assert c == (18, 24, 6, {'axis': 2})
    assert c.mwrite == F.argmax(x, axis=2).size
    # axis None: y (), 24 - 1 = 23
    assert cost(F.argmax, x) == (23, 24, 1, {'axis': None})


def test_argmin():
    x = _z(4, 5)
    # axis 0: y (5,), 20 - 5 = 15
    c = cost(F.argmin, x, axis=0)
    assert c == (15, 20, 5, {'axis': 0})
    assert c.mwrite == F.argmin(x, axis=0).size
    # batch 1, axis -1: x (1, 5), y (1,), 5 - 1 = 4
    assert cost(F.argmin, _z(1, 5), axis=-1) == (4, 5, 1, {'axis': -1})


def typed(value):
    """``value`` with the type of every part spelled out, so that ``==``
    also compares types (``(1,) == [1]`` is False but ``1 == 1.0`` and
    ``True == 1`` are True)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return (type(value), tuple(typed(v) for v in value))
    return (type(value), value)


# The params of the types 0.1.2 covered keep 0.1.2's keys and value types:
# {'axis': the node's own axis} (Max, Min and Sum normalise an int axis to
# a 1-tuple; ArgMax and ArgMin keep the int); keepdims is not reported.
REDUCTION_PARAMS_012 = [
    (F.max, {}, {'axis': None}),
    (F.max, {'axis': 1}, {'axis': (1,)}),
    (F.max, {'axis': (0, 2), 'keepdims': True}, {'axis': (0, 2)}),
    (F.min, {'axis': -1, 'keepdims': True}, {'axis': (-1,)}),
    (F.min, {}, {'axis': None}),
    (F.sum, {'axis': 2}, {'axis': (2,)}),
    (F.sum, {'keepdims': True}, {'axis': None}),
    (F.argmax, {'axis': 1}, {'axis': 1}),
    (F.argmax, {}, {'axis': None}),
    (F.argmin, {'axis': -1}, {'axis': -1}),
]


@pytest.mark.parametrize('fn,kwargs,expected', REDUCTION_PARAMS_012)
def test_reduction_params_as_0_1_2(fn, kwargs, expected):
    params = cost(fn, _z(2, 3, 4), **kwargs).params
    assert params == expected
    assert typed(params) == typed(expected)


# Sum, SumTo, Prod, Mean, LogSumExp

def test_sum():
    x = _z(2, 3, 4)
    # axis (0, 2): y (3,), 24 - 3 = 21 additions
    c = cost(F.sum, x, axis=(0, 2))
    assert c == (21, 24, 3, {'axis': (0, 2)})
    assert c.mwrite == F.sum(x, axis=(0, 2)).size
    # keepdims: y (1, 3, 1), same counts
    assert cost(F.sum, x, axis=(0, 2), keepdims=True) == \
        (21, 24, 3, {'axis': (0, 2)})
    # everything: 24 - 1 = 23
    assert cost(F.sum, x) == (23, 24, 1, {'axis': None})
    # batch 1: x (1, 4), axis 1 -> y (1,), 4 - 1 = 3
    assert cost(F.sum, _z(1, 4), axis=1) == (3, 4, 1, {'axis': (1,)})


def test_sum_to():
    x = _z(2, 3, 4)
    # (2, 3, 4) -> (3, 4): |y| = 12, 24 - 12 = 12 additions
    c = cost(F.sum_to, x, (3, 4))
    assert c == (12, 24, 12, {'shape': (3, 4)})
    assert c.mwrite == F.sum_to(x, (3, 4)).size
    # (2, 3, 4) -> (2, 1, 4): |y| = 8, 24 - 8 = 16
    assert cost(F.sum_to, x, (2, 1, 4)) == (16, 24, 8, {'shape': (2, 1, 4)})


def test_prod():
    x = _z(2, 3)
    # axis 1: y (2,), 6 - 2 = 4 multiplications
    c = cost(F.prod, x, axis=1)
    assert c == (4, 6, 2, {'axis': (1,), 'keepdims': False})
    assert c.mwrite == F.prod(x, axis=1).size
    # all, keepdims: y (1, 1), 6 - 1 = 5
    assert cost(F.prod, x, keepdims=True) == \
        (5, 6, 1, {'axis': None, 'keepdims': True})


def test_mean():
    x = _z(2, 3, 4)
    # axis 1: y (2, 4) = 8; 24 - 8 = 16 additions + 8 divisions = 24
    c = cost(F.average, x, axis=1, kind='Mean')
    assert c == (24, 24, 8, {'axis': (1,), 'keepdims': False})
    assert c.mwrite == F.average(x, axis=1).size
    # batch 1, all axes, keepdims: x (1, 3), 3 - 1 = 2 adds + 1 div = 3
    assert cost(F.average, _z(1, 3), keepdims=True, kind='Mean') == \
        (3, 3, 1, {'axis': None, 'keepdims': True})


def test_logsumexp():
    x = _z(2, 5)
    # axis 1: |x| = 10, |y| = 2: exp 10 + add 10 - 2 + log 2 = 20 (= 2*10)
    c = cost(F.logsumexp, x, axis=1)
    assert c == (20, 10, 2, {'axis': (1,)})
    assert c.mwrite == F.logsumexp(x, axis=1).size
    # axis None on (4, 5): exp 20 + add 20 - 1 + log 1 = 40 (= 2*20)
    assert cost(F.logsumexp, _z(4, 5)) == (40, 20, 1, {'axis': None})
    # axis None on (2, 3): exp 6 + add 5 + log 1 = 12 (= 2*6)
    assert cost(F.logsumexp, _z(2, 3), fma=False) == \
        (12, 6, 1, {'axis': None})


def test_batch_l2_norm_squared():
    x = _z(3, 2, 2)
    # B = 3, D = 4: FMA 3*4 = 12; no FMA 3*(2*4 - 1) = 21
    c = cost(F.batch_l2_norm_squared, x)
    assert c == (12, 12, 3, {})
    assert c.mwrite == F.batch_l2_norm_squared(x).size
    assert cost(F.batch_l2_norm_squared, x, fma=False) == (21, 12, 3, {})
    # batch 1, D = 5: FMA 5, no FMA 2*5 - 1 = 9
    assert cost(F.batch_l2_norm_squared, _z(1, 5)) == (5, 5, 1, {})
    assert cost(F.batch_l2_norm_squared, _z(1, 5), fma=False) == \
        (9, 5, 1, {})


# Cumsum, Cumprod, Cumprodsum

def test_cumsum():
    x = _z(2, 3)
    # axis 1: 2 lines of 3, 6 - 2 = 4 additions
    c = cost(F.cumsum, x, axis=1)
    assert c == (4, 6, 6, {'axis': 1})
    assert c.mwrite == F.cumsum(x, axis=1).size
    # axis 0: 3 lines of 2, 6 - 3 = 3
    assert cost(F.cumsum, x, axis=0) == (3, 6, 6, {'axis': 0})
    # axis None: flattened, 1 line, 6 - 1 = 5; y has 6 elements
    c = cost(F.cumsum, x)
    assert c == (5, 6, 6, {'axis': None})
    assert c.mwrite == F.cumsum(x).size


def test_cumprod():
    x = _z(2, 3, 2)
    # axis 1: 2*2 = 4 lines of 3, 12 - 4 = 8 multiplications
    c = cost(F.cumprod, x, axis=1)
    assert c == (8, 12, 12, {'axis': 1})
    assert c.mwrite == F.cumprod(x, axis=1).size
    # batch 1, axis None: x (1, 4), 4 - 1 = 3
    assert cost(F.cumprod, _z(1, 4)) == (3, 4, 4, {'axis': None})


def test_cumprodsum():
    xmul, xadd = _z(2, 3), _z(3, 3)

    def f():
        return Cumprodsum(0).apply((xmul, xadd))

    # |m| = 6 multiply-adds: FMA 6, no FMA 12; read 6 + 9 = 15, write 9
    c = cost(f)
    assert c == (6, 15, 9, {'axis': 0})
    assert c.mwrite == f()[0].size
    assert cost(f, fma=False) == (12, 15, 9, {'axis': 0})


def test_cumprodsum_from_cumprod_gradient():
    x = F.sum(F.cumprod(chainer.Variable(_r(2, 3) + 1), axis=1))
    # backward applies Cumprodsum(axis 1) to m (2, 2) and a (2, 3):
    # 4 multiply-adds, read 4 + 6 = 10, write 6
    c = cost(x.backward, kind='Cumprodsum')
    assert c == (4, 10, 6, {'axis': 1})


# MatMul, BatchMatMul, TensorDot

def test_matmul():
    a, b = _z(2, 3), _z(3, 4)
    # y (2, 4) = 8 outputs, K = 3: FMA 8*3 = 24, no FMA 8*(2*3 - 1) = 40
    params = {'transa': False, 'transb': False, 'transc': False}
    c = cost(F.matmul, a, b)
    assert c == (24, 6 + 12, 8, params)
    assert c.mwrite == F.matmul(a, b).size
    assert cost(F.matmul, a, b, fma=False) == (40, 18, 8, params)


def test_matmul_trans():
    # a (3, 2) transposed, b (4, 3) transposed: y (2, 4), K = 3: 24 / 40
    a, b = _z(3, 2), _z(4, 3)
    params = {'transa': True, 'transb': True, 'transc': False}
    c = cost(F.matmul, a, b, transa=True, transb=True)
    assert c == (24, 18, 8, params)
    assert cost(F.matmul, a, b, transa=True, transb=True, fma=False) == \
        (40, 18, 8, params)


def test_matmul_transc():
    a, b = _z(2, 3), _z(3, 4)

    def f():
        return MatMul(transc=True).apply((a, b))

    # y = (a b)^T: (4, 2) = 8 outputs, K = 3: 24
    c = cost(f)
    assert c == (24, 18, 8, {'transa': False, 'transb': False,
                             'transc': True})
    assert c.mwrite == f()[0].size


def test_matmul_broadcast():
    a, b = _z(2, 1, 2, 3), _z(5, 3, 4)
    # batch (2, 1) x (5,) -> (2, 5); y (2, 5, 2, 4) = 80, K = 3
    # FMA 80*3 = 240, no FMA 80*5 = 400; read 12 + 60 = 72
    c = cost(F.matmul, a, b)
    assert c[:3] == (240, 72, 80)
    assert c.mwrite == F.matmul(a, b).size
    assert cost(F.matmul, a, b, fma=False)[:3] == (400, 72, 80)


def test_matmul_vectors():
    # (3,) . (3,): 1 output, K = 3: FMA 3, no FMA 2*3 - 1 = 5
    v = _z(3)
    assert cost(F.matmul, v, v)[:3] == (3, 6, 1)
    assert cost(F.matmul, v, v, fma=False)[:3] == (5, 6, 1)
    # (2, 3) x (3,): y (2,), K = 3: FMA 6, no FMA 2*5 = 10; read 6 + 3 = 9
    m = _z(2, 3)
    c = cost(F.matmul, m, v, fma=False)
    assert c[:3] == (10, 9, 2)
    assert c.mwrite == F.matmul(m, v).size


def test_batch_matmul():
    a, b = _z(2, 3, 4), _z(2, 4, 5)

    def f(transa=False, transb=False):
        return BatchMatMul(transa, transb).apply((a, b))

    # y (2, 3, 5) = 30, K = 4: FMA 120, no FMA 30*7 = 210; read 24 + 40
    c = cost(f)
    assert c == (120, 64, 30, {'transa': False, 'transb': False})
    assert c.mwrite == f()[0].size
    assert cost(f, fma=False) == (210, 64, 30,
                                  {'transa': False, 'transb': False})


def test_batch_matmul_2d_trans():
    a, b = _z(2, 3), _z(2, 3)

    def f():
        return BatchMatMul(transa=True).apply((a, b))

    # a as (2, 3, 1) transposed -> (2, 1, 3); b as (2, 3, 1)
    # y (2, 1, 1) = 2, K = 3: FMA 6, no FMA 2*5 = 10; read 6 + 6 = 12
    c = cost(f)
    assert c == (6, 12, 2, {'transa': True, 'transb': False})
    assert c.mwrite == f()[0].size
    assert cost(f, fma=False)[0] == 10


def _torch_flops(step, fma=True):
    return flops_by_layer(step, fma_1flop=fma, flop_convention='torch')


def test_products_under_the_torch_convention():
    # PyTorch's FlopCounterMode counts mm and bmm as 2 M K N: 2 FLOPs per
    # multiply-add, whatever fma_1flop says
    for fma in (True, False):
        # (2,3) x (3,4): 8 outputs of K = 3: 2*8*3 = 48 (ours 24 / 40)
        assert _torch_flops(lambda: F.matmul(_z(2, 3), _z(3, 4)), fma) == {
            'MatMul-1': 48}
        # broadcast batch: y (2,5,2,4) = 80 outputs of K = 3: 2*80*3 = 480
        assert _torch_flops(lambda: F.matmul(_z(2, 1, 2, 3), _z(5, 3, 4)),
                            fma) == {'MatMul-1': 480}
        # (3,4) . (4,5) over one axis: 15 outputs of K = 4: 2*15*4 = 120
        assert _torch_flops(lambda: F.tensordot(_z(3, 4), _z(4, 5), axes=1),
                            fma) == {'TensorDot-1': 120}


def test_batch_matmul_and_gradient_under_the_torch_convention():
    a = chainer.Variable(_z(2, 3, 4))
    b = chainer.Variable(_z(2, 4, 5))

    def step():
        y, = BatchMatMul().apply((a, b))
        F.sum(y).backward()

    flops = _torch_flops(step, fma=False)
    # forward: B = 2 products of (3,4) by (4,5): 2*2*3*4*5 = 240 (ours
    # without FMA 30*7 = 210)
    assert flops['BatchMatMul-1'] == 240
    # gradients, two bmm of the same size: g_a = |a| N = 24*5 = 120
    # products, g_b = |b| M = 40*3 = 120: 2*(120 + 120) = 480 (ours
    # without FMA 24*9 + 40*5 = 416)
    assert flops['BatchMatMulGrad-1'] == 480


def test_tensordot():
    a, b = _z(5, 3, 2), _z(3, 2, 4)
    # axes=2: y (5, 4) = 20, K = 3*2 = 6
    # FMA 20*6 = 120, no FMA 20*11 = 220; read 30 + 24 = 54
    c = cost(F.tensordot, a, b, axes=2)
    assert c == (120, 54, 20, {'a_axes': (1, 2), 'b_axes': (0, 1)})
    assert c.mwrite == F.tensordot(a, b, axes=2).size
    assert cost(F.tensordot, a, b, axes=2, fma=False)[0] == 220


def test_tensordot_axes_pairs():
    a, b = _z(3, 2), _z(4, 3)
    # axes ([0], [1]): y (2, 4) = 8, K = 3: FMA 24, no FMA 40; read 6 + 12
    c = cost(F.tensordot, a, b, axes=([0], [1]))
    assert c == (24, 18, 8, {'a_axes': (0,), 'b_axes': (1,)})
    assert c.mwrite == F.tensordot(a, b, axes=([0], [1])).size
    assert cost(F.tensordot, a, b, axes=([0], [1]), fma=False)[0] == 40
    # negative axes (-1, 0) on (2, 3) x (3, 4): y (2, 4) = 8, K = 3
    c = cost(F.tensordot, _z(2, 3), _z(3, 4), axes=(-1, 0))
    assert c == (24, 18, 8, {'a_axes': (1,), 'b_axes': (0,)})


def test_tensordot_outer_and_unrun_node():
    a, b = _z(2), _z(3)
    # axes=0, outer product: y (2, 3) = 6, K = 1: 6 multiplications
    assert cost(F.tensordot, a, b, axes=0) == \
        (6, 5, 6, {'a_axes': (), 'b_axes': ()})
    assert cost(F.tensordot, a, b, axes=0, fma=False)[0] == 6
    # a node not run yet (axes only): (2, 3) x (3, 4), axes=1:
    # y (2, 4) = 8, K = 3: 24
    c = _direct(TensorDot(axes=1), (_z(2, 3), _z(3, 4)))
    assert c == (24, 18, 8, {'a_axes': (1,), 'b_axes': (0,)})


# EinSum, DiagEinSum

def test_einsum_matmul():
    a, b = _z(2, 3), _z(3, 4)
    # P = i2*j3*k4 = 24, |y| = 8: mults 24, adds 24 - 8 = 16
    # FMA max(24, 16) = 24; no FMA 24 + 16 = 40
    c = cost(F.einsum, 'ij,jk->ik', a, b)
    assert c == (24, 18, 8, {'subscripts': 'ij,jk->ik'})
    assert c.mwrite == F.einsum('ij,jk->ik', a, b).size
    assert cost(F.einsum, 'ij,jk->ik', a, b, fma=False)[0] == 40
    # implicit output 'ik': same
    assert cost(F.einsum, 'ij,jk', a, b) == \
        (24, 18, 8, {'subscripts': 'ij,jk->ik'})


def test_einsum_three_operands():
    x1, x2, w = _z(3, 4), _z(3, 5), _z(4, 5, 6)
    # P = i3*j4*k5*l6 = 360, |y| = 3*6 = 18
    # mults 2*360 = 720, adds 360 - 18 = 342
    # FMA 720 + 342 - 342 = 720; no FMA 720 + 342 = 1062
    # read 12 + 15 + 120 = 147
    c = cost(F.einsum, 'ij,ik,jkl->il', x1, x2, w)
    assert c[:3] == (720, 147, 18)
    assert c.mwrite == F.einsum('ij,ik,jkl->il', x1, x2, w).size
    assert cost(F.einsum, 'ij,ik,jkl->il', x1, x2, w, fma=False)[0] == 1062


def test_einsum_single_operand():
    x = _z(3, 3)
    # trace: P = 3, |y| = 1, no mults, 3 - 1 = 2 additions
    assert cost(F.einsum, 'ii->', x) == (2, 9, 1, {'subscripts': 'ii->'})
    assert cost(F.einsum, 'ii->', x, fma=False)[0] == 2
    # transpose: P = 6 = |y|: 0 FLOPs
    assert cost(F.einsum, 'ij->ji', _z(2, 3)) == \
        (0, 6, 6, {'subscripts': 'ij->ji'})


def test_einsum_ellipsis():
    a, b = _z(5, 2, 3), _z(5, 3, 4)
    # ellipsis (5,); P = 5*2*3*4 = 120, |y| = 5*2*4 = 40
    # FMA 120, no FMA 120 + 80 = 200; read 30 + 60 = 90
    c = cost(F.einsum, '...ij,...jk->...ik', a, b)
    assert c == (120, 90, 40, {'subscripts': '...ij,...jk->...ik'})
    assert c.mwrite == F.einsum('...ij,...jk->...ik', a, b).size
    assert cost(F.einsum, '...ij,...jk->...ik', a, b, fma=False)[0] == 200


def _diag(in_subs, out_sub, out_shape, *xs):
    def f():
        return DiagEinSum(in_subs, out_sub, out_shape).apply(xs)
    return f


def test_diag_einsum_plain():
    f = _diag('ik,jk', 'ij', (2, 4), _z(2, 3), _z(4, 3))
    # P = i2*k3*j4 = 24, |y| = 8: FMA 24, no FMA 24 + 16 = 40; read 6 + 12
    c = cost(f)
    assert c == (24, 18, 8, {'subscripts': 'ik,jk->ij', 'out_shape': (2, 4)})
    assert c.mwrite == f()[0].size
    assert cost(f, fma=False)[0] == 40


def test_diag_einsum_diagonal_and_broadcast():
    # scalar into the diagonal of (3, 3): P = 1, nothing summed: 0 FLOPs;
    # read 1, write 3*3 = 9
    f = _diag('', 'ii', (3, 3), _z())
    c = cost(f)
    assert c == (0, 1, 9, {'subscripts': '->ii', 'out_shape': (3, 3)})
    assert c.mwrite == f()[0].size
    # 'ij->ii' on (2, 3): sum over j into 2 values: 6 - 2 = 4 additions;
    # write 2*2 = 4
    f = _diag('ij', 'ii', (2, 2), _z(2, 3))
    assert cost(f)[:3] == (4, 6, 4)
    # 'i->ij' broadcast into (2, 3): 0 FLOPs, read 2, write 6
    f = _diag('i', 'ij', (2, 3), _z(2))
    c = cost(f)
    assert c[:3] == (0, 2, 6)
    assert c.mwrite == f()[0].size


def test_diag_einsum_from_einsum_gradient():
    x = F.sum(F.einsum('ii->i', chainer.Variable(_r(3, 3))))
    # gradient of 'ii->i' w.r.t. x: DiagEinSum('i' -> 'ii') of gy (3,):
    # 0 FLOPs, read 3, write 3*3 = 9
    c = cost(x.backward, kind='DiagEinSum')
    assert c == (0, 3, 9, {'subscripts': 'i->ii', 'out_shape': (3, 3)})


# CooMatMul (the CPU forward needs SciPy: cost nodes without running them)

def _coo(nnz_shape, sp_shape, **kw):
    row = np.zeros(nnz_shape, np.int32)
    return CooMatMul(row, row.copy(), sp_shape, **kw)


def test_coo_matmul():
    node = _coo((5,), (3, 4))
    sp, dn = _z(5), _z(4, 2)
    # z = 5 stored values, N = 2: FMA 10, no FMA 20
    # read 5 values + 5 rows + 5 cols + 4*2 = 23; C (3, 2) = 6
    params = {'shape': (3, 4), 'transa': False, 'transb': False,
              'transc': False}
    assert _direct(node, (sp, dn)) == (10, 23, 6, params)
    assert _direct(node, (sp, dn), fma=False) == (20, 23, 6, params)


def test_coo_matmul_batched_trans():
    # batch of 2, z = 2*5 = 10, A (4, 3) transposed -> m = 3,
    # B (2, 2, 4) transposed -> N = 2: FMA 10*2 = 20, no FMA 40
    # read 10 + 10 + 10 + 16 = 46; C (2, 3, 2) = 12
    node = _coo((2, 5), (4, 3), transa=True, transb=True)
    c = _direct(node, (_z(2, 5), _z(2, 2, 4)))
    assert c == (20, 46, 12, {'shape': (4, 3), 'transa': True,
                              'transb': True, 'transc': False})
    assert _direct(node, (_z(2, 5), _z(2, 2, 4)), fma=False)[0] == 40


def test_coo_matmul_run():
    pytest.importorskip('scipy')
    from chainer import utils
    a = np.array([[1, 0, 0, 0], [0, 2, 0, 0], [0, 0, 0, 3]], np.float32)
    coo = utils.to_coo(a)
    b = _z(4, 2)
    # z = 3, N = 2: 6; read 3*3 + 8 = 17; C (3, 2) = 6
    c = cost(F.sparse_matmul, coo, b)
    assert c[:3] == (6, 17, 6)
    assert c.mwrite == F.sparse_matmul(coo, b).size


# BatchDet, Inv, BatchInv, Cholesky

def _eyes(b, n):
    return np.tile(2 * np.eye(n, dtype=np.float32), (b, 1, 1))


def test_batch_det():
    x = _eyes(2, 3)
    # n = 3: p = 2*3*5/6 = 5 pairs, q = 3*2/2 = 3 divisions, 2 products
    # FMA 5 + 3 + 2 = 10, no FMA 10 + 3 + 2 = 15; B = 2: 20 / 30
    c = cost(F.batch_det, x)
    assert c == (20, 18, 2, {})
    assert c.mwrite == F.batch_det(x).size
    assert cost(F.batch_det, x, fma=False) == (30, 18, 2, {})


def test_det():
    # F.det reshapes (2, 2) to a batch of 1: p = 1*2*3/6 = 1, q = 1,
    # 1 product: FMA 3, no FMA 4
    x = _eyes(1, 2)[0]
    assert cost(F.det, x, kind='BatchDet') == (3, 4, 1, {})
    assert cost(F.det, x, kind='BatchDet', fma=False) == (4, 4, 1, {})


def test_inv():
    x = _eyes(1, 2)[0]
    # n = 2: per pivot 1 reciprocal + 2 scalings + 1 row * 2 multiply-adds
    # FMA 2*(1 + 2 + 2) = 10 (= 8 + 2); no FMA 2*(1 + 2 + 4) = 14
    c = cost(F.inv, x)
    assert c == (10, 4, 4, {})
    assert c.mwrite == F.inv(x).size
    assert cost(F.inv, x, fma=False) == (14, 4, 4, {})
    # n = 3: FMA 27 + 3 = 30; no FMA 54 - 9 + 3 = 48
    assert cost(F.inv, _eyes(1, 3)[0]) == (30, 9, 9, {})
    assert cost(F.inv, _eyes(1, 3)[0], fma=False) == (48, 9, 9, {})


def test_batch_inv():
    x = _eyes(3, 2)
    # 3 matrices of n = 2: FMA 3*10 = 30, no FMA 3*14 = 42; 12 in, 12 out
    c = cost(F.batch_inv, x)
    assert c == (30, 12, 12, {})
    assert c.mwrite == F.batch_inv(x).size
    assert cost(F.batch_inv, x, fma=False) == (42, 12, 12, {})
    # batch 1, n = 1: 1 reciprocal + 1 scaling, no multiply-adds: 2
    assert cost(F.batch_inv, _eyes(1, 1)) == (2, 1, 1, {})


@pytest.mark.skipif(not hasattr(F, 'cholesky'),
                    reason='no Cholesky in this Chainer')
def test_cholesky():
    x = _eyes(1, 3)[0]
    # n = 3: (27 - 3)/6 = 4 pairs, 3*2/2 = 3 divisions, 3 square roots
    # FMA 4 + 3 + 3 = 10, no FMA 8 + 3 + 3 = 14
    # read lower triangle 3*4/2 = 6, write 3*3 = 9
    c = cost(F.cholesky, x)
    assert c == (10, 6, 9, {})
    assert c.mwrite == F.cholesky(x).size
    assert cost(F.cholesky, x, fma=False) == (14, 6, 9, {})
    # n = 1: one square root
    assert cost(F.cholesky, _eyes(1, 1)[0]) == (1, 1, 1, {})


# FFT

def test_fft():
    r, i = _z(2, 8), _z(2, 8)
    # n = 8, log2 8 = 3: 5*16*3 = 240; read 16 + 16, write 16 + 16
    c = cost(F.fft, (r, i))
    assert c == (240, 32, 32, {'method': 'fft'})
    assert c.mwrite == sum(y.size for y in F.fft((r, i)))
    # ifft adds 2*16 = 32 scalings: 272
    assert cost(F.ifft, (r, i)) == (272, 32, 32, {'method': 'ifft'})


def test_fft_non_power_of_two():
    # n = 5, ceil(log2 5) = 3: 5*15*3 = 225
    assert cost(F.fft, (_z(3, 5), _z(3, 5))) == \
        (225, 30, 30, {'method': 'fft'})
    # n = 1: 0 FLOPs; ifft still scales 2*4 = 8
    assert cost(F.fft, (_z(4, 1), _z(4, 1)))[:3] == (0, 8, 8)
    assert cost(F.ifft, (_z(4, 1), _z(4, 1)))[:3] == (8, 8, 8)


# Bytes through the hook: with mixed precision each operand is read in its
# own dtype; the output is written in its dtype.

def _bytes(fn, *args, name, **kwargs):
    with ComputationalCostHook() as cch:
        fn(*args, **kwargs)
    record = cch.layer_report[name]
    return record['mread'], record['mwrite']


def test_matmul_bytes_mixed_precision():
    a, b = _z(2, 3).astype(np.float16), _z(3, 4)
    # a 6*2 = 12 + b 12*4 = 48 -> 60; y float32 (2, 4): 8*4 = 32
    assert F.matmul(a, b).dtype == np.float32
    assert _bytes(F.matmul, a, b, name='MatMul-1') == (60, 32)
    # b float64 first: 12*8 = 96 + a 6*2 = 12 -> 108; y (4, 2) float64 64
    assert _bytes(F.matmul, b.astype(np.float64), a, transa=True,
                  transb=True, name='MatMul-1') == (108, 64)


def test_linalg_bytes_float64_float16():
    x = _eyes(2, 3).astype(np.float64)
    # BatchDet: 18*8 = 144 read; 2 determinants, 2*8 = 16
    assert _bytes(F.batch_det, x, name='BatchDet-1') == (144, 16)
    # BatchInv: 18*8 = 144 read, 144 written
    assert _bytes(F.batch_inv, x, name='BatchInv-1') == (144, 144)
    x = _z(3, 2, 2).astype(np.float16)
    # BatchL2NormSquared: 12*2 = 24 read; 3 sums, 3*2 = 6
    assert _bytes(F.batch_l2_norm_squared, x,
                  name='BatchL2NormSquared-1') == (24, 6)
    r = _z(2, 4).astype(np.float16)
    # FFT: real and imaginary parts 8*2 + 8*2 = 32 read, 32 written
    assert _bytes(F.fft, (r, r), name='FFT-1') == (32, 32)


def test_tensordot_and_einsum_bytes_mixed_precision():
    a, b = _z(2, 3).astype(np.float64), _z(3, 4).astype(np.float16)
    # a 6*8 = 48 + b 12*2 = 24 -> 72; y (2, 4) in float64: 8*8 = 64
    assert _bytes(F.tensordot, a, b, axes=1, name='TensorDot-1') == (72, 64)
    assert _bytes(F.einsum, 'ij,jk->ik', a, b, name='EinSum-1') == (72, 64)


def test_coo_matmul_bytes_index_arrays(monkeypatch):
    from chainer.functions.math import sparse_matmul

    def no_scipy(data, row, col, shape, b, dtype):
        # the CPU product calls SciPy; only the output's shape and dtype
        # matter to the hook
        return np.zeros((shape[0], b.shape[-1]), dtype)
    monkeypatch.setattr(sparse_matmul, '_coo_matmul_cpu', no_scipy)
    row = np.array([0, 1, 2], np.int32)
    col = np.array([0, 1, 3], np.int32)
    node = CooMatMul(row, col, (3, 4))
    sp, dn = _z(3).astype(np.float16), _z(4, 2).astype(np.float16)
    # values 3*2 = 6 + rows 3*4 = 12 + cols 3*4 = 12 + B 8*2 = 16 -> 46
    # C (3, 2) float16: 6*2 = 12
    assert _bytes(lambda: node.apply((sp, dn)), name='CooMatMul-1') == (
        46, 12)
    node = CooMatMul(row.astype(np.int64), col.astype(np.int64), (3, 4))
    sp, dn = _z(3).astype(np.float64), _z(4, 2)
    # values 3*8 = 24 + rows 3*8 = 24 + cols 24 + B 8*4 = 32 -> 104
    # C (3, 2) in float64: 6*8 = 48
    assert _bytes(lambda: node.apply((sp, dn)), name='CooMatMul-1') == (
        104, 48)


def test_cumprodsum_bytes_float64():
    xmul, xadd = _z(2, 3).astype(np.float64), _z(3, 3).astype(np.float64)
    # (6 + 9)*8 = 120; y 9*8 = 72
    assert _bytes(lambda: Cumprodsum(0).apply((xmul, xadd)),
                  name='Cumprodsum-1') == (120, 72)


def test_reduction_bytes_float16():
    x = _z(2, 3).astype(np.float16)
    # 6*2 = 12 read; y (2,) 2*2 = 4
    assert _bytes(F.sum, x, axis=1, name='Sum-1') == (12, 4)
    # argmax writes int32 indices: 2*4 = 8
    assert _bytes(F.argmax, x, axis=1, name='ArgMax-1') == (12, 8)


# Gradients (the nodes backward passes apply).

def _backward(f, *arrays):
    def run():
        y = f(*[chainer.Variable(a) for a in arrays])
        y.grad = np.ones_like(y.array)
        y.backward()
    return run


def test_batch_l2_norm_squared_grad():
    run = _backward(F.batch_l2_norm_squared, _r(3, 2, 2))
    # |x| = 12: 2*12 = 24; mread x 12 + g_y 3 = 15; mwrite 12
    assert cost(run, kind='BatchL2NormSquaredGrad') == (24, 15, 12, {})
    assert cost(run, kind='BatchL2NormSquaredGrad', fma=False) == (
        24, 15, 12, {})


def test_batch_matmul_grad():
    def f(a, b):
        return BatchMatMul().apply((a, b))[0]

    run = _backward(f, _r(2, 3, 4), _r(2, 4, 5))
    # B 2, M 3, K 4, N 5; |a| = 24, |b| = 40, |g_y| = 30
    # FMA 24*5 + 40*3 = 240; no FMA 24*9 + 40*5 = 416
    # mread 24 + 40 + 30 = 94; mwrite 24 + 40 = 64
    params = {'transa': False, 'transb': False}
    assert cost(run, kind='BatchMatMulGrad') == (240, 94, 64, params)
    assert cost(run, kind='BatchMatMulGrad', fma=False) == (
        416, 94, 64, params)


def test_batch_matmul_grad_2d_trans():
    def f(a, b):
        return BatchMatMul(transa=True).apply((a, b))[0]

    run = _backward(f, _r(2, 3), _r(2, 3))
    # a (2, 3) as (2, 3, 1) transposed: M 1, K 3; b as (2, 3, 1): N 1
    # g_a: 6 dots of length N = 1 -> 6 either way; g_b: 6 of length M = 1
    # -> 6; mread 6 + 6 + 2 = 14; mwrite 12
    params = {'transa': True, 'transb': False}
    assert cost(run, kind='BatchMatMulGrad') == (12, 14, 12, params)
    assert cost(run, kind='BatchMatMulGrad', fma=False) == (
        12, 14, 12, params)


def test_coo_matmul_grad_sp():
    from chainer.functions.math.sparse_matmul import CooMatMulGradSP
    row = np.array([0, 1, 2], np.int32)
    col = np.array([0, 1, 3], np.int32)
    a, b = _r(3, 2), _r(2, 4)

    def f():
        # its CPU forward needs no SciPy: applied as CooMatMul's backward
        # would
        return CooMatMulGradSP(row, col, (3, 4)).apply((a, b))

    # z = 3 dots of length K = 2: FMA 6, no FMA 3*3 = 9
    # mread a 6 + b 8 + rows 3 + cols 3 = 20; mwrite 3
    params = {'shape': (3, 4), 'transa': False, 'transb': False,
              'transc': False}
    c = cost(f)
    assert c == (6, 20, 3, params)
    assert c.mwrite == f()[0].size
    assert cost(f, fma=False) == (9, 20, 3, params)


def test_coo_matmul_grad_sp_batched_trans():
    from chainer.functions.math.sparse_matmul import CooMatMulGradSP
    row = np.array([[0, 1, 2], [2, 1, 0]], np.int32)
    col = np.array([[0, 1, 3], [3, 2, 1]], np.int32)
    a, b = _r(2, 2, 3), _r(2, 4, 2)

    def f():
        return CooMatMulGradSP(row, col, (3, 4), transa=True,
                               transb=True).apply((a, b))

    # a (2, 2, 3) transposed: K = 2; z = 2*3 = 6: FMA 12, no FMA 6*3 = 18
    # mread 12 + 16 + 6 + 6 = 40; mwrite 6
    params = {'shape': (3, 4), 'transa': True, 'transb': True,
              'transc': False}
    c = cost(f)
    assert c == (12, 40, 6, params)
    assert c.mwrite == f()[0].size
    assert cost(f, fma=False) == (18, 40, 6, params)


def test_coo_matmul_grad_sp_bytes():
    from chainer.functions.math.sparse_matmul import CooMatMulGradSP
    row = np.array([0, 1, 2], np.int64)
    col = np.array([0, 1, 3], np.int64)
    a, b = _r(3, 2).astype(np.float16), _r(2, 4).astype(np.float16)

    def f():
        return CooMatMulGradSP(row, col, (3, 4)).apply((a, b))
    # a 6*2 = 12 + b 8*2 = 16 + rows 3*8 = 24 + cols 24 -> 76; 3*2 = 6
    assert _bytes(f, name='CooMatMulGradSP-1') == (76, 6)
