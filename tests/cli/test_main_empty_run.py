"""The command line (cli/main.py) on a model that makes no Chainer call:
one error line, whatever the report or mode asked for, rather than empty
reports (or, with --mode json, no document at all)."""

import pytest

from cli_runs import error_of
from cli_runs import write_module

NOTHING = ('error: nothing was recorded: the model made no Chainer function '
           'call (a model that returns its input unchanged, or computes '
           'with NumPy alone, has no cost to report)')


@pytest.mark.parametrize('options', [
    (), ('--mode', 'json'), ('--mode', 'csv', '--memory'),
    ('--summary', '--links'), ('--project', '--shape', '12,3'),
    ('--device', 'a100', '--mode', 'json'),
    # a training step: the command's own loss is no call of the model
    ('--train',), ('--train', '--fit', '1e6'),
    ('--train', '--project', '--shape', '12,3'),
])
def test_a_model_that_records_nothing_is_one_error(options, tmp_path,
                                                   monkeypatch, capsys):
    # error_of: status 2, nothing on stdout, one line on stderr (no
    # ReportWarning and its source line)
    write_module(tmp_path, 'cli_identity',
                 'def build():\n'
                 '    return lambda x: x\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    args = ('cli_identity:build', '--shape', '4,3') + tuple(options)
    assert error_of(capsys, *args) == NOTHING


UNSUPPORTED = (
    'error: nothing could be costed: the model made 2 Chainer function '
    'calls, of a function that ComputationalCostHook does not support '
    '(cli_doubled.Doubled): every report would be {} (from Python, '
    'add_custom_cost_calculator gives a function its cost)')


@pytest.mark.parametrize('options', [
    (), ('--mode', 'json'), ('--project', '--shape', '12,3'),
    ('--train',), ('--train', '--fit', '1e6'),
])
def test_a_model_whose_calls_none_can_cost_is_one_error(
        options, tmp_path, monkeypatch, capsys):
    # its function, twice: json printed nothing at status 0, --train
    # reported and fitted the command's own loss alone
    write_module(tmp_path, 'cli_doubled',
                 'from chainer import function_node\n'
                 'class Doubled(function_node.FunctionNode):\n'
                 '    def forward(self, inputs):\n'
                 '        return inputs[0] * 2,\n'
                 '    def backward(self, indexes, gy):\n'
                 '        return gy[0] * 2,\n'
                 'def build():\n'
                 '    def forward(x):\n'
                 '        y = Doubled().apply((x,))[0]\n'
                 '        return Doubled().apply((y,))[0]\n'
                 '    return forward\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    args = ('cli_doubled:build', '--shape', '4,3') + tuple(options)
    assert error_of(capsys, *args) == UNSUPPORTED.format(
        "of the command's loss alone" if '--train' in options else 'empty')
