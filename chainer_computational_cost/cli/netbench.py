"""``netbench``: measure a ChainerMN communicator's all-reduce under
mpiexec (every rank runs it) and save the fitted network file::

    mpiexec -n 2 python -m chainer_computational_cost netbench \\
        --communicator naive --output net.json

The measuring is :mod:`~chainer_computational_cost.run.netbench`'s; this
module checks the arguments before it, on every rank, and reports a
mistake once, from rank 0.
"""

import sys

from chainer_computational_cost.cli.args import build_netbench_parser
from chainer_computational_cost.cli.args import cannot_write
from chainer_computational_cost.cli.args import check_output_file
from chainer_computational_cost.cli.args import own_error
from chainer_computational_cost.cli.args import report_errors
from chainer_computational_cost.cli.args import say
from chainer_computational_cost.cli.args import WRITE_ERRORS
from chainer_computational_cost.cli.args import WRITE_FAILED_STATUS
from chainer_computational_cost.cli.args import write_out
from chainer_computational_cost.cli.models import CommandError
from chainer_computational_cost.cli.models import one_line
from chainer_computational_cost.core import devices
from chainer_computational_cost.run import netbench


#: Exit status when a rank failed alone while timing and MPI was aborted
#: (mpiexec passes it on).
ABORT_STATUS = 1


def _world_rank():
    """This process's rank in MPI's world (0 without mpi4py): only rank 0
    reports a mistake."""
    try:
        from mpi4py import MPI
    except ImportError:
        return 0
    return MPI.COMM_WORLD.Get_rank()


def _world():
    """mpi4py's world communicator, or CommandError."""
    try:
        from mpi4py import MPI
    except ImportError:
        raise CommandError('netbench needs mpi4py: pip install mpi4py, or '
                           'install chainer_computational_cost with the '
                           '[mpi] extra')
    return MPI.COMM_WORLD


def _agreed(mpi_comm, check):
    """``check()``'s value on every rank, or the same CommandError on
    every rank when it raised one on any (the lowest such rank's): a rank
    that went on alone would wait for the others forever."""
    try:
        value, mine = check(), None
    except CommandError as e:
        value, mine = None, str(e)
    failed = [m for m in mpi_comm.allgather(mine) if m is not None]
    if failed:
        raise CommandError(failed[0])
    return value


def _check_room(nbytes, span, comm):
    """CommandError naming --sizes unless this rank can hold the size
    ``nbytes`` that holds the most among sizes of ``span`` bytes in all
    (see ``netbench.footprint``), found before the other sizes are timed:
    first the node's available memory for all its ranks, then an
    allocation."""
    problem = netbench.node_room_problem(
        nbytes, getattr(comm, 'intra_size', 1), netbench.available_memory(),
        span)
    if problem is None:
        problem = netbench.room_problem(nbytes, span)
    if problem is not None:
        raise CommandError('--sizes: rank {}: {}: give smaller sizes'.format(
            comm.rank, problem))


def _communicator(name):
    """``chainermn.create_communicator(name)``, or CommandError."""
    try:
        import chainermn
    except ImportError as e:
        raise CommandError('netbench needs ChainerMN: {}'.format(
            one_line(e)))
    try:
        return chainermn.create_communicator(name)
    except Exception as e:  # a name ChainerMN lacks, NCCL absent, ...
        raise CommandError('--communicator {!r} cannot be created here: {} '
                           '(naive runs on any machine)'.format(
                               name, one_line(e)))


def main(argv=None, ost=None):
    """The command, on every rank: measure, save the fit and print it on
    rank 0; a mistake is one ``error:`` line of rank 0 and status 2 on
    every rank.  Returns the exit status."""
    ost = sys.stdout if ost is None else ost
    first = _world_rank() == 0
    tell = say if first else (lambda text: None)
    return report_errors(lambda: _command(argv, ost, first), tell)


def _command(argv, ost, first=True):
    """The command on one rank (``first``: rank 0, the one that prints
    --help and --version)."""
    parser = build_netbench_parser()
    parser.quiet = not first
    args = parser.parse_args(argv)
    comm = _agreed(_world(), lambda: _communicator(args.communicator))
    if comm.size < 2:
        raise CommandError('netbench needs 2 ranks or more: mpiexec -n N '
                           'python -m chainer_computational_cost netbench')
    # Before minutes of measuring; rank 0 writes the file.
    _agreed(comm.mpi_comm, lambda: comm.rank == 0 and check_output_file(
        args.output, '--output', 'network.json'))
    sizes = args.sizes or netbench.DEFAULT_SIZES
    _agreed(comm.mpi_comm, lambda: _check_room(
        *netbench.heaviest(sizes), comm))
    try:
        network, rows = netbench.measure(comm, sizes, args.repeats,
                                         name=args.name)
    except ValueError as e:  # the times do not follow the sizes
        raise CommandError(str(e))
    except netbench.NoRoom as e:  # agreed by the ranks: memory taken since
        raise CommandError('--sizes: {}'.format(e))
    except Exception as e:
        # This rank's alone (the all-reduce could not get its memory):
        # the others wait in the all-reduce for it, so every rank is
        # stopped, after this rank's line.
        say(own_error('netbench stopped while timing: {}; every rank is '
                      'stopped'.format(one_line(e))))
        sys.stderr.flush()
        comm.mpi_comm.Abort(ABORT_STATUS)
        # (MPICH's Abort may return before mpiexec stops this process:
        # no traceback meanwhile)
        raise SystemExit(ABORT_STATUS)
    status = 0
    if comm.rank == 0:
        try:
            devices.save_network(network, args.output, n_ranks=comm.size,
                                 communicator=args.communicator,
                                 sizes=[r['bytes'] for r in rows],
                                 seconds=[r['seconds'] for r in rows])
            saved = '; saved to {}'.format(args.output)
        except WRITE_ERRORS as e:  # found writable, then not
            saved = ''
            status = WRITE_FAILED_STATUS
            failure = cannot_write(args.output, e)
        lines = ['{:>10}  {:>12}  {:>12}\n'.format(
            'bytes', 'measured us', 'model us')]
        for r in rows:
            lines.append('{:>10}  {:>12.1f}  {:>12.1f}\n'.format(
                r['bytes'], r['seconds'] * 1e6, r['model'] * 1e6))
        lines.append('latency {:.2f} us, bandwidth {:.3f} GB/s ({} ranks, '
                     '{}){}\n'.format(network.latency * 1e6,
                                      network.bandwidth / 1e9, comm.size,
                                      args.communicator, saved))
        written = write_out(ost, ''.join(lines), 'the table')
        if status:
            say(failure)
        else:
            status = written
    # (every rank ends with rank 0's status)
    return comm.mpi_comm.bcast(status, root=0)
