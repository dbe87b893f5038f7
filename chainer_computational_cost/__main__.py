"""Command line: print the cost report of a model's forward pass.

    python -m chainer_computational_cost vgg16 --unit G --mode md
    python -m chainer_computational_cost mypkg.models:build --shape 1,3,64,64
"""

import argparse
import importlib
import os
import sys
import sysconfig
import traceback

import chainer
import numpy

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import report

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


def _is_under(path, directory):
    return path == directory or path.startswith(directory + os.sep)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _is_library_file(filename):
    """Whether a frame's file belongs to Python, Chainer, NumPy or this
    package rather than to the user's model code."""
    if filename.startswith('<frozen'):
        return True
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


def load_model(spec):
    """The model named by ``spec``, built by calling its factory.

    ``spec`` is a name in :data:`MODELS` or ``package.module:factory``
    (the factory is called without arguments). Every failure, the user's
    factory raising included, is a :class:`CommandError` with a one-line
    message.
    """
    if spec in MODELS:
        factory = MODELS[spec]
    else:
        module_name, sep, attr = spec.partition(':')
        if not sep or not module_name or not attr:
            raise CommandError('unknown model {!r}: use one of {} or '
                               'package.module:factory'.format(
                                   spec, ', '.join(sorted(MODELS))))
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


def parse_unit(text):
    """The --unit value; 'raw' or 'none' mean raw numbers."""
    if text.lower() in ('raw', 'none'):
        return None
    if text not in report.UNITS:
        raise argparse.ArgumentTypeError(
            'unit must be one of raw, K, M, G, T, autoaligned, auto; '
            'got {!r}'.format(text))
    return text


def parse_columns(text, available):
    """The --columns value as a list of names from ``available``; spaces
    around each name are ignored."""
    columns = [c.strip() for c in text.split(',')]
    if not all(columns):
        raise CommandError('--columns {!r} has an empty column name; '
                           'available columns are {}'.format(
                               text, ', '.join(available)))
    try:
        return report.check_columns(columns, available)
    except ValueError as e:
        raise CommandError(str(e))


def build_parser():
    """The argument parser of the command line."""
    parser = argparse.ArgumentParser(
        prog='python -m chainer_computational_cost',
        description='Estimate the theoretical cost (FLOPs, memory read and '
                    'write) of one forward pass of a Chainer model.')
    parser.add_argument(
        'model', help='one of {} or package.module:factory'.format(
            ', '.join(sorted(MODELS))))
    parser.add_argument('--shape', type=parse_shape, default=(1, 3, 224, 224),
                        help='input shape, comma separated '
                             '(default 1,3,224,224)')
    parser.add_argument('--dtype', choices=DTYPES, default='float32',
                        help='dtype of the input and of the weights '
                             '(default float32)')
    parser.add_argument('--unit', type=parse_unit, default='G',
                        help='raw, K, M, G, T, autoaligned or auto '
                             '(default G)')
    parser.add_argument('--mode', choices=report.MODES, default='md',
                        help='output format (default md)')
    parser.add_argument('--n-digits', type=int, default=3,
                        help='decimals, 0 to 10 (default 3)')
    parser.add_argument('--summary', action='store_true',
                        help='show the per-type summary instead of the '
                             'per-layer report')
    parser.add_argument('--columns', default=None,
                        help='comma-separated columns (default: the '
                             "report's default set)")
    parser.add_argument('--no-fma', action='store_true',
                        help='count a multiply-add as two FLOPs')
    return parser


def _run(args):
    """The report's hook after one forward pass, or CommandError."""
    dtype = numpy.dtype(args.dtype)
    try:
        x = numpy.zeros(args.shape, dtype=dtype)
    except (MemoryError, ValueError) as e:
        raise CommandError('cannot allocate an input of shape {} and dtype '
                           '{}: {}'.format(args.shape, dtype, e))
    # Links create their weights in chainer.config.dtype, at construction
    # or (for sizes left as None) at the first call: both must see it, or
    # float16 input meets float32 weights.
    with chainer.using_config('dtype', dtype):
        model = load_model(args.model)
        with chainer.no_backprop_mode(), \
                chainer.using_config('train', False):
            with ComputationalCostHook(fma_1flop=not args.no_fma) as cch:
                try:
                    model(x)
                except Exception as e:
                    if _is_internal(e):
                        raise
                    raise _failure(
                        'the model rejected input of shape {} and dtype '
                        '{}'.format(args.shape, dtype), e)
    return cch


def main(argv=None, ost=None):
    """Run the command line; returns the exit status.

    Mistakes in the arguments, a model that cannot be imported or built
    and a forward pass that fails are reported as one line on stderr with
    status 2.
    """
    args = build_parser().parse_args(argv)
    ost = sys.stdout if ost is None else ost
    if args.summary:
        columns = report.SummaryColumns.DEFAULT
        available = report.SUMMARY_COLUMNS
    else:
        columns = report.ReportColumns.DEFAULT
        available = report.LAYER_COLUMNS
    try:
        # Check every option before the (possibly slow) forward pass.
        if args.columns is not None:
            columns = parse_columns(args.columns, available)
        try:
            report.check_n_digits(args.n_digits)
        except ValueError as e:
            raise CommandError(str(e))
        cch = _run(args)
    except CommandError as e:
        sys.stderr.write('error: {}\n'.format(e))
        return 2
    show = cch.show_summary_report if args.summary else cch.show_report
    show(ost=ost, mode=args.mode, unit=args.unit, columns=columns,
         n_digits=args.n_digits)
    return 0


if __name__ == '__main__':
    sys.exit(main())
