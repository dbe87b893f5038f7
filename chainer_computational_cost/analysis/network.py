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
MPI_Bcast, MPI_Reduce (tree)    ``ceil(log2 N) * (a + S/B)``
MPI_Allgather (ring)            ``(N-1) * (a + S/B)``
MPI_Gather (to the root)        ``ceil(log2 N) * a + (N-1) * S/B``
MPI_Scatter, MPI_Alltoall       ``(N-1) * a + (N-1)/N * S/B``
MPI_Send, MPI_Recv              ``a + S/B``
==============================  ===========================================

The pickle-based calls (``MPI_bcast_obj``, ...) follow their buffer
counterparts.  Every collective costs 0 at ``N = 1``.  The model is a
lower bound of its own kind: no contention, no congestion, one message
per call, the full link bandwidth for every step.
"""

import collections
import math
import typing

from chainer_computational_cost.core import checks
from chainer_computational_cost.core.devices import resolve_network


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
    steps = math.ceil(math.log2(n))  # of a binary tree over n ranks
    if base == 'allreduce':
        return 2.0 * (n - 1) / n * s + 2 * (n - 1) * a
    if base in ('bcast', 'reduce'):
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
                   'n_buckets', 't_jitter', 'step_from')


#: How the gradient all-reduce meets the backward pass (``overlap=``).
OVERLAPS = ('none', 'chainermn-double-buffering', 'ddp', 'horovod')


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
    """``workers`` as a list of ints >= 1: one int, or any iterable of
    them (read once); a one-line ValueError otherwise."""
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
        raise ValueError('workers must be ints >= 1 (one int or an '
                         'iterable of them), got {!r}'.format(
                             bad or workers))
    return [int(w) for w in workers]


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
    + (g-1) * a_node`` each.  ``node_network`` defaults to ``network``."""
    net = resolve_network(network)
    node = net if node_network is None else resolve_network(node_network)
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


def expected_max_normal(n):
    """E[max of ``n`` independent standard normals] (0 at ``n = 1``), by
    the trapezoid rule on ``x * n * phi(x) * Phi(x)**(n-1)`` over [-9, 9]
    (steps of 1e-3: good to about 1e-6)."""
    if n <= 1:
        return 0.0
    h = 1e-3
    total = 0.0
    for k in range(-9000, 9001):
        x = k * h
        phi = math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
        cdf = 0.5 * (1 + math.erf(x / math.sqrt(2)))
        total += x * n * phi * cdf ** (n - 1)
    return total * h


def check_scaling_options(step_time=None, overlap='none', bucket_bytes=None,
                          gpus_per_node=1, node_network=None, jitter=0.0):
    """The checked scaling options as a dict (one-line ValueError naming
    the argument and what it allows otherwise)."""
    checks.one_of('overlap', overlap, OVERLAPS)
    if step_time is not None:
        step_time = checks.positive('step_time (seconds)', step_time)
    if bucket_bytes is not None:
        if overlap not in ('ddp', 'horovod'):
            raise ValueError("bucket_bytes goes with overlap='ddp' or "
                             "'horovod', not {!r}".format(overlap))
        bucket_bytes = checks.positive_int('bucket_bytes', bucket_bytes)
    gpus_per_node = checks.positive_int('gpus_per_node', gpus_per_node)
    if node_network is not None:
        node_network = resolve_network(node_network)
    jitter = checks.non_negative('jitter', jitter)
    return dict(step_time=step_time, overlap=overlap,
                bucket_bytes=bucket_bytes, gpus_per_node=gpus_per_node,
                node_network=node_network, jitter=jitter)


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
    a bucket ready when its last gradient is.
    """
    out, size, limit = [], 0.0, first_cap
    for ready, nbytes in grads:
        size += nbytes
        if size >= limit:
            out.append((ready, size))
            size, limit = 0.0, cap
    if size:
        out.append((ready, size))
    return out


def _ddp_end(grads, cap, t_ar):
    """(end of the last all-reduce, number of buckets) for DDP."""
    end = 0.0
    buckets = _buckets(grads, cap, min(cap, DDP_FIRST_BUCKET_BYTES))
    for ready, nbytes in buckets:
        end = max(end, ready) + t_ar(nbytes)
    return end, len(buckets)


def _horovod_end(grads, threshold, cycle, t_start, t_ar):
    """(end of the last all-reduce, number of fused all-reduces) for
    Horovod: every ``cycle`` seconds from ``t_start`` (the backward's
    start) its background thread takes the gradients ready by then and
    all-reduces them fused into messages of at most ``threshold`` bytes
    (a larger gradient alone), one after the other; the next cycle starts
    ``cycle`` after this one's start, or when its all-reduces end."""
    pending = list(grads)
    s, end, count = t_start, t_start, 0
    while pending:
        ready = [g for g in pending if g[0] <= s]
        if not ready:
            # the first cycle the next gradient is ready by (>= 1 cycle
            # on: it is ready after s)
            s += cycle * math.ceil((pending[0][0] - s) / cycle)
            continue
        pending = pending[len(ready):]
        messages, size = [], 0.0
        for _, nbytes in ready:
            if size and size + nbytes > threshold:
                messages.append(size)
                size = 0.0
            size += nbytes
        messages.append(size)
        end = s
        for nbytes in messages:
            end += t_ar(nbytes)
        count += len(messages)
        s = max(s + cycle, end)
    return end, count


def scaling_report(layers, roofline_rows, n_params, workers, network,
                   batch_size, grad_bytes=None, param_bytes=None,
                   step_time=None, overlap='none', bucket_bytes=None,
                   gpus_per_node=1, node_network=None, jitter=0.0,
                   link_bytes=None):
    """Ordered dict N -> the time of one data-parallel training step on
    ``N`` workers (weak scaling: ``batch_size`` samples per worker).

    ``layers`` are the layer dicts of one training step on one worker and
    ``roofline_rows`` their roofline report on the worker's device.  Each
    row has ``workers``; ``comm_bytes``, the gradient bytes each worker
    all-reduces; ``t_compute``, the step without communication (the
    roofline time, or ``step_time``); ``t_allreduce``, one all-reduce of
    those bytes over ``N`` workers (see :func:`allreduce_time`);
    ``t_step``, the step under ``overlap`` with the stragglers' wait;
    ``t_step_overlap = t_forward + max(t_backward, t_allreduce)`` (the
    all-reduce hidden behind the backward pass as far as it goes: a bound
    no framework reaches); ``efficiency = t_compute / t_step`` and
    ``efficiency_overlap``, the step at 1 worker over the one at N;
    ``samples_per_s = N * batch_size / t_step`` (None without a batch
    size); ``t_exposed_comm``, the communication the compute does not
    hide; ``n_buckets``, the all-reduces a step makes; ``t_jitter``, the
    wait for the slowest worker; ``step_from``, ``'roofline'`` or
    ``'step_time'``.

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
      5 ms cycle).  A gradient is ready when the last backward record of
      its link ends; the update waits for the last all-reduce.
    * ``gpus_per_node``, ``node_network``: the hierarchical all-reduce.
    * ``jitter``: the coefficient of variation of a worker's compute time;
      every step waits for the slowest of N, on average
      ``jitter * t_compute * E[max of N standard normals]``.

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
                                 gpus_per_node, node_network, jitter)
    local = [x for x in layers if not x['type'].startswith('MPI_')]
    if not any(x.get('phase') == 'backward' for x in local):
        raise ValueError('scaling_report needs a training step: no backward '
                         'pass was recorded (call loss.backward() inside '
                         'the block)')
    grad_bytes = gradient_bytes(layers, grad_bytes, param_bytes, n_params)
    step = phase_times(local, roofline_rows, opts['step_time'])
    grads = _gradients([x for x in local if x.get('phase') == 'backward'],
                       [t for t, p in zip(step.times, step.phases)
                        if p == 'backward'],
                       step.before, grad_bytes, link_bytes)
    report = collections.OrderedDict()
    for n in workers:
        def t_ar(nbytes, n=n):
            return allreduce_time(nbytes, n, net, opts['gpus_per_node'],
                                  opts['node_network'])
        t_all = t_ar(grad_bytes)
        # t_forward + max(t_backward, t_all), added to t_compute itself
        # (a step_time is not the sum of its spread parts to the last
        # bit): t_compute at one worker, never less at more
        t_overlap = step.compute + max(0.0, t_all - step.backward)
        exposed, n_buckets = exposed_communication(
            opts['overlap'], n, step, grads, t_all, t_ar,
            opts['bucket_bytes'])
        t_jitter = opts['jitter'] * step.compute * expected_max_normal(n) \
            if opts['jitter'] else 0.0
        t_step = step.compute + exposed + t_jitter
        # At one worker the all-reduce costs 0: the step is t_compute.
        report[n] = collections.OrderedDict([
            ('workers', n), ('comm_bytes', int(grad_bytes)),
            ('t_compute', step.compute), ('t_allreduce', t_all),
            ('t_step', t_step), ('t_step_overlap', t_overlap),
            ('efficiency', step.compute / t_step if t_step else 1.0),
            ('efficiency_overlap',
             step.compute / t_overlap if t_overlap else 1.0),
            ('samples_per_s',
             n * batch_size / t_step if t_step and batch_size else None),
            ('t_exposed_comm', exposed), ('n_buckets', n_buckets),
            ('t_jitter', t_jitter),
            ('step_from', 'roofline' if opts['step_time'] is None
             else 'step_time')])
    return report


def gradient_bytes(layers, grad_bytes=None, param_bytes=None,
                   n_params=None):
    """The bytes each worker all-reduces a step, first found:
    ``grad_bytes``; the gradient all-reduces recorded in the backward pass;
    ``param_bytes``; ``n_params`` float32 parameters (see
    :func:`scaling_report`)."""
    if grad_bytes is None:
        recorded = [x['comm_bytes'] for x in layers
                    if x['type'] == 'MPI_Allreduce' and x.get('phase') ==
                    'backward']
        if recorded:
            grad_bytes = sum(recorded)
        elif param_bytes:
            grad_bytes = param_bytes
        elif n_params is None:
            raise ValueError('the parameter count is unknown (no link was '
                             'called): give grad_bytes')
        else:
            grad_bytes = n_params * 4
    return checks.integer('grad_bytes', grad_bytes, 0)


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


def phase_times(local, roofline_rows, step_time=None):
    """The :class:`PhaseTimes` of the calls ``local``: their roofline
    times, or ``step_time`` spread over them in proportion to their
    measured times (when every call has one) or their roofline times."""
    times = [roofline_rows[x['name']]['t_roofline'] for x in local]
    if step_time is not None:
        measured = [roofline_rows[x['name']].get('time') for x in local]
        if all(t is not None for t in measured) and sum(measured) > 0:
            times = measured
        scale = step_time / sum(times) if sum(times) else 0.0
        times = [t * scale for t in times]
    phases = [x.get('phase') for x in local]
    t_forward = sum(t for t, p in zip(times, phases) if p != 'backward')
    t_backward = sum(t for t, p in zip(times, phases) if p == 'backward')
    t_update = sum(t for t, p in zip(times, phases) if p == 'update')
    t_compute = t_forward + t_backward
    if step_time is not None:
        t_compute = step_time  # the sum, without rounding
    return PhaseTimes(times, phases, t_forward, t_backward, t_update,
                      t_forward - t_update, t_compute)


def exposed_communication(mode, n, step, grads, t_all, t_ar,
                          bucket_bytes=None):
    """``(seconds, all-reduces)``: the communication of a step on ``n``
    workers that its compute does not hide under the overlap ``mode``
    (see :data:`OVERLAPS`), ``step`` its :class:`PhaseTimes`, ``grads``
    when each gradient is ready, ``t_all`` one all-reduce of them all and
    ``t_ar(nbytes)`` one of ``nbytes``."""
    if n <= 1:
        return 0.0, 1
    if mode == 'none':
        return t_all, 1
    if mode == 'chainermn-double-buffering':
        return max(0.0, t_all - step.compute), 1
    if mode == 'ddp':
        end, n_buckets = _ddp_end(
            grads, bucket_bytes or DDP_BUCKET_BYTES, t_ar)
    else:
        end, n_buckets = _horovod_end(
            grads, bucket_bytes or HOROVOD_FUSION_BYTES,
            HOROVOD_CYCLE_TIME, step.before, t_ar)
    return max(0.0, end - (step.before + step.backward)), n_buckets
