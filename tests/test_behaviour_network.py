"""Networks and data-parallel scaling as a user reads them: a network
file's round trip and the figures of a scaling report worked by hand (see
benchmarks/mutate.py for how this file is used).

Equivalent within its stated accuracy (1e-6): ``range(-9000, 9000)`` for
``range(-9000, 9001)`` in ``expected_max_normal`` drops the point x = 9,
whose ``x * n * phi(x) * h`` is about 1e-20 * n.
"""

import json
import pickle

import pytest

from chainer_computational_cost.analysis import network
from chainer_computational_cost.core import devices


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
     'bandwidth must be > 0 and latency >= 0, got 1000000000.0 and -1e-06'),
    ({'name': 'x', 'title': 'x', 'bandwidth': -1e9, 'latency': 0},
     'bandwidth must be > 0'),
    ({'name': 'x', 'title': 'x', 'bandwidth': 0, 'latency': 0},
     'bandwidth must be > 0 and latency >= 0, got 0.0 and 0.0'),
    ({'name': 'x', 'title': 'x', 'bandwidth': 'inf', 'latency': 0},
     'bandwidth must be > 0'),
    ({'name': 'x', 'title': 'x', 'bandwidth': 1e9, 'latency': 'nan'},
     'latency >= 0'),
    ({'name': 'x', 'title': 'x', 'bandwidth': 1e9, 'latency': 'inf'},
     'latency >= 0, got 1000000000.0 and inf'),
    ({'name': 'x', 'title': 'x', 'bandwidth': 1e9},
     "is not a network file .*'latency'"),
    ({'name': 'x', 'title': 'x', 'bandwidth': [1], 'latency': 0},
     'is not a network file'),
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
                                    jitter=0.5)
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
            link_bytes={'/a': 40})[1]
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
                                 grad_bytes=10 ** 6, step_time=8e-3)[2]
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
                               grad_bytes=grad_bytes)
    # 0 bytes: nothing to all-reduce but the latency, 2 * 1 us on ib-edr
    row = network.scaling_report(layers, rows, 10, [2], 'ib-edr', 4,
                                 grad_bytes=0)[2]
    assert row['t_allreduce'] == pytest.approx(2e-6, rel=1e-12)


def test_a_step_that_takes_no_time_is_fully_efficient():
    # a step whose calls cost nothing on the device (views, no FLOPs):
    # alone, nothing is lost, efficiency 1 and no samples/s to give; over
    # 2 workers, 0 gradient bytes still wait 2 * 1 us of latency: all of
    # the step is waiting, efficiency 0
    layers = [{'name': 'F', 'type': 'Reshape', 'phase': 'forward'},
              {'name': 'B', 'type': 'Reshape', 'phase': 'backward'}]
    rows = {'F': {'t_roofline': 0.0}, 'B': {'t_roofline': 0.0}}
    net = devices.Network('t', 't', 1e9, 1e-6)
    report = network.scaling_report(layers, rows, 0, [1, 2], net, 4)
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
        overlap='ddp', link_bytes=sizes)[2]['n_buckets']


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
                                 overlap='horovod', link_bytes=sizes)[2]
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
                                    grad_bytes=100, step_time=step_time)
    assert report[1]['efficiency_overlap'] == 1.0
    assert report[1]['t_step_overlap'] == step_time
    assert report[2]['efficiency_overlap'] == 1.0
    slow = devices.Network('s', 's', 1e9, 0.1)
    row = network.scaling_report(layers, rows, None, [8], slow, 4,
                                 grad_bytes=100, step_time=step_time)[8]
    share = step_time * forward / (forward + backward)
    assert row['efficiency_overlap'] == pytest.approx(
        step_time / (share + 1.400000175), rel=1e-12)
