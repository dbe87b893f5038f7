"""Command line: print the cost report of a model's forward pass or
training step.

    python -m chainer_computational_cost vgg16 --unit G --mode md
    python -m chainer_computational_cost mypkg.models:build --shape 1,3,64,64
    python -m chainer_computational_cost resnet50 --shape 32,3,224,224 \
        --train --project
    python -m chainer_computational_cost resnet50 --device gtx1080ti

This module runs the model (:func:`main`); the models and the errors of
the user's code are in ``cli/models.py``, the arguments and their checks
in ``cli/args.py``, the progress shown during the run in
``cli/progress.py``, and the writing of the reports in ``cli/output.py``.
"""

import collections
import contextlib
import os
import sys
import time
import warnings

import chainer
import chainer.functions as F
import numpy

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.analysis import network
from chainer_computational_cost.core import checks
from chainer_computational_cost.core import devices
from chainer_computational_cost.core.records import ReportWarning
from chainer_computational_cost.report import plots
from chainer_computational_cost.run import projection
from chainer_computational_cost.cli.args import build_parser
from chainer_computational_cost.cli.args import check_args
from chainer_computational_cost.cli.args import COMMANDS
from chainer_computational_cost.cli.args import parse_shape  # NOQA
from chainer_computational_cost.cli.args import PLOT_OPTIONS
from chainer_computational_cost.cli.args import report_errors
from chainer_computational_cost.cli.args import INTERRUPTED_STATUS
from chainer_computational_cost.cli.args import launcher_rank
from chainer_computational_cost.cli.args import on_this_rank
from chainer_computational_cost.cli.args import own_error
from chainer_computational_cost.cli.args import say as _say
from chainer_computational_cost.cli.args import WRITE_FAILED_STATUS
from chainer_computational_cost.cli.args import write_out
from chainer_computational_cost.cli.calibrate import calibrate_command
from chainer_computational_cost.cli.args import scaling_options
from chainer_computational_cost.cli.models import failure
from chainer_computational_cost.cli.models import is_internal
from chainer_computational_cost.cli.models import one_line
from chainer_computational_cost.cli.models import check_model_or_command
from chainer_computational_cost.cli.models import CommandError
from chainer_computational_cost.cli.models import load_model
from chainer_computational_cost.cli.models import LOGITS
from chainer_computational_cost.cli.models import make_optimizer
from chainer_computational_cost.cli.models import model_name
from chainer_computational_cost.cli.models import user_failure
from chainer_computational_cost.cli.models import MODELS  # NOQA
from chainer_computational_cost.cli.output import render_reports
from chainer_computational_cost.cli.output import warnings_as_notes
from chainer_computational_cost.cli.output import with_notes
from chainer_computational_cost.cli.progress import make_progress
from chainer_computational_cost.cli.progress import Progress  # NOQA
from chainer_computational_cost.cli.progress import watched
from chainer_computational_cost.run.fit import fit_batch

#: Seed of --train's random labels: the same labels on every run (costs do
#: not depend on them, but a reproducible command is easier to reason about).
LABEL_SEED = 0

#: Seconds --project must be estimated to save on the run at --shape before
#: it is suggested: a saving shorter than that is worth less than reading
#: the note and typing the command again (a model that runs in 0.1 s gains
#: nothing).
PROJECT_HINT_SECONDS = 5.0

#: The seconds a call of the run must take on average for --project to be
#: suggested: each call also costs a fixed time, Chainer's and the hook's
#: (a fraction of a millisecond here), which every run of a projection
#: pays whatever its batch; only where calls take longer is a run's time
#: about proportional to its batch, as the note's estimate takes it (an
#: LSTM of 3000 steps at batch 256 ran in 13 s, about 0.3 ms a call, and
#: its projection took 25 s).
PROJECT_HINT_CALL_SECONDS = 1e-3

#: The clock timing the run at --shape (a test may give its own).
_clock = time.monotonic


def _inputs(args, dtype):
    """Batch size -> input: the batch of --shape, or with --project the
    batches a projection runs (allocated before the model is built, so
    that a shape too big is found at once)."""
    batch, rest = args.shape[0], args.shape[1:]
    batches = (projection.sample_batches(batch) if args.project
               else (batch,))
    inputs = {}
    for n in batches:
        shape = (n,) + rest
        try:
            inputs[n] = numpy.zeros(shape, dtype=dtype)
        except (MemoryError, ValueError) as e:
            raise CommandError('cannot allocate an input of shape {} and '
                               'dtype {}: {}'.format(shape, dtype, e))
    return inputs


#: The start of --train's errors about what the model returned.
_NEEDS_LOGITS = ('--train needs the model to return logits of shape '
                 '(N, n_classes): a Variable or array, alone or as the one '
                 'entry of a dict; it returned ')


def _logits(y, n):
    """The logits in what a user's model returned for a batch of ``n``:
    a Variable or array of shape (n, n_classes), alone or as the one entry
    of a dict."""
    if isinstance(y, dict):
        if len(y) != 1:
            raise CommandError(_NEEDS_LOGITS + 'a dict of {} entries '
                               '({})'.format(len(y), ', '.join(
                                   repr(k) for k in y)))
        y, = y.values()
    arrays = (chainer.Variable,) + tuple(chainer.get_array_types())
    if not isinstance(y, arrays):
        raise CommandError(_NEEDS_LOGITS + 'an object of type {}'.format(
            type(y).__name__))
    if y.ndim != 2 or y.shape[0] != n or y.shape[1] < 1:
        raise CommandError(_NEEDS_LOGITS + 'shape {} for a batch of '
                           '{}'.format(tuple(y.shape), n))
    return y


def _model_call(model, args, dtype, progress):
    """``call(x)``: one forward pass, or with --train one training step,
    the update of --optimizer included (--fit sizes that whole step), each
    failure of the user's code a CommandError; so is a forward pass that
    makes no Chainer call (``progress`` counts them): every report would
    be empty, or with --train the command's own loss alone."""
    logits_layer = LOGITS.get(args.model) if args.train else None
    # A new optimizer at each step: each run's update is a first one,
    # which creates the optimizer's state (--project's runs line up, and
    # fit_batch counts the state measured, with the update's temporaries).
    update = (isinstance(model, chainer.Link)
              and getattr(args, 'optimizer', None) is not None)

    def forward(x):
        try:
            if logits_layer is not None:
                return model(x, layers=[logits_layer])[logits_layer]
            return model(x)
        except BaseException as e:
            if not user_failure(e) or is_internal(e):
                raise
            raise failure('the model {} input of shape {} and dtype '
                          '{}'.format('rejected' if isinstance(e, Exception)
                                      else 'exited on', x.shape, dtype), e)

    def made_calls(before):
        # (after what the model returned is checked: a wrong output says
        # more)
        calls, costable = before
        if progress.calls == calls:
            raise CommandError(
                'nothing was recorded: the model made no Chainer function '
                'call (a model that returns its input unchanged, or '
                'computes with NumPy alone, has no cost to report)')
        if progress.costable == costable:
            made = progress.calls - calls
            raise CommandError(
                'nothing could be costed: the model made {} Chainer '
                'function call{}, of {} that ComputationalCostHook does not '
                'support ({}): every report would be {} (from Python, '
                'add_custom_cost_calculator gives a function its '
                'cost)'.format(
                    made, 's' if made > 1 else '',
                    'functions' if len(progress.unsupported) > 1
                    else 'a function', ', '.join(sorted(
                        progress.unsupported)),
                    "of the command's loss alone" if args.train
                    else 'empty'))

    def infer(x):
        with chainer.no_backprop_mode(), \
                chainer.using_config('train', False):
            before = progress.calls, progress.costable
            forward(x)
            made_calls(before)

    def train(x):
        if isinstance(model, chainer.Link):
            # Gradients left by an earlier step would be accumulated, with
            # additions a single step does not make (and --project's runs
            # would not line up).
            model.cleargrads()
        with chainer.using_config('train', True), \
                chainer.using_config('enable_backprop', True):
            before = progress.calls, progress.costable
            y = _logits(forward(x), len(x))
            made_calls(before)
            t = numpy.random.RandomState(LABEL_SEED).randint(
                0, y.shape[1], len(x)).astype(numpy.int32)
            try:
                F.softmax_cross_entropy(y, t).backward()
            except BaseException as e:
                if not user_failure(e) or is_internal(e):
                    raise
                raise failure('the loss or the backward pass failed', e)
            if update:
                try:
                    make_optimizer(args.optimizer).setup(model).update()
                except BaseException as e:
                    if not user_failure(e) or is_internal(e):
                        raise
                    raise failure('the optimizer\'s update failed', e)

    return train if args.train else infer


#: A run's results: ``report``, the hook or projection of the run at
#: --shape (None when only --fit is asked for), and ``fit``, the
#: fit_batch answer (or None).
Result = collections.namedtuple('Result', ['report', 'fit'])


def _needs_shape_run(args, kinds):
    """Whether anything asked for needs the run at --shape: every report
    but --fit's, and the plots."""
    return kinds != ['fit'] or any(
        getattr(args, attr) is not None for _, attr in PLOT_OPTIONS)


def _projection_sizes(batch):
    """The batch sizes :func:`projection.project_batch` may run for
    ``batch`` (each once at most): batch 1, 2 and 3; 4 when batch 1 is
    off their line; the check run beyond batch 3; 4, 9 and 14 when a
    scratch of the memory bends below them.  Most projections run 3 or 4
    of them; a progress that said so would have to change its total
    midway."""
    sizes = (set(projection.BATCHES) | set(projection.LATER_BATCHES)
             | set(projection.TOP_BATCHES))
    if batch > max(projection.BATCHES):
        sizes.add(min(projection.CHECK_BATCH, batch))
    return sizes


def _projected(call, args, inputs, dtype, progress):
    """The projection to --shape's batch of runs of ``call``, or
    CommandError."""
    batch = args.shape[0]
    most = len(_projection_sizes(batch))
    runs = []

    def projected_run(n):
        runs.append(n)
        label = 'batch {} (run {} of at most {})'.format(n, len(runs), most)
        x = inputs[n] if n in inputs else numpy.zeros(
            (n,) + args.shape[1:], dtype=dtype)
        watched(progress, label, lambda: call(x))
    try:
        return projection.project_batch(
            projected_run, batch, fma_1flop=not args.no_fma,
            flop_convention=args.flop_convention)
    except ValueError as e:
        raise CommandError('--project cannot project to batch {}: '
                           '{}'.format(batch, e))


def _run(args, kinds):
    """The results of the runs the arguments ask for, or CommandError."""
    dtype = numpy.dtype(args.dtype)
    inputs = _inputs(args, dtype)
    batch = args.shape[0]
    shape_run = _needs_shape_run(args, kinds)
    # Links create their weights in chainer.config.dtype, at construction
    # or (for sizes left as None) at the first call: both must see it, or
    # float16 input meets float32 weights.
    with chainer.using_config('dtype', dtype):
        progress = make_progress()
        with progress.building('building the model'):
            model = load_model(args.model)
        call = _model_call(model, args, dtype, progress)
        if args.project:
            report = _projected(call, args, inputs, dtype, progress)
            # The fit takes the projection's runs: no more runs.
            fit = _fit(report, args) if 'fit' in kinds else None
            return Result(report, fit)
        report = None
        if shape_run:
            # The progress hook inside the cost hook: its work on each
            # call falls outside the time --measure-time measures.
            with ComputationalCostHook(
                    fma_1flop=not args.no_fma,
                    flop_convention=args.flop_convention,
                    measure_time=args.measure_time, memory=True) as report:
                start = _clock()
                watched(progress, 'batch {}'.format(batch),
                        lambda: call(inputs[batch]))
                elapsed = _clock() - start
            hint = None if args.measure_time else _project_hint(
                batch, elapsed, len(report.records()))
            if hint is not None:
                _say(hint)
        fit = None
        if 'fit' in kinds:
            fit = _fit(_fit_runs(call, inputs, progress), args)
    return Result(report, fit)


def _project_hint(batch, elapsed, n_calls):
    """The note suggesting --project after the run at ``batch`` took
    ``elapsed`` seconds in ``n_calls`` calls, or None when the projection
    could take as long (its most runs, see _projection_sizes, hold as many
    samples as the run; or its calls are short, see
    :data:`PROJECT_HINT_CALL_SECONDS`) or would save less than
    :data:`PROJECT_HINT_SECONDS`.  The times are estimated proportional to
    the batch: the projection's usual runs at 1, 2, 3 and its check (15
    samples from batch 9 up), and its most."""
    check = min(projection.CHECK_BATCH, batch)
    usual = sum(projection.BATCHES) + (
        check if batch > max(projection.BATCHES) else 0)
    sizes = _projection_sizes(batch)
    most = sum(sizes)
    if most >= batch or elapsed < n_calls * PROJECT_HINT_CALL_SECONDS or \
            elapsed * (batch - usual) / batch < PROJECT_HINT_SECONDS:
        return None
    return ('note: the run at batch {} took {:.0f} s; --project gives the '
            'same figures from runs at batch {} and a check run at {} ({} '
            'samples instead of {}), in about {:.0f} s; at most {} runs '
            '({} samples, {:.0f} s) when the memory of a call does not '
            'follow the batch on a line'.format(
                batch, elapsed, ', '.join(
                    str(n) for n in projection.BATCHES), check, usual,
                batch, elapsed * usual / batch, len(sizes), most,
                elapsed * most / batch))


def _fit_runs(call, inputs, progress):
    """``run(n)`` for fit_batch: the step ``call`` at batch ``n``, on
    inputs shaped like ``inputs``', under a progress of its own."""
    x = next(iter(inputs.values()))
    runs = []

    def run(n):
        runs.append(n)
        watched(progress, 'fit: batch {} (run {})'.format(n, len(runs)),
                lambda: call(numpy.zeros((n,) + x.shape[1:], x.dtype)))
    return run


def _fit(run, args):
    """fit_batch of ``run`` (a step at batch n, or a projection) on
    --fit's device or capacity, or CommandError."""
    where = 'device' if isinstance(args.fit, str) else 'capacity'
    try:
        return fit_batch(run, optimizer=args.optimizer, margin=args.margin,
                         **{where: args.fit})
    except ValueError as e:
        raise CommandError('--fit: {}'.format(e))


def _plot_summary(report, path, by_phase):
    if by_phase:
        # The bars of the summary --train prints: a backward Add is not a
        # forward one.
        plots.plot_summary(report.summary_report_by_phase(), path)
    else:
        report.plot_summary(path)


def _scaling_title(args):
    """--plot-scaling's title: the model, the device and the network as
    their presets name them ('resnet50 on v100, ib-edr: scaling'); a
    device given by its peak is 'given peak', a network file its name
    (its title, or 'given network', when it has none)."""
    device = 'given peak' if args.device is None else devices.resolve_device(
        args.device).name
    net = devices.resolve_network(args.network)
    return plots.scaling_title(model_name(args.model), device,
                               net.name or net.title or 'given network')


def _plot_scaling(report, path, args):
    """--plot-scaling: a line for each overlap mode.  The scaling report
    printed has told its warnings (a --measured step no anchoring
    reaches); the plot's own computations, one per mode, would tell them
    again, with another mode's figures and no mode named.  Any other
    warning (the plot's own: a mode's curve left out) is told."""
    options = scaling_options(args)
    options.pop('overlap', None)  # (the table's mode: the plot draws all)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', ReportWarning)
        report.plot_scaling(
            path, args.workers, device=args.device, network=args.network,
            peak_flops=args.peak_flops, bandwidth=args.bandwidth,
            overlaps=network.OVERLAPS, title=_scaling_title(args),
            **options)
    for w in caught:
        if not (issubclass(w.category, ReportWarning) and
                str(w.message).startswith('scaling_report:')):
            warnings.warn(w.message)


def _write_plots(report, args):
    for path, draw in (
            (args.plot_roofline, lambda p: report.plot_roofline(
                p, device=args.device, peak_flops=args.peak_flops,
                bandwidth=args.bandwidth)),
            (args.plot_summary, lambda p: _plot_summary(
                report, p, args.train)),
            (args.plot_memory, lambda p: report.plot_memory(p)),
            (args.plot_scaling, lambda p: _plot_scaling(report, p, args))):
        if path is None:
            continue
        try:
            draw(path)
        except OSError as e:  # found writable, then a full disk
            raise _WriteFailed('cannot write the plot {!r}: {}'.format(
                path, e.strerror or one_line(e)))
        except checks.UnwritableFile as e:  # its directory gone since
            raise _WriteFailed(str(e))
        except ValueError as e:
            raise CommandError('cannot write the plot {!r}: {}'.format(
                path, one_line(e)))


class _WriteFailed(Exception):
    """A file the command checked it could write that it could not (a
    full disk): status 1, as for the report itself."""


def _user_prints(mode):
    """Where what the user's module, factory and model print goes while
    they are imported, built and run: stderr in the modes a program reads
    (json, csv), whose stdout holds the document alone; stdout otherwise,
    as without the command."""
    if mode in ('json', 'csv'):
        return contextlib.redirect_stdout(sys.stderr)
    return contextlib.nullcontext()


def _as_written(argv, unknown, model):
    """The ``unknown`` arguments as the user wrote them: each unknown
    option with the word after it that argparse left over, or took for
    MODEL when another leftover word is the model (``--batch 8 vgg16``:
    model '8'); that word, the model meant, left out."""
    rest = list(unknown)
    shown = []
    free = [w for w in rest if not w.startswith('-')]
    for i, arg in enumerate(argv):
        if arg not in rest or not arg.startswith('-'):
            continue
        rest.remove(arg)
        after = argv[i + 1] if i + 1 < len(argv) else None
        if '=' in arg or after is None or after.startswith('-'):
            shown.append(arg)
        elif after in rest:
            rest.remove(after)
            free.remove(after)
            shown.append('{} {}'.format(arg, after))
        elif after == model and free:
            rest.remove(free.pop())  # the model meant
            shown.append('{} {}'.format(arg, after))
        else:
            shown.append(arg)
    return shown + rest


def _report(argv, ost):
    """A model's report: the exit status, or CommandError."""
    parser = build_parser()
    # The command's own options after it (--shape 2,8 calibrate --out x)
    # are no mistake of the main command's: the command's place is.
    args, unknown = parser.parse_known_args(argv)
    if args.model in COMMANDS:
        raise CommandError('{0!r} is a command, which goes first, before '
                           'any option: python -m chainer_computational_cost '
                           '{0} ...'.format(args.model))
    if unknown:
        parser.error('unrecognized arguments: ' + ' '.join(
            _as_written(argv, unknown, args.model)))
    # Check every option before the (possibly slow) run.
    plan = check_args(args)
    # The user's model, this node's memory and files: what fails there
    # may fail on one rank of mpiexec alone.
    with on_this_rank(), _user_prints(args.mode), \
            warnings_as_notes() as run_notes:
        result = _run(args, [kind for kind, _ in plan])

    def reports():
        # Plots first: a plot that cannot be written is an error, and an
        # error must not follow a printed report.
        _write_plots(result.report, args)
        return render_reports(result, args, plan, ost)
    try:
        # This rank's run: its figures may overflow where another rank's
        # do not, its node's disk fill up.
        with on_this_rank():
            (text, notes), warned = with_notes(reports)
    except _WriteFailed as e:
        _say(own_error(e))  # this node's disk
        return WRITE_FAILED_STATUS
    notes = run_notes + [n for n in warned + notes if n not in run_notes]
    status = write_out(ost, text, 'the report')
    if status:
        return status
    for note in notes:
        _say(note)
    return 0


def _netbench_command(argv, ost):
    """``netbench``, under mpiexec (see
    :mod:`~chainer_computational_cost.cli.netbench`): it reports its own
    mistakes, on rank 0 only."""
    from chainer_computational_cost.cli import netbench
    return netbench.main(argv, ost)


def _command(argv, ost):
    """The command ``argv`` names first, run: ``calibrate``, or a model's
    report; a first argument that is neither is refused at once (the
    options of a misspelt command are not a model's)."""
    if argv[:1] == ['calibrate']:
        return calibrate_command(argv[1:], ost)
    if argv and not argv[0].startswith('-'):
        check_model_or_command(argv[0], COMMANDS)
    return _report(argv, ost)


def main(argv=None, ost=None):
    """Run the command line; returns the exit status.

    Mistakes in the arguments, a model that cannot be imported or built
    and a forward pass or training step that fails are reported as one
    ``error:`` line on stderr with status 2 (a mistake the parser finds
    raises SystemExit(2) after its line, as argparse does); so are the
    mistakes of the ``calibrate`` and ``netbench`` commands (named by
    the first argument).  A report that cannot be written (a full disk)
    is one line and status 1; Ctrl-C stops the command with one line and
    status 130; a reader of the report that goes away early (``| head``)
    ends it quietly with status 141.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    ost = sys.stdout if ost is None else ost
    try:
        if argv[:1] == ['netbench']:
            return _netbench_command(argv[1:], ost)
        return report_errors(lambda: _command(argv, ost))
    except KeyboardInterrupt:
        if launcher_rank() == 0:  # once under mpiexec, as a mistake is
            _say('interrupted')
        return INTERRUPTED_STATUS


def console():
    """The ``chainer-computational-cost`` command: ``python -m
    chainer_computational_cost``'s, the current directory first on the
    import path as ``python -m`` puts it (a ``models.py`` there is a
    ``models:build`` model to both)."""
    sys.path.insert(0, os.getcwd())
    sys.exit(main())


if __name__ == '__main__':
    console()
