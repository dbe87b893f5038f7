"""Write the manual's pictures: the roofline of ResNet50 (batch 1) on a GTX
1080 Ti, its FLOPs and traffic per layer type, and the live memory of its
training step at batch 32.

    .venv/bin/python docs/make_figures.py

Needs matplotlib (the ``[plot]`` extra).  Random weights: costs depend on
shapes only, so no download is needed.
"""

import os
import sys

import chainer
import chainer.links as L
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from chainer_computational_cost import ComputationalCostHook  # NOQA: E402

# Sharp on a laptop's screen (twice the pixels a page shows them at), and
# still small files for the repository (about 100 kB each).
DPI = 150


def main():
    """Run ResNet50 once under the hook and write both pictures."""
    net = L.ResNet50Layers(pretrained_model=None)
    x = np.zeros((1, 3, 224, 224), dtype=np.float32)
    with chainer.no_backprop_mode(), chainer.using_config('train', False):
        with ComputationalCostHook(fma_1flop=True) as cch:
            net(x)
    from chainer_computational_cost.report import plots
    # The layer report's rows carry what the roofline reads (its total row
    # aside); without a dtype a layer counts as float32, as here.
    layers = list(cch.layer_report.values())[:-1]
    roof = os.path.join(HERE, 'roofline_resnet50_gtx1080ti.png')
    plots.plot_roofline(layers, roof, device='gtx1080ti',
                        title='ResNet50, batch 1, on a GTX 1080 Ti '
                        '(10.6 TFLOP/s, 484 GB/s)', dpi=DPI)
    summary = os.path.join(HERE, 'summary_resnet50.png')
    plots.plot_summary(cch.summary_report, summary,
                       title='ResNet50, batch 1, float32', dpi=DPI)
    for path in (roof, summary):
        print('{} ({} bytes)'.format(os.path.relpath(path),
                                     os.path.getsize(path)))
    draw_memory()


def draw_memory():
    """The live memory of ResNet50's training step at batch 32 (Adam's
    usual batch on one GPU), projected from batches 1, 2 and 3."""
    import chainer.functions as F
    from chainer_computational_cost import project_batch
    net = L.ResNet50Layers(pretrained_model=None)

    def step(n):
        net.cleargrads()
        x = np.zeros((n, 3, 224, 224), dtype=np.float32)
        t = np.zeros(n, dtype=np.int32)
        with chainer.using_config('train', True):
            y = net(x, layers=['fc6'])['fc6']
            F.softmax_cross_entropy(y, t).backward()
    path = os.path.join(HERE, 'memory_resnet50.png')
    project_batch(step, 32).plot_memory(
        path, title='ResNet50 training step, batch 32, float32: bytes '
        'alive during each call (scratch as spikes)', dpi=DPI)
    print('{} ({} bytes)'.format(os.path.relpath(path),
                                 os.path.getsize(path)))


if __name__ == '__main__':
    main()
