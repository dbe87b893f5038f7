"""Cost calculators for ``chainer.functions.array``.

Conventions shared by this module:

* moving, copying, gathering, padding or concatenating data is 0 FLOPs;
  only real arithmetic (interpolation weights, additions of ScatterAdd, the
  select of Where, a dtype conversion) is counted;
* an operation whose output aliases a contiguous input without touching
  the data (Reshape, Squeeze, ExpandDims, a Cast to the same dtype) is
  free: (0, 0, 0);
* every other operation reads each input element it needs once and writes
  each output element once, even when NumPy returns a view (a deployment
  engine has to materialise Transpose, BroadcastTo, GetItem, Flip...);
* index arrays (integer or boolean) are inputs too: each of their elements
  is read once, in the array's own dtype (memory counts carry their bytes
  wherever inputs may differ in dtype); Python integer indices are index
  arithmetic and are free;
* a scalar constant written by the function (a padding value) counts as 1
  element read.
"""

import numbers

import chainer
import numpy

from chainer.functions.array.as_strided import AsStrided
from chainer.functions.array.as_strided import AsStridedGrad
from chainer.functions.array.broadcast import Broadcast
from chainer.functions.array.broadcast import BroadcastTo
from chainer.functions.array.cast import Cast
from chainer.functions.array.concat import Concat
from chainer.functions.array.copy import Copy
from chainer.functions.array.depth2space import Depth2Space
from chainer.functions.array.diagonal import Diagonal
from chainer.functions.array.diagonal import DiagonalGrad
from chainer.functions.array.dstack import Dstack
from chainer.functions.array.expand_dims import ExpandDims
from chainer.functions.array.flip import Flip
from chainer.functions.array.fliplr import FlipLR
from chainer.functions.array.flipud import FlipUD
from chainer.functions.array.get_item import GetItem
from chainer.functions.array.get_item import GetItemGrad
from chainer.functions.array.hstack import Hstack
from chainer.functions.array.im2col import Im2Col
from chainer.functions.array.im2col import Im2ColGrad
from chainer.functions.array.moveaxis import Moveaxis
from chainer.functions.array.pad import Pad
from chainer.functions.array.pad_sequence import PadSequence
from chainer.functions.array.permutate import Permutate
from chainer.functions.array.repeat import Repeat
from chainer.functions.array.repeat import RepeatGrad
from chainer.functions.array.reshape import Reshape
from chainer.functions.array.resize_images import ResizeImages
from chainer.functions.array.resize_images import ResizeImagesGrad
from chainer.functions.array.rollaxis import Rollaxis
from chainer.functions.array.scatter_add import ScatterAdd
from chainer.functions.array.select_item import Assign
from chainer.functions.array.select_item import SelectItem
from chainer.functions.array.separate import Separate
from chainer.functions.array.space2depth import Space2Depth
from chainer.functions.array.spatial_transformer_grid import \
    SpatialTransformerGrid
from chainer.functions.array.spatial_transformer_sampler import \
    SpatialTransformerSampler
from chainer.functions.array.split_axis import SplitAxis
from chainer.functions.array.squeeze import Squeeze
from chainer.functions.array.stack import Stack
from chainer.functions.array.swapaxes import Swapaxes
from chainer.functions.array.tile import Tile
from chainer.functions.array.transpose import Transpose
from chainer.functions.array.transpose_sequence import TransposeSequence
from chainer.functions.array.vstack import Vstack
from chainer.functions.array.where import Where

from chainer_computational_cost.cost_calculators import broadcast_shape
from chainer_computational_cost.cost_calculators import conv_out_size
from chainer_computational_cost.cost_calculators import dot_flops
from chainer_computational_cost.cost_calculators import elements
from chainer_computational_cost.cost_calculators import im2col_bytes
from chainer_computational_cost.cost_calculators import IndexArray
from chainer_computational_cost.cost_calculators import old_style_backward
from chainer_computational_cost.cost_calculators import Elements
from chainer_computational_cost.cost_calculators import prod
from chainer_computational_cost.cost_calculators import reads_out_shapes
from chainer_computational_cost.cost_calculators import reshape_view
from chainer_computational_cost.cost_calculators import size_of
from chainer_computational_cost.cost_calculators import strides_of
from chainer_computational_cost.cost_calculators import total_size
from chainer_computational_cost.cost_calculators import uses_cudnn

#: The family of calls whose time one fit of a calibration predicts
#: (``analysis.calibration.FAMILIES``): this module's.
TIME_FAMILY = 'array'


# Private helpers: pure functions of numbers, shapes and index objects.

def _move(n_read, n_write, params=None):
    """Cost of a pure data movement: no FLOPs, ``n_read`` elements read and
    ``n_write`` written (counts that carry their bytes keep them)."""
    return (0, n_read, n_write, {} if params is None else params)


def _of_dtype(count, dtype):
    """``count`` elements of ``dtype``, bytes included."""
    return Elements(count, count * numpy.dtype(dtype).itemsize)


def _ints(values):
    """``values`` (an int or a sequence of ints) as a tuple of ints."""
    if isinstance(values, numbers.Integral):
        return (int(values),)
    return tuple(int(v) for v in values)


def _number(value):
    """A numeric scalar as a plain Python int or float (bools stay bools)."""
    if isinstance(value, (bool, numpy.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    return float(value)


def _nested_shape(seq):
    """Shape of a nested list/tuple used as an index (as NumPy sees it)."""
    shape = []
    while isinstance(seq, (list, tuple)):
        shape.append(len(seq))
        if not seq:
            break
        seq = seq[0]
    return tuple(shape)


def _first_leaf(seq):
    while isinstance(seq, (list, tuple)) and seq:
        seq = seq[0]
    return seq


def _classify_index(s):
    """Kind and shape of one index item.

    Kinds: ``'none'`` (newaxis), ``'ellipsis'``, ``'slice'``, ``'int'`` (a
    scalar integer, or a 0-d integer array), ``'array'`` (an integer index
    array, with its shape) and ``'mask'`` (a boolean index array or scalar,
    with its shape).
    """
    if s is None:
        return 'none', ()
    if s is Ellipsis:
        return 'ellipsis', ()
    if isinstance(s, slice):
        return 'slice', ()
    if isinstance(s, (bool, numpy.bool_)):
        return 'mask', ()
    if isinstance(s, numbers.Integral):
        return 'int', ()
    if isinstance(s, (list, tuple)):
        leaf = _first_leaf(s)
        kind = 'mask' if isinstance(leaf, (bool, numpy.bool_)) else 'array'
        return kind, _nested_shape(s)
    shape = tuple(int(d) for d in s.shape)
    if s.dtype.kind == 'b':
        return 'mask', shape
    if not shape:
        return 'int', ()
    return 'array', shape


def _index_reads(slices):
    """Elements of the index arrays (integer arrays and boolean masks) in
    ``slices``, each read once, with its own dtype (a list is read as
    NumPy converts it: booleans as bool, integers as intp)."""
    n = Elements(0, 0)
    for s in slices:
        kind, shape = _classify_index(s)
        if kind not in ('array', 'mask') or isinstance(s, (bool,
                                                           numpy.bool_)):
            continue
        if isinstance(s, (list, tuple)):
            leaf = _first_leaf(s)
            dtype = getattr(leaf, 'dtype', None)
            if dtype is None:
                dtype = bool if kind == 'mask' else numpy.intp
            n += _of_dtype(prod(shape), dtype)
        else:
            n += size_of(s)
    return n


def _indexed_shape(x_shape, slices):
    """Shape of ``x[slices]`` from the shapes alone, following NumPy's basic
    and advanced indexing rules.

    A boolean mask of ``n`` elements (``n`` = 1 for a scalar bool) selects
    at most ``n`` entries; since its values are not read it is counted as
    selecting all of them (an upper bound, exact for an all-True mask).
    """
    items = [_classify_index(s) + (s,) for s in slices]
    consumed = sum(1 if kind in ('slice', 'int', 'array') else len(shape)
                   for kind, shape, _ in items if kind != 'none'
                   and kind != 'ellipsis')
    fill = [('slice', (), slice(None))] * (len(x_shape) - consumed)
    for i, (kind, _, _) in enumerate(items):
        if kind == 'ellipsis':
            items = items[:i] + fill + [it for it in items[i + 1:]
                                        if it[0] != 'ellipsis']
            break
    else:
        items = items + fill
    advanced = any(kind in ('array', 'mask') for kind, _, _ in items)

    out = []
    adv_shapes = []
    adv_items = []
    adv_out_pos = None
    dim = 0
    for pos, (kind, shape, s) in enumerate(items):
        if kind == 'none':
            out.append(1)
        elif kind == 'slice':
            out.append(len(range(*s.indices(x_shape[dim]))))
            dim += 1
        elif kind == 'int' and not advanced:
            dim += 1
        else:
            if kind == 'mask':
                adv_shapes.append((prod(shape),))
                dim += len(shape)
            else:
                adv_shapes.append(shape)
                dim += 1
            adv_items.append(pos)
            if adv_out_pos is None:
                adv_out_pos = len(out)
    if not adv_items:
        return tuple(out)
    adv_shape = list(broadcast_shape(*adv_shapes))
    if adv_items[-1] - adv_items[0] + 1 != len(adv_items):
        adv_out_pos = 0
    return tuple(out[:adv_out_pos] + adv_shape + out[adv_out_pos:])


def _bound(v):
    return None if v is None else int(v)


def _slices_param(slices):
    """The index tuple as 0.1.2 reported it: a list with one item per
    index, a slice as its ``(start, stop, step)`` tuple (None where
    omitted), an integer as an int, a list of indices as a copy of it,
    anything else (None, Ellipsis, a bool) as given; but an index array
    as an :class:`IndexArray`, its shape and dtype, never the user's
    array itself."""
    out = []
    for s in slices:
        if isinstance(s, slice):
            out.append((_bound(s.start), _bound(s.stop), _bound(s.step)))
        elif isinstance(s, numbers.Integral) and not isinstance(s, bool):
            out.append(int(s))
        elif hasattr(s, 'shape') and hasattr(s, 'dtype'):
            out.append(IndexArray.of(s))
        elif isinstance(s, list):
            out.append(_slices_param(s))
        else:
            out.append(s)
    return out


def _resize_params(func, size):
    """ResizeImages' params: 0.1.2's ``size`` only; Chainer 7's ``mode``
    is added when it is not the bilinear interpolation 0.1.2 knew."""
    mode = getattr(func, 'mode', 'bilinear')
    if mode == 'bilinear':
        return {'size': size}
    return {'size': size, 'mode': mode}


def _sum_into_flops(n_terms, n_targets):
    """Additions that sum ``n_terms`` values into ``n_targets`` slots (the
    gradient of a gather that may repeat elements).

    Summing ``k`` values costs ``k - 1`` additions; the first value to reach
    a slot is a copy. The terms are taken as spread over as many slots as
    they can reach (``min(n_targets, n_terms)``): exact when the mapping is
    known to be onto or one-to-one, a lower bound otherwise.
    """
    return max(0, n_terms - n_targets)


def _weighted_sum_flops(n_terms, n_targets, fma):
    """FLOPs of ``n_terms`` products (weight times value) summed into
    ``n_targets`` slots: one multiply-add each with FMA; without, one
    multiplication each plus the additions of :func:`_sum_into_flops`."""
    if fma:
        return n_terms
    return n_terms + _sum_into_flops(n_terms, n_targets)


def _window_taps(size, k, s, p, d, out):
    """Along one axis of an image of length ``size``, the ``out`` windows
    of ``k`` taps (stride ``s``, padding ``p``, dilation ``d``): the number
    of taps that fall inside the image (not in the padding), and the number
    of distinct image positions they reach."""
    inside = [o * s + u * d - p for o in range(out) for u in range(k)]
    inside = [q for q in inside if 0 <= q < size]
    return len(inside), len(set(inside))


def _im2col_params(func):
    return {'k': _ints((func.kh, func.kw)), 's': _ints((func.sy, func.sx)),
            'p': _ints((func.ph, func.pw)), 'd': _ints((func.dy, func.dx)),
            'cover_all': bool(func.cover_all)}


def _repeat_counts(shape, repeats, axis):
    """For ``numpy.repeat`` of an array of ``shape``: the size of the
    result, and the number of input elements repeated at least once (the
    others are repeated 0 times)."""
    size = prod(shape)
    if axis is None:
        rest = 1
    else:
        axis %= len(shape)
        rest = prod(n for i, n in enumerate(shape) if i != axis)
    if len(repeats) == 1:
        return size * repeats[0], size if repeats[0] > 0 else 0
    return rest * sum(repeats), rest * sum(1 for r in repeats if r > 0)


def _repeat_params(repeats, axis):
    params = {'repeats': repeats}
    if axis is not None:
        params['axis'] = int(axis)
    return params


def _as_strided_params(func):
    params = {'shape': _ints(func.shape), 'strides': _ints(func.strides)}
    if func.storage_offset is not None:
        params['offset'] = int(func.storage_offset)
    return params


def _pad_pairs(pad_width, ndim):
    """``numpy.pad``'s ``pad_width`` as one ``(before, after)`` pair per
    axis."""
    if hasattr(pad_width, 'tolist'):
        pad_width = pad_width.tolist()
    if isinstance(pad_width, numbers.Integral):
        return ((int(pad_width), int(pad_width)),) * ndim
    pad_width = list(pad_width)
    if all(isinstance(p, numbers.Integral) for p in pad_width):
        if len(pad_width) == 1:
            pad_width = pad_width * 2
        return ((int(pad_width[0]), int(pad_width[1])),) * ndim
    pairs = []
    for p in pad_width:
        p = _ints(p)
        pairs.append(p * 2 if len(p) == 1 else p)
    if len(pairs) == 1:
        pairs = pairs * ndim
    return tuple(pairs)


def _count_scalars(value):
    """Number of scalars in a (possibly nested) constant: 1 for a scalar."""
    if hasattr(value, 'size'):
        return int(value.size)
    if isinstance(value, (list, tuple)):
        return sum(_count_scalars(v) for v in value)
    return 1


def _split_sizes(length, indices):
    """Lengths of the pieces ``numpy.split`` cuts an axis of ``length``
    into at ``indices`` (slice semantics, as NumPy does)."""
    bounds = [0] + [int(i) for i in indices] + [length]
    return [len(range(*slice(a, b).indices(length)))
            for a, b in zip(bounds[:-1], bounds[1:])]


# Calculators.

def calc_as_strided(func: AsStrided, in_data, **kwargs):
    r"""AsStrided

    $$y = \mathrm{as\_strided}(x, \mathrm{shape}, \mathrm{strides})$$

    A strided gather, materialised: 0 FLOPs. The elements actually touched
    depend on the strides (windows may overlap, strides may skip); the
    number of distinct elements read is taken as $\min(\|x\|, \|y\|)$.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\min(\|x\|, \|y\|)$ |
    | mwrite | $\|y\|$ |
    | params | `shape`, `strides` (in elements), `offset` |
    """
    x, = in_data
    n_out = prod(_ints(func.shape))
    return _move(min(x.size, n_out), n_out, _as_strided_params(func))


def calc_as_strided_grad(func: AsStridedGrad, in_data, **kwargs):
    r"""AsStridedGrad

    $$g_x = 0;\ g_x[\mathrm{element}(y_i)] \mathrel{+}= g_{y,i}$$

    The backward of AsStrided: each element of $g_y$ is added into the
    element of x it was read from. Summing the $k$ gradients that reach one
    element costs $k - 1$ additions; as in AsStrided, the elements reached
    are taken as $\min(\|x\|, \|g_y\|)$, so overlapping windows cost
    $\|g_y\| - \|x\|$ additions and disjoint ones none (a copy).
    Chainer's extra division when x's own view overlaps itself is not
    counted (x is taken as a plain array). All of $g_x$ (zero fill
    included) is written once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|g_y\| - \min(\|x\|, \|g_y\|)$ |
    | mread | $\|g_y\|$ |
    | mwrite | $\|x\|$ |
    | params | as AsStrided |
    """
    gy, = in_data
    params = _as_strided_params(func)
    if gy is None:
        return (0, 0, 0, params)
    n_in = prod(func.input_geometry.shape)
    return (_sum_into_flops(gy.size, n_in), gy.size, n_in, params)


def calc_assign(func: Assign, in_data, **kwargs):
    r"""Assign

    $$y = 0;\ y_{i, t_i} = x_i$$

    The backward of SelectItem: scatters $x$ (one value per row) into a
    zero-filled array of shape `shape`. 0 FLOPs; reads $x$ and the indices
    $t$ (same size as $x$), writes all of $y$ (zero fill included).

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\| + \|t\|$ |
    | mwrite | $\|y\|$ |
    | params | `shape`: output shape |
    """
    x, = in_data
    shape = _ints(func.shape)
    return _move(size_of(x) + size_of(func.t), prod(shape),
                 {'shape': shape})


def calc_broadcast(func: Broadcast, in_data, **kwargs):
    r"""Broadcast

    $$y_i = \mathrm{broadcast}(x_i, s),\ s = \mathrm{broadcast\_shape}(x_1, \dots, x_n)$$

    Each of the $n$ inputs is materialised at the common broadcast shape
    $s$: 0 FLOPs, every input read once, $n$ outputs of $\|s\|$ elements.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\sum_i \|x_i\|$ |
    | mwrite | $n \|s\|$ |
    | params | `shape`: $s$ |
    """  # NOQA
    shape = broadcast_shape(*[tuple(x.shape) for x in in_data])
    n = prod(shape)
    # each output keeps the dtype of its input
    n_write = sum(elements(n, x) for x in in_data)
    return _move(total_size(in_data), n_write, {'shape': shape})


def calc_broadcast_to(func: BroadcastTo, in_data, **kwargs):
    r"""BroadcastTo

    $$y = \mathrm{broadcast\_to}(x, \mathrm{shape})$$

    Materialised broadcast: 0 FLOPs, x read once, y written once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ |
    | mwrite | $\|y\|$ |
    | params | `shape`: target shape |
    """
    x, = in_data
    shape = _ints(func._shape)
    return _move(x.size, prod(shape), {'shape': shape})


def calc_cast(func: Cast, in_data, **kwargs):
    r"""Cast

    $$y = \mathrm{astype}(x, \mathrm{type})$$

    Convention: a dtype conversion is 1 FLOP per element (it runs a
    conversion instruction on every value). Counts are in elements: y has
    as many elements as x, possibly of another itemsize. A cast to the
    dtype x already has returns x itself and is free: (0, 0, 0).

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|x\|$ (0 if same dtype) |
    | mread | $\|x\|$ (0 if same dtype) |
    | mwrite | $\|x\|$ (0 if same dtype) |
    | params | `type`: target dtype name |
    """
    x, = in_data
    dtype = numpy.dtype(func.type)
    params = {'type': dtype.name}
    if x.dtype == dtype:
        return (0, 0, 0, params)
    # x is read in its own dtype; y is written in the target one
    return (x.size, size_of(x), x.size, params)


def calc_concat(func: Concat, in_data, **kwargs):
    r"""Concat

    $$y = \mathrm{concat}(x_1, \dots, x_n)$$

    Pure data movement.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\sum_i \|x_i\|$ |
    | mwrite | $\sum_i \|x_i\|$ |
    | params | `axis` |
    """
    n = total_size(in_data)
    return _move(n, n, {'axis': int(func.axis)})


def calc_copy(func: Copy, in_data, **kwargs):
    r"""Copy

    $$y = x \text{ (on device dst)}$$

    A copy to the destination device: 0 FLOPs, x read once, y written once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `dst`: destination device |
    """
    x, = in_data
    return _move(x.size, x.size, {'dst': str(func.out_device)})


def calc_depth2space(func: Depth2Space, in_data, **kwargs):
    r"""Depth2Space

    $$(B, r^2 C, H, W) \to (B, C, r H, r W)$$

    A permutation of the elements: 0 FLOPs.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `r`: block size |
    """
    x, = in_data
    return _move(x.size, x.size, {'r': int(func.r)})


def calc_diagonal(func: Diagonal, in_data, **kwargs):
    r"""Diagonal

    $$y_{\dots, i} = x_{\dots, i, i + \mathrm{offset}, \dots}$$

    A gather of the diagonal: only the selected elements are read. y has
    x's shape without `axis1` and `axis2`, plus a last axis of length
    $\max(0, \min(n_1, n_2 - k))$ for offset $k \ge 0$ (or
    $\max(0, \min(n_1 + k, n_2))$ for $k < 0$).

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|y\|$ |
    | mwrite | $\|y\|$ |
    | params | `offset`, `axis1`, `axis2` |
    """
    x, = in_data
    shape = tuple(x.shape)
    a1 = func.axis1 % x.ndim
    a2 = func.axis2 % x.ndim
    n1, n2, k = shape[a1], shape[a2], int(func.offset)
    if k >= 0:
        diag = max(0, min(n1, n2 - k))
    else:
        diag = max(0, min(n1 + k, n2))
    rest = [d for i, d in enumerate(shape) if i not in (a1, a2)]
    n = prod(rest) * diag
    return _move(n, n, {'offset': k, 'axis1': int(func.axis1),
                        'axis2': int(func.axis2)})


def calc_diagonal_grad(func: DiagonalGrad, in_data, **kwargs):
    r"""DiagonalGrad

    $$g_x = 0;\ g_{x; \dots, i, i + \mathrm{offset}, \dots} = g_{y; \dots, i}$$

    The backward of Diagonal: $g_y$ is copied onto the diagonal of a
    zero-filled array of x's shape. 0 FLOPs; all of $g_x$ (zero fill
    included) is written once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|g_y\|$ |
    | mwrite | $\|g_x\| = \|x\|$ |
    | params | `offset`, `axis1`, `axis2` |
    """  # NOQA
    gy, = in_data
    params = {'offset': int(func.offset), 'axis1': int(func.axis1),
              'axis2': int(func.axis2)}
    if gy is None:
        return (0, 0, 0, params)
    return _move(gy.size, prod(func.out_shape), params)


def _stack_like(in_data):
    """Cost of a concatenation of all inputs (hstack, vstack, dstack)."""
    n = total_size(in_data)
    return _move(n, n)


def calc_dstack(func: Dstack, in_data, **kwargs):
    r"""Dstack

    $$y = \mathrm{dstack}(x_1, \dots, x_n)$$

    Concatenation along the third axis: pure data movement.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\sum_i \|x_i\|$ |
    | mwrite | $\sum_i \|x_i\|$ |
    | params | none |
    """
    return _stack_like(in_data)


def calc_expand_dims(func: ExpandDims, in_data, **kwargs):
    r"""ExpandDims

    $$y = \mathrm{expand\_dims}(x, \mathrm{axis})$$

    A metadata-only view of x: free.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | 0 |
    | mwrite | 0 |
    | params | `axis` |
    """
    return (0, 0, 0, {'axis': int(func.axis)})


def calc_flip(func: Flip, in_data, **kwargs):
    r"""Flip

    $$y = \mathrm{flip}(x, \mathrm{axis})$$

    Reversal along an axis, materialised: 0 FLOPs.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `axis` |
    """
    x, = in_data
    return _move(x.size, x.size, {'axis': int(func.axis)})


def calc_fliplr(func: FlipLR, in_data, **kwargs):
    r"""FlipLR

    $$y = \mathrm{flip}(x, 1)$$

    Reversal along axis 1, materialised: 0 FLOPs.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | none |
    """
    x, = in_data
    return _move(x.size, x.size)


def calc_flipud(func: FlipUD, in_data, **kwargs):
    r"""FlipUD

    $$y = \mathrm{flip}(x, 0)$$

    Reversal along axis 0, materialised: 0 FLOPs.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | none |
    """
    x, = in_data
    return _move(x.size, x.size)


@reads_out_shapes
def calc_get_item(func: GetItem, in_data, **kwargs):
    r"""GetItem

    $$y = x[\mathrm{slices}]$$

    A gather: 0 FLOPs. Every element of the index arrays (integer or
    boolean) is read once, and each selected element of x once: at most
    $\min(\|y\|, \|x\|)$ distinct ones (an integer array may select an
    element several times). $\|y\|$ is the size of the real output, which
    the hook passes (`out_shapes`): a boolean mask counts the elements it
    actually selects. Called without it, $\|y\|$ follows NumPy's indexing
    rules from the shapes alone, and a mask of $m$ elements is counted as
    selecting all $m$ entries (an upper bound, exact for an all-True
    mask).

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\min(\|y\|, \|x\|) + \sum \|\mathrm{index\ arrays}\|$ |
    | mwrite | $\|y\|$ |
    | params | `slices`: a list, one item per index: `(start, stop, step)` for a slice, an int, a list of indices (a copy), an index array's shape and dtype (`array(shape=(3,), dtype=int64)`: the array itself is yours), or the index as given (None, Ellipsis) |
    """  # NOQA
    x, = in_data
    out_shapes = kwargs.get('out_shapes')
    if out_shapes and out_shapes[0] is not None:
        n = prod(out_shapes[0])
    else:
        n = prod(_indexed_shape(tuple(x.shape), func.slices))
    return _move(elements(min(n, x.size), x) + _index_reads(func.slices), n,
                 {'slices': _slices_param(func.slices)})


def calc_get_item_grad(func: GetItemGrad, in_data, **kwargs):
    r"""GetItemGrad

    $$g_x = 0;\ g_x[\mathrm{slices}] \mathrel{+}= g_y$$

    The backward of GetItem: each element of $g_y$ is added into the
    element of x it was read from (a scatter-add). Summing the $k$
    gradients that reach one element costs $k - 1$ additions. Basic
    indexing and boolean masks never select an element twice: a copy,
    0 FLOPs. An integer index array may; its values are not read, so the
    gradients are taken as spread over as many elements as they can reach
    ($\min(\|x\|, \|g_y\|)$): $\|g_y\| - \|x\|$ additions when $g_y$ is
    the larger, none otherwise (a lower bound, exact for distinct
    indices). The index arrays are read once, each in its own dtype; all of
    $g_x$ (zero fill included) is written once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|g_y\| - \min(\|x\|, \|g_y\|)$ |
    | mread | $\|g_y\| + \sum \|\mathrm{index\ arrays}\|$ |
    | mwrite | $\|g_x\| = \|x\|$ |
    | params | `slices`: as for GetItem |
    """
    gy, = in_data
    params = {'slices': _slices_param(func.slices)}
    if gy is None:
        return (0, 0, 0, params)
    n_in = prod(func._in_shape)
    return (_sum_into_flops(gy.size, n_in),
            size_of(gy) + _index_reads(func.slices), n_in, params)


def calc_hstack(func: Hstack, in_data, **kwargs):
    r"""Hstack

    $$y = \mathrm{hstack}(x_1, \dots, x_n)$$

    Concatenation along the second axis (the first one for 1-d inputs):
    pure data movement.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\sum_i \|x_i\|$ |
    | mwrite | $\sum_i \|x_i\|$ |
    | params | none |
    """
    return _stack_like(in_data)


def calc_im2col(func: Im2Col, in_data, **kwargs):
    r"""Im2Col

    $$y_{n, (c, i, j), h, w} = x_{n, c, s_y h + d_y i - p_h, s_x w + d_x j - p_w}$$

    Patch extraction (zero outside x): 0 FLOPs. y has shape
    $(B, C k_h k_w, h_{out}, w_{out})$ with the usual convolution output
    sizes. Each element of x some window covers is read once (overlapping
    windows read it once): along each axis the taps reach $r$ distinct
    positions ($r_h$, $r_w$; all of H and W unless the stride skips
    pixels).

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $B C r_h r_w$ |
    | mwrite | $B C k_h k_w h_{out} w_{out}$ |
    | params | `k`, `s`, `p`, `d`: kernel, stride, padding, dilation as (y, x) pairs; `cover_all` |
    """  # NOQA
    x, = in_data
    n, c, h, w = x.shape
    out_h = conv_out_size(h, func.kh, func.sy, func.ph, func.cover_all,
                          func.dy)
    out_w = conv_out_size(w, func.kw, func.sx, func.pw, func.cover_all,
                          func.dx)
    _, reached_h = _window_taps(h, func.kh, func.sy, func.ph, func.dy, out_h)
    _, reached_w = _window_taps(w, func.kw, func.sx, func.pw, func.dx, out_w)
    n_out = n * c * func.kh * func.kw * out_h * out_w
    return _move(elements(n * c * reached_h * reached_w, x), n_out,
                 _im2col_params(func))


def calc_im2col_grad(func: Im2ColGrad, in_data, **kwargs):
    r"""Im2ColGrad

    $$g_{x; n, c, u, v} = \sum_{s_y h + d_y i - p_h = u,\ s_x w + d_x j - p_w = v} g_{y; n, (c, i, j), h, w}$$

    The backward of Im2Col, a col2im: every element of $g_y$ whose tap lies
    inside the image (not in the padding) is added into the pixel it was
    read from; the others are dropped (not read). Along each axis, $t$
    taps of the $k$-tap windows fall inside and reach $r$ distinct
    positions ($t_h, r_h$ and $t_w, r_w$); a pixel reached by $m$ taps
    costs $m - 1$ additions. All of $g_x$ (zeros where no tap reaches) is
    written once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $B C (t_h t_w - r_h r_w)$ |
    | mread | $B C t_h t_w$ |
    | mwrite | $\|g_x\| = B C H W$ |
    | params | as Im2Col |
    """  # NOQA
    gy, = in_data
    params = _im2col_params(func)
    if gy is None:
        return (0, 0, 0, params)
    n, c, h, w = func.in_shape
    out_h, out_w = gy.shape[2:]
    taps_h, reached_h = _window_taps(h, func.kh, func.sy, func.ph, func.dy,
                                     out_h)
    taps_w, reached_w = _window_taps(w, func.kw, func.sx, func.pw, func.dx,
                                     out_w)
    taps = n * c * taps_h * taps_w
    flops = _sum_into_flops(taps, n * c * reached_h * reached_w)
    return (flops, taps, n * c * h * w, params)


def calc_moveaxis(func: Moveaxis, in_data, **kwargs):
    r"""Moveaxis

    $$y = \mathrm{moveaxis}(x, \mathrm{source}, \mathrm{destination})$$

    A transposition, materialised: 0 FLOPs.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `source`, `destination`: axes |
    """
    x, = in_data
    return _move(x.size, x.size, {'source': _ints(func.source),
                                  'destination': _ints(func.destination)})


def calc_pad(func: Pad, in_data, **kwargs):
    r"""Pad

    $$y = \mathrm{pad}(x, \mathrm{pad\_width}, \mathrm{mode})$$

    y's axis $i$ has length $n_i + b_i + a_i$ (before and after padding).
    Padding is counted as data movement: 0 FLOPs for every mode
    (convention, also for the statistic modes such as `mean`). In
    `constant` mode the constant value(s) (1 element for a scalar, default
    0) are read once when there is any padding.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ (+ $\|c\|$ in constant mode) |
    | mwrite | $\prod_i (n_i + b_i + a_i)$ |
    | params | `mode`; `pad`: ((before, after) per axis) |
    """
    x, = in_data
    pairs = _pad_pairs(func.pad_width, x.ndim)
    n_out = prod(d + b + a for d, (b, a) in zip(x.shape, pairs))
    mode = func.mode
    if not isinstance(mode, str):
        mode = getattr(mode, '__name__', 'function')
    n_read = x.size
    if mode == 'constant' and n_out > x.size:
        n_read += _count_scalars(func.keywords.get('constant_values', 0))
    return _move(n_read, n_out, {'mode': mode, 'pad': pairs})


def calc_pad_sequence(func: PadSequence, in_data, **kwargs):
    r"""PadSequence

    $$y_{i, t} = x_{i, t} \text{ if } t < \mathrm{len}(x_i) \text{ else } \mathrm{padding}$$

    Stacks the $n$ sequences into a $(n, L, \dots)$ array, $L$ = `length`
    (default: the longest sequence). The padding value is a scalar
    constant read once when some sequence is shorter than $L$.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\sum_i \|x_i\|$ (+1 if padded) |
    | mwrite | $n L \|x_1[0]\|$ |
    | params | `length`: $L$; `padding`: value |
    """  # NOQA
    length = func.length
    if length is None:
        length = max(x.shape[0] for x in in_data)
    length = int(length)
    n_out = len(in_data) * length * prod(in_data[0].shape[1:])
    n_read = total_size(in_data)
    if n_out and any(x.shape[0] < length for x in in_data):
        n_read += 1
    return _move(n_read, n_out,
                 {'length': length, 'padding': _number(func.padding)})


def calc_permutate(func: Permutate, in_data, **kwargs):
    r"""Permutate

    $$y = x[\dots, \mathrm{indices}]$$

    A gather along `axis` (by the permutation or its inverse): 0 FLOPs;
    x and the index array are read once. Inverting the permutation
    (`inv=True`) is index arithmetic, not counted.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\| + \|\mathrm{indices}\|$ |
    | mwrite | $\|x\|$ |
    | params | `axis`, `inv` |
    """
    x, = in_data
    return _move(size_of(x) + size_of(func.indices), x.size,
                 {'axis': int(func.axis), 'inv': bool(func.inv)})


def calc_repeat(func: Repeat, in_data, **kwargs):
    r"""Repeat

    $$y = \mathrm{repeat}(x, \mathrm{repeats}, \mathrm{axis})$$

    Pure data movement. With a single repeat count $r$, $\|y\| = r \|x\|$;
    with one count per entry, the repeated axis (or the flattened x when
    `axis` is None) has length $\sum r_i$. Only the $\|x_{r>0}\|$
    elements repeated at least once are read.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x_{r>0}\|$ |
    | mwrite | $\|y\|$ |
    | params | `repeats`; `axis` (absent when None) |
    """
    x, = in_data
    repeats = _ints(func.repeats)
    n_out, n_used = _repeat_counts(x.shape, repeats, func.axis)
    return _move(n_used, n_out, _repeat_params(repeats, func.axis))


def calc_repeat_grad(func: RepeatGrad, in_data, **kwargs):
    r"""RepeatGrad

    $$g_{x,i} = \sum_{k < r_i} g_{y,\mathrm{copy}(i, k)}$$

    The backward of Repeat: the $r_i$ gradients of the copies of each
    element are summed ($r_i - 1$ additions; an element repeated 0 times
    gets 0). All of $g_y$ is read, all of $g_x$ written.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|g_y\| - \|x_{r>0}\|$ |
    | mread | $\|g_y\|$ |
    | mwrite | $\|g_x\| = \|x\|$ |
    | params | as Repeat (`axis` non-negative) |
    """
    gy, = in_data
    repeats = _ints(func.repeats)
    params = _repeat_params(repeats, func.axis)
    if gy is None:
        return (0, 0, 0, params)
    _, n_used = _repeat_counts(func.in_shape, repeats, func.axis)
    return (_sum_into_flops(gy.size, n_used), gy.size, prod(func.in_shape),
            params)


def calc_reshape(func: Reshape, in_data, **kwargs):
    r"""Reshape

    $$y = \mathrm{reshape}(x, \mathrm{shape})$$

    A reshape of a contiguous array is a metadata-only view: free.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | 0 |
    | mwrite | 0 |
    | params | `in_shape`; `out_shape`: the target shape as given ($-1$ kept) |
    """
    x, = in_data
    return (0, 0, 0, {'in_shape': tuple(x.shape),
                      'out_shape': _ints(func.shape)})


def calc_resize_images(func: ResizeImages, in_data, **kwargs):
    r"""ResizeImages

    $$y_{b,c,i,j} = \sum_{k=1}^{4} w_{ijk}\, x_{b,c,v_{ijk},u_{ijk}}$$

    Bilinear mode: each output element is a weighted sum of its 4
    neighbours, i.e. a dot product of length 4 (4 FLOPs with FMA, 4
    multiplications and 3 additions without). The weights and neighbour
    indices depend on the spatial position only: they are index arithmetic,
    not counted. Reads: 4 neighbours per output element, but each element
    of x at most once, so $\min(4 \|y\|, \|x\|)$ (enlarging reads all of
    x once, shrinking only the neighbours it needs; as 0.1.2).

    With `mode='nearest'` (Chainer 7) each output element is a copy of one
    element of x: it is counted as a gather, 0 FLOPs and
    $\min(\|y\|, \|x\|)$ elements read.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $4 \|y\|$ (0 for nearest) |
    | FLOPs (no FMA) | $7 \|y\|$ (0 for nearest) |
    | mread | $\min(4 \|y\|, \|x\|)$ ($\min(\|y\|, \|x\|)$ for nearest) |
    | mwrite | $\|y\| = B C h_{out} w_{out}$ |
    | params | `size`: $(h_{out}, w_{out})$; `mode` only when not bilinear |
    """
    x, = in_data
    size = (int(func.out_H), int(func.out_W))
    n_out = x.shape[0] * x.shape[1] * size[0] * size[1]
    params = _resize_params(func, size)
    if 'mode' in params:  # nearest
        return (0, min(n_out, x.size), n_out, params)
    flops = _weighted_sum_flops(4 * n_out, n_out,
                                kwargs.get('fma_1flop', False))
    return (flops, min(4 * n_out, x.size), n_out, params)


def calc_resize_images_grad(func: ResizeImagesGrad, in_data, **kwargs):
    r"""ResizeImagesGrad

    $$g_{x; b,c,v_{ijk},u_{ijk}} \mathrel{+}= w_{ijk}\, g_{y; b,c,i,j}$$

    The backward of ResizeImages, its transpose: each element of $g_y$ is
    multiplied by its 4 bilinear weights and added into the 4 neighbours
    it was interpolated from: $4 \|g_y\|$ products summed into the
    elements of $g_x$, the same arithmetic as the forward's weighted sums
    with the roles of input and output swapped. With FMA each product is 1
    FLOP; without, a multiplication, plus one addition per product except
    the first to reach each element of $g_x$ (taken as
    $\min(\|g_x\|, 4 \|g_y\|)$ elements reached). Weights and indices
    are index arithmetic, not counted.

    With `mode='nearest'` (Chainer 7) each element of $g_y$ goes to the one
    element it was copied from: the gradients reaching one element are
    summed, $\|g_y\| - \min(\|g_x\|, \|g_y\|)$ additions.

    All of $g_y$ is read; all of $g_x$ written once.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $4 \|g_y\|$ (nearest: $\|g_y\| - \min(\|g_x\|, \|g_y\|)$) |
    | FLOPs (no FMA) | $8 \|g_y\| - \min(\|g_x\|, 4 \|g_y\|)$ (nearest: as with FMA) |
    | mread | $\|g_y\|$ |
    | mwrite | $\|g_x\| = B C H W$ |
    | params | as ResizeImages (`size`: the resized size, $g_y$'s) |
    """  # NOQA
    gy, = in_data
    params = _resize_params(func, (int(func.out_H), int(func.out_W)))
    if gy is None:
        return (0, 0, 0, params)
    n_in = prod(func.input_shape)
    if 'mode' in params:  # nearest
        flops = _sum_into_flops(gy.size, n_in)
    else:
        flops = _weighted_sum_flops(4 * gy.size, n_in,
                                    kwargs.get('fma_1flop', False))
    return (flops, gy.size, n_in, params)


def calc_rollaxis(func: Rollaxis, in_data, **kwargs):
    r"""Rollaxis

    $$y = \mathrm{rollaxis}(x, \mathrm{axis}, \mathrm{start})$$

    A transposition, materialised: 0 FLOPs.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `axis`, `start` |
    """
    x, = in_data
    return _move(x.size, x.size,
                 {'axis': int(func.axis), 'start': int(func.start)})


def calc_scatter_add(func: ScatterAdd, in_data, **kwargs):
    r"""ScatterAdd

    $$y = a;\ y[\mathrm{slices}] \mathrel{+}= b$$

    One addition per element of b (b has the shape of `a[slices]`). a, b
    and the index arrays are read once; y (shaped as a) is written once.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|b\|$ |
    | mread | $\|a\| + \|b\| + \sum \|\mathrm{index\ arrays}\|$ |
    | mwrite | $\|a\|$ |
    | params | `slices`: as for GetItem |
    """
    a, b = in_data
    mread = size_of(a) + size_of(b) + _index_reads(func.slices)
    return (b.size, mread, a.size,
            {'slices': _slices_param(func.slices)})


def calc_select_item(func: SelectItem, in_data, **kwargs):
    r"""SelectItem

    $$y_i = x_{i, t_i}$$

    A gather of one element per row: reads t and the $\|t\|$ selected
    elements of x (each in its own dtype).

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $2 \|t\|$ |
    | mwrite | $\|t\|$ |
    | params | none |
    """
    x, t = in_data
    return _move(elements(t.size, x) + size_of(t), t.size)


def calc_separate(func: Separate, in_data, **kwargs):
    r"""Separate

    $$y_i = x[\dots, i, \dots] \text{ for } i < x.\mathrm{shape}[\mathrm{axis}]$$

    Splits x into its slices along `axis`, materialised: 0 FLOPs; the
    outputs hold $\|x\|$ elements in total.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `axis` |
    """  # NOQA
    x, = in_data
    return _move(x.size, x.size, {'axis': int(func.axis)})


def calc_space2depth(func: Space2Depth, in_data, **kwargs):
    r"""Space2Depth

    $$(B, C, r H, r W) \to (B, r^2 C, H, W)$$

    A permutation of the elements: 0 FLOPs.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `r`: block size |
    """
    x, = in_data
    return _move(x.size, x.size, {'r': int(func.r)})


def calc_spatial_transformer_grid(func: SpatialTransformerGrid, in_data,
                                  **kwargs):
    r"""SpatialTransformerGrid

    $$g_{b,:,i,j} = \theta_b\, (x_j, y_i, 1)^T$$

    Each of the $\|g\| = 2 B H W$ grid values is a dot product of length 3
    (3 FLOPs with FMA, 5 without). The $(3, H W)$ array of target
    coordinates is a constant array read once; generating it is not
    counted.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $3 \|g\|$ |
    | FLOPs (no FMA) | $5 \|g\|$ |
    | mread | $\|\theta\| + 3 H W$ |
    | mwrite | $\|g\| = 2 B H W$ |
    | params | `size`: $(H, W)$ |
    """
    theta, = in_data
    h, w = (int(s) for s in func.output_shape)
    n_out = theta.shape[0] * 2 * h * w
    flops = dot_flops(n_out, 3, kwargs.get('fma_1flop', False))
    return (flops, theta.size + 3 * h * w, n_out, {'size': (h, w)})


def calc_spatial_transformer_sampler(func: SpatialTransformerSampler,
                                     in_data, **kwargs):
    r"""SpatialTransformerSampler

    $$y_{b,c,i,j} = \sum_{k=1}^{4} w_{bijk}\, x_{b,c,v_{bijk},u_{bijk}}$$

    Bilinear sampling of x at the $P = B h_{out} w_{out}$ grid points. Per
    point: for each of u and v a scale-and-shift to pixel coordinates (1
    multiply-add), a clip (2 comparisons) and a floor (1); then 4
    differences and 4 products for the weights: $2 f + 14$ FLOPs, with
    $f$ = 1 with FMA, 2 without. Per output element: a weighted sum of 4
    neighbours, a dot product of length 4 (4 FLOPs with FMA, 7 without).
    Integer neighbour indices are index arithmetic; zero padding of x is
    not counted. x (each element at most once) and the grid are read once;
    x is counted whole, as which of its elements the points reach depends
    on the grid's values, which a calculator never reads.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $16 P + 4 \|y\|$ |
    | FLOPs (no FMA) | $18 P + 7 \|y\|$ |
    | mread | $\|x\| + \|grid\|$ |
    | mwrite | $\|y\| = B C h_{out} w_{out}$ |
    | params | none |
    """
    x, grid = in_data
    fma = kwargs.get('fma_1flop', False)
    n_points = grid.shape[0] * grid.shape[2] * grid.shape[3]
    n_out = n_points * x.shape[1]
    per_point = 2 * (1 if fma else 2) + 14
    flops = per_point * n_points + dot_flops(n_out, 4, fma)
    return (flops, x.size + grid.size, n_out, {})


def calc_split_axis(func: SplitAxis, in_data, **kwargs):
    r"""SplitAxis

    $$y_1, \dots, y_n = \mathrm{split}(x, \mathrm{indices\_or\_sections}, \mathrm{axis})$$

    Materialised split: 0 FLOPs. The pieces (computed from the indices
    with NumPy's slice semantics) hold $\|x\|$ elements in total for
    sorted indices.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ |
    | mwrite | $\sum_i \|y_i\|$ |
    | params | `axis`; `sections` or `indices` |
    """  # NOQA
    x, = in_data
    axis = int(func.axis)
    params = {'axis': axis}
    if func.indices is not None:
        indices = _ints(func.indices)
        params['indices'] = indices
        length = x.shape[axis]
        rest = prod(d for i, d in enumerate(x.shape) if i != axis % x.ndim)
        n_out = rest * sum(_split_sizes(length, indices))
    else:
        params['sections'] = int(func.sections)
        n_out = x.size
    return _move(x.size, n_out, params)


def calc_squeeze(func: Squeeze, in_data, **kwargs):
    r"""Squeeze

    $$y = \mathrm{squeeze}(x, \mathrm{axis})$$

    A metadata-only view of x: free. When `axis` is None the squeezed axes
    (those of length 1) are reported.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | 0 |
    | mwrite | 0 |
    | params | `axis`: tuple of removed axes |
    """
    x, = in_data
    if func.axis is None:
        axis = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axis = _ints(func.axis)
    return (0, 0, 0, {'axis': axis})


def calc_stack(func: Stack, in_data, **kwargs):
    r"""Stack

    $$y = \mathrm{stack}(x_1, \dots, x_n, \mathrm{axis})$$

    Concatenation along a new axis: pure data movement.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\sum_i \|x_i\|$ |
    | mwrite | $\sum_i \|x_i\|$ |
    | params | `axis` |
    """
    n = total_size(in_data)
    return _move(n, n, {'axis': int(func.axis)})


def calc_swapaxes(func: Swapaxes, in_data, **kwargs):
    r"""Swapaxes

    $$y = \mathrm{swapaxes}(x, \mathrm{axis1}, \mathrm{axis2})$$

    A transposition, materialised: 0 FLOPs.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `axis1`, `axis2` |
    """
    x, = in_data
    return _move(x.size, x.size,
                 {'axis1': int(func.axis1), 'axis2': int(func.axis2)})


def calc_tile(func: Tile, in_data, **kwargs):
    r"""Tile

    $$y = \mathrm{tile}(x, \mathrm{reps})$$

    Pure data movement. x's shape and `reps` are left-padded with ones to
    the same length; y's shape is their elementwise product.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ |
    | mwrite | $\|x\| \prod_i \mathrm{reps}_i$ |
    | params | `reps` |
    """
    x, = in_data
    reps = _ints(func.reps)
    return _move(x.size, x.size * prod(reps), {'reps': reps})


def calc_as_layout(func: 'chainer.memory_layouts.AsLayout', in_data,
                   **kwargs):
    r"""AsLayout

    $$y = \mathrm{transpose}(x, \mathrm{axes})$$

    A change of memory layout (`Variable.as_layout`, Chainer 7: NCHW <->
    NHWC), the axes those of the input's layout to the output's,
    materialised as a Transpose is: 0 FLOPs.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `layout`: the output layout (None: the standard one) |
    """
    x, = in_data
    return _move(x.size, x.size, {'layout': func.out_layout})


def calc_transpose(func: Transpose, in_data, **kwargs):
    r"""Transpose

    $$y = \mathrm{transpose}(x, \mathrm{axes})$$

    A transposition, materialised: 0 FLOPs.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `axes` as given (None: reversed) |
    """
    x, = in_data
    axes = None if func.axes is None else _ints(func.axes)
    return _move(x.size, x.size, {'axes': axes})


def calc_transpose_sequence(func: TransposeSequence, in_data, **kwargs):
    r"""TransposeSequence

    $$y_t = (x_{1,t}, x_{2,t}, \dots) \text{ for } t < \mathrm{length}$$

    Regroups the time steps of the sequences: pure data movement, the
    outputs hold exactly the input elements.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\sum_i \|x_i\|$ |
    | mwrite | $\sum_i \|x_i\|$ |
    | params | `length`: number of outputs |
    """
    n = total_size(in_data)
    return _move(n, n, {'length': int(func._length)})


def calc_vstack(func: Vstack, in_data, **kwargs):
    r"""Vstack

    $$y = \mathrm{vstack}(x_1, \dots, x_n)$$

    Concatenation along the first axis (of 2-d views of 1-d inputs): pure
    data movement.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\sum_i \|x_i\|$ |
    | mwrite | $\sum_i \|x_i\|$ |
    | params | none |
    """
    return _stack_like(in_data)


def calc_where(func: Where, in_data, **kwargs):
    r"""Where

    $$z = \mathrm{where}(c, x, y)$$

    One select per output element; z has the broadcast shape of c, x and
    y. The condition c (held by the node) is read once, like x and y.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|z\|$ |
    | mread | $\|c\| + \|x\| + \|y\|$ |
    | mwrite | $\|z\|$ |
    | params | none |
    """
    x, y = in_data
    cond = func.condition
    shape = broadcast_shape(tuple(getattr(cond, 'shape', ())),
                            tuple(x.shape), tuple(y.shape))
    n = prod(shape)
    if isinstance(cond, (bool, numpy.bool_)):
        cond_reads = _of_dtype(1, bool)
    else:
        cond_reads = size_of(cond)
    return (n, cond_reads + size_of(x) + size_of(y), n, {})


# Scratch (see cost_calculators.scratch_of)

#: Bytes of a Python int object above 256 (``sys.getsizeof(257)``), and of
#: a list's pointer to it; -5..256 are cached by CPython, never made.
PY_INT = 28
PY_POINTER = 8

#: Bytes of the Python object of a 2-d NumPy array (its data apart), and of
#: a 3-d view (``sys.getsizeof``, NumPy 1.23).
PY_ARRAY = 128
PY_VIEW = 144


def _range_index(n):
    """Bytes NumPy allocates to index with ``range(n)``: the list of its
    items (a pointer and, above 256, an int object each) and the intp
    array made from it, alive together."""
    return (PY_POINTER + 8) * n + PY_INT * max(0, n - 257)


def scratch_select_item(func: SelectItem, in_data, **kwargs):
    r"""The Python ints and index arrays of `x[range(n), t]`.

    NumPy: indexing with `range(t.size)` makes the list of its $n$ items
    (an 8-byte pointer each and, for the items above 256, a 28-byte int)
    and their intp array ($8n$): $16n + 28 \max(0, n - 257)$ bytes, CPython
    and NumPy 1.x.

    CuPy: none (one elementwise kernel).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    return _range_index(in_data[1].size)


def scratch_assign(func: Assign, in_data, **kwargs):
    r"""The Python ints and index arrays of `gx[range(n), t] = gy`.

    NumPy: as SelectItem's indexing (the list of the range's items, their
    intp array), and the values `gy` copied for the assignment ($\|g_y\|$
    elements): $16n + 28 \max(0, n - 257)$ bytes plus $\|g_y\|$ elements.

    CuPy: none (one elementwise kernel writes into the zeros).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    gy = in_data[0]
    return _range_index(func.t.size) + gy.size * gy.dtype.itemsize


def scratch_im2col(func: Im2Col, in_data, **kwargs):
    r"""im2col's padded copy of x.

    NumPy: `numpy.pad` by $p$ before and $p + s - 1$ after each spatial
    axis, alive while the columns (the output) are filled.

    CuPy: none (a kernel reads x in place).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x = in_data[0]
    padded, _ = im2col_bytes(
        x.shape, (func.kh, func.kw), (func.sy, func.sx), (func.ph, func.pw),
        x.dtype.itemsize, func.cover_all, (func.dy, func.dx))
    return padded


def _resize_indices(func, shape, itemsize):
    """Bytes of resize_images' row and column indexes (intp) and weights
    (``itemsize``), alive through the call."""
    return (8 + itemsize) * (func.out_H + func.out_W)


def scratch_resize_images(func: ResizeImages, in_data, **kwargs):
    r"""Each panel of gathered pixels.

    NumPy: the indexes and weights ($(8 + s)(H_o + W_o)$ bytes, $s$ the
    itemsize), the panel's indexes and weights ($l W_o (32 + 4s)$ bytes
    for a panel of $l$ output rows, Chainer's `_infer_lines`), then
    `x[:, :, vcol, ucol]` gathers $4 N l W_o$ elements ($N$ = batch x
    channels, reshaped for `einsum` in place).

    CuPy: the indexes and weights (one kernel interpolates).
    """
    from chainer.functions.array import resize_images
    x = in_data[0]
    s = x.dtype.itemsize
    small = _resize_indices(func, x.shape, s)
    if kwargs.get('backend', 'numpy') == 'cupy':
        return small
    b, c, h, w = x.shape
    lines = min(func.out_H, resize_images._infer_lines(
        b, c, h, w, func.out_H, func.out_W, 2, 2))
    cols = lines * func.out_W
    return small + cols * (32 + 4 * s) + 4 * b * c * cols * s


def scratch_resize_images_grad(func: ResizeImagesGrad, in_data, **kwargs):
    r"""The weighted gradients, their flat indexes and bincount's float64.

    NumPy: the indexes and weights ($(8 + s)(H_o + W_o)$), each output
    pixel's 4 source rows and columns and weights ($P (32 + 4s)$, $P = H_o
    W_o$), `gy * wcol` ($4 N P$ elements, $N$ = batch x channels), the 4 P
    pixel indexes ($32P$) then their offsets per image ($32 N P$, intp),
    `bincount`'s float64 copy of the weights (unless float64) and its
    float64 result ($8 N H W$), cast to the output.

    CuPy: the indexes and weights (a kernel adds into the zeroed output).
    """
    gy = in_data[0]
    s = gy.dtype.itemsize
    small = _resize_indices(func, gy.shape, s)
    if kwargs.get('backend', 'numpy') == 'cupy':
        return small
    b, c, h, w = func.input_shape
    n, p, out = b * c, func.out_H * func.out_W, b * c * h * w
    kept = small + p * (32 + 4 * s) + 4 * n * p * s + 8 * n
    flat = max(kept + 32 * p + 32 * n * p,
               kept + 32 * n * p + (32 * n * p if s != 8 else 0) + 8 * out,
               kept + 32 * n * p + 8 * out + (out * s if s != 8 else 0))
    return flat - out * s


#: Bytes ``numpy.add.at`` allocates for its iteration whatever the sizes
#: (8136 measured with NumPy 1.23).
ADD_AT = 8192


def _add_at(count, index_itemsize):
    """Bytes ``numpy.add.at`` allocates with ``count`` indexes of an integer
    of ``index_itemsize`` bytes: its fixed iteration state, and two
    buffers of up to 8192 intp indexes when it must convert them (NumPy's
    buffered casting, measured 16 bytes per index up to 8192)."""
    convert = 0 if index_itemsize == 8 else 16 * min(8192, count)
    return ADD_AT + convert


def scratch_as_strided_grad(func: AsStridedGrad, in_data, **kwargs):
    r"""gy summed over its broadcast axes, the flat indexes and the counts.

    NumPy (and CuPy, whose `scatter_add` takes the indexes as they are):
    `gy.sum(...)` over the axes of stride 0 (a new array even over none),
    the zeroed storage of the input's span (the output is a view of it),
    `arange` over that span in an integer of gy's itemsize; where the
    output's elements may overlap, `numpy.add.at` adds through those
    indexes (see `_add_at`); where the input's may, a second zeroed
    storage of counts, `ones(1)` and another `numpy.add.at`.

    CuPy: the same arrays (`scatter_add` takes the indexes as they are).
    """
    from chainer.functions.array import as_strided
    gy = in_data[0]
    geometry, s = func.input_geometry, gy.dtype.itemsize
    if 0 in geometry.shape or 0 in gy.shape:
        return 0
    keep = [i for i in range(gy.ndim)
            if func.shape[i] != 1 and func.strides[i] != 0]
    out_shape = [func.shape[i] for i in keep]
    out_strides = [func.strides[i] for i in keep]
    inp = [i for i in range(geometry.ndim) if geometry.shape[i] != 1]
    inp_shape = [geometry.shape[i] for i in inp]
    inp_strides = [geometry.strides[i] for i in inp]
    low = min(as_strided._min_index(inp_shape, inp_strides,
                                    geometry.storage_offset),
              as_strided._min_index(out_shape, out_strides,
                                    func.storage_offset))
    high = max(as_strided._max_index(inp_shape, inp_strides,
                                     geometry.storage_offset),
               as_strided._max_index(out_shape, out_strides,
                                     func.storage_offset))
    # the zeroed storage of the span is the output's base; arange over it
    # (an integer of gy's itemsize) is scratch, of the same size
    storage = (high - low + 1) * s
    cupy = kwargs.get('backend', 'numpy') == 'cupy'
    adds = [0]
    if as_strided._maybe_overlapping_memory(out_shape, out_strides):
        adds.append(0 if cupy else _add_at(prod(out_shape), s))
    if as_strided._maybe_overlapping_memory(inp_shape, inp_strides):
        adds.append(storage + 8 + (0 if cupy else _add_at(
            prod(inp_shape), s)))
    return prod(out_shape) * s + storage + max(adds)


def _advanced(index):
    return isinstance(index, (numpy.ndarray, list)) or (
        hasattr(index, 'shape') and not isinstance(index, numbers.Integral))


def _mask_indexes(slices, result_shape):
    """Bytes of the intp index arrays NumPy makes of the boolean masks in
    ``slices`` (``nonzero``: one array per mask axis of the selected
    count). The count is read from ``result_shape`` (the indexed array's
    shape) when the mask is the only advanced index and no Ellipsis comes
    before it; otherwise every element counts as selected (a bound)."""
    slices = slices if isinstance(slices, tuple) else (slices,)
    advanced = [s for s in slices if _advanced(s)]
    total, axis = 0, 0
    for s in slices:
        if s is Ellipsis:
            axis = None
        if _advanced(s) and getattr(s, 'dtype', None) == numpy.bool_:
            count = s.size
            if len(advanced) == 1 and axis is not None \
                    and axis < len(result_shape):
                count = result_shape[axis]
            total += 8 * s.ndim * count
        if axis is not None and not isinstance(s, numbers.Integral):
            axis += 1
    return total


def scratch_get_item_grad(func: GetItemGrad, in_data, **kwargs):
    r"""numpy.add.at's iteration state and the index arrays of a mask.

    NumPy: `numpy.add.at(gx, slices, gy)` into the zeroed output: its
    iteration state (`ADD_AT`) and, for a boolean mask, `nonzero`'s intp
    index arrays (one per mask axis, of the selected count: 8 bytes per
    axis per element of $g_y$ along the mask's axis). (Integer indexes of
    another dtype are converted in buffers: not counted.)

    CuPy: `scatter_add` makes the same index arrays of a mask.
    """
    gy = in_data[0]
    masks = _mask_indexes(func.slices, gy.shape)
    if kwargs.get('backend', 'numpy') == 'cupy':
        return masks
    return ADD_AT + masks


def scratch_scatter_add(func: ScatterAdd, in_data, **kwargs):
    r"""The shape check's copy of `y[slices]`, then numpy.add.at.

    NumPy: `y = a.copy()` (the output), `y[slices].shape` is checked on a
    copy when the index is advanced ($\|b\|$ elements, with the index
    arrays of a mask), then `numpy.add.at(y, slices, b)`: its iteration
    state and a mask's index arrays.

    CuPy: the same copy and index arrays (`scatter_add`).
    """
    b = in_data[1]
    slices = func.slices if isinstance(func.slices, tuple) \
        else (func.slices,)
    masks = _mask_indexes(slices, b.shape)
    check = b.size * b.dtype.itemsize + masks \
        if any(_advanced(s) for s in slices) else 0
    if kwargs.get('backend', 'numpy') == 'cupy':
        return max(check, masks)
    return max(check, ADD_AT + masks)


@old_style_backward
def scratch_spatial_transformer_sampler(func: SpatialTransformerSampler,
                                        in_data, **kwargs):
    r"""The padded image, the coordinates, indexes, weights and the four
    gathered neighbourhoods (forward and backward).

    NumPy (and CuPy without cuDNN), for $G$ grid points (batch x out_H x
    out_W) of itemsize $s$ and $C$ channels of itemsize $s_x$: the padded
    x, the rescaled and clipped coordinates ($4 G s$), the int32 corner
    indexes ($16 G$), then the four weights in float64 (an int32 minus a
    float: $32 G$, each cast to x's dtype after all four exist) and, once
    cast ($4 G s_x$), the four gathered neighbourhoods ($4 G C s_x$) beside
    y and each weighted term: the larger stage above the output. Each
    neighbourhood is gathered image by image into a list and concatenated:
    the list holds, per image, its array and an `expand_dims` view (Python
    objects of `PY_ARRAY` and `PY_VIEW` bytes and a pointer) beside the
    three gathered before it.

    Backward (an old-style Function's, see `old_style_backward`): the same
    coordinates, indexes, weights and neighbourhoods, then the gradients
    of u and v per channel ($G C s_x$ each) beside each weighted term
    ($G C s_x$): 7 neighbourhoods' bytes at the peak; later the zeroed
    padded gx (the output's base, a view of it is gx), the grid's
    gradient ($2 G s_x$) and the summed u and v gradients beside the four
    neighbourhoods; above gx's padded buffer and the grid's gradient.

    CuPy with cuDNN: the grid transposed to channels last, $2 G s$; in the
    backward also a contiguous copy of a strided gy.
    """
    x, grid = in_data
    b, c, h, w = x.shape
    g = b * prod(grid.shape[2:])
    s, sx = grid.dtype.itemsize, x.dtype.itemsize
    cupy = kwargs.get('backend', 'numpy') == 'cupy'
    backward = kwargs.get('backward', False)
    if cupy and uses_cudnn():
        if not backward:
            return 2 * g * s
        gy = kwargs['grad_outputs'][0]
        return 2 * g * s + (0 if gy is None or gy.flags.c_contiguous
                            else gy.size * gy.dtype.itemsize)
    padded = b * c * (h + 2) * (w + 2) * sx
    kept = padded + 4 * g * s + 16 * g
    gathered = g * c * sx
    pieces = b * (PY_ARRAY + PY_VIEW + PY_POINTER)
    if not backward:
        return kept + max(32 * g + 4 * g * sx,
                          4 * g * sx + 4 * gathered + pieces,
                          4 * g * sx + 5 * gathered)
    weights = 4 * g * sx
    return kept + max(
        32 * g + g * sx, weights + 4 * gathered + pieces,
        weights + 7 * gathered,
        weights + 4 * gathered + padded + 4 * g * sx) - padded - 2 * g * sx


@old_style_backward
def scratch_spatial_transformer_grid(func: SpatialTransformerGrid, in_data,
                                     **kwargs):
    r"""The target coordinates (forward and backward).

    NumPy (and CuPy without cuDNN), for an $H \times W$ grid of itemsize
    $s$: two `linspace` of $H$ and $W$ elements (alive throughout, under
    `meshgrid`'s views), a $(1, H, W)$ array of ones beside the $(3, H,
    W)$ coordinates it is concatenated into ($4 H W s$), then the
    coordinates beside the output ($3 H W s$): the larger above the
    output. Backward (an old-style Function's, see `old_style_backward`):
    the same coordinates, then the gradient $g$ reshaped to $(B, 2, H W)$
    (a copy unless its axes merge) beside them for the product.

    CuPy with cuDNN: none forward; backward, $g$ transposed to channels
    last and made contiguous ($\|g\|$ elements).
    """
    theta, = in_data
    h, w = (int(d) for d in func.output_shape)
    s = theta.dtype.itemsize
    cupy = kwargs.get('backend', 'numpy') == 'cupy'
    backward = kwargs.get('backward', False)
    grid = theta.shape[0] * 2 * h * w * s
    if cupy and uses_cudnn():
        return grid if backward else 0
    lines = (h + w) * s
    if not backward:
        return lines + max(4 * h * w * s - grid, 3 * h * w * s)
    gy = kwargs['grad_outputs'][0]
    view = reshape_view(gy.shape, strides_of(gy),
                        (gy.shape[0], 2, h * w))
    return lines + max(4 * h * w * s,
                       3 * h * w * s + (0 if view is not None else grid))
