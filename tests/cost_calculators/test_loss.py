import numpy as np
import pytest

import chainer
import chainer.functions as F

from chainer_computational_cost import ComputationalCostHook
from helpers import cost


def _x(*shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 10


def _labels(*values):
    return np.array(values, np.int32)


# AbsoluteError / SquaredError

def test_absolute_error():
    x0, x1 = _x(2, 3), _x(2, 3) + 1
    # |x| = 6: 6 subtractions + 6 abs = 12; read 6 + 6; write 6
    assert cost(F.absolute_error, x0, x1) == (12, 12, 6, {})
    assert cost(F.absolute_error, x0, x1, fma=False) == (12, 12, 6, {})
    assert F.absolute_error(x0, x1).size == 6


def test_absolute_error_batch1():
    x0, x1 = _x(1, 4), _x(1, 4)
    # |x| = 4: 2*4 = 8 FLOPs, read 4 + 4, write 4
    assert cost(F.absolute_error, x0, x1) == (8, 8, 4, {})


def test_squared_error():
    x0, x1 = _x(2, 3, 2), _x(2, 3, 2)
    # |x| = 12: 12 subtractions + 12 squares = 24; read 24; write 12
    assert cost(F.squared_error, x0, x1) == (24, 24, 12, {})
    assert cost(F.squared_error, x0, x1, fma=False) == (24, 24, 12, {})
    assert F.squared_error(x0, x1).size == 12


# MeanSquaredError / MeanAbsoluteError

def test_mean_squared_error():
    x0, x1 = _x(2, 3), _x(2, 3)
    # n = 6: 6 subtractions + dot of length 6 (6 with FMA, 11 without)
    # + 1 division: FMA 6 + 6 + 1 = 13, no FMA 6 + 11 + 1 = 18
    assert cost(F.mean_squared_error, x0, x1) == (13, 12, 1, {})
    assert cost(F.mean_squared_error, x0, x1, fma=False) == (18, 12, 1, {})
    assert F.mean_squared_error(x0, x1).size == 1


def test_mean_squared_error_batch1():
    x0, x1 = _x(1, 5), _x(1, 5)
    # n = 5: FMA 5 + 5 + 1 = 11, no FMA 5 + 9 + 1 = 15; read 10
    assert cost(F.mean_squared_error, x0, x1) == (11, 10, 1, {})
    assert cost(F.mean_squared_error, x0, x1, fma=False) == (15, 10, 1, {})


def test_mean_absolute_error():
    x0, x1 = _x(2, 3), _x(2, 3)
    # n = 6: 6 sub + 6 abs + 5 add + 1 div = 18
    assert cost(F.mean_absolute_error, x0, x1) == (18, 12, 1, {})
    assert cost(F.mean_absolute_error, x0, x1, fma=False) == (18, 12, 1, {})
    assert F.mean_absolute_error(x0, x1).size == 1


# HuberLoss

def test_huber_loss_sum_along_second_axis():
    x, t = _x(2, 3), _x(2, 3) * 2
    params = {'delta': 1.0, 'reduce': 'sum_along_second_axis'}
    # |x| = 6, c = 3, 2 outputs: 6 per element (5 + 1 FMA) = 36,
    # + 6 - 2 = 4 additions -> 40; no FMA 7*6 + 4 = 46.
    # read x + t + delta = 6 + 6 + 1 = 13
    assert cost(F.huber_loss, x, t, 1.0) == (40, 13, 2, params)
    assert cost(F.huber_loss, x, t, 1.0, fma=False) == (46, 13, 2, params)
    assert F.huber_loss(x, t, 1.0).size == 2


def test_huber_loss_no_reduce():
    x, t = _x(2, 3), _x(2, 3) * 2
    params = {'delta': 0.5, 'reduce': 'no'}
    # 6*6 = 36 with FMA, 7*6 = 42 without; read 6 + 6 + 1 (delta, whatever
    # its value); 6 written
    assert cost(F.huber_loss, x, t, 0.5, reduce='no') == (36, 13, 6, params)
    assert cost(F.huber_loss, x, t, 0.5, reduce='no', fma=False) == (
        42, 13, 6, params)


def test_huber_loss_3d_and_batch1():
    x, t = _x(2, 3, 4), _x(2, 3, 4) * 2
    # |x| = 24, c = 3, 8 outputs: 6*24 + (24 - 8) = 144 + 16 = 160;
    # read 24 + 24 + 1
    flops, mread, mwrite, _ = cost(F.huber_loss, x, t, 1.0)
    assert (flops, mread, mwrite) == (160, 49, 8)
    assert F.huber_loss(x, t, 1.0).size == 8
    x, t = _x(1, 4), _x(1, 4) * 2
    # |x| = 4, c = 4, 1 output: 6*4 + 3 = 27; read 4 + 4 + 1
    assert cost(F.huber_loss, x, t, 1.0)[:3] == (27, 9, 1)


# Contrastive / Triplet

def test_contrastive():
    x0, x1, y = _x(2, 3), _x(2, 3) + 1, _labels(1, 0)
    mean = {'margin': 1.0, 'reduce': 'mean'}
    # N = 2, K = 3: 6 sub + 6 FMA (sum of squares) + 8*2 per sample = 28,
    # + mean (1 add + 1 div) = 30. no FMA: 6 + 2*5 + 9*2 + 2 = 36.
    # read 6 + 6 + 2 + 1 (margin) = 15
    assert cost(F.contrastive, x0, x1, y) == (30, 15, 1, mean)
    assert cost(F.contrastive, x0, x1, y, fma=False) == (36, 15, 1, mean)
    assert F.contrastive(x0, x1, y).size == 1


def test_contrastive_no_reduce_batch1():
    x0, x1, y = _x(2, 3), _x(2, 3) + 1, _labels(1, 0)
    no = {'margin': 2.0, 'reduce': 'no'}
    # 28 with FMA, 34 without (see above, no mean); read 15; 2 written
    assert cost(F.contrastive, x0, x1, y, margin=2, reduce='no') == (
        28, 15, 2, no)
    assert cost(F.contrastive, x0, x1, y, margin=2, reduce='no',
                fma=False) == (34, 15, 2, no)
    assert F.contrastive(x0, x1, y, reduce='no').size == 2
    x0, x1, y = _x(1, 4), _x(1, 4), _labels(1)
    # N = 1, K = 4: 4 + 4 + 8 + mean 1 = 17; read 4 + 4 + 1 + 1 = 10
    assert cost(F.contrastive, x0, x1, y)[:3] == (17, 10, 1)


def test_triplet():
    a, p, n = _x(2, 3), _x(2, 3) + 1, _x(2, 3) - 1
    mean = {'margin': 0.2, 'reduce': 'mean'}
    # N = 2, K = 3: 12 subtractions, 2*6 = 12 chained FMAs, 2 margin adds,
    # 2 max = 28, + mean 2 = 30. no FMA: 12 + 2*11 + 4 = 38, + 2 = 40.
    # read 3*6 + 1 (margin) = 19
    assert cost(F.triplet, a, p, n) == (30, 19, 1, mean)
    assert cost(F.triplet, a, p, n, fma=False) == (40, 19, 1, mean)
    no = {'margin': 0.5, 'reduce': 'no'}
    assert cost(F.triplet, a, p, n, margin=0.5, reduce='no') == (
        28, 19, 2, no)
    assert F.triplet(a, p, n, reduce='no').size == 2


def test_triplet_batch1():
    a, p, n = _x(1, 2), _x(1, 2), _x(1, 2)
    # N = 1, K = 2: 4 sub + 4 FMA + 2 + mean 1 = 11; no FMA 4 + 7 + 2 + 1;
    # read 3*2 + 1 = 7
    assert cost(F.triplet, a, p, n)[:3] == (11, 7, 1)
    assert cost(F.triplet, a, p, n, fma=False)[:3] == (14, 7, 1)


# CrossCovariance / DeCov

def test_cross_covariance():
    y, z = _x(4, 2), _x(4, 3)
    half = {'reduce': 'half_squared_sum'}
    # N = 4, M = 2, K = 3: means + centring 2*8 + 2*12 = 40, product 6 dots
    # of length 4 (24 FMA / 6*7 = 42), 6 divisions, vdot of 6 (6 / 11)
    # + 1 halving: FMA 40 + 24 + 6 + 6 + 1 = 77, no FMA 40 + 42 + 6 + 12
    assert cost(F.cross_covariance, y, z) == (77, 20, 1, half)
    assert cost(F.cross_covariance, y, z, fma=False) == (100, 20, 1, half)


def test_cross_covariance_no_reduce():
    y, z = _x(4, 2), _x(4, 3)
    no = {'reduce': 'no'}
    # FMA 40 + 24 + 6 = 70, no FMA 40 + 42 + 6 = 88; 2*3 = 6 written
    assert cost(F.cross_covariance, y, z, reduce='no') == (70, 20, 6, no)
    assert cost(F.cross_covariance, y, z, reduce='no', fma=False) == (
        88, 20, 6, no)
    assert F.cross_covariance(y, z, reduce='no').size == 6


def test_decov():
    h = _x(4, 3)
    half = {'reduce': 'half_squared_sum'}
    # N = 4, M = 3: mean + centring 24, 9 dots of length 4 (36 / 63),
    # 9 divisions, vdot of 9 (9 / 17) + 1: FMA 24 + 36 + 9 + 10 = 79,
    # no FMA 24 + 63 + 9 + 18 = 114
    assert cost(F.decov, h) == (79, 12, 1, half)
    assert cost(F.decov, h, fma=False) == (114, 12, 1, half)
    no = {'reduce': 'no'}
    # FMA 24 + 36 + 9 = 69, no FMA 24 + 63 + 9 = 96; 9 written
    assert cost(F.decov, h, reduce='no') == (69, 12, 9, no)
    assert cost(F.decov, h, reduce='no', fma=False) == (96, 12, 9, no)
    assert F.decov(h, reduce='no').size == 9


# Hinge

def test_hinge():
    x, t = _x(2, 3), _labels(1, 0)
    # N = 2, |x| = 6: 2 negations + 6 adds + 6 max = 14, mean 5 + 1 = 6;
    # read 6 + 2 (the 1 of 1 + s x is a literal, not a read)
    assert cost(F.hinge, x, t) == (20, 8, 1, {'norm': 'L1',
                                              'reduce': 'mean'})
    # L2: + 6 squares
    assert cost(F.hinge, x, t, norm='L2') == (
        26, 8, 1, {'norm': 'L2', 'reduce': 'mean'})
    assert cost(F.hinge, x, t, reduce='no', fma=False) == (
        14, 8, 6, {'norm': 'L1', 'reduce': 'no'})
    assert F.hinge(x, t, reduce='no').size == 6


def test_hinge_batch1():
    x, t = _x(1, 4), _labels(2)
    # 1 + 2*4 + 4 (mean) = 13; read 4 + 1
    assert cost(F.hinge, x, t)[:3] == (13, 5, 1)


# SigmoidCrossEntropy

def test_sigmoid_cross_entropy():
    x = _x(2, 3)
    t = np.array([[0, 1, -1], [1, 1, 0]], np.int32)
    # n = 6: 5*6 = 30 with FMA (6*6 = 36 without), mean with normalize:
    # 5 adds + 5 adds (count) + 1 max + 1 division = 12.
    # read 6 + 6 + 1 (the ignore label -1) = 13
    p = {'normalize': True, 'reduce': 'mean'}
    assert cost(F.sigmoid_cross_entropy, x, t) == (42, 13, 1, p)
    assert cost(F.sigmoid_cross_entropy, x, t, fma=False) == (48, 13, 1, p)
    # normalize=False: 5 adds + 1 division = 6
    p = {'normalize': False, 'reduce': 'mean'}
    assert cost(F.sigmoid_cross_entropy, x, t, normalize=False) == (
        36, 13, 1, p)
    p = {'normalize': True, 'reduce': 'no'}
    assert cost(F.sigmoid_cross_entropy, x, t, reduce='no') == (
        30, 13, 6, p)
    assert cost(F.sigmoid_cross_entropy, x, t, reduce='no', fma=False) == (
        36, 13, 6, p)
    assert F.sigmoid_cross_entropy(x, t, reduce='no').size == 6


# SoftmaxCrossEntropy

def _sce_params(reduce='mean', normalize=True, ignore_label=-1,
                class_weight=False):
    return {'reduce': reduce, 'normalize': normalize,
            'ignore_label': ignore_label, 'class_weight': class_weight}


def test_softmax_cross_entropy():
    x, t = _x(2, 3), _labels(2, 0)
    # |x| = 6, M = 2: log-softmax 3*6 = 18, ignore test + mask 2*2 = 4,
    # mean with normalize 2*2 = 4 -> 26; read 6 + 2 + 1 (ignore_label)
    assert cost(F.softmax_cross_entropy, x, t) == (26, 9, 1, _sce_params())
    assert cost(F.softmax_cross_entropy, x, t, fma=False) == (
        26, 9, 1, _sce_params())
    assert F.softmax_cross_entropy(x, t).size == 1


def test_softmax_cross_entropy_options():
    x, t = _x(2, 3), _labels(2, -1)
    # normalize=False: 18 + 4 + (1 add + 1 scaling) = 24; read 6 + 2 + 1
    assert cost(F.softmax_cross_entropy, x, t, normalize=False) == (
        24, 9, 1, _sce_params(normalize=False))
    # reduce='no': 18 + 4 + 2 negations = 24; M = 2 written
    assert cost(F.softmax_cross_entropy, x, t, reduce='no') == (
        24, 9, 2, _sce_params(reduce='no'))
    assert F.softmax_cross_entropy(x, t, reduce='no').size == 2
    # the value of ignore_label changes nothing; class_weight: + 2
    # multiplications, + 3 weights read -> 26 + 2 = 28, read 9 + 3 = 12
    w = np.array([1, 2, 3], np.float32)
    assert cost(F.softmax_cross_entropy, x, t, class_weight=w,
                ignore_label=1) == (
        28, 12, 1, _sce_params(ignore_label=1, class_weight=True))


def test_softmax_cross_entropy_nd():
    x = _x(2, 3, 2, 2)
    t = np.zeros((2, 2, 2), np.int32)
    # |x| = 24, M = 8: 72 + 16 + 16 = 104; read 24 + 8 + 1
    assert cost(F.softmax_cross_entropy, x, t)[:3] == (104, 33, 1)
    # reduce='no': 72 + 16 + 8 = 96, 8 written
    assert cost(F.softmax_cross_entropy, x, t, reduce='no')[:3] == (
        96, 33, 8)
    assert F.softmax_cross_entropy(x, t, reduce='no').size == 8


def test_softmax_cross_entropy_batch1():
    x, t = _x(1, 4), _labels(3)
    # |x| = 4, M = 1: 12 + 2 + 2 = 16; read 4 + 1 + 1
    assert cost(F.softmax_cross_entropy, x, t)[:3] == (16, 6, 1)


soft_target = pytest.mark.skipif(
    int(chainer.__version__.split('.')[0]) < 7,
    reason='soft targets need Chainer >= 7')


@soft_target
def test_softmax_cross_entropy_soft_target():
    x = _x(2, 3)
    t = np.full((2, 3), 1 / 3, np.float32)
    p = {'reduce': 'mean', 'soft_target_loss': 'cross-entropy'}
    # |x| = 6, M = 2: 18 + 2 dots of length 3 (6 / 10) + mean (1 + 1)
    # FMA 18 + 6 + 2 = 26, no FMA 18 + 10 + 2 = 30; read 6 + 6 (no scalar:
    # the ignore label is not used with a soft target)
    assert cost(F.softmax_cross_entropy, x, t) == (26, 12, 1, p)
    assert cost(F.softmax_cross_entropy, x, t, fma=False) == (30, 12, 1, p)
    p = {'reduce': 'no', 'soft_target_loss': 'cross-entropy'}
    # 18 + 6 + 2 negations = 26; 2 written
    assert cost(F.softmax_cross_entropy, x, t, reduce='no') == (
        26, 12, 2, p)
    assert F.softmax_cross_entropy(x, t, reduce='no').size == 2


@soft_target
def test_softmax_cross_entropy_soft_target_kl():
    x = _x(2, 3)
    t = np.full((2, 3), 1 / 3, np.float32)
    kw = {'soft_target_loss': 'kl-divergence'}
    p = {'reduce': 'mean', 'soft_target_loss': 'kl-divergence'}
    # 18 + 6 (dots) + 3*6 (add eps, log, sub) + 2 (mean) = 44;
    # read 6 + 6 + 1 (eps, added to every element) = 13
    assert cost(F.softmax_cross_entropy, x, t, **kw) == (44, 13, 1, p)
    p = {'reduce': 'no', 'soft_target_loss': 'kl-divergence'}
    # no negation: 18 + 10 (dots, no FMA) + 18 = 46
    assert cost(F.softmax_cross_entropy, x, t, reduce='no', fma=False,
                **kw) == (46, 13, 2, p)


# ConnectionistTemporalClassification

def _ctc_inputs():
    xs = [_x(2, 4) for _ in range(3)]          # T = 3, B = 2, V = 4
    t = np.array([[1, 2], [3, 1]], np.int32)   # L = 2 -> S = 5
    return xs, t


def test_ctc():
    xs, t = _ctc_inputs()
    kind = 'ConnectionistTemporalClassification'
    # |x| = 24, TB = 6: softmax 2*24 + 3*6 = 66, log 24, recursions
    # 2*3*2*5*8 = 480, final 2*(2*5 + 1) = 22 -> 592, + mean 2 = 594.
    # read 24 + 4 (t) + 2 + 2 (lengths) = 32 (the blank symbol only builds
    # the path labels: index arithmetic, not a read)
    p = {'blank': 0, 'reduce': 'mean'}
    assert cost(F.connectionist_temporal_classification, xs, t, 0,
                kind=kind) == (594, 32, 1, p)
    p = {'blank': 0, 'reduce': 'no'}
    assert cost(F.connectionist_temporal_classification, xs, t, 0,
                reduce='no', kind=kind, fma=False) == (592, 32, 2, p)
    y = F.connectionist_temporal_classification(xs, t, 0, reduce='no')
    assert y.size == 2


def test_ctc_batch1():
    xs = [_x(1, 3) for _ in range(2)]          # T = 2, B = 1, V = 3
    t = np.array([[1]], np.int32)              # L = 1 -> S = 3
    kind = 'ConnectionistTemporalClassification'
    # |x| = 6, TB = 2: 2*6 + 2*2 = 16, log 6, 2*2*1*3*8 = 96,
    # final 2*3 + 1 = 7, mean 1 -> 126; read 6 + 1 + 1 + 1 = 9
    assert cost(F.connectionist_temporal_classification, xs, t, 0,
                kind=kind)[:3] == (126, 9, 1)


# NegativeSamplingFunction

def _sampler(shape):
    return np.zeros(shape, np.int32)


def test_negative_sampling():
    x, t, W = _x(2, 3), _labels(1, 2), _x(5, 3)
    p = {'sample_size': 2, 'reduce': 'sum'}
    # B = 2, K = 3, D = 3: 6 dots of length 3 (18 / 30), 2 ignore tests,
    # 2 negations, 6 exp + 6 log1p, 2*2 row sums, + 1 (sum):
    # FMA 18 + 4 + 12 + 4 + 1 = 39, no FMA 30 + 4 + 12 + 4 + 1 = 51.
    # read 6 + 2 + min(2*3*3, 15) + 1 (the ignore label -1) = 24
    assert cost(F.negative_sampling, x, t, W, _sampler, 2) == (39, 24, 1, p)
    assert cost(F.negative_sampling, x, t, W, _sampler, 2, fma=False) == (
        51, 24, 1, p)


def test_negative_sampling_no_reduce():
    x, t, W = _x(2, 3), _labels(1, 2), _x(10, 3)
    p = {'sample_size': 2, 'reduce': 'no'}
    # 38 with FMA; W: min(18, 30) = 18 read -> 6 + 2 + 18 + 1 = 27;
    # 2 written
    assert cost(F.negative_sampling, x, t, W, _sampler, 2, reduce='no') == (
        38, 27, 2, p)
    assert F.negative_sampling(x, t, W, _sampler, 2, reduce='no').size == 2


def test_negative_sampling_batch1():
    x, t, W = _x(1, 2), _labels(1), _x(4, 2)
    # B = 1, K = 2, D = 2: 2 dots (4 FMA) + 2 + 2*2 + 1 row sum = 11;
    # read 2 + 1 + min(4, 8) + 1 = 8
    assert cost(F.negative_sampling, x, t, W, _sampler, 1)[:3] == (11, 8, 1)


# Bytes through the hook: every input is read in its own dtype

def _bytes(fn, *args, **kwargs):
    """(mread, mwrite) in bytes, as the hook reports the first call."""
    with ComputationalCostHook() as cch:
        fn(*args, **kwargs)
    first = next(iter(cch.layer_report.values()))
    return first['mread'], first['mwrite']


def test_bytes_softmax_cross_entropy_int_labels():
    t = np.array([0, 2], np.int64)
    # float32 x: 6*4 + int64 t 2*8 + the ignore label 4 = 44; loss 4
    x = np.zeros((2, 3), np.float32)
    assert _bytes(F.softmax_cross_entropy, x, t) == (44, 4)
    # float64 x, int32 t: 6*8 + 2*4 + 8 = 64; + float64 class weights
    # 3*8 = 88; loss 8
    x, t = np.zeros((2, 3), np.float64), t.astype(np.int32)
    assert _bytes(F.softmax_cross_entropy, x, t) == (64, 8)
    w = np.ones(3, np.float64)
    assert _bytes(F.softmax_cross_entropy, x, t, class_weight=w) == (88, 8)
    # float16 x, int32 t, reduce='no': 6*2 + 2*4 + 2 = 22; 2 losses 2*2
    x = np.zeros((2, 3), np.float16)
    assert _bytes(F.softmax_cross_entropy, x, t, reduce='no') == (22, 4)


def test_bytes_sigmoid_cross_entropy_int_labels():
    t = np.zeros((2, 3), np.int32)
    # float32 x 6*4 + int32 t 6*4 + ignore label 4 = 52; loss 4
    x = np.zeros((2, 3), np.float32)
    assert _bytes(F.sigmoid_cross_entropy, x, t) == (52, 4)
    # float64 x 6*8 + int64 t 6*8 + 8 = 104; 6 losses 6*8 = 48
    x, t = np.zeros((2, 3), np.float64), t.astype(np.int64)
    assert _bytes(F.sigmoid_cross_entropy, x, t, reduce='no') == (104, 48)
    # float16 x 6*2 + int64 t 48 + 2 = 62; loss 2
    x = np.zeros((2, 3), np.float16)
    assert _bytes(F.sigmoid_cross_entropy, x, t) == (62, 2)


def test_bytes_ctc_float64():
    xs = [np.zeros((2, 3), np.float64) for _ in range(3)]
    t = np.ones((2, 1), np.int32)
    lengths = np.full((2,), 3, np.int32), np.full((2,), 1, np.int32)
    # x (3, 2, 3) float64 18*8 = 144, t 2*4 = 8, the two length arrays
    # 2*(2*4) = 16 -> 168; the mean loss 8 (in x's dtype, though the
    # first input is an int32 array)
    with ComputationalCostHook() as cch:
        F.connectionist_temporal_classification(xs, t, 0, *lengths)
    record = cch.layer_report['ConnectionistTemporalClassification-1']
    assert (record['mread'], record['mwrite']) == (168, 8)
    # reduce='no' writes B = 2 float64 losses: 16
    with ComputationalCostHook() as cch:
        F.connectionist_temporal_classification(xs, t, 0, *lengths,
                                                reduce='no')
    record = cch.layer_report['ConnectionistTemporalClassification-1']
    assert (record['mread'], record['mwrite']) == (168, 16)


def test_bytes_other_losses_with_labels():
    x = np.zeros((2, 3), np.float32)
    # Hinge: x 24 + int64 t 2*8 = 40; mean loss 4
    assert _bytes(F.hinge, x, np.array([0, 1], np.int64)) == (40, 4)
    x0 = np.zeros((2, 3), np.float64)
    y = np.array([0, 1], np.int32)
    # Contrastive: 48 + 48 + int32 y 8 + the margin 8 = 112; loss 8
    assert _bytes(F.contrastive, x0, x0, y) == (112, 8)
    # NegativeSampling, float64, sample_size 1 (K = 2): x 48, int32 t 8,
    # min(2*2*3, 12) = 12 rows' elements of W 96, ignore label 8 -> 160;
    # the summed loss 8
    W = np.zeros((4, 3), np.float64)

    def sampler(shape):
        return np.zeros(shape, np.int32)
    assert _bytes(F.negative_sampling, x0, y, W, sampler, 1) == (160, 8)


def test_bytes_float16_losses():
    x = np.zeros((2, 3), np.float16)
    # HuberLoss: 12 + 12 + delta 2 = 26; 2 sums along axis 1: 4
    assert _bytes(F.huber_loss, x, x, 1.0) == (26, 4)
    # MeanSquaredError: 12 + 12 = 24; 2
    assert _bytes(F.mean_squared_error, x, x) == (24, 2)


# Gradient nodes (applied by backward())

def _backward(f, x, *args, **kwargs):
    """A callable running ``f(Variable(x), *args)`` and its backward pass
    from a gradient of ones."""
    def run():
        y = f(chainer.Variable(x), *args, **kwargs)
        y.grad = np.ones_like(y.array)
        y.backward()
    return run


def test_sigmoid_cross_entropy_grad():
    x, t = _x(2, 3), np.array([[0, 1, -1], [1, 1, 0]], np.int32)
    kind = 'SigmoidCrossEntropyGrad'
    run = _backward(F.sigmoid_cross_entropy, x, t)
    # n = 6: 8*6 = 48 + g_y / count 1 = 49; read x 6 + g_y 1 + t 6 + the
    # ignore label 1 = 14; write 6
    assert cost(run, kind=kind) == (49, 14, 6, {'reduce': 'mean'})
    assert cost(run, kind=kind, fma=False) == (49, 14, 6, {'reduce': 'mean'})
    run = _backward(F.sigmoid_cross_entropy, x, t, reduce='no')
    # 48; read 6 + 6 + 6 + 1 = 19
    assert cost(run, kind=kind) == (48, 19, 6, {'reduce': 'no'})


def test_softmax_cross_entropy_grad():
    x, t = _x(2, 3), _labels(0, 2)
    kind = '_SoftmaxCrossEntropyGrad_NoDoubleBackprop'
    p = {'reduce': 'mean', 'soft_target': False, 'class_weight': False,
         'cache_score': True}
    run = _backward(F.softmax_cross_entropy, x, t)
    # n = 6, C = 3, M = 2, cached softmax: 6 + 3*2 + 1 (mean) = 13;
    # read y 6 + t 2 + g 1 + ignore label 1 = 10; write 6
    assert cost(run, kind=kind) == (13, 10, 6, p)
    assert cost(run, kind=kind, fma=False) == (13, 10, 6, p)
    w = np.ones(3, np.float32)
    run = _backward(F.softmax_cross_entropy, x, t, cache_score=False,
                    class_weight=w, reduce='no')
    # softmax again 3*6 - 2 = 16, + 6 + 3*2 + class weight 2 = 30;
    # read x 6 + t 2 + g 2 + 1 + weights 3 = 14
    p = {'reduce': 'no', 'soft_target': False, 'class_weight': True,
         'cache_score': False}
    assert cost(run, kind=kind) == (30, 14, 6, p)
    x, t = _x(2, 3, 2), np.array([[0, 1], [2, -1]], np.int32)
    run = _backward(F.softmax_cross_entropy, x, t, reduce='no')
    # n = 12, C = 3, M = 4: 12 + 3*4 = 24; read 12 + 4 + 4 + 1 = 21
    assert cost(run, kind=kind)[:3] == (24, 21, 12)


@pytest.mark.chainer7_only  # soft targets
def test_softmax_cross_entropy_grad_soft_target():
    x, t = _x(2, 3), np.full((2, 3), 1 / 3, np.float32)
    run = _backward(F.softmax_cross_entropy, x, t)
    p = {'reduce': 'mean', 'soft_target': True, 'class_weight': False,
         'cache_score': True}
    # 2*6 + 1 = 13; read y 6 + t 6 + g 1 = 13
    assert cost(run, kind='_SoftmaxCrossEntropyGrad_NoDoubleBackprop') == (
        13, 13, 6, p)


def test_negative_sampling_grad():
    x, t, W = _x(2, 3), _labels(0, 1), _x(4, 3)

    def sampler(shape):
        return np.zeros(shape, np.int32)
    kind = 'NegativeSamplingFunctionGrad'
    run = _backward(lambda x: F.negative_sampling(x, t, chainer.Variable(W),
                                                  sampler, 1), x)
    p = {'sample_size': 1, 'reduce': 'sum'}
    # B = 2, D = 3, K = 2: scores 4 dots of 3: 12 / 20; negations 2*2 = 4;
    # sigmoid parts 4*4 = 16; g_x 6 dots of 2: 12 / 18; g_W 12 / 24.
    # FMA 12 + 4 + 16 + 12 + 12 = 56, no FMA 20 + 4 + 16 + 18 + 24 = 82.
    # read x 6 + min(12, 12) rows of W + g_y 1 + samples 4 + flags 2 = 25;
    # write g_x 6 + g_W 12 = 18
    assert cost(run, kind=kind) == (56, 25, 18, p)
    assert cost(run, kind=kind, fma=False) == (82, 25, 18, p)
    W = _x(2, 3)
    run = _backward(lambda x: F.negative_sampling(
        x, t, chainer.Variable(W), sampler, 1, reduce='no'), x)
    # W has 6 elements: min(12, 6); g_y 2: read 6 + 6 + 2 + 4 + 2 = 20;
    # write 6 + 6
    assert cost(run, kind=kind)[1:3] == (20, 12)


def test_bytes_loss_grads():
    def grad_bytes(run, name):
        with ComputationalCostHook() as cch:
            run()
        record = cch.layer_report[name + '-1']
        return record['mread'], record['mwrite']
    x = np.zeros((2, 3), np.float64)
    t = np.zeros((2, 3), np.int64)
    # x 48 + g_y 8 + int64 t 48 + ignore label 8 = 112; g_x 48
    assert grad_bytes(_backward(F.sigmoid_cross_entropy, x, t),
                      'SigmoidCrossEntropyGrad') == (112, 48)
    w = np.ones(3, np.float64)
    # y 48 + int64 t 2*8 + g 8 + ignore label 8 + weights 24 = 104
    assert grad_bytes(
        _backward(F.softmax_cross_entropy, x, t[:, 0], class_weight=w),
        '_SoftmaxCrossEntropyGrad_NoDoubleBackprop') == (104, 48)

    def sampler(shape):
        return np.zeros(shape, np.int32)
    W = np.zeros((4, 3), np.float64)
    # x 48 + 12 of W 96 + g_y 8 + int32 samples 4*4 + bool flags 2 = 170;
    # g_x 48 + g_W 96
    run = _backward(lambda x: F.negative_sampling(
        x, t[:, 0].astype(np.int32), chainer.Variable(W), sampler, 1), x)
    assert grad_bytes(run, 'NegativeSamplingFunctionGrad') == (170, 144)
