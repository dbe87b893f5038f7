"""What the hook keeps per call, and what reading large reports costs.

    python benchmarks/scale.py [--layers 10000,100000] [--calls 2000]

Prints:

* bytes kept per call (tracemalloc) of a loop of F.relu calls made 5 and
  200 frames deep inside the ``with`` block, and through a
  ``@contextlib.contextmanager`` wrapper around the hook: they must not
  depend on the depth or on the way the hook was entered;
* for hooks holding 10k and 100k layers: the seconds of the first full
  ``show_report`` (which builds the report), of a second one, and of 100
  single-layer lookups ``cch.layer_report['ReLU-k']`` (each a fresh copy).
"""

import argparse
import contextlib
import io
import time
import tracemalloc
import warnings

# Before NumPy is imported.
import one_blas_thread  # NOQA

import chainer
import chainer.functions as F
import numpy as np

from chainer_computational_cost import ComputationalCostHook


X = np.ones((4, 4), np.float32)


def _loop(n):
    for _ in range(n):
        F.relu(X)


def _deep(depth, n):
    if depth == 0:
        return _loop(n)
    return _deep(depth - 1, n)


@contextlib.contextmanager
def _wrapped(hook):
    with hook:
        yield hook


def bytes_per_call(depth, calls, wrapped=False):
    """Bytes allocated and still held per hooked call, ``depth`` frames
    deep inside the block."""
    hook = ComputationalCostHook()
    enter = _wrapped(hook) if wrapped else hook
    with chainer.no_backprop_mode(), enter:
        _deep(depth, 10)  # first calls intern the shapes and stacks
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        _deep(depth, calls)
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
    return (after - before) / calls


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def report_times(n_layers):
    """Seconds of the first and a second full report, and of 100 single
    lookups, for a hook holding ``n_layers`` ReLU layers."""
    with chainer.no_backprop_mode(), ComputationalCostHook() as hook:
        _loop(n_layers)
    first = _timed(lambda: hook.show_report(io.StringIO()))
    second = _timed(lambda: hook.show_report(io.StringIO()))
    step = max(1, n_layers // 100)
    names = ['ReLU-{}'.format(1 + i * step) for i in range(100)]

    def lookups():
        for name in names:
            hook.layer_report[name]['flops']
    return first, second, _timed(lookups)


def main():
    """Run the measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--layers', default='10000,100000')
    parser.add_argument('--calls', type=int, default=2000)
    args = parser.parse_args()
    warnings.simplefilter('ignore')
    for label, depth, wrapped in (('depth 5', 5, False),
                                  ('depth 200', 200, False),
                                  ('depth 5, wrapper', 5, True)):
        print('bytes per call, {:<17} {:7.1f}'.format(
            label + ':', bytes_per_call(depth, args.calls, wrapped)))
    for n in (int(s) for s in args.layers.split(',')):
        first, second, lookups = report_times(n)
        print('{:>7} layers: first show_report {:6.2f} s, second {:6.2f} '
              's, 100 lookups {:6.3f} s'.format(n, first, second, lookups))


if __name__ == '__main__':
    main()
