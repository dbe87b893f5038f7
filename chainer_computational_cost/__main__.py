"""Command line: print the cost report of a model's forward pass.

    python -m chainer_computational_cost vgg16 --unit G --mode md
    python -m chainer_computational_cost mypkg.models:build --shape 1,3,64,64
"""

import argparse
import importlib
import sys

import chainer
import numpy

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import report


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


def load_model(spec):
    """A model from a name in :data:`MODELS` or ``package.module:factory``
    (the factory is called without arguments)."""
    if spec in MODELS:
        return MODELS[spec]()
    module_name, sep, attr = spec.partition(':')
    if not sep or not module_name or not attr:
        raise ValueError('unknown model {!r}: use one of {} or '
                         'package.module:factory'.format(
                             spec, ', '.join(sorted(MODELS))))
    factory = importlib.import_module(module_name)
    for part in attr.split('.'):
        factory = getattr(factory, part)
    return factory()


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
    parser.add_argument('--dtype', default='float32',
                        help='input dtype (default float32)')
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


def main(argv=None, ost=None):
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    ost = sys.stdout if ost is None else ost
    if args.summary:
        columns = report.SummaryColumns.DEFAULT
        available = report.SUMMARY_COLUMNS
    else:
        columns = report.ReportColumns.DEFAULT
        available = report.LAYER_COLUMNS
    if args.columns:
        columns = args.columns.split(',')
    try:
        # Check every option before the (possibly slow) forward pass.
        report.check_columns(columns, available)
        report.check_n_digits(args.n_digits)
        dtype = numpy.dtype(args.dtype)
        model = load_model(args.model)
    except (ValueError, TypeError, ImportError, AttributeError) as e:
        sys.stderr.write('error: {}\n'.format(e))
        return 2
    x = numpy.zeros(args.shape, dtype=dtype)
    with chainer.no_backprop_mode(), chainer.using_config('train', False):
        with ComputationalCostHook(fma_1flop=not args.no_fma) as cch:
            model(x)
    show = cch.show_summary_report if args.summary else cch.show_report
    show(ost=ost, mode=args.mode, unit=args.unit, columns=columns,
         n_digits=args.n_digits)
    return 0


if __name__ == '__main__':
    sys.exit(main())
