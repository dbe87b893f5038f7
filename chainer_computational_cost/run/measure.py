"""Measuring a device: :func:`calibrate`.

It times, on the device the arrays live on (NumPy: this CPU, with
``time.perf_counter``; CuPy: the current GPU, with CUDA events),

1. matrix products over a grid of shapes (the table of
   :class:`~chainer_computational_cost.analysis.calibration.GemmTable`);
2. *probes*: small random networks (convolutions with batch
   normalization, pooling, residual sums, concatenations, local response
   normalization and dropout; perceptrons; attention blocks; LSTM language
   models), each run in inference and as a training step (forward,
   backward and an optimizer's update) under a
   :class:`~chainer_computational_cost.ComputationalCostHook` that measures
   every call, and again without the hook for the step's wall time.
   First come the small probes of :data:`COVER`, which run every type of
   :data:`COVER_TYPES` (the types common networks spend their time in)
   often enough for a fit, then random ones until the budget is spent.

Probes are networks rather than one function at a time because that is
where the time goes in a real model: every output is freshly allocated
memory touched for the first time, and a backward function reads
activations long out of cache.  Their shapes are drawn at random, so that
no benchmark model's shapes are the calibration's.

Each family of functions gets one fit of the time of its calls, the
per-call overhead is the median of ``(wall - sum of the calls' times) /
calls`` over the probes, and the probes, split in five folds, give the
calibration's own error on held-out networks.
"""

import collections.abc
import contextlib
import functools
import os
import platform
import time
import warnings

import chainer
import chainer.functions as F
import chainer.links as L
import chainerx
import numpy

from chainer_computational_cost.analysis import calibration as cal
from chainer_computational_cost.core import checks
from chainer_computational_cost.core import devices
from chainer_computational_cost.core.records import ReportWarning
from chainer_computational_cost.run.hook import ComputationalCostHook

#: Dimensions of the matrix-product table.
GEMM_DIMS = (4, 16, 64, 256, 1024, 4096)
#: Products of more multiply-adds than this are not run; their speed is
#: the largest of the smaller neighbours' (the BLAS's speed saturates).
GEMM_MAX = 2 ** 32
#: Repetitions of each probe, with and without the hook (medians).
REPEATS = 3


#: What ``calibrate``'s ``device`` may be, in its errors.
DEVICE_ALLOWED = ("None or a Chainer device specifier as chainer.get_device "
                  "takes it (such as '@numpy' or '@cupy:0')")


def _device_of(device):
    """The Chainer device ``device`` names (None: NumPy), or a one-line
    error naming ``device``: Chainer's own errors (a ChainerX parse, a
    missing CuPy) name no argument, and a device preset (``'a100'``, the
    figures the reports use) is one a user may try."""
    if device is None:
        return chainer.get_device('@numpy')
    preset = ('a device preset is the figures the reports use, not a '
              'device to run on; calibrate measures the device the arrays '
              'live on')
    if isinstance(device, devices.Device):
        raise checks.ArgumentTypeError('device must be {}, got the Device '
                                       '{!r}: {}'.format(
                                           DEVICE_ALLOWED, device.name,
                                           preset))
    if isinstance(device, str) and device.lower() in devices.DEVICES:
        raise ValueError('device must be {}, got {!r}: {}'.format(
            DEVICE_ALLOWED, device, preset))
    # The types chainer.get_device reads (a bool would be CUDA device 1),
    # checked here: Chainer 6 calls any other a ValueError, 7 a TypeError.
    kinds = [str, chainer.backend.Device]
    if chainer.backends.cuda.available:  # pragma: no cover (no GPU here)
        kinds.append(chainer.backends.cuda.Device)
    if chainerx.is_available():  # pragma: no cover (not built here)
        kinds.append(chainerx.Device)
    if not (checks.is_int(device) or isinstance(device, tuple(kinds))):
        checks.instance('device', device, (), DEVICE_ALLOWED)
    try:
        return chainer.get_device(device)
    except Exception as e:
        raise ValueError('device must be {}, got {!r}: {}'.format(
            DEVICE_ALLOWED, device, ' '.join(str(e).split()))) from None


def _sync(xp):
    if xp is not numpy:  # pragma: no cover (no GPU here)
        xp.cuda.get_current_stream().synchronize()


#: The clocks of a NumPy calibration, ``'wall'`` (``time.perf_counter``,
#: the default) and ``'cpu'`` (``time.process_time``, the CPU time of the
#: process, kernel time of page faults included, which other processes on
#: a shared machine do not stretch; right with one BLAS thread only).
CLOCKS = {'wall': time.perf_counter, 'cpu': time.process_time}
_now = [time.perf_counter]


@contextlib.contextmanager
def using_clock(clock):
    """Time with ``clock`` (a key of :data:`CLOCKS`) until the block
    ends: this module's timings and the hooks it makes
    (``ComputationalCostHook(clock=...)``)."""
    checks.one_of('clock', clock, CLOCKS)
    saved = _now[0]
    _now[0] = CLOCKS[clock]
    try:
        yield
    finally:
        _now[0] = saved


def _clock(xp, fn):
    """Seconds ``fn()`` takes on the device."""
    if xp is numpy:
        now = _now[0]
        start = now()
        fn()
        return now() - start
    # pragma: no cover (no GPU here): the device runs asynchronously.
    start, end = xp.cuda.Event(), xp.cuda.Event()  # pragma: no cover
    start.record()  # pragma: no cover
    fn()  # pragma: no cover
    end.record()  # pragma: no cover
    end.synchronize()  # pragma: no cover
    return xp.cuda.get_elapsed_time(start, end) / 1e3  # pragma: no cover


def _median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else 0.5 * (values[n // 2 - 1] +
                                               values[n // 2])


def device_info(xp):
    """Versions of Chainer, the array module and the BLAS, and the
    device's name."""
    info = {'chainer': chainer.__version__, 'xp': xp.__name__,
            'numpy': numpy.__version__}
    if xp is numpy:
        info['device'] = _cpu_name()
        info['blas'] = _blas_name()
        info['threads'] = {k: os.environ[k] for k in (
            'OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS')
            if k in os.environ}
        info['cpus'] = os.cpu_count()
    else:  # pragma: no cover (no GPU here)
        info['cupy'] = xp.__version__
        dev = xp.cuda.Device()
        props = xp.cuda.runtime.getDeviceProperties(dev.id)
        name = props['name']
        info['device'] = name.decode() if isinstance(name, bytes) else name
        try:
            info['blas'] = 'cuBLAS {}'.format(xp.cuda.cublas.getVersion(
                dev.cublas_handle))
        except Exception:  # the call differs across CuPy versions
            info['blas'] = 'cuBLAS'
    return info


def _cpu_name():
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _blas_name():
    try:
        config = numpy.show_config(mode='dicts')
        blas = config['Build Dependencies']['blas']
        return '{} {}'.format(blas.get('name'), blas.get('version'))
    except Exception:  # older NumPy: no dicts
        try:
            from numpy import __config__ as c
            for key in dir(c):
                if key.startswith(('blas_opt', 'blas_ilp64_opt')):
                    libraries = getattr(c, key).get('libraries', [])
                    return ' '.join(sorted(set(libraries)))
        except Exception:
            pass
    return 'unknown'


def gemm_table(xp, dims=GEMM_DIMS, deadline=None, dtype=numpy.float32):
    """A :class:`~chainer_computational_cost.analysis.calibration.GemmTable`
    measured on ``xp``: the median of three products per shape (after one
    not timed)."""
    speed = {}
    for m in dims:
        for n in dims:
            for k in dims:
                if m * n * k > GEMM_MAX or (
                        deadline is not None and time.time() > deadline):
                    continue
                a = xp.ones((m, k), dtype)
                b = xp.ones((k, n), dtype)
                a.dot(b)
                _sync(xp)
                t = _median([_clock(xp, lambda: a.dot(b))
                             for _ in range(3)])
                speed[m, n, k] = m * n * k / max(t, 1e-9)
    # Shapes not run take the fastest measured speed of a smaller one.
    grid = []
    for m in dims:
        plane = []
        for n in dims:
            row = []
            for k in dims:
                s = speed.get((m, n, k))
                if s is None:
                    smaller = [v for (a, b, c), v in speed.items()
                               if a <= m and b <= n and c <= k]
                    s = max(smaller) if smaller else 1e9
                row.append(s)
            plane.append(row)
        grid.append(plane)
    return cal.GemmTable(dims, grid)


def copy_bandwidth(xp, nbytes=64 * 2 ** 20):
    """Bytes per second (read and written) of copying ``nbytes`` into an
    existing array."""
    a = xp.ones(nbytes // 4, numpy.float32)
    b = xp.empty_like(a)
    xp.copyto(b, a)
    t = _median([_clock(xp, lambda: xp.copyto(b, a)) for _ in range(3)])
    return 2 * nbytes / max(t, 1e-9)


# Probes: random small networks.

class _Probe(chainer.Chain):
    """A random network: ``plan`` is a list of steps, each a function of
    the link and the activation; ``sides``, for a convolutional one, the
    side of the image each step outputs, as planned (the caps on its
    buffers are reckoned from them)."""

    def __init__(self, plan, links, sides=None):
        super(_Probe, self).__init__()
        self.plan = plan
        self.sides = sides
        with self.init_scope():
            for name, link in links.items():
                setattr(self, name, link)

    def forward(self, x):
        for step in self.plan:
            x = step(self, x)
        return x


def _pooled_side(h, kind):
    """The side of an image of side ``h`` after the probes' max pooling
    (3x3, stride 2, pad 1: Chainer's ``cover_all`` adds a window past the
    edge to an even side) or average pooling (2x2, stride 2)."""
    return h // 2 + 1 if kind == 'maxpool' else h // 2


#: What each step of a convolutional probe may be, and how often.
CNN_KINDS = ('conv', 'conv', 'conv', 'res', 'maxpool', 'avgpool', 'lrn',
             'concat', 'dropout')


def _cnn_probe(rng, batches=(1, 2, 4, 8),
               channels=(3, 16, 32, 64, 128, 256),
               sizes=(7, 14, 28, 56, 112), kinds=None,
               outs=(16, 32, 64, 128, 256, 512)):
    """A convolutional probe: its batch, input channels, side and its
    convolutions' filters drawn from these, and its steps ``kinds`` (None:
    2 to 7 drawn from :data:`CNN_KINDS`)."""
    batch = int(rng.choice(batches))
    channels = int(rng.choice(channels))
    size = int(rng.choice(sizes))
    while batch * channels * size * size > 3e6:
        size //= 2
    if kinds is None:
        # drawn one at a time, each before its step's shapes
        kinds = (rng.choice(CNN_KINDS)
                 for _ in range(int(rng.randint(2, 8))))
    links, plan, sides = {}, [], []
    c, h = channels, size
    for i, kind in enumerate(kinds):
        name = 'l{}'.format(i)
        if kind in ('maxpool', 'avgpool') and h >= 4:
            k, s = (3, 2) if kind == 'maxpool' else (2, 2)
            plan.append((lambda k, s, kind: lambda m, x: (
                F.max_pooling_2d(x, k, s, pad=k // 2) if kind == 'maxpool'
                else F.average_pooling_2d(x, k, s)))(k, s, kind))
            h = _pooled_side(h, kind)
        elif kind == 'lrn':
            plan.append(lambda m, x: F.local_response_normalization(x))
        elif kind == 'dropout':
            plan.append(lambda m, x: F.dropout(x))
        elif kind == 'res':
            links[name] = L.Convolution2D(c, c, 3, 1, 1, nobias=True)
            links[name + 'bn'] = L.BatchNormalization(c)
            plan.append((lambda n: lambda m, x: x + F.relu(
                getattr(m, n + 'bn')(getattr(m, n)(x))))(name))
        else:
            c, h = _conv_step(rng, links, plan, name, kind, batch, c, h,
                              outs)
        sides.append(h)
    classes = int(rng.choice([10, 100, 1000]))
    links['fc'] = L.Linear(c, classes)
    plan.append(lambda m, x: m.fc(F.average_pooling_2d(x, x.shape[2:])))
    model = _Probe(plan, links, sides)
    x = numpy.random.rand(batch, channels, size, size).astype(numpy.float32)
    t = numpy.random.randint(0, classes, batch).astype(numpy.int32)
    return model, (x,), t, F.softmax_cross_entropy


def _conv_step(rng, links, plan, name, kind, batch, c, h,
               outs=(16, 32, 64, 128, 256, 512)):
    """Adds a convolution (its output concatenated to its input for a
    ``'concat'`` of stride 1) of one of ``outs`` filters with batch
    normalization and ReLU to a CNN probe of ``c`` channels of side
    ``h``; returns the new ``(c, h)``."""
    k = int(rng.choice([1, 1, 3, 3, 3, 5, 7]))
    s = int(rng.choice([1, 1, 1, 2])) if h >= 8 else 1
    out = int(rng.choice(outs))
    oh = (h + 2 * (k // 2) - k) // s + 1
    if batch * c * k * k * oh * oh > PROBE_COL_MAX:
        k, s, oh = 1, 1, h
    while out > 16 and batch * oh * oh * out * c * k * k > 1.5e9:
        out //= 2
    links[name] = L.Convolution2D(c, out, k, s, k // 2, nobias=True)
    links[name + 'bn'] = L.BatchNormalization(out)
    if kind == 'concat' and s == 1:
        plan.append((lambda n: lambda m, x: F.concat([F.relu(getattr(
            m, n + 'bn')(getattr(m, n)(x))), x]))(name))
        return out + c, oh
    plan.append((lambda n: lambda m, x: F.relu(getattr(
        m, n + 'bn')(getattr(m, n)(x))))(name))
    return out, oh


def _mlp_probe(rng, batches=(1, 8, 32, 128, 512),
               widths=(16, 64, 256, 1024, 4096)):
    """A perceptron probe: its batch and 2 to 4 widths drawn from these."""
    batch = int(rng.choice(batches))
    dims = [int(rng.choice(widths))
            for _ in range(int(rng.randint(2, 5)))]
    links, plan = {}, []
    for i, (a, b) in enumerate(zip(dims, dims[1:])):
        links['l{}'.format(i)] = L.Linear(a, b)
        act = rng.choice(['relu', 'tanh', 'sigmoid', 'dropout'])
        plan.append((lambda n, act: lambda m, x: getattr(F, act)(
            getattr(m, n)(x)))('l{}'.format(i), act))
    model = _Probe(plan, links)
    x = numpy.random.rand(batch, dims[0]).astype(numpy.float32)
    t = numpy.random.randint(0, dims[-1], batch).astype(numpy.int32)
    return model, (x,), t, F.softmax_cross_entropy


def _attention_probe(rng, batches=(1, 2, 4, 8),
                     lengths=(16, 32, 64, 128, 256),
                     widths=(64, 128, 256, 512), two_d=None):
    """A transformer block probe: its batch, length and width drawn from
    these, 1 to 8 heads, 2-D products (``MatMul``) or batched ones
    (``BatchMatMul``) as ``two_d`` says (None: drawn)."""
    batch = int(rng.choice(batches))
    length = int(rng.choice(lengths))
    width = int(rng.choice(widths))
    heads = int(rng.choice([1, 2, 4, 8]))
    hd = width // heads
    links = {'qkv': L.Linear(width, 3 * width), 'o': L.Linear(width, width),
             'f1': L.Linear(width, 2 * width),
             'f2': L.Linear(2 * width, width),
             'n1': L.LayerNormalization(width),
             'n2': L.LayerNormalization(width)}
    if two_d is None:
        two_d = bool(rng.randint(2))

    def attend(m, x):
        b, t, d = x.shape
        h = m.n1(F.reshape(x, (b * t, d)))
        qkv = F.reshape(m.qkv(h), (b, t, 3, heads, hd))
        qkv = F.transpose(qkv, (2, 0, 3, 1, 4))
        q, k, v = F.separate(qkv, 0)
        q = F.reshape(q, (b * heads, t, hd))
        k = F.reshape(k, (b * heads, t, hd))
        v = F.reshape(v, (b * heads, t, hd))
        if two_d:
            a = F.softmax(F.matmul(q, k, transb=True) * (hd ** -0.5),
                          axis=2)
            y = F.matmul(a, v)
        else:
            # BatchMatMul, which older models call: Chainer 7 deprecates
            # it, and the calibration's user has nothing to change.
            with warnings.catch_warnings():
                warnings.simplefilter('ignore', DeprecationWarning)
                a = F.softmax(F.batch_matmul(q, k, transb=True) *
                              (hd ** -0.5), axis=2)
                y = F.batch_matmul(a, v)
        y = F.reshape(F.transpose(F.reshape(y, (b, heads, t, hd)),
                                  (0, 2, 1, 3)), (b * t, d))
        x2 = F.reshape(x, (b * t, d)) + F.dropout(m.o(y), 0.1)
        y = m.f2(F.relu(m.f1(m.n2(x2))))
        return F.reshape(x2 + y, (b, t, d))

    model = _Probe([attend], links)
    x = numpy.random.rand(batch, length, width).astype(numpy.float32)
    return model, (x,), None, lambda y, t: F.mean(y * y)


def _lstm_probe(rng, batches=(1, 4, 16, 64), lengths=(5, 10, 20),
                vocabs=(1000, 5000, 20000), units=(64, 128, 256, 512)):
    """An LSTM language model probe: its batch, length, vocabulary and
    units drawn from these."""
    batch = int(rng.choice(batches))
    length = int(rng.choice(lengths))
    vocab = int(rng.choice(vocabs))
    units = int(rng.choice(units))
    links = {'embed': L.EmbedID(vocab, units), 'lstm': L.LSTM(units, units),
             'out': L.Linear(units, vocab)}

    def run(m, ids):
        m.lstm.reset_state()
        loss = 0
        for i in range(ids.shape[1] - 1):
            h = m.lstm(F.dropout(m.embed(ids[:, i])))
            loss += F.softmax_cross_entropy(m.out(h), ids[:, i + 1])
        return loss

    model = _Probe([run], links)
    ids = numpy.random.randint(0, vocab, (batch, length + 1)).astype(
        numpy.int32)
    return model, (ids,), None, lambda y, t: y


#: The largest share of the budget one probe may take (its inference and
#: training runs): a few large probes would leave the fits with few
#: shapes, and one that overruns the budget makes the calibration late.
PROBE_SHARE = 0.125

#: The most elements a probe's convolution fills its im2col buffer with,
#: 32 Mi float32 or 128 MiB, beyond most networks' (a model's call past
#: four times the largest the probes filled is flagged outside the
#: range).
PROBE_COL_MAX = 2 ** 25

#: Probe kinds and how often each is drawn.
PROBES = (_cnn_probe, _cnn_probe, _cnn_probe, _cnn_probe, _mlp_probe,
          _attention_probe, _lstm_probe)

#: The steps of the first phase's convolutional probes, eight
#: convolutions (seven of them with an input gradient, as a network's
#: first has none) with batch normalization, max and average pooling.
COVER_KINDS = ('conv', 'res', 'maxpool', 'conv', 'res', 'concat',
               'avgpool', 'conv', 'res', 'conv')

_SMALL_CNN = dict(batches=(1, 2), channels=(3, 16), sizes=(14, 28, 56),
                  kinds=COVER_KINDS, outs=(8, 16, 32))
_SMALL_ATTENTION = dict(batches=(1, 2), lengths=(16, 32, 64),
                        widths=(64, 128))

#: The first phase, run before any random probe, is small probes (their
#: shapes drawn at random too) that together run every type of
#: :data:`COVER_TYPES` often enough for its fit (twice as many calls as
#: features: 14 of each convolution type), so that a short budget
#: leaves no type that common networks spend their time in unprobed.
COVER = (
    functools.partial(_cnn_probe, **_SMALL_CNN),
    functools.partial(_cnn_probe, **_SMALL_CNN),
    functools.partial(_attention_probe, two_d=True, **_SMALL_ATTENTION),
    functools.partial(_attention_probe, two_d=False, **_SMALL_ATTENTION),
    functools.partial(_mlp_probe, batches=(8, 32), widths=(64, 256, 1024)),
    functools.partial(_lstm_probe, batches=(1, 4), lengths=(5,),
                      vocabs=(1000,), units=(64, 128)),
    functools.partial(_cnn_probe, **_SMALL_CNN),
)

#: The function types that convolutional networks, perceptrons and
#: transformers spend their time in, forward and gradients, which the
#: first phase (:data:`COVER`) runs; those it could not run within the
#: budget are listed in the calibration's ``info['uncovered']``.
COVER_TYPES = (
    'Convolution2DFunction', 'Convolution2DGradW', 'Deconvolution2DFunction',
    'LinearFunction', 'LinearGradData', 'LinearGradWeight', 'MatMul',
    'BatchMatMul', 'BatchMatMulGrad', 'BatchNormalization',
    'BatchNormalizationGrad', 'FixedBatchNormalization',
    'LayerNormalization', 'MaxPoolingND', 'MaxPoolingNDGrad',
    'AveragePooling2D', 'AveragePooling2DGrad', 'ReLU', 'ReLUGrad2',
    'Softmax', 'LSTM', 'EmbedIDFunction')

#: Chainer 6's names of types of :data:`COVER_TYPES`.
_CHAINER6_NAMES = {'MaxPoolingND': 'MaxPooling2D',
                   'MaxPoolingNDGrad': 'MaxPooling2DGrad'}


def _uncovered(types):
    """The types of :data:`COVER_TYPES` missing from ``types`` (a
    calibration's, every type it has a fit for)."""
    return [t for t in COVER_TYPES
            if t not in types and _CHAINER6_NAMES.get(t) not in types]


def step_function(model, inputs, loss_of, train, optimizer=None,
                  xp=numpy):
    """A function running one step of ``model`` on ``inputs``: inference
    (``train=False``: test mode, no graph) or a training step (clear the
    gradients, ``loss_of(model(*inputs)).backward()``, the ``optimizer``'s
    update), waiting for the device."""
    def run():
        if train:
            model.cleargrads()
            with chainer.using_config('train', True):
                loss_of(model(*inputs)).backward()
            optimizer.update()
        else:
            with chainer.using_config('train', False), \
                    chainer.no_backprop_mode():
                model(*inputs)
        _sync(xp)
    return run


def _measure_probe(model, inputs, loss_of, train, xp, deadline=None):
    """``(layers, wall)``: the layer dicts of one run with each call's
    median time over :data:`REPEATS` hooked runs, and the median time of
    :data:`REPEATS` runs without the hook; None when the runs differ, or
    when the first run (not timed) says that they would end after
    ``deadline`` (``time.time()``'s), leaving the budget."""
    optimizer = None
    if train:
        optimizer = (chainer.optimizers.MomentumSGD() if numpy.random.rand()
                     < 0.5 else chainer.optimizers.Adam())
        optimizer.setup(model)
    run = step_function(model, inputs, loss_of, train, optimizer, xp)
    first = time.time()
    run()  # not timed: optimizer state, the allocator's first blocks
    now = time.time()
    if deadline is not None and now + 2 * REPEATS * (now - first) > deadline:
        return None
    times = []
    layers = None
    for _ in range(REPEATS):
        with ComputationalCostHook(measure_time=True, clock=_now[0]) as hook:
            run()
        report = hook.layer_report
        del report['total']
        these = list(report.values())
        if layers is not None and [x['type'] for x in these] != \
                [x['type'] for x in layers]:
            return None  # a run that differs (no fit from it)
        layers = these
        times.append([x.get('time') for x in these])
    if any(t is None for ts in times for t in ts):
        return None
    for i, layer in enumerate(layers):
        layer['time'] = _median([ts[i] for ts in times])
    walls = [_clock(xp, run) for _ in range(REPEATS)]
    return layers, _median(walls)


def _fit(samples, gemm):
    """Families and overhead from ``samples``: ``(layers, wall, train)``
    per probe run."""
    per_family = {}
    types = {}
    for layers, _, _ in samples:
        for layer in layers:
            key = cal.fit_key(layer)
            if key is None:
                continue
            f = cal.features(layer, gemm.time)
            if f is None:
                continue
            per_family.setdefault(key, []).append((f, layer['time']))
            types[layer['type']] = key
    families = {k: cal.fit_family(v) for k, v in per_family.items()
                if len(v) >= 2 * len(v[0][0])}
    types = {t: f for t, f in types.items() if f in families}
    rows, gaps, weights = [], [], []
    for layers, wall, train in samples:
        if layers:
            inference = not train
            counts = dict.fromkeys(cal.OVERHEADS, 0)
            for x in layers:
                counts[cal.overhead_kind(x, inference)] += 1
            rows.append([counts[k] for k in cal.OVERHEADS])
            gaps.append(wall - sum(x['time'] for x in layers))
            weights.append(1.0 / wall)
    overhead = dict(zip(cal.OVERHEADS, cal.nnls(rows, gaps, weights)
                        if rows else [0.0] * len(cal.OVERHEADS)))
    return families, types, overhead


#: Probe runs shorter than this are left out of the error (still in the
#: fits): a step of a few hundred microseconds is mostly timer noise and
#: overhead, and no one asks how long it takes.
CV_MIN_SECONDS = 2e-3


def cross_validate(samples, gemm, folds=5):
    """The median absolute relative error of the predicted time of held-out
    probe runs of :data:`CV_MIN_SECONDS` or more (fits on the other folds),
    ``{'inference', 'training', 'n_probes'}``; None for a mode with under
    five runs."""
    errors = {True: [], False: []}
    for i in range(folds):
        train = [s for j, s in enumerate(samples) if j % folds != i]
        test = [s for j, s in enumerate(samples) if j % folds == i]
        if not train or not test:
            continue
        families, types, overhead = _fit(train, gemm)
        c = cal.Calibration(gemm, families, types, overhead)
        for layers, wall, is_train in test:
            if wall < CV_MIN_SECONDS:
                continue
            inference = not is_train
            pred = sum(c.predict(x)[0] + overhead[
                cal.overhead_kind(x, inference)] for x in layers)
            errors[is_train].append(abs(pred - wall) / wall)
    out = {'n_probes': len(samples)}
    for mode, key in ((False, 'inference'), (True, 'training')):
        out[key] = _median(errors[mode]) if len(errors[mode]) >= 5 else None
    return out


#: The least budget of :func:`calibrate`, seconds: below it the table and
#: the probes are too few to fit.
MIN_SECONDS = 10


#: The largest seed calibrate takes (NumPy's RandomState takes 0 to
#: 2 ** 32 - 1).
MAX_SEED = 2 ** 32 - 1


def check_seed(seed, name='seed', optional=True):
    """``seed`` if calibrate can draw its probes with it: an int from 0 to
    :data:`MAX_SEED`, or None when ``optional``; a one-line error naming
    ``name``."""
    if seed is None and optional:
        return None
    allowed = 'an int from 0 to {}'.format(MAX_SEED)
    if optional:
        allowed = 'None or ' + allowed
    checks.integer(name, seed, 0, allowed)
    if seed > MAX_SEED:
        raise ValueError('{} must be {}, got {!r}'.format(name, allowed, seed))
    return int(seed)


def calibrate(seconds=120, device=None, progress=None, seed=None,
              clock='wall'):
    """Measure the device and return a
    :class:`~chainer_computational_cost.analysis.calibration.Calibration`.

    Args:
        seconds (float): the budget, a finite number of seconds, at
            least 10 (the fits and the cross-validation add a little):
            about a fifth goes to the matrix-product table, the rest to
            probes.
        device: where the arrays live, as ``chainer.get_device`` takes it
            (``'@numpy'``, ``'@cupy:0'``; None: NumPy on this CPU), not a
            device preset (``'a100'`` is the figures the reports use).  A
            CuPy device is timed with CUDA events.
        progress: None, or a function of ``(fraction done, text)`` called
            as the calibration goes.
        seed (int): the probes' random shapes (None: new ones each time).
        clock (str): ``'wall'`` (``time.perf_counter``) or, on NumPy,
            ``'cpu'`` (``time.process_time``, see
            :data:`~chainer_computational_cost.run.measure.CLOCKS`): on a
            machine shared with other busy processes the wall time of a
            step stretches with their load; the CPU time does not.  A
            calibration predicts times of its clock.

    The timings run on the BLAS threads NumPy was started with: calibrate
    with the same ``OPENBLAS_NUM_THREADS`` (or ``MKL_NUM_THREADS``) as the
    runs to predict.

    Every argument is checked before anything runs (a one-line ValueError
    names it; for a value of the wrong type, an ``ArgumentTypeError``:
    a TypeError that is a ValueError too).  A calibration whose held-out
    error is above
    :data:`~chainer_computational_cost.analysis.calibration.TRUSTED_ERROR`
    warns (a ``ReportWarning`` naming the likely cause and the remedies).
    """
    # a finite budget: the probes run until it is spent
    checks.number('seconds', seconds, MIN_SECONDS)
    if progress is not None:
        checks.instance('progress', progress, collections.abc.Callable,
                        'None or a function of (fraction, text)')
    check_seed(seed)
    device = _device_of(device)
    xp = device.xp
    checks.one_of('clock', clock, CLOCKS if xp is numpy else ('wall',),
                  allowed="'wall' or, on NumPy, 'cpu'")
    with using_clock(clock):
        found = _calibrate(seconds, device, progress, seed, clock)
    untrusted = found.untrusted()
    if untrusted is not None:
        warnings.warn(untrusted, ReportWarning, stacklevel=2)
    return found


def _on_device(made, device):
    """A probe's ``(model, inputs, loss_of)`` on ``device``."""
    model, inputs, labels, loss = made
    if device.xp is not numpy:  # pragma: no cover (no GPU here)
        model.to_device(device)
        inputs = tuple(device.send(a) for a in inputs)
        labels = None if labels is None else device.send(labels)
    return model, inputs, lambda y: loss(y, labels)


def _calibrate(seconds, device, progress, seed, clock):
    xp = device.xp
    notify = progress or (lambda fraction, text: None)
    start = time.time()
    end = start + seconds
    notify(0.0, 'matrix products')
    gemm = gemm_table(xp, deadline=start + 0.2 * seconds)
    bandwidth = copy_bandwidth(xp)
    rng = numpy.random.RandomState(seed)
    state = numpy.random.get_state()
    numpy.random.seed(rng.randint(2 ** 31))
    samples = []
    # First the probes of COVER, in order, then random ones.
    first = iter(COVER)
    try:
        while time.time() < end:
            notify(min((time.time() - start) / seconds, 1.0),
                   'probes: {}'.format(len(samples)))
            make = next(first, None) or PROBES[rng.randint(len(PROBES))]
            model, inputs, loss_of = _on_device(make(rng), device)
            # No probe takes more than PROBE_SHARE of the budget, nor
            # goes past it.
            deadline = min(end, time.time() + PROBE_SHARE * seconds)
            for train in (False, True):
                got = _measure_probe(model, inputs, loss_of, train, xp,
                                     deadline)
                if got is None:
                    break  # training takes longer than inference
                samples.append(got + (train,))
    finally:
        numpy.random.set_state(state)
    notify(1.0, 'fitting {} probe runs'.format(len(samples)))
    families, types, overhead = _fit(samples, gemm)
    error = cross_validate(samples, gemm)
    info = cal.info_now(seconds=seconds, **device_info(xp))
    info['uncovered'] = _uncovered(types)
    info['clock'] = clock
    return cal.Calibration(gemm, families, types, overhead, error, info,
                           bandwidth)
