"""The command line's arguments: the parsers of its commands (a model's
report, ``calibrate``, ``netbench``), the parsing of option values, every
check that needs no model (:func:`check_args`), so that a mistake is
reported before a run that may take minutes, and the one way every
command reports a mistake (:class:`CommandParser`,
:func:`report_errors`: one ``error:`` line, status 2).

Values the API takes too (unit, mode, decimals, columns) go through the
same checks as the API (:mod:`~chainer_computational_cost.report.rendering`).
Part of the command line (``__main__``).
"""

import argparse
import collections
import contextlib
import decimal
import difflib
import errno
import importlib
import math
import os
import re
import sys
import textwrap

from chainer_computational_cost import __version__
from chainer_computational_cost.analysis import memory
from chainer_computational_cost.analysis import network
from chainer_computational_cost.analysis.calibration import Calibration
from chainer_computational_cost.cli.models import CommandError
from chainer_computational_cost.cli.models import model_name
from chainer_computational_cost.cli.models import MODELS
from chainer_computational_cost.core import checks
from chainer_computational_cost.core import devices
from chainer_computational_cost.core.columns import (
    LAYER_COLUMNS, LAYER_DEFAULT, LINK_COLUMNS, LINK_DEFAULT, PHASE_COLUMNS,
    PHASE_DEFAULT, SUMMARY_COLUMNS, SUMMARY_DEFAULT, TIME_BY,
    TIME_REPORT_COLUMNS)
from chainer_computational_cost.core.columns import empty_time_column
from chainer_computational_cost.core.columns import PREFIXES
from chainer_computational_cost.core.columns import ROOFLINE_COLUMNS
from chainer_computational_cost.core.columns import ROOFLINE_DEFAULT
from chainer_computational_cost.core.columns import ROOFLINE_TIMED
from chainer_computational_cost.report import plots
from chainer_computational_cost.report import rendering
from chainer_computational_cost.run import fit
from chainer_computational_cost.run import measure
from chainer_computational_cost.run import netbench
from chainer_computational_cost.run.fit import FIT_COLUMNS

#: Values of --dtype: the float types Chainer can initialise weights in.
DTYPES = ('float16', 'float32', 'float64')


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


def parse_name(text):
    """netbench's --name: a name that is not blank (the default,
    netbench-N, is had by leaving the option out)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "must be a name, got {!r} (leave --name out for "
            "netbench-N)".format(text))
    return text


def parse_depth(text):
    """The --links value: levels below the root, an integer >= 0."""
    try:
        depth = int(text)
    except ValueError:
        depth = None
    if depth is None or depth < 0:
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
    around each name and case are ignored (every name is lower case), as
    in the other options' choices."""
    columns = [c.strip().lower() for c in text.split(',')]
    if not all(columns):
        raise CommandError('--columns {!r} has an empty column name; '
                           'available columns are {}'.format(
                               text, ', '.join(available)))
    try:
        return rendering.check_columns(columns, available)
    except ValueError as e:
        raise CommandError('--columns: {}'.format(e))


class CommandParser(argparse.ArgumentParser):
    """The parser of every command (the main one, ``calibrate``,
    ``netbench``): its mistakes are a :class:`CommandError`, reported by
    :func:`report_errors` as one ``error:`` line like every other mistake
    (argparse would print the usage first, a dozen lines of it, and under
    MPI once per rank)."""

    #: True on the ranks of netbench but rank 0: --help and --version
    #: print nothing there (once per command, not once per rank).
    quiet = False

    def error(self, message):
        """Raise ArgumentsError('message (see --help)'); an unrecognized
        option gets the nearest of the command's options as a
        suggestion."""
        if message.startswith(_UNRECOGNIZED):
            message += _suggestion(self, message[len(_UNRECOGNIZED):].split())
        error = _MissingArguments if message.startswith(_REQUIRED) \
            else ArgumentsError
        raise error('{} (see --help)'.format(message))

    def parse_known_args(self, args=None, namespace=None):
        """argparse's, on the arguments with 'OPTION -VALUE' joined (see
        :func:`joined_values`), for every command alike.  A required
        option missing beside an option the command does not know (a
        misspelt ``--ou`` for ``--out``) is told as the unknown one."""
        args = joined_values(
            self, sys.argv[1:] if args is None else list(args))
        try:
            return super(CommandParser, self).parse_known_args(
                args, namespace)
        except _MissingArguments:
            unknown = _unknown_options(self, args)
            if unknown:
                self.error(_UNRECOGNIZED + ' '.join(unknown))
            raise

    def _print_message(self, message, file=None):
        # (argparse's one way out for --help and --version) written as a
        # report is: a stdout that cannot take it is status 1, not 0
        if message and not self.quiet and launcher_rank() == 0:
            status = write_out(file or sys.stderr, message, 'the help' if
                               message.startswith('usage:') else
                               'the version')
            if status:
                raise SystemExit(status)


class ArgumentsError(CommandError):
    """A mistake the parser finds: after its line, :func:`report_errors`
    exits with status 2 (SystemExit), as argparse does."""


class _MissingArguments(ArgumentsError):
    """argparse's 'the following arguments are required'."""


#: How argparse begins the messages CommandParser rewords.
_UNRECOGNIZED = 'unrecognized arguments: '
_REQUIRED = 'the following arguments are required'


def _unknown_options(parser, args):
    """The options among ``args`` (up to ``--``) that ``parser`` does not
    know."""
    unknown = []
    for arg in args:
        if arg == '--':
            break
        if arg.startswith('-') and arg != '-' and \
                not parser._negative_number_matcher.match(arg) and \
                arg.split('=', 1)[0] not in parser._option_string_actions:
            unknown.append(arg)
    return unknown


#: Options of another name that mean one of ours, looked up before
#: spellings near ours (which would answer ``--batch`` with
#: ``--bandwidth`` and ``--format`` with ``--no-fma``): the link report's
#: depth is what ``--links`` takes, the batch size the first number of
#: ``--shape``, the output format ``--mode``.
SYNONYMS = {
    '--depth': '--links', '--max-depth': '--links',
    '--batch': '--shape', '--batch-size': '--shape',
    '--batchsize': '--shape', '--input-shape': '--shape',
    '--format': '--mode', '--output-format': '--mode',
    '--precision': '--dtype',
}


def _suggestion(parser, unknown):
    """'; did you mean --shape?' for the first of the ``unknown``
    arguments that is near one of ``parser``'s long options, or means one
    (:data:`SYNONYMS`); '' if none is."""
    options = [o for o in parser._option_string_actions
               if o.startswith('--')]
    for arg in _unknown_options(parser, unknown):
        name = arg.split('=', 1)[0]
        found = [SYNONYMS[name]] if SYNONYMS.get(name) in options else \
            difflib.get_close_matches(name, options, n=1, cutoff=0.6)
        if found:
            return '; did you mean {}?'.format(found[0])
    return ''


#: Exit status after the reader of stdout went away (``| head``): that of
#: a Unix tool killed by SIGPIPE, as a shell reports it.
BROKEN_PIPE_STATUS = 128 + 13
#: Exit status after Ctrl-C (SIGINT), as a shell reports a tool it
#: stopped.
INTERRUPTED_STATUS = 128 + 2
#: Exit status when a report, a calibration or a network file could
#: not be written (a full disk).
WRITE_FAILED_STATUS = 1


#: The environment variables in which MPI launchers give a process its
#: rank: MPICH's (Hydra's), PMIx's, Open MPI's, MVAPICH2's, Slurm's.
_RANK_VARIABLES = ('PMI_RANK', 'PMIX_RANK', 'OMPI_COMM_WORLD_RANK',
                   'MV2_COMM_WORLD_RANK', 'SLURM_PROCID')


def launcher_rank():
    """The rank an MPI launcher (``mpiexec``) gave this process, read from
    its environment without starting MPI; 0 when run alone.  Whatever
    command runs under ``mpiexec``, only rank 0 tells a mistake or prints
    --help, once for the command, not once per rank."""
    return _launcher_figure(_RANK_VARIABLES, 0)


def _launcher_figure(names, alone):
    """The int of the first of ``names`` set in the environment, else
    ``alone``."""
    for name in names:
        try:
            return int(os.environ[name])
        except (KeyError, ValueError):
            pass
    return alone


#: Environment variables in which MPI launchers give the number of ranks
#: (not SLURM_NTASKS: a batch script's own single process has it too).
_SIZE_VARIABLES = ('PMI_SIZE', 'OMPI_COMM_WORLD_SIZE', 'MV2_COMM_WORLD_SIZE')


def launcher_size():
    """How many ranks an MPI launcher started, read from its environment
    as :func:`launcher_rank` reads the rank; 1 when run alone."""
    return _launcher_figure(_SIZE_VARIABLES, 1)


def own_error(message):
    """The ``error:`` line of a failure this process met on its own:
    under mpiexec, a rank but 0 names itself (``error: rank 1: ...``),
    since the other ranks may not share it."""
    rank = launcher_rank()
    return 'error: {}{}'.format(
        'rank {}: '.format(rank) if rank else '', message)


#: What saving a file a command checked before its work may raise: an
#: OSError (a full disk) or checks.UnwritableFile (its directory gone).
WRITE_ERRORS = (OSError, checks.UnwritableFile)


def cannot_write(path, error):
    """The ``error:`` line of a file ``path`` that was found writable
    before the work and could not be saved after it (``error``, one of
    :data:`WRITE_ERRORS`; an UnwritableFile names the file itself)."""
    if isinstance(error, OSError):
        return 'error: cannot write {}: {}'.format(
            path, error.strerror or error)
    return 'error: {}'.format(error)


def _stdout_to_devnull():
    """Point stdout at /dev/null: Python flushes it again at exit, which
    must not fail a second time (as Python's documentation of SIGPIPE
    advises)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


#: The most characters :func:`write_out` writes at once.
WRITE_PIECE = 8192


def write_out(ost, text, what):
    """Write a command's output ``text`` (``what`` it is: 'the report')
    to ``ost`` and flush it; the command's status: 0; for a reader that
    went away (a pipe into head), :data:`BROKEN_PIPE_STATUS`, quietly;
    for a stream that cannot take it (a full disk; a closed stdout,
    ``>&-``, which Python gives as None), one ``error: cannot write``
    line and :data:`WRITE_FAILED_STATUS`."""
    try:
        if ost is None:  # as a write to the closed descriptor fails
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        # In pieces: a pipe whose reader goes away during one large write
        # takes part of it and Python raises nothing (the rest is lost,
        # status 0); the next piece's write fails.
        for start in range(0, len(text), WRITE_PIECE):
            ost.write(text[start:start + WRITE_PIECE])
            ost.flush()
        ost.flush()
    except BrokenPipeError:
        if ost is sys.stdout:
            _stdout_to_devnull()
        return BROKEN_PIPE_STATUS
    except OSError as e:
        # (Python's flush at exit finds nothing left to write: no second
        # error.)
        say(own_error('cannot write {}: {}'.format(what, e.strerror or e)))
        return WRITE_FAILED_STATUS
    return 0


def say(text):
    """Write a line to stderr; a stderr that cannot take it is let be."""
    try:
        sys.stderr.write(text + '\n')
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


#: Exit status of a mistake: argparse's, and every command's.
MISTAKE_STATUS = 2


@contextlib.contextmanager
def on_this_rank():
    """Mark the CommandErrors raised inside as this rank's own (``local``):
    what they tell (the user's model, a file, memory) may differ between
    the ranks of ``mpiexec``, and a rank but 0 that failed alone must
    still be heard."""
    try:
        yield
    except CommandError as e:
        e.local = True
        raise


def report_errors(body, tell=say):
    """``body()``'s exit status, or, for a :class:`CommandError` it
    raises, :data:`MISTAKE_STATUS` after one ``error:`` line given to
    ``tell``: by rank 0 (see :func:`launcher_rank`) for a mistake every
    rank finds alike (the arguments), once for the command; by every
    rank that meets it, named by its rank but on rank 0, for a ``local``
    one (see :func:`on_this_rank`), which the other ranks may not share.
    (netbench's ranks but rank 0 tell nothing: its ranks agree on its
    failures, which rank 0 tells.)  Every command reports its mistakes
    through this one function."""
    try:
        return body()
    except CommandError as e:
        if e.local or launcher_rank() == 0:
            tell(own_error(e))
        if isinstance(e, ArgumentsError):
            raise SystemExit(MISTAKE_STATUS)
        return MISTAKE_STATUS


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's help, wrapped to the terminal as usual, but never inside
    an option's name ('--peak-' / 'flops')."""

    def _split_lines(self, text, width):
        return textwrap.wrap(' '.join(text.split()), width,
                             break_on_hyphens=False)

    def _fill_text(self, text, width, indent):
        return textwrap.fill(' '.join(text.split()), width,
                             initial_indent=indent, subsequent_indent=indent,
                             break_on_hyphens=False)


#: The value of a --links given without a depth: every level (not a str,
#: which argparse would pass through parse_depth).
ALL_LEVELS = math.inf


def _prog():
    """The command's name in its help: the console command's, or
    ``python -m ...``."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ''
    if name.startswith('chainer-computational-cost'):
        return 'chainer-computational-cost'
    return 'python -m chainer_computational_cost'


#: The commands beside a model's report: name -> what it does (in the
#: main --help).
COMMANDS = collections.OrderedDict([
    ('calibrate', 'measure this machine (NumPy) and save a calibration '
                  'for --predict-time'),
    ('netbench', "under mpiexec, measure a ChainerMN communicator's "
                 'all-reduce and save a network file for --network'),
])


def build_parser():
    """The argument parser of the command line (a model's report; the
    other commands have :func:`build_calibrate_parser` and
    :func:`build_netbench_parser`)."""
    # allow_abbrev=False: '--shap' is a mistake, not '--shape' (a
    # prefix that names an option today may name two tomorrow).
    parser = CommandParser(
        prog=_prog(), allow_abbrev=False, formatter_class=_HelpFormatter,
        # every option's [--name VALUE] would be twenty lines: the options
        # are listed below it anyway
        usage='%(prog)s MODEL [options]',
        description='Estimate the theoretical cost (FLOPs, memory read and '
                    'write) of one forward pass or training step of a '
                    'Chainer model, per layer, per type, per link or per '
                    'phase, and the least time it needs on a device.',
        epilog='Other commands, typed in place of MODEL, each with its '
               'own --help: ' + '; '.join(
            '{}: {}'.format(c, what) for c, what in COMMANDS.items()) + '.')
    # The order of the calls is the order of --help and of the manual's
    # reference: the untitled options first, then one titled group each.
    _add_model_options(parser)
    _add_format_options(parser)
    _add_counting_options(parser)
    _add_run_options(parser)
    _add_report_options(parser)
    _add_plot_options(parser)
    _add_scaling_options(parser)
    return parser


def _add_model_options(parser):
    """--version, the model and its input: MODEL, --shape, --dtype."""
    _add_version(parser)
    parser.add_argument(
        'model', metavar='MODEL',
        help='one of {} (any case) or package.module:factory'.format(
            ', '.join(sorted(MODELS))))
    parser.add_argument('--shape', type=parse_shape, default=(1, 3, 224, 224),
                        metavar='N,C,H,W',
                        help='input shape, comma separated, the batch size '
                             'first (default 1,3,224,224)')
    parser.add_argument('--dtype', choices=DTYPES, default='float32',
                        type=str.lower,
                        help='dtype of the input and of the weights '
                             '(default float32)')


def _add_format_options(parser):
    """How figures are printed: --unit, --mode, --n-digits, --columns."""
    # Values of --unit, --mode, --n-digits and --time-unit are checked by
    # the report's own checks (check_args), so that the command line and
    # the API accept the same values.
    # None: not given (see _output_defaults: json's default differs).
    parser.add_argument('--unit', default=None, metavar='UNIT',
                        help='raw, K, M, G, T, autoaligned or auto, any '
                             'case (default autoaligned: one prefix per '
                             'column; with --mode json, raw)')
    parser.add_argument('--mode', default='md', metavar='MODE',
                        help='csv, md, table (needs texttable) or json '
                             '(default md)')
    parser.add_argument('--n-digits', type=typed(int, 'an int from 0 to 10'),
                        default=None, metavar='N',
                        help='decimals, 0 to 10 (default 3; with --mode '
                             'json and no --unit, no rounding)')
    parser.add_argument('--columns', default=None, metavar='COL,...',
                        help='comma-separated columns (default: the '
                             "report's default set)")


def _add_counting_options(parser):
    """How FLOPs are counted: --no-fma, --flop-convention."""
    parser.add_argument('--no-fma', action='store_true',
                        help='count a multiply-add as two FLOPs (as '
                             "datasheets' peak FLOP/s do; the default, "
                             "one, is 0.1.2's): the FLOP columns' headers "
                             "end with '(2 per multiply-add)', JSON has "
                             '"flops_per_multiply_add": 2')
    parser.add_argument('--flop-convention', choices=('torch',),
                        type=str.lower,
                        default=None,
                        help="torch: count convolutions, linear layers and "
                             'matrix products as PyTorch\'s FlopCounterMode '
                             'does (2 FLOPs per multiply-add, bias free)')


def _add_run_options(parser):
    """What is run and timed: --train, --project, --measure-time,
    --time-unit."""
    parser.add_argument('--train', action='store_true',
                        help='cost a training step: forward in train mode, '
                             'softmax cross entropy on random labels, '
                             'backward; shows the summary by phase unless '
                             'another report is asked for')
    parser.add_argument('--project', action='store_true',
                        help='compute the report at the batch size of '
                             '--shape from runs at batch 1, 2 and 3 and a '
                             'check run at 9, and 4 and 14 when a call\'s '
                             'memory does not follow the batch on a line '
                             '(the same figures, much faster for large '
                             'batches)')
    parser.add_argument('--measure-time', action='store_true',
                        help='also measure the wall time of each function '
                             '(a time column; efficiency in the roofline '
                             'report)')
    parser.add_argument('--time-unit', default=None, metavar='UNIT',
                        help='unit of time columns: s, ms or us (default us '
                             'in the roofline report, ms otherwise)')


def _add_report_options(parser):
    """The group "reports": the reports beside the layer report."""
    # Group titles are short (a heading in the help and in the manual's
    # reference); what they need to say goes in their description, which
    # argparse wraps to the terminal.
    reports = parser.add_argument_group(
        'reports',
        'Every report given is printed: --fit, --memory, then the others '
        'in the order listed here. Without any, the layer report (with '
        '--train, the summary by phase).')
    reports.add_argument('--device', default=None, metavar='DEVICE',
                         help='roofline report on a preset device: {} (any '
                              'case)'.format(', '.join(devices.DEVICES)))
    reports.add_argument('--peak-flops', type=parse_positive, default=None,
                         metavar='FLOPS',
                         help='roofline report on a device of this peak '
                              'FLOP/s (with --bandwidth)')
    reports.add_argument('--bandwidth', type=parse_positive, default=None,
                         metavar='BYTES',
                         help='memory bandwidth in bytes/s (with '
                              '--peak-flops)')
    reports.add_argument('--links', type=parse_depth, nargs='?',
                         const=ALL_LEVELS, default=None, metavar='DEPTH',
                         help='per-link tree, DEPTH levels below the root '
                              '(default: all)')
    reports.add_argument('--phases', action='store_true',
                         help='forward / backward (/ update, with --train) '
                              '/ total')
    reports.add_argument('--summary', action='store_true',
                         help='per-type summary (split by phase with '
                              '--train)')
    _add_memory_report_options(reports)
    reports.add_argument('--predict-time', default=None, metavar='FILE',
                         help='predicted time of each call from a '
                              'calibration saved in FILE (see `calibrate '
                              '--out FILE`), beside the roofline on its '
                              'measured peak')
    reports.add_argument('--predict-by', default=None, type=str.lower,
                         choices=TIME_BY,
                         help='with --predict-time: per layer (default), '
                              'type, link or phase')


def _add_memory_report_options(reports):
    """The memory reports of the group "reports": --memory, --fit,
    --margin, --optimizer."""
    reports.add_argument('--memory', action='store_true',
                         help='live memory: peak, where, at exit, '
                              'parameters (before the reports above)')
    reports.add_argument('--fit', type=parse_fit, default=None,
                         metavar='DEVICE',
                         help='with --train: the largest batch whose '
                              'training step fits DEVICE (a GPU: {}) or a '
                              'whole number of bytes, 1e5 allowed (before '
                              'any other report)'.format(
                                  ', '.join(fit.gpu_presets())))
    reports.add_argument('--margin', type=parse_margin, default=None,
                         metavar='MARGIN',
                         help="with --fit: memory kept free, in bytes (an "
                              "integer), a fraction of the capacity in "
                              "[0, 1) or 'cuda' (the CUDA context and the "
                              "memory pool's slack); default 'cuda' on a "
                              "DEVICE, 0 with bytes")
    # None: not given (refused without --train); 'adam' once checked.
    reports.add_argument('--optimizer', type=str.lower, default=None,
                         choices=list(memory.OPTIMIZERS),
                         help='with --train: the optimizer whose update the '
                              'step runs and whose state --fit counts '
                              '(default adam)')


def _add_plot_options(parser):
    """The group "plots": --plot-roofline, --plot-summary,
    --plot-memory."""
    plots_group = parser.add_argument_group(
        'plots', 'Written to FILE, in the format of its extension ({}); '
        'they need matplotlib.'.format(
            ', '.join('.' + f for f in plots.FORMATS)))
    plots_group.add_argument('--plot-roofline', default=None,
                             metavar='FILE',
                             help='roofline plot (with --device or '
                                  '--peak-flops/--bandwidth)')
    plots_group.add_argument('--plot-summary', default=None, metavar='FILE',
                             help='FLOPs and memory traffic per type')
    plots_group.add_argument('--plot-memory', default=None, metavar='FILE',
                             help='live memory over the calls')


def _add_scaling_options(parser):
    """The group "scaling": --workers, --network and the scaling report's
    options."""
    scaling = parser.add_argument_group(
        'scaling', 'Data-parallel training over N workers (with --train '
        'and --device).')
    scaling.add_argument('--workers', type=parse_workers, default=None,
                         metavar='N,N,...',
                         help='worker counts, e.g. 1,8,64,512: shows the '
                              'scaling report instead of the roofline')
    scaling.add_argument('--network', default=None, metavar='NET',
                         help='interconnect: one of {}, or a network file '
                              '(*.json) from netbench (an existing file of '
                              'another name is read as one too)'.format(
                                  ', '.join(devices.NETWORKS)))
    scaling.add_argument('--step-time', type=typed(
        float, 'a finite number > 0 (seconds)'), default=None,
                         metavar='SECONDS',
                         help="one worker's measured training step at the "
                              'batch, spread over the calls (default: '
                              'the roofline time)')
    scaling.add_argument('--overlap', default=None, type=str.lower,
                         choices=list(network.OVERLAPS),
                         help='how the all-reduce meets the backward '
                              '(default none: after it, as ChainerMN)')
    scaling.add_argument('--bucket-bytes', type=parse_bytes, default=None,
                         metavar='BYTES',
                         help='with --overlap ddp or horovod: the bucket '
                              '(fusion buffer) size (default 25 MiB, '
                              '64 MiB)')
    scaling.add_argument('--gpus-per-node', type=typed(int, 'an int >= 1'),
                         default=None,
                         metavar='G',
                         help='workers per node: a hierarchical '
                              'all-reduce (default 1)')
    scaling.add_argument('--node-network', default=None, metavar='NET',
                         help='the interconnect inside a node (default '
                              '--network)')
    scaling.add_argument('--plot-scaling', default=None, metavar='FILE',
                         help='efficiency against the workers, a line per '
                              'overlap mode (needs matplotlib)')
    scaling.add_argument('--jitter', type=typed(
        float, 'a finite number >= 0'), default=None,
                         metavar='CV',
                         help="coefficient of variation of a worker's "
                              'step: the wait for the slowest (default '
                              '{} with --scaling-model sourced, else 0; '
                              '0 turns it off)'.format(
                                  network.DEFAULT_JITTER))
    scaling.add_argument('--scaling-model', default=None, type=str.lower,
                         choices=list(network.SCALING_MODELS),
                         help='sourced (default): effective bus '
                              'bandwidths, compute slowed by overlapped '
                              'all-reduces, negotiation and stragglers, '
                              'from published measurements; bound: line '
                              'rates and none of them (an upper bound)')
    scaling.add_argument('--measured', type=parse_measured, default=None,
                         action=_MeasuredSteps, metavar='N=SECONDS',
                         help='a step measured on N workers, e.g. 8=0.31: '
                              'the larger counts are predicted from it; '
                              'steps on two counts: 8=0.31,16=0.35 or the '
                              'option twice')
    scaling.add_argument('--accumulation', type=typed(
        int, 'an int >= 1 (micro-batches per all-reduce)'), default=None,
                         metavar='K',
                         help='micro-batches each worker runs per '
                              'all-reduce (default 1)')
    scaling.add_argument('--cycle-time', type=typed(
        float, 'a finite number > 0 (seconds)'), default=None,
                         metavar='SECONDS',
                         help="with --overlap horovod: Horovod's cycle "
                              '(default 0.005)')


#: A valid value of each option of :func:`build_parser` (None: the option
#: takes no value; a tuple: several values, each worth a run of its own),
#: for tests that combine options (tests/cli/test_args_pairs.py runs every
#: pair): an option without a line here fails that test, which names it.
#: A file's name is an example: the caller puts a file there.
SAMPLE_VALUES = {
    '--shape': '5,3', '--dtype': 'float64',
    '--unit': 'raw', '--mode': ('json', 'csv'), '--n-digits': '1',
    '--columns': 'name,flops',
    '--no-fma': None, '--flop-convention': 'torch',
    '--train': None, '--project': None, '--measure-time': None,
    '--time-unit': 's',
    '--device': 'a100', '--peak-flops': '1e12', '--bandwidth': '1e11',
    '--links': None, '--phases': None, '--summary': None, '--memory': None,
    '--fit': '1e6', '--margin': '0.1', '--optimizer': 'sgd',
    '--predict-time': 'calibration.json', '--predict-by': 'type',
    '--plot-roofline': 'roofline.png', '--plot-summary': 'summary.png',
    '--plot-memory': 'memory.png',
    '--workers': '1,8', '--network': 'ib-edr', '--step-time': '0.1',
    '--overlap': 'horovod', '--bucket-bytes': '1000000',
    '--gpus-per-node': '4', '--node-network': 'nvlink-a100',
    '--plot-scaling': 'scaling.png', '--jitter': '0.1',
    '--scaling-model': 'bound', '--measured': '8=0.5',
    '--cycle-time': '0.001', '--accumulation': '4',
}

#: An option of the command line with a valid value: ``arguments`` as
#: typed (``['--mode', 'json']``), None when it has no sample value.
OptionSpec = collections.namedtuple('OptionSpec', 'option arguments')


def option_specs():
    """Every option of :func:`build_parser` but --help and --version
    (which print and exit), in the order of --help, as
    :class:`OptionSpec`: once per value of :data:`SAMPLE_VALUES`, once
    with ``arguments`` None for an option that has none there."""
    specs = []
    for group in build_parser()._action_groups:
        for action in group._group_actions:
            if not action.option_strings or \
                    action.dest in ('help', 'version'):
                continue
            option = action.option_strings[-1]
            values = SAMPLE_VALUES.get(option, ())
            if not isinstance(values, tuple):
                values = (values,)
            specs.extend(OptionSpec(option, [option] + (
                [] if value is None else [value])) for value in values)
            if not values:
                specs.append(OptionSpec(option, None))
    return specs


#: The scaling report's options beyond --workers and --network: option
#: attribute -> scaling_report's keyword.
SCALING_OPTIONS = collections.OrderedDict([
    ('step_time', 'step_time'), ('overlap', 'overlap'),
    ('bucket_bytes', 'bucket_bytes'), ('gpus_per_node', 'gpus_per_node'),
    ('node_network', 'node_network'), ('jitter', 'jitter'),
    ('scaling_model', 'model'), ('measured', 'measured'),
    ('cycle_time', 'cycle_time'), ('accumulation', 'accumulation')])


#: scaling_report's keyword -> the option that gives it, as the checks'
#: messages name it.
SCALING_NAMES = {k: '--' + a.replace('_', '-')
                 for a, k in SCALING_OPTIONS.items()}


def scaling_options(args):
    """The keywords of scaling_report the options give (the ones given
    only)."""
    return {k: getattr(args, a) for a, k in SCALING_OPTIONS.items()
            if getattr(args, a, None) is not None}


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
    try:  # the rest is scaling_report's check (a repeated count)
        return network.check_workers(workers)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def parse_measured(text):
    """A --measured value: ``N=SECONDS`` or ``N=SECONDS,N=SECONDS``,
    steps measured on N > 1 workers, as a list of ``(N, seconds)``."""
    pairs = []
    for part in text.split(','):
        n, _, seconds = part.partition('=')
        try:
            n = int(n)
            float(seconds)
        except ValueError:
            raise argparse.ArgumentTypeError(
                'must be N=SECONDS, a step measured on N workers, e.g. '
                '8=0.31 (two: 8=0.31,16=0.35); got {!r}'.format(text))
        try:  # (a float that is not the number typed: as --step-time)
            pairs.append((n, typed(
                float, 'a finite number > 0 (seconds)')(seconds)))
        except argparse.ArgumentTypeError as e:
            raise argparse.ArgumentTypeError(
                'the step measured on {} workers {}'.format(n, e))
    return pairs


class _MeasuredSteps(argparse.Action):
    """--measured, given once or twice: every step measured, as the
    ``{N: seconds}`` scaling_report takes, one or two worker counts, each
    once (a repeated option would silently keep its last value)."""

    def __call__(self, parser, namespace, values, option_string=None):
        steps = dict(getattr(namespace, self.dest) or {})
        for n, seconds in values:
            if n in steps:
                raise argparse.ArgumentError(self, (
                    'gives a step on {} workers more than once: one time '
                    'per worker count'.format(n)))
            steps[n] = seconds
        if len(steps) > 2:
            raise argparse.ArgumentError(self, (
                'gives steps on {} worker counts ({}): the report is fitted '
                'to one or two'.format(len(steps), ', '.join(
                    map(str, steps)))))
        setattr(namespace, self.dest, steps)


def check_scaling(args):
    """CommandError for an incomplete or wrong request of the scaling
    report (--workers, --network and their options)."""
    if args.workers is None and args.network is None:
        asked = {a for a in SCALING_OPTIONS
                 if getattr(args, a, None) is not None}
        if getattr(args, 'plot_scaling', None) is not None:
            asked.add('plot_scaling')
        if asked:
            raise CommandError('--{} needs --workers and --network'.format(
                min(asked).replace('_', '-')))
        return
    if args.workers is None or args.network is None:
        raise CommandError('--workers and --network go together: e.g. '
                           '--workers 1,8,64 --network ib-hdr200')
    if not args.train:
        raise CommandError('--workers needs --train: scaling is of a '
                           'training step')
    if args.device is None and args.peak_flops is None:
        raise CommandError('--workers needs a --device ({}) or --peak-flops '
                           'and --bandwidth'.format(
                               ', '.join(devices.DEVICES)))
    with on_this_rank():  # a file of this node
        args.network = _network_arg('--network', args.network)
        args.node_network = _network_arg('--node-network',
                                         args.node_network)
    given = scaling_options(args)
    try:
        devices.resolve_network(args.network)
        network.check_scaling_options(names=SCALING_NAMES, **given)
    except ValueError as e:
        raise CommandError(str(e))


def _network_arg(option, value):
    """A --network or --node-network value as the API takes it: a preset's
    name as given, a file that exists (whatever its name ends with, as
    netbench --output writes any name) as its loaded Network, else
    CommandError for a missing path-like name (a path separator in it, or
    ending in .json in any case): the presets' list would not tell the
    user the path is wrong.  A name that is neither is left for the
    API's 'unknown network'."""
    if value is None or value.lower() in devices.NETWORKS:
        return value
    if devices.is_network_file(value):
        try:
            return devices.load_network(value)
        except ValueError as e:
            raise CommandError('{}: {}'.format(option, e))
    if os.path.isdir(value) or devices.names_a_file(value):
        raise CommandError('{} {!r}: {}'.format(
            option, value, 'a directory, not a network file'
            if os.path.isdir(value) else 'no such network file (written '
            'by netbench; the presets are {})'.format(
                ', '.join(devices.NETWORKS))))
    return value


#: The reports a run can print, in the order it prints them.
REPORT_ORDER = ('fit', 'memory', 'roofline', 'scaling', 'time', 'links',
                'phases', 'summary', 'layers')

#: Report -> how the user asks for it (in messages).
REPORT_OPTIONS = {
    'fit': '--fit', 'memory': '--memory', 'roofline': '--device',
    'scaling': '--workers', 'time': '--predict-time', 'links': '--links',
    'phases': '--phases',
    'summary': '--summary', 'layers': 'the layer report'}

# The report kinds: the columns each can show, its default columns (None:
# the report's own) and, when they differ from those plus 'time', its
# default columns with measured times.
_KINDS = {
    'roofline': (ROOFLINE_COLUMNS, ROOFLINE_DEFAULT, ROOFLINE_TIMED),
    'scaling': (network.SCALING_COLUMNS, None, None),
    'time': (TIME_REPORT_COLUMNS, None, None),
    'links': (LINK_COLUMNS, LINK_DEFAULT, None),
    'phases': (PHASE_COLUMNS, PHASE_DEFAULT, None),
    'summary': (SUMMARY_COLUMNS, SUMMARY_DEFAULT, None),
    'layers': (LAYER_COLUMNS, LAYER_DEFAULT, None),
    'memory': (memory.MEMORY_COLUMNS, memory.MEMORY_COLUMNS, None),
    'fit': (FIT_COLUMNS, FIT_COLUMNS, None),
}

#: Reports with a measured time column under --measure-time.
TIMED_REPORTS = ('roofline', 'time', 'links', 'phases', 'summary',
                 'layers')
#: Reports whose figures do not depend on how FLOPs are counted.
FLOP_FREE_REPORTS = ('fit', 'memory')


def report_kinds(args):
    """The reports a run prints, in :data:`REPORT_ORDER`: each one asked
    for; without any, the layer report (the summary by phase with
    --train).  --workers turns the device's roofline into the scaling
    report."""
    device = args.device is not None or args.peak_flops is not None \
        or args.bandwidth is not None
    asked = {
        'fit': args.fit is not None, 'memory': args.memory,
        'roofline': device and args.workers is None,
        'scaling': args.workers is not None,
        'time': args.predict_time is not None,
        'links': args.links is not None,
        'phases': args.phases, 'summary': args.summary, 'layers': False}
    kinds = [k for k in REPORT_ORDER if asked[k]]
    return kinds or ['summary' if args.train else 'layers']


def default_columns(kind, measure_time):
    """The columns of ``kind`` shown without --columns (None: the
    report's own default): a measured time is the point of
    --measure-time, so it is shown where the report has a time column."""
    available, columns, timed = _KINDS[kind]
    if columns is None:
        return None
    if not measure_time or kind not in TIMED_REPORTS:
        return list(columns)
    if timed is not None:
        return list(timed)
    return list(columns) + ['time']


def _names(kinds):
    return ', '.join(REPORT_OPTIONS[k] for k in kinds)


def check_output_file(path, option, example, check_name=None):
    """CommandError unless a file can be written at ``path``: what is
    written after a (possibly long) run must be found writable before it.
    ``example`` is a file name the message suggests for a directory;
    ``check_name(path)``, if given, checks the name before the file system
    is probed."""
    if not path.strip():
        raise CommandError('{} is {}: give a file name such as {}'.format(
            option, 'empty' if not path else 'blank ({!r})'.format(path),
            example))
    if path == '-':
        # (the usual spelling of standard output, which no command writes
        # to: the file would be named '-')
        raise CommandError("{} '-' would be a file named '-', not standard "
                           'output: give a file name such as {}'.format(
                               option, example))
    # (the file system of this node: the ranks of mpiexec may differ)
    with on_this_rank():
        problem = checks.file_place_problem(path, example)
        if problem is not None:
            raise CommandError('{} {}'.format(option, problem))
    if check_name is not None:
        check_name(path)
    with on_this_rank():
        try:
            _probe_writable(path)
        except OSError as e:
            raise CommandError('{} {!r} cannot be written: {}'.format(
                option, path, e.strerror or e))


def _check_plot_path(path, option):
    """A plot's file: of a format the plots know, writable."""
    def check_format(path):
        try:
            plots.plot_format(path)
        except ValueError as e:
            raise CommandError('{}: {}'.format(option, e))
    check_output_file(path, option, 'plot.png', check_format)


def _probe_writable(path):
    """OSError unless a file can be written at ``path``: an existing file
    is opened for appending, never created (left as it was), else the
    file itself is created and removed (permissions alone would not tell:
    a read-only file system, root, a name too long for the file system).
    The ranks of mpiexec probe the same path at once: a file another rank
    created meanwhile is one that can be written, and one it removed
    meanwhile is probed again as new."""
    # (O_NONBLOCK: a FIFO no one reads is refused, not waited on)
    existing = os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK
    for _ in range(3):
        try:
            os.close(os.open(path, existing))
            return
        except FileNotFoundError:
            pass
        target = os.path.realpath(path) if os.path.islink(path) else path
        # (a link to no file yet is written through: its target is probed)
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                         0o666)
        except FileExistsError:
            continue  # made meanwhile: probed as an existing file
        os.close(fd)
        os.remove(target)
        return
    os.close(os.open(path, existing))


#: Option attribute -> (option, the report's check of its value, which
#: returns the value in its canonical spelling).
_VALUE_CHECKS = {
    'unit': ('--unit', lambda value, option: _check_unit(value)),
    'mode': ('--mode', rendering.check_mode),
    # The help says 0 to 10: 11 is refused, not read as 10.
    'n_digits': ('--n-digits', lambda value, option: rendering.check_n_digits(
        value, option, above=False)),
    'time_unit': ('--time-unit', rendering.check_time_unit),
}


#: The values --unit takes (raw numbers are 'raw': a command line cannot
#: type the API's None).
UNITS = ('raw',) + tuple(PREFIXES[1:]) + ('autoaligned', 'auto')


def _check_unit(value):
    """--unit's value as the API takes it (None: raw), or a ValueError
    naming the values a command line can type."""
    # 'raw' kept as text until _output_defaults: it differs from not given
    # ('' is the API's raw too, but typed it is a value left out)
    if value and value.lower() in rendering.RAW_UNITS:  # 'none': None
        return 'raw'
    # (UNITS are the API's units: the spelling choice returns is theirs)
    return rendering.choice(value, UNITS, '--unit', ' (any case)')


def _output_defaults(args):
    """The defaults of --unit, --n-digits and --time-unit: a script
    reading --mode json wants exact figures in base units (bytes, FLOPs,
    seconds), a person reading a table wants them scaled and rounded.  An
    option given is kept."""
    exact = args.mode == 'json' and args.unit is None
    if args.unit is None:
        args.unit = None if exact else 'autoaligned'
    elif args.unit == 'raw':
        args.unit = None
    if args.n_digits is None and not exact:  # (json's None: no rounding)
        args.n_digits = 3
    if exact and args.time_unit is None:
        args.time_unit = 's'


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
    if args.device is not None and args.device.lower() in devices.DEVICES:
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


#: The plot options, as (option, attribute).
PLOT_OPTIONS = (('--plot-roofline', 'plot_roofline'),
                ('--plot-summary', 'plot_summary'),
                ('--plot-memory', 'plot_memory'),
                ('--plot-scaling', 'plot_scaling'))


#: The options that name a file the command reads, as (option,
#: attribute): no plot may be written over one.
READ_OPTIONS = (('--predict-time', 'predict_time'),
                ('--network', 'network'),
                ('--node-network', 'node_network'))


def _file_key(path):
    """What names one file however spelt ('x.png' and './x.png', a link
    to it, a hard link): a file there already by its identity, else its
    real path."""
    try:
        found = os.stat(path)
        return found.st_dev, found.st_ino
    except (OSError, ValueError):
        return os.path.normcase(os.path.realpath(path))


def _read_files(args):
    """``{file key: option}`` (see _file_key) of the files the command
    reads (READ_OPTIONS): before the checks read a --network file into a
    Network."""
    read = {}
    for option, attr in READ_OPTIONS:
        path = getattr(args, attr, None)
        if isinstance(path, str) and os.path.isfile(path):
            read[_file_key(path)] = option
    return read


def _check_plot_files_differ(args, read):
    """CommandError when two plot options name one file, or a plot names a
    file the command reads (``read``, see _read_files): the plot would
    overwrite it."""
    seen = {}
    for option, attr in PLOT_OPTIONS:
        path = getattr(args, attr)
        if path is None:
            continue
        key = _file_key(path)
        if key in read:
            raise CommandError(
                '{} names the file {} reads ({!r}): the plot would '
                'overwrite it; give the plot its own file'.format(
                    option, read[key], path))
        if key in seen:
            raise CommandError(
                '{} and {} name the same file {!r}: one plot would overwrite '
                'the other; give each plot its own file'.format(
                    seen[key], option, path))
        seen[key] = option


def _check_packages(args):
    if args.mode == 'table':
        _require('texttable', '--mode table', 'table')
    for option, attr in PLOT_OPTIONS:
        if getattr(args, attr) is not None:
            _require('matplotlib', option, 'plot')


#: Columns no command-line run fills, and why.
_NEVER_FILLED = {
    'comm_bytes': 'the command line runs no ChainerMN communication (give '
                  'ComputationalCostHook a comm= in Python for it)',
    'rank': 'ranks are those of a gathered ChainerMN report '
            '(ComputationalCostHook.gather), which the command line '
            'does not make',
}
_NEVER_FILLED['slowest_rank'] = _NEVER_FILLED['rank']


def _empty_columns(kind, columns, args):
    """(column, why) for the first of ``columns`` the run leaves empty in
    every row, or None."""
    # (the scaling report's efficiency is of its predicted times)
    timed = ('time', 'efficiency') if kind in TIMED_REPORTS else ()
    for c in columns:
        if c in timed and not args.measure_time:
            return c, 'times are measured only with --measure-time'
        if c == 'phase' and kind == 'summary' and not args.train:
            return c, ('the summary is split by phase only with --train (the '
                       'layer report has a phase column)')
        if kind == 'time':
            why = empty_time_column(c, (args.predict_by or 'layer').lower())
            if why is not None:
                return c, why
        if c in _NEVER_FILLED and kind != 'scaling':
            # (the scaling report's comm_bytes are the gradients')
            return c, _NEVER_FILLED[c]
    return None


def _check_devices(args):
    """--device, or --peak-flops with --bandwidth, and what needs them."""
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
            given, missing, ', '.join(devices.DEVICES)))
    if args.device is not None:
        try:
            devices.resolve_device(args.device)
        except ValueError as e:
            raise CommandError(str(e))
    if args.plot_roofline is not None and args.device is None \
            and args.peak_flops is None:
        raise CommandError('--plot-roofline needs a device: --device ({}) '
                           'or --peak-flops and --bandwidth'.format(
                               ', '.join(devices.DEVICES)))


def _check_training(args):
    """--fit and --optimizer need --train; --optimizer's default."""
    if args.fit is not None and not args.train:
        raise CommandError('--fit needs --train: it sizes the batch of a '
                           'training step')
    if args.margin is not None and args.fit is None:
        raise CommandError("--margin needs --fit: it is the memory the "
                           "fit's answer keeps free")
    if args.margin is not None:
        capacity = devices.preset_capacity(args.fit) if isinstance(
            args.fit, str) else args.fit
        try:  # a margin that leaves no room: known before any run
            fit.margin_bytes(args.margin, capacity)
        except ValueError as e:
            raise CommandError('--margin: {}'.format(e))
    if args.optimizer is not None and not args.train:
        raise CommandError('--optimizer needs --train (and applies to '
                           '--fit): a forward pass updates nothing')
    if args.optimizer is None:
        args.optimizer = 'adam'


def _useless(option, kinds, needs):
    return CommandError('{} changes nothing in the reports asked for ({}): '
                        'it needs {}'.format(option, _names(kinds), needs))


def _check_uses(args, kinds):
    """Refuse an option that would change nothing this run prints or
    writes, rather than drop it without a word."""
    if args.project and args.measure_time:
        raise CommandError('--project and --measure-time exclude each '
                           'other: a projected report has no measured '
                           'times (measure a real run at the batch size)')
    if args.measure_time and not set(kinds) & set(TIMED_REPORTS):
        raise _useless('--measure-time', kinds, 'a report with a time '
                       'column: the layer report, --summary, --phases, '
                       '--links or --device')
    timed = args.measure_time or set(kinds) & {'roofline', 'scaling',
                                               'time'}
    if args.time_unit is not None and not timed:
        raise _useless('--time-unit', kinds, 'times: --device, --workers '
                       'or --measure-time')
    flops = set(kinds) - set(FLOP_FREE_REPORTS) or \
        args.plot_summary is not None or args.plot_roofline is not None
    for option, given in (('--no-fma', args.no_fma),
                          ('--flop-convention', args.flop_convention)):
        if given and not flops:
            raise _useless(option, kinds, 'a report or plot of FLOPs: '
                           'any report but --fit and --memory, '
                           '--plot-summary or --plot-roofline')


def _check_output(args, kinds):
    """The mode and --columns against the reports asked for: the columns
    of each report, as a list (None: the report's default)."""
    if args.mode == 'csv' and len(kinds) > 1:
        raise CommandError(
            '--mode csv writes one table, and {} reports are asked for '
            '({}): ask for one, or use --mode json (one document holding '
            'every report) or md'.format(len(kinds), _names(kinds)))
    if args.columns is None:
        return [default_columns(k, args.measure_time) for k in kinds]
    if len(kinds) > 1:
        raise CommandError(
            '--columns picks the columns of one report, and {} are asked '
            'for ({}): ask for one, or leave --columns out'.format(
                len(kinds), _names(kinds)))
    kind, = kinds
    columns = parse_columns(args.columns, _KINDS[kind][0])
    empty = _empty_columns(kind, columns, args)
    if empty is not None:
        raise CommandError('--columns: column {!r} would be empty: '
                           '{}'.format(*empty))
    return [columns]


def _check_calibration(args):
    """--predict-time's file, loaded (``args.calibration``); --predict-by
    needs it."""
    args.calibration = None
    if args.predict_time is None:
        if args.predict_by is not None:
            raise CommandError('--predict-by needs --predict-time FILE')
        return
    with on_this_rank():  # this node's file
        try:
            args.calibration = Calibration.load(args.predict_time)
        except (OSError, ValueError) as e:
            raise CommandError('--predict-time: {}'.format(e))


def check_args(args):
    """Every check that needs no model: raise CommandError, or return the
    reports to print, as a list of (kind, columns) in print order
    (columns None: the report's default).

    A mistake must be reported before the model is built and run, which
    can take minutes.  Values are canonicalised in ``args`` on the way.
    """
    read = _read_files(args)
    _check_values(args)
    _check_devices(args)
    check_scaling(args)
    _check_training(args)
    _check_calibration(args)
    kinds = report_kinds(args)
    _check_uses(args, kinds)
    _output_defaults(args)
    for option, attr in PLOT_OPTIONS:
        path = getattr(args, attr)
        if path is not None:
            _check_plot_path(path, option)
    _check_plot_files_differ(args, read)
    _check_packages(args)
    return list(zip(kinds, _check_output(args, kinds)))


def _number(text):
    """``text`` as a number, read exactly (not through a float, which
    rounds 12345678901234567.5 to a whole 12345678901234568 and 1e23 to
    99999999999999991611392): an int exactly when it is a whole number,
    however written (``1e23`` is 10**23, ``1000.0`` is 1000); else a
    float: a fraction (10000.9, never an int to the checks of a whole
    number), an infinity beyond a float's range (1e400), NaN when it is
    no number.  The one reader of every number of bytes."""
    try:  # digits alone, however many
        return int(text)
    except ValueError:
        pass
    try:
        value = decimal.Decimal(text)
    except decimal.InvalidOperation:
        return math.nan
    if value.is_nan():  # sNaN too, which float() refuses
        return math.nan
    # (copy_abs, not abs(), which rounds to the context and overflows at
    # 1e1000000)
    if value.is_finite() and value.copy_abs() <= sys.float_info.max and \
            value == value.to_integral_value():
        return int(value)
    return float(value)


#: The suffixes a number of bytes may end with (binary multiples).
_BYTE_UNITS = {'K': 1024, 'M': 1024 ** 2, 'G': 1024 ** 3}


def _byte_figure(text):
    """``(number, scale)`` of a number of bytes as :func:`byte_count`
    reads it: the number before the suffix (as :func:`_number` reads
    it: an int when it is whole) and the suffix's multiple (1 without
    one)."""
    text = text.strip().upper()
    scale = _BYTE_UNITS.get(text[-1:], 1)
    number = text[:-1] if scale > 1 else text
    return _number(number), scale


def byte_count(text):
    """``text`` as a whole number of bytes: an integer (``26214400``), a
    whole decimal (``25e6``) or either with a K, M or G suffix (binary
    multiples: ``25M`` is 26214400); ValueError otherwise."""
    value, scale = _byte_figure(text)
    return checks.integer('bytes', value, 0) * scale


def parse_bytes(text):
    """A whole number of bytes >= 1 (see :func:`byte_count`: 26214400, 25e6
    or 25M): --bucket-bytes."""
    try:
        value = byte_count(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            'must be a whole number of bytes >= 1 (26214400, 25e6 or 25M); '
            'got {!r}'.format(text))
    return value


def _finite(text):
    """Whether ``text`` is a finite decimal number, however large."""
    try:
        return decimal.Decimal(text).is_finite()
    except decimal.InvalidOperation:
        return False


def parse_fit(text):
    """--fit's value: a device preset with a memory capacity, or a
    whole number of bytes >= 1 (1e5 allowed)."""
    if text.lower() in devices.CAPACITIES:
        try:  # a CPU preset has none: fit_batch's own words
            fit.preset_capacity(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e))
        return text.lower()
    value = _number(text)
    devices_named = ', '.join(fit.gpu_presets())
    if 0 < value < 1:
        # (fit_batch takes whole bytes: this would be 0, refused only
        # after the model is built and run)
        raise argparse.ArgumentTypeError(
            '{!r} is less than one byte: give a device ({}) or a number of '
            'bytes >= 1'.format(text, devices_named))
    if value == math.inf and _finite(text):  # (2e308: a number still)
        raise argparse.ArgumentTypeError(
            '{!r} is more bytes than a float holds (at most {:.4g}): give a '
            'device ({}) or fewer bytes'.format(
                text, sys.float_info.max, devices_named))
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(
            '{!r} is neither a device ({}) nor a number of bytes > '
            '0'.format(text, devices_named))
    try:  # fit_batch's capacity: whole bytes, 1e5 too (an int: exact)
        return checks.integer('--fit', value, 1)
    except ValueError:
        raise argparse.ArgumentTypeError(
            '{!r} is not a whole number of bytes: give a device ({}) or a '
            'whole number of bytes (e.g. 100000 or 1e5)'.format(
                text, devices_named))


def parse_margin(text):
    """--margin's value, as fit_batch takes it: 'cuda' (any case), bytes
    (an integer) or a fraction of the capacity (a decimal in [0, 1), read
    exactly: one that no float holds, as 1e-400, is refused, not taken as
    another): a decimal from 1 on is neither (fit_batch refuses a float
    margin of 1 or more, as it would leave nothing or is no fraction)."""
    if text.lower() == 'cuda':
        return 'cuda'
    allowed = ("must be bytes (an integer >= 0), a fraction of the capacity "
               "(a decimal in [0, 1), e.g. 0.1) or 'cuda'; got {!r}".format(
                   text))
    try:
        value = int(text)
    except ValueError:
        exact = decimal.Decimal(text) if _finite(text) else None
        if exact is None or not 0 <= exact < 1:
            raise argparse.ArgumentTypeError(allowed)
        value = float(exact) + 0.0  # (-0.0 is 0.0)
        if value >= 1 or (value == 0 and exact != 0):
            raise argparse.ArgumentTypeError('{} ({!r} as a float)'.format(
                allowed, value))
    if value < 0:
        raise argparse.ArgumentTypeError(allowed)
    return value


def parse_count(text):
    """An integer >= 1 (netbench's --repeats)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            'must be an integer >= 1; got {!r}'.format(text))
    return value


def parse_sizes(text):
    """netbench's --sizes: two sizes or more in bytes >= 4, multiples of
    4, comma separated, each as :func:`byte_count` reads it ('4,1K,1e6')."""
    out = []
    parts = text.split(',')
    for part in parts:
        try:
            out.append(byte_count(part))
        except ValueError:
            if _byte_figure(part)[0] == math.inf:
                # beyond a float (1e400): named as given
                raise argparse.ArgumentTypeError('gives {} in {!r}: {}'.format(
                    part.strip(), text, netbench.TOO_LARGE))
            out = []
            break
    if len(out) < 2 or min(out) < 4:
        raise argparse.ArgumentTypeError(
            'must be two sizes or more in bytes >= 4, comma-separated '
            '(K, M, G suffixes: 4,1K,1M); got {!r}'.format(text))
    for part, size in zip(parts, out):
        problem = netbench.size_problem(size)
        if problem is not None:
            # the size as given: 1e100 bytes is 101 digits
            shown = size if len(str(size)) <= 20 else part.strip()
            raise argparse.ArgumentTypeError('gives {} in {!r}: {}'.format(
                shown, text, problem))
    try:
        return netbench.check_sizes(out)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e))


def _command_parser(command, description):
    parser = CommandParser(
        prog='{} {}'.format(_prog(), command), allow_abbrev=False,
        formatter_class=_HelpFormatter, description=description)
    _add_version(parser)
    return parser


def _add_version(parser):
    """--version, in every command's parser."""
    parser.add_argument('--version', action='version',
                        version='chainer_computational_cost {}'.format(
                            __version__))


def build_calibrate_parser():
    """The argument parser of ``calibrate``."""
    parser = _command_parser(
        'calibrate', 'Measure this machine (matrix products and random '
        'probe networks on NumPy) and save a calibration for '
        '--predict-time and CostReport.time_report.')
    parser.add_argument('--out', required=True, metavar='FILE',
                        help='the JSON file to write (checked before '
                             'measuring)')
    parser.add_argument('--seconds', type=typed(
        float, 'a finite number >= 10 (seconds)'), default=120,
                        metavar='SECONDS',
                        help='the budget (default 120, at least {})'.format(
                            measure.MIN_SECONDS))
    parser.add_argument('--clock', choices=('wall', 'cpu'), default='wall',
                        type=str.lower,
                        help='wall (perf_counter, default) or cpu '
                             '(process time: for a machine other busy '
                             'processes share; one BLAS thread)')
    parser.add_argument('--seed', type=typed(
        int, 'an int from 0 to {}'.format(measure.MAX_SEED)),
                        default=None, metavar='N',
                        help="the probes' random shapes (default: new ones "
                             "each run)")
    return parser


def check_calibrate_args(args):
    """calibrate's checks before minutes of measuring: a finite budget of
    at least :data:`MIN_SECONDS`, a seed NumPy takes, a writable --out,
    one process (under mpiexec each rank would measure and write --out)."""
    ranks = launcher_size()
    if ranks > 1:
        raise CommandError(
            'calibrate measures this machine from one process, not under '
            'mpiexec ({} ranks here would each measure and write --out): '
            'run it alone'.format(ranks))
    try:
        checks.number('--seconds', args.seconds, measure.MIN_SECONDS)
        if args.seed is not None:
            measure.check_seed(args.seed, '--seed', optional=False)
    except ValueError as e:
        raise CommandError(str(e))
    check_output_file(args.out, '--out', 'calibration.json')


def build_netbench_parser():
    """The argument parser of ``netbench`` (run under mpiexec)."""
    parser = _command_parser(
        'netbench', 'Measure the all-reduce of a ChainerMN communicator '
        'under mpiexec (every rank runs the command) and save it as a '
        'network file for --network and scaling_report.')
    parser.add_argument('--communicator', default='naive', metavar='NAME',
                        type=str.lower,
                        help='chainermn.create_communicator name (default '
                             'naive, which runs on CPUs)')
    parser.add_argument('--sizes', type=parse_sizes, default=None,
                        metavar='BYTES,...',
                        help='bytes to time, two sizes or more, each once, '
                             'e.g. 4,1K,64K,1M,16M (default 4 B to 16M)')
    parser.add_argument('--repeats', type=parse_count, default=10,
                        metavar='N',
                        help='timed rounds per size (default 10)')
    parser.add_argument('--output', default='network.json', metavar='FILE',
                        help='the network file to write (default '
                             'network.json; checked before measuring)')
    parser.add_argument('--name', type=parse_name, default=None,
                        metavar='NAME',
                        help="the network's name (default netbench-N)")
    return parser


def typed(kind, allowed):
    """An option's ``type``: ``kind`` (int or float) of the text, or
    argparse's error saying what is ``allowed`` (argparse's own 'invalid
    int value' says nothing of it); a float that is not the number typed
    (1e-400 is 0.0, 1e400 inf) is refused as typed, not as the float a
    later check would name."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError('must be {}, got {!r}'.format(
                allowed, text))
        if kind is float and (value == 0 or math.isinf(value)):
            try:
                exact = decimal.Decimal(text.strip().replace('_', ''))
            except decimal.InvalidOperation:  # (float took it: never)
                exact = decimal.Decimal(value)
            if exact.is_finite() and (math.isinf(value) or exact != 0):
                raise argparse.ArgumentTypeError(
                    'must be {}, got {!r} ({!r} as a float)'.format(
                        allowed, text, value))
        return value
    return parse


#: A value that starts as a negative number does ('-1,3', '-.5', '-inf',
#: '-nan'): never an option's name.
_NEGATIVE = re.compile(r'-(\d|\.\d|inf|nan)', re.IGNORECASE)


def joined_values(parser, argv):
    """``argv`` with 'OPTION -VALUE' written 'OPTION=-VALUE' where OPTION
    takes one value: argparse reads '--shape -1,3' as an option missing
    its value, while the value's own check says what is wrong with it."""
    takes_one = {o for a in parser._actions if a.option_strings
                 and a.nargs is None for o in a.option_strings}
    out = []
    for arg in argv:
        if out and out[-1] in takes_one and _NEGATIVE.match(arg):
            out[-1] = '{}={}'.format(out[-1], arg)
        else:
            out.append(arg)
    return out
