"""The command's warning lines: each said once, with the figures that
make it true (--measured with --plot-scaling; an anchoring missed by
little)."""

import json
import os

import pytest

from cli_runs import run

#: A training step of Linear(3, 2) scaled on a100 over ib-edr, a step
#: measured at N=2 far faster (1 ns) than any anchoring reaches.
FAR = ('cli_models:build_linear', '--shape', '2,3', '--train', '--device',
       'a100', '--workers', '1,2', '--network', 'ib-edr', '--step-time',
       '0.001', '--measured', '2=1e-9')


def _warnings(err):
    return [line for line in err.splitlines() if line.startswith('warning:')]


def test_plot_scaling_says_the_reports_warning_once(tmp_path, capsys):
    # the plot's line for each overlap mode recomputed the report and
    # warned again, with that mode's 'nearest' and no mode named
    pytest.importorskip('matplotlib')
    assert run(*FAR)[0] == 0
    alone = _warnings(capsys.readouterr().err)
    assert len(alone) == 1 and 'at N=2 last 1e-09 s' in alone[0]
    plot = str(tmp_path / 'scaling.png')
    assert run(*(FAR + ('--plot-scaling', plot)))[0] == 0
    assert _warnings(capsys.readouterr().err) == alone


def test_an_anchoring_missed_by_little_shows_the_difference(capsys):
    # two steps of 0.1 s at N=2 and N=8 cannot both be met: the step at 8
    # ends 0.012 % off, which 4 digits printed as 'last 0.1 s (the
    # nearest: 0.1 s)'
    status, out = run('cli_models:build_linear', '--shape', '2,3',
                      '--train', '--device', 'a100', '--network', 'ib-edr',
                      '--workers', '2,8', '--measured', '2=0.1,8=0.1',
                      '--mode', 'json', '--columns', 'workers,t_step')
    assert status == 0
    t8 = json.loads(out)['rows'][1]['t_step']
    line, = _warnings(capsys.readouterr().err)
    said = line.split('at N=8 last 0.1 s (the nearest: ')[1].split(' s)')[0]
    # the step at 8 is 0.100012 s: 0.1 in 4 digits, 0.10001 in 5, the
    # fewest that tell it from 0.1
    assert t8 == pytest.approx(0.100012, rel=1e-6)
    assert said == '0.10001'


def test_plot_scaling_says_a_curve_left_out(tmp_path, capsys):
    # 1 ms at 8 workers fits the table's overlap ('none'); Horovod's
    # first 5 ms cycle does not: the plot is drawn without its curve
    pytest.importorskip('matplotlib')
    plot = str(tmp_path / 'scaling.png')
    status, text = run('cli_models:build_linear', '--shape', '4,3',
                       '--train', '--device', 'a100', '--workers', '1,8',
                       '--network', 'ib-hdr200', '--measured', '8=0.001',
                       '--mode', 'csv', '--plot-scaling', plot)
    assert status == 0 and text.startswith('Workers,')
    warned, = _warnings(capsys.readouterr().err)
    assert warned.startswith(
        "warning: plot_scaling: the 'horovod' curve is left out: measured: "
        'the step at N=8 (0.001 s) is shorter than')
    assert os.path.getsize(plot) > 0


def test_a_warning_of_the_run_is_a_warning_line(tmp_path, monkeypatch,
                                                capsys):
    # a function the hook cannot cost beside one it can: the report of
    # the ReLU, and the hook's warning as one 'warning:' line after it
    # (it was Python's two lines, main.py's file and line and its source)
    from cli_runs import write_module
    write_module(tmp_path, 'cli_halved',
                 'import chainer.functions as F\n'
                 'from chainer import function_node\n'
                 'class Halved(function_node.FunctionNode):\n'
                 '    def forward(self, inputs):\n'
                 '        return inputs[0] / 2,\n'
                 'def build():\n'
                 '    return lambda x: F.relu(Halved().apply((x,))[0])\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    status, out = run('cli_halved:build', '--shape', '2,3', '--mode', 'csv',
                      '--unit', 'raw')
    assert status == 0
    # 6 elements: 6 comparisons, 24 bytes read and written
    assert out.splitlines()[1:] == ['ReLU-1,6,24,24,48', 'total,6,24,24,48']
    assert capsys.readouterr().err.splitlines() == [
        'warning: `cli_halved.Halved` is not yet supported by '
        'ComputationalCostHook, ignored']
