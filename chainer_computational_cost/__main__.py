"""Command line: print the cost report of a model's forward pass or
training step.

    python -m chainer_computational_cost vgg16 --unit G --mode md
    python -m chainer_computational_cost mypkg.models:build --shape 1,3,64,64
    python -m chainer_computational_cost resnet50 --shape 32,3,224,224 \
        --train --project
    python -m chainer_computational_cost resnet50 --device gtx1080ti
"""

import argparse
import contextlib
import importlib
import io
import math
import os
import sys
import time
import traceback


import chainer
import chainer.functions as F
import numpy

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import memory
from chainer_computational_cost import network
from chainer_computational_cost import plots
from chainer_computational_cost import projection
from chainer_computational_cost import rendering
from chainer_computational_cost import roofline
from chainer_computational_cost.columns import (
    LAYER_COLUMNS, LINK_COLUMNS, LinkColumns, PHASE_COLUMNS, PhaseColumns,
    ReportColumns, SUMMARY_COLUMNS, SummaryColumns)
from chainer_computational_cost.fit import FIT_COLUMNS, fit_batch, show_fit
# Shared with the reports' tracebacks, which end in the user's code too.
from chainer_computational_cost.records import _is_under
from chainer_computational_cost.records import is_library_file as _is_library_file  # NOQA

#: Values of --dtype: the float types Chainer can initialise weights in.
DTYPES = ('float16', 'float32', 'float64')


class CommandError(Exception):
    """A problem with what the command was given.

    :func:`main` prints its message as one line on stderr and exits with
    status 2: a traceback into this module would tell the user nothing.
    """


def _chainer_links_model(class_name):
    def build():
        import chainer.links as L
        # Weights cannot (and need not) be downloaded: costs depend on shapes.
        return getattr(L, class_name)(pretrained_model=None)
    return build


#: Model name -> factory, for the models that ship with ``chainer.links``.
MODELS = {
    'vgg16': _chainer_links_model('VGG16Layers'),
    'vgg19': _chainer_links_model('VGG19Layers'),
    'resnet50': _chainer_links_model('ResNet50Layers'),
    'resnet101': _chainer_links_model('ResNet101Layers'),
    'resnet152': _chainer_links_model('ResNet152Layers'),
    'googlenet': _chainer_links_model('GoogLeNet'),
}

#: Built-in model -> the layer whose output is the logits --train's loss
#: needs (by default these models end with a softmax, 'prob').
LOGITS = {
    'vgg16': 'fc8', 'vgg19': 'fc8', 'resnet50': 'fc6', 'resnet101': 'fc6',
    'resnet152': 'fc6', 'googlenet': 'loss3_fc',
}

#: Seed of --train's random labels: the same labels on every run (costs do
#: not depend on them, but a reproducible command is easier to reason about).
LABEL_SEED = 0

#: Beyond this batch size a real run is slow enough for --project to be
#: worth suggesting.
LARGE_BATCH = 8


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _user_location(error):
    """'file:line' of the innermost frame of ``error`` in the user's code,
    or None.

    A model typically fails deep inside Chainer; the line worth showing
    is the user's call that led there.
    """
    if isinstance(error, SyntaxError) and error.filename:
        # The failing line never became a frame: the parser reports it.
        return '{}:{}'.format(error.filename, error.lineno)
    location = None
    for frame, lineno in traceback.walk_tb(error.__traceback__):
        filename = frame.f_code.co_filename
        if not _is_library_file(filename):
            location = '{}:{}'.format(filename, lineno)
    return location


def _is_internal(error):
    """Whether ``error`` was raised inside this package's hook or report
    code: a bug here, whose traceback the user should see and report."""
    frames = list(traceback.walk_tb(error.__traceback__))
    if not frames:
        return False
    path = os.path.abspath(frames[-1][0].f_code.co_filename)
    return (_is_under(path, _PACKAGE_DIR)
            and os.path.basename(path) != '__main__.py')


def _one_line(error):
    """'Type: message' with the message's lines joined: Chainer's type
    check errors span several lines."""
    if isinstance(error, SyntaxError):
        message = error.msg or ''
    else:
        message = str(error)
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    name = type(error).__name__
    return '{}: {}'.format(name, '; '.join(lines)) if lines else name


def _failure(what, error):
    location = _user_location(error)
    where = ' at {}'.format(location) if location else ''
    return CommandError('{}{}: {}'.format(what, where, _one_line(error)))


def _import_factory(spec, module_name, attr):
    try:
        factory = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        # Only the user's own module being absent is a naming mistake; a
        # missing import inside that module is a failure of the module.
        if e.name and (module_name == e.name
                       or module_name.startswith(e.name + '.')):
            raise CommandError('cannot import module {!r} of model {!r}: '
                               '{}'.format(module_name, spec, e))
        raise _failure('importing module {!r} failed'.format(module_name), e)
    except Exception as e:
        raise _failure('importing module {!r} failed'.format(module_name), e)
    for part in attr.split('.'):
        try:
            factory = getattr(factory, part)
        except AttributeError as e:
            raise CommandError('cannot find the factory of model {!r}: '
                               '{}'.format(spec, e))
    if not callable(factory):
        raise CommandError('{} is an object of type {}, not a factory: give '
                           'a function that returns the model'.format(
                               spec, type(factory).__name__))
    return factory


def model_name(spec):
    """The name of a built-in model ``spec`` names in any case
    ('VGG16' is 'vgg16'), else ``spec`` unchanged."""
    return spec.lower() if spec.lower() in MODELS else spec


def _colon_hint(spec):
    """A hint for 'package.module.factory', which names the factory with a
    dot where a colon is needed."""
    module_name, dot, attr = spec.rpartition('.')
    if ':' in spec or not dot or not module_name or not attr:
        return ''
    return ' (a colon before the factory: {}:{}?)'.format(module_name, attr)


def load_model(spec):
    """The model named by ``spec``, built by calling its factory.

    ``spec`` is a name in :data:`MODELS` or ``package.module:factory``
    (the factory is called without arguments). Every failure, the user's
    factory raising included, is a :class:`CommandError` with a one-line
    message.
    """
    if model_name(spec) in MODELS:
        factory = MODELS[model_name(spec)]
    else:
        module_name, sep, attr = spec.partition(':')
        if not sep or not module_name or not attr:
            raise CommandError('unknown model {!r}: use one of {} or '
                               'package.module:factory{}'.format(
                                   spec, ', '.join(sorted(MODELS)),
                                   _colon_hint(spec)))
        factory = _import_factory(spec, module_name, attr)
    try:
        model = factory()
    except Exception as e:
        raise _failure('building the model failed', e)
    if model is None:
        raise CommandError('the factory of {} returned None: it must return '
                           'the model'.format(spec))
    if not callable(model):
        raise CommandError('the factory of {} returned an object of type {}, '
                           'which is not callable: it must return the '
                           'model'.format(spec, type(model).__name__))
    return model


def parse_shape(text):
    """'1,3,224,224' -> (1, 3, 224, 224)."""
    try:
        shape = tuple(int(s) for s in text.split(','))
    except ValueError:
        shape = ()
    if not shape or any(s <= 0 for s in shape):
        raise argparse.ArgumentTypeError(
            'shape must be positive integers separated by commas, e.g. '
            '1,3,224,224; got {!r}'.format(text))
    return shape


def parse_depth(text):
    """The --links value: levels below the root, an integer >= 0."""
    try:
        depth = int(text)
    except ValueError:
        depth = -1
    if depth < 0:
        # The usual slip: '--links resnet50' takes the model for a depth.
        raise argparse.ArgumentTypeError(
            'depth must be an integer >= 0, got {!r} (a --links without a '
            'depth goes after the model)'.format(text))
    return depth


def parse_positive(text):
    """A --peak-flops or --bandwidth value: a finite number > 0
    ('10.6e12')."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            'must be a finite number > 0, e.g. 10.6e12; got {!r}'.format(
                text))
    return value


def parse_columns(text, available):
    """The --columns value as a list of names from ``available``; spaces
    around each name are ignored."""
    columns = [c.strip() for c in text.split(',')]
    if not all(columns):
        raise CommandError('--columns {!r} has an empty column name; '
                           'available columns are {}'.format(
                               text, ', '.join(available)))
    try:
        return rendering.check_columns(columns, available)
    except ValueError as e:
        raise CommandError(str(e))


class _Parser(argparse.ArgumentParser):
    """An argument parser whose mistakes are one ``error:`` line, like
    every other mistake the command reports (argparse would print the
    usage first, a dozen lines of it here)."""

    def error(self, message):
        """Print ``error: message`` on stderr and exit with status 2."""
        self.exit(2, 'error: {} (see --help)\n'.format(message))


#: The value of a --links given without a depth: every level (not a str,
#: which argparse would pass through parse_depth).
_ALL_LEVELS = -1


def _prog():
    """The command's name in its help: the console command's, or
    ``python -m ...``."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ''
    if name.startswith('chainer-computational-cost'):
        return 'chainer-computational-cost'
    return 'python -m chainer_computational_cost'


def build_parser():
    """The argument parser of the command line."""
    parser = _Parser(
        prog=_prog(),
        description='Estimate the theoretical cost (FLOPs, memory read and '
                    'write) of one forward pass or training step of a '
                    'Chainer model, per layer, per type, per link or per '
                    'phase, and the least time it needs on a device.')
    parser.add_argument(
        'model', help='one of {} (any case) or package.module:factory'.format(
            ', '.join(sorted(MODELS))))
    parser.add_argument('--shape', type=parse_shape, default=(1, 3, 224, 224),
                        help='input shape, comma separated, the batch size '
                             'first (default 1,3,224,224)')
    parser.add_argument('--dtype', choices=DTYPES, default='float32',
                        type=str.lower,
                        help='dtype of the input and of the weights '
                             '(default float32)')
    # Values of --unit, --mode, --n-digits and --time-unit are checked by
    # the report's own checks (check_args), so that the command line and
    # the API accept the same values.
    parser.add_argument('--unit', default='autoaligned',
                        help='raw, K, M, G, T, autoaligned or auto, any '
                             'case (default autoaligned: one prefix per '
                             'column)')
    parser.add_argument('--mode', default='md',
                        help='csv, md, table (needs texttable) or json '
                             '(default md)')
    parser.add_argument('--n-digits', type=int, default=3,
                        help='decimals, 0 to 10 (default 3)')
    parser.add_argument('--columns', default=None,
                        help='comma-separated columns (default: the '
                             "report's default set)")
    parser.add_argument('--no-fma', action='store_true',
                        help='count a multiply-add as two FLOPs (as '
                             "datasheets' peak FLOP/s do)")
    parser.add_argument('--flop-convention', choices=('torch',),
                        default=None,
                        help="torch: count convolutions, linear layers and "
                             'matrix products as PyTorch\'s FlopCounterMode '
                             'does (2 FLOPs per multiply-add, bias free)')
    parser.add_argument('--train', action='store_true',
                        help='cost a training step: forward in train mode, '
                             'softmax cross entropy on random labels, '
                             'backward; shows the summary by phase unless '
                             'another report is asked for')
    parser.add_argument('--project', action='store_true',
                        help='compute the report at the batch size of '
                             '--shape from runs at batch 1, 2 and 3 and a '
                             'check run at 9 (the same figures, much faster '
                             'for large batches)')
    parser.add_argument('--measure-time', action='store_true',
                        help='also measure the wall time of each function '
                             '(a time column; efficiency in the roofline '
                             'report)')
    parser.add_argument('--time-unit', default=None,
                        help='unit of time columns: s, ms or us (default us '
                             'in the roofline report, ms otherwise)')
    reports = parser.add_argument_group(
        'reports (one is shown, the first given in this order)')
    reports.add_argument('--device', default=None,
                         help='roofline report on a preset device: {} (any '
                              'case)'.format(', '.join(roofline.DEVICES)))
    reports.add_argument('--peak-flops', type=parse_positive, default=None,
                         metavar='FLOPS',
                         help='roofline report on a device of this peak '
                              'FLOP/s (with --bandwidth)')
    reports.add_argument('--bandwidth', type=parse_positive, default=None,
                         metavar='BYTES',
                         help='memory bandwidth in bytes/s (with '
                              '--peak-flops)')
    reports.add_argument('--links', type=parse_depth, nargs='?',
                         const=_ALL_LEVELS, default=None, metavar='DEPTH',
                         help='per-link tree, DEPTH levels below the root '
                              '(default: all)')
    reports.add_argument('--phases', action='store_true',
                         help='forward / backward / total')
    reports.add_argument('--summary', action='store_true',
                         help='per-type summary (split by phase with '
                              '--train)')
    reports.add_argument('--memory', action='store_true',
                         help='live memory: peak, where, at exit, '
                              'parameters (before the reports above)')
    reports.add_argument('--fit', type=parse_fit, default=None,
                         metavar='DEVICE',
                         help='with --train: the largest batch whose '
                              'training step fits DEVICE ({}) or a '
                              'number of bytes (before any other '
                              'report)'.format(
                                  ', '.join(memory.CAPACITIES)))
    reports.add_argument('--optimizer', type=str.lower, default='adam',
                         choices=list(memory.OPTIMIZERS),
                         help="optimizer state for --fit (default adam)")
    plots_group = parser.add_argument_group(
        'plots (format by extension: {}; need matplotlib)'.format(
            ', '.join('.' + f for f in plots.FORMATS)))
    plots_group.add_argument('--plot-roofline', default=None,
                             metavar='FILE',
                             help='roofline plot (with --device or '
                                  '--peak-flops/--bandwidth)')
    plots_group.add_argument('--plot-summary', default=None, metavar='FILE',
                             help='FLOPs and memory traffic per type')
    plots_group.add_argument('--plot-memory', default=None, metavar='FILE',
                             help='live memory over the calls')
    scaling = parser.add_argument_group(
        'scaling (data-parallel training over N workers, with --train and '
        '--device)')
    scaling.add_argument('--workers', type=parse_workers, default=None,
                         metavar='N,N,...',
                         help='worker counts, e.g. 1,8,64,512: shows the '
                              'scaling report instead of the roofline')
    scaling.add_argument('--network', default=None,
                         help='interconnect: one of {}'.format(
                             ', '.join(network.NETWORKS)))
    return parser


def parse_workers(text):
    """A --workers value: comma-separated ints >= 1 ('1,8,64')."""
    try:
        workers = [int(w) for w in text.split(',')]
    except ValueError:
        workers = []
    if not workers or min(workers) < 1:
        raise argparse.ArgumentTypeError(
            'must be comma-separated ints >= 1, e.g. 1,8,64; got {!r}'
            .format(text))
    return workers


def check_scaling(args):
    """Whether the scaling report is asked for (--workers, --network);
    CommandError for an incomplete or wrong request."""
    if args.workers is None and args.network is None:
        return False
    if args.workers is None or args.network is None:
        raise CommandError('--workers and --network go together: e.g. '
                           '--workers 1,8,64 --network ib-hdr200')
    if not args.train:
        raise CommandError('--workers needs --train: scaling is of a '
                           'training step')
    if args.device is None and args.peak_flops is None:
        raise CommandError('--workers needs a --device ({}) or --peak-flops '
                           'and --bandwidth'.format(
                               ', '.join(roofline.DEVICES)))
    try:
        network.resolve_network(args.network)
    except ValueError as e:
        raise CommandError(str(e))
    return True


# The report kinds: the columns each can show, its default columns and,
# when they differ from those plus 'time', its default columns with
# measured times.
_KINDS = {
    'roofline': (roofline.ROOFLINE_COLUMNS, roofline.RooflineColumns.DEFAULT,
                 roofline.RooflineColumns.TIMED),
    'links': (LINK_COLUMNS, LinkColumns.DEFAULT, None),
    'phases': (PHASE_COLUMNS, PhaseColumns.DEFAULT, None),
    'summary': (SUMMARY_COLUMNS, SummaryColumns.DEFAULT,
                None),
    'layers': (LAYER_COLUMNS, ReportColumns.DEFAULT, None),
    'memory': (tuple(memory.MEMORY_COLUMNS), memory.MEMORY_COLUMNS, None),
    'fit': (tuple(FIT_COLUMNS), FIT_COLUMNS, None),
}


def report_kind(args):
    """The one report a run shows: 'roofline', 'links', 'phases',
    'summary' or 'layers', the first asked for in that order (--train
    alone asks for the summary)."""
    if args.fit is not None:
        return 'fit'
    if args.memory:
        return 'memory'
    if args.device is not None or args.peak_flops is not None \
            or args.bandwidth is not None:
        return 'roofline'
    if args.links is not None:
        return 'links'
    if args.phases:
        return 'phases'
    if args.summary or args.train:
        return 'summary'
    return 'layers'


def default_columns(kind, measure_time):
    """The columns of ``kind`` shown without --columns: a measured time is
    the point of --measure-time, so it is shown."""
    available, columns, timed = _KINDS[kind]
    if not measure_time:
        return list(columns)
    if timed is not None:
        return list(timed)
    return list(columns) + ['time']


def _check_plot_path(path, option):
    """A plot is written after the (possibly long) run: a file that cannot
    be written must be found before it."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise CommandError('{} {!r} is a directory: give a file name such '
                           'as plot.png'.format(option, path))
    if not os.path.isdir(directory):
        raise CommandError('{} {!r}: directory {!r} does not exist'.format(
            option, path, directory))
    try:
        plots.plot_format(path)
    except ValueError as e:
        raise CommandError('{}: {}'.format(option, e))


#: Option attribute -> (option, the report's check of its value, which
#: returns the value in its canonical spelling).
_VALUE_CHECKS = {
    'unit': ('--unit', rendering.check_unit),
    'mode': ('--mode', rendering.check_mode),
    # The help says 0 to 10: 11 is refused, not read as 10.
    'n_digits': ('--n-digits', lambda value, option: rendering.check_n_digits(
        value, option, above=False)),
    'time_unit': ('--time-unit', rendering.check_time_unit),
}


def _check_values(args):
    """Check and canonicalise the values the API checks too ('g' is 'G'),
    and the names of built-in models and devices (any case)."""
    for attr, (option, check) in _VALUE_CHECKS.items():
        value = getattr(args, attr)
        if value is None:  # an option whose default depends on the report
            continue
        try:
            setattr(args, attr, check(value, option))
        except ValueError as e:
            raise CommandError(str(e))
    args.model = model_name(args.model)
    if args.device is not None and args.device.lower() in roofline.DEVICES:
        args.device = args.device.lower()


def _require(module, needed_by, extra):
    """CommandError unless the optional package ``module`` imports: known
    before the run, not after it."""
    try:
        importlib.import_module(module)
    except ImportError:
        raise CommandError('{} needs the {} package: pip install {}, or '
                           "install chainer_computational_cost with the "
                           '[{}] extra'.format(needed_by, module, module,
                                               extra))


def _check_packages(args):
    if args.mode == 'table':
        _require('texttable', '--mode table', 'table')
    for option in ('--plot-roofline', '--plot-summary'):
        if getattr(args, option[2:].replace('-', '_')) is not None:
            _require('matplotlib', option, 'plot')


def _empty_columns(kind, columns, args):
    """(column, why) for the first of ``columns`` the run leaves empty in
    every row, or None."""
    timed = ('time', 'efficiency')
    for c in columns:
        if c in timed and not args.measure_time:
            return c, 'times are measured only with --measure-time'
        if c == 'phase' and kind == 'summary' and not args.train:
            return c, ('the summary is split by phase only with --train (the '
                       'layer report has a phase column)')
    return None


def check_args(args):
    """Every check that needs no model: raise CommandError, or return the
    report kind and its columns.

    A mistake must be reported before the model is built and run, which
    can take minutes.  Values are canonicalised in ``args`` on the way.
    """
    _check_values(args)
    kind = report_kind(args)
    if args.device is not None and (args.peak_flops is not None
                                    or args.bandwidth is not None):
        raise CommandError('give either --device or --peak-flops and '
                           '--bandwidth, not both')
    if args.device is None and (args.peak_flops is None) != (
            args.bandwidth is None):
        given, missing = (('--peak-flops', '--bandwidth')
                          if args.bandwidth is None
                          else ('--bandwidth', '--peak-flops'))
        raise CommandError('{} needs {} (or give a --device: {})'.format(
            given, missing, ', '.join(roofline.DEVICES)))
    if args.device is not None:
        try:
            roofline.resolve_device(args.device)
        except ValueError as e:
            raise CommandError(str(e))
    if args.plot_roofline is not None and kind != 'roofline':
        raise CommandError('--plot-roofline needs a device: --device ({}) '
                           'or --peak-flops and --bandwidth'.format(
                               ', '.join(roofline.DEVICES)))
    if args.fit is not None and not args.train:
        raise CommandError('--fit needs --train: it sizes the batch of a '
                           'training step')
    if args.fit is not None and (args.plot_roofline or args.plot_summary
                                 or args.plot_memory):
        raise CommandError('--fit draws no plot: run without --fit at the '
                           'batch it gives for the plots')
    if args.project and args.measure_time:
        raise CommandError('--project and --measure-time exclude each '
                           'other: a projected report has no measured '
                           'times (measure a real run at the batch size)')
    for path, option in ((args.plot_roofline, '--plot-roofline'),
                         (args.plot_summary, '--plot-summary'),
                         (args.plot_memory, '--plot-memory')):
        if path is not None:
            _check_plot_path(path, option)
    _check_packages(args)
    if args.columns is not None:
        columns = parse_columns(args.columns, _KINDS[kind][0])
        empty = _empty_columns(kind, columns, args)
        if empty is not None:
            raise CommandError('--columns: column {!r} would be empty: '
                               '{}'.format(*empty))
    else:
        columns = default_columns(kind, args.measure_time)
    return kind, columns


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
    """``call(x)``: one forward pass, or with --train one training step,
    each failure of the user's code a CommandError."""
    logits_layer = LOGITS.get(args.model) if args.train else None

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


def parse_fit(text):
    """--fit's value: a device preset with a memory capacity, or a
    number of bytes."""
    if text in memory.CAPACITIES:
        return text
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(
            '{!r} is neither a device ({}) nor a number of bytes > '
            '0'.format(text, ', '.join(memory.CAPACITIES)))
    return int(value)


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


def _joined_values(parser, argv):
    """``argv`` with 'OPTION -VALUE' written 'OPTION=-VALUE' where OPTION
    takes one value: argparse reads '--shape -1,3' as an option missing
    its value, while the value's own check says what is wrong with it."""
    takes_one = {o for a in parser._actions if a.option_strings
                 and a.nargs is None for o in a.option_strings}
    out = []
    for arg in argv:
        if out and out[-1] in takes_one and arg[1:2].isdigit() \
                and arg.startswith('-'):
            out[-1] = '{}={}'.format(out[-1], arg)
        else:
            out.append(arg)
    return out


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
