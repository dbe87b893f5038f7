"""Running the command line in the tests: the one helper every test file
of the command line uses, in-process (``main()``, its report on a
StringIO) or under mpiexec."""

import contextlib
import io
import os
import sys

import pytest

from chainer_computational_cost.cli.main import main
from processes import communicate

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MPIEXEC = os.path.join(os.path.dirname(sys.executable), 'mpiexec')


def run(*argv):
    """``(status, report)`` of the command ``argv``, in-process.  A
    mistake the parser finds exits as argparse does (SystemExit(2)): its
    status is returned like any other."""
    out = io.StringIO()
    try:
        status = main(list(argv), ost=out)
    except SystemExit as e:
        status = e.code
    return status, out.getvalue()


def error_of(capsys, *argv):
    """The one ``error:`` line of a run that must fail with status 2 and
    print no report, without the newline: stderr must be that one line
    (no usage block, no traceback)."""
    status, text = run(*argv)
    err = capsys.readouterr().err
    assert (status, text) == (2, ''), err
    assert err.endswith('\n') and err.count('\n') == 1, err
    assert err.startswith('error: '), err
    return err[:-1]


def write_module(directory, name, text):
    """Write the module ``name`` (a model's, given as ``name:factory``)
    into ``directory`` with ``text``: its path."""
    path = os.path.join(str(directory), name + '.py')
    with open(path, 'w') as f:
        f.write(text)
    return path


def run_mpi(n, *argv, cwd=None, timeout=150):
    """``(status, stdout, stderr)`` of ``mpiexec -n n python -m
    chainer_computational_cost argv`` in ``cwd`` (every rank killed on a
    timeout)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + HERE + os.pathsep
               + os.environ.get('PYTHONPATH', ''), OMP_NUM_THREADS='1',
               OPENBLAS_NUM_THREADS='1')
    return communicate([MPIEXEC, '-n', str(n), sys.executable, '-m',
                        'chainer_computational_cost'] + list(argv),
                       cwd=cwd, env=env, timeout=timeout)


@contextlib.contextmanager
def unwritable_stdout(monkeypatch, closed):
    """``(ost, the reason a write to it fails)`` for a command's output
    that cannot be written: with ``closed``, a closed stdout (``>&-``:
    Python's sys.stdout is None); else /dev/full (skipped where there is
    none), closed after."""
    if closed:
        monkeypatch.setattr(sys, 'stdout', None)
        yield None, 'Bad file descriptor'
        return
    if not os.path.exists('/dev/full'):
        pytest.skip('no /dev/full')
    full = open('/dev/full', 'w')
    try:
        yield full, 'No space left on device'
    finally:
        try:
            full.close()
        except OSError:  # its buffer, flushed again, still finds no room
            pass
