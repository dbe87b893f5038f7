"""The clock a hook times calls with (``ComputationalCostHook(clock=)``),
and the one ``measure.using_clock`` hands to the hooks of a calibration's
probes, inside its block only."""

import time

import chainer.functions as F
import numpy
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.run import measure


def _ticks(step):
    """A clock advancing by ``step`` seconds at each reading."""
    now = [0.0]

    def clock():
        now[0] += step
        return now[0]
    return clock


def test_a_hook_times_each_call_with_its_clock():
    x = numpy.ones((2, 3), numpy.float32)
    with ComputationalCostHook(measure_time=True, clock=_ticks(0.5)) as cch:
        F.relu(x)
        F.exp(x)
    # each call reads the clock twice, before and after: 0.5 s apart
    assert cch.layer_report['ReLU-1']['time'] == 0.5
    assert cch.layer_report['Exp-1']['time'] == 0.5


def test_a_clock_that_is_not_a_function_is_refused():
    with pytest.raises(TypeError, match='clock must be a function giving '
                       "seconds .*, got 'cpu'"):
        ComputationalCostHook(measure_time=True, clock='cpu')


def test_a_probe_is_timed_with_the_clock_of_its_block(monkeypatch):
    monkeypatch.setitem(measure.CLOCKS, 'fake', _ticks(0.25))
    x = numpy.ones((2, 3), numpy.float32)

    class Model(object):
        def __call__(self, x):
            return F.relu(x)

    with measure.using_clock('fake'):
        found = measure._measure_probe(Model(), (x,), None, False, numpy)
    layers, _ = found
    # the hooked runs' calls read the fake clock: 0.25 s each
    assert [layer['time'] for layer in layers] == [0.25]
    assert measure._now[0] is time.perf_counter
    with pytest.raises(ValueError, match="clock must be one of 'wall', "
                       "'cpu', 'fake', got 'sundial'"):
        with measure.using_clock('sundial'):
            pass
