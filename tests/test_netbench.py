"""netbench: the ring fit, network files, and the command under mpiexec
(issue 35)."""

import json

import pytest

from chainer_computational_cost import netbench
from chainer_computational_cost import network
from chainer_computational_cost._cli_args import parse_sizes
from test_chainermn import launch
from test_chainermn import needs_mpi


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


def test_fit_ring_errors():
    with pytest.raises(ValueError, match='2 ranks or more, got 1'):
        netbench.fit_ring([4, 8], [1e-6, 2e-6], 1)
    with pytest.raises(ValueError, match='two sizes or more'):
        netbench.fit_ring([4], [1e-6], 2)
    with pytest.raises(ValueError, match='do not grow with the size'):
        netbench.fit_ring([4, 8], [2e-6, 1e-6], 2)


def test_network_file_round_trip(tmp_path):
    path = str(tmp_path / 'mine.json')
    net = network.Network('mine', 'measured', 1.5e9, 4e-6)
    network.save_network(net, path, n_ranks=4)
    assert json.loads(open(path).read())['n_ranks'] == 4
    assert network.load_network(path) == net
    assert network.resolve_network(path) == net
    # a scaling report over it: 2 workers, 104 bytes: 104/1.5e9 + 2 * 4 us
    from test_network import _step
    rows = _step().scaling_report([2], device='a100', network=path)
    assert rows[2]['t_allreduce'] == pytest.approx(104 / 1.5e9 + 8e-6,
                                                   rel=1e-12)


def test_bad_network_files(tmp_path):
    bad = tmp_path / 'bad.json'
    bad.write_text('{"name": "x"}')
    with pytest.raises(ValueError, match='is not a network file'):
        network.resolve_network(str(bad))
    bad.write_text('{"name": "x", "title": "x", "bandwidth": 0, '
                   '"latency": 1}')
    with pytest.raises(ValueError, match='bandwidth must be > 0'):
        network.load_network(str(bad))
    with pytest.raises(ValueError, match="unknown network 'none.json'"):
        network.resolve_network('none.json')  # no such file


def test_sizes_option():
    assert parse_sizes('4,1K,2M') == [4, 1024, 2 * 1024 ** 2]
    import argparse
    with pytest.raises(argparse.ArgumentTypeError, match='two sizes'):
        parse_sizes('4')
    with pytest.raises(argparse.ArgumentTypeError, match='bytes >= 4'):
        parse_sizes('1,x')


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
    from chainer_computational_cost.__main__ import main
    path = str(tmp_path / 'mine.json')
    network.save_network(network.Network('mine', 'm', 1e9, 1e-6), path)
    status = main(['mpi.mn_models:build_mlp', '--shape', '2,3', '--train',
                   '--device', 'a100', '--workers', '2', '--network', path,
                   '--mode', 'csv', '--columns', 'workers,t_allreduce',
                   '--time-unit', 'us'])
    out, err = capsys.readouterr()
    assert status == 0, err
    # 104 bytes over 2 ranks: 104/1e9 s + 2 * 1 us = 2.104 us
    assert out.splitlines() == ['Workers,T allreduce us', '2,2.104']
