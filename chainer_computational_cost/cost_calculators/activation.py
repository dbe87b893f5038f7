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
  itself.
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

from chainer_computational_cost.cost_calculators import elements
from chainer_computational_cost.cost_calculators import lookup
from chainer_computational_cost.cost_calculators import resolve_table
from chainer_computational_cost.cost_calculators import total_size


#: FLOPs of one logistic sigmoid evaluation: negate, exp, add, divide.
_SIGMOID_FLOPS = 4


def _times(k, name):
    """``k |name|`` as a docstring term (``|name|`` for 1)."""
    size = r'\|{}\|'.format(name)
    return size if k == 1 else '{} {}'.format(k, size)


def _flops_cells(flops, fma, name):
    """The rest of a docstring table's FLOPs row after ``| FLOPs``: one row,
    or an FMA and a no-FMA row when fusing multiply-adds changes the
    count."""
    if fma is None:
        return ' | ${}$ |'.format(_times(flops, name))
    return ' (FMA) | ${}$ |\n| FLOPs (no FMA) | ${}$ |'.format(
        _times(fma, name), _times(flops, name))


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
    terms = [_times(1, a) for a in inputs]
    terms += [_times(1, name) for name, _ in saved]
    if consts:
        terms.append(str(consts))
    return {
        'formula': formula, 'text': text, 'params': params_doc,
        'flops_cells': _flops_cells(flops, fma, main),
        'mread': mread_doc or '${}$'.format(' + '.join(terms)),
        'mwrite': '${}$'.format(_times(1, main)),
        'cost': (flops, fma, tuple(attr for _, attr in saved), consts,
                 params),
    }


_ELEMENTWISE = {
    ReLU: _elementwise_row(
        r'y = \max(0, x)', 'One comparison per element.', 1),
    ClippedReLU: _elementwise_row(
        r'y = \min(\max(0, x), z)',
        'Two comparisons per element; the cap $z$ is a scalar constant read '
        'once.', 2, consts=1,
        params=lambda func, in_data: {'z': float(func.cap)},
        params_doc='`z`: cap'),
    ELU: _elementwise_row(
        r'y = x \text{ if } x > 0 \text{ else } \alpha (\exp(x) - 1)',
        'Per element: a comparison, an `expm1` (1 elementary function) and '
        r'a multiplication by $\alpha$, both branches counted on every '
        r'element; $\alpha$ is a scalar constant read once.', 3, consts=1,
        params=lambda func, in_data: {'alpha': float(func.alpha)},
        params_doc='`alpha`'),
    HardSigmoid: _elementwise_row(
        r'y = \min(1, \max(0, 0.2 x + 0.5))',
        'Per element: a fusable multiply-add (1 FLOP with FMA, 2 without) '
        'and two comparisons. The literals 0.2, 0.5, 0, 1 are not counted '
        'as reads.', 4, fma=3),
    LeakyReLU: _elementwise_row(
        r'y = x \text{ if } x > 0 \text{ else } a x',
        'Per element: a comparison and a multiplication by the slope $a$, a '
        'scalar constant read once. The slope is not in params: 0.1.2 '
        'reported none.', 2, consts=1, params_doc='none (as in 0.1.2)'),
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
    Sigmoid: _elementwise_row(
        r'y = 1 / (1 + \exp(-x))',
        'Four FLOPs per element: negate, exp, add, divide.', _SIGMOID_FLOPS),
    Softplus: _elementwise_row(
        r'y = \log(1 + \exp(\beta x)) / \beta',
        'Per element: a multiplication, an exp, a `log1p` and a division (4 '
        r'FLOPs); $\beta$ is a scalar constant read once. The extra '
        "operations of Chainer's overflow-safe formulation are not counted.",
        4, consts=1,
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
    # On the hook's per-call path (ReLU in every network): one lookup, no
    # allocation but the result.
    flops, fma, saved, consts, params = lookup(_ELEMENTWISE_COSTS,
                                               type(func))
    x = in_data[0]
    n = 0 if x is None else x.size
    if fma is not None and kwargs.get('fma_1flop', False):
        flops = fma
    extra = consts
    for attr in saved:
        if getattr(func, attr, None) is not x:
            extra += n
    if len(in_data) == 1:
        mread = n + extra  # one dtype: the hook's itemsize is exact
    else:
        mread = total_size(in_data) + elements(extra, x)
    return (flops * n, mread, n,
            {} if params is None else params(func, in_data))


calc_elementwise_activation.family = _ELEMENTWISE


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
        'mread': '${}$'.format(' + '.join(_times(1, a) for a in inputs)),
        'mwrite': '${}$'.format(_times(1, main)),
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
