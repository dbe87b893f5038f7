"""Run under mpiexec by tests/collect/test_mpi_recorder.py: a two-update
multi-node SGD step of an MLP, with a spy in place of the communicator's mpi4py
communicator, and the hook's comm_bytes compared with the spy's total.
Writes one JSON line per rank and dtype (see emit)."""

import json
import os
import sys

import chainer
import chainer.functions as F
import chainermn
import mpi4py.MPI as MPI
import numpy as np

from chainer_computational_cost import ComputationalCostHook
from mn_models import MLP


def emit(row):
    """One JSON line for the test, in a file per rank (the ranks' stdout
    would interleave)."""
    path = os.path.join(os.environ['MN_OUT'], '{}.jsonl'.format(
        row['rank']))
    with open(path, 'a') as f:
        f.write(json.dumps(row) + '\n')


class Spy(object):
    """Sums the bytes of every data-moving call made on ``real``: its own
    reading of mpi4py's buffer specs, written for the forms ChainerMN
    uses (plain arrays/bytearrays, [buf, (counts, displs), type]), and
    pickles for the object calls."""

    def __init__(self, real):
        self.__dict__.update(real=real, total=0, calls=[])

    def __getattr__(self, name):
        value = getattr(self.real, name)
        if not callable(value) or name not in COUNTED:
            return value

        def call(*args, **kwargs):
            result = value(*args, **kwargs)
            n = COUNTED[name](self.real, args, kwargs, result)
            self.__dict__['total'] += n
            self.calls.append((name, n))
            return result
        return call


def _buf(spec):
    if spec is None or spec is MPI.IN_PLACE:
        return None
    if isinstance(spec, list):
        buf, (counts, _), mtype = spec
        return sum(counts) * mtype.Get_size()
    return memoryview(spec).nbytes


def _first(args):
    for spec in args[:2]:
        n = _buf(spec)
        if n is not None:
            return n
    return 0


def _pk(obj):
    import pickle
    return len(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))


def _root(args, kwargs):
    return kwargs.get('root', args[1] if len(args) > 1 else 0)


COUNTED = {
    'Allreduce': lambda c, a, k, r: _first(a),
    'Bcast': lambda c, a, k, r: _first(a),
    'Allgatherv': lambda c, a, k, r: _first(a),
    'Gatherv': lambda c, a, k, r: _first(a),
    'Scatterv': lambda c, a, k, r: _first(a),
    'Alltoallv': lambda c, a, k, r: _first(a),
    'Send': lambda c, a, k, r: _first(a),
    'Ssend': lambda c, a, k, r: _first(a),
    'Recv': lambda c, a, k, r: _first(a),
    'bcast': lambda c, a, k, r: _pk(a[0] if c.rank == _root(a, k) else r),
    'gather': lambda c, a, k, r: _pk(a[0]),
    'allgather': lambda c, a, k, r: _pk(a[0]),
    'allreduce': lambda c, a, k, r: _pk(a[0]),
    'alltoall': lambda c, a, k, r: sum(_pk(o) for o in a[0]),
    'scatter': lambda c, a, k, r: (sum(_pk(o) for o in a[0])
                                   if c.rank == _root(a, k) else _pk(r)),
    'send': lambda c, a, k, r: _pk(a[0]),
    'ssend': lambda c, a, k, r: _pk(a[0]),
    'recv': lambda c, a, k, r: _pk(r),
}


def raw_recv(comm):
    """A message of 3 float32 (12 bytes) received into a buffer of 10 (40
    bytes): once without a status, once with the caller's own.  Returns
    (the hook's (type, comm_bytes) of each call, what the caller's status
    says, the first three values received)."""
    peer = comm.rank ^ 1
    count, got = None, None
    with ComputationalCostHook(comm=comm) as cch:
        mpi = comm.mpi_comm  # the hook's stand-in, inside the block
        for tag in range(2):
            if comm.rank % 2 == 0:
                mpi.Send(np.arange(3, dtype=np.float32), dest=peer, tag=tag)
                continue
            buf = np.zeros(10, np.float32)
            if tag == 0:
                mpi.Recv(buf, source=peer, tag=tag)
            else:
                status = MPI.Status()
                mpi.Recv(buf, peer, tag, status)
                count = status.Get_count(MPI.FLOAT)
            got = buf[:3].tolist()
    calls = [(r['type'], r['comm_bytes'])
             for n, r in cch.layer_report.items() if n != 'total']
    return calls, count, got


def gathered_memory(comm):
    """Each rank keeps the ReLU of 4 * (rank + 1) float32 alive: rank r's
    peak is 16 * (r + 1) bytes; the gathered report's memory figures."""
    with ComputationalCostHook(comm=comm, memory=True) as cch:
        y = F.relu(np.zeros(4 * (comm.rank + 1), np.float32))
    gathered = cch.gather(root=0)
    del y
    if gathered is None:
        return None
    figures = gathered.memory_report
    return {'peak': figures['peak'], 'rank': figures['rank'],
            'layer': figures['peak_layer'],
            'by_rank': [f['peak'] for f in
                        gathered.memory_report_by_rank().values()]}


def main(dtype_name, comm):
    spy = Spy(comm.mpi_comm)
    comm.mpi_comm = spy
    dtype = np.dtype(dtype_name)
    with chainer.using_config('dtype', dtype):
        model = MLP()
        x = np.arange(6, dtype=dtype).reshape(2, 3) / 6
        t = np.array([0, 1], dtype=np.int32)
        optimizer = chainermn.create_multi_node_optimizer(
            chainer.optimizers.SGD(lr=0.01), comm)
        optimizer.setup(model)
        with ComputationalCostHook(comm=comm) as cch:
            for _ in range(2):
                model.cleargrads()
                loss = F.softmax_cross_entropy(model(x), t)
                loss.backward()
                optimizer.update()
    restored = comm.mpi_comm is spy
    layers = [r for n, r in cch.layer_report.items() if n != 'total']
    comm_layers = [(r['type'], r['comm_bytes'], r['phase'],
                    r['params']['call'])
                   for r in layers if r['comm_bytes']]
    comm.mpi_comm = spy.real
    # An MPI call that fails inside the block is the user's error: it
    # propagates unchanged, and the communicator gets its own back.
    try:
        with ComputationalCostHook(comm=comm):
            comm.mpi_comm.Bcast(object(), root=0)
        propagated = None
    except TypeError as e:
        propagated = type(e).__name__
    propagated = (propagated, comm.mpi_comm is spy.real)
    roof = cch.roofline_report(device='a100', network='ib-hdr200')
    gathered = cch.gather(root=0)
    if gathered is not None:
        report = gathered.layer_report
        gathered = {
            'ranks': sorted({r['rank'] for n, r in report.items()
                             if n != 'total'}),
            'n_layers': len(report) - 1,
            'comm_bytes': sum(r['comm_bytes'] for n, r in report.items()
                              if n != 'total'),
            'differing': gathered.differing_ranks,
            'first': next(iter(report)),
        }
    summary = cch.summary_report
    emit({
        'total_comm_bytes': cch.total_report['comm_bytes'],
        'summary_comm_bytes': [summary[t]['comm_bytes'] for t in
                               ('MPI_Bcast', 'MPI_Allreduce')],
        'recv': raw_recv(comm), 'gathered_memory': gathered_memory(comm),
        'dtype': dtype_name, 'rank': comm.rank, 'spy': spy.total,
        'hook': sum(r['comm_bytes'] for r in layers),
        'restored': restored, 'comm': comm_layers,
        't_network': roof['MPI_Allreduce-1']['t_network'],
        'n_layers': len(layers), 'gathered': gathered,
        'propagated': propagated,
        'local_comm_bytes': sorted({r['comm_bytes'] for r in layers
                                    if not r['type'].startswith('MPI_')}),
        # The update phase: where it is (the index of each record among
        # the layers) and what it costs.
        'update': [(i, r['type'], r['phase'], r['link'], r['flops'],
                    r['mread'], r['mwrite'])
                   for i, r in enumerate(layers) if r['phase'] == 'update'],
        'last_allreduce': max(i for i, r in enumerate(layers)
                              if r['type'] == 'MPI_Allreduce'),
    })


if __name__ == '__main__':
    communicator = chainermn.create_communicator('naive')
    for name in sys.argv[1:]:
        main(name, communicator)
