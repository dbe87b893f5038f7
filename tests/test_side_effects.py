"""The hook never changes what the user's code computes: model state,
random streams and outputs are bit-identical with and without it."""

import warnings

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook


def _maybe_hooked(hooked):
    if hooked:
        return ComputationalCostHook()
    return chainer.FunctionHook()  # a no-op hook: same code path otherwise


def _run(fn, hooked):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', UserWarning)
        with _maybe_hooked(hooked):
            return fn()


def test_training_batch_normalization_updates_running_stats_once():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    states = []
    for hooked in (False, True):
        bn = L.BatchNormalization(6)
        with chainer.using_config('train', True):
            y = _run(lambda: bn(x), hooked)
        states.append((bn.avg_mean.copy(), bn.avg_var.copy(),
                       y.array.copy()))
    (m0, v0, y0), (m1, v1, y1) = states
    # one update with decay 0.9 from zeros: 0.1 * column means 9, ..., 14
    # (two updates would give 0.19 * the means)
    np.testing.assert_allclose(m1, 0.1 * np.arange(9, 15), rtol=1e-6)
    np.testing.assert_array_equal(m0, m1)
    np.testing.assert_array_equal(v0, v1)
    np.testing.assert_array_equal(y0, y1)


def test_dropout_masks_and_the_random_stream_are_unchanged():
    x = np.ones((3, 50), np.float32)
    results = []
    for hooked in (False, True):
        np.random.seed(7)
        with chainer.using_config('train', True):
            y = _run(lambda: F.dropout(x, 0.5), hooked)
        results.append((y.array.copy(), np.random.rand()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]


@pytest.mark.slow
def test_vgg16_output_is_bit_identical():
    model = L.VGG16Layers(pretrained_model=None)
    x = np.random.RandomState(0).rand(1, 3, 224, 224).astype(np.float32)
    outputs = []
    for hooked in (False, True):
        with chainer.no_backprop_mode(), chainer.using_config('train', False):
            outputs.append(_run(lambda: model(x)['prob'].array, hooked))
    np.testing.assert_array_equal(outputs[0], outputs[1])


def test_parameters_and_gradients_are_unchanged_by_a_training_step():
    results = []
    for hooked in (False, True):
        np.random.seed(3)
        model = L.Classifier(L.Linear(4, 3))
        x = np.random.rand(5, 4).astype(np.float32)
        t = np.array([0, 1, 2, 1, 0], np.int32)
        loss = _run(lambda: model(x, t), hooked)
        loss.backward()
        results.append((loss.array.copy(), model.predictor.W.array.copy(),
                        model.predictor.W.grad.copy()))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
