"""The command line's output (cli/output.py): where the fit's answer goes in
each mode, the layout of a JSON document, the predicted-time report and the
notes on stderr. Tiny models (tests/cli_models.py), main() in-process."""

import json

from chainer_computational_cost.cli.main import main
from cli_runs import error_of
from cli_runs import run
from cli_runs import write_module

# build_tiny's training step with SGD: the largest batch in 1000 bytes is
# 14 (69n + 4 <= 1000, see test_main.FIT_1000): activations 24*14 + 4 =
# 340, the loss's scratch 45*14 = 630, in all 970.
FIT = ('cli_models:build_tiny', '--shape', '2,3', '--unit', 'raw', '--train',
       '--fit', '1000', '--optimizer', 'sgd')
ANSWER = ('largest batch in 1000 bytes with sgd: 14 (peak during '
          'SoftmaxCrossEntropy-1)')
FIT_ROWS = [('parameters', 0), ('optimizer state', 0), ('activations', 340),
            ('gradients', 0), ('scratch', 630), ('total', 970),
            ('capacity', 1000)]


def test_fit_in_md_is_the_answer_then_its_table(capsys):
    status, text = run(*FIT)
    assert status == 0
    assert text.splitlines() == [ANSWER, '|Memory at batch 14|Bytes B|',
                                 '|:----|:----|'] + [
        '|{}|{}|'.format(*r) for r in FIT_ROWS]
    assert capsys.readouterr().err == ''


def test_fit_in_csv_is_the_table_with_the_answer_on_stderr(capsys):
    status, text = run(*FIT, '--mode', 'csv')
    assert status == 0
    assert text.splitlines() == ['Memory at batch 14,Bytes B'] + [
        '{},{}'.format(*r) for r in FIT_ROWS]
    assert capsys.readouterr().err == ANSWER + '\n'


def test_fit_with_the_columns_asked_for():
    status, text = run(*FIT, '--mode', 'csv', '--columns', 'bytes')
    assert status == 0
    assert text.splitlines() == ['Bytes B'] + [str(b) for _, b in FIT_ROWS]


def test_json_of_the_fit_is_indented_by_one_space():
    status, text = run(*FIT, '--mode', 'json')
    assert status == 0
    # one space per level: the answer's keys at 1, a list's items at 2
    assert text.startswith('{\n "device": null,\n "capacity": 1000,\n')
    assert '\n "checked": [\n  9,\n  14\n ],\n' in text
    assert text.endswith('\n}\n')


def test_json_of_several_reports_is_indented_by_one_space():
    status, text = run(*FIT, '--phases', '--mode', 'json')
    assert status == 0
    assert text.startswith('{\n "fit": {\n  "device": null,\n')
    assert '\n "phases": {\n' in text
    assert text.endswith('\n }\n}\n')


def test_memory_report_beside_a_timed_one_with_a_time_unit():
    # --time-unit goes to the timed report only (the memory report has no
    # time); 1 s = 1000 ms
    status, text = run('cli_models:build_tiny', '--shape', '2,3', '--unit',
                       'raw', '--memory', '--phases', '--measure-time',
                       '--time-unit', 's')
    assert status == 0
    memory, phases = text.split('\n\n')
    assert memory.startswith('|Memory|Bytes B|')
    assert phases.splitlines()[0].endswith('|Time s|')


def test_scaling_report_with_its_options():
    # --step-time 0.01 s: 10000 us of compute per worker, taken from the
    # option, not the roofline
    status, text = run('cli_models:build_linear', '--shape', '4,3', '--mode',
                       'csv', '--time-unit', 'us', '--train', '--device',
                       'a100', '--workers', '1,8', '--network', 'ib-edr',
                       '--step-time', '0.01', '--columns',
                       'workers,t_compute,step_from')
    assert (status, text) == (0, 'Workers,T compute us,Step from\n'
                                 '1,10000.0,step_time\n'
                                 '8,10000.0,step_time\n')


# The predicted times of a calibration (--predict-time)

#: A calibration whose ReLU takes 10 us a call, 1 ns a byte read and 2 ns
#: a byte written, plus 1 us of overhead in inference; every matrix
#: product at 1e9 multiply-adds a second.
CALIBRATION = {
    'format': 2, 'info': {'device': 'test'}, 'error': {},
    'overhead': {'inference': 1e-6, 'forward': 2e-6, 'backward': 3e-6,
                 'update': 4e-6},
    'bandwidth': 1e10,
    'gemm': {'dims': [1, 4], 'speed': [[[1e9] * 2] * 2] * 2},
    'families': {'activation': {
        'coef': [1e-5, 1e-9, 2e-9, 0.0, 0.0], 'low': [1, 1, 1, 0, 0],
        'high': [1, 1e6, 1e6, 1e6, 1e6], 'n': 10}},
    'types': {'ReLU': 'activation'}}


def predicted(tmp_path, *options):
    path = tmp_path / 'calibration.json'
    path.write_text(json.dumps(CALIBRATION))
    status, text = run('cli_models:build_tiny', '--shape', '2,3', '--mode',
                       'csv', '--time-unit', 'us', '--predict-time',
                       str(path), *options)
    assert status == 0
    return text.splitlines()


# ReLU of 6 float32: 24 bytes read, 24 written: 10 + 0.024 + 0.048 + 1 =
# 11.072 us; its roofline on the calibration's peak: 6 FLOPs at 1e9/s =
# 0.006 us (above 48 bytes at 1e10 B/s, 0.0048 us)

def test_predicted_times_per_call_by_default(tmp_path):
    assert predicted(tmp_path) == [
        'Layer name,Layer type,T predicted us,T roofline us,Flag',
        'ReLU-1,ReLU,11.072,0.006,', 'total,,11.072,0.006,']


def test_predicted_times_by_type(tmp_path):
    assert predicted(tmp_path, '--predict-by', 'type') == [
        'Layer type,# Layers,T predicted us,T roofline us,# Flagged',
        'ReLU,1,11.072,0.006,0', 'total,1,11.072,0.006,0']


def test_flagged_calls_are_said_on_stderr(tmp_path, capsys):
    # the calibration above covers ReLU: no note
    predicted(tmp_path)
    assert capsys.readouterr().err == ''
    # one that never ran ReLU flags its one call
    doc = dict(CALIBRATION, types={})
    path = tmp_path / 'uncovered.json'
    path.write_text(json.dumps(doc))
    status, text = run('cli_models:build_tiny', '--shape', '2,3',
                       '--predict-time', str(path))
    assert status == 0
    assert capsys.readouterr().err == (
        "note: 1 of 1 calls flagged; 'uncovered type' (the calibration "
        "never ran that type: its family's fit, or elementwise math's, "
        "stands in (0 s with neither); a longer budget covers more types): "
        "1 ReLU\n")


# A stream that cannot encode every character

def test_a_table_escaped_for_an_ascii_stream_keeps_its_columns_aligned(
        tmp_path, monkeypatch):
    # a link whose name has an accented e, r\u00e9seau: escaped (\xe9)
    # before the table is laid out, so that its column is as wide
    write_module(tmp_path, 'cli_accented',
                 'import chainer\n'
                 'import chainer.links as L\n'
                 '\n'
                 '\n'
                 'class Accented(chainer.Chain):\n'
                 '    def __init__(self):\n'
                 '        super(Accented, self).__init__()\n'
                 '        with self.init_scope():\n'
                 "            setattr(self, 'r\\u00e9seau', L.Linear(3, 2))\n"
                 '\n'
                 '    def forward(self, x):\n'
                 "        return getattr(self, 'r\\u00e9seau')(x)\n"
                 '\n'
                 '\n'
                 'def build():\n'
                 '    return Accented()\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / 'out.txt'
    with open(str(path), 'w', encoding='ascii') as f:
        status = main(['cli_accented:build', '--shape', '1,3', '--unit',
                       'raw', '--links', '1', '--mode', 'table',
                       '--columns', 'name,n_params'], ost=f)
    assert status == 0
    # Linear(3, 2): W 2*3 + b 2 = 8 parameters
    assert path.read_text().splitlines() == [
        '+-------------+----------+',
        '|    Link     | # Params |',
        '+=============+==========+',
        '| /           | 8        |',
        '+-------------+----------+',
        '|   r\\xe9seau | 8        |',
        '+-------------+----------+',
        '| total       | 8        |',
        '+-------------+----------+']


# Notes on stderr: never inside a JSON document's stream, only with text

def test_roofline_note_only_beside_a_table(capsys):
    options = ('cli_models:build_conv_linear', '--shape', '1,3,8,8',
               '--peak-flops', '1000', '--bandwidth', '1024')
    assert run(*options, '--mode', 'json')[0] == 0
    assert capsys.readouterr().err == ''
    assert run(*options, '--mode', 'csv')[0] == 0
    # the reshape moves no bytes: a blank Intensity and Bound, noted
    assert capsys.readouterr().err.startswith(
        'note: blank cells of the roofline report are not applicable: ')


def test_an_anchor_no_fit_reaches_is_one_warning_line(capsys):
    # A step of 1e-12 s on 8 workers of a 1 ms step: shorter than the
    # all-reduce alone; the report is printed, anchored on the nearest
    # (the fastest network, no stragglers), and stderr says so once,
    # without Python's source line
    status, text = run('cli_models:build_linear', '--shape', '4,3',
                       '--mode', 'csv', '--train', '--device', 'a100',
                       '--workers', '8', '--network', 'ib-edr', '--columns',
                       'workers,anchored', '--step-time', '0.001',
                       '--measured', '8=1e-12')
    err = capsys.readouterr().err
    assert status == 0
    assert text.splitlines() == ['Workers,Anchored',
                                 '8,"bus_bandwidth, jitter"']
    warned = [line for line in err.splitlines() if 'anchoring' in line]
    assert len(warned) == 1
    assert warned[0].startswith(
        'warning: scaling_report: no anchoring makes the step measured at '
        'N=8 last 1e-12 s (the nearest: ')
    assert 'ReportWarning' not in err


def test_a_step_no_compute_fits_is_one_error_line(capsys):
    # without --step-time the step at 8 fixes the compute, and 1e-12 s is
    # shorter than the all-reduce alone: refused, not rows of no compute
    assert error_of(capsys, 'cli_models:build_linear', '--shape', '4,3',
                    '--train', '--device', 'a100', '--workers', '8',
                    '--network', 'ib-edr', '--measured', '8=1e-12'
                    ).startswith(
        'error: --measured: the step at N=8 (1e-12 s) is shorter than '
        "the model's step there with no compute at all (")


def test_figures_past_a_float_are_one_error_line(capsys):
    # the step's times at 1e-305 FLOP/s and B/s overflow in microseconds
    assert error_of(capsys, 'cli_models:build_linear', '--shape', '4,3',
                    '--peak-flops', '1e-305', '--bandwidth', '1e-305') == (
        'error: roofline: the times of these figures at 1e-305 FLOP/s and '
        '1e-305 B/s overflow; give a device with a larger peak_flops or '
        'bandwidth')
