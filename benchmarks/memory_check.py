"""The hook's live memory against tracemalloc, on big models, and the
largest batch of ResNet50's training step on three GPUs.

    python benchmarks/memory_check.py [--skip-vgg] [--projected 8]

tracemalloc traces every NumPy buffer in a domain of its own; a second
function hook, run right after ComputationalCostHook(memory=True), sums
those traces after each call.  Prints, for ResNet50's training step at
batch 2 (train mode, softmax cross entropy, backward) and VGG16's
inference at batch 1 (no_backprop_mode): the hook's peak and bytes alive
at exit, tracemalloc's (above what was traced when the block was entered),
and their ratio.  Then ResNet50's peak projected to batch ``--projected``
from batches 1, 2, 3 against a real run, and ``fit_batch`` with Adam on
gtx1080ti, a100-40gb and h100.  Random weights (costs and sizes depend on
shapes only).
"""

import argparse
import os
import sys
import time
import tracemalloc
import warnings

# Before NumPy is imported.
import one_blas_thread  # NOQA

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import project_batch
from chainer_computational_cost.fit import fit_batch

# The tests' tracemalloc sampler: the same measurement on big models.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), 'tests'))
from test_memory import numpy_traced  # NOQA: E402
from test_memory import TracemallocSampler  # NOQA: E402


def compare(label, step):
    """Run ``step()`` under the hook and the sampler; print both."""
    tracemalloc.start()
    try:
        sampler = TracemallocSampler()
        base = numpy_traced()
        start = time.perf_counter()
        with ComputationalCostHook(memory=True) as hook:
            with sampler:
                kept = step()
            traced_exit = numpy_traced() - base
        seconds = time.perf_counter() - start
    finally:
        tracemalloc.stop()
    del kept
    m = hook.memory_report
    traced_peak = max(sampler.samples) - base
    print('{}: {} calls, {:.0f} s with the sampler'.format(
        label, m['n_calls'], seconds))
    print('  peak     hook {:>12}  tracemalloc {:>12}  ratio {:.4f}  '
          '(after {}, {})'.format(m['peak'], traced_peak,
                                  m['peak'] / traced_peak, m['peak_layer'],
                                  m['peak_phase']))
    print('  at exit  hook {:>12}  tracemalloc {:>12}  ratio {:.4f}'.format(
        m['at_exit'], traced_exit, m['at_exit'] / traced_exit))
    print('  params {} bytes; split at the peak: activations {}, '
          'gradients {}'.format(m['params'], m['activations'],
                                m['gradients']))
    return m


def resnet50_step(model):
    """``step(n)``: one training step of ``model`` at batch ``n``."""
    rng = np.random.RandomState(0)

    def step(n):
        model.cleargrads()
        x = rng.rand(n, 3, 224, 224).astype(np.float32)
        t = rng.randint(0, 1000, n).astype(np.int32)
        with chainer.using_config('train', True):
            y = model(x, layers=['fc6'])['fc6']
            loss = F.softmax_cross_entropy(y, t)
            loss.backward()
        return loss
    return step


def main():
    """Run the checks and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--skip-vgg', action='store_true')
    parser.add_argument('--projected', type=int, default=8)
    args = parser.parse_args()
    warnings.simplefilter('ignore')

    resnet = L.ResNet50Layers(pretrained_model=None)
    step = resnet50_step(resnet)
    compare('ResNet50 training step, batch 2', lambda: step(2))
    if not args.skip_vgg:
        vgg = L.VGG16Layers(pretrained_model=None)
        x = np.random.RandomState(0).rand(1, 3, 224, 224).astype(
            np.float32)

        def infer():
            with chainer.no_backprop_mode(), \
                    chainer.using_config('train', False):
                return vgg(x)
        compare('VGG16 inference, batch 1', infer)
        del vgg

    n = args.projected
    start = time.perf_counter()
    projected = project_batch(step, n)
    seconds = time.perf_counter() - start
    p = projected.memory_report
    with ComputationalCostHook(memory=True) as hook:
        step(n)
    r = hook.memory_report
    print('ResNet50 training step, batch {}: projected peak {} ({:.0f} s), '
          'real {}, ratio {:.6f}; after {} (real: {})'.format(
              n, p['peak'], seconds, r['peak'], p['peak'] / r['peak'],
              p['peak_layer'], r['peak_layer']))
    for device in ('gtx1080ti', 'a100-40gb', 'h100'):
        fit = fit_batch(projected, device=device, optimizer='adam')
        print('fit {}: batch {}, total {} of {} (params {}, Adam {}, '
              'activations {}, gradients {}, after {})'.format(
                  device, fit['batch_size'], fit['total'], fit['capacity'],
                  fit['params'], fit['optimizer_state'],
                  fit['activations'], fit['gradients'],
                  fit['peak_layer']))


if __name__ == '__main__':
    main()
