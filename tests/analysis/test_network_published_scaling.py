"""The scaling report against published data-parallel runs (issue 35).

Each row names the publication, the table or figure, the inputs and the
published efficiency; the prediction must fall within 10 points of it.
The inputs were chosen from their sources before any of these tests was
run, and were not changed after (docs/chainermn.md, "Checked against
published runs", says how each was chosen):

* the model: the ``chainer.links`` model of the run, its training step
  (forward, softmax cross entropy, backward) projected to the per-GPU
  batch of the run (``project_batch``); its float32 parameter bytes are
  the gradients, its backward order says when each link's gradient is
  ready, and its roofline times on ``p100`` split the step;
* the single-GPU step (``step_time``): TensorFlow's benchmark page
  ("Benchmarks", tensorflow/docs_src/performance/benchmarks.md, NVIDIA
  DGX-1 with Tesla P100, training on synthetic data, 1 GPU): ResNet-50
  195 images/s at batch 32 and 219 at batch 64, ResNet-152 91.8 and VGG16
  154 images/s at batch 64.  ResNet-101 is not on the page: its time per
  image is interpolated linearly in FLOPs between ResNet-50 and
  ResNet-152, with the FLOPs of He et al. 2016 ("Deep Residual Learning",
  Table 1: 3.8, 7.6 and 11.3 x 10^9);
* the network, the GPUs per server and the overlap as each publication
  describes its cluster and framework.

The published efficiency is the run's throughput at N GPUs over N times
its baseline's per GPU: Goyal's baseline is one server of 8 GPUs, so the
prediction is ``t_step(8) / t_step(N)``; Horovod's is one GPU, so it is the
report's ``efficiency`` at N.
"""

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest

from chainer_computational_cost import project_batch

#: Points of efficiency a prediction may be off (the issue's bound).
TOLERANCE = 0.10

# TensorFlow benchmarks, DGX-1 (P100), synthetic data, 1 GPU, images/s.
RESNET50_B32 = 195.0
RESNET50_B64 = 219.0
RESNET152_B64 = 91.8
VGG16_B64 = 154.0
# He et al. 2016, Table 1: FLOPs of ResNet-50, -101, -152 (x 10^9).
FLOPS_50, FLOPS_101, FLOPS_152 = 3.8, 7.6, 11.3


def resnet101_step_b64():
    """Seconds of one ResNet-101 step at batch 64 on a P100: the time per
    image interpolated in FLOPs between ResNet-50 and ResNet-152."""
    t50, t152 = 1 / RESNET50_B64, 1 / RESNET152_B64
    per_image = t50 + (FLOPS_101 - FLOPS_50) / (FLOPS_152 - FLOPS_50) * (
        t152 - t50)
    return 64 * per_image


#: One row per published figure: (id, publication and figure, model,
#: batch per GPU, step_time, network, gpus_per_node, node_network,
#: overlap, baseline GPUs, GPUs, published efficiency).
ROWS = [
    # Goyal et al. 2017, "Accurate, Large Minibatch SGD: Training ImageNet
    # in 1 Hour" (arXiv 1706.02677): abstract, "~90% scaling efficiency
    # when moving from 8 to 256 GPUs"; section 5 and Figures 7-8: Big
    # Basin servers of 8 P100 with NVLink, 50 Gbit Ethernet, 32 images per
    # GPU, gradients all-reduced as the backward produces them (Figure 8:
    # most of the all-reduce hidden by pipelining it with the gradient
    # computation): DDP-like buckets.
    ('goyal-256', 'Goyal et al. 2017, abstract and Figure 8', 'ResNet50',
     32, 32 / RESNET50_B32, 'eth-50g', 8, 'nvlink-p100', 'ddp', 8, 256,
     0.90),
    # Figure 7: 352 GPUs (44 servers), the largest run; Figure 8 gives
    # its throughput ~90 % of ideal.
    ('goyal-352', 'Goyal et al. 2017, Figures 7 and 8', 'ResNet50', 32,
     32 / RESNET50_B32, 'eth-50g', 8, 'nvlink-p100', 'ddp', 8, 352, 0.90),
    # Sergeev and Del Balso 2018, "Horovod: fast and easy distributed deep
    # learning in TensorFlow" (arXiv 1802.05799), Figure 6: ResNet-101,
    # 88 % at 128 GPUs over 25 GbE TCP; servers of 4 Pascal GPUs (the
    # benchmark page's), batch 64 (its command line); Tensor Fusion.
    ('horovod-128-tcp', 'Sergeev and Del Balso 2018, Figure 6',
     'ResNet101', 64, resnet101_step_b64(), 'eth-25g', 4, 'pcie3-x16',
     'horovod', 1, 128, 0.88),
    # Horovod's README and Benchmarks page (128-GPU benchmark: 32 servers
    # with 4 Pascal GPUs each, RoCE-capable 25 Gbit/s): ResNet-101 90 %;
    # the paper's Figure 7 has RDMA 3-4 % above TCP.
    ('horovod-128-rdma', 'Horovod README, 128-GPU benchmark; paper '
     'Figure 7', 'ResNet101', 64, resnet101_step_b64(), 'roce-25g', 4,
     'pcie3-x16', 'horovod', 1, 128, 0.90),
    # Horovod's Benchmarks page (512-GPU benchmark: 128 servers with 4
    # Pascal GPUs each, RoCE-capable 25 Gbit/s): ResNet-101 90 %, VGG-16
    # 68 %.
    ('horovod-512-resnet101', 'Horovod docs, Benchmarks, 512-GPU',
     'ResNet101', 64, resnet101_step_b64(), 'roce-25g', 4, 'pcie3-x16',
     'horovod', 1, 512, 0.90),
    ('horovod-512-vgg16', 'Horovod docs, Benchmarks, 512-GPU', 'VGG16',
     64, 64 / VGG16_B64, 'roce-25g', 4, 'pcie3-x16', 'horovod', 1, 512,
     0.68),
]

_LOGITS = {'ResNet50': 'fc6', 'ResNet101': 'fc6', 'VGG16': 'fc8'}
_PROJECTIONS = {}


def projected_step(model_name, batch):
    """The projected training step of a ``chainer.links`` model (no
    weights needed) at ``batch`` images of 224 x 224 (cached per run)."""
    key = (model_name, batch)
    if key not in _PROJECTIONS:
        model = getattr(L, model_name + 'Layers')(pretrained_model=None)
        layer = _LOGITS[model_name]

        def run(n):
            x = np.zeros((n, 3, 224, 224), np.float32)
            t = np.zeros(n, np.int32)
            model.cleargrads()
            with chainer.using_config('train', True):
                y = model(x, layers=[layer])[layer]
                F.softmax_cross_entropy(y, t).backward()
        _PROJECTIONS[key] = project_batch(run, batch, check_batch=None)
    return _PROJECTIONS[key]


def predicted_efficiency(row, model='bound'):
    """The efficiency the scaling report predicts for ``row`` under the
    scaling ``model`` (these rows were first checked against the bound,
    the report before its sourced model)."""
    (_, _, name, batch, step_time, network, gpn, node_network, overlap,
     base, n, _) = row
    report = projected_step(name, batch).scaling_report(
        [base, n], device='p100', network=network, step_time=step_time,
        overlap=overlap, gpus_per_node=gpn, node_network=node_network,
        model=model)
    return report[base]['t_step'] / report[n]['t_step']


def test_resnet101_step_from_its_sources():
    # 1/219 = 4.566 ms; 1/91.8 = 10.893 ms; (7.6 - 3.8)/(11.3 - 3.8) =
    # 0.50667: 4.566 + 0.50667 * 6.327 = 7.772 ms an image, 0.4974 s for
    # 64 images
    assert resnet101_step_b64() == pytest.approx(0.4974, abs=1e-4)


#: Rows the model misses by more than the tolerance, with the prediction
#: the first run gave (2026-11-27; inputs unchanged since): kept failing
#: visibly (strict xfail), not tuned away.
MISSED = {
    'horovod-128-tcp': 'predicted 0.991 against 0.88 (+11.1 points): '
                       'the model has no cost for TCP beyond its 10 us '
                       'latency (no congestion, no negotiation), and the '
                       'same efficiency as over RDMA; the sourced model '
                       '(TCP at 0.48 of the line rate with 4 GPUs a node, '
                       'stragglers) errs the other way: 0.735, 14.5 points '
                       'low with jitter 0.0148 (0.654 with 0.08; '
                       'test_network_published_rows_predicted.py)',
}


def _params():
    for row in ROWS:
        marks = [pytest.mark.xfail(strict=True, reason=MISSED[row[0]])] \
            if row[0] in MISSED else []
        yield pytest.param(row, id=row[0], marks=marks)


@pytest.mark.slow
@pytest.mark.parametrize('row', list(_params()))
def test_published_row(row):
    published = row[-1]
    predicted = predicted_efficiency(row)
    assert abs(predicted - published) <= TOLERANCE, (
        '{}: predicted {:.3f}, published {:.2f} ({})'.format(
            row[0], predicted, published, row[1]))
