"""Training steps under the hook: a CNN and an LSTM language model run
forward and backward with no layer ignored, and give bit-identical outputs
and gradients to a bare run."""

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook
from model_helpers import TrainCNN


class CNN(TrainCNN):
    """The real-model suite's training CNN, its loss only."""

    def forward(self, x, t):
        return super(CNN, self).forward(x, t)[0]


class LanguageModel(chainer.Chain):
    def __init__(self, n_vocab=20, n_units=6):
        super(LanguageModel, self).__init__()
        with self.init_scope():
            self.embed = L.EmbedID(n_vocab, n_units)
            self.lstm = L.LSTM(n_units, n_units)
            self.out = L.Linear(n_units, n_vocab)

    def forward(self, words):
        self.lstm.reset_state()
        loss = 0
        for cur, nxt in zip(words[:-1], words[1:]):
            h = self.lstm(F.dropout(self.embed(cur), 0.2))
            loss += F.softmax_cross_entropy(self.out(h), nxt)
        return loss


def _cnn_inputs():
    rng = np.random.RandomState(0)
    return (rng.rand(4, 3, 8, 8).astype(np.float32),
            rng.randint(0, 10, 4).astype(np.int32))


def _lm_inputs():
    rng = np.random.RandomState(1)
    return (rng.randint(0, 20, (5, 3)).astype(np.int32),)


def _step(make, inputs, hooked):
    """Loss, gradients and BN statistics of one training step of a fresh
    model (same seed for its weights and for dropout)."""
    np.random.seed(42)
    model = make()
    model.cleargrads()
    np.random.seed(7)
    hook = None
    with chainer.using_config('train', True):
        if hooked:
            hook = ComputationalCostHook(strict=True)
            with hook:
                loss = model(*inputs)
                loss.backward()
        else:
            loss = model(*inputs)
            loss.backward()
    state = {name: p.grad.copy() for name, p in model.namedparams()}
    for name, link in model.namedlinks():
        if isinstance(link, L.BatchNormalization):
            state[name + '/avg_mean'] = link.avg_mean.copy()
            state[name + '/avg_var'] = link.avg_var.copy()
    return loss.array.copy(), state, hook


@pytest.mark.parametrize('make, inputs', [(CNN, _cnn_inputs),
                                          (LanguageModel, _lm_inputs)],
                         ids=['cnn', 'lstm-lm'])
def test_a_training_step_is_unchanged_and_fully_costed(make, inputs):
    bare_loss, bare_state, _ = _step(make, inputs(), hooked=False)
    loss, state, hook = _step(make, inputs(), hooked=True)
    assert loss.tobytes() == bare_loss.tobytes()
    assert sorted(state) == sorted(bare_state)
    for name in state:
        assert state[name].tobytes() == bare_state[name].tobytes(), name
    assert hook.ignored_layers == {}
    phases = hook.phase_report
    assert phases['forward']['n_layers'] > 0
    assert phases['backward']['n_layers'] > 0
    # every backward figure is real work: more FLOPs than nothing
    assert phases['backward']['flops'] > 0


def test_the_cnn_step_calls_the_expected_functions():
    _, _, hook = _step(CNN, _cnn_inputs(), hooked=True)
    types = {(r['phase'], r['type']) for name, r in hook.layer_report.items()
             if name != 'total'}
    for expected in [('forward', 'Convolution2DFunction'),
                     ('forward', 'BatchNormalization'),
                     ('forward', 'MaxPoolingND'),
                     ('forward', 'Dropout'),
                     ('forward', 'SoftmaxCrossEntropy'),
                     ('backward', 'Convolution2DGradW'),
                     ('backward', 'BatchNormalizationGrad'),
                     ('backward', 'MaxPoolingNDGrad'),
                     ('backward', 'DropoutGrad'),
                     ('backward', 'LinearGradData')]:
        if chainer.__version__.startswith('6'):
            expected = (expected[0], expected[1].replace(
                'MaxPoolingND', 'MaxPooling2D'))
        assert expected in types
