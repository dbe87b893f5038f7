"""The ResNet-50 scaling table and plot of docs/chainermn.md ("ResNet-50
under each overlap mode"): Goyal et al.'s setting (P100, 32 images per
GPU, a measured step of 32/195 s from TensorFlow's benchmark page, 8 GPUs
per server over NVLink, 50 Gbit Ethernet), the efficiency against one GPU
under each overlap mode.  A projected training step: a few minutes here.

    PYTHONPATH=. .venv/bin/python benchmarks/scaling_resnet50.py \\
        [docs/scaling_resnet50_p100.png]
"""

import sys

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np

from chainer_computational_cost.analysis import network
from chainer_computational_cost import project_batch

WORKERS = [1, 8, 64, 256, 352]
OPTIONS = dict(device='p100', network='eth-50g', step_time=32 / 195.0,
               gpus_per_node=8, node_network='nvlink-p100', model='bound')


def main(plot=None):
    model = L.ResNet50Layers(pretrained_model=None)

    def run(n):
        x = np.zeros((n, 3, 224, 224), np.float32)
        t = np.zeros(n, np.int32)
        model.cleargrads()
        with chainer.using_config('train', True):
            y = model(x, layers=['fc6'])['fc6']
            F.softmax_cross_entropy(y, t).backward()

    step = project_batch(run, 32, check_batch=None)
    print('| Overlap | ' + ' | '.join('N={}'.format(n) for n in WORKERS) +
          ' | exposed ms at {} | all-reduces |'.format(WORKERS[-1]))
    print('|:--|' + '--:|' * (len(WORKERS) + 2))
    for overlap in network.OVERLAPS:
        rows = step.scaling_report(WORKERS, overlap=overlap, **OPTIONS)
        last = rows[WORKERS[-1]]
        print('| `{}` | '.format(overlap) + ' | '.join(
            '{:.3f}'.format(rows[n]['efficiency']) for n in WORKERS) +
            ' | {:.1f} | {} |'.format(last['t_exposed_comm'] * 1e3,
                                      last['n_buckets']))
    rows = step.scaling_report([8, 256, 352], overlap='ddp', **OPTIONS)
    print('ddp against 8 workers: {:.3f} at 256, {:.3f} at 352'.format(
        rows[8]['t_step'] / rows[256]['t_step'],
        rows[8]['t_step'] / rows[352]['t_step']))
    if plot:
        step.plot_scaling(
            plot, [1, 2, 4, 8, 16, 32, 64, 128, 256, 352],
            overlaps=network.OVERLAPS,
            published=[(256, 0.90, 'Goyal et al. 2017 (vs 8 GPUs)'),
                       (352, 0.90, '')],
            title='ResNet-50, P100, 32 images/GPU, 8 GPUs/node, 50 GbE',
            **OPTIONS)


if __name__ == '__main__':
    main(*sys.argv[1:2])
