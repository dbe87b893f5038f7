"""The update phase of ResNet50: what each optimizer of chainer.optimizers
(and each optimizer hook, on top of SGD's rule) costs per step, as the hook
records it.

    python benchmarks/update_cost.py

Runs each optimizer's ``update()`` once on the parameters of
``ResNet50Layers(pretrained_model=None)`` (zero gradients) inside the hook,
with ``fma_1flop=True`` and ``False``, and prints the Markdown table of
docs/training.md, "The update of ResNet50": FLOPs and bytes per element,
then the totals (FLOPs in units of 10**9, bytes of 2**30).  About a minute
on a 2-core machine.
"""

import warnings

import chainer.links as L
from chainer import optimizer_hooks as H
from chainer import optimizers as Op
import numpy

from chainer_computational_cost import ComputationalCostHook

OPTIMIZERS = ['SGD', 'MomentumSGD', 'NesterovAG', 'CorrectedMomentumSGD',
              'Adam', 'AdamW', 'AMSGrad', 'AdaBound', 'AMSBound', 'AdaGrad',
              'AdaDelta', 'RMSprop', 'RMSpropGraves', 'SMORMS3', 'MSVAG']
HOOKS = [('WeightDecay', lambda: H.WeightDecay(1e-4)),
         ('Lasso', lambda: H.Lasso(1e-4)),
         ('GradientClipping', lambda: H.GradientClipping(1.0)),
         ('GradientHardClipping', lambda: H.GradientHardClipping(-1, 1)),
         ('GradientNoise', lambda: H.GradientNoise(0.01)),
         ('GradientLARS', lambda: H.GradientLARS())]


def update_rows(model, optimizer, hook=None):
    """The ``update/...`` rows of summary_report_by_phase of one update,
    with FMA and without."""
    optimizer.setup(model)
    if hook is not None:
        optimizer.add_hook(hook)
    out = []
    for fma in (True, False):
        with ComputationalCostHook(fma_1flop=fma) as cch:
            optimizer.update()
        out.append({k: v for k, v in cch.summary_report_by_phase().items()
                    if k.startswith('update/')})
    return out


def row(name, fma, no_fma, n):
    """A line of the table: per element, then totals."""
    def per_element(flops):
        # exact unless a count per array is subtracted (dot products)
        return str(flops // n) if flops % n == 0 else '~{:.0f}'.format(
            flops / n)
    gib = 1024 ** 3
    return '| {} | {} | {}, {} | {} + {} | {:.3f} | {:.3f} | {:.3f} | ' \
        '{:.3f} |'.format(
            name, fma['type'], fma['flops'] // n, per_element(no_fma['flops']),
            fma['mread'] // n, fma['mwrite'] // n, fma['flops'] / 1e9,
            fma['mread'] / gib, fma['mwrite'] / gib, fma['mrw'] / gib)


def main():
    warnings.simplefilter('ignore')
    numpy.seterr(all='ignore')  # zero gradients: some rules divide 0 by 0
    model = L.ResNet50Layers(pretrained_model=None)
    params = list(model.params())
    n = sum(p.size for p in params)
    for p in params:
        p.grad = numpy.zeros_like(p.array)
    print('{} float32 parameters in {} arrays'.format(n, len(params)))
    print('| optimizer or hook | record type | FLOPs per element (FMA, no '
          'FMA) | bytes per element (read + written) | GFLOPs | MemRead '
          'GiB | MemWrite GiB | MemR+W GiB |')
    print('|:--|:--|--:|--:|--:|--:|--:|--:|')
    for name in OPTIMIZERS:
        fma, no_fma = update_rows(model, getattr(Op, name)())
        (key, value), = fma.items()
        print(row(name, value, no_fma[key], n))
    for name, make in HOOKS:
        fma, no_fma = update_rows(model, Op.SGD(), make())
        key = 'update/' + name
        print(row(name, fma[key], no_fma[key], n))


if __name__ == '__main__':
    main()
