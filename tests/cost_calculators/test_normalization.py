import numpy as np
import pytest

import chainer
import chainer.functions as F

from chainer_computational_cost import ComputationalCostHook
from helpers import cost


def _x(*shape):
    rng = np.random.RandomState(0)
    return rng.uniform(-1, 1, shape).astype(np.float32)


def _ones(*shape):
    return np.ones(shape, np.float32)


# BatchNormalization

def test_batch_normalization():
    x, gamma, beta = _x(2, 3, 2, 2), _ones(3), _ones(3)
    p = {'eps': 2e-5, 'axis': (0, 2, 3)}
    # |x| = 24, C = 3 groups of 8. FMA: mean 24 + centre 24 + squares 24
    # + var div 3 + inv_std 3*3 + scale 24 + affine 24 = 132.
    # no FMA: 24 + 24 + 3*15 + 3 + 9 + 24 + 48 = 177. read 24 + 3 + 3
    # (eps is folded into the per-channel scale: not a read)
    assert cost(F.batch_normalization, x, gamma, beta) == (132, 30, 24, p)
    assert cost(F.batch_normalization, x, gamma, beta, fma=False) == (
        177, 30, 24, p)
    assert F.batch_normalization(x, gamma, beta).size == 24


def test_batch_normalization_running_statistics():
    x, gamma, beta = _x(2, 3, 2, 2), _ones(3), _ones(3)
    mean, var = np.zeros(3, np.float32), _ones(3)
    p = {'eps': 1e-3, 'axis': (0, 2, 3), 'decay': 0.5}
    kw = {'running_mean': mean, 'running_var': var, 'eps': 1e-3,
          'decay': 0.5}
    # + 2 updates of 3 elements: 2*3*2 = 12 (FMA), 2*3*3 = 18 (no FMA);
    # + 6 read and decay (an operand of every update) 1 -> 30 + 7 = 37;
    # + 6 written
    assert cost(F.batch_normalization, x, gamma, beta, **kw) == (
        144, 37, 30, p)
    assert cost(F.batch_normalization, x, gamma, beta, fma=False, **kw) == (
        195, 37, 30, p)


def test_batch_normalization_batch1_and_axis():
    x, gamma, beta = _x(1, 3, 2, 2), _ones(3), _ones(3)
    # |x| = 12, 3 groups of 4. FMA 5*12 + 4*3 = 72;
    # no FMA 12 + 12 + 3*7 + 3 + 9 + 12 + 24 = 93
    assert cost(F.batch_normalization, x, gamma, beta)[:3] == (72, 18, 12)
    assert cost(F.batch_normalization, x, gamma, beta,
                fma=False)[:3] == (93, 18, 12)
    x, gamma, beta = _x(2, 3, 4), _ones(3, 4), _ones(3, 4)
    # axis=0: C = 12 groups of 2, |x| = 24. FMA 5*24 + 4*12 = 168;
    # no FMA 24 + 24 + 12*3 + 12 + 36 + 24 + 48 = 204
    p = {'eps': 2e-5, 'axis': (0,)}
    assert cost(F.batch_normalization, x, gamma, beta, axis=0) == (
        168, 48, 24, p)
    assert cost(F.batch_normalization, x, gamma, beta, axis=0,
                fma=False) == (204, 48, 24, p)


# FixedBatchNormalization

def test_fixed_batch_normalization():
    x = _x(2, 3, 2, 2)
    gamma, beta, mean, var = _ones(3), _ones(3), _ones(3), _ones(3)
    args = (x, gamma, beta, mean, var)
    # |x| = 24: 24 FMA (48 without); read x + scale + shift = 24 + 2*3
    # = 30 (eps is folded into the scale); write 24
    assert cost(F.fixed_batch_normalization, *args) == (
        24, 30, 24, {'eps': 2e-5})
    assert cost(F.fixed_batch_normalization, *args, fma=False) == (
        48, 30, 24, {'eps': 2e-5})
    assert F.fixed_batch_normalization(*args).size == 24


def test_fixed_batch_normalization_resnet50_figures():
    x = np.zeros((1, 256, 56, 56), np.float32)
    c = _ones(256)
    # FixedBatchNormalization-4 of ResNet50: |x| = 256*56*56 = 802816,
    # read 802816 + 2*256 = 803328 elements = 3213312 bytes = 3.064 MiB
    assert cost(F.fixed_batch_normalization, x, c, c, c, c)[:3] == (
        802816, 803328, 802816)
    x = np.zeros((1, 64, 112, 112), np.float32)
    c = _ones(64)
    # |x| = 64*112*112 = 802816; read 802816 + 2*64 = 802944
    assert cost(F.fixed_batch_normalization, x, c, c, c, c) == (
        802816, 802944, 802816, {'eps': 2e-5})
    assert cost(F.fixed_batch_normalization, x, c, c, c, c,
                fma=False)[0] == 1605632  # 2*802816


# BatchRenormalizationFunction

def test_batch_renormalization():
    x, gamma, beta = _x(2, 3, 2, 2), _ones(3), _ones(3)
    mean, var = np.zeros(3, np.float32), _ones(3)
    kw = {'running_mean': mean, 'running_var': var}
    p = {'eps': 2e-5, 'rmax': 3.0, 'dmax': 5.0}
    # |x| = 24, C = 3. FMA: moments 24 + 24 + 24 + 3 = 75, per channel
    # (2 + 2 + 3 + 4)*3 = 33, division 24, 2 FMAs 48 -> 180.
    # no FMA: 24 + 24 + 45 + 3 = 96, 33, 24, 96 -> 249.
    # read 24 + 3 + 3 + 6 = 36 (eps, rmax and dmax only enter per-channel
    # factors: not reads)
    assert cost(F.batch_renormalization, x, gamma, beta, 3, 5, **kw) == (
        180, 36, 24, p)
    assert cost(F.batch_renormalization, x, gamma, beta, 3, 5, fma=False,
                **kw) == (249, 36, 24, p)
    assert F.batch_renormalization(x, gamma, beta, 3, 5, **kw).size == 24


def test_batch_renormalization_update_statistics():
    x, gamma, beta = _x(1, 3, 2), _ones(3), _ones(3)
    mean, var = np.zeros(3, np.float32), _ones(3)
    kw = {'running_mean': mean, 'running_var': var, 'decay': 0.8,
          'update_statistics': True}
    p = {'eps': 2e-5, 'rmax': 2.0, 'dmax': 1.0, 'decay': 0.8}
    # |x| = 6, C = 3 groups of 2. FMA: 6 + 6 + 6 + 3 = 21, 33, 6, 12 -> 72,
    # + updates 2*3*2 = 12 -> 84. no FMA: 6 + 6 + 9 + 3 = 24, 33, 6, 24
    # -> 87, + 2*3*3 = 18 -> 105. read 6 + 6 + 6 + 1 (decay) = 19,
    # write 6 + 6 = 12
    assert cost(F.batch_renormalization, x, gamma, beta, 2, 1, **kw) == (
        84, 19, 12, p)
    assert cost(F.batch_renormalization, x, gamma, beta, 2, 1, fma=False,
                **kw) == (105, 19, 12, p)


# DecorrelatedBatchNormalization / FixedDecorrelatedBatchNormalization

def test_decorrelated_batch_normalization():
    x = _x(2, 4, 2, 2)
    p = {'groups': 2, 'eps': 2e-5}
    # g = 2, C = 2, m = 8, |x| = 32. FMA: mean 32 + centre 32, covariance
    # 8 dots of length 8 = 64, 8 div, 4 eps, eigh 9*2*8 = 144, pow 4,
    # U 8, projections 2*32 dots of length 2 = 128 -> 424.
    # no FMA: 64 + 8*15 + 8 + 4 + 144 + 4 + 8 + 64*3 = 544.
    # read 32 (eps is added to the per-group covariance: not a read)
    assert cost(F.decorrelated_batch_normalization, x, groups=2) == (
        424, 32, 32, p)
    assert cost(F.decorrelated_batch_normalization, x, groups=2,
                fma=False) == (544, 32, 32, p)
    assert F.decorrelated_batch_normalization(x, groups=2).size == 32


def test_decorrelated_batch_normalization_running_statistics():
    x = _x(2, 4, 2, 2)
    mean = np.zeros((2, 2), np.float32)
    proj = np.stack([np.eye(2, dtype=np.float32)] * 2)
    kw = {'groups': 2, 'running_mean': mean, 'running_projection': proj,
          'decay': 0.5}
    p = {'groups': 2, 'eps': 2e-5, 'decay': 0.5}
    # + mean update 4*2 = 8 (4*3 = 12), projection V U: 8 dots of length 2
    # = 16 (8*3 = 24), its update 8*2 = 16 (8*3 = 24):
    # FMA 424 + 8 + 16 + 16 = 464, no FMA 544 + 12 + 24 + 24 = 604;
    # read 32 + 4 + 8 + 1 (decay) = 45, write 32 + 4 + 8 = 44
    assert cost(F.decorrelated_batch_normalization, x, **kw) == (
        464, 45, 44, p)
    assert cost(F.decorrelated_batch_normalization, x, fma=False,
                **kw) == (604, 45, 44, p)


def test_fixed_decorrelated_batch_normalization():
    x = _x(2, 4, 2, 2)
    mean = np.zeros((2, 2), np.float32)
    proj = np.stack([np.eye(2, dtype=np.float32)] * 2)
    # |x| = 32, C = 2: 32 sub + 32 dots of length 2 (64 / 96):
    # FMA 96, no FMA 128; read 32 + 4 + 8 = 44
    f = F.fixed_decorrelated_batch_normalization
    assert cost(f, x, mean, proj, groups=2) == (96, 44, 32, {'groups': 2})
    assert cost(f, x, mean, proj, groups=2, fma=False) == (
        128, 44, 32, {'groups': 2})
    assert f(x, mean, proj, groups=2).size == 32
    x = _x(1, 2, 3)
    mean, proj = np.zeros((1, 2), np.float32), _ones(1, 2, 2)
    # batch 1, g = 1, C = 2, |x| = 6: 6 + 12 = 18; read 6 + 2 + 4 = 12
    assert cost(f, x, mean, proj, groups=1)[:3] == (18, 12, 6)


# GroupNormalization / LayerNormalization

def test_group_normalization():
    x, gamma, beta = _x(2, 4, 3), _ones(4), _ones(4)
    p = {'groups': 2, 'eps': 1e-5}
    # |x| = 24, R = 2*2 = 4 groups of 6. FMA: 24 + 24 + 24 + 4 + 12 + 24
    # + 24 = 136. no FMA: 24 + 24 + 4*11 + 4 + 12 + 24 + 48 = 180.
    # read 24 + 4 + 4 (eps is folded into the per-group scale)
    assert cost(F.group_normalization, x, 2, gamma, beta) == (
        136, 32, 24, p)
    assert cost(F.group_normalization, x, 2, gamma, beta, fma=False) == (
        180, 32, 24, p)
    assert F.group_normalization(x, 2, gamma, beta).size == 24


def test_group_normalization_batch1():
    x, gamma, beta = _x(1, 4, 3), _ones(4), _ones(4)
    # |x| = 12, R = 2: 5*12 + 4*2 = 68; no FMA 12 + 12 + 2*11 + 2 + 6
    # + 12 + 24 = 90
    assert cost(F.group_normalization, x, 2, gamma, beta)[:3] == (
        68, 20, 12)
    assert cost(F.group_normalization, x, 2, gamma, beta,
                fma=False)[:3] == (90, 20, 12)


def test_layer_normalization():
    x, gamma, beta = _x(3, 4), _ones(4), _ones(4)
    # |x| = 12, 3 rows of 4. FMA 5*12 + 4*3 = 72;
    # no FMA 12 + 12 + 3*7 + 3 + 9 + 12 + 24 = 93. read 12 + 4 + 4 (eps is
    # folded into the per-row scale)
    assert cost(F.layer_normalization, x, gamma, beta) == (
        72, 20, 12, {'eps': 1e-5})
    assert cost(F.layer_normalization, x, gamma, beta, fma=False) == (
        93, 20, 12, {'eps': 1e-5})
    assert F.layer_normalization(x, gamma, beta).size == 12
    x = _x(1, 4)
    # batch 1: 5*4 + 4 = 24
    assert cost(F.layer_normalization, x, gamma, beta)[:3] == (24, 12, 4)


# LocalResponseNormalization

def test_local_response_normalization():
    x = _x(2, 5, 2, 2)
    p = {'n': 5, 'k': 2.0, 'alpha': 1e-4, 'beta': 0.75}
    # |x| = 40, C = 5, 8 positions; windows (h = 2) of 3, 4, 5, 4, 3
    # channels -> 2 + 3 + 4 + 3 + 2 = 14 additions per position.
    # FMA 4*40 + 14*8 = 272, no FMA 5*40 + 112 = 312.
    # read 40 + 3 (k, alpha, beta: operands of every element)
    assert cost(F.local_response_normalization, x) == (272, 43, 40, p)
    assert cost(F.local_response_normalization, x, fma=False) == (
        312, 43, 40, p)
    assert F.local_response_normalization(x).size == 40


def test_local_response_normalization_windows():
    x = _x(2, 5, 2, 2)
    # n = 3 (h = 1): windows 2, 3, 3, 3, 2 -> 8 additions per position:
    # 4*40 + 8*8 = 224
    assert cost(F.local_response_normalization, x, n=3)[:3] == (
        224, 43, 40)
    # n = 4 (h = 2, as the CPU code): same windows as n = 5 -> 272
    assert cost(F.local_response_normalization, x, n=4)[:3] == (
        272, 43, 40)
    x = _x(1, 2, 1, 1)
    # batch 1, C = 2, n = 5: both windows hold 2 channels -> 2 additions;
    # 4*2 + 2 = 10; read 2 + 3
    p = {'n': 5, 'k': 1.0, 'alpha': 0.5, 'beta': 0.5}
    assert cost(F.local_response_normalization, x, k=1, alpha=0.5,
                beta=0.5) == (10, 5, 2, p)


# NormalizeL2

def test_normalize_l2():
    x = _x(2, 3)
    # R = 2 rows of 3: sums of squares 6 (FMA) / 2*5 = 10, 2 sqrt,
    # 2 eps, 6 divisions: FMA 16, no FMA 20; read 6 (eps is folded into
    # the per-row divisor)
    assert cost(F.normalize, x) == (16, 6, 6, {'axis': 1})
    assert cost(F.normalize, x, fma=False) == (20, 6, 6, {'axis': 1})
    assert F.normalize(x).size == 6


def test_normalize_l2_axes_and_batch1():
    x = _x(2, 3, 4)
    p = {'axis': (1, 2)}
    # R = 2 slices of 12: FMA 24 + 4 + 24 = 52; no FMA 2*23 + 4 + 24 = 74
    assert cost(F.normalize, x, eps=1e-3, axis=(1, 2)) == (52, 24, 24, p)
    assert cost(F.normalize, x, eps=1e-3, axis=(1, 2), fma=False) == (
        74, 24, 24, p)
    x = _x(1, 4)
    # one row of 4: 4 + 2 + 4 = 10
    assert cost(F.normalize, x)[:3] == (10, 4, 4)


# The params of the types 0.1.2 covered: exactly its keys and value types

def _exact(params, expected):
    """``params`` equals ``expected`` key for key, with the same types (a
    plain ``==`` would take 2.0 for 2 and True for 1)."""
    assert params == expected
    assert list(params) == list(expected)
    for key, value in expected.items():
        assert type(params[key]) is type(value), (key, params[key])
    return True


def test_params_fixed_batch_normalization():
    x, c = _x(1, 2, 2, 2), _ones(2)
    params = cost(F.fixed_batch_normalization, x, c, c, c, c).params
    assert _exact(params, {'eps': 2e-5})
    params = cost(F.fixed_batch_normalization, x, c, c, c, c,
                  eps=1e-3).params
    assert _exact(params, {'eps': 1e-3})


def test_params_local_response_normalization():
    x = _x(1, 3, 2, 2)
    params = cost(F.local_response_normalization, x).params
    assert _exact(params, {'n': 5, 'k': 2, 'alpha': 1e-4, 'beta': 0.75})
    params = cost(F.local_response_normalization, x, n=3, k=1.0,
                  alpha=1, beta=1).params
    assert _exact(params, {'n': 3, 'k': 1, 'alpha': 1.0, 'beta': 1.0})
    # a non-integral k stays a float: 0.1.2 truncated it to an int
    params = cost(F.local_response_normalization, x, k=1.5).params
    assert _exact(params, {'n': 5, 'k': 1.5, 'alpha': 1e-4, 'beta': 0.75})


def test_params_normalize_l2():
    x = _x(2, 3, 4)
    assert _exact(cost(F.normalize, x).params, {'axis': 1})
    assert _exact(cost(F.normalize, x, axis=2).params, {'axis': 2})
    assert _exact(cost(F.normalize, x, eps=1e-3, axis=(1,)).params,
                  {'axis': 1})
    # several axes: the tuple (0.1.2 showed only the first one)
    assert _exact(cost(F.normalize, x, axis=(1, 2)).params,
                  {'axis': (1, 2)})


# Bytes through the hook: every array in its own dtype

def _record(fn, *args, **kwargs):
    with ComputationalCostHook() as cch:
        fn(*args, **kwargs)
    record = next(iter(cch.layer_report.values()))
    return record['mread'], record['mwrite']


@pytest.mark.chainer7_only  # Chainer 6 needs gamma in x's dtype
def test_bytes_batch_normalization_mixed_precision():
    x, g = np.zeros((2, 3), np.float16), np.ones(3, np.float32)
    # x 6*2 + gamma, beta 2*3*4 = 36; y 6*2 = 12
    assert _record(F.batch_normalization, x, g, g) == (36, 12)
    stats = {'running_mean': np.zeros(3, np.float32),
             'running_var': np.ones(3, np.float32)}
    # + the float32 running statistics 2*3*4 = 24 read and written, and
    # decay (in their dtype) 4: read 64, write 12 + 24 = 36
    assert _record(F.batch_normalization, x, g, g, **stats) == (64, 36)
    # fixed: x 12 + the folded float32 scale and shift 2*3*4 = 36; 12
    assert _record(F.fixed_batch_normalization, x, g, g, g, g) == (36, 12)


def test_bytes_float64_and_float16():
    x = np.zeros((1, 3, 1, 1), np.float64)
    # LRN: x 3*8 + k, alpha, beta 3*8 = 48; 24
    assert _record(F.local_response_normalization, x) == (48, 24)
    x = np.zeros((2, 3), np.float16)
    # NormalizeL2: 6*2 = 12 each way
    assert _record(F.normalize, x) == (12, 12)
    g = np.ones(3, np.float64)
    # LayerNormalization, float64: x 2*3*8 = 48 + gamma, beta 24 + 24
    x = np.zeros((2, 3), np.float64)
    assert _record(F.layer_normalization, x, g, g) == (96, 48)


# Gradient nodes (applied by backward())

def _backward(f, *arrays, double=False):
    """A callable running ``f`` on Variables of ``arrays`` and its backward
    pass (then backward again through the gradients when ``double``)."""
    def run():
        xs = [chainer.Variable(a) for a in arrays]
        y = f(*xs)
        if not double:
            y.grad = np.ones_like(y.array)
            y.backward()
            return
        gxs = chainer.grad([F.sum(y * y)], xs, enable_double_backprop=True)
        # every gradient takes part (Chainer's _ScaleShiftGrad cannot take
        # a missing one)
        sum(F.sum(g * g) for g in gxs).backward()
    return run


def test_batch_normalization_grad():
    x, g, b = _x(2, 3, 2, 2), _ones(3), _ones(3)
    run = _backward(F.batch_normalization, x, g, b)
    # |x| = 24, C = 3 channels of m = 8. x_hat 2*24 = 48, g_beta 24 - 3
    # = 21, g_gamma 24 (FMA) / 3*15 = 45, per channel 3*3 = 9, per element
    # 3*24 = 72 / 4*24 = 96: FMA 48 + 21 + 24 + 9 + 72 = 174 (7*24 + 2*3),
    # no FMA 48 + 21 + 45 + 9 + 96 = 219 (9*24 + 3).
    # read x 24 + gamma 3 + gy 24 + mean, inv_std 6 = 57; write 24 + 6
    p = {'axis': (0, 2, 3)}
    assert cost(run, kind='BatchNormalizationGrad') == (174, 57, 30, p)
    assert cost(run, kind='BatchNormalizationGrad', fma=False) == (
        219, 57, 30, p)


def test_fixed_batch_normalization_grad():
    x, c = _x(2, 3, 2, 2), _ones(3)
    run = _backward(F.fixed_batch_normalization, x, c, c, c, c)
    # |x| = 24, C = 3: per channel 4*3 = 12, x_hat 48, g_x 24, g_beta 21,
    # g_gamma 24 / 45, g_mean 2*3 = 6, g_var 3*3 = 9:
    # FMA 12 + 48 + 24 + 21 + 24 + 6 + 9 = 144 (5*24 + 8*3),
    # no FMA 12 + 48 + 24 + 21 + 45 + 6 + 9 = 165 (6*24 + 7*3).
    # read x 24 + gamma, mean, var 9 + gy 24 = 57; write 24 + 4*3 = 36
    kind = 'FixedBatchNormalizationGrad'
    assert cost(run, kind=kind) == (144, 57, 36, {'eps': 2e-5})
    assert cost(run, kind=kind, fma=False) == (165, 57, 36, {'eps': 2e-5})


def test_decorrelated_batch_normalization_grad():
    x = _x(2, 4, 2, 2)
    run = _backward(lambda x: F.decorrelated_batch_normalization(
        x, groups=2), x)
    # n = 32, g = 2 groups of C = 2 channels, m = 8 columns.
    # FMA: V^T gy 32*2 = 64, means 32, K 8 + 4 = 12, powers 2*4 = 8,
    # F 8*8 + 8 = 72, mat 5*8 = 40, S 8, S - M 4, R 32 + 64 + 32 = 128,
    # scaling 32 + product by V 64 = 96 -> 464 (4*2*32 + 4*32 + 9*8 + 2*4).
    # no FMA: 32*3 = 96, 32, 12, 8, 8*15 + 8 = 128, 40, 8, 4,
    # 32 + 96 + 32 = 160, 32 + 96 = 128 -> 616 (8*2*32 + 32 + 8*8 + 2*4).
    # read gy 32 + eigenvalues 4 + eigenvectors 8 + y_hat_pca 32 = 76
    kind = 'DecorrelatedBatchNormalizationGrad'
    assert cost(run, kind=kind) == (464, 76, 32, {'groups': 2})
    assert cost(run, kind=kind, fma=False) == (616, 76, 32, {'groups': 2})


def test_fixed_decorrelated_batch_normalization_grad():
    x, mean = _x(2, 4, 2, 2), np.zeros((2, 2), np.float32)
    proj = np.stack([np.eye(2, dtype=np.float32)] * 2)
    run = _backward(lambda x: F.fixed_decorrelated_batch_normalization(
        x, mean, proj, groups=2), x)
    # n = 32, g = 2, C = 2, m = 8: g_x 32*2 = 64 / 32*3 = 96, g_mean 32,
    # centring 32, g_P 8 dots of length 8: 64 / 120.
    # FMA 64 + 32 + 32 + 64 = 192, no FMA 96 + 32 + 32 + 120 = 280.
    # read 32 + 4 + 8 + 32 = 76; write g_x 32 + g_mean 4 + g_P 8 = 44
    kind = 'FixedDecorrelatedBatchNormalizationGrad'
    assert cost(run, kind=kind) == (192, 76, 44, {'groups': 2})
    assert cost(run, kind=kind, fma=False) == (280, 76, 44, {'groups': 2})


def test_group_normalization_grads():
    x, g, b = _x(2, 4, 3), _ones(4), _ones(4)
    run = _backward(lambda x, g, b: F.group_normalization(x, 2, g, b),
                    x, g, b)
    # R = 2*2 = 4 rows of K = 6, n = 24, C = 4.
    # _XHat: 2*24 = 48; read 24 + 2*4 = 32; write 24
    assert cost(run, kind='_XHat') == (48, 32, 24, {})
    # _ScaleShiftGrad: g_x_hat 24, g_beta 24 - 4 = 20, g_gamma 4 dots of 6:
    # 24 / 44 -> FMA 68, no FMA 88; read 24 + 4 + 24 = 52; write 24 + 8
    assert cost(run, kind='_ScaleShiftGrad') == (68, 52, 32, {})
    assert cost(run, kind='_ScaleShiftGrad', fma=False) == (88, 52, 32, {})
    # _XHatGrad: mean 24, dots 24 / 4*11 = 44, 4 divisions, per element
    # 2*24 / 3*24, scaling 24: FMA 24 + 24 + 4 + 48 + 24 = 124,
    # no FMA 24 + 44 + 4 + 72 + 24 = 168; read 24 + 24 + 4 = 52
    assert cost(run, kind='_XHatGrad') == (124, 52, 24, {})
    assert cost(run, kind='_XHatGrad', fma=False) == (168, 52, 24, {})


def test_group_normalization_double_backprop():
    x, g, b = _x(2, 4, 3), _ones(4), _ones(4)
    run = _backward(lambda x, g, b: F.group_normalization(x, 2, g, b),
                    x, g, b, double=True)
    # _MulInvStd on (4, 6): 24 products; read 24 + the 4 inverse
    # deviations = 28; write 24
    assert cost(run, kind='_MulInvStd') == (24, 28, 24, {})
    assert cost(run, kind='_MulInvStd', fma=False) == (24, 28, 24, {})


def test_normalize_l2_set_item_zero():
    run = _backward(F.normalize, _x(2, 3))
    # 2 rows, both with a non-zero norm: 2 values scattered into a (2, 1)
    # mask: no FLOPs; read 2 values + 2 mask entries; write 2
    assert cost(run, kind='_SetItemZero') == (0, 4, 2, {})


def test_local_response_normalization_grad():
    run = _backward(F.local_response_normalization, _x(2, 5, 2, 2))
    p = {'n': 5, 'k': 2, 'alpha': 1e-4, 'beta': 0.75}
    # |x| = 40, C = 5, 8 positions, 14 window additions per position (as
    # the forward pass): FMA 5*40 + 14*8 = 312, no FMA 6*40 + 112 = 352;
    # read x, y, gy, s, s^-beta 5*40 + 2 alpha beta 1 = 201; write 40
    kind = 'LocalResponseNormalizationGrad'
    assert cost(run, kind=kind) == (312, 201, 40, p)
    assert cost(run, kind=kind, fma=False) == (352, 201, 40, p)
