import chainer.functions as F
import numpy as np

from helpers import calls_of
from helpers import cost
from chainer_computational_cost.cost_calculators import function_type


def _add_mul(a, b):
    return a * b + a


def test_forget_costs_nothing_itself():
    a = np.ones((2, 3), np.float32)
    b = np.ones((2, 3), np.float32)
    assert cost(F.forget, _add_mul, a, b, kind='Forget') == (0, 0, 0, {})
    assert cost(F.forget, _add_mul, a, b, kind='Forget', fma=False) == (
        0, 0, 0, {})


def test_forget_inner_calls_reach_the_hook():
    a = np.ones((1, 3), np.float32)
    names = [function_type(node).__name__
             for node, _, _ in calls_of(F.forget, _add_mul, a, a)]
    # the inner Mul and Add are seen (and costed) on their own
    assert names == ['Mul', 'Add', 'Forget']
