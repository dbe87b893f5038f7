r"""Cost calculators for ``chainer.functions.loss``.

Conventions shared by the calculators of this module:

* an elementary arithmetic operation, comparison, select or elementary
  function (exp, log, log1p, sqrt) on one element is 1 FLOP;
* a dot product (or sum of products, including a sum of squares) of length
  $k$ costs $k$ FLOPs with FMA and $2k - 1$ without ($k$ multiplications,
  $k - 1$ additions); a plain sum of $k$ elements costs $k - 1$ additions
  and a mean adds 1 division;
* the max-subtraction and other rewrites that Chainer does for numerical
  stability are not counted: formulas are counted as written
  mathematically (e.g. $\log\mathrm{softmax}(x) = x - \log\sum\exp x$);
* scalar constants, the rule of every calculator module: a scalar held by
  the node (a hyper-parameter such as a margin or Huber's delta, or a class
  constant such as ``ignore_label = -1``) that is an operand of the
  per-element computation is read once and counts 1 element of mread; a
  scalar consumed only by per-channel, per-row or per-group precomputation
  is folded into it and not counted; numeric literals written in the
  formula (the 1 of the hinge, a halving) are not reads. Here Huber's
  delta, the margin of Contrastive and Triplet (an operand of every
  sample's loss), the ignore labels and the $\epsilon$ of the KL
  divergence count 1 each; CTC's blank symbol only builds the path labels
  (index arithmetic) and is not counted;
* mwrite counts the loss output only: the intermediate arrays Chainer keeps
  on the node for the backward pass (differences, cached softmax scores,
  lattices) are working buffers and are not counted;
* every input is read in its own dtype: integer labels, index and length
  arrays (int32 or int64) count their own bytes, not those of the float
  data; a scalar constant counts one element of the data's dtype.
"""

import numpy

from chainer.functions.loss import mean_absolute_error
from chainer.functions.loss.absolute_error import AbsoluteError
from chainer.functions.loss.contrastive import Contrastive
from chainer.functions.loss.cross_covariance import CrossCovariance
from chainer.functions.loss.ctc import ConnectionistTemporalClassification
from chainer.functions.loss.decov import DeCov
from chainer.functions.loss.hinge import Hinge
from chainer.functions.loss.huber_loss import HuberLoss
from chainer.functions.loss.mean_absolute_error import MeanAbsoluteError
from chainer.functions.loss.mean_squared_error import MeanSquaredError
from chainer.functions.loss.negative_sampling import NegativeSamplingFunction
from chainer.functions.loss.negative_sampling import \
    NegativeSamplingFunctionGrad
from chainer.functions.loss.sigmoid_cross_entropy import SigmoidCrossEntropy
from chainer.functions.loss.sigmoid_cross_entropy import \
    SigmoidCrossEntropyGrad
from chainer.functions.loss.softmax_cross_entropy import \
    _SoftmaxCrossEntropyGrad_NoDoubleBackprop
from chainer.functions.loss.softmax_cross_entropy import SoftmaxCrossEntropy
from chainer.functions.loss.squared_error import SquaredError
from chainer.functions.loss.triplet import Triplet

from chainer_computational_cost.cost_calculators import c_strides
from chainer_computational_cost.cost_calculators import dot_flops
from chainer_computational_cost.cost_calculators import elements
from chainer_computational_cost.cost_calculators import old_style_backward
from chainer_computational_cost.cost_calculators import Peak
from chainer_computational_cost.cost_calculators import reshape_view
from chainer_computational_cost.cost_calculators import size_of
from chainer_computational_cost.cost_calculators import uses_cudnn

#: The family of calls whose time one fit of a calibration predicts
#: (``analysis.calibration.FAMILIES``): this module's.
TIME_FAMILY = 'loss'


#: Whether MeanAbsoluteError computes float16 in float32 (Chainer 7).
_MAE_FLOAT32 = hasattr(mean_absolute_error, '_get_intermediate_dtype')


def _sum_flops(n, n_out=1):
    """Additions reducing ``n`` elements into ``n_out`` sums."""
    return max(n - n_out, 0)


def _logsumexp_flops(n):
    r"""FLOPs of $\log \sum_i \exp x_i$ over ``n`` terms: ``n`` exps,
    ``n - 1`` additions and a log."""
    return 2 * n


def _per_sample_reduce(n, reduce):
    """(FLOPs, mwrite) of reducing ``n`` per-sample losses: ``'mean'`` sums
    them and divides once; any other mode writes them as they are."""
    if reduce == 'mean':
        return _sum_flops(n) + 1, 1
    return 0, n


def _masked_mean_flops(n, normalize):
    """FLOPs of the mean of ``n`` masked losses: the sum and one scaling,
    plus, when normalizing by the number of valid labels, counting them
    (``n - 1`` additions) and clamping the count to at least 1."""
    flops = _sum_flops(n) + 1
    if normalize:
        flops += _sum_flops(n) + 1
    return flops


def _pair_cost(x0, x1, flops_per_element):
    """Cost of an element-wise loss of two same-shaped inputs."""
    n = x0.size
    return (flops_per_element * n, size_of(x0) + size_of(x1), n, {})


def _bytes(x):
    """Bytes of an array."""
    return x.size * x.dtype.itemsize


def calc_absolute_error(func: AbsoluteError, in_data, **kwargs):
    r"""AbsoluteError

    $$y = |x_0 - x_1|$$

    A subtraction and an absolute value per element.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $2 \|x_0\|$ |
    | mread | $\|x_0\| + \|x_1\|$ |
    | mwrite | $\|x_0\|$ |
    | params | none |
    """
    x0, x1 = in_data
    return _pair_cost(x0, x1, 2)


def calc_squared_error(func: SquaredError, in_data, **kwargs):
    r"""SquaredError

    $$y = (x_0 - x_1)^2$$

    A subtraction and a multiplication per element.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $2 \|x_0\|$ |
    | mread | $\|x_0\| + \|x_1\|$ |
    | mwrite | $\|x_0\|$ |
    | params | none |
    """
    x0, x1 = in_data
    return _pair_cost(x0, x1, 2)


def scratch_squared_error(func: SquaredError, in_data, **kwargs):
    r"""The difference $x_0 - x_1$ before it is squared into y.

    NumPy and CuPy: `x0 - x1` ($\|x_0\|$ elements) alive while `diff *
    diff` makes y.
    """
    return _bytes(in_data[0])


def calc_mean_squared_error(func: MeanSquaredError, in_data, **kwargs):
    r"""MeanSquaredError

    $$y = \frac{1}{n} \sum_i (x_{0,i} - x_{1,i})^2, \quad n = \|x_0\|$$

    $n$ subtractions, the dot product $d \cdot d$ of the differences ($n$
    FLOPs with FMA, $2n - 1$ without) and one division.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $2 \|x_0\| + 1$ |
    | FLOPs (no FMA) | $3 \|x_0\|$ |
    | mread | $\|x_0\| + \|x_1\|$ |
    | mwrite | $1$ |
    | params | none |
    """
    x0, x1 = in_data
    fma = kwargs.get('fma_1flop', False)
    n = x0.size
    flops = n + dot_flops(1, n, fma) + 1
    return (flops, size_of(x0) + size_of(x1), 1, {})


def scratch_mean_squared_error(func: MeanSquaredError, in_data, **kwargs):
    r"""The difference $x_0 - x_1$, dotted with itself.

    NumPy and CuPy: `(x0 - x1).ravel()` ($\|x_0\|$ elements) before `dot`
    makes the scalar.
    """
    return _bytes(in_data[0])


def calc_mean_absolute_error(func: MeanAbsoluteError, in_data, **kwargs):
    r"""MeanAbsoluteError

    $$y = \frac{1}{n} \sum_i |x_{0,i} - x_{1,i}|, \quad n = \|x_0\|$$

    $n$ subtractions, $n$ absolute values, $n - 1$ additions and one
    division.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $3 \|x_0\|$ |
    | mread | $\|x_0\| + \|x_1\|$ |
    | mwrite | $1$ |
    | params | none |
    """
    x0, x1 = in_data
    n = x0.size
    flops = 2 * n + _sum_flops(n) + 1
    return (flops, size_of(x0) + size_of(x1), 1, {})


def scratch_mean_absolute_error(func: MeanAbsoluteError, in_data,
                                **kwargs):
    r"""`abs` of the difference (kept on the node) before its sum.

    NumPy and CuPy: `abs(diff)` ($\|x_0\|$ elements); float16 differences
    are first copied to float32 (Chainer 7), so $2 \|x_0\|$ float32
    elements. The difference itself is kept on the node.
    """
    x0 = in_data[0]
    if x0.dtype == numpy.float16 and _MAE_FLOAT32:
        return 2 * 4 * x0.size
    return _bytes(x0)


def calc_huber_loss(func: HuberLoss, in_data, **kwargs):
    r"""HuberLoss

    $$y = a^2/2 \text{ if } |a| \le \delta \text{ else } \delta|a|-\delta^2/2$$

    where $a = x - t$. Both branches are counted on every element (a
    data-independent figure): the subtraction, the absolute value, the
    square, the halving, the linear branch as one multiply-add
    ($\delta^2/2$ is a constant) and a compare-and-select: 6 FLOPs per
    element with FMA, 7 without. With
    `reduce='sum_along_second_axis'` the losses are summed along axis 1
    ($c$ = `x.shape[1]`), which costs $\|x\| - \|x\|/c$ additions and writes
    $\|x\|/c$ elements; with `reduce='no'` $\|x\|$ elements are written.
    $\delta$, an operand of every element's loss, is read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $6 \|x\|$ (+ $\|x\| - \|x\|/c$ when summed) |
    | FLOPs (no FMA) | $7 \|x\|$ (+ $\|x\| - \|x\|/c$ when summed) |
    | mread | $\|x\| + \|t\| + 1$ |
    | mwrite | $\|x\|/c$ (summed) or $\|x\|$ |
    | params | `delta`, `reduce` |
    """
    x, t = in_data
    fma = kwargs.get('fma_1flop', False)
    n = x.size
    flops = (6 if fma else 7) * n
    out = n
    if func.reduce == 'sum_along_second_axis':
        out = n // x.shape[1] if x.shape[1] else 0
        flops += _sum_flops(n, out)
    params = {'delta': float(func.delta), 'reduce': func.reduce}
    return (flops, size_of(x) + size_of(t) + elements(1, x), out, params)


def scratch_huber_loss(func: HuberLoss, in_data, **kwargs):
    r"""The linear part $\|x - t\|$ beside the squared part (y).

    NumPy and CuPy: `x0 - x1` ($\|x\|$ elements) lives beside the squared
    part, which becomes y in place; with `reduce='sum_along_second_axis'`
    both are summed into y: $2 \|x\|$.
    """
    x = in_data[0]
    if func.reduce == 'sum_along_second_axis':
        return 2 * _bytes(x)
    return _bytes(x)


def calc_contrastive(func: Contrastive, in_data, **kwargs):
    r"""Contrastive

    $$L_n = \frac{1}{2} (y_n d_n^2 + (1 - y_n) \max(m - d_n, 0)^2)$$

    where $d_n$ is the Euclidean distance between rows $x_{0,n}$, $x_{1,n}$.

    With $x_0, x_1$ of shape $(N, K)$: $NK$ subtractions, $N$ sums of
    squares of length $K$ ($NK$ FLOPs with FMA, $N(2K - 1)$ without), then
    per sample a square root, $m - d$, a max, $1 - y$, a square, a product,
    the multiply-add $y d^2 + \ldots$ and the halving: 8 FLOPs with FMA, 9
    without. `reduce='mean'` adds $N - 1$ additions and one division. The
    margin $m$, an operand of every sample's loss, is read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $2 \|x_0\| + 8N$ (+ $N$ for mean) |
    | FLOPs (no FMA) | $3 \|x_0\| + 8N$ (+ $N$ for mean) |
    | mread | $\|x_0\| + \|x_1\| + \|y\| + 1$ |
    | mwrite | $1$ (mean) or $N$ |
    | params | `margin`, `reduce` |
    """
    x0, x1, y = in_data
    fma = kwargs.get('fma_1flop', False)
    n_batch, k = x0.shape
    per_sample = 8 if fma else 9
    red_flops, out = _per_sample_reduce(n_batch, func.reduce)
    flops = (x0.size + dot_flops(n_batch, k, fma) + per_sample * n_batch
             + red_flops)
    params = {'margin': float(func.margin), 'reduce': func.reduce}
    mread = size_of(x0) + size_of(x1) + size_of(y) + elements(1, x0)
    return (flops, mread, out, params)


def scratch_contrastive(func: Contrastive, in_data, **kwargs):
    r"""The difference and its square, then the per-sample terms.

    NumPy: `x0 - x1` (alive to the end) and `diff ** 2` ($2 \|x_0\|$
    elements) before the sum over axis 1 ($R = N$ elements); then the
    distance, margin and clipped distance ($R$ each) and the loss's terms
    in the dtype the labels and x promote to (float64 for int32 labels:
    `y * dist_sq`, `1 - y`, the products and sums, a new array each below
    256 KiB), the last copied into y for `reduce='no'`. Peak: $\max(2
    \|x_0\| + R, \|x_0\| + \ldots)$ above y.

    CuPy: the same arrays, a new one for every operation.
    """
    x0, _, y = in_data
    e = _numpy(kwargs)
    big, n = _bytes(x0), x0.shape[0]
    rows = n * x0.dtype.itemsize
    f = n * numpy.result_type(y.dtype, x0.dtype).itemsize
    p = Peak().alloc(big, big, rows).free(big)
    p.alloc(rows, rows, rows).free(rows)
    p.alloc(f, n * y.dtype.itemsize, f).free(n * y.dtype.itemsize)
    p.op(f, f, e).op(f, f, e).free(f).op(f, f, e)
    if func.reduce == 'mean':
        return p.peak
    return p.alloc(rows).peak - rows


def calc_triplet(func: Triplet, in_data, **kwargs):
    r"""Triplet

    $$L_i = \max(\sum_k (a_{ik} - p_{ik})^2 - (a_{ik} - n_{ik})^2 + m, 0)$$

    With inputs of shape $(N, K)$: $2NK$ subtractions, then per sample
    $\sum_k (d^+_k)^2 - (d^-_k)^2$ as $2K$ chained multiply-adds ($2K$
    FLOPs with FMA, $4K - 1$ without), the margin addition and the max.
    `reduce='mean'` adds $N - 1$ additions and one division. The margin $m$,
    an operand of every sample's loss, is read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $4 \|a\| + 2N$ (+ $N$ for mean) |
    | FLOPs (no FMA) | $6 \|a\| + N$ (+ $N$ for mean) |
    | mread | $\|a\| + \|p\| + \|n\| + 1$ |
    | mwrite | $1$ (mean) or $N$ |
    | params | `margin`, `reduce` |
    """
    anchor, positive, negative = in_data
    fma = kwargs.get('fma_1flop', False)
    n_batch, k = anchor.shape
    red_flops, out = _per_sample_reduce(n_batch, func.reduce)
    flops = (2 * anchor.size + dot_flops(n_batch, 2 * k, fma)
             + 2 * n_batch + red_flops)
    mread = (size_of(anchor) + size_of(positive) + size_of(negative)
             + elements(1, anchor))
    params = {'margin': float(func.margin), 'reduce': func.reduce}
    return (flops, mread, out, params)


def scratch_triplet(func: Triplet, in_data, **kwargs):
    r"""The two squared differences, subtracted.

    NumPy: $(a - p)^2$ and $(a - n)^2$ (each squared in place from 256 KiB
    on) and their difference (written into the first from 256 KiB on):
    $2 \|a\|$ elements from 256 KiB, $3 \|a\|$ below. CuPy: a new array
    for every operation: $3 \|a\|$. The per-sample hinge (kept on the
    node) and y for `reduce='no'` ($N$ elements each) come after the peak:
    less that.
    """
    x = _bytes(in_data[0])
    e = _numpy(kwargs)
    p = Peak().alloc(x).op(x, x, e).alloc(x).op(x, x, e).op(x, x, e)
    # the hinge kept on the node and, for reduce='no', y (N each) are
    # made after the peak
    rows = in_data[0].shape[0] * in_data[0].dtype.itemsize
    return p.peak - rows * (2 if func.reduce == 'no' else 1)


def _covariance_flops(n_centred, n, m, k, half_squared_sum, fma):
    """FLOPs of centring ``n_centred`` elements of ``(n, .)`` matrices
    (column means and subtractions), the ``(m, k)`` product of the centred
    matrices divided by ``n``, and optionally half its squared Frobenius
    norm."""
    flops = 2 * n_centred + dot_flops(m * k, n, fma) + m * k
    if half_squared_sum:
        flops += dot_flops(1, m * k, fma) + 1
    return flops


def calc_cross_covariance(func: CrossCovariance, in_data, **kwargs):
    r"""CrossCovariance

    $$C = (y - \bar{y})^\top (z - \bar{z}) / N, \quad L = \|C\|_F^2 / 2$$

    With $y$ of shape $(N, M)$ and $z$ of shape $(N, K)$: the column means
    ($\|y\| + \|z\|$: sums and divisions) and the centring ($\|y\| + \|z\|$
    subtractions), $MK$ dot products of length $N$, $MK$ divisions, and for
    `reduce='half_squared_sum'` the dot product $C \cdot C$ and one
    halving.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $2\|y\| + 2\|z\| + NMK + MK$ (+ $MK + 1$ for the sum) |
    | FLOPs (no FMA) | $2\|y\| + 2\|z\| + 2NMK$ (+ $2MK$ for the sum) |
    | mread | $\|y\| + \|z\|$ |
    | mwrite | $1$ (sum) or $MK$ |
    | params | `reduce` |
    """
    y, z = in_data
    fma = kwargs.get('fma_1flop', False)
    n, m = y.shape
    k = z.shape[1]
    half = func.reduce == 'half_squared_sum'
    flops = _covariance_flops(y.size + z.size, n, m, k, half, fma)
    return (flops, size_of(y) + size_of(z), 1 if half else m * k,
            {'reduce': func.reduce})


def scratch_cross_covariance(func: CrossCovariance, in_data, **kwargs):
    r"""The centred y and z, and the covariance before its sum.

    NumPy and CuPy: `y - mean` and `z - mean` ($\|y\| + \|z\|$ elements)
    alive while `dot` makes the covariance ($M_y M_z$ elements, $M =
    \|\cdot\| / N$), which is the output for `reduce='no'` and summed into
    the scalar for `'half_squared_sum'`.
    """
    y, z = in_data
    centred = _bytes(y) + _bytes(z)
    if func.reduce == 'no':
        return centred
    n = len(y)
    cov = (y.size // n) * (z.size // n) if n else 0
    return centred + cov * numpy.result_type(y.dtype, z.dtype).itemsize


def calc_decov(func: DeCov, in_data, **kwargs):
    r"""DeCov

    $$C = (h - \bar{h})^\top (h - \bar{h}) / N, \quad L = \|C\|_F^2 / 2$$

    with the diagonal of $C$ set to zero.

    With $h$ of shape $(N, M)$: the column means ($\|h\|$) and centring
    ($\|h\|$), the full $M \times M$ product ($M^2$ dot products of length
    $N$), $M^2$ divisions (zeroing the diagonal is data movement), and for
    `reduce='half_squared_sum'` the dot product $C \cdot C$ and one
    halving. The centred $h$ and the matrix kept for backward are not
    counted as writes.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $2\|h\| + NM^2 + M^2$ (+ $M^2 + 1$ for the sum) |
    | FLOPs (no FMA) | $2\|h\| + 2NM^2$ (+ $2M^2$ for the sum) |
    | mread | $\|h\|$ |
    | mwrite | $1$ (sum) or $M^2$ |
    | params | `reduce` |
    """
    h, = in_data
    fma = kwargs.get('fma_1flop', False)
    n, m = h.shape
    half = func.reduce == 'half_squared_sum'
    flops = _covariance_flops(h.size, n, m, m, half, fma)
    return (flops, size_of(h), 1 if half else m * m,
            {'reduce': func.reduce})


def calc_hinge(func: Hinge, in_data, **kwargs):
    r"""Hinge

    $$L_{nk} = \max(0, 1 + s_{nk} x_{nk})^p$$

    where $s_{nk} = -1$ for the target class $k = t_n$ and 1 otherwise.

    With $x$ of shape $(N, K)$: $N$ negations of the target scores, then per
    element an addition and a max, plus a square for `norm='L2'` ($p = 2$).
    `reduce='mean'` sums all $\|x\|$ losses and divides once by $N$.
    The 1 of the formula is a literal, not a read.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $N + 2\|x\|$ (+ $\|x\|$ for L2) (+ $\|x\|$ for mean) |
    | mread | $\|x\| + \|t\|$ |
    | mwrite | $1$ (mean) or $\|x\|$ |
    | params | `norm`, `reduce` |
    """
    x, t = in_data
    n = x.size
    flops = t.size + 2 * n
    if func.norm == 'L2':
        flops += n
    red_flops, out = _per_sample_reduce(n, func.reduce)
    params = {'norm': func.norm, 'reduce': func.reduce}
    return (flops + red_flops, size_of(x) + size_of(t), out, params)


def scratch_hinge(func: Hinge, in_data, **kwargs):
    r"""The copy of x and `1 + copy` before the max that is kept.

    NumPy: `numpy.copy(x)` (its elements at the labels negated), `1 +`
    it and `numpy.maximum(0, ...)` ($3 \|x\|$), of which the last is kept
    on the function for the backward: $2 \|x\|$ above what the call
    leaves. With `reduce='no'` `numpy.array` copies the loss into y
    ($\|x\|$, made when the first two are freed): $\|x\|$. CuPy: the same
    arrays (`x.copy()`, `1 +`, the max).
    """
    x = _bytes(in_data[0])
    return x if func.reduce == 'no' else 2 * x


def calc_sigmoid_cross_entropy(func: SigmoidCrossEntropy, in_data,
                               **kwargs):
    r"""SigmoidCrossEntropy

    $$L_i = [t_i \ne -1] \left( \log(1 + e^{x_i}) - t_i x_i \right)$$

    Per element ($n = \|x\|$): the ignore-label test, an exp, a log1p, the
    multiply-subtract $\ldots - t x$ (1 FLOP with FMA, 2 without) and the
    masking: 5 FLOPs with FMA, 6 without. The reduction costs $r = n$ for
    `reduce='mean'` (sum and one scaling), $r = 2n$ when `normalize=True`
    also counts the valid labels and clamps the count to at least 1, and
    $r = 0$ for `reduce='no'`. The ignore label (the class constant $-1$),
    an operand of every element's test, is read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $5n + r$ |
    | FLOPs (no FMA) | $6n + r$ |
    | mread | $\|x\| + \|t\| + 1$ |
    | mwrite | $1$ (mean) or $n$ |
    | params | `normalize`, `reduce` |
    """
    x, t = in_data
    fma = kwargs.get('fma_1flop', False)
    n = x.size
    flops = (5 if fma else 6) * n
    out = n
    if func.reduce == 'mean':
        flops += _masked_mean_flops(n, func.normalize)
        out = 1
    params = {'normalize': bool(func.normalize), 'reduce': func.reduce}
    return (flops, size_of(x) + size_of(t) + elements(1, x), out, params)


def _numpy(kwargs):
    """Whether a scratch function is asked about NumPy's path (NumPy's
    temporary elision applies) rather than CuPy's."""
    return kwargs.get('backend', 'numpy') == 'numpy'


def scratch_sigmoid_cross_entropy(func: SigmoidCrossEntropy, in_data,
                                  **kwargs):
    r"""The temporaries of the stable cross entropy expression.

    NumPy: `x >= 0` (bool), `t - (x >= 0)` (t's dtype), its product with
    x (in the dtype x and t promote to: float64 for float32 x and int32
    labels, $P$ bytes per element), `abs(x)`, its negation, `exp` and
    `log1p` (x's dtype, $X$ bytes per element, two alive at a time beside
    the product), the difference, the masking and the negation (each a new
    array of $P$ bytes per element below 256 KiB, written in place from 256
    KiB on: temporary elision). With $n = \|x\|$ the peak above the kept
    ignore mask is $n \max(P + 2X, 2P + X)$ bytes (float32 x, int32 t:
    $16n$ from 256 KiB, $20n$ below); for `reduce='no'` the cast copy
    (the output) is made while the loss is alive. The mask stays on the
    node (not scratch). The buffers in which the product casts x and the
    labels to float64 ($\min(8192, n)$ elements each) are not counted
    (NumPy's ufunc buffers, see docs/memory.md).

    CuPy: the same expression, a new array for every operation.
    """
    x, t = in_data
    e = _numpy(kwargs)
    n = x.size
    xs, ts = n * x.dtype.itemsize, n * t.dtype.itemsize
    ps = n * numpy.result_type(x.dtype, t.dtype).itemsize
    p = Peak().alloc(n).alloc(ts).free(n).alloc(ps).free(ts)
    p.alloc(xs).op(xs, xs, e).alloc(xs).free(xs).alloc(xs).free(xs)
    p.op(ps, ps, e).free(xs).op(ps, ps, e).op(ps, ps, e)
    if func.reduce == 'mean':
        return p.peak
    return p.alloc(xs).peak - xs


def calc_softmax_cross_entropy(func: SoftmaxCrossEntropy, in_data,
                               **kwargs):
    r"""SoftmaxCrossEntropy

    $$L_j = -[t_j \ne \mathrm{ignore}]\, w_{t_j} \log y_{t_j, j}$$

    where $y$ is the softmax of $x$ along axis 1: $C$ = `x.shape[1]`
    classes and $M = \|x\|/C$ positions. The log-softmax over all classes
    costs $3\|x\|$ (an exp per element, $C-1$ additions and a log per
    position, a subtraction per element).

    With integer labels $t$ ($\|t\| = M$), the gather is data movement; the
    ignore-label test and the masking cost $2M$ (`ignore_label`, an operand
    of every label's test, is read once); a `class_weight` ($C$
    elements read) weights only the $M$ selected entries, $w_{t_j}$ times
    $\log y_{t_j, j}$: $M$ multiplications (Chainer's CPU code weights all
    $\|x\|$ entries of the log-softmax, but only the selected ones reach
    the loss); the reduction costs $r = 2M$
    for `reduce='mean'` with `normalize=True` (sum, count of the valid
    labels, clamp to 1, scaling with the sign folded in), $r = M$ with
    `normalize=False`, and $r = M$ negations for `reduce='no'`.

    With a soft target (float $t$ shaped as $x$, Chainer >= 7), each
    position costs a dot product $t \cdot \log y$ of length $C$ ($\|x\|$
    with FMA, $2\|x\| - M$ without), plus $3\|x\|$ for
    $\log(t + \epsilon) - \log y$ when `soft_target_loss='kl-divergence'`
    (the class constant $\epsilon$, added to every element, is read once);
    the reduction costs $r' = M$ for `reduce='mean'`, $M$ negations for the
    cross-entropy with `reduce='no'`, 0 for the KL divergence with
    `reduce='no'`. The softmax cached for backward (`cache_score=True`) is
    not counted.

    | Item | Value |
    |:-----|:------|
    | FLOPs, labels | $3\|x\| + 2M + r$ (+ $M$ with `class_weight`) |
    | FLOPs, soft target (FMA) | $4\|x\| + r'$ (+ $3\|x\|$ for KL) |
    | FLOPs, soft target (no FMA) | $5\|x\| - M + r'$ (+ $3\|x\|$ for KL) |
    | mread, labels | $\|x\| + \|t\| + 1$ (+ $C$ with `class_weight`) |
    | mread, soft target | $\|x\| + \|t\|$ (+ 1 for KL) |
    | mwrite | $1$ (mean) or $M$ |
    | params | `reduce`, `normalize`, `ignore_label`, `class_weight` (bool) |
    | params, soft target | `reduce`, `soft_target_loss` |
    """
    x, t = in_data
    fma = kwargs.get('fma_1flop', False)
    n = x.size
    n_class = x.shape[1]
    m = n // n_class if n_class else 0
    mean = func.reduce == 'mean'
    flops = 3 * n
    mread = size_of(x) + size_of(t)
    params = {'reduce': func.reduce, 'normalize': bool(func.normalize),
              'ignore_label': int(func.ignore_label),
              'class_weight': func.class_weight is not None}
    if t.dtype.kind == 'f':
        loss_kind = getattr(func, 'soft_target_loss', 'cross-entropy')
        params = {'reduce': func.reduce, 'soft_target_loss': loss_kind}
        flops += dot_flops(m, n_class, fma)
        if loss_kind == 'kl-divergence':
            flops += 3 * n
            mread += elements(1, x)
        elif not mean:
            flops += m
        if mean:
            flops += _sum_flops(m) + 1
    else:
        flops += 2 * m
        mread += elements(1, x)
        if func.class_weight is not None:
            # only the selected entries are weighted
            flops += m
            mread += size_of(func.class_weight)
        if mean:
            flops += _masked_mean_flops(m, func.normalize)
        else:
            flops += m
    return (flops, mread, 1 if mean else m, params)


def _fancy_index(t):
    """Bytes NumPy's fancy indexing with the labels ``t`` and an int64
    ``arange`` takes beyond the gathered values: when the labels are not
    int64 its buffered iterator casts both index arrays, a buffer of
    ``min(8192, |t|)`` int64 each (measured), counted as ``|t|`` each: an
    upper bound from 8192 labels on, that keeps the figure a line in the
    batch size (the projection draws lines)."""
    if t.dtype == numpy.intp:
        return 0
    return 16 * t.size


def _softmax_rows(x):
    """Bytes of one of logsumexp's row arrays (the max, the sums)."""
    return x.size // x.shape[1] * x.dtype.itemsize if x.shape[1] else 0


def _soft_target(func, x, t):
    return bool(getattr(func, 'soft_target', False)) or (
        x.ndim == t.ndim and x.shape == t.shape)


def scratch_softmax_cross_entropy(func: SoftmaxCrossEntropy, in_data,
                                  **kwargs):
    r"""log softmax of x (beside the cached softmax), and per-label arrays.

    NumPy (integer labels): `logsumexp` makes $x - m$ ($\|x\|$) and two row
    arrays ($R = \|x\| / c$ each); `log_y = x - log_z` ($\|x\|$) lives
    through the call, beside `self.y = exp(log_y)` ($\|x\|$, kept on the
    node for the backward when `cache_score`, so not scratch); x of more
    than 2 axes has `log_y` with the class axis moved first reshaped, a
    copy ($\|x\|$, none at batch 1, where the axes merge); then the label
    mask (bool), the masked labels, an int64 `arange`, the int64 copies
    fancy indexing makes of int32 labels (two buffers of its iterator, of
    $\min(8192, \|t\|)$ int64 each, counted as $16 \|t\|$ bytes: an upper
    bound from 8192 labels on, a line in the batch size) and the
    gathered log-probabilities. Peak above what the call leaves: $\|x\|$
    (+ the copy) + the label arrays, and at least $\|x\| + 2R$ without
    `cache_score`. Soft targets: `log_y` and `t * log_y` ($2 \|x\|$), or
    for `'kl-divergence'` `t + eps` and its log beside `log_y` ($3
    \|x\|$, the differences and products written in place from 256 KiB
    on).

    CuPy: `log_y` ($\|x\|$; cuDNN's softmax takes no workspace; without
    cuDNN `logsumexp` adds $2R$ when nothing is cached), then one reduction
    kernel.
    """
    x, t = in_data
    isz = x.dtype.itemsize
    big = x.size * isz
    rows = _softmax_rows(x)
    cached = bool(func.cache_score)
    if kwargs.get('backend', 'numpy') == 'cupy':
        return big if cached or uses_cudnn() else big + 2 * rows
    after = big if cached else 0
    p = Peak().alloc(big, 2 * rows).free(big, rows).alloc(big).free(rows)
    if cached:
        p.alloc(big)
    if _soft_target(func, x, t):
        if getattr(func, 'soft_target_loss', None) == 'kl-divergence':
            p.alloc(big, big).free(big).op(big, big).op(big, big)
        else:
            p.alloc(big)
        return p.peak - after
    shape = x.shape[1:2] + x.shape[:1] + x.shape[2:]
    strides = c_strides(x.shape, isz)
    strides = strides[1:2] + strides[:1] + strides[2:]
    if x.ndim > 2 and reshape_view(shape, strides,
                                   (shape[0], x.size // shape[0])) is None:
        p.alloc(big)
    labels = t.size * (1 + t.dtype.itemsize + 8 + isz) + _fancy_index(t)
    return p.alloc(labels).peak - after


def scratch_softmax_cross_entropy_grad(
        func: _SoftmaxCrossEntropyGrad_NoDoubleBackprop, in_data, **kwargs):
    r"""Per-label arrays (the softmax copy is the output).

    NumPy (integer labels): the cached softmax is copied into the output
    (or recomputed: `logsumexp`'s $\|x\|$ and $2R$ before it), then the
    label mask (bool) and the masked labels, the int64 index arrays (an
    `arange` for 2-d x, two for more axes) and fancy indexing's int64 copies
    of int32 labels ($16 \|t\|$ bytes, a bound as in the forward) with
    the values it decrements
    ($\|t\|$ in x's dtype); with `class_weight`, for 2-d x, a second
    `arange` for gathering the weights. Soft targets: the mask and the
    masked targets ($\|t\|$ bools and $\|t\|$ elements) beside the copy
    of the softmax that the difference replaces.

    CuPy: one elementwise kernel on the cached softmax: none; without a
    cached one, `log_softmax` ($\|x\|$, the output of this call's own
    softmax; $2R$ more without cuDNN).
    """
    x, t = in_data[:2]
    isz = x.dtype.itemsize
    cached = func.y is not None
    rows = _softmax_rows(x) if x.ndim > 1 else 0
    if kwargs.get('backend', 'numpy') == 'cupy':
        if cached:
            return 0
        return x.size * isz + (0 if uses_cudnn() else 2 * rows)
    if _soft_target(func, x, t):
        # y's copy (or log softmax) is freed once gx = y - t is made
        labels = t.size * (1 + t.dtype.itemsize) + x.size * isz
    else:
        index = 8 * t.size if x.ndim == 2 else 16 * t.size
        if x.ndim == 2 and func.class_weight is not None:
            index += 8 * t.size
        labels = (t.size * (1 + t.dtype.itemsize + isz) + index
                  + _fancy_index(t))
    return labels if cached else max(labels, 2 * rows)


def calc_connectionist_temporal_classification(
        func: ConnectionistTemporalClassification, in_data, **kwargs):
    r"""ConnectionistTemporalClassification

    $$L_b = -\log \sum_s \alpha_{T,b,s} \beta_{T,b,s}$$

    With $x$ of shape $(T, B, V)$ (the stacked inputs: `F.stack` is a call
    of its own) and labels of length $L$, paths have $S = 2L + 1$ states.
    The softmax over $V$ ($2\|x\| + (V-1)TB$) and its log ($\|x\|$); then
    the forward and the backward recursions over all $T$ steps, each
    updating $B S$ states with a log-sum-exp of 3 terms (6 FLOPs), an
    accumulation and the emission addition: $16\,TBS$ in all (the
    transition masks are index arithmetic). The loss is a log-sum-exp over
    the $S$ states plus a negation per sample ($B(2S + 1)$), and
    `reduce='mean'` adds $B$. Lattices kept for backward are not counted as
    writes. The blank symbol only builds the path labels (index
    arithmetic): it is not counted as a read.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $4\|x\| - TB + 16\,TBS + 2BS + B$ (+ $B$ for mean) |
    | mread | $\|x\| + \|t\| + 2B$ (the two length arrays) |
    | mwrite | $1$ (mean) or $B$ |
    | params | `blank`, `reduce` |
    """
    input_length, label_length, t, x = in_data
    n_time, n_batch, n_vocab = x.shape
    n_state = 2 * t.shape[1] + 1
    softmax = 2 * x.size + (n_vocab - 1) * n_time * n_batch
    lattice = 2 * n_time * n_batch * n_state * (_logsumexp_flops(3) + 2)
    loss = n_batch * (_logsumexp_flops(n_state) + 1)
    red_flops, out = _per_sample_reduce(n_batch, func.reduce)
    flops = softmax + x.size + lattice + loss + red_flops
    mread = (size_of(x) + size_of(t) + size_of(input_length)
             + size_of(label_length))
    params = {'blank': int(func.blank_symbol), 'reduce': func.reduce}
    # the first input is an int array: the loss is in x's dtype
    return (flops, mread, elements(out, x), params)


def _index_buffers(n, *sizes):
    """Bytes NumPy's fancy indexing takes beside its result when gathering
    ``n`` elements through int32 index arrays of ``sizes`` elements (each
    broadcast to the result): its iterator's buffers of up to 8192 intp
    per index array, and the buffer in which it checks the largest array's
    bounds, cast to intp (measured with NumPy 1.23)."""
    return 8 * (len(sizes) * min(8192, n)
                + max(min(8192, size) for size in sizes))


@old_style_backward
def scratch_connectionist_temporal_classification(
        func: ConnectionistTemporalClassification, in_data, **kwargs):
    r"""log y, its flipped copy and a lattice beside the kept ones.

    Forward, NumPy, with x of shape $(T, B, V)$ ($X = \|x\|$ elements of
    $s$ bytes), labels of length $L$, $S = 2L + 1$ path states, $R = BS$
    (a row of a lattice) and $Q = TBS$ (a lattice): the softmax `yseq`
    ($X$), the returned lattice ($Q$), the int32 paths ($4R$ bytes) and
    path lengths stay on the node (not scratch). The peak is met while the
    backward recursion's lattice is flipped into the returned one:
    `log(yseq)` and its flipped copy ($2X$), that lattice ($Q$), the last
    rows of both recursions ($2R$), the int32 flipped paths and label
    rotation ($8R$ bytes), the input rotation ($4TB$), three aranges ($8B
    + 4T$) and fancy indexing's buffers (see `_index_buffers`: $8 (3
    \min(8192, Q) + \min(8192, \max(TB, R)))$):
    $(2X + Q + 2R) s + 8R + 8B + 4T + 4TB$ bytes + the buffers. Flipping
    `log(yseq)` itself ($V$ where $S$ was, and its buffers over $X$) or a
    step of the recursions (the three transitions, logsumexp's difference
    and exponential: $10R$ above the rows) can be higher on small inputs:
    the figure follows every step of Chainer's code and takes the highest.
    `log` goes through `numpy.ma` (its masks, $X$ bytes each, are freed);
    a softmax that underflows to exactly 0 makes `filled` copy
    `log(yseq)` ($X$ more, not counted: it depends on the values).

    CuPy: `log(yseq)`, its flipped copy and the lattice ($2X + Q$
    elements) beside the two last rows ($2R$): no buffers, masks or
    per-step temporaries (one kernel per step).

    Backward (an old-style Function's, see `old_style_backward`), NumPy
    and CuPy: `exp(prob_trans - total)` (the difference and the
    exponential, $2Q$), then the per-label sums ($\|x\|$ elements) beside
    the exponential, then the sums beside the boolean mask of the steps
    within each input length ($TB$ bytes): the largest of the three, in
    x's dtype but the mask.
    """
    input_length, label_length, t, x = in_data
    n_time, n_batch, n_vocab = x.shape
    n_state = 2 * t.shape[1] + 1
    s = x.dtype.itemsize
    tb, rows = n_time * n_batch, n_batch * n_state
    big, lattice, row = x.size * s, tb * n_state * s, rows * s
    if kwargs.get('backward', False):
        return max(2 * lattice, lattice + big, big + tb)
    if not _numpy(kwargs):
        return 2 * big + lattice + 2 * row
    return _ctc_forward_peak(n_time, n_batch, n_vocab, n_state, s)


def _ctc_forward_peak(n_time, n_batch, n_vocab, n_state, s):
    """The NumPy forward's peak above what it leaves (see the scratch
    function's docstring), following Chainer's code."""
    tb, rows = n_time * n_batch, n_batch * n_state
    n = tb * n_vocab
    big, lattice, row, path = n * s, tb * n_state * s, rows * s, 4 * rows
    same = n_batch * max(n_state - 2, 0)
    p = Peak().alloc(4 * n_batch)  # path lengths (kept)
    # softmax: x - max (the max freed first), exp, then the row sums
    p.alloc(tb * s, big).free(tb * s).alloc(big).free(big)
    p.alloc(tb * s).free(tb * s)
    # numpy.ma.log: log, ~isfinite (and isfinite), the domain's mask
    p.alloc(big, n, n).free(n).alloc(n).free(n, n)
    p.alloc(path)  # the paths (kept)
    p.alloc(row, 4 * n_batch, 4 * n_time)  # the first row, aranges
    buf = _index_buffers(lattice // s, n_time, n_batch, rows)
    p.alloc(lattice, buf).free(buf)  # log y gathered along the paths

    def step():
        # the three transitions, the equal-label mask, logsumexp's max,
        # difference and exponential; its sum and log; the mask of states
        # past each path; the emissions gathered (freed once added)
        p.alloc(3 * row, same, row, 3 * row, 3 * row)
        p.free(6 * row).alloc(row, row).free(row, row)
        p.alloc(8 * n_state, rows).free(8 * n_state).alloc(4 * n_batch)
        buf = _index_buffers(rows, n_batch, rows)
        p.alloc(row, buf).free(buf, row)
        p.free(3 * row, same, rows, 4 * n_batch)

    def flip_lattice():
        p.alloc(4 * n_time, 8 * tb).free(4 * tb, 4 * n_time)
        p.alloc(4 * n_state, 8 * rows).free(4 * rows, 4 * n_state)
        buf = _index_buffers(lattice // s, tb, n_batch, rows)
        p.alloc(4 * n_batch, lattice, buf).free(buf, 4 * tb, 4 * rows,
                                                4 * n_batch)

    # each step's row replaces the last but the first, which starts the
    # backward recursion
    step()
    for _ in range(n_time - 1):
        step()
        p.free(row)
    # the flipped paths: int64 rotation (and its temporary)
    p.alloc(16 * rows).free(8 * rows).alloc(4 * n_batch, path)
    p.free(8 * rows, 4 * n_batch)
    # log y flipped
    p.alloc(4 * n_time, 8 * tb).free(4 * tb, 4 * n_time)
    p.alloc(4 * n_batch, 4 * n_vocab)
    buf = _index_buffers(n, tb, n_batch, n_vocab)
    p.alloc(big, buf).free(buf, 4 * tb, 4 * n_batch, 4 * n_vocab)
    flip_lattice()
    p.free(lattice)  # the first lattice
    for _ in range(n_time):
        step()
        p.free(row)
    flip_lattice()
    return p.peak - (4 * n_batch + big + path + lattice)


def calc_negative_sampling(func: NegativeSamplingFunction, in_data,
                           **kwargs):
    r"""NegativeSamplingFunction

    $$L_b = \sum_{j} \log(1 + \exp(s_j\, x_b \cdot W_{k_{bj}}))$$

    where $s_0 = -1$ (the target) and $s_j = 1$ for the negatives.

    With $x$ of shape $(B, D)$ and $K$ = `sample_size + 1` rows of $W$ per
    sample (the target and the negatives): $BK$ dot products of length $D$,
    then per sample the ignore-label test and the negation of the positive
    score, per score an exp and a log1p, and $K - 1$ additions per sample;
    `reduce='sum'` adds $B - 1$. Drawing the samples (the user's sampler)
    is not counted. The gathered rows of $W$ are read once each, bounded by
    $\|W\|$ (duplicates cannot be known without reading the samples). The
    ignore label (the class constant $-1$), an operand of every sample's
    test, is read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $BKD + 3BK + B$ (+ $B - 1$ for sum) |
    | FLOPs (no FMA) | $2BKD + 2BK + B$ (+ $B - 1$ for sum) |
    | mread | $\|x\| + \|t\| + \min(BKD, \|W\|) + 1$ |
    | mwrite | $1$ (sum) or $B$ |
    | params | `sample_size`, `reduce` |
    """
    x, t, W = in_data
    fma = kwargs.get('fma_1flop', False)
    n_batch, dim = x.shape
    k = func.sample_size + 1
    flops = (dot_flops(n_batch * k, dim, fma) + 2 * n_batch
             + 2 * n_batch * k + _sum_flops(n_batch * k, n_batch))
    out = n_batch
    if func.reduce == 'sum':
        flops += _sum_flops(n_batch)
        out = 1
    mread = (size_of(x) + size_of(t)
             + elements(min(n_batch * k * dim, W.size), W) + elements(1, x))
    params = {'sample_size': int(func.sample_size), 'reduce': func.reduce}
    return (flops, mread, out, params)


def scratch_negative_sampling(func: NegativeSamplingFunction, in_data,
                              **kwargs):
    r"""The gathered rows of W, their masked copies and $w x$.

    NumPy: with $N$ samples, $S$ = `sample_size + 1` and $D$ = `x.shape[1]`:
    `W[samples]` ($NSD$ elements), `x[mask]` and `w[mask]` (copies, $ND +
    NSD$ for $N'$ valid labels, counted as all $N$: an upper bound when
    labels are ignored) and `einsum`'s $w x$ ($NS$), before the copies
    are freed: $2NSD + ND + NS$ elements. The samples and the mask are
    kept on the node. float16 inputs are computed in float32 (Chainer's
    mixed precision helper copies x and W: $\|x\| + \|W\|$ float32
    elements more).

    CuPy: the per-sample losses ($NS$; $w x$ is kept on the node).
    """
    x, t, W = in_data
    n, d = x.shape
    s = func.sample_size + 1
    if kwargs.get('backend', 'numpy') == 'cupy':
        return n * s * x.dtype.itemsize
    isz, cast = x.dtype.itemsize, 0
    if x.dtype == numpy.float16:
        isz, cast = 4, 4 * (x.size + W.size)
    return (2 * n * s * d + n * d + n * s) * isz + cast


# Gradient nodes, applied while backward() runs: they read the incoming
# gradient, the inputs they need and what the forward pass kept for them
# (cached scores, labels, samples), and write the gradients.

def calc_sigmoid_cross_entropy_grad(func: SigmoidCrossEntropyGrad, in_data,
                                    **kwargs):
    r"""SigmoidCrossEntropyGrad

    $$g_{x_i} = s\, [t_i \ne -1] (\sigma(x_i) - t_i)$$

    where $s = g_y / \mathrm{count}$ for `reduce='mean'` (one division:
    the count is kept by the forward pass and folded into $s$) and
    $s = g_{y,i}$ for `reduce='no'`. Per element ($n = \|x\|$): the
    sigmoid (4), the subtraction of the label, the ignore-label test, the
    masking and the product with $s$: $8n$. It reads $x$, $g_y$ and the
    labels $t$ the node holds (in their own dtype); the ignore label (the
    class constant $-1$) counts 1.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $8n$ (+ 1 for mean) |
    | mread | $\|x\| + \|g_y\| + \|t\| + 1$ |
    | mwrite | $\|x\|$ |
    | params | `reduce` |
    """
    x, gy = in_data
    n = x.size
    mean = func.reduce == 'mean'
    labels = getattr(func, 't', None)
    mread = (size_of(x) + size_of(gy)
             + (elements(n, x) if labels is None else size_of(labels))
             + elements(1, x))
    return (8 * n + int(mean), mread, elements(n, x),
            {'reduce': func.reduce})


def scratch_sigmoid_cross_entropy_grad(func: SigmoidCrossEntropyGrad,
                                       in_data, **kwargs):
    r"""The sigmoid of x, and the temporaries of the gradient's expression.

    NumPy: $y = \sigma(x)$ as `Sigmoid` makes it ($x / 2$ and its tanh
    alive together), alive to the end; then `gy * ignore_mask` ($g_y$'s
    dtype), `y - t` (float64 for float32 x and int32 labels) and their
    product (written into `y - t` from 256 KiB on), for `reduce='mean'`
    `numpy.divide` by the count (a new array), and the cast copy, the
    output. With $n = \|x\|$, float32 x and gy and int32 labels: $16n$
    bytes above the output from 256 KiB ($20n$ with y, minus y's $4n$
    freed at the end), more below. The buffers in which `y - t` casts both
    operands to float64 ($\min(8192, n)$ elements each) are not counted.

    CuPy: y from one kernel (or cuDNN's activation, no workspace), then
    the same expression, a new array for every operation.
    """
    x, gy = in_data
    e = _numpy(kwargs)
    n = x.size
    xs = n * x.dtype.itemsize
    p = Peak()
    if e:
        p.alloc(xs, xs).free(xs).op(xs, xs).op(xs, xs)
    else:
        p.alloc(xs)
    t_dtype = getattr(getattr(func, 't', None), 'dtype', numpy.int32)
    ds = numpy.result_type(x.dtype, t_dtype)
    prod_dtype = numpy.result_type(gy.dtype, ds)
    d, ps = n * ds.itemsize, n * prod_dtype.itemsize
    p.alloc(n * gy.dtype.itemsize, d).op(d, ps, e and ds == prod_dtype)
    p.free(n * gy.dtype.itemsize)
    if func.reduce == 'mean':
        p.alloc(ps).free(ps)  # numpy.divide: never in place
    return p.alloc(xs).free(ps).peak - xs


def calc_softmax_cross_entropy_grad(
        func: _SoftmaxCrossEntropyGrad_NoDoubleBackprop, in_data, **kwargs):
    r"""_SoftmaxCrossEntropyGrad_NoDoubleBackprop

    $$g_x = s_j (y - \mathrm{onehot}(t_j)),\ s_j = [t_j \ne \mathrm{ignore}]\, w_{t_j} g_j$$

    The backward pass of SoftmaxCrossEntropy ($C$ = `x.shape[1]` classes,
    $M = \|x\|/C$ positions, $n = \|x\|$). The softmax $y$ is the one the
    forward pass cached (`cache_score=True`, read: $n$) or is recomputed
    from $x$ ($3n - M$: an exp per element, $C - 1$ additions per position,
    a division per element). With integer labels, per position the
    ignore-label test and the masking of the factor $s_j$ ($2M$; the
    ignore label, an operand of every test, counts 1), the product with the
    class weight $w_{t_j}$ ($M$, only with `class_weight`; the $C$ weights
    are read) and the subtraction of 1 at the target ($M$); then per
    element the product with $s_j$ ($n$). $g$ is the incoming gradient, one
    value per position for `reduce='no'`; for `reduce='mean'` it is a
    scalar, first multiplied by the normalizing coefficient kept by the
    forward pass (1 FLOP; the coefficient is folded in, not a read). With a
    soft target $t$ (float, shaped as $x$): $g_x = s (y - t)$, a
    subtraction and a product per element.

    | Item | Value |
    |:-----|:------|
    | FLOPs, labels | $n + 3M$ (+ $M$ with `class_weight`) (+ 1 for mean) (+ $3n - M$ uncached) |
    | FLOPs, soft target | $2n$ (+ 1 for mean) (+ $3n - M$ uncached) |
    | mread, labels | $\|y\| + \|t\| + \|g\| + 1$ (+ $C$ with `class_weight`) |
    | mread, soft target | $\|y\| + \|t\| + \|g\|$ |
    | mwrite | $\|x\|$ |
    | params | `reduce`, `soft_target`, `class_weight` (bool), `cache_score` (bool) |
    """  # NOQA
    x, t, gloss = in_data
    n = x.size
    n_class = x.shape[1] if x.ndim > 1 else 1
    m = n // n_class if n_class else 0
    mean = func.coeff is not None
    cached = func.y is not None
    soft = bool(getattr(func, 'soft_target', False)) or t.dtype.kind == 'f'
    weighted = func.class_weight is not None and not soft
    # y (cached) or x (the softmax is recomputed): n elements of x's dtype
    mread = elements(n, x) + size_of(t) + size_of(gloss)
    flops = 0 if cached else 3 * n - m
    if soft:
        flops += 2 * n
    else:
        flops += n + 3 * m
        mread += elements(1, x)
        if weighted:
            flops += m
            mread += size_of(func.class_weight)
    if mean:
        flops += 1
    params = {'reduce': 'mean' if mean else 'no', 'soft_target': soft,
              'class_weight': weighted, 'cache_score': cached}
    return (flops, mread, elements(n, x), params)


def calc_negative_sampling_grad(func: NegativeSamplingFunctionGrad, in_data,
                                **kwargs):
    r"""NegativeSamplingFunctionGrad

    $$g_{x_b} = \sum_j g_{bj} W_{k_{bj}},\ g_{W_{k_{bj}}} \mathrel{+}= g_{bj}\, x_b,\ g_{bj} = s_j\, g_{y,b}\, \sigma(s_j\, x_b \cdot W_{k_{bj}})$$

    The backward pass of NegativeSamplingFunction ($x$ of shape $(B, D)$,
    $K$ = `sample_size + 1` rows of $W$ per sample, the target with $s_0 =
    -1$ and the negatives with $s_j = 1$): the $BK$ scores again ($BK$ dot
    products of length $D$), the negation of the target's score and of its
    $g$ ($2B$), per score a negation, an exp, an addition and a division
    ($4BK$), then $g_x$ ($BD$ dot products of length $K$) and the
    accumulation into $g_W$ ($BKD$ multiply-adds). It reads $x$, the
    gathered rows of $W$ (at most $\|W\|$, as in the forward pass),
    $g_y$, the $BK$ sample indices and the $B$ ignore flags the forward
    pass kept (each in its own dtype); it writes $g_x$ and the whole $g_W$
    (zeros where no sample falls).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $3BKD + 4BK + 2B$ |
    | FLOPs (no FMA) | $6BKD + 3BK - BD + 2B$ |
    | mread | $\|x\| + \min(BKD, \|W\|) + \|g_y\| + BK + B$ |
    | mwrite | $\|x\| + \|W\|$ |
    | params | `sample_size`, `reduce` |
    """  # NOQA
    x, W, gy = in_data
    fma = kwargs.get('fma_1flop', False)
    n_batch, dim = x.shape
    k = int(func.sample_size) + 1
    scores = n_batch * k
    flops = (dot_flops(scores, dim, fma) + 2 * n_batch + 4 * scores
             + dot_flops(n_batch * dim, k, fma)
             + (1 if fma else 2) * scores * dim)
    samples = getattr(func, 'samples', None)
    mask = getattr(func, 'ignore_mask', None)
    mread = (size_of(x) + elements(min(scores * dim, W.size), W)
             + size_of(gy)
             + (elements(scores, x) if samples is None
                else elements(scores, samples))
             + (elements(n_batch, x) if mask is None
                else elements(n_batch, mask)))
    params = {'sample_size': int(func.sample_size), 'reduce': func.reduce}
    return (flops, mread, size_of(x) + size_of(W), params)


def scratch_negative_sampling_grad(func: NegativeSamplingFunctionGrad,
                                   in_data, **kwargs):
    r"""One sample's rows of W and products, in a Python loop.

    NumPy: the indexes of the valid samples (an int64 `arange` of $N$ and
    its masked copy, $16 N$ bytes at most), then each sample gathers its
    $S$ rows of W ($SD$ elements) and makes $S$-element products and the
    $D$-element `ig * ix` (freed before the next sample): $SD + D + 3S$
    elements more. CuPy: $g$ ($NS$
    elements) beside $g_x$ and $g_W$.
    """
    x, W = in_data[:2]
    n, d = x.shape
    s = func.sample_size + 1
    isz = x.dtype.itemsize
    if kwargs.get('backend', 'numpy') == 'cupy':
        return n * s * isz
    return (s * d + d + 3 * s) * isz + 16 * n
