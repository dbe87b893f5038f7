"""Behaviours of the command line's runs (``__main__``) a user would
miss: the progress labels of the runs it makes, the logits a training
step accepts, and the ``calibrate`` command's checks, progress bar and
summary line.  Tiny models (tests/cli_models.py), main() in-process."""

import io
import os
import sys

import chainer
import chainer.links as L
import numpy
import pytest

from chainer_computational_cost.cli import calibrate as calibrate_command
from chainer_computational_cost.cli import main as cli
from chainer_computational_cost.cli.main import main
from chainer_computational_cost.cli.progress import progress_bar
from cli_runs import error_of
from cli_runs import run


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def labels(monkeypatch, *argv):
    """The run labels the progress shows on a terminal, in order, and the
    report."""
    monkeypatch.setattr(cli.Progress, 'INTERVAL', 0.0)
    err = FakeTerminal()
    monkeypatch.setattr(sys, 'stderr', err)
    status, text = run(*argv)
    assert status == 0
    shown = []
    for part in err.getvalue().split('\r'):
        label = part.split(':')[0] if not part.startswith('fit') else \
            ':'.join(part.split(':')[:2])
        if part.strip() and label not in shown and label != \
                'building the model':
            shown.append(label)
    return shown, text


# Progress: which run of how many

def test_progress_counts_the_check_run_of_a_projection(monkeypatch):
    # --shape 10: runs at batch 1, 2, 3 and the check run at 9 (the help:
    # 'runs at batch 1, 2 and 3 and a check run at 9'): 4 runs
    shown, _ = labels(monkeypatch, 'cli_models:build_tiny', '--shape', '10,3',
                      '--project', '--unit', 'raw', '--mode', 'csv')
    assert shown == ['batch 1 (run 1 of 4)', 'batch 2 (run 2 of 4)',
                     'batch 3 (run 3 of 4)', 'batch 9 (run 4 of 4)']


def test_progress_of_a_projection_to_batch_3_has_no_check_run(monkeypatch):
    shown, _ = labels(monkeypatch, 'cli_models:build_tiny', '--shape', '3,3',
                      '--project', '--unit', 'raw', '--mode', 'csv')
    assert shown == ['batch 1 (run 1 of 3)', 'batch 2 (run 2 of 3)',
                     'batch 3 (run 3 of 3)']


def test_projection_runs_batches_beyond_those_it_prepared(monkeypatch):
    # A ReLU scratch of 4n bytes, 4 more at odd batches, is on no line
    # through batches 1, 2, 3 nor 2, 3, 4: the projection draws it through
    # 4, 9 and 14 (projection.TOP_BATCHES) after its check run at 9; the
    # input of batch 14 is made when it runs.
    from chainer_computational_cost import cost_calculators
    relu = chainer.functions.activation.relu.ReLU
    monkeypatch.setitem(
        cost_calculators.scratches, relu,
        lambda func, in_data, out_shapes=None, backend=None:
        4 * len(in_data[0]) + 4 * (len(in_data[0]) % 2))
    shown, text = labels(monkeypatch, 'cli_models:build_tiny', '--shape',
                         '20,3', '--project', '--memory', '--unit', 'raw',
                         '--mode', 'csv')
    assert shown == ['batch 1 (run 1 of 4)', 'batch 2 (run 2 of 4)',
                     'batch 3 (run 3 of 4)', 'batch 9 (run 4 of 4)',
                     'batch 4 (run 5)', 'batch 14 (run 6)']
    # at batch 20: the ReLU's output 20*3*4 = 240 bytes, and its scratch
    # bounded from above: at least 4*20 = 80
    peak = text.splitlines()[1].split(',')
    assert peak[0] == 'peak' and peak[2] == '240' and int(peak[4]) >= 80


def test_progress_of_a_plain_run_names_its_batch(monkeypatch):
    shown, _ = labels(monkeypatch, 'cli_models:build_tiny', '--shape', '5,3')
    assert shown == ['batch 5']


def test_progress_of_fit_numbers_its_runs(monkeypatch):
    # fit's runs: the line through batches 1, 2, 3, its check at 9, then
    # the answer checked by a real run: 14 (69n + 4 <= 1000, see
    # test_cli.FIT_1000)
    shown, text = labels(monkeypatch, 'cli_models:build_tiny', '--shape',
                         '2,3', '--unit', 'raw', '--train', '--fit', '1000',
                         '--optimizer', 'sgd')
    assert shown == ['fit: batch 1 (run 1)', 'fit: batch 2 (run 2)',
                     'fit: batch 3 (run 3)', 'fit: batch 9 (run 4)',
                     'fit: batch 14 (run 5)']
    assert text.startswith('largest batch in 1000 bytes with sgd: 14 ')


# The logits a training step accepts

def build_one_class():
    """Linear(3 -> 1): logits of a single class."""
    return L.Linear(3, 1)


class NoClasses(chainer.Chain):
    def forward(self, x):
        return x[:, :0]


def build_no_classes():
    """Logits of shape (n, 0)."""
    return NoClasses()


class OneRowShort(chainer.Chain):
    def forward(self, x):
        return x[1:]


def build_one_row_short():
    """Logits of one sample fewer than the batch."""
    return OneRowShort()


class Normalized(chainer.Chain):
    def __init__(self):
        super(Normalized, self).__init__()
        with self.init_scope():
            self.bn = L.BatchNormalization(3)

    def forward(self, x):
        return self.bn(x)


def build_normalized():
    """A batch normalization over 3 features: logits of 3 classes."""
    return Normalized()


def test_inference_in_test_mode_and_a_step_in_train_mode():
    # chainer.config.train: a batch normalization uses its running
    # statistics (FixedBatchNormalization) in inference, the batch's own
    # (BatchNormalization) in a training step
    def first_type(*options):
        status, text = run('test_behaviour_main:build_normalized',
                           '--shape', '2,3', '--mode', 'csv', '--columns',
                           'type', '--summary', *options)
        assert status == 0
        return text.splitlines()[1].split(',')[-1]  # (after the phase)
    assert first_type() == 'FixedBatchNormalization'
    assert first_type('--train') == 'BatchNormalization'


def test_train_takes_logits_of_a_single_class():
    # Linear(3 -> 1) at batch 2: forward 2*3 multiply-adds + 2 bias adds
    # = 8 FLOPs (the forward LinearFunction row)
    status, text = run('test_behaviour_main:build_one_class', '--shape',
                       '2,3', '--unit', 'raw', '--train', '--mode', 'csv',
                       '--columns', 'type,phase,flops')
    assert status == 0
    assert 'LinearFunction,forward,8' in text.splitlines()


@pytest.mark.parametrize('factory, shape', [
    ('build_no_classes', '(2, 0)'), ('build_one_row_short', '(1, 3)')])
def test_train_refuses_logits_of_no_class_or_another_batch(factory, shape,
                                                           capsys):
    status, text = run('test_behaviour_main:' + factory, '--shape', '2,3',
                       '--train')
    err = capsys.readouterr().err
    assert (status, text) == (2, '')
    assert err == ('error: --train needs the model to return logits of '
                   'shape (N, n_classes): a Variable or array, alone or as '
                   'the one entry of a dict; it returned shape {} for a '
                   'batch of 2\n'.format(shape))


# calibrate: checks before minutes of measuring, the bar, the summary

def test_calibrate_needs_its_out_file(capsys):
    with pytest.raises(SystemExit) as e:
        main(['calibrate'])
    assert e.value.code == 2
    # one line, as every mistake of every command: no usage block
    assert capsys.readouterr().err == (
        'error: the following arguments are required: --out (see '
        '--help)\n')


def _never_calibrated(monkeypatch):
    """calibrate() replaced by a failure: a mistake found by the command
    is found before minutes of measuring."""

    def calibrate(**kwargs):
        raise AssertionError('measured')
    monkeypatch.setattr(calibrate_command, 'calibrate', calibrate)


@pytest.mark.parametrize('argv, message', [
    (['--seconds', 'abc'], "argument --seconds: invalid float value: 'abc' "
                           '(see --help)'),
    (['--clock', 'gpu'], "argument --clock: invalid choice: 'gpu' (choose "
                         "from 'wall', 'cpu') (see --help)"),
    (['--seed', 'x'], "argument --seed: invalid int value: 'x' (see "
                      '--help)'),
    (['--seconds', '5'], '--seconds must be a finite number >= 10, got '
                         '5.0'),
    (['--seconds', 'nan'], '--seconds must be a finite number >= 10, '
                           'got nan'),
    # a budget without end would measure forever
    (['--seconds', 'inf'], '--seconds must be a finite number >= 10, '
                           'got inf'),
    (['--secs', '30'], 'unrecognized arguments: --secs 30 (see --help)'),
])
def test_calibrate_mistakes_are_one_error_line(argv, message, tmp_path,
                                               monkeypatch, capsys):
    _never_calibrated(monkeypatch)
    assert error_of(capsys, 'calibrate', '--out', str(tmp_path / 'c.json'),
                    *argv) == 'error: ' + message
    assert not (tmp_path / 'c.json').exists()


def test_calibrate_refuses_a_directory_or_a_missing_one(tmp_path,
                                                        monkeypatch, capsys):
    _never_calibrated(monkeypatch)
    assert error_of(capsys, 'calibrate', '--out', str(tmp_path)) == (
        'error: --out {!r} is a directory: give a file name such as '
        'calibration.json'.format(str(tmp_path)))
    missing = str(tmp_path / 'no' / 'c.json')
    assert error_of(capsys, 'calibrate', '--out', missing) == (
        'error: --out {!r}: cannot write in directory {!r}: it does not '
        'exist'.format(missing, str(tmp_path / 'no')))


def test_calibrate_refuses_an_unwritable_directory(tmp_path, monkeypatch,
                                                   capsys):
    _never_calibrated(monkeypatch)
    locked = tmp_path / 'locked'
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(str(locked), os.W_OK):  # root writes anyway
            pytest.skip('a read-only directory is writable here (root)')
        path = str(locked / 'c.json')
        assert error_of(capsys, 'calibrate', '--out', path) == (
            'error: --out {!r} cannot be written: Permission '
            'denied'.format(path))
    finally:
        locked.chmod(0o700)


class FakeCalibration(object):
    info = {'device': 'cpu-test'}
    error = {'n_probes': 12, 'inference': 0.154, 'training': None}

    def save(self, path):
        with open(path, 'w') as f:
            f.write('{}')


def test_calibrate_prints_its_summary(tmp_path, monkeypatch):
    seen = {}

    def calibrate(seconds, clock, seed, progress):
        seen.update(seconds=seconds, clock=clock, seed=seed)
        return FakeCalibration()
    monkeypatch.setattr(calibrate_command, 'calibrate', calibrate)
    out = io.StringIO()
    path = str(tmp_path / 'c.json')
    assert main(['calibrate', '--out', path, '--seconds', '30', '--clock',
                 'cpu', '--seed', '5'], ost=out) == 0
    assert seen == dict(seconds=30.0, clock='cpu', seed=5)
    # 0.154 -> '15%'; no training error -> 'n/a'
    assert out.getvalue() == (
        'calibrated cpu-test in 0 s: 12 probe runs, held-out error 15% '
        '(inference), n/a (training); saved to {}\n'.format(path))
    assert (tmp_path / 'c.json').read_text() == '{}'


def test_calibrate_defaults(tmp_path, monkeypatch):
    # the help's defaults: 120 s, the wall clock, random probes
    seen = {}

    def calibrate(**kwargs):
        seen.update(kwargs)
        return FakeCalibration()
    monkeypatch.setattr(calibrate_command, 'calibrate', calibrate)
    assert main(['calibrate', '--out', str(tmp_path / 'c.json')],
                ost=io.StringIO()) == 0
    assert (seen['seconds'], seen['clock'], seen['seed']) == (120, 'wall',
                                                              None)


def test_calibrate_reports_a_refused_budget(tmp_path, monkeypatch, capsys):

    def calibrate(**kwargs):
        raise ValueError('seconds must be at least 10')
    monkeypatch.setattr(calibrate_command, 'calibrate', calibrate)
    assert main(['calibrate', '--out', str(tmp_path / 'c.json')]) == 2
    assert capsys.readouterr().err == 'error: seconds must be at least 10\n'


def test_calibrate_bar_in_a_log_is_a_line_each_tenth():
    log = io.StringIO()
    progress = progress_bar(log)
    for fraction in (0, 0.05, 0.095, 0.1, 0.15, 0.19, 0.4, 1.0):
        progress(fraction, 'probe')
    # 0 -> tenth 0; 0.05, 0.095 -> 0 again (no line); 0.1 -> 1; 0.15,
    # 0.19 -> 1 (none); 0.4: 12 of 30 filled; 1.0: all 30
    assert log.getvalue().splitlines() == [
        '[' + '.' * 30 + ']   0% probe',
        '[###' + '.' * 27 + ']  10% probe',
        '[' + '#' * 12 + '.' * 18 + ']  40% probe',
        '[' + '#' * 30 + '] 100% probe']


class Log(object):
    """A stream with nothing but write and flush (no isatty)."""

    def __init__(self):
        self.lines = []

    def write(self, text):
        self.lines.append(text)

    def flush(self):
        self.lines.append('<flushed>')


def test_calibrate_bar_on_a_stream_without_isatty_is_a_log():
    log = Log()
    progress = progress_bar(log)
    progress(0.5, 'x')
    # flushed at once: a log shows each line as it is written
    assert log.lines == ['[' + '#' * 15 + '.' * 15 + ']  50% x\n',
                         '<flushed>']


def test_calibrate_bar_on_a_terminal_is_redrawn_in_place():
    tty = FakeTerminal()
    progress = progress_bar(tty)
    progress(0.5, 'x')
    progress(1.0, 'x')
    # 15 of 30 filled; each line padded to 70 columns, a newline at the end
    half = '[' + '#' * 15 + '.' * 15 + ']  50% x'
    full = '[' + '#' * 30 + '] 100% x'
    assert tty.getvalue() == ('\r' + half + ' ' * (70 - len(half)) + '\r' +
                              full + ' ' * (70 - len(full)) + '\n')
    # a long text is cut at 70 columns
    tty = FakeTerminal()
    progress_bar(tty)(0.0, 'y' * 80)
    assert tty.getvalue() == '\r[' + '.' * 30 + ']   0% ' + 'y' * 32


def build_array_logits():
    """Logits of 2 classes as a NumPy array, not a Variable."""
    return lambda x: numpy.ones((len(x), 2), numpy.float32)


def test_train_takes_logits_as_an_array():
    # the loss alone: softmax cross entropy of 3 samples of 2 classes
    status, text = run('test_behaviour_main:build_array_logits', '--shape',
                       '3,4', '--unit', 'raw', '--train', '--mode', 'csv',
                       '--columns', 'type,phase')
    assert status == 0
    assert text.splitlines()[1] == 'SoftmaxCrossEntropy,forward'


# Plots

def test_plot_scaling_is_written(tmp_path):
    path = str(tmp_path / 'scaling.png')
    status, _ = run('cli_models:build_linear', '--shape', '4,3', '--train',
                    '--device', 'a100', '--workers', '1,8', '--network',
                    'ib-edr', '--plot-scaling', path)
    assert status == 0
    with open(path, 'rb') as f:
        assert f.read(8) == b'\x89PNG\r\n\x1a\n'
