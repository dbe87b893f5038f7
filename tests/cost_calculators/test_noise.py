import chainer
import chainer.functions as F
from chainer.functions.noise.dropout import DropoutGradCuDNN
import numpy as np

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.cost_calculators import calculators
from chainer_computational_cost.cost_calculators import validate_cost
from helpers import calls_of
from helpers import cost


def _x(*shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 3


def test_dropout():
    x = _x(2, 3, 4)
    # |x| = 24: 24 products, 24 + 24 (mask) = 48 read, 24 written
    assert cost(F.dropout, x, 0.5) == (24, 48, 24, {'ratio': 0.5})
    assert F.dropout(x, 0.5).size == 24


def test_dropout_given_mask_batch1():
    x = _x(1, 3)
    mask = np.full((1, 3), 2, np.float32)
    # |x| = 3: 3, 3 + 3 = 6, 3
    assert cost(F.dropout, x, 0.25, mask=mask) == (3, 6, 3, {'ratio': 0.25})


def test_dropout_not_training_is_no_call():
    with chainer.using_config('train', False):
        assert calls_of(F.dropout, _x(2, 3)) == []


def test_gaussian():
    mean = _x(2, 3)
    ln_var = np.zeros((2, 3), np.float32)
    # |mean| = 6: (halve + exp + FMA)*6 = 18; no FMA (1 + 1 + 2)*6 = 24
    # read mean 6 + ln_var 6 + eps 6 = 18, write 6
    assert cost(F.gaussian, mean, ln_var) == (18, 18, 6, {})
    assert cost(F.gaussian, mean, ln_var, fma=False) == (24, 18, 6, {})
    assert F.gaussian(mean, ln_var).size == 6


def test_gaussian_batch1():
    mean = _x(1, 4)
    ln_var = np.zeros((1, 4), np.float32)
    # |mean| = 4: 3*4 = 12, 3*4 = 12 read, 4 written
    assert cost(F.gaussian, mean, ln_var) == (12, 12, 4, {})


def test_simplified_dropconnect_batchwise_bias():
    x = _x(2, 3)
    W = np.ones((4, 3), np.float32)
    b = np.ones((4,), np.float32)
    # n = 2, M = 4, N = 3, |W| = 12, |mask| = 2*12 = 24
    # FMA: 12 + 24 + 2*4*3 = 24 products + 2*4 = 8 bias adds -> 68
    # no FMA: 12 + 24 + 8*(2*3 - 1) = 40 + 8 -> 84
    # read: 6 + 12 + 4 + 24 + 1 (scale) = 47; write 2*4 = 8
    params = {'ratio': 0.5, 'batchwise_mask': True, 'nobias': False}
    assert cost(F.simplified_dropconnect, x, W, b) == (68, 47, 8, params)
    assert cost(F.simplified_dropconnect, x, W, b, fma=False) == (
        84, 47, 8, params)
    assert F.simplified_dropconnect(x, W, b).size == 8


def test_simplified_dropconnect_shared_mask_nobias():
    x = _x(3, 2, 2)
    W = np.ones((5, 4), np.float32)
    # n = 3, N = 2*2 = 4, M = 5, |W| = 20, |mask| = 20 (one for all)
    # FMA: 20 + 20 + 3*5*4 = 60 -> 100
    # no FMA: 20 + 20 + 15*(2*4 - 1) = 105 -> 145
    # read: 12 + 20 + 20 + 1 = 53; write 3*5 = 15
    params = {'ratio': 0.25, 'batchwise_mask': False, 'nobias': True}
    kw = dict(ratio=0.25, use_batchwise_mask=False)
    assert cost(F.simplified_dropconnect, x, W, **kw) == (100, 53, 15, params)
    assert cost(F.simplified_dropconnect, x, W, fma=False, **kw) == (
        145, 53, 15, params)
    assert F.simplified_dropconnect(x, W, **kw).size == 15


def test_simplified_dropconnect_batch1_test_mode():
    x = _x(1, 2)
    W = np.ones((3, 2), np.float32)
    # not training: ratio 0, same formula. n = 1, M = 3, N = 2, |mask| = 6
    # FMA: 6 + 6 + 1*3*2 = 18; read 2 + 6 + 6 + 1 = 15; write 3
    params = {'ratio': 0.0, 'batchwise_mask': True, 'nobias': True}
    assert cost(F.simplified_dropconnect, x, W, train=False) == (
        18, 15, 3, params)


def test_zoneout():
    h = _x(2, 3)
    x = _x(2, 3)
    # |y| = 6 selects; read h 6 + x 6 + flag 6 = 18; write 6
    assert cost(F.zoneout, h, x) == (6, 18, 6, {'ratio': 0.5})
    assert F.zoneout(h, x).size == 6


def test_zoneout_batch1():
    h = _x(1, 4)
    x = _x(1, 4)
    # 4 selects; 4 + 4 + 4 = 12 read; 4 written
    assert cost(F.zoneout, h, x, ratio=0.3) == (4, 12, 4, {'ratio': 0.3})


def test_zoneout_not_training_is_no_call():
    with chainer.using_config('train', False):
        assert calls_of(F.zoneout, _x(2, 3), _x(2, 3)) == []


# Bytes through the hook: random arrays are read in the dtype Chainer
# gives them (masks drawn by SimplifiedDropconnect and Zoneout's flags are
# booleans).

def _bytes(fn, *args, name, **kwargs):
    with ComputationalCostHook() as cch:
        fn(*args, **kwargs)
    record = cch.layer_report[name]
    return record['mread'], record['mwrite']


def test_dropout_bytes():
    x = _x(2, 3).astype(np.float16)
    # x 6*2 = 12 + drawn mask (x's dtype) 12 -> 24; 6*2 = 12 written
    assert _bytes(F.dropout, x, name='Dropout-1') == (24, 12)
    # a given float32 mask: 12 + 6*4 = 36; the product is float32: 24
    mask = np.full((2, 3), 2, np.float32)
    assert _bytes(F.dropout, x, mask=mask, name='Dropout-1') == (36, 24)
    x64 = _x(2, 3).astype(np.float64)
    # 6*8 + 6*8 = 96; 48
    assert _bytes(F.dropout, x64, name='Dropout-1') == (96, 48)


def test_zoneout_bytes():
    h = _x(2, 3).astype(np.float64)
    x = _x(2, 3).astype(np.float64)
    # h 48 + x 48 + flag 6*1 = 102; 48
    assert _bytes(F.zoneout, h, x, name='Zoneout-1') == (102, 48)
    # float16: 12 + 12 + 6 = 30; 12
    assert _bytes(F.zoneout, h.astype(np.float16), x.astype(np.float16),
                  name='Zoneout-1') == (30, 12)


def test_gaussian_bytes():
    mean = _x(2, 3).astype(np.float64)
    ln_var = np.zeros((2, 3), np.float64)
    # mean 48 + ln_var 48 + eps (mean's dtype) 48 = 144; 48
    assert _bytes(F.gaussian, mean, ln_var, name='Gaussian-1') == (144, 48)
    # float16: 12*3 = 36; 12
    assert _bytes(F.gaussian, mean.astype(np.float16),
                  ln_var.astype(np.float16), name='Gaussian-1') == (36, 12)


def test_simplified_dropconnect_bytes():
    x = _x(2, 3).astype(np.float16)
    W = np.ones((4, 3), np.float16)
    b = np.ones((4,), np.float16)
    # x 6*2 = 12 + W 12*2 = 24 + scale 2 + bool mask 2*12 = 24 + b 4*2 = 8
    # -> 70; y 2*4 float16 = 16
    assert _bytes(F.simplified_dropconnect, x, W, b,
                  name='SimplifiedDropconnect-1') == (70, 16)
    # float64, shared mask: x 48 + W 96 + scale 8 + mask 12 + b 32 = 196;
    # 8*8 = 64
    assert _bytes(F.simplified_dropconnect, x.astype(np.float64),
                  W.astype(np.float64), b.astype(np.float64),
                  use_batchwise_mask=False,
                  name='SimplifiedDropconnect-1') == (196, 64)
    # a given float32 mask, batchwise: 12 + 24 + 2 + 24*4 = 96 + 8 -> 142
    mask = np.ones((2, 4, 3), np.float32)
    assert _bytes(F.simplified_dropconnect, x, W, b, mask=mask,
                  name='SimplifiedDropconnect-1')[0] == 142


# Gradient nodes

def _dropout_backward(x):
    x = chainer.Variable(x)
    y = F.dropout(x, 0.5)
    y.grad = np.ones_like(y.array)
    y.backward()


def test_dropout_grad():
    x = _x(2, 3)
    # |gy| = 6 products; gy 6 + mask 6 = 12 read; 6 written
    assert cost(_dropout_backward, x, kind='DropoutGrad') == (6, 12, 6, {})


def test_dropout_grad_bytes():
    x = _x(2, 3).astype(np.float16)
    with ComputationalCostHook() as cch:
        _dropout_backward(x)
    record = cch.layer_report['DropoutGrad-1']
    # gy 6*2 = 12 + the forward's float16 mask 12 -> 24; 12 written
    assert (record['mread'], record['mwrite']) == (24, 12)
    with ComputationalCostHook() as cch:
        _dropout_backward(x.astype(np.float64))
    record = cch.layer_report['DropoutGrad-1']
    # float64: 6*8 + 6*8 = 96; 48
    assert (record['mread'], record['mwrite']) == (96, 48)


def test_dropout_grad_cudnn_direct():
    gy = _x(2, 3)
    # built by hand (cuDNN only); the mask is taken in gy's shape and
    # dtype: 6 products, 6 + 6 = 12 read, 6 written
    node = DropoutGradCuDNN(None, 0.25)
    calc = calculators[DropoutGradCuDNN]
    assert validate_cost(calc(node, (gy,)), 'c', 'DropoutGradCuDNN') == (
        6, 12, 6, {'ratio': 0.25})
