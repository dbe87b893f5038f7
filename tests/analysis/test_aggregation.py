"""The aggregation functions on hand-made layer dicts, every figure worked
by hand."""

import pytest

from chainer_computational_cost.analysis import aggregation


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
