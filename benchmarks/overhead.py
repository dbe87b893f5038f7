"""How much slower a forward pass runs under ComputationalCostHook.

    python benchmarks/overhead.py [--repeat 7] [--calls 3000] [--clock cpu]

Bare and hooked runs alternate in one process so that machine noise hits
both alike; each figure is the median of the repeats. Times are the
process's CPU time by default (``--clock cpu``), which other processes on a
shared machine disturb far less than wall time (``--clock wall``). Prints the
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


CLOCKS = {'cpu': time.process_time, 'wall': time.perf_counter}


def _time(fn, clock):
    start = clock()
    fn()
    return clock() - start


def compare(fn, repeat, clock=time.process_time):
    """Median seconds of fn() bare and under a fresh hook, alternating."""
    def hooked():
        with ComputationalCostHook():
            fn()

    fn()  # warm up caches and lazy imports
    hooked()
    bare_times, hooked_times = [], []
    for _ in range(repeat):
        bare_times.append(_time(fn, clock))
        hooked_times.append(_time(hooked, clock))
    return statistics.median(bare_times), statistics.median(hooked_times)


def main():
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeat', type=int, default=7)
    parser.add_argument('--calls', type=int, default=3000)
    parser.add_argument('--clock', choices=sorted(CLOCKS), default='cpu')
    args = parser.parse_args()
    clock = CLOCKS[args.clock]
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

        bare, hooked = compare(forward, args.repeat, clock)
        ratios[name] = hooked / bare
        print('{:<9} bare {:8.1f} ms  hooked {:8.1f} ms  ratio {:.3f}'
              .format(name, bare * 1e3, hooked * 1e3, ratios[name]))

    small = np.ones((4, 4), np.float32)

    def relu_loop():
        with chainer.no_backprop_mode():
            for _ in range(args.calls):
                F.relu(small)

    bare, hooked = compare(relu_loop, args.repeat, clock)
    per_call = (hooked - bare) / args.calls * 1e6
    print('F.relu x{}: bare {:.2f} us/call  hooked {:.2f} us/call  '
          'extra {:.2f} us/call'.format(
              args.calls, bare / args.calls * 1e6,
              hooked / args.calls * 1e6, per_call))
    print('summary ({} time): VGG16 {:.3f}x, ResNet50 {:.3f}x, {:.1f} us '
          'extra per call (original: 1.94x, 2.43x, 72 us)'.format(
              args.clock, ratios['VGG16'], ratios['ResNet50'], per_call))


if __name__ == '__main__':
    main()
