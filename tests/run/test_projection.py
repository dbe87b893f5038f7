"""Any batch size without running it: projections from runs at batch 1,
2 and 3 equal real runs exactly, what a projection says about itself and
its figures and the batches project_batch runs (worked by hand), and
what cannot be projected is a clear error.

A scratch on a line through TOP_BATCHES is drawn by the bounded attempt
through them, whose bound of points on a line is that line, and nothing
is named bounded (test_a_scratch_on_a_line_from_batch_4).

A parameter that differs only at batch 1 is unknown, not the value of
the later batches (test_a_parameter_off_at_batch_1_is_unknown).
"""

import io
import pickle
import warnings

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import numpy
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import project_batch
from chainer_computational_cost import Projection
from chainer_computational_cost.core.records import ReportWarning
from chainer_computational_cost.cost_calculators import IndexArray
from chainer_computational_cost.run import projection
from chainer_computational_cost.core.records import R_FLOPS, R_LIVE, R_STATE

from calibration_fixtures import literal_calibration
from helpers import RELU


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


def test_a_link_given_as_the_run_is_told_to_be_wrapped():
    # a Link is callable: called with n, it failed inside Chainer
    # ("Linear.forward() missing 1 required positional argument")
    link = L.Linear(4)  # sized at its first call
    with pytest.raises(TypeError, match=(
            r"^run must be a callable run\(n\) that runs the model at "
            r"batch n, got the Linear link itself, which takes the model's "
            r"inputs: wrap it, as lambda n: model\(x\[:n\]\)$")):
        project_batch(link, 8)
    assert link.W.array is None  # never called


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
    # the index array by its shape and dtype, the same in every run
    assert r['GetItem-1']['params']['slices'][1] == IndexArray((2,), np.int64)


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


def test_a_projections_snapshot_keeps_its_batch_size():
    # the first call is on a class token of batch 1: the scaling report
    # reads the projection's batch, 7 samples a worker in the 1 ms
    # measured: 7000/s, from the snapshot and from its pickle too
    token = chainer.Parameter(numpy.zeros((1, 3), numpy.float32))
    lin = L.Linear(3, 2)

    def run(n):
        lin.cleargrads()
        x = numpy.ones((n, 3), numpy.float32)
        F.sum(lin(F.broadcast_to(token, (n, 3)) + x)).backward()
    snap = project_batch(run, 7).snapshot()
    for copy in (snap, pickle.loads(pickle.dumps(snap))):
        assert copy.batch_size == 7
        assert copy.scaling_report([1], device='a100', network='ib-hdr200',
                                   step_time=1e-3)[1][
            'samples_per_s'] == 7000.0


_lin = L.Linear(3, 4)


def _linear_mean_step(n):
    # Chainer broadcasts nothing at batch 1: the calls differ there, so
    # the lines go through batches 2, 3, 4 and batch 1 is its own run
    _lin.cleargrads()
    F.sum(F.mean(_lin(numpy.ones((n, 3), numpy.float32)), axis=0)).backward()


def test_batch_1_below_the_lines_is_a_projection_to_batch_1():
    # what was asked, as asked: batch 1, the convention given; the
    # LinearFunction of 1 sample: 4 outputs of 3 multiply-adds and a bias,
    # 4 * (3 + 1) = 16 FLOPs, or PyTorch's 2 a multiply-add and no bias:
    # 2 * 4 * 3 = 24
    p = project_batch(_linear_mean_step, 1)
    assert (p.batch_size, p.flop_convention) == (1, None)
    assert p.memory_report['batch_size'] == 1
    assert p.layer_report['LinearFunction-1']['flops'] == 16
    # batch 2, the first of the lines: 2 * 16 = 32
    p = project_batch(_linear_mean_step, 2)
    assert (p.batch_size, p.memory_report['batch_size']) == (2, 2)
    assert p.layer_report['LinearFunction-1']['flops'] == 32
    torch = project_batch(_linear_mean_step, 1, flop_convention='torch')
    assert (torch.batch_size, torch.flop_convention) == (1, 'torch')
    assert torch.layer_report['LinearFunction-1']['flops'] == 24
    # at batch 6, on the lines: 6 * 16 = 96 and 6 * 24 = 144
    p = project_batch(_linear_mean_step, 6, flop_convention='torch')
    assert (p.batch_size, p.flop_convention) == (6, 'torch')
    assert p.layer_report['LinearFunction-1']['flops'] == 144
    # not fused: 3 multiplies, 2 adds and a bias a output: 6 * 4 * 6
    p = project_batch(_linear_mean_step, 6, fma_1flop=False)
    assert p.layer_report['LinearFunction-1']['flops'] == 144
    assert p.fma_1flop is False


def test_the_batches_a_projection_may_run():
    # what the command line allocates inputs for before --project runs:
    # BATCHES 1, 2, 3, LATER_BATCHES 2, 3, 4 and the check at
    # min(check_batch, batch_size), default 9
    from chainer_computational_cost.run.projection import sample_batches
    assert sample_batches(20) == (1, 2, 3, 4, 9)
    assert sample_batches(7) == (1, 2, 3, 4, 7)
    assert sample_batches(3) == (1, 2, 3, 4)
    assert sample_batches(20, check_batch=12) == (1, 2, 3, 4, 12)
    assert sample_batches(20, check_batch=None) == (1, 2, 3, 4)


def test_recorded_values_compare_without_raising():
    # what decides that a parameter is the same at every batch: arrays by
    # shape, dtype and elements; containers item by item; values of
    # other types differ; a comparison that raises is a difference
    from chainer_computational_cost.run.projection import same
    a = numpy.array([0, 2])
    assert same([a, numpy.array([0, 2])])
    assert not same([a, numpy.array([0, 3])])
    assert not same([a, a.astype(numpy.int8)])
    assert not same([a, numpy.array([0, 2, 2])])  # no broadcasting
    assert not same([a, numpy.array([[0, 2]])])
    assert same([(1, [a, {'k': 2}]), (1, [a.copy(), {'k': 2}])])
    assert not same([(1, 2), (1, 2, 3)])
    assert not same([(1, 2), [1, 2]])
    assert not same([{'k': 1}, {'j': 1}])
    assert not same([{'k': 1}, {'k': 2}])
    assert not same([1, True]) and not same([1, 1.0])
    assert same([None, None]) and same([0.5, 0.5])
    # a value of every batch, each against the others: the last one
    # differing is a difference; one value is the same as itself
    assert same([a, a.copy(), numpy.array([0, 2])])
    assert not same([a, a.copy(), numpy.array([0, 3])])
    assert not same([a, a, a.astype(numpy.int8)])
    assert not same([1, 1, 2]) and not same([1, 1, 1.0])
    assert not same([(1, 2), (1, 2), (1, 3)])
    assert not same([(1,), (1,), (1, 2)])
    assert not same([{'k': 1}, {'k': 1}, {'j': 1}])
    assert not same([{'k': 1}, {'k': 1}, {'k': 2}])
    assert same([7]) and same([(a, 2)])
    # a value with a shape but no dtype (a structured dtype) is no array:
    # it compares with ==
    assert same([numpy.dtype([('k', 'f4')]), numpy.dtype([('k', 'f4')])])

    class Unequal(object):
        def __eq__(self, other):
            raise RuntimeError('no comparison')
        __hash__ = object.__hash__
    u = Unequal()
    assert same([u, u])  # itself
    assert not same([u, Unequal()])


class _Either(chainer.Chain):
    """Links ``a`` and ``b``, both called every time; the one ReLU is
    made in ``a`` when ``in_a(n)``, in ``b`` otherwise."""

    def __init__(self, in_a):
        super(_Either, self).__init__()
        with self.init_scope():
            self.a = _Maybe(lambda n: in_a(n))
            self.b = _Maybe(lambda n: not in_a(n))

    def forward(self, x):
        return self.b(self.a(x))


class _Maybe(chainer.Chain):
    def __init__(self, when):
        super(_Maybe, self).__init__()
        self.when = when

    def forward(self, x):
        return F.relu(x) if self.when(len(x)) else x


def test_a_call_that_moves_to_another_link_is_a_clear_error():
    # the same calls and the same links at every batch, but ReLU-1 is in
    # /a at odd batches and in /b at even ones: neither 1, 2, 3 nor 2, 3,
    # 4 agree, and the error names the call and the first batches
    model = _Either(lambda n: n % 2 == 1)

    def run(n):
        model(numpy.ones((n, 2), numpy.float32))
    with pytest.raises(ValueError, match=r'^the calls differ between batch '
                       r'sizes: ReLU-1 is not made in the same phase or '
                       r'link, or is not costed alike at n=1, 2, 3$'):
        project_batch(run, 8)
    # in /b from batch 2 on: batches 2, 3, 4 agree, and batch 1 is its
    # own run
    model = _Either(lambda n: n == 1)
    assert project_batch(run, 8).layer_report['ReLU-1']['link'] == '/b'
    assert project_batch(run, 1).layer_report['ReLU-1']['link'] == '/a'


def test_shapes_off_their_line_are_a_clear_error():
    # Reshape of n*6 elements to (2n, 3) at odd n, (3, 2n) at even n: no
    # FLOPs nor bytes (a view), but its output's first axis 2, 3, 6 at
    # n=1, 2, 3 (3, 6, 3 at 2, 3, 4) is on no line
    def run(n):
        x = numpy.ones((n, 6), numpy.float32)
        F.reshape(x, (2 * n, 3) if n % 2 else (3, 2 * n))
    with pytest.raises(ValueError, match=r'^the shapes of layer Reshape-1 '
                       r'do not grow along the batch: \(\(1, 6\), \(2, 3\)\)'
                       r' at n=1, \(\(2, 6\), \(3, 4\)\) at n=2'):
        project_batch(run, 8)


def test_calls_that_change_at_the_check_run_name_the_batches_compared():
    # the same calls at 1, 2, 3 (the lines), others at the check run 9:
    # the error names the last batch of the lines, 3, and 9
    def swapped(n):
        x = numpy.ones((n, 2), numpy.float32)
        F.relu(x) if n < 5 else F.exp(x)
    with pytest.raises(ValueError, match=(
            r'^the calls differ between batch sizes: call 1 is ReLU-1 at '
            r'n=3 but Exp-1 at n=9; project_batch needs a run whose calls '
            r'do not depend on the batch size$')):
        project_batch(swapped, 20)

    def more(n):
        x = F.relu(numpy.ones((n, 2), numpy.float32))
        if n >= 5:
            F.exp(x)
    with pytest.raises(ValueError, match=(
            r'^the calls differ between batch sizes: 1 calls at n=3, 2 at '
            r'n=9$')):
        project_batch(more, 20)

    def mean_then_exp(n):
        # batch 1 broadcasts nothing in Mean's backward: its calls differ
        x = chainer.Variable(numpy.ones((n, 3), numpy.float32))
        F.sum(F.mean(x, axis=0) if n < 5 else F.exp(x)).backward()
    # so the lines go through 2, 3, 4: the last of them is 4
    with pytest.raises(ValueError, match=(
            r'^the calls differ between batch sizes: call 1 is Mean-1 at '
            r'n=4 but Exp-1 at n=7;')):
        project_batch(mean_then_exp, 7)


def test_shapes_that_leave_their_line_beyond_the_first_runs_are_refused():
    # Reshape of n*4 elements to (4n,) below batch 5, (2n, 2) from 5 on: a
    # view, no FLOPs nor bytes at any batch, so only its output's shape
    # shows it: (4,), (8,), (12,) at n=1, 2, 3 put (36,) at the check run
    # n=9, which gives (18, 2); never the (80,) of a line at batch 20
    def run(n):
        x = numpy.ones((n, 4), numpy.float32)
        F.reshape(x, (4 * n,) if n < 5 else (2 * n, 2))
    with pytest.raises(ValueError, match=(
            r'^layer Reshape-1 does not follow the batch size beyond n=3: '
            r'its shapes at n=9 would be \(\(9, 4\), \(36,\)\) on the line '
            r'through n=1, 2, 3 but a real run gives \(\(9, 4\), \(18, 2\)\)'
            r'; project_batch needs figures affine in the batch size$')):
        project_batch(run, 20)
    # below the check batch nothing tells: the lines stand
    assert project_batch(run, 4).layer_report['Reshape-1']['params'] == {
        'in_shape': (4, 4), 'out_shape': (16,)}


def test_inputs_of_many_shapes_whose_count_follows_the_batch():
    # Concat of a (2, 2) block and n - 1 rows (1, 2): its bytes (2n + 2
    # floats read and written) and its output (n + 1, 2) follow the batch,
    # its inputs do not repeat one shape: their list cannot be projected
    def run(n):
        rows = [numpy.ones((2, 2), numpy.float32)] + [
            numpy.ones((1, 2), numpy.float32)] * (n - 1)
        F.concat(rows, axis=0)
    with pytest.raises(ValueError, match=r'^the shapes of layer Concat-1 '
                       r'do not grow along the batch: \(\(2, 2\), \(2, 2\)\)'
                       r' at n=1, \(\(2, 2\), \(1, 2\), \(3, 2\)\) at n=2'):
        project_batch(run, 8)


def test_a_batch_that_was_run_reports_its_own_memory(planted):
    # ReLU's planted scratch 4n, 4 more at odd n: on no line through 1,
    # 2, 3, nor 2, 3, 4, nor the top batches 4, 9, 14 (16, 40, 56), so a
    # line bounds it from above; batch 14 was one of the runs: its own
    # figures, scratch 4*14 = 56 beside ReLU's output 16*14 = 224
    planted(RELU, lambda in_data: 4 * in_data[0].shape[0]
            + 4 * (in_data[0].shape[0] % 2))

    def run(n):
        F.relu(numpy.ones((n, 4), numpy.float32))
    m = project_batch(run, 14).memory_report
    assert (m['peak'], m['scratch'], m['activations']) == (280, 56, 224)


def test_a_numpy_batch_size_gives_python_ints():
    # a batch size from NumPy (a shape, an argmax) is taken as an int:
    # the projection's figures are plain ints, as a real run's; ReLU of
    # 20 * 4 elements: 80 FLOPs
    p = project_batch(lambda n: F.relu(numpy.ones((n, 4), numpy.float32)),
                      numpy.int64(20))
    assert type(p.batch_size) is int and p.batch_size == 20
    flops = p.layer_report['ReLU-1']['flops']
    assert type(flops) is int and flops == 80


def test_memory_off_its_lines_at_the_check_keeps_the_costs(
        planted):
    # ReLU's planted scratch 8 * min(n, 5): 8, 16, 24, 32 at 1 to 4 (a
    # line), 40 at the check batch 9 where the line says 72: the memory
    # cannot be projected, the costs can (ReLU of 20 * 4 elements: 80
    # FLOPs), and the records keep the hook's layout, their memory unknown
    from chainer_computational_cost.core.records import R_LIVE, R_STATE
    planted(RELU, lambda in_data: 8 * min(in_data[0].shape[0], 5))

    def run(n):
        F.relu(numpy.ones((n, 4), numpy.float32))
    p = project_batch(run, 20)
    assert p.layer_report['ReLU-1']['flops'] == 80
    records = p.records()
    assert [len(r) for r in records] == [R_STATE + 1]
    assert records[0][R_LIVE:R_LIVE + 3] == (None, None, None)
    assert records[0][R_STATE] == 0  # no optimizer state
    with pytest.raises(ValueError, match='the peak cannot be projected'):
        p.memory_report


def _shrinking_concat(n):
    # one call whose inputs shrink as the batch grows: 5 - n of them
    F.concat([numpy.ones((1, 2), numpy.float32)] * (5 - n))


def _shrinking_split(n):
    # one call whose outputs shrink as the batch grows: 5 - n of (1, 2)
    F.split_axis(numpy.ones((1, 2 * (5 - n)), numpy.float32), 5 - n, 1)


@pytest.mark.parametrize('run, shapes, name', [
    (_shrinking_concat, 'input_shapes', 'Concat-1'),
    (_shrinking_split, 'output_shapes', 'SplitAxis-1')])
def test_a_call_is_never_projected_without_inputs_or_outputs(run, shapes,
                                                             name):
    # 4, 3, 2 inputs (or outputs) at batches 1, 2, 3: one at batch 4, a
    # call as any; none at batch 5, which no call is: refused, the call
    # named
    p = project_batch(run, 4, check_batch=None)
    assert [r[shapes] for r in p.layer_report.values()
            if shapes in r] == [[(1, 2)]]
    with pytest.raises(ValueError, match=name + ' do not grow'):
        project_batch(run, 5, check_batch=None)


class _Unknown(chainer.FunctionNode):
    """A function no calculator knows: ignored, with a ReportWarning."""

    def forward(self, inputs):
        return inputs[0] * 2,


def test_a_warning_of_the_runs_is_said_once():
    # the runs at 1, 2, 3 and the check run at 9 each ignore _Unknown
    # (no figures: a line of zeros); the user is told once, not 4 times
    def run(n):
        _Unknown().apply((numpy.ones((n, 2), numpy.float32),))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        p = project_batch(run, 20)
    said = [str(w.message) for w in caught
            if issubclass(w.category, ReportWarning)]
    assert len(said) == 1 and '_Unknown' in said[0], said
    assert p.batch_size == 20


def test_memory_off_every_line_gives_the_first_batches_reason():
    # the ReLU output (16n bytes) kept alive at exit at batches divisible
    # by 3 only: 0, 0, 48 at n=1, 2, 3, and 0, 48, 0 at 2, 3, 4, on no
    # line either time: the reason given is that of the first batches
    kept = []

    def run(n):
        y = F.relu(numpy.ones((n, 4), numpy.float32))
        kept[:] = [y] if n % 3 == 0 else []
    with pytest.raises(ValueError, match=(
            r'^the bytes alive at exit are not affine in the batch size '
            r'\(0 at n=1, 0 at n=2, 48 at n=3\): they cannot be '
            r'projected$')):
        project_batch(run, 20).memory_report


def _logged(step):
    """``step`` that notes every batch size it is run at in ``.batches``."""
    def run(n):
        run.batches.append(n)
        step(n)
    run.batches = []
    return run


def _relu(n):
    F.relu(numpy.ones((n, 4), numpy.float32))


def test_a_batch_size_no_float_holds_is_refused_before_a_run():
    # 10**400 has 401 digits; the largest float is 1.797...e308.  Its
    # time report raised OverflowError (int too large to convert to float)
    calls = []
    with pytest.raises(ValueError, match=r'^batch_size must be an int >= 1 '
                       r'that a float holds \(at most 1\.798e\+308\), got '
                       r'one of 401 digits$'):
        project_batch(calls.append, 10 ** 400)
    assert calls == []


def test_figures_past_a_float_at_a_batch_a_float_holds_are_refused():
    # ReLU of (n, 4) float32: 16n bytes read and 16n written, 32n in all;
    # at n = 10**307 that is 3.2e308, past the largest float: the times
    # cannot be computed, and the report says so (not OverflowError)
    p = project_batch(_relu, 10 ** 307, check_batch=None)
    assert p.total_report['mread'] == 16 * 10 ** 307  # exact: ints
    with pytest.raises(ValueError, match=r"^roofline: the figures of call "
                       r"ReLU-1 .* beyond a float's range"):
        p.roofline_report('gtx1080ti')
    with pytest.raises(ValueError, match="beyond a float's range"):
        p.time_report(literal_calibration())


_lin_nobias = L.Linear(3, 4, nobias=True)


def _mean(n):
    # Chainer broadcasts nothing at batch 1: the calls differ there
    _lin_nobias.cleargrads()
    x = numpy.ones((n, 3), numpy.float32)
    F.sum(F.mean(_lin_nobias(x), axis=0)).backward()


@pytest.mark.slow
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


@pytest.mark.slow
def test_a_bending_scratch_runs_the_top_batches(planted):
    # the uneven scratch of test_live_memory_peak (4n, 4 more at odd
    # batches) is on no line through 1, 2, 3 nor 2, 3, 4: TOP_BATCHES 4,
    # 9 and 2*9 - 4 = 14 (9 first: the costs are checked before the
    # memory is drawn)
    planted(RELU, lambda in_data: 4 * in_data[0].shape[0]
            + 4 * (in_data[0].shape[0] % 2))
    run = _logged(_relu)
    project_batch(run, 20)
    assert run.batches == [1, 2, 3, 9, 4, 14]


@pytest.mark.slow
def test_measure_counts_a_fused_multiply_add_once():
    # measure's default fma_1flop=True: LinearFunction at batch 2, 2*4
    # outputs of 3 multiply-adds: 24 FLOPs; with fma_1flop=False 3
    # multiplies and 2 adds each: 2*4*5 = 40
    def run(n):
        _lin_nobias(numpy.ones((n, 3), numpy.float32))
    records = projection.measure(run, 2)[0]
    assert records[0][R_FLOPS] == 24
    assert projection.measure(run, 2, fma_1flop=False)[0][0][R_FLOPS] == 40


@pytest.mark.slow
def test_at_exit_of_batch_1_below_the_lines():
    # the step keeps its Linear's output (n, 4) alive after it: at exit
    # 16n of it and gW 48; batch 1 (off the lines through 2, 3, 4) is its
    # own run: 64; on the lines at 20: 320 + 48
    kept = []

    def run(n):
        _lin_nobias.cleargrads()
        h = _lin_nobias(numpy.ones((n, 3), numpy.float32))
        kept[:] = [h]
        F.sum(F.mean(h, axis=0)).backward()
    for n, at_exit in ((1, 64), (2, 80), (20, 368)):
        m = project_batch(run, n).memory_report
        assert (m['at_exit'], m['at_exit_activations'],
                m['at_exit_gradients']) == (at_exit, at_exit - 48, 48)


def test_batch_1_below_the_lines_has_its_memory_when_theirs_is_off():
    # the calls differ at batch 1 (a mean broadcasts nothing there) and
    # the bytes alive at exit are off every line of batches 2, 3, 4 (a
    # ReLU's output kept at batch 3 only): batch 1's own run answers,
    # the ReLU's 1 x 4 float32 output (16 bytes) beside x's gradient (16)
    kept = []

    def run(n):
        x = chainer.Variable(numpy.ones((n, 4), numpy.float32))
        F.sum(F.mean(x, axis=0)).backward()
        y = F.relu(numpy.ones((n, 4), numpy.float32))
        if n == 3:
            kept.append(y)
    m = project_batch(run, 1).memory_report
    assert (m['peak'], m['peak_layer'], m['activations'], m['gradients'],
            m['at_exit'], m['batch_size']) == (32, 'ReLU-1', 16, 16, 0, 1)


@pytest.mark.slow
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


@pytest.mark.slow
def test_links_differ_at_the_check():
    model = _Branch(lambda n: n < 5)

    def run(n):
        model(numpy.ones((n, 3), numpy.float32))
    # the root and the child called: '/a' at 1, 2, 3, '/b' at the check
    with pytest.raises(ValueError, match=(
            r"the links called differ between batch sizes: "
            r"\['/', '/a'\] at n=1, \['/', '/b'\] at n=9")):
        project_batch(run, 20)


def test_a_link_called_once_a_sample_is_named():
    # the same link at each batch, called n times: the message listed
    # "['/'] at n=1, ['/'] at n=2, ['/'] at n=3", the same three times
    link = L.Linear(3, 2)

    def run(n):
        for i in range(n):
            link(numpy.ones((1, 3), numpy.float32))
    with pytest.raises(ValueError, match=(
            r"^the links called differ between batch sizes: link '/' is "
            r"called 1, 2, 3 times at n=1, 2, 3$")):
        project_batch(run, 20)


@pytest.mark.slow
def test_records_of_a_batch_that_was_run_keep_the_layout():
    # records.py: a projection's records have the hook's layout, 17
    # fields, the optimizer state created last (0: no update here); at
    # batch 9 (the check run) the live bytes are that run's: LinearFunction
    # 16*9 = 144, Exp 288 (see test_fit's _exp_step)
    def run(n):
        _lin_nobias.cleargrads()
        F.sum(F.exp(_lin_nobias(numpy.ones((n, 3), numpy.float32)))).backward()
    records = project_batch(run, 9).records()
    assert [len(r) for r in records] == [R_STATE + 1] * 6
    assert [r[R_STATE] for r in records] == [0] * 6
    assert [r[R_LIVE] for r in records[:2]] == [144, 288]


@pytest.mark.slow
def test_batch_1_below_the_lines_has_its_own_links():
    # the model calls /a at batch 1 and /b beyond: the links differ
    # between 1, 2, 3, so the lines go through 2, 3, 4; batch 1 is its own
    # run, links and all
    model = _Branch(lambda n: n == 1)

    def run(n):
        model(numpy.ones((n, 3), numpy.float32))
    assert list(project_batch(run, 1).link_report) == ['/', '/a', 'total']
    assert list(project_batch(run, 20).link_report) == ['/', '/b', 'total']


@pytest.mark.slow
def test_a_scratch_on_a_line_from_batch_4(planted):
    # scratch max(8n - 16, 8): 8, 8, 8 at 1, 2, 3 (a line: 8), off it at
    # 9 (56); through 2, 3, 4 (8, 8, 16) no line; through TOP_BATCHES 4,
    # 9, 14 (16, 56, 96) the line 8n - 16, exact, not a bound: at 20,
    # 144, beside ReLU's output 16*20 = 320
    planted(RELU, lambda in_data: max(8 * in_data[0].shape[0] - 16, 8))
    p = project_batch(_relu, 20)
    m = p.memory_report
    assert (m['peak'], m['scratch'], m['activations']) == (464, 144, 320)
    assert p.memory_state()['bounded'] == []


@pytest.mark.slow
def test_a_parameter_off_at_batch_1_is_unknown():
    # F.clip's upper bound is 1.0 at batch 1 and 2.0 beyond: a float that
    # follows no line, so no value stands for batch 7 (None); the lower
    # bound, 0.0 at every batch, stays
    def run(n):
        F.clip(numpy.ones((n, 3), numpy.float32), 0.0,
               1.0 if n == 1 else 2.0)
    p = project_batch(run, 7)
    assert p.layer_report['Clip-1']['params'] == {'min': 0.0, 'max': None}


@pytest.mark.parametrize('kwargs, message', [
    ({'batch_size': '4'}, "batch_size must be an int >= 1, got '4'"),
    ({'batch_size': 4.0}, 'batch_size must be an int >= 1, got 4.0'),
    ({'batch_size': True}, 'batch_size must be an int >= 1, got True'),
    ({'check_batch': '9'},
     "check_batch must be None or an int >= 5, got '9'"),
    ({'check_batch': 9.0},
     'check_batch must be None or an int >= 5, got 9.0'),
    ({'fma_1flop': 1}, 'fma_1flop must be True or False, got 1 (int)'),
    ({'fma_1flop': None},
     'fma_1flop must be True or False, got None (NoneType)'),
    ({'flop_convention': 2}, "flop_convention must be None or 'torch', "
                             "got 2"),
])
def test_an_argument_of_the_wrong_type_is_a_type_error(kwargs, message):
    calls = []
    kwargs.setdefault('batch_size', 4)
    with pytest.raises(TypeError) as e:
        project_batch(calls.append, **kwargs)
    assert str(e.value) == message
    assert calls == []  # before any run


@pytest.mark.parametrize('kwargs, message', [
    ({'batch_size': 0}, 'batch_size must be an int >= 1, got 0'),
    ({'check_batch': 4}, 'check_batch must be None or an int >= 5, got 4'),
])
def test_an_argument_out_of_range_is_a_value_error(kwargs, message):
    calls = []
    kwargs.setdefault('batch_size', 4)
    with pytest.raises(ValueError) as e:
        project_batch(calls.append, **kwargs)
    assert type(e.value) is ValueError
    assert str(e.value) == message
    assert calls == []


def test_numpy_s_ints_and_bools_are_taken():
    # ReLU of (n, 4) float32 at n = 20: 4 elements a sample, one FLOP
    # each: 80 FLOPs; 16 bytes a sample written: 320
    p = project_batch(_relu, np.int64(20), fma_1flop=np.bool_(False),
                      check_batch=np.int32(9))
    assert p.batch_size == 20 and type(p.batch_size) is int
    assert p.total_report['flops'] == 80
    assert p.total_report['mwrite'] == 320


def test_a_reused_optimizer_keeps_the_state_its_first_run_made():
    # one Adam made before the runs: only the first run (the smallest
    # batch) creates its state, two moments of each parameter, float32:
    # W 3*4 * 2 * 4 = 96 bytes, b 3 * 2 * 4 = 24; a projected record keeps
    # them, as it keeps every unprojected field of the first run
    model = L.Linear(4, 3)
    opt = chainer.optimizers.Adam().setup(model)

    def run(n):
        opt.update(lambda: F.sum(model(numpy.ones((n, 4), numpy.float32))))
    records = project_batch(run, 64).records()
    assert [r[R_STATE] for r in records if r[R_STATE]] == [96, 24]
