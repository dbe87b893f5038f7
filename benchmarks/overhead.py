"""How much slower a forward pass runs under ComputationalCostHook.

    python benchmarks/overhead.py [--repeat 7] [--calls 3000]

Bare and hooked runs alternate in one process so that machine noise hits
both alike; each figure is the median of the repeats. Prints the
hooked/bare ratio for VGG16 and ResNet50 (batch 1, CPU, train=False) and
the extra microseconds per call of a loop of F.relu on a 4x4 array; the
last line sums the three up.
"""

import argparse
import statistics
import time
import warnings

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np

from chainer_computational_cost import ComputationalCostHook


def _time(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def compare(fn, repeat):
    """Median seconds of fn() bare and under a fresh hook, alternating."""
    def hooked():
        with ComputationalCostHook():
            fn()

    fn()  # warm up caches and lazy imports
    hooked()
    bare_times, hooked_times = [], []
    for _ in range(repeat):
        bare_times.append(_time(fn))
        hooked_times.append(_time(hooked))
    return statistics.median(bare_times), statistics.median(hooked_times)


def main():
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeat', type=int, default=7)
    parser.add_argument('--calls', type=int, default=3000)
    args = parser.parse_args()
    warnings.simplefilter('ignore')

    ratios = {}
    x = np.random.RandomState(0).rand(1, 3, 224, 224).astype(np.float32)
    for name, cls in (('VGG16', L.VGG16Layers),
                      ('ResNet50', L.ResNet50Layers)):
        model = cls(pretrained_model=None)

        def forward():
            with chainer.no_backprop_mode(), \
                    chainer.using_config('train', False):
                model(x)

        bare, hooked = compare(forward, args.repeat)
        ratios[name] = hooked / bare
        print('{:<9} bare {:8.1f} ms  hooked {:8.1f} ms  ratio {:.3f}'
              .format(name, bare * 1e3, hooked * 1e3, ratios[name]))

    small = np.ones((4, 4), np.float32)

    def relu_loop():
        with chainer.no_backprop_mode():
            for _ in range(args.calls):
                F.relu(small)

    bare, hooked = compare(relu_loop, args.repeat)
    per_call = (hooked - bare) / args.calls * 1e6
    print('F.relu x{}: bare {:.2f} us/call  hooked {:.2f} us/call  '
          'extra {:.2f} us/call'.format(
              args.calls, bare / args.calls * 1e6,
              hooked / args.calls * 1e6, per_call))
    print('summary: VGG16 {:.3f}x, ResNet50 {:.3f}x, {:.1f} us extra per '
          'call (original: 1.94x, 2.43x, 72 us)'.format(
              ratios['VGG16'], ratios['ResNet50'], per_call))


if __name__ == '__main__':
    main()
