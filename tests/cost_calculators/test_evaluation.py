import chainer.functions as F
import numpy as np

from chainer_computational_cost import ComputationalCostHook
from helpers import cost


def _scores(n, c):
    # row i has its maximum at class i % c
    y = np.zeros((n, c), np.float32)
    y[np.arange(n), np.arange(n) % c] = 1
    return y


def test_accuracy():
    y = _scores(4, 3)
    t = np.array([0, 1, 2, 1], np.int32)
    # |y| = 12, |t| = 4: 12 + 4 = 16 FLOPs, 16 read, 1 written
    assert cost(F.accuracy, y, t) == (16, 16, 1, {})
    assert F.accuracy(y, t).size == 1


def test_accuracy_ignore_label():
    y = _scores(4, 3)
    t = np.array([0, 1, 2, 1], np.int32)
    # 12 + 4*4 + 1 = 29 FLOPs, 12 + 4 + 1 = 17 read, 1 written
    assert cost(F.accuracy, y, t, ignore_label=0) == (
        29, 17, 1, {'ignore_label': 0})


def test_accuracy_spatial_batch1():
    y = np.zeros((1, 3, 5), np.float32)
    t = np.zeros((1, 5), np.int32)
    # |y| = 15, |t| = 5: 15 + 5 = 20, 20, 1
    assert cost(F.accuracy, y, t) == (20, 20, 1, {})


def test_binary_accuracy():
    y = np.array([[-1, 2, 0], [1, -2, 3]], np.float32)
    t = np.array([[0, 1, 1], [-1, 0, 1]], np.int32)
    # |y| = |t| = 6: 5*6 = 30 FLOPs, 6 + 6 + 1 = 13 read, 1 written
    assert cost(F.binary_accuracy, y, t) == (30, 13, 1, {})
    assert F.binary_accuracy(y, t).size == 1


def test_binary_accuracy_batch1():
    y = np.zeros((1, 4), np.float32)
    t = np.zeros((1, 4), np.int32)
    # 5*4 = 20, 4 + 4 + 1 = 9, 1
    assert cost(F.binary_accuracy, y, t) == (20, 9, 1, {})


def test_classification_summary_label_num():
    y = _scores(4, 3)
    t = np.array([0, 1, 2, 0], np.int32)
    # |y| = 12, n = 4, L = 3: 12 + 7*4 + 7*3 + 2 = 12 + 28 + 21 + 2 = 63
    # read 12 + 4 + 2 = 18, write 4*3 = 12
    params = {'label_num': 3, 'beta': 1.0, 'ignore_label': -1}
    assert cost(F.classification_summary, y, t, label_num=3) == (
        63, 18, 12, params)
    outs = F.classification_summary(y, t, label_num=3)
    assert sum(o.size for o in outs) == 12


def test_classification_summary_no_label_num():
    y = _scores(4, 3)
    t = np.array([0, 1, 2, 0], np.int32)
    # L = y.shape[1] = 3; 63 + (4 - 1) for max(t) = 66; 18 read; 12 written
    params = {'beta': 2.0, 'ignore_label': -1}
    assert cost(F.classification_summary, y, t, beta=2.0) == (
        66, 18, 12, params)
    outs = F.classification_summary(y, t)
    assert sum(o.size for o in outs) == 12


def test_classification_summary_batch1():
    y = _scores(1, 2)
    t = np.array([0], np.int32)
    # |y| = 2, n = 1, L = 1: 2 + 7 + 7 + 2 = 18; read 2 + 1 + 2 = 5;
    # write 4*1 = 4
    params = {'label_num': 1, 'beta': 1.0, 'ignore_label': -1}
    assert cost(F.classification_summary, y, t, label_num=1) == (
        18, 5, 4, params)


def _pair(*shape):
    pred = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    true = pred[::-1].copy()
    return pred, true


def test_r2_score():
    pred, true = _pair(4, 3)
    # n = 12, m = 12/4 = 3: uniform 7*12 + 4*3 = 96, read 24, write 1
    assert cost(F.r2_score, pred, true) == (
        96, 24, 1, {'multioutput': 'uniform_average'})
    # raw values: 7*12 + 3*3 = 93, read 24, write 3
    assert cost(F.r2_score, pred, true, multioutput='raw_values') == (
        93, 24, 3, {'multioutput': 'raw_values'})
    assert F.r2_score(pred, true, multioutput='raw_values').size == 3


def test_r2_score_3d_batch1():
    pred, true = _pair(1, 2, 3)
    # n = 6, m = 6: raw 7*6 + 3*6 = 60, read 12, write 6
    assert cost(F.r2_score, pred, true, multioutput='raw_values') == (
        60, 12, 6, {'multioutput': 'raw_values'})
    # uniform: 7*6 + 4*6 = 66, write 1
    assert cost(F.r2_score, pred, true) == (
        66, 12, 1, {'multioutput': 'uniform_average'})


# Bytes through the hook: scores and labels are read in their own dtypes.

def _bytes(fn, *args, name, **kwargs):
    with ComputationalCostHook() as cch:
        fn(*args, **kwargs)
    record = cch.layer_report[name]
    return record['mread'], record['mwrite']


def test_accuracy_bytes_mixed_dtypes():
    y = _scores(4, 3).astype(np.float16)
    t = np.array([0, 1, 2, 1], np.int32)
    # y 12*2 = 24 + t 4*4 = 16 -> 40; one float16 written: 2
    assert _bytes(F.accuracy, y, t, name='Accuracy-1') == (40, 2)
    y = _scores(2, 5)
    t = np.array([1, -1], np.int8)
    # y 10*4 = 40 + t 2*1 = 2 + ignore_label 1 (t's dtype) -> 43; 4
    assert _bytes(F.accuracy, y, t, ignore_label=-1,
                  name='Accuracy-1') == (43, 4)


def test_accuracy_bytes_float64():
    y = _scores(4, 3).astype(np.float64)
    t = np.array([0, 1, 2, 1], np.int64)
    # y 12*8 = 96 + t 4*8 = 32 + ignore_label 8 -> 136; 8
    assert _bytes(F.accuracy, y, t, ignore_label=0,
                  name='Accuracy-1') == (136, 8)


def test_binary_accuracy_bytes():
    y = np.zeros((2, 3), np.float16)
    t = np.zeros((2, 3), np.int32)
    # y 6*2 = 12 + t 6*4 = 24 + the label -1 4 -> 40; 2
    assert _bytes(F.binary_accuracy, y, t, name='BinaryAccuracy-1') == (
        40, 2)


def test_classification_summary_bytes():
    y = _scores(4, 3)
    t = np.array([0, 1, 2, 0], np.int64)
    # y 12*4 = 48 + t 4*8 = 32 + ignore_label 8 + beta 4 -> 92
    # written: 4 outputs of L = 3, 8 bytes each (float64, int64) -> 96
    assert _bytes(F.classification_summary, y, t, label_num=3,
                  name='ClassificationSummary-1') == (92, 96)


def test_r2_score_bytes():
    pred, true = _pair(2, 3)
    pred, true = pred.astype(np.float16), true.astype(np.float16)
    # 6*2 + 6*2 = 24; uniform average: one float16, 2
    assert _bytes(F.r2_score, pred, true, name='R2_score-1') == (24, 2)
    pred, true = pred.astype(np.float64), true.astype(np.float64)
    # 6*8 + 6*8 = 96; raw values: 3 float64, 24
    assert _bytes(F.r2_score, pred, true, multioutput='raw_values',
                  name='R2_score-1') == (96, 24)
