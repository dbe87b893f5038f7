"""Registry of the built-in cost calculators, and the helpers they share.

A cost calculator is a plain function ``calc_xxx(func, in_data, **kwargs)``
living in one of the modules of this package.  The annotation of its first
parameter names the Chainer function type it estimates: either the class
itself or a dotted import path (for classes that only some Chainer versions
have), or a tuple of those for a calculator that serves a family of classes
with the same logic.  Importing this package walks its modules and registers
every ``calc_*`` function it finds, so adding a calculator never means
editing a list.  The resulting mapping is :data:`calculators`.

Keyword arguments a calculator receives from the hook: ``fma_1flop`` (bool;
absent means False, as in 0.1.2) and ``out_shapes`` (the shapes of the
outputs, or None when they are not known, e.g. in a direct call).  Building
``out_shapes`` costs a tuple on every call, so the hook leaves it out for
the built-in calculators that never read it (:data:`skips_out_shapes`); a
built-in calculator that reads it says so with :func:`reads_out_shapes`.
Every other calculator, custom ones included, receives it.  A hook made
with ``flop_convention='torch'`` also passes ``flop_convention='torch'``
(absent otherwise): the calculators of convolutions and matrix products
then count as PyTorch's ``FlopCounterMode`` does (see
:func:`product_convention`).
"""

import functools
import importlib
import inspect
import numbers
import pkgutil
import sys
import warnings
# Aliased: importing this package's submodule ``math`` rebinds the name
# ``math`` here.
from math import prod as _c_prod
from typing import NamedTuple

import chainer
import numpy

from chainer_computational_cost.core import checks


_NDARRAY = numpy.ndarray


class Cost(NamedTuple):
    """What a calculator estimates for one function call.

    ``flops``, ``mread`` and ``mwrite`` count *elements* (the hook turns
    memory figures into bytes); ``params`` holds the function's
    hyper-parameters to show in reports.  Being a NamedTuple it is still the
    plain 4-tuple ``(flops, mread, mwrite, params)`` users expect.
    """

    flops: int
    mread: int
    mwrite: int
    params: dict


def _whole(name, value):
    """``value`` as an int >= 0, for :class:`Elements`."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError('Elements: {} must be an integer, got {!r}'.format(
            name, value))
    if value < 0:
        raise ValueError('Elements: {} must be >= 0, got {!r}'.format(
            name, value))
    return int(value)


class Elements(int):
    """An element count that also knows how many bytes those elements take.

    It *is* the int count (so a calculator's result still reads as element
    counts, as in 0.1.2), and carries ``nbytes``, summed over the arrays it
    was counted from, each with its own dtype.  ``Elements + Elements`` and
    ``Elements * int`` keep the bytes exact; adding a plain int gives a plain
    int, whose bytes the hook then derives from an itemsize it guesses (the
    first input's for reads, the first output's for writes).
    """

    def __new__(cls, count, nbytes):
        if type(count) is not int or type(nbytes) is not int or \
                nbytes < 0:
            # (NumPy integers, from a shape's product: plain ints here, so
            # that every report, JSON's too, holds Python numbers)
            count = _whole('count', count)
            nbytes = _whole('nbytes', nbytes)
        self = int.__new__(cls, count)
        self.nbytes = nbytes
        return self

    def __add__(self, other):
        if type(other) is Elements or isinstance(other, Elements):
            return Elements(int(self) + int(other),
                            self.nbytes + other.nbytes)
        if type(other) is int and other == 0:  # sum() starts from 0
            return self
        return int(self) + other

    __radd__ = __add__

    def __mul__(self, other):
        if isinstance(other, int) and not isinstance(other, Elements):
            return Elements(int(self) * other, self.nbytes * other)
        return int(self) * other

    __rmul__ = __mul__

    def __repr__(self):
        return 'Elements({}, nbytes={})'.format(int(self), self.nbytes)

    def __reduce__(self):
        return Elements, (int(self), self.nbytes)


class IndexArray(object):
    """An index array in a call's params (GetItem's, ScatterAdd's
    ``slices``), by its shape and dtype: the array itself is the user's,
    which a record would keep alive (device memory for a GPU array) and
    whose later changes it would show."""

    __slots__ = ('shape', 'dtype')

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = numpy.dtype(dtype)

    @classmethod
    def of(cls, array):
        """The IndexArray of ``array`` (its shape and dtype only)."""
        return cls(array.shape, array.dtype)

    def __eq__(self, other):
        if type(other) is not IndexArray:
            return NotImplemented
        return (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))

    def __repr__(self):
        return 'array(shape={}, dtype={})'.format(self.shape, self.dtype)

    __str__ = __repr__

    def __reduce__(self):
        return IndexArray, (self.shape, self.dtype)


def itemsize_of(x, default=None):
    """Bytes per element of an array (or dtype); ``default`` for a Python
    scalar or None."""
    if isinstance(x, numpy.dtype):
        return x.itemsize
    dtype = getattr(x, 'dtype', None)
    if dtype is None:
        return default
    return dtype.itemsize


def elements(count, like):
    """``count`` elements of the dtype of ``like`` (an array or a dtype), as
    :class:`Elements`; a plain int when ``like`` has no dtype."""
    if type(like) is _NDARRAY:  # the usual case
        return Elements(count, count * like.itemsize)
    itemsize = itemsize_of(like)
    if itemsize is None:
        return int(count)
    return Elements(count, count * itemsize)


def resolve_table(table):
    """A family's table (target -> row, targets as classes or dotted names)
    keyed by the classes that exist under the installed Chainer."""
    out = {}
    for target, row in table.items():
        cls = resolve_target(target)
        if cls is not None:
            out[cls] = row
    return out


def fill_doc(doc, fields):
    """A family calculator's docstring for one class: every ``<<key>>`` is
    replaced by ``fields[key]`` (``<<name>>`` by the class name).  (Not
    ``str.format``: LaTeX is full of braces, and ``$`` delimits math.)"""
    for key, value in fields.items():
        doc = doc.replace('<<{}>>'.format(key), str(value))
    return doc


def doc_times(k, name):
    """``k |name|`` as a docstring term (``|name|`` for 1): for the tables
    of family calculators."""
    size = r'\|{}\|'.format(name)
    return size if k == 1 else '{} {}'.format(k, size)


def doc_flops_cells(flops, fma, name, more=''):
    """The cells of a docstring table's FLOPs row after ``| FLOPs``: one
    row, or an FMA and a no-FMA row when fusing multiply-adds changes the
    count (``fma`` None or equal to ``flops``: it does not).  The figure is
    ``k |name|`` followed by the formula ``more``."""
    if fma is None or fma == flops:
        return ' | ${}{}$ |'.format(doc_times(flops, name), more)
    return ' (FMA) | ${}{}$ |\n| FLOPs (no FMA) | ${}{}$ |'.format(
        doc_times(fma, name), more, doc_times(flops, name), more)


def lookup(table, cls):
    """The value of ``table`` for ``cls`` or its nearest base class listed
    in it (None if none is): how a subclass of a supported class finds its
    calculator, or its row of a family's formula table."""
    value = table.get(cls)  # the usual case: the class itself is listed
    if value is not None:
        return value
    for base in cls.__mro__[1:]:
        value = table.get(base)
        if value is not None:
            return value
    return None


#: Every figure must stay below this (reports hold 64-bit integers, and
#: anything near it is a calculator bug).
LIMIT = 2 ** 63

#: Function type -> calculator, for every built-in calculator whose target
#: exists in the installed Chainer.
calculators = {}


def calculator_for(cls, custom=None, table=None):
    """The calculator that costs a call of the class ``cls``: a custom one
    (``custom``: class -> calculator), else a built-in one (``table``,
    :data:`calculators` by default), for ``cls`` or, failing that, its
    nearest base class that has either; None if no class of its MRO has
    one.  The one rule the hook and the Trainer extension resolve
    calculators by, function classes and update rules alike."""
    table = calculators if table is None else table
    for c in cls.__mro__:
        found = (custom and custom.get(c)) or table.get(c)
        if found is not None:
            return found
    return None


def time_family(type_name):
    """The family of a calibration's fits that predicts the time of calls
    of the function class named ``type_name``: the ``TIME_FAMILY`` its
    built-in calculator's module declares (None for a class without a
    built-in calculator, or whose module declares none), whichever
    calculator costs it now."""
    return _time_families.get(type_name)


#: Class name -> time family, of the built-in calculators (see _discover).
_time_families = {}

#: The built-in calculators, whose ``params`` the hook stores uncopied
#: (they return fresh dicts); a calculator registered by the user later is
#: not one of them.
built_in = set()


#: Update rule or optimizer hook class -> calculator (the update phase, see
#: ``cost_calculators.optimizer``): a
#: target that is not a function type is registered here.
update_calculators = {}


#: Function type -> scratch function, for every built-in one whose target
#: exists in the installed Chainer (see :func:`scratch_of`).
scratches = {}

#: The backends a scratch function is asked about.
BACKENDS = ('numpy', 'cupy')


def scratch_of(node, in_data, out_shapes=None, backend='numpy', **kwargs):
    """Bytes one call of ``node`` allocates and frees inside itself
    (im2col's columns, masks, temporaries, cuDNN's workspace): memory that
    is never an output, yet counts towards the peak while the call runs.

    Precisely: the call's peak memory above what is alive right after it
    returns (its outputs' buffers and the arrays the node keeps), so the
    highest memory during the call is what is alive after it plus this.
    A temporary freed before the output is made may count less than its
    size (the output then takes some of the room it left).

    A scratch function is a module-level ``scratch_xxx(func, in_data,
    **kwargs)`` beside the calculators, registered by the annotation of its
    first parameter as a calculator is; it receives ``out_shapes`` and
    ``backend`` (``'numpy'`` or ``'cupy'``) and returns an int of bytes.
    Its docstring (first line a summary, then Markdown saying what each
    backend allocates) goes into DETAILS.md under the calculator's entry.
    A function type without one has no scratch counted (0).  ``kwargs``
    go to the scratch function too (an update record's: ``timing``,
    ``fp32_grad``, see ``cost_calculators.optimizer``).

    ``backward=True`` asks for the scratch of an old-style Function's
    backward (which runs no function call of its own): only a scratch
    function marked with :func:`old_style_backward` has one; 0 for any
    other.
    """
    func = function_object(node)
    cls = type(func)
    scratch = scratches.get(cls)
    if scratch is None:
        for base in cls.__mro__[1:]:
            scratch = scratches.get(base)
            if scratch is not None:
                break
        else:
            return 0
    if kwargs.get('backward') and not getattr(scratch, 'backward', False):
        return 0
    nbytes = scratch(func, in_data, out_shapes=out_shapes, backend=backend,
                     **kwargs)
    if not checks.is_int(nbytes) or nbytes < 0:
        raise ValueError('scratch function {} for {} returned {!r}; a '
                         'number of bytes >= 0 is expected'.format(
                             scratch.__qualname__, cls.__name__, nbytes))
    return int(nbytes)


def old_style_backward(scratch):
    """Mark a scratch function of an old-style ``chainer.Function`` as
    giving its backward's scratch too, when called with ``backward=True``
    (its peak above what is alive when the backward returns: the inputs,
    the arrays the Function keeps, the gradients given and those it
    returns)."""
    scratch.backward = True
    return scratch


# Shared scratch helpers: the temporaries of Chainer's code paths, from
# shapes, strides and dtypes only.

#: CuPy's default cap on cuDNN's workspace (``cupy.cuda.cudnn``), what
#: ``chainer.backends.cuda.get_max_workspace_size()`` gives unless changed.
CUDNN_WORKSPACE = 8 * 2 ** 20


def uses_cudnn(level='>=auto'):
    """Whether ``chainer.should_use_cudnn(level)`` would be true on a GPU
    with cuDNN under the current ``chainer.config.use_cudnn`` (this machine
    needs neither)."""
    use = chainer.config.use_cudnn
    return use == 'always' or (use == 'auto' and level == '>=auto')


def cudnn_workspace():
    """Bytes cuDNN's workspace may take in one call: Chainer's configured
    maximum (``get_max_workspace_size()``), CuPy's default without cuDNN
    here."""
    if chainer.backends.cuda.cudnn_enabled:
        return int(chainer.backends.cuda.get_max_workspace_size())
    return CUDNN_WORKSPACE


#: NumPy (>= 1.13) writes ``a + b`` into a temporary operand instead of a
#: new array ("temporary elision") when it holds at least this many bytes.
ELIDE_BYTES = 256 * 1024


def elides(nbytes):
    """Whether NumPy reuses a temporary of ``nbytes`` bytes as the result
    of a binary operation on it (see :data:`ELIDE_BYTES`)."""
    return nbytes >= ELIDE_BYTES


def c_strides(shape, itemsize):
    """Strides of a C-contiguous array of ``shape``."""
    strides, step = [], itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def strides_of(x):
    """``x``'s strides (a C-contiguous array's for an object without)."""
    strides = getattr(x, 'strides', None)
    if strides is None:
        return c_strides(x.shape, x.dtype.itemsize)
    return tuple(strides)


def reshape_view(shape, strides, newshape):
    """The strides of ``a.reshape(newshape)`` when NumPy (or CuPy) can make
    it a view of ``a`` (``shape``, ``strides``), else None: it copies.
    The merge rule of NumPy's ``_attempt_nocopy_reshape``."""
    if prod(shape) == 0:
        return c_strides(newshape, 1)
    old = [(d, s) for d, s in zip(shape, strides) if d != 1]
    dims = [d for d, _ in old]
    ostr = [s for _, s in old]
    new = list(newshape)
    out = [0] * len(new)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new) and oi < len(dims):
        np_, op = new[ni], dims[oi]
        while np_ != op:
            if np_ < op:
                np_ *= new[nj]
                nj += 1
            else:
                op *= dims[oj]
                oj += 1
        for ok in range(oi, oj - 1):
            if ostr[ok] != dims[ok + 1] * ostr[ok + 1]:
                return None
        out[nj - 1] = ostr[oj - 1]
        for nk in range(nj - 1, ni, -1):
            out[nk - 1] = out[nk] * new[nk]
        ni, oi = nj, oj
        nj, oj = nj + 1, oj + 1
    last = out[ni - 1] if ni >= 1 else 0
    for nk in range(ni, len(new)):
        out[nk] = last
    return tuple(out)


def _c_contiguous(shape, strides, itemsize):
    expected = itemsize
    for d, s in zip(reversed(shape), reversed(strides)):
        if d != 1 and s != expected:
            return False
        expected *= d
    return True


def contiguous(shape, strides, itemsize):
    """Whether an array of ``shape``, ``strides`` and ``itemsize`` is C- or
    F-contiguous, as NumPy's flags say (an axis of length 1 may have any
    stride; an empty array is)."""
    shape, strides = tuple(shape), tuple(strides)
    return (0 in shape or _c_contiguous(shape, strides, itemsize) or
            _c_contiguous(shape[::-1], strides[::-1], itemsize))


def _blasable(shape, strides, itemsize):
    """Whether ``numpy.dot`` hands a 2-d operand to BLAS as it is, rather
    than copying it first: NumPy 1.x's dot copies any operand that is
    neither C- nor F-contiguous, a column slice ``h[:, :k]`` (rows of the
    right stride apart, which BLAS could take) included."""
    return contiguous(shape, strides, itemsize)


def dot_copies(shape, strides, itemsize):
    """Bytes ``numpy.dot`` copies a 2-d operand into before BLAS (0 when
    it is used as it is)."""
    if _blasable(shape, strides, itemsize):
        return 0
    return prod(shape) * itemsize


def tensordot_copies(a, a_axes, b, b_axes):
    """Bytes of the copies ``numpy.tensordot(a, b, (a_axes, b_axes))``
    makes of its operands (``a``, ``b``: ``(shape, strides, itemsize)``):
    each is transposed (summed axes last for ``a``, first for ``b``) and
    reshaped to a matrix, a copy unless the axes merge in place; a matrix
    BLAS cannot take is copied again by ``dot``.  Its result (the product
    matrix) is not included."""
    total = 0
    for (shape, strides, itemsize), axes, first in (
            (a, a_axes, False), (b, b_axes, True)):
        nd = len(shape)
        axes = [ax % nd for ax in axes]
        rest = [k for k in range(nd) if k not in axes]
        order = axes + rest if first else rest + axes
        t_shape = [shape[k] for k in order]
        t_strides = [strides[k] for k in order]
        summed = prod([shape[k] for k in axes])
        kept = prod([shape[k] for k in rest])
        mat = (summed, kept) if first else (kept, summed)
        view = reshape_view(t_shape, t_strides, mat)
        if view is None:
            total += prod(mat) * itemsize
        else:
            total += dot_copies(mat, view, itemsize)
    return total


def argmax_copy(x, axis):
    """Bytes of the copy ``numpy.argmax(x, axis)`` (or argmin) makes of
    ``x`` before reducing: ``axis`` is moved last (all of x is raveled for
    None) and the result copied unless it is C-contiguous."""
    ndim = len(x.shape)
    order = list(range(ndim))
    if axis is not None:
        axis %= ndim
        order = [k for k in order if k != axis] + [axis]
    shape = [x.shape[k] for k in order]
    strides = strides_of(x)
    flat = reshape_view(shape, [strides[k] for k in order], (prod(shape),))
    if flat is not None and (prod(shape) <= 1
                             or flat[0] == x.dtype.itemsize):
        return 0
    return prod(x.shape) * x.dtype.itemsize


def im2col_bytes(shape, ksize, stride, pad, itemsize, cover_all=False,
                 dilate=1):
    """``(padded, col)``: the bytes of the padded copy of an image of
    ``shape`` and of the columns Chainer's ``im2col_cpu`` /
    ``im2col_nd_cpu`` make of it (``numpy.pad`` by ``p`` before and
    ``p + s - 1`` after each spatial axis, then ``(n, c, k..., out...)``)."""
    nd = len(shape) - 2
    ksize, stride, pad, dilate = (as_tuple(v, nd) for v in
                                  (ksize, stride, pad, dilate))
    nc = shape[0] * shape[1]
    padded = nc * prod([d + 2 * p + s - 1
                        for d, p, s in zip(shape[2:], pad, stride)])
    outs = [conv_out_size(d, k, s, p, cover_all, di) for d, k, s, p, di
            in zip(shape[2:], ksize, stride, pad, dilate)]
    return padded * itemsize, nc * prod(ksize) * prod(outs) * itemsize


class Peak(object):
    """The highest total of a sequence of allocations and frees, in bytes:
    how a scratch function follows a code path's temporaries in order
    (``alloc`` when NumPy makes an array, ``free`` when its last reference
    goes).  ``peak`` is the highest ``now`` met."""

    def __init__(self):
        self.now = self.peak = 0

    def alloc(self, *nbytes):
        self.now += sum(nbytes)
        if self.now > self.peak:
            self.peak = self.now
        return self

    def free(self, *nbytes):
        self.now -= sum(nbytes)
        return self

    def op(self, a, out, elide=True):
        """A binary operation on a temporary of ``a`` bytes giving ``out``
        bytes, the temporary freed after: NumPy writes into the temporary
        when it is large enough and of the result's size (see
        :func:`elides`)."""
        if elide and a == out and elides(a):
            return self
        return self.alloc(out).free(a)


#: Built-in calculators that never read ``out_shapes``: every registered
#: one but those marked with :func:`reads_out_shapes` (set by discovery).
skips_out_shapes = set()

_reads_out_shapes = set()


def reads_out_shapes(calc):
    """Decorator marking a built-in calculator that reads the ``out_shapes``
    keyword, so that the hook passes it (see :data:`skips_out_shapes`)."""
    _reads_out_shapes.add(calc)
    return calc


def check_signature(func):
    """Tell whether ``func`` can be called as ``func(node, in_data, **kw)``.

    True for a callable with exactly three parameters, the last one being a
    ``**kwargs`` catch-all.
    """
    if not callable(func):
        return False
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return False
    if len(params) != 3:
        return False
    positional = (inspect.Parameter.POSITIONAL_ONLY,
                  inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return (params[0].kind in positional and params[1].kind in positional
            and params[2].kind == inspect.Parameter.VAR_KEYWORD)


def resolve_targets(target):
    """The classes a calculator target names that exist here (a list).

    ``target`` is a class, a dotted name, or a tuple of them (a family).
    """
    if isinstance(target, tuple):
        found = [resolve_target(t) for t in target]
        return [cls for cls in found if cls is not None]
    cls = resolve_target(target)
    return [] if cls is None else [cls]


def resolve_target(target):
    """Turn a calculator target into a class, or None if it does not exist.

    ``target`` is a class or a dotted path such as
    ``'chainer.functions.pooling.max_pooling_2d.MaxPooling2D'``.  A path that
    cannot be imported under the installed Chainer gives None.
    """
    if isinstance(target, type):
        return target
    if not isinstance(target, str):
        raise TypeError('a calculator target must be a class or a dotted '
                        'name string, got {!r}'.format(target))
    module_name, _, attr = target.rpartition('.')
    if not module_name:
        return None
    try:
        obj = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError):
        return None
    return obj if isinstance(obj, type) else None


_FUNCTION_TYPES = (chainer.FunctionNode, chainer.Function)


def register(target):
    """Decorator registering a built-in calculator for ``target``.

    ``target`` is a FunctionNode (or old-style Function) class or its dotted
    name, or a tuple of those (one calculator for a family); any other
    class (an update rule, an optimizer hook) goes to
    ``update_calculators``.  A name that
    cannot be imported is skipped: the calculator is simply inactive under
    this Chainer version (once the built-in calculators are discovered,
    with a ``UserWarning``: the user's name, maybe misspelt).  A function
    whose signature is not ``(func, in_data, **kwargs)`` is not registered
    and gives a ``UserWarning``; so does, once the built-in calculators
    are discovered, one that replaces another (the user's, for every
    hook).  A target that is a function (``@register`` written without
    its class) is a ``TypeError``.
    """
    if callable(target) and not isinstance(target, type):
        raise TypeError(
            'register takes the function class to cost, as in '
            '@register(MyFunction), got {!r}'.format(target))

    def decorator(calc):
        if not check_signature(calc):
            warnings.warn(
                'cost calculator {} is not registered: its signature must be '
                '(func, in_data, **kwargs)'.format(
                    getattr(calc, '__qualname__', calc)), UserWarning)
            return calc
        classes = []
        for name in target if isinstance(target, tuple) else (target,):
            cls = resolve_target(name)
            if cls is not None:
                classes.append(cls)
            elif built_in:  # (the user's name, maybe misspelt)
                warnings.warn(
                    'register: {!r} does not import (a module path and a '
                    'class name, dotted): nothing registered for it'.format(
                        name), UserWarning, stacklevel=2)
        for cls in classes:
            table = calculators if issubclass(cls, _FUNCTION_TYPES) else \
                update_calculators
            replaced = table.get(cls)
            if built_in and replaced is not None and replaced is not calc:
                # (after discovery: the user's, for every hook)
                warnings.warn(
                    'register: {} replaces {} as the calculator of {} for '
                    'every hook of this process'.format(
                        getattr(calc, '__qualname__', calc),
                        getattr(replaced, '__qualname__', replaced),
                        cls.__name__), UserWarning, stacklevel=2)
            table[cls] = calc
        return calc
    return decorator


def function_type(node):
    """The class a calculator is looked up by for a hooked function node.

    An old-style ``chainer.Function`` reaches hooks wrapped in a
    ``FunctionAdapter``; the wrapped function is what the user wrote and
    what carries the attributes, so it is the one that counts.
    """
    return type(function_object(node))


def function_object(node):
    """The object handed to a calculator: the node, or the old-style Function
    it adapts."""
    if isinstance(node, chainer.function.FunctionAdapter):
        return node.function
    return node


# Shared formula helpers: pure functions of numbers and shapes.

def prod(shape):
    """Number of elements of an array of the given shape (1 for ``()``)."""
    # math.prod is C-level; int() turns a NumPy integer product into a
    # Python int (shapes of arrays are Python ints already).
    return int(_c_prod(shape))


def size_of(x):
    """Number of elements of an array or scalar input (a scalar is 1), as
    :class:`Elements` of the array's own dtype.

    A scalar (Python or NumPy) gives a plain 1: it is a constant used in
    the dtype of the data it meets, whatever its own type.
    """
    if type(x) is _NDARRAY:  # the usual case: no failed lookups
        return Elements(x.size, x.nbytes)
    size = getattr(x, 'size', None)
    if size is None or isinstance(x, numpy.generic):
        return 1
    return Elements(size, x.nbytes if hasattr(x, 'nbytes')
                    else size * x.dtype.itemsize)


def total_size(arrays):
    """Sum of the element counts of a sequence of inputs (None counts 0),
    bytes exact per dtype where every input is an array."""
    # Summed as plain ints (Elements arithmetic runs Python code at each
    # step): the same result as adding the size_of of each input.
    count = nbytes = 0
    exact = True
    for x in arrays:
        if x is None:
            continue
        if type(x) is _NDARRAY:
            count += x.size
            nbytes += x.nbytes
            continue
        n = size_of(x)
        count += int(n)
        if type(n) is Elements:
            nbytes += n.nbytes
        else:
            exact = False  # a scalar: its bytes depend on what it meets
    return Elements(count, nbytes) if exact else count


def as_tuple(value, n):
    """``value`` as an ``n``-tuple of ints (ints are repeated)."""
    if isinstance(value, numbers.Integral):
        return (int(value),) * n
    return tuple(int(v) for v in value)


def broadcast_shape(*shapes):
    """Shape of the NumPy broadcast of arrays of the given shapes (assumed
    compatible)."""
    if shapes and shapes.count(shapes[0]) == len(shapes):
        return tuple(shapes[0])  # the usual case: nothing broadcasts
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(ndim):
        dims = [s[axis - ndim + len(s)] for s in shapes
                if axis - ndim + len(s) >= 0]
        not_one = [d for d in dims if d != 1]
        out.append(not_one[0] if not_one else 1)
    return tuple(out)


def reduced_shape(shape, axis, keepdims=False):
    """Shape of a reduction of ``shape`` over ``axis`` (None, int or
    tuple)."""
    ndim = len(shape)
    if axis is None:
        axes = set(range(ndim))
    elif isinstance(axis, numbers.Integral):
        axes = {int(axis) % ndim}
    else:
        axes = {int(a) % ndim for a in axis}
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


#: The ``flop_convention`` of PyTorch's ``torch.utils.flop_counter``.
TORCH = 'torch'

#: The values of the hook's ``flop_convention``: None is this package's
#: own model.
FLOP_CONVENTIONS = (None, TORCH)


def product_convention(kwargs):
    """How a calculator of convolutions and matrix products counts a
    multiply-add, from the keywords the hook passed: :data:`TORCH` when
    the hook has ``flop_convention='torch'`` (2 FLOPs each, a bias free, as
    ``FlopCounterMode`` counts), else the bool ``fma_1flop`` (absent:
    False).  :func:`dot_flops` takes either."""
    if kwargs.get('flop_convention') == TORCH:
        return TORCH
    return kwargs.get('fma_1flop', False)


def with_keywords(calc, extra):
    """``calc`` called with the keywords ``extra`` added to the hook's (how
    a hook with ``flop_convention`` passes it on, so that the usual call
    does not pay for it); named as ``calc`` for error messages."""
    @functools.wraps(calc)
    def call(func, in_data, **kwargs):
        kwargs.update(extra)
        return calc(func, in_data, **kwargs)
    return call


def dot_flops(n_out, k, fma):
    """FLOPs of ``n_out`` dot products of length ``k``: ``k`` multiply-adds
    each with FMA; ``k`` multiplications and ``k - 1`` additions without;
    ``2 k`` with ``fma`` :data:`TORCH` (see :func:`product_convention`)."""
    if k <= 0:
        return 0
    if fma == TORCH:
        return 2 * n_out * k
    return n_out * (k if fma else 2 * k - 1)


def compact(values):
    """An int when all ``values`` are equal, else the tuple of ints (how
    window sizes, strides and pads are shown in params)."""
    values = tuple(values)
    if values and values.count(values[0]) == len(values):
        return int(values[0])
    return tuple([int(v) for v in values])


def conv_out_size(size, k, s, p, cover_all=False, d=1):
    """Output length of a convolution or pooling window along one axis."""
    dk = k + (k - 1) * (d - 1)
    if cover_all:
        return (size + 2 * p - dk + s - 1) // s + 1
    return (size + 2 * p - dk) // s + 1


def deconv_out_size(size, k, s, p, cover_all=False, d=1):
    """Output length of a transposed convolution along one axis."""
    dk = (k - 1) * d + 1
    if cover_all:
        return s * (size - 1) + dk - s + 1 - 2 * p
    return s * (size - 1) + dk - 2 * p


def _taps_before(limit, size, k, s, d):
    """Number of pairs (input ``i < size``, tap ``u < k``) whose position
    ``i * s + u * d`` is below ``limit``.

    Inputs whose whole (dilated) window lies below ``limit`` count ``k``
    taps each; only the few whose window straddles it are counted one by
    one (at most ``ceil(((k - 1) d + 1) / s)`` of them).
    """
    span = (k - 1) * d + 1
    total, i = 0, 0
    if limit >= span:
        i = min(size, (limit - span) // s + 1)
        total = i * k
    while i < size:
        room = limit - i * s
        if room <= 0:
            break
        total += min(k, -(-room // d))
        i += 1
    return total


def scatter_axis(size, k, s, p, out, d=1):
    """Where the windows of a transposed convolution fall along one axis.

    Input ``i < size`` and tap ``u < k`` land on output position
    ``i * s + u * d - p``; positions outside ``[0, out)`` are dropped.
    Returns ``(hits, reached)``: the number of (input, tap) pairs that land
    inside the output, and the number of output positions at least one of
    them lands on. A sum of the hits into the outputs needs
    ``hits - reached`` additions (the first value reaching an output is
    only written). Shapes only: this is the col2im of a deconvolution, an
    unpooling or a pooling's gradient.
    """
    if size <= 0 or k <= 0 or out <= 0:
        return 0, 0
    hits = (_taps_before(out + p, size, k, s, d)
            - _taps_before(p, size, k, s, d))
    if d == 1 and k <= s:
        # windows side by side or with gaps: no position is hit twice
        reached = hits
    elif d == 1 or (s == 1 and size >= d):
        # consecutive windows overlap (or, dilated, interleave): they cover
        # [0, last] without a gap
        last = s * (size - 1) + (k - 1) * d
        reached = max(0, min(out + p, last + 1) - p)
    else:
        # dilated taps with a stride: few enough to enumerate (size * k)
        reached = len({i * s + u * d - p for i in range(size)
                       for u in range(k)} & set(range(out)))
    return hits, reached


def validate_cost(result, calc_name, type_name):
    """Check a calculator's result and return it as a :class:`Cost`.

    Accepts Python and numpy integers (stored as ``int``; an
    :class:`Elements` count keeps its bytes).  Anything else
    (wrong length, floats, negative counts, params that are not a dict) is a
    ``TypeError`` or ``ValueError`` naming the calculator and function type.
    ``calc_name`` is the calculator's name, or the calculator itself (its
    name is then only looked up for an error message).
    """
    # The hook checks the common result (a tuple of three non-negative ints
    # and a dict) with exact-type tests and only calls this for the rest.
    def where():  # only for an error message
        name = calc_name
        if not isinstance(name, str):
            name = getattr(name, '__qualname__', None) or repr(name)
        return 'cost calculator {} for {}'.format(name, type_name)

    if not isinstance(result, tuple) or len(result) != 4:
        raise TypeError(
            '{} must return a 4-tuple (flops, mread, mwrite, params), '
            'got {!r}'.format(where(), result))
    counts = []
    for field, value in zip(Cost._fields[:3], result[:3]):
        if not checks.is_int(value):
            raise TypeError('{} returned {}={!r} of type {}; an int is '
                            'expected'.format(where(), field, value,
                                              type(value).__name__))
        if value < 0:
            raise ValueError('{} returned a negative {}: {}'.format(
                where(), field, value))
        if value >= LIMIT:
            raise ValueError('{} returned {}={}, not below 2**63: no real '
                             'function costs that much'.format(
                                 where(), field, value))
        # Memory counts may carry their bytes (Elements); FLOPs never do.
        counts.append(value if type(value) is Elements and field != 'flops'
                      else int(value))
    params = result[3]
    if not isinstance(params, dict):
        raise TypeError('{} returned params of type {}; a dict is '
                        'expected'.format(where(), type(params).__name__))
    return Cost(counts[0], counts[1], counts[2], params)


def _first_param_annotation(func):
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return inspect.Parameter.empty
    return params[0].annotation if params else inspect.Parameter.empty


def _discover():
    # A tuple annotation registers the calculator for each class of it.
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(__name__ + '.' + info.name)
        for name, obj in sorted(vars(module).items()):
            if not (name.startswith(('calc_', 'scratch_'))
                    and inspect.isfunction(obj)
                    and obj.__module__ == module.__name__):
                continue
            target = _first_param_annotation(obj)
            if target is inspect.Parameter.empty:
                continue
            if name.startswith('scratch_'):
                if check_signature(obj):
                    for cls in resolve_targets(target):
                        scratches[cls] = obj
                continue
            register(target)(obj)
    skips_out_shapes.update(set(calculators.values()) - _reads_out_shapes)
    for cls, calc in calculators.items():
        _time_families.setdefault(cls.__name__, getattr(
            sys.modules[calc.__module__], 'TIME_FAMILY', None))
    built_in.update(calculators.values())
    built_in.update(update_calculators.values())


_discover()
