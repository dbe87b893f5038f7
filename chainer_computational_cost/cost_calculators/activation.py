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
  element (a data-independent figure); choosing a branch is part of the
  comparison that decides it;
* every input element is read once, in its own dtype; an array the node
  keeps (a saved output, a condition array, RReLU's slopes) has the shape
  and dtype of the first input and is read once, unless it is that input
  itself;
* gradient nodes (the ``*Grad*`` classes Chainer applies during backward)
  follow the same rules: they read the upstream gradient $g_y$ and what
  they need of the forward's inputs and outputs, and write each gradient
  they produce once. A cuDNN variant is counted as the generic node
  (what a straightforward implementation does), not as cuDNN's kernel.
"""

import chainer
from chainer.functions.activation.clipped_relu import ClippedReLU
from chainer.functions.activation.clipped_relu import ClippedReLUGrad2
from chainer.functions.activation.clipped_relu import ClippedReLUGrad3
from chainer.functions.activation.crelu import CReLU
from chainer.functions.activation.elu import ELU
from chainer.functions.activation.elu import ELUGrad
from chainer.functions.activation.hard_sigmoid import HardSigmoid
from chainer.functions.activation.hard_sigmoid import HardSigmoidGrad
from chainer.functions.activation.leaky_relu import _LeakyReLUGrad
from chainer.functions.activation.leaky_relu import LeakyReLU
from chainer.functions.activation.log_softmax import LogSoftmax
from chainer.functions.activation.log_softmax import LogSoftmaxGrad
from chainer.functions.activation.prelu import PReLUFunction
from chainer.functions.activation.prelu import PReLUFunctionGrad
from chainer.functions.activation.relu import ReLU
from chainer.functions.activation.relu import ReLUGrad2
from chainer.functions.activation.relu import ReLUGradCudnn
from chainer.functions.activation.rrelu import _RReLUGrad
from chainer.functions.activation.rrelu import RReLU
from chainer.functions.activation.sigmoid import Sigmoid
from chainer.functions.activation.sigmoid import SigmoidGrad
from chainer.functions.activation.softmax import _SoftmaxGrad
from chainer.functions.activation.softmax import Softmax
from chainer.functions.activation.softplus import Softplus
from chainer.functions.activation.softplus import SoftplusGrad
from chainer.functions.activation.swish import Swish
from chainer.functions.activation.swish import SwishGrad
from chainer.functions.activation.tanh import Tanh
from chainer.functions.activation.tanh import TanhGrad

from chainer_computational_cost.cost_calculators import doc_flops_cells
from chainer_computational_cost.cost_calculators import doc_times
from chainer_computational_cost.cost_calculators import elements
from chainer_computational_cost.cost_calculators import elides
from chainer_computational_cost.cost_calculators import lookup
from chainer_computational_cost.cost_calculators import resolve_table
from chainer_computational_cost.cost_calculators import total_size
from chainer_computational_cost.cost_calculators import uses_cudnn

#: The family of calls whose time one fit of a calibration predicts
#: (``analysis.calibration.FAMILIES``): this module's.
TIME_FAMILY = 'activation'


#: FLOPs of one logistic sigmoid evaluation: negate, exp, add, divide.
_SIGMOID_FLOPS = 4


# Element-wise activations (and their gradients): y = f(x, ...) with y
# shaped as the first input, a fixed number of FLOPs per element, every
# input read once, arrays the node keeps read once each (shaped as the
# first input), scalar constants read once.

def _elementwise_row(formula, text, flops, fma=None, inputs=('x',),
                     saved=(), consts=0, params=None, params_doc='none',
                     mread_doc=None):
    """A row of the element-wise family.

    ``flops`` (and ``fma``, the count with fused multiply-adds when it
    differs) are FLOPs per element of the first input; ``inputs`` names the
    inputs in the docstring; ``saved`` lists ``(docstring name, attribute)``
    of the arrays the node keeps; ``consts`` counts the scalar constants;
    ``params`` builds the params dict from ``(func, in_data)`` (None: no
    params).  ``cost`` is what the calculator reads; the rest fills the
    docstring.
    """
    main = inputs[0]
    terms = [doc_times(1, a) for a in inputs]
    terms += [doc_times(1, name) for name, _ in saved]
    if consts:
        terms.append(str(consts))
    return {
        'formula': formula, 'text': text, 'params': params_doc,
        'flops_cells': doc_flops_cells(flops, fma, main),
        'mread': mread_doc or '${}$'.format(' + '.join(terms)),
        'mwrite': '${}$'.format(doc_times(1, main)),
        'cost': (flops, fma, tuple(attr for _, attr in saved), consts,
                 params),
    }


_ELEMENTWISE = {
    ReLU: _elementwise_row(
        r'y = \max(0, x)', 'One comparison per element.', 1),
    ReLUGrad2: _elementwise_row(
        r'g_x = g_y \text{ if } y > 0 \text{ else } 0',
        "ReLU's gradient. One comparison per element of the kept output y "
        "with 0, which selects $g_y$ or 0 (as the comparison of ReLU's "
        'max). y (shape of $g_y$) is read once.', 1, inputs=('g_y',),
        saved=(('y', 'b'),)),
    ReLUGradCudnn: _elementwise_row(
        r'g_x = g_y \text{ if } y > 0 \text{ else } 0',
        "ReLU's gradient when ReLU ran with cuDNN (GPU only), counted as "
        'ReLUGrad2: one comparison per element of the kept output y, read '
        'once. The input x that Chainer 6 also hands cuDNN is not needed '
        'and not counted.', 1, inputs=('g_y',), saved=(('y', 'y'),)),
    ClippedReLU: _elementwise_row(
        r'y = \min(\max(0, x), z)',
        'Two comparisons per element; the cap $z$ is a scalar constant read '
        'once.', 2, consts=1,
        params=lambda func, in_data: {'z': float(func.cap)},
        params_doc='`z`: cap'),
    ClippedReLUGrad2: _elementwise_row(
        r'g_x = g_y \text{ if } 0 < x < z \text{ else } 0',
        "ClippedReLU's gradient. Two comparisons per element of the kept "
        'input x (read once); the cap $z$ is a scalar constant read once.',
        2, inputs=('g_y',), saved=(('x', 'x'),), consts=1,
        params=lambda func, in_data: {'z': float(func.cap)},
        params_doc='`z`: cap'),
    ClippedReLUGrad3: _elementwise_row(
        r'g_x = g_y \text{ if } 0 < x < z \text{ else } 0',
        "ClippedReLU's gradient when ClippedReLU ran with cuDNN, counted as "
        'ClippedReLUGrad2: two comparisons per element of the kept input x '
        '(read once), the cap $z$ a scalar constant read once. The kept '
        'output y it also holds for cuDNN is not needed and not counted.',
        2, inputs=('g_y',), saved=(('x', 'x'),), consts=1,
        params=lambda func, in_data: {'z': float(func.cap)},
        params_doc='`z`: cap'),
    ELU: _elementwise_row(
        r'y = x \text{ if } x > 0 \text{ else } \alpha (\exp(x) - 1)',
        'Per element: a comparison, an `expm1` (1 elementary function) and '
        r'a multiplication by $\alpha$, both branches counted on every '
        r'element; $\alpha$ is a scalar constant read once.', 3, consts=1,
        params=lambda func, in_data: {'alpha': float(func.alpha)},
        params_doc='`alpha`'),
    ELUGrad: _elementwise_row(
        r'g = 1 \text{ if } c > 0 \text{ else } y + \alpha',
        "The derivative of ELU from its kept output y; Chainer multiplies it "
        'by $g_y$ in a separate Mul node. Per element: a comparison and an '
        r'addition. The condition array c is y itself when $\alpha \ge 0$ '
        r'(read once, with y), the input x otherwise; $\alpha$ is a scalar '
        'constant read once.', 2, inputs=('y',), saved=(('c', 'cond'),),
        consts=1, params=lambda func, in_data: {'alpha': float(func.alpha)},
        params_doc='`alpha`',
        mread_doc=r'$\|y\| + \|c\| + 1$ ($\|y\| + 1$ when c is y)'),
    HardSigmoid: _elementwise_row(
        r'y = \min(1, \max(0, 0.2 x + 0.5))',
        'Per element: a fusable multiply-add (1 FLOP with FMA, 2 without) '
        'and two comparisons. The literals 0.2, 0.5, 0, 1 are not counted '
        'as reads.', 4, fma=3),
    HardSigmoidGrad: _elementwise_row(
        r'g_x = 0.2 g_y \text{ if } -2.5 < x < 2.5 \text{ else } 0',
        "HardSigmoid's gradient. Per element: two comparisons of the kept "
        'input x (read once) and a multiplication. The literals are not '
        'reads.', 3, inputs=('g_y',), saved=(('x', 'x'),)),
    LeakyReLU: _elementwise_row(
        r'y = x \text{ if } x > 0 \text{ else } a x',
        'Per element: a comparison and a multiplication by the slope $a$, a '
        'scalar constant read once. The slope is not in params: 0.1.2 '
        'reported none.', 2, consts=1, params_doc='none (as in 0.1.2)'),
    _LeakyReLUGrad: _elementwise_row(
        r'g_x = g_y \text{ if } c > 0 \text{ else } a g_y',
        "LeakyReLU's gradient. Per element: a comparison and a "
        'multiplication by the slope $a$, a scalar constant read once. The '
        r'condition array c (the kept output when $a \ge 0$, else the kept '
        'input) is read once.', 2, inputs=('g_y',), saved=(('c', 'cond'),),
        consts=1, params=lambda func, in_data: {'slope': float(func.slope)},
        params_doc='`slope`'),
    PReLUFunction: _elementwise_row(
        r'y = x \text{ if } x \ge 0 \text{ else } W x',
        'Per element: a comparison and a multiplication; W (broadcast over '
        'the batch and trailing axes) is read once.', 2, inputs=('x', 'W'),
        params=lambda func, in_data: {
            'w_shape': tuple(int(d) for d in in_data[1].shape)},
        params_doc='`w_shape`: shape of W (a tuple)'),
    RReLU: _elementwise_row(
        r'y = x \text{ if } x \ge 0 \text{ else } r x',
        'Per element: a comparison and a multiplication. The slope array $r$ '
        '(same shape as x, drawn from $U(l, u)$ in training, filled with '
        '$(l+u)/2$ otherwise) is treated as a constant array read once; '
        'drawing or filling it is not counted.', 2, saved=(('r', 'r'),),
        params=lambda func, in_data: {'l': float(func.lower),
                                      'u': float(func.upper)},
        params_doc='`l`, `u`: bounds of the slope distribution'),
    _RReLUGrad: _elementwise_row(
        r'g_x = g_y \text{ if } y \ge 0 \text{ else } r g_y',
        "RReLU's gradient. Per element: a comparison of the kept output y "
        'and a multiplication by the slope array r (the one the forward '
        'used); y and r are read once.', 2, inputs=('g_y',),
        saved=(('y', 'y'), ('r', 'r'))),
    Sigmoid: _elementwise_row(
        r'y = 1 / (1 + \exp(-x))',
        'Four FLOPs per element: negate, exp, add, divide.', _SIGMOID_FLOPS),
    SigmoidGrad: _elementwise_row(
        r'g_x = g_y \, y (1 - y)',
        "Sigmoid's gradient from its output y: a subtraction and two "
        'multiplications per element.', 3, inputs=('y', 'g_y')),
    Softplus: _elementwise_row(
        r'y = \log(1 + \exp(\beta x)) / \beta',
        'Per element: a multiplication, an exp, a `log1p` and a division (4 '
        r'FLOPs); $\beta$ is a scalar constant read once. The extra '
        "operations of Chainer's overflow-safe formulation are not counted.",
        4, consts=1,
        params=lambda func, in_data: {'beta': float(func.beta)},
        params_doc='`beta`'),
    SoftplusGrad: _elementwise_row(
        r'g_x = g_y (1 - 1 / (1 + \exp(\beta x)))',
        "Softplus' gradient. Per element: a multiplication, an exp, an "
        'addition, a division, a subtraction and the product with $g_y$ (6 '
        r'FLOPs); $\beta$ is a scalar constant read once.', 6,
        inputs=('x', 'g_y'), consts=1,
        params=lambda func, in_data: {'beta': float(func.beta)},
        params_doc='`beta`'),
    Swish: _elementwise_row(
        r'y = x \cdot \mathrm{sigmoid}(\beta x)',
        r'Per element: $\beta x$ (1), the sigmoid (4: negate, exp, add, '
        r'divide) and the final product (1). $\beta$ (broadcast over the '
        'batch and trailing axes) is read once.', _SIGMOID_FLOPS + 2,
        inputs=('x', r'\beta')),
    Tanh: _elementwise_row(
        r'y = \tanh(x)', 'One elementary function evaluation per element.',
        1),
    TanhGrad: _elementwise_row(
        r'g_x = g_y (1 - y^2)',
        r"Tanh's gradient from its output y. Per element: $1 - y \cdot y$ "
        'is a fusable multiply-add (1 FLOP with FMA, 2 without), then a '
        'multiplication by $g_y$.', 3, fma=2, inputs=('y', 'g_y')),
}
_ELEMENTWISE_COSTS = {cls: row['cost']
                      for cls, row in resolve_table(_ELEMENTWISE).items()}


def calc_elementwise_activation(func: tuple(_ELEMENTWISE), in_data,
                                **kwargs):
    r"""<<name>>

    $$<<formula>>$$

    <<text>>

    | Item | Value |
    |:-----|:------|
    | FLOPs<<flops_cells>>
    | mread | <<mread>> |
    | mwrite | <<mwrite>> |
    | params | <<params>> |
    """
    # On the hook's per-call path (ReLU in every network): one lookup (a
    # subclass's walks the MRO), no allocation but the result.
    flops, fma, saved, consts, params = (
        _ELEMENTWISE_COSTS.get(type(func))
        or lookup(_ELEMENTWISE_COSTS, type(func)))
    x = in_data[0]
    n = 0 if x is None else x.size
    if fma is not None and kwargs.get('fma_1flop', False):
        flops = fma
    if saved or consts or len(in_data) != 1:
        extra = consts
        for attr in saved:
            if getattr(func, attr, None) is not x:
                extra += n
        if len(in_data) == 1:
            mread = n + extra  # one dtype: the hook's itemsize is exact
        else:
            mread = total_size(in_data) + elements(extra, x)
    else:
        mread = n  # x, read once
    return (flops * n, mread, n,
            {} if params is None else params(func, in_data))


calc_elementwise_activation.family = _ELEMENTWISE


def calc_prelu_grad(func: PReLUFunctionGrad, in_data, **kwargs):
    r"""PReLUFunctionGrad

    $$g_x = g_y [c \ge 0] + W g_y [c < 0], \quad g_W = \sum x g_y [c < 0]$$

    PReLUFunction's gradient, inputs $(x, W, g_y)$. Per element of x: the
    comparison of the condition array c with 0 (it selects both results),
    the product $x g_y$ and the product $W g_y$ (W broadcast); then $g_W$
    sums the products over the batch and trailing axes: $\|x\| - \|W\|$
    additions. c is the forward's input x, read once with it. In double
    backprop Chainer applies this node again to $(g_y, W, g_{g_x})$ with c
    the original x (then read too) and keeps $g_W$ unsummed, shaped as x.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $4 \|x\| - \|W\|$; unsummed: $3 \|x\|$ |
    | mread | $2 \|x\| + \|W\|$ (+ $\|c\|$ when c is not x) |
    | mwrite | $\|x\| + \|W\|$; unsummed: $2 \|x\|$ |
    | params | `w_shape`: shape of W (a tuple) |
    """
    x, W, gy = in_data
    n = x.size
    flops = 3 * n
    gw_size = n
    if func.reduce_axes is not None:
        gw_size = W.size
        # summing n products into |W| sums; an empty batch sums nothing
        flops += max(n - gw_size, 0)
    mread = total_size(in_data)
    if func.cond is not x:
        mread += elements(n, x)
    return (flops, mread, n + gw_size,
            {'w_shape': tuple(int(d) for d in W.shape)})


def calc_swish_grad(func: SwishGrad, in_data, **kwargs):
    r"""SwishGrad

    $$g_x = g_y (\beta y + s (1 - \beta y)), \; g_\beta = \sum g_y y (x - y)$$

    Swish's gradient, inputs $(x, \beta, g_y)$, $\beta$ broadcast over the
    batch and trailing axes, with $s = \mathrm{sigmoid}(\beta x)$ and
    $y = x s$ recomputed. Per element of x: $\beta x$ (1), the sigmoid
    (4), y (1), $\beta y$ (1), $1 - \beta y$ (1), a fusable multiply-add
    (1 FLOP with FMA, 2 without) and the product with $g_y$ (1) for $g_x$;
    $x - y$ and two products (3) for $g_\beta$'s terms, which are then
    summed: $\|x\| - \|\beta\|$ additions.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $14 \|x\| - \|\beta\|$ |
    | FLOPs (no FMA) | $15 \|x\| - \|\beta\|$ |
    | mread | $2 \|x\| + \|\beta\|$ |
    | mwrite | $\|x\| + \|\beta\|$ |
    | params | none |
    """
    x, beta, gy = in_data
    n = x.size
    # beta x, y, beta y, 1 - beta y, the multiply-add (2 without FMA), the
    # product with gy; x - y and two products for g_beta's terms
    per_element = _SIGMOID_FLOPS + (9 if kwargs.get('fma_1flop', False)
                                    else 10)
    # summing into |beta| sums; an empty batch sums nothing
    flops = per_element * n + max(n - beta.size, 0)
    return (flops, total_size(in_data), n + beta.size, {})


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


# Softmax-like activations (and their gradients): along ``axis``, rows of
# c = x.shape[axis] elements; a row sum costs c - 1 additions.

def _rowwise_row(formula, text, flops_doc, per_element, fma=None,
                 per_row=0, inputs=('x',)):
    """A row of the softmax family: ``per_element`` FLOPs per element
    (``fma`` with fused multiply-adds, when it differs), the $c - 1$
    additions of each row's sum plus ``per_row`` FLOPs per row;
    ``flops_doc`` is the FLOPs cell (a pair, FMA first, when ``fma`` is
    given)."""
    if fma is None:
        cells = ' | {} |'.format(flops_doc)
    else:
        cells = ' (FMA) | {} |\n| FLOPs (no FMA) | {} |'.format(*flops_doc)
    main = inputs[0]
    return {
        'formula': formula, 'text': text, 'flops_cells': cells,
        'mread': '${}$'.format(' + '.join(doc_times(1, a) for a in inputs)),
        'mwrite': '${}$'.format(doc_times(1, main)),
        'cost': (per_element, fma, per_row),
    }


_ROWWISE = {
    Softmax: _rowwise_row(
        r'y_i = \exp(x_i) / \sum_j \exp(x_j)',
        'With $c$ = `x.shape[axis]`: an exp per element, $c-1$ additions '
        r'per row ($\|x\|/c$ rows) and a division per element. The '
        'max-subtraction done for numerical stability is not counted.',
        r'$2 \|x\| + (c-1) \|x\| / c$', 2),
    LogSoftmax: _rowwise_row(
        r'y_i = x_i - \log \sum_j \exp(x_j)',
        r'With $c$ = `x.shape[axis]` and $\|x\|/c$ rows: an exp per element, '
        '$c-1$ additions and a log per row, a subtraction per element, i.e. '
        r'$2\|x\| + (c-1)\|x\|/c + \|x\|/c = 3\|x\|$. The first three terms '
        r"are LogSumExp's $2\|x\|$ (same convention), so LogSoftmax is "
        'LogSumExp plus one subtraction per element and never costs less. '
        'As for Softmax, the max-subtraction done for numerical stability '
        'is not counted.', r'$3 \|x\|$', 2, per_row=1),
    _SoftmaxGrad: _rowwise_row(
        r'g_x = y \odot g_y - y \odot s, \quad s = \sum_j (y \odot g_y)_j',
        "Softmax's gradient from its output y. With $c$ = `y.shape[axis]`: "
        'a product $y g_y$ per element, the $c-1$ additions of s per row '
        r'($\|y\|/c$ rows), then $y g_y - y s$ per element, a fusable '
        'multiply-add (1 FLOP with FMA, 2 without).',
        (r'$2 \|y\| + (c-1) \|y\| / c$', r'$3 \|y\| + (c-1) \|y\| / c$'),
        3, fma=2, inputs=('y', 'g_y')),
    LogSoftmaxGrad: _rowwise_row(
        r'g_x = g_y - \exp(y) \sum_j g_{y,j}',
        "LogSoftmax's gradient from its output y. With $c$ = "
        '`y.shape[axis]`: an exp per element, the $c-1$ additions of the '
        r'sum of $g_y$ per row ($\|y\|/c$ rows), then a fusable '
        'multiply-add per element (1 FLOP with FMA, 2 without): the same '
        "count as Softmax's gradient.",
        (r'$2 \|y\| + (c-1) \|y\| / c$', r'$3 \|y\| + (c-1) \|y\| / c$'),
        3, fma=2, inputs=('y', 'g_y')),
}
_ROWWISE_COSTS = {cls: row['cost']
                  for cls, row in resolve_table(_ROWWISE).items()}


def calc_softmax_like(func: tuple(_ROWWISE), in_data, **kwargs):
    r"""<<name>>

    $$<<formula>>$$

    <<text>>

    | Item | Value |
    |:-----|:------|
    | FLOPs<<flops_cells>>
    | mread | <<mread>> |
    | mwrite | <<mwrite>> |
    | params | `axis` |
    """
    per_element, fma, per_row = lookup(_ROWWISE_COSTS, type(func))
    if fma is not None and kwargs.get('fma_1flop', False):
        per_element = fma
    x = in_data[0]
    n = x.size
    c = x.shape[func.axis]
    rows = n // c if c else 0
    flops = per_element * n + (c - 1 + per_row) * rows
    mread = n if len(in_data) == 1 else total_size(in_data)
    return (flops, mread, n, {'axis': int(func.axis)})


calc_softmax_like.family = _ROWWISE


# Scratch: the temporaries of each function's NumPy path.

def _rows_of(func, x):
    """Elements of a reduction of ``x`` over ``func.axis`` (keepdims)."""
    c = x.shape[func.axis]
    return x.size // c if c else 0


def scratch_relu_grad2(func: ReLUGrad2, in_data, **kwargs):
    r"""The boolean mask y > 0.

    NumPy: `gy * (self.b > 0)` makes the mask, $\|y\|$ bytes (bool), then
    the output.

    CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    return in_data[0].size


def scratch_sigmoid(func: Sigmoid, in_data, **kwargs):
    r"""x/2 and its tanh, one at a time alive beside the result.

    NumPy: `tanh(x * 0.5) * 0.5 + 0.5`: two temporaries the size of x
    alive at each step, the last one the output: $\|x\|$ elements above
    it.

    CuPy: none (cuDNN or one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x = in_data[0]
    return x.size * x.dtype.itemsize


def scratch_sigmoid_grad(func: SigmoidGrad, in_data, **kwargs):
    r"""gy y and 1 - y, alive while their product is written.

    NumPy: `gy * y * (1 - y)`: $2 \|y\|$ elements above the output; $\|y\|$
    when $y$ takes 256 KiB or more (NumPy then writes the product into the
    temporary `gy * y`: temporary elision).

    CuPy: none (cuDNN or one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    y = in_data[0]
    nbytes = y.size * y.dtype.itemsize
    return nbytes if elides(nbytes) else 2 * nbytes


def scratch_softmax(func: Softmax, in_data, **kwargs):
    r"""The row maxima, then the row sums.

    NumPy (and CuPy without cuDNN): `x - x.max(axis, keepdims=True)` writes
    the output, exponentiated and divided in place by `y.sum(axis,
    keepdims=True)`: one array of $R = \|x\| / c$ elements ($c$ the size
    of `axis`) at a time.

    CuPy with cuDNN (`use_cudnn` `'auto'`/`'always'`): none.
    """
    if kwargs.get('backend', 'numpy') == 'cupy' and uses_cudnn():
        return 0
    x = in_data[0]
    return _rows_of(func, x) * x.dtype.itemsize


def scratch_softmax_grad(func: _SoftmaxGrad, in_data, **kwargs):
    r"""The row sums of y gy and their product with y.

    NumPy (and CuPy without cuDNN): `gx = y * gy` (the output), its row
    sums ($R = \|y\| / c$ elements), then `y * sumdx` ($\|y\|$) subtracted
    in place: $\|y\| + R$ elements above the output.

    CuPy with cuDNN: none.
    """
    if kwargs.get('backend', 'numpy') == 'cupy' and uses_cudnn():
        return 0
    y = in_data[0]
    return (y.size + _rows_of(func, y)) * y.dtype.itemsize


def scratch_log_softmax(func: LogSoftmax, in_data, **kwargs):
    r"""logsumexp's shifted copy of x and two row arrays.

    NumPy (and CuPy without cuDNN): `logsumexp` makes the row maxima ($R =
    \|x\| / c$), $x - m$ exponentiated in place ($\|x\|$) and its row sums
    ($R$), all alive together; it returns $\log z$ and `x - log_z` writes
    the output: $2R$ elements above it.

    CuPy with cuDNN: none.
    """
    if kwargs.get('backend', 'numpy') == 'cupy' and uses_cudnn():
        return 0
    x = in_data[0]
    return 2 * _rows_of(func, x) * x.dtype.itemsize


def scratch_log_softmax_grad(func: LogSoftmaxGrad, in_data, **kwargs):
    r"""exp(y), its product with the row sums of gy, and those sums.

    NumPy (and CuPy without cuDNN): `gy - exp(y) * gy.sum(axis,
    keepdims=True)`: the row sums ($R$), $e^y$ and the product
    ($\|y\|$ each) alive together before the output: $\|y\| + R$ elements
    above it, at any size (NumPy's temporary elision never writes into
    $e^y$ here: the sums are broadcast, and it only reuses a temporary
    whose partner has its shape or is a scalar).

    CuPy with cuDNN: none.
    """
    if kwargs.get('backend', 'numpy') == 'cupy' and uses_cudnn():
        return 0
    y = in_data[0]
    return (y.size + _rows_of(func, y)) * y.dtype.itemsize


def _masked_update_bound(x):
    """Bytes of a boolean mask of ``x`` and the elements it selects
    (counted as if every element were selected: the count depends on the
    values, which a calculator never reads)."""
    return x.size * (1 + x.dtype.itemsize)


def scratch_leaky_relu(func: LeakyReLU, in_data, **kwargs):
    r"""The mask x <= 0 and the elements it selects (a bound).

    NumPy: `y = x.copy()` (the output), the mask `x <= 0` ($\|x\|$ bytes),
    then `y[mask] *= slope`: the selected elements gathered into a new
    array, scaled in place and put back. How many are selected depends on
    the values: counted as all of them, $\|x\|$ bytes plus $\|x\|$
    elements (exact when every x is $\le 0$, an upper bound otherwise).

    CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    return _masked_update_bound(in_data[0])


def scratch_leaky_relu_grad(func: _LeakyReLUGrad, in_data, **kwargs):
    r"""The mask of the non-positive inputs and the elements it selects.

    NumPy: as LeakyReLU's forward on `gy.copy()` (the output): the mask
    ($\|g_y\|$ bytes) and the selected elements, counted as all of them
    (an upper bound).

    CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    return _masked_update_bound(in_data[0])


def scratch_elu(func: ELU, in_data, **kwargs):
    r"""The mask x <= 0, the selected elements and their expm1 (a bound).

    NumPy: `y = x.copy()` (the output), the mask ($\|x\|$ bytes), then
    `alpha * expm1(y[mask])`: the gathered elements and their `expm1`
    alive together. Counted as if every element were selected: $\|x\|$
    bytes plus $2 \|x\|$ elements (exact when every x is $\le 0$).

    CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x = in_data[0]
    return x.size * (1 + 2 * x.dtype.itemsize)


def scratch_elu_grad(func: ELUGrad, in_data, **kwargs):
    r"""The mask of the positive inputs.

    NumPy: `gx = y + alpha` (the output), then `gx[x > 0] = 1`: the mask,
    $\|x\|$ bytes.

    CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    return in_data[0].size


def scratch_clipped_relu(func: ClippedReLU, in_data, **kwargs):
    r"""max(0, x) before the minimum with the cap.

    NumPy: `numpy.minimum(numpy.maximum(0, x), cap)`: $\|x\|$ elements
    above the output.

    CuPy: none (cuDNN or one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x = in_data[0]
    return x.size * x.dtype.itemsize


def scratch_clipped_relu_grad(func: (ClippedReLUGrad2, ClippedReLUGrad3),
                              in_data, **kwargs):
    r"""The two masks and gy times the first.

    NumPy: `gy * (0 < x) * (x < cap)`: the mask `0 < x` ($\|x\|$ bytes),
    `gy * mask` ($\|x\|$ elements), the mask `x < cap`, then their product
    (the output): $\|x\|$ elements and $\|x\|$ bytes above it; $\|x\|$
    bytes when the product takes 256 KiB or more (NumPy writes it into
    `gy * mask`, temporary elision).

    CuPy: none (cuDNN or one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    gy = in_data[-1]
    nbytes = gy.size * gy.dtype.itemsize
    return gy.size if elides(nbytes) else gy.size + nbytes


def scratch_tanh_grad(func: TanhGrad, in_data, **kwargs):
    r"""y squared and one minus it.

    NumPy: `gy * (1 - y * y)`: `y * y` and `1 - y * y` alive together
    before the product: $\|y\|$ elements above the output (with or without
    temporary elision).

    CuPy: none (cuDNN or one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    y = in_data[0]
    return y.size * y.dtype.itemsize


def _nbytes(x):
    return x.size * x.dtype.itemsize


def scratch_prelu(func: (PReLUFunction, PReLUFunctionGrad), in_data,
                  **kwargs):
    r"""A boolean mask and the slopes broadcast to the input's shape.

    NumPy: the forward masks `y = x.copy()` with
    `numpy.ma.masked_greater_equal` (the mask `x >= 0`, $\|x\|$ bytes, is
    copied into the masked array's own mask, the first freed), then
    `masked *= W` makes `numpy.where(mask, 1, W)`, the slopes broadcast
    to $\|x\|$ elements: $\|x\|$ bytes plus $\|x\|$ elements above the
    output. The gradient makes the mask `cond >= 0`, `x * gy` and
    `numpy.where(mask, 0, x * gy)` (summed into $g_W$) before $g_x$, then
    masks $g_x$ the same way: at most the mask and two arrays of
    $\|x\|$ elements before $g_x$ exists, the mask and one with it, the
    same $\|x\|$ bytes plus $\|x\|$ elements above the outputs either way.

    CuPy: none (elementwise kernels; the gradient's masked product is
    reused as $g_x$).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x = in_data[0]
    return x.size + _nbytes(x)


def scratch_swish(func: Swish, in_data, **kwargs):
    r"""beta x, then the sigmoid's two temporaries.

    NumPy: `x * sigmoid(beta * x)` with the sigmoid written as
    `tanh(bx * 0.5) * 0.5 + 0.5`: `beta * x`, `bx * 0.5` and its `tanh`
    alive together, $3 \|x\|$ elements before the output exists (NumPy's
    temporary elision never applies to `tanh`): $2 \|x\|$ elements above
    it.

    CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    return 2 * _nbytes(in_data[0])


def scratch_swish_grad(func: SwishGrad, in_data, **kwargs):
    r"""The sigmoid, y, beta y and the temporaries of both gradients.

    NumPy: `sig`, `y = x * sig` and `by = beta * y` stay alive to the
    end; $g_x$ = `gy * (by + sig * (1 - by))` takes two temporaries; then
    `gy * y * (x - y)` (the full-size $g_\beta$ before its sum) takes
    three beside $g_x$: $7 \|x\|$ elements alive at once, $6 \|x\|$ when
    an array of $\|x\|$ elements takes 256 KiB or more (`gy * y` then
    receives the product: temporary elision). Above the outputs ($g_x$
    and the summed $g_\beta$): $6 \|x\|$ (or $5 \|x\|$) elements minus
    $\|g_\beta\|$.

    CuPy: one kernel writes $g_x$ and the full-size $g_\beta$ before its
    sum: $\|x\|$ elements.
    """
    x, beta = in_data[0], in_data[1]
    e = _nbytes(x)
    if kwargs.get('backend', 'numpy') == 'cupy':
        return e
    return (5 if elides(e) else 6) * e - _nbytes(beta)


def scratch_softplus(func: Softplus, in_data, **kwargs):
    r"""beta x and the three terms of the stable log(1 + exp(beta x)).

    NumPy: `(fmax(bx, 0) + log1p(exp(-fabs(bx)))) * beta_inv`: `bx`,
    `fmax(bx, 0)` and two more arrays of $\|x\|$ elements alive at each
    step (`fabs` and its negation, then `exp`, then `log1p`; the
    ufunc calls are never elided): $4 \|x\|$ elements, $3 \|x\|$ above
    the output.

    CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    return 3 * _nbytes(in_data[0])


def scratch_softplus_grad(func: SoftplusGrad, in_data, **kwargs):
    r"""Two temporaries at a time of `(1 - 1 / (1 + exp(beta x))) gy`.

    NumPy: each step's result is made while the previous one is alive
    (`1 / t` and `1 - t` cannot write into their temporary right operand):
    $2 \|x\|$ elements at the peak, $\|x\|$ above the output.

    CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    return _nbytes(in_data[0])


def scratch_crelu(func: CReLU, in_data, **kwargs):
    r"""-x.

    NumPy and CuPy: the two halves are written into the output with
    `maximum(0, x, out=...)` and `maximum(0, -x, out=...)`: `-x`,
    $\|x\|$ elements.
    """
    return _nbytes(in_data[0])


def scratch_hard_sigmoid(func: HardSigmoid, in_data, **kwargs):
    r"""0.2 x and 0.2 x + 0.5 before the clip.

    NumPy: `clip(x * 0.2 + 0.5, 0, 1)`: two arrays of $\|x\|$ elements at
    a time (the sum is written into `x * 0.2` from 256 KiB on, elision;
    `clip` makes a new array either way): $\|x\|$ above the output.

    CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    return _nbytes(in_data[0])


def scratch_hard_sigmoid_grad(func: HardSigmoidGrad, in_data, **kwargs):
    r"""Two boolean masks, their conjunction and the masked gradient.

    NumPy: `((-2.5 < x) & (x < 2.5)) * gy * 0.2`: the masks ($\|x\|$ bytes
    each, a third for their conjunction below 256 KiB), then the
    conjunction with `mask * gy` ($\|x\|$ bytes and elements), then that
    product with its scaled copy below 256 KiB: the largest of these above
    the output.

    CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    gy = in_data[0]
    n, e = gy.size, _nbytes(gy)
    masks = 2 * n if elides(n) else 3 * n
    return max(masks, n + e, e if elides(e) else 2 * e) - e


def scratch_rrelu(func: RReLU, in_data, **kwargs):
    r"""The slopes' float64 draws, the mask and x times the slopes (in
    training, an upper bound when the slopes were given).

    NumPy: in training, `numpy.random.uniform` draws $\|x\|$ float64
    values, cast to the node's slopes (kept) unless x is float64 (counted
    whenever `chainer.config.train` is on: the node keeps its slopes
    either way, so given slopes cannot be told apart); then `where(x >= 0,
    x, x * r)`: the mask ($\|x\|$ bytes) and `x * r` ($\|x\|$ elements)
    beside the output. Above the output and the slopes: the larger of the
    two steps.

    CuPy: in training, the float64 draws beside their cast, less the
    output (none for float64 x).
    """
    x = in_data[0]
    e = _nbytes(x)
    draws = 8 * x.size if chainer.config.train else 0
    cast = e if draws and x.dtype.itemsize != 8 else 0
    if kwargs.get('backend', 'numpy') == 'cupy':
        return max(0, draws - e) if cast else 0
    return max(draws + cast, 3 * e + x.size) - 2 * e


def scratch_rrelu_grad(func: _RReLUGrad, in_data, **kwargs):
    r"""The mask y >= 0 and gy times the slopes.

    NumPy: `where(y >= 0, gy, gy * r)`: $\|g_y\|$ bytes and elements above
    the output.

    CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    gy = in_data[0]
    return gy.size + _nbytes(gy)
