"""Live memory of a run (ComputationalCostHook(memory=True)): figures
worked by hand on tiny graphs, the peak checked against tracemalloc, and
what the hook must never do to the user's run.

Equivalent mutants: in ``Tracker.take``, deleting ``self.seen[key] =
ref``: a reading's fold writes the index whenever take did not (what an
interrupt between the two needs), and counts a buffer added twice once;
in ``project``, ``_names(runs[1])`` for ``runs[0]``: every run makes the
same calls (project_batch refuses runs that do not), so their names are
the same.
"""

import copy
import gc
import io
import json
import sys
import tracemalloc
import weakref

import chainer
import chainer.functions as F
import chainer.links as L
import numpy
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import fit_batch
from chainer_computational_cost.collect import live_memory
from chainer_computational_cost import project_batch
from chainer_computational_cost.core.records import R_LIVE
from chainer_computational_cost.core.records import R_TYPE
from chainer_computational_cost.analysis import memory

import memory_oracle
from tracker_interrupts import interrupt_at
from helpers import OldDouble
from helpers import RELU
from cli_runs import error_of
from cli_runs import run

# Old-style Functions' backward passes are measured here for their memory;
# the warning that their FLOPs are not counted is test_hook's.
pytestmark = pytest.mark.filterwarnings('ignore:the backward of old-style')


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
    # during LinearGradWeight-1, its copy of the broadcast gradient (a
    # view BLAS cannot take), 2*4*4 = 32, is alive too
    assert (m['peak'], m['peak_layer'], m['peak_phase']) == (
        84, 'LinearGradWeight-1', 'backward')
    assert (m['activations'], m['gradients'], m['scratch']) == (4, 48, 32)
    assert m['peak_between_calls'] == 52
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
    with pytest.raises(TypeError, match='memory must be True or False'):
        ComputationalCostHook(memory=1)


def test_show_memory_report():
    x = numpy.ones((4, 5), numpy.float32)
    with ComputationalCostHook(memory=True) as h:
        y = F.relu(x)  # 80
        F.exp(y)  # freed at once: the peak is 160, 80 left
    out = io.StringIO()
    h.show_memory_report(out, mode='md', unit=None)
    assert out.getvalue() == (
        '|Memory|Bytes B|Activations B|Gradients B|Scratch B|Layer|\n'
        '|:----|:----|:----|:----|:----|:----|\n'
        '|peak|160|160|0|0|Exp-1|\n'
        '|peak between calls|160|160|0||Exp-1|\n'
        '|at exit|80|80|0|||\n'
        '|parameters|0|||||\n')


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
                 {'name': 'peak between calls', 'bytes': 0.078},
                 {'name': 'at exit', 'bytes': 0.0},
                 {'name': 'parameters', 'bytes': 0.0}]}


def test_live_column():
    x = numpy.ones((4, 5), numpy.float32)
    with ComputationalCostHook(memory=True) as h:
        F.relu(x)
    out = io.StringIO()
    h.show_report(out, columns=['name', 'live'], unit=None)
    assert out.getvalue() == 'Layer name,Live B\nReLU-1,80\ntotal,\n'


# Against tracemalloc (tests/memory_oracle.py): NumPy's buffers alive that
# the run's calls allocated, by their allocation stacks, sampled right
# after each call.  The two agree to the byte or one of them is wrong.

def _records(hook):
    return [(r[R_TYPE], r[R_LIVE]) for r in hook.records()]


def _against_tracemalloc(step):
    """Run ``step`` under the hook and the oracle: ``live`` after every
    call and at the exit must equal the traced bytes, exactly."""
    with memory_oracle.Tracing():
        sampler = memory_oracle.Sampler()
        with ComputationalCostHook(memory=True) as h:
            with sampler:
                kept = step()
            traced_exit = memory_oracle.traced_split()
    records = _records(h)
    assert [live for _, live in records] == sampler.samples, list(zip(
        records, sampler.samples))
    m = h.memory_report
    # sampled after each call: the peak between calls, to the byte
    assert m['peak_between_calls'] == max(sampler.samples)
    assert m['at_exit'] == traced_exit[1] + traced_exit[2]
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


def _v(*shape, **kw):
    rng = numpy.random.RandomState(len(shape))
    return chainer.Variable(rng.uniform(
        kw.get('lo', -1), 1, shape).astype(numpy.float32))


def _ints(high, *shape):
    return numpy.random.RandomState(1).randint(
        0, high, shape).astype(numpy.int32)


def _backward(y):
    F.sum(y).backward()
    return y


def _summed_old_style_gradients():
    x = F.relu(_v(2, 3, 8, 8))
    y = F.spatial_transformer_sampler(x, _v(2, 2, 5, 5))
    # x's other use, of the same rank, met first, is back-propagated
    # first: the sampler's gradient of x is then added to its gradient
    # while the sampler's gradient of the grid waits in Chainer's lists
    return _backward(F.sum(F.exp(x)) + F.sum(y))


# Issue 27: buffers live memory missed, and the user's arrays it counted.
# Each case is a step (forward and backward) checked call by call.
CASES = {
    # old-style Functions: the gradients their backward returns
    'roi_max_pooling_2d': lambda: _backward(F.roi_max_pooling_2d(
        _v(2, 3, 12, 12), numpy.array([[0, 0, 6, 6], [2, 2, 11, 11]],
                                      numpy.float32),
        numpy.array([0, 1], numpy.int32), 3, 1.0)),
    'spatial_transformer_sampler': lambda: _backward(
        F.spatial_transformer_sampler(_v(2, 3, 8, 8), _v(2, 2, 5, 5))),
    'hinge': lambda: _backward(F.hinge(_v(4, 5), _ints(5, 4))),
    'decov': lambda: _backward(F.decov(_v(6, 5))),
    # arrays a FunctionNode.backward makes outside any call
    'absolute_error': lambda: _backward(F.absolute_error(
        _v(8, 16), _v(8, 16, lo=0))),
    # (F.contrastive's backward is left out: one array it makes outside
    # any call, alive on Python's stack in the middle of an expression,
    # is seen only when it enters a call: 80 bytes late for 10 calls)
    'maxout': lambda: _backward(F.maxout(_v(4, 12), 3)),
    'zoneout': lambda: _backward(F.zoneout(_v(4, 5), _v(4, 5, lo=0))),
    'simplified_dropconnect': lambda: _backward(F.simplified_dropconnect(
        _v(4, 5), _v(3, 5), _v(3))),
    # an old-style Function's gradient alive while Chainer sums another
    # one it returned (in backprop_step, before the node's backward ends)
    'summed_old_style_gradients': lambda: _summed_old_style_gradients(),
    # arrays a node keeps in a list or a tuple
    'tree_lstm': lambda: _backward(F.tree_lstm(
        _v(2, 4), _v(2, 4), _v(2, 4), _v(2, 4), _v(2, 28))[1]),
    # the user's arrays a node holds
    'where': lambda: _backward(F.where(
        numpy.arange(32).reshape(4, 8) % 3 == 0, _v(4, 8), _v(4, 8, lo=0))),
    'sigmoid_cross_entropy': lambda: _backward(F.sigmoid_cross_entropy(
        _v(4, 6), _ints(2, 4, 6))),
    'batch_normalization': lambda: _backward(F.batch_normalization(
        _v(4, 5), numpy.ones(5, numpy.float32),
        numpy.zeros(5, numpy.float32),
        running_mean=numpy.zeros(5, numpy.float32),
        running_var=numpy.ones(5, numpy.float32))),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_live_after_each_call_equals_tracemalloc(case):
    with chainer.using_config('train', True):
        _against_tracemalloc(CASES[case])


def test_an_old_style_gradient_is_counted():
    x = _v(2, 3, 12, 12)  # 2*3*12*12*4 = 3456 bytes
    with ComputationalCostHook(memory=True) as h:
        _backward(F.roi_max_pooling_2d(
            x, numpy.array([[0, 0, 6, 6]], numpy.float32),
            numpy.array([0], numpy.int32), 3, 1.0))
    # x.grad, which the Function's backward made: 3456 bytes; the output
    # (1, 3, 3, 3) and the argmax indexes are freed with the graph
    assert h.memory_report['at_exit'] == 3456


def test_the_users_mask_counts_nothing():
    mask = numpy.ones((4, 8), bool)  # the user's: 32 bytes, not counted
    x = numpy.ones((4, 8), numpy.float32)
    with ComputationalCostHook(memory=True) as h:
        y = F.where(mask, x, x)  # 4*8*4 = 128
    assert lives(h) == [('Where-1', 128)]
    del y


def test_a_view_of_a_slice_of_the_users_data_counts_nothing():
    data = numpy.ones((100, 4, 8), numpy.float32)  # 12,800 bytes
    with ComputationalCostHook(memory=True) as h:
        t = F.transpose(data[:2], (0, 2, 1))  # a view of data: +0
        y = F.relu(t)  # 2*4*8*4 = 256
    assert lives(h) == [('Transpose-1', 0), ('ReLU-1', 256)]
    assert h.memory_report['peak'] == 256
    del y


def test_tree_lstm_keeps_its_gates_in_a_tuple():
    cs = [numpy.ones((2, 4), numpy.float32) for _ in range(4)]
    x = numpy.ones((2, 28), numpy.float32)  # (3 + 4 children) * 4 units
    with ComputationalCostHook(memory=True) as h:
        c, y = F.tree_lstm(*(cs + [x]))
    # c and h: 2 * (2*4*4) = 64; the kept gates a, i, o and the 4 forget
    # gates, each (2, 4): 7 * 32 = 224
    assert lives(h) == [('TreeLSTM-1', 288)]
    del c, y


# An interrupt (a signal's exception) raised while the tracker updates its
# counts reaches the user and leaves them right.  Python raises it at a
# call, a loop's jump or, when tracing, a new line: sys.settrace raises one
# at the k-th line of the functions that take bytes off and add them (on
# the main of issue 27, 'freed', the weak references' callback, which lost
# the interrupt), for every k.

def _interruptible_step(x, kept):
    y = F.relu(x)
    kept.append(F.exp(y))
    del y  # a buffer freed: its bytes are to be taken off
    loss = F.sum(kept[-1])
    loss.backward()
    kept.append(loss)


def test_an_interrupt_is_never_lost_nor_miscounts(monkeypatch):
    lost = []
    monkeypatch.setattr(sys, 'unraisablehook', lost.append)
    x = chainer.Variable(numpy.ones((4, 5), numpy.float32))
    k = 0
    with memory_oracle.Tracing():
        while True:
            k += 4  # every fourth line: the test takes a minute already
            counter = [0]
            kept = []
            interrupted = False
            with ComputationalCostHook(memory=True) as h:
                sys.settrace(interrupt_at(k, counter))
                try:
                    _interruptible_step(x, kept)
                except KeyboardInterrupt:
                    interrupted = True
                finally:
                    sys.settrace(None)
            assert not lost, (k, lost)
            assert interrupted == (counter[0] >= k)
            x.cleargrad()
            gc.collect()  # the frames the exception's traceback held
            # what the run made that is still alive, by both counts
            assert sum(h._memory.tracker.now()) == \
                memory_oracle.traced()[0], k
            if not interrupted:
                break
            del kept
    assert k > 20  # the tracker ran that many lines, each interrupted once


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
    # y freed: 4; + gW: 52, and during that call the copy of the broadcast
    # gradient (n, 4): 16n + 52
    p = project_batch(_linear_step, 10)
    assert lives(p) == [('LinearFunction-1', 160), ('Sum-1', 164),
                        ('BroadcastTo-1', 4), ('LinearGradWeight-1', 52)]
    m = p.memory_report
    assert (m['peak'], m['peak_layer'], m['batch_size']) == (
        212, 'LinearGradWeight-1', 10)
    assert (m['at_exit'], m['params']) == (48, 48)  # the loss is dropped


def test_projected_peak_equals_a_real_run():
    model, _ = _convnet()
    # inputs made before any run: the user's, in neither count
    inputs = {n: (numpy.random.RandomState(n).rand(n, 3, 32, 32).astype(
        numpy.float32), numpy.zeros(n, numpy.int32)) for n in range(1, 15)}

    def step(n):
        model.cleargrads()
        x, t = inputs[n]
        loss = F.softmax_cross_entropy(model(x), t)
        loss.backward()
        return loss
    p = project_batch(step, 7)
    projected = p.memory_report
    # a real run at 7, sampled after each call (tests/memory_oracle.py)
    with memory_oracle.Tracing():
        sampler = memory_oracle.Sampler()
        with sampler:
            step(7)
    assert projected['peak_between_calls'] == max(sampler.samples)
    # the true peak, during a call: tracemalloc's own (every allocation)
    # is NumPy's buffers, what the hook counts, and the Python objects
    # alive then, about 1.4 KB per call of the graph (31,936 bytes outside
    # NumPy's domain after this step's 23 calls); no ufunc buffer (NumPy
    # buffers a ufunc's operands only to cast or align them: all are
    # aligned float32 here)
    traced = memory_oracle.traced_peak(lambda: step(7))
    assert len(sampler.samples) == 23
    assert 0 <= traced - projected['peak'] <= 2048 * 23, (
        traced, projected['peak'], projected['peak_layer'])


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
    # params 48, Adam's state 2 * 48 = 96: the peak 16n + 52 (during
    # LinearGradWeight-1, see test_projected_lives) must fit in 1000 - 144
    # = 856: n = 50, total 144 + 852 = 996
    ('adam', 1000, 50, 996),
    # SGD: 1000 - 48 = 952 >= 16n + 52: n = 56, total 48 + 948 = 996
    ('sgd', 1000, 56, 996),
    # MomentumSGD: 2000 - 96 = 1904 >= 16n + 52: n = 115, 96 + 1892
    ('MomentumSGD', 2000, 115, 1988),
])
def test_fit_batch_by_hand(optimizer, capacity, batch, total):
    fit = fit_batch(_linear_step, optimizer=optimizer, capacity=capacity)
    assert fit['batch_size'] == batch
    assert fit['total'] == total
    assert fit['params'] == 48
    assert fit['peak_layer'] == 'LinearGradWeight-1'
    assert fit['next_total'] == total + 16  # one more sample: 4*4 bytes
    assert fit['free'] == capacity - total


def test_fit_batch_device_and_errors():
    fit = fit_batch(_linear_step, device='gtx1080ti', optimizer='adam',
                    margin=0)
    # 11 * 2**30 - 144 >= 16n + 52: n = (11811160064 - 196) // 16
    assert fit['capacity'] == 11811160064
    assert fit['batch_size'] == 738197491
    # device names in any case, as everywhere
    assert fit_batch(_linear_step, device='GTX1080Ti', optimizer='Adam',
                     margin=0)['batch_size'] == 738197491
    with pytest.raises(ValueError, match='batch 1 does not fit the capacity '
                                         '150 bytes: it needs 212 bytes'):
        fit_batch(_linear_step, capacity=150)  # 144 + 68 > 150
    with pytest.raises(ValueError, match='optimizer must be one of sgd, '
                                         'momentumsgd, adam'):
        fit_batch(_linear_step, capacity=1000, optimizer='rmsprop')
    with pytest.raises(ValueError, match="'epyc9654' is a CPU preset"):
        fit_batch(_linear_step, device='epyc9654')
    with pytest.raises(ValueError, match='capacity must be a number'):
        fit_batch(_linear_step, capacity=-1)


# The command line (tests/cli_models.py's one-ReLU model)

#: The one-ReLU model in raw CSV.
TINY = ('cli_models:build_tiny', '--shape', '2,3', '--unit', 'raw',
        '--mode', 'csv')


def cli(*argv):
    return run(*(TINY + argv))


def test_cli_memory():
    # the ReLU's output, 2*3*4 = 24 bytes, dropped at exit
    assert cli('--memory') == (0, (
        'Memory,Bytes B,Activations B,Gradients B,Scratch B,Layer\n'
        'peak,24,24,0,0,ReLU-1\n'
        'peak between calls,24,24,0,,ReLU-1\n'
        'at exit,0,0,0,,\n'
        'parameters,0,,,,\n'))


def test_cli_memory_projected_and_plotted(tmp_path):
    pytest.importorskip('matplotlib')
    path = tmp_path / 'live.png'
    # --shape 2,3 is replaced by --shape 5,3: the ReLU's output 5*3*4 = 60
    status, text = cli('--memory', '--project', '--shape', '5,3',
                       '--plot-memory', str(path))
    assert status == 0
    assert text.splitlines()[1] == 'peak,60,60,0,0,ReLU-1'
    assert path.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'


def test_cli_fit(capsys):
    # at batch n: the ReLU's output 12n, the loss 4 and the softmax the
    # loss keeps for its backward 12n: 24n + 4, and during the loss its
    # scratch (loss.py): log_y 12n, the label mask n, the masked labels
    # 4n, an int64 arange 8n, fancy indexing's two int64 buffers for the
    # int32 labels 16n and the gathered values 4n: 45n; 69n + 4 <= 1000
    # for n <= 14; csv output is CSV only: the answer is on stderr
    assert cli('--train', '--fit', '1000', '--optimizer', 'SGD') == (0, (
        'Memory at batch 14,Bytes B\n'
        'parameters,0\n'
        'optimizer state,0\n'
        'activations,340\n'
        'gradients,0\n'
        'scratch,630\n'
        'total,970\n'
        'capacity,1000\n'))
    assert capsys.readouterr().err == (
        'largest batch in 1000 bytes with sgd: 14 (peak during '
        'SoftmaxCrossEntropy-1)\n')


@pytest.mark.parametrize('argv, message', [
    (['--fit', 'h100'], '--fit needs --train'),
    (['--train', '--fit', '10'], '--fit: batch 1 does not fit the '
                                 'capacity 10 bytes: it needs 73 bytes'),
])
def test_cli_fit_errors(argv, message, capsys):
    assert cli(*argv) == (2, '')
    assert message in capsys.readouterr().err


def test_cli_fit_unknown_device(capsys):
    assert "'tpu' is neither a device (gtx1080ti, a100, a100-40gb, " \
        "a100-80gb, h100, p100, v100) nor a number of bytes > 0" in \
        error_of(capsys, *(TINY + ('--train', '--fit', 'tpu')))


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
    from chainer_computational_cost.collect.live_memory import Tracker

    class Node(object):
        pass
    node = Node()
    node.kept = numpy.ones(3, numpy.float32)  # 12 bytes, kept for backward
    tracker = Tracker()
    odd = object()  # no .base: skipped, not an error
    out = numpy.ones(2, numpy.float32)  # 8 bytes
    tracker.add((odd, out, None), (), False, node)
    assert tracker.now() == (20, 0)
    tracker.add((out,), (), True, Node())  # seen: counted once
    assert tracker.now() == (20, 0)
    del out
    assert tracker.now() == (12, 0)  # freed: taken off


class _DropsAMask(chainer.FunctionNode):
    """Doubles its input; its backward makes a mask outside any call,
    makes a call while holding it (so the hook reads the backward's
    locals), then drops it: ``freed`` says whether the mask was freed at
    once."""

    def __init__(self, freed):
        self.freed = freed

    def forward(self, inputs):
        x, = inputs
        return x * 2,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        mask = numpy.ones(gy.shape, numpy.float32)
        gx = F.identity(gy * 2)
        dropped = weakref.ref(mask)
        del mask
        self.freed.append(dropped() is None)
        return gx,


def _drops_a_mask_costs(func, in_data, **kwargs):
    return 0, 0, 0, {}


def test_an_array_a_backward_drops_is_freed_at_once():
    # the hook reads the frames of a backward to find arrays it made
    # outside calls: reading them must not keep those arrays alive
    freed = []
    x = chainer.Variable(numpy.ones((2, 3), numpy.float32))
    with ComputationalCostHook(memory=True) as h:
        h.add_custom_cost_calculator(_DropsAMask, _drops_a_mask_costs)
        y = _DropsAMask(freed).apply((x,))[0]
        F.sum(y).backward()
    assert freed == [True]


def test_an_empty_array_counts_the_byte_numpy_allocates():
    # NumPy allocates one byte for an array of no element (tracemalloc
    # sees it in NumPy's domain); ReLU of a (0, 4) input makes one
    x = numpy.ones((0, 4), numpy.float32)
    tracemalloc.start()
    try:
        before = _numpy_bytes()
        y = numpy.empty((0, 4), numpy.float32)
        assert _numpy_bytes() - before == 1
        del y
    finally:
        tracemalloc.stop()
    with ComputationalCostHook(memory=True) as h:
        y = F.relu(x)
    assert h.layer_report['ReLU-1']['live'] == 1
    assert h.memory_report['at_exit'] == 1
    del y


def _numpy_bytes():
    snapshot = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.DomainFilter(True, memory_oracle.NUMPY_DOMAIN)])
    return sum(t.size for t in snapshot.traces)


def test_a_tie_names_the_first_call_at_the_peak():
    # Exp makes 2*4*4 = 32 bytes; Reshape returns a view of them, no byte
    # more: both peaks, 32, are first reached after (and during) Exp-1
    x = numpy.ones((2, 4), numpy.float32)
    with ComputationalCostHook(memory=True) as h:
        y = F.reshape(F.exp(x), (8,))
    m = h.memory_report
    assert (m['peak'], m['peak_layer'], m['peak_between_calls'],
            m['peak_between_calls_layer']) == (32, 'Exp-1', 32, 'Exp-1')
    del y


def test_records_from_before_scratch_and_state_count_none_of_them():
    # a record saved by an earlier version ends after its live bytes and
    # gradients (no scratch), or after its scratch (no state): 0 of each;
    # a scratch of None (an MPI call) is 0; the state sums from the call
    # that created it on
    head = ('ReLU',) + (0,) * (R_LIVE - 1)
    records = [head + (16, 0), head + (16, 0, 8), head + (32, 0, None, 24),
               head + (32, 0, 4, 0)]
    assert [memory.scratch(r) for r in records] == [0, 8, 0, 4]
    assert memory.created(records) == [0, 0, 24, 24]


def test_state_an_update_replaces_keeps_counting_even_of_one_byte():
    # SMORMS3's first update creates mem, g and g2, each empty: the byte
    # NumPy allocates for each, 3 alive at exit (w's gradient is a view of
    # the loss's initial gradient, the user's).  Each later update
    # replaces the three by new ones: still 3.
    def at_exit(updates):
        link = chainer.Link()
        with link.init_scope():  # one parameter, of no element
            link.w = chainer.Parameter(numpy.zeros((0,), numpy.float32))
        opt = chainer.optimizers.SMORMS3().setup(link)
        with ComputationalCostHook(memory=True) as h:
            for _ in range(updates):
                link.cleargrads()
                F.sum(link.w).backward()
                opt.update()
        return h.memory_report['at_exit']
    assert [at_exit(k) for k in (1, 2, 3)] == [3, 3, 3]


def test_state_made_before_the_block_stays_the_users_when_replaced():
    # SMORMS3's state of a (3,) float32 parameter, made by an update
    # before the block: mem, g and g2, 3*4 = 12 bytes each, the user's.
    # Each update in the block replaces the three by new ones, which stay
    # the user's however many updates: nothing alive at exit (w's
    # gradient is a view of the loss's initial gradient).  Made in the
    # block, they are the run's: 3 * 12 = 36.
    def at_exit(updates, before):
        link = chainer.Link()
        with link.init_scope():
            link.w = chainer.Parameter(numpy.ones(3, numpy.float32))
        opt = chainer.optimizers.SMORMS3().setup(link)

        def update():
            link.cleargrads()
            F.sum(link.w).backward()
            opt.update()
        for _ in range(before):
            update()
        with ComputationalCostHook(memory=True) as h:
            for _ in range(updates):
                update()
        return h.memory_report['at_exit']
    assert [at_exit(k, 1) for k in (1, 2, 3)] == [0, 0, 0]
    assert [at_exit(k, 0) for k in (1, 2, 3)] == [36, 36, 36]


def test_an_old_style_functions_gradient_is_a_gradient():
    # y = 2x: 2*3*4 = 24 bytes of activations; the loss (4) is dropped
    # after backward; x's gradient, made by OldDouble's backward, 24 bytes
    # of gradients at exit (Sum's broadcast gradient is a view of the
    # user's initial gradient: nothing)
    x = chainer.Variable(numpy.ones((2, 3), numpy.float32))
    with ComputationalCostHook(memory=True) as h:
        h.add_custom_cost_calculator(OldDouble, _drops_a_mask_costs)
        y = OldDouble()(x)
        F.sum(y).backward()
    m = h.memory_report
    assert (m['at_exit_activations'], m['at_exit_gradients']) == (24, 24)
    del y


def test_what_is_alive_at_exit_off_a_line_is_refused():
    # the ReLU output (16n) is kept alive at exit at odd batches only:
    # 16 at 1, 0 at 2, 48 at 3, while every call's live bytes are 16n
    kept = []

    def run(n):
        y = F.relu(numpy.ones((n, 4), numpy.float32))
        del kept[:]
        if n % 2:
            kept.append(y)
    with pytest.raises(ValueError, match=r'the bytes alive at exit are not '
                       r'affine in the batch size \(16 at n=1, 0 at n=2, '
                       r'48 at n=3\)'):
        project_batch(run, 10).memory_report


def test_a_copy_of_a_hook_inside_its_block_keeps_the_figures_of_then():
    lin = chainer.links.Linear(3, 4, nobias=True)
    x = numpy.ones((2, 3), numpy.float32)
    with ComputationalCostHook(memory=True) as h:
        y = lin(x)  # 2*4*4 = 32 bytes
        twin = copy.deepcopy(h)
        z = F.exp(y)  # 32 more, after the copy
    assert (twin.memory_report['at_exit'], h.memory_report['at_exit']) == (
        32, 64)
    del y, z


class _MasksInBackward(chainer.FunctionNode):
    """Doubles its input; its backward makes two arrays outside any call
    and keeps them: one an input of the call that makes the gradient, one
    only a local while that call runs."""

    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        self.local = local = numpy.ones(2, numpy.float32)  # 8 bytes
        self.scale = numpy.full(gy.shape, 2, numpy.float32)  # 24 bytes
        gx = gy * chainer.Variable(self.scale)
        del local
        return gx,


def _at_exit_after_backward(node_class):
    """``((activations, gradients) alive at exit, x)`` of a block that
    applies ``node_class()`` to x, (2, 3) float32, and back-propagates
    the sum of its output (kept alive)."""
    x = chainer.Variable(numpy.ones((2, 3), numpy.float32))
    with ComputationalCostHook(memory=True) as h:
        h.add_custom_cost_calculator(node_class, _drops_a_mask_costs)
        y = node_class().apply((x,))[0]
        F.sum(y).backward()
    m = h.memory_report
    del y
    return (m['at_exit_activations'], m['at_exit_gradients']), x


def test_arrays_a_backward_makes_outside_calls_are_gradients():
    # y = 2x, (2, 3) float32: 24 bytes of activations.  The backward's
    # arrays are gradient memory like the gradient it returns: x's
    # gradient 24, the scale given to the product 24, the local 8: 56
    assert _at_exit_after_backward(_MasksInBackward)[0] == (24, 56)


def test_a_hook_read_inside_its_second_block_gives_that_blocks_figures():
    # the first block leaves Exp's output alive, 2*4*4 = 32 bytes at its
    # exit; read inside the second block, after a Linear(3, 4) without
    # bias (4*3*4 = 48 bytes of parameters) of (3, 3): its output,
    # 3*4*4 = 48 bytes, alive (the first block's arrays are not this
    # block's), the peak over both blocks' calls 48
    h = ComputationalCostHook(memory=True)
    with h:
        y = F.exp(numpy.ones((2, 4), numpy.float32))
    assert (h.memory_report['at_exit'], h.memory_report['params']) == (
        32, 0)
    lin = chainer.links.Linear(3, 4, nobias=True)
    with h:
        z = lin(numpy.ones((3, 3), numpy.float32))
        inside = h.memory_report
    assert (inside['at_exit'], inside['params'], inside['peak'],
            inside['n_calls']) == (48, 48, 48, 2)
    del y, z


def test_a_hook_never_entered_reports_no_memory():
    # nothing run, nothing alive, no parameters: every figure 0 (or
    # None for the calls it would name), and so does a copy
    h = ComputationalCostHook(memory=True)
    for m in (h.memory_report, copy.deepcopy(h).memory_report):
        assert (m['peak'], m['peak_layer'], m['at_exit'], m['params'],
                m['n_calls']) == (0, None, 0, 0, 0)


class _Grows(object):
    """A step calling a Linear(3, 4) (48 + 16 = 64 bytes of parameters)
    and a ReLU; from batch ``at`` on, another Linear(3, 4) with one more
    float32 parameter (68 bytes) that nothing uses."""

    def __init__(self, at):
        self.at = at
        self.small = chainer.links.Linear(3, 4)
        self.large = chainer.links.Linear(3, 4)
        with self.large.init_scope():
            self.large.unused = chainer.Parameter(
                numpy.zeros(1, numpy.float32))

    def __call__(self, n):
        lin = self.small if n < self.at else self.large
        F.relu(lin(numpy.ones((n, 3), numpy.float32)))


def test_other_parameters_at_a_top_batch_are_refused(planted):
    # ReLU's scratch 4n, 4 more at odd n: 8, 8, 16 at n=1, 2, 3 and 8, 16,
    # 16 at 2, 3, 4, on no line; so the memory's lines go through the top
    # batches 4, 9, 14, after the check run at 9 (its parameters, 64
    # bytes, as at 1)
    planted(RELU, lambda in_data: 4 * in_data[0].shape[0]
            + 4 * (in_data[0].shape[0] % 2))
    # the same parameters at 14: the scratch 16, 40, 56 at 4, 9, 14 is
    # bounded by the steepest slope, ceil(24 / 5) = 5, through the highest
    # point, max(16 - 20, 40 - 45, 56 - 70) = -4: at 20, 96; during ReLU
    # at 20 the Linear's output and ReLU's, 2 * 20*4*4 = 640: 736
    m = project_batch(_Grows(at=100), 20).memory_report
    assert (m['peak'], m['scratch'], m['params']) == (736, 96, 64)
    # a Linear with 68 bytes of parameters from 10 on: at 14 the step is
    # another step, no line through it; the reason the lines fail from
    # the first batches stands
    with pytest.raises(ValueError, match=(
            r'^the scratch bytes of ReLU-1 are not affine in the batch size '
            r'\(8 at n=1, 8 at n=2, 16 at n=3\): the peak cannot be '
            r'projected$')):
        project_batch(_Grows(at=10), 20).memory_report


class _Holder(chainer.Link):
    """A link whose parameter ``w`` has no array until initialised by
    hand; its forward is a ReLU."""

    def __init__(self):
        super(_Holder, self).__init__()
        with self.init_scope():
            self.w = chainer.Parameter()

    def forward(self, x):
        return F.relu(x)


def test_a_parameter_initialised_between_calls_of_its_link_counts():
    # nothing at the first call; w initialised to (3, 4) float32 before
    # the second: 3*4*4 = 48 bytes of parameters
    link = _Holder()
    x = numpy.ones((2, 4), numpy.float32)
    with ComputationalCostHook(memory=True) as h:
        link(x)
        assert h.memory_report['params'] == 0
        link.w.initialize((3, 4))
        link(x)
    assert h.memory_report['params'] == 48


class _OwnWeight(chainer.Chain):
    """A Linear 3 -> 3 (W 36 bytes, b 12) and a weight of its own, (3, 2)
    float32 (24 bytes), used by a method other than __call__: the Chain
    itself is never called."""

    def __init__(self):
        super(_OwnWeight, self).__init__()
        with self.init_scope():
            self.lin = L.Linear(3, 3)
            self.w = chainer.Parameter(numpy.ones((3, 2), numpy.float32))

    def predict(self, x):
        return F.matmul(self.lin(x), self.w)


def test_a_weight_used_without_calling_its_chain_counts():
    # 36 + 12 of the Linear called, and 24 of the weight the matmul reads
    # (48 only: fit_batch answered a batch the step does not fit in)
    model = _OwnWeight()
    x = numpy.ones((2, 3), numpy.float32)
    with ComputationalCostHook(memory=True) as h:
        F.sum(model.predict(x)).backward()
    assert h.memory_report['params'] == 72
    # the last call's inputs too (read at the exit), and each parameter
    # once: W read again through a transpose
    with ComputationalCostHook(memory=True) as h:
        F.matmul(model.lin(x), model.lin.W.T)
        F.sum(model.w)
    assert h.memory_report['params'] == 72


def test_lines_through_runs_whose_parameters_differ_name_them():
    # literal records: one ReLU whose live bytes are 16n at n=1, 2, 3
    # (a line: 16n, 160 at 10), nothing alive at exit; the parameters 64
    # bytes at every batch, or 68 at n=3
    head = ('ReLU',) + (0,) * (R_LIVE - 1)
    runs = [[head + (16 * n, 0, 0, 0)] for n in (1, 2, 3)]

    def project(params):
        states = [{'at_exit': (0, 0), 'params': p} for p in params]
        return memory.project(runs, states, (1, 2, 3), 10, runs[0], {})
    out, state = project((64, 64, 64))
    assert (out[0][R_LIVE], state['params'], state['error']) == (
        160, 64, None)
    out, state = project((64, 64, 68))
    assert (state['lines'], state['error']) == (
        None, 'the parameters differ between batch sizes: 64 bytes at '
        'n=1, 64 bytes at n=2, 68 bytes at n=3')


class _KeepsInBackward(chainer.FunctionNode):
    """Doubles its input; its backward keeps an array it makes after its
    last call (no call sees it, the node holds it)."""

    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        gx = grad_outputs[0] * 2
        self.saved = numpy.ones(5, numpy.float32)  # 5*4 = 20 bytes
        return gx,


def test_an_array_a_backward_keeps_after_its_calls_is_a_gradient():
    # y = 2x, (2, 3) float32: 24 bytes of activations; the backward's
    # MulConstant makes x's gradient, 24, then the node keeps 20 more:
    # 44 bytes of gradients at exit
    assert _at_exit_after_backward(_KeepsInBackward)[0] == (24, 44)


class _ExecsInBackward(chainer.FunctionNode):
    """Doubles its input; its backward makes its calls in code run by
    ``exec`` in a namespace of its own (a frame whose locals are that
    dict, not a copy)."""

    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, indexes, grad_outputs):
        namespace = {'F': F, 'gy': grad_outputs[0]}
        exec('h = gy * 2\ngx = F.identity(h)', namespace)
        return namespace['gx'],


def test_the_hook_never_empties_a_namespace_a_backward_runs_in():
    # the hook reads the frames of a backward (and empties the copies of
    # their locals it made): a namespace of the user's is left whole.
    # y = 2x: 24 bytes of activations; x's gradient, made by MulConstant
    # (Identity returns the same array): 24 bytes of gradients
    split, x = _at_exit_after_backward(_ExecsInBackward)
    assert split == (24, 24)
    assert (x.grad == 2).all()


class _NotATable(object):
    """What another backward loop may hold under the name ``grads``."""


def test_a_backward_loop_without_chainers_table_is_no_error():
    # a backward loop that is not Chainer's (no gradient table, or an
    # object that is none): the node's arrays are marked as the user's,
    # nothing else, and nothing raises.  Afterwards the marked gradient
    # counts nothing, a new one 2*4*4 = 32 bytes
    x = chainer.Variable(numpy.ones((2, 4), numpy.float32))
    node = F.relu(x).creator_node
    for table in (None, _NotATable()):
        tracker = live_memory.Tracker()
        gy = numpy.ones((2, 4), numpy.float32)
        tracker.backward_started(node, (x.array,), (gy,), table)
        tracker.take(gy, True, True)
        gx = numpy.ones((2, 4), numpy.float32)
        tracker.take(gx, True, True)
        assert tracker.now() == (0, 32)


@pytest.mark.chainer7_only  # chainer.backward is Chainer 7's
def test_initial_gradients_summed_by_chainers_loop_are_the_users():
    # chainer.backward([y, y], seeds): Chainer's loop sums the two seeds
    # (an Add made outside any node's backward); the seeds were made
    # before the block, the user's, like the gradient given to backward().
    # Arrays of 1000*3 float32 = 12000 bytes: y = 2x, 12000 of
    # activations; the sum of the seeds, 12000 of gradients; x's gradient,
    # 12000 more: peak 36000 at the second MulConstant.  At exit the sum
    # is freed: y 12000 and x's gradient 12000.
    x = chainer.Variable(numpy.ones((1000, 3), numpy.float32))
    seeds = [chainer.Variable(numpy.ones((1000, 3), numpy.float32))
             for _ in range(2)]
    with ComputationalCostHook(memory=True) as h:
        y = x * 2
        chainer.backward([y, y], seeds)
    m = h.memory_report
    assert [r['live'] for r in list(h.layer_report.values())[:3]] == [
        12000, 24000, 36000]
    assert (m['peak'], m['at_exit_activations'],
            m['at_exit_gradients']) == (36000, 12000, 12000)
    assert (x.grad == 4).all()


@pytest.mark.slow
def test_memory_report_of_an_empty_block():
    # nothing called: no peak, nothing alive, nothing split
    with ComputationalCostHook(memory=True) as cch:
        pass
    assert dict(cch.memory_report) == {
        'peak': 0, 'peak_layer': None, 'peak_phase': None,
        'activations': 0, 'gradients': 0, 'scratch': 0,
        'peak_between_calls': 0, 'peak_between_calls_layer': None,
        'peak_between_calls_activations': 0,
        'peak_between_calls_gradients': 0, 'at_exit': 0,
        'at_exit_activations': 0, 'at_exit_gradients': 0, 'params': 0,
        'n_calls': 0}


class _FromBytes(chainer.FunctionNode):
    """Returns 4 float32 viewing a new ``bytes`` object (not an array: no
    ``nbytes``, no ``base``, no weak reference)."""

    def forward(self, inputs):
        return numpy.frombuffer(bytes(16), numpy.float32),


def _from_bytes_costs(func, in_data, **kwargs):
    return 0, 0, 4, {}


@pytest.mark.slow
def test_a_view_of_a_bytes_object_counts():
    # the output of _FromBytes is the call's: 4 * 4 = 16 bytes, alive
    # while the array is, whatever owns its buffer; ReLU adds 16 more;
    # once y is dropped, Exp finds 16 (z) + 16 (its output)
    x = numpy.ones(4, numpy.float32)
    with ComputationalCostHook(memory=True) as cch:
        cch.add_custom_cost_calculator(_FromBytes, _from_bytes_costs)
        y = _FromBytes().apply((x,))[0]
        z = F.relu(y)
        del y
        F.exp(z)
    layers = cch.layer_report
    assert [layers[k]['live'] for k in ('_FromBytes-1', 'ReLU-1',
                                        'Exp-1')] == [16, 32, 32]


@pytest.mark.slow
def test_a_copy_of_a_hook_keeps_its_memory_figures():
    lin = L.Linear(3, 4, nobias=True)  # W: 4*3*4 = 48 bytes
    x = numpy.ones((2, 3), numpy.float32)
    with ComputationalCostHook(memory=True) as h:
        y = lin(x)  # 2*4*4 = 32 bytes, alive at exit
    twin = copy.deepcopy(h).memory_report
    assert (twin['at_exit'], twin['params'], twin['peak']) == (32, 48, 32)
    del y


@pytest.mark.slow
@pytest.mark.chainer7_only  # chainer.backward
def test_a_given_gradient_summed_before_its_node_runs_is_the_users():
    # y = relu(x), z = exp(y); backward from z and y, both gradients given
    # (the user's, 2*3*4 = 24 bytes each): Exp's backward makes y's second
    # gradient (Mul: gz * z) and the two are summed (Add) before ReLU's
    # node, whose output gradient the given one is, runs.  After ReLU: y,
    # 24; Exp: + z, 48; Mul: + 24, 72; Add: + the sum, 96; ReLUGrad2: + x's
    # gradient, Mul's freed: 96.  A second backward pass in the block, its
    # gradients given anew: tracemalloc agrees after each call of both.
    x = chainer.Variable(numpy.ones((2, 3), numpy.float32))
    with memory_oracle.Tracing():
        sampler = memory_oracle.Sampler()
        with ComputationalCostHook(memory=True) as h:
            with sampler:
                for _ in range(2):
                    gz, gy = (chainer.Variable(numpy.ones((2, 3),
                                                          numpy.float32))
                              for _ in range(2))
                    y = F.relu(x)
                    z = F.exp(y)
                    chainer.backward([z, y], [gz, gy])
    lives = [(r[R_TYPE], r[R_LIVE]) for r in h.records()]
    assert lives[:5] == [('ReLU', 24), ('Exp', 48), ('Mul', 72),
                         ('Add', 96), ('ReLUGrad2', 96)]
    assert [live for _, live in lives] == sampler.samples
    del y, z


@pytest.mark.slow
def test_a_projection_keeps_what_is_alive_at_exit_at_its_batch():
    # the run leaves its ReLU output alive (16n bytes) when it returns
    kept = {}

    def run(n):
        kept['y'] = F.relu(numpy.ones((n, 4), numpy.float32))
    m = project_batch(run, 10).memory_report
    assert (m['at_exit'], m['at_exit_activations']) == (160, 160)
