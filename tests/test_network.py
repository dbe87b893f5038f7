"""Network presets, the alpha-beta times of MPI calls, t_network in the
roofline report and scaling_report."""

import chainer.functions as F
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import network
from mpi.mn_models import MLP


def _step():
    model = MLP()
    x = np.zeros((2, 3), np.float32)
    with ComputationalCostHook() as cch:
        F.sum(model(x)).backward()
    return cch


def test_presets_in_bytes_per_second():
    # 200 Gb/s / 8 = 25 GB/s; 25 Gb/s / 8 = 3.125 GB/s; NVLink 3: 600 GB/s
    # both ways, 300 one way.
    assert network.NETWORKS['ib-hdr200'].bandwidth == 25e9
    assert network.NETWORKS['ib-edr'].bandwidth == 12.5e9
    assert network.NETWORKS['ib-ndr'].bandwidth == 50e9
    assert network.NETWORKS['eth-25g'].bandwidth == 3.125e9
    assert network.NETWORKS['eth-100g'].latency == 10e-6
    assert network.NETWORKS['nvlink-a100'].bandwidth == 300e9


def test_collective_times_by_hand():
    net = network.Network('t', 't', 1e9, 1e-6)
    # ring all-reduce, N=4, S=1e6 B: 2*3/4 * 1e-3 s + 2*3 * 1e-6 s
    # = 1.5e-3 + 6e-6 = 1.506e-3 s
    assert network.collective_time('MPI_Allreduce', 10 ** 6, 4, net) == \
        pytest.approx(1.506e-3)
    # tree broadcast, N=5: ceil(log2 5) = 3 steps of 1e-6 + 1e-3 s
    assert network.collective_time('MPI_Bcast', 10 ** 6, 5, net) == \
        pytest.approx(3 * 1.001e-3)
    # the pickle-based bcast is costed as Bcast
    assert network.collective_time('MPI_bcast_obj', 10 ** 6, 5, net) == \
        pytest.approx(3 * 1.001e-3)
    # ring all-gather, N=3: 2 * (1e-6 + 1e-3)
    assert network.collective_time('MPI_Allgather', 10 ** 6, 3, net) == \
        pytest.approx(2.002e-3)
    # a point-to-point message: 1e-6 + 1e-3
    assert network.collective_time('MPI_Send', 10 ** 6, 2, net) == \
        pytest.approx(1.001e-3)
    # one rank: no network
    assert network.collective_time('MPI_Allreduce', 10 ** 6, 1, net) == 0


def test_scaling_report_worked_example():
    # The README's worked example.  The MLP 3-4-2 has 3*4 + 4 + 4*2 + 2 =
    # 26 parameters: 104 bytes of float32 gradients.  On ib-hdr200 (25e9
    # B/s, 1e-6 s) the ring all-reduce over 8 workers takes
    # 2*7/8 * 104/25e9 + 2*7 * 1e-6 = 7.28e-9 + 14e-6 = 1.400728e-5 s.
    rows = _step().scaling_report([1, 8, 64], device='a100',
                                  network='ib-hdr200')
    assert list(rows) == [1, 8, 64]
    assert rows[8]['comm_bytes'] == 104
    assert rows[8]['t_allreduce'] == pytest.approx(1.400728e-5)
    assert rows[1]['t_allreduce'] == 0
    assert rows[1]['efficiency'] == 1.0
    assert rows[8]['t_step'] == pytest.approx(
        rows[8]['t_compute'] + 1.400728e-5)
    assert rows[1]['t_allreduce'] < rows[8]['t_allreduce'] < \
        rows[64]['t_allreduce']
    assert 1.0 >= rows[8]['efficiency'] > rows[64]['efficiency'] > 0
    assert rows[8]['efficiency_overlap'] >= rows[8]['efficiency']
    # samples/s = N * batch / t_step, batch 2 from the input
    assert rows[8]['samples_per_s'] == pytest.approx(
        8 * 2 / rows[8]['t_step'])


def test_scaling_report_bad_input():
    cch = _step()
    with pytest.raises(ValueError, match='workers must be ints >= 1'):
        cch.scaling_report([1, 0], device='a100', network='ib-hdr200')
    with pytest.raises(ValueError, match="unknown network 'ib-xdr'"):
        cch.scaling_report([1], device='a100', network='ib-xdr')
    with pytest.raises(ValueError, match='needs a network'):
        cch.scaling_report([1], device='a100')
    with ComputationalCostHook() as forward_only:
        MLP()(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match='no backward'):
        forward_only.scaling_report([1], device='a100', network='ib-edr')


def test_roofline_without_network_is_unchanged():
    cch = _step()
    row = cch.roofline_report(device='a100')['LinearFunction-1']
    assert 't_network' not in row and 'comm_bytes' not in row
    rows = cch.roofline_report(device='a100', network='ib-edr')
    assert rows['LinearFunction-1']['t_network'] == 0.0
    assert rows['total']['t_network'] == 0.0


def _cli(argv, capsys):
    from chainer_computational_cost.__main__ import main
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_scaling_report(capsys):
    # The MLP at batch 2 (input 2x3): 104 bytes of gradients; at 8 workers
    # on ib-hdr200 the all-reduce takes 1.400728e-5 s = 14.007 us.
    status, out, err = _cli(
        ['mpi.mn_models:build_mlp', '--shape', '2,3', '--train',
         '--device', 'a100', '--workers', '1,8', '--network', 'ib-hdr200',
         '--mode', 'csv', '--time-unit', 'us', '--unit', 'raw'], capsys)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[0].startswith('Workers,Comm B,T compute us,T allreduce us')
    assert lines[1].split(',')[:2] == ['1', '104']
    assert lines[2].split(',')[3] == '14.007'


@pytest.mark.parametrize('extra, message', [
    (['--workers', '1,8'], '--workers and --network go together'),
    (['--workers', '1,8', '--network', 'ib-xdr'], "unknown network"),
])
def test_cli_scaling_errors(capsys, extra, message):
    status, out, err = _cli(['mpi.mn_models:build_mlp', '--shape', '2,3',
                             '--train', '--device', 'a100'] + extra,
                            capsys)
    assert status == 2 and message in err and out == ''


def test_cli_bad_workers(capsys):
    with pytest.raises(SystemExit) as e:
        _cli(['mpi.mn_models:build_mlp', '--train', '--workers', '1,0',
              '--network', 'ib-edr'], capsys)
    assert e.value.code == 2 and 'ints >= 1' in capsys.readouterr().err


def test_cli_scaling_needs_train(capsys):
    status, out, err = _cli(['mpi.mn_models:build_mlp', '--shape', '2,3',
                             '--device', 'a100', '--workers', '1',
                             '--network', 'ib-edr'], capsys)
    assert status == 2 and '--workers needs --train' in err


def test_docs_quote_the_worked_example():
    import os
    path = os.path.join(os.path.dirname(__file__), os.pardir, 'docs',
                        'chainermn.md')
    with open(path) as f:
        text = f.read()
    # test_scaling_report_worked_example checks the figure; the page's
    # block that prints it runs in test_docs.py.
    assert '# 104 14.00728\n' in text
    assert '14e-6 = 1.400728e-5 s' in text


def test_scaling_report_on_a_projection():
    from chainer_computational_cost import project_batch
    model = MLP()

    def run(n):
        F.sum(model(np.zeros((n, 3), np.float32))).backward()
    rows = project_batch(run, 64).scaling_report(
        [1, 8], device='a100', network='ib-hdr200')
    # The projection's batch: 64 samples per worker; the gradients do not
    # depend on it (104 bytes).
    assert rows[8]['comm_bytes'] == 104
    assert rows[8]['samples_per_s'] == pytest.approx(
        8 * 64 / rows[8]['t_step'])


def test_network_names_in_any_case():
    # as device names: 'IB-HDR200' is the 200 Gb/s preset, 25 GB/s
    assert network.resolve_network('IB-HDR200').bandwidth == 25e9
    with pytest.raises(ValueError, match="unknown network 'ib-xdr'"):
        network.resolve_network('ib-xdr')
