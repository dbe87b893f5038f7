"""The update phase: an optimizer's update of every parameter, one record
per parameter per update rule or optimizer hook (issue 29, part 1).

The model of most tests is ``L.Classifier(L.Linear(3, 2))``: W (2, 3) and
b (2,), 8 float32 elements, 32 bytes; the figures are the update phase's
sums, derived by hand from the formulas of
chainer_computational_cost/cost_calculators/optimizer.py.

Also which link an update record lands in, what is recorded when a parameter is
updated by hand, and that the hook is invisible to Chainer's optimizers, on
``Net``: ``l1 = Linear(3, 4)`` (W 12, b 4 elements) and ``l2 = Linear(4, 2)``
(W 8, b 2). SGD counts 1 FLOP per element with FMA (``p -= lr * g``),
WeightDecay 1 (``g += rate * p``), the hook's default."""

import threading
import warnings

import chainer
from chainer import optimizer_hooks as H
from chainer import optimizers as Op
import chainer.functions as F
import chainer.links as L
from chainer.optimizers.sgd import SGDRule
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.analysis import memory
from chainer_computational_cost import project_batch
from chainer_computational_cost import ReportWarning
from chainer_computational_cost.collect import updates as update_module
from chainer_computational_cost.cost_calculators import calculators
from chainer_computational_cost.cost_calculators import update_calculators
from chainer_computational_cost.core.records import R_LIVE
from chainer_computational_cost.core.records import R_SCRATCH
from chainer_computational_cost.core.records import R_STATE
from chainer_computational_cost.core.records import R_TYPE

import memory_oracle


chainer7 = pytest.mark.chainer7_only

X = np.arange(12, dtype=np.float32).reshape(4, 3) / 12 - 0.3
T = np.array([0, 1, 1, 0], dtype=np.int32)


def _model(dtype=np.float32):
    with chainer.using_config('dtype', np.dtype(dtype)):
        return L.Classifier(L.Linear(
            3, 2, initialW=np.arange(6).reshape(2, 3) / 10 - 0.25,
            initial_bias=np.array([0.1, -0.2])))


def _step(optimizer, model, dtype=np.float32):
    optimizer.update(model, X.astype(dtype), T)


def _update_of(optimizer_factory, hooks=(), fma=True, **hook_kwargs):
    """The update phase of one step of a new model and optimizer, and the
    hook that recorded it."""
    model = _model()
    optimizer = optimizer_factory()
    optimizer.setup(model)
    for hook in hooks:
        optimizer.add_hook(hook)
    with ComputationalCostHook(fma_1flop=fma, **hook_kwargs) as cch:
        _step(optimizer, model)
    return cch.phase_report['update'], cch


def _figures(row):
    return row['flops'], row['mread'], row['mwrite']


# (optimizer, FLOPs with FMA, without, bytes read, bytes written) on the 8
# float32 elements: reads p, g and each state; writes p and each state.
OPTIMIZERS = [
    ('SGD', Op.SGD, 1 * 8, 2 * 8, 2 * 4 * 8, 1 * 4 * 8),
    ('MomentumSGD', Op.MomentumSGD, 3 * 8, 4 * 8, 3 * 4 * 8, 2 * 4 * 8),
    ('NesterovAG', Op.NesterovAG, 4 * 8, 7 * 8, 3 * 4 * 8, 2 * 4 * 8),
    ('CorrectedMomentumSGD', Op.CorrectedMomentumSGD, 2 * 8, 4 * 8,
     3 * 4 * 8, 2 * 4 * 8),
    # 28 bytes per element: p, g, m, v read, p, m, v written; FLOPs with
    # FMA: m 2, v 2 (g*g - v and v + (1 - beta2)(...) both fused), p 6
    ('Adam', Op.Adam, 10 * 8, 15 * 8, 4 * 4 * 8, 3 * 4 * 8),
    pytest.param('AdamW', lambda: Op.AdamW(weight_decay_rate=0.01),
                 10 * 8, 15 * 8, 4 * 4 * 8, 3 * 4 * 8, marks=chainer7),
    # + max(vhat, v): 1 FLOP, vhat read and written
    pytest.param('AMSGrad', Op.__dict__.get('AMSGrad'), 11 * 8, 16 * 8,
                 5 * 4 * 8, 4 * 4 * 8, marks=chainer7),
    # + the clip of the step: a min and a max
    pytest.param('AdaBound', Op.__dict__.get('AdaBound'), 12 * 8, 17 * 8,
                 4 * 4 * 8, 3 * 4 * 8, marks=chainer7),
    pytest.param('AMSBound', Op.__dict__.get('AMSBound'), 13 * 8, 18 * 8,
                 5 * 4 * 8, 4 * 4 * 8, marks=chainer7),
    ('AdaGrad', Op.AdaGrad, 6 * 8, 7 * 8, 3 * 4 * 8, 2 * 4 * 8),
    # each mean square 2 FMAs (4 FLOPs without), dx 5, p 1: 10 (14)
    ('AdaDelta', Op.AdaDelta, 10 * 8, 14 * 8, 4 * 4 * 8, 3 * 4 * 8),
    ('RMSprop', Op.RMSprop, 8 * 8, 9 * 8, 3 * 4 * 8, 2 * 4 * 8),
    ('RMSpropGraves', Op.RMSpropGraves, 12 * 8, 16 * 8, 5 * 4 * 8,
     4 * 4 * 8),
    ('SMORMS3', Op.SMORMS3, 19 * 8, 22 * 8, 5 * 4 * 8, 4 * 4 * 8),
    # m 2, v 2, mt, vt, mt2 1 each, s 2, factor 4, p 4: 17 (23 without)
    ('MSVAG', Op.MSVAG, 17 * 8, 23 * 8, 4 * 4 * 8, 3 * 4 * 8),
]


@pytest.mark.parametrize('name, factory, fma, no_fma, mread, mwrite',
                         OPTIMIZERS)
def test_update_rule_figures(name, factory, fma, no_fma, mread, mwrite):
    row, cch = _update_of(factory)
    # one record per parameter: W and b
    assert row['n_layers'] == 2
    assert _figures(row) == (fma, mread, mwrite)
    row, _ = _update_of(factory, fma=False)
    assert _figures(row) == (no_fma, mread, mwrite)
    layers = [r for k, r in cch.layer_report.items() if k != 'total'
              and r['phase'] == 'update']
    assert [(r['input_shapes'], r['output_shapes'], r['link'])
            for r in layers] == [([(2, 3), (2, 3)], [(2, 3)], '/predictor'),
                                 ([(2,), (2,)], [(2,)], '/predictor')]
    assert layers[0]['type'].endswith('Rule')
    assert layers[0]['params']['fp32_update'] is False


# (hook, FLOPs with FMA, without, bytes read, bytes written), the hook's
# records only (the SGD rule's are apart), W (6) and b (2).
HOOKS = [
    # g += rate p: 1 multiply-add; p and g read, g written
    ('WeightDecay', lambda: H.WeightDecay(1e-4), 8, 16, 2 * 4 * 8, 4 * 8),
    # g += rate sign(p): a sign and a multiply-add
    ('Lasso', lambda: H.Lasso(1e-4), 2 * 8, 3 * 8, 2 * 4 * 8, 4 * 8),
    # clip: a max and a min; g read and written
    ('GradientHardClipping', lambda: H.GradientHardClipping(-0.1, 0.1),
     2 * 8, 2 * 8, 4 * 8, 4 * 8),
    # g += noise: the noise (8 float32) read as a constant array
    ('GradientNoise', lambda: H.GradientNoise(0.01), 8, 8, 2 * 4 * 8,
     4 * 8),
    # norms of p and g: 2 dots of n (FMA n, else 2n - 1) then 2 FLOPs with
    # FMA (3 without) per element; p and g read twice, g written once.
    # FMA: 4 * 8 = 32; no FMA: W 7 * 6 - 2 = 40, b 7 * 2 - 2 = 12
    ('GradientLARS', lambda: H.GradientLARS(threshold=1e-2,
                                            weight_decay=1e-3),
     4 * 8, 40 + 12, 2 * 2 * 4 * 8, 4 * 8),
    # the global norm: a dot of n per gradient (FMA n, else 2n - 1), then
    # one multiplication per element; g read twice, written once.
    # FMA: 2 * 8 = 16; no FMA: W 3 * 6 - 1 = 17, b 3 * 2 - 1 = 5
    ('GradientClipping', lambda: H.GradientClipping(1e-3), 2 * 8, 17 + 5,
     2 * 4 * 8, 4 * 8),
]


def _summary(cch, key):
    return cch.summary_report_by_phase()[key]


@pytest.mark.parametrize('name, factory, fma, no_fma, mread, mwrite', HOOKS)
def test_optimizer_hook_figures(name, factory, fma, no_fma, mread, mwrite):
    _, cch = _update_of(Op.SGD, hooks=[factory()])
    row = _summary(cch, 'update/' + name)
    assert row['n_layers'] == 2
    assert _figures(row) == (fma, mread, mwrite)
    _, cch = _update_of(Op.SGD, hooks=[factory()], fma=False)
    assert _figures(_summary(cch, 'update/' + name)) == (no_fma, mread,
                                                         mwrite)
    layers = [r for k, r in cch.layer_report.items() if k != 'total']
    phases = [(r['phase'], r['type']) for r in layers
              if r['phase'] == 'update']
    # the hook ('pre', its default) before the rule, per parameter
    assert phases == [('update', name)] * 2 + [('update', 'SGDRule')] * 2
    assert layers[-1]['params'] == {'lr': 0.01, 'fp32_update': False}
    hook_params = [r['params'] for r in layers if r['type'] == name]
    assert all(p['timing'] == 'pre' for p in hook_params)


def _states(optimizer, model):
    out = {}
    for path, p in model.namedparams():
        rule = p.update_rule
        state = {k: np.array(v, copy=True) for k, v in
                 (rule.state or {}).items()}
        out[path] = (np.array(p.array, copy=True), state, rule.t,
                     None if rule._fp32_param is None
                     else np.array(rule._fp32_param.array, copy=True))
    return out, optimizer.t


def _five_updates(factory, hooked, hooks=(), dtype=np.float32,
                  fp32=False, rule_hooks=()):
    np.random.seed(3)  # GradientNoise draws from NumPy's generator
    model = _model(dtype)
    optimizer = factory()
    optimizer.setup(model)
    if fp32:
        optimizer.use_fp32_update()
    for hook in hooks:
        optimizer.add_hook(hook())
    for hook, timing in rule_hooks:
        model.predictor.W.update_rule.add_hook(hook(), timing=timing)
    for _ in range(5):
        if hooked:
            with ComputationalCostHook(memory=True):
                _step(optimizer, model, dtype)
        else:
            _step(optimizer, model, dtype)
    return _states(optimizer, model), np.random.get_state()[1].copy()


def _same_bits(a, b):
    if isinstance(a, np.ndarray):
        return (a.dtype == b.dtype and a.shape == b.shape
                and a.tobytes() == b.tobytes())
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_bits(a[k], b[k])
                                            for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(map(_same_bits, a, b))
    return a == b


@pytest.mark.parametrize('name, factory', [
    pytest.param(*p.values[:2], marks=p.marks) if hasattr(p, 'marks')
    else p[:2] for p in OPTIMIZERS])
def test_five_updates_are_bit_identical_with_and_without_the_hook(
        name, factory):
    bare = _five_updates(factory, False)
    hooked = _five_updates(factory, True)
    assert _same_bits(bare, hooked)
    # and the states did move: a test that compares nothing proves nothing
    assert not _same_bits(bare[0][0]['/predictor/W'][0],
                          _model().predictor.W.array)


def test_hooks_and_fp32_updates_are_bit_identical_too():
    hooks = [factory for _, factory, *rest in HOOKS]
    bare = _five_updates(Op.Adam, False, hooks)
    assert _same_bits(bare, _five_updates(Op.Adam, True, hooks))
    rule_hooks = [(lambda: H.GradientHardClipping(-0.01, 0.01), 'pre'),
                  (lambda: H.GradientNoise(0.1), 'post')]
    bare = _five_updates(Op.MomentumSGD, False, dtype=np.float16, fp32=True,
                         rule_hooks=rule_hooks)
    assert _same_bits(bare, _five_updates(Op.MomentumSGD, True,
                                          dtype=np.float16, fp32=True,
                                          rule_hooks=rule_hooks))


def test_fp32_update_of_float16_parameters():
    model = _model(np.float16)
    optimizer = Op.Adam().setup(model)
    optimizer.use_fp32_update()
    with ComputationalCostHook() as cch:
        _step(optimizer, model, np.float16)
    row = cch.phase_report['update']
    # per element: Adam on the float32 master (10 FLOPs, 4 * 4 bytes read,
    # 3 * 4 written) and two casts (1 FLOP each): the float16 gradient to
    # float32 (read 2, write 4), the master back to float16 (read 4,
    # write 2): 12 FLOPs, 16 + 2 + 4 = 22 bytes read, 12 + 4 + 2 = 18
    # written, for 8 elements
    assert _figures(row) == (12 * 8, 22 * 8, 18 * 8)
    layers = [r for k, r in cch.layer_report.items() if k != 'total'
              and r['phase'] == 'update']
    assert layers[0]['params']['fp32_update'] is True


def test_float16_without_fp32_update_counts_two_bytes():
    model = _model(np.float16)
    optimizer = Op.MomentumSGD().setup(model)
    with ComputationalCostHook() as cch:
        _step(optimizer, model, np.float16)
    # p, g, v read, p, v written, 2 bytes each: 3 * 2 * 8, 2 * 2 * 8
    assert _figures(cch.phase_report['update']) == (3 * 8, 48, 32)


def test_a_disabled_rule_is_not_recorded():
    model = _model()
    optimizer = Op.Adam().setup(model)
    model.predictor.b.update_rule.enabled = False
    with ComputationalCostHook() as cch:
        _step(optimizer, model)
    row = cch.phase_report['update']
    # W alone: 11 * 6 FLOPs, 16 * 6 bytes read, 12 * 6 written
    assert (row['n_layers'],) + _figures(row) == (1, 60, 96, 72)


def test_hooks_at_pre_and_post_timing_on_the_optimizer_and_on_a_rule():
    model = _model()
    optimizer = Op.SGD().setup(model)
    optimizer.add_hook(H.WeightDecay(1e-4), timing='post')
    model.predictor.W.update_rule.add_hook(
        H.GradientHardClipping(-1, 1), timing='pre')
    model.predictor.W.update_rule.add_hook(H.Lasso(1e-4), timing='post')
    with ComputationalCostHook() as cch:
        _step(optimizer, model)
    layers = [(r['type'], r['params'].get('timing'), r['input_shapes'][0])
              for k, r in cch.layer_report.items()
              if k != 'total' and r['phase'] == 'update']
    assert layers == [
        ('GradientHardClipping', 'pre', (2, 3)), ('SGDRule', None, (2, 3)),
        ('Lasso', 'post', (2, 3)), ('SGDRule', None, (2,)),
        ('WeightDecay', 'post', (2, 3)), ('WeightDecay', 'post', (2,))]


def test_update_is_listed_after_forward_and_backward():
    row, cch = _update_of(Op.SGD)
    assert list(cch.phase_report) == ['forward', 'backward', 'update',
                                      'total']
    keys = list(cch.summary_report_by_phase())
    assert keys[-2:] == ['update/SGDRule', 'total']
    phases = [k.split('/')[0] for k in keys[:-1]]
    assert phases == sorted(phases, key=['forward', 'backward',
                                         'update'].index)
    # a run without an update keeps its two phases
    with ComputationalCostHook() as cch:
        _model()(X, T)
    assert list(cch.phase_report) == ['forward', 'backward', 'total']


def test_link_report_carries_the_update():
    class Two(chainer.Chain):
        def __init__(self):
            super(Two, self).__init__()
            with self.init_scope():
                self.a = L.Linear(3, 4)
                self.b = L.Linear(4, 2)

        def forward(self, x):
            return self.b(self.a(x))

    model = L.Classifier(Two())
    optimizer = Op.SGD().setup(model)
    with ComputationalCostHook() as cch:
        _step(optimizer, model)
    links = cch.link_report
    update = sorted({r['link'] for k, r in cch.layer_report.items()
                     if k != 'total' and r['phase'] == 'update'})
    assert update == ['/predictor/a', '/predictor/b']
    # X is (4, 3); FLOPs with FMA (DETAILS.md: LinearFunction rows * in *
    # out + rows * out with the bias, LinearGradWeight in * out * rows,
    # LinearGradData rows * out * in, the bias gradient a Sum over the
    # batch (rows - 1) * out; SGD 1 per element).
    # a (3 -> 4): forward 4*3*4 + 4*4 = 64; backward gW 3*4*4 = 48, gb
    # 3*4 = 12 (x needs no gradient); update 12 + 4 = 16: 140
    assert links['/predictor/a']['flops'] == 64 + 48 + 12 + 16
    # b (4 -> 2): forward 4*4*2 + 4*2 = 40; backward gx 4*2*4 = 32, gW
    # 4*2*4 = 32, gb 3*2 = 6; update 8 + 2 = 10: 120
    assert links['/predictor/b']['flops'] == 40 + 32 + 32 + 6 + 10
    # SGD reads p and g and writes p, 4 bytes each: a moves 16 * 12 = 192
    # bytes in its update, b 10 * 12 = 120
    moved = {}
    for k, r in cch.layer_report.items():
        if k != 'total' and r['phase'] == 'update':
            moved[r['link']] = moved.get(r['link'], 0) + r['mrw']
    assert moved == {'/predictor/a': 192, '/predictor/b': 120}


def test_memory_sees_the_state_the_first_update_creates():
    model = _model()
    optimizer = Op.Adam().setup(model)
    with ComputationalCostHook(memory=True) as first:
        _step(optimizer, model)
    layers = [r for k, r in first.layer_report.items() if k != 'total']
    assert [r['phase'] for r in layers[-2:]] == ['update'] * 2
    # m and v of b: 2 * 2 * 4 = 16 bytes more after b's update
    assert layers[-1]['live'] - layers[-2]['live'] == 16
    # a second step creates no state: at exit, the first step's run has
    # the state of W and b alive, m and v: 2 * 8 * 4 = 64 bytes more
    with ComputationalCostHook(memory=True) as second:
        _step(optimizer, model)
    layers = [r for k, r in second.layer_report.items() if k != 'total']
    assert layers[-1]['live'] == layers[-2]['live']
    assert (first.memory_report['at_exit']
            - second.memory_report['at_exit']) == 64
    # the peak: the loss's gradient, 104 bytes alive and its label arrays
    # (4 labels * (1 + 4 + 4 + 8 + 16) = 132): 236, above W's first Adam
    # update (152 alive, 3 temporaries of 24 bytes: 224)
    assert first.memory_report['peak_phase'] == 'backward'
    assert first.memory_report['peak'] == 236


def _smorms3_steps(steps_before, steps_in):
    """``(created, at_exit_activations, NumPy growth)``: SMORMS3 on
    ``L.Linear(3, 2)`` (W 6 + b 2 = 8 elements), ``steps_before`` steps
    before the block and ``steps_in`` inside it; tracemalloc's growth of
    the NumPy buffers alive over the block, every buffer traced from before
    the first step."""
    with memory_oracle.Tracing():
        model = L.Linear(3, 2)
        optimizer = Op.SMORMS3().setup(model)

        def step():
            model.cleargrads()
            F.sum(model(X)).backward()
            optimizer.update()
        for _ in range(steps_before):
            step()
        before = sum(memory_oracle.traced_split())
        with ComputationalCostHook(memory=True) as cch:
            for _ in range(steps_in):
                step()
        growth = sum(memory_oracle.traced_split()) - before
    return (memory.created(cch.records())[-1],
            cch.memory_report['at_exit_activations'], growth)


def test_smorms3_creates_its_state_once_though_it_replaces_it():
    # SMORMS3 puts new mem, g and g2 arrays in its state at every update.
    # Three steps in the block: the first creates the state, 3 * 8 * 4 =
    # 96 bytes (the gradients replace those the parameters were made with,
    # NaN-filled: no growth); tracemalloc sees 96 bytes more NumPy memory
    # after the block, not 3 * 96.
    created, state, growth = _smorms3_steps(0, 3)
    assert growth == 96
    assert created == state == growth
    # With its state made before the block, a step replaces it: NumPy's
    # memory does not grow, and no state is created.
    created, state, growth = _smorms3_steps(1, 1)
    assert growth == 0
    assert created == state == 0


def test_project_batch_projects_a_step_with_its_update():
    def run(n):
        model = _model()
        optimizer = Op.Adam().setup(model)
        x = np.ones((n, 3), np.float32)
        optimizer.update(model, x, np.zeros(n, np.int32))

    projected = project_batch(run, 100)
    # the update does not depend on the batch: Adam on 8 elements, 10
    # FLOPs each with FMA; p, g, m, v read (4 * 4 * 8 = 128 B), p, m, v
    # written (3 * 4 * 8 = 96 B)
    assert _figures(projected.phase_report['update']) == (80, 128, 96)
    # the forward at batch 100 (DETAILS.md): LinearFunction 100*3*2 +
    # 100*2 = 800 FLOPs, reads x, W and b (300 + 6 + 2) * 4 = 1232 B,
    # writes y 200 * 4 = 800 B
    rows = [r for k, r in projected.layer_report.items() if k != 'total']
    linear = [r for r in rows if r['type'] == 'LinearFunction']
    assert [_figures(r) for r in linear] == [(800, 1232, 800)]
    # the backward: gW 3*2*100 = 600 FLOPs, gb (100 - 1) * 2 = 198
    grads = {r['type']: r['flops'] for r in rows if r['phase'] == 'backward'}
    assert grads['LinearGradWeight'] == 600
    assert grads['Sum'] == 198
    # Memory of the update records, projected to batch 100: alive are what
    # the Classifier keeps (its y, 100 * 2 * 4 = 800 B; its loss, whose
    # node keeps the softmax, 800 B; the loss and the accuracy, 4 B each),
    # the gradients of W and b (8 * 4 = 32 B) and the moments Adam created
    # up to that record (W's m and v 2 * 24 = 48 B, then b's 2 * 8 = 16
    # B); scratch 3 x the parameter (step, step * m and its scaled copy):
    # 3 * 24 = 72 B for W, 3 * 8 = 24 B for b
    kept = 800 + 800 + 4 + 4
    update = [(live, scratch) for live, scratch, phase
              in memory.live_series(projected) if phase == 'update']
    assert update == [(kept + 32 + 48, 72), (kept + 32 + 48 + 16, 24)]


def _real_methods():
    return [cls.__dict__[name] for cls, name in update_module._PATCHED]


def test_methods_are_restored_on_exit_and_on_error():
    real = _real_methods()
    assert real == [update_module._REAL[k] for k in update_module._PATCHED]
    with ComputationalCostHook():
        assert _real_methods() == list(update_module._WRAPPERS)
        with ComputationalCostHook():
            pass
        assert _real_methods() == list(update_module._WRAPPERS)
    assert _real_methods() == real
    with pytest.raises(ZeroDivisionError):
        with ComputationalCostHook():
            1 / 0
    assert _real_methods() == real


def test_nested_hooks_both_record_the_update():
    model = _model()
    optimizer = Op.SGD().setup(model)
    with ComputationalCostHook() as outer:
        with ComputationalCostHook() as inner:
            _step(optimizer, model)
    assert outer.phase_report['update']['flops'] == 8
    assert inner.phase_report['update']['flops'] == 8


def test_another_threads_update_is_not_recorded():
    model = _model()
    optimizer = Op.SGD().setup(model)
    other = _model()
    other_optimizer = Op.SGD().setup(other)
    with ComputationalCostHook() as cch:
        thread = threading.Thread(target=_step,
                                  args=(other_optimizer, other))
        thread.start()
        thread.join()
        assert 'update' not in cch.phase_report
        _step(optimizer, model)
    assert cch.phase_report['update']['n_layers'] == 2


class MyRule(chainer.UpdateRule):
    """A rule of the user's own: no built-in calculator."""

    def update_core_cpu(self, param):
        param.array -= 0.1 * param.grad


class MyOptimizer(chainer.GradientMethod):
    """An optimizer of MyRule."""

    def create_update_rule(self):
        return MyRule(self.hyperparam)


def test_an_unknown_rule_is_ignored_with_a_warning():
    model = _model()
    optimizer = MyOptimizer().setup(model)
    optimizer.add_hook(lambda opt: None, name='noop')
    with pytest.warns(ReportWarning) as caught:
        with ComputationalCostHook() as cch:
            _step(optimizer, model)
    messages = sorted(str(w.message) for w in caught)
    assert any('MyRule' in m and 'not yet supported' in m
               for m in messages)
    assert any('<lambda>' in m for m in messages)
    assert sorted(cch.ignored_layers) == ['<lambda>-1', 'MyRule-1',
                                          'MyRule-2']
    assert 'update' not in cch.phase_report or \
        cch.phase_report['update']['n_layers'] == 0


def test_strict_hook_raises_a_failing_update_calculator(monkeypatch):
    def broken(rule, in_data, **kwargs):
        raise RuntimeError('broken')

    from chainer.optimizers.sgd import SGDRule
    monkeypatch.setitem(update_calculators, SGDRule, broken)
    model = _model()
    optimizer = Op.SGD().setup(model)
    with pytest.raises(RuntimeError, match='broken'):
        with ComputationalCostHook(strict=True):
            _step(optimizer, model)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        with ComputationalCostHook() as cch:
            _step(optimizer, model)
    assert any('failed, update ignored' in str(w.message) for w in caught)
    assert sorted(cch.ignored_layers) == ['SGDRule-1', 'SGDRule-2']


def test_update_calculators_are_not_function_calculators():
    from chainer.optimizers.adam import AdamRule
    assert AdamRule in update_calculators
    assert WeightDecayType in update_calculators
    assert not set(update_calculators) & set(calculators)
    assert all(issubclass(c, (chainer.FunctionNode, chainer.Function))
               for c in calculators)


WeightDecayType = H.WeightDecay


def test_loss_scaling_divides_the_gradient_once_more():
    model = _model()
    optimizer = Op.SGD().setup(model)
    optimizer.loss_scaling(scale=8.0)
    with ComputationalCostHook() as cch:
        _step(optimizer, model)
    # SGD (1 FLOP, 8 + 4 bytes read... per element) and g /= scale: 1 FLOP,
    # g read and written: 2 FLOPs, 3 * 4 read, 2 * 4 written per element
    assert _figures(cch.phase_report['update']) == (16, 96, 64)


def _fp32_step(dtype, hooks=(), rule_hook=None, scale=None, **kwargs):
    """One MomentumSGD step under use_fp32_update() on the model of
    ``dtype``, with optimizer hooks, a hook on W's rule and a loss scale;
    the hook that recorded it."""
    model = _model(dtype)
    optimizer = Op.MomentumSGD().setup(model)
    optimizer.use_fp32_update()
    for hook in hooks:
        optimizer.add_hook(hook)
    if rule_hook is not None:
        model.predictor.W.update_rule.add_hook(rule_hook)
    if scale is not None:
        optimizer.loss_scaling(scale=scale)
    with ComputationalCostHook(**kwargs) as cch:
        _step(optimizer, model, dtype)
    return cch


def _by_type(cch):
    out = {}
    for key, r in cch.layer_report.items():
        if key != 'total' and r['phase'] == 'update':
            f = out.get(r['type'], (0, 0, 0))
            out[r['type']] = tuple(a + b for a, b in zip(f, _figures(r)))
    return out


def test_fp32_update_with_hooks_on_the_optimizer_and_on_a_rule():
    cch = _fp32_step(np.float16, hooks=[H.WeightDecay(1e-4)],
                     rule_hook=H.WeightDecay(1e-4))
    # The optimizer's WeightDecay runs before the rules, on the float16
    # arrays: 8 multiply-adds, p and g read (2 * 2 * 8 = 32 B), g written
    # (16 B). The rule's runs on W's float32 master (6 elements): 6
    # FLOPs, 2 * 4 * 6 = 48 B read, 4 * 6 = 24 written.
    # MomentumSGD on the masters: 3 FLOPs + 2 casts per element, p, g, v
    # read 12 B + the float16 gradient 2 + the master 4 = 18 B, p, v
    # written 8 + the float32 gradient 4 + the float16 parameter 2 = 14 B
    assert _by_type(cch) == {'WeightDecay': (8 + 6, 32 + 48, 16 + 24),
                             'MomentumSGDRule': (5 * 8, 18 * 8, 14 * 8)}


def test_loss_scaling_under_fp32_update_divides_the_float32_gradient():
    cch = _fp32_step(np.float16, scale=8.0)
    # as above, plus g /= scale on the float32 gradient: 1 FLOP, 4 B read
    # and 4 written per element: 6 FLOPs, 22 B read, 18 B written
    assert _by_type(cch) == {'MomentumSGDRule': (6 * 8, 22 * 8, 18 * 8)}


def test_fp32_update_on_a_float32_model_changes_nothing():
    cch = _fp32_step(np.float32)
    # no master copy: MomentumSGD's 3 FLOPs, p, g, v read (12 B), p, v
    # written (8 B) per element
    assert _by_type(cch) == {'MomentumSGDRule': (3 * 8, 12 * 8, 8 * 8)}
    rows = [r for k, r in cch.layer_report.items() if k != 'total'
            and r['phase'] == 'update']
    assert [r['params']['fp32_update'] for r in rows] == [False, False]


def test_fp32_update_memory_counts_the_master_copy_and_its_state():
    cch = _fp32_step(np.float16, memory=True)
    # created at the first update: the float32 master copy and its float32
    # velocity, 2 * 4 * 8 = 64 B (W's 48, then b's 16)
    assert memory.created(cch.records())[-1] == 64
    scratch = [(r[0], r[1]) for r in memory.live_series(cch)
               if r[2] == 'update']
    # W (6): the float32 gradient copy 24 B and lr * grad on the master
    # 24 B: 48; b (2): 8 + 8 = 16
    assert [s for _, s in scratch] == [48, 16]


def test_custom_calculators_for_a_rule_and_an_optimizer_hook():
    class Zero(object):
        """An optimizer hook of its own: called once, not per parameter."""
        timing = 'pre'
        name = 'Zero'

        def __call__(self, opt):
            for p in opt.target.params():
                p.grad[...] = 0

    def rule_calc(rule, in_data, **kwargs):
        p, g = in_data
        return (p.size, 2 * p.size, p.size, {'mine': True})

    def zero_calc(hook, in_data, **kwargs):
        return (0, 0, in_data[1].size, {'timing': kwargs['timing']})

    model = _model()
    optimizer = MyOptimizer().setup(model)
    optimizer.add_hook(Zero())
    cch = ComputationalCostHook()
    cch.add_custom_cost_calculator(MyRule, rule_calc)
    cch.add_custom_cost_calculator(Zero, zero_calc)
    with cch:
        _step(optimizer, model)
    # the rule: 8 FLOPs, 16 elements read, 8 written, of 4 bytes; the hook
    # writes the 8 gradient elements
    assert _figures(cch.phase_report['update']) == (8, 64, 64)
    assert [r['type'] for r in cch.summary_report_by_phase().values()][
        -3:] == ['Zero', 'MyRule', 'total']
    with pytest.raises(TypeError, match='an UpdateRule subclass'):
        cch.add_custom_cost_calculator(int, rule_calc)
    with pytest.warns(ReportWarning, match='overriding the built-in'):
        cch.add_custom_cost_calculator(H.WeightDecay, zero_calc)


def test_every_rule_and_hook_of_chainer_has_a_calculator():
    import inspect
    from chainer_computational_cost.cost_calculators import lookup
    # the rules of the 15 optimizers (AdamRule serves five): 11 classes
    rules = {c for m in vars(Op).values() if inspect.ismodule(m)
             for c in vars(m).values()
             if inspect.isclass(c) and issubclass(c, chainer.UpdateRule)
             and c is not chainer.UpdateRule}
    assert len(rules) == 11
    assert all(lookup(update_calculators, c) is not None for c in rules)
    hooks = {c for c in vars(H).values() if inspect.isclass(c)}
    assert len(hooks) == 6
    assert all(c in update_calculators for c in hooks)


def test_measure_time_times_the_rules_and_their_hooks():
    model = _model()
    optimizer = Op.Adam().setup(model)
    optimizer.add_hook(H.WeightDecay(1e-4))
    model.predictor.W.update_rule.add_hook(H.Lasso(1e-4))
    with ComputationalCostHook(measure_time=True) as cch:
        _step(optimizer, model)
        assert cch._clock == []  # every clock started was stopped
    times = [(r['type'], r.get('time')) for k, r in cch.layer_report.items()
             if k != 'total' and r['phase'] == 'update']
    # the optimizer's hook runs once for all parameters: not timed per
    # parameter; the rule's hook and the rules are
    assert [t for t, _ in times] == ['WeightDecay', 'WeightDecay', 'Lasso',
                                     'AdamRule', 'AdamRule']
    assert [s is None for _, s in times] == [True, True, False, False,
                                             False]
    assert all(s > 0 for _, s in times[2:])
    with ComputationalCostHook() as cch:
        _step(optimizer, model)
    assert all('time' not in r for r in cch.layer_report.values())


X_ONES = np.ones((2, 3), np.float32)
T_ZEROS = np.zeros(2, np.int32)


class Net(chainer.Chain):
    def __init__(self, direct=False):
        super(Net, self).__init__()
        self.direct = direct
        with self.init_scope():
            self.l1 = L.Linear(3, 4)
            self.l2 = L.Linear(4, 2)

    def forward(self, x):
        if self.direct:  # the children run without their __call__
            return self.l2.forward(F.relu(self.l1.forward(x)))
        return self.l2(F.relu(self.l1(x)))


def _updates(cch):
    """``[(type, link, FLOPs)]`` of the update records, in order."""
    return [(r['type'], r['link'], r['flops'])
            for k, r in cch.layer_report.items()
            if k != 'total' and r['phase'] == 'update']


def _by_link(cch):
    out = {}
    for _, link, flops in _updates(cch):
        out[link] = out.get(link, 0) + flops
    return out


def _grads(model, dtype=np.float32):
    """The gradients of a Classifier's loss, or of the sum of another
    link's outputs."""
    x = X_ONES.astype(dtype)
    loss = model(x, T_ZEROS) if isinstance(model, L.Classifier) else F.sum(
        model(x))
    model.cleargrads()
    loss.backward()


def test_a_parameter_updated_by_hand_is_recorded_at_the_root():
    net = Net()
    Op.SGD().setup(net)
    net.cleargrads()
    net.l1.W.grad = np.ones((4, 3), np.float32)
    with ComputationalCostHook(fma_1flop=True) as cch:
        net.l1.W.update()  # no optimizer updating: '/'
        net.l1.b.update()  # no gradient: nothing is updated
    assert _updates(cch) == [('SGDRule', '/', 12)]
    # the same after an optimizer's update in the block
    optimizer = Op.SGD().setup(net)
    with ComputationalCostHook(fma_1flop=True) as cch:
        _grads(net)
        optimizer.update()
        net.l2.b.update()
    assert _updates(cch)[-2:] == [('SGDRule', '/l2', 2), ('SGDRule', '/', 2)]


def _by_hand(rule, param):
    rule.update(param)


def _hook_by_hand(optimizer, hook):
    optimizer.call_hook(hook)


def test_an_update_records_the_line_of_the_users_code_that_made_it():
    net = Net()
    optimizer = Op.SGD().setup(net)
    net.cleargrads()
    net.l1.b.grad = np.ones(4, np.float32)
    net.l1.b.update_rule.add_hook(H.WeightDecay(1e-4))
    with ComputationalCostHook() as cch:
        _by_hand(net.l1.b.update_rule, net.l1.b)
        _hook_by_hand(optimizer, H.Lasso(1e-4))
    last = [r['traceback'].rstrip().splitlines()[-1].strip()
            for k, r in cch.layer_report.items() if k != 'total']
    # the rule and its hook: the call in _by_hand; Lasso on l1's b (the
    # one parameter with a gradient): the call in _hook_by_hand
    assert last == ['rule.update(param)'] * 2 + [
        'optimizer.call_hook(hook)']
    # an optimizer of Chainer's base class (no GradientMethod between), on
    # the 4 parameters (SGD's call_hook gave each a gradient)
    plain = chainer.Optimizer()
    plain.setup(net)
    with ComputationalCostHook() as cch:
        _hook_by_hand(plain, H.WeightDecay(1e-4))
    assert [r['traceback'].rstrip().splitlines()[-1].strip()
            for k, r in cch.layer_report.items() if k != 'total'] == [
        'optimizer.call_hook(hook)'] * 4


def test_a_rules_hook_on_a_float32_master_counts_the_gradient_copy():
    with chainer.using_config('dtype', np.float16):
        net = L.Linear(3, 4)
    optimizer = Op.SGD().setup(net)
    optimizer.use_fp32_update()
    net.W.update_rule.add_hook(H.WeightDecay(1e-4))
    with ComputationalCostHook(memory=True) as cch:
        _grads(net, np.float16)
        optimizer.update()
    scratch = [r[R_SCRATCH] for r in cch.records()
               if r[R_TYPE] == 'WeightDecay']
    # rate * p on W's float32 master (12 elements, 48 B) beside the rule's
    # float32 gradient copy (48 B)
    assert scratch == [96]


def test_an_optimizer_hook_without_a_calculator_has_no_scratch():
    # a plain function as the optimizer's hook: no arrays of its own, so
    # nothing to make temporaries of
    model = _model()
    optimizer = Op.SGD().setup(model)
    optimizer.add_hook(lambda opt: None, name='noop')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ReportWarning)
        with ComputationalCostHook(memory=True) as cch:
            _step(optimizer, model)
    assert [r[R_SCRATCH] for r in cch.records()
            if r[R_TYPE] == '<lambda>'] == [0]


def test_a_link_never_initialised_gets_no_update_record():
    class Lazy(chainer.Chain):
        def __init__(self):
            super(Lazy, self).__init__()
            with self.init_scope():
                self.used = L.Linear(3, 2)
                self.unused = L.Linear(None, 2)  # W never initialised

        def forward(self, x):
            return self.used(x)

    model = L.Classifier(Lazy())
    optimizer = Op.SGD().setup(model)
    optimizer.add_hook(H.WeightDecay(1e-4))
    with ComputationalCostHook(fma_1flop=True) as cch:
        optimizer.update(model, X_ONES, T_ZEROS)
    # used: W 6 + b 2 = 8 elements, once by WeightDecay, once by SGD; the
    # unused link's b (2, initialised, zero gradient) as well
    assert _by_link(cch) == {'/predictor/used': 16, '/predictor/unused': 4}


def test_records_land_in_the_owner_through_forward_calls():
    # the step calls the Classifier; Net runs its children through their
    # forward(), which the hook never sees called: they are named below
    # the innermost link it saw, '/predictor'
    model = L.Classifier(Net(direct=True))
    optimizer = Op.SGD().setup(model.predictor)
    with ComputationalCostHook(fma_1flop=True) as cch:
        _grads(model)
        optimizer.update()
    # l1: 12 + 4 = 16, l2: 8 + 2 = 10
    assert _by_link(cch) == {'/predictor/l1': 16, '/predictor/l2': 10}
    # the model called as the root: '/l1', '/l2'
    net = Net(direct=True)
    optimizer = Op.SGD().setup(net)
    with ComputationalCostHook(fma_1flop=True) as cch:
        _grads(net)
        optimizer.update()
    assert _by_link(cch) == {'/l1': 16, '/l2': 10}


def test_a_parameter_of_the_target_itself_lands_in_the_target():
    class Scaled(Net):
        def __init__(self):
            super(Scaled, self).__init__()
            with self.init_scope():
                self.s = chainer.Parameter(np.ones((2,), np.float32))

        def forward(self, x):
            return super(Scaled, self).forward(x) * self.s

    model = L.Classifier(Scaled())
    optimizer = Op.SGD().setup(model.predictor)
    with ComputationalCostHook(fma_1flop=True) as cch:
        _grads(model)
        optimizer.update()
    # s: 2 elements in '/predictor' itself
    assert _by_link(cch) == {'/predictor': 2, '/predictor/l1': 16,
                             '/predictor/l2': 10}


def test_a_target_that_is_an_empty_chain_list_is_still_the_target():
    # a ChainList with a parameter of its own and no child link (an
    # empty ChainList is falsy): its update lands in '/0', where the
    # model calls it; SGD's update of W's 6 elements: 6 multiply-adds
    class Scale(chainer.ChainList):
        def __init__(self):
            super(Scale, self).__init__()
            with self.init_scope():
                self.W = chainer.Parameter(np.ones((3, 2), np.float32))

        def forward(self, x):
            return F.matmul(x, self.W)
    net = chainer.Sequential(Scale())
    optimizer = Op.SGD().setup(net[0])
    with ComputationalCostHook(fma_1flop=True) as cch:
        loss = F.sum(net(np.ones((2, 3), np.float32)))
        net.cleargrads()
        loss.backward()
        optimizer.update()
    assert _by_link(cch) == {'/0': 6}


def test_deeper_links_the_block_never_called_keep_their_full_path():
    class Outer(chainer.Chain):
        def __init__(self):
            super(Outer, self).__init__()
            with self.init_scope():
                self.enc = Net()

        def forward(self, x):
            return self.enc(x)

    model = L.Classifier(Outer())
    optimizer = Op.SGD().setup(model)
    _grads(model)  # before the block: the hook sees no link called
    with ComputationalCostHook(fma_1flop=True) as cch:
        optimizer.update()
    assert _by_link(cch) == {'/predictor/enc/l1': 16,
                             '/predictor/enc/l2': 10}


class HalveGrads(object):
    """An optimizer hook of the user's own, called for each parameter (as
    WeightDecay is): no calculator knows it."""

    name = 'HalveGrads'
    call_for_each_param = True
    timing = 'pre'

    def __call__(self, rule, param):
        param.grad *= 0.5


def test_a_users_hook_for_each_parameter_is_ignored_in_each_owner():
    model = Net()
    optimizer = Op.SGD().setup(model)
    optimizer.add_hook(HalveGrads())
    with pytest.warns(ReportWarning, match='HalveGrads'):
        with ComputationalCostHook() as cch:
            _grads(model)
            optimizer.update()
    # one record per parameter, in its link, with the parameter and its
    # gradient: l1's W (4, 3) and b (4,), l2's W (2, 4) and b (2,)
    assert {k: (r['link'], r['input_shapes'])
            for k, r in cch.ignored_layers.items()} == {
        'HalveGrads-1': ('/l1', [(4, 3), (4, 3)]),
        'HalveGrads-2': ('/l1', [(4,), (4,)]),
        'HalveGrads-3': ('/l2', [(2, 4), (2, 4)]),
        'HalveGrads-4': ('/l2', [(2,), (2,)])}


def test_a_rules_hook_on_a_float32_master_lands_in_the_owner():
    with chainer.using_config('dtype', np.float16):
        model = L.Classifier(Net())
    optimizer = Op.SGD().setup(model)
    optimizer.use_fp32_update()
    model.predictor.l2.W.update_rule.add_hook(H.WeightDecay(1e-4))
    with ComputationalCostHook(fma_1flop=True) as cch:
        _grads(model, np.float16)
        optimizer.update()
    hooks = [u for u in _updates(cch) if u[0] == 'WeightDecay']
    # on l2's W master copy: 8 elements
    assert hooks == [('WeightDecay', '/predictor/l2', 8)]


def test_optimizer_hooks_called_by_hand_land_in_the_owners():
    model = L.Classifier(Net())
    optimizer = Op.SGD().setup(model.predictor)
    optimizer.add_hook(H.WeightDecay(1e-4))
    _grads(model)
    with ComputationalCostHook(fma_1flop=True) as cch:
        assert optimizer.call_hooks('pre') is None
    # outside optimizer.update(): the paths under the optimizer's target
    assert _by_link(cch) == {'/l1': 16, '/l2': 10}


class SelfHooking(SGDRule):
    """An SGD rule that runs a hook of its own from its update_core,
    through the hook registry its hooks run through."""

    extra = H.WeightDecay(1e-4)
    returned = 'not called'

    def update_core(self, param):
        SelfHooking.returned = self._hookable.call_hook(
            self.extra, (self, param))
        super(SelfHooking, self).update_core(param)


def test_the_hook_leaves_what_chainer_returns_unchanged():
    net = Net()
    optimizer = Op.SGD().setup(net)
    net.l2.W.update_rule = SelfHooking(optimizer.hyperparam)
    with ComputationalCostHook(fma_1flop=True) as cch:
        _grads(net)
        assert optimizer.update() is None
        assert net.l1.W.update() is None
        assert net.l1.W.update_rule.update(net.l1.W) is None
        assert optimizer.call_hook(H.WeightDecay(1e-4)) is None
        # a rule's hooks called by hand, outside any update
        net.l1.b.update_rule.add_hook(H.Lasso(1e-4))
        assert net.l1.b.update_rule._hookable.call_hooks('pre', (
            net.l1.b.update_rule, net.l1.b)) is None
    # what Chainer's _Hookable.call_hook returns
    assert SelfHooking.returned is None
    # the rule's own hook is recorded on l2's W (8), in l2
    assert ('WeightDecay', '/l2', 8) in _updates(cch)


def test_a_hook_that_has_exited_records_nothing_more():
    model = L.Classifier(Net())
    optimizer = Op.SGD().setup(model)
    with ComputationalCostHook(fma_1flop=True) as first:
        optimizer.update(model, X_ONES, T_ZEROS)
    before = _by_link(first)
    assert before == {'/predictor/l1': 16, '/predictor/l2': 10}
    with ComputationalCostHook(fma_1flop=True) as second:
        optimizer.update(model, X_ONES, T_ZEROS)
    assert _by_link(first) == before
    assert _by_link(second) == before


def test_hooks_may_exit_in_any_order():
    model = L.Classifier(Net())
    optimizer = Op.SGD().setup(model)
    outer = ComputationalCostHook(fma_1flop=True)
    inner = ComputationalCostHook(fma_1flop=True)
    outer.__enter__()
    inner.__enter__()
    outer.__exit__(None, None, None)
    optimizer.update(model, X_ONES, T_ZEROS)  # the inner hook alone records it
    inner.__exit__(None, None, None)
    assert 'update' not in outer.phase_report
    assert _by_link(inner) == {'/predictor/l1': 16, '/predictor/l2': 10}


def test_a_method_someone_else_replaced_is_left_to_them():
    real = chainer.GradientMethod.update
    calls = []

    def theirs(self, *args, **kwargs):
        calls.append(1)
        return real(self, *args, **kwargs)

    model = L.Classifier(Net())
    optimizer = Op.SGD().setup(model)
    chainer.GradientMethod.update = theirs
    try:
        with ComputationalCostHook(fma_1flop=True) as cch:
            assert chainer.GradientMethod.update is theirs
            optimizer.update(model, X_ONES, T_ZEROS)
        assert chainer.GradientMethod.update is theirs
    finally:
        chainer.GradientMethod.update = real
    assert calls == [1]
    # the rules are still recorded (no optimizer updating: in '/')
    assert sum(_by_link(cch).values()) == 26
    # replaced while the hook is active: theirs stays after the exit
    with ComputationalCostHook():
        chainer.GradientMethod.update = theirs
    try:
        assert chainer.GradientMethod.update is theirs
    finally:
        chainer.GradientMethod.update = real


class Sync(H.WeightDecay):
    """A rule's 'post' hook that also updates another model (as an
    averaging or lookahead scheme does), once."""

    def __init__(self, other_optimizer):
        super(Sync, self).__init__(1e-4)
        self.other_optimizer = other_optimizer

    def __call__(self, rule, param):
        super(Sync, self).__call__(rule, param)
        other, self.other_optimizer = self.other_optimizer, None
        if other is not None:
            other.update()


def test_a_hook_that_updates_another_model_keeps_each_timing():
    other = Net()
    other_optimizer = Op.SGD().setup(other)
    other_optimizer.add_hook(H.WeightDecay(1e-4))  # 'pre'
    other.l1.b.update_rule.add_hook(H.Lasso(1e-4), timing='post')
    _grads(other)
    net = Net()
    optimizer = Op.SGD().setup(net)
    net.l2.b.update_rule.add_hook(Sync(other_optimizer), timing='post')
    with ComputationalCostHook(fma_1flop=True) as cch:
        _grads(net)
        optimizer.update()
    hooks = [(r['type'], r['params']['timing'], r['link'], r['flops'])
             for k, r in cch.layer_report.items()
             if k != 'total' and r['phase'] == 'update'
             and r['type'] in ('WeightDecay', 'Sync')]
    # the other optimizer's 'pre' hook on its 4 parameters (never called
    # in the block: named under its target), then Sync on l2's b (2)
    assert sorted(hooks) == sorted([
        ('WeightDecay', 'pre', '/l1', 12), ('WeightDecay', 'pre', '/l1', 4),
        ('WeightDecay', 'pre', '/l2', 8), ('WeightDecay', 'pre', '/l2', 2),
        ('Sync', 'post', '/l2', 2)])
    # the other model's rule on l1's b is recorded before its 'post' hook
    rows = [(r['type'], r['link'], r['flops'])
            for k, r in cch.layer_report.items()
            if k != 'total' and r['phase'] == 'update']
    i = rows.index(('Lasso', '/l1', 8))  # a sign and a multiply-add
    assert rows[i - 1] == ('SGDRule', '/l1', 4)


def test_a_rule_that_replaces_its_state_holds_it_once():
    # SMORMS3 makes new mem, g and g2 arrays at every update: after the
    # first step the live memory at each update is the steady one, the
    # replaced arrays are not counted beside their replacements
    net = L.Linear(3, 4)
    optimizer = Op.SMORMS3().setup(net)
    with ComputationalCostHook(memory=True) as cch:
        for _ in range(3):
            _grads(net)
            optimizer.update()
    rows = [r for r in cch.records() if r[R_TYPE] == 'SMORMS3Rule']
    # created at the first step: 3 float32 states of W (12 elements) and
    # of b (4): 3 * 12 * 4 = 144 and 3 * 4 * 4 = 48 B; none later
    assert [r[R_STATE] for r in rows] == [144, 48, 0, 0, 0, 0]
    steady = rows[1][R_LIVE]
    assert [r[R_LIVE] for r in rows[2:]] == [steady] * 4


def test_the_update_phase_ends_with_the_optimizers_hooks():
    # an MPI call's phase reads in_update: inside an optimizer's hook it
    # is the update's, after the update returns it is not
    seen = []

    def hook(optimizer):
        seen.append(update_module.in_update())
    model = _model()
    optimizer = Op.SGD().setup(model)
    optimizer.add_hook(hook, name='probe', timing='pre')
    optimizer.add_hook(H.WeightDecay(1e-4), timing='post')
    # (a hook no calculator knows: one warning)
    with pytest.warns(ReportWarning, match='test_updates.hook'):
        with ComputationalCostHook():
            _step(optimizer, model)
            after = update_module.in_update()
    assert (seen, after) == ([True], False)
