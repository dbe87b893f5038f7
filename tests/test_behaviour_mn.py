"""ChainerMN support as a user reads it: which call a communication record
names, and what a gathered report adds up (worked by hand; see
benchmarks/mutate.py for how this file is used)."""

import sys

import pytest

from chainer_computational_cost.collect import mpi_recorder
from chainer_computational_cost.report import gathered as mn


class _Real(object):
    """Just enough of an mpi4py communicator: one buffer call."""

    rank = 0
    size = 2

    def Bcast(self, buf, root=0):
        return None


def test_a_record_names_the_code_that_made_the_mpi_call():
    # The recorder hands the hook the frame of the code that called MPI:
    # a user's own function that broadcasts its weights is named by it
    # (the record's 'call'), not by the recorder's wrapper.
    import numpy as np
    seen = []
    recorder = mpi_recorder.MPIRecorder(
        _Real(), lambda kind, nbytes, frame, error:
        seen.append((kind, nbytes, frame)))

    def share_weights(comm):
        comm.Bcast(np.zeros(5, np.float32))  # 5 * 4 = 20 bytes
        return sys._getframe(0)
    here = share_weights(recorder)
    (kind, nbytes, frame), = seen
    assert (kind, nbytes) == ('MPI_Bcast', 20)
    assert frame is here
    assert mpi_recorder.caller_name(frame, object()) == 'share_weights'


def _part(rank, model, batch, backward=True, memory=False):
    import chainer.functions as F
    import numpy as np
    from chainer_computational_cost import ComputationalCostHook
    with ComputationalCostHook(memory=memory) as cch:
        y = F.sum(model(np.zeros((batch, 3), np.float32)))
        if backward:
            y.backward()
    del y
    return mn.rank_part(rank, cch)


def test_ranks_that_tie_are_read_from_the_first():
    # Two ranks ran the same step: the slowest rank, the memory figures
    # and the scaling rows are the first rank's (rank 3 here, as parts
    # arrive in any order)
    from mpi.mn_models import MLP
    model = MLP()
    g = mn.GatheredReport([_part(5, model, 2, memory=True),
                           _part(3, model, 2, memory=True)])
    assert g.ranks == [3, 5] and g.differing_ranks == []
    assert g.slowest_rank(peak_flops=1e9, bandwidth=1e9)[0] == 3
    assert g.memory_report['rank'] == 3
    rows = g.scaling_report([1, 2], device='a100', network='ib-edr')
    assert [r['rank'] for r in rows.values()] == [3, 3]
    # every ReLU ties too: the first rank is named the slowest
    assert g.summary_report['ReLU']['slowest_rank'] == 3


def test_a_link_holds_the_parameters_of_its_largest_copy():
    # Each rank has its own copy of the link '/': its calls add up over
    # the ranks, its parameters are those of the rank that holds the
    # most: Linear(3, 4) 3*4 + 4 = 16, Linear(3, 8) 3*8 + 8 = 32
    import chainer.links as L
    g = mn.GatheredReport([
        _part(0, L.Linear(3, 4), 2, backward=False),
        _part(1, L.Linear(3, 8), 2, backward=False),
        _part(2, L.Linear(3, 4), 2, backward=False)])
    root = g.link_report['/']
    assert (root['n_calls'], root['n_params']) == (3, 32)
    # the ranks' graphs: rank 1 multiplies by another weight
    assert g.differing_ranks == [1]


class _FourRanks(object):
    """An mpi4py communicator of 4 ranks, this one rank 0, whose calls
    move nothing."""

    rank = 0
    size = 4

    def Allreduce(self, sendbuf, recvbuf):
        return None

    def bcast(self, obj, root=0):
        return obj


def _communicator():
    """A ChainerMN communicator over :class:`_FourRanks` that all-reduces
    the gradients in one buffer and broadcasts objects by pickle, as
    ChainerMN's do."""
    import chainermn
    import numpy as np

    class Comm(chainermn.CommunicatorBase):
        rank = 0
        size = 4

        def __init__(self):
            self.mpi_comm = _FourRanks()

        def multi_node_mean_grad(self, model, zero_fill=False):
            grads = np.concatenate([p.grad.ravel() for p in model.params()])
            self.mpi_comm.Allreduce(grads, np.empty_like(grads))

        def bcast_obj(self, obj, max_buf_len=None, root=0):
            return self.mpi_comm.bcast(obj, root=root)
    Comm.__abstractmethods__ = frozenset()
    return Comm()


def _mn_step(comm, model, batch):
    import chainer.functions as F
    import numpy as np
    from chainer_computational_cost import ComputationalCostHook
    with ComputationalCostHook(comm=comm) as cch:
        loss = F.sum(model(np.zeros((batch, 3), np.float32)))
        if comm is not None:
            comm.bcast_obj({'epoch': 1})
        loss.backward()
        if comm is not None:
            comm.multi_node_mean_grad(model)
    return cch


def test_a_training_steps_communication_by_hand():
    import pickle
    from mpi.mn_models import MLP
    comm = _communicator()
    real = comm.mpi_comm
    model = MLP()
    cch = _mn_step(comm, model, 2)
    assert comm.mpi_comm is real  # put back on exit
    report = cch.layer_report
    bcast, grads = report['MPI_bcast_obj-1'], report['MPI_Allreduce-1']
    # the pickle of the object sent (mpi4py's protocol: the highest)
    assert bcast['comm_bytes'] == len(pickle.dumps(
        {'epoch': 1}, pickle.HIGHEST_PROTOCOL))
    assert (bcast['phase'], bcast['params']) == (
        'forward', {'call': 'bcast_obj', 'n_ranks': 4})
    # the MLP's 26 float32 gradients in one buffer: 104 bytes, in the
    # backward pass (made by the gradient all-reduce)
    assert (grads['comm_bytes'], grads['phase'], grads['params']) == (
        104, 'backward', {'call': 'multi_node_mean_grad', 'n_ranks': 4})
    assert (grads['flops'], grads['mread'], grads['mwrite']) == (0, 0, 0)
    # on ib-edr (12.5e9 B/s, 1 us) over 4 ranks: ring all-reduce
    # 2*3/4 * 104/12.5e9 + 2*3 * 1e-6 = 6.00000000e-6 + 1.248e-8 s
    rows = cch.roofline_report(device='a100', network='ib-edr')
    assert rows['MPI_Allreduce-1']['t_network'] == pytest.approx(
        6e-6 + 1.248e-8, rel=1e-12)
    # the scaling report all-reduces the bytes that were recorded
    assert cch.scaling_report([2], device='a100', network='ib-edr')[2][
        'comm_bytes'] == 104


def test_the_slowest_rank_waits_on_the_network():
    # rank 0 runs the MLP at batch 2 and communicates (6 us and more on
    # ib-edr, see above); rank 1 runs it at batch 4 and does not.  At
    # 1e9 FLOP/s and 1e9 B/s the compute of either is a few
    # microseconds at most, less than the all-reduce's 6: rank 1 is slower
    # without the network, rank 0 with it
    import pickle
    from mpi.mn_models import MLP
    model = MLP()
    g = mn.GatheredReport([
        mn.rank_part(0, _mn_step(_communicator(), model, 2)),
        mn.rank_part(1, _mn_step(None, model, 4))])
    rank, plain = g.slowest_rank(peak_flops=1e9, bandwidth=1e9)
    assert rank == 1 and plain < 6e-6
    rank, seconds = g.slowest_rank(peak_flops=1e9, bandwidth=1e9,
                                   network='ib-edr')
    assert rank == 0 and seconds > 6e-6
    # each rank's bytes sent: rank 0 the pickle and the 104 bytes
    sent = len(pickle.dumps({'epoch': 1}, pickle.HIGHEST_PROTOCOL)) + 104
    assert [t['comm_bytes'] for t in g.rank_report().values()] == [sent, 0]
    assert g.total_report['comm_bytes'] == sent


def test_the_recorder_is_the_communicator_to_its_user():
    # an attribute set on the recorder is set on the real communicator;
    # a failing record never turns a call that was made into an error
    real = _FourRanks()
    recorder = mpi_recorder.MPIRecorder(real, lambda *a: 1 / 0)
    recorder.tag = 7
    assert real.tag == 7 and recorder.tag == 7
    assert recorder.bcast('x') == 'x'
    assert recorder.size == 4  # not a call: read through


def test_calls_that_move_no_data_are_not_recorded():
    # Barrier and Get_rank go to MPI unchanged and make no record
    class Real(_FourRanks):
        def Barrier(self):
            return 'waited'

        def Get_rank(self):
            return self.rank
    seen = []
    recorder = mpi_recorder.MPIRecorder(Real(), lambda *a: seen.append(a))
    assert recorder.Barrier() == 'waited'
    assert recorder.Get_rank() == 0
    assert seen == []


def test_pickle_calls_given_by_keyword():
    # mpi4py's keywords: the object sent is counted either way
    import pickle
    obj = {'a': [1, 2, 3]}
    size = len(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))

    class Real(_FourRanks):
        def gather(self, sendobj, root=0):
            return [sendobj] * self.size

        def send(self, obj, dest, tag=0):
            return None
    seen = []
    recorder = mpi_recorder.MPIRecorder(
        Real(), lambda kind, nbytes, frame, error:
        seen.append((kind, nbytes, error)))
    recorder.gather(sendobj=obj, root=0)
    recorder.send(obj=obj, dest=1)
    recorder.bcast(obj=obj, root=0)  # rank 0 is the root: it sends obj
    assert seen == [('MPI_gather_obj', size, None),
                    ('MPI_send_obj', size, None),
                    ('MPI_bcast_obj', size, None)]


def test_a_gathered_report_names_each_ranks_ignored_calls():
    # a function with no cost calculator is ignored on every rank: the
    # gathered report lists each rank's, named by rank; the summary's
    # total row names no slowest rank
    import chainer
    import numpy as np
    from chainer_computational_cost import ComputationalCostHook
    from chainer_computational_cost.core.records import ReportWarning

    class Uncosted(chainer.FunctionNode):
        def forward(self, inputs):
            return inputs[0] * 2,
    parts = []
    for rank in (1, 0):
        with pytest.warns(ReportWarning, match='Uncosted'):
            with ComputationalCostHook() as cch:
                Uncosted().apply((np.zeros(3, np.float32),))
                chainer.functions.relu(np.zeros(3, np.float32))
        parts.append(mn.rank_part(rank, cch))
    g = mn.GatheredReport(parts)
    ignored = g.ignored_layers
    assert list(ignored) == ['rank0/Uncosted-1', 'rank1/Uncosted-1']
    assert [x['rank'] for x in ignored.values()] == [0, 1]
    summary = g.summary_report
    assert list(summary) == ['ReLU', 'total']
    assert summary['ReLU']['slowest_rank'] == 0  # a tie: the first
    assert 'slowest_rank' not in summary['total']


def test_the_slowest_rank_of_a_type_is_its_work_flops_first():
    # ReLU, one FLOP an element, reads and writes each: rank 0 8 float16
    # elements, 8 FLOPs and 16 + 16 = 32 bytes; rank 1 4 float64, 4 FLOPs
    # and 32 + 32 = 64 bytes: rank 0 does more of the work that counts
    # first.  MPI_bcast_obj: no FLOPs nor bytes moved, rank 1 sends the
    # larger pickle
    import chainer
    import numpy as np
    from chainer_computational_cost import ComputationalCostHook
    parts = []
    for rank, dtype, n, obj in ((0, np.float16, 8, 1), (1, np.float64, 4,
                                                        list(range(50)))):
        comm = _communicator()
        with ComputationalCostHook(comm=comm) as cch:
            chainer.functions.relu(np.zeros(n, dtype))
            comm.bcast_obj(obj)
        parts.append(mn.rank_part(rank, cch))
    g = mn.GatheredReport(parts)
    summary = g.summary_report
    assert summary['ReLU']['slowest_rank'] == 0
    assert summary['MPI_bcast_obj']['slowest_rank'] == 1
    assert g.summary_report == summary  # read again: the same


def test_a_rank_that_receives_counts_what_it_received():
    # rank 0 receives a broadcast and a scatter from rank 1 (the root
    # given by position, as mpi4py allows): it hands MPI nothing of its
    # own, and counts the pickle of what it received
    import pickle
    payload = {'weights': list(range(20))}

    class Rank0(_FourRanks):
        def bcast(self, obj, root=0):
            return obj if root == self.rank else payload

        def scatter(self, sendobj, root=0):
            return sendobj[0] if root == self.rank else payload
    seen = []
    recorder = mpi_recorder.MPIRecorder(
        Rank0(), lambda kind, nbytes, frame, error:
        seen.append((kind, nbytes)))
    assert recorder.bcast(None, 1) == payload
    assert recorder.scatter(None, 1) == payload
    size = len(pickle.dumps(payload, pickle.HIGHEST_PROTOCOL))
    assert seen == [('MPI_bcast_obj', size), ('MPI_scatter_obj', size)]


def test_the_gathered_memory_plot_is_the_highest_peaks(tmp_path):
    # rank 0 keeps a ReLU of 4 float32 and its sum alive (16 + 4 = 20
    # bytes), rank 1 of 8 (32 + 4 = 36): the plot is rank 1's, its peak
    # named by rank; the memory table too
    import io
    pytest.importorskip('matplotlib')
    import chainer
    import numpy as np
    from chainer_computational_cost import ComputationalCostHook
    parts = []
    for rank, n in ((0, 4), (1, 8)):
        with ComputationalCostHook(memory=True) as cch:
            y = chainer.functions.relu(np.zeros(n, np.float32))
            z = chainer.functions.sum(y)
        del y, z
        parts.append(mn.rank_part(rank, cch))
    g = mn.GatheredReport(parts)
    fig = g.plot_memory(str(tmp_path / 'memory.png'), dpi=20)
    assert 'peak 36 B after rank1/Sum-1' in [
        t.get_text() for t in fig.axes[0].texts]
    out = io.StringIO()
    g.show_memory_report(out, unit='raw', columns=['name', 'bytes'])
    assert out.getvalue().splitlines()[:2] == ['Memory,Bytes B', 'peak,36']


def test_the_outermost_communicator_method_names_the_call():
    # however deep the communicator's own helpers go before MPI is
    # called (here 12 frames), the call is named by the outermost method
    # of the communicator on the stack
    class Comm(object):
        def sync_all(self):
            return self.step(12)

        def step(self, depth):
            return deeper(self, depth)

    def deeper(comm, depth):
        if depth:
            return deeper(comm, depth - 1)
        return mpi_recorder.caller_name(sys._getframe(0), comm)
    assert Comm().sync_all() == 'sync_all'
    assert deeper(Comm(), 12) == 'deeper'  # no method of it: the caller
