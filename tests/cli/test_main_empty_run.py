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
