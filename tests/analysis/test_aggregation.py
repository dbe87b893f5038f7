"""The aggregation functions (the reports' groupings, link_report's
paths) on literal layer dicts, every figure worked by hand.

Equivalent mutant: in ``link_report``, ``sorted(full)`` for ``sorted(full
- set(link_info))``: the paths of ``link_info`` come first either way,
and ``_preorder`` keeps each path once, in the order of its first
appearance.
"""

import pytest

from chainer_computational_cost.analysis import aggregation
from chainer_computational_cost.analysis.aggregation import link_report


def _layers():
    # totals: flops 10 + 30 + 0 = 40, mread 20 + 0 + 20 = 40, mwrite
    # 30 + 10 + 10 = 50, mrw 90
    return [
        dict(name='X-1', type='X', flops=10, mread=20, mwrite=30,
             phase='forward', link='/a'),
        dict(name='Y-1', type='Y', flops=30, mread=0, mwrite=10,
             phase='backward', link='/a/b', time=0.5, comm_bytes=8),
        dict(name='X-2', type='X', flops=0, mread=20, mwrite=10,
             phase='forward', link=None),
    ]


def _pct(row):
    return [row[m + '%'] for m in ('flops', 'mread', 'mwrite', 'mrw')]


def test_total_report():
    total = aggregation.total_report(_layers(), n_params=7)
    assert dict(total) == {
        'name': 'total', 'type': 'total', 'n_layers': 3, 'flops': 40,
        'mread': 40, 'mwrite': 50, 'mrw': 90, 'time': 0.5,
        'comm_bytes': 8, 'n_params': 7}
    assert 'n_params' not in aggregation.total_report(_layers())


def test_layer_report_percentages():
    report = aggregation.layer_report(_layers(), 7)
    assert list(report) == ['X-1', 'Y-1', 'X-2', 'total']
    # 10/40, 20/40, 30/50, 50/90; Y-1: 30/40, 0, 10/50, 10/90
    assert _pct(report['X-1']) == pytest.approx(
        [25.0, 50.0, 60.0, 500 / 9], rel=1e-12)
    assert _pct(report['Y-1']) == pytest.approx(
        [75.0, 0.0, 20.0, 100 / 9], rel=1e-12)
    assert report['X-1']['mrw'] == 50
    assert report['Y-1']['time'] == 0.5 and 'time' not in report['X-1']
    assert report['Y-1']['comm_bytes'] == 8
    assert report['X-2']['link'] is None
    assert _pct(report['total']) == [100.0] * 4
    assert report['total']['n_params'] == 7
    # nothing to divide by: 0 %
    zero = aggregation.layer_report([dict(name='Z-1', type='Z', flops=0,
                                          mread=0, mwrite=0)])
    assert _pct(zero['Z-1']) == [0.0] * 4


def test_summary_report():
    summary = aggregation.summary_report(_layers())
    assert list(summary) == ['X', 'Y', 'total']
    x = summary['X']
    assert (x['n_layers'], x['flops'], x['mread'], x['mwrite'],
            x['mrw']) == (2, 10, 40, 40, 80)
    # 10/40, 40/40, 40/50, 80/90
    assert _pct(x) == pytest.approx([25.0, 100.0, 80.0, 800 / 9],
                                    rel=1e-12)
    assert summary['Y']['time'] == 0.5 and 'time' not in x
    by_phase = aggregation.summary_report(_layers(), by_phase=True)
    assert list(by_phase) == ['forward/X', 'backward/Y', 'total']
    assert by_phase['forward/X']['phase'] == 'forward'
    assert by_phase['backward/Y']['flops'] == 30
    # a function type named 'total' cannot hide the total row
    named = aggregation.summary_report(
        [dict(name='total-1', type='total', flops=1, mread=0, mwrite=0)])
    assert list(named) == ['total (type)', 'total']


def test_phase_report():
    phases = aggregation.phase_report(_layers())
    assert list(phases) == ['forward', 'backward', 'total']
    f, b = phases['forward'], phases['backward']
    assert (f['n_layers'], f['flops'], f['mread'], f['mwrite'], f['mrw']) \
        == (2, 10, 40, 40, 80)
    assert (b['n_layers'], b['flops'], b['mread'], b['mwrite'], b['mrw']) \
        == (1, 30, 0, 10, 10)
    assert _pct(b) == pytest.approx([75.0, 0.0, 20.0, 100 / 9], rel=1e-12)
    # no phase: forward
    only = aggregation.phase_report([dict(name='Z-1', type='Z', flops=2,
                                          mread=0, mwrite=0)])
    assert only['forward']['flops'] == 2 and only['backward']['flops'] == 0


def test_link_report():
    info = {'/': (1, 100), '/z': (4, 0), '/a': (2, 60), '/a/b': (3, 6)}
    layers = _layers() + [dict(name='W-1', type='W', flops=5, mread=1,
                               mwrite=1, link='/q/r')]
    report = aggregation.link_report(layers, info)
    # parents first, children in the order of link_info, then the paths
    # seen only in layers (sorted)
    assert list(report) == ['/', '/z', '/a', '/a/b', '/q', '/q/r',
                            'total']
    root, a, b = report['/'], report['/a'], report['/a/b']
    assert (root['n_params'], root['n_calls'], root['n_layers'],
            root['flops'], root['mrw']) == (100, 1, 4, 45, 92)
    # /a: X-1 and Y-1 (in /a/b): flops 40, mread 20, mwrite 40
    assert (a['n_params'], a['n_calls'], a['n_layers'], a['flops'],
            a['mread'], a['mwrite'], a['mrw']) == (60, 2, 2, 40, 20, 40, 60)
    assert (b['n_calls'], b['flops'], b['mrw']) == (3, 30, 10)
    assert (report['/q']['n_calls'], report['/q']['flops']) == (0, 5)
    # 40/45 of the FLOPs, 60/92 of the bytes
    assert a['flops%'] == pytest.approx(800 / 9, rel=1e-12)
    assert a['mrw%'] == pytest.approx(6000 / 92, rel=1e-12)
    assert report['total']['n_params'] == 100
    shallow = aggregation.link_report(layers, info, depth=1)
    assert list(shallow) == ['/', '/z', '/a', '/q', 'total']
    assert shallow['/a']['flops'] == 40  # /a/b's costs stay in /a
    assert list(aggregation.link_report(layers, info, depth=0)) == [
        '/', 'total']
    # a third item (the parameters' bytes) is not read here
    wide = aggregation.link_report(layers, {p: v + (400,)
                                            for p, v in info.items()})
    assert wide['/a']['n_params'] == 60


def _step():
    # a training step as recorded: forward, backward, then the update;
    # flops 6 + 2 + 12 + 3 + 4 = 27, mread 1 + 2 + 3 + 4 + 5 = 15,
    # mwrite 2 + 2 + 2 + 2 + 2 = 10
    def layer(name, phase, flops, mread, **extra):
        return dict(name=name, type=name.split('-')[0], flops=flops,
                    mread=mread, mwrite=2, phase=phase, **extra)
    return [layer('Linear-1', 'forward', 6, 1, time=0.25),
            layer('ReLU-1', 'forward', 2, 2, time=0.5),
            layer('ReLU-2', 'backward', 12, 3, time=1.0),
            layer('Linear-2', 'backward', 3, 4),
            layer('SGD-1', 'update', 4, 5, time=2.0)]


def test_a_training_step_by_phase():
    phases = aggregation.phase_report(_step())
    assert list(phases) == ['forward', 'backward', 'update', 'total']
    got = [(r['n_layers'], r['flops'], r['mread'], r['mwrite'], r['mrw'])
           for r in phases.values()]
    assert got == [(2, 8, 3, 4, 7), (2, 15, 7, 4, 11), (1, 4, 5, 2, 7),
                   (5, 27, 15, 10, 25)]
    # times add up where there are any: 0.25 + 0.5, 1.0, 2.0; 3.75 in all
    times = [r.get('time') for r in phases.values()]
    assert times == [0.75, 1.0, 2.0, 3.75]
    # 8 / 27 of the FLOPs, 7 / 25 of the bytes moved
    assert phases['forward']['flops%'] == 800 / 27
    assert phases['forward']['mrw%'] == 28.0
    assert phases['update']['mread%'] == 500 / 15


def test_a_forward_pass_has_no_update_row():
    layers = [x for x in _step() if x['phase'] != 'update']
    assert list(aggregation.phase_report(layers)) == [
        'forward', 'backward', 'total']
    # a pass with no backward call still has its (empty) backward row
    forward = aggregation.phase_report(layers[:2])
    assert (forward['backward']['n_layers'],
            forward['backward']['flops']) == (0, 0)


def test_summary_by_phase_in_phase_order():
    # the records arrive backward first: the groups still read forward,
    # backward, update, each type in order of first call in its phase
    layers = list(reversed(_step()))
    by_phase = aggregation.summary_report(layers, by_phase=True)
    assert list(by_phase) == ['forward/ReLU', 'forward/Linear',
                              'backward/Linear', 'backward/ReLU',
                              'update/SGD', 'total']
    relu = by_phase['backward/ReLU']
    assert (relu['type'], relu['name'], relu['phase'], relu['n_layers'],
            relu['flops'], relu['time']) == (
        'ReLU', 'ReLU', 'backward', 1, 12, 1.0)
    assert 'time' not in by_phase['backward/Linear']
    # without phases: one row a type, its calls in every phase summed:
    # ReLU 2 + 12 FLOPs, times 1.0 + 0.5
    summary = aggregation.summary_report(layers)
    assert list(summary) == ['SGD', 'Linear', 'ReLU', 'total']
    assert (summary['ReLU']['n_layers'], summary['ReLU']['flops'],
            summary['ReLU']['time']) == (2, 14, 1.5)
    assert 'phase' not in summary['ReLU']


def test_a_layer_row_keeps_what_its_record_has():
    # the optional keys a record carries are the row's, after 0.1.2's
    layer = dict(name='ReLU-1', type='ReLU', flops=4, mread=16, mwrite=16,
                 traceback=['model.py:3'], input_shapes=[(4,)],
                 output_shapes=[(4,)], params={}, phase='backward',
                 link='/l1', time=0.5, comm_bytes=0, rank=2, live=48)
    row = aggregation.layer_report([layer])['ReLU-1']
    assert list(row) == [
        'name', 'type', 'flops', 'mread', 'mwrite', 'mrw', 'traceback',
        'input_shapes', 'output_shapes', 'params', 'flops%', 'mread%',
        'mwrite%', 'mrw%', 'phase', 'link', 'time', 'comm_bytes', 'rank',
        'live']
    assert (row['mrw'], row['rank'], row['live'], row['link']) == (
        32, 2, 48, '/l1')
    assert (row['flops%'], row['mrw%']) == (100.0, 100.0)
    # a record without them: the row has none of them either
    bare = aggregation.layer_report([dict(name='ReLU-1', type='ReLU',
                                          flops=4, mread=16, mwrite=16)])
    assert 'phase' not in bare['ReLU-1'] and 'live' not in bare['ReLU-1']
    assert bare['ReLU-1']['traceback'] is None


@pytest.mark.slow
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


def test_a_type_keyed_like_a_renamed_total_type_keeps_its_row():
    # types 'total (type)' (flops 3) and 'total' (flops 5): 'total' is
    # renamed, and 'total (type)' is taken, so it gets one more suffix;
    # either order, both rows stay and add up to the total (3 + 5 = 8)
    first = dict(name='A-1', type='total (type)', flops=3, mread=0,
                 mwrite=0)
    second = dict(name='B-1', type='total', flops=5, mread=0, mwrite=0)
    summary = aggregation.summary_report([first, second])
    assert [(k, r['type'], r['flops']) for k, r in summary.items()] == [
        ('total (type)', 'total (type)', 3),
        ('total (type) (type)', 'total', 5),
        ('total', 'total', 8)]
    summary = aggregation.summary_report([second, first])
    assert [(k, r['type'], r['flops']) for k, r in summary.items()] == [
        ('total (type)', 'total', 5),
        ('total (type) (type)', 'total (type)', 3),
        ('total', 'total', 8)]
    # by phase, a key starts with its phase (which has no '/'), so these
    # types keep their own keys
    by_phase = aggregation.summary_report([first, second], by_phase=True)
    assert [(k, r['flops']) for k, r in by_phase.items()] == [
        ('forward/total (type)', 3), ('forward/total', 5), ('total', 8)]


def test_percentages_of_figures_past_a_float_are_exact():
    # exact ints no float holds (a projection to a huge batch): flops
    # 10**400 and 3 * 10**400 are 25 % and 75 % of 4 * 10**400
    layers = [
        dict(name='X-1', type='X', flops=10 ** 400, mread=1, mwrite=0,
             phase='forward', link='/a'),
        dict(name='Y-1', type='Y', flops=3 * 10 ** 400, mread=3, mwrite=0,
             phase='backward', link='/a')]
    rows = aggregation.layer_report(layers)
    assert [(r['flops'], r['flops%'], r['mread%'], r['mrw%'])
            for r in rows.values()] == [
        (10 ** 400, 25.0, 25.0, 25.0), (3 * 10 ** 400, 75.0, 75.0, 75.0),
        (4 * 10 ** 400, 100.0, 100.0, 100.0)]
    assert [r['flops%'] for r in aggregation.summary_report(
        layers).values()] == [25.0, 75.0, 100.0]
    assert [r['flops%'] for r in aggregation.phase_report(
        layers).values()] == [25.0, 75.0, 100.0]
    assert [r['flops%'] for r in link_report(
        layers, {'/': (1, 0), '/a': (1, 0)}).values()] == [
        100.0, 100.0, 100.0]
    # 10**308 is a float, but 100 times it is not: 100.0, never inf
    big = [dict(name='X-1', type='X', flops=10 ** 308, mread=0, mwrite=0)]
    assert aggregation.summary_report(big)['X']['flops%'] == 100.0
    assert aggregation.layer_report(big)['X-1']['flops%'] == 100.0
