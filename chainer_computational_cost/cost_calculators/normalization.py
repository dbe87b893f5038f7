r"""Cost calculators for ``chainer.functions.normalization``.

Conventions shared by the calculators of this module (the same as in
:mod:`~chainer_computational_cost.cost_calculators.loss`):

* an elementary arithmetic operation, comparison or elementary function
  (sqrt, pow, reciprocal) on one element is 1 FLOP; a dot product or sum of
  squares of length $k$ costs $k$ FLOPs with FMA and $2k - 1$ without; an
  affine map $a x + b$ is one multiply-add per element;
* statistics over groups of elements: the mean costs 1 FLOP per element
  (the additions and 1 division per group), the centring 1 per element, the
  sum of squares is a dot product per group followed by 1 division, and
  $1/\sqrt{v + \epsilon}$ costs 3 FLOPs per group;
* a running statistic $r \leftarrow \rho r + (1 - \rho) s$ costs a
  multiplication and a multiply-add per element and is read and written
  once (scalar factors such as $(1 - \rho)$ and the unbiasing factor are
  folded);
* scalar constants, the rule of every calculator module: a scalar held by
  the node (a hyper-parameter such as a slope, a margin or an eps) that is
  an operand of the per-element computation is read once and counts 1
  element of mread; a scalar consumed only by per-channel, per-row or
  per-group precomputation is folded into it and not counted; numeric
  literals written in the formula are not reads. Here every $\epsilon$ is
  added to a per-channel, per-group, per-row or per-slice statistic before
  the factor applied to the elements is formed, so it is not counted (nor
  are BatchRenormalization's `rmax` and `dmax`, which clip per-channel
  factors); LocalResponseNormalization's $k$, $\alpha$ and $\beta$ enter
  every element's computation and count 1 each; `decay` is an operand of
  the element-wise update of the running statistics (results, not
  precomputation) and counts 1 when they are updated;
* mwrite counts the output and the running statistics updated in place;
  the per-group statistics Chainer keeps on the node for backward (mean,
  inverse std, eigenvectors, ...) are small working buffers, not counted;
* every array is read and written in its own dtype (mixed precision: a
  float16 $x$ with float32 $\gamma$, $\beta$ and running statistics); a
  scalar constant counts one element of the dtype of the data it meets.
"""

import numpy

from chainer.functions.normalization.batch_normalization import \
    BatchNormalization
from chainer.functions.normalization.batch_normalization import \
    BatchNormalizationGrad
from chainer.functions.normalization.batch_normalization import \
    FixedBatchNormalization
from chainer.functions.normalization.batch_normalization import \
    FixedBatchNormalizationGrad
from chainer.functions.normalization.batch_renormalization import \
    BatchRenormalizationFunction
from chainer.functions.normalization.decorrelated_batch_normalization \
    import DecorrelatedBatchNormalization
from chainer.functions.normalization.decorrelated_batch_normalization \
    import DecorrelatedBatchNormalizationGrad
from chainer.functions.normalization.decorrelated_batch_normalization \
    import FixedDecorrelatedBatchNormalization
from chainer.functions.normalization.decorrelated_batch_normalization \
    import FixedDecorrelatedBatchNormalizationGrad
from chainer.functions.normalization.group_normalization import \
    _MulInvStd
from chainer.functions.normalization.group_normalization import \
    _ScaleShiftGrad
from chainer.functions.normalization.group_normalization import _XHat
from chainer.functions.normalization.group_normalization import _XHatGrad
from chainer.functions.normalization.group_normalization import \
    GroupNormalization
from chainer.functions.normalization.l2_normalization import _SetItemZero
from chainer.functions.normalization.l2_normalization import NormalizeL2
from chainer.functions.normalization.layer_normalization import \
    LayerNormalization
from chainer.functions.normalization.local_response_normalization import \
    LocalResponseNormalization
from chainer.functions.normalization.local_response_normalization import \
    LocalResponseNormalizationGrad

from chainer_computational_cost.cost_calculators import dot_flops
from chainer_computational_cost.cost_calculators import uses_cudnn
from chainer_computational_cost.cost_calculators import elements
from chainer_computational_cost.cost_calculators import elides
from chainer_computational_cost.cost_calculators import old_style_backward
from chainer_computational_cost.cost_calculators import prod
from chainer_computational_cost.cost_calculators import reshape_view
from chainer_computational_cost.cost_calculators import size_of
from chainer_computational_cost.cost_calculators import strides_of
from chainer_computational_cost.cost_calculators import total_size

#: The family of calls whose time one fit of a calibration predicts
#: (``analysis.calibration.FAMILIES``): this module's.
TIME_FAMILY = 'normalization'


#: FLOPs of the symmetric eigendecomposition (eigenvalues and eigenvectors)
#: of an n-by-n matrix, as a multiple of n**3: the usual estimate for the
#: symmetric QR algorithm (tridiagonalisation and implicit QR steps).
_EIGH_FLOPS_PER_N3 = 9


def _moments_flops(n, groups, fma):
    """FLOPs of the mean and the (biased) variance of ``n`` elements split
    into ``groups`` equal groups: mean, centring, sum of squares, division.
    """
    length = n // groups if groups else 0
    return 2 * n + dot_flops(groups, length, fma) + groups


def _standardize_flops(n, groups, fma):
    r"""FLOPs of $y = \gamma (x - \mu) / \sqrt{\sigma^2 + \epsilon} + \beta$
    with the statistics taken over ``groups`` groups of ``n`` elements:
    the moments, $1/\sqrt{\sigma^2 + \epsilon}$ per group, the scaling and
    the affine multiply-add per element."""
    return (_moments_flops(n, groups, fma) + 3 * groups
            + (2 if fma else 3) * n)


def _running_update_flops(size, fma):
    """FLOPs of one running-average update of ``size`` elements."""
    return (2 if fma else 3) * size


def _float(value):
    """A hyper-parameter as a plain float; a NumPy scalar (DBN stores its
    eps as one of x's dtype) keeps its shortest decimal form."""
    if isinstance(value, numpy.floating):
        return float(str(value))
    return float(value)


def _int_if_integral(value):
    """A hyper-parameter that 0.1.2 reported as an int (LRN's ``k``): an
    int when it has an integral value, else the float (never truncated)."""
    value = _float(value)
    return int(value) if value.is_integer() else value


def _bn_axis(func, x, gamma):
    """Axes BatchNormalization reduces over (Chainer's default when the
    node was given none)."""
    if func.axis is not None:
        return tuple(int(a) for a in func.axis)
    return (0,) + tuple(range(gamma.ndim + 1, x.ndim))


def calc_batch_normalization(func: BatchNormalization, in_data, **kwargs):
    r"""BatchNormalization

    $$y = \gamma (x - \mu) / \sqrt{\sigma^2 + \epsilon} + \beta$$

    Training mode: the batch mean $\mu$ and variance $\sigma^2$ are
    computed over the reduced axes for each of the $C = \|\gamma\|$
    channels, then every element is centred, scaled and mapped by the
    affine multiply-add. When running statistics are given, the running
    mean and variance ($C$ elements each) are updated in place (read and
    written once, $2C$ FLOPs each with FMA, $3C$ without) and `decay` is
    read once; $\epsilon$ is folded into the per-channel scale.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $5 \|x\| + 4C$ (+ $4C$ with running statistics) |
    | FLOPs (no FMA) | $7 \|x\| + 3C$ (+ $6C$ with running statistics) |
    | mread | $\|x\| + \|\gamma\| + \|\beta\|$ (+ $2C+1$ with running stats) |
    | mwrite | $\|x\|$ (+ $2C$ with running statistics) |
    | params | `eps`, `axis`; `decay` with running statistics |
    """
    x, gamma, beta = in_data
    fma = kwargs.get('fma_1flop', False)
    n, c = x.size, gamma.size
    flops = _standardize_flops(n, c, fma)
    mread = size_of(x) + size_of(gamma) + size_of(beta)
    mwrite = elements(n, x)
    params = {'eps': _float(func.eps), 'axis': _bn_axis(func, x, gamma)}
    if func.running_mean is not None:
        flops += 2 * _running_update_flops(c, fma)
        stats = total_size((func.running_mean, func.running_var))
        mread += stats + elements(1, func.running_mean)
        mwrite += stats
        params['decay'] = _float(func.decay)
    return (flops, mread, mwrite, params)


def _interm_bytes(x, other):
    """Bytes of an array of x's size in the dtype x and ``other`` promote
    to (the dtype Chainer's batch normalization computes in)."""
    return x.size * numpy.promote_types(x.dtype, other.dtype).itemsize


def _bn_cudnn(x):
    """Whether Chainer 7 takes cuDNN for a batch normalization of ``x`` on a
    GPU (``_BNMode``: 2-d or 4-d input, float16/32/64)."""
    return uses_cudnn() and x.ndim in (2, 4)


def scratch_batch_normalization(func: BatchNormalization, in_data,
                                **kwargs):
    r"""x - mean and the scaled copy, before the cast that makes y.

    NumPy: `x.var` makes the squared deviations ($\|x\|$ elements, freed
    before what follows); `_apply_bn_fwd` makes $\hat{x} = (x - \mu)
    \sigma^{-1}$, then $\hat{x} \gamma$ (plus $\beta$ in place), then
    `astype(x.dtype)`, which always copies: the output. Peak above what the
    call leaves: $2 \|x\|$ elements, in the dtype x and $\gamma$ promote
    to. The per-channel statistics are kept on the node (not scratch).

    CuPy: with cuDNN (`use_cudnn` `'auto'`/`'always'`, 2-d or 4-d x) none,
    cuDNN's batch normalization takes no workspace; without, `x.var`'s
    squared deviations ($\|x\|$, as NumPy's path; the output is one
    elementwise kernel).
    """
    x, gamma = in_data[:2]
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0 if _bn_cudnn(x) else _interm_bytes(x, gamma)
    return 2 * _interm_bytes(x, gamma)


def calc_fixed_batch_normalization(func: FixedBatchNormalization, in_data,
                                   **kwargs):
    r"""FixedBatchNormalization

    $$y = s_c x + b_c$$

    where $s_c = \gamma_c / \sqrt{v_c + \epsilon}$ and
    $b_c = \beta_c - s_c m_c$ for channel $c$ ($C = \|\gamma\|$ channels).

    Inference mode with fixed statistics $m$ (mean) and $v$ (variance):
    one multiply-add per element, reading $x$ and the per-channel scale $s$
    and shift $b$. $s$ and $b$ depend only on constant parameters and can
    be folded ahead of time, so their preparation (reading $\gamma$,
    $\beta$, $m$, $v$ and about $4C$ FLOPs) is not counted, and
    $\epsilon$ is folded into $s$. This matches the published ResNet50
    figures of the original tool.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\|x\|$ |
    | FLOPs (no FMA) | $2 \|x\|$ |
    | mread | $\|x\| + 2C$ |
    | mwrite | $\|x\|$ |
    | params | `eps` |
    """
    x, gamma = in_data[:2]
    fma = kwargs.get('fma_1flop', False)
    # the folded scale and shift are in the dtype of the parameters
    return ((1 if fma else 2) * x.size,
            size_of(x) + elements(2 * gamma.size, gamma), elements(x.size, x),
            {'eps': _float(func.eps)})


def scratch_fixed_batch_normalization(func: FixedBatchNormalization,
                                      in_data, **kwargs):
    r"""x - mean and the scaled copy, before the cast that makes y.

    NumPy: as BatchNormalization's `_apply_bn_fwd`: $\hat{x}$ and $\hat{x}
    \gamma$ ($2 \|x\|$ elements in the promoted dtype) alive while
    `astype(x.dtype)` copies the output. The per-channel
    $1/(\sigma^2 + \epsilon)$ and its square root are kept on the node.

    CuPy: none (cuDNN's inference batch normalization takes no workspace;
    without cuDNN one elementwise kernel writes y).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x, gamma = in_data[:2]
    return 2 * _interm_bytes(x, gamma)


def calc_batch_renormalization(func: BatchRenormalizationFunction, in_data,
                               **kwargs):
    r"""BatchRenormalizationFunction

    $$y = \gamma \left( \frac{x - \mu}{\sigma} r + d \right) + \beta$$

    With $C = \|\gamma\|$ channels: the batch moments ($3\|x\| + C$ with
    FMA, $4\|x\|$ without), then per channel $\sigma = \sqrt{\sigma^2 +
    \epsilon}$ (2), the running $\sigma_R$ (2),
    $r = \mathrm{clip}(\sigma / \sigma_R)$ (3) and
    $d = \mathrm{clip}((\mu - \mu_R) / \sigma_R)$ (4); per element a
    division and two multiply-adds. The running statistics are always read;
    with `update_statistics=True` they are also updated in place ($4C$
    FLOPs with FMA, $6C$ without, $2C$ written) and `decay` is read once.
    $\epsilon$, `rmax` and `dmax` only enter the per-channel factors and
    are not counted.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $6 \|x\| + 12C$ (+ $4C$ when updating) |
    | FLOPs (no FMA) | $9 \|x\| + 11C$ (+ $6C$ when updating) |
    | mread | $\|x\| + \|\gamma\| + \|\beta\| + 2C$ (+ 1 when updating) |
    | mwrite | $\|x\|$ (+ $2C$ when updating) |
    | params | `eps`, `rmax`, `dmax`; `decay` when updating |
    """
    x, gamma, beta = in_data
    fma = kwargs.get('fma_1flop', False)
    n, c = x.size, gamma.size
    flops = (_moments_flops(n, c, fma) + (2 + 2 + 3 + 4) * c
             + (3 if fma else 5) * n)
    stats = elements(2 * c, gamma)  # the running mean and variance
    mread = size_of(x) + size_of(gamma) + size_of(beta) + stats
    mwrite = elements(n, x)
    params = {'eps': _float(func.eps), 'rmax': _float(func.rmax),
              'dmax': _float(func.dmax)}
    if func.update_statistics:
        flops += 2 * _running_update_flops(c, fma)
        mread += elements(1, gamma)
        mwrite += stats
        params['decay'] = _float(func.decay)
    return (flops, mread, mwrite, params)


@old_style_backward
def scratch_batch_renormalization(func: BatchRenormalizationFunction,
                                  in_data, **kwargs):
    r"""$\gamma \hat{x}_{renorm}$ before the cast that makes y.

    NumPy: `x.var` makes the squared deviations ($\|x\|$, freed before
    what follows); $\hat{x}$ and $\hat{x} r + d$ are kept on the function
    for its backward (not scratch); `gamma * x_hat_renorm` ($\|x\|$
    elements, $\beta$ added in place) is alive while `astype(x.dtype)`
    copies it into y, beside the per-channel mean, variance, running
    deviation and $d$ ($C = \|\gamma\|$ each). Peak above what the call
    leaves: $\|x\| + 4C$ elements in the dtype x and $\gamma$ promote to.

    CuPy: none (one elementwise kernel writes $\hat{x}$, $\hat{x} r + d$
    and y; the squared deviations of `x.var` take less than they do).

    Backward (an old-style Function's, see `old_style_backward`), NumPy:
    the products of gy with $\hat{x}_{renorm}$ and $\hat{x}$ summed for
    the gradients of $\gamma$ and $\sigma$ ($\|x\|$ elements each, one
    at a time), then $g_x$'s expression: two arrays of $\|x\|$ elements at
    each step (NumPy writes into a temporary from 256 KiB on, but `gy -
    (...)` is a new array), the last alive while `astype` copies it into
    $g_x$: $2 \|x\|$ elements in the promoted dtype, less $g_x$. CuPy:
    the two products (one elementwise kernel writes $g_x$): $\|x\|$
    elements.
    """
    x, gamma = in_data[:2]
    cupy = kwargs.get('backend', 'numpy') == 'cupy'
    if kwargs.get('backward', False):
        e = _interm_bytes(x, gamma)
        return e if cupy else 2 * e - x.size * x.dtype.itemsize
    if cupy:
        return 0
    return _interm_bytes(x, gamma) + 4 * _interm_bytes(gamma, x)


def _dbn_shape(x, groups):
    """(groups, channels per group, columns) of DBN's ``(g, C, m)`` view."""
    c = x.shape[1]
    per_group = c // groups
    return groups, per_group, x.size // c if c else 0


def calc_decorrelated_batch_normalization(
        func: DecorrelatedBatchNormalization, in_data, **kwargs):
    r"""DecorrelatedBatchNormalization

    $$y = V \Lambda^{-1/2} V^\top (x - \mu)$$

    where $V \Lambda V^\top = \Sigma + \epsilon I$ is the eigendecomposition
    of the covariance $\Sigma$ of each group of channels.

    $x$ is viewed per group as a $C \times m$ matrix ($g$ groups of
    $C$ = `x.shape[1] / g` channels, $m = \|x\|/(gC)$): the mean and the
    centring ($2\|x\|$), the covariance ($gC^2$ dot products of length $m$,
    $gC^2$ divisions, $gC$ additions of $\epsilon$ to the diagonal), the
    eigendecomposition (convention: $9C^3$ FLOPs per group, FMA or not),
    $\Lambda^{-1/2}$ ($gC$), $U = \Lambda^{-1/2} V^\top$ as a row scaling
    ($gC^2$) and the two products $U x$ then $V (U x)$ ($2\|x\|$ dot
    products of length $C$). Running statistics, when given, are updated
    in place: the mean ($gC$ elements, $2gC$ FLOPs with FMA, $3gC$ without)
    and the projection $V U$ ($gC^2$ dot products of length $C$, then the
    update of $gC^2$ elements); `decay` is then read once. $\epsilon$,
    added to the per-group covariance, is not counted.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $(3C + 2)\|x\| + 9gC^3 + 2gC^2 + 2gC$ (+ running) |
    | FLOPs (no FMA) | $6C\|x\| + 9gC^3 + gC^2 + 2gC$ (+ running) |
    | mread | $\|x\|$ (+ sizes of the running statistics + 1) |
    | mwrite | $\|x\|$ (+ sizes of the running statistics) |
    | params | `groups`, `eps`; `decay` with running statistics |
    """
    x, = in_data
    fma = kwargs.get('fma_1flop', False)
    n = x.size
    g, c, m = _dbn_shape(x, func.groups)
    covariance = dot_flops(g * c * c, m, fma) + g * c * c + g * c
    eigen = _EIGH_FLOPS_PER_N3 * g * c ** 3
    whitening = g * c + g * c * c + dot_flops(2 * n, c, fma)
    flops = 2 * n + covariance + eigen + whitening
    mread = mwrite = size_of(x)
    params = {'groups': int(func.groups), 'eps': _float(func.eps)}
    if func.running_mean is not None:
        flops += _running_update_flops(func.running_mean.size, fma)
        mread += size_of(func.running_mean)
        mwrite += size_of(func.running_mean)
    if func.running_projection is not None:
        size = func.running_projection.size
        flops += (dot_flops(g * c * c, c, fma)
                  + _running_update_flops(size, fma))
        mread += size_of(func.running_projection)
        mwrite += size_of(func.running_projection)
    if func.running_mean is not None or func.running_projection is not None:
        mread += elements(1, x)
        params['decay'] = _float(func.decay)
    return (flops, mread, mwrite, params)


def _dbn_copy(x, groups):
    """Bytes of the copy `x.transpose((1, 0, ...)).reshape(g, C, m)` makes
    (0 where the axes merge in place, e.g. at batch 1)."""
    order = (1, 0) + tuple(range(2, x.ndim))
    strides = strides_of(x)
    shape = [x.shape[a] for a in order]
    c = x.shape[1]
    view = reshape_view(shape, [strides[a] for a in order],
                        (groups, c // groups, x.size // c if c else 0))
    return 0 if view is not None else x.size * x.dtype.itemsize


def scratch_decorrelated_batch_normalization(
        func: DecorrelatedBatchNormalization, in_data, **kwargs):
    r"""The centred groups, alive until the whitened output is made.

    NumPy and CuPy: x with the channel axis first reshaped into $(g, C,
    m)$ (a copy, $\|x\|$, except where the axes merge, at batch 1), then
    $x - \mu$ ($\|x\|$), alive while `matmul` makes the whitened
    $\hat{y}_{PCA}$ (kept on the node) and $\hat{y}$ (the output): $\|x\|$
    elements above them, plus the $g C \times C$ matrices (covariance,
    eigenvectors, whitening).
    """
    x, = in_data
    g = func.groups
    c = x.shape[1] // g
    return x.size * x.dtype.itemsize + 4 * g * c * c * x.dtype.itemsize


def calc_fixed_decorrelated_batch_normalization(
        func: FixedDecorrelatedBatchNormalization, in_data, **kwargs):
    r"""FixedDecorrelatedBatchNormalization

    $$y = P (x - \mu)$$

    With $g$ groups of $C$ = `x.shape[1] / g` channels and fixed statistics
    $\mu$ of shape $(g, C)$ and $P$ of shape $(g, C, C)$: one subtraction
    per element, then one dot product of length $C$ per element.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $(C + 1) \|x\|$ |
    | FLOPs (no FMA) | $2C \|x\|$ |
    | mread | $\|x\| + \|\mu\| + \|P\|$ |
    | mwrite | $\|x\|$ |
    | params | `groups` |
    """
    x, mean, projection = in_data
    fma = kwargs.get('fma_1flop', False)
    n = x.size
    c = _dbn_shape(x, func.groups)[1]
    flops = n + dot_flops(n, c, fma)
    return (flops, total_size(in_data), n,
            {'groups': int(func.groups)})


def scratch_fixed_decorrelated_batch_normalization(
        func: FixedDecorrelatedBatchNormalization, in_data, **kwargs):
    r"""x regrouped and centred before the projection.

    NumPy and CuPy: the reshaped copy of x (none where the axes merge)
    and $x - \mu$, then $x - \mu$ beside the output: $\|x\|$ elements above
    it.
    """
    x = in_data[0]
    return x.size * x.dtype.itemsize


def calc_group_normalization(func: GroupNormalization, in_data, **kwargs):
    r"""GroupNormalization

    $$y = \gamma (x - \mu_{bg}) / \sqrt{\sigma_{bg}^2 + \epsilon} + \beta$$

    The statistics are taken over each of the $R = B g$ groups (batch size
    $B$ = `x.shape[0]`, $g$ = `groups`), then every element is centred,
    scaled and mapped by the per-channel affine multiply-add. $\epsilon$
    is folded into the per-group scale.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $5 \|x\| + 4R$ |
    | FLOPs (no FMA) | $7 \|x\| + 3R$ |
    | mread | $\|x\| + \|\gamma\| + \|\beta\|$ |
    | mwrite | $\|x\|$ |
    | params | `groups`, `eps` |
    """
    x, gamma, beta = in_data
    fma = kwargs.get('fma_1flop', False)
    rows = x.shape[0] * func.groups
    flops = _standardize_flops(x.size, rows, fma)
    return (flops, total_size(in_data), elements(x.size, x),
            {'groups': int(func.groups), 'eps': _float(func.eps)})


def scratch_group_normalization(func: GroupNormalization, in_data,
                                **kwargs):
    r"""The squared deviations, and y before a cast.

    NumPy: $\hat{x} = x - \mu$ ($\|x\|$ elements in the dtype x and
    $\gamma$ promote to, $I$ bytes) and its square, alive together while
    the variance is taken; $\hat{x}$ is then scaled in place into y,
    copied by `astype` when x's dtype differs (the output: $\|x\|$ in x's
    dtype). Peak above the output: $I$ ($\max(2I, I + O) - O$ with a cast
    to an output of $O$ bytes). The per-group mean and inverse deviation
    are kept on the node.

    CuPy: with cuDNN (`use_cudnn` `'auto'`/`'always'`) the zeroed dummy
    $\beta$ of $N G$ elements (cuDNN's batch normalization takes no
    workspace); without, the squared deviations as NumPy's path.
    """
    x, gamma = in_data[:2]
    inter = _interm_bytes(x, gamma)
    if kwargs.get('backend', 'numpy') == 'cupy' and uses_cudnn():
        rows = x.shape[0] * func.groups
        return rows * numpy.promote_types(x.dtype, gamma.dtype).itemsize
    out = x.size * x.dtype.itemsize
    if inter == out:
        return inter
    return max(2 * inter, inter + out) - out


def calc_layer_normalization(func: LayerNormalization, in_data, **kwargs):
    r"""LayerNormalization

    $$y = \gamma (x - \mu_b) / \sqrt{\sigma_b^2 + \epsilon} + \beta$$

    $x$ has shape $(B, K)$: the statistics are taken over each of the $B$
    rows, then every element is centred, scaled and mapped by the affine
    multiply-add. $\epsilon$ is folded into the per-row scale.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $5 \|x\| + 4B$ |
    | FLOPs (no FMA) | $7 \|x\| + 3B$ |
    | mread | $\|x\| + \|\gamma\| + \|\beta\|$ |
    | mwrite | $\|x\|$ |
    | params | `eps` |
    """
    x, gamma, beta = in_data
    fma = kwargs.get('fma_1flop', False)
    flops = _standardize_flops(x.size, x.shape[0], fma)
    return (flops, total_size(in_data), elements(x.size, x),
            {'eps': _float(func.eps)})


def _lrn_window_additions(channels, half_n):
    """Additions of the cross-channel window sums of one spatial position:
    channel ``c`` adds the channels ``c - half_n .. c + half_n`` that
    exist."""
    return 2 * sum(max(channels - i, 0) for i in range(1, half_n + 1))


def scratch_layer_normalization(func: LayerNormalization, in_data,
                                **kwargs):
    r"""x - mean, its square, x-hat and the scaled x-hat.

    NumPy and CuPy (the same `xp` code), with $X = \|x\|$ and $R$ = the
    rows ($B$ elements): `_compute` makes $\mu$, $x - \mu$, its square,
    the variance, $\sigma$, $1 / \sigma$ and $\hat{x}$ ($3X + 4R$; the
    square, $\mu$ and $\sigma$ are freed on return), then $\hat{x} \gamma$
    and $+ \beta$ (the output) beside $x - \mu$, $\hat{x}$ and two rows
    ($4X + 2R$). Peak above the output: $\max(2X + 4R, 3X + 2R)$.
    """
    x = in_data[0]
    isz = x.dtype.itemsize
    big = x.size * isz
    rows = (x.shape[0] if x.ndim else 1) * isz
    return max(2 * big + 4 * rows, 3 * big + 2 * rows)


def calc_local_response_normalization(func: LocalResponseNormalization,
                                      in_data, **kwargs):
    r"""LocalResponseNormalization

    $$y_c = x_c (k + \alpha \sum_{c'=c-h}^{c+h} x_{c'}^2)^{-\beta}$$

    with $h = \lfloor n/2 \rfloor$ (as Chainer's CPU code, for odd and even
    $n$ alike).

    Per element: a square, the multiply-add $k + \alpha s$, a pow and a
    multiplication; the window sums over the $C$ = `x.shape[1]` channels
    (clipped at the edges) cost, per position of the $\|x\|/C$ batch and
    spatial positions, $A = 2 \sum_{i=1}^{h} \max(C - i, 0)$ additions.
    $k$, $\alpha$ and $\beta$ enter every element's computation: each is
    read once ($n$ only sizes the windows).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $4 \|x\| + A \|x\| / C$ |
    | FLOPs (no FMA) | $5 \|x\| + A \|x\| / C$ |
    | mread | $\|x\| + 3$ |
    | mwrite | $\|x\|$ |
    | params | `n` (int), `k` (int when integral), `alpha`, `beta` |
    """
    x, = in_data
    fma = kwargs.get('fma_1flop', False)
    n = x.size
    channels = x.shape[1]
    positions = n // channels if channels else 0
    flops = ((4 if fma else 5) * n
             + _lrn_window_additions(channels, func.n // 2) * positions)
    params = {'n': int(func.n), 'k': _int_if_integral(func.k),
              'alpha': _float(func.alpha), 'beta': _float(func.beta)}
    return (flops, size_of(x) + elements(3, x), n, params)


def scratch_local_response_normalization(func: LocalResponseNormalization,
                                         in_data, **kwargs):
    r"""$x^2$ and the window sums.

    NumPy: `square(x)` and its copy summed over the window in place
    ($2 \|x\|$), alive to the end beside $k + \alpha \Sigma$ and its power
    (kept on the node for the backward, not scratch) and y: $2 \|x\|$
    elements above what the call leaves.

    CuPy: none ($x^2$ becomes y in place).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x, = in_data
    return 2 * x.size * x.dtype.itemsize


def calc_normalize_l2(func: NormalizeL2, in_data, **kwargs):
    r"""NormalizeL2

    $$y = x / (\sqrt{\textstyle\sum x^2} + \epsilon)$$

    The norm is taken over `axis` for each of the $R$ = $\|x\|$ / (size of
    the normalised axes) slices: a sum of squares per slice ($\|x\|$ FLOPs
    with FMA, $2\|x\| - R$ without), a square root and the addition of
    $\epsilon$ per slice (folded into the per-slice divisor: not a read),
    and a division per element.

    Several axes (Chainer accepts a tuple) form one norm over all of them,
    and `axis` is then shown as the tuple; a single axis is shown as an
    int, and $\epsilon$ is not shown (the params of 0.1.2).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $2 \|x\| + 2R$ |
    | FLOPs (no FMA) | $3 \|x\| + R$ |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `axis`: int, or a tuple of ints for several axes |
    """
    x, = in_data
    fma = kwargs.get('fma_1flop', False)
    n = x.size
    axes = tuple(int(a) for a in func.axis)
    length = prod(x.shape[a] for a in axes)
    slices = n // length if length else 0
    flops = dot_flops(slices, length, fma) + 2 * slices + n
    axis = axes[0] if len(axes) == 1 else axes
    return (flops, size_of(x), n, {'axis': axis})


def scratch_normalize_l2(func: NormalizeL2, in_data, **kwargs):
    r"""The squares, then the norms beside y.

    NumPy and CuPy: `square(x)` ($\|x\|$) and its sums over `axis` ($R$
    elements, one per norm), the square root and $+ \epsilon$ ($R$ each),
    then `x / norm` (y) beside the norms: $R$ elements above y (the
    squares are freed before y is made).
    """
    x, = in_data
    axis = func.axis
    axes = axis if isinstance(axis, tuple) else (axis,)
    reduced = prod([x.shape[a] for a in axes])
    return (x.size // reduced if reduced else 0) * x.dtype.itemsize


# Gradient nodes, applied while backward() runs.  They read the gradients
# and what the forward pass kept for them (inputs, outputs and the per-group
# statistics on the node: these are reads here), and write the gradients.

def _saved(array, count, like):
    """Elements of an array the forward pass kept on the node, or ``count``
    elements of ``like``'s dtype when the node does not hold it."""
    if array is None:
        return elements(count, like)
    return size_of(array)


def _grad_axis(func, x, gamma):
    """BN's reduced axes as the gradient node holds them (a tuple)."""
    if getattr(func, 'axis', None) is not None:
        return tuple(int(a) for a in func.axis)
    return (0,) + tuple(range(gamma.ndim + 1, x.ndim))


def calc_batch_normalization_grad(func: BatchNormalizationGrad, in_data,
                                  **kwargs):
    r"""BatchNormalizationGrad

    $$g_x = \frac{\gamma}{\sigma} \left( g_y - \frac{\hat{x}\, g_\gamma + g_\beta}{m} \right),\ g_\gamma = \sum g_y \hat{x},\ g_\beta = \sum g_y$$

    The backward pass of a training-mode BatchNormalization, counted as a
    straightforward implementation does it: with $C = \|\gamma\|$
    channels of $m = \|x\|/C$ elements each, it recomputes
    $\hat{x} = (x - \mu) / \sigma$ from the batch mean $\mu$ and inverse
    deviation $1/\sigma$ the forward pass kept ($2\|x\|$, the $2C$
    statistics are read), sums $g_\beta$ ($\|x\| - C$ additions) and
    $g_\gamma$ ($C$ dot products of length $m$), forms $\gamma/\sigma$,
    $g_\gamma/m$ and $g_\beta/m$ per channel ($3C$), then per element the
    multiply-add $\hat{x} g_\gamma/m + g_\beta/m$, the subtraction from
    $g_y$ and the product with $\gamma/\sigma$ (3 FLOPs with FMA, 4
    without).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $7 \|x\| + 2C$ |
    | FLOPs (no FMA) | $9 \|x\| + C$ |
    | mread | $\|x\| + \|\gamma\| + \|g_y\| + 2C$ |
    | mwrite | $\|g_x\| + \|g_\gamma\| + \|g_\beta\| = \|x\| + 2C$ |
    | params | `axis`: the reduced axes |
    """  # NOQA
    x, gamma, gy = in_data
    fma = kwargs.get('fma_1flop', False)
    n, c = x.size, gamma.size
    m = n // c if c else 0
    flops = (2 * n + max(n - c, 0) + dot_flops(c, m, fma) + 3 * c
             + (3 if fma else 4) * n)
    mread = (size_of(x) + size_of(gamma) + size_of(gy)
             + _saved(getattr(func, 'mean', None), c, gamma)
             + _saved(getattr(func, 'inv_std', None), c, gamma))
    mwrite = elements(n, x) + elements(2 * c, gamma)
    return (flops, mread, mwrite, {'axis': _grad_axis(func, x, gamma)})


def scratch_batch_normalization_grad(func: BatchNormalizationGrad, in_data,
                                     **kwargs):
    r"""x-hat and the temporaries of the input gradient's expression.

    NumPy: $\hat{x}$ (one array the size of x), then $g_y \hat{x}$ for
    $g_\gamma$ (freed), then $g_x$ evaluated left to right: $\hat{x}
    g_\gamma$, $+ g_\beta$, $\cdot 1/m$, $g_y -$, $\cdot \gamma/\sigma$,
    two temporaries alive at each step. Peak: $3 \|x\|$ elements in the
    promoted dtype, of which the output $g_x$ stays: $2 \|x\|$ above it
    (same dtypes).

    CuPy: with cuDNN none (no workspace); without, $\hat{x}$ and $g_y
    \hat{x}$ ($2 \|x\|$) before one kernel writes $g_x$: $\|x\|$ above it.
    """
    x, gamma = in_data[:2]
    interm = _interm_bytes(x, gamma)
    out = x.size * x.dtype.itemsize
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0 if _bn_cudnn(x) else max(2 * interm - out, interm)
    return 3 * interm - out


def calc_fixed_batch_normalization_grad(func: FixedBatchNormalizationGrad,
                                        in_data, **kwargs):
    r"""FixedBatchNormalizationGrad

    $$g_x = \frac{\gamma}{\sigma} g_y,\ g_\gamma = \sum g_y \hat{x},\ g_\beta = \sum g_y,\ g_\mu = -\frac{\gamma}{\sigma} g_\beta,\ g_v = -\frac{\gamma\, g_\gamma}{2 (v + \epsilon)}$$

    The backward pass of FixedBatchNormalization ($\sigma = \sqrt{v +
    \epsilon}$), with $C = \|\gamma\|$ channels of $m = \|x\|/C$ elements:
    per channel $1/(v + \epsilon)$, its square root and $\gamma/\sigma$
    ($4C$; $\epsilon$ is folded into this precomputation); per element
    $\hat{x} = (x - \mu)/\sigma$ (2) and $g_x$ (1); the sums $g_\beta$
    ($\|x\| - C$) and $g_\gamma$ ($C$ dot products of length $m$); then per
    channel $g_\mu$ (a product and a negation) and $g_v$ (3 products, the
    $-1/2$ is a literal).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $5 \|x\| + 8C$ |
    | FLOPs (no FMA) | $6 \|x\| + 7C$ |
    | mread | $\|x\| + \|\gamma\| + \|\mu\| + \|v\| + \|g_y\|$ |
    | mwrite | $\|g_x\| + \|g_\gamma\| + \|g_\beta\| + \|g_\mu\| + \|g_v\| = \|x\| + 4C$ |
    | params | `eps` |
    """  # NOQA
    x, gamma, mean, var, gy = in_data
    fma = kwargs.get('fma_1flop', False)
    n, c = x.size, gamma.size
    m = n // c if c else 0
    flops = (4 * c + 3 * n + max(n - c, 0) + dot_flops(c, m, fma)
             + 2 * c + 3 * c)
    mwrite = elements(n, x) + elements(4 * c, gamma)
    return (flops, total_size(in_data), mwrite, {'eps': _float(func.eps)})


def scratch_fixed_batch_normalization_grad(
        func: FixedBatchNormalizationGrad, in_data, **kwargs):
    r"""x-hat, gamma/sigma times gy, and x-hat times gy.

    NumPy and CuPy (the same `xp` code): $\hat{x}$, $g_x' = \gamma/\sigma
    \cdot g_y$ and $\hat{x} g_y$ (for $g_\gamma$, freed) are alive together,
    then `astype(x.dtype)` copies $g_x'$ into the output: $3 \|x\|$
    elements at the peak, $2 \|x\|$ above the output (same dtypes).
    """
    x, gamma = in_data[:2]
    return 3 * _interm_bytes(x, gamma) - x.size * x.dtype.itemsize


def _dbn_grad_sizes(gy, groups):
    """(n, g, C, m) of a decorrelated BN's gradient: ``gy`` viewed as ``g``
    groups of ``(C, m)`` matrices."""
    g, c, m = _dbn_shape(gy, groups)
    return gy.size, g, c, m


def calc_decorrelated_batch_normalization_grad(
        func: DecorrelatedBatchNormalizationGrad, in_data, **kwargs):
    r"""DecorrelatedBatchNormalizationGrad

    $$g_{\hat{x}} = V \Lambda^{-1/2} \left( g_{pca} - \bar{g}_{pca} + (S - M)^\top \hat{y}_{pca} \right)$$

    The backward pass of DecorrelatedBatchNormalization through its
    eigendecomposition $V \Lambda V^\top$ (kept by the forward pass with
    the whitened $\hat{y}_{pca} = \Lambda^{-1/2} V^\top (x - \mu)$). Per
    group of $C$ channels ($g$ groups, $m = \|g_y\|/(gC)$ columns, $n =
    \|g_y\|$): $g_{pca} = V^\top g_y$ ($n$ dot products of length $C$), its
    row means ($n$); $K_{ij} = 1/(\lambda_i - \lambda_j)$ ($gC^2$
    subtractions, $gC(C-1)$ reciprocals); $\Lambda^{1/2}$ and
    $\Lambda^{-1/2}$ ($2gC$); $F = g_{pca} \hat{y}_{pca}^\top / m$ ($gC^2$
    dot products of length $m$ and $gC^2$ divisions); $K^\top \circ (\Lambda
    F^\top + \Lambda^{1/2} F \Lambda^{1/2})$ with diagonal scalings ($5gC^2$),
    $S$ = that plus its transpose ($gC^2$), $S - M$ on the diagonal ($gC$);
    then $g_{pca} - \bar{g}_{pca}$ plus the product by $\hat{y}_{pca}$ ($2n$
    and $n$ dot products of length $C$), the row scaling by
    $\Lambda^{-1/2}$ ($n$) and the product by $V$ ($n$ dot products of
    length $C$).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $4Cn + 4n + 9gC^2 + 2gC$ |
    | FLOPs (no FMA) | $8Cn + n + 8gC^2 + 2gC$ |
    | mread | $\|g_y\| + \|\lambda\| + \|V\| + \|\hat{y}_{pca}\| = 2n + gC + gC^2$ |
    | mwrite | $\|g_x\| = n$ |
    | params | `groups` |
    """  # NOQA
    gy, = in_data
    fma = kwargs.get('fma_1flop', False)
    n, g, c, m = _dbn_grad_sizes(gy, func.groups)
    gc, gcc = g * c, g * c * c
    flops = (3 * dot_flops(n, c, fma) + 4 * n   # V^T gy, mean, R, scaling
             + gcc + g * c * max(c - 1, 0)      # K
             + 2 * gc                            # powers of the eigenvalues
             + dot_flops(gcc, m, fma) + gcc      # F
             + 5 * gcc + gcc + gc)               # mat, S, S - M
    mread = (size_of(gy)
             + _saved(getattr(func, 'eigvals', None), gc, gy)
             + _saved(getattr(func, 'eigvectors', None), gcc, gy)
             + _saved(getattr(func, 'y_hat_pca', None), n, gy))
    return (flops, mread, elements(n, gy), {'groups': int(func.groups)})


def scratch_decorrelated_batch_normalization_grad(
        func: DecorrelatedBatchNormalizationGrad, in_data, **kwargs):
    r"""$g_y$ regrouped and its projections, alive to the end.

    NumPy and CuPy: with $X = \|g_y\|$ elements: $g_y$ with the channel axis
    first reshaped into $(g, C, m)$ (a copy, $X$, none where the axes
    merge), its projection on the eigenvectors ($X$), $R$ ($X$, from two
    $X$ temporaries), $R^T V^{-1/2}$ ($X$) and $g_x$ ($X$): $5X$, of which
    $g_x$ stays: $4X$ ($3X$ without the copy), plus the $g C \times C$
    matrices.
    """
    gy, = in_data
    g = func.groups
    c = gy.shape[1] // g
    isz = gy.dtype.itemsize
    return (3 * gy.size * isz + _dbn_copy(gy, g)
            + 8 * g * c * c * isz)


def calc_fixed_decorrelated_batch_normalization_grad(
        func: FixedDecorrelatedBatchNormalizationGrad, in_data, **kwargs):
    r"""FixedDecorrelatedBatchNormalizationGrad

    $$g_x = P^\top g_y,\ g_\mu = -\sum_{cols} P^\top g_y,\ g_P = g_y (x - \mu)^\top$$

    The backward pass of FixedDecorrelatedBatchNormalization, $g$ groups
    of $C$ channels, $m = \|x\|/(gC)$ columns, $n = \|x\|$: $g_x$ ($n$ dot
    products of length $C$), $g_\mu$ (the row sums of $g_x$ and a negation
    per entry: $n$), $g_P$ (the centring, $n$, and $gC^2$ dot products of
    length $m$). Counted for the gradients as defined: Chainer 7.8.1 and
    6.7.0 return for $P$ an array of shape $(g, m, m)$ (the product of the
    broadcast mean with $g_y$) and for $\mu$ the first column of $-g_x$ only.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $2Cn + 2n$ |
    | FLOPs (no FMA) | $4Cn + n - gC^2$ |
    | mread | $\|x\| + \|\mu\| + \|P\| + \|g_y\|$ |
    | mwrite | $\|g_x\| + \|g_\mu\| + \|g_P\| = n + gC + gC^2$ |
    | params | `groups` |
    """  # NOQA
    x, mean, projection, gy = in_data
    fma = kwargs.get('fma_1flop', False)
    n, g, c, m = _dbn_grad_sizes(gy, func.groups)
    flops = (dot_flops(n, c, fma) + n + n
             + dot_flops(g * c * c, m, fma))
    mwrite = elements(n, x) + elements(g * c + g * c * c, mean)
    return (flops, total_size(in_data), mwrite, {'groups': int(func.groups)})


def scratch_fixed_decorrelated_batch_normalization_grad(
        func: FixedDecorrelatedBatchNormalizationGrad, in_data, **kwargs):
    r"""gy and x regrouped, x centred and its difference from x.

    NumPy and CuPy: gy and x with the channel axis first reshaped into
    $(g, C, m)$ (a copy of $\|x\|$ elements each, except where the axes
    merge: at batch 1, or a broadcast gy), $P^\top g_y$ (whose view is
    $g_x$), then `rhs` $= \hat{x} - \mu$ and $\hat{x} - $ `rhs` ($\|x\|$
    elements each), alive while `matmul` makes the gradient of $P$: the
    two copies and $2 \|x\|$ elements above the outputs.
    """
    x, mean, projection, gy = in_data
    g = func.groups
    return (_dbn_copy(gy, g) + _dbn_copy(x, g)
            + 2 * x.size * x.dtype.itemsize)


def _rows(x):
    """Rows $R$ of the ``(R, K)`` view GroupNormalization's helpers work
    on (one row per sample and group)."""
    return x.shape[0] if x.ndim else 1


def calc_group_norm_x_hat(func: _XHat, in_data, **kwargs):
    r"""_XHat

    $$\hat{x} = (x - \mu_r) / \sigma_r$$

    GroupNormalization's backward pass recomputes the normalised input
    from the per-row statistics the forward pass kept: $x$ is viewed as
    $R \times K$ ($R$ = batch size times groups); a subtraction and a
    multiplication by $1/\sigma_r$ per element; the $R$ means and $R$
    inverse deviations are read.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $2 \|x\|$ |
    | mread | $\|x\| + 2R$ |
    | mwrite | $\|x\|$ |
    | params | none |
    """
    x, = in_data
    rows = _rows(x)
    mread = size_of(x) + elements(2 * rows, x)
    return (2 * x.size, mread, elements(x.size, x), {})


def calc_group_norm_scale_shift_grad(func: _ScaleShiftGrad, in_data,
                                     **kwargs):
    r"""_ScaleShiftGrad

    $$g_{\hat{x}} = \gamma_c g_y,\ g_\gamma = \sum g_y \hat{x},\ g_\beta = \sum g_y$$

    The gradient of GroupNormalization's per-channel affine map ($C =
    \|\gamma\|$ channels of $\|g_y\|/C$ elements): a product per element,
    the sums $g_\beta$ ($\|g_y\| - C$ additions) and $g_\gamma$ ($C$ dot
    products of length $\|g_y\|/C$).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $3 \|g_y\| - C$ |
    | FLOPs (no FMA) | $4 \|g_y\| - 2C$ |
    | mread | $\|\hat{x}\| + \|\gamma\| + \|g_y\|$ |
    | mwrite | $\|g_{\hat{x}}\| + \|g_\gamma\| + \|g_\beta\| = \|g_y\| + 2C$ |
    | params | none |
    """  # NOQA
    x_hat, gamma, gy = in_data
    fma = kwargs.get('fma_1flop', False)
    n, c = gy.size, gamma.size
    length = n // c if c else 0
    flops = n + max(n - c, 0) + dot_flops(c, length, fma)
    mwrite = elements(n, gy) + elements(2 * c, gamma)
    return (flops, total_size(in_data), mwrite, {})


def scratch_group_norm_scale_shift_grad(func: _ScaleShiftGrad, in_data,
                                        **kwargs):
    r"""The product $g_y \hat{x}$ summed into $g_\gamma$.

    NumPy: `(gy * x_hat).sum(axis=(0, 2))` makes $\|g_y\|$ elements before
    the sum. CuPy: none (one reduction kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x_hat, _, gy = in_data
    return gy.size * numpy.promote_types(x_hat.dtype, gy.dtype).itemsize


def calc_group_norm_x_hat_grad(func: _XHatGrad, in_data, **kwargs):
    r"""_XHatGrad

    $$g_x = \frac{1}{\sigma_r} \left( g_{\hat{x}} - \overline{g_{\hat{x}}} - \hat{x}\, \overline{g_{\hat{x}} \hat{x}} \right)$$

    The gradient through the normalisation of GroupNormalization, row by
    row ($R$ rows of $K$; $n = \|g_{\hat{x}}\|$): the row means of
    $g_{\hat{x}}$ ($n$) and of $g_{\hat{x}} \hat{x}$ ($R$ dot products of
    length $K$ and $R$ divisions), then per element a subtraction, a
    multiply-subtract (1 FLOP with FMA, 2 without) and the product with
    $1/\sigma_r$. It reads $g_{\hat{x}}$, the $\hat{x}$ the node holds and
    the $R$ inverse deviations; its first input $x$ only gives the shape
    (it is kept for double backprop) and is not read.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $5n + R$ |
    | FLOPs (no FMA) | $7n$ |
    | mread | $2n + R$ |
    | mwrite | $n$ |
    | params | none |
    """  # NOQA
    _, gx_hat = in_data
    fma = kwargs.get('fma_1flop', False)
    n, rows = gx_hat.size, _rows(gx_hat)
    length = n // rows if rows else 0
    flops = (n + dot_flops(rows, length, fma) + rows
             + (2 if fma else 3) * n + n)
    mread = size_of(gx_hat) * 2 + elements(rows, gx_hat)
    return (flops, mread, elements(n, gx_hat), {})


def scratch_group_norm_x_hat_grad(func: _XHatGrad, in_data, **kwargs):
    r"""The products and differences of the standardization's gradient.

    NumPy: with $X$ the bytes of $g_{\hat{x}}$ and $R$ those of one value
    per row ($N G$ rows): the two row means ($2R$, alive to the end),
    `gx_hat * x_hat` ($X$, freed after its mean), then `gx_hat - avg` and
    `x_hat * avg2` ($2X$), their difference (written into the first from
    256 KiB on, else a new $X$), alive while the output $g_x$ is made.
    Peak above the output: $2R + X$ from 256 KiB, $2R + 2X$ below (a group
    of one element per row makes $R = X$).

    CuPy: with cuDNN, the per-group $g_\gamma$ and $g_\beta$ cuDNN's
    backward returns ($2 N G$ elements); without, the same expression, a
    new array for every operation ($2X$).
    """
    gx_hat = in_data[1]
    big = gx_hat.size * gx_hat.dtype.itemsize
    if kwargs.get('backend', 'numpy') == 'cupy':
        if uses_cudnn() and func.dummy_gamma is not None:
            return 2 * gx_hat.shape[0] * func.mean.dtype.itemsize
        return 2 * big
    rows = 2 * gx_hat.shape[0] * gx_hat.dtype.itemsize
    return rows + (big if elides(big) else 2 * big)


def calc_group_norm_mul_inv_std(func: _MulInvStd, in_data, **kwargs):
    r"""_MulInvStd

    $$z = y / \sigma_r$$

    A helper of GroupNormalization's double backprop: every row $r$ of $y$
    ($R$ rows) is multiplied by the inverse deviation $1/\sigma_r$ kept by
    the forward pass. The first input $x$ only gives the shape (kept for
    the next backprop): not read.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|y\|$ |
    | mread | $\|y\| + R$ |
    | mwrite | $\|y\|$ |
    | params | none |
    """
    _, y = in_data
    rows = _rows(y)
    return (y.size, size_of(y) + elements(rows, y), elements(y.size, y), {})


def calc_l2_set_item_zero(func: _SetItemZero, in_data, **kwargs):
    r"""_SetItemZero

    $$y = 0;\ y[\mathrm{mask}] = x$$

    A helper of NormalizeL2's backward pass: scatters the values $x$ (one
    per slice with a non-zero norm) into zeros shaped as the boolean mask.
    No arithmetic; the mask is read (in its own dtype, 1 byte per
    element) and every element of $y$ is written once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $0$ |
    | mread | $\|x\| + \|\mathrm{mask}\|$ |
    | mwrite | $\|\mathrm{mask}\|$ |
    | params | none |
    """
    x, = in_data
    mask = func.mask
    mread = size_of(x) + size_of(mask)
    return (0, mread, elements(mask.size, x), {})


def calc_local_response_normalization_grad(
        func: LocalResponseNormalizationGrad, in_data, **kwargs):
    r"""LocalResponseNormalizationGrad

    $$g_{x_c} = g_{y_c} s_c^{-\beta} - 2 \alpha \beta\, x_c \sum_{c'=c-h}^{c+h} \frac{y_{c'} g_{y_{c'}}}{s_{c'}}$$

    where $s = k + \alpha \sum x^2$ (the window sum of the forward pass)
    and $h = \lfloor n/2 \rfloor$. Per element: $y g_y / s$ (2), the
    window sums over the channels as in LocalResponseNormalization ($A$
    additions per position, see there), then $2\alpha\beta x$ times the sum
    (2) subtracted from $g_y s^{-\beta}$ (1 multiply-add; 2 FLOPs without
    FMA). It reads $x$, $y$, $g_y$ and the $s$ and $s^{-\beta}$ kept by the
    forward pass; the coefficient $2\alpha\beta$, an operand of every
    element, counts 1.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $5 \|x\| + A \|x\| / C$ |
    | FLOPs (no FMA) | $6 \|x\| + A \|x\| / C$ |
    | mread | $5 \|x\| + 1$ |
    | mwrite | $\|x\|$ |
    | params | `n` (int), `k` (int when integral), `alpha`, `beta` |
    """  # NOQA
    x, y, gy = in_data
    fma = kwargs.get('fma_1flop', False)
    n = x.size
    channels = x.shape[1]
    positions = n // channels if channels else 0
    flops = ((5 if fma else 6) * n
             + _lrn_window_additions(channels, func.n // 2) * positions)
    mread = total_size(in_data) + elements(2 * n + 1, x)
    params = {'n': int(func.n), 'k': _int_if_integral(func.k),
              'alpha': _float(func.alpha), 'beta': _float(func.beta)}
    return (flops, mread, elements(n, x), params)


def scratch_local_response_normalization_grad(
        func: LocalResponseNormalizationGrad, in_data, **kwargs):
    r"""The summand, its window sums and the terms of $g_x$.

    NumPy: with $X = \|x\|$ elements, `y * gy / unit_scale` ($X$, the
    division in place from 256 KiB on) and its copy summed over the
    window ($X$), then `gy * scale` and `2 alpha beta x` times the sums
    ($2X$, the product in place from 256 KiB on, else one more $X$) before
    their difference (written into `gy * scale` from 256 KiB on): peak
    $4X$ from 256 KiB, $5X$ below, of which $g_x$ stays: $3X$ or $4X$.

    CuPy: the summand ($X$; the window sums are written into $g_x$).
    """
    x = in_data[0]
    big = x.size * x.dtype.itemsize
    if kwargs.get('backend', 'numpy') == 'cupy':
        return big
    return (3 if elides(big) else 4) * big
