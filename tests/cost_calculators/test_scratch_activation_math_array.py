"""Scratch figures of activation, math, array, noise and evaluation functions
against tracemalloc, call by call on NumPy (issue 34), with the probe and
tolerances of ``tests/scratch_probe.py`` (Python objects ``PY`` either way,
NumPy's ufunc buffers named where a path casts or broadcasts). Each figure is
derived by hand in a comment from Chainer's code path."""

import chainer
import chainer.functions as F
import numpy as np
import pytest

from chainer_computational_cost import cost_calculators as cc
from scratch_probe import backprop
from scratch_probe import buffers
from scratch_probe import PY
from scratch_probe import check
from scratch_probe import probe


@pytest.fixture
def rng():
    return np.random.RandomState(0)


def _mixed(rng, *shape, dtype=np.float32):
    return chainer.Variable((rng.rand(*shape) - 0.5).astype(dtype))


# Activations

def test_prelu_and_its_gradient(rng):
    x, W = _mixed(rng, 64, 32), chainer.Variable(rng.rand(32).astype('f'))
    calls = probe(lambda: backprop(F.prelu(x, W)))
    # |x| = 64*32 = 2048 elements: the mask (2048 bytes) and W broadcast
    # by numpy.where (2048 floats = 8192): 10240.  where walks W's
    # broadcast view in buffers: 2 buffers.
    check(calls, 'PReLUFunction', 10240, buffers(2, 2048))
    # the mask cond >= 0 (2048), x*gy and where(...) (8192 each) before
    # gx: 18432, gx (8192) and gW (128) after: 18432 - 128 = 18304; then
    # mask, where(mask, 1, W) and gx: 2048 + 8192 above the outputs, the
    # larger: 10240 (18304 - 8192 = 10112 < 10240)
    check(calls, 'PReLUFunctionGrad', 10240, buffers(2, 2048))


def test_swish_and_its_gradient(rng):
    x, beta = _mixed(rng, 64, 32), chainer.Variable(rng.rand(32).astype('f'))
    calls = probe(lambda: backprop(F.swish(x, beta)))
    # |x| = 2048 floats = 8192 bytes: beta*x, bx*0.5, tanh (3 * 8192)
    # before y: 2 * 8192 = 16384 above it
    check(calls, 'Swish', 16384, buffers(1, 2048))
    # sig, y, by, gx and gy*y, x-y, their product: 7 * 8192 = 57344, less
    # gx and g_beta (32 floats = 128): 57344 - 8192 - 128 = 49024.  The
    # sum over axis 0 is a buffered reduction: 1 buffer.
    check(calls, 'SwishGrad', 49024, buffers(2, 2048))


def test_swish_gradient_elided_at_256_kib(rng):
    x = _mixed(rng, 256, 256)
    beta = chainer.Variable(rng.rand(256).astype('f'))
    calls = probe(lambda: backprop(F.swish(x, beta)))
    # |x| = 65536 floats = 262144 bytes (256 KiB): gy*y receives its
    # product with x-y, 6 arrays alive: 6*262144 - 262144 (gx) - 1024
    # (g_beta, 256 floats) = 1309696
    check(calls, 'SwishGrad', 1309696, buffers(2, 65536))


def test_softplus_and_its_gradient(rng):
    x = _mixed(rng, 64, 32)
    calls = probe(lambda: backprop(F.softplus(x)))
    # bx, fmax(bx, 0) and two of fabs/negation/exp/log1p: 4 * 8192, less
    # the output: 24576
    check(calls, 'Softplus', 24576)
    # two arrays of 8192 bytes at each step, one of them the output: 8192
    check(calls, 'SoftplusGrad', 8192)


def test_crelu_makes_minus_x(rng):
    x = _mixed(rng, 64, 32)
    calls = probe(lambda: F.crelu(x, axis=1))
    # -x: 2048 floats = 8192.  maximum writes into the strided halves of
    # y: 2 buffers.
    check(calls, 'CReLU', 8192, buffers(2, 2048))


def test_hard_sigmoid_and_its_gradient(rng):
    x = _mixed(rng, 64, 32)
    calls = probe(lambda: backprop(F.hard_sigmoid(x)))
    # x*0.2 and +0.5 (8192 each), then clip's result: 8192 above it
    check(calls, 'HardSigmoid', 8192)
    # masks 3 * 2048 = 6144; the mask and mask*gy 2048 + 8192 = 10240;
    # mask*gy and its product with 0.2: 16384; less gx: 16384 - 8192.
    # mask * gy casts the mask: 1 buffer.
    check(calls, 'HardSigmoidGrad', 8192, buffers(1, 2048))


def test_hard_sigmoid_gradient_elided(rng):
    x = _mixed(rng, 512, 512)
    calls = probe(lambda: backprop(F.hard_sigmoid(x)))
    # n = 262144 elements: the masks (262144 bytes each) elide their
    # conjunction, 2n = 524288; the conjunction and mask*gy n + 4n =
    # 1310720; *0.2 in place: 1310720 - 1048576 (gx) = 262144
    check(calls, 'HardSigmoidGrad', 262144, buffers(1, 262144))


def test_rrelu_draws_its_slopes_in_float64(rng):
    for dtype, expected in ((np.float32, 10240), (np.float16, 12288)):
        x = _mixed(rng, 64, 32, dtype=dtype)
        with chainer.using_config('train', True):
            calls = probe(lambda: backprop(F.rrelu(x)))
        # float32: draws 2048*8 = 16384 and r 8192: 24576; then r, mask
        # 2048, x*r and y: 3*8192 + 2048 = 26624; less r and y (16384):
        # 10240.  float16: draws 16384 + r 4096 = 20480 (3*4096 + 2048 =
        # 14336 after), less r and y (8192): 12288
        check(calls, 'RReLU', expected)
        # the mask y >= 0 and gy*r: 2048 + 2048 * itemsize
        check(calls, '_RReLUGrad', 2048 * (1 + np.dtype(dtype).itemsize))
    with chainer.using_config('train', False):
        x = _mixed(rng, 64, 32)
        calls = probe(lambda: F.rrelu(x))
    # test mode: r = full(...) kept, then mask and x*r: 2048 + 8192
    check(calls, 'RReLU', 10240)


def test_activation_cupy_figures(rng):
    x, beta = _mixed(rng, 64, 32), chainer.Variable(rng.rand(32).astype('f'))
    with chainer.using_config('train', True):
        r = F.rrelu(x).creator
    node = cc.function_object(F.prelu(x, beta).creator)
    # PReLU: elementwise kernels, none
    assert cc.scratch_of(node, (x.array, beta.array), backend='cupy') == 0
    # CReLU: -x, 8192 bytes, on either backend
    crelu = F.crelu(x).creator
    assert cc.scratch_of(crelu, (x.array,), backend='cupy') == 8192
    # RReLU in training: float64 draws 16384 beside r (8192), less r and
    # y: 8192
    with chainer.using_config('train', True):
        assert cc.scratch_of(r, (x.array,), backend='cupy') == 8192
    with chainer.using_config('train', False):
        assert cc.scratch_of(r, (x.array,), backend='cupy') == 0


# erf and erfc

def _scipy():
    try:
        import scipy  # NOQA
        return True
    except ImportError:
        return False


@pytest.mark.skipif(_scipy(), reason='the path without SciPy')
@pytest.mark.filterwarnings('ignore::chainer.warnings.PerformanceWarning')
def test_erf_without_scipy_makes_python_floats(rng):
    for dtype, expected in ((np.float32, 68000), (np.float64, 64000)):
        x = chainer.Variable(rng.rand(1000).astype(dtype))
        F.erf(x)  # Chainer picks its path (and warns) at the first call
        calls = probe(lambda: (F.erf(x), F.erfc(x)))
        # numpy.vectorize(math.erf): x as an object array, 1000 pointers
        # and 1000 Python floats (8 + 24 bytes each), the results the
        # same, then their float64 array: 1000 * (32 + 32 + 8) = 72000;
        # less the output: float32 (cast after the object arrays are
        # freed, 4000) 68000, float64 (the array itself, 8000) 64000
        check(calls, 'Erf', expected)
        check(calls, 'Erfc', expected)


def test_erf_with_scipy_and_on_cupy(rng, monkeypatch):
    from chainer.functions.math import erf
    x16 = rng.rand(1000).astype(np.float16)
    x32 = x16.astype(np.float32)
    node = erf.Erf()
    # SciPy's erf has float32 and float64 loops: float16 is computed into
    # a float32 array (4000 bytes) and cast; none for float32
    monkeypatch.setattr(erf, '_erf_cpu', np.exp)
    assert cc.scratch_of(node, (x16,)) == 4000
    assert cc.scratch_of(node, (x32,)) == 0
    # CuPy: one elementwise kernel
    assert cc.scratch_of(node, (x32,), backend='cupy') == 0


# Math

def _pos(rng, *shape):
    return chainer.Variable(rng.rand(*shape).astype(np.float32) + 0.5)


def test_div_gradient_with_a_broadcast_divisor(rng):
    x0, x1 = _pos(rng, 64, 32), _pos(rng, 32)
    calls = probe(lambda: backprop(F.sum(x0 / x1, axis=0)))
    # 64*32 floats = 8192 bytes: gx0 = gy / x1 (8192, kept), -gx0 and its
    # product with x0 (24576), then the product and its quotient by x1
    # (24576); gx1 summed to (32,): 128 bytes. Outputs gx0 and the sum:
    # 24576 - 8320 = 16256.  (x1 broadcast: 1 buffer; the sum over axis
    # 0 a buffered reduction: 1 more)
    check(calls, 'DivGrad', 16256, buffers(2, 2048))


def test_div_from_constant_and_pow_gradients(rng):
    x = _pos(rng, 64, 32)
    calls = probe(lambda: (backprop(2.0 / x), backprop(x ** 3.0)))
    # -2 * gy and x ** 2 (8192 each), then their quotient: 24576 - 8192
    check(calls, 'DivFromConstantGrad', 16384)
    # x ** 2 (8192), 3 * it (16384 with it), * gy: 16384 - 8192
    check(calls, 'PowVarConstGrad', 8192)


def test_minimum_and_arctan2_gradients(rng):
    x1, x2 = _pos(rng, 64, 32), _pos(rng, 64, 32)
    calls = probe(lambda: (backprop(F.minimum(x1, x2)),
                           backprop(F.arctan2(x1, x2))))
    # the mask x1 <= x2 (2048 bytes) beside gy * it (8192); then the
    # other mask beside the first product and the second:
    # 8192 + 2048 + 8192 - 16384 (both outputs) = 2048.  gy * mask casts
    # the mask: 1 buffer.
    check(calls, 'MinimumGrad', 2048, buffers(1, 2048))
    # x1**2, x2**2, their sum (24576); sqnorm kept: x2/sqnorm, *gy
    # (24576); beside sqnorm and gx1, -x1 and its quotient by sqnorm,
    # then the quotient and its product with gy: 32768; less gx1 and
    # gx2: 16384
    check(calls, 'Arctan2Grad', 16384)


def test_batch_l2_norm_squared_log_sum_exp_and_argmax(rng):
    x = _pos(rng, 64, 32)
    calls = probe(lambda: (backprop(F.batch_l2_norm_squared(x)),
                           F.logsumexp(x, axis=1), F.argmax(x, axis=0),
                           F.argmin(x, axis=1)))
    # x * x: 8192 bytes (its row sums are the output)
    check(calls, 'BatchL2NormSquared', 8192, buffers(1, 2048))
    # 2 * x beside its product with the broadcast gy: 8192
    check(calls, 'BatchL2NormSquaredGrad', 8192, buffers(1, 2048))
    # x - max (8192), the maxima, sums, their log, log + max (64 floats,
    # 256 bytes each): 8192 + 4 * 256, less the output: 8960.  The row
    # reductions are buffered: 1 buffer.
    check(calls, 'LogSumExp', 8960, buffers(1, 2048))
    # axis 0 moved last is not contiguous: a copy (8192) and 32 int64
    # indexes (256), less the int32 output (128): 8320
    check(calls, 'ArgMax', 8320)
    # axis 1 is last: no copy; 64 int64 (512) and the output (256) alive
    # together: 768 - 256 = 512
    check(calls, 'ArgMin', 512)


def test_math_cupy_figures(rng):
    x0, x1 = _pos(rng, 64, 32), _pos(rng, 32)
    y = x0 / x1
    y.grad = np.ones((64, 32), 'f')
    y.backward(enable_double_backprop=True)
    node = x1.grad_var.creator
    gy = np.ones((64, 32), 'f')
    # one kernel writes both full-size gradients; x1's (64*32 floats =
    # 8192 bytes) is summed to (32,) and freed
    assert cc.scratch_of(node, (x0.array, x1.array, gy),
                         backend='cupy') == 8192
    # NumPy: 16256 (see test_div_gradient_with_a_broadcast_divisor)
    assert cc.scratch_of(node, (x0.array, x1.array, gy)) == 16256


# Noise

def test_zoneout(rng):
    h, x = _mixed(rng, 64, 32), _mixed(rng, 64, 32)
    calls = probe(lambda: F.zoneout(h, x, 0.5))
    # n = 2048: draws 8n and flag_x n (18432); flags, the ones (6144);
    # then the flags (4096), h*flag_h, x*flag_x and their sum (3 * 8192):
    # 28672, less the flags and y (12288): 16384.  Each product casts its
    # mask: 2 buffers.
    check(calls, 'Zoneout', 16384, buffers(2, 2048))


def test_simplified_dropconnect_draws_a_mask_per_sample(rng):
    x, W = _mixed(rng, 64, 32), _mixed(rng, 16, 32)
    with chainer.using_config('train', True):
        calls = probe(lambda: F.simplified_dropconnect(x, W, ratio=0.5))
    # mask (64, 16, 32): M = 32768; float64 draws 8M and the mask M:
    # 294912; then W * scale (2048), the masked W (4M = 131072) beside
    # the mask; y 64*16 floats = 4096.  Less the mask and y: 294912 -
    # 36864 = 258048.  The product with the bool mask casts it: 1 buffer.
    check(calls, 'SimplifiedDropconnect', 258048, buffers(1, 32768))


# Evaluation

def test_accuracy(rng):
    y = rng.rand(64, 10).astype(np.float32)
    t = rng.randint(0, 10, 64).astype(np.int32)
    y4 = rng.rand(8, 10, 4, 4).astype(np.float32)
    t4 = rng.randint(0, 10, (8, 4, 4)).astype(np.int32)
    calls = probe(lambda: F.accuracy(y, t))
    # 64 int64 indexes (512) and pred == t (64): 576
    check(calls, 'Accuracy', 576)
    calls = probe(lambda: F.accuracy(y, t, ignore_label=-1))
    # the mask (64), the indexes and where's int64 pred (2 * 512), then
    # pred == t beside pred: 64 + 1024 = 1088
    check(calls, 'Accuracy', 1088)
    calls = probe(lambda: F.accuracy(y4, t4))
    # axis 1 moved last is strided: a copy of y (8*10*16 floats = 5120)
    # beside 128 int64 indexes (1024): 6144
    check(calls, 'Accuracy', 6144)


def test_binary_accuracy_and_r2_score(rng):
    y = rng.rand(64, 32).astype(np.float32) - 0.5
    t = rng.randint(0, 2, (64, 32)).astype(np.int32)
    calls = probe(lambda: F.binary_accuracy(y, t))
    # y >= 0 and t != -1, then c == t beside c: 2 * 2048 bytes.  c == t
    # casts c to int32 and the sums of booleans are buffered: 2 buffers.
    check(calls, 'BinaryAccuracy', 4096, buffers(2, 2048, 8))
    pred, true = _mixed(rng, 64, 32), _mixed(rng, 64, 32)
    calls = probe(lambda: F.r2_score(pred, true))
    # pred - true and its square (2 * 8192) beside SS_res (32 floats =
    # 128): 16512, less the output: one float (4) 16508, or 32 (128)
    # 16384.  The sums over axis 0 are buffered: 1 buffer.
    check(calls, 'R2_score', 16508, buffers(1, 2048))
    calls = probe(lambda: F.r2_score(pred, true, multioutput='raw_values'))
    check(calls, 'R2_score', 16384, buffers(1, 2048))


# Array

def test_select_item_and_assign_make_python_ints(rng):
    x = chainer.Variable(rng.rand(1000, 4).astype(np.float32))
    t = rng.randint(0, 4, 1000).astype(np.int32)
    calls = probe(lambda: backprop(F.select_item(x, t)))
    # range(1000) as an index: a list of 1000 pointers (8000), ints for
    # 257..999 (743 * 28 = 20804) and their intp array (8000): 36804
    check(calls, 'SelectItem', 36804)
    # the same and the values gy copied (1000 floats = 4000): 40804
    check(calls, 'Assign', 40804)


def test_im2col_pads_a_copy(rng):
    x = _mixed(rng, 2, 3, 10, 12)
    calls = probe(lambda: F.im2col(x, 3, pad=1))
    # numpy.pad: 2*3*(10+2)*(12+2) floats = 4032 bytes
    check(calls, 'Im2Col', 4032)


@pytest.mark.filterwarnings('ignore:`np.float` is a deprecated alias')
def test_resize_images_and_its_gradient(rng):
    x = _mixed(rng, 2, 3, 8, 8)
    calls = probe(lambda: backprop(F.resize_images(x, (16, 16))))
    # N = 6 images, 16x16 out: indexes and weights (8 + 4) * (16 + 16) =
    # 384; one panel of all 16 rows (_infer_lines: 2**17 // (6 * (64 //
    # 16 + 4 * 16)) = 321 >= 16), 256 pixels: vcol, ucol (2 * 2 * 256 *
    # 8 = 8192), wcol (4 * 256 * 4 = 4096); the gathered panel 4 * 6 *
    # 256 floats = 24576: 37248
    check(calls, 'ResizeImages', 37248, buffers(1, 6144))
    # kept: 384 + 12288 (indexes and weights of P = 256 pixels) + gy *
    # wcol (4 * 6 * 256 * 4 = 24576) + offsets (6 * 8 = 48) = 37296; the
    # per-image indexes (32 * 6 * 256 = 49152), bincount's float64 weights
    # (49152) and result (8 * 384 = 3072): 138672, less the output (384
    # floats = 1536): 137136.  gy * wcol and offsets + indexes broadcast
    # their operands in buffered loops (6144 elements): 2 int64 buffers.
    check(calls, 'ResizeImagesGrad', 137136, buffers(2, 6144, 8))


def test_linear_interpolate_cumprod_and_fft(rng):
    p, x, y = _mixed(rng, 64, 32), _mixed(rng, 64, 32), _mixed(rng, 64, 32)
    calls = probe(lambda: F.linear_interpolate(p, x, y))
    # p*x, 1-p and its product with y (3 * 8192), then the sum beside p*x
    # and that product: 24576 - 8192 (the output)
    check(calls, 'LinearInterpolate', 16384)
    calls = probe(lambda: backprop(F.cumprod(x, axis=1)))
    # the running value: x without axis 1, 64 floats = 256.  Each in-place
    # step on a strided column is buffered: 2 buffers of 64.
    check(calls, 'Cumprodsum', 256, buffers(2, 64))
    calls = probe(lambda: F.fft((x, y)))
    # n = 2048: imag * 1j and real + it (complex64, 16384 each: below 256
    # KiB, not elided); numpy.fft's complex128 copy (32768) beside x,
    # then the two float32 parts (8192 each): 16384 + 32768 + 16384 =
    # 65536, less the outputs: 49152
    check(calls, 'FFT', 49152)


def test_inverse_and_determinant_in_float64(rng):
    x = chainer.Variable(rng.rand(100, 3, 3).astype(np.float32) + np.eye(
        3, dtype=np.float32))
    a = chainer.Variable(rng.rand(64, 64).astype(np.float32) + 64 * np.eye(
        64, dtype=np.float32))
    calls = probe(lambda: (F.batch_det(x), F.batch_inv(x), F.inv(a)))
    # 900 elements: the float64 copy (7200) and 100 float64 determinants
    # (800), less the float32 output (400): 7600
    check(calls, 'BatchDet', 7600)
    # the float64 copy and inverse (2 * 7200), less the output (3600)
    check(calls, 'BatchInv', 10800)
    # 4096 elements: 2 * 32768 - 16384 = 49152
    check(calls, 'Inv', 49152)


@pytest.mark.chainer7_only  # F.cholesky
def test_linalg_of_large_matrices_counts_numpy_arrays_only(rng):
    # LAPACK's work copy of the one n x n matrix it works on (malloc'd by
    # NumPy's linalg module) is not counted: at n = 256 it would double
    # the figures (two 512 KiB float64 buffers for gesv, one for getrf)
    eye = np.eye(256, dtype=np.float32)
    m = rng.rand(256, 256).astype(np.float32) / 256 + eye
    a, b = chainer.Variable(m), chainer.Variable(m[None])
    spd = chainer.Variable(m @ m.T + eye)
    calls = probe(lambda: (F.inv(a), F.batch_inv(b), F.batch_det(b),
                           F.cholesky(spd)))
    # 65536 elements: float64 copy and result 2 * 524288, less the
    # float32 output 262144: 786432
    check(calls, 'Inv', 786432)
    check(calls, 'BatchInv', 786432)
    check(calls, 'Cholesky', 786432)
    # the float64 copy 524288 and one float64 determinant 8, less the
    # float32 output 4: 524292
    check(calls, 'BatchDet', 524292)
    d = chainer.Variable(m.astype(np.float64))
    # float64: no copy, the result is the output
    check(probe(lambda: F.inv(d)), 'Inv', 0)


def test_r2_score_elided_from_256_kib(rng):
    pred, true = _mixed(rng, 512, 128), _mixed(rng, 512, 128)
    calls = probe(lambda: F.r2_score(pred, true))
    # e = 65536 floats = 262144 bytes, R = 128: (pred - true) ** 2 is
    # squared in place (e) beside SS_res (512), then true - mean (e)
    # beside SS_res and the mean (2 * 512): 263168, less the output (4):
    # 263164.  The sums over axis 0 are buffered: 1 buffer.
    check(calls, 'R2_score', 263164, buffers(1, 65536))
    calls = probe(lambda: F.r2_score(pred, true, multioutput='raw_values'))
    # less the 128 outputs (512) instead: 262656
    check(calls, 'R2_score', 262656, buffers(1, 65536))


@pytest.mark.skipif(_scipy(), reason='the path without SciPy')
@pytest.mark.filterwarnings('ignore::chainer.warnings.PerformanceWarning')
def test_ndtr_without_scipy_makes_python_floats(rng):
    x = rng.rand(256, 256).astype(np.float32)
    calls = probe(lambda: F.ndtr(x))
    # 65536 elements: two object arrays (8 + 24 bytes each per element)
    # and the float64 result (8), less the float32 output (4):
    # (72 - 4) * 65536 = 4456448
    check(calls, 'Ndtr', 4456448)


def test_spatial_transformer_grid_and_sampler_backward(rng):
    theta = chainer.Variable(rng.rand(2, 2, 3).astype(np.float32))
    calls = probe(lambda: backprop(F.spatial_transformer_grid(
        theta, (128, 128))))
    # H = W = 128: the two linspaces (256 * 4 = 1024) throughout; while
    # the coordinates (3 * 16384 * 4 = 196608) are concatenated, the ones
    # (65536); then the coordinates beside the output (2*2*16384 floats =
    # 262144): max(262144, 196608 + 262144) + 1024 - 262144 = 197632.
    # meshgrid's broadcast_arrays makes nditer objects beside Python's own
    # (5.6 KiB measured at any H, W): 2 KiB more than PY.
    meshgrid = 2048
    check(calls, 'SpatialTransformerGrid', 197632, meshgrid)
    # backward: gy (C-contiguous) reshapes in place; the lines, the
    # ones and the coordinates: 263168 above gtheta
    check(calls, 'SpatialTransformerGrid backward', 263168, meshgrid)
    x = chainer.Variable(rng.rand(256, 3, 16, 16).astype(np.float32))
    grid = chainer.Variable(
        rng.rand(256, 2, 16, 16).astype(np.float32) * 2 - 1)
    calls = probe(lambda: backprop(F.spatial_transformer_sampler(x, grid)))
    # G = 65536 points, C = 3: padded x 256*3*18*18*4 = 995328, u, v and
    # their clips 16G, int32 corners 16G: 3092480 kept; the four weights
    # cast (16G = 1048576) and the four neighbourhoods (4 * G*C*4 =
    # 4 * 786432) beside the u and v gradients and a weighted term (3 *
    # 786432): 3092480 + 1048576 + 7 * 786432 = 9646080, less gx's padded
    # buffer (995328) and ggrid (2G * 4 = 524288): 8126464.  gu *= gy
    # walks a transposed view: 1 buffer.
    check(calls, 'SpatialTransformerSampler backward', 8126464,
          buffers(1, 196608))


def test_get_item_grad_scatter_add_and_as_strided_grad(rng):
    x = _mixed(rng, 64, 32)
    mask = np.arange(2048).reshape(64, 32) % 2 == 0
    calls = probe(lambda: (backprop(F.get_item(x, mask)),
                           backprop(F.get_item(x, (slice(None),
                                                   slice(0, 16))))))
    # numpy.add.at's iteration state (ADD_AT, 8192) and nonzero's two intp
    # arrays of the 1024 selected elements (2 * 8192): 24576; with basic
    # slices only the state: 8192
    assert [f for _, f in calls['GetItemGrad']] == [24576, 8192]
    for measured, figure in calls['GetItemGrad']:
        assert abs(measured - figure) <= PY, (measured, figure)
    a, b = _mixed(rng, 64, 32), _mixed(rng, 1024)
    calls = probe(lambda: F.scatter_add(a, mask, b))
    # y[mask] for the shape check: 1024 floats (4096) and the index
    # arrays (16384); then add.at: 8192 + 16384 = 24576, the larger
    check(calls, 'ScatterAdd', 24576)
    w = _mixed(rng, 64, 8)
    calls = probe(lambda: backprop(F.as_strided(w, (64, 6, 3), (8, 1, 1))))
    # windows of 3 every element: gy.sum(()) copies gy (64*18 floats =
    # 4608); the span 63*8 + 5 + 2 + 1 = 512 elements: arange (int32,
    # 2048) beside the zeroed storage (the output's base); the windows
    # overlap: add.at's state (8192) and two buffers converting the 1152
    # int32 indexes to intp (2 * 1152 * 8 = 18432): 4608 + 2048 + 26624
    check(calls, 'AsStridedGrad', 33280)


def test_spatial_transformer_sampler(rng):
    x = rng.rand(100, 3, 4, 4).astype(np.float32)
    grid = rng.rand(100, 2, 16, 1).astype(np.float32) * 2 - 1
    calls = probe(lambda: F.spatial_transformer_sampler(x, grid))
    # G = 100*16 = 1600 points, C = 3: padded x 100*3*6*6 floats = 43200;
    # u, v and their clips 4 * 6400 = 25600; int32 corners 4 * 6400 =
    # 25600: 94400 kept.  Gathering the fourth neighbourhood: the cast
    # weights (25600), three gathered (3 * 19200), the fourth's pieces and
    # their concatenation (2 * 19200) and 100 * (128 + 144 + 8) = 28000
    # bytes of objects: 149600; less y (19200, made of the first): 130400
    # (the float64 weights: 76800; the sums, four gathered, y and a
    # weighted term: 25600 + 6 * 19200 - 19200 = 121600).  94400 + 130400
    # = 224800.  The weighted products broadcast
    # w[:, :, None]: 1 buffer.
    check(calls, 'SpatialTransformerSampler', 224800, buffers(1, 4800))


def test_classification_summary(rng):
    y = rng.rand(1000, 10).astype(np.float32)
    t = rng.randint(0, 10, 1000).astype(np.int32)
    calls = probe(lambda: (F.classification_summary(y, t, label_num=10),
                           F.classification_summary(y, t.astype(np.int64),
                                                    label_num=10)))
    # n = 1000: the mask (1000), pred int64 (8000), true int32 (4000),
    # tp_mask int32 (4000) and bincount's intp copy of it (8000): 25000;
    # int64 labels are first cast to int32: 4000 more
    assert [f for _, f in calls['ClassificationSummary']] == [25000, 29000]
    for measured, figure in calls['ClassificationSummary']:
        assert abs(measured - figure) <= PY, (measured, figure)


# ChainerMN (from its code: the nodes need MPI to run)

def test_chainermn_float16_copies_and_send_buffers():
    pytest.importorskip('chainermn')
    import property_cases_chainermn as mn
    h = np.zeros(100, np.float16)
    f = np.zeros(100, np.float32)
    gather = mn._collective('AllGather', 3)
    # float16: x as float32 (400) and the float32 receive buffer of 3 *
    # 100 (1200) are alive when the float16 outputs (600) are cast: 2200,
    # less them: 1600; float32: the buffer is the outputs' base, none
    assert cc.scratch_of(gather, (h,), [(100,)] * 3) == 1600
    assert cc.scratch_of(gather, (f,), [(100,)] * 3) == 0
    alltoall = mn._collective('AllToAll', 2)
    # the inputs concatenated for Alltoallv: 200 floats = 800; float16:
    # the float32 copies (800), their concatenation (800) and the receive
    # buffer (800): 2400, less the float16 outputs (400): 2000
    assert cc.scratch_of(alltoall, (f, f), [(100,)] * 2) == 800
    assert cc.scratch_of(alltoall, (h, h), [(100,)] * 2) == 2000
    # Send casts float16 to float32 (400); Recv's input is a delegate
    assert cc.scratch_of(mn._p2p('Send'), (h, np.zeros(0, 'f')),
                         [(0,)]) == 400
    assert cc.scratch_of(mn._p2p('Recv'), (np.zeros(0, 'f'),),
                         [(100,)]) == 0


def test_gradients_below_the_elision_threshold(rng):
    x = _pos(rng, 64, 32)
    calls = probe(lambda: (backprop(F.absolute(x)), backprop(2.0 ** x)))
    # sign(x) and its product with gy, 8192 bytes each (below 256 KiB,
    # not elided): 8192 above the output
    check(calls, 'AbsoluteGrad', 8192)
    # log(2) * y and its product with gy: 8192
    check(calls, 'PowConstVarGrad', 8192)


def test_float16_mean_and_gaussian(rng):
    x = rng.rand(4, 8192).astype(np.float16)
    calls = probe(lambda: F.mean(x, axis=0))
    # NumPy sums float16 in float32: 8192 * 4 = 32768 beside the float16
    # output.  The reduction casts its float16 input: 2 buffers.
    check(calls, 'Mean', 32768, buffers(2, 8192))
    mean, ln_var = _mixed(rng, 64, 32, dtype=np.float16), _mixed(
        rng, 64, 32, dtype=np.float16)
    calls = probe(lambda: F.gaussian(mean, ln_var))
    # 2048 float64 draws (16384) and their float16 cast eps (4096):
    # 20480, less eps, noise and y (3 * 4096): 8192
    check(calls, 'Gaussian', 8192)
    mean, ln_var = _mixed(rng, 64, 32), _mixed(rng, 64, 32)
    calls = probe(lambda: F.gaussian(mean, ln_var))
    # float32: draws and eps 16384 + 8192 = 24576, what the call leaves
    check(calls, 'Gaussian', 0)


# A model's true peak (issue 34: an MLP with Swish and softplus)

def test_swish_softplus_mlp_peak_against_tracemalloc():
    from chainer_computational_cost import ComputationalCostHook
    from memory_oracle import traced_peak
    import chainer.links as L
    rng = np.random.RandomState(3)
    model = chainer.Sequential(L.Linear(256, 512), L.Swish((512,)),
                               F.softplus, L.Linear(512, 512), F.softplus,
                               L.Linear(512, 10))
    x = rng.rand(512, 256).astype(np.float32)
    t = rng.randint(0, 10, 512).astype(np.int32)

    def step():
        model.cleargrads()
        F.softmax_cross_entropy(model(x), t).backward()
    step()
    with ComputationalCostHook(memory=True) as hook:
        step()
    peak = hook.memory_report['peak']
    real = traced_peak(step)
    # the peak is during SwishGrad (its 5 |x| + its outputs): without its
    # scratch the hook said 8454188 against 13715464 (62 %).  What the
    # hook does not see: the graph's Python objects and NumPy's casting
    # buffers (fit.NUMPY_BUFFERS, 128 KiB)
    assert hook.memory_report['peak_layer'].startswith('SwishGrad')
    assert real - 128 * 1024 <= peak <= real, (peak, real)
