"""Cost calculators for ``chainer.functions.activation``.

Conventions shared by this module:

* an elementary function (exp, expm1, log1p, tanh) on one element is 1 FLOP;
  a comparison (max, min, select) is 1 FLOP; the sigmoid is 4 FLOPs
  (negate, exp, add, divide);
* scalar constants, the rule of every calculator module: a scalar held by
  the node (a hyper-parameter such as a slope, a cap, alpha or beta) that
  is an operand of the per-element computation is read once and counts 1
  element of mread; a scalar consumed only by per-channel, per-row or
  per-group precomputation is folded into it and not counted (no
  activation has one); numeric literals written in the formula (0, 0.2,
  0.5, 1) are not reads. RReLU's bounds only serve to draw its slopes
  (see below) and are not counted either;
* a random array drawn by the function itself (RReLU's slopes) is treated
  as a given constant array: it is read once and its generation is free;
* branchy formulas are counted as if every branch were evaluated on every
  element (a data-independent figure).
"""

from chainer.functions.activation.clipped_relu import ClippedReLU
from chainer.functions.activation.crelu import CReLU
from chainer.functions.activation.elu import ELU
from chainer.functions.activation.hard_sigmoid import HardSigmoid
from chainer.functions.activation.leaky_relu import LeakyReLU
from chainer.functions.activation.log_softmax import LogSoftmax
from chainer.functions.activation.prelu import PReLUFunction
from chainer.functions.activation.relu import ReLU
from chainer.functions.activation.rrelu import RReLU
from chainer.functions.activation.sigmoid import Sigmoid
from chainer.functions.activation.softmax import Softmax
from chainer.functions.activation.softplus import Softplus
from chainer.functions.activation.swish import Swish
from chainer.functions.activation.tanh import Tanh


#: FLOPs of one logistic sigmoid evaluation: negate, exp, add, divide.
_SIGMOID_FLOPS = 4


def _elementwise(x, flops_per_element, extra_reads=0):
    """Cost of a unary element-wise map ``y = f(x)`` with ``y`` shaped as x.

    ``extra_reads`` counts the other elements read once (scalar constants,
    parameter arrays broadcast over x).
    """
    n = x.size
    return (flops_per_element * n, n + extra_reads, n, {})


def _softmax_like(x, axis, flops_per_element, flops_per_row):
    """Cost of a softmax-style map along ``axis`` (output shaped as x).

    Each row of ``c = x.shape[axis]`` elements costs ``c - 1`` additions for
    its sum, ``flops_per_row`` more FLOPs, and ``flops_per_element`` FLOPs
    for each of its elements.
    """
    n = x.size
    c = x.shape[axis]
    rows = n // c if c else 0
    flops = flops_per_element * n + (c - 1 + flops_per_row) * rows
    return (flops, n, n, {'axis': int(axis)})


def calc_relu(func: ReLU, in_data, **kwargs):
    r"""ReLU

    $$y = \max(0, x)$$

    One comparison per element.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|x\|$ |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | none |
    """
    x, = in_data
    return (x.size, x.size, x.size, {})


def calc_clipped_relu(func: ClippedReLU, in_data, **kwargs):
    r"""ClippedReLU

    $$y = \min(\max(0, x), z)$$

    Two comparisons per element; the cap $z$ is a scalar constant read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $2 \|x\|$ |
    | mread | $\|x\| + 1$ |
    | mwrite | $\|x\|$ |
    | params | `z`: cap |
    """
    x, = in_data
    flops, mread, mwrite, _ = _elementwise(x, 2, extra_reads=1)
    return (flops, mread, mwrite, {'z': float(func.cap)})


def calc_crelu(func: CReLU, in_data, **kwargs):
    r"""CReLU

    $$y = \mathrm{concat}(\max(0, x), \max(0, -x))$$

    Per element of x: a comparison for the first half, a negation and a
    comparison for the second half. The output is twice as long as x along
    `axis`.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $3 \|x\|$ |
    | mread | $\|x\|$ |
    | mwrite | $2 \|x\|$ |
    | params | `axis`: concatenation axis |
    """
    x, = in_data
    return (3 * x.size, x.size, 2 * x.size, {'axis': int(func.axis)})


def calc_elu(func: ELU, in_data, **kwargs):
    r"""ELU

    $$y = x \text{ if } x > 0 \text{ else } \alpha (\exp(x) - 1)$$

    Per element: a comparison, an `expm1` (1 elementary function) and a
    multiplication by $\alpha$, both branches counted on every element;
    $\alpha$ is a scalar constant read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $3 \|x\|$ |
    | mread | $\|x\| + 1$ |
    | mwrite | $\|x\|$ |
    | params | `alpha` |
    """
    x, = in_data
    flops, mread, mwrite, _ = _elementwise(x, 3, extra_reads=1)
    return (flops, mread, mwrite, {'alpha': float(func.alpha)})


def calc_hard_sigmoid(func: HardSigmoid, in_data, **kwargs):
    r"""HardSigmoid

    $$y = \min(1, \max(0, 0.2 x + 0.5))$$

    Per element: a fusable multiply-add (1 FLOP with FMA, 2 without) and two
    comparisons. The literals 0.2, 0.5, 0, 1 are not counted as reads.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $3 \|x\|$ |
    | FLOPs (no FMA) | $4 \|x\|$ |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | none |
    """
    x, = in_data
    fma = 1 if kwargs.get('fma_1flop', False) else 2
    return _elementwise(x, fma + 2)


def calc_leaky_relu(func: LeakyReLU, in_data, **kwargs):
    r"""LeakyReLU

    $$y = x \text{ if } x > 0 \text{ else } a x$$

    Per element: a comparison and a multiplication by the slope $a$, a
    scalar constant read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $2 \|x\|$ |
    | mread | $\|x\| + 1$ |
    | mwrite | $\|x\|$ |
    | params | none (as in 0.1.2) |
    """
    x, = in_data
    return _elementwise(x, 2, extra_reads=1)


def calc_log_softmax(func: LogSoftmax, in_data, **kwargs):
    r"""LogSoftmax

    $$y_i = x_i - \log \sum_j \exp(x_j)$$

    With $c$ = `x.shape[axis]` and $\|x\|/c$ rows: an exp per element, $c-1$
    additions and a log per row, a subtraction per element, i.e.
    $2\|x\| + (c-1)\|x\|/c + \|x\|/c = 3\|x\|$. The first three terms are
    LogSumExp's $2\|x\|$ (same convention), so LogSoftmax is LogSumExp plus
    one subtraction per element and never costs less. As for Softmax, the
    max-subtraction done for numerical stability is not counted.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $3 \|x\|$ |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `axis` |
    """
    x, = in_data
    return _softmax_like(x, func.axis, 2, 1)


def calc_prelu(func: PReLUFunction, in_data, **kwargs):
    r"""PReLUFunction

    $$y = x \text{ if } x \ge 0 \text{ else } W x$$

    Per element: a comparison and a multiplication; W (broadcast over the
    batch and trailing axes) is read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $2 \|x\|$ |
    | mread | $\|x\| + \|W\|$ |
    | mwrite | $\|x\|$ |
    | params | `w_shape`: shape of W (a tuple) |
    """
    x, W = in_data
    flops, mread, mwrite, _ = _elementwise(x, 2, extra_reads=W.size)
    return (flops, mread, mwrite, {'w_shape': tuple(int(d) for d in W.shape)})


def calc_rrelu(func: RReLU, in_data, **kwargs):
    r"""RReLU

    $$y = x \text{ if } x \ge 0 \text{ else } r x$$

    Per element: a comparison and a multiplication. The slope array $r$
    (same shape as x, drawn from $U(l, u)$ in training, filled with
    $(l+u)/2$ otherwise) is treated as a constant array read once; drawing
    or filling it is not counted.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $2 \|x\|$ |
    | mread | $2 \|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `l`, `u`: bounds of the slope distribution |
    """
    x, = in_data
    flops, mread, mwrite, _ = _elementwise(x, 2, extra_reads=x.size)
    return (flops, mread, mwrite,
            {'l': float(func.lower), 'u': float(func.upper)})


def calc_sigmoid(func: Sigmoid, in_data, **kwargs):
    r"""Sigmoid

    $$y = 1 / (1 + \exp(-x))$$

    Four FLOPs per element: negate, exp, add, divide.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $4 \|x\|$ |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | none |
    """
    x, = in_data
    return _elementwise(x, _SIGMOID_FLOPS)


def calc_softmax(func: Softmax, in_data, **kwargs):
    r"""Softmax

    $$y_i = \exp(x_i) / \sum_j \exp(x_j)$$

    With $c$ = `x.shape[axis]`: an exp per element, $c-1$ additions per row
    ($\|x\|/c$ rows) and a division per element. The max-subtraction done
    for numerical stability is not counted.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $2 \|x\| + (c-1) \|x\| / c$ |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `axis` |
    """
    x, = in_data
    return _softmax_like(x, func.axis, 2, 0)


def calc_softplus(func: Softplus, in_data, **kwargs):
    r"""Softplus

    $$y = \log(1 + \exp(\beta x)) / \beta$$

    Per element: a multiplication, an exp, a `log1p` and a division (4
    FLOPs); $\beta$ is a scalar constant read once. The extra operations of
    Chainer's overflow-safe formulation are not counted.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $4 \|x\|$ |
    | mread | $\|x\| + 1$ |
    | mwrite | $\|x\|$ |
    | params | `beta` |
    """
    x, = in_data
    flops, mread, mwrite, _ = _elementwise(x, 4, extra_reads=1)
    return (flops, mread, mwrite, {'beta': float(func.beta)})


def calc_swish(func: Swish, in_data, **kwargs):
    r"""Swish

    $$y = x \cdot \mathrm{sigmoid}(\beta x)$$

    Per element: $\beta x$ (1), the sigmoid (4: negate, exp, add, divide)
    and the final product (1). $\beta$ (broadcast over the batch and
    trailing axes) is read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $6 \|x\|$ |
    | mread | $\|x\| + \|\beta\|$ |
    | mwrite | $\|x\|$ |
    | params | none |
    """
    x, beta = in_data
    return _elementwise(x, _SIGMOID_FLOPS + 2, extra_reads=beta.size)


def calc_tanh(func: Tanh, in_data, **kwargs):
    r"""Tanh

    $$y = \tanh(x)$$

    One elementary function evaluation per element.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|x\|$ |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | none |
    """
    x, = in_data
    return _elementwise(x, 1)
