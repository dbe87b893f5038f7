"""Scratch figures (bytes a call allocates and frees inside itself) against
tracemalloc, call by call, on NumPy, with the probe of
``tests/scratch_probe.py`` (its docstring says what tracemalloc sees beside
the modelled buffers).  The figure of each case is also derived by hand in
a comment.
"""

import tracemalloc

import chainer
import chainer.functions as F
import numpy as np
import pytest

from chainer_computational_cost import cost_calculators as cc

from scratch_probe import backprop
from scratch_probe import buffers
from scratch_probe import check
from scratch_probe import probe
from scratch_probe import PY
from scratch_probe import rand


@pytest.fixture
def rng():
    return np.random.RandomState(0)


# Convolution

def test_convolution_2d_and_its_gradients(rng):
    x, W, b = rand(rng, 2, 3, 10, 12), rand(rng, 4, 3, 3, 3), rand(rng, 4)
    calls = probe(lambda: backprop(F.convolution_2d(x, W, b, pad=1)))
    # padded x: 2*3*(10+2)*(12+2) = 1008 floats = 4032 bytes
    # col: 2*3*3*3*10*12 = 6480 floats = 25920; tensordot copies it
    # (batch 2): 25920; y: 2*4*10*12 = 960 floats = 3840
    # max(4032 + 25920 - 3840, 25920 + 25920) = 51840
    check(calls, 'Convolution2DFunction', 51840)
    # gW: the same padded x and col; gy (2, 4, 10, 12) made (4, 240): a
    # copy of 3840; col made (240, 27): a copy of 25920; gW 4*27 floats
    # = 432: max(4032 + 25920 - 432, 25920 + 3840 + 25920) = 55680
    check(calls, 'Convolution2DGradW', 55680)
    # gx, a deconvolution of gy by W: gy made (4, 240), a copy (3840);
    # columns 3*3*3 * 2*10*12 = 6480 floats = 25920; padded image
    # 2*3*12*14 = 1008 floats = 4032 (left alive: gx is its centre):
    # max(3840 + 25920 - 4032, 25920) = 25920.  col2im adds each of the
    # 9 strided slices of 2*3*10*12 = 720 elements: 3 buffers.
    check(calls, 'Deconvolution2DFunction', 25920, buffers(3, 720))


def test_convolution_2d_grad_w_follows_the_layout_of_gy(rng):
    x, W = rand(rng, 2, 3, 10, 12), rand(rng, 4, 3, 3, 3)
    y = F.convolution_2d(x, W, pad=1)
    # y is a transposed view (channels last in memory); ones_like keeps
    # that layout, so gy's axes (out, n, h, w) merge into (4, 240)
    # without a copy: max(4032 + 25920 - 432, 25920 + 25920) = 51840
    y.grad = np.ones_like(y.array)
    calls = probe(lambda: y.backward())
    check(calls, 'Convolution2DGradW', 51840)


def test_convolution_2d_batch_1_makes_no_copy_for_tensordot(rng):
    x, W, b = rand(rng, 1, 3, 10, 12), rand(rng, 4, 3, 3, 3), rand(rng, 4)
    calls = probe(lambda: F.convolution_2d(x, W, b, pad=1))
    # padded 3*12*14 = 504 floats = 2016; col 3*9*120 = 3240 floats =
    # 12960 (a view for tensordot at batch 1); y 480 floats = 1920:
    # max(2016 + 12960 - 1920, 12960) = 13056
    check(calls, 'Convolution2DFunction', 13056)


def test_deconvolution_2d_with_stride_and_bias(rng):
    x, W, b = rand(rng, 2, 4, 9, 10), rand(rng, 4, 3, 3, 3), rand(rng, 3)
    calls = probe(lambda: F.deconvolution_2d(x, W, b, stride=2, pad=1))
    # out: 2*(9-1)+3-2 = 17, 2*(10-1)+3-2 = 19
    # x (2, 4, 9, 10) made (4, 180): a copy, 720 floats = 2880
    # columns 3*3*3 * 2*9*10 = 4860 floats = 19440
    # image 2*3*(17+2+1)*(19+2+1) = 2640 floats = 10560
    # max(2880 + 19440 - 10560, 19440) = 19440.  col2im adds 9 strided
    # slices of 2*3*9*10 = 540 elements (3 buffers), the bias is added
    # into the view y (2*3*17*19 = 1938 elements, 3 buffers).
    check(calls, 'Deconvolution2DFunction', 19440,
          buffers(3, 540) + buffers(3, 1938))


# Pooling

def test_max_pooling_2d_and_its_gradient(rng):
    x = rand(rng, 4, 8, 16, 16)
    calls = probe(lambda: backprop(F.max_pooling_2d(x, 3, 2, 1)))
    # cover_all (the default): out (16 + 2 - 3 + 2 - 1) // 2 + 1 = 9;
    # planes 4*8 = 32; padded 32*(16+2+1)^2 = 11552 floats = 46208; col
    # 32*9*81 = 23328 floats = 93312; y 32*81 floats = 10368; indexes
    # 2592 int64 = 20736
    # max(46208 + 93312 - 10368 - 20736, 2 * 93312) = 186624
    # (Chainer 6's MaxPooling2D takes the argmax before y: 2 * 93312 -
    # 10368 = 176256)
    if 'MaxPoolingND' in calls:
        check(calls, 'MaxPoolingND', 186624)
    else:
        check(calls, 'MaxPooling2D', 176256)
    # columns 2592*9 floats = 93312; image 32*19*19 floats = 46208;
    # positions 2592 int64 = 20736, three at the addition (< 256 KiB)
    # max(93312 + 3*20736 - 46208, 93312 + 20736) = 114048.  col2im adds
    # 9 strided slices of 2592 elements: 3 buffers.
    # (Chainer 6: indexes.ravel() is a view, two arrays at the addition:
    # max(93312 + 41472 - 46208, 114048), the same)
    check(calls, ('MaxPoolingNDGrad', 'MaxPooling2DGrad'), 114048,
          buffers(3, 2592))


def test_average_pooling_2d_and_its_gradient(rng):
    x = rand(rng, 8, 32, 16, 16)
    calls = probe(lambda: backprop(F.average_pooling_2d(x, 2, 2)))
    # planes 256; padded 256*(16+0+1)^2 = 73984 floats = 295936; col
    # 256*4*64 = 65536 floats = 262144; y 256*64 floats = 65536
    # max(295936 + 262144 - 65536, 262144) = 492544
    check(calls, 'AveragePooling2D', 492544)
    # gy 16384 floats = 65536; tile: 2*65536 = 131072, then 262144 with
    # it: 393216; image 256*17*17 floats = 295936
    # max(393216 - 295936, 262144) = 262144.  col2im adds 4 strided
    # slices of 16384 elements: 3 full buffers.
    check(calls, 'AveragePooling2DGrad', 262144, buffers(3, 16384))


def test_max_pooling_grad_positions_elided_at_256_kib(rng):
    x = rand(rng, 2, 64, 32, 32, dtype=np.float16)
    calls = probe(lambda: backprop(F.max_pooling_2d(x, 2, 2)))
    # out (32 + 0 - 2 + 1) // 2 + 1 = 16 (cover_all); gy 2*64*16*16 =
    # 32768 elements; positions 32768 int64 = 262144 bytes: NumPy adds
    # into the flattened copy (two arrays alive, not three)
    # columns 32768*4 halves = 262144; image 128*33*33 halves = 278784
    # max(262144 + 2*262144 - 278784, 262144 + 262144) = 524288
    # (with three: 262144 + 3*262144 - 278784 = 769792; Chainer 6, one
    # array, adds into the arange: max(262144 + 262144 - 278784, 524288))
    check(calls, ('MaxPoolingNDGrad', 'MaxPooling2DGrad'), 524288,
          buffers(3, 32768, 2))


# Normalization

def test_batch_normalization_and_its_gradient(rng):
    x, gamma, beta = rand(rng, 8, 16, 12, 12), rand(rng, 16), rand(rng, 16)
    calls = probe(lambda: backprop(F.batch_normalization(x, gamma, beta)))
    # |x| = 8*16*144 = 18432 floats = 73728 bytes
    # x_hat and x_hat*gamma beside the copy astype makes: 2*73728
    check(calls, 'BatchNormalization', 147456)
    # x_hat, x_hat*ggamma and +gbeta: 3*73728, minus gx: 147456.  Sums
    # over (0, 2, 3) in float32 are buffered reductions: 3 buffers.
    check(calls, 'BatchNormalizationGrad', 147456, buffers(3, 18432))


def test_fixed_batch_normalization_and_its_gradient(rng):
    x = rand(rng, 8, 16, 12, 12)
    stats = [rand(rng, 16) for _ in range(4)]
    calls = probe(lambda: backprop(F.fixed_batch_normalization(x, *stats)))
    # as BatchNormalization: 2 * 73728
    check(calls, 'FixedBatchNormalization', 147456)
    # x_hat, gamma/std * gy, x_hat * gy: 3*73728 - gx = 147456 (buffered
    # sums as above)
    check(calls, 'FixedBatchNormalizationGrad', 147456, buffers(3, 18432))


def test_layer_normalization(rng):
    x, gamma, beta = rand(rng, 256, 128), rand(rng, 128), rand(rng, 128)
    calls = probe(lambda: F.layer_normalization(x, gamma, beta))
    # X = 32768 floats = 131072, R = 256 floats = 1024: mu, x - mu, its
    # square, var, std, 1/std and x_hat (3X + 4R), then x_hat*gamma and
    # the output beside x - mu, x_hat and two rows (4X + 2R): above the
    # output max(2X + 4R, 3X + 2R) = 395264.  The row means are buffered
    # reductions (1 buffer).
    check(calls, 'LayerNormalization', 395264, buffers(1, 32768))


# Activations

def test_relu_gradient_mask(rng):
    x = chainer.Variable(rng.rand(512, 512).astype(np.float32) - 0.5)
    calls = probe(lambda: backprop(F.relu(x)))
    # the bool mask: 512*512 = 262144 bytes; gy * mask casts the mask
    # (a buffer for it and one for the loop: 2 buffers)
    check(calls, 'ReLUGrad2', 262144, buffers(2, 262144))
    assert 'ReLU' not in [n for n in calls if calls[n][0][1]]


def test_softmax_and_log_softmax_with_gradients(rng):
    x = rand(rng, 64, 1000)
    calls = probe(lambda: backprop(F.softmax(x)))
    # row maxima, then row sums: 64 floats = 256 (the max reduction over
    # axis 1 is buffered: 1 buffer)
    check(calls, 'Softmax', 256, buffers(1, 64000))
    # y * sumdx (64000 floats = 256000) and sumdx (256): 256256
    check(calls, '_SoftmaxGrad', 256256, buffers(1, 64000))
    calls = probe(lambda: backprop(F.log_softmax(x)))
    # logsumexp's row maxima and sums: 2 * 256 = 512
    check(calls, 'LogSoftmax', 512, buffers(1, 64000))
    # exp(y), its product with the row sums (256000 bytes each, below
    # 256 KiB: no elision) and the sums: 256000 + 256
    check(calls, 'LogSoftmaxGrad', 256256, buffers(1, 64000))


def test_log_softmax_gradient_not_elided_at_256_kib(rng):
    x = rand(rng, 64, 1024)
    calls = probe(lambda: backprop(F.log_softmax(x)))
    # exp(y) is 65536 floats = 262144 bytes, but its partner (the row
    # sums, 64 floats = 256) is broadcast, so NumPy makes the product
    # apart: 262144 + 256 = 262400 above the output (issue 34)
    check(calls, 'LogSoftmaxGrad', 262400, buffers(1, 65536))


def test_sigmoid_and_its_gradient(rng):
    for n, grad in ((128, 2 * 131072), (256, 262144)):
        x = rand(rng, n, 256)
        calls = probe(lambda: backprop(F.sigmoid(x)))
        # x/2 and its tanh: |x| = n*256 floats
        check(calls, 'Sigmoid', n * 256 * 4)
        # gy*y and 1-y: 2|y| = 2 * 131072 bytes at n = 128; at n = 256
        # (262144 bytes, 256 KiB) the product goes into gy*y: |y|
        check(calls, 'SigmoidGrad', grad)


# Losses

def test_softmax_cross_entropy_and_its_gradient(rng):
    x = rand(rng, 64, 1000)
    t = rng.randint(0, 1000, 64).astype(np.int32)
    calls = probe(lambda: F.softmax_cross_entropy(x, t).backward())
    # log_y (64000 floats = 256000) beside the cached softmax; labels:
    # mask 64, masked labels 64*4, arange 64*8, fancy indexing's int64
    # copies of the int32 labels 64*16, gathered 64*4 = 2112
    # max(2*256 (logsumexp rows), 256000 + 2112) = 258112
    check(calls, 'SoftmaxCrossEntropy', 258112)
    # mask, masked labels, one arange, the int64 copies, the decremented
    # values: 64*(1 + 4 + 8 + 16 + 4) = 2112.  gx *= t_valid casts the
    # mask: 1 buffer of 64000 elements.
    check(calls, '_SoftmaxCrossEntropyGrad_NoDoubleBackprop', 2112,
          buffers(1, 64000))


# Noise

def test_dropout_draws_and_flags(rng):
    x = rand(rng, 256, 256, dtype=np.float16)
    calls = probe(lambda: F.dropout(x, 0.5))
    # float64 draws 8*65536 and bool flags 65536: 589824, of which the
    # float16 mask and y stay (2 * 131072): 327680
    check(calls, 'Dropout', 327680)


# RNN

def test_lstm_and_its_gradient(rng):
    c, x = rand(rng, 32, 256), rand(rng, 32, 1024)
    calls = probe(lambda: F.sum(F.lstm(c, x)[1]).backward())
    # U = 32*256 = 8192 floats = 32768 bytes (< 256 KiB): 6U = 196608
    check(calls, 'LSTM', 196608)
    # 5U of activations + 3U of temporaries: 8U = 262144
    check(calls, 'LSTMGrad', 262144)


def test_lstm_elided_at_256_kib(rng):
    c, x = rand(rng, 256, 256), rand(rng, 256, 1024)
    calls = probe(lambda: F.lstm(c, x))
    # U = 65536 floats = 262144 bytes: a*i + f*c adds into a*i and h is
    # written into tanh(c): 5U = 1310720
    check(calls, 'LSTM', 1310720)


# Linear

def test_linear_copies_a_non_contiguous_input(rng):
    x = rng.rand(64, 512).astype(np.float32)[:, ::2]
    W = rand(rng, 128, 256)
    calls = probe(lambda: F.linear(x, W))
    # x (64, 256) with a stride of 2: dot copies it, 64*256 floats
    check(calls, 'LinearFunction', 65536)
    calls = probe(lambda: F.linear(np.ascontiguousarray(x), W))
    # contiguous: BLAS takes x and W.T as they are
    check(calls, 'LinearFunction', 0)
    # a column slice: rows 640 floats apart, neither C- nor F-contiguous,
    # which NumPy's dot copies too: 64*256 floats = 65536 bytes
    x = rng.rand(64, 640).astype(np.float32)[:, :256]
    check(probe(lambda: F.linear(x, W)), 'LinearFunction', 65536)


def test_tensordot_copies_an_operand_dot_cannot_take(rng):
    # a (64, 256) column slice of a (64, 640) array, contracted on its
    # last axis: already the matrix dot wants, but not contiguous, so dot
    # copies it: 64*256 floats = 65536 bytes; b (256, 32) is taken as is
    a = rng.rand(64, 640).astype(np.float32)[:, :256]
    b = rand(rng, 256, 32)
    check(probe(lambda: F.tensordot(a, b, axes=1)), 'TensorDot', 65536)
    # contiguous: none
    a = np.ascontiguousarray(a)
    check(probe(lambda: F.tensordot(a, b, axes=1)), 'TensorDot', 0)


# The helpers, against NumPy itself

def test_reshape_view_agrees_with_numpy():
    rng = np.random.RandomState(1)
    for _ in range(300):
        ndim = rng.randint(1, 5)
        shape = tuple(int(d) for d in rng.randint(1, 4, ndim))
        a = np.zeros(shape, np.float32)
        if rng.rand() < 0.3:  # a strided view
            a = np.zeros(shape[:-1] + (2 * shape[-1],), np.float32)
            a = a[..., ::2]
        order = tuple(rng.permutation(ndim))
        t = a.transpose(order)
        split = rng.randint(0, ndim + 1)
        newshape = (int(np.prod(t.shape[:split])),
                    int(np.prod(t.shape[split:])))
        strides = cc.reshape_view(t.shape, t.strides, newshape)
        r = t.reshape(newshape)
        assert (strides is not None) == np.shares_memory(r, a), (
            shape, order, split)
        if strides is not None and r.size > 1:
            assert tuple(s for s, d in zip(strides, newshape) if d > 1) \
                == tuple(s for s, d in zip(r.strides, newshape) if d > 1)


def test_tensordot_copies_agrees_with_tracemalloc():
    rng = np.random.RandomState(2)
    strided = rng.rand(40, 100).astype(np.float32)[:, ::2]
    # (a, a_axes, b, b_axes, copies in bytes)
    cases = [
        # a made (4*9, 30*8): a copy, 4*30*8*9 floats; b (240, 5): a view
        (rng.rand(4, 30, 8, 9), (1, 2), rng.rand(30, 8, 5), (0, 1),
         4 * 4 * 30 * 8 * 9),
        # batch 1: (8*9, 30) merges in place (Fortran-ordered): none
        (rng.rand(1, 30, 8, 9), (1,), rng.rand(30, 7), (0,), 0),
        # (5*40, 6) merges in place: none
        (rng.rand(6, 5, 40), (0,), rng.rand(6, 30), (0,), 0),
        # a view with a stride of 2 elements: dot copies it, 40*50 floats
        (strided, (1,), rng.rand(30, 50), (1,), 4 * 40 * 50),
        # a column slice: no transposition, but dot copies it, 40*50
        (rng.rand(40, 60).astype(np.float32)[:, :50], (1,), rng.rand(50, 30),
         (0,),
         4 * 40 * 50),
    ]
    for a, a_axes, b, b_axes, copies in cases:
        a, b = a.astype(np.float32, copy=False), b.astype(np.float32)
        out = 4 * (a.size // int(np.prod([a.shape[i] for i in a_axes]))) \
            * (b.size // int(np.prod([b.shape[i] for i in b_axes])))
        tracemalloc.start()
        try:
            start = tracemalloc.get_traced_memory()[0]
            np.tensordot(a, b, (a_axes, b_axes))
            peak = tracemalloc.get_traced_memory()[1] - start
        finally:
            tracemalloc.stop()
        figure = cc.tensordot_copies(
            (a.shape, a.strides, 4), a_axes, (b.shape, b.strides, 4), b_axes)
        assert figure == copies
        # peak = copies + product (+ Python's small objects)
        assert 0 <= peak - out - figure <= PY, (a.shape, peak, figure)


# CuPy figures (by the code paths, no GPU needed)

def test_cupy_figures_follow_use_cudnn(rng):
    x, W = rand(rng, 2, 3, 10, 12), rand(rng, 4, 3, 3, 3)
    conv = F.convolution_2d(x, W, pad=1).creator
    pool = F.max_pooling_2d(x, 2).creator
    bn = F.batch_normalization(x, rand(rng, 3), rand(rng, 3)).creator
    inputs = (x.array, W.array)
    with chainer.using_config('use_cudnn', 'auto'):
        # cuDNN's workspace, capped at CuPy's default 8 MiB
        assert cc.scratch_of(conv, inputs, backend='cupy') == 8 * 2 ** 20
        # cuDNN's batch normalization takes no workspace
        assert cc.scratch_of(bn, (x.array, bn.inputs[1].data),
                             backend='cupy') == 0
    with chainer.using_config('use_cudnn', 'never'):
        # im2col_gpu's columns (no padded copy): 25920, tensordot's copy
        # of them at batch 2: 25920, the product: y, 3840
        # max(0 + 25920, 25920 + 25920 + 3840) - 3840 = 51840
        assert cc.scratch_of(conv, inputs, backend='cupy') == 51840
        # batch 1: columns 12960, no copy, y 1920: max(12960, 12960 +
        # 1920) - 1920 = 12960 (NumPy's 13056 counts the padded copy)
        x1 = x.array[:1]
        conv1 = F.convolution_2d(x1, W, pad=1).creator
        assert cc.scratch_of(conv1, (x1, W.array), backend='cupy') == 12960
        assert cc.scratch_of(conv1, (x1, W.array)) == 13056
        # var's squared deviations: |x| = 720 floats
        assert cc.scratch_of(bn, (x.array, bn.inputs[1].data),
                             backend='cupy') == 2880
    # pooling: no workspace, kernels write y and the indexes
    assert cc.scratch_of(pool, (x.array,), backend='cupy') == 0


# N-d and grouped convolutions, N-d average pooling

def test_convolution_nd_and_its_gradients(rng):
    x, W, b = rand(rng, 2, 3, 6, 7, 8), rand(rng, 4, 3, 3, 3, 3), rand(rng, 4)
    calls = probe(lambda: backprop(
        F.convolution_nd(x, W, b, stride=(1, 2, 1), pad=1)))
    # out: 6, (7 + 2 - 3) // 2 + 1 = 4, 8; padded 2*3*8*(9+1)*10 = 4800
    # floats = 19200 (stride 2 pads one more); col 2*3*27*6*4*8 = 31104
    # floats = 124416, copied by tensordot (batch 2); y 2*4*192 floats =
    # 6144: max(19200 + 124416 - 6144, 2 * 124416) = 248832
    check(calls, 'ConvolutionND', 248832)
    # gy (2, 4, 6, 4, 8) made (4, 384): a copy of 6144; col made (384,
    # 81): a copy; gW 4*81 floats = 1296
    # max(19200 + 124416 - 1296, 124416 + 6144 + 124416) = 254976
    check(calls, 'ConvolutionNDGradW', 254976)
    # gx: gy made (4, 384): 6144; columns 3*27 * 384 floats = 124416;
    # image 2*3*8*10*10 floats = 19200
    # max(6144 + 124416 - 19200, 124416) = 124416.  col2im adds 27
    # strided slices of 2*3*192 = 1152 elements: 3 buffers.
    check(calls, 'DeconvolutionND', 124416, buffers(3, 1152))


def test_grouped_convolution_2d_and_its_gradients(rng):
    x, W = rand(rng, 2, 4, 10, 12), rand(rng, 6, 2, 3, 3)
    calls = probe(lambda: backprop(
        F.convolution_2d(x, W, pad=1, groups=2)))
    # padded 2*4*12*14 floats = 5376; col 2*4*9*120 floats = 34560,
    # reshaped for the batched matmul: a copy replacing it; y 2*6*120
    # floats = 5760: max(5376 + 34560, 2 * 34560, 34560 + 5760) - 5760
    # = 63360
    check(calls, 'Convolution2DFunction', 63360)
    # the same, then gy (2, 6, 10, 12) reshaped to (2, 3, 240): a copy of
    # 5760; gW 6*2*9 floats = 432
    # max(5376 + 34560, 69120, 34560 + 5760 + 432) - 432 = 68688
    check(calls, 'Convolution2DGradW', 68688)
    # gx: gy reshaped to (2, 3, 240): a copy of 5760 alive to the end;
    # columns 2*2*9 * 240 floats = 34560: 5760 + 34560 = 40320.  col2im
    # adds 9 strided slices of 2*4*120 = 960 elements: 3 buffers.
    check(calls, 'Deconvolution2DFunction', 40320, buffers(3, 960))


def test_average_pooling_nd_and_its_gradient(rng):
    x = rand(rng, 8, 32, 16, 16)
    calls = probe(lambda: backprop(F.average_pooling_nd(x, 2, 2)))
    # as AveragePooling2D's: max(295936 + 262144 - 65536, 262144)
    check(calls, 'AveragePoolingND', 492544)
    # as AveragePooling2DGrad's: max(393216 - 295936, 262144).  col2im's
    # strided additions and gx /= 4 on a view: 3 full buffers.
    check(calls, 'AveragePoolingNDGrad', 262144, buffers(3, 16384))


# Masked and clipped activations

def test_leaky_relu_and_elu_masks_all_selected(rng):
    # every x < 0: the selected elements are all of them (the bound is
    # exact); 128*256 = 32768 elements
    x = chainer.Variable(-rng.rand(128, 256).astype(np.float32) - 0.1)
    calls = probe(lambda: backprop(F.leaky_relu(x)))
    # mask 32768 bytes + gathered 32768 floats = 163840
    check(calls, 'LeakyReLU', 163840)
    check(calls, '_LeakyReLUGrad', 163840)
    calls = probe(lambda: backprop(F.elu(x)))
    # mask 32768 + gathered and expm1, 2 * 131072: 294912
    check(calls, 'ELU', 294912)
    # the mask x > 0: 32768
    check(calls, 'ELUGrad', 32768)


def test_leaky_relu_bound_holds_for_mixed_signs(rng):
    x = chainer.Variable(rng.rand(128, 256).astype(np.float32) - 0.5)
    calls = probe(lambda: F.leaky_relu(x))
    (measured, figure), = calls['LeakyReLU']
    # about half the elements are selected: less than the bound
    assert figure == 163840
    assert measured < 32768 + 131072 * 0.6


def test_clipped_relu_and_tanh_gradients(rng):
    for n, grad in ((128, 32768 + 131072), (256, 65536)):
        x = chainer.Variable(rng.rand(n, 256).astype(np.float32) * 30 - 5)
        calls = probe(lambda: backprop(F.clipped_relu(x, 20.0)))
        # max(0, x): n*256 floats
        check(calls, 'ClippedReLU', n * 256 * 4)
        # n = 128: mask (32768 bytes) and gy*mask (131072), the second
        # mask, the product; n = 256 (262144 bytes): the product goes into
        # gy*mask, only a mask (65536 bytes) is above it.  gy * mask casts
        # the mask: 1 buffer.
        check(calls, 'ClippedReLUGrad2', grad, buffers(1, n * 256))
        calls = probe(lambda: backprop(F.tanh(x)))
        # y*y and 1 - y*y before the product: n*256 floats above it
        check(calls, 'TanhGrad', n * 256 * 4)


@pytest.mark.filterwarnings('ignore:the backward of old-style')
def test_old_style_backward_scratch_reaches_the_peak(rng):
    # The sampler's backward (an old-style Function's: no call of its
    # own) has the run's highest memory: its scratch goes to the
    # Function's record, so memory_report's peak is tracemalloc's, within
    # the 1 % the true peak's table promises (docs/memory.md).  Without it
    # the peak was the forward's: 84 % of tracemalloc's.
    from chainer_computational_cost import ComputationalCostHook
    from chainer_computational_cost.analysis.memory import memory_report
    from memory_oracle import traced_peak
    x = chainer.Variable(rng.rand(256, 3, 16, 16).astype(np.float32))
    grid = chainer.Variable(
        rng.rand(256, 2, 16, 16).astype(np.float32) * 2 - 1)
    gy = np.ones((256, 3, 16, 16), np.float32)
    hooks = []

    def step():
        with ComputationalCostHook(memory=True) as h:
            y = F.spatial_transformer_sampler(x, grid)
            y.grad = gy
            y.backward()
        hooks.append(h)
        return y

    # once before (its gradients cleared after), so that what a first
    # run allocates once (modules imported, caches filled: 42 KB more
    # when this test ran alone, 0.9895 of it) is not taken for the step's
    step()
    x.cleargrad()
    grid.cleargrad()
    real = traced_peak(step)
    figures = memory_report(hooks[-1])
    assert figures['peak_layer'] == 'SpatialTransformerSampler-1'
    assert 0.99 * real <= figures['peak'] <= real, (figures['peak'], real)


def test_backward_scratch_only_from_functions_that_give_it(rng):
    # R2_score is an old-style Function whose scratch function has no
    # backward (it has none): asked for the backward's, it gives 0, not
    # its forward's figure (2 * 64*32*4 + 32*4 - 4 = 16508)
    pred, true = rng.rand(64, 32).astype(np.float32), \
        rng.rand(64, 32).astype(np.float32)
    node = F.r2_score(pred, true).creator
    assert cc.scratch_of(node, (pred, true)) == 16508
    assert cc.scratch_of(node, (pred, true), backward=True,
                         grad_outputs=(None,)) == 0
