"""The hook's memory against tracemalloc, on big models, and the largest
batch of ResNet50's training step on three GPUs.

    python benchmarks/memory_check.py [--only NAME ...] [--skip-vgg]
        [--projected 8] [--skip-fit]

The true peak (issue 28): for each run, ``memory_report['peak']`` (the
most bytes alive during any call, its scratch included) against
tracemalloc's own peak of the same step, ``get_traced_memory()[1]`` after
``reset_peak``, above what was traced before it (inputs made beforehand,
lazily made parameters and states made by a first run): VGG16 and ResNet50
inference at batch 1, ResNet50 training at batch 2, VGG16 training at
batch 1, the small CNN of the tests (training, batch 48), an LSTM language
model and a transformer block (training).  Then the peak between calls
against tracemalloc's NumPy traces of the run's calls sampled after each
call (tests/memory_oracle.py; the two are equal); ResNet50's peak
projected to batch ``--projected`` from batches 1, 2, 3 against a real
run; and ``fit_batch`` with Adam on
gtx1080ti, a100-40gb and h100.  Random weights (costs and sizes depend on
shapes only).
"""

import argparse
import os
import sys
import time
import warnings

# Before NumPy is imported.
import one_blas_thread  # NOQA

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import project_batch
from chainer_computational_cost.run.fit import fit_batch

# The tests' tracemalloc oracle: the same measurements on big models.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), 'tests'))
import memory_oracle  # NOQA: E402
from test_peak import hooked_peak  # NOQA: E402
from test_peak import LSTMLanguageModel  # NOQA: E402
from test_peak import lstm_training  # NOQA: E402
from test_peak import small_cnn  # NOQA: E402
from test_peak import cnn_training  # NOQA: E402
from memory_oracle import traced_peak  # NOQA: E402
from test_peak import TransformerBlock  # NOQA: E402
from test_peak import transformer_training  # NOQA: E402


def true_peak(label, step):
    """Print the hook's peak and tracemalloc's for ``step()`` (run once
    before, so that what a first run makes exists)."""
    step()
    start = time.perf_counter()
    traced = traced_peak(step)
    m = hooked_peak(step)
    seconds = time.perf_counter() - start
    print('{}: peak hook {} tracemalloc {} ratio {:.4f} (during {}, {}; '
          'between calls {}; {:.0f} s)'.format(
              label, m['peak'], traced, m['peak'] / traced, m['peak_layer'],
              m['peak_phase'], m['peak_between_calls'], seconds))
    return m['peak'] / traced


def compare(label, step):
    """Run ``step()`` under the hook and the sampler; print both."""
    with memory_oracle.Tracing():
        sampler = memory_oracle.Sampler()
        start = time.perf_counter()
        with ComputationalCostHook(memory=True) as hook:
            with sampler:
                kept = step()
            traced_exit = memory_oracle.traced()[0]
        seconds = time.perf_counter() - start
    del kept
    m = hook.memory_report
    traced_peak = max(sampler.samples)
    print('{}: {} calls, {:.0f} s with the sampler'.format(
        label, m['n_calls'], seconds))
    print('  between calls  hook {:>12}  tracemalloc {:>12}  ratio {:.4f}  '
          '(after {})'.format(m['peak_between_calls'], traced_peak,
                              m['peak_between_calls'] / traced_peak,
                              m['peak_between_calls_layer']))
    print('  at exit        hook {:>12}  tracemalloc {:>12}  ratio {:.4f}'
          .format(m['at_exit'], traced_exit, m['at_exit'] / traced_exit))
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


def _training_step(model, x, t, last):
    """One training step of a model of chainer.links' zoo to its layer
    ``last`` (softmax cross entropy, backward)."""
    def step():
        model.cleargrads()
        with chainer.using_config('train', True):
            y = model(x, layers=[last])[last]
            loss = F.softmax_cross_entropy(y, t)
            loss.backward()
        return loss
    return step


def _inference(model, x):
    def step():
        with chainer.no_backprop_mode(), \
                chainer.using_config('train', False):
            return model(x)
    return step


def _big_runs():
    """(label, make the step) of the true-peak table."""
    rng = np.random.RandomState(0)

    def images(n):
        return rng.rand(n, 3, 224, 224).astype(np.float32)

    def labels(n):
        return rng.randint(0, 1000, n).astype(np.int32)
    return [
        ('VGG16 inference, batch 1', lambda: _inference(
            L.VGG16Layers(pretrained_model=None), images(1))),
        ('ResNet50 inference, batch 1', lambda: _inference(
            L.ResNet50Layers(pretrained_model=None), images(1))),
        ('ResNet50 training, batch 2', lambda: _training_step(
            L.ResNet50Layers(pretrained_model=None), images(2), labels(2),
            'fc6')),
        ('VGG16 training, batch 1', lambda: _training_step(
            L.VGG16Layers(pretrained_model=None), images(1), labels(1),
            'fc8')),
        ('small CNN training, batch 48', lambda: cnn_training(
            small_cnn(), 48)),
        ('LSTM language model training (20 steps, batch 32)',
         lambda: lstm_training(LSTMLanguageModel(), 32)),
        ('transformer block training (batch 8, 64 tokens)',
         lambda: transformer_training(TransformerBlock(), 8)),
    ]


def main():
    """Run the checks and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--only', nargs='*', default=None,
                        help='words of the labels of the true-peak runs '
                        'to make (default: all)')
    parser.add_argument('--skip-vgg', action='store_true')
    parser.add_argument('--skip-fit', action='store_true')
    parser.add_argument('--projected', type=int, default=8)
    args = parser.parse_args()
    warnings.simplefilter('ignore')

    for label, make in _big_runs():
        if args.only is not None and not any(
                w.lower() in label.lower() for w in args.only):
            continue
        if args.skip_vgg and 'VGG' in label:
            continue
        true_peak(label, make())
    if args.skip_fit:
        return
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
          'real {}, ratio {:.6f}; during {} (real: {})'.format(
              n, p['peak'], seconds, r['peak'], p['peak'] / r['peak'],
              p['peak_layer'], r['peak_layer']))
    for device in ('gtx1080ti', 'a100-40gb', 'h100'):
        fit = fit_batch(projected, device=device, optimizer='adam')
        print('fit {}: batch {}, total {} of {} (params {}, Adam {}, '
              'activations {}, gradients {}, scratch {}, during {})'.format(
                  device, fit['batch_size'], fit['total'], fit['capacity'],
                  fit['params'], fit['optimizer_state'],
                  fit['activations'], fit['gradients'], fit['scratch'],
                  fit['peak_layer']))


if __name__ == '__main__':
    main()
