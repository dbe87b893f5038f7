"""Memory figures that planted bugs got past (see benchmarks/mutate.py):
each worked by hand."""

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
