"""The calibration as a user reads it: the matrix-product table's times,
the features of each kind of call, the fits' coefficients on literal
timings, the flags, the file and the time report (worked by hand; see
benchmarks/mutate.py for how this file is used).

Nothing here times anything.

Equivalent mutants: in ``GemmTable._position``, ``x < logs[0]`` for
``x <= logs[0]`` sends a dimension on the first grid point to the
bisection, which gives ``i = -1`` and a weight of 1 on point 0: the same
speed.  In ``nnls``, scaling all-zero columns by 0.5 instead of 1 leaves
them zero (their coefficient stays 0), and subsets from size 0 add an
empty fit whose residual is never below the starting one.
"""

import json
import re

import pytest

from chainer_computational_cost.analysis import calibration as cal
from chainer_computational_cost import Calibration
from test_calibration import _add
from test_calibration import _calibration
from test_calibration import _flat_table
from test_calibration import _math_fit
from test_calibration import OVERHEAD


# The matrix-product table


def test_the_table_interpolates_each_dimension_on_its_own():
    # speed[i][j][k] = 1e9 * 2**i * 3**j * 5**k at dims 1 and 4: a
    # product long in one dimension runs at that dimension's speed.
    speed = [[[1e9 * 2 ** i * 3 ** j * 5 ** k for k in (0, 1)]
              for j in (0, 1)] for i in (0, 1)]
    table = cal.GemmTable([1, 4], speed)
    # 4x1x1: 4 / 2e9; 1x4x1: 4 / 3e9; 1x1x4: 4 / 5e9; 4x4x4: 64 / 30e9.
    assert table.time(4, 1, 1) == pytest.approx(2e-9, rel=1e-12)
    assert table.time(1, 4, 1) == pytest.approx(4 / 3e9, rel=1e-12)
    assert table.time(1, 1, 4) == pytest.approx(8e-10, rel=1e-12)
    assert table.time(4, 4, 4) == pytest.approx(64 / 30e9, rel=1e-12)
    # K = 2, halfway in log: speed sqrt(1e9 * 5e9), 2 / that.
    assert table.time(1, 1, 2) == pytest.approx(2 / 5e9 ** 0.5 / 1e9 ** 0.5,
                                                rel=1e-12)
    assert table.peak() == 30e9


def test_the_table_finds_the_cell_of_a_dimension_among_several():
    # Dims 1, 4, 16 in M at 1e9, 2e9, 8e9: M = 8 is halfway (in log)
    # between 4 and 16, speed sqrt(2e9 * 8e9) = 4e9: 8 / 4e9 = 2e-9 s;
    # M = 2 is halfway between 1 and 4: sqrt(2) * 1e9, 2 / that.
    speed = [[[s] * 3] * 3 for s in (1e9, 2e9, 8e9)]
    table = cal.GemmTable([1, 4, 16], speed)
    assert table.time(8, 1, 1) == pytest.approx(2e-9, rel=1e-12)
    assert table.time(2, 1, 1) == pytest.approx(2 / (2 ** 0.5 * 1e9),
                                                rel=1e-12)
    # On the grid's inner point and beyond its edge (the edge's speed).
    assert table.time(4, 16, 1) == pytest.approx(64 / 2e9, rel=1e-12)
    assert table.time(64, 1, 1) == pytest.approx(64 / 8e9, rel=1e-12)


# What each kind of call is measured by


def test_each_kind_of_fit_names_its_features_in_order():
    # What a fit's coefficients in the file stand for, in their order:
    # the features of a convolution type, a matrix family and the rest.
    assert cal.CONVOLUTION_FEATURES == ('const', 'gemm', 'bytes', 'col',
                                        'cold', 'rows', 'window')
    assert cal.MATRIX_FEATURES == ('const', 'gemm', 'bytes', 'col', 'cold')
    assert cal.OTHER_FEATURES == ('const', 'mread', 'mwrite', 'flops',
                                  'cold')


def test_the_products_of_linear_gradients_and_matmuls():
    # LinearGradData: W (3, 7), gy (5, 3): gx (5 x 7) = gy (5 x 3) W:
    # M = 15 / 3 = 5, N = 7, K = 3.
    assert cal.gemm_shape({'type': 'LinearGradData',
                           'input_shapes': [(3, 7), (5, 3)],
                           'output_shapes': [(5, 7)]}) == (1, 5, 7, 3, 0)
    # LinearGradWeight: x (5, 7), gy (5, 3): gW (3 x 7) = gy^T x, K = 5.
    assert cal.gemm_shape({'type': 'LinearGradWeight',
                           'input_shapes': [(5, 7), (5, 3)],
                           'output_shapes': [(3, 7)]}) == (1, 3, 7, 5, 0)
    # A linear layer on x (2, 5, 7): M = 70 / 7 = 10 rows.
    assert cal.gemm_shape({'type': 'LinearFunction',
                           'input_shapes': [(2, 5, 7), (3, 7)],
                           'output_shapes': [(10, 3)]}) == (1, 10, 3, 7, 0)
    # a (4, 5) times b (5, 9): one 4x9 product over K = 20 / 4 = 5.
    assert cal.gemm_shape({'type': 'MatMul',
                           'input_shapes': [(4, 5), (5, 9)],
                           'output_shapes': [(4, 9)]}) == (1, 4, 9, 5, 0)
    # A row vector a (1, 5) times b (5, 9): one 1x9 product, K = 5.
    assert cal.gemm_shape({'type': 'MatMul',
                           'input_shapes': [(1, 5), (5, 9)],
                           'output_shapes': [(1, 9)]}) == (1, 1, 9, 5, 0)
    # A vector a (5,) times b (5, 9) into y (9,): the same product.
    assert cal.gemm_shape({'type': 'MatMul',
                           'input_shapes': [(5,), (5, 9)],
                           'output_shapes': [(9,)]}) == (1, 1, 9, 5, 0)
    # a (2, 3, 4, 6) @ b (2, 3, 6, 5): 2*3 = 6 products of 4x5 over K =
    # 144 / (6 * 4) = 6.
    assert cal.gemm_shape({'type': 'MatMul',
                           'input_shapes': [(2, 3, 4, 6), (2, 3, 6, 5)],
                           'output_shapes': [(2, 3, 4, 5)]}) == \
        (6, 4, 5, 6, 0)
    # An empty product, a (0, 5) @ b (5, 9): no rows, no time.
    empty = {'type': 'MatMul', 'phase': 'forward', 'flops': 0,
             'mread': 180, 'mwrite': 0, 'input_shapes': [(0, 5), (5, 9)],
             'output_shapes': [(0, 9)], 'dtype': 'float32'}
    assert cal.features(empty, _flat_table().time) == [
        1.0, 0.0, 180.0, 0.0, 0.0]
    # A type that runs no product, and shapes that do not say.
    assert cal.gemm_shape({'type': 'Add', 'input_shapes': [(2,), (2,)],
                           'output_shapes': [(2,)]}) is None
    assert cal.gemm_shape({'type': 'MatMul', 'input_shapes': [(5, 9)],
                           'output_shapes': [()]}) is None


# A convolution of x (2, 3, 8, 12) by W (4, 3, 1, 3), stride 2, pad
# (0, 1): y (2, 4, 4, 6).  im2col holds 2*3*1*3*4*6 = 432 elements.
_X, _W, _Y = (2, 3, 8, 12), (4, 3, 1, 3), (2, 4, 4, 6)


def _conv(type, ins, outs):
    return {'type': type, 'phase': 'forward', 'flops': 0, 'mread': 100,
            'mwrite': 20, 'input_shapes': ins, 'output_shapes': outs,
            'dtype': 'float32'}


def test_each_convolution_type_by_hand():
    time = _flat_table().time  # 1e9 multiply-adds a second
    # Forward: M = 2*4*6 = 48 output pixels, N = 4 filters, K = 3*1*3 =
    # 9: 1728 multiply-adds, 1.728e-6 s; bytes 120; im2col 432 float32 =
    # 1728 bytes in rows of y's width 6: 72; the window 1*3 = 3.
    forward = _conv('Convolution2DFunction', [_X, _W], [_Y])
    assert cal.gemm_shape(forward) == (1, 48, 4, 9, 432)
    assert cal.features(forward, time) == pytest.approx(
        [1.0, 1.728e-6, 120.0, 1728.0, 0.0, 72.0, 3.0])
    # Weight gradient: gW (4 x 9) = gy^T (4 x 48) col (48 x 9); its
    # im2col of x is laid out over gy's width 6: 72 rows.
    grad_w = _conv('Convolution2DGradW', [_X, _Y], [_W])
    assert cal.gemm_shape(grad_w) == (1, 4, 9, 48, 432)
    assert cal.features(grad_w, time)[5:] == [72.0, 3.0]
    # Input gradient: col (9 x 48) = W^T (9 x 4) gy (4 x 48), then
    # col2im of 9*48 = 432 elements over gy's width 6: 72 rows.
    grad_x = _conv('Deconvolution2DFunction', [_Y, _W], [_X])
    assert cal.gemm_shape(grad_x) == (1, 9, 48, 4, 432)
    assert cal.features(grad_x, time)[5:] == [72.0, 3.0]
    # A convolution into a one-pixel-wide image, x (1, 2, 3, 3) by W (4,
    # 2, 3, 3) without padding into y (1, 4, 1, 1): im2col holds 2*3*3 =
    # 18 elements, one row of width 1 each: 18 rows.
    narrow = _conv('Convolution2DFunction', [(1, 2, 3, 3), (4, 2, 3, 3)],
                   [(1, 4, 1, 1)])
    assert cal.features(narrow, time)[5:] == [18.0, 9.0]
    # A matrix type whose shapes do not say has no features.
    assert cal.features(_conv('Convolution2DFunction', [], []),
                        time) is None


def test_pooling_counts_its_im2col_as_cold_bytes():
    # Average pooling of x (1, 2, 6, 6) by a 2x3 window into y (1, 2, 3,
    # 2): the smaller array, y's 12 elements, times the window's 6: 72
    # elements, 288 bytes of float32, 576 of float64, 144 of float16.
    pool = {'type': 'AveragePooling2D', 'phase': 'forward', 'flops': 72,
            'mread': 288, 'mwrite': 48, 'params': {'k': (2, 3)},
            'input_shapes': [(1, 2, 6, 6)], 'output_shapes': [(1, 2, 3, 2)],
            'dtype': 'float32'}
    assert cal.features(pool, None) == [1.0, 288.0, 48.0, 72.0, 288.0]
    assert cal.features(dict(pool, dtype='float64'), None)[-1] == 576.0
    assert cal.features(dict(pool, dtype='float16'), None)[-1] == 144.0
    # Max pooling 3x3 of x (1, 64, 64, 64), 1 MiB of float32, into y (1,
    # 64, 32, 32): the input is cold, and so is the buffer, y's 65536
    # elements times 9, 2359296 bytes: 1048576 + 2359296 = 3407872.
    big = dict(pool, type='MaxPoolingND', params={'k': 3},
               input_shapes=[(1, 64, 64, 64)],
               output_shapes=[(1, 64, 32, 32)])
    assert cal.features(big, None)[-1] == 3407872.0
    # Without a window in its parameters, no buffer.
    assert cal.features(dict(pool, params={}), None)[-1] == 0.0


def test_an_array_is_cold_from_one_mebibyte():
    # 2**18 float32 are 1 MiB: cold; one element fewer is not.  Its
    # float16 twin, 2**19 elements, is as large.
    big = dict(_add('Add-1'), input_shapes=[(2 ** 18,)],
               output_shapes=[(2 ** 18 - 1,)])
    assert cal.features(big, None)[-1] == 2 ** 20
    half = dict(big, dtype='float16', input_shapes=[(2 ** 19,)],
                output_shapes=[(2 ** 18,)])
    assert cal.features(half, None)[-1] == 2 ** 20


# The fits


def test_a_fit_weighs_a_short_call_more_than_a_long_one():
    # One feature, the constant, and two calls of 0.3 ms and 1.5 ms: each
    # miss weighs (t + 1e-4 s) ** -0.25, squared 1/sqrt(4e-4) = 50 and
    # 1/sqrt(1.6e-3) = 25, so the constant is the weighted mean
    # (50 * 3e-4 + 25 * 1.5e-3) / 75 = 7e-4 s (the plain mean is 9e-4).
    fit = cal.fit_family([([1.0], 3e-4), ([1.0], 1.5e-3)])
    assert fit['coef'] == pytest.approx([7e-4], rel=1e-9)


def test_a_fit_records_the_range_it_was_fitted_on():
    # The lowest positive value of each feature and the highest.
    samples = [([1.0, 0.0, 3.0], 1e-5), ([1.0, 2.0, 1.0], 3e-5),
               ([1.0, 5.0, 2.0], 6e-5)]
    fit = cal.fit_family(samples)
    assert fit['low'] == [1.0, 2.0, 1.0]
    assert fit['high'] == [1.0, 5.0, 3.0]
    assert fit['n'] == 3


def test_a_feature_no_call_has_gets_no_coefficient():
    # A linear layer fills no im2col buffer: its column is all zeros, and
    # t = 2 + 3x is still found, the empty feature at 0.
    rows = [[1.0, x, 0.0] for x in (1.0, 2.0, 5.0)]
    coef = cal.nnls(rows, [2 + 3 * r[1] for r in rows], [1.0] * 3)
    assert coef == pytest.approx([2.0, 3.0, 0.0], rel=1e-9)


def test_the_fit_keeps_the_best_of_the_non_negative_fits():
    # (x, t) = (1, 1), (1, 3), (2, 1): the least-squares line falls (t =
    # 3 - x), refused; the mean 5/3 misses by 2/3, 4/3, 2/3 (squares sum
    # to 24/9 = 2.67); t = c x with c = (1 + 3 + 2) / (1 + 1 + 4) = 1
    # misses by 0, 2, 1 (5): the mean is kept.
    coef = cal.nnls([[1.0, 1.0], [1.0, 1.0], [1.0, 2.0]], [1.0, 3.0, 1.0],
                    [1.0] * 3)
    assert coef == pytest.approx([5 / 3, 0.0], rel=1e-9)


def test_the_fit_weighs_each_residual_as_told():
    # t = 1, 1, 4 fitted by a constant: weights 1, 1, 2 give
    # (1 + 1 + 4 * 4) / (1 + 1 + 4) = 3 (weights square in the sum).
    coef = cal.nnls([[1.0]] * 3, [1.0, 1.0, 4.0], [1.0, 1.0, 2.0])
    assert coef == pytest.approx([3.0], rel=1e-12)


# Predictions


def test_a_call_up_to_four_times_the_range_is_not_flagged():
    c = _calibration()
    # Reading 4e6 bytes, 4 x the largest read fitted: within the range;
    # writing 4e6 + 1: outside.  1e-5 + 4e-3 = 4.01e-3 s.
    t, flag = c.predict(_add('Add-1', 4 * 10 ** 6, 0))
    assert flag is None and t == pytest.approx(4.01e-3, rel=1e-12)
    assert c.predict(_add('Add-2', 0, 4 * 10 ** 6 + 1))[1] == \
        cal.OUT_OF_RANGE
    # An uncovered call is flagged as such, whatever its range.
    sub = dict(_add('Sub-1', 10 ** 8, 0), type='Sub')
    assert c.predict(sub)[1] == cal.UNCOVERED


def test_each_feature_is_held_to_its_own_range():
    # Reads fitted up to 1e6 bytes, writes up to 1e3 only: writing 5e3
    # (over 4 x 1e3) is outside, though reads went far higher; writing
    # 4e3 is not.
    fit = dict(_math_fit(), high=[1.0, 1e6, 1e3, 1e6, 1e6])
    c = _calibration(families={'math': fit})
    assert c.predict(_add('Add-1', 10, 5000))[1] == cal.OUT_OF_RANGE
    assert c.predict(_add('Add-2', 10, 4000))[1] is None


def test_a_call_with_no_fit_at_all_is_predicted_zero_and_flagged():
    # A calibration without elementwise math's fit has nothing to stand
    # in for a family it never fitted: the call costs 0 s in the report,
    # flagged, and the report still adds up (its overhead, 1 us).
    c = _calibration(families={}, types=())
    assert c.predict(_add('Add-1', 8, 8)) == (0.0, cal.UNCOVERED)
    rows = cal.time_report([_add('Add-1', 8, 8)], c)
    assert rows['total']['t_predicted'] == pytest.approx(1e-6)
    assert rows['total']['n_flagged'] == 1


def test_the_calibrations_own_roofline_device():
    # The table's fastest product (4e9 multiply-adds a second) is every
    # peak; 8e9 FLOP/s when a multiply-add counts as two FLOPs.
    table = cal.GemmTable([1, 4], [[[1e9] * 2] * 2, [[1e9, 4e9]] * 2])
    c = Calibration(table, {}, {}, OVERHEAD,
                    info={'device': 'Some CPU'}, bandwidth=2e10)
    device = c.device()
    assert device.title == 'Some CPU' and device.bandwidth == 2e10
    assert set(device.peaks.values()) == {('calibrated', 4e9)}
    assert set(c.device(fma_1flop=False).peaks.values()) == {
        ('calibrated', 8e9)}
    # No bandwidth measured: 10 GB/s.
    assert _calibration(bandwidth=None).device().bandwidth == 1e10


def test_a_calibration_names_its_device_date_and_size():
    assert repr(_calibration(types=('Add', 'Sub'))) == (
        '<Calibration of test (2026-01-01T00:00:00Z), 1 families, 2 types>')
    assert repr(Calibration(_flat_table(), {}, {}, OVERHEAD)) == \
        '<Calibration of ? (?), 0 families, 0 types>'


# The file


def test_the_saved_file_holds_every_part_in_order(tmp_path):
    path = str(tmp_path / 'c.json')
    _calibration().save(path)
    with open(path) as f:
        text = f.read()
    data = json.loads(text)
    assert list(data) == ['format', 'info', 'error', 'overhead',
                          'bandwidth', 'gemm', 'families', 'types']
    assert data['gemm'] == {'dims': [1, 4], 'speed': [[[1e9] * 2] * 2] * 2}
    assert data['overhead'] == OVERHEAD and data['bandwidth'] == 1e10
    assert data['families']['math']['coef'] == [1e-5, 1e-9, 2e-9, 0.0,
                                                0.0]
    assert data['types'] == {'Add': 'math'}
    assert text.endswith('}\n')
    # A file without an error or info loads with empty ones.
    del data['error'], data['info'], data['bandwidth']
    back = Calibration.from_dict(data)
    assert back.error == {} and back.info == {} and back.bandwidth is None


def test_a_file_of_no_known_format_is_refused_with_its_start():
    with pytest.raises(ValueError, match=r"not a calibration of format 2 "
                       r".*\"\['a', 'b'\]\""):
        Calibration.from_dict(['a', 'b'])
    # A format of a later version without a table is not a calibration.
    with pytest.raises(ValueError, match='not a calibration of format 2'):
        Calibration.from_dict({'format': 3})
    with pytest.raises(ValueError, match='a calibration of format 3, and'):
        Calibration.from_dict({'format': 3, 'gemm': {}})


def _edited(tmp_path, edit):
    """The path of ``_calibration()`` saved, then ``edit(data)`` by hand."""
    data = _calibration().to_dict()
    edit(data)
    path = tmp_path / 'edited.json'
    path.write_text(json.dumps(data))  # NaN and Infinity as JSON writes
    return str(path)


def _set(*keys_and_value):
    *keys, last, value = keys_and_value

    def edit(data):
        for k in keys:
            data = data[k]
        data[last] = value
    return edit


def _drop(*keys):
    def edit(data):
        for k in keys[:-1]:
            data = data[k]
        del data[keys[-1]]
    return edit


_FIELD = "^a malformed calibration: field '"
_FINITE = "' must be a finite number >= 0, got "


@pytest.mark.parametrize('edit, message', [
    # The add of test_calibration, 1000 bytes read and 500 written in
    # inference, was predicted 1e-5 + 1e-6 + 1e-6 + its overhead: a
    # negative, NaN or infinite figure made the step's time one
    (_set('overhead', 'inference', -1), _FIELD + 'overhead.inference' +
     _FINITE + '-1$'),
    (_set('overhead', 'update', -0.5), 'overhead.update' + _FINITE +
     r'-0\.5$'),
    (_set('overhead', 'forward', float('nan')), 'overhead.forward' + _FINITE
     + 'nan$'),
    (_set('families', 'math', 'coef', [1e-5, 1e-9, float('nan'), 0, 0]),
     _FIELD + r'families\.math\.coef\[2\]' + _FINITE + 'nan$'),
    (_set('families', 'math', 'coef', [1e-5, float('inf'), 2e-9, 0, 0]),
     r'coef\[1\]' + _FINITE + 'inf$'),
    (_set('families', 'math', 'coef', [1e-5, 1e-9, 2e-9, 0, -1e-9]),
     r'coef\[4\]' + _FINITE + '-1e-09$'),
    (_set('families', 'math', 'high', [1, 1e6, 1e6, 1e6, float('nan')]),
     r'families\.math\.high\[4\]' + _FINITE + 'nan$'),
    (_set('overhead', 'backward', '3e-6'), 'overhead.backward' + _FINITE +
     "'3e-6'$"),
    (_set('bandwidth', -1e10), _FIELD + "bandwidth' must be a finite "
     'number > 0, got -10000000000.0$'),
    (_set('error', 'training', float('inf')), 'error.training' + _FINITE +
     'inf$'),
    # structurally broken: each crashed time_report with KeyError,
    # TypeError or IndexError after a load that let it through
    (_drop('families', 'math', 'high'), _FIELD + "families.math.high' is "
     'missing$'),
    (_drop('overhead', 'update'), _FIELD + "overhead.update' is missing$"),
    (_drop('overhead'), _FIELD + "overhead' is missing$"),
    (_drop('gemm', 'speed'), _FIELD + "gemm.speed' is missing$"),
    (_set('families', 'math', 'coef', ['1e-5', 1e-9, 2e-9, 0, 0]),
     r"coef\[0\]" + _FINITE + "'1e-5'$"),
    (_set('families', 'math', 'coef', [1e-5, 1e-9, 2e-9, 0]),
     _FIELD + r"families\.math\.coef' must be a list of 5 numbers, got "
     r"\[1e-05, 1e-09, 2e-09, 0\]$"),
    (_set('families', 'math', 'low', 0), "families.math.low' must be a "
     'list of 5 numbers, got 0$'),
    (_set('families', 'math', 3), _FIELD + "families.math' must be a dict "
     'with coef, low, high and n, got 3$'),
    (_set('families', 'math', 'n', 2.5), "families.math.n' must be an int "
     '>= 0, got 2.5$'),
    (_set('families', 'Math', _math_fit()), "^a malformed calibration: a "
     "key of field 'families' must be one of 'matmul', .*, got 'Math'$"),
    (_set('types', 'Add', 'maths'), _FIELD + "types.Add' must be one of "
     "'matmul', .*'math', .*, got 'maths'$"),
    (_set('gemm', 'speed', [[[1e9]]]), _FIELD + "gemm.speed' must be a "
     r'list of 2 lists \(one for each of gemm.dims\), got '
     r'\[\[\[1000000000\.0\]\]\]$'),
    (_set('gemm', 'speed', [[[1e9] * 2] * 2, [[1e9, 0]] * 2]),
     _FIELD + r"gemm\.speed\[1\]\[0\]\[1\]' must be a finite number > "
     '0, got 0$'),
    (_set('gemm', 'dims', []), _FIELD + "gemm.dims' must be a list of ints "
     r'>= 1 in increasing order, one or more, got \[\]$'),
    (_set('gemm', 'dims', [4, 1]), r'got \[4, 1\]$'),
    (_set('gemm', 'dims', [0, 4]), _FIELD + r"gemm\.dims\[0\]' must be "
     'an int >= 1, got 0$'),
    (_set('info', 'a laptop'), _FIELD + "info' must be a dict, got "
     "'a laptop'$"),
])
def test_a_calibration_edited_by_hand_is_checked_field_by_field(
        tmp_path, edit, message):
    with pytest.raises(ValueError, match=message) as e:
        Calibration.load(_edited(tmp_path, edit))
    assert '\n' not in str(e.value)


def test_a_calibration_built_in_code_is_checked_as_a_file_is():
    fit = dict(_math_fit(), coef=[1e-5, 1e-9, 2e-9, 0.0, float('nan')])
    with pytest.raises(ValueError, match=r"^a malformed calibration: field "
                       r"'families\.math\.coef\[4\]' must be a finite "
                       r'number >= 0, got nan$'):
        _calibration(families={'math': fit})
    with pytest.raises(ValueError, match="'overhead.forward' must be a "
                       'finite number >= 0, got -1e-06$'):
        _calibration(overhead=dict(OVERHEAD, forward=-1e-6))
    with pytest.raises(ValueError, match="'gemm' must be a GemmTable, got "
                       'None$'):
        Calibration(None, {}, {}, OVERHEAD)
    # the table alone: four speeds for two dims, and no dims at all
    with pytest.raises(ValueError, match=r"'gemm\.speed\[0\]' must be a "
                       r'list of 2 lists'):
        cal.GemmTable([1, 4], [[[1e9, 1e9]]] * 2)
    with pytest.raises(ValueError, match="'gemm.dims' must be a list of "
                       'ints'):
        cal.GemmTable([], [])


def test_a_table_of_one_shape_is_a_table():
    # one dimension, 2, at 8e9 multiply-adds a second: every product runs
    # at that speed, 4*4*4 = 64 in 8e-9 s
    table = cal.GemmTable([2], [[[8e9]]])
    assert table.time(4, 4, 4) == pytest.approx(8e-9, rel=1e-12)
    assert table.time(1, 1, 1) == pytest.approx(1.25e-10, rel=1e-12)


def test_a_checked_calibration_keeps_its_figures():
    # the figures are kept as given (copies: the caller's dicts are its
    # own), the fields the checks do not read (a fit's extra key) too
    fit = dict(_math_fit(), note='by hand')
    families = {'math': fit}
    c = _calibration(families=families)
    fit['coef'][0] = 1.0
    assert c.families['math']['coef'] == [1e-5, 1e-9, 2e-9, 0.0, 0.0]
    assert c.families['math']['note'] == 'by hand'
    assert Calibration.from_dict(c.to_dict()).to_dict() == c.to_dict()


def test_a_calibration_is_dated_in_utc_to_the_second():
    info = cal.info_now(seconds=10, device='x')
    assert list(info) == ['date', 'seconds', 'device']
    assert re.match(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$', info['date'])
    assert info['seconds'] == 10


# The time report


def test_links_are_sorted_and_phases_in_their_order():
    # The backward call comes first, yet the phases read forward,
    # backward; links sort by name, each ancestor summing its subtree.
    layers = [_add('Add-1', 0, 0, 'backward', '/b'),
              _add('Add-2', 0, 0, 'update', '/a/c'),
              _add('Add-3', 0, 0, 'forward', '/a')]
    c = _calibration()
    assert list(cal.time_report(layers, c, by='phase')) == [
        'forward', 'backward', 'update', 'total']
    links = cal.time_report(layers, c, by='link')
    assert list(links) == ['/', '/a', '/a/c', '/b', 'total']
    # 1e-5 s a call; overheads forward 2e-6, backward 3e-6, update 4e-6.
    assert links['/a']['t_predicted'] == pytest.approx(2.6e-5)
    assert links['/']['t_predicted'] == pytest.approx(3.9e-5)
    assert links['/']['n_layers'] == 3
    # A call without a phase is a forward one.
    rows = cal.time_report([dict(_add('Add-1'), phase=None)], c,
                           by='phase')
    assert list(rows) == ['forward', 'total']


def test_the_time_report_takes_a_calibration_or_its_file(tmp_path):
    # the add of 1000 bytes read and 500 written, in inference: 1e-5 +
    # 1e-6 + 1e-6 inside the call, 1 us of overhead
    path = str(tmp_path / 'c.json')
    _calibration().save(path)
    rows = cal.time_report([_add('Add-1', 1000, 500)], path)
    assert rows['total']['t_predicted'] == pytest.approx(1.3e-5, rel=1e-12)
    # anything else is named (it was AttributeError: no 'overhead')
    with pytest.raises(TypeError, match='^calibration must be a '
                       'Calibration or the path of its JSON file, got 3$'):
        cal.time_report([_add('Add-1')], 3)
