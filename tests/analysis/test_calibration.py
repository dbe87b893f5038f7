"""Calibrations and predicted times (calibration.py, measure.py's fits):
the matrix-product table's times, the features of each kind of call, the
fits' coefficients on literal timings, the flags, the file and the time
report.

Nothing here times anything: the fits run on synthetic timings made from
known coefficients, and the reports' arithmetic is checked by hand.

Equivalent mutants: in ``GemmTable._position``, ``x < logs[0]`` for
``x <= logs[0]`` sends a dimension on the first grid point to the
bisection, which gives ``i = -1`` and a weight of 1 on point 0: the same
speed.  In ``nnls``, scaling all-zero columns by 0.5 instead of 1 leaves
them zero (their coefficient stays 0), and subsets from size 0 add an
empty fit whose residual is never below the starting one.
"""

import io
import json
import math
import re

import chainer
import chainer.functions as F
import numpy
import pytest

from chainer_computational_cost.analysis import calibration as cal
from chainer_computational_cost import calibrate
from chainer_computational_cost import Calibration
from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.run import measure
from chainer_computational_cost import project_batch

from calibration_fixtures import add_layer
from calibration_fixtures import flat_table
from calibration_fixtures import literal_calibration
from calibration_fixtures import math_fit
from calibration_fixtures import OVERHEAD
from cli_runs import run


# The matrix-product table


def test_gemm_table_interpolates_the_log_of_the_speed():
    # Speed 1e9 at M=1, 4e9 at M=4, whatever N and K: at M=2 (halfway in
    # log) the speed is exp((ln 1e9 + ln 4e9) / 2) = 2e9, and a 2x4x4
    # product (32 multiply-adds) takes 32 / 2e9 = 1.6e-8 s.
    table = cal.GemmTable([1, 4], [[[1e9] * 2] * 2, [[4e9] * 2] * 2])
    assert table.time(2, 4, 4) == pytest.approx(1.6e-8, rel=1e-12)
    # On the grid: 4x1x1 at 4e9 -> 1e-9 s.
    assert table.time(4, 1, 1) == pytest.approx(1e-9, rel=1e-12)
    # Beyond it, the edge's speed: 16x1x1 at 4e9 -> 4e-9 s.
    assert table.time(16, 1, 1) == pytest.approx(4e-9, rel=1e-12)
    assert table.time(0, 4, 4) == 0.0
    assert table.peak() == 4e9


def test_gemm_shapes_of_convolutions_and_linear_layers():
    # x (2, 3, 8, 8), W (4, 3, 3, 3), y (2, 4, 8, 8): M = 2*8*8 = 128
    # output pixels, N = 4 filters, K = 3*3*3 = 27; im2col holds
    # 2*3*3*3*8*8 = 3456 elements.
    conv = {'type': 'Convolution2DFunction',
            'input_shapes': [(2, 3, 8, 8), (4, 3, 3, 3)],
            'output_shapes': [(2, 4, 8, 8)]}
    assert cal.gemm_shape(conv) == (1, 128, 4, 27, 3456)
    # Its weight gradient: gW (4, 3, 3, 3) = gy^T (4 x 128) col (128 x 27).
    grad_w = {'type': 'Convolution2DGradW',
              'input_shapes': [(2, 3, 8, 8), (2, 4, 8, 8)],
              'output_shapes': [(4, 3, 3, 3)]}
    assert cal.gemm_shape(grad_w) == (1, 4, 27, 128, 3456)
    # x (5, 7) W (3, 7): M = 5, N = 3, K = 7.
    linear = {'type': 'LinearFunction', 'input_shapes': [(5, 7), (3, 7)],
              'output_shapes': [(5, 3)]}
    assert cal.gemm_shape(linear) == (1, 5, 3, 7, 0)
    # a (6, 2, 5) @ b (6, 5, 9): six 2x9 products over K = 60/(6*2) = 5.
    bmm = {'type': 'BatchMatMul', 'input_shapes': [(6, 2, 5), (6, 5, 9)],
           'output_shapes': [(6, 2, 9)]}
    assert cal.gemm_shape(bmm) == (6, 2, 9, 5, 0)
    assert cal.gemm_shape({'type': 'LinearFunction', 'input_shapes': [],
                           'output_shapes': []}) is None


def test_families():
    assert cal.family_of({'type': 'Convolution2DGradW'}) == 'convolution'
    assert cal.family_of({'type': 'LinearGradData'}) == 'matmul'
    assert cal.family_of({'type': 'ReLU'}) == 'activation'
    assert cal.family_of({'type': 'MaxPoolingND'}) == 'pooling'
    assert cal.family_of({'type': 'AdamRule', 'phase': 'update'}) == \
        'update'
    assert cal.family_of({'type': 'NoSuchFunction'}) is None


# The fits


def test_nnls_recovers_exact_coefficients_and_clamps_negative_ones():
    # t = 2 + 3x exactly.
    rows = [[1.0, x] for x in (1.0, 2.0, 5.0, 10.0)]
    assert cal.nnls(rows, [2 + 3 * r[1] for r in rows], [1.0] * 4) == \
        pytest.approx([2.0, 3.0], rel=1e-9)
    # t = 10 - x: the best line with a slope >= 0 is the mean, 10 - 4.5.
    rows = [[1.0, x] for x in (1.0, 2.0, 7.0, 8.0)]
    assert cal.nnls(rows, [10 - r[1] for r in rows], [1.0] * 4) == \
        pytest.approx([5.5, 0.0], rel=1e-9)


def test_nnls_keeps_zero_for_a_feature_below_its_tie_rule():
    # a = (1.000001, 1), b = (1, -1): least squares gives a.b / a.a =
    # 1e-6 / 2.000002 = 5e-7 >= 0, lowering |b|^2 = 2 by (a.b)^2 / a.a =
    # 5e-13, a part in 4e12: not more than a part in 1e12, so 0
    assert cal.nnls([[1.000001], [1.0]], [1.0, -1.0], [1.0, 1.0]) == [0.0]
    # a = (1, 1), b = (1.001, -1): a.b / a.a = 1e-3 / 2 = 5e-4, lowering
    # |b|^2 = 2.002001 by 1e-6 / 2 = 5e-7, a part in 4e6: kept
    assert cal.nnls([[1.0], [1.0]], [1.001, -1.0], [1.0, 1.0]) == \
        pytest.approx([5e-4], rel=1e-9)


def _synthetic_samples():
    """Probe runs timed by a known model: each Add takes 1e-5 + 1e-9 read
    + 2e-9 written seconds, and each run's wall adds OVERHEAD per call."""
    rng = numpy.random.RandomState(0)
    samples = []
    for i in range(10):
        counts = {'forward': 1 + i % 4, 'backward': (i * 3) % 5}
        inference = i % 2 == 0
        layers = []
        for phase, n in counts.items():
            if inference and phase == 'backward':
                continue
            for _ in range(n):
                r, w = int(rng.randint(1, 10 ** 6)), int(rng.randint(1, 10 **
                                                                     6))
                layers.append(add_layer('Add-x', r, w, phase,
                                        time=1e-5 + 1e-9 * r + 2e-9 * w))
        kind = [cal.overhead_kind(x, inference) for x in layers]
        wall = sum(x['time'] for x in layers) + sum(OVERHEAD[k]
                                                    for k in kind)
        samples.append((layers, wall, not inference))
    return samples


def test_fit_recovers_the_synthetic_model():
    families, types, overhead = measure._fit(_synthetic_samples(),
                                             flat_table())
    assert set(families) == {'math'}
    assert types == {'Add': 'math'}
    assert families['math']['coef'] == pytest.approx(
        [1e-5, 1e-9, 2e-9, 0.0, 0.0], rel=1e-6, abs=1e-15)
    # No update in the runs: its overhead is unknown, fitted as 0.
    assert overhead == pytest.approx(dict(OVERHEAD, update=0.0), rel=1e-6,
                                     abs=1e-12)


def test_cross_validation_of_an_exact_model_is_exact(monkeypatch):
    # Every run counts, the shortest too.
    monkeypatch.setattr(measure, 'CV_MIN_SECONDS', 0.0)
    error = measure.cross_validate(_synthetic_samples(), flat_table())
    assert error['n_probes'] == 10
    # 5 inference and 5 training runs: enough for both.
    assert error['inference'] == pytest.approx(0.0, abs=1e-9)
    assert error['training'] == pytest.approx(0.0, abs=1e-9)


def test_fit_family_recovers_a_line_and_its_range():
    samples = [([1.0, float(x), 0.0, 0.0, 0.0], 1e-5 + 1e-9 * x)
               for x in range(1000, 21000, 1000)]
    fit = cal.fit_family(samples)
    assert fit['coef'][:2] == pytest.approx([1e-5, 1e-9], rel=1e-6)
    assert fit['high'][1] == 20000.0 and fit['n'] == 20


# Predictions and flags


def test_predict_by_hand():
    c = literal_calibration()
    # 1e-5 + 1e-9 * 1000 + 2e-9 * 500 = 1.2e-5 s.
    t, flag = c.predict(add_layer('Add-1', 1000, 500))
    assert t == pytest.approx(1.2e-5, rel=1e-12) and flag is None


def test_uncovered_and_out_of_range_calls_are_flagged():
    c = literal_calibration()
    # Sub is in the math family, but the calibration never ran it.
    sub = dict(add_layer('Sub-1', 1000, 500), type='Sub')
    t, flag = c.predict(sub)
    assert flag == cal.UNCOVERED and t == pytest.approx(1.2e-5)
    # Reading more than 4x the largest read fitted (1e6 bytes).
    t, flag = c.predict(add_layer('Add-2', 4 * 10 ** 6 + 1, 0))
    assert flag == cal.OUT_OF_RANGE
    # ReLU's family (activation) has no fit: elementwise math stands in.
    relu = dict(add_layer('ReLU-1', 1000, 500), type='ReLU')
    t, flag = c.predict(relu)
    assert flag == cal.UNCOVERED and t == pytest.approx(1.2e-5)
    # A convolution without a convolution fit nor shapes: still flagged.
    conv = dict(add_layer('c', 0, 0), type='Convolution2DFunction',
                input_shapes=[], output_shapes=[])
    assert c.predict(conv)[1] == cal.UNCOVERED


# JSON


def test_json_round_trip(tmp_path):
    c = literal_calibration()
    path = str(tmp_path / 'cal.json')
    c.save(path)
    back = Calibration.load(path)
    assert back.to_dict() == c.to_dict()
    assert back.overhead == OVERHEAD
    assert back.info['device'] == 'test'
    layer = add_layer('Add-1', 1000, 500)
    assert back.predict(layer) == c.predict(layer)
    with open(path) as f:
        data = json.load(f)
    assert data['format'] == cal.FORMAT
    assert data['error'] == {'inference': 0.1, 'training': 0.2,
                             'n_probes': 10}


def test_a_file_that_is_not_a_calibration_is_refused(tmp_path):
    path = tmp_path / 'bad.json'
    path.write_text('{"format": 99}')
    with pytest.raises(ValueError, match='not a calibration'):
        Calibration.load(str(path))
    path.write_text('not json')
    with pytest.raises(ValueError, match='is not a calibration'):
        Calibration.load(str(path))
    path.write_text('{"format": 2, "gemm": {}}')
    with pytest.raises(ValueError, match='malformed'):
        Calibration.load(str(path))
    # A file of format 1 (one fit for every convolution type) is an
    # earlier version's: it is refused with what to do.
    path.write_text('{"format": 1, "gemm": {}}')
    with pytest.raises(ValueError, match='format 1, and this version '
                       'reads format 2 only: calibrate again'):
        Calibration.load(str(path))
    with pytest.raises(TypeError, match='Calibration or the path'):
        cal.load_calibration(3)


# The time report's arithmetic


def _three_calls():
    return [add_layer('Add-1', 1000, 500, 'forward', '/a', time=2e-5),
            add_layer('Add-2', 2000, 0, 'backward', '/a/b', time=3e-5),
            add_layer('Add-3', 0, 1000, 'forward', '/c')]


def test_time_report_per_call_by_hand():
    rows = cal.time_report(_three_calls(), literal_calibration())
    # t_call: 1e-5 + 1e-6 + 1e-6 = 1.2e-5; 1e-5 + 2e-6 = 1.2e-5;
    # 1e-5 + 2e-6 = 1.2e-5.  The run has a backward pass, so forward calls
    # pay the training overhead 2e-6, backward ones 3e-6.
    assert [r['t_call'] for r in rows.values()] == pytest.approx(
        [1.2e-5, 1.2e-5, 1.2e-5, 3.6e-5])
    assert [r['t_predicted'] for r in rows.values()] == pytest.approx(
        [1.4e-5, 1.5e-5, 1.4e-5, 4.3e-5])
    assert rows['Add-1']['time'] == 2e-5
    assert 'time' not in rows['Add-3']
    # Not every call was timed: no measured total.
    assert 'time' not in rows['total']
    assert rows['total']['n_layers'] == 3
    assert rows['total']['n_flagged'] == 0


def test_time_report_groups_by_hand():
    layers = _three_calls()
    c = literal_calibration()
    phases = cal.time_report(layers, c, by='phase')
    assert list(phases) == ['forward', 'backward', 'total']
    # forward: 1.4e-5 + 1.4e-5; backward: 1.5e-5.
    assert phases['forward']['t_predicted'] == pytest.approx(2.8e-5)
    assert phases['backward']['t_predicted'] == pytest.approx(1.5e-5)
    assert phases['backward']['time'] == 3e-5
    assert 'time' not in phases['forward']  # Add-3 was not timed
    links = cal.time_report(layers, c, by='link')
    # '/' holds all three; '/a' Add-1 and Add-2; '/a/b' Add-2.
    assert list(links) == ['/', '/a', '/a/b', '/c', 'total']
    assert links['/']['t_predicted'] == pytest.approx(4.3e-5)
    assert links['/a']['t_predicted'] == pytest.approx(2.9e-5)
    assert links['/a']['time'] == pytest.approx(5e-5)
    assert links['/a/b']['n_layers'] == 1
    types = cal.time_report(layers, c, by='type')
    assert list(types) == ['Add', 'total']
    assert types['Add']['n_layers'] == 3
    # Roofline rows ride along: t_roofline summed as given.
    roof = {x['name']: {'t_roofline': t} for x, t in zip(layers,
                                                         (1.0, 2.0, 4.0))}
    assert cal.time_report(layers, c, roof, by='type')['Add'][
        't_roofline'] == 7.0
    with pytest.raises(ValueError, match="by must be one of 'layer'"):
        cal.time_report(layers, c, by='rank')


def test_time_report_keeps_a_type_named_like_the_total_row():
    # a user's function type named 'total' (and one named 'total (type)'),
    # each of the math family: keyed as the summary report keys them,
    # every group named by its type, and the total row last
    layers = [dict(add_layer('total-1', 0, 0), type='total'),
              dict(add_layer('total (type)-1', 0, 0), type='total (type)'),
              dict(add_layer('total-2', 0, 0), type='total')]
    c = literal_calibration(types=('total', 'total (type)'))
    types = cal.time_report(layers, c, by='type')
    assert list(types) == ['total (type)', 'total (type) (type)', 'total']
    assert [r['name'] for r in types.values()] == [
        'total', 'total (type)', 'total']
    assert [r['n_layers'] for r in types.values()] == [2, 1, 3]
    # 1e-5 a call + the inference overhead 1e-6 (no backward): the
    # groups add up
    assert types['total (type)']['t_predicted'] == pytest.approx(2.2e-5)
    assert types['total']['t_predicted'] == pytest.approx(3.3e-5)


def test_an_inference_run_pays_the_inference_overhead():
    rows = cal.time_report([add_layer('Add-1', 0, 0)], literal_calibration())
    # 1e-5 + the inference overhead 1e-6.
    assert rows['total']['t_predicted'] == pytest.approx(1.1e-5)


def test_cost_report_time_report_and_its_rendering():
    x = numpy.ones((2, 3), numpy.float32)
    with ComputationalCostHook(measure_time=True) as hook:
        F.relu(x) + x
    c = literal_calibration(types=('Add', 'ReLU'))
    rows = hook.time_report(c)
    assert list(rows) == ['ReLU-1', 'Add-1', 'total']
    # ReLU's family has no fit: predicted as math, flagged.
    assert rows['ReLU-1']['flag'] == cal.UNCOVERED
    assert rows['Add-1']['flag'] is None
    # Add reads 2*6*4 = 48 bytes and writes 24: 1e-5 + 48e-9 + 48e-9.
    assert rows['Add-1']['t_call'] == pytest.approx(1e-5 + 96e-9)
    # The calibration's own roofline: peak 1e9 multiply-adds/s, 1e10 B/s;
    # Add's 6 FLOPs and 72 bytes take max(6e-9, 7.2e-9) = 7.2e-9 s.
    assert rows['Add-1']['t_roofline'] == pytest.approx(7.2e-9)
    assert rows['total']['time'] > 0
    out = io.StringIO()
    hook.show_time_report(c, out, by='phase', time_unit='us')
    lines = out.getvalue().splitlines()
    assert lines[0] == ('Phase,# Layers,T predicted us,T roofline us,'
                        'Time us,# Flagged')
    assert lines[1].startswith('forward,2,')
    assert lines[-1].startswith('total,2,') and lines[-1].endswith(',1')


def test_projection_time_report():
    def run(n):
        F.relu(numpy.ones((n, 4), numpy.float32))
    proj = project_batch(run, 1000)
    rows = proj.time_report(literal_calibration(types=('ReLU',)))
    assert rows['total']['n_layers'] == 1


def test_calibrate_checks_its_arguments():
    with pytest.raises(ValueError,
                       match='seconds must be a finite number >= 10'):
        calibrate(seconds=5)
    with pytest.raises(ValueError, match="clock must be 'wall'"):
        calibrate(seconds=10, clock='sundial')
    assert math.isfinite(measure.copy_bandwidth(numpy, 2 ** 16))


# The command line


def test_command_line_predict_time(tmp_path):
    path = str(tmp_path / 'cal.json')
    literal_calibration(types=('Add',)).save(path)
    status, text = run('cli_models:build_tiny', '--shape', '2,3',
                       '--predict-time', path, '--mode', 'csv',
                       '--time-unit', 'us')
    assert status == 0
    # ReLU of 6 float32: reads and writes 24 bytes; its family has no fit,
    # so elementwise math stands in, flagged: 1e-5 + 24e-9 + 2 * 24e-9 =
    # 10.072 us, plus the inference overhead 1 us.  Roofline: 6 FLOPs at
    # 1e9/s = 6e-3 us against 48 B at 1e10 B/s = 4.8e-3 us.
    assert text == ('Layer name,Layer type,T predicted us,T roofline us,'
                    'Flag\n'
                    'ReLU-1,ReLU,11.072,0.006,uncovered type\n'
                    'total,,11.072,0.006,\n')


def test_command_line_calibration_errors(tmp_path, capsys):
    status, _ = run('cli_models:build_tiny', '--predict-by', 'type')
    assert status == 2
    assert '--predict-by needs --predict-time FILE' in capsys.readouterr().err
    bad = tmp_path / 'bad.json'
    bad.write_text('[]')
    status, _ = run('cli_models:build_tiny', '--predict-time', str(bad))
    assert status == 2
    assert "--predict-time: '{}': not a calibration".format(bad) in \
        capsys.readouterr().err
    status, _ = run('calibrate', '--out', str(tmp_path / 'c.json'),
                    '--seconds', '3')
    assert status == 2
    assert 'seconds must be a finite number >= 10' in capsys.readouterr().err


# CostMonitor


def test_cost_monitor_logs_the_predicted_time(tmp_path):
    import chainer
    import chainer.links as L
    from chainer import training
    from chainer.training import extensions
    from chainer_computational_cost import CostMonitor
    path = str(tmp_path / 'cal.json')
    c = literal_calibration(types=('Add',))
    c.save(path)
    x = numpy.arange(24, dtype=numpy.float32).reshape(8, 3)
    t = numpy.array([0, 1] * 4, numpy.int32)
    data = list(zip(x, t))

    def model_and_optimizer():
        numpy.random.seed(0)
        model = L.Classifier(L.Linear(3, 2))
        opt = chainer.optimizers.SGD()
        opt.setup(model)
        return model, opt

    model, opt = model_and_optimizer()
    it = chainer.iterators.SerialIterator(data, 4, shuffle=False)
    updater = training.StandardUpdater(it, opt)
    trainer = training.Trainer(updater, (2, 'iteration'),
                               out=str(tmp_path))
    trainer.extend(CostMonitor(calibration=path))
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    trainer.run()
    # The same step, costed directly (the monitor's hook counts a
    # multiply-add as 2 FLOPs).
    model, opt = model_and_optimizer()
    with ComputationalCostHook(fma_1flop=False) as hook:
        opt.update(model, x[:4], t[:4])
    expected = hook.time_report(c)['total']['t_predicted']
    for entry in log.log:
        assert entry['cost/predicted_time'] == pytest.approx(expected)
        assert entry['cost/time'] > 0
    with pytest.raises(TypeError, match='Calibration or the path'):
        CostMonitor(calibration=1.5)


def test_the_progress_bar_in_a_log_writes_a_line_a_tenth():
    from chainer_computational_cost.cli.progress import progress_bar
    out = io.StringIO()  # not a terminal
    progress = progress_bar(out)
    for fraction in (0.0, 0.05, 0.1, 0.15, 1.0):
        progress(fraction, 'probes')
    # 0.05 and 0.15 are in tenths already shown.
    assert out.getvalue().splitlines() == [
        '[..............................]   0% probes',
        '[###...........................]  10% probes',
        '[##############################] 100% probes']


def test_features_by_hand():
    # Max pooling 3x3 of x (1, 2, 8, 8) into y (1, 2, 4, 4): im2col holds
    # the output's 32 elements times the 9 of the window, 288 float32 =
    # 1152 bytes, taken as cold bytes; no array reaches 1 MiB.
    pool = {'type': 'MaxPoolingND', 'phase': 'forward', 'flops': 288,
            'mread': 512, 'mwrite': 128, 'params': {'k': 3, 's': 2, 'p': 1},
            'input_shapes': [(1, 2, 8, 8)], 'output_shapes': [(1, 2, 4, 4)],
            'dtype': 'float32'}
    assert cal.features(pool, None) == [1.0, 512.0, 128.0, 288.0, 1152.0]
    # An elementwise sum of two arrays of 2**18 float32 (1 MiB each) into
    # a third: all three are cold, 3 MiB.
    add = dict(add_layer('Add-1', 2 ** 21, 2 ** 20),
               input_shapes=[(2 ** 18,), (2 ** 18,)],
               output_shapes=[(2 ** 18,)])
    assert cal.features(add, None)[-1] == 3 * 2 ** 20
    # A linear layer x (5, 7) W (3, 7): the table's time of a 5x3x7
    # product at 1e9 multiply-adds/s, 105e-9 s.
    linear = {'type': 'LinearFunction', 'phase': 'forward', 'flops': 105,
              'mread': 200, 'mwrite': 60, 'input_shapes': [(5, 7), (3, 7)],
              'output_shapes': [(5, 3)], 'dtype': 'float32'}
    f = cal.features(linear, flat_table().time)
    assert f == pytest.approx([1.0, 105e-9, 260.0, 0.0, 0.0])


def test_convolution_features_by_hand():
    # x (2, 3, 8, 8), W (4, 3, 3, 3), y (2, 4, 8, 8): the product is
    # 128x4x27 = 13824 multiply-adds, 13824e-9 s at 1e9/s; im2col holds
    # 2*3*3*3*8*8 = 3456 float32 (13824 bytes) laid out in rows of the
    # output's width 8: 3456 / 8 = 432 rows; the window is 3*3 = 9.
    conv = {'type': 'Convolution2DFunction', 'phase': 'forward',
            'flops': 0, 'mread': 1000, 'mwrite': 24,
            'input_shapes': [(2, 3, 8, 8), (4, 3, 3, 3)],
            'output_shapes': [(2, 4, 8, 8)], 'dtype': 'float32'}
    f = cal.features(conv, flat_table().time)
    assert f == pytest.approx(
        [1.0, 13824e-9, 1024.0, 13824.0, 0.0, 432.0, 9.0])
    # Its input gradient, a deconvolution of gy (2, 4, 8, 8) by W: col2im
    # of 3*3*3*(2*8*8) = 3456 elements over rows of gy's width 8 (432);
    # the product is 27 x 128 x 4.
    grad_x = dict(conv, type='Deconvolution2DFunction', phase='backward',
                  input_shapes=[(2, 4, 8, 8), (4, 3, 3, 3)],
                  output_shapes=[(2, 3, 8, 8)])
    assert cal.features(grad_x, flat_table().time)[5:] == [432.0, 9.0]
    # Each convolution type has its own fit, the rest their family's.
    assert cal.fit_key(conv) == 'Convolution2DFunction'
    assert cal.fit_key(grad_x) == 'Deconvolution2DFunction'
    assert cal.fit_key({'type': 'LinearGradData'}) == 'matmul'
    assert cal.fit_key({'type': 'ReLU'}) == 'activation'


def test_calibrate_command_refuses_an_unwritable_file_at_once(
        tmp_path, capsys):
    status, _ = run('calibrate', '--out', str(tmp_path / 'no' / 'c.json'))
    assert status == 2
    assert 'cannot write' in capsys.readouterr().err
    assert not (tmp_path / 'no').exists()


def test_a_probe_that_would_end_past_the_deadline_is_not_measured():
    # The first run (not timed) of a probe says how long its timed runs
    # will take: with a deadline already past, none is run; without one,
    # every call of the run is timed.  The MLP probe is drawn with a
    # fixed seed to keep it small; the global RNG is the test's own.
    made = measure._mlp_probe(numpy.random.RandomState(0))
    model, inputs, loss_of = measure._on_device(
        made, measure._device_of(None))
    state = numpy.random.get_state()
    try:
        assert measure._measure_probe(model, inputs, loss_of, False,
                                      numpy, deadline=0.0) is None
        layers, wall = measure._measure_probe(model, inputs, loss_of,
                                              False, numpy)
    finally:
        numpy.random.set_state(state)
    assert layers and all(x['time'] > 0 for x in layers) and wall > 0


def test_a_cnn_probe_keeps_its_im2col_below_the_cap():
    # Whatever the draw, no probe convolution fills an im2col buffer above
    # PROBE_COL_MAX elements: batch * C * kh * kw * out_h * out_w, read
    # from the links and a run's shapes.
    for seed in range(40):
        model, (x,), _, _ = measure._cnn_probe(
            numpy.random.RandomState(seed))
        with chainer.using_config('train', False), \
                ComputationalCostHook() as hook:
            model(x)
        for layer in hook.layer_report.values():
            if layer.get('type') == 'Convolution2DFunction':
                (n, c, _, _), w = layer['input_shapes'][:2]
                _, _, oh, ow = layer['output_shapes'][0]
                assert n * c * w[2] * w[3] * oh * ow <= \
                    measure.PROBE_COL_MAX


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
    assert cal.features(empty, flat_table().time) == [
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
    time = flat_table().time  # 1e9 multiply-adds a second
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
    big = dict(add_layer('Add-1'), input_shapes=[(2 ** 18,)],
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


@pytest.mark.parametrize('dtype', ['float16', 'float64'])
def test_a_call_in_a_float_dtype_the_probes_did_not_run_is_flagged(dtype):
    c = literal_calibration()
    layer = dict(add_layer('Add-1', 1000, 500), dtype=dtype)
    t, flag = c.predict(layer)
    # predicted as the float32 call: 1e-5 + 1e-9 * 1000 + 2e-9 * 500
    assert flag == cal.OTHER_DTYPE and t == pytest.approx(1.2e-5)
    # an uncovered type says that first
    assert c.predict(dict(layer, type='Sub'))[1] == cal.UNCOVERED
    rows = cal.time_report([layer], c)
    assert rows['total']['n_flagged'] == 1
    assert "'other dtype' (the calibration probes float32" in \
        cal.flagged_summary(rows)


def test_a_call_of_integers_is_not_flagged_for_its_dtype():
    layer = dict(add_layer('Add-1', 1000, 500), dtype='int32')
    assert literal_calibration().predict(layer)[1] is None

# Predictions


def test_a_call_up_to_four_times_the_range_is_not_flagged():
    c = literal_calibration()
    # Reading 4e6 bytes, 4 x the largest read fitted: within the range;
    # writing 4e6 + 1: outside.  1e-5 + 4e-3 = 4.01e-3 s.
    t, flag = c.predict(add_layer('Add-1', 4 * 10 ** 6, 0))
    assert flag is None and t == pytest.approx(4.01e-3, rel=1e-12)
    assert c.predict(add_layer('Add-2', 0, 4 * 10 ** 6 + 1))[1] == \
        cal.OUT_OF_RANGE
    # An uncovered call is flagged as such, whatever its range.
    sub = dict(add_layer('Sub-1', 10 ** 8, 0), type='Sub')
    assert c.predict(sub)[1] == cal.UNCOVERED


def test_each_feature_is_held_to_its_own_range():
    # Reads fitted up to 1e6 bytes, writes up to 1e3 only: writing 5e3
    # (over 4 x 1e3) is outside, though reads went far higher; writing
    # 4e3 is not.
    fit = dict(math_fit(), high=[1.0, 1e6, 1e3, 1e6, 1e6])
    c = literal_calibration(families={'math': fit})
    assert c.predict(add_layer('Add-1', 10, 5000))[1] == cal.OUT_OF_RANGE
    assert c.predict(add_layer('Add-2', 10, 4000))[1] is None


def test_a_call_with_no_fit_at_all_is_predicted_zero_and_flagged():
    # A calibration without elementwise math's fit has nothing to stand
    # in for a family it never fitted: the call costs 0 s in the report,
    # flagged, and the report still adds up (its overhead, 1 us).
    c = literal_calibration(families={}, types=())
    assert c.predict(add_layer('Add-1', 8, 8)) == (0.0, cal.UNCOVERED)
    rows = cal.time_report([add_layer('Add-1', 8, 8)], c)
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
    assert literal_calibration(bandwidth=None).device().bandwidth == 1e10


def test_a_calibration_names_its_device_date_and_size():
    assert repr(literal_calibration(types=('Add', 'Sub'))) == (
        '<Calibration of test (2026-01-01T00:00:00Z), 1 families, 2 types>')
    assert repr(Calibration(flat_table(), {}, {}, OVERHEAD)) == \
        '<Calibration of ? (?), 0 families, 0 types>'


# The file


def test_the_saved_file_holds_every_part_in_order(tmp_path):
    path = str(tmp_path / 'c.json')
    literal_calibration().save(path)
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
    # A file without info loads with an empty one (every file calibrate()
    # writes has one, with the clock, but the format does not need it).
    del data['info']
    back = Calibration.from_dict(data)
    assert back.info == {} and back.bandwidth == 1e10


def test_a_file_of_no_known_format_is_refused_with_its_start():
    with pytest.raises(ValueError, match=r"not a calibration of format 2 "
                       r".*\"\['a', 'b'\]\""):
        Calibration.from_dict(['a', 'b'])
    # A long one is quoted by its first 80 characters only: '[' and
    # '0, ' to '9, ' are 1 + 10*3 = 31, '10, ' to '21, ' 12*4 = 48 more
    # (79), then the '2' of 22.
    with pytest.raises(ValueError) as e:
        Calibration.from_dict(list(range(100)))
    assert str(e.value) == (
        'not a calibration of format 2 (see chainer_computational_cost.'
        "calibrate): '[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, "
        "15, 16, 17, 18, 19, 20, 21, 2'")
    # A format of a later version without a table is not a calibration.
    with pytest.raises(ValueError, match='not a calibration of format 2'):
        Calibration.from_dict({'format': 3})
    with pytest.raises(ValueError, match='a calibration of format 3, and'):
        Calibration.from_dict({'format': 3, 'gemm': {}})


def _edited(tmp_path, edit):
    """The path of ``literal_calibration()`` saved, then ``edit(data)`` by
    hand."""
    data = literal_calibration().to_dict()
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
    (_set('families', 'Math', math_fit()), "^a malformed calibration: a "
     "key of field 'families' must be one of 'matmul', .*, got 'Math'$"),
    (_set('types', 'Add', 'maths'), _FIELD + "types.Add' must be one of "
     "'matmul', .*'math', .*, got 'maths'$"),
    (_set('gemm', 'speed', [[[1e9]]]), _FIELD + "gemm.speed' must be a "
     r'list of 2 lists \(one for each of gemm.dims\), got '
     r'\[\[\[1000000000\.0\]\]\]$'),
    (_set('gemm', 'speed', [[[1e9] * 2] * 2, [[1e9, 0]] * 2]),
     _FIELD + r"gemm\.speed\[1\]\[0\]\[1\]' must be a finite number "
     r'from 1 to 8\.988e\+307 \(multiply-adds per second, twice that as '
     r'FLOP/s\), got 0$'),
    # a call's time divides by it: 5e-324 made its time infinite, and the
    # error blamed a coefficient
    (_set('gemm', 'speed', [[[1e9] * 2] * 2, [[1e9, 5e-324]] * 2]),
     _FIELD + r"gemm\.speed\[1\]\[0\]\[1\]' must be a finite number "
     r'from 1 to 8\.988e\+307 \(multiply-adds per second, twice that as '
     r'FLOP/s\), got 5e-324$'),
    # twice 1e308 multiply-adds a second, the peak in FLOP/s, is no float
    (_set('gemm', 'speed', [[[1e9] * 2] * 2, [[1e9, 1e308]] * 2]),
     _FIELD + r"gemm\.speed\[1\]\[0\]\[1\]' must be a finite number "
     r'from 1 to 8\.988e\+307 \(multiply-adds per second, twice that as '
     r'FLOP/s\), got 1e\+308$'),
    (_set('gemm', 'dims', []), _FIELD + "gemm.dims' must be a list of ints "
     r'>= 1 in increasing order, one or more, got \[\]$'),
    (_set('gemm', 'dims', [4, 1]), r'got \[4, 1\]$'),
    (_set('gemm', 'dims', [0, 4]), _FIELD + r"gemm\.dims\[0\]' must be "
     'an int >= 1, got 0$'),
    (_set('info', 'a laptop'), _FIELD + "info' must be a dict, got "
     "'a laptop'$"),
    # each loaded, then misled: the types a short budget left unprobed as
    # the letters C, o, n, v; a clock calibrate() refuses; a file trusted
    # for want of its error; the roofline at 1e10 B/s for want of a
    # bandwidth; every call flagged for want of a fit; a range no call
    # lies in
    (_set('info', 'uncovered', 'Conv'), _FIELD + "info.uncovered' must be "
     "a list of function type names \\(str\\), got 'Conv'$"),
    (_set('info', 'uncovered', ['MatMul', 3]), _FIELD +
     r"info\.uncovered\[1\]' must be a function type name \(a str\), got "
     '3$'),
    (_set('info', 'clock', 'sundial'), _FIELD + "info.clock' must be one "
     "of 'wall', 'cpu', got 'sundial'$"),
    (_drop('error'), _FIELD + "error' is missing$"),
    (_set('error', None), _FIELD + r"error' must be a dict \(the held-out "
     r'errors\), got None$'),
    (_drop('bandwidth'), _FIELD + "bandwidth' is missing$"),
    (_set('bandwidth', None), _FIELD + "bandwidth' must be a finite number "
     r'> 0 \(the measured copy bandwidth, bytes/s\), got None$'),
    (_set('families', {}), _FIELD + "families' must hold at least one fit, "
     'got {}$'),
    # each loaded, then failed in time_report naming no field (the
    # device's title) or went unnoticed (a misspelt overhead beside the
    # right one, a field no version writes)
    (_set('info', 'device', 5), _FIELD + "info.device' must be a str or "
     'None, got 5$'),
    (_set('info', 'seconds', float('nan')), _FIELD + "info.seconds' must "
     'be a finite number > 0, got nan$'),
    (_set('overhead', 'forwrd', 0.0), _FIELD + r"overhead\.forwrd' is "
     r'unknown \(the fields there: inference, forward, backward, '
     r'update\)$'),
    (_set('extra', 1), _FIELD + r"extra' is unknown \(the fields there: "
     'format, info, error, overhead, bandwidth, gemm, families, types'),
    (_set('gemm', 'speeds', []), _FIELD + "gemm.speeds' is unknown"),
    # loaded and kept: a misspelt mode left the error it meant out of
    # untrusted(), a NaN beside a fit's fields was never checked
    (_set('error', 'inferense', 0.9), _FIELD + r"error\.inferense' is "
     r'unknown \(the fields there: inference, training, n_probes\)$'),
    (_set('families', 'math', 'foo', float('nan')), _FIELD +
     r"families\.math\.foo' is unknown \(the fields there: coef, low, "
     r'high, n\)$'),
    # a format that is no int was shown as the data's first 80 characters
    # (and True as "a calibration of format True")
    (_set('format', '2'), _FIELD + r"format' must be 2 \(the int this "
     r"version writes\), got '2'$"),
    (_set('format', True), _FIELD + "format' must be 2 .*, got True$"),
    (_set('format', None), _FIELD + "format' must be 2 .*, got None$"),
    # math_fit's low is [1, 1, 1, 0, 0]
    (_set('families', 'math', 'high', [1, 1e6, 0.5, 1e6, 1e6]), _FIELD +
     r"families\.math\.high\[2\]' must be >= families\.math\.low\[2\] "
     r"\(a fit's range\), got 0\.5 < 1\.0$"),
])
def test_a_calibration_edited_by_hand_is_checked_field_by_field(
        tmp_path, edit, message):
    # the checks' message, after the file's name
    path = _edited(tmp_path, edit)
    with pytest.raises(ValueError) as e:
        Calibration.load(path)
    text, named = str(e.value), '{!r}: '.format(path)
    assert text.startswith(named)
    assert re.search(message, text[len(named):]), text
    assert '\n' not in text


def test_a_file_as_calibrate_writes_it_loads_and_an_earlier_one_too(
        tmp_path):
    # calibrate() writes the clock and the uncovered types in info, and
    # None for a mode with too few probes; a file of an earlier version of
    # the format has no info['uncovered'], and loads as before
    def as_written(data):
        data['info'].update(clock='cpu', uncovered=['MatMul'])
        data['error'] = {'inference': None, 'training': 0.2, 'n_probes': 3}
    c = Calibration.load(_edited(tmp_path, as_written))
    assert c.info['clock'] == 'cpu' and c.info['uncovered'] == ['MatMul']
    assert c.error['inference'] is None
    c = Calibration.load(_edited(tmp_path, _drop('info', 'device')))
    assert 'uncovered' not in c.info and c.bandwidth == 1e10


def test_a_calibrations_overheads_cannot_be_changed_after_its_checks():
    # set to -1 after the checks, an overhead made a step of -3.9997 s
    c = literal_calibration()
    with pytest.raises(TypeError, match='checked when its object was made'):
        c.overhead['forward'] = -1.0
    with pytest.raises(TypeError):
        c.overhead.update(forward=-1.0)
    assert c.overhead == OVERHEAD
    assert Calibration.from_dict(c.to_dict()).overhead == OVERHEAD


def test_the_clocks_a_calibration_may_name_are_those_calibrate_takes():
    from chainer_computational_cost.run import measure
    assert sorted(cal.CLOCKS) == sorted(measure.CLOCKS) == ['cpu', 'wall']


def test_save_refuses_what_load_would_refuse(tmp_path):
    # built in code without a bandwidth or a fit: no file load() refuses
    path = tmp_path / 'c.json'
    with pytest.raises(ValueError, match="field 'bandwidth' must be a "
                       'finite number > 0'):
        literal_calibration(bandwidth=None).save(str(path))
    with pytest.raises(ValueError, match="field 'families' must hold at "
                       'least one fit'):
        literal_calibration(families={}).save(str(path))
    assert not path.exists()


def test_a_calibration_built_in_code_is_checked_as_a_file_is():
    fit = dict(math_fit(), coef=[1e-5, 1e-9, 2e-9, 0.0, float('nan')])
    with pytest.raises(ValueError, match=r"^a malformed calibration: field "
                       r"'families\.math\.coef\[4\]' must be a finite "
                       r'number >= 0, got nan$'):
        literal_calibration(families={'math': fit})
    with pytest.raises(ValueError, match="'overhead.forward' must be a "
                       'finite number >= 0, got -1e-06$'):
        literal_calibration(overhead=dict(OVERHEAD, forward=-1e-6))
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
    # own); a field no version writes is refused (see
    # test_calibration_objects), not kept
    fit = math_fit()
    families = {'math': fit}
    c = literal_calibration(families=families)
    fit['coef'][0] = 1.0
    assert c.families['math']['coef'] == [1e-5, 1e-9, 2e-9, 0.0, 0.0]
    assert c.families['math']['n'] == 10
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
    layers = [add_layer('Add-1', 0, 0, 'backward', '/b'),
              add_layer('Add-2', 0, 0, 'update', '/a/c'),
              add_layer('Add-3', 0, 0, 'forward', '/a')]
    c = literal_calibration()
    assert list(cal.time_report(layers, c, by='phase')) == [
        'forward', 'backward', 'update', 'total']
    links = cal.time_report(layers, c, by='link')
    assert list(links) == ['/', '/a', '/a/c', '/b', 'total']
    # 1e-5 s a call; overheads forward 2e-6, backward 3e-6, update 4e-6.
    assert links['/a']['t_predicted'] == pytest.approx(2.6e-5)
    assert links['/']['t_predicted'] == pytest.approx(3.9e-5)
    assert links['/']['n_layers'] == 3
    # A call without a phase is a forward one.
    rows = cal.time_report([dict(add_layer('Add-1'), phase=None)], c,
                           by='phase')
    assert list(rows) == ['forward', 'total']


def test_the_time_report_takes_a_calibration_or_its_file(tmp_path):
    # the add of 1000 bytes read and 500 written, in inference: 1e-5 +
    # 1e-6 + 1e-6 inside the call, 1 us of overhead
    path = str(tmp_path / 'c.json')
    literal_calibration().save(path)
    rows = cal.time_report([add_layer('Add-1', 1000, 500)], path)
    assert rows['total']['t_predicted'] == pytest.approx(1.3e-5, rel=1e-12)
    # anything else is named (it was AttributeError: no 'overhead')
    with pytest.raises(TypeError, match='^calibration must be a '
                       'Calibration or the path of its JSON file, got 3$'):
        cal.time_report([add_layer('Add-1')], 3)


# When a calibration cannot be trusted, and which calls are flagged

def _variant(error=None, **info):
    # literal_calibration with its error replaced and its info added to
    data = literal_calibration().to_dict()
    if error is not None:
        data['error'] = error
    data['info'].update(info)
    return Calibration.from_dict(data)


def _with_error(inference, training, clock=None):
    return _variant({'inference': inference, 'training': training,
                     'n_probes': 10}, **({} if clock is None else
                                         {'clock': clock}))


def test_a_calibration_within_25_percent_is_trusted():
    # literal_calibration's own error: 10 % and 20 %
    assert literal_calibration().untrusted() is None
    assert _with_error(0.25, 0.25).untrusted() is None
    assert _with_error(None, None).untrusted() is None


def test_a_calibration_above_25_percent_says_why_and_what_to_do():
    # the worst mode's error is named: 42 % of training, over 21 %
    text = _with_error(0.21, 0.42).untrusted()
    assert text.startswith('held-out error 42% is above 25%: ')
    # by the wall clock (the default): a busy machine, --clock cpu
    assert 'other processes sharing the machine' in text
    assert '--clock cpu' in text
    # by the CPU time: not the clock's fault
    text = _with_error(0.26, None, clock='cpu').untrusted()
    assert text.startswith('held-out error 26% is above 25%: ')
    assert '--clock cpu' not in text and 'longer budget' in text


def test_a_calibration_whose_budget_missed_common_types_says_which():
    # info['uncovered'], the common types a short budget left unprobed:
    # named (with the error's reason first when both); an empty list, or
    # none at all (a file of an earlier version), is trusted
    found = literal_calibration()
    assert 'uncovered' not in found.info and found.untrusted() is None
    assert _variant(uncovered=[]).untrusted() is None
    missed = ['Convolution2DGradW', 'MatMul']
    found = _variant(uncovered=missed)
    assert found.untrusted() == (
        'its budget was too short to probe 2 of the types common networks '
        'spend their time in (Convolution2DGradW, MatMul): their calls '
        "are flagged 'uncovered type' (remedies: a longer budget, a "
        'quieter machine)')
    found = _variant({'inference': 0.1, 'training': 0.5}, uncovered=missed)
    text = found.untrusted()
    assert text.startswith('held-out error 50% is above 25%: ')
    assert text.endswith('; its budget was too short to probe 2 of the '
                         'types common networks spend their time in '
                         '(Convolution2DGradW, MatMul): their calls are '
                         "flagged 'uncovered type' (remedies: a longer "
                         'budget, a quieter machine)')


def test_a_calibration_made_with_another_chainer_says_so(monkeypatch):
    # info['chainer'], the version the probes ran under: the running one
    # (or none, a file of an earlier version) is trusted
    monkeypatch.setattr(chainer, '__version__', '7.8.1')
    assert _variant(chainer='7.8.1').untrusted() is None
    assert _variant().untrusted() is None
    assert _variant(chainer='6.7.0').untrusted() == (
        'made with Chainer 6.7.0, used with Chainer 7.8.1: the code it timed '
        "differs, and types named otherwise are flagged 'uncovered type' "
        '(Chainer 6 has MaxPooling2D where 7 has MaxPoolingND; remedy: '
        'calibrate with the Chainer you run)')


def test_flagged_calls_are_counted_by_flag_and_type():
    def row(t, flag):
        return {'type': t, 'flag': flag}
    rows = {'Conv-1': row('Deconvolution2DFunction', cal.UNCOVERED),
            'Conv-2': row('Deconvolution2DFunction', cal.UNCOVERED),
            'GradW-1': row('Convolution2DGradW', cal.UNCOVERED),
            'Add-1': row('Add', None),
            'Add-2': row('Add', cal.OUT_OF_RANGE),
            'total': row(None, None)}
    # 4 of the 5 calls (total left out): the uncovered first, 2 then 1
    assert cal.flagged_summary(rows) == (
        "4 of 5 calls flagged; 'uncovered type' (the calibration never ran "
        "that type: its family's fit, or elementwise math's, stands in (0 s "
        "with neither); a longer budget covers more types): 2 "
        "Deconvolution2DFunction, 1 Convolution2DGradW; "
        "'outside range' (bigger than 4x the largest call of its family "
        "the calibration ran: extrapolated): 1 Add")
    assert cal.flagged_summary({'Add-1': row('Add', None),
                                'total': row(None, None)}) is None


def test_a_calibration_path_is_a_str_or_a_path_like(tmp_path):
    # an int would go to open() as a file descriptor and close the
    # caller's file; a pathlib.Path is a path wherever a str is
    c = literal_calibration()
    with open(str(tmp_path / 'victim.txt'), 'w') as victim:
        fd = victim.fileno()
        for call in (lambda: Calibration.load(fd), lambda: c.save(fd)):
            with pytest.raises(TypeError, match=r'^path must be the path '
                               r'of a file \(a str or os.PathLike\), got '
                               r'{}$'.format(fd)):
                call()
        with pytest.raises(TypeError, match='^calibration must be a '
                           'Calibration or the path of its JSON file'):
            cal.load_calibration(fd)
        victim.write('still open')  # an OSError had the file been closed
    path = tmp_path / 'cal.json'
    c.save(path)
    assert Calibration.load(path).to_dict() == c.to_dict()
    # 3 calls of 1.2e-5 s each (test_time_report_per_call_by_hand)
    assert cal.time_report(_three_calls(), path)['total']['t_call'] == \
        pytest.approx(3.6e-5)


def test_overheads_too_large_for_a_float_are_named():
    # 1e308 s a call is a float, and so each call's time; three of them
    # sum past the largest float: a ValueError naming the fields, not inf
    huge = {k: 1e308 for k in OVERHEAD}
    with pytest.raises(ValueError, match=r"beyond a float's range \(total "
                       r't_predicted inf\): its field\(s\) '
                       r'overhead.backward, overhead.forward are too large'):
        cal.time_report(_three_calls(), literal_calibration(overhead=huge))


def test_figures_too_large_for_a_float_are_refused_by_name():
    # 10**400 bytes read (a projection to a batch of that order): the fit
    # takes the bytes as a float, which cannot hold them: OverflowError
    layers = _three_calls()
    layers[1]['mread'] = 10 ** 400
    with pytest.raises(ValueError, match=r"^the figures of call Add-2 \(its "
                       r"FLOPs, bytes or shapes\) are beyond a float's "
                       r'range: its time cannot be predicted; give a '
                       r'smaller batch size$'):
        cal.time_report(layers, literal_calibration())


@pytest.mark.parametrize('overhead, coef0, named', [
    # only the forward overhead edited: its two calls make 2e308 = inf;
    # the backward overhead (3e-6 s) and the fit are fine and not named
    ({'forward': 1e308}, 1e-5, 'overhead.forward'),
    # a fit's constant of 1e308 s, three calls: 3e308 = inf
    ({}, 1e308, r'families\.math\.coef'),
    # every part a float, their sum not: 2 * 8.5e307 + 1e307 = 1.8e308;
    # the backward's 1e307 is below max float / 3 parts = 5.99e307, and
    # the sum of such parts stays a float: only the forward is named
    ({'forward': 8.5e307, 'backward': 1e307}, 1e-5, 'overhead.forward'),
    # 2 * 6e307 + 6e307 = 1.8e308: both above 5.99e307, both named
    ({'forward': 6e307, 'backward': 6e307}, 1e-5,
     r'overhead\.backward, overhead\.forward'),
])
def test_only_the_fields_that_overflow_the_times_are_named(
        overhead, coef0, named):
    fit = dict(math_fit(), coef=[coef0, 1e-9, 2e-9, 0.0, 0.0])
    c = literal_calibration(overhead=dict(OVERHEAD, **overhead),
                            families={'math': fit})
    with pytest.raises(ValueError, match=r"its field\(s\) {} are too large; "
                       'calibrate again$'.format(named)):
        cal.time_report(_three_calls(), c)
