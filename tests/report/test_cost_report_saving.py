"""Results kept after the run: a snapshot of the reports pickles, with its
tracebacks, and tracebacks end in the user's code."""

import io
import pickle

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.core.records import (
    format_stack, R_STACK, saved_records, SavedStack)
from chainer_computational_cost.report import cost_report as report_module


class Net(chainer.Chain):
    """fc (3 -> 2, 8 params), relu."""

    def __init__(self):
        super(Net, self).__init__()
        with self.init_scope():
            self.fc = L.Linear(3, 2)

    def forward(self, x):
        return F.relu(self.fc(x))


def _step():
    net = Net()
    with ComputationalCostHook() as cch:
        F.sum(net(np.ones((2, 3), np.float32))).backward()
    return cch


def test_a_snapshot_pickles_with_the_whole_reading_api():
    cch = _step()
    loaded = pickle.loads(pickle.dumps(cch.snapshot()))
    assert isinstance(loaded, report_module.ReportSnapshot)
    assert loaded.fma_1flop is True
    for name in ('layer_report', 'summary_report', 'total_report',
                 'phase_report', 'link_report', 'ignored_layers'):
        assert getattr(loaded, name) == getattr(cch, name), name
    assert loaded.summary_report_by_phase() == cch.summary_report_by_phase()
    assert loaded.roofline_report(device='a100') == cch.roofline_report(
        device='a100')
    # LinearFunction on (2, 3) x (2, 3).T: 12 multiply-adds + 4 bias adds
    assert loaded.layer_report['LinearFunction-1']['flops'] == 16
    assert loaded.link_report['/fc']['n_params'] == 8
    texts = []
    for reporter in (cch, loaded):
        out = io.StringIO()
        reporter.show_report(out, columns=['name', 'flops', 'traceback'])
        reporter.show_link_report(out)
        texts.append(out.getvalue())
    assert texts[0] == texts[1]
    assert 'in _step' in texts[1]


def test_a_snapshot_does_not_follow_the_hook():
    net = Net()
    x = np.ones((2, 3), np.float32)
    with ComputationalCostHook() as cch:
        net(x)
        before = cch.snapshot()
        net(x)
    assert before.total_report['n_layers'] == 2
    assert cch.total_report['n_layers'] == 4


def test_shared_stacks_stay_shared_when_saved():
    with ComputationalCostHook() as cch:
        for _ in range(3):
            F.relu(np.ones(2, np.float32))
    records = saved_records(cch.records())
    assert len({id(r[R_STACK]) for r in records}) == 1
    loaded = pickle.loads(pickle.dumps(records))
    assert len({id(r[R_STACK]) for r in loaded}) == 1


def test_tracebacks_end_in_the_users_code():
    cch = _step()
    for name, r in cch.layer_report.items():
        if name == 'total':
            continue
        last = r['traceback'].splitlines()[-2]
        # forward calls end at net(x) or at the Chain's forward, backward
        # ones at .backward(): never in function_node.py
        assert 'test_cost_report_saving.py' in last, (name, r['traceback'])
    tb = cch.layer_report['ReLU-1']['traceback']
    assert tb.splitlines()[-1].strip() == 'return F.relu(self.fc(x))'


def test_a_stack_entirely_in_libraries_is_kept_whole():
    frames = SavedStack([
        (chainer.__file__, 1, 'outer'), (np.__file__, 2, 'inner')])
    text = format_stack(frames)
    assert text.count('File ') == 2
    assert 'in inner' in text
