"""Aggregation: pure functions of lists of layer dicts.

Layer dicts in (``name, type, flops, mread, mwrite`` and the optional keys
of a record), ordered dicts out: :func:`total_report`,
:func:`layer_report`, :func:`summary_report`, :func:`phase_report`,
:func:`link_report`.  Every report's last row is the total of
:func:`total_report`, with percentages; with ``comm=True`` (the layers
of a run with a ChainerMN communicator) every row has ``comm_bytes``, 0
when nothing was sent.  It imports
:mod:`~chainer_computational_cost.core.columns` and
:mod:`~chainer_computational_cost.core.records` only.
"""

import collections

from chainer_computational_cost.core.columns import METRICS, PHASES
from chainer_computational_cost.core.records import link_depth


#: The totals below which a percentage's float arithmetic cannot
#: overflow (100 times a figure no larger is still a float).  A projection
#: to a huge batch gives larger exact ints (docs/projection.md): their
#: percentages are then int divisions, which Python rounds correctly at
#: any size.
_FLOAT_SAFE = 2 ** 1000


def _percentages(entry, total):
    for m in METRICS:
        t = total[m]
        if not t:
            entry[m + '%'] = 0.0
        elif t < _FLOAT_SAFE:
            entry[m + '%'] = 100.0 * entry[m] / t
        else:
            entry[m + '%'] = 100 * entry[m] / t
    return entry


def _percent_of(t):
    """The function ``x -> 100 * x / t`` of a layer's cells (0.0 when
    ``t`` is 0), as fast as a multiplication below :data:`_FLOAT_SAFE`."""
    if t >= _FLOAT_SAFE:
        return lambda x: 100 * x / t
    return (100.0 / t if t else 0.0).__rmul__


def _sum_into(entry, layer):
    entry['n_layers'] += 1
    entry['flops'] += layer['flops']
    entry['mread'] += layer['mread']
    entry['mwrite'] += layer['mwrite']
    entry['mrw'] = entry['mread'] + entry['mwrite']
    t = layer.get('time')
    if t is not None:
        entry['time'] = entry.get('time', 0.0) + t
    # Only runs with communication (ChainerMN) get the key.
    c = layer.get('comm_bytes')
    if c:
        entry['comm_bytes'] = entry.get('comm_bytes', 0) + c


def total_report(layers, n_params=None, comm=False):
    """Sum of every layer's costs.

    ``layers`` is an iterable of dicts with at least ``flops``, ``mread``
    and ``mwrite``; ``n_params`` (the model's parameter count, when known)
    is added as a key.  ``comm``: the layers come from a run with a
    ChainerMN communicator, so the total (and every row of the reports
    below) has ``comm_bytes``, 0 when nothing was sent; otherwise only
    when a layer sent bytes.  Every report's total row is this one, with
    percentages.
    """
    total = collections.OrderedDict(
        [('name', 'total'), ('type', 'total'), ('n_layers', 0),
         ('flops', 0), ('mread', 0), ('mwrite', 0), ('mrw', 0)])
    for layer in layers:
        _sum_into(total, layer)
    if comm:
        total.setdefault('comm_bytes', 0)
    if n_params is not None:
        total['n_params'] = n_params
    return total


def _total_row(total):
    return _percentages(collections.OrderedDict(total), total)


def _comm_zeros(report):
    """In a run with communication (the total has ``comm_bytes``), a
    group that sent nothing gets ``comm_bytes`` 0: a blank cell would say
    "not applicable" where the answer is none."""
    if 'comm_bytes' in report['total']:
        for entry in report.values():
            entry.setdefault('comm_bytes', 0)
    return report


#: The optional keys of a layer record, after 0.1.2's.
_LAYER_EXTRA = ('phase', 'link', 'time', 'comm_bytes', 'rank', 'live')


def layer_report(layers, n_params=None, comm=False):
    """Ordered dict layer name -> record with percentages, then 'total'.

    ``layers`` is a sequence of dicts with keys ``name, type, flops, mread,
    mwrite, traceback, input_shapes, output_shapes, params`` and optionally
    ``phase, link, time``.  The total row is the one of
    :func:`summary_report`.
    """
    total = total_report(layers, n_params, comm)
    flops_p, mread_p, mwrite_p, mrw_p = (_percent_of(total[m])
                                         for m in METRICS)
    report = collections.OrderedDict()
    for layer in layers:
        get = layer.get
        mread = layer['mread']
        mwrite = layer['mwrite']
        # Plain dicts keep their order; 0.1.2's keys first.
        entry = {'name': layer['name'], 'type': get('type'),
                 'flops': layer['flops'], 'mread': mread, 'mwrite': mwrite,
                 'mrw': mread + mwrite, 'traceback': get('traceback'),
                 'input_shapes': get('input_shapes'),
                 'output_shapes': get('output_shapes'),
                 'params': get('params'),
                 'flops%': flops_p(layer['flops']),
                 'mread%': mread_p(mread), 'mwrite%': mwrite_p(mwrite),
                 'mrw%': mrw_p(mread + mwrite)}
        for k in _LAYER_EXTRA:
            if k in layer:
                entry[k] = layer[k]
        report[layer['name']] = entry
    report['total'] = _total_row(total)
    return report


def group_key(name, taken):
    """A key for a group that hides neither the total row nor a group keyed
    before it: ``name``, else ``name`` followed by ``' (type)'`` as many
    times as needed."""
    key = name
    while key == 'total' or key in taken:
        key += ' (type)'
    return key


def summary_report(layers, n_params=None, by_phase=False, comm=False):
    """Ordered dict layer type -> summed costs, in order of first call,
    then 'total'.

    A function type named ``total`` is keyed ``'total (type)'`` (and a
    key already taken gets a further ``' (type)'``): the total row always
    stays last under ``'total'``, and every group keeps its row.  With
    ``by_phase``, types are grouped per phase (forward first), keyed
    ``'<phase>/<type>'`` and each entry has a ``phase``.
    """
    total = total_report(layers, n_params, comm)
    groups = collections.OrderedDict()
    if by_phase:
        ordered = [layer for p in PHASES for layer in layers
                   if layer.get('phase', 'forward') == p]
    else:
        ordered = layers
    for layer in ordered:
        if by_phase:
            phase = layer.get('phase', 'forward')
            gkey = (phase, layer['type'])
        else:
            gkey = layer['type']
        entry = groups.get(gkey)
        if entry is None:
            entry = groups[gkey] = collections.OrderedDict(
                [('type', layer['type']), ('name', layer['type'])])
            if by_phase:
                entry['phase'] = phase
            entry.update([('n_layers', 0), ('flops', 0), ('mread', 0),
                          ('mwrite', 0), ('mrw', 0)])
        _sum_into(entry, layer)
    report = collections.OrderedDict()
    for gkey, entry in groups.items():
        key = '{}/{}'.format(*gkey) if by_phase else gkey
        report[group_key(key, report)] = _percentages(entry, total)
    report['total'] = _total_row(total)
    return _comm_zeros(report)


def phase_report(layers, n_params=None, comm=False):
    """Ordered dict ``forward``, ``backward``, ``total``: the costs of each
    phase of a training step (a phase with no call has zeros); ``update``
    after ``backward`` when an optimizer's update was recorded."""
    total = total_report(layers, n_params, comm)
    report = collections.OrderedDict()
    phases = PHASES if any(layer.get('phase') == 'update'
                           for layer in layers) else PHASES[:2]
    for p in phases:
        entry = collections.OrderedDict(
            [('name', p), ('n_layers', 0), ('flops', 0), ('mread', 0),
             ('mwrite', 0), ('mrw', 0)])
        for layer in layers:
            if layer.get('phase', 'forward') == p:
                _sum_into(entry, layer)
        report[p] = _percentages(entry, total)
    report['total'] = _total_row(total)
    return _comm_zeros(report)


def link_report(layers, link_info, depth=None, comm=False):
    """Ordered dict link path -> costs of the functions called in that link
    and its descendants, then 'total'.

    ``link_info`` maps each path seen to ``(n_calls, n_params)`` (a third
    item, the parameters' bytes, is not read here); every
    ancestor path is present too.  A layer with no ``link`` belongs to the
    root ``/``.  With ``depth``, paths deeper than ``depth`` levels are
    left out: their costs stay in their ancestors.
    """
    total = total_report(layers, link_info.get('/', (None, None))[1],
                         comm)
    paths = set(link_info) | {'/'}
    for layer in layers:
        paths.add(layer.get('link') or '/')
    full = set()
    for p in paths:
        full.update(ancestors(p))
    entries = {}
    for p in full:
        n_calls, n_params = link_info.get(p, (0, 0))[:2]
        entries[p] = collections.OrderedDict(
            [('name', p), ('n_params', n_params), ('n_calls', n_calls),
             ('n_layers', 0), ('flops', 0), ('mread', 0), ('mwrite', 0),
             ('mrw', 0)])
    for layer in layers:
        for p in ancestors(layer.get('link') or '/'):
            _sum_into(entries[p], layer)
    report = collections.OrderedDict()
    for p in _preorder(list(link_info) + sorted(full - set(link_info))):
        if depth is not None and link_depth(p) > depth:
            continue
        report[p] = _percentages(entries[p], total)
    report['total'] = _total_row(total)
    return _comm_zeros(report)


def _preorder(paths):
    """Every path of ``paths`` and their ancestors, parents first, each
    link's children in the order they appear in ``paths`` (the order of
    their first call)."""
    children = collections.OrderedDict()
    for path in paths:
        chain = ancestors(path)
        for parent, child in zip(chain, chain[1:]):
            children.setdefault(parent, collections.OrderedDict())[
                child] = None
    out = []
    todo = ['/']
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(reversed(list(children.get(p, ()))))
    return out


def ancestors(path):
    """'/a/b' -> ['/', '/a', '/a/b']."""
    parts = [p for p in path.split('/') if p]
    return ['/'] + ['/' + '/'.join(parts[:i + 1]) for i in range(len(parts))]
