"""Scratch figures of the connection, normalization, pooling, RNN and loss
functions that ``test_scratch.py`` does not cover, against
tracemalloc, call by call, on NumPy (the probe and allowances of
``tests/scratch_probe.py``).  Each figure is derived by hand in a comment.
"""

import chainer
import chainer.functions as F
import numpy as np
import pytest

from chainer_computational_cost import cost_calculators as cc
from scratch_probe import backprop
from scratch_probe import rand
from scratch_probe import buffers
from scratch_probe import check
from scratch_probe import probe
from scratch_probe import PY


@pytest.fixture
def rng():
    return np.random.RandomState(0)


def _labels(rng, shape, lo=0, hi=2):
    return rng.randint(lo, hi, shape).astype(np.int32)


# Connection

def test_bilinear_and_its_gradient(rng):
    e1, e2, W = rand(rng, 64, 32), rand(rng, 64, 32), rand(rng, 32, 32, 16)
    V1, V2, b = rand(rng, 32, 16), rand(rng, 32, 16), rand(rng, 16)
    calls = probe(lambda: backprop(F.bilinear(e1, e2, W, V1, V2, b)))
    # the outer products (N, J, K) = 64*32*32 floats = 262144 bytes;
    # e1.dot(V1) is N*L = 64*16 floats = 4096: max(262144, 4096)
    check(calls, 'BilinearFunction', 262144)
    # outer products (J, K, N), 262144, freed; gy W (N, J, K), 262144,
    # alive while gy.dot(V1.T) (N*J = 2048 floats = 8192) is added into
    # ge1: 262144 + 8192 = 270336
    check(calls, 'BilinearFunctionGrad', 270336)
    calls = probe(lambda: backprop(F.bilinear(e1, e2, W)))
    # without the linear terms: 262144 for both
    check(calls, 'BilinearFunction', 262144)
    check(calls, 'BilinearFunctionGrad', 262144)


# Losses

def test_sigmoid_cross_entropy_and_its_gradient(rng):
    x, t = rand(rng, 256, 256), _labels(rng, (256, 256))
    calls = probe(lambda: F.sigmoid_cross_entropy(x, t).backward())
    # n = 65536: x >= 0 (n bytes) and t - (x >= 0) (4n), then x * that
    # in float64 (8n) with it; abs(x) (4n, negated in place: 256 KiB),
    # exp and log1p (4n each, two alive with the product): 8n + 4n + 4n
    # = 16n = 1048576 (the differences are written into the float64
    # product)
    check(calls, 'SigmoidCrossEntropy', 1048576)
    # y = sigmoid(x) (4n), gy * mask (4n), y - t (float64, 8n, the
    # product written into it), numpy.divide's new array (8n): 4n + 8n
    # + 8n = 20n, of which y (4n) is freed at the end; the output 4n is
    # what stays: 20n - 4n = 16n = 1048576
    check(calls, 'SigmoidCrossEntropyGrad', 1048576)


def test_sigmoid_cross_entropy_below_256_kib(rng):
    x, t = rand(rng, 64, 64), _labels(rng, (64, 64), -1, 2)
    calls = probe(lambda: backprop(
        F.sigmoid_cross_entropy(x, t, reduce='no')))
    # n = 4096, nothing elided: the product (8n) and log1p (4n) alive
    # when the difference (8n) is made: 20n; then the cast copy (the
    # output, 4n, what stays) beside the loss: 8n + 4n.  20n - 4n = 16n
    # = 65536.  x * (t - (x >= 0)) casts both operands to float64: 2
    # buffers of 4096 doubles (not counted).
    check(calls, 'SigmoidCrossEntropy', 65536, buffers(2, 4096, 8))
    # y (4n), gy * mask (4n), y - t (8n), the product (8n): 24n; then
    # the cast copy (the output, 4n) beside the product, y freed at the
    # end: 24n - 4n = 20n = 81920.  y - t casts both operands to float64:
    # 2 buffers of 4096 doubles (not counted).
    check(calls, 'SigmoidCrossEntropyGrad', 81920, buffers(2, 4096, 8))


# Normalization

def test_group_normalization_and_its_gradients(rng):
    x, gamma, beta = rand(rng, 16, 16, 16, 16), rand(rng, 16), rand(rng, 16)
    calls = probe(lambda: backprop(F.group_normalization(x, 4, gamma, beta)))
    # |x| = 65536 floats = 262144 bytes: x - mean and its square alive
    # together, the first becomes y: 262144.  The means over the rows are
    # buffered reductions: 1 buffer.
    check(calls, 'GroupNormalization', 262144, buffers(1, 65536))
    # gy * x_hat before its sum: 262144 (1 buffer for the sum)
    check(calls, '_ScaleShiftGrad', 262144, buffers(1, 65536))
    # gx_hat - avg and x_hat * avg2 (2 * 262144), the difference written
    # into the first (256 KiB), alive with gx beside the two row means
    # (2 * 64 rows * 4 = 512): 262656 above gx
    check(calls, '_XHatGrad', 262656, buffers(1, 65536))


def test_group_normalization_casts_and_small_arrays(rng):
    x = rand(rng, 16, 16, 16, 16, dtype=np.float16)
    gamma, beta = rand(rng, 16), rand(rng, 16)
    calls = probe(lambda: F.group_normalization(x, 4, gamma, beta))
    # float16 x, float32 gamma: x - mean in float32 (I = 4*65536 =
    # 262144) and its square, then the float16 copy y (O = 131072):
    # max(2I, I + O) - O = 393216 (1 buffer of the reductions)
    check(calls, 'GroupNormalization', 393216, buffers(1, 65536))
    x, gamma, beta = rand(rng, 4, 8, 8, 8), rand(rng, 8), rand(rng, 8)
    calls = probe(lambda: backprop(F.group_normalization(x, 4, gamma, beta)))
    # |x| = 2048 floats = 8192 bytes, below 256 KiB: the difference is a
    # new array, 2 * 8192 + two row means of 16 floats = 16512 above gx
    check(calls, '_XHatGrad', 16512, buffers(1, 2048))


def test_batch_renormalization(rng):
    x, gamma, beta = rand(rng, 256, 256), rand(rng, 256), rand(rng, 256)
    mean, var = np.zeros(256, np.float32), np.ones(256, np.float32)
    calls = probe(lambda: F.batch_renormalization(
        x, gamma, beta, 2.0, 1.0, running_mean=mean, running_var=var))
    # x_hat and x_hat * r + d are kept; gamma * x_hat_renorm (65536
    # floats = 262144) alive while astype copies y, beside the mean,
    # variance, running deviation and d (4 * 256 floats = 4096): 266240
    check(calls, 'BatchRenormalizationFunction', 266240)


def test_local_response_normalization_and_its_gradient(rng):
    for shape, grad in (((16, 16, 16, 16), 3), ((4, 8, 8, 8), 4)):
        x = rand(rng, *shape)
        X = x.size * 4
        calls = probe(lambda: backprop(F.local_response_normalization(x)))
        # x**2 and its window sums: 2X (65536 floats: X = 262144; 2048
        # floats: X = 8192)
        check(calls, 'LocalResponseNormalization', 2 * X)
        # summand, its sums, gy * scale and 2 alpha beta x (times the
        # sums in place from 256 KiB on): 4X, gx written into gy * scale:
        # 3X above it; below 256 KiB one more product and a new
        # difference: 5X - X = 4X
        check(calls, 'LocalResponseNormalizationGrad', grad * X)


# Pooling

def test_unpooling_2d_and_its_gradient(rng):
    x = rand(rng, 16, 16, 16, 16)
    calls = probe(lambda: backprop(F.unpooling_2d(x, 3, 2, 1)))
    # out 2*15 + 3 - 2 + 1 - 2 = 30 (cover_all); |x| = 65536 floats =
    # 262144 bytes; tile: 3*262144 = 786432 with G = 9*262144 = 2359296;
    # image 256*(30+2+2-1)^2 floats = 1115136
    # max(786432 + 2359296 - 1115136, 2359296) = 2359296.  col2im adds 9
    # strided slices: 3 buffers.
    check(calls, 'Unpooling2D', 2359296, buffers(3, 65536))
    # gy (16, 16, 30, 30): windows (30 + 2 - 3 + 2 - 1) // 2 + 1 = 16;
    # padded 256*33*33 floats = 1115136, columns 256*9*256 floats =
    # 2359296, gx 262144: max(1115136 + 2359296 - 262144, 2359296)
    check(calls, 'Unpooling2DGrad', 3212288)
    calls = probe(lambda: backprop(F.unpooling_2d(x, 2, 2, cover_all=False)))
    # k = s = 2, no padding, out 32 = 2*16: the integer-scale path, y
    # copied from a strided view and gx summed from a view of gy: none
    # (the sum is a buffered reduction: 1 buffer)
    check(calls, 'Unpooling2D', 0)
    check(calls, 'Unpooling2DGrad', 0, buffers(1, 65536))


def test_unpooling_nd_and_its_gradient(rng):
    x = rand(rng, 4, 8, 8, 8, 8)
    calls = probe(lambda: backprop(F.unpooling_nd(x, 2, 2, cover_all=False)))
    # |x| = 16384 floats = 65536; tile: 131072, then 262144 with it
    # (393216), then 524288 with that (786432); G = 524288; image
    # 32*17^3 floats = 628864: max(786432 - 628864, 524288) = 524288
    # (col2im's strided adds: 3 buffers)
    check(calls, 'UnpoolingND', 524288, buffers(3, 16384))
    # gy (4, 8, 16, 16, 16) padded 32*17^3 floats = 628864, columns
    # 32*8*8^3 floats = 524288, gx 65536:
    # max(628864 + 524288 - 65536, 524288) = 1087616
    check(calls, 'UnpoolingNDGrad', 1087616)


def test_upsampling_2d_and_its_gradient(rng):
    x = rand(rng, 16, 16, 16, 16)

    def step():
        y, indexes = F.max_pooling_2d(x, 2, 2, cover_all=False,
                                      return_indices=True)
        backprop(F.upsampling_2d(y, indexes, 2, 2, outsize=(16, 16)))
    calls = probe(step)
    # zeros of y 65536 floats = 262144, padded 256*17*17 floats = 295936,
    # columns 256*4*8*8 floats = 262144 (all three alive), the reshaped
    # copy (262144), an int64 arange of 16384 (131072), image 295936:
    # max(262144 + 295936 + 262144, 2*262144, 262144 + 131072,
    # 262144 + 295936) - 295936 = 524288
    check(calls, 'Upsampling2D', 524288)
    # padded gy 295936 and columns 262144, then the copy 262144, then the
    # arange 131072 and gx 65536: max(558080, 524288, 458752) - 65536
    check(calls, 'Upsampling2DGrad', 492544)


# Losses without labels, and hinge

def test_pairwise_losses(rng):
    x0, x1 = rand(rng, 256, 256), rand(rng, 256, 256)
    # |x0| = 65536 floats = 262144 bytes
    calls = probe(lambda: backprop(F.squared_error(x0, x1)))
    # x0 - x1 alive while diff * diff makes y: 262144
    check(calls, 'SquaredError', 262144)
    calls = probe(lambda: F.mean_squared_error(x0, x1))
    # the raveled difference before dot: 262144
    check(calls, 'MeanSquaredError', 262144)
    calls = probe(lambda: F.mean_absolute_error(x0, x1))
    # abs of the difference (the difference is kept): 262144
    check(calls, 'MeanAbsoluteError', 262144)
    calls = probe(lambda: F.huber_loss(x0, x1, 0.5, reduce='no'))
    # the linear part beside the squared part (y): 262144
    check(calls, 'HuberLoss', 262144)
    calls = probe(lambda: F.huber_loss(x0, x1, 0.5))
    # both parts summed along axis 1 into y: 2 * 262144 (1 buffer)
    check(calls, 'HuberLoss', 524288, buffers(1, 65536))
    calls = probe(lambda: F.contrastive(x0, x1, _labels(rng, 256)))
    # x0 - x1, its square and the 256 sums (1024): 525312 (the sum: 1
    # buffer)
    check(calls, 'Contrastive', 525312, buffers(1, 65536))


@pytest.mark.chainer7_only
def test_mean_absolute_error_float16_in_float32(rng):
    x0, x1 = (rand(rng, 256, 256, dtype=np.float16) for _ in range(2))
    calls = probe(lambda: F.mean_absolute_error(x0, x1))
    # the float32 copy of the difference and its abs: 2 * 4*65536
    check(calls, 'MeanAbsoluteError', 524288)


def test_triplet_elides_from_256_kib(rng):
    for n, figure in ((256, 2 * 262144 - 1024), (16, 3 * 16384 - 64)):
        a, p, m = (rand(rng, n, 256) for _ in range(3))
        calls = probe(lambda: F.triplet(a, p, m))
        # n = 256: (a - p) squared in place (262144 bytes), (a - m)
        # likewise, the difference in place: 2 * 262144; n = 16 (16384
        # bytes): a new array for each: 3 * 16384; the hinge kept on the
        # node (n floats) is made after the peak: less 4n
        check(calls, 'Triplet', figure)


def test_cross_covariance(rng):
    y, z = rand(rng, 256, 128), rand(rng, 256, 128)
    calls = probe(lambda: F.cross_covariance(y, z))
    # centred y and z (2 * 131072) and the covariance 128*128 floats
    # (65536) before vdot: 327680
    check(calls, 'CrossCovariance', 327680)


def test_hinge(rng):
    x, t = rand(rng, 256, 256), _labels(rng, 256, 0, 256)
    calls = probe(lambda: F.hinge(x, t))
    # the copy, 1 + copy, their max (kept): 3 * 262144 - 262144
    check(calls, 'Hinge', 524288)
    calls = probe(lambda: F.hinge(x, t, reduce='no'))
    # as above, then numpy.array copies the loss into y (both kept):
    # 3 * 262144 - 2 * 262144
    check(calls, 'Hinge', 262144)


def test_negative_sampling_and_its_gradient(rng):
    x, W = rand(rng, 256, 128), rand(rng, 100, 128)
    t = _labels(rng, 256, 0, 100)
    draws = np.random.RandomState(1)

    def sampler(shape):
        return draws.randint(0, 100, shape).astype(np.int32)
    calls = probe(lambda: F.negative_sampling(x, t, W, sampler, 5).backward())
    # N = 256, S = 6, D = 128: W[samples] and its masked copy (2 *
    # 256*6*128 floats = 1572864), x's masked copy (256*128 floats =
    # 131072), w x (256*6 floats = 6144): 1710080
    check(calls, 'NegativeSamplingFunction', 1710080)
    # an int64 arange of 256 and its masked copy (4096), then per sample
    # 6 rows of W (3072), 128-element ig * ix (512) and 3 6-element
    # products (72): 7752
    check(calls, 'NegativeSamplingFunctionGrad', 7752)


def test_softmax_cross_entropy_with_more_axes(rng):
    x = rand(rng, 4, 16, 32, 32)
    t = _labels(rng, (4, 32, 32), 0, 16)
    calls = probe(lambda: F.softmax_cross_entropy(x, t).backward())
    # X = 65536 floats = 262144, T = 4096 labels: log_y (X) beside the
    # kept softmax, the class axis moved first and reshaped (a copy, X),
    # mask T, masked labels 4T, arange 8T, fancy indexing's int64 copies
    # 16T, gathered 4T: X + X + 33T = 659456
    check(calls, 'SoftmaxCrossEntropy', 659456)
    # mask T, masked labels 4T, two index arrays 16T, the int64 copies
    # 16T and the decremented values 4T: 41T = 167936
    check(calls, '_SoftmaxCrossEntropyGrad_NoDoubleBackprop', 167936)


@pytest.mark.chainer7_only
def test_softmax_cross_entropy_soft_targets(rng):
    x = rand(rng, 256, 256)
    t = rng.rand(256, 256).astype(np.float32)
    t /= t.sum(axis=1, keepdims=True)
    calls = probe(lambda: F.softmax_cross_entropy(x, t).backward())
    # X = 262144: log_y and t * log_y beside the kept softmax: 2X (the
    # sum over axis 1: 1 buffer)
    check(calls, 'SoftmaxCrossEntropy', 524288, buffers(1, 65536))
    # the softmax's copy (X, freed once y - t is made), the mask (65536
    # bools) and the masked targets (X): 589824
    check(calls, '_SoftmaxCrossEntropyGrad_NoDoubleBackprop', 589824)


# RNN cells

@pytest.mark.chainer7_only
def test_slstm_and_its_gradient(rng):
    for n, forward in ((64, 8), (256, 7)):
        c1, c2 = rand(rng, n, 256), rand(rng, n, 256)
        x1, x2 = rand(rng, n, 1024), rand(rng, n, 1024)
        U = n * 256 * 4  # 65536 or 262144 bytes
        calls = probe(lambda: F.sum(F.slstm(c1, c2, x1, x2)[1]).backward())
        # six gates and the output gate's sum and temporaries (9U), the
        # products of c and their sums: 10U, 9U from 256 KiB (elided
        # sums); c and h stay: 8U or 7U
        check(calls, 'SLSTM', forward * U)
        # gx1, gx2 (8U), seven gates and tanh(c) (8U), g_c (U) and an
        # expression's three temporaries: 20U, less the 10U of gradients
        check(calls, 'SLSTMGrad', 10 * U)


@pytest.mark.chainer7_only
def test_tree_lstm(rng):
    for n, children, figure in ((64, 2, 2), (256, 2, 1), (64, 1, 1)):
        cs = [rand(rng, n, 256) for _ in range(children)]
        x = rand(rng, n, (3 + children) * 256)
        U = n * 256 * 4  # 65536 or 262144 bytes
        calls = probe(lambda: F.tree_lstm(*(cs + [x])))
        # a*i, the running sum, the next product and the new sum (4U),
        # then c, tanh(c) and h (3U): 2U above c and h; one child or
        # 256 KiB (the sum written in place): 3U, so U
        check(calls, 'TreeLSTM', figure * U)


def test_decorrelated_batch_normalization_and_its_gradient(rng):
    for shape, copy in (((64, 16, 8, 8), 262144), ((1, 16, 64, 64), 0)):
        x = rand(rng, *shape)
        with np.errstate(divide='ignore', invalid='ignore'):
            calls = probe(lambda: backprop(
                F.decorrelated_batch_normalization(x, groups=2)))
        # X = 65536 floats = 262144; x - mean alive while the whitened
        # arrays are made: X, plus 4 matrices of 2*8*8 floats (2048)
        check(calls, 'DecorrelatedBatchNormalization', 264192)
        # gy regrouped (a copy at batch 64, none at batch 1), its
        # projection, R, R^T V^-1/2 and gx: 3X + copy above gx, plus 8
        # matrices (4096): 1052672 or 790528
        check(calls, 'DecorrelatedBatchNormalizationGrad',
              3 * 262144 + copy + 4096)
    x = rand(rng, 64, 16, 8, 8)
    mean, projection = rand(rng, 2, 8), rand(rng, 2, 8, 8)
    calls = probe(lambda: F.fixed_decorrelated_batch_normalization(
        x, mean, projection, groups=2))
    # the regrouped copy and x - mean, then x - mean beside y: X above y
    # (subtracting the expanded mean walks strided views: 1 buffer)
    check(calls, 'FixedDecorrelatedBatchNormalization', 262144,
          buffers(1, 65536))


def test_embed_id_and_shift(rng):
    W = rand(rng, 1000, 128)
    x = rng.randint(0, 1000, 512).astype(np.int32)
    calls = probe(lambda: F.embed_id(x, W))
    # W[x] with int32 labels: their int64 copy, 8*512 = 4096
    check(calls, 'EmbedIDFunction', 4096)
    x[::7] = -1
    calls = probe(lambda: F.embed_id(x, W, ignore_label=-1))
    # the mask (512 bytes) and the gathered rows 512*128 floats =
    # 262144 beside y (where's loop casts the scalar 0 and broadcasts
    # the mask: 1 buffer): 262656
    check(calls, 'EmbedIDFunction', 262656, buffers(1, 65536))
    x = rand(rng, 4, 16, 16, 16)
    calls = probe(lambda: backprop(F.shift(x, ksize=3)))
    # padded by 1 on each side: 4*16*18*18 floats = 82944 (the
    # gradient is a Shift too)
    check(calls, 'Shift', 82944)


# Paths met by the conformance test's inputs

def test_convolution_2d_grad_w_copies_a_gappy_gy(rng):
    x, W = rand(rng, 16384, 1, 1, 1), rand(rng, 2, 1, 3, 1)
    y = F.convolution_2d(x, W, stride=(2, 1), pad=1)
    # gy (16384, 2, 1, 3) as a transposed view: neither C- nor
    # F-contiguous, an axis of 1: Chainer copies it C-contiguous first
    # (16384*6 floats = 393216, alive throughout)
    y.grad = rng.rand(16384, 3, 2).astype(np.float32).transpose(
        0, 2, 1)[:, :, None, :]
    calls = probe(lambda: y.backward())
    # padded x 16384*4*3 floats = 786432, columns 16384*9 floats =
    # 589824; tensordot copies gy (393216: (2, 3N) does not merge) and
    # the columns (589824), gW 24 bytes:
    # 393216 + max(786432 + 589824, 589824 + 983040 + 24) - 24 = 1966080
    check(calls, 'Convolution2DGradW', 1966080)


@pytest.mark.chainer7_only
def test_max_pooling_with_indexes_in_double_backward(rng):
    x = rand(rng, 16, 16, 16, 16)
    y = F.max_pooling_2d(x, 2, 2, cover_all=False)
    gy = chainer.Variable(np.ones(y.shape, np.float32))
    gx, = chainer.grad([y], [x], [gy], enable_double_backprop=True)
    calls = probe(lambda: backprop(gx))
    # ggx padded 256*17*17 floats = 295936 and its columns 256*4*64
    # floats = 262144, their copy with the window last (262144), an int64
    # arange of 16384 (131072) and the gathered 16384 floats (65536):
    # max(558080, 524288, 458752) - 65536 = 492544
    check(calls, 'MaxPoolingNDWithIndexes', 492544)


def test_local_convolution_2d_keeps_two_window_copies(rng):
    x, W = rand(rng, 4096, 2, 4, 4), rand(rng, 3, 3, 3, 2, 2, 2)
    calls = probe(lambda: F.local_convolution_2d(x, W))
    # each window's (4096, 8) copy is 131072 bytes; the previous one is
    # still referenced when the next is made: 262144; the product is
    # 4096*3 floats = 49152: max(2*131072, 131072 + 49152) = 262144
    check(calls, 'LocalConvolution2DFunction', 262144)


def test_normalize_and_layer_normalization_row_arrays(rng):
    x = rand(rng, 256, 256)
    calls = probe(lambda: F.normalize(x))
    # the 256 norms beside y: 1024 (the squares are freed before y; the
    # sum and the division broadcast: 1 buffer)
    check(calls, 'NormalizeL2', 1024, buffers(1, 65536))
    x, gamma, beta = rand(rng, 24576, 4), rand(rng, 4), rand(rng, 4)
    calls = probe(lambda: F.layer_normalization(x, gamma, beta))
    # X = 393216, R = 24576 floats = 98304: max(2X + 4R, 3X + 2R) =
    # 1376256 (the row means: 1 buffer)
    check(calls, 'LayerNormalization', 1376256, buffers(1, 98304))


def test_softmax_cross_entropy_fancy_index_buffers(rng):
    x = rand(rng, 16384, 4)
    t = _labels(rng, 16384, 0, 4)
    calls = probe(lambda: F.softmax_cross_entropy(x, t).backward())
    # X = 262144, T = 16384: log_y beside the kept softmax (2X), the
    # mask, masked labels, arange and gathered values 17T = 278528 and
    # the fancy index's two int64 buffers counted as 16T = 262144 (NumPy
    # stops them at 8192 each, 131072: the figure is a bound, over by
    # 16 * (16384 - 8192) = 131072): 2X + 540672 - X = 802816
    # mask, masked labels, decremented values (9T), arange (8T) and the
    # buffers: 278528 + 262144 = 540672
    for name, figure in (('SoftmaxCrossEntropy', 802816),
                         ('_SoftmaxCrossEntropyGrad_NoDoubleBackprop',
                          540672)):
        (measured, got), = calls[name]
        assert got == figure
        assert -PY <= figure - 131072 - measured <= PY, measured


# CuPy figures (by the code paths, no GPU needed)

def test_cupy_figures_of_these_modules(rng):
    x, gamma, beta = rand(rng, 2, 8, 4, 4), rand(rng, 8), rand(rng, 8)
    gn = F.group_normalization(x, 4, gamma, beta).creator
    lrn = F.local_response_normalization(x)
    lrn_grad = chainer.grad([lrn], [x], [chainer.Variable(
        np.ones(lrn.shape, np.float32))], enable_double_backprop=True)[0]
    unpool = F.unpooling_2d(x, 3, 2, 1).creator
    inputs = (x.array, gamma.array, beta.array)
    with chainer.using_config('use_cudnn', 'always'):
        # cuDNN's group normalization: the zeroed dummy beta, N G = 8
        # floats = 32
        assert cc.scratch_of(gn, inputs, backend='cupy') == 32
    with chainer.using_config('use_cudnn', 'never'):
        # x - mean and its square: |x| = 256 floats = 1024
        assert cc.scratch_of(gn, inputs, backend='cupy') == 1024
    # x**2 becomes y in place: none; the gradient's summand: 1024
    assert cc.scratch_of(lrn.creator, (x.array,), backend='cupy') == 0
    node = lrn_grad.creator
    assert type(node).__name__ == 'LocalResponseNormalizationGrad'
    assert cc.scratch_of(node, [i.data for i in node.inputs],
                         backend='cupy') == 1024
    # CuPy's tile: the columns 9 * 1024 = 9216 (col2im_gpu writes y)
    assert cc.scratch_of(unpool, (x.array,), backend='cupy') == 9216


# The backward of old-style Functions (measured as '<type> backward' by
# scratch_probe's probe) and gradients of 256 KiB and more

@pytest.mark.chainer7_only  # Chainer 6's TreeLSTM backward is no old-style
def test_tree_lstm_backward(rng):
    for n, children, figure in ((64, 2, 4), (256, 2, 3), (256, 1, 4)):
        cs = [rand(rng, n, 256) for _ in range(children)]
        x = rand(rng, n, (3 + children) * 256)
        U = n * 256 * 4  # 65536 or 262144 bytes
        calls = probe(lambda: backprop(F.tree_lstm(*(cs + [x]))[0]))
        # tanh(c) and tmp (2U) beside a gate's expression of two
        # temporaries: 4U; 3U from 256 KiB with two children
        check(calls, 'TreeLSTM backward', figure * U)


def test_batch_renormalization_backward(rng):
    x, gamma, beta = rand(rng, 256, 256), rand(rng, 256), rand(rng, 256)
    mean, var = np.zeros(256, np.float32), np.ones(256, np.float32)
    calls = probe(lambda: backprop(F.batch_renormalization(
        x, gamma, beta, 2.0, 1.0, running_mean=mean, running_var=var)))
    # 65536 floats = 262144 bytes: gx's expression keeps two arrays at
    # each step, the last one while astype copies it into gx: 2 * 262144
    # less gx: 262144.  The per-channel sums over axis 0 are buffered:
    # 1 buffer.
    check(calls, 'BatchRenormalizationFunction backward', 262144,
          buffers(1, 65536))


def test_fixed_decorrelated_batch_normalization_gradient(rng):
    x = rand(rng, 64, 16, 8, 8)  # 65536 floats = 262144 bytes
    mean, projection = rng.rand(1, 16).astype(np.float32), \
        rng.rand(1, 16, 16).astype(np.float32)
    calls = probe(lambda: backprop(F.fixed_decorrelated_batch_normalization(
        x, mean, projection, 1)))
    # gy and x regrouped to (1, 16, 4096): copies (2 * 262144); rhs and
    # x_hat - rhs (2 * 262144): 1048576 above gx's buffer and gP
    check(calls, 'FixedDecorrelatedBatchNormalizationGrad', 1048576)


def test_ctc_backward(rng):
    # T = 20 steps of (B, V) = (256, 32), labels of L = 5: S = 11 states
    xs = [rand(rng, 256, 32) for _ in range(20)]
    t = rng.randint(1, 32, (256, 5)).astype(np.int32)
    calls = probe(
        lambda: F.connectionist_temporal_classification(xs, t, 0).backward())
    # Q = 20*256*11 floats = 225280 bytes, |x| = 20*256*32 floats =
    # 655360: max(2Q, Q + |x|, |x| + 20*256 mask bytes) = 880640.  The
    # mask multiplies y as a float32 cast: 1 buffer.
    check(calls, 'ConnectionistTemporalClassification backward', 880640,
          buffers(1, 163840))


#: The Python objects of a CTC forward, beyond ``PY``: its four nested
#: Python functions' frames, NumPy's indexing iterators and numpy.ma's
#: masked array, alive at the peak (tracemalloc measures 4932 bytes over
#: the figure of a T = 3, B = 2, V = 2, L = 0 input, whose arrays take
#: 516 bytes, and 4.8 to 5.2 KiB at every size below).
CTC_OBJECTS = 2048


@pytest.mark.parametrize('T, B, V, L, dtype, figure', [
    # X = 20*256*32 = 163840, Q = 20*256*11 = 56320, R = 256*11 = 2816,
    # TB = 5120: 2X s + Q s + 2R s = 1310720 + 225280 + 22528, 8R = 22528,
    # 8B + 4T = 2048 + 80, 4TB = 20480; buffers 8 * (3 * 8192 + 5120) =
    # 237568: 1841232
    (20, 256, 32, 5, np.float32, 1841232),
    # T = 10: X = 81920, Q = 28160, TB = 2560: 655360 + 112640 + 22528 +
    # 22528 + 2048 + 40 + 10240 + 8 * (3 * 8192 + 2816) = 1044520
    (10, 256, 32, 5, np.float32, 1044520),
    # B = 64: X = 40960, Q = 14080, R = 704, TB = 1280: 327680 + 56320 +
    # 5632 + 5632 + 512 + 80 + 5120 + 8 * (3 * 8192 + 1280) = 607824
    (20, 64, 32, 5, np.float32, 607824),
    # V = 128: X = 655360, 2X s = 5242880 where 1310720 was: 5773392
    (20, 256, 128, 5, np.float32, 5773392),
    # L = 20: S = 41, Q = 209920, R = 10496: 1310720 + 839680 + 83968 +
    # 83968 + 2128 + 20480 + 8 * (3 * 8192 + 8192) = 2603088
    (20, 256, 32, 20, np.float32, 2603088),
    # float64: 2621440 + 450560 + 45056 + 22528 + 2128 + 20480 + 237568
    # = 3399760
    (20, 256, 32, 5, np.float64, 3399760),
])
def test_ctc_forward(rng, T, B, V, L, dtype, figure):
    xs = [rand(rng, B, V, dtype=dtype) for _ in range(T)]
    t = rng.randint(1, V, (B, L)).astype(np.int32)
    calls = probe(lambda: F.connectionist_temporal_classification(xs, t, 0))
    check(calls, 'ConnectionistTemporalClassification', figure, CTC_OBJECTS)


def _double_backward(fn, xs, outputs):
    """Backward from ones through the outputs ``outputs`` of ``fn(*xs)``,
    then again from ones through the gradients of ``xs``."""
    ys = fn(*xs)
    ys = [ys[k] for k in outputs]
    chainer.backward(ys, [chainer.Variable(np.ones_like(y.array))
                          for y in ys], enable_double_backprop=True)
    gs = [x.grad_var for x in xs]
    for x in xs:
        x.cleargrad()
    chainer.backward(gs, [chainer.Variable(np.ones_like(g.array))
                          for g in gs])


@pytest.mark.parametrize('n, outputs, units', [
    # U = 255*256 floats = 261120 bytes (< 256 KiB): 15 arrays kept, 3
    # more, an expression's 3 temporaries: 21U
    (255, (0, 1), 21),
    # from 256 KiB (U = 262144) two temporaries: 20U
    (256, (0, 1), 20),
    # no gradient of c: its gradient (|c_prev| = U) is dropped: 22U
    (255, (1,), 22),
    # no gradient of h: its gradient (U) is dropped: 20U + U
    (256, (0,), 21),
])
@pytest.mark.chainer7_only  # chainer.backward
def test_lstm_double_backward(rng, n, outputs, units):
    c, x = rand(rng, n, 256), rand(rng, n, 1024)
    calls = probe(lambda: _double_backward(F.lstm, [c, x], outputs))
    # the gates are strided views of x and of its gradient: ufunc buffers
    check(calls, 'LSTMGrad backward', units * n * 256 * 4,
          buffers(3, n * 256))


@pytest.mark.parametrize('n, outputs, units', [
    # U = 261120 bytes: o1 + o2, 24 kept, 3 more, 11 gradients, the last
    # one's 3 temporaries: 42U
    (255, (0, 1), 42),
    # from 256 KiB: 41U
    (256, (0, 1), 41),
    # no gradient of c: its gradient (U) is dropped: 41U + U
    (256, (1,), 42),
])
@pytest.mark.chainer7_only
def test_slstm_double_backward(rng, n, outputs, units):
    c1, c2 = rand(rng, n, 256), rand(rng, n, 256)
    x1, x2 = rand(rng, n, 1024), rand(rng, n, 1024)
    calls = probe(lambda: _double_backward(F.slstm, [c1, c2, x1, x2],
                                           outputs))
    check(calls, 'SLSTMGrad backward', units * n * 256 * 4,
          buffers(3, n * 256))
