"""mode='json': a JSON document whose numbers stay numbers, scaled by the
unit and rounded by n_digits, with the unit names, and the same numbers as
the CSV output of every show_* method."""

import csv
import io
import json
import re

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import LinkColumns
from chainer_computational_cost import PhaseColumns
from chainer_computational_cost import ReportColumns
from chainer_computational_cost import SummaryColumns
from chainer_computational_cost.report import rendering
from chainer_computational_cost.core.columns import TIME_COLUMNS
from chainer_computational_cost.core.columns import RooflineColumns

MiB = 1024 * 1024

# A layer and a total: 1.5e6 FLOPs, 3 MiB read, 1 KiB written, 2.5 ms;
# the total 2e6 FLOPs, 4 MiB, 2 KiB, 4 ms.
ROWS = [
    {'name': 'a', 'type': 'A', 'flops': 1500000, 'mread': 3 * MiB,
     'mwrite': 1024, 'mrw': 3 * MiB + 1024, 'flops%': 75.0,
     'time': 0.0025, 'params': {'k': 3}, 'input_shapes': [(1, 2)]},
    {'name': 'total', 'type': 'total', 'flops': 2000000, 'mread': 4 * MiB,
     'mwrite': 2048, 'mrw': 4 * MiB + 2048, 'flops%': 100.0,
     'time': 0.004, 'params': None, 'input_shapes': None},
]
COLUMNS = ['name', 'flops', 'mread', 'mwrite', 'mrw', 'flops%', 'time']


def render(**kwargs):
    text = rendering.render(ROWS, kwargs.pop('columns', COLUMNS), mode='json',
                            **kwargs)
    return json.loads(text)


def test_one_prefix_for_all():
    doc = render(unit='M', n_digits=3, time_unit='ms')
    assert set(doc) == {'units', 'rows'}
    assert doc['units'] == {'flops': 'MFLOPs', 'mread': 'MiB',
                            'mwrite': 'MiB', 'mrw': 'MiB', 'time': 'ms'}
    # 1.5e6 / 1e3**2 = 1.5; 3 MiB = 3.0; 1024 / 1024**2 = 0.0009765625
    # -> 0.001; (3 MiB + 1 KiB) / MiB = 3.0009765625 -> 3.001; 2.5 ms
    assert doc['rows'][0] == {'name': 'a', 'flops': 1.5, 'mread': 3.0,
                              'mwrite': 0.001, 'mrw': 3.001,
                              'flops%': 75.0, 'time': 2.5}
    assert doc['rows'][1]['flops'] == 2.0
    assert doc['rows'][1]['mwrite'] == 0.002  # 2048 / MiB = 0.00195...


def test_autoaligned_prefix_per_column():
    doc = render(unit='autoaligned', n_digits=3)
    # largest flops 2e6 -> M; largest mread 4 MiB -> Mi; largest mwrite
    # 2048 -> Ki; largest mrw 4 MiB + 2 KiB -> Mi
    assert doc['units'] == {'flops': 'MFLOPs', 'mread': 'MiB',
                            'mwrite': 'KiB', 'mrw': 'MiB', 'time': 'ms'}
    assert doc['rows'][0]['mwrite'] == 1.0 and doc['rows'][1]['mwrite'] \
        == 2.0


def test_raw_numbers_stay_ints():
    for unit in (None, '', 'raw'):
        doc = render(unit=unit, n_digits=3, time_unit='us')
        assert doc['units'] == {'flops': 'FLOPs', 'mread': 'B',
                                'mwrite': 'B', 'mrw': 'B', 'time': 'us'}
        row = doc['rows'][0]
        assert row['flops'] == 1500000 and type(row['flops']) is int
        assert row['mread'] == 3145728 and type(row['mread']) is int
        assert row['time'] == 2500.0  # 0.0025 s


def test_auto_gives_each_value_its_unit():
    doc = render(unit='auto', n_digits=3)
    # scaled columns leave the shared units: each value carries its own
    assert doc['units'] == {'time': 'ms'}
    row = doc['rows'][0]
    assert (row['flops'], row['flops_unit']) == (1.5, 'MFLOPs')
    assert (row['mread'], row['mread_unit']) == (3.0, 'MiB')
    assert (row['mwrite'], row['mwrite_unit']) == (1.0, 'KiB')
    assert list(row) == ['name', 'flops', 'flops_unit', 'mread',
                         'mread_unit', 'mwrite', 'mwrite_unit', 'mrw',
                         'mrw_unit', 'flops%', 'time']


def test_n_digits_rounds_and_zero_gives_ints():
    doc = render(unit='M', n_digits=1)
    # 3.0009765625 MiB -> 3.0; 1024 B = 0.0009765625 MiB -> 0.0
    assert doc['rows'][0]['mrw'] == 3.0 and doc['rows'][0]['mwrite'] == 0.0
    doc = render(unit='M', n_digits=0)
    row = doc['rows'][0]
    assert (row['mread'], row['mrw']) == (3, 3)
    assert type(row['mread']) is int and type(row['mrw']) is int
    # n_digits=None means 10 decimals: 1024 / MiB = 0.0009765625 exactly
    assert render(unit='M', n_digits=None)['rows'][0]['mwrite'] == \
        0.0009765625


def test_shapes_and_params_stay_structured():
    doc = render(unit=None, columns=['name', 'input_shapes', 'params'])
    assert doc['rows'][0] == {'name': 'a', 'input_shapes': [[1, 2]],
                              'params': {'k': 3}}
    assert doc['rows'][1] == {'name': 'total', 'input_shapes': None,
                              'params': None}


def test_non_finite_floats_become_null():
    rows = [{'name': 'x', 'intensity': float('inf')},
            {'name': 'y', 'intensity': float('nan')}]
    text = rendering.render(rows, ['name', 'intensity'], mode='json')
    # strict JSON has no Infinity or NaN
    assert 'Infinity' not in text and 'NaN' not in text
    assert [r['intensity'] for r in json.loads(text)['rows']] == [None, None]


# Through the hook: every show_* method, JSON against CSV

def _hook():
    model = chainer.Sequential(L.Linear(3, 4), F.relu, L.Linear(4, 2))
    x = chainer.Variable(np.ones((5, 3), np.float32))
    with ComputationalCostHook(strict=True, measure_time=True) as cch:
        y = model(x)
        F.sum(y).backward()
    return cch


@pytest.fixture(scope='module')
def cch():
    return _hook()


SHOWS = [
    ('show_report', ReportColumns.ALL + ['type', 'phase', 'link', 'time',
                                         'traceback'],
     {}),
    ('show_summary_report', SummaryColumns.ALL + ['time'], {}),
    ('show_summary_report', SummaryColumns.ALL, {'by_phase': True}),
    ('show_link_report', LinkColumns.ALL + ['time'], {}),
    ('show_phase_report', PhaseColumns.ALL + ['time'], {}),
    ('show_roofline_report', RooflineColumns.ALL,
     {'device': 'gtx1080ti'}),
    ('show_roofline_report', RooflineColumns.DEFAULT,
     {'peak_flops': 1e9, 'bandwidth': 1e8}),
]

_SUFFIX = re.compile(r'(?<=\d)([KMGT]i?)$')


def _render(cch, method, mode, **kwargs):
    out = io.StringIO()
    getattr(cch, method)(out, mode=mode, **kwargs)
    return out.getvalue()


def _same_numbers(csv_text, json_text, auto):
    """Cell by cell: every JSON number is the CSV cell's number (same
    digits), every null an empty cell, every string the same string; the
    header's unit is the JSON unit."""
    table = list(csv.reader(io.StringIO(csv_text)))
    doc = json.loads(json_text)
    header, body = table[0], table[1:]
    assert len(body) == len(doc['rows'])
    n_checked = 0
    for cells, obj in zip(body, doc['rows']):
        keys = [k for k in obj if not k.endswith('_unit')]
        assert len(keys) == len(cells) == len(header)
        for title, key, cell in zip(header, keys, cells):
            value = obj[key]
            if value is None:
                assert cell == '', key
            elif isinstance(value, bool):
                assert cell == str(value), key
            elif isinstance(value, (int, float)):
                text = cell[:-1] if key.endswith('%') else cell
                if auto and key + '_unit' in obj:
                    m = _SUFFIX.search(text)
                    suffix = m.group(1) if m else ''
                    text = text[:len(text) - len(suffix)]
                    # '1.5K' of FLOPs is 'KFLOPs'; '3.0Mi' of bytes 'MiB'
                    assert obj[key + '_unit'].startswith(suffix), key
                # (cells never use str's scientific notation: '1e-05' is
                # written 0.00001)
                assert text == str(value) or (
                    'e' in str(value) and float(text) == value), key
                n_checked += 1
            elif isinstance(value, str):
                # tracebacks too: csv quotes their newlines
                assert cell == value, key
    for key, unit in doc['units'].items():
        title = header[keys.index(key)]
        if key == 'flops':
            assert title == unit
        else:
            assert title.rsplit(' ', 1)[1] == unit, key
    return n_checked


@pytest.mark.parametrize('method,columns,kwargs', SHOWS)
@pytest.mark.parametrize('unit,n_digits', [
    ('autoaligned', 3), ('K', 2), (None, 5), ('auto', 3), ('M', 0)])
def test_json_has_the_csv_numbers(cch, method, columns, kwargs, unit,
                                  n_digits):
    common = dict(columns=columns, unit=unit, n_digits=n_digits,
                  time_unit='us', **kwargs)
    csv_text = _render(cch, method, 'csv', **common)
    json_text = _render(cch, method, 'json', **common)
    assert _same_numbers(csv_text, json_text, unit == 'auto') > 0


@pytest.mark.parametrize('method,columns,kwargs', SHOWS)
def test_json_units_name_every_scaled_column(cch, method, columns, kwargs):
    doc = json.loads(_render(cch, method, 'json', columns=columns,
                             unit='K', n_digits=3, time_unit='ms',
                             **kwargs))
    for c in columns:
        if c == 'flops':
            assert doc['units'][c] == 'KFLOPs'
        elif c in ('mread', 'mwrite', 'mrw'):
            assert doc['units'][c] == 'KiB'
        elif c in TIME_COLUMNS:
            assert doc['units'][c] == 'ms'


def test_show_report_json_figures_through_the_hook(cch):
    doc = json.loads(_render(cch, 'show_report', 'json', unit=None,
                             columns=['name', 'flops', 'mread', 'mwrite',
                                      'phase', 'time']))
    first = doc['rows'][0]
    # Linear 3 -> 4 on 5 rows, FMA: 5*4*3 = 60 products-and-sums plus 5*4
    # = 20 bias adds = 80 FLOPs; reads (5*3 + 4*3 + 4) * 4 = 124 B,
    # writes 5*4*4 = 80 B
    assert (first['name'], first['flops'], first['mread'],
            first['mwrite'], first['phase']) == (
        'LinearFunction-1', 80, 124, 80, 'forward')
    assert first['time'] > 0
    assert doc['rows'][-1]['name'] == 'total'
    phases = {r['phase'] for r in doc['rows'][:-1]}
    assert phases == {'forward', 'backward'}


def test_json_output_is_one_document(cch):
    text = _render(cch, 'show_summary_report', 'json')
    assert text.endswith('}\n')
    doc = json.loads(text)
    assert [r['type'] for r in doc['rows']][-1] == 'total'


def _strict(text):
    """json.loads refusing Infinity, -Infinity and NaN (RFC 8259)."""
    def refuse(name):
        raise ValueError('not strict JSON: ' + name)
    return json.loads(text, parse_constant=refuse)


def test_infinite_params_are_strict_json():
    with ComputationalCostHook(strict=True) as cch:
        F.clip(np.ones((2, 3), np.float32), -np.inf, 6.0)
    doc = _strict(_render(cch, 'show_report', 'json',
                          columns=['name', 'params']))
    assert doc['rows'][0]['params'] == {'min': '-Infinity', 'max': 6.0}
    assert float(doc['rows'][0]['params']['min']) == -np.inf


def _custom(func, in_data, **kwargs):
    return (1, 1, 1, {(1, 2): 'pair', 'nested': {3: [float('nan'),
                                                     float('inf')]}})


def test_params_with_keys_that_are_not_text_are_json():
    from chainer.functions.activation.relu import ReLU
    hook = ComputationalCostHook(strict=True)
    with pytest.warns(UserWarning, match='overriding'):
        hook.add_custom_cost_calculator(ReLU, _custom)
    with hook:
        F.relu(np.ones(2, np.float32))
    doc = _strict(_render(hook, 'show_report', 'json',
                          columns=['name', 'params']))
    # keys as csv shows them: str((1, 2)) and str(3)
    assert doc['rows'][0]['params'] == {
        '(1, 2)': 'pair', 'nested': {'3': ['NaN', 'Infinity']}}


def test_a_non_finite_number_column_is_null_in_every_scaled_column():
    rows = [{'name': 'x', 'flops': float('inf'), 'time': float('nan')}]
    text = rendering.render(rows, ['name', 'flops', 'time'], mode='json',
                            unit=None)
    assert _strict(text)['rows'] == [{'name': 'x', 'flops': None,
                                      'time': None}]


def test_numpy_numbers_in_params_stay_numbers():
    rows = [{'name': 'x', 'params': {'a': np.int64(3), 'b': np.float32(
        0.5), 'c': np.float64('-inf'), 'd': np.bool_(True)}}]
    doc = _strict(rendering.render(rows, ['name', 'params'], mode='json'))
    # np.bool_ is no number: its text, as csv shows it
    assert doc['rows'][0]['params'] == {'a': 3, 'b': 0.5, 'c': '-Infinity',
                                        'd': 'True'}


def test_json_n_digits_none_is_not_rounded():
    # 1024 B / 3 s, exact: rounding to 10 decimals would give
    # 341.3333333333
    doc = json.loads(rendering.render([{'name': 'a', 'bandwidth': 1024 / 3}],
                                      ['name', 'bandwidth'], 'json', None,
                                      None))
    assert doc['rows'][0]['bandwidth'] == 1024 / 3
