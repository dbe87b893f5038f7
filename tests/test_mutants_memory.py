"""Memory figures that planted bugs got past (see benchmarks/mutate.py):
each worked by hand."""

import chainer
import chainer.functions as F
import numpy

from chainer_computational_cost import ComputationalCostHook


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
