import sys

import numpy as np
import pytest

import chainer
import chainer.functions as F
import chainer.links as L

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.cost_calculators import calculators
from chainer_computational_cost.cost_calculators import validate_cost
from helpers import cost


def _z(*shape):
    return np.zeros(shape, np.float32)


# LSTM: 16 single FLOPs + 1 multiply-add per updated cell unit.

def test_lstm():
    c, x = _z(2, 3), _z(2, 12)
    # n = |x|/4 = 6; FMA 17*6 = 102, no FMA 18*6 = 108
    # mread 6 + 24 = 30; mwrite |c| + |h| = 6 + 6 = 12
    assert cost(F.lstm, c, x) == (102, 30, 12, {})
    assert cost(F.lstm, c, x, fma=False) == (108, 30, 12, {})
    c_new, h = F.lstm(c, x)
    assert c_new.size + h.size == 12


def test_lstm_batch1():
    c, x = _z(1, 3), _z(1, 12)
    # n = 3; 17*3 = 51, 18*3 = 54; mread 3 + 12 = 15; mwrite 3 + 3 = 6
    assert cost(F.lstm, c, x) == (51, 15, 6, {})
    assert cost(F.lstm, c, x, fma=False) == (54, 15, 6, {})


def test_lstm_shorter_x():
    # x updates only the first row of c; the other 2 rows are copied
    c, x = _z(3, 2), _z(1, 8)
    # n = 8/4 = 2; 17*2 = 34, 18*2 = 36
    # mread 6 + 8 = 14; mwrite |c| + |h| = 6 + 2 = 8
    assert cost(F.lstm, c, x) == (34, 14, 8, {})
    assert cost(F.lstm, c, x, fma=False) == (36, 14, 8, {})
    c_new, h = F.lstm(c, x)
    assert c_new.size + h.size == 8


def test_lstm_trailing_axes():
    c, x = _z(2, 2, 3), _z(2, 8, 3)
    # n = 48/4 = 12; 17*12 = 204; mread 12 + 48 = 60; mwrite 12 + 12 = 24
    assert cost(F.lstm, c, x) == (204, 60, 24, {})


# SLSTM: 26 single FLOPs + 3 multiply-adds per cell unit.

def test_slstm():
    c1, c2, x1, x2 = _z(2, 3), _z(2, 3), _z(2, 12), _z(2, 12)
    # n = 6; FMA 29*6 = 174, no FMA 32*6 = 192
    # mread 6 + 6 + 24 + 24 = 60; mwrite 6 + 6 = 12
    assert cost(F.slstm, c1, c2, x1, x2) == (174, 60, 12, {})
    assert cost(F.slstm, c1, c2, x1, x2, fma=False) == (192, 60, 12, {})
    c, h = F.slstm(c1, c2, x1, x2)
    assert c.size + h.size == 12


def test_slstm_batch1():
    c1, c2, x1, x2 = _z(1, 2), _z(1, 2), _z(1, 8), _z(1, 8)
    # n = 2; 29*2 = 58, 32*2 = 64; mread 2 + 2 + 8 + 8 = 20; mwrite 4
    assert cost(F.slstm, c1, c2, x1, x2) == (58, 20, 4, {})
    assert cost(F.slstm, c1, c2, x1, x2, fma=False) == (64, 20, 4, {})


# TreeLSTM with N children: 4N + 12 single FLOPs + N multiply-adds per unit.

def test_tree_lstm_2_children():
    c1, c2, x = _z(2, 3), _z(2, 3), _z(2, 15)
    # N = 2, n = 6; FMA (5*2 + 12)*6 = 132, no FMA (6*2 + 12)*6 = 144
    # mread 6 + 6 + 30 = 42; mwrite 6 + 6 = 12
    assert cost(F.tree_lstm, c1, c2, x) == (132, 42, 12, {'n_ary': 2})
    assert cost(F.tree_lstm, c1, c2, x, fma=False) == (
        144, 42, 12, {'n_ary': 2})
    c, h = F.tree_lstm(c1, c2, x)
    assert c.size + h.size == 12


def test_tree_lstm_1_child_batch1():
    c1, x = _z(1, 4), _z(1, 16)
    # N = 1, n = 4; (5 + 12)*4 = 68, (6 + 12)*4 = 72 (same as LSTM)
    # mread 4 + 16 = 20; mwrite 8
    assert cost(F.tree_lstm, c1, x) == (68, 20, 8, {'n_ary': 1})
    assert cost(F.tree_lstm, c1, x, fma=False) == (72, 20, 8, {'n_ary': 1})


def test_tree_lstm_3_children():
    cs, x = [_z(2, 1)] * 3, _z(2, 6)
    # N = 3, n = 2; (15 + 12)*2 = 54, (18 + 12)*2 = 60
    # mread 3*2 + 12 = 18; mwrite 4
    assert cost(F.tree_lstm, *cs, x) == (54, 18, 4, {'n_ary': 3})
    assert cost(F.tree_lstm, *cs, x, fma=False) == (60, 18, 4, {'n_ary': 3})


# NStep RNNs run only on cuDNN: build the Function object without its
# cuDNN-dependent __init__ and call the calculator on zero arrays laid out
# as its inputs: hx, [cx,] w (all weights and biases), xs (concatenated).

def _nstep_cost(name, n_layers, in_data, fma=True):
    for cls, calc in calculators.items():
        if cls.__name__ == name:
            break
    else:
        raise AssertionError('no calculator for ' + name)
    func = cls.__new__(cls)
    func.n_layers = n_layers
    return validate_cost(calc(func, in_data, fma_1flop=fma),
                         calc.__name__, name)


def _check(name, n_layers, in_data, fma_cost, no_fma_cost):
    assert _nstep_cost(name, n_layers, in_data) == fma_cost
    assert _nstep_cost(name, n_layers, in_data, fma=False) == no_fma_cost


def test_n_step_rnn_tanh():
    # L=1, H=3, I=2, lengths [2, 1]: T=3, B=2
    # |w| = W 3*2 + R 3*3 + biases 3 + 3 = 21
    hx, w, xs = _z(1, 2, 3), _z(21, 1, 1), _z(3, 2)
    p = {'n_layers': 1, 'units': 3}
    # FMA: T H (I + H + 2) = 3*3*(2+3+2) = 63
    # no FMA: 3*3*(2*(2+3) + 2) = 9*12 = 108
    # mread 6 + 21 + 6 = 33; mwrite |hy| + T H = 6 + 9 = 15
    _check('NStepRNNTanh', 1, (hx, w, xs), (63, 33, 15, p),
           (108, 33, 15, p))


def test_n_step_rnn_relu_2_layers_batch1():
    # L=2, H=2, I=3, lengths [1, 1]: T=2, B=1
    # |w| = layer 0: 2*3 + 2*2 + 2 + 2 = 14; layer 1: 2*2 + 2*2 + 4 = 12
    hx, w, xs = _z(2, 1, 2), _z(26, 1, 1), _z(2, 3)
    p = {'n_layers': 2, 'units': 2}
    # FMA: T H ((3+2+2) + (2+2+2)) = 2*2*(7+6) = 52
    # no FMA: 2*2*((2*5+2) + (2*4+2)) = 4*(12+10) = 88
    # mread 4 + 26 + 6 = 36; mwrite 4 + 2*2 = 8
    _check('NStepRNNReLU', 2, (hx, w, xs), (52, 36, 8, p), (88, 36, 8, p))


def test_n_step_bi_rnn_tanh_2_layers():
    # L=2, D=2, H=2, I=3, lengths [2, 2, 1]: T=5, B=2
    # |w| per direction: layer 0: 2*3 + 2*2 + 4 = 14; layer 1 (I_1 = 2H = 4)
    # 2*4 + 2*2 + 4 = 16; total 2*14 + 2*16 = 60
    hx, w, xs = _z(4, 2, 2), _z(60, 1, 1), _z(5, 3)
    p = {'n_layers': 2, 'units': 2}
    # FMA: 2 T H ((3+2+2) + (4+2+2)) = 2*5*2*(7+8) = 300
    # no FMA: 20*((2*5+2) + (2*6+2)) = 20*(12+14) = 520
    # mread 16 + 60 + 15 = 91; mwrite 16 + 2*5*2 = 36
    _check('NStepBiRNNTanh', 2, (hx, w, xs), (300, 91, 36, p),
           (520, 91, 36, p))


def test_n_step_bi_rnn_relu_batch1():
    # L=1, D=2, H=3, I=2, lengths [1]: T=1, B=1
    # |w| = 2 * (3*2 + 3*3 + 3 + 3) = 42
    hx, w, xs = _z(2, 1, 3), _z(42, 1, 1), _z(1, 2)
    p = {'n_layers': 1, 'units': 3}
    # FMA: 2*1*3*(2+3+2) = 42; no FMA: 6*(2*5+2) = 72
    # mread 6 + 42 + 2 = 50; mwrite 6 + 2*1*3 = 12
    _check('NStepBiRNNReLU', 1, (hx, w, xs), (42, 50, 12, p),
           (72, 50, 12, p))


def test_n_step_gru():
    # L=1, H=2, I=3, lengths [2, 2]: T=4, B=2
    # |w| = 3 W 2*3 + 3 R 2*2 + 6 biases of 2 = 18 + 12 + 12 = 42
    hx, w, xs = _z(1, 2, 2), _z(42, 1, 1), _z(4, 3)
    p = {'n_layers': 1, 'units': 2}
    # FMA: T H (3 (I+H) + 15) = 4*2*(15+15) = 240
    # no FMA: 8*(6*5 + 17) = 8*47 = 376
    # mread 4 + 42 + 12 = 58; mwrite 4 + 4*2 = 12
    _check('NStepGRU', 1, (hx, w, xs), (240, 58, 12, p), (376, 58, 12, p))


def test_n_step_bi_gru_2_layers_batch1():
    # L=2, D=2, H=1, I=2, lengths [1, 1, 1]: T=3, B=1
    # |w| per direction and layer (I_0 = 2, I_1 = 2H = 2):
    # 3*1*2 + 3*1*1 + 6 = 15; total 4*15 = 60
    hx, w, xs = _z(4, 1, 1), _z(60, 1, 1), _z(3, 2)
    p = {'n_layers': 2, 'units': 1}
    # FMA: 2 T H ((3*3 + 15) + (3*3 + 15)) = 2*3*1*48 = 288
    # no FMA: 6*((6*3 + 17) + (6*3 + 17)) = 6*70 = 420
    # mread 4 + 60 + 6 = 70; mwrite 4 + 2*3*1 = 10
    _check('NStepBiGRU', 2, (hx, w, xs), (288, 70, 10, p), (420, 70, 10, p))


def test_n_step_lstm():
    # L=1, H=2, I=3, lengths [2, 1]: T=3, B=2
    # |w| = 4 W 2*3 + 4 R 2*2 + 8 biases of 2 = 24 + 16 + 16 = 56
    hx, cx, w, xs = _z(1, 2, 2), _z(1, 2, 2), _z(56, 1, 1), _z(3, 3)
    p = {'n_layers': 1, 'units': 2}
    # FMA: T H (4 (I+H) + 21) = 3*2*(20+21) = 246
    # no FMA: 6*(8*5 + 22) = 6*62 = 372
    # mread 4 + 4 + 56 + 9 = 73; mwrite 4 + 4 + 3*2 = 14
    _check('NStepLSTM', 1, (hx, cx, w, xs), (246, 73, 14, p),
           (372, 73, 14, p))


def test_n_step_lstm_2_layers_batch1():
    # L=2, H=1, I=1, lengths [1]: T=1, B=1
    # |w| per layer = 4*1 + 4*1 + 8 = 16; total 32
    hx, cx, w, xs = _z(2, 1, 1), _z(2, 1, 1), _z(32, 1, 1), _z(1, 1)
    p = {'n_layers': 2, 'units': 1}
    # FMA: 1*1*((4*2 + 21) + (4*2 + 21)) = 58
    # no FMA: (8*2 + 22)*2 = 76
    # mread 2 + 2 + 32 + 1 = 37; mwrite 2 + 2 + 1 = 5
    _check('NStepLSTM', 2, (hx, cx, w, xs), (58, 37, 5, p), (76, 37, 5, p))


def test_n_step_bi_lstm_2_layers():
    # L=2, D=2, H=2, I=1, lengths [2, 2]: T=4, B=2
    # |w| per direction: layer 0: 4*2*1 + 4*2*2 + 8*2 = 40;
    # layer 1 (I_1 = 4): 4*2*4 + 16 + 16 = 64; total 2*40 + 2*64 = 208
    hx, cx, w, xs = _z(4, 2, 2), _z(4, 2, 2), _z(208, 1, 1), _z(4, 1)
    p = {'n_layers': 2, 'units': 2}
    # FMA: 2*4*2*((4*3 + 21) + (4*6 + 21)) = 16*(33+45) = 1248
    # no FMA: 16*((8*3 + 22) + (8*6 + 22)) = 16*(46+70) = 1856
    # mread 16 + 16 + 208 + 4 = 244; mwrite 16 + 16 + 2*4*2 = 48
    _check('NStepBiLSTM', 2, (hx, cx, w, xs), (1248, 244, 48, p),
           (1856, 244, 48, p))


# The CPU implementation of F.n_step_* (linear/lstm calls, no NStep node)
# gives the real output shapes: they must match the mwrite derived above,
# and the real weights must add up to the |w| used above.

def _weights(n_w, n_layers, directions, units, in_size):
    ws, bs = [], []
    for layer in range(n_layers):
        layer_in = in_size if layer == 0 else directions * units
        for _ in range(directions):
            ws.append([_z(units, layer_in if i < n_w // 2 else units)
                       for i in range(n_w)])
            bs.append([_z(units) for _ in range(n_w)])
    return ws, bs


def _total(arrays):
    return sum(a.size for group in arrays for a in group)


# (function, matrices per layer and direction, has a cell, L, D, H, I,
#  lengths, |w| and mwrite derived by hand in the tests above)
_CPU_CASES = [
    (F.n_step_rnn, 2, False, 1, 1, 3, 2, [2, 1], 21, 15),
    (F.n_step_birnn, 2, False, 2, 2, 2, 3, [2, 2, 1], 60, 36),
    (F.n_step_gru, 6, False, 1, 1, 2, 3, [2, 2], 42, 12),
    (F.n_step_bigru, 6, False, 2, 2, 1, 2, [1, 1, 1], 60, 10),
    (F.n_step_lstm, 8, True, 1, 1, 2, 3, [2, 1], 56, 14),
    (F.n_step_bilstm, 8, True, 2, 2, 2, 1, [2, 2], 208, 48),
]


@pytest.mark.parametrize(
    'fn, n_w, cell, n_layers, dirs, units, in_size, lengths, w_size, mwrite',
    _CPU_CASES)
def test_n_step_matches_cpu_outputs(fn, n_w, cell, n_layers, dirs, units,
                                    in_size, lengths, w_size, mwrite):
    ws, bs = _weights(n_w, n_layers, dirs, units, in_size)
    assert _total(ws) + _total(bs) == w_size
    hx = _z(n_layers * dirs, lengths[0], units)
    xs = [_z(b, in_size) for b in lengths]
    if cell:
        hy, cy, ys = fn(n_layers, 0.0, hx, hx.copy(), ws, bs, xs)
        states = hy.size + cy.size
    else:
        hy, ys = fn(n_layers, 0.0, hx, ws, bs, xs)
        states = hy.size
    assert states + sum(y.size for y in ys) == mwrite


def test_cudnn_rnn_weight_concat_moves_every_element_once():
    # chainer.functions.rnn on Chainer 7, .connection on Chainer 6
    cls, = [c for c in calculators if c.__name__ == 'CudnnRNNWeightConcat']
    func = cls.__new__(cls)  # __init__ needs cuDNN
    func.n_layers = 1
    w = [np.zeros((3, 2), np.float32), np.zeros((3, 3), np.float32)]
    b = [np.zeros((3,), np.float32), np.zeros((3,), np.float32)]
    # 6 + 9 + 3 + 3 = 21 elements
    assert calculators[cls](func, w + b, fma_1flop=True) == (
        0, 21, 21, {'n_layers': 1})


# LSTMGrad / SLSTMGrad: either incoming gradient may be None

def _grad_calc(fn, name):
    """The gradient class ``name`` next to ``fn`` (its module differs
    between Chainer 6 and 7) and its calculator."""
    cls = getattr(sys.modules[fn.__module__], name)
    return cls, calculators[cls]


def _grad_cost(fn, name, in_data, fma):
    cls, calc = _grad_calc(fn, name)
    return validate_cost(calc(cls(), in_data, fma_1flop=fma), calc.__name__,
                         name)


def test_lstm_grad_with_missing_gradients():
    c_prev, x, c = _z(3, 2), _z(2, 8), _z(3, 2)
    gc, gh = _z(3, 2), _z(2, 2)
    # n = |x|/4 = 4 units (2 rows of 2); c_prev has a third row, whose
    # gradient is g_c's copied (or zeros)
    cases = [
        # both: 30 + 3 FMA -> 33*4 = 132, 36*4 = 144; read c_prev rows 4
        # + x 16 + c rows 4 + g_h 4 + g_c 6 = 34
        ((gc, gh), 132, 144, 34),
        # g_h only: 31 + 2 FMA -> 33*4 = 132, 35*4 = 140; read 4 + 16 + 8
        ((None, gh), 132, 140, 28),
        # g_c only: 20 + 1 FMA -> 21*4 = 84, 22*4 = 88; read 4 + 16 + 6
        ((gc, None), 84, 88, 26),
        # none: nothing to compute or read; the zero gradients are written
        ((None, None), 0, 0, 0),
    ]
    for grads, fma_flops, flops, mread in cases:
        in_data = (c_prev, x, c) + grads
        # write g_c_prev 6 + g_x 16 = 22
        assert _grad_cost(F.lstm, 'LSTMGrad', in_data, True) == (
            fma_flops, mread, 22, {})
        assert _grad_cost(F.lstm, 'LSTMGrad', in_data, False) == (
            flops, mread, 22, {})


def test_lstm_grad_in_a_backward_pass():
    def h_only():
        # c's gradient is None: only h is used
        x = chainer.Variable(np.ones((2, 4), np.float32))
        F.sum(L.LSTM(4, 5)(x)).backward()
    # n = 2*5 = 10 units, g_h only: 33*10 = 330, 35*10 = 350;
    # read c_prev 10 + x 40 + c 10 + g_h 10 = 70; write 10 + 40 = 50
    assert cost(h_only, kind='LSTMGrad') == (330, 70, 50, {})
    assert cost(h_only, kind='LSTMGrad', fma=False) == (350, 70, 50, {})

    def both():
        c, h = F.lstm(chainer.Variable(_z(2, 3)),
                      chainer.Variable(_z(2, 12)))
        (F.sum(c) + F.sum(h)).backward()
    # n = 6: 33*6 = 198, 36*6 = 216; read 6 + 24 + 6 + 6 + 6 = 48;
    # write 6 + 24 = 30
    assert cost(both, kind='LSTMGrad') == (198, 48, 30, {})
    assert cost(both, kind='LSTMGrad', fma=False) == (216, 48, 30, {})


def test_slstm_grad_with_missing_gradients():
    c1, c2, x1, x2, c = _z(2, 3), _z(2, 3), _z(2, 12), _z(2, 12), _z(2, 3)
    gc, gh = _z(2, 3), _z(2, 3)
    # n = 6 units; read c1, c2, x1, x2: 6 + 6 + 24 + 24 = 60
    cases = [
        # both: 51 + 4 FMA -> 55*6 = 330, 59*6 = 354; read 60 + g_c 6
        # + c 6 + g_h 6 = 78
        ((gc, gh), 330, 354, 78),
        # g_h only: 52 + 3 FMA -> 55*6 = 330, 58*6 = 348; read 60 + 12
        ((None, gh), 330, 348, 72),
        # g_c only: 40 + 2 FMA -> 42*6 = 252, 44*6 = 264; read 60 + 6
        ((gc, None), 252, 264, 66),
        # none: nothing to compute or read; the zero gradients are written
        ((None, None), 0, 0, 0),
    ]
    for grads, fma_flops, flops, mread in cases:
        in_data = (c1, c2, x1, x2, c) + grads
        # write the gradients of c1, c2, x1, x2: 60
        assert _grad_cost(F.slstm, 'SLSTMGrad', in_data, True) == (
            fma_flops, mread, 60, {})
        assert _grad_cost(F.slstm, 'SLSTMGrad', in_data, False) == (
            flops, mread, 60, {})


def test_slstm_grad_in_a_backward_pass():
    def h_only():
        args = [chainer.Variable(a) for a in
                (_z(2, 3), _z(2, 3), _z(2, 12), _z(2, 12))]
        F.sum(F.slstm(*args)[1]).backward()
    # g_h only: 330 / 348; read 60 + 12 = 72; write 60
    assert cost(h_only, kind='SLSTMGrad') == (330, 72, 60, {})
    assert cost(h_only, kind='SLSTMGrad', fma=False) == (348, 72, 60, {})


def test_lstm_grad_through_the_hook_with_a_missing_gradient():
    x = chainer.Variable(np.ones((2, 4), np.float32))
    with ComputationalCostHook() as cch:
        F.sum(L.LSTM(4, 5)(x)).backward()
    record = cch.layer_report['LSTMGrad-1']
    # c's gradient reaches LSTMGrad as None; n = 10 units, g_h only:
    # 33*10 = 330 FLOPs, read 70 elements = 280 bytes, write 50 = 200
    assert record['input_shapes'][3] is None
    assert (record['flops'], record['mread'], record['mwrite']) == (
        330, 280, 200)
