"""Run under mpiexec by tests/report/test_gather_mpi.py: gather when one
rank cannot send its part (argv[1] names how rank 1 fails); every rank
writes one JSON line with what gather raised or returned."""

import sys

import chainer
import chainermn
import numpy as np

from chainer_computational_cost import ComputationalCostHook
from mn_train import emit


def add_with_a_lambda(func, in_data, **kwargs):
    """A custom calculator whose params hold a lambda (no pickle)."""
    a, b = in_data
    return a.size, a.size + b.size, a.size, {'op': lambda u, v: u + v}


def run(case, comm):
    x = np.ones((2, 3), np.float32)
    rank = comm.rank
    hook = ComputationalCostHook(
        comm=None if case == 'nocomm' and rank == 1 else comm)
    with hook:
        if case == 'unpicklable' and rank == 1:
            hook.add_custom_cost_calculator(
                chainer.functions.math.basic_math.Add, add_with_a_lambda)
        chainer.Variable(x) + x
        if case == 'inside' and rank == 1:
            return hook.gather()
    if case == 'roots':  # each rank a root of its own
        return hook.gather(root=rank)
    return hook.gather(root=comm.size if case == 'root' else 0)


def main(case):
    comm = chainermn.create_communicator('naive')
    try:
        got = run(case, comm)
        row = {'returned': type(got).__name__,
               'ranks': got.ranks if got is not None else None}
    except Exception as e:
        row = {'raised': type(e).__name__, 'message': str(e)}
    # the ranks go on together afterwards: the communicator still works
    row.update(rank=comm.rank, dtype=case,
               after=comm.mpi_comm.allreduce(1))
    emit(row)


if __name__ == '__main__':
    for name in sys.argv[1:]:
        main(name)
