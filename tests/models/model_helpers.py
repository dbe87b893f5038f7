"""Shared helpers for the real-model suite."""

import contextlib
import warnings

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np

from chainer_computational_cost import ComputationalCostHook


def run_model(model, *inputs, train=False, fma_1flop=True, backprop=False):
    """Run ``model(*inputs)`` under a strict hook; return the hook.

    Fails if any layer was ignored: every function must have a calculator.
    """
    inputs = [np.asarray(x) for x in inputs]
    with warnings.catch_warnings():
        warnings.simplefilter('error', UserWarning)
        with chainer.using_config('train', train), \
                chainer.using_config('enable_backprop', backprop):
            with ComputationalCostHook(fma_1flop=fma_1flop,
                                       strict=True) as cch:
                model(*inputs)
    assert cch.ignored_layers == {}
    return cch


@contextlib.contextmanager
def recorded_outputs():
    """Record what Chainer itself returns from every function call.

    Yields a list that receives, for each ``FunctionNode.apply`` call in
    call order, ``(class name, [output shapes])``: the shapes of the
    Variables Chainer returns, independent of the hook's own probe.  An
    old-style ``chainer.Function`` is named after the wrapped function, as
    the hook names it.
    """
    calls = []
    original = chainer.FunctionNode.apply

    def apply(self, inputs):
        outputs = original(self, inputs)
        func = self
        if isinstance(self, chainer.function.FunctionAdapter):
            func = self.function
        calls.append((type(func).__name__, [y.shape for y in outputs]))
        return outputs

    chainer.FunctionNode.apply = apply
    try:
        yield calls
    finally:
        chainer.FunctionNode.apply = original


def run_model_checked(model, *inputs, **kwargs):
    """``run_model``, then check the hook's records call by call against
    what Chainer returned: same function types in the same order, and the
    recorded ``output_shapes`` equal to the shapes of the real outputs."""
    with recorded_outputs() as calls:
        cch = run_model(model, *inputs, **kwargs)
    seen = [(r['type'], r['output_shapes'])
            for name, r in cch.layer_report.items() if name != 'total']
    assert seen == calls
    return cch


class TrainCNN(chainer.Chain):
    """conv, BN, ReLU, max pooling, dropout, linear, softmax cross entropy
    (and accuracy) on 3x8x8 images, 8 channels, 10 classes; returns
    (loss, accuracy)."""

    def __init__(self):
        super(TrainCNN, self).__init__()
        with self.init_scope():
            self.conv = L.Convolution2D(3, 8, 3, pad=1)
            self.bn = L.BatchNormalization(8)
            self.fc = L.Linear(8 * 4 * 4, 10)

    def forward(self, x, t):
        h = F.max_pooling_2d(F.relu(self.bn(self.conv(x))), 2)
        y = self.fc(F.dropout(h, 0.5))
        return F.softmax_cross_entropy(y, t), F.accuracy(y, t)
