"""The model of the ChainerMN and scaling tests (no MPI needed here)."""

import chainer
import chainer.functions as F
import chainer.links as L


class MLP(chainer.Chain):
    """3-4-2: 3*4 + 4 + 4*2 + 2 = 26 parameters."""

    def __init__(self):
        super(MLP, self).__init__()
        with self.init_scope():
            self.l1 = L.Linear(3, 4)
            self.l2 = L.Linear(4, 2)

    def forward(self, x):
        return self.l2(F.relu(self.l1(x)))


def build_mlp():
    """The MLP, for the command line: ``mpi.mn_models:build_mlp``."""
    return MLP()
