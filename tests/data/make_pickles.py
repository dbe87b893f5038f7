"""Writes the pickles that ``test_pickles_of_0_2_0`` loads: a snapshot and
a projection of a small training step (memory on, one Adam update) and a
network preset, as version 0.2.0 (the last flat layout) pickled them.

Run once, with that version installed; the files are kept as they came out
so that later layouts are checked against what users saved.  The figures
they hold are worked by hand in the test.
"""

import os
import pickle

import chainer
import chainer.links as L
import numpy as np

import chainer_computational_cost as ccc
from chainer_computational_cost import network

HERE = os.path.dirname(os.path.abspath(__file__))


def _model():
    model = L.Classifier(L.Linear(3, 2))
    model.predictor.W.array[...] = 0.5
    model.predictor.b.array[...] = 0
    return model


def _step(model, optimizer, n):
    x = np.ones((n, 3), np.float32)
    t = np.zeros(n, np.int32)
    optimizer.update(model, x, t)


def main():
    model = _model()
    optimizer = chainer.optimizers.Adam()
    optimizer.setup(model)
    with ccc.ComputationalCostHook(memory=True) as cch:
        _step(model, optimizer, 2)
    with open(os.path.join(HERE, 'snapshot-0.2.0.pkl'), 'wb') as f:
        pickle.dump(cch.snapshot(), f, protocol=4)

    model = _model()
    optimizer = chainer.optimizers.Adam()
    optimizer.setup(model)

    def run(n):
        _step(model, optimizer, n)
    projection = ccc.project_batch(run, 16)
    with open(os.path.join(HERE, 'projection-0.2.0.pkl'), 'wb') as f:
        pickle.dump(projection, f, protocol=4)
    with open(os.path.join(HERE, 'network-0.2.0.pkl'), 'wb') as f:
        pickle.dump(network.NETWORKS['eth-50g'], f, protocol=4)


if __name__ == '__main__':
    main()
