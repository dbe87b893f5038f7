"""The command line's output: every report asked for, rendered as the
options say and put together in one text (:func:`render_reports`).

* md and table: the reports one after the other, a blank line between;
* csv: one report only (the arguments' checks refuse more), CSV only:
  what is not a table (the fit's answer) is a note, for stderr;
* json: one document; a single report's is the report's own (as the
  API's ``show_*(mode='json')`` writes it, the fit's with its answer
  added), several reports' an object of them keyed by report.

Part of the command line (``__main__``).
"""

import collections
import contextlib
import io
import json
import warnings

from chainer_computational_cost.analysis import calibration
from chainer_computational_cost.analysis import network
from chainer_computational_cost.cli.args import ALL_LEVELS
from chainer_computational_cost.cli.args import SCALING_NAMES
from chainer_computational_cost.cli.args import scaling_options
from chainer_computational_cost.cli.models import CommandError
from chainer_computational_cost.core.records import ReportWarning
from chainer_computational_cost.report import rendering
from chainer_computational_cost.run import fit as fit_module
from chainer_computational_cost.run.fit import fit_rows


def _show(report, args, kind, columns, ost):
    """Write the report ``kind`` of ``report`` (a hook or a projection)
    to ``ost`` as the arguments say."""
    options = dict(ost=ost, mode=args.mode, unit=args.unit,
                   n_digits=args.n_digits)
    if columns is not None:
        options['columns'] = columns
    if kind != 'memory' and args.time_unit is not None:
        options['time_unit'] = args.time_unit
    if kind == 'memory':
        report.show_memory_report(**options)
    elif kind == 'roofline':
        report.show_roofline_report(device=args.device,
                                    peak_flops=args.peak_flops,
                                    bandwidth=args.bandwidth, **options)
    elif kind == 'scaling':
        if not report.phase_report['backward']['n_layers']:
            # (the API's advice, a backward inside the block, is the
            # command's own step here)
            raise CommandError(
                '--workers: the training step made no backward call (no '
                'parameter of the model takes a gradient): there is no '
                'gradient to all-reduce, so no scaling report')
        options.update(scaling_options(args))
        # the batch of --shape: a model's first call need not be on it
        # (a class token broadcast from a parameter)
        try:
            report.show_scaling_report(
                args.workers, device=args.device, network=args.network,
                peak_flops=args.peak_flops, bandwidth=args.bandwidth,
                batch_size=args.shape[0], **options)
        except network.MeasuredStepError as e:
            # ('measured: ...') named as the option that gave it, as the
            # checks name it
            raise CommandError(SCALING_NAMES['measured'] +
                               str(e)[len('measured'):])
    elif kind == 'time':
        report.show_time_report(args.calibration,
                                by=args.predict_by or 'layer', **options)
    elif kind == 'links':
        depth = None if args.links == ALL_LEVELS else args.links
        report.show_link_report(depth=depth, **options)
    elif kind == 'phases':
        report.show_phase_report(**options)
    elif kind == 'summary':
        report.show_summary_report(by_phase=args.train, **options)
    else:
        report.show_report(**options)


def fit_answer(fit):
    """The sentence of a fit_batch answer (fit_batch's own)."""
    return fit_module.answer(fit)


def _render_fit(fit, args, columns, notes):
    # (columns: check_args always lists them)
    table = rendering.render(
        fit_rows(fit), columns, args.mode, args.unit,
        args.n_digits, name_title='Memory at batch {}'.format(
            fit['batch_size']))
    if args.mode == 'json':
        # The answer's figures (raw bytes) beside the table's rows.
        doc = collections.OrderedDict(
            (k, rendering.json_param(v)) for k, v in fit.items())
        doc.update(json.loads(table, object_pairs_hook=collections.
                              OrderedDict))
        return json.dumps(doc, indent=1, allow_nan=False) + '\n'
    if args.mode == 'csv':
        notes.append(fit_answer(fit))
        return table
    return fit_answer(fit) + '\n' + table


#: The roofline report's blank cells: (column, which rows, why).
_ROOFLINE_BLANKS = (
    ('intensity', 'layers', 'a blank Intensity is a layer that moves no '
     'bytes (FLOPs per byte has no value)'),
    ('bound', 'layers', 'a blank Bound is a layer that does neither FLOPs '
     'nor memory traffic (a reshape or a view)'),
    ('bound', 'total', "the total's Bound is blank: each layer is bound "
     'by its own limit, a sum of them by none'),
)


def _roofline_notes(report, args, columns):
    """Why the roofline report shows blank cells, for those of its
    ``columns`` it shows (check_args always lists them)."""
    rows = report.roofline_report(device=args.device,
                                  peak_flops=args.peak_flops,
                                  bandwidth=args.bandwidth)
    reasons = []
    for column, which, why in _ROOFLINE_BLANKS:
        picked = [r for name, r in rows.items()
                  if (name == 'total') == (which == 'total')]
        if column in columns and any(r[column] is None for r in picked):
            reasons.append(why)
    if not reasons:
        return []
    return ['note: blank cells of the roofline report are not applicable: '
            + '; '.join(reasons)]


@contextlib.contextmanager
def warnings_as_notes():
    """A block whose ReportWarnings (a function the hook cannot cost, an
    anchor no fit reaches, ...) become the 'warning: ' lines of the list
    it yields, each once, instead of Python's warnings with their source
    lines; other warnings (the user's model's) are told as they were.  A
    block that raises tells none: its error is the one line."""
    notes = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', ReportWarning)
        yield notes
    for w in caught:
        if not issubclass(w.category, ReportWarning):
            warnings.warn_explicit(w.message, w.category, w.filename,
                                   w.lineno)
        elif 'warning: {}'.format(w.message) not in notes:
            notes.append('warning: {}'.format(w.message))


def with_notes(body):
    """``(body(), notes)``: ``body`` run in :func:`warnings_as_notes`; a
    ValueError a report raises for what the options made (figures past a
    float's range) as a CommandError: one error line."""
    with warnings_as_notes() as notes:
        try:
            out = body()
        except ValueError as e:
            raise CommandError(str(e))
    return out, notes


def render_reports(result, args, plan, ost):
    """(text, notes): the reports of ``plan`` (a list of (kind, columns))
    rendered as one text, as ``ost`` can encode it, and the lines for
    stderr (the fit's answer in csv mode, notes on blank cells)."""
    notes = []
    texts = []
    for kind, columns in plan:
        if kind == 'fit':
            texts.append(_render_fit(result.fit, args, columns, notes))
            continue
        buf = _Buffer(ost)
        _show(result.report, args, kind, columns, buf)
        texts.append(buf.getvalue())
        if kind == 'roofline' and args.mode != 'json':
            notes.extend(_roofline_notes(result.report, args, columns))
        if kind == 'time':
            notes.extend(_time_notes(result.report, args))
        if kind == 'scaling':
            notes.append('note: ' + network.model_error_note(
                args.scaling_model or 'sourced', args.measured is not None,
                args.jitter))
    if args.mode == 'json' and len(texts) > 1:
        doc = collections.OrderedDict(
            (kind, json.loads(text, object_pairs_hook=collections.
                              OrderedDict) if text else None)
            for (kind, _), text in zip(plan, texts))
        text = json.dumps(doc, indent=1, allow_nan=False) + '\n'
    else:
        text = '\n'.join(texts)
    return rendering.encodable(text, getattr(ost, 'encoding', None)), notes


def _time_notes(report, args):
    """Lines for stderr beside a time report: a calibration that cannot be
    trusted, and which calls are flagged and why."""
    found = calibration.load_calibration(args.calibration)
    notes = []
    untrusted = found.untrusted()
    if untrusted is not None:
        notes.append('warning: ' + untrusted)
    flagged = calibration.flagged_summary(report.time_report(found))
    if flagged is not None:
        notes.append('note: ' + flagged)
    return notes


class _Buffer(io.StringIO):
    """A report's text on its way to ``stream``, which a report renders
    for: in its encoding (a text table escaped before it is laid out)."""

    def __init__(self, stream):
        super(_Buffer, self).__init__()
        self._encoding = getattr(stream, 'encoding', None)

    @property
    def encoding(self):
        return self._encoding
