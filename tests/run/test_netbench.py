"""netbench: the ring fit, network files, and the command under mpiexec
(issue 35).

Mutants no test here tells apart: measure's default of two warm-up rounds
(one changes only how warm a real machine is when the timing starts); the
flush of stderr before a rank aborts (stderr is line-buffered from Python
3.9 on, and the line ends in a newline)."""

import json
import sys

import pytest

from chainer_computational_cost.cli import netbench as netbench_cli
from chainer_computational_cost.run import netbench
from chainer_computational_cost.core import devices
from chainer_computational_cost.cli.args import parse_sizes
from helpers import mlp_step
from processes import launch
from processes import needs_mpi
from cli_runs import unwritable_stdout


def test_fit_ring_recovers_a_known_network():
    # Times made by hand from a = 5 us, B = 2e9 B/s over 4 ranks:
    # t(S) = 2*3 * 5e-6 + 2*3/4 * S / 2e9 = 3e-5 + 7.5e-10 * S
    sizes = [4, 1024, 2 ** 20, 2 ** 24]
    seconds = [3e-5 + 7.5e-10 * s for s in sizes]
    latency, bandwidth = netbench.fit_ring(sizes, seconds, 4)
    assert latency == pytest.approx(5e-6, rel=1e-9)
    assert bandwidth == pytest.approx(2e9, rel=1e-9)


def test_fit_ring_takes_bandwidth_from_the_large_sizes():
    # 5 us of latency over 2 ranks: t = 2 * 5 us + S / B.  4 bytes and
    # the megabytes at B = 1 GB/s (memory); 64 KiB at 10 GB/s (cache), in
    # neither the small sizes (<= 4 KiB) nor the larger half: the fit is
    # the megabytes' line exactly, undisturbed by the cache.
    sizes = [4, 65536, 2 ** 20, 2 ** 22, 2 ** 24]
    seconds = [1e-5 + 4 / 1e9, 1e-5 + 65536 / 1e10] + [
        1e-5 + s / 1e9 for s in sizes[2:]]
    latency, bandwidth = netbench.fit_ring(sizes, seconds, 2)
    assert bandwidth == pytest.approx(1e9, rel=1e-9)
    assert latency == pytest.approx(5e-6, rel=1e-9)
    # a latency below 0 is 0
    latency, _ = netbench.fit_ring([4, 2 ** 20, 2 ** 24],
                                   [1e-9, 2 ** 20 / 1e9, 2 ** 24 / 1e9], 2)
    assert latency == 0.0

    # no size of 4 KiB or less (--sizes 8K,1M,4M): the latency comes from
    # the smallest, 8 KiB; t = 1e-5 + S / 1e9 over 2 ranks as above
    sizes = [8192, 2 ** 20, 2 ** 22]
    latency, bandwidth = netbench.fit_ring(
        sizes, [1e-5 + s / 1e9 for s in sizes], 2)
    assert latency == pytest.approx(5e-6, rel=1e-9)
    assert bandwidth == pytest.approx(1e9, rel=1e-9)


def test_fit_ring_errors():
    with pytest.raises(ValueError, match='2 ranks or more, got 1'):
        netbench.fit_ring([4, 8], [1e-6, 2e-6], 1)
    with pytest.raises(ValueError, match='two different sizes or more'):
        netbench.fit_ring([4], [1e-6], 2)
    # one size timed twice draws no line: 2 us then 3 us at 1024 bytes
    # would make a bandwidth of the noise between the two
    with pytest.raises(ValueError, match=r'two different sizes or more, '
                       r'each with its time, got sizes \[1024, 1024\]'):
        netbench.fit_ring([1024, 1024], [2e-6, 3e-6], 2)
    # and what to time instead
    with pytest.raises(ValueError, match=r'^the times do not grow with the '
                       r'size: no bandwidth to fit \(sizes \[4, 8\], times '
                       r'\[2e-06, 1e-06\]\); time larger sizes \(the '
                       r'bandwidth comes from the larger half, best 1 MiB '
                       r'and more\) or more repeats'):
        netbench.fit_ring([4, 8], [2e-6, 1e-6], 2)


def test_network_file_round_trip(tmp_path):
    path = str(tmp_path / 'mine.json')
    net = devices.Network('mine', 'measured', 1.5e9, 4e-6)
    devices.save_network(net, path, n_ranks=4)
    assert json.loads(open(path).read())['n_ranks'] == 4
    assert devices.load_network(path) == net
    assert devices.resolve_network(path) == net
    # a scaling report over it: 2 workers, 104 bytes: 104/1.5e9 + 2 * 4 us
    rows = mlp_step().scaling_report([2], device='a100', network=path)
    assert rows[2]['t_allreduce'] == pytest.approx(104 / 1.5e9 + 8e-6,
                                                   rel=1e-12)


def test_bad_network_files(tmp_path):
    bad = tmp_path / 'bad.json'
    bad.write_text('{"name": "x"}')
    with pytest.raises(ValueError, match='is not a network file'):
        devices.resolve_network(str(bad))
    bad.write_text('{"name": "x", "title": "x", "bandwidth": 0, '
                   '"latency": 1}')
    with pytest.raises(ValueError, match=r'bandwidth \(bytes/s\) must be '
                       r'a finite number > 0, got 0'):
        devices.load_network(str(bad))
    with pytest.raises(ValueError, match="network file 'none.json' does not "
                       "exist"):
        devices.resolve_network('none.json')  # no such file


def test_sizes_option():
    assert parse_sizes('4,1K,2M') == [4, 1024, 2 * 1024 ** 2]
    # bytes written as --bucket-bytes takes them too: 1e6
    assert parse_sizes('4,1e6,2K') == [4, 1000000, 2048]
    import argparse
    with pytest.raises(argparse.ArgumentTypeError, match='two sizes'):
        parse_sizes('4')
    with pytest.raises(argparse.ArgumentTypeError, match='bytes >= 4'):
        parse_sizes('1,x')
    # a size it cannot read after two it could: the whole value refused,
    # never the sizes before it timed alone
    for text in ('4,8,x', '4,1K,oops,1M'):
        with pytest.raises(argparse.ArgumentTypeError) as info:
            parse_sizes(text)
        assert str(info.value) == (
            'must be two sizes or more in bytes >= 4, comma-separated (K, '
            'M, G suffixes: 4,1K,1M); got {!r}'.format(text))
    # 6 bytes would be timed as one float32 (4 bytes) and fitted as 6
    with pytest.raises(argparse.ArgumentTypeError) as info:
        parse_sizes('4,6,1K')
    assert str(info.value) == (
        "gives 6 in '4,6,1K': each size is timed as exactly that many "
        'bytes of float32 gradients (4 bytes each): give integers >= 4 '
        'that are multiples of 4')
    # beyond what an array holds: NumPy's "Maximum allowed dimension
    # exceeded", naming no option, came after the checks
    with pytest.raises(argparse.ArgumentTypeError) as info:
        parse_sizes('4,9223372036854775808')
    assert str(info.value) == (
        "gives 9223372036854775808 in '4,9223372036854775808': an array "
        'holds at most 9223372036854775807 bytes')


def test_measure_times_exactly_the_sizes_it_records(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(netbench, 'time', clock)
    comm = FakeComm(clock, lambda nbytes: 1e-5 + nbytes / 1e9, repeats=3)
    for size in (5, 6, 7, 2, 8.0, True):
        with pytest.raises(ValueError, match=r'^sizes: cannot time {!r} '
                           r'bytes: each size is timed as exactly that many '
                           r'bytes of float32 gradients \(4 bytes each\): '
                           r'give integers >= 4 that are multiples of 4$'
                           .format(size)):
            netbench.measure(comm, [4, size, 1024], repeats=3)
        assert comm.calls == 0  # refused before any timing
    # a size given twice would be one point of the fit counted twice, a
    # lone size no fit at all: refused as the command line refuses them
    for sizes, message in (
            ([4, 1024, 4], r'^sizes gives 4 more than once in \[4, 1024, '
                           r'4\]: each size is a row of the fit, give it '
                           r'once$'),
            ([1024], r'^sizes must hold two sizes or more \(the fit has a '
                     r'latency and a bandwidth\), got \[1024\]$'),
            (1024, r'^sizes must be an iterable of byte counts, got 1024$')):
        with pytest.raises(ValueError, match=message):
            netbench.measure(comm, sizes, repeats=3)
        assert comm.calls == 0
    # 8 bytes: a gradient of 2 float32, 8 bytes all-reduced
    assert netbench._one_param_link(8).p.grad.nbytes == 8


@pytest.mark.parametrize('kwargs, error, message', [
    ({'repeats': 0}, ValueError, r'^repeats must be an int >= 1, got 0$'),
    ({'repeats': 1.5}, TypeError, r'^repeats must be an int >= 1, got 1\.5$'),
    ({'repeats': True}, TypeError, r'^repeats must be an int >= 1, got '
     r'True$'),
    ({'repeats': None}, TypeError, r'^repeats must be an int >= 1, got '
     r'None$'),
    ({'warmup': -1}, ValueError, r'^warmup must be an int >= 0, got -1$'),
    ({'warmup': '2'}, TypeError, r"^warmup must be an int >= 0, got '2'$"),
])
def test_measure_checks_its_counts_before_timing(monkeypatch, kwargs, error,
                                                 message):
    # repeats=0 was StatisticsError: no median for empty data (after the
    # warm-up's timing), 1.5 a TypeError from range, True one repeat
    clock = FakeClock()
    monkeypatch.setattr(netbench, 'time', clock)
    comm = FakeComm(clock, lambda nbytes: 1e-5 + nbytes / 1e9, repeats=3)
    with pytest.raises(error, match=message):
        netbench.measure(comm, [4, 1024], **kwargs)
    assert comm.calls == 0


@needs_mpi
@pytest.mark.parametrize('n', [2, 4])
def test_netbench_under_mpiexec(tmp_path, n):
    rows = launch(tmp_path, n, 'mn_netbench.py', 'float32')
    assert [r['rank'] for r in rows] == list(range(n))
    for row in rows:
        # every rank reads the file rank 0 wrote: a network with a
        # positive bandwidth and a latency >= 0, named as asked
        assert row['status'] == 0
        assert row['name'] == 'here'
        assert row['title'] == 'measured: NaiveCommunicator over {} ' \
            'ranks'.format(n)
        assert row['bandwidth'] > 0 and row['latency'] >= 0
    assert len({(r['bandwidth'], r['latency']) for r in rows}) == 1


def test_cli_accepts_a_network_file(tmp_path, capsys):
    from chainer_computational_cost.cli.main import main
    path = str(tmp_path / 'mine.json')
    devices.save_network(devices.Network('mine', 'm', 1e9, 1e-6), path)
    status = main(['mpi.mn_models:build_mlp', '--shape', '2,3', '--train',
                   '--device', 'a100', '--workers', '2', '--network', path,
                   '--mode', 'csv', '--columns', 'workers,t_allreduce',
                   '--time-unit', 'us'])
    out, err = capsys.readouterr()
    assert status == 0, err
    # 104 bytes over 2 ranks: 104/1e9 s + 2 * 1 us = 2.104 us
    assert out.splitlines() == ['Workers,T allreduce us', '2,2.104']


# Timing and the command, on a fake clock and a fake communicator whose
# times are known

class FakeClock(object):
    """``time`` for netbench: perf_counter reads ``now``, which only the
    fake all-reduces move."""

    def __init__(self):
        self.now = 1000.0

    def perf_counter(self):
        return self.now


class FakeMPI(object):
    """The mpi4py communicator of two ranks: this one (rank 0) and one
    whose gradient all-reduces take ``slower`` times as long (per round,
    as time_mean_grad gathers them)."""

    def __init__(self, repeats, slower=2.0):
        self.repeats, self.slower = repeats, slower

    def Barrier(self):
        pass

    def allgather(self, value):
        if isinstance(value, list) and value and \
                isinstance(value[0], float):  # a size's rounds
            assert len(value) == self.repeats  # the warmup left out
            return [value, [self.slower * t for t in value]]
        return [value, value]

    def bcast(self, value, root=0):
        assert root == 0
        return value


class FakeComm(object):
    """A ChainerMN communicator of 2 ranks whose gradient all-reduce of S
    bytes takes ``seconds(S)`` on this rank (the fake clock moves by it)."""

    size, rank = 2, 0

    def __init__(self, clock, seconds, repeats, warmup_seconds=None):
        self.clock, self.seconds = clock, seconds
        self.mpi_comm = FakeMPI(repeats)
        self.calls = 0
        self.warmup_seconds = warmup_seconds

    def multi_node_mean_grad(self, link):
        self.calls += 1
        nbytes = link.p.size * 4
        self.clock.now += self.seconds(nbytes)


def test_a_round_is_timed_per_call_on_the_slowest_rank(monkeypatch):
    # Each all-reduce takes 3 us here; a round is 4 of them back to back
    # (12 us on the clock): 3 us a call.  The other rank takes twice as
    # long, 6 us a call: the all-reduce ends for all when it ends there.
    # (The round's 12 us, or this faster rank's 3 us, would be wrong.)
    clock = FakeClock()
    monkeypatch.setattr(netbench, 'time', clock)
    comm = FakeComm(clock, lambda nbytes: 3e-6, repeats=5)
    t = netbench.time_mean_grad(comm, netbench._one_param_link(4),
                                repeats=5, warmup=2, calls=4)
    assert t == pytest.approx(6e-6, rel=1e-6)
    assert comm.calls == (2 + 5) * 4  # warmup and timed rounds


def test_measure_fits_the_slowest_ranks_time_of_one_call(monkeypatch):
    # The slower rank runs the ring model exactly: a = 5 us, B = 1e9 B/s
    # over 2 ranks, t(S) = 2*1 * 5e-6 + 2*1/2 * S / 1e9 = 1e-5 + S/1e9;
    # this rank takes half as long.  The fit must give back a and B, and
    # each size's time t(S); four calls' time would make everything 4x
    # slow here (2x on the slower rank's), this rank's time 2x fast.
    clock = FakeClock()
    monkeypatch.setattr(netbench, 'time', clock)
    comm = FakeComm(clock, lambda nbytes: (1e-5 + nbytes / 1e9) / 2,
                    repeats=3)
    sizes = [4, 1024, 2 ** 20, 2 ** 22]
    network_, rows = netbench.measure(comm, sizes, repeats=3, name='fake')
    assert network_.latency == pytest.approx(5e-6, rel=1e-6)
    assert network_.bandwidth == pytest.approx(1e9, rel=1e-6)
    # 1e-5 + 4/1e9, 1e-5 + 1024/1e9, 1e-5 + 1048576/1e9, ...
    assert [r['seconds'] for r in rows] == pytest.approx(
        [1.0004e-5, 1.1024e-5, 1.058576e-3, 4.204304e-3], rel=1e-6)
    assert network_.title == 'measured: FakeComm over 2 ranks'


def test_a_large_size_is_all_reduced_on_copies_in_turn(monkeypatch):
    # One buffer all-reduced again and again stays in the caches (a 3 MB
    # one ran 1.7x as fast as among 8 copies here): from 64 KiB up, a
    # size is all-reduced on copies in turn that span all the sizes' bytes,
    # as a model's all-reduce goes through all its arrays, at most 8.
    # The sizes hold 4 + 4096 + 65536 + 4194304 + 16777216 = 21041156:
    # 4 and 4096 bytes, 1 copy; 64 KiB, 21041156 / 65536 = 321.1, so 8;
    # 4 MiB, 5.02, so 6; 16 MiB, 1.25, so 2.
    clock = FakeClock()
    monkeypatch.setattr(netbench, 'time', clock)
    comm = FakeComm(clock, lambda nbytes: 1e-5 + nbytes / 1e9, repeats=3)
    seen = []
    real = comm.multi_node_mean_grad

    def multi_node_mean_grad(link):
        seen.append((link.p.size * 4, id(link.p.grad)))
        real(link)
    comm.multi_node_mean_grad = multi_node_mean_grad
    sizes = [4, 4096, 65536, 2 ** 22, 2 ** 24]
    netbench.measure(comm, sizes, repeats=3, warmup=2)
    for nbytes, copies in zip(sizes, [1, 1, 8, 6, 2]):
        grads = [g for s, g in seen if s == nbytes]
        # (2 + 3) rounds of 4 calls, the copies taken in turn
        assert len(grads) == 20
        assert grads[:copies] == list(dict.fromkeys(grads))
        assert grads == (grads[:copies] * 20)[:20]


def test_a_size_that_spans_the_sizes_alone_is_one_copy():
    # 1 MiB timed alone spans its own bytes: one array, no copy; so with
    # no span given
    assert netbench.copies(2 ** 20, 2 ** 20) == 1
    assert netbench.copies(2 ** 20) == 1
    assert netbench.footprint(2 ** 20) == 2 ** 20


def test_the_memory_is_checked_for_the_size_whose_copies_hold_most():
    # sizes 4 B, 64 KiB, 1 MiB: span 4 + 65536 + 1048576 = 1114116; 4 B
    # is one copy (4), 64 KiB 8 copies (524288, MAX_COPIES: 17 would
    # span), 1 MiB 2 copies (2097152): 1 MiB is the heaviest
    sizes = [4, 65536, 2 ** 20]
    assert [netbench.footprint(s, 1114116) for s in sizes] == [
        4, 524288, 2097152]
    assert netbench.heaviest(sizes) == (2 ** 20, 1114116)


def test_without_mpi4py_this_process_is_rank_0(monkeypatch):
    # (None in sys.modules: the import fails, as with mpi4py not
    # installed) a mistake is then this one process's to report
    monkeypatch.setitem(sys.modules, 'mpi4py', None)
    assert netbench_cli._world_rank() == 0


def test_measure_with_its_defaults_times_4_bytes_to_16_mib(monkeypatch):
    # netbench without --sizes: every default size is timed as exactly
    # that many bytes (a size that is no multiple of 4 would be refused),
    # from 4 B to 16 MiB as --help says, smallest first; each size's time
    # is the slower rank's, twice this rank's t = 1e-5 + S / 1e9
    clock = FakeClock()
    monkeypatch.setattr(netbench, 'time', clock)
    comm = FakeComm(clock, lambda nbytes: 1e-5 + nbytes / 1e9, repeats=1)
    _, rows = netbench.measure(comm, repeats=1)
    sizes = [r['bytes'] for r in rows]
    assert sizes[0] == 4 and sizes[-1] == 2 ** 24
    assert sizes == sorted(set(sizes))
    assert [r['seconds'] for r in rows] == pytest.approx(
        [2 * (1e-5 + s / 1e9) for s in sizes], rel=1e-6)


def test_the_memory_of_the_copies_is_checked_before_timing():
    # 64 KiB among sizes of 524288 bytes: 8 copies, 8 * 65536 = 524288
    # bytes of gradients and as many of parameters, 1048576 for one rank
    assert netbench.footprint(65536, 524288) == 524288
    assert netbench.node_room_problem(65536, 1, 1048576, 524288) is None
    assert netbench.node_room_problem(65536, 1, 1048575, 524288) == (
        '524288 bytes of float32 gradients (8 copies of 65536, all-reduced '
        "in turn) do not fit in this node's available memory (1048575 "
        'bytes) for its 1 rank (twice: the parameter and its gradient)')
    # below 64 KiB, one copy whatever the span: 2 * 65532 = 131064
    assert netbench.node_room_problem(65532, 1, 131064, 524288) is None


def _fake_command(monkeypatch, seconds=lambda nbytes: 1e-5 + nbytes / 1e9):
    """netbench's command on FakeComm (rank 0 of 2) and a fake clock."""
    import chainermn
    clock = FakeClock()
    monkeypatch.setattr(netbench, 'time', clock)
    comm = FakeComm(clock, seconds, repeats=2)
    made = []

    def create_communicator(name):
        made.append(name)
        return comm
    monkeypatch.setattr(chainermn, 'create_communicator',
                        create_communicator)
    monkeypatch.setattr(netbench_cli, '_world', lambda: comm.mpi_comm)
    monkeypatch.setattr(netbench_cli, '_world_rank', lambda: 0)
    return comm, made


def _netbench(*argv):
    import io
    out = io.StringIO()
    try:
        status = netbench_cli.main(list(argv), out)
    except SystemExit as e:
        status = e.code
    return status, out.getvalue()


def test_output_into_a_missing_directory_is_refused_before_measuring(
        tmp_path, monkeypatch, capsys):
    comm, made = _fake_command(monkeypatch)
    path = str(tmp_path / 'nowhere' / 'net.json')
    status, out = _netbench('--output', path, '--repeats', '2')
    assert (status, out) == (2, '')
    assert capsys.readouterr().err == (
        "error: --output {!r}: cannot write in directory {!r}: it does not "
        'exist\n'.format(path, str(tmp_path / 'nowhere')))
    assert made == ['naive'] and comm.calls == 0  # nothing measured


def test_an_output_that_cannot_be_named_is_refused_before_measuring(
        tmp_path, monkeypatch, capsys):
    # an empty name; 300 characters, more than a file system's 255
    comm, made = _fake_command(monkeypatch)
    monkeypatch.chdir(tmp_path)
    long = str(tmp_path / ('a' * 300 + '.json'))
    for path, message in (
            ('', '--output is empty: give a file name such as '
                 'network.json'),
            (long, '--output {!r}: its file name is 305 bytes long, more '
                   'than the 255 its file system takes: give a shorter '
                   'name such as network.json'.format(long))):
        assert _netbench('--output', path, '--repeats', '2') == (2, '')
        assert capsys.readouterr().err == 'error: {}\n'.format(message)
    assert comm.calls == 0 and list(tmp_path.iterdir()) == []


def test_the_file_is_saved_before_saved_is_printed(tmp_path, monkeypatch,
                                                   capsys):
    _fake_command(monkeypatch)
    path = str(tmp_path / 'net.json')
    status, out = _netbench('--output', path, '--sizes', '4,1K', '--repeats',
                            '2', '--name', 'here')
    assert status == 0, capsys.readouterr().err
    # the slower rank (2x): 2 * (1e-5 + 4/1e9) = 20.008 us; 2 * (1e-5 +
    # 1024/1e9) = 22.048 us; the fit a = 10 us (2*1*a = 20 us; the 4
    # bytes' 0.008 us are S/B at B = 0.5e9: 2e-5 + S/0.5e9)
    assert out.splitlines() == [
        '     bytes   measured us      model us',
        '         4          20.0          20.0',
        '      1024          22.0          22.0',
        'latency 10.00 us, bandwidth 0.500 GB/s (2 ranks, naive); saved to '
        + path]
    saved = devices.load_network(path)
    assert (saved.name, saved.latency, saved.bandwidth) == (
        'here', pytest.approx(1e-5, rel=1e-6), pytest.approx(5e8, rel=1e-6))


@pytest.mark.parametrize('closed', [True, False])
def test_a_table_that_cannot_be_written_is_one_line(tmp_path, monkeypatch,
                                                    capsys, closed):
    # the file is saved; a closed stdout (None, '>&-') or a full disk
    # takes no table: one line and status 1, not a traceback
    _fake_command(monkeypatch)
    path = tmp_path / 'net.json'
    with unwritable_stdout(monkeypatch, closed) as (ost, reason):
        status = netbench_cli.main(['--output', str(path), '--sizes', '4,1K',
                                    '--repeats', '2'], ost)
    assert (status, capsys.readouterr().err) == (
        1, 'error: cannot write the table: {}\n'.format(reason))
    assert devices.load_network(str(path)).bandwidth > 0


def test_a_file_that_cannot_be_saved_is_not_said_saved(tmp_path, monkeypatch,
                                                       capsys):
    _fake_command(monkeypatch)

    def full_disk(*args, **kwargs):
        raise OSError(28, 'No space left on device')
    monkeypatch.setattr(netbench_cli.devices, 'save_network', full_disk)
    path = str(tmp_path / 'net.json')
    status, out = _netbench('--output', path, '--sizes', '4,1K', '--repeats',
                            '2')
    assert status == 1
    # the figures measured are kept; no 'saved to'
    assert out.splitlines()[-1] == (
        'latency 10.00 us, bandwidth 0.500 GB/s (2 ranks, naive)')
    assert capsys.readouterr().err == (
        'error: cannot write {}: No space left on device\n'.format(path))
    assert not (tmp_path / 'net.json').exists()


def test_a_directory_gone_before_the_save_is_one_line(tmp_path,
                                                      monkeypatch, capsys):
    # --output was found writable; its directory is gone by the time the
    # measures are saved: status 1 and one line naming the file, as for a
    # full disk (it was a traceback)
    _fake_command(monkeypatch)
    real_save = netbench_cli.devices.save_network

    def save_after_rmdir(network, path, **extra):
        (tmp_path / 'out').rmdir()
        return real_save(network, path, **extra)
    monkeypatch.setattr(netbench_cli.devices, 'save_network',
                        save_after_rmdir)
    (tmp_path / 'out').mkdir()
    path = str(tmp_path / 'out' / 'net.json')
    status, out = _netbench('--output', path, '--sizes', '4,1K', '--repeats',
                            '2')
    assert status == 1
    assert out.splitlines()[-1] == (
        'latency 10.00 us, bandwidth 0.500 GB/s (2 ranks, naive)')
    assert capsys.readouterr().err == (
        "error: {!r} cannot be written (a network file): [Errno 2] No such "
        "file or directory: {!r}\n".format(path, path))


@pytest.mark.parametrize('argv, message', [
    (('--repeats', '0'), "argument --repeats: must be an integer >= 1; got "
                         "'0' (see --help)"),
    # saved as netbench-2 before
    (('--name', ''), "argument --name: must be a name, got '' (leave --name "
                     'out for netbench-N) (see --help)'),
    (('--name', '   '), "argument --name: must be a name, got '   ' (leave "
                        '--name out for netbench-N) (see --help)'),
    (('--sizes', '4'), 'argument --sizes: must be two sizes or more in bytes '
                       '>= 4, comma-separated (K, M, G suffixes: 4,1K,1M); '
                       "got '4' (see --help)"),
    (('--output',), 'argument --output: expected one argument (see --help)'),
    # 4K is 4096: a size given twice is one point of the fit, not two
    (('--sizes', '4,4'), 'argument --sizes: sizes gives 4 more than once in '
                         '[4, 4]: each size is a row of the fit, give it once '
                         '(see --help)'),
    (('--sizes', '8,4K,4096'), 'argument --sizes: sizes gives 4096 more than '
     'once in [8, 4096, 4096]: each size is a row of the fit, give it once '
     '(see --help)'),
    (('--sizes', '4,6'), "argument --sizes: gives 6 in '4,6': each size is "
     'timed as exactly that many bytes of float32 gradients (4 bytes '
     'each): give integers >= 4 that are multiples of 4 (see --help)'),
    # as given, not as the 101 digits of the bytes 1e100 is
    (('--sizes', '4, 1e100'), "argument --sizes: gives 1e100 in '4, 1e100': "
     'an array holds at most 9223372036854775807 bytes (see --help)'),
    # beyond a float: named too, not told as a list badly written
    (('--sizes', '4,1e309K'), "argument --sizes: gives 1e309K in '4,1e309K': "
     'an array holds at most 9223372036854775807 bytes (see --help)'),
    (('--communicator', 'nosuch'), "--communicator 'nosuch' cannot be "
     'created here: ValueError: Unrecognized communicator: "nosuch" (naive '
     'runs on any machine)'),
])
def test_netbench_mistakes_are_one_error_line(argv, message, monkeypatch,
                                              capsys):
    comm, made = _fake_command(monkeypatch)
    import chainermn

    def create_communicator(name):
        if name != 'naive':
            raise ValueError('Unrecognized communicator: "{}"'.format(name))
        return comm
    monkeypatch.setattr(chainermn, 'create_communicator',
                        create_communicator)
    assert _netbench(*argv) == (2, '')
    assert capsys.readouterr().err == 'error: {}\n'.format(message)
    assert comm.calls == 0


def test_a_communicator_is_named_in_any_case(monkeypatch, tmp_path):
    # as every option's choice: NAIVE was "Unrecognized communicator"
    comm, made = _fake_command(monkeypatch)
    status, out = _netbench('--communicator', 'NAIVE', '--repeats', '2',
                            '--output', str(tmp_path / 'net.json'))
    assert status == 0 and made == ['naive']


def test_netbench_on_one_rank_is_refused_before_measuring(monkeypatch,
                                                          capsys):
    # run without mpiexec: no all-reduce to time
    comm, made = _fake_command(monkeypatch)
    comm.size = 1
    assert _netbench('--repeats', '2') == (2, '')
    assert capsys.readouterr().err == (
        'error: netbench needs 2 ranks or more: mpiexec -n N python -m '
        'chainer_computational_cost netbench\n')
    assert comm.calls == 0


def test_a_rank_that_fails_stops_every_rank(monkeypatch, capsys):
    # rank 1 (say, without a GPU) could not create the communicator:
    # rank 0, which could, must not go on measuring alone
    comm, made = _fake_command(monkeypatch)
    failed = ("--communicator 'pure_nccl' cannot be created here: "
              'RuntimeError: no NCCL')
    comm.mpi_comm.allgather = lambda value: [value, failed]
    assert _netbench('--communicator', 'pure_nccl') == (2, '')
    assert capsys.readouterr().err == (
        "error: --communicator 'pure_nccl' cannot be created here: "
        'RuntimeError: no NCCL\n')
    assert comm.calls == 0


@needs_mpi
@pytest.mark.parametrize('argv, message', [
    (('--sizes', '4,6'), "error: argument --sizes: gives 6 in '4,6': each "
     'size is timed as exactly that many bytes of float32 gradients (4 '
     'bytes each): give integers >= 4 that are multiples of 4 (see '
     '--help)'),
    (('--communicator', 'nosuch'), "error: --communicator 'nosuch' cannot "
     'be created here: ValueError: Unrecognized communicator: "nosuch" '
     '(naive runs on any machine)'),
    (('--communicator', 'pure_nccl'), "error: --communicator 'pure_nccl' "
     'cannot be created here: '),
    (('--repeats', '0'), "error: argument --repeats: must be an integer >= "
     "1; got '0' (see --help)"),
    (('--output', 'nowhere/net.json'), "error: --output 'nowhere/net.json': "
     'cannot write in directory '),
])
def test_a_mistake_under_mpiexec_is_one_line_of_rank_0(argv, message,
                                                       tmp_path):
    from cli_runs import run_mpi
    if argv[1] == 'pure_nccl':
        try:
            import cupy  # NOQA
            pytest.skip('NCCL may be there: pure_nccl may be created')
        except ImportError:
            pass
    status, out, err = run_mpi(2, 'netbench', *argv, cwd=tmp_path)
    assert (status, out) == (2, ''), err
    # one line, whatever the number of ranks: no traceback, no usage
    assert err.count('\n') == 1 and err.startswith(message), err
    assert list(tmp_path.iterdir()) == []


@needs_mpi
@pytest.mark.parametrize('option, first', [
    ('--help', 'usage: python -m chainer_computational_cost netbench'),
    ('--version', 'chainer_computational_cost ')])
def test_help_and_version_under_mpiexec_are_printed_once(option, first,
                                                         tmp_path):
    # every rank parses the command; rank 0 alone prints
    from cli_runs import run_mpi
    status, out, err = run_mpi(2, 'netbench', option, cwd=tmp_path)
    assert (status, err) == (0, '')
    assert out.startswith(first) and out.count(first) == 1, out
