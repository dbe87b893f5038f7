"""The scaling report's predictions of the published rows of
``published_scaling_rows.py``: the inputs of each prediction, fixed by the
rules below from the row alone (never from its published efficiency).

* **Model**: the row's model, one training step at batch 1 under the hook
  (``chainer.links``' ``ResNet50Layers``, ``ResNet152Layers``,
  ``VGG16Layers`` at 224 x 224; BERT-large and Transformer-big built here
  from their papers at 8 tokens, :func:`bert_large` and
  :func:`transformer_big`): its calls split the step into forward and
  backward and say when each link's gradients are ready.
* **Step**: ``step_time`` is the row's ``base_step_time`` (the
  baseline's seconds per GPU and micro-batch), and ``accumulation`` the
  row's micro-batches per all-reduce at each N. A row with no baseline
  throughput takes the roofline time of the nearest device preset.  The
  device (for the roofline's split only): ``v100``, ``a100``, ``p100``;
  ``p100`` for a K80 and ``gtx1080ti`` for a Maxwell TITAN X, the
  nearest presets.
* **Gradients**: the parameters at 4 bytes (the paper's count for BERT
  and the Transformer), at 2 where the row states a float16 all-reduce.
* **Networks** (see :data:`INTRA`, :data:`INTER`): a single server
  all-reduces over its intra-node preset; servers over the row's network
  between nodes, ``gpus_per_node`` a node, the intra-node preset inside;
  PCI Express 4.0 inside an A100 PCIe server, and a DGX-2 cluster's
  network not stated is the DGX-2's own fabric, eight EDR ports a node.
* **Overlap**: DDP ``'ddp'`` (``'none'`` with apex's
  ``delay_allreduce``, which all-reduces after the backward); Horovod
  ``'horovod'`` (the row's cycle time where stated); ChainerMN
  ``'none'``, or double buffering where stated;
  TensorFlow's parameter servers and replicated variables (and TensorFlow
  2's MultiWorkerMirrored strategy, recorded as replicated) ``'none'``
  (the variables are updated once the backward is done); any row that
  accumulates gradients ``'none'`` (the all-reduce follows the last
  micro-batch).
* **Efficiency**: the report's efficiency at N over its efficiency at
  the baseline (the per-GPU throughput at N over the baseline's).
* **Anchored**: the same inputs, and ``measured`` the step the row's
  table gives at its small N; for a baseline of several GPUs, whose
  one-GPU step no source gives, the baseline's step too and no
  ``step_time`` (the report then fits the compute to the baseline).
"""

import warnings

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import ReportWarning

#: Intra-node interconnect of a row -> network preset.
INTRA = {'nvlink2-cube': 'nvlink-v100', 'nvswitch1': 'nvlink-v100',
         'nvswitch2': 'nvlink-a100', 'nvlink1-cube': 'nvlink-p100',
         'pcie3': 'pcie3-x16', 'pcie4': 'pcie4-x16',
         'not stated': 'pcie3-x16'}

#: (network, gpu) of a row -> network preset between nodes; a DGX A100
#: network not stated is the DGX A100's own fabric (its datasheet), a K80
#: cluster's is AWS p2.8xlarge's "10 Gigabit" (the instance table).
INTER = {('infiniband-fdr-4x', 'titanx-maxwell'): 'ib-fdr',
         ('infiniband-fdr', 'p100'): 'ib-fdr',
         ('aws-25g', 'v100'): 'eth-25g',
         ('10gbe', 'p100'): 'eth-10g',
         ('not stated', 'a100'): 'ib-hdr200x8',
         ('not stated', 'k80'): 'eth-10g',
         # the held-out rows (published_scaling_rows_held_out): DLPerf's
         # 100 Gb/s EDR, FlagPerf's 200 Gb/s InfiniBand as stated, and a
         # DGX-2 cluster's network not stated, the DGX-2's own fabric
         ('infiniband-edr', 'v100'): 'ib-edr',
         ('infiniband-edr-4x', 'v100'): 'ib-edr',
         ('infiniband', 'a100'): 'ib-hdr200',
         ('not stated', 'v100'): 'ib-edrx8'}

#: GPU of a row -> the device preset of the roofline's split.
DEVICE = {'v100': 'v100', 'a100': 'a100', 'p100': 'p100', 'k80': 'p100',
          'titanx-maxwell': 'gtx1080ti'}

_FP16_ALLREDUCE = (('allreduce_post_accumulation_fp16',
                    'script default true'),
                   ('allreduce_grad_dtype', 'float16'))


class _Block(chainer.Chain):
    """A Transformer layer: self-attention, with ``cross`` attention on
    a memory too, and a feed-forward layer, each with a layer norm."""

    def __init__(self, d, ffn, heads, cross=False):
        super(_Block, self).__init__()
        self.heads = heads
        with self.init_scope():
            self.qkv = L.Linear(d, 3 * d)
            self.out = L.Linear(d, d)
            self.norm1 = L.LayerNormalization(d)
            if cross:
                self.q2 = L.Linear(d, d)
                self.kv2 = L.Linear(d, 2 * d)
                self.out2 = L.Linear(d, d)
                self.norm2 = L.LayerNormalization(d)
            self.ff1 = L.Linear(d, ffn)
            self.ff2 = L.Linear(ffn, d)
            self.norm3 = L.LayerNormalization(d)

    def _attend(self, q, k, v, out):
        t, d = q.shape
        h = self.heads

        def split(x):
            return F.transpose(F.reshape(x, (-1, h, d // h)), (1, 0, 2))
        q, k, v = split(q), split(k), split(v)
        a = F.softmax(F.matmul(q, k, transb=True) / np.sqrt(d // h), axis=2)
        y = F.reshape(F.transpose(F.matmul(a, v), (1, 0, 2)), (t, d))
        return out(y)

    def __call__(self, x, memory=None):
        q, k, v = F.split_axis(self.qkv(x), 3, axis=1)
        x = self.norm1(x + self._attend(q, k, v, self.out))
        if memory is not None:
            k, v = F.split_axis(self.kv2(memory), 2, axis=1)
            x = self.norm2(x + self._attend(self.q2(x), k, v, self.out2))
        return self.norm3(x + self.ff2(F.relu(self.ff1(x))))


class _Transformer(chainer.Chain):
    def __init__(self, vocab, d, ffn, heads, encoders, decoders, positions):
        super(_Transformer, self).__init__()
        with self.init_scope():
            self.embed = L.EmbedID(vocab, d)
            if positions:
                self.position = L.EmbedID(positions, d)
            self.encoders = chainer.ChainList(*[
                _Block(d, ffn, heads) for _ in range(encoders)])
            self.decoders = chainer.ChainList(*[
                _Block(d, ffn, heads, cross=True) for _ in range(decoders)])
            self.head = L.Linear(d, vocab)

    def __call__(self, ids):
        x = self.embed(ids)
        if hasattr(self, 'position'):
            x = x + self.position(np.arange(len(ids), dtype=np.int32))
        for block in self.encoders:
            x = block(x)
        memory, y = x, x
        for block in self.decoders:
            y = block(y, memory)
        return self.head(y)


def bert_large():
    """BERT-large (Devlin et al. 2019, section 3.1: 24 layers, hidden
    1024, 16 heads, feed-forward 4096; WordPiece vocabulary 30522 and 512
    positions), its masked-token head tied to nothing: 334M parameters
    (the paper's rounded figure, 340M, is the gradients' count)."""
    return _Transformer(30522, 1024, 4096, 16, 24, 0, 512)


def transformer_big():
    """Transformer-big (Vaswani et al. 2017, Table 3: 6 + 6 layers,
    d_model 1024, 16 heads, d_ff 4096), with a vocabulary of 32768 (WMT
    en-de's shared BPE, about 37000 in the paper's section 5.1, rounded
    down); the paper's 213M is the gradients' count."""
    return _Transformer(32768, 1024, 4096, 16, 6, 6, 0)


_STEPS = {}


def model_step(name):
    """The hook's records of one training step of the row model ``name``
    at batch 1 (cached)."""
    if name in _STEPS:
        return _STEPS[name]
    if name in ('BERT-large', 'Transformer-big'):
        model = bert_large() if name == 'BERT-large' else transformer_big()
        ids = np.arange(8, dtype=np.int32)

        def loss():
            return F.softmax_cross_entropy(model(ids), ids)
    else:
        model = getattr(L, name + 'Layers')(pretrained_model=None)
        layer = 'fc8' if name == 'VGG16' else 'fc6'
        x = np.zeros((1, 3, 224, 224), np.float32)
        t = np.zeros(1, np.int32)

        def loss():
            return F.softmax_cross_entropy(model(x, layers=[layer])[layer],
                                           t)
    model.cleargrads()
    with chainer.using_config('train', True), \
            ComputationalCostHook() as cch:
        loss().backward()
    n_params = sum(p.size for p in model.params())
    _STEPS[name] = cch, n_params
    return _STEPS[name]


def _accumulation(row):
    """Micro-batches per all-reduce at every N of ``row``."""
    return dict(row.accumulation) if row.accumulation else 1


def inputs(row):
    """The keywords of ``scaling_report`` for ``row`` (see the module's
    rules)."""
    cch, n_params = model_step(row.model)
    params = row.paper_params or n_params
    grad_bytes = params * (2 if any(k in _FP16_ALLREDUCE for k in row.knobs)
                           else 4)
    intra = INTRA[row.intra_node]
    if row.network is None:
        net = dict(network=intra, gpus_per_node=row.gpus_per_node)
    else:
        net = dict(network=INTER[row.network, row.gpu],
                   gpus_per_node=row.gpus_per_node, node_network=intra)
    knobs = dict(row.knobs)
    if row.accumulation:
        overlap = dict(overlap='none')
    elif knobs.get('delay_allreduce'):
        overlap = dict(overlap='none')
    elif row.allreduce == 'ddp':
        overlap = dict(overlap='ddp')
    elif row.allreduce == 'horovod':
        overlap = dict(overlap='horovod')
        if 'HOROVOD_CYCLE_TIME_ms' in knobs:
            overlap['cycle_time'] = knobs['HOROVOD_CYCLE_TIME_ms'] / 1e3
    elif knobs.get('double_buffering'):
        overlap = dict(overlap='chainermn-double-buffering')
    else:
        overlap = dict(overlap='none')
    return dict(device=DEVICE[row.gpu], grad_bytes=grad_bytes,
                batch_size=row.batch, accumulation=_accumulation(row),
                **net, **overlap)


def micro_step(row):
    """Seconds of one micro-batch on one GPU: the row's baseline, else the
    roofline at the row's batch on the nearest preset."""
    if row.base_step_time is not None:
        return row.base_step_time
    cch, _ = model_step(row.model)
    rows = cch.roofline_report(device=DEVICE[row.gpu])
    return rows['total']['t_roofline'] * row.batch


def report(row, counts, model='sourced', **override):
    """The scaling report of ``row`` on the worker ``counts``."""
    cch, _ = model_step(row.model)
    kwargs = inputs(row)
    kwargs.update(override)
    if 'measured' not in kwargs or row.base_gpus == 1:
        kwargs.setdefault('step_time', micro_step(row))
    return cch.scaling_report(counts, model=model, **kwargs)


def _efficiency(rows, row):
    """The per-GPU throughput at N over the baseline's."""
    return rows[row.gpus]['efficiency'] / rows[row.base_gpus]['efficiency']


def predicted(row, model='sourced'):
    """The a priori efficiency of ``row`` at its largest N."""
    return _efficiency(report(row, [row.base_gpus, row.gpus], model), row)


def measured_step(row, n):
    """Seconds of one step (every micro-batch of it) on ``n`` GPUs of
    ``row``, from the throughput its table publishes at ``n``."""
    throughput = dict(row.ladder)[n]
    acc = dict(row.accumulation or ()).get(n, 1)
    if row.unit == 'speedup':
        # speedups only: the baseline's step is the micro step
        return acc * micro_step(row) * n / throughput
    return acc * row.batch * n / throughput


def anchored(row):
    """The efficiency at ``row.gpus`` predicted from the steps measured
    at ``row.small_gpus`` and, for a baseline of several GPUs (whose
    one-GPU step no source gives), at the baseline."""
    measured = {row.small_gpus: measured_step(row, row.small_gpus)}
    if row.base_gpus > 1:
        measured[row.base_gpus] = measured_step(row, row.base_gpus)
    with warnings.catch_warnings():
        # a step measured faster than the model reaches (six rows): the
        # rows anchored on the nearest, as the report warns
        warnings.simplefilter('ignore', ReportWarning)
        rows = report(row, sorted({row.base_gpus, row.gpus}),
                      measured=measured)
    return _efficiency(rows, row)
