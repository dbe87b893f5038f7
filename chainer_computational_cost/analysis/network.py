"""From bytes on the network to time: interconnect presets, the alpha-beta
model of MPI's collectives, and data-parallel scaling.

A message of ``S`` bytes between two ranks takes ``a + S / B`` seconds on
a network of latency ``a`` (seconds) and bandwidth ``B`` (bytes per second,
one direction).  A collective over ``N`` ranks costs, for the bytes ``S``
this rank hands to MPI (its ``comm_bytes``), as MPI's usual algorithms do:

==============================  ===========================================
record type                     ``t_network``
==============================  ===========================================
MPI_Allreduce (ring)            ``2(N-1)/N * S/B + 2(N-1) * a``
MPI_Bcast, MPI_Reduce,          ``ceil(log2 N) * (a + S/B)``
MPI_Scan (tree)
MPI_Allgather (ring)            ``(N-1) * (a + S/B)``
MPI_Gather (to the root)        ``ceil(log2 N) * a + (N-1) * S/B``
MPI_Scatter, MPI_Alltoall,      ``(N-1) * a + (N-1)/N * S/B``
MPI_Reduce_scatter (ring)
MPI_Send, MPI_Recv,             ``a + S/B``
MPI_Sendrecv
==============================  ===========================================

The pickle-based calls (``MPI_bcast_obj``, ...) follow their buffer
counterparts.  Every collective costs 0 at ``N = 1``.  The model is a
lower bound of its own kind: no contention, no congestion, one message
per call, the full link bandwidth for every step.
"""

import collections
import functools
import math
import sys
import typing
import warnings

from chainer_computational_cost.collect import mpi_recorder
from chainer_computational_cost.core import checks
from chainer_computational_cost.core.devices import bus_bandwidth
from chainer_computational_cost.core.devices import resolve_network
from chainer_computational_cost.core.records import ReportWarning


def collective_time(kind, nbytes, n_ranks, network):
    """Seconds of one MPI call of record type ``kind`` (``'MPI_Allreduce'``,
    ...) handing ``nbytes`` to MPI over ``n_ranks`` ranks on ``network``
    (see the module's table)."""
    checks.non_negative('nbytes', nbytes)
    net = resolve_network(network)
    a, s = net.latency, nbytes / net.bandwidth
    n = int(n_ranks)
    if n <= 1:
        return 0.0
    base = kind[4:].split('_')[0].lower()  # MPI_bcast_obj -> bcast
    if kind[4:].lower().startswith('reduce_scatter'):
        base = 'scatter'  # a ring: each rank sends (N-1)/N of its buffer
    steps = math.ceil(math.log2(n))  # of a binary tree over n ranks
    if base == 'allreduce':
        return 2.0 * (n - 1) / n * s + 2 * (n - 1) * a
    if base in ('bcast', 'reduce', 'scan'):
        return steps * (a + s)
    if base == 'allgather':
        return (n - 1) * (a + s)
    if base == 'gather':
        return steps * a + (n - 1) * s
    if base in ('scatter', 'alltoall'):
        return (n - 1) * a + (n - 1) / n * s
    return a + s  # send, recv


def add_t_network(rows, layers, network):
    """Add ``t_network`` (seconds, see :func:`collective_time`) to the rows
    of a roofline report: the communication records' network time, 0 for
    local computation; the total row gets their sum."""
    net = resolve_network(network)
    total = 0.0
    for layer in layers:
        row = rows[layer['name']]
        nbytes = layer.get('comm_bytes', 0)
        if nbytes or layer['type'].startswith('MPI_'):
            n = (layer.get('params') or {}).get('n_ranks', 1)
            t = collective_time(layer['type'], nbytes, n, net)
        else:
            t = 0.0
        row['comm_bytes'] = nbytes
        row['t_network'] = t
        total += t
    rows['total']['comm_bytes'] = sum(
        layer.get('comm_bytes', 0) for layer in layers)
    rows['total']['t_network'] = total
    return rows


#: Columns of a scaling report; the first nine are the report's since it
#: began (without the new arguments their figures are unchanged).
SCALING_COLUMNS = ('workers', 'comm_bytes', 't_compute', 't_allreduce',
                   't_step', 't_step_overlap', 'efficiency',
                   'efficiency_overlap', 'samples_per_s', 't_exposed_comm',
                   'n_buckets', 't_jitter', 'step_from', 't_contention',
                   't_negotiation', 'bus_bandwidth', 'anchored')


#: What ``model=`` a scaling report follows: ``'sourced'`` (effective bus
#: bandwidths, compute slowed by the all-reduces it overlaps, Horovod's
#: negotiation, stragglers by default, each from a published measurement)
#: or ``'bound'`` (line rates and none of those costs: 0.2.x's report, an
#: upper bound of the efficiency).
SCALING_MODELS = ('sourced', 'bound')


#: How much slower a backward pass runs while an all-reduce runs beside
#: it (NCCL's kernels take cores and memory bandwidth): the median of the
#: published endpoints 1.6, 2.5 (NVIDIA/nccl#1428: compute 1.6-2.5x slower
#: during an all-gather) and 2, 4 (NVIDIA/nccl#338: a batch normalization
#: backward from 2 ms to 4-8 ms).
CONTENTION_SLOWDOWN = 2.25


#: The default ``jitter`` of the sourced model, the coefficient of
#: variation of a worker's step: "8 % average performance variation"
#: between GPUs of one model in one cluster (Sinha et al. 2022, "Not All
#: GPUs Are Created Equal", arXiv 2208.11035 v3, abstract), where the
#: authors' artifact measures a variation as the box plot's whisker span
#: over the median, (Q3 + 1.5 IQR) - (Q1 - 1.5 IQR) = 4 IQR
#: (hal-uw/gpu_variability_sc22_artifact, plot_script/plot_aggregated.py);
#: a normal spread's IQR is 1.349 standard deviations, so
#: 0.08 / (4 * 1.349) = 0.0148.
DEFAULT_JITTER = 0.0148


#: How the gradient all-reduce meets the backward pass (``overlap=``).
OVERLAPS = ('none', 'chainermn-double-buffering', 'ddp', 'horovod')

#: Each option only some overlap modes take, and those modes.
MODE_OPTIONS = {'bucket_bytes': ('ddp', 'horovod'),
                'cycle_time': ('horovod',)}


# PyTorch DistributedDataParallel: bucket_cap_mb=25, in MiB (c10d's
# reducer.hpp: kDefaultBucketBytesCap = 25 * 1024 * 1024), and a first
# bucket of 1 MiB (kDefaultFirstBucketBytes = 1024 * 1024), so that the
# all-reduce starts early; pytorch.org, "DistributedDataParallel" (1.7.0:
# bucket_cap_mb=25).
DDP_BUCKET_BYTES = 25 * 1024 ** 2


DDP_FIRST_BUCKET_BYTES = 1024 ** 2


# Horovod's Tensor Fusion: "Default fusion buffer size is 64 MB"
# (horovod docs/tensor-fusion.rst; parameter_manager.cc turns the MB into
# bytes as x * 1024 * 1024), and the background thread's cycle of 5 ms
# (HOROVOD_CYCLE_TIME, milliseconds; parameter_manager.cc's first tuning
# point and the value the prototype used).
HOROVOD_FUSION_BYTES = 64 * 1024 ** 2


HOROVOD_CYCLE_TIME = 5e-3


def check_workers(workers):
    """``workers`` as a list of ints >= 1, each once: one int, or any
    iterable of them (read once); a one-line TypeError for a count that
    is no int, a ValueError otherwise."""
    if checks.is_int(workers):
        workers = [workers]
    elif isinstance(workers, (str, bytes)):
        workers = [workers]  # not its characters
    else:
        try:
            workers = list(workers)
        except TypeError:
            workers = [workers]
    bad = [w for w in workers if not checks.is_int(w) or w <= 0]
    if not workers or bad:
        # a TypeError when a count is no int at all, else a ValueError
        error = ValueError if all(checks.is_int(w) for w in bad) \
            else checks.ArgumentTypeError
        raise error('workers must be ints >= 1 (one int or an iterable of '
                    'them), got {!r}'.format(bad or workers))
    checks.once_each('workers', workers, workers,
                     'each worker count is a row')
    return [int(w) for w in workers]


def check_overlaps(overlaps):
    """``overlaps`` (modes of :data:`OVERLAPS` to compare: one str, or an
    iterable of them, each once) as a list; a one-line ValueError names a
    mode that is none or is given twice."""
    if isinstance(overlaps, str):
        overlaps = [overlaps]  # one mode, not its characters
    else:
        try:
            overlaps = list(overlaps)
        except TypeError:
            raise checks.ArgumentTypeError(
                'overlaps must be one of {} or a list of them, got '
                '{!r}'.format(', '.join(map(repr, OVERLAPS)), overlaps))
    if not overlaps:
        raise ValueError('overlaps must name one mode or more of {}, got '
                         '[]'.format(', '.join(map(repr, OVERLAPS))))
    modes = [checks.one_of('overlaps', mode, OVERLAPS) for mode in overlaps]
    twice = [m for k, m in enumerate(modes) if m in modes[:k]]
    if twice:  # (a curve is drawn once)
        raise ValueError('overlaps names {!r} more than once: one curve per '
                         'mode'.format(twice[0]))
    return modes


def check_batch_size(batch_size):
    """``batch_size`` (samples per worker) as an int >= 1, or None; a
    one-line TypeError or ValueError otherwise."""
    if batch_size is None:
        return None
    return checks.positive_int('batch_size', batch_size, 'an int >= 1 '
                               '(samples per worker) or None')


def allreduce_time(nbytes, n_workers, network, gpus_per_node=1,
                   node_network=None):
    """Seconds of one all-reduce of ``nbytes`` over ``n_workers``.

    With ``gpus_per_node`` 1 (or every worker in one node), one ring over
    all of them (:func:`collective_time`), on ``network``, or on
    ``node_network`` inside one node.  Otherwise hierarchical, as
    ChainerMN's ``hierarchical`` communicator and NCCL's rings across
    nodes do: a reduce inside each node, a ring all-reduce between the
    ``M = ceil(N / gpus_per_node)`` nodes on ``network`` (one port a node),
    a broadcast inside each node.  The reduce and the broadcast inside a
    node of ``g`` GPUs are pipelined chains, as NCCL runs them: ``S/B_node
    + (g-1) * a_node`` each.  ``node_network`` defaults to ``network``.
    Each network moves its own bandwidth (see :func:`effective_network`
    for what an all-reduce reaches on a preset)."""
    net = resolve_network(network)
    node = net if node_network is None else resolve_network(
        node_network, 'node_network')
    n = int(n_workers)
    g = checks.positive_int('gpus_per_node', gpus_per_node)
    # One worker costs 0 on either path (collective_time at n <= 1).
    if g <= 1:
        return collective_time('MPI_Allreduce', nbytes, n, net)
    if n <= g:
        return collective_time('MPI_Allreduce', nbytes, n, node)
    nodes = -(-n // g)
    inside = nbytes / node.bandwidth + (g - 1) * node.latency
    return 2 * inside + collective_time('MPI_Allreduce', nbytes, nodes, net)


def effective_network(network, gpus_per_node=1):
    """``network`` with its :func:`bus_bandwidth` for ``gpus_per_node``
    GPUs a node as its bandwidth, named ``'<name> (effective)'`` so that
    no transport applies twice."""
    net = resolve_network(network)
    effective = bus_bandwidth(net, gpus_per_node)
    if effective == net.bandwidth:
        return net
    return net._replace(name='{} (effective)'.format(net.name),
                        bandwidth=effective)


@functools.lru_cache(maxsize=None)
def expected_max_normal(n):
    """E[max of ``n`` independent standard normals] (0 at ``n = 1``), by
    the trapezoid rule on ``x * n * phi(x) * Phi(x)**(n-1)``, good to about
    1e-6: over [-9, max(9, a + 6)] in steps of 1e-3, a = sqrt(2 ln n);
    from a = 15 on (n above about 1e48), where the maximum lies within a
    few 1/a of a, over [a - 150/a, a + 60/a] in steps of 0.015/a.  The
    integrand is taken in logarithms, with ``1 - Phi(x)`` from erfc (Mills'
    ratio where that underflows), so that ``Phi(x)**(n-1)`` holds for any
    ``n``: ``Phi(x)`` rounded to 1 made the maximum grow as ``n`` beyond
    about 1e16 workers."""
    if n <= 1:
        return 0.0
    log_n = math.log(n)
    log_rest = math.log(n - 1)
    log_root = 0.5 * math.log(2 * math.pi)
    centre = math.sqrt(2 * log_n)
    if centre < 15:
        origin, h = 0.0, 1e-3
        steps = range(-9000, max(9000, int(1000 * (centre + 6))) + 1)
    else:
        origin, h = centre, 0.015 / centre
        steps = range(-10000, 4001)
    total = 0.0
    for k in steps:
        x = origin + k * h
        log_phi = -0.5 * x * x - log_root
        if x < 0:  # Phi(x) well below 1: log Phi directly
            minus_log_cdf = -math.log(0.5 * math.erfc(-x / _SQRT2))
        else:  # -log Phi(x) = -log1p(-Q(x)), Q(x) = 1 - Phi(x)
            minus_log_cdf = -math.log1p(-0.5 * math.erfc(x / _SQRT2))
        if minus_log_cdf > 0:  # log of (n - 1) * -log Phi(x)
            log_power = log_rest + math.log(minus_log_cdf)
        else:  # Q(x) below a float's least (x > 38): Mills' ratio's series
            r = 1 / (x * x)
            log_power = log_rest + log_phi - math.log(x) + math.log1p(
                r * (-1 + r * (3 - 15 * r)))
        if log_power < 709:  # (else Phi(x)**(n-1) is 0 to a float)
            log_term = log_n + log_phi - math.exp(log_power)
            if log_term > -745:
                total += x * math.exp(log_term)
    return total * h


_SQRT2 = math.sqrt(2)


class MeasuredStepError(ValueError):
    """A step measured (``measured=``) that no compute fits: shorter than
    what the model's step adds to the compute at its worker count."""


class ModelError(typing.NamedTuple):
    """How far a scaling model's efficiencies fell from published runs, in
    points of efficiency: of ``rows`` runs, ``within`` were within
    ``tolerance``; the ``median`` and ``worst`` absolute errors."""

    rows: int
    within: int
    tolerance: float
    median: float
    worst: float


#: Model -> its :class:`ModelError` a priori over the published runs of
#: ``tests/published_scaling_rows.py``,
#: ``tests/published_scaling_rows_held_out.py`` and
#: ``tests/analysis/test_network_published_scaling.py``, whose tests hold
#: these figures to what the runs give.
MODEL_ERRORS = {
    'sourced': ModelError(98, 64, 0.10, 0.064, 0.555),
    'bound': ModelError(98, 61, 0.10, 0.081, 0.598),
}


#: The sourced model anchored on the steps a run measured at a smaller N
#: (and at a baseline of several GPUs), over the published runs that give
#: them.
ANCHORED_ERROR = ModelError(69, 50, 0.05, 0.034, 0.173)


def model_error_note(model='sourced', anchored=False, jitter=None):
    """One sentence for a scaling report: how far ``model`` was from the
    published runs (and, ``anchored``, the anchored one), and the default
    jitter when ``jitter`` was not given (which anchoring may fit)."""
    def said(e):
        return ('within {:.0f} points of {} of {} published runs (median '
                'miss {:.1f} points, worst {:.1f})'.format(
                    e.tolerance * 100, e.within, e.rows, e.median * 100,
                    e.worst * 100))
    text = 'scaling model {!r}: a priori {}'.format(
        model, said(MODEL_ERRORS[model]))
    if anchored and model == 'sourced':
        text += '; anchored on measured steps {}'.format(
            said(ANCHORED_ERROR))
    if jitter is None and model == 'sourced':
        text += '; stragglers: jitter {} (Sinha et al. 2022){}'.format(
            DEFAULT_JITTER, ', or fitted to the measured steps where the '
            'anchored column says jitter' if anchored else
            ', 0 turns them off')
    return text


class _Said(object):
    """How a check's message names an argument and a value: as the Python
    keyword (``overlap='ddp'``), or as the command line's option given in
    ``names`` (``--overlap ddp``)."""

    def __init__(self, names):
        self.names = names or {}
        self.python = not self.names  # keywords, not options

    def __call__(self, key):
        return self.names.get(key, key)

    def value(self, value):
        """``value`` as typed: quoted for Python, bare for an option."""
        return repr(value) if self.python else str(value)

    def setting(self, key, value):
        """``key`` set to ``value``: ``overlap='ddp'``, ``--overlap ddp``."""
        if key in self.names:
            return '{} {}'.format(self.names[key], value)
        return '{}={!r}'.format(key, value)


def check_scaling_options(step_time=None, overlap='none', bucket_bytes=None,
                          gpus_per_node=1, node_network=None, jitter=None,
                          model='sourced', cycle_time=None, measured=None,
                          accumulation=1, names=None):
    """The checked scaling options as a dict (one-line ValueError naming
    the argument and what it allows otherwise); ``jitter`` None becomes
    the model's default.  ``names``: keyword -> how the messages name it
    (the command line's options); the keyword by default."""
    said = _Said(names)
    checks.one_of(said('overlap'), overlap, OVERLAPS)
    checks.one_of(said('model'), model, SCALING_MODELS)
    if cycle_time is not None:
        if overlap not in MODE_OPTIONS['cycle_time']:
            raise ValueError('{} goes with {}, not {}'.format(
                said('cycle_time'), said.setting('overlap', 'horovod'),
                said.value(overlap)))
        cycle_time = checks.positive(said('cycle_time') + ' (seconds)',
                                     cycle_time)
    measured = check_measured(measured, step_time is not None, said)
    accumulation = check_accumulation(accumulation, said)
    if step_time is not None:
        step_time = checks.positive(said('step_time') + ' (seconds)',
                                    step_time)
    if bucket_bytes is not None:
        if overlap not in MODE_OPTIONS['bucket_bytes']:
            raise ValueError('{} goes with {} or {}, not {}'.format(
                said('bucket_bytes'), said.setting('overlap', 'ddp'),
                said.value('horovod'), said.value(overlap)))
        bucket_bytes = checks.positive_int(said('bucket_bytes'),
                                           bucket_bytes)
    gpus_per_node = checks.positive_int(said('gpus_per_node'),
                                        gpus_per_node)
    if node_network is not None:
        node_network = resolve_network(node_network, said('node_network'))
        if gpus_per_node == 1:  # (no all-reduce inside a node of one)
            raise ValueError('{} goes with {} > 1, not {}'.format(
                said('node_network'), said('gpus_per_node'),
                said.setting('gpus_per_node', 1)))
    jitter_given = jitter is not None
    if jitter is None:
        jitter = DEFAULT_JITTER if model == 'sourced' else 0.0
    jitter = checks.non_negative(said('jitter'), jitter)
    if jitter_given and measured is not None:
        # The step that fixes a term beyond the compute (the other count,
        # or with step_time the only one; see _Plan._anchor): inside one
        # node, the jitter.
        n = max(measured)
        if (step_time is not None or len(measured) == 2) and \
                n <= gpus_per_node:
            step = {n: measured[n]} if said.python else '{}={}'.format(
                n, measured[n])
            raise ValueError(
                '{} and a step measured inside one node ({} with {}) both '
                'set the stragglers (the measured step fits the jitter): '
                'give one or the other'.format(
                    said('jitter'), said.setting('measured', step),
                    said.setting('gpus_per_node', gpus_per_node)))
    return dict(step_time=step_time, overlap=overlap,
                bucket_bytes=bucket_bytes, gpus_per_node=gpus_per_node,
                node_network=node_network, jitter=jitter, model=model,
                cycle_time=cycle_time or HOROVOD_CYCLE_TIME,
                measured=measured, accumulation=accumulation,
                jitter_given=jitter_given)


def check_measured(measured, with_step_time=False, said=None):
    """``measured`` as a dict {workers: seconds} or None: one or two worker
    counts > 1 (one with ``step_time``) to the seconds of a step measured
    on them; else a one-line error, ArgumentTypeError for a value of the
    wrong type (``said``, see check_scaling_options' ``names``)."""
    if measured is None:
        return None
    said = said or _Said(None)
    python = said.python
    most = 1 if with_step_time else 2
    what = ('{} must be {}{} worker count{} > 1 to the seconds of a step '
            'measured on them, such as {}{}'
            .format(said('measured'), 'a dict of ' if python else '',
                    'one' if most == 1 else 'one or two',
                    '' if most == 1 else 's',
                    '{8: 0.31}' if python else '8=0.31',
                    ' (with {}, the step of one worker, one)'.format(
                        said('step_time')) if most == 1 else ''))
    if not isinstance(measured, dict):
        raise checks.ArgumentTypeError('{}, got {!r}'.format(what, measured))
    if not 1 <= len(measured) <= most:
        raise ValueError('{}, got {}'.format(what, repr(measured) if python
                                             else ','.join(
            '{}={!r}'.format(*step) for step in measured.items())))
    out = {}
    for n, seconds in measured.items():
        if not checks.is_int(n):
            raise checks.ArgumentTypeError('{}, got {!r} workers'.format(
                what, n))
        if n <= 1:
            raise ValueError('{}, got {!r} workers (one worker is '
                             '{})'.format(what, n, said('step_time')))
        out[int(n)] = checks.positive(
            '{}: the step measured on {} workers (seconds)'.format(
                said('measured'), n), seconds)
    return out


def check_accumulation(accumulation, said=None):
    """``accumulation`` (micro-batches a worker runs per all-reduce: one
    int >= 1, or a dict {workers: int >= 1}) as a function of the worker
    count, None where the dict has no entry; a TypeError for a value
    that is no int, a ValueError for one < 1 (``said``, see
    check_scaling_options' ``names``)."""
    said = said or _Said(None)
    what = ('{} must be an int >= 1{} (micro-batches per all-reduce)'.format(
        said('accumulation'), ' or a dict {workers: int >= 1}'
        if said.python else ''))
    if isinstance(accumulation, dict):
        bad = [(n, a) for n, a in accumulation.items()
               if not checks.is_int(n) or not checks.is_int(a) or a < 1]
        if bad:
            n, a = bad[0]
            error = ValueError if checks.is_int(n) and checks.is_int(a) \
                else checks.ArgumentTypeError
            raise error('{}, got {!r}: {!r}'.format(what, n, a))
        table = {int(n): int(a) for n, a in accumulation.items()}
        return table.get
    if not checks.is_int(accumulation) or accumulation < 1:
        error = ValueError if checks.is_int(accumulation) \
            else checks.ArgumentTypeError
        raise error('{}, got {!r}'.format(what, accumulation))
    return lambda n, a=int(accumulation): a


def own_param_bytes(link_info):
    """Link path -> the bytes of the parameters the link holds itself (its
    own, not its children's), from a link report's ``(n_calls, n_params,
    param_bytes)`` entries; links without parameter bytes are left out."""
    total = {p: e[2] for p, e in link_info.items() if len(e) > 2}
    own = dict(total)
    for path, nbytes in total.items():
        if path != '/':
            parent = path.rsplit('/', 1)[0] or '/'
            if parent in own:
                own[parent] -= nbytes
    return {p: b for p, b in own.items() if b > 0}


def _gradients(backward, times, t_start, grad_bytes, link_bytes):
    """``[(ready time, bytes)]`` of the gradients, in the order they become
    ready: a link's gradients when the last backward record of that link
    ends (its gradients are complete then); all of them at the end of the
    backward when the records name no link.  Their bytes are the links'
    parameter bytes scaled to ``grad_bytes``."""
    end = t_start
    last = {}
    for x, t in zip(backward, times):
        end += t
        if x.get('link') is not None:
            last[x['link']] = end
    t_end = end
    if not link_bytes or not grad_bytes:
        return [(t_end, grad_bytes)]
    scale = grad_bytes / float(sum(link_bytes.values()))
    out = [(last.get(path, t_end), nbytes * scale)
           for path, nbytes in link_bytes.items()]
    out.sort(key=lambda g: g[0])
    return out


def _buckets(grads, cap, first_cap):
    """DDP's buckets: gradients in ready order, a bucket closed once it
    holds ``cap`` bytes (the first one ``first_cap``); ``[(ready, bytes)]``,
    a bucket ready when its last gradient is.  At least one, as every
    mode makes at least one all-reduce (of no bytes, its latency).
    """
    out, size, limit = [], 0.0, first_cap
    for ready, nbytes in grads:
        size += nbytes
        if size >= limit:
            out.append((ready, size))
            size, limit = 0.0, cap
    if size or not out:
        out.append((ready, size))
    return out


def _overlap(begin, end, window):
    """Seconds of [begin, end] before ``window`` (the backward's end)."""
    return max(0.0, min(end, window) - min(begin, window))


def _ddp_end(grads, cap, t_ar, window):
    """(end of the last all-reduce, number of buckets, seconds of
    all-reduce before ``window``) for DDP."""
    end = before = 0.0
    buckets = _buckets(grads, cap, min(cap, DDP_FIRST_BUCKET_BYTES))
    for ready, nbytes in buckets:
        begin = max(end, ready)
        end = begin + t_ar(nbytes)
        before += _overlap(begin, end, window)
    return end, len(buckets), before


def _horovod_end(grads, threshold, cycle, t_start, t_ar, window,
                 negotiate=0.0):
    """(end of the last all-reduce, number of fused all-reduces, seconds
    of all-reduce before ``window``, seconds negotiating) for
    Horovod: every ``cycle`` seconds from ``t_start`` (the backward's
    start) its background thread takes the gradients ready by then,
    agrees on them with the other workers (``negotiate`` seconds), and
    all-reduces them fused into messages of at most ``threshold`` bytes
    (a larger gradient alone), one after the other; the next cycle starts
    ``cycle`` after this one's start, or when its all-reduces end."""
    pending = list(grads)
    s, end, count = t_start, t_start, 0
    before = talks = 0.0
    while pending:
        ready = [g for g in pending if g[0] <= s]
        if not ready:
            # the first cycle the next gradient is ready by (>= 1 cycle
            # on: it is ready after s)
            cycles = (pending[0][0] - s) / cycle
            # (a cycle too short to count them in: as good as none, the
            # next one when the gradient is ready)
            s = s + cycle * math.ceil(cycles) if cycles < 2.0 ** 53 \
                else pending[0][0]
            continue
        pending = pending[len(ready):]
        messages, size = [], 0.0
        for _, nbytes in ready:
            if size and size + nbytes > threshold:
                messages.append(size)
                size = 0.0
            size += nbytes
        messages.append(size)
        end = s + negotiate
        talks += negotiate
        for nbytes in messages:
            begin, end = end, end + t_ar(nbytes)
            before += _overlap(begin, end, window)
        count += len(messages)
        s = max(s + cycle, end)
    return end, count, before, talks


def negotiation_time(n_workers, network):
    """Seconds of one Horovod negotiation on ``n_workers``: the ready
    tensors' names gathered to the coordinator and its answer broadcast,
    two small messages up and down a tree (:func:`collective_time` of
    ``MPI_Gather`` and ``MPI_Bcast`` of 0 bytes)."""
    return (collective_time('MPI_Gather', 0, n_workers, network) +
            collective_time('MPI_Bcast', 0, n_workers, network))


def scaling_report(layers, roofline_rows, n_params, workers, network,
                   batch_size, grad_bytes=None, param_bytes=None,
                   step_time=None, overlap='none', bucket_bytes=None,
                   gpus_per_node=1, node_network=None, jitter=None,
                   link_bytes=None, model='sourced', cycle_time=None,
                   measured=None, accumulation=1):
    """Ordered dict N -> the time of one data-parallel training step on
    ``N`` workers (weak scaling: ``batch_size`` samples per worker).

    ``layers`` are the layer dicts of one training step on one worker and
    ``roofline_rows`` their roofline report on the worker's device.  Each
    row has ``workers``; ``comm_bytes``, the gradient bytes each worker
    all-reduces; ``t_compute``, the step without communication (the
    roofline time, or ``step_time``); ``t_allreduce``, one all-reduce of
    those bytes over ``N`` workers (see :func:`allreduce_time`);
    ``t_step``, the step under ``overlap``: ``t_compute + t_contention +
    t_exposed_comm + t_jitter``; ``t_step_overlap = t_forward +
    max(t_backward, t_allreduce)`` (the all-reduce hidden behind the
    backward pass as far as it goes: a bound no framework reaches that
    all-reduces a step's gradients within the step; double buffering can
    beat it);
    ``efficiency = t_compute / t_step`` and ``efficiency_overlap``, the
    step at 1 worker over the one at N; ``samples_per_s = N * batch_size
    / t_step`` (None without a batch size); ``t_exposed_comm``, the
    communication the (slowed) compute does not hide; ``n_buckets``, the
    all-reduces a step makes; ``t_jitter``, the wait for the slowest
    worker; ``step_from``, ``'roofline'``, ``'step_time'`` or
    ``'measured'`` (the compute fitted to a ``measured`` step);
    ``t_contention``, the compute lost to the all-reduces it runs beside;
    ``t_negotiation``, Horovod's negotiations in a step (hidden or not);
    ``bus_bandwidth``, bytes per second the all-reduce between nodes (or
    of the single ring) moves; ``anchored``, what ``measured`` set
    (``'t_compute'``, ``'jitter'``, ``'bus_bandwidth'``, comma-separated),
    else None.

    * ``model``: ``'sourced'`` (the default) takes each network's
      effective bus bandwidth (:func:`.bus_bandwidth`), slows the compute
      by :data:`CONTENTION_SLOWDOWN` while an all-reduce runs beside it,
      charges Horovod's negotiation and defaults ``jitter`` to
      :data:`DEFAULT_JITTER`; ``'bound'`` uses line rates and none of
      these (an upper bound of the efficiency: the report before them).
      How far each was from 98 published runs is :data:`MODEL_ERRORS`
      (anchored: :data:`ANCHORED_ERROR`); :func:`model_error_note` says
      it in a sentence, which the command line prints with every scaling
      report.
    * ``step_time``: seconds of one worker's measured step at
      ``batch_size``; spread over the calls in proportion to their
      measured times (when every call has one) or their roofline times.
    * ``overlap``: ``'none'`` (the all-reduce after the backward, as
      ChainerMN's multi-node optimizer does: ``t_step = t_compute +
      t_allreduce``); ``'chainermn-double-buffering'`` (the all-reduce of
      step k runs during step k+1: ``max(t_compute, t_allreduce)``);
      ``'ddp'`` (buckets of ``bucket_bytes``, default 25 MiB, the first
      1 MiB, all-reduced as their gradients are ready); ``'horovod'``
      (fused all-reduces of up to ``bucket_bytes``, default 64 MiB, every
      ``cycle_time``, default 5 ms).  A gradient is ready when the last
      backward record of its link ends; the update waits for the last
      all-reduce.
    * ``gpus_per_node``, ``node_network``: the hierarchical all-reduce.
    * ``jitter``: the coefficient of variation of a worker's compute time;
      every step waits for the slowest of N, on average
      ``jitter * t_compute * E[max of N standard normals]``; 0 turns it
      off.
    * ``accumulation``: micro-batches each worker runs per all-reduce
      (an int, or a dict N -> int for every N): the compute is that many
      steps, the all-reduce meets the last one's backward, and
      ``samples_per_s`` counts every micro-batch.
    * ``measured``: ``{N: seconds}``, steps measured on one or two worker
      counts > 1; the report is then fitted to them and predicts every N
      from there.  Without ``step_time``, the smallest count fixes the
      compute (``t_compute`` scaled so its step lasts what was measured,
      split over the calls as ``step_time`` splits it).
      The other count (or, with ``step_time``, the only one) fixes one
      more term: inside one node (``N <= gpus_per_node``) ``jitter``
      (from 0 to 2), across nodes the bus bandwidth between nodes (a
      factor from 1/4096 to 4096), or the jitter when even the fastest
      network leaves the model slower than measured, or the slowest
      faster: on the network as it is, or on the fastest (both named)
      when no jitter reaches it there; never over a ``jitter`` given.
      Two counts no terms fit together keep the smaller count's compute
      on the network and jitter given.  ``anchored`` names what was
      fitted.

    The gradient bytes are, first found: ``grad_bytes``; the bytes of the
    gradient all-reduces recorded in the backward pass (a run with
    ``comm=``: what ChainerMN handed to MPI, so its own rules hold: the
    ``naive`` and ``flat`` communicators send float16 gradients as
    float32, ``flat`` float64 ones too); else ``param_bytes``, the bytes
    of the parameters of the links called: each gradient has its
    parameter's dtype, as ChainerMN's ``pure_nccl`` communicator sends it
    when ``chainer.config.dtype`` is the model's; else ``n_params`` times
    4 (float32).  ``link_bytes`` (link path -> its own parameter bytes)
    splits them over the links for the buckets.
    """
    net = resolve_network(network)
    workers = check_workers(workers)
    batch_size = check_batch_size(batch_size)
    opts = check_scaling_options(step_time, overlap, bucket_bytes,
                                 gpus_per_node, node_network, jitter, model,
                                 cycle_time, measured, accumulation)
    counts = workers + sorted(opts['measured'] or {})
    missing = [n for n in counts if opts['accumulation'](n) is None]
    if missing:
        raise ValueError('accumulation has no entry for {} workers: give '
                         'every worker count (measured ones too)'.format(
                             missing[0]))
    local = [x for x in layers if not x['type'].startswith('MPI_')]
    if not any(x.get('phase') == 'backward' for x in local):
        raise ValueError('scaling_report needs a training step: no backward '
                         'pass was recorded (call loss.backward() inside '
                         'the block)')
    # what grows the figures, as given, to name it if they overflow
    given = collections.OrderedDict([
        ('step_time', step_time), ('accumulation', accumulation),
        ('jitter', jitter), ('grad_bytes', grad_bytes),
        ('measured', measured), ('cycle_time', cycle_time),
        ('bucket_bytes', bucket_bytes)])
    grad_bytes = gradient_bytes(layers, grad_bytes, param_bytes, n_params)
    # (anchored on a measured step: split as step_time splits it)
    step = phase_times(local, roofline_rows, opts['step_time'],
                       timed=opts['measured'] is not None)
    grads = _gradients([x for x in local if x.get('phase') == 'backward'],
                       [t for t, p in zip(step.times, step.phases)
                        if p == 'backward'],
                       step.before, grad_bytes, link_bytes)
    sourced = opts['model'] == 'sourced'
    g = opts['gpus_per_node']
    node = net if opts['node_network'] is None else opts['node_network']
    if sourced:
        net, node = effective_network(net, g), effective_network(node, g)
    plan = _Plan(step, grads, grad_bytes, opts, batch_size, sourced)
    fit = _Fit(net, node, opts['jitter'], 1.0, None)
    report = collections.OrderedDict()
    try:
        if opts['measured'] is not None:
            fit = plan.anchor(opts['measured'], fit)
        for n in workers:
            report[n] = row = plan.row(n, fit)
            bad = [k for k, v in row.items()
                   if isinstance(v, float) and not math.isfinite(v)]
            if not bad and row['t_compute'] > 0:
                # t_step over t_compute beyond a float: 0, as a step
                # that takes no time would be
                bad = [k for k in ('efficiency', 'efficiency_overlap')
                       if not row[k] > 0]
            if bad:
                raise OverflowError(bad[0], row[bad[0]], n)
    except OverflowError as e:
        # the batch grows samples_per_s only (or an int Python overflowed)
        known = len(e.args) == 3 and e.args[0] != 'samples_per_s'
        # a worker count whose ring factor 2(N-1) is beyond a float's
        # range overflows any figure
        huge = [n for n in workers if 2 * n > sys.float_info.max]
        if known and e.args[0].startswith('efficiency'):
            huge = [e.args[2]]  # (a ratio of times beyond a float)
        if not huge and not all(
                allreduce_time(grad_bytes, n, net, g, node) < math.inf
                for n in counts):
            # the networks' figures alone overflow an all-reduce: they are
            # what to check, whatever else was given
            given = {}
        raise ValueError(_overflow(e.args, dict(
            given, batch_size=None if known or huge else batch_size,
            workers=huge[0] if huge else None), [
                ('network', net), ('node_network', opts['node_network'])]))
    return report


def _overflow(where, given, networks=()):
    """The message of a scaling report whose figures overflow a float:
    where (a column, its value, the workers) when known, and the
    arguments given that grew them; else the ``networks`` (name, Network
    or None) figures."""
    named = ', '.join('{}={}'.format(k, _shown(v)) for k, v in given.items()
                      if v is not None and not (k == 'accumulation' and
                                                v == 1))
    remedy = 'give smaller ones'
    if not named:  # nothing but the network's figures
        named = ', '.join(
            '{} {!r} (bandwidth {} B/s, latency {} s)'.format(
                k, v.name, _shown(v.bandwidth), _shown(v.latency))
            for k, v in networks if v is not None)
        remedy = "check the network's figures"
    at = '{} is {} at N={}: '.format(where[0], where[1], _shown(where[2])) \
        if len(where) == 3 else ''
    return ('the scaling report overflows a float ({}{} give figures '
            'beyond its range); {}'.format(at, named or 'the arguments',
                                           remedy))


def _told_apart(a, b):
    """Two figures as text, in the fewest significant digits, 4 at least,
    that tell them apart: a warning about their difference must show
    it."""
    for digits in range(4, 18):
        texts = ['{:.{}g}'.format(x, digits) for x in (a, b)]
        if texts[0] != texts[1]:
            break
    return texts


def _shown(value):
    """``value`` as an error shows it: an int too long to read as its
    count of digits."""
    if checks.is_int(value) and abs(value) >= 10 ** 16:
        return 'an int of {} digits'.format(len(str(abs(value))))
    return repr(value)


class _Fit(typing.NamedTuple):
    """The terms a scaling report's rows take: the networks between nodes
    and inside one, the stragglers' variation, the compute's factor, and
    what a measured step set (None, or the names, comma-separated)."""

    net: object
    node: object
    cv: float
    scale: float
    anchored: typing.Optional[str]


class _Plan(typing.NamedTuple):
    """What every worker count of one scaling report shares."""

    step: 'PhaseTimes'
    grads: list
    grad_bytes: int
    opts: dict
    batch_size: typing.Optional[int]
    sourced: bool

    def row(self, n, fit):
        """The report's row of ``n`` workers under the terms ``fit``."""
        opts, g = self.opts, self.opts['gpus_per_node']
        net, node = fit.net, fit.node
        acc = opts['accumulation'](n)
        step, grads = (self.step, self.grads) if fit.scale == 1.0 else (
            _scaled(self.step, fit.scale),
            [(ready * fit.scale, nbytes) for ready, nbytes in self.grads])
        # the all-reduce meets the last micro-batch's backward only
        compute = step.compute * acc

        def t_ar(nbytes):
            return allreduce_time(nbytes, n, net, g, node)
        t_all = t_ar(self.grad_bytes)
        # t_forward + max(t_backward, t_all), added to t_compute itself
        # (a step_time is not the sum of its spread parts to the last
        # bit): t_compute at one worker, never less at more
        t_overlap = compute + max(0.0, t_all - step.backward)
        talk = negotiation_time(n, net if n > g else node) \
            if self.sourced and opts['overlap'] == 'horovod' else 0.0
        comm = exposed_communication(
            opts['overlap'], n, step._replace(compute=compute), grads,
            t_all, t_ar, opts['bucket_bytes'], opts['cycle_time'], talk)
        t_contention = (1 - 1 / CONTENTION_SLOWDOWN) * comm.overlapped \
            if self.sourced else 0.0
        # the slowed compute hides as much more of the communication
        exposed = max(0.0, comm.exposed - t_contention)
        # alone, a worker waits for no one: 0 exactly (never inf * 0)
        t_jitter = fit.cv * compute * expected_max_normal(n) \
            if fit.cv and n > 1 else 0.0
        t_step = compute + t_contention + exposed + t_jitter
        samples = n * self.batch_size * acc if self.batch_size else None
        # At one worker the all-reduce costs 0: the step is t_compute.
        return collections.OrderedDict([
            ('workers', n), ('comm_bytes', int(self.grad_bytes)),
            ('t_compute', compute), ('t_allreduce', t_all),
            ('t_step', t_step), ('t_step_overlap', t_overlap),
            ('efficiency', compute / t_step if t_step else 1.0),
            ('efficiency_overlap',
             compute / t_overlap if t_overlap else 1.0),
            ('samples_per_s', samples / t_step if t_step and samples
             else None),
            ('t_exposed_comm', exposed), ('n_buckets', comm.n_buckets),
            ('t_jitter', t_jitter),
            ('step_from', 'step_time' if opts['step_time'] is not None
             else 'measured' if 't_compute' in (fit.anchored or '')
             else 'roofline'),
            ('t_contention', t_contention), ('t_negotiation', comm.talks),
            ('bus_bandwidth', (net if n > g else node).bandwidth),
            ('anchored', fit.anchored)])

    def anchor(self, measured, fit):
        """The :class:`_Fit` whose steps on the ``measured`` worker counts
        last the seconds measured (see :func:`scaling_report`), with a
        ReportWarning for a measured step no fit reaches (the nearest is
        taken)."""
        fit = self._anchor(measured, fit)
        reached = [(n, seconds, self.row(n, fit)['t_step'])
                   for n, seconds in sorted(measured.items())]
        n, seconds, t = reached[0]
        if not t < math.inf:  # (the network's all-reduce: see _overflow)
            raise OverflowError('t_step', t, n)
        if fit.scale <= _SCALES[0] and 't_compute' in fit.anchored and \
                t > seconds * (1 + 1e-6):
            # The compute fitted to nothing still leaves the step longer:
            # rows "anchored on the nearest" would have no compute at all.
            raise MeasuredStepError(
                'measured: the step at N={} ({} s) is shorter than the '
                "model's step there with no compute at all ({} s of "
                'all-reduce and waiting); no compute fits it: is it in '
                "seconds, and are the network and overlap the run's?"
                .format(n, *_told_apart(seconds, t)))
        missed = ['at N={} last {} s (the nearest: {} s)'.format(
            n, *_told_apart(seconds, t)) for n, seconds, t in reached
            if abs(t - seconds) > 1e-6 * seconds]
        if missed:
            warnings.warn(
                'scaling_report: no anchoring makes the step measured {} '
                '(the model, stragglers and networks within their range, '
                'or the steps measured, disagree); the rows are anchored '
                'on the nearest'.format('; '.join(missed)),
                ReportWarning, stacklevel=4)
        return fit

    def _anchor(self, measured, fit):
        entries = sorted(measured.items())
        first = None if self.opts['step_time'] is not None \
            else entries.pop(0)
        names = [] if first is None else ['t_compute']

        def fitted(f):
            # the compute's factor that makes the first entry right
            if first is None:
                return f
            n, seconds = first
            return f._replace(scale=_solve(
                lambda x: self.row(n, f._replace(scale=2 ** x))['t_step'],
                seconds, math.log2(_SCALES[0]), math.log2(_SCALES[1]),
                rising=True, base=2))
        if not entries:
            return fitted(fit)._replace(anchored=', '.join(names))
        (n, seconds), = entries
        g = self.opts['gpus_per_node']

        def with_jitter(f):
            cv = _solve(lambda x: self.row(n, fitted(f._replace(cv=x)))[
                't_step'], seconds, 0.0, 2.0, rising=True)
            return fitted(f._replace(cv=cv)), 'jitter'

        def with_bandwidth(f):
            def at(x):
                return fitted(f._replace(net=f.net._replace(
                    bandwidth=f.net.bandwidth * 2 ** x)))
            # (a factor that keeps the bandwidth a float > 0, finite)
            room = math.log2(f.net.bandwidth)
            lo = min(0.0, max(-12.0, _FLOAT_EXPONENTS[0] - room))
            hi = max(0.0, min(12.0, _FLOAT_EXPONENTS[1] - room))
            x = _solve(lambda x: self.row(n, at(x))['t_step'], seconds,
                       lo, hi, rising=False)
            return at(x), 'bus_bandwidth'
        given = fit
        if g > 1 and n <= g:
            fit, name = with_jitter(fit)
        else:
            chosen, name = with_bandwidth(fit)
            t_step = self.row(n, chosen)['t_step']
            free = not self.opts['jitter_given']  # (a jitter given stands)
            if free and (t_step > seconds * (1 + 1e-9) or
                         t_step < seconds * (1 - 1e-9) or
                         first is not None and
                         not self._meets(first, chosen)):
                # no network makes it (or only with no compute left for
                # the smaller count): the stragglers' part, on the
                # network as it is
                fastest = chosen
                chosen, name = with_jitter(fit)
                if t_step > seconds and not self._meets((n, seconds),
                                                        chosen):
                    # faster than even the fastest makes it: both terms
                    # (the nearest step the model makes)
                    chosen, _ = with_jitter(fastest)
                    name = 'bus_bandwidth, jitter'
            fit = chosen
        if first is not None and not self._meets(first, fit):
            # Two steps no term fits together (the compute would go to
            # nothing for the second's sake): the smallest count fixes
            # the compute on the terms given, and the other is missed.
            kept = fitted(given)
            if self._meets(first, kept):
                return kept._replace(anchored='t_compute')
        return fit._replace(anchored=', '.join(names + [name]))

    def _meets(self, entry, fit):
        """Whether the step of ``fit`` on ``entry``'s worker count lasts
        its seconds (as :meth:`anchor` warns)."""
        n, seconds = entry
        return abs(self.row(n, fit)['t_step'] - seconds) <= 1e-6 * seconds


#: The range of the compute's factor an anchoring fits.
_SCALES = (2.0 ** -40, 2.0 ** 40)

#: The binary exponents of the normal floats: a bandwidth scaled within
#: them neither vanishes nor overflows.
_FLOAT_EXPONENTS = (sys.float_info.min_exp, sys.float_info.max_exp - 1)


def _solve(f, target, lo, hi, rising, base=None):
    """``x`` in [lo, hi] with ``f(x) == target`` by bisection (``f``
    rising or falling in x), the nearer end when out of reach; ``2 ** x``
    with ``base`` 2."""
    if (f(lo) > target) == rising:
        x = lo
    elif (f(hi) < target) == rising:
        x = hi
    else:
        for _ in range(50):  # 2**-50 of the range: far below a ns
            mid = (lo + hi) / 2
            if (f(mid) < target) == rising:
                lo = mid
            else:
                hi = mid
        x = (lo + hi) / 2
    return 2 ** x if base else x


def _scaled(step, k):
    """``step`` (a :class:`PhaseTimes`) with every time times ``k``."""
    return PhaseTimes([t * k for t in step.times], step.phases,
                      step.forward * k, step.backward * k, step.update * k,
                      step.before * k, step.compute * k)


def gradient_bytes(layers, grad_bytes=None, param_bytes=None,
                   n_params=None):
    """The bytes each worker all-reduces a step, first found:
    ``grad_bytes``; the gradient all-reduces recorded (the MPI_Allreduce
    records made by the communicator's ``multi_node_mean_grad``, Chainer
    6's ``allreduce_grad``);
    ``param_bytes``; ``n_params`` float32 parameters (see
    :func:`scaling_report`)."""
    if grad_bytes is None:
        # Only the communicator's gradient all-reduce: not the other
        # all-reduces of the backward pass (MultiNodeBatchNormalization's
        # statistics, '_multi_node_mean'; the user's own).
        recorded = [x['comm_bytes'] for x in layers
                    if x['type'] == 'MPI_Allreduce' and
                    (x.get('params') or {}).get('call') in
                    mpi_recorder.GRAD_CALLS]
        if recorded:
            grad_bytes = sum(recorded)
        elif param_bytes:
            grad_bytes = param_bytes
        elif n_params is None:
            raise ValueError('the parameter count is unknown (no link was '
                             'called): give grad_bytes')
        else:
            grad_bytes = n_params * 4
    grad_bytes = checks.integer('grad_bytes', grad_bytes, 0)
    if grad_bytes >= MAX_BYTES:  # a count of bytes is divided as a float
        raise ValueError('grad_bytes must be an int from 0 to below '
                         '{:.0e} (bytes a float holds), got {}'.format(
                             MAX_BYTES, _shown(grad_bytes)))
    return grad_bytes


#: Bytes a scaling report takes (``grad_bytes`` below it): a float's
#: range, to the nearest power of ten below.
MAX_BYTES = 10 ** 308


class PhaseTimes(typing.NamedTuple):
    """One worker's step split by phase, seconds: ``times`` and ``phases``
    per call (MPI calls left out), the ``forward`` pass with the update,
    the ``backward`` pass, the ``update``, the forward pass ``before`` the
    backward, and the whole step's ``compute``."""

    times: list
    phases: list
    forward: float
    backward: float
    update: float
    before: float
    compute: float


def phase_times(local, roofline_rows, step_time=None, timed=False):
    """The :class:`PhaseTimes` of the calls ``local``: their roofline
    times, or ``step_time`` spread over them in proportion to their
    measured times (when every call has one) or their roofline times;
    with ``timed``, their measured times (when every call has one) even
    without ``step_time``: a step to scale to a measured one."""
    times = [roofline_rows[x['name']]['t_roofline'] for x in local]
    if step_time is not None or timed:
        measured = [roofline_rows[x['name']].get('time') for x in local]
        if all(t is not None for t in measured) and sum(measured) > 0:
            times = measured
    if step_time is not None:
        total = sum(times)
        scale = step_time / total if total else 0.0
        if scale < math.inf:
            times = [t * scale for t in times]
        else:  # a step beyond a float's range of the roofline's: each share
            times = [t / total * step_time for t in times]
    phases = [x.get('phase') for x in local]
    t_forward = sum(t for t, p in zip(times, phases) if p != 'backward')
    t_backward = sum(t for t, p in zip(times, phases) if p == 'backward')
    t_update = sum(t for t, p in zip(times, phases) if p == 'update')
    t_compute = t_forward + t_backward
    if step_time is not None:
        t_compute = step_time  # the sum, without rounding
    return PhaseTimes(times, phases, t_forward, t_backward, t_update,
                      t_forward - t_update, t_compute)


class Exposure(typing.NamedTuple):
    """The communication of one step: ``exposed`` seconds the compute does
    not hide, ``n_buckets`` all-reduces, ``overlapped`` seconds of
    all-reduce beside the compute, and ``talks``, seconds of Horovod's
    negotiation."""

    exposed: float
    n_buckets: int
    overlapped: float = 0.0
    talks: float = 0.0


def exposed_communication(mode, n, step, grads, t_all, t_ar,
                          bucket_bytes=None, cycle_time=HOROVOD_CYCLE_TIME,
                          negotiate=0.0):
    """The :class:`Exposure` of a step on ``n`` workers under the overlap
    ``mode`` (see :data:`OVERLAPS`), ``step`` its :class:`PhaseTimes`,
    ``grads`` when each gradient is ready, ``t_all`` one all-reduce of
    them all, ``t_ar(nbytes)`` one of ``nbytes``, and ``negotiate`` the
    seconds of one Horovod negotiation."""
    if n <= 1:
        return Exposure(0.0, 1)
    if mode == 'none':
        return Exposure(t_all, 1)
    if mode == 'chainermn-double-buffering':
        return Exposure(max(0.0, t_all - step.compute), 1,
                        min(t_all, step.compute))
    window = step.before + step.backward
    # every gradient is ready by the backward's end: a ready time summed
    # call by call may round past it, by one unit of a step's last digit
    # (which a huge step makes far longer than its all-reduces)
    grads = [(min(ready, window), nbytes) for ready, nbytes in grads]
    talks = 0.0
    if mode == 'ddp':
        end, n_buckets, before = _ddp_end(
            grads, bucket_bytes or DDP_BUCKET_BYTES, t_ar, window)
    else:
        end, n_buckets, before, talks = _horovod_end(
            grads, bucket_bytes or HOROVOD_FUSION_BYTES, cycle_time,
            step.before, t_ar, window, negotiate)
    return Exposure(max(0.0, end - window), n_buckets, before, talks)
