"""What CostMonitor adds to a training: trained with it over trained without.

    python benchmarks/extension_overhead.py [--iterations 300] [--rounds 5]
                                            [--instructions [--layouts K]
                                             [--ablate]]

Trains a small MLP (784-100-100-10, batch 32, Adam, synthetic data) for
``--iterations`` with a LogReport (every 100 iterations), once without and
once with ``CostMonitor(device='a100')`` (its costed iterations included).
The two trainings run side by side, in two threads that take turns one
iteration at a time (an extension at the end of each iteration hands over
to the other), so that a slow spell of a shared machine falls on both
alike; each is timed by its own thread's CPU time, less the hand-overs'.
``--rounds`` such pairs, the first to start alternating; prints each
round's times, then the ratio of the sums and the median of the rounds'
ratios: the issue's goal is <= 1.02.

``--instructions`` counts machine instructions instead, under valgrind's
callgrind (valgrind must be installed), which a busy machine does not
move: each training (bare, monitored, and monitored with a stand-in hook
that records nothing) is run for 100 and for 300 iterations in a
subprocess; the difference over 200 is the cost of a later iteration,
the 100-iteration count less the bare one's the monitor's fixed cost
(its costed iterations).  Where the arrays land in memory changes which
path OpenBLAS takes, so two runs that differ only in what was allocated
before read up to about 1 % apart per iteration: the stand-in run shows
how much of the monitored run's difference is that.  ``--layouts K``
repeats the counts with the heap shifted K ways (a buffer of another size
allocated before anything else) and prints the median ratio too: the
spread of the K ratios is what the memory layout alone moves.  The runs
go two at a time (valgrind counts the same either way).

``--instructions --ablate`` counts three more monitored trainings, each
with one part of the monitor's work taken out (its figures never
reported, so the LogReport summarises none of them; the graph check
always answering "the same"; the per-call check keeping the node only),
so that what each part costs an iteration is its row's difference from
the monitored row.  They are not trainings a user could run.
"""

import concurrent.futures

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
import warnings

# Before NumPy is imported.
import one_blas_thread  # NOQA

import chainer
import chainer.functions as F
import chainer.links as L
from chainer import training
from chainer.training import extensions
import numpy as np

from chainer_computational_cost import CostMonitor


class MLP(chainer.Chain):
    """784-100-100-10."""

    def __init__(self):
        super(MLP, self).__init__()
        with self.init_scope():
            self.l1 = L.Linear(784, 100)
            self.l2 = L.Linear(100, 100)
            self.l3 = L.Linear(100, 10)

    def forward(self, x):
        return self.l3(F.relu(self.l2(F.relu(self.l1(x)))))


class HandOver(training.Extension):
    """Last in each iteration: wakes the other training and waits for its
    turn (not after the last iteration); notes its own CPU time."""

    trigger = 1, 'iteration'
    priority = -10 ** 6

    def __init__(self, mine, other, iterations):
        self.mine, self.other, self.iterations = mine, other, iterations
        self.spent = 0.0

    def __call__(self, trainer):
        start = time.thread_time()
        self.other.release()
        if trainer.updater.iteration < self.iterations:
            self.mine.acquire()
        self.spent += time.thread_time() - start


def synthetic_data():
    """1000 (784 float32 values, int32 label) examples, the same at each
    call."""
    rng = np.random.RandomState(0)
    return [(rng.rand(784).astype(np.float32), np.int32(rng.randint(10)))
            for _ in range(1000)]


def make_trainer(data, iterations, monitored, out):
    np.random.seed(0)
    model = L.Classifier(MLP())
    optimizer = chainer.optimizers.Adam()
    optimizer.setup(model)
    it = chainer.iterators.SerialIterator(data, 32, shuffle=False)
    updater = training.StandardUpdater(it, optimizer)
    trainer = training.Trainer(updater, (iterations, 'iteration'), out=out)
    if monitored:
        trainer.extend(CostMonitor(device='a100'))
    trainer.extend(extensions.LogReport(trigger=(100, 'iteration')))
    return trainer


def side_by_side(data, iterations, first_monitored, out):
    """CPU seconds of the bare and the monitored training, run in turns."""
    turns = {False: threading.Semaphore(0), True: threading.Semaphore(0)}
    times = {}

    def run(monitored):
        trainer = make_trainer(data, iterations, monitored, out)
        hand = HandOver(turns[monitored], turns[not monitored], iterations)
        trainer.extend(hand)
        turns[monitored].acquire()
        start = time.thread_time()
        trainer.run()
        times[monitored] = time.thread_time() - start - hand.spent

    threads = [threading.Thread(target=run, args=(m,)) for m in (False, True)]
    for t in threads:
        t.start()
    turns[first_monitored].release()
    for t in threads:
        t.join()
    return times[False], times[True]


#: The sizes of the buffer that shifts the heap in the K layouts of
#: --layouts: arbitrary, not multiples of a page or of each other.
_PADS = (0, 24600, 100424, 7208, 51336)

#: Kept until the child's training ends.
_pad = None


#: --ablate's trainings (see _ablate).
ABLATIONS = ('no-report', 'no-graph', 'no-check')


def _ablate(mode):
    """Take one part out of the monitor's work (see --ablate): its
    figures never reported (no-report), the graph check always "the same"
    (no-graph), the per-call check keeping the node only (no-check)."""
    from chainer_computational_cost.run import extensions as cm
    if mode == 'no-report':
        cm._Steps.figures = lambda self, elapsed: {}
    elif mode == 'no-graph':
        cm._same_graph = lambda *args, **kwargs: True
    else:
        check = cm._Calls._check

        def keep_only(self, reference):
            _, restart = check(self, reference)
            keep = self.nodes.append

            def forward_postprocess(function, in_data):
                keep(cm._ref(function))
            return forward_postprocess, restart
        cm._Calls._check = keep_only


def _child(mode, iterations, layout=0):
    """One training under callgrind (see --instructions)."""
    global _pad
    _pad = bytearray(_PADS[layout])
    warnings.simplefilter('ignore')
    if mode in ABLATIONS:
        _ablate(mode)
    if mode == 'stand-in':
        # The monitor's own code with a hook that records nothing.
        from chainer_computational_cost.run import extensions as cm

        class StandIn(object):
            memory = False

            def __init__(self, **kwargs):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                pass

            def comm_bytes_of(self):
                return {}

            def records(self):
                return []
        cm.ComputationalCostHook = StandIn
    data = synthetic_data()
    trainer = make_trainer(data, iterations, mode != 'bare',
                           '/tmp/extension_overhead')
    trainer.run()


def count_instructions(mode, iterations, layout=0):
    """Instructions of a whole run of the child (callgrind)."""
    cmd = ['valgrind', '--tool=callgrind', '--callgrind-out-file=/dev/null',
           sys.executable, os.path.abspath(__file__), '--child', mode,
           str(iterations), str(layout)]
    env = dict(os.environ, PYTHONHASHSEED='0')
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    except FileNotFoundError:
        sys.exit('error: --instructions needs valgrind, which is not '
                 'installed')
    for line in done.stderr.splitlines():
        if 'Collected :' in line:
            return int(line.split()[-1])
    sys.exit('error: callgrind printed no count:\n' + done.stderr[-2000:])


def instructions(layouts=1, ablate=False):
    """Print the per-iteration and fixed instruction counts, per layout of
    the heap, and the median ratio over the layouts."""
    modes = ('bare', 'monitored', 'stand-in') + (
        ABLATIONS if ablate else ())
    runs = [(mode, n, layout) for layout in range(layouts)
            for mode in modes for n in (100, 300)]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        counts = dict(zip(runs, pool.map(
            lambda run: count_instructions(*run), runs)))
    ratios = {mode: [] for mode in modes}
    for layout in range(layouts):
        if layouts > 1:
            print('layout {} (heap shifted by {} bytes):'.format(
                layout, _PADS[layout]))

        def per(mode):
            return (counts[mode, 300, layout] - counts[mode, 100, layout]) \
                / 200
        bare = per('bare')
        for mode in modes:
            short = counts[mode, 100, layout]
            ratios[mode].append(per(mode) / bare)
            print('{:9}: {:,.0f} instructions per later iteration ({:.4f} '
                  "of bare's); 100 iterations {:,} ({:+,} against bare)"
                  .format(mode, per(mode), per(mode) / bare, short,
                          short - counts['bare', 100, layout]))
    if layouts > 1:
        for mode in modes[1:]:
            print('{:9}: median over {} layouts {:.4f} (from {:.4f} to '
                  '{:.4f})'.format(mode, layouts,
                                   statistics.median(ratios[mode]),
                                   min(ratios[mode]), max(ratios[mode])))


def main():
    """Run the pairs and print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--iterations', type=int, default=300)
    parser.add_argument('--rounds', type=int, default=5)
    parser.add_argument('--out', default='/tmp/extension_overhead')
    parser.add_argument('--instructions', action='store_true',
                        help='count instructions under callgrind instead')
    parser.add_argument('--layouts', type=int, default=1, metavar='K',
                        help='with --instructions: count with the heap '
                        'shifted K ways (1 to {})'.format(len(_PADS)))
    parser.add_argument('--ablate', action='store_true',
                        help='with --instructions: also count monitored '
                        'trainings with one part of its work taken out')
    parser.add_argument('--child', nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not 1 <= args.layouts <= len(_PADS):
        parser.error('--layouts must be from 1 to {}'.format(len(_PADS)))
    if args.ablate and not args.instructions:
        parser.error('--ablate goes with --instructions')
    if args.child:
        return _child(args.child[0], int(args.child[1]), int(args.child[2]))
    if args.instructions:
        return instructions(args.layouts, args.ablate)
    warnings.simplefilter('ignore')
    data = synthetic_data()
    side_by_side(data, 20, False, args.out)  # warm-up: imports, allocator
    sums = [0.0, 0.0]
    ratios = []
    for r in range(args.rounds):
        bare, monitored = side_by_side(data, args.iterations, r % 2 == 1,
                                       args.out)
        sums[0] += bare
        sums[1] += monitored
        ratios.append(monitored / bare)
        print('round {}: bare {:.3f} s, monitored {:.3f} s (CPU), ratio '
              '{:.4f}'.format(r + 1, bare, monitored, monitored / bare))
    print('monitored/bare over {} rounds of {} iterations: {:.4f} (median '
          'of the rounds {:.4f})'.format(args.rounds, args.iterations,
                                         sums[1] / sums[0],
                                         statistics.median(ratios)))


if __name__ == '__main__':
    main()
