"""Live memory as a user sees it (see benchmarks/mutate.py for how this
file is used): figures worked by hand, and what the hook must never do to
the user's run."""

import copy
import tracemalloc
import weakref

import chainer
import chainer.functions as F
import numpy
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.analysis import memory
from chainer_computational_cost.collect import live_memory
from chainer_computational_cost import project_batch
from chainer_computational_cost.core.records import R_LIVE
from test_peak import planted  # noqa: F401 (a fixture)
from test_peak import RELU
import memory_oracle


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


class _Double(chainer.Function):
    """An old-style Function: its backward's gradient is made outside any
    call."""

    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, inputs, grad_outputs):
        return grad_outputs[0] * 2,


def test_an_old_style_functions_gradient_is_a_gradient():
    # y = 2x: 2*3*4 = 24 bytes of activations; the loss (4) is dropped
    # after backward; x's gradient, made by _Double's backward, 24 bytes
    # of gradients at exit (Sum's broadcast gradient is a view of the
    # user's initial gradient: nothing)
    x = chainer.Variable(numpy.ones((2, 3), numpy.float32))
    with ComputationalCostHook(memory=True) as h:
        h.add_custom_cost_calculator(_Double, _drops_a_mask_costs)
        y = _Double()(x)
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


def test_other_parameters_at_a_top_batch_are_refused(planted):  # noqa: F811
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
