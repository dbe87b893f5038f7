"""Test helpers: run a Chainer function and cost it with a built-in
calculator, without going through ComputationalCostHook.

The calculators are then tested in isolation from the hook; the hook has its
own tests.
"""

import chainer

from chainer_computational_cost.cost_calculators import calculators
from chainer_computational_cost.cost_calculators import function_object
from chainer_computational_cost.cost_calculators import function_type
from chainer_computational_cost.cost_calculators import validate_cost


class _Recorder(chainer.FunctionHook):
    name = 'TestRecorder'

    def __init__(self):
        self.calls = []

    def forward_postprocess(self, function, in_data):
        self.calls.append((function, tuple(in_data)))


def calls_of(fn, *args, **kwargs):
    """Run ``fn(*args, **kwargs)``; return the list of (node, in_data) of
    every function call it made, in call order."""
    with _Recorder() as rec:
        fn(*args, **kwargs)
    return rec.calls


def cost(fn, *args, fma=True, kind=None, **kwargs):
    """Run ``fn(*args, **kwargs)`` and return the validated Cost of its
    first function call (or of the first call whose class name is ``kind``)
    as computed by the registered built-in calculator."""
    calls = calls_of(fn, *args, **kwargs)
    for node, in_data in calls:
        cls = function_type(node)
        if kind is None or cls.__name__ == kind:
            calc = calculators[cls]
            result = calc(function_object(node), in_data, fma_1flop=fma)
            return validate_cost(result, calc.__name__, cls.__name__)
    raise AssertionError('no call of {} among {}'.format(
        kind, [function_type(n).__name__ for n, _ in calls]))
