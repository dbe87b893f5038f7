"""ChainerMN support as a user reads it: which call a communication record
names, and what a gathered report adds up (worked by hand; see
benchmarks/mutate.py for how this file is used)."""

import sys

from chainer_computational_cost import mn


class _Real(object):
    """Just enough of an mpi4py communicator: one buffer call."""

    rank = 0
    size = 2

    def Bcast(self, buf, root=0):
        return None


def test_a_record_names_the_code_that_made_the_mpi_call():
    # The recorder hands the hook the frame of the code that called MPI:
    # a user's own function that broadcasts its weights is named by it
    # (the record's 'call'), not by the recorder's wrapper.
    import numpy as np
    seen = []
    recorder = mn.MPIRecorder(_Real(), lambda kind, nbytes, frame, error:
                              seen.append((kind, nbytes, frame)))

    def share_weights(comm):
        comm.Bcast(np.zeros(5, np.float32))  # 5 * 4 = 20 bytes
        return sys._getframe(0)
    here = share_weights(recorder)
    (kind, nbytes, frame), = seen
    assert (kind, nbytes) == ('MPI_Bcast', 20)
    assert frame is here
    assert mn.caller_name(frame, object()) == 'share_weights'
