"""netbench's --sizes beyond memory: one ``error:`` line naming --sizes,
found before any size is timed, with every rank stopping (a rank that
went on alone would wait at the all-reduce forever); never a MemoryError
traceback.  The allocations are made to fail, not memory exhausted."""

import io
import os
import sys

import pytest

from chainer_computational_cost.cli import netbench as netbench_cli
from chainer_computational_cost.run import netbench
from processes import communicate
from processes import MPIEXEC
from processes import needs_mpi
from processes import ROOT

HERE = os.path.dirname(os.path.abspath(__file__))


class FakeMPI(object):
    """mpi4py's communicator of two ranks, this one rank 0: the other
    rank sends what ``other(value)`` says for this rank's ``value``."""

    def __init__(self, other=lambda value: value):
        self.other = other

    def Barrier(self):
        pass

    def allgather(self, value):
        return [value, self.other(value)]

    def bcast(self, value, root=0):
        return value


class FakeComm(object):
    """A ChainerMN communicator of 2 ranks whose all-reduce takes no
    time; ``sizes`` holds the bytes of each call."""

    size, rank = 2, 0

    def __init__(self, mpi_comm):
        self.mpi_comm = mpi_comm
        self.sizes = []

    def multi_node_mean_grad(self, link):
        self.sizes.append(link.p.size * 4)


def _short_of_memory(monkeypatch, above):
    """Allocations of more than ``above`` bytes raise MemoryError; the
    bytes of each asked for are in the list returned."""
    make = netbench._one_param_link
    asked = []

    def link(nbytes):
        asked.append(nbytes)
        if nbytes > above:
            raise MemoryError()
        return make(nbytes)
    monkeypatch.setattr(netbench, '_one_param_link', link)
    return asked


def test_a_size_beyond_memory_is_one_line_before_any_timing(
        tmp_path, monkeypatch, capsys):
    # 4 and 1K used to be timed, then 4K's allocation raised a MemoryError
    # traceback (exit 1)
    import chainermn
    comm = FakeComm(FakeMPI())
    monkeypatch.setattr(chainermn, 'create_communicator', lambda name: comm)
    monkeypatch.setattr(netbench_cli, '_world', lambda: comm.mpi_comm)
    monkeypatch.setattr(netbench_cli, '_world_rank', lambda: 0)
    _short_of_memory(monkeypatch, above=1024)
    out = io.StringIO()
    path = str(tmp_path / 'net.json')
    status = netbench_cli.main(['--sizes', '4,1K,4K', '--repeats', '2',
                                '--output', path], out)
    assert (status, out.getvalue()) == (2, '')
    assert capsys.readouterr().err == (
        'error: --sizes: rank 0: 4096 bytes of float32 gradients do not fit '
        'in memory (twice: the parameter and its gradient): give smaller '
        'sizes\n')
    assert comm.sizes == [] and not os.path.exists(path)


@pytest.mark.parametrize('ranks_on_node, refused',
                         [(1, False), (2, True), (None, False)])
def test_a_size_the_ranks_of_a_node_cannot_hold_together(
        tmp_path, monkeypatch, capsys, ranks_on_node, refused):
    # each rank's check allocated 4K twice alone and passed; all the ranks
    # of a node touching theirs at once then woke the kernel's OOM killer
    # (status 9, no line).  10000 bytes available: one rank needs
    # 2*4096 = 8192, two need 16384; a communicator that does not say
    # how many ranks share its node (None: no intra_size) is one a node
    import chainermn
    comm = FakeComm(FakeMPI())
    if ranks_on_node is not None:
        comm.intra_size = ranks_on_node
    monkeypatch.setattr(chainermn, 'create_communicator', lambda name: comm)
    monkeypatch.setattr(netbench_cli, '_world', lambda: comm.mpi_comm)
    monkeypatch.setattr(netbench_cli, '_world_rank', lambda: 0)
    monkeypatch.setattr(netbench, 'available_memory', lambda: 10000)
    asked = _short_of_memory(monkeypatch, above=float('inf'))
    out = io.StringIO()
    path = str(tmp_path / 'net.json')
    status = netbench_cli.main(['--sizes', '4,1K,4K', '--repeats', '1',
                                '--output', path], out)
    if not refused:  # on to the allocation check, then the timing
        assert asked[0] == 4096 and comm.sizes[:4] == [4] * 4
        return
    assert (status, out.getvalue()) == (2, '')
    assert capsys.readouterr().err == (
        "error: --sizes: rank 0: 4096 bytes of float32 gradients do not fit "
        "in this node's available memory (10000 bytes) for its 2 ranks "
        '(twice: the parameter and its gradient): give smaller sizes\n')
    # found before any allocation or timing
    assert asked == [] and comm.sizes == [] and not os.path.exists(path)


def _checked(tmp_path, monkeypatch, sizes, available):
    """(status, stdout, the allocations asked, the communicator) of the
    command on ``sizes`` with ``available`` bytes on the one rank's node."""
    import chainermn
    comm = FakeComm(FakeMPI())
    comm.intra_size = 1
    monkeypatch.setattr(chainermn, 'create_communicator', lambda name: comm)
    monkeypatch.setattr(netbench_cli, '_world', lambda: comm.mpi_comm)
    monkeypatch.setattr(netbench_cli, '_world_rank', lambda: 0)
    monkeypatch.setattr(netbench, 'available_memory', lambda: available)
    asked = _short_of_memory(monkeypatch, above=float('inf'))
    out = io.StringIO()
    status = netbench_cli.main(['--sizes', sizes, '--repeats', '1',
                                '--output', str(tmp_path / 'net.json')],
                               out)
    return status, out.getvalue(), asked, comm


@pytest.mark.parametrize('sizes, available, refused, held', [
    # The sizes hold 4 + 65536 + 1048576 = 1114116 bytes: 1 MiB is timed
    # on 2 copies (1114116 / 1048576 = 1.06), 2097152 bytes of gradients
    # and as many of parameters, 4194304 for the one rank of the node;
    # 64 KiB on 8, 524288 bytes.
    ('4,64K,1M', 4194304, False, (2, 1048576)),
    ('4,64K,1M', 4194303, True, (2, 1048576)),
    # 3 + 4 = 7 MiB: 3 MiB on 3 copies (7 / 3 = 2.3), 9437184 bytes, twice
    # 18874368; the largest, 4 MiB, on 2 copies holds less: 8388608
    ('3M,4M', 18874368, False, (3, 3145728)),
    ('3M,4M', 18874367, True, (3, 3145728)),
])
def test_the_copies_of_the_size_that_holds_most_are_checked(
        tmp_path, monkeypatch, capsys, sizes, available, refused, held):
    status, out, asked, comm = _checked(tmp_path, monkeypatch, sizes,
                                        available)
    copies, size = held
    if not refused:  # the check's allocation: the copies at once
        assert asked[0] == copies * size
        return
    assert (status, out) == (2, '')
    assert capsys.readouterr().err == (
        'error: --sizes: rank 0: {} bytes of float32 gradients ({} '
        'copies of {}, all-reduced in turn) do not fit in this '
        "node's available memory ({} bytes) for its 1 rank (twice: "
        'the parameter and its gradient): give smaller sizes\n'.format(
            copies * size, copies, size, available))
    assert asked == [] and comm.sizes == []


def test_a_size_another_rank_cannot_allocate_stops_this_one(monkeypatch):
    # the check passed, then rank 1 (memory taken meanwhile) cannot
    # allocate 4K: this rank, which can, must not time it alone
    asked = _short_of_memory(monkeypatch, above=float('inf'))
    comm = FakeComm(FakeMPI(lambda value: 1 if asked[-1:] == [4096] and
                            value is None else value))
    with pytest.raises(MemoryError) as e:
        netbench.measure(comm, [4, 1024, 4096], repeats=1, warmup=0)
    assert str(e.value) == ('4096 bytes of float32 gradients do not fit in '
                            'the memory of rank 1 (twice: the parameter and '
                            'its gradient)')
    # 4 and 1K timed (4 calls a round, one round), 4K never
    assert comm.sizes == [4] * 4 + [1024] * 4


def _netbench_mpi(tmp_path, when):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [ROOT, os.path.dirname(HERE), os.environ.get('PYTHONPATH', '')]),
        OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
    # (the ranks killed with mpiexec on a timeout: no rank left waiting)
    return communicate(
        [MPIEXEC, '-n', '2', sys.executable,
         os.path.join(os.path.dirname(HERE), 'mpi', 'mn_netbench_memory.py'),
         when, str(tmp_path / 'net.json')], env=env, timeout=150)


@needs_mpi
@pytest.mark.slow
@pytest.mark.parametrize('when, message', [
    ('first', 'error: --sizes: rank 1: 4096 bytes of float32 gradients do '
              'not fit in memory (twice: the parameter and its gradient): '
              'give smaller sizes\n'),
    ('later', 'error: --sizes: 4096 bytes of float32 gradients do not fit '
              'in the memory of rank 1 (twice: the parameter and its '
              'gradient)\n')], ids=['first', 'later'])
def test_a_size_rank_1_alone_cannot_allocate_stops_every_rank(
        tmp_path, when, message):
    status, out, err = _netbench_mpi(tmp_path, when)
    assert (status, out, err) == (2, '', message)
    assert list(tmp_path.iterdir()) == []


@needs_mpi
@pytest.mark.slow
def test_an_all_reduce_one_rank_cannot_run_stops_every_rank(tmp_path):
    # rank 1's all-reduce of 4K ran out of memory while rank 0 waited in
    # it: rank 0 waited forever (the timeout killed both); now rank 1
    # says so and aborts MPI, every rank stopped with status 1
    status, out, err = _netbench_mpi(tmp_path, 'during')
    assert (status, out) == (1, '')
    lines = err.splitlines()
    assert lines[0] == ('error: rank 1: netbench stopped while timing: '
                        'MemoryError; every rank is stopped')
    # then MPICH's own line of the abort, and nothing else (no traceback)
    assert [line for line in lines[1:] if 'MPI_Abort' not in line] == []
    assert list(tmp_path.iterdir()) == []
