"""ChainerMN: communication records exact to the byte, under mpiexec.

The scripts in tests/mpi/ run under ``mpiexec -n 2`` and ``-n 4`` (a
subprocess with a timeout: a deadlock fails the test instead of hanging
it) and print one JSON line per rank.  Each puts a spy of its own in place
of the communicator's mpi4py communicator; the hook's ``comm_bytes`` must
equal the spy's total on every rank.
"""

import json
import os
import subprocess
import sys

import pytest

import chainer

from chainer_computational_cost import ComputationalCostHook

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MPIEXEC = os.path.join(os.path.dirname(sys.executable), 'mpiexec')


def _why_no_mpi():
    try:
        import mpi4py  # NOQA
    except ImportError:
        return 'no mpi4py (pip install chainer_computational_cost[mpi])'
    if not os.path.exists(MPIEXEC):
        return 'no mpiexec beside {} (pip install mpich)'.format(
            sys.executable)
    return None


NO_MPI = _why_no_mpi()
needs_mpi = pytest.mark.skipif(NO_MPI is not None, reason=str(NO_MPI))


def launch(tmp_path, n, script, *args):
    """The JSON lines the ranks of ``mpiexec -n n script args`` write,
    sorted by dtype and rank."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get(
        'PYTHONPATH', ''), OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1',
        MN_OUT=str(tmp_path))
    proc = subprocess.run(
        [MPIEXEC, '-n', str(n), sys.executable,
         os.path.join(HERE, 'mpi', script)] + list(args),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        timeout=150, universal_newlines=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line) for path in sorted(tmp_path.glob('*.jsonl'))
            for line in path.read_text().splitlines()]
    assert len(rows) == n * len(args), proc.stdout
    return sorted(rows, key=lambda r: (r['dtype'], r['rank']))


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


def test_comm_must_be_a_chainermn_communicator():
    with pytest.raises(TypeError, match='comm'):
        ComputationalCostHook(comm=object())


def test_no_comm_adds_no_comm_bytes():
    import numpy as np
    with ComputationalCostHook() as cch:
        chainer.functions.relu(np.zeros((2, 3), np.float32))
    assert cch.layer_report['ReLU-1']['comm_bytes'] == 0
    assert 'comm_bytes' not in cch.total_report


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
    from chainer_computational_cost import mn
    seen = []
    recorder = mn.MPIRecorder(_FakeMPI(), lambda *a: seen.append(
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
    from chainer_computational_cost import mn
    x = np.zeros((2, 3), np.float64)
    assert mn.buffer_bytes(x) == 48  # 6 * 8
    assert mn.buffer_bytes(None) == 0
    assert mn.buffer_bytes([x, None]) == 48  # no counts: the buffer


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
