"""Measuring a device as a user sees it: what a calibration records, the
table and bandwidth it derives from its clock's readings, which probe
runs it keeps, the fits it makes of literal timings and the probes it
builds.

No test depends on how fast anything runs: the clock is a fake one
(:func:`measure.using_clock` with a clock registered for the test) whose
readings are set, and the deadlines read a fake ``time.time``; the CuPy
path runs on a fake CuPy whose events give set times.
"""

import functools
import os
import time
import types

import chainer
import chainer.functions as F
import chainer.links as L
import numpy
import pytest

from chainer_computational_cost import calibrate
from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.core.records import ReportWarning
from chainer_computational_cost.run import measure


def _timings(durations):
    """A clock whose readings go in pairs, start and end, the n-th pair
    ``durations[n]`` apart (it fails when read more often)."""
    readings, now = [], 0.0
    for d in durations:
        readings += [now, now + d]
        now += d
    return functools.partial(next, iter(readings))


class _Ticks(object):
    """A clock that moves one second at each reading: whatever is timed
    between two readings took 1 s."""

    def __init__(self, start=0.0, step=1.0):
        self.now, self.step = start, step

    def __call__(self):
        self.now += self.step
        return self.now


@pytest.fixture
def fake_clock(monkeypatch):
    """Registers ``clock`` as the clock ``'fake'``; returns a function
    setting it."""
    def use(clock):
        monkeypatch.setitem(measure.CLOCKS, 'fake', clock)
    return use


# The clock


def test_the_median_of_an_odd_and_an_even_number_of_timings():
    assert measure._median([3.0, 1.0, 2.0]) == 2.0
    assert measure._median([4.0, 1.0, 3.0, 2.0]) == 2.5


# The matrix-product table and the bandwidth


def test_the_table_keeps_each_shapes_median_and_fills_the_large_ones(
        monkeypatch, fake_clock):
    # Dims 2 and 4, products of at most 16 multiply-adds run: 2x2x2,
    # 2x2x4, 2x4x2 and 4x2x2, in that order, three timings each, their
    # medians 1, 2, 4 and 0.5 s: speeds 8/1 = 8, 16/2 = 8, 16/4 = 4 and
    # 16/0.5 = 32.  A larger shape takes the fastest of those no larger
    # in any dimension: 2x4x4 the 8 of 2x2x2 and 2x2x4 (not 4x2x2's 32),
    # the others 32.
    monkeypatch.setattr(measure, 'GEMM_MAX', 16)
    fake_clock(_timings([x * d for d in (1, 2, 4, 0.5)
                         for x in (3, 1, 0.5)]))
    with measure.using_clock('fake'):
        table = measure.gemm_table(numpy, dims=(2, 4))
    assert table.dims == [2, 4]
    assert table.speed == [[[8, 8], [4, 8]], [[32, 32], [32, 32]]]


def test_a_timing_of_zero_counts_as_a_nanosecond(fake_clock):
    # A clock too coarse to see a small product (the CPU time's can be):
    # 2x2x2 = 8 multiply-adds in 1e-9 s, 8e9 a second, not a division by
    # zero; 2 * 64 KiB copied in 1e-9 s likewise.
    fake_clock(_timings([0.0] * 6))
    with measure.using_clock('fake'):
        table = measure.gemm_table(numpy, dims=(2,))
        assert measure.copy_bandwidth(numpy, 2 ** 16) == \
            pytest.approx(2 ** 17 / 1e-9)
    assert table.speed == [[[pytest.approx(8e9)]]]


def test_a_table_past_its_deadline_runs_nothing():
    # No shape measured: every one at 1e9 multiply-adds a second.
    table = measure.gemm_table(numpy, dims=(2, 4), deadline=0.0)
    assert table.speed == [[[1e9] * 2] * 2] * 2
    # A calibration's table: each dimension from 4 to 4096, every factor
    # of 4 (docs/predicted_time.md).
    assert measure.gemm_table(numpy, deadline=0.0).dims == [
        4, 16, 64, 256, 1024, 4096]


def test_the_bandwidth_counts_the_bytes_read_and_written(fake_clock):
    # Copies of 64 KiB timed 4, 1 and 2 s: the median, 2 s, for 2 * 64
    # KiB read and written: 65536 bytes a second.
    fake_clock(_timings([4.0, 1.0, 2.0]))
    with measure.using_clock('fake'):
        assert measure.copy_bandwidth(numpy, 2 ** 16) == 65536.0


# What is recorded about the device


def test_the_device_info_names_the_versions_the_cpu_and_the_threads(
        monkeypatch):
    for name in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS',
                 'MKL_NUM_THREADS'):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv('OPENBLAS_NUM_THREADS', '1')
    info = measure.device_info(numpy)
    assert info['chainer'] == chainer.__version__
    assert info['xp'] == 'numpy' and info['numpy'] == numpy.__version__
    assert info['threads'] == {'OPENBLAS_NUM_THREADS': '1'}
    assert info['cpus'] == os.cpu_count()
    assert isinstance(info['device'], str) and info['device']
    assert isinstance(info['blas'], str) and info['blas']


def test_the_cpu_is_named_from_its_model_name_line(monkeypatch, tmp_path):
    cpuinfo = tmp_path / 'cpuinfo'
    cpuinfo.write_text('processor\t: 0\nmodel name\t: Some CPU @ 2GHz\n'
                       'flags\t\t: fpu\n')
    monkeypatch.setattr(measure, 'open', lambda path: open(str(cpuinfo)),
                        raising=False)
    assert measure._cpu_name() == 'Some CPU @ 2GHz'

    def refuse(path):
        raise OSError('no such file')
    # Without /proc/cpuinfo, what the platform says.
    monkeypatch.setattr(measure, 'open', refuse, raising=False)
    monkeypatch.setattr(measure.platform, 'processor', lambda: 'arm64')
    assert measure._cpu_name() == 'arm64'


def test_the_blas_is_named_with_its_version(monkeypatch):
    config = {'Build Dependencies': {'blas': {'name': 'openblas',
                                              'version': '0.3.27'}}}
    monkeypatch.setattr(numpy, 'show_config', lambda mode: config)
    assert measure._blas_name() == 'openblas 0.3.27'


def test_an_older_numpy_names_its_blas_libraries(monkeypatch):
    # NumPy before 1.26 has no show_config(mode=...): its __config__'s
    # blas_opt_info lists the libraries, each named once, sorted.
    def old_show_config():
        pass
    monkeypatch.setattr(numpy, 'show_config', old_show_config)
    monkeypatch.setattr(numpy, '__config__', types.SimpleNamespace(
        blas_opt_info={'libraries': ['openblas', 'cblas', 'openblas']}),
        raising=False)
    assert measure._blas_name() == 'cblas openblas'
    # Nothing to read: unknown.
    monkeypatch.setattr(numpy, '__config__', types.SimpleNamespace(),
                        raising=False)
    assert measure._blas_name() == 'unknown'


# A probe's runs


class _Net(chainer.Chain):
    """x -> relu(W x), W (1, 2) of ones; records the configuration each
    run sees."""

    def __init__(self):
        super(_Net, self).__init__()
        with self.init_scope():
            self.fc = L.Linear(2, 1, nobias=True, initialW=1.0)
        self.seen = []

    def forward(self, x):
        self.seen.append((chainer.config.train,
                          chainer.config.enable_backprop))
        return F.relu(self.fc(x))


def test_a_training_step_starts_from_cleared_gradients():
    # loss = sum(W x) with x = (1, 1): dW = (1, 1) every step; SGD at lr
    # 0.1 takes W from 1 to 0.9 to 0.8, and after two steps the gradient
    # is one step's, (1, 1), not their sum.
    net = _Net()
    opt = chainer.optimizers.SGD(lr=0.1)
    opt.setup(net)
    x = numpy.ones((1, 2), numpy.float32)
    run = measure.step_function(net, (x,), F.sum, True, opt)
    run()
    run()
    assert net.fc.W.array[0].tolist() == pytest.approx([0.8, 0.8])
    assert net.fc.W.grad.tolist() == [[1.0, 1.0]]
    assert net.seen == [(True, True)] * 2


def test_an_inference_run_keeps_no_graph_and_changes_nothing():
    net = _Net()
    net.fc.W.grad = numpy.zeros((1, 2), numpy.float32)
    x = numpy.ones((1, 2), numpy.float32)
    measure.step_function(net, (x,), F.sum, False)()
    assert net.seen == [(False, False)]
    assert net.fc.W.array.tolist() == [[1.0, 1.0]]
    assert net.fc.W.grad.tolist() == [[0.0, 0.0]]


def test_every_call_and_the_step_are_timed_with_the_clock(fake_clock):
    # Each reading moves the clock 1 s: each hooked call takes 1 s, and
    # so does each step timed without the hook.  A training step: the
    # forward's Linear, ReLU and Sum, their backward calls and one
    # update of W.
    fake_clock(_Ticks())
    net = _Net()
    x = numpy.ones((1, 2), numpy.float32)
    with measure.using_clock('fake'):
        layers, wall = measure._measure_probe(net, (x,), F.sum, True,
                                              numpy)
    assert wall == 1.0
    assert [x['time'] for x in layers] == [1.0] * len(layers)
    assert [x['phase'] for x in layers][:3] == ['forward'] * 3
    assert layers[-1]['phase'] == 'update'
    # One run not timed, three hooked and three without the hook.
    assert len(net.seen) == 7


class _Slowing(object):
    """A clock whose i-th reading moves it i seconds: a call timed by
    readings i - 1 and i took i seconds."""

    def __init__(self):
        self.now, self.readings = 0.0, 0

    def __call__(self):
        self.readings += 1
        self.now += self.readings
        return self.now


def test_each_call_and_the_step_take_the_median_of_three_runs(fake_clock):
    # Inference: Linear then ReLU, two readings each.  Hooked runs take
    # readings 1-4, 5-8 and 9-12: Linear 2, 6, 10 s, ReLU 4, 8, 12 s;
    # medians 6 and 8.  Three steps without the hook, readings 13-18:
    # 14, 16 and 18 s, median 16.
    fake_clock(_Slowing())
    x = numpy.ones((1, 2), numpy.float32)
    with measure.using_clock('fake'):
        layers, wall = measure._measure_probe(_Net(), (x,), F.sum, False,
                                              numpy)
    assert [(x['type'], x['time']) for x in layers] == [
        ('LinearFunction', 6), ('ReLU', 8)]
    assert wall == 16


def test_a_probe_whose_timed_runs_would_end_past_its_deadline_is_left_out(
        monkeypatch):
    # Its first run takes 1 s (time.time reads 100, then 101): six timed
    # runs more (three with the hook, three without) end at 107.
    def measured(deadline):
        clock = iter([100.0, 101.0])
        monkeypatch.setattr(measure, 'time', types.SimpleNamespace(
            time=lambda: next(clock)))
        x = numpy.ones((1, 2), numpy.float32)
        return measure._measure_probe(_Net(), (x,), F.sum, False, numpy,
                                      deadline)
    assert measured(107.0) is not None
    assert measured(106.9) is None


class _Flip(chainer.Chain):
    """A network whose calls differ from one run to the next."""

    def __init__(self):
        super(_Flip, self).__init__()
        self.runs = 0

    def forward(self, x):
        self.runs += 1
        return F.relu(x) if self.runs % 2 else F.tanh(x)


def test_a_probe_whose_runs_differ_is_left_out():
    x = numpy.ones((1, 2), numpy.float32)
    assert measure._measure_probe(_Flip(), (x,), F.sum, False,
                                  numpy) is None


# The fits of a calibration's probe runs


_TABLE = measure.cal.GemmTable([1, 4], [[[1e9] * 2] * 2] * 2)


def _add(time, mread=8, phase='forward'):
    return {'name': 'Add-1', 'type': 'Add', 'flops': 2, 'mread': mread,
            'mwrite': 8, 'phase': phase, 'input_shapes': [(2,), (2,)],
            'output_shapes': [(2,)], 'dtype': 'float32', 'time': time}


def test_a_family_is_fitted_from_twice_as_many_calls_as_features():
    # Elementwise math has 5 features: 10 calls fit it, 9 do not; the
    # types of a family not fitted are not the calibration's.
    relu = dict(_add(1e-5), type='ReLU')
    ten = [_add(1e-5)] * 10 + [relu]
    families, types_, _ = measure._fit([(ten, 1.0, False)], _TABLE)
    assert set(families) == {'math'} and types_ == {'Add': 'math'}
    assert families['math']['n'] == 10
    families, types_, _ = measure._fit([([_add(1e-5)] * 9, 1.0, False)],
                                       _TABLE)
    assert families == {} and types_ == {}


def test_a_calibration_without_probe_runs_fits_nothing():
    # A budget too short for any probe: no family, no type, no overhead
    # and no error, rather than a failure.
    assert measure._fit([], _TABLE) == (
        {}, {}, dict.fromkeys(measure.cal.OVERHEADS, 0.0))
    assert measure.cross_validate([], _TABLE) == {
        'n_probes': 0, 'inference': None, 'training': None}


def test_the_overhead_weighs_a_short_step_more():
    # Two inference runs of one call of 0.5 s, steps of 1 s and 2 s: gaps
    # 0.5 and 1.5 s weighted 1/1 and 1/2, squared 1 and 0.25: (0.5 +
    # 0.25 * 1.5) / 1.25 = 0.7 s a call; the other kinds never ran: 0.
    _, _, overhead = measure._fit([([_add(0.5)], 1.0, False),
                                   ([_add(0.5)], 2.0, False)], _TABLE)
    assert overhead == pytest.approx({'inference': 0.7, 'forward': 0.0,
                                      'backward': 0.0, 'update': 0.0})


def test_the_error_leaves_out_short_runs_and_needs_five_of_a_mode():
    # An exact model, t = 1e-4 + 1e-9 * bytes read, and 1 us of overhead
    # a call: five inference runs of five calls reading 1 to 2 MB (over
    # 5 ms a run) are predicted exactly; the five training runs read
    # under 100 kB (under 2 ms a run): left out, too few for an error.
    rng = numpy.random.RandomState(0)
    samples = []
    for i in range(10):
        train = i % 2 == 1
        reads = rng.randint(0, 10 ** 5, 5) if train else \
            rng.randint(10 ** 6, 2 * 10 ** 6, 5)
        layers = [_add(1e-4 + 1e-9 * int(r), int(r)) for r in reads]
        wall = sum(x['time'] for x in layers) + 5e-6
        assert (wall < 2e-3) == train
        samples.append((layers, wall, train))
    error = measure.cross_validate(samples, _TABLE)
    assert error['n_probes'] == 10 and error['training'] is None
    assert error['inference'] == pytest.approx(0.0, abs=1e-9)


# The probes


def _types_of(make, seeds, train=False):
    found = set()
    for seed in seeds:
        model, inputs, _, _ = make(numpy.random.RandomState(seed))
        with chainer.using_config('train', train), \
                ComputationalCostHook() as hook:
            model(*[a[:1] for a in inputs])  # one example: the same calls
        found.update(x['type'] for x in hook.layer_report.values()
                     if 'type' in x)
    return found


def test_the_probes_run_every_documented_kind_of_layer():
    # docs/predicted_time.md: convolutions with batch normalization,
    # max and average pooling, residual sums, concatenations, local
    # response normalization and dropout; perceptrons' activations;
    # attention in 2-D and batched products.
    state = numpy.random.get_state()
    try:
        cnn = _types_of(measure._cnn_probe, range(16), train=True)
        mlp = _types_of(measure._mlp_probe, range(8), train=True)
        attention = _types_of(measure._attention_probe, range(6))
    finally:
        numpy.random.set_state(state)
    assert {'Convolution2DFunction', 'BatchNormalization', 'ReLU',
            'AveragePooling2D', 'Add', 'Concat',
            'LocalResponseNormalization', 'Dropout',
            'LinearFunction'} <= cnn
    # Chainer 7's max pooling is MaxPoolingND, Chainer 6's MaxPooling2D.
    assert {'MaxPooling2D', 'MaxPoolingND'} & cnn
    assert {'LinearFunction', 'ReLU', 'Tanh', 'Sigmoid', 'Dropout'} <= mlp
    assert {'MatMul', 'BatchMatMul', 'Softmax', 'LayerNormalization',
            'Transpose'} <= attention


def test_a_cnn_probe_knows_its_sides_and_caps_its_convolutions():
    # The caps on a probe's buffers are reckoned from the sides it plans:
    # each must be the side its step outputs when run (Chainer's max
    # pooling 3x3 / 2 pad 1 of 56 gives 29, its cover_all padding a
    # window past the edge).  Its convolutions (but a residual block's,
    # as wide as its input) have 16 to 512 filters, halved while one
    # would do more than 1.5e9 multiply-adds (batch * oh * ow * out * c *
    # kh * kw), down to 16 at least.
    x = numpy.ones((1, 1, 56, 56), numpy.float32)
    assert F.max_pooling_2d(x, 3, 2, pad=1).shape[2] == 29
    # Their im2col buffers: at most 128 MiB of float32 (the docs).
    assert measure.PROBE_COL_MAX * 4 == 128 * 2 ** 20
    widths = set()
    state = numpy.random.get_state()
    try:
        for seed in range(12):
            model, (x,), _, _ = measure._cnn_probe(
                numpy.random.RandomState(seed))
            batch, sides = x.shape[0], []
            with chainer.using_config('train', False), \
                    ComputationalCostHook() as hook:
                x = x[:1]  # one example: the same sides
                for step in model.plan[:-1]:
                    x = step(model, x)
                    sides.append(x.shape[2])
            assert sides == model.sides, seed
            for layer in hook.layer_report.values():
                if layer.get('type') == 'Convolution2DFunction':
                    (_, c, _, _), (out, _, kh, kw) = layer['input_shapes']
                    _, _, oh, ow = layer['output_shapes'][0]
                    if out == c:
                        continue  # a residual block's, or drawn so
                    widths.add(out)
                    assert 16 <= out <= 512
                    assert out == 16 or \
                        batch * oh * ow * out * c * kh * kw <= 1.5e9
    finally:
        numpy.random.set_state(state)
    assert len(widths) > 2


class _Recorder(object):
    """A random state recording what each draw was offered."""

    def __init__(self, seed):
        self.rng = numpy.random.RandomState(seed)
        self.offered = set()

    def choice(self, options):
        self.offered.add(tuple(options))
        return self.rng.choice(options)

    def randint(self, *bounds):
        self.offered.add(bounds)
        return self.rng.randint(*bounds)


def test_the_probes_draw_the_documented_shapes():
    # docs/predicted_time.md's table of what each kind of probe draws
    # from (a call outside it is flagged 'outside range'): every list a
    # probe draws from, over the first seeds.
    drawn = {}
    state = numpy.random.get_state()
    try:
        for make, seeds in ((measure._cnn_probe, 6),
                            (measure._mlp_probe, 3),
                            (measure._attention_probe, 3),
                            (measure._lstm_probe, 2)):
            drawn[make.__name__] = set()
            for seed in range(seeds):
                rng = _Recorder(seed)
                make(rng)
                drawn[make.__name__] |= rng.offered
    finally:
        numpy.random.set_state(state)
    assert drawn == {
        '_cnn_probe': {
            (1, 2, 4, 8), (3, 16, 32, 64, 128, 256), (7, 14, 28, 56, 112),
            (2, 8), ('conv', 'conv', 'conv', 'res', 'maxpool', 'avgpool',
                     'lrn', 'concat', 'dropout'),
            (1, 1, 3, 3, 3, 5, 7), (1, 1, 1, 2),
            (16, 32, 64, 128, 256, 512), (10, 100, 1000)},
        '_mlp_probe': {(1, 8, 32, 128, 512), (16, 64, 256, 1024, 4096),
                       (2, 5), ('relu', 'tanh', 'sigmoid', 'dropout')},
        '_attention_probe': {(1, 2, 4, 8), (16, 32, 64, 128, 256),
                             (64, 128, 256, 512), (2,)},
        '_lstm_probe': {(1, 4, 16, 64), (5, 10, 20), (1000, 5000, 20000),
                        (64, 128, 256, 512)}}


def test_a_side_of_8_may_be_strided():
    # "stride 2 once in four on sides of 8 or more" (docs/predicted_time.md):
    # a convolution on a side of 8 is offered the strides, one of 7 not
    for side, offered in ((8, True), (7, False)):
        rng = _Recorder(0)
        measure._conv_step(rng, {}, [], 'l0', 'conv', 1, 3, side)
        assert ((1, 1, 1, 2) in rng.offered) is offered


def _counts(make, seed):
    model, inputs, _, _ = make(numpy.random.RandomState(seed))
    with chainer.using_config('train', True), \
            ComputationalCostHook() as hook:
        model(*[a[:1] for a in inputs])  # one example: the same calls
    out = {}
    for name, x in hook.layer_report.items():
        if name != 'total':
            out[x['type']] = out.get(x['type'], 0) + 1
    return inputs[0].shape, out


def test_the_perceptron_probe_has_an_activation_after_each_layer():
    # Each linear layer is followed by a ReLU, tanh, sigmoid or dropout.
    activations = ('ReLU', 'Tanh', 'Sigmoid', 'Dropout')
    state = numpy.random.get_state()
    try:
        for seed in range(4):
            _, n = _counts(measure._mlp_probe, seed)
            assert set(n) <= {'LinearFunction'} | set(activations)
            assert n['LinearFunction'] == sum(n.get(a, 0)
                                              for a in activations)
    finally:
        numpy.random.set_state(state)


def test_the_attention_probe_is_a_transformer_block():
    # Pre-norm: x2 = x + dropout(o(attention(n1(x)))), then x2 +
    # f2(relu(f1(n2(x2)))): two layer norms, four linear layers (qkv, o,
    # f1, f2), the scores' and the values' products (2-D or batched),
    # one scaling, one softmax, one dropout, one ReLU, two residual sums;
    # the heads split off the qkv tensor and merged back: two transposes.
    state = numpy.random.get_state()
    try:
        for seed in (0, 2):
            _, n = _counts(measure._attention_probe, seed)
            products = n.pop('MatMul', 0) + n.pop('BatchMatMul', 0)
            assert products == 2
            assert {k: n.get(k) for k in (
                'LayerNormalization', 'LinearFunction', 'MulConstant',
                'Softmax', 'Dropout', 'ReLU', 'Add', 'Separate',
                'Transpose')} == {
                'LayerNormalization': 2, 'LinearFunction': 4,
                'MulConstant': 1, 'Softmax': 1, 'Dropout': 1, 'ReLU': 1,
                'Add': 2, 'Separate': 1, 'Transpose': 2}
    finally:
        numpy.random.set_state(state)


def test_the_lstm_probe_predicts_each_next_token():
    # ids of T columns: n = T - 1 steps, each an embedding, a dropout,
    # an LSTM cell, an output layer and its loss; the cell's upward
    # layer at every step, its lateral one from the second (h is None
    # before): 3n - 1 linear layers; n - 1 sums of the two, n - 1 of the
    # losses after 0 + the first (an AddConstant).
    state = numpy.random.get_state()
    try:
        shape, n = _counts(measure._lstm_probe, 0)
    finally:
        numpy.random.set_state(state)
    steps = shape[1] - 1
    assert n == {'EmbedIDFunction': steps, 'Dropout': steps,
                 'LSTM': steps, 'SoftmaxCrossEntropy': steps,
                 'LinearFunction': 3 * steps - 1, 'Add': 2 * steps - 2,
                 'AddConstant': 1}


@pytest.mark.parametrize('make', [measure._cnn_probe, measure._mlp_probe,
                                  measure._attention_probe,
                                  measure._lstm_probe])
def test_each_kind_of_probe_trains(make):
    # A training step of each probe of two seeds runs through (its links
    # fit its shapes) and changes its parameters.
    state = numpy.random.get_state()
    try:
        for seed in (0, 1):
            model, inputs, loss_of = measure._on_device(
                make(numpy.random.RandomState(seed)),
                measure._device_of(None))
            before = [p.array.copy() for p in model.params()]
            opt = chainer.optimizers.SGD(lr=0.1)
            opt.setup(model)
            measure.step_function(model, inputs, loss_of, True, opt)()
            assert any((p.array != b).any()
                       for p, b in zip(model.params(), before))
    finally:
        numpy.random.set_state(state)


# A calibration


def _tiny_probe(widths, rng):
    width = int(rng.randint(2, 6))
    widths.append(width)
    model = measure._Probe([lambda m, x: F.relu(m.l(x))],
                           {'l': L.Linear(3, width)})
    x = numpy.random.rand(2, 3).astype(numpy.float32)
    return model, (x,), None, lambda y, t: F.sum(y)


_GEMM_TABLE = measure.gemm_table


def _calibrate(monkeypatch, seed):
    """A 10 s calibration by a fake time.time moving 0.125 s a reading,
    with a clock moving 1 s a reading (every call and step takes 1 s),
    tiny probes only (no first phase) and a table of dims 4 and 16."""
    widths, progress, deadlines = [], [], []
    monkeypatch.setattr(measure, 'PROBES', (functools.partial(
        _tiny_probe, widths),))
    monkeypatch.setattr(measure, 'COVER', ())

    def small_table(xp, deadline):
        deadlines.append(deadline)
        return _GEMM_TABLE(xp, dims=(4, 16), deadline=deadline)
    monkeypatch.setattr(measure, 'gemm_table', small_table)
    monkeypatch.setattr(measure, 'time', types.SimpleNamespace(
        time=_Ticks(1000.0, 0.125)))
    monkeypatch.setitem(measure.CLOCKS, 'fake', _Ticks())
    # a calibration of that clock loads again
    monkeypatch.setattr(measure.cal, 'CLOCKS', measure.cal.CLOCKS + ('fake',))
    # every call and step taking 1 s: held-out error far above 25 %
    with pytest.warns(ReportWarning, match=r'held-out error \d+% is above '
                      r'25%: .*likely cause: too few probes'):
        found = calibrate(seconds=10, seed=seed, clock='fake',
                          progress=lambda f, text: progress.append(
                              (f, text)))
    # It began at the first reading, 1000.125: a fifth of the budget, 2
    # s, goes to the table.
    assert deadlines == [1002.125]
    return found, widths, progress


def test_a_calibration_by_a_clock_of_one_second_a_call(monkeypatch):
    numpy.random.seed(7)
    state = numpy.random.get_state()
    found, widths, progress = _calibrate(monkeypatch, 3)
    # The user's random state is theirs: the probes drew from their own.
    after = numpy.random.get_state()
    assert after[0] == state[0] and (after[1] == state[1]).all() and \
        after[2:] == state[2:]
    # A probe's first run ends 0.25 s after its deadline was set and its
    # six timed runs would take 0.75 s more: 1 s, within its eighth of
    # the budget, 1.25 s (but the last probes would end past the budget).
    # The last probe, begun with less than that left, is left out.
    n = len(widths)
    assert 10 <= found.error['n_probes'] <= 2 * (n - 1)
    assert found.info['clock'] == 'fake' and found.info['seconds'] == 10
    assert found.info['xp'] == 'numpy'
    assert {'date', 'chainer', 'numpy', 'device', 'blas', 'threads',
            'cpus'} <= set(found.info)
    # Every product took 1 s: its speed is its multiply-adds, M*N*K.
    assert found.gemm.speed == [[[64, 256], [256, 1024]],
                                [[256, 1024], [1024, 4096]]]
    # 64 MiB copied in 1 s, read and written.
    assert found.bandwidth == 2 * 64 * 2 ** 20
    # Each call predicted at its 1 s; a step's calls add up to more than
    # its 1 s, so no overhead is left.
    relu = {'type': 'ReLU', 'phase': 'forward', 'flops': 2 * widths[0],
            'mread': 8 * widths[0], 'mwrite': 8 * widths[0],
            'input_shapes': [(2, widths[0])],
            'output_shapes': [(2, widths[0])], 'dtype': 'float32'}
    assert found.predict(relu) == (pytest.approx(1.0), None)
    assert found.overhead == dict.fromkeys(measure.cal.OVERHEADS, 0.0)
    # Inference: Linear and ReLU predicted 2 s, measured 1 s: 100 % off;
    # training: 3 forward calls (Linear, ReLU, Sum), 4 backward
    # (BroadcastTo, ReLUGrad2, LinearGradWeight, the bias's Sum) and 2
    # updates: 9 s against 1 s, 800 % off.
    assert found.error['inference'] == pytest.approx(1.0)
    assert found.error['training'] == pytest.approx(8.0)
    # The progress starts at 0 with the table, ends with the fits.
    assert progress[0] == (0.0, 'matrix products')
    assert progress[-1] == (1.0, 'fitting {} probe runs'.format(
        found.error['n_probes']))
    assert progress[1][1] == 'probes: 0' and progress[2][1] == 'probes: 2'
    # It rises to the end: the last probe begins with less than one
    # probe's 7 readings (0.875 s) and the reading of its notice left of
    # the 10 s, past 90 %.
    fractions = [f for f, _ in progress[1:-1]]
    assert fractions == sorted(fractions)
    assert 0 < fractions[0] and 0.9 < fractions[-1] < 1


def test_a_seed_draws_the_same_probes_again(monkeypatch):
    _, first, _ = _calibrate(monkeypatch, 3)
    _, again, _ = _calibrate(monkeypatch, 3)
    _, other, _ = _calibrate(monkeypatch, 4)
    assert first == again and first != other


def test_the_budget_and_clock_are_checked():
    for seconds in (True, '60', 9.9, float('nan')):
        with pytest.raises(ValueError, match='seconds must be a finite number '
                           '>= 10, got'):
            calibrate(seconds=seconds)


def _no_calibration(*args):
    pytest.fail('calibrate ran with arguments it should have refused')


@pytest.mark.parametrize('kwargs, message', [
    # an infinite budget probed for ever: refused before anything runs
    ({'seconds': float('inf')}, r'^seconds must be a finite number >= 10, '
     r'got inf$'),
    ({'seconds': 1e400}, 'got inf$'),
    ({'seconds': 10, 'progress': 'bar'}, r'^progress must be None or a '
     r"function of \(fraction, text\), got 'bar'$"),
    ({'seconds': 10, 'seed': -1}, '^seed must be None or an int from 0 to '
     '4294967295, got -1$'),
    # NumPy's RandomState would refuse it after the progress started
    ({'seconds': 10, 'seed': 2 ** 32}, '^seed must be None or an int from 0 '
     'to 4294967295, got 4294967296$'),
    ({'seconds': 10, 'seed': 1.5}, 'got 1.5$'),
    ({'seconds': 10, 'clock': ['cpu']}, r"^clock must be 'wall' or, on "
     r"NumPy, 'cpu', got \['cpu'\]$"),
])
def test_what_calibrate_cannot_run_is_refused_at_once(monkeypatch, kwargs,
                                                      message):
    monkeypatch.setattr(measure, '_calibrate', _no_calibration)
    with pytest.raises(ValueError, match=message):
        calibrate(**kwargs)


def test_using_clock_names_its_clocks():
    with pytest.raises(ValueError, match=r"^clock must be one of 'wall', "
                       r"'cpu', got \['wall'\]$"):
        with measure.using_clock(['wall']):
            pass


# The CuPy path, on a fake CuPy (no GPU here: this checks its plumbing and
# units, not that it runs on a device)


def _fake_cupy(elapsed_ms, name=b'Fake GPU', cublas=None):
    """An array module named cupy: NumPy's arrays, CUDA events whose
    elapsed times are ``elapsed_ms`` in turn (milliseconds, as CuPy's)."""
    elapsed = iter(elapsed_ms)

    def get_version(handle):
        if cublas is None:
            raise AttributeError('no getVersion in this CuPy')
        return cublas

    recorded = []

    class Event(object):
        def record(self):
            recorded.append(self)

        def synchronize(self):
            pass

    def get_elapsed_time(start, end):
        # From the start's record to the end's, as CuPy's.
        assert recorded.index(start) < recorded.index(end)
        return next(elapsed)

    cuda = types.SimpleNamespace(
        Event=Event, get_elapsed_time=get_elapsed_time,
        get_current_stream=lambda: types.SimpleNamespace(
            synchronize=lambda: None),
        Device=lambda: types.SimpleNamespace(id=0, cublas_handle=7),
        runtime=types.SimpleNamespace(
            getDeviceProperties=lambda i: {'name': name}),
        cublas=types.SimpleNamespace(getVersion=get_version))
    return types.SimpleNamespace(
        __name__='cupy', __version__='99.0', cuda=cuda, ones=numpy.ones,
        empty_like=numpy.empty_like, copyto=numpy.copyto)


def test_a_gpu_is_timed_by_its_events_in_milliseconds():
    # Copies timed 4, 1 and 2 ms by the device's events: the median, 2
    # ms, for 2 * 64 KiB: 65536 / 1e-3 = 6.5536e7 bytes a second.
    assert measure.copy_bandwidth(_fake_cupy([4.0, 1.0, 2.0]),
                                  2 ** 16) == pytest.approx(6.5536e7)
    # Every product 1 ms: its speed is M*N*K / 1e-3.
    table = measure.gemm_table(_fake_cupy([1.0] * 24), dims=(2, 4))
    assert table.speed == [[[8e3, 16e3], [16e3, 32e3]],
                           [[16e3, 32e3], [32e3, 64e3]]]


def test_a_gpus_info_names_it_and_its_cublas():
    info = measure.device_info(_fake_cupy([], cublas=12000))
    assert info == {'chainer': chainer.__version__, 'xp': 'cupy',
                    'numpy': numpy.__version__, 'cupy': '99.0',
                    'device': 'Fake GPU', 'blas': 'cuBLAS 12000'}
    # A name given as text, and a CuPy that does not tell the version.
    info = measure.device_info(_fake_cupy([], name='Other GPU'))
    assert (info['device'], info['blas']) == ('Other GPU', 'cuBLAS')


def test_a_probe_for_a_gpu_is_sent_there():
    # Its model, inputs and labels go to the device; the loss reads the
    # labels sent.
    sent = []
    model = types.SimpleNamespace(to_device=sent.append)
    device = types.SimpleNamespace(xp=_fake_cupy([]),
                                   send=lambda a: ('sent', a))
    loss = []
    got, inputs, loss_of = measure._on_device(
        (model, ('x',), 'labels', lambda y, t: loss.append((y, t))),
        device)
    assert got is model and sent == [device]
    assert inputs == (('sent', 'x'),)
    loss_of('y')
    assert loss == [('y', ('sent', 'labels'))]
    # Without labels, none is sent.
    _, _, loss_of = measure._on_device(
        (model, ('x',), None, lambda y, t: loss.append((y, t))), device)
    loss_of('z')
    assert loss[-1] == ('z', None)


def test_a_gpu_is_calibrated_on_the_wall_clock_only(monkeypatch):
    monkeypatch.setattr(measure, '_device_of', lambda device:
                        types.SimpleNamespace(xp=_fake_cupy([])))
    with pytest.raises(ValueError, match="clock must be 'wall' or, on "
                       "NumPy, 'cpu', got 'cpu'"):
        calibrate(seconds=10, device='@cupy:0', clock='cpu')


# The clock of a hook, and of a calibration's probes

def test_a_hook_times_each_call_with_its_clock():
    x = numpy.ones((2, 3), numpy.float32)
    clock = _Ticks(step=0.5)
    with ComputationalCostHook(measure_time=True, clock=clock) as cch:
        F.relu(x)
        F.exp(x)
    # each call reads the clock twice, before and after: 0.5 s apart
    assert cch.layer_report['ReLU-1']['time'] == 0.5
    assert cch.layer_report['Exp-1']['time'] == 0.5


def test_a_clock_that_is_not_a_function_is_refused():
    with pytest.raises(TypeError, match='clock must be a function giving '
                       "seconds .*, got 'cpu'"):
        ComputationalCostHook(measure_time=True, clock='cpu')


def test_a_probe_is_timed_with_the_clock_of_its_block(monkeypatch):
    monkeypatch.setitem(measure.CLOCKS, 'fake', _Ticks(step=0.25))
    x = numpy.ones((2, 3), numpy.float32)

    class Model(object):
        def __call__(self, x):
            return F.relu(x)

    with measure.using_clock('fake'):
        found = measure._measure_probe(Model(), (x,), None, False, numpy)
    layers, _ = found
    # the hooked runs' calls read the fake clock: 0.25 s each
    assert [layer['time'] for layer in layers] == [0.25]
    assert measure._now[0] is time.perf_counter
    with pytest.raises(ValueError, match="clock must be one of 'wall', "
                       "'cpu', 'fake', got 'sundial'"):
        with measure.using_clock('sundial'):
            pass


# The first phase: the common types before any random probe

def _short_calibration(monkeypatch, tick):
    """A 10 s calibration by a fake time.time moving ``tick`` s a reading
    and a clock moving 1 s a reading, whose random probes are all the
    tiny perceptron (an unlucky draw: no convolution, no attention); its
    warnings and the kinds of probe made, in order."""
    made = []

    def named(make, name):
        def run(rng):
            made.append(name)
            return make(rng)
        return run
    monkeypatch.setattr(measure, 'COVER', [
        named(m, getattr(m, 'func', m).__name__) for m in measure.COVER])
    monkeypatch.setattr(measure, 'PROBES', (named(functools.partial(
        _tiny_probe, []), 'random'),))
    monkeypatch.setattr(measure, 'gemm_table', lambda xp, deadline:
                        _GEMM_TABLE(xp, dims=(4, 16), deadline=deadline))
    monkeypatch.setattr(measure, 'time', types.SimpleNamespace(
        time=_Ticks(1000.0, tick)))
    monkeypatch.setitem(measure.CLOCKS, 'fake', _Ticks())
    # a calibration of that clock loads again
    monkeypatch.setattr(measure.cal, 'CLOCKS', measure.cal.CLOCKS + ('fake',))
    with pytest.warns(ReportWarning) as warned:
        found = calibrate(seconds=10, seed=0, clock='fake')
    return found, [str(w.message) for w in warned], made


def test_a_short_budget_probes_the_common_types_first(monkeypatch):
    # The least budget, 10 s, whose random phase draws nothing but a
    # tiny perceptron: the first phase has run every convolution type,
    # forward, weight gradient and input gradient (the first convolution
    # of a network has none: the later ones give it), with fits of
    # their own, and the linear layers, 2-D and batched products, batch
    # normalization (training and inference) and pooling, forward and
    # gradients.
    found, warned, made = _short_calibration(monkeypatch, 0.125)
    assert {'Convolution2DFunction', 'Convolution2DGradW',
            'Deconvolution2DFunction', 'LinearFunction', 'LinearGradData',
            'LinearGradWeight', 'MatMul', 'BatchMatMul', 'BatchMatMulGrad',
            'BatchNormalization', 'BatchNormalizationGrad',
            'FixedBatchNormalization', 'AveragePooling2D',
            'AveragePooling2DGrad', 'LayerNormalization', 'Softmax',
            'LSTM', 'EmbedIDFunction'} <= set(found.types)
    assert {'Convolution2DFunction', 'Convolution2DGradW',
            'Deconvolution2DFunction', 'matmul', 'normalization',
            'pooling', 'rnn'} <= set(found.families)
    # Chainer 7's max pooling is MaxPoolingND, Chainer 6's MaxPooling2D.
    pooling = {t.replace('MaxPooling2D', 'MaxPoolingND')
               for t in found.types if t.startswith('MaxPooling')}
    assert pooling == {'MaxPoolingND', 'MaxPoolingNDGrad'}
    # Nothing left out: the only warning is the error's (every call
    # taking 1 s of the fake clock).
    assert found.info['uncovered'] == []
    assert len(warned) == 1 and warned[0].startswith('held-out error')
    # the first phase's seven probes, then the random ones
    assert made[:7] == ['_cnn_probe', '_cnn_probe', '_attention_probe',
                        '_attention_probe', '_mlp_probe', '_lstm_probe',
                        '_cnn_probe']
    assert set(made[7:]) == {'random'}


def test_a_budget_too_short_for_the_first_phase_says_what_it_missed(
        monkeypatch):
    # At 0.15 s a reading a training run would end past its probe's
    # eighth of the budget (1.25 s): the first phase runs inference only.
    # Left out: every gradient, batch normalization in training mode,
    # and the families too few calls fit (twice their 5 features):
    # pooling, 3 calls in each of 3 convolutional probes (9), the LSTM
    # cell and the embedding, 5 each.
    found, warned, made = _short_calibration(monkeypatch, 0.15)
    missed = ['Convolution2DGradW', 'Deconvolution2DFunction',
              'LinearGradData', 'LinearGradWeight', 'BatchMatMulGrad',
              'BatchNormalization', 'BatchNormalizationGrad',
              'MaxPoolingND', 'MaxPoolingNDGrad', 'AveragePooling2D',
              'AveragePooling2DGrad', 'ReLUGrad2', 'LSTM',
              'EmbedIDFunction']
    assert found.info['uncovered'] == missed
    assert 'Convolution2DFunction' in found.types
    # said once, after the error's reason, in the one line of the warning
    assert len(warned) == 1
    assert warned[0].startswith('held-out error')
    assert ('; its budget was too short to probe 14 of the types common '
            'networks spend their time in ({}): their calls are flagged '
            "'uncovered type' (remedies: a longer budget, a quieter "
            'machine)'.format(', '.join(missed))) in warned[0]
    # the calibration's file keeps the list
    again = measure.cal.Calibration.from_dict(found.to_dict())
    assert again.info['uncovered'] == missed
