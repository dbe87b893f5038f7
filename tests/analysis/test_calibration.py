"""Calibrations and predicted times (calibration.py, measure.py's fits).

Nothing here times anything: the fits run on synthetic timings made from
known coefficients, and the reports' arithmetic is checked by hand.
"""

import io
import json
import math

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

OVERHEAD = {'inference': 1e-6, 'forward': 2e-6, 'backward': 3e-6,
            'update': 4e-6}


def _flat_table(speed=1e9):
    # Every shape at one speed: a product of m*n*k takes m*n*k / speed.
    dims = [1, 4]
    return cal.GemmTable(dims, [[[speed] * 2] * 2] * 2)


def _math_fit(high=1e6):
    # math: 10 us a call, 1 ns per byte read, 2 ns per byte written,
    # nothing per FLOP or cold byte; fitted on up to ``high`` bytes read.
    return {'coef': [1e-5, 1e-9, 2e-9, 0.0, 0.0],
            'low': [1.0, 1.0, 1.0, 0.0, 0.0],
            'high': [1.0, high, high, high, high], 'n': 10}


def _calibration(types=('Add',), overhead=OVERHEAD, families=None,
                 bandwidth=1e10):
    # The flat table, and the math fit unless ``families`` says otherwise.
    return Calibration(_flat_table(),
                       {'math': _math_fit()} if families is None
                       else families,
                       {t: 'math' for t in types}, overhead,
                       {'inference': 0.1, 'training': 0.2, 'n_probes': 10},
                       {'device': 'test', 'date': '2026-01-01T00:00:00Z'},
                       bandwidth)


def _add(name, mread=0, mwrite=0, phase='forward', link='/',
         time=None):
    layer = {'name': name, 'type': 'Add', 'flops': 0, 'mread': mread,
             'mwrite': mwrite, 'phase': phase, 'link': link,
             'input_shapes': [(2,), (2,)], 'output_shapes': [(2,)],
             'dtype': 'float32'}
    if time is not None:
        layer['time'] = time
    return layer


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
                layers.append(_add('Add-x', r, w, phase,
                                   time=1e-5 + 1e-9 * r + 2e-9 * w))
        kind = [cal.overhead_kind(x, inference) for x in layers]
        wall = sum(x['time'] for x in layers) + sum(OVERHEAD[k]
                                                    for k in kind)
        samples.append((layers, wall, not inference))
    return samples


def test_fit_recovers_the_synthetic_model():
    families, types, overhead = measure._fit(_synthetic_samples(),
                                             _flat_table())
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
    error = measure.cross_validate(_synthetic_samples(), _flat_table())
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
    c = _calibration()
    # 1e-5 + 1e-9 * 1000 + 2e-9 * 500 = 1.2e-5 s.
    t, flag = c.predict(_add('Add-1', 1000, 500))
    assert t == pytest.approx(1.2e-5, rel=1e-12) and flag is None


def test_uncovered_and_out_of_range_calls_are_flagged():
    c = _calibration()
    # Sub is in the math family, but the calibration never ran it.
    sub = dict(_add('Sub-1', 1000, 500), type='Sub')
    t, flag = c.predict(sub)
    assert flag == cal.UNCOVERED and t == pytest.approx(1.2e-5)
    # Reading more than 4x the largest read fitted (1e6 bytes).
    t, flag = c.predict(_add('Add-2', 4 * 10 ** 6 + 1, 0))
    assert flag == cal.OUT_OF_RANGE
    # ReLU's family (activation) has no fit: elementwise math stands in.
    relu = dict(_add('ReLU-1', 1000, 500), type='ReLU')
    t, flag = c.predict(relu)
    assert flag == cal.UNCOVERED and t == pytest.approx(1.2e-5)
    # A convolution without a convolution fit nor shapes: still flagged.
    conv = dict(_add('c', 0, 0), type='Convolution2DFunction',
                input_shapes=[], output_shapes=[])
    assert c.predict(conv)[1] == cal.UNCOVERED


# JSON


def test_json_round_trip(tmp_path):
    c = _calibration()
    path = str(tmp_path / 'cal.json')
    c.save(path)
    back = Calibration.load(path)
    assert back.to_dict() == c.to_dict()
    assert back.overhead == OVERHEAD
    assert back.info['device'] == 'test'
    layer = _add('Add-1', 1000, 500)
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
    return [_add('Add-1', 1000, 500, 'forward', '/a', time=2e-5),
            _add('Add-2', 2000, 0, 'backward', '/a/b', time=3e-5),
            _add('Add-3', 0, 1000, 'forward', '/c')]


def test_time_report_per_call_by_hand():
    rows = cal.time_report(_three_calls(), _calibration())
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
    c = _calibration()
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


def test_an_inference_run_pays_the_inference_overhead():
    rows = cal.time_report([_add('Add-1', 0, 0)], _calibration())
    # 1e-5 + the inference overhead 1e-6.
    assert rows['total']['t_predicted'] == pytest.approx(1.1e-5)


def test_cost_report_time_report_and_its_rendering():
    x = numpy.ones((2, 3), numpy.float32)
    with ComputationalCostHook(measure_time=True) as hook:
        F.relu(x) + x
    c = _calibration(types=('Add', 'ReLU'))
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
    rows = proj.time_report(_calibration(types=('ReLU',)))
    assert rows['total']['n_layers'] == 1


def test_calibrate_checks_its_arguments():
    with pytest.raises(ValueError,
                       match='seconds must be a finite number >= 10'):
        calibrate(seconds=5)
    with pytest.raises(ValueError, match="clock must be 'wall'"):
        calibrate(seconds=10, clock='sundial')
    assert math.isfinite(measure.copy_bandwidth(numpy, 2 ** 16))


# The command line


def _cli(*argv):
    from chainer_computational_cost.cli.main import main
    out = io.StringIO()
    return main(list(argv), ost=out), out.getvalue()


def test_command_line_predict_time(tmp_path):
    path = str(tmp_path / 'cal.json')
    _calibration(types=('Add',)).save(path)
    status, text = _cli('cli_models:build_tiny', '--shape', '2,3',
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
    status, _ = _cli('cli_models:build_tiny', '--predict-by', 'type')
    assert status == 2
    assert '--predict-by needs --predict-time FILE' in capsys.readouterr().err
    bad = tmp_path / 'bad.json'
    bad.write_text('[]')
    status, _ = _cli('cli_models:build_tiny', '--predict-time', str(bad))
    assert status == 2
    assert '--predict-time: not a calibration' in capsys.readouterr().err
    status, _ = _cli('calibrate', '--out', str(tmp_path / 'c.json'),
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
    c = _calibration(types=('Add',))
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
    add = dict(_add('Add-1', 2 ** 21, 2 ** 20),
               input_shapes=[(2 ** 18,), (2 ** 18,)],
               output_shapes=[(2 ** 18,)])
    assert cal.features(add, None)[-1] == 3 * 2 ** 20
    # A linear layer x (5, 7) W (3, 7): the table's time of a 5x3x7
    # product at 1e9 multiply-adds/s, 105e-9 s.
    linear = {'type': 'LinearFunction', 'phase': 'forward', 'flops': 105,
              'mread': 200, 'mwrite': 60, 'input_shapes': [(5, 7), (3, 7)],
              'output_shapes': [(5, 3)], 'dtype': 'float32'}
    f = cal.features(linear, _flat_table().time)
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
    f = cal.features(conv, _flat_table().time)
    assert f == pytest.approx(
        [1.0, 13824e-9, 1024.0, 13824.0, 0.0, 432.0, 9.0])
    # Its input gradient, a deconvolution of gy (2, 4, 8, 8) by W: col2im
    # of 3*3*3*(2*8*8) = 3456 elements over rows of gy's width 8 (432);
    # the product is 27 x 128 x 4.
    grad_x = dict(conv, type='Deconvolution2DFunction', phase='backward',
                  input_shapes=[(2, 4, 8, 8), (4, 3, 3, 3)],
                  output_shapes=[(2, 3, 8, 8)])
    assert cal.features(grad_x, _flat_table().time)[5:] == [432.0, 9.0]
    # Each convolution type has its own fit, the rest their family's.
    assert cal.fit_key(conv) == 'Convolution2DFunction'
    assert cal.fit_key(grad_x) == 'Deconvolution2DFunction'
    assert cal.fit_key({'type': 'LinearGradData'}) == 'matmul'
    assert cal.fit_key({'type': 'ReLU'}) == 'activation'


def test_calibrate_command_refuses_an_unwritable_file_at_once(
        tmp_path, capsys):
    status, _ = _cli('calibrate', '--out', str(tmp_path / 'no' / 'c.json'))
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
