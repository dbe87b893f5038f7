"""Tests of the cost calculators for arithmetic operators and element-wise
math functions (cost_calculators/math.py).

Every expectation is derived by hand from the calculator's docstring, with
the arithmetic in a comment.
"""

import numpy as np
import pytest

import chainer
import chainer.functions as F
from chainer.functions.math.basic_math import AddConstant
from chainer.functions.math.basic_math import MulConstant
from chainer.functions.math.clip import Clip
from chainer.functions.math.digamma import DiGamma
from chainer.functions.math.erf import Erf
from chainer.functions.math.erfc import Erfc
from chainer.functions.math.erfcinv import ErfcInv
from chainer.functions.math.erfcx import Erfcx
from chainer.functions.math.erfinv import ErfInv
from chainer.functions.math.lgamma import LGamma
from chainer.functions.math.log_ndtr import LogNdtr
from chainer.functions.math.ndtr import Ndtr
from chainer.functions.math.ndtri import Ndtri
from chainer.functions.math.polygamma import PolyGamma

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.cost_calculators import calculators
from chainer_computational_cost.cost_calculators import resolve_target
from chainer_computational_cost.cost_calculators import validate_cost
from helpers import cost

try:
    import scipy  # NOQA
    have_scipy = True
except ImportError:
    have_scipy = False

try:
    from chainer.functions.math.zeta import Zeta
except ImportError:  # Chainer 6
    Zeta = None

needs_arctanh = pytest.mark.skipif(
    not hasattr(F, 'arctanh'), reason='no F.arctanh in this Chainer')
needs_zeta = pytest.mark.skipif(
    Zeta is None, reason='no F.zeta in this Chainer')
needs_open_clip = pytest.mark.skipif(
    int(chainer.__version__.split('.')[0]) < 7,
    reason='Chainer 6 clip needs both bounds')


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b


def div(a, b):
    return a / b


def half(*shape):
    """A float32 array of 0.5 (inside every function's domain)."""
    return np.full(shape, 0.5, np.float32)


def var(*shape):
    return chainer.Variable(half(*shape))


def direct_cost(node, *in_data, fma=True):
    """Cost a node on given inputs without running its forward."""
    calc = calculators[type(node)]
    return validate_cost(calc(node, in_data, fma_1flop=fma),
                         calc.__name__, type(node).__name__)


def special_cost(fn, node, *in_data, fma=True):
    """Cost of a SciPy-backed function.

    Their CPU forward needs SciPy (or warns without it), so without SciPy the
    fresh ``node`` is costed directly on ``in_data`` instead of running
    ``fn(*in_data)``.  Both give the same inputs to the calculator.
    """
    if have_scipy:
        return cost(fn, *in_data, fma=fma)
    return direct_cost(node, *in_data, fma=fma)


# Binary arithmetic operators: FLOPs |y|, mread |a| + |b|, mwrite |y|.

def test_add_published_figure():
    a = np.zeros((1, 256, 56, 56), np.float32)
    # |y| = 256*56*56 = 802816; mread 2*802816 = 1605632
    assert cost(F.add, a, a) == (802816, 1605632, 802816, {})


def test_add():
    a, b = half(2, 3), half(2, 3)
    # |y| = 2*3 = 6; mread 6+6 = 12
    assert cost(F.add, a, b) == (6, 12, 6, {})
    assert cost(F.add, a, b, fma=False) == (6, 12, 6, {})
    # batch 1: |y| = 1*4 = 4; mread 4+4 = 8
    assert cost(F.add, half(1, 4), half(1, 4)) == (4, 8, 4, {})


def test_add_broadcast():
    a, b = half(2, 3, 4), half(3, 1)
    # y is (2,3,4): |y| = 24; mread 24 + 3*1 = 27
    assert cost(F.add, a, b) == (24, 27, 24, {})
    assert F.add(a, b).size == 24


def test_sub():
    # |y| = 2*3 = 6; mread 6+6 = 12
    assert cost(sub, var(2, 3), var(2, 3)) == (6, 12, 6, {})
    # broadcast (4,1) - (1,5): |y| = 4*5 = 20; mread 4+5 = 9
    assert cost(sub, var(4, 1), var(1, 5)) == (20, 9, 20, {})
    assert (var(4, 1) - var(1, 5)).size == 20


def test_mul():
    # |y| = 1*4 = 4; mread 4+4 = 8
    assert cost(mul, var(1, 4), var(1, 4)) == (4, 8, 4, {})
    # broadcast (2,3) * (3,): |y| = 6; mread 6+3 = 9
    assert cost(mul, var(2, 3), var(3)) == (6, 9, 6, {})


def test_div():
    # |y| = 3*2 = 6; mread 6+6 = 12
    assert cost(div, var(3, 2), var(3, 2)) == (6, 12, 6, {})
    assert cost(div, var(3, 2), var(3, 2), fma=False) == (6, 12, 6, {})


@pytest.mark.parametrize('cls_name', ['Add', 'Sub', 'Mul', 'Div'])
def test_n_ary_arithmetic_as_0_1_2(cls_name):
    # 0.1.2's calculators took N arrays (its tests call them directly with
    # [x] * 10): N - 1 operations per output element, every array read once
    from chainer.functions.math import basic_math
    node = getattr(basic_math, cls_name)()
    x = half(1, 3, 10, 10)
    # N = 3: (3-1) * 300 = 600 FLOPs; mread 3*300 = 900; mwrite 300
    assert direct_cost(node, x, x, x) == (600, 900, 300, {})
    # N = 10: (10-1) * 300 = 2700 FLOPs; mread 10*300 = 3000; mwrite 300
    assert direct_cost(node, *[x] * 10) == (2700, 3000, 300, {})
    assert direct_cost(node, *[x] * 10, fma=False) == (2700, 3000, 300, {})
    # N = 3 broadcasting (2,3), (3,), (2,1) to y (2,3): (3-1)*6 = 12 FLOPs;
    # mread 6+3+2 = 11; mwrite 6
    assert direct_cost(node, half(2, 3), half(3), half(2, 1)) == (
        12, 11, 6, {})
    # N = 2 unchanged: 300 FLOPs, mread 600, mwrite 300
    assert direct_cost(node, x, x) == (300, 600, 300, {})


def test_multi_add():
    a, b, c = half(2, 3), half(2, 3), half(2, 3)
    # 3 inputs: (3-1)*6 = 12 additions; mread 3*6 = 18; mwrite 6
    assert cost(F.add, a, b, c) == (12, 18, 6, {})
    # 4 inputs of (1,5): (4-1)*5 = 15; mread 4*5 = 20; mwrite 5
    xs = [half(1, 5) for _ in range(4)]
    assert cost(F.add, *xs) == (15, 20, 5, {})


def test_multi_add_broadcast():
    a, b, c = half(2, 3), half(3), half(2, 1)
    # y is (2,3): (3-1)*6 = 12; mread 6+3+2 = 11; mwrite 6
    assert cost(F.add, a, b, c) == (12, 11, 6, {})
    assert F.add(a, b, c).size == 6


def test_multi_add_single_input():
    # one input is returned as is: nothing computed, read or written
    assert cost(F.add, half(2, 3), kind='MultiAdd') == (0, 0, 0, {})


# Constant operands: FLOPs |y|, mread |x| + |c|, mwrite |y|.

def test_add_constant():
    x = half(2, 3)
    # |x| = 6; mread 6 + 1 (scalar constant) = 7
    assert cost(F.add, x, 2.0) == (6, 7, 6, {})
    assert F.add(x, 2.0).size == 6
    # x - 3 is AddConstant(-3); |x| = 1*4 = 4; mread 4+1 = 5
    assert cost(lambda v: v - 3, var(1, 4)) == (4, 5, 4, {})


def test_add_constant_array():
    x, c = half(2, 3), np.ones(3, np.float32)
    # |y| = 6; mread 6 + 3 (array constant, read once) = 9
    assert cost(lambda v: AddConstant(c).apply((v,))[0], x) == (6, 9, 6, {})


def test_sub_from_constant():
    # 2 - x, |x| = 2*2 = 4; mread 4+1 = 5
    assert cost(lambda v: 2 - v, var(2, 2)) == (4, 5, 4, {})
    assert (2 - var(2, 2)).size == 4


def test_mul_constant():
    # x * 3, |x| = 6; mread 6+1 = 7
    assert cost(lambda v: v * 3, var(2, 3)) == (6, 7, 6, {})
    # x / 4 is MulConstant(0.25); |x| = 1*2 = 2; mread 2+1 = 3
    assert cost(lambda v: v / 4, var(1, 2)) == (2, 3, 2, {})


def test_mul_constant_array_broadcast():
    x, c = half(2, 3), np.ones((2, 1), np.float32)

    def f(v):
        return MulConstant(c).apply((v,))[0]
    # y is (2,3): |y| = 6; mread 6 + 2*1 = 8
    assert cost(f, x) == (6, 8, 6, {})
    assert f(x).size == 6


def test_div_from_constant():
    # 1 / x, |x| = 3; mread 3+1 = 4
    assert cost(lambda v: 1 / v, var(3)) == (3, 4, 3, {})
    # batch 2: |x| = 2*3 = 6; mread 6+1 = 7
    assert cost(lambda v: 1 / v, var(2, 3), fma=False) == (6, 7, 6, {})


# The arithmetic types 0.1.2 covered report no params, as 0.1.2 did.
ARITHMETIC_012 = [
    ('Add', lambda a, b: a + b), ('Sub', lambda a, b: a - b),
    ('Mul', lambda a, b: a * b), ('Div', lambda a, b: a / b),
    ('AddConstant', lambda a, b: a + 2), ('MulConstant', lambda a, b: a * 2),
    ('SubFromConstant', lambda a, b: 2 - a),
    ('DivFromConstant', lambda a, b: 2 / a),
]


@pytest.mark.parametrize('kind,fn', ARITHMETIC_012,
                         ids=[k for k, _ in ARITHMETIC_012])
def test_arithmetic_params_as_0_1_2(kind, fn):
    params = cost(fn, var(2, 3), var(2, 3), kind=kind).params
    assert params == {} and type(params) is dict


# Powers.

def test_pow_var_const():
    # x ** 2, |x| = 6; mread 6+1 = 7
    assert cost(lambda v: v ** 2, var(2, 3)) == (6, 7, 6, {})
    assert (var(2, 3) ** 2).size == 6


def test_pow_const_var():
    # 2 ** x, |x| = 4; mread 4+1 = 5
    assert cost(lambda v: 2 ** v, var(2, 2)) == (4, 5, 4, {})


def test_pow_var_var():
    # |y| = 6; mread 6+6 = 12
    assert cost(lambda a, b: a ** b, var(2, 3), var(2, 3)) == (6, 12, 6, {})
    # broadcast (2,3) ** (1,3): |y| = 6; mread 6+3 = 9
    assert cost(lambda a, b: a ** b, var(2, 3), var(1, 3)) == (6, 9, 6, {})
    assert (var(2, 3) ** var(1, 3)).size == 6


def test_square_and_sqrt():
    # |x| = 2*3 = 6 multiplications / square roots
    assert cost(F.square, half(2, 3)) == (6, 6, 6, {})
    assert cost(F.sqrt, half(2, 3)) == (6, 6, 6, {})
    # batch 1: |x| = 1*3 = 3
    assert cost(F.square, half(1, 3), fma=False) == (3, 3, 3, {})
    assert cost(F.sqrt, half(1, 3), fma=False) == (3, 3, 3, {})


# Sign, magnitude, comparisons.

def test_neg_and_absolute():
    # |x| = 2*3 = 6 operations, 6 read, 6 written
    assert cost(lambda v: -v, var(2, 3)) == (6, 6, 6, {})
    assert cost(F.absolute, var(2, 3)) == (6, 6, 6, {})
    # batch 1: |x| = 1*2 = 2
    assert cost(lambda v: -v, var(1, 2)) == (2, 2, 2, {})
    assert cost(abs, var(1, 2)) == (2, 2, 2, {})


@pytest.mark.parametrize('fn', [F.maximum, F.minimum])
def test_maximum_minimum(fn):
    # |y| = 6 comparisons; mread 6+6 = 12
    assert cost(fn, half(2, 3), half(2, 3)) == (6, 12, 6, {})
    # broadcast (2,3) vs (1,3): |y| = 6; mread 6+3 = 9
    assert cost(fn, half(2, 3), half(1, 3)) == (6, 9, 6, {})
    assert fn(half(2, 3), half(1, 3)).size == 6


def test_clip_both_bounds():
    x = half(2, 3)
    # 2 comparisons * 6 = 12; mread 6 + 1 + 1 = 8; mwrite 6
    assert cost(F.clip, x, 0.0, 1.0) == (
        12, 8, 6, {'min': 0.0, 'max': 1.0})
    assert F.clip(x, 0.0, 1.0).size == 6
    # integer bounds are reported as ints
    assert cost(F.clip, x, -1, 1) == (12, 8, 6, {'min': -1, 'max': 1})


@needs_open_clip
def test_clip_one_bound():
    # only x_max: 1 comparison * (1*4) = 4; mread 4+1 = 5
    assert cost(F.clip, half(1, 4), None, 1.0) == (4, 5, 4, {'max': 1.0})
    # only x_min: same counts
    assert cost(F.clip, half(1, 4), 0.0, None) == (4, 5, 4, {'min': 0.0})


@needs_open_clip
def test_clip_array_bound():
    x, lo = half(2, 3), np.zeros(3, np.float32)

    def f(v):
        return Clip(lo, None).apply((v,))[0]
    # 1 comparison * 6 = 6; mread 6 + 3 = 9; no scalar bound to report
    assert cost(f, x) == (6, 9, 6, {})
    assert f(x).size == 6


def test_fmod():
    # |y| = 6; mread 6+6 = 12
    assert cost(F.fmod, half(2, 3), half(2, 3)) == (6, 12, 6, {})
    # broadcast (2,3) vs (1,3): mread 6+3 = 9
    assert cost(F.fmod, half(2, 3), half(1, 3)) == (6, 9, 6, {})


def test_linear_interpolate():
    p, x, y = half(2, 3), half(2, 3), half(2, 3)
    # FMA: 3*6 = 18; no FMA: 4*6 = 24; mread 3*6 = 18; mwrite 6
    assert cost(F.linear_interpolate, p, x, y) == (18, 18, 6, {})
    assert cost(F.linear_interpolate, p, x, y, fma=False) == (24, 18, 6, {})
    assert F.linear_interpolate(p, x, y).size == 6
    # batch 1, (1,2): FMA 3*2 = 6, no FMA 4*2 = 8; mread 3*2 = 6
    q = half(1, 2)
    assert cost(F.linear_interpolate, q, q, q) == (6, 6, 2, {})
    assert cost(F.linear_interpolate, q, q, q, fma=False) == (8, 6, 2, {})


def test_identity():
    # the outputs alias the inputs: nothing computed, read or written
    assert cost(F.identity, half(2, 3), half(4)) == (0, 0, 0, {})
    assert cost(F.identity, half(1, 3)) == (0, 0, 0, {})


# Unary element-wise functions: |x| FLOPs, |x| read, |x| written.

UNARY = [
    (F.exp, 'Exp'), (F.expm1, 'Expm1'), (F.log, 'Log'), (F.log2, 'Log2'),
    (F.log10, 'Log10'), (F.log1p, 'Log1p'), (F.sin, 'Sin'), (F.cos, 'Cos'),
    (F.tan, 'Tan'), (F.arcsin, 'Arcsin'), (F.arccos, 'Arccos'),
    (F.arctan, 'Arctan'), (F.sinh, 'Sinh'), (F.cosh, 'Cosh'),
    (getattr(F, 'arctanh', None), 'Arctanh'),
]


@pytest.mark.parametrize('fn,kind', UNARY, ids=[k for _, k in UNARY])
def test_unary(fn, kind):
    if fn is None:
        pytest.skip('{} is not in this Chainer'.format(kind))
    # |x| = 2*3 = 6: one evaluation per element, 6 read, 6 written
    assert cost(fn, half(2, 3), kind=kind) == (6, 6, 6, {})
    assert cost(fn, half(2, 3), kind=kind, fma=False) == (6, 6, 6, {})
    # batch 1: |x| = 1*4 = 4
    assert cost(fn, half(1, 4), kind=kind) == (4, 4, 4, {})
    assert fn(half(2, 3)).size == 6


SPECIAL = [
    (F.erf, Erf), (F.erfc, Erfc), (F.erfcx, Erfcx), (F.erfinv, ErfInv),
    (F.erfcinv, ErfcInv), (F.ndtr, Ndtr), (F.log_ndtr, LogNdtr),
    (F.ndtri, Ndtri), (F.lgamma, LGamma), (F.digamma, DiGamma),
]


@pytest.mark.parametrize('fn,cls', SPECIAL,
                         ids=[c.__name__ for _, c in SPECIAL])
def test_special_unary(fn, cls):
    # |x| = 2*3 = 6: one special-function evaluation per element
    assert special_cost(fn, cls(), half(2, 3)) == (6, 6, 6, {})
    assert special_cost(fn, cls(), half(2, 3), fma=False) == (6, 6, 6, {})
    # batch 1: |x| = 1*4 = 4
    assert special_cost(fn, cls(), half(1, 4)) == (4, 4, 4, {})


def test_family_calculators_serve_subclasses():
    # one calculator per family reads its per-class row through the MRO,
    # so a user's subclass of a listed class costs as its base
    from chainer.functions.math.exponential import Exp
    from chainer.functions.math.sqrt import RsqrtGPU

    class MyExp(Exp):
        pass

    class MyRsqrt(RsqrtGPU):
        pass

    class MyMulConstant(MulConstant):
        pass

    def base_cost(base, node, *in_data):
        return tuple(calculators[base](node, in_data))

    x = half(2, 3)
    # |x| = 6: 1 FLOP each for exp, 2 for a reciprocal square root
    assert base_cost(Exp, MyExp(), x) == (6, 6, 6, {})
    assert base_cost(RsqrtGPU, MyRsqrt(), x) == (12, 6, 6, {})
    # 6 multiplications; mread 6 + 1 (the scalar constant)
    assert base_cost(MulConstant, MyMulConstant(3.0), x) == (6, 7, 6, {})


def test_arctan2():
    # |y| = 6; mread 6+6 = 12
    assert cost(F.arctan2, half(2, 3), half(2, 3)) == (6, 12, 6, {})
    # broadcast (2,1) vs (1,3): |y| = 2*3 = 6; mread 2+3 = 5
    assert cost(F.arctan2, half(2, 1), half(1, 3)) == (6, 5, 6, {})
    assert F.arctan2(half(2, 1), half(1, 3)).size == 6


def test_polygamma():
    n, x = np.ones((2, 3), np.int32), half(2, 3)
    # |y| = 6; mread |n| + |x| = 6+6 = 12
    assert special_cost(F.polygamma, PolyGamma(), n, x) == (6, 12, 6, {})
    # n of shape (1,) broadcast over (2,3): mread 1+6 = 7
    n1 = np.ones(1, np.int32)
    assert special_cost(F.polygamma, PolyGamma(), n1, x) == (6, 7, 6, {})


@needs_zeta
def test_zeta():
    q = half(2, 3) + 1

    def f(v):
        return F.zeta(2.0, v)
    # |y| = 6; mread 1 (scalar order) + 6 = 7
    assert special_cost(f, Zeta(2.0), q) == (6, 7, 6, {})
    # array order of shape (3,): mread 3+6 = 9; y keeps q's (2,3) shape
    s = np.full(3, 2.0, np.float32)

    def g(v):
        return F.zeta(s, v)
    assert special_cost(g, Zeta(s), q) == (6, 9, 6, {})


def test_rsqrt_gpu_costs_like_the_cpu_path():
    from chainer.functions.math.sqrt import RsqrtGPU
    from chainer_computational_cost.cost_calculators import calculators
    x = np.zeros((2, 5), np.float32)
    # 10 elements: a sqrt and a reciprocal each
    assert calculators[RsqrtGPU](RsqrtGPU(), (x,), fma_1flop=True) == (
        20, 10, 10, {})


@pytest.mark.skipif(
    resolve_target('chainer.functions.math.squared_difference.'
                   'SquaredDifference') is None,
    reason='SquaredDifference is a function node only in Chainer 6')
def test_squared_difference_chainer6():
    a = np.ones((2, 3), dtype=np.float32)
    b = np.ones((2, 3), dtype=np.float32)
    # |y| = 6: FLOPs 2*6 = 12; mread 6+6 = 12; mwrite 6
    for fma in (True, False):
        assert cost(F.squared_difference, a, b, fma=fma,
                    kind='SquaredDifference') == (12, 12, 6, {})


# Bytes through the hook: each input array is read in its own dtype, a
# scalar constant in the dtype of the data it meets, outputs written in
# theirs.

def _bytes(fn, *args, name):
    with ComputationalCostHook() as cch:
        fn(*args)
    record = cch.layer_report[name]
    return record['mread'], record['mwrite']


def _no_scipy_polygamma(monkeypatch):
    # the CPU forward calls SciPy; only the output's shape and dtype
    # matter to the hook, so zeros of the broadcast shape stand in
    from chainer.functions.math import polygamma
    monkeypatch.setattr(polygamma, '_polygamma_cpu',
                        lambda n, x: np.zeros(np.broadcast(n, x).shape))


def test_polygamma_bytes_int_orders(monkeypatch):
    _no_scipy_polygamma(monkeypatch)
    n = np.ones((2, 3), np.int32)
    x = half(2, 3).astype(np.float16)
    # n 6*4 = 24 + x 6*2 = 12 -> 36; y float16 6*2 = 12
    assert _bytes(F.polygamma, n, x, name='PolyGamma-1') == (36, 12)
    n = np.ones(1, np.int64)
    x = half(2, 3).astype(np.float64)
    # n 1*8 = 8 + x 6*8 = 48 -> 56; y float64 6*8 = 48
    assert _bytes(F.polygamma, n, x, name='PolyGamma-1') == (56, 48)
    n = np.ones((2, 1), np.int8)
    x = half(2, 3)
    # n 2*1 = 2 + x 6*4 = 24 -> 26; y float32 6*4 = 24
    assert _bytes(F.polygamma, n, x, name='PolyGamma-1') == (26, 24)


def test_binary_bytes_float16_float64():
    a, b = half(2, 3).astype(np.float16), half(3).astype(np.float16)
    # a 6*2 = 12 + b 3*2 = 6 -> 18; y 6*2 = 12
    assert _bytes(F.add, a, b, name='Add-1') == (18, 12)
    a, b = half(2, 3).astype(np.float64), half(2, 3).astype(np.float64)
    # 6*8 + 6*8 = 96; y 6*8 = 48
    assert _bytes(F.maximum, a, b, name='Maximum-1') == (96, 48)


def test_constant_bytes_float16_float64():
    x = var(2, 3)
    x16 = chainer.Variable(x.array.astype(np.float16))
    # x 6*2 = 12 + the scalar in float16 2 -> 14; y 6*2 = 12
    assert _bytes(lambda v: v + 2, x16, name='AddConstant-1') == (14, 12)
    x64 = chainer.Variable(x.array.astype(np.float64))
    # x 6*8 = 48 + the scalar in float64 8 -> 56; y 6*8 = 48
    assert _bytes(lambda v: 3 / v, x64, name='DivFromConstant-1') == (56, 48)


@needs_open_clip
def test_clip_bytes_array_and_scalar_bounds():
    # Chainer compares the bounds, so an array bound next to a scalar one
    # has a single element
    x, lo = half(2, 3), np.zeros(1, np.float64)

    def f(v):
        return Clip(lo, 1.0).apply((v,))[0]
    # x 6*4 = 24 + lo 1*8 = 8 + the scalar x_max in x's float32 4 -> 36
    # y is cast to x's float32 dtype: 6*4 = 24
    assert f(x).dtype == np.float32
    assert _bytes(f, x, name='Clip-1') == (36, 24)


def test_unary_bytes_float16_float64():
    # |x| = 6: read and written in the input's dtype
    assert _bytes(F.exp, half(2, 3).astype(np.float16),
                  name='Exp-1') == (12, 12)
    assert _bytes(F.sqrt, half(2, 3).astype(np.float64),
                  name='Sqrt-1') == (48, 48)


# Gradients of element-wise functions (the nodes backward passes apply).

def backward_of(f, *arrays):
    """A callable running ``f`` on Variables of ``arrays``, then a backward
    pass from a gradient of ones."""
    def run():
        y = f(*[chainer.Variable(a) for a in arrays])
        y.grad = np.ones_like(y.array)
        y.backward()
    return run


UNARY_GRADS = [
    # (forward, gradient class, FLOPs per element with FMA, without)
    (F.sin, 'SinGrad', 2, 2),  # cos, multiply
    (F.cos, 'CosGrad', 3, 3),  # sin, sign flip, multiply
    (F.arcsin, 'ArcsinGrad', 4, 5),  # 1 - x*x (fused), sqrt, 1/., multiply
    (F.arccos, 'ArccosGrad', 5, 6),  # as arcsin + sign flip
    (F.arctan, 'ArctanGrad', 3, 4),  # 1 + x*x (fused), 1/., multiply
    (F.absolute, 'AbsoluteGrad', 2, 2),  # sign, multiply
]


@pytest.mark.parametrize('fn,kind,k_fma,k', UNARY_GRADS,
                         ids=[k for _, k, _, _ in UNARY_GRADS])
def test_unary_grad(fn, kind, k_fma, k):
    run = backward_of(fn, half(2, 3))
    # |g_x| = 2*3 = 6; mread x (kept or input) 6 + g_y 6 = 12; mwrite 6
    assert cost(run, kind=kind) == (k_fma * 6, 12, 6, {})
    assert cost(run, kind=kind, fma=False) == (k * 6, 12, 6, {})
    # batch 1: |g_x| = 1*4 = 4; mread 4 + 4 = 8
    assert cost(backward_of(fn, half(1, 4)), kind=kind, fma=False) == (
        k * 4, 8, 4, {})


CONSTANT_GRADS = [
    # (forward, gradient class, FLOPs per element)
    (lambda v: 2 / v, 'DivFromConstantGrad', 3),  # x*x, (-c) g_y, divide
    (lambda v: v ** 3, 'PowVarConstGrad', 3),  # power, two multiplications
    (lambda v: 2 ** v, 'PowConstVarGrad', 2),  # two multiplications
]


@pytest.mark.parametrize('fn,kind,k', CONSTANT_GRADS,
                         ids=[k for _, k, _ in CONSTANT_GRADS])
def test_constant_grad(fn, kind, k):
    run = backward_of(fn, half(2, 3))
    # |g_x| = 6: k*6 FLOPs; mread x (or y) 6 + g_y 6 + the constant 1 = 13
    assert cost(run, kind=kind) == (k * 6, 13, 6, {})
    assert cost(run, kind=kind, fma=False) == (k * 6, 13, 6, {})


def test_clip_grad():
    run = backward_of(lambda v: F.clip(v, 0.2, 0.8), half(2, 3))
    # one select per element: 6; mread g_y 6 + the mask 6 = 12; mwrite 6
    assert cost(run, kind='ClipGrad') == (6, 12, 6, {})
    assert cost(run, kind='ClipGrad', fma=False) == (6, 12, 6, {})


def test_clip_grad_bytes():
    run = backward_of(lambda v: F.clip(v, 0.2, 0.8), half(2, 3))
    # g_y 6*4 = 24 + the boolean mask 6*1 = 6 -> 30; g_x 6*4 = 24
    assert _bytes(run, name='ClipGrad-1') == (30, 24)


def test_div_grad():
    run = backward_of(div, half(2, 3), half(2, 3))
    # |y| = 6: 4*6 = 24, no broadcast sums; mread 6+6+6 = 18; mwrite 6+6
    assert cost(run, kind='DivGrad') == (24, 18, 12, {})
    # b (3,) broadcast: 4*6 + (6 - 6) + (6 - 3) = 27; mread 6+3+6 = 15;
    # mwrite 6+3 = 9
    run = backward_of(div, half(2, 3), half(3))
    assert cost(run, kind='DivGrad', fma=False) == (27, 15, 9, {})


def test_pow_var_var_grad():
    run = backward_of(lambda a, b: a ** b, half(2, 3), half(2, 3))
    # |y| = 6: 7*6 = 42; mread a 6 + b 6 + g_y 6 + kept y 6 = 24;
    # mwrite 6+6 = 12
    assert cost(run, kind='PowVarVarGrad') == (42, 24, 12, {})
    # b (1,3) broadcast: 42 + (6 - 3) = 45; mread 6+3+6+6 = 21; mwrite 9
    run = backward_of(lambda a, b: a ** b, half(2, 3), half(1, 3))
    assert cost(run, kind='PowVarVarGrad', fma=False) == (45, 21, 9, {})


def test_arctan2_grad():
    run = backward_of(F.arctan2, half(2, 3), half(2, 3))
    # |y| = 6: FMA 7*6 = 42, no FMA 8*6 = 48; mread 18; mwrite 12
    assert cost(run, kind='Arctan2Grad') == (42, 18, 12, {})
    assert cost(run, kind='Arctan2Grad', fma=False) == (48, 18, 12, {})


@pytest.mark.parametrize('fn,kind,kept', [
    (F.maximum, 'MaximumGrad', 'mask'), (F.minimum, 'MinimumGrad', 'inputs')])
def test_maximum_minimum_grad(fn, kind, kept):
    run = backward_of(fn, half(2, 3), np.full((2, 3), 0.25, np.float32))
    # |g_y| = 6 comparisons/selects, no broadcast sums; mwrite 6+6 = 12
    # mread: g_y 6 + the mask 6 = 12 (max); g_y 6 + a 6 + b 6 = 18 (min)
    mread = 12 if kept == 'mask' else 18
    assert cost(run, kind=kind) == (6, mread, 12, {})
    # b (3,) broadcast: 6 + (6 - 3) = 9; mwrite 6+3 = 9
    # mread: 6 + 6 = 12 (max); 6 + 6 + 3 = 15 (min)
    run = backward_of(fn, half(2, 3), np.full(3, 0.25, np.float32))
    mread = 12 if kept == 'mask' else 15
    assert cost(run, kind=kind, fma=False) == (9, mread, 9, {})


def test_maximum_grad_bytes():
    run = backward_of(F.maximum, half(2, 3).astype(np.float64),
                      np.zeros((2, 3)))
    # g_y 6*8 = 48 + the boolean mask 6 -> 54; g_a, g_b 12*8 = 96
    assert _bytes(run, name='MaximumGrad-1') == (54, 96)


def test_linear_interpolate_grad():
    p, x, y = half(2, 3), half(2, 3), half(2, 3)
    run = backward_of(F.linear_interpolate, p, x, y)
    # |z| = 6: 4*6 = 24 either way; mread 4*6 = 24; mwrite 3*6 = 18
    assert cost(run, kind='LinearInterpolateGrad') == (24, 24, 18, {})
    assert cost(run, kind='LinearInterpolateGrad', fma=False) == (
        24, 24, 18, {})
