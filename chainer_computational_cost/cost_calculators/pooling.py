"""Cost calculators for ``chainer.functions.pooling``.

Conventions shared by this module:

* a max over a window of k elements is k - 1 comparisons; an average is
  k - 1 additions and 1 division;
* window position arithmetic is index arithmetic and is not counted;
* the regions of the ROI functions depend on the values of the ROIs, which
  a calculator never reads: they are assumed to cover the whole feature
  map, so that x is read whole and a bin of an (outh, outw) grid spans
  ceil(H / outh) x ceil(W / outw) elements (or sampling points);
* a pooling reads all of x, even where a stride beyond the window skips
  elements (as a strided convolution does);
* scattering windows back (unpooling, the gradients of pooling) is a
  col2im: values landing on the same position are added, the first one
  only written; where the positions depend on values (argmax indexes),
  only the additions that no choice of positions avoids are counted;
* ROI max pooling and ROI max align write their argmax (int32) besides
  their output;
* a gradient class is costed like any function: it reads the gradients
  and the saved arrays it uses (argmax indexes included) and writes the
  gradient it produces, zeros included. Its input shape is the forward
  node's, or the output shape the hook gives.
"""

import math

import chainer
import numpy
from chainer.functions.pooling.average_pooling_2d import AveragePooling2D
from chainer.functions.pooling.average_pooling_2d import AveragePooling2DGrad
from chainer.functions.pooling.average_pooling_nd import AveragePoolingND
from chainer.functions.pooling.average_pooling_nd import AveragePoolingNDGrad
from chainer.functions.pooling.max_pooling_nd import MaxPoolingND
from chainer.functions.pooling.max_pooling_nd import MaxPoolingNDGrad
from chainer.functions.pooling.max_pooling_nd import MaxPoolingNDWithIndexes
from chainer.functions.pooling.roi_average_align_2d import ROIAverageAlign2D
from chainer.functions.pooling.roi_average_pooling_2d import \
    ROIAveragePooling2D
from chainer.functions.pooling.roi_max_align_2d import ROIMaxAlign2D
from chainer.functions.pooling.roi_max_pooling_2d import ROIMaxPooling2D
from chainer.functions.pooling.roi_pooling_2d import ROIPooling2D
from chainer.functions.pooling.roi_pooling_2d import ROIPooling2DGrad
from chainer.functions.pooling.unpooling_2d import Unpooling2D
from chainer.functions.pooling.unpooling_2d import Unpooling2DGrad
from chainer.functions.pooling.unpooling_nd import UnpoolingND
from chainer.functions.pooling.unpooling_nd import UnpoolingNDGrad
from chainer.functions.pooling.upsampling_2d import Upsampling2D
from chainer.functions.pooling.upsampling_2d import Upsampling2DGrad

from chainer_computational_cost.cost_calculators import c_strides
from chainer_computational_cost.cost_calculators import compact
from chainer_computational_cost.cost_calculators import conv_out_size
from chainer_computational_cost.cost_calculators import deconv_out_size
from chainer_computational_cost.cost_calculators import Elements
from chainer_computational_cost.cost_calculators import elements
from chainer_computational_cost.cost_calculators import elides
from chainer_computational_cost.cost_calculators import im2col_bytes
from chainer_computational_cost.cost_calculators import prod
from chainer_computational_cost.cost_calculators import reads_out_shapes
from chainer_computational_cost.cost_calculators import reshape_view
from chainer_computational_cost.cost_calculators import scatter_axis
from chainer_computational_cost.cost_calculators import size_of
from chainer_computational_cost.cost_calculators import total_size

#: The family of calls whose time one fit of a calibration predicts
#: (``analysis.calibration.FAMILIES``): this module's.
TIME_FAMILY = 'pooling'


def _window_params(ksize, stride, pad):
    return {'k': compact(ksize), 's': compact(stride), 'p': compact(pad)}


def _pooled_size(shape, ksize, stride, pad, cover_all):
    """Number of elements of the output of a pooling of an array of
    ``shape`` ``(n, c, d_1, ..., d_N)``."""
    dims = [conv_out_size(size, k, s, p, cover_all=cover_all)
            for size, k, s, p in zip(shape[2:], ksize, stride, pad)]
    return prod(shape[:2]) * prod(dims)


def _unpooled_dims(shape, ksize, stride, pad, cover_all, outs):
    """Output spatial sizes of an unpooling of an array of ``shape``;
    ``outs`` holds the sizes the function was given or has set, None where
    they are to be derived from the input."""
    return tuple(int(deconv_out_size(size, k, s, p, cover_all=cover_all))
                 if out is None else int(out)
                 for size, k, s, p, out
                 in zip(shape[2:], ksize, stride, pad, outs))


def _unpool_params(ksize, stride, pad, dims, cover_all):
    """The window, ``outsize`` (a tuple of ints) and ``cover_all`` (a
    bool): 0.1.2's params of Unpooling2D and Upsampling2D."""
    params = _window_params(ksize, stride, pad)
    params['outsize'] = dims
    params['cover_all'] = bool(cover_all)
    return params


def _max_pool_cost(x, ksize, stride, pad, cover_all):
    y_size = _pooled_size(x.shape, ksize, stride, pad, cover_all)
    flops = y_size * (prod(ksize) - 1)
    return (flops, x.size, y_size, _window_params(ksize, stride, pad))


def _avg_pool_cost(x, ksize, stride, pad, cover_all):
    y_size = _pooled_size(x.shape, ksize, stride, pad, cover_all)
    flops = y_size * prod(ksize)
    return (flops, x.size, y_size, _window_params(ksize, stride, pad))


def _gather_at_argmax_cost(x, indexes, ksize, stride, pad, cover_all):
    """A max pooling's double backward: reads the argmax indices (in their
    own dtype when the pooling kept them) and at most one selected element
    per output (and no more than x has)."""
    y_size = _pooled_size(x.shape, ksize, stride, pad, cover_all)
    mread = elements(min(x.size, y_size), x) + _index_count(y_size, indexes)
    return (0, mread, y_size, _window_params(ksize, stride, pad))


def _index_count(count, indexes):
    """``count`` index elements, in the dtype of the ``indexes`` array when
    there is one, else int32 (what the GPU kernels and cuDNN-free paths
    keep)."""
    if getattr(indexes, 'dtype', None) is not None:
        return elements(count, indexes)
    return Elements(count, 4 * count)


def _pool2d_window(func):
    return (func.kh, func.kw), (func.sy, func.sx), (func.ph, func.pw)


def calc_max_pooling_nd(func: MaxPoolingND, in_data, **kwargs):
    r"""MaxPoolingND

    $$y_{n,c,\mathbf{i}} = \max_{\mathbf{u}} x_{n,c,\mathbf{i} \mathbf{s} + \mathbf{u} - \mathbf{p}}$$

    Each output is the max of a window of $\prod_i k_i$ elements:
    $\prod_i k_i - 1$ comparisons (padded positions included). The output
    size per axis is `conv_out_size` with `cover_all`. The argmax indices
    the CPU implementation caches for backward are not counted as written.
    `F.max_pooling_2d` creates this class on Chainer 7.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|y\| (\prod_i k_i - 1)$ |
    | mread | $\|x\|$ |
    | mwrite | $\|y\|$ |
    | params | `k`, `s`, `p`: kernel, stride, padding (int when equal on every axis, else a tuple) |
    """  # NOQA
    x, = in_data
    return _max_pool_cost(x, func.ksize, func.stride, func.pad,
                          func.cover_all)


def calc_max_pooling_2d(
        func: 'chainer.functions.pooling.max_pooling_2d.MaxPooling2D',
        in_data, **kwargs):
    r"""MaxPooling2D

    $$y_{n,c,i,j} = \max_{u,v} x_{n,c,i s_y + u - p_h, j s_x + v - p_w}$$

    Chainer 6's 2-D max pooling (`F.max_pooling_2d` there); same model as
    MaxPoolingND: $k_h k_w - 1$ comparisons per output.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|y\| (k_h k_w - 1)$ |
    | mread | $\|x\|$ |
    | mwrite | $\|y\|$ |
    | params | `k`, `s`, `p`: kernel, stride, padding (int when equal on both axes, else a pair) |
    """  # NOQA
    x, = in_data
    ksize, stride, pad = _pool2d_window(func)
    return _max_pool_cost(x, ksize, stride, pad, func.cover_all)


def calc_max_pooling_nd_with_indexes(func: MaxPoolingNDWithIndexes, in_data,
                                     **kwargs):
    r"""MaxPoolingNDWithIndexes

    $$y_{n,c,\mathbf{i}} = x_{n,c,\mathbf{i} \mathbf{s} + \mathrm{idx}_{n,c,\mathbf{i}} - \mathbf{p}}$$

    Used by the double backward of max pooling: picks in each window the
    element at the argmax index saved by the forward max pooling. A gather:
    0 FLOPs; it reads the indices ($\|y\|$ of them) and the selected
    elements (at most $\min(\|x\|, \|y\|)$ distinct ones). The window is
    that of the original max pooling.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $0$ |
    | mread | $\min(\|x\|, \|y\|) + \|y\|$ |
    | mwrite | $\|y\|$ |
    | params | `k`, `s`, `p`: kernel, stride, padding (int when equal on every axis, else a tuple) |
    """  # NOQA
    x, = in_data
    # Chainer 7 keeps the pooling node in ``func.func``; Chainer 6 copies
    # its window attributes onto the node itself.
    pool = getattr(func, 'func', func)
    return _gather_at_argmax_cost(x, getattr(pool, 'indexes', None),
                                  pool.ksize, pool.stride, pool.pad,
                                  pool.cover_all)


def scratch_max_pooling_nd(func: MaxPoolingND, in_data, **kwargs):
    r"""im2col's padded copy and columns, argmax's transposed copy of them.

    NumPy: `im2col_nd_cpu` pads x with $-\infty$ ($P = N C \prod_a (d_a +
    2 p_a + s_a - 1)$ elements) and fills the columns ($C = N C \prod_a
    k_a \prod_a out_a$), both alive until it returns; `col.max(axis=2)`
    writes y, then `col.argmax(axis=2)` copies the columns with the window
    axis last (NumPy's argmax works on a contiguous last axis) and writes
    the int64 indexes the node keeps for its backward. The peak above what
    the call leaves (y and the indexes): $\max(P + C - \|y\| - \|i\|, 2C)$
    in x's dtype, the indexes 8 bytes each.

    CuPy: none; cuDNN's pooling takes no workspace, and the kernels without
    it write y and the indexes directly.
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x, = in_data
    isz = x.dtype.itemsize
    ksize, stride, pad = tuple(func.ksize), tuple(func.stride), tuple(
        func.pad)
    padded, col = im2col_bytes(x.shape, ksize, stride, pad, isz,
                               func.cover_all)
    n_out = col // isz // prod(ksize)
    kept = n_out * isz + n_out * 8
    return max(padded + col - kept, 2 * col)


def calc_max_pooling_2d_with_indexes(
        func: 'chainer.functions.pooling.max_pooling_2d.'
              'MaxPooling2DWithIndexes',
        in_data, **kwargs):
    r"""MaxPooling2DWithIndexes

    $$y_{n,c,i,j} = x_{n,c,i s_y + \mathrm{idx}_{n,c,i,j} / k_w - p_h, j s_x + \mathrm{idx}_{n,c,i,j} \bmod k_w - p_w}$$

    Chainer 6's counterpart of MaxPoolingNDWithIndexes (the double
    backward of 2-D max pooling), with the same model: a gather, 0 FLOPs,
    reading the indices and at most $\min(\|x\|, \|y\|)$ selected
    elements.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $0$ |
    | mread | $\min(\|x\|, \|y\|) + \|y\|$ |
    | mwrite | $\|y\|$ |
    | params | `k`, `s`, `p`: kernel, stride, padding (int when equal on both axes, else a pair) |
    """  # NOQA
    x, = in_data
    ksize, stride, pad = _pool2d_window(func)
    return _gather_at_argmax_cost(x, getattr(func, 'indexes', None), ksize,
                                  stride, pad, func.cover_all)


def calc_average_pooling_2d(func: AveragePooling2D, in_data, **kwargs):
    r"""AveragePooling2D

    $$y_{n,c,i,j} = \frac{1}{k_h k_w} \sum_{u,v} x_{n,c,i s_y + u - p_h, j s_x + v - p_w}$$

    Each output sums a window of $k_h k_w$ elements ($k_h k_w - 1$
    additions) and divides by $k_h k_w$ (1 division; padded positions count
    as zeros). This function has no `cover_all` mode.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|y\| k_h k_w$ |
    | mread | $\|x\|$ |
    | mwrite | $\|y\|$ |
    | params | `k`, `s`, `p`: kernel, stride, padding (int when equal on both axes, else a pair) |
    """  # NOQA
    x, = in_data
    ksize, stride, pad = _pool2d_window(func)
    return _avg_pool_cost(x, ksize, stride, pad, False)


def scratch_max_pooling_2d(
        func: 'chainer.functions.pooling.max_pooling_2d.MaxPooling2D',
        in_data, **kwargs):
    r"""im2col's padded copy and columns, argmax's transposed copy of them.

    NumPy (Chainer 6): `im2col_cpu` with $-\infty$ padding ($P$ padded and
    $C$ column elements alive together), then `col.argmax(axis=2)` (a copy
    of the columns with the window axis last, and the int64 indexes the
    node keeps) before `col.max(axis=2)` writes y. Peak above what the call
    leaves (y and the indexes): $\max(P + C - \|y\| - \|i\|, 2C - \|y\|)$
    in x's dtype, the indexes 8 bytes each.

    CuPy: none (cuDNN's pooling takes no workspace; the kernels write y
    and the indexes directly).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x, = in_data
    isz = x.dtype.itemsize
    ksize = (func.kh, func.kw)
    padded, col = im2col_bytes(x.shape, ksize, (func.sy, func.sx),
                               (func.ph, func.pw), isz, func.cover_all)
    n_out = col // isz // prod(ksize)
    return max(padded + col - n_out * (isz + 8), 2 * col - n_out * isz)


def scratch_average_pooling_2d(func: AveragePooling2D, in_data, **kwargs):
    r"""im2col's padded copy and columns.

    NumPy: `im2col_cpu` pads x ($P = N C (h + 2 p_h + s_y - 1)(w + 2 p_w +
    s_x - 1)$ elements) and fills the columns ($C = N C k_h k_w h_{out}
    w_{out}$), both alive until it returns; `col.mean(axis=(2, 3))` writes
    y. Peak above y: $\max(P + C - \|y\|, C)$ elements.

    CuPy: none (cuDNN's pooling takes no workspace; the kernel without it
    writes y directly).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x, = in_data
    return _avg_pool_scratch(x, (func.kh, func.kw), (func.sy, func.sx),
                             (func.ph, func.pw), False, 0)


def _avg_pool_scratch(x, ksize, stride, pad, cover_all, extra):
    """Bytes above y of an average pooling's NumPy path: im2col, then a
    reduction of the columns (``extra`` more arrays of y's size alive with
    the columns)."""
    isz = x.dtype.itemsize
    padded, col = im2col_bytes(x.shape, ksize, stride, pad, isz, cover_all)
    out = col // prod(ksize)
    return max(padded + col - out, col + extra * out)


def scratch_average_pooling_nd(func: AveragePoolingND, in_data, **kwargs):
    r"""im2col's padded copy and columns.

    NumPy: `im2col_nd_cpu` ($P$ padded and $C$ column elements alive
    together), then `col.mean` over the window axes writes y:
    $\max(P + C - \|y\|, C)$ elements. With `pad_value=None` the sum and
    its division by the window widths are two arrays of y's size (the
    widths, kept on the node, are not counted): $C + \|y\|$ at least.

    CuPy: none (cuDNN's pooling or one kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x, = in_data
    return _avg_pool_scratch(x, tuple(func.ksize), tuple(func.stride),
                             tuple(func.pad), func.cover_all,
                             1 if func.pad_value is None else 0)


def calc_average_pooling_nd(func: AveragePoolingND, in_data, **kwargs):
    r"""AveragePoolingND

    $$y_{n,c,\mathbf{i}} = \frac{1}{w_{\mathbf{i}}} \sum_{\mathbf{u}} x_{n,c,\mathbf{i} \mathbf{s} + \mathbf{u} - \mathbf{p}}$$

    Each output sums a window of $\prod_i k_i$ elements and divides once.
    With `pad_value=0` the divisor $w$ is $\prod_i k_i$ (padding counted as
    zeros); with `pad_value=None` it is the number of non-padded elements of
    the window, which is index arithmetic: the FLOPs are the same.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|y\| \prod_i k_i$ |
    | mread | $\|x\|$ |
    | mwrite | $\|y\|$ |
    | params | `k`, `s`, `p`: kernel, stride, padding (int when equal on every axis, else a tuple) |
    """  # NOQA
    x, = in_data
    return _avg_pool_cost(x, func.ksize, func.stride, func.pad,
                          func.cover_all)


def _scatter(in_dims, ksize, stride, pad, out_dims):
    """(hits, reached) per (n, c) plane of the col2im that scatters windows
    of an ``in_dims`` grid onto an ``out_dims`` grid (see
    :func:`scatter_axis`)."""
    axes = [scatter_axis(size, k, s, p, out)
            for size, k, s, p, out
            in zip(in_dims, ksize, stride, pad, out_dims)]
    return prod(h for h, _ in axes), prod(r for _, r in axes)


def _unpool_cost(x, ksize, stride, pad, cover_all, outs):
    dims = _unpooled_dims(x.shape, ksize, stride, pad, cover_all, outs)
    planes = prod(x.shape[:2])
    hits, reached = _scatter(x.shape[2:], ksize, stride, pad, dims)
    return (planes * (hits - reached), x.size, planes * prod(dims),
            _unpool_params(ksize, stride, pad, dims, cover_all))


def calc_unpooling_2d(func: Unpooling2D, in_data, **kwargs):
    r"""Unpooling2D

    $$y_{n,c,o_y,o_x} = \sum_{(i,u):\, i s_y + u - p_h = o_y} \; \sum_{(j,v):\, j s_x + v - p_w = o_x} x_{n,c,i,j}$$

    Each input element is copied over its $k_h \times k_w$ window of the
    output (a col2im), and where windows overlap ($k > s$) the copies are
    added. Along each axis, $H_a$ counts the (input, window tap) pairs that
    land inside the output and $R_a$ the output positions they reach
    (shapes only: no value is looked at); the first copy reaching a
    position is a write, every further one an addition. With $k \le s$ no
    window overlaps and the cost is pure data movement. The output size is
    `outsize` when given, else $s (in - 1) + k - 2p$ per axis ($- s + 1$
    more with `cover_all`).

    | Item | Value |
    |:-----|:------|
    | FLOPs | $N C (H_h H_w - R_h R_w)$ |
    | mread | $\|x\|$ |
    | mwrite | $\|y\|$ |
    | params | `k`, `s`, `p`: kernel, stride, padding (int when equal on both axes, else a pair); `outsize`: the output's (h, w); `cover_all` |
    """  # NOQA
    x, = in_data
    ksize, stride, pad = _pool2d_window(func)
    return _unpool_cost(x, ksize, stride, pad, func.cover_all,
                        (func.outh, func.outw))


def calc_unpooling_nd(func: UnpoolingND, in_data, **kwargs):
    r"""UnpoolingND

    $$y_{n,c,\mathbf{o}} = \sum_{(\mathbf{i},\mathbf{u}):\, \mathbf{i} \mathbf{s} + \mathbf{u} - \mathbf{p} = \mathbf{o}} x_{n,c,\mathbf{i}}$$

    Same model as Unpooling2D for any number of spatial axes: each input
    element is copied over its window of the output and overlapping copies
    are added: $\prod_a H_a$ copies land on $\prod_a R_a$ positions per
    $(n, c)$ plane. The output size is `outsize` when given, else
    $s (in - 1) + k - 2p$ per axis ($- s + 1$ more with `cover_all`).

    | Item | Value |
    |:-----|:------|
    | FLOPs | $N C (\prod_a H_a - \prod_a R_a)$ |
    | mread | $\|x\|$ |
    | mwrite | $\|y\|$ |
    | params | `k`, `s`, `p`: kernel, stride, padding (int when equal on every axis, else a tuple); `outsize`: the output's spatial sizes (a tuple); `cover_all` |
    """  # NOQA
    x, = in_data
    outs = func.outs
    if outs is None:
        outs = (None,) * (x.ndim - 2)
    return _unpool_cost(x, func.ksize, func.stride, func.pad,
                        func.cover_all, outs)


def _unpool_int_scale(func, x):
    """Whether Unpooling2D takes its integer-scale path (a strided view
    copied into y) for ``x``: Chainer's own condition."""
    h, w = x.shape[2:]
    if h == func.ph or w == func.pw:
        return False
    return (func.outh % (h - func.ph) == 0 and func.outw % (w - func.pw) == 0
            and func.outh // (h - func.ph) == func.kh
            and func.outw // (w - func.pw) == func.kw
            and func.ph % 2 == 0 and func.pw % 2 == 0
            and func.sx == func.kh and func.sy == func.kw)


def _nd_window(func):
    """An N-d pooling or unpooling's window, stride and padding (tuples)."""
    return tuple(func.ksize), tuple(func.stride), tuple(func.pad)


def _unpool_outs(x, ksize, stride, pad, cover_all, outs):
    """The output's spatial sizes of an unpooling (given or derived)."""
    if outs is None:
        outs = (None,) * (x.ndim - 2)
    return _unpooled_dims(x.shape, ksize, stride, pad, cover_all, outs)


def scratch_unpooling_2d(func: Unpooling2D, in_data, **kwargs):
    r"""numpy.tile's columns of x, folded into a padded image.

    NumPy: as AveragePooling2DGrad's path with x for $g_y$: `numpy.tile`
    makes $k_h \|x\|$ then $G = k_h k_w \|x\|$ elements, `col2im_cpu` adds
    them into a zeroed padded image $I$ whose centre is y: $\max(k_h \|x\|
    + G - I, G)$ elements. Windows that tile the output exactly ($k = s$,
    even padding, the output $k$ times the input) take the integer-scale
    path instead: y is copied from a strided view of x, none.

    CuPy: `tile`'s columns ($G$); `col2im_gpu` writes y directly. None on
    the integer-scale path.
    """
    x, = in_data
    ksize, stride, pad = _pool2d_window(func)
    outs = _unpool_outs(x, ksize, stride, pad, func.cover_all,
                        (func.outh, func.outw))
    if func.outh is not None and func.outw is not None \
            and _unpool_int_scale(func, x):
        return 0
    if kwargs.get('backend', 'numpy') == 'cupy':
        return x.size * x.dtype.itemsize * prod(ksize)
    return _tile_col2im_scratch(x, x.shape[:2] + outs, ksize, stride, pad)


def scratch_unpooling_nd(func: UnpoolingND, in_data, **kwargs):
    r"""numpy.tile's columns of x, folded into a padded image.

    NumPy: as Unpooling2D's along every axis: `numpy.tile` repeats x along
    each window axis in turn, `col2im_nd_cpu` adds the columns $G =
    \prod_a k_a \|x\|$ into a zeroed padded image $I$ (y is its centre):
    $\max(\text{tile's peak} - I, G)$ elements.

    CuPy: `tile`'s columns ($G$).
    """
    x, = in_data
    ksize, stride, pad = _nd_window(func)
    if kwargs.get('backend', 'numpy') == 'cupy':
        return x.size * x.dtype.itemsize * prod(ksize)
    outs = _unpool_outs(x, ksize, stride, pad, func.cover_all, func.outs)
    return _tile_col2im_scratch(x, x.shape[:2] + outs, ksize, stride, pad)


def calc_upsampling_2d(func: Upsampling2D, in_data, **kwargs):
    r"""Upsampling2D

    $$y_{n,c,i s_y + \mathrm{idx}_y - p_h, j s_x + \mathrm{idx}_x - p_w} \mathrel{+}= x_{n,c,i,j}$$

    Each input element is written at the position its index picks inside
    its window (the `indexes` of a max pooling, shaped as x); the rest of
    the output is zero. Where windows overlap two indexes may pick the same
    position, whose values are then added: that depends on the index
    values, so only the additions no choice can avoid are counted: per
    $(n, c)$ plane, $h w$ values land on at most $R_h R_w$ positions (the
    positions the windows reach, as for Unpooling2D). Usually none. The
    output size is `outsize` when given, else $s (in - 1) + k - 2p$ per
    axis ($- s + 1$ more with `cover_all`).

    | Item | Value |
    |:-----|:------|
    | FLOPs | $N C \max(0, h w - R_h R_w)$ |
    | mread | $\|x\| + \|indexes\|$ |
    | mwrite | $\|y\|$ |
    | params | `k`, `s`, `p`: kernel, stride, padding (int when equal on both axes, else a pair); `outsize`: the output's (h, w); `cover_all` |
    """  # NOQA
    x, = in_data
    ksize, stride, pad = _pool2d_window(func)
    dims = _unpooled_dims(x.shape, ksize, stride, pad, func.cover_all,
                          (func.outh, func.outw))
    planes = prod(x.shape[:2])
    _, reached = _scatter(x.shape[2:], ksize, stride, pad, dims)
    flops = planes * max(0, prod(x.shape[2:]) - reached)
    mread = size_of(x) + size_of(func.indexes)
    return (flops, mread, planes * prod(dims),
            _unpool_params(ksize, stride, pad, dims, func.cover_all))


def _upsampling_columns(shape, ksize, stride, pad, isz, cover_all):
    """``(padded, col, copy)``: bytes of im2col's padded copy and columns
    of an array of ``shape``, and of the copy that reshaping the columns
    with the window last, ``(-1, k_h k_w)``, makes (0 when the axes
    merge in place)."""
    padded, col = im2col_bytes(shape, ksize, stride, pad, isz, cover_all)
    outs = [conv_out_size(d, k, s, p, cover_all=cover_all)
            for d, k, s, p in zip(shape[2:], ksize, stride, pad)]
    cshape = tuple(shape[:2]) + tuple(ksize) + tuple(outs)
    strides = c_strides(cshape, isz)
    nd = len(ksize)
    order = (0, 1) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2, 2 + nd))
    view = reshape_view([cshape[a] for a in order],
                        [strides[a] for a in order],
                        (col // isz // prod(ksize), prod(ksize)))
    return padded, col, 0 if view is not None else col


def scratch_upsampling_2d(func: Upsampling2D, in_data, **kwargs):
    r"""A zeroed y, its columns, their reshaped copy, folded back.

    NumPy: `numpy.zeros` of y's shape ($Y$) is padded and turned into
    columns by `im2col_cpu` ($P$, $G = N C k_h k_w h_x w_x$ elements),
    then reshaped with the window last ($G$ again, a copy), x is written
    at the positions (an int64 `arange` of $\|x\|$), and `col2im_cpu` adds
    the columns into a zeroed padded image $I$ whose centre is y: peak
    $\max(Y + P + G, 2G, G + 8\|x\| \text{ bytes}, G + I) - I$.

    CuPy: `im2col_gpu`'s columns ($G$) beside the zeroed y, then beside
    y: $G$.
    """
    x, = in_data
    isz = x.dtype.itemsize
    ksize, stride, pad = _pool2d_window(func)
    outs = _unpool_outs(x, ksize, stride, pad, func.cover_all,
                        (func.outh, func.outw))
    y_shape = x.shape[:2] + outs
    zeros = prod(y_shape) * isz
    padded, col, copy = _upsampling_columns(y_shape, ksize, stride, pad,
                                            isz, func.cover_all)
    if kwargs.get('backend', 'numpy') == 'cupy':
        return col
    image = prod(x.shape[:2]) * prod(
        [d + 2 * p + s - 1 for d, p, s in zip(outs, pad, stride)]) * isz
    return max(zeros + padded + col, col + copy, (copy or col) + 8 * x.size,
               (copy or col) + image) - image


def _roi_grid(x, func):
    """(|y|, bin height, bin width) of a ROI function, the ROIs being
    assumed to cover the whole feature map of x."""
    _, channels, height, width = x.shape
    return (channels * func.outh * func.outw,
            int(math.ceil(height / func.outh)),
            int(math.ceil(width / func.outw)))


def _roi_params(func):
    return {'outsize': (int(func.outh), int(func.outw)),
            'spatial_scale': float(func.spatial_scale)}


def _roi_pool_cost(x, rois, func, is_max, roi_indices=None):
    """Cost of ROI max or average pooling over bins of whole-map ROIs.

    A max over a bin of b elements is b - 1 comparisons, an average b - 1
    additions and 1 division. The max variants also write the argmax.
    """
    per_roi, bin_h, bin_w = _roi_grid(x, func)
    y_size = rois.shape[0] * per_roi
    bin_size = bin_h * bin_w
    if is_max:
        flops = y_size * (bin_size - 1)
    else:
        flops = y_size * bin_size
    return (flops, _roi_reads(x, rois, roi_indices),
            _roi_writes(x, y_size, func, is_max), _roi_params(func))


def _roi_reads(x, rois, roi_indices):
    """x, the ROIs and their image indices, each in its own dtype, and the
    spatial scale, a constant in x's dtype."""
    return total_size((x, rois, roi_indices)) + elements(1, x)


def _roi_writes(x, y_size, func, is_max):
    """The output, in x's dtype, and for a max its argmax (int32)."""
    mwrite = elements(y_size, x)
    if is_max:
        mwrite += _index_count(y_size, getattr(func, 'argmax_data', None))
    return mwrite


def _roi_align_cost(x, rois, roi_indices, func, is_max, fma):
    """Cost of ROI align (max or average) with bilinear sampling.

    Each of the G sampling points of a bin interpolates 4 neighbours
    (4 products summed); the interpolation weights depend on the ROI
    geometry only and count as index arithmetic. An average accumulates the
    4G products of a bin and divides once; a max sums each point's 4
    products and compares the G values (G - 1 comparisons).
    """
    per_roi, bin_h, bin_w = _roi_grid(x, func)
    grid_h, grid_w = func.sampling_ratio
    grid_h = bin_h if grid_h is None else grid_h
    grid_w = bin_w if grid_w is None else grid_w
    n_points = grid_h * grid_w
    y_size = rois.shape[0] * per_roi
    if is_max:
        point_flops = 4 if fma else 7
        flops = y_size * (n_points * point_flops + n_points - 1)
    else:
        flops = y_size * (4 * n_points + 1 if fma else 8 * n_points)
    params = _roi_params(func)
    params['sampling_ratio'] = tuple(
        0 if r is None else int(r) for r in func.sampling_ratio)
    return (flops, _roi_reads(x, rois, roi_indices),
            _roi_writes(x, y_size, func, is_max), params)


def calc_roi_pooling_2d(func: ROIPooling2D, in_data, **kwargs):
    r"""ROIPooling2D

    $$y_{r,c,i,j} = \max_{(u,v) \in \mathrm{bin}_{r,i,j}} x_{n_r,c,u,v}$$

    `rois` is $(R, 5)$ (batch index and box); $\|y\| = R C\, outh\, outw$.
    As the boxes are not read, every ROI is assumed to cover the whole
    $H \times W$ map: a bin has $b = \lceil H / outh \rceil \lceil W / outw \rceil$
    elements, costing $b - 1$ comparisons. x is read whole; `spatial_scale`
    is a constant read once. The argmax cached for backward is written too.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|y\| (b - 1)$ |
    | mread | $\|x\| + \|rois\| + 1$ |
    | mwrite | $2 \|y\|$ (output and argmax) |
    | params | `outsize`: (outh, outw); `spatial_scale` |
    """  # NOQA
    x, rois = in_data
    return _roi_pool_cost(x, rois, func, True)


def calc_roi_max_pooling_2d(func: ROIMaxPooling2D, in_data, **kwargs):
    r"""ROIMaxPooling2D

    $$y_{r,c,i,j} = \max_{(u,v) \in \mathrm{bin}_{r,i,j}} x_{n_r,c,u,v}$$

    `rois` is $(R, 4)$ and `roi_indices` $(R,)$; $\|y\| = R C\, outh\, outw$.
    Every ROI is assumed to cover the whole $H \times W$ map: a bin has
    $b = \lceil H / outh \rceil \lceil W / outw \rceil$ elements, costing
    $b - 1$ comparisons. `spatial_scale` is a constant read once; the argmax
    cached for backward is written too.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|y\| (b - 1)$ |
    | mread | $\|x\| + \|rois\| + \|roi\_indices\| + 1$ |
    | mwrite | $2 \|y\|$ (output and argmax) |
    | params | `outsize`: (outh, outw); `spatial_scale` |
    """  # NOQA
    x, rois, roi_indices = in_data
    return _roi_pool_cost(x, rois, func, True, roi_indices)


def calc_roi_average_pooling_2d(func: ROIAveragePooling2D, in_data,
                                **kwargs):
    r"""ROIAveragePooling2D

    $$y_{r,c,i,j} = \frac{1}{\|\mathrm{bin}_{r,i,j}\|} \sum_{(u,v) \in \mathrm{bin}_{r,i,j}} x_{n_r,c,u,v}$$

    `rois` is $(R, 4)$ and `roi_indices` $(R,)$; $\|y\| = R C\, outh\, outw$.
    Every ROI is assumed to cover the whole $H \times W$ map: a bin has
    $b = \lceil H / outh \rceil \lceil W / outw \rceil$ elements, costing
    $b - 1$ additions and 1 division. `spatial_scale` is a constant read
    once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|y\| b$ |
    | mread | $\|x\| + \|rois\| + \|roi\_indices\| + 1$ |
    | mwrite | $\|y\|$ |
    | params | `outsize`: (outh, outw); `spatial_scale` |
    """  # NOQA
    x, rois, roi_indices = in_data
    return _roi_pool_cost(x, rois, func, False, roi_indices)


def calc_roi_max_align_2d(func: ROIMaxAlign2D, in_data, **kwargs):
    r"""ROIMaxAlign2D

    $$y_{r,c,i,j} = \max_{g \in \mathrm{bin}_{r,i,j}} \sum_{q=1}^{4} w_{g,q} x_{n_r,c,g_q}$$

    $\|y\| = R C\, outh\, outw$. Each bin has $G = g_h g_w$ sampling points,
    $g_h$ = `sampling_ratio[0]`, or $\lceil H / outh \rceil$ when None
    (whole-map ROI assumed; same for $g_w$). Each point is a bilinear
    interpolation of 4 neighbours: 4 products summed (4 FLOPs with FMA, 7
    without); the weights depend on the ROI geometry only (index
    arithmetic). The max over the points costs $G - 1$ comparisons.
    `spatial_scale` is a constant read once; the argmax cached for backward
    is written too.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\|y\| (5G - 1)$ |
    | FLOPs (no FMA) | $\|y\| (8G - 1)$ |
    | mread | $\|x\| + \|rois\| + \|roi\_indices\| + 1$ |
    | mwrite | $2 \|y\|$ (output and argmax) |
    | params | `outsize`: (outh, outw); `spatial_scale`; `sampling_ratio` (0 where None) |
    """  # NOQA
    x, rois, roi_indices = in_data
    return _roi_align_cost(x, rois, roi_indices, func, True,
                           kwargs.get('fma_1flop', False))


def calc_roi_average_align_2d(func: ROIAverageAlign2D, in_data, **kwargs):
    r"""ROIAverageAlign2D

    $$y_{r,c,i,j} = \frac{1}{G} \sum_{g \in \mathrm{bin}_{r,i,j}} \sum_{q=1}^{4} w_{g,q} x_{n_r,c,g_q}$$

    $\|y\| = R C\, outh\, outw$. Each bin has $G = g_h g_w$ sampling points,
    $g_h$ = `sampling_ratio[0]`, or $\lceil H / outh \rceil$ when None
    (whole-map ROI assumed; same for $g_w$). Each point is a bilinear
    interpolation of 4 neighbours whose weights depend on the ROI geometry
    only (index arithmetic): a bin accumulates $4G$ products ($4G - 1$
    multiply-adds and one product) and divides once.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\|y\| (4G + 1)$ |
    | FLOPs (no FMA) | $\|y\| \cdot 8G$ |
    | mread | $\|x\| + \|rois\| + \|roi\_indices\| + 1$ |
    | mwrite | $\|y\|$ |
    | params | `outsize`: (outh, outw); `spatial_scale`; `sampling_ratio` (0 where None) |
    """  # NOQA
    x, rois, roi_indices = in_data
    return _roi_align_cost(x, rois, roi_indices, func, False,
                           kwargs.get('fma_1flop', False))


# Gradients

def _forward_node(func):
    """The forward pooling node a gradient node was made from (Chainer 7
    keeps it in ``func``; Chainer 6 copies its attributes and keeps it
    under another name), or the node itself."""
    for name in ('func', 'apool2d', 'apoolnd', 'mpool2d', 'mpoolnd'):
        node = getattr(func, name, None)
        if node is not None:
            return node
    return func


def _window_of(node):
    """(ksize, stride, pad) of a 2-D or N-D pooling node."""
    if hasattr(node, 'ksize'):
        return tuple(node.ksize), tuple(node.stride), tuple(node.pad)
    return _pool2d_window(node)


def _grad_x_shape(func, out_shapes):
    """Shape of the gradient a pooling's gradient node writes: the shape of
    the forward pooling's input."""
    if out_shapes and out_shapes[0] is not None:
        return tuple(out_shapes[0])
    return tuple(_forward_node(func).inputs[0].shape)


def _avg_pool_grad_cost(gy, x_shape, ksize, stride, pad, divide_gy):
    """Cost of scattering each gy over its window of gx (col2im) and
    dividing: either each gx element reached once (``divide_gy`` False) or
    each gy once before the scatter."""
    planes = prod(gy.shape[:2])
    hits, reached = _scatter(gy.shape[2:], ksize, stride, pad, x_shape[2:])
    if divide_gy:
        flops = gy.size + planes * (hits - reached)
    else:
        flops = planes * hits
    return (flops, gy.size, prod(x_shape), _window_params(ksize, stride, pad))


@reads_out_shapes
def calc_average_pooling_2d_grad(func: AveragePooling2DGrad, in_data,
                                 **kwargs):
    r"""AveragePooling2DGrad

    $$g_{x,n,c,a,b} = \frac{1}{k_h k_w} \sum_{(i,j) \ni (a,b)} g_{y,n,c,i,j}$$

    The gradient of AveragePooling2D: each $g_y$ element is spread over its
    window of $g_x$ (a col2im) and divided by $k_h k_w$. Along each axis
    $H_a$ (window, position) pairs fall inside x and reach $R_a$ of its
    positions (see Unpooling2D): a reached $g_x$ element covered by $c$
    windows sums $c$ values and divides once, $c$ FLOPs; an element no
    window covers is a written zero. So one FLOP per pair inside x.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $N C H_h H_w$ |
    | mread | $\|g_y\|$ |
    | mwrite | $\|g_x\| = \|x\|$ |
    | params | `k`, `s`, `p`: kernel, stride, padding (int when equal on both axes, else a pair) |
    """  # NOQA
    gy, = in_data
    ksize, stride, pad = _pool2d_window(func)
    return _avg_pool_grad_cost(gy, _grad_x_shape(func, kwargs.get(
        'out_shapes')), ksize, stride, pad, False)


def _tile_peak(size, reps):
    """Peak bytes of ``numpy.tile`` of a ``size``-byte array by ``reps``:
    each repetition that is not 1 makes a new array from the previous one
    (the input itself is not counted), all 1s a copy."""
    if all(r == 1 for r in reps):
        return size
    peak, cur, fresh = 0, size, False
    for r in reps:
        if r == 1:
            continue
        peak = max(peak, (cur if fresh else 0) + cur * r)
        cur, fresh = cur * r, True
    return peak


def scratch_average_pooling_2d_grad(func: AveragePooling2DGrad, in_data,
                                    **kwargs):
    r"""numpy.tile's columns of gy, folded into a padded image.

    NumPy: `numpy.tile(gy[:, :, None, None], (1, 1, k_h, k_w, 1, 1))`
    repeats gy along one window axis, then the other ($k_h \|g_y\|$, then
    $G = k_h k_w \|g_y\|$ elements, both alive at the second step);
    `col2im_cpu` adds the columns into a zeroed padded image $I = N C (h +
    2 p_h + s_y - 1)(w + 2 p_w + s_x - 1)$ whose centre is $g_x$ (a view:
    $I$ is what the call leaves). Peak above it: $\max(k_h \|g_y\| + G -
    I, G)$ elements ($G - I$ when $k_h$ or $k_w$ is 1).

    CuPy: none (cuDNN's pooling backward takes no workspace; the kernel
    without it writes $g_x$ directly).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    gy, = in_data
    return _tile_col2im_scratch(
        gy, _grad_x_shape(func, kwargs.get('out_shapes')), (func.kh, func.kw),
        (func.sy, func.sx), (func.ph, func.pw))


def _tile_col2im_scratch(gy, x_shape, ksize, stride, pad):
    """Bytes above g_x of tiling ``gy`` over the windows and folding the
    columns into a padded image (average pooling's gradient)."""
    isz = gy.dtype.itemsize
    image = prod(gy.shape[:2]) * prod(
        [d + 2 * p + s - 1 for d, p, s in zip(x_shape[2:], pad, stride)]
    ) * isz
    cols = gy.size * isz * prod(ksize)
    return max(_tile_peak(gy.size * isz, ksize) - image, cols)


def scratch_average_pooling_nd_grad(func: AveragePoolingNDGrad, in_data,
                                    **kwargs):
    r"""numpy.tile's columns of gy, folded into a padded image.

    NumPy: as AveragePooling2DGrad's along every axis: `numpy.tile`
    repeats gy along each window axis in turn (each step's array alive
    with the next), `col2im_nd_cpu` adds the columns $G = \prod_a k_a
    \|g_y\|$ into a zeroed padded image $I$ (the output is its centre):
    $\max(\text{tile's peak} - I, G)$ elements.

    CuPy: none (cuDNN's pooling backward or one kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    gy, = in_data
    pool = _forward_node(func)
    return _tile_col2im_scratch(
        gy, _grad_x_shape(func, kwargs.get('out_shapes')),
        tuple(pool.ksize), tuple(pool.stride), tuple(pool.pad))


@reads_out_shapes
def calc_average_pooling_nd_grad(func: AveragePoolingNDGrad, in_data,
                                 **kwargs):
    r"""AveragePoolingNDGrad

    $$g_{x,n,c,\mathbf{a}} = \sum_{\mathbf{i} \ni \mathbf{a}} \frac{g_{y,n,c,\mathbf{i}}}{w_{\mathbf{i}}}$$

    The gradient of AveragePoolingND, the same col2im as
    AveragePooling2DGrad for any number of axes: $\prod_a H_a$ (window,
    position) pairs inside x reach $\prod_a R_a$ positions per $(n, c)$
    plane. With `pad_value=0` the divisor is $\prod_i k_i$: each reached
    element sums its values and divides once, one FLOP per pair. With
    `pad_value=None` each window has its own divisor $w$: every $g_y$ is
    divided first, then the pairs are summed.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $N C \prod_a H_a$; with `pad_value=None`, $\|g_y\| + N C (\prod_a H_a - \prod_a R_a)$ |
    | mread | $\|g_y\|$ |
    | mwrite | $\|g_x\| = \|x\|$ |
    | params | `k`, `s`, `p`: kernel, stride, padding (int when equal on every axis, else a tuple) |
    """  # NOQA
    gy, = in_data
    pool = _forward_node(func)
    ksize, stride, pad = _window_of(pool)
    return _avg_pool_grad_cost(gy, _grad_x_shape(func, kwargs.get(
        'out_shapes')), ksize, stride, pad, pool.pad_value is None)


def _max_pool_grad_cost(gy, x_shape, indexes, ksize, stride, pad):
    """Cost of adding each gy at its window's argmax in gx: only the
    additions that no choice of argmaxes avoids (more gy per plane than
    positions the windows reach) are counted."""
    planes = prod(gy.shape[:2])
    _, reached = _scatter(gy.shape[2:], ksize, stride, pad, x_shape[2:])
    flops = planes * max(0, prod(gy.shape[2:]) - reached)
    mread = size_of(gy) + _index_count(gy.size, indexes)
    return (flops, mread, prod(x_shape), _window_params(ksize, stride, pad))


#: Max pooling gradient classes -> the forward they belong to (DETAILS.md
#: documents each).
_MAX_POOL_GRAD = {
    MaxPoolingNDGrad: {
        'forward': 'MaxPoolingND (`F.max_pooling_2d` on Chainer 7)'},
    'chainer.functions.pooling.max_pooling_2d.MaxPooling2DGrad': {
        'forward': "Chainer 6's MaxPooling2D"},
}


@reads_out_shapes
def calc_max_pooling_grad(func: tuple(_MAX_POOL_GRAD), in_data, **kwargs):
    r"""<<name>>

    $$g_{x,n,c,\mathbf{a}} = \sum_{\mathbf{i}:\, \mathrm{argmax}_{\mathbf{i}} = \mathbf{a}} g_{y,n,c,\mathbf{i}}$$

    The gradient of <<forward>>: each $g_y$ element is added at the
    position of its window's maximum (the argmax indexes the forward
    kept, $\|g_y\|$ of them, read in their own dtype); the rest of $g_x$
    is zero. Values add only where argmaxes coincide, which depends on the
    data: per $(n, c)$ plane, the $\prod_a out_a$ values land on at most
    the $\prod_a R_a$ positions the windows reach (see Unpooling2D), and
    only the additions this forces are counted (usually none).

    | Item | Value |
    |:-----|:------|
    | FLOPs | $N C \max(0, \prod_a out_a - \prod_a R_a)$ |
    | mread | $\|g_y\| + \|g_y\|$ (indexes) |
    | mwrite | $\|g_x\| = \|x\|$ |
    | params | `k`, `s`, `p`: kernel, stride, padding (int when equal on every axis, else a tuple) |
    """  # NOQA
    gy, = in_data
    pool = _forward_node(func)
    ksize, stride, pad = _window_of(pool)
    # Chainer 6 copies the indexes onto this node; 7 keeps them on the
    # pooling node
    indexes = getattr(func, 'indexes', None)
    if indexes is None:
        indexes = getattr(pool, 'indexes', None)
    return _max_pool_grad_cost(gy, _grad_x_shape(func, kwargs.get(
        'out_shapes')), indexes, ksize, stride, pad)


calc_max_pooling_grad.family = _MAX_POOL_GRAD


def scratch_max_pooling_nd_grad(func: MaxPoolingNDGrad, in_data, **kwargs):
    r"""Zeroed columns, the flat int64 positions, folded into a padded image.

    NumPy: a zeroed column array $C = N C \prod_a out_a \prod_a k_a$
    elements; the flat positions `indexes.flatten() + arange(...)` (three
    int64 arrays of $\|g_y\|$ alive at the addition, two when they take
    256 KiB or more: NumPy then adds into the flattened copy, temporary
    elision; one after); gy is
    put at them; `col2im_nd_cpu` adds the columns into a zeroed padded image
    $I = N C \prod_a (d_a + 2 p_a + s_a - 1)$ whose centre is $g_x$ (a
    view: $I$ is what the call leaves). Peak above it: $\max(C + 3 \cdot 8
    \|g_y\| - I, C + 8 \|g_y\|)$ bytes ($C$ in x's dtype).

    CuPy: none (cuDNN's pooling backward takes no workspace; the kernel
    without it writes $g_x$ directly).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    gy, = in_data
    pool = _forward_node(func)
    isz = numpy.dtype(pool._in_dtype).itemsize
    dims = tuple(pool._in_shape[2:])
    cols = gy.size * prod(pool.ksize) * isz
    image = prod(gy.shape[:2]) * prod(
        [d + 2 * p + s - 1 for d, p, s in zip(dims, pool.pad, pool.stride)]
    ) * isz
    index = gy.size * 8
    temps = 2 if elides(index) else 3
    return max(cols + temps * index - image, cols + index)


def scratch_max_pooling_2d_grad(
        func: 'chainer.functions.pooling.max_pooling_2d.MaxPooling2DGrad',
        in_data, **kwargs):
    r"""Zeroed columns, the flat int64 positions, folded into a padded image.

    NumPy (Chainer 6): a zeroed column array $C = N C h_{out} w_{out} k_h
    k_w$ elements; `indexes.ravel() + arange(...)` (a view of the indexes,
    an int64 `arange` and the sum, $\|g_y\|$ each; one array when they take
    256 KiB or more, NumPy adding into the `arange`); `col2im_cpu` into a
    zeroed padded image $I = N C (h + 2 p_h + s_y - 1)(w + 2 p_w + s_x -
    1)$, whose centre is $g_x$ (a view: $I$ stays). Peak above it:
    $\max(C + 2 \cdot 8 \|g_y\| - I, C + 8 \|g_y\|)$ bytes.

    CuPy: none (cuDNN or one kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    gy, = in_data
    isz = numpy.dtype(func._in_dtype).itemsize
    h, w = func._in_shape[2:]
    cols = gy.size * func.kh * func.kw * isz
    image = prod(gy.shape[:2]) * (h + 2 * func.ph + func.sy - 1) * (
        w + 2 * func.pw + func.sx - 1) * isz
    index = gy.size * 8
    temps = 1 if elides(index) else 2
    return max(cols + temps * index - image, cols + index)


def _unpool_grad_cost(gy, ksize, stride, pad, cover_all):
    """Cost of summing each window of gy: the gradient of an unpooling."""
    dims = tuple(conv_out_size(size, k, s, p, cover_all=cover_all)
                 for size, k, s, p
                 in zip(gy.shape[2:], ksize, stride, pad))
    gx_size = prod(gy.shape[:2]) * prod(dims)
    params = _unpool_params(ksize, stride, pad,
                            tuple(int(d) for d in gy.shape[2:]), cover_all)
    return (gx_size * (prod(ksize) - 1), gy.size, gx_size, params)


def calc_unpooling_2d_grad(func: Unpooling2DGrad, in_data, **kwargs):
    r"""Unpooling2DGrad

    $$g_{x,n,c,i,j} = \sum_{u,v} g_{y,n,c,i s_y + u - p_h, j s_x + v - p_w}$$

    The gradient of Unpooling2D: each $g_x$ element sums the $k_h k_w$
    elements of its window of $g_y$ (an im2col and a sum, as a sum pooling;
    padded positions count as zeros, as in the poolings): $k_h k_w - 1$
    additions each.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|g_x\| (k_h k_w - 1)$ |
    | mread | $\|g_y\|$ |
    | mwrite | $\|g_x\| = \|x\|$ |
    | params | `k`, `s`, `p`: kernel, stride, padding (int when equal on both axes, else a pair); `outsize`: the unpooling's output (h, w); `cover_all` |
    """  # NOQA
    gy, = in_data
    ksize, stride, pad = _pool2d_window(func)
    return _unpool_grad_cost(gy, ksize, stride, pad, func.cover_all)


def calc_unpooling_nd_grad(func: UnpoolingNDGrad, in_data, **kwargs):
    r"""UnpoolingNDGrad

    $$g_{x,n,c,\mathbf{i}} = \sum_{\mathbf{u}} g_{y,n,c,\mathbf{i} \mathbf{s} + \mathbf{u} - \mathbf{p}}$$

    The gradient of UnpoolingND, as Unpooling2DGrad for any number of axes:
    each $g_x$ element sums a window of $\prod_i k_i$ elements of $g_y$.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|g_x\| (\prod_i k_i - 1)$ |
    | mread | $\|g_y\|$ |
    | mwrite | $\|g_x\| = \|x\|$ |
    | params | `k`, `s`, `p`: kernel, stride, padding (int when equal on every axis, else a tuple); `outsize`: the unpooling's output sizes (a tuple); `cover_all` |
    """  # NOQA
    gy, = in_data
    return _unpool_grad_cost(gy, tuple(func.ksize), tuple(func.stride),
                             tuple(func.pad), func.cover_all)


def _im2col_sum_scratch(gy, ksize, stride, pad, cover_all, gx_bytes,
                        backend):
    """Bytes above g_x of im2col's padded copy and columns of ``gy``,
    summed over the window axes into g_x (unpooling's gradient)."""
    padded, col = im2col_bytes(gy.shape, ksize, stride, pad,
                               gy.dtype.itemsize, cover_all)
    if backend == 'cupy':
        return col  # im2col_gpu pads nothing
    return max(padded + col - gx_bytes, col)


def scratch_unpooling_2d_grad(func: Unpooling2DGrad, in_data, **kwargs):
    r"""im2col's padded copy and columns of gy, summed into $g_x$.

    NumPy: `im2col_cpu` pads gy ($P$) and makes the columns $G = N C k_h
    k_w h_x w_x$ elements; `sum(axis=(2, 3))` makes $g_x$: $\max(P + G -
    \|g_x\|, G)$. On the integer-scale path, a view of gy summed into
    $g_x$: none (with padding, $g_x$ is copied into a zeroed array, the
    output: $\|g_x\|$ before the padding).

    CuPy: the columns $G$ (`im2col_gpu` pads nothing); the integer-scale
    path as NumPy's.
    """
    gy, = in_data
    isz = gy.dtype.itemsize
    if func._use_int_scale_forward:
        b, c, h, w = gy.shape
        if func.ph > 0 or func.pw > 0:
            return b * c * (h // func.kh) * (w // func.kw) * isz
        return 0
    ksize, stride, pad = _pool2d_window(func)
    gx = prod(gy.shape[:2]) * prod(
        conv_out_size(d, k, s, p, cover_all=func.cover_all)
        for d, k, s, p in zip(gy.shape[2:], ksize, stride, pad)) * isz
    return _im2col_sum_scratch(gy, ksize, stride, pad, func.cover_all, gx,
                               kwargs.get('backend', 'numpy'))


def scratch_unpooling_nd_grad(func: UnpoolingNDGrad, in_data, **kwargs):
    r"""im2col's padded copy and columns of gy, summed into $g_x$.

    NumPy: as Unpooling2DGrad's for any number of axes (`im2col_nd_cpu`):
    $\max(P + G - \|g_x\|, G)$. CuPy: the columns $G$.
    """
    gy, = in_data
    ksize, stride, pad = _nd_window(func)
    gx = prod(gy.shape[:2]) * prod(
        conv_out_size(d, k, s, p, cover_all=func.cover_all)
        for d, k, s, p in zip(gy.shape[2:], ksize, stride, pad)
    ) * gy.dtype.itemsize
    return _im2col_sum_scratch(gy, ksize, stride, pad, func.cover_all, gx,
                               kwargs.get('backend', 'numpy'))


def calc_upsampling_2d_grad(func: Upsampling2DGrad, in_data, **kwargs):
    r"""Upsampling2DGrad

    $$g_{x,n,c,i,j} = g_{y,n,c,i s_y + \mathrm{idx}_y - p_h, j s_x + \mathrm{idx}_x - p_w}$$

    The gradient of Upsampling2D: each $g_x$ element picks the $g_y$
    element its index points to. A gather, 0 FLOPs: it reads the indexes
    ($\|g_x\|$ of them, in their own dtype) and the picked elements, at
    most $\min(\|g_y\|, \|g_x\|)$ distinct ones.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $0$ |
    | mread | $\min(\|g_y\|, \|g_x\|) + \|g_x\|$ (indexes) |
    | mwrite | $\|g_x\| = \|x\|$ |
    | params | `k`, `s`, `p`: kernel, stride, padding (int when equal on both axes, else a pair); `outsize`: the upsampling's output (h, w); `cover_all` |
    """  # NOQA
    gy, = in_data
    ksize, stride, pad = _pool2d_window(func)
    indexes = func.indexes
    mread = elements(min(gy.size, indexes.size), gy) + size_of(indexes)
    params = _unpool_params(ksize, stride, pad,
                            tuple(int(d) for d in gy.shape[2:]),
                            func.cover_all)
    return (0, mread, indexes.size, params)


def scratch_upsampling_2d_grad(func: Upsampling2DGrad, in_data, **kwargs):
    r"""im2col's padded copy and columns of gy, gathered at the indexes.

    NumPy: `im2col_cpu` pads gy ($P$) and makes the columns ($G = N C k_h
    k_w h_x w_x$ elements), reshaped with the window last (a copy, $G$),
    then an int64 `arange` of $\|g_x\|$ and the gathered values, the
    output: $\max(P + G, 2G, G + 8 \|g_x\| \text{ bytes} + \|g_x\|) -
    \|g_x\|$.

    CuPy: the columns $G$ (`im2col_gpu` pads nothing) and the int32 copy
    of int64 indexes ($4 \|g_x\|$ bytes).
    """
    gy, = in_data
    ksize, stride, pad = _pool2d_window(func)
    if kwargs.get('backend', 'numpy') == 'cupy':
        _, col, _ = _upsampling_columns(gy.shape, ksize, stride, pad,
                                        gy.dtype.itemsize, func.cover_all)
        n_x = col // gy.dtype.itemsize // prod(ksize)
        indexes = getattr(func, 'indexes', None)
        cast = 4 * n_x if getattr(indexes, 'dtype', None) != numpy.int32 \
            else 0
        return col + cast
    return _gather_columns_scratch(gy, ksize, stride, pad, func.cover_all)


def _gather_columns_scratch(x, ksize, stride, pad, cover_all):
    """Bytes above the output of im2col's padded copy and columns of
    ``x``, reshaped with the window last and gathered at int64 positions
    (an ``arange`` of the output's size beside them)."""
    isz = x.dtype.itemsize
    padded, col, copy = _upsampling_columns(x.shape, ksize, stride, pad,
                                            isz, cover_all)
    n_out = col // isz // prod(ksize)
    out = n_out * isz
    return max(padded + col, col + copy,
               (copy or col) + 8 * n_out + out) - out


def scratch_max_pooling_nd_with_indexes(func: MaxPoolingNDWithIndexes,
                                        in_data, **kwargs):
    r"""im2col's padded copy and columns of x, gathered at the argmax.

    NumPy: `im2col_nd_cpu` pads x ($P$) and makes the columns ($G$
    elements), reshaped with the window last (a copy, $G$, unless the
    axes merge), then an int64 `arange` of $\|y\|$ and the values gathered
    at the kept indexes (y): $\max(P + G, 2G, G + 8 \|y\| \text{ bytes} +
    \|y\|) - \|y\|$.

    CuPy: none (a kernel writes y; with cuDNN the pooling is recomputed,
    no workspace).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x, = in_data
    pool = getattr(func, 'func', func)  # Chainer 6 copies the attributes
    return _gather_columns_scratch(x, tuple(pool.ksize), tuple(pool.stride),
                                   tuple(pool.pad), pool.cover_all)


def calc_roi_pooling_2d_grad(func: ROIPooling2DGrad, in_data, **kwargs):
    r"""ROIPooling2DGrad

    $$g_{x,n,c,a,b} = \sum_{(r,i,j):\, n_r = n,\ \mathrm{argmax}_{r,c,i,j} = (a,b)} g_{y,r,c,i,j}$$

    The gradient of ROIPooling2D: each $g_y$ element ($\|g_y\| = R C\,
    outh\, outw$) is added at the argmax the forward kept ($\|g_y\|$ int32
    indexes); the rest of $g_x$ (shaped as x, $N C H W$) is zero. As the
    ROIs are not read, they are assumed to cover the whole map, so the
    $R\, outh\, outw$ values of a channel may land on any of its $N H W$
    positions: only the additions this forces are counted (usually none).
    The ROIs are read to locate the bins; `spatial_scale` is a constant
    read once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $C \max(0, R\, outh\, outw - N H W)$ |
    | mread | $\|rois\| + \|g_y\| + \|g_y\|$ (argmax) $+ 1$ |
    | mwrite | $\|g_x\| = \|x\|$ |
    | params | `outsize`: (outh, outw); `spatial_scale` |
    """  # NOQA
    rois, gy = in_data
    x_shape = func._bottom_data_shape
    channels = x_shape[1]
    sources = gy.size // channels if channels else 0
    flops = channels * max(0, sources - (prod(x_shape) // channels
                                         if channels else 0))
    mread = (total_size((rois, gy)) + elements(1, gy)
             + _index_count(gy.size, getattr(func, 'argmax_data', None)))
    return (flops, mread, prod(x_shape), _roi_params(func))
