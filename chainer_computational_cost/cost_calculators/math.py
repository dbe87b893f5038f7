"""Cost calculators for ``chainer.functions.math``: arithmetic operators,
element-wise functions, reductions, products and linear algebra.

Conventions shared by every calculator of this module:

* Each element-wise arithmetic operation, comparison or elementary/special
  function evaluation (exp, log, sin, pow, erf, lgamma, ...) costs 1 FLOP per
  output element, however the library actually computes it.
* Inputs broadcast as in NumPy: the output ``y`` has the broadcast shape of
  all operands, every input element is read once and every output element is
  written once.
* A constant held by the node (``value``, ``x_min``, ...) is read once: 1
  element for a scalar, its size for an array.
* Reads are counted in each array's own dtype (mixed precision, integer
  orders, index arrays), a scalar constant in the dtype of the data it
  meets; writes in the output's dtype.
"""

import collections.abc
import importlib.util
import numbers

import chainer
from chainer.functions.math.average import Mean
from chainer.functions.math.basic_math import Absolute
from chainer.functions.math.basic_math import AbsoluteGrad
from chainer.functions.math.basic_math import Add
from chainer.functions.math.basic_math import AddConstant
from chainer.functions.math.basic_math import Div
from chainer.functions.math.basic_math import DivFromConstant
from chainer.functions.math.basic_math import DivFromConstantGrad
from chainer.functions.math.basic_math import DivGrad
from chainer.functions.math.basic_math import Mul
from chainer.functions.math.basic_math import MulConstant
from chainer.functions.math.basic_math import MultiAdd
from chainer.functions.math.basic_math import Neg
from chainer.functions.math.basic_math import PowConstVar
from chainer.functions.math.basic_math import PowConstVarGrad
from chainer.functions.math.basic_math import PowVarConst
from chainer.functions.math.basic_math import PowVarConstGrad
from chainer.functions.math.basic_math import PowVarVar
from chainer.functions.math.basic_math import PowVarVarGrad
from chainer.functions.math.basic_math import Sub
from chainer.functions.math.basic_math import SubFromConstant
from chainer.functions.math.batch_l2_norm_squared import BatchL2NormSquared
from chainer.functions.math.batch_l2_norm_squared import (
    BatchL2NormSquaredGrad)
from chainer.functions.math.clip import Clip
from chainer.functions.math.clip import ClipGrad
from chainer.functions.math.cumprod import Cumprod
from chainer.functions.math.cumprod import Cumprodsum
from chainer.functions.math.cumsum import Cumsum
from chainer.functions.math.det import BatchDet
from chainer.functions.math.digamma import DiGamma
from chainer.functions.math.einsum import DiagEinSum
from chainer.functions.math.einsum import EinSum
from chainer.functions.math.erf import Erf
from chainer.functions.math.erfc import Erfc
from chainer.functions.math.erfcinv import ErfcInv
from chainer.functions.math.erfcx import Erfcx
from chainer.functions.math.erfinv import ErfInv
from chainer.functions.math.exponential import Exp
from chainer.functions.math.exponential import Log
from chainer.functions.math.exponential import Log10
from chainer.functions.math.exponential import Log2
from chainer.functions.math.exponential_m1 import Expm1
from chainer.functions.math.fft import FFT
from chainer.functions.math.fmod import Fmod
from chainer.functions.math.hyperbolic import Cosh
from chainer.functions.math.hyperbolic import Sinh
from chainer.functions.math.identity import Identity
from chainer.functions.math.inv import BatchInv
from chainer.functions.math.inv import Inv
from chainer.functions.math.lgamma import LGamma
from chainer.functions.math.linear_interpolate import LinearInterpolate
from chainer.functions.math.linear_interpolate import (
    LinearInterpolateGrad)
from chainer.functions.math.log_ndtr import LogNdtr
from chainer.functions.math.logarithm_1p import Log1p
from chainer.functions.math.logsumexp import LogSumExp
from chainer.functions.math.matmul import BatchMatMul
from chainer.functions.math.matmul import BatchMatMulGrad
from chainer.functions.math.matmul import MatMul
from chainer.functions.math.maximum import Maximum
from chainer.functions.math.maximum import MaximumGrad
from chainer.functions.math.minimum import Minimum
from chainer.functions.math.minimum import MinimumGrad
from chainer.functions.math.minmax import ArgMax
from chainer.functions.math.minmax import ArgMin
from chainer.functions.math.minmax import Max
from chainer.functions.math.minmax import Min
from chainer.functions.math.ndtr import Ndtr
from chainer.functions.math.ndtri import Ndtri
from chainer.functions.math.polygamma import PolyGamma
from chainer.functions.math.prod import Prod
from chainer.functions.math.sparse_matmul import CooMatMul
from chainer.functions.math.sparse_matmul import CooMatMulGradSP
from chainer.functions.math.sqrt import Sqrt
from chainer.functions.math.square import Square
from chainer.functions.math.sum import Sum
from chainer.functions.math.sum import SumTo
from chainer.functions.math.tensordot import TensorDot
from chainer.functions.math.trigonometric import Arccos
from chainer.functions.math.trigonometric import ArccosGrad
from chainer.functions.math.trigonometric import Arcsin
from chainer.functions.math.trigonometric import ArcsinGrad
from chainer.functions.math.trigonometric import Arctan
from chainer.functions.math.trigonometric import ArctanGrad
from chainer.functions.math.trigonometric import Arctan2
from chainer.functions.math.trigonometric import Arctan2Grad
from chainer.functions.math.trigonometric import Cos
from chainer.functions.math.trigonometric import CosGrad
from chainer.functions.math.trigonometric import Sin
from chainer.functions.math.trigonometric import SinGrad
from chainer.functions.math.trigonometric import Tan
import numpy

from chainer_computational_cost.cost_calculators import argmax_copy
from chainer_computational_cost.cost_calculators import broadcast_shape
from chainer_computational_cost.cost_calculators import doc_flops_cells
from chainer_computational_cost.cost_calculators import doc_times
from chainer_computational_cost.cost_calculators import elides
from chainer_computational_cost.cost_calculators import dot_flops
from chainer_computational_cost.cost_calculators import Elements
from chainer_computational_cost.cost_calculators import elements
from chainer_computational_cost.cost_calculators import lookup
from chainer_computational_cost.cost_calculators import Peak
from chainer_computational_cost.cost_calculators import prod
from chainer_computational_cost.cost_calculators import product_convention
from chainer_computational_cost.cost_calculators import reduced_shape
from chainer_computational_cost.cost_calculators import reshape_view
from chainer_computational_cost.cost_calculators import resolve_table
from chainer_computational_cost.cost_calculators import size_of
from chainer_computational_cost.cost_calculators import strides_of
from chainer_computational_cost.cost_calculators import tensordot_copies
from chainer_computational_cost.cost_calculators import total_size

#: The family of calls whose time one fit of a calibration predicts
#: (``analysis.calibration.FAMILIES``): this module's.
TIME_FAMILY = 'math'


# Private helpers: pure functions of shapes and numbers.

def _shape_of(x):
    """Shape of an array operand; ``()`` for a Python or NumPy scalar."""
    if type(x) is numpy.ndarray:
        return x.shape  # a tuple of ints already
    return tuple(int(s) for s in getattr(x, 'shape', ()))


def _elementwise(operands, flops_per_elem=1, params=None):
    """Cost of an element-wise operation over broadcast ``operands``.

    ``operands`` are the arrays and constants the operation reads (None
    entries are absent optional operands and are skipped).  The output has
    their broadcast shape; ``flops_per_elem`` FLOPs are spent per output
    element, every operand element is read once and every output element is
    written once.
    """
    present = [x for x in operands if x is not None]
    n_out = prod(broadcast_shape(*[_shape_of(x) for x in present]))
    return (flops_per_elem * n_out, _reads(present), n_out,
            {} if params is None else params)


def _reads(operands):
    """Elements read from ``operands``: each array once in its own dtype,
    each scalar constant as one element of the first array's dtype (the
    dtype it is used in), so the bytes are exact whatever the mix."""
    total = total_size(operands)
    if type(total) is Elements:  # arrays only, the usual case
        return total
    sizes = [size_of(x) for x in operands]
    arrays = [x for x, n in zip(operands, sizes) if isinstance(n, Elements)]
    scalars = len(sizes) - len(arrays)
    if scalars and arrays:
        return total_size(arrays) + elements(scalars, arrays[0])
    return sum(sizes)


def _scalar_param(value):
    """``value`` as a plain Python number for a report, or None if it is not
    a scalar (an array bound, or no bound)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    return None


def _row(formula, note, flops=1, **fields):
    """A row of an element-wise family's table: the docstring fields of one
    class, with its FLOPs per output element both as a number (``flops``)
    and as the factor written before $\\|y\\|$ (``k``: none for 1)."""
    return dict(fields, formula=formula, note=note, flops=flops,
                k='' if flops == 1 else '{} '.format(flops))


# Element-wise functions of one input: y = f(x), f counted as a whole.
# Elementary functions (exp, log, sin, sqrt, ...) and special functions
# (erf, lgamma, ...) cost 1 FLOP per element each, whatever series,
# polynomial or table the library evaluates.

_UNARY = {
    Neg: _row(r'-x', 'One negation per element.'),
    Absolute: _row(r'|x|', 'One absolute-value operation per element.'),
    Square: _row(r'x^2', 'One multiplication per element.'),
    Sqrt: _row(r'\sqrt{x}', 'One square root per element (an elementary '
               'function: 1 FLOP).'),
    'chainer.functions.math.sqrt.RsqrtGPU': _row(
        r'1 / \sqrt{x}',
        'What `F.rsqrt` creates on a GPU: a square root and a reciprocal '
        'per element, the same as the Sqrt and DivFromConstant that '
        '`F.rsqrt` runs on the CPU, so totals do not depend on the device.',
        flops=2),
    Exp: _row(r'e^x', 'One exponential per element (an elementary '
              'function: 1 FLOP).'),
    Expm1: _row(r'e^x - 1', 'One `expm1` evaluation per element (a single '
                'elementary function: 1 FLOP, the $-1$ is part of it).'),
    Log: _row(r'\ln x', 'One natural logarithm per element (an elementary '
              'function: 1 FLOP).'),
    Log2: _row(r'\log_2 x', 'One base-2 logarithm per element (a single '
               'elementary function: 1 FLOP, no separate change of base).'),
    Log10: _row(r'\log_{10} x', 'One base-10 logarithm per element (a '
                'single elementary function: 1 FLOP, no separate change of '
                'base).'),
    Log1p: _row(r'\ln(1 + x)', 'One `log1p` evaluation per element (a '
                'single elementary function: 1 FLOP, the $+1$ is part of '
                'it).'),
    Sin: _row(r'\sin x', 'One sine per element (an elementary function: 1 '
              'FLOP).'),
    Cos: _row(r'\cos x', 'One cosine per element (an elementary function: '
              '1 FLOP).'),
    Tan: _row(r'\tan x', 'One tangent per element (an elementary function: '
              '1 FLOP).'),
    Arcsin: _row(r'\arcsin x', 'One arcsine per element (an elementary '
                 'function: 1 FLOP).'),
    Arccos: _row(r'\arccos x', 'One arccosine per element (an elementary '
                 'function: 1 FLOP).'),
    Arctan: _row(r'\arctan x', 'One arctangent per element (an elementary '
                 'function: 1 FLOP).'),
    'chainer.functions.math.arctanh.Arctanh': _row(
        r'\operatorname{artanh} x', 'One inverse hyperbolic tangent per '
        'element (an elementary function: 1 FLOP). Not available in '
        'Chainer 6.'),
    Sinh: _row(r'\sinh x', 'One hyperbolic sine per element (an elementary '
               'function: 1 FLOP).'),
    Cosh: _row(r'\cosh x', 'One hyperbolic cosine per element (an '
               'elementary function: 1 FLOP).'),
    Erf: _row(r'\operatorname{erf} x', 'One error-function evaluation per '
              'element (a special function counts 1 FLOP).'),
    Erfc: _row(r'\operatorname{erfc} x = 1 - \operatorname{erf} x',
               'One complementary error function evaluation per element (a '
               'special function counts 1 FLOP).'),
    Erfcx: _row(r'e^{x^2} \operatorname{erfc} x', 'One scaled '
                'complementary error function evaluation per element (a '
                'special function counts 1 FLOP, as a whole).'),
    ErfInv: _row(r'\operatorname{erf}^{-1} x', 'One inverse error function '
                 'evaluation per element (a special function counts 1 '
                 'FLOP).'),
    ErfcInv: _row(r'\operatorname{erfc}^{-1} x', 'One inverse '
                  'complementary error function evaluation per element (a '
                  'special function counts 1 FLOP).'),
    Ndtr: _row(r'\Phi(x) = \frac{1}{2} \operatorname{erfc}(-x / \sqrt{2})',
               'One standard normal CDF evaluation per element (a special '
               'function counts 1 FLOP, as a whole).'),
    LogNdtr: _row(r'\ln \Phi(x)', 'One log of the standard normal CDF per '
                  'element (a special function counts 1 FLOP, as a '
                  'whole).'),
    Ndtri: _row(r'\Phi^{-1}(x)', 'One inverse standard normal CDF '
                'evaluation per element (a special function counts 1 '
                'FLOP).'),
    LGamma: _row(r'\ln |\Gamma(x)|', 'One log-gamma evaluation per element '
                 '(a special function counts 1 FLOP).'),
    DiGamma: _row(r'\psi(x) = \frac{d}{dx} \ln \Gamma(x)', 'One digamma '
                  'evaluation per element (a special function counts 1 '
                  'FLOP).'),
}
_UNARY_ROWS = resolve_table(_UNARY)


def calc_unary(func: tuple(_UNARY), in_data, **kwargs):
    r"""<<name>>

    $$y = <<formula>>$$

    <<note>>

    | Item | Value |
    |:-----|:------|
    | FLOPs | $<<k>>\|x\|$ |
    | mread | $\|x\|$ |
    | mwrite | $\|y\| = \|x\|$ |
    | params | none |
    """
    return _elementwise(in_data, lookup(_UNARY_ROWS, type(func))['flops'])


calc_unary.family = _UNARY


# Element-wise functions of two inputs that broadcast: y = f(a, b).

def _binary_row(formula, note, flops=1, a='a', b='b'):
    """A row of the two-input family, naming its operands ``a`` and ``b``
    as the class's documentation does."""
    return _row(formula, note, flops, a=a, b=b)


_BINARY = {
    Add: _binary_row(r'a + b', 'One addition per output element.'),
    Sub: _binary_row(r'a - b', 'One subtraction per output element.'),
    Mul: _binary_row(r'a \odot b', 'One multiplication per output element.'),
    Div: _binary_row(r'a / b', 'One division per output element.'),
    'chainer.functions.math.squared_difference.SquaredDifference': _binary_row(
        r'(a - b)^2',
        "Chainer 6's `F.squared_difference` (Chainer 7 composes it from Sub "
        'and a power): a subtraction and a multiplication per output '
        'element.', flops=2),
    PowVarVar: _binary_row(r'a^b',
                           'One power evaluation per output element (an '
                           'elementary function: 1 FLOP).'),
    Maximum: _binary_row(r'\max(a, b)', 'One comparison per output element.'),
    Minimum: _binary_row(r'\min(a, b)', 'One comparison per output element.'),
    Fmod: _binary_row(r'\mathrm{fmod}(x, d)',
                      'One floating-point remainder per output element (1 '
                      'FLOP).', a='x', b='d'),
    Arctan2: _binary_row(r'\operatorname{atan2}(x_1, x_2)',
                         'One two-argument arctangent per output element '
                         '(an elementary function: 1 FLOP, the quadrant '
                         'selection included).', a='x_1', b='x_2'),
    PolyGamma: _binary_row(r'\psi^{(n)}(x)',
                           'One polygamma evaluation per output element (a '
                           'special function: 1 FLOP whatever the order); '
                           'the integer orders $n$ are the first input.',
                           a='n', b='x'),
}
_BINARY_ROWS = resolve_table(_BINARY)


def calc_binary(func: tuple(_BINARY), in_data, **kwargs):
    r"""<<name>>

    $$y = <<formula>>$$

    <<note>> $y$ has the broadcast shape of $<<a>>$ and $<<b>>$; each
    input element is read once, in its own dtype. Given $N > 2$ arrays (a
    direct call, as 0.1.2's calculators accepted; Chainer's own node always
    has two, and `F.add` of more makes a MultiAdd) the operation is applied
    $N - 1$ times, left to right, over their broadcast shape, and every
    array is read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $<<k>>\|y\|$; $<<k>>(N - 1) \|y\|$ for $N$ arrays |
    | mread | $\|<<a>>\| + \|<<b>>\|$; $\sum_i \|x_i\|$ for $N$ arrays |
    | mwrite | $\|y\|$ |
    | params | none |
    """
    return _elementwise(in_data, lookup(_BINARY_ROWS, type(func))['flops']
                        * (len(in_data) - 1))


calc_binary.family = _BINARY


# Element-wise functions of an input and a constant the node holds.

_CONSTANT = {
    AddConstant: _row(r'x + c',
                      'One addition per element (`x - c` is also an '
                      'AddConstant, of $-c$).', attr='value', x='x'),
    SubFromConstant: _row(r'c - x', 'One subtraction per element.',
                          attr='value', x='x'),
    MulConstant: _row(r'c x',
                      'One multiplication per element (`x / c` is also a '
                      'MulConstant, of $1/c$).', attr='value', x='x'),
    DivFromConstant: _row(r'c / x', 'One division per element.',
                          attr='value', x='x'),
    PowVarConst: _row(r'x^c',
                      'One power evaluation per element (1 FLOP whatever '
                      'the exponent, even for `x ** 2`).', attr='value',
                      x='x'),
    PowConstVar: _row(r'c^x', 'One power evaluation per element (1 FLOP).',
                      attr='value', x='x'),
    'chainer.functions.math.zeta.Zeta': _row(
        r'\zeta(c, q) = \sum_{k=0}^{\infty} (k + q)^{-c}',
        'One Hurwitz zeta evaluation per element (a special function: 1 '
        'FLOP); the order $c$ is the constant, $q$ the input. Not '
        'available in Chainer 6.', attr='_x', x='q'),
}
_CONSTANT_ROWS = resolve_table(_CONSTANT)


def calc_with_constant(func: tuple(_CONSTANT), in_data, **kwargs):
    r"""<<name>>

    $$y = <<formula>>$$

    <<note>> The constant $c$ (`func.<<attr>>`) is read once: 1 element
    for a scalar, its size for an array (the output then has the broadcast
    shape of $<<x>>$ and $c$; with a scalar, $|y| = |<<x>>|$).

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|y\|$ |
    | mread | $\|<<x>>\| + \|c\|$ |
    | mwrite | $\|y\|$ |
    | params | none |
    """
    row = lookup(_CONSTANT_ROWS, type(func))
    x, = in_data
    return _elementwise((x, getattr(func, row['attr'])), row['flops'])


calc_with_constant.family = _CONSTANT


# Other element-wise functions.

def calc_multi_add(func: MultiAdd, in_data, **kwargs):
    r"""MultiAdd

    $$y = x_1 + x_2 + \cdots + x_n$$

    $n - 1$ additions per output element; $y$ has the broadcast shape of all
    inputs.  With a single input the function returns it unchanged, which
    costs nothing.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $(n - 1) \|y\|$ |
    | mread | $\sum_i \|x_i\|$ |
    | mwrite | $\|y\|$ |
    | params | none |
    """
    if len(in_data) < 2:
        return (0, 0, 0, {})
    return _elementwise(in_data, flops_per_elem=len(in_data) - 1)


def calc_clip(func: Clip, in_data, **kwargs):
    r"""Clip

    $$y = \min(\max(x, x_{min}), x_{max})$$

    One comparison per element for each bound that is set
    ($n_b \in \{1, 2\}$).  Each bound is read once: 1 element for a
    scalar, its size for an array (the output then has the broadcast shape
    of $x$ and the bounds; with scalar bounds $|y| = |x|$).  Scalar bounds
    are reported as params.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $n_b \|y\|$ |
    | mread | $\|x\| + \|x_{min}\| + \|x_{max}\|$ |
    | mwrite | $\|y\|$ |
    | params | `min`, `max`: the scalar bounds that are set |
    """
    x, = in_data
    bounds = [b for b in (func.x_min, func.x_max) if b is not None]
    params = {}
    for key, bound in (('min', func.x_min), ('max', func.x_max)):
        value = _scalar_param(bound)
        if value is not None:
            params[key] = value
    return _elementwise([x] + bounds, flops_per_elem=len(bounds),
                        params=params)


def calc_linear_interpolate(func: LinearInterpolate, in_data, **kwargs):
    r"""LinearInterpolate

    $$z = p x + (1 - p) y$$

    Computed as written: one subtraction $1 - p$, one multiplication
    $(1 - p) y$ and one multiply-add $p x + \cdot$ per element (the
    multiply-add is 1 FLOP with FMA, 2 without).  $p$, $x$ and $y$ have the
    same shape.  The constant 1 is an immediate, not read from memory.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $3 \|z\|$ |
    | FLOPs (no FMA) | $4 \|z\|$ |
    | mread | $\|p\| + \|x\| + \|y\| = 3 \|z\|$ |
    | mwrite | $\|z\|$ |
    | params | none |
    """
    fma_1flop = kwargs.get('fma_1flop', False)
    return _elementwise(in_data, flops_per_elem=3 if fma_1flop else 4)


def calc_identity(func: Identity, in_data, **kwargs):
    r"""Identity

    $$y_i = x_i$$

    The outputs are the input arrays themselves: no computation, no memory
    traffic.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | 0 |
    | mwrite | 0 |
    | params | none |
    """
    return (0, 0, 0, {})


# Reductions, products and linear algebra.

def _fma_flops(pairs, others, fma):
    """FLOPs of ``pairs`` multiply-add pairs plus ``others`` single ops."""
    return pairs * (1 if fma else 2) + others


def _reduce_ops(x_size, y_size):
    """Binary operations reducing ``x_size`` elements into ``y_size``."""
    return max(x_size - y_size, 0)


def _reduction(x, axis):
    """``(flops, mread, mwrite)`` of a one-op-per-element reduction
    (sum, product, max, min, argmax, argmin) of ``x`` over ``axis`` (kept
    dimensions of length 1 change no count)."""
    y_size = prod(reduced_shape(x.shape, axis))
    return (_reduce_ops(x.size, y_size), size_of(x), y_size)


def _scan(x, axis):
    """``(flops, mread, mwrite)`` of a cumulative scan (cumsum, cumprod):
    one op per element except the first of each scanned line.  ``axis``
    None scans the flattened array."""
    length = x.size if axis is None else x.shape[axis]
    lines = x.size // length if length else 0
    return (x.size - lines, size_of(x), x.size)


def _matmul_dims(a_shape, b_shape, transa, transb, transc=False):
    """``(number of outputs, contracted length)`` of ``numpy.matmul`` on
    (optionally transposed) operands, following ``chainer``'s ``_matmul``."""
    if transc:
        a_shape, b_shape = b_shape, a_shape
        transa, transb = not transb, not transa
    a = list(a_shape)
    b = list(b_shape)
    if transa and len(a) > 1:
        a[-2], a[-1] = a[-1], a[-2]
    if transb and len(b) > 1:
        b[-2], b[-1] = b[-1], b[-2]
    if len(a) == 1:
        a = [1] + a
    if len(b) == 1:
        b = b + [1]
    batch = broadcast_shape(a[:-2], b[:-2])
    return prod(batch) * a[-2] * b[-1], a[-1]


def _batch_mkn(a_shape, b_shape, transa, transb):
    """``(B, M, K, N)`` of a BatchMatMul: ``B`` products of an ``M x K``
    by a ``K x N`` matrix, each operand a ``(B, rows, cols)`` array (a 2-D
    ``(B, L)`` one being ``B`` columns, axes beyond the second flattened),
    after the transpositions."""
    a = (a_shape[0], a_shape[1], prod(a_shape[2:]))
    b = (b_shape[0], b_shape[1], prod(b_shape[2:]))
    m, k = (a[2], a[1]) if transa else (a[1], a[2])
    n = b[1] if transb else b[2]
    return a[0], m, k, n


def _einsum_flops(in_subs, out_labels, shapes, fma):
    """``(flops, number of outputs)`` of a direct einsum evaluation.

    ``in_subs`` are Chainer's comma-separated input subscripts (``@``
    stands for an ellipsis), ``out_labels`` the labels kept in the output.
    Every point of the iteration space (all distinct labels) costs
    ``n - 1`` multiplications of the ``n`` operands, and summing the
    points into the outputs costs ``space - outputs`` additions; with FMA
    one multiplication is fused with each addition.
    """
    dims = {}
    ellipses = []
    for sub, shape in zip(in_subs.split(','), shapes):
        shape = tuple(shape)
        if '@' in sub:
            left, right = sub.split('@')
            stop = len(shape) - len(right)
            ellipses.append(shape[len(left):stop])
            labels = left + right
            shape = shape[:len(left)] + shape[stop:]
        else:
            labels = sub
        for label, d in zip(labels, shape):
            if dims.get(label, 1) == 1:
                dims[label] = d
    ell_size = prod(broadcast_shape(*ellipses))
    space = prod(dims.values()) * ell_size
    n_out = prod(dims[c] for c in set(out_labels) if c in dims)
    if '@' in out_labels:
        n_out *= ell_size
    mults = space * (len(shapes) - 1)
    adds = _reduce_ops(space, n_out)
    fused = min(mults, adds) if fma else 0
    return mults + adds - fused, n_out


def _lu_ops(n):
    """``(multiply-add pairs, divisions)`` of an LU factorisation of an
    ``n x n`` matrix by Gaussian elimination (pivot search ignored)."""
    return (n - 1) * n * (2 * n - 1) // 6, n * (n - 1) // 2


def _contracted_axes(func, a_ndim, b_ndim):
    """Contracted axes of ``a`` and ``b`` of a TensorDot, non-negative."""
    if func.a_axes is not None and func.b_axes is not None:
        a_con, b_con = func.a_axes[1], func.b_axes[0]
    elif isinstance(func.axes, collections.abc.Sequence):
        a_con, b_con = func.axes
    else:
        a_con = range(a_ndim - func.axes, a_ndim)
        b_con = range(func.axes)
    if isinstance(a_con, numbers.Integral):
        a_con = (a_con,)
    if isinstance(b_con, numbers.Integral):
        b_con = (b_con,)
    return (tuple(int(i) % a_ndim for i in a_con),
            tuple(int(i) % b_ndim for i in b_con))


def _subscripts(in_subs, out_sub):
    return '{}->{}'.format(in_subs, out_sub).replace('@', '...')


# Reductions

_REDUCTION = {
    Max: {'formula': r'\max_{axis} x',
          'note': 'One comparison per input element beyond the first of '
                  'each output.',
          'keys': ('axis',),
          'params': '`axis` (as 0.1.2: `keepdims` changes no figure)'},
    Min: {'formula': r'\min_{axis} x',
          'note': 'One comparison per input element beyond the first of '
                  'each output.',
          'keys': ('axis',),
          'params': '`axis` (as 0.1.2: `keepdims` changes no figure)'},
    ArgMax: {'formula': r'\mathrm{argmax}_{axis} x',
             'note': 'One comparison per input element beyond the first of '
                     'each output; the output holds int32 indices.',
             'keys': ('axis',), 'params': '`axis`'},
    ArgMin: {'formula': r'\mathrm{argmin}_{axis} x',
             'note': 'One comparison per input element beyond the first of '
                     'each output; the output holds int32 indices.',
             'keys': ('axis',), 'params': '`axis`'},
    Sum: {'formula': r'\sum_{axis} x',
          'note': 'Summing $n$ elements into one output takes $n - 1$ '
                  'additions.',
          'keys': ('axis',),
          'params': '`axis` (as 0.1.2: `keepdims` changes no figure)'},
    Prod: {'formula': r'\prod_{axis} x',
           'note': 'Multiplying $n$ elements into one output takes $n - 1$ '
                   'multiplications.',
           'keys': ('axis', 'keepdims'), 'params': '`axis`, `keepdims`'},
}
_REDUCTION_ROWS = resolve_table(_REDUCTION)


def calc_reduction(func: tuple(_REDUCTION), in_data, **kwargs):
    r"""<<name>>

    $$y = <<formula>>$$

    <<note>>

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|x\| - \|y\|$ |
    | mread | $\|x\|$ |
    | mwrite | $\|y\|$ |
    | params | <<params>> |
    """
    row = lookup(_REDUCTION_ROWS, type(func))
    x, = in_data
    flops, mread, mwrite = _reduction(x, func.axis)
    return (flops, mread, mwrite, {key: getattr(func, key)
                                   for key in row['keys']})


calc_reduction.family = _REDUCTION


def calc_sum_to(func: SumTo, in_data, **kwargs):
    r"""SumTo

    $$y = \mathrm{sum\_to}(x, shape)$$

    Sums the broadcast axes of $x$ away to get an array of the target shape:
    $n - 1$ additions for each output summing $n$ elements.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|x\| - \|y\|$ |
    | mread | $\|x\|$ |
    | mwrite | $\|y\|$ |
    | params | `shape`: target shape |
    """
    x, = in_data
    shape = tuple(int(s) for s in func._shape)
    y_size = prod(shape)
    return (_reduce_ops(x.size, y_size), size_of(x), y_size,
            {'shape': shape})


def calc_mean(func: Mean, in_data, **kwargs):
    r"""Mean

    $$y = \frac{1}{n} \sum_{axis} x$$

    $\|x\| - \|y\|$ additions for the sums, then one division per output.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|x\|$ |
    | mread | $\|x\|$ |
    | mwrite | $\|y\|$ |
    | params | `axis`, `keepdims` |
    """
    x, = in_data
    adds, mread, mwrite = _reduction(x, func.axis)
    return (adds + mwrite, mread, mwrite,
            {'axis': func.axis, 'keepdims': func.keepdims})


def calc_log_sum_exp(func: LogSumExp, in_data, **kwargs):
    r"""LogSumExp

    $$y = \log \sum_{axis} \exp(x)$$

    $\|x\|$ exponentials, $\|x\| - \|y\|$ additions summing them and
    $\|y\|$ logarithms: $2 \|x\|$ in all.  As for Softmax and LogSoftmax,
    the subtraction of the maximum that Chainer does for numerical
    stability (and adds back) is not counted, nor are the intermediate
    arrays as memory traffic.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $2 \|x\|$ |
    | mread | $\|x\|$ |
    | mwrite | $\|y\|$ |
    | params | `axis` |
    """
    x, = in_data
    adds, mread, y_size = _reduction(x, func.axis)
    return (x.size + adds + y_size, mread, y_size, {'axis': func.axis})


def calc_batch_l2_norm_squared(func: BatchL2NormSquared, in_data, **kwargs):
    r"""BatchL2NormSquared

    $$y_b = \sum_i x_{b,i}^2$$

    A dot product of each sample with itself: $\|x\|$ multiply-adds with
    FMA; $\|x\|$ multiplications and $\|x\| - B$ additions without ($B$ is
    the batch size, the length of $y$).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\|x\|$ |
    | FLOPs (no FMA) | $2 \|x\| - B$ |
    | mread | $\|x\|$ |
    | mwrite | $B$ |
    | params | none |
    """
    x, = in_data
    fma = kwargs.get('fma_1flop', False)
    batch = x.shape[0]
    k = x.size // batch if batch else 0
    return (dot_flops(batch, k, fma), size_of(x), batch, {})


# Scans

_SCAN = {
    Cumsum: {'formula': r'y_i = y_{i-1} + x_i', 'op': 'addition'},
    Cumprod: {'formula': r'y_i = y_{i-1} x_i', 'op': 'multiplication'},
}
_SCAN_ROWS = resolve_table(_SCAN)


def calc_scan(func: tuple(_SCAN), in_data, **kwargs):
    r"""<<name>>

    $$<<formula>>$$

    One <<op>> per element except the first of each of the
    $\|x\| / n$ scanned lines ($n$ is the length of `axis`, or $\|x\|$ when
    `axis` is None and the input is flattened).

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|x\| - \|x\| / n$ |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `axis` |
    """
    x, = in_data
    flops, mread, mwrite = _scan(x, func.axis)
    return (flops, mread, mwrite, {'axis': func.axis})


calc_scan.family = _SCAN


def calc_cumprodsum(func: Cumprodsum, in_data, **kwargs):
    r"""Cumprodsum

    $$y_0 = a_0, \quad y_i = y_{i-1} m_{i-1} + a_i$$

    Scan used by the gradients of Cumprod and Prod, with inputs
    $(m, a)$; $m$ is one shorter than $a$ along `axis`. Each element of $m$
    costs one multiply-add.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\|m\|$ |
    | FLOPs (no FMA) | $2 \|m\|$ |
    | mread | $\|m\| + \|a\|$ |
    | mwrite | $\|a\|$ |
    | params | `axis` |
    """
    xmul, xadd = in_data
    fma = kwargs.get('fma_1flop', False)
    return (_fma_flops(xmul.size, 0, fma), size_of(xmul) + size_of(xadd),
            xadd.size, {'axis': func.axis})


# Products

def calc_mat_mul(func: MatMul, in_data, **kwargs):
    r"""MatMul

    $$y = a b$$

    `numpy.matmul` semantics (1-D operands, broadcast batch axes, optional
    transpositions). Each of the $\|y\|$ outputs is a dot product of length
    $K$ (the contracted axis). A broadcast operand is read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\|y\| K$ |
    | FLOPs (no FMA) | $\|y\| (2K - 1)$ |
    | FLOPs (torch) | $2 \|y\| K$ |
    | mread | $\|a\| + \|b\|$ |
    | mwrite | $\|y\|$ |
    | params | `transa`, `transb`, `transc`: transpositions |
    """
    a, b = in_data
    fma = product_convention(kwargs)
    n_out, k = _matmul_dims(a.shape, b.shape, func.transa, func.transb,
                            func.transc)
    return (dot_flops(n_out, k, fma), size_of(a) + size_of(b), n_out,
            {'transa': bool(func.transa), 'transb': bool(func.transb),
             'transc': bool(func.transc)})


def calc_batch_mat_mul(func: BatchMatMul, in_data, **kwargs):
    r"""BatchMatMul

    $$y_i = a_i b_i$$

    Each operand is seen as a batch of matrices (a `(B, N)` array as $B$
    matrices of shape $N \times 1$, axes beyond the second flattened). Each
    of the $\|y\|$ outputs is a dot product of length $K$.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\|y\| K$ |
    | FLOPs (no FMA) | $\|y\| (2K - 1)$ |
    | FLOPs (torch) | $2 \|y\| K$ |
    | mread | $\|a\| + \|b\|$ |
    | mwrite | $\|y\|$ |
    | params | `transa`, `transb`: transpositions |
    """
    a, b = in_data
    fma = product_convention(kwargs)
    nb, m, k, n = _batch_mkn(a.shape, b.shape, func.transa, func.transb)
    return (dot_flops(nb * m * n, k, fma), size_of(a) + size_of(b),
            nb * m * n,
            {'transa': bool(func.transa), 'transb': bool(func.transb)})


def calc_tensor_dot(func: TensorDot, in_data, **kwargs):
    r"""TensorDot

    $$y = \sum_{contracted} a b$$

    Each of the $\|y\|$ outputs is a dot product of length $K$, the product
    of the contracted dimensions (with $K = 1$ the outer product costs one
    multiplication per output). The optional output transposition is free.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\|y\| K$ |
    | FLOPs (no FMA) | $\|y\| (2K - 1)$ |
    | FLOPs (torch) | $2 \|y\| K$ |
    | mread | $\|a\| + \|b\|$ |
    | mwrite | $\|y\|$ |
    | params | `a_axes`, `b_axes`: contracted axes of `a` and `b` |
    """
    a, b = in_data
    fma = product_convention(kwargs)
    a_con, b_con = _contracted_axes(func, a.ndim, b.ndim)
    k = prod(a.shape[i] for i in a_con)
    n_out = (prod(d for i, d in enumerate(a.shape) if i not in a_con)
             * prod(d for i, d in enumerate(b.shape) if i not in b_con))
    return (dot_flops(n_out, k, fma), size_of(a) + size_of(b), n_out,
            {'a_axes': a_con, 'b_axes': b_con})


def scratch_tensor_dot(func: TensorDot, in_data, **kwargs):
    r"""Copies of operands `numpy.tensordot` cannot take as they are.

    NumPy: each operand is transposed (the contracted axes last for a,
    first for b) and reshaped to a matrix, a copy unless its axes merge in
    place, and `numpy.dot` copies a matrix that is neither C- nor
    F-contiguous (a column slice `h[:, :k]`): none for contiguous operands
    contracted on their outer axes. The product is the output (its
    transposition, when asked for, a view). BLAS's own buffers are not
    counted.

    CuPy: not counted.
    """
    a, b = in_data
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    a_con, b_con = _contracted_axes(func, a.ndim, b.ndim)
    return tensordot_copies(
        (tuple(a.shape), strides_of(a), a.dtype.itemsize), a_con,
        (tuple(b.shape), strides_of(b), b.dtype.itemsize), b_con)


def calc_ein_sum(func: EinSum, in_data, **kwargs):
    r"""EinSum

    $$y = \sum_{summed\ labels} \prod_{j=1}^{n} x_j$$

    Direct evaluation over the iteration space of all $P$ combinations of
    the labels' (and ellipsis') indices, without optimising the
    contraction order: $(n - 1) P$ multiplications of the $n$ operands and
    $P - \|y\|$ additions; with FMA, $\min$ of both counts is fused. For
    two operands this is $P$ with FMA and $2P - \|y\|$ without, i.e. the
    matmul count.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\max((n - 1) P, P - \|y\|)$ |
    | FLOPs (no FMA) | $(n - 1) P + P - \|y\|$ |
    | mread | $\sum_j \|x_j\|$ |
    | mwrite | $\|y\|$ |
    | params | `subscripts` |
    """
    fma = kwargs.get('fma_1flop', False)
    shapes = [x.shape for x in in_data]
    flops, n_out = _einsum_flops(func.in_subs, func.out_sub, shapes, fma)
    return (flops, total_size(in_data), n_out,
            {'subscripts': _subscripts(func.in_subs, func.out_sub)})


def calc_diag_ein_sum(func: DiagEinSum, in_data, **kwargs):
    r"""DiagEinSum

    $$y = \mathrm{diag\_embed}(\sum_{summed\ labels} \prod_{j=1}^{n} x_j)$$

    EinSum variant used by its gradient, whose output labels may repeat
    (a diagonal) or be absent from the inputs (a broadcast). The einsum
    into the $\|y'\|$ distinct output labels found in the inputs costs as
    EinSum; writing it into the zero-filled output of shape `out_shape` is
    free data movement, each output element being written once.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\max((n - 1) P, P - \|y'\|)$ |
    | FLOPs (no FMA) | $(n - 1) P + P - \|y'\|$ |
    | mread | $\sum_j \|x_j\|$ |
    | mwrite | $\|y\|$ |
    | params | `subscripts`, `out_shape` |
    """
    fma = kwargs.get('fma_1flop', False)
    shapes = [x.shape for x in in_data]
    in_labels = set(func.in_subs.replace(',', ''))
    direct = ''.join(c for c in func.out_sub if c in in_labels)
    flops, _ = _einsum_flops(func.in_subs, direct, shapes, fma)
    out_shape = tuple(int(s) for s in func.out_shape)
    return (flops, total_size(in_data), prod(out_shape),
            {'subscripts': _subscripts(func.in_subs, func.out_sub),
             'out_shape': out_shape})


def calc_coo_mat_mul(func: CooMatMul, in_data, **kwargs):
    r"""CooMatMul

    $$C = A B, \quad A \text{ sparse (COO)}$$

    Inputs are the $z$ stored values of $A$ (with a leading batch axis
    when $B$ is batched) and the dense $B$; the node stores the row and
    column index arrays ($z$ elements each) and $A$'s shape. Each stored
    value is multiplied by a row of $B$ ($N$ columns) and accumulated into
    the zero-initialised $C$: $z N$ multiply-adds. Padding entries (negative
    indices) cannot be told apart without reading values, so $z$ counts
    all stored entries (an upper bound).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $z N$ |
    | FLOPs (no FMA) | $2 z N$ |
    | mread | $3 z + \|B\|$ |
    | mwrite | $\|C\|$ |
    | params | `shape` of $A$, `transa`, `transb`, `transc` |
    """
    sp, dn = in_data
    fma = kwargs.get('fma_1flop', False)
    nb = dn.shape[0] if dn.ndim == 3 else 1
    m = func.sp_shape[1] if func.transa else func.sp_shape[0]
    n = dn.shape[-2] if func.transb else dn.shape[-1]
    mread = (size_of(sp) + size_of(func.sp_row) + size_of(func.sp_col)
             + size_of(dn))
    return (_fma_flops(sp.size * n, 0, fma), mread, nb * m * n,
            {'shape': tuple(int(s) for s in func.sp_shape),
             'transa': bool(func.transa), 'transb': bool(func.transb),
             'transc': bool(func.transc)})


# Linear algebra

def _det_cost(x, n_mat, fma):
    n = x.shape[-1]
    pairs, divs = _lu_ops(n)
    flops = n_mat * _fma_flops(pairs, divs + max(n - 1, 0), fma)
    return flops, size_of(x), n_mat


def calc_batch_det(func: BatchDet, in_data, **kwargs):
    r"""BatchDet

    $$y_i = \det x_i = \prod_k U_{i,kk}$$

    Convention: LU factorisation of each $n \times n$ matrix by Gaussian
    elimination ($p = \frac{(n-1)n(2n-1)}{6}$ multiply-adds and
    $q = \frac{n(n-1)}{2}$ divisions; pivot search and sign ignored), then
    $n - 1$ multiplications of the diagonal of $U$; about $\frac{2}{3} n^3$
    per matrix without FMA. $B$ is the number of matrices.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $B (p + q + n - 1)$ |
    | FLOPs (no FMA) | $B (2p + q + n - 1)$ |
    | mread | $\|x\|$ |
    | mwrite | $B$ |
    | params | none |
    """
    x, = in_data
    fma = kwargs.get('fma_1flop', False)
    return _det_cost(x, x.shape[0], fma) + ({},)


def _inv_cost(x, n_mat, fma):
    n = x.shape[-1]
    flops = n_mat * _fma_flops(n * n * (n - 1), n * n + n, fma)
    return flops, size_of(x), x.size


def calc_inv(func: Inv, in_data, **kwargs):
    r"""Inv

    $$y = x^{-1}$$

    Convention: in-place Gauss-Jordan inversion of the $n \times n$ matrix:
    for each of the $n$ pivots, 1 reciprocal, $n$ multiplications scaling
    the pivot row and $n(n-1)$ multiply-adds updating the other rows (pivot
    search ignored); $2n^3 - n^2 + n$ without FMA, matching the textbook
    $2n^3$.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $n^3 + n$ |
    | FLOPs (no FMA) | $2n^3 - n^2 + n$ |
    | mread | $\|x\|$ |
    | mwrite | $\|y\| = \|x\|$ |
    | params | none |
    """
    x, = in_data
    fma = kwargs.get('fma_1flop', False)
    return _inv_cost(x, 1, fma) + ({},)


def calc_batch_inv(func: BatchInv, in_data, **kwargs):
    r"""BatchInv

    $$y_i = x_i^{-1}$$

    Inv (in-place Gauss-Jordan, see there) applied to each of the $B$
    matrices of shape $n \times n$.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $B (n^3 + n)$ |
    | FLOPs (no FMA) | $B (2n^3 - n^2 + n)$ |
    | mread | $\|x\|$ |
    | mwrite | $\|y\| = \|x\|$ |
    | params | none |
    """
    x, = in_data
    fma = kwargs.get('fma_1flop', False)
    return _inv_cost(x, x.shape[0], fma) + ({},)


def calc_cholesky(func: 'chainer.functions.math.cholesky.Cholesky',
                  in_data, **kwargs):
    r"""Cholesky

    $$x = L L^T$$

    Convention: the Cholesky-Banachiewicz algorithm on the $n \times n$
    matrix: $\frac{n^3 - n}{6}$ multiply-adds, $\frac{n(n-1)}{2}$ divisions
    and $n$ square roots (about $\frac{n^3}{3}$ without FMA). Only the lower
    triangle of $x$ is read; the whole $L$ (zeros above the diagonal
    included) is written.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\frac{n^3 - n}{6} + \frac{n(n-1)}{2} + n$ |
    | FLOPs (no FMA) | $\frac{n^3 - n}{3} + \frac{n(n-1)}{2} + n$ |
    | mread | $\frac{n(n+1)}{2}$ |
    | mwrite | $n^2$ |
    | params | none |
    """
    x, = in_data
    fma = kwargs.get('fma_1flop', False)
    n = x.shape[-1]
    pairs = (n * n * n - n) // 6
    flops = _fma_flops(pairs, n * (n - 1) // 2 + n, fma)
    return (flops, n * (n + 1) // 2, n * n, {})


def calc_fft(func: FFT, in_data, **kwargs):
    r"""FFT

    $$y = \mathrm{FFT}(x_{re} + i\, x_{im})$$

    Complex transform along the last axis, of length $n$. Convention:
    $5 n \lceil \log_2 n \rceil$ FLOPs per transform (the radix-2
    Cooley-Tukey count), i.e. $5 \lceil \log_2 n \rceil$ per element;
    `ifft` adds the $1/n$ scaling of the real and imaginary parts
    ($2 \|x_{re}\|$). Packing the real and imaginary inputs is free.

    | Item | Value |
    |:-----|:------|
    | FLOPs (`fft`) | $5 \|x_{re}\| \lceil \log_2 n \rceil$ |
    | FLOPs (`ifft`) | $5 \|x_{re}\| \lceil \log_2 n \rceil + 2 \|x_{re}\|$ |
    | mread | $2 \|x_{re}\|$ |
    | mwrite | $2 \|x_{re}\|$ |
    | params | `method`: `'fft'` or `'ifft'` |
    """
    real, imag = in_data
    n = real.shape[-1]
    log2n = (n - 1).bit_length() if n > 1 else 0
    flops = 5 * real.size * log2n
    if func._method == 'ifft':
        flops += 2 * real.size
    return (flops, size_of(real) + size_of(imag), 2 * real.size,
            {'method': func._method})


# Gradients (the nodes Chainer applies during backward passes).  They follow
# the conventions of the forward calculators: each reads the upstream
# gradient g_y and what it needs of the forward's inputs and outputs (as
# inputs, or arrays the node keeps), writes each gradient once, and counts
# its arithmetic as written in Chainer, an elementary function 1 FLOP, a
# sign flip 1 FLOP, a multiply-add 1 FLOP with FMA.  Operations on scalar
# constants alone (c - 1, ln c, -c) happen once per call and are not
# counted.  A gradient with respect to a broadcast operand sums the
# broadcast axes away: |g_y| - |x| additions.

def _grad_row(formula, note, flops, fma=None, inputs=('x', 'g_y'),
              held=(), const=None):
    """A row of the family of element-wise gradients of one input.

    ``flops`` (``fma`` with fused multiply-adds, if it differs) are FLOPs
    per element of $g_x$; ``inputs`` names the node's inputs, ``held`` the
    ``(docstring name, attribute)`` of arrays the node keeps, ``const``
    the ``(docstring term, attribute)`` of a constant it reads once.
    """
    fma = flops if fma is None else fma
    terms = [doc_times(1, name) for name in inputs]
    terms += [doc_times(1, name) for name, _ in held]
    attrs = tuple(attr for _, attr in held)
    if const is not None:
        terms.append(const[0])
        attrs += (const[1],)
    return {'formula': formula, 'note': note, 'flops': flops, 'fma': fma,
            'attrs': attrs, 'flops_cells': doc_flops_cells(flops, fma, 'g_x'),
            'mread': '${}$'.format(' + '.join(terms))}


_UNARY_GRAD = {
    AbsoluteGrad: _grad_row(
        r'g_x = \mathrm{sign}(x)\, g_y',
        "Absolute's gradient: the sign of the input $x$ (kept by the node) "
        'and a multiplication per element.', 2, inputs=('g_y',),
        held=(('x', 'x'),)),
    ClipGrad: _grad_row(
        r'g_x = g_y \text{ if } x_{min} \le x \le x_{max} \text{ else } 0',
        "Clip's gradient: one select per element by the boolean mask $m$ "
        'the node keeps (read in its bool dtype). The mask is built when '
        "the node is created, repeating the forward's comparisons: not "
        'counted.', 1, inputs=('g_y',), held=(('m', 'cond'),)),
    DivFromConstantGrad: _grad_row(
        r'g_x = -c\, g_y / x^2',
        "DivFromConstant's gradient: per element $x^2$, the product with "
        '$-c$ and a division; the constant $c$ is read once (1 element '
        'for a scalar).', 3, const=(r'\|c\|', 'value')),
    PowVarConstGrad: _grad_row(
        r'g_x = c\, x^{c - 1} g_y',
        "PowVarConst's gradient: per element a power and two "
        'multiplications; the constant $c$ is read once (1 element for a '
        'scalar).', 3, const=(r'\|c\|', 'value')),
    PowConstVarGrad: _grad_row(
        r'g_x = \ln c \; y\, g_y',
        "PowConstVar's gradient, from the forward's output $y = c^x$: two "
        r'multiplications per element; $\ln c$ is read once.', 2,
        inputs=('y', 'g_y'), const=('1', 'log_value')),
    SinGrad: _grad_row(
        r'g_x = \cos(x)\, g_y',
        "Sin's gradient: a cosine and a multiplication per element.", 2),
    CosGrad: _grad_row(
        r'g_x = -\sin(x)\, g_y',
        "Cos's gradient: a sine, a sign flip and a multiplication per "
        'element.', 3),
    ArcsinGrad: _grad_row(
        r'g_x = g_y / \sqrt{1 - x^2}',
        "Arcsin's gradient: per element $1 - x \\cdot x$ (a multiply-add), "
        'a square root, a reciprocal and a multiplication.', 5, fma=4),
    ArccosGrad: _grad_row(
        r'g_x = -g_y / \sqrt{1 - x^2}',
        "Arccos's gradient: as Arcsin's, plus a sign flip.", 6, fma=5),
    ArctanGrad: _grad_row(
        r'g_x = g_y / (1 + x^2)',
        "Arctan's gradient: per element $1 + x \\cdot x$ (a multiply-add), "
        'a reciprocal and a multiplication.', 4, fma=3),
}
_UNARY_GRAD_ROWS = resolve_table(_UNARY_GRAD)


def calc_unary_grad(func: tuple(_UNARY_GRAD), in_data, **kwargs):
    r"""<<name>>

    $$<<formula>>$$

    <<note>> Every array is read once, in its own dtype; $g_x$ has the
    shape of $g_y$.

    | Item | Value |
    |:-----|:------|
    | FLOPs<<flops_cells>>
    | mread | <<mread>> |
    | mwrite | $\|g_x\|$ |
    | params | none |
    """
    row = lookup(_UNARY_GRAD_ROWS, type(func))
    k = row['fma'] if kwargs.get('fma_1flop', False) else row['flops']
    operands = list(in_data) + [getattr(func, a) for a in row['attrs']]
    return _elementwise(operands, k)


calc_unary_grad.family = _UNARY_GRAD


def _broadcast_grads_cost(k, operands, inputs):
    """``(flops, mread, mwrite)`` of gradients of broadcasting inputs:
    ``k`` FLOPs per element of the broadcast shape of all ``operands``
    (None ones absent), then each gradient summed down to the shape of its
    input (``inputs``, arrays or shapes; None for a gradient not made)."""
    present = [x for x in operands if x is not None]
    n_y = prod(broadcast_shape(*[_shape_of(x) for x in present]))
    outs = [prod(getattr(x, 'shape', x)) for x in inputs if x is not None]
    return (k * n_y + sum(max(n_y - n, 0) for n in outs), _reads(present),
            sum(outs))


def _binary_grad_row(formula, note, flops, fma=None, held=()):
    """A row of the family of gradients of two broadcasting inputs $a$,
    $b$: ``flops`` (``fma`` with fused multiply-adds, if it differs) per
    element of $y$; ``held`` names the arrays the node keeps (by attribute,
    each also the docstring name)."""
    fma = flops if fma is None else fma
    terms = [doc_times(1, name) for name in ('a', 'b', 'g_y') + held]
    return {'formula': formula, 'note': note, 'flops': flops, 'fma': fma,
            'held': held, 'mread': '${}$'.format(' + '.join(terms)),
            'flops_cells': doc_flops_cells(
                flops + 2, fma + 2, 'y', r' - \|a\| - \|b\|')}


_BINARY_GRAD = {
    DivGrad: _binary_grad_row(
        r'g_a = g_y / b, \quad g_b = -g_a\, a / b',
        "Div's gradient: a division for $g_a$, a sign flip, a "
        'multiplication and a division for $g_b$', 4),
    PowVarVarGrad: _binary_grad_row(
        r'g_a = b\, a^{b - 1} g_y, \quad g_b = \ln(a)\, y\, g_y',
        "PowVarVar's gradient, with the forward's output $y$ the node "
        'keeps: $b - 1$, a power and two multiplications for $g_a$, a '
        'logarithm and two multiplications for $g_b$', 7, held=('y',)),
    Arctan2Grad: _binary_grad_row(
        r's = a^2 + b^2, \quad g_a = b / s \; g_y, \quad '
        r'g_b = -a / s \; g_y',
        "Arctan2's gradient ($a$, $b$ are its $x_1$, $x_2$): "
        '$a \\cdot a + b \\cdot b$ (a multiplication and a multiply-add), '
        'a division and a multiplication for $g_a$, a sign flip, a '
        'division and a multiplication for $g_b$ (Chainer does not sum '
        'broadcast axes here: $a$ and $b$ have the shape of $y$, and the '
        'sums below add nothing)', 8,
        fma=7),
}
_BINARY_GRAD_ROWS = resolve_table(_BINARY_GRAD)


def calc_binary_grad(func: tuple(_BINARY_GRAD), in_data, **kwargs):
    r"""<<name>>

    $$<<formula>>$$

    <<note>>, per element of the broadcast shape $\|y\|$ of the inputs
    $a$, $b$ and $g_y$; then $g_a$ and $g_b$ are summed down to the shapes
    of $a$ and $b$ ($\|y\| - \|a\|$ and $\|y\| - \|b\|$ additions, none
    without broadcasting). Every array is read once, in its own dtype.

    | Item | Value |
    |:-----|:------|
    | FLOPs<<flops_cells>>
    | mread | <<mread>> |
    | mwrite | $\|a\| + \|b\|$ |
    | params | none |
    """
    row = lookup(_BINARY_GRAD_ROWS, type(func))
    k = row['fma'] if kwargs.get('fma_1flop', False) else row['flops']
    a, b, gy = in_data
    operands = [a, b, gy] + [getattr(func, attr) for attr in row['held']]
    return _broadcast_grads_cost(k, operands, (a, b)) + ({},)


calc_binary_grad.family = _BINARY_GRAD


_SELECT_GRAD = {
    MaximumGrad: {
        'formula': r'g_a = g_y \text{ if } a \ge b \text{ else } 0, \quad '
                   r'g_b = g_y - g_a',
        'note': "Maximum's gradient. The node keeps the boolean mask "
                '$m = [a \\ge b]$ (read in its bool dtype), built when the '
                "node is created by repeating the forward's comparisons "
                '(not counted), and the shapes of $a$ and $b$',
        'held': ('cond',), 'mread': r'$\|g_y\| + \|m\|$'},
    MinimumGrad: {
        'formula': r'g_a = g_y \text{ if } a \le b \text{ else } 0, \quad '
                   r'g_b = g_y - g_a',
        'note': "Minimum's gradient. The node keeps the inputs $a$ and $b$ "
                '(read in their dtypes) and compares them itself',
        'held': ('x1', 'x2'), 'mread': r'$\|g_y\| + \|a\| + \|b\|$'},
}
_SELECT_GRAD_ROWS = resolve_table(_SELECT_GRAD)


def _select_grad_shapes(func):
    """Shapes of the inputs of the Maximum or Minimum whose gradient
    ``func`` computes (MaximumGrad keeps them, MinimumGrad keeps the
    inputs)."""
    if hasattr(func, 'x1_shape'):
        return func.x1_shape, func.x2_shape
    return func.x1.shape, func.x2.shape


def calc_select_grad(func: tuple(_SELECT_GRAD), in_data, **kwargs):
    r"""<<name>>

    $$<<formula>>$$

    <<note>>. One comparison (or select by the mask) per element of $g_y$
    routes it to $g_a$ or $g_b$ (as in the activations, choosing a branch
    is part of the comparison that decides it); then $g_a$ and $g_b$ are
    summed down to the shapes of $a$ and $b$ ($\|g_y\| - \|a\|$ and
    $\|g_y\| - \|b\|$ additions, none without broadcasting).

    | Item | Value |
    |:-----|:------|
    | FLOPs | $3 \|g_y\| - \|a\| - \|b\|$ |
    | mread | <<mread>> |
    | mwrite | $\|a\| + \|b\|$ |
    | params | none |
    """
    row = lookup(_SELECT_GRAD_ROWS, type(func))
    gy, = in_data
    if gy is None:
        return (0, 0, 0, {})
    operands = [gy] + [getattr(func, attr) for attr in row['held']]
    flops, mread, mwrite = _broadcast_grads_cost(
        1, [gy], _select_grad_shapes(func))
    return (flops, _reads(operands), mwrite, {})


calc_select_grad.family = _SELECT_GRAD


def calc_batch_l2_norm_squared_grad(func: BatchL2NormSquaredGrad, in_data,
                                    **kwargs):
    r"""BatchL2NormSquaredGrad

    $$g_{x_{b,i}} = 2 x_{b,i}\, g_{y_b}$$

    BatchL2NormSquared's gradient: two multiplications per element of $x$
    (as written, $2 x$ then the product with the sample's $g_y$). $g_y$
    has one element per sample ($B$).

    | Item | Value |
    |:-----|:------|
    | FLOPs | $2 \|x\|$ |
    | mread | $\|x\| + B$ |
    | mwrite | $\|x\|$ |
    | params | none |
    """
    x, gy = in_data
    if x is None:
        return (0, 0, 0, {})
    return (2 * x.size, _reads([x, gy]), x.size, {})


def calc_linear_interpolate_grad(func: LinearInterpolateGrad, in_data,
                                 **kwargs):
    r"""LinearInterpolateGrad

    $$g_p = (x - y)\, g_z, \quad g_x = p\, g_z, \quad g_y = g_z - g_x$$

    LinearInterpolate's gradient, computed as written: a subtraction and a
    multiplication for $g_p$, a multiplication for $g_x$, a subtraction for
    $g_y$ per element (nothing to fuse: $g_x$ is an output itself). $p$,
    $x$, $y$ and $g_z$ have the same shape.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $4 \|z\|$ |
    | mread | $\|p\| + \|x\| + \|y\| + \|g_z\| = 4 \|z\|$ |
    | mwrite | $3 \|z\|$ |
    | params | none |
    """
    present = [a for a in in_data if a is not None]
    if not present:
        return (0, 0, 0, {})
    n = prod(broadcast_shape(*[_shape_of(a) for a in present]))
    return (4 * n, _reads(present), 3 * n, {})


def calc_batch_mat_mul_grad(func: BatchMatMulGrad, in_data, **kwargs):
    r"""BatchMatMulGrad

    $$g_{a_i} = g_{y_i} b_i^T, \quad g_{b_i} = a_i^T g_{y_i}$$

    BatchMatMul's gradients (transpositions as in the forward), with the
    forward's $B$ products of an $M \times K$ by a $K \times N$ matrix:
    each of the $\|a\| = BMK$ elements of $g_a$ is a dot product of length
    $N$, each of the $\|b\| = BKN$ elements of $g_b$ one of length $M$.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\|a\| N + \|b\| M$ |
    | FLOPs (no FMA) | $\|a\| (2N - 1) + \|b\| (2M - 1)$ |
    | FLOPs (torch) | $2 \|a\| N + 2 \|b\| M$ |
    | mread | $\|a\| + \|b\| + \|g_y\|$ |
    | mwrite | $\|a\| + \|b\|$ |
    | params | `transa`, `transb`: transpositions |
    """
    a, b, gy = in_data
    params = {'transa': bool(func.transa), 'transb': bool(func.transb)}
    if a is None or b is None or gy is None:
        return (0, _reads([x for x in in_data if x is not None]), 0, params)
    fma = product_convention(kwargs)
    nb, m, k, n = _batch_mkn(a.shape, b.shape, func.transa, func.transb)
    flops = dot_flops(a.size, n, fma) + dot_flops(b.size, m, fma)
    return (flops, _reads([a, b, gy]), a.size + b.size, params)


def calc_coo_mat_mul_grad_sp(func: CooMatMulGradSP, in_data, **kwargs):
    r"""CooMatMulGradSP

    $$g_{A,j} = \sum_k a_{r_j k}\, b_{k c_j}$$

    CooMatMul's gradient with respect to the $z$ stored values of the
    sparse matrix: for each stored entry $j$ (row $r_j$, column $c_j$, from
    the index arrays the node keeps), the dot product of a row of $a$ and a
    column of $b$ (after the transpositions), of length $K$. A
    straightforward implementation computes only these $z$ products, not
    the dense $a b$ (Chainer's CPU path does), and reads each of $a$ and
    $b$ once at most (counted in full: an upper bound). $z$ counts all
    stored entries, padding included, as for CooMatMul.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $z K$ |
    | FLOPs (no FMA) | $z (2K - 1)$ |
    | mread | $\|a\| + \|b\| + 2 z$ |
    | mwrite | $z$ |
    | params | `shape` of the sparse matrix, `transa`, `transb`, `transc` |
    """
    a, b = in_data
    params = {'shape': tuple(int(s) for s in func.sp_shape),
              'transa': bool(func.transa), 'transb': bool(func.transb),
              'transc': bool(func.transc)}
    if a is None or b is None:
        return (0, 0, 0, params)
    z = func.sp_row.size
    k = a.shape[-2] if func.transa else a.shape[-1]
    fma = kwargs.get('fma_1flop', False)
    mread = _reads([a, b, func.sp_row, func.sp_col])
    return (dot_flops(z, k, fma), mread, z, params)


# Scratch (see cost_calculators.scratch_of)

#: Bytes of one Python float object (``sys.getsizeof(1.0)``) as the
#: allocator is asked for it, and of the pointer an object array holds.
PY_FLOAT = 24
PY_POINTER = 8


def _nbytes(x):
    return x.size * x.dtype.itemsize


def _without_scipy(module, cached):
    """Whether Chainer's CPU forward of ``module`` (erf, erfc) runs
    ``numpy.vectorize`` of the ``math`` function: the choice it cached, or
    whether SciPy can be imported when it has not chosen yet."""
    chosen = getattr(module, cached, None)
    if chosen is not None:
        return isinstance(chosen, numpy.vectorize)
    return importlib.util.find_spec('scipy') is None


#: The module global in which Chainer caches its CPU function (SciPy's, or
#: ``numpy.vectorize`` without SciPy).
_CPU_CHOICE = {Erf: '_erf_cpu', Erfc: '_erfc_cpu', Ndtr: '_ndtr_cpu'}


def scratch_erf(func: (Erf, Erfc, Ndtr), in_data, **kwargs):
    r"""Python floats without SciPy; SciPy's float32 result for float16.

    NumPy without SciPy (Chainer warns): `numpy.vectorize` of the `math`
    function (`math.erf`, `math.erfc`; for Ndtr a Python function of
    `math.erfc`, whose intermediate floats are freed at once) makes
    an object array of the inputs and one of the results, each a pointer
    (8 bytes) and a Python float (24 bytes) per element, then their
    float64 array: $72 \|x\|$ bytes, less the output (the float64 array
    itself, or its cast to x's dtype made after the object arrays are
    freed): $(72 - s) \|x\|$ bytes for an itemsize $s$. With SciPy
    (`scipy.special.erf`, `erfc`, `ndtr`: loops for float32 and float64
    only): none,
    float16 x is computed in float32 and cast, $4 \|x\|$ bytes. Which
    path runs is what Chainer cached at its first call, or whether SciPy
    can be imported.

    CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x = in_data[0]
    module = importlib.import_module(type(func).__module__)
    cached = next(name for cls, name in _CPU_CHOICE.items()
                  if isinstance(func, cls))
    if _without_scipy(module, cached):
        return (3 * PY_POINTER + 2 * PY_FLOAT - x.dtype.itemsize) * x.size
    return 4 * x.size if x.dtype.itemsize < 4 else 0


class _Value(object):
    """An array of a NumPy expression (``shape`` None: a scalar): its
    bytes, and whether it is a temporary (NumPy may reuse it)."""

    def __init__(self, shape, itemsize, nbytes=0, temp=False):
        self.shape = None if shape is None else tuple(shape)
        self.itemsize = itemsize
        self.nbytes = nbytes
        self.temp = temp


def _given(x):
    """An input array (or a scalar) of the expression."""
    if getattr(x, 'shape', None) is None or (
            numpy.ndim(x) == 0 and not isinstance(x, numpy.ndarray)):
        return _Value(None, 0)
    return _Value(x.shape, x.dtype.itemsize)


class _Run(object):
    """The bytes alive along a NumPy code path: each operation allocates
    its result (freeing its temporary operands after), and ``peak`` is the
    most alive at once. A binary operator writes into a temporary operand
    instead (NumPy's temporary elision, :func:`elides`) when the temporary
    has the result's shape and dtype, takes 256 KiB or more and its partner
    is a scalar, a 0-d array or of the same shape (NumPy never elides
    beside a broadcast), the left operand or either of a commutative
    operation; ufunc calls and ``**`` are never elided.  The bytes are
    counted by a :class:`Peak`."""

    def __init__(self):
        self.bytes = Peak()

    @property
    def peak(self):
        """The most bytes alive at once along the path so far."""
        return self.bytes.peak

    def free(self, *values):
        for v in values:
            if v.temp:
                self.bytes.free(v.nbytes)
                v.temp = False

    def _reusable(self, t, other, shape, itemsize):
        return (t.temp and t.shape == shape and t.itemsize == itemsize
                and elides(t.nbytes)
                and (other.shape is None or other.shape in ((), shape)))

    def op(self, a, b, commutative=True, itemsize=None):
        """``a <op> b`` (a Python operator)."""
        shapes = [v.shape for v in (a, b) if v.shape is not None]
        shape = broadcast_shape(*shapes)
        itemsize = itemsize or max(a.itemsize, b.itemsize)
        for t, other in ((a, b), (b, a)) if commutative else ((a, b),):
            if self._reusable(t, other, shape, itemsize):
                self.free(other)
                return t
        return self.call(a, b, shape=shape, itemsize=itemsize)

    def neg(self, a):
        """``-a`` (a unary operator: elided on a large temporary)."""
        if a.temp and elides(a.nbytes):
            return a
        return self.call(a)

    def call(self, *args, **kwargs):
        """A ufunc call (or ``**``) on ``args``: always a new array, of
        ``shape`` and ``itemsize`` if given, else the broadcast of the
        arguments in the widest dtype."""
        shape = kwargs.get('shape')
        if shape is None:
            shape = broadcast_shape(
                *[v.shape for v in args if v.shape is not None])
        itemsize = kwargs.get('itemsize') or max(v.itemsize for v in args)
        nbytes = prod(shape) * itemsize
        self.bytes.alloc(nbytes)
        self.free(*args)
        return _Value(shape, itemsize, nbytes, True)

    def keep(self, v):
        """``v`` bound to a name: alive until :meth:`drop`."""
        v.temp = False
        return v

    def drop(self, *values):
        for v in values:
            self.bytes.free(v.nbytes)
            v.nbytes = 0

    def sum_to(self, v, shape):
        """``chainer.utils.sum_to(v, shape)``: ``v`` itself, or a new sum
        (``v`` stays alive, bound to a name)."""
        if v.shape == tuple(shape):
            return v
        return self.keep(self.call(v, shape=shape))


def scratch_div_grad(func: DivGrad, in_data, **kwargs):
    r"""$g_y / x_1$, then $-g_{x_0} x_0 / x_1$ with its temporaries.

    NumPy: `gx0 = gy / x1`, `gx1 = -gx0 * x0 / x1` (each step a new array
    unless NumPy writes into its temporary operand, see
    `_Run`), each summed to its input's shape where that input was
    broadcast: the peak along the path above the outputs.

    CuPy: one kernel writes both full-size gradients; a broadcast input's
    sum is made beside them: the full-size arrays that are not outputs.
    """
    x0, x1, gy = (_given(a) for a in in_data)
    if kwargs.get('backend', 'numpy') == 'cupy':
        return _cupy_summed(gy, in_data[0], in_data[1])
    run = _Run()
    gx0 = run.keep(run.op(gy, x1, False))
    gx1 = run.keep(run.op(run.op(run.neg(gx0), x0), x1, False))
    outs = [run.sum_to(gx0, x0.shape), run.sum_to(gx1, x1.shape)]
    return run.peak - sum(v.nbytes for v in outs)


def _cupy_summed(gy, *inputs):
    """Bytes of the full-size gradients a CuPy kernel writes that are then
    summed to a broadcast input's shape (freed after the sum)."""
    full = gy.shape
    return sum(prod(full) * gy.itemsize for x in inputs
               if tuple(x.shape) != tuple(full))


def _kernel_on_cupy(in_data, kwargs, path):
    """Scratch of a function that is one elementwise kernel on CuPy (none)
    and on NumPy the expression ``path(run, *inputs)`` giving its output:
    the peak above that output."""
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    run = _Run()
    out = path(run, *(_given(a) for a in in_data))
    return run.peak - out.nbytes


def scratch_div_from_constant_grad(func: DivFromConstantGrad, in_data,
                                   **kwargs):
    r"""$-c\,g_y$ and $x^2$ before their quotient.

    NumPy: `-value * gy / x ** 2`: two arrays of $\|x\|$ elements, the
    quotient a third below 256 KiB (else written into the first): $\|x\|$
    or $2 \|x\|$ elements above the output.

    CuPy: none (one elementwise kernel).
    """
    value = _given(getattr(func, 'value', None))
    return _kernel_on_cupy(in_data, kwargs, lambda run, x, gy: run.op(
        run.op(run.neg(value) if value.shape else value, gy), run.call(x),
        False))


def scratch_pow_var_const_grad(func: PowVarConstGrad, in_data, **kwargs):
    r"""$x^{c-1}$ and its products with c and gy.

    NumPy: `c * x ** (c - 1) * gy`: the power (a new array), then each
    product a new array below 256 KiB (else written into the power):
    $\|x\|$ elements or none above the output.

    CuPy: none (one elementwise kernel).
    """
    value = _given(getattr(func, 'value', None))
    return _kernel_on_cupy(in_data, kwargs, lambda run, x, gy: run.op(
        run.op(value, run.call(x, _given(func.val_1))), gy))


def scratch_pow_var_var_grad(func: PowVarVarGrad, in_data, **kwargs):
    r"""The two gradients' powers, logarithms and products.

    NumPy: `sum_to(x1 * x0 ** (x1 - 1) * gy, x0.shape)`, then
    `sum_to(log(x0) * y * gy, x1.shape)`: each step a new array unless
    NumPy writes into its temporary operand; the full-size gradients of a
    broadcast input freed after their sums.

    CuPy: one kernel writes both full-size gradients; a broadcast input's
    sum is made beside them.
    """
    x0, x1, gy = (_given(a) for a in in_data)
    if kwargs.get('backend', 'numpy') == 'cupy':
        return _cupy_summed(gy, in_data[0], in_data[1])
    run = _Run()
    y = _given(func.y)
    g0 = run.keep(run.op(run.op(x1, run.call(x0, run.op(
        x1, _Value(None, 0), False))), gy))
    s0 = run.sum_to(g0, x0.shape)
    g1 = run.keep(run.op(run.op(run.call(x0), y), gy))
    s1 = run.sum_to(g1, x1.shape)
    return run.peak - s0.nbytes - s1.nbytes


def scratch_maximum_grad(func: MaximumGrad, in_data, **kwargs):
    r"""The full-size gradient of a broadcast input, before its sum.

    NumPy: `where(cond, gy, 0)` and `where(cond, 0, gy)` ($\|g_y\|$
    elements each), each summed to its input's shape where that input was
    broadcast (the full-size one then freed).

    CuPy: the same (one kernel writes both).
    """
    gy = _given(in_data[0])
    run = _Run()
    full = [run.keep(run.call(gy)), run.keep(run.call(gy))]
    shapes = (func.x1_shape, func.x2_shape)
    outs = [run.sum_to(g, s) for g, s in zip(full, shapes)]
    return run.peak - sum(v.nbytes for v in outs)


def scratch_minimum_grad(func: MinimumGrad, in_data, **kwargs):
    r"""Each comparison's mask and the full-size gradient of a broadcast
    input.

    NumPy: `gy * (x1 <= x2)` and `gy * (x1 > x2)`: a boolean mask of the
    broadcast shape beside each product, each product summed to its
    input's shape where that input was broadcast.

    CuPy: kernels write the full-size gradients: those of a broadcast
    input, summed.
    """
    gy = _given(in_data[0])
    x1, x2 = _given(func.x1), _given(func.x2)
    if kwargs.get('backend', 'numpy') == 'cupy':
        return _cupy_summed(gy, func.x1, func.x2)
    run = _Run()
    g1 = run.keep(run.op(gy, run.call(x1, x2, itemsize=1)))
    g2 = run.keep(run.op(gy, run.call(x1, x2, itemsize=1)))
    outs = [run.sum_to(g1, x1.shape), run.sum_to(g2, x2.shape)]
    return run.peak - sum(v.nbytes for v in outs)


def scratch_arctan2_grad(func: Arctan2Grad, in_data, **kwargs):
    r"""x1² + x2² and the temporaries of both quotients.

    NumPy: `sqnorm = x1 ** 2 + x2 ** 2` (kept to the end), then `x2 /
    sqnorm * gy` and `-x1 / sqnorm * gy`, each step a new array unless
    NumPy writes into its temporary operand.

    CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x1, x2, gy = (_given(a) for a in in_data)
    run = _Run()
    sq = run.keep(run.op(run.call(x1), run.call(x2)))
    g1 = run.keep(run.op(run.op(x2, sq, False), gy))
    g2 = run.keep(run.op(run.op(run.neg(x1), sq, False), gy))
    return run.peak - g1.nbytes - g2.nbytes


def scratch_batch_l2_norm_squared(func: BatchL2NormSquared, in_data,
                                  **kwargs):
    r"""x squared before its row sums (and a copy of a strided x).

    NumPy: `x.reshape(len(x), -1)` (a copy unless the axes merge), `x *
    x`, $\|x\|$ elements, summed per row.

    CuPy: none (one reduction kernel; a strided x is copied by the
    reshape).
    """
    x = in_data[0]
    shape = (len(x), prod(x.shape[1:]))
    copy = 0 if reshape_view(x.shape, strides_of(x), shape) is not None \
        else _nbytes(x)
    if kwargs.get('backend', 'numpy') == 'cupy':
        return copy
    return copy + _nbytes(x)


def scratch_batch_l2_norm_squared_grad(func: BatchL2NormSquaredGrad,
                                       in_data, **kwargs):
    r"""2 x before its product with the broadcast gy.

    NumPy: `2 * x * gy0`: $\|x\|$ elements beside the output (the product
    with a broadcast gy is never elided).

    CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    return _nbytes(in_data[0])


def scratch_log_sum_exp(func: LogSumExp, in_data, **kwargs):
    r"""x - max, exponentiated in place, and three row arrays.

    NumPy (and CuPy): the maxima ($R$ elements, $R = \|y\|$), `x - m`
    ($\|x\|$), its sums, their log and the log plus the maxima (the sum
    written into the log from 256 KiB on): $\|x\| + 3R$ (or $2R$)
    elements above the output.
    """
    x = in_data[0]
    s = x.dtype.itemsize
    rows = prod(reduced_shape(x.shape, func.axis)) * s
    if kwargs.get('backend', 'numpy') == 'cupy':
        return _nbytes(x) + 3 * rows
    return _nbytes(x) + (2 if elides(rows) else 3) * rows


def scratch_arg_max(func: (ArgMax, ArgMin), in_data, **kwargs):
    r"""The transposed copy NumPy reduces and its int64 indexes.

    NumPy: `argmax(x, axis)` moves `axis` last and copies x unless that is
    C-contiguous (always for a strided x), then writes int64 indexes ($R$
    of them, $R = \|y\|$), cast to the int32 output: the copy and the
    indexes, or the indexes and the output, above the output.

    CuPy: the int64 indexes beside the output.
    """
    x = in_data[0]
    rows = prod(reduced_shape(x.shape, func.axis)) if func.axis is not None \
        else 1
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 8 * rows
    copy = argmax_copy(x, func.axis)
    return max(copy + 8 * rows, 12 * rows) - 4 * rows


def scratch_linear_interpolate(func: LinearInterpolate, in_data, **kwargs):
    r"""p x and (1 - p) y before their sum.

    NumPy: `p * x + (1 - p) * y`: `p * x`, `1 - p` and its product with y
    (written into `1 - p` from 256 KiB on, as the sum into `p * x`).

    CuPy: none (one elementwise kernel).
    """
    return _kernel_on_cupy(in_data, kwargs, lambda run, p, x, y: run.op(
        run.op(p, x), run.op(run.op(_Value(None, 0), p, False), y)))


def scratch_cumprodsum(func: Cumprodsum, in_data, **kwargs):
    r"""The running value, one slice across the axis.

    NumPy and CuPy: `cum` has the shape of `xadd` without `axis`,
    updated in place slice by slice into the output.
    """
    xadd = in_data[1]
    axis = func.axis % xadd.ndim
    return (xadd.size // max(xadd.shape[axis], 1)) * xadd.dtype.itemsize


def scratch_fft(func: FFT, in_data, **kwargs):
    r"""The complex input and NumPy's complex128 transform.

    NumPy: `real + imag * 1j` (complex64 for real inputs up to float32,
    complex128 for float64; the sum a second complex array below 256 KiB),
    then `numpy.fft` copies it into a complex128 array that it transforms
    in place; the real and imaginary parts are cast to the outputs (views
    of the transform for float64, which then stays alive as their base).

    CuPy: the complex input and cuFFT's result in its precision, whose
    parts are the outputs (cuFFT's work area, chosen by cuFFT, is not
    counted).
    """
    real = in_data[0]
    n, s = real.size, real.dtype.itemsize
    cx = n * (16 if s == 8 else 8)
    if kwargs.get('backend', 'numpy') == 'cupy':
        return cx
    first = cx if elides(cx) else 2 * cx
    if s == 8:
        return max(first, cx + 16 * n) - 16 * n
    return max(first, cx + 16 * n + 2 * s * n) - 2 * s * n


def _lapack(x, outputs):
    """Bytes ``numpy.linalg``'s gufunc on the matrices ``x`` adds above its
    result of ``outputs`` elements: float32 is computed in float64 (a
    float64 copy of x beside the float64 result, then that result cast
    back); float64 needs neither.  LAPACK's own copy of the one matrix it
    works on is not counted (see :func:`scratch_inv`)."""
    s = x.dtype.itemsize
    if s == 8:
        return 0
    return max(8 * x.size + 8 * outputs, (8 + s) * outputs) - s * outputs


def _cublas_batched(x, with_output):
    """Bytes Chainer's cuBLAS batched LU path allocates beside its output:
    the copy of the matrices factorized in place, the pivots (int32), the
    status per matrix and the arrays of matrix pointers (int64)."""
    shape = x.shape if x.ndim == 3 else (1,) + tuple(x.shape)
    batch, n = shape[0], shape[1]
    return (x.size * x.dtype.itemsize + 4 * n * batch + 4 * batch
            + 8 * batch * (2 if with_output else 1))


def scratch_inv(func: (Inv, BatchInv), in_data, **kwargs):
    r"""numpy.linalg's float64 copy and result of float32 matrices.

    NumPy: `numpy.linalg.inv` computes float32 in float64: a float64 copy
    of x and the float64 inverse ($8 \|x\|$ bytes each), then the cast to
    the output: $(16 - s) \|x\|$ bytes above it for an itemsize $s < 8$;
    none for float64. Convention: the figure counts the arrays NumPy
    allocates, not the work copy of the one matrix LAPACK's `gesv` is
    solving (two n x n float64 buffers and n pivots, which NumPy's linalg
    module takes with `malloc`, outside its array allocator): that is
    LAPACK's own memory, as BLAS's packing buffers are, and a
    straightforward inverse needs no more than its output beside x.

    CuPy: Chainer's `_inv_gpu`: a copy of x factorized in place, the
    pivots and status (int32) and two arrays of matrix pointers (int64).
    """
    x = in_data[0]
    if kwargs.get('backend', 'numpy') == 'cupy':
        return _cublas_batched(x, True)
    return _lapack(x, x.size)


def scratch_batch_det(func: BatchDet, in_data, **kwargs):
    r"""numpy.linalg's float64 copy of float32 matrices.

    NumPy: `numpy.linalg.det` computes float32 in float64: a float64 copy
    of x ($8 \|x\|$ bytes) beside the float64 determinants, then their
    cast to the output; none for float64. As for Inv, LAPACK's `getrf`
    work copy of the one matrix it factorizes (an n x n float64 buffer
    and n pivots, taken with `malloc` by NumPy's linalg module) is not
    counted.

    CuPy: `cupy.linalg.det`'s LU factorization of a copy of x, the pivots
    and status per matrix.
    """
    x = in_data[0]
    if kwargs.get('backend', 'numpy') == 'cupy':
        return _cublas_batched(x, False)
    return _lapack(x, len(x))


def scratch_cholesky(func: 'chainer.functions.math.cholesky.Cholesky',
                     in_data, **kwargs):
    r"""numpy.linalg's float64 copy and factor of a float32 matrix.

    NumPy: `numpy.linalg.cholesky` computes float32 in float64, as
    `numpy.linalg.inv` does (see Inv): a float64 copy of x and the float64
    factor, then its cast to the output: $(16 - s) \|x\|$ bytes above it
    for an itemsize $s < 8$, none for float64 (LAPACK's `potrf` work copy
    of the matrix not counted, as for Inv).

    CuPy: `cupy.linalg.cholesky` factorizes a copy of x that becomes the
    output; cuSOLVER's workspace, which the library sizes when the call
    runs, is not counted: 0.
    """
    x = in_data[0]
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    return _lapack(x, x.size)


def scratch_absolute_grad(func: AbsoluteGrad, in_data, **kwargs):
    r"""sign(x) before its product with gy.

    NumPy: `sign(x) * gy`: $\|x\|$ elements above the output below 256
    KiB (from there the product is written into `sign(x)`).

    CuPy: none (one elementwise kernel).
    """
    x = _given(func.x)
    return _kernel_on_cupy(in_data, kwargs,
                           lambda run, gy: run.op(run.call(x), gy))


def scratch_pow_const_var_grad(func: PowConstVarGrad, in_data, **kwargs):
    r"""log(c) y before its product with gy.

    NumPy: `log(c) * y * gy`: $\|y\|$ elements above the output below 256
    KiB (from there the product is written into `log(c) * y`).

    CuPy: none (one elementwise kernel).
    """
    return _kernel_on_cupy(in_data, kwargs, lambda run, y, gy: run.op(
        run.op(_Value(None, 0), y), gy))


def scratch_mean(func: Mean, in_data, **kwargs):
    r"""NumPy's float32 sums of a float16 mean.

    NumPy: `x.mean(axis)` of float16 sums and divides in float32 ($4R$
    bytes for $R$ outputs) and casts to float16; none for other dtypes
    (the reduction writes the output).

    CuPy: none (a reduction kernel accumulates in float32).
    """
    x = in_data[0]
    if kwargs.get('backend', 'numpy') == 'cupy' or x.dtype != numpy.float16:
        return 0
    axis = func.axis
    rows = 1 if axis is None else prod(reduced_shape(x.shape, axis,
                                                     func.keepdims))
    return 4 * rows
