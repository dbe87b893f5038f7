"""Measure the user's own network: the all-reduce a ChainerMN communicator
runs, timed at several sizes, fitted to the ring model of
:mod:`~chainer_computational_cost.analysis.network`, saved as a
:class:`~chainer_computational_cost.core.devices.Network` (the command
is :mod:`~chainer_computational_cost.cli.netbench`).

Under MPI (every rank runs it)::

    mpiexec -n 4 python -m chainer_computational_cost netbench \\
        --communicator naive --output mynet.json

then ``scaling_report(..., network='mynet.json')`` or ``--network
mynet.json``.  What is timed is the communicator's own
``multi_node_mean_grad`` on a model of one float32 parameter of each size:
the MPI all-reduce and whatever the communicator does around it (the
``naive`` one divides by the number of ranks, ``flat`` packs and unpacks),
so the fitted latency and bandwidth are those a training step sees.  Each
size is timed as a training loop runs its all-reduces, back to back: in
``repeats`` rounds (after ``warmup``), each started on all ranks together
(a barrier) and timing a few calls in a row; a size's time is the median
over the rounds of the slowest rank's time a call.  A size from
:data:`COLD_FROM` bytes up is all-reduced on copies in turn that span the
bytes of all the sizes (see :func:`copies`), as a model's all-reduce goes
through all its gradients before it comes back to one: one buffer
all-reduced again and again stays in the processor's caches, and timed
that way a 3 MB all-reduce ran 1.7 times as fast as among 8 copies
here.  The fit: the ring
all-reduce's ``t(S) = 2(N-1) * a + 2(N-1)/N * S / B``, the small sizes
setting the latency ``a`` and the large ones the bandwidth ``B`` (see
:func:`fit_ring`): give ``--sizes`` the bytes of your model's parameter
arrays to fit the regime they run in (multiples of 4: a size is timed
as exactly that many bytes of float32 gradients).  A Network measured
over N ranks is exact for N; at other rank counts the model
extrapolates.
"""

import itertools
import statistics
import sys
import time

from chainer_computational_cost.analysis import network as net
from chainer_computational_cost.core import checks
from chainer_computational_cost.core import devices

#: Bytes timed by default, from 4 B to 16 MiB.
DEFAULT_SIZES = (4, 256, 4096, 65536, 262144, 1048576, 4194304, 16777216)


#: Sizes from this many bytes up are timed on several copies in turn.
COLD_FROM = 65536

#: The most copies of a size.
MAX_COPIES = 8


def copies(nbytes, span=0):
    """How many copies of a size's gradient are all-reduced in turn when
    the sizes timed together hold ``span`` bytes (their sum: the arrays
    of a model, whose all-reduce goes through them all before it comes
    back to one): one below :data:`COLD_FROM` bytes (a small all-reduce
    costs its latency, wherever its bytes are), else enough to span
    ``span``, at most :data:`MAX_COPIES`.  Each all-reduce then finds its
    buffer where a model's finds a gradient, not in the cache the
    previous call left it in."""
    if nbytes < COLD_FROM:
        return 1
    return max(1, min(MAX_COPIES, -(-span // nbytes)))


def span_of(sizes):
    """The ``span`` of :func:`copies` for ``sizes`` timed together: the
    bytes of them all."""
    return sum(sizes)


def heaviest(sizes):
    """``(nbytes, span)``: the size of ``sizes`` whose copies hold the
    most (see :func:`footprint`), the one to check the memory for before
    any is timed, and the span they are timed with."""
    span = span_of(sizes)
    return max(sizes, key=lambda s: footprint(s, span)), span


def footprint(nbytes, span=0):
    """The bytes of gradients timing a size of ``nbytes`` holds (its
    parameters as many again): ``copies(nbytes, span) * nbytes``."""
    return copies(nbytes, span) * nbytes


#: Why a size must be a multiple of 4 (the error's reason).
SIZE_RULE = ('each size is timed as exactly that many bytes of float32 '
             'gradients (4 bytes each): give integers >= 4 that are '
             'multiples of 4')

#: Why a size cannot be larger (the error's reason).
TOO_LARGE = 'an array holds at most {} bytes'.format(sys.maxsize)


def size_problem(nbytes):
    """Why netbench cannot time exactly ``nbytes`` bytes, or None."""
    if not checks.is_int(nbytes) or nbytes < 4 or nbytes % 4:
        return SIZE_RULE
    if nbytes > sys.maxsize:
        return TOO_LARGE
    return None


def check_size(nbytes):
    """``nbytes`` as an int if netbench can time exactly that many bytes
    (an integer >= 4, a multiple of 4, that an array holds); a ValueError
    naming the size and why otherwise."""
    problem = size_problem(nbytes)
    if problem is not None:
        raise ValueError('sizes: cannot time {!r} bytes: {}'.format(
            nbytes, problem))
    return int(nbytes)


def check_sizes(sizes):
    """``sizes`` as a list of ints if netbench can fit the ring model to
    them: two sizes or more, each once (a row of the fit each), each one
    it can time (see :func:`check_size`); a ValueError naming what is
    wrong otherwise."""
    try:
        sizes = list(sizes)
    except TypeError:
        raise checks.ArgumentTypeError(
            'sizes must be an iterable of byte counts, got {!r}'.format(
                sizes))
    sizes = [check_size(s) for s in sizes]
    checks.once_each('sizes', sizes, sizes, 'each size is a row of the fit')
    if len(sizes) < 2:
        raise ValueError('sizes must hold two sizes or more (the fit has a '
                         'latency and a bandwidth), got {!r}'.format(sizes))
    return sizes


def _one_param_link(nbytes):
    """A link of one float32 parameter of ``nbytes`` bytes, its gradient
    set: what a size's all-reduce moves."""
    import chainer
    import numpy as np
    link = chainer.Link()
    n = check_size(nbytes) // 4
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
    back; ``link`` may be a list of links, all-reduced in turn.  Each of
    ``repeats`` rounds (after ``warmup``) starts all ranks together (a
    barrier) and times ``calls`` calls in a row; a round's time is the
    slowest rank's over ``calls``, the result the median over the rounds
    (every rank must call it)."""
    mpi_comm = comm.mpi_comm
    call = mean_grad(comm)
    turn = itertools.cycle(link if isinstance(link, list) else [link])
    times = []
    for i in range(warmup + repeats):
        mpi_comm.Barrier()
        start = time.perf_counter()
        for _ in range(calls):
            call(next(turn))
        elapsed = (time.perf_counter() - start) / calls
        if i >= warmup:
            times.append(elapsed)
    # Round by round, the slowest rank's time: the all-reduces end for
    # all when they end for the last.
    slowest = [max(ts) for ts in zip(*mpi_comm.allgather(times))]
    return statistics.median(slowest)


class NoRoom(MemoryError):
    """A size some rank could not allocate, raised on every rank alike
    (see :func:`time_allreduce`)."""


def _no_room(nbytes, where='memory', span=0):
    """What a size whose parameters and gradients (``footprint(nbytes,
    span)`` each) could not be allocated is told, before the run or
    during it."""
    k = copies(nbytes, span)
    what = '{} bytes of float32 gradients'.format(nbytes) if k == 1 else \
        '{} bytes of float32 gradients ({} copies of {}, all-reduced in ' \
        'turn)'.format(k * nbytes, k, nbytes)
    return ('{} do not fit in {} (twice: the parameter and its gradient)'
            .format(what, where))


def available_memory():
    """The bytes this node can still give its processes (Linux's
    MemAvailable, from /proc/meminfo), or None where that is unknown."""
    try:
        with open('/proc/meminfo') as f:
            for line in f:
                if line.startswith('MemAvailable:'):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def node_room_problem(nbytes, ranks_on_node, available, span=0):
    """Why the ``ranks_on_node`` ranks of one node cannot each hold a
    size's parameters and gradients (``footprint(nbytes, span)`` each) in
    the ``available`` bytes of the node (see :func:`available_memory`;
    None: unknown, no problem found), or None.  Found before any rank
    allocates: each rank's own allocation succeeds, and the node's kernel
    then kills a process when they all touch their pages at once."""
    if available is None or \
            2 * footprint(nbytes, span) * ranks_on_node <= available:
        return None
    return _no_room(nbytes, "this node's available memory ({} bytes) for "
                    'its {} rank{}'.format(available, ranks_on_node,
                                           's' if ranks_on_node > 1
                                           else ''), span)


def room_problem(nbytes, span=0):
    """Why this process cannot hold a size's parameters and gradients
    (``footprint(nbytes, span)`` each), or None: they are allocated,
    written, and let go."""
    try:
        _one_param_link(footprint(nbytes, span))
    except MemoryError:
        return _no_room(nbytes, span=span)
    return None


def _agreed_links(comm, nbytes, span):
    """The links a size's all-reduces move in turn (``copies(nbytes,
    span)`` of :func:`_one_param_link`), on every rank, or
    :class:`NoRoom` on every rank when any could not allocate them: a
    rank that went on alone would wait for the others at the all-reduce
    forever."""
    try:
        links = [_one_param_link(nbytes)
                 for _ in range(copies(nbytes, span))]
        mine = None
    except MemoryError:
        links, mine = None, comm.rank
    failed = [r for r in comm.mpi_comm.allgather(mine) if r is not None]
    if failed:
        raise NoRoom(_no_room(
            nbytes, 'the memory of rank {}'.format(failed[0]), span))
    return links


def time_allreduce(comm, nbytes, repeats=10, warmup=2, span=0):
    """Seconds of one ``comm.multi_node_mean_grad`` of ``nbytes`` of
    float32 gradients (see :func:`time_mean_grad`), on ``copies(nbytes,
    span)`` of them in turn; :class:`NoRoom` (a MemoryError) on every
    rank when any rank cannot allocate them."""
    return time_mean_grad(comm, _agreed_links(comm, nbytes, span), repeats,
                          warmup)


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
    if len(sizes) != len(seconds) or len(set(sizes)) < 2:
        # (one size, however often timed, draws no line: no bandwidth)
        raise ValueError('fit_ring needs two different sizes or more, each '
                         'with its time, got sizes {}'.format(list(sizes)))
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
            raise ValueError(
                'the times do not grow with the size: no bandwidth to fit '
                '(sizes {}, times {}); time larger sizes (the bandwidth '
                'comes from the larger half, best 1 MiB and more) or more '
                'repeats, which steady the times of small ones'.format(
                    list(sizes), list(seconds)))
        left = statistics.median(t - steps / n * s * inv_b
                                 for s, t in small)
        latency = max(0.0, left / steps)
    return latency, 1.0 / inv_b


def measure(comm, sizes=DEFAULT_SIZES, repeats=10, warmup=2, name=None):
    """Measure ``comm``'s all-reduce (every rank must call it): returns
    ``(network, rows)``, a fitted
    :class:`~chainer_computational_cost.core.devices.Network` and one row per
    size (``bytes``, ``seconds`` measured, ``model`` seconds).  Each
    size is timed exactly: a ValueError before any timing for one that is
    not a multiple of 4, given twice, or alone (see :func:`check_sizes`);
    :class:`NoRoom` (a MemoryError) on every rank for one that some rank
    cannot allocate (see :func:`room_problem` to find it before the
    timing); an ArgumentTypeError or ValueError for ``repeats`` that is
    no int >= 1, ``warmup`` no int >= 0.  Anything raised on one rank
    alone (memory the all-reduce itself could not get) leaves the others
    waiting in the all-reduce: the caller must stop them (the command
    aborts MPI).
    """
    sizes = check_sizes(sizes)  # before minutes of timing
    repeats = checks.positive_int('repeats', repeats)
    warmup = checks.integer('warmup', warmup, 0)
    n = comm.size
    span = span_of(sizes)
    seconds = [time_allreduce(comm, s, repeats, warmup, span)
               for s in sizes]
    latency, bandwidth = fit_ring(list(sizes), seconds, n)
    kind = type(comm).__name__
    network = devices.Network(
        name or 'netbench-{}'.format(n),
        'measured: {} over {} ranks'.format(kind, n), bandwidth, latency)
    rows = [{'bytes': s, 'seconds': t,
             'model': net.collective_time('MPI_Allreduce', s, n, network)}
            for s, t in zip(sizes, seconds)]
    return network, rows
