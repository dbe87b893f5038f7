"""The clock of ``ComputationalCostHook(measure_time=True, clock=...)``:
what its readings become in the ``time`` of each call.

Every clock here is a fake one whose readings are set: each call reads it
twice, before and after, so a call's time is the second reading of its
pair minus the first.
"""

import functools
import math
import warnings

import chainer.functions as F
import numpy
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.core.records import ReportWarning


def _clock(*readings):
    """A clock giving ``readings`` in order (it fails when read more
    often)."""
    return functools.partial(next, iter(readings))


def _three_calls(clock):
    """A hook timing ReLU, Exp and Tanh of a small array by ``clock``; the
    warnings its block gave."""
    x = numpy.ones(3, numpy.float32)
    with warnings.catch_warnings(record=True) as given:
        warnings.simplefilter('always')
        with ComputationalCostHook(measure_time=True, clock=clock) as cch:
            F.relu(x)
            F.exp(x)
            F.tanh(x)
    return cch, [(w.category, str(w.message)) for w in given]


def _times(cch):
    """Each call's time (None: no time), then the total's."""
    layers = cch.layer_report
    return ([layers[n].get('time') for n in ('ReLU-1', 'Exp-1', 'Tanh-1')],
            cch.total_report.get('time'))


def test_an_int_clock_gives_seconds():
    # readings 0, 2 | 2, 5 | 5, 9: 2, 3 and 4 s
    cch, given = _three_calls(_clock(0, 2, 2, 5, 5, 9))
    times, total = _times(cch)
    assert times == [2.0, 3.0, 4.0]
    assert all(type(t) is float for t in times)
    assert total == 9.0  # 2 + 3 + 4
    assert given == []


def test_numpy_readings_and_a_clock_that_does_not_tick_are_seconds():
    # np.int64 0, 1 | np.float64 1.5, 2.0 | a clock standing still: 0 s
    cch, given = _three_calls(_clock(
        numpy.int64(0), numpy.int64(1), numpy.float64(1.5),
        numpy.float64(2.0), 7, 7))
    assert _times(cch) == ([1.0, 0.5, 0.0], 1.5)  # 1 + 0.5 + 0
    assert given == []


def test_a_clock_going_back_gives_that_call_no_time_and_one_warning():
    # readings 0, 1 | 5, 4 (back by 1 s) | 10, 12
    cch, given = _three_calls(_clock(0.0, 1.0, 5.0, 4.0, 10.0, 12.0))
    assert _times(cch) == ([1.0, None, 2.0], 3.0)  # 1 + 2
    assert given == [(ReportWarning,
                      'clock must be a function giving seconds, a finite '
                      'number that never goes back (such as '
                      'time.perf_counter), but it read 5.0 then 4.0 around '
                      'a call of Exp: the calls it timed so have no time')]


@pytest.mark.parametrize('reading, shown', [
    (math.nan, 'nan'), (math.inf, 'inf'), (-math.inf, '-inf'),
    ('12:00', "'12:00'"), (None, 'None'), (True, 'True'),
    (10 ** 400, None),
], ids=['nan', 'inf', '-inf', 'str', 'None', 'bool', 'beyond-a-float'])
def test_a_reading_that_is_no_finite_number_of_seconds_gives_no_time(
        reading, shown):
    # every call reads 0.0 then the bad reading (10**400: a time no float
    # holds)
    cch, given = _three_calls(_clock(0.0, reading, 0.0, reading, 0.0,
                                     reading))
    assert _times(cch) == ([None, None, None], None)
    assert len(given) == 1
    category, message = given[0]
    assert category is ReportWarning
    assert message.startswith('clock must be a function giving seconds, '
                              'a finite number that never goes back')
    if shown is not None:
        assert 'it read 0.0 then {} around a call of ReLU'.format(
            shown) in message


def test_a_bad_clock_never_interrupts_the_forward_pass():
    # Warnings as errors: every call still runs and is costed, and the
    # error comes when the block exits.
    x = numpy.ones(3, numpy.float32)
    done = []
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        with pytest.raises(ReportWarning, match='clock must be'):
            with ComputationalCostHook(measure_time=True,
                                       clock=lambda: math.nan) as cch:
                done.append(F.relu(x).array)
                done.append(F.exp(x).array)
    assert len(done) == 2
    assert list(cch.layer_report) == ['ReLU-1', 'Exp-1', 'total']
    assert cch.layer_report['total']['flops'] == 6  # 3 + 3 elements


def test_a_clock_that_raises_gives_no_time_and_never_interrupts():
    # readings 0, 1, then the clock runs out (StopIteration, as the fake
    # clocks here do): Exp and Tanh have no time, every call still runs
    cch, given = _three_calls(_clock(0.0, 1.0))
    assert _times(cch) == ([1.0, None, None], 1.0)
    assert list(cch.layer_report) == ['ReLU-1', 'Exp-1', 'Tanh-1', 'total']
    assert given == [(ReportWarning,
                      'clock must be a function giving seconds, a finite '
                      'number that never goes back (such as '
                      'time.perf_counter), but it read StopIteration() '
                      'then StopIteration() around a call of Exp: the calls '
                      'it timed so have no time')]


def test_a_bad_clock_warns_once_per_hook():
    x = numpy.ones(3, numpy.float32)
    cch = ComputationalCostHook(measure_time=True, clock=lambda: math.nan)
    with pytest.warns(ReportWarning, match='clock must be'):
        with cch:
            F.relu(x)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        with cch:
            F.relu(x)
    assert [r.get('time') for r in cch.layer_report.values()] == [None] * 3
