"""How much slower a forward pass runs under ComputationalCostHook.

    python benchmarks/overhead.py [--repeat 15] [--calls 3000] [--clock cpu]
                                  [--memory]

Bare and hooked runs alternate in one process so that machine noise hits
both alike: each repeat is a pair of a bare and a hooked run (in turns one
or the other first), and the ratio (or difference) is the median over the
pairs, which a slow spell of the machine shifts far less than a ratio of
medians.  Times are the process's CPU time by default (``--clock cpu``),
which other processes on a shared machine disturb far less than wall time
(``--clock wall``).  BLAS runs on one thread (unless OPENBLAS_NUM_THREADS /
OMP_NUM_THREADS / MKL_NUM_THREADS is set): idle BLAS threads spinning on a
busy 2-core machine add CPU time at random, and the hook's own work is
single-threaded anyway.

Prints the hooked/bare ratio for VGG16 and ResNet50 (batch 1, CPU,
train=False) and the extra microseconds per call of a loop of F.relu on a
4x4 array under a no-op FunctionHook, Chainer's own TimerHook and this
hook, measured in turns in the same rounds; the ratio of this hook's extra
to TimerHook's cancels the machine's speed (with memory=True too, live
memory followed).  While a hook is active, chainer.is_arrays_compatible
is the hook's stand-in (see docs/performance.md), which answers for NumPy
outputs faster than Chainer's function: a saving the extra includes, so
the loop also runs with that answer alone, and the hook's own work (the
extra with that saving added back) is printed too.  ``--memory`` times
the models with memory=True.  The last line sums up.
"""

import argparse
import statistics
import time
import warnings

# Before NumPy is imported.
import one_blas_thread  # NOQA

import chainer
from chainer.function_hooks import TimerHook
import chainer.functions as F
import chainer.links as L
import numpy as np

from chainer_computational_cost import ComputationalCostHook


CLOCKS = {'cpu': time.process_time, 'wall': time.perf_counter}


def _time(fn, clock):
    start = clock()
    fn()
    return clock() - start


def compare(fn, repeat, clock=time.process_time, memory=False):
    """Seconds of fn() bare and under a fresh hook, alternating: a list of
    (bare, hooked) pairs."""
    def hooked():
        with ComputationalCostHook(memory=memory):
            fn()

    fn()  # warm up caches and lazy imports
    hooked()
    pairs = []
    for i in range(repeat):
        # Alternate which run goes first, so that an effect of order
        # (caches, allocator) favours neither.
        if i % 2:
            h = _time(hooked, clock)
            pairs.append((_time(fn, clock), h))
        else:
            pairs.append((_time(fn, clock), _time(hooked, clock)))
    return pairs


def medians(pairs):
    """Median bare and hooked seconds."""
    return (statistics.median(b for b, _ in pairs),
            statistics.median(h for _, h in pairs))


def main():
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repeat', type=int, default=15)
    parser.add_argument('--calls', type=int, default=3000)
    parser.add_argument('--clock', choices=sorted(CLOCKS), default='cpu')
    parser.add_argument('--memory', action='store_true')
    args = parser.parse_args()
    if args.repeat < 5:
        parser.error('--repeat must be at least 5 (medians of fewer runs '
                     'are noise), got {}'.format(args.repeat))
    if args.calls < 1:
        parser.error('--calls must be positive, got {}'.format(args.calls))
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

        pairs = compare(forward, args.repeat, clock, args.memory)
        bare, hooked = medians(pairs)
        ratios[name] = statistics.median(h / b for b, h in pairs)
        print('{:<9} bare {:8.1f} ms  hooked {:8.1f} ms  ratio {:.3f}'
              .format(name, bare * 1e3, hooked * 1e3, ratios[name]))

    extra = per_call_extras(args.calls, args.repeat, clock)
    print('F.relu x{}: bare {:.2f} us/call; extra per call: no-op hook '
          '{:.2f} us, TimerHook {:.2f} us, ComputationalCostHook {:.2f} us '
          '({:.2f} us with memory=True)'.format(
              args.calls, extra['bare'], extra['noop'], extra['timer'],
              extra['cch'], extra['memory']))
    # The stand-in answers Chainer's check of the outputs faster than
    # Chainer does (a saving the extra above includes): added back, the
    # hook's own work per call.
    saving = -extra['fast_check']
    print('of which the stand-in for chainer.is_arrays_compatible saves '
          '{:.2f} us of Chainer\'s own work; the hook\'s own work: {:.2f} us, '
          '{:.2f}x TimerHook\'s'.format(
              saving, extra['cch'] + saving,
              (extra['cch'] + saving) / extra['timer']))
    print('summary ({} time{}): VGG16 {:.3f}x, ResNet50 {:.3f}x, extra per '
          'call {:.2f}x TimerHook\'s ({:.2f}x with memory=True; own work '
          '{:.2f}x; original 0.1.2: 1.94x, 2.43x, 72 us a call)'.format(
              args.clock, ', models with memory=True' if args.memory else '',
              ratios['VGG16'], ratios['ResNet50'],
              extra['cch'] / extra['timer'],
              extra['memory'] / extra['timer'],
              (extra['cch'] + saving) / extra['timer']))


class _Noop(chainer.FunctionHook):
    """What Chainer's calling of any hook costs."""

    name = 'NoopHook'

    def forward_postprocess(self, function, in_data):
        pass


def per_call_extras(calls, repeat, clock):
    """Microseconds per F.relu call on a 4x4 array: ``bare``, then the
    extra (median over rounds of hooked minus bare) under a no-op hook,
    TimerHook and ComputationalCostHook (``memory``: with memory=True),
    each timed in every round."""
    small = np.ones((4, 4), np.float32)

    def loop():
        with chainer.no_backprop_mode():
            for _ in range(calls):
                F.relu(small)

    def under(make):
        def run():
            with make():
                loop()
        return run

    real_check = chainer.is_arrays_compatible
    is_ndarray = np.ndarray.__instancecheck__

    def fast_check_alone():
        # The stand-in's answer for NumPy outputs (the test in
        # computational_cost_hook._spy, which must stay the same), without
        # its notes and without a hook: what answering faster saves of
        # Chainer's time.
        chainer.is_arrays_compatible = lambda arrays: (
            type(arrays) is tuple and all(map(is_ndarray, arrays))
            or real_check(arrays))
        try:
            loop()
        finally:
            chainer.is_arrays_compatible = real_check

    runs = {'bare': loop, 'noop': under(_Noop), 'timer': under(TimerHook),
            'cch': under(ComputationalCostHook),
            'memory': under(lambda: ComputationalCostHook(memory=True)),
            'fast_check': fast_check_alone}
    for fn in runs.values():
        fn()  # warm up
    times = {k: [] for k in runs}
    order = list(runs)
    for i in range(repeat):
        for k in order[i % len(order):] + order[:i % len(order)]:
            times[k].append(_time(runs[k], clock))
    bare = times['bare']
    out = {'bare': statistics.median(bare) / calls * 1e6}
    for k in ('noop', 'timer', 'cch', 'memory', 'fast_check'):
        out[k] = statistics.median(
            t - b for t, b in zip(times[k], bare)) / calls * 1e6
    return out


if __name__ == '__main__':
    main()
