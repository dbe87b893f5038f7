"""Published data-parallel scaling rows for issue 46, as data only.

Every input of every row was read from its source before any prediction
was compared with it (the rule: fix a prediction's inputs from their
sources before you compare, never after). Nothing here calls the package;
``tests/analysis/test_network_published_scaling_rows.py`` checks only
that the data agrees with itself (each efficiency is the ratio of the
throughputs recorded next to it).

Sources: the research notes /work/research/published_rows.md (groups
A1-A19, B, C), each row then read again from its source where the source
is at hand: NVIDIA DeepLearningExamples ("DLE") at commit
729963dd47e7c8bd462ad10bfac7a7b0b604e6dd; TensorFlow's benchmark page
``tensorflow/docs_src/performance/benchmarks.md`` (tensorflow/tensorflow
at 6535ed7c270f9fb96798eec626e1883e15905226, test date May 2017, the
figures the six rows of ``test_network_published_scaling.py`` use); the Chainer
blog (chainer/chainer.org ``_posts``), whose throughputs are plotted only,
so they are the research's readings of the figures (about +-3 %).

Selection rule
--------------
One row per (published table, precision, sequence length) such that:

1. the source is one of groups A1-A11 and A13-A18 (A12 and A19 are
   rejected below);
2. the model is one ``chainer.links`` provides (ResNet-50, ResNet-152,
   VGG16: ``ResNet50Layers``, ``ResNet152Layers``, ``VGG16Layers``) or one
   built here from its paper (BERT-large, Transformer-big);
3. the per-GPU batch is stated by the table, or by the benchmark command,
   config or script the table names;
4. the throughputs are for synthetic data where the source offers both
   (TensorFlow's page; real data there measures its input pipeline), and
   for the page's main table (batch from its options table), not the
   batch-32 "Other results" of the same runs;
5. gradients are all-reduced every step, or the source records the
   gradient-accumulation steps at every N of the table (they are in
   ``accumulation``);
6. no efficiency in the table is above 1.05 (a run more than 5 %
   superlinear differs from its baseline in more than N).

Each row is taken at the table's largest N against its smallest N (the
baseline: 1 GPU, one server, or ChainerMN's 8 GPUs); ``ladder`` holds
every (N, throughput) the table publishes, so any anchor can be chosen
later. ``small_gpus`` is fixed by rule: for a row whose N spans servers,
the smallest published N that spans two or more servers; for an in-node
row, the smallest published N above the baseline; None when the table
has only the baseline and N.

Rejected (and why)
------------------
* A12 (TF1 BERT pre-training, multi-node DGX-2H): the 1-node row is the
  single-node table's (20.06 container), the multi-node runs used 19.08;
  superlinear (4 nodes mixed 4.28x = 1.07, FP32 4.45x = 1.11): rule 6.
* A19 (BytePS README, BERT-large at 256 GPUs): the baseline is not stated.
* TF1 BERT pre-training single-node tables (DGX-1 16GB/32GB, DGX-2, DGX
  A100): the 1-GPU baseline accumulates 1024-8192 micro-batches and runs
  no all-reduce; DGX-1 32GB (8.56x at 8) and DGX-2 (21.57x at 16) are
  superlinear (rule 6), and the DGX A100 one is left out with them since
  its 1-GPU baseline has no communication to amortise (only the
  multi-node tables, baseline one full server, are kept).
* InceptionV3 and AlexNet rows of TensorFlow's page: not a
  ``chainer.links`` model and not built here (rule 2).
* TensorFlow's page, real-data tables and batch-32 "Other results"
  (rule 4).
* A18's 10 GbE + double buffering + FP16 all-reduce series: 4230 /
  (4 x 960) = 1.10 against its own 8-GPU point (rule 6; its 8-GPU point
  pays the scheme's overhead without a network).
* The ChainerMN paper (arXiv 1710.11351, "90 % at 128 GPUs"), Horovod
  Figure 7, Akiba et al. 2017, Mikami et al. 2018, Megatron-LM: not read
  or not data-parallel (research notes, "Considered and rejected").

The research notes give A14 and A15 throughputs (e.g. ResNet-50 238 /
1886 images/s on a DGX-1) that are not in the stored versions of the
TensorFlow page; the rows below use the page at the commit above (219 /
1734), the same figures ``test_network_published_scaling.py`` uses.
"""

import typing


class Row(typing.NamedTuple):
    """One published scaling measurement and every input it states.

    Fields (units as the source gives them):

    * ``id``: unique, ``<framework>-<model>-<platform>-<precision>``;
    * ``citation``: publication, file, table or figure;
    * ``model``: ``'ResNet50'``, ``'ResNet152'``, ``'VGG16'`` (the
      ``chainer.links`` ``<model>Layers``), ``'BERT-large'`` or
      ``'Transformer-big'`` (built from the paper: see ``paper_params``);
    * ``batch``: per-GPU batch (per micro-batch when accumulating), in
      ``batch_unit``: ``'images'``, ``'sequences'`` (of ``sequence``
      tokens) or ``'tokens'`` (fairseq's ``--max-tokens``, an upper bound
      of the tokens in one GPU's batch);
    * ``precision``: ``'fp32'``, ``'tf32'`` or ``'mixed'``;
    * ``gpu``: ``'v100'``, ``'a100'``, ``'p100'``, ``'k80'``,
      ``'titanx-maxwell'``; ``gpus_per_node``;
    * ``intra_node``: ``'nvlink2-cube'``, ``'nvlink1-cube'``,
      ``'nvswitch1'``, ``'nvswitch2'``, ``'pcie3'`` or ``'not stated'``;
      ``intra_node_how``: ``'stated'`` or ``'inferred'`` (from the product
      name: DGX-1 V100 / P100, DGX-2, DGX A100, p3.16xlarge, GeForce);
    * ``network``: None for a single server, ``'not stated'``, or the
      network as stated; ``network_gbps``: line rate per link in Gb/s or
      None; ``network_transport``: ``'rdma'``, ``'tcp'``, ``'not stated'``
      or None; ``network_how``: which of these is stated and which inferred;
    * ``framework`` and ``allreduce`` (``'ddp'``, ``'horovod'``,
      ``'chainermn'``, ``'parameter_server'``, ``'replicated'``: TF's
      in-graph all-reduce); ``knobs``: (name, value) pairs the source
      states (Horovod cycle time, ChainerMN's FP16 all-reduce, ...);
    * ``unit``: of the throughputs (``'images/s'``, ``'sequences/s'``,
      ``'tokens/s'``, or ``'speedup'`` over the baseline when the source
      gives only that; its ``base_throughput`` is then 1.0);
    * ``base_gpus``, ``base_throughput``: the baseline; ``gpus``,
      ``throughput``: the largest N;
    * ``efficiency``: ``throughput / (gpus / base_gpus * base_throughput)``
      to 3 decimals (``efficiency_how='computed'``) or the source's own
      figure (``'stated'``);
    * ``base_step_time``: seconds of one baseline step (micro-batch) per
      GPU, ``batch * base_gpus / base_throughput``, to 4 decimals; None
      when the source gives no baseline throughput;
    * ``ladder``: every (N, throughput) the table publishes, baseline and
      N included;
    * ``paper_params``, ``sequence``: the parameter count of a model built
      from its paper and its tokens per sequence (None otherwise);
    * ``throughput_how``: ``'table'``, ``'figure'`` (read from a plot) or
      ``'text'``;
    * ``small_gpus``, ``small_efficiency``: the smaller N by the rule of
      the module docstring and its efficiency against the baseline;
    * ``accumulation``: (N, micro-batches per GPU per all-reduce) for every
      N of the ladder, or None when each step all-reduces;
    * ``data``: ``'synthetic'``, ``'real'`` or ``'not stated'``;
    * ``notes``: caveats.
    """

    id: str
    citation: str
    model: str
    batch: int
    batch_unit: str
    precision: str
    gpu: str
    gpus_per_node: int
    intra_node: str
    intra_node_how: str
    network: typing.Optional[str]
    network_gbps: typing.Optional[float]
    network_transport: typing.Optional[str]
    network_how: str
    framework: str
    allreduce: str
    unit: str
    base_gpus: int
    base_throughput: float
    gpus: int
    throughput: float
    efficiency: float
    base_step_time: typing.Optional[float]
    ladder: typing.Tuple[typing.Tuple[int, float], ...]
    paper_params: typing.Optional[int] = None
    sequence: typing.Optional[int] = None
    knobs: typing.Tuple[typing.Tuple[str, object], ...] = ()
    throughput_how: str = 'table'
    efficiency_how: str = 'computed'
    small_gpus: typing.Optional[int] = None
    small_efficiency: typing.Optional[float] = None
    accumulation: typing.Optional[
        typing.Tuple[typing.Tuple[int, int], ...]] = None
    data: str = 'not stated'
    notes: str = ''


class BusBandwidth(typing.NamedTuple):
    """An nccl-tests all-reduce bus bandwidth someone measured or a
    maintainer stated (research Task B): ``transport`` and ``line_gbps``
    per NIC or link, ``gpus_per_node`` and ``nodes`` (None when not
    stated), ``busbw_gbytes`` in GB/s (a (low, high) pair when a range),
    ``message`` the message sizes, ``citation``, ``notes``."""

    id: str
    transport: str
    line_gbps: typing.Optional[float]
    gpus_per_node: typing.Optional[int]
    nodes: typing.Optional[int]
    busbw_gbytes: typing.Union[float, typing.Tuple[float, float]]
    message: str
    citation: str
    notes: str = ''


class Spread(typing.NamedTuple):
    """Performance variation between GPUs of one SKU (research Task C1):
    ``average`` and ``maximum`` variation as fractions, ``outlier`` the
    slowest GPU over the median, ``citation``, ``notes``."""

    citation: str
    clusters: typing.Tuple[str, ...]
    average: float
    maximum: float
    outlier: float
    notes: str = ''


#: Parameter counts of the models built from their papers.
BERT_LARGE_PARAMS = 340 * 10 ** 6  # Devlin et al. 2019, section 3.1
TRANSFORMER_BIG_PARAMS = 213 * 10 ** 6  # Vaswani et al. 2017, Table 3

_DLE = ('NVIDIA DeepLearningExamples @729963dd, ')
_TF_PAGE = ('TensorFlow benchmarks.md (tensorflow/tensorflow @6535ed7c, '
            'docs_src/performance/benchmarks.md), ')
_CHAINER_2018 = ('Chainer blog 2018-05-25, "New ChainerMN functions for '
                 'improved performance in cloud environments" '
                 '(chainer/chainer.org _posts/2018-05-25-chainermn-v1-3.md), ')

_ONE_SERVER = dict(network=None, network_gbps=None, network_transport=None,
                   network_how='single server')
_DGX1_V100 = dict(gpu='v100', gpus_per_node=8, intra_node='nvlink2-cube',
                  intra_node_how='inferred', **_ONE_SERVER)
_DGX2 = dict(gpu='v100', gpus_per_node=16, intra_node='nvswitch1',
             intra_node_how='inferred', **_ONE_SERVER)
_DGXA100 = dict(gpu='a100', gpus_per_node=8, intra_node='nvswitch2',
                intra_node_how='inferred', **_ONE_SERVER)
_DGXA100_NODES = dict(gpu='a100', gpus_per_node=8, intra_node='nvswitch2',
                      intra_node_how='inferred', network='not stated',
                      network_gbps=None, network_transport='not stated',
                      network_how='not stated')
_DGX1_P100 = dict(gpu='p100', gpus_per_node=8, intra_node='nvlink1-cube',
                  intra_node_how='inferred', **_ONE_SERVER)
# K80 boards have no NVLink: PCIe, inferred.
_K80_SERVER = dict(gpu='k80', gpus_per_node=8, intra_node='pcie3',
                   intra_node_how='inferred', **_ONE_SERVER)
_K80_DISTRIBUTED = dict(gpu='k80', gpus_per_node=8, intra_node='pcie3',
                        intra_node_how='inferred', network='not stated',
                        network_gbps=None, network_transport='not stated',
                        network_how='not stated (AWS p2.8xlarge)')

_PYT_DDP = dict(framework='pytorch', allreduce='ddp')
_TF_HOROVOD = dict(framework='tensorflow1', allreduce='horovod')
_MX_HOROVOD = dict(framework='mxnet', allreduce='horovod',
                   knobs=(('kv_store', 'horovod'),
                          ('HOROVOD_CYCLE_TIME_ms', 0.1)))
_RN50 = dict(model='ResNet50', batch_unit='images', unit='images/s')
_SQUAD = dict(model='BERT-large', paper_params=BERT_LARGE_PARAMS,
              sequence=384, batch_unit='sequences', unit='sequences/s')
_PRETRAIN = dict(model='BERT-large', paper_params=BERT_LARGE_PARAMS,
                 batch_unit='sequences', unit='sequences/s')
_TRANSFORMER = dict(model='Transformer-big',
                    paper_params=TRANSFORMER_BIG_PARAMS, batch_unit='tokens',
                    unit='tokens/s')

_V15 = ('ResNet-50 v1.5 (stride 2 in the 3x3 convolution): same parameters '
        'as chainer.links ResNet50Layers, a little more compute')

ROWS = [
    # -- A1-A4: PyTorch ResNet-50 v1.5, DDP, one server (pytorch-21.03).
    # Batch: PyTorch/Classification/ConvNets/configs.yml, resnet50 DGX1V
    # (also DGX1V-16G and -32G) FP32 112, AMP 256; DGXA100 256 both.
    # DDP(model, device_ids, output_device): no bucket_cap_mb set
    # (image_classification/training.py line 83).
    Row(id='pyt-rn50-dgx1-16g-fp32',
        citation=_DLE + 'PyTorch/Classification/ConvNets/resnet50v1.5/'
        'README.md, "Training performance: NVIDIA DGX-1 16GB (8x V100 '
        '16GB)"; batch from configs.yml',
        **_RN50, batch=112, precision='fp32', **_DGX1_V100, **_PYT_DDP,
        base_gpus=1, base_throughput=367, gpus=8, throughput=2855,
        efficiency=0.972,  # 2855 / (8 * 367) = 0.9724
        base_step_time=0.3052,  # 112 / 367
        ladder=((1, 367), (8, 2855)), notes=_V15),
    Row(id='pyt-rn50-dgx1-16g-mixed',
        citation=_DLE + 'PyTorch/Classification/ConvNets/resnet50v1.5/'
        'README.md, "Training performance: NVIDIA DGX-1 16GB (8x V100 '
        '16GB)"; batch from configs.yml',
        **_RN50, batch=256, precision='mixed', **_DGX1_V100, **_PYT_DDP,
        base_gpus=1, base_throughput=1200, gpus=8, throughput=8322,
        efficiency=0.867,  # 8322 / (8 * 1200) = 0.8669
        base_step_time=0.2133,  # 256 / 1200
        ladder=((1, 1200), (8, 8322)), notes=_V15 + '; NHWC'),
    Row(id='pyt-rn50-dgx1-32g-fp32',
        citation=_DLE + 'PyTorch/Classification/ConvNets/resnet50v1.5/'
        'README.md, "Training performance: NVIDIA DGX-1 32GB (8x V100 '
        '32GB)"; batch from configs.yml',
        **_RN50, batch=112, precision='fp32', **_DGX1_V100, **_PYT_DDP,
        base_gpus=1, base_throughput=356, gpus=8, throughput=2766,
        efficiency=0.971,  # 2766 / (8 * 356) = 0.9712
        base_step_time=0.3146,  # 112 / 356
        ladder=((1, 356), (8, 2766)), notes=_V15),
    Row(id='pyt-rn50-dgx1-32g-mixed',
        citation=_DLE + 'PyTorch/Classification/ConvNets/resnet50v1.5/'
        'README.md, "Training performance: NVIDIA DGX-1 32GB (8x V100 '
        '32GB)"; batch from configs.yml',
        **_RN50, batch=256, precision='mixed', **_DGX1_V100, **_PYT_DDP,
        base_gpus=1, base_throughput=1156, gpus=8, throughput=8056,
        efficiency=0.871,  # 8056 / (8 * 1156) = 0.8711
        base_step_time=0.2215,  # 256 / 1156
        ladder=((1, 1156), (8, 8056)), notes=_V15 + '; NHWC'),
    Row(id='pyt-rn50-a100-tf32',
        citation=_DLE + 'PyTorch/Classification/ConvNets/resnet50v1.5/'
        'README.md, "Training performance: NVIDIA DGX A100 (8x A100 '
        '80GB)"; batch from configs.yml',
        **_RN50, batch=256, precision='tf32', **_DGXA100, **_PYT_DDP,
        base_gpus=1, base_throughput=938, gpus=8, throughput=7248,
        efficiency=0.966,  # 7248 / (8 * 938) = 0.9659
        base_step_time=0.2729,  # 256 / 938
        ladder=((1, 938), (8, 7248)), notes=_V15),
    Row(id='pyt-rn50-a100-mixed',
        citation=_DLE + 'PyTorch/Classification/ConvNets/resnet50v1.5/'
        'README.md, "Training performance: NVIDIA DGX A100 (8x A100 '
        '80GB)"; batch from configs.yml',
        **_RN50, batch=256, precision='mixed', **_DGXA100, **_PYT_DDP,
        base_gpus=1, base_throughput=2470, gpus=8, throughput=16621,
        efficiency=0.841,  # 16621 / (8 * 2470) = 0.8411
        base_step_time=0.1036,  # 256 / 2470
        ladder=((1, 2470), (8, 16621)), notes=_V15 + '; NHWC'),

    # -- A5: TensorFlow 1 ResNet-50 v1.5 + Horovod (NCCL), XLA, one server
    # (20.06-tf1 container, "averaged over an entire training epoch");
    # batch per GPU in the table.
    Row(id='tf-rn50-a100-tf32',
        citation=_DLE + 'TensorFlow/Classification/ConvNets/resnet50v1.5/'
        'README.md, "Training performance: NVIDIA DGX A100 (8x A100 40GB)"',
        **_RN50, batch=256, precision='tf32', **_DGXA100, **_TF_HOROVOD,
        base_gpus=1, base_throughput=909, gpus=8, throughput=7000,
        efficiency=0.963,  # 7000 / (8 * 909) = 0.9626
        base_step_time=0.2816,  # 256 / 909
        ladder=((1, 909), (8, 7000)),
        notes=_V15 + '; XLA; A100 40GB; Horovod fusion/cycle not stated'),
    Row(id='tf-rn50-a100-mixed',
        citation=_DLE + 'TensorFlow/Classification/ConvNets/resnet50v1.5/'
        'README.md, "Training performance: NVIDIA DGX A100 (8x A100 40GB)"',
        **_RN50, batch=256, precision='mixed', **_DGXA100, **_TF_HOROVOD,
        base_gpus=1, base_throughput=2375, gpus=8, throughput=17400,
        efficiency=0.916,  # 17400 / (8 * 2375) = 0.9158
        base_step_time=0.1078,  # 256 / 2375
        ladder=((1, 2375), (8, 17400)),
        notes=_V15 + '; XLA; A100 40GB; Horovod fusion/cycle not stated'),
    Row(id='tf-rn50-dgx1-fp32',
        citation=_DLE + 'TensorFlow/Classification/ConvNets/resnet50v1.5/'
        'README.md, "Training performance: NVIDIA DGX-1 (8x V100 16G)"',
        **_RN50, batch=128, precision='fp32', **_DGX1_V100, **_TF_HOROVOD,
        base_gpus=1, base_throughput=412, gpus=8, throughput=3170,
        efficiency=0.962,  # 3170 / (8 * 412) = 0.9618
        base_step_time=0.3107,  # 128 / 412
        ladder=((1, 412), (8, 3170)),
        notes=_V15 + '; XLA; Horovod fusion/cycle not stated'),
    Row(id='tf-rn50-dgx1-mixed',
        citation=_DLE + 'TensorFlow/Classification/ConvNets/resnet50v1.5/'
        'README.md, "Training performance: NVIDIA DGX-1 (8x V100 16G)"',
        **_RN50, batch=256, precision='mixed', **_DGX1_V100, **_TF_HOROVOD,
        base_gpus=1, base_throughput=1270, gpus=8, throughput=9510,
        efficiency=0.936,  # 9510 / (8 * 1270) = 0.9360
        base_step_time=0.2016,  # 256 / 1270
        ladder=((1, 1270), (8, 9510)),
        notes=_V15 + '; XLA; Horovod fusion/cycle not stated'),
    Row(id='tf-rn50-dgx2-fp32',
        citation=_DLE + 'TensorFlow/Classification/ConvNets/resnet50v1.5/'
        'README.md, "Training performance: NVIDIA DGX-2 (16x V100 32G)"',
        **_RN50, batch=128, precision='fp32', **_DGX2, **_TF_HOROVOD,
        base_gpus=1, base_throughput=432, gpus=16, throughput=6500,
        efficiency=0.940,  # 6500 / (16 * 432) = 0.9404
        base_step_time=0.2963,  # 128 / 432
        ladder=((1, 432), (16, 6500)),
        notes=_V15 + '; XLA; Horovod fusion/cycle not stated'),
    Row(id='tf-rn50-dgx2-mixed',
        citation=_DLE + 'TensorFlow/Classification/ConvNets/resnet50v1.5/'
        'README.md, "Training performance: NVIDIA DGX-2 (16x V100 32G)"',
        **_RN50, batch=256, precision='mixed', **_DGX2, **_TF_HOROVOD,
        base_gpus=1, base_throughput=1300, gpus=16, throughput=17250,
        efficiency=0.829,  # 17250 / (16 * 1300) = 0.8293
        base_step_time=0.1969,  # 256 / 1300
        ladder=((1, 1300), (16, 17250)),
        notes=_V15 + '; XLA; Horovod fusion/cycle not stated'),

    # -- A6-A7: MXNet ResNet-50 v1.5 + Horovod, one server. Batch: the
    # README's benchmark.py commands (-b is per GPU: the runner multiplies
    # it by the GPU count, runner line 43); the runner sets
    # HOROVOD_CYCLE_TIME=0.1 (line 77). "Total IPS (data + compute)".
    Row(id='mx-rn50-dgx2-fp32',
        citation=_DLE + 'MxNet/Classification/RN50v1.5/README.md, '
        '"Training performance: NVIDIA DGX-2 (16x V100 32GB)"',
        **_RN50, batch=128, precision='fp32', **_DGX2, **_MX_HOROVOD,
        base_gpus=1, base_throughput=417, gpus=16, throughput=6338,
        efficiency=0.950,  # 6338 / (16 * 417) = 0.9499
        base_step_time=0.3070,  # 128 / 417
        ladder=((1, 417), (2, 821), (4, 1623), (8, 3223), (16, 6338)),
        small_gpus=2, small_efficiency=0.984,  # 821 / (2 * 417) = 0.9844
        notes=_V15 + '; mxnet-20.12'),
    Row(id='mx-rn50-dgx2-mixed',
        citation=_DLE + 'MxNet/Classification/RN50v1.5/README.md, '
        '"Training performance: NVIDIA DGX-2 (16x V100 32GB)"',
        **_RN50, batch=256, precision='mixed', **_DGX2, **_MX_HOROVOD,
        base_gpus=1, base_throughput=1492, gpus=16, throughput=21484,
        efficiency=0.900,  # 21484 / (16 * 1492) = 0.9000
        base_step_time=0.1716,  # 256 / 1492
        ladder=((1, 1492), (2, 2935), (4, 5726), (8, 11368), (16, 21484)),
        small_gpus=2, small_efficiency=0.984,  # 2935 / (2 * 1492) = 0.9836
        notes=_V15 + '; mxnet-20.12'),
    Row(id='mx-rn50-dgx1-fp32',
        citation=_DLE + 'MxNet/Classification/RN50v1.5/README.md, '
        '"Training performance: NVIDIA DGX-1 (8x V100 16GB)"',
        **_RN50, batch=96, precision='fp32', **_DGX1_V100, **_MX_HOROVOD,
        base_gpus=1, base_throughput=384, gpus=8, throughput=3005,
        efficiency=0.978,  # 3005 / (8 * 384) = 0.9782
        base_step_time=0.2500,  # 96 / 384
        ladder=((1, 384), (2, 763), (4, 1513), (8, 3005)),
        small_gpus=2, small_efficiency=0.993,  # 763 / (2 * 384) = 0.9935
        notes=_V15 + '; mxnet-20.12'),
    Row(id='mx-rn50-dgx1-mixed',
        citation=_DLE + 'MxNet/Classification/RN50v1.5/README.md, '
        '"Training performance: NVIDIA DGX-1 (8x V100 16GB)"',
        **_RN50, batch=192, precision='mixed', **_DGX1_V100, **_MX_HOROVOD,
        base_gpus=1, base_throughput=1376, gpus=8, throughput=10723,
        efficiency=0.974,  # 10723 / (8 * 1376) = 0.9741
        base_step_time=0.1395,  # 192 / 1376
        ladder=((1, 1376), (2, 2768), (4, 5357), (8, 10723)),
        small_gpus=2, small_efficiency=1.006,  # 2768 / (2 * 1376) = 1.0058
        notes=_V15 + '; mxnet-20.12'),
    Row(id='mx-rn50-a100-tf32',
        citation=_DLE + 'MxNet/Classification/RN50v1.5/README.md, '
        '"Training performance: NVIDIA DGX A100 (8x A100 80GB)"',
        **_RN50, batch=512, precision='tf32', **_DGXA100, **_MX_HOROVOD,
        base_gpus=1, base_throughput=1055.78, gpus=8, throughput=8247.44,
        efficiency=0.976,  # 8247.44 / (8 * 1055.78) = 0.9765
        base_step_time=0.4849,  # 512 / 1055.78
        ladder=((1, 1055.78), (4, 4182.30), (8, 8247.44)),
        small_gpus=4, small_efficiency=0.990,  # 4182.30/(4*1055.78) = 0.9903
        notes=_V15 + '; mxnet-22.10'),
    Row(id='mx-rn50-a100-mixed',
        citation=_DLE + 'MxNet/Classification/RN50v1.5/README.md, '
        '"Training performance: NVIDIA DGX A100 (8x A100 80GB)"',
        **_RN50, batch=512, precision='mixed', **_DGXA100, **_MX_HOROVOD,
        base_gpus=1, base_throughput=3410.52, gpus=8, throughput=26673.72,
        efficiency=0.978,  # 26673.72 / (8 * 3410.52) = 0.9776
        base_step_time=0.1501,  # 512 / 3410.52
        ladder=((1, 3410.52), (4, 13442.66), (8, 26673.72)),
        small_gpus=4,
        small_efficiency=0.985,  # 13442.66 / (4 * 3410.52) = 0.9854
        notes=_V15 + '; mxnet-22.10'),

    # -- A8: TF1 BERT-large SQuAD v1.1 fine-tuning + Horovod, one server
    # (20.06-py3, "steady state throughput"); batch per GPU in the table;
    # sequence 384: scripts/run_squad.sh default seq_length (line 23). The
    # tables' "Weak scaling" columns are swapped on the V100 tables: the
    # throughputs are used.
    Row(id='tf-squad-dgx1-16g-fp32',
        citation=_DLE + 'TensorFlow/LanguageModeling/BERT/README.md, '
        '"Fine-tuning training performance for SQuAD v1.1 on DGX-1 16GB"',
        **_SQUAD, batch=2, precision='fp32', **_DGX1_V100, **_TF_HOROVOD,
        base_gpus=1, base_throughput=7.36, gpus=8, throughput=52.39,
        efficiency=0.890,  # 52.39 / (8 * 7.36) = 0.8898
        base_step_time=0.2717,  # 2 / 7.36
        ladder=((1, 7.36), (4, 26.64), (8, 52.39)),
        small_gpus=4, small_efficiency=0.905),  # 26.64 / (4 * 7.36)
    Row(id='tf-squad-dgx1-16g-mixed',
        citation=_DLE + 'TensorFlow/LanguageModeling/BERT/README.md, '
        '"Fine-tuning training performance for SQuAD v1.1 on DGX-1 16GB"',
        **_SQUAD, batch=4, precision='mixed', **_DGX1_V100, **_TF_HOROVOD,
        base_gpus=1, base_throughput=29.74, gpus=8, throughput=189.77,
        efficiency=0.798,  # 189.77 / (8 * 29.74) = 0.7976
        base_step_time=0.1345,  # 4 / 29.74
        ladder=((1, 29.74), (4, 97.28), (8, 189.77)),
        small_gpus=4, small_efficiency=0.818),  # 97.28 / (4 * 29.74)
    Row(id='tf-squad-dgx1-32g-fp32',
        citation=_DLE + 'TensorFlow/LanguageModeling/BERT/README.md, '
        '"Fine-tuning training performance for SQuAD v1.1 on DGX-1 32GB"',
        **_SQUAD, batch=10, precision='fp32', **_DGX1_V100, **_TF_HOROVOD,
        base_gpus=1, base_throughput=10.42, gpus=8, throughput=79.37,
        efficiency=0.952,  # 79.37 / (8 * 10.42) = 0.9521
        base_step_time=0.9597,  # 10 / 10.42
        ladder=((1, 10.42), (4, 39.77), (8, 79.37)),
        small_gpus=4, small_efficiency=0.954),  # 39.77 / (4 * 10.42)
    Row(id='tf-squad-dgx1-32g-mixed',
        citation=_DLE + 'TensorFlow/LanguageModeling/BERT/README.md, '
        '"Fine-tuning training performance for SQuAD v1.1 on DGX-1 32GB"',
        **_SQUAD, batch=24, precision='mixed', **_DGX1_V100, **_TF_HOROVOD,
        base_gpus=1, base_throughput=51.02, gpus=8, throughput=314.6,
        efficiency=0.771,  # 314.6 / (8 * 51.02) = 0.7708
        base_step_time=0.4704,  # 24 / 51.02
        ladder=((1, 51.02), (4, 181.37), (8, 314.6)),
        small_gpus=4, small_efficiency=0.889),  # 181.37 / (4 * 51.02)
    Row(id='tf-squad-dgx2-fp32',
        citation=_DLE + 'TensorFlow/LanguageModeling/BERT/README.md, '
        '"Fine-tuning training performance for SQuAD v1.1 on DGX-2 32GB"',
        **_SQUAD, batch=10, precision='fp32', **_DGX2, **_TF_HOROVOD,
        base_gpus=1, base_throughput=11.15, gpus=16, throughput=156.29,
        efficiency=0.876,  # 156.29 / (16 * 11.15) = 0.8761
        base_step_time=0.8969,  # 10 / 11.15
        ladder=((1, 11.15), (4, 42.91), (8, 85.08), (16, 156.29)),
        small_gpus=4, small_efficiency=0.962),  # 42.91 / (4 * 11.15)
    Row(id='tf-squad-dgx2-mixed',
        citation=_DLE + 'TensorFlow/LanguageModeling/BERT/README.md, '
        '"Fine-tuning training performance for SQuAD v1.1 on DGX-2 32GB"',
        **_SQUAD, batch=24, precision='mixed', **_DGX2, **_TF_HOROVOD,
        base_gpus=1, base_throughput=55.28, gpus=16, throughput=683.37,
        efficiency=0.773,  # 683.37 / (16 * 55.28) = 0.7726
        base_step_time=0.4342,  # 24 / 55.28
        ladder=((1, 55.28), (4, 199.53), (8, 341.55), (16, 683.37)),
        small_gpus=4, small_efficiency=0.902),  # 199.53 / (4 * 55.28)
    Row(id='tf-squad-a100-tf32',
        citation=_DLE + 'TensorFlow/LanguageModeling/BERT/README.md, '
        '"Fine-tuning training performance for SQuAD v1.1 on DGX A100 '
        '40GB"',
        **_SQUAD, batch=16, precision='tf32', **_DGXA100, **_TF_HOROVOD,
        base_gpus=1, base_throughput=61.364, gpus=8, throughput=440.47,
        efficiency=0.897,  # 440.47 / (8 * 61.364) = 0.8972
        base_step_time=0.2607,  # 16 / 61.364
        ladder=((1, 61.364), (4, 223.187), (8, 440.47)),
        small_gpus=4, small_efficiency=0.909,  # 223.187 / (4 * 61.364)
        notes='A100 40GB'),
    Row(id='tf-squad-a100-mixed',
        citation=_DLE + 'TensorFlow/LanguageModeling/BERT/README.md, '
        '"Fine-tuning training performance for SQuAD v1.1 on DGX A100 '
        '40GB"',
        **_SQUAD, batch=32, precision='mixed', **_DGXA100, **_TF_HOROVOD,
        base_gpus=1, base_throughput=102.26, gpus=8, throughput=767.071,
        efficiency=0.938,  # 767.071 / (8 * 102.26) = 0.9376
        base_step_time=0.3129,  # 32 / 102.26
        ladder=((1, 102.26), (4, 366.353), (8, 767.071)),
        small_gpus=4, small_efficiency=0.896,  # 366.353 / (4 * 102.26)
        notes='A100 40GB'),

    # -- A9: PyTorch BERT-large SQuAD fine-tuning, apex DDP (run_squad.py
    # lines 993, 998), one server (pytorch:21.11-py3); --max_seq_length=384
    # (scripts/run_squad.sh line 87); batch per GPU in the table.
    Row(id='pyt-squad-dgx1-fp32',
        citation=_DLE + 'PyTorch/LanguageModeling/BERT/README.md, '
        '"Fine-tuning NVIDIA DGX-1 With 32G", SQuAD',
        **_SQUAD, batch=8, precision='fp32', **_DGX1_V100,
        framework='pytorch', allreduce='ddp', knobs=(('ddp', 'apex'),),
        base_gpus=1, base_throughput=12, gpus=8, throughput=85.5,
        efficiency=0.891,  # 85.5 / (8 * 12) = 0.8906
        base_step_time=0.6667,  # 8 / 12
        ladder=((1, 12), (8, 85.5)), notes='V100 32GB'),
    Row(id='pyt-squad-dgx1-mixed',
        citation=_DLE + 'PyTorch/LanguageModeling/BERT/README.md, '
        '"Fine-tuning NVIDIA DGX-1 With 32G", SQuAD',
        **_SQUAD, batch=16, precision='mixed', **_DGX1_V100,
        framework='pytorch', allreduce='ddp', knobs=(('ddp', 'apex'),),
        base_gpus=1, base_throughput=52, gpus=8, throughput=382,
        efficiency=0.918,  # 382 / (8 * 52) = 0.9183
        base_step_time=0.3077,  # 16 / 52
        ladder=((1, 52), (8, 382)), notes='V100 32GB'),
    Row(id='pyt-squad-a100-tf32',
        citation=_DLE + 'PyTorch/LanguageModeling/BERT/README.md, '
        '"Fine-tuning NVIDIA DGX A100 (8x A100 80GB)", SQuAD',
        **_SQUAD, batch=32, precision='tf32', **_DGXA100,
        framework='pytorch', allreduce='ddp', knobs=(('ddp', 'apex'),),
        base_gpus=1, base_throughput=61.5, gpus=8, throughput=469.8,
        efficiency=0.955,  # 469.8 / (8 * 61.5) = 0.9549
        base_step_time=0.5203,  # 32 / 61.5
        ladder=((1, 61.5), (8, 469.8))),
    Row(id='pyt-squad-a100-mixed',
        citation=_DLE + 'PyTorch/LanguageModeling/BERT/README.md, '
        '"Fine-tuning NVIDIA DGX A100 (8x A100 80GB)", SQuAD',
        **_SQUAD, batch=32, precision='mixed', **_DGXA100,
        framework='pytorch', allreduce='ddp', knobs=(('ddp', 'apex'),),
        base_gpus=1, base_throughput=110.5, gpus=8, throughput=846.7,
        efficiency=0.958,  # 846.7 / (8 * 110.5) = 0.9578
        base_step_time=0.2896,  # 32 / 110.5
        ladder=((1, 110.5), (8, 846.7))),

    # -- A10: TF1 BERT-large pre-training (LAMB), Horovod, 1-32 DGX A100
    # 40GB servers (20.06-py3); the baseline is one server (8 GPUs). The
    # table prints one accumulation count per precision and node count;
    # at seq 512 the global batch is 32768 at 1 node and 65536 (mixed) at
    # 4+ (as printed).
    Row(id='tf-bert128-a100-nodes-tf32',
        citation=_DLE + 'TensorFlow/LanguageModeling/BERT/README.md, '
        '"Pre-training training performance: multi-node on DGX A100 40GB"',
        **_PRETRAIN, sequence=128, batch=64, precision='tf32',
        **_DGXA100_NODES, **_TF_HOROVOD,
        base_gpus=8, base_throughput=1889.71, gpus=256, throughput=53585.82,
        efficiency=0.886,  # 53585.82 / (32 * 1889.71) = 0.8861
        base_step_time=0.2709,  # 64 * 8 / 1889.71, one micro-batch
        ladder=((8, 1889.71), (32, 7532.00), (128, 28605.62),
                (256, 53585.82)),
        small_gpus=32, small_efficiency=0.996,  # 7532 / (4 * 1889.71)
        accumulation=((8, 128), (32, 32), (128, 8), (256, 4))),
    Row(id='tf-bert128-a100-nodes-mixed',
        citation=_DLE + 'TensorFlow/LanguageModeling/BERT/README.md, '
        '"Pre-training training performance: multi-node on DGX A100 40GB"',
        **_PRETRAIN, sequence=128, batch=64, precision='mixed',
        **_DGXA100_NODES, **_TF_HOROVOD,
        base_gpus=8, base_throughput=2871.89, gpus=256, throughput=77479.87,
        efficiency=0.843,  # 77479.87 / (32 * 2871.89) = 0.8431
        base_step_time=0.1783,  # 64 * 8 / 2871.89
        ladder=((8, 2871.89), (32, 11159), (128, 41144), (256, 77479.87)),
        small_gpus=32, small_efficiency=0.971,  # 11159 / (4 * 2871.89)
        accumulation=((8, 128), (32, 32), (128, 8), (256, 4))),
    Row(id='tf-bert512-a100-nodes-tf32',
        citation=_DLE + 'TensorFlow/LanguageModeling/BERT/README.md, '
        '"Pre-training training performance: multi-node on DGX A100 40GB"',
        **_PRETRAIN, sequence=512, batch=8, precision='tf32',
        **_DGXA100_NODES, **_TF_HOROVOD,
        base_gpus=8, base_throughput=316.51, gpus=256, throughput=9463.80,
        efficiency=0.934,  # 9463.80 / (32 * 316.51) = 0.9344
        base_step_time=0.2022,  # 8 * 8 / 316.51
        ladder=((8, 316.51), (32, 1268.43), (128, 4903.39),
                (256, 9463.80)),
        small_gpus=32, small_efficiency=1.002,  # 1268.43 / (4 * 316.51)
        accumulation=((8, 512), (32, 128), (128, 32), (256, 16)),
        notes='global batch 32768 at every N by batch * accumulation * N'),
    Row(id='tf-bert512-a100-nodes-mixed',
        citation=_DLE + 'TensorFlow/LanguageModeling/BERT/README.md, '
        '"Pre-training training performance: multi-node on DGX A100 40GB"',
        **_PRETRAIN, sequence=512, batch=16, precision='mixed',
        **_DGXA100_NODES, **_TF_HOROVOD,
        base_gpus=8, base_throughput=572.112, gpus=256, throughput=16705,
        efficiency=0.912,  # 16705 / (32 * 572.112) = 0.9125
        base_step_time=0.2237,  # 16 * 8 / 572.112
        ladder=((8, 572.112), (32, 2197.44), (128, 8723.1), (256, 16705)),
        small_gpus=32, small_efficiency=0.960,  # 2197.44 / (4 * 572.112)
        accumulation=((8, 256), (32, 128), (128, 32), (256, 16)),
        notes='global batch printed 32768 at 1 node, 65536 at 4+ nodes'),

    # -- A11: PyTorch BERT-large pre-training (LAMB), DDP with
    # bucket_cap_mb = the device's total memory (run_pretraining.py line
    # 457: one bucket), all-reduce after accumulation (run_pretraining.sh
    # defaults allreduce_post_accumulation and _fp16 true), 1-32 DGX A100
    # 80GB servers (pytorch:21.11-py3); baseline one server. Accumulation
    # steps as printed (the table's "TF32 and FP16" column).
    Row(id='pyt-bert128-a100-nodes-tf32',
        citation=_DLE + 'PyTorch/LanguageModeling/BERT/README.md, '
        '"Pre-training NVIDIA DGX A100 (8x A100 80GB) Multi-node Scaling"',
        **_PRETRAIN, sequence=128, batch=126, precision='tf32',
        **_DGXA100_NODES, **_PYT_DDP,
        knobs=(('bucket_cap_mb', 'device total memory (one bucket)'),
               ('allreduce_post_accumulation', 'script default true'),
               ('allreduce_post_accumulation_fp16', 'script default true')),
        base_gpus=8, base_throughput=2486, gpus=256, throughput=75706,
        efficiency=0.952,  # 75706 / (32 * 2486) = 0.9517
        base_step_time=0.4055,  # 126 * 8 / 2486
        ladder=((8, 2486), (16, 4979), (32, 9859), (64, 19815),
                (128, 38866), (256, 75706)),
        small_gpus=16, small_efficiency=1.001,  # 4979 / (2 * 2486)
        accumulation=((8, 64), (16, 32), (32, 16), (64, 8), (128, 4),
                      (256, 2)),
        notes='batch 126 as printed (accumulated batch 8192 = 64 x 128)'),
    Row(id='pyt-bert128-a100-nodes-mixed',
        citation=_DLE + 'PyTorch/LanguageModeling/BERT/README.md, '
        '"Pre-training NVIDIA DGX A100 (8x A100 80GB) Multi-node Scaling"',
        **_PRETRAIN, sequence=128, batch=256, precision='mixed',
        **_DGXA100_NODES, **_PYT_DDP,
        knobs=(('bucket_cap_mb', 'device total memory (one bucket)'),
               ('allreduce_post_accumulation', 'script default true'),
               ('allreduce_post_accumulation_fp16', 'script default true')),
        base_gpus=8, base_throughput=4553, gpus=256, throughput=138294,
        efficiency=0.949,  # 138294 / (32 * 4553) = 0.9492
        base_step_time=0.4498,  # 256 * 8 / 4553
        ladder=((8, 4553), (16, 9191), (32, 18119), (64, 35774),
                (128, 70555), (256, 138294)),
        small_gpus=16, small_efficiency=1.009,  # 9191 / (2 * 4553)
        accumulation=((8, 32), (16, 16), (32, 18), (64, 4), (128, 2),
                      (256, 1)),
        notes='accumulation at 4 nodes printed "16 and 18" (8 by the '
              'accumulated batch 2048 / 256)'),
    Row(id='pyt-bert512-a100-nodes-tf32',
        citation=_DLE + 'PyTorch/LanguageModeling/BERT/README.md, '
        '"Pre-training NVIDIA DGX A100 (8x A100 80GB) Multi-node Scaling"',
        **_PRETRAIN, sequence=512, batch=16, precision='tf32',
        **_DGXA100_NODES, **_PYT_DDP,
        knobs=(('bucket_cap_mb', 'device total memory (one bucket)'),
               ('allreduce_post_accumulation', 'script default true'),
               ('allreduce_post_accumulation_fp16', 'script default true')),
        base_gpus=8, base_throughput=854, gpus=256, throughput=21298,
        efficiency=0.779,  # 21298 / (32 * 854) = 0.7793
        base_step_time=0.1499,  # 16 * 8 / 854
        ladder=((8, 854), (16, 1684), (32, 3293), (64, 6515),
                (128, 12131), (256, 21298)),
        small_gpus=16, small_efficiency=0.986,  # 1684 / (2 * 854)
        accumulation=((8, 256), (16, 128), (32, 64), (64, 32), (128, 16),
                      (256, 8))),
    Row(id='pyt-bert512-a100-nodes-mixed',
        citation=_DLE + 'PyTorch/LanguageModeling/BERT/README.md, '
        '"Pre-training NVIDIA DGX A100 (8x A100 80GB) Multi-node Scaling"',
        **_PRETRAIN, sequence=512, batch=32, precision='mixed',
        **_DGXA100_NODES, **_PYT_DDP,
        knobs=(('bucket_cap_mb', 'device total memory (one bucket)'),
               ('allreduce_post_accumulation', 'script default true'),
               ('allreduce_post_accumulation_fp16', 'script default true')),
        base_gpus=8, base_throughput=1648, gpus=256, throughput=49663,
        efficiency=0.942,  # 49663 / (32 * 1648) = 0.9417
        base_step_time=0.1553,  # 32 * 8 / 1648
        ladder=((8, 1648), (16, 3291), (32, 6464), (64, 13005),
                (128, 25570), (256, 49663)),
        small_gpus=16, small_efficiency=0.998,  # 3291 / (2 * 1648)
        accumulation=((8, 128), (16, 64), (32, 32), (64, 16), (128, 8),
                      (256, 4))),

    # -- A13: PyTorch Transformer-big (transformer_wmt_en_de_big_t2t,
    # WMT14 en-de), apex DDP, one server (pytorch-22.06-py3, "averaged over
    # an entire training epoch"). Token batch: --max-tokens ${BS} of
    # scripts/run_<platform>_<precision>.sh (DGX-1 AMP 5120, FP32 2560;
    # DGX-2 AMP 10240, FP32 5120; DGX A100 10240 both), which match the
    # tables' "5120/2560" and "10240/5120".
    Row(id='pyt-transformer-dgx2-fp32',
        citation=_DLE + 'PyTorch/Translation/Transformer/README.md, '
        '"Training performance: NVIDIA DGX-2 (16x V100 32GB)"',
        **_TRANSFORMER, batch=5120, precision='fp32', **_DGX2,
        framework='pytorch', allreduce='ddp', knobs=(('ddp', 'apex'),),
        base_gpus=1, base_throughput=9827, gpus=16, throughput=136253,
        efficiency=0.867,  # 136253 / (16 * 9827) = 0.8666
        base_step_time=0.5210,  # 5120 / 9827
        ladder=((1, 9827), (4, 35216), (8, 68929), (16, 136253)),
        small_gpus=4, small_efficiency=0.896,  # 35216 / (4 * 9827)
        notes='variable-length batches: part of the loss may be imbalance'),
    Row(id='pyt-transformer-dgx2-mixed',
        citation=_DLE + 'PyTorch/Translation/Transformer/README.md, '
        '"Training performance: NVIDIA DGX-2 (16x V100 32GB)"',
        **_TRANSFORMER, batch=10240, precision='mixed', **_DGX2,
        framework='pytorch', allreduce='ddp', knobs=(('ddp', 'apex'),),
        base_gpus=1, base_throughput=39911, gpus=16, throughput=517227,
        efficiency=0.810,  # 517227 / (16 * 39911) = 0.8100
        base_step_time=0.2566,  # 10240 / 39911
        ladder=((1, 39911), (4, 137703), (8, 267815), (16, 517227)),
        small_gpus=4, small_efficiency=0.863,  # 137703 / (4 * 39911)
        notes='variable-length batches: part of the loss may be imbalance'),
    Row(id='pyt-transformer-dgx1-fp32',
        citation=_DLE + 'PyTorch/Translation/Transformer/README.md, '
        '"Training performance: NVIDIA DGX-1 (8x V100 16GB)"',
        **_TRANSFORMER, batch=2560, precision='fp32', **_DGX1_V100,
        framework='pytorch', allreduce='ddp', knobs=(('ddp', 'apex'),),
        base_gpus=1, base_throughput=8742, gpus=8, throughput=59316,
        efficiency=0.848,  # 59316 / (8 * 8742) = 0.8481
        base_step_time=0.2928,  # 2560 / 8742
        ladder=((1, 8742), (4, 30204), (8, 59316)),
        small_gpus=4, small_efficiency=0.864,  # 30204 / (4 * 8742)
        notes='variable-length batches: part of the loss may be imbalance'),
    Row(id='pyt-transformer-dgx1-mixed',
        citation=_DLE + 'PyTorch/Translation/Transformer/README.md, '
        '"Training performance: NVIDIA DGX-1 (8x V100 16GB)"',
        **_TRANSFORMER, batch=5120, precision='mixed', **_DGX1_V100,
        framework='pytorch', allreduce='ddp', knobs=(('ddp', 'apex'),),
        base_gpus=1, base_throughput=32942, gpus=8, throughput=214656,
        efficiency=0.815,  # 214656 / (8 * 32942) = 0.8145
        base_step_time=0.1554,  # 5120 / 32942
        ladder=((1, 32942), (4, 109726), (8, 214656)),
        small_gpus=4, small_efficiency=0.833,  # 109726 / (4 * 32942)
        notes='variable-length batches: part of the loss may be imbalance'),
    Row(id='pyt-transformer-a100-tf32',
        citation=_DLE + 'PyTorch/Translation/Transformer/README.md, '
        '"Training performance: NVIDIA DGX A100 (8x A100 40GB)"',
        **_TRANSFORMER, batch=10240, precision='tf32', **_DGXA100,
        framework='pytorch', allreduce='ddp', knobs=(('ddp', 'apex'),),
        base_gpus=1, base_throughput=51057, gpus=8, throughput=347936,
        efficiency=0.852,  # 347936 / (8 * 51057) = 0.8518
        base_step_time=0.2006,  # 10240 / 51057
        ladder=((1, 51057), (4, 179245), (8, 347936)),
        small_gpus=4, small_efficiency=0.878,  # 179245 / (4 * 51057)
        notes='A100 40GB; variable-length batches'),
    Row(id='pyt-transformer-a100-mixed',
        citation=_DLE + 'PyTorch/Translation/Transformer/README.md, '
        '"Training performance: NVIDIA DGX A100 (8x A100 40GB)"',
        **_TRANSFORMER, batch=10240, precision='mixed', **_DGXA100,
        framework='pytorch', allreduce='ddp', knobs=(('ddp', 'apex'),),
        base_gpus=1, base_throughput=82059, gpus=8, throughput=551599,
        efficiency=0.840,  # 551599 / (8 * 82059) = 0.8402
        base_step_time=0.1248,  # 10240 / 82059
        ladder=((1, 82059), (4, 286081), (8, 551599)),
        small_gpus=4, small_efficiency=0.872,  # 286081 / (4 * 82059)
        notes='A100 40GB; variable-length batches'),

    # -- A14 and the page's K80 servers: tf_cnn_benchmarks, fp32 (CUDA 8,
    # cuDNN 5.1), sgd, synthetic data, "Training synthetic data" tables;
    # batch per GPU and variable_update from each section's options
    # tables.
    Row(id='tfbench-dgx1-rn50',
        citation=_TF_PAGE + '"Details for NVIDIA DGX-1 (NVIDIA Tesla '
        'P100)", Training synthetic data',
        **_RN50, batch=64, precision='fp32', **_DGX1_P100,
        framework='tensorflow1', allreduce='parameter_server',
        knobs=(('local_parameter_device', 'cpu'),),
        base_gpus=1, base_throughput=219, gpus=8, throughput=1734,
        efficiency=0.990,  # 1734 / (8 * 219) = 0.9897
        base_step_time=0.2922,  # 64 / 219
        ladder=((1, 219), (2, 422), (4, 852), (8, 1734)),
        small_gpus=2, small_efficiency=0.963,  # 422 / (2 * 219) = 0.9635
        data='synthetic'),
    Row(id='tfbench-dgx1-rn152',
        citation=_TF_PAGE + '"Details for NVIDIA DGX-1 (NVIDIA Tesla '
        'P100)", Training synthetic data',
        model='ResNet152', batch_unit='images', unit='images/s', batch=64,
        precision='fp32', **_DGX1_P100,
        framework='tensorflow1', allreduce='parameter_server',
        knobs=(('local_parameter_device', 'cpu'),),
        base_gpus=1, base_throughput=91.8, gpus=8, throughput=716,
        efficiency=0.975,  # 716 / (8 * 91.8) = 0.9749
        base_step_time=0.6972,  # 64 / 91.8
        ladder=((1, 91.8), (2, 181), (4, 356), (8, 716)),
        small_gpus=2, small_efficiency=0.986,  # 181 / (2 * 91.8) = 0.9858
        data='synthetic'),
    Row(id='tfbench-dgx1-vgg16',
        citation=_TF_PAGE + '"Details for NVIDIA DGX-1 (NVIDIA Tesla '
        'P100)", Training synthetic data',
        model='VGG16', batch_unit='images', unit='images/s', batch=64,
        precision='fp32', **_DGX1_P100,
        framework='tensorflow1', allreduce='replicated',
        knobs=(('nccl', True),),
        base_gpus=1, base_throughput=154, gpus=8, throughput=1081,
        efficiency=0.877,  # 1081 / (8 * 154) = 0.8774
        base_step_time=0.4156,  # 64 / 154
        ladder=((1, 154), (2, 295), (4, 584), (8, 1081)),
        small_gpus=2, small_efficiency=0.958,  # 295 / (2 * 154) = 0.9578
        data='synthetic'),
    Row(id='tfbench-gce-rn50',
        citation=_TF_PAGE + '"Details for Google Compute Engine (NVIDIA '
        'Tesla K80)", Training synthetic data',
        **_RN50, batch=64, precision='fp32', **_K80_SERVER,
        framework='tensorflow1', allreduce='parameter_server',
        knobs=(('local_parameter_device', 'cpu'),),
        base_gpus=1, base_throughput=51.9, gpus=8, throughput=387,
        efficiency=0.932,  # 387 / (8 * 51.9) = 0.9321
        base_step_time=1.2331,  # 64 / 51.9
        ladder=((1, 51.9), (2, 99.0), (4, 195), (8, 387)),
        small_gpus=2, small_efficiency=0.954,  # 99.0 / (2 * 51.9) = 0.9538
        data='synthetic', notes='n1-standard-32-k80x8'),
    Row(id='tfbench-gce-rn152',
        citation=_TF_PAGE + '"Details for Google Compute Engine (NVIDIA '
        'Tesla K80)", Training synthetic data',
        model='ResNet152', batch_unit='images', unit='images/s', batch=32,
        precision='fp32', **_K80_SERVER,
        framework='tensorflow1', allreduce='parameter_server',
        knobs=(('local_parameter_device', 'cpu'),),
        base_gpus=1, base_throughput=20.0, gpus=8, throughput=148,
        efficiency=0.925,  # 148 / (8 * 20.0) = 0.9250
        base_step_time=1.6000,  # 32 / 20.0
        ladder=((1, 20.0), (2, 38.2), (4, 75.8), (8, 148)),
        small_gpus=2, small_efficiency=0.955,  # 38.2 / (2 * 20.0) = 0.955
        data='synthetic', notes='n1-standard-32-k80x8'),
    Row(id='tfbench-gce-vgg16',
        citation=_TF_PAGE + '"Details for Google Compute Engine (NVIDIA '
        'Tesla K80)", Training synthetic data',
        model='VGG16', batch_unit='images', unit='images/s', batch=32,
        precision='fp32', **_K80_SERVER,
        framework='tensorflow1', allreduce='parameter_server',
        knobs=(('local_parameter_device', 'cpu'),),
        base_gpus=1, base_throughput=35.4, gpus=8, throughput=234,
        efficiency=0.826,  # 234 / (8 * 35.4) = 0.8263
        base_step_time=0.9040,  # 32 / 35.4
        ladder=((1, 35.4), (2, 64.8), (4, 120), (8, 234)),
        small_gpus=2, small_efficiency=0.915,  # 64.8 / (2 * 35.4) = 0.9153
        data='synthetic', notes='n1-standard-32-k80x8'),
    Row(id='tfbench-aws-rn50',
        citation=_TF_PAGE + '"Details for Amazon EC2 (NVIDIA Tesla K80)", '
        'Training synthetic data',
        **_RN50, batch=64, precision='fp32', **_K80_SERVER,
        framework='tensorflow1', allreduce='replicated',
        knobs=(('nccl', False), ('local_parameter_device', 'gpu')),
        base_gpus=1, base_throughput=51.5, gpus=8, throughput=384,
        efficiency=0.932,  # 384 / (8 * 51.5) = 0.9320
        base_step_time=1.2427,  # 64 / 51.5
        ladder=((1, 51.5), (2, 98.0), (4, 195), (8, 384)),
        small_gpus=2, small_efficiency=0.951,  # 98.0 / (2 * 51.5) = 0.9515
        data='synthetic', notes='p2.8xlarge'),
    Row(id='tfbench-aws-rn152',
        citation=_TF_PAGE + '"Details for Amazon EC2 (NVIDIA Tesla K80)", '
        'Training synthetic data',
        model='ResNet152', batch_unit='images', unit='images/s', batch=32,
        precision='fp32', **_K80_SERVER,
        framework='tensorflow1', allreduce='replicated',
        knobs=(('nccl', False), ('local_parameter_device', 'gpu')),
        base_gpus=1, base_throughput=19.7, gpus=8, throughput=149,
        efficiency=0.945,  # 149 / (8 * 19.7) = 0.9454
        base_step_time=1.6244,  # 32 / 19.7
        ladder=((1, 19.7), (2, 37.6), (4, 74.9), (8, 149)),
        small_gpus=2, small_efficiency=0.954,  # 37.6 / (2 * 19.7) = 0.9543
        data='synthetic', notes='p2.8xlarge'),
    Row(id='tfbench-aws-vgg16',
        citation=_TF_PAGE + '"Details for Amazon EC2 (NVIDIA Tesla K80)", '
        'Training synthetic data',
        model='VGG16', batch_unit='images', unit='images/s', batch=32,
        precision='fp32', **_K80_SERVER,
        framework='tensorflow1', allreduce='parameter_server',
        knobs=(('local_parameter_device', 'gpu'),),
        base_gpus=1, base_throughput=36.3, gpus=8, throughput=260,
        efficiency=0.895,  # 260 / (8 * 36.3) = 0.8953
        base_step_time=0.8815,  # 32 / 36.3
        ladder=((1, 36.3), (2, 69.4), (4, 141), (8, 260)),
        small_gpus=2, small_efficiency=0.956,  # 69.4 / (2 * 36.3) = 0.9559
        data='synthetic', notes='p2.8xlarge'),

    # -- A15: the page's "Amazon EC2 Distributed (NVIDIA Tesla K80)":
    # p2.8xlarge servers of 8 K80 GPUs, variable_update
    # distributed_replicated, cross_replica_sync; the workers' servers also
    # ran the parameter servers, as many as workers except ResNet-152 (8
    # instances / 4 parameter servers). Baseline 1 GPU (the table's first
    # row).
    Row(id='tfbench-awsdist-rn50',
        citation=_TF_PAGE + '"Details for Amazon EC2 Distributed (NVIDIA '
        'Tesla K80)", Training synthetic data',
        **_RN50, batch=64, precision='fp32', **_K80_DISTRIBUTED,
        framework='tensorflow1', allreduce='parameter_server',
        knobs=(('variable_update', 'distributed_replicated'),
               ('parameter_servers_at_64', 8)),
        base_gpus=1, base_throughput=52.4, gpus=64, throughput=2744,
        efficiency=0.818,  # 2744 / (64 * 52.4) = 0.8182
        base_step_time=1.2214,  # 64 / 52.4
        ladder=((1, 52.4), (8, 378), (16, 751), (32, 1388), (64, 2744)),
        small_gpus=16, small_efficiency=0.896,  # 751 / (16 * 52.4)
        data='synthetic'),
    Row(id='tfbench-awsdist-rn152',
        citation=_TF_PAGE + '"Details for Amazon EC2 Distributed (NVIDIA '
        'Tesla K80)", Training synthetic data',
        model='ResNet152', batch_unit='images', unit='images/s', batch=32,
        precision='fp32', **_K80_DISTRIBUTED,
        framework='tensorflow1', allreduce='parameter_server',
        knobs=(('variable_update', 'distributed_replicated'),
               ('parameter_servers_at_64', 4)),
        base_gpus=1, base_throughput=19.4, gpus=64, throughput=981,
        efficiency=0.790,  # 981 / (64 * 19.4) = 0.7901
        base_step_time=1.6495,  # 32 / 19.4
        ladder=((1, 19.4), (8, 146), (16, 291), (32, 565), (64, 981)),
        small_gpus=16, small_efficiency=0.938,  # 291 / (16 * 19.4)
        data='synthetic'),

    # -- A16: Chainer blog 2017-02-08 (translation of PFN's 2017-02
    # benchmark post), appendix: 32 nodes of 4 GTX TITAN X (Maxwell),
    # InfiniBand FDR 4X, ResNet-50 224x224, batch 32 per GPU, ChainerMN
    # (NCCL in a node, MPI between nodes). Only speedups are published:
    # 2-64 read from the figure by the research notes, 128 from the text
    # ("accelerated for 100 times using 128 GPUs", a training-time
    # speedup).
    Row(id='chainermn-titanx-128',
        citation='Chainer blog 2017-02-08, "Performance of Distributed Deep '
        'Learning using ChainerMN" (chainer/chainer.org _posts/2017-02-08-'
        'Performance-of-Distributed-Deep-Learning-Using-ChainerMN.md), '
        'text and assets/dlsummit_01_throughput.png',
        **dict(_RN50, unit='speedup'), batch=32, precision='fp32',
        gpu='titanx-maxwell', gpus_per_node=4, intra_node='pcie3',
        intra_node_how='inferred', network='infiniband-fdr-4x',
        network_gbps=56.0, network_transport='rdma',
        network_how='type stated; 56 Gb/s and RDMA inferred from FDR 4X',
        framework='chainer', allreduce='chainermn',
        knobs=(('intra_node', 'nccl'), ('inter_node', 'mpi')),
        base_gpus=1, base_throughput=1.0, gpus=128, throughput=100.0,
        efficiency=0.781,  # 100 / 128 = 0.78125
        base_step_time=None,  # no images/s for 1 GPU in the post
        ladder=((1, 1.0), (2, 1.86), (4, 3.54), (8, 6.96), (16, 13.15),
                (32, 26.09), (64, 49.53), (128, 100.0)),
        throughput_how='figure (2-64), text (128)',
        small_gpus=8, small_efficiency=0.870,  # 6.96 / 8
        notes='the 128 figure is a training-time speedup at equal epochs'),

    # -- A17: ChainerMN v1.3 on AWS p3.16xlarge, up to 4 nodes of 8 V100,
    # "25 Gbps network", ResNet-50, batch 64, pure_nccl with double
    # buffering and FP16 all-reduce (FP32 compute). "the scaling efficiency
    # was 96% at 32GPUs when using 8GPUs as the base"; throughputs read
    # from the figure by the research notes.
    Row(id='chainermn-aws-v100-32',
        citation=_CHAINER_2018 + 'text and '
        'assets/chainermn_v1_3_aws_result.png',
        **_RN50, batch=64, precision='fp32', gpu='v100', gpus_per_node=8,
        intra_node='nvlink2-cube', intra_node_how='inferred',
        network='aws-25g', network_gbps=25.0, network_transport='tcp',
        network_how='25 Gbps stated; TCP inferred (p3.16xlarge has no EFA)',
        framework='chainer', allreduce='chainermn',
        knobs=(('communicator', 'pure_nccl'), ('double_buffering', True),
               ('allreduce_grad_dtype', 'float16')),
        base_gpus=8, base_throughput=2020, gpus=32, throughput=7740,
        efficiency=0.96,  # stated; 7740 / (4 * 2020) = 0.958
        efficiency_how='stated',
        base_step_time=0.2535,  # 64 * 8 / 2020
        ladder=((8, 2020), (16, 3810), (32, 7740)),
        throughput_how='figure',
        small_gpus=16, small_efficiency=0.943,  # 3810 / (2 * 2020)
        data='real', notes='double buffering: gradients one step stale'),

    # -- A18: the same post, MN-1 (4 nodes of 8 P100), InfiniBand FDR or
    # MN-1's 10 Gb Ethernet, plain ChainerMN (no double buffering, FP32
    # all-reduce); throughputs read from the figure by the research notes.
    # The post's table of 90-epoch times at 32 GPUs (IB 6.96 h, 10 GbE
    # 21.3 h) gives 6.96 / 21.3 = 0.327 for their throughput ratio.
    Row(id='chainermn-mn1-ib-32',
        citation=_CHAINER_2018 + 'assets/chainermn_v1_3_mn_1_result.png',
        **_RN50, batch=64, precision='fp32', gpu='p100', gpus_per_node=8,
        intra_node='not stated', intra_node_how='not stated',
        network='infiniband-fdr', network_gbps=56.0,
        network_transport='rdma',
        network_how='FDR stated; 56 Gb/s and RDMA inferred (a PFN post on '
                    'MN-1 gives two FDR links per node)',
        framework='chainer', allreduce='chainermn',
        knobs=(('communicator', 'pure_nccl'),),
        base_gpus=8, base_throughput=1270, gpus=32, throughput=5160,
        efficiency=1.016,  # 5160 / (4 * 1270) = 1.0157
        base_step_time=0.4031,  # 64 * 8 / 1270
        ladder=((8, 1270), (16, 2500), (32, 5160)),
        throughput_how='figure',
        small_gpus=16, small_efficiency=0.984,  # 2500 / (2 * 1270)
        data='real'),
    Row(id='chainermn-mn1-10gbe-32',
        citation=_CHAINER_2018 + 'assets/chainermn_v1_3_mn_1_result.png',
        **_RN50, batch=64, precision='fp32', gpu='p100', gpus_per_node=8,
        intra_node='not stated', intra_node_how='not stated',
        network='10gbe', network_gbps=10.0, network_transport='tcp',
        network_how='10 Gb Ethernet stated; TCP inferred',
        framework='chainer', allreduce='chainermn',
        knobs=(('communicator', 'pure_nccl'),),
        base_gpus=8, base_throughput=1310, gpus=32, throughput=1740,
        efficiency=0.332,  # 1740 / (4 * 1310) = 0.3321
        base_step_time=0.3908,  # 64 * 8 / 1310
        ladder=((8, 1310), (16, 900), (32, 1740)),
        throughput_how='figure',
        small_gpus=16, small_efficiency=0.344,  # 900 / (2 * 1310)
        data='real'),
]


#: Task B: nccl-tests all-reduce bus bandwidths (GB/s), from the issue
#: threads the research notes cite.
BUS_BANDWIDTHS = [
    BusBandwidth('b1-azure-tcp-25g', 'tcp', 25.0, 4, 2, 1.7,
                 '8 B - 2 GB sweep',
                 'NVIDIA/nccl-tests#83 (2021-05-11)',
                 'ring, Simple, IB disabled; "maxed out at 1.7GBps"; '
                 'NTTTCP measured 21 Gb/s bidirectional'),
    BusBandwidth('b2-tcp-100g', 'tcp', 100.0, 8, 4, (4.0, 6.0),
                 '8 MB - 128 MB', 'NVIDIA/nccl#450 (2021-01-05)',
                 '"between 4~6GB/s"; V100-32G'),
    BusBandwidth('b3-gcp-32g-1gpu-2nodes', 'tcp', 32.0, 1, 2,
                 (30.6 / 8, 31.4 / 8), '>= 32 MiB',
                 'NVIDIA/nccl#209 (2019-06-04)',
                 '30.6-31.4 Gbit/s; two nodes: trees can exceed line rate'),
    BusBandwidth('b3-gcp-32g-8gpu-2nodes', 'tcp', 32.0, 8, 2,
                 (14.5 / 8, 14.9 / 8), '>= 64 MiB',
                 'NVIDIA/nccl#209 (2019-06-04)',
                 '14.5-14.9 Gbit/s; CUDA_VISIBLE_DEVICES order not set'),
    BusBandwidth('b3-gcp-32g-1gpu-4nodes', 'tcp', 32.0, 1, 4,
                 (30.4 / 8, 30.8 / 8), '>= 128 MiB',
                 'NVIDIA/nccl#209 (2019-06-04)', '30.4-30.8 Gbit/s'),
    BusBandwidth('b3-gcp-32g-8gpu-4nodes', 'tcp', 32.0, 8, 4,
                 (22.2 / 8, 22.9 / 8), '>= 128 MiB',
                 'NVIDIA/nccl#209 (2019-06-04)',
                 '22.2-22.9 Gbit/s, NSOCKS 3, NTHREADS 4'),
    BusBandwidth('b4-aws-p3dn-tcp-100g', 'tcp', 100.0, 8, 2, 6.0,
                 '256 KB - 512 MB', 'NVIDIA/nccl#398 (2020-10-04)',
                 'ring (NCCL_TREE_THRESHOLD=0), NCCL 2.4.8; "around 6GB/s"'),
    BusBandwidth('b5-ib-edr-100g', 'rdma', 100.0, 8, 4, 12.2, 'large',
                 'NVIDIA/nccl-tests#29 (sjeaugey, 2019-12-06)',
                 '"12.2 GB/s (for a 100Gbps card) is as good as you can '
                 'get"; DGX-1 with 4 IB adapters: 48 GB/s'),
    BusBandwidth('b6-ib-hdr-200g', 'rdma', 200.0, None, None, 24.0,
                 'large', 'NVIDIA/nccl-tests#119 (sjeaugey, 2022-11-17)',
                 '"24GB/s is the peak performance per 200G NIC"'),
    BusBandwidth('b7-aws-efa-100g-ring', 'efa', 100.0, None, 2, 60.0 / 8,
                 '1 GB', 'NVIDIA/nccl-tests#22 (2019-06-17)',
                 'ring 60 Gb/s; tree on 2 nodes reported 125 Gb/s'),
    BusBandwidth('b8-h100-nvlink4', 'nvlink4', 450.0 * 8, 8, 1, 370.0,
                 '> 256 MB', 'NVIDIA/nccl-tests#212 (sjeaugey, 2024-05-06)',
                 'ring; "450GB/s is the line rate" (line_gbps = 450 GB/s '
                 'x 8); NVLink SHARP ~480 GB/s'),
    BusBandwidth('b9-a100-nvswitch', 'nvlink3', None, 8, 1, 200.0,
                 'up to 1 GB', 'NVIDIA/nccl-tests#149 (2023-06-27)',
                 'user measurement, HPE Apollo 6500; line rate not stated'),
    BusBandwidth('b11-a100-roce-8x100g', 'rdma', 800.0, 8, 2, 75.0, 'not '
                 'stated', 'NVIDIA/nccl#495 (2021-04)',
                 '"can reach 600Gbps" over 8 x 100 Gb RoCE'),
]


#: Task C1: variation between GPUs of one SKU. Sinha et al., "Not All GPUs
#: Are Created Equal", arXiv 2208.11035 v3, abstract (the body was not
#: read: no section or figure); how a variation is measured, from the
#: authors' artifact.
SPREAD = Spread(
    citation='Sinha et al., arXiv 2208.11035 v3, abstract; '
             'hal-uw/gpu_variability_sc22_artifact, '
             'plot_script/plot_aggregated.py',
    clusters=('Summit', 'Vortex', 'Frontera', 'Longhorn', 'Corona'),
    average=0.08, maximum=0.22, outlier=1.5,
    notes='the SC22 abstract gave 32 % (max 72 %) over 4 clusters; v3 '
          'replaces it; the artifact computes a percent variability as '
          '((Q3 + 1.5 IQR) - (Q1 - 1.5 IQR)) / median, the whiskers\' '
          'span, outliers beyond them')
