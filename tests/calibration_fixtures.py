"""Calibrations of literal figures, for the tests of the calibration and
of the reports and CostMonitor that predict times with one."""

from chainer_computational_cost.analysis import calibration as cal
from chainer_computational_cost import Calibration

#: Seconds of each phase's overhead, per call.
OVERHEAD = {'inference': 1e-6, 'forward': 2e-6, 'backward': 3e-6,
            'update': 4e-6}


def flat_table(speed=1e9):
    """Every shape at one speed: a product of m*n*k takes m*n*k / speed."""
    dims = [1, 4]
    return cal.GemmTable(dims, [[[speed] * 2] * 2] * 2)


def math_fit(high=1e6):
    """The math family's fit: 10 us a call, 1 ns per byte read, 2 ns per
    byte written, nothing per FLOP or cold byte; fitted on up to ``high``
    bytes read."""
    return {'coef': [1e-5, 1e-9, 2e-9, 0.0, 0.0],
            'low': [1.0, 1.0, 1.0, 0.0, 0.0],
            'high': [1.0, high, high, high, high], 'n': 10}


def literal_calibration(types=('Add',), overhead=OVERHEAD, families=None,
                        bandwidth=1e10):
    """A calibration of literal figures: the flat table, and the math fit
    unless ``families`` says otherwise."""
    return Calibration(flat_table(),
                       {'math': math_fit()} if families is None
                       else families,
                       {t: 'math' for t in types}, overhead,
                       {'inference': 0.1, 'training': 0.2, 'n_probes': 10},
                       {'device': 'test', 'date': '2026-01-01T00:00:00Z'},
                       bandwidth)


def add_layer(name, mread=0, mwrite=0, phase='forward', link='/',
              time=None):
    """A layer dict of one Add call (no FLOPs), as the reports hand it to
    a calibration."""
    layer = {'name': name, 'type': 'Add', 'flops': 0, 'mread': mread,
             'mwrite': mwrite, 'phase': phase, 'link': link,
             'input_shapes': [(2,), (2,)], 'output_shapes': [(2,)],
             'dtype': 'float32'}
    if time is not None:
        layer['time'] = time
    return layer
