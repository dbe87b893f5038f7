"""Test helpers: run a Chainer function and cost it with a built-in
calculator, without going through ComputationalCostHook.

The calculators are then tested in isolation from the hook; the hook has its
own tests.
"""

import sys

import chainer
import chainer.functions as F
import numpy

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.cost_calculators import calculators
from chainer_computational_cost.cost_calculators import function_object
from chainer_computational_cost.cost_calculators import function_type
from chainer_computational_cost.cost_calculators import validate_cost
from mpi.mn_models import MLP

#: Chainer's ReLU, a type the tests plant a scratch function for.
RELU = chainer.functions.activation.relu.ReLU


class _Recorder(chainer.FunctionHook):
    name = 'TestRecorder'

    def __init__(self):
        self.calls = []

    def forward_postprocess(self, function, in_data):
        # FunctionNode.apply holds the outputs in its local ``outputs``
        outputs = sys._getframe(1).f_locals.get('outputs')
        out_shapes = None
        if isinstance(outputs, tuple):
            out_shapes = tuple(getattr(y, 'shape', None) for y in outputs)
        self.calls.append((function, tuple(in_data), out_shapes))


def calls_of(fn, *args, **kwargs):
    """Run ``fn(*args, **kwargs)``; return the list of (node, in_data,
    out_shapes) of every function call it made, in call order (backward
    calls included when ``fn`` runs a backward pass)."""
    with _Recorder() as rec:
        fn(*args, **kwargs)
    return rec.calls


def cost(fn, *args, fma=True, kind=None, **kwargs):
    """Run ``fn(*args, **kwargs)`` and return the validated Cost of its
    first function call (or of the first call whose class name is ``kind``)
    as computed by the registered built-in calculator, given the output
    shapes as the hook gives them."""
    calls = calls_of(fn, *args, **kwargs)
    for node, in_data, out_shapes in calls:
        cls = function_type(node)
        if kind is None or cls.__name__ == kind:
            calc = calculators[cls]
            result = calc(function_object(node), in_data, fma_1flop=fma,
                          out_shapes=out_shapes)
            return validate_cost(result, calc.__name__, cls.__name__)
    raise AssertionError('no call of {} among {}'.format(
        kind, [function_type(c[0]).__name__ for c in calls]))


def layer(name, type_, flops, mread, mwrite, **extra):
    """A literal layer dict, as reports build them, for renderer and
    roofline tests."""
    d = {'name': name, 'type': type_, 'flops': flops, 'mread': mread,
         'mwrite': mwrite}
    d.update(extra)
    return d


def typed(value):
    """``value`` with the type of every part made part of what ``==``
    compares: ``1`` and ``True``, ``1`` and ``np.int64(1)``, ``(3,)`` and
    ``[3]`` then differ; an array compares by identity."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value), tuple(typed(v) for v in value)
    if isinstance(value, numpy.ndarray):
        return numpy.ndarray, id(value)
    return type(value), value


def assert_params(params, expected):
    """0.1.2 compatibility: exactly these keys, values and value types."""
    assert typed(params) == typed(expected)


def flops_by_layer(step, **hook_options):
    """FLOPs of each layer of ``step()`` (a forward pass or training step)
    under a strict ComputationalCostHook made with ``hook_options``."""
    with ComputationalCostHook(strict=True, **hook_options) as cch:
        step()
    return {name: record['flops'] for name, record in cch.layer_report.items()
            if name != 'total'}


def mlp_step():
    """The hook of one training step of the 3-4-2 MLP of tests/mpi (26
    parameters, 104 bytes of float32 gradients) on a batch of 2."""
    model = MLP()
    x = numpy.zeros((2, 3), numpy.float32)
    with ComputationalCostHook() as cch:
        F.sum(model(x)).backward()
    return cch


def bucketed_step():
    """The layer dicts and roofline rows of a training step for the
    scaling report's hand counts: forward 3 ms; backward: link /b 4 ms
    then link /a 2 ms; update 1 ms (10 ms in all).  Link /a holds 6e6
    gradient bytes, /b 4e6: 1e7 in all."""
    layers = [
        {'name': 'F', 'type': 'LinearFunction', 'phase': 'forward',
         'link': '/a'},
        {'name': 'B1', 'type': 'LinearGradWeight', 'phase': 'backward',
         'link': '/b'},
        {'name': 'B2', 'type': 'LinearGradWeight', 'phase': 'backward',
         'link': '/a'},
        {'name': 'U', 'type': 'SGDRule', 'phase': 'update', 'link': '/a'},
    ]
    rows = {'F': {'t_roofline': 3e-3}, 'B1': {'t_roofline': 4e-3},
            'B2': {'t_roofline': 2e-3}, 'U': {'t_roofline': 1e-3}}
    return layers, rows


class OldDouble(chainer.Function):
    """y = 2 x, an old-style Function: its backward runs no Chainer call
    (its gradient is made outside any call)."""

    def forward(self, inputs):
        return inputs[0] * 2,

    def backward(self, inputs, grad_outputs):
        return grad_outputs[0] * 2,
