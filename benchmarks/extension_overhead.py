"""What CostMonitor adds to a training: trained with it over trained without.

    python benchmarks/extension_overhead.py [--iterations 300] [--rounds 15]

Trains a small MLP (784-100-100-10, batch 32, Adam, synthetic data) for
``--iterations`` with a LogReport (every 100 iterations), once without and
once with ``CostMonitor(device='a100')`` (its costed iterations included),
``--rounds`` times, the two alternating (so that a slow spell of a shared
machine falls on both alike; which one goes first alternates too).  Times
are the process's CPU time, BLAS on one thread.  Prints each round's times
and ratio, then the median ratio: the issue's goal is <= 1.02.
"""

import argparse
import statistics
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


def train(data, iterations, monitored, out):
    """CPU seconds of this process that ``trainer.run()`` takes (on a
    machine shared with other jobs, wall time mostly measures them)."""
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
    start = time.process_time()
    trainer.run()
    return time.process_time() - start


def main():
    """Interleave the two trainings and print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--iterations', type=int, default=300)
    parser.add_argument('--rounds', type=int, default=15)
    parser.add_argument('--out', default='/tmp/extension_overhead')
    args = parser.parse_args()
    warnings.simplefilter('ignore')
    rng = np.random.RandomState(0)
    data = [(rng.rand(784).astype(np.float32), np.int32(rng.randint(10)))
            for _ in range(1000)]
    train(data, 20, False, args.out)  # warm-up: imports, allocator
    train(data, 20, True, args.out)
    ratios = []
    for r in range(args.rounds):
        order = (False, True) if r % 2 == 0 else (True, False)
        times = {m: train(data, args.iterations, m, args.out)
                 for m in order}
        ratios.append(times[True] / times[False])
        print('round {}: bare {:.3f} s, monitored {:.3f} s (CPU), ratio '
              '{:.4f}'
              .format(r + 1, times[False], times[True], ratios[-1]))
    print('median monitored/bare over {} rounds of {} iterations: {:.4f}'
          .format(args.rounds, args.iterations, statistics.median(ratios)))


if __name__ == '__main__':
    main()
