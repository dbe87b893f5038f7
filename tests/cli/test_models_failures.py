"""The command line's models (cli/models.py): a user's module or factory
that exits (SystemExit) is a failure of the model, one error line naming
the user's line, status 2; Ctrl-C still stops the command (130)."""

from chainer_computational_cost.cli.main import main
from cli_runs import error_of
from cli_runs import write_module


def test_a_module_that_exits_on_import(tmp_path, monkeypatch, capsys):
    path = write_module(tmp_path, 'cli_exits_on_import',
                        'import sys\n'
                        'sys.exit(3)\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert error_of(capsys, 'cli_exits_on_import:build') == (
        "error: importing module 'cli_exits_on_import' failed at {}:2: "
        'SystemExit: 3'.format(path))


def test_a_factory_that_exits(tmp_path, monkeypatch, capsys):
    path = write_module(tmp_path, 'cli_exiting_factory',
                        'def build():\n'
                        '    raise SystemExit(5)\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert error_of(capsys, 'cli_exiting_factory:build') == (
        'error: building the model failed at {}:2: SystemExit: '
        '5'.format(path))


def test_ctrl_c_in_a_factory_is_still_an_interruption(tmp_path, monkeypatch,
                                                      capsys):
    write_module(tmp_path, 'cli_interrupted_factory',
                 'def build():\n'
                 '    raise KeyboardInterrupt\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(['cli_interrupted_factory:build']) == 130
    assert capsys.readouterr().err == 'interrupted\n'


def test_an_exception_that_cannot_be_told_is_named_by_its_type(
        tmp_path, monkeypatch, capsys):
    # its __str__ raised inside the error's own formatting: a traceback
    # and status 1; its repr is taken, else its type alone
    path = write_module(tmp_path, 'cli_untellable',
                        'class Weird(Exception):\n'
                        '    def __str__(self):\n'
                        "        raise RuntimeError('str fails')\n"
                        'class Weirder(Weird):\n'
                        '    def __repr__(self):\n'
                        "        raise RuntimeError('repr fails')\n"
                        'def build():\n'
                        '    raise Weird(1)\n'
                        'def build2():\n'
                        '    raise Weirder()\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    assert error_of(capsys, 'cli_untellable:build') == (
        'error: building the model failed at {}:8: Weird: Weird(1)'.format(
            path))
    assert error_of(capsys, 'cli_untellable:build2') == (
        'error: building the model failed at {}:10: Weirder'.format(path))
