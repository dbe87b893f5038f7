"""Column names and sets of the reports, and the constants of their units
and modes.

The lowest layer of the package: it imports nothing of it.  Which column
scales by which prefix, which holds seconds, and which columns each report
kind can show are decided here;
:mod:`~chainer_computational_cost.report.rendering` turns them into text
and :mod:`~chainer_computational_cost.report.cost_report` picks them per
report.
"""

#: Metrics that are summed into totals and get a percentage column.
METRICS = ('flops', 'mread', 'mwrite', 'mrw')
PERCENTS = tuple(m + '%' for m in METRICS)
#: Columns whose figures depend on how a multiply-add is counted
#: (``fma_1flop``): FLOPs, their share and FLOPs per byte.  The hook and
#: the command line count it as 1 FLOP by default (0.1.2's convention);
#: figures counted with 2 (``fma_1flop=False``, ``--no-fma``) say so.
FLOP_COLUMNS = ('flops', 'flops%', 'intensity')
#: Metrics counted in bytes (scaled by 1024).
BYTE_METRICS = ('mread', 'mwrite', 'mrw', 'comm_bytes')
#: Columns of bytes alive (``ComputationalCostHook(memory=True)``): the
#: layer column ``live`` and the columns of the memory reports.
MEMORY_BYTES = ('live', 'bytes', 'activations', 'gradients', 'scratch')
#: Columns holding seconds (scaled by the time unit).
TIME_COLUMNS = ('time', 't_compute', 't_memory', 't_roofline', 't_serial',
                't_network', 't_allreduce', 't_step', 't_step_overlap',
                't_exposed_comm', 't_jitter', 't_call', 't_predicted',
                't_contention', 't_negotiation')
#: The phases of a training step, in report order (``update``: what an
#: optimizer's update does to the parameters).
PHASES = ('forward', 'backward', 'update')


# Each report's default columns, as tuples, which nothing can change.
# The lists of the ``*Columns`` classes are copies of them, so that a list
# changed in place (``cols = ReportColumns.DEFAULT; cols += [...]``)
# changes what is passed with it, never a report's default.

#: The layer report's default columns (``ReportColumns.DEFAULT``).
LAYER_DEFAULT = ('name',) + METRICS
#: The summary's default columns (``SummaryColumns.DEFAULT``).
SUMMARY_DEFAULT = ('type', 'n_layers') + METRICS
#: The link report's default columns (``LinkColumns.DEFAULT``).
LINK_DEFAULT = ('name', 'n_params', 'n_calls', 'n_layers') + METRICS
#: The phase report's default columns (``PhaseColumns.DEFAULT``).
PHASE_DEFAULT = ('name', 'n_layers') + METRICS


class ReportColumns(object):
    """Predefined column sets for ``show_report``."""

    DEFAULT = list(LAYER_DEFAULT)
    DEFAULT_AND_PERCENT = DEFAULT + list(PERCENTS)
    ALL = DEFAULT_AND_PERCENT + ['input_shapes', 'output_shapes', 'params']


class SummaryColumns(object):
    """Predefined column sets for ``show_summary_report``."""

    DEFAULT = list(SUMMARY_DEFAULT)
    ALL = DEFAULT + list(PERCENTS)


class LinkColumns(object):
    """Predefined column sets for ``show_link_report``."""

    DEFAULT = list(LINK_DEFAULT)
    ALL = DEFAULT + list(PERCENTS)


class PhaseColumns(object):
    """Predefined column sets for ``show_phase_report``."""

    DEFAULT = list(PHASE_DEFAULT)
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


#: The time report's default columns (``TimeColumns.DEFAULT``).
TIME_DEFAULT = ('name', 'n_layers', 't_predicted', 't_roofline', 'time',
                'n_flagged')


class TimeColumns(object):
    """Predefined column sets for ``show_time_report`` (a calibration's
    predicted times)."""

    DEFAULT = list(TIME_DEFAULT)
    #: DEFAULT, the time inside the calls and the flag of each call.
    ALL = ['name', 'type', 'phase', 'link', 'family', 'n_layers', 't_call',
           't_predicted', 't_roofline', 'time', 'n_flagged', 'flag']


#: Columns a time report can show; its groupings (``by``).
TIME_REPORT_COLUMNS = tuple(TimeColumns.ALL)
TIME_BY = ('layer', 'type', 'link', 'phase')
#: The time report's columns of one call, which a row of a grouped
#: report (``by`` other than 'layer', a group named in its ``name``) has
#: not.
TIME_CALL_COLUMNS = ('type', 'phase', 'link', 'family', 'flag')


def empty_time_column(column, by):
    """Why ``column`` is empty in every row of a time report grouped
    ``by`` (in lower case), or None."""
    if by == 'layer' or column not in TIME_CALL_COLUMNS:
        return None
    return ('the rows of a time report by {} are groups of calls, each '
            'named in its name column; {} and {} are columns of one call '
            '(by layer)'.format(by, ', '.join(TIME_CALL_COLUMNS[:-1]),
                                TIME_CALL_COLUMNS[-1]))


#: The output formats of every ``show_*`` method (``mode``).
MODES = ('csv', 'md', 'table', 'json')
#: Unit prefixes, 1000 (FLOPs) or 1024 (bytes) apart.
PREFIXES = ('', 'K', 'M', 'G', 'T')
#: The values of ``unit``: raw numbers, one prefix, or chosen per column
#: or per cell.
UNITS = (None, '', 'raw') + PREFIXES[1:] + ('autoaligned', 'auto')
#: The values of ``time_unit``.
TIME_UNITS = ('s', 'ms', 'us')
#: The most decimals ``n_digits`` gives.
MAX_DIGITS = 10

#: Columns scaled by the unit prefix (counts of FLOPs and bytes).
SCALED = METRICS + ('peak_flops', 'bandwidth', 'bus_bandwidth',
                    'comm_bytes') + \
    MEMORY_BYTES


#: The roofline report's default columns (``RooflineColumns.DEFAULT``).
ROOFLINE_DEFAULT = ('name', 'flops', 'mrw', 'intensity', 'peak_used',
                    't_compute', 't_memory', 't_roofline', 'bound')
#: The roofline report's default columns with measured times
#: (``RooflineColumns.TIMED``).
ROOFLINE_TIMED = ROOFLINE_DEFAULT + ('time', 'efficiency')


class RooflineColumns(object):
    """Predefined column sets for ``show_roofline_report``."""

    DEFAULT = list(ROOFLINE_DEFAULT)
    #: DEFAULT and the measured time with the efficiency it gives.
    TIMED = list(ROOFLINE_TIMED)
    ALL = ['name', 'type', 'flops', 'mread', 'mwrite', 'mrw', 'intensity',
           'peak_flops', 'peak_used', 'bandwidth', 't_compute', 't_memory',
           't_roofline', 't_serial', 'bound', 'time', 'efficiency']


#: Columns a roofline report can show.
ROOFLINE_COLUMNS = tuple(RooflineColumns.ALL)
