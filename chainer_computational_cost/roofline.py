"""From cost to time: the least time each layer needs on a device.

A layer that does ``flops`` operations and moves ``mrw`` bytes cannot run
faster on a device than ``flops / peak`` (its arithmetic at the device's
peak FLOP/s) nor than ``mrw / bandwidth`` (its traffic at the device's
memory bandwidth).  The larger of the two is the roofline bound
``t_roofline``; their sum, ``t_serial``, is the bound when arithmetic and
traffic do not overlap (the blog estimate of the original tool).

Which peak a layer gets depends on

* its class of operation: matrix-unit ops (convolutions, deconvolutions,
  linear layers, matmuls, tensordot, einsum, the cuDNN RNNs and their
  gradient functions: :data:`MATRIX_TYPES`) may run on tensor cores;
  every other function runs on the vector units;
* its precision, read from the layer's ``dtype`` (the first input's):
  ``float16``, ``float32`` or ``float64``; a layer whose first input is
  not a float (integer ids or labels) or whose dtype is unknown is costed
  as ``float32``.

Each device preset maps every (class, precision) pair to a named peak;
rows report it as ``peak_used`` (``'fp32 vector'``, ``'tf32 matrix'``, ...)
and ``peak_flops``.  Where a precision can run on more than one unit, the
preset takes the fastest, because a roofline is a lower bound.

Datasheet peaks count a fused multiply-add as two FLOPs.  The hook counts
it as one by default (``fma_1flop=True``), which halves ``t_compute`` of
convolutions and linear layers compared with the datasheet's convention;
run the hook with ``fma_1flop=False`` for a bound in the datasheet's terms.
"""

import collections
import collections.abc

from chainer_computational_cost import checks

#: Function types that run on matrix units (tensor cores) when a device
#: has them: the forward functions and the gradient functions their
#: backward applies.  Names, because layer dicts carry class names.
MATRIX_TYPES = frozenset([
    'Convolution2DFunction', 'Convolution2DGradW', 'ConvolutionND',
    'ConvolutionNDGradW', 'Deconvolution2DFunction', 'DeconvolutionND',
    'LocalConvolution2DFunction', 'LinearFunction', 'LinearGradData',
    'LinearGradWeight', 'BilinearFunction', 'BilinearFunctionGrad',
    'MatMul', 'BatchMatMul', 'TensorDot', 'EinSum',
    # cuDNN's RNNs spend nearly all their FLOPs in GEMMs.
    'NStepLSTM', 'NStepBiLSTM', 'NStepGRU', 'NStepBiGRU', 'NStepRNNTanh',
    'NStepRNNReLU', 'NStepBiRNNTanh', 'NStepBiRNNReLU',
])

#: numpy dtype name -> precision of the peak; anything else is 'fp32'.
PRECISIONS = collections.OrderedDict(
    [('float16', 'fp16'), ('float32', 'fp32'), ('float64', 'fp64')])

#: The label of the peak when ``peak_flops`` is given instead of a device.
GIVEN = 'given'


# extensions.py checks its peak_flops with it
_positive = checks.positive


#: The units and precisions a Device's ``peaks`` covers.
UNITS = ('matrix', 'vector')


class Device(checks.CheckedFields, collections.namedtuple(
        'Device', ['name', 'title', 'bandwidth', 'peaks'])):
    """A device profile, validated when it is built (a ValueError names
    the field and what it allows).

    Attributes:
        name (str): the preset's key (or None).
        title (str): the product name (plot titles; or None).
        bandwidth (float): memory bandwidth, bytes per second (> 0).
        peaks (dict): ``(unit, precision)`` -> ``(label, FLOP/s)`` for
            every unit ``'matrix'`` and ``'vector'`` and precision
            ``'fp16'``, ``'fp32'`` and ``'fp64'`` (FLOP/s > 0); a copy of
            the mapping given.
    """

    __slots__ = ()

    def peak(self, layer_type, dtype):
        """``(label, FLOP/s)`` of the peak a layer of ``layer_type`` (a
        class name) on ``dtype`` (a numpy dtype name or None) gets."""
        unit = 'matrix' if layer_type in MATRIX_TYPES else 'vector'
        return self.peaks[(unit, PRECISIONS.get(dtype, 'fp32'))]


def _text_or_none(field):
    def check(value):
        return checks.instance('Device ' + field, value, (str, type(None)),
                               'a str or None')
    return check


def _check_peaks(peaks):
    """A copy of ``peaks`` with FLOP/s as floats, or ValueError."""
    keys = [(u, p) for u in UNITS for p in PRECISIONS.values()]
    allowed = ('Device peaks must map each of {} to a (label, FLOP/s) '
               'pair'.format(', '.join(str(k) for k in keys)))
    if not isinstance(peaks, collections.abc.Mapping):
        raise ValueError('{}, got {!r}'.format(allowed, peaks))
    missing = [k for k in keys if k not in peaks]
    unknown = [k for k in peaks if k not in keys]
    if missing or unknown:
        raise ValueError('{}; {}'.format(allowed, ', '.join(
            '{} {}'.format(what, ', '.join(str(k) for k in ks))
            for what, ks in (('missing', missing), ('unknown', unknown))
            if ks)))
    out = {}
    for key in keys:
        value = peaks[key]
        if not (isinstance(value, (tuple, list)) and len(value) == 2
                and isinstance(value[0], str)):
            raise ValueError('{}; {} is {!r}'.format(allowed, key, value))
        out[key] = (value[0], checks.positive(
            'the FLOP/s of Device peaks[{}]'.format(key), value[1]))
    return out


# Device field -> its checker (the value to keep, or ValueError): a new
# field adds one.
Device._field_checks = {
    'name': _text_or_none('name'),
    'title': _text_or_none('title'),
    'bandwidth': lambda v: checks.positive('Device bandwidth (bytes/s)', v),
    'peaks': _check_peaks,
}


def _profile(name, title, bandwidth, vector, matrix=None):
    """A Device whose matrix ops use ``matrix[precision]`` (a (label,
    FLOP/s) pair) where given and the vector peak otherwise."""
    peaks = {}
    for prec, value in vector.items():
        peaks[('vector', prec)] = (prec + ' vector', value)
        peaks[('matrix', prec)] = (matrix or {}).get(
            prec, (prec + ' vector', value))
    return Device(name, title, float(bandwidth), peaks)


#: Device presets, with datasheet figures (dense, no structured sparsity).
DEVICES = collections.OrderedDict()

# NVIDIA GeForce GTX 1080 Ti (Pascal GP102, no tensor cores).  10.6e12 is
# the blog's figure: 3584 CUDA cores x 2 FLOPs (FMA) x 1480 MHz base clock,
# both figures from "NVIDIA GTX 1080 Ti review" (vortez.net, Technical
# Specifications: 3584 cores, 1480 MHz base, 484 GB/s).  Each GP102 SM has
# 128 FP32 cores and 4 FP64 cores (en.gamegpu.com, "GeForce GTX 1080 Ti"),
# so fp64 runs at 1/32 of fp32.  Native fp16 arithmetic is 1/64 rate on
# GP102, but CuPy's float16 kernels and cuDNN's pseudo-half convolutions
# compute in fp32 there: float16 data gets the fp32 peak.
DEVICES['gtx1080ti'] = _profile(
    'gtx1080ti', 'NVIDIA GeForce GTX 1080 Ti', 484e9,
    {'fp16': 10.6e12, 'fp32': 10.6e12, 'fp64': 10.6e12 / 32})

# NVIDIA A100 SXM4 80GB.  Dense peaks of the A100 datasheet (NVIDIA, "A100
# Tensor Core GPU" datasheet, as tabulated by glennklockwood.com/garden/
# processors/A100 and TechPowerUp, "NVIDIA GA100 Scalar Processor Specs
# Sheet Released"): FP64 9.7, FP64 tensor 19.5, FP32 19.5, TF32 tensor 156,
# FP16 tensor 312 TFLOP/s; 2039 GB/s HBM2e.  Non-tensor FP16: 78 TFLOP/s
# (the Hopper architecture blog's comparison table, quoted on
# forums.developer.nvidia.com, "Theoretical TFLOPS for FP16, BF16 and TF32
# for tensor and non-tensor").  float32 matrix ops get TF32 tensor cores:
# cuDNN >= 8 and cuBLAS >= 11 use them by default on Ampere (alibaba/
# DeepRec, docs "NVIDIA TF32"; NVIDIA_TF32_OVERRIDE=0 turns it off: then
# pass peak_flops=19.5e12 instead).
DEVICES['a100'] = _profile(
    'a100', 'NVIDIA A100 SXM4 80GB', 2039e9,
    {'fp16': 78e12, 'fp32': 19.5e12, 'fp64': 9.7e12},
    {'fp16': ('fp16 matrix', 312e12), 'fp32': ('tf32 matrix', 156e12),
     'fp64': ('fp64 matrix', 19.5e12)})

# NVIDIA A100 SXM4 40GB: the launch board, the 80GB's FLOPs on HBM2 at
# 2.4 Gb/s a pin instead of HBM2e at 3.2: 1555 GB/s (glennklockwood.com/
# garden/processors/A100, "A100 40G SXM4: 1.555 TB/s"; TechPowerUp GPU
# database, "NVIDIA A100 SXM4 40 GB": 1,555 GB/s).
DEVICES['a100-40gb'] = DEVICES['a100']._replace(
    name='a100-40gb', title='NVIDIA A100 SXM4 40GB', bandwidth=1555e9)

# 'a100', the same board by the name of its memory, as the capacity presets
# (memory.CAPACITIES) name it: one name for every entry point.
DEVICES['a100-80gb'] = DEVICES['a100']._replace(name='a100-80gb')

# NVIDIA H100 SXM5 80GB.  H100 datasheet figures (copied by HPC Tech,
# archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html): FP64 34, FP64
# tensor 67, FP32 67 TFLOP/s; TF32 tensor 989 and FP16 tensor 1979 TFLOP/s
# *with sparsity*, so 494.5 and 989.5 dense; 3350 GB/s HBM3.  Non-tensor
# FP16: 133.8 TFLOP/s (glennklockwood.com/garden/processors/h100, VFMA
# column).  TF32 for float32 matrix ops as on the A100.
DEVICES['h100'] = _profile(
    'h100', 'NVIDIA H100 SXM5 80GB', 3350e9,
    {'fp16': 133.8e12, 'fp32': 67e12, 'fp64': 34e12},
    {'fp16': ('fp16 matrix', 989.5e12), 'fp32': ('tf32 matrix', 494.5e12),
     'fp64': ('fp64 matrix', 67e12)})

# NVIDIA Tesla P100 SXM2 (Pascal GP100, NVLink; no tensor cores): 21.2
# TFLOP/s fp16, 10.6 fp32, 5.3 fp64 (half rate), 16 GB HBM2 at 720 GB/s
# (hothardware.com, "NVIDIA Unveils Beastly Tesla P100"; tech4gamers.com,
# "NVIDIA Tesla P100 will be available in two variants": the mezzanine
# card's column).  The GPU of Goyal et al. 2017 and of Horovod's 2018
# benchmarks (Pascal).
DEVICES['p100'] = _profile(
    'p100', 'NVIDIA Tesla P100 SXM2 16GB', 720e9,
    {'fp16': 21.2e12, 'fp32': 10.6e12, 'fp64': 5.3e12})

# NVIDIA Tesla V100 SXM2 16GB (Volta GV100): 15.7 TFLOP/s fp32 and 125
# tensor TFLOP/s (fp16 in, fp32 accumulate; NVIDIA developer blog,
# "Programming Tensor Cores in CUDA 9": "up to 125 Tensor TFLOPS"; the
# table of github.com/avensun/deep-learning-benchmark: 15.7 and 125); 900
# GB/s HBM2 (leiphone.com, GTC 2017 launch: 16 GB HBM2, 900 GB/s).  2560
# FP64 cores for 5120 FP32 (techrival.com, "NVIDIA Volta Tesla V100
# Cards Detailed"): fp64 at half rate, 7.8; fp16 outside the tensor cores
# at twice fp32, 31.4.  float32 matrix ops stay on the FP32 cores (no TF32
# before Ampere).
DEVICES['v100'] = _profile(
    'v100', 'NVIDIA Tesla V100 SXM2 16GB', 900e9,
    {'fp16': 31.4e12, 'fp32': 15.7e12, 'fp64': 7.85e12},
    {'fp16': ('fp16 matrix', 125e12)})

# AMD EPYC 9654 (Zen 4, one socket): 96 cores at 2.40 GHz base (TechPowerUp
# CPU database, quoted by llmperf.net "AMD EPYC 9000 Series"); 12 channels
# of DDR5-4800, 12 x 4800e6 x 8 B = 460.8 GB/s (tomshardware.fr, "EPYC
# Genoa: la prise en charge de 12 canaux de memoire DDR5 confirmee").  A
# Zen 4 core issues two 256-bit FMAs a cycle (AVX-512 is split over them:
# qeeebo.com "How does Zen 4 handle AVX-512 instructions?"; wlog.flatlib.jp
# measures 2 FMA/cycle on Zen 3), so 2 x 8 lanes x 2 = 32 fp32 FLOPs and 16
# fp64 FLOPs a cycle: 96 x 2.4e9 x 32 = 7.3728e12.  No matrix unit, and no
# fp16 arithmetic: float16 is converted and computed as fp32.
DEVICES['epyc9654'] = _profile(
    'epyc9654', 'AMD EPYC 9654 (1 socket)', 460.8e9,
    {'fp16': 96 * 2.4e9 * 32, 'fp32': 96 * 2.4e9 * 32,
     'fp64': 96 * 2.4e9 * 16})


class RooflineColumns(object):
    """Predefined column sets for ``show_roofline_report``."""

    DEFAULT = ['name', 'flops', 'mrw', 'intensity', 'peak_used',
               't_compute', 't_memory', 't_roofline', 'bound']
    #: DEFAULT and the measured time with the efficiency it gives.
    TIMED = DEFAULT + ['time', 'efficiency']
    ALL = ['name', 'type', 'flops', 'mread', 'mwrite', 'mrw', 'intensity',
           'peak_flops', 'peak_used', 'bandwidth', 't_compute', 't_memory',
           't_roofline', 't_serial', 'bound', 'time', 'efficiency']


#: Columns a roofline report can show.
ROOFLINE_COLUMNS = tuple(RooflineColumns.ALL)


def default_columns(rows):
    """``RooflineColumns.TIMED`` when a row has a measured time, else
    ``RooflineColumns.DEFAULT``."""
    rows = rows.values() if isinstance(rows, dict) else rows
    if any(r.get('time') is not None for r in rows):
        return list(RooflineColumns.TIMED)
    return list(RooflineColumns.DEFAULT)


def resolve_device(device=None, peak_flops=None, bandwidth=None):
    """The :class:`Device` the arguments describe: a preset's name, a
    Device, or (without ``device``) one peak for every layer and a
    bandwidth; a ValueError names the presets otherwise."""
    names = ', '.join(repr(n) for n in DEVICES)
    if device is None:
        if peak_flops is None or bandwidth is None:
            raise ValueError(
                'give a device ({}) or both peak_flops (FLOP/s) and '
                'bandwidth (bytes/s)'.format(names))
        peak = checks.positive('peak_flops', peak_flops)
        peaks = {(u, p): (GIVEN, peak) for u in ('matrix', 'vector')
                 for p in PRECISIONS.values()}
        return Device(None, None, checks.positive('bandwidth', bandwidth),
                      peaks)
    if peak_flops is not None or bandwidth is not None:
        raise ValueError('give either a device or peak_flops and bandwidth, '
                         'not both')
    if isinstance(device, Device):
        return device
    if isinstance(device, str) and device.lower() in DEVICES:
        return DEVICES[device.lower()]
    raise ValueError('unknown device {!r}; the presets are {}'.format(
        device, names))


def _row(layer, dev):
    flops = layer['flops']
    mrw = layer['mread'] + layer['mwrite']
    label, peak = dev.peak(layer['type'], layer.get('dtype'))
    bandwidth = dev.bandwidth
    t_compute = flops / peak
    t_memory = mrw / bandwidth
    if mrw:
        intensity = flops / mrw
        bound = 'compute' if intensity >= peak / bandwidth else 'memory'
    else:
        # No traffic: no place on the intensity axis (None, not inf, so
        # that every renderer and JSON take it); bound by arithmetic if
        # there is any, by nothing otherwise (a free reshape).
        intensity = None
        bound = 'compute' if flops else None
    row = collections.OrderedDict([
        ('name', layer['name']), ('type', layer['type']),
        ('dtype', layer.get('dtype')), ('flops', flops),
        ('mread', layer['mread']), ('mwrite', layer['mwrite']),
        ('mrw', mrw), ('intensity', intensity), ('peak_flops', peak),
        ('peak_used', label), ('bandwidth', bandwidth),
        ('t_compute', t_compute), ('t_memory', t_memory),
        ('t_roofline', max(t_compute, t_memory)),
        ('t_serial', t_compute + t_memory), ('bound', bound)])
    time = layer.get('time')
    if time is not None:
        row['time'] = time
        row['efficiency'] = row['t_roofline'] / time if time > 0 else None
    return row


def roofline_report(layers, device=None, peak_flops=None, bandwidth=None):
    """Ordered dict layer name -> the least time the layer needs on a
    device, then 'total'.

    Args:
        layers: layer dicts with ``name, type, flops, mread, mwrite`` and
            optionally ``dtype`` (numpy dtype name) and ``time`` (seconds
            measured by the hook).
        device: a preset name from :data:`DEVICES` or a :class:`Device`;
            or None, with both
        peak_flops (float): FLOP/s for every layer, and
        bandwidth (float): bytes per second.

    Each row has ``name, type, dtype, flops, mread, mwrite, mrw``,
    ``intensity = flops / mrw`` (None when ``mrw`` is 0), ``peak_flops``
    and ``peak_used`` (its label), ``bandwidth``, ``t_compute = flops /
    peak_flops``, ``t_memory = mrw / bandwidth``, ``t_roofline`` (their
    maximum), ``t_serial`` (their sum), in seconds, and ``bound``:
    ``'compute'`` when the intensity reaches the ridge point ``peak_flops
    / bandwidth``, else ``'memory'`` (``'compute'`` for FLOPs without
    traffic, None for a layer with neither).  A layer with a measured
    ``time`` also gets ``time`` and ``efficiency = t_roofline / time``.

    The 'total' row sums flops, bytes and the four times (``t_roofline``
    is the sum of the layers' maxima); its intensity is total flops over
    total bytes; ``peak_flops`` and ``peak_used`` are those of the layers
    when they all share one, else None.  When every layer has a time, it
    has the summed ``time`` and ``efficiency = t_roofline / time``.
    """
    dev = resolve_device(device, peak_flops, bandwidth)
    report = collections.OrderedDict()
    total = collections.OrderedDict(
        [('name', 'total'), ('type', 'total'), ('dtype', None),
         ('flops', 0), ('mread', 0), ('mwrite', 0), ('mrw', 0),
         ('intensity', None), ('peak_flops', None), ('peak_used', None),
         ('bandwidth', dev.bandwidth), ('t_compute', 0.0),
         ('t_memory', 0.0), ('t_roofline', 0.0), ('t_serial', 0.0),
         ('bound', None)])
    peaks = set()
    time = 0.0
    timed = bool(layers)
    for layer in layers:
        row = _row(layer, dev)
        report[row['name']] = row
        for k in ('flops', 'mread', 'mwrite', 'mrw', 't_compute',
                  't_memory', 't_roofline', 't_serial'):
            total[k] += row[k]
        peaks.add((row['peak_used'], row['peak_flops']))
        if row.get('time') is None:
            timed = False
        else:
            time += row['time']
    if total['mrw']:
        total['intensity'] = total['flops'] / total['mrw']
    if len(peaks) == 1:
        (total['peak_used'], total['peak_flops']), = peaks
    if timed:
        total['time'] = time
        total['efficiency'] = total['t_roofline'] / time if time > 0 \
            else None
    report['total'] = total
    return report
