"""Predicted against measured step times, after one calibration.

    python benchmarks/predict_time.py [--seconds 150] [--calibration FILE]
        [--clock cpu|wall] [--batches 1,4] [--repeats 3] [--save FILE]
        [--models resnet50,vgg16,transformer,lstm_lm,googlenet,mlp]

Calibrates once (``calibrate(seconds=...)``, or loads ``--calibration``),
then for each model (none of them is a calibration probe) and two batch
sizes runs inference and a training step (forward, backward, MomentumSGD's
update), measures the median time of ``--repeats`` runs after one not
timed, and prints it beside the time ``CostReport.time_report`` predicts
from one hooked run, the relative error and the calls flagged.  Last: the
median absolute error of inference and of training steps, against the
calibration's own cross-validated error.  Timings run on one BLAS thread
(``one_blas_thread``) and use the process's CPU time (``process_time``),
which other processes on a shared machine do not stretch, or with
``--clock wall`` ``perf_counter``.  About 5 minutes on this 2-core
machine (the calibration's 150 s, then the models).
``--batches`` replaces every model's two batch sizes.
"""

import argparse
import sys
import time
import warnings

import one_blas_thread  # NOQA: before NumPy

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np

from chainer_computational_cost import calibrate
from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.cli.main import MODELS
from chainer_computational_cost.analysis.calibration import Calibration
from chainer_computational_cost.run.measure import CLOCKS
from chainer_computational_cost.run.measure import step_function


class TransformerBlock(chainer.Chain):
    """One pre-norm encoder block: 8-head self-attention and a 4x MLP."""

    def __init__(self, width=512, heads=8, length=128):
        super(TransformerBlock, self).__init__()
        self.heads, self.length = heads, length
        with self.init_scope():
            self.n1 = L.LayerNormalization(width)
            self.q = L.Linear(width, width)
            self.k = L.Linear(width, width)
            self.v = L.Linear(width, width)
            self.o = L.Linear(width, width)
            self.n2 = L.LayerNormalization(width)
            self.f1 = L.Linear(width, 4 * width)
            self.f2 = L.Linear(4 * width, width)

    def forward(self, x):
        b, t, d = x.shape
        h, hd = self.heads, d // self.heads
        x2 = F.reshape(x, (b * t, d))
        y = self.n1(x2)

        def split(z):
            return F.reshape(F.transpose(F.reshape(z, (b, t, h, hd)),
                                         (0, 2, 1, 3)), (b * h, t, hd))
        q, k, v = split(self.q(y)), split(self.k(y)), split(self.v(y))
        a = F.softmax(F.batch_matmul(q, k, transb=True) / np.sqrt(hd),
                      axis=2)
        y = F.reshape(F.transpose(F.reshape(F.batch_matmul(a, v),
                                            (b, h, t, hd)), (0, 2, 1, 3)),
                      (b * t, d))
        x2 = x2 + self.o(y)
        x2 = x2 + self.f2(F.relu(self.f1(self.n2(x2))))
        return F.reshape(x2, (b, t, d))

    def inputs(self, n):
        x = np.random.rand(n, self.length, 512).astype(np.float32)
        return (x,), lambda y: F.mean_squared_error(y, x)


class LSTMLanguageModel(chainer.Chain):
    """Two stacked LSTMs over 20 steps of a 10000-word vocabulary."""

    def __init__(self, vocab=10000, units=256, steps=20):
        super(LSTMLanguageModel, self).__init__()
        self.vocab, self.steps = vocab, steps
        with self.init_scope():
            self.embed = L.EmbedID(vocab, units)
            self.l1 = L.LSTM(units, units)
            self.l2 = L.LSTM(units, units)
            self.out = L.Linear(units, vocab)

    def forward(self, ids):
        self.l1.reset_state()
        self.l2.reset_state()
        loss = 0
        for i in range(self.steps):
            h = self.l2(F.dropout(self.l1(F.dropout(self.embed(ids[:, i])))))
            loss += F.softmax_cross_entropy(self.out(F.dropout(h)),
                                            ids[:, i + 1])
        return loss / self.steps

    def inputs(self, n):
        ids = np.random.randint(0, self.vocab, (n, self.steps + 1)).astype(
            np.int32)
        return (ids,), lambda y: y


class MLP(chainer.Chain):
    """784-1000-1000-10, ReLU (the MNIST example's)."""

    def __init__(self):
        super(MLP, self).__init__()
        with self.init_scope():
            self.l1 = L.Linear(784, 1000)
            self.l2 = L.Linear(1000, 1000)
            self.l3 = L.Linear(1000, 10)

    def forward(self, x):
        return self.l3(F.relu(self.l2(F.relu(self.l1(x)))))

    def inputs(self, n):
        t = np.random.randint(0, 10, n).astype(np.int32)
        return ((np.random.rand(n, 784).astype(np.float32),),
                lambda y: F.softmax_cross_entropy(y, t))


class Image(chainer.Chain):
    """A built-in image model up to its logits."""

    def __init__(self, name, logits):
        super(Image, self).__init__()
        self.logits = logits
        with self.init_scope():
            self.net = MODELS[name]()

    def forward(self, x):
        return self.net(x, layers=[self.logits])[self.logits]

    def inputs(self, n):
        t = np.random.randint(0, 1000, n).astype(np.int32)
        return ((np.random.rand(n, 3, 224, 224).astype(np.float32),),
                lambda y: F.softmax_cross_entropy(y, t))


#: Model -> (factory, two batch sizes).
BENCH = {
    'resnet50': (lambda: Image('resnet50', 'fc6'), (1, 4)),
    'vgg16': (lambda: Image('vgg16', 'fc8'), (1, 4)),
    'transformer': (TransformerBlock, (4, 16)),
    'lstm_lm': (LSTMLanguageModel, (16, 64)),
    'googlenet': (lambda: Image('googlenet', 'loss3_fc'), (1, 4)),
    'mlp': (MLP, (32, 512)),
}


def measure(run, repeats, clock):
    """The median time of ``repeats`` runs on ``clock``, after one not
    timed (as the calibration times its probes)."""
    run()
    times = []
    for _ in range(repeats):
        start = clock()
        run()
        times.append(clock() - start)
    return float(np.median(times))


def main():
    """Calibrate, predict, measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=150)
    parser.add_argument('--calibration', help='load this calibration')
    parser.add_argument('--save', help='save the calibration there')
    parser.add_argument('--models', default=','.join(BENCH))
    parser.add_argument('--batches', help='e.g. 1,4 for every model')
    parser.add_argument('--repeats', type=int, default=3)
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--clock', choices=sorted(CLOCKS),
                        help='cpu (process_time, the default: a shared '
                        'machine does not stretch it) or wall '
                        '(perf_counter); a loaded calibration\'s own')
    args = parser.parse_args()
    warnings.simplefilter('ignore')
    np.random.seed(args.seed)
    started = time.time()
    if args.calibration:
        cal = Calibration.load(args.calibration)
        if args.clock and args.clock != cal.info.get('clock', 'wall'):
            parser.error('{} was calibrated on the {} clock'.format(
                args.calibration, cal.info.get('clock', 'wall')))
    else:
        cal = calibrate(seconds=args.seconds, seed=args.seed,
                        clock=args.clock or 'cpu')
        if args.save:
            cal.save(args.save)
    clock = CLOCKS[cal.info.get('clock', 'wall')]
    print('calibration: {} ({:.0f} s, {} clock); its cross-validated '
          'error: inference {}, training {}'.format(
              cal, time.time() - started, cal.info.get('clock', 'wall'),
              _pct(cal.error.get('inference')),
              _pct(cal.error.get('training'))))
    print('| model | batch | step | measured ms | predicted ms | error | '
          'flagged calls |')
    print('|:--|--:|:--|--:|--:|--:|--:|')
    errors = {'inference': [], 'training': []}
    for name in args.models.split(','):
        factory, batches = BENCH[name]
        if args.batches:
            batches = [int(b) for b in args.batches.split(',')]
        model = factory()
        optimizer = chainer.optimizers.MomentumSGD()
        optimizer.setup(model)
        for n in batches:
            inputs, loss_of = model.inputs(n)
            for mode in ('inference', 'training'):
                run = step_function(model, inputs, loss_of,
                                    mode == 'training', optimizer)
                measured = measure(run, args.repeats, clock)
                with ComputationalCostHook() as hook:
                    run()
                total = hook.time_report(cal)['total']
                predicted = total['t_predicted']
                error = (predicted - measured) / measured
                errors[mode].append(abs(error))
                print('| {} | {} | {} | {:.1f} | {:.1f} | {:+.0%} | {} |'
                      .format(name, n, mode, measured * 1e3,
                              predicted * 1e3, error, total['n_flagged']))
                sys.stdout.flush()
    for mode in ('inference', 'training'):
        if errors[mode]:
            bench = float(np.median(errors[mode]))
            own = cal.error.get(mode)
            ratio = bench / own if own else float('nan')
            print('{}: median absolute error {} over {} runs; the '
                  'calibration said {} (ratio {:.2f})'.format(
                      mode, _pct(bench), len(errors[mode]), _pct(own),
                      ratio))
    print('total time {:.0f} s'.format(time.time() - started))


def _pct(x):
    return 'n/a' if x is None else '{:.1%}'.format(x)


if __name__ == '__main__':
    main()
