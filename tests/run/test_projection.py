"""Any batch size without running it: projections from runs at batch 1,
2 and 3 equal real runs exactly, and what cannot be projected is a clear
error."""

import io
import pickle

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import project_batch
from chainer_computational_cost import Projection


class SmallNet(chainer.Chain):
    """conv, BN (training mode), ReLU, dropout, linear."""

    def __init__(self):
        super(SmallNet, self).__init__()
        with self.init_scope():
            self.conv = L.Convolution2D(3, 4, 3, pad=1)
            self.bn = L.BatchNormalization(4)
            self.fc = L.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        h = F.relu(self.bn(self.conv(x)))
        h = F.max_pooling_2d(h, 2)
        return self.fc(F.dropout(h, 0.5))


def _step(model, backward):
    def run(n):
        rng = np.random.RandomState(n)
        x = rng.rand(n, 3, 8, 8).astype(np.float32)
        t = rng.randint(0, 5, n).astype(np.int32)
        model.cleargrads()
        with chainer.using_config('train', True):
            loss = F.softmax_cross_entropy(model(x), t)
            if backward:
                loss.backward()
    return run


def _real(run, n):
    with ComputationalCostHook(strict=True) as cch:
        run(n)
    return cch


def _figures(reporter):
    return [(name, r['type'], r['phase'], r['link'], r['flops'], r['mread'],
             r['mwrite'], r['input_shapes'], r['output_shapes'])
            for name, r in reporter.layer_report.items() if name != 'total']


@pytest.mark.parametrize('backward', [False, True])
def test_a_training_mode_model_projects_exactly(backward):
    run = _step(SmallNet(), backward)
    projected = project_batch(run, 7)
    real = _real(run, 7)
    assert isinstance(projected, Projection)
    assert projected.batch_size == 7
    assert _figures(projected) == _figures(real)
    assert projected.total_report == real.total_report
    assert projected.summary_report == real.summary_report
    assert projected.link_report == real.link_report
    assert projected.phase_report == real.phase_report
    assert projected.ignored_layers == real.ignored_layers == {}


def test_projected_shapes_grow_on_the_batch_axis():
    projected = project_batch(lambda n: F.relu(np.ones((n, 3), np.float32)),
                              256)
    r = projected.layer_report['ReLU-1']
    assert r['input_shapes'] == [(256, 3)] == r['output_shapes']
    # 768 elements: 768 FLOPs, 3072 bytes each way
    assert (r['flops'], r['mread'], r['mwrite']) == (768, 3072, 3072)


def test_batch_dependent_params_are_projected():
    def run(n):
        F.reshape(np.ones((n, 6), np.float32), (n, 2, 3))
    r = project_batch(run, 10).layer_report['Reshape-1']
    assert r['output_shapes'] == [(10, 2, 3)]
    assert r['params']['out_shape'] == (10, 2, 3)


def test_a_quadratic_cost_is_a_clear_error():
    def run(n):
        x = np.ones((n, 4), np.float32)
        F.matmul(x, x.T)
    # |y| = n*n outputs of 4 multiply-adds: 4, 16, 36
    with pytest.raises(ValueError, match=r'flops of layer MatMul-1 is not '
                       r'affine in the batch size: 4 at n=1, 16 at n=2, '
                       r'36 at n=3'):
        project_batch(run, 32)


def test_calls_that_depend_on_the_batch_are_a_clear_error():
    def run(n):
        x = np.ones((n, 2), np.float32)
        for _ in range(n):
            x = F.relu(x)
    with pytest.raises(ValueError, match='the calls differ between batch '
                       'sizes: 1 calls at n=1, 2 at n=2'):
        project_batch(run, 8)

    def branchy(n):
        x = np.ones((n, 2), np.float32)
        # calls differing at batches 1, 2, 3 and at 2, 3, 4 too
        F.relu(x) if n % 2 else F.sigmoid(x)
    with pytest.raises(ValueError, match='call 1 is ReLU-1 at n=1 but '
                       'Sigmoid-1 at n=2'):
        project_batch(branchy, 8)


@pytest.mark.parametrize('kwargs, error', [
    ({'run': 3, 'batch_size': 2}, TypeError),
    ({'run': print, 'batch_size': 0}, ValueError),
    ({'run': print, 'batch_size': 2.5}, ValueError),
    ({'run': print, 'batch_size': 2, 'fma_1flop': 'no'}, TypeError)])
def test_bad_arguments(kwargs, error):
    with pytest.raises(error):
        project_batch(**kwargs)


def test_a_projection_renders_like_the_hook():
    projected = project_batch(
        lambda n: F.relu(np.ones((n, 3), np.float32)), 100)
    out = io.StringIO()
    projected.show_summary_report(out, unit=None)
    # 300 elements
    assert out.getvalue().splitlines()[1] == 'ReLU,1,300,1200,1200,2400'


def _sliced(stop):
    def run(n):
        x = chainer.Variable(np.ones((n, 3), np.float32))
        F.sum(x[:stop])
    return run


def test_a_slice_of_a_fixed_size_is_refused_beyond_it():
    # GetItem reads and writes its output, 3 floats per sample kept: on the
    # line of n=1, 2, 3, 9 samples read 27 floats = 108 bytes; x[:4] keeps
    # 4 samples, 12 floats = 48 bytes
    with pytest.raises(ValueError, match=r'^layer GetItem-1 does not follow '
                       r'the batch size beyond n=3: its mread at n=9 would '
                       r'be 108 on the line through n=1, 2, 3 but a real run '
                       r'gives 48; project_batch needs figures affine in '
                       r'the batch size$'):
        project_batch(_sliced(4), 10)
    # checked by a run at the batch itself: 5 > 4 is found too
    with pytest.raises(ValueError, match='its mread at n=5 would be 60'):
        project_batch(_sliced(4), 5)
    # up to the slice the figures are the line's: Sum of 12 floats
    assert project_batch(_sliced(4), 4).total_report['flops'] == 11


def test_the_check_batch_can_be_chosen():
    # a slice beyond the default check (9) is found by a larger one
    assert project_batch(_sliced(20), 15).total_report['flops'] == 44
    with pytest.raises(ValueError, match='GetItem-1 does not follow the '
                       'batch size beyond n=3: its mread at n=21'):
        project_batch(_sliced(20), 30, check_batch=21)
    for bad in (4, 2.5, True, '9'):
        with pytest.raises(ValueError, match='check_batch must be None or '
                           'an int >= 5'):
            project_batch(_sliced(20), 30, check_batch=bad)


def _mean_step(n):
    x = chainer.Variable(np.ones((n, 4), np.float32))
    F.sum(F.mean(x, axis=0)).backward()


def test_a_reduction_over_the_batch_projects_from_batch_2():
    # at n=1 Chainer skips broadcasting the gradient back to (1, 4): the
    # calls line up from n=2.  At 8: Mean 8 * 4 = 32 (7 adds and a
    # division per column), Sum 3, MulConstant 4 (the gradient's 1/8)
    projected = project_batch(_mean_step, 8)
    assert projected.total_report['flops'] == 32 + 3 + 4
    assert _figures(projected) == _figures(_real(_mean_step, 8))
    # batch 1 is the real run at 1: no BroadcastTo-2; 4 + 3 + 4 FLOPs
    one = project_batch(_mean_step, 1)
    assert 'BroadcastTo-2' not in one.layer_report
    assert one.total_report['flops'] == 11


def test_calls_that_differ_at_batch_1_only_project_from_batch_2():
    def branchy(n):
        x = np.ones((n, 2), np.float32)
        F.relu(x) if n == 1 else F.sigmoid(x)
    r = project_batch(branchy, 8).layer_report
    assert list(r) == ['Sigmoid-1', 'total']
    assert r['Sigmoid-1']['output_shapes'] == [(8, 2)]


def test_one_sequence_per_sample_projects():
    lstm = L.NStepLSTM(1, 3, 4, 0.0)

    def run(n):
        lstm(None, None, [np.ones((4, 3), np.float32) for _ in range(n)])
    projected = project_batch(run, 5)
    real = _real(run, 5)
    assert _figures(projected) == _figures(real)
    # 912 FLOPs a sequence of 4 steps
    assert projected.total_report['flops'] == 5 * 912
    r = projected.layer_report['TransposeSequence-1']
    assert r['input_shapes'] == [(4, 3)] * 5
    assert r['output_shapes'] == [(5, 3)] * 4


def test_a_new_index_array_in_every_run_projects():
    def run(n):
        x = chainer.Variable(np.ones((n, 3), np.float32))
        F.sum(x[:, np.array([0, 2])])
    r = project_batch(run, 10).layer_report
    # 10 * 2 = 20 elements summed: 19 adds
    assert r['Sum-1']['flops'] == 19
    assert r['GetItem-1']['output_shapes'] == [(10, 2)]
    index = r['GetItem-1']['params']['slices'][1]
    assert index.tolist() == [0, 2]


def test_a_param_that_does_not_follow_the_batch_is_none():
    def run(n):
        x = chainer.Variable(np.ones((n, 3), np.float32))
        F.sum(x[np.arange(n)[::-1]])
    r = project_batch(run, 10).layer_report['GetItem-1']
    # an index array of n entries: not the one of the run at batch 1
    assert r['params'] == {'slices': None}
    assert r['output_shapes'] == [(10, 3)]


def test_a_projection_pickles():
    projected = project_batch(_step(SmallNet(), True), 7)
    loaded = pickle.loads(pickle.dumps(projected))
    assert isinstance(loaded, Projection)
    assert loaded.batch_size == 7
    assert loaded.layer_report == projected.layer_report
    assert 'test_projection.py' in loaded.layer_report[
        'LinearFunction-1']['traceback']
