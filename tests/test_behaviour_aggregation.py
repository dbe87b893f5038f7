"""The reports' groupings as a user reads them, on literal layer dicts
worked by hand (see benchmarks/mutate.py for how this file is used)."""

from chainer_computational_cost.analysis import aggregation


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
