"""Measure the user's own network: the all-reduce a ChainerMN communicator
runs, timed at several sizes, fitted to the ring model of
:mod:`~chainer_computational_cost.network`, saved as a
:class:`~chainer_computational_cost.network.Network`.

Under MPI (every rank runs it)::

    mpiexec -n 4 python -m chainer_computational_cost netbench \\
        --communicator naive --output mynet.json

(``python -m chainer_computational_cost.netbench`` is the same command)

then ``scaling_report(..., network='mynet.json')`` or ``--network
mynet.json``.  What is timed is the communicator's own
``multi_node_mean_grad`` on a model of one float32 parameter of each size:
the MPI all-reduce and whatever the communicator does around it (the
``naive`` one divides by the number of ranks, ``flat`` packs and unpacks),
so the fitted latency and bandwidth are those a training step sees.  Each
size is timed as a training loop runs its all-reduces, back to back: in
``repeats`` rounds (after ``warmup``), each started on all ranks together
(a barrier) and timing a few calls in a row; a size's time is the median
over the rounds of the slowest rank's time a call.  The fit: the ring
all-reduce's ``t(S) = 2(N-1) * a + 2(N-1)/N * S / B``, the small sizes
setting the latency ``a`` and the large ones the bandwidth ``B`` (see
:func:`fit_ring`): give ``--sizes`` the bytes of your model's parameter
arrays to fit the regime they run in.  A Network measured over N ranks is
exact for N; at other rank counts the model extrapolates.
"""

import statistics
import sys
import time

from chainer_computational_cost._cli_args import build_netbench_parser
from chainer_computational_cost._cli_args import check_output_file
from chainer_computational_cost._cli_args import report_errors
from chainer_computational_cost._cli_args import say
from chainer_computational_cost._cli_models import _one_line
from chainer_computational_cost._cli_models import CommandError
from chainer_computational_cost import network as net

#: Bytes timed by default, from 4 B to 16 MiB.
DEFAULT_SIZES = (4, 256, 4096, 65536, 262144, 1048576, 4194304, 16777216)


def _one_param_link(nbytes):
    import chainer
    import numpy as np
    link = chainer.Link()
    n = max(1, int(nbytes) // 4)
    with link.init_scope():
        link.p = chainer.Parameter(np.zeros(n, np.float32))
    link.p.grad = np.ones(n, np.float32)
    return link


def mean_grad(comm):
    """The communicator's gradient all-reduce (Chainer 7's
    ``multi_node_mean_grad``, Chainer 6's ``allreduce_grad``)."""
    method = getattr(comm, 'multi_node_mean_grad', None)
    return method if method is not None else comm.allreduce_grad


def time_mean_grad(comm, link, repeats=10, warmup=2, calls=4):
    """Seconds of one gradient all-reduce of ``link`` by ``comm`` (its
    ``multi_node_mean_grad``), as a training loop runs them: back to
    back.  Each of ``repeats`` rounds (after ``warmup``) starts all ranks
    together (a barrier) and times ``calls`` calls in a row; a round's
    time is the slowest rank's over ``calls``, the result the median over
    the rounds (every rank must call it)."""
    mpi_comm = comm.mpi_comm
    call = mean_grad(comm)
    times = []
    for i in range(warmup + repeats):
        mpi_comm.Barrier()
        start = time.perf_counter()
        for _ in range(calls):
            call(link)
        elapsed = (time.perf_counter() - start) / calls
        if i >= warmup:
            times.append(elapsed)
    # Round by round, the slowest rank's time: the all-reduces end for
    # all when they end for the last.
    slowest = [max(ts) for ts in zip(*mpi_comm.allgather(times))]
    return statistics.median(slowest)


def time_allreduce(comm, nbytes, repeats=10, warmup=2):
    """Seconds of one ``comm.multi_node_mean_grad`` of ``nbytes`` of
    float32 gradients (see :func:`time_mean_grad`)."""
    return time_mean_grad(comm, _one_param_link(nbytes), repeats, warmup)


#: Sizes up to this many bytes set the latency of the fit.
SMALL_BYTES = 4096


def fit_ring(sizes, seconds, n_ranks):
    """``(latency, bandwidth)`` of the ring all-reduce model
    ``t = 2(N-1) * a + 2(N-1)/N * S / B`` fitted to ``seconds`` at
    ``sizes`` (bytes) over ``n_ranks`` >= 2 ranks.

    Two regimes, as a machine shows them (cache-resident messages move
    faster than the megabytes of a model's gradients): the latency comes
    from the small sizes (up to :data:`SMALL_BYTES`, else the smallest),
    the bandwidth from the larger half of the sizes, by least squares on
    the time left after the latency (unweighted: the largest sizes, those
    of real gradients, count most); the two are refined in turn until
    they settle.  A latency below 0 is 0."""
    n = int(n_ranks)
    if n < 2:
        raise ValueError('an all-reduce needs 2 ranks or more, got {}'
                         .format(n))
    if len(sizes) != len(seconds) or len(sizes) < 2:
        raise ValueError('fit_ring needs two sizes or more, each with its '
                         'time')
    pairs = sorted(zip(sizes, seconds))
    small = [p for p in pairs if p[0] <= SMALL_BYTES] or pairs[:1]
    large = pairs[len(pairs) // 2:]
    steps = 2.0 * (n - 1)
    latency, inv_b = 0.0, None
    for _ in range(50):
        xs = [steps / n * s for s, _ in large]
        ys = [t - steps * latency for _, t in large]
        inv_b = sum(x * y for x, y in zip(xs, ys)) / sum(x * x for x in xs)
        if inv_b <= 0:
            raise ValueError('the times do not grow with the size: no '
                             'bandwidth to fit (times {})'.format(
                                 list(seconds)))
        left = statistics.median(t - steps / n * s * inv_b
                                 for s, t in small)
        latency = max(0.0, left / steps)
    return latency, 1.0 / inv_b


def measure(comm, sizes=DEFAULT_SIZES, repeats=10, warmup=2, name=None):
    """Measure ``comm``'s all-reduce (every rank must call it): returns
    ``(network, rows)``, a fitted
    :class:`~chainer_computational_cost.network.Network` and one row per
    size (``bytes``, ``seconds`` measured, ``model`` seconds)."""
    n = comm.size
    seconds = [time_allreduce(comm, s, repeats, warmup) for s in sizes]
    latency, bandwidth = fit_ring(list(sizes), seconds, n)
    kind = type(comm).__name__
    network = net.Network(
        name or 'netbench-{}'.format(n),
        'measured: {} over {} ranks'.format(kind, n), bandwidth, latency)
    rows = [{'bytes': s, 'seconds': t,
             'model': net.collective_time('MPI_Allreduce', s, n, network)}
            for s, t in zip(sizes, seconds)]
    return network, rows


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


def _communicator(name):
    """``chainermn.create_communicator(name)``, or CommandError."""
    try:
        import chainermn
    except ImportError as e:
        raise CommandError('netbench needs ChainerMN: {}'.format(
            _one_line(e)))
    try:
        return chainermn.create_communicator(name)
    except Exception as e:  # a name ChainerMN lacks, NCCL absent, ...
        raise CommandError('--communicator {!r} cannot be created here: {} '
                           '(naive runs on any machine)'.format(
                               name, _one_line(e)))


def main(argv=None, ost=None):
    """The command, on every rank: measure, save the fit and print it on
    rank 0; a mistake is one ``error:`` line of rank 0 and status 2 on
    every rank.  Returns the exit status."""
    ost = sys.stdout if ost is None else ost
    tell = say if _world_rank() == 0 else (lambda text: None)
    return report_errors(lambda: _command(argv, ost), tell)


def _command(argv, ost):
    args = build_netbench_parser().parse_args(argv)
    comm = _agreed(_world(), lambda: _communicator(args.communicator))
    if comm.size < 2:
        raise CommandError('netbench needs 2 ranks or more: mpiexec -n N '
                           'python -m chainer_computational_cost netbench')
    # Before minutes of measuring; rank 0 writes the file.
    _agreed(comm.mpi_comm, lambda: comm.rank == 0 and check_output_file(
        args.output, '--output', 'network.json'))
    try:
        network, rows = measure(comm, args.sizes or DEFAULT_SIZES,
                                args.repeats, name=args.name)
    except ValueError as e:  # the times do not follow the sizes
        raise CommandError(str(e))
    status = 0
    if comm.rank == 0:
        try:
            net.save_network(network, args.output, n_ranks=comm.size,
                             communicator=args.communicator,
                             sizes=[r['bytes'] for r in rows],
                             seconds=[r['seconds'] for r in rows])
            saved = '; saved to {}'.format(args.output)
        except OSError as e:  # found writable, then a full disk
            saved = ''
            status = WRITE_FAILED_STATUS
            failure = 'error: cannot write {}: {}'.format(
                args.output, e.strerror or e)
        ost.write('{:>10}  {:>12}  {:>12}\n'.format(
            'bytes', 'measured us', 'model us'))
        for r in rows:
            ost.write('{:>10}  {:>12.1f}  {:>12.1f}\n'.format(
                r['bytes'], r['seconds'] * 1e6, r['model'] * 1e6))
        ost.write('latency {:.2f} us, bandwidth {:.3f} GB/s ({} ranks, '
                  '{}){}\n'.format(network.latency * 1e6,
                                   network.bandwidth / 1e9, comm.size,
                                   args.communicator, saved))
        ost.flush()
        if status:
            say(failure)
    # (every rank ends with rank 0's status)
    return comm.mpi_comm.bcast(status, root=0)


#: Exit status when the network file could not be written (a full disk).
WRITE_FAILED_STATUS = 1


if __name__ == '__main__':
    sys.exit(main())
