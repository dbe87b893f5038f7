"""project_batch as a user reads it: what a projection says about itself
and its figures, worked by hand (see benchmarks/mutate.py for how this
file is used)."""

import warnings

import chainer
import chainer.functions as F
import chainer.links as L
import numpy
import pytest

from chainer_computational_cost import project_batch
from chainer_computational_cost.core.records import ReportWarning
from test_peak import planted  # noqa: F401 (a fixture)
from test_peak import RELU

_lin = L.Linear(3, 4)


def _mean_step(n):
    # Chainer broadcasts nothing at batch 1: the calls differ there, so
    # the lines go through batches 2, 3, 4 and batch 1 is its own run
    _lin.cleargrads()
    F.sum(F.mean(_lin(numpy.ones((n, 3), numpy.float32)), axis=0)).backward()


def test_batch_1_below_the_lines_is_a_projection_to_batch_1():
    # what was asked, as asked: batch 1, the convention given; the
    # LinearFunction of 1 sample: 4 outputs of 3 multiply-adds and a bias,
    # 4 * (3 + 1) = 16 FLOPs, or PyTorch's 2 a multiply-add and no bias:
    # 2 * 4 * 3 = 24
    p = project_batch(_mean_step, 1)
    assert (p.batch_size, p.flop_convention) == (1, None)
    assert p.memory_report['batch_size'] == 1
    assert p.layer_report['LinearFunction-1']['flops'] == 16
    # batch 2, the first of the lines: 2 * 16 = 32
    p = project_batch(_mean_step, 2)
    assert (p.batch_size, p.memory_report['batch_size']) == (2, 2)
    assert p.layer_report['LinearFunction-1']['flops'] == 32
    torch = project_batch(_mean_step, 1, flop_convention='torch')
    assert (torch.batch_size, torch.flop_convention) == (1, 'torch')
    assert torch.layer_report['LinearFunction-1']['flops'] == 24
    # at batch 6, on the lines: 6 * 16 = 96 and 6 * 24 = 144
    p = project_batch(_mean_step, 6, flop_convention='torch')
    assert (p.batch_size, p.flop_convention) == (6, 'torch')
    assert p.layer_report['LinearFunction-1']['flops'] == 144
    # not fused: 3 multiplies, 2 adds and a bias a output: 6 * 4 * 6
    p = project_batch(_mean_step, 6, fma_1flop=False)
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


def test_a_batch_that_was_run_reports_its_own_memory(planted):  # noqa: F811
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
        planted):  # noqa: F811
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
