"""Rendering as a user reads it: literal rows, the expected text written
out by hand (see benchmarks/mutate.py for how this file is used).

Not tested, as no input tells it apart: the ``default=0`` of the largest
value of a column without numbers ('autoaligned'); any default below 1000
gives that column no prefix.  ``allow_nan=False`` in ``render_json`` is a
guard: every non-finite float is null or a string before ``json.dumps``
sees it (tested above), so no row reaches it.
"""

import collections
import json

import numpy
import pytest

from chainer_computational_cost.report import rendering


def test_each_scaled_column_names_its_unit_and_scales_by_its_base():
    # FLOPs and bandwidths are decimal (1000), bytes binary (1024):
    # 2e9 / 1e9 = 2.0 GFLOPs, 5e12 / 1e9 = 5000.0 GFLOP/s, 9e11 / 1e9 =
    # 900.0 GB/s; 3 * 1024**3 / 1024**3 = 3.0 GiB, 1.0 and 2.0 GiB likewise
    row = {'flops': 2 * 10 ** 9, 'mread': 3 * 1024 ** 3,
           'peak_flops': 5e12, 'bandwidth': 9e11, 'live': 1024 ** 3,
           'comm_bytes': 2 * 1024 ** 3}
    columns = ['flops', 'mread', 'peak_flops', 'bandwidth', 'live',
               'comm_bytes']
    assert rendering.table_cells([row], columns, unit='G') == [
        ['GFLOPs', 'MemRead\nGiB', 'Peak\nGFLOP/s', 'Bandwidth\nGB/s',
         'Live\nGiB', 'Comm\nGiB'],
        ['2.0', '3.0', '5000.0', '900.0', '1.0', '2.0']]
    # raw numbers: no prefix, ints as they are, floats rounded
    assert rendering.table_cells([row], columns, unit=None) == [
        ['FLOPs', 'MemRead\nB', 'Peak\nFLOP/s', 'Bandwidth\nB/s',
         'Live\nB', 'Comm\nB'],
        ['2000000000', '3221225472', '5000000000000.0', '900000000000.0',
         '1073741824', '2147483648']]


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
    with pytest.raises(ValueError, match='must not be negative, got -1'):
        rendering.check_n_digits(-1)


def test_columns_are_checked_against_the_available_ones():
    assert rendering.check_columns(('b', 'a'), ('a', 'b', 'c')) == [
        'b', 'a']
    with pytest.raises(ValueError) as e:
        rendering.check_columns(['a', 'x', 'y'], ('a', 'b'))
    assert str(e.value) == ("unknown column(s) ['x', 'y']; available "
                            "columns are ['a', 'b']")
    for bad in ('a', [], None):
        with pytest.raises(ValueError, match='non-empty list of column '
                           r"names from \['a', 'b'\]"):
            rendering.check_columns(bad, ('a', 'b'))


def test_depth_is_none_or_a_non_negative_int():
    assert rendering.check_depth(None) is None
    assert rendering.check_depth(0) == 0
    got = rendering.check_depth(numpy.int32(2))
    assert (got, type(got)) == (2, int)
    for bad in (-1, True, 1.5, '1'):
        with pytest.raises(ValueError, match='depth must be None or an int '
                           '>= 0'):
            rendering.check_depth(bad)


def test_link_names_are_indented_by_depth():
    nbsp = '\u00a0'
    assert [rendering.indented(p) for p in ('/', 'total', '/a', '/a/b')] \
        == ['/', 'total', nbsp * 2 + 'a', nbsp * 4 + 'b']
