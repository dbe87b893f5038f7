"""project_batch behaviour that planted bugs got past (see
benchmarks/mutate.py): the batches it runs, worked by hand.

A scratch on a line through TOP_BATCHES is drawn by the bounded attempt
through them, whose bound of points on a line is that line, and nothing
is named bounded (test_a_scratch_on_a_line_from_batch_4).

A parameter that differs only at batch 1 is unknown, not the value of
the later batches (test_a_parameter_off_at_batch_1_is_unknown).
"""

import chainer
import chainer.functions as F
import chainer.links as L
import numpy
import pytest

from chainer_computational_cost import project_batch
from chainer_computational_cost.run import projection
from chainer_computational_cost.core.records import R_FLOPS, R_LIVE, R_STATE
from test_peak import planted  # noqa: F401 (a fixture)
from test_peak import RELU


def _logged(step):
    """``step`` that notes every batch size it is run at in ``.batches``."""
    def run(n):
        run.batches.append(n)
        step(n)
    run.batches = []
    return run


def _relu(n):
    F.relu(numpy.ones((n, 4), numpy.float32))


_lin = L.Linear(3, 4, nobias=True)


def _mean(n):
    # Chainer broadcasts nothing at batch 1: the calls differ there
    _lin.cleargrads()
    F.sum(F.mean(_lin(numpy.ones((n, 3), numpy.float32)), axis=0)).backward()


def test_the_batches_run():
    # BATCHES 1, 2, 3, then the check at min(CHECK_BATCH = 9, n)
    run = _logged(_relu)
    p = project_batch(run, 20)
    assert (run.batches, p.batch_size) == ([1, 2, 3, 9], 20)
    assert p.total_report['mwrite'] == 16 * 20  # 4 floats out per sample
    run = _logged(_relu)
    project_batch(run, 7)
    assert run.batches == [1, 2, 3, 7]
    run = _logged(_relu)
    project_batch(run, 3)  # on the first runs: no check
    assert run.batches == [1, 2, 3]
    # batch 1 off the line: LATER_BATCHES 2, 3, 4 are the line
    run = _logged(_mean)
    project_batch(run, 20)
    assert run.batches == [1, 2, 3, 4, 9]
    run = _logged(_mean)
    project_batch(run, 20, check_batch=5)  # the lowest check allowed
    assert run.batches == [1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match='check_batch must be None or an '
                                         'int >= 5, got 4'):
        project_batch(_relu, 20, check_batch=4)


def test_a_bending_scratch_runs_the_top_batches(planted):  # noqa: F811
    # the uneven scratch of test_peak (4n, 4 more at odd batches) is on no
    # line through 1, 2, 3 nor 2, 3, 4: TOP_BATCHES 4, 9 and 2*9 - 4 = 14
    # (9 first: the costs are checked before the memory is drawn)
    planted(RELU, lambda in_data: 4 * in_data[0].shape[0]
            + 4 * (in_data[0].shape[0] % 2))
    run = _logged(_relu)
    project_batch(run, 20)
    assert run.batches == [1, 2, 3, 9, 4, 14]


def test_measure_counts_a_fused_multiply_add_once():
    # measure's default fma_1flop=True: LinearFunction at batch 2, 2*4
    # outputs of 3 multiply-adds: 24 FLOPs; with fma_1flop=False 3
    # multiplies and 2 adds each: 2*4*5 = 40
    def run(n):
        _lin(numpy.ones((n, 3), numpy.float32))
    records = projection.measure(run, 2)[0]
    assert records[0][R_FLOPS] == 24
    assert projection.measure(run, 2, fma_1flop=False)[0][0][R_FLOPS] == 40


def test_at_exit_of_batch_1_below_the_lines():
    # the step keeps its Linear's output (n, 4) alive after it: at exit
    # 16n of it and gW 48; batch 1 (off the lines through 2, 3, 4) is its
    # own run: 64; on the lines at 20: 320 + 48
    kept = []

    def run(n):
        _lin.cleargrads()
        h = _lin(numpy.ones((n, 3), numpy.float32))
        kept[:] = [h]
        F.sum(F.mean(h, axis=0)).backward()
    for n, at_exit in ((1, 64), (2, 80), (20, 368)):
        m = project_batch(run, n).memory_report
        assert (m['at_exit'], m['at_exit_activations'],
                m['at_exit_gradients']) == (at_exit, at_exit - 48, 48)


def test_params_projected():
    def run(n):
        x = numpy.ones((n, 4), numpy.float32)
        F.dropout(x, 0.1 if n % 2 else 0.2)  # 0.1, 0.2, 0.1: no line
        F.reshape(x, (4 * n,))  # out_shape (4n,): 80 at 20
    layers = project_batch(run, 20, check_batch=None).layer_report
    assert layers['Dropout-1']['params'] == {'ratio': None}
    assert layers['Reshape-1']['params'] == {'in_shape': (20, 4),
                                             'out_shape': (80,)}


class _Branch(chainer.Chain):
    """Two Linear(3, 4) links: ``a`` for the batch sizes ``takes_a``
    accepts, ``b`` for the others."""

    def __init__(self, takes_a):
        super(_Branch, self).__init__()
        self.takes_a = takes_a
        with self.init_scope():
            self.a = L.Linear(3, 4)
            self.b = L.Linear(3, 4)

    def forward(self, x):
        return (self.a if self.takes_a(len(x)) else self.b)(x)


def test_links_differ_at_the_check():
    model = _Branch(lambda n: n < 5)

    def run(n):
        model(numpy.ones((n, 3), numpy.float32))
    # the root and the child called: '/a' at 1, 2, 3, '/b' at the check
    with pytest.raises(ValueError, match=(
            r"the links called differ between batch sizes: "
            r"\['/', '/a'\] at n=1, \['/', '/b'\] at n=9")):
        project_batch(run, 20)


def test_records_of_a_batch_that_was_run_keep_the_layout():
    # records.py: a projection's records have the hook's layout, 17
    # fields, the optimizer state created last (0: no update here); at
    # batch 9 (the check run) the live bytes are that run's: LinearFunction
    # 16*9 = 144, Exp 288 (see test_fit's _exp_step)
    def run(n):
        _lin.cleargrads()
        F.sum(F.exp(_lin(numpy.ones((n, 3), numpy.float32)))).backward()
    records = project_batch(run, 9).records()
    assert [len(r) for r in records] == [R_STATE + 1] * 6
    assert [r[R_STATE] for r in records] == [0] * 6
    assert [r[R_LIVE] for r in records[:2]] == [144, 288]


def test_batch_1_below_the_lines_has_its_own_links():
    # the model calls /a at batch 1 and /b beyond: the links differ
    # between 1, 2, 3, so the lines go through 2, 3, 4; batch 1 is its own
    # run, links and all
    model = _Branch(lambda n: n == 1)

    def run(n):
        model(numpy.ones((n, 3), numpy.float32))
    assert list(project_batch(run, 1).link_report) == ['/', '/a', 'total']
    assert list(project_batch(run, 20).link_report) == ['/', '/b', 'total']


def test_a_scratch_on_a_line_from_batch_4(planted):  # noqa: F811
    # scratch max(8n - 16, 8): 8, 8, 8 at 1, 2, 3 (a line: 8), off it at
    # 9 (56); through 2, 3, 4 (8, 8, 16) no line; through TOP_BATCHES 4,
    # 9, 14 (16, 56, 96) the line 8n - 16, exact, not a bound: at 20,
    # 144, beside ReLU's output 16*20 = 320
    planted(RELU, lambda in_data: max(8 * in_data[0].shape[0] - 16, 8))
    p = project_batch(_relu, 20)
    m = p.memory_report
    assert (m['peak'], m['scratch'], m['activations']) == (464, 144, 320)
    assert p.memory_state()['bounded'] == []


def test_a_parameter_off_at_batch_1_is_unknown():
    # F.clip's upper bound is 1.0 at batch 1 and 2.0 beyond: a float that
    # follows no line, so no value stands for batch 7 (None); the lower
    # bound, 0.0 at every batch, stays
    def run(n):
        F.clip(numpy.ones((n, 3), numpy.float32), 0.0,
               1.0 if n == 1 else 2.0)
    p = project_batch(run, 7)
    assert p.layer_report['Clip-1']['params'] == {'min': 0.0, 'max': None}
