"""Does a netbench-measured Network predict a real ChainerMN all-reduce?

Run under MPI, from the checkout::

    PYTHONPATH=. .venv/bin/mpiexec -n 4 .venv/bin/python \\
        benchmarks/netbench_check.py [--communicator naive] [--rounds 3] \\
        [--slices 5]

Each round, on every rank: record one ChainerMN training step of an MLP
(four Linear layers, 8 parameter arrays, 5.55 MB of float32 gradients)
with ``ComputationalCostHook(comm=comm)``; then, ``--slices`` times in
turn, measure the communicator's all-reduce with ``netbench.measure`` at
the sizes the model all-reduces (its parameter arrays above 4 KiB, and 4,
256 and 4096 bytes for the latency: what ``--sizes`` is for), predict the
gradient all-reduce from the records (the ``t_network`` of the backward
``MPI_Allreduce`` records under the measured Network), and time the real
one: ``comm.multi_node_mean_grad(model)``, the median over rounds of the
slowest rank.  The two measurements take turns, a fraction of a second
each, so that a shared machine's drift (its all-reduce bandwidth moved
fourfold within an hour here) falls on both alike; a slice's ratio is
its prediction over its measured time, a round's the median of its
slices'.  Rank 0 prints each round and whether the median ratio over the
rounds is within 25 %.
"""

import argparse
import statistics

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.run import netbench


class MLP(chainer.Chain):
    """784-1000-500-200-10: 784000 + 1000 + 500000 + 500 + 100000 + 200 +
    2000 + 10 = 1,387,710 parameters (5.55 MB of float32)."""

    def __init__(self):
        super(MLP, self).__init__()
        with self.init_scope():
            self.l1 = L.Linear(784, 1000)
            self.l2 = L.Linear(1000, 500)
            self.l3 = L.Linear(500, 200)
            self.l4 = L.Linear(200, 10)

    def forward(self, x):
        h = F.relu(self.l1(x))
        h = F.relu(self.l2(h))
        return self.l4(F.relu(self.l3(h)))


def recorded_step(comm, model):
    """The hook of a second update of ``model`` (the first only
    broadcasts the parameters)."""
    import chainermn
    optimizer = chainermn.create_multi_node_optimizer(
        chainer.optimizers.SGD(), comm)
    optimizer.setup(model)
    x = np.random.rand(32, 784).astype(np.float32)
    t = np.random.randint(0, 10, 32).astype(np.int32)
    with ComputationalCostHook(comm=comm) as cch:
        for _ in range(2):
            model.cleargrads()
            F.softmax_cross_entropy(model(x), t).backward()
            optimizer.update()
    return cch


def predicted_allreduce(cch, network):
    """Seconds of the gradient all-reduce of the step ``cch`` recorded,
    under ``network``."""
    rows = cch.roofline_report(peak_flops=1e12, bandwidth=1e11,
                               network=network)
    layers = cch.layer_report
    return sum(rows[name]['t_network'] for name, x in layers.items()
               if x.get('type') == 'MPI_Allreduce'
               and x.get('phase') == 'backward')


def measured_allreduce(comm, model, repeats=20, warmup=3):
    """The median over ``repeats`` calls of the slowest rank's
    ``multi_node_mean_grad(model)``."""
    return netbench.time_mean_grad(comm, model, repeats, warmup)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--communicator', default='naive')
    parser.add_argument('--rounds', type=int, default=3)
    parser.add_argument('--slices', type=int, default=5)
    args = parser.parse_args()
    import chainermn
    comm = chainermn.create_communicator(args.communicator)
    ratios = []
    for r in range(args.rounds):
        model = MLP()
        # netbench at the sizes this model all-reduces (its parameter
        # arrays above 4 KiB) and three small ones for the latency
        sizes = [4, 256, 4096] + sorted(
            {p.array.nbytes for p in model.params()} - {0} - set(
                range(4097)))
        cch = recorded_step(comm, model)
        slices = []
        for _ in range(args.slices):
            network, _ = netbench.measure(comm, sizes)
            predicted = predicted_allreduce(cch, network)
            measured = measured_allreduce(comm, model)
            slices.append((predicted / measured, network, predicted,
                           measured))
        ratio, network, predicted, measured = sorted(
            slices, key=lambda s: s[0])[len(slices) // 2]
        ratios.append(ratio)
        if comm.rank == 0:
            print('round {}: {} ranks; median slice: latency {:.1f} us, '
                  'bandwidth {:.3f} GB/s, predicted {:.3f} ms, measured '
                  '{:.3f} ms, ratio {:.3f} (slices {})'.format(
                      r + 1, comm.size, network.latency * 1e6,
                      network.bandwidth / 1e9, predicted * 1e3,
                      measured * 1e3, ratio,
                      ' '.join('{:.2f}'.format(s[0]) for s in slices)),
                  flush=True)
    if comm.rank == 0:
        median = statistics.median(ratios)
        print('median ratio {:.3f} over {} rounds: {} 25 %'.format(
            median, len(ratios),
            'within' if abs(median - 1) <= 0.25 else 'NOT within'))


if __name__ == '__main__':
    main()
