"""The scaling report's sourced model (issue 46): effective bus
bandwidths, compute slowed by the all-reduces it runs beside, Horovod's
negotiation, stragglers by default, gradient accumulation, and a report
anchored on measured steps.  Every figure by hand, on the step of
``helpers.bucketed_step``: forward 3 ms; backward: link /b 4 ms (4e6
gradient bytes) then link /a 2 ms (6e6 bytes); update 1 ms; 10 ms in
all.
"""

import math

import pytest

from chainer_computational_cost.analysis import network
from chainer_computational_cost.core import devices
from chainer_computational_cost.core.records import ReportWarning
from cli_runs import error_of
from cli_runs import run
from helpers import bucketed_step

NET_MS = devices.Network('ms', 'ms', 1e9, 1e-4)  # 1 GB/s, 0.1 ms


def _report(workers, net=NET_MS, **kwargs):
    layers, rows = bucketed_step()
    kwargs.setdefault('link_bytes', {'/a': 6 * 10 ** 6, '/b': 4 * 10 ** 6})
    return network.scaling_report(layers, rows, None, workers, net, 8,
                                  grad_bytes=10 ** 7, **kwargs)


def test_bus_bandwidth_of_the_presets():
    # line rate times the transport's share: eth-25g 3.125e9 B/s, 0.966
    # with one GPU a node, 0.48 with several; ib-edr 12.5e9 * 0.96;
    # nvlink-a100 300e9 * 0.755; pcie3-x16 15.754e9 * 0.44
    assert devices.bus_bandwidth('eth-25g') == pytest.approx(3.01875e9)
    assert devices.bus_bandwidth('eth-25g', 8) == pytest.approx(1.5e9)
    # two GPUs a node are already several: 3.125e9 * 0.48
    assert devices.bus_bandwidth('eth-25g', 2) == pytest.approx(1.5e9)
    assert devices.bus_bandwidth('ib-edr', 4) == pytest.approx(12e9)
    assert devices.bus_bandwidth('nvlink-a100', 8) == pytest.approx(
        226.5e9)
    assert devices.bus_bandwidth('pcie3-x16', 8) == pytest.approx(
        8e9 * 128 / 130 * 16 / 8 * 0.44)
    # a network of no preset's name is a measured one: its own figure
    assert devices.bus_bandwidth(NET_MS, 8) == 1e9
    assert network.effective_network(NET_MS, 8) is NET_MS
    eff = network.effective_network('eth-25g', 8)
    assert (eff.name, eff.bandwidth, eff.latency) == (
        'eth-25g (effective)', pytest.approx(1.5e9), 10e-6)
    # and is taken as it is: not scaled a second time
    assert devices.bus_bandwidth(eff, 8) == eff.bandwidth


def test_every_preset_has_a_sourced_transport():
    assert set(devices.NETWORK_TRANSPORTS) == set(devices.NETWORKS)
    assert set(devices.NETWORK_TRANSPORTS.values()) <= set(
        devices.BUS_EFFICIENCY)
    for share in devices.BUS_EFFICIENCY.values():
        assert 0 < share.several <= share.one <= 1 and share.sources


def test_the_all_reduce_moves_the_effective_bandwidth():
    # 1e7 bytes over 2 workers on ib-edr at 12e9 B/s: 2 * 1/2 * 1e7 /
    # 12e9 + 2 * 1e-6 = 8.33333e-4 + 2e-6 s; the bound takes 12.5e9
    row = _report([2], 'ib-edr', jitter=0)[2]
    assert row['t_allreduce'] == pytest.approx(1e7 / 12e9 + 2e-6)
    assert row['bus_bandwidth'] == pytest.approx(12e9)
    assert row['t_step'] == pytest.approx(10e-3 + 1e7 / 12e9 + 2e-6)
    bound = _report([2], 'ib-edr', model='bound')[2]
    assert bound['t_allreduce'] == pytest.approx(1e7 / 12.5e9 + 2e-6)
    assert bound['bus_bandwidth'] == 12.5e9
    # hierarchical: eth-25g between nodes of 4 GPUs (1.5e9), nvlink-a100
    # inside (226.5e9): 8 workers, 2 nodes: 2 * (1e7 / 226.5e9 + 3 * 1e-6)
    # + 2 * 1/2 * 1e7 / 1.5e9 + 2 * 1e-5
    row = _report([8], 'eth-25g', gpus_per_node=4,
                  node_network='nvlink-a100', jitter=0)[8]
    assert row['t_allreduce'] == pytest.approx(
        2 * (1e7 / 226.5e9 + 3e-6) + 1e7 / 1.5e9 + 2e-5)
    assert row['bus_bandwidth'] == pytest.approx(1.5e9)


def test_stragglers_by_default():
    # jitter 0.0148 (Sinha et al.): 0.0148 * 10 ms * E[max of 2] =
    # 0.148 ms / sqrt(pi) = 0.0835001 ms; none at one worker; 0 turns it
    # off
    rows = _report([1, 2])
    assert rows[1]['t_jitter'] == 0 and rows[1]['t_step'] == 10e-3
    assert rows[2]['t_jitter'] == pytest.approx(0.0835001e-3, rel=1e-6)
    assert rows[2]['t_step'] == pytest.approx(
        10e-3 + 10.2e-3 + 0.148e-3 / math.sqrt(math.pi))
    assert _report([2], jitter=0)[2]['t_jitter'] == 0
    assert _report([2], model='bound')[2]['t_jitter'] == 0


def test_double_buffering_slows_the_compute_it_overlaps():
    # 1e7 bytes over 2 workers: 1e7 / 1e9 + 2 * 0.1 ms = 10.2 ms, beside
    # all 10 ms of compute: 10 ms overlapped, the compute loses
    # (1 - 1/2.25) * 10 ms = 5.5556 ms, which hides the 0.2 ms left
    row = _report([2], overlap='chainermn-double-buffering', jitter=0)[2]
    lost = (1 - 1 / 2.25) * 10e-3
    assert row['t_contention'] == pytest.approx(lost)
    assert row['t_exposed_comm'] == 0
    assert row['t_step'] == pytest.approx(10e-3 + lost)
    bound = _report([2], overlap='chainermn-double-buffering',
                    model='bound')[2]
    assert bound['t_contention'] == 0
    assert bound['t_step'] == pytest.approx(10.2e-3)


def test_ddp_contention_inside_the_backward():
    # /b ready at 7 ms: 7 -> 11.2 ms, of which 2 ms before the backward
    # ends (9 ms); /a: 11.2 -> 17.4.  Lost: (1 - 1/2.25) * 2 ms =
    # 1.1111 ms; exposed 8.4 - 1.1111 ms; the step 17.4 + 1 = 18.4 ms
    row = _report([2], overlap='ddp', jitter=0)[2]
    lost = (1 - 1 / 2.25) * 2e-3
    assert row['t_contention'] == pytest.approx(lost)
    assert row['t_exposed_comm'] == pytest.approx(8.4e-3 - lost)
    assert row['t_step'] == pytest.approx(18.4e-3)
    assert row['n_buckets'] == 2 and row['t_negotiation'] == 0


@pytest.mark.parametrize('overlap', ['none', 'chainermn-double-buffering',
                                     'ddp'])
def test_no_negotiation_but_horovods_is_zero_seconds(overlap):
    # only Horovod negotiates; one worker talks to nobody: a number, 0,
    # in every other row (the column is blank for None)
    rows = _report([1, 2], overlap=overlap, jitter=0)
    assert [rows[n]['t_negotiation'] for n in (1, 2)] == [0.0, 0.0]
    assert all(type(rows[n]['t_negotiation']) is float for n in (1, 2))
    assert _report([1], overlap='horovod')[1]['t_negotiation'] == 0.0


def test_horovod_negotiates_each_cycle():
    # A negotiation over 2 workers: a gather (1 * 0.1 ms) and a broadcast
    # (1 * (0.1 ms + 0)) of no bytes: 0.2 ms.  Cycles from 3 ms every
    # 5 ms: at 8 ms /b: 8.2 -> 12.4 ms (0.8 ms before 9 ms); at 13 ms /a:
    # 13.2 -> 19.4 ms.  Negotiations 0.4 ms; lost (1 - 1/2.25) * 0.8 ms;
    # exposed 19.4 - 9 ms less that; the step 10 + 10.4 ms
    row = _report([2], overlap='horovod', bucket_bytes=5 * 10 ** 6,
                  jitter=0)[2]
    lost = (1 - 1 / 2.25) * 0.8e-3
    assert row['t_negotiation'] == pytest.approx(0.4e-3)
    assert row['t_contention'] == pytest.approx(lost)
    assert row['t_exposed_comm'] == pytest.approx(10.4e-3 - lost)
    assert row['t_step'] == pytest.approx(20.4e-3)
    # a 1 ms cycle: /b at 7 ms (7.2 -> 11.4), /a at 11.4 (11.6 -> 17.8)
    row = _report([2], overlap='horovod', bucket_bytes=5 * 10 ** 6,
                  cycle_time=1e-3, jitter=0)[2]
    assert row['t_step'] == pytest.approx(18.8e-3)
    assert row['t_contention'] == pytest.approx((1 - 1 / 2.25) * 1.8e-3)


def test_horovod_waits_whole_cycles_for_the_first_gradient():
    # The step spread over 10 s (forward 3 s, /b ready at 7 s, /a at 9 s,
    # update 1 s), cycles of 2.5 s from 3 s: 3 and 5.5 find nothing
    # ready; at 8 s /b: 8.0002 -> 8.0044 (4.2 ms, all before 9 s); the
    # next cycle at 10.5 s takes /a: 10.5002 -> 10.5064.  The step
    # 10 + 1.5064 s, of which (1 - 1/2.25) * 4.2 ms lost to contention
    row = _report([2], overlap='horovod', bucket_bytes=5 * 10 ** 6,
                  cycle_time=2.5, step_time=10.0, jitter=0)[2]
    assert row['t_step'] == pytest.approx(11.5064, rel=1e-12)
    assert row['t_contention'] == pytest.approx((1 - 1 / 2.25) * 4.2e-3,
                                                rel=1e-9)
    assert row['t_negotiation'] == pytest.approx(0.4e-3, rel=1e-9)


def test_accumulation_repeats_the_compute_not_the_all_reduce():
    # 3 micro-batches a step: 30 ms of compute, one all-reduce of 10.2 ms
    row = _report([2], accumulation=3, jitter=0)[2]
    assert row['t_compute'] == pytest.approx(30e-3)
    assert row['t_step'] == pytest.approx(40.2e-3)
    # 2 workers * 8 samples * 3 micro-batches / 40.2 ms
    assert row['samples_per_s'] == pytest.approx(48 / 40.2e-3)
    rows = _report([1, 2], accumulation={1: 4, 2: 2}, jitter=0)
    assert rows[1]['t_step'] == pytest.approx(40e-3)
    assert rows[2]['t_step'] == pytest.approx(30.2e-3)
    with pytest.raises(ValueError, match='no entry for 4 workers'):
        _report([1, 4], accumulation={1: 4, 2: 2})
    # a measured count runs micro-batches too: named as missing, before
    # the anchoring reads it
    with pytest.raises(ValueError, match=r'^accumulation has no entry for 2 '
                       r'workers: give every worker count \(measured ones '
                       r'too\)$'):
        _report([4], accumulation={4: 2}, measured={2: 40e-3})


def test_check_measured_called_alone():
    # (the command line's and scaling_report's check, public on its own)
    assert network.check_measured({8: 0.31}) == {8: 0.31}
    with pytest.raises(ValueError, match=r'^measured must be a dict of one '
                       r'or two worker counts > 1 to the seconds of a step '
                       r'measured on them, such as \{8: 0\.31\}, got 1 '
                       r'workers \(one worker is step_time\)$'):
        network.check_measured({1: 0.31})


def test_a_measured_step_inside_a_node_sets_the_jitter():
    # 4 GPUs a node, a step of 10 ms given: at 2 workers (one node) the
    # model says 10 + 10.2 ms + jitter; measured 1 ms more than without
    # jitter: cv * 10 ms / sqrt(pi) = 1 ms, cv = 0.1 * sqrt(pi)
    rows = _report([2, 4], gpus_per_node=4, step_time=10e-3,
                   measured={2: 21.2e-3})
    cv = 0.1 * math.sqrt(math.pi)
    assert rows[2]['anchored'] == 'jitter'
    assert rows[2]['t_step'] == pytest.approx(21.2e-3, rel=1e-9)
    # at 4: 2 * 3/4 * 1e-2 + 2 * 3 * 1e-4 = 15.6 ms, and the jitter
    # cv * 10 ms * E[max of 4] (1.0293754)
    assert rows[4]['t_jitter'] == pytest.approx(
        cv * 10e-3 * 1.0293754, rel=1e-6)
    assert rows[4]['t_step'] == pytest.approx(
        10e-3 + 15.6e-3 + cv * 10e-3 * 1.0293754, rel=1e-6)
    # measured on exactly one full node (4 of 4 GPUs): still inside it,
    # the jitter takes the 30 - (10 + 15.6) = 4.4 ms; the network's bus
    # bandwidth (1 GB/s) stays
    rows = _report([4], gpus_per_node=4, step_time=10e-3,
                   measured={4: 30e-3})
    assert rows[4]['anchored'] == 'jitter'
    assert rows[4]['t_step'] == pytest.approx(30e-3, rel=1e-9)
    assert rows[4]['bus_bandwidth'] == 1e9


def test_a_measured_step_across_nodes_sets_the_bandwidth():
    # one GPU a node, no jitter: at 2 workers 10 ms + S/B + 0.2 ms;
    # measured 15.2 ms: S/B = 5 ms, B = 2e9.  At 4: 2 * 3/4 * 1e7 / 2e9 +
    # 2 * 3 * 0.1 ms = 8.1 ms
    rows = _report([2, 4], step_time=10e-3, jitter=0,
                   measured={2: 15.2e-3})
    assert rows[4]['anchored'] == 'bus_bandwidth'
    assert rows[4]['bus_bandwidth'] == pytest.approx(2e9, rel=1e-9)
    assert rows[4]['t_step'] == pytest.approx(18.1e-3, rel=1e-9)
    # faster than any network makes it (10.1 ms < 10.2 ms even at
    # 4096 GB/s with no jitter already): the bandwidth at its ceiling,
    # 4096 x 1 GB/s, and the jitter the 0 given (never fitted over it)
    with pytest.warns(ReportWarning, match=r'no anchoring makes the step '
                      r'measured at N=2 last 0\.0101 s \(the nearest: '
                      r'0\.0102 s\)'):
        rows = _report([2], step_time=10e-3, jitter=0,
                       measured={2: 10.1e-3})
    assert rows[2]['anchored'] == 'bus_bandwidth'
    assert rows[2]['bus_bandwidth'] == pytest.approx(4096e9, rel=1e-9)
    assert rows[2]['t_jitter'] == 0
    # slower than the network makes it with a jitter given: the jitter
    # stays the 0.1 given (not fitted), the bandwidth is fitted
    rows = _report([2], step_time=10e-3, jitter=0.1,
                   measured={2: 15.2e-3})
    assert rows[2]['anchored'] == 'bus_bandwidth'
    assert rows[2]['t_step'] == pytest.approx(15.2e-3, rel=1e-9)


def test_a_measured_step_slower_than_the_slowest_network_sets_the_jitter():
    # 10 gradient bytes across nodes: even at 1/4096 of the network the
    # all-reduce is a fraction of a ms, and 20 ms were measured at 2.  The
    # network stays (1 GB/s): 2 * 1/2 * 10 / 1e9 + 2 * 0.1 ms = 0.20001 ms;
    # the jitter takes 20 - 10 - 0.20001 = 9.79999 ms
    layers, rows = bucketed_step()
    row = network.scaling_report(
        layers, rows, None, [2], NET_MS, 8, grad_bytes=10,
        link_bytes={'/a': 6, '/b': 4}, step_time=10e-3,
        measured={2: 20e-3})[2]
    assert (row['anchored'], row['bus_bandwidth']) == ('jitter', 1e9)
    assert row['t_allreduce'] == pytest.approx(0.20001e-3, rel=1e-9)
    assert row['t_jitter'] == pytest.approx(9.79999e-3, rel=1e-9)
    assert row['t_step'] == pytest.approx(20e-3, rel=1e-9)


def test_a_step_no_network_reaches_fits_the_jitter_on_the_network_given():
    # 10 gradient bytes, the default jitter cv 0.0148: at 2 workers even
    # at 4096 GB/s the step is 10 + 0.2 + 0.0148 * 10 / sqrt(pi) =
    # 10.2835 ms, above the 10.25 ms measured.  The network stays
    # (1 GB/s): the all-reduce 2 * 1/2 * 10 / 1e9 + 0.2 ms = 0.20001 ms,
    # the jitter 10.25 - 10 - 0.20001 = 0.04999 ms
    layers, rows = bucketed_step()
    row = network.scaling_report(
        layers, rows, None, [2], NET_MS, 8, grad_bytes=10,
        link_bytes={'/a': 6, '/b': 4}, step_time=10e-3,
        measured={2: 10.25e-3})[2]
    assert (row['anchored'], row['bus_bandwidth']) == ('jitter', 1e9)
    assert row['t_allreduce'] == pytest.approx(0.20001e-3, rel=1e-9)
    assert row['t_jitter'] == pytest.approx(0.04999e-3, rel=1e-9)
    # 1e7 bytes: no jitter reaches it on the network given (10 + 10.2 ms
    # already): the bandwidth at its ceiling, 4096 x 1 GB/s, the
    # all-reduce 1e7 / 4.096e12 + 0.2 ms = 0.2024414 ms, and the jitter
    # 10.25 - 10 - 0.2024414 = 0.0475586 ms, both named
    row = _report([2], step_time=10e-3, measured={2: 10.25e-3})[2]
    assert row['anchored'] == 'bus_bandwidth, jitter'
    assert row['bus_bandwidth'] == pytest.approx(4096e9, rel=1e-9)
    assert row['t_jitter'] == pytest.approx(0.0475586e-3, rel=1e-6)
    assert row['t_step'] == pytest.approx(10.25e-3, rel=1e-9)


def test_a_step_shorter_than_the_communication_alone_is_refused():
    # 1e7 bytes over 2 workers at 1 GB/s: 2 * 1/2 * 1e7 / 1e9 + 2 * 0.1
    # ms = 10.2 ms with no compute at all, above the 1 ms measured: rows
    # "anchored on the nearest" would have a compute of 2**-40 of the
    # model's
    with pytest.raises(ValueError, match=(
            r'measured: the step at N=2 \(0\.001 s\) is shorter than the '
            r"model's step there with no compute at all \(0\.0102 s of "
            r'all-reduce and waiting\); no compute fits it: is it in '
            r"seconds, and are the network and overlap the run's\?")):
        _report([1, 2], measured={2: 1e-3})
    # with step_time, nothing of the compute is fitted: the nearest, warned
    with pytest.warns(ReportWarning, match='anchored on the nearest'):
        _report([1, 2], step_time=10e-3, measured={2: 1e-3})


def test_two_counts_a_network_fits_only_without_compute_fit_the_jitter():
    # 1e7 bytes at 1 GB/s, 0.1 ms: the all-reduce 10.2 ms at 2 workers,
    # 2 * 7/8 * 10 + 14 * 0.1 = 18.9 ms at 8.  Steps of a 10 ms compute
    # and a jitter of 1.8: 10 + 10.2 + 1.8 * 10 * 0.5641896 = 30.35541 ms
    # and 10 + 18.9 + 1.8 * 10 * 1.4236003 = 54.52481 ms.  A bandwidth
    # that meets the step at 8 leaves less than no compute at 2 (10/B'
    # = 30.63 ms of the 30.16 left): the jitter, on the network given
    rows = _report([1, 2, 8], measured={2: 30.35541e-3, 8: 54.52481e-3})
    assert rows[8]['anchored'] == 't_compute, jitter'
    assert rows[8]['bus_bandwidth'] == 1e9
    assert rows[8]['t_compute'] == pytest.approx(10e-3, rel=1e-5)
    assert rows[8]['t_jitter'] == pytest.approx(18 * 1.4236003e-3,
                                                rel=1e-5)


def test_a_step_not_even_the_fastest_network_reaches_takes_it():
    # 9 ms measured at 2 workers of a 10 ms step: no network and no
    # jitter make it; the nearest step is on the fastest network, 4096 x
    # 1 GB/s, with no stragglers: 10 + 2 * 1/2 * 1e7 / 4.096e12 + 0.2 ms
    # = 10.2024414 ms
    with pytest.warns(ReportWarning, match='anchored on the nearest'):
        row = _report([2], step_time=10e-3, measured={2: 9e-3})[2]
    assert row['anchored'] == 'bus_bandwidth, jitter'
    assert row['bus_bandwidth'] == pytest.approx(4096e9, rel=1e-9)
    assert row['t_jitter'] == 0
    assert row['t_step'] == pytest.approx(10.2024414e-3, rel=1e-7)


def test_two_steps_no_terms_fit_together_keep_the_smallest_count():
    # 12 ms at 2 workers and 30 ms at 4, no jitter: the 18 ms between
    # them are 0.5e7 / B + 0.4 ms, so 1e7 / B = 35.2 ms, more than the
    # whole step at 2.  The compute from 2 workers on the network given
    # (1 GB/s): 10 k + 10.2 ms = 12 ms, k = 0.18, t_compute 1.8 ms; at 4,
    # 1.8 + 2 * 3/4 * 10 + 6 * 0.1 = 17.4 ms, with a warning
    with pytest.warns(ReportWarning, match=r'measured at N=4 last 0\.03 s '
                      r'\(the nearest: 0\.0174 s\)'):
        rows = _report([1, 2, 4], jitter=0, measured={2: 12e-3, 4: 30e-3})
    assert rows[1]['t_compute'] == pytest.approx(1.8e-3, rel=1e-7)
    assert rows[2]['t_step'] == pytest.approx(12e-3, rel=1e-9)
    assert rows[4]['t_step'] == pytest.approx(17.4e-3, rel=1e-7)
    assert (rows[4]['anchored'], rows[4]['bus_bandwidth']) == (
        't_compute', 1e9)


def test_a_jitter_given_with_a_step_measured_inside_one_node_is_refused():
    # the measured step inside one node fits the jitter: a jitter given
    # too is one or the other, with a step time (the only count) or
    # without (the second count)
    for measured, step_time in (({4: 30e-3}, 10e-3),
                                ({2: 20e-3, 4: 30e-3}, None)):
        with pytest.raises(ValueError) as e:
            _report([4], gpus_per_node=4, step_time=step_time, jitter=0,
                    measured=measured)
        assert str(e.value) == (
            'jitter and a step measured inside one node (measured={4: '
            '0.03} with gpus_per_node=4) both set the stragglers (the '
            'measured step fits the jitter): give one or the other')
    # across nodes (4 workers, 2 a node), the jitter given stands and the
    # bandwidth between nodes takes the step measured
    rows = _report([4], gpus_per_node=2, step_time=10e-3, jitter=0,
                   measured={4: 35e-3})
    assert rows[4]['anchored'] == 'bus_bandwidth'
    assert rows[4]['t_jitter'] == 0
    assert rows[4]['t_step'] == pytest.approx(35e-3, rel=1e-9)
    assert rows[4]['step_from'] == 'step_time'  # given, not fitted


def test_measured_steps_without_a_step_time_set_the_compute_first():
    # no jitter, no step_time: the roofline's 10 ms scaled by k; at 2
    # workers 10 k ms + 10.2 ms = 30.4 ms: k = 2.02, t_compute 20.2 ms
    rows = _report([1, 2], jitter=0, measured={2: 30.4e-3})
    assert rows[1]['anchored'] == 't_compute'
    assert rows[1]['t_compute'] == pytest.approx(20.2e-3, rel=1e-9)
    # the compute is the measured step's, not the roofline's
    assert [rows[n]['step_from'] for n in (1, 2)] == ['measured'] * 2
    assert rows[2]['t_step'] == pytest.approx(30.4e-3, rel=1e-9)
    # with a second measured count across nodes: the compute from 2
    # workers and the bandwidth from 4.  With B = 2e9: at 2, 10 k + 5.2 ms
    # = 25.4 ms gives k = 2.02; at 4, 20.2 + 8.1 = 28.3 ms
    rows = _report([4], jitter=0, measured={2: 25.4e-3, 4: 28.3e-3})
    assert rows[4]['anchored'] == 't_compute, bus_bandwidth'
    assert rows[4]['t_compute'] == pytest.approx(20.2e-3, rel=1e-7)
    assert rows[4]['bus_bandwidth'] == pytest.approx(2e9, rel=1e-6)


@pytest.mark.parametrize('kwargs, message', [
    ({'model': 'ideal'}, "model must be one of 'sourced', 'bound'"),
    ({'cycle_time': 1e-3}, "cycle_time goes with overlap='horovod'"),
    ({'overlap': 'horovod', 'cycle_time': 0},
     r'cycle_time \(seconds\) must be a finite number > 0'),
    ({'measured': {1: 0.1}}, 'got 1 workers'),
    ({'measured': {2: 0.1, 4: 0.2, 8: 0.3}}, 'one or two worker counts'),
    ({'measured': {2: 0.1, 4: 0.2}, 'step_time': 0.01},
     'with step_time, the step of one worker, one'),
    ({'measured': {2: -1}}, r'^measured: the step measured on 2 workers '
     r'\(seconds\) must be a finite number > 0, got -1$'),
    ({'measured': [(2, 0.1)]}, 'measured must be a dict'),
    ({'accumulation': 0}, 'accumulation must be an int >= 1'),
    ({'accumulation': {2: 1.5}}, 'accumulation must be an int >= 1'),
])
def test_the_new_arguments_are_checked(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _report([1, 2], **kwargs)


_MLP = ['mpi.mn_models:build_mlp', '--shape', '2,3', '--train', '--device',
        'a100', '--workers', '1,8', '--network', 'ib-hdr200', '--mode',
        'csv']


@pytest.mark.parametrize('extra, note', [
    ([], "scaling model 'sourced': a priori within 10 points of 64 of 98 "
     'published runs (median miss 6.4 points, worst 55.5); stragglers: '
     'jitter 0.0148 (Sinha et al. 2022), 0 turns them off'),
    (['--jitter', '0', '--measured', '8=0.001'],
     "scaling model 'sourced': a priori within 10 points of 64 of 98 "
     'published runs (median miss 6.4 points, worst 55.5); anchored on '
     'measured steps within 5 points of 50 of 69 published runs (median '
     'miss 3.4 points, worst 17.3)'),
    (['--measured', '8=0.001'],
     "scaling model 'sourced': a priori within 10 points of 64 of 98 "
     'published runs (median miss 6.4 points, worst 55.5); anchored on '
     'measured steps within 5 points of 50 of 69 published runs (median '
     'miss 3.4 points, worst 17.3); stragglers: jitter 0.0148 (Sinha et al. '
     '2022), or fitted to the measured steps where the anchored column '
     'says jitter'),
    (['--scaling-model', 'bound'],
     "scaling model 'bound': a priori within 10 points of 61 of 98 "
     'published runs (median miss 8.1 points, worst 59.8)'),
])
def test_the_command_line_states_the_models_error(capsys, extra, note):
    status, out = run(*(_MLP + extra))
    err = capsys.readouterr().err
    assert status == 0, err
    assert err == 'note: ' + note + '\n'
    # the anchored column on stdout: the compute fitted to the 8 workers
    header = out.splitlines()[0].split(',')
    if '--measured' in extra:
        assert out.splitlines()[1].split(',')[header.index(
            'Anchored')] == 't_compute'


def test_the_command_line_refuses_a_jitter_with_a_step_it_would_fit(capsys):
    err = error_of(capsys, *(_MLP + [
        '--jitter', '0', '--step-time', '1e-3', '--gpus-per-node', '8',
        '--measured', '8=0.002']))
    assert err == (
        'error: --jitter and a step measured inside one node (--measured '
        '8=0.002 with --gpus-per-node 8) both set the stragglers (the '
        'measured step fits the jitter): give one or the other')
