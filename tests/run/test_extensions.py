"""CostMonitor, the Trainer extension: the cost of each training step in
Chainer's log, against the hook run on one update of the same shapes."""

import warnings

import chainer
from chainer.dataset import concat_examples
import chainer.functions as F
import chainer.links as L
from chainer import training
from chainer.training import extensions
import numpy
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import CostMonitor
from chainer_computational_cost.run import extensions as cm_extensions
from chainer_computational_cost import ReportWarning
from memory_oracle import traced_peak

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


def test_costed_runs_are_the_new_shapes_and_the_first_again(
        tmp_path, monkeypatch):
    runs = counted_costings(monkeypatch)
    trainer, log, _, _ = make_trainer(CostMonitor(), 40, out=str(tmp_path))
    trainer.run()
    # Iteration 1 (length 5), 2 (length 10, new), 17 (length 5 again: the
    # first iteration's shapes are costed a second time); the Evaluator's
    # eight runs are not costed.
    assert len(runs) == 3
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
    ({'limit': -1}, ValueError, r'limit must be an int >= 1, got -1'),
    ({'limit': 0}, ValueError, r'limit must be an int >= 1, got 0'),
    ({'limit': 2.0}, ValueError, r'limit must be an int >= 1, got 2.0'),
    ({'device': 'a100', 'peak_flops': 1e12}, ValueError, 'not both'),
    ({'peak_flops': -1}, ValueError, r'peak_flops must be a finite'),
    ({'memory': 1}, TypeError, r'memory must be a bool'),
    ({'comm': object()}, TypeError, r'comm'),
])
def test_bad_arguments_are_one_line_errors(kwargs, error, match):
    with pytest.raises(error, match=match) as info:
        CostMonitor(**kwargs)
    assert '\n' not in str(info.value)


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


def test_an_update_without_a_loss_function_is_the_update_only(tmp_path):
    # A hand-written update_core: forward and backward before the update.
    class Manual(training.StandardUpdater):
        def update_core(self):
            x, t = self.converter(self.get_iterator('main').next())
            opt = self.get_optimizer('main')
            loss = opt.target(x, t)
            opt.target.cleargrads()
            loss.backward()
            opt.update()

    model = L.Classifier(SeqModel())
    opt = chainer.optimizers.SGD()
    opt.setup(model)
    it = chainer.iterators.SerialIterator(sequences(256), BATCH)
    trainer = training.Trainer(Manual(it, opt, converter=padded),
                               (2, 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor())
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    with pytest.warns(ReportWarning, match="optimizer 'main' was updated "
                      'without a loss function'):
        trainer.run()
    with ComputationalCostHook(fma_1flop=False) as hook:
        opt.update()
    assert [e['cost/flops'] for e in log.log] == [
        hook.total_report['flops']] * 2


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
    # Iteration 1 (int64), 2 (int32), 17 (int64 again, the first
    # iteration's key costed a second time).
    assert len(runs) == 3
    assert {e['cost/flops'] for e in log.log} == {one_update_cost(10)}


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
    # shapes (2.69x over on the model)
    n_iter = 8
    trainer, log, replay = _lstm_trainer(tmp_path, CostMonitor(),
                                         var_sequences(), n_iter)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        trainer.run()
    expected = _replayed_flops(replay, _batches(var_sequences(), 3, n_iter))
    assert len(set(expected)) == 4  # four batches of other work
    assert [e['cost/flops'] for e in log.log] == expected
    # Once.  The reference is iteration 2's step (the first iteration's
    # key is costed again), lengths 4, 2, 1; iteration 3's, 3, 3, 1, runs
    # its first time step on 3 rows (5 calls: upward, LSTM, out, loss,
    # the sum) and its second on 2 (9 calls: upward, the split of h,
    # lateral, Add, LSTM, Concat, out, loss, Add) as it does; its third
    # runs 2 rows, not 1: call 15 differs.
    assert [str(w.message) for w in caught if issubclass(
        w.category, ReportWarning)] == [
        'CostMonitor: a step did other work than the costed step with the '
        'same argument shapes (its function calls differ from call 15 on): '
        'its FLOPs are counted call by call; cost/memory_peak and '
        'cost/comm_bytes are not reported for such steps']


def test_a_step_with_other_work_has_no_memory_peak(tmp_path):
    trainer, log, _ = _lstm_trainer(tmp_path, CostMonitor(memory=True),
                                    var_sequences(), 6)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ReportWarning)
        trainer.run()
    # iterations 1 and 2 costed (batches 1 and 2: the first iteration's
    # key again), 3 to 5 other work than batch 2's, 6 batch 2 again: the
    # costed step's calls, its peak
    peaks = ['cost/memory_peak' in e for e in log.log]
    assert peaks == [True, True, False, False, False, True]
    assert log.log[5]['cost/memory_peak'] == log.log[1]['cost/memory_peak']
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
