"""Shared helpers for the real-model suite."""

import warnings

import chainer
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
