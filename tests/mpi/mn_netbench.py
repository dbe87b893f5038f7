"""Run under mpiexec by tests/run/test_netbench.py: netbench's command line
on the naive communicator, writing a network file; every rank then loads
it and writes one JSON line (see mn_train.emit)."""

import os
import sys

import chainermn

from chainer_computational_cost.cli import netbench
from chainer_computational_cost.core import devices
from mn_train import emit


def main():
    out = os.environ['MN_OUT']
    path = os.path.join(out, 'net.json')
    status = netbench.main(['--communicator', 'naive', '--sizes',
                            '4,1K,64K,1M,16M', '--repeats', '5', '--output',
                            path, '--name', 'here'])
    comm = chainermn.create_communicator('naive')
    comm.mpi_comm.Barrier()  # rank 0 has written the file
    net = devices.resolve_network(path)
    emit({'rank': comm.rank, 'dtype': 'float32', 'status': status,
          'name': net.name, 'title': net.title,
          'bandwidth': net.bandwidth, 'latency': net.latency})


if __name__ == '__main__':
    sys.exit(main())
