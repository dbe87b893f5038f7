"""Aggregation and rendering of computational cost records.

The module has three layers:

* pure aggregation functions (:func:`layer_report`, :func:`summary_report`,
  :func:`total_report`, ...): lists of layer dicts in, ordered dicts out;
* pure renderers (:func:`render`): report rows in, text out;
* :class:`CostReport`, the one reading API: whatever holds records (the
  hook, a batch projection) inherits it and provides ``_records()``; every
  report is built once per change of the records and handed out as a fresh
  copy.
"""

import collections
import collections.abc
import copy
import csv
import functools
import io
import json
import math
import numbers
import os
import sys
import sysconfig
import traceback
import warnings

#: Metrics that are summed into totals and get a percentage column.
METRICS = ('flops', 'mread', 'mwrite', 'mrw')
PERCENTS = tuple(m + '%' for m in METRICS)
#: Metrics counted in bytes (scaled by 1024).
BYTE_METRICS = ('mread', 'mwrite', 'mrw', 'comm_bytes')
#: Columns of bytes alive (``ComputationalCostHook(memory=True)``): the
#: layer column ``live`` and the columns of the memory reports.
MEMORY_BYTES = ('live', 'bytes', 'activations', 'gradients')
#: Columns holding seconds (scaled by the time unit).
TIME_COLUMNS = ('time', 't_compute', 't_memory', 't_roofline', 't_serial',
                't_network', 't_allreduce', 't_step', 't_step_overlap')
#: The phases of a training step, in report order.
PHASES = ('forward', 'backward')


class ReportColumns(object):
    """Predefined column sets for ``show_report``."""

    DEFAULT = ['name', 'flops', 'mread', 'mwrite', 'mrw']
    DEFAULT_AND_PERCENT = DEFAULT + list(PERCENTS)
    ALL = DEFAULT_AND_PERCENT + ['input_shapes', 'output_shapes', 'params']


class SummaryColumns(object):
    """Predefined column sets for ``show_summary_report``."""

    DEFAULT = ['type', 'n_layers', 'flops', 'mread', 'mwrite', 'mrw']
    ALL = DEFAULT + list(PERCENTS)


class LinkColumns(object):
    """Predefined column sets for ``show_link_report``."""

    DEFAULT = ['name', 'n_params', 'n_calls', 'n_layers', 'flops', 'mread',
               'mwrite', 'mrw']
    ALL = DEFAULT + list(PERCENTS)


class PhaseColumns(object):
    """Predefined column sets for ``show_phase_report``."""

    DEFAULT = ['name', 'n_layers', 'flops', 'mread', 'mwrite', 'mrw']
    ALL = DEFAULT + list(PERCENTS)


#: Columns each report kind can show.
LAYER_COLUMNS = ('name', 'type') + METRICS + PERCENTS + (
    'input_shapes', 'output_shapes', 'params', 'traceback', 'phase', 'link',
    'time', 'comm_bytes', 'rank', 'live')
SUMMARY_COLUMNS = ('type', 'name', 'phase', 'n_layers') + METRICS + \
    PERCENTS + ('time', 'comm_bytes', 'slowest_rank')
LINK_COLUMNS = ('name', 'n_params', 'n_calls', 'n_layers') + METRICS + \
    PERCENTS + ('time', 'comm_bytes')
PHASE_COLUMNS = ('name', 'n_layers') + METRICS + PERCENTS + ('time',
                                                             'comm_bytes')

MODES = ('csv', 'md', 'table', 'json')
PREFIXES = ('', 'K', 'M', 'G', 'T')
UNITS = (None, '', 'raw') + PREFIXES[1:] + ('autoaligned', 'auto')
TIME_UNITS = ('s', 'ms', 'us')
MAX_DIGITS = 10


# Fresh copies

def fresh(value):
    """A copy of a report value sharing nothing mutable with it: dicts,
    lists, sets and tuples are rebuilt; numbers and strings are kept."""
    t = type(value)
    if t in (int, float, str, bool) or value is None:
        return value
    if t is dict or t is collections.OrderedDict:
        return t((k, fresh(v)) for k, v in value.items())
    if t is list:
        return [fresh(v) for v in value]
    if t is tuple:
        return tuple([fresh(v) for v in value])
    return copy.deepcopy(value)


class FreshDict(dict):
    """An ordered report mapping whose entries are copied the first time
    they are read.

    Building it is one dict copy, however many layers there are; reading an
    entry copies that entry only.  Every way of reading (``[]``, ``get``,
    iteration of ``items``/``values``, ``dict(...)``, ``json.dumps``,
    ``copy``) goes through the copying path, so nothing read from it is
    shared with the cache it was made from.
    """

    __slots__ = ('_copied',)

    def __init__(self, source=()):
        dict.__init__(self, source)
        self._copied = set()

    def __getitem__(self, key):
        value = dict.__getitem__(self, key)
        if key not in self._copied:
            value = fresh(value)
            dict.__setitem__(self, key, value)
            self._copied.add(key)
        return value

    def __setitem__(self, key, value):
        dict.__setitem__(self, key, value)
        self._copied.add(key)

    # Overriding __iter__ (even unchanged) makes CPython copy this mapping
    # through keys() and __getitem__ in dict(), {**d}, update() and copy.
    def __iter__(self):
        return dict.__iter__(self)

    def get(self, key, default=None):
        """The copied entry for ``key``, or ``default``."""
        return self[key] if key in self else default

    def items(self):
        """(key, copied entry) pairs in order."""
        return [(k, self[k]) for k in dict.keys(self)]

    def values(self):
        """Copied entries in order."""
        return [self[k] for k in dict.keys(self)]

    def pop(self, key, *default):
        """Remove ``key`` and return its copied entry."""
        if key in self:
            value = self[key]
            dict.__delitem__(self, key)
            return value
        return dict.pop(self, key, *default)

    def popitem(self):
        """Remove and return the last (key, copied entry) pair."""
        key = next(reversed(dict.keys(self)))
        return key, self.pop(key)

    def setdefault(self, key, default=None):
        """The copied entry for ``key``, inserting ``default`` if absent."""
        if key in self:
            return self[key]
        self[key] = default
        return default

    def copy(self):
        """A plain dict of copied entries."""
        return dict(self.items())

    def __reduce__(self):
        return dict, (self.items(),)

    def __deepcopy__(self, memo):
        return copy.deepcopy(dict(self.items()), memo)


# Aggregation: pure functions of lists of layer dicts

def _percentages(entry, total):
    for m in METRICS:
        t = total[m]
        entry[m + '%'] = 100.0 * entry[m] / t if t else 0.0
    return entry


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


def total_report(layers, n_params=None):
    """Sum of every layer's costs.

    ``layers`` is an iterable of dicts with at least ``flops``, ``mread``
    and ``mwrite``; ``n_params`` (the model's parameter count, when known)
    is added as a key.  Every report's total row is this one, with
    percentages.
    """
    total = collections.OrderedDict(
        [('name', 'total'), ('type', 'total'), ('n_layers', 0),
         ('flops', 0), ('mread', 0), ('mwrite', 0), ('mrw', 0)])
    for layer in layers:
        _sum_into(total, layer)
    if n_params is not None:
        total['n_params'] = n_params
    return total


def _total_row(total):
    return _percentages(collections.OrderedDict(total), total)


#: The optional keys of a layer record, after 0.1.2's.
_LAYER_EXTRA = ('phase', 'link', 'time', 'comm_bytes', 'rank', 'live')


def layer_report(layers, n_params=None):
    """Ordered dict layer name -> record with percentages, then 'total'.

    ``layers`` is a sequence of dicts with keys ``name, type, flops, mread,
    mwrite, traceback, input_shapes, output_shapes, params`` and optionally
    ``phase, link, time``.  The total row is the one of
    :func:`summary_report`.
    """
    total = total_report(layers, n_params)
    scale = {m: (100.0 / total[m] if total[m] else 0.0) for m in METRICS}
    flops_s, mread_s, mwrite_s, mrw_s = (scale[m] for m in METRICS)
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
                 'flops%': layer['flops'] * flops_s,
                 'mread%': mread * mread_s, 'mwrite%': mwrite * mwrite_s,
                 'mrw%': (mread + mwrite) * mrw_s}
        for k in _LAYER_EXTRA:
            if k in layer:
                entry[k] = layer[k]
        report[layer['name']] = entry
    report['total'] = _total_row(total)
    return report


def _group_key(name, taken):
    """A key for a group that cannot hide the total row."""
    return name if name != 'total' and name not in taken else (
        '{} (type)'.format(name))


def summary_report(layers, n_params=None, by_phase=False):
    """Ordered dict layer type -> summed costs, in order of first call,
    then 'total'.

    A function type named ``total`` is keyed ``'total (type)'``: the total
    row always stays last under ``'total'``.  With ``by_phase``, types are
    grouped per phase (forward first), keyed ``'<phase>/<type>'`` and each
    entry has a ``phase``.
    """
    total = total_report(layers, n_params)
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
        report[_group_key(key, report)] = _percentages(entry, total)
    report['total'] = _total_row(total)
    return report


def phase_report(layers, n_params=None):
    """Ordered dict ``forward``, ``backward``, ``total``: the costs of each
    phase of a training step (a phase with no call has zeros)."""
    total = total_report(layers, n_params)
    report = collections.OrderedDict()
    for p in PHASES:
        entry = collections.OrderedDict(
            [('name', p), ('n_layers', 0), ('flops', 0), ('mread', 0),
             ('mwrite', 0), ('mrw', 0)])
        for layer in layers:
            if layer.get('phase', 'forward') == p:
                _sum_into(entry, layer)
        report[p] = _percentages(entry, total)
    report['total'] = _total_row(total)
    return report


def link_report(layers, link_info, depth=None):
    """Ordered dict link path -> costs of the functions called in that link
    and its descendants, then 'total'.

    ``link_info`` maps each path seen to ``(n_calls, n_params)``; every
    ancestor path is present too.  A layer with no ``link`` belongs to the
    root ``/``.  With ``depth``, paths deeper than ``depth`` levels are
    left out: their costs stay in their ancestors.
    """
    total = total_report(layers, link_info.get('/', (None, None))[1])
    paths = set(link_info) | {'/'}
    for layer in layers:
        paths.add(layer.get('link') or '/')
    full = set()
    for p in paths:
        full.update(_ancestors(p))
    entries = {}
    for p in full:
        n_calls, n_params = link_info.get(p, (0, 0))
        entries[p] = collections.OrderedDict(
            [('name', p), ('n_params', n_params), ('n_calls', n_calls),
             ('n_layers', 0), ('flops', 0), ('mread', 0), ('mwrite', 0),
             ('mrw', 0)])
    for layer in layers:
        for p in _ancestors(layer.get('link') or '/'):
            _sum_into(entries[p], layer)
    report = collections.OrderedDict()
    for p in _preorder(list(link_info) + sorted(full - set(link_info))):
        if depth is not None and _depth(p) > depth:
            continue
        report[p] = _percentages(entries[p], total)
    report['total'] = _total_row(total)
    return report


def _preorder(paths):
    """Every path of ``paths`` and their ancestors, parents first, each
    link's children in the order they appear in ``paths`` (the order of
    their first call)."""
    children = collections.OrderedDict()
    for path in paths:
        chain = _ancestors(path)
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


def _ancestors(path):
    """'/a/b' -> ['/', '/a', '/a/b']."""
    parts = [p for p in path.split('/') if p]
    return ['/'] + ['/' + '/'.join(parts[:i + 1]) for i in range(len(parts))]


def _depth(path):
    return len([p for p in path.split('/') if p])


# Argument checking: every show_* argument is checked before anything is
# rendered, so bad input never produces partial output.  The command line
# calls the same checks with its option names, so both accept the same
# values and say the same things about the rest.

def _choice(value, allowed, name, also=''):
    """``value`` matched case-insensitively against the strings
    ``allowed`` (returned as spelled there), or a ValueError naming
    ``name`` and the allowed values."""
    if isinstance(value, str):
        for a in allowed:
            if value.lower() == a.lower():
                return a
    raise ValueError('{} must be one of {}{}, got {!r}'.format(
        name, ', '.join(repr(a) for a in allowed), also, value))


def check_mode(mode, name='mode'):
    """The mode of :data:`MODES` that ``mode`` names (any case), or a
    ValueError."""
    return _choice(mode, MODES, name)


#: Spellings of raw numbers besides None (any case).
RAW_UNITS = ('', 'raw', 'none')


def check_unit(unit, name='unit'):
    """The unit ``unit`` names (any case: ``'g'`` is ``'G'``,
    ``'AUTO'`` is ``'auto'``): None for raw numbers (None, '', 'raw',
    'none'), else one of :data:`UNITS`; a ValueError otherwise."""
    if unit is None:
        return None
    allowed = ('raw',) + PREFIXES[1:] + ('autoaligned', 'auto')
    if isinstance(unit, str) and unit.lower() in RAW_UNITS:
        return None
    return _choice(unit, allowed, name, ' (any case) or None')


def check_time_unit(time_unit, name='time_unit'):
    """The unit of :data:`TIME_UNITS` that ``time_unit`` names (any
    case), or a ValueError."""
    return _choice(time_unit, TIME_UNITS, name)


def check_n_digits(n_digits, name='n_digits', above=True):
    """The number of decimals: an int from 0 to :data:`MAX_DIGITS`; None
    means :data:`MAX_DIGITS`, and so does a larger int unless ``above``
    is False (0.1.2's API took them; the command line refuses them).  A
    ValueError otherwise."""
    if n_digits is None:
        return MAX_DIGITS
    if isinstance(n_digits, bool) or not isinstance(
            n_digits, numbers.Integral) or (n_digits > MAX_DIGITS
                                            and not above):
        raise ValueError('{} must be an int from 0 to {}, got {!r}'.format(
            name, MAX_DIGITS, n_digits))
    if n_digits < 0:
        raise ValueError('{} must not be negative, got {}'.format(
            name, n_digits))
    return min(int(n_digits), MAX_DIGITS)


def check_columns(columns, available):
    """Raise ValueError unless ``columns`` is a non-empty list of names
    from ``available``."""
    if isinstance(columns, str) or not isinstance(
            columns, collections.abc.Sequence) or not columns:
        raise ValueError('columns must be a non-empty list of column names '
                         'from {}, got {!r}'.format(list(available), columns))
    unknown = [c for c in columns if c not in available]
    if unknown:
        raise ValueError('unknown column(s) {}; available columns are '
                         '{}'.format(unknown, list(available)))
    return list(columns)


def check_depth(depth):
    """Raise ValueError unless ``depth`` is None or a non-negative int."""
    if depth is None:
        return None
    if isinstance(depth, bool) or not isinstance(depth, numbers.Integral) \
            or depth < 0:
        raise ValueError('depth must be None or an int >= 0, got '
                         '{!r}'.format(depth))
    return int(depth)


# Units

def _prefix_for(value, base):
    """Largest prefix whose scale does not exceed ``abs(value)``."""
    chosen = ''
    for i, prefix in enumerate(PREFIXES):
        if abs(value) >= base ** i:
            chosen = prefix
    return chosen


def _base(column):
    return 1024 if column in BYTE_METRICS or column in MEMORY_BYTES else 1000


#: Columns scaled by the unit prefix (counts of FLOPs and bytes).
SCALED = METRICS + ('peak_flops', 'bandwidth', 'comm_bytes') + \
    MEMORY_BYTES


def _column_prefixes(rows, columns, unit):
    """Prefix per scaled column: one fixed prefix, or for 'autoaligned'
    the prefix of the column's largest value; None means per cell."""
    prefixes = {}
    for c in columns:
        if c not in SCALED:
            continue
        if unit == 'auto':
            prefixes[c] = None
        elif unit == 'autoaligned':
            largest = max((abs(r[c]) for r in rows
                           if isinstance(r.get(c), (int, float))),
                          default=0)
            prefixes[c] = _prefix_for(largest, _base(c))
        else:
            prefixes[c] = unit or ''
    return prefixes


_TITLES = {
    'name': 'Layer name', 'type': 'Layer type', 'n_layers': '# Layers',
    'flops%': 'FLOPs\n(%)', 'mread%': 'MemRead\n(%)',
    'mwrite%': 'MemWrite\n(%)', 'mrw%': 'MemR+W\n(%)',
    'input_shapes': 'Input shapes', 'output_shapes': 'Output shapes',
    'params': 'Function parameters', 'traceback': 'Traceback',
    'phase': 'Phase', 'link': 'Link', 'n_params': '# Params',
    'n_calls': '# Calls', 'intensity': 'Intensity\nFLOP/B',
    'bound': 'Bound', 'peak_used': 'Peak used', 'efficiency': 'Efficiency',
    'workers': 'Workers', 'efficiency_overlap': 'Efficiency\n(overlap)',
    'samples_per_s': 'Samples/s', 'rank': 'Rank',
    'slowest_rank': 'Slowest\nrank',
    'layer': 'Layer', 'batch': 'Batch',
}
_TIME_TITLES = {'time': 'Time', 't_compute': 'T compute',
                't_memory': 'T memory', 't_roofline': 'T roofline',
                't_serial': 'T serial', 't_network': 'T network',
                't_allreduce': 'T allreduce', 't_step': 'T step',
                't_step_overlap': 'T step\n(overlap)'}
_METRIC_TITLES = {'mread': 'MemRead', 'mwrite': 'MemWrite',
                  'mrw': 'MemR+W', 'live': 'Live', 'bytes': 'Bytes',
                  'activations': 'Activations', 'gradients': 'Gradients',
                  'comm_bytes': 'Comm'}
_TIME_SCALE = {'s': 1.0, 'ms': 1e3, 'us': 1e6}


def _header(column, prefix, time_unit, name_title):
    if column == 'flops':
        return (prefix or '') + 'FLOPs'
    if column == 'peak_flops':
        return 'Peak\n' + (prefix or '') + 'FLOP/s'
    if column == 'bandwidth':
        # bandwidths are decimal (GB/s), as datasheets give them
        return 'Bandwidth\n' + (prefix or '') + 'B/s'
    if column in _METRIC_TITLES:
        unit = (prefix + 'iB') if prefix else 'B'
        return _METRIC_TITLES[column] + '\n' + unit
    if column in _TIME_TITLES:
        return _TIME_TITLES[column] + '\n' + time_unit
    if column == 'name':
        return name_title
    return _TITLES[column]


def _round(value, n_digits):
    value = round(value, n_digits)
    if n_digits == 0:
        value = int(value)
    return value


def _text(number, n_digits):
    """A rounded number as a cell shows it: as ``str`` does, except that
    a float is never written in scientific notation (``str`` gives
    '8e-05' below 1e-4 and '1e+16' from 1e16 on)."""
    text = str(number)
    if 'e' in text and math.isfinite(number):
        text = '{:.{}f}'.format(number, n_digits).rstrip('0')
        if text.endswith('.'):
            text += '0'
    return text


def _number(value, n_digits):
    return _text(_round(value, n_digits), n_digits)


def _scaled(value, column, prefix, n_digits):
    """(number, suffix) of a scaled column's cell."""
    base = _base(column)
    if prefix is None:  # unit='auto': a prefix per cell
        p = _prefix_for(value, base)
        scaled = value / base ** PREFIXES.index(p) if p else value
        suffix = p + ('i' if p and base == 1024 else '')
        return _round(scaled, n_digits), suffix
    if not prefix:
        return _round(value, n_digits), ''
    return _round(value / base ** PREFIXES.index(prefix), n_digits), ''


def _shapes_text(value):
    return str([tuple(s) if s is not None else None for s in value])


def _param_text(value):
    # An index array kept in params (GetItem) would print over many lines.
    if hasattr(value, 'shape') and hasattr(value, 'dtype'):
        return 'array(shape={}, dtype={})'.format(tuple(value.shape),
                                                  value.dtype)
    if isinstance(value, (list, tuple)):
        items = [_param_text(v) for v in value]
        if isinstance(value, tuple):
            return '(' + ', '.join(items) + (',)' if len(items) == 1
                                             else ')')
        return '[' + ', '.join(items) + ']'
    return str(value)


def _params_text(value):
    return ', '.join('{}={}'.format(k, _param_text(v))
                     for k, v in value.items())


def _formatter(column, prefix, n_digits, time_unit):
    """The function turning a column's values into cell text (chosen once
    per column: a report may have 100k rows)."""
    if column in SCALED:
        if prefix is None:  # unit='auto': a prefix per cell
            def auto(value):
                number, suffix = _scaled(value, column, None, n_digits)
                return _text(number, n_digits) + suffix
            return _skip_none(auto)
        scale = _base(column) ** PREFIXES.index(prefix or '')
        if scale == 1:
            return _skip_none(lambda v: str(v) if type(v) is int
                              else _number(v, n_digits))
        return _skip_none(lambda v: _number(v / scale, n_digits))
    if column in TIME_COLUMNS:
        factor = _TIME_SCALE[time_unit]
        return _skip_none(lambda v: _number(v * factor, n_digits))
    if column in PERCENTS:
        return _skip_none(lambda v: _number(v, n_digits) + '%')
    if column == 'params':
        return _skip_none(_params_text)
    if column in ('input_shapes', 'output_shapes'):
        return _skip_none(_shapes_text)
    return _skip_none(lambda v: _number(v, n_digits)
                      if isinstance(v, float) else str(v))


def _skip_none(text):
    """``text`` for values, '' for None (a cell the row has no value for).
    """
    def cell(value):
        return '' if value is None else text(value)
    return cell


def table_cells(rows, columns, unit='autoaligned', n_digits=3,
                time_unit='ms', name_title='Layer name'):
    """Header and body cells of a report: a list of lists of str.

    The first list holds the headers (a newline between title and unit);
    ``rows`` are report entries (the total row included).  A cell a row has
    no value for is empty.
    """
    prefixes = _column_prefixes(rows, columns, unit)
    header = [_header(c, prefixes.get(c), time_unit, name_title)
              for c in columns]
    formats = [(c, _formatter(c, prefixes.get(c), n_digits, time_unit))
               for c in columns]
    body = [[f(r.get(c)) for c, f in formats] for r in rows]
    return [header] + body


def render_csv(cells):
    """Comma-separated text; fields holding commas or quotes are quoted."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator='\n')
    writer.writerow([h.replace('\n', ' ') for h in cells[0]])
    writer.writerows(cells[1:])
    return buf.getvalue()


def _md_cell(text):
    # A newline or a bare '|' would break the table's row.
    return text.replace('\\', '\\\\').replace('|', '\\|').replace(
        '\r\n', '<br>').replace('\n', '<br>')


def render_md(cells):
    """A markdown table; cells are escaped so that each row stays one."""
    def line(row):
        return '|' + '|'.join(_md_cell(c) for c in row) + '|\n'
    header = [h.replace('\n', ' ') for h in cells[0]]
    rule = '|' + '|'.join(':----' for _ in header) + '|\n'
    return line(header) + rule + ''.join(line(r) for r in cells[1:])


def render_table(cells):
    """A text table drawn by texttable (an optional dependency)."""
    try:
        import texttable
    except ImportError:
        raise ImportError("mode='table' needs the texttable package: "
                          'pip install texttable')
    table = texttable.Texttable(max_width=0)
    table.set_cols_dtype(['t'] * len(cells[0]))
    table.header(cells[0])
    table.add_rows(cells[1:], header=False)
    return table.draw() + '\n'


def _json_value(row, column, prefix, n_digits, time_unit):
    value = row.get(column)
    if value is None:
        return None
    if column in SCALED:
        value, _ = _scaled(value, column, prefix, n_digits)
    elif column in TIME_COLUMNS:
        value = _round(value * _TIME_SCALE[time_unit], n_digits)
    elif isinstance(value, float):
        value = _round(value, n_digits) if math.isfinite(value) else None
    elif column in ('input_shapes', 'output_shapes'):
        return [list(s) if s is not None else None for s in value]
    elif column == 'params':
        return _json_param(value)
    # A number column's infinity or NaN has no JSON number: null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


#: Non-finite floats inside params (such as F.clip's bounds), as the
#: strings float() reads back: strict JSON has no number for them.
_NON_FINITE = {math.inf: 'Infinity', -math.inf: '-Infinity'}


def _json_param(value):
    """A params value as strict JSON data: mappings with their keys as text
    (as csv and md show them), sequences as lists, numbers (NumPy's too)
    as numbers, non-finite floats as 'Infinity', '-Infinity' or 'NaN',
    other objects as their text."""
    if isinstance(value, collections.abc.Mapping):
        return {k if isinstance(k, str) else _safe_text(k): _json_param(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_param(v) for v in value]
    if value is None or isinstance(value, (bool, str)):
        return value
    # NumPy scalars too: numbers stay numbers.
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return value if math.isfinite(value) else _NON_FINITE.get(
            value, 'NaN')
    return _safe_text(value)


def render_json(rows, columns, unit, n_digits, time_unit):
    """A JSON document: ``units`` (the unit of each scaled column), and
    ``rows``, a list of objects whose numbers stay numbers (scaled by the
    unit, rounded to ``n_digits``).  With ``unit='auto'`` each value is
    scaled by its own prefix, given in ``<column>_unit``."""
    prefixes = _column_prefixes(rows, columns, unit)
    units = {}
    for c in columns:
        if c in SCALED and prefixes.get(c) is not None:
            units[c] = _unit_name(c, prefixes[c])
        elif c in TIME_COLUMNS:
            units[c] = time_unit
    out_rows = []
    for r in rows:
        obj = collections.OrderedDict()
        for c in columns:
            obj[c] = _json_value(r, c, prefixes.get(c), n_digits, time_unit)
            if c in SCALED and prefixes.get(c) is None \
                    and r.get(c) is not None:
                obj[c + '_unit'] = _unit_name(
                    c, _prefix_for(r[c], _base(c)))
        out_rows.append(obj)
    # allow_nan=False: a value with no strict-JSON form raises here rather
    # than writing Infinity or NaN (RFC 8259 has neither).
    return json.dumps({'units': units, 'rows': out_rows}, indent=1,
                      allow_nan=False) + '\n'


def _unit_name(column, prefix):
    if column in BYTE_METRICS or column in MEMORY_BYTES:
        return (prefix + 'iB') if prefix else 'B'
    if column == 'bandwidth':
        return (prefix or '') + 'B/s'
    if column == 'peak_flops':
        return prefix + 'FLOP/s'
    return prefix + 'FLOPs'


_RENDERERS = {'csv': render_csv, 'md': render_md, 'table': render_table}


def render(rows, columns, mode='csv', unit='autoaligned', n_digits=3,
           time_unit='ms', name_title='Layer name'):
    """Render report rows as text in ``mode``; arguments are validated."""
    mode = check_mode(mode)
    unit = check_unit(unit)
    n_digits = check_n_digits(n_digits)
    time_unit = check_time_unit(time_unit)
    if mode == 'json':
        return render_json(rows, columns, unit, n_digits, time_unit)
    return _RENDERERS[mode](table_cells(rows, columns, unit, n_digits,
                                        time_unit, name_title))


# Records: what the hook stores per call, one flat tuple.  The projection
# builds records of the same layout.

(R_TYPE, R_FLOPS, R_MREAD, R_MWRITE, R_PARAMS, R_N_IN, R_SHAPES, R_ERROR,
 R_STACK, R_PHASE, R_LINK, R_DTYPE, R_TIME) = range(13)
# With memory=True: the bytes alive after the call, and the part of them
# backward calls created (None otherwise).
R_LIVE, R_GRAD = 13, 14


class SavedStack(tuple):
    """A stack as plain data that pickles: ``(filename, line, function)``
    per frame, outermost first.  A record holds an interned node ``(code,
    lasti, parent)`` while it is recorded (code objects do not pickle); it
    becomes one of these when the records are saved (:func:`saved_records`).
    """

    __slots__ = ()


def stack_frames(node):
    """``(filename, line, function)`` of each frame of a stack (an interned
    node, a :class:`SavedStack` or None), outermost first."""
    if type(node) is SavedStack:
        return list(node)
    frames = []
    while node is not None:
        code, lasti, node = node
        frames.append((code.co_filename, _line_of(code, lasti),
                       code.co_name))
    frames.reverse()
    return frames


def saved_records(records):
    """``records`` with every stack a :class:`SavedStack` (a record whose
    stack is shared keeps sharing it): records that can be pickled."""
    saved = {}
    out = []
    for r in records:
        stack = r[R_STACK]
        if type(stack) is not SavedStack and stack is not None:
            new = saved.get(id(stack))
            if new is None:
                new = saved[id(stack)] = SavedStack(stack_frames(stack))
            r = r[:R_STACK] + (new,) + r[R_STACK + 1:]
        out.append(r)
    return out


def format_stack(node):
    """Text of a stack (see :func:`stack_frames`), outermost frame first (as
    Python prints a traceback), ending at the last frame of the user's code:
    the frames of Chainer and of this package a call goes through after it
    tell nothing about where it was made (all of them are kept when no
    frame is the user's)."""
    frames = stack_frames(node)
    end = len(frames)
    while end and is_library_file(frames[end - 1][0]):
        end -= 1
    if end:
        frames = frames[:end]
    return ''.join(traceback.format_list(
        [traceback.FrameSummary(*f) for f in frames]))


def _is_under(path, directory):
    return path == directory or path.startswith(directory + os.sep)


@functools.lru_cache(maxsize=None)
def is_library_file(filename):
    """Whether a frame's file belongs to Python, Chainer, NumPy or this
    package rather than to the user's code."""
    if filename.startswith('<frozen'):
        return True
    import chainer
    import numpy
    path = os.path.abspath(filename)
    libraries = [_PACKAGE_DIR] + [
        os.path.dirname(os.path.abspath(m.__file__)) for m in (chainer, numpy)]
    if any(_is_under(path, d) for d in libraries):
        return True
    paths = sysconfig.get_paths()
    # Some distributions keep site-packages inside the standard library's
    # directory; a user's installed package there is still user code.
    installed = (paths['purelib'], paths['platlib'])
    if any(_is_under(path, os.path.abspath(d)) for d in installed):
        return False
    return any(_is_under(path, os.path.abspath(paths[k]))
               for k in ('stdlib', 'platstdlib'))


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _line_of(code, lasti):
    line = code.co_firstlineno
    for start, end, lineno in code.co_lines():
        if start <= lasti < end:
            return lineno if lineno is not None else line
        if lineno is not None and start <= lasti:
            line = lineno
    return line


def _safe_text(obj):
    """``str(obj)``, or a placeholder when its ``__str__`` raises."""
    try:
        return str(obj)
    except Exception:
        return '<unprintable {} object>'.format(type(obj).__name__)


def error_text(e):
    """'Type: message' of an exception, never raising."""
    return '{}: {}'.format(type(e).__name__, _safe_text(e))


class ReportWarning(UserWarning):
    """Warnings of chainer_computational_cost: functions ignored, cost
    calculators that failed, empty reports.  Filter them by this class."""


class CostReport(object):
    """The reading API shared by everything that holds cost records.

    A subclass provides ``_records()`` (the list of record tuples, see
    ``R_*``, which only grows) and ``_link_info()`` (path ->
    ``(n_calls, n_params)``).  Reports are built once per change of the
    records (the length of the list) and handed out as fresh copies.
    """

    def _records(self):
        raise NotImplementedError

    def _link_info(self):
        return {}

    def _memory_state(self):
        # Figures of live memory not in the records (at exit, parameters):
        # None when memory was not followed.
        return None

    def _cache_key(self):
        return len(self._records())

    def _comm_bytes_of(self):
        """Record index -> bytes that call handed to MPI (ChainerMN); a
        record not in it moved none."""
        return {}

    def _built(self):
        """The cached building blocks: numbered layer dicts (costed) and
        ignored ones, rebuilt when the records change."""
        key = self._cache_key()
        cache = getattr(self, '_report_cache', None)
        if cache is not None and cache[0] == key:
            return cache[1]
        records = list(self._records())
        comm_bytes = self._comm_bytes_of()
        tracebacks = {}
        counts = {}
        layers = []
        ignored = collections.OrderedDict()
        for i, r in enumerate(records):
            k = counts.get(r[R_TYPE], 0) + 1
            counts[r[R_TYPE]] = k
            name = '{}-{}'.format(r[R_TYPE], k)
            stack = r[R_STACK]
            tb = tracebacks.get(id(stack))
            if tb is None:
                tb = tracebacks[id(stack)] = format_stack(stack)
            n_in = r[R_N_IN]
            shapes = r[R_SHAPES]
            d = {'name': name, 'type': r[R_TYPE], 'traceback': tb,
                 'input_shapes': list(shapes[:n_in]),
                 'output_shapes': list(shapes[n_in:])}
            live = r[R_LIVE] if len(r) > R_LIVE else None
            if r[R_PARAMS] is None:
                if r[R_ERROR] is not None:
                    d['error'] = r[R_ERROR]
                d['phase'] = r[R_PHASE]
                d['link'] = r[R_LINK]
                if live is not None:
                    d['live'] = live
                del d['name']
                ignored[name] = d
                continue
            d.update(flops=r[R_FLOPS], mread=r[R_MREAD], mwrite=r[R_MWRITE],
                     params=r[R_PARAMS], phase=r[R_PHASE], link=r[R_LINK])
            if r[R_TIME] is not None:
                d['time'] = r[R_TIME]
            if live is not None:
                d['live'] = live
            d['dtype'] = r[R_DTYPE].name if r[R_DTYPE] is not None else None
            d['comm_bytes'] = comm_bytes.get(i, 0)
            layers.append(d)
        info = self._link_info()
        # The model's parameter count, when a link was called at all.
        n_params = info['/'][1] if '/' in info else None
        built = {'layers': layers, 'ignored': ignored, 'n_params': n_params,
                 'link_info': info}
        self._report_cache = (key, built)
        return built

    def _cached(self, name):
        """The report ``name`` of :data:`_BUILDERS`, built once per change
        of the records (not a copy: hand out FreshDicts of it)."""
        built = self._built()
        value = built.get(name)
        if value is None:
            # A plain dict: FreshDict(...) then copies it at C speed.
            value = built[name] = dict(_BUILDERS[name](built))
        return value

    # The reports

    @property
    def layer_report(self):
        """Ordered dict layer name -> costs of that call; last 'total'."""
        return FreshDict(self._cached('layer'))

    @property
    def summary_report(self):
        """Ordered dict layer type -> summed costs; last 'total'."""
        return FreshDict(self._cached('summary'))

    def summary_report_by_phase(self):
        """Ordered dict '<phase>/<type>' -> summed costs, forward types
        first; last 'total'."""
        return FreshDict(self._cached('summary_phase'))

    @property
    def total_report(self):
        """Total costs of every call recorded (and the model's parameter
        count, ``n_params``, when links were observed)."""
        return fresh(self._cached('total'))

    @property
    def phase_report(self):
        """Ordered dict ``forward``, ``backward``, ``total``."""
        return FreshDict(self._cached('phase'))

    @property
    def link_report(self):
        """Ordered dict link path -> costs of the link and everything it
        called, every level of the tree; last 'total'."""
        return FreshDict(self._cached('link'))

    @property
    def ignored_layers(self):
        """Ordered dict layer name -> calls that could not be costed."""
        return FreshDict(self._cached('ignored'))

    # Rendering

    def show_report(self, ost=None, mode='csv', unit='autoaligned',
                    columns=ReportColumns.DEFAULT, n_digits=3,
                    time_unit='ms'):
        """Write the per-layer report to ``ost``.

        Args:
            ost: a writable text stream (default: ``sys.stdout``).
            mode (str): ``'csv'``, ``'md'``, ``'table'`` or ``'json'``.
            unit: ``None``/``''``/``'raw'`` (raw numbers), ``'K'``,
                ``'M'``, ``'G'``, ``'T'``, ``'autoaligned'`` (a prefix per
                column) or ``'auto'`` (a prefix per cell); any case.
            columns (list): names from ``ReportColumns`` or
                :data:`LAYER_COLUMNS`.
            n_digits (int): decimals, 0 to 10 (None means 10).
            time_unit (str): ``'s'``, ``'ms'`` or ``'us'`` for ``time``.
        """
        columns = check_columns(columns, LAYER_COLUMNS)
        self._show(ost, lambda: list(self._cached('layer').values()),
                   columns, mode, unit, n_digits, time_unit)

    def show_summary_report(self, ost=None, mode='csv',
                            unit='autoaligned',
                            columns=SummaryColumns.DEFAULT, n_digits=3,
                            by_phase=False, time_unit='ms'):
        """Write the per-type summary to ``ost`` (see :meth:`show_report`).

        With ``by_phase=True`` the types are split by phase (forward
        first), with a ``phase`` column in front.
        """
        columns = check_columns(columns, SUMMARY_COLUMNS)
        if by_phase and 'phase' not in columns:
            columns = ['phase'] + columns
        key = 'summary_phase' if by_phase else 'summary'
        self._show(ost, lambda: list(self._cached(key).values()), columns,
                   mode, unit, n_digits, time_unit, 'Layer type')

    def show_phase_report(self, ost=None, mode='csv', unit='autoaligned',
                          columns=PhaseColumns.DEFAULT, n_digits=3,
                          time_unit='ms'):
        """Write the forward / backward / total report to ``ost``."""
        columns = check_columns(columns, PHASE_COLUMNS)
        self._show(ost, lambda: list(self._cached('phase').values()),
                   columns, mode, unit, n_digits, time_unit, 'Phase')

    def show_link_report(self, ost=None, mode='csv', unit='autoaligned',
                         columns=LinkColumns.DEFAULT, n_digits=3,
                         depth=None, time_unit='ms'):
        """Write the per-link tree to ``ost`` (see :meth:`show_report`).

        ``depth`` keeps the links at most that many levels below the root
        (their descendants' costs stay in them); in ``table`` and ``md``
        modes names are indented by depth.
        """
        columns = check_columns(columns, LINK_COLUMNS)
        depth = check_depth(depth)
        indent = check_mode(mode) in ('table', 'md')

        def rows():
            report = self._cached('link')
            out = [r for r in report.values() if r['name'] == 'total'
                   or depth is None or _depth(r['name']) <= depth]
            # The total row is every report's (no n_calls); shown beside
            # the links, its link columns are the root's.
            root = report['/']
            out[-1] = dict(out[-1], n_params=root['n_params'],
                           n_calls=root['n_calls'])
            if indent:
                out = [dict(r, name=_indented(r['name'])) for r in out]
            return out
        self._show(ost, rows, columns, mode, unit, n_digits, time_unit,
                   'Link')

    def snapshot(self):
        """A frozen copy of these reports that can be pickled (a live hook
        cannot): a :class:`ReportSnapshot` with the same reading API,
        unchanged by later calls."""
        return ReportSnapshot(self._records(), self._link_info(),
                              getattr(self, 'fma_1flop', None),
                              self._memory_state(), self._comm_bytes_of())

    # From cost to time: the roofline module computes, this only reads.

    def roofline_report(self, device=None, peak_flops=None, bandwidth=None,
                        network=None):
        """Ordered dict layer name -> the time the layer needs on a device
        at best (see :mod:`chainer_computational_cost.roofline`); last
        'total'.  With ``network`` (see :mod:`~chainer_computational_cost.
        network`), rows also get ``comm_bytes`` and ``t_network``."""
        return FreshDict(self._roofline_rows(device, peak_flops, bandwidth,
                                             network))

    def _roofline_rows(self, device, peak_flops, bandwidth, network):
        from chainer_computational_cost import roofline
        layers = self._built()['layers']
        rows = roofline.roofline_report(layers, device, peak_flops,
                                        bandwidth)
        if network is not None:
            from chainer_computational_cost import network as net
            net.add_t_network(rows, layers, network)
        return rows

    def show_roofline_report(self, ost=None, mode='csv', unit='autoaligned',
                             columns=None, n_digits=3, time_unit='us',
                             device=None, peak_flops=None, bandwidth=None,
                             network=None):
        """Write the roofline report to ``ost`` (see :meth:`show_report`;
        ``time_unit`` is ``'s'``, ``'ms'`` or ``'us'``; with ``network``,
        ``comm_bytes`` and ``t_network`` columns too)."""
        from chainer_computational_cost import roofline
        rows = self._roofline_rows(device, peak_flops, bandwidth, network)
        available = roofline.ROOFLINE_COLUMNS
        if network is not None:
            available += ('comm_bytes', 't_network')
        if columns is None:  # with measured times, their columns too
            columns = roofline.default_columns(rows)
            if network is not None:
                columns += ['comm_bytes', 't_network']
        columns = check_columns(columns, available)
        self._show(ost, lambda: list(rows.values()), columns, mode, unit,
                   n_digits, time_unit)

    def scaling_report(self, workers, device=None, network=None,
                       peak_flops=None, bandwidth=None, batch_size=None,
                       grad_bytes=None):
        """Ordered dict N -> one data-parallel training step on N workers
        (see :func:`chainer_computational_cost.network.scaling_report`):
        the records must hold one training step (forward and backward) of
        one worker, on ``device`` (or ``peak_flops`` and ``bandwidth``),
        over ``network``.  ``batch_size`` (samples per worker) defaults to
        the projection's, else the first dimension of the first input."""
        from chainer_computational_cost import network as net
        if network is None:
            raise ValueError('scaling_report needs a network: one of {}'
                             .format(', '.join(repr(n)
                                               for n in net.NETWORKS)))
        net.resolve_network(network)
        net._check_workers(workers)
        built = self._built()
        rows = self._roofline_rows(device, peak_flops, bandwidth, None)
        if batch_size is None:
            batch_size = getattr(self, 'batch_size', None)
        if batch_size is None:
            shapes = [s for x in built['layers'] if x.get('phase') ==
                      'forward' for s in x['input_shapes'] if s]
            batch_size = shapes[0][0] if shapes else None
        return net.scaling_report(built['layers'], rows,
                                  built['n_params'], workers, network,
                                  batch_size, grad_bytes)

    def show_scaling_report(self, workers, ost=None, mode='csv',
                            device=None, network=None, peak_flops=None,
                            bandwidth=None, batch_size=None,
                            grad_bytes=None, columns=None, n_digits=3,
                            time_unit='ms', unit='autoaligned'):
        """Write the scaling report to ``ost`` (see :meth:`show_report`)."""
        from chainer_computational_cost import network as net
        columns = check_columns(columns or list(net.SCALING_COLUMNS),
                                net.SCALING_COLUMNS)
        rows = self.scaling_report(workers, device, network, peak_flops,
                                   bandwidth, batch_size, grad_bytes)
        self._show(ost, lambda: list(rows.values()), columns, mode, unit,
                   n_digits, time_unit, 'Workers')

    def plot_roofline(self, path, device=None, peak_flops=None,
                      bandwidth=None, **kwargs):
        """Write a roofline plot of every layer to the file ``path`` (PNG,
        SVG, PDF, EPS or PS, as its extension says; needs matplotlib: the
        ``[plot]`` extra); returns the figure.  ``title`` and ``dpi`` may
        be given."""
        from chainer_computational_cost import plots
        return plots.plot_roofline(self._built()['layers'], path, device,
                                   peak_flops, bandwidth, **kwargs)

    def plot_summary(self, path, **kwargs):
        """Write bars of FLOPs and memory traffic per layer type to the file
        ``path`` (PNG, SVG, PDF, EPS or PS, as its extension says; needs
        matplotlib: the ``[plot]`` extra); returns the figure.  ``title``
        and ``dpi`` may be given."""
        from chainer_computational_cost import plots
        return plots.plot_summary(list(self.summary_report.values()), path,
                                  **kwargs)

    # Live memory: the memory module computes, this only reads.

    @property
    def memory_report(self):
        """Ordered dict of the run's live memory: ``peak`` (bytes),
        ``peak_layer``, its split into ``activations`` and ``gradients``,
        ``at_exit``, ``params`` (see
        :func:`chainer_computational_cost.memory.memory_report`); needs
        ``ComputationalCostHook(memory=True)``."""
        from chainer_computational_cost import memory
        return memory.memory_report(self)

    def show_memory_report(self, ost=None, mode='csv', unit='autoaligned',
                           n_digits=3, columns=None):
        """Write the memory report to ``ost``: rows peak, at exit and
        parameters, columns ``name, bytes, activations, gradients, layer``
        (see :meth:`show_report` for the arguments)."""
        from chainer_computational_cost import memory
        columns = check_columns(columns or memory.MEMORY_COLUMNS,
                                memory.MEMORY_COLUMNS)
        figures = memory.memory_report(self)
        self._show(ost, lambda: memory.memory_rows(figures), columns, mode,
                   unit, n_digits, 'ms', 'Memory')

    def plot_memory(self, path, **kwargs):
        """Write the bytes alive after each call, forward and backward
        shaded, the peak marked, to the PNG file ``path`` (needs
        matplotlib: the ``[plot]`` extra); returns the figure.  ``title``
        and ``dpi`` may be given."""
        from chainer_computational_cost import memory
        from chainer_computational_cost import plots
        figures = memory.memory_report(self)
        return plots.plot_memory(memory.live_series(self), figures, path,
                                 **kwargs)

    def _show(self, ost, rows, columns, mode, unit, n_digits, time_unit,
              name_title='Layer name'):
        if ost is None:
            ost = sys.stdout
        if not callable(getattr(ost, 'write', None)):
            raise TypeError('ost must be a writable text stream, got '
                            '{!r}'.format(ost))
        # Validate everything before building anything.
        check_mode(mode)
        check_unit(unit)
        check_n_digits(n_digits)
        check_time_unit(time_unit)
        if not self._built()['layers']:
            warnings.warn('nothing has been recorded yet: no report to '
                          'show', ReportWarning, stacklevel=3)
            return
        ost.write(render(rows(), columns, mode, unit, n_digits, time_unit,
                         name_title))


class ReportSnapshot(CostReport):
    """The reports of a hook or a projection as they were when
    :meth:`CostReport.snapshot` was called, with the same reading API
    (``layer_report``, ``summary_report``, ``total_report``,
    ``phase_report``, ``link_report``, ``ignored_layers``, the ``show_*``
    methods, ``roofline_report``, ``memory_report``, the plots); it
    pickles, tracebacks included (as text of the frames' files, lines and
    functions).
    """

    def __init__(self, records, link_info, fma_1flop=None,
                 memory_state=None, comm_bytes=None):
        self._saved = list(records)
        self._links = dict(link_info)
        self.fma_1flop = fma_1flop
        self._memory = memory_state
        self._comm = dict(comm_bytes or {})

    def _records(self):
        return self._saved

    def _link_info(self):
        return self._links

    def _memory_state(self):
        return self._memory

    def _comm_bytes_of(self):
        return self._comm

    def __reduce__(self):
        return (ReportSnapshot, (saved_records(self._saved), self._links,
                                 self.fma_1flop, self._memory, self._comm))


#: How each cached report is built from the building blocks of
#: ``CostReport._built``.
_BUILDERS = {
    'layer': lambda b: layer_report(b['layers'], b['n_params']),
    'summary': lambda b: summary_report(b['layers'], b['n_params']),
    'summary_phase': lambda b: summary_report(b['layers'], b['n_params'],
                                              by_phase=True),
    'total': lambda b: total_report(b['layers'], b['n_params']),
    'phase': lambda b: phase_report(b['layers'], b['n_params']),
    'link': lambda b: link_report(b['layers'], b['link_info']),
    'ignored': lambda b: b['ignored'],
}


def _indented(path):
    """A link's own name, indented by its depth (two non-breaking spaces a
    level: markdown and texttable keep them, unlike plain spaces)."""
    if path in ('/', 'total'):
        return path
    return '\u00a0\u00a0' * _depth(path) + path.rsplit('/', 1)[1]
