"""From cost to time: the least time each layer needs on a device.

A layer that does ``flops`` operations and moves ``mrw`` bytes cannot run
faster on a device than ``flops / peak`` (its arithmetic at the device's
peak FLOP/s) nor than ``mrw / bandwidth`` (its traffic at the device's
memory bandwidth).  The larger of the two is the roofline bound
``t_roofline``; their sum, ``t_serial``, is the bound when arithmetic and
traffic do not overlap (the blog estimate of the original tool).

Which peak a layer gets depends on

* its class of operation: matrix-unit ops (convolutions, deconvolutions,
  linear layers, matmuls, tensordot, einsum, the cuDNN RNNs and their
  gradient functions: :data:`MATRIX_TYPES`) may run on tensor cores;
  every other function runs on the vector units;
* its precision, read from the layer's ``dtype`` (the first input's):
  ``float16``, ``float32`` or ``float64``; a layer whose first input is
  not a float (integer ids or labels) or whose dtype is unknown is costed
  as ``float32``.

Each device preset maps every (class, precision) pair to a named peak;
rows report it as ``peak_used`` (``'fp32 vector'``, ``'tf32 matrix'``, ...)
and ``peak_flops``.  Where a precision can run on more than one unit, the
preset takes the fastest, because a roofline is a lower bound.

Datasheet peaks count a fused multiply-add as two FLOPs.  The hook counts
it as one by default (``fma_1flop=True``), which halves ``t_compute`` of
convolutions and linear layers compared with the datasheet's convention;
run the hook with ``fma_1flop=False`` for a bound in the datasheet's terms.
"""

import collections
import collections.abc
import math

from chainer_computational_cost.core.columns import ROOFLINE_DEFAULT
from chainer_computational_cost.core.columns import ROOFLINE_TIMED
from chainer_computational_cost.core.devices import resolve_device


def default_columns(rows):
    """:data:`~chainer_computational_cost.core.columns.ROOFLINE_TIMED` when
    a row has a measured time, else ``ROOFLINE_DEFAULT`` (as lists)."""
    rows = rows.values() if isinstance(rows, dict) else rows
    if any(r.get('time') is not None for r in rows):
        return list(ROOFLINE_TIMED)
    return list(ROOFLINE_DEFAULT)


def _row(layer, dev):
    flops = layer['flops']
    mrw = layer['mread'] + layer['mwrite']
    label, peak = dev.peak(layer['type'], layer.get('dtype'))
    bandwidth = dev.bandwidth
    t_compute = flops / peak
    t_memory = mrw / bandwidth
    if mrw:
        intensity = flops / mrw
        bound = 'compute' if intensity >= peak / bandwidth else 'memory'
    else:
        # No traffic: no place on the intensity axis (None, not inf, so
        # that every renderer and JSON take it); bound by arithmetic if
        # there is any, by nothing otherwise (a free reshape).
        intensity = None
        bound = 'compute' if flops else None
    row = collections.OrderedDict([
        ('name', layer['name']), ('type', layer['type']),
        ('dtype', layer.get('dtype')), ('flops', flops),
        ('mread', layer['mread']), ('mwrite', layer['mwrite']),
        ('mrw', mrw), ('intensity', intensity), ('peak_flops', peak),
        ('peak_used', label), ('bandwidth', bandwidth),
        ('t_compute', t_compute), ('t_memory', t_memory),
        ('t_roofline', max(t_compute, t_memory)),
        ('t_serial', t_compute + t_memory), ('bound', bound)])
    time = layer.get('time')
    if time is not None:
        row['time'] = time
        row['efficiency'] = _efficiency(row['t_roofline'], time)
    return row


def _efficiency(t_roofline, time):
    """``t_roofline / time``; None for no time, or a time so short (a
    clock's denormal tick) that the ratio is beyond a float."""
    ratio = t_roofline / time if time > 0 else math.inf
    return ratio if ratio < math.inf else None


def roofline_report(layers, device=None, peak_flops=None, bandwidth=None):
    """Ordered dict layer name -> the least time the layer needs on a
    device, then 'total'.

    Args:
        layers: layer dicts with ``name, type, flops, mread, mwrite`` and
            optionally ``dtype`` (numpy dtype name) and ``time`` (seconds
            measured by the hook).
        device: a preset name from :data:`DEVICES` or a :class:`Device`;
            or None, with both
        peak_flops (float): FLOP/s for every layer, and
        bandwidth (float): bytes per second.

    Each row has ``name, type, dtype, flops, mread, mwrite, mrw``,
    ``intensity = flops / mrw`` (None when ``mrw`` is 0), ``peak_flops``
    and ``peak_used`` (its label), ``bandwidth``, ``t_compute = flops /
    peak_flops``, ``t_memory = mrw / bandwidth``, ``t_roofline`` (their
    maximum), ``t_serial`` (their sum), in seconds, and ``bound``:
    ``'compute'`` when the intensity reaches the ridge point ``peak_flops
    / bandwidth``, else ``'memory'`` (``'compute'`` for FLOPs without
    traffic, None for a layer with neither).  A layer with a measured
    ``time`` also gets ``time`` and ``efficiency = t_roofline / time``.

    The 'total' row sums flops, bytes and the four times (``t_roofline``
    is the sum of the layers' maxima); its intensity is total flops over
    total bytes; ``peak_flops`` and ``peak_used`` are those of the layers
    when they all share one, else None.  When every layer has a time, it
    has the summed ``time`` and ``efficiency = t_roofline / time``.
    """
    dev = resolve_device(device, peak_flops, bandwidth)
    report = collections.OrderedDict()
    total = collections.OrderedDict(
        [('name', 'total'), ('type', 'total'), ('dtype', None),
         ('flops', 0), ('mread', 0), ('mwrite', 0), ('mrw', 0),
         ('intensity', None), ('peak_flops', None), ('peak_used', None),
         ('bandwidth', dev.bandwidth), ('t_compute', 0.0),
         ('t_memory', 0.0), ('t_roofline', 0.0), ('t_serial', 0.0),
         ('bound', None)])
    peaks = set()
    time = 0.0
    timed = bool(layers)
    for layer in layers:
        try:
            row = _row(layer, dev)
        except OverflowError:  # an int a float cannot hold
            raise ValueError(
                "roofline: the figures of call {} (its FLOPs or bytes) are "
                "beyond a float's range: its times cannot be computed; "
                'give a smaller batch size'.format(layer['name'])) from None
        report[row['name']] = row
        for k in ('flops', 'mread', 'mwrite', 'mrw', 't_compute',
                  't_memory', 't_roofline', 't_serial'):
            total[k] += row[k]
        peaks.add((row['peak_used'], row['peak_flops']))
        if row.get('time') is None:
            timed = False
        else:
            time += row['time']
    if not math.isfinite(total['t_serial'] * 1e6):
        # figures that pass the checks, but too far apart for a float (in
        # microseconds too, the finest unit the reports show)
        raise ValueError(
            'roofline: the times of these figures at {} FLOP/s and {} B/s '
            'overflow; give a device with a larger peak_flops or '
            'bandwidth'.format(
                min(p for _, p in peaks), dev.bandwidth))
    if total['mrw']:
        total['intensity'] = total['flops'] / total['mrw']
    if len(peaks) == 1:
        (total['peak_used'], total['peak_flops']), = peaks
    if timed:
        total['time'] = time
        total['efficiency'] = _efficiency(total['t_roofline'], time)
    report['total'] = total
    return report
