"""The registry of hardware: devices (peak FLOP/s per unit and precision,
memory bandwidth, memory capacity) and interconnects (bandwidth,
latency), each a preset under a name or one the user builds, checked
when it is made.

Every figure cites its source beside it.  The roofline
(:mod:`~chainer_computational_cost.analysis.roofline`), the time of
collectives and scaling (:mod:`~chainer_computational_cost.analysis.network`)
and ``fit_batch`` read them from here, and only from here.
"""

import collections
import collections.abc
import os
import typing

from chainer_computational_cost.core import checks


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


def _text_or_none(kind, field):
    """The check of a text field (or None) of a Device or Network."""
    def check(value):
        return checks.instance(kind + ' ' + field, value, (str, type(None)),
                               'a str or None')
    return check


def _check_peaks(peaks):
    """A read-only copy of ``peaks`` with FLOP/s as floats, or
    ValueError (an ArgumentTypeError for no mapping, or no pair)."""
    keys = [(u, p) for u in UNITS for p in PRECISIONS.values()]
    allowed = ('Device peaks must map each of {} to a (label, FLOP/s) '
               'pair'.format(', '.join(str(k) for k in keys)))
    if not isinstance(peaks, collections.abc.Mapping):
        raise checks.ArgumentTypeError('{}, got {!r}'.format(allowed, peaks))
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
            raise checks.ArgumentTypeError('{}; {} is {!r}'.format(
                allowed, key, value))
        out[key] = (value[0], checks.positive(
            'the FLOP/s of Device peaks[{}]'.format(key), value[1]))
    return checks.ReadOnlyDict(out)


# Device field -> its checker (the value to keep, or ValueError): a new
# field adds one.
Device._field_checks = {
    'name': _text_or_none('Device', 'name'),
    'title': _text_or_none('Device', 'title'),
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


def resolve_device(device=None, peak_flops=None, bandwidth=None):
    """The :class:`Device` the arguments describe: a preset's name, a
    Device, or (without ``device``) one peak for every layer and a
    bandwidth; a ValueError names the presets otherwise (an
    ArgumentTypeError for a device that is neither a str nor a Device)."""
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
    if not isinstance(device, str):  # (a number: a GPU's id is no device)
        raise checks.ArgumentTypeError(
            'device must be a preset\'s name ({}) or a Device, got '
            '{!r}'.format(names, device))
    # (a network's name where a device goes, as scaling_report's second)
    what = 'device {!r} is a network preset, not a device'.format(device) \
        if device.lower() in NETWORKS else \
        'unknown device {!r}'.format(device)
    raise ValueError('{}; the presets are {}'.format(what, names))


class Network(checks.CheckedFields, collections.namedtuple(
        'Network', ['name', 'title', 'bandwidth', 'latency'])):
    """An interconnect, validated when it is built (a ValueError names the
    field, the value and what it allows).

    Attributes:
        name (str): the preset's key (or None).
        title (str): what it is, in words (or None).
        bandwidth (float): bytes per second, one direction, one port per
            worker (finite, > 0): a preset's line rate.
        latency (float): seconds of one small message (finite, >= 0).
    """

    __slots__ = ()


# Network field -> its checker (the value to keep, or ValueError).
Network._field_checks = {
    'name': _text_or_none('Network', 'name'),
    'title': _text_or_none('Network', 'title'),
    'bandwidth': lambda v: checks.positive('Network bandwidth (bytes/s)', v),
    'latency': lambda v: checks.non_negative('Network latency (seconds)',
                                             v),
}


#: Network preset name -> its transport, a key of :data:`BUS_EFFICIENCY`
#: (``'rdma'``: InfiniBand, RoCE; ``'tcp'``: the kernel's sockets;
#: ``'nvlink'`` and ``'pcie'``: inside one node); any other network
#: (netbench's, one built by hand or loaded from a file, whatever its
#: name, unless it equals the preset in every field) is taken as
#: measured: its bandwidth is what an all-reduce reaches.
NETWORK_TRANSPORTS = {}


class BusEfficiency(typing.NamedTuple):
    """The share of a link's line rate an all-reduce's bus bandwidth
    (nccl-tests' ``busbw``, the ``B`` of the ring formula) reaches:
    ``one`` with one GPU a node, ``several`` with more, and the
    measurements each is the median of."""

    one: float
    several: float
    sources: str


#: Transport -> :class:`BusEfficiency`, each the median of the published
#: measurements it names (busbw over line rate, large messages).
BUS_EFFICIENCY = {
    # 12.2 GB/s on 100 Gb/s EDR (NVIDIA/nccl-tests#29), 24 GB/s on
    # 200 Gb/s HDR (nccl-tests#119), 75 GB/s on 8 x 100 Gb/s RoCE
    # (NVIDIA/nccl#495): 0.976, 0.96, 0.75.
    'rdma': BusEfficiency(0.96, 0.96, 'NVIDIA/nccl-tests#29, #119; '
                                      'NVIDIA/nccl#495'),
    # One GPU a node: 30.4-31.4 Gbit/s on 32 Gb/s (NVIDIA/nccl#209): 0.966.
    # Several: 1.7 GB/s on 25 Gb/s, 4 GPUs a node (nccl-tests#83: 0.544);
    # 4-6 GB/s on 100 Gb/s, 8 (nccl#450: 0.40); 14.7 and 22.55 Gbit/s on
    # 32 Gb/s, 8, 2 and 4 nodes (nccl#209: 0.46, 0.70); 6 GB/s on
    # 100 Gb/s, 8 (nccl#398: 0.48).
    'tcp': BusEfficiency(0.966, 0.48, 'NVIDIA/nccl#209, #398, #450; '
                                      'NVIDIA/nccl-tests#83'),
    # 370 of 450 GB/s, H100 NVLink 4 (nccl-tests#212: 0.82); 200 of
    # 300 GB/s, A100 NVSwitch (nccl-tests#149: 0.67); 21.4 of 25 GB/s, two
    # RTX 2080 Ti over a bridge (nccl-tests#44: 0.86); 208 of 300 GB/s, an
    # A100 pair (nccl-tests#178: 0.69).
    'nvlink': BusEfficiency(0.755, 0.755, 'NVIDIA/nccl-tests#44, #149, '
                                          '#178, #212'),
    # 28 GB/s on PCIe 5.0 x16 (64 GB/s), 8 GPUs (NVIDIA/nccl#1639: 0.44);
    # two GPUs alone were not measured, so one as several.
    'pcie': BusEfficiency(0.44, 0.44, 'NVIDIA/nccl#1639'),
}


def bus_bandwidth(network, gpus_per_node=1):
    """Bytes per second an all-reduce reaches on ``network`` (a
    :class:`Network` or what :func:`resolve_network` takes) with
    ``gpus_per_node`` GPUs a node sharing its port: the line rate times
    :data:`BUS_EFFICIENCY` of its transport (a preset's, see
    :data:`NETWORK_TRANSPORTS`); the bandwidth itself for any other (a
    measured one, even under a preset's name)."""
    net = resolve_network(network)
    transport = NETWORK_TRANSPORTS.get(net.name) \
        if NETWORKS.get(net.name) == net else None
    if transport is None:
        return net.bandwidth
    share = BUS_EFFICIENCY[transport]
    return net.bandwidth * (share.one if gpus_per_node <= 1
                            else share.several)


#: Network presets.
NETWORKS = collections.OrderedDict()


def _preset(name, title, bandwidth, latency, transport):
    """A preset :class:`Network`, its transport noted."""
    NETWORK_TRANSPORTS[name] = transport
    return Network(name, title, bandwidth, latency)


# InfiniBand link rates: EDR 25 Gb/s a lane, HDR 50, NDR 100, four lanes a
# port: 100, 200 and 400 Gb/s (atgbics.com, "Direct Attach InfiniBand Port
# Speed Overview"; NDR 400 Gb/s also in NVIDIA's DGX SuperPOD design guide,
# "NDR Overview").  Latency: an MPI ping-pong over InfiniBand is about a
# microsecond half round trip (the osu_latency example of QLogic's
# InfiniPath manual gives 1.26 us for small messages, manualsdump.com,
# "Benchmark 2"); newer adapters are faster, and 1 us stands for one small
# message through one switch.
for _name, _gbps in (('ib-edr', 100), ('ib-hdr200', 200), ('ib-ndr', 400)):
    NETWORKS[_name] = _preset(
        _name, 'InfiniBand {} ({} Gb/s)'.format(
            _name[3:6].upper(), _gbps), _gbps * 1e9 / 8, 1e-6, 'rdma')


# Ethernet with MPI over the kernel's TCP stack: an application's one-way
# latency is about 10 us at best over 10GbE with the standard Linux stack
# (Larsen et al., "Architectural breakdown of end-to-end latency in a
# TCP/IP network", Int. J. Parallel Programming 37(6), 2009); a faster link
# does not shorten the software path, so 25 and 100 GbE keep 10 us.
for _name, _gbps in (('eth-25g', 25), ('eth-100g', 100)):
    NETWORKS[_name] = _preset(
        _name, '{} Gigabit Ethernet (TCP)'.format(_gbps),
        _gbps * 1e9 / 8, 10e-6, 'tcp')


# NVLink 3 inside one node (A100): 12 links, 600 GB/s a GPU counting both
# directions (nvidia.com, "NVLink"; wikimili.com, "NVLink": 50 GB/s a
# bidirectional link), so 300 GB/s one way.  Latency: no published MPI
# figure found; 1 us is an assumption (a small message between two GPUs
# through NVSwitch, the software path included).
NETWORKS['nvlink-a100'] = _preset(
    'nvlink-a100', 'NVLink 3 (A100, one node)', 300e9, 1e-6, 'nvlink')


# The interconnects of the published runs the scaling report is checked
# against (tests/analysis/test_network_published_scaling.py).  Goyal et
# al. 2017 ("Accurate, Large Minibatch SGD", arXiv 1706.02677, section
# 5): 50 Gbit Ethernet
# between servers, TCP (10 us as the other TCP presets).
NETWORKS['eth-50g'] = _preset('eth-50g', '50 Gigabit Ethernet (TCP)',
                              50e9 / 8, 10e-6, 'tcp')


# Horovod's benchmark page: servers "connected by RoCE-capable 25 Gbit/s
# network" (horovod docs/benchmarks, 512-GPU benchmark).  RDMA skips the
# kernel's TCP path; no published MPI latency over RoCE was found, so 2 us
# (InfiniBand's 1 us and an Ethernet switch's hop) is an assumption.
NETWORKS['roce-25g'] = _preset('roce-25g', '25 Gigabit Ethernet (RoCE)',
                               25e9 / 8, 2e-6, 'rdma')


# NVLink 1 inside a P100 server: four links, 80 GB/s a direction in all,
# 160 GB/s both ways (teckknow.com, "NVIDIA Unveils the Tesla P100 HPC
# Board"; hothardware.com: 160 GB/s bidirectional).  Latency as NVLink 3's
# (assumed).
NETWORKS['nvlink-p100'] = _preset(
    'nvlink-p100', 'NVLink 1 (P100, one node)', 80e9, 1e-6, 'nvlink')


# PCI Express 3.0 x16 between the GPUs of a server without NVLink: 8 GT/s a
# lane, 128b/130b encoding, 16 lanes: 8e9 * 128/130 * 16 / 8 = 15.75 GB/s
# a direction (the PCIe 3.0 base specification's rate and encoding).
# Latency 1 us, assumed as NVLink's.
NETWORKS['pcie3-x16'] = _preset(
    'pcie3-x16', 'PCI Express 3.0 x16 (one node)', 8e9 * 128 / 130 * 16 / 8,
    1e-6, 'pcie')


# The interconnects of the published runs of
# tests/published_scaling_rows.py.  NVLink 2 (V100): six links of 25 GB/s
# a direction (NVIDIA Tesla V100 datasheet: "NVLink 300 GB/s", both
# directions), through the hybrid cube mesh of a DGX-1 or the NVSwitches
# of a DGX-2 alike; latency as the other NVLinks' (assumed).
NETWORKS['nvlink-v100'] = _preset(
    'nvlink-v100', 'NVLink 2 (V100, one node)', 150e9, 1e-6, 'nvlink')


# InfiniBand FDR: 14.0625 Gb/s a lane, four lanes, 56 Gb/s a port (as EDR
# above); latency as EDR's.
NETWORKS['ib-fdr'] = _preset('ib-fdr', 'InfiniBand FDR (56 Gb/s)',
                             56e9 / 8, 1e-6, 'rdma')


# 10 Gigabit Ethernet over TCP: 10 us as the other TCP presets.
NETWORKS['eth-10g'] = _preset('eth-10g', '10 Gigabit Ethernet (TCP)',
                              10e9 / 8, 10e-6, 'tcp')


# A DGX A100's compute fabric: eight single-port 200 Gb/s HDR InfiniBand
# adapters, one a GPU (NVIDIA DGX A100 datasheet), so a node moves
# 8 x 200 Gb/s; latency as the other InfiniBand presets'.
NETWORKS['ib-hdr200x8'] = _preset(
    'ib-hdr200x8', 'InfiniBand HDR, 8 x 200 Gb/s a node (DGX A100)',
    8 * 200e9 / 8, 1e-6, 'rdma')


# PCI Express 4.0 x16 between the GPUs of a server without NVLink (an
# A100 PCIe server): 16 GT/s a lane, 128b/130b encoding, 16 lanes:
# 16e9 * 128/130 * 16 / 8 = 31.5 GB/s a direction (the PCIe 4.0 base
# specification's rate and encoding).  Latency as PCIe 3.0's (assumed).
NETWORKS['pcie4-x16'] = _preset(
    'pcie4-x16', 'PCI Express 4.0 x16 (one node)',
    16e9 * 128 / 130 * 16 / 8, 1e-6, 'pcie')


# A DGX-2's compute fabric: eight 100 Gb/s EDR InfiniBand adapters
# (pcper.com, "NVIDIA Announces DGX-2 with 16 GV100s & 8 100Gb NICs",
# 2018-03: "eight EDR InfiniBand NICs", 1600 Gb/s both ways; AnandTech's
# DGX-2 table: "8 x Infiniband or 8 x 100 GbE"), so a node moves
# 8 x 100 Gb/s; latency as the other InfiniBand presets'.
NETWORKS['ib-edrx8'] = _preset(
    'ib-edrx8', 'InfiniBand EDR, 8 x 100 Gb/s a node (DGX-2)',
    8 * 100e9 / 8, 1e-6, 'rdma')


def save_network(network, path, **extra):
    """Write ``network`` (a :class:`Network`) to the JSON file ``path`` (a
    str or os.PathLike) (``name``, ``title``, ``bandwidth``, ``latency``,
    then ``extra``: what :mod:`~chainer_computational_cost.run.netbench`
    measured); returns it.  ``network`` of another type is a TypeError;
    an ``extra`` key that is a field of Network, or a value JSON cannot
    hold (NaN and infinities too), is refused naming it, before anything
    is written.  A path that cannot be opened for writing (a directory, a
    missing directory) is a ValueError naming it; an error while writing
    (a full disk) stays an OSError."""
    checks.instance('network', network, Network,
                    'a Network (devices.Network(...), or '
                    'devices.NETWORKS[name] for a preset)')
    checks.path('path', path)
    doc = collections.OrderedDict(network._asdict())
    for key, value in extra.items():
        if key in doc:  # would replace the checked figure in the file
            raise ValueError(
                'save_network: extra field {!r} is a field of Network '
                '({}): give it in the Network'.format(
                    key, ', '.join(Network._fields)))
        e = checks.json_error(value)
        if e is not None:
            error = checks.ArgumentTypeError \
                if isinstance(e, TypeError) else ValueError
            raise error('save_network: extra field {!r} cannot be written '
                        'as JSON (numbers finite, str, bool, None, lists '
                        'and dicts of them): {}'.format(key, e))
        doc[key] = value
    checks.write_json(path, doc, 'a network file')
    return network


#: The names JSON gives the values json.load makes.
_JSON_TYPES = {list: 'array', str: 'string', int: 'number',
               float: 'number', bool: 'true or false', type(None): 'null'}


def load_network(path):
    """The :class:`Network` of a JSON file written by :func:`save_network`
    (``path``: a str or os.PathLike).  The file's values go to
    :class:`Network`'s own checks as they are, so a file is refused where
    the object would be; a one-line error names the file and the field."""
    checks.path('path', path)
    name = os.fspath(path)
    what = ('{!r} is not a network file (JSON with name, title, bandwidth, '
            'latency): '.format(name))
    doc = checks.load_json(path, what)
    if not isinstance(doc, dict):
        raise ValueError(what + 'it holds a JSON {}, not an object'.format(
            _JSON_TYPES.get(type(doc), type(doc).__name__)))
    missing = [k for k in Network._fields if k not in doc]
    if missing:
        raise ValueError(what + 'field {!r} is missing'.format(missing[0]))
    fields = [doc[k] for k in Network._fields]
    try:
        return Network(*fields)
    except ValueError as e:  # Network's own check, the file named
        error = checks.ArgumentTypeError \
            if isinstance(e, TypeError) else ValueError
        raise error('{!r}: {}'.format(name, e))


def names_a_file(network):
    """Whether ``network`` reads as a file's name rather than a preset's:
    an os.PathLike, or a str ending in .json or holding a separator."""
    if not isinstance(network, str):
        return isinstance(network, os.PathLike)
    seps = {os.sep, os.altsep or os.sep}
    return network.lower().endswith('.json') or any(
        sep in network for sep in seps)


def is_network_file(path):
    """Whether ``path`` is there to be read as a network file: anything
    but a directory (a file, or a pipe such as a shell's ``<(cat
    net.json)``)."""
    return os.path.exists(path) and not os.path.isdir(path)


def resolve_network(network, name='network'):
    """The :class:`Network` ``network`` names (a preset name, a Network,
    or the path of a JSON file written by :func:`save_network`, such as
    netbench's, a str or os.PathLike); a one-line error, naming the
    argument as ``name``, says what is wrong otherwise: a TypeError for a
    value of another type, a ValueError naming the presets for an unknown
    name, or the file for a path that names none."""
    if isinstance(network, Network):
        return network
    presets = ', '.join(repr(n) for n in NETWORKS)
    checks.path(name, network, 'a preset name ({}), a Network or '
                'the path of a network file'.format(presets))
    if isinstance(network, str) and network.lower() in NETWORKS:
        return NETWORKS[network.lower()]  # names in any case, as devices
    if names_a_file(network) or os.path.isdir(network):
        path = os.fsdecode(network)
        if os.path.isdir(path) or path.endswith(('/', os.sep)):
            # a folder, in the words of every file argument (not 'does
            # not exist': it does)
            raise ValueError('{} file {}'.format(
                name, checks.file_place_problem(
                    path, 'net.json (written by netbench)')))
        if not is_network_file(network):
            raise ValueError('{} file {!r} does not exist (a network is a '
                             'preset name or an existing file)'.format(
                                 name, os.fspath(network)))
        return load_network(network)
    # (a device's name where a network goes: the argument before it)
    what = '{} {!r} is a device preset, not a network'.format(
        name, network) if isinstance(network, str) and \
        network.lower() in DEVICES else 'unknown {} {!r}'.format(
            name, network)
    raise ValueError('{}; the presets are {} (or a network file, *.json, '
                     'from netbench)'.format(what, presets))


GiB = 1 << 30


#: Memory capacity of the device presets, bytes, under the names of
#: :data:`DEVICES` (every preset is in both, and a new one adds a line to
#: each).  A GPU's "GB" of memory is binary (11 GB is 11 * 2**30 bytes);
#: part of it is never the user's (see docs/memory.md, "Will it fit": what
#: is left out).  None: a CPU, whose memory is the
#: machine's, not the processor's.
CAPACITIES = collections.OrderedDict([
    # GeForce GTX 1080 Ti: 11 GB GDDR5X on a 352-bit bus, one chip fewer
    # than the TITAN X Pascal's 12 (TechPowerUp's review of the ASUS GTX
    # 1080 Ti Strix OC; technic3d.com's review of the ZOTAC AMP Extreme).
    ('gtx1080ti', 11 * GiB),
    # A100 SXM4: 40 GB HBM2 at launch, then 80 GB HBM2e, same FLOPs
    # (glennklockwood.com/garden/processors/A100, after NVIDIA's A100
    # datasheet; AnandTech, "NVIDIA Announces A100 80GB").  The roofline
    # preset 'a100' is the 80 GB board.  CUDA reports 42405855232 bytes
    # (40441 MiB) on a 40 GB board (Paderborn PC2 wiki, "NVIDIA A100 40GB
    # with NVLINK", deviceQuery): 0.5 GiB under the nominal figure.
    ('a100', 80 * GiB),
    ('a100-40gb', 40 * GiB),
    ('a100-80gb', 80 * GiB),
    # H100 SXM5: 80 GB HBM3 (glennklockwood.com/garden/processors/h100,
    # after NVIDIA's H100 datasheet; TweakTown, "NVIDIA H100 SXM in the
    # flesh: 4nm Hopper GPU + 80GB HBM3 memory").
    ('h100', 80 * GiB),
    # Tesla P100 SXM2 and V100 SXM2: 16 GB HBM2 each (the sources of the
    # roofline presets 'p100' and 'v100').
    ('p100', 16 * GiB),
    ('v100', 16 * GiB),
    # A CPU's memory is the machine's (12 DDR5 channels, anything up to
    # 6 TB a socket; Tom's Hardware, "AMD Confirms Twelve DDR5 Memory
    # Channels For Zen 4 EPYC CPUs"): fit_batch asks for capacity= there.
    ('epyc9654', None),
])


def gpu_presets():
    """The names of the device presets with a memory capacity (the GPUs)."""
    return [k for k, v in CAPACITIES.items() if v is not None]


def preset_capacity(device):
    """Bytes of memory of the device preset ``device`` (any case), or a
    ValueError naming the presets that have one (a CPU preset has none)."""
    allowed = ', '.join(gpu_presets())
    key = checks.instance('device', device, str, 'the name of a GPU '
                          'preset ({})'.format(allowed)).lower()
    if key not in CAPACITIES:
        raise ValueError('device {!r} has no memory capacity preset; '
                         'presets: {}; or give the capacity in bytes '
                         '(capacity=, or --fit BYTES)'.format(
                             device, allowed))
    if CAPACITIES[key] is None:
        raise ValueError(
            'device {!r} is a CPU preset: its memory is the machine\'s, '
            'which no preset knows; give it in bytes (capacity=, or '
            '--fit BYTES), or a GPU preset: {}'.format(device, allowed))
    return CAPACITIES[key]
