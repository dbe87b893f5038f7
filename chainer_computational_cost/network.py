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
import numbers


class Network(collections.namedtuple(
        'Network', ['name', 'title', 'bandwidth', 'latency'])):
    """An interconnect: ``bandwidth`` in bytes per second (one direction,
    one port per worker), ``latency`` in seconds (one small message)."""

    __slots__ = ()


#: Network presets.
NETWORKS = collections.OrderedDict()

# InfiniBand link rates: EDR 25 Gb/s a lane, HDR 50, NDR 100, four lanes a
# port: 100, 200 and 400 Gb/s (atgbics.com, "Direct Attach InfiniBand Port
# Speed Overview"; NDR 400 Gb/s also in NVIDIA's DGX SuperPOD design guide,
# "NDR Overview").  Latency: an MPI ping-pong over InfiniBand is about a
# microsecond half round trip (the osu_latency example of QLogic's
# InfiniPath manual gives 1.26 us for small messages, manualsdump.com,
# "Benchmark 2"); newer adapters are faster, and 1 us stands for one small
# message through one switch.
for _name, _gbps in (('ib-edr', 100), ('ib-hdr200', 200), ('ib-ndr', 400)):
    NETWORKS[_name] = Network(
        _name, 'InfiniBand {} ({} Gb/s)'.format(
            _name[3:6].upper(), _gbps), _gbps * 1e9 / 8, 1e-6)

# Ethernet with MPI over the kernel's TCP stack: an application's one-way
# latency is about 10 us at best over 10GbE with the standard Linux stack
# (Larsen et al., "Architectural breakdown of end-to-end latency in a
# TCP/IP network", Int. J. Parallel Programming 37(6), 2009); a faster link
# does not shorten the software path, so 25 and 100 GbE keep 10 us.
for _name, _gbps in (('eth-25g', 25), ('eth-100g', 100)):
    NETWORKS[_name] = Network(
        _name, '{} Gigabit Ethernet (TCP)'.format(_gbps),
        _gbps * 1e9 / 8, 10e-6)

# NVLink 3 inside one node (A100): 12 links, 600 GB/s a GPU counting both
# directions (nvidia.com, "NVLink"; wikimili.com, "NVLink": 50 GB/s a
# bidirectional link), so 300 GB/s one way.  Latency: no published MPI
# figure found; 1 us is an assumption (a small message between two GPUs
# through NVSwitch, the software path included).
NETWORKS['nvlink-a100'] = Network(
    'nvlink-a100', 'NVLink 3 (A100, one node)', 300e9, 1e-6)


def resolve_network(network):
    """The :class:`Network` ``network`` names (a preset name or a Network);
    a one-line ValueError names the presets otherwise."""
    if isinstance(network, Network):
        return network
    if isinstance(network, str) and network.lower() in NETWORKS:
        return NETWORKS[network.lower()]  # names in any case, as devices
    raise ValueError('unknown network {!r}; the presets are {}'.format(
        network, ', '.join(repr(n) for n in NETWORKS)))


def _log2(n):
    return math.ceil(math.log2(n)) if n > 1 else 0


def collective_time(kind, nbytes, n_ranks, network):
    """Seconds of one MPI call of record type ``kind`` (``'MPI_Allreduce'``,
    ...) handing ``nbytes`` to MPI over ``n_ranks`` ranks on ``network``
    (see the module's table)."""
    net = resolve_network(network)
    a, s = net.latency, nbytes / net.bandwidth
    n = int(n_ranks)
    if n <= 1:
        return 0.0
    base = kind[4:].split('_')[0].lower()  # MPI_bcast_obj -> bcast
    if base == 'allreduce':
        return 2.0 * (n - 1) / n * s + 2 * (n - 1) * a
    if base in ('bcast', 'reduce'):
        return _log2(n) * (a + s)
    if base == 'allgather':
        return (n - 1) * (a + s)
    if base == 'gather':
        return _log2(n) * a + (n - 1) * s
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


#: Columns of a scaling report.
SCALING_COLUMNS = ('workers', 'comm_bytes', 't_compute', 't_allreduce',
                   't_step', 't_step_overlap', 'efficiency',
                   'efficiency_overlap', 'samples_per_s')


def check_workers(workers):
    """``workers`` as a list of ints >= 1: one int, or any iterable of
    them (read once); a one-line ValueError otherwise."""
    if isinstance(workers, numbers.Integral) and not isinstance(
            workers, bool):
        workers = [workers]
    elif isinstance(workers, (str, bytes)):
        workers = [workers]  # not its characters
    else:
        try:
            workers = list(workers)
        except TypeError:
            workers = [workers]
    bad = [w for w in workers if isinstance(w, bool) or not isinstance(
        w, numbers.Integral) or w <= 0]
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
    if isinstance(batch_size, bool) or not isinstance(
            batch_size, numbers.Integral):
        raise TypeError('batch_size must be an int >= 1 (samples per '
                        'worker) or None, got {!r}'.format(batch_size))
    if batch_size < 1:
        raise ValueError('batch_size must be an int >= 1 (samples per '
                         'worker) or None, got {!r}'.format(batch_size))
    return int(batch_size)


def scaling_report(layers, roofline_rows, n_params, workers, network,
                   batch_size, grad_bytes=None, param_bytes=None):
    """Ordered dict N -> the time of one data-parallel training step on
    ``N`` workers (weak scaling: ``batch_size`` samples per worker).

    ``layers`` are the layer dicts of one training step on one worker and
    ``roofline_rows`` their roofline report on the worker's device.  Each
    row has ``workers``; ``comm_bytes``, the gradient bytes each worker
    all-reduces; ``t_compute``, the step's roofline time without
    communication; ``t_allreduce``, one ring all-reduce of those bytes
    over ``N`` workers; ``t_step = t_compute + t_allreduce`` (no overlap)
    and ``t_step_overlap = t_forward + max(t_backward, t_allreduce)`` (the
    all-reduce hidden behind the backward pass as far as it goes);
    ``efficiency`` and ``efficiency_overlap``, the step time at 1 worker
    over the one at N; ``samples_per_s = N * batch_size / t_step`` (None
    without a batch size).

    The gradient bytes are, first found: ``grad_bytes``; the bytes of the
    gradient all-reduces recorded in the backward pass (a run with
    ``comm=``: what ChainerMN handed to MPI, so its own rules hold: the
    ``naive`` and ``flat`` communicators send float16 gradients as
    float32, ``flat`` float64 ones too); else ``param_bytes``, the bytes
    of the parameters of the links called: each gradient has its
    parameter's dtype, as ChainerMN's ``pure_nccl`` communicator sends it
    when ``chainer.config.dtype`` is the model's; else ``n_params`` times
    4 (float32).
    """
    net = resolve_network(network)
    workers = check_workers(workers)
    batch_size = check_batch_size(batch_size)
    local = [x for x in layers if not x['type'].startswith('MPI_')]
    if not any(x.get('phase') == 'backward' for x in local):
        raise ValueError('scaling_report needs a training step: no backward '
                         'pass was recorded (call loss.backward() inside '
                         'the block)')
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
    if isinstance(grad_bytes, bool) or not isinstance(
            grad_bytes, numbers.Integral) or grad_bytes < 0:
        raise ValueError('grad_bytes must be an int >= 0, got {!r}'.format(
            grad_bytes))
    t_forward = sum(roofline_rows[x['name']]['t_roofline'] for x in local
                    if x.get('phase') != 'backward')
    t_backward = sum(roofline_rows[x['name']]['t_roofline'] for x in local
                     if x.get('phase') == 'backward')
    t_compute = t_forward + t_backward
    report = collections.OrderedDict()
    for n in workers:
        t_ar = collective_time('MPI_Allreduce', grad_bytes, n, net)
        t_step = t_compute + t_ar
        t_overlap = t_forward + max(t_backward, t_ar)
        # At one worker the all-reduce costs 0: the step is t_compute.
        report[n] = collections.OrderedDict([
            ('workers', n), ('comm_bytes', int(grad_bytes)),
            ('t_compute', t_compute), ('t_allreduce', t_ar),
            ('t_step', t_step), ('t_step_overlap', t_overlap),
            ('efficiency', t_compute / t_step if t_step else 1.0),
            ('efficiency_overlap',
             t_compute / t_overlap if t_overlap else 1.0),
            ('samples_per_s',
             n * batch_size / t_step if t_step and batch_size else None)])
    return report
