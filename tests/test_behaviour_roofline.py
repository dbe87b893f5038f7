"""The roofline as a user relies on it: a device that cannot be changed by
mistake, the forms a device's figures may be given in, and the times and
bounds of literal layers worked by hand (see benchmarks/mutate.py for how
this file is used)."""

import pytest

from chainer_computational_cost.analysis import roofline
from chainer_computational_cost.core import devices
from helpers import layer


def _peaks(flops=100.0):
    return {(u, p): (p + ' ' + u, flops) for u in ('matrix', 'vector')
            for p in ('fp16', 'fp32', 'fp64')}


def test_a_device_cannot_be_changed_in_place():
    # A misspelt field set on a device (or a preset shared by every report)
    # is refused, not kept beside the figures the reports read.
    dev = devices.DEVICES['a100']
    for name, value in (('bandwidth', 1.0), ('bandwith', 1.0),
                        ('peak_flops', 1e12)):
        with pytest.raises(AttributeError):
            setattr(dev, name, value)
    assert dev.bandwidth == 2039e9
    assert not hasattr(dev, 'bandwith')


def test_a_devices_figures_may_be_lists_and_integers():
    peaks = _peaks()
    peaks[('matrix', 'fp16')] = ['fp16 matrix', 400]
    dev = devices.Device('mine', None, 10, peaks)
    # kept as (label, float) pairs; the bandwidth a float
    assert dev.peaks[('matrix', 'fp16')] == ('fp16 matrix', 400.0)
    assert type(dev.peaks[('matrix', 'fp16')][1]) is float
    assert (dev.bandwidth, type(dev.bandwidth)) == (10.0, float)
    # a float16 matmul on it: 800 FLOPs / 400 FLOP/s = 2 s against
    # (10 + 30) B / 10 B/s = 4 s: memory bound at 4 s
    row = roofline.roofline_report(
        [layer('MatMul-1', 'MatMul', 800, 10, 30, dtype='float16')],
        device=dev)['MatMul-1']
    assert (row['peak_used'], row['t_compute'], row['t_memory'],
            row['t_roofline'], row['bound']) == (
        'fp16 matrix', 2.0, 4.0, 4.0, 'memory')


def test_a_clock_that_never_ticked_gives_no_total_efficiency():
    # every layer timed at 0 s: the total's time is 0, its efficiency
    # None rather than a division by zero
    layers = [layer('ReLU-1', 'ReLU', 100, 60, 40, time=0.0),
              layer('ReLU-2', 'ReLU', 100, 60, 40, time=0.0)]
    total = roofline.roofline_report(layers, peak_flops=100,
                                     bandwidth=10)['total']
    # t_roofline max(100 / 100, 100 / 10) = 10 s each: 20
    assert (total['t_roofline'], total['time'], total['efficiency']) == (
        20.0, 0.0, None)


def test_one_peak_shared_by_two_dtypes_names_the_total():
    # On the GTX 1080 Ti float16 runs at the fp32 rate but is labelled
    # 'fp16 vector': two labels, so the total names no peak
    layers = [layer('ReLU-1', 'ReLU', 106, 1, 1, dtype='float16'),
              layer('ReLU-2', 'ReLU', 106, 1, 1, dtype='float32')]
    total = roofline.roofline_report(layers, device='gtx1080ti')['total']
    assert (total['peak_used'], total['peak_flops']) == (None, None)
    # two layers on the one fp32 peak: the total names it; 2 * 106 FLOPs
    # over 10.6e12 FLOP/s = 2e-11 s
    layers[0]['dtype'] = 'float32'
    total = roofline.roofline_report(layers, device='gtx1080ti')['total']
    assert (total['peak_used'], total['peak_flops']) == (
        'fp32 vector', 10.6e12)
    assert total['t_compute'] == pytest.approx(2e-11, rel=1e-12)
