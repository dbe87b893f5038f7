"""link_report behaviour that planted bugs got past (see
benchmarks/mutate.py): worked by hand.

Equivalent mutant: in ``link_report``, ``sorted(full)`` for ``sorted(full
- set(link_info))``: the paths of ``link_info`` come first either way,
and ``_preorder`` keeps each path once, in the order of its first
appearance."""

from chainer_computational_cost.analysis.aggregation import link_report


def test_a_layer_in_a_link_never_recorded():
    # '/a/b' is in no link_info entry (a report put together by hand):
    # its row and its parent's are made, with no calls nor parameters;
    # '/' sums both layers: flops 10 + 30, mread 4, mwrite 2 + 6
    layers = [
        {'name': 'F-1', 'type': 'F', 'flops': 10, 'mread': 4, 'mwrite': 2,
         'link': '/a/b'},
        {'name': 'G-1', 'type': 'G', 'flops': 30, 'mread': 0, 'mwrite': 6}]
    report = link_report(layers, {'/': (1, 5)})
    assert list(report) == ['/', '/a', '/a/b', 'total']
    assert [(r['n_calls'], r['n_params'], r['n_layers'], r['flops'],
             r['mrw']) for r in list(report.values())[:3]] == [
        (1, 5, 2, 40, 12), (0, 0, 1, 10, 6), (0, 0, 1, 10, 6)]
    assert report['/a']['flops%'] == 25.0  # 10 / 40
