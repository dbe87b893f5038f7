"""Cost calculators for ``chainer.functions.rnn``.

Conventions shared by this module:

* a logistic sigmoid is 4 FLOPs (negate, exp, add, divide), as in the
  activation module; a tanh is 1 elementary function evaluation;
* a product added to a running sum (``a*i + f*c``, a dot product, a matrix
  product with its bias) is a fusable multiply-add: 1 FLOP with
  ``fma_1flop=True``, 2 without; a lone product or a lone sum is 1 FLOP;
* only the outputs are written: the gate activations Chainer keeps for the
  backward pass, cuDNN's reserve space and the hidden sequences passed
  between the layers of an NStep RNN are temporaries, not counted.

Chainer 7 moved these classes to ``chainer.functions.rnn``; Chainer 6 has
them in ``chainer.functions.activation`` (LSTM, SLSTM, TreeLSTM) and
``chainer.functions.connection`` (NStep*).  Targets are dotted names so the
module imports under both; the Chainer 6 names are registered at the bottom.
"""

import chainer

from chainer_computational_cost.cost_calculators import elements
from chainer_computational_cost.cost_calculators import elides
from chainer_computational_cost.cost_calculators import old_style_backward
from chainer_computational_cost.cost_calculators import register
from chainer_computational_cost.cost_calculators import size_of
from chainer_computational_cost.cost_calculators import total_size

#: The family of calls whose time one fit of a calibration predicts
#: (``analysis.calibration.FAMILIES``): this module's.
TIME_FAMILY = 'rnn'


#: FLOPs of one logistic sigmoid evaluation: negate, exp, add, divide.
_SIGMOID = 4
#: FLOPs of one tanh evaluation (one elementary function).
_TANH = 1


def _flops(plain, fused, fma):
    """FLOPs of ``plain`` single operations and ``fused`` multiply-adds."""
    return plain + fused * (1 if fma else 2)


def _lstm_cell_ops(n_in, n_forget, n_out_terms):
    """``(plain, fused)`` operation counts of one LSTM-style cell unit.

    The cell has ``n_in`` (cell input, input gate) pairs
    ``tanh(a_k) * sigmoid(i_k)``, ``n_forget`` forget gates
    ``sigmoid(f_j) * c_j``, and an output gate ``sigmoid(o_1 + ... + o_m)``
    over ``m = n_out_terms`` pre-activations:

    * activations: ``n_in (tanh + sigmoid) + n_forget sigmoid``, plus
      ``m - 1`` additions and one sigmoid for the output gate;
    * ``c = sum_k a_k i_k + sum_j f_j c_j``: one product, then each of the
      other ``n_in + n_forget - 1`` products is a fused multiply-add;
    * ``h = o * tanh(c)``: one tanh and one product.
    """
    plain = ((_TANH + _SIGMOID) * n_in + _SIGMOID * n_forget
             + (n_out_terms - 1) + _SIGMOID + 1 + _TANH + 1)
    return plain, n_in + n_forget - 1


def _lstm_cell_cost(cells, inputs, n_in, n_forget, n_out_terms, fma,
                    params):
    """Cost of an element-wise LSTM-style function.

    ``cells`` is the number of updated cell units (each writes one ``c``
    and one ``h``); ``inputs`` the input arrays, all read once.
    """
    plain, fused = _lstm_cell_ops(n_in, n_forget, n_out_terms)
    flops = cells * _flops(plain, fused, fma)
    return flops, total_size(inputs), 2 * cells, params


def calc_lstm(
        func: 'chainer.functions.rnn.lstm.LSTM', in_data,
        **kwargs):
    r"""LSTM

    $$c = \tanh(a) \sigma(i) + \sigma(f) c_{prev},\ h = \sigma(o) \tanh(c)$$

    `x` holds the four pre-activations $a, i, f, o$ of $n = \|x\| / 4$ cell
    units. Per unit: tanh (1), three sigmoids (4 each), the product
    $\sigma(f) c_{prev}$ (1), the multiply-add $\tanh(a)\sigma(i) + \cdot$
    (1 fused), tanh (1) and product (1) for $h$: 16 single FLOPs and 1
    multiply-add. When `x` has fewer rows than $c_{prev}$, the remaining
    rows of $c_{prev}$ are copied to $c$ (0 FLOPs, but read and written).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $17 n$ |
    | FLOPs (no FMA) | $18 n$ |
    | mread | $\|c_{prev}\| + \|x\|$ |
    | mwrite | $\|c\| + \|h\| = \|c_{prev}\| + n$ |
    | params | none |
    """
    c_prev, x = in_data
    n = x.size // 4
    flops, mread, _, params = _lstm_cell_cost(
        n, in_data, 1, 1, 1, kwargs.get('fma_1flop', False), {})
    return flops, mread, c_prev.size + n, params


def scratch_lstm(
        func: ('chainer.functions.rnn.lstm.LSTM',
               'chainer.functions.activation.lstm.LSTM'),
        in_data, **kwargs):
    r"""The four activated gates and the cell update's temporaries.

    NumPy: with $U = \|x\| / 4$ (the updated cells), tanh of $a$ and the
    three sigmoids (each `tanh(x / 2) / 2 + 1/2`, two temporaries alive)
    give $4U$ elements; $c$ ($\|c_{prev}\|$) is allocated, then `a * i`,
    `f * c_prev` and their sum ($3U$) before the copy into $c$; then
    `tanh(c)` and the product that is $h$. Peak $7U + \|c\|$, of which $c$
    and $h$ stay: $6U$ elements above them. When $U$ elements take 256 KiB
    or more NumPy adds into the temporary `a * i` (temporary elision) and
    writes $h$ into `tanh(c)`: $5U$.

    CuPy: none (one elementwise kernel writes $c$ and $h$).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x = in_data[1]
    gate = (x.size // 4) * x.dtype.itemsize
    return (5 if elides(gate) else 6) * gate


def calc_slstm(
        func: 'chainer.functions.rnn.slstm.SLSTM', in_data,
        **kwargs):
    r"""SLSTM

    $$c = \sum_{k=1}^{2} (\tanh(a_k) \sigma(i_k) + \sigma(f_k) c_k)$$

    `x1`, `x2` each hold four pre-activations $a_k, i_k, f_k, o_k$ of
    $n = \|c_1\|$ cell units, and $h = \sigma(o_1 + o_2) \tanh(c)$. Per
    unit: two tanh and five sigmoids (22), the addition $o_1 + o_2$ (1), one
    product and 3 multiply-adds for $c$, tanh and product for $h$ (2): 26
    single FLOPs and 3 multiply-adds.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $29 n$ |
    | FLOPs (no FMA) | $32 n$ |
    | mread | $\|c_1\| + \|c_2\| + \|x_1\| + \|x_2\|$ |
    | mwrite | $\|c\| + \|h\| = 2 n$ |
    | params | none |
    """
    return _lstm_cell_cost(in_data[0].size, in_data, 2, 2, 2,
                           kwargs.get('fma_1flop', False), {})


def scratch_slstm(
        func: 'chainer.functions.rnn.slstm.SLSTM', in_data, **kwargs):
    r"""The six activated gates, the output gate and the cell's products.

    NumPy: with $U = \|c_1\|$ elements, tanh and sigmoids of $a_k, i_k,
    f_k$ ($6U$), the sigmoid of $o_1 + o_2$ (the sum and two of the
    sigmoid's temporaries: $9U$ at most), then the four products of $c$
    and their sums, and `tanh(c)` for $h$: peak $10U$, of which $c$ and $h$
    stay: $8U$. From 256 KiB ($U$ elements) the sums and $h$ are written
    into temporaries (elision): $9U$, so $7U$.

    CuPy: none (one elementwise kernel writes $c$ and $h$).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    gate = in_data[0].size * in_data[2].dtype.itemsize
    return (7 if elides(gate) else 8) * gate


def calc_tree_lstm(
        func: 'chainer.functions.rnn.tree_lstm.TreeLSTM', in_data,
        **kwargs):
    r"""TreeLSTM

    $$c = \tanh(a) \sigma(i) + \sum_j \sigma(f_j) c_j,\ h = \sigma(o)\tanh(c)$$

    Inputs are $N$ children cells $c_1 \ldots c_N$ and `x` holding the
    $3 + N$ pre-activations $a, i, o, f_1 \ldots f_N$ of $n = \|c_1\|$ cell
    units. Per unit: tanh (1) and $2 + N$ sigmoids (4 each), one product and
    $N$ multiply-adds for $c$, tanh and product for $h$: $4N + 12$ single
    FLOPs and $N$ multiply-adds. The gate activations Chainer stores on the
    function object for backward are not counted as writes.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $(5N + 12) n$ |
    | FLOPs (no FMA) | $(6N + 12) n$ |
    | mread | $\sum_j \|c_j\| + \|x\|$ |
    | mwrite | $\|c\| + \|h\| = 2 n$ |
    | params | `n_ary`: number of children $N$ |
    """
    n_ary = len(in_data) - 1
    return _lstm_cell_cost(in_data[0].size, in_data, 1, n_ary, 1,
                           kwargs.get('fma_1flop', False), {'n_ary': n_ary})


@old_style_backward
def scratch_tree_lstm(
        func: 'chainer.functions.rnn.tree_lstm.TreeLSTM', in_data,
        **kwargs):
    r"""The cell update's products and running sum, then `tanh(c)`.

    NumPy: the $3 + N$ activated gates are kept on the function (not
    scratch); with $U = \|c_1\|$ elements, $a i$, the running sum of the
    $f_j c_j$ (a new array each step), the next product and the new sum
    are alive together ($4U$; $3U$ with one child, or from 256 KiB where
    NumPy adds into the running sum), then $c$, `tanh(c)` and $h$ ($3U$).
    Peak above $c$ and $h$: $2U$ ($U$ with one child or from 256 KiB).

    CuPy: none (one elementwise kernel writes $c$ and $h$).

    Backward (an old-style Function's, see `old_style_backward`), NumPy:
    `tanh(c)` and the cell's gradient `tmp` ($U$ each) stay alive while
    each gate's gradient is computed into gx by an expression of two or
    three temporaries of $U$: $4U$ above gx and the children's gradients,
    $3U$ from 256 KiB with two children or more (tracemalloc's measure on
    NumPy 1.23). CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    cs = in_data[:-1]
    gate = cs[0].size * in_data[-1].dtype.itemsize
    if kwargs.get('backward', False):
        return (3 if len(cs) > 1 and elides(gate) else 4) * gate
    return (1 if len(cs) < 2 or elides(gate) else 2) * gate


def _lstm_grad_ops(n_in, n_forget, n_out_terms, has_gc, has_gh):
    """``(plain, fused)`` operation counts of the backward pass of one
    LSTM-style cell unit (see :func:`_lstm_cell_ops` for the cell).

    The activations are recomputed from the pre-activations; ``gc`` and
    ``gh``, the gradients of the cell state and of the output, may be
    missing (Chainer passes None), and their terms then cost nothing:

    * with either gradient, the cell's gradient ``t`` (``gc``, plus the
      ``gh`` term) flows to each (cell input, input gate) pair: tanh and
      sigmoid again (5), ``g_a = t * sigmoid(i) * (1 - tanh(a)^2)`` (1
      fused, 2 plain) and ``g_i = t * tanh(a) * s (1 - s)`` (4 plain): 11
      plain, 1 fused per pair; and to each forget gate: sigmoid again (4),
      ``g_f = t * c_j * s (1 - s)`` (4) and ``g_c_j = t * sigmoid(f_j)``
      (1): 9 plain;
    * with ``gh``: the ``m - 1`` additions and the sigmoid of the output
      gate (4), ``tanh(c)`` (1), ``1 - tanh(c)^2`` (1 fused), ``gh *
      sigmoid(o)`` (1), ``g_o = gh * tanh(c) * s (1 - s)`` (4), then the
      product with ``1 - tanh(c)^2`` added to ``gc`` (1 fused) or alone
      (1 plain).
    """
    if not (has_gc or has_gh):
        return 0, 0
    plain = 11 * n_in + 9 * n_forget
    fused = n_in
    if has_gh:
        plain += (n_out_terms - 1) + _SIGMOID + _TANH + 1 + 4
        fused += 1
        if has_gc:
            fused += 1
        else:
            plain += 1
    return plain, fused


def calc_lstm_grad(
        func: 'chainer.functions.rnn.lstm.LSTMGrad', in_data, **kwargs):
    r"""LSTMGrad

    $$g_c = g_h \sigma(o) (1 - \tanh^2 c) + g_{c'},\ g_{c_{prev}} = g_c \sigma(f),\ g_a = g_c \sigma(i) (1 - \tanh^2 a), \ldots$$

    The backward pass of LSTM ($n = \|x\|/4$ cell units of the $B$ =
    `len(x)` rows; $c_{prev}$ may have more rows, whose gradient is $g_{c'}$
    copied). Its inputs are $c_{prev}$, $x$, $c$ and the incoming
    gradients $g_{c'}$ of $c$ and $g_h$ of $h$, either of which may be
    None (not used downstream): a missing one costs nothing. Per unit:
    $\tanh a$, $\sigma(i)$, $\sigma(f)$ again (9), $g_a$ (2 products and
    the multiply-add $1 - \tanh^2 a$), $g_i = g_c \tanh(a) \sigma(i) (1 -
    \sigma(i))$ (4), $g_f$ likewise with $c_{prev}$ (4) and
    $g_{c_{prev}}$ (1); with $g_h$ also $\sigma(o)$ and $\tanh c$ (5),
    $1 - \tanh^2 c$ (1 multiply-add), $g_h \sigma(o)$ (1), $g_o$ (4) and
    the product with $1 - \tanh^2 c$, added to $g_{c'}$ (1 multiply-add)
    or alone (1). So with both gradients 30 single FLOPs and 3
    multiply-adds; with $g_h$ only 31 and 2; with $g_{c'}$ only 20 and 1
    ($\sigma(o)$, $\tanh c$ and $g_o$ are then not needed: $g_o = 0$ is
    written). It reads the first $B$ rows of $c_{prev}$, $x$, and $c$ and
    $g_h$ when $g_h$ is given, all of $g_{c'}$ when given (nothing when
    both are missing); it writes $g_{c_{prev}}$ and $g_x$.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $33n$; $33n$ ($g_h$ only); $21n$ ($g_{c'}$ only) |
    | FLOPs (no FMA) | $36n$; $35n$ ($g_h$ only); $22n$ ($g_{c'}$ only) |
    | mread | $5n$ + ($2n$ with $g_h$) + ($\|g_{c'}\|$ when given) |
    | mwrite | $\|c_{prev}\| + \|x\|$ |
    | params | none |
    """  # NOQA
    c_prev, x, c_next, gc, gh = in_data
    n = x.size // 4
    plain, fused = _lstm_grad_ops(1, 1, 1, gc is not None, gh is not None)
    flops = n * _flops(plain, fused, kwargs.get('fma_1flop', False))
    if gc is None and gh is None:
        # zero gradients: nothing to compute or read
        return 0, 0, size_of(c_prev) + size_of(x), {}
    mread = elements(n, c_prev) + size_of(x)
    if gh is not None:
        mread += elements(n, c_next) + size_of(gh)
    if gc is not None:
        mread += size_of(gc)
    return flops, mread, size_of(c_prev) + size_of(x), {}


@old_style_backward
def scratch_lstm_grad(
        func: ('chainer.functions.rnn.lstm.LSTMGrad',
               'chainer.functions.activation.lstm.LSTMGrad'),
        in_data, **kwargs):
    r"""The activated gates, tanh(c) and three temporaries of each gradient.

    NumPy: with $U = \|x\| / 4$: $g_x$ ($4U$) and $g_{c_{prev}}$ are the
    outputs; tanh of $a$, the three sigmoids and `tanh(c)` ($5U$) live
    through the call, and each gate's gradient (e.g. `gc * sig_i *
    (1 - tanh_a * tanh_a)`) has up to three temporaries of $U$ alive: $8U$
    elements above the outputs.

    CuPy: none (one elementwise kernel).

    Backward (an old-style Function's, see `old_style_backward`: the
    double backward of LSTM), NumPy: its five gradients are allocated
    first (the outputs); `lstm_grad_grad` then keeps 15 arrays of $U$ to
    its end (each of $\sigma(o), \sigma(i), \sigma(f)$ with its first and
    second derivatives, and of $\tanh a, \tanh c$), then $g_{\bar c}$,
    `dgc_do` and `dgc_dc` (18); each gradient's expression has up to three
    temporaries alive (two from 256 KiB, where NumPy multiplies and adds
    into a temporary): $21U$ elements, $20U$ from 256 KiB. A gradient
    Chainer drops (that of $g_{c'}$ when it is None, $\|c_{prev}\|$
    elements; of $g_h$ when it is None, $U$) is freed inside: counted.
    CuPy: those dropped gradients only (one fused kernel writes the
    others).
    """
    x = in_data[1]
    gate = (x.size // 4) * x.dtype.itemsize
    if kwargs.get('backward', False):
        c_prev, _, _, gc, gh = in_data
        dropped = ((c_prev.size * c_prev.dtype.itemsize if gc is None else 0)
                   + (gate if gh is None else 0))
        if kwargs.get('backend', 'numpy') == 'cupy':
            return dropped
        return (20 if elides(gate) else 21) * gate + dropped
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    return 8 * gate


def calc_slstm_grad(
        func: 'chainer.functions.rnn.slstm.SLSTMGrad', in_data, **kwargs):
    r"""SLSTMGrad

    $$g_c = g_h \sigma(o_1 + o_2) (1 - \tanh^2 c) + g_{c'},\ g_{c_k} = g_c \sigma(f_k),\ g_{a_k} = g_c \sigma(i_k) (1 - \tanh^2 a_k), \ldots$$

    The backward pass of SLSTM ($n = \|c_1\|$ cell units). Its inputs
    are $c_1$, $c_2$, $x_1$, $x_2$, $c$ and the incoming gradients $g_{c'}$
    of $c$ and $g_h$ of $h$, either of which may be None: a missing one
    costs nothing. Per unit, as LSTMGrad with two (cell input, input gate)
    pairs and two forget gates, the output gate over $o_1 + o_2$ (1 more
    addition), and $g_o$ computed once for both $x_k$: with both gradients
    51 single FLOPs and 4 multiply-adds; with $g_h$ only 52 and 3; with
    $g_{c'}$ only 40 and 2. It reads $c_1$, $c_2$, $x_1$, $x_2$, plus $c$
    and $g_h$ when $g_h$ is given and $g_{c'}$ when given (nothing when
    both are missing); it writes
    $g_{c_1}$, $g_{c_2}$, $g_{x_1}$, $g_{x_2}$.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $55n$; $55n$ ($g_h$ only); $42n$ ($g_{c'}$ only) |
    | FLOPs (no FMA) | $59n$; $58n$ ($g_h$ only); $44n$ ($g_{c'}$ only) |
    | mread | $10n$ + ($2n$ with $g_h$) + ($n$ with $g_{c'}$) |
    | mwrite | $10n$ |
    | params | none |
    """  # NOQA
    c_prev1, c_prev2, x1, x2, c_next, gc, gh = in_data
    n = c_prev1.size
    plain, fused = _lstm_grad_ops(2, 2, 2, gc is not None, gh is not None)
    flops = n * _flops(plain, fused, kwargs.get('fma_1flop', False))
    mwrite = total_size((c_prev1, c_prev2, x1, x2))
    if gc is None and gh is None:
        return 0, 0, mwrite, {}
    mread = total_size((c_prev1, c_prev2, x1, x2, gc))
    if gh is not None:
        mread += size_of(c_next) + size_of(gh)
    return flops, mread, mwrite, {}


@old_style_backward
def scratch_slstm_grad(
        func: 'chainer.functions.rnn.slstm.SLSTMGrad', in_data, **kwargs):
    r"""The recomputed gate activations, $\tanh c$ and $g_c$.

    NumPy: with $U = \|c_1\|$ elements, $g_{x_1}$ and $g_{x_2}$ ($8U$, the
    outputs) are allocated first, then the seven activated gates and
    $\tanh(c)$ ($8U$) and $g_c$ ($U$) live to the end, beside each
    gradient expression's temporaries (3 of $U$: `1 - x * x` is a new
    array at any size, NumPy writes only commutative operations into a
    right-hand temporary) or the two $g_{c_k}$ (outputs): peak $20U$, of
    which the $10U$ of gradients stay: $10U$.

    CuPy: none (one elementwise kernel writes every gradient).

    Backward (an old-style Function's, see `old_style_backward`: the
    double backward of SLSTM), NumPy: its seven gradients are allocated
    first (the outputs), then $o_1 + o_2$ ($U$); `slstm_grad_grad` keeps
    24 arrays of $U$ to its end (each of five sigmoids with its first and
    second derivatives, and of three tanh), then $g_{\bar c}$, `dgc_do`,
    `dgc_dc` and the first 11 of the 12 arrays it returns (copied into
    the outputs after it), the last (`ggh`) with up to three temporaries
    alive (two from 256 KiB, where NumPy multiplies and adds into a
    temporary):
    $42U$ elements, $41U$ from 256 KiB. A gradient Chainer drops (of
    $g_{c'}$ or $g_h$ when None, $U$ each) is freed inside: counted.
    CuPy: $o_1 + o_2$ and the fused kernel's 13 results ($14U$), and the
    dropped gradients.
    """
    gate = in_data[0].size * in_data[2].dtype.itemsize
    if kwargs.get('backward', False):
        gc, gh = in_data[5:]
        dropped = gate * ((gc is None) + (gh is None))
        if kwargs.get('backend', 'numpy') == 'cupy':
            return 14 * gate + dropped
        return (41 if elides(gate) else 42) * gate + dropped
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    return 10 * gate


# NStep RNNs (cuDNN only).  Inputs: hx, [cx,] w, xs where w is the
# concatenated weights and biases of every layer and direction and xs the
# concatenated input sequence, shaped (sum of lengths, input size).

_LSTM_OPS = _lstm_cell_ops(1, 1, 1)

#: Gates (matrix products per input) and per-unit element-wise operations
#: ``(plain, fused)`` of each cell type; see the calculators' docstrings.
_NSTEP_CELLS = {
    # pre-activation sum (1) + tanh or relu (1)
    'rnn': (1, (2, 0)),
    # r, z: sum (2) + sigmoids (8); n = tanh(x part + r * h part): 1 fused
    # + tanh; h = (1 - z) n + z h_prev: subtraction, product, 1 fused
    'gru': (3, (2 + 2 * _SIGMOID + _TANH + 2, 2)),
    # four pre-activation sums + the LSTM cell
    'lstm': (4, (4 + _LSTM_OPS[0], _LSTM_OPS[1])),
}


def _n_step_cost(func, in_data, cell, directions, fma):
    """Cost of a cuDNN NStep RNN from its inputs' shapes.

    Layer ``l`` of ``L`` has input size ``I`` (``l = 0``) or
    ``directions * H`` and, per token and direction, ``G`` rows of
    ``(I_l + H)`` multiply-adds (biases included) plus the cell's
    element-wise operations for each of the ``H`` units.
    """
    gates, (plain, fused) = _NSTEP_CELLS[cell]
    hx = in_data[0]
    w, xs = in_data[-2:]
    n_layers = int(func.n_layers)
    units = hx.shape[2]
    tokens, in_size = xs.shape
    per_unit = 0
    for layer in range(n_layers):
        layer_in = in_size if layer == 0 else directions * units
        per_unit += (_flops(0, gates * (layer_in + units), fma)
                     + _flops(plain, fused, fma))
    flops = directions * tokens * units * per_unit
    states = total_size(in_data[:-2])  # hx and, for an LSTM, cx
    mread = states + size_of(w) + size_of(xs)
    mwrite = states + tokens * directions * units
    return flops, mread, mwrite, {'n_layers': n_layers, 'units': units}


def calc_n_step_rnn_tanh(
        func: 'chainer.functions.rnn.n_step_rnn.NStepRNNTanh', in_data,
        **kwargs):
    r"""NStepRNNTanh

    $$h_t = \tanh(W x_t + b_W + R h_{t-1} + b_R)$$

    cuDNN stacked RNN over $T = \sum$ `lengths` tokens ($T$ = rows of the
    concatenated `xs`), $L$ layers of $H$ units, input size $I$; layer
    $l > 0$ takes $I_l = H$. Per token and unit: $I_l + H$ multiply-adds
    (each bias completes its dot product), 1 addition, 1 tanh. Dropout
    between layers is not counted.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $T H \sum_l (I_l + H + 2)$ |
    | FLOPs (no FMA) | $T H \sum_l (2 (I_l + H) + 2)$ |
    | mread | $\|h_x\| + \|w\| + \|x\|$ |
    | mwrite | $\|h_y\| + \|y\| = \|h_x\| + T H$ |
    | params | `n_layers`, `units`: $L$, $H$ |
    """
    return _n_step_cost(func, in_data, 'rnn', 1,
                        kwargs.get('fma_1flop', False))


def calc_n_step_rnn_relu(
        func: 'chainer.functions.rnn.n_step_rnn.NStepRNNReLU', in_data,
        **kwargs):
    r"""NStepRNNReLU

    $$h_t = \max(0, W x_t + b_W + R h_{t-1} + b_R)$$

    As NStepRNNTanh with a comparison instead of the tanh: per token and
    unit of layer $l$, $I_l + H$ multiply-adds, 1 addition, 1 comparison.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $T H \sum_l (I_l + H + 2)$ |
    | FLOPs (no FMA) | $T H \sum_l (2 (I_l + H) + 2)$ |
    | mread | $\|h_x\| + \|w\| + \|x\|$ |
    | mwrite | $\|h_y\| + \|y\| = \|h_x\| + T H$ |
    | params | `n_layers`, `units`: $L$, $H$ |
    """
    return _n_step_cost(func, in_data, 'rnn', 1,
                        kwargs.get('fma_1flop', False))


def calc_n_step_bi_rnn_tanh(
        func: 'chainer.functions.rnn.n_step_rnn.NStepBiRNNTanh', in_data,
        **kwargs):
    r"""NStepBiRNNTanh

    $$y_t = [h^f_t; h^b_t]$$

    NStepRNNTanh run forward ($h^f_t$ from $h^f_{t-1}$) and backward
    ($h^b_t$ from $h^b_{t+1}$) in time: every layer costs twice, and layer
    $l > 0$ takes the concatenation $I_l = 2H$.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $2 T H \sum_l (I_l + H + 2)$ |
    | FLOPs (no FMA) | $2 T H \sum_l (2 (I_l + H) + 2)$ |
    | mread | $\|h_x\| + \|w\| + \|x\|$ |
    | mwrite | $\|h_y\| + \|y\| = \|h_x\| + 2 T H$ |
    | params | `n_layers`, `units`: $L$, $H$ |
    """
    return _n_step_cost(func, in_data, 'rnn', 2,
                        kwargs.get('fma_1flop', False))


def calc_n_step_bi_rnn_relu(
        func: 'chainer.functions.rnn.n_step_rnn.NStepBiRNNReLU', in_data,
        **kwargs):
    r"""NStepBiRNNReLU

    $$y_t = [h^f_t; h^b_t]$$

    NStepRNNReLU run forward ($h^f_t$ from $h^f_{t-1}$) and backward
    ($h^b_t$ from $h^b_{t+1}$) in time: every layer costs twice, and layer
    $l > 0$ takes the concatenation $I_l = 2H$.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $2 T H \sum_l (I_l + H + 2)$ |
    | FLOPs (no FMA) | $2 T H \sum_l (2 (I_l + H) + 2)$ |
    | mread | $\|h_x\| + \|w\| + \|x\|$ |
    | mwrite | $\|h_y\| + \|y\| = \|h_x\| + 2 T H$ |
    | params | `n_layers`, `units`: $L$, $H$ |
    """
    return _n_step_cost(func, in_data, 'rnn', 2,
                        kwargs.get('fma_1flop', False))


def calc_n_step_gru(
        func: 'chainer.functions.rnn.n_step_gru.NStepGRU', in_data,
        **kwargs):
    r"""NStepGRU

    $$h_t = (1 - z) n + z h_{t-1}$$

    With $r, z = \sigma(W x_t + b_W + R h_{t-1} + b_R)$ and
    $n = \tanh(W_n x_t + b_{Wn} + r (R_n h_{t-1} + b_{Rn}))$. cuDNN stacked
    GRU over $T$ tokens, $L$ layers of $H$ units (input $I_l$ as
    NStepRNNTanh). Per token and unit: $3 (I_l + H)$ multiply-adds
    for the 3 gates; 2 additions and 2 sigmoids for $r, z$; 1 multiply-add
    and 1 tanh for $n$; 1 subtraction, 1 product and 1 multiply-add for
    $h_t$: 13 single FLOPs and 2 multiply-adds.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $T H \sum_l (3 (I_l + H) + 15)$ |
    | FLOPs (no FMA) | $T H \sum_l (6 (I_l + H) + 17)$ |
    | mread | $\|h_x\| + \|w\| + \|x\|$ |
    | mwrite | $\|h_y\| + \|y\| = \|h_x\| + T H$ |
    | params | `n_layers`, `units`: $L$, $H$ |
    """
    return _n_step_cost(func, in_data, 'gru', 1,
                        kwargs.get('fma_1flop', False))


def calc_n_step_bi_gru(
        func: 'chainer.functions.rnn.n_step_gru.NStepBiGRU', in_data,
        **kwargs):
    r"""NStepBiGRU

    $$y_t = [h^f_t; h^b_t]$$

    NStepGRU run forward ($h^f_t$ from $h^f_{t-1}$) and backward
    ($h^b_t$ from $h^b_{t+1}$) in time: every layer costs twice, and layer
    $l > 0$ takes the concatenation $I_l = 2H$.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $2 T H \sum_l (3 (I_l + H) + 15)$ |
    | FLOPs (no FMA) | $2 T H \sum_l (6 (I_l + H) + 17)$ |
    | mread | $\|h_x\| + \|w\| + \|x\|$ |
    | mwrite | $\|h_y\| + \|y\| = \|h_x\| + 2 T H$ |
    | params | `n_layers`, `units`: $L$, $H$ |
    """
    return _n_step_cost(func, in_data, 'gru', 2,
                        kwargs.get('fma_1flop', False))


def calc_n_step_lstm(
        func: 'chainer.functions.rnn.n_step_lstm.NStepLSTM', in_data,
        **kwargs):
    r"""NStepLSTM

    $$c_t = \tanh(a)\sigma(i) + \sigma(f) c_{t-1},\ h_t = \sigma(o)\tanh(c_t)$$

    With $a, i, f, o = W x_t + b_W + R h_{t-1} + b_R$. cuDNN stacked LSTM
    over $T$ tokens, $L$ layers of $H$ units (input $I_l$ as
    NStepRNNTanh). Per token and unit: $4 (I_l + H)$ multiply-adds
    for the 4 gates, 4 additions, then the LSTM cell (16 single FLOPs and 1
    multiply-add, see LSTM).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $T H \sum_l (4 (I_l + H) + 21)$ |
    | FLOPs (no FMA) | $T H \sum_l (8 (I_l + H) + 22)$ |
    | mread | $\|h_x\| + \|c_x\| + \|w\| + \|x\|$ |
    | mwrite | $\|h_y\| + \|c_y\| + \|y\| = \|h_x\| + \|c_x\| + T H$ |
    | params | `n_layers`, `units`: $L$, $H$ |
    """
    return _n_step_cost(func, in_data, 'lstm', 1,
                        kwargs.get('fma_1flop', False))


def calc_n_step_bi_lstm(
        func: 'chainer.functions.rnn.n_step_lstm.NStepBiLSTM', in_data,
        **kwargs):
    r"""NStepBiLSTM

    $$y_t = [h^f_t; h^b_t]$$

    NStepLSTM run forward ($h^f_t$, $c^f_t$ from step $t-1$) and backward
    (from step $t+1$) in time: every layer costs twice, and layer
    $l > 0$ takes the concatenation $I_l = 2H$.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $2 T H \sum_l (4 (I_l + H) + 21)$ |
    | FLOPs (no FMA) | $2 T H \sum_l (8 (I_l + H) + 22)$ |
    | mread | $\|h_x\| + \|c_x\| + \|w\| + \|x\|$ |
    | mwrite | $\|h_y\| + \|c_y\| + \|y\| = \|h_x\| + \|c_x\| + 2 T H$ |
    | params | `n_layers`, `units`: $L$, $H$ |
    """
    return _n_step_cost(func, in_data, 'lstm', 2,
                        kwargs.get('fma_1flop', False))


def calc_cudnn_rnn_weight_concat(
        func: 'chainer.functions.rnn.n_step_rnn.CudnnRNNWeightConcat',
        in_data, **kwargs):
    r"""CudnnRNNWeightConcat

    Packs the weight matrices and bias vectors of an NStep RNN into the one
    flat array cuDNN expects (GPU only). Pure data movement: every element
    is read once and written once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $0$ |
    | mread | $\sum_i \|W_i\| + \sum_i \|b_i\|$ |
    | mwrite | $\sum_i \|W_i\| + \sum_i \|b_i\|$ |
    | params | `n_layers` |
    """
    n = total_size(in_data)
    return (0, n, n, {'n_layers': func.n_layers})


# Chainer 6 keeps the same classes (same attributes and inputs) elsewhere.
_CHAINER6_TARGETS = (
    ('chainer.functions.activation.lstm.LSTM', calc_lstm),
    ('chainer.functions.activation.lstm.LSTMGrad', calc_lstm_grad),
    ('chainer.functions.activation.slstm.SLSTM', calc_slstm),
    ('chainer.functions.activation.slstm.SLSTMGrad', calc_slstm_grad),
    ('chainer.functions.activation.tree_lstm.TreeLSTM', calc_tree_lstm),
    ('chainer.functions.connection.n_step_rnn.NStepRNNTanh',
     calc_n_step_rnn_tanh),
    ('chainer.functions.connection.n_step_rnn.NStepRNNReLU',
     calc_n_step_rnn_relu),
    ('chainer.functions.connection.n_step_rnn.NStepBiRNNTanh',
     calc_n_step_bi_rnn_tanh),
    ('chainer.functions.connection.n_step_rnn.NStepBiRNNReLU',
     calc_n_step_bi_rnn_relu),
    ('chainer.functions.connection.n_step_gru.NStepGRU', calc_n_step_gru),
    ('chainer.functions.connection.n_step_gru.NStepBiGRU',
     calc_n_step_bi_gru),
    ('chainer.functions.connection.n_step_lstm.NStepLSTM',
     calc_n_step_lstm),
    ('chainer.functions.connection.n_step_lstm.NStepBiLSTM',
     calc_n_step_bi_lstm),
    ('chainer.functions.connection.n_step_rnn.CudnnRNNWeightConcat',
     calc_cudnn_rnn_weight_concat),
)

for _target, _calc in _CHAINER6_TARGETS:
    register(_target)(_calc)
del _target, _calc
