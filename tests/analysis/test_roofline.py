"""From cost to time: roofline rows on literal layers (hand-derived), the
device presets, a device that cannot be changed by mistake and the forms
its figures may be given in, argument errors, rendering, timing through
the hook, and the blog's ResNet50 estimate on a GTX 1080 Ti.
"""

import copy
import csv
import io
import json
import math
import pickle

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.report import rendering
from chainer_computational_cost.analysis import roofline
from chainer_computational_cost.core import devices
from chainer_computational_cost.core import columns
from chainer_computational_cost.core.columns import RooflineColumns

from helpers import layer


# Peak 100 FLOP/s and 10 B/s: the ridge point is 100 / 10 = 10 FLOP/B.
# Powers of two and tenths that are exact in binary keep == comparisons.
LAYERS = [
    # 1000 FLOPs, 40 + 10 = 50 B: intensity 20 >= 10, compute bound;
    # t_compute = 1000 / 100 = 10, t_memory = 50 / 10 = 5
    layer('Convolution2DFunction-1', 'Convolution2DFunction', 1000, 40, 10),
    # 100 FLOPs, 60 + 40 = 100 B: intensity 1 < 10, memory bound;
    # t_compute = 1, t_memory = 10
    layer('ReLU-1', 'ReLU', 100, 60, 40),
    # nothing at all: no intensity, no bound, zero times
    layer('Reshape-1', 'Reshape', 0, 0, 0),
    # 50 FLOPs without traffic: no intensity, compute bound; t_compute 0.5
    layer('Foo-1', 'Foo', 50, 0, 0),
    # 100 FLOPs, 10 B: intensity 10, exactly the ridge: compute bound;
    # t_compute = t_memory = 1
    layer('Bar-1', 'Bar', 100, 6, 4),
]


def test_rows_of_literal_layers():
    rows = roofline.roofline_report(LAYERS, peak_flops=100, bandwidth=10)
    assert list(rows) == [d['name'] for d in LAYERS] + ['total']
    conv = rows['Convolution2DFunction-1']
    assert conv == {
        'name': 'Convolution2DFunction-1', 'type': 'Convolution2DFunction',
        'dtype': None, 'flops': 1000, 'mread': 40, 'mwrite': 10,
        'mrw': 50, 'intensity': 20.0, 'peak_flops': 100.0,
        'peak_used': 'given', 'bandwidth': 10.0, 't_compute': 10.0,
        't_memory': 5.0, 't_roofline': 10.0, 't_serial': 15.0,
        'bound': 'compute'}
    relu = rows['ReLU-1']
    assert (relu['intensity'], relu['t_compute'], relu['t_memory'],
            relu['t_roofline'], relu['t_serial'], relu['bound']) == (
        1.0, 1.0, 10.0, 10.0, 11.0, 'memory')
    reshape = rows['Reshape-1']
    assert (reshape['intensity'], reshape['t_roofline'],
            reshape['bound']) == (None, 0.0, None)
    foo = rows['Foo-1']
    assert (foo['intensity'], foo['t_compute'], foo['t_memory'],
            foo['bound']) == (None, 0.5, 0.0, 'compute')
    bar = rows['Bar-1']
    assert (bar['intensity'], bar['t_compute'], bar['t_memory'],
            bar['bound']) == (10.0, 1.0, 1.0, 'compute')
    assert 'time' not in conv and 'efficiency' not in conv


def test_total_row_of_literal_layers():
    total = roofline.roofline_report(
        LAYERS, peak_flops=100, bandwidth=10)['total']
    # flops 1000 + 100 + 0 + 50 + 100 = 1250; bytes 50 + 100 + 10 = 160
    assert (total['flops'], total['mread'], total['mwrite'],
            total['mrw']) == (1250, 106, 54, 160)
    assert total['intensity'] == 1250 / 160  # 7.8125
    # t_compute 10 + 1 + 0 + 0.5 + 1 = 12.5; t_memory 5 + 10 + 0 + 0 + 1
    # = 16; t_roofline, the sum of maxima, 10 + 10 + 0 + 0.5 + 1 = 21.5
    # (more than max(12.5, 16)); t_serial 15 + 11 + 0 + 0.5 + 2 = 28.5
    assert (total['t_compute'], total['t_memory'], total['t_roofline'],
            total['t_serial']) == (12.5, 16.0, 21.5, 28.5)
    assert (total['peak_used'], total['peak_flops'], total['bandwidth'],
            total['bound']) == ('given', 100.0, 10.0, None)
    assert 'time' not in total and 'efficiency' not in total


def test_measured_time_gives_efficiency():
    layers = [
        # t_roofline 10 (above), measured 40: efficiency 10 / 40 = 0.25
        layer('Convolution2DFunction-1', 'Convolution2DFunction', 1000, 40,
              10, time=40.0),
        # t_roofline 10, measured 12.5: efficiency 0.8
        layer('ReLU-1', 'ReLU', 100, 60, 40, time=12.5),
        # a clock that did not tick: no efficiency rather than a division
        # by zero
        layer('Reshape-1', 'Reshape', 0, 0, 0, time=0.0),
    ]
    rows = roofline.roofline_report(layers, peak_flops=100, bandwidth=10)
    assert (rows['Convolution2DFunction-1']['time'],
            rows['Convolution2DFunction-1']['efficiency']) == (40.0, 0.25)
    assert rows['ReLU-1']['efficiency'] == 0.8
    assert (rows['Reshape-1']['time'],
            rows['Reshape-1']['efficiency']) == (0.0, None)
    # total: 20 of roofline time over 40 + 12.5 + 0 = 52.5 measured
    assert rows['total']['time'] == 52.5
    assert rows['total']['efficiency'] == 20.0 / 52.5


def test_total_time_only_when_every_layer_is_timed():
    layers = [layer('ReLU-1', 'ReLU', 100, 60, 40, time=12.5),
              layer('ReLU-2', 'ReLU', 100, 60, 40)]
    rows = roofline.roofline_report(layers, peak_flops=100, bandwidth=10)
    assert rows['ReLU-1']['efficiency'] == 0.8
    assert 'time' not in rows['ReLU-2']
    assert 'time' not in rows['total']
    assert 'efficiency' not in rows['total']


def test_no_layers_gives_a_zero_total():
    rows = roofline.roofline_report([], device='gtx1080ti')
    assert list(rows) == ['total']
    assert rows['total']['t_roofline'] == 0.0
    assert 'time' not in rows['total']


# Device presets: which peak a layer's class and dtype pick.

@pytest.mark.parametrize('device,type_,dtype,label,peak', [
    # GTX 1080 Ti: one fp32 rate for everything but fp64 (1/32 of it)
    ('gtx1080ti', 'Convolution2DFunction', 'float32', 'fp32 vector',
     10.6e12),
    ('gtx1080ti', 'ReLU', 'float32', 'fp32 vector', 10.6e12),
    ('gtx1080ti', 'ReLU', 'float16', 'fp16 vector', 10.6e12),
    ('gtx1080ti', 'LinearFunction', 'float64', 'fp64 vector', 331.25e9),
    # A100: tensor cores for matrix ops, TF32 for float32 ones
    ('a100', 'Convolution2DFunction', 'float32', 'tf32 matrix', 156e12),
    ('a100', 'Convolution2DGradW', 'float16', 'fp16 matrix', 312e12),
    ('a100', 'LinearGradWeight', 'float64', 'fp64 matrix', 19.5e12),
    ('a100', 'LinearGradData', 'float32', 'tf32 matrix', 156e12),
    ('a100', 'BatchMatMul', 'float32', 'tf32 matrix', 156e12),
    ('a100', 'TensorDot', 'float32', 'tf32 matrix', 156e12),
    ('a100', 'EinSum', 'float16', 'fp16 matrix', 312e12),
    ('a100', 'Deconvolution2DFunction', 'float32', 'tf32 matrix', 156e12),
    ('a100', 'ReLU', 'float32', 'fp32 vector', 19.5e12),
    ('a100', 'ReLU', 'float16', 'fp16 vector', 78e12),
    ('a100', 'FixedBatchNormalization', 'float64', 'fp64 vector', 9.7e12),
    # integer first input (ids) or no dtype: float32
    ('a100', 'EmbedIDFunction', 'int32', 'fp32 vector', 19.5e12),
    ('a100', 'MatMul', None, 'tf32 matrix', 156e12),
    # H100: dense halves of the datasheet's sparse figures
    ('h100', 'Convolution2DFunction', 'float16', 'fp16 matrix', 989.5e12),
    ('h100', 'Convolution2DFunction', 'float32', 'tf32 matrix', 494.5e12),
    ('h100', 'ReLU', 'float32', 'fp32 vector', 67e12),
    # EPYC 9654: 96 cores x 2.4 GHz x 32 fp32 FLOPs = 7.3728e12, fp64 half
    ('epyc9654', 'Convolution2DFunction', 'float32', 'fp32 vector',
     7.3728e12),
    ('epyc9654', 'ReLU', 'float16', 'fp16 vector', 7.3728e12),
    ('epyc9654', 'MatMul', 'float64', 'fp64 vector', 3.6864e12),
])
def test_peak_by_class_and_dtype(device, type_, dtype, label, peak):
    d = layer('X-1', type_, 10, 1, 1)
    if dtype is not None:
        d['dtype'] = dtype
    row = roofline.roofline_report([d], device=device)['X-1']
    assert row['peak_used'] == label
    assert row['peak_flops'] == pytest.approx(peak, rel=1e-12)


def test_preset_bandwidths():
    assert devices.DEVICES['gtx1080ti'].bandwidth == 484e9
    assert devices.DEVICES['a100'].bandwidth == 2039e9
    assert devices.DEVICES['h100'].bandwidth == 3350e9
    # 12 channels x 4800 MT/s x 8 bytes
    assert devices.DEVICES['epyc9654'].bandwidth == 460.8e9


def test_mixed_peaks_leave_the_total_peak_empty():
    layers = [layer('Convolution2DFunction-1', 'Convolution2DFunction',
                    156e6, 1e6, 0, dtype='float32'),
              layer('ReLU-1', 'ReLU', 1, 4, 4, dtype='float32')]
    rows = roofline.roofline_report(layers, device='a100')
    conv = rows['Convolution2DFunction-1']
    # 156e6 / 156e12 = 1 us of TF32 arithmetic against 1e6 / 2039e9 = 0.49
    # us of traffic: compute bound (intensity 156 > ridge 156e12 / 2039e9
    # = 76.5)
    assert conv['t_compute'] == pytest.approx(1e-6, rel=1e-12)
    assert conv['t_memory'] == pytest.approx(1e6 / 2039e9, rel=1e-12)
    assert conv['bound'] == 'compute'
    total = rows['total']
    assert (total['peak_used'], total['peak_flops']) == (None, None)
    assert total['bandwidth'] == 2039e9


def test_a_device_object_can_be_given():
    dev = devices.Device('mine', 'My device', 10.0, {
        (u, p): (p + ' ' + u, 100.0) for u in ('matrix', 'vector')
        for p in ('fp16', 'fp32', 'fp64')})
    rows = roofline.roofline_report(LAYERS, device=dev)
    assert rows['ReLU-1']['peak_used'] == 'fp32 vector'
    assert rows['total']['t_roofline'] == 21.5


# Arguments

def test_nothing_given_names_the_presets():
    with pytest.raises(ValueError) as e:
        roofline.roofline_report(LAYERS)
    for name in ('gtx1080ti', 'a100', 'h100', 'epyc9654', 'peak_flops',
                 'bandwidth'):
        assert name in str(e.value)


@pytest.mark.parametrize('kwargs', [{'peak_flops': 1e12},
                                    {'bandwidth': 1e9}])
def test_half_a_custom_device_is_an_error(kwargs):
    with pytest.raises(ValueError, match='gtx1080ti'):
        roofline.roofline_report(LAYERS, **kwargs)


def test_unknown_device_lists_the_presets():
    with pytest.raises(ValueError) as e:
        roofline.roofline_report(LAYERS, device='tpu')
    assert "'tpu'" in str(e.value)
    for name in devices.DEVICES:
        assert repr(name) in str(e.value)


def test_device_and_figures_together_is_an_error():
    with pytest.raises(ValueError, match='not both'):
        roofline.roofline_report(LAYERS, device='a100', peak_flops=1e12,
                                 bandwidth=1e9)


@pytest.mark.parametrize('bad', [0, -1.0, float('nan'), float('inf'), True,
                                 '1e12', [1e12]])
def test_figures_must_be_positive_numbers(bad):
    with pytest.raises(ValueError, match='peak_flops'):
        roofline.roofline_report(LAYERS, peak_flops=bad, bandwidth=1e9)
    with pytest.raises(ValueError, match='bandwidth'):
        roofline.roofline_report(LAYERS, peak_flops=1e12, bandwidth=bad)


def test_integer_figures_are_accepted():
    rows = roofline.roofline_report(LAYERS, peak_flops=np.int64(100),
                                    bandwidth=10)
    assert rows['total']['t_roofline'] == 21.5


# Rendering through the shared renderer

def test_default_columns_add_time_when_measured():
    assert roofline.default_columns([{'name': 'a'}]) == \
        RooflineColumns.DEFAULT
    assert roofline.default_columns({'a': {'time': 1.0}}) == \
        RooflineColumns.DEFAULT + ['time', 'efficiency']
    assert RooflineColumns.TIMED == RooflineColumns.DEFAULT + [
        'time', 'efficiency']
    assert set(RooflineColumns.ALL) == set(columns.ROOFLINE_COLUMNS)


def test_csv_headers_and_cells_in_seconds():
    rows = list(roofline.roofline_report(
        LAYERS, peak_flops=100, bandwidth=10).values())
    text = rendering.render(rows, RooflineColumns.DEFAULT, mode='csv',
                            unit=None, n_digits=3, time_unit='s')
    lines = text.splitlines()
    assert lines[0] == ('Layer name,FLOPs,MemR+W B,Intensity FLOP/B,'
                        'Peak used,T compute s,T memory s,T roofline s,'
                        'Bound')
    assert lines[1] == ('Convolution2DFunction-1,1000,50,20.0,given,'
                        '10.0,5.0,10.0,compute')
    # no intensity, no bound: empty cells
    assert lines[3] == 'Reshape-1,0,0,,given,0.0,0.0,0.0,'
    assert lines[6] == 'total,1250,160,7.812,given,12.5,16.0,21.5,'


def test_time_units_scale_the_time_columns():
    rows = list(roofline.roofline_report(
        LAYERS, peak_flops=100, bandwidth=10).values())
    cells = rendering.table_cells(rows, ['t_roofline'], None, 3, 'ms')
    # 10 s = 10000 ms; 21.5 s = 21500 ms
    assert cells[0] == ['T roofline\nms']
    assert cells[1] == ['10000.0'] and cells[-1] == ['21500.0']
    cells = rendering.table_cells(rows, ['t_serial'], None, 0, 'us')
    # 15 s = 15000000 us, an int with n_digits=0
    assert cells[0] == ['T serial\nus'] and cells[1] == ['15000000']


def test_md_and_table_render_every_column():
    rows = list(roofline.roofline_report(
        LAYERS, device='gtx1080ti').values())
    md = rendering.render(rows, RooflineColumns.ALL, mode='md', unit='G')
    fields = md.splitlines()[0].split('|')[1:-1]
    assert fields[:9] == [
        'Layer name', 'Layer type', 'GFLOPs', 'MemRead GiB', 'MemWrite GiB',
        'MemR+W GiB', 'Intensity FLOP/B', 'Peak GFLOP/s', 'Peak used']
    # its unit: test_bandwidth_is_labelled_in_decimal_bytes
    assert fields[9].startswith('Bandwidth ')
    assert fields[10:] == [
        'T compute ms', 'T memory ms', 'T roofline ms', 'T serial ms',
        'Bound', 'Time ms', 'Efficiency']
    # 10.6e12 FLOP/s is 10600 GFLOP/s
    assert '|10600.0|fp32 vector|' in md
    pytest.importorskip('texttable')
    table = rendering.render(rows, RooflineColumns.ALL, mode='table', unit='G')
    assert 'Intensity' in table and 'FLOP/B' in table
    assert 'T roofline' in table and 'fp32 vector' in table


def test_bandwidth_is_labelled_in_decimal_bytes():
    rows = list(roofline.roofline_report(
        LAYERS, device='gtx1080ti').values())
    cells = rendering.table_cells(rows, ['bandwidth'], 'G', 3, 'ms')
    # 484e9 B/s = 484 GB/s
    assert cells[0] == ['Bandwidth\nGB/s'] and cells[1] == ['484.0']
    doc = json.loads(rendering.render(rows, ['bandwidth'], mode='json',
                                      unit='G'))
    assert doc['units']['bandwidth'] == 'GB/s'


def test_json_keeps_numbers_and_nulls():
    rows = list(roofline.roofline_report(
        LAYERS, peak_flops=100, bandwidth=10).values())
    doc = json.loads(rendering.render(rows, RooflineColumns.DEFAULT,
                                      mode='json', unit=None, time_unit='s'))
    by_name = {r['name']: r for r in doc['rows']}
    assert by_name['Reshape-1']['intensity'] is None
    assert by_name['Reshape-1']['bound'] is None
    assert by_name['ReLU-1']['t_memory'] == 10.0
    assert by_name['total']['t_roofline'] == 21.5
    assert doc['units']['t_compute'] == 's'


# Through the hook

def _small_net():
    net = chainer.Sequential(
        L.Convolution2D(3, 4, ksize=3, pad=1), L.BatchNormalization(4),
        F.relu, lambda h: F.max_pooling_2d(h, 2), L.Linear(None, 5),
        F.softmax)
    x = np.ones((2, 3, 8, 8), np.float32)
    with chainer.using_config('train', False):
        net(x)  # initialise the lazy Linear
    return net, x


def _run(net, x, **kwargs):
    with chainer.using_config('train', False), \
            chainer.no_backprop_mode():
        with ComputationalCostHook(strict=True, **kwargs) as cch:
            net(x)
    return cch


def _without_time(rows):
    skip = ('time', 'efficiency')
    return {k: {c: v for c, v in r.items() if c not in skip}
            for k, r in rows.items()}


def test_measure_time_changes_no_figure_and_adds_efficiency():
    net, x = _small_net()
    # one line for both runs: their tracebacks compare equal too
    plain, timed = [_run(net, x, measure_time=m) for m in (False, True)]
    assert _without_time(timed.layer_report) == \
        _without_time(plain.layer_report)
    assert _without_time(timed.summary_report) == \
        _without_time(plain.summary_report)
    for name, row in timed.layer_report.items():
        if name != 'total':
            assert row['time'] > 0
    assert all('time' not in r for r in plain.layer_report.values())

    rows = timed.roofline_report('gtx1080ti')
    assert _without_time(rows) == _without_time(
        plain.roofline_report('gtx1080ti'))
    for name, row in rows.items():
        assert row['time'] > 0
        assert row['efficiency'] == row['t_roofline'] / row['time']
    assert roofline.default_columns(rows) == RooflineColumns.TIMED

    out = io.StringIO()
    timed.show_roofline_report(out, columns=RooflineColumns.TIMED,
                               device='gtx1080ti')
    header = next(csv.reader(io.StringIO(out.getvalue())))
    assert header[-2:] == ['Time us', 'Efficiency']


def test_dtype_picks_the_peak_through_the_hook():
    x16 = np.ones((2, 3), np.float16)
    w16 = np.ones((4, 3), np.float16)
    with ComputationalCostHook(strict=True) as cch:
        F.relu(F.linear(x16, w16))
        F.relu(x16.astype(np.float64))
    rows = cch.roofline_report('a100')
    assert rows['LinearFunction-1']['peak_used'] == 'fp16 matrix'
    assert rows['ReLU-1']['peak_used'] == 'fp16 vector'
    assert rows['ReLU-2']['peak_used'] == 'fp64 vector'


def test_show_roofline_report_checks_its_arguments():
    net, x = _small_net()
    cch = _run(net, x)
    out = io.StringIO()
    with pytest.raises(ValueError, match='gtx1080ti'):
        cch.show_roofline_report(out)
    with pytest.raises(ValueError, match='unknown column'):
        cch.show_roofline_report(out, device='a100', columns=['nope'])
    assert out.getvalue() == ''


# The blog's estimate (seed 001): ResNet50, batch 1, GTX 1080 Ti

@pytest.fixture(scope='module')
def resnet50():
    net = L.ResNet50Layers(pretrained_model=None)
    x = np.zeros((1, 3, 224, 224), np.float32)
    return net, x


@pytest.mark.slow
def test_resnet50_on_gtx1080ti(resnet50):
    cch = _run(*resnet50, fma_1flop=True)
    rows = cch.roofline_report('gtx1080ti')
    total = rows['total']
    assert len(rows) == 177  # 176 layers and the total
    # REFERENCE.md: 3884871583 FLOPs, 269226304 + 143920960 = 413147264 B
    assert total['flops'] == 3884871583 and total['mrw'] == 413147264
    assert total['t_compute'] == pytest.approx(3884871583 / 10.6e12,
                                               rel=1e-12)  # 366.5 us
    assert total['t_memory'] == pytest.approx(413147264 / 484e9,
                                              rel=1e-12)  # 853.6 us
    assert total['t_serial'] == pytest.approx(
        3884871583 / 10.6e12 + 413147264 / 484e9, rel=1e-12)  # 1.22 ms
    # the sum of per-layer maxima lies between the larger sum and the
    # serial sum; golden: 950.145 us
    assert 413147264 / 484e9 < total['t_roofline'] < total['t_serial']
    assert round(total['t_roofline'] * 1e6, 3) == 950.145
    ridge = 10.6e12 / 484e9  # 21.9 FLOP/B
    n_compute = 0
    for name, row in rows.items():
        if name == 'total':
            continue
        assert row['peak_used'] == 'fp32 vector'
        if row['mrw'] == 0:  # the Reshape
            assert row['bound'] is None and row['flops'] == 0
            continue
        expected = 'compute' if row['flops'] / row['mrw'] >= ridge \
            else 'memory'
        assert row['bound'] == expected, name
        n_compute += expected == 'compute'
    # golden: 33 of the 53 convolutions (the 7x7, the sixteen 3x3 and
    # sixteen of the 1x1); every other layer is memory bound
    assert n_compute == 33
    assert all(r['bound'] != 'compute' for r in rows.values()
               if r['type'] != 'Convolution2DFunction')
    # the first convolution, 7x7 stride 2, 3 -> 64 channels, 112x112 out:
    # 64*112*112*3*7*7 = 118013952 FMAs; reads (3*224*224 + 64*3*7*7 + 64)
    # * 4 = 640000 B, writes 64*112*112*4 = 3211264 B
    conv1 = rows['Convolution2DFunction-1']
    assert (conv1['flops'], conv1['mrw']) == (118013952, 640000 + 3211264)
    assert conv1['t_compute'] == pytest.approx(118013952 / 10.6e12,
                                               rel=1e-12)
    assert conv1['bound'] == 'compute'  # 30.6 FLOP/B > 21.9


@pytest.mark.slow
def test_resnet50_measure_time_changes_no_figure(resnet50):
    plain, timed = [_run(*resnet50, measure_time=m) for m in (False, True)]
    assert _without_time(timed.layer_report) == \
        _without_time(plain.layer_report)
    rows = timed.roofline_report('gtx1080ti')
    assert all(r['time'] > 0 for r in rows.values())
    assert rows['total']['efficiency'] == \
        rows['total']['t_roofline'] / rows['total']['time']
    assert math.isfinite(rows['total']['efficiency'])


def _peaks(flops=100.0):
    return {(u, p): (p + ' ' + u, flops) for u in ('matrix', 'vector')
            for p in ('fp16', 'fp32', 'fp64')}


@pytest.mark.parametrize('bandwidth', [0, -1.0, float('nan'),
                                       float('inf'), '10', True])
def test_a_device_with_a_bad_bandwidth_is_refused(bandwidth):
    with pytest.raises(ValueError, match=r'^Device bandwidth \(bytes/s\) '
                       r'must be a finite number > 0, got '):
        devices.Device('mine', 'My device', bandwidth, _peaks())


@pytest.mark.parametrize('flops', [0, -5.0, float('nan'), None])
def test_a_device_with_a_bad_peak_is_refused(flops):
    with pytest.raises(ValueError, match=r"^the FLOP/s of Device "
                       r"peaks\[\('matrix', 'fp16'\)\] must be a finite "
                       r"number > 0"):
        devices.Device('mine', 'My device', 10.0, _peaks(flops))


def test_device_peaks_must_cover_every_unit_and_precision():
    with pytest.raises(ValueError, match=r"^Device peaks must map each of "
                       r"\('matrix', 'fp16'\), .*; missing \('matrix', "
                       r"'fp16'\), .*\('vector', 'fp64'\)$"):
        devices.Device('mine', 'My device', 10.0, {})
    peaks = _peaks()
    del peaks[('vector', 'fp32')]
    peaks[('vector', 'bf16')] = ('bf16', 1.0)
    with pytest.raises(ValueError, match=r"; missing \('vector', 'fp32'\), "
                       r"unknown \('vector', 'bf16'\)$"):
        devices.Device('mine', 'My device', 10.0, peaks)
    # no mapping, or no pair: the wrong type (a ValueError too)
    for bad in (None, [1, 2]):
        with pytest.raises(TypeError, match='Device peaks must map'):
            devices.Device('mine', 'My device', 10.0, bad)
    peaks = _peaks()
    peaks[('vector', 'fp32')] = 5.0
    with pytest.raises(TypeError, match=r"\('vector', 'fp32'\) is 5.0$"):
        devices.Device('mine', 'My device', 10.0, peaks)


def test_a_device_is_checked_when_replaced_and_keeps_its_own_peaks():
    peaks = _peaks()
    dev = devices.Device(None, None, 10, peaks)
    assert dev.bandwidth == 10.0
    peaks[('vector', 'fp32')] = ('changed', 1.0)
    assert dev.peaks[('vector', 'fp32')] == ('fp32 vector', 100.0)
    with pytest.raises(ValueError, match='Device bandwidth'):
        dev._replace(bandwidth=0)
    with pytest.raises(ValueError, match='Device name must be a str or '
                       'None, got 3'):
        devices.Device(3, None, 10.0, peaks)


def test_a_device_cannot_be_changed_in_place():
    # A misspelt field set on a device (or a preset shared by every report)
    # is refused, not kept beside the figures the reports read.
    dev = devices.DEVICES['a100']
    for name, value in (('bandwidth', 1.0), ('bandwith', 1.0),
                        ('peak_flops', 1e12)):
        with pytest.raises(AttributeError):
            setattr(dev, name, value)
    assert dev.bandwidth == 2039e9
    assert not hasattr(dev, 'bandwith')


def test_a_devices_peaks_cannot_be_changed_in_place():
    # a negative peak set after the checks made a t_compute of -374.4; on
    # a preset, it changed every later report of the process
    dev = devices.DEVICES['a100']
    before = dict(dev.peaks)
    for change in (lambda p: p.__setitem__(('matrix', 'fp32'), ('x', -5.0)),
                   lambda p: p.update({}), lambda p: p.pop(('matrix', 'fp32')),
                   lambda p: p.clear()):
        with pytest.raises(TypeError, match='_replace'):
            change(dev.peaks)
    assert dev.peaks == before
    assert pickle.loads(pickle.dumps(dev)) == dev
    assert copy.deepcopy(dev).peaks == before


def test_a_devices_figures_may_be_lists_and_integers():
    peaks = _peaks()
    peaks[('matrix', 'fp16')] = ['fp16 matrix', 400]
    dev = devices.Device('mine', None, 10, peaks)
    # kept as (label, float) pairs; the bandwidth a float
    assert dev.peaks[('matrix', 'fp16')] == ('fp16 matrix', 400.0)
    assert type(dev.peaks[('matrix', 'fp16')][1]) is float
    assert (dev.bandwidth, type(dev.bandwidth)) == (10.0, float)
    # a float16 matmul on it: 800 FLOPs / 400 FLOP/s = 2 s against
    # (10 + 30) B / 10 B/s = 4 s: memory bound at 4 s
    row = roofline.roofline_report(
        [layer('MatMul-1', 'MatMul', 800, 10, 30, dtype='float16')],
        device=dev)['MatMul-1']
    assert (row['peak_used'], row['t_compute'], row['t_memory'],
            row['t_roofline'], row['bound']) == (
        'fp16 matrix', 2.0, 4.0, 4.0, 'memory')


def test_a_clock_that_never_ticked_gives_no_total_efficiency():
    # every layer timed at 0 s: the total's time is 0, its efficiency
    # None rather than a division by zero
    layers = [layer('ReLU-1', 'ReLU', 100, 60, 40, time=0.0),
              layer('ReLU-2', 'ReLU', 100, 60, 40, time=0.0)]
    total = roofline.roofline_report(layers, peak_flops=100,
                                     bandwidth=10)['total']
    # t_roofline max(100 / 100, 100 / 10) = 10 s each: 20
    assert (total['t_roofline'], total['time'], total['efficiency']) == (
        20.0, 0.0, None)


def test_a_time_too_short_for_a_ratio_gives_no_efficiency():
    # a clock's denormal tick, 1e-320 s: 10 s of roofline over it is
    # beyond a float; no efficiency (it was inf), as for no time at all
    layers = [layer('ReLU-1', 'ReLU', 100, 60, 40, time=1e-320),
              layer('ReLU-2', 'ReLU', 100, 60, 40, time=1.0)]
    report = roofline.roofline_report(layers, peak_flops=100, bandwidth=10)
    assert report['ReLU-1']['efficiency'] is None
    # 10 s over 1 s
    assert report['ReLU-2']['efficiency'] == 10.0
    # 20 s over 1 + 1e-320 s: 1.0 s as a float
    assert report['total']['efficiency'] == 20.0


def test_one_peak_shared_by_two_dtypes_names_the_total():
    # On the GTX 1080 Ti float16 runs at the fp32 rate but is labelled
    # 'fp16 vector': two labels, so the total names no peak
    layers = [layer('ReLU-1', 'ReLU', 106, 1, 1, dtype='float16'),
              layer('ReLU-2', 'ReLU', 106, 1, 1, dtype='float32')]
    total = roofline.roofline_report(layers, device='gtx1080ti')['total']
    assert (total['peak_used'], total['peak_flops']) == (None, None)
    # two layers on the one fp32 peak: the total names it; 2 * 106 FLOPs
    # over 10.6e12 FLOP/s = 2e-11 s
    layers[0]['dtype'] = 'float32'
    total = roofline.roofline_report(layers, device='gtx1080ti')['total']
    assert (total['peak_used'], total['peak_flops']) == (
        'fp32 vector', 10.6e12)
    assert total['t_compute'] == pytest.approx(2e-11, rel=1e-12)


@pytest.mark.parametrize('peak, bandwidth', [(1e-300, 10), (100, 1e-305)])
def test_times_too_large_for_a_float_are_refused(peak, bandwidth):
    # Conv's 1000 FLOPs at 1e-300 FLOP/s (1e303 s), or its 50 B at 1e-305
    # B/s (5e306 s): inf in microseconds
    with pytest.raises(ValueError, match='overflow; give a device with a '
                       'larger peak_flops or bandwidth'):
        roofline.roofline_report(LAYERS, peak_flops=peak,
                                 bandwidth=bandwidth)


@pytest.mark.parametrize('figures', [
    (10 ** 400, 40, 10),  # a FLOP count no float holds
    (1000, 10 ** 400, 10),  # bytes read
])
def test_figures_too_large_for_a_float_are_refused(figures):
    # a projection to a batch of 10**307 gave such ints: OverflowError
    big = [layer('Linear-1', 'LinearFunction', *figures)]
    with pytest.raises(ValueError, match=r"^roofline: the figures of call "
                       r"Linear-1 \(its FLOPs or bytes\) are beyond a "
                       r"float's range: its times cannot be computed; give "
                       r'a smaller batch size$'):
        roofline.roofline_report(big, peak_flops=100, bandwidth=10)


def test_times_just_inside_a_float_are_shown():
    # 1000 FLOPs at 1e-290 FLOP/s: 1e293 s, 1e299 us
    rows = roofline.roofline_report(LAYERS[:1], peak_flops=1e-290,
                                    bandwidth=10)
    assert rows['total']['t_compute'] == pytest.approx(1e293, rel=1e-12)
