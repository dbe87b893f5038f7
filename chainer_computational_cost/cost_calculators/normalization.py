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
    FixedBatchNormalization
from chainer.functions.normalization.batch_renormalization import \
    BatchRenormalizationFunction
from chainer.functions.normalization.decorrelated_batch_normalization \
    import DecorrelatedBatchNormalization
from chainer.functions.normalization.decorrelated_batch_normalization \
    import FixedDecorrelatedBatchNormalization
from chainer.functions.normalization.group_normalization import \
    GroupNormalization
from chainer.functions.normalization.l2_normalization import NormalizeL2
from chainer.functions.normalization.layer_normalization import \
    LayerNormalization
from chainer.functions.normalization.local_response_normalization import \
    LocalResponseNormalization

from chainer_computational_cost.cost_calculators import dot_flops
from chainer_computational_cost.cost_calculators import elements
from chainer_computational_cost.cost_calculators import prod
from chainer_computational_cost.cost_calculators import size_of
from chainer_computational_cost.cost_calculators import total_size


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
