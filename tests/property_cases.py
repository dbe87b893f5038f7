"""The case table of the property-based tests (``test_properties.py``).

A *case* is a function ``build(d, n)`` registered with :func:`case` for one
function type that has a built-in cost calculator.  ``d`` is a
:class:`Draw` (it wraps hypothesis' ``draw``); ``n`` is the batch size.  It
draws small random shapes and hyper-parameters and returns a :class:`Spec`:
the real Chainer function to run, its inputs with their batch axes marked,
and what the cost model promises about them:

* ``B(array, axis)`` marks an input that lives on the batch axis: for batch
  ``k * n`` the test feeds ``k`` copies of it concatenated along ``axis``
  (so value-dependent costs scale too).  ``R(list)`` marks a list whose
  items are repeated ``k`` times (a batch of sequences).  Every other
  ndarray in the arguments is batch-independent;
* ``mread`` must be affine in the batch with the intercept ``fixed_mread``:
  by default the size of the batch-independent arrays plus ``const_reads``
  (scalar constants or constant grids the cost model reads once);
* ``flops`` and ``mwrite`` must double with the batch, except the metrics
  listed in ``affine`` (a batch-independent part is legitimate: per-channel
  statistics, one division of a mean...), which must only be affine in the
  batch, and those of ``unscaled`` (metric -> why no rule holds);
* ``writes_outputs=True`` says that the cost model writes each output
  element exactly once: mwrite must equal the total size of the real
  outputs; otherwise it is a string saying why not;
* ``batch=True``, or a string saying why the function has no batch axis.

A function that cannot run on this machine (a cuDNN-only class, or a
SciPy-backed one when SciPy is missing) returns a :class:`Direct` from its
callable: the node object and its inputs, to be costed by calling the
calculator directly, with the output shapes of the real function.

Every class of the calculator registry needs a case here (the test
``test_every_calculator_has_a_case`` names the missing ones): a new
calculator gets these checks by adding one.  A case whose invariant fails
because of a calculator bug is marked with ``xfail`` (see :func:`case`).
"""

import collections
import contextlib

import chainer
import chainer.functions as F
import numpy as np
from hypothesis import strategies as st


CHAINER_MAJOR = int(chainer.__version__.split('.')[0])

try:
    import scipy  # NOQA
    HAVE_SCIPY = True
except ImportError:
    HAVE_SCIPY = False


# Markers and the spec

class B(object):
    """An input array on the batch axis ``axis``."""

    def __init__(self, array, axis=0):
        self.array = array
        self.axis = axis


class R(object):
    """A list of batch items (sequences): repeated ``k`` times for batch
    ``k * n``."""

    def __init__(self, items):
        self.items = list(items)


class Direct(object):
    """What a case's callable returns when the function cannot run here:
    the node, its inputs and the shapes of the real outputs (or a callable
    giving them, evaluated outside the hook)."""

    def __init__(self, node, in_data, outputs):
        self.node = node
        self.in_data = tuple(in_data)
        self.outputs = outputs

    def output_shapes(self):
        outputs = self.outputs() if callable(self.outputs) else self.outputs
        return [tuple(getattr(o, 'shape', o)) for o in outputs]


def _materialize(obj, k):
    if isinstance(obj, B):
        return np.concatenate([obj.array] * k, axis=obj.axis)
    if isinstance(obj, R):
        return [_materialize(x, 1) for x in obj.items] * k
    if isinstance(obj, list):
        return [_materialize(x, k) for x in obj]
    if isinstance(obj, tuple):
        return tuple(_materialize(x, k) for x in obj)
    if isinstance(obj, dict):
        return {key: _materialize(v, k) for key, v in obj.items()}
    return obj


def _fixed_size(obj):
    if isinstance(obj, (B, R)):
        return 0
    if isinstance(obj, (list, tuple)):
        return sum(_fixed_size(x) for x in obj)
    if isinstance(obj, dict):
        return sum(_fixed_size(v) for v in obj.values())
    if isinstance(obj, np.ndarray):
        return int(obj.size)
    return 0


class Spec(object):
    """One drawn instance of a case (see the module docstring)."""

    def __init__(self, fn, args, const_reads=0, fixed_mread=None,
                 affine=(), unscaled=None, batch=True, writes_outputs=True,
                 train=True):
        self.fn = fn
        self.args = list(args)
        self.fixed_mread = (_fixed_size(self.args) + const_reads
                            if fixed_mread is None else fixed_mread)
        self.affine = tuple(affine)
        self.unscaled = dict(unscaled or {})
        self.batch = batch
        self.writes_outputs = writes_outputs
        self.train = train

    def make(self, k=1):
        """A zero-argument callable running the function on batch k*n."""
        args = _materialize(self.args, k)
        return lambda: self.fn(*args)


class Draw(object):
    """Small random choices for the cases, drawn through hypothesis.

    Array values come from a NumPy generator seeded by a drawn integer:
    the costs do not depend on them (except where a case says so), they
    only have to lie in the functions' domains.
    """

    def __init__(self, draw):
        self.draw = draw
        self.rng = np.random.RandomState(
            draw(st.integers(0, 2 ** 31 - 1), label='seed'))

    def int(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def bool(self):
        return self.draw(st.booleans())

    def pick(self, values):
        return self.draw(st.sampled_from(list(values)))

    def dims(self, ndim, lo=1, hi=4):
        return tuple(self.int(lo, hi) for _ in range(ndim))

    def u(self, *shape, lo=0.1, hi=0.9, dtype=np.float32):
        """Uniform values in (lo, hi): inside every function's domain."""
        return self.rng.uniform(lo, hi, shape).astype(dtype)

    def ints(self, shape, lo, hi, dtype=np.int32):
        """Integers in [lo, hi)."""
        return self.rng.randint(lo, hi, shape).astype(dtype)

    def x(self, n, min_rest=1, max_rest=3, hi=4):
        """A float32 batch (n, ...) with min_rest to max_rest more axes."""
        return self.u(n, *self.dims(self.int(min_rest, max_rest), hi=hi))


Case = collections.namedtuple('Case', 'id target build requires xfail')

#: The invariants of test_properties.py, as named in ``xfail``.
INVARIANTS = ('ints', 'fma', 'batch', 'outputs', 'ignored')

#: Every case, in registration order.
CASES = []


def case(target, variant=None, requires=None, xfail=None):
    """Register ``build(d, n)`` as a case for the function type named
    ``target``.

    ``requires`` is ``'7'`` or ``'6'`` for a class only that major Chainer
    version has. ``xfail`` maps the name of an invariant (``'ints'``,
    ``'fma'``, ``'batch'``, ``'outputs'``, ``'ignored'``) to the reason it
    is known to fail because of a calculator bug.
    """
    unknown = set(xfail or ()) - set(INVARIANTS)
    if unknown:
        raise ValueError('unknown invariants: {}'.format(sorted(unknown)))

    def decorator(build):
        cid = target if variant is None else '{}-{}'.format(target, variant)
        CASES.append(Case(cid, target, build, requires, dict(xfail or {})))
        return build
    return decorator


def var(a):
    return chainer.Variable(a)


def _non_batch_axis(d, ndim):
    return d.int(1, ndim - 1)


# chainer.functions.activation

@case('ClippedReLU')
def _clipped_relu(d, n):
    z = d.pick([0.3, 1.0, 6.0])
    # the cap z is a scalar constant read once
    return Spec(lambda x: F.clipped_relu(x, z), [B(d.x(n))], const_reads=1)


@case('CReLU')
def _crelu(d, n):
    x = d.x(n)
    axis = _non_batch_axis(d, x.ndim)
    return Spec(lambda x: F.crelu(x, axis), [B(x)])


@case('ELU')
def _elu(d, n):
    alpha = d.pick([0.5, 1.0])
    return Spec(lambda x: F.elu(x, alpha), [B(d.x(n))], const_reads=1)


@case('HardSigmoid')
def _hard_sigmoid(d, n):
    return Spec(F.hard_sigmoid, [B(d.x(n))])


@case('LeakyReLU')
def _leaky_relu(d, n):
    slope = d.pick([0.1, 0.2])
    return Spec(lambda x: F.leaky_relu(x, slope), [B(d.x(n))],
                const_reads=1)


@case('LogSoftmax')
def _log_softmax(d, n):
    x = d.x(n)
    axis = _non_batch_axis(d, x.ndim)
    return Spec(lambda x: F.log_softmax(x, axis), [B(x)])


@case('PReLUFunction')
def _prelu(d, n):
    x = d.x(n)
    W = d.u(*x.shape[1:1 + d.int(1, x.ndim - 1)])
    return Spec(F.prelu, [B(x), W])


@case('RReLU')
def _rrelu(d, n):
    train = d.bool()
    return Spec(lambda x: F.rrelu(x, 0.1, 0.3), [B(d.x(n))], train=train)


@case('ReLU')
def _relu(d, n):
    return Spec(F.relu, [B(d.x(n))])


@case('Sigmoid')
def _sigmoid(d, n):
    return Spec(F.sigmoid, [B(d.x(n))])


@case('Softmax')
def _softmax(d, n):
    x = d.x(n)
    axis = _non_batch_axis(d, x.ndim)
    return Spec(lambda x: F.softmax(x, axis), [B(x)])


@case('Softplus')
def _softplus(d, n):
    beta = d.pick([1.0, 2.0])
    return Spec(lambda x: F.softplus(x, beta), [B(d.x(n))], const_reads=1)


@case('Swish')
def _swish(d, n):
    x = d.x(n)
    beta = d.u(*x.shape[1:1 + d.int(1, x.ndim - 1)])
    return Spec(F.swish, [B(x), beta])


@case('Tanh')
def _tanh(d, n):
    return Spec(F.tanh, [B(d.x(n))])


# chainer.functions.array

def _assign_cls():
    from chainer.functions.array.select_item import Assign
    return Assign


@case('AsStrided')
def _as_strided(d, n):
    m = d.int(1, 5)
    w = d.int(1, m)

    def f(x):
        # sliding windows of w along the rows of the contiguous (n, m) x
        return F.as_strided(x, (x.shape[0], m - w + 1, w), (m, 1, 1))
    return Spec(f, [B(d.u(n, m))])


@case('Assign')
def _assign(d, n):
    # the backward of SelectItem: scatters gy into zeros of shape (n, c)
    c = d.int(1, 4)

    def f(gy, t):
        node = _assign_cls()((gy.shape[0], c), np.float32, var(t))
        return node.apply((gy,))
    return Spec(f, [B(d.u(n)), B(d.ints((n,), 0, c))])


@case('Broadcast')
def _broadcast(d, n):
    m, c = d.int(1, 3), d.int(1, 3)
    # a lives on the batch axis; b (1, m, c) is shared by the batch
    return Spec(F.broadcast, [B(d.u(n, 1, c)), d.u(1, m, c)])


@case('BroadcastTo')
def _broadcast_to(d, n):
    m, c = d.int(2, 4), d.int(1, 3)
    return Spec(lambda x: F.broadcast_to(x, (x.shape[0], m, c)),
                [B(d.u(n, 1, c))])


@case('Cast')
def _cast(d, n):
    dtype = d.pick([np.float16, np.float64, np.int32])
    return Spec(lambda x: F.cast(x, dtype), [B(d.x(n))])


@case('Concat')
def _concat(d, n):
    rest = d.dims(d.int(1, 2))
    axis = d.int(0, len(rest))
    xs = []
    for _ in range(d.int(1, 3)):
        shape = [n] + list(rest)
        if axis:
            shape[axis] = d.int(1, 3)
        xs.append(B(d.u(*shape)))
    return Spec(lambda *xs: F.concat(xs, axis), xs)


@case('Copy')
def _copy(d, n):
    return Spec(lambda x: F.copy(x, -1), [B(d.x(n))])


@case('Depth2Space')
def _depth2space(d, n):
    r = d.int(1, 2)
    c, h, w = d.dims(3, hi=3)
    return Spec(lambda x: F.depth2space(x, r), [B(d.u(n, c * r * r, h, w))])


@case('Diagonal')
def _diagonal(d, n):
    x = d.x(n, 2, 3)
    axis1, axis2 = d.draw(st.permutations(range(1, x.ndim)))[:2]
    offset = d.int(-2, 2)
    return Spec(lambda x: F.diagonal(x, offset, axis1, axis2), [B(x)])


@case('Dstack')
def _dstack(d, n):
    m = d.int(1, 3)
    if d.bool():
        xs = [B(d.u(n, m)) for _ in range(d.int(1, 3))]
    else:
        xs = [B(d.u(n, m, d.int(1, 3))) for _ in range(d.int(1, 3))]
    return Spec(lambda *xs: F.dstack(xs), xs)


@case('ExpandDims')
def _expand_dims(d, n):
    x = d.x(n)
    axis = d.int(-x.ndim - 1, x.ndim)
    return Spec(lambda x: F.expand_dims(x, axis), [B(x)],
                writes_outputs='a view: free by the cost model')


@case('Flip')
def _flip(d, n):
    x = d.x(n)
    axis = d.int(0, x.ndim - 1)
    return Spec(lambda x: F.flip(x, axis), [B(x)])


@case('FlipLR')
def _fliplr(d, n):
    return Spec(F.fliplr, [B(d.x(n))])


@case('FlipUD')
def _flipud(d, n):
    return Spec(F.flipud, [B(d.x(n))])


def _basic_index(d, dim):
    kind = d.pick(['int', 'slice', 'full'])
    if kind == 'int':
        return d.int(-dim, dim - 1)
    if kind == 'slice':
        return slice(d.int(-dim, dim), d.int(-dim, dim), d.int(1, 2))
    return slice(None)


@case('GetItem', 'basic')
def _get_item_basic(d, n):
    x = d.x(n, 1, 3)
    slices = [slice(None)]
    for dim in x.shape[1:]:
        if d.bool() and d.bool():
            slices.append(None)
        slices.append(_basic_index(d, dim))
    if d.bool():  # drop the trailing indices for an Ellipsis
        slices = slices[:d.int(1, len(slices))] + [Ellipsis]
    slices = tuple(slices)
    return Spec(lambda x: F.get_item(x, slices), [B(x)])


@case('GetItem', 'int-arrays')
def _get_item_int_arrays(d, n):
    x = d.x(n, 2, 3)
    shape = d.dims(d.int(1, 2), hi=3)
    idx = d.ints(shape, 0, x.shape[1])
    if d.bool():
        slices = (slice(None), idx)
    else:
        # two index arrays, adjacent or not, broadcast together
        idx2 = d.ints(shape[-1:], 0, x.shape[2])
        if x.ndim == 4 and d.bool():
            idx3 = d.ints(shape[-1:], 0, x.shape[3])
            slices = (slice(None), idx, slice(None), idx3)
        else:
            slices = (slice(None), idx, idx2)
    return Spec(lambda x, s: F.get_item(x, s), [B(x), slices])


@case('GetItem', 'mask')
def _get_item_mask(d, n):
    x = d.x(n, 1, 3)
    mask = d.rng.rand(*x.shape[1:1 + d.int(1, x.ndim - 1)]) < 0.5
    return Spec(
        lambda x, m: F.get_item(x, (slice(None), m)), [B(x), mask],
        # the calculator counts the selection from the output shapes
        writes_outputs=True)


@case('Hstack')
def _hstack(d, n):
    rest = d.dims(d.int(0, 1))
    xs = [B(d.u(n, d.int(1, 3), *rest)) for _ in range(d.int(1, 3))]
    return Spec(lambda *xs: F.hstack(xs), xs)


def _window(d, hi_k=3):
    k, s, p, dil = d.int(1, hi_k), d.int(1, 2), d.int(0, 1), d.int(1, 2)
    dk = k + (k - 1) * (dil - 1)
    size = d.int(max(1, dk - 2 * p), max(1, dk - 2 * p) + 2)
    return k, s, p, dil, size


@case('Im2Col')
def _im2col(d, n):
    kh, sy, ph, dy, h = _window(d)
    kw, sx, pw, dx, w = _window(d)
    cover_all = d.bool()
    c = d.int(1, 2)
    return Spec(lambda x: F.im2col(x, (kh, kw), (sy, sx), (ph, pw),
                                   cover_all, (dy, dx)),
                [B(d.u(n, c, h, w))])


@case('Moveaxis')
def _moveaxis(d, n):
    x = d.x(n)
    src, dst = d.int(0, x.ndim - 1), d.int(0, x.ndim - 1)
    return Spec(lambda x: F.moveaxis(x, src, dst), [B(x)])


@case('Pad')
def _pad(d, n):
    x = d.x(n)
    pairs = ((0, 0),) + tuple((d.int(0, 2), d.int(0, 2))
                              for _ in range(x.ndim - 1))
    mode = d.pick(['constant', 'edge'])
    kwargs = {'constant_values': 0.5} if mode == 'constant' else {}
    padded = any(a or b for a, b in pairs)
    # the padding value is a scalar read once when something is padded
    return Spec(lambda x: F.pad(x, pairs, mode, **kwargs), [B(x)],
                const_reads=int(mode == 'constant' and padded))


@case('PadSequence')
def _pad_sequence(d, n):
    rest = d.dims(d.int(0, 2), hi=3)
    lengths = [d.int(1, 4) for _ in range(n)]
    length = max(lengths) + d.int(0, 1) if d.bool() else None
    padding = d.pick([0, -1.0])
    xs = [d.u(L, *rest) for L in lengths]
    padded = any(L < (length or max(lengths)) for L in lengths)
    # the padding value is a scalar read once when something is padded
    return Spec(lambda xs: F.pad_sequence(xs, length, padding), [R(xs)],
                const_reads=int(padded))


@case('Permutate')
def _permutate(d, n):
    x = d.x(n)
    axis = _non_batch_axis(d, x.ndim)
    indices = d.rng.permutation(x.shape[axis]).astype(np.int32)
    inv = d.bool()
    return Spec(lambda x, i: F.permutate(x, i, axis, inv), [B(x), indices])


@case('Repeat')
def _repeat(d, n):
    x = d.x(n)
    if d.bool():
        axis, repeats = None, d.int(1, 3)
    else:
        axis = _non_batch_axis(d, x.ndim)
        if d.bool():
            repeats = d.int(0, 3)
        else:
            repeats = tuple(d.int(0, 3) for _ in range(x.shape[axis]))
    return Spec(lambda x: F.repeat(x, repeats, axis), [B(x)])


@case('Reshape')
def _reshape(d, n):
    x = d.x(n, 2, 3)
    return Spec(lambda x: F.reshape(x, (x.shape[0], -1)), [B(x)],
                writes_outputs='a view: free by the cost model')


@contextlib.contextmanager
def _numpy_float_alias():
    # Chainer's resize_images uses numpy.float, an alias removed in NumPy
    # 1.24 (deprecated before): lend the plain alias for the call only.
    lent = 'float' not in vars(np)
    if lent:
        vars(np)['float'] = float
    try:
        yield
    finally:
        if lent:
            del vars(np)['float']


def _resize_images_inputs(d, n):
    """x, the output size and the mode keyword of a random resize (also
    drawn by the case of its gradient)."""
    c, h, w = d.dims(3, hi=3)
    size = d.dims(2, hi=5)
    kwargs = {}
    if CHAINER_MAJOR >= 7:
        kwargs['mode'] = d.pick(['bilinear', 'nearest'])
    return d.u(n, c, h, w), size, kwargs


@case('ResizeImages')
def _resize_images(d, n):
    x, size, kwargs = _resize_images_inputs(d, n)

    def f(x):
        with _numpy_float_alias():
            return F.resize_images(x, size, **kwargs)
    return Spec(f, [B(x)])


@case('Rollaxis')
def _rollaxis(d, n):
    x = d.x(n)
    axis, start = d.int(0, x.ndim - 1), d.int(0, x.ndim)
    return Spec(lambda x: F.rollaxis(x, axis, start), [B(x)])


@case('ScatterAdd')
def _scatter_add(d, n):
    m, p = d.dims(2, hi=3)
    idx = d.ints((d.int(1, 4),), 0, m)
    a = d.u(n, m, p)
    b = d.u(n, idx.size, p)
    return Spec(lambda a, idx, b: F.scatter_add(a, (slice(None), idx), b),
                [B(a), idx, B(b)])


@case('SelectItem')
def _select_item(d, n):
    c = d.int(1, 4)
    return Spec(F.select_item, [B(d.u(n, c)), B(d.ints((n,), 0, c))])


@case('Separate')
def _separate(d, n):
    x = d.x(n)
    axis = d.int(0, x.ndim - 1)
    return Spec(lambda x: F.separate(x, axis), [B(x)])


@case('Space2Depth')
def _space2depth(d, n):
    r = d.int(1, 2)
    c, h, w = d.dims(3, hi=2)
    return Spec(lambda x: F.space2depth(x, r), [B(d.u(n, c, h * r, w * r))])


@case('SpatialTransformerGrid')
def _spatial_transformer_grid(d, n):
    h, w = d.dims(2)
    # the (3, h*w) homogeneous base grid is a constant read once
    return Spec(lambda t: F.spatial_transformer_grid(t, (h, w)),
                [B(d.u(n, 2, 3))], const_reads=3 * h * w)


@case('SpatialTransformerSampler')
def _spatial_transformer_sampler(d, n):
    c, h, w = d.dims(3, hi=3)
    oh, ow = d.dims(2, hi=3)
    grid = d.u(n, 2, oh, ow, lo=-1.0, hi=1.0)
    return Spec(F.spatial_transformer_sampler,
                [B(d.u(n, c, h, w)), B(grid)])


@case('SplitAxis')
def _split_axis(d, n):
    x = d.x(n)
    axis = _non_batch_axis(d, x.ndim)
    dim = x.shape[axis]
    if d.bool():
        sections = d.pick([s for s in range(1, dim + 1) if dim % s == 0])
    else:
        sections = sorted(d.draw(st.lists(st.integers(0, dim), min_size=1,
                                          max_size=3)))
    return Spec(lambda x: F.split_axis(x, sections, axis), [B(x)])


@case('Squeeze')
def _squeeze(d, n):
    x = d.x(n)
    axis = d.int(1, x.ndim)
    x = np.expand_dims(x, axis)
    return Spec(lambda x: F.squeeze(x, axis), [B(x)],
                writes_outputs='a view: free by the cost model')


@case('Stack')
def _stack(d, n):
    rest = d.dims(d.int(0, 2))
    axis = d.int(0, len(rest) + 1)
    xs = [B(d.u(n, *rest)) for _ in range(d.int(1, 3))]
    return Spec(lambda *xs: F.stack(xs, axis), xs)


@case('Swapaxes')
def _swapaxes(d, n):
    x = d.x(n)
    a1, a2 = d.int(0, x.ndim - 1), d.int(0, x.ndim - 1)
    return Spec(lambda x: F.swapaxes(x, a1, a2), [B(x)])


@case('Tile')
def _tile(d, n):
    x = d.x(n, 1, 2)
    if d.bool():
        reps = d.int(1, 3)
    else:
        reps = d.dims(d.int(1, x.ndim + 1), hi=3)
    return Spec(lambda x: F.tile(x, reps), [B(x)])


@case('AsLayout', requires='7')
def _as_layout(d, n):
    # NCHW -> NHWC (CUDNN_CHANNEL_LAST_X) on a 4-d input
    x = d.u(n, *d.dims(3))
    return Spec(lambda x: chainer.Variable(x).as_layout(
        'CUDNN_CHANNEL_LAST_X'), [B(x)])


@case('Transpose')
def _transpose(d, n):
    x = d.x(n)
    axes = None if d.bool() else tuple(d.draw(st.permutations(
        range(x.ndim))))
    return Spec(lambda x: F.transpose(x, axes), [B(x)])


@case('TransposeSequence')
def _transpose_sequence(d, n):
    # T time steps of decreasing batch sizes b_t (a multiple of n)
    sizes = sorted((d.int(1, 2) for _ in range(d.int(1, 4))), reverse=True)
    f = d.int(1, 3)
    xs = [B(d.u(n * b, f)) for b in sizes]
    return Spec(lambda *xs: F.transpose_sequence(xs), xs)


@case('Vstack')
def _vstack(d, n):
    rest = d.dims(d.int(1, 2))
    xs = [B(d.u(n, *rest)) for _ in range(d.int(1, 3))]
    return Spec(lambda *xs: F.vstack(xs), xs)


@case('Where')
def _where(d, n):
    x = d.x(n)
    cond = d.rng.rand(*x.shape) < 0.5
    return Spec(F.where, [B(cond), B(x), B(d.u(*x.shape))])


# chainer.functions.connection

def _maybe(d, array):
    return array if d.bool() else None


def _args(*arrays):
    """Drop the trailing None (an absent bias) of an argument list."""
    arrays = list(arrays)
    while arrays and arrays[-1] is None:
        arrays.pop()
    return arrays


@case('BilinearFunction')
def _bilinear(d, n):
    j, k, out = d.dims(3, hi=3)
    e1, e2, W = B(d.u(n, j)), B(d.u(n, k)), d.u(j, k, out)
    if d.bool():
        return Spec(F.bilinear,
                    [e1, e2, W, d.u(j, out), d.u(k, out), d.u(out)])
    return Spec(F.bilinear, [e1, e2, W])


@case('Convolution2DFunction')
def _conv2d(d, n):
    kh, sy, ph, dy, h = _window(d)
    kw, sx, pw, dx, w = _window(d)
    g = d.int(1, 2)
    c, o = g * d.int(1, 2), g * d.int(1, 2)
    cover_all = d.bool()
    x, W, b = d.u(n, c, h, w), d.u(o, c // g, kh, kw), _maybe(d, d.u(o))

    def f(x, W, b=None):
        return F.convolution_2d(x, W, b, (sy, sx), (ph, pw), cover_all,
                                dilate=(dy, dx), groups=g)
    return Spec(f, _args(B(x), W, b))


def _conv_nd_inputs(d, n):
    """x, W and the window (s, p, cover_all, dil, groups) of a random
    N-d convolution (also drawn by the case of its weight gradient)."""
    ndim = d.int(1, 3)
    windows = [_window(d, hi_k=2) for _ in range(ndim)]
    k, s, p, dil, size = (tuple(w[i] for w in windows) for i in range(5))
    g = d.int(1, 2)
    c, o = g * d.int(1, 2), g * d.int(1, 2)
    cover_all = d.bool()
    return d.u(n, c, *size), d.u(o, c // g, *k), (s, p, cover_all, dil, g)


@case('ConvolutionND')
def _conv_nd(d, n):
    x, W, (s, p, cover_all, dil, g) = _conv_nd_inputs(d, n)
    b = _maybe(d, d.u(W.shape[0]))

    def f(x, W, b=None):
        return F.convolution_nd(x, W, b, s, p, cover_all, dil, g)
    return Spec(f, _args(B(x), W, b))


def _deconv_window(d, hi_k=3, gaps=False):
    """A transposed-convolution window along one axis.

    Normally every output element gets at least one product: the stride
    is at most the kernel size, and a dilated kernel has stride 1 and an
    input at least as long as the dilation. With ``gaps`` the stride
    exceeds the kernel or the dilation exceeds the input, so that some
    output elements get no product at all (only the bias, or zero).
    """
    if gaps:
        k, s, dil, size = d.int(1, 2), d.int(2, 3), d.int(1, 3), d.int(1, 3)
    else:
        k, dil = d.int(1, hi_k), d.int(1, 2)
        if dil == 1:
            s, size = d.int(1, min(2, k)), d.int(1, 3)
        else:
            s, size = 1, d.int(dil, 3)
    dk = (k - 1) * dil + 1
    p = 0 if gaps else d.int(0, min(1, (s * (size - 1) + dk - 1) // 2))
    out = s * (size - 1) + dk - 2 * p
    return k, s, p, dil, size, out


def _deconv2d(d, n, gaps=False):
    kh, sy, ph, dy, h, oh = _deconv_window(d, gaps=gaps)
    kw, sx, pw, dx, w, ow = _deconv_window(d, gaps=gaps)
    outsize = (oh, ow) if d.bool() else None
    g = 1 if gaps else d.int(1, 2)
    c, o = (1, 1) if gaps else (g * d.int(1, 2), g * d.int(1, 2))
    b = None if gaps else _maybe(d, d.u(o))
    x, W = d.u(n, c, h, w), d.u(c, o // g, kh, kw)

    def f(x, W, b=None):
        return F.deconvolution_2d(x, W, b, (sy, sx), (ph, pw), outsize,
                                  dilate=(dy, dx), groups=g)
    return Spec(f, _args(B(x), W, b))


def _deconv_nd(d, n, gaps=False):
    ndim = d.int(2, 3) if gaps else d.int(1, 3)
    windows = [_deconv_window(d, hi_k=2, gaps=gaps) for _ in range(ndim)]
    k, s, p, dil, size, out = (tuple(w[i] for w in windows)
                               for i in range(6))
    outsize = out if d.bool() else None
    g = 1 if gaps else d.int(1, 2)
    c, o = (1, 1) if gaps else (g * d.int(1, 2), g * d.int(1, 2))
    b = None if gaps else _maybe(d, d.u(o))
    x, W = d.u(n, c, *size), d.u(c, o // g, *k)

    def f(x, W, b=None):
        return F.deconvolution_nd(x, W, b, s, p, outsize, dil, g)
    return Spec(f, _args(B(x), W, b))


case('Deconvolution2DFunction')(_deconv2d)
case('DeconvolutionND')(_deconv_nd)


# Strides and dilations that leave output elements no product reaches.
@case('Deconvolution2DFunction', 'gaps')
def _deconv2d_gaps(d, n):
    return _deconv2d(d, n, gaps=True)


@case('DeconvolutionND', 'gaps')
def _deconv_nd_gaps(d, n):
    return _deconv_nd(d, n, gaps=True)


@case('EmbedIDFunction')
def _embed_id(d, n):
    v, dim = d.dims(2)
    ignore = d.pick([None, -1])
    x = d.ints((n,) + d.dims(d.int(0, 2), hi=3), 0 if ignore is None else -1,
               v)
    return Spec(lambda x, W: F.embed_id(x, W, ignore), [B(x), d.u(v, dim)],
                unscaled={
                    # at most the V rows of W are read, however many ids:
                    # min(|x|, V) D is not affine in the batch
                    'mread': 'min(|x|, V) rows of W are read'})


def _linear_inputs(d, n):
    """x, W, b (or None) and n_batch_axes of a random linear layer (also
    drawn by the cases of its gradients)."""
    out = d.int(1, 4)
    if d.bool():
        # n_batch_axes=2: x (n, a, in), W (out, in)
        x = d.u(n, d.int(1, 3), d.int(1, 4))
        W, axes = d.u(out, x.shape[2]), 2
    else:
        x = d.x(n, 1, 2)
        W, axes = d.u(out, int(np.prod(x.shape[1:]))), 1
    return x, W, _maybe(d, d.u(out)), axes


@case('LinearFunction')
def _linear(d, n):
    x, W, b, axes = _linear_inputs(d, n)

    def f(x, W, b=None):
        return F.linear(x, W, b, n_batch_axes=axes)
    return Spec(f, _args(B(x), W, b))


@case('LocalConvolution2DFunction')
def _local_conv2d(d, n):
    c, o = d.dims(2, hi=2)
    kh, kw = d.dims(2, hi=2)
    h, w = d.int(kh, kh + 2), d.int(kw, kw + 2)
    s = d.int(1, 2)
    oh, ow = (h - kh) // s + 1, (w - kw) // s + 1
    x, W = d.u(n, c, h, w), d.u(o, oh, ow, c, kh, kw)
    b = _maybe(d, d.u(o, oh, ow))

    def f(x, W, b=None):
        return F.local_convolution_2d(x, W, b, s)
    return Spec(f, _args(B(x), W, b))


@case('Shift')
def _shift(d, n):
    k, dil = d.pick([1, 3]), d.int(1, 2)
    # one channel group per kernel position at least
    c, h, w = d.int(k * k, k * k + 2), d.int(1, 4), d.int(1, 4)
    return Spec(lambda x: F.shift(x, k, dil), [B(d.u(n, c, h, w))])


# chainer.functions.evaluation

ONE_VALUE = 'one value for the whole batch'


@case('Accuracy')
def _accuracy(d, n):
    c = d.int(1, 4)
    rest = d.dims(d.int(0, 1), hi=3)
    ignore = d.pick([None, -1])
    t = d.ints((n,) + rest, 0 if ignore is None else -1, c)
    t.flat[0] = 0  # never every label ignored
    return Spec(lambda y, t: F.accuracy(y, t, ignore), [
        B(d.u(n, c, *rest)), B(t)],
        # ignore_label is a scalar read once, and one FLOP for the count
        const_reads=int(ignore is not None),
        affine=('flops',), unscaled={'mwrite': ONE_VALUE})


@case('BinaryAccuracy')
def _binary_accuracy(d, n):
    y = d.x(n, 1, 2)
    y = y - 0.5
    t = d.ints(y.shape, 0, 2)
    # the threshold is a scalar read once
    return Spec(F.binary_accuracy, [B(y), B(t)], const_reads=1,
                unscaled={'mwrite': ONE_VALUE})


@case('ClassificationSummary')
def _classification_summary(d, n):
    c = d.int(1, 4)
    label_num = d.pick([None, c, c + 1])
    beta = d.pick([1.0, 2.0])

    def f(y, t):
        # an empty class divides 0 by 0: not this test's business
        with np.errstate(divide='ignore', invalid='ignore'):
            return F.classification_summary(y, t, label_num, beta)
    # beta and ignore_label are scalars read once; the per-label figures
    # (and the 4 outputs of L values) do not grow with the batch
    return Spec(f, [B(d.u(n, c)), B(d.ints((n,), 0, c))], const_reads=2,
                affine=('flops', 'mwrite'),
                writes_outputs=True if label_num else (
                    'without label_num Chainer outputs max(t) + 1 labels '
                    '(value-dependent): the cost model takes the upper '
                    'bound y.shape[1]'))


@case('R2_score')
def _r2_score(d, n):
    shape = (n,) + d.dims(d.int(0, 2), hi=3)
    multioutput = d.pick(['uniform_average', 'raw_values'])

    def f(pred, true):
        # a batch of one has no variance: not this test's business
        with np.errstate(divide='ignore', invalid='ignore'):
            return F.r2_score(pred, true, multioutput=multioutput)
    # the per-output figures do not grow with the batch
    return Spec(f, [B(d.u(*shape)), B(d.u(*shape))],
                affine=('flops', 'mwrite'))


# chainer.functions.loss

@case('AbsoluteError')
def _absolute_error(d, n):
    x = d.x(n)
    return Spec(F.absolute_error, [B(x), B(d.u(*x.shape))])


@case('SquaredError')
def _squared_error(d, n):
    x = d.x(n)
    return Spec(F.squared_error, [B(x), B(d.u(*x.shape))])


@case('SquaredDifference', requires='6')
def _squared_difference(d, n):
    # Chainer 6's function node (a math function, the same formula)
    x = d.x(n)
    return Spec(F.squared_difference, [B(x), B(d.u(*x.shape))])


@case('MeanAbsoluteError')
def _mean_absolute_error(d, n):
    x = d.x(n)
    return Spec(F.mean_absolute_error, [B(x), B(d.u(*x.shape))],
                unscaled={'mwrite': ONE_VALUE})


@case('MeanSquaredError')
def _mean_squared_error(d, n):
    x = d.x(n)
    # with FMA: 2|x| + 1, the final division does not grow with the batch
    return Spec(F.mean_squared_error, [B(x), B(d.u(*x.shape))],
                affine=('flops',), unscaled={'mwrite': ONE_VALUE})


def _reduce(d, per_sample='no'):
    reduce = d.pick(['mean', per_sample])
    unscaled = {'mwrite': ONE_VALUE} if reduce != per_sample else {}
    return reduce, unscaled


@case('Contrastive')
def _contrastive(d, n):
    k = d.int(1, 4)
    margin = d.pick([0.5, 1.0])
    reduce, unscaled = _reduce(d)
    # the margin is a scalar read once
    return Spec(lambda a, b, y: F.contrastive(a, b, y, margin, reduce),
                [B(d.u(n, k)), B(d.u(n, k)), B(d.ints((n,), 0, 2))],
                const_reads=1, unscaled=unscaled)


@case('Triplet')
def _triplet(d, n):
    k = d.int(1, 4)
    margin = d.pick([0.2, 1.0])
    reduce, unscaled = _reduce(d)
    # the margin is a scalar read once
    return Spec(lambda a, p, q: F.triplet(a, p, q, margin, reduce),
                [B(d.u(n, k)), B(d.u(n, k)), B(d.u(n, k))],
                const_reads=1, unscaled=unscaled)


@case('CrossCovariance')
def _cross_covariance(d, n):
    m, k = d.dims(2)
    reduce = d.pick(['half_squared_sum', 'no'])
    # the covariance matrix (M, K) does not grow with the batch
    return Spec(lambda y, z: F.cross_covariance(y, z, reduce),
                [B(d.u(n, m)), B(d.u(n, k))], affine=('flops', 'mwrite'))


@case('DeCov')
def _decov(d, n):
    m = d.int(1, 4)
    reduce = d.pick(['half_squared_sum', 'no'])
    # the covariance matrix (M, M) does not grow with the batch
    return Spec(lambda h: F.decov(h, reduce), [B(d.u(n, m))],
                affine=('flops', 'mwrite'))


@case('Hinge')
def _hinge(d, n):
    c = d.int(1, 4)
    norm = d.pick(['L1', 'L2'])
    reduce, unscaled = _reduce(d)
    return Spec(lambda x, t: F.hinge(x, t, norm, reduce),
                [B(d.u(n, c)), B(d.ints((n,), 0, c))], unscaled=unscaled)


@case('HuberLoss')
def _huber_loss(d, n):
    x = d.x(n)
    delta = d.pick([0.3, 1.0])
    reduce = d.pick(['sum_along_second_axis', 'no'])
    # delta is a scalar read once
    return Spec(lambda x, t: F.huber_loss(x, t, delta, reduce),
                [B(x), B(d.u(*x.shape))], const_reads=1)


@case('SigmoidCrossEntropy')
def _sigmoid_cross_entropy(d, n):
    x = d.x(n, 1, 2)
    normalize = d.bool()
    reduce, unscaled = _reduce(d)
    return Spec(lambda x, t: F.sigmoid_cross_entropy(x, t, normalize,
                                                     reduce),
                # the ignore label is a scalar read once
                [B(x), B(d.ints(x.shape, 0, 2))], const_reads=1,
                unscaled=unscaled)


@case('SoftmaxCrossEntropy', 'labels')
def _softmax_cross_entropy(d, n):
    c = d.int(1, 4)
    rest = d.dims(d.int(0, 1), hi=3)
    t = d.ints((n,) + rest, -1, c)
    t.flat[0] = 0  # never every label ignored
    normalize = d.bool()
    reduce, unscaled = _reduce(d)
    weight = d.u(c) if d.bool() else None

    def f(x, t, w=None):
        return F.softmax_cross_entropy(x, t, normalize, class_weight=w,
                                       reduce=reduce)
    # the ignore label is a scalar read once
    return Spec(f, _args(B(d.u(n, c, *rest)), B(t), weight),
                const_reads=1, unscaled=unscaled)


@case('SoftmaxCrossEntropy', 'soft-target', requires='7')
def _softmax_cross_entropy_soft(d, n):
    c = d.int(1, 4)
    t = d.u(n, c)
    t /= t.sum(axis=1, keepdims=True)
    loss = d.pick(['cross-entropy', 'kl-divergence'])
    reduce, unscaled = _reduce(d)
    return Spec(lambda x, t: F.softmax_cross_entropy(
        x, t, reduce=reduce, soft_target_loss=loss),
        # the epsilon of the KL divergence is a scalar read once
        [B(d.u(n, c)), B(t)], const_reads=int(loss == 'kl-divergence'),
        unscaled=unscaled)


@case('ConnectionistTemporalClassification')
def _ctc(d, n):
    v = d.int(2, 4)
    length = d.int(1, 2)
    steps = 2 * length + d.int(1, 2)
    xs = [B(d.u(n, v)) for _ in range(steps)]
    t = d.ints((n, length), 1, v)
    input_length = np.full((n,), steps, np.int32)
    label_length = np.full((n,), length, np.int32)
    reduce, unscaled = _reduce(d)
    return Spec(lambda xs, t, il, ll: F.connectionist_temporal_classification(
        xs, t, 0, il, ll, reduce),
        [xs, B(t), B(input_length), B(label_length)], unscaled=unscaled)


@case('NegativeSamplingFunction')
def _negative_sampling(d, n):
    v, dim, k = d.int(1, 5), d.int(1, 3), d.int(1, 3)
    reduce = d.pick(['sum', 'no'])
    rng = d.rng

    def sampler(shape):
        return rng.randint(0, v, shape).astype(np.int32)
    unscaled = {
        # at most the V rows of W are read: min(B K D, |W|) is not affine
        'mread': 'min(n (k+1) D, |W|) elements of W are read'}
    if reduce == 'sum':
        unscaled['mwrite'] = ONE_VALUE
    return Spec(lambda x, t, W: F.negative_sampling(x, t, W, sampler, k,
                                                    reduce=reduce),
                [B(d.u(n, dim)), B(d.ints((n,), 0, v)), d.u(v, dim)],
                # the sum over the batch: n - 1 additions
                affine=('flops',), unscaled=unscaled)


# chainer.functions.noise

@case('Dropout')
def _dropout(d, n):
    ratio = d.pick([0.2, 0.5])
    return Spec(lambda x: F.dropout(x, ratio), [B(d.x(n))])


@case('Gaussian')
def _gaussian(d, n):
    x = d.x(n)
    return Spec(F.gaussian, [B(x), B(d.u(*x.shape))])


@case('SimplifiedDropconnect')
def _simplified_dropconnect(d, n):
    m_out, n_in = d.dims(2)
    batchwise = d.bool()
    W, b = d.u(m_out, n_in), _maybe(d, d.u(m_out))
    # the mask is drawn by the function: one per sample (batchwise) or one
    # for the whole batch; masking W (|W| FLOPs once, and the mask) and the
    # ratio (a scalar read once) do not grow with the batch when the mask
    # is shared
    mask = 0 if batchwise else W.size
    fixed = W.size + mask + 1 + (0 if b is None else b.size)

    def f(x, W, b=None):
        return F.simplified_dropconnect(x, W, b, 0.5,
                                        use_batchwise_mask=batchwise)
    return Spec(f, _args(B(d.u(n, n_in)), W, b), fixed_mread=fixed,
                affine=('flops',))


@case('Zoneout')
def _zoneout(d, n):
    x = d.x(n)
    return Spec(lambda h, x: F.zoneout(h, x, 0.5), [B(d.u(*x.shape)), B(x)])


# chainer.functions.math

def _node_class(module, name):
    return getattr(__import__('chainer.functions.math.' + module,
                              fromlist=[name]), name)


def _unary_case(target, fn, lo=0.1, hi=0.9, requires=None):
    @case(target, requires=requires)
    def build(d, n):
        return Spec(fn, [B(d.x(n) * (hi - lo) + lo)])
    return build


def _scipy_unary_case(target, fn, module):
    """An element-wise function whose CPU forward needs SciPy: without it
    the node is costed directly (the output has the input's shape)."""
    @case(target)
    def build(d, n):
        def f(x):
            if HAVE_SCIPY:
                return fn(x)
            return Direct(_node_class(module, target)(), (x,), [x.shape])
        return Spec(f, [B(d.x(n))])
    return build


for _target, _fn in [
        ('Exp', F.exp), ('Expm1', F.expm1), ('Log', F.log),
        ('Log10', F.log10), ('Log1p', F.log1p), ('Log2', F.log2),
        ('Sin', F.sin), ('Cos', F.cos), ('Tan', F.tan),
        ('Arcsin', F.arcsin), ('Arccos', F.arccos), ('Arctan', F.arctan),
        ('Sinh', F.sinh), ('Cosh', F.cosh), ('Sqrt', F.sqrt),
        ('Square', F.square), ('Absolute', F.absolute),
        ('Neg', lambda x: -var(x))]:
    _unary_case(_target, _fn)
_unary_case('Arctanh', lambda x: F.arctanh(x), requires='7')

for _target, _fn, _module in [
        ('Erf', F.erf, 'erf'), ('Erfc', F.erfc, 'erfc'),
        ('Erfcx', F.erfcx, 'erfcx'), ('ErfInv', F.erfinv, 'erfinv'),
        ('ErfcInv', F.erfcinv, 'erfcinv'), ('LGamma', F.lgamma, 'lgamma'),
        ('DiGamma', F.digamma, 'digamma'), ('Ndtr', F.ndtr, 'ndtr'),
        ('Ndtri', F.ndtri, 'ndtri'), ('LogNdtr', F.log_ndtr, 'log_ndtr')]:
    _scipy_unary_case(_target, _fn, _module)


@case('Identity')
def _identity(d, n):
    return Spec(F.identity, [B(d.x(n))],
                writes_outputs='returns its inputs: free by the cost model')


@case('RsqrtGPU')
def _rsqrt_gpu(d, n):
    # created by F.rsqrt on a GPU only: the node is costed directly
    def f(x):
        return Direct(_node_class('sqrt', 'RsqrtGPU')(), (x,), [x.shape])
    return Spec(f, [B(d.x(n))])


def _operand(d, x):
    """A second operand for x: batched like x, or a batch-independent
    array broadcast over the batch (and maybe more axes)."""
    if d.bool():
        return B(d.u(*x.shape))
    tail = x.shape[d.int(1, x.ndim):]
    return d.u(*(1 if d.bool() else s for s in tail))


def _binary_case(target, fn):
    @case(target)
    def build(d, n):
        x = d.x(n)
        return Spec(fn, [B(x), _operand(d, x)])
    return build


for _target, _fn in [
        ('Add', lambda a, b: var(a) + var(b)),
        ('Sub', lambda a, b: var(a) - var(b)),
        ('Mul', lambda a, b: var(a) * var(b)),
        ('Div', lambda a, b: var(a) / var(b)),
        ('PowVarVar', lambda a, b: var(a) ** var(b)),
        ('Maximum', F.maximum), ('Minimum', F.minimum),
        ('Arctan2', F.arctan2), ('Fmod', F.fmod)]:
    _binary_case(_target, _fn)


def _constant_case(target, fn):
    @case(target)
    def build(d, n):
        c = d.pick([0.5, 2.0, 3.0])
        # the scalar constant is read once
        return Spec(lambda x: fn(var(x), c), [B(d.x(n))], const_reads=1)
    return build


for _target, _fn in [
        ('AddConstant', lambda x, c: x + c),
        ('SubFromConstant', lambda x, c: c - x),
        ('MulConstant', lambda x, c: x * c),
        ('DivFromConstant', lambda x, c: c / x),
        ('PowVarConst', lambda x, c: x ** c),
        ('PowConstVar', lambda x, c: c ** x)]:
    _constant_case(_target, _fn)


@case('MultiAdd')
def _multi_add(d, n):
    x = d.x(n)
    xs = [B(x)] + [B(d.u(*x.shape)) for _ in range(d.int(2, 3))]
    return Spec(F.add, xs)


@case('LinearInterpolate')
def _linear_interpolate(d, n):
    x = d.x(n)
    return Spec(F.linear_interpolate,
                [B(x), B(d.u(*x.shape)), B(d.u(*x.shape))])


@case('Clip')
def _clip(d, n):
    lo, hi = 0.3, 0.7
    if CHAINER_MAJOR >= 7:
        lo, hi = d.pick([(0.3, 0.7), (None, 0.7), (0.3, None)])
    # each scalar bound is read once
    bounds = int(lo is not None) + int(hi is not None)
    return Spec(lambda x: F.clip(x, lo, hi), [B(d.x(n))], const_reads=bounds)


@case('PolyGamma')
def _polygamma(d, n):
    x = d.x(n)
    order = d.ints(x.shape, 0, 3)

    def f(order, x):
        if HAVE_SCIPY:
            return F.polygamma(order, x)
        node = _node_class('polygamma', 'PolyGamma')()
        return Direct(node, (order, x), [x.shape])
    return Spec(f, [B(order), B(x)])


@case('Zeta', requires='7')
def _zeta(d, n):
    q = d.x(n)
    x = d.u(*q.shape, lo=1.5, hi=3.0)

    def f(x, q):
        # x is a constant held by the node, q the input
        if HAVE_SCIPY:
            return F.zeta(x, q)
        return Direct(_node_class('zeta', 'Zeta')(x), (q,), [q.shape])
    return Spec(f, [B(x), B(q)])


def _reduction_axes(d, ndim, single=False):
    """Non-batch axes to reduce: an int, or (not single) a tuple."""
    if single or d.bool():
        return d.int(1, ndim - 1)
    axes = d.draw(st.sets(st.integers(1, ndim - 1), min_size=1))
    return tuple(sorted(axes))


def _reduction_case(target, fn, keepdims=True, single=False):
    @case(target)
    def build(d, n):
        x = d.x(n)
        axis = _reduction_axes(d, x.ndim, single)
        kwargs = {'keepdims': d.bool()} if keepdims else {}
        return Spec(lambda x: fn(x, axis, **kwargs), [B(x)])
    return build


for _target, _fn in [('Sum', F.sum), ('Prod', F.prod), ('Max', F.max),
                     ('Min', F.min), ('Mean', F.mean)]:
    _reduction_case(_target, _fn)
_reduction_case('ArgMax', F.argmax, keepdims=False, single=True)
_reduction_case('ArgMin', F.argmin, keepdims=False, single=True)
_reduction_case('LogSumExp', F.logsumexp, keepdims=False)
_reduction_case('Cumsum', F.cumsum, keepdims=False, single=True)
_reduction_case('Cumprod', F.cumprod, keepdims=False, single=True)


@case('SumTo')
def _sum_to(d, n):
    x = d.x(n)
    axis = d.int(1, x.ndim - 1)
    x = np.concatenate([x, x], axis=axis)  # a reduced axis of 2 or more
    shape = [1 if i == axis or (i and d.bool()) else s
             for i, s in enumerate(x.shape)]
    return Spec(lambda x: F.sum_to(x, (x.shape[0],) + tuple(shape[1:])),
                [B(x)])


@case('BatchL2NormSquared')
def _batch_l2_norm_squared(d, n):
    return Spec(F.batch_l2_norm_squared, [B(d.x(n))])


@case('Cumprodsum')
def _cumprodsum(d, n):
    # the backward of cumprod: the multipliers are one shorter along axis
    xadd = d.x(n)
    axis = d.int(1, xadd.ndim - 1)
    xadd = np.concatenate([xadd, xadd], axis=axis)
    xmul = np.delete(d.u(*xadd.shape), 0, axis=axis)

    def f(xmul, xadd):
        return _node_class('cumprod', 'Cumprodsum')(axis).apply(
            (xmul, xadd))
    return Spec(f, [B(xmul), B(xadd)])


@case('MatMul')
def _matmul(d, n):
    p, k, m = d.dims(3)
    transa, transb = d.bool(), d.bool()
    if d.bool():
        # a (n, k) on the batch axis, b (k, m) shared by the batch
        a = B(d.u(k, n), axis=1) if transa else B(d.u(n, k))
        b = d.u(m, k) if transb else d.u(k, m)
    else:
        # batches of matrices
        a = B(d.u(n, k, p) if transa else d.u(n, p, k))
        b = B(d.u(n, m, k) if transb else d.u(n, k, m))
    return Spec(lambda a, b: F.matmul(a, b, transa, transb), [a, b])


@case('BatchMatMul')
def _batch_matmul(d, n):
    p, k, m = d.dims(3)
    transa, transb = d.bool(), d.bool()
    a = d.u(n, k, p) if transa else d.u(n, p, k)
    b = d.u(n, m, k) if transb else d.u(n, k, m)

    def f(a, b):
        # F.batch_matmul is deprecated (a warning): apply the node
        node = _node_class('matmul', 'BatchMatMul')(transa, transb)
        return node.apply((a, b))
    return Spec(f, [B(a), B(b)])


@case('TensorDot')
def _tensordot(d, n):
    p, q, r = d.dims(3)
    a = d.u(n, p, q)
    form = d.pick(['1', '2', 'pairs'])
    if form == '1':
        b, axes = d.u(q, r), 1
    elif form == '2':
        b, axes = d.u(p, q, r), 2
    else:
        b, axes = d.u(r, q), ([2], [1])
    return Spec(lambda a, b: F.tensordot(a, b, axes), [B(a), b])


_EINSUM_FORMS = [
    # (subscripts, operand shapes by label; 'b' is the batch axis)
    'bij,jk->bik', 'bi,bi->b', 'bij->b', 'bij->bji', 'bii->bi',
    'bi,j->bij', 'bi,ij,jk->bk', '...ij,jk->...ik', 'bij,bjk->bik']


@case('EinSum')
def _einsum(d, n):
    form = d.pick(_EINSUM_FORMS)
    dims = {'b': n, 'i': d.int(1, 3), 'j': d.int(1, 3), 'k': d.int(1, 3)}
    operands = []
    for sub in form.split('->')[0].split(','):
        sub = sub.replace('...', 'b')
        shape = tuple(dims[c] for c in sub)
        array = d.u(*shape)
        operands.append(B(array, sub.index('b')) if 'b' in sub else array)
    return Spec(lambda *xs: F.einsum(form, *xs), operands)


_DIAG_EINSUM_FORMS = [
    # (input subscripts, output subscripts)
    ('bi', 'bii'), ('bij', 'bii'), ('bi', 'bij'), ('bik,jk', 'bij'),
    ('bij', 'bi')]


@case('DiagEinSum')
def _diag_einsum(d, n):
    # the backward of einsum (into diagonals or broadcasts)
    in_subs, out_sub = d.pick(_DIAG_EINSUM_FORMS)
    dims = {'b': n, 'i': d.int(1, 3), 'j': d.int(1, 3), 'k': d.int(1, 3)}
    operands = []
    for sub in in_subs.split(','):
        array = d.u(*(dims[c] for c in sub))
        operands.append(B(array) if sub.startswith('b') else array)

    def f(*xs):
        sizes = dict(dims, b=xs[0].shape[0])
        out_shape = tuple(sizes[c] for c in out_sub)
        node = _node_class('einsum', 'DiagEinSum')(in_subs, out_sub,
                                                   out_shape)
        return node.apply(xs)
    return Spec(f, operands)


@case('CooMatMul')
def _coo_matmul(d, n):
    # C = A B with A sparse (M, K) of z stored values; the batch is the
    # columns N of the dense B (its rows with transb)
    m, k = d.dims(2)
    z = d.int(1, m * k)
    flat = d.rng.choice(m * k, z, replace=False)
    row, col = (flat // k).astype(np.int32), (flat % k).astype(np.int32)
    data = d.u(z)
    transb = d.bool()
    b = B(d.u(n, k), axis=0) if transb else B(d.u(k, n), axis=1)

    def f(data, row, col, b):
        if HAVE_SCIPY:
            coo = chainer.utils.CooMatrix(data, row, col, (m, k))
            return F.sparse_matmul(coo, b, transb=transb)
        node = _node_class('sparse_matmul', 'CooMatMul')(
            row, col, (m, k), transb=transb)
        return Direct(node, (data, b),
                      [(m, b.shape[0] if transb else b.shape[1])])
    return Spec(f, [data, row, col, b])


def _square_matrices(d, *batch):
    k = d.int(1, 3)
    return d.u(*batch, k, k) + 2 * np.eye(k, dtype=np.float32)


@case('BatchDet')
def _batch_det(d, n):
    return Spec(F.batch_det, [B(_square_matrices(d, n))])


@case('BatchInv')
def _batch_inv(d, n):
    return Spec(F.batch_inv, [B(_square_matrices(d, n))])


NO_BATCH = 'one matrix: no batch axis'


@case('Inv')
def _inv(d, n):
    return Spec(F.inv, [_square_matrices(d)], batch=NO_BATCH)


@case('Cholesky', requires='7')
def _cholesky(d, n):
    a = _square_matrices(d)
    return Spec(F.cholesky, [a @ a.T], batch=NO_BATCH)


@case('FFT')
def _fft(d, n):
    x = d.x(n)
    fn = d.pick([F.fft, F.ifft])
    return Spec(lambda re, im: fn((re, im)), [B(x), B(d.u(*x.shape))])


# chainer.functions.normalization

RUNNING_STATS = 'the running statistics are updated in place: written too'


def _channels_input(d, n, channels, samples=False):
    """(n, channels, ...); with ``samples``, at least 2 values per channel
    even for a batch of one (batch statistics need them)."""
    spatial = d.dims(d.int(0, 2), hi=3)
    if samples:
        spatial = (d.int(2, 3),) + spatial[1:]
    return d.u(n, channels, *spatial)


@case('BatchNormalization')
def _batch_normalization(d, n):
    c = d.int(1, 3)
    x = _channels_input(d, n, c, samples=True)
    running = d.bool()
    kwargs = {}
    if running:
        kwargs = {'running_mean': d.u(c), 'running_var': d.u(c),
                  'decay': 0.9}
    # the per-channel statistics (and running updates) do not grow with
    # the batch; decay is a scalar read once by the running updates
    return Spec(lambda x, g, b, kw: F.batch_normalization(x, g, b, **kw),
                [B(x), d.u(c), d.u(c), kwargs], const_reads=int(running),
                affine=('flops', 'mwrite'),
                writes_outputs=RUNNING_STATS if running else True)


@case('FixedBatchNormalization')
def _fixed_batch_normalization(d, n):
    c = d.int(1, 3)
    x = _channels_input(d, n, c)
    # the cost model folds gamma, beta, mean and var into one scale and one
    # shift per channel: 2C batch-independent reads (not 4C)
    return Spec(F.fixed_batch_normalization,
                [B(x), d.u(c), d.u(c), d.u(c), d.u(c)], fixed_mread=2 * c)


@case('BatchRenormalizationFunction')
def _batch_renormalization(d, n):
    c = d.int(1, 3)
    x = _channels_input(d, n, c, samples=True)
    update = d.bool()

    def f(x, g, b, mean, var):
        return F.batch_renormalization(x, g, b, 2.0, 1.0, running_mean=mean,
                                       running_var=var,
                                       update_statistics=update)
    # decay is a scalar read once by the running updates
    return Spec(f, [B(x), d.u(c), d.u(c), d.u(c), d.u(c)],
                const_reads=int(update), affine=('flops', 'mwrite'),
                writes_outputs=RUNNING_STATS if update else True)


@case('DecorrelatedBatchNormalization')
def _decorrelated_batch_normalization(d, n):
    g, c = d.int(1, 2), d.int(1, 2)
    x = _channels_input(d, n, g * c, samples=True)
    kwargs = {'groups': g}
    if d.bool():
        kwargs['running_mean'] = d.u(g, c)
    if d.bool():
        kwargs['running_projection'] = d.u(g, c, c)
    running = len(kwargs) > 1

    def f(x, kw):
        # a batch of one has no covariance: not this test's business
        with np.errstate(divide='ignore', invalid='ignore'):
            return F.decorrelated_batch_normalization(x, **kw)
    # the covariance, its eigendecomposition and the running updates do not
    # grow with the batch; decay is a scalar read once by the updates
    return Spec(f, [B(x), kwargs], const_reads=int(running),
                affine=('flops', 'mwrite'),
                writes_outputs=RUNNING_STATS if running else True)


@case('FixedDecorrelatedBatchNormalization')
def _fixed_decorrelated_batch_normalization(d, n):
    g, c = d.int(1, 2), d.int(1, 2)
    x = _channels_input(d, n, g * c)
    return Spec(lambda x, m, p: F.fixed_decorrelated_batch_normalization(
        x, m, p, g), [B(x), d.u(g, c), d.u(g, c, c)])


@case('GroupNormalization')
def _group_normalization(d, n):
    g, c = d.int(1, 2), d.int(1, 2)
    x = _channels_input(d, n, g * c)
    return Spec(lambda x, gamma, beta: F.group_normalization(x, g, gamma,
                                                             beta),
                [B(x), d.u(g * c), d.u(g * c)])


@case('LayerNormalization')
def _layer_normalization(d, n):
    c = d.int(1, 4)
    return Spec(F.layer_normalization, [B(d.u(n, c)), d.u(c), d.u(c)])


@case('LocalResponseNormalization')
def _local_response_normalization(d, n):
    x = _channels_input(d, n, d.int(1, 6))
    window = d.pick([1, 3, 5])
    # k, alpha and beta are scalars read once
    return Spec(lambda x: F.local_response_normalization(x, window), [B(x)],
                const_reads=3)


@case('NormalizeL2')
def _normalize_l2(d, n):
    x = d.x(n)
    axis = _non_batch_axis(d, x.ndim)
    return Spec(lambda x: F.normalize(x, axis=axis), [B(x)])


# chainer.functions.pooling

def _pool_window(d, cover_all=False):
    k, s = d.int(1, 3), d.int(1, 2)
    p = d.int(0, k // 2)
    size = d.int(max(1, k - 2 * p), max(1, k - 2 * p) + 2)
    return k, s, p, size


def _pool_windows(d, ndim):
    windows = [_pool_window(d) for _ in range(ndim)]
    return tuple(tuple(w[i] for w in windows) for i in range(4))


@case('AveragePooling2D')
def _average_pooling_2d(d, n):
    k, s, p, size = _pool_windows(d, 2)
    return Spec(lambda x: F.average_pooling_2d(x, k, s, p),
                [B(d.u(n, d.int(1, 2), *size))])


@case('AveragePoolingND')
def _average_pooling_nd(d, n):
    k, s, p, size = _pool_windows(d, d.int(1, 3))
    return Spec(lambda x: F.average_pooling_nd(x, k, s, p),
                [B(d.u(n, d.int(1, 2), *size))])


@case('MaxPoolingND')
def _max_pooling_nd(d, n):
    ndim = d.int(1, 3)
    k, s, p, size = _pool_windows(d, ndim)
    cover_all = d.bool()
    return Spec(lambda x: F.max_pooling_nd(x, k, s, p, cover_all),
                [B(d.u(n, d.int(1, 2), *size))])


@case('MaxPooling2D', requires='6')
def _max_pooling_2d(d, n):
    k, s, p, size = _pool_windows(d, 2)
    cover_all = d.bool()
    return Spec(lambda x: F.max_pooling_2d(x, k, s, p, cover_all),
                [B(d.u(n, d.int(1, 2), *size))])


@case('MaxPoolingNDWithIndexes')
def _max_pooling_nd_with_indexes(d, n):
    # the double backward of max pooling: gathers x at the argmax indexes
    # of a max pooling of x (the MaxPoolingND call is not the target)
    ndim = d.int(1, 3)
    k, s, p, size = _pool_windows(d, ndim)
    cover_all = d.bool()
    from chainer.functions.pooling import max_pooling_nd

    def f(x):
        pool = max_pooling_nd.MaxPoolingND(ndim, k, s, p, cover_all)
        pool.apply((x,))
        return max_pooling_nd.MaxPoolingNDWithIndexes(pool).apply((x,))
    return Spec(f, [B(d.u(n, d.int(1, 2), *size))])


@case('MaxPooling2DWithIndexes', requires='6')
def _max_pooling_2d_with_indexes(d, n):
    # Chainer 6's double backward of 2-D max pooling
    k, s, p, size = _pool_windows(d, 2)
    cover_all = d.bool()
    from chainer.functions.pooling import max_pooling_2d

    def f(x):
        pool = max_pooling_2d.MaxPooling2D(k, s, p, cover_all)
        pool.apply((x,))
        return max_pooling_2d.MaxPooling2DWithIndexes(pool).apply((x,))
    return Spec(f, [B(d.u(n, d.int(1, 2), *size))])


def _rois(d, n, h, w, with_index_column=False, n_images=1):
    """n regions (the batch of the ROI functions) in an image of h x w."""
    y0, x0 = d.u(n, lo=0, hi=h / 2), d.u(n, lo=0, hi=w / 2)
    y1, x1 = y0 + d.u(n, lo=0.5, hi=h / 2), x0 + d.u(n, lo=0.5, hi=w / 2)
    index = d.ints((n,), 0, n_images)
    if with_index_column:
        # ROIPooling2D: (index, x_min, y_min, x_max, y_max)
        return np.stack([index.astype(np.float32), x0, y0, x1, y1], axis=1)
    return np.stack([y0, x0, y1, x1], axis=1), index


def _roi_case(target, fn, align=False, writes_outputs=True):
    @case(target)
    def build(d, n):
        images, c = d.int(1, 2), d.int(1, 2)
        h, w = d.dims(2, lo=2, hi=4)
        outsize = d.dims(2, hi=3)
        x = d.u(images, c, h, w)
        rois, index = _rois(d, n, h, w, n_images=images)
        kwargs = {}
        if align:
            kwargs['sampling_ratio'] = d.pick([None, 1, 2])
        # x is shared by the regions; the spatial scale is a scalar read
        # once
        return Spec(lambda x, r, i: fn(x, r, i, outsize, 1.0, **kwargs),
                    [x, B(rois), B(index)], const_reads=1,
                    writes_outputs=writes_outputs)
    return build


ARGMAX = 'the argmax indexes kept for backward are written too'
_roi_case('ROIMaxPooling2D', F.roi_max_pooling_2d, writes_outputs=ARGMAX)
_roi_case('ROIAveragePooling2D', F.roi_average_pooling_2d)
_roi_case('ROIMaxAlign2D', F.roi_max_align_2d, align=True,
          writes_outputs=ARGMAX)
_roi_case('ROIAverageAlign2D', F.roi_average_align_2d, align=True)


@case('ROIPooling2D')
def _roi_pooling_2d(d, n):
    images, c = d.int(1, 2), d.int(1, 2)
    h, w = d.dims(2, lo=2, hi=4)
    outh, outw = d.dims(2, hi=3)
    x = d.u(images, c, h, w)
    rois = _rois(d, n, h, w, with_index_column=True, n_images=images)
    # x is shared by the regions; the spatial scale is a scalar read once
    return Spec(lambda x, r: F.roi_pooling_2d(x, r, outh, outw, 1.0),
                [x, B(rois)], const_reads=1, writes_outputs=ARGMAX)


def _unpool_window(d):
    k, s = d.int(1, 3), d.int(1, 2)
    cover_all = d.bool()
    size = d.int(1, 3)
    p = d.int(0, min((k - 1) // 2, size - 1))
    if cover_all and s * (size - 1) + k - s + 1 - 2 * p < 1:
        cover_all = False
    return k, s, p, size, cover_all


@case('Unpooling2D')
def _unpooling_2d(d, n):
    (kh, sy, ph, h, ca), (kw, sx, pw, w, cb) = (_unpool_window(d),
                                                _unpool_window(d))
    cover_all = ca and cb
    return Spec(lambda x: F.unpooling_2d(x, (kh, kw), (sy, sx), (ph, pw),
                                         cover_all=cover_all),
                [B(d.u(n, d.int(1, 2), h, w))])


@case('UnpoolingND')
def _unpooling_nd(d, n):
    windows = [_unpool_window(d) for _ in range(d.int(1, 3))]
    k, s, p, size, cover = (tuple(w[i] for w in windows) for i in range(5))
    cover_all = all(cover)
    return Spec(lambda x: F.unpooling_nd(x, k, s, p, cover_all=cover_all),
                [B(d.u(n, d.int(1, 2), *size))])


def _upsampling_inputs(d, n):
    """x, indexes and the window (k, s, p, size, cover_all) of a random
    upsampling (also drawn by the case of its gradient); the indexes come
    from a real max pooling of an (n, c, h, w) input."""
    k, s, p, size = _pool_windows(d, 2)
    cover_all = d.bool()
    c = d.int(1, 2)
    _, indexes = F.max_pooling_2d(d.u(n, c, *size), k, s, p, cover_all,
                                  return_indices=True)
    return d.u(*indexes.shape), indexes, (k, s, p, size, cover_all)


@case('Upsampling2D')
def _upsampling_2d(d, n):
    x, indexes, (k, s, p, size, cover_all) = _upsampling_inputs(d, n)
    return Spec(lambda x, i: F.upsampling_2d(x, i, k, s, p, size, cover_all),
                [B(x), B(indexes)])


# chainer.functions.rnn

@case('LSTM')
def _lstm(d, n):
    h = d.int(1, 3)
    return Spec(F.lstm, [B(d.u(n, h)), B(d.u(n, 4 * h))])


@case('SLSTM')
def _slstm(d, n):
    h = d.int(1, 3)
    return Spec(F.slstm, [B(d.u(n, h)), B(d.u(n, h)), B(d.u(n, 4 * h)),
                          B(d.u(n, 4 * h))])


@case('TreeLSTM')
def _tree_lstm(d, n):
    h, children = d.int(1, 3), d.int(1, 3)
    cs = [B(d.u(n, h)) for _ in range(children)]
    return Spec(F.tree_lstm, cs + [B(d.u(n, (3 + children) * h))])


def _calculator_class(name):
    from chainer_computational_cost.cost_calculators import calculators
    cls, = [c for c in calculators if c.__name__ == name]
    return cls


def _cudnn_node(name, n_layers):
    # the constructors of the cuDNN-only classes need cuDNN
    cls = _calculator_class(name)
    node = cls.__new__(cls)
    node.n_layers = n_layers
    return node


def _rnn_weights(d, n_w, n_layers, directions, units, in_size):
    ws, bs = [], []
    for layer in range(n_layers):
        layer_in = in_size if layer == 0 else directions * units
        for _ in range(directions):
            ws.append([d.u(units, layer_in if i < n_w // 2 else units)
                       for i in range(n_w)])
            bs.append([d.u(units) for _ in range(n_w)])
    return ws, bs


def _n_step_case(target, fn, n_w, directions, cell=False, **kwargs):
    """A cuDNN NStep RNN: the node is costed directly on its inputs laid
    out for cuDNN (hx, [cx,] w, the concatenated xs); the real output
    shapes come from the CPU implementation of the same function."""
    @case(target)
    def build(d, n):
        layers, units, in_size = d.int(1, 2), d.int(1, 3), d.int(1, 3)
        ws, bs = _rnn_weights(d, n_w, layers, directions, units, in_size)
        hx = d.u(layers * directions, n, units)
        cx = d.u(*hx.shape) if cell else None
        xs = [d.u(d.int(1, 3), in_size) for _ in range(n)]

        def f(hx, cx, ws, bs, seqs):
            # time-major: xs[t] holds step t of the sequences longer than t
            seqs = sorted(seqs, key=len, reverse=True)
            xs = [np.stack([q[t] for q in seqs if len(q) > t])
                  for t in range(len(seqs[0]))]
            w = np.zeros((sum(a.size for a in sum(ws + bs, [])), 1, 1),
                         np.float32)
            states = (hx,) if cx is None else (hx, cx)

            def outputs():
                out = fn(layers, 0.0, *states, ws, bs, xs, **kwargs)
                return list(out[:-1]) + list(out[-1])
            return Direct(_cudnn_node(target, layers),
                          states + (w, np.concatenate(xs)), outputs)
        return Spec(f, [B(hx, axis=1), None if cx is None else B(cx, 1),
                        ws, bs, R(xs)])
    return build


_n_step_case('NStepRNNTanh', F.n_step_rnn, 2, 1, activation='tanh')
_n_step_case('NStepRNNReLU', F.n_step_rnn, 2, 1, activation='relu')
_n_step_case('NStepBiRNNTanh', F.n_step_birnn, 2, 2, activation='tanh')
_n_step_case('NStepBiRNNReLU', F.n_step_birnn, 2, 2, activation='relu')
_n_step_case('NStepGRU', F.n_step_gru, 6, 1)
_n_step_case('NStepBiGRU', F.n_step_bigru, 6, 2)
_n_step_case('NStepLSTM', F.n_step_lstm, 8, 1, cell=True)
_n_step_case('NStepBiLSTM', F.n_step_bilstm, 8, 2, cell=True)


@case('CudnnRNNWeightConcat')
def _cudnn_rnn_weight_concat(d, n):
    # packs the weights of an NStep RNN into one flat array (cuDNN only)
    layers = d.int(1, 2)
    ws, bs = _rnn_weights(d, d.pick([2, 6, 8]), layers, d.int(1, 2),
                          d.int(1, 3), d.int(1, 3))
    arrays = sum(ws, []) + sum(bs, [])

    def f(*arrays):
        total = sum(a.size for a in arrays)
        return Direct(_cudnn_node('CudnnRNNWeightConcat', layers), arrays,
                      [(total, 1, 1)])
    return Spec(f, arrays, batch='weights only: no batch axis')


# chainer.functions.util

@case('Forget')
def _forget(d, n):
    x = d.x(n)

    def f(a, b):
        return F.forget(lambda a, b: a * b + a, a, b)
    return Spec(f, [B(x), B(d.u(*x.shape))],
                writes_outputs='free by the cost model: the functions it '
                               'calls are costed')


# The cases of gradient classes live in modules of their own,
# tests/property_cases_<calculator module>.py, which import ``case`` and the
# markers from here; each registers its cases when imported.
def _import_more_cases():
    import glob
    import importlib
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, 'property_cases_*.py'))):
        importlib.import_module(os.path.basename(path)[:-3])


_import_more_cases()
