"""fit_batch that never says yes to a batch that does not fit (issues 27
and 28): the true peak, check runs, margin, what its answer counts, in
words and bytes; hand-worked figures on tiny steps, and answers on small
models checked against tracemalloc's peak of the real step.

Not equivalent, though once noted so: in ``_Memory.largest``,
``range(self.first - 1, 0, -2)`` for ``-1`` skips batch 2 when the lines
start at batch 4 (a scratch that bends is bounded through 4, 9, 14):
test_below_lines_from_batch_4_every_smaller_batch_is_tried.  In
``fit_batch``, ``project_batch(run, 2, ...)`` for ``(run, 1, ...)`` gave
the reason why a step has no memory lines when its calls differ at batch
1, where the code said "no lines (made by an earlier version?)": the
projection to batch 1 now keeps that reason (test_no_lines_says_why);
the two differ since only in the batch a cost projection's error names
("cannot be projected to batch 2").
"""

import io
import json
import math
import re
import sys
import warnings

import chainer
import chainer.functions as F
import chainer.links as L
import numpy
import pytest

from chainer_computational_cost.run import fit
from chainer_computational_cost import fit_batch
from chainer_computational_cost import project_batch
from chainer_computational_cost import cost_calculators
from chainer_computational_cost.core.records import ReportWarning

from memory_oracle import traced_peak
from cli_runs import error_of
from cli_runs import run


def _exp_step(n):
    """Bytes alive after each call at batch n, by hand: LinearFunction 16n
    (y: n*4 float32), Exp 32n (+ exp(y), kept for backward), Sum 16n + 4
    (y dropped, + the loss), BroadcastTo 16n + 4 (a view), Mul 32n + 4
    (+ the gradient of y), LinearGradWeight 32n + 52 (+ gW, 4*3*4): the
    peak, in backward: activations 16n + 4, gradients 16n + 48."""
    lin = _exp_step.lin
    lin.cleargrads()
    F.sum(F.exp(lin(numpy.ones((n, 3), numpy.float32)))).backward()


_exp_step.lin = L.Linear(3, 4, nobias=True)  # W: 48 bytes


def test_split_when_the_peak_is_in_backward():
    # 48 + 32n + 52 <= 1000: n = 28 (900 / 32), total 48 + 948 = 996
    f = fit_batch(_exp_step, capacity=1000, optimizer='sgd')
    assert (f['batch_size'], f['peak'], f['total'], f['free']) == (
        28, 948, 996, 4)
    assert (f['activations'], f['gradients'], f['scratch']) == (
        16 * 28 + 4, 16 * 28 + 48, 0)
    assert f['peak_layer'] == 'LinearGradWeight-1'
    assert f['next_total'] == 996 + 32
    # checked at 9, then at the answer (a few bytes: affordable)
    assert f['checked'] == [9, 28]
    assert f['optimizer_state_from'] == 'table'


@pytest.mark.parametrize('capacity', range(132, 420, 7))
def test_never_a_batch_whose_total_exceeds_the_capacity(capacity):
    # 100 + 32n <= capacity: the largest n by hand, and its total
    n = (capacity - 100) // 32
    f = fit_batch(_exp_step, capacity=capacity, optimizer='sgd',
                  check_answer=False)
    assert (f['batch_size'], f['total']) == (n, 100 + 32 * n)
    assert f['total'] <= capacity < f['next_total']


def test_the_capacity_exactly():
    # 100 + 32 * 28 = 996: fits 996, not 995
    assert fit_batch(_exp_step, capacity=996, optimizer='sgd',
                     check_answer=False)['batch_size'] == 28
    assert fit_batch(_exp_step, capacity=995, optimizer='sgd',
                     check_answer=False)['batch_size'] == 27


def test_batch_1_does_not_fit():
    with pytest.raises(ValueError, match=r'^batch 1 does not fit the '
                       r'capacity 131 bytes: it needs 132 bytes '
                       r'\(parameters 48, '
                       r'optimizer state 0, peak 84 during '
                       r'LinearGradWeight-1: activations 20, gradients 64, '
                       r'scratch 0\); no batch fits'):
        fit_batch(_exp_step, capacity=131, optimizer='sgd')


@pytest.mark.parametrize('margin, reserved', [
    (100, 100), (0.1, 100), (numpy.int64(100), 100), (0, 0), (0.0, 0),
    (None, 0)])
def test_margin(margin, reserved):
    # 48 + reserved + 52 + 32n <= 1000
    f = fit_batch(_exp_step, capacity=1000, optimizer='sgd', margin=margin,
                  check_answer=False)
    n = (1000 - 100 - reserved) // 32
    assert (f['batch_size'], f['margin'], f['total']) == (
        n, reserved, 100 + reserved + 32 * n)


def test_margin_fraction_rounds_up():
    # 0.1 * 1005 = 100.5: 101 bytes kept (never less than asked)
    f = fit_batch(_exp_step, capacity=1005, optimizer='sgd', margin=0.1,
                  check_answer=False)
    assert (f['margin'], f['batch_size'], f['total']) == (
        101, 25, 100 + 101 + 32 * 25)


def test_margin_cuda():
    cap = 2 << 30
    f = fit_batch(_exp_step, capacity=cap, optimizer='sgd', margin='cuda')
    # 768 MiB for the context, and the pool may hold 10 % more than the
    # rest: (2 GiB - 768 MiB) / 1.1 = 1342177280 / 1.1 = 1220161163.6
    assert f['margin'] == cap - 1220161163
    assert f['batch_size'] == (1220161163 - 100) // 32
    # the step at the answer would take 1.2 GB here: not run
    assert f['checked'] == [9]
    assert not any('CUDA' in x for x in f['left_out'])
    assert any('CUDA' in x for x in fit_batch(
        _exp_step, capacity=cap, optimizer='sgd',
        check_answer=False)['left_out'])


# 11 GiB = 11811160064; 'cuda' keeps 768 MiB (805306368) and lets the pool
# hold 10 % more than the rest: (11811160064 - 805306368) / 1.1 =
# 10005321541.8, so 11811160064 - 10005321541 = 1805838523 bytes
GTX_CUDA_MARGIN = 1805838523


def test_a_gpu_answer_leaves_the_cuda_margin_by_default():
    # issue 34: a GPU preset answered as if the arrays had all of it
    f = fit_batch(_exp_step, device='GTX1080Ti', optimizer='sgd',
                  check_answer=False)
    assert (f['device'], f['capacity'], f['margin'], f['margin_asked']) == (
        'gtx1080ti', 11811160064, GTX_CUDA_MARGIN, 'cuda')
    # 48 + 52 + 32n <= 10005321541: n = 10005321441 // 32 = 312666295
    assert f['batch_size'] == 312666295
    assert fit.answer(f) == (
        "largest batch on gtx1080ti with sgd: 312666295 (peak during "
        "LinearGradWeight-1; margin 'cuda': 1805838523 bytes kept for the "
        "CUDA context and the memory pool)")
    assert "a margin of 1805838523 bytes ('cuda': the CUDA context, " \
        "fit.CUDA_CONTEXT, and the memory pool, fit.POOL_SLACK of the " \
        "rest)" in f['counted']
    # margin=0 is the user's word, and the answer says what it leaves out
    f = fit_batch(_exp_step, device='gtx1080ti', optimizer='sgd', margin=0,
                  check_answer=False)
    # (11811160064 - 100) // 32 = 369098748
    assert (f['batch_size'], f['margin'], f['margin_asked']) == (
        369098748, 0, 0)
    assert fit.answer(f).endswith(
        "(peak during LinearGradWeight-1; margin 0: nothing kept for the "
        "CUDA context and the memory pool)")
    assert any('CUDA' in x for x in f['left_out'])


def test_a_margin_of_minus_zero_is_asked_as_zero():
    # --mode json printed "margin_asked": -0.0
    f = fit_batch(_exp_step, capacity=1000, optimizer='sgd', margin=-0.0)
    assert math.copysign(1, f['margin_asked']) == 1.0
    assert f['batch_size'] == 28  # as with no margin (see below)


def test_a_capacity_has_no_margin_by_default_and_a_name():
    f = fit_batch(_exp_step, capacity=1000, optimizer='sgd')
    assert (f['device'], f['margin'], f['margin_asked']) == (None, 0, 0)
    assert fit.answer(f) == ('largest batch in 1000 bytes with sgd: 28 '
                             '(peak during LinearGradWeight-1)')
    f = fit_batch(_exp_step, capacity=1000, optimizer='sgd', margin=100)
    assert fit.answer(f) == ('largest batch in 1000 bytes with sgd: 25 '
                             '(peak during LinearGradWeight-1; margin 100: '
                             '100 bytes kept)')  # (900 - 100) // 32 = 25


def test_a_cpu_preset_has_no_capacity():
    # the CPU's memory is the machine's: refused, naming what is allowed
    with pytest.raises(ValueError) as e:
        fit_batch(_exp_step, device='EPYC9654')
    assert str(e.value) == (
        "device 'EPYC9654' is a CPU preset: its memory is the machine's, "
        "which no preset knows; give it in bytes (capacity=, or --fit "
        "BYTES), or a GPU preset: gtx1080ti, a100, a100-40gb, a100-80gb, "
        "h100, p100, v100")
    with pytest.raises(ValueError, match="device 'tpu' has no memory "
                       "capacity preset; presets: gtx1080ti, a100, "):
        fit_batch(_exp_step, device='tpu')


@pytest.mark.parametrize('margin', [-1, 'rocm', True, float('inf'),
                                    float('nan'), 1.0, 100.0, -0.1, '0.1'])
def test_bad_margin(margin):
    # a float is a fraction of the capacity: 1.0 (all of it) and 100.0
    # (which was taken as 100 bytes, and 1.0 as 1 byte) are refused
    with pytest.raises(ValueError) as e:
        fit_batch(_exp_step, capacity=1000, margin=margin)
    assert str(e.value) == (
        "margin must be bytes (an int >= 0), a fraction of the capacity (a "
        "float in [0, 1)) or 'cuda', got {!r}".format(margin))


@pytest.mark.parametrize('check', ['yes', 1, 0])
def test_bad_check_answer(check):
    # 1 and 0 were taken as True and False
    with pytest.raises(ValueError, match='check_answer must be None, True '
                                         'or False'):
        fit_batch(_exp_step, capacity=1000, check_answer=check)


def test_check_answer_takes_a_numpy_bool():
    # as every flag does: the same answer as with True
    assert fit_batch(_exp_step, capacity=1000,
                     check_answer=numpy.bool_(True)) == fit_batch(
        _exp_step, capacity=1000, check_answer=True)


def _mean_step(n):
    """The batch-1 run differs (Chainer broadcasts nothing there).  At
    batch n: h (n, 4) 16n, its mean over the batch 16 more: 16n + 16
    after Mean-1; in backward, 68 after LinearGradWeight-1 (gW 48, the
    mean's gradient 16, the loss 4), and during it the copy of its input
    gradient, a broadcast view (n, 4) of the mean's: 16n more (none at
    batch 1, where the gradient is reshaped, contiguous)."""
    lin = _exp_step.lin
    lin.cleargrads()
    x = numpy.ones((n, 3), numpy.float32)
    F.sum(F.mean(lin(x), axis=0)).backward()


def test_a_step_whose_batch_1_run_differs():
    # issue 27: KeyError 'error'.  48 + 68 + 16n <= 1000: n = 55, 996
    f = fit_batch(_mean_step, capacity=1000, optimizer='sgd')
    assert (f['batch_size'], f['total'], f['peak_layer']) == (
        55, 996, 'LinearGradWeight-1')
    # the loss; the mean's gradient and gW; the copy
    assert (f['activations'], f['gradients'], f['scratch']) == (
        4, 16 + 48, 16 * 55)
    # batch 1, below the lines through 2, 3, 4, from its own run: 48 + 68
    # = 116 fits 116 (batch 2 needs 148)
    assert fit_batch(_mean_step, capacity=147,
                     optimizer='sgd')['batch_size'] == 1
    with pytest.raises(ValueError, match='batch 1 does not fit the '
                       'capacity 115 bytes: it needs 116 bytes'):
        fit_batch(_mean_step, capacity=115, optimizer='sgd')


def _branching_step(limit):
    def step(n):
        lin = _exp_step.lin
        lin.cleargrads()
        h = lin(numpy.ones((n, 3), numpy.float32))
        if n > limit:  # a bigger model beyond some batch
            h = F.concat([h, h, h, h], axis=1)
        F.sum(h).backward()
    return step


def test_refused_when_the_step_leaves_the_line_below_9():
    # issue 27: an answer from batches 1, 2, 3 without a check run
    with pytest.raises(ValueError, match='fit_batch cannot answer: the step '
                       'at batch 9 left the line of the smaller batches: '
                       'its calls differ: 7 calls at batch 9, 4 before; '
                       'call 2 is Concat-1 at batch 9, Sum-1 before'):
        fit_batch(_branching_step(8), capacity=10 ** 6, optimizer='sgd')


def test_refused_when_the_step_leaves_the_line_at_the_answer():
    # on the line at 9; the answer is run: h (16n) stays alive in backward
    # beside the loss and gW, and LinearGradWeight copies its input
    # gradient (a broadcast view, 16n): 48 + 32n + 52 <= 10**5 up to 3121
    with pytest.raises(ValueError, match='at batch 3121 left the line'):
        fit_batch(_branching_step(100), capacity=10 ** 5, optimizer='sgd')
    # told not to run it: the answer, unchecked, says so
    f = fit_batch(_branching_step(100), capacity=10 ** 5, optimizer='sgd',
                  check_answer=False)
    assert (f['batch_size'], f['checked']) == (3121, [9])


def test_memory_off_its_line_at_9():
    def step(n):
        lin = _exp_step.lin
        lin.cleargrads()
        y = lin(numpy.ones((n, 3), numpy.float32))
        loss = F.sum(y)
        if n != 9:
            del y  # freed before backward, but at batch 9
        loss.backward()
    # after BroadcastTo-1: the loss, 4 bytes; at 9 y too: 16*9 + 4 = 148
    with pytest.raises(ValueError, match='the live bytes of BroadcastTo-1 '
                       'at batch 9 are 4 on the line through the smaller '
                       'batches but 148 in a real run'):
        fit_batch(step, capacity=10 ** 6, optimizer='sgd')


def test_a_projection_is_not_checked():
    p = project_batch(_exp_step, 4)
    f = fit_batch(p, capacity=1000, optimizer='sgd')
    assert (f['batch_size'], f['checked']) == (28, [])


# Small models: the answer against tracemalloc's peak of the real step

def _traced_total(model, make_step, n, params):
    """The parameters plus tracemalloc's peak of a real training step at
    batch ``n`` (inputs made before; the optimizer made in the step, so
    that its state is traced)."""
    return params + traced_peak(make_step(n))


def _largest_traced(model, make_step, capacity, params, guess):
    """The largest batch whose real step fits ``capacity``, by bisection
    from around ``guess``."""
    lo, hi = 0, max(guess, 1)
    while _traced_total(model, make_step, hi, params) <= capacity:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _traced_total(model, make_step, mid, params) <= capacity:
            lo = mid
        else:
            hi = mid
    return lo


def _training(model, optimizer, shape, classes):
    """``make_step(n)``: one training step at batch n with a fresh
    ``optimizer`` (its state counts in the step), inputs made before."""
    def make_step(n):
        rng = numpy.random.RandomState(n)
        x = rng.rand(n, *shape).astype(numpy.float32)
        t = rng.randint(0, classes, n).astype(numpy.int32)

        def step():
            opt = optimizer()
            opt.setup(model)
            model.cleargrads()
            F.softmax_cross_entropy(model(x), t).backward()
            opt.update()
        return step
    return make_step


def small_cnn():
    model = chainer.Sequential(
        L.Convolution2D(3, 16, 3, pad=1), F.relu,
        L.Convolution2D(16, 16, 3, pad=1), F.relu,
        lambda h: F.max_pooling_2d(h, 2),
        L.BatchNormalization(16), L.Linear(None, 10))
    with chainer.using_config('train', False), chainer.no_backprop_mode():
        model(numpy.zeros((1, 3, 32, 32), numpy.float32))
    return model


def mlp():
    return chainer.Sequential(L.Linear(784, 1000), F.relu,
                              L.Linear(1000, 1000), F.relu,
                              L.Linear(1000, 10))


def _params(model):
    return sum(p.array.nbytes for p in model.params())


MiB = 1 << 20


@pytest.mark.slow
@pytest.mark.parametrize('build, shape, capacity, name, optimizer', [
    (small_cnn, (3, 32, 32), 16 * MiB, 'sgd', chainer.optimizers.SGD),
    (small_cnn, (3, 32, 32), 16 * MiB, 'adam', chainer.optimizers.Adam),
    (mlp, (784,), 32 * MiB, 'sgd', chainer.optimizers.SGD),
], ids=['cnn-sgd', 'cnn-adam', 'mlp-sgd'])
def test_the_answer_fits_a_real_step(build, shape, capacity, name,
                                     optimizer):
    model = build()
    make_step = _training(model, optimizer, shape, 10)
    f = fit_batch(lambda n: make_step(n)(), capacity=capacity,
                  optimizer=name)
    params = _params(model)
    n = f['batch_size']
    # the answer's real step fits, and the largest that does is not 5 %
    # above it; what no scratch function counts is allowed for: the
    # buffers of a NumPy ufunc that casts an operand in chunks (ReLU's
    # gradient multiplies by a bool mask), at most two operands of
    # numpy.getbufsize() elements of 8 bytes (fit.NUMPY_BUFFERS)
    assert _traced_total(model, make_step, n, params) <= \
        capacity + fit.NUMPY_BUFFERS
    largest = _largest_traced(model, make_step, capacity, params, n)
    assert n >= 0.95 * largest, (n, largest)


def test_mlp_with_adam_fits_no_batch():
    # Adam on the CPU: parameters, gradients and two moments are 4 x
    # 1796010 * 4 = 28.7 MB; the update's temporaries make it more than
    # 32 MiB at any batch.  By hand: 1796010
    # * 4 = 7184040 bytes of parameters, 2 x that of moments (measured, in
    # the state a first update creates: the table's figure); the peak
    # during the update of the 1000x1000 weight (AdamRule-5): the
    # gradients, 7184040, and its three temporaries, 3 * 4000000
    model = mlp()
    make_step = _training(model, chainer.optimizers.Adam, (784,), 10)
    with pytest.raises(ValueError, match=r'batch 1 does not fit the '
                       r'capacity 33554432 bytes: it needs 40736160 bytes '
                       r'\(parameters 7184040, optimizer state 14368080, '
                       r'peak 19184040 during AdamRule-5: activations 0, '
                       r'gradients 7184040, scratch 12000000\); no batch '
                       r'fits'):
        fit_batch(lambda n: make_step(n)(), capacity=32 * MiB,
                  optimizer='adam')
    assert _traced_total(model, make_step, 1, _params(model)) > 32 * MiB


def test_suggested_margin_figures():
    assert (fit.CUDA_CONTEXT, fit.POOL_SLACK) == (768 * MiB, 0.10)
    # 2 * 8192 * 8
    assert fit.NUMPY_BUFFERS == 131072


# The optimizer's update in the step

def _updating_step(make_optimizer, persistent):
    """A training step of a Linear(3, 4, nobias) (W: 48 bytes) with its
    update: the optimizer made once (its state created by the first run
    only) or in each step."""
    lin = L.Linear(3, 4, nobias=True)
    kept = make_optimizer().setup(lin) if persistent else None

    def step(n):
        optimizer = kept or make_optimizer().setup(lin)
        lin.cleargrads()
        F.sum(lin(numpy.ones((n, 3), numpy.float32))).backward()
        optimizer.update()
    return step


@pytest.mark.parametrize('persistent', [False, True])
def test_adam_state_measured(persistent):
    step = _updating_step(chainer.optimizers.Adam, persistent)
    f = fit_batch(step, capacity=1000, optimizer='adam')
    # the state of W, m and v: 2 * 48 = 96, the table's figure; alive
    # throughout the step (made in the step or before); the peak 16n + 52
    # during LinearGradWeight-1 (as _linear_step), or during the update:
    # gW 48 + 3 * 48 of Adam's temporaries = 192; 48 + 96 + 16n + 52 <=
    # 1000 up to n = 50
    assert (f['optimizer_state'], f['optimizer_state_from'],
            f['optimizer_state_table']) == (96, 'measured', 96)
    assert (f['batch_size'], f['total']) == (50, 996)
    # small batches peak in the update: 48 + 96 + 192 = 336 at batch 1
    with pytest.raises(ValueError, match=r'batch 1 does not fit the '
                       r'capacity 335 bytes: it needs 336 bytes '
                       r'\(parameters 48, '
                       r'optimizer state 96, peak 192 during AdamRule-1: '
                       r'activations 0, gradients 48, scratch 144\)'):
        fit_batch(step, capacity=335, optimizer='adam')


def test_the_state_measured_differs_from_the_table():
    # the step runs MomentumSGD (a velocity: 48 bytes) but fit_batch is
    # told Adam (2 x 48): the measured state counts, the table is said
    step = _updating_step(chainer.optimizers.MomentumSGD, False)
    f = fit_batch(step, capacity=1000, optimizer='adam')
    assert (f['optimizer_state'], f['optimizer_state_table']) == (48, 96)
    assert "the optimizer state the first update of a run allocated, 48 " \
        "bytes, alive throughout the step (the table's adam would say 96: " \
        "2 x the parameters)" in f['counted']
    # 48 + 48 + 16n + 52 <= 1000 up to n = 53
    assert f['batch_size'] == 53


def test_sgd_update_has_no_state():
    step = _updating_step(chainer.optimizers.SGD, False)
    f = fit_batch(step, capacity=1000, optimizer='sgd')
    # no state made: the table's (none); the update's temporaries counted
    assert (f['optimizer_state'], f['optimizer_state_from']) == (0, 'table')
    assert "that call's scratch (memory it allocates and frees inside " \
        "itself), the update's temporaries among them" in f['counted']
    assert f['batch_size'] == 56  # 48 + 16n + 52 <= 1000


@pytest.mark.parametrize('make_optimizer, runs, rule, given, table', [
    # Adam's m and v exist before the runs (one step made beforehand): no
    # run creates them and the table counts the state; sgd's row would
    # count none of the 2 x 48 bytes
    (chainer.optimizers.Adam, 'adam', 'AdamRule', 'sgd', 0),
    (chainer.optimizers.MomentumSGD, 'momentumsgd', 'MomentumSGDRule',
     'adam', 2),
    # SGD has no state: adam's row would count 2 x 48 bytes of nothing
    (chainer.optimizers.SGD, 'sgd', 'SGDRule', 'adam', 2),
])
def test_the_table_is_refused_for_another_optimizer_than_the_steps(
        make_optimizer, runs, rule, given, table):
    step = _updating_step(make_optimizer, True)
    step(1)
    with pytest.raises(ValueError, match=(
            r"^optimizer is '{}' \({} x the parameters of state\), but the "
            r'step runs {} \(its update records are {} calls\), whose state '
            r'existed before the runs and is counted from the table: give '
            r"optimizer='{}'$").format(given, table, runs, rule, runs)):
        fit_batch(step, capacity=1000, optimizer=given)


def test_the_table_of_the_optimizer_the_step_runs():
    # Adam's state made before the runs, optimizer='adam': the table's 2 x
    # 48 = 96 bytes, the figure test_adam_state_measured measures; 48 +
    # 96 + 16n + 52 <= 1000 up to n = 50.  A hook's update records
    # (WeightDecay) are no optimizer's: they do not stand in the way
    step = _updating_step(chainer.optimizers.Adam, True)
    step(1)
    f = fit_batch(step, capacity=1000, optimizer='adam')
    assert (f['optimizer_state'], f['optimizer_state_from'],
            f['batch_size']) == (96, 'table', 50)
    lin = L.Linear(3, 4, nobias=True)
    opt = chainer.optimizers.SGD().setup(lin)
    opt.add_hook(chainer.optimizer_hooks.WeightDecay(1e-4))

    def decayed(n):
        lin.cleargrads()
        F.sum(lin(numpy.ones((n, 3), numpy.float32))).backward()
        opt.update()
    with pytest.raises(ValueError, match='the step runs sgd'):
        fit_batch(decayed, capacity=1000, optimizer='momentumsgd')
    assert fit_batch(decayed, capacity=1000, optimizer='sgd')[
        'optimizer_state'] == 0


# The command line: --margin, and a GPU's default

#: The one-ReLU model's training step with SGD, in raw CSV.
TINY_SGD = ('cli_models:build_tiny', '--shape', '2,3', '--unit', 'raw',
            '--mode', 'csv', '--train', '--optimizer', 'sgd')


def _cli(capsys, *argv):
    status, out = run(*(TINY_SGD + argv))
    return status, out, capsys.readouterr().err


def test_cli_margin(capsys):
    # the one-ReLU model's step: 69n + 4 bytes
    # (tests/collect/test_live_memory.py's test_cli_fit); 0.1 of 1000
    # kept: 69n + 4 <= 900 up to n = 12
    status, out, err = _cli(capsys, '--fit', '1000', '--margin', '0.1')
    assert status == 0
    assert err == ('largest batch in 1000 bytes with sgd: 12 (peak during '
                   'SoftmaxCrossEntropy-1; margin 0.1: 100 bytes kept)\n')
    assert 'margin,100\n' in out
    # bytes: 69n + 4 <= 1000 - 47 up to n = 13
    assert _cli(capsys, '--fit', '1000', '--margin', '47')[2].startswith(
        'largest batch in 1000 bytes with sgd: 13 ')


def test_cli_gpu_answer_says_its_margin(capsys):
    # (11811160064 - 1805838523 - 4) // 69 = 145004659
    status, out, err = _cli(capsys, '--fit', 'gtx1080ti')
    assert status == 0
    assert err == ("largest batch on gtx1080ti with sgd: 145004659 (peak "
                   "during SoftmaxCrossEntropy-1; margin 'cuda': 1805838523 "
                   "bytes kept for the CUDA context and the memory pool)\n")
    # --margin 0: (11811160064 - 4) // 69 = 171176232
    status, out, err = _cli(capsys, '--fit', 'gtx1080ti', '--margin', '0')
    assert err.startswith('largest batch on gtx1080ti with sgd: 171176232 ')
    assert err.endswith('margin 0: nothing kept for the CUDA context and '
                        'the memory pool)\n')


@pytest.mark.parametrize('argv, message', [
    (('--margin', '1.0', '--fit', 'h100'),
     "error: argument --margin: must be bytes (an integer >= 0), a fraction "
     "of the capacity (a decimal in [0, 1), e.g. 0.1) or 'cuda'; got '1.0' "
     "(see --help)\n"),
    (('--margin', '-1', '--fit', 'h100'), "got '-1' (see --help)\n"),
    (('--margin', 'rocm', '--fit', 'h100'), "got 'rocm' (see --help)\n"),
])
def test_cli_bad_margin(argv, message, capsys):
    assert error_of(capsys, *(TINY_SGD + argv)).endswith(message[:-1])


@pytest.mark.parametrize('margin', [1000, 5000])
def test_a_margin_that_leaves_no_room_is_refused_before_any_run(margin):
    ran = []
    with pytest.raises(ValueError) as e:
        fit_batch(lambda n: ran.append(n), capacity=1000, margin=margin)
    assert str(e.value) == (
        'margin {0} keeps {0} bytes free of a capacity of 1000 bytes: no '
        'batch can fit; give a margin below the capacity'.format(margin))
    assert ran == []


@pytest.mark.parametrize('capacity', [1000, 768 * 2 ** 20])
def test_a_cuda_margin_on_less_than_the_context_tells_the_context(capacity):
    # the CUDA context alone, 768 MiB = 805306368 bytes, takes them all;
    # the message must not say the margin is the capacity
    ran = []
    with pytest.raises(ValueError) as e:
        fit_batch(lambda n: ran.append(n), capacity=capacity, margin='cuda')
    assert str(e.value) == (
        "margin 'cuda' keeps the CUDA context free (805306368 bytes, "
        'fit.CUDA_CONTEXT) of a capacity of {} bytes: no batch can fit; '
        'give a margin in bytes or a fraction below the capacity, or '
        '0'.format(capacity))
    assert ran == []


def test_cli_a_margin_that_leaves_no_room(capsys):
    # refused before the model is built (RAISING raises when built): an
    # a100 holds 80 GiB = 85899345920 bytes
    assert error_of(capsys, 'cli_models:build_raising', '--train', '--fit',
                    'a100', '--margin', '100000000000') == (
        'error: --margin: margin 100000000000 keeps 100000000000 bytes free '
        'of a capacity of 85899345920 bytes: no batch can fit; give a '
        'margin below the capacity')


def test_cli_margin_needs_fit(capsys):
    assert _cli(capsys, '--margin', 'cuda') == (
        2, '', "error: --margin needs --fit: it is the memory the fit's "
        "answer keeps free\n")


# Answers below the lines' batches, below 9, at the capacity exactly

def test_below_the_lines_at_the_capacity_exactly():
    # _mean_step's lines go through 2, 3, 4; batch 1 from its own run:
    # 48 + 68 = 116 bytes, so 116 fits batch 1 exactly, 115 nothing
    f = fit_batch(_mean_step, capacity=116, optimizer='sgd')
    assert (f['batch_size'], f['total'], f['free'], f['checked']) == (
        1, 116, 0, [])
    with pytest.raises(ValueError, match='batch 1 does not fit the '
                       'capacity 115 bytes'):
        fit_batch(_mean_step, capacity=115, optimizer='sgd')


@pytest.mark.parametrize('n', [3, 4, 5, 8])
def test_answers_below_9(n):
    # 100 + 32n bytes exactly: the check run is the answer itself (batch
    # 9 would not fit), none when the answer was one of the runs 1, 2, 3
    f = fit_batch(_exp_step, capacity=100 + 32 * n, optimizer='sgd')
    assert (f['batch_size'], f['total'], f['free']) == (n, 100 + 32 * n, 0)
    assert f['checked'] == ([] if n <= 3 else [n])
    assert f['next_total'] == 100 + 32 * (n + 1)


EXP = chainer.functions.math.exponential.Exp


def test_a_custom_scratch_that_shrinks_with_the_batch(monkeypatch):
    # Exp allocates 600 - 8n bytes inside itself (less as the batch
    # grows): during Exp-1, 32n alive (y and exp(y)) + 600 - 8n; during
    # LinearGradWeight-1, 32n + 52 (see _exp_step); with W's 48 bytes:
    # 648 + 24n <= 1000 up to n = 14 (984 bytes), 100 + 32n up to 28
    from chainer_computational_cost import cost_calculators

    def scratch(func, in_data, out_shapes=None, backend=None):
        return 600 - 8 * in_data[0].shape[0]
    monkeypatch.setitem(cost_calculators.scratches, EXP, scratch)
    f = fit_batch(_exp_step, capacity=1000, optimizer='sgd')
    assert (f['batch_size'], f['total'], f['peak_layer'], f['scratch'],
            f['checked']) == (14, 984, 'Exp-1', 600 - 8 * 14, [9, 14])
    # one more: 648 + 24 * 15 = 1008
    assert f['next_total'] == 1008


# The models (issue 34): the answer against tracemalloc's peak of
# the real step, the optimizer's update in it

def brn_mlp():
    """784-400-10 with batch renormalization and dropout: MSVAG's step at
    batch 1 takes 13.9 MB by tracemalloc (the issue's MLP, 13.7)."""
    return chainer.Sequential(
        L.Linear(784, 400), L.BatchRenormalization(400), F.relu,
        F.dropout, L.Linear(400, 10))


def swish_mlp():
    """784-1000-10 with L.Swish and F.softplus."""
    return chainer.Sequential(L.Linear(784, 1000), L.Swish((1000,)),
                              F.softplus, L.Linear(1000, 10))


# MSVAG divides 0 by 0 at its first update (Chainer's msvag.py, rho * s
# with s still 0): Chainer's warning, not ours
@pytest.mark.filterwarnings('ignore:invalid value:RuntimeWarning')
@pytest.mark.filterwarnings('ignore:the backward of old-style')
def test_msvag_in_the_step_no_batch_fits_12_mib():
    # the issue: answer 228, the real step 19.36 MB there and 13.7 MB at
    # batch 1
    model = brn_mlp()
    make_step = _training(model, chainer.optimizers.MSVAG, (784,), 10)
    assert _traced_total(model, make_step, 1, _params(model)) > 12 * MiB
    with pytest.raises(ValueError, match='batch 1 does not fit the '
                       'capacity 12582912 bytes'):
        fit_batch(lambda n: make_step(n)(), capacity=12 * MiB)


@pytest.mark.parametrize('build, rule, capacity, name', [
    # the answers: 133 (real largest 59), 2586 (the real step
    # 1.79x the capacity), 472 (2.3 MB over).  How close an answer comes
    # to the largest batch that fits is not the point here (the brn case
    # answered 404 where 485 fit when written): that it fits is.
    (brn_mlp, chainer.optimizers.RMSprop, 8 * MiB, 'adam'),
    (swish_mlp, chainer.optimizers.SGD, 16 * MiB, 'sgd'),
    (mlp, chainer.optimizers.RMSprop, 26 * MiB, 'momentumsgd'),
], ids=['brn-rmsprop-8mib', 'swish-softplus-sgd-16mib',
        'mlp-rmsprop-momentumsgd-26mib'])
# (batch renormalization's backward, whose FLOPs are not counted, is told)
@pytest.mark.filterwarnings('ignore:the backward of old-style')
def test_never_a_batch_whose_real_step_exceeds_the_capacity(
        build, rule, capacity, name):
    model = build()
    make_step = _training(model, rule, (784,), 10)
    try:
        f = fit_batch(lambda n: make_step(n)(), capacity=capacity,
                      optimizer=name)
    except ValueError as e:
        # "no batch fits" is an answer too, when batch 1 really does not
        assert str(e).endswith('no batch fits')
        assert _traced_total(model, make_step, 1, _params(model)) > capacity
        return
    n = f['batch_size']
    # what no scratch function counts is allowed for, as above
    assert _traced_total(model, make_step, n, _params(model)) <= \
        capacity + fit.NUMPY_BUFFERS, n


def _relu(n):
    F.relu(numpy.ones((n, 4), numpy.float32))  # 16n bytes, the peak


def test_a_margin_is_counted_in_bytes_and_named_as_given():
    # a quarter of 1000 bytes kept back: 250, leaving 750 for the step:
    # 16 * 46 = 736 <= 750 < 16 * 47 = 752; a margin in bytes stays so
    f = fit_batch(_relu, capacity=1000, optimizer='sgd', margin=0.25,
                  check_answer=False)
    assert f['batch_size'] == 46
    assert f['counted'][-1] == 'a margin of 250 bytes (0.25)'
    f = fit_batch(_relu, capacity=1000, optimizer='sgd', margin=100,
                  check_answer=False)  # 900: 16 * 56 = 896
    assert (f['batch_size'], f['counted'][-1]) == (
        56, 'a margin of 100 bytes (100)')


# What the answer says it counted and left out, with and without the
# optimizer's update in the step

_NOT_IN_THE_RUN = ("the optimizer's update temporaries (its update is not "
                   'in the run)')


def test_without_an_update_its_temporaries_are_left_out_in_words():
    f = fit_batch(_relu, capacity=1000, optimizer='momentumsgd',
                  check_answer=False)
    assert f['counted'][1:4] == [
        'the optimizer state, 1 x the parameters (momentumsgd)',
        'the arrays alive during the call of the peak: activations kept '
        'for backward and gradients',
        "that call's scratch (memory it allocates and frees inside "
        'itself)']
    assert _NOT_IN_THE_RUN in f['left_out']


def test_with_an_update_its_temporaries_are_counted_in_words():
    # MomentumSGD's velocity exists before every run (one update made
    # beforehand): the table counts it, and says no run created it
    lin = L.Linear(2, 2, nobias=True)  # W: 2*2*4 = 16 bytes
    opt = chainer.optimizers.MomentumSGD().setup(lin)

    def step(n):
        lin.cleargrads()
        F.sum(lin(numpy.ones((n, 2), numpy.float32))).backward()
        opt.update()
    step(1)
    f = fit_batch(step, capacity=10000, optimizer='momentumsgd',
                  check_answer=False)
    assert (f['optimizer_state'], f['optimizer_state_from']) == (16, 'table')
    assert f['counted'][1] == ('the optimizer state, 1 x the parameters '
                               '(momentumsgd: no run created it)')
    assert f['counted'][3] == (
        "that call's scratch (memory it allocates and frees inside "
        "itself), the update's temporaries among them")
    assert _NOT_IN_THE_RUN not in f['left_out']


# A call whose memory shrinks as the batch grows (a custom scratch)

def test_a_batch_fits_where_a_shrinking_call_is_over_at_batch_1(
        monkeypatch):
    # Exp's scratch planted as 440 - 44n bytes: during Exp-1 its output
    # (4n) and that scratch, 440 - 40n, over 320 at batch 1 (400) but 40
    # at batch 10; then ReLU's output, 32n, alone (Exp's is freed):
    # 32n <= 320 up to n = 10 (352 at 11), where Exp's call takes 40
    monkeypatch.setitem(
        cost_calculators.scratches, chainer.functions.math.exponential.Exp,
        lambda func, in_data, **kwargs: 440 - 44 * len(in_data[0]))

    def step(n):
        F.exp(numpy.ones((n, 1), numpy.float32))
        F.relu(numpy.ones((n, 8), numpy.float32))
    f = fit_batch(step, capacity=320, optimizer='sgd', check_answer=False)
    assert (f['batch_size'], f['total'], f['peak_layer']) == (10, 320,
                                                              'ReLU-1')


# A scratch off its line: bounded from above, and said so

_RELU = chainer.functions.activation.relu.ReLU


def _relu_step(n):
    F.relu(numpy.ones((n, 4), numpy.float32))  # 16n bytes of output


def test_a_scratch_that_bends_is_bounded_by_a_line_and_said_so(
        monkeypatch):
    # ReLU's scratch planted as 4n, 4 more at odd batches: 16 at 4, 40 at
    # 9, 56 at 14 (the lines' batches when 1, 2, 3 and 2, 3, 4 fail).
    # The steepest slope up, ceil((40 - 16) / 5) = 5, through the highest
    # point relative to it: max(16 - 20, 40 - 45, 56 - 70) = -4, so the
    # peak is 16n - 4 + 5n = 21n - 4 <= 230 up to n = 11 (227)
    monkeypatch.setitem(
        cost_calculators.scratches, _RELU,
        lambda func, in_data, **kwargs: 4 * len(in_data[0])
        + 4 * (len(in_data[0]) % 2))
    f = fit_batch(_relu_step, capacity=230, optimizer='sgd',
                  check_answer=False)
    assert (f['batch_size'], f['total'], f['scratch']) == (11, 227, 51)
    # the answer run (11 is odd: 44 + 4 = 48 of scratch, under the bound's
    # 51) is within the bound, and then its figures are the run's: 16 *
    # 11 + 48 = 224
    f = fit_batch(_relu_step, capacity=230, optimizer='sgd')
    assert (f['batch_size'], f['total'], f['scratch'], f['checked']) == (
        11, 224, 48, [11])
    assert f['counted'][4] == (
        'the scratch of ReLU-1, not affine in the batch size, bounded by a '
        'line above its runs')


def test_a_scratch_under_its_line_at_a_check_run_is_said_an_upper_bound(
        monkeypatch):
    # ReLU's scratch planted as 4n up to batch 8, none from 9 (NumPy
    # reusing a temporary): the line through 1, 2, 3 says 4n, above the
    # runs at 9 and at the answer; the peak on the line, 16n + 4n = 20n <=
    # 1000 up to n = 50, a batch that was run, so its figures are the
    # run's: 16 * 50 = 800 bytes, no scratch
    monkeypatch.setitem(
        cost_calculators.scratches, _RELU,
        lambda func, in_data, **kwargs: 4 * len(in_data[0])
        if len(in_data[0]) < 9 else 0)
    f = fit_batch(_relu_step, capacity=1000, optimizer='sgd')
    assert (f['batch_size'], f['total'], f['scratch'], f['checked']) == (
        50, 800, 0, [9, 50])
    assert f['counted'][4] == (
        'the scratch of ReLU-1 on the line through the smaller batches, '
        'above what a check run measured (NumPy reuses temporaries of '
        'large arrays): an upper bound')


def test_the_casting_buffers_left_out_are_numpys_two_of_8_byte_items():
    # NumPy's ufunc buffer holds numpy.getbufsize() items (8192 by
    # default), at most two operands of 8 bytes: 2 * 8192 * 8 = 131072,
    # the 128 KiB left_out names
    assert fit.NUMPY_BUFFERS == 2 * numpy.getbufsize() * 8 == 128 * 1024
    assert "(at most fit.NUMPY_BUFFERS, 128 KiB)" in fit_batch(
        _relu, capacity=1000, check_answer=False)['left_out'][1]


def test_a_capacity_of_1_byte_is_a_capacity():
    # any number of bytes > 0 is a capacity: batch 1 (16 bytes) does not
    # fit in 1
    with pytest.raises(ValueError, match='batch 1 does not fit the '
                       'capacity 1 bytes'):
        fit_batch(_relu, capacity=1, optimizer='sgd')


def test_a_scratch_of_fixed_size_counts_at_every_batch(monkeypatch):
    # ReLU's scratch planted as a 100-byte workspace plus 4n: during
    # ReLU-1, 16n + 100 + 4n = 20n + 100 <= 1000 up to n = 45 (1000
    # exactly); 46 would need 1020
    monkeypatch.setitem(
        cost_calculators.scratches, _RELU,
        lambda func, in_data, **kwargs: 100 + 4 * len(in_data[0]))
    f = fit_batch(_relu_step, capacity=1000, optimizer='sgd')
    assert (f['batch_size'], f['total'], f['scratch'], f['next_total']) == (
        45, 1000, 280, 1020)


def test_a_step_that_grows_by_one_byte_a_sample():
    # an int8 cast makes n bytes, the step's only growth: 100 fit 100
    def step(n):
        F.cast(numpy.ones((n,), numpy.float32), numpy.int8)
    f = fit_batch(step, capacity=100, optimizer='sgd', check_answer=False)
    assert (f['batch_size'], f['total'], f['peak_layer']) == (100, 100,
                                                              'Cast-1')


def _momentum_step():
    """A training step of a Linear(100, 100, nobias) (W: 40000 bytes) whose
    MomentumSGD is made in the step: each run's first update allocates
    the velocity."""
    lin = L.Linear(100, 100, nobias=True)

    def step(n):
        opt = chainer.optimizers.MomentumSGD().setup(lin)
        lin.cleargrads()
        F.sum(lin(numpy.ones((n, 100), numpy.float32))).backward()
        opt.update()
    return step


def test_the_state_an_update_creates_counts_once():
    # MomentumSGD made in the step: each run's update creates the
    # velocity, 100*100*4 = 40000 bytes, measured and kept apart.  During
    # the update: the gradient of W (40000) and lr * grad (40000); with
    # W and its velocity, 160000 at any batch.  During
    # LinearGradWeight-1: the loss (4), gW (40000) and the copy of the
    # broadcast gradient (400n): 80000 + 40004 + 400n <= 160000 up to
    # n = 99 (159604, under the update's 160000: the total); 160004 at 100
    step = _momentum_step()
    f = fit_batch(step, capacity=160000, optimizer='momentumsgd',
                  check_answer=False)
    assert (f['batch_size'], f['total'], f['next_total'],
            f['optimizer_state'], f['optimizer_state_from']) == (
        99, 160000, 160004, 40000, 'measured')
    with pytest.raises(ValueError, match='batch 1 does not fit'):
        fit_batch(step, capacity=159999, optimizer='momentumsgd',
                  check_answer=False)


def test_a_device_that_holds_no_batch_is_named_with_its_bytes(monkeypatch):
    # ReLU's scratch planted as 12 GiB: more than the 11 GiB
    # (11811160064 bytes) of a GTX 1080 Ti at batch 1
    monkeypatch.setitem(cost_calculators.scratches, _RELU,
                        lambda func, in_data, **kwargs: 12 << 30)
    with pytest.raises(ValueError, match=r'batch 1 does not fit gtx1080ti '
                       r'\(11811160064 bytes\)'):
        fit_batch(_relu_step, device='gtx1080ti', margin=0, optimizer='sgd')


_CAPACITY = (r'^capacity must be a number of bytes >= 1, whole \(an int, '
             r'or a float that is whole: 1e6\), got ')


@pytest.mark.parametrize('capacity', [
    # no batch fits in nothing
    0, -1, 0.0,
    # half a byte went on, as 0 bytes: 'batch 1 does not fit the
    # capacity 0 bytes'; 1000.7 was taken as 1000 bytes, silently
    0.5, 1000.7, 1e6 + 0.5])
def test_a_capacity_is_a_whole_number_of_bytes(capacity):
    with pytest.raises(ValueError, match=_CAPACITY + re.escape(
            repr(capacity)) + '$'):
        fit_batch(_relu, capacity=capacity, optimizer='sgd')


@pytest.mark.parametrize('margin', [None, 0.5, 'cuda'])
def test_a_capacity_a_float_cannot_hold_is_refused(margin):
    # 10**400 bytes was OverflowError with a fraction or 'cuda' (the
    # margin is a float of it), and without one a batch of 399 digits,
    # which project_batch refuses; the largest float, 1.798e308, is a
    # capacity
    with pytest.raises(ValueError, match=(
            r'^capacity must be a number of bytes >= 1, whole \(an int, or '
            r'a float that is whole: 1e6\), at most 1\.798e\+308 \(what a '
            r'float holds\), got 10{400}$')):
        fit_batch(_relu, capacity=10 ** 400, optimizer='sgd', margin=margin)
    largest = int(sys.float_info.max)
    f = fit_batch(_relu, capacity=largest, optimizer='sgd', margin=margin,
                  check_answer=False)
    # 16n bytes in the capacity less the margin: a batch a float holds.
    # The margin: none; half of an even number; 'cuda', the context
    # (negligible here) and 1 - 1/1.1 = 1/11 of the rest, from a float
    # division (to a float's precision)
    if margin == 'cuda':
        assert abs(f['margin'] * 11 / largest - 1) < 1e-15
    else:
        assert f['margin'] == {None: 0, 0.5: largest // 2}[margin]
    assert f['batch_size'] == (largest - f['margin']) // 16
    assert f['batch_size'] <= sys.float_info.max


def test_a_whole_float_capacity_is_its_bytes():
    # 1e3 is 1000 bytes, as capacity=1000 is: batch 46 with a quarter kept
    # (test_a_fit_shown_with_the_bytes_column_only); a NumPy int as well
    for capacity in (1e3, numpy.float64(1000.0), numpy.int64(1000)):
        f = fit_batch(_relu, capacity=capacity, optimizer='sgd',
                      margin=0.25, check_answer=False)
        assert f['capacity'] == 1000 and type(f['capacity']) is int
        assert f['batch_size'] == 46


def test_a_fit_shown_with_the_bytes_column_only(tmp_path):
    # batch 46 in 1000 bytes with a quarter kept (as above): ReLU's
    # output 16 * 46 = 736 bytes of activations, margin 250, total 986;
    # only the column asked for, in the rows' order
    f = fit_batch(_relu, capacity=1000, optimizer='sgd', margin=0.25,
                  check_answer=False)
    out = io.StringIO()
    fit.show_fit(f, out, mode='csv', unit='raw', columns=['bytes'])
    assert out.getvalue().splitlines()[1:] == [
        'Bytes B', '0', '0', '736', '0', '0', '250', '986', '1000']
    with pytest.raises(ValueError, match=r"unknown column\(s\) \['flops'\]"):
        fit.show_fit(f, io.StringIO(), columns=['flops'])
    # to a stream that cannot encode the call it names: escaped
    path = tmp_path / 'fit.csv'
    with open(str(path), 'w', encoding='ascii') as out:
        fit.show_fit(dict(f, peak_layer='Scal\u00e9-1'), out, unit='raw',
                     columns=['bytes'])
    assert path.read_text().splitlines()[0] == (
        "largest batch in 1000 bytes with sgd: 46 (peak during "
        "Scal\\xe9-1; margin 0.25: 250 bytes kept)")
    # no columns is a mistake here too, never every column
    out = io.StringIO()
    with pytest.raises(ValueError, match=r'^columns must be a non-empty '
                       r'list of column names from .*, got \[\]$'):
        fit.show_fit(f, out, columns=[])
    assert out.getvalue() == ''
    # a stream it cannot write text to: refused by name, before any line
    with pytest.raises(TypeError, match='^ost must be a writable text '):
        fit.show_fit(f, 3)


def test_a_fit_shown_as_json_in_any_case_is_one_document(capsys):
    # as test_a_fit_shown_with_the_bytes_column_only's fit: the answer
    # on stderr, whatever the case of the mode, as render takes any
    f = fit_batch(_relu, capacity=1000, optimizer='sgd', margin=0.25,
                  check_answer=False)
    fit.show_fit(f, mode='JSON', unit=None, columns=['bytes'])
    out, err = capsys.readouterr()
    assert err == ('largest batch in 1000 bytes with sgd: 46 (peak during '
                   'ReLU-1; margin 0.25: 250 bytes kept)\n')
    assert json.loads(out)['rows'][-2:] == [{'bytes': 986}, {'bytes': 1000}]


# Every argument of the wrong type is named, as every bad value is

def test_a_run_that_is_neither_callable_nor_a_projection_is_named():
    # a hook, the likely mistake, was 'run must be a callable run(n)':
    # the result of project_batch, which fit_batch takes too, went unsaid
    from chainer_computational_cost import ComputationalCostHook
    with ComputationalCostHook(memory=True) as hook:
        _relu(2)
    for given in (hook, hook.memory_report, None):
        with pytest.raises(TypeError, match=(
                r'^run must be a callable run\(n\) doing one training step '
                r'at batch n, or the result of project_batch, got ' +
                re.escape(repr(given)) + '$')):
            fit_batch(given, capacity=1000, optimizer='sgd')


def test_a_link_given_as_the_run_is_told_to_be_wrapped():
    # fit_batch's run goes to project_batch, which says it
    model = L.Classifier(L.Linear(3, 4))
    with pytest.raises(TypeError, match='got the Classifier link itself'):
        fit_batch(model, capacity=1000, optimizer='sgd')


def test_a_parameter_a_call_reads_is_counted_without_its_link():
    # a (3, 2) float32 weight, 24 bytes, read by a matmul, no link called:
    # its bytes (and SGD's table state, none) are the step's parameters
    w = chainer.Parameter(numpy.ones((3, 2), numpy.float32))

    def step(n):
        w.cleargrad()
        F.sum(F.matmul(numpy.ones((n, 3), numpy.float32), w)).backward()
    f = fit_batch(step, capacity=100000, optimizer='sgd')
    assert f['params'] == 24
    assert f['counted'][0] == ('the parameters of the links called and '
                               'those the calls read')


_GPUS = 'gtx1080ti, a100, a100-40gb, a100-80gb, h100, p100, v100'


@pytest.mark.parametrize('kwargs, message', [
    # device=80 was AttributeError: 'int' object has no attribute 'lower'
    ({'device': 80}, r'^device must be the name of a GPU preset \(' +
     _GPUS + r'\), got 80$'),
    ({'device': ['gtx1080ti']}, r"got \['gtx1080ti'\]$"),
    ({'capacity': '1000'}, _CAPACITY + "'1000'$"),
    ({'capacity': float('nan')}, 'got nan$'),
    ({'capacity': 1000, 'optimizer': ['adam']}, '^optimizer must be one of '
     r"sgd, momentumsgd, adam, got \['adam'\]$"),
    ({'capacity': 1000, 'margin': [10]}, r'^margin must be bytes \(an int '
     r'>= 0\), a fraction of the capacity \(a float in \[0, 1\)\) or '
     r"'cuda', got \[10\]$"),
    ({'capacity': 1000, 'margin': float('nan')}, 'got nan$'),
    ({'capacity': 1000, 'margin': -1}, 'got -1$'),
    ({'capacity': 1000, 'check_answer': 'yes'}, '^check_answer must be '
     r"None, True or False, got 'yes' \(str\)$"),
])
def test_a_bad_argument_is_named(kwargs, message):
    projected = project_batch(_relu, 1)
    with pytest.raises(ValueError, match=message):
        fit_batch(projected, **kwargs)
    with pytest.raises(ValueError, match=message):
        fit_batch(_relu, **kwargs)


@pytest.mark.parametrize('kwargs', [
    {'device': 80}, {'capacity': '1000'},
    {'capacity': 1000, 'optimizer': 5},
    {'capacity': 1000, 'optimizer': None},
    {'capacity': 1000, 'optimizer': ['adam']},
    # the optimizer itself for its name
    {'capacity': 1000, 'optimizer': chainer.optimizers.SGD()}])
def test_an_argument_of_the_wrong_type_is_a_type_error(kwargs):
    with pytest.raises(TypeError):
        fit_batch(project_batch(_relu, 1), **kwargs)


def test_a_measured_optimizer_state_is_counted_once():
    # MomentumSGD made in each step: every run's first update allocates
    # the velocity of W, 100*100*4 = 40000 bytes, alive from then on.
    # Counted once, beside the parameters (W, 40000): 80000 fixed.  The
    # peak at batch n is the larger of
    # - LinearGradWeight-1: the loss (4), gW (40000) and the copy of the
    #   broadcast gradient (400n): 40004 + 400n;
    # - MomentumSGDRule-1: gW (40000) and lr * grad (40000), 80000 (the
    #   velocity, alive there too, counted already).
    # In 180000 bytes: 80000 + 40004 + 400n <= 180000 up to n = 149,
    # 179604, during LinearGradWeight-1 (100604 at 150 would be 180004),
    # where the update is under the peak (test_the_state_an_update_...
    # has it at the peak)
    f = fit_batch(_momentum_step(), capacity=180000,
                  optimizer='momentumsgd')
    assert (f['batch_size'], f['params'], f['optimizer_state'],
            f['optimizer_state_from']) == (149, 40000, 40000, 'measured')
    # the peak: 4 of activations, 40000 of gradients, 400 * 149 = 59600
    # of scratch
    assert (f['peak'], f['peak_layer'], f['activations'], f['gradients'],
            f['scratch']) == (99604, 'LinearGradWeight-1', 4, 40000, 59600)
    assert (f['total'], f['next_total'], f['free']) == (179604, 180004, 396)
    # the answer was run (9, then 149 itself): its figures are the run's
    assert f['checked'] == [9, 149]


_lin = L.Linear(1, 1, nobias=True)  # W: 4 bytes


def _step(n):
    """At batch n the peak is during LinearGradWeight-1: the loss (4), gW
    (4) and the copy LinearGradWeight makes of its input gradient, a
    broadcast (n, 1) view of the loss's: 4n of scratch; 4n + 8 in all
    (the output of the Linear is not kept: Sum needs only its shape)."""
    _lin.cleargrads()
    F.sum(_lin(numpy.ones((n, 1), numpy.float32))).backward()


def _cheap_beyond_9(n):
    """The step, but run at batch 9 whenever asked for more: a run at the
    answer is off the line (and costs nothing), so fit_batch refuses when
    it runs it and answers when it does not."""
    _step(min(n, 9))


@pytest.mark.slow
def test_by_hand():
    # 4 + 4n + 8 <= 52: n = 10, total 52; 51: n = 9, total 48
    f = fit_batch(_step, capacity=52, optimizer='sgd', check_answer=False)
    assert (f['batch_size'], f['peak'], f['total'], f['scratch']) == (
        10, 48, 52, 40)
    f = fit_batch(_step, capacity=51, optimizer='sgd', check_answer=False)
    assert (f['batch_size'], f['total']) == (9, 48)


@pytest.mark.slow
def test_the_answer_is_run_up_to_1_gib_of_peak():
    # fit.CHECK_LIMIT = 1 << 30 (docstring: 1 GiB), the peak at the answer
    # included.  4n + 8 = 2**30 at n = 2**28 - 2 = 268435454: capacity
    # 4 + 2**30 leaves that peak exactly, so the answer is run (and found
    # off the line by the cheap step)
    cap = 4 + (1 << 30)
    with pytest.raises(ValueError, match='at batch 268435454 left the line'):
        fit_batch(_cheap_beyond_9, capacity=cap, optimizer='sgd')
    # 4 bytes more: n = 2**28 - 1, peak 2**30 + 4: not run, only batch 9
    f = fit_batch(_cheap_beyond_9, capacity=cap + 4, optimizer='sgd')
    assert (f['batch_size'], f['peak'], f['checked']) == (
        268435455, (1 << 30) + 4, [9])
    # told to run it: refused again
    with pytest.raises(ValueError, match='at batch 268435455 left the line'):
        fit_batch(_cheap_beyond_9, capacity=cap + 4, optimizer='sgd',
                  check_answer=True)


@pytest.mark.slow
def test_show_fit(capsys):
    # adam: 2 x 4 bytes of state; 4 + 8 + 4n + 8 <= 10**6 + 7: n = 249996
    # (4n = 999984), total 1000004.  In KiB with 3 digits: 999984 / 1024
    # = 976.546875, 1000004 / 1024 = 976.5664, 1000007 / 1024 = 976.5693
    f = fit_batch(_step, capacity=10 ** 6 + 7, optimizer='adam',
                  check_answer=False)
    fit.show_fit(f)
    assert capsys.readouterr().out == (
        'largest batch in 1000007 bytes with adam: 249996 (peak during '
        'LinearGradWeight-1)\n'
        'Memory at batch 249996,Bytes KiB\n'
        'parameters,0.004\noptimizer state,0.008\nactivations,0.004\n'
        'gradients,0.004\nscratch,976.547\ntotal,976.566\n'
        'capacity,976.569\n')
    # json: the answer on stderr, the document alone on stdout
    fit.show_fit(f, mode='json', unit=None)
    out, err = capsys.readouterr()
    assert err == ('largest batch in 1000007 bytes with adam: 249996 (peak '
                   'during LinearGradWeight-1)\n')
    assert json.loads(out)['rows'][-2:] == [
        {'name': 'total', 'bytes': 1000004},
        {'name': 'capacity', 'bytes': 1000007}]
    # a margin has its row: 100 bytes, n = (10**6 + 7 - 120) // 4 = 249971
    f = fit_batch(_step, capacity=10 ** 6 + 7, optimizer='adam', margin=100,
                  check_answer=False)
    assert fit.fit_rows(f) == [
        {'name': 'parameters', 'bytes': 4},
        {'name': 'optimizer state', 'bytes': 8},
        {'name': 'activations', 'bytes': 4},
        {'name': 'gradients', 'bytes': 4},
        {'name': 'scratch', 'bytes': 4 * 249971},
        {'name': 'margin', 'bytes': 100},
        {'name': 'total', 'bytes': 120 + 4 * 249971},
        {'name': 'capacity', 'bytes': 10 ** 6 + 7}]


class _Empty(chainer.Link):
    """A link whose only parameter has no element."""

    def __init__(self):
        super(_Empty, self).__init__()
        with self.init_scope():
            self.w = chainer.Parameter(numpy.zeros((0,), numpy.float32))


@pytest.mark.slow
def test_a_measured_state_of_1_byte():
    # MomentumSGD's velocity of an empty parameter: NumPy allocates 1 byte
    # for an array of no element, so the first update measures 1 byte of
    # state (the table says 1 x 0 bytes of parameters = 0).  The peak is
    # during Add-1: exp(x) kept for backward 16n, the two sums and their
    # sum 4 each: 16n + 12; 0 + 1 + 16n + 12 <= 1000: n = 61, total 989
    link = _Empty()
    opt = chainer.optimizers.MomentumSGD()
    opt.setup(link)

    def step(n):
        link.cleargrads()
        x = numpy.ones((n, 4), numpy.float32)
        (F.sum(F.exp(x)) + F.sum(link.w)).backward()
        opt.update()
    f = fit_batch(step, capacity=1000, optimizer='momentumsgd',
                  check_answer=False)
    assert (f['batch_size'], f['params'], f['optimizer_state'],
            f['optimizer_state_from'], f['peak'], f['total']) == (
        61, 0, 1, 'measured', 16 * 61 + 12, 989)


@pytest.mark.slow
def test_a_tie_names_the_first_call_at_the_peak():
    # Exp-1 makes 16n; Reshape-1 is a view of it, no byte more: the peak,
    # 16n <= 1000 at n = 62 (992), is first reached during Exp-1, as the
    # hook's memory_report names it
    def step(n):
        F.reshape(F.exp(numpy.ones((n, 4), numpy.float32)), (4 * n,))
    f = fit_batch(step, capacity=1000, optimizer='sgd', check_answer=False)
    assert (f['batch_size'], f['peak'], f['peak_layer']) == (62, 992,
                                                             'Exp-1')


@pytest.mark.slow
def test_below_lines_from_batch_4_every_smaller_batch_is_tried(monkeypatch):
    # ReLU's scratch planted as 4n, 4 more at odd batches: on no line
    # through 1, 2, 3 nor 2, 3, 4, so the lines go through 4, 9, 14 (the
    # scratch bounded by -4 + 5n); its output is 16n.  Peaks of the runs
    # made below the lines: 16 + 8 = 24 at 1, 32 + 8 = 40 at 2, 48 + 16 =
    # 64 at 3; on the lines at 4: 64 + 16 = 80
    relu = chainer.functions.activation.relu.ReLU
    monkeypatch.setitem(
        cost_calculators.scratches, relu,
        lambda func, in_data, **kwargs: 4 * len(in_data[0])
        + 4 * (len(in_data[0]) % 2))

    def run(n):
        F.relu(numpy.ones((n, 4), numpy.float32))
    answers = [fit_batch(run, capacity=c, optimizer='sgd',
                         check_answer=False)['batch_size']
               for c in (24, 50, 64, 80)]
    assert answers == [1, 2, 3, 4]


class _ViewAtOddBatches(chainer.FunctionNode):
    """Its output is a view of its input at odd batches, a copy at even
    ones: live bytes on no line (0 bytes, then 4 * 3 * n)."""

    def forward(self, inputs):
        x, = inputs
        return (x[::1] if len(x) % 2 else x.copy()),


@pytest.mark.slow
def test_no_lines_says_why():
    # F.mean broadcasts nothing at batch 1 (its calls differ there), so
    # the lines would go through 2, 3, 4; the view-or-copy call's live
    # bytes are on none: fit names that call, not an earlier version
    lin = L.Linear(3, 4, nobias=True)

    def run(n):
        lin.cleargrads()
        F.sum(F.mean(lin(numpy.ones((n, 3), numpy.float32)),
                     axis=0)).backward()
        _ViewAtOddBatches().apply((numpy.ones((n, 3), numpy.float32),))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ReportWarning)  # no calculator
        with pytest.raises(ValueError, match='live bytes after '
                           '_ViewAtOddBatches-1 are not affine'):
            fit_batch(run, capacity=1 << 20, optimizer='sgd')


def test_a_device_and_a_capacity_together_are_refused():
    # which of the two the answer is for would be a guess
    def run(n):
        F.relu(numpy.ones((n, 4), numpy.float32))
    with pytest.raises(ValueError,
                       match='^give either device or capacity, not both$'):
        fit_batch(run, device='a100', capacity=1000, optimizer='sgd')
