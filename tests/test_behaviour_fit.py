"""fit_batch as a user reads it: what its answer counts, in words and
bytes (worked by hand; see benchmarks/mutate.py for how this file is
used)."""

import io

import chainer
import chainer.functions as F
import chainer.links as L
import numpy
import pytest

from chainer_computational_cost import cost_calculators
from chainer_computational_cost.run import fit
from chainer_computational_cost import fit_batch
from chainer_computational_cost import project_batch


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


def test_a_capacity_of_0_bytes_is_refused():
    # no batch fits in nothing: a capacity must be more than 0 bytes
    with pytest.raises(ValueError, match=r'capacity must be a number of '
                       r'bytes > 0, got 0'):
        fit_batch(_relu, capacity=0, optimizer='sgd')


def test_a_fit_shown_with_the_bytes_column_only():
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


# Every argument of the wrong type is named, as every bad value is

_GPUS = 'gtx1080ti, a100, a100-40gb, a100-80gb, h100, p100, v100'


@pytest.mark.parametrize('kwargs, message', [
    # device=80 was AttributeError: 'int' object has no attribute 'lower'
    ({'device': 80}, r'^device must be the name of a GPU preset \(' +
     _GPUS + r'\), got 80$'),
    ({'device': ['gtx1080ti']}, r"got \['gtx1080ti'\]$"),
    ({'capacity': '1000'}, "^capacity must be a number of bytes > 0, got "
     "'1000'$"),
    ({'capacity': float('nan')}, 'got nan$'),
    ({'capacity': 1000, 'optimizer': ['adam']}, '^optimizer must be one of '
     r"sgd, momentumsgd, adam, got \['adam'\]$"),
    ({'capacity': 1000, 'margin': [10]}, r'^margin must be bytes \(an int '
     r'>= 0\), a fraction of the capacity \(a float in \[0, 1\)\) or '
     r"'cuda', got \[10\]$"),
    ({'capacity': 1000, 'margin': float('nan')}, 'got nan$'),
    ({'capacity': 1000, 'margin': -1}, 'got -1$'),
    ({'capacity': 1000, 'check_answer': 'yes'}, '^check_answer must be '
     "None, True or False, got 'yes'$"),
])
def test_a_bad_argument_is_named(kwargs, message):
    projected = project_batch(_relu, 1)
    with pytest.raises(ValueError, match=message):
        fit_batch(projected, **kwargs)
    with pytest.raises(ValueError, match=message):
        fit_batch(_relu, **kwargs)


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
