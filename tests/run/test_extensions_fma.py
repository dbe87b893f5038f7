"""CostMonitor's FLOP convention: ``fma_1flop``, its keys, and an MFU
that always counts a multiply-add as the peak does (2 FLOPs), worked by
hand on a Linear(3, 4) at batch 2.

Figures of one SGD step of :class:`_Tiny` (x (2, 3), DETAILS.md):

===================  =====================  ===================
call                 1 per multiply-add     2 per multiply-add
===================  =====================  ===================
LinearFunction       2*3*4 = 24             2*4*(2*3 - 1) = 40
Sum (8 -> 1)         8 - 1 = 7              7
BroadcastTo          0                      0
LinearGradWeight     4*3*2 = 24             4*3*(2*2 - 1) = 36
SGDRule (|W| = 12)   12                     2*12 = 24
step                 67                     107
===================  =====================  ===================

No LinearGradData: x is the batch, which needs no gradient.  A step with
the extra product by a constant (4, 4) matrix adds its LinearFunction,
2*4*4 = 32 (1 per multiply-add) or 2*4*(2*4 - 1) = 56, and the
LinearGradData of h, 2*4*4 = 32 or 2*4*(2*4 - 1) = 56 (no
LinearGradWeight: the matrix is a constant): 67 + 64 = 131 and
107 + 112 = 219.
"""

import chainer
from chainer import training
import chainer.functions as F
import chainer.links as L
from chainer.training import extensions
import numpy
import pytest

from chainer_computational_cost import CostMonitor
from chainer_computational_cost.run import extensions as cm_extensions

PEAK = 1e9
STEP_1, STEP_2 = 67, 107
EXTRA_1, EXTRA_2 = 131, 219


class _Tiny(chainer.Chain):
    """x (2, 3) -> the sum of a Linear(3, 4, nobias); at the calls
    numbered in ``extra_on``, a product by a constant (4, 4) matrix
    before the sum (other work at the same shapes)."""

    def __init__(self, extra_on=()):
        super(_Tiny, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(3, 4, nobias=True)
        self.extra_on = extra_on
        self.n_calls = 0

    def forward(self, x):
        self.n_calls += 1
        h = self.lin(x)
        if self.n_calls in self.extra_on:
            h = F.linear(h, numpy.ones((4, 4), numpy.float32))
        return F.sum(h)


def _log(tmp_path, monkeypatch, monitor, n_iter, model=None):
    """The LogReport entries of ``n_iter`` SGD steps of ``model`` at batch
    2, ``monitor`` extended; every update_core takes 0.25 s by the
    monitor's clock."""
    model = model or _Tiny()
    rng = numpy.random.RandomState(0)
    data = [rng.rand(3).astype(numpy.float32) for _ in range(16)]
    opt = chainer.optimizers.SGD()
    opt.setup(model)
    it = chainer.iterators.SerialIterator(data, 2, shuffle=False)
    trainer = training.Trainer(
        training.StandardUpdater(it, opt, loss_func=model),
        (n_iter, 'iteration'), out=str(tmp_path))
    trainer.extend(monitor)
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    ticks = iter(range(10 ** 6))
    monkeypatch.setattr(cm_extensions, '_clock', lambda: next(ticks) / 4)
    trainer.run()
    return log.log


def test_by_default_a_multiply_add_is_2_flops_under_the_keys_of_old(
        tmp_path, monkeypatch):
    for entry in _log(tmp_path, monkeypatch, CostMonitor(peak_flops=PEAK),
                      3):
        assert entry['cost/flops'] == STEP_2
        assert entry['cost/flops_per_second'] == STEP_2 * 4
        assert entry['cost/mfu'] == pytest.approx(STEP_2 * 4 / PEAK,
                                                  rel=1e-12)
        assert not [k for k in entry if k.endswith('_fma_1flop')]


def test_fma_1flop_says_so_in_its_keys_and_keeps_the_peak_s_mfu(
        tmp_path, monkeypatch):
    monitor = CostMonitor(peak_flops=PEAK, fma_1flop=True)
    for entry in _log(tmp_path, monkeypatch, monitor, 3):
        assert entry['cost/flops_fma_1flop'] == STEP_1
        assert entry['cost/flops_per_second_fma_1flop'] == STEP_1 * 4
        # the MFU of the FLOPs as the peak counts them: 107, not 67
        assert entry['cost/mfu'] == pytest.approx(STEP_2 * 4 / PEAK,
                                                  rel=1e-12)
        # no key holds figures of one convention under the other's name
        assert 'cost/flops' not in entry
        assert 'cost/flops_per_second' not in entry
        assert entry['cost/samples_per_second'] == 2 * 4


@pytest.mark.parametrize('fma_1flop, key, normal, extra', [
    (False, 'cost/flops', STEP_2, EXTRA_2),
    (True, 'cost/flops_fma_1flop', STEP_1, EXTRA_1),
])
def test_a_step_with_other_work_is_counted_in_the_convention_asked_for(
        tmp_path, monkeypatch, fma_1flop, key, normal, extra):
    # Calls 1 and 2 are costed (the first iteration's key once more);
    # call 3 does other work at the same shapes, counted call by call;
    # call 4 is the costed step's again.
    monitor = CostMonitor(peak_flops=PEAK, fma_1flop=fma_1flop)
    with pytest.warns(cm_extensions.ReportWarning, match='other work'):
        log = _log(tmp_path, monkeypatch, monitor, 4, _Tiny(extra_on=(3,)))
    assert [e[key] for e in log] == [normal, normal, extra, normal]
    assert [e['cost/mfu'] for e in log] == pytest.approx(
        [f * 4 / PEAK for f in (STEP_2, STEP_2, EXTRA_2, STEP_2)],
        rel=1e-12)


def test_fma_1flop_must_be_a_bool():
    with pytest.raises(TypeError, match=r'CostMonitor: fma_1flop must be '
                       r'True or False, got 1 \(int\)$'):
        CostMonitor(fma_1flop=1)


class _OutsideForward(training.StandardUpdater):
    """A step that runs a forward pass itself, outside optimizer.update
    (a Linear(4, 4) without bias, no graph), then updates on its output."""

    def __init__(self, optimizer, other):
        super(_OutsideForward, self).__init__(
            chainer.iterators.SerialIterator([0], 1), optimizer)
        self.other = other

    def update_core(self):
        opt = self.get_optimizer('main')
        with chainer.no_backprop_mode():
            h = self.other(numpy.ones((4, 4), numpy.float32))
        opt.update(lambda: F.sum(opt.target(h.array)))


def test_calls_outside_the_update_are_counted_in_the_convention_asked_for(
        tmp_path):
    # a multiply-add as 1 (DETAILS.md): outside, Linear(4, 4) on 4x4
    # 4*4*4 = 64; inside, Linear 64, Sum 16-1 = 15, the weight gradient
    # 4*4*4 = 64, SGD 1 a weight 16: 64 + 159 = 223
    def linear():
        return L.Linear(4, 4, initialW=0.5, nobias=True)
    opt = chainer.optimizers.SGD()
    opt.setup(linear())
    trainer = training.Trainer(_OutsideForward(opt, linear()),
                               (3, 'iteration'), out=str(tmp_path))
    trainer.extend(CostMonitor(fma_1flop=True))
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    with pytest.warns(Warning, match='outside optimizer.update'):
        trainer.run()
    assert [e.get('cost/flops_fma_1flop') for e in log.log] == [223] * 3
