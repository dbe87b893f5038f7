"""What users saved with version 0.2.0 (the flat layout) still loads: the
pickles of ``tests/data`` were written by ``tests/data/make_pickles.py``
on that version, and are never rewritten."""

import os
import pickle

import pytest

from chainer_computational_cost import Projection
from chainer_computational_cost.report.cost_report import ReportSnapshot

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))), 'data')


def _load(name):
    with open(os.path.join(DATA, name), 'rb') as f:
        return pickle.load(f)


def test_a_snapshot_of_0_2_0_loads_with_its_figures():
    snap = _load('snapshot-0.2.0.pkl')
    assert isinstance(snap, ReportSnapshot)
    layers = snap.layer_report
    # Linear 3 -> 2 on a batch of 2: 2*3*2 = 12 multiply-adds + 2*2 = 4
    # bias adds; reads x 6 + W 6 + b 2 = 14 floats = 56 B, writes 2*2*4 =
    # 16 B
    linear = layers['LinearFunction-1']
    assert (linear['flops'], linear['mread'], linear['mwrite']) == \
        (16, 56, 16)
    # Adam: 10 FLOPs an element, W's 6 and b's 2 elements
    assert layers['AdamRule-1']['flops'] == 60
    assert layers['AdamRule-2']['flops'] == 20
    memory = snap.memory_report
    # W and b: 8 floats = 32 B, their gradients the same at exit
    assert memory['params'] == 32
    assert memory['at_exit_gradients'] == 32
    assert memory['peak_phase'] == 'update'
    assert 'in _step' in snap.layer_report['LinearFunction-1']['traceback']


def test_a_projection_of_0_2_0_loads_with_its_figures():
    proj = _load('projection-0.2.0.pkl')
    assert isinstance(proj, Projection)
    assert proj.batch_size == 16
    linear = proj.layer_report['LinearFunction-1']
    # 16*3*2 = 96 multiply-adds + 16*2 = 32 bias adds = 128; reads
    # (16*3 + 6 + 2)*4 = 224 B; writes 16*2*4 = 128 B
    assert (linear['flops'], linear['mread'], linear['mwrite']) == \
        (128, 224, 128)
    assert proj.link_report['/predictor']['n_params'] == 8
    assert proj.memory_report['batch_size'] == 16
    assert proj.memory_report['params'] == 32


def test_a_network_of_0_2_0_loads():
    net = _load('network-0.2.0.pkl')
    assert net.name == 'eth-50g'
    # 50 Gb/s = 50e9 / 8 B/s; TCP's 10 us
    assert net.bandwidth == pytest.approx(6.25e9)
    assert net.latency == pytest.approx(10e-6)


def test_the_records_of_0_2_0_read_by_name():
    # pickled as plain tuples of 17 fields: wrapped when loaded
    for name in ('snapshot-0.2.0.pkl', 'projection-0.2.0.pkl'):
        first = _load(name).records()[0]
        assert (first.type, first.phase, first.link) == (
            'LinearFunction', 'forward', '/predictor')
    # the projection's Linear at batch 16: 128 FLOPs (above)
    assert _load('projection-0.2.0.pkl').records()[0].flops == 128
