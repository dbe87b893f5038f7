"""Property cases of ChainerMN's function nodes (``chainermn.functions``,
see ``property_cases``).  They need MPI to run, so each case costs the
node directly (a :class:`Direct`), with the shapes the real node returns;
the nodes are built without a communicator (their ``__init__`` warns that
they are experimental), with what the calculators read."""

import importlib

import numpy as np

from property_cases import B
from property_cases import case
from property_cases import Direct
from property_cases import Spec


class _Comm(object):
    def __init__(self, size):
        self.size = size


def _node(module, name, **attrs):
    cls = getattr(importlib.import_module('chainermn.functions.' + module),
                  name)
    node = object.__new__(cls)
    node.__dict__.update(attrs)
    return node


def _collective(name, size, **attrs):
    return _node('collective_communication', name, comm=_Comm(size),
                 **attrs)


def _empty():
    return np.zeros(0, np.float32)


@case('AllGather')
def _allgather(d, n):
    size = d.int(1, 3)

    def f(x):
        # every rank's x comes back
        return Direct(_collective('AllGather', size), (x,),
                      [x.shape] * size)
    return Spec(f, [B(d.x(n))])


@case('AllToAll')
def _alltoall(d, n):
    size = d.int(1, 3)

    def f(*xs):
        return Direct(_collective('AllToAll', size), xs,
                      [x.shape for x in xs])
    return Spec(f, [B(d.x(n)) for _ in range(size)])


@case('Bcast')
def _bcast(d, n):
    def f(x):  # the root: sends x, receives it back
        return Direct(_collective('Bcast', 2, root=0), (x,), [x.shape])
    return Spec(f, [B(d.x(n))])


@case('Gather')
def _gather(d, n):
    size = d.int(1, 3)

    def f(x):  # the root: receives every rank's x
        return Direct(_collective('Gather', size, root=0), (x,),
                      [x.shape] * size)
    return Spec(f, [B(d.x(n))])


@case('Scatter')
def _scatter(d, n):
    size = d.int(1, 3)

    def f(*xs):  # the root: sends xs[i] to rank i, receives xs[0]
        return Direct(_collective('Scatter', size, root=0), xs,
                      [xs[0].shape])
    return Spec(f, [B(d.x(n)) for _ in range(size)])


def _p2p(name):
    return _node('point_to_point_communication', name, comm=_Comm(2),
                 peer_rank=1, peer_tag=0)


@case('Send')
def _send(d, n):
    def f(x):  # x and the empty delegate in, an empty delegate out
        return Direct(_p2p('Send'), (x, _empty()), [(0,)])
    return Spec(f, [B(d.x(n))])


@case('Recv')
def _recv(d, n):
    def f(x):  # an empty delegate in, what the peer sent (x's shape) out
        return Direct(_p2p('Recv'), (_empty(),), [x.shape])
    return Spec(f, [B(d.x(n))], fixed_mread=0,
                writes_outputs='costed directly (no out_shapes), what '
                               'arrives cannot be known: 0; the hook '
                               'passes the shapes (test_mpi_recorder.py)')


@case('PseudoConnect')
def _pseudo_connect(d, n):
    def f(x):
        return Direct(_node('pseudo_connect', 'PseudoConnect'),
                      (_empty(), x), [x.shape])
    return Spec(f, [B(d.x(n))],
                writes_outputs='returns its inputs: nothing is written')
