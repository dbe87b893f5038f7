"""Aggregation and rendering, on literal records."""

import pytest

from chainer_computational_cost.analysis import aggregation
from chainer_computational_cost.report import rendering
from chainer_computational_cost.core.columns import SUMMARY_COLUMNS
from chainer_computational_cost.core.columns import ReportColumns
from chainer_computational_cost.core.columns import SummaryColumns


def _layer(name, type_, flops, mread, mwrite, params=None):
    return {'name': name, 'type': type_, 'flops': flops, 'mread': mread,
            'mwrite': mwrite, 'traceback': 'tb', 'input_shapes': [(1, 3)],
            'output_shapes': [(1, 3)], 'params': params or {}}


LAYERS = [
    _layer('Conv-1', 'Conv', 3000000000, 2 * 1024 ** 2, 1024 ** 3,
           {'k': 3, 's': 1}),
    _layer('ReLU-1', 'ReLU', 1000000, 1024, 1024),
    _layer('Conv-2', 'Conv', 1000000000, 1024 ** 2, 0),
]


def test_total_report():
    assert aggregation.total_report(LAYERS) == {
        'name': 'total', 'type': 'total', 'n_layers': 3,
        'flops': 4001000000,  # 3e9 + 1e6 + 1e9
        'mread': 3146752,  # 2*1048576 + 1024 + 1048576
        'mwrite': 1073742848,  # 1073741824 + 1024
        'mrw': 1076889600}


def test_layer_report_percentages_and_total():
    r = aggregation.layer_report(LAYERS)
    assert list(r) == ['Conv-1', 'ReLU-1', 'Conv-2', 'total']
    assert list(r['Conv-1']) == [
        'name', 'type', 'flops', 'mread', 'mwrite', 'mrw', 'traceback',
        'input_shapes', 'output_shapes', 'params', 'flops%', 'mread%',
        'mwrite%', 'mrw%']
    assert r['Conv-1']['mrw'] == 2 * 1024 ** 2 + 1024 ** 3
    # 100 * 3e9 / 4.001e9
    assert r['Conv-1']['flops%'] == pytest.approx(74.98125468632842)
    assert r['total']['flops'] == 4001000000
    assert r['total']['flops%'] == 100.0


def test_summary_report_groups_by_type_in_first_call_order():
    r = aggregation.summary_report(LAYERS)
    assert list(r) == ['Conv', 'ReLU', 'total']
    conv = r['Conv']
    assert (conv['type'], conv['name'], conv['n_layers']) == (
        'Conv', 'Conv', 2)
    assert conv['flops'] == 4000000000
    assert conv['mread'] == 3 * 1024 ** 2
    assert conv['mrw'] == 3 * 1024 ** 2 + 1024 ** 3
    assert r['total']['n_layers'] == 3


def test_zero_totals_give_zero_percent():
    r = aggregation.summary_report([_layer('Reshape-1', 'Reshape', 0, 0, 0)])
    assert r['Reshape']['flops%'] == 0.0


def _rows():
    return list(aggregation.summary_report(LAYERS).values())


def test_csv_fixed_unit():
    text = rendering.render(_rows(), SummaryColumns.DEFAULT, 'csv', 'G')
    assert text == (
        'Layer type,# Layers,GFLOPs,MemRead GiB,MemWrite GiB,MemR+W GiB\n'
        # 4e9 / 1e9 = 4.0; 3 MiB / 1 GiB = 0.0029 -> 0.003
        'Conv,2,4.0,0.003,1.0,1.003\n'
        'ReLU,1,0.001,0.0,0.0,0.0\n'
        'total,3,4.001,0.003,1.0,1.003\n')


def test_md_raw_unit():
    rows = list(aggregation.summary_report(LAYERS[1:2]).values())
    text = rendering.render(rows, SummaryColumns.DEFAULT, 'md', None)
    assert text == (
        '|Layer type|# Layers|FLOPs|MemRead B|MemWrite B|MemR+W B|\n'
        '|:----|:----|:----|:----|:----|:----|\n'
        '|ReLU|1|1000000|1024|1024|2048|\n'
        '|total|1|1000000|1024|1024|2048|\n')
    assert rendering.render(rows, SummaryColumns.DEFAULT, 'md', '') == text


def test_autoaligned_picks_prefix_from_largest_value():
    text = rendering.render(_rows(), ['type', 'flops', 'mread'], 'csv',
                            'autoaligned')
    # flops column max 4.001e9 -> G; mread max 3146752 B = 3.0 MiB -> M
    assert text.splitlines() == [
        'Layer type,GFLOPs,MemRead MiB',
        'Conv,4.0,3.0',
        'ReLU,0.001,0.001',
        'total,4.001,3.001']


def test_auto_prefix_per_cell():
    text = rendering.render(_rows(), ['type', 'flops', 'mwrite'], 'csv',
                            'auto', n_digits=2)
    assert text.splitlines() == [
        'Layer type,FLOPs,MemWrite B',
        'Conv,4.0G,1.0Gi',
        'ReLU,1.0M,1.0Ki',
        'total,4.0G,1.0Gi']


def test_percent_columns_and_n_digits():
    text = rendering.render(_rows(), ['type', 'flops%'], 'csv', 'G',
                            n_digits=1)
    # 100 * 4e9 / 4.001e9 = 99.975 -> 100.0; 1e6 / 4.001e9 -> 0.0
    assert text.splitlines() == ['Layer type,FLOPs (%)', 'Conv,100.0%',
                                 'ReLU,0.0%', 'total,100.0%']


def test_n_digits_zero_gives_int_and_none_means_ten():
    rows = list(aggregation.summary_report(LAYERS[1:2]).values())
    assert rendering.render(rows, ['flops'], 'csv', 'M', 0) == \
        'MFLOPs\n1\n1\n'
    text = rendering.render([{'flops': 1}], ['flops'], 'csv', 'K', None)
    assert text == 'KFLOPs\n0.001\n'
    text = rendering.render([{'flops': 1}], ['flops'], 'csv', 'T', 12)
    # 1e-12 rounded to 10 digits
    assert text == 'TFLOPs\n0.0\n'


def test_params_and_shapes_cells():
    rows = list(aggregation.layer_report(LAYERS[:1]).values())
    text = rendering.render(rows, ['name', 'input_shapes', 'params'], 'md',
                            None)
    assert text.splitlines()[2] == '|Conv-1|[(1, 3)]|k=3, s=1|'
    assert text.splitlines()[3] == '|total|||'


def test_csv_quotes_fields_with_commas():
    rows = list(aggregation.layer_report(LAYERS[:1]).values())
    text = rendering.render(rows, ['name', 'params'], 'csv', None)
    assert text.splitlines()[1] == 'Conv-1,"k=3, s=1"'


def test_table_mode_two_header_lines():
    pytest.importorskip('texttable')
    rows = list(aggregation.summary_report(LAYERS[1:2]).values())
    text = rendering.render(rows, ['type', 'mread'], 'table', 'K')
    assert text == (
        '+------------+---------+\n'
        '| Layer type | MemRead |\n'
        '|            |   KiB   |\n'
        '+============+=========+\n'
        '| ReLU       | 1.0     |\n'
        '+------------+---------+\n'
        '| total      | 1.0     |\n'
        '+------------+---------+\n')


def test_predefined_columns():
    assert ReportColumns.DEFAULT == ['name', 'flops', 'mread', 'mwrite',
                                     'mrw']
    assert ReportColumns.DEFAULT_AND_PERCENT[5:] == [
        'flops%', 'mread%', 'mwrite%', 'mrw%']
    assert ReportColumns.ALL[9:] == ['input_shapes', 'output_shapes',
                                     'params']
    assert SummaryColumns.ALL == ['type', 'n_layers', 'flops', 'mread',
                                  'mwrite', 'mrw', 'flops%', 'mread%',
                                  'mwrite%', 'mrw%']


@pytest.mark.parametrize('kwargs, message', [
    ({'mode': 'html'}, 'mode must be one of'),
    ({'mode': None}, 'mode must be one of'),
    ({'unit': 'P'}, 'unit must be one of'),
    ({'unit': 3}, 'unit must be one of'),
    ({'n_digits': -1}, 'must not be negative'),
    ({'n_digits': 2.5}, 'n_digits must be an int'),
    ({'n_digits': True}, 'n_digits must be an int'),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        rendering.render(_rows(), SummaryColumns.DEFAULT, **kwargs)


@pytest.mark.parametrize('columns', [['type', 'foo'], 'type', []])
def test_bad_columns(columns):
    with pytest.raises(ValueError, match='column'):
        rendering.check_columns(columns, SUMMARY_COLUMNS)


def test_index_arrays_in_params_render_on_one_line():
    import numpy as np
    rows = [{'name': 'GetItem-1',
             'params': {'slices': [(0, 2, 1), np.zeros((2, 3), np.int32)],
                        'axis': (1,)}}]
    text = rendering.render(rows, ['name', 'params'], 'md', None)
    assert text.splitlines()[2] == (
        '|GetItem-1|slices=[(0, 2, 1), array(shape=(2, 3), dtype=int32)], '
        'axis=(1,)|')
