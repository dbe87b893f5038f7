"""Random small Chainer graphs for the fuzz test (``test_hook_fuzz.py``).

:func:`draw_program` makes the :class:`Program` of a seed: a
batch size (0 included), a dtype, a few input arrays and a sequence of
steps, each a call of a function (or link) of :data:`CATEGORIES` on values
computed before it, and what to do after the forward pass (nothing, the
forward only without backprop, ``chainer.grad``, ``Variable.backward`` or a
double backprop).  The steps are chosen by running them while drawing (a
dry run): a step Chainer refuses (a zero-size array it cannot take, a
window larger than its image...) is not taken, so the forward pass of
every program runs.

:func:`run` replays a program from scratch (new Variables, new links, the
NumPy random state seeded by the program) and returns every array it
computed, so that two runs can be compared bit by bit.
"""

import collections
import warnings

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
from chainer.functions.activation.relu import ReLU


FLOATS = (np.float16, np.float32, np.float64)

#: What a program does after its forward pass.
MODES = ('forward', 'nobackprop', 'grad', 'backward', 'double')


# The test's own function classes

class OldAffine(chainer.Function):
    """An old-style Function, y = a x + b; the fuzz test gives it a custom
    cost calculator."""

    def __init__(self, a, b):
        self.a = a
        self.b = b

    # np.asarray: NumPy gives scalars for 0-d arrays, Chainer wants arrays

    def forward(self, inputs):
        x, = inputs
        return np.asarray(x * self.a + self.b, x.dtype),

    def backward(self, inputs, grad_outputs):
        gy, = grad_outputs
        return np.asarray(gy * self.a, gy.dtype),


def old_affine_cost(func, in_data, **kwargs):
    """Custom cost calculator of :class:`OldAffine`: one multiply-add per
    element."""
    x = in_data[0]
    return (x.size, x.size, x.size, {'a': func.a, 'b': func.b})


class OldPair(chainer.Function):
    """An old-style Function with two outputs (x * x, x + 1) and no cost
    calculator: it must be ignored, never break the run.  One output is
    often left unused, so its backward gets None gradients."""

    def forward(self, inputs):
        x, = inputs
        return np.asarray(x * x), np.asarray(x + 1, x.dtype)

    def backward(self, inputs, grad_outputs):
        x, = inputs
        g0, g1 = grad_outputs
        gx = np.zeros_like(x)
        if g0 is not None:
            gx += 2 * x * g0
        if g1 is not None:
            gx += g1
        return np.asarray(gx),


class FuzzReLU(ReLU):
    """A user subclass of a built-in node: costed by ReLU's calculator."""


#: The test's own classes that have no calculator (ignored by design).
OWN_UNCOSTED = ('OldPair',)


# Drawing

class Draw(object):
    """Every random choice of a program, from one NumPy generator.

    Hypothesis draws only the seed: drawn through hypothesis, the choices
    lean hard towards the smallest values (the first op of each category
    ran most of the time, some ops almost never); uniform choices cover
    the catalogue evenly, and a seed replays a program exactly.
    """

    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def int(self, lo, hi):
        """An integer in [lo, hi]."""
        return int(self.rng.randint(lo, hi + 1))

    def bool(self):
        """True or False."""
        return self.int(0, 1) == 1

    def pick(self, values):
        """One item of ``values``."""
        values = list(values)
        return values[self.int(0, len(values) - 1)]

    def permutation(self, values):
        """The items of ``values`` in a random order."""
        values = list(values)
        return [values[k] for k in self.rng.permutation(len(values))]

    def sample(self, values, k):
        """``k`` distinct items of ``values``, in their order."""
        keep = sorted(self.rng.permutation(len(values))[:k])
        return [values[i] for i in keep]

    def u(self, shape, dtype, lo=-1.0, hi=1.0):
        """An array of uniform values in [lo, hi)."""
        return self.rng.uniform(lo, hi, shape).astype(dtype)

    def ints(self, shape, lo, hi):
        """Integers in [lo, hi) (int32)."""
        return self.rng.randint(lo, hi, shape).astype(np.int32)

    def mask(self, shape):
        """A boolean array, each item True with probability 1/2 (all False
        happens: an empty selection)."""
        return self.rng.uniform(size=shape) < 0.5


class Step(object):
    """One call: ``fn(ctx, *values)`` returns the step's output Variables;
    ``double`` says whether they support a double backprop."""

    def __init__(self, name, fn, inputs, double):
        self.name = name
        self.fn = fn
        self.inputs = tuple(inputs)
        self.double = double
        self.out_meta = ()


class Program(object):
    """A drawn graph: see the module docstring."""

    def __init__(self, dtype, n, train, random_seed):
        self.dtype = dtype
        self.n = n
        self.train = train
        # NumPy's global random state is seeded with it before each run:
        # dropout, rrelu, gaussian noise and link initialisers draw from it
        self.random_seed = random_seed
        self.inputs = []
        self.steps = []
        self.mode = 'forward'
        self.outputs = []
        self.grad_outputs = []
        # Options of the hooked run (see test_hook_fuzz.py).
        self.fma = True
        self.measure_time = False
        self.nested = False
        self.program_seed = None

    @property
    def uses_links(self):
        """Whether a step calls a link."""
        return any(s.name.startswith('L.') for s in self.steps)

    def describe(self):
        """A readable listing, for failure messages."""
        lines = ['program {}: dtype={} n={} train={} mode={} fma={} '
                 'time={} nested={}'.format(
                     self.program_seed, np.dtype(self.dtype).name, self.n,
                     self.train, self.mode, self.fma, self.measure_time,
                     self.nested)]
        k = 0
        for a in self.inputs:
            lines.append('v{} = input {} {}'.format(k, a.shape,
                                                    a.dtype.name))
            k += 1
        for s in self.steps:
            outs = []
            for shape, dtype in s.out_meta:
                outs.append('v{} {} {}'.format(k, shape, dtype))
                k += 1
            lines.append('{} = {}({})'.format(
                ', '.join(outs) or '()', s.name,
                ', '.join('v{}'.format(i) for i in s.inputs)))
        lines.append('outputs: {}'.format(
            ', '.join('v{}{}'.format(i, '' if g is None else '*gy')
                      for i, g in zip(self.outputs, self.grad_outputs))))
        return '\n'.join(lines)


class Context(object):
    """Per-run state of a program: the parameters and links its steps
    create, and the arrays they change in place."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.params = []
        self.links = []
        self.states = []
        self.current = None
        self._links = {}

    def param(self, array):
        """A new trainable Variable holding a copy of ``array``."""
        v = chainer.Variable(array.copy(), requires_grad=True)
        self.params.append(v)
        return v

    def state(self, array):
        """A copy of ``array`` that the step may change in place (running
        statistics): compared between runs too."""
        a = array.copy()
        self.states.append(a)
        return a

    def link(self, make):
        """The link of the current step, made by ``make()`` on first use
        (its initialisers draw from the seeded NumPy random state)."""
        link = self._links.get(self.current)
        if link is None:
            link = self._links[self.current] = make()
            self.links.append((self.current, link))
        return link


class Builder(object):
    """Draws the steps of a program, running each on the dry-run values."""

    def __init__(self, d, program):
        self.d = d
        self.p = program
        self.values = []
        self.ctx = Context(program.dtype)

    # Values

    def add_input(self, array):
        """A new input of the program (a leaf Variable in each run)."""
        self.p.inputs.append(array)
        self.values.append(chainer.Variable(array.copy(),
                                            requires_grad=True))

    def shape(self, i):
        """The shape of value ``i``."""
        return self.values[i].shape

    def dtype(self, i):
        """The dtype of value ``i``."""
        return self.values[i].dtype

    def floats(self, pred=None, dtype=None):
        """Indices of float values (of ``dtype``) whose shape satisfies
        ``pred``."""
        return [i for i, v in enumerate(self.values)
                if v.dtype.kind == 'f'
                and (dtype is None or v.dtype == dtype)
                and (pred is None or pred(v.shape))]

    def pick(self, candidates):
        """One of ``candidates`` (None if empty), often a recent one: chains
        get deep, not only wide."""
        if not candidates:
            return None
        if len(candidates) > 2 and self.d.bool():
            candidates = candidates[-2:]
        return self.d.pick(candidates)

    def x(self, pred=None):
        """A float value whose shape satisfies ``pred`` (None if none)."""
        return self.pick(self.floats(pred))

    def u(self, shape, dtype=None, lo=-1.0, hi=1.0):
        """A constant array, in the program's dtype by default."""
        return self.d.u(shape, self.p.dtype if dtype is None else dtype,
                        lo, hi)

    # Steps

    def apply(self, name, fn, inputs, double=True):
        """Run ``fn`` on the dry-run values, record it as a step and return
        the indices of its outputs."""
        step = Step(name, fn, inputs, double)
        ctx = self.ctx
        ctx.current = len(self.p.steps)
        saved = (list(ctx.params), list(ctx.states), list(ctx.links),
                 dict(ctx._links))
        try:
            outs = _call(step, ctx, self.values)
        except Exception as e:
            # Chainer refuses these inputs (a zero-size array, a window
            # larger than the image...): the dry run is the judge of what
            # a function accepts, so the step is not taken.  (A mistake in
            # an op would be refused too: TAKEN shows that each op runs.)
            ctx.params, ctx.states, ctx.links, ctx._links = saved
            REJECTED[name.split('(')[0], type(e).__name__] += 1
            raise Rejected(name) from e
        TAKEN[name.split('(')[0]] += 1
        step.out_meta = tuple((o.shape, o.dtype.name) for o in outs)
        self.p.steps.append(step)
        first = len(self.values)
        self.values.extend(outs)
        return list(range(first, len(self.values)))


def _call(step, ctx, values):
    # links create (and lazily initialise) their parameters in the
    # configured dtype: the program's
    with chainer.using_config('dtype', np.dtype(ctx.dtype)):
        out = step.fn(ctx, *[values[i] for i in step.inputs])
    if not isinstance(out, (tuple, list)):
        out = (out,)
    return tuple(chainer.as_variable(o) for o in out)


class Rejected(Exception):
    """A step the dry run refused."""


#: (op, exception type) -> steps refused, to spot an op that never runs.
REJECTED = collections.Counter()
#: op -> steps taken.
TAKEN = collections.Counter()


# The catalogue: CATEGORIES maps a category to its ops; an op takes a
# Builder and either applies one step or returns None when no value suits
# it.

CATEGORIES = {}


def op(category):
    """Register the decorated op in ``category``."""
    def register(f):
        CATEGORIES.setdefault(category, []).append(f)
        return f
    return register


def _unary(name, fn, double=True):
    def build(b):
        i = b.x()
        return b.apply(name, lambda c, x: fn(x), [i], double)
    build.__name__ = name
    op('elementwise')(build)


for _name, _fn in [
        ('relu', F.relu), ('sigmoid', F.sigmoid), ('tanh', F.tanh),
        ('leaky_relu', lambda x: F.leaky_relu(x, 0.2)), ('elu', F.elu),
        ('softplus', F.softplus),
        ('clipped_relu', lambda x: F.clipped_relu(x, 0.5)),
        ('hard_sigmoid', F.hard_sigmoid), ('absolute', F.absolute),
        ('neg', lambda x: -x), ('x*1.5', lambda x: x * 1.5),
        ('x+0.5', lambda x: x + 0.5), ('1-x', lambda x: 1.0 - x),
        ('x/3', lambda x: x / 3.0),
        ('1/(x*x+1)', lambda x: 1.0 / (x * x + 1.0)),
        ('x**2', lambda x: x ** 2), ('2**x', lambda x: 2.0 ** x),
        ('square', F.square), ('sqrt(x*x+1)', lambda x: F.sqrt(x * x + 1)),
        ('exp(tanh)', lambda x: F.exp(F.tanh(x))),
        ('log(|x|+1)', lambda x: F.log(F.absolute(x) + 1.0)),
        ('sin', F.sin), ('cos', F.cos),
        ('clip', lambda x: F.clip(x, -0.5, 0.5)),
        ('FuzzReLU', lambda x: FuzzReLU().apply((x,))[0])]:
    _unary(_name, _fn)
_unary('OldAffine', lambda x: OldAffine(1.5, 0.5)(x), double=False)


def _axis(b, ndim):
    return b.d.int(0, ndim - 1)


@op('elementwise')
def _softmax(b):
    i = b.x(lambda s: len(s) >= 2)
    if i is None:
        return None
    axis = _axis(b, len(b.shape(i)))
    fn = b.d.pick([F.softmax, F.log_softmax])
    return b.apply('{}(axis={})'.format(fn.__name__, axis),
                   lambda c, x: fn(x, axis), [i])


@op('elementwise')
def _cumsum(b):
    i = b.x()
    axis = b.d.pick([None] + list(range(len(b.shape(i)))))
    return b.apply('cumsum(axis={})'.format(axis),
                   lambda c, x: F.cumsum(x, axis), [i])


def _suffix(b, shape):
    """A shape that broadcasts to ``shape`` without changing it: a suffix
    of it with some axes of size 1."""
    k = b.d.int(0, len(shape))
    return tuple(1 if b.d.bool() else s for s in shape[len(shape) - k:])


@op('elementwise')
def _with_array(b):
    i = b.x()
    a = b.u(_suffix(b, b.shape(i)), b.dtype(i))
    kind = b.d.pick(['+', '*', '-'])
    fns = {'+': lambda x: x + a, '*': lambda x: x * a, '-': lambda x: a - x}
    return b.apply('x{}array{}'.format(kind, a.shape),
                   lambda c, x: fns[kind](x), [i])


@op('elementwise')
def _with_param(b):
    i = b.x()
    a = b.u(_suffix(b, b.shape(i)), b.dtype(i))
    kind = b.d.pick(['+', '*'])

    def f(c, x):
        p = c.param(a)
        return x + p if kind == '+' else x * p
    return b.apply('x{}param{}'.format(kind, a.shape), f, [i])


@op('elementwise')
def _prelu_swish(b):
    i = b.x(lambda s: len(s) >= 2)
    if i is None:
        return None
    shape = b.shape(i)
    w = b.u(shape[1:1 + b.d.int(1, len(shape) - 1)], b.dtype(i))
    fn = b.d.pick([F.prelu, F.swish])
    return b.apply('{}(W{})'.format(fn.__name__, w.shape),
                   lambda c, x: fn(x, c.param(w)), [i])


@op('elementwise')
def _bias_scale(b):
    i = b.x(lambda s: len(s) >= 2)
    if i is None:
        return None
    shape = b.shape(i)
    w = b.u(shape[1:1 + b.d.int(1, len(shape) - 1)], b.dtype(i))
    fn = b.d.pick([F.bias, F.scale])
    return b.apply('{}(W{})'.format(fn.__name__, w.shape),
                   lambda c, x: fn(x, c.param(w), 1), [i])


@op('elementwise')
def _normalize(b):
    i = b.x(lambda s: len(s) >= 2)
    if i is None:
        return None
    axis = b.d.int(1, len(b.shape(i)) - 1)
    return b.apply('normalize(axis={})'.format(axis),
                   lambda c, x: F.normalize(x, axis=axis), [i])


# Arithmetic between values (broadcasting included)

def _broadcastable(s, t):
    try:
        np.broadcast_shapes(s, t)
    except ValueError:
        return False
    return True


@op('arithmetic')
def _binary(b):
    i = b.x()
    j = b.pick(b.floats(lambda s: _broadcastable(s, b.shape(i)),
                        b.dtype(i)))
    kind = b.d.pick(['+', '-', '*', '/'])
    fns = {'+': lambda x, y: x + y, '-': lambda x, y: x - y,
           '*': lambda x, y: x * y, '/': lambda x, y: x / (y * y + 1.0)}
    return b.apply('x{}y'.format(kind),
                   lambda c, x, y: fns[kind](x, y), [i, j])


def _same_shape(b, i):
    return b.pick(b.floats(lambda s: s == b.shape(i), b.dtype(i)))


@op('arithmetic')
def _max_min(b):
    i = b.x()
    j = _same_shape(b, i)
    fn = b.d.pick([F.maximum, F.minimum])
    return b.apply(fn.__name__, lambda c, x, y: fn(x, y), [i, j])


@op('arithmetic')
def _where(b):
    i = b.x()
    j = _same_shape(b, i)
    cond = b.d.mask(b.shape(i))
    return b.apply('where', lambda c, x, y: F.where(cond, x, y), [i, j])


@op('arithmetic')
def _matmul_self(b):
    i = b.x(lambda s: len(s) in (2, 3))
    if i is None:
        return None
    if len(b.shape(i)) == 2:
        return b.apply('matmul(x, x.T)',
                       lambda c, x: F.matmul(x, x, transb=True), [i])
    return b.apply('matmul(x.T, x)',
                   lambda c, x: F.matmul(x, x, transa=True), [i])


@op('arithmetic')
def _matmul_param(b):
    i = b.x(lambda s: len(s) in (2, 3))
    if i is None:
        return None
    shape = b.shape(i)
    m = b.d.int(1, 3)
    transb = b.d.bool()
    w = (m, shape[-1]) if transb else (shape[-1], m)
    w = b.u(shape[:-2] + w, b.dtype(i))
    return b.apply('matmul(x, W{}, transb={})'.format(w.shape, transb),
                   lambda c, x: F.matmul(x, c.param(w), transb=transb),
                   [i])


@op('arithmetic')
def _tensordot(b):
    i = b.x(lambda s: len(s) >= 2)
    if i is None:
        return None
    w = b.u(b.shape(i)[-1:] + (b.d.int(1, 3),), b.dtype(i))
    return b.apply('tensordot(x, W{})'.format(w.shape),
                   lambda c, x: F.tensordot(x, c.param(w), axes=1), [i])


@op('arithmetic')
def _linear(b):
    i = b.x(lambda s: len(s) == 2)
    if i is None:
        return None
    k, m = b.shape(i)[1], b.d.int(1, 4)
    w = b.u((m, k), b.dtype(i))
    bias = b.u((m,), b.dtype(i)) if b.d.bool() else None

    def f(c, x):
        return F.linear(x, c.param(w),
                        None if bias is None else c.param(bias))
    return b.apply('linear(W{}, bias={})'.format(w.shape, bias is not None),
                   f, [i])


@op('arithmetic')
def _linear_link(b):
    i = b.x(lambda s: len(s) >= 2)
    if i is None or b.dtype(i) != b.p.dtype:
        return None
    in_size = np.prod(b.shape(i)[1:], dtype=int)
    lazy, nobias, m = b.d.bool(), b.d.bool(), b.d.int(1, 4)

    def f(c, x):
        return c.link(lambda: L.Linear(None if lazy else int(in_size), m,
                                       nobias=nobias))(x)
    return b.apply('L.Linear(lazy={}, nobias={})'.format(lazy, nobias),
                   f, [i])


# Reductions

def _reduce_axes(b, shape, single=False):
    """None (all), one axis or (unless ``single``) a tuple of axes."""
    kinds = ['none', 'one'] if single or not shape else [
        'none', 'one', 'tuple']
    if not shape:
        return None
    kind = b.d.pick(kinds)
    if kind == 'none':
        return None
    if kind == 'one':
        return b.d.int(0, len(shape) - 1)
    axes = [a for a in range(len(shape)) if b.d.bool()]
    return tuple(axes) or (0,)


def _reduced_size(shape, axis):
    if axis is None:
        axis = tuple(range(len(shape)))
    elif not isinstance(axis, tuple):
        axis = (axis,)
    return int(np.prod([shape[a] for a in axis], dtype=int))


@op('reduction')
def _sum_mean(b):
    i = b.x()
    axis = _reduce_axes(b, b.shape(i))
    keepdims = b.d.bool()
    fn = b.d.pick([F.sum, F.mean])
    return b.apply('{}(axis={}, keepdims={})'.format(fn.__name__, axis,
                                                     keepdims),
                   lambda c, x: fn(x, axis=axis, keepdims=keepdims), [i])


@op('reduction')
def _max_min_prod(b):
    i = b.x()
    shape = b.shape(i)
    axis = _reduce_axes(b, shape)
    fn = b.d.pick([F.max, F.min, F.prod])
    if fn is not F.prod and _reduced_size(shape, axis) == 0:
        return None  # NumPy: a zero-size reduction has no maximum
    keepdims = b.d.bool()
    return b.apply('{}(axis={}, keepdims={})'.format(fn.__name__, axis,
                                                     keepdims),
                   lambda c, x: fn(x, axis=axis, keepdims=keepdims), [i])


@op('reduction')
def _logsumexp(b):
    i = b.x()
    axis = _reduce_axes(b, b.shape(i))
    if _reduced_size(b.shape(i), axis) == 0:
        return None
    return b.apply('logsumexp(axis={})'.format(axis),
                   lambda c, x: F.logsumexp(x, axis), [i])


@op('reduction')
def _argmax(b):
    i = b.x(lambda s: len(s) >= 1)
    if i is None:
        return None
    axis = _reduce_axes(b, b.shape(i), single=True)
    if _reduced_size(b.shape(i), axis) == 0:
        return None
    fn = b.d.pick([F.argmax, F.argmin])
    return b.apply('{}(axis={})'.format(fn.__name__, axis),
                   lambda c, x: fn(x, axis), [i])


@op('reduction')
def _batch_l2_norm_squared(b):
    i = b.x(lambda s: len(s) >= 2)
    if i is None:
        return None
    return b.apply('batch_l2_norm_squared', lambda c, x: (
        F.batch_l2_norm_squared(x)), [i])


# Shapes, copies and indexing

@op('shape')
def _reshape(b):
    i = b.x()
    shape = list(b.shape(i))
    kind = b.d.pick(['permuted', 'flat rest', 'merge'])
    if kind == 'permuted':
        new = tuple(b.d.permutation(shape))
    elif kind == 'flat rest' and shape:
        new = (shape[0], int(np.prod(shape[1:], dtype=int)))
    elif len(shape) >= 2:
        a = b.d.int(0, len(shape) - 2)
        new = tuple(shape[:a] + [shape[a] * shape[a + 1]] + shape[a + 2:])
    else:
        new = tuple(shape) + (1,)
    return b.apply('reshape{}'.format(new),
                   lambda c, x: F.reshape(x, new), [i])


def _factor(b, m):
    """(c, h, w) with c * h * w == m (m > 0)."""
    divisors = [k for k in range(1, m + 1) if m % k == 0]
    c = b.d.pick(divisors)
    h = b.d.pick([k for k in divisors if (m // c) % k == 0])
    return c, h, m // c // h


@op('shape')
def _to_image(b):
    # gives convolution and pooling something to work on
    i = b.x(lambda s: len(s) >= 1 and np.prod(s[1:], dtype=int) > 0)
    if i is None:
        return None
    shape = b.shape(i)
    new = (shape[0],) + _factor(b, int(np.prod(shape[1:], dtype=int)))
    return b.apply('reshape{}'.format(new),
                   lambda c, x: F.reshape(x, new), [i])


@op('shape')
def _transpose(b):
    i = b.x()
    ndim = len(b.shape(i))
    kind = b.d.pick(['transpose', 'swapaxes', 'moveaxis'])
    if kind == 'transpose' or ndim < 2:
        axes = tuple(b.d.permutation(range(ndim)))
        return b.apply('transpose{}'.format(axes),
                       lambda c, x: F.transpose(x, axes), [i])
    a1, a2 = _axis(b, ndim), _axis(b, ndim)
    fn = F.swapaxes if kind == 'swapaxes' else F.moveaxis
    return b.apply('{}({}, {})'.format(kind, a1, a2),
                   lambda c, x: fn(x, a1, a2), [i])


@op('shape')
def _expand_squeeze(b):
    i = b.x()
    shape = b.shape(i)
    ones = [a for a, s in enumerate(shape) if s == 1]
    if ones and b.d.bool():
        axis = b.d.pick([None] + ones)
        return b.apply('squeeze(axis={})'.format(axis),
                       lambda c, x: F.squeeze(x, axis), [i])
    if b.d.bool():
        return b.apply('flatten', lambda c, x: F.flatten(x), [i])
    axis = b.d.int(-len(shape) - 1, len(shape))
    return b.apply('expand_dims({})'.format(axis),
                   lambda c, x: F.expand_dims(x, axis), [i])


@op('shape')
def _broadcast_to(b):
    i = b.x()
    shape = b.shape(i)
    new = tuple(b.d.int(1, 3) if s == 1 else s for s in shape)
    if b.d.bool():
        new = (b.d.int(1, 2),) + new
    return b.apply('broadcast_to{}'.format(new),
                   lambda c, x: F.broadcast_to(x, new), [i])


@op('shape')
def _tile_repeat_flip(b):
    i = b.x(lambda s: len(s) >= 1)
    if i is None:
        return None
    ndim = len(b.shape(i))
    kind = b.d.pick(['tile', 'repeat', 'flip'])
    if kind == 'tile':
        reps = tuple(b.d.int(1, 2) for _ in range(b.d.int(1, ndim)))
        return b.apply('tile{}'.format(reps),
                       lambda c, x: F.tile(x, reps), [i])
    axis = _axis(b, ndim)
    if kind == 'flip':
        return b.apply('flip({})'.format(axis),
                       lambda c, x: F.flip(x, axis), [i])
    r = b.d.int(1, 3)
    return b.apply('repeat({}, axis={})'.format(r, axis),
                   lambda c, x: F.repeat(x, r, axis), [i])


@op('shape')
def _pad(b):
    i = b.x(lambda s: len(s) >= 1)
    if i is None:
        return None
    width = tuple((b.d.int(0, 1), b.d.int(0, 2)) for _ in b.shape(i))
    return b.apply('pad{}'.format(width), lambda c, x: F.pad(
        x, width, 'constant'), [i])


@op('shape')
def _split(b):
    i = b.x(lambda s: len(s) >= 1)
    if i is None:
        return None
    shape = b.shape(i)
    axis = _axis(b, len(shape))
    size = shape[axis]
    kind = b.d.pick(['sections', 'indices', 'separate'])
    if kind == 'separate' and 1 <= size <= 4:
        return b.apply('separate(axis={})'.format(axis),
                       lambda c, x: F.separate(x, axis), [i])
    if kind == 'sections' and size >= 1:
        k = b.d.pick([k for k in range(1, size + 1) if size % k == 0])
        return b.apply('split_axis({}, axis={})'.format(k, axis),
                       lambda c, x: F.split_axis(x, k, axis,
                                                 force_tuple=True), [i])
    # indices may repeat or pass the end: empty pieces
    idx = sorted(b.d.int(0, size + 1) for _ in range(b.d.int(1, 3)))
    return b.apply('split_axis({}, axis={})'.format(idx, axis),
                   lambda c, x: F.split_axis(x, idx, axis,
                                             force_tuple=True), [i])


def _basic_index(b, size):
    kind = b.d.pick(['int', 'slice', 'full', 'newaxis'])
    if kind == 'int' and size > 0:
        return b.d.int(-size, size - 1)
    if kind == 'slice':
        start, stop = b.d.int(-size - 1, size + 1), b.d.int(-size - 1,
                                                            size + 1)
        return slice(start, stop, b.d.pick([None, 1, 2, -1]))
    if kind == 'newaxis':
        return None
    return slice(None)


@op('shape')
def _getitem(b):
    i = b.x(lambda s: len(s) >= 1)
    if i is None:
        return None
    shape = b.shape(i)
    kind = b.d.pick(['basic', 'ellipsis', 'int array', 'mask', 'row mask'])
    if kind == 'basic':
        # newaxis does not consume an axis of the array
        index = []
        axis = 0
        n_axes = b.d.int(1, len(shape))
        while axis < n_axes:
            item = _basic_index(b, shape[axis])
            index.append(item)
            axis += item is not None
        index = tuple(index)
    elif kind == 'ellipsis':
        index = (Ellipsis, _basic_index(b, shape[-1]))
    elif kind == 'int array':
        if shape[0] == 0:
            return None
        index = b.d.ints((b.d.int(0, 4),), -shape[0], shape[0])
    elif kind == 'mask':
        index = b.d.mask(shape)
    else:
        index = b.d.mask(shape[:1])
    text = repr(index).replace('\n', '')
    return b.apply('getitem[{}]'.format(text),
                   lambda c, x: F.get_item(x, index), [i])


@op('shape')
def _concat_stack(b):
    i = b.x(lambda s: len(s) >= 1)
    if i is None:
        return None
    shape = b.shape(i)
    kind = b.d.pick(['concat', 'stack', 'hstack'])
    if kind == 'concat':
        axis = _axis(b, len(shape))

        def fits(s):
            return len(s) == len(shape) and all(
                a == t for k, (a, t) in enumerate(zip(s, shape))
                if k != axis)
        js = [b.pick(b.floats(fits, b.dtype(i)))
              for _ in range(b.d.int(1, 2))]
        return b.apply('concat(axis={})'.format(axis),
                       lambda c, *xs: F.concat(xs, axis), [i] + js)
    js = [_same_shape(b, i) for _ in range(b.d.int(1, 2))]
    if kind == 'hstack':
        return b.apply('hstack', lambda c, *xs: F.hstack(xs), [i] + js)
    axis = b.d.int(0, len(shape))
    return b.apply('stack(axis={})'.format(axis),
                   lambda c, *xs: F.stack(xs, axis), [i] + js)


@op('shape')
def _cast(b):
    i = b.x()
    dtype = b.d.pick([t for t in FLOATS if t != b.dtype(i)])
    return b.apply('cast({})'.format(np.dtype(dtype).name),
                   lambda c, x: F.cast(x, dtype), [i])


@op('shape')
def _select_item(b):
    i = b.x(lambda s: len(s) == 2 and s[1] > 0)
    if i is None:
        return None
    n, k = b.shape(i)
    t = b.d.ints((n,), 0, k)
    return b.apply('select_item', lambda c, x: F.select_item(x, t), [i])


# Connections

def _image(b):
    # zero-size images only on the batch axis
    return b.x(lambda s: len(s) == 4 and min(s[1:]) > 0)


def _conv_window(b, size):
    """(k, s, p, d) with an output of at least one pixel (size > 0)."""
    k, s, p, d = b.d.int(1, 3), b.d.int(1, 2), b.d.int(0, 1), b.d.int(1, 2)
    if size + 2 * p < (k - 1) * d + 1:
        return 1, s, p, 1
    return k, s, p, d


@op('connection')
def _convolution_2d(b):
    i = _image(b)
    if i is None:
        return None
    n, c, h, w = b.shape(i)
    (kh, sy, ph, dy), (kw, sx, pw, dx) = (_conv_window(b, h),
                                          _conv_window(b, w))
    groups = b.d.pick([g for g in (1, 2, 3) if c % g == 0])
    out = groups * b.d.int(1, 2)
    W = b.u((out, c // groups, kh, kw), b.dtype(i))
    bias = b.u((out,), b.dtype(i)) if b.d.bool() else None

    def f(c_, x):
        return F.convolution_2d(x, c_.param(W), None if bias is None else
                                c_.param(bias), (sy, sx), (ph, pw),
                                dilate=(dy, dx), groups=groups)
    return b.apply('convolution_2d(W{}, s={}, p={}, d={}, g={})'.format(
        W.shape, (sy, sx), (ph, pw), (dy, dx), groups), f, [i])


@op('connection')
def _convolution_link(b):
    i = _image(b)
    if i is None or b.dtype(i) != b.p.dtype:
        return None
    n, c, h, w = b.shape(i)
    k = b.d.int(1, min(3, h, w))
    lazy, nobias, out = b.d.bool(), b.d.bool(), b.d.int(1, 3)

    def f(c_, x):
        return c_.link(lambda: L.Convolution2D(
            None if lazy else c, out, k, nobias=nobias))(x)
    return b.apply('L.Convolution2D(k={}, lazy={})'.format(k, lazy), f, [i])


@op('connection')
def _deconvolution_2d(b):
    i = _image(b)
    if i is None:
        return None
    n, c, h, w = b.shape(i)
    k, s = b.d.int(1, 3), b.d.int(1, 2)
    p = b.d.int(0, (k - 1) // 2)
    out = b.d.int(1, 2)
    W = b.u((c, out, k, k), b.dtype(i))
    return b.apply('deconvolution_2d(W{}, s={}, p={})'.format(W.shape, s, p),
                   lambda c_, x: F.deconvolution_2d(x, c_.param(W), None,
                                                    s, p), [i])


@op('connection')
def _depthwise_convolution_2d(b):
    i = _image(b)
    if i is None:
        return None
    n, c, h, w = b.shape(i)
    k = b.d.int(1, min(3, h, w))
    W = b.u((b.d.int(1, 2), c, k, k), b.dtype(i))
    # its double backprop fails in Chainer (a 5-D weight for a
    # deconvolution)
    return b.apply('depthwise_convolution_2d(W{})'.format(W.shape),
                   lambda c_, x: F.depthwise_convolution_2d(
                       x, c_.param(W)), [i], double=False)


@op('connection')
def _embed_id(b):
    # a new value from integer ids: its gradient goes to W only
    vocab, units = b.d.int(1, 4), b.d.int(1, 3)
    shape = (b.p.n,) + ((b.d.int(1, 3),) if b.d.bool() else ())
    if b.p.n == 0:
        return None  # EmbedIDGrad cannot reshape a zero-size gradient
    ignore = b.d.bool()
    ids = b.d.ints(shape, -1 if ignore else 0, vocab)
    if b.d.bool():
        W = b.u((vocab, units))
        return b.apply('embed_id(ids{}, W{}, ignore={})'.format(
            shape, W.shape, ignore), lambda c: F.embed_id(
                ids, c.param(W), ignore_label=-1 if ignore else None), [])
    return b.apply('L.EmbedID(ids{}, {}, {})'.format(shape, vocab, units),
                   lambda c: c.link(lambda: L.EmbedID(
                       vocab, units, ignore_label=-1))(ids), [])


# Pooling

def _pool_window(b, size):
    k = b.d.int(1, min(3, size + 1))
    s = b.d.int(1, 2)
    p = b.d.int(0, k // 2)
    return k, s, p


@op('pooling')
def _pooling_2d(b):
    i = _image(b)
    if i is None:
        return None
    n, c, h, w = b.shape(i)
    k, s, p = _pool_window(b, min(h, w))
    kind = b.d.pick(['max', 'average', 'unpool', 'upsample'])
    if kind == 'max':
        cover_all = b.d.bool()
        return b.apply('max_pooling_2d({}, {}, {}, {})'.format(
            k, s, p, cover_all), lambda c_, x: F.max_pooling_2d(
                x, k, s, p, cover_all), [i])
    if kind == 'average':
        return b.apply('average_pooling_2d({}, {}, {})'.format(k, s, p),
                       lambda c_, x: F.average_pooling_2d(x, k, s, p), [i])
    if kind == 'unpool':
        k = b.d.int(1, 2)
        return b.apply('unpooling_2d({})'.format(k), lambda c_, x: (
            F.unpooling_2d(x, k, cover_all=False)), [i])

    def f(c_, x):
        y, idx = F.max_pooling_2d(x, k, s, p, True, return_indices=True)
        return F.upsampling_2d(y, idx, k, s, p, (h, w))
    return b.apply('upsampling_2d(max_pooling_2d({}, {}, {}))'.format(
        k, s, p), f, [i])


@op('pooling')
def _pooling_nd(b):
    i = b.x(lambda s: len(s) == 3)
    if i is None:
        return None
    k, s, p = _pool_window(b, b.shape(i)[2])
    fn = b.d.pick([F.max_pooling_nd, F.average_pooling_nd])
    return b.apply('{}({}, {}, {})'.format(fn.__name__, k, s, p),
                   lambda c_, x: fn(x, k, s, p), [i])


# Normalization

@op('normalization')
def _batch_normalization(b):
    # its backward divides by the batch size: no zero-size input
    i = b.x(lambda s: len(s) >= 2 and np.prod(s) > 0)
    if i is None:
        return None
    c = b.shape(i)[1]
    dt = b.dtype(i)
    gamma, beta = b.u((c,), dt, 0.5, 1.5), b.u((c,), dt)
    running = b.d.bool()
    mean, var = b.u((c,), dt), b.u((c,), dt, 0.5, 1.5)

    def f(c_, x):
        kw = {}
        if running:
            kw = {'running_mean': c_.state(mean),
                  'running_var': c_.state(var)}
        return F.batch_normalization(x, c_.param(gamma), c_.param(beta),
                                     **kw)
    return b.apply('batch_normalization(running={})'.format(running), f,
                   [i])


@op('normalization')
def _batch_normalization_link(b):
    i = b.x(lambda s: len(s) >= 2 and np.prod(s) > 0)
    if i is None or b.dtype(i) != b.p.dtype:
        return None
    c = b.shape(i)[1]
    calls = b.d.int(1, 2)

    def f(c_, x):
        bn = c_.link(lambda: L.BatchNormalization(c))
        for _ in range(calls):
            y = bn(x)
        return y
    return b.apply('L.BatchNormalization x{}'.format(calls), f, [i])


@op('normalization')
def _layer_normalization(b):
    i = b.x(lambda s: len(s) == 2 and s[1] > 0)
    if i is None:
        return None
    c = b.shape(i)[1]
    if b.dtype(i) == b.p.dtype and b.d.bool():
        return b.apply('L.LayerNormalization', lambda c_, x: c_.link(
            lambda: L.LayerNormalization())(x), [i])
    gamma, beta = b.u((c,), b.dtype(i)), b.u((c,), b.dtype(i))
    return b.apply('layer_normalization', lambda c_, x: (
        F.layer_normalization(x, c_.param(gamma), c_.param(beta))), [i])


@op('normalization')
def _group_normalization(b):
    i = b.x(lambda s: len(s) >= 3 and s[1] > 0)
    if i is None:
        return None
    c = b.shape(i)[1]
    g = b.d.pick([g for g in range(1, c + 1) if c % g == 0])
    gamma, beta = b.u((c,), b.dtype(i)), b.u((c,), b.dtype(i))
    return b.apply('group_normalization({})'.format(g), lambda c_, x: (
        F.group_normalization(x, g, c_.param(gamma), c_.param(beta))), [i])


@op('normalization')
def _local_response_normalization(b):
    i = _image(b)
    if i is None:
        return None
    size = b.d.pick([1, 3, 5])
    # its gradient has no backward
    return b.apply('local_response_normalization({})'.format(size),
                   lambda c_, x: F.local_response_normalization(x, size),
                   [i], double=False)


# Noise: every random draw comes from the NumPy random state the run
# seeds

@op('noise')
def _dropout(b):
    i = b.x()
    ratio = b.d.pick([0.0, 0.3, 0.5, 0.9])
    return b.apply('dropout({})'.format(ratio),
                   lambda c, x: F.dropout(x, ratio), [i])


@op('noise')
def _rrelu(b):
    i = b.x()
    return b.apply('rrelu', lambda c, x: F.rrelu(x), [i])


@op('noise')
def _gaussian(b):
    i = b.x()
    j = _same_shape(b, i)
    return b.apply('gaussian', lambda c, m, v: F.gaussian(m, v), [i, j])


@op('noise')
def _simplified_dropconnect(b):
    i = b.x(lambda s: len(s) == 2)
    if i is None:
        return None
    W = b.u((b.d.int(1, 3), b.shape(i)[1]), b.dtype(i))
    return b.apply('simplified_dropconnect(W{})'.format(W.shape),
                   lambda c, x: F.simplified_dropconnect(
                       x, c.param(W), None, 0.5), [i])


# Losses

@op('loss')
def _softmax_cross_entropy(b):
    # its backward fails on an empty batch
    i = b.x(lambda s: len(s) == 2 and min(s) > 0)
    if i is None:
        return None
    n, k = b.shape(i)
    t = b.d.ints((n,), -1, k)
    normalize, double = b.d.bool(), b.d.bool()
    reduce = b.d.pick(['mean', 'no'])
    return b.apply('softmax_cross_entropy(normalize={}, reduce={}, '
                   'double={})'.format(normalize, reduce, double),
                   lambda c, x: F.softmax_cross_entropy(
                       x, t, normalize, reduce=reduce,
                       enable_double_backprop=double), [i], double)


@op('loss')
def _sigmoid_cross_entropy(b):
    i = b.x(lambda s: len(s) >= 1)
    if i is None:
        return None
    t = b.d.ints(b.shape(i), -1, 2)
    normalize = b.d.bool()
    reduce = b.d.pick(['mean', 'no'])
    return b.apply('sigmoid_cross_entropy(normalize={}, reduce={})'.format(
        normalize, reduce), lambda c, x: F.sigmoid_cross_entropy(
            x, t, normalize, reduce), [i])


@op('loss')
def _pair_loss(b):
    i = b.x()
    j = _same_shape(b, i)
    fn = b.d.pick([F.mean_squared_error, F.absolute_error,
                   F.squared_error, F.gaussian_kl_divergence])
    return b.apply(fn.__name__, lambda c, x, y: fn(x, y), [i, j])


@op('loss')
def _huber_loss(b):
    i = b.x(lambda s: len(s) >= 2)
    if i is None:
        return None
    t = b.u(b.shape(i), b.dtype(i))
    reduce = b.d.pick(['sum_along_second_axis', 'no'])
    return b.apply('huber_loss(reduce={})'.format(reduce), lambda c, x: (
        F.huber_loss(x, t, 0.5, reduce)), [i])


@op('loss')
def _hinge(b):
    i = b.x(lambda s: len(s) == 2 and s[1] > 0)
    if i is None:
        return None
    n, k = b.shape(i)
    t = b.d.ints((n,), 0, k)
    norm = b.d.pick(['L1', 'L2'])
    return b.apply('hinge({})'.format(norm), lambda c, x: (
        F.hinge(x, t, norm)), [i], double=False)


# Recurrent

@op('rnn')
def _lstm(b):
    i = b.x(lambda s: len(s) == 2 and s[1] > 0 and s[1] % 4 == 0)
    if i is None:
        return None
    n, k = b.shape(i)
    h = k // 4
    j = b.pick(b.floats(lambda s: s == (n, h), b.dtype(i)))
    if j is None or b.d.bool():
        c0 = b.u((n, h), b.dtype(i))
        return b.apply('lstm(c=param)', lambda c, x: F.lstm(c.param(c0), x),
                       [i])
    return b.apply('lstm', lambda c, c_prev, x: F.lstm(c_prev, x), [j, i])


@op('rnn')
def _lstm_link(b):
    i = b.x(lambda s: len(s) == 2)
    if i is None or b.dtype(i) != b.p.dtype:
        return None
    in_size = b.shape(i)[1]
    lazy, out, calls = b.d.bool(), b.d.int(1, 3), b.d.int(1, 2)

    def f(c, x):
        lstm = c.link(lambda: L.LSTM(None if lazy else in_size, out))
        for _ in range(calls):
            y = lstm(x)
        return y
    return b.apply('L.LSTM(lazy={}) x{}'.format(lazy, calls), f, [i])


# The test's own functions

@op('custom')
def _old_pair(b):
    i = b.x()
    return b.apply('OldPair', lambda c, x: OldPair()(x), [i], double=False)


@op('custom')
def _forget(b):
    i = b.x()
    j = _same_shape(b, i)
    # Forget refuses a double backprop
    return b.apply('forget(tanh(a) * b + a)', lambda c, x, y: F.forget(
        lambda a, b_: F.tanh(a) * b_ + a, x, y), [i, j], double=False)


# The whole program

#: How often each category is drawn: the wide ones more.
WEIGHTS = {'elementwise': 3, 'arithmetic': 2, 'shape': 3}


def draw_program(seed, max_steps=8):
    """The :class:`Program` of ``seed`` (see the module docstring)."""
    d = Draw(seed)
    p = Program(d.pick(FLOATS), d.pick([0, 1, 1, 2, 2, 3]),
                d.pick([True, True, True, False]), d.int(0, 2 ** 31 - 1))
    p.program_seed = seed
    b = Builder(d, p)
    for _ in range(d.int(1, 3)):
        shape = (p.n,) + tuple(d.int(1, 4) for _ in range(d.pick(
            [0, 1, 1, 2, 3, 3])))
        b.add_input(d.u(shape, p.dtype))
    names = [c for c in sorted(CATEGORIES) for _ in range(
        WEIGHTS.get(c, 1))]
    with _dry_run(p):
        for _ in range(d.int(1, max_steps)):
            # most elementwise ops suit any float value
            if not _take_one(b, CATEGORIES[d.pick(names)]):
                _take_one(b, CATEGORIES['elementwise'])
    _draw_ending(d, p, b)
    p.fma, p.measure_time, p.nested = d.bool(), d.bool(), d.bool()
    return p


def _take_one(b, ops):
    """Take the first op of ``ops``, from a drawn start, that suits some
    value and that Chainer accepts; False if none does."""
    start = b.d.int(0, len(ops) - 1)
    for k in range(len(ops)):
        try:
            if ops[(start + k) % len(ops)](b) is not None:
                return True
        except Rejected:
            pass
    return False


class _dry_run(object):
    """The config and random state of a run, warnings silenced (the real
    runs compare them)."""

    def __init__(self, p):
        self.p = p

    def __enter__(self):
        self._random_state = np.random.get_state()
        np.random.seed(self.p.random_seed)
        self._config = chainer.using_config('train', self.p.train)
        self._config.__enter__()
        self._warnings = warnings.catch_warnings()
        self._warnings.__enter__()
        warnings.simplefilter('ignore')

    def __exit__(self, *exc):
        self._warnings.__exit__(*exc)
        self._config.__exit__(*exc)
        np.random.set_state(self._random_state)


def _draw_ending(d, p, b):
    """The outputs, their gradients and the mode."""
    n_inputs = len(p.inputs)
    candidates = [i for i in b.floats() if i >= n_inputs]
    if not candidates:
        p.mode = d.pick(['forward', 'nobackprop'])
        return
    double = all(s.double for s in p.steps)
    # mostly a backward: the hook has most to get wrong there
    modes = ['forward', 'nobackprop', 'grad', 'grad', 'backward',
             'backward'] + ['double', 'double'] * double
    p.mode = d.pick(modes)
    k = d.int(1, min(3, len(candidates)))
    p.outputs = d.sample(candidates, k)
    for i in p.outputs:
        # None: chainer.grad's default (ones), or no .grad for backward()
        none_ok = p.mode in ('grad', 'double') or (
            p.mode == 'backward' and b.values[i].size == 1)
        p.grad_outputs.append(None if none_ok and d.bool() else b.u(
            b.values[i].shape, b.values[i].dtype))


# Running

def run(p, phase=None):
    """Run program ``p`` once from scratch; return an ordered list of
    (name, array or None): every value, the gradients, the second order
    gradients of a double backprop, the arrays changed in place, the links'
    persistent values and the NumPy random state at the end.

    ``phase``, a one-item list, is set to ``'forward'`` or ``'backward'``
    before each part of the run (what the hook must call it).
    """
    saved = np.random.get_state()
    try:
        return _run(p, [None] if phase is None else phase)
    finally:
        # the other tests of the session keep their random stream
        np.random.set_state(saved)


def _run(p, phase):
    np.random.seed(p.random_seed)
    ctx = Context(p.dtype)
    phase[0] = 'forward'
    with chainer.using_config('train', p.train):
        leaves = [chainer.Variable(a.copy(), requires_grad=True)
                  for a in p.inputs]
        values = list(leaves)
        if p.mode == 'nobackprop':
            with chainer.no_backprop_mode():
                _forward(p, ctx, values)
        else:
            _forward(p, ctx, values)
        wrt = leaves + ctx.params + [
            param for _, link in ctx.links
            for _, param in sorted(link.namedparams())]
        wrt_names = ['input{}'.format(k) for k in range(len(leaves))] + [
            'param{}'.format(k) for k in range(len(ctx.params))] + [
            'link{}{}'.format(step, name) for step, link in ctx.links
            for name, _ in sorted(link.namedparams())]
        result = [('v{}'.format(k), v.array) for k, v in enumerate(values)]
        outputs = [values[i] for i in p.outputs]
        gys = [None if g is None else chainer.Variable(g.copy())
               for g in p.grad_outputs]
        if p.mode in ('grad', 'double'):
            phase[0] = 'backward'
            gxs = chainer.grad(outputs, wrt, gys,
                               enable_double_backprop=p.mode == 'double')
            result += _named('grad', wrt_names, gxs)
            if p.mode == 'double':
                phase[0] = 'forward'
                zs = [F.sum(gx * gx) for gx in gxs
                      if gx is not None and gx.requires_grad]
                if zs:
                    phase[0] = 'backward'
                    result += _named('grad2', wrt_names,
                                     chainer.grad(zs, wrt))
        elif p.mode == 'backward':
            phase[0] = 'backward'
            for y, gy in zip(outputs, gys):
                if gy is not None:
                    y.grad_var = gy
                y.backward()
            result += _named('grad', wrt_names, [v.grad_var for v in wrt])
    for k, a in enumerate(ctx.states):
        result.append(('state{}'.format(k), a))
    for step, link in ctx.links:
        for name, value in _persistents(link):
            result.append(('link{}/{}'.format(step, name), value))
    state = np.random.get_state()
    result.append(('random state', np.append(state[1], state[2])))
    return result


def _persistents(link):
    """The link's persistent arrays (running statistics), by name."""
    values = [(name, getattr(link, name)) for name in sorted(
        link._persistent)]
    return [(name, np.asarray(v)) for name, v in values]


def _forward(p, ctx, values):
    for k, step in enumerate(p.steps):
        ctx.current = k
        values.extend(_call(step, ctx, values))


def _named(prefix, names, variables):
    return [('{} {}'.format(prefix, name),
             None if v is None else v.array)
            for name, v in zip(names, variables)]


# Programs of the batch size, for projections

#: The steps of a batch program: name -> how it changes ``h``, a Variable
#: of shape (rows, features); ``k`` is the step's own small number.  Each
#: keeps at least one row, and several stop following the batch at some
#: size (fixed slices, strides, reductions over it).
BATCH_STEPS = collections.OrderedDict([
    ('head', lambda h, k: h[:k]),
    ('tail', lambda h, k: h[-k:]),
    ('stride', lambda h, k: h[::k]),
    ('reverse', lambda h, k: h[np.arange(len(h))[::-1]]),
    ('pick', lambda h, k: h[np.array([0] * k)]),
    ('concat', lambda h, k: F.concat((h, h), axis=0)),
    ('sum0', lambda h, k: F.broadcast_to(
        F.sum(h, axis=0, keepdims=True), h.shape)),
    ('mean0', lambda h, k: F.mean(h, axis=0, keepdims=True)),
    ('max0', lambda h, k: F.max(h, axis=0, keepdims=True)),
    ('sum1', lambda h, k: F.sum(h, axis=1, keepdims=True)),
    ('relu', lambda h, k: F.relu(h)),
    ('scale', lambda h, k: h * float(k)),
    ('gram', lambda h, k: F.matmul(h, h, transa=True)),
    ('outer', lambda h, k: F.matmul(h, h, transb=True)),
    ('linear', None),  # a Linear link of the program, see run_batch
])


class BatchProgram(object):
    """Steps on a batch of ``n`` rows of ``features``, then a sum and, with
    ``backward``, its backward pass: run it at any ``n`` with
    :meth:`run`."""

    def __init__(self, seed):
        rng = np.random.RandomState(seed)
        self.seed = seed
        self.features = int(rng.randint(1, 4))
        self.steps = []
        for _ in range(rng.randint(1, 5)):
            name = str(rng.choice(list(BATCH_STEPS)))
            if name == 'linear' and any(s == 'outer' for s, _ in
                                        self.steps):
                continue  # its input size would follow the batch
            self.steps.append((name, int(rng.randint(1, 9))))
        self.backward = bool(rng.randint(2))
        self.target = int(rng.randint(10, 41))
        # One Linear per such step, each called at every batch size.
        self.links = chainer.ChainList(*[
            L.Linear(None, 2) for s, _ in self.steps if s == 'linear'])

    def run(self, n):
        """The program at batch ``n``."""
        x = np.random.RandomState(n).rand(n, self.features)
        h = chainer.Variable(x.astype(np.float32))
        self.links.cleargrads()
        links = iter(self.links)
        for name, k in self.steps:
            h = next(links)(h) if name == 'linear' else BATCH_STEPS[name](
                h, k)
        y = F.sum(h)
        if self.backward:
            y.backward()

    def describe(self):
        """The program as text, for a failure's message."""
        return 'batch program {}: {} features, {}, {}; to batch {}'.format(
            self.seed, self.features, ', '.join(
                '{}({})'.format(*s) for s in self.steps),
            'backward' if self.backward else 'forward', self.target)
