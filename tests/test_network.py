"""Network presets, the alpha-beta times of MPI calls, t_network in the
roofline report and scaling_report."""

import chainer
import chainer.functions as F
import chainer.links as L
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
    # docs/chainermn.md's worked example.  The MLP 3-4-2 has
    # 3*4 + 4 + 4*2 + 2 = 26 parameters: 104 bytes of float32 gradients.
    # On ib-hdr200 (25e9 B/s, 1e-6 s) the ring all-reduce over 8 workers
    # takes
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
    assert '```text\n104 14.00728\n```' in text
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


class _Embed(chainer.Chain):
    """Token ids -> EmbedID(1000, 64) -> Linear(64, 10): 1000*64 = 64,000
    plus 64*10 + 10 = 650: 64,650 parameters."""

    def __init__(self):
        super(_Embed, self).__init__()
        with self.init_scope():
            self.embed = L.EmbedID(1000, 64)
            self.out = L.Linear(64, 10)

    def forward(self, ids):
        return self.out(self.embed(ids))


@pytest.mark.parametrize('dtype, expected', [
    # 64,650 gradients of 2, 4 and 8 bytes
    ('float16', 129300), ('float32', 258600), ('float64', 517200)])
def test_gradient_bytes_have_the_parameters_dtype(dtype, expected):
    with chainer.using_config('dtype', np.dtype(dtype)):
        model = _Embed()
    ids = np.array([1, 2, 3], np.int32)  # int32: not the gradients'
    with ComputationalCostHook() as cch:
        F.sum(model(ids)).backward()
    rows = cch.scaling_report([1, 2], device='a100', network='ib-edr')
    assert rows[2]['comm_bytes'] == expected
    # ring all-reduce over 2 workers on ib-edr (12.5e9 B/s, 1e-6 s):
    # 2*1/2 * S/12.5e9 + 2*1 * 1e-6
    assert rows[2]['t_allreduce'] == pytest.approx(
        expected / 12.5e9 + 2e-6, rel=1e-12)


def test_gradient_bytes_of_mixed_dtypes():
    # EmbedID(10, 4) in float16: 40 * 2 = 80 bytes; Linear(4, 2) in
    # float32: (8 + 2) * 4 = 40 bytes; 120 in all.
    class Mixed(chainer.Chain):
        def __init__(self):
            super(Mixed, self).__init__()
            with self.init_scope():
                with chainer.using_config('dtype', np.float16):
                    self.embed = L.EmbedID(10, 4)
                self.out = L.Linear(4, 2)

        def forward(self, ids):
            return self.out(F.cast(self.embed(ids), np.float32))
    model = Mixed()
    with ComputationalCostHook() as cch:
        F.sum(model(np.array([1, 2], np.int32))).backward()
    rows = cch.scaling_report([4], device='a100', network='ib-edr')
    assert rows[4]['comm_bytes'] == 120


@pytest.mark.parametrize('kwargs, error, message', [
    ({'batch_size': -3}, ValueError, r"batch_size must be an int >= 1 "
     r"\(samples per worker\) or None, got -3$"),
    ({'batch_size': 0}, ValueError, 'got 0$'),
    ({'batch_size': 'x'}, TypeError, "batch_size must be an int >= 1 "
     r"\(samples per worker\) or None, got 'x'$"),
    ({'batch_size': 2.5}, TypeError, 'got 2.5$'),
    ({'batch_size': True}, TypeError, 'got True$'),
    ({'workers': []}, ValueError, r'workers must be ints >= 1 \(one int '
     r'or an iterable of them\), got \[\]$'),
    ({'workers': '8'}, ValueError, r"got \['8'\]$"),
    ({'workers': [1, 2.0]}, ValueError, r'got \[2.0\]$'),
    ({'workers': [True]}, ValueError, r'got \[True\]$'),
    ({'workers': None}, ValueError, r'got \[None\]$'),
    ({'workers': -1}, ValueError, r'got \[-1\]$'),
])
def test_scaling_report_argument_checks(kwargs, error, message):
    args = dict(workers=[1, 8], device='a100', network='ib-edr')
    args.update(kwargs)
    with pytest.raises(error, match=message):
        _step().scaling_report(**args)


def test_scaling_report_reads_workers_once():
    # a generator, a range, a tuple, a NumPy int: each worker count once
    cch = _step()
    for workers in ((n for n in [1, 8]), range(1, 9, 7), (1, 8),
                    [np.int64(1), 8]):
        rows = cch.scaling_report(workers, device='a100',
                                  network='ib-edr', batch_size=3)
        assert list(rows) == [1, 8]
        assert type(rows[1]['workers']) is int
        # samples/s: 8 workers * 3 samples / t_step
        assert rows[8]['samples_per_s'] == pytest.approx(
            24 / rows[8]['t_step'], rel=1e-12)
    rows = cch.scaling_report(4, device='a100', network='ib-edr')
    assert list(rows) == [4]


NET = network.Network('t', 't', 1e9, 1e-6)  # 1 GB/s, 1 us


@pytest.mark.parametrize('kind, n, expected', [
    # S = 1e6 B: S/B = 1e-3 s, a = 1e-6 s.
    # tree reduce, N=5: ceil(log2 5) = 3 steps of (1e-6 + 1e-3)
    ('MPI_Reduce', 5, 3.003e-3),
    ('MPI_reduce_obj', 5, 3.003e-3),
    # tree broadcast, N=8: 3 steps; N=2: 1 step
    ('MPI_Bcast', 8, 3.003e-3),
    ('MPI_Bcast', 2, 1.001e-3),
    # gather to the root, N=5: 3 * 1e-6 + 4 * 1e-3
    ('MPI_Gather', 5, 4.003e-3),
    ('MPI_gather_obj', 5, 4.003e-3),
    # scatter and all-to-all, N=4: 3 * 1e-6 + 3/4 * 1e-3
    ('MPI_Scatter', 4, 7.53e-4),
    ('MPI_scatter_obj', 4, 7.53e-4),
    ('MPI_Alltoall', 4, 7.53e-4),
    ('MPI_alltoall_obj', 4, 7.53e-4),
    # ring all-gather, N=4: 3 * (1e-6 + 1e-3)
    ('MPI_allgather_obj', 4, 3.003e-3),
    # ring all-reduce, N=2: 2*1/2 * 1e-3 + 2 * 1e-6
    ('MPI_allreduce_obj', 2, 1.002e-3),
    # point to point: 1e-6 + 1e-3, whatever N
    ('MPI_Recv', 4, 1.001e-3),
    ('MPI_send_obj', 2, 1.001e-3),
])
def test_every_collective_by_hand(kind, n, expected):
    assert network.collective_time(kind, 10 ** 6, n, NET) == \
        pytest.approx(expected, rel=1e-12)
    # one rank: no network
    assert network.collective_time(kind, 10 ** 6, 1, NET) == 0.0


def test_t_network_rows_by_hand():
    layers = [
        {'name': 'ReLU-1', 'type': 'ReLU', 'params': {}},
        {'name': 'MPI_Allreduce-1', 'type': 'MPI_Allreduce',
         'comm_bytes': 10 ** 6, 'params': {'n_ranks': 4}},
        # an MPI call that sent nothing still waits: 2 tree steps of 1 us
        {'name': 'MPI_Bcast-1', 'type': 'MPI_Bcast', 'comm_bytes': 0,
         'params': {'n_ranks': 4}},
    ]
    rows = {x['name']: {} for x in layers}
    rows['total'] = {}
    assert network.add_t_network(rows, layers, NET) is rows
    # all-reduce, N=4: 2*3/4 * 1e-3 + 6 * 1e-6 = 1.506e-3
    assert rows['ReLU-1'] == {'comm_bytes': 0, 't_network': 0.0}
    assert rows['MPI_Allreduce-1']['t_network'] == pytest.approx(
        1.506e-3, rel=1e-12)
    assert rows['MPI_Bcast-1']['t_network'] == pytest.approx(
        2e-6, rel=1e-12)
    assert rows['total']['comm_bytes'] == 10 ** 6
    assert rows['total']['t_network'] == pytest.approx(1.508e-3,
                                                       rel=1e-12)


def _worked_step():
    """Forward 3 + 2 us, backward 4 us of roofline time; the backward
    all-reduces 600 + 400 gradient bytes (a forward all-reduce does not
    count)."""
    layers = [
        {'name': 'A', 'type': 'LinearFunction', 'phase': 'forward'},
        {'name': 'B', 'type': 'ReLU', 'phase': 'forward'},
        {'name': 'M0', 'type': 'MPI_Allreduce', 'phase': 'forward',
         'comm_bytes': 5000},
        {'name': 'C', 'type': 'LinearGradWeight', 'phase': 'backward'},
        {'name': 'M1', 'type': 'MPI_Allreduce', 'phase': 'backward',
         'comm_bytes': 600},
        {'name': 'M2', 'type': 'MPI_Allreduce', 'phase': 'backward',
         'comm_bytes': 400},
    ]
    rows = {'A': {'t_roofline': 3e-6}, 'B': {'t_roofline': 2e-6},
            'C': {'t_roofline': 4e-6}}
    return layers, rows


def test_scaling_figures_by_hand():
    layers, rows = _worked_step()
    report = network.scaling_report(layers, rows, 26, [1, 2, 4], NET, 3)
    # t_compute = 3 + 2 + 4 = 9 us; 1000 gradient bytes (600 + 400).
    # N=2: t_ar = 2*1/2 * 1000/1e9 + 2*1 * 1e-6 = 1e-6 + 2e-6 = 3 us;
    #   t_step = 12 us; overlap: 5 + max(4, 3) = 9 us;
    #   efficiency 9/12 = 0.75, with overlap 9/9 = 1.
    # N=4: t_ar = 2*3/4 * 1e-6 + 6e-6 = 7.5 us; t_step = 16.5 us;
    #   overlap: 5 + max(4, 7.5) = 12.5 us; efficiency 9/16.5, 9/12.5 =
    #   0.72; samples/s = 4 * 3 / 16.5e-6.
    expected = {
        1: (0.0, 9e-6, 9e-6, 1.0, 1.0, 3 / 9e-6),
        2: (3e-6, 12e-6, 9e-6, 0.75, 1.0, 6 / 12e-6),
        4: (7.5e-6, 16.5e-6, 12.5e-6, 9 / 16.5, 0.72, 12 / 16.5e-6)}
    assert list(report) == [1, 2, 4]
    for n, (t_ar, t_step, t_overlap, eff, eff_overlap, sps) in \
            expected.items():
        row = report[n]
        assert list(row) == list(network.SCALING_COLUMNS)
        assert row['workers'] == n and row['comm_bytes'] == 1000
        assert row['t_compute'] == pytest.approx(9e-6, rel=1e-12)
        got = (row['t_allreduce'], row['t_step'], row['t_step_overlap'],
               row['efficiency'], row['efficiency_overlap'],
               row['samples_per_s'])
        assert got == pytest.approx(
            (t_ar, t_step, t_overlap, eff, eff_overlap, sps), rel=1e-12,
            abs=0), n


def test_scaling_gradient_bytes_sources():
    layers, rows = _worked_step()
    local = [x for x in layers if not x['type'].startswith('MPI_')]

    def comm(layers, *args, **kwargs):
        return network.scaling_report(layers, rows, *args, **kwargs)[2][
            'comm_bytes']
    # given grad_bytes wins over the recorded 1000
    assert comm(layers, 26, [2], NET, 3, grad_bytes=7) == 7
    # no record: the parameters' bytes, else 26 float32 = 104
    assert comm(local, 26, [2], NET, 3, param_bytes=52) == 52
    assert comm(local, 26, [2], NET, 3) == 104
    # without a batch size, no samples/s
    assert network.scaling_report(local, rows, 26, [2], NET, None)[2][
        'samples_per_s'] is None
    with pytest.raises(ValueError, match='parameter count is unknown'):
        comm(local, None, [2], NET, 3)
    with pytest.raises(ValueError, match='grad_bytes must be an int >= 0'):
        comm(local, 26, [2], NET, 3, grad_bytes=-1)
    with pytest.raises(ValueError, match='no backward'):
        comm(local[:2], 26, [2], NET, 3)


def test_scaling_function_checks_its_own_arguments():
    # network.scaling_report is public: it checks what the method checks.
    layers, rows = _worked_step()
    with pytest.raises(ValueError, match='workers must be ints >= 1'):
        network.scaling_report(layers, rows, 26, [0], NET, 3)
    with pytest.raises(ValueError, match='batch_size must be an int >= 1'):
        network.scaling_report(layers, rows, 26, [2], NET, -3)
    with pytest.raises(TypeError, match='batch_size must be an int >= 1'):
        network.scaling_report(layers, rows, 26, [2], NET, 'x')
    # a generator of workers, read once
    assert list(network.scaling_report(layers, rows, 26, iter([1, 2]),
                                       NET, 3)) == [1, 2]
