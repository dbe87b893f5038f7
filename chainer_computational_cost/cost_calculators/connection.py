"""Cost calculators for ``chainer.functions.connection``.

Conventions shared by this module:

* a product accumulated into a running sum is a multiply-add: 1 FLOP with
  ``fma_1flop=True``, 2 FLOPs (a multiplication and an addition) without;
* in convolutions the bias initialises the accumulator, so it is free with
  FMA; without FMA a sum of K products costs K - 1 additions, plus one more
  for the bias when there is one;
* a gradient class is costed like any function: the gradients and saved
  arrays it reads, the gradients it writes. The gradient of a
  convolution's input is a deconvolution call and its bias gradient a Sum
  call, each costed by its own calculator;
* every input that the function uses (input, weight, bias) is read once,
  x whole even when a stride beyond the kernel skips some of its elements;
  intermediate buffers (im2col columns, outer products) are not counted;
* with ``flop_convention='torch'`` (PyTorch's ``FlopCounterMode``, see
  ``product_convention``) the convolutions, deconvolutions, linear layers
  and their gradients count 2 FLOPs per multiply-add and nothing for a
  bias, whatever ``fma_1flop`` says.
"""

import numpy

from chainer.functions.connection.bilinear import BilinearFunction
from chainer.functions.connection.bilinear import BilinearFunctionGrad
from chainer.functions.connection.convolution_2d import Convolution2DFunction
from chainer.functions.connection.convolution_2d import Convolution2DGradW
from chainer.functions.connection.convolution_nd import ConvolutionND
from chainer.functions.connection.convolution_nd import ConvolutionNDGradW
from chainer.functions.connection.deconvolution_2d import \
    Deconvolution2DFunction
from chainer.functions.connection.deconvolution_nd import DeconvolutionND
from chainer.functions.connection.embed_id import EmbedIDFunction
from chainer.functions.connection.embed_id import EmbedIDGrad
from chainer.functions.connection.linear import LinearFunction
from chainer.functions.connection.linear import LinearGradData
from chainer.functions.connection.linear import LinearGradWeight
from chainer.functions.connection.local_convolution_2d import \
    LocalConvolution2DFunction
from chainer.functions.connection.shift import Shift

from chainer_computational_cost.cost_calculators import c_strides
from chainer_computational_cost.cost_calculators import compact
from chainer_computational_cost.cost_calculators import contiguous
from chainer_computational_cost.cost_calculators import conv_out_size
from chainer_computational_cost.cost_calculators import deconv_out_size
from chainer_computational_cost.cost_calculators import dot_copies
from chainer_computational_cost.cost_calculators import dot_flops
from chainer_computational_cost.cost_calculators import cudnn_workspace
from chainer_computational_cost.cost_calculators import elements
from chainer_computational_cost.cost_calculators import im2col_bytes
from chainer_computational_cost.cost_calculators import prod
from chainer_computational_cost.cost_calculators import reshape_view
from chainer_computational_cost.cost_calculators import product_convention
from chainer_computational_cost.cost_calculators import scatter_axis
from chainer_computational_cost.cost_calculators import size_of
from chainer_computational_cost.cost_calculators import strides_of
from chainer_computational_cost.cost_calculators import tensordot_copies
from chainer_computational_cost.cost_calculators import total_size
from chainer_computational_cost.cost_calculators import TORCH
from chainer_computational_cost.cost_calculators import uses_cudnn

#: The family of calls whose time one fit of a calibration predicts
#: (``analysis.calibration.FAMILIES``): this module's.
TIME_FAMILY = 'connection'


def _accumulate_flops(macs, n_sums, has_init, fma):
    """FLOPs of ``n_sums`` sums of ``macs`` products in all.

    An initial value (a bias) starts the accumulator: with FMA each product
    is 1 FLOP; without FMA each product is a multiplication and an
    addition, except the first one of every sum when there is no initial
    value; with ``fma`` TORCH every product is 2 FLOPs.
    """
    if fma == TORCH:
        return 2 * macs
    if fma or macs == 0:
        return macs
    return 2 * macs - (0 if has_init else n_sums)


def _conv_params(ksize, stride, pad, dilate, groups, has_bias):
    return {'k': compact(ksize), 's': compact(stride), 'p': compact(pad),
            'd': compact(dilate), 'groups': int(groups),
            'nobias': not has_bias}


def conv_macs(n, c_in, c_out, groups, ksize, out_dims):
    """Multiply-adds of a convolution of ``n`` samples from ``c_in`` to
    ``c_out`` channels in ``groups`` groups, with kernel ``ksize`` and
    output spatial sizes ``out_dims``: each of the ``n c_out prod(out)``
    outputs sums ``(c_in / groups) prod(k)`` products.

    The one count behind every convolution-shaped product: the forward
    convolution; the deconvolution, its transpose (``c_in`` and ``c_out``
    swapped, the deconvolution's input grid as ``out_dims``), which is also
    the gradient of a convolution's input; and the weight gradient, a
    correlation of x with gy over the same pairs. So with FMA a
    convolution's two gradients cost twice its forward multiply-adds.
    """
    return n * c_out * prod(out_dims) * (c_in // groups) * prod(ksize)


def _conv_cost(x, W, b, stride, pad, dilate, cover_all, groups, fma):
    """Cost of an N-dimensional convolution, any N.

    ``x`` is ``(n, c_in, d_1, ..., d_N)``, ``W`` is
    ``(c_out, c_in / groups, k_1, ..., k_N)``; ``stride``, ``pad`` and
    ``dilate`` are N-tuples.
    """
    ksize = W.shape[2:]
    out_dims = [conv_out_size(size, k, s, p, cover_all=cover_all, d=d)
                for size, k, s, p, d
                in zip(x.shape[2:], ksize, stride, pad, dilate)]
    n_out = x.shape[0] * W.shape[0] * prod(out_dims)
    has_bias = b is not None
    macs = conv_macs(x.shape[0], x.shape[1], W.shape[0], groups, ksize,
                     out_dims)
    flops = _accumulate_flops(macs, n_out, has_bias, fma)
    mread = total_size((x, W, b))
    params = _conv_params(ksize, stride, pad, dilate, groups, has_bias)
    return (flops, mread, n_out, params)


def _deconv_cost(x, W, b, stride, pad, dilate, out_dims, groups, fma):
    """Cost of an N-dimensional transposed convolution, any N.

    ``x`` is ``(n, c_in, d_1, ..., d_N)``, ``W`` is
    ``(c_in, c_out / groups, k_1, ..., k_N)``; ``out_dims`` holds the
    output spatial sizes, None where they are to be derived from the input.
    """
    ksize = W.shape[2:]
    out_dims = [deconv_out_size(size, k, s, p, d=d) if out is None else out
                for size, k, s, p, d, out
                in zip(x.shape[2:], ksize, stride, pad, dilate, out_dims)]
    per_sample = W.shape[1] * groups
    n_out = x.shape[0] * per_sample * prod(out_dims)
    # the transpose of a convolution from y (per_sample channels) to x
    products = conv_macs(x.shape[0], per_sample, x.shape[1], groups, ksize,
                         x.shape[2:])
    has_bias = b is not None
    flops = products if fma and fma != TORCH else 2 * products
    if not fma and not has_bias:
        # the first product reaching an output needs no addition
        flops -= x.shape[0] * per_sample * prod(
            scatter_axis(size, k, s, p, out, d)[1] for size, k, s, p, d, out
            in zip(x.shape[2:], ksize, stride, pad, dilate, out_dims))
    mread = total_size((x, W, b))
    params = _conv_params(ksize, stride, pad, dilate, groups, has_bias)
    return (flops, mread, n_out, params)


def _split_bias(in_data):
    x, W = in_data[:2]
    b = in_data[2] if len(in_data) == 3 else None
    return x, W, b


def calc_conv2d(func: Convolution2DFunction, in_data, **kwargs):
    r"""Convolution2DFunction

    $$y_{n,o,i,j} = b_o + \sum_{c,u,v} W_{o,c,u,v} x_{n,c,i s_y + u d_y - p_h, j s_x + v d_x - p_w}$$

    Each of the $\|y\| = N c_{out} h_{out} w_{out}$ outputs is a sum of
    $K = (c_{in} / groups) k_h k_w$ products. The bias initialises the
    accumulator (free); without FMA every product costs a multiplication and
    an addition, minus one addition per output when there is no bias. The
    output size follows `stride`, `pad`, `dilate` and `cover_all`.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\|y\| K$ |
    | FLOPs (no FMA) | $2 \|y\| K$ with bias, $2 \|y\| K - \|y\|$ without |
    | FLOPs (torch) | $2 \|y\| K$, bias or not |
    | mread | $\|x\| + \|W\| + \|b\|$ |
    | mwrite | $\|y\|$ |
    | params | `k`, `s`, `p`, `d`: kernel, stride, padding, dilation (int when equal on both axes, else a pair); `groups`; `nobias` |
    """  # NOQA
    x, W, b = _split_bias(in_data)
    return _conv_cost(x, W, b, (func.sy, func.sx), (func.ph, func.pw),
                      (func.dy, func.dx), func.cover_all, func.groups,
                      product_convention(kwargs))


def _operand(x):
    """``(shape, strides, itemsize)`` of an input, for tensordot_copies."""
    return tuple(x.shape), strides_of(x), x.dtype.itemsize


def _col_operand(shape, itemsize):
    """``(shape, strides, itemsize)`` of a fresh C-contiguous array."""
    return tuple(shape), c_strides(shape, itemsize), itemsize


def _conv_gpu_ok(func, x, W):
    """Whether Chainer 7 takes cuDNN for this convolution's call on a GPU
    (cover_all and mixed dtypes never do)."""
    return (uses_cudnn() and not func.cover_all
            and x.dtype == numpy.dtype(W.dtype))


def scratch_conv2d(func: Convolution2DFunction, in_data, **kwargs):
    r"""im2col's padded copy and columns, tensordot's copy of them.

    NumPy (`groups` 1): `im2col_cpu` pads x into $P = N c_{in}
    (h + 2 p_h + s_y - 1)(w + 2 p_w + s_x - 1)$ elements and fills the
    columns, $C = N c_{in} k_h k_w h_{out} w_{out}$ elements, both alive
    until it returns; then `numpy.tensordot(col, W, ((1, 2, 3), (1, 2,
    3)))` transposes the columns to $(N h_{out} w_{out}, c_{in} k_h k_w)$,
    a copy of $C$ unless $N = 1$ (the axes then merge into a view), and
    writes the product $\|y\|$ (the output, transposed to NCHW by a view).
    The peak above what the call leaves alive ($y$) is
    $\max(P + C - \|y\|, C + C_T)$ elements, $C_T$ the copy ($C$ or 0);
    another cast copy of $y$ when x and W differ in dtype.
    `groups` > 1 reshapes the columns to $(G, c_{in} k_h k_w / G, N h_{out}
    w_{out})$, a copy that replaces them unless $N = 1$, for a batched
    matmul: $\max(P + C - \|y\|, 2C - \|y\|, C)$ with the copy.

    CuPy: with cuDNN (`chainer.config.use_cudnn` `'auto'` or `'always'`,
    no `cover_all`, equal dtypes) the workspace of the algorithm cuDNN
    picks, which Chainer caps at `chainer.cuda.get_max_workspace_size()`
    (8 MiB by default): counted as that maximum, since the algorithm is
    not known before it runs. Without cuDNN `im2col_gpu` writes the
    columns without a padded copy: $C$, plus the same transposed copy, as
    written (not measured here).
    """
    x, W, _ = _split_bias(in_data)
    return _conv_scratch(func, x, W, (func.sy, func.sx), (func.ph, func.pw),
                         (func.dy, func.dx), kwargs.get('backend', 'numpy'))


def _conv_scratch(func, x, W, stride, pad, dilate, backend):
    """Scratch of an N-d convolution's forward (see scratch_conv2d)."""
    if backend == 'cupy' and _conv_gpu_ok(func, x, W):
        return cudnn_workspace()
    ksize = tuple(W.shape[2:])
    isz = x.dtype.itemsize
    padded, col = im2col_bytes(x.shape, ksize, stride, pad, isz,
                               func.cover_all, dilate)
    n, nd = x.shape[0], len(ksize)
    col_shape = x.shape[:2] + ksize + _conv_out_dims(
        x.shape, ksize, stride, pad, dilate, func.cover_all)
    out_elems = n * W.shape[0] * prod(col_shape[2 + nd:])
    rtype = numpy.result_type(x.dtype, W.dtype)
    prod_bytes = out_elems * rtype.itemsize
    cast = out_elems * isz if rtype != x.dtype else 0
    out = cast or prod_bytes
    if backend == 'cupy':
        padded = 0
    if func.groups > 1:
        # the columns reshaped to (G, ., N out...): a copy that replaces
        # them (batch > 1), then the batched matmul
        copy = col if n > 1 else 0
        return max(padded + col, col + copy,
                   (copy or col) + prod_bytes + cast) - out
    axes = tuple(range(1, nd + 2))
    copy = tensordot_copies(_col_operand(col_shape, isz), axes,
                            _operand(W), axes)
    return max(padded + col, col + copy + prod_bytes,
               col + prod_bytes + cast) - out


def _conv_out_dims(shape, ksize, stride, pad, dilate, cover_all):
    return tuple(conv_out_size(d, k, s, p, cover_all, di) for d, k, s, p, di
                 in zip(shape[2:], ksize, stride, pad, dilate))


def calc_conv_nd(func: ConvolutionND, in_data, **kwargs):
    r"""ConvolutionND

    $$y_{n,o,\mathbf{i}} = b_o + \sum_{c,\mathbf{u}} W_{o,c,\mathbf{u}} x_{n,c,\mathbf{i} \mathbf{s} + \mathbf{u} \mathbf{d} - \mathbf{p}}$$

    Same model as Convolution2DFunction for any number of spatial axes:
    $\|y\| = N c_{out} \prod_i out_i$ outputs, each a sum of
    $K = (c_{in} / groups) \prod_i k_i$ products; the bias initialises the
    accumulator.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\|y\| K$ |
    | FLOPs (no FMA) | $2 \|y\| K$ with bias, $2 \|y\| K - \|y\|$ without |
    | FLOPs (torch) | $2 \|y\| K$, bias or not |
    | mread | $\|x\| + \|W\| + \|b\|$ |
    | mwrite | $\|y\|$ |
    | params | `k`, `s`, `p`, `d`: kernel, stride, padding, dilation (int when equal on every axis, else a tuple); `groups`; `nobias` |
    """  # NOQA
    x, W, b = _split_bias(in_data)
    return _conv_cost(x, W, b, func.stride, func.pad, func.dilate,
                      func.cover_all, func.groups,
                      product_convention(kwargs))


def scratch_conv_nd(func: ConvolutionND, in_data, **kwargs):
    r"""im2col's padded copy and columns, tensordot's copy of them.

    As Convolution2DFunction's, along every spatial axis:
    `im2col_nd_cpu` pads x by $p_a$ before and $p_a + s_a - 1$ after each
    axis ($P$ elements) and fills the columns ($C = N c_{in} \prod_a k_a
    \prod_a out_a$); tensordot copies them unless $N = 1$: $\max(P + C -
    \|y\|, C + C_T)$ elements above y (`groups` > 1 as for 2-d). CuPy:
    cuDNN's workspace (counted as Chainer's configured maximum) or,
    without cuDNN, the columns and the same copy.
    """
    x, W, _ = _split_bias(in_data)
    return _conv_scratch(func, x, W, tuple(func.stride), tuple(func.pad),
                         tuple(func.dilate), kwargs.get('backend', 'numpy'))


def calc_deconv2d(func: Deconvolution2DFunction, in_data, **kwargs):
    r"""Deconvolution2DFunction

    $$P = N c_{in} h_{in} w_{in} \cdot (c_{out} / groups) k_h k_w$$

    Every input element is multiplied by each of the
    $(c_{out} / groups) k_h k_w$ weights it meets and scattered into the
    output: $P$ products,
    each accumulated (1 FLOP with FMA, 2 without). The bias initialises the
    output; without bias and without FMA the first product reaching each
    output needs no addition: $\|y_r\|$ is the number of outputs reached
    by at least one product ($\|y\|$ unless the stride exceeds the
    kernel, which leaves gaps that get only the bias, or zero). The output size is `outsize` when
    given, else $s (in - 1) + d (k - 1) + 1 - 2p$ per axis.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $P$ |
    | FLOPs (no FMA) | $2P$ with bias, $2P - \|y_r\|$ without |
    | FLOPs (torch) | $2P$, bias or not |
    | mread | $\|x\| + \|W\| + \|b\|$ |
    | mwrite | $\|y\|$ |
    | params | `k`, `s`, `p`, `d`: kernel, stride, padding, dilation (int when equal on both axes, else a pair); `groups`; `nobias` |
    """  # NOQA
    x, W, b = _split_bias(in_data)
    return _deconv_cost(x, W, b, (func.sy, func.sx), (func.ph, func.pw),
                        (func.dy, func.dx), (func.outh, func.outw),
                        func.groups, product_convention(kwargs))


def scratch_deconv2d(func: Deconvolution2DFunction, in_data, **kwargs):
    r"""tensordot's product (the columns), folded into a padded image.

    NumPy (`groups` 1; also a convolution's input gradient):
    `numpy.tensordot(W, x, (0, 1))` makes x a $(c_{in}, N h_{in}
    w_{in})$ matrix (a copy of $\|x\|$ unless $N = 1$) and writes the
    columns $G = c_{out} k_h k_w N h_{in} w_{in}$ elements; `col2im_cpu`
    adds them into a zeroed padded image $I = N c_{out} (h_{out} + 2 p_h +
    s_y - 1)(w_{out} + 2 p_w + s_x - 1)$ elements, whose centre is the
    output (a view: $I$ is what the call leaves alive). Peak above it:
    $\max(\text{copy} + G - I, G)$ elements. `groups` > 1 reshapes x to
    $(G, c_{in} / G, N h_{in} w_{in})$ (a copy unless its axes merge, alive
    to the end) for a batched matmul: $\text{copy} + G$.

    CuPy: with cuDNN (`use_cudnn` `'auto'` or `'always'`, equal dtypes) the
    workspace, counted as Chainer's configured maximum
    (`get_max_workspace_size()`, 8 MiB by default); without, the columns
    $G$ and the same copy, the output written unpadded, as written.
    """
    x, W, _ = _split_bias(in_data)
    return _deconv_scratch(func, x, W, (func.sy, func.sx), (func.ph, func.pw),
                           (func.dy, func.dx), (func.outh, func.outw),
                           kwargs.get('backend', 'numpy'))


def _deconv_scratch(func, x, W, stride, pad, dilate, outs, backend):
    """Scratch of an N-d transposed convolution (see scratch_deconv2d)."""
    if backend == 'cupy' and uses_cudnn() \
            and x.dtype == numpy.dtype(W.dtype):
        return cudnn_workspace()
    isz = x.dtype.itemsize
    ksize = W.shape[2:]
    outs = [deconv_out_size(d, k, s, p, d=di) if o is None else o
            for d, k, s, p, di, o in zip(
                x.shape[2:], ksize, stride, pad, dilate, outs)]
    n, c_out = x.shape[0], W.shape[1] * func.groups
    rtype = numpy.result_type(x.dtype, W.dtype)
    cols = c_out * prod(ksize) * n * prod(x.shape[2:])
    gcol = cols * rtype.itemsize
    cast = cols * isz if rtype != x.dtype else 0
    if backend == 'cupy':
        image = n * c_out * prod(outs) * isz
    else:
        image = n * c_out * prod([o + 2 * p + s - 1
                                  for o, p, s in zip(outs, pad, stride)]) * isz
    if func.groups > 1:
        # x reshaped to (G, c_in / G, N in...), alive to the end
        copy = _grouped_copy(x, func.groups)
        return copy + max(gcol + cast, (cast or gcol) + image) - image
    copy = tensordot_copies(_operand(W), (0,), _operand(x), (1,))
    return max(copy + gcol, gcol + cast, (cast or gcol) + image) - image


def calc_deconv_nd(func: DeconvolutionND, in_data, **kwargs):
    r"""DeconvolutionND

    $$P = N c_{in} \prod_i in_i \cdot (c_{out} / groups) \prod_i k_i$$

    Same model as Deconvolution2DFunction for any number of spatial axes:
    $P$ accumulated products; the bias initialises the output, and without
    it the first product reaching each of the $\|y_r\|$ reached outputs
    needs no addition. The output size is `outsize` when given, else $s (in - 1) + d (k - 1) + 1 - 2p$
    per axis.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $P$ |
    | FLOPs (no FMA) | $2P$ with bias, $2P - \|y_r\|$ without |
    | FLOPs (torch) | $2P$, bias or not |
    | mread | $\|x\| + \|W\| + \|b\|$ |
    | mwrite | $\|y\|$ |
    | params | `k`, `s`, `p`, `d`: kernel, stride, padding, dilation (int when equal on every axis, else a tuple); `groups`; `nobias` |
    """  # NOQA
    x, W, b = _split_bias(in_data)
    outs = func.outs
    if outs is None:
        outs = (None,) * (x.ndim - 2)
    return _deconv_cost(x, W, b, func.stride, func.pad, func.dilate, outs,
                        func.groups, product_convention(kwargs))


def scratch_deconv_nd(func: DeconvolutionND, in_data, **kwargs):
    r"""tensordot's product (the columns), folded into a padded image.

    As Deconvolution2DFunction's along every spatial axis: x made a matrix
    (a copy unless $N = 1$), the columns $G$, then `col2im_nd_cpu`'s zeroed
    padded image $I$ (the output is its centre): $\max(\text{copy} + G -
    I, G)$ elements (`groups` > 1 as for 2-d). CuPy: cuDNN's workspace
    (Chainer's configured maximum) or the columns and the copy.
    """
    x, W, _ = _split_bias(in_data)
    return _deconv_scratch(func, x, W, tuple(func.stride), tuple(func.pad),
                           tuple(func.dilate), tuple(func.outs),
                           kwargs.get('backend', 'numpy'))


def calc_linear(func: LinearFunction, in_data, **kwargs):
    r"""LinearFunction

    $$y = x W^T + b$$

    With $in$ = `W.shape[1]`, $out$ = `W.shape[0]` and
    $rows = \|x\| / in$ (all leading axes of x are batch axes), the matrix
    product is $rows \cdot out$ dot products of length $in$; the bias is
    then added to every output element (1 FLOP each).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $rows \cdot in \cdot out$ (+ $rows \cdot out$ with bias) |
    | FLOPs (no FMA) | $rows \cdot out (2 in - 1)$ (+ $rows \cdot out$ with bias) |
    | FLOPs (torch) | $2 \, rows \cdot in \cdot out$, bias or not |
    | mread | $\|x\| + \|W\| + \|b\|$ |
    | mwrite | $rows \cdot out$ |
    | params | `nobias` |
    """  # NOQA
    x, W, b = _split_bias(in_data)
    n_out, n_in = W.shape
    rows = x.size // n_in if n_in else 0
    y_size = rows * n_out
    fma = product_convention(kwargs)
    flops = dot_flops(y_size, n_in, fma)
    if b is not None and fma != TORCH:
        flops += y_size
    return (flops, total_size((x, W, b)), y_size, {'nobias': b is None})


def _contiguous(x):
    """Whether ``x`` is C- or F-contiguous (see :func:`contiguous`)."""
    return contiguous(*_operand(x))


def _dot_operand_copy(x):
    """Bytes ``numpy.dot`` copies a 2-d input into (0 if BLAS takes it)."""
    return dot_copies(*_operand(x)[:2], x.dtype.itemsize)


def _linear_input_copy(x):
    """Bytes of the copy Chainer's Linear functions make of a matrix that
    is neither C- nor F-contiguous: ``numpy.ascontiguousarray`` when an
    axis has length 1, else the copy ``numpy.dot`` makes."""
    if _contiguous(x):
        return 0
    if 1 in x.shape:
        return x.size * x.dtype.itemsize
    return _dot_operand_copy(x)


def scratch_linear(func: LinearFunction, in_data, **kwargs):
    r"""Copies of a non-contiguous x; the product before a cast.

    NumPy: `numpy.dot(x, W.T, out=y)` writes the output directly (W.T is a
    Fortran-ordered view BLAS takes as it is): none for contiguous x. An x
    neither C- nor F-contiguous is copied first ($\|x\|$). x and W of
    different dtypes: `x.dot(W.T)` ($\|y\|$ in the promoted dtype) and its
    cast copy, then copied into y. What BLAS allocates inside (packing
    buffers) cannot be seen from Python and is not counted.

    CuPy: none (cuBLAS's workspace is allocated with its handle, not per
    call).
    """
    x, W, _ = _split_bias(in_data)
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    extra = 0
    if x.dtype != W.dtype:
        rows = x.shape[0] * W.shape[0]
        extra = rows * (numpy.result_type(x.dtype, W.dtype).itemsize
                        + x.dtype.itemsize)
    return _linear_input_copy(x) + extra


def calc_bilinear(func: BilinearFunction, in_data, **kwargs):
    r"""BilinearFunction

    $$y_{il} = \sum_{j,k} e^1_{ij} e^2_{ik} W_{jkl} + \sum_j e^1_{ij} V^1_{jl} + \sum_k e^2_{ik} V^2_{kl} + b_l$$

    With $N$ = `e1.shape[0]`, $J = \|e^1\| / N$, $K = \|e^2\| / N$ and
    $L$ = `W.shape[2]`: the outer products $e^1_{ij} e^2_{ik}$ cost $NJK$
    multiplications, then each of the $NL$ outputs accumulates
    $M = JK$ products, or $M = JK + J + K$ with the linear terms
    ($V^1$, $V^2$, $b$ given together). The bias initialises the
    accumulator; without FMA and without bias the first term of each sum
    needs no addition.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $NJK + NLM$ |
    | FLOPs (no FMA) | $NJK + NL(2M - 1)$, or $NJK + 2NLM$ with the linear terms |
    | mread | $\|e^1\| + \|e^2\| + \|W\|$ (+ $\|V^1\| + \|V^2\| + \|b\|$) |
    | mwrite | $NL$ |
    | params | `linear`: whether $V^1$, $V^2$, $b$ are used |
    """  # NOQA
    e1, e2, W = in_data[:3]
    linear = len(in_data) == 6
    n = e1.shape[0]
    j = e1.size // n if n else 0
    k = e2.size // n if n else 0
    n_out = n * W.shape[2]
    n_terms = j * k + (j + k if linear else 0)
    flops = n * j * k + _accumulate_flops(
        n_out * n_terms, n_out, linear, kwargs.get('fma_1flop', False))
    return (flops, total_size(in_data), n_out, {'linear': linear})


def _bilinear_dims(in_data):
    e1, e2, W = in_data[:3]
    n = e1.shape[0]
    return (n, e1.size // n if n else 0, e2.size // n if n else 0,
            W.shape[2])


def scratch_bilinear(func: BilinearFunction, in_data, **kwargs):
    r"""The outer products $e^1_{ij} e^2_{ik}$, and the linear terms' products.

    NumPy and CuPy: `einsum('ij,ik->ijk')` makes the $NJK$ outer products
    (C-ordered, so `tensordot` with $W$ reshapes them in place; a $W$ whose
    axes do not merge is copied, as `tensordot` does) alive while the
    product $y$ is made. With $V^1$, $V^2$, $b$: `e1.dot(V1)` and then
    `e2.dot(V2)` ($NL$ each, one at a time) are added into $y$. Peak above
    $y$: $\max(NJK, NL)$ elements, in the dtype of $e^1 e^2$.
    """
    e1, e2, W = in_data[:3]
    n, j, k, n_l = _bilinear_dims(in_data)
    isz = numpy.result_type(e1.dtype, e2.dtype).itemsize
    outer = n * j * k * isz
    copies = tensordot_copies(((n, j, k), c_strides((n, j, k), isz), isz),
                              (1, 2), (W.shape, strides_of(W),
                                       W.dtype.itemsize), (0, 1))
    linear = n * n_l * isz if len(in_data) == 6 else 0
    return max(outer + copies, linear)


def calc_local_conv2d(func: LocalConvolution2DFunction, in_data, **kwargs):
    r"""LocalConvolution2DFunction

    $$y_{n,o,i,j} = b_{o,i,j} + \sum_{c,u,v} W_{o,i,j,c,u,v} x_{n,c,i s_y + u, j s_x + v}$$

    Like a convolution without weight sharing: W has shape
    $(c_{out}, h_{out}, w_{out}, c_{in}, k_h, k_w)$ and each of the
    $\|y\| = N c_{out} h_{out} w_{out}$ outputs is a sum of
    $K = c_{in} k_h k_w$ products; the bias initialises the accumulator.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\|y\| K$ |
    | FLOPs (no FMA) | $2 \|y\| K$ with bias, $2 \|y\| K - \|y\|$ without |
    | mread | $\|x\| + \|W\| + \|b\|$ |
    | mwrite | $\|y\|$ |
    | params | `k`, `s`: kernel, stride (int when equal on both axes, else a pair); `nobias` |
    """  # NOQA
    x, W, b = _split_bias(in_data)
    c_out, out_h, out_w = W.shape[:3]
    n_out = x.shape[0] * c_out * out_h * out_w
    n_terms = prod(W.shape[3:])
    has_bias = b is not None
    flops = _accumulate_flops(n_out * n_terms, n_out, has_bias,
                              kwargs.get('fma_1flop', False))
    params = {'k': compact(W.shape[4:]), 's': compact((func.sy, func.sx)),
              'nobias': not has_bias}
    return (flops, total_size((x, W, b)), n_out, params)


def scratch_local_conv2d(func: LocalConvolution2DFunction, in_data,
                         **kwargs):
    r"""Each window's flattened copy of x and its product with W.

    NumPy and CuPy: for each output position, `reshape(x[..., rows,
    cols], (-1, F))` ($N F$ elements, $F = c_{in} k_h k_w$; a copy unless
    the window's axes merge) and `dot` with W's slice ($N c_{out}$, freed
    once written into y). The previous window's copy is still referenced
    when the next is made: two copies alive from the second position on.
    Peak above y: $\max(2 N F, N F + N c_{out})$ elements ($N F + N
    c_{out}$ for a single position).
    """
    x, W = in_data[:2]
    n = x.shape[0]
    kh, kw = W.shape[4:6]
    features = W.shape[3] * kh * kw
    isz = x.dtype.itemsize
    window = (n, x.shape[1], kh, kw)
    view = reshape_view(window, strides_of(x), (n, features))
    copy = n * features * isz if view is None else dot_copies(
        (n, features), view, isz)
    product = n * W.shape[0] * numpy.result_type(x.dtype, W.dtype).itemsize
    twice = 2 * copy if W.shape[1] * W.shape[2] > 1 else 0
    return max(twice, copy + product)


def calc_embed_id(func: EmbedIDFunction, in_data, **kwargs):
    r"""EmbedIDFunction

    $$y_{\ldots,:} = W_{x_{\ldots},:}$$

    A gather of one row of W (of length $D$ = `W.shape[1]`) per index: no
    arithmetic. The indices are read, and so are the rows they select; as
    index values are not looked at, the rows are assumed distinct, capped
    by the $V$ = `W.shape[0]` rows of W. With `ignore_label`, each index is
    compared with it (1 FLOP) and the label is a constant read once. Bytes
    are exact: the indices in their integer dtype, the rows (and the
    output) in W's.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $0$, or $\|x\|$ with `ignore_label` |
    | mread | $\|x\| + \min(\|x\|, V) D$ (+ 1 with `ignore_label`) |
    | mwrite | $\|x\| D$ |
    | params | `ignore_label` (only when set) |
    """
    x, W = in_data
    n_rows, dim = W.shape
    mread = size_of(x) + elements(min(x.size, n_rows) * dim, W)
    params = {}
    flops = 0
    if func.ignore_label is not None:
        flops = x.size
        mread += elements(1, x)
        params['ignore_label'] = int(func.ignore_label)
    return (flops, mread, elements(x.size * dim, W), params)


def scratch_embed_id(func: EmbedIDFunction, in_data, **kwargs):
    r"""The gathered rows before the ignored ones are zeroed; index copies.

    NumPy: `W[x]` with labels that are not int64 casts them to int64 in
    its iterator's buffer ($8 \min(8192, \|x\|)$ bytes, freed once the
    rows are gathered), counted as $8 \|x\|$: an upper bound from 8192
    labels on that keeps the figure a line in the batch size. With an
    `ignore_label`: the mask (bool), `where(mask, 0, x)` (x's dtype), its
    int64 copy and the gathered rows ($\|x\| D$ elements), then
    `where(mask[..., None], 0, rows)` makes y beside the rows: $\|x\| D$
    elements + $\|x\|$ bytes above y.

    CuPy: none without `ignore_label` (`take` needs no copy); with it, the
    gathered rows and the mask as NumPy's.
    """
    x, W = in_data
    # NumPy's indexing iterator casts the labels in a buffer of at most
    # 8192: counted as all of them, a bound that stays a line in the batch
    copy = 0 if x.dtype == numpy.intp else 8 * x.size
    if func.ignore_label is None:
        return 0 if kwargs.get('backend', 'numpy') == 'cupy' else copy
    rows = x.size * W.shape[1] * W.dtype.itemsize
    return x.size + rows


def calc_shift(func: Shift, in_data, **kwargs):
    r"""Shift

    $$y_{n,c,i,j} = x_{n,c,i + \delta^y_c d_y, j + \delta^x_c d_x}$$

    Each channel group is shifted by a fixed offset inside the $k_h \times
    k_w$ window (zeros enter at the borders): pure data movement, with the
    output shaped as x.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $0$ |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | `k`, `d`: window size and dilation (int when equal on both axes, else a pair), as 0.1.2 named them |
    """  # NOQA
    x, = in_data
    params = {'k': compact((func.kh, func.kw)),
              'd': compact((func.dy, func.dx))}
    return (0, x.size, x.size, params)


def scratch_shift(func: Shift, in_data, **kwargs):
    r"""The padded copy of x the shifted groups are sliced from.

    NumPy: `numpy.pad` by $k_h / 2 \cdot \|d_y\|$ and $k_w / 2 \cdot
    \|d_x\|$ on each side, alive while `concatenate` makes y. CuPy: none
    (one kernel writes y).
    """
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    x, = in_data
    b, c, h, w = x.shape
    py = func.kh // 2 * abs(func.dy)
    px = func.kw // 2 * abs(func.dx)
    return b * c * (h + 2 * py) * (w + 2 * px) * x.dtype.itemsize


def _conv_grad_w_cost(x, gy, ksize, stride, pad, dilate, groups, fma):
    """Cost of the weight gradient of an N-dimensional convolution: ``x``
    is the convolution's input, ``gy`` the gradient of its output."""
    n_w = gy.shape[1] * (x.shape[1] // groups) * prod(ksize)
    macs = conv_macs(x.shape[0], x.shape[1], gy.shape[1], groups, ksize,
                     gy.shape[2:])
    params = _conv_params(ksize, stride, pad, dilate, groups, True)
    del params['nobias']
    return (_accumulate_flops(macs, n_w, False, fma), total_size((x, gy)),
            n_w, params)


def calc_conv2d_grad_w(func: Convolution2DGradW, in_data, **kwargs):
    r"""Convolution2DGradW

    $$g_{W,o,c,u,v} = \sum_{n,i,j} g_{y,n,o,i,j} \, x_{n,c,i s_y + u d_y - p_h, j s_x + v d_x - p_w}$$

    The weight gradient of a convolution (also applied for the weight
    gradient of a deconvolution, with the roles of x and gy swapped). It
    pairs the same inputs and weights as the forward convolution: each of
    the $\|g_W\| = c_{out} (c_{in} / groups) k_h k_w$ elements sums
    $M = N h_{out} w_{out}$ products, $\|g_W\| M$ multiply-adds in all,
    exactly the forward's ($\|y\| K$; padded positions count as in the
    forward). Without FMA the first product of each sum needs no addition.
    With the input gradient (a Deconvolution2DFunction with the same count
    of products) a convolution's backward costs twice its forward
    multiply-adds with FMA, plus the bias gradient (a Sum).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\|g_W\| M$ |
    | FLOPs (no FMA) | $\|g_W\| (2M - 1)$ |
    | FLOPs (torch) | $2 \|g_W\| M$ |
    | mread | $\|x\| + \|g_y\|$ |
    | mwrite | $\|g_W\|$ |
    | params | `k`, `s`, `p`, `d`: kernel, stride, padding, dilation of the convolution (int when equal on both axes, else a pair); `groups` |
    """  # NOQA
    x, gy = in_data
    return _conv_grad_w_cost(x, gy, (func.kh, func.kw), (func.sy, func.sx),
                             (func.ph, func.pw), (func.dy, func.dx),
                             func.groups, product_convention(kwargs))


def scratch_conv2d_grad_w(func: Convolution2DGradW, in_data, **kwargs):
    r"""im2col's padded copy and columns of x, tensordot's copies.

    NumPy (`groups` 1): `im2col_cpu` of x as in Convolution2DFunction ($P$
    padded and $C$ column elements alive together), then
    `numpy.tensordot(gy, col, ((0, 2, 3), (0, 4, 5)))` makes $g_y$ a
    $(c_{out}, N h_{out} w_{out})$ matrix and the columns a $(N h_{out}
    w_{out}, c_{in} k_h k_w)$ one: each a copy ($\|g_y\|$, $C$) unless
    $N = 1$; then writes $g_W$ (the output). Peak above what the call leaves
    ($g_W$): $\max(P + C - \|g_W\|, C + \text{copies})$ elements; a $g_y$
    neither C- nor F-contiguous with an axis of size 1 is first copied
    C-contiguous (`numpy.ascontiguousarray`, $\|g_y\|$ more throughout).
    `groups` > 1: the columns reshaped to $(G, c_{in} k_h k_w / G, N
    h_{out} w_{out})$ (a copy that replaces them unless $N = 1$) and $g_y$
    to $(G, c_{out} / G, N h_{out} w_{out})$ (a copy unless its axes
    merge) for a batched matmul.

    CuPy: with cuDNN (as for Convolution2DFunction) the workspace, counted
    as Chainer's configured maximum; without, the columns and the same
    copies (no padded copy), as written.
    """
    x, gy = in_data
    return _conv_grad_w_scratch(
        func, x, gy, (func.kh, func.kw), (func.sy, func.sx),
        (func.ph, func.pw), (func.dy, func.dx),
        kwargs.get('backend', 'numpy'))


def _merges(x, order, newshape):
    """Whether ``x.transpose(order).reshape(newshape)`` is a view."""
    shape, strides, _ = _operand(x)
    return reshape_view([shape[i] for i in order],
                        [strides[i] for i in order], newshape) is not None


def _grouped_copy(x, groups):
    """Bytes of the copy a grouped convolution's NumPy path makes of ``x``
    (or gy) transposed to (channels, N, ...) and reshaped to (G, channels /
    G, N ...): 0 when the axes merge in place."""
    shape = x.shape
    order = (1, 0) + tuple(range(2, len(shape)))
    newshape = (groups, shape[1] // groups, shape[0] * prod(shape[2:]))
    return 0 if _merges(x, order, newshape) else x.size * x.dtype.itemsize


def _conv_grad_w_scratch(func, x, gy, ksize, stride, pad, dilate, backend):
    """Scratch of an N-d convolution's weight gradient (see
    scratch_conv2d_grad_w)."""
    wtype = numpy.dtype(func.W_dtype)
    if backend == 'cupy' and uses_cudnn() and not func.cover_all \
            and x.dtype == wtype:
        return cudnn_workspace()
    isz = x.dtype.itemsize
    nd = len(ksize)
    padded, col = im2col_bytes(x.shape, ksize, stride, pad, isz,
                               func.cover_all, dilate)
    col_shape = tuple(x.shape[:2]) + tuple(ksize) + tuple(gy.shape[2:])
    n_w = gy.shape[1] * (x.shape[1] // func.groups) * prod(ksize)
    rtype = numpy.result_type(x.dtype, gy.dtype)
    prod_bytes = n_w * rtype.itemsize
    cast = n_w * wtype.itemsize if rtype != wtype else 0
    out = cast or prod_bytes
    if backend == 'cupy':
        padded = 0
    if func.groups > 1:
        # the columns reshaped to (G, ., N out...), a copy that replaces
        # them (batch > 1); gy reshaped to (G, c_out / G, N out...)
        copy = col if x.shape[0] > 1 else 0
        return max(padded + col, col + copy,
                   (copy or col) + _grouped_copy(gy, func.groups)
                   + prod_bytes + cast) - out
    gy_operand, contig = _operand(gy), 0
    if backend == 'numpy' and 1 in gy.shape and not _contiguous(gy):
        # Chainer copies such a gy with numpy.ascontiguousarray first
        contig = gy.size * gy.dtype.itemsize
        gy_operand = _col_operand(gy.shape, gy.dtype.itemsize)
    copy = tensordot_copies(
        gy_operand, (0,) + tuple(range(2, nd + 2)),
        _col_operand(col_shape, isz),
        (0,) + tuple(range(nd + 2, 2 * nd + 2)))
    return contig + max(padded + col, col + copy + prod_bytes,
                        col + prod_bytes + cast) - out


def calc_conv_nd_grad_w(func: ConvolutionNDGradW, in_data, **kwargs):
    r"""ConvolutionNDGradW

    $$g_{W,o,c,\mathbf{u}} = \sum_{n,\mathbf{i}} g_{y,n,o,\mathbf{i}} \, x_{n,c,\mathbf{i} \mathbf{s} + \mathbf{u} \mathbf{d} - \mathbf{p}}$$

    Same model as Convolution2DGradW for any number of spatial axes (the
    weight gradient of ConvolutionND and DeconvolutionND): each of the
    $\|g_W\| = c_{out} (c_{in} / groups) \prod_i k_i$ elements sums
    $M = N \prod_i out_i$ products, as many multiply-adds as the forward
    convolution.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $\|g_W\| M$ |
    | FLOPs (no FMA) | $\|g_W\| (2M - 1)$ |
    | FLOPs (torch) | $2 \|g_W\| M$ |
    | mread | $\|x\| + \|g_y\|$ |
    | mwrite | $\|g_W\|$ |
    | params | `k`, `s`, `p`, `d`: kernel, stride, padding, dilation of the convolution (int when equal on every axis, else a tuple); `groups` |
    """  # NOQA
    x, gy = in_data
    return _conv_grad_w_cost(x, gy, tuple(func.ksize), func.stride, func.pad,
                             func.dilate, func.groups,
                             product_convention(kwargs))


def scratch_conv_nd_grad_w(func: ConvolutionNDGradW, in_data, **kwargs):
    r"""im2col's padded copy and columns of x, tensordot's copies.

    As Convolution2DGradW's along every spatial axis: $P + C$ while
    `im2col_nd_cpu` runs, then the columns with tensordot's copies of
    $g_y$ and of the columns (each unless $N = 1$) and $g_W$. CuPy: cuDNN's
    workspace (Chainer's configured maximum) or the columns and copies.
    """
    x, gy = in_data
    return _conv_grad_w_scratch(
        func, x, gy, tuple(func.ksize), tuple(func.stride), tuple(func.pad),
        tuple(func.dilate), kwargs.get('backend', 'numpy'))


def calc_linear_grad_data(func: LinearGradData, in_data, **kwargs):
    r"""LinearGradData

    $$g_x = g_y W$$

    The input gradient of LinearFunction: with $out, in$ = `W.shape` and
    $B = \|g_y\| / out$ rows, $B \cdot in$ dot products of length $out$.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $B \cdot in \cdot out$ |
    | FLOPs (no FMA) | $B \cdot in (2 out - 1)$ |
    | FLOPs (torch) | $2 B \cdot in \cdot out$ |
    | mread | $\|W\| + \|g_y\|$ |
    | mwrite | $B \cdot in$ |
    | params | none |
    """
    W, gy = in_data
    n_out, n_in = W.shape
    rows = gy.size // n_out if n_out else 0
    return (dot_flops(rows * n_in, n_out, product_convention(kwargs)),
            total_size((W, gy)), rows * n_in, {})


def scratch_linear_grad_data(func: LinearGradData, in_data, **kwargs):
    r"""Copies of a non-contiguous operand.

    NumPy: `gy.dot(W)` writes $g_x$ directly: none for contiguous
    operands; a gy neither C- nor F-contiguous is copied ($\|g_y\|$), as is
    a W BLAS cannot take. BLAS's own buffers are not counted.

    CuPy: none.
    """
    W, gy = in_data
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    return _linear_input_copy(gy) + _dot_operand_copy(W)


def calc_linear_grad_weight(func: LinearGradWeight, in_data, **kwargs):
    r"""LinearGradWeight

    $$g_W = g_y^T x$$

    The weight gradient of LinearFunction: with $B$ = `x.shape[0]` rows,
    $in = \|x\| / B$ and $out = \|g_y\| / B$, $out \cdot in$ dot products
    of length $B$. Written in W's dtype.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $out \cdot in \cdot B$ |
    | FLOPs (no FMA) | $out \cdot in (2B - 1)$ |
    | FLOPs (torch) | $2 \, out \cdot in \cdot B$ |
    | mread | $\|x\| + \|g_y\|$ |
    | mwrite | $out \cdot in$ |
    | params | none |
    """
    x, gy = in_data
    rows = x.shape[0]
    n_in = x.size // rows if rows else 0
    n_out = gy.size // rows if rows else 0
    return (dot_flops(n_out * n_in, rows, product_convention(kwargs)),
            total_size((x, gy)), n_out * n_in, {})


def scratch_linear_grad_weight(func: LinearGradWeight, in_data, **kwargs):
    r"""Copies of a non-contiguous operand.

    NumPy: `gy.T.dot(x)` writes $g_W$ directly (gy.T is a Fortran-ordered
    view): none for contiguous operands; a gy neither C- nor F-contiguous
    is copied ($\|g_y\|$), as is an x BLAS cannot take. BLAS's own buffers
    are not counted.

    CuPy: none.
    """
    x, gy = in_data
    if kwargs.get('backend', 'numpy') == 'cupy':
        return 0
    return _linear_input_copy(gy) + _dot_operand_copy(x)


def calc_bilinear_grad(func: BilinearFunctionGrad, in_data, **kwargs):
    r"""BilinearFunctionGrad

    $$g_{W,jkl} = \sum_i e^1_{ij} e^2_{ik} g_{y,il}, \quad g_{e^1,ij} = \sum_k e^2_{ik} \sum_l g_{y,il} W_{jkl} (+ \sum_l g_{y,il} V^1_{jl})$$

    The gradients of BilinearFunction, with $N, J, K, L$ as there and
    $\Lambda = L$ with the linear terms, else 0. The outer products
    $e^1_{ij} e^2_{ik}$ cost $NJK$ multiplications; $g_W$ is $JKL$ dot
    products of length $N$; $(g_y W)_{ijk}$ is $NJK$ dot products of
    length $L$; $g_{e^1}$ is $NJ$ dot products of length $K + \Lambda$
    and $g_{e^2}$ $NK$ of length $J + \Lambda$. With the linear terms,
    $g_{V^1}$ and $g_{V^2}$ are $JL$ and $KL$ dot products of length $N$
    and $g_b$ sums $N$ rows ($L (N - 1)$ additions). $D(n, m)$ is $n m$
    with FMA, $n (2m - 1)$ without.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $NJK + D(JKL, N) + D(NJK, L) + D(NJ, K + \Lambda) + D(NK, J + \Lambda)$ (+ $D(JL, N) + D(KL, N) + L (N - 1)$) |
    | mread | $\|e^1\| + \|e^2\| + \|W\| + \|g_y\|$ (+ $\|V^1\| + \|V^2\|$) |
    | mwrite | $\|e^1\| + \|e^2\| + \|W\|$ (+ $\|V^1\| + \|V^2\| + L$) |
    | params | `linear`: whether $V^1$, $V^2$, $b$ are used |
    """  # NOQA
    e1, e2, W = in_data[:3]
    linear = len(in_data) == 6
    fma = kwargs.get('fma_1flop', False)
    n = e1.shape[0]
    j = e1.size // n if n else 0
    k = e2.size // n if n else 0
    n_l = W.shape[2]
    lin = n_l if linear else 0
    flops = (n * j * k + dot_flops(j * k * n_l, n, fma)
             + dot_flops(n * j * k, n_l, fma)
             + dot_flops(n * j, k + lin, fma)
             + dot_flops(n * k, j + lin, fma))
    mwrite = e1.size + e2.size + W.size
    if linear:
        flops += (dot_flops(j * n_l, n, fma) + dot_flops(k * n_l, n, fma)
                  + n_l * max(0, n - 1))
        mwrite += in_data[3].size + in_data[4].size + n_l
    return (flops, total_size(in_data), mwrite, {'linear': linear})


def scratch_bilinear_grad(func: BilinearFunctionGrad, in_data, **kwargs):
    r"""The outer products, then $g_y W$ alive to the end.

    NumPy and CuPy: `einsum('ij,ik->jki')` makes the $NJK$ outer products,
    freed once `dot` has made $g_W$; `tensordot(gy, W, axes=(1, 2))` makes
    $(g_y W)_{ijk}$ ($NJK$, $W$ reshaped in place unless its axes do not
    merge: then a copy), alive until the call returns while the einsums
    make $g_{e^1}$ and $g_{e^2}$. With the linear terms, `gy.dot(V1.T)`
    ($NJ$) and then `gy.dot(V2.T)` ($NK$) are added into them. Peak above
    the gradients: $NJK + \max(NJ, NK)$ elements with the linear terms,
    $NJK$ without.
    """
    e1, e2, W = in_data[:3]
    gy = in_data[-1]
    n, j, k, n_l = _bilinear_dims(in_data)
    isz = numpy.result_type(gy.dtype, W.dtype).itemsize
    gy_w = n * j * k * isz
    copies = tensordot_copies((gy.shape, strides_of(gy), gy.dtype.itemsize),
                              (1,), (W.shape, strides_of(W),
                                     W.dtype.itemsize), (2,))
    linear = max(n * j, n * k) * isz if len(in_data) == 6 else 0
    outer = n * j * k * numpy.result_type(e1.dtype, e2.dtype).itemsize
    return max(outer, gy_w + copies, gy_w + linear)


def calc_embed_id_grad(func: EmbedIDGrad, in_data, **kwargs):
    r"""EmbedIDGrad

    $$g_{W,v,:} = \sum_{x_{\ldots} = v} g_{y,\ldots,:}$$

    The weight gradient of EmbedIDFunction: the $\|x\|$ rows of $g_y$ (of
    length $D$) are added into the rows of $g_W$ ($V \times D$) their ids
    select; $g_W$ is written whole (zero where no id points). Which ids
    coincide depends on their values, which are not looked at: as in the
    forward, ids are assumed distinct as far as the $V$ rows allow, so only
    the rows beyond $V$ must be added to an earlier one. With
    `ignore_label`, each id is compared with it (1 FLOP) and the label is
    a constant read once (ignored ids are not known: none is assumed).

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\max(0, \|x\| - V) D$ (+ $\|x\|$ with `ignore_label`) |
    | mread | $\|x\| + \|g_y\|$ (+ 1 with `ignore_label`) |
    | mwrite | $V D$ |
    | params | `ignore_label` (only when set) |
    """
    x, gy = in_data
    n_rows, dim = func.w_shape
    flops = max(0, x.size - n_rows) * dim
    mread = size_of(x) + size_of(gy)
    params = {}
    if func.ignore_label is not None:
        flops += x.size
        mread += elements(1, x)
        params['ignore_label'] = int(func.ignore_label)
    return (flops, mread, elements(n_rows * dim, gy), params)
