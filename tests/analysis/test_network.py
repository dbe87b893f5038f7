"""Network presets, the alpha-beta times of MPI calls, t_network in the
roofline report, a network file's round trip and the figures of
scaling_report, worked by hand.

Equivalent within its stated accuracy (1e-6): ``range(-9000, 9000)`` for
``range(-9000, 9001)`` in ``expected_max_normal`` drops the point x = 9,
whose ``x * n * phi(x) * h`` is about 1e-20 * n.  ``min(window, end)``
for ``min(end, window)`` in ``_overlap``: the same number.
"""

import json
import pickle
import re

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.analysis import network
from chainer_computational_cost.core import devices

from mpi.mn_models import MLP
from helpers import mlp_step
from cli_runs import error_of
from cli_runs import run
from helpers import bucketed_step


def test_presets_in_bytes_per_second():
    # 200 Gb/s / 8 = 25 GB/s; 25 Gb/s / 8 = 3.125 GB/s; NVLink 3: 600 GB/s
    # both ways, 300 one way.
    assert devices.NETWORKS['ib-hdr200'].bandwidth == 25e9
    assert devices.NETWORKS['ib-edr'].bandwidth == 12.5e9
    assert devices.NETWORKS['ib-ndr'].bandwidth == 50e9
    assert devices.NETWORKS['eth-25g'].bandwidth == 3.125e9
    assert devices.NETWORKS['eth-100g'].latency == 10e-6
    assert devices.NETWORKS['nvlink-a100'].bandwidth == 300e9


def test_collective_times_by_hand():
    net = devices.Network('t', 't', 1e9, 1e-6)
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
    rows = mlp_step().scaling_report([1, 8, 64], device='a100',
                                     network='ib-hdr200', model='bound')
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
    cch = mlp_step()
    with pytest.raises(ValueError, match='workers must be ints >= 1'):
        cch.scaling_report([1, 0], device='a100', network='ib-hdr200',
                           model='bound')
    with pytest.raises(ValueError, match="unknown network 'ib-xdr'"):
        cch.scaling_report([1], device='a100', network='ib-xdr', model='bound')
    with pytest.raises(ValueError, match='needs a network'):
        cch.scaling_report([1], device='a100', model='bound')
    with ComputationalCostHook() as forward_only:
        MLP()(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match='no backward'):
        forward_only.scaling_report([1], device='a100', network='ib-edr',
                                    model='bound')


def test_roofline_without_network_is_unchanged():
    cch = mlp_step()
    row = cch.roofline_report(device='a100')['LinearFunction-1']
    assert 't_network' not in row and 'comm_bytes' not in row
    rows = cch.roofline_report(device='a100', network='ib-edr')
    assert rows['LinearFunction-1']['t_network'] == 0.0
    assert rows['total']['t_network'] == 0.0


def _cli(argv, capsys):
    status, out = run(*argv)
    return status, out, capsys.readouterr().err


def test_cli_scaling_report(capsys):
    # The MLP at batch 2 (input 2x3): 104 bytes of gradients; at 8 workers
    # on ib-hdr200 the all-reduce takes 1.400728e-5 s = 14.007 us.
    status, out, err = _cli(
        ['mpi.mn_models:build_mlp', '--shape', '2,3', '--train',
         '--device', 'a100', '--workers', '1,8', '--network', 'ib-hdr200',
         '--mode', 'csv', '--time-unit', 'us', '--unit', 'raw',
         '--scaling-model', 'bound'], capsys)
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
    err = error_of(capsys, 'mpi.mn_models:build_mlp', '--train',
                   '--workers', '1,0', '--network', 'ib-edr')
    assert 'ints >= 1' in err


def test_cli_scaling_needs_train(capsys):
    status, out, err = _cli(['mpi.mn_models:build_mlp', '--shape', '2,3',
                             '--device', 'a100', '--workers', '1',
                             '--network', 'ib-edr'], capsys)
    assert status == 2 and '--workers needs --train' in err


def test_docs_quote_the_worked_example():
    import os
    path = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                        'docs', 'chainermn.md')
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
        [1, 8], device='a100', network='ib-hdr200', model='bound')
    # The projection's batch: 64 samples per worker; the gradients do not
    # depend on it (104 bytes).
    assert rows[8]['comm_bytes'] == 104
    assert rows[8]['samples_per_s'] == pytest.approx(
        8 * 64 / rows[8]['t_step'])


def test_network_names_in_any_case():
    # as device names: 'IB-HDR200' is the 200 Gb/s preset, 25 GB/s
    assert devices.resolve_network('IB-HDR200').bandwidth == 25e9
    with pytest.raises(ValueError, match="unknown network 'ib-xdr'"):
        devices.resolve_network('ib-xdr')


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
    rows = cch.scaling_report([1, 2], device='a100', network='ib-edr',
                              model='bound')
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
    rows = cch.scaling_report([4], device='a100', network='ib-edr',
                              model='bound')
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
        mlp_step().scaling_report(**args, model='bound')


def test_scaling_report_reads_workers_once():
    # a generator, a range, a tuple, a NumPy int: each worker count once
    cch = mlp_step()
    for workers in ((n for n in [1, 8]), range(1, 9, 7), (1, 8),
                    [np.int64(1), 8]):
        rows = cch.scaling_report(workers, device='a100',
                                  network='ib-edr', batch_size=3,
                                  model='bound')
        assert list(rows) == [1, 8]
        assert type(rows[1]['workers']) is int
        # samples/s: 8 workers * 3 samples / t_step
        assert rows[8]['samples_per_s'] == pytest.approx(
            24 / rows[8]['t_step'], rel=1e-12)
    rows = cch.scaling_report(4, device='a100', network='ib-edr',
                              model='bound')
    assert list(rows) == [4]


NET = devices.Network('t', 't', 1e9, 1e-6)  # 1 GB/s, 1 us


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
         'comm_bytes': 600, 'params': {'call': 'multi_node_mean_grad'}},
        {'name': 'M2', 'type': 'MPI_Allreduce', 'phase': 'backward',
         'comm_bytes': 400, 'params': {'call': 'multi_node_mean_grad'}},
    ]
    rows = {'A': {'t_roofline': 3e-6}, 'B': {'t_roofline': 2e-6},
            'C': {'t_roofline': 4e-6}}
    return layers, rows


def test_scaling_figures_by_hand():
    layers, rows = _worked_step()
    report = network.scaling_report(layers, rows, 26, [1, 2, 4], NET, 3,
                                    model='bound')
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
        return network.scaling_report(layers, rows, *args, **kwargs,
                                      model='bound')[2][
            'comm_bytes']
    # given grad_bytes wins over the recorded 1000
    assert comm(layers, 26, [2], NET, 3, grad_bytes=7) == 7
    # no record: the parameters' bytes, else 26 float32 = 104
    assert comm(local, 26, [2], NET, 3, param_bytes=52) == 52
    assert comm(local, 26, [2], NET, 3) == 104
    # without a batch size, no samples/s
    assert network.scaling_report(local, rows, 26, [2], NET, None,
                                  model='bound')[2][
        'samples_per_s'] is None
    with pytest.raises(ValueError, match='parameter count is unknown'):
        comm(local, None, [2], NET, 3)
    with pytest.raises(ValueError, match='grad_bytes must be an int >= 0'):
        comm(local, 26, [2], NET, 3, grad_bytes=-1)
    with pytest.raises(ValueError, match='no backward'):
        comm(local[:2], 26, [2], NET, 3)


def test_gradient_bytes_are_the_gradient_all_reduces_only():
    # A step with MultiNodeBatchNormalization: its forward and backward
    # all-reduce statistics (_multi_node_mean, 64 and 96 bytes, the
    # backward one in the backward phase), a user's own all-reduce in the
    # backward pass (8 bytes); the gradients: 600 + 400 bytes, Chainer 7's
    # multi_node_mean_grad and Chainer 6's allreduce_grad.
    def allreduce(phase, call, nbytes):
        return {'name': 'M', 'type': 'MPI_Allreduce', 'phase': phase,
                'comm_bytes': nbytes, 'params': {'call': call,
                                                 'n_ranks': 2}}
    layers = [allreduce('forward', '_multi_node_mean', 64),
              allreduce('backward', '_multi_node_mean', 96),
              allreduce('backward', 'my_backward', 8),
              allreduce('backward', 'multi_node_mean_grad', 600),
              allreduce('backward', 'allreduce_grad', 400),
              # bytes that could not be counted: params None
              dict(allreduce('backward', '', 0), params=None)]
    assert network.gradient_bytes(layers) == 1000  # 600 + 400
    # no gradient all-reduce recorded: the parameters' bytes
    assert network.gradient_bytes(layers[:3], param_bytes=52) == 52


def test_scaling_function_checks_its_own_arguments():
    # network.scaling_report is public: it checks what the method checks.
    layers, rows = _worked_step()
    with pytest.raises(ValueError, match='workers must be ints >= 1'):
        network.scaling_report(layers, rows, 26, [0], NET, 3, model='bound')
    with pytest.raises(ValueError, match='batch_size must be an int >= 1'):
        network.scaling_report(layers, rows, 26, [2], NET, -3, model='bound')
    with pytest.raises(TypeError, match='batch_size must be an int >= 1'):
        network.scaling_report(layers, rows, 26, [2], NET, 'x', model='bound')
    # a generator of workers, read once
    assert list(network.scaling_report(layers, rows, 26, iter([1, 2]),
                                       NET, 3, model='bound')) == [1, 2]


# How it really scales: step_time, overlap modes, buckets, hierarchy,
# jitter (issue 35).

NET_MS = devices.Network('ms', 'ms', 1e9, 1e-4)  # 1 GB/s, 0.1 ms


def _modes(overlap, n=2, **kwargs):
    layers, rows = bucketed_step()
    kwargs.setdefault('link_bytes', {'/a': 6 * 10 ** 6, '/b': 4 * 10 ** 6})
    return network.scaling_report(
        layers, rows, None, [1, n], NET_MS, 8, grad_bytes=10 ** 7,
        overlap=overlap, **kwargs, model='bound')[n]


# t_compute = 3 + 4 + 2 + 1 = 10 ms.  Over 2 workers an all-reduce of S
# bytes takes 2*1/2 * S/1e9 + 2 * 0.1 ms = S/1e9 s + 0.2 ms; all 1e7
# bytes: 10.2 ms.
@pytest.mark.parametrize('overlap, kwargs, exposed, n_buckets', [
    # after the backward: all of it
    ('none', {}, 10.2e-3, 1),
    # during the next step (10 ms of compute): 10.2 - 10 = 0.2 ms
    ('chainermn-double-buffering', {}, 0.2e-3, 1),
    # /b ready at 3 + 4 = 7 ms, /a at 9 ms.  Buckets of 4e6 (the first
    # capped at 1 MiB): [/b] closes at 4e6 >= 1 MiB, [/a] at 6e6 >= 4e6.
    # /b: 7 -> 7 + 4.2 = 11.2 ms; /a: max(9, 11.2) + 6.2 = 17.4 ms;
    # the backward ends at 9 ms: 8.4 ms exposed.
    ('ddp', {'bucket_bytes': 4 * 10 ** 6}, 8.4e-3, 2),
    # Default 25 MiB buckets, the first 1 MiB: /b (4e6 >= 1 MiB) alone,
    # then /a: the same two all-reduces.
    ('ddp', {}, 8.4e-3, 2),
    # Horovod: cycles every 5 ms from the backward's start (3 ms).  At
    # 3 ms nothing is ready; at 8 ms /b is: 8 + 4.2 = 12.2 ms; the next
    # cycle at max(8 + 5, 12.2) = 13 ms takes /a (6e6 > 5e6: alone):
    # 13 + 6.2 = 19.2 ms; 19.2 - 9 = 10.2 ms exposed.
    ('horovod', {'bucket_bytes': 5 * 10 ** 6}, 10.2e-3, 2),
    # 64 MiB would fuse both, but they are ready in different cycles.
    ('horovod', {}, 10.2e-3, 2),
    # /b holds 8e6 bytes, /a 2e6: /b from 8 ms to 8 + 8.2 = 16.2 ms, past
    # the next cycle (13 ms): that cycle starts when it ends, 16.2 + 2.2
    # = 18.4 ms; 9.4 ms exposed.
    ('horovod', {'link_bytes': {'/a': 2e6, '/b': 8e6}}, 9.4e-3, 2),
])
def test_overlap_modes_by_hand(overlap, kwargs, exposed, n_buckets):
    row = _modes(overlap, **kwargs)
    assert row['t_exposed_comm'] == pytest.approx(exposed, rel=1e-9)
    assert row['n_buckets'] == n_buckets
    assert row['t_compute'] == pytest.approx(10e-3, rel=1e-12)
    assert row['t_step'] == pytest.approx(10e-3 + exposed, rel=1e-9)
    assert row['efficiency'] == pytest.approx(
        10e-3 / (10e-3 + exposed), rel=1e-9)
    # samples/s: 2 workers * 8 samples / t_step
    assert row['samples_per_s'] == pytest.approx(
        16 / (10e-3 + exposed), rel=1e-9)
    # the old columns keep their meaning: one all-reduce of all 1e7
    # bytes, and the perfect-overlap bound 4 + max(6, 10.2) = 14.2 ms
    assert row['t_allreduce'] == pytest.approx(10.2e-3, rel=1e-12)
    assert row['t_step_overlap'] == pytest.approx(14.2e-3, rel=1e-12)
    assert row['step_from'] == 'roofline' and row['t_jitter'] == 0.0


def test_ddp_buckets_fill_in_ready_order():
    # Three links ready at 7, 8 and 9 ms (backward records of 4, 1 and
    # 1 ms), 2e6 bytes each, buckets of 3e6 (the first 1 MiB): [c]
    # (2e6 >= 1 MiB) at 7 ms, then [b, a] (4e6 >= 3e6) at 9 ms.
    layers = [
        {'name': 'F', 'type': 'LinearFunction', 'phase': 'forward'},
        {'name': 'C', 'type': 'X', 'phase': 'backward', 'link': '/c'},
        {'name': 'B', 'type': 'X', 'phase': 'backward', 'link': '/b'},
        {'name': 'A', 'type': 'X', 'phase': 'backward', 'link': '/a'}]
    rows = {'F': {'t_roofline': 3e-3}, 'C': {'t_roofline': 4e-3},
            'B': {'t_roofline': 1e-3}, 'A': {'t_roofline': 1e-3}}
    row = network.scaling_report(
        layers, rows, None, [2], NET_MS, 1, grad_bytes=6 * 10 ** 6,
        overlap='ddp', bucket_bytes=3 * 10 ** 6,
        link_bytes={'/a': 2e6, '/b': 2e6, '/c': 2e6}, model='bound')[2]
    # [c]: 7 + 2 + 0.2 = 9.2 ms; [b, a]: max(9, 9.2) + 4 + 0.2 = 13.4 ms;
    # the backward ends at 9 ms: 4.4 ms exposed.
    assert row['n_buckets'] == 2
    assert row['t_exposed_comm'] == pytest.approx(4.4e-3, rel=1e-9)


def test_step_time_is_spread_over_the_calls():
    # step_time 20 ms over roofline shares 3:4:2:1: every call doubles;
    # without overlap the all-reduce (10.2 ms) follows a 20 ms step.
    row = _modes('none', step_time=0.02)
    assert row['t_compute'] == pytest.approx(0.02, rel=1e-12)
    assert row['efficiency'] == pytest.approx(20 / 30.2, rel=1e-9)
    assert row['step_from'] == 'step_time'
    # DDP: /b ready at 6 + 8 = 14 ms, /a at 18 ms: /b ends 18.2 ms, /a
    # max(18, 18.2) + 6.2 = 24.4 ms; the backward ends at 18: 6.4 ms.
    row = _modes('ddp', step_time=0.02)
    assert row['t_exposed_comm'] == pytest.approx(6.4e-3, rel=1e-9)


def test_step_time_follows_measured_times():
    # Every call measured 1 s: step_time 20 ms is 5 ms a call.  /b ready
    # at 10 ms, /a at 15 ms; DDP: /b 10 + 4.2 = 14.2 ms, /a max(15, 14.2)
    # + 6.2 = 21.2 ms; 6.2 ms after the backward.
    layers, rows = bucketed_step()
    for r in rows.values():
        r['time'] = 1.0
    row = network.scaling_report(
        layers, rows, None, [2], NET_MS, 8, grad_bytes=10 ** 7,
        step_time=0.02, overlap='ddp',
        link_bytes={'/a': 6e6, '/b': 4e6}, model='bound')[2]
    assert row['t_exposed_comm'] == pytest.approx(6.2e-3, rel=1e-9)


def test_hierarchical_allreduce_by_hand():
    inter = devices.Network('i', 'i', 1e9, 1e-6)
    node = devices.Network('n', 'n', 1e10, 1e-7)
    # 8 workers, 4 a node: reduce and broadcast inside a node, each
    # 1e6/1e10 + 3 * 1e-7 = 1.003e-4 s; a ring over 2 nodes:
    # 2*1/2 * 1e6/1e9 + 2 * 1e-6 = 1.002e-3 s; 1.2026e-3 s in all.
    assert network.allreduce_time(10 ** 6, 8, inter, 4, node) == \
        pytest.approx(1.2026e-3, rel=1e-12)
    # 3 workers in one node: a ring on the node's network,
    # 2*2/3 * 1e-4 + 4 * 1e-7 s
    assert network.allreduce_time(10 ** 6, 3, inter, 4, node) == \
        pytest.approx(4 / 3 * 1e-4 + 4e-7, rel=1e-12)
    # one GPU a node: the flat ring, 2*7/8 * 1e-3 + 14e-6
    assert network.allreduce_time(10 ** 6, 8, inter) == \
        pytest.approx(1.764e-3, rel=1e-12)
    # 9 workers, 4 a node: 3 nodes (the last one partly filled)
    # 2 * 1.003e-4 + 2*2/3 * 1e-3 + 4e-6
    assert network.allreduce_time(10 ** 6, 9, inter, 4, node) == \
        pytest.approx(2.006e-4 + 4 / 3 * 1e-3 + 4e-6, rel=1e-12)
    row = _modes('none', n=8, gpus_per_node=4, node_network=node,
                 link_bytes=None)
    # the report's t_allreduce: 1e7 bytes, the same formula:
    # 2 * (1e7/1e10 + 3e-7) + (2*1/2 * 1e7/1e9 + 2 * 1e-4)
    assert row['t_allreduce'] == pytest.approx(
        2 * (1e-3 + 3e-7) + 1e-2 + 2e-4, rel=1e-12)


def test_expected_maximum_of_normals():
    # closed forms: E[max of 2] = 1/sqrt(pi), E[max of 3] =
    # 3/(2 sqrt(pi)) (order statistics of the standard normal)
    import math
    assert network.expected_max_normal(1) == 0.0
    assert network.expected_max_normal(2) == pytest.approx(
        1 / math.sqrt(math.pi), abs=1e-6)
    assert network.expected_max_normal(3) == pytest.approx(
        3 / (2 * math.sqrt(math.pi)), abs=1e-6)
    # Beyond about 1e16 workers Phi(x) rounded to 1 and the maximum grew
    # as n (69.2 at 1e17, 6.9e4 at 1e20).  The figures: mpmath 1.3.0 at 30
    # digits, E[max] = int_0^inf 1 - Phi^n dx - int_-inf^0 Phi^n dx with
    # log Phi(x) = log1p(-ncdf(-x)); each below sqrt(2 ln n).
    for n, expected in [(10 ** 15, 8.01114072277874),
                        (10 ** 20, 9.32280093604743),
                        (10 ** 100, 21.3004259152264),
                        (10 ** 400, 42.8236904273871)]:
        assert network.expected_max_normal(n) == pytest.approx(
            expected, abs=1e-6)
        assert expected < math.sqrt(2 * math.log(n))
    # jitter 0.1 on a 10 ms step over 2 workers: 0.1 * 10 ms / sqrt(pi)
    row = _modes('chainermn-double-buffering', jitter=0.1)
    assert row['t_jitter'] == pytest.approx(1e-3 / math.sqrt(math.pi),
                                            rel=1e-5)
    assert row['t_step'] == pytest.approx(
        10e-3 + 0.2e-3 + row['t_jitter'], rel=1e-12)


def test_own_parameter_bytes_of_links():
    # '/': 100 bytes in all, '/a' 100 of which '/a/b' holds 60
    info = {'/': (1, 25, 100), '/a': (1, 25, 100), '/a/b': (1, 15, 60)}
    assert network.own_param_bytes(info) == {'/a': 40, '/a/b': 60}
    # old two-item entries carry no bytes
    assert network.own_param_bytes({'/': (1, 26)}) == {}


def test_new_arguments_at_their_defaults_change_nothing():
    layers, rows = _worked_step()
    old = network.scaling_report(layers, rows, 26, [1, 2, 4], NET, 3,
                                 model='bound')
    new = network.scaling_report(
        layers, rows, 26, [1, 2, 4], NET, 3, step_time=None,
        overlap='none', bucket_bytes=None, gpus_per_node=1,
        node_network=None, jitter=0.0, model='bound')
    assert old == new


@pytest.mark.parametrize('kwargs, message', [
    ({'overlap': 'nccl'}, "overlap must be one of 'none', "
     "'chainermn-double-buffering', 'ddp', 'horovod', got 'nccl'$"),
    ({'bucket_bytes': 10}, "bucket_bytes goes with overlap='ddp' or "
     "'horovod', not 'none'$"),
    ({'overlap': 'ddp', 'bucket_bytes': 0},
     'bucket_bytes must be an int >= 1, got 0$'),
    ({'step_time': 0}, r'step_time \(seconds\) must be a finite number '
     '> 0, got 0$'),
    ({'step_time': float('nan')}, 'got nan$'),
    ({'step_time': '1'}, "got '1'$"),
    ({'gpus_per_node': 0}, 'gpus_per_node must be an int >= 1, got 0$'),
    ({'gpus_per_node': 2.0}, 'got 2.0$'),
    ({'jitter': -0.1}, 'jitter must be a finite number >= 0, got -0.1$'),
    # named "network", which --network also is
    ({'node_network': 'ib-xdr'}, "unknown node_network 'ib-xdr'"),
    ({'node_network': 5}, '^node_network must be a preset name'),
    # no all-reduce inside a node of one worker: it would change nothing
    ({'node_network': 'nvlink-a100'},
     '^node_network goes with gpus_per_node > 1, not gpus_per_node=1$'),
    ({'measured': {8: 1e-3, 16: 2e-3, 32: 3e-3}},
     r'^measured must be a dict of one or two worker counts > 1 to the '
     r'seconds of a step measured on them, such as \{8: 0.31\}, got '
     r'\{8: 0.001, 16: 0.002, 32: 0.003\}$'),
    ({'measured': {1: 1e-3}}, r'got 1 workers \(one worker is step_time\)$'),
])
def test_new_arguments_are_checked(kwargs, message):
    with pytest.raises(ValueError, match=message):
        mlp_step().scaling_report([1, 8], device='a100', network='ib-edr',
                                  **kwargs, model='bound')


@pytest.mark.parametrize('measured, shown', [
    ({8.0: 1e-3}, '8.0 workers'), ({True: 1e-3}, 'True workers'),
    ([(8, 1e-3)], '[(8, 0.001)]'), (8, 'got 8')])
def test_measured_of_the_wrong_type_is_a_type_error(measured, shown):
    with pytest.raises(TypeError, match=r'^measured must be a dict of one '
                       r'or two worker counts > 1 .*' + re.escape(shown)):
        mlp_step().scaling_report([1, 8], device='a100', network='ib-edr',
                                  measured=measured)


def test_a_step_anchored_on_a_measured_one_splits_as_step_time_does():
    # A hook that timed its calls: step_time spreads a step over the calls
    # by their measured times; a step measured at N=8 scales the same
    # split, so anchoring on the step step_time gives at 8 gives back
    # step_time's rows.
    # Three links, a bucket each: how much of the all-reduce the backward
    # hides depends on the split.
    model = chainer.Sequential(L.Linear(64, 128), F.relu,
                               L.Linear(128, 128), F.relu, L.Linear(128, 10))
    with ComputationalCostHook(measure_time=True) as cch:
        F.sum(model(np.ones((32, 64), np.float32))).backward()
    kwargs = dict(device='a100', network='eth-10g', model='bound',
                  overlap='ddp', bucket_bytes=1)
    given = cch.scaling_report([1, 8, 64], step_time=0.01, **kwargs)
    anchored = cch.scaling_report(
        [1, 8, 64], measured={8: given[8]['t_step']}, **kwargs)
    for n in (1, 8, 64):
        for column in ('t_compute', 't_step', 't_exposed_comm'):
            assert anchored[n][column] == pytest.approx(
                given[n][column], rel=1e-9), (n, column)


def test_a_worker_count_that_overflows_the_ring_is_named():
    # 2 * (2**1023 - 1) = 2**1024 - 2 > 1.8e308: the ring's factor is no
    # float; it is the worker count that grew it, not the batch
    with pytest.raises(ValueError, match=r'\(workers=an int of 308 digits '
                       r'give figures beyond its range\)'):
        mlp_step().scaling_report([1, 2 ** 1023], device='a100',
                                  network='ib-hdr200', batch_size=2)


def test_an_efficiency_below_a_float_s_range_is_an_error():
    # 10**300 workers: 2 * (10**300 - 1) latencies of 1e-6 s, about
    # 2e294 s, over a step of 1e-30 s: 2e324, beyond a float, so the
    # efficiency would be 0.0 for a step that takes time
    with pytest.raises(ValueError, match=r'\(efficiency is 0\.0 at N=an int '
                       r'of 301 digits: step_time=1e-30, workers=an int of '
                       r'301 digits give figures beyond its range\)'):
        mlp_step().scaling_report([1, 10 ** 300], device='a100',
                                  network='ib-hdr200', step_time=1e-30)


def test_overlaps_name_each_mode_once():
    assert network.check_overlaps(('ddp', 'none')) == ['ddp', 'none']
    with pytest.raises(ValueError, match=r"^overlaps names 'ddp' more than "
                       r"once: one curve per mode$"):
        network.check_overlaps(['ddp', 'none', 'ddp'])


def test_report_splits_gradients_over_links():
    # The MLP: l1 holds 64 bytes of float32 parameters, l2 40.  With
    # buckets of 1 byte every link is its own bucket: 2 all-reduces.
    rows = mlp_step().scaling_report([1, 2], device='a100',
                                     network='ib-edr', overlap='ddp',
                                     bucket_bytes=1, model='bound')
    assert rows[2]['n_buckets'] == 2
    assert rows[1]['n_buckets'] == 1 and rows[1]['t_exposed_comm'] == 0


def test_cli_scaling_options(capsys):
    # The MLP (104 gradient bytes, 2 links) at batch 2: 8 workers on
    # ib-hdr200, a measured step of 1 ms, DDP buckets of 1 byte (one a
    # link: 2), no jitter: the step is 1 ms plus what the buckets leave
    # exposed.
    status, out, err = _cli(
        ['mpi.mn_models:build_mlp', '--shape', '2,3', '--train',
         '--device', 'a100', '--workers', '1,8', '--network', 'ib-hdr200',
         '--step-time', '0.001', '--overlap', 'ddp', '--bucket-bytes', '1',
         '--gpus-per-node', '4', '--node-network', 'nvlink-a100',
         '--jitter', '0', '--mode', 'csv', '--time-unit', 'ms',
         '--columns', 'workers,t_compute,n_buckets,step_from'], capsys)
    assert status == 0, err
    assert out.splitlines() == [
        'Workers,T compute ms,# Buckets,Step from', '1,1.0,1,step_time',
        '8,1.0,2,step_time']


@pytest.mark.parametrize('extra, message', [
    (['--overlap', 'ddp'], '--overlap needs --workers and --network'),
    # the options as typed, not scaling_report's keywords
    (['--workers', '1,8', '--network', 'ib-edr', '--bucket-bytes', '5'],
     'error: --bucket-bytes goes with --overlap ddp or horovod, not none'),
    (['--workers', '1,8', '--network', 'ib-edr', '--step-time', '-1'],
     'error: --step-time (seconds) must be a finite number > 0, got -1.0'),
    (['--workers', '1,8', '--network', 'ib-edr', '--overlap', 'ddp',
      '--cycle-time', '0.001'],
     'error: --cycle-time goes with --overlap horovod, not ddp'),
    (['--workers', '1,8', '--network', 'ib-edr', '--gpus-per-node', '0'],
     'error: --gpus-per-node must be an int >= 1, got 0'),
    (['--workers', '1,8', '--network', 'ib-edr', '--accumulation', '0'],
     'error: --accumulation must be an int >= 1 (micro-batches per '
     'all-reduce), got 0'),
    # named "network", which --network also is
    (['--workers', '1,8', '--network', 'ib-edr', '--node-network', 'x'],
     "error: unknown --node-network 'x'; the presets are"),
    (['--workers', '1,8', '--network', 'ib-edr', '--node-network',
      'nvlink-a100'], 'error: --node-network goes with --gpus-per-node > 1, '
     'not --gpus-per-node 1\n'),
    # a float that is not the number typed, as --step-time says it
    (['--workers', '1,8', '--network', 'ib-edr', '--measured', '8=1e-400'],
     "error: argument --measured: the step measured on 8 workers must be a "
     "finite number > 0 (seconds), got '1e-400' (0.0 as a float)"),
    (['--workers', '1,8', '--network', 'ib-edr', '--step-time', '0.001',
      '--measured', '8=0.002', '--measured', '16=0.003'],
     'error: --measured must be one worker count > 1 to the seconds of a '
     'step measured on them, such as 8=0.31 (with --step-time, the step of '
     'one worker, one), got 8=0.002,16=0.003\n'),
])
def test_cli_scaling_option_errors(capsys, extra, message):
    status, out, err = _cli(['mpi.mn_models:build_mlp', '--shape', '2,3',
                             '--train', '--device', 'a100'] + extra,
                            capsys)
    assert status == 2 and message in err and out == '', err


def test_plot_scaling(tmp_path):
    matplotlib = pytest.importorskip('matplotlib')
    path = tmp_path / 's.png'
    fig = mlp_step().plot_scaling(
        str(path), [1, 2, 8], device='a100', network='ib-edr',
        overlaps=['none', 'ddp'], bucket_bytes=64,
        published=[(8, 0.9, 'a run'), (2, 0.95)], title='MLP', model='bound')
    ax = fig.axes[0]
    # two curves of 3 points each, the published points (2 drawn and an
    # empty legend entry), efficiencies as the report gives them
    lines = ax.get_lines()
    assert [list(line.get_xdata()) for line in lines[:2]] == [[1, 2, 8]] * 2
    rows = mlp_step().scaling_report([1, 2, 8], device='a100',
                                     network='ib-edr', model='bound')
    assert list(lines[0].get_ydata()) == [rows[n]['efficiency']
                                          for n in (1, 2, 8)]
    assert [list(line.get_xdata()) for line in lines[2:4]] == [[8], [2]]
    assert ax.get_title() == 'MLP' and ax.get_xscale() == 'log'
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        'none', 'ddp', 'published']
    assert matplotlib.image.imread(str(path)).shape[:2] == (450, 700)
    with pytest.raises(ValueError, match='published points must be'):
        mlp_step().plot_scaling(str(path), [1, 2], device='a100',
                                network='ib-edr', published=[(2,)],
                                model='bound')
    with pytest.raises(ValueError, match='cannot tell the plot format'):
        mlp_step().plot_scaling(str(tmp_path / 's.txt'), [1, 2],
                                device='a100', network='ib-edr', model='bound')


def test_cli_plot_scaling(tmp_path, capsys):
    pytest.importorskip('matplotlib')
    path = tmp_path / 'scaling.png'
    status, out, err = _cli(
        ['mpi.mn_models:build_mlp', '--shape', '2,3', '--train',
         '--device', 'a100', '--workers', '1,8', '--network', 'ib-hdr200',
         '--plot-scaling', str(path)], capsys)
    assert status == 0, err
    assert path.stat().st_size > 0
    status, out, err = _cli(
        ['mpi.mn_models:build_mlp', '--shape', '2,3', '--train',
         '--plot-scaling', str(path)], capsys)
    assert status == 2 and '--plot-scaling needs --workers' in err


def test_gathered_report_passes_the_new_keywords():
    from chainer_computational_cost.report import gathered as mn
    model = MLP()
    parts = []
    for rank, batch in ((0, 2), (1, 6)):
        with ComputationalCostHook() as cch:
            F.sum(model(np.zeros((batch, 3), np.float32))).backward()
        parts.append(mn.rank_part(rank, cch))
    g = mn.GatheredReport(parts)
    rows = g.scaling_report([1, 8], device='a100', network='ib-hdr200',
                            step_time=1e-3, overlap='chainermn-double-'
                            'buffering', model='bound')
    # rank 1 (batch 6) bounds the run; a 1 ms step hides the 14 us
    # all-reduce of 104 bytes entirely
    assert rows[8]['rank'] == 1 and rows[8]['step_from'] == 'step_time'
    assert rows[8]['t_exposed_comm'] == 0.0 and rows[8]['efficiency'] == 1.0


def test_a_network_file_keeps_what_was_measured(tmp_path):
    # netbench saves its measurement's details beside the four fields:
    # they are in the file, in order after them; loading reads the four
    path = str(tmp_path / 'lab.json')
    net = devices.Network('lab', 'our cluster', 2.5e9, 3e-6)
    assert devices.save_network(net, path, n_ranks=4,
                                sizes=[8, 1024]) is net
    with open(path) as f:
        text = f.read()
    # one field a line, indented, for a reader and a diff
    assert text.splitlines()[:3] == ['{', ' "name": "lab",',
                                     ' "title": "our cluster",']
    assert text.endswith('}\n')
    doc = json.loads(text)
    assert list(doc) == ['name', 'title', 'bandwidth', 'latency',
                         'n_ranks', 'sizes']
    assert (doc['n_ranks'], doc['sizes']) == (4, [8, 1024])
    assert devices.load_network(path) == net
    # a path is a network wherever a preset name is
    assert devices.resolve_network(path) == net


@pytest.mark.parametrize('doc, message', [
    ({'name': 'x', 'title': 'x', 'bandwidth': 1e9, 'latency': -1e-6},
     r'Network latency \(seconds\) must be a finite number >= 0, got '
     r'-1e-06'),
    ({'name': 'x', 'title': 'x', 'bandwidth': -1e9, 'latency': 0},
     'bandwidth .* must be a finite number > 0'),
    ({'name': 'x', 'title': 'x', 'bandwidth': 0, 'latency': 0},
     r'Network bandwidth \(bytes/s\) must be a finite number > 0, got 0'),
    ({'name': 'x', 'title': 'x', 'bandwidth': 'inf', 'latency': 0},
     'bandwidth .* must be a finite number > 0'),
    ({'name': 'x', 'title': 'x', 'bandwidth': 1e9, 'latency': 'nan'},
     'latency .* >= 0'),
    ({'name': 'x', 'title': 'x', 'bandwidth': 1e9, 'latency': 'inf'},
     "latency .* >= 0, got 'inf'"),
    ({'name': 'x', 'title': 'x', 'bandwidth': 1e9},
     "is not a network file .*: field 'latency' is missing$"),
    (['x', 'x', 1e9, 0], 'is not a network file .*: it holds a JSON array, '
     'not an object$'),
    # each named as JSON names it
    (1.5, 'it holds a JSON number, not an object$'),
    (7, 'it holds a JSON number, not an object$'),
    ('x', 'it holds a JSON string, not an object$'),
    (True, 'it holds a JSON true or false, not an object$'),
    (None, 'it holds a JSON null, not an object$'),
    ({'name': 'x', 'title': 'x', 'bandwidth': [1], 'latency': 0},
     'bandwidth .* must be a finite number > 0'),
])
def test_a_bad_network_file_is_named(tmp_path, doc, message):
    path = tmp_path / 'bad.json'
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=message):
        devices.load_network(str(path))


def test_a_network_file_with_no_latency_is_allowed(tmp_path):
    # latency 0 is a network (an ideal one); bandwidth 0 is not
    path = str(tmp_path / 'ideal.json')
    devices.save_network(devices.Network('i', 'ideal', 1e9, 0.0), path)
    assert devices.load_network(path).latency == 0.0
    # 1e6 bytes over 2 ranks: 2*1/2 * 1e6/1e9 = 1 ms, no latency
    assert network.collective_time('MPI_Allreduce', 10 ** 6, 2, path) == \
        pytest.approx(1e-3, rel=1e-12)


def test_one_worker_waits_for_no_one():
    # jitter: each step waits for the slowest of N workers; alone, a
    # worker's step is its compute, exactly (t_jitter 0, efficiency 1)
    layers = [{'name': 'F', 'type': 'LinearFunction', 'phase': 'forward'},
              {'name': 'B', 'type': 'LinearGradWeight',
               'phase': 'backward'}]
    rows = {'F': {'t_roofline': 1e-3}, 'B': {'t_roofline': 2e-3}}
    net = devices.Network('t', 't', 1e9, 1e-6)
    report = network.scaling_report(layers, rows, 10, [1], net, 4,
                                    jitter=0.5, model='bound')
    row = report[1]
    assert (row['t_jitter'], row['t_allreduce'], row['t_exposed_comm']) \
        == (0.0, 0.0, 0.0)
    assert row['t_step'] == row['t_compute'] == pytest.approx(3e-3)
    assert row['efficiency'] == 1.0
    # 1 worker * 4 samples / 3 ms
    assert row['samples_per_s'] == pytest.approx(4 / 3e-3, rel=1e-12)


def test_horovod_alone_exposes_nothing():
    # at one worker nothing is all-reduced: no cycle waits, one
    # (empty) all-reduce a step, whatever the overlap
    layers = [{'name': 'F', 'type': 'LinearFunction', 'phase': 'forward'},
              {'name': 'B', 'type': 'LinearGradWeight', 'phase': 'backward',
               'link': '/a'}]
    rows = {'F': {'t_roofline': 1e-3}, 'B': {'t_roofline': 2e-3}}
    net = devices.Network('t', 't', 1e9, 1e-6)
    for overlap in network.OVERLAPS:
        row = network.scaling_report(
            layers, rows, 10, [1], net, 4, overlap=overlap,
            link_bytes={'/a': 40}, model='bound')[1]
        assert (row['t_exposed_comm'], row['n_buckets']) == (0.0, 1)
        assert row['t_step'] == pytest.approx(3e-3, rel=1e-12)


def test_the_root_link_holds_its_own_parameters():
    # '/' 120 bytes in all, of which its child '/a' holds 100 (and '/a/b'
    # 60 of those): the root itself 20, '/a' itself 40
    info = {'/': (1, 30, 120), '/a': (1, 25, 100), '/a/b': (1, 15, 60)}
    assert network.own_param_bytes(info) == {'/': 20, '/a': 40, '/a/b': 60}


def test_allreduce_time_checks_the_gpus_per_node():
    # a public function: 0 GPUs a node is an error, not a flat ring
    net = devices.Network('t', 't', 1e9, 1e-6)
    with pytest.raises(ValueError, match='gpus_per_node must be an int '
                       '>= 1, got 0'):
        network.allreduce_time(10 ** 6, 8, net, gpus_per_node=0)
    # 1e6 bytes over 2 workers, one a node: 2*1/2 * 1e-3 + 2 * 1e-6
    assert network.allreduce_time(10 ** 6, 2, net) == pytest.approx(
        1.002e-3, rel=1e-12)


def test_a_step_time_measured_as_zero_is_spread_by_the_roofline():
    # every call timed 0 s (below the clock's resolution): the measured
    # step_time of 8 ms is spread as the roofline times, 1 : 3, so the
    # forward takes 2 ms and the backward 6; over 2 workers 1e6 gradient
    # bytes take 2*1/2 * 1e6/1e9 + 2 * 1e-6 = 1.002 ms, hidden behind the
    # backward at best: t_step_overlap = 2 + max(6, 1.002) = 8 ms
    layers = [{'name': 'F', 'type': 'LinearFunction', 'phase': 'forward'},
              {'name': 'B', 'type': 'LinearGradWeight',
               'phase': 'backward'}]
    rows = {'F': {'t_roofline': 1e-3, 'time': 0.0},
            'B': {'t_roofline': 3e-3, 'time': 0.0}}
    net = devices.Network('t', 't', 1e9, 1e-6)
    row = network.scaling_report(layers, rows, None, [2], net, 4,
                                 grad_bytes=10 ** 6, step_time=8e-3,
                                 model='bound')[2]
    assert row['t_allreduce'] == pytest.approx(1.002e-3, rel=1e-12)
    assert row['t_step_overlap'] == pytest.approx(8e-3, rel=1e-12)
    assert row['t_step'] == pytest.approx(9.002e-3, rel=1e-12)


@pytest.mark.parametrize('workers, shown', [
    ('16', r"\['16'\]"), (b'16', r"\[b'16'\]"), ([4, '8'], r"\['8'\]"),
    ([2, 0, -1], r'\[0, -1\]')])
def test_bad_workers_are_shown_as_given(workers, shown):
    # a string is one bad value, not its characters; only the bad ones
    # are named
    with pytest.raises(ValueError, match=r'^workers must be ints >= 1 '
                       r'\(one int or an iterable of them\), got ' + shown +
                       '$'):
        network.check_workers(workers)


@pytest.mark.parametrize('grad_bytes', [True, 2.5, -1, '8'])
def test_gradient_bytes_must_be_a_count(grad_bytes):
    layers = [{'name': 'B', 'type': 'LinearGradWeight', 'phase': 'backward'}]
    rows = {'B': {'t_roofline': 1e-3}}
    with pytest.raises(ValueError, match=r'^grad_bytes must be an int >= '
                       r'0, got {!r}$'.format(grad_bytes).replace('.', r'\.')):
        network.scaling_report(layers, rows, 10, [2], 'ib-edr', 4,
                               grad_bytes=grad_bytes, model='bound')
    # 0 bytes: nothing to all-reduce but the latency, 2 * 1 us on ib-edr
    row = network.scaling_report(layers, rows, 10, [2], 'ib-edr', 4,
                                 grad_bytes=0, model='bound')[2]
    assert row['t_allreduce'] == pytest.approx(2e-6, rel=1e-12)
    # and so under every overlap: DDP too makes one all-reduce (one bucket
    # of no bytes) after the backward, which it cannot hide
    for overlap in ('ddp', 'horovod', 'none'):
        row = network.scaling_report(layers, rows, 10, [2], 'ib-edr', 4,
                                     grad_bytes=0, model='bound',
                                     overlap=overlap)[2]
        assert row['n_buckets'] == 1, overlap
        assert row['t_exposed_comm'] >= 2e-6 * (1 - 1e-9), overlap
        assert row['efficiency'] <= row['efficiency_overlap'], overlap


def test_a_step_that_takes_no_time_is_fully_efficient():
    # a step whose calls cost nothing on the device (views, no FLOPs):
    # alone, nothing is lost, efficiency 1 and no samples/s to give; over
    # 2 workers, 0 gradient bytes still wait 2 * 1 us of latency: all of
    # the step is waiting, efficiency 0
    layers = [{'name': 'F', 'type': 'Reshape', 'phase': 'forward'},
              {'name': 'B', 'type': 'Reshape', 'phase': 'backward'}]
    rows = {'F': {'t_roofline': 0.0}, 'B': {'t_roofline': 0.0}}
    net = devices.Network('t', 't', 1e9, 1e-6)
    report = network.scaling_report(layers, rows, 0, [1, 2], net, 4,
                                    model='bound')
    alone, two = report[1], report[2]
    assert (alone['t_step'], alone['efficiency'],
            alone['efficiency_overlap'], alone['samples_per_s']) == (
        0.0, 1.0, 1.0, None)
    assert two['t_step'] == pytest.approx(2e-6, rel=1e-12)
    assert (two['efficiency'], two['efficiency_overlap']) == (0.0, 0.0)
    # 2 workers * 4 samples / 2 us
    assert two['samples_per_s'] == pytest.approx(4e6, rel=1e-12)


def _ddp_buckets(sizes):
    """n_buckets of DDP's default buckets over links of ``sizes`` bytes
    (path -> bytes), ready in that order."""
    layers = [{'name': 'F', 'type': 'LinearFunction', 'phase': 'forward'}]
    rows = {'F': {'t_roofline': 1e-3}}
    for i, path in enumerate(sizes):
        layers.append({'name': 'B{}'.format(i), 'type': 'X',
                       'phase': 'backward', 'link': path})
        rows['B{}'.format(i)] = {'t_roofline': 1e-3}
    net = devices.Network('t', 't', 1e9, 1e-6)
    return network.scaling_report(
        layers, rows, None, [2], net, 1, grad_bytes=sum(sizes.values()),
        overlap='ddp', link_bytes=sizes, model='bound')[2]['n_buckets']


def test_ddp_default_buckets_are_1_and_25_mib():
    # PyTorch's defaults: the first bucket closes at 1 MiB = 1,048,576
    # bytes, the others at 25 MiB = 26,214,400, each once it holds that
    # much.  1 MiB, then 25 MiB - 1 and 1 byte (25 MiB), then 1 MiB left
    # over: 3 buckets
    mib = 1048576
    assert _ddp_buckets({'/d': mib, '/c': 25 * mib - 1, '/b': 1,
                         '/a': mib}) == 3
    # 1 MiB - 1 and 1 byte (1 MiB), then 25 MiB - 1 and 1 byte: 2
    assert _ddp_buckets({'/d': mib - 1, '/c': 1, '/b': 25 * mib - 1,
                         '/a': 1}) == 2


def test_horovod_default_fusion_is_64_mib():
    # Horovod's default fusion buffer, 64 MiB = 67,108,864 bytes: links
    # of 32 MiB, 32 MiB, 1 byte, 32 MiB and 32 MiB, all ready within the
    # first 5 ms cycle, are fused in turn into 64 MiB exactly, then 32 MiB
    # and a byte (the next 32 MiB would pass 64), then the last 32 MiB:
    # 3 all-reduces (a buffer a byte larger fuses the byte first: 2)
    layers = [{'name': 'F', 'type': 'LinearFunction', 'phase': 'forward'}]
    rows = {'F': {'t_roofline': 1e-3}}
    sizes = {'/e': 33554432, '/d': 33554432, '/c': 1, '/b': 33554432,
             '/a': 33554432}
    for i, path in enumerate(sizes):
        layers.append({'name': 'B{}'.format(i), 'type': 'X',
                       'phase': 'backward', 'link': path})
        rows['B{}'.format(i)] = {'t_roofline': 1e-4}
    net = devices.Network('t', 't', 1e9, 1e-6)
    row = network.scaling_report(layers, rows, None, [2], net, 1,
                                 grad_bytes=sum(sizes.values()),
                                 overlap='horovod', link_bytes=sizes,
                                 model='bound')[2]
    assert row['n_buckets'] == 3


def test_a_network_is_a_value():
    # a Network is a named tuple: equal by value, and nothing can be
    # added to it
    net = devices.Network('t', 'test', 1e9, 1e-6)
    assert net == ('t', 'test', 1e9, 1e-6)
    with pytest.raises(AttributeError):
        net.ports = 2


def test_an_mpi_record_without_its_rank_count_is_one_rank():
    # a record of an MPI call that does not say over how many ranks
    # (params None: its bytes could not be read) costs no network time;
    # one that does is costed: 1e6 bytes over 2 ranks, 2*1/2 * 1e-3 + 2e-6
    net = devices.Network('t', 't', 1e9, 1e-6)
    layers = [{'name': 'M-1', 'type': 'MPI_Allreduce', 'comm_bytes': 10 ** 6,
               'params': None},
              {'name': 'M-2', 'type': 'MPI_Allreduce', 'comm_bytes': 10 ** 6,
               'params': {'n_ranks': 2}}]
    rows = {'M-1': {}, 'M-2': {}, 'total': {}}
    network.add_t_network(rows, layers, net)
    assert rows['M-1']['t_network'] == 0.0
    assert rows['M-2']['t_network'] == pytest.approx(1.002e-3, rel=1e-12)


def test_a_link_holding_one_byte_holds_parameters():
    # a link whose own parameters are a single int8: 1 byte, kept
    assert network.own_param_bytes({'/': (1, 1, 1)}) == {'/': 1}


# A network is checked when it is built, as a device is

@pytest.mark.parametrize('fields, message', [
    # a negative bandwidth made a negative all-reduce time (efficiency
    # -0.0166), 0 a ZeroDivisionError, NaN a NaN efficiency
    (('t', 't', -1e9, 1e-6), r'^Network bandwidth \(bytes/s\) must be a '
     r'finite number > 0, got -1000000000\.0$'),
    (('t', 't', 0, 1e-6), 'must be a finite number > 0, got 0$'),
    (('t', 't', float('nan'), 1e-6), 'must be a finite number > 0, got '
     'nan$'),
    (('t', 't', float('inf'), 1e-6), 'got inf$'),
    (('t', 't', '1e9', 1e-6), r"^Network bandwidth \(bytes/s\) must be a "
     r"finite number > 0, got '1e9'$"),
    (('t', 't', True, 1e-6), 'got True$'),
    (('t', 't', 1e9, -1e-3), r'^Network latency \(seconds\) must be a '
     r'finite number >= 0, got -0\.001$'),
    (('t', 't', 1e9, float('nan')), 'latency .* got nan$'),
    (('t', 't', 1e9, float('inf')), 'latency .* got inf$'),
    ((3, 't', 1e9, 1e-6), '^Network name must be a str or None, got 3$'),
    (('t', b't', 1e9, 1e-6), "^Network title must be a str or None, got "
     "b't'$"),
])
def test_a_network_with_a_bad_field_is_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        devices.Network(*fields)
    # by keyword, by _make and by _replace alike
    with pytest.raises(ValueError, match=message):
        devices.Network(**dict(zip(devices.Network._fields, fields)))
    with pytest.raises(ValueError, match=message):
        devices.Network._make(fields)
    good = devices.Network('t', 't', 1e9, 1e-6)
    with pytest.raises(ValueError, match=message):
        good._replace(**dict(zip(devices.Network._fields, fields)))


def test_a_network_keeps_its_figures_as_floats():
    # an int bandwidth is bytes/s all the same; None names nothing; an
    # ideal network has no latency
    net = devices.Network(None, None, 10 ** 9, 0)
    assert (net.bandwidth, net.latency) == (1e9, 0.0)
    assert type(net.bandwidth) is float and type(net.latency) is float
    # 1e6 bytes over 2 ranks: 2*1/2 * 1e6/1e9 = 1 ms
    assert network.allreduce_time(10 ** 6, 2, net) == pytest.approx(
        1e-3, rel=1e-12)


#: Network('lab', 'our cluster', 2.5e9, 3e-6) pickled by the version before
#: networks were checked (protocols 0, 2 and 4)
_OLD_PICKLES = (
    b'ccopy_reg\n_reconstructor\np0\n(cchainer_computational_cost.network'
    b'\nNetwork\np1\nc__builtin__\ntuple\np2\n(Vlab\np3\nVour cluster\np4'
    b'\nF2500000000.0\nF3e-06\ntp5\ntp6\nRp7\n.',
    b'\x80\x02cchainer_computational_cost.network\nNetwork\nq\x00(X\x03'
    b'\x00\x00\x00labq\x01X\x0b\x00\x00\x00our clusterq\x02GA\xe2\xa0_ '
    b'\x00\x00\x00G>\xc9*sq\x10\xe4Ttq\x03\x81q\x04.',
    b'\x80\x04\x95]\x00\x00\x00\x00\x00\x00\x00\x8c"chainer_computational_'
    b'cost.network\x94\x8c\x07Network\x94\x93\x94(\x8c\x03lab\x94\x8c\x0b'
    b'our cluster\x94GA\xe2\xa0_ \x00\x00\x00G>\xc9*sq\x10\xe4Tt\x94\x81'
    b'\x94.')


def test_networks_pickle_and_old_pickles_load():
    net = devices.Network('lab', 'our cluster', 2.5e9, 3e-6)
    for data in _OLD_PICKLES:
        back = pickle.loads(data)
        assert type(back) is devices.Network and back == net
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(net, protocol))
        assert type(back) is devices.Network and back == net


def test_no_message_has_negative_bytes():
    # 1e6 bytes over 2 ranks cost 2*1/2 * 1e-3 + 2e-6; -1e6 bytes are no
    # message (it cost -0.998 ms)
    net = devices.Network('t', 't', 1e9, 1e-6)
    with pytest.raises(ValueError, match=r'^nbytes must be a finite number '
                       r'>= 0, got -1000000$'):
        network.collective_time('MPI_Allreduce', -10 ** 6, 2, net)


@pytest.mark.parametrize('forward, backward, step_time', [
    (1e-3, 0.3, 8e-3), (1e-3, 0.3, 0.3), (0.1, 2e-3, 1.7), (0.7, 0.3, 0.1)])
def test_overlap_efficiency_is_1_alone_and_never_more(forward, backward,
                                                      step_time):
    # a measured step spread over its calls: the parts' sum is not the
    # step to the last bit (it made 1.0000000000000002 at one worker).
    # Alone, the step is the step: efficiency 1 exactly.  Over 2 workers
    # 100 bytes take 2*1/2 * 1e-7 + 2e-6 = 2.1 us, under every backward
    # here: hidden, efficiency 1 again.  Over 8 workers with 0.1 s of
    # latency a step, 2*7/8 * 1e-7 + 2*7 * 0.1 = 1.400000175 s, above
    # every backward: the forward's share of the step then the all-reduce
    layers = [{'name': 'F', 'type': 'LinearFunction', 'phase': 'forward'},
              {'name': 'B', 'type': 'LinearGradWeight', 'phase': 'backward'}]
    rows = {'F': {'t_roofline': forward}, 'B': {'t_roofline': backward}}
    net = devices.Network('t', 't', 1e9, 1e-6)
    report = network.scaling_report(layers, rows, None, [1, 2], net, 4,
                                    grad_bytes=100, step_time=step_time,
                                    model='bound')
    assert report[1]['efficiency_overlap'] == 1.0
    assert report[1]['t_step_overlap'] == step_time
    assert report[2]['efficiency_overlap'] == 1.0
    slow = devices.Network('s', 's', 1e9, 0.1)
    row = network.scaling_report(layers, rows, None, [8], slow, 4,
                                 grad_bytes=100, step_time=step_time,
                                 model='bound')[8]
    share = step_time * forward / (forward + backward)
    assert row['efficiency_overlap'] == pytest.approx(
        step_time / (share + 1.400000175), rel=1e-12)


def _one_step():
    # a 1 ms forward and a 2 ms backward, 10 float32 parameters (40 B)
    layers = [{'name': 'F', 'type': 'LinearFunction', 'phase': 'forward'},
              {'name': 'B', 'type': 'LinearGradWeight',
               'phase': 'backward'}]
    rows = {'F': {'t_roofline': 1e-3}, 'B': {'t_roofline': 2e-3}}
    return layers, rows


def test_a_huge_jitter_is_no_nan_alone():
    # alone a worker waits for no one: t_jitter is 0 exactly, never
    # 1e308 * 10 s * 0 (inf * 0, NaN); over 8 workers 1e308 * 10 s
    # overflows, named with the arguments that grew it
    layers, rows = _one_step()
    net = devices.Network('t', 't', 1e9, 1e-6)
    row = network.scaling_report(layers, rows, 10, [1], net, 4,
                                 step_time=10.0, jitter=1e308)[1]
    assert (row['t_jitter'], row['t_step'], row['efficiency']) == \
        (0.0, 10.0, 1.0)
    with pytest.raises(ValueError, match=r'^the scaling report overflows a '
                       r'float \(t_step is inf at N=8: step_time=10.0, '
                       r'jitter=1e\+308 give figures beyond its range\)'):
        network.scaling_report(layers, rows, 10, [1, 8], net, 4,
                               step_time=10.0, jitter=1e308)


@pytest.mark.parametrize('kwargs, shown', [
    # 1e300 s * 1e10 micro-batches = inf at one worker already
    ({'step_time': 1e300, 'accumulation': 10 ** 10},
     r't_compute is inf at N=1: step_time=1e\+300, accumulation=10000000000 '
     r'give'),
    # 4 samples / 1e-320 s = 4e320 samples a second: inf
    ({'step_time': 1e-320},
     r'samples_per_s is inf at N=1: step_time=1e-320, batch_size=4 give'),
    # an int no float holds: Python's own overflow, the arguments named
    ({'accumulation': 10 ** 400},
     r'accumulation=an int of 401 digits, batch_size=4 give'),
    # the workers, not the batch size (named alone before)
    ({'workers': [1, 10 ** 400]},
     r'workers=an int of 401 digits give figures beyond its range\); give '
     r'smaller ones$'),
    # the first count that overflows
    ({'workers': [1, 10 ** 400, 10 ** 500]},
     r'workers=an int of 401 digits give figures beyond its range\); give '
     r'smaller ones$'),
])
def test_figures_past_a_float_are_a_value_error(kwargs, shown):
    layers, rows = _one_step()
    net = devices.Network('t', 't', 1e9, 1e-6)
    workers = kwargs.pop('workers', [1, 8])
    with pytest.raises(ValueError, match=r'^the scaling report overflows a '
                       r'float \(' + shown):
        network.scaling_report(layers, rows, 10, workers, net, 4,
                               model='bound', **kwargs)


@pytest.mark.parametrize('bandwidth, latency, shown', [
    (5e-324, 1e-6, r'bandwidth 5e-324 B/s, latency 1e-06 s'),
    (1e9, 1e308, r'bandwidth 1000000000.0 B/s, latency 1e\+308 s'),
])
@pytest.mark.parametrize('measured, column', [
    (None, 't_allreduce'), ({8: 1e-3, 64: 2e-3}, 't_step')])
def test_a_network_whose_figures_overflow_is_named(bandwidth, latency,
                                                   shown, measured, column):
    # checked fine, and then "the arguments give figures beyond its
    # range": nothing said it was the network; with two steps measured,
    # a MeasuredStepError ("inf s of all-reduce", "is it in seconds?"), or
    # for the smallest bandwidth "Network bandwidth must be ... > 0, got
    # 0.0" (the fit's slowest network, 2**-12 of it)
    layers, rows = _one_step()
    net = devices.Network('mine', 'My net', bandwidth, latency)
    with pytest.raises(ValueError, match=r"^the scaling report overflows a "
                       r"float \(" + column + r" is inf at N=8: network "
                       r"'mine' \(" + shown + r"\) give figures beyond its "
                       r"range\); check the network's figures$"):
        network.scaling_report(layers, rows, 10, [1, 8, 64], net, 4,
                               model='bound', measured=measured)


def test_an_anchored_bandwidth_stays_a_float_above_0():
    # no gradient bytes: a bandwidth of 1e-320 B/s costs nothing, and the
    # fit's slower networks (down to 2**-12 of it) would be 0 B/s, which
    # no Network is; the fit keeps to the factors that leave a float > 0
    layers, rows = _one_step()
    net = devices.Network('mine', 'My net', 1e-320, 1e-6)
    report = network.scaling_report(layers, rows, 10, [1, 8, 64], net, 4,
                                    grad_bytes=0, model='bound',
                                    measured={8: 1e-3, 64: 1.2e-3})
    # no bandwidth reaches the step at 64 (no bytes): the jitter does
    assert report[64]['anchored'] == 't_compute, jitter'
    assert report[64]['t_step'] == pytest.approx(1.2e-3, rel=1e-6)


def test_gradient_bytes_a_float_cannot_hold_are_refused():
    layers, rows = _one_step()
    net = devices.Network('t', 't', 1e9, 1e-6)
    with pytest.raises(ValueError, match=r'^grad_bytes must be an int from '
                       r'0 to below 1e\+308 \(bytes a float holds\), got an '
                       r'int of 401 digits$'):
        network.scaling_report(layers, rows, 10, [8], net, 4,
                               grad_bytes=10 ** 400)
    # 1e307 B over 2 workers at 1 GB/s: 2*1/2 * 1e307/1e9 + 2e-6 = 1e298 s
    row = network.scaling_report(layers, rows, 10, [2], net, 4,
                                 grad_bytes=10 ** 307, model='bound')[2]
    assert row['t_allreduce'] == pytest.approx(1e298, rel=1e-12)


@pytest.mark.parametrize('workers', [2.0, '8', None, [4, '8'], [True]])
def test_workers_of_a_wrong_type_are_a_type_error(workers):
    with pytest.raises(TypeError, match=r'^workers must be ints >= 1'):
        network.check_workers(workers)


def test_a_repeated_worker_count_is_refused():
    # a row per count: [8, 8] was one row, silently
    with pytest.raises(ValueError, match=r'^workers gives 8 more than once '
                       r'in \[1, 8, 8\]: each worker count is a row, give '
                       r'it once$'):
        network.check_workers([1, 8, 8])
    assert network.check_workers([8, 1]) == [8, 1]


@pytest.mark.parametrize('accumulation, error', [
    (2.0, TypeError), ('2', TypeError), (None, TypeError),
    ({8: 2.0}, TypeError), ({8.0: 2}, TypeError), (0, ValueError),
    ({8: 0}, ValueError)])
def test_accumulation_of_a_wrong_type_is_a_type_error(accumulation, error):
    with pytest.raises(error, match='^accumulation must be an int >= 1'
                       ) as info:
        network.check_accumulation(accumulation)
    # a wrong value is no TypeError
    assert isinstance(info.value, TypeError) == (error is TypeError)


@pytest.mark.parametrize('accumulation, got', [(0, '0'), ({8: 0}, '8: 0')])
def test_accumulation_of_no_micro_batch_says_what_is_allowed(accumulation,
                                                             got):
    # one micro-batch (1) is allowed, in a dict too
    with pytest.raises(ValueError) as info:
        network.check_accumulation(accumulation)
    assert str(info.value) == (
        'accumulation must be an int >= 1 or a dict {workers: int >= 1} '
        '(micro-batches per all-reduce), got ' + got)
    assert network.check_accumulation({8: 1})(8) == 1


def test_one_overlap_mode_is_one_mode():
    # a str is one mode, not its characters ('d', 'd', 'p')
    assert network.check_overlaps('ddp') == ['ddp']
    assert network.check_overlaps(('none', 'ddp')) == ['none', 'ddp']
    with pytest.raises(ValueError, match="^overlaps must be one of 'none', "
                       ".*, got 'd'$"):
        network.check_overlaps(['d'])
    with pytest.raises(TypeError, match='^overlaps must be one of .* or a '
                       'list of them, got 5$'):
        network.check_overlaps(5)


def test_a_network_file_nested_beyond_the_parser_is_named(tmp_path):
    path = tmp_path / 'deep.json'
    path.write_text('[' * 100000 + ']' * 100000)
    with pytest.raises(ValueError, match=r"deep.json' is not a network "
                       r"file .*: maximum recursion depth exceeded"):
        devices.load_network(str(path))


def _tiny_step():
    """A forward, a backward and an update of 1e-10 s each."""
    layers = [{'name': n, 'type': 'X', 'phase': p}
              for n, p in (('F', 'forward'), ('B', 'backward'),
                           ('U', 'update'))]
    return layers, {n: {'t_roofline': 1e-10} for n in 'FBU'}


@pytest.mark.parametrize('overlap', ['horovod', 'ddp', 'none'])
def test_a_step_time_beyond_the_roofline_s_range_is_spread(overlap):
    # 1e299 s over 3e-10 s of roofline: a factor beyond a float, and each
    # call's share of it (a third) is not; the 1,000 gradient bytes take
    # a ring's 2 * (2-1)/2 * 1000 / 1e9 + 2 * (2-1) * 1e-6 = 3e-6 s, which
    # a step of 1e299 s cannot show: the efficiency is 1, and the
    # communication the compute does not hide is at most that all-reduce
    # (with Horovod it was a ValueError, a NaN made an int)
    layers, rows = _tiny_step()
    net = devices.Network('t', 't', 1e9, 1e-6)
    row = network.scaling_report(layers, rows, None, [2], net, 1,
                                 grad_bytes=1000, step_time=1e299,
                                 overlap=overlap, model='bound')[2]
    assert row['t_compute'] == 1e299
    assert row['t_allreduce'] == pytest.approx(3e-6, rel=1e-12)
    assert 0 <= row['t_exposed_comm'] <= row['t_allreduce']
    assert row['efficiency'] == 1.0


def test_a_horovod_cycle_too_short_to_count_is_continuous():
    # a cycle of 1e-310 s: the gradients are all-reduced as soon as they
    # are ready (at the backward's end, 2e-10 s after the step began), so
    # the 3e-6 s all-reduce is exposed whole, as with a cycle of 1e-15 s,
    # which is counted (it was "the scaling report overflows a float")
    layers, rows = _tiny_step()
    net = devices.Network('t', 't', 1e9, 1e-6)
    for cycle in (1e-310, 1e-15):
        row = network.scaling_report(layers, rows, None, [2], net, 1,
                                     grad_bytes=1000, step_time=1.0,
                                     overlap='horovod', cycle_time=cycle,
                                     model='bound')[2]
        assert row['t_exposed_comm'] == pytest.approx(3e-6, rel=1e-6)


def test_a_gradient_is_ready_by_the_backward_s_end_to_the_last_digit():
    # backward calls of 0.1, 0.2 and 0.3 (of 0.7 s with a 0.1 s forward),
    # a link's gradients each, spread over a step of 1e100 s: the last
    # gradient's ready time, summed call by call, rounded a unit of the
    # last digit (1.9e84 s) past the backward's end, and DDP exposed that
    # unit; the 3e-6 s all-reduce is at most what is exposed
    layers = [{'name': 'F', 'type': 'X', 'phase': 'forward'}] + [
        {'name': 'B{}'.format(i), 'type': 'X', 'phase': 'backward',
         'link': '/l{}'.format(i)} for i in range(3)]
    rows = {'F': {'t_roofline': 0.1}, 'B0': {'t_roofline': 0.1},
            'B1': {'t_roofline': 0.2}, 'B2': {'t_roofline': 0.3}}
    net = devices.Network('t', 't', 1e9, 1e-6)
    row = network.scaling_report(
        layers, rows, None, [2], net, 1, grad_bytes=1000, step_time=1e100,
        overlap='ddp', model='bound',
        link_bytes={'/l0': 100, '/l1': 100, '/l2': 100})[2]
    assert 0 <= row['t_exposed_comm'] <= row['t_allreduce']
