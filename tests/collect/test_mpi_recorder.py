"""ChainerMN: communication records exact to the byte, under mpiexec.

The scripts in tests/mpi/ run under ``mpiexec -n 2`` and ``-n 4`` (a
subprocess with a timeout: a deadlock fails the test instead of hanging
it) and print one JSON line per rank.  Each puts a spy of its own in place
of the communicator's mpi4py communicator; the hook's ``comm_bytes`` must
equal the spy's total on every rank.

ChainerMN support as a user reads it: which call a communication record
names, and what a gathered report adds up (worked by hand).
"""

import io
import sys

import chainer
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import ReportWarning
from chainer_computational_cost.collect import mpi_recorder
from chainer_computational_cost.report import gathered as mn

from processes import launch
from processes import needs_mpi


def test_comm_must_be_a_chainermn_communicator():
    with pytest.raises(TypeError, match='comm'):
        ComputationalCostHook(comm=object())


def test_no_comm_adds_no_comm_bytes():
    import numpy as np
    with ComputationalCostHook() as cch:
        chainer.functions.relu(np.zeros((2, 3), np.float32))
    assert cch.layer_report['ReLU-1']['comm_bytes'] == 0
    assert 'comm_bytes' not in cch.total_report


def test_groups_that_sent_nothing_show_0():
    # In a run with communication a type, phase or link that sent nothing
    # shows 0, not a blank ("not applicable"): here Exp-1 (record 1) is
    # given 100 bytes sent, ReLU-1 none.
    import io
    import json
    import numpy as np
    from chainer_computational_cost.report.cost_report import ReportSnapshot
    with ComputationalCostHook() as cch:
        chainer.functions.exp(chainer.functions.relu(
            np.zeros((2, 3), np.float32)))
    job = ReportSnapshot(cch.records(), cch.link_info(), None, None,
                         {1: 100})
    out = io.StringIO()
    job.show_summary_report(out, mode='json', unit=None,
                            columns=['type', 'comm_bytes'])
    assert [(r['type'], r['comm_bytes'])
            for r in json.loads(out.getvalue())['rows']] == [
        ('ReLU', 0), ('Exp', 100), ('total', 100)]
    assert [(k, r['comm_bytes']) for k, r in job.phase_report.items()] == [
        ('forward', 100), ('backward', 0), ('total', 100)]
    assert job.link_report['/']['comm_bytes'] == 100


def _node(cls_name, module, **attrs):
    """A ChainerMN node without a communicator (its __init__ warns that it
    is experimental): only what the calculators read."""
    import importlib
    cls = getattr(importlib.import_module('chainermn.functions.' + module),
                  cls_name)
    node = object.__new__(cls)
    node.__dict__.update(attrs)
    return node


class _Comm(object):
    size = 4


def test_chainermn_calculators_by_hand():
    import numpy as np
    from chainer_computational_cost.cost_calculators import calculators
    x = np.zeros((2, 3), np.float16)
    gather = _node('AllGather', 'collective_communication', comm=_Comm())
    flops, mread, mwrite, params = calculators[type(gather)](
        gather, (x,), out_shapes=[(2, 3)] * 4)
    # 2*3 = 6 elements read (12 bytes of float16), 4 ranks * 6 = 24
    # written.
    assert (flops, mread, mread.nbytes, mwrite) == (0, 6, 12, 24)
    assert params == {'n_ranks': 4}
    # Called directly (no out_shapes): every rank's x, as the inputs say.
    assert calculators[type(gather)](gather, (x,))[2] == 24
    bcast = _node('Bcast', 'collective_communication', comm=_Comm(), root=1)
    assert calculators[type(bcast)](bcast, (), out_shapes=[(5,)]) == (
        0, 0, 5, {'root': 1, 'n_ranks': 4})
    send = _node('Send', 'point_to_point_communication', comm=_Comm(),
                 peer_rank=2, peer_tag=0)
    # The arrays sent and the empty delegate: 6 + 0 read, an empty output.
    assert calculators[type(send)](
        send, (x, np.zeros(0, np.float32)), out_shapes=[(0,)]) == (
        0, 6, 0, {'peer_rank': 2, 'peer_tag': 0, 'n_ranks': 4})
    pseudo = _node('PseudoConnect', 'pseudo_connect')
    assert calculators[type(pseudo)](pseudo, (x, x)) == (0, 0, 0, {})


def test_gather_needs_comm():
    with pytest.raises(ValueError, match='comm='):
        ComputationalCostHook().gather()


class _FakeMPI(object):
    """Just enough of an mpi4py communicator for MPIRecorder."""

    rank = 0
    size = 2

    def Allreduce(self, sendbuf, recvbuf):
        return None

    def Send(self, buf, dest, tag=0):
        return 'sent'


def test_recorder_counts_buffers_and_never_raises_after_the_call():
    import numpy as np
    from chainer_computational_cost.collect import mpi_recorder
    seen = []
    recorder = mpi_recorder.MPIRecorder(_FakeMPI(), lambda *a: seen.append(
        (a[0], a[1], a[3] is not None)))
    # 3 float32 = 12 bytes; 5 bytes of a bytearray
    recorder.Allreduce(np.zeros(3, np.float32), np.zeros(3, np.float32))
    recorder.Send(bytearray(5), 1)
    # A buffer it cannot size: the call is made and returns, recorded as
    # an error.
    assert recorder.Send(object(), 1) == 'sent'
    assert seen == [('MPI_Allreduce', 12, False), ('MPI_Send', 5, False),
                    ('MPI_Send', 0, True)]
    assert recorder.rank == 0  # everything else reads through


def test_buffer_specs_by_hand():
    import numpy as np
    from chainer_computational_cost.collect import mpi_recorder
    x = np.zeros((2, 3), np.float64)
    assert mpi_recorder.buffer_bytes(x) == 48  # 6 * 8
    assert mpi_recorder.buffer_bytes(None) == 0
    assert mpi_recorder.buffer_bytes([x, None]) == 48  # no counts: the buffer


def _rank_hooks():
    """Two ranks' hooks with memory=True: rank 0 keeps the ReLU of 4
    float32 and its sum alive, rank 1 of 8."""
    import numpy as np
    hooks = {}
    for rank, n in ((0, 4), (1, 8)):
        with ComputationalCostHook(memory=True) as cch:
            y = chainer.functions.relu(np.zeros(n, np.float32))
            z = chainer.functions.sum(y)
        del y, z
        hooks[rank] = cch
    return hooks


def _gathered():
    import pickle
    from chainer_computational_cost.report import gathered as mn
    hooks = _rank_hooks()
    # As MPI's gather hands them: pickled, in any order.
    parts = pickle.loads(pickle.dumps(
        [mn.rank_part(1, hooks[1]), mn.rank_part(0, hooks[0])]))
    return mn.GatheredReport(parts)


def test_a_gathered_time_report_is_the_slowest_ranks_step():
    import io
    from calibration_fixtures import literal_calibration
    # No type of the calibration's: elementwise math stands in, 10 us a
    # call, 1 ns a byte read, 2 a byte written, and 1 us of overhead (no
    # backward: inference).  Rank 0, ReLU of 4 float32 (16 read, 16
    # written): 11.048 us, its Sum (16, 4): 11.024 us, 22.072 us; rank 1,
    # of 8: 11.096 + 11.040 = 22.136 us, the step (the sum of the two
    # ranks, 44.208 us, was the total)
    g = _gathered()
    cal = literal_calibration()
    rows = g.time_report(cal)
    assert list(rows) == ['rank1/ReLU-1', 'rank1/Sum-1', 'total']
    assert [rows[k]['t_predicted'] for k in rows] == pytest.approx(
        [11.096e-6, 11.040e-6, 22.136e-6], rel=1e-12)
    assert [rows[k]['rank'] for k in rows] == [1, 1, 1]
    assert g.time_report(cal, by='phase')['total']['t_predicted'] == \
        pytest.approx(22.136e-6, rel=1e-12)
    # the roofline on the calibration's 1e9 FLOP/s and 1e10 B/s: ReLU 8
    # FLOPs, 8 ns (64 bytes, 6.4 ns), Sum 7 FLOPs, 7 ns: 0.015 us
    out = io.StringIO()
    g.show_time_report(cal, out, by='phase', time_unit='us')
    assert out.getvalue().splitlines() == [
        'Phase,# Layers,T predicted us,T roofline us,# Flagged,Rank',
        'forward,2,22.136,0.015,2,1', 'total,2,22.136,0.015,2,1']


def test_gathered_report_reads_everything():
    import io
    import pickle
    g = _gathered()
    # rank 1's inputs have other shapes: its graph differs
    assert g.ranks == [0, 1] and g.differing_ranks == [1]
    # ReLU of n float32: n FLOPs, 4n read, 4n written; Sum: n - 1 FLOPs,
    # 4n read, 4 written.
    report = g.layer_report
    assert list(report) == ['rank0/ReLU-1', 'rank0/Sum-1', 'rank1/ReLU-1',
                            'rank1/Sum-1', 'total']
    assert [report[k]['rank'] for k in list(report)[:4]] == [0, 0, 1, 1]
    assert (report['rank1/ReLU-1']['flops'],
            report['rank1/ReLU-1']['mrw']) == (8, 64)
    # totals over both ranks: 4 + 3 + 8 + 7 = 22 FLOPs; bytes 32 + 20 +
    # 64 + 36 = 152
    assert (g.total_report['flops'], g.total_report['mrw']) == (22, 152)
    # the records it reads from, every rank's, named as its layers
    assert [(r['name'], r['flops']) for r in g.records()] == [
        ('rank0/ReLU-1', 4), ('rank0/Sum-1', 3), ('rank1/ReLU-1', 8),
        ('rank1/Sum-1', 7)]
    summary = g.summary_report
    assert summary['ReLU']['n_layers'] == 2
    assert summary['ReLU']['slowest_rank'] == 1
    assert g.phase_report['forward']['flops'] == 22
    assert g.link_report['/']['flops'] == 22
    assert list(g.summary_report_by_phase()) == ['forward/ReLU',
                                                 'forward/Sum', 'total']
    assert g.ignored_layers == {}
    # Live memory: rank r keeps ReLU's output (4n bytes) and the sum (4):
    # rank 0 20 bytes, rank 1 36; the gathered figures are rank 1's.
    by_rank = g.memory_report_by_rank()
    assert [f['peak'] for f in by_rank.values()] == [20, 36]
    figures = g.memory_report
    assert (figures['peak'], figures['rank'], figures['peak_layer']) == (
        36, 1, 'rank1/Sum-1')
    # every call it names is a key of the layer report
    assert figures['peak_between_calls_layer'] == 'rank1/Sum-1'
    assert [f['peak_between_calls_layer'] for f in by_rank.values()] == [
        'rank0/Sum-1', 'rank1/Sum-1']
    out = io.StringIO()
    g.show_memory_report(out, unit='raw')
    assert out.getvalue().splitlines()[1] == 'peak,36,36,0,0,rank1/Sum-1'
    for show in (g.show_report, g.show_summary_report,
                 g.show_phase_report, g.show_link_report):
        out = io.StringIO()
        show(out, unit='raw')
        assert out.getvalue().splitlines()[-1].startswith('total,'), show
    rows = g.roofline_report(peak_flops=1e9, bandwidth=1e9)
    # 152 bytes at 1e9 B/s (every layer memory-bound)
    assert rows['total']['t_roofline'] == pytest.approx(152e-9, rel=1e-12)
    # One rank's own reports, and a frozen copy that pickles.
    assert list(g.rank(0).layer_report) == ['ReLU-1', 'Sum-1', 'total']
    with pytest.raises(ValueError, match=r'no rank 2: the ranks are \[0, 1'):
        g.rank(2)
    copy = pickle.loads(pickle.dumps(g.snapshot()))
    assert list(copy.layer_report) == list(report)
    assert copy.memory_report['peak'] == 36


def test_gathered_slowest_rank_and_rank_report():
    g = _gathered()
    # At 1e9 FLOP/s and 1e9 B/s each layer takes its bytes in ns: rank 0
    # 32 + 20 = 52 ns, rank 1 64 + 36 = 100 ns.
    rank, seconds = g.slowest_rank(peak_flops=1e9, bandwidth=1e9)
    assert rank == 1 and seconds == pytest.approx(100e-9, rel=1e-12)
    totals = g.rank_report()
    assert list(totals) == [0, 1]
    assert [(t['name'], t['flops'], t['mrw'], t['comm_bytes'])
            for t in totals.values()] == [('rank0', 7, 52, 0),
                                          ('rank1', 15, 100, 0)]


def test_a_gathered_report_states_the_ranks_flop_convention():
    # 2 FLOPs a multiply-add on every rank: the headers say so, as the
    # ranks' own reports do; ranks that count differently are warned of
    import io
    import numpy as np
    from chainer_computational_cost import ReportWarning
    parts = []
    for rank, fma in ((0, False), (1, False), (2, True)):
        with ComputationalCostHook(fma_1flop=fma) as cch:
            chainer.functions.relu(np.zeros(3, np.float32))
        parts.append(mn.rank_part(rank, cch))
    out = io.StringIO()
    mn.GatheredReport(parts[:2]).show_report(out, unit=None)
    assert out.getvalue().splitlines()[0] == (
        'Layer name,FLOPs (2 per multiply-add),MemRead B,MemWrite B,'
        'MemR+W B')
    with pytest.warns(ReportWarning, match=r"^gather: the ranks count FLOPs "
                      r"differently \(rank: \(fma_1flop, flop_convention\) "
                      r"\{0: \(False, None\), 1: \(False, None\), 2: "
                      r"\(True, None\)\}\)"):
        mn.GatheredReport(parts)


def test_gathered_memory_needs_memory_on_the_ranks():
    import numpy as np
    from chainer_computational_cost.report import gathered as mn
    with ComputationalCostHook() as cch:
        chainer.functions.relu(np.zeros(3, np.float32))
    g = mn.GatheredReport([mn.rank_part(0, cch)])
    with pytest.raises(ValueError, match=r'memory=True'):
        g.memory_report


def test_gathered_scaling_report_reads_the_slowest_rank():
    import numpy as np
    from chainer_computational_cost.report import gathered as mn
    from mpi.mn_models import MLP
    model = MLP()
    parts = []
    for rank, batch in ((0, 2), (1, 6)):
        with ComputationalCostHook() as cch:
            chainer.functions.sum(
                model(np.zeros((batch, 3), np.float32))).backward()
        parts.append(mn.rank_part(rank, cch))
    g = mn.GatheredReport(parts)
    # Each rank called the model once: 2 calls in all; the parameters are
    # one rank's: 26 (l1: 3*4 + 4 = 16).
    links = g.link_report
    assert (links['/']['n_calls'], links['/']['n_params']) == (2, 26)
    assert (links['/l1']['n_calls'], links['/l1']['n_params']) == (2, 16)
    assert g.total_report['n_params'] == 26
    rows = g.scaling_report(
        (n for n in [1, 8]), device='a100', network='ib-hdr200')
    # Rank 1 (batch 6) takes longer; 26 float32 gradients = 104 bytes.
    assert [r['rank'] for r in rows.values()] == [1, 1]
    assert rows[8]['comm_bytes'] == 104
    assert rows[8]['samples_per_s'] == pytest.approx(
        8 * 6 / rows[8]['t_step'], rel=1e-12)
    # the shown report says which rank too, by default and when asked
    out = io.StringIO()
    g.show_scaling_report([1, 8], ost=out, device='a100',
                          network='ib-hdr200', columns=['workers', 'rank'])
    assert out.getvalue().splitlines() == ['Workers,Rank', '1,1', '8,1']
    out = io.StringIO()
    g.show_scaling_report([1], ost=out, device='a100', network='ib-hdr200')
    assert out.getvalue().splitlines()[0].endswith(',Anchored,Rank')


def test_comm_bytes_summed_in_every_report():
    from chainer_computational_cost.analysis import aggregation
    # Four gradient all-reduces of the MLP: 48 + 16 + 32 + 8 = 104 bytes;
    # a bcast of 10.
    layers = [dict(name='MPI_Allreduce-{}'.format(i + 1),
                   type='MPI_Allreduce', flops=0, mread=0, mwrite=0,
                   comm_bytes=b, phase='backward')
              for i, b in enumerate([48, 16, 32, 8])]
    layers.append(dict(name='MPI_Bcast-1', type='MPI_Bcast', flops=0,
                       mread=0, mwrite=0, comm_bytes=10, phase='forward'))
    assert aggregation.total_report(layers)['comm_bytes'] == 114
    summary = aggregation.summary_report(layers)
    assert summary['MPI_Allreduce']['comm_bytes'] == 104
    assert summary['MPI_Bcast']['comm_bytes'] == 10
    assert summary['total']['comm_bytes'] == 114
    phases = aggregation.phase_report(layers)
    assert (phases['forward']['comm_bytes'],
            phases['backward']['comm_bytes']) == (10, 104)


def test_object_calls_count_their_pickles():
    import pickle
    from chainer_computational_cost.collect import mpi_recorder

    def size(o):
        return len(pickle.dumps(o, pickle.HIGHEST_PROTOCOL))

    class Real(object):
        rank = 1
    obj = {'a': [1, 2, 3]}
    # what this rank sends, or, when it only receives, what it received
    object_bytes = mpi_recorder._object_bytes
    assert object_bytes('gather', (obj,), {}, None, Real()) == size(obj)
    assert object_bytes('recv', (), {}, obj, Real()) == size(obj)
    assert object_bytes('bcast', (None, 0), {}, obj, Real()) == \
        size(obj)
    assert object_bytes('bcast', (obj,), {'root': 1}, None,
                        Real()) == size(obj)
    items = [obj, 'x', 3]
    total = sum(size(o) for o in items)
    assert object_bytes('scatter', (items,), {'root': 1}, obj,
                        Real()) == total
    assert object_bytes('scatter', (None, 0), {}, 'x', Real()) == \
        size('x')
    assert object_bytes('alltoall', (items,), {}, None, Real()) == \
        total


class _FakeDatatype(object):
    def __init__(self, size):
        self.size = size

    def Get_size(self):
        return self.size


class _FakeStatus(object):
    count = None

    def Get_count(self, datatype):
        return self.count // datatype.size


class _FakeMPIModule(object):
    """What mn reads of mpi4py.MPI: Datatype, IN_PLACE, Status, BYTE and
    the datatypes of typecodes."""
    Datatype = _FakeDatatype
    IN_PLACE = object()
    Status = _FakeStatus
    BYTE = _FakeDatatype(1)
    FLOAT = _FakeDatatype(4)
    _typedict = {'f': FLOAT, 'd': _FakeDatatype(8)}


@pytest.fixture
def fake_mpi(monkeypatch):
    monkeypatch.setitem(sys.modules, 'mpi4py.MPI', _FakeMPIModule)
    return _FakeMPIModule


def test_buffer_specs_with_datatypes(fake_mpi):
    import numpy as np
    from chainer_computational_cost.collect import mpi_recorder
    x = np.zeros(10, np.float32)  # 40 bytes
    dtype = fake_mpi.FLOAT
    assert mpi_recorder.buffer_bytes(fake_mpi.IN_PLACE) == 0
    assert mpi_recorder.buffer_bytes([x, dtype]) == 40  # no counts: the buffer
    assert mpi_recorder.buffer_bytes([x, 3, dtype]) == 12  # 3 * 4
    # [buf, (counts, displacements), type]: 2 + 3 = 5 floats = 20 bytes
    assert mpi_recorder.buffer_bytes([x, ([2, 3], [0, 2]), dtype]) == 20
    # [buf, counts, displacements, type]: the counts, 1 + 2 + 4 = 7 floats
    assert mpi_recorder.buffer_bytes([x, [1, 2, 4], [0, 1, 3], dtype]) == 28
    # [buf, (count, displacement), type] with plain ints: 3 floats
    assert mpi_recorder.buffer_bytes([x, (3, 0), dtype]) == 12
    assert mpi_recorder.buffer_bytes(bytearray(7)) == 7
    # an in-place call: the receive buffer, 40 bytes
    assert mpi_recorder._first_buffer((fake_mpi.IN_PLACE, x)) == 40
    assert mpi_recorder._first_buffer((None, None)) == 0
    # Reduce(IN_PLACE, None, op) off the root: the op is not a buffer
    assert mpi_recorder._first_buffer((fake_mpi.IN_PLACE, None, 'op')) == 0


def test_buffer_specs_with_a_count_and_no_datatype_object(fake_mpi):
    import numpy as np
    from chainer_computational_cost.collect import mpi_recorder
    x = np.zeros(10, np.float32)  # 40 bytes
    # (count, displacement): 3 floats from the second, 12 bytes
    assert mpi_recorder.buffer_bytes([x, (3, 1), fake_mpi.FLOAT]) == 12
    # a typecode for the datatype: 3 * 4 = 12; 'd' 3 * 8 = 24
    assert mpi_recorder.buffer_bytes([x, 3, 'f']) == 12
    assert mpi_recorder.buffer_bytes([x, 3, 'd']) == 24
    # no datatype: the buffer's item, 3 * 4 = 12, None the same
    assert mpi_recorder.buffer_bytes([x, 3]) == 12
    assert mpi_recorder.buffer_bytes([x, 3, None]) == 12
    assert mpi_recorder.buffer_bytes([bytearray(9), 5]) == 5


class _AnyCall(object):
    """An mpi4py communicator of 2 ranks whose every method moves
    nothing."""

    rank = 0
    size = 2

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def test_non_blocking_send_receive_and_scan_calls_are_recorded(fake_mpi):
    import pickle
    import numpy as np
    from chainer_computational_cost.collect import mpi_recorder
    seen = []
    recorder = mpi_recorder.MPIRecorder(
        _AnyCall(), lambda kind, n, frame, error, readings: seen.append(
            (kind, n, error)))
    f32, f64 = np.float32, np.float64
    recorder.Isend(np.zeros(3, f32), dest=1)  # 3 * 4 = 12
    recorder.Issend(np.zeros(3, f32), 1)  # 12
    recorder.Irecv(np.zeros(5, f32), source=1)  # the buffer, 5 * 4 = 20
    recorder.Iallreduce(fake_mpi.IN_PLACE, np.zeros(4, f64))  # 4 * 8 = 32
    recorder.Ibcast(bytearray(7))  # 7
    # what it sends, 2 * 4 = 8, not what it receives (8 floats)
    recorder.Sendrecv(np.zeros(2, f32), 1, 0, np.zeros(8, f32), 1)
    recorder.Sendrecv_replace(np.zeros(5, f64), 1)  # 5 * 8 = 40
    recorder.Reduce_scatter_block(np.zeros(6, f32), np.zeros(3, f32))  # 24
    recorder.Exscan(np.zeros(2, f64), np.zeros(2, f64))  # 16
    recorder.Bsend(np.zeros(1, f64), 1)  # 8
    obj = {'a': [1, 2]}
    size = len(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))
    recorder.isend(obj, dest=1)
    recorder.irecv(source=1)  # its object comes with its request: 0
    recorder.sendrecv(obj, 1)
    assert seen == [
        ('MPI_Send', 12, None), ('MPI_Send', 12, None),
        ('MPI_Recv', 20, None), ('MPI_Allreduce', 32, None),
        ('MPI_Bcast', 7, None), ('MPI_Sendrecv', 8, None),
        ('MPI_Sendrecv', 40, None), ('MPI_Reduce_scatter', 24, None),
        ('MPI_Scan', 16, None), ('MPI_Send', 8, None),
        ('MPI_send_obj', size, None), ('MPI_recv_obj', 0, None),
        ('MPI_sendrecv_obj', size, None)]


def test_an_mpi_call_of_an_optimizer_hook_is_in_the_update_phase():
    import chainer.functions as F
    import numpy as np
    from chainer import optimizers
    from mpi.mn_models import MLP
    comm = _communicator()
    model = MLP()
    optimizer = optimizers.SGD().setup(model)

    def global_norm(opt):  # a figure agreed on by every rank
        comm.bcast_obj(1.0)
    optimizer.add_hook(global_norm, name='global_norm')
    # (a hook without a calculator: its MPI call is recorded all the same)
    with pytest.warns(ReportWarning, match='global_norm` is not yet'):
        with ComputationalCostHook(comm=comm) as cch:
            loss = F.sum(model(np.zeros((2, 3), np.float32)))
            comm.bcast_obj({'epoch': 1})
            model.cleargrads()
            loss.backward()
            optimizer.update()
    report = cch.layer_report
    assert [(report[k]['phase'], report[k]['params']['call']) for k in (
        'MPI_bcast_obj-1', 'MPI_bcast_obj-2')] == [
        ('forward', 'bcast_obj'), ('update', 'bcast_obj')]


def test_a_gathered_summary_by_phase_names_each_phases_slowest_rank():
    import pickle
    import chainer.functions as F
    import numpy as np
    from chainer_computational_cost.report import gathered as mn
    # rank 0: a Mul of 8 elements, forward only (8 FLOPs); rank 1: x * x
    # of 4 (4 FLOPs), then its backward: two Muls of 4 (8 FLOPs)
    w = chainer.Variable(np.ones(8, np.float32), requires_grad=False)
    with ComputationalCostHook() as h0:
        w * w
    x = chainer.Variable(np.ones(4, np.float32))
    with ComputationalCostHook() as h1:
        F.sum(x * x).backward()
    g = mn.GatheredReport(pickle.loads(pickle.dumps(
        [mn.rank_part(0, h0), mn.rank_part(1, h1)])))
    # Mul over both phases: rank 1, 4 + 8 = 12 against 8
    assert g.summary_report['Mul']['slowest_rank'] == 1
    by_phase = g.summary_report_by_phase()
    assert [(by_phase[k]['flops'], by_phase[k]['slowest_rank'])
            for k in ('forward/Mul', 'backward/Mul')] == [(12, 0), (8, 1)]
    text = io.StringIO()
    g.show_summary_report(ost=text, by_phase=True, unit=None,
                          columns=['type', 'flops', 'slowest_rank'])
    assert text.getvalue().splitlines()[1:2] == ['forward,Mul,12,0']


def test_the_network_time_of_the_calls_recorded_by_their_operation():
    from chainer_computational_cost.analysis.network import collective_time
    from chainer_computational_cost.core.devices import Network
    # a = 1 s, B = 1 B/s, S = 8 bytes, N = 4 ranks
    net = Network('unit', 'unit', bandwidth=1.0, latency=1.0)
    # a ring reduce-scatter: (N-1) a + (N-1)/N S/B = 3 + 6 = 9
    assert collective_time('MPI_Reduce_scatter', 8, 4, net) == 9.0
    # a scan over a tree: ceil(log2 4) (a + S/B) = 2 * 9 = 18
    assert collective_time('MPI_Scan', 8, 4, net) == 18.0
    assert collective_time('MPI_scan_obj', 8, 4, net) == 18.0
    # a send-receive: a + S/B = 9
    assert collective_time('MPI_Sendrecv', 8, 4, net) == 9.0


class _FakeReceiver(object):
    rank = 1
    size = 2

    def Recv(self, buf, source=None, tag=None, status=None):
        # a message of 3 float32 into whatever buffer
        buf[:3] = 7
        if status is not None:
            status.count = 12
        return None

    def Allreduce(self, sendbuf, recvbuf):
        return None


def test_recv_counts_the_message_not_the_buffer(fake_mpi):
    import numpy as np
    from chainer_computational_cost.collect import mpi_recorder
    seen = []
    recorder = mpi_recorder.MPIRecorder(_FakeReceiver(),
                                        lambda *a: seen.append((a[0], a[1])))
    buf = np.zeros(10, np.float32)  # 40 bytes
    recorder.Recv(buf, 0, 5)
    mine = fake_mpi.Status()
    recorder.Recv(buf, 0, 5, mine)  # the caller's status, filled
    recorder.Recv(buf, source=0, status=None)
    recorder.Recv(buf, 0, 5, None)  # status None, given in its place
    recorder.Allreduce(fake_mpi.IN_PLACE, buf)  # in place: 40 bytes
    recorder.Allreduce(sendbuf=buf[:2], recvbuf=buf[:2])  # 8 bytes
    assert seen == [('MPI_Recv', 12)] * 4 + [('MPI_Allreduce', 40),
                                             ('MPI_Allreduce', 8)]
    assert mine.count == 12 and buf[2] == 7


class _FakeBuffers(object):
    rank = 1
    size = 2

    def Allreduce(self, sendbuf, recvbuf, op=None):
        return None

    def Scatter(self, sendbuf, recvbuf, root=0):
        return None

    def Bcast(self, buf, root=0):
        return None


def test_buffers_given_by_keyword_and_numpy_counts(fake_mpi):
    import warnings
    import numpy as np
    from chainer_computational_cost.collect import mpi_recorder
    seen = []
    recorder = mpi_recorder.MPIRecorder(
        _FakeBuffers(), lambda kind, n, frame, error, readings: seen.append(
            (kind, n, error)))
    # in place, the receive buffer by keyword: 6 float32 = 24 bytes
    recorder.Allreduce(fake_mpi.IN_PLACE, recvbuf=np.zeros(6, np.float32))
    # a rank that receives a scatter: its receive buffer, 3 float64 = 24
    recorder.Scatter(None, recvbuf=np.zeros(3, np.float64), root=0)
    # a NumPy count: 5 of the 10 floats, 5 * 4 = 20 bytes
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        recorder.Bcast([np.zeros(10, np.float32), np.int64(5),
                        fake_mpi.FLOAT])
        # NumPy counts and displacements: 2 + 1 = 3 floats, 12 bytes
        recorder.Bcast([np.zeros(10, np.float32),
                        (np.array([2, 1]), np.array([0, 2])),
                        fake_mpi.FLOAT], root=0)
    # the buffer by keyword: 7 bytes
    recorder.Bcast(buf=bytearray(7), root=0)
    assert seen == [('MPI_Allreduce', 24, None), ('MPI_Scatter', 24, None),
                    ('MPI_Bcast', 20, None), ('MPI_Bcast', 12, None),
                    ('MPI_Bcast', 7, None)]


def test_caller_name_and_gradient_calls():
    from chainer_computational_cost.collect import mpi_recorder

    class Comm(object):
        def multi_node_mean_grad(self):
            return self.helper()

        def helper(self):
            return mpi_recorder.caller_name(sys._getframe(0), self), \
                mpi_recorder.is_grad_call(sys._getframe(0))

        def bcast_obj(self):
            return inner(self)

    def inner(comm):
        return mpi_recorder.caller_name(sys._getframe(0), comm), \
            mpi_recorder.is_grad_call(sys._getframe(0))
    comm = Comm()
    # the outermost method of comm on the stack names the call
    assert comm.multi_node_mean_grad() == ('multi_node_mean_grad', True)
    assert comm.bcast_obj() == ('bcast_obj', False)
    # no method of comm: the caller's own name
    assert inner(object()) == ('inner', False)


# Under mpiexec (last: the slowest)

@needs_mpi
@pytest.mark.parametrize('n', [2, 4])
def test_training_step_comm_bytes_equal_the_spy(tmp_path, n):
    rows = launch(tmp_path, n, 'mn_train.py', 'float32', 'float16')
    for row in rows:
        assert row['restored'], row
        assert row['propagated'] == ['TypeError', True]
        # MLP 3-4-2: 3*4 + 4 + 4*2 + 2 = 26 parameters.  The first update
        # broadcasts them (bcast_data), the second all-reduces the
        # gradients: 26*4 = 104 bytes each, float16 too (the naive
        # communicator sends float16 as float32): 208 bytes.
        assert row['spy'] == row['hook'] == 208, row
        # The total and the summary sum every call: 104 + 104 = 208, and
        # 104 per type.
        assert row['total_comm_bytes'] == 208
        assert row['summary_comm_bytes'] == [104, 104]
        # A message of 3 float32 = 12 bytes received into a buffer of 10
        # float32 (40 bytes) counts 12, with or without the caller's
        # status, which still tells the caller 3; the values arrive.
        calls, count, got = row['recv']
        if row['rank'] % 2 == 0:
            assert calls == [['MPI_Send', 12]] * 2
        else:
            assert calls == [['MPI_Recv', 12]] * 2
            assert count == 3 and got == [0.0, 1.0, 2.0]
        # Gathered with memory=True: rank r keeps 4 * (r + 1) float32,
        # 16 * (r + 1) bytes; the highest peak is the last rank's.
        if row['rank'] == 0:
            assert row['gathered_memory'] == {
                'peak': 16 * n, 'rank': n - 1,
                'layer': 'rank{}/ReLU-1'.format(n - 1),
                'by_rank': [16 * (r + 1) for r in range(n)]}
        else:
            assert row['gathered_memory'] is None
        # Chainer 6's ChainerMN names the gradient all-reduce
        # allreduce_grad, Chainer 7's multi_node_mean_grad.
        grad = 'allreduce_grad' if chainer.__version__.startswith('6.') \
            else 'multi_node_mean_grad'
        kinds = [(t, p, call) for t, _, p, call in row['comm']]
        assert kinds == [('MPI_Bcast', 'forward', 'bcast_data')] * 4 + [
            ('MPI_Allreduce', 'backward', grad)] * 4
        # W of l1, b of l1, W of l2, b of l2 (sorted names): 12, 4, 8, 2
        # parameters, 4 bytes each.
        assert [b for _, b, _, _ in row['comm']] == [48, 16, 32, 8] * 2
        assert row['local_comm_bytes'] == [0]
        # The second step's local update (the first one only broadcast)
        # follows its all-reduce, in the update phase: SGD on l1's W (12)
        # and b (4), l2's W (8) and b (2), 1 FLOP per element, p and g
        # read, p written (4 bytes each in float32, 2 in float16).
        size = 4 if row['dtype'] == 'float32' else 2
        update = [(t, phase, link, f, r, w)
                  for _, t, phase, link, f, r, w in row['update']]
        assert update == [
            ('SGDRule', 'update', link, k, 2 * k * size, k * size)
            for link, k in (('/l1', 12), ('/l1', 4), ('/l2', 8),
                            ('/l2', 2))], row
        assert [i for i, *_ in row['update']] == [
            row['last_allreduce'] + k for k in (1, 2, 3, 4)], row
        # The first all-reduce (48 bytes) on ib-hdr200 (25e9 B/s, 1e-6 s):
        # 2(N-1)/N * 48/25e9 + 2(N-1) * 1e-6; N=2: 1.92e-9 + 2e-6,
        # N=4: 2.88e-9 + 6e-6.
        expected = {2: 2.00192e-6, 4: 6.00288e-6}[n]
        assert row['t_network'] == pytest.approx(expected), row
        # gather(root=0): every rank's records on rank 0, None elsewhere.
        if row['rank'] == 0:
            assert row['gathered'] == {
                'ranks': list(range(n)), 'n_layers': n * row['n_layers'],
                'comm_bytes': n * 208, 'differing': [],
                'first': 'rank0/LinearFunction-1'}
        else:
            assert row['gathered'] is None


@needs_mpi
@pytest.mark.parametrize('n', [2, 4])
def test_chainermn_functions_comm_bytes_equal_the_spy(tmp_path, n):
    # Chainer 6's ChainerMN functions refuse float16 (TypeError: allgather
    # does not support dtype float16); Chainer 7's send it as float32.
    dtypes = ['float32'] if chainer.__version__.startswith('6.') else [
        'float32', 'float16']
    rows = launch(tmp_path, n, 'mn_functions.py', *dtypes)
    for row in rows:
        for name, result in row['results'].items():
            assert result['hook'] == result['spy'] > 0, (row['rank'], name)
            # Both directions move data: the forward and its backward.
            assert result['phases'] == ['backward', 'forward'], name
            assert result['ignored'] == [] and not result['warnings'], name
        if row['rank'] == 0:
            # Ranks that ran different graphs are named, not crashed on:
            # odd ranks receive what even ranks send.
            results = row['results']
            assert results['allgather']['differing'] == []
            assert results['send_recv']['differing'] == list(
                range(1, n, 2))
            # Only odd ranks receive: the first of them is the slowest at
            # Recv; rank 0 reads the broadcast array, the others nothing.
            assert results['send_recv']['slowest']['Recv'] == 1
            assert results['bcast']['slowest']['Bcast'] == 0
            assert results['bcast']['slowest']['total'] is None
        else:
            assert row['results']['send_recv']['differing'] is None


def test_summary_slowest_rank_breaks_ties_on_bytes():
    import numpy as np
    from chainer_computational_cost.report import gathered as mn
    # Cast: one FLOP an element, reads and writes each element.  Rank 0:
    # two casts of 4 float32 to float64, 8 FLOPs, 2 * (16 + 32) = 96
    # bytes; rank 1: one cast of 8 float64 to float16, 8 FLOPs, 64 + 16 =
    # 80 bytes.  Same FLOPs: rank 0 moves more.
    parts = []
    with ComputationalCostHook() as cch:
        for _ in range(2):
            chainer.functions.cast(np.zeros(4, np.float32), np.float64)
    parts.append(mn.rank_part(0, cch))
    with ComputationalCostHook() as cch:
        chainer.functions.cast(np.zeros(8, np.float64), np.float16)
    parts.append(mn.rank_part(1, cch))
    g = mn.GatheredReport(parts)
    assert g.summary_report['Cast']['slowest_rank'] == 0
    assert [t['mrw'] for t in g.rank_report().values()] == [96, 80]
    # at 1e9 B/s: 96 ns against 80; over a network too (no MPI call: no
    # network time)
    for network in (None, 'ib-edr'):
        rank, seconds = g.slowest_rank(peak_flops=1e9, bandwidth=1e9,
                                       network=network)
        assert rank == 0 and seconds == pytest.approx(96e-9, rel=1e-12)


@needs_mpi
def test_cost_monitor_logs_each_ranks_comm_bytes(tmp_path):
    rows = launch(tmp_path, 2, 'mn_monitor.py', 'float32')
    for row in rows:
        assert row['restored'], row
        first, steady = row['hooked']
        # MLP 3-4-2: 26 float32 parameters, 104 bytes: broadcast by the
        # first update, all-reduced by every later one.
        assert first[1] == steady[1] == 104, row
        # The first step broadcasts in place of the update: fewer FLOPs.
        assert first[0] <= steady[0]
        assert row['log'] == [list(first)] + [list(steady)] * 3, row


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
        _Real(), lambda kind, nbytes, frame, error, readings:
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


def test_measure_time_times_the_mpi_calls_too():
    # A clock that reads 0, 1, 2, ... seconds: each call it times (a
    # function's forward, an MPI call) takes 1 s, so the step's phases
    # and total have a measured time, as without a communicator.
    import itertools
    import chainer.functions as F
    import numpy as np
    from calibration_fixtures import literal_calibration
    from chainer_computational_cost import ComputationalCostHook
    from mpi.mn_models import MLP
    comm = _communicator()
    model = MLP()
    clock = itertools.count().__next__
    with ComputationalCostHook(comm=comm, measure_time=True,
                               clock=clock) as cch:
        loss = F.sum(model(np.zeros((2, 3), np.float32)))
        comm.bcast_obj({'epoch': 1})
        loss.backward()
        comm.multi_node_mean_grad(model)
    report = cch.layer_report
    assert report['MPI_bcast_obj-1']['time'] == 1.0
    assert report['MPI_Allreduce-1']['time'] == 1.0
    # forward: 2 Linear, ReLU, Sum, the broadcast = 5 s; backward: 11
    # gradient calls and the all-reduce = 12 s
    assert cch.total_report['time'] == 17.0
    phases = cch.time_report(literal_calibration(), by='phase')
    assert (phases['forward']['time'], phases['backward']['time'],
            phases['total']['time']) == (5.0, 12.0, 17.0)


def test_an_mpi_call_inside_a_timed_call_is_timed_once():
    # A function node that all-reduces its input in its forward, as
    # chainermn.functions' do; the clock reads 0, 1, 2, 3: the node from
    # 0 to 3, the all-reduce inside it from 1 to 2.  The all-reduce's
    # second is its record's, the node keeps the other 2: 3 s in all,
    # as the clock saw.
    import itertools
    import chainer
    import numpy as np
    from chainer_computational_cost import ComputationalCostHook

    class Exchange(chainer.FunctionNode):
        def forward(self, inputs):
            x, = inputs
            comm.mpi_comm.Allreduce(x, np.empty_like(x))
            return x * 1,
    comm = _communicator()
    clock = itertools.count().__next__
    with ComputationalCostHook(comm=comm, measure_time=True,
                               clock=clock) as cch:
        cch.add_custom_cost_calculator(
            Exchange, lambda func, in_data, **kw: (0, 8, 8, {}))
        Exchange().apply((np.zeros(2, np.float32),))
    report = cch.layer_report
    assert list(report) == ['MPI_Allreduce-1', 'Exchange-1', 'total']
    assert [r['time'] for r in report.values()] == [1.0, 2.0, 3.0]


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
        Real(), lambda kind, nbytes, frame, error, readings:
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
        Rank0(), lambda kind, nbytes, frame, error, readings:
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


@needs_mpi
def test_gather_raises_on_every_rank_when_one_cannot_send(tmp_path):
    # Rank 1 cannot send its part; rank 0 must not wait for it forever
    # (launch's timeout fails the test on a hang), nor gather a part.
    cases = ['inside', 'nocomm', 'unpicklable', 'root', 'roots', 'fine']
    rows = launch(tmp_path, 2, 'mn_gather.py', *cases)
    by_case = {(r['dtype'], r['rank']): r for r in rows}
    for case in cases:
        for rank in (0, 1):
            # both ranks go on with the communicator afterwards
            assert by_case[case, rank]['after'] == 2, (case, rank)
    assert by_case['fine', 0]['returned'] == 'GatheredReport'
    assert by_case['fine', 0]['ranks'] == [0, 1]
    assert by_case['fine', 1]['returned'] == 'NoneType'
    why = {'inside': 'gather must be called after the with block',
           'nocomm': 'gather needs a hook made with comm=',
           'unpicklable': 'its records cannot be pickled'}
    for case, text in why.items():
        failing, waiting = by_case[case, 1], by_case[case, 0]
        # the failing rank its own error, the other one naming it
        assert failing['raised'] == {'unpicklable': 'TypeError'}.get(
            case, 'ValueError'), failing
        assert failing['message'].startswith(
            'gather failed on rank 1: ' + text), failing
        assert waiting['raised'] == 'RuntimeError', waiting
        assert waiting['message'].startswith(
            'gather failed on rank 1: ' + text), waiting
        assert waiting['message'].endswith('; no rank gathered')
    # a root outside the communicator: every rank's own error
    for rank in (0, 1):
        row = by_case['root', rank]
        assert row['raised'] == 'ValueError', row
        assert row['message'] == (
            'gather failed on rank {}: root must be a rank of the '
            'communicator, an integer in [0, 2); got 2'.format(rank))
    # roots that differ (each rank its own): every rank's ValueError
    for rank in (0, 1):
        row = by_case['roots', rank]
        assert (row['raised'], row['message']) == (
            'ValueError', 'gather needs the same root on every rank; the '
            'roots given, by rank: [0, 1]'), row


def _fake_communicator(real):
    """A ChainerMN communicator object around ``real`` (no MPI call)."""
    from chainermn.communicators.naive_communicator import NaiveCommunicator
    comm = object.__new__(NaiveCommunicator)
    comm.__dict__['mpi_comm'] = real
    return comm


@pytest.mark.parametrize('order', [(0, 1, 2), (0, 2, 1), (1, 0, 2),
                                   (1, 2, 0), (2, 0, 1), (2, 1, 0)])
def test_hooks_exited_in_any_order_give_the_communicator_back(order):
    import copy
    import numpy as np
    real = _Real()
    comm = _fake_communicator(real)
    first = ComputationalCostHook(comm=comm)
    first.__enter__()
    hooks = [first, copy.deepcopy(first), copy.deepcopy(first)]
    for hook in hooks[1:]:
        hook.__enter__()
    active = set(range(3))
    for i in order:
        # 5 float32 = 20 bytes, recorded by every hook still active
        comm.mpi_comm.Bcast(np.zeros(5, np.float32))
        hooks[i].__exit__(None, None, None)
        active.discard(i)
        assert (comm.mpi_comm is real) == (not active), (order, i)
    # nothing records any more
    comm.mpi_comm.Bcast(np.zeros(5, np.float32))
    assert comm.mpi_comm is real
    for position, i in enumerate(order):
        # the k-th to exit saw the calls made before each exit up to its
        # own: k + 1 of them, 20 bytes each
        assert hooks[i].total_report['comm_bytes'] == 20 * (position + 1)


def test_a_run_with_comm_that_sent_nothing_shows_0():
    # A hooked evaluation with comm=: no MPI call, 0 bytes sent; every row
    # says 0, not a blank ("not applicable"), in the hook's reports, its
    # snapshot (pickled too) and a gathered report of it.
    import pickle
    import numpy as np
    comm = _fake_communicator(_Real())
    with ComputationalCostHook(comm=comm) as cch:
        chainer.functions.relu(np.zeros((2, 3), np.float32))
    for source in (cch, cch.snapshot(), pickle.loads(pickle.dumps(
            cch.snapshot())), mn.GatheredReport([mn.rank_part(0, cch)])):
        assert source.total_report['comm_bytes'] == 0
        assert [(k, r['comm_bytes'])
                for k, r in source.summary_report.items()] == [
            ('ReLU', 0), ('total', 0)]
        assert [(k, r['comm_bytes'])
                for k, r in source.summary_report_by_phase().items()] == [
            ('forward/ReLU', 0), ('total', 0)]
        assert [r['comm_bytes'] for r in source.phase_report.values()] == [
            0, 0, 0]
        assert source.link_report['total']['comm_bytes'] == 0
        assert list(source.layer_report.values())[-1]['comm_bytes'] == 0
    # a snapshot pickled before the flag, of a run that sent nothing,
    # reads as a run without comm=: no key
    from chainer_computational_cost.report.cost_report import ReportSnapshot
    old = ReportSnapshot(cch.records(), cch.link_info(), None, None, {})
    assert 'comm_bytes' not in old.total_report
