"""Live memory of a run (ComputationalCostHook(memory=True)): hand-worked
figures on tiny graphs, and the peak checked against tracemalloc."""

import io
import tracemalloc

import chainer
import chainer.functions as F
import chainer.links as L
import numpy
import pytest

from chainer_computational_cost import ComputationalCostHook


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


class _Sampler(chainer.FunctionHook):
    """Traced memory right after each call (runs after the cost hook)."""

    name = 'MemorySampler'

    def __init__(self):
        self.samples = []

    def forward_postprocess(self, function, in_data):
        self.samples.append(numpy_traced())


def _against_tracemalloc(step):
    tracemalloc.start()
    try:
        sampler = _Sampler()
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
