"""What the user's module, factory and model print while the command
imports, builds and runs them: on stderr in --mode json and csv, whose
stdout a program reads and must hold the document alone; on stdout in
the modes a person reads, as without the command."""

import json
import os
import sys

import pytest

from cli_runs import run
from cli_runs import write_module
from processes import communicate
from processes import ROOT

PRINTING = ("print('importing')\n"
            'import chainer.links as L\n'
            'class Model(L.Linear):\n'
            '    def forward(self, x):\n'
            "        print('running')\n"
            '        return super().forward(x)\n'
            'def build():\n'
            "    print('building')\n"
            '    return Model(3, 2)\n')


@pytest.mark.parametrize('mode', ['json', 'csv'])
def test_prints_go_to_stderr_in_the_modes_programs_read(mode, tmp_path,
                                                        monkeypatch, capsys):
    # they came first on stdout, and json.load refused the document
    # (a module of its own each: one imported is not imported again)
    name = 'cli_printing_' + mode
    write_module(tmp_path, name, PRINTING)
    monkeypatch.syspath_prepend(str(tmp_path))
    status, report = run(name + ':build', '--shape', '2,3', '--mode', mode)
    out, err = capsys.readouterr()
    assert (status, out) == (0, '')
    assert err == 'importing\nbuilding\nrunning\n'
    if mode == 'json':
        # one LinearFunction: 2*2*3 = 12 multiply-adds (an FLOP each) and
        # 2*2 = 4 bias adds: 16 FLOPs
        assert json.loads(report)['rows'][-1]['flops'] == 16


def test_prints_stay_on_stdout_in_a_table(tmp_path, monkeypatch, capsys):
    write_module(tmp_path, 'cli_printing_md', PRINTING)
    monkeypatch.syspath_prepend(str(tmp_path))
    status, report = run('cli_printing_md:build', '--shape', '2,3', '--mode',
                         'md')
    assert status == 0 and report.startswith('|')
    assert capsys.readouterr().out == 'importing\nbuilding\nrunning\n'


def test_json_on_stdout_is_the_document_alone(tmp_path):
    write_module(tmp_path, 'cli_printing', PRINTING)
    env = dict(os.environ, PYTHONPATH=ROOT)
    status, out, err = communicate(
        [sys.executable, '-m', 'chainer_computational_cost',
         'cli_printing:build', '--shape', '2,3', '--mode', 'json'],
        cwd=tmp_path, env=env, timeout=120)
    assert (status, err) == (0, 'importing\nbuilding\nrunning\n')
    assert json.loads(out)['rows'][-1]['flops'] == 16
