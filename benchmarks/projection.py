"""How long a projected report takes against a real run.

    python benchmarks/projection.py [--model resnet50] [--real 32]
                                    [--target 256]

Times ``project_batch`` of a forward pass (train=False, no backprop) to
``--target`` (runs at batch 1, 2 and 3 and the check run at 9), and a
real hooked run at batch ``--real``; checks that the projection to
``--real`` equals the real run layer by layer, and prints the projected
totals at ``--target``.
"""

import argparse
import time
import warnings

# Before NumPy is imported.
import one_blas_thread  # NOQA

import chainer
import numpy as np

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import project_batch
from chainer_computational_cost.cli.main import MODELS


def main():
    """Run the comparison and print it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--model', default='resnet50', choices=sorted(MODELS))
    parser.add_argument('--real', type=int, default=32)
    parser.add_argument('--target', type=int, default=256)
    args = parser.parse_args()
    warnings.simplefilter('ignore')
    model = MODELS[args.model]()

    def run(n):
        with chainer.using_config('train', False), \
                chainer.using_config('enable_backprop', False):
            model(np.zeros((n, 3, 224, 224), np.float32))

    start = time.perf_counter()
    projected = project_batch(run, args.real)
    t_project = time.perf_counter() - start
    start = time.perf_counter()
    with ComputationalCostHook() as real:
        run(args.real)
    t_real = time.perf_counter() - start
    keys = ('flops', 'mread', 'mwrite')
    same = all(projected.layer_report[name][k] == r[k]
               for name, r in real.layer_report.items() for k in keys)
    print('{}: projection to batch {} in {:.1f} s, real batch-{} run in '
          '{:.1f} s ({:.0f} % of it); equal layer by layer: {}'.format(
              args.model, args.real, t_project, args.real, t_real,
              100 * t_project / t_real, same))
    start = time.perf_counter()
    target = project_batch(run, args.target)
    total = target.total_report
    print('batch {} projected in {:.1f} s: {:.3f} GFLOPs, {:.3f} GiB read, '
          '{:.3f} GiB written'.format(
              args.target, time.perf_counter() - start, total['flops'] / 1e9,
              total['mread'] / 2 ** 30, total['mwrite'] / 2 ** 30))


if __name__ == '__main__':
    main()
