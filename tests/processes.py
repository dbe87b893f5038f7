"""Child processes of the tests (examples, mpiexec), each in a session of
its own: whatever it starts (mpiexec's ranks, the commands of a shell
block) is killed with it when the test fails, times out or is
interrupted, so that no test leaves a process running.
"""

import json
import os
import signal
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MPIEXEC = os.path.join(os.path.dirname(sys.executable), 'mpiexec')


def communicate(argv, cwd=None, env=None, stdin=None,
                stderr=subprocess.PIPE, timeout=900):
    """(status, stdout, stderr) of ``argv`` as text, given ``stdin``; a
    TimeoutExpired after ``timeout`` seconds, the whole session killed."""
    proc = subprocess.Popen(
        argv, cwd=None if cwd is None else str(cwd), env=env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
        universal_newlines=True, start_new_session=True)
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    finally:
        # (only while the leader is not reaped: its id is then still the
        # session's, never another process's)
        if proc.returncode is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, out, err


def _why_no_mpi():
    try:
        import mpi4py  # NOQA
    except ImportError:
        return "no mpi4py (pip install '.[mpi]' from the checkout)"
    if not os.path.exists(MPIEXEC):
        return 'no mpiexec beside {} (pip install mpich)'.format(
            sys.executable)
    return None


#: Why the tests under mpiexec cannot run here (None: they can).
NO_MPI = _why_no_mpi()
#: Skips a test that runs mpiexec where it cannot run.
needs_mpi = pytest.mark.skipif(NO_MPI is not None, reason=str(NO_MPI))


def launch(tmp_path, n, script, *args):
    """The JSON lines the ranks of ``mpiexec -n n tests/mpi/script args``
    write, sorted by dtype and rank."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get(
        'PYTHONPATH', ''), OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1',
        MN_OUT=str(tmp_path))
    # (the ranks killed with mpiexec on a timeout)
    status, out, err = communicate(
        [MPIEXEC, '-n', str(n), sys.executable,
         os.path.join(HERE, 'mpi', script)] + list(args), env=env,
        timeout=150)
    assert status == 0, err[-3000:]
    rows = [json.loads(line) for path in sorted(tmp_path.glob('*.jsonl'))
            for line in path.read_text().splitlines()]
    assert len(rows) == n * len(args), out
    return sorted(rows, key=lambda r: (r['dtype'], r['rank']))
