"""Report rows to text: argument checks, units and prefixes, the formatting
of numbers and cells, headers, and the csv, md, table and json renderers.

Pure functions of rows (lists of dicts) and column names: they know
nothing of records or reports, so that
:mod:`~chainer_computational_cost.report.plots`,
:mod:`~chainer_computational_cost.run.fit` and the command line use
them without importing the reports.  It imports
:mod:`~chainer_computational_cost.core.columns` and, for two helpers on text
and link paths, :mod:`~chainer_computational_cost.core.records`.
"""

import collections
import collections.abc
import csv
import decimal
import io
import json
import math
import numbers

import numpy

from chainer_computational_cost.core import checks
from chainer_computational_cost.core.columns import (
    BYTE_METRICS, FLOP_COLUMNS, MAX_DIGITS, MEMORY_BYTES, MODES, PERCENTS,
    PREFIXES, SCALED, TIME_COLUMNS, TIME_UNITS)
from chainer_computational_cost.core.records import link_depth, safe_text


# Argument checking: every show_* argument is checked before anything is
# rendered, so bad input never produces partial output.  The command line
# calls the same checks with its option names, so both accept the same
# values and say the same things about the rest.


def choice(value, allowed, name, also=''):
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
    return choice(mode, MODES, name)


#: Spellings of raw numbers besides None (any case).
RAW_UNITS = ('', 'raw', 'none')


def check_unit(unit, name='unit'):
    """The unit ``unit`` names (any case: ``'g'`` is ``'G'``,
    ``'AUTO'`` is ``'auto'``): None for raw numbers (None, '', 'raw',
    'none'), else one of
    :data:`~chainer_computational_cost.core.columns.UNITS`;
    a ValueError otherwise."""
    if unit is None:
        return None
    allowed = ('raw',) + PREFIXES[1:] + ('autoaligned', 'auto')
    if isinstance(unit, str) and unit.lower() in RAW_UNITS:
        return None
    return choice(unit, allowed, name, ' (any case) or None')


def check_time_unit(time_unit, name='time_unit'):
    """The unit of :data:`TIME_UNITS` that ``time_unit`` names (any
    case), or a ValueError."""
    return choice(time_unit, TIME_UNITS, name)


def check_n_digits(n_digits, name='n_digits', above=True):
    """The number of decimals: an int from 0 to :data:`MAX_DIGITS`; None
    means :data:`MAX_DIGITS`, and so does a larger int unless ``above``
    is False (0.1.2's API took them; the command line refuses them).  An
    ArgumentTypeError (a TypeError) for a value that is no int, a
    ValueError for one out of range."""
    if n_digits is None:
        return MAX_DIGITS
    allowed = 'an int from 0 to {}'.format(MAX_DIGITS)
    n_digits = checks.integer(name, n_digits, 0, allowed)
    if n_digits > MAX_DIGITS and not above:
        raise ValueError('{} must be {}, got {!r}'.format(
            name, allowed, n_digits))
    return min(n_digits, MAX_DIGITS)


def check_columns(columns, available, default=None):
    """``columns`` as a list: a non-empty list of names from
    ``available``, each once; None means ``default`` (when given).  An
    ArgumentTypeError (a TypeError) for a value that is no list of names,
    a ValueError for an empty list or a name not allowed.  An empty list
    is refused everywhere, never read as the default: a report of no
    columns is a mistake, and every show_* method reads it the same."""
    if columns is None and default is not None:
        columns = default
    allowed = 'a non-empty list of column names from {}'.format(
        list(available))
    if isinstance(columns, (str, bytes, bytearray)) or not isinstance(
            columns, collections.abc.Sequence):
        raise checks.ArgumentTypeError('columns must be {}, got {!r}'.format(
            allowed, columns))
    if not columns:
        raise ValueError('columns must be {}, got {!r}'.format(
            allowed, columns))
    unknown = [c for c in columns if c not in available]
    if unknown:
        raise ValueError('unknown column(s) {}; available columns are '
                         '{}'.format(unknown, list(available)))
    columns = list(columns)
    repeated = sorted({c for c in columns if columns.count(c) > 1},
                      key=columns.index)
    if repeated:
        # md would show the column twice, json once (a key is a key)
        raise ValueError('columns {!r} names {} more than once: each column '
                         'is shown once'.format(
                             columns, ', '.join(map(repr, repeated))))
    return columns


def check_depth(depth):
    """``depth`` as an int >= 0, or None; an ArgumentTypeError (a
    TypeError) for a value that is no int, a ValueError for a negative
    one."""
    if depth is None:
        return None
    return checks.integer('depth', depth, 0, 'None or an int >= 0')


# Units

def prefix_for(value, base):
    """Largest prefix whose scale does not exceed ``abs(value)``."""
    chosen = ''
    for i, prefix in enumerate(PREFIXES):
        if abs(value) >= base ** i:
            chosen = prefix
    return chosen


def _base(column):
    return 1024 if column in BYTE_METRICS or column in MEMORY_BYTES else 1000


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
            prefixes[c] = prefix_for(largest, _base(c))
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
    'n_buckets': '# Buckets', 'step_from': 'Step from',
    'family': 'Family', 'n_flagged': '# Flagged', 'flag': 'Flag',
    'anchored': 'Anchored',
}
_TIME_TITLES = {'time': 'Time', 't_compute': 'T compute',
                't_memory': 'T memory', 't_roofline': 'T roofline',
                't_serial': 'T serial', 't_network': 'T network',
                't_allreduce': 'T allreduce', 't_step': 'T step',
                't_step_overlap': 'T step\n(overlap)',
                't_exposed_comm': 'T exposed\ncomm', 't_jitter': 'T jitter',
                't_call': 'T call', 't_predicted': 'T predicted',
                't_contention': 'T contention',
                't_negotiation': 'T negotiation'}
_METRIC_TITLES = {'mread': 'MemRead', 'mwrite': 'MemWrite',
                  'mrw': 'MemR+W', 'live': 'Live', 'bytes': 'Bytes',
                  'activations': 'Activations', 'gradients': 'Gradients',
                  'scratch': 'Scratch',
                  'comm_bytes': 'Comm'}
_TIME_SCALE = {'s': 1.0, 'ms': 1e3, 'us': 1e6}

#: The last line of the header of each column of
#: :data:`~chainer_computational_cost.core.columns.FLOP_COLUMNS` when a
#: multiply-add counts as 2 FLOPs (``fma_1flop=False``; with
#: ``flop_convention='torch'``, in the matrix layers): the reports' default
#: is 1, so figures of the other conventions say so.
FMA_2FLOPS_LABEL = '(2 per multiply-add)'
#: The field of a JSON report that names that convention:
#: ``"flops_per_multiply_add": 2`` (only then).
FMA_FIELD = 'flops_per_multiply_add'


def _header(column, prefix, time_unit, name_title):
    if column == 'flops':
        return (prefix or '') + 'FLOPs'
    if column == 'peak_flops':
        return 'Peak\n' + (prefix or '') + 'FLOP/s'
    if column == 'bandwidth':
        # bandwidths are decimal (GB/s), as datasheets give them
        return 'Bandwidth\n' + (prefix or '') + 'B/s'
    if column == 'bus_bandwidth':
        return 'Bus bandwidth\n' + (prefix or '') + 'B/s'
    if column in _METRIC_TITLES:
        unit = (prefix + 'iB') if prefix else 'B'
        return _METRIC_TITLES[column] + '\n' + unit
    if column in _TIME_TITLES:
        return _TIME_TITLES[column] + '\n' + time_unit
    if column == 'name':
        return name_title
    return _TITLES[column]


def _round(value, n_digits):
    if n_digits is None:  # json's n_digits=None: the figure as it is
        return value
    value = round(value, n_digits)
    if n_digits == 0:
        value = int(value)
    return value


def _round_unitless(value, n_digits):
    """A float of no unit (an efficiency, an intensity) to ``n_digits``
    decimals, except that one which is not 0 but would round to 0 keeps
    that many significant digits (one at least): no unit can be chosen
    to show it, so it never shows as 0.  A figure in a unit (bytes,
    seconds, FLOPs, percent) rounds as the unit's decimals say."""
    rounded = _round(value, n_digits)
    if rounded == 0 and value != 0 and math.isfinite(value):
        return float('{:.{}g}'.format(value, max(n_digits, 1)))
    return rounded


def _text(number, n_digits):
    """A rounded number as a cell shows it: as ``str`` does, except that
    a float is written in scientific notation (``str`` gives '8e-05'
    below 1e-4 and '1e+16' from 1e16 on) only when its decimals would
    show it as 0 (see :func:`_round_unitless`)."""
    text = str(number)
    if 'e' in text and math.isfinite(number):
        # (from 1e16 on, the float's own digits, then zeros: its binary
        # expansion, 2999999999999999764984758272 for 3e27, is no figure)
        fixed = '{:.{}f}'.format(
            decimal.Decimal(text) if abs(number) >= 1e16 else number,
            n_digits)
        if '.' in fixed:
            fixed = fixed.rstrip('0')
            if fixed.endswith('.'):
                fixed += '0'
        if float(fixed) != 0 or number == 0:
            text = fixed
    return text


def _number(value, n_digits):
    return _text(_round(value, n_digits), n_digits)


def _scaled(value, column, prefix, n_digits):
    """(number, suffix) of a scaled column's cell."""
    base = _base(column)
    if prefix is None:  # unit='auto': a prefix per cell
        p = prefix_for(value, base)
        i = PREFIXES.index(p)
        scaled = _round(value / base ** i if p else value, n_digits)
        if abs(scaled) >= base and i + 1 < len(PREFIXES):
            # rounded up to a whole next prefix: 999,999 to 0 decimals is
            # 1M, not 1000K
            i += 1
            scaled = _round(value / base ** i, n_digits)
        p = PREFIXES[i]
        suffix = p + ('i' if p and base == 1024 else '')
        return scaled, suffix
    if not prefix:
        return _round(value, n_digits), ''
    return _round(value / base ** PREFIXES.index(prefix), n_digits), ''


def _shapes_text(value):
    return str([tuple(s) if s is not None else None for s in value])


def _array_text(value):
    """``'array(shape=(3,), dtype=int64)'`` for an array (NumPy's, CuPy's:
    anything with a shape and a dtype that is not a NumPy scalar), else
    None.  An index array kept in params (GetItem) would print over many
    lines, or abridged with '...': every mode shows this instead."""
    if isinstance(value, numpy.generic) or not (
            hasattr(value, 'shape') and hasattr(value, 'dtype')):
        return None
    return 'array(shape={}, dtype={})'.format(tuple(value.shape),
                                              value.dtype)


def _param_text(value):
    if isinstance(value, numpy.generic):
        # A NumPy scalar is its number (or bool), as in JSON (json_param).
        return str(value.item())
    array = _array_text(value)
    if array is not None:
        return array
    if isinstance(value, (list, tuple)):
        items = [_param_text(v) for v in value]
        if isinstance(value, tuple):
            return '(' + ', '.join(items) + (',)' if len(items) == 1
                                             else ')')
        return '[' + ', '.join(items) + ']'
    # A user's object whose __str__ raises shows as json_param shows it.
    return safe_text(value)


def _params_text(value):
    return ', '.join('{}={}'.format(safe_text(k), _param_text(v))
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
        return _skip_none(lambda v: _number(_in_time_unit(v, factor),
                                            n_digits))
    if column in PERCENTS:
        return _skip_none(lambda v: _number(v, n_digits) + '%')
    if column == 'params':
        return _skip_none(_params_text)
    if column in ('input_shapes', 'output_shapes'):
        return _skip_none(_shapes_text)
    return _skip_none(lambda v: _text(_round_unitless(v, n_digits),
                                      n_digits)
                      if isinstance(v, float) else str(v))


def _in_time_unit(seconds, factor):
    """``seconds`` times ``factor`` (of :data:`_TIME_SCALE`: in its time
    unit); OverflowError where a finite time leaves a float's range there
    (1e308 s in ms)."""
    value = seconds * factor
    if math.isinf(value) and math.isfinite(seconds):
        raise OverflowError(seconds)
    return value


def _skip_none(text):
    """``text`` for values, '' for None (a cell the row has no value for).
    """
    def cell(value):
        return '' if value is None else text(value)
    return cell


def table_cells(rows, columns, unit='autoaligned', n_digits=3,
                time_unit='ms', name_title='Layer name', fma_1flop=True):
    """Header and body cells of a report: a list of lists of str.

    The first list holds the headers (a newline between title and unit);
    ``rows`` are report entries (the total row included).  A cell a row has
    no value for is empty.  With ``fma_1flop=False`` (the figures count a
    multiply-add as 2 FLOPs) the headers of the FLOP columns end with
    :data:`FMA_2FLOPS_LABEL`.
    """
    prefixes = _column_prefixes(rows, columns, unit)
    header = [_header(c, prefixes.get(c), time_unit, name_title)
              for c in columns]
    if not fma_1flop:
        header = [h + '\n' + FMA_2FLOPS_LABEL if c in FLOP_COLUMNS else h
                  for c, h in zip(columns, header)]
    formats = [(c, _formatter(c, prefixes.get(c), n_digits, time_unit))
               for c in columns]
    try:
        body = [[f(r.get(c)) for c, f in formats] for r in rows]
    except OverflowError:
        texts = dict(formats)
        raise _too_big(rows, columns, lambda r, c: texts[c](r.get(c)),
                       unit, time_unit) from None
    return [header] + body


def _too_big(rows, columns, cell, unit, time_unit):
    """The ValueError of the first figure of ``rows`` that ``cell(row,
    column)`` cannot scale to a float in ``unit`` (an exact int of a
    projection to a huge batch, see docs/projection.md) or, a time, in
    ``time_unit``."""
    larger = ' or a larger unit' if unit in PREFIXES[1:-1] else ''
    for r in rows:
        for c in columns:
            try:
                cell(r, c)
            except OverflowError:
                if c in TIME_COLUMNS:
                    row = 'the row of {} workers'.format(r['workers']) \
                        if r.get('name') is None and 'workers' in r \
                        else 'row {!r}'.format(r.get('name'))
                    return ValueError(
                        "{}: its {} ({!r} s) is beyond a float's range in "
                        "{}: show the report in seconds (time_unit='s', "
                        "--time-unit s)".format(row, c, r[c], time_unit))
                return ValueError(
                    "row {!r}: its {} (a {}-digit figure) is beyond a "
                    "float's range in unit {!r}: show the report with "
                    "unit=None (the exact figures){}".format(
                        r.get('name'), c, len(str(abs(r[c]))), unit,
                        larger))
    return ValueError("a figure is beyond a float's range in unit "
                      '{!r}'.format(unit))


def render_csv(cells):
    """Comma-separated text; fields holding commas, quotes or line breaks
    (a lone carriage return too) are quoted."""
    rows = [[h.replace('\n', ' ') for h in cells[0]]] + cells[1:]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator='\n')
    writer.writerows(rows)
    text = buf.getvalue()
    if '\r' not in text:
        return text
    # The csv module quotes only the characters of its line terminator: a
    # row with a '\r' goes through a writer ending lines with '\r\n',
    # whose last two characters are then the row's '\n'.
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator='\n')
    cr_buf = io.StringIO()
    cr_writer = csv.writer(cr_buf, lineterminator='\r\n')
    for row in rows:
        if any('\r' in field for field in row):
            cr_buf.seek(0)
            cr_buf.truncate()
            cr_writer.writerow(row)
            buf.write(cr_buf.getvalue()[:-2] + '\n')
        else:
            writer.writerow(row)
    return buf.getvalue()


def _md_cell(text):
    # A line ending or a bare '|' would break the table's row; a lone
    # carriage return is a line ending too (CommonMark spec, "line ending").
    cell = text.replace('\\', '\\\\').replace('|', '\\|').replace(
        '\r\n', '<br>').replace('\n', '<br>').replace('\r', '<br>')
    if cell.endswith('\\'):
        # A backslash before the next '|' escapes it, however many there
        # are (GFM's and markdown-it's row split look one back): the last
        # as a character reference
        cell = cell[:-2] + '&#92;'
    return cell


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
        value = _round(_in_time_unit(value, _TIME_SCALE[time_unit]),
                       n_digits)
    elif isinstance(value, float):
        # a percent is a unit: it rounds as the table's cells do
        rounding = _round if column in PERCENTS else _round_unitless
        value = rounding(value, n_digits) if math.isfinite(value) else None
    elif column in ('input_shapes', 'output_shapes'):
        return [list(s) if s is not None else None for s in value]
    elif column == 'params':
        return json_param(value)
    # A number column's infinity or NaN has no JSON number: null.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


#: Non-finite floats inside params (such as F.clip's bounds), as the
#: strings float() reads back: strict JSON has no number for them.
_NON_FINITE = {math.inf: 'Infinity', -math.inf: '-Infinity'}


def json_param(value):
    """A params value as strict JSON data: mappings with their keys as text
    (as csv and md show them), sequences as lists, numbers (NumPy's too)
    as numbers, non-finite floats as 'Infinity', '-Infinity' or 'NaN',
    arrays as ``'array(shape=..., dtype=...)'`` and other objects as
    their text, as csv and md show them."""
    if isinstance(value, collections.abc.Mapping):
        return {k if isinstance(k, str) else safe_text(k): json_param(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_param(v) for v in value]
    if value is None or isinstance(value, (bool, str)):
        return value
    # NumPy scalars too: numbers stay numbers.
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return value if math.isfinite(value) else _NON_FINITE.get(
            value, 'NaN')
    array = _array_text(value)
    return safe_text(value) if array is None else array


def render_json(rows, columns, unit, n_digits, time_unit, fma_1flop=True):
    """A JSON document: ``units`` (the unit of each scaled column), and
    ``rows``, a list of objects whose numbers stay numbers (scaled by the
    unit, rounded to ``n_digits``).  With ``unit='auto'`` each value is
    scaled by its own prefix, given in ``<column>_unit``.  With
    ``fma_1flop=False`` and a FLOP column, first
    ``"flops_per_multiply_add": 2`` (see :data:`FMA_FIELD`)."""
    prefixes = _column_prefixes(rows, columns, unit)
    units = {}
    for c in columns:
        if c in SCALED and prefixes.get(c) is not None:
            units[c] = _unit_name(c, prefixes[c])
        elif c in TIME_COLUMNS:
            units[c] = time_unit
    out_rows = []
    try:
        for r in rows:
            obj = collections.OrderedDict()
            for c in columns:
                obj[c] = _json_value(r, c, prefixes.get(c), n_digits,
                                     time_unit)
                if c in SCALED and prefixes.get(c) is None \
                        and r.get(c) is not None:
                    obj[c + '_unit'] = _unit_name(
                        c, prefix_for(r[c], _base(c)))
            out_rows.append(obj)
    except OverflowError:
        raise _too_big(rows, columns, lambda r, c: _json_value(
            r, c, prefixes.get(c), n_digits, time_unit), unit,
            time_unit) from None
    doc = collections.OrderedDict()
    if not fma_1flop and set(columns) & set(FLOP_COLUMNS):
        doc[FMA_FIELD] = 2
    doc['units'] = units
    doc['rows'] = out_rows
    # allow_nan=False: a value with no strict-JSON form raises here rather
    # than writing Infinity or NaN (RFC 8259 has neither).
    return json.dumps(doc, indent=1, allow_nan=False) + '\n'


def _unit_name(column, prefix):
    if column in BYTE_METRICS or column in MEMORY_BYTES:
        return (prefix + 'iB') if prefix else 'B'
    if column in ('bandwidth', 'bus_bandwidth'):
        return (prefix or '') + 'B/s'
    if column == 'peak_flops':
        return prefix + 'FLOP/s'
    return prefix + 'FLOPs'


_RENDERERS = {'csv': render_csv, 'md': render_md, 'table': render_table}


def encodable(text, encoding):
    """``text`` as a stream in ``encoding`` can write it: unchanged when it
    can (or when ``encoding`` is None or unknown), else with the link
    report's non-breaking spaces as spaces and any other character it
    cannot encode escaped (an ASCII terminal: ``\\xe9``)."""
    if not encoding:
        return text
    try:
        text.encode(encoding)
        return text
    except UnicodeEncodeError:
        text = text.replace('\u00a0', ' ')
        return text.encode(encoding, 'backslashreplace').decode(encoding)
    except LookupError:
        return text


def _escaped_cell(text, encoding):
    # escaped before texttable measures it, so that the columns stay
    # aligned; the indentation's non-breaking spaces are kept (texttable
    # strips plain ones) and become spaces once the table is drawn
    return '\u00a0'.join(encodable(part, encoding)
                         for part in text.split('\u00a0'))


def render(rows, columns, mode='csv', unit='autoaligned', n_digits=3,
           time_unit='ms', name_title='Layer name', fma_1flop=True,
           encoding=None):
    """Render report rows as text in ``mode``; arguments are validated.
    ``fma_1flop=False``: the figures count a multiply-add as 2 FLOPs,
    and the FLOP columns' headers (the JSON document) say so.  With the
    ``encoding`` of the stream it goes to, the text is made
    :func:`encodable` (a text table's columns aligned as escaped)."""
    fma_1flop = checks.flag('fma_1flop', fma_1flop)
    mode = check_mode(mode)
    unit = check_unit(unit)
    # In json, None is no rounding (a script wants the figures as they
    # are); a text table has a width, so None is MAX_DIGITS there.
    if mode != 'json' or n_digits is not None:
        n_digits = check_n_digits(n_digits)
    time_unit = check_time_unit(time_unit)
    if mode == 'json':  # (ASCII: json.dumps escapes the rest)
        return render_json(rows, columns, unit, n_digits, time_unit,
                           fma_1flop)
    cells = table_cells(rows, columns, unit, n_digits, time_unit,
                        name_title, fma_1flop)
    if mode == 'table' and encoding:
        cells = [[_escaped_cell(c, encoding) for c in row] for row in cells]
    return encodable(_RENDERERS[mode](cells), encoding)


def indented(path):
    """A link's own name, indented by its depth (two non-breaking spaces a
    level: markdown and texttable keep them, unlike plain spaces)."""
    if path in ('/', 'total'):
        return path
    return '\u00a0\u00a0' * link_depth(path) + path.rsplit('/', 1)[1]
