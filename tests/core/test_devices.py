"""Every hardware preset pinned to the figure its cited source gives (the
sources are cited beside each preset in core/devices.py): a preset
halved or off by a digit fails here."""

import functools
import json
import os
import re

import pytest

from chainer_computational_cost.core import devices

from cli_runs import run


def test_capacities():
    # GTX 1080 Ti 11 GB, A100 80 GB (the 'a100' roofline preset's board)
    # and 40 GB, H100 SXM5 80 GB; binary gigabytes as CUDA reports them.
    assert dict(devices.CAPACITIES) == {
        'gtx1080ti': 11 * 1073741824, 'a100': 80 * 1073741824,
        'a100-40gb': 40 * 1073741824, 'a100-80gb': 80 * 1073741824,
        'h100': 80 * 1073741824,
        # Tesla P100 and V100 SXM2: 16 GB HBM2 each
        'p100': 16 * 1073741824, 'v100': 16 * 1073741824,
        'epyc9654': None}


A100_PEAKS = {
    ('vector', 'fp16'): ('fp16 vector', 78e12),
    ('matrix', 'fp16'): ('fp16 matrix', 312e12),
    ('vector', 'fp32'): ('fp32 vector', 19.5e12),
    ('matrix', 'fp32'): ('tf32 matrix', 156e12),
    ('vector', 'fp64'): ('fp64 vector', 9.7e12),
    ('matrix', 'fp64'): ('fp64 matrix', 19.5e12)}

# (device, bandwidth B/s, {(class, precision): (label, FLOP/s)})
DEVICE_FIGURES = [
    # 3584 cores x 2 x 1.48 GHz = 10.6 TFLOP/s (rounded, the blog's); fp64
    # at 1/32; 484 GB/s.
    ('gtx1080ti', 484e9, {
        ('vector', 'fp16'): ('fp16 vector', 10.6e12),
        ('matrix', 'fp16'): ('fp16 vector', 10.6e12),
        ('vector', 'fp32'): ('fp32 vector', 10.6e12),
        ('matrix', 'fp32'): ('fp32 vector', 10.6e12),
        ('vector', 'fp64'): ('fp64 vector', 0.33125e12),
        ('matrix', 'fp64'): ('fp64 vector', 0.33125e12)}),
    # A100 datasheet: FP16 78 / tensor 312, FP32 19.5 / TF32 156, FP64 9.7
    # / tensor 19.5 TFLOP/s; 2039 GB/s.
    ('a100', 2039e9, A100_PEAKS),
    # A100 SXM4 40GB: the same FLOPs on HBM2, 1555 GB/s; the 80GB board
    # by its memory's name is 'a100'.
    ('a100-40gb', 1555e9, A100_PEAKS),
    ('a100-80gb', 2039e9, A100_PEAKS),
    # H100 SXM5: FP16 133.8 / tensor 1979 / 2, FP32 67 / TF32 989 / 2, FP64
    # 34 / tensor 67 TFLOP/s; 3350 GB/s.
    ('h100', 3350e9, {
        ('vector', 'fp16'): ('fp16 vector', 133.8e12),
        ('matrix', 'fp16'): ('fp16 matrix', 989.5e12),
        ('vector', 'fp32'): ('fp32 vector', 67e12),
        ('matrix', 'fp32'): ('tf32 matrix', 494.5e12),
        ('vector', 'fp64'): ('fp64 vector', 34e12),
        ('matrix', 'fp64'): ('fp64 matrix', 67e12)}),
    # Tesla P100 SXM2: FP16 21.2, FP32 10.6, FP64 5.3 TFLOP/s, no tensor
    # cores; 720 GB/s.
    ('p100', 720e9, {
        ('vector', 'fp16'): ('fp16 vector', 21.2e12),
        ('matrix', 'fp16'): ('fp16 vector', 21.2e12),
        ('vector', 'fp32'): ('fp32 vector', 10.6e12),
        ('matrix', 'fp32'): ('fp32 vector', 10.6e12),
        ('vector', 'fp64'): ('fp64 vector', 5.3e12),
        ('matrix', 'fp64'): ('fp64 vector', 5.3e12)}),
    # Tesla V100 SXM2: FP32 15.7, tensor 125 TFLOP/s; FP16 twice and FP64
    # half the FP32 rate (31.4, 7.85); 900 GB/s.
    ('v100', 900e9, {
        ('vector', 'fp16'): ('fp16 vector', 31.4e12),
        ('matrix', 'fp16'): ('fp16 matrix', 125e12),
        ('vector', 'fp32'): ('fp32 vector', 15.7e12),
        ('matrix', 'fp32'): ('fp32 vector', 15.7e12),
        ('vector', 'fp64'): ('fp64 vector', 7.85e12),
        ('matrix', 'fp64'): ('fp64 vector', 7.85e12)}),
    # EPYC 9654: 96 cores x 2.4 GHz x 32 fp32 FLOPs = 7.3728e12 (fp16 the
    # same, fp64 half); 12 x 4800e6 x 8 B = 460.8 GB/s.
    ('epyc9654', 460.8e9, {
        ('vector', 'fp16'): ('fp16 vector', 7.3728e12),
        ('matrix', 'fp16'): ('fp16 vector', 7.3728e12),
        ('vector', 'fp32'): ('fp32 vector', 7.3728e12),
        ('matrix', 'fp32'): ('fp32 vector', 7.3728e12),
        ('vector', 'fp64'): ('fp64 vector', 3.6864e12),
        ('matrix', 'fp64'): ('fp64 vector', 3.6864e12)}),
]


@pytest.mark.parametrize('name, bandwidth, peaks', DEVICE_FIGURES)
def test_device_presets(name, bandwidth, peaks):
    dev = devices.DEVICES[name]
    assert dev.bandwidth == bandwidth
    assert set(dev.peaks) == set(peaks)
    for key, (label, flops) in peaks.items():
        assert dev.peaks[key][0] == label
        assert dev.peaks[key][1] == pytest.approx(flops, rel=1e-12), key


def test_every_device_is_pinned():
    assert [d[0] for d in DEVICE_FIGURES] == list(devices.DEVICES)
    assert all(d.name == k for k, d in devices.DEVICES.items())


def test_network_presets():
    # InfiniBand EDR, HDR, NDR: 100, 200, 400 Gb/s, 1 us; Ethernet 25 and
    # 100 Gb/s over TCP, 10 us; NVLink 3 300 GB/s one way, 1 us.  Bytes per
    # second: Gb/s * 1e9 / 8.
    assert {n: (x.bandwidth, x.latency)
            for n, x in devices.NETWORKS.items()} == {
        'ib-edr': (12.5e9, 1e-6), 'ib-hdr200': (25e9, 1e-6),
        'ib-ndr': (50e9, 1e-6), 'eth-25g': (3.125e9, 10e-6),
        'eth-100g': (12.5e9, 10e-6), 'nvlink-a100': (300e9, 1e-6),
        # 50 GbE TCP, 25 GbE RoCE (2 us assumed), NVLink 1 80 GB/s one way,
        # PCIe 3.0 x16: 8e9 * 128/130 * 16 / 8 B/s
        'eth-50g': (6.25e9, 10e-6), 'roce-25g': (3.125e9, 2e-6),
        'nvlink-p100': (80e9, 1e-6),
        'pcie3-x16': (8e9 * 128 / 130 * 16 / 8, 1e-6),
        # NVLink 2 six links of 25 GB/s; FDR 56 Gb/s; 10 GbE; a DGX A100's
        # 8 x 200 Gb/s
        'nvlink-v100': (150e9, 1e-6), 'ib-fdr': (7e9, 1e-6),
        'eth-10g': (1.25e9, 10e-6), 'ib-hdr200x8': (200e9, 1e-6),
        # PCIe 4.0 x16: 16e9 * 128/130 * 16 / 8 B/s; a DGX-2's 8 x 100 Gb/s
        'pcie4-x16': (16e9 * 128 / 130 * 16 / 8, 1e-6),
        'ib-edrx8': (100e9, 1e-6)}
    assert [x.title for x in devices.NETWORKS.values()] == [
        'InfiniBand EDR (100 Gb/s)', 'InfiniBand HDR (200 Gb/s)',
        'InfiniBand NDR (400 Gb/s)', '25 Gigabit Ethernet (TCP)',
        '100 Gigabit Ethernet (TCP)', 'NVLink 3 (A100, one node)',
        '50 Gigabit Ethernet (TCP)', '25 Gigabit Ethernet (RoCE)',
        'NVLink 1 (P100, one node)', 'PCI Express 3.0 x16 (one node)',
        'NVLink 2 (V100, one node)', 'InfiniBand FDR (56 Gb/s)',
        '10 Gigabit Ethernet (TCP)',
        'InfiniBand HDR, 8 x 200 Gb/s a node (DGX A100)',
        'PCI Express 4.0 x16 (one node)',
        'InfiniBand EDR, 8 x 100 Gb/s a node (DGX-2)']
    assert [x.name for x in devices.NETWORKS.values()] == list(
        devices.NETWORKS)


def test_one_registry_for_every_entry_point(capsys):
    # issue 34: --fit took a100-40gb, --device and CostMonitor refused it
    from chainer_computational_cost import CostMonitor
    from chainer_computational_cost import fit_batch
    assert list(devices.CAPACITIES) == list(devices.DEVICES)

    def cli(*argv):
        status, _ = run('cli_models:build_tiny', '--shape', '2,3', '--unit',
                        'raw', *argv)
        return status, capsys.readouterr().err

    def step(n):  # refused before any run
        raise AssertionError('run')
    for name in devices.DEVICES:
        upper = name.upper()  # any case, everywhere
        assert devices.resolve_device(upper) is devices.DEVICES[name]
        CostMonitor(device=upper)
        assert cli('--device', upper)[0] == 0
        if devices.CAPACITIES[name] is None:  # the CPU: one error, twice
            with pytest.raises(ValueError) as e:
                fit_batch(step, device=upper)
            assert cli('--train', '--fit', upper) == (
                2, 'error: argument --fit: {} (see --help)\n'.format(e.value))
        else:
            status, err = cli('--train', '--fit', upper, '--mode', 'csv')
            assert status == 0
            assert err.startswith('largest batch on {} with adam: '.format(
                name))


def test_a_network_file_that_cannot_be_written_is_named(tmp_path):
    net = devices.Network(None, None, 1e9, 0.0)
    for path in (tmp_path, tmp_path / 'missing' / 'net.json'):
        with pytest.raises(ValueError, match=r"^'{}' cannot be written \(a "
                           r"network file\): \[Errno \d+\] ".format(
                               re.escape(str(path)))):
            devices.save_network(net, path)
    assert list(tmp_path.iterdir()) == []


def test_a_path_argument_is_never_a_file_descriptor(tmp_path):
    # an int given as a path would go to open() as a file descriptor,
    # which closes the caller's file: refused before any open
    with open(str(tmp_path / 'victim.txt'), 'w') as victim:
        fd = victim.fileno()
        for call in (lambda: devices.load_network(fd),
                     lambda: devices.save_network(
                         devices.NETWORKS['ib-edr'], fd)):
            with pytest.raises(TypeError, match=r'^path must be the path '
                               r'of a file \(a str or os.PathLike\), '
                               r'got {}$'.format(fd)):
                call()
        with pytest.raises(TypeError, match='^network must be a preset '
                           'name .*, got {}$'.format(fd)):
            devices.resolve_network(fd)
        victim.write('still open')  # an OSError had the file been closed
    # a pathlib.Path is a path wherever a str is
    path = tmp_path / 'net.json'
    net = devices.Network(None, None, 1e9, 0.0)
    devices.save_network(net, path)
    assert devices.load_network(path) == net
    assert devices.resolve_network(path) == net


def test_only_the_preset_itself_gets_its_bus_share():
    # ib-hdr200 is RDMA, share 0.96: 25e9 * 0.96 = 24e9 B/s.  A network
    # built (or loaded, or measured) under that name is taken as measured:
    # its own 1e9 B/s, no share; one equal to the preset in every field is
    # the preset
    assert devices.bus_bandwidth('ib-hdr200') == pytest.approx(24e9)
    assert devices.bus_bandwidth(devices.Network(
        'ib-hdr200', None, 1e9, 1e-6)) == 1e9
    same = devices.Network(*devices.NETWORKS['ib-hdr200'])
    assert devices.bus_bandwidth(same) == pytest.approx(24e9)


@pytest.mark.parametrize('fields, error, message', [
    ({'bandwidth': True, 'latency': False}, TypeError,
     r"Network bandwidth \(bytes/s\) must be a finite number > 0, got "
     r"True$"),
    ({'bandwidth': '1e9', 'latency': 0}, TypeError,
     r"Network bandwidth \(bytes/s\) must be a finite number > 0, got "
     r"'1e9'$"),
    ({'bandwidth': 1e9, 'latency': 'nan'}, TypeError,
     r"Network latency \(seconds\) must be a finite number >= 0, got "
     r"'nan'$"),
    ({'name': 5}, TypeError, 'Network name must be a str or None, got 5$'),
    ({'bandwidth': 0}, ValueError,
     r'Network bandwidth \(bytes/s\) must be a finite number > 0, got 0$'),
])
def test_a_network_file_is_checked_as_the_object(tmp_path, fields, error,
                                                 message):
    # the file's raw values go to Network's own checks: nothing converted
    # first (true was 1.0 B/s, '1e9' 1e9, null the name 'None')
    doc = dict({'name': 'x', 'title': None, 'bandwidth': 1e9,
                'latency': 0}, **fields)
    path = tmp_path / 'net.json'
    path.write_text(json.dumps(doc))
    with pytest.raises(error, match='^{!r}: '.format(str(path)) + message):
        devices.load_network(path)


def test_a_network_of_no_name_round_trips(tmp_path):
    path = str(tmp_path / 'net.json')
    net = devices.Network(None, None, 2.5e9, 3e-6)
    devices.save_network(net, path)
    assert devices.load_network(path) == net  # not the names 'None'


@pytest.mark.parametrize('name', ['missing.json', 'sub/missing',
                                  'MISSING.JSON'])
def test_a_missing_network_file_is_named_as_a_file(tmp_path, monkeypatch,
                                                   name):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="^network file '{}' does not "
                       'exist'.format(name)):
        devices.resolve_network(name)
    # a name that reads as no file is an unknown preset
    with pytest.raises(ValueError, match="^unknown network 'missing'; the "
                       'presets are'):
        devices.resolve_network('missing')


def test_a_device_where_a_network_goes_is_told_so_and_back():
    # scaling_report's device comes before its network: one for the other
    with pytest.raises(ValueError, match="^network 'A100' is a device "
                       "preset, not a network; the presets are 'ib-edr'"):
        devices.resolve_network('A100')
    with pytest.raises(ValueError, match="^device 'ib-edr' is a network "
                       "preset, not a device; the presets are 'gtx1080ti'"):
        devices.resolve_device('ib-edr')


@pytest.mark.parametrize('bad', ['ib-edr', None])
def test_save_network_refuses_what_is_no_network(tmp_path, bad):
    # a preset's name or None was an AttributeError ('_asdict')
    path = tmp_path / 'net.json'
    with pytest.raises(TypeError) as e:
        devices.save_network(bad, path)
    assert str(e.value) == (
        'network must be a Network (devices.Network(...), or '
        'devices.NETWORKS[name] for a preset), got {!r}'.format(bad))
    assert not path.exists()


def test_save_network_refuses_an_extra_that_would_replace_a_field(
        tmp_path):
    # bandwidth=-1 replaced the checked figure: a file load_network refused
    path = tmp_path / 'net.json'
    with pytest.raises(ValueError) as e:
        devices.save_network(devices.NETWORKS['ib-edr'], path, bandwidth=-1)
    assert str(e.value) == (
        "save_network: extra field 'bandwidth' is a field of Network "
        '(name, title, bandwidth, latency): give it in the Network')
    assert not path.exists()


@pytest.mark.parametrize('extra, error, why', [
    ({'seconds': object()}, TypeError,
     'Object of type object is not JSON serializable'),
    ({'seconds': float('nan')}, ValueError,
     'Out of range float values are not JSON compliant'),
    ({'n_ranks': 2, 'seconds': [1e-6, {'last': float('inf')}]}, ValueError,
     'Out of range float values are not JSON compliant'),
    ({'seconds': functools.reduce(lambda x, _: [x], range(100000), [])},
     ValueError, 'maximum recursion depth exceeded while encoding a JSON '
     'object'),
])
def test_save_network_writes_nothing_when_an_extra_is_no_json(
        tmp_path, extra, error, why):
    # the file was left truncated after '"extra": ', a raw TypeError; a
    # NaN was written as NaN, which is no JSON
    path = tmp_path / 'net.json'
    path.write_text('what was there\n')
    with pytest.raises(error) as e:
        devices.save_network(devices.NETWORKS['ib-edr'], path, **extra)
    assert str(e.value) == (
        "save_network: extra field 'seconds' cannot be written as JSON "
        '(numbers finite, str, bool, None, lists and dicts of them): ' + why)
    assert path.read_text() == 'what was there\n'


def test_a_directory_given_as_a_network_file_is_named_a_directory(
        tmp_path, monkeypatch):
    # it said the directory 'does not exist'
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'd.json').mkdir()
    (tmp_path / 'runs').mkdir()
    for name, problem in [
            ('d.json', "'d.json' is a directory"),
            ('runs', "'runs' is a directory"),
            ('runs/', "'runs/' is a directory"),
            ('gone/', "'gone/' ends with a /, which names a directory")]:
        with pytest.raises(ValueError) as e:
            devices.resolve_network(name)
        assert str(e.value) == (
            'network file {}: give a file name such as net.json (written '
            'by netbench)'.format(problem))
    with pytest.raises(ValueError) as e:
        devices.resolve_network('runs', 'node_network')
    assert str(e.value).startswith("node_network file 'runs' is a directory")


def test_a_network_file_named_by_a_bytes_path_loads(tmp_path):
    # an os.PathLike whose path is bytes, as checks.path takes it
    class BytesPath(object):
        def __init__(self, path):
            self.path = path

        def __fspath__(self):
            return self.path

    devices.save_network(devices.Network('mine', 'm', 1e9, 1e-6),
                         tmp_path / 'net.json')
    found = devices.resolve_network(
        BytesPath(os.fsencode(str(tmp_path / 'net.json'))))
    assert found == devices.Network('mine', 'm', 1e9, 1e-6)
