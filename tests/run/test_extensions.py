"""CostMonitor, the Trainer extension: the cost of each training step in
Chainer's log, against the hook run on one update of the same shapes.

Also, worked by hand or against an oracle: the batch behind
cost/samples_per_second however the update is called, the peak behind
cost/mfu for a float16 model, the memory peak of a step with two
optimizers, a step with other work that differentiates in its forward
pass, a failure of its own in such a step, steps whose backward pass, a
node's settings or a second input differ at the same shapes, an
unchanging training costed twice only, an optimizer hook beside a link
never called, two models given one batch.
"""

import contextlib
import enum
import functools
import gc
import pickle
import warnings
import weakref

import chainer
from chainer import training
from chainer.dataset import concat_examples
import chainer.functions as F
import chainer.links as L
from chainer.training import extension
from chainer.training import extensions
import numpy
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import CostMonitor
from chainer_computational_cost.run import extensions as cm_extensions
from chainer_computational_cost import ReportWarning
from chainer_computational_cost.cost_calculators import calculators
from chainer_computational_cost.cost_calculators import skips_out_shapes

from memory_oracle import traced_peak
from calibration_fixtures import literal_calibration

BATCH = 64
VOCAB = 20
N_CLASSES = 3
# A100, float32 parameters: the TF32 tensor-core peak (156 TFLOP/s), the
# one the documentation names for float32.
A100_FP32_PEAK = 156e12


class SeqModel(chainer.Chain):
    """Token ids (batch, time) -> classes: an embedding, a linear layer
    applied at every step, summed over time: every cost but the last
    layer's grows with the length."""

    def __init__(self):
        super(SeqModel, self).__init__()
        with self.init_scope():
            self.embed = L.EmbedID(VOCAB, 8)
            self.mix = L.Linear(8, 8)
            self.out = L.Linear(8, N_CLASSES)

    def forward(self, x):
        batch, length = x.shape
        h = F.reshape(self.embed(x), (batch * length, 8))
        h = F.relu(self.mix(h))
        h = F.sum(F.reshape(h, (batch, length, 8)), axis=1)
        return self.out(h)


def padded(batch, device=None):
    return concat_examples(batch, device, padding=0)


def sequences(n=1024, short=BATCH):
    """``n`` samples of length 10, the first ``short`` of length 5 (one
    batch's worth, the first batch without shuffling)."""
    rng = numpy.random.RandomState(0)
    return [(rng.randint(0, VOCAB, 5 if i < short else 10).astype(
        numpy.int32), numpy.int32(rng.randint(N_CLASSES)))
        for i in range(n)]


def make_trainer(monitor, n_iter, data=None, evaluate=True, lossfun=None,
                 optimizer=None, out='result'):
    data = sequences() if data is None else data
    model = L.Classifier(SeqModel())
    opt = optimizer or chainer.optimizers.Adam()
    opt.setup(model)
    it = chainer.iterators.SerialIterator(data, BATCH, shuffle=False)
    updater = training.StandardUpdater(it, opt, converter=padded,
                                       loss_func=lossfun)
    trainer = training.Trainer(updater, (n_iter, 'iteration'), out=out)
    if monitor is not None:
        trainer.extend(monitor)
    if evaluate:
        valid = chainer.iterators.SerialIterator(
            data[:2 * BATCH], BATCH, repeat=False, shuffle=False)
        trainer.extend(extensions.Evaluator(valid, model, converter=padded),
                       trigger=(5, 'iteration'))
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    return trainer, log, model, opt


def one_update_cost(length):
    """The hook's total (fma_1flop=False) for one Adam update of a fresh
    model on a batch of ``BATCH`` sequences of ``length``."""
    model = L.Classifier(SeqModel())
    opt = chainer.optimizers.Adam()
    opt.setup(model)
    x = numpy.zeros((BATCH, length), numpy.int32)
    t = numpy.zeros(BATCH, numpy.int32)
    with ComputationalCostHook(fma_1flop=False) as hook:
        opt.update(model, x, t)
    return hook.total_report['flops']


class SumLinear(chainer.Chain):
    """x (batch, time, 4) -> the sum of a Linear(4, 2, nobias) of each
    time step: a cost a hand formula gives."""

    def __init__(self):
        super(SumLinear, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(4, 2, nobias=True)

    def forward(self, x):
        batch, time, _ = x.shape
        loss = F.sum(self.lin(F.reshape(x, (batch * time, 4))))
        chainer.report({'loss': loss}, self)
        return loss


def sum_linear_flops(rows):
    """The FLOPs of one SGD step of SumLinear on ``rows`` = batch * time
    rows, a multiply-add as 2 (DETAILS.md): LinearFunction rows * out *
    (2 in - 1) = 14 rows; Sum |y| - |loss| = 2 rows - 1; BroadcastTo and
    Reshape 0; LinearGradWeight out * in * (2 rows - 1) = 16 rows - 8 (no
    gradient for x, an input); SGDRule 2 |W| = 16: 32 rows + 7."""
    return 32 * rows + 7


def sum_linear_trainer(tmp_path, data, n_iter, monitor):
    """(trainer, model, optimizer): SumLinear trained with SGD on
    ``data`` in batches of BATCH, in order, ``monitor`` extended."""
    model = SumLinear()
    opt = chainer.optimizers.SGD()
    opt.setup(model)
    it = chainer.iterators.SerialIterator(data, BATCH, shuffle=False)
    trainer = training.Trainer(
        training.StandardUpdater(it, opt, converter=padded, loss_func=model),
        (n_iter, 'iteration'), out=str(tmp_path))
    trainer.extend(monitor)
    return trainer, model, opt


def counted_costings(monkeypatch):
    """The list of the hooks CostMonitor enters from now on, one a
    costing."""
    runs = []

    class Counting(ComputationalCostHook):
        def __enter__(self):
            runs.append(self)
            return super(Counting, self).__enter__()

    monkeypatch.setattr(cm_extensions, 'ComputationalCostHook', Counting)
    return runs


def test_every_log_entry_has_the_cost_of_its_step(tmp_path, monkeypatch):
    # 1024 samples of batch 64: 16 iterations an epoch; iteration 1 and 17
    # get the short batch (length 5), every other one length 10.
    rng = numpy.random.RandomState(0)
    data = [rng.rand(5 if i < BATCH else 10, 4).astype(numpy.float32)
            for i in range(1024)]
    trainer, model, _ = sum_linear_trainer(tmp_path, data, 40,
                                           CostMonitor(device='a100'))
    valid = chainer.iterators.SerialIterator(
        data[:2 * BATCH], BATCH, repeat=False, shuffle=False)
    trainer.extend(extensions.Evaluator(valid, model, converter=padded,
                                        eval_func=model),
                   trigger=(5, 'iteration'))
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    # Every update_core takes 0.25 s by the monitor's clock.
    ticks = iter(range(10 ** 6))
    monkeypatch.setattr(cm_extensions, '_clock', lambda: next(ticks) / 4)
    trainer.run()
    entries = log.log
    assert len(entries) == 40
    # The Evaluator's validation keys are in every fifth entry, and its
    # forward passes are not in cost/flops.
    assert 'validation/main/loss' in entries[4]
    for entry in entries:
        i = entry['iteration']
        # 64 * 5 = 320 rows: 10247 FLOPs; 64 * 10 = 640: 20487
        expected = 10247 if i in (1, 17, 33) else 20487
        assert expected == sum_linear_flops(
            BATCH * (5 if i in (1, 17, 33) else 10))
        assert entry['cost/flops'] == expected, i
        assert entry['cost/flops_per_second'] == expected * 4
        # over the A100's float32 (TF32) peak, 156e12
        assert entry['cost/mfu'] == pytest.approx(expected * 4 / 156e12,
                                                  rel=1e-12)
        assert entry['cost/samples_per_second'] == 64 * 4
        assert 'cost/memory_peak' not in entry
        assert 'cost/comm_bytes' not in entry


def test_the_updater_and_the_optimizer_are_left_as_they_were(tmp_path):
    trainer, _, _, opt = make_trainer(CostMonitor(), 3, evaluate=False,
                                      out=str(tmp_path))
    updater = trainer.updater
    trainer.run()
    assert 'update_core' not in vars(updater)
    assert 'update' not in vars(opt)
    assert updater.update_core.__func__ is \
        training.StandardUpdater.update_core


@pytest.mark.parametrize('memory, costed', [(False, 2), (True, 3)])
def test_costed_runs_are_the_new_shapes(tmp_path, monkeypatch, memory,
                                        costed):
    runs = counted_costings(monkeypatch)
    trainer, log, _, _ = make_trainer(CostMonitor(memory=memory), 40,
                                      out=str(tmp_path))
    trainer.run()
    # Iteration 1 (length 5), 2 (length 10, new); with memory, 17 too
    # (length 5 again: the first iteration's shapes are costed a second
    # time, as its optimizer made its state in that step); the
    # Evaluator's eight runs are not costed.
    assert len(runs) == costed
    assert len(log.log) == 40


def test_training_is_unchanged_by_the_monitor(tmp_path):
    params = []
    for monitor in (None, CostMonitor(memory=True)):
        numpy.random.seed(1)  # the same initial parameters
        trainer, _, model, _ = make_trainer(
            monitor, 20, out=str(tmp_path / str(len(params))))
        trainer.run()
        params.append({n: p.array.copy() for n, p in model.namedparams()})
    for name, value in params[0].items():
        numpy.testing.assert_array_equal(value, params[1][name], name)


def test_memory_peak_against_tracemalloc(tmp_path):
    # SumLinear on 64 x 1000 rows with SGD: the gradient of the sum, a
    # broadcast view, is copied by LinearGradWeight (64000 x 2 float32,
    # 512000 bytes): arrays of hundreds of KiB, against which the Python
    # objects of the graph are a few KiB
    data = [numpy.ones((1000, 4), numpy.float32)] * (3 * BATCH)
    trainer, model, opt = sum_linear_trainer(tmp_path, data, 3,
                                             CostMonitor(memory=True))
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    trainer.run()
    # The oracle: tracemalloc's peak of the same step (the batch made
    # before), never less than the arrays the hook counts; above them by
    # what it does not count, the same at any size: the Python objects of
    # the graph and the loss's initial gradient (39440 bytes more at 1000
    # rows, 39024 at 4000 when measured), at most 64 KiB
    x = padded(data[:BATCH])
    opt.update(model, x)
    traced = traced_peak(lambda: opt.update(model, x))
    peaks = [e['cost/memory_peak'] for e in log.log]
    assert peaks[0] == peaks[1] == peaks[2]
    assert 512000 <= peaks[0] <= traced <= peaks[0] + 65536, (peaks, traced)


def test_peak_flops_instead_of_a_device(tmp_path):
    trainer, log, _, _ = make_trainer(CostMonitor(peak_flops=1e9), 2,
                                      evaluate=False, out=str(tmp_path))
    trainer.run()
    for entry in log.log:
        assert entry['cost/mfu'] == pytest.approx(
            entry['cost/flops_per_second'] / 1e9, rel=1e-12)


def test_a_float16_model_gets_the_fp16_matrix_peak():
    monitor = CostMonitor(device='a100')
    # A100: FP16 tensor cores, 312 TFLOP/s; float64: FP64 tensor, 19.5.
    assert monitor._peak_of('float16') == 312e12
    assert monitor._peak_of('float64') == 19.5e12
    assert monitor._peak_of('float32') == A100_FP32_PEAK


def test_beyond_the_limit_no_flops_and_one_warning(tmp_path):
    # Lengths 5 and 10 are two signatures; limit=1 costs the first only.
    trainer, log, _, _ = make_trainer(CostMonitor(limit=1), 4,
                                      evaluate=False, out=str(tmp_path))
    with pytest.warns(ReportWarning, match='limit=1') as caught:
        trainer.run()
    assert len([w for w in caught if 'limit' in str(w.message)]) == 1
    assert 'cost/flops' in log.log[0]
    for entry in log.log[1:]:
        assert 'cost/flops' not in entry and 'cost/mfu' not in entry
        assert entry['cost/samples_per_second'] > 0


@pytest.mark.parametrize('kwargs, error, match', [
    ({'device': 'tpu9'}, ValueError, r"unknown device 'tpu9'; the presets"),
    # a GPU's id (as chainer.get_device takes it) is no device: its type
    ({'device': 0}, TypeError, r"^device must be a preset's name \('gtx"
     r"1080ti', .*\) or a Device, got 0$"),
    ({'limit': -1}, ValueError, r'limit must be an int >= 1, got -1'),
    ({'limit': 0}, ValueError, r'limit must be an int >= 1, got 0'),
    ({'limit': 2.0}, TypeError, r'limit must be an int >= 1, got 2.0'),
    ({'limit': '16'}, TypeError, r"limit must be an int >= 1, got '16'"),
    ({'device': 'a100', 'peak_flops': 1e12}, ValueError, 'not both'),
    ({'peak_flops': -1}, ValueError, r'peak_flops must be a finite'),
    ({'memory': 1}, TypeError,
     r'^CostMonitor: memory must be True or False, got 1 \(int\)$'),
    ({'comm': object()}, TypeError, r'comm'),
])
def test_bad_arguments_are_one_line_errors(kwargs, error, match):
    with pytest.raises(error, match=match) as info:
        CostMonitor(**kwargs)
    assert '\n' not in str(info.value)


def test_a_numpy_bool_is_a_bool(tmp_path):
    x = numpy.ones((BATCH, 4), numpy.float32)
    log = _train(_Cut(), [(x,)] * 2, CostMonitor(memory=numpy.bool_(True)),
                 tmp_path)
    assert all('cost/memory_peak' in e for e in log)


def test_an_mfu_beyond_a_float_is_not_reported(tmp_path):
    # 2055 FLOPs in a second over a peak of 5e-324 FLOP/s: 4e326, beyond
    # a float; the FLOPs and rates still are, with one warning
    opt = chainer.optimizers.SGD().setup(SumLinear())
    trainer = training.Trainer(_Calling(lambda o: o.update(o.target, X),
                                        opt),
                               (3, 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor(peak_flops=5e-324))
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    with pytest.warns(ReportWarning, match=r'cost/mfu is not reported: '
                      r'the FLOP/s over the peak \(4.94066e-324 FLOP/s\) '
                      r'overflow a float') as caught:
        trainer.run()
    assert len([w for w in caught if 'mfu' in str(w.message)]) == 1
    assert [e['cost/flops'] for e in log.log] == [2055] * 3
    assert not any('cost/mfu' in e for e in log.log)


def _parallel_updater(tmp_path):
    model = L.Classifier(SeqModel())
    opt = chainer.optimizers.SGD()
    opt.setup(model)
    it = chainer.iterators.SerialIterator(sequences(128), BATCH)
    return training.updaters.ParallelUpdater(
        it, opt, converter=padded, devices={'main': '@numpy'})


class _NoCore(training.Updater):
    """An updater with only ``update``."""

    iteration = 0
    epoch = 0
    epoch_detail = 0.0
    is_new_epoch = False

    def update(self):
        self.iteration += 1

    def get_all_optimizers(self):
        return {}


def _multiprocess_updater(tmp_path):
    # made without its __init__, which needs GPUs and NCCL: the monitor
    # refuses it by its class
    cls = training.updaters.MultiprocessParallelUpdater
    updater = cls.__new__(cls)
    opt = chainer.optimizers.SGD()
    opt.setup(L.Linear(2, 2))
    updater._optimizers = {'main': opt}
    updater.iteration = 0
    return updater


def test_a_multiprocess_updater_is_refused_when_the_trainer_starts():
    updater = _multiprocess_updater(None)

    class Trainer(object):  # what initialize reads of a trainer
        pass
    trainer = Trainer()
    trainer.updater = updater
    with pytest.raises(TypeError, match=(
            '^CostMonitor cannot cost a MultiprocessParallelUpdater: it '
            'runs the forward and backward passes outside optimizer.update '
            'in other processes; use a StandardUpdater$')):
        CostMonitor().initialize(trainer)
    assert 'update_core' not in vars(updater)


@pytest.mark.parametrize('make, match', [
    (_parallel_updater, 'cannot cost a ParallelUpdater'),
    (lambda tmp_path: _NoCore(), 'needs an updater with update_core'),
])
def test_an_updater_it_cannot_wrap_fails_when_the_trainer_starts(
        tmp_path, make, match):
    updater = make(tmp_path)
    trainer = training.Trainer(updater, (2, 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor())
    with pytest.raises(TypeError, match=match) as info:
        trainer.run()
    assert '\n' not in str(info.value)
    assert updater.iteration == 0
    assert 'update_core' not in vars(updater)


def test_two_monitors_on_one_trainer_fail_when_it_starts(tmp_path):
    trainer, _, _, _ = make_trainer(CostMonitor(), 2, evaluate=False,
                                    out=str(tmp_path))
    trainer.extend(CostMonitor(), name='again')
    with pytest.raises(RuntimeError, match='already has a CostMonitor'):
        trainer.run()
    assert 'update_core' not in vars(trainer.updater)


class Boom(Exception):
    pass


@pytest.mark.parametrize('when', [1, 3])
def test_an_exception_in_the_step_passes_through(tmp_path, when):
    # ``when`` 1: in a costed step (inside the hook); 3: in a step that
    # is not costed.
    calls = []
    error = Boom('in the loss')

    def lossfun(x, t):
        calls.append(x.shape)
        if len(calls) == when:
            raise error
        return model(x, t)

    trainer, _, model, opt = make_trainer(
        CostMonitor(), 5, evaluate=False, lossfun=lossfun,
        out=str(tmp_path))
    updater = trainer.updater
    with pytest.raises(Boom) as info:
        trainer.run(show_loop_exception_msg=False)
    assert info.value is error
    assert info.value.__context__ is None
    assert 'update_core' not in vars(updater)
    assert 'update' not in vars(opt)
    assert chainer.get_function_hooks() == {}


def test_an_update_without_a_loss_function_is_costed_whole(tmp_path):
    # A hand-written update_core: forward and backward before the update,
    # outside optimizer.update; the oracle, a fresh hook around each step
    # of the same training (the same seed: the same batches)
    class Manual(training.StandardUpdater):
        def update_core(self):
            x, t = self.converter(self.get_iterator('main').next())
            opt = self.get_optimizer('main')
            loss = opt.target(x, t)
            opt.target.cleargrads()
            loss.backward()
            opt.update()

    def updater():
        numpy.random.seed(0)
        opt = chainer.optimizers.SGD().setup(L.Classifier(SeqModel()))
        it = chainer.iterators.SerialIterator(sequences(256), BATCH)
        return Manual(it, opt, converter=padded)

    trainer = training.Trainer(updater(), (3, 'iteration'),
                               out=str(tmp_path))
    trainer.extend(CostMonitor())
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    with pytest.warns(ReportWarning, match="optimizer 'main' was updated "
                      'without a loss function'):
        trainer.run()
    expected = []
    fresh = updater()
    for _ in range(3):
        with ComputationalCostHook(fma_1flop=False) as hook:
            fresh.update()
        expected.append(hook.total_report['flops'])
    assert [e['cost/flops'] for e in log.log] == expected
    # more than the update alone: the forward and backward are in it
    with ComputationalCostHook(fma_1flop=False) as hook:
        fresh.get_optimizer('main').update()
    assert expected[0] > hook.total_report['flops']


def test_a_warning_turned_error_does_not_stop_training(tmp_path):
    trainer, log, _, _ = make_trainer(CostMonitor(limit=1), 3,
                                      evaluate=False, out=str(tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter('error', ReportWarning)
        trainer.run()
    assert len(log.log) == 3


def test_an_update_the_user_wrapped_is_put_back_as_it_was(tmp_path):
    trainer, log, _, opt = make_trainer(CostMonitor(), 2, evaluate=False,
                                        out=str(tmp_path))
    real = opt.update
    seen = []

    def users_update(*args, **kwargs):
        seen.append(len(args))
        return real(*args, **kwargs)
    opt.update = users_update
    trainer.run()
    assert vars(opt)['update'] is users_update
    assert seen == [3, 3]  # the monitor called through the user's wrapper
    assert len(log.log) == 2 and 'cost/flops' in log.log[1]


def test_a_failure_of_its_own_does_not_stop_training(tmp_path, monkeypatch):
    def broken(hook):
        raise ValueError('planted')
    monkeypatch.setattr(cm_extensions, '_step_figures', broken)
    trainer, log, _, _ = make_trainer(CostMonitor(), 3, evaluate=False,
                                      out=str(tmp_path))
    with pytest.warns(ReportWarning, match='could not be costed.*planted'):
        trainer.run()
    assert len(log.log) == 3
    assert all('cost/flops' not in e and 'cost/samples_per_second' in e
               for e in log.log)


def test_two_optimizers_a_step_is_the_sum_of_their_updates(tmp_path):
    # A custom updater with two models (as a GAN's), each updated with its
    # own loss function on the batch.
    class Two(training.StandardUpdater):
        def update_core(self):
            x, t = self.converter(self.get_iterator('main').next())
            for name in ('a', 'b'):
                opt = self.get_optimizer(name)
                opt.update(opt.target, x, t)

    opts = {}
    for name in ('a', 'b'):
        opts[name] = chainer.optimizers.SGD()
        opts[name].setup(L.Classifier(SeqModel()))
    it = chainer.iterators.SerialIterator(sequences(256, short=0), BATCH)
    trainer = training.Trainer(Two(it, opts, converter=padded),
                               (2, 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor())
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    trainer.run()
    model = L.Classifier(SeqModel())
    opt = chainer.optimizers.SGD()
    opt.setup(model)
    x = numpy.zeros((BATCH, 10), numpy.int32)
    t = numpy.zeros(BATCH, numpy.int32)
    with ComputationalCostHook(fma_1flop=False) as hook:
        opt.update(model, x, t)
    one = hook.total_report['flops']
    assert [e['cost/flops'] for e in log.log] == [2 * one] * 2


def test_a_new_dtype_is_a_new_key(tmp_path, monkeypatch):
    runs = counted_costings(monkeypatch)
    # All of length 10; the first batch's ids are int64, the others int32.
    data = [(x.astype(numpy.int64) if i < BATCH else x, t)
            for i, (x, t) in enumerate(sequences(short=0))]
    trainer, log, _, _ = make_trainer(CostMonitor(), 20, data=data,
                                      evaluate=False, out=str(tmp_path))
    trainer.run()
    # Iteration 1 (int64), 2 (int32); 17 (int64 again) is checked against
    # the first iteration's step.
    assert len(runs) == 2
    assert {e['cost/flops'] for e in log.log} == {one_update_cost(10)}


def _unpickled(batch, device=None):
    """padded, as from another process: each array unpickled, which gives
    it a dtype equal to the costed step's but another object."""
    return pickle.loads(pickle.dumps(padded(batch, device)))


def test_an_input_dtype_equal_but_not_the_same_object(tmp_path):
    x, _ = _unpickled(sequences(n=2, short=0))
    assert x.dtype == numpy.int32 and x.dtype is not numpy.dtype('int32')
    trainer, log, _, _ = make_trainer(
        CostMonitor(memory=True), 4, data=sequences(short=0),
        evaluate=False, out=str(tmp_path))
    trainer.updater.converter = _unpickled
    with warnings.catch_warnings():
        warnings.simplefilter('error', ReportWarning)
        trainer.run()
    # each step the costed one: its FLOPs, and a memory peak (which a
    # step taken for other work would not report)
    assert [e['cost/flops'] for e in log.log] == [one_update_cost(10)] * 4
    peaks = [e.get('cost/memory_peak') for e in log.log]
    assert None not in peaks and len(set(peaks)) == 1


# Steps that do other work at the same argument shapes (issue 34): a
# variable-length LSTM whose converter passes the lengths as an array, so
# that the batch shrinks as sequences end while every argument keeps its
# shape.  Expectations: the hook run afresh on each step of a replay.

class VarLengthLSTM(chainer.Chain):
    """(x (batch, time, 3), lengths (batch,), t (batch, time)) -> the
    summed loss of the steps each sequence has (longest first)."""

    def __init__(self):
        super(VarLengthLSTM, self).__init__()
        with self.init_scope():
            self.lstm = L.LSTM(3, 5)
            self.out = L.Linear(5, 2)

    def forward(self, x, lengths, t):
        self.lstm.reset_state()
        loss = 0
        for step in range(x.shape[1]):
            batch = int((lengths > step).sum())
            if batch == 0:
                break
            h = self.lstm(x[:batch, step])
            loss += F.softmax_cross_entropy(self.out(h), t[:batch, step])
        return loss


#: Lengths of the sequences, three a batch: a first batch that runs every
#: step, then batches with the same padded shapes and less work.
LENGTHS = [4, 4, 4, 4, 2, 1, 3, 3, 1, 4, 1, 1]
TIME = 4


def var_sequences(lengths=LENGTHS):
    rng = numpy.random.RandomState(0)
    return [(rng.rand(n, 3).astype(numpy.float32),
             rng.randint(0, 2, n).astype(numpy.int32)) for n in lengths]


def pad_sorted(batch, device=None):
    """Padded to TIME steps, longest first, with the lengths as an array."""
    batch = sorted(batch, key=lambda e: -len(e[0]))
    x = numpy.zeros((len(batch), TIME, 3), numpy.float32)
    t = numpy.zeros((len(batch), TIME), numpy.int32)
    for i, (xi, ti) in enumerate(batch):
        x[i, :len(xi)] = xi
        t[i, :len(ti)] = ti
    return x, numpy.array([len(e[0]) for e in batch], numpy.int32), t


def _replayed_flops(models, batches):
    """The hook's total (fma_1flop=False) of each step of a replay: every
    optimizer.update run afresh inside a new hook, nothing cached."""
    flops = []
    for batch in batches:
        total = 0
        for model, opt in models:
            with ComputationalCostHook(fma_1flop=False) as hook:
                opt.update(model, *batch)
            total += hook.total_report['flops']
        flops.append(total)
    return flops


def _batches(data, batch_size, n_iter, repeat=True):
    it = chainer.iterators.SerialIterator(data, batch_size, repeat=repeat,
                                          shuffle=False)
    return [pad_sorted(it.next()) for _ in range(n_iter)]


def _lstm_trainer(tmp_path, monitor, data, n_iter, repeat=True,
                  log_first=False):
    numpy.random.seed(3)
    model = VarLengthLSTM()
    opt = chainer.optimizers.Adam()
    opt.setup(model)
    replay = (VarLengthLSTM(), chainer.optimizers.Adam())
    replay[0].copyparams(model)
    replay[1].setup(replay[0])
    it = chainer.iterators.SerialIterator(data, 3, repeat=repeat,
                                          shuffle=False)
    trainer = training.Trainer(
        training.StandardUpdater(it, opt, converter=pad_sorted,
                                 loss_func=model),
        (n_iter, 'iteration'), out=str(tmp_path))
    log = extensions.LogReport(trigger=(1, 'iteration'))
    if log_first:  # the log extended before the monitor
        trainer.extend(log)
    trainer.extend(monitor)
    if not log_first:
        trainer.extend(log)
    return trainer, log, [replay]


def test_a_step_with_other_work_at_the_same_shapes_is_costed(tmp_path):
    # issue 34: cost/flops was the first step's for every step of these
    # shapes (2.69x over on the issue's model)
    n_iter = 8
    trainer, log, replay = _lstm_trainer(tmp_path, CostMonitor(),
                                         var_sequences(), n_iter)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        trainer.run()
    expected = _replayed_flops(replay, _batches(var_sequences(), 3, n_iter))
    assert len(set(expected)) == 4  # four batches of other work
    assert [e['cost/flops'] for e in log.log] == expected
    # Once.  Iteration 2's step (lengths 4, 2, 1) does other work than
    # the first iteration's (4, 4, 4), as a first iteration's one-off
    # work would: no warning, and iteration 3's step (3, 3, 1) is costed
    # as the reference.  Iteration 4's (4, 1, 1) runs its first time step
    # on 3 rows as the reference does (5 calls: upward, LSTM, out, loss,
    # the sum), its second on 1 row, not 2: call 6 differs.
    assert [str(w.message) for w in caught if issubclass(
        w.category, ReportWarning)] == [
        'CostMonitor: a step did other work than the costed step with the '
        'same argument shapes (its function calls differ from call 6 on): '
        'its FLOPs are counted call by call; cost/memory_peak and '
        'cost/comm_bytes are not reported for such steps']


def test_a_step_with_other_work_has_no_memory_peak(tmp_path):
    trainer, log, _ = _lstm_trainer(tmp_path, CostMonitor(memory=True),
                                    var_sequences(), 6)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ReportWarning)
        trainer.run()
    # iterations 1 and 2 costed (batches 1 and 2: the first iteration's
    # key again); 3 does other work than 2, which no step matched: 4 is
    # costed as the reference; 5 and 6 (batch 2 again) other work than 4's
    peaks = ['cost/memory_peak' in e for e in log.log]
    assert peaks == [True, True, False, True, False, False]
    assert all('cost/flops' in e for e in log.log)


def test_the_short_last_batch_of_an_epoch(tmp_path):
    # 11 sequences, batches of 3: the last batch of the epoch has 2
    data = var_sequences(LENGTHS[:11])
    trainer, log, replay = _lstm_trainer(tmp_path, CostMonitor(), data, 4,
                                         repeat=False)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ReportWarning)
        trainer.run()
    batches = _batches(data, 3, 4, repeat=False)
    assert [len(b[1]) for b in batches] == [3, 3, 3, 2]
    assert [e['cost/flops'] for e in log.log] == _replayed_flops(replay,
                                                                 batches)
    # samples/s of each step over its own batch: the same time unit
    assert [round(e['cost/samples_per_second'] /
                  e['cost/flops_per_second'] * e['cost/flops'], 9)
            for e in log.log] == [3, 3, 3, 2]


def test_a_log_extended_before_the_monitor_gets_each_steps_cost(tmp_path):
    n_iter = 6
    trainer, log, replay = _lstm_trainer(tmp_path, CostMonitor(),
                                         var_sequences(), n_iter,
                                         log_first=True)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ReportWarning)
        trainer.run()
    assert [e['cost/flops'] for e in log.log] == _replayed_flops(
        replay, _batches(var_sequences(), 3, n_iter))


def test_two_optimizers_of_two_different_models(tmp_path):
    # the LSTM on the sequences and an MLP on their lengths, each with its
    # own optimizer and loss, in one update_core
    class MLP(chainer.Chain):
        def __init__(self):
            super(MLP, self).__init__()
            with self.init_scope():
                self.l1 = L.Linear(1, 7)
                self.l2 = L.Linear(7, 1)

        def forward(self, x, lengths, t):
            y = self.l2(F.tanh(self.l1(lengths[:, None].astype('f'))))
            return F.mean_squared_error(y, x[:, :1, 0])

    class Two(training.StandardUpdater):
        def update_core(self):
            batch = self.converter(self.get_iterator('main').next())
            for name in ('lstm', 'mlp'):
                opt = self.get_optimizer(name)
                opt.update(opt.target, *batch)

    numpy.random.seed(4)
    models = {'lstm': VarLengthLSTM(), 'mlp': MLP()}
    opts, replay = {}, []
    for name, model in sorted(models.items()):
        opts[name] = chainer.optimizers.MomentumSGD()
        opts[name].setup(model)
        copy = type(model)()
        copy.copyparams(model)
        replay.append((copy, chainer.optimizers.MomentumSGD().setup(copy)))
    it = chainer.iterators.SerialIterator(var_sequences(), 3, shuffle=False)
    trainer = training.Trainer(Two(it, opts, converter=pad_sorted),
                               (6, 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor())
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ReportWarning)
        trainer.run()
    assert [e['cost/flops'] for e in log.log] == _replayed_flops(
        replay, _batches(var_sequences(), 3, 6))


@pytest.fixture
def quarter_second_steps(monkeypatch):
    """Every update_core takes 0.25 s by the monitor's clock."""
    ticks = iter(range(10 ** 6))
    monkeypatch.setattr(cm_extensions, '_clock', lambda: next(ticks) / 4)


class _Calling(training.StandardUpdater):
    """An updater whose step is ``call(optimizer)``."""

    def __init__(self, call, optimizer):
        super(_Calling, self).__init__(
            chainer.iterators.SerialIterator([0], 1), optimizer)
        self.call = call

    def update_core(self):
        self.call(self.get_optimizer('main'))


def _run(updater, n_iter, tmp_path, monitor):
    trainer = training.Trainer(updater, (n_iter, 'iteration'),
                               out=str(tmp_path))
    trainer.extend(monitor)
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ReportWarning)
        trainer.run()
    return log.log


X = numpy.ones((BATCH, 1, 4), numpy.float32)


def _keywords_only(opt):
    opt.update(lambda x: opt.target(x), x=X)


def _a_scalar_first(opt):
    opt.update(lambda scale, x: scale * opt.target(x), 0.5, X)


def _a_list_of_arrays(opt):
    opt.update(lambda xs: opt.target(F.stack(xs)), list(X))


def _a_shorter_array_after(opt):
    # per-class weights (3,) after the batch: the first array counts
    opt.update(lambda x, w: F.sum(w) * opt.target(x), X,
               numpy.ones(3, numpy.float32))


@pytest.mark.parametrize('call', [_keywords_only, _a_scalar_first,
                                  _a_list_of_arrays, _a_shorter_array_after])
def test_samples_per_second_counts_the_batch_however_it_is_passed(
        tmp_path, quarter_second_steps, call):
    opt = chainer.optimizers.SGD().setup(SumLinear())
    log = _run(_Calling(call, opt), 3, tmp_path, CostMonitor())
    # 64 samples in 0.25 s
    assert [e['cost/samples_per_second'] for e in log] == [256] * 3
    assert all('cost/flops' in e for e in log)
    if call is _keywords_only:
        # SumLinear on 64 x 1 rows of 4 (test_extensions.sum_linear_flops):
        # 32 * 64 + 7 = 2055 FLOPs, 8220 a second
        assert [(e['cost/flops'], e['cost/flops_per_second'])
                for e in log] == [(2055, 8220)] * 3


def test_a_step_given_no_array_has_flops_but_no_samples_per_second(
        tmp_path, quarter_second_steps):
    # a loss that makes its own input (a generator's noise, say): no
    # batch to count
    opt = chainer.optimizers.SGD().setup(SumLinear())
    log = _run(_Calling(lambda o: o.update(lambda: o.target(X)), opt), 2,
               tmp_path, CostMonitor())
    assert [e['cost/flops'] for e in log] == [2055] * 2
    assert not any('cost/samples_per_second' in e for e in log)


class _Mixed(chainer.Chain):
    """x (batch, 4) float16 -> two float16 layers without bias (4 x 5 and
    5 x 4: 40 float16 elements in two parameters), then a float32 one
    (4 x ``out``) on the result cast to float32."""

    def __init__(self, out):
        super(_Mixed, self).__init__()
        with self.init_scope():
            with chainer.using_config('dtype', numpy.float16):
                self.l1 = L.Linear(4, 5, nobias=True)
                self.l2 = L.Linear(5, 4, nobias=True)
            self.l3 = L.Linear(4, out, nobias=True)

    def forward(self, x):
        h = F.cast(self.l2(self.l1(x)), numpy.float32)
        return F.sum(self.l3(h))


@pytest.mark.parametrize('out, peak', [
    # 40 float16 elements against 28 float32 ones, though float32 has the
    # larger parameter (and float16 two parameters, each smaller): the
    # A100's FP16 tensor-core peak, 312 TFLOP/s
    (7, 312e12),
    # 40 against 44: float32's, TF32 tensor cores, 156 TFLOP/s
    (11, 156e12),
])
def test_the_mfu_of_a_model_is_over_the_peak_of_most_of_its_elements(
        tmp_path, quarter_second_steps, out, peak):
    x16 = numpy.ones((BATCH, 4), numpy.float16)
    opt = chainer.optimizers.SGD().setup(_Mixed(out))
    log = _run(_Calling(lambda o: o.update(o.target, x16), opt), 2,
               tmp_path, CostMonitor(device='a100'))
    for e in log:
        # FLOPs over 0.25 s, over the peak
        assert e['cost/mfu'] == pytest.approx(
            e['cost/flops'] * 4 / peak, rel=1e-12)


def test_a_float16_model_whose_links_initialise_lazily(
        tmp_path, quarter_second_steps):
    # in_size None: no parameter array until the first forward pass,
    # which makes it in the configured dtype (float16: the whole training
    # runs under it)
    x = numpy.ones((BATCH, 4), numpy.float16)
    t = numpy.zeros(BATCH, numpy.int32)
    with chainer.using_config('dtype', numpy.float16):
        model = L.Classifier(L.Linear(None, 3))
        opt = chainer.optimizers.SGD().setup(model)
        log = _run(_Calling(lambda o: o.update(o.target, x, t), opt), 2,
                   tmp_path, CostMonitor(device='a100'))
    assert model.predictor.W.dtype == numpy.float16
    for e in log:  # FP16 tensor cores: 312 TFLOP/s
        assert e['cost/mfu'] == pytest.approx(
            e['cost/flops'] * 4 / 312e12, rel=1e-12)


def test_the_memory_peak_of_two_optimizers_is_the_larger_update(tmp_path):
    # Two SumLinear models, each with its own SGD, on 64 x 1000 rows and
    # on the first 100 of them: each update's peak is above its gradient
    # copy (rows x 2 float32: 512000 and 51200 bytes), and the step's is
    # the larger one's, not their sum: of the first update's arrays only
    # its W's gradient and its reported loss (36 bytes) are alive while
    # the second runs.  The oracle, tracemalloc's peak of the
    # same two updates, is above the hook's by the Python objects of the
    # graph, at most 64 KiB (test_extensions: 39440 bytes measured).
    x = numpy.ones((BATCH, 1000, 4), numpy.float32)
    opts = {name: chainer.optimizers.SGD().setup(SumLinear())
            for name in ('big', 'small')}

    def both():
        opts['big'].update(opts['big'].target, x)
        opts['small'].update(opts['small'].target, x[:, :100])

    class Two(training.StandardUpdater):
        def update_core(self):
            both()

    updater = Two(chainer.iterators.SerialIterator([0], 1), opts)
    log = _run(updater, 3, tmp_path, CostMonitor(memory=True))
    traced = traced_peak(both)
    peaks = [e['cost/memory_peak'] for e in log]
    assert peaks[0] == peaks[1] == peaks[2]
    assert 512000 <= peaks[0] <= traced <= peaks[0] + 65536, (peaks, traced)


class _PoolPenalty(chainer.Chain):
    """(x (batch, 1, 4, 4), lengths (batch,)) -> a gradient penalty of
    the rows with a length, through an average pooling: its forward pass
    differentiates (AveragePooling2DGrad is a call of the forward)."""

    def __init__(self):
        super(_PoolPenalty, self).__init__()
        with self.init_scope():
            self.w = chainer.Parameter(numpy.full((1, 1, 1, 1), 0.5, 'f'))

    def forward(self, x, lengths):
        h = chainer.Variable(x[:int((lengths > 0).sum())])
        y = F.average_pooling_2d(h * F.broadcast_to(self.w, h.shape), 2)
        gx, = chainer.grad([F.sum(y * y)], [h], enable_double_backprop=True)
        return F.sum(gx * gx)


class _BinaryRows(chainer.Chain):
    """(x (batch, 1, 4, 4), lengths (batch,)) -> the sigmoid cross
    entropy of the rows with a length, reporting their binary accuracy:
    BinaryAccuracy is an old-style Function (5 FLOPs an element)."""

    def __init__(self):
        super(_BinaryRows, self).__init__()
        with self.init_scope():
            self.w = chainer.Parameter(numpy.full((1, 16), 0.5, 'f'))

    def forward(self, x, lengths):
        n = int((lengths > 0).sum())
        h = F.reshape(x[:n], (n, 16))
        y = h * F.broadcast_to(self.w, h.shape) - 0.25
        t = (x[:n].reshape(n, 16) > 0.5).astype(numpy.int32)
        chainer.report({'accuracy': F.binary_accuracy(y, t)}, self)
        return F.sigmoid_cross_entropy(y, t)


class _Square(chainer.FunctionNode):
    """A user's node, without a calculator: the hook ignores it."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        return inputs[0] * inputs[0],

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        return 2 * x * grad_outputs[0],


class _NotASum(F.math.sum.Sum):
    """A user's node deriving from a built-in whose calculator cannot read
    it (no ``axis``): the hook ignores it, with the calculator's error."""

    def __init__(self):
        pass

    def check_type_forward(self, in_types):
        pass

    def forward(self, inputs):
        return inputs[0].sum(keepdims=True).reshape(()),

    def backward(self, indexes, grad_outputs):
        return F.broadcast_to(grad_outputs[0], self.inputs[0].shape),


class _IgnoredCalls(chainer.Chain):
    """(x (batch, 1, 4, 4), lengths (batch,)) -> the rows with a length
    through a Linear(16, 2), _Square and _NotASum."""

    def __init__(self):
        super(_IgnoredCalls, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(16, 2, initialW=0.5, nobias=True)

    def forward(self, x, lengths):
        y = self.lin(x[:int((lengths > 0).sum())])
        y, = _Square().apply((y,))
        return _NotASum().apply((y,))[0]


@pytest.mark.parametrize('chain', [_PoolPenalty, _BinaryRows,
                                   _IgnoredCalls])
def test_other_work_through_gradients_old_style_and_ignored_calls(
        tmp_path, chain):
    # rows with a length per batch of 3: 3, 3 (the costed reference), then
    # 2, 1, 3, 2: other work at the same shapes from the first call on
    # the rows
    rng = numpy.random.RandomState(0)
    lengths = [1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 0]
    data = [(rng.rand(1, 4, 4).astype('f'), numpy.int32(n))
            for n in lengths]
    model = chain()
    replay = chain()
    opt = chainer.optimizers.SGD().setup(model)
    it = chainer.iterators.SerialIterator(data, 3, shuffle=False)
    updater = training.StandardUpdater(it, opt, converter=concat_examples,
                                       loss_func=model)
    log = _run(updater, 6, tmp_path, CostMonitor())
    batches = [concat_examples(data[i:i + 3]) for i in range(0, 18, 3)]
    with warnings.catch_warnings():  # the calls the hook ignores
        warnings.simplefilter('ignore', ReportWarning)
        expected = _replayed_flops(
            [(replay, chainer.optimizers.SGD().setup(replay))], batches)
    assert len(set(expected)) == 3
    assert [e['cost/flops'] for e in log] == expected


def test_no_calculator_s_flops_need_the_output_shapes():
    # CostMonitor counts a step with other work call by call without the
    # output shapes (extensions._call_flops): the calculators that read
    # them must have FLOPs that do not depend on them, as these do
    # (DETAILS.md): GetItem and ChainerMN's communications are 0 FLOPs, a
    # pooling gradient's output has its forward's input shape.  A new one
    # must be checked and added here.
    readers = set(calculators.values()) - skips_out_shapes
    assert sorted(c.__name__ for c in readers) == [
        'calc_average_pooling_2d_grad', 'calc_average_pooling_nd_grad',
        'calc_chainermn_communication', 'calc_get_item',
        'calc_max_pooling_grad']


def test_a_failure_of_its_own_in_a_step_with_other_work(tmp_path,
                                                        monkeypatch):
    # The fourth costing fails: iteration 4's, the first step with other
    # work than its shapes' costed step (iteration 3's: iteration 2's
    # other work made the first iteration's step no reference); it has
    # no cost/flops, and the training goes on, the later steps costed
    real = cm_extensions._step_figures
    runs = []

    def fourth_fails(hook):
        runs.append(hook)
        if len(runs) == 4:
            raise ValueError('planted')
        return real(hook)
    monkeypatch.setattr(cm_extensions, '_step_figures', fourth_fails)
    trainer, log, replay = _lstm_trainer(tmp_path, CostMonitor(),
                                         var_sequences(), 6)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ReportWarning)
        trainer.run()
    expected = _replayed_flops(replay, _batches(var_sequences(), 3, 6))
    assert len(log.log) == 6
    assert 'cost/flops' not in log.log[3]
    assert 'cost/samples_per_second' in log.log[3]
    flops = [e.get('cost/flops') for e in log.log]
    assert flops[:3] + flops[4:] == expected[:3] + expected[4:]


def test_the_predicted_time_of_two_optimizers_is_the_sum_of_theirs(
        tmp_path, quarter_second_steps):
    # The oracle: the calibration applied to the hook's run of each
    # update alone
    c = literal_calibration()
    xs = {'big': numpy.ones((BATCH, 30, 4), numpy.float32),
          'small': numpy.ones((BATCH, 3, 4), numpy.float32)}
    expected = 0
    for x in xs.values():
        model = SumLinear()
        opt = chainer.optimizers.SGD().setup(model)
        with ComputationalCostHook() as hook:
            opt.update(model, x)
        expected += hook.time_report(c)['total']['t_predicted']
    opts = {name: chainer.optimizers.SGD().setup(SumLinear())
            for name in xs}

    class Two(training.StandardUpdater):
        def update_core(self):
            for name, x in sorted(xs.items()):
                opts[name].update(opts[name].target, x)

    log = _run(Two(chainer.iterators.SerialIterator([0], 1), opts), 2,
               tmp_path, CostMonitor(calibration=c))
    for e in log:
        assert e['cost/predicted_time'] == pytest.approx(expected,
                                                         rel=1e-12)
        assert e['cost/time'] == 0.25


def _rows_by_step(step):
    """Steps 1, 3, 5: two sequences of 2 and 3 rows; 2, 4, 6: 3 and 3."""
    return [2, 3] if step % 2 else [3, 3]


@pytest.mark.parametrize('as_keywords', [False, True])
def test_alternating_sequence_lists_are_each_costed_whole(
        tmp_path, as_keywords):
    # A list of variable-length sequences, given as an argument or a
    # keyword: each step of the two layouts is costed as such, with its
    # memory peak (a step taken for the other layout has none)
    steps = []

    def call(opt):
        steps.append(None)
        xs = [numpy.ones((1, n, 4), numpy.float32)
              for n in _rows_by_step(len(steps))]

        def lossfun(xs):
            return opt.target(F.concat(xs, axis=1))
        if as_keywords:
            opt.update(lossfun, xs=xs)
        else:
            opt.update(lossfun, xs)
    opt = chainer.optimizers.SGD().setup(SumLinear())
    log = _run(_Calling(call, opt), 6, tmp_path, CostMonitor(memory=True))
    # SumLinear on 5 rows: 32 * 5 + 7 = 167 FLOPs; on 6: 199 (the concat
    # of the sequences: 0)
    assert [e['cost/flops'] for e in log] == [167, 199] * 3
    assert all(e['cost/memory_peak'] > 0 for e in log)


class _Finished(object):
    """A trigger finished before the training starts (as a resumed
    ManualScheduleTrigger past its points): the trainer neither
    initializes nor calls its extension, but finalizes it."""

    finished = True

    def __call__(self, trainer):
        return False


def test_a_monitor_no_trainer_started_does_nothing(tmp_path):
    monitor = CostMonitor()
    opt = chainer.optimizers.SGD().setup(SumLinear())
    updater = _Calling(lambda o: o.update(o.target, X), opt)
    trainer = training.Trainer(updater, (2, 'iteration'), out=str(tmp_path))
    trainer.extend(monitor, trigger=_Finished())
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    trainer.run()  # finalized without having been initialized
    assert len(log.log) == 2
    assert not any(k.startswith('cost/') for e in log.log for k in e)
    # called by hand: nothing to report, nothing reported
    observation = {}
    with chainer.reporter.Reporter().scope(observation):
        monitor(trainer)
    assert observation == {}
    monitor.finalize()


def test_a_step_the_clock_sees_as_instant_has_flops_and_no_rates(
        tmp_path, monkeypatch):
    # a clock too coarse to see the step (0 s): no rate to divide by 0,
    # the step's FLOPs all the same (SumLinear on 64 rows: 2055)
    monkeypatch.setattr(cm_extensions, '_clock', lambda: 7.0)
    opt = chainer.optimizers.SGD().setup(SumLinear())
    log = _run(_Calling(lambda o: o.update(o.target, X), opt), 2, tmp_path,
               CostMonitor(device='a100', calibration=literal_calibration()))
    assert [sorted(k for k in e if k.startswith('cost/')) for e in log] == [
        ['cost/flops', 'cost/predicted_time', 'cost/time']] * 2
    assert [(e['cost/flops'], e['cost/time']) for e in log] == [
        (2055, 0.0)] * 2


class _Skipping(_Calling):
    """Skips a step whose update_core raises (a bad batch), and goes on."""

    def update(self):
        try:
            self.update_core()
        except Boom:
            pass
        self.iteration += 1


def test_a_step_the_updater_skips_leaves_the_monitor_on(tmp_path):
    # the second step raises and is skipped by the updater: the others
    # are costed (SumLinear on 64 rows: 2055), the skipped one not
    def step(opt):
        if len(seen) == 1:
            seen.append(None)
            raise Boom('a bad batch')
        seen.append(opt.update(opt.target, X))
    seen = []
    opt = chainer.optimizers.SGD().setup(SumLinear())
    log = _run(_Skipping(step, opt), 4, tmp_path, CostMonitor())
    assert [e.get('cost/flops') for e in log] == [2055, None, 2055, 2055]


class _Twice(_Calling):
    """Runs update_core twice an iteration (two half-steps)."""

    def update(self):
        self.update_core()
        self.update_core()
        self.iteration += 1


def test_an_iteration_of_two_update_cores_logs_both(tmp_path, monkeypatch):
    # SumLinear on 64 rows: 2055 a step, 4110 an iteration of two; each
    # run of update_core timed 0.5 s (a clock read twice a run): 1 s and
    # 128 samples an iteration
    ticks = iter(range(1000))
    monkeypatch.setattr(cm_extensions, '_clock', lambda: next(ticks) / 2)
    opt = chainer.optimizers.SGD().setup(SumLinear())
    log = _run(_Twice(lambda o: o.update(o.target, X), opt), 3, tmp_path,
               CostMonitor())
    assert [(e['cost/flops'], e['cost/samples_per_second'],
             e['cost/flops_per_second']) for e in log] == [
        (4110, 128.0, 4110.0)] * 3


class _Stepping(_Calling):
    """Does the step in update() itself: update_core never runs."""

    def update(self):
        self.call(self.get_optimizer('main'))
        self.iteration += 1


def test_an_updater_whose_update_core_never_runs_is_warned_of(tmp_path):
    opt = chainer.optimizers.SGD().setup(SumLinear())
    trainer = training.Trainer(
        _Stepping(lambda o: o.update(o.target, X), opt), (3, 'iteration'),
        out=str(tmp_path))
    trainer.extend(CostMonitor())
    assert [str(w.message) for w in _warnings_of(trainer)] == [
        "CostMonitor: the updater's update_core did not run in the first "
        'iteration (_Stepping.update() does the step itself): nothing is '
        'costed; put the step in update_core']


class _Failing(extension.Extension):
    def initialize(self, trainer):
        raise Boom('a corrupt snapshot')


def test_a_monitor_left_on_by_a_failed_start_gives_way(tmp_path):
    # another extension's initialize raises after the monitor's: Chainer
    # finalizes nothing, and the updater keeps the monitor's wrapper; a
    # new trainer with a new monitor takes the updater over
    opt = chainer.optimizers.SGD().setup(SumLinear())
    updater = _Calling(lambda o: o.update(o.target, X), opt)
    trainer = training.Trainer(updater, (2, 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor(), priority=extension.PRIORITY_WRITER + 2)
    trainer.extend(_Failing(), priority=extension.PRIORITY_WRITER + 1)
    with pytest.raises(Boom):
        trainer.run(show_loop_exception_msg=False)
    assert 'update_core' in vars(updater)
    updater.iteration = 0
    log = _run(updater, 2, tmp_path, CostMonitor())
    assert [e['cost/flops'] for e in log] == [2055] * 2
    assert 'update_core' not in vars(updater)


class _Timing(extension.Extension):
    """Wraps update_core after the monitor and puts back what it found
    (the monitor's wrapper) when it is finalized, after the monitor."""

    def initialize(self, trainer):
        updater = trainer.updater
        self.found = updater.update_core
        updater.update_core = lambda: self.found()

    def __call__(self, trainer):
        pass

    def finalize(self):
        self.updater.update_core = self.found


def test_a_monitor_wrapper_put_back_by_another_costs_nothing(tmp_path):
    opt = chainer.optimizers.SGD().setup(SumLinear())
    updater = _Calling(lambda o: o.update(o.target, X), opt)
    timing = _Timing()
    timing.updater = updater
    trainer = training.Trainer(updater, (2, 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor(), priority=extension.PRIORITY_WRITER + 2)
    trainer.extend(timing, priority=extension.PRIORITY_WRITER + 1)
    trainer.run()
    # the monitor's wrapper is back on the updater, finalized: a step
    # run by hand is not costed, and a new trainer's monitor takes over
    observation = {}
    reporter = chainer.reporter.Reporter()
    reporter.add_observer('main', opt.target)
    with reporter.scope(observation):
        updater.update()
    assert sorted(observation) == ['main/loss']
    updater.iteration = 0
    log = _run(updater, 2, tmp_path, CostMonitor())
    assert [e['cost/flops'] for e in log] == [2055] * 2


def test_every_extension_of_the_iteration_reads_its_figures(tmp_path):
    # reported while the update runs, as a model reports its loss: a
    # writer called before the monitor's priority, and a trigger the user
    # gave, see every iteration's figures (SumLinear on 64 rows: 2055)
    opt = chainer.optimizers.SGD().setup(SumLinear())
    trainer = training.Trainer(_Calling(lambda o: o.update(o.target, X),
                                        opt),
                               (3, 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor(), trigger=(2, 'iteration'))
    seen = []
    trainer.extend(lambda t: seen.append(t.observation.get('cost/flops')),
                   priority=extension.PRIORITY_WRITER + 1)
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    trainer.run()
    assert seen == [2055] * 3
    assert [e['cost/flops'] for e in log.log] == [2055] * 3


def test_the_mfu_peak_counts_the_parameters_of_every_optimizer(
        tmp_path, quarter_second_steps):
    # 'main' updates a float32 Linear(4, 2) (10 elements), 'other' a
    # float16 Linear(4, 20) (100): most of the elements are float16, the
    # A100's FP16 peak, 312 TFLOP/s
    x = numpy.ones((BATCH, 4), numpy.float32)
    with chainer.using_config('dtype', numpy.float16):
        big = L.Linear(4, 20)
    opts = {'main': chainer.optimizers.SGD().setup(L.Linear(4, 2)),
            'other': chainer.optimizers.SGD().setup(big)}

    class Two(training.StandardUpdater):
        def update_core(self):
            for name, dtype in (('main', 'f'), ('other', 'e')):
                opts[name].update(lambda x: F.sum(opts[name].target(x)),
                                  x.astype(dtype))

    log = _run(Two(chainer.iterators.SerialIterator([0], 1), opts), 2,
               tmp_path, CostMonitor(device='a100'))
    for e in log:
        assert e['cost/mfu'] == pytest.approx(e['cost/flops'] * 4 / 312e12,
                                              rel=1e-12)


def test_the_default_limit_is_16_signatures(tmp_path):
    # step i on 64 x i rows: every step a new signature, the first 16
    # costed (SumLinear: 32 * 64 i + 7 FLOPs), the 17th not
    steps = []

    def call(opt):
        steps.append(None)
        opt.update(opt.target, numpy.ones((BATCH, len(steps), 4), 'f'))
    opt = chainer.optimizers.SGD().setup(SumLinear())
    log = _run(_Calling(call, opt), 17, tmp_path, CostMonitor())
    assert [e.get('cost/flops') for e in log] == [
        2048 * i + 7 for i in range(1, 17)] + [None]


class _Manual(training.StandardUpdater):
    """Runs forward and backward itself, then updates each optimizer
    without a loss function."""

    def update_core(self):
        for name, opt in sorted(self.get_all_optimizers().items()):
            loss = opt.target(X)
            opt.target.cleargrads()
            loss.backward()
            opt.update()  # the line the warnings point at


def _warnings_of(trainer):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        trainer.run()
    return [w for w in caught if issubclass(w.category, ReportWarning)]


def test_one_warning_per_optimizer_updated_without_a_loss_function(
        tmp_path):
    opts = {name: chainer.optimizers.SGD().setup(SumLinear())
            for name in ('a', 'b')}
    updater = _Manual(chainer.iterators.SerialIterator([0], 1), opts)
    trainer = training.Trainer(updater, (3, 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor())
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    caught = _warnings_of(trainer)
    assert [str(w.message) for w in caught] == [
        "CostMonitor: optimizer '{}' was updated without a loss function "
        '(the updater ran forward and backward itself): those calls are '
        'costed one by one as they run; cost/memory_peak, cost/comm_bytes '
        'and cost/predicted_time are not reported for its steps'.format(name)
        for name in ('a', 'b')]
    # every step, each optimizer's whole step, as when the loss function
    # is given to its update (SumLinear on 64 rows: 2055), twice
    assert [e['cost/flops'] for e in log.log] == [4110] * 3


def test_a_plain_training_warns_nothing(tmp_path):
    opt = chainer.optimizers.SGD().setup(SumLinear())
    trainer = training.Trainer(_Calling(lambda o: o.update(o.target, X),
                                        opt),
                               (3, 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor(memory=True))
    assert _warnings_of(trainer) == []


def test_every_warning_points_at_the_updater(tmp_path, monkeypatch):
    # The limit, an update without a loss function, a step with other
    # work at the same shapes, a failure of its own: each warning's
    # location is the updater's call of optimizer.update
    import inspect
    line = [n for n, text in enumerate(
        inspect.getsourcelines(_Manual)[0],
        inspect.getsourcelines(_Manual)[1]) if 'opt.update()' in text]
    opt = chainer.optimizers.SGD().setup(SumLinear())
    trainer = training.Trainer(
        _Manual(chainer.iterators.SerialIterator([0], 1), opt),
        (2, 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor())
    caught = _warnings_of(trainer)
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line[0])]

    def growing(opt):  # a new signature each step
        opt.update(opt.target, numpy.ones((1, trainer.updater.iteration + 1,
                                           4), 'f'))
    trainer = training.Trainer(_Calling(growing, opt), (3, 'iteration'),
                               out=str(tmp_path))
    trainer.extend(CostMonitor(limit=1))
    caught = _warnings_of(trainer)
    assert [(w.filename, str(w.message)[:30]) for w in caught] == [
        (__file__, 'CostMonitor: more than limit=1')]

    trainer, _, _ = _lstm_trainer(tmp_path, CostMonitor(), var_sequences(),
                                  4)
    caught = _warnings_of(trainer)
    # StandardUpdater.update_core calls optimizer.update
    here = training.updaters.standard_updater.__file__
    assert [(w.filename, str(w.message)[:39]) for w in caught] == [
        (here, 'CostMonitor: a step did other work than')]

    def broken(hook):
        raise ValueError('planted')
    monkeypatch.setattr(cm_extensions, '_step_figures', broken)
    trainer, _, _ = _lstm_trainer(tmp_path, CostMonitor(), var_sequences(),
                                  2)
    caught = _warnings_of(trainer)
    assert [(w.filename, str(w.message)) for w in caught] == [
        (here, 'CostMonitor: a step could not be costed, its shapes are not '
         'costed again: ValueError: planted')]


class _ReturningSGD(chainer.optimizers.SGD):
    """An SGD whose update returns something (Chainer's return None)."""

    def update(self, lossfun=None, *args, **kwds):
        super(_ReturningSGD, self).update(lossfun, *args, **kwds)
        return 'updated', args[0].shape


def test_what_an_optimizer_s_update_returns_is_passed_through(tmp_path):
    # Steps costed (1, 2), with other work than the costed one (3 to 5:
    # the LSTM's batches) and as the costed one (6): the updater gets the
    # optimizer's answer each time
    model = VarLengthLSTM()
    opt = _ReturningSGD().setup(model)
    got = []

    class Keeping(training.StandardUpdater):
        def update_core(self):
            batch = self.converter(self.get_iterator('main').next())
            got.append(opt.update(model, *batch))

    it = chainer.iterators.SerialIterator(var_sequences(), 3, shuffle=False)
    log = _run(Keeping(it, opt, converter=pad_sorted), 6, tmp_path,
               CostMonitor())
    assert got == [('updated', (3, 4, 3))] * 6
    assert all('cost/flops' in e for e in log)


class _Counting(chainer.FunctionHook):
    """A user's function hook, with FunctionHook's default name."""

    def __init__(self):
        self.calls = 0

    def forward_postprocess(self, function, in_data):
        self.calls += 1


def test_a_users_function_hook_runs_beside_the_monitor(tmp_path):
    # the monitor's own hooks must not take the name of the user's
    opt = chainer.optimizers.SGD().setup(SumLinear())
    trainer = training.Trainer(_Calling(lambda o: o.update(o.target, X),
                                        opt),
                               (3, 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor())
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    with _Counting() as users:
        trainer.run()
    # a step of SumLinear applies Reshape, LinearFunction, Sum, then, in
    # its backward, BroadcastTo (Sum's gradient) and LinearGradWeight (no
    # gradient for the input): 5 calls, 3 steps
    assert users.calls == 15
    assert [e['cost/flops'] for e in log.log] == [2055] * 3


#: Sequence lengths, three a batch: (3, 2, 1) twice (costed twice, the
#: first iteration's), then the same calls and more (4, 2, 1: a fourth
#: step) and fewer (2, 2, 1: no third step).
LONGER_SHORTER = [3, 2, 1, 3, 2, 1, 4, 2, 1, 2, 2, 1]


def test_a_step_with_the_costed_calls_and_more_or_fewer(tmp_path):
    data = var_sequences(LONGER_SHORTER)
    trainer, log, replay = _lstm_trainer(tmp_path, CostMonitor(), data, 4)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ReportWarning)
        trainer.run()
    expected = _replayed_flops(replay, _batches(data, 3, 4))
    assert len(set(expected)) == 3
    assert [e['cost/flops'] for e in log.log] == expected


class _CastBy(chainer.Chain):
    """(x (batch, 4), flag (batch,)) -> a Linear(4, 2) cast to float64
    when the first flag is set, else to float16, squared and summed: the
    same shapes, other dtypes."""

    def __init__(self):
        super(_CastBy, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(4, 2, initialW=0.5, nobias=True)

    def forward(self, x, flag):
        y = F.cast(self.lin(x), 'd' if flag[0] else 'e')
        return F.sum(y * y)


def test_a_step_whose_arrays_take_another_dtype_is_not_the_costed_one(
        tmp_path):
    # batches 1, 2: float16 (costed), 3: float64 (other work: no memory
    # peak), 4: float16 again, the costed step's peak
    x = numpy.ones((4, 4), numpy.float32)
    flags = [0, 0, 1, 0]

    def call(opt):
        flag = numpy.full(4, flags[len(log_flags)], numpy.int32)
        log_flags.append(flag[0])
        opt.update(opt.target, x, flag)
    log_flags = []
    opt = chainer.optimizers.SGD().setup(_CastBy())
    log = _run(_Calling(call, opt), 4, tmp_path, CostMonitor(memory=True))
    assert ['cost/memory_peak' in e for e in log] == [True, True, False,
                                                      True]
    assert log[3]['cost/memory_peak'] == log[1]['cost/memory_peak']


@pytest.mark.chainer7_only
def test_a_monitor_called_before_training_reports_nothing(tmp_path):
    # Chainer 7's call_before_training: the monitor is called once before
    # the first iteration, with no step to report
    opt = chainer.optimizers.SGD().setup(SumLinear())
    trainer = training.Trainer(_Calling(lambda o: o.update(o.target, X),
                                        opt),
                               (2, 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor(), call_before_training=True)
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    trainer.run()
    assert [e['cost/flops'] for e in log.log] == [2055] * 2


def test_every_value_reported_is_a_number(tmp_path):
    # What an extension reading the observation (a logger of its own)
    # gets: a key the step has no figure for is left out, never None
    # (LogReport would drop a None; a user's writer would not).  Steps 3,
    # 5 and 6 do other work than the costed one: no memory peak (see
    # test_a_step_with_other_work_has_no_memory_peak).
    trainer, _, _ = _lstm_trainer(tmp_path, CostMonitor(memory=True),
                                  var_sequences(), 6)
    seen = []
    trainer.extend(lambda t: seen.append({
        k: v for k, v in t.observation.items() if k.startswith('cost/')}))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ReportWarning)
        trainer.run()
    assert ['cost/memory_peak' in o for o in seen] == [
        True, True, False, True, False, False]
    assert all(type(v) in (int, float) for o in seen for v in o.values())


# Steps that differ from the costed step of their shapes in their backward
# pass, in a node's settings or in a second input only (issue 44).  The
# oracle: a fresh hook on each step's batch, and the hand counts of
# DETAILS.md.

def _train(model, batches, monitor, tmp_path):
    """The log of an SGD training of ``model`` on ``batches`` in turn."""
    steps = iter(batches)
    opt = chainer.optimizers.SGD().setup(model)
    return _run(_Calling(lambda o: o.update(o.target, *next(steps)), opt),
                len(batches), tmp_path, monitor)


def _fresh(chain, batches, calibration=None):
    """(FLOPs, predicted seconds) of each batch's step of a new ``chain``
    with SGD, each inside fresh hooks: the FLOPs a multiply-add as 2, the
    seconds from a multiply-add as 1, as a calibration counts it."""
    model = chain()
    opt = chainer.optimizers.SGD().setup(model)
    out = []
    for batch in batches:
        with ComputationalCostHook(fma_1flop=False) as hook, \
                ComputationalCostHook() as hook_1:
            opt.update(model, *batch)
        out.append((hook.total_report['flops'],
                    None if calibration is None else
                    hook_1.time_report(calibration)['total']['t_predicted']))
    return out


class _Rewrap(chainer.Chain):
    """(x (batch, 4), cut (batch,)) -> the sum of a decoder Linear(3, 2)
    of an encoder Linear(4, 3) of x (no biases); when the first cut is
    set, the encoder's output is re-wrapped as a new Variable: the same
    forward calls, a backward pass without the encoder."""

    def __init__(self):
        super(_Rewrap, self).__init__()
        with self.init_scope():
            self.enc = L.Linear(4, 3, initialW=0.5, nobias=True)
            self.dec = L.Linear(3, 2, initialW=0.5, nobias=True)

    def forward(self, x, cut):
        h = self.enc(x)
        if cut[0]:
            h = chainer.Variable(h.array)
        return F.sum(self.dec(h))


def _cut_batches(cuts):
    x = numpy.ones((4, 4), numpy.float32)
    return [(x, numpy.full(4, c, numpy.int32)) for c in cuts]


@pytest.mark.parametrize('calibrated', [False, True])
def test_a_step_whose_backward_differs_is_costed_as_such(tmp_path,
                                                         calibrated):
    # Batch 4 (DETAILS.md, a multiply-add as 2): the encoder 4*3*(2*4-1)
    # = 84, the decoder 4*2*(2*3-1) = 40, Sum 8-1 = 7; backward: the
    # decoder's weight gradient 2*3*(2*4-1) = 42, its input gradient
    # 4*3*(2*2-1) = 36, the encoder's weight gradient 3*4*(2*4-1) = 84
    # (BroadcastTo 0); SGD 2 a weight: 24 + 12.  Whole: 329.  Cut: no
    # weight gradient of the encoder (its weight is updated all the same,
    # with the zeros Chainer puts in place of its missing gradient):
    # 329 - 84 = 245.
    cuts = [0, 0, 1, 0, 1, 1]
    batches = _cut_batches(cuts)
    c = literal_calibration() if calibrated else None
    log = _train(_Rewrap(), batches, CostMonitor(calibration=c), tmp_path)
    expected = _fresh(_Rewrap, batches, c)
    assert [f for f, _ in expected] == [245 if cut else 329 for cut in cuts]
    assert [e['cost/flops'] for e in log] == [f for f, _ in expected]
    if calibrated:
        # only the backward pass differs: the forward's predicted time is
        # the costed step's, the rest the hook's
        # (added in the hook's order: to the last bit)
        assert [e['cost/predicted_time'] for e in log] == [
            t for _, t in expected]


class _Rewire(chainer.Chain):
    """(x (batch, 4), which (batch,)) -> the sum of ReLU(Linear(4, 3)(x))
    or, when the first ``which`` is set, of another Linear(4, 3)(x) (no
    biases): the same calls at the same shapes every step, the sum reading
    another node; both outputs kept, as a model keeping its activations."""

    def __init__(self):
        super(_Rewire, self).__init__()
        with self.init_scope():
            self.l1 = L.Linear(4, 3, initialW=0.5, nobias=True)
            self.l2 = L.Linear(4, 3, initialW=0.5, nobias=True)

    def forward(self, x, which):
        a = F.relu(self.l1(x))
        b = self.l2(x)
        self.kept = a, b
        return F.sum(b if which[0] else a)


def test_a_step_whose_loss_reads_another_node_is_costed_as_such(tmp_path):
    # Batch 4 (DETAILS.md, a multiply-add as 2): each Linear 4*3*(2*4-1)
    # = 84, ReLU 12, Sum 12-1 = 11: 191; backward: through the ReLU,
    # ReLUGrad2 12 and l1's weight gradient 3*4*(2*4-1) = 84; else l2's
    # weight gradient 84 alone (BroadcastTo 0); SGD 2 a weight, both
    # weights (a missing gradient is zeros): 2*12*2 = 48.  Whole:
    # 191 + 96 + 48 = 335 through the ReLU, 191 + 84 + 48 = 323 else.
    whiches = [0, 0, 1, 0, 1, 1]
    batches = _cut_batches(whiches)
    log = _train(_Rewire(), batches, CostMonitor(), tmp_path)
    assert [e['cost/flops'] for e in log] == [
        323 if which else 335 for which in whiches]
    assert [f for f, _ in _fresh(_Rewire, batches)] == [
        323 if which else 335 for which in whiches]


def test_the_predicted_time_counts_a_multiply_add_as_one_flop(tmp_path):
    # A calibration's probes count a multiply-add as 1 FLOP, as the hook
    # does by default: the monitor's predicted time took its own count of
    # 2 (329 ns where the hook predicts 193).  A calibration of 1 ns a FLOP
    # and nothing else, every call through its math fit: the FLOPs with a
    # multiply-add as 1 (DETAILS.md), batch 4: the encoder 4*3*4 = 48, the
    # decoder 4*2*3 = 24, Sum 8-1 = 7; backward: the decoder's weight
    # gradient 2*3*4 = 24, its input gradient 4*3*2 = 24, the encoder's
    # weight gradient 3*4*4 = 48; SGD 1 a weight: 12 + 6.  Whole: 193; cut
    # (no weight gradient of the encoder, a step checked against the
    # costed one whose backward differs): 193 - 48 = 145.
    fit = {'coef': [0.0, 0.0, 0.0, 1e-9, 0.0], 'low': [1.0, 0, 0, 0, 0],
           'high': [1.0, 1e6, 1e6, 1e6, 1e6], 'n': 10}
    c = literal_calibration(families={'math': fit}, overhead={
        'inference': 0.0, 'forward': 0.0, 'backward': 0.0, 'update': 0.0})
    cuts = [0, 0, 1, 0, 1, 1]
    log = _train(_Rewrap(), _cut_batches(cuts), CostMonitor(calibration=c),
                 tmp_path)
    assert [e['cost/predicted_time'] for e in log] == [
        pytest.approx((145 if cut else 193) * 1e-9, rel=1e-12)
        for cut in cuts]


def test_a_step_with_other_work_and_a_calibration_goes_on(tmp_path):
    # The LSTM of test_extensions, whose steps 3 to 5 make other calls at
    # the same shapes: every step's FLOPs, and the predicted time of the
    # costed steps (1; 2, costed again; 4, costed as the reference in
    # place of 2, which step 3 did not match); steps whose forward pass
    # differs from the reference's (3, 5, 6) are not predicted
    c = literal_calibration()
    trainer, log, replay = _lstm_trainer(
        tmp_path, CostMonitor(calibration=c), var_sequences(), 6)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ReportWarning)
        trainer.run()
    batches = _batches(var_sequences(), 3, 6)
    assert [e['cost/flops'] for e in log.log] == _replayed_flops(replay,
                                                                 batches)
    model, opt = replay[0]
    times = []
    for batch in batches:
        with ComputationalCostHook(fma_1flop=False) as hook:
            opt.update(model, *batch)
        times.append(hook.time_report(c)['total']['t_predicted'])
    assert [e.get('cost/predicted_time') for e in log.log] == [
        pytest.approx(times[0], rel=1e-12), pytest.approx(times[1], rel=1e-12),
        None, pytest.approx(times[3], rel=1e-12), None, None]
    assert all(e['cost/time'] > 0 for e in log.log)


def test_a_calibration_that_cannot_predict_a_step_takes_nothing_else(
        tmp_path):
    # overheads of 1e308 s: a step's prediction (three of them) is beyond
    # a float.  Only cost/predicted_time goes, with one warning; the FLOPs
    # are a fresh hook's, and the measured cost/time stays.
    from calibration_fixtures import OVERHEAD
    c = literal_calibration(overhead=dict.fromkeys(OVERHEAD, 1e308))
    rng = numpy.random.RandomState(0)
    data = [(rng.rand(8).astype('f'), numpy.int32(rng.randint(3)))
            for _ in range(12)]
    model = L.Classifier(L.Linear(8, 3))
    optimizer = chainer.optimizers.SGD().setup(model)
    updater = training.StandardUpdater(
        chainer.iterators.SerialIterator(data, 4), optimizer)
    trainer = training.Trainer(updater, (3, 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor(calibration=c))
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', ReportWarning)
        trainer.run()
    said = [str(w.message) for w in caught]
    assert len(said) == 1 and said[0].startswith(
        'CostMonitor: cost/predicted_time is not reported for a step its '
        'calibration cannot predict: ValueError: ')
    with ComputationalCostHook(fma_1flop=False) as hook:
        optimizer.update(model, *concat_examples(data[:4]))
    flops = hook.total_report['flops']
    assert [e['cost/flops'] for e in log.log] == [flops] * 3
    assert all(e['cost/time'] > 0 and 'cost/predicted_time' not in e
               for e in log.log)


class _Window(chainer.Chain):
    """(x (1, 1, 32, 32), k (1,)) -> the sum of a max pooling of x times a
    weight, its window k x k (stride 1, padded by k // 2: every window
    gives a 32 x 32 output)."""

    def __init__(self):
        super(_Window, self).__init__()
        with self.init_scope():
            self.w = chainer.Parameter(numpy.full((1, 1, 1, 1), 0.5, 'f'))

    def forward(self, x, k):
        k = int(k[0])
        h = x * F.broadcast_to(self.w, x.shape)
        return F.sum(F.max_pooling_2d(h, k, stride=1, pad=k // 2,
                                      cover_all=False))


def test_a_node_whose_settings_differ_at_the_same_shapes(tmp_path):
    # Windows 5, 5 (costed), 3, 5, 3: a 3 x 3 window makes 1024 outputs
    # x (24 - 8) comparisons fewer than a 5 x 5 one
    x = numpy.ones((1, 1, 32, 32), numpy.float32)
    windows = [5, 5, 3, 5, 3]
    batches = [(x, numpy.array([k], numpy.int32)) for k in windows]
    log = _train(_Window(), batches, CostMonitor(), tmp_path)
    expected = [f for f, _ in _fresh(_Window, batches)]
    assert expected[0] - expected[2] == 1024 * (24 - 8)
    assert [e['cost/flops'] for e in log] == expected


class _Width(chainer.Chain):
    """(x (batch, 4), k (batch,)) -> the sum of a Linear(4, 4) of x (no
    bias) times the first k columns of a constant 4 x 8 matrix: a matrix
    product whose second input's shape depends on the batch's values."""

    def __init__(self):
        super(_Width, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(4, 4, initialW=0.5, nobias=True)
        self.proj = numpy.ones((4, 8), numpy.float32)

    def forward(self, x, k):
        return F.sum(F.matmul(self.lin(x), self.proj[:, :int(k[0])]))


def test_a_call_whose_second_input_differs(tmp_path):
    # Batch 16, widths 8, 8 (costed), 2, 8, 2: the product 16*k*(2*4-1),
    # the sum 16*k-1 and the product's input gradient 16*4*(2*k-1) change
    # with k, the calls before them do not
    x = numpy.ones((16, 4), numpy.float32)
    widths = [8, 8, 2, 8, 2]
    batches = [(x, numpy.full(16, k, numpy.int32)) for k in widths]
    log = _train(_Width(), batches, CostMonitor(), tmp_path)
    expected = [f for f, _ in _fresh(_Width, batches)]
    # at k = 2: 16*6*7 + 16*6 + 16*4*(16-4) = 1536 fewer
    assert expected[0] - expected[2] == 1536
    assert [e['cost/flops'] for e in log] == expected


class _Steady(chainer.Chain):
    """(x (batch, 1, 8, 8), t (batch,)) -> the softmax cross entropy of a
    dropout, a pooling and a Linear of x made positive without a graph
    (no_backprop_mode), labels -1 ignored: nodes with settings, with
    arrays (the dropout's mask) and with a value computed from the data
    (the loss's count of labels) that change from step to step while
    the calls stay the same."""

    def __init__(self):
        super(_Steady, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(16, 3)

    def forward(self, x, t):
        with chainer.no_backprop_mode():
            x = F.absolute(x)
        h = F.max_pooling_2d(F.dropout(x, 0.25), 2)
        return F.softmax_cross_entropy(self.lin(h), t)


def test_an_unchanging_training_is_costed_twice_only(tmp_path, monkeypatch):
    runs = counted_costings(monkeypatch)
    rng = numpy.random.RandomState(0)
    x = rng.rand(4, 1, 8, 8).astype(numpy.float32)
    # a different number of ignored labels at each step
    labels = [[0, 1, 2, 0], [1, -1, 2, 0], [-1, -1, 2, 0], [2, 2, 2, -1]]
    batches = [(x, numpy.array(t, numpy.int32)) for t in labels * 2]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        log = _train(_Steady(), batches, CostMonitor(memory=True), tmp_path)
    # the first iteration and the next, its key costed again
    assert len(runs) == 2
    assert [w for w in caught if issubclass(w.category, ReportWarning)] == []
    assert [e['cost/flops'] for e in log] == [
        f for f, _ in _fresh(_Steady, batches)]
    assert all('cost/memory_peak' in e for e in log)


def test_memory_and_a_backward_that_differs(tmp_path):
    # memory=True: the step whose backward differs is costed exactly, and
    # has no memory peak (its forward pass ran unhooked); the steps with
    # the costed graph have the costed step's
    cuts = [0, 0, 1, 0]
    batches = _cut_batches(cuts)
    log = _train(_Rewrap(), batches, CostMonitor(memory=True), tmp_path)
    assert [e['cost/flops'] for e in log] == [329, 329, 245, 329]
    assert ['cost/memory_peak' in e for e in log] == [True, True, False,
                                                      True]
    assert log[3]['cost/memory_peak'] == log[1]['cost/memory_peak']


def _before_the_training():
    # a Variable a Chainer call made once, before the training: an input
    # whose creator is outside every step (the graph's whole comparison)
    h = F.relu(numpy.ones((4, 4), numpy.float32))

    def step(optimizer):
        optimizer.update(lambda: F.sum(optimizer.target(h)))
    return step


def _cleared_every_other():
    # the gradients freed after every other update, which its own update
    # clears before its backward pass anyway: the same work each step
    steps = []

    def step(optimizer):
        optimizer.update(lambda: F.sum(optimizer.target(
            numpy.ones((4, 4), numpy.float32))))
        steps.append(None)
        if len(steps) % 2:
            optimizer.target.cleargrads()
    return step


@pytest.mark.parametrize('step', [_before_the_training, _cleared_every_other])
def test_memory_of_steps_that_do_the_same_work(step, tmp_path):
    # Linear(4, 4) (no bias) on a 4x4 input 4*4*(2*4-1) = 112, Sum 16-1 =
    # 15, the weight gradient 4*4*(2*4-1) = 112 (BroadcastTo 0), SGD 2*16
    # = 32: 271 FLOPs each step; every step the costed step's graph, and
    # its memory peak
    opt = chainer.optimizers.SGD().setup(
        L.Linear(4, 4, initialW=0.5, nobias=True))
    log = _run(_Calling(step(), opt), 6, tmp_path, CostMonitor(memory=True))
    assert [e['cost/flops'] for e in log] == [271] * 6
    peaks = [e.get('cost/memory_peak') for e in log]
    assert None not in peaks and peaks == [peaks[0]] * 6


class _Lazy(chainer.Chain):
    """x (batch, 4) -> the sum of a Linear(4, 2) (no bias) of x, beside a
    Linear(None, 3) that is never called: its weight never gets an
    array."""

    def __init__(self):
        super(_Lazy, self).__init__()
        with self.init_scope():
            self.used = L.Linear(4, 2, initialW=0.5, nobias=True)
            self.unused = L.Linear(None, 3)

    def forward(self, x):
        return F.sum(self.used(x))


def test_an_optimizer_hook_beside_a_link_never_called(tmp_path):
    # WeightDecay on every parameter: the monitored training updates the
    # weight as a bare one does, and each step costs what a fresh hook
    # counts
    weights = []
    for monitor in (None, CostMonitor(device='a100')):
        model = _Lazy()
        opt = chainer.optimizers.SGD(lr=0.1).setup(model)
        opt.add_hook(chainer.optimizer_hooks.WeightDecay(0.5))
        trainer = training.Trainer(
            _Calling(lambda o: o.update(o.target, X[:, 0]), opt),
            (3, 'iteration'), out=str(tmp_path))
        log = extensions.LogReport(trigger=(1, 'iteration'))
        trainer.extend(log)
        if monitor is not None:
            trainer.extend(monitor)
        trainer.run()
        weights.append(model.used.W.array.copy())
        assert model.unused.W.array is None
    # each step: W -= 0.1 * (64 + 0.5 W), from 0.5: 0.5 * 0.95 - 6.4, ...
    w = 0.5
    for _ in range(3):
        w = w - 0.1 * (64 + 0.5 * w)
    numpy.testing.assert_allclose(weights[0], numpy.full((2, 4), w, 'f'),
                                  rtol=1e-6)
    numpy.testing.assert_array_equal(weights[0], weights[1])
    model = _Lazy()
    opt = chainer.optimizers.SGD(lr=0.1).setup(model)
    opt.add_hook(chainer.optimizer_hooks.WeightDecay(0.5))
    with ComputationalCostHook(fma_1flop=False) as hook:
        opt.update(model, X[:, 0])
    assert [e['cost/flops'] for e in log.log] == [
        hook.total_report['flops']] * 3


class _Half(chainer.Chain):
    """x (batch, 8) float16 -> a float16 Linear(8, 8) (64 + 8 elements in
    two arrays), then three float32 batch normalisations of 8 (gamma and
    beta: 48 elements in six arrays) on the result cast to float32."""

    def __init__(self):
        super(_Half, self).__init__()
        with self.init_scope():
            with chainer.using_config('dtype', numpy.float16):
                self.lin = L.Linear(8, 8)
            self.norms = chainer.ChainList(
                *[L.BatchNormalization(8) for _ in range(3)])

    def forward(self, x):
        h = F.cast(self.lin(x), numpy.float32)
        for norm in self.norms:
            h = norm(h)
        return F.sum(h)


def test_the_mfu_peak_of_a_float16_model_with_float32_norms(
        tmp_path, quarter_second_steps):
    # most arrays are float32 (6 of 8), most elements float16 (72 of
    # 120): the A100's FP16 tensor-core peak, 312 TFLOP/s
    x = numpy.ones((BATCH, 8), numpy.float16)
    opt = chainer.optimizers.SGD().setup(_Half())
    log = _run(_Calling(lambda o: o.update(o.target, x), opt), 2,
               tmp_path, CostMonitor(device='a100'))
    for e in log:
        assert e['cost/mfu'] == pytest.approx(e['cost/flops'] * 4 / 312e12,
                                              rel=1e-12)


class _Critic(chainer.Chain):
    """x (batch, 1, 4) -> the sum of a Linear(4, 3) (no bias) of x and of
    its square: another model than SumLinear on the same batch."""

    def __init__(self):
        super(_Critic, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(4, 3, nobias=True)

    def forward(self, x):
        y = self.lin(F.reshape(x, (x.shape[0], 4)))
        return F.sum(y * y)


def test_two_optimizers_given_the_same_batch_cost_their_own_models(
        tmp_path):
    # A GAN's updater: a generator and a discriminator, each updated on
    # the batch: the step is the sum of each model's own update, each
    # costed whole (with its memory peak)
    opts = {'gen': chainer.optimizers.SGD().setup(SumLinear()),
            'dis': chainer.optimizers.SGD().setup(_Critic())}

    class Gan(training.StandardUpdater):
        def update_core(self):
            for name in ('gen', 'dis'):
                opts[name].update(opts[name].target, X)

    log = _run(Gan(chainer.iterators.SerialIterator([0], 1), opts), 3,
               tmp_path, CostMonitor(memory=True))
    each = []
    for chain in (SumLinear, _Critic):
        model = chain()
        opt = chainer.optimizers.SGD().setup(model)
        with ComputationalCostHook(fma_1flop=False) as hook:
            opt.update(model, X)
        each.append(hook.total_report['flops'])
    # SumLinear on 64 rows: 32 * 64 + 7 = 2055; the other is not that
    assert each[0] == 2055 and each[1] != 2055
    assert [e['cost/flops'] for e in log] == [sum(each)] * 3
    assert all(e['cost/memory_peak'] > 0 for e in log)


def test_the_memory_peak_of_three_updates_is_the_highest(tmp_path):
    # a small update, a large one, a small one: the step's peak is the
    # large one's, as a hook with memory=True finds it on that update
    # alone (not the first's, the last's, nor the sum)
    x = numpy.ones((BATCH, 1000, 4), numpy.float32)
    sizes = {'a': 10, 'b': 1000, 'c': 20}
    opts = {name: chainer.optimizers.SGD().setup(SumLinear())
            for name in sizes}

    class Three(training.StandardUpdater):
        def update_core(self):
            for name in sorted(sizes):
                opts[name].update(opts[name].target, x[:, :sizes[name]])

    log = _run(Three(chainer.iterators.SerialIterator([0], 1), opts), 2,
               tmp_path, CostMonitor(memory=True))
    peaks = {}
    for name, rows in sizes.items():
        model = SumLinear()
        opt = chainer.optimizers.SGD().setup(model)
        opt.update(model, x[:, :rows])  # as the monitor's later steps
        with ComputationalCostHook(fma_1flop=False, memory=True) as hook:
            opt.update(model, x[:, :rows])
        peaks[name] = hook.memory_report['peak']
    assert peaks['b'] > peaks['a'] + peaks['c']
    assert [e['cost/memory_peak'] for e in log] == [peaks['b']] * 2


class _InputGrad(chainer.Chain):
    """(x (batch, 4), flag (batch,)) -> the sum of a Linear(4, 3) (no
    bias) of x, given as a Variable that needs a gradient when the first
    flag is set: the same calls and graph, a longer backward pass."""

    def __init__(self):
        super(_InputGrad, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(4, 3, initialW=0.5, nobias=True)

    def forward(self, x, flag):
        return F.sum(self.lin(chainer.Variable(x, requires_grad=bool(
            flag[0]))))


def test_a_step_whose_input_needs_a_gradient(tmp_path):
    # Batch 4, flags 0, 0 (costed), 1, 0: the input's gradient, a
    # LinearGradData of 4*4*(2*3-1) = 80 FLOPs, in step 3 only
    flags = [0, 0, 1, 0]
    batches = _cut_batches(flags)
    log = _train(_InputGrad(), batches, CostMonitor(), tmp_path)
    expected = [f for f, _ in _fresh(_InputGrad, batches)]
    assert expected[2] - expected[0] == 80
    assert [e['cost/flops'] for e in log] == expected


class _Tied(chainer.Chain):
    """(x (batch, 4), flag (batch,)) -> the sum of x times a (4,) weight
    times itself, or times a second weight when the first flag is set: a
    weight used twice sums its two gradients (one Add more)."""

    def __init__(self):
        super(_Tied, self).__init__()
        with self.init_scope():
            self.a = chainer.Parameter(numpy.full(4, 0.5, 'f'))
            self.b = chainer.Parameter(numpy.full(4, 0.5, 'f'))

    def forward(self, x, flag):
        w = self.a * (self.b if flag[0] else self.a)
        return F.sum(x * F.broadcast_to(w, x.shape))


@pytest.mark.parametrize('flags', [[0, 0, 1, 0, 1], [1, 1, 0, 1, 0]])
def test_a_step_whose_weight_is_used_twice_or_not(tmp_path, flags):
    # the costed step uses a weight twice (first flags) or two weights
    batches = _cut_batches(flags)
    log = _train(_Tied(), batches, CostMonitor(), tmp_path)
    expected = [f for f, _ in _fresh(_Tied, batches)]
    assert expected[0] != expected[2]
    assert [e['cost/flops'] for e in log] == expected


class _Watched(chainer.Chain):
    """_InputGrad's model that keeps a weak reference to the node of each
    step's Linear: whether something still holds a step's graph."""

    def __init__(self):
        super(_Watched, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(4, 3, initialW=0.5, nobias=True)
        self.nodes = []

    def forward(self, x, flag):
        h = self.lin(x)
        self.nodes.append(weakref.ref(h.creator_node))
        return F.sum(h)


@pytest.mark.parametrize('flags', [[0, 0, 0, 0], [0, 0, 1, 0]])
def test_a_step_s_graph_is_freed_when_it_ends(tmp_path, flags):
    # Without the cycle collector, by reference counts alone: the monitor
    # keeps no node of a checked step (nor of one that differs) alive
    model = _Watched()
    gc.collect()
    gc.disable()
    try:
        _train(model, _cut_batches(flags), CostMonitor(), tmp_path)
        alive = [ref() is not None for ref in model.nodes]
    finally:
        gc.enable()
    assert alive == [False] * len(flags)


class _Cut(chainer.Chain):
    """x (batch, 4) -> the sigmoid of a Linear(4, 1000), which its node
    keeps for its gradient, taken off the graph (doubled into a new
    Variable that needs no gradient, as an encoder cut off is), its
    sigmoid's sigmoid, a Linear(1000, 2), summed.  ``alive`` says, at
    each step, whether anything still held the sigmoid's node once the
    forward pass had dropped it."""

    def __init__(self):
        super(_Cut, self).__init__()
        with self.init_scope():
            self.first = L.Linear(4, 1000, initialW=0.001, nobias=True)
            self.second = L.Linear(1000, 2, initialW=0.001, nobias=True)
        self.alive = []

    def forward(self, x):
        h = F.sigmoid(self.first(x))
        node = weakref.ref(h.creator_node)
        h = chainer.Variable(h.array * 2, requires_grad=False)
        self.alive.append(node() is not None)
        return F.sum(self.second(F.sigmoid(F.sigmoid(h))))


@pytest.mark.parametrize('memory', [False, True])
def test_a_node_the_forward_pass_drops_is_freed_then(tmp_path, memory):
    # By reference counts alone, as in a training without the monitor: at
    # the costed steps (1 and 2) and at the checked ones alike, the node
    # cut off is freed when the forward pass drops it, not when it ends
    model = _Cut()
    x = numpy.ones((BATCH, 4), numpy.float32)
    gc.collect()
    gc.disable()
    try:
        _train(model, [(x,)] * 4, CostMonitor(memory=memory), tmp_path)
    finally:
        gc.enable()
    assert model.alive == [False] * 4


def test_the_memory_peak_of_a_forward_pass_that_cuts_its_graph(tmp_path):
    # cost/memory_peak is the peak of a hook with memory=True around the
    # step, which sees the first sigmoid's output freed at the cut: the
    # two sigmoids after it then hold no more than the Linear and the
    # sigmoid before it
    x = numpy.ones((BATCH, 4), numpy.float32)
    log = _train(_Cut(), [(x,)] * 3, CostMonitor(memory=True), tmp_path)
    model = _Cut()
    opt = chainer.optimizers.SGD().setup(model)
    opt.update(model, x)  # as the monitor's later steps
    with ComputationalCostHook(fma_1flop=False, memory=True) as hook:
        opt.update(model, x)
    # 64 * 1000 * 4 = 256000 bytes an array: at the first sigmoid, the
    # Linear's output, the sigmoid's and its scratch of one more (DETAILS);
    # at the second one as much (with the first's output held too, 4)
    assert hook.memory_report['peak'] == 3 * 256000
    assert [e['cost/memory_peak'] for e in log] == [3 * 256000] * 3


def test_a_monitor_kept_after_its_training_keeps_no_optimizer_alive(
        tmp_path):
    model = SumLinear()
    opt = chainer.optimizers.SGD().setup(model)
    monitor = CostMonitor()
    _run(_Calling(lambda o: o.update(o.target, X), opt), 3, tmp_path,
         monitor)
    gone = weakref.ref(opt)
    del opt, model
    gc.collect()
    assert gone() is None
    assert monitor is not None  # kept to the end


class _Carry(chainer.Chain):
    """(x (2, 2), reset (2,)) -> the sum of Linear(2, 2)(x + h), h the
    previous step's output unless the step resets (or is the first): a
    backward pass that runs on into the graphs of earlier steps, as a
    recurrent state carried over steps does."""

    def __init__(self):
        super(_Carry, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(2, 2, initialW=0.5, nobias=True)
        self.h = None

    def forward(self, x, reset):
        h = x if reset[0] or self.h is None else x + self.h
        self.h = self.lin(h)
        return F.sum(self.h)


def test_a_step_whose_backward_runs_into_earlier_steps(tmp_path):
    # Resets at steps 1 and 4.  A reset step (DETAILS.md, a multiply-add
    # as 2): Linear 2*2*(2*2-1) = 12, Sum 4-1 = 3; backward: the weight
    # gradient 2*2*(2*2-1) = 12 (x needs none); SGD 2 a weight: 8.
    # Whole: 35.  A step that carries the state goes on into the steps
    # before it, back to the last reset.
    resets = [1, 0, 0, 1, 0, 0]
    x = numpy.ones((2, 2), numpy.float32)
    batches = [(x, numpy.full(2, r, numpy.int32)) for r in resets]
    steps = iter(batches)
    log = _run(_Calling(lambda o: o.update(o.target, *next(steps)),
                        chainer.optimizers.SGD().setup(_Carry())),
               len(resets), tmp_path, CostMonitor())
    expected = [f for f, _ in _fresh(_Carry, batches)]
    assert expected[0] == expected[3] == 35
    assert expected[0] < expected[1] < expected[2]
    assert [e['cost/flops'] for e in log] == expected


class _TwoDeep(chainer.Chain):
    """An encoder Linear(4, 4) the updater runs (twice on odd steps)
    before giving its output to a loss function of a decoder."""

    def __init__(self):
        super(_TwoDeep, self).__init__()
        with self.init_scope():
            self.enc = L.Linear(4, 4, initialW=0.5, nobias=True)
            self.dec = L.Linear(4, 2, initialW=0.5, nobias=True)

    def loss(self, h):
        return F.sum(self.dec(h))


def test_a_graph_the_updater_built_before_the_loss_function(tmp_path):
    # As a GAN's updater does: the encoder runs in update_core, outside
    # optimizer.update, and the loss function's backward pass goes on
    # into it; steps 3 and 5 run it twice.  The oracle: a hook around
    # each whole step, the encoder's forward included.
    x = numpy.ones((3, 4), numpy.float32)
    twice = [0, 0, 1, 0, 1]

    def stepper(hooked):
        flops = []

        def step(opt):
            model = opt.target
            with ComputationalCostHook(fma_1flop=False) if hooked else \
                    contextlib.nullcontext() as hook:
                h = model.enc(x)
                if twice[len(flops)]:
                    h = model.enc(h)
                opt.update(model.loss, h)
            flops.append(hook and hook.total_report['flops'])
        return step, flops

    step, _ = stepper(False)
    log = _run(_Calling(step, chainer.optimizers.SGD().setup(_TwoDeep())),
               len(twice), tmp_path, CostMonitor())
    step, expected = stepper(True)
    opt = chainer.optimizers.SGD().setup(_TwoDeep())
    for _ in twice:
        step(opt)
    assert expected[0] != expected[2]
    assert [e['cost/flops'] for e in log] == expected


class _GanUpdater(training.StandardUpdater):
    """Chainer's DCGAN example's updater, its models made small: both
    networks' forward passes run in update_core, before the updates."""

    def __init__(self):
        self.gen = chainer.Sequential(L.Linear(4, 16), F.relu,
                                      L.Linear(16, 20), F.sigmoid)
        self.dis = chainer.Sequential(L.Linear(20, 16), F.leaky_relu,
                                      L.Linear(16, 1))
        data = [numpy.ones(20, numpy.float32)] * 64
        super(_GanUpdater, self).__init__(
            chainer.iterators.SerialIterator(data, 8),
            {'gen': chainer.optimizers.Adam().setup(self.gen),
             'dis': chainer.optimizers.Adam().setup(self.dis)})

    def loss_dis(self, dis, y_fake, y_real):
        return (F.sum(F.softplus(-y_real)) + F.sum(F.softplus(y_fake))) / 8

    def loss_gen(self, gen, y_fake):
        return F.sum(F.softplus(-y_fake)) / 8

    def update_core(self):
        batch = self.get_iterator('main').next()
        x_real = chainer.Variable(self.converter(batch)) / 255.
        y_real = self.dis(x_real)
        x_fake = self.gen(numpy.ones((len(batch), 4), numpy.float32))
        y_fake = self.dis(x_fake)
        self.get_optimizer('dis').update(self.loss_dis, self.dis, y_fake,
                                         y_real)
        self.get_optimizer('gen').update(self.loss_gen, self.gen, y_fake)


def test_a_gan_updater_s_own_forward_passes_are_costed(tmp_path):
    # the forward passes made before the updates, outside them, are in
    # the step as a fresh hook around it counts it, at every step
    trainer = training.Trainer(_GanUpdater(), (4, 'iteration'),
                               out=str(tmp_path))
    trainer.extend(CostMonitor(memory=True))
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    caught = _warnings_of(trainer)
    fresh = _GanUpdater()
    expected = []
    for _ in range(4):
        with ComputationalCostHook(fma_1flop=False) as hook:
            fresh.update()
        expected.append(hook.total_report['flops'])
    assert [e['cost/flops'] for e in log.log] == expected
    # no memory peak for such steps, and one warning that says so
    assert not any('cost/memory_peak' in e for e in log.log)
    assert [str(w.message) for w in caught if str(w.message).startswith(
        'CostMonitor: the updater')] == [
        'CostMonitor: the updater calls Chainer functions outside '
        'optimizer.update (forward passes it runs itself): they are costed '
        'one by one as they run; cost/memory_peak, cost/comm_bytes and '
        'cost/predicted_time are not reported for its steps']


def _fresh_steps(updater, n, fma_1flop=False):
    """The FLOPs of ``n`` steps of ``updater``, a fresh hook around each
    (the oracle of the updaters below)."""
    flops = []
    for _ in range(n):
        with ComputationalCostHook(fma_1flop=fma_1flop) as hook:
            updater.update()
        flops.append(hook.total_report['flops'])
    return flops


class _Both(training.StandardUpdater):
    """An updater whose step updates optimizer 'main' with a loss function
    that first updates optimizer 'inner' (an update inside another's loss
    function)."""

    def __init__(self):
        super(_Both, self).__init__(
            chainer.iterators.SerialIterator([0], 1), {
                'main': chainer.optimizers.SGD().setup(SumLinear()),
                'inner': chainer.optimizers.SGD().setup(SumLinear())})

    def update_core(self):
        inner = self.get_optimizer('inner')
        main = self.get_optimizer('main')

        def loss(x):
            inner.update(inner.target, X)
            return main.target(x)
        main.update(loss, X)


class _Alternating(training.StandardUpdater):
    """An updater whose optimizer 'main' is one of two in turn (each of its
    own SumLinear), as get_all_optimizers tells."""

    def __init__(self):
        self.pair = [chainer.optimizers.SGD().setup(SumLinear())
                     for _ in range(2)]
        super(_Alternating, self).__init__(
            chainer.iterators.SerialIterator([0], 1), self.pair[0])

    def get_all_optimizers(self):
        return {'main': self.pair[self.iteration % 2]}

    def update_core(self):
        opt = self.get_all_optimizers()['main']
        # SumLinear's forward less its report (the trainer knows the
        # first model only)
        opt.update(lambda x: F.sum(opt.target.lin(F.reshape(x, (-1, 4)))),
                   X)


def test_an_optimizer_that_changes_between_iterations_is_the_one_updated(
        tmp_path):
    # the monitor's wrapper of the first optimizer must not stand in for
    # the second's update
    updater = _Alternating()
    log = _run(updater, 4, tmp_path, CostMonitor())
    assert [opt.t for opt in updater.pair] == [2, 2]
    assert [e['cost/flops'] for e in log] == [2055] * 4  # SumLinear's step


class _BothOddDiffers(_Both):
    """_Both, whose outer loss is doubled on odd iterations: a step that
    differs from the costed one after its inner update ran."""

    def update_core(self):
        inner = self.get_optimizer('inner')
        main = self.get_optimizer('main')
        odd = self.iteration % 2 == 1

        def loss(x):
            inner.update(inner.target, X)
            y = main.target(x)
            return y * 2 if odd else y
        main.update(loss, X)


@pytest.mark.parametrize('fma_1flop', [False, True])
def test_an_update_inside_a_step_that_differs(tmp_path, fma_1flop):
    # A step that differs is costed call by call: the inner update's own
    # update phase (SGD on 8 parameters, no function call) was left out
    updater = _BothOddDiffers()
    log = _run(updater, 4, tmp_path, CostMonitor(fma_1flop=fma_1flop))
    fresh = _fresh_steps(_BothOddDiffers(), 4, fma_1flop)
    key = 'cost/flops_fma_1flop' if fma_1flop else 'cost/flops'
    assert [e[key] for e in log] == fresh
    assert fresh[0] != fresh[1] == fresh[3]


class _Sometimes(training.StandardUpdater):
    """An updater of one SumLinear: from the second iteration, every other
    step runs one more forward pass of its own before the update
    (``extra``), or (``bare``) runs forward and backward itself and calls
    ``update()`` without a loss function."""

    def __init__(self, kind):
        self.kind = kind
        super(_Sometimes, self).__init__(
            chainer.iterators.SerialIterator([0], 1),
            chainer.optimizers.SGD().setup(SumLinear()))

    def update_core(self):
        opt = self.get_optimizer('main')
        odd = self.iteration % 2 == 1
        if self.kind == 'extra':
            if odd:
                opt.target(X)
            opt.update(opt.target, X)
        elif odd or self.iteration > 1:
            opt.target.cleargrads()
            opt.target(X).backward()
            opt.update()
        else:
            opt.update(opt.target, X)


@pytest.mark.parametrize('kind', ['extra', 'bare'])
def test_calls_outside_the_updates_are_costed_from_any_iteration_on(
        tmp_path, kind):
    # The first iteration makes no call outside the update: the calls of
    # later ones were left out for good (1159 logged where a fresh hook
    # counts 1671; a bare update() costed as its update alone, 144)
    log = _run(_Sometimes(kind), 4, tmp_path, CostMonitor())
    fresh = _fresh_steps(_Sometimes(kind), 4)
    assert [e['cost/flops'] for e in log] == fresh
    # SumLinear's step 2055; its forward pass alone (DETAILS.md, no FMA):
    # the Linear 64 * 2 * (2 * 4 - 1) = 896, the sum 128 - 1 = 127: 1023
    if kind == 'extra':
        assert fresh == [2055, 2055 + 1023, 2055, 2055 + 1023]
    else:
        assert fresh == [2055] * 4


def test_an_update_inside_another_s_loss_function(tmp_path):
    # The outer update's figures hold the inner one's calls, as a fresh
    # hook around the step counts them: 2 x 2055, each SumLinear step's
    # (the inner update's figures were added again: 6165), and the
    # training goes on
    log = _run(_Both(), 3, tmp_path, CostMonitor())
    fresh = _fresh_steps(_Both(), 3)
    assert [e['cost/flops'] for e in log] == fresh == [4110] * 3


class _BareInnerOn(_Both):
    """_Both, whose loss function updates 'inner' without a loss function
    (its gradient set once: an update phase, no function call) in the
    steps ``when`` (0 is the first) only."""

    def __init__(self, when):
        super(_BareInnerOn, self).__init__()
        self.when = when
        self.get_optimizer('inner').target.lin.W.grad = numpy.ones(
            (2, 4), 'f')

    def update_core(self):
        inner = self.get_optimizer('inner')
        main = self.get_optimizer('main')
        now = self.iteration in self.when

        def loss(x):
            if now:
                inner.update()
            return main.target(x)
        main.update(loss, X)


@pytest.mark.parametrize('when, flops, fma_1flop', [
    # SumLinear's step 2055; SGD on its 8 weights, 2 FLOPs an element
    # without FMA (DETAILS.md, SGDRule): 2055 + 16 = 2071
    ({1, 3}, [2055, 2071, 2055, 2071], False),
    ({0, 2}, [2071, 2055, 2071, 2055], False),
    # a multiply-add as 1: LinearFunction 64*2*4 = 512, Sum 127,
    # LinearGradWeight 2*4*64 = 512, SGD 8: 1159; its inner update 8 more
    ({1, 3}, [1159, 1167, 1159, 1167], True),
    # the costed step with it, the next without: its 8 taken off
    ({0, 2}, [1167, 1159, 1167, 1159], True),
])
def test_an_update_without_a_loss_inside_some_steps_only(tmp_path, when,
                                                         flops, fma_1flop):
    # no function call tells the steps apart: they logged the costed
    # step's figure (the inner update's in every step, or in none)
    log = _run(_BareInnerOn(when), 4, tmp_path,
               CostMonitor(fma_1flop=fma_1flop))
    key = 'cost/flops_fma_1flop' if fma_1flop else 'cost/flops'
    assert [e[key] for e in log] == flops
    assert _fresh_steps(_BareInnerOn(when), 4, fma_1flop) == flops


class _Two(training.StandardUpdater):
    """SumLinear 'main' updated, then SumLinear 'other': two keys a step."""

    def __init__(self):
        super(_Two, self).__init__(
            chainer.iterators.SerialIterator([0], 1), {
                name: chainer.optimizers.SGD().setup(SumLinear())
                for name in ('main', 'other')})

    def update_core(self):
        for name in ('main', 'other'):
            opt = self.get_optimizer(name)
            opt.update(opt.target, X)


@pytest.mark.parametrize('limit, flops', [(16, 4110), (1, None)])
def test_a_step_with_an_update_past_the_limit_is_not_costed(tmp_path, limit,
                                                            flops):
    # SumLinear's step 2055 each; past limit=1 (the second key), the step
    # has one update uncosted: no figure, not the first update's
    log = _run(_Two(), 2, tmp_path, CostMonitor(limit=limit))
    assert [e.get('cost/flops') for e in log] == [flops, flops]


def test_a_step_past_the_limit_keeps_its_measured_time(
        tmp_path, quarter_second_steps):
    # no figures for the uncosted step, but its time is measured: 0.25 s
    log = _run(_Two(), 2, tmp_path,
               CostMonitor(limit=1, calibration=literal_calibration()))
    assert [(e.get('cost/flops'), e.get('cost/predicted_time'),
             e.get('cost/time')) for e in log] == [(None, None, 0.25)] * 2


def test_one_optimizer_under_two_names_is_wrapped_once(tmp_path):
    # its update was wrapped under each name, a wrapper more a step, and
    # one was left on it after the training (100 steps took 7.7 s)
    opt = chainer.optimizers.SGD().setup(SumLinear())
    updater = training.StandardUpdater(
        chainer.iterators.SerialIterator(list(X), BATCH),
        {'main': opt, 'alias': opt})
    log = _run(updater, 3, tmp_path, CostMonitor())
    assert [e['cost/flops'] for e in log] == [2055] * 3  # SumLinear's step
    assert 'update' not in vars(opt)


class _SecondFailsOnce(_Both):
    """_Both's two optimizers updated one after the other, the second's
    loss function raising in the second step, which the updater catches
    and goes on."""

    def update_core(self):
        first = self.iteration == 1
        self.get_optimizer('inner').update(self.get_optimizer('inner').target,
                                           X)
        main = self.get_optimizer('main')

        def loss(x):
            if first:
                raise RuntimeError('skipped')
            return main.target(x)
        try:
            main.update(loss, X)
        except RuntimeError:
            pass


def test_a_step_whose_later_update_fails_is_not_costed(tmp_path):
    # it logged 2055, the first update's figure, as the step's
    log = _run(_SecondFailsOnce(), 3, tmp_path, CostMonitor())
    assert [e.get('cost/flops') for e in log] == [4110, None, 4110]


class _OtherLeaf(training.StandardUpdater):
    """SumLinear 'main', whose loss adds another one's (a Linear(4, 2,
    nobias) of the rows, summed) that no optimizer updates: main's update
    clears main's gradients only, so the backward pass adds to the
    gradient the other's weight holds, except in the steps ``clear``
    lists, whose updater clears it first."""

    def __init__(self, clear):
        super(_OtherLeaf, self).__init__(
            chainer.iterators.SerialIterator([0], 1),
            chainer.optimizers.SGD().setup(SumLinear()))
        self.other = L.Linear(4, 2, nobias=True)
        self.clear = clear

    def update_core(self):
        if self.iteration in self.clear:
            self.other.cleargrads()
        main = self.get_optimizer('main')
        main.update(lambda x: main.target(x) + F.sum(
            self.other(F.reshape(x, (BATCH, 4)))), X)


@pytest.mark.parametrize('options', [
    {}, {'memory': True}, {'fma_1flop': True},
    {'calibration': literal_calibration()}])
def test_a_gradient_held_by_a_leaf_outside_the_update(tmp_path, options):
    # The same calls at the same shapes: the steps whose backward adds to
    # the other's held gradient logged the first step's figure (a GAN's
    # generator reaching the gradients of a discriminator updated before).
    # SumLinear's step on 64 rows 2055 (see sum_linear_flops), the other's
    # without SGD's 16: 2039; their sum's Add, 1: 4095.  A step whose
    # backward adds to the other's weight gradient (2 x 4): 4095 + 8 = 4103.
    flops = [4095, 4103, 4095, 4103, 4103, 4095]
    clear = {0, 2, 5}  # (a Linear's weight is made with a gradient)
    log = _run(_OtherLeaf(clear), 6, tmp_path, CostMonitor(**options))
    key = 'cost/flops_fma_1flop' if options.get('fma_1flop') else \
        'cost/flops'
    if options.get('fma_1flop'):
        # multiply-adds as 1: LinearFunction 64 x 2 x (2 x 4 - 1) = 896
        # becomes 64 x 2 x 4 = 512, LinearGradWeight 2 x 4 x (2 x 64 - 1)
        # = 1016 becomes 512, in both Linears; SGD's 16 becomes 8: 1784
        flops = [f - 1784 for f in flops]
    assert [e[key] for e in log] == flops
    assert _fresh_steps(_OtherLeaf(clear), 6, 'fma_1flop' in options) == \
        flops


class _CastTo(training.StandardUpdater):
    """SumLinear's step whose Linear output is cast to a NumPy type given
    as a class (``F.cast(h, numpy.float16)``), float16 on odd steps and
    float32 (no cast: the same dtype) on even ones: equal shapes."""

    def __init__(self):
        super(_CastTo, self).__init__(
            chainer.iterators.SerialIterator([0], 1),
            chainer.optimizers.SGD().setup(SumLinear()))

    def update_core(self):
        opt = self.get_optimizer('main')
        to = numpy.float16 if self.iteration % 2 else numpy.float32

        def loss(x):
            h = opt.target.lin(F.reshape(x, (-1, 4)))
            return F.sum(F.cast(F.cast(h, to), numpy.float32))
        opt.update(loss, X)


def test_a_setting_that_is_a_class_is_compared(tmp_path):
    # Cast's target type (a class) was no setting to compare: the float16
    # steps logged the float32 step's figure
    log = _run(_CastTo(), 4, tmp_path, CostMonitor())
    fresh = _fresh_steps(_CastTo(), 4)
    assert [e['cost/flops'] for e in log] == fresh
    assert fresh[0] != fresh[1] and fresh[0] == fresh[2]


class _Mode(enum.Enum):
    SMOOTH = 1
    STRAIGHT = 2


class _Act(chainer.FunctionNode):
    """ReLU forward; a backward that is a sigmoid times the gradient in
    mode SMOOTH, the gradient times 1 in mode STRAIGHT."""

    def __init__(self, mode):
        self.mode = mode

    def forward(self, inputs):
        self.retain_inputs((0,))
        return numpy.maximum(inputs[0], 0),

    def backward(self, indexes, grad_outputs):
        x, = self.get_retained_inputs()
        if self.mode is _Mode.SMOOTH:
            return F.sigmoid(x) * grad_outputs[0],
        return grad_outputs[0] * 1.0,


def _tanh_twice(x):
    return F.tanh(F.tanh(x))


def _tanh_apart(x):
    F.tanh(x)
    return F.tanh(x)


class _HeldSetting(_CastTo):
    """SumLinear's step whose Linear output goes through a node holding a
    setting that alternates at equal shapes: an Enum member (_Act's mode)
    or, with ``forget``, the function F.forget recomputes in the backward
    pass (two tanh in a chain, or two tanh of the input, the first
    unused: the same forward calls, another backward pass)."""

    def __init__(self, forget):
        super(_HeldSetting, self).__init__()  # (its SumLinear and SGD)
        self.forget = forget

    def update_core(self):
        opt = self.get_optimizer('main')
        odd = self.iteration % 2

        def loss(x):
            h = opt.target.lin(F.reshape(x, (-1, 4)))
            if self.forget:
                h = F.forget(_tanh_twice if odd else _tanh_apart, h)
            else:
                h, = _Act(_Mode.SMOOTH if odd else _Mode.STRAIGHT).apply(
                    (h,))
            return F.sum(h)
        opt.update(loss, X)


@pytest.mark.filterwarnings('ignore:`test_extensions._Act` is not yet')
@pytest.mark.parametrize('forget', [False, True])
def test_a_held_enum_or_function_is_compared(tmp_path, forget):
    # an Enum member, or a function, was no setting: the steps whose
    # backward differs logged the costed step's figure
    log = _run(_HeldSetting(forget), 4, tmp_path, CostMonitor())
    fresh = _fresh_steps(_HeldSetting(forget), 4)
    assert [e['cost/flops'] for e in log] == fresh
    assert fresh[0] != fresh[1] and fresh[0] == fresh[2]


class _TwoPassSGD(chainer.optimizers.SGD):
    """SGD whose update runs the loss function twice, as SAM does: a
    forward and backward pass, then the update's own."""

    def update(self, lossfun=None, *args, **kwds):
        loss = lossfun(*args, **kwds)
        self.target.cleargrads()
        loss.backward()
        return super(_TwoPassSGD, self).update(lossfun, *args, **kwds)


def test_an_update_that_runs_its_loss_function_twice(tmp_path):
    # the steps of _HeldSetting(forget=True) with two passes each: a step
    # that differs counted its second forward pass twice (once by the
    # check's calls, once by the hooks entered after the first pass)
    def updater():
        up = _HeldSetting(forget=True)
        up._optimizers['main'] = _TwoPassSGD().setup(SumLinear())
        return up
    log = _run(updater(), 4, tmp_path, CostMonitor())
    fresh = _fresh_steps(updater(), 4)
    assert [e['cost/flops'] for e in log] == fresh
    assert fresh[0] != fresh[1] and fresh[0] == fresh[2]


def test_warnings_as_errors_stop_no_training(tmp_path):
    # -W error: _Act, which the hook cannot cost, made the monitor's own
    # hooks raise their warning on exit, from inside the step (the
    # training without the monitor runs)
    updater = _HeldSetting(forget=False)
    trainer = training.Trainer(updater, (3, 'iteration'),
                               out=str(tmp_path))
    trainer.extend(CostMonitor())
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        trainer.run()
    assert updater.iteration == 3


class _ShapeAList(object):
    """An argument whose ``shape`` is a list (and no array)."""

    shape = [1]
    dtype = numpy.dtype('f')


def test_an_argument_whose_shape_is_no_key_is_not_costed(tmp_path):
    # TypeError: unhashable type: 'list', in the middle of the training
    opt = chainer.optimizers.SGD().setup(SumLinear())
    updater = training.StandardUpdater(
        chainer.iterators.SerialIterator([0], 1), opt)
    updater.update_core = lambda: opt.update(
        lambda a: opt.target(X), _ShapeAList())
    with pytest.warns(ReportWarning, match="an argument of the update of "
                      "optimizer 'main' has a shape or dtype that cannot "
                      'be a key: its steps are not costed'):
        trainer = training.Trainer(updater, (2, 'iteration'),
                                   out=str(tmp_path))
        trainer.extend(CostMonitor())
        trainer.run()
    assert opt.t == 2


def test_the_updaters_own_update_core_is_let_go_after_the_training(
        tmp_path):
    # a monitor the user keeps held the update_core it had replaced, and
    # through it the model
    monitor = CostMonitor()
    opt = chainer.optimizers.SGD().setup(SumLinear())
    updater = training.StandardUpdater(
        chainer.iterators.SerialIterator(list(X), BATCH), opt)
    model = weakref.ref(opt.target)
    updater.update_core = functools.partial(updater.update_core)
    _run(updater, 2, tmp_path, monitor)
    del opt, updater
    gc.collect()
    assert model() is None


class _NWindow(chainer.Chain):
    """(x (1, 6, 1, 1), n (1,)) -> the sum of a local response
    normalisation of x times a weight, its window n[0] as the batch gives
    it: a NumPy integer, or (``python_after``) a Python int after the
    first step."""

    def __init__(self, python_after=False):
        super(_NWindow, self).__init__()
        with self.init_scope():
            self.w = chainer.Parameter(numpy.full((1, 6, 1, 1), 0.5, 'f'))
        self.python_after = python_after
        self.steps = 0

    def forward(self, x, n):
        n = n[0]
        if self.python_after and self.steps:
            n = int(n)
        self.steps += 1
        return F.sum(F.local_response_normalization(x * self.w, n=n))


@pytest.mark.parametrize('python_after', [False, True])
def test_a_setting_given_as_a_numpy_integer(tmp_path, python_after):
    # Windows 5, 5 (costed), 3, 5, 3.  The forward LRN (DETAILS.md, no
    # FMA: 5|x| + A|x|/C, |x| = C = 6): n = 5, A = 2*(5+4) = 18: 48;
    # n = 3, A = 2*5 = 10: 40.
    x = numpy.ones((1, 6, 1, 1), numpy.float32)
    windows = [5, 5, 3, 5, 3]
    batches = [(x, numpy.array([n], numpy.int64)) for n in windows]
    log = _train(_NWindow(python_after), batches, CostMonitor(), tmp_path)
    expected = [f for f, _ in _fresh(
        lambda: _NWindow(python_after), batches)]
    assert expected[0] - expected[2] > 48 - 40  # the backward's too
    assert [e['cost/flops'] for e in log] == expected


class _Floor(chainer.function_node.FunctionNode):
    """y = max(x, lo), ``lo`` a number or an array of x's shape (a
    setting of the node); the gradient passed through as it is.  No
    built-in calculator."""

    def __init__(self, lo):
        self.lo = lo

    def forward(self, inputs):
        x, = inputs
        return numpy.maximum(x, self.lo).astype(x.dtype),

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0],


def _floor_cost(func, in_data, **kwargs):
    # one comparison per element; the bound read too when it is an array
    x, = in_data
    return x.size, x.nbytes + getattr(func.lo, 'nbytes', 0), x.nbytes, {}


class _Flooring(chainer.Chain):
    """(x (2, 2), lo) -> the sum of Linear(2, 2)(x) floored at lo."""

    def __init__(self):
        super(_Flooring, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(2, 2, initialW=0.5, nobias=True)

    def forward(self, x, lo):
        h, = _Floor(lo).apply((self.lin(x),))
        return F.sum(h)


def test_a_setting_given_as_a_number_then_as_an_array(tmp_path,
                                                      monkeypatch):
    # The first two steps floor at 0.0, the next three at a (2, 2) array
    # of zeros, a new one each step: the node's first setting a float,
    # then an array (whose shape and dtype are what is compared, never
    # the array itself)
    monkeypatch.setitem(calculators, _Floor, _floor_cost)
    x = numpy.ones((2, 2), numpy.float32)
    batches = [(x, lo) for lo in [0.0, 0.0] + [
        numpy.zeros((2, 2), numpy.float32) for _ in range(3)]]
    log = _train(_Flooring(), batches, CostMonitor(), tmp_path)
    expected = [f for f, _ in _fresh(_Flooring, batches)]
    # a multiply-add as 2 (DETAILS.md): LinearFunction 2 rows * 2 out *
    # (2*2 in - 1) = 12; the floor 4; Sum 4 - 1 = 3; BroadcastTo 0;
    # LinearGradWeight 2 * 2 * (2*2 rows - 1) = 12; SGDRule 2 * 4 = 8
    assert expected == [12 + 4 + 3 + 12 + 8] * 5
    assert [e['cost/flops'] for e in log] == expected


class _MaybeFloor(_Floor):
    """_Floor whose bound is an attribute only when there is one: with
    none, the node has no ``lo`` and passes x through."""

    def __init__(self, lo=None):
        if lo is not None:
            self.lo = lo

    def forward(self, inputs):
        if not hasattr(self, 'lo'):
            return inputs[0].copy(),
        return super(_MaybeFloor, self).forward(inputs)


def _maybe_floor_cost(func, in_data, **kwargs):
    # a comparison per element when bounded, nothing to compare when not
    x, = in_data
    return (x.size if hasattr(func, 'lo') else 0), x.nbytes, x.nbytes, {}


class _MaybeFlooring(chainer.Chain):
    """(x (2, 2), bounded (1,)) -> the sum of Linear(2, 2)(x), floored at
    0.0 when bounded[0] (the node then has a ``lo``), else as it is."""

    def __init__(self):
        super(_MaybeFlooring, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(2, 2, initialW=0.5, nobias=True)

    def forward(self, x, bounded):
        h, = _MaybeFloor(0.0 if bounded[0] else None).apply((self.lin(x),))
        return F.sum(h)


def test_a_node_without_a_setting_its_costed_node_had(tmp_path,
                                                      monkeypatch):
    # The costed step's node has ``lo``, the third's and fifth's none: the
    # comparison of its settings fails to read one, and that step is
    # costed as other work, not a crash in the middle of the training
    monkeypatch.setitem(calculators, _MaybeFloor, _maybe_floor_cost)
    x = numpy.ones((2, 2), numpy.float32)
    batches = [(x, numpy.array([b])) for b in (1, 1, 0, 1, 0)]
    log = _train(_MaybeFlooring(), batches, CostMonitor(), tmp_path)
    # as _Flooring's (test_a_setting_given_as_a_number_then_as_an_array):
    # 12 + 4 + 3 + 12 + 8 = 39 bounded; 39 - 4 = 35 without the floor
    assert [e['cost/flops'] for e in log] == [39, 39, 35, 39, 35]


class _CountingNamed(_Counting):
    """_Counting named as it is told."""

    def __init__(self, name):
        super(_CountingNamed, self).__init__()
        self.name = name


def test_the_users_hooks_named_as_the_monitors_stay_and_see_every_call(
        tmp_path, monkeypatch):
    # The monitor puts its hooks in the thread's function hooks under
    # their names, or name-<k> when the user's hook has that name
    monkeypatch.setitem(calculators, _MaybeFloor, _maybe_floor_cost)
    x = numpy.ones((2, 2), numpy.float32)
    batches = [(x, numpy.array([1]))] * 3
    mine = [_CountingNamed(cm_extensions._Calls.name),
            _CountingNamed(cm_extensions._Outside.name)]
    with mine[0], mine[1]:
        log = _train(_MaybeFlooring(), batches, CostMonitor(), tmp_path)
        assert list(chainer.get_function_hooks().values()) == mine
    # 5 calls a step: LinearFunction, _MaybeFloor and Sum forward, then
    # BroadcastTo (Sum's gradient) and LinearGradWeight; 3 steps
    assert [h.calls for h in mine] == [15, 15]
    assert [e['cost/flops'] for e in log] == [39, 39, 39]


class _Double(chainer.function_node.FunctionNode):
    """y = 2 x, a function with no built-in calculator."""

    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0] * 2,


class _Doubling(chainer.Chain):
    """(x (2, 2), k (1,)) -> the sum of Linear(2, 2)(x) doubled k[0]
    times."""

    def __init__(self):
        super(_Doubling, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(2, 2, initialW=0.5, nobias=True)

    def forward(self, x, k):
        h = self.lin(x)
        for _ in range(int(k[0])):
            h, = _Double().apply((h,))
        return F.sum(h)


def _double_cost(func, in_data, **kwargs):
    x, = in_data
    return x.size, x.nbytes, x.nbytes, {}


def test_a_calculator_registered_between_trainings(tmp_path, monkeypatch):
    # Steps 3 and 5 double twice: other work, costed call by call, with
    # the calculator registered after a first training looked _Double up
    x = numpy.ones((2, 2), numpy.float32)
    batches = [(x, numpy.array([k], numpy.int32)) for k in [1, 1, 2, 1, 2]]
    _train(_Doubling(), batches, CostMonitor(), tmp_path / 'before')
    monkeypatch.setitem(calculators, _Double, _double_cost)
    log = _train(_Doubling(), batches, CostMonitor(), tmp_path / 'after')
    expected = [f for f, _ in _fresh(_Doubling, batches)]
    assert expected[2] - expected[0] >= 4  # a doubling of 4 elements more
    assert [e['cost/flops'] for e in log] == expected


def _double_cost_of_output(func, in_data, **kwargs):
    # FLOPs from the output's shape, which the hook gives
    elements = numpy.prod(kwargs['out_shapes'][0])
    return int(elements), 4 * elements, 4 * elements, {}


def test_a_calculator_reading_the_output_shapes_in_a_step_with_other_work(
        tmp_path, monkeypatch):
    # Steps 3 and 5 double twice: counted call by call, the calculator
    # given the output shapes as the hook gives them (it raised without
    # them, and those calls counted 0)
    monkeypatch.setitem(calculators, _Double, _double_cost_of_output)
    x = numpy.ones((2, 2), numpy.float32)
    batches = [(x, numpy.array([k], numpy.int32)) for k in [1, 1, 2, 1, 2]]
    log = _train(_Doubling(), batches, CostMonitor(), tmp_path)
    expected = [f for f, _ in _fresh(_Doubling, batches)]
    # the second doubling: 2*2 elements forward, 2*2 in its backward (a
    # MulConstant)
    assert expected[2] - expected[0] >= 4 + 4
    assert [e['cost/flops'] for e in log] == expected


class _Split(chainer.function_node.FunctionNode):
    """x (n, m) -> (2 x, the sum of each row of x (n, 1)): two outputs,
    with no built-in calculator."""

    def forward(self, inputs):
        x, = inputs
        return x * 2, x.sum(axis=1, keepdims=True)

    def backward(self, indexes, grad_outputs):
        gy, gs = grad_outputs
        return gy * 2 + F.broadcast_to(gs, gy.shape),


class _Splitting(chainer.Chain):
    """(x (2, 2), k (1,)) -> the sum of Linear(2, 2)(x) put through
    _Split k[0] times, its two outputs added back each time."""

    def __init__(self):
        super(_Splitting, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(2, 2, initialW=0.5, nobias=True)

    def forward(self, x, k):
        h = self.lin(x)
        for _ in range(int(k[0])):
            y, s = _Split().apply((h,))
            h = y + s
        return F.sum(h)


def _split_cost_of_outputs(func, in_data, **kwargs):
    # FLOPs from both outputs' shapes, which the hook gives
    out, sums = kwargs['out_shapes']
    elements = int(numpy.prod(out) + numpy.prod(sums))
    return elements, 4 * elements, 4 * elements, {}


def test_a_calculator_reading_the_second_output_s_shape(tmp_path,
                                                        monkeypatch):
    # Steps 3 and 5 split twice: other work, counted call by call, the
    # calculator given the shape of every output as the hook gives them
    monkeypatch.setitem(calculators, _Split, _split_cost_of_outputs)
    x = numpy.ones((2, 2), numpy.float32)
    batches = [(x, numpy.array([k], numpy.int32)) for k in [1, 1, 2, 1, 2]]
    log = _train(_Splitting(), batches, CostMonitor(), tmp_path)
    expected = [f for f, _ in _fresh(_Splitting, batches)]
    # the second split: 2*2 + 2*1 = 6 elements of its outputs, more in
    # its addition and backward
    assert expected[2] - expected[0] >= 6
    assert [e['cost/flops'] for e in log] == expected


class _FirstPass(chainer.Chain):
    """(x (2, 2), k (1,)) -> the sum of Linear(2, 2)(x); its first call
    doubles that output first: one-off work in the first forward pass,
    as a model that initialises itself from its first batch."""

    def __init__(self):
        super(_FirstPass, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(2, 2, initialW=0.5, nobias=True)
        self.started = False

    def forward(self, x, k):
        h = self.lin(x)
        if not self.started:
            self.started = True
            h = h * 2
        return F.sum(h)


@pytest.mark.parametrize('memory', [False, True])
def test_one_off_work_in_the_first_forward_pass(tmp_path, monkeypatch,
                                                memory):
    runs = counted_costings(monkeypatch)
    x = numpy.ones((2, 2), numpy.float32)
    batches = [(x, numpy.array([0], numpy.int32))] * 5
    steps = iter(batches)
    opt = chainer.optimizers.SGD().setup(_FirstPass())
    trainer = training.Trainer(
        _Calling(lambda o: o.update(o.target, *next(steps)), opt),
        (len(batches), 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor(memory=memory))
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    assert _warnings_of(trainer) == []
    flops = [e['cost/flops'] for e in log.log]
    assert flops == [f for f, _ in _fresh(_FirstPass, batches)]
    # the doubling: MulConstant on 2*2 elements and its gradient, 4 + 4
    assert flops[0] - flops[1] == 8
    # Iteration 1 costed; without memory, iteration 2 checked against it,
    # other work (costed from the end of its forward pass), and iteration
    # 3 costed as the reference; with memory, iteration 2 costed again
    # (the reference).  The others are checked.
    assert len(runs) == 3 if not memory else 2


class _SecondPass(chainer.Chain):
    """As :class:`_FirstPass`, its one-off doubling in its call ``at``
    (the second by default: with memory=True, where iteration 1 is costed
    again the next time, in the step that becomes its key's reference)."""

    def __init__(self, at=2):
        super(_SecondPass, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(2, 2, initialW=0.5, nobias=True)
        self.calls = 0
        self.at = at

    def forward(self, x, k):
        h = self.lin(x)
        self.calls += 1
        if self.calls == self.at:
            h = h * 2
        return F.sum(h)


def test_a_reference_no_step_matched_is_replaced_once(tmp_path,
                                                      monkeypatch):
    runs = counted_costings(monkeypatch)
    x = numpy.ones((2, 2), numpy.float32)
    batches = [(x, numpy.array([0], numpy.int32))] * 6
    log = _train(_SecondPass(), batches, CostMonitor(memory=True),
                 tmp_path)
    flops = [e['cost/flops'] for e in log]
    assert flops == [f for f, _ in _fresh(_SecondPass, batches)]
    # the doubling: MulConstant on 2*2 elements and its gradient, 4 + 4
    assert flops[1] - flops[0] == 8
    # Iteration 1 costed, iteration 2 costed again (the reference), which
    # iteration 3 does not match: costed from the end of its forward pass,
    # without a memory peak; iteration 4 costed as the reference, which 5
    # and 6 match.
    assert len(runs) == 4
    peaks = [e.get('cost/memory_peak') for e in log]
    assert peaks[2] is None
    assert None not in peaks[:2] + peaks[3:]
    assert len(set(peaks[3:])) == 1


def test_a_reference_a_step_matched_is_kept(tmp_path, monkeypatch):
    runs = counted_costings(monkeypatch)
    x = numpy.ones((2, 2), numpy.float32)
    batches = [(x, numpy.array([0], numpy.int32))] * 5
    log = _train(_SecondPass(at=3), batches, CostMonitor(), tmp_path)
    assert [e['cost/flops'] for e in log] == [
        f for f, _ in _fresh(lambda: _SecondPass(at=3), batches)]
    # Iteration 1 costed and matched by 2; 3 does other work (costed from
    # the end of its forward pass); 4 and 5 match iteration 1 again.
    assert len(runs) == 2


class _TwoOutputs(chainer.Chain):
    """(x (2, 4), k (1,)) -> the sum of the cell state c (k[0] == 0) or
    the output h of an LSTM cell (F.lstm, zero cell state) of a
    Linear(4, 8) of x: the same forward calls, each output's own
    backward pass."""

    def __init__(self):
        super(_TwoOutputs, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(4, 8, initialW=0.5, nobias=True)

    def forward(self, x, k):
        c, h = F.lstm(self.xp.zeros((2, 2), 'f'), self.lin(x))
        return F.sum(h if k[0] else c)


@pytest.mark.parametrize('memory', [False, True])
def test_a_step_that_reads_another_output_of_a_node(tmp_path, memory):
    # which output of the LSTM cell the loss reads is in the graph, not in
    # the calls: iteration 2 (h) was taken for iteration 1's step (c), or
    # with memory (iteration 2 costed again) iteration 4 for iteration 2's
    x = numpy.ones((2, 4), numpy.float32)
    batches = [(x, numpy.array([k], numpy.int32)) for k in [0, 1, 1, 0, 1]]
    log = _train(_TwoOutputs(), batches, CostMonitor(memory=memory),
                 tmp_path)
    expected = [f for f, _ in _fresh(_TwoOutputs, batches)]
    assert expected[0] != expected[1]  # the two backward passes
    assert [e['cost/flops'] for e in log] == expected


class _Clipping(chainer.Chain):
    """(x (2, 2), k (1,)) -> the sum of a Linear(2, 4) of x clipped to a
    NumPy float upper bound (as np.percentile gives one) and, when k[0],
    a NumPy float lower bound: None (no bound) otherwise."""

    def __init__(self):
        super(_Clipping, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(2, 4, initialW=0.5, nobias=True)

    def forward(self, x, k):
        low = numpy.float64(-10.0) if k[0] else None
        return F.sum(F.clip(self.lin(x), low, numpy.float64(10.0)))


# (Chainer 6's F.clip takes both bounds, never None)
@pytest.mark.chainer7_only
@pytest.mark.parametrize('flags', [[0, 1, 1, 0, 1], [1, 0, 0, 1, 0]])
def test_a_bound_set_in_one_step_and_not_in_another(tmp_path, monkeypatch,
                                                    flags):
    # a NumPy float setting counted as no setting: a lower bound of None
    # and one of -10.0 were the same setting, whichever came first (the
    # first node of a class seen decides how its nodes are read: none
    # seen before this training)
    monkeypatch.setattr(cm_extensions, '_LAYOUTS', {})
    x = numpy.ones((2, 2), numpy.float32)
    batches = [(x, numpy.array([k], numpy.int32)) for k in flags]
    log = _train(_Clipping(), batches, CostMonitor(), tmp_path)
    expected = [f for f, _ in _fresh(_Clipping, batches)]
    # Clip: one comparison per element for each bound set, |y| = 2*4 = 8
    assert expected[flags.index(1)] - expected[flags.index(0)] == 8
    assert [e['cost/flops'] for e in log] == expected


class _Multi(chainer.Chain):
    """(x (2, 3), t (2, 3)) -> the sigmoid cross entropy of a Linear(3, 3)
    of x, labels -1 ignored: the loss keeps its count of the labels (a
    NumPy integer) on its node."""

    def __init__(self):
        super(_Multi, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(3, 3)

    def forward(self, x, t):
        return F.sigmoid_cross_entropy(self.lin(x), t)


def test_a_count_a_loss_takes_from_the_labels_is_not_a_setting(
        tmp_path, monkeypatch):
    runs = counted_costings(monkeypatch)
    x = numpy.ones((2, 3), numpy.float32)
    labels = [[[0, 1, 1], [1, 0, 1]], [[0, -1, 1], [1, 0, 1]],
              [[-1, -1, 1], [1, -1, 1]], [[0, 1, 1], [-1, -1, -1]]]
    batches = [(x, numpy.array(t, numpy.int32)) for t in labels]
    log = _train(_Multi(), batches, CostMonitor(), tmp_path)
    # the first iteration's step stands for the others
    assert len(runs) == 1
    assert [e['cost/flops'] for e in log] == [
        f for f, _ in _fresh(_Multi, batches)]


class _Offset(chainer.function_node.FunctionNode):
    """y = x + b, or x when the input b holds no array (None)."""

    def forward(self, inputs):
        x, b = inputs
        return (x if b is None else x + b),

    def backward(self, indexes, grad_outputs):
        return grad_outputs[0], None


def _offset_cost(func, in_data, **kwargs):
    x, b = in_data
    if b is None:
        return 0, x.nbytes, x.nbytes, {}
    return x.size, x.nbytes + b.nbytes, x.nbytes, {}


class _Offsetting(chainer.Chain):
    """(x (2, 2), k (1,)) -> the sum of Linear(2, 2)(x) offset by k[0]
    rows of ones (broadcast), or by an input that is None when k[0] is
    0."""

    def __init__(self):
        super(_Offsetting, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(2, 2, initialW=0.5, nobias=True)

    def forward(self, x, k):
        k = int(k[0])
        b = numpy.ones((k, 2), numpy.float32) if k else None
        h, = _Offset().apply((self.lin(x), chainer.Variable(b)))
        return F.sum(h)


@pytest.mark.parametrize('ks', [[0, 0, 1, 0, 2, 2], [1, 1, 0, 1, 0, 2]])
def test_a_call_with_an_input_that_is_none(tmp_path, monkeypatch, ks):
    monkeypatch.setitem(calculators, _Offset, _offset_cost)
    x = numpy.ones((2, 2), numpy.float32)
    batches = [(x, numpy.array([k], numpy.int32)) for k in ks]
    log = _train(_Offsetting(), batches, CostMonitor(), tmp_path)
    expected = [f for f, _ in _fresh(_Offsetting, batches)]
    # the offset's 2*2 = 4 additions, none with no array to add
    assert expected[ks.index(1)] - expected[ks.index(0)] == 4
    assert [e['cost/flops'] for e in log] == expected


def test_a_step_with_an_input_that_is_none_is_not_costed_again(
        tmp_path, monkeypatch):
    monkeypatch.setitem(calculators, _Offset, _offset_cost)
    runs = counted_costings(monkeypatch)
    x = numpy.ones((2, 2), numpy.float32)
    batches = [(x, numpy.array([0], numpy.int32))] * 4
    log = _train(_Offsetting(), batches, CostMonitor(), tmp_path)
    # the first iteration's step stands for the others
    assert len(runs) == 1
    assert [e['cost/flops'] for e in log] == [
        f for f, _ in _fresh(_Offsetting, batches)]


def _forward_graph(lossfun, *args):
    """The nodes and the loss of ``lossfun(*args)`` as CostMonitor's
    check of a step sees them."""
    got = {}
    cm_extensions._forward(
        lossfun, cm_extensions._Calls(None),
        lambda nodes, loss: got.update(nodes=nodes, loss=loss))(*args)
    return got['nodes'], got['loss']


def test_the_graph_check_tells_which_input_is_shared():
    # sum((u + v) * w): inputs u, v of the sum, its output and w of the
    # product, the product's output. (a, a, b) and (a, b, b) share one
    # variable each, as many variables in all, shaped alike: only which
    # input is shared tells them apart
    a, b = [chainer.Variable(numpy.ones((2, 2), numpy.float32))
            for _ in range(2)]

    def lossfun(u, v, w):
        return F.sum((u + v) * w)

    costed = cm_extensions._Graph.of(*_forward_graph(lossfun, a, a, b))
    assert cm_extensions._same_graph(
        *_forward_graph(lossfun, a, a, b), costed)
    assert not cm_extensions._same_graph(
        *_forward_graph(lossfun, a, b, b), costed)
    assert not cm_extensions._same_graph(
        *_forward_graph(lossfun, a, b, a), costed)


class _LateLink(chainer.Chain):
    """(x (3, 4), flag (3,)) -> the sum of a Linear(4, 4) of x, through a
    Linear(None, 2) too when the first flag is set: that link is made at
    its first call, and from then on SGD updates it at every step (with
    the gradient it has), whether the step calls it or not."""

    def __init__(self):
        super(_LateLink, self).__init__()
        with self.init_scope():
            self.l1 = L.Linear(4, 4, initialW=0.5, nobias=True)
            self.l2 = L.Linear(None, 2, initialW=0.5, nobias=True)

    def forward(self, x, flag):
        h = self.l1(x)
        if flag[0]:
            h = self.l2(h)
        return F.sum(h)


# A step of _LateLink, a multiply-add as 2 (DETAILS.md), without l2: the
# Linear 3 x 4 x (2 x 4 - 1) = 84, the sum 3 x 4 - 1 = 11, W's gradient
# 4 x 4 x (2 x 3 - 1) = 80, SGD 2 x 16 = 32: 207.  Through l2: 84, l2
# 3 x 2 x 7 = 42, the sum 5, l2's W gradient 2 x 4 x 5 = 40, its input's
# 3 x 4 x (2 x 2 - 1) = 36, l1's W gradient 80, SGD 2 x (16 + 8) = 48:
# 335.  Without l2 once it is made: 207 + SGD on its 8 weights, 16 = 223.
_LATE_FLAGS = [0, 0, 1, 0, 0]
_LATE_FLOPS = [207, 207, 335, 223, 223]


class _LateLinkSteps(training.StandardUpdater):
    """_LateLink trained with SGD on X (3, 4) of ones and the flags of
    _LATE_FLAGS; ``bare``: the forward and backward passes run here and
    ``update()`` gets no loss function."""

    def __init__(self, bare=False):
        super(_LateLinkSteps, self).__init__(
            chainer.iterators.SerialIterator([0], 1),
            chainer.optimizers.SGD().setup(_LateLink()))
        self.bare = bare

    def update_core(self):
        opt = self.get_optimizer('main')
        x = numpy.ones((3, 4), numpy.float32)
        flag = numpy.full(3, _LATE_FLAGS[self.iteration], numpy.int32)
        if not self.bare:
            opt.update(opt.target, x, flag)
            return
        loss = opt.target(x, flag)
        opt.target.cleargrads()
        loss.backward()
        opt.update()


@pytest.mark.parametrize('bare', [False, True])
@pytest.mark.parametrize('memory', [False, True])
def test_a_link_made_in_a_later_step_joins_the_update_of_the_steps_after(
        tmp_path, bare, memory):
    log = _run(_LateLinkSteps(bare), len(_LATE_FLAGS), tmp_path,
               CostMonitor(memory=memory))
    assert [e['cost/flops'] for e in log] == _LATE_FLOPS


class _BigBatchLink(chainer.Chain):
    """x (n, 4) -> the sum of a Linear(4, 4) of x, and of a Linear(None,
    4) after it for batches of 5: made at the first batch of 5."""

    def __init__(self):
        super(_BigBatchLink, self).__init__()
        with self.init_scope():
            self.l1 = L.Linear(4, 4, initialW=0.5, nobias=True)
            self.l2 = L.Linear(None, 4, initialW=0.5, nobias=True)

    def forward(self, x):
        h = self.l1(x)
        if len(x) == 5:
            h = self.l2(h)
        return F.sum(h)


def test_a_later_key_that_makes_optimizer_state_is_costed_again(tmp_path):
    # Batches of 3, then of 5 from iteration 4, which makes l2 and its
    # Adam state (m and v: 2 x 16 float32 = 128 bytes), alive from then
    # on: one-off work in the first step of that key, as in the first
    # iteration; the steps after it peak 128 bytes lower, as a hook on
    # each finds.
    sizes = [3, 3, 3, 5, 5, 5]

    class Steps(training.StandardUpdater):
        def update_core(self):
            opt = self.get_optimizer('main')
            opt.update(opt.target,
                       numpy.ones((sizes[self.iteration], 4), 'f'))

    def updater():
        return Steps(chainer.iterators.SerialIterator([0], 1),
                     chainer.optimizers.Adam().setup(_BigBatchLink()))

    log = _run(updater(), len(sizes), tmp_path, CostMonitor(memory=True))
    peaks = [e['cost/memory_peak'] for e in log]
    assert peaks[3] - 128 == peaks[4] == peaks[5]
    fresh = updater()
    hooked = []
    for _ in sizes:
        with ComputationalCostHook(fma_1flop=False, memory=True) as hook:
            fresh.update()
        hooked.append(hook.memory_report['peak'])
    assert peaks == hooked


class _TwoModels(training.StandardUpdater):
    """SGD on two models a step, on x (3, 4) of ones: ``'gan'``, a
    Linear(4, 8) generator whose loss runs through a Linear(8, 2000)
    discriminator (whose gradient it makes too), then the discriminator
    on the generator's output (its cleargrads frees that gradient);
    ``'twice'``, a Linear(4, 1000) updated twice; ``'apart'``, Adam on a
    Linear(4, 100), then on a Linear(4, 120)."""

    def __init__(self, layout):
        self.layout = layout
        if layout == 'gan':
            self.gen = L.Linear(4, 8, initialW=0.5, nobias=True)
            self.dis = L.Linear(8, 2000, initialW=0.5, nobias=True)
            opts = {'gen': chainer.optimizers.SGD().setup(self.gen),
                    'dis': chainer.optimizers.SGD().setup(self.dis)}
        elif layout == 'twice':
            self.one = L.Linear(4, 1000, initialW=0.5, nobias=True)
            opts = {'main': chainer.optimizers.SGD().setup(self.one)}
        else:
            self.a = L.Linear(4, 100, initialW=0.5, nobias=True)
            self.b = L.Linear(4, 120, initialW=0.5, nobias=True)
            opts = {'a': chainer.optimizers.Adam().setup(self.a),
                    'b': chainer.optimizers.Adam().setup(self.b)}
        self.x = numpy.ones((3, 4), numpy.float32)
        super(_TwoModels, self).__init__(
            chainer.iterators.SerialIterator([0], 1), opts)

    def updates(self):
        """(optimizer name, loss function) of each update, in order."""
        x = self.x
        if self.layout == 'gan':
            made = []

            def gen_loss():
                made.append(self.gen(x))
                return F.sum(self.dis(made[0]))
            return [('gen', gen_loss),
                    ('dis', lambda: F.sum(self.dis(made[0].array)))]
        if self.layout == 'twice':
            return [('main', lambda: F.sum(self.one(x)))] * 2
        return [('a', lambda: F.sum(self.a(x))),
                ('b', lambda: F.sum(self.b(x)))]

    def update_core(self):
        for name, lossfun in self.updates():
            self.get_optimizer(name).update(lossfun)


@pytest.mark.parametrize('layout', ['gan', 'twice', 'apart'])
def test_the_memory_peak_of_several_updates_is_the_highest_update_s(
        tmp_path, layout):
    # Each update's peak is its own hook's, on the arrays it makes; the
    # step's, the highest (see docs/training_loop.md): never above what
    # a hook around the step finds.  What the first update leaves (the
    # GAN's discriminator gradient, 8 x 2000 float32 = 64000 bytes; the
    # twice-updated model's, 16000) the second's cleargrads frees before
    # its backward pass makes its own: the sum would be far above.  The
    # twice-updated model's highest is the step's; the GAN's is below by
    # what the generator's update leaves and no update frees (its
    # output, kept for the discriminator, and gradient: less than 64000
    # bytes).  Two models apart keep the first's gradient (400 float32,
    # 1600 bytes) beside the second: the step's peak is that much higher
    # in later steps (and by its Adam state, 3200 more, in the first).
    log = _run(_TwoModels(layout), 3, tmp_path, CostMonitor(memory=True))
    peaks = [e['cost/memory_peak'] for e in log]
    each, whole = [], []
    fresh = _TwoModels(layout)
    for _ in range(3):
        highest = 0
        for name, lossfun in fresh.updates():
            with ComputationalCostHook(fma_1flop=False, memory=True) as h:
                fresh.get_optimizer(name).update(lossfun)
            highest = max(highest, h.memory_report['peak'])
        each.append(highest)
    assert peaks == each
    fresh = _TwoModels(layout)
    for _ in range(3):
        with ComputationalCostHook(fma_1flop=False, memory=True) as hook:
            fresh.update()
        whole.append(hook.memory_report['peak'])
    if layout == 'apart':
        assert whole == [peaks[0] + 1600 + 3200] + [p + 1600
                                                    for p in peaks[1:]]
    elif layout == 'twice':
        assert peaks == whole
    else:
        assert all(p <= w < p + 64000 for p, w in zip(peaks, whole))


class _Heads(chainer.Chain):
    """(x (3, 4), task) -> the sum of head ``task`` (a Linear(None, 2),
    made at its first call) of a Linear(4, 4) of x; ``aux``, a Linear(None,
    2) no step calls."""

    def __init__(self):
        super(_Heads, self).__init__()
        with self.init_scope():
            self.body = L.Linear(4, 4)
            self.heads = chainer.ChainList(
                *[L.Linear(None, 2) for _ in range(3)])
            self.aux = L.Linear(None, 2)

    def forward(self, x, task):
        return F.sum(self.heads[task](self.body(x)))


class _HeadSteps(training.StandardUpdater):
    """SGD on _Heads, head ``tasks[i]`` at iteration i; with ``outside``,
    ``aux`` is called without a graph before the update of iteration 3,
    outside it."""

    def __init__(self, tasks, outside):
        self.tasks, self.outside = tasks, outside
        super(_HeadSteps, self).__init__(
            chainer.iterators.SerialIterator([0], 1),
            chainer.optimizers.SGD().setup(_Heads()))

    def update_core(self):
        opt = self.get_optimizer('main')
        x = numpy.ones((3, 4), numpy.float32)
        if self.outside and self.iteration == 2:
            with chainer.no_backprop_mode():
                opt.target.aux(x)
        opt.update(opt.target, x, self.tasks[self.iteration])


@pytest.mark.parametrize('outside', [False, True])
def test_a_link_made_where_no_check_looks_joins_the_updates_after(
        tmp_path, outside):
    # A head made at its first call, in a step whose calls match the
    # costed step's (each head has the same shapes), or aux, made by a
    # call outside the updates: SGD updates its W's 2 x 4 weights at
    # every later step, 2 FLOPs each: 16 more a head (its bias, made
    # with the link, is updated from the first step: Chainer gives every
    # initialised parameter a gradient, zeros where the loss has none).
    tasks = [0, 0, 1, 1, 2, 2] if not outside else [0] * 6
    log = _run(_HeadSteps(tasks, outside), 6, tmp_path, CostMonitor())
    flops = [e['cost/flops'] for e in log]
    fresh = _HeadSteps(tasks, outside)
    hooked = []
    for _ in tasks:
        with ComputationalCostHook(fma_1flop=False) as hook:
            fresh.update()
        hooked.append(hook.total_report['flops'])
    assert flops == hooked
    base = flops[0]
    if outside:  # and aux's own call in iteration 3
        assert flops[:2] + flops[3:] == [base] * 2 + [base + 16] * 3
    else:
        assert flops == [base] * 2 + [base + 16] * 2 + [base + 32] * 2
