"""Run under mpiexec by tests/collect/test_mpi_recorder.py: each ChainerMN
function forward and backward in its own hook, with the spy of mn_train.py in
place of the communicator's mpi4py communicator.  Writes one JSON line
per rank and dtype: per function, the spy's bytes and the hook's
comm_bytes, and the functions the hook ignored."""

import os
import sys
import warnings

import chainer
import chainer.functions as F
import chainermn
import chainermn.functions as MF
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mn_train import emit  # NOQA
from mn_train import Spy  # NOQA

from chainer_computational_cost import ComputationalCostHook  # NOQA


def var(comm, dtype, n=3):
    return chainer.Variable(
        (np.arange(n, dtype=np.float32) + comm.rank).astype(dtype))


def run(comm, name, dtype):
    rank, size = comm.rank, comm.size
    peer = rank ^ 1
    if name == 'allgather':
        ys = MF.allgather(comm, var(comm, dtype))
        F.sum(F.stack(ys)).backward()
    elif name == 'alltoall':
        ys = MF.alltoall(comm, [var(comm, dtype) for _ in range(size)])
        F.sum(F.stack(ys)).backward()
    elif name == 'bcast':
        y = MF.bcast(comm, var(comm, dtype) if rank == 0 else None, 0)
        F.sum(y).backward()
    elif name == 'gather':
        ys = MF.gather(comm, var(comm, dtype), 0)
        if rank == 0:
            F.sum(F.stack(ys)).backward()
        else:
            ys.backward()
    elif name == 'scatter':
        xs = [var(comm, dtype) for _ in range(size)] if rank == 0 else None
        y = MF.scatter(comm, xs, 0)
        F.sum(y).backward()
    elif name == 'send_recv':
        if rank % 2 == 0:
            phi = MF.send(var(comm, dtype), comm, peer)
            phi.backward()
        else:
            y, = MF.recv(comm, peer, force_tuple=True)
            F.sum(y).backward()
    elif name == 'pseudo_connect':
        if rank % 2 == 0:
            phi = MF.send(var(comm, dtype), comm, peer)
            x = var(comm, dtype)
            y = MF.pseudo_connect(phi, x)
            y = y[0] if isinstance(y, tuple) else y
            F.sum(y).backward()
        else:
            y, = MF.recv(comm, peer, force_tuple=True)
            F.sum(y).backward()


NAMES = ['allgather', 'alltoall', 'bcast', 'gather', 'scatter', 'send_recv',
         'pseudo_connect']


def main(dtype_name, comm):
    out = {'dtype': dtype_name, 'rank': comm.rank, 'results': {}}
    for name in NAMES:
        spy = Spy(comm.mpi_comm)
        real = comm.mpi_comm
        comm.mpi_comm = spy
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            with ComputationalCostHook(comm=comm) as cch:
                run(comm, name, np.dtype(dtype_name))
        comm.mpi_comm = real
        gathered = cch.gather(root=0)
        layers = [r for n, r in cch.layer_report.items() if n != 'total']
        out['results'][name] = {
            'spy': spy.total,
            'hook': sum(r['comm_bytes'] for r in layers),
            'phases': sorted({r['phase'] for r in layers
                              if r['comm_bytes']}),
            'ignored': sorted(cch.ignored_layers),
            'types': sorted({r['type'] for r in layers
                             if not r['type'].startswith('MPI_')}),
            'differing': (None if gathered is None
                          else gathered.differing_ranks),
            'slowest': (None if gathered is None else {
                t: r.get('slowest_rank')
                for t, r in gathered.summary_report.items()}),
            'warnings': [str(w.message) for w in caught
                         if 'ComputationalCost' in str(w.message)
                         or 'not yet supported' in str(w.message)],
        }
    emit(out)


if __name__ == '__main__':
    warnings.simplefilter('ignore', FutureWarning)  # experimental()
    communicator = chainermn.create_communicator('naive')
    for name in sys.argv[1:]:
        main(name, communicator)
