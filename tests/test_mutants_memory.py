"""Memory figures that planted bugs got past (see benchmarks/mutate.py):
each worked by hand.

Equivalent mutants: in ``Tracker.take``, deleting ``self.seen[key] =
ref``: a reading's fold writes the index whenever take did not (what an
interrupt between the two needs), and counts a buffer added twice once;
in ``project``, ``_names(runs[1])`` for ``runs[0]``: every run makes the
same calls (project_batch refuses runs that do not), so their names are
the same."""

import copy

import chainer
import chainer.functions as F
import chainer.links as L
import numpy
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import project_batch
from chainer_computational_cost.core.records import R_LIVE, R_TYPE
import memory_oracle


def test_memory_report_of_an_empty_block():
    # nothing called: no peak, nothing alive, nothing split
    with ComputationalCostHook(memory=True) as cch:
        pass
    assert dict(cch.memory_report) == {
        'peak': 0, 'peak_layer': None, 'peak_phase': None,
        'activations': 0, 'gradients': 0, 'scratch': 0,
        'peak_between_calls': 0, 'peak_between_calls_layer': None,
        'peak_between_calls_activations': 0,
        'peak_between_calls_gradients': 0, 'at_exit': 0,
        'at_exit_activations': 0, 'at_exit_gradients': 0, 'params': 0,
        'n_calls': 0}


class _FromBytes(chainer.FunctionNode):
    """Returns 4 float32 viewing a new ``bytes`` object (not an array: no
    ``nbytes``, no ``base``, no weak reference)."""

    def forward(self, inputs):
        return numpy.frombuffer(bytes(16), numpy.float32),


def _from_bytes_costs(func, in_data, **kwargs):
    return 0, 0, 4, {}


def test_a_view_of_a_bytes_object_counts():
    # the output of _FromBytes is the call's: 4 * 4 = 16 bytes, alive
    # while the array is, whatever owns its buffer; ReLU adds 16 more;
    # once y is dropped, Exp finds 16 (z) + 16 (its output)
    x = numpy.ones(4, numpy.float32)
    with ComputationalCostHook(memory=True) as cch:
        cch.add_custom_cost_calculator(_FromBytes, _from_bytes_costs)
        y = _FromBytes().apply((x,))[0]
        z = F.relu(y)
        del y
        F.exp(z)
    layers = cch.layer_report
    assert [layers[k]['live'] for k in ('_FromBytes-1', 'ReLU-1',
                                        'Exp-1')] == [16, 32, 32]


def test_a_copy_of_a_hook_keeps_its_memory_figures():
    lin = L.Linear(3, 4, nobias=True)  # W: 4*3*4 = 48 bytes
    x = numpy.ones((2, 3), numpy.float32)
    with ComputationalCostHook(memory=True) as h:
        y = lin(x)  # 2*4*4 = 32 bytes, alive at exit
    twin = copy.deepcopy(h).memory_report
    assert (twin['at_exit'], twin['params'], twin['peak']) == (32, 48, 32)
    del y


@pytest.mark.chainer7_only  # chainer.backward
def test_a_given_gradient_summed_before_its_node_runs_is_the_users():
    # y = relu(x), z = exp(y); backward from z and y, both gradients given
    # (the user's, 2*3*4 = 24 bytes each): Exp's backward makes y's second
    # gradient (Mul: gz * z) and the two are summed (Add) before ReLU's
    # node, whose output gradient the given one is, runs.  After ReLU: y,
    # 24; Exp: + z, 48; Mul: + 24, 72; Add: + the sum, 96; ReLUGrad2: + x's
    # gradient, Mul's freed: 96.  A second backward pass in the block, its
    # gradients given anew: tracemalloc agrees after each call of both.
    x = chainer.Variable(numpy.ones((2, 3), numpy.float32))
    with memory_oracle.Tracing():
        sampler = memory_oracle.Sampler()
        with ComputationalCostHook(memory=True) as h:
            with sampler:
                for _ in range(2):
                    gz, gy = (chainer.Variable(numpy.ones((2, 3),
                                                          numpy.float32))
                              for _ in range(2))
                    y = F.relu(x)
                    z = F.exp(y)
                    chainer.backward([z, y], [gz, gy])
    lives = [(r[R_TYPE], r[R_LIVE]) for r in h.records()]
    assert lives[:5] == [('ReLU', 24), ('Exp', 48), ('Mul', 72),
                         ('Add', 96), ('ReLUGrad2', 96)]
    assert [live for _, live in lives] == sampler.samples
    del y, z


def test_a_projection_keeps_what_is_alive_at_exit_at_its_batch():
    # the run leaves its ReLU output alive (16n bytes) when it returns
    kept = {}

    def run(n):
        kept['y'] = F.relu(numpy.ones((n, 4), numpy.float32))
    m = project_batch(run, 10).memory_report
    assert (m['at_exit'], m['at_exit_activations']) == (160, 160)
