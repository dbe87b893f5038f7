"""The cost of a training step, forward against backward, per layer type.

    python benchmarks/training_step.py [--model resnet50] [--batch 32]

Projects (``project_batch``) one training step of the model, train mode, a
softmax cross entropy loss on random labels and ``loss.backward()``, to
``--batch``, and prints a markdown table of forward and backward FLOPs per
forward function type and their ratio.  The backward of a convolution is the
Deconvolution2DFunction of its input gradient plus the Convolution2DGradW of
its weight gradient, and each gradient class is counted with the forward
function it differentiates.
"""

import argparse
import warnings

# Before NumPy is imported.
import one_blas_thread  # NOQA

import chainer
import chainer.functions as F
import numpy as np

from chainer_computational_cost import project_batch
from chainer_computational_cost.cli.main import MODELS

#: Backward function type -> the forward type whose gradient it computes
#: (plain functions such as Add and Sum count where backward calls them).
OF = {
    'Deconvolution2DFunction': 'Convolution2DFunction',
    'Convolution2DGradW': 'Convolution2DFunction',
    'BatchNormalizationGrad': 'BatchNormalization',
    'ReLUGrad2': 'ReLU',
    'MaxPoolingNDGrad': 'MaxPoolingND',
    'AveragePooling2DGrad': 'AveragePooling2D',
    'LinearGradData': 'LinearFunction',
    'LinearGradWeight': 'LinearFunction',
    '_SoftmaxCrossEntropyGrad_NoDoubleBackprop': 'SoftmaxCrossEntropy',
}


def main():
    """Project the training step and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--model', default='resnet50', choices=sorted(MODELS))
    parser.add_argument('--batch', type=int, default=32)
    args = parser.parse_args()
    warnings.simplefilter('ignore')
    model = MODELS[args.model]()
    last = {'resnet50': 'fc6', 'resnet101': 'fc6', 'resnet152': 'fc6',
            'vgg16': 'fc8', 'vgg19': 'fc8'}.get(args.model)

    def run(n):
        x = np.zeros((n, 3, 224, 224), np.float32)
        t = np.zeros((n,), np.int32)
        model.cleargrads()
        with chainer.using_config('train', True):
            y = model(x, layers=[last])[last] if last else model(x)
            F.softmax_cross_entropy(y, t).backward()

    projected = project_batch(run, args.batch)
    rows = {}
    for entry in projected.summary_report_by_phase().values():
        if entry['type'] == 'total':
            continue
        key = OF.get(entry['type'], entry['type'])
        row = rows.setdefault(key, [0, 0])
        row[entry['phase'] == 'backward'] += entry['flops']
    print('| type | forward GFLOPs | backward GFLOPs | backward / forward |')
    print('|:-----|-----:|-----:|-----:|')
    for key, (fwd, bwd) in rows.items():
        ratio = '{:.2f}'.format(bwd / fwd) if fwd else '-'
        print('| {} | {:.3f} | {:.3f} | {} |'.format(
            key, fwd / 1e9, bwd / 1e9, ratio))
    phases = projected.phase_report
    fwd, bwd = phases['forward']['flops'], phases['backward']['flops']
    print('| total | {:.3f} | {:.3f} | {:.2f} |'.format(
        fwd / 1e9, bwd / 1e9, bwd / fwd))


if __name__ == '__main__':
    main()
