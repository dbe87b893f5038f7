"""Live memory of a run (ComputationalCostHook(memory=True)): hand-worked
figures on tiny graphs, and the peak checked against tracemalloc."""

import io
import json
import tracemalloc

import chainer
import chainer.functions as F
import chainer.links as L
import numpy
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import fit_batch
from chainer_computational_cost import project_batch


def lives(hook):
    return [(name, r['live']) for name, r in hook.layer_report.items()
            if name != 'total']


def test_views_inputs_and_frees():
    x = numpy.ones((4, 5), numpy.float32)  # the user's: counts nothing
    with ComputationalCostHook(memory=True) as h:
        y = F.relu(x)  # a new buffer: 4*5*4 = 80
        z = F.reshape(y, (20,))  # a view of y's buffer: +0
        w = F.reshape(x, (20,))  # a view of the user's x: +0
        u = F.relu(z)  # +80 = 160
        del u  # freed: -80
        v = F.exp(w)  # +80 = 160
        F.split_axis(y, 2, axis=0)  # two views of y: +0
    assert lives(h) == [('ReLU-1', 80), ('Reshape-1', 80),
                        ('Reshape-2', 80), ('ReLU-2', 160), ('Exp-1', 160),
                        ('SplitAxis-1', 160)]
    m = h.memory_report
    assert (m['peak'], m['peak_layer'], m['peak_phase']) == (
        160, 'ReLU-2', 'forward')
    assert (m['activations'], m['gradients']) == (160, 0)
    # y (held by z) and v: 80 + 80
    assert (m['at_exit'], m['params'], m['n_calls']) == (160, 0, 6)
    del z, v


def test_training_step_gradients():
    lin = L.Linear(3, 4, nobias=True)  # W: 4*3*4 = 48 bytes
    x = numpy.ones((2, 3), numpy.float32)
    lin.cleargrads()
    with ComputationalCostHook(memory=True) as h:
        loss = F.sum(lin(x))
        loss.backward()
    assert lives(h) == [
        ('LinearFunction-1', 32),  # y: 2*4*4
        ('Sum-1', 36),  # + the loss, 4
        # y is freed (Linear keeps its inputs, not its output); the
        # broadcast gradient is a view of the loss's initial gradient,
        # made outside any call
        ('BroadcastTo-1', 4),
        ('LinearGradWeight-1', 52)]  # + gW: 48
    m = h.memory_report
    assert (m['peak'], m['peak_layer'], m['peak_phase']) == (
        52, 'LinearGradWeight-1', 'backward')
    assert (m['activations'], m['gradients']) == (4, 48)
    assert (m['at_exit'], m['at_exit_activations'],
            m['at_exit_gradients']) == (52, 4, 48)
    assert m['params'] == 48


def test_each_block_counts_its_own_arrays():
    x = numpy.ones((4, 5), numpy.float32)
    h = ComputationalCostHook(memory=True)
    with h:
        y = F.relu(x)  # 80, still alive in the second block
    with h:
        F.exp(x)  # 80, freed at once
    assert lives(h) == [('ReLU-1', 80), ('Exp-1', 80)]
    m = h.memory_report
    # the peak over every call; at exit: the last block's
    assert (m['peak'], m['peak_layer'], m['at_exit']) == (80, 'ReLU-1', 0)
    del y


def test_not_followed_by_default():
    x = numpy.ones((2, 3), numpy.float32)
    with ComputationalCostHook() as h:
        F.relu(x)
    assert 'live' not in h.layer_report['ReLU-1']
    assert h.memory is False
    with pytest.raises(ValueError, match='memory=True'):
        h.memory_report


def test_memory_must_be_bool():
    with pytest.raises(TypeError, match='memory must be a bool'):
        ComputationalCostHook(memory=1)


def test_show_memory_report():
    x = numpy.ones((4, 5), numpy.float32)
    with ComputationalCostHook(memory=True) as h:
        y = F.relu(x)  # 80
        F.exp(y)  # freed at once: the peak is 160, 80 left
    out = io.StringIO()
    h.show_memory_report(out, mode='md', unit=None)
    assert out.getvalue() == (
        '|Memory|Bytes B|Activations B|Gradients B|Layer|\n'
        '|:----|:----|:----|:----|:----|\n'
        '|peak|160|160|0|Exp-1|\n'
        '|at exit|80|80|0||\n'
        '|parameters|0||||\n')


def test_memory_report_json():
    x = numpy.ones((4, 5), numpy.float32)
    with ComputationalCostHook(memory=True) as h:
        F.relu(x)  # 80 bytes
    out = io.StringIO()
    h.show_memory_report(out, mode='json', unit='K',
                         columns=['name', 'bytes'])
    assert json.loads(out.getvalue()) == {
        'units': {'bytes': 'KiB'},
        'rows': [{'name': 'peak', 'bytes': 0.078},  # 80 / 1024
                 {'name': 'at exit', 'bytes': 0.0},
                 {'name': 'parameters', 'bytes': 0.0}]}


def test_live_column():
    x = numpy.ones((4, 5), numpy.float32)
    with ComputationalCostHook(memory=True) as h:
        F.relu(x)
    out = io.StringIO()
    h.show_report(out, columns=['name', 'live'], unit=None)
    assert out.getvalue() == 'Layer name,Live B\nReLU-1,80\ntotal,\n'


# Against tracemalloc, which traces every NumPy buffer in a domain of its
# own (Python objects, the hook's records among them, are left out).

#: NumPy's tracemalloc domain (NPY_TRACE_DOMAIN).
NUMPY_DOMAIN = 389047


def numpy_traced():
    """Bytes of the NumPy buffers alive, as tracemalloc traces them."""
    snapshot = tracemalloc.take_snapshot()
    return sum(t.size for t in snapshot.traces if t.domain == NUMPY_DOMAIN)


class TracemallocSampler(chainer.FunctionHook):
    """Traced memory right after each call (runs after the cost hook)."""

    name = 'MemorySampler'

    def __init__(self):
        self.samples = []

    def forward_postprocess(self, function, in_data):
        self.samples.append(numpy_traced())


def _against_tracemalloc(step):
    tracemalloc.start()
    try:
        sampler = TracemallocSampler()
        base = numpy_traced()
        with ComputationalCostHook(memory=True) as h:
            with sampler:
                kept = step()
            traced_exit = numpy_traced() - base
    finally:
        tracemalloc.stop()
    m = h.memory_report
    traced_peak = max(sampler.samples) - base
    assert m['peak'] == pytest.approx(traced_peak, rel=0.05)
    assert m['at_exit'] == pytest.approx(traced_exit, rel=0.05)
    del kept
    return m


def _convnet():
    model = chainer.Sequential(
        L.Convolution2D(3, 16, 3, pad=1), F.relu,
        L.Convolution2D(16, 16, 3, pad=1), F.relu,
        lambda h: F.max_pooling_2d(h, 2),
        L.BatchNormalization(16), L.Linear(None, 10))
    x = numpy.random.RandomState(0).rand(16, 3, 32, 32).astype(
        numpy.float32)
    with chainer.using_config('train', False), chainer.no_backprop_mode():
        model(x)  # lazily initialised parameters exist before the step
    return model, x


def test_training_step_against_tracemalloc():
    model, x = _convnet()
    t = numpy.zeros(16, numpy.int32)
    model.cleargrads()

    def step():
        loss = F.softmax_cross_entropy(model(x), t)
        loss.backward()
        return loss
    m = _against_tracemalloc(step)
    assert m['peak_phase'] == 'backward' and m['gradients'] > 0


def test_inference_against_tracemalloc():
    model, x = _convnet()

    def step():
        with chainer.using_config('train', False), \
                chainer.no_backprop_mode():
            return model(x)
    m = _against_tracemalloc(step)
    assert m['gradients'] == 0


# Projection and the largest batch

def _linear_step(n):
    """A training step whose live bytes are worked out by hand below."""
    lin = _linear_step.lin
    lin.cleargrads()
    x = numpy.ones((n, 3), numpy.float32)
    F.sum(lin(x)).backward()


_linear_step.lin = L.Linear(3, 4, nobias=True)  # W: 4*3*4 = 48 bytes


def test_projected_lives():
    # after each call, at batch n: y (n, 4): 16n; + the loss: 16n + 4;
    # y freed: 4; + gW: 52
    p = project_batch(_linear_step, 10)
    assert lives(p) == [('LinearFunction-1', 160), ('Sum-1', 164),
                        ('BroadcastTo-1', 4), ('LinearGradWeight-1', 52)]
    m = p.memory_report
    assert (m['peak'], m['peak_layer'], m['batch_size']) == (
        164, 'Sum-1', 10)
    assert (m['at_exit'], m['params']) == (48, 48)  # the loss is dropped


def test_projected_peak_equals_a_real_run():
    model, _ = _convnet()
    rng = numpy.random.RandomState(1)

    def step(n):
        model.cleargrads()
        x = rng.rand(n, 3, 32, 32).astype(numpy.float32)
        F.softmax_cross_entropy(
            model(x), numpy.zeros(n, numpy.int32)).backward()
    with ComputationalCostHook(memory=True) as h:
        step(7)
    real = h.memory_report
    projected = project_batch(step, 7).memory_report
    del projected['batch_size']
    assert projected == real


def test_live_bytes_that_do_not_follow_the_batch():
    kept = []

    def run(n):
        y = F.relu(numpy.ones((n, 4), numpy.float32))
        if n == 3:
            kept.append(y)  # kept at one batch size only
        del y
        F.exp(numpy.ones((n, 4), numpy.float32))
    p = project_batch(run, 5)
    assert p.total_report['flops'] == 40  # 4*5 (ReLU) + 4*5 (Exp)
    with pytest.raises(ValueError, match='live bytes after Exp-1 are not '
                                         'affine in the batch size'):
        p.memory_report


@pytest.mark.parametrize('optimizer, capacity, batch, total', [
    # params 48, Adam's state 2 * 48 = 96: the peak 16n + 4 (after Sum-1)
    # must fit in 1000 - 144 = 856: n = 53, total 144 + 852 = 996
    ('adam', 1000, 53, 996),
    # SGD: 1000 - 48 = 952 >= 16n + 4: n = 59, total 48 + 948 = 996
    ('sgd', 1000, 59, 996),
    # MomentumSGD: 2000 - 96 = 1904 >= 16n + 4: n = 118, 96 + 1892
    ('MomentumSGD', 2000, 118, 1988),
])
def test_fit_batch_by_hand(optimizer, capacity, batch, total):
    fit = fit_batch(_linear_step, optimizer=optimizer, capacity=capacity)
    assert fit['batch_size'] == batch
    assert fit['total'] == total
    assert fit['params'] == 48
    assert fit['peak_layer'] == 'Sum-1'
    assert fit['next_total'] == total + 16  # one more sample: 4*4 bytes
    assert fit['free'] == capacity - total


def test_fit_batch_device_and_errors():
    fit = fit_batch(_linear_step, device='gtx1080ti', optimizer='adam')
    # 11 * 2**30 - 144 >= 16n + 4: n = (11811160064 - 148) // 16
    assert fit['capacity'] == 11811160064
    assert fit['batch_size'] == 738197494
    # device names in any case, as everywhere
    assert fit_batch(_linear_step, device='GTX1080Ti',
                     optimizer='Adam')['batch_size'] == 738197494
    with pytest.raises(ValueError, match='batch 1 does not fit given: it '
                                         'needs 196 bytes, given has 150'):
        fit_batch(_linear_step, capacity=150)  # 144 + 52 > 150
    with pytest.raises(ValueError, match='optimizer must be one of sgd, '
                                         'momentumsgd, adam'):
        fit_batch(_linear_step, capacity=1000, optimizer='rmsprop')
    with pytest.raises(ValueError, match='no memory capacity preset'):
        fit_batch(_linear_step, device='epyc9654')
    with pytest.raises(ValueError, match='capacity must be a number'):
        fit_batch(_linear_step, capacity=-1)


# The command line (tests/cli_models.py's one-ReLU model)

def cli(*argv):
    import os
    import sys
    sys.path.insert(0, os.path.dirname(__file__))
    from chainer_computational_cost.__main__ import main
    out = io.StringIO()
    status = main(['cli_models:build_tiny', '--shape', '2,3', '--unit',
                   'raw', '--mode', 'csv'] + list(argv), ost=out)
    return status, out.getvalue()


def test_cli_memory():
    # the ReLU's output, 2*3*4 = 24 bytes, dropped at exit
    assert cli('--memory') == (0, (
        'Memory,Bytes B,Activations B,Gradients B,Layer\n'
        'peak,24,24,0,ReLU-1\n'
        'at exit,0,0,0,\n'
        'parameters,0,,,\n'))


def test_cli_memory_projected_and_plotted(tmp_path):
    pytest.importorskip('matplotlib')
    path = tmp_path / 'live.png'
    # --shape 2,3 is replaced by --shape 5,3: the ReLU's output 5*3*4 = 60
    status, text = cli('--memory', '--project', '--shape', '5,3',
                       '--plot-memory', str(path))
    assert status == 0
    assert text.splitlines()[1] == 'peak,60,60,0,ReLU-1'
    assert path.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_cli_fit(capsys):
    # at batch n: the ReLU's output 12n, the loss 4 and the softmax the
    # loss keeps for its backward 12n: 24n + 4 <= 1000 for n <= 41; csv
    # output is CSV only: the answer is on stderr
    assert cli('--train', '--fit', '1000', '--optimizer', 'SGD') == (0, (
        'Memory at batch 41,Bytes B\n'
        'parameters,0\n'
        'optimizer state,0\n'
        'activations,988\n'
        'gradients,0\n'
        'total,988\n'
        'capacity,1000\n'))
    assert capsys.readouterr().err == (
        'largest batch on given with sgd: 41 (peak after '
        'SoftmaxCrossEntropy-1)\n')


@pytest.mark.parametrize('argv, message', [
    (['--fit', 'h100'], '--fit needs --train'),
    (['--train', '--fit', '10'], '--fit: batch 1 does not fit given: it '
                                 'needs 28 bytes, given has 10'),
])
def test_cli_fit_errors(argv, message, capsys):
    assert cli(*argv) == (2, '')
    assert message in capsys.readouterr().err


def test_cli_fit_unknown_device(capsys):
    with pytest.raises(SystemExit) as e:
        cli('--train', '--fit', 'tpu')
    assert e.value.code == 2
    assert "'tpu' is neither a device (gtx1080ti, a100, a100-40gb, " \
        "a100-80gb, h100) nor a number of bytes > 0" in \
        capsys.readouterr().err


def test_plot_memory(tmp_path):
    matplotlib = pytest.importorskip('matplotlib')
    x = numpy.ones((4, 5), numpy.float32)
    with ComputationalCostHook(memory=True) as h:
        y = F.relu(x)
        F.exp(y)
    path = tmp_path / 'memory.png'
    fig = h.plot_memory(str(path), dpi=50)
    assert matplotlib.image.imread(str(path)).shape[:2] == (200, 450)
    assert fig.axes[0].get_ylabel() == 'Live B'
    assert 'peak 160 B after Exp-1' in [
        t.get_text() for t in fig.axes[0].texts]


def test_an_array_without_base_is_skipped():
    from chainer_computational_cost.memory import Tracker

    class Node(object):
        pass
    node = Node()
    node.kept = numpy.ones(3, numpy.float32)  # 12 bytes, kept for backward
    tracker = Tracker()
    odd = object()  # no .base: skipped, not an error
    out = numpy.ones(2, numpy.float32)  # 8 bytes
    tracker.add((odd, out, None), (), False, node)
    assert tracker.counts == [20, 0]
    tracker.add((out,), (), True, Node())  # seen: counted once
    assert tracker.counts == [20, 0]
    del out
    assert tracker.counts == [12, 0]  # freed: taken off
