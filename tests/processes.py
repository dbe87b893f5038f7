"""Child processes of the tests (examples, mpiexec), each in a session of
its own: whatever it starts (mpiexec's ranks, the commands of a shell
block) is killed with it when the test fails, times out or is
interrupted, so that no test leaves a process running.
"""

import os
import signal
import subprocess


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
