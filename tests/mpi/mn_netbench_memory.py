"""Run under mpiexec by tests/cli/test_netbench_memory.py: netbench's
command on the naive communicator where rank 1 alone runs out of memory
for the sizes above 1 KiB, without a real allocation that large: at once
(``first``), or only after the check before the timing passed (``later``:
memory another process took meanwhile), or inside an all-reduce of such
a size (``during``: the communicator's own buffers), rank 0 waiting in
it.  Exits with the command's status."""

import sys

from chainer_computational_cost.cli import netbench
from chainer_computational_cost.run import netbench as run_netbench


def main():
    when, path = sys.argv[1:3]
    from mpi4py import MPI
    if MPI.COMM_WORLD.Get_rank() == 1:
        make = run_netbench._one_param_link
        made = []

        def short_of_memory(nbytes):
            made.append(nbytes)
            if nbytes > 1024 and (when == 'first' or when == 'later' and
                                  made.count(nbytes) > 1):
                raise MemoryError()
            return make(nbytes)
        run_netbench._one_param_link = short_of_memory
        if when == 'during':
            real = run_netbench.mean_grad

            def mean_grad(comm):
                call = real(comm)

                def short(link):
                    if link.p.size * 4 > 1024:
                        raise MemoryError()
                    return call(link)
                return short
            run_netbench.mean_grad = mean_grad
    return netbench.main(['--communicator', 'naive', '--sizes', '4,1K,4K',
                          '--repeats', '2', '--output', path])


if __name__ == '__main__':
    sys.exit(main())
