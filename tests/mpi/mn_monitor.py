"""Run under mpiexec by tests/collect/test_mpi_recorder.py: a data-parallel
Trainer (StandardUpdater, multi-node SGD, one CostMonitor per rank) and, beside
it, the hook run on the first two steps of the same setup.  Writes one JSON
line per rank (see mn_train.emit)."""

import os
import sys

import chainer
from chainer import training
from chainer.training import extensions
import chainermn
import numpy as np

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import CostMonitor
from mn_models import MLP
from mn_train import emit

N_ITER = 4
BATCH = 2


def classifier_and_optimizer(comm):
    model = chainer.links.Classifier(MLP())
    optimizer = chainermn.create_multi_node_optimizer(
        chainer.optimizers.SGD(lr=0.01), comm)
    optimizer.setup(model)
    return model, optimizer


def hooked_steps(comm, x, t):
    """(FLOPs, comm bytes) of the hook (fma_1flop=False) around each of
    the first two updates: the first broadcasts the parameters, the second
    all-reduces the gradients and updates."""
    model, optimizer = classifier_and_optimizer(comm)
    out = []
    for _ in range(2):
        with ComputationalCostHook(fma_1flop=False, comm=comm) as hook:
            optimizer.update(model, x, t)
        total = hook.total_report
        out.append((total['flops'], total.get('comm_bytes', 0)))
    return out


def main(dtype_name, comm):
    rng = np.random.RandomState(comm.rank)
    data = [(rng.rand(3).astype(np.float32), np.int32(i % 2))
            for i in range(BATCH * N_ITER)]
    model, optimizer = classifier_and_optimizer(comm)
    updater = training.StandardUpdater(
        chainer.iterators.SerialIterator(data, BATCH, shuffle=False),
        optimizer)
    trainer = training.Trainer(updater, (N_ITER, 'iteration'),
                               out=os.path.join(os.environ['MN_OUT'],
                                                'trainer{}'.format(comm.rank)))
    trainer.extend(CostMonitor())
    log = extensions.LogReport(trigger=(1, 'iteration'))
    trainer.extend(log)
    trainer.run()
    x, t = chainer.dataset.concat_examples(data[:BATCH])
    emit({
        'dtype': dtype_name, 'rank': comm.rank,
        'log': [(e['cost/flops'], e['cost/comm_bytes']) for e in log.log],
        'hooked': hooked_steps(comm, x, t),
        # The real mpi4py communicator is back, the updater as it was.
        'restored': type(comm.mpi_comm).__module__.startswith('mpi4py')
        and 'update_core' not in vars(updater),
    })


if __name__ == '__main__':
    communicator = chainermn.create_communicator('naive')
    for name in sys.argv[1:]:
        main(name, communicator)
