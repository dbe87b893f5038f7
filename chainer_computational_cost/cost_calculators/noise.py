"""Cost calculators for ``chainer.functions.noise``.

Convention shared by this module: a random array that the function draws
itself (a dropout mask, Gaussian noise, a zoneout flag) is treated as a
given constant array. It is read once where it is used, and drawing it
(random number generation, thresholding, scaling it) costs nothing and
writes nothing: only the arithmetic that applies it is counted. Such
functions only create a node in training mode (``F.dropout`` and
``F.zoneout`` return their input unchanged otherwise).

Bytes: inputs are read in their own dtypes. A random array is read in the
dtype Chainer gives it: a dropout mask has the dtype of x (or the given
mask's), Gaussian noise that of the mean (or the given one's), the masks
of SimplifiedDropconnect and the flags of Zoneout are booleans (1 byte per
element) unless a mask is given.

Scalar constants follow the rule of every calculator module: a scalar held
by the node that is an operand of the per-element computation is read once
and counts 1 element of mread; a scalar consumed only by per-channel,
per-row or per-group precomputation is folded into it and not counted;
numeric literals written in the formula are not reads. Here the scale
$1/(1 - ratio)$ of SimplifiedDropconnect multiplies every weight and counts
1; the ratios of Dropout and Zoneout only serve to draw the random arrays
and are not counted.
"""

from chainer.functions.noise.dropout import Dropout
from chainer.functions.noise.dropout import DropoutGrad
from chainer.functions.noise.dropout import DropoutGradCuDNN
from chainer.functions.noise.gaussian import Gaussian
from chainer.functions.noise.simplified_dropconnect import \
    SimplifiedDropconnect
from chainer.functions.noise.zoneout import Zoneout

import numpy

from chainer_computational_cost.cost_calculators import broadcast_shape
from chainer_computational_cost.cost_calculators import dot_flops
from chainer_computational_cost.cost_calculators import elements
from chainer_computational_cost.cost_calculators import elides
from chainer_computational_cost.cost_calculators import prod
from chainer_computational_cost.cost_calculators import reshape_view
from chainer_computational_cost.cost_calculators import size_of
from chainer_computational_cost.cost_calculators import strides_of
from chainer_computational_cost.cost_calculators import uses_cudnn

#: The family of calls whose time one fit of a calibration predicts
#: (``analysis.calibration.FAMILIES``): this module's.
TIME_FAMILY = 'noise'


#: Drawn masks and flags that are NumPy/CuPy booleans.
_BOOL = numpy.dtype(bool)


def _random_array(array, count, like):
    """Elements of a random array the node holds: its own size and dtype
    when it is already there (drawn in forward, or given), else ``count``
    elements of the dtype of ``like`` (what forward will draw)."""
    if getattr(array, 'dtype', None) is None or not hasattr(array, 'size'):
        return elements(count, like)
    return elements(array.size, array)


# Products with a dropout mask: the forward and its gradients (the same
# product, applied to the upstream gradient).

_MASKED = {
    Dropout: {
        'formula': r'y = x \odot m', 'a': 'x',
        'text': 'The mask $m$ (shape of x, already holding the $1/(1-ratio)$ '
                'scale) is a constant array read once, in its own dtype (the '
                "dtype of x when Chainer draws it); drawing it is not "
                'counted. One multiplication per element.',
        'params': '`ratio`: dropout ratio'},
    DropoutGrad: {
        'formula': r'g_x = g_y \odot m', 'a': 'g_y',
        'text': "Dropout's gradient: the product of the upstream gradient "
                'with the mask $m$ the forward used, read once in its own '
                'dtype. One multiplication per element.',
        'params': 'none'},
    DropoutGradCuDNN: {
        'formula': r'g_x = g_y \odot m', 'a': 'g_y',
        'text': "Dropout's gradient when the forward ran with cuDNN (GPU "
                'only), counted as DropoutGrad: cuDNN recreates the mask '
                'from its saved states; the mask is taken as an array of the '
                'shape and dtype of $g_y$, read once. One multiplication per '
                'element.',
        'params': '`ratio`: dropout ratio'},
}


def calc_masked(func: tuple(_MASKED), in_data, **kwargs):
    r"""<<name>>

    $$<<formula>>$$

    <<text>>

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|<<a>>\|$ |
    | mread | $\|<<a>>\| + \|m\|$ |
    | mwrite | $\|<<a>>\|$ |
    | params | <<params>> |
    """
    # The classes differ only in their documentation: the product is the
    # same, and a node without a mask attribute (cuDNN) or a ratio has
    # none to show.
    a, = in_data
    n = a.size
    mread = size_of(a) + _random_array(getattr(func, 'mask', None), n, a)
    ratio = getattr(func, 'dropout_ratio', None)
    return (n, mread, n, {} if ratio is None else {'ratio': float(ratio)})


calc_masked.family = _MASKED


def scratch_dropout(func: Dropout, in_data, **kwargs):
    r"""The uniform draws and the boolean flags that make the mask.

    NumPy: `numpy.random.rand(*x.shape)` ($\|x\|$ float64) compared into
    flags ($\|x\|$ bytes, bool); the draws are freed, `scale * flag` makes
    the mask (kept on the node for the backward) and `x * mask` the output.
    Peak above what the call leaves (mask and y): $\max(9 \|x\| -
    \text{mask} - y, \|x\|)$ bytes. With a mask given by the caller no
    draws are made; the hook cannot tell once the node holds a mask, so
    they are counted (an overestimate).

    CuPy: with cuDNN (`use_cudnn` `'auto'`/`'always'`, contiguous x) none
    (cuDNN's dropout states are kept on the node); without, the float32
    draws ($4 \|x\|$ bytes) before one kernel writes the mask and y.
    """
    x, = in_data
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0 if uses_cudnn() else 4 * x.size
    kept = 2 * x.size * x.dtype.itemsize
    return max(9 * x.size - kept, x.size)


def calc_gaussian(func: Gaussian, in_data, **kwargs):
    r"""Gaussian

    $$y = \mu + \exp(\ln\sigma^2 / 2) \epsilon$$

    Per element: a halving, an exp and a fusable multiply-add (1 FLOP with
    FMA, 2 without). The noise $\epsilon$ (shape of $\mu$) is a constant
    array read once; drawing it is not counted, nor is the cached copy of
    the scaled noise Chainer keeps (backward does not use it).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $3 \|\mu\|$ |
    | FLOPs (no FMA) | $4 \|\mu\|$ |
    | mread | $\|\mu\| + \|\ln\sigma^2\| + \|\epsilon\|$ |
    | mwrite | $\|\mu\|$ |
    | params | none |
    """
    mean, ln_var = in_data
    n = mean.size
    per_element = 3 if kwargs.get('fma_1flop', False) else 4
    eps = _random_array(getattr(func, 'eps', None), ln_var.size, mean)
    return (per_element * n, size_of(mean) + size_of(ln_var) + eps, n, {})


def calc_simplified_dropconnect(func: SimplifiedDropconnect, in_data,
                                **kwargs):
    r"""SimplifiedDropconnect

    $$y_i = ((s W) \odot M_i) x_i + b, \quad s = 1 / (1 - ratio)$$

    x is flattened to $n$ rows of $N$ = `W.shape[1]` features, W is
    $(M_o, N)$. The mask has shape $(n, M_o, N)$ with `use_batchwise_mask`
    (one mask per sample), else $(M_o, N)$; it is a constant array read
    once, drawing it is not counted. FLOPs: $\|W\|$ for $sW$, $\|mask\|$
    for the masking, then the per-sample products as in LinearFunction:
    $n M_o N$ multiply-adds with FMA, $n M_o (2N - 1)$ FLOPs without, plus
    $n M_o$ bias additions. The scale $s$ is a scalar constant read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\|W\| + \|mask\| + n M_o N + n M_o [b]$ |
    | FLOPs (no FMA) | $\|W\| + \|mask\| + n M_o (2N-1) + n M_o [b]$ |
    | mread | $\|x\| + \|W\| + \|b\| + \|mask\| + 1$ |
    | mwrite | $n M_o$ |
    | params | `ratio`, `batchwise_mask`: one mask per sample, `nobias` |
    """
    x, W = in_data[:2]
    b = in_data[2] if len(in_data) == 3 else None
    m_out, n_in = W.shape
    n = x.shape[0]
    batchwise = bool(func.use_batchwise_mask)
    mask_size = (n if batchwise else 1) * W.size
    y_size = n * m_out
    # dot products of length n_in (none at all when n_in is 0)
    products = dot_flops(y_size, n_in, kwargs.get('fma_1flop', False))
    flops = W.size + mask_size + products
    # the scale multiplies W: one element of W's dtype
    mread = (size_of(x) + size_of(W) + elements(1, W)
             + _random_array(getattr(func, 'mask', None), mask_size, _BOOL))
    if b is not None:
        flops += y_size
        mread += size_of(b)
    params = {'ratio': float(func.ratio), 'batchwise_mask': batchwise,
              'nobias': b is None}
    return (flops, mread, y_size, params)


def calc_zoneout(func: Zoneout, in_data, **kwargs):
    r"""Zoneout

    $$y = \mathrm{where}(f, x, h)$$

    Counted as a select: one operation per output element choosing the new
    state x or the previous state h (Chainer computes it as
    $h \odot \bar f + x \odot f$; the products and the sum are not
    counted). The random flag $f$ (shape of x, booleans) is a constant
    array read once; drawing it and its complement is not counted. The
    output has the broadcast shape of h and x (normally both are equal).

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|y\|$ |
    | mread | $\|h\| + \|x\| + \|f\|$ ($\|f\| = \|x\|$, 1 byte each) |
    | mwrite | $\|y\|$ |
    | params | `ratio`: zoneout ratio |
    """
    h, x = in_data
    y_size = prod(broadcast_shape(h.shape, x.shape))
    flag = _random_array(getattr(func, 'flag_x', None), x.size, _BOOL)
    return (y_size, size_of(h) + size_of(x) + flag, y_size,
            {'ratio': float(func.zoneout_ratio)})


def scratch_zoneout(func: Zoneout, in_data, **kwargs):
    r"""The draws, the second flags, and the two masked products.

    NumPy: `numpy.random.rand(*x.shape)` ($\|x\|$ float64) compared into
    `flag_x` ($\|x\|$ bytes, kept), `ones_like(flag_x) ^ flag_x` into
    `flag_h` (kept; the ones are a third array below 256 KiB), then `h *
    flag_h + x * flag_x`: two products ($\|x\|$ elements each) and their
    sum (written into the first from 256 KiB on). Above the flags and the
    output: the largest of these steps.

    CuPy: the same path (float64 draws, no temporary elision).
    """
    x = in_data[1]
    n, e = x.size, x.size * x.dtype.itemsize
    cupy = kwargs.get('backend', 'numpy') == 'cupy'
    ones = n if cupy or not elides(n) else 0
    total = e if cupy or not elides(e) else 0
    return max(9 * n, 2 * n + ones, 2 * n + 2 * e + total) - 2 * n - e


def scratch_simplified_dropconnect(func: SimplifiedDropconnect, in_data,
                                   **kwargs):
    r"""The mask's draws and W scaled and masked for every sample.

    NumPy: unless a mask was given (the hook cannot tell once the node
    holds one: counted, an upper bound then), `numpy.random.rand` draws
    $M$ float64 values ($M$ the mask's elements: batch x out x in with a
    mask per sample, else out x in) compared into the boolean mask (kept);
    a strided x is copied by `reshape(len(x), -1)`; `W * scale` ($\|W\|$
    elements) and its product with the mask ($M$ elements) before
    `einsum` writes y. Above the mask and y: the largest step.

    CuPy: the same with float32 draws.
    """
    x, W = in_data[0], in_data[1]
    s = W.dtype.itemsize
    mask = prod(func.mask.shape) if getattr(func, 'mask', None) is not None \
        else (len(x) if func.use_batchwise_mask else 1) * W.size
    draws = (4 if kwargs.get('backend', 'numpy') == 'cupy' else 8) * mask
    flat = (len(x), prod(x.shape[1:]))
    copy = 0 if reshape_view(x.shape, strides_of(x), flat) is not None \
        else x.size * x.dtype.itemsize
    y = len(x) * W.shape[0] * s
    return max(draws + mask, mask + copy + W.size * s + mask * s,
               mask + copy + mask * s + y) - mask - y


def scratch_gaussian(func: Gaussian, in_data, **kwargs):
    r"""The float64 draws beside their cast (in float16 and float32).

    NumPy: `numpy.random.standard_normal` draws $\|x\|$ float64 values,
    cast to the node's `eps` (kept) unless the input is float64 (counted
    whenever the node holds `eps`: given noise cannot be told apart, an
    upper bound then); then `exp(ln_var * 0.5) * eps` (kept as `noise`)
    and `mean + noise`: three arrays of $\|x\|$ elements at most, all left
    alive. Above them: $8\|x\|$ + the cast, less $3\|x\|$ elements.

    CuPy: none above what the call leaves (float32 draws for float16 are
    as large as eps and the empty noise together).
    """
    mean = in_data[0]
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    n, e = mean.size, mean.size * mean.dtype.itemsize
    draws = 8 * n + (e if mean.dtype.itemsize != 8 else 0)
    return max(draws, 3 * e) - 3 * e
