"""Rendering on literal rows, the expected text written out by hand, and
the values every show_* method and the command line share: one check
each, any case, and figures in a unit never written in scientific
notation.

Not tested, as no input tells it apart: the ``default=0`` of the largest
value of a column without numbers ('autoaligned'); any default below 1000
gives that column no prefix.  ``allow_nan=False`` in ``render_json`` is a
guard: every non-finite float is null or a string before ``json.dumps``
sees it (tested above), so no row reaches it.
"""

import collections
import csv
import io
import json

import chainer.functions as F
import numpy
import numpy as np
import pytest

from chainer_computational_cost.analysis import aggregation
from chainer_computational_cost.report import rendering
from chainer_computational_cost.core.columns import SUMMARY_COLUMNS
from chainer_computational_cost.core.columns import ReportColumns
from chainer_computational_cost.core.columns import SummaryColumns
import chainer_computational_cost
from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.core import columns
from chainer_computational_cost.core import devices


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


def test_a_stream_that_cannot_encode_a_name_gets_it_escaped():
    pytest.importorskip('texttable')
    rows = [{'name': 'na\u00efve-layer-1', 'flops': 12},
            {'name': '\u00a0\u00a0sub', 'flops': 3},
            {'name': 'total', 'flops': 15}]
    # an ASCII stream: escaped before the table is laid out (each line as
    # wide as the others), the indent's non-breaking spaces as spaces
    text = rendering.render(rows, ['name', 'flops'], 'table', None,
                            encoding='ascii')
    assert text == (
        '+------------------+-------+\n'
        '|    Layer name    | FLOPs |\n'
        '+==================+=======+\n'
        '| na\\xefve-layer-1 | 12    |\n'
        '+------------------+-------+\n'
        '|   sub            | 3     |\n'
        '+------------------+-------+\n'
        '| total            | 15    |\n'
        '+------------------+-------+\n')
    assert rendering.render(rows, ['name'], 'csv', None,
                            encoding='ascii') == (
        'Layer name\nna\\xefve-layer-1\n  sub\ntotal\n')
    # a stream that encodes them (or no encoding said): as they are
    for encoding in ('utf-8', None):
        assert rendering.render(rows, ['name'], 'csv', None,
                                encoding=encoding).splitlines()[1:3] == [
            'na\u00efve-layer-1', '\u00a0\u00a0sub']


def test_percent_columns_are_titled_by_their_figure():
    rows = list(aggregation.summary_report(LAYERS[1:2]).values())
    text = rendering.render(rows, ['type', 'flops%', 'mread%', 'mwrite%',
                                   'mrw%'], 'md', None)
    assert text.splitlines()[0] == (
        '|Layer type|FLOPs (%)|MemRead (%)|MemWrite (%)|MemR+W (%)|')


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
    ({'n_digits': -1}, r'n_digits must be an int from 0 to 10, got -1$'),
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


def test_numpy_scalars_in_params_render_as_their_numbers_in_every_mode():
    rows = [{'name': 'Custom-1',
             'params': {'np': np.float32(1.5), 'k': np.int64(3),
                        'on': np.bool_(True)}}]
    columns = ['name', 'params']
    assert rendering.render(rows, columns, 'md', None).splitlines()[2] == (
        '|Custom-1|np=1.5, k=3, on=True|')
    assert rendering.render(rows, columns, 'csv', None).splitlines()[1] == (
        'Custom-1,"np=1.5, k=3, on=True"')
    assert rendering.table_cells(rows, columns)[1] == [
        'Custom-1', 'np=1.5, k=3, on=True']
    got = _json(rendering.render(rows, ['params'], 'json'))
    assert got['rows'][0]['params'] == {'np': 1.5, 'k': 3, 'on': 'True'}


def test_each_scaled_column_names_its_unit_and_scales_by_its_base():
    # FLOPs and bandwidths are decimal (1000), bytes binary (1024):
    # 2e9 / 1e9 = 2.0 GFLOPs, 5e12 / 1e9 = 5000.0 GFLOP/s, 9e11 / 1e9 =
    # 900.0 GB/s, 2.5e10 / 1e9 = 25.0 GB/s of bus bandwidth;
    # 3 * 1024**3 / 1024**3 = 3.0 GiB, 1.0 and 2.0 GiB likewise
    row = {'flops': 2 * 10 ** 9, 'mread': 3 * 1024 ** 3,
           'peak_flops': 5e12, 'bandwidth': 9e11, 'live': 1024 ** 3,
           'comm_bytes': 2 * 1024 ** 3, 'bus_bandwidth': 2.5e10}
    columns = ['flops', 'mread', 'peak_flops', 'bandwidth', 'live',
               'comm_bytes', 'bus_bandwidth']
    assert rendering.table_cells([row], columns, unit='G') == [
        ['GFLOPs', 'MemRead\nGiB', 'Peak\nGFLOP/s', 'Bandwidth\nGB/s',
         'Live\nGiB', 'Comm\nGiB', 'Bus bandwidth\nGB/s'],
        ['2.0', '3.0', '5000.0', '900.0', '1.0', '2.0', '25.0']]
    # raw numbers: no prefix, ints as they are, floats rounded
    assert rendering.table_cells([row], columns, unit=None) == [
        ['FLOPs', 'MemRead\nB', 'Peak\nFLOP/s', 'Bandwidth\nB/s',
         'Live\nB', 'Comm\nB', 'Bus bandwidth\nB/s'],
        ['2000000000', '3221225472', '5000000000000.0', '900000000000.0',
         '1073741824', '2147483648', '25000000000.0']]


def test_memory_columns_scale_by_1024():
    # 1536 / 1024 = 1.5 KiB in each of the memory report's columns
    columns = ['bytes', 'activations', 'gradients', 'scratch', 'live']
    row = dict.fromkeys(columns, 1536)
    assert rendering.table_cells([row], columns, unit='K') == [
        ['Bytes\nKiB', 'Activations\nKiB', 'Gradients\nKiB',
         'Scratch\nKiB', 'Live\nKiB'],
        ['1.5'] * 5]


def test_auto_gives_each_cell_its_prefix_from_the_columns_base():
    rows = [{'flops': 1500, 'mread': 1536, 'bandwidth': 2.5e9},
            {'flops': 999, 'mread': 1000, 'bandwidth': 1e3},
            {'flops': 1000, 'mread': 1024, 'live': 3 * 1024 ** 2}]
    cells = rendering.table_cells(rows, ['flops', 'mread', 'bandwidth',
                                         'live'], unit='auto')
    assert cells == [
        ['FLOPs', 'MemRead\nB', 'Bandwidth\nB/s', 'Live\nB'],
        # 1500 / 1000 = 1.5 K; 1536 / 1024 = 1.5 Ki; 2.5e9 / 1e9 = 2.5 G
        ['1.5K', '1.5Ki', '2.5G', ''],
        # below 1000 (1024 for bytes) no prefix; 1e3 B/s is 1.0 K
        ['999', '1000', '1.0K', ''],
        # exactly 1000 and 1024 take the prefix; 3 MiB = 3.0 Mi
        ['1.0K', '1.0Ki', '', '3.0Mi']]


def test_auto_moves_a_cell_that_rounds_to_a_whole_next_prefix_up():
    rows = [{'flops': 999999, 'mread': 1048575},
            {'flops': 999999999, 'mread': 1023},
            {'flops': 999499, 'mread': 1048063}]
    # 999999 / 1000 = 999.999 K, 1000 at 0 decimals: 1 M; 1048575 / 1024
    # = 1023.999 Ki, 1024 at 0 decimals: 1 Mi; 1023 B has no prefix
    assert rendering.table_cells(rows, ['flops', 'mread'], unit='auto',
                                 n_digits=0)[1:] == [
        ['1M', '1Mi'], ['1G', '1023'],
        # 999.499 K rounds to 999 K; 1048063 / 1024 = 1023.499 Ki to 1023
        ['999K', '1023Ki']]
    # 999999999 / 1e6 = 999.999999 M, 1000.0 at 3 decimals: 1.0 G
    assert rendering.table_cells(rows[1:2], ['flops'], unit='auto')[1] == [
        '1.0G']


def test_autoaligned_takes_the_largest_value_of_each_column():
    rows = [{'flops': 2500, 'mread': 512}, {'flops': 7, 'mread': None},
            {'flops': 10 ** 6, 'mread': 2048}]
    # flops: 1e6 -> M (2500 / 1e6 = 0.0025 -> 0.003, 7 -> 0.0 at 3
    # digits); mread: 2048 -> Ki (512 / 1024 = 0.5), None is empty
    assert rendering.table_cells(rows, ['flops', 'mread']) == [
        ['MFLOPs', 'MemRead\nKiB'], ['0.003', '0.5'], ['0.0', ''],
        ['1.0', '2.0']]
    # a column with no number at all has no prefix
    assert rendering.table_cells([{'flops': None}], ['flops']) == [
        ['FLOPs'], ['']]


def test_table_cells_defaults_are_three_digits_ms_and_layer_name():
    rows = [{'name': 'Linear-1', 'flops%': 12.34567, 'time': 0.0123456,
             'efficiency': 0.987654}]
    # 12.34567 -> 12.346 %; 0.0123456 s = 12.3456 ms -> 12.346;
    # 0.987654 -> 0.988
    assert rendering.table_cells(rows, ['name', 'flops%', 'time',
                                        'efficiency']) == [
        ['Layer name', 'FLOPs\n(%)', 'Time\nms', 'Efficiency'],
        ['Linear-1', '12.346%', '12.346', '0.988']]


def test_time_columns_follow_the_time_unit():
    rows = [{'time': 0.25, 't_step_overlap': 2.0}]
    columns = ['time', 't_step_overlap']
    # 0.25 s = 250 ms = 250000 us; 2 s = 2000 ms = 2e6 us
    assert rendering.table_cells(rows, columns, time_unit='s') == [
        ['Time\ns', 'T step\n(overlap)\ns'], ['0.25', '2.0']]
    assert rendering.table_cells(rows, columns, time_unit='ms') == [
        ['Time\nms', 'T step\n(overlap)\nms'], ['250.0', '2000.0']]
    assert rendering.table_cells(rows, columns, time_unit='us') == [
        ['Time\nus', 'T step\n(overlap)\nus'], ['250000.0', '2000000.0']]


def test_the_name_column_takes_the_reports_title():
    cells = rendering.table_cells([{'name': '/'}], ['name'],
                                  name_title='Link')
    assert cells == [['Link'], ['/']]


def test_cells_without_a_value_are_empty_and_zero_is_zero():
    rows = [{'name': 'a', 'flops': 0, 'time': 0.0, 'n_calls': 0},
            {'name': 'b'}]
    columns = ['name', 'flops', 'time', 'n_calls', 'params',
               'input_shapes']
    assert rendering.table_cells(rows, columns, unit='K')[1:] == [
        ['a', '0.0', '0.0', '0', '', ''], ['b', '', '', '', '', '']]


def test_numbers_are_never_in_scientific_notation():
    # str() would give '1e+16' and '8e-05'
    rows = [{'flops': 1e16, 'mrw%': 8e-05}]
    assert rendering.table_cells(rows, ['flops', 'mrw%'], unit=None,
                                 n_digits=5)[1] == [
        '10000000000000000.0', '0.00008%']


def test_a_large_float_shows_its_own_digits():
    # 3e30 FLOPs in K is the float 3e27, whose binary expansion
    # 2999999999999999764984758272.0 was shown as if exact
    rows = [{'flops': 3 * 10 ** 30, 'mread': 2.5e20}]
    assert rendering.table_cells(rows, ['flops', 'mread'], unit='K',
                                 n_digits=3)[1] == [
        '3000000000000000000000000000.0',
        # 2.5e20 / 1024 = 244140625000000000 exactly
        '244140625000000000.0']


def test_shapes_and_params_cells():
    rows = [{'input_shapes': [(2, 3), None, [4]],
             'params': {'ksize': (3,), 'pads': [], 'cover_all': False,
                        'axes': (0, 1)}}]
    assert rendering.table_cells(rows, ['input_shapes', 'params'])[1] == [
        '[(2, 3), None, (4,)]',
        'ksize=(3,), pads=[], cover_all=False, axes=(0, 1)']


def test_csv_header_on_one_line():
    rows = [{'name': 'x', 'mread': 2048, 'time': 0.001}]
    text = rendering.render(rows, ['name', 'mread', 'time'], 'csv', 'K')
    # 2048 / 1024 = 2.0 KiB; 0.001 s = 1.0 ms
    assert text == 'Layer name,MemRead KiB,Time ms\nx,2.0,1.0\n'


def test_csv_quotes_what_would_break_a_field():
    rows = [{'name': 'a "b"'}, {'name': 'c\nd'}]
    text = rendering.render(rows, ['name'], 'csv')
    assert text == 'Layer name\n"a ""b"""\n"c\nd"\n'


def test_md_escapes_cells_and_flattens_headers():
    # a lone carriage return ends a line too (CommonMark 0.31, "line
    # ending"): it would split the row as a newline does
    rows = [{'name': 'a|b', 'type': 'c\\d'},
            {'name': 'e\nf', 'type': 'g\r\nh'}, {'name': 'i\rj'}]
    text = rendering.render(rows, ['name', 'type', 'flops%'], 'md')
    assert text == (
        '|Layer name|Layer type|FLOPs (%)|\n'
        '|:----|:----|:----|\n'
        '|a\\|b|c\\\\d||\n'
        '|e<br>f|g<br>h||\n'
        '|i<br>j|||\n')


def test_md_cell_ending_with_a_backslash_stays_one_cell():
    # 'x\\' was written 'x\\\\|': a parser takes any backslash before a
    # '|' as its escape, and the row's cells merged, one column short
    rows = [{'name': 'x\\', 'type': 'ReLU'}, {'name': 'y\\\\', 'type': 'Add'}]
    text = rendering.render(rows, ['name', 'type'], 'md')
    assert text.splitlines()[2:] == ['|x&#92;|ReLU|', '|y\\\\&#92;|Add|']
    markdown_it = pytest.importorskip('markdown_it')
    html = markdown_it.MarkdownIt().enable('table').render(text).replace(
        '\n', '').replace(' style="text-align:left"', '')
    assert html.count('<td>') == 4
    assert '<td>x\\</td><td>ReLU</td>' in html
    assert '<td>y\\\\</td><td>Add</td>' in html


def test_table_keeps_two_line_headers():
    # texttable centres the header cells
    pytest.importorskip('texttable')
    rows = [{'name': 'Linear-1', 'time': 0.5}]
    assert rendering.render(rows, ['name', 'time'], 'table',
                            time_unit='s') == (
        '+------------+------+\n'
        '| Layer name | Time |\n'
        '|            |  s   |\n'
        '+============+======+\n'
        '| Linear-1   | 0.5  |\n'
        '+------------+------+\n')


def _json(text):
    assert text.endswith('}\n')
    return json.loads(text, object_pairs_hook=collections.OrderedDict)


def test_json_numbers_units_and_structure():
    rows = [{'name': 'Conv-1', 'flops': 1500, 'mread': 2048, 'time': 0.25,
             'flops%': 12.34567, 'input_shapes': [(1, 3), None],
             'params': {'k': (3, 3)}, 'n_calls': 2}]
    columns = ['name', 'flops', 'mread', 'time', 'flops%', 'input_shapes',
               'params', 'n_calls']
    got = _json(rendering.render(rows, columns, 'json', 'K', 2, 'ms'))
    # 1500 / 1000 = 1.5 K; 2048 / 1024 = 2.0 KiB; 0.25 s = 250 ms;
    # 12.34567 -> 12.35
    assert got == {
        'units': {'flops': 'KFLOPs', 'mread': 'KiB', 'time': 'ms'},
        'rows': [{'name': 'Conv-1', 'flops': 1.5, 'mread': 2.0,
                  'time': 250.0, 'flops%': 12.35,
                  'input_shapes': [[1, 3], None], 'params': {'k': [3, 3]},
                  'n_calls': 2}]}
    assert list(got['rows'][0]) == columns
    assert list(got) == ['units', 'rows']


def test_json_text_indents_one_space_a_level():
    # the layout docs/cli.md shows
    text = rendering.render([{'name': 'a', 'flops': 7}], ['name', 'flops'],
                            'json', None)
    assert text == ('{\n'
                    ' "units": {\n'
                    '  "flops": "FLOPs"\n'
                    ' },\n'
                    ' "rows": [\n'
                    '  {\n'
                    '   "name": "a",\n'
                    '   "flops": 7\n'
                    '  }\n'
                    ' ]\n'
                    '}\n')


def test_json_raw_units_name_every_scaled_column():
    rows = [{'flops': 7, 'mwrite': 9, 'peak_flops': 1e12,
             'bandwidth': 2e11, 'time': 0.5}]
    columns = ['flops', 'mwrite', 'peak_flops', 'bandwidth', 'time']
    got = _json(rendering.render(rows, columns, 'json', None,
                                 time_unit='us'))
    assert got == {
        'units': {'flops': 'FLOPs', 'mwrite': 'B', 'peak_flops': 'FLOP/s',
                  'bandwidth': 'B/s', 'time': 'us'},
        # 0.5 s = 500000 us
        'rows': [{'flops': 7, 'mwrite': 9, 'peak_flops': 1e12,
                  'bandwidth': 2e11, 'time': 500000.0}]}


def test_json_auto_gives_each_value_its_unit():
    rows = [{'flops': 1500, 'mread': 512, 'bandwidth': 2e9,
             'peak_flops': 3e12},
            {'flops': None, 'mread': 3 * 1024 ** 2, 'bandwidth': 10,
             'peak_flops': 2e6}]
    columns = ['flops', 'mread', 'bandwidth', 'peak_flops']
    got = _json(rendering.render(rows, columns, 'json', 'auto'))
    assert got == {'units': {}, 'rows': [
        # 1.5 K, 512 B, 2e9 / 1e9 = 2.0 G, 3e12 / 1e12 = 3.0 T
        {'flops': 1.5, 'flops_unit': 'KFLOPs', 'mread': 512,
         'mread_unit': 'B', 'bandwidth': 2.0, 'bandwidth_unit': 'GB/s',
         'peak_flops': 3.0, 'peak_flops_unit': 'TFLOP/s'},
        # no value: no unit; 3 MiB = 3.0 MiB; 2e6 / 1e6 = 2.0 M
        {'flops': None, 'mread': 3.0, 'mread_unit': 'MiB',
         'bandwidth': 10, 'bandwidth_unit': 'B/s', 'peak_flops': 2.0,
         'peak_flops_unit': 'MFLOP/s'}]}


def test_json_autoaligned_units_per_column():
    rows = [{'flops': 2500, 'live': 512}, {'flops': 3 * 10 ** 6,
                                           'live': 4096}]
    got = _json(rendering.render(rows, ['flops', 'live'], 'json'))
    # largest 3e6 -> M: 2500 / 1e6 = 0.0025 -> 0.003 (3 digits), 3.0;
    # largest 4096 -> Ki: 0.5, 4.0
    assert got == {'units': {'flops': 'MFLOPs', 'live': 'KiB'},
                   'rows': [{'flops': 0.003, 'live': 0.5},
                            {'flops': 3.0, 'live': 4.0}]}


def test_json_without_n_digits_keeps_figures_whole():
    rows = [{'flops': 1, 'efficiency': 1 / 3, 'time': 0.001}]
    got = _json(rendering.render(rows, ['flops', 'efficiency', 'time'],
                                 'json', 'K', None, 's'))
    assert got['rows'] == [{'flops': 0.001, 'efficiency': 1 / 3,
                            'time': 0.001}]
    # in text the same None is the most digits, 10
    assert rendering.render(rows, ['efficiency'], 'csv', None, None) == \
        'Efficiency\n0.3333333333\n'


def test_json_params_are_strict_json():
    rows = [{'params': {'lo': -numpy.inf, 'hi': float('inf'),
                        'x': float('nan'), 'n': numpy.int64(3),
                        'f': numpy.float32(0.5), 2: 'two', 'on': True,
                        'none': None, 'obj': object}}]
    got = _json(rendering.render(rows, ['params'], 'json'))
    assert got['rows'][0]['params'] == {
        'lo': '-Infinity', 'hi': 'Infinity', 'x': 'NaN', 'n': 3, 'f': 0.5,
        '2': 'two', 'on': True, 'none': None, 'obj': "<class 'object'>"}


@pytest.mark.parametrize('given, mode', [
    ('CSV', 'csv'), ('Md', 'md'), ('table', 'table'), ('JSON', 'json')])
def test_modes_in_any_case(given, mode):
    assert rendering.check_mode(given) == mode


def test_a_bad_mode_names_the_allowed_ones():
    with pytest.raises(ValueError) as e:
        rendering.check_mode('html', '--mode')
    assert str(e.value) == ("--mode must be one of 'csv', 'md', 'table', "
                            "'json', got 'html'")


@pytest.mark.parametrize('given, unit', [
    (None, None), ('', None), ('raw', None), ('RAW', None), ('None', None),
    ('k', 'K'), ('G', 'G'), ('t', 'T'), ('AUTO', 'auto'),
    ('AutoAligned', 'autoaligned')])
def test_units_in_any_case(given, unit):
    assert rendering.check_unit(given) == unit


def test_a_bad_unit_names_the_allowed_ones():
    with pytest.raises(ValueError) as e:
        rendering.check_unit('P')
    assert str(e.value) == (
        "unit must be one of 'raw', 'K', 'M', 'G', 'T', 'autoaligned', "
        "'auto' (any case) or None, got 'P'")


def test_time_units_in_any_case():
    assert [rendering.check_time_unit(u) for u in ('S', 'Ms', 'us')] == [
        's', 'ms', 'us']
    with pytest.raises(ValueError, match="time_unit must be one of 's', "
                       "'ms', 'us', got 'h'"):
        rendering.check_time_unit('h')


def test_n_digits_bounds():
    assert rendering.check_n_digits(None) == 10
    assert rendering.check_n_digits(0) == 0
    assert rendering.check_n_digits(10, above=False) == 10
    # the API takes more than 10 as 10 (0.1.2 did); the command line not
    assert rendering.check_n_digits(12) == 10
    with pytest.raises(ValueError, match='--n-digits must be an int from '
                       '0 to 10, got 11'):
        rendering.check_n_digits(11, '--n-digits', above=False)
    got = rendering.check_n_digits(numpy.int64(4))
    assert (got, type(got)) == (4, int)
    # a negative count says what is allowed, as too large a one does
    for above in (True, False):
        with pytest.raises(ValueError) as e:
            rendering.check_n_digits(-1, above=above)
        assert type(e.value) is ValueError
        assert str(e.value) == 'n_digits must be an int from 0 to 10, got -1'


@pytest.mark.parametrize('bad', ['3', 2.0, True, numpy.float64(3), [3]])
def test_n_digits_of_the_wrong_type_is_a_type_error(bad):
    # checks.integer's rule: the wrong type is a TypeError (and still a
    # ValueError, which the command line catches)
    with pytest.raises(TypeError) as e:
        rendering.check_n_digits(bad)
    assert str(e.value) == 'n_digits must be an int from 0 to 10, got ' \
        '{!r}'.format(bad)
    assert isinstance(e.value, ValueError)


def test_columns_are_checked_against_the_available_ones():
    assert rendering.check_columns(('b', 'a'), ('a', 'b', 'c')) == [
        'b', 'a']
    with pytest.raises(ValueError) as e:
        rendering.check_columns(['a', 'x', 'y'], ('a', 'b'))
    assert str(e.value) == ("unknown column(s) ['x', 'y']; available "
                            "columns are ['a', 'b']")
    for bad, error in (('a', TypeError), ([], ValueError),
                       (None, TypeError), (0, TypeError), ({}, TypeError),
                       ('', TypeError), ((), ValueError)):
        with pytest.raises(error) as e:
            rendering.check_columns(bad, ('a', 'b'))
        assert str(e.value) == ("columns must be a non-empty list of column "
                                "names from ['a', 'b'], got {!r}".format(bad))
    # None means the default where there is one; an empty list never does
    assert rendering.check_columns(None, ('a', 'b'), ('b',)) == ['b']
    with pytest.raises(ValueError, match=r'non-empty list .* got \[\]'):
        rendering.check_columns([], ('a', 'b'), ('b',))


def test_a_column_given_twice_is_refused():
    # md would show it twice, json once: every entry point refuses it
    with pytest.raises(ValueError) as e:
        rendering.check_columns(('b', 'a', 'b', 'a', 'c'), ('a', 'b', 'c'))
    assert str(e.value) == ("columns ['b', 'a', 'b', 'a', 'c'] names 'b', "
                            "'a' more than once: each column is shown once")


def test_depth_is_none_or_a_non_negative_int():
    assert rendering.check_depth(None) is None
    assert rendering.check_depth(0) == 0
    got = rendering.check_depth(numpy.int32(2))
    assert (got, type(got)) == (2, int)
    for bad, error in ((-1, ValueError), (True, TypeError),
                       (1.5, TypeError), ('1', TypeError)):
        with pytest.raises(error) as e:
            rendering.check_depth(bad)
        assert str(e.value) == 'depth must be None or an int >= 0, got ' \
            '{!r}'.format(bad)


def test_link_names_are_indented_by_depth():
    nbsp = '\u00a0'
    assert [rendering.indented(p) for p in ('/', 'total', '/a', '/a/b')] \
        == ['/', 'total', nbsp * 2 + 'a', nbsp * 4 + 'b']


@pytest.fixture
def cch():
    with ComputationalCostHook() as hook:
        F.relu(np.zeros((2, 3), np.float32))
    return hook


def shown(cch, **kwargs):
    out = io.StringIO()
    cch.show_report(ost=out, columns=['name', 'flops'], **kwargs)
    return out.getvalue().splitlines()


@pytest.mark.parametrize('unit, header, cell', [
    # 6 FLOPs of a ReLU on 2x3
    ('RAW', 'FLOPs', '6'), ('none', 'FLOPs', '6'), ('k', 'KFLOPs', '0.006'),
    ('AUTO', 'FLOPs', '6'), ('AutoAligned', 'FLOPs', '6')])
def test_show_report_takes_units_in_any_case(cch, unit, header, cell):
    assert shown(cch, unit=unit, mode='csv')[:2] == [
        'Layer name,' + header, 'ReLU-1,' + cell]


def test_show_report_takes_modes_in_any_case(cch):
    assert shown(cch, mode='MD')[2] == '|ReLU-1|6|'


def test_check_unit_names_the_option():
    with pytest.raises(ValueError) as e:
        rendering.check_unit('X', '--unit')
    assert str(e.value) == (
        "--unit must be one of 'raw', 'K', 'M', 'G', 'T', 'autoaligned', "
        "'auto' (any case) or None, got 'X'")


def test_n_digits_5_is_not_scientific(cch):
    # 6 FLOPs = 0.000006 M: 0.00001 at 5 decimals (str() gives '1e-05')
    assert shown(cch, unit='M', mode='md', n_digits=5)[2] == '|ReLU-1|0.00001|'
    assert shown(cch, unit='M', mode='md', n_digits=6)[2] == \
        '|ReLU-1|0.000006|'


@pytest.mark.parametrize('value, n_digits, text', [
    (8e-05, 5, '0.00008'), (1.85, 3, '1.85'), (0.0, 3, '0.0'),
    (1e16, 3, '10000000000000000.0'), (123.456789, 10, '123.456789'),
    (2.5e-10, 10, '0.0000000003'), (-3e-05, 5, '-0.00003'), (7.6, 0, '8')])
def test_number_text(value, n_digits, text):
    assert rendering._number(value, n_digits) == text


def test_auto_unit_is_not_scientific():
    rows = [{'name': 'a', 'flops': 0.00002}]
    # 2e-05 FLOPs, no prefix, 5 decimals
    assert rendering.render(rows, ['flops'], 'csv', 'auto', 5) == \
        'FLOPs\n0.00002\n'


def test_roofline_columns_are_exported():
    assert chainer_computational_cost.RooflineColumns is \
        columns.RooflineColumns


def test_device_names_in_any_case():
    assert devices.resolve_device('A100') is devices.DEVICES['a100']


def test_a_tiny_efficiency_never_shows_as_0():
    # an efficiency of 2.6e-5 (the 3-4-2 MLP over 8 workers) rounded to
    # 3 decimals was 0.0; a figure of no unit keeps 3 significant digits
    # instead, in every mode; one in a unit (ms here) rounds as before
    rows = [{'workers': 8, 'efficiency': 2.6048e-05, 't_step': 1e-7}]
    cols = ['workers', 'efficiency', 't_step']
    assert rendering.render(rows, cols, 'csv') == \
        'Workers,Efficiency,T step ms\n8,2.6e-05,0.0\n'
    assert '|8|2.6e-05|0.0|' in rendering.render(rows, cols, 'md')
    doc = json.loads(rendering.render(rows, cols, 'json'))
    assert doc['rows'][0]['efficiency'] == 2.6e-05
    assert json.loads(rendering.render(rows, cols, 'json', n_digits=None))[
        'rows'][0]['efficiency'] == 2.6048e-05
    # 0.5 to no decimals is 0 (banker's rounding): one significant digit
    assert rendering.render([{'efficiency': 0.5}], ['efficiency'],
                            'csv', n_digits=0) == 'Efficiency\n0.5\n'
    # a figure that rounds to more than 0 is unchanged; 0 is 0
    assert rendering.render([{'efficiency': 0.25}, {'efficiency': 0.0}],
                            ['efficiency'], 'csv', n_digits=1) == \
        'Efficiency\n0.2\n0.0\n'


def test_csv_quotes_a_lone_carriage_return():
    # a line break inside a field, '\r' alone too, is quoted (RFC 4180):
    # csv.reader then reads two fields on one row back
    rows = [{'name': 'My\rOp-1', 'params': {'note': 'line1\rline2'}},
            {'name': 'B-1', 'params': {'note': 'a\nb'}}]
    text = rendering.render(rows, ['name', 'params'], 'csv', None)
    assert text == ('Layer name,Function parameters\n'
                    '"My\rOp-1","note=line1\rline2"\n'
                    'B-1,"note=a\nb"\n')
    assert list(csv.reader(io.StringIO(text, newline=''))) == [
        ['Layer name', 'Function parameters'],
        ['My\rOp-1', 'note=line1\rline2'], ['B-1', 'note=a\nb']]


def test_an_array_param_has_the_same_text_in_every_mode():
    # never NumPy's text, which abridges 1500 entries with '...'
    rows = [{'name': 'GetItem-1',
             'params': {'slices': [np.arange(1500, dtype=np.int32)],
                        'mask': np.zeros((2, 3), np.bool_)}}]
    text = ('slices=[array(shape=(1500,), dtype=int32)], '
            'mask=array(shape=(2, 3), dtype=bool)')
    assert rendering.table_cells(rows, ['params'], None)[1] == [text]
    assert rendering.render(rows, ['params'], 'csv', None) == (
        'Function parameters\n"' + text + '"\n')
    got = _json(rendering.render(rows, ['params'], 'json', None))
    assert got['rows'][0]['params'] == {
        'slices': ['array(shape=(1500,), dtype=int32)'],
        'mask': 'array(shape=(2, 3), dtype=bool)'}


class _Unprintable(object):

    def __str__(self):
        raise RuntimeError('boom')


def test_a_param_whose_str_raises_shows_as_its_safe_text_in_every_mode():
    rows = [{'name': 'A-1', 'params': {'tag': _Unprintable(),
                                       _Unprintable(): [_Unprintable()]}}]
    text = ('tag=<unprintable _Unprintable object>, '
            '<unprintable _Unprintable object>='
            '[<unprintable _Unprintable object>]')
    assert rendering.table_cells(rows, ['params'], None)[1] == [text]
    assert rendering.render(rows, ['params'], 'csv', None) == (
        'Function parameters\n"' + text + '"\n')
    assert rendering.render(rows, ['params'], 'md', None).splitlines()[
        2] == '|' + text + '|'
    got = _json(rendering.render(rows, ['params'], 'json', None))
    assert list(got['rows'][0]['params'].values()) == [
        '<unprintable _Unprintable object>',
        ['<unprintable _Unprintable object>']]


def test_figures_past_a_float_are_exact_raw_and_refused_in_a_unit():
    # 10**400 FLOPs: an exact int (a projection to a huge batch) that no
    # float holds, nor 10**400 / 1000**4 (1e388) in TFLOPs
    rows = [{'name': 'ReLU-1', 'flops': 10 ** 400, 'flops%': 100.0}]
    assert rendering.render(rows, ['name', 'flops', 'flops%'], 'csv',
                            None) == (
        'Layer name,FLOPs,FLOPs (%)\nReLU-1,1' + '0' * 400 + ',100.0%\n')
    got = _json(rendering.render(rows, ['flops'], 'json', None, None))
    assert got['rows'] == [{'flops': 10 ** 400}]
    message = (r"^row 'ReLU-1': its flops \(a 401-digit figure\) is beyond "
               r"a float's range in unit '{}': show the report with "
               r"unit=None \(the exact figures\){}$")
    for mode in ('csv', 'md', 'json'):
        with pytest.raises(ValueError, match=message.format('T', '')):
            rendering.render(rows, ['name', 'flops'], mode, 'T')
        with pytest.raises(ValueError, match=message.format('auto', '')):
            rendering.render(rows, ['name', 'flops'], mode, 'auto')
    # 'K' to 'G' have a larger unit to suggest
    with pytest.raises(ValueError, match=message.format(
            'G', ' or a larger unit')):
        rendering.render(rows, ['name', 'flops'], 'csv', 'G')


@pytest.mark.parametrize('mode', ['csv', 'md', 'json'])
def test_a_time_beyond_a_float_in_the_time_unit_is_a_one_line_error(mode):
    # 1e308 s is a float; in ms, 1e308 x 1e3 = 1e311 is not: an error
    # naming the row, the column and the way out, never 'inf' (nor null)
    rows = [{'name': 'slow', 't_predicted': 1e308}]
    with pytest.raises(ValueError, match=r"^row 'slow': its t_predicted "
                       r"\(1e\+308 s\) is beyond a float's range in ms: "
                       r"show the report in seconds \(time_unit='s'"):
        rendering.render(rows, ['name', 't_predicted'], mode,
                         time_unit='ms')
    text = rendering.render(rows, ['name', 't_predicted'], mode,
                            time_unit='s')
    assert 'slow' in text and 'inf' not in text.lower()


def test_a_scaling_row_beyond_a_float_is_named_by_its_workers():
    rows = [{'workers': 8, 't_step': 1e307}]
    with pytest.raises(ValueError, match=r"^the row of 8 workers: its "
                       r"t_step \(1e\+307 s\) is beyond a float's range "
                       r"in us"):
        rendering.render(rows, ['workers', 't_step'], 'csv', time_unit='us')


def test_text_for_streams_of_unusual_encodings():
    text = 'a\u00a0b \u2264'
    # an encoding Python does not know, or none: written as it is
    assert rendering.encodable(text, 'no-such-codec') == text
    assert rendering.encodable(text, None) == text
    # a sign it cannot encode: escaped, and the link report's indent as
    # plain spaces
    assert rendering.encodable(text, 'ascii') == 'a b \\u2264'
    assert rendering.encodable(text, 'latin-1') == 'a b \\u2264'
    # utf-8 encodes everything: unchanged
    assert rendering.encodable(text, 'utf-8') == text
