"""fit_batch figures that planted bugs got past (see benchmarks/mutate.py):
each worked by hand.

Not equivalent, though once noted so: in ``_Memory.largest``,
``range(self.first - 1, 0, -2)`` for ``-1`` skips batch 2 when the lines
start at batch 4 (a scratch that bends is bounded through 4, 9, 14):
test_below_lines_from_batch_4_every_smaller_batch_is_tried.  In
``fit_batch``, ``project_batch(run, 2, ...)`` for ``(run, 1, ...)`` gave
the reason why a step has no memory lines when its calls differ at batch
1, where the code said "no lines (made by an earlier version?)": the
projection to batch 1 now keeps that reason (test_no_lines_says_why);
the two differ since only in the batch a cost projection's error names
("cannot be projected to batch 2")."""

import json
import warnings

import chainer
import chainer.functions as F
import chainer.links as L
import numpy
import pytest

from chainer_computational_cost import cost_calculators
from chainer_computational_cost.run import fit
from chainer_computational_cost import fit_batch
from chainer_computational_cost.core.records import ReportWarning


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


def test_by_hand():
    # 4 + 4n + 8 <= 52: n = 10, total 52; 51: n = 9, total 48
    f = fit_batch(_step, capacity=52, optimizer='sgd', check_answer=False)
    assert (f['batch_size'], f['peak'], f['total'], f['scratch']) == (
        10, 48, 52, 40)
    f = fit_batch(_step, capacity=51, optimizer='sgd', check_answer=False)
    assert (f['batch_size'], f['total']) == (9, 48)


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


def test_a_tie_names_the_first_call_at_the_peak():
    # Exp-1 makes 16n; Reshape-1 is a view of it, no byte more: the peak,
    # 16n <= 1000 at n = 62 (992), is first reached during Exp-1, as the
    # hook's memory_report names it
    def step(n):
        F.reshape(F.exp(numpy.ones((n, 4), numpy.float32)), (4 * n,))
    f = fit_batch(step, capacity=1000, optimizer='sgd', check_answer=False)
    assert (f['batch_size'], f['peak'], f['peak_layer']) == (62, 992,
                                                             'Exp-1')


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
