"""Training-step cost: the phase of every call, the phase report, and the
summary split by phase."""

import io

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import PhaseColumns


def _x(*shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 10


def _linear_step(fma):
    """Linear(30 -> 20), batch 8, after cleargrads, loss = F.sum(l(x))."""
    link = L.Linear(30, 20)
    link.cleargrads()
    x = chainer.Variable(_x(8, 30))
    with ComputationalCostHook(fma_1flop=fma, strict=True) as cch:
        loss = F.sum(link(x))
        loss.backward()
    return cch


def test_every_call_has_its_phase():
    cch = _linear_step(True)
    phases = [(r['type'], r['phase'])
              for name, r in cch.layer_report.items() if name != 'total']
    assert phases == [
        ('LinearFunction', 'forward'), ('Sum', 'forward'),
        # F.sum's backward broadcasts the loss's gradient
        ('BroadcastTo', 'backward'),
        ('LinearGradData', 'backward'), ('LinearGradWeight', 'backward'),
        # the bias gradient sums gy over the batch
        ('Sum', 'backward')]


@pytest.mark.parametrize('fma, expected', [
    # gx 8*20*30 + gW 20*30*8 + gb (8-1)*20 = 4800 + 4800 + 140
    (True, 9740),
    # gx: 8*30 dot products of 20: 240*(2*20-1); gW: 20*30 of 8:
    # 600*(2*8-1); gb: 140
    (False, 240 * 39 + 600 * 15 + 140)])
def test_linear_backward_flops(fma, expected):
    assert expected == (9740 if fma else 18500)
    cch = _linear_step(fma)
    assert cch.phase_report['backward']['flops'] == expected


def test_phase_report_structure_and_sums():
    cch = _linear_step(True)
    report = cch.phase_report
    assert list(report) == ['forward', 'backward', 'total']
    assert list(report['forward']) == [
        'name', 'n_layers', 'flops', 'mread', 'mwrite', 'mrw', 'flops%',
        'mread%', 'mwrite%', 'mrw%']
    fwd, bwd, tot = report['forward'], report['backward'], report['total']
    assert (fwd['n_layers'], bwd['n_layers'], tot['n_layers']) == (2, 4, 6)
    for m in ('flops', 'mread', 'mwrite', 'mrw'):
        assert fwd[m] + bwd[m] == tot[m] == cch.total_report[m]
    assert fwd['flops%'] + bwd['flops%'] == pytest.approx(100.0)
    # forward: LinearFunction 8*20*30 + 8*20 bias adds, then Sum 160 - 1
    assert fwd['flops'] == 4800 + 160 + 159


def test_a_forward_only_run_has_an_empty_backward():
    with chainer.no_backprop_mode(), ComputationalCostHook() as cch:
        F.relu(_x(2, 3))
    bwd = cch.phase_report['backward']
    assert (bwd['n_layers'], bwd['flops'], bwd['mrw'], bwd['flops%']) == (
        0, 0, 0, 0.0)
    # ReLU: 6 elements
    assert cch.phase_report['forward']['flops'] == 6


def test_gradient_accumulation_belongs_to_backward():
    link = L.Linear(3, 2)
    x = _x(4, 3)
    with ComputationalCostHook() as cch:
        h = link(x)
        # h feeds two branches: their gradients are added in backward
        loss = F.sum(h) + F.sum(h * 2)
        loss.backward()
    adds = [r for name, r in cch.layer_report.items()
            if name != 'total' and r['type'] == 'Add']
    assert [r['phase'] for r in adds][0] == 'forward'  # the loss's +
    assert all(r['phase'] == 'backward' for r in adds[1:])
    # h's two gradients (4, 2) are added
    assert [(4, 2), (4, 2)] in [r['input_shapes'] for r in adds[1:]]


def test_grads_added_to_existing_grads_are_backward_work():
    link = L.Linear(3, 2)
    x = _x(4, 3)
    with ComputationalCostHook() as cch:
        F.sum(link(x)).backward()
        F.sum(link(x)).backward()  # adds to W.grad and b.grad
    adds = [r for name, r in cch.layer_report.items()
            if name != 'total' and r['type'] == 'Add']
    assert {tuple(r['input_shapes'][0]) for r in adds} >= {(2, 3), (2,)}
    assert all(r['phase'] == 'backward' for r in adds)


def test_double_backprop_is_recorded_as_backward():
    x = chainer.Variable(_x(2, 3))
    with ComputationalCostHook(strict=True) as cch:
        y = F.sum(x * x * x)
        gx, = chainer.grad([y], [x], enable_double_backprop=True)
        F.sum(gx).backward()
    calls = [(r['type'], r['phase'])
             for name, r in cch.layer_report.items() if name != 'total']
    # x*x*x and the sum; chainer.grad's calls; the user's sum of gx is a
    # forward call; then the backward of the whole graph
    assert calls[:3] == [('Mul', 'forward'), ('Mul', 'forward'),
                         ('Sum', 'forward')]
    second_sum = calls.index(('Sum', 'forward'), 3)
    assert {p for _, p in calls[3:second_sum]} == {'backward'}
    assert {p for _, p in calls[second_sum + 1:]} == {'backward'}
    assert cch.ignored_layers == {}
    np.testing.assert_allclose(x.grad, 6 * x.array)


def test_phase_is_a_column_and_the_summary_splits_by_phase():
    cch = _linear_step(True)
    out = io.StringIO()
    cch.show_report(out, unit=None, columns=['name', 'phase', 'flops'])
    assert out.getvalue().splitlines()[:3] == [
        'Layer name,Phase,FLOPs', 'LinearFunction-1,forward,4960',
        'Sum-1,forward,159']
    out = io.StringIO()
    cch.show_summary_report(out, unit=None, by_phase=True,
                            columns=['type', 'n_layers', 'flops'])
    assert out.getvalue().splitlines() == [
        'Phase,Layer type,# Layers,FLOPs',
        'forward,LinearFunction,1,4960',
        'forward,Sum,1,159',
        'backward,BroadcastTo,1,0',
        'backward,LinearGradData,1,4800',
        'backward,LinearGradWeight,1,4800',
        'backward,Sum,1,140',
        ',total,6,14859']
    out = io.StringIO()
    cch.show_phase_report(out, unit=None,
                          columns=['name', 'n_layers', 'flops', 'mread'])
    # forward reads x 240 + W 600 + b 20 and then y 160: 1020 * 4 bytes
    assert out.getvalue().splitlines()[:2] == [
        'Phase,# Layers,FLOPs,MemRead B', 'forward,2,5119,4080']
    assert out.getvalue().splitlines()[2].startswith('backward,4,9740,')
    assert out.getvalue().splitlines()[3].startswith('total,6,14859,')
    assert PhaseColumns.DEFAULT == ['name', 'n_layers', 'flops', 'mread',
                                    'mwrite', 'mrw']
