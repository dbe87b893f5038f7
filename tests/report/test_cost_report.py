"""The reading API (CostReport) as a user reads it, on literal records
worked by hand."""

import io
import pickle
import re
import warnings

import numpy
import pytest

from chainer_computational_cost.analysis import network
from chainer_computational_cost.core.records import ReportWarning
from chainer_computational_cost.report.cost_report import CostReport
from chainer_computational_cost.report.cost_report import ReportSnapshot

from calibration_fixtures import literal_calibration

F32 = numpy.dtype('float32')


def _rec(type_, cost, n_in, shapes, phase, link, time=None, error=None,
         mem=()):
    """A record as the hook stores it; ``cost`` (flops, mread, mwrite,
    params) is None for a call that could not be costed."""
    flops, mread, mwrite, params = cost or (None,) * 4
    return (type_, flops, mread, mwrite, params, n_in, shapes, error,
            None, phase, link, F32 if cost else None, time) + tuple(mem)


def _records(memory=False):
    # a Linear 3 -> 2 on a batch of 4 (inputs x, W, b; 8 parameters), a
    # ReLU whose calculator failed, a ReLU, the Linear's backward; with
    # memory, (live, grad, scratch, state) after each call
    mem = [(48, 0, 16, 0), (64, 0, 0, 0), (80, 0, 8, 0), (72, 24, 32, 0)]
    out = [
        _rec('Linear', (12, 40, 8, {'nobias': False}), 3,
             ((4, 3), (2, 3), (2,), (4, 2)), 'forward', '/fc', time=0.5),
        _rec('ReLU', None, 1, ((4, 2), (4, 2)), 'forward', '/',
             error='ValueError: no'),
        _rec('ReLU', (4, 16, 16, {}), 1, ((4, 2), (4, 2)), 'forward', '/'),
        _rec('Linear', (24, 56, 24, {'nobias': False}), 2,
             ((2, 2), (2, 3), (2, 3)), 'backward', '/fc', time=0.25)]
    if memory:
        out = [r + m for r, m in zip(out, mem)]
    return out


# path -> (calls, parameters, their bytes): 8 parameters kept in float64
LINKS = {'/': (1, 8, 64), '/fc': (1, 8, 64)}


def _snapshot(memory=False, links=LINKS, comm=None):
    state = {'at_exit': (40, 8), 'params': 32} if memory else None
    return ReportSnapshot(_records(memory), links, True, state, comm)


def _show(method, *args, **kwargs):
    out = io.StringIO()
    method(*args, ost=out, **kwargs)
    return out.getvalue()


def test_each_costed_call_is_a_layer_named_by_its_type_and_count():
    layers = _snapshot(comm={3: 100}).layer_report
    # the failed ReLU is the first ReLU call: the costed one is ReLU-2
    assert list(layers) == ['Linear-1', 'ReLU-2', 'Linear-2', 'total']
    back = layers['Linear-2']
    assert (back['name'], back['type'], back['flops'], back['mread'],
            back['mwrite'], back['params'], back['phase'], back['link'],
            back['time'], back['comm_bytes']) == (
        'Linear-2', 'Linear', 24, 56, 24, {'nobias': False}, 'backward',
        '/fc', 0.25, 100)
    # n_in = 2: two inputs, one output
    assert (back['input_shapes'], back['output_shapes']) == (
        [(2, 2), (2, 3)], [(2, 3)])
    relu = layers['ReLU-2']
    # no time measured, no bytes handed to MPI
    assert 'time' not in relu and relu['comm_bytes'] == 0
    assert (relu['input_shapes'], relu['output_shapes']) == (
        [(4, 2)], [(4, 2)])
    first = layers['Linear-1']
    assert (first['input_shapes'], first['output_shapes']) == (
        [(4, 3), (2, 3), (2,)], [(4, 2)])


def test_calls_that_could_not_be_costed_are_listed_with_their_error():
    assert _snapshot().ignored_layers == {'ReLU-1': {
        'type': 'ReLU', 'traceback': '', 'input_shapes': [(4, 2)],
        'output_shapes': [(4, 2)], 'error': 'ValueError: no',
        'phase': 'forward', 'link': '/'}}
    ignored = _snapshot(memory=True).ignored_layers['ReLU-1']
    assert ignored['live'] == 64
    # a call of a type without a calculator has no error to show
    unsupported = _rec('Foo', None, 1, ((2,), (2,)), 'forward', '/')
    assert 'error' not in ReportSnapshot([unsupported], {}).ignored_layers[
        'Foo-1']


def test_with_memory_each_layer_has_its_live_bytes():
    layers = _snapshot(memory=True).layer_report
    assert [layers[n]['live'] for n in ('Linear-1', 'ReLU-2', 'Linear-2')] \
        == [48, 80, 72]
    assert 'live' not in _snapshot().layer_report['Linear-1']


def test_the_totals_and_the_models_parameters():
    total = _snapshot().total_report
    # 12 + 4 + 24 = 40 FLOPs; 40 + 16 + 56 = 112 read; 8 + 16 + 24 = 48
    # written; 160 moved; 8 parameters, the root link's
    assert (total['n_layers'], total['flops'], total['mread'],
            total['mwrite'], total['mrw'], total['n_params']) == (
        3, 40, 112, 48, 160, 8)
    # no link called: no parameter count
    assert _snapshot(links={}).total_report.get('n_params') is None


def test_show_report_default_columns():
    text = _show(_snapshot().show_report)
    # largest 40 FLOPs, 160 bytes: no prefix
    assert text == ('Layer name,FLOPs,MemRead B,MemWrite B,MemR+W B\n'
                    'Linear-1,12,40,8,48\n'
                    'ReLU-2,4,16,16,32\n'
                    'Linear-2,24,56,24,80\n'
                    'total,40,112,48,160\n')


def test_show_report_passes_every_option_on():
    text = _show(_snapshot().show_report, mode='md', unit='K',
                 columns=['name', 'mread', 'time'], n_digits=2,
                 time_unit='s')
    # 40 / 1024 = 0.039 -> 0.04 KiB, 56 / 1024 -> 0.05, 112 / 1024 -> 0.11
    assert text == ('|Layer name|MemRead KiB|Time s|\n'
                    '|:----|:----|:----|\n'
                    '|Linear-1|0.04|0.5|\n'
                    '|ReLU-2|0.02||\n'
                    '|Linear-2|0.05|0.25|\n'
                    '|total|0.11|0.75|\n')


@pytest.mark.parametrize('method, args, kwargs, line', [
    # 112 B read in all: 112 / 1024 = 0.109375 KiB
    ('show_report', (), {'unit': 'K', 'columns': ['name', 'mread']},
     'total,0.109'),
    ('show_summary_report', (), {'unit': 'K', 'columns': ['type', 'mread']},
     'total,0.109'),
    ('show_phase_report', (), {'unit': 'K', 'columns': ['name', 'mread']},
     'total,0.109'),
    ('show_link_report', (), {'unit': 'K', 'columns': ['name', 'mread']},
     'total,0.109'),
    # every call memory-bound at 7e9 B/s: 160 B / 7e9 = 0.0228571 us
    ('show_roofline_report', (), {'peak_flops': 4e9, 'bandwidth': 7e9,
                                  'columns': ['name', 't_memory']},
     'total,0.023'),
    ('show_time_report', ('calibration',), {
        'peak_flops': 4e9, 'bandwidth': 7e9, 'time_unit': 'us',
        'columns': ['name', 't_roofline']}, 'total,0.023'),
    # the peak, 104 B = 0.1015625 KiB
    ('show_memory_report', (), {'unit': 'K', 'columns': ['name', 'bytes']},
     'peak,0.102'),
])
def test_every_report_shows_three_decimals_by_default(method, args, kwargs,
                                                      line):
    args = [_calibration() if a == 'calibration' else a for a in args]
    text = _show(getattr(_snapshot(memory=True), method), *args, **kwargs)
    assert line in text.splitlines()


def test_show_summary_report_by_phase_puts_the_phase_first():
    text = _show(_snapshot().show_summary_report, unit=None, by_phase=True,
                 columns=['type', 'n_layers', 'flops'])
    lines = text.splitlines()
    assert lines[:4] == ['Phase,Layer type,# Layers,FLOPs',
                         'forward,Linear,1,12',
                         'forward,ReLU,1,4',
                         'backward,Linear,1,24']
    assert lines[4].endswith(',total,3,40')
    # a phase column asked for is not repeated
    text = _show(_snapshot().show_summary_report, by_phase=True,
                 columns=['type', 'phase'])
    assert text.splitlines()[:2] == ['Layer type,Phase', 'Linear,forward']
    text = _show(_snapshot().show_summary_report, unit=None,
                 columns=['type', 'n_layers', 'flops'])
    # Linear 12 + 24 = 36
    assert text == ('Layer type,# Layers,FLOPs\nLinear,2,36\nReLU,1,4\n'
                    'total,3,40\n')


def test_show_phase_report():
    text = _show(_snapshot().show_phase_report, unit=None,
                 columns=['name', 'n_layers', 'flops'])
    # forward 12 + 4 = 16, backward 24
    assert text == 'Phase,# Layers,FLOPs\nforward,2,16\nbackward,1,24\n' \
        'total,3,40\n'


def test_show_link_report_tree_depth_and_total():
    columns = ['name', 'n_params', 'n_calls', 'n_layers', 'flops']
    text = _show(_snapshot().show_link_report, unit=None, columns=columns)
    # '/' holds every layer (40 FLOPs), '/fc' the two Linear calls (36);
    # the total row shows the root's parameters and calls
    assert text == ('Link,# Params,# Calls,# Layers,FLOPs\n'
                    '/,8,1,3,40\n'
                    '/fc,8,1,2,36\n'
                    'total,8,1,3,40\n')
    text = _show(_snapshot().show_link_report, unit=None, columns=columns,
                 depth=0)
    assert text == ('Link,# Params,# Calls,# Layers,FLOPs\n'
                    '/,8,1,3,40\n'
                    'total,8,1,3,40\n')
    text = _show(_snapshot().show_link_report, mode='md', unit=None,
                 columns=['name', 'flops'], depth=1)
    assert text == ('|Link|FLOPs|\n|:----|:----|\n|/|40|\n'
                    '|\u00a0\u00a0fc|36|\n|total|40|\n')
    with pytest.raises(ValueError, match='depth must be None or an int'):
        _snapshot().show_link_report(depth=-1)


def test_a_report_to_a_stream_that_cannot_encode_a_name_escapes_it(
        tmp_path):
    # a function type named 'Scal\u00e9' written to an ASCII file: escaped,
    # not a UnicodeEncodeError half-way through the report
    snap = ReportSnapshot([_rec('Scal\u00e9', (4, 16, 16, {}), 1,
                                ((4, 2), (4, 2)), 'forward', '/')],
                          LINKS, True)
    path = tmp_path / 'summary.csv'
    with open(str(path), 'w', encoding='ascii') as f:
        snap.show_summary_report(f, unit=None, columns=['type', 'flops'])
    assert path.read_text() == 'Layer type,FLOPs\nScal\\xe9,4\ntotal,4\n'


def test_reports_follow_records_added_after_a_read():
    class Growing(CostReport):
        def __init__(self):
            self.recs = _records()[:1]

        def records(self):
            return self.recs

    report = Growing()
    assert list(report.layer_report) == ['Linear-1', 'total']
    assert report.total_report['flops'] == 12
    report.recs.append(_records()[2])
    assert list(report.layer_report) == ['Linear-1', 'ReLU-1', 'total']
    # 12 + 4
    assert report.total_report['flops'] == 16


def test_a_snapshot_keeps_its_reports_and_pickles():
    recs = _records()
    snap = ReportSnapshot(recs, LINKS, False, None, {3: 100})
    recs.append(recs[0])
    loaded = pickle.loads(pickle.dumps(snap))
    assert list(loaded.layer_report) == ['Linear-1', 'ReLU-2', 'Linear-2',
                                         'total']
    assert loaded.layer_report['Linear-2']['comm_bytes'] == 100
    assert loaded.fma_1flop is False
    assert loaded.total_report['n_params'] == 8
    again = snap.snapshot()
    assert again.layer_report == snap.layer_report
    assert again.fma_1flop is False
    again = _snapshot(memory=True, comm={0: 7}).snapshot()
    assert again.memory_report['peak'] == 104
    assert again.layer_report['Linear-1']['comm_bytes'] == 7


def test_show_writes_to_stdout_by_default(capsys):
    _snapshot().show_phase_report(columns=['name'])
    assert capsys.readouterr().out == 'Phase\nforward\nbackward\ntotal\n'


def test_show_needs_a_writable_stream():
    with pytest.raises(TypeError, match='ost must be a writable text '
                       r'stream \(.*\), got 3'):
        _snapshot().show_report(ost=3)
    # nothing written to a binary stream before the refusal
    binary = io.BytesIO()
    with pytest.raises(TypeError, match='ost must be a writable text'):
        _snapshot().show_report(ost=binary)
    assert binary.getvalue() == b''


@pytest.mark.parametrize('kwargs, message', [
    ({'mode': 'html'}, 'mode must be one of'),
    ({'unit': 'P'}, 'unit must be one of'),
    ({'n_digits': -1}, 'n_digits must be an int from 0 to 10, got -1'),
    ({'time_unit': 'h'}, 'time_unit must be one of'),
])
def test_bad_arguments_are_refused_even_with_nothing_recorded(kwargs,
                                                              message):
    empty = ReportSnapshot([], {})
    with pytest.raises(ValueError, match=message):
        empty.show_report(ost=io.StringIO(), **kwargs)


def test_nothing_recorded_warns_and_writes_nothing():
    out = io.StringIO()
    with pytest.warns(ReportWarning,
                      match='nothing has been recorded') as caught:
        ReportSnapshot([], {}).show_summary_report(ost=out)
    assert out.getvalue() == ''
    # told at the user's line that asked for the report
    assert [w.filename for w in caught] == [__file__]


def test_show_memory_report():
    text = _show(_snapshot(memory=True).show_memory_report, unit=None)
    # during a call: live + scratch = 64, 64, 88, 72 + 32 = 104 (Linear-2:
    # 24 bytes of gradients, 104 - 32 - 24 = 48 of activations); the most
    # alive after a call: 80 (ReLU-2); at exit 40 + 8; parameters 32
    assert text == (
        'Memory,Bytes B,Activations B,Gradients B,Scratch B,Layer\n'
        'peak,104,48,24,32,Linear-2\n'
        'peak between calls,80,80,0,,ReLU-2\n'
        'at exit,48,40,8,,\n'
        'parameters,32,,,,\n')
    text = _show(_snapshot(memory=True).show_memory_report, unit=None,
                 columns=['name', 'bytes'])
    assert text.splitlines()[:2] == ['Memory,Bytes B', 'peak,104']
    with pytest.raises(ValueError, match='unknown column'):
        _snapshot(memory=True).show_memory_report(columns=['name', 'x'])


def test_show_roofline_report_on_a_given_peak_and_bandwidth():
    text = _show(_snapshot().show_roofline_report, unit=None,
                 peak_flops=4e9, bandwidth=8e9, time_unit='us',
                 columns=['name', 't_compute', 't_memory', 't_roofline',
                          'bound'])
    # Linear-1: 12 / 4e9 s = 0.003 us, 48 / 8e9 s = 0.006 us: memory;
    # ReLU-2: 0.001, 0.004; Linear-2: 0.006, 0.01; total 0.01, 0.02, and
    # the sum of the maxima 0.006 + 0.004 + 0.01 = 0.02
    assert text == ('Layer name,T compute us,T memory us,T roofline us,'
                    'Bound\n'
                    'Linear-1,0.003,0.006,0.006,memory\n'
                    'ReLU-2,0.001,0.004,0.004,memory\n'
                    'Linear-2,0.006,0.01,0.01,memory\n'
                    'total,0.01,0.02,0.02,\n')
    # the roofline reads each call's dtype
    rows = _snapshot().roofline_report(peak_flops=4e9, bandwidth=8e9)
    assert rows['Linear-1']['dtype'] == 'float32'
    # measured times: their columns by default
    header = _show(_snapshot().show_roofline_report, peak_flops=4e9,
                   bandwidth=8e9).splitlines()[0]
    assert header.endswith(',Time us,Efficiency')
    with pytest.raises(ValueError, match="unknown column.*'t_network'"):
        _snapshot().show_roofline_report(peak_flops=4e9, bandwidth=8e9,
                                         columns=['name', 't_network'])


def test_a_scaling_report_needs_a_network():
    with pytest.raises(ValueError, match="scaling_report needs a network: "
                       "one of .*'eth-50g'"):
        _snapshot().scaling_report([1, 2], peak_flops=4e9, bandwidth=8e9,
                                   model='bound')


def test_a_network_given_as_the_device_is_told_where_it_goes():
    # scaling_report([1, 2], 'ib-edr'): the second argument is the device
    with pytest.raises(ValueError, match=re.escape(
            "scaling_report needs a network ('ib-edr', given as device, is "
            "a network: pass network='ib-edr'): one of 'ib-edr'")):
        _snapshot().scaling_report([1, 2], 'ib-edr')


def test_the_scaling_batch_is_the_first_forward_inputs_first_dimension():
    rows = _snapshot().scaling_report([1, 4], peak_flops=4e9,
                                      bandwidth=8e9, network='eth-50g',
                                      model='bound')
    # samples_per_s = N * batch / t_step, batch = 4 (x is (4, 3); not W's
    # first dimension, 2)
    got = [rows[n]['samples_per_s'] * rows[n]['t_step'] / n
           for n in (1, 4)]
    assert got == pytest.approx([4, 4], rel=1e-12)
    rows = _snapshot().scaling_report(iter([4]), peak_flops=4e9,
                                      bandwidth=8e9, network='eth-50g',
                                      batch_size=3, model='bound')
    assert rows[4]['samples_per_s'] * rows[4]['t_step'] == \
        pytest.approx(12, rel=1e-12)


def _token_first(batch):
    # a class token (1, 3) broadcast to the batch, then a Linear 3 -> 2
    # and a ReLU on it: the first forward input is the token's
    return ReportSnapshot([
        _rec('BroadcastTo', (0, 12, 12 * batch, {}), 1,
             ((1, 3), (batch, 3)), 'forward', '/'),
        _rec('Linear', (12, 40, 8, {'nobias': False}), 3,
             ((batch, 3), (2, 3), (2,), (batch, 2)), 'forward', '/fc'),
        _rec('ReLU', (4, 16, 16, {}), 1, ((batch, 2), (batch, 2)),
             'forward', '/'),
        _rec('Linear', (24, 56, 24, {'nobias': False}), 2,
             ((batch, 2), (2, 3), (2, 3)), 'backward', '/fc')],
        LINKS, True)


def test_a_scaling_batch_most_calls_disagree_with_is_warned():
    kwargs = dict(peak_flops=4e9, bandwidth=8e9, network='eth-50g',
                  model='bound')
    with pytest.warns(ReportWarning) as caught:
        rows = _token_first(8).scaling_report([1], **kwargs)
    # the figures stay the first input's: 1 sample a step
    assert rows[1]['samples_per_s'] * rows[1]['t_step'] == \
        pytest.approx(1, rel=1e-12)
    assert [str(w.message) for w in caught] == [
        'scaling_report: batch_size not given, taken as 1, the first '
        'dimension of the first input of BroadcastTo-1 (1, 3); 2 of the 3 '
        "forward calls' first inputs have 8: give batch_size=8 if that is "
        'the samples per worker']
    # at the line that asked, through show_scaling_report too
    assert caught[0].filename == __file__
    with pytest.warns(ReportWarning) as caught:
        _show(_token_first(8).show_scaling_report, [1], **kwargs)
    assert caught[0].filename == __file__
    # given, or agreed with by most calls: no warning
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        _token_first(8).scaling_report([1], batch_size=8, **kwargs)
        _snapshot().scaling_report([1], **kwargs)


def test_a_scaling_batch_of_0_from_the_run_is_named_as_the_runs():
    # the user gave no batch_size: the message was batch_size's own
    # ("must be an int >= 1 ..., got 0")
    empty = ReportSnapshot([
        _rec('Linear', (0, 32, 0, {'nobias': False}), 3,
             ((0, 3), (2, 3), (2,), (0, 2)), 'forward', '/fc'),
        _rec('Linear', (0, 48, 24, {'nobias': False}), 2,
             ((0, 2), (2, 3), (2, 3)), 'backward', '/fc')], LINKS, True)
    with pytest.raises(ValueError, match=re.escape(
            "scaling_report needs batch_size (samples per worker): the "
            "run's, the first dimension of the first input of "
            "Linear-1 (0, 3), is 0")):
        empty.scaling_report([1], peak_flops=4e9, bandwidth=8e9,
                             network='eth-50g', model='bound')


def test_a_scaling_report_all_reduces_the_parameters_own_bytes():
    rows = _snapshot().scaling_report([2], peak_flops=4e9, bandwidth=8e9,
                                      network='eth-50g', model='bound')
    # 64 bytes of parameters (not 8 parameters * 4 bytes)
    assert rows[2]['comm_bytes'] == 64
    text = _show(_snapshot().show_scaling_report, [1, 2], peak_flops=4e9,
                 bandwidth=8e9, network='eth-50g', unit=None,
                 columns=['workers', 'comm_bytes'], model='bound')
    assert text == 'Workers,Comm B\n1,64\n2,64\n'


def test_show_scaling_report_three_decimals_by_default():
    text = _show(_snapshot().show_scaling_report, [1, 2], peak_flops=4e9,
                 bandwidth=8e9, network='eth-50g',
                 columns=['workers', 'samples_per_s'], model='bound')
    # t_compute = 6e-9 + 4e-9 + 1e-8 = 2e-8 s (the roofline times); on 2
    # workers the ring all-reduce of 64 B over eth-50g (6.25e9 B/s, 10 us)
    # takes 2 * 1/2 * 64 / 6.25e9 + 2 * 1e-5 = 2.001024e-5 s; 4 samples a
    # worker: 1 * 4 / 2e-8 = 2e8, 2 * 4 / 2.003024e-5 = 399396.11307...
    assert text == 'Workers,Samples/s\n1,200000000.0\n2,399396.113\n'
    # one ring over 4 workers unless told they share nodes: 2 * 3/4 * 64 /
    # 6.25e9 + 2 * 3 * 1e-5 = 6.001536e-5 s; 4 * 4 / 6.003536e-5
    text = _show(_snapshot().show_scaling_report, [4], peak_flops=4e9,
                 bandwidth=8e9, network='eth-50g',
                 columns=['workers', 'samples_per_s'], model='bound')
    assert text == 'Workers,Samples/s\n4,266509.604\n'


def test_show_scaling_report_refuses_a_layer_column():
    # 'flops' is a column of the layer report, not of the scaling report:
    # refused with the scaling columns named, not shown as an empty column
    with pytest.raises(ValueError) as e:
        _show(_snapshot().show_scaling_report, [1, 2], peak_flops=4e9,
              bandwidth=8e9, network='eth-50g',
              columns=['workers', 'flops'], model='bound')
    assert "unknown column(s) ['flops']" in str(e.value)
    assert "'t_exposed_comm'" in str(e.value)


def test_a_projections_batch_size_is_the_scaling_batch():
    class Projected(ReportSnapshot):
        batch_size = 6

    snap = Projected(_records(), LINKS)
    rows = snap.scaling_report([2], peak_flops=4e9, bandwidth=8e9,
                               network='eth-50g', model='bound')
    # 2 * 6 / 2.003024e-5 (see above)
    assert rows[2]['samples_per_s'] == pytest.approx(12 / 2.003024e-5,
                                                     rel=1e-9)


class _Counted(ReportSnapshot):
    """A snapshot counting how often its records are read."""

    reads = 0

    def records(self):
        type(self).reads += 1
        return ReportSnapshot.records(self)


@pytest.mark.parametrize('method, kwargs', [
    ('scaling_report', {'network': 'nope'}),
    ('scaling_report', {'network': 'eth-50g', 'batch_size': -1}),
    ('scaling_report', {'network': 'eth-50g', 'workers': [0]}),
    ('scaling_report', {'network': 'eth-50g', 'overlap': 'sometimes'}),
    ('show_report', {'mode': 'html'}),
    ('show_report', {'unit': 'P'}),
    ('show_report', {'time_unit': 'h'}),
    ('show_report', {'columns': ['name', 'x']}),
    ('show_link_report', {'depth': -1}),
])
def test_bad_arguments_are_refused_before_the_records_are_read(
        method, kwargs):
    # (a live hook may hold a million records)
    snap = _Counted(_records(), LINKS)
    _Counted.reads = 0
    if method == 'scaling_report':
        kwargs = dict({'workers': [1, 2], 'peak_flops': 4e9,
                       'bandwidth': 8e9}, **kwargs)
    else:
        kwargs = dict(kwargs, ost=io.StringIO())
    with pytest.raises(ValueError):
        getattr(snap, method)(**kwargs)
    assert _Counted.reads == 0


def test_a_roofline_report_over_a_network_shows_the_bytes_handed_to_mpi():
    text = _show(_snapshot(comm={3: 100}).show_roofline_report,
                 peak_flops=4e9, bandwidth=8e9, network='eth-50g')
    lines = text.splitlines()
    assert lines[0].endswith(',Time us,Efficiency,Comm B,T network us')
    # one rank: no time on the network
    assert [x.split(',')[-2:] for x in lines[1:]] == [
        ['0', '0.0'], ['0', '0.0'], ['100', '0.0'], ['100', '0.0']]


def test_warnings_from_reading_point_at_the_caller():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        ReportSnapshot([], {}).show_report(ost=io.StringIO())
    assert [w.filename for w in caught] == [__file__]


def _calibration():
    from chainer_computational_cost.analysis import calibration as cal
    # every matrix product at 1e9 FLOP/s, copies at 1e10 B/s, ReLU as
    # elementwise math
    return literal_calibration(
        types=('ReLU',), overhead=dict.fromkeys(cal.OVERHEADS, 1e-6))


@pytest.mark.parametrize('by_phase', ['yes', 1, None])
def test_show_summary_report_refuses_a_by_phase_that_is_not_a_bool(
        by_phase):
    out = io.StringIO()
    with pytest.raises(TypeError) as e:
        _snapshot().show_summary_report(ost=out, by_phase=by_phase)
    assert str(e.value) == 'by_phase must be True or False, got {!r} ({})' \
        .format(by_phase, type(by_phase).__name__)
    assert out.getvalue() == ''


def test_show_summary_report_takes_a_numpy_bool():
    a, b = io.StringIO(), io.StringIO()
    _snapshot().show_summary_report(ost=a, by_phase=True)
    _snapshot().show_summary_report(ost=b, by_phase=numpy.bool_(True))
    assert 'phase' in a.getvalue().splitlines()[0].lower()
    assert b.getvalue() == a.getvalue()


def _column(text, title):
    lines = [x.split(',') for x in text.splitlines()]
    i = lines[0].index(title)
    return [x[i] for x in lines[1:]]


def test_time_report_bounds_on_the_calibrations_own_device():
    text = _show(_snapshot().show_time_report, _calibration(),
                 time_unit='us')
    # the measured times of the calls timed (0.5 and 0.25 s); ReLU-2 was
    # not timed: a blank, and none in the total
    assert text.splitlines()[0] == (
        'Layer name,Layer type,T predicted us,T roofline us,Time us,Flag')
    assert _column(text, 'Time us') == ['500000.0', '', '250000.0', '']
    # peak 1e9 FLOP/s, 1e10 B/s: Linear-1 max(12 / 1e9, 48 / 1e10) s =
    # 0.012 us; ReLU-2 max(0.004, 0.0032); Linear-2 max(0.024, 0.008)
    assert _column(text, 'T roofline us') == ['0.012', '0.004', '0.024',
                                              '0.04']
    # on a peak and bandwidth given: 12 / 4e9 = 0.003 us, ...
    text = _show(_snapshot().show_time_report, _calibration(),
                 time_unit='us', peak_flops=4e9, bandwidth=8e9)
    assert _column(text, 'T roofline us') == ['0.006', '0.004', '0.01',
                                              '0.02']
    text = _show(_snapshot().show_time_report, _calibration(), by='type')
    assert text.splitlines()[0] == (
        'Layer type,# Layers,T predicted ms,T roofline ms,Time ms,'
        '# Flagged')
    assert _column(text, 'Layer type') == ['Linear', 'ReLU', 'total']
    # both Linear calls timed: 0.5 + 0.25 s; ReLU's not, nor the total
    assert _column(text, 'Time ms') == ['750.0', '', '']
    # a multiply-add counted as two FLOPs: the calibrated peak is twice
    # 1e9, Linear-1 max(12 / 2e9, 48 / 1e10) s = 0.006 us
    snap = ReportSnapshot(_records(), LINKS, False)
    rows = snap.time_report(_calibration())
    assert rows['Linear-1']['t_roofline'] == pytest.approx(6e-9, rel=1e-12)
    # and with flop_convention='torch', whose matrix layers count it as
    # two whatever fma_1flop says: 0.006 us too
    snap = ReportSnapshot(_records(), LINKS, True, flop_convention='torch')
    rows = snap.time_report(_calibration())
    assert rows['Linear-1']['t_roofline'] == pytest.approx(6e-9, rel=1e-12)
    rows = _snapshot().time_report(_calibration(), by='phase')
    assert list(rows) == ['forward', 'backward', 'total']
    assert rows['backward']['time'] == 0.25


def test_time_report_names_the_calibration_fields_its_roofline_overflows_on():
    # a hand-edited bandwidth of 1e-320 B/s (finite and > 0): Linear-1's
    # 48 bytes take 4.8e321 s, beyond a float; no device was given, so
    # the message names the calibration's field, not a device's
    tiny = literal_calibration(
        types=('ReLU',), overhead={'inference': 1e-6, 'forward': 1e-6,
                                   'backward': 1e-6, 'update': 1e-6},
        bandwidth=1e-320)
    with pytest.raises(ValueError) as e:
        _snapshot().time_report(tiny)
    assert str(e.value) == (
        "the calibration's roofline times overflow at its bandwidth 1e-320 "
        'B/s and its fastest matrix product, 1000000000.0 FLOP/s: its '
        'field(s) bandwidth are too small; calibrate again, or give a '
        'device')
    # on a device given, the roofline's own message, which names it
    with pytest.raises(ValueError, match='give a device with a larger'):
        _snapshot().time_report(tiny, peak_flops=1e9, bandwidth=1e-320)


def test_time_report_on_half_a_device_is_refused():
    # a bandwidth without its peak, or a peak without its bandwidth, is
    # not the calibration's own device: refused, never dropped
    for given in ({'bandwidth': 1e9}, {'peak_flops': 1e9}):
        with pytest.raises(ValueError, match='both peak_flops'):
            _snapshot().time_report(_calibration(), **given)


def test_time_report_takes_by_in_any_case():
    # the same rows as by='phase' and by='type' above
    rows = _snapshot().time_report(_calibration(), by='PHASE')
    assert list(rows) == ['forward', 'backward', 'total']
    assert rows['backward']['time'] == 0.25
    text = _show(_snapshot().show_time_report, _calibration(), by='Type')
    assert text.splitlines()[0] == (
        'Layer type,# Layers,T predicted ms,T roofline ms,Time ms,'
        '# Flagged')
    assert _column(text, 'Layer type') == ['Linear', 'ReLU', 'total']
    with pytest.raises(ValueError, match="by must be one of 'layer', "
                       "'type', 'link', 'phase', got 'kind'"):
        _snapshot().time_report(_calibration(), by='kind')
    with pytest.raises(TypeError, match="by must be one of .*, got None$"):
        _snapshot().time_report(_calibration(), by=None)


@pytest.mark.parametrize('by', ['type', 'link', 'Phase'])
def test_a_grouped_time_report_refuses_a_column_of_one_call(by):
    # by type, 'type' was accepted and blank in every row (the groups are
    # named in 'name', titled "Layer type"); by link, 'link' was a second,
    # blank "Link" column beside the names
    why = ("would be empty: the rows of a time report by {} are groups of "
           "calls, each named in its name column; type, phase, link, family "
           "and flag are columns of one call (by layer)".format(by.lower()))
    for column in ('type', 'phase', 'link', 'family', 'flag'):
        with pytest.raises(ValueError, match=re.escape(
                "column {!r} {}".format(column, why))):
            _show(_snapshot().show_time_report, _calibration(), by=by,
                  columns=['name', column])
    # by layer, each is a call's own
    text = _show(_snapshot().show_time_report, _calibration(),
                 columns=['name', 'type', 'link'])
    assert text.splitlines()[0] == 'Layer name,Layer type,Link'


def _captured(monkeypatch, name):
    from chainer_computational_cost.report import plots
    calls = []
    monkeypatch.setattr(plots, name, lambda *a, **k: calls.append((a, k)))
    return calls


def test_a_scaling_plot_has_one_curve_per_overlap(monkeypatch):
    calls = _captured(monkeypatch, 'plot_scaling')
    snap = _snapshot()
    kwargs = dict(peak_flops=4e9, bandwidth=8e9, network='eth-50g')
    snap.plot_scaling('s.png', iter([1, 2]), **kwargs, model='bound')
    snap.plot_scaling('s.png', [1, 2], overlap='ddp', **kwargs, model='bound')
    # workers given as an iterator are read once, for every curve
    snap.plot_scaling('s.png', iter([1, 2]), bucket_bytes=1024,
                      overlaps=['none', 'ddp'], **kwargs, model='bound')
    curves = [a[0] for a, _ in calls]
    assert [list(c) for c in curves] == [['none'], ['ddp'],
                                         ['none', 'ddp']]
    assert [list(r) for r in curves[2].values()] == [[1, 2], [1, 2]]
    # the file, no published points, no title, 100 dots per inch
    assert calls[0][0][1:] == ('s.png', None, None, 100)
    with pytest.raises(ValueError):
        snap.plot_scaling('s.txt', [1], **kwargs, model='bound')


def test_a_scaling_plot_checks_its_published_points_before_any_report(
        monkeypatch):
    from chainer_computational_cost.report import cost_report

    def no_report(*args, **kwargs):
        raise AssertionError('a report computed before the check')
    monkeypatch.setattr(cost_report.net, 'scaling_report', no_report)
    with pytest.raises(ValueError) as e:
        _snapshot().plot_scaling('s.png', [1, 2], peak_flops=4e9,
                                 bandwidth=8e9, network='eth-50g',
                                 published=[(2, -0.5)])
    assert str(e.value) == ('published[0] efficiency must be a finite '
                            'number > 0 up to 1e200, got -0.5')
    # and its worker counts, which a logarithmic axis places
    with pytest.raises(ValueError) as e:
        _snapshot().plot_scaling('s.png', [1, 10 ** 201], peak_flops=4e9,
                                 bandwidth=8e9, network='eth-50g')
    assert str(e.value) == ('workers of a scaling plot must be at most 1e200 '
                            '(a logarithmic axis of more overflows a float), '
                            'got an int of 202 digits')


def test_a_scaling_report_checks_how_it_is_shown_before_computing_it(
        monkeypatch):
    from chainer_computational_cost.report import cost_report

    def no_report(*args, **kwargs):
        raise AssertionError('a report computed before the check')
    monkeypatch.setattr(cost_report.net, 'scaling_report', no_report)
    snap = _snapshot()
    for bad, error in ((dict(mode='bogus'), ValueError),
                       (dict(n_digits=-1), ValueError),
                       (dict(time_unit='h'), ValueError),
                       (dict(ost=io.BytesIO()), TypeError)):
        with pytest.raises(error):
            snap.show_scaling_report(iter([1, 2]), **dict(
                dict(ost=io.StringIO(), peak_flops=4e9, bandwidth=8e9,
                     network='eth-50g'), **bad))


def test_a_scaling_plot_leaves_out_a_mode_no_compute_fits(monkeypatch):
    calls = _captured(monkeypatch, 'plot_scaling')
    kwargs = dict(peak_flops=4e9, bandwidth=8e9, network='eth-50g',
                  measured={2: 3e-3})
    # 3 ms at 2 workers: Horovod's first cycle alone waits 5 ms
    with pytest.warns(ReportWarning, match=(
            r"plot_scaling: the 'horovod' curve is left out: measured: the "
            r'step at N=2 \(0\.003 s\) is shorter than')):
        _snapshot().plot_scaling('s.png', [1, 2], overlaps=[
            'none', 'horovod', 'ddp'], **kwargs)
    assert list(calls[0][0][0]) == ['none', 'ddp']
    # a plot of no curve is the error itself
    with pytest.raises(network.MeasuredStepError):
        _snapshot().plot_scaling('s.png', [1, 2], overlaps=['horovod'],
                                 **kwargs)


def test_a_scaling_plot_gives_the_bucket_size_to_the_bucketed_modes(
        monkeypatch):
    calls = _captured(monkeypatch, 'plot_scaling')
    # two links of 64 bytes of gradients each
    recs = [_rec('Linear', (12, 40, 8, {}), 3, ((4, 3), (2, 3), (2,), (4, 2)),
                 'forward', '/a'),
            _rec('Linear', (12, 40, 8, {}), 3, ((4, 2), (2, 2), (2,), (4, 2)),
                 'forward', '/b'),
            _rec('Linear', (24, 56, 24, {}), 2, ((4, 2), (2, 2), (4, 2)),
                 'backward', '/b'),
            _rec('Linear', (24, 56, 24, {}), 2, ((4, 2), (2, 3), (4, 3)),
                 'backward', '/a')]
    links = {'/': (1, 16, 128), '/a': (1, 8, 64), '/b': (1, 8, 64)}
    snap = ReportSnapshot(recs, links, True)
    snap.plot_scaling('s.png', [2], peak_flops=4e9, bandwidth=8e9,
                      network='eth-50g', overlaps=['ddp', 'horovod', 'none'],
                      bucket_bytes=64, model='bound')
    curves = calls[0][0][0]
    # buckets of 64 bytes: one all-reduce per link's gradients
    assert [curves[m][2]['n_buckets'] for m in ('ddp', 'horovod')] == [2, 2]
    snap.plot_scaling('s.png', [2], peak_flops=4e9, bandwidth=8e9,
                      network='eth-50g', overlaps=['ddp'], model='bound')
    # the default buckets (MiBs) hold both
    assert calls[1][0][0]['ddp'][2]['n_buckets'] == 1


def test_plots_are_given_the_reports_figures(monkeypatch):
    summary = _captured(monkeypatch, 'plot_summary')
    roof = _captured(monkeypatch, 'plot_roofline')
    mem = _captured(monkeypatch, 'plot_memory')
    snap = _snapshot(memory=True)
    snap.plot_summary('a.png', title='t')
    (rows, path), kw = summary[0]
    assert [r['name'] for r in rows] == ['Linear', 'ReLU', 'total']
    assert (path, kw) == ('a.png', {'title': 't'})
    snap.plot_roofline('b.svg', peak_flops=4e9, bandwidth=8e9)
    (layers, path, device, peak, bandwidth), _ = roof[0]
    assert [x['name'] for x in layers] == ['Linear-1', 'ReLU-2',
                                           'Linear-2']
    assert (path, device, peak, bandwidth) == ('b.svg', None, 4e9, 8e9)
    snap.plot_memory('c.pdf')
    (series, figures, path), _ = mem[0]
    assert (figures['peak'], path) == (104, 'c.pdf')


def test_only_ignored_calls_warn_that_none_could_be_costed():
    # two calls without a calculator: recorded, but nothing to report
    snap = ReportSnapshot([
        _rec('MyF', None, 1, ((3,), (3,)), 'forward', '/'),
        _rec('MyF', None, 1, ((3,), (3,)), 'forward', '/')], {})
    assert list(snap.ignored_layers) == ['MyF-1', 'MyF-2']
    message = ('no call could be costed: the 2 recorded calls were ignored '
               '(see ignored_layers for which and why): no report to show')
    for show in (snap.show_report, snap.show_summary_report,
                 snap.show_phase_report, snap.show_link_report):
        out = io.StringIO()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            show(ost=out)
        assert [str(w.message) for w in caught] == [message]
        assert [w.filename for w in caught] == [__file__]
        assert out.getvalue() == ''
    one = ReportSnapshot(snap.records()[:1], {})
    with pytest.warns(ReportWarning, match=r'^no call could be costed: the '
                      r'1 recorded call was ignored \(see ignored_layers'):
        one.show_report(ost=io.StringIO())


def test_figures_past_a_float_are_reported_exactly():
    # a projection to a huge batch gives such exact ints: a ReLU of 10**400
    # FLOPs, 4 * 10**400 bytes read and written (a Linear of 1 each)
    huge = 10 ** 400
    snap = ReportSnapshot([
        _rec('ReLU', (huge, 4 * huge, 4 * huge, {}), 1, ((1,), (1,)),
             'forward', '/'),
        _rec('Linear', (1, 1, 1, {}), 1, ((1,), (1,)), 'forward', '/')],
        {})
    relu = snap.layer_report['ReLU-1']
    # 10**400 / (10**400 + 1) is 100.0 in a float
    assert (relu['flops'], relu['mrw'], relu['flops%']) == (
        huge, 8 * huge, 100.0)
    assert snap.summary_report['Linear']['mrw%'] == 0.0
    assert snap.phase_report['forward']['mrw'] == 8 * huge + 2
    assert snap.link_report['/']['flops%'] == 100.0
    text = _show(snap.show_summary_report, unit=None,
                 columns=['type', 'flops', 'flops%'])
    assert text == ('Layer type,FLOPs,FLOPs (%)\n'
                    'ReLU,1' + '0' * 400 + ',100.0%\n'
                    'Linear,1,0.0%\n'
                    'total,1' + '0' * 399 + '1,100.0%\n')
    with pytest.raises(ValueError, match=r"^row 'ReLU-1': its flops \(a "
                       r"401-digit figure\) is beyond a float's range in "
                       r"unit 'K': show the report with unit=None"):
        snap.show_report(ost=io.StringIO(), unit='K')


def _every_show(snap):
    """name -> show method of ``snap`` taking ``ost`` and ``columns`` (the
    other arguments those of a report that can be built)."""
    device = {'peak_flops': 4e9, 'bandwidth': 7e9}
    return {
        'show_report': snap.show_report,
        'show_summary_report': snap.show_summary_report,
        'show_phase_report': snap.show_phase_report,
        'show_link_report': snap.show_link_report,
        'show_roofline_report': lambda **kw: snap.show_roofline_report(
            **device, **kw),
        'show_time_report': lambda **kw: snap.show_time_report(
            _calibration(), **device, **kw),
        'show_scaling_report': lambda **kw: snap.show_scaling_report(
            [1, 2], network='eth-50g', model='bound', **device, **kw),
        'show_memory_report': snap.show_memory_report}


@pytest.mark.parametrize('columns, error', [
    ([], ValueError), ((), ValueError), (0, TypeError), ('', TypeError),
    ({}, TypeError), (b'name', TypeError)])
def test_no_columns_is_refused_by_every_show_method(columns, error):
    # reports.md: the arguments mean the same everywhere; an empty list was
    # 'every column' to the scaling and memory reports alone
    from chainer_computational_cost.report import gathered
    snap = _snapshot(memory=True)
    shows = _every_show(snap)
    # a gathered report's memory report is the rank with the highest peak
    one = gathered.GatheredReport([gathered.rank_part(0, snap)])
    shows['gathered show_memory_report'] = one.show_memory_report
    for name, show in shows.items():
        out = io.StringIO()
        with pytest.raises(error) as e:
            show(ost=out, columns=columns)
        assert str(e.value).startswith('columns must be a non-empty list '
                                       'of column names from ['), name
        assert str(e.value).endswith(', got {!r}'.format(columns)), name
        assert out.getvalue() == '', name


def test_columns_none_is_each_report_s_default():
    snap = _snapshot(memory=True)
    # the first header line of each, as reports.md's column sets give them
    heads = {
        'show_report': 'Layer name,FLOPs,MemRead B,MemWrite B,MemR+W B',
        'show_summary_report':
            'Layer type,# Layers,FLOPs,MemRead B,MemWrite B,MemR+W B',
        'show_phase_report':
            'Phase,# Layers,FLOPs,MemRead B,MemWrite B,MemR+W B',
        'show_link_report': 'Link,# Params,# Calls,# Layers,FLOPs,'
                            'MemRead B,MemWrite B,MemR+W B'}
    for name, show in _every_show(snap).items():
        if name in heads:
            text = _show(show, columns=None, unit=None)
            assert text.splitlines()[0] == heads[name], name
    text = _show(snap.show_memory_report, columns=None, unit=None)
    assert text.splitlines()[0] == (
        'Memory,Bytes B,Activations B,Gradients B,Scratch B,Layer')
    text = _show(snap.show_scaling_report, [1], network='eth-50g',
                 model='bound', peak_flops=4e9, bandwidth=7e9, columns=None)
    assert text.splitlines()[0].startswith('Workers,')


def test_a_column_set_changed_in_place_changes_no_default():
    from chainer_computational_cost import LinkColumns, PhaseColumns
    from chainer_computational_cost import ReportColumns, SummaryColumns
    snap = _snapshot()
    shows = _every_show(snap)
    before = {name: _show(shows[name]) for name in (
        'show_report', 'show_summary_report', 'show_phase_report',
        'show_link_report')}
    sets = (ReportColumns, SummaryColumns, PhaseColumns, LinkColumns)
    saved = [list(cls.DEFAULT) for cls in sets]
    try:
        for cls in sets:
            cols = cls.DEFAULT
            cols += ['flops%']  # the user's own list, changed in place
        for name, text in before.items():
            assert _show(shows[name]) == text, name
        # what is passed is what is shown
        assert _show(shows['show_report'], columns=ReportColumns.DEFAULT,
                     unit=None).splitlines()[0].endswith(',FLOPs (%)')
    finally:
        for cls, columns in zip(sets, saved):
            cls.DEFAULT[:] = columns
