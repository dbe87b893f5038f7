"""The reading API of cost records: :class:`CostReport`.

Whatever holds records (the hook, a batch projection, a snapshot, the
gathered reports of ChainerMN) inherits :class:`CostReport` and provides
``records()``; every report is built once per change of the records and
handed out as a fresh copy.  The concerns it reads through live in their
own modules, below this one:

* :mod:`~chainer_computational_cost.core.columns`: column names and sets;
* :mod:`~chainer_computational_cost.core.records`: the record type, stacks,
  fresh copies, the warning class;
* :mod:`~chainer_computational_cost.analysis.aggregation`: totals and the
  layer, summary, phase and link reports (pure functions);
* :mod:`~chainer_computational_cost.report.rendering`: argument checks, number
  formatting and the csv, md, table and json renderers;
* :mod:`~chainer_computational_cost.analysis.roofline`,
  :mod:`~chainer_computational_cost.analysis.network`,
  :mod:`~chainer_computational_cost.analysis.memory`,
  :mod:`~chainer_computational_cost.report.plots`: time, communication, live
  memory and pictures.

The column sets, the aggregation functions, ``render`` and
``ReportWarning`` are importable from here too, as code written for
earlier versions imports them (and the ``R_*`` indices of the record
fields from the ``report`` package, which reads them from
:mod:`~chainer_computational_cost.core.records`).
"""

import collections
import math
import sys
import warnings

from chainer_computational_cost.analysis import calibration as calib
from chainer_computational_cost.analysis import memory
from chainer_computational_cost.analysis import network as net
from chainer_computational_cost.analysis import roofline
from chainer_computational_cost.analysis.aggregation import layer_report
from chainer_computational_cost.analysis.aggregation import link_report
from chainer_computational_cost.analysis.aggregation import phase_report
from chainer_computational_cost.analysis.aggregation import summary_report
from chainer_computational_cost.analysis.aggregation import total_report
from chainer_computational_cost.core import checks
from chainer_computational_cost.core import devices
from chainer_computational_cost.core.columns import LAYER_COLUMNS
from chainer_computational_cost.core.columns import LAYER_DEFAULT
from chainer_computational_cost.core.columns import LINK_COLUMNS
from chainer_computational_cost.core.columns import LINK_DEFAULT
from chainer_computational_cost.core.columns import PHASE_COLUMNS
from chainer_computational_cost.core.columns import PHASE_DEFAULT
from chainer_computational_cost.core.columns import ROOFLINE_COLUMNS
from chainer_computational_cost.core.columns import SUMMARY_COLUMNS
from chainer_computational_cost.core.columns import SUMMARY_DEFAULT
from chainer_computational_cost.core.columns import TIME_BY
from chainer_computational_cost.core.columns import TIME_DEFAULT
from chainer_computational_cost.core.columns import TIME_REPORT_COLUMNS
from chainer_computational_cost.core.columns import empty_time_column
from chainer_computational_cost.core.records import format_stack
from chainer_computational_cost.core.records import fresh
from chainer_computational_cost.core.records import FreshDict
from chainer_computational_cost.core.records import MemoryState
from chainer_computational_cost.core.records import as_records
from chainer_computational_cost.core.records import link_depth
from chainer_computational_cost.core.records import outside_stacklevel
from chainer_computational_cost.core.records import ReportWarning
from chainer_computational_cost.core.records import flat_records
from chainer_computational_cost.report import plots
from chainer_computational_cost.report.rendering import check_columns
from chainer_computational_cost.report.rendering import check_depth
from chainer_computational_cost.report.rendering import check_mode
from chainer_computational_cost.report.rendering import check_n_digits
from chainer_computational_cost.report.rendering import check_time_unit
from chainer_computational_cost.report.rendering import check_unit
from chainer_computational_cost.report.rendering import indented
from chainer_computational_cost.report.rendering import render


def _roofline_overflow(layers, device):
    """The message of a roofline on a calibration's own ``device`` whose
    times overflow: the calibration's fields that make them (its measured
    ``bandwidth``, its ``gemm`` table's fastest product as the peak); None
    when the run's figures are beyond a float's range themselves."""
    flops = sum(layer['flops'] for layer in layers)
    moved = sum(layer['mread'] + layer['mwrite'] for layer in layers)
    peak = min(p for _, p in device.peaks.values())
    try:
        times = (('bandwidth', moved / device.bandwidth),
                 ('gemm', flops / peak))
    except OverflowError:  # an int a float cannot hold
        return None
    fields = [name for name, t in times
              if not math.isfinite(t * 1e6)] or ['bandwidth', 'gemm']
    return ('the calibration\'s roofline times overflow at its bandwidth {} '
            'B/s and its fastest matrix product, {} FLOP/s: its field(s) {} '
            'are too small; calibrate again, or give a device'.format(
                device.bandwidth, peak, ', '.join(fields)))


def _batch_of(layers):
    """The batch size a scaling report takes when none is given: the first
    dimension of the first input of the first forward call (None without
    one).  A ValueError when that is 0; a ReportWarning when most forward
    calls' first inputs have another (the first call reads a parameter,
    as a class token broadcast to the batch)."""
    firsts = []
    for x in layers:
        if x.get('phase') == 'forward':
            shape = next((s for s in x['input_shapes'] if s), None)
            if shape is not None:
                firsts.append((shape[0], x['name'], shape))
    if not firsts:
        return None
    batch, name, shape = firsts[0]
    where = 'the first dimension of the first input of {} {}'.format(
        name, tuple(shape))
    if batch == 0:
        raise ValueError('scaling_report needs batch_size (samples per '
                         'worker): the run\'s, {}, is 0'.format(where))
    common = collections.Counter(b for b, _, _ in firsts).most_common(1)[0]
    if common[0] not in (batch, 0):
        warnings.warn(
            'scaling_report: batch_size not given, taken as {}, {}; {} of '
            'the {} forward calls\' first inputs have {}: give '
            'batch_size={} if that is the samples per worker'.format(
                batch, where, common[1], len(firsts), common[0], common[0]),
            ReportWarning, stacklevel=outside_stacklevel(__name__))
    return batch


class CostReport(object):
    """The reading API shared by everything that holds cost records.

    A subclass (a record source) provides ``records()`` (the list of
    :class:`~chainer_computational_cost.core.records.Record`, which only
    grows) and, when it knows them, ``link_info()``, ``memory_state()``
    and ``comm_bytes_of()`` (below).  Reports are built once per change of
    the records (the length of the list) and handed out as fresh copies.
    """

    def records(self):
        """The records, in call order (a subclass's)."""
        raise NotImplementedError

    def link_info(self):
        """Link path -> ``(calls, parameters, parameter bytes)``: the
        link report's counts (none by default)."""
        return {}

    def memory_state(self):
        # Figures of live memory not in the records (at exit, parameters):
        # None when memory was not followed.
        return None

    def _cache_key(self):
        return len(self.records())

    def comm_bytes_of(self):
        """Record index -> bytes that call handed to MPI (ChainerMN); a
        record not in it moved none."""
        return {}

    def has_comm(self):
        """Whether the records come from a run with a ChainerMN
        communicator (``comm=``): every row of the reports then has
        ``comm_bytes``, 0 when nothing was sent."""
        return bool(self.comm_bytes_of())

    def _built(self):
        """The cached building blocks: numbered layer dicts (costed) and
        ignored ones, rebuilt when the records change."""
        key = self._cache_key()
        cache = getattr(self, '_report_cache', None)
        if cache is not None and cache[0] == key:
            return cache[1]
        records = as_records(self.records())
        comm_bytes = self.comm_bytes_of()
        tracebacks = {}
        counts = {}
        layers = []
        ignored = collections.OrderedDict()
        for i, r in enumerate(records):
            type_name = r.type
            k = counts.get(type_name, 0) + 1
            counts[type_name] = k
            name = '{}-{}'.format(type_name, k)
            stack = r.stack
            tb = tracebacks.get(id(stack))
            if tb is None:
                tb = tracebacks[id(stack)] = format_stack(stack)
            n_in = r.n_in
            shapes = r.shapes
            d = {'name': name, 'type': type_name, 'traceback': tb,
                 'input_shapes': list(shapes[:n_in]),
                 'output_shapes': list(shapes[n_in:])}
            live = r.live
            if r.params is None:
                if r.error is not None:
                    d['error'] = r.error
                d['phase'] = r.phase
                d['link'] = r.link
                if live is not None:
                    d['live'] = live
                del d['name']
                ignored[name] = d
                continue
            d.update(flops=r.flops, mread=r.mread, mwrite=r.mwrite,
                     params=r.params, phase=r.phase, link=r.link)
            if r.time is not None:
                d['time'] = r.time
            if live is not None:
                d['live'] = live
            d['dtype'] = r.dtype.name if r.dtype is not None else None
            d['comm_bytes'] = comm_bytes.get(i, 0)
            layers.append(d)
        info = self.link_info()
        # The model's parameter count, when a link was called or updated.
        n_params = info['/'][1] if '/' in info else None
        built = {'layers': layers, 'ignored': ignored, 'n_params': n_params,
                 'link_info': info, 'comm': self.has_comm()}
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
                    columns=None, n_digits=3, time_unit='ms'):
        """Write the per-layer report to ``ost``.

        Args:
            ost: a writable text stream (default: ``sys.stdout``).
            mode (str): ``'csv'``, ``'md'``, ``'table'`` or ``'json'``.
            unit: ``None``/``''``/``'raw'`` (raw numbers), ``'K'``,
                ``'M'``, ``'G'``, ``'T'``, ``'autoaligned'`` (a prefix per
                column) or ``'auto'`` (a prefix per cell); any case.
            columns (list): names from ``ReportColumns`` or
                :data:`LAYER_COLUMNS`; None (the default) is
                ``ReportColumns.DEFAULT``, each report's own default in
                the other ``show_*`` methods.
            n_digits (int): decimals, 0 to 10 (None: 10, but no rounding
                in json).
            time_unit (str): ``'s'``, ``'ms'`` or ``'us'`` for ``time``.
        """
        columns = check_columns(columns, LAYER_COLUMNS, LAYER_DEFAULT)
        self._show(ost, lambda: list(self._cached('layer').values()),
                   columns, mode, unit, n_digits, time_unit)

    def show_summary_report(self, ost=None, mode='csv',
                            unit='autoaligned',
                            columns=None, n_digits=3,
                            by_phase=False, time_unit='ms'):
        """Write the per-type summary to ``ost`` (see :meth:`show_report`).

        With ``by_phase=True`` the types are split by phase (forward
        first), with a ``phase`` column in front.
        """
        by_phase = checks.flag('by_phase', by_phase)
        columns = check_columns(columns, SUMMARY_COLUMNS, SUMMARY_DEFAULT)
        if by_phase and 'phase' not in columns:
            columns = ['phase'] + columns
        key = 'summary_phase' if by_phase else 'summary'
        self._show(ost, lambda: list(self._cached(key).values()), columns,
                   mode, unit, n_digits, time_unit, 'Layer type')

    def show_phase_report(self, ost=None, mode='csv', unit='autoaligned',
                          columns=None, n_digits=3,
                          time_unit='ms'):
        """Write the forward / backward / total report to ``ost``."""
        columns = check_columns(columns, PHASE_COLUMNS, PHASE_DEFAULT)
        self._show(ost, lambda: list(self._cached('phase').values()),
                   columns, mode, unit, n_digits, time_unit, 'Phase')

    def show_link_report(self, ost=None, mode='csv', unit='autoaligned',
                         columns=None, n_digits=3,
                         depth=None, time_unit='ms'):
        """Write the per-link tree to ``ost`` (see :meth:`show_report`).

        ``depth`` keeps the links at most that many levels below the root
        (their descendants' costs stay in them); in ``table`` and ``md``
        modes names are indented by depth.
        """
        columns = check_columns(columns, LINK_COLUMNS, LINK_DEFAULT)
        depth = check_depth(depth)
        indent = check_mode(mode) in ('table', 'md')

        def rows():
            report = self._cached('link')
            out = [r for r in report.values() if r['name'] == 'total'
                   or depth is None or link_depth(r['name']) <= depth]
            # The total row is every report's (no n_calls); shown beside
            # the links, its link columns are the root's.
            root = report['/']
            out[-1] = dict(out[-1], n_params=root['n_params'],
                           n_calls=root['n_calls'])
            if indent:
                out = [dict(r, name=indented(r['name'])) for r in out]
            return out
        self._show(ost, rows, columns, mode, unit, n_digits, time_unit,
                   'Link')

    def snapshot(self):
        """A frozen copy of these reports that can be pickled (a live hook
        cannot): a :class:`ReportSnapshot` with the same reading API,
        unchanged by later calls."""
        return ReportSnapshot(self.records(), self.link_info(),
                              getattr(self, 'fma_1flop', None),
                              self.memory_state(), self.comm_bytes_of(),
                              getattr(self, 'flop_convention', None),
                              self.has_comm(),
                              getattr(self, 'batch_size', None))

    # From cost to time: the roofline module computes, this only reads.

    def roofline_report(self, device=None, peak_flops=None, bandwidth=None,
                        network=None):
        """Ordered dict layer name -> the time the layer needs on a device
        at best (see :mod:`chainer_computational_cost.analysis.roofline`); last
        'total'.  With ``network`` (see
        :mod:`~chainer_computational_cost.analysis.network`), rows also get
        ``comm_bytes`` and ``t_network``."""
        return FreshDict(self._roofline_rows(device, peak_flops, bandwidth,
                                             network))

    def _roofline_rows(self, device, peak_flops, bandwidth, network):
        layers = self._built()['layers']
        rows = roofline.roofline_report(layers, device, peak_flops,
                                        bandwidth)
        if network is not None:
            net.add_t_network(rows, layers, network)
        return rows

    def show_roofline_report(self, ost=None, mode='csv', unit='autoaligned',
                             columns=None, n_digits=3, time_unit='us',
                             device=None, peak_flops=None, bandwidth=None,
                             network=None):
        """Write the roofline report to ``ost`` (see :meth:`show_report`;
        ``time_unit`` is ``'s'``, ``'ms'`` or ``'us'``; with ``network``,
        ``comm_bytes`` and ``t_network`` columns too)."""
        rows = self._roofline_rows(device, peak_flops, bandwidth, network)
        available = ROOFLINE_COLUMNS
        if network is not None:
            available += ('comm_bytes', 't_network')
        if columns is None:  # with measured times, their columns too
            columns = roofline.default_columns(rows)
            if network is not None:
                columns += ['comm_bytes', 't_network']
        columns = check_columns(columns, available)
        self._show(ost, lambda: list(rows.values()), columns, mode, unit,
                   n_digits, time_unit)

    # Predicted time: the calibration module computes, this only reads.

    def time_report(self, calibration, by='layer', device=None,
                    peak_flops=None, bandwidth=None):
        """Ordered dict name -> the time a calibration predicts, per call
        (``by='layer'``) or summed per ``'type'``, ``'link'`` or ``'phase'``;
        last 'total' (see
        :func:`chainer_computational_cost.analysis.calibration.time_report`).

        ``calibration``: a
        :class:`~chainer_computational_cost.analysis.calibration.Calibration`
        (see
        :func:`chainer_computational_cost.calibrate`) or the path of its
        JSON file.  ``t_roofline`` is the bound on
        ``device`` (or ``peak_flops`` and ``bandwidth``), by default on the
        calibration's own measured peak and bandwidth.  Calls of a type the
        calibration never ran or outside its range are flagged.  ``by``
        in any case.  A run with ``measure_time`` gives each row its
        measured ``time``, a group and the total only when every call in
        it has one: a sum that leaves out a call with no time (see the
        hook's ``clock``) would not compare with the prediction for all
        of them, as ``total_report``'s, which leaves it out, does not.
        """
        return FreshDict(self._time_rows(calibration, by, device,
                                         peak_flops, bandwidth)[1])

    def _time_rows(self, calibration, by, device, peak_flops, bandwidth):
        """``(by in lower case, the rows of time_report)``."""
        by = checks.one_of('by', by, TIME_BY, fold_case=True)
        found = calib.load_calibration(calibration)
        layers = self._built()['layers']
        if device is None and peak_flops is None and bandwidth is None:
            # the calibrated peak in the figures' convention
            own = found.device(not self._fma_as_two())
            try:
                rows = roofline.roofline_report(layers, own)
            except ValueError:
                message = _roofline_overflow(layers, own)
                if message is None:  # the run's figures, not the fields
                    raise
                raise ValueError(message) from None
        else:
            rows = roofline.roofline_report(layers, device, peak_flops,
                                            bandwidth)
        return by, calib.time_report(layers, found, rows, by)

    def show_time_report(self, calibration, ost=None, mode='csv',
                         by='layer', unit='autoaligned', columns=None,
                         n_digits=3, time_unit='ms', device=None,
                         peak_flops=None, bandwidth=None):
        """Write the predicted times of :meth:`time_report` to ``ost`` (see
        :meth:`show_report`); by default the columns of
        ``TimeColumns.DEFAULT`` (per call: ``type`` and ``flag`` too), the
        measured ``time`` when the run measured it (blank where a call got
        no time, and in the total then: see :meth:`time_report`)."""
        by, rows = self._time_rows(calibration, by, device, peak_flops,
                                   bandwidth)
        extra = self._time_columns()
        if columns is None:
            columns = list(TIME_DEFAULT)
            if by == 'layer':
                columns = ['name', 'type'] + columns[2:-1] + ['flag']
            if all(r.get('time') is None for r in rows.values()):
                columns.remove('time')
            columns += extra
        columns = check_columns(columns, TIME_REPORT_COLUMNS + extra)
        for c in columns:
            why = empty_time_column(c, by)
            if why is not None:
                raise ValueError('column {!r} would be empty: {}'.format(
                    c, why))
        title = {'layer': 'Layer name', 'type': 'Layer type',
                 'link': 'Link', 'phase': 'Phase'}[by]
        self._show(ost, lambda: list(rows.values()), columns, mode, unit,
                   n_digits, time_unit, title)

    def _time_columns(self):
        """Columns a time report shows besides a call's or a group's
        (a gathered report's ``rank``)."""
        return ()

    def scaling_report(self, workers, device=None, network=None,
                       peak_flops=None, bandwidth=None, batch_size=None,
                       grad_bytes=None, step_time=None, overlap='none',
                       bucket_bytes=None, gpus_per_node=1,
                       node_network=None, jitter=None, model='sourced',
                       cycle_time=None, measured=None, accumulation=1):
        """Ordered dict N -> one data-parallel training step on N workers
        (see
        :func:`chainer_computational_cost.analysis.network.scaling_report`):
        the records must hold one training step (forward and backward) of
        one worker, on ``device`` (or ``peak_flops`` and ``bandwidth``),
        over ``network``.  ``batch_size`` (samples per worker) defaults to
        the projection's, else the first dimension of the first input (a
        ReportWarning when most forward calls' first inputs disagree).
        The gradients have their parameters' dtypes unless the run
        recorded ChainerMN's all-reduce (see the function).  ``step_time``
        (seconds of a measured step), ``overlap`` (one of
        ``network.OVERLAPS``), ``bucket_bytes``, ``gpus_per_node``,
        ``node_network``, ``jitter``, ``model``, ``cycle_time``,
        ``measured`` and ``accumulation`` are the function's."""
        if network is None:
            # a network's name given second goes to device
            given = ' ({!r}, given as device, is a network: pass '\
                'network={!r})'.format(device, device) \
                if isinstance(device, str) and \
                device.lower() in devices.NETWORKS else ''
            raise ValueError('scaling_report needs a network{}: one of {}'
                             .format(given, ', '.join(
                                 repr(n) for n in devices.NETWORKS)))
        devices.resolve_network(network)
        workers = net.check_workers(workers)  # an iterator is read once
        batch_size = net.check_batch_size(batch_size)
        net.check_scaling_options(step_time, overlap, bucket_bytes,
                                  gpus_per_node, node_network, jitter,
                                  model, cycle_time, measured, accumulation)
        built = self._built()
        rows = self._roofline_rows(device, peak_flops, bandwidth, None)
        if batch_size is None:
            batch_size = getattr(self, 'batch_size', None)
        if batch_size is None:
            batch_size = _batch_of(built['layers'])
        root = built['link_info'].get('/', ())
        # The parameters' bytes: a third item (not in old pickles).
        param_bytes = root[2] if len(root) > 2 else None
        return net.scaling_report(
            built['layers'], rows, built['n_params'], workers, network,
            batch_size, grad_bytes, param_bytes, step_time=step_time,
            overlap=overlap, bucket_bytes=bucket_bytes,
            gpus_per_node=gpus_per_node, node_network=node_network,
            jitter=jitter, model=model, cycle_time=cycle_time,
            measured=measured, accumulation=accumulation,
            link_bytes=net.own_param_bytes(built['link_info']))

    def show_scaling_report(self, workers, ost=None, mode='csv',
                            device=None, network=None, peak_flops=None,
                            bandwidth=None, batch_size=None,
                            grad_bytes=None, columns=None, n_digits=3,
                            time_unit='ms', unit='autoaligned',
                            **options):
        """Write the scaling report to ``ost`` (see :meth:`show_report`;
        ``options``: :meth:`scaling_report`'s ``step_time``, ``overlap``,
        ``bucket_bytes``, ``gpus_per_node``, ``node_network``,
        ``jitter``, ``model``, ``cycle_time``, ``measured``,
        ``accumulation``)."""
        known = self._scaling_columns()
        columns = check_columns(columns, known, known)

        def rows():  # once every argument of the output is checked
            return list(self.scaling_report(
                workers, device, network, peak_flops, bandwidth, batch_size,
                grad_bytes, **options).values())
        self._show(ost, rows, columns, mode, unit, n_digits, time_unit,
                   'Workers')

    def _scaling_columns(self):
        """The columns of a scaling report's rows."""
        return net.SCALING_COLUMNS

    def plot_scaling(self, path, workers, device=None, network=None,
                     peak_flops=None, bandwidth=None, batch_size=None,
                     grad_bytes=None, overlaps=None, published=None,
                     title=None, dpi=100, **options):
        """Write the efficiency against the workers to the file ``path``
        (PNG, SVG, PDF, EPS or PS, as its extension says; needs
        matplotlib: the ``[plot]`` extra): one line per mode of
        ``overlaps`` (one of ``network.OVERLAPS`` or a list of them;
        default the ``overlap`` option's, else ``'none'``), and
        ``published`` points
        ``(workers, efficiency[, label])``; returns the figure.  The other
        arguments are :meth:`scaling_report`'s."""
        # before the reports: a mistake there is found at once
        plots.check_path(path)
        plots.check_dpi(dpi)
        plots.check_title(title)
        plots.check_published(published)
        if overlaps is None:
            overlaps = [options.pop('overlap', 'none')]
        elif options.get('overlap') is not None:
            # one of the two draws the curves: the other would be ignored
            raise ValueError('plot_scaling takes overlaps (the curves) or '
                             'overlap (one curve), not both: got '
                             'overlaps={!r} and overlap={!r}'.format(
                                 overlaps, options['overlap']))
        else:
            options.pop('overlap', None)
            overlaps = net.check_overlaps(overlaps)
        workers = plots.check_axis_workers(net.check_workers(workers))
        # an option no mode plotted takes is a mistake, as in
        # scaling_report (each curve drops what its mode does not take)
        for key, takers in net.MODE_OPTIONS.items():
            if options.get(key) is not None and \
                    not set(overlaps) & set(takers):
                raise ValueError('{} goes with overlaps holding {}, not '
                                 '{!r}'.format(key, ' or '.join(
                                     map(repr, takers)), list(overlaps)))
        curves = collections.OrderedDict()
        refused = []
        for mode in overlaps:
            # buckets are DDP's and Horovod's only, cycles Horovod's
            kept = {k: v for k, v in options.items()
                    if mode in net.MODE_OPTIONS.get(k, (mode,))}
            try:
                curves[mode] = self.scaling_report(
                    workers, device, network, peak_flops, bandwidth,
                    batch_size, grad_bytes, overlap=mode, **kept)
            except net.MeasuredStepError as e:
                # that mode's own cost (Horovod's cycle) exceeds the step
                # measured: its curve would have no compute
                refused.append((mode, e))
        if not curves:
            raise refused[0][1]
        for mode, e in refused:
            warnings.warn('plot_scaling: the {!r} curve is left out: '
                          '{}'.format(mode, e), ReportWarning,
                          stacklevel=outside_stacklevel(__name__))
        return plots.plot_scaling(curves, path, published, title, dpi)

    def plot_roofline(self, path, device=None, peak_flops=None,
                      bandwidth=None, **kwargs):
        """Write a roofline plot of every layer to the file ``path`` (PNG,
        SVG, PDF, EPS or PS, as its extension says; needs matplotlib: the
        ``[plot]`` extra); returns the figure.  ``title`` and ``dpi`` may
        be given."""
        return plots.plot_roofline(self._built()['layers'], path, device,
                                   peak_flops, bandwidth, **kwargs)

    def plot_summary(self, path, **kwargs):
        """Write bars of FLOPs and memory traffic per layer type to the file
        ``path`` (PNG, SVG, PDF, EPS or PS, as its extension says; needs
        matplotlib: the ``[plot]`` extra); returns the figure.  ``title``
        and ``dpi`` may be given."""
        return plots.plot_summary(list(self.summary_report.values()), path,
                                  **kwargs)

    # Live memory: the memory module computes, this only reads.

    @property
    def memory_report(self):
        """The run's live memory, an ordered dict of ``peak`` (bytes: the
        most alive during any call, its scratch included), ``peak_layer``,
        its split into ``activations``, ``gradients`` and ``scratch``,
        ``peak_between_calls``, ``at_exit``, ``params`` (see
        :func:`chainer_computational_cost.analysis.memory.memory_report`);
        needs
        ``ComputationalCostHook(memory=True)``."""
        return memory.memory_report(self)

    def show_memory_report(self, ost=None, mode='csv', unit='autoaligned',
                           n_digits=3, columns=None):
        """Write the memory report to ``ost``: rows peak, peak between
        calls, at exit and parameters, columns ``name, bytes, activations,
        gradients, scratch, layer`` (see :meth:`show_report` for the
        arguments)."""
        columns = check_columns(columns, memory.MEMORY_COLUMNS,
                                memory.MEMORY_COLUMNS)
        figures = memory.memory_report(self)
        self._show(ost, lambda: memory.memory_rows(figures), columns, mode,
                   unit, n_digits, 'ms', 'Memory')

    def plot_memory(self, path, **kwargs):
        """Write the bytes alive after each call, each call's scratch as a
        spike above them, the phases shaded, the peak and the peak between
        calls marked, to the file ``path`` (PNG, SVG, PDF, EPS or PS, as
        its extension says; needs matplotlib: the ``[plot]`` extra);
        returns the figure.  ``title`` and ``dpi`` may be given."""
        figures = memory.memory_report(self)
        return plots.plot_memory(memory.live_series(self), figures, path,
                                 **kwargs)

    def _show(self, ost, rows, columns, mode, unit, n_digits, time_unit,
              name_title='Layer name'):
        ost = checks.text_stream('ost', ost, sys.stdout)
        # Validate everything before building anything.
        check_mode(mode)
        check_unit(unit)
        check_n_digits(n_digits)
        check_time_unit(time_unit)
        built = self._built()
        if not built['layers']:
            ignored = len(built['ignored'])
            if ignored:
                warnings.warn(
                    'no call could be costed: the {} recorded call{} {} '
                    'ignored (see ignored_layers for which and why): no '
                    'report to show'.format(
                        ignored, 's' if ignored > 1 else '',
                        'were' if ignored > 1 else 'was'),
                    ReportWarning, stacklevel=3)
            else:
                warnings.warn('nothing has been recorded yet: no report to '
                              'show', ReportWarning, stacklevel=3)
            return
        # Figures that count a multiply-add as 2 FLOPs say so; what the
        # stream cannot encode is escaped
        ost.write(render(rows(), columns, mode, unit, n_digits, time_unit,
                         name_title, not self._fma_as_two(),
                         getattr(ost, 'encoding', None)))

    def _fma_as_two(self):
        """Whether the figures count a multiply-add as 2 FLOPs: all of
        them (``fma_1flop=False``) or the matrix layers', which dominate
        (``flop_convention='torch'``)."""
        return (getattr(self, 'fma_1flop', None) is False or
                getattr(self, 'flop_convention', None) is not None)


class ReportSnapshot(CostReport):
    """The reports of a hook or a projection as they were when
    :meth:`CostReport.snapshot` was called, with the same reading API
    (``layer_report``, ``summary_report``, ``total_report``,
    ``phase_report``, ``link_report``, ``ignored_layers``, the ``show_*``
    methods, ``roofline_report``, ``memory_report``, the plots); it
    pickles, tracebacks included (as text of the frames' files, lines and
    functions).  A projection's keeps its ``batch_size``.
    """

    def __init__(self, records, link_info, fma_1flop=None,
                 memory_state=None, comm_bytes=None, flop_convention=None,
                 comm=None, batch_size=None):
        self._saved = as_records(records)
        if batch_size is not None:  # a projection's (see scaling_report)
            self.batch_size = batch_size
        self._links = dict(link_info)
        self.fma_1flop = fma_1flop
        self.flop_convention = flop_convention
        self._memory = MemoryState.of(memory_state)
        self._comm = dict(comm_bytes or {})
        # (None: a snapshot pickled before the flag, a run with comm= if
        # it sent bytes)
        self._has_comm = bool(self._comm if comm is None else comm)

    def records(self):
        return self._saved

    def link_info(self):
        return self._links

    def memory_state(self):
        return self._memory

    def comm_bytes_of(self):
        return self._comm

    def has_comm(self):
        return self._has_comm

    def __reduce__(self):
        return (ReportSnapshot, (flat_records(self._saved),
                                 self._links,
                                 self.fma_1flop, self._memory, self._comm,
                                 self.flop_convention, self._has_comm,
                                 getattr(self, 'batch_size', None)))


#: How each cached report is built from the building blocks of
#: ``CostReport._built``.
_BUILDERS = {
    'layer': lambda b: layer_report(b['layers'], b['n_params'], b['comm']),
    'summary': lambda b: summary_report(b['layers'], b['n_params'],
                                        comm=b['comm']),
    'summary_phase': lambda b: summary_report(b['layers'], b['n_params'],
                                              by_phase=True, comm=b['comm']),
    'total': lambda b: total_report(b['layers'], b['n_params'], b['comm']),
    'phase': lambda b: phase_report(b['layers'], b['n_params'], b['comm']),
    'link': lambda b: link_report(b['layers'], b['link_info'],
                                  comm=b['comm']),
    'ignored': lambda b: b['ignored'],
}
