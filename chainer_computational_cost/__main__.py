"""Command line: print the cost report of a model's forward pass or
training step.

    python -m chainer_computational_cost vgg16 --unit G --mode md
    python -m chainer_computational_cost mypkg.models:build --shape 1,3,64,64
    python -m chainer_computational_cost resnet50 --shape 32,3,224,224 \
        --train --project
    python -m chainer_computational_cost resnet50 --device gtx1080ti

This module runs the model and writes the output (:func:`main`); the
models and the errors of the user's code are in ``_cli_models.py``, the
arguments and their checks in ``_cli_args.py``.
"""

import contextlib
import io
import os
import sys
import time

import chainer
import chainer.functions as F
import numpy

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import plots
from chainer_computational_cost import projection
from chainer_computational_cost._cli_args import _ALL_LEVELS
from chainer_computational_cost._cli_args import _joined_values
from chainer_computational_cost._cli_args import build_parser
from chainer_computational_cost._cli_args import check_args
from chainer_computational_cost._cli_args import check_scaling
from chainer_computational_cost._cli_args import parse_shape  # NOQA: F401
from chainer_computational_cost._cli_models import _failure
from chainer_computational_cost._cli_models import _is_internal
from chainer_computational_cost._cli_models import _one_line
from chainer_computational_cost._cli_models import CommandError
from chainer_computational_cost._cli_models import load_model
from chainer_computational_cost._cli_models import LOGITS
from chainer_computational_cost._cli_models import make_optimizer
from chainer_computational_cost._cli_models import model_name  # NOQA: F401
from chainer_computational_cost._cli_models import MODELS  # NOQA: F401
from chainer_computational_cost.fit import fit_batch
from chainer_computational_cost.fit import show_fit

#: Seed of --train's random labels: the same labels on every run (costs do
#: not depend on them, but a reproducible command is easier to reason about).
LABEL_SEED = 0

#: Beyond this batch size a real run is slow enough for --project to be
#: worth suggesting.
LARGE_BATCH = 8


def _inputs(args, dtype):
    """Batch size -> input: the batch of --shape, or with --project the
    batches a projection runs (allocated before the model is built, so
    that a shape too big is found at once)."""
    rest = args.shape[1:]
    batches = (projection.sample_batches(args.shape[0]) if args.project
               else args.shape[:1])
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


def _model_call(model, args, dtype):
    """``call(x)``: one forward pass, or with --train one training step
    (the update of --optimizer included, but for --fit, which adds the
    optimizer's state from its table), each failure of the user's code a
    CommandError."""
    logits_layer = LOGITS.get(args.model) if args.train else None
    # A new optimizer at each step: each run's update is a first one,
    # which creates the optimizer's state (--project's runs line up).
    update = (isinstance(model, chainer.Link) and args.fit is None
              and getattr(args, 'optimizer', None) is not None)

    def forward(x):
        try:
            if logits_layer is not None:
                return model(x, layers=[logits_layer])[logits_layer]
            return model(x)
        except Exception as e:
            if _is_internal(e):
                raise
            raise _failure('the model rejected input of shape {} and '
                           'dtype {}'.format(x.shape, dtype), e)

    def infer(x):
        with chainer.no_backprop_mode(), \
                chainer.using_config('train', False):
            forward(x)

    def train(x):
        if isinstance(model, chainer.Link):
            # Gradients left by an earlier step would be accumulated, with
            # additions a single step does not make (and --project's runs
            # would not line up).
            model.cleargrads()
        with chainer.using_config('train', True), \
                chainer.using_config('enable_backprop', True):
            y = _logits(forward(x), len(x))
            t = numpy.random.RandomState(LABEL_SEED).randint(
                0, y.shape[1], len(x)).astype(numpy.int32)
            try:
                F.softmax_cross_entropy(y, t).backward()
            except Exception as e:
                if _is_internal(e):
                    raise
                raise _failure('the loss or the backward pass failed', e)
            if update:
                try:
                    make_optimizer(args.optimizer).setup(model).update()
                except Exception as e:
                    if _is_internal(e):
                        raise
                    raise _failure('the optimizer\'s update failed', e)

    return train if args.train else infer


class Progress(chainer.FunctionHook):
    """A status line on stderr while the model runs, when stderr is a
    terminal: which run it is and how many Chainer calls so far.

    It is rewritten in place (``\r``) at most every :attr:`INTERVAL`
    seconds, and erased before anything else is written to ``sys.stdout``
    or ``sys.stderr`` during the run (the model's own prints, warnings),
    so it never ends up inside other output; it is erased at the end.
    """

    name = 'ChainerComputationalCostProgress'
    #: Seconds between two updates of the line.
    INTERVAL = 0.25

    def __init__(self, stream):
        self.stream = stream
        self.calls = 0
        self.label = ''
        self._shown = 0  # characters of the status line now on screen
        self._next = 0.0

    def forward_postprocess(self, function, in_data):
        """Count the call; redraw the line when it is time to."""
        self.calls += 1
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self.INTERVAL
            self._draw('{}: {} calls so far'.format(self.label, self.calls))

    def _draw(self, text):
        # Padded over a longer line left from before.
        self._write('\r' + text.ljust(self._shown))
        self._shown = max(self._shown, len(text))

    def clear(self):
        """Erase the status line, if one is shown."""
        if self._shown:
            self._write('\r' + ' ' * self._shown + '\r')
            self._shown = 0

    def _write(self, text):
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed stderr must not stop the run

    @contextlib.contextmanager
    def running(self, label):
        """Show progress under ``label`` while the block runs: the hook
        entered and the standard streams wrapped to erase the line before
        they write."""
        self.label = label
        self.calls = 0
        # The first line waits an interval: a quick run shows nothing.
        self._next = time.monotonic() + self.INTERVAL
        saved = sys.stdout, sys.stderr
        sys.stdout = _ClearingStream(sys.stdout, self)
        sys.stderr = _ClearingStream(sys.stderr, self)
        try:
            with self:
                yield
        finally:
            sys.stdout, sys.stderr = saved
            self.clear()


class _ClearingStream(object):
    """A text stream that erases a :class:`Progress` line before each
    write to the stream it wraps."""

    def __init__(self, stream, progress):
        self._stream = stream
        self._progress = progress

    def write(self, text):
        """Erase the status line, then write ``text``."""
        self._progress.clear()
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _progress(stream=None):
    """A Progress on ``stream`` (default stderr) when it is a terminal,
    else None."""
    stream = sys.stderr if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return Progress(stream) if tty else None


def _watched(progress, label, call):
    """``call`` run under ``progress``'s status line (when there is
    one)."""
    if progress is None:
        return call()
    with progress.running(label):
        return call()


def _run(args):
    """The report (the hook, or a projection) of the run the arguments
    ask for, or CommandError."""
    dtype = numpy.dtype(args.dtype)
    inputs = _inputs(args, dtype)
    batch = args.shape[0]
    if batch > LARGE_BATCH and not args.project and not args.measure_time:
        sys.stderr.write(
            'note: running the model at batch {}; --project gives the same '
            'figures from runs at batch 1, 2, 3 and a check run at 9, in a '
            'fraction of the time\n'.format(batch))
    fma_1flop = not args.no_fma
    # Links create their weights in chainer.config.dtype, at construction
    # or (for sizes left as None) at the first call: both must see it, or
    # float16 input meets float32 weights.
    with chainer.using_config('dtype', dtype):
        model = load_model(args.model)
        call = _model_call(model, args, dtype)
        progress = _progress()
        if args.project:
            runs = []

            def projected_run(n):
                runs.append(n)
                # Three runs, and a check run beyond batch 3; a fallback
                # to batches 2-4 adds one more.
                expected = len(projection.BATCHES) + (
                    batch > max(projection.BATCHES))
                label = ('batch {} (run {} of {})'.format(
                    n, len(runs), expected) if len(runs) <= expected else
                    'batch {} (run {})'.format(n, len(runs)))
                x = inputs[n] if n in inputs else numpy.zeros(
                    (n,) + args.shape[1:], dtype=dtype)
                _watched(progress, label, lambda: call(x))
            try:
                return projection.project_batch(
                    projected_run, batch, fma_1flop=fma_1flop,
                    flop_convention=args.flop_convention)
            except ValueError as e:
                raise CommandError('--project cannot project to batch {}: '
                                   '{}'.format(batch, e))
        if args.fit is not None:
            return _fit(call, inputs, args.fit, args.optimizer)
        # The progress hook inside the cost hook: its work on each call
        # falls outside the time --measure-time measures.
        with ComputationalCostHook(fma_1flop=fma_1flop,
                                   flop_convention=args.flop_convention,
                                   measure_time=args.measure_time,
                                   memory=True) as cch:
            _watched(progress, 'batch {}'.format(batch),
                     lambda: call(inputs[batch]))
    return cch


def _fit(call, inputs, fit, optimizer):
    """fit_batch of the training step ``call`` (runs at batch 1, 2 and 3
    of inputs shaped like ``inputs``')."""
    x = next(iter(inputs.values()))
    where = 'device' if isinstance(fit, str) else 'capacity'
    try:
        return fit_batch(
            lambda n: call(numpy.zeros((n,) + x.shape[1:], x.dtype)),
            optimizer=optimizer, **{where: fit})
    except ValueError as e:
        raise CommandError('--fit: {}'.format(e))


def _plot_summary(result, path, by_phase):
    if by_phase:
        # The bars of the summary --train prints: a backward Add is not a
        # forward one.
        plots.plot_summary(result.summary_report_by_phase(), path)
    else:
        result.plot_summary(path)


def _write_plots(result, args):
    for path, draw in (
            (args.plot_roofline, lambda p: result.plot_roofline(
                p, device=args.device, peak_flops=args.peak_flops,
                bandwidth=args.bandwidth)),
            (args.plot_summary, lambda p: _plot_summary(
                result, p, args.train)),
            (args.plot_memory, lambda p: result.plot_memory(p))):
        if path is None:
            continue
        try:
            draw(path)
        except (OSError, ValueError) as e:
            raise CommandError('cannot write the plot {!r}: {}'.format(
                path, _one_line(e)))


def show(result, args, kind, columns, ost):
    """Write the report ``kind`` of ``result`` (a hook or a projection) to
    ``ost`` as the arguments say."""
    options = dict(ost=ost, mode=args.mode, unit=args.unit,
                   columns=columns, n_digits=args.n_digits)
    if kind in ('fit', 'memory'):  # no time column
        pass
    elif args.time_unit is not None:
        options['time_unit'] = args.time_unit
    if kind == 'fit':
        show_fit(result, **options)
    elif kind == 'memory':
        result.show_memory_report(**options)
    elif kind == 'roofline':
        result.show_roofline_report(device=args.device,
                                    peak_flops=args.peak_flops,
                                    bandwidth=args.bandwidth, **options)
    elif kind == 'links':
        depth = None if args.links == _ALL_LEVELS else args.links
        result.show_link_report(depth=depth, **options)
    elif kind == 'phases':
        result.show_phase_report(**options)
    elif kind == 'summary':
        result.show_summary_report(by_phase=args.train, **options)
    else:
        result.show_report(**options)


def _encodable(text, stream):
    """``text`` as ``stream`` can encode it: unchanged when it can (UTF-8),
    else with the link report's non-breaking spaces as spaces and any
    other character it cannot encode escaped (an ASCII terminal)."""
    encoding = getattr(stream, 'encoding', None)
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


def _write_report(result, args, kind, columns, ost, scaling=False):
    """Render the report (the scaling report with ``--workers``), then
    write it at once, as ``ost`` can encode it."""
    buf = io.StringIO()
    if scaling:
        options = {} if args.time_unit is None else {
            'time_unit': args.time_unit}
        result.show_scaling_report(
            args.workers, ost=buf, mode=args.mode, device=args.device,
            network=args.network, peak_flops=args.peak_flops,
            bandwidth=args.bandwidth, n_digits=args.n_digits, **options)
    else:
        show(result, args, kind, columns, buf)
    ost.write(_encodable(buf.getvalue(), ost))
    ost.flush()


#: Exit status after the reader of stdout went away (``| head``): that of
#: a Unix tool killed by SIGPIPE, as a shell reports it.
BROKEN_PIPE_STATUS = 128 + 13


def _stdout_to_devnull():
    """Point stdout at /dev/null: Python flushes it again at exit, which
    must not fail a second time (as Python's documentation of SIGPIPE
    advises)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def main(argv=None, ost=None):
    """Run the command line; returns the exit status.

    Mistakes in the arguments, a model that cannot be imported or built
    and a forward pass or training step that fails are reported as one
    line on stderr with status 2 (argparse's own mistakes exit with it).
    A reader of the report that goes away early (``| head``) ends the
    command quietly with status 141.
    """
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(_joined_values(parser, argv))
    ost = sys.stdout if ost is None else ost
    try:
        # Check every option before the (possibly slow) run.
        kind, columns = check_args(args)
        scaling = check_scaling(args)
        result = _run(args)
        # Plots first: a plot that cannot be written is an error, and an
        # error must not follow a printed report.
        _write_plots(result, args)
    except CommandError as e:
        sys.stderr.write('error: {}\n'.format(e))
        return 2
    try:
        _write_report(result, args, kind, columns, ost, scaling)
    except BrokenPipeError:
        if ost is sys.stdout:
            _stdout_to_devnull()
        return BROKEN_PIPE_STATUS
    return 0


def console():
    """The ``chainer-computational-cost`` command."""
    sys.exit(main())


if __name__ == '__main__':
    console()
