"""Cost calculators for ``chainer.functions.evaluation``.

Conventions shared by this module: an argmax over $c$ candidates costs
$c - 1$ comparisons; a comparison, a select (``where``) and a bincount
increment cost 1 FLOP each. Integer labels are counted like any other
element, in their own dtype: reads are exact in bytes whatever the dtypes
of scores and labels.

Scalar constants follow the rule of every calculator module: a scalar held
by the node (a hyper-parameter such as ``ignore_label`` or ``beta``, or a
class constant such as BinaryAccuracy's ignored label $-1$) that is an
operand of the per-element computation is read once and counts 1 element
of mread; a scalar consumed only by per-channel, per-row or per-group
precomputation is folded into it and not counted; numeric literals written
in the formula are not reads. ``label_num`` only sizes the bincounts (index
arithmetic) and is not counted. A constant compared with the labels (an
ignored label) counts in the labels' dtype, ``beta`` in the scores'.
"""

from chainer.functions.evaluation.accuracy import Accuracy
from chainer.functions.evaluation.binary_accuracy import BinaryAccuracy
from chainer.functions.evaluation.classification_summary import \
    ClassificationSummary
from chainer.functions.evaluation.r2_score import R2_score
import numpy

from chainer_computational_cost.cost_calculators import argmax_copy
from chainer_computational_cost.cost_calculators import elements
from chainer_computational_cost.cost_calculators import elides
from chainer_computational_cost.cost_calculators import prod
from chainer_computational_cost.cost_calculators import reshape_view
from chainer_computational_cost.cost_calculators import size_of
from chainer_computational_cost.cost_calculators import strides_of

#: No family of a calibration's fits: its calls are predicted by none
#: (flagged as uncovered in a time report).
TIME_FAMILY = None


def calc_accuracy(func: Accuracy, in_data, **kwargs):
    r"""Accuracy

    $$acc = \mathrm{mean}(\mathrm{argmax}_1(y) = t)$$

    With $n = \|t\|$ samples of $c$ = `y.shape[1]` scores: the argmax costs
    $\|y\| - n$ comparisons, then $n$ comparisons with t, $n-1$ additions and
    1 division: $\|y\| + n$ in all. With `ignore_label`: $n$ comparisons for
    the mask, $n-1$ additions to count ignored labels, $n$ selects, $n$
    comparisons, $n-1$ additions, 2 subtractions and a division:
    $\|y\| + 4n + 1$, and the label constant is read.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|y\| + \|t\|$; with `ignore_label`: $\|y\| + 4\|t\| + 1$ |
    | mread | $\|y\| + \|t\|$ (+1 with `ignore_label`) |
    | mwrite | 1 |
    | params | `ignore_label` (only when set) |
    """
    y, t = in_data
    n = t.size
    mread = size_of(y) + size_of(t)
    if func.ignore_label is None:
        return (y.size + n, mread, 1, {})
    return (y.size + 4 * n + 1, mread + elements(1, t), 1,
            {'ignore_label': int(func.ignore_label)})


def calc_binary_accuracy(func: BinaryAccuracy, in_data, **kwargs):
    r"""BinaryAccuracy

    $$acc = \sum (y \ge 0) = t \;/\; \max(1, \sum t \ne -1)$$

    With $n = \|y\| = \|t\|$: $n$ comparisons of y with 0; $n$ comparisons,
    $n-1$ additions and a max to count the labels that are not ignored; $n$
    comparisons with t, $n-1$ additions and a division: $5n$ FLOPs. The
    ignored label $-1$ is a constant of the class, read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $5 \|y\|$ |
    | mread | $\|y\| + \|t\| + 1$ |
    | mwrite | 1 |
    | params | none |
    """
    y, t = in_data
    return (y.size + 4 * t.size, size_of(y) + size_of(t) + elements(1, t), 1,
            {})


def calc_classification_summary(func: ClassificationSummary, in_data,
                                **kwargs):
    r"""ClassificationSummary

    $$F_\beta = (1 + \beta^2) P R / (\beta^2 P + R)$$

    Precision $P = tp / (tp + fp)$ and recall $R = tp / (tp + fn)$ per
    label. With $n = \|t\|$ samples and $L$ labels: a mask of ignored
    labels ($n$ comparisons), the argmax of the scores ($\|y\| - n$
    comparisons), two selects for predictions and truths ($2n$), three
    bincounts ($3n$ increments), the true-positive mask ($n$ comparisons,
    $n$ selects), then $2L$ divisions for P and R and $5L + 2$ FLOPs for
    $F_\beta$: in all $\|y\| + 7n + 7L + 2$. When `label_num` is None
    Chainer uses $\max(t) + 1$, which depends on the values of t: then $L$
    is taken as the number of scores `y.shape[1]` (an upper bound of it),
    and the $n - 1$ comparisons of the max are added. Outputs: precision,
    recall, $F_\beta$ and support, $L$ elements each (8 bytes each on
    NumPy, whatever the dtype of y: float64 ratios of counts and int64
    counts); `ignore_label` and $\beta$ are scalar constants read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|y\| + 7\|t\| + 7L + 2$ (+ $\|t\| - 1$ without `label_num`) |
    | mread | $\|y\| + \|t\| + 2$ |
    | mwrite | $4L$ |
    | params | `label_num` (when set), `beta`, `ignore_label` |
    """
    y, t = in_data
    n = t.size
    flops = y.size + 7 * n + 2
    params = {}
    if func.label_num is None:
        labels = y.shape[1]
        flops += max(n - 1, 0)
    else:
        labels = int(func.label_num)
        params['label_num'] = labels
    flops += 7 * labels
    params['beta'] = float(func.beta)
    params['ignore_label'] = int(func.ignore_label)
    mread = size_of(y) + size_of(t) + elements(1, t) + elements(1, y)
    return (flops, mread, 4 * labels, params)


def calc_r2_score(func: R2_score, in_data, **kwargs):
    r"""R2_score

    $$R^2 = 1 - \sum_i (p_i - t_i)^2 / \sum_i (t_i - \bar t)^2$$

    Sums run over the first axis: with $n = \|p\|$ elements and $m$ =
    prod(`p.shape[1:]`) outputs, the residual sum costs $3n - m$ (a
    subtraction, a square, and $n - m$ additions), the total sum $4n - m$
    (the mean costs $n$: $n - m$ additions and $m$ divisions), then per
    output a zero test, a select replacing zeros, a division, a
    subtraction from 1 and a final select ($5m$): $7n + 3m$. With
    `uniform_average` the mean of the $m$ scores adds $m$ FLOPs ($m-1$
    additions, 1 division) and the output is a scalar.

    | Item | Value |
    |:-----|:------|
    | FLOPs | `raw_values`: $7n + 3m$; `uniform_average`: $7n + 4m$ |
    | mread | $2n$ |
    | mwrite | `raw_values`: $m$; `uniform_average`: 1 |
    | params | `multioutput` |
    """
    pred, true = in_data
    n = pred.size
    m = prod(pred.shape[1:])
    flops = 7 * n + 3 * m
    mwrite = m
    if func.multioutput == 'uniform_average':
        flops += m
        mwrite = 1
    return (flops, size_of(pred) + size_of(true), mwrite,
            {'multioutput': func.multioutput})


# Scratch (see cost_calculators.scratch_of)

def scratch_accuracy(func: Accuracy, in_data, **kwargs):
    r"""argmax's copy and int64 indexes, the comparison with t.

    NumPy: `y.argmax(axis=1)` (a copy of y unless axis 1 moved last is
    C-contiguous, and $R = \|t\|$ int64 indexes), then `pred == t` ($R$
    bytes) for the mean. With `ignore_label`, the mask `t == ignore`
    ($R$ bytes) first and `where(mask, ignore, argmax)` ($R$ int64) beside
    the indexes. The output is one scalar.

    CuPy: the same without argmax's copy (a reduction kernel reads y in
    place).
    """
    y, t = in_data
    r = t.size
    copy = argmax_copy(y, 1) if kwargs.get('backend', 'numpy') != 'cupy' \
        else 0
    if func.ignore_label is None:
        return max(copy + 8 * r, 9 * r)
    return max(r + copy + 8 * r, 17 * r)


def _ravel_copy(x):
    """Bytes ``x.ravel()`` copies (0 when it is a view)."""
    if reshape_view(x.shape, strides_of(x), (x.size,)) is not None:
        return 0
    return x.size * x.dtype.itemsize


def scratch_binary_accuracy(func: BinaryAccuracy, in_data, **kwargs):
    r"""The two boolean arrays of the count.

    NumPy and CuPy: `y.ravel()` and `t.ravel()` (copies of strided
    arrays), `y >= 0` and `t != -1` ($\|y\|$ bytes each), then `c == t`
    beside `c`: $2 \|y\|$ bytes and the copies.
    """
    y, t = in_data
    return _ravel_copy(y) + _ravel_copy(t) + 2 * y.size


def scratch_r2_score(func: R2_score, in_data, **kwargs):
    r"""The squared residuals and deviations, then the per-output arrays.

    NumPy and CuPy: `(pred - true) ** 2`: the difference ($\|x\|$
    elements) and its square, written into the difference from 256 KiB on
    (NumPy's temporary elision, $k = 1$; else $k = 2$ arrays), summed over
    the batch ($R$ per-output elements kept); then `true - mean` (the mean
    $R$ elements) and its square the same way; then `SS_tot == 0` ($R$
    bytes), `SS_res / SS_tot`, `1 - ...` and `where(...)` ($R$ elements
    each): the largest of $k \|x\| + R$, $\|x\| + 2R$ and $4R$ elements
    plus $R$ bytes, less the output.
    """
    pred = in_data[0]
    s = pred.dtype.itemsize
    e = pred.size * s
    r = prod(pred.shape[1:])
    k = 1 if elides(e) else 2
    out = s if func.multioutput == 'uniform_average' else r * s
    return max(k * e + r * s, e + 2 * r * s, 4 * r * s + r) - out


def scratch_classification_summary(func: ClassificationSummary, in_data,
                                   **kwargs):
    r"""The label arrays of the three bincounts and their intp copies.

    NumPy, for $n = \|t\|$ labels: `t` cast to int32 (a copy unless it is
    int32), the mask `t == ignore` ($n$ bytes), argmax's copy of y (see
    Accuracy) and int64 indexes, `pred` (int64) and `true` (int32) by
    `where`, then `pred == true` and `tp_mask` (int32); each `bincount`
    of int32 labels first converts them to intp ($8n$). At most the cast,
    the mask, `pred`, `true`, `tp_mask` and bincount's copy: $25n$ bytes
    (or argmax's stage, if larger); the outputs are per label.

    CuPy: the same arrays without argmax's copy and bincount's
    conversions.
    """
    y, t = in_data
    n = t.size
    cast = 0 if t.dtype == numpy.int32 else 4 * n
    if kwargs.get('backend', 'numpy') == 'cupy':
        return cast + 17 * n
    return cast + max(9 * n + argmax_copy(y, 1), 25 * n)
