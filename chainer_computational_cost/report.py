"""Aggregation and rendering of computational cost records.

Everything here is a pure function: records in, dictionaries or text out.
The hook owns the records; ``show_*`` methods only write what these
functions return.
"""

import collections
import collections.abc
import csv
import io
import numbers

#: Metrics that are summed into totals and get a percentage column.
METRICS = ('flops', 'mread', 'mwrite', 'mrw')
PERCENTS = tuple(m + '%' for m in METRICS)


class ReportColumns(object):
    """Predefined column sets for ``show_report``."""

    DEFAULT = ['name', 'flops', 'mread', 'mwrite', 'mrw']
    DEFAULT_AND_PERCENT = DEFAULT + list(PERCENTS)
    ALL = DEFAULT_AND_PERCENT + ['input_shapes', 'output_shapes', 'params']


class SummaryColumns(object):
    """Predefined column sets for ``show_summary_report``."""

    DEFAULT = ['type', 'n_layers', 'flops', 'mread', 'mwrite', 'mrw']
    ALL = DEFAULT + list(PERCENTS)


#: Columns each report kind can show.
LAYER_COLUMNS = ('name', 'type') + METRICS + PERCENTS + (
    'input_shapes', 'output_shapes', 'params', 'traceback')
SUMMARY_COLUMNS = ('type', 'name', 'n_layers') + METRICS + PERCENTS

MODES = ('csv', 'md', 'table')
PREFIXES = ('', 'K', 'M', 'G', 'T')
UNITS = (None, '') + PREFIXES[1:] + ('autoaligned', 'auto')
MAX_DIGITS = 10


# Aggregation

def _percentages(entry, total):
    for m in METRICS:
        entry[m + '%'] = 100.0 * entry[m] / total[m] if total[m] else 0.0
    return entry


def total_report(layers):
    """Sum of every layer's costs.

    ``layers`` is an iterable of dicts with at least the keys of
    :data:`METRICS` except ``mrw``.
    """
    total = {'name': 'total', 'type': 'total', 'n_layers': 0,
             'flops': 0, 'mread': 0, 'mwrite': 0}
    for layer in layers:
        total['n_layers'] += 1
        for m in ('flops', 'mread', 'mwrite'):
            total[m] += layer[m]
    total['mrw'] = total['mread'] + total['mwrite']
    return total


def layer_report(layers):
    """Ordered dict layer name -> record with percentages, then 'total'.

    ``layers`` is a sequence of dicts with keys ``name, type, flops, mread,
    mwrite, traceback, input_shapes, output_shapes, params``.
    """
    total = total_report(layers)
    report = collections.OrderedDict()
    for layer in layers:
        entry = collections.OrderedDict(
            (k, layer[k]) for k in ('name', 'type', 'flops', 'mread',
                                    'mwrite'))
        entry['mrw'] = layer['mread'] + layer['mwrite']
        for k in ('traceback', 'input_shapes', 'output_shapes', 'params'):
            entry[k] = layer[k]
        report[layer['name']] = _percentages(entry, total)
    tot = collections.OrderedDict(
        (k, total[k]) for k in ('name', 'type') + METRICS)
    for k in ('traceback', 'input_shapes', 'output_shapes', 'params'):
        tot[k] = None
    report['total'] = _percentages(tot, total)
    return report


def summary_report(layers):
    """Ordered dict layer type -> summed costs, in order of first call,
    then 'total'."""
    total = total_report(layers)
    report = collections.OrderedDict()
    for layer in layers:
        entry = report.get(layer['type'])
        if entry is None:
            entry = report[layer['type']] = collections.OrderedDict(
                [('type', layer['type']), ('name', layer['type']),
                 ('n_layers', 0), ('flops', 0), ('mread', 0),
                 ('mwrite', 0), ('mrw', 0)])
        entry['n_layers'] += 1
        for m in ('flops', 'mread', 'mwrite'):
            entry[m] += layer[m]
        entry['mrw'] = entry['mread'] + entry['mwrite']
    for entry in report.values():
        _percentages(entry, total)
    tot = collections.OrderedDict(
        (k, total[k]) for k in ('type', 'name', 'n_layers') + METRICS)
    report['total'] = _percentages(tot, total)
    return report


# Argument checking: every show_* argument is checked before anything is
# rendered, so bad input never produces partial output.

def check_mode(mode):
    """Raise ValueError unless ``mode`` is one of :data:`MODES`."""
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError('mode must be one of {}, got {!r}'.format(
            ', '.join(repr(m) for m in MODES), mode))
    return mode


def check_unit(unit):
    """Raise ValueError unless ``unit`` is one of :data:`UNITS`."""
    if unit is not None and (not isinstance(unit, str) or unit not in UNITS):
        raise ValueError('unit must be one of {}, got {!r}'.format(
            ', '.join(repr(u) for u in UNITS), unit))
    return unit or None


def check_n_digits(n_digits):
    """Validated number of decimals: None or more than 10 mean 10."""
    if n_digits is None:
        return MAX_DIGITS
    if isinstance(n_digits, bool) or not isinstance(n_digits,
                                                    numbers.Integral):
        raise ValueError('n_digits must be an int from 0 to {} or None, '
                         'got {!r}'.format(MAX_DIGITS, n_digits))
    if n_digits < 0:
        raise ValueError('n_digits must not be negative, got {}'.format(
            n_digits))
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


# Units

def _prefix_for(value, base):
    """Largest prefix whose scale does not exceed ``abs(value)``."""
    chosen = ''
    for i, prefix in enumerate(PREFIXES):
        if abs(value) >= base ** i:
            chosen = prefix
    return chosen


def _base(column):
    return 1024 if column in ('mread', 'mwrite', 'mrw') else 1000


def _column_prefixes(rows, columns, unit):
    """Prefix per metric column: one fixed prefix, or for 'autoaligned'
    the prefix of the column's largest value; None means per cell."""
    prefixes = {}
    for c in columns:
        if c not in METRICS:
            continue
        if unit == 'auto':
            prefixes[c] = None
        elif unit == 'autoaligned':
            largest = max((abs(r[c]) for r in rows), default=0)
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
}
_METRIC_TITLES = {'mread': 'MemRead', 'mwrite': 'MemWrite',
                  'mrw': 'MemR+W'}


def _header(column, prefix):
    if column == 'flops':
        return (prefix or '') + 'FLOPs'
    if column in _METRIC_TITLES:
        unit = (prefix + 'iB') if prefix else 'B'
        return _METRIC_TITLES[column] + '\n' + unit
    return _TITLES[column]


def _number(value, n_digits):
    value = round(value, n_digits)
    if n_digits == 0:
        value = int(value)
    return str(value)


def _cell(row, column, prefix, n_digits):
    value = row.get(column)
    if value is None:
        return ''
    if column in METRICS:
        base = _base(column)
        if prefix is None:  # unit='auto': a prefix per cell
            p = _prefix_for(value, base)
            scaled = value / base ** PREFIXES.index(p) if p else value
            suffix = p + ('i' if p and base == 1024 else '')
            return _number(scaled, n_digits) + suffix
        if not prefix:
            return _number(value, n_digits)
        return _number(value / base ** PREFIXES.index(prefix), n_digits)
    if column in PERCENTS:
        return _number(value, n_digits) + '%'
    if column == 'params':
        return ', '.join('{}={}'.format(k, v) for k, v in value.items())
    if column in ('input_shapes', 'output_shapes'):
        return str([tuple(s) if s is not None else None for s in value])
    return str(value)


def table_cells(rows, columns, unit='autoaligned', n_digits=3):
    """Header and body cells of a report: a list of lists of str.

    The first list holds the headers (a newline between title and unit);
    ``rows`` are report entries as returned by :func:`layer_report` or
    :func:`summary_report` (the total row included).
    """
    prefixes = _column_prefixes(rows, columns, unit)
    header = [_header(c, prefixes.get(c)) for c in columns]
    body = [[_cell(r, c, prefixes.get(c), n_digits) for c in columns]
            for r in rows]
    return [header] + body


def render_csv(cells):
    """Comma-separated text; fields holding commas or quotes are quoted."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator='\n')
    writer.writerow([h.replace('\n', ' ') for h in cells[0]])
    writer.writerows(cells[1:])
    return buf.getvalue()


def render_md(cells):
    """A markdown table."""
    def line(row):
        return '|' + '|'.join(c.replace('|', '\\|') for c in row) + '|\n'
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


_RENDERERS = {'csv': render_csv, 'md': render_md, 'table': render_table}


def render(rows, columns, mode='csv', unit='autoaligned', n_digits=3):
    """Render report rows as text in ``mode``; arguments are validated."""
    mode = check_mode(mode)
    unit = check_unit(unit)
    n_digits = check_n_digits(n_digits)
    return _RENDERERS[mode](table_cells(rows, columns, unit, n_digits))
