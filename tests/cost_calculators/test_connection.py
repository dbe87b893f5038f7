import chainer
import chainer.functions as F
from chainer.functions.connection.linear import LinearFunction
import chainer.links as L
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.cost_calculators import calculators
from chainer_computational_cost.cost_calculators import function_object
from chainer_computational_cost.cost_calculators import function_type
from helpers import assert_params
from helpers import calls_of
from helpers import cost
from helpers import flops_by_layer


def _x(*shape, dtype=np.float32):
    return np.ones(shape, dtype=dtype)


def _conv_params(k, s, p, d=1, groups=1, nobias=False):
    return {'k': k, 's': s, 'p': p, 'd': d, 'groups': groups,
            'nobias': nobias}


# Convolution2DFunction

def test_conv2d_vgg_first_layer_reference():
    x, W, b = _x(1, 3, 224, 224), _x(64, 3, 3, 3), _x(64)
    # n_out = 64*224*224 = 3211264, K = 3*3*3 = 27
    # FLOPs = 3211264*27 = 86704128
    # mread = 150528 + 1728 + 64 = 152320
    assert cost(F.convolution_2d, x, W, b, stride=1, pad=1) == (
        86704128, 152320, 3211264, _conv_params(3, 1, 1))


def test_conv2d_bias_batch2():
    x, W, b = _x(2, 3, 4, 4), _x(5, 3, 3, 3), _x(5)
    # out 4x4: n_out = 2*5*4*4 = 160, K = 3*3*3 = 27
    # FMA 160*27 = 4320; no FMA with bias 2*4320 = 8640
    # mread 96 + 135 + 5 = 236
    expected = _conv_params(3, 1, 1)
    assert cost(F.convolution_2d, x, W, b, pad=1) == (
        4320, 236, 160, expected)
    assert cost(F.convolution_2d, x, W, b, pad=1, fma=False) == (
        8640, 236, 160, expected)
    assert F.convolution_2d(x, W, b, pad=1).size == 160


def test_conv2d_nobias_stride2_batch1():
    x, W = _x(1, 2, 5, 5), _x(3, 2, 3, 3)
    # out (5-3)//2+1 = 2: n_out = 1*3*2*2 = 12, K = 2*3*3 = 18
    # FMA 12*18 = 216; no FMA 2*216 - 12 = 420; mread 50 + 54 = 104
    expected = _conv_params(3, 2, 0, nobias=True)
    assert cost(F.convolution_2d, x, W, stride=2) == (216, 104, 12, expected)
    assert cost(F.convolution_2d, x, W, stride=2, fma=False) == (
        420, 104, 12, expected)
    assert F.convolution_2d(x, W, stride=2).size == 12


def test_conv2d_cover_all():
    x, W = _x(1, 1, 4, 4), _x(1, 1, 3, 3)
    # cover_all: out (4-3+2-1)//2+1 = 2 -> n_out 4, K 9: 36 FLOPs
    # mread 16 + 9 = 25
    expected = _conv_params(3, 2, 0, nobias=True)
    assert cost(F.convolution_2d, x, W, stride=2, cover_all=True) == (
        36, 25, 4, expected)
    assert F.convolution_2d(x, W, stride=2, cover_all=True).size == 4
    # without cover_all: out (4-3)//2+1 = 1 -> n_out 1, 9 FLOPs
    assert cost(F.convolution_2d, x, W, stride=2) == (9, 25, 1, expected)


def test_conv2d_groups_dilate():
    x, W = _x(1, 4, 5, 5), _x(6, 2, 3, 3)
    # dilated kernel 5: out (5+4-5)//1+1 = 5 -> n_out 6*5*5 = 150
    # K = (4/2)*3*3 = 18: FMA 150*18 = 2700; no FMA 5400 - 150 = 5250
    # mread 100 + 108 = 208
    kw = dict(pad=2, dilate=2, groups=2)
    expected = _conv_params(3, 1, 2, d=2, groups=2, nobias=True)
    assert cost(F.convolution_2d, x, W, **kw) == (2700, 208, 150, expected)
    assert cost(F.convolution_2d, x, W, fma=False, **kw) == (
        5250, 208, 150, expected)
    assert F.convolution_2d(x, W, **kw).size == 150


def test_conv2d_anisotropic():
    x, W = _x(1, 1, 5, 6), _x(2, 1, 3, 2)
    # out h (5+2-3)//2+1 = 3, w (6-2)//1+1 = 5: n_out 2*3*5 = 30
    # K = 1*3*2 = 6: FMA 180; mread 30 + 12 = 42
    assert cost(F.convolution_2d, x, W, stride=(2, 1), pad=(1, 0)) == (
        180, 42, 30, _conv_params((3, 2), (2, 1), (1, 0), nobias=True))


# ConvolutionND

def test_conv3d_bias_batch2():
    x, W, b = _x(2, 2, 3, 3, 3), _x(4, 2, 2, 2, 2), _x(4)
    # out 2x2x2: n_out = 2*4*8 = 64, K = 2*2*2*2 = 16
    # FMA 1024; no FMA 2048; mread 108 + 64 + 4 = 176
    expected = _conv_params(2, 1, 0)
    assert cost(F.convolution_nd, x, W, b) == (1024, 176, 64, expected)
    assert cost(F.convolution_nd, x, W, b, fma=False) == (
        2048, 176, 64, expected)
    assert F.convolution_nd(x, W, b).size == 64


def test_conv1d_nobias_stride_pad():
    x, W = _x(1, 3, 7), _x(2, 3, 3)
    # out (7+2-3)//2+1 = 4: n_out 1*2*4 = 8, K = 3*3 = 9
    # FMA 72; no FMA 144 - 8 = 136; mread 21 + 18 = 39
    expected = _conv_params(3, 2, 1, nobias=True)
    assert cost(F.convolution_nd, x, W, stride=2, pad=1) == (
        72, 39, 8, expected)
    assert cost(F.convolution_nd, x, W, stride=2, pad=1, fma=False) == (
        136, 39, 8, expected)


def test_conv1d_cover_all():
    x, W = _x(1, 1, 4), _x(1, 1, 3)
    # cover_all: out (4-3+2-1)//2+1 = 2 -> n_out 2, K 3: 6 FLOPs
    # mread 4 + 3 = 7
    assert cost(F.convolution_nd, x, W, stride=2, cover_all=True) == (
        6, 7, 2, _conv_params(3, 2, 0, nobias=True))
    assert F.convolution_nd(x, W, stride=2, cover_all=True).size == 2


def test_conv3d_anisotropic_groups():
    x, W = _x(1, 2, 3, 4, 5), _x(2, 1, 1, 2, 3)
    # groups 2, out (3, 3, 3): n_out 1*2*27 = 54, K = 1*1*2*3 = 6
    # FMA 324; no FMA 648 - 54 = 594; mread 120 + 12 = 132
    expected = _conv_params((1, 2, 3), 1, 0, groups=2, nobias=True)
    assert cost(F.convolution_nd, x, W, groups=2) == (324, 132, 54, expected)
    assert cost(F.convolution_nd, x, W, groups=2, fma=False) == (
        594, 132, 54, expected)
    assert F.convolution_nd(x, W, groups=2).size == 54


# Deconvolution2DFunction

def test_deconv2d_bias_batch2():
    x, W, b = _x(2, 3, 2, 2), _x(3, 4, 3, 3), _x(4)
    # out 2*(2-1)+3-2 = 3: |y| = 2*4*3*3 = 72
    # P = |x| * 4 * 3*3 = 24*36 = 864: FMA 864; no FMA 1728
    # mread 24 + 108 + 4 = 136
    expected = _conv_params(3, 2, 1)
    assert cost(F.deconvolution_2d, x, W, b, stride=2, pad=1) == (
        864, 136, 72, expected)
    assert cost(F.deconvolution_2d, x, W, b, stride=2, pad=1,
                fma=False) == (1728, 136, 72, expected)
    assert F.deconvolution_2d(x, W, b, stride=2, pad=1).size == 72


def test_deconv2d_outsize_nobias_batch1():
    x, W = _x(1, 2, 2, 2), _x(2, 1, 2, 2)
    # outsize (5, 5): |y| = 1*1*25 = 25; P = 8*1*2*2 = 32
    # products reach rows/columns 0..2*(2-1)+2-1 = 3: |y_r| = 4*4 = 16
    # (the last row and column get nothing)
    # FMA 32; no FMA 64 - 16 = 48; mread 8 + 8 = 16
    kw = dict(stride=2, outsize=(5, 5))
    expected = _conv_params(2, 2, 0, nobias=True)
    assert cost(F.deconvolution_2d, x, W, **kw) == (32, 16, 25, expected)
    assert cost(F.deconvolution_2d, x, W, fma=False, **kw) == (
        48, 16, 25, expected)
    assert F.deconvolution_2d(x, W, **kw).size == 25


def test_deconv2d_stride_beyond_kernel_leaves_gaps():
    x, W = _x(1, 1, 2, 2), _x(1, 1, 1, 1)
    # out 2*(2-1)+1 = 3: |y| = 9; P = 4*1*1 = 4
    # reached positions 0 and 2 per axis: |y_r| = 2*2 = 4
    # FMA 4; no FMA 2*4 - 4 = 4 (four multiplications, no addition)
    expected = _conv_params(1, 2, 0, nobias=True)
    assert cost(F.deconvolution_2d, x, W, stride=2) == (4, 5, 9, expected)
    assert cost(F.deconvolution_2d, x, W, stride=2, fma=False) == (
        4, 5, 9, expected)
    # dilation 3, kernel 2, stride 1 on 2 inputs: positions {0,1} + {0,3}
    # = {0,1,3,4} of out (2-1)+3*(2-1)+1 = 5 (1-D)
    # P = 2*2 = 4; |y_r| = 4; no FMA 8 - 4 = 4
    x1, W1 = _x(1, 1, 2), _x(1, 1, 2)
    expected = _conv_params(2, 1, 0, d=3, nobias=True)
    assert cost(F.deconvolution_nd, x1, W1, dilate=3, fma=False) == (
        4, 4, 5, expected)


def test_deconv2d_groups_dilate():
    x, W = _x(1, 4, 2, 2), _x(4, 1, 2, 2)
    # groups 2: c_out = 1*2 = 2; out 1*(2-1) + 2*(2-1)+1 = 4
    # |y| = 2*4*4 = 32; P = 16*1*4 = 64: FMA 64; no FMA 128 - 32 = 96
    # mread 16 + 16 = 32
    kw = dict(groups=2, dilate=2)
    expected = _conv_params(2, 1, 0, d=2, groups=2, nobias=True)
    assert cost(F.deconvolution_2d, x, W, **kw) == (64, 32, 32, expected)
    assert cost(F.deconvolution_2d, x, W, fma=False, **kw) == (
        96, 32, 32, expected)
    assert F.deconvolution_2d(x, W, **kw).size == 32


# DeconvolutionND

def test_deconv1d_bias_batch2():
    x, W, b = _x(2, 2, 3), _x(2, 3, 2), _x(3)
    # out 3-1+2 = 4: |y| = 2*3*4 = 24; P = 12*3*2 = 72
    # FMA 72; no FMA 144; mread 12 + 12 + 3 = 27
    expected = _conv_params(2, 1, 0)
    assert cost(F.deconvolution_nd, x, W, b) == (72, 27, 24, expected)
    assert cost(F.deconvolution_nd, x, W, b, fma=False) == (
        144, 27, 24, expected)
    assert F.deconvolution_nd(x, W, b).size == 24


def test_deconv3d_nobias_stride():
    x, W = _x(1, 1, 2, 2, 2), _x(1, 2, 2, 2, 2)
    # out 2*(2-1)+2 = 4 per axis: |y| = 2*64 = 128; P = 8*2*8 = 128
    # FMA 128; no FMA 256 - 128 = 128; mread 8 + 16 = 24
    expected = _conv_params(2, 2, 0, nobias=True)
    assert cost(F.deconvolution_nd, x, W, stride=2) == (
        128, 24, 128, expected)
    assert cost(F.deconvolution_nd, x, W, stride=2, fma=False) == (
        128, 24, 128, expected)
    assert F.deconvolution_nd(x, W, stride=2).size == 128


def test_deconv2d_nd_outsize_pad():
    x, W = _x(1, 1, 3, 2), _x(1, 1, 3, 3)
    # outsize (6, 4), stride 2, pad 1: |y| = 24; P = 6*1*9 = 54
    # FMA 54; no FMA 108 - 24 = 84; mread 6 + 9 = 15
    kw = dict(stride=2, pad=1, outsize=(6, 4))
    expected = _conv_params(3, 2, 1, nobias=True)
    assert cost(F.deconvolution_nd, x, W, **kw) == (54, 15, 24, expected)
    assert cost(F.deconvolution_nd, x, W, fma=False, **kw) == (
        84, 15, 24, expected)
    assert F.deconvolution_nd(x, W, **kw).size == 24


# LinearFunction

def test_linear_vgg_fc6_reference():
    # Shape-only arrays (no memory): the calculator never reads values.
    x = np.broadcast_to(np.float32(0), (1, 25088))
    W = np.broadcast_to(np.float32(0), (4096, 25088))
    b = np.broadcast_to(np.float32(0), (4096,))
    calc = calculators[LinearFunction]
    # 1*25088*4096 + 1*4096 = 102760448 + 4096 = 102764544
    # mread 25088 + 102760448 + 4096 = 102789632
    assert calc(LinearFunction(), (x, W, b), fma_1flop=True) == (
        102764544, 102789632, 4096, {'nobias': False})


def test_linear_bias_batch2():
    x, W, b = _x(2, 3), _x(4, 3), _x(4)
    # rows 2, in 3, out 4: FMA 2*3*4 + 2*4 = 32
    # no FMA 2*4*(2*3-1) + 8 = 48; mread 6 + 12 + 4 = 22; mwrite 8
    assert cost(F.linear, x, W, b) == (32, 22, 8, {'nobias': False})
    assert cost(F.linear, x, W, b, fma=False) == (
        48, 22, 8, {'nobias': False})
    assert F.linear(x, W, b).size == 8


def test_linear_nobias_batch1():
    x, W = _x(1, 5), _x(2, 5)
    # rows 1: FMA 1*5*2 = 10; no FMA 1*2*(10-1) = 18; mread 5 + 10 = 15
    assert cost(F.linear, x, W) == (10, 15, 2, {'nobias': True})
    assert cost(F.linear, x, W, fma=False) == (18, 15, 2, {'nobias': True})


def test_linear_batch_axes():
    x, W, b = _x(2, 3, 4), _x(5, 4), _x(5)
    # n_batch_axes=2: rows 6, in 4, out 5: FMA 6*4*5 + 6*5 = 150
    # no FMA 30*(8-1) + 30 = 240; mread 24 + 20 + 5 = 49; mwrite 30
    kw = dict(n_batch_axes=2)
    assert cost(F.linear, x, W, b, **kw) == (150, 49, 30, {'nobias': False})
    assert cost(F.linear, x, W, b, fma=False, **kw) == (
        240, 49, 30, {'nobias': False})
    assert F.linear(x, W, b, **kw).size == 30


def test_linear_flattened_input():
    x, W = _x(2, 2, 3), _x(4, 6)
    # rows 12/6 = 2, in 6, out 4: FMA 48; mread 12 + 24 = 36; mwrite 8
    assert cost(F.linear, x, W) == (48, 36, 8, {'nobias': True})


# BilinearFunction

def test_bilinear_plain():
    e1, e2, W = _x(2, 3), _x(2, 4), _x(3, 4, 5)
    # N 2, J 3, K 4, L 5: outer 2*3*4 = 24; NL 10, M 12
    # FMA 24 + 10*12 = 144; no FMA 24 + 10*(24-1) = 254
    # mread 6 + 8 + 60 = 74; mwrite 10
    assert cost(F.bilinear, e1, e2, W) == (144, 74, 10, {'linear': False})
    assert cost(F.bilinear, e1, e2, W, fma=False) == (
        254, 74, 10, {'linear': False})
    assert F.bilinear(e1, e2, W).size == 10


def test_bilinear_linear_terms():
    e1, e2, W = _x(2, 3), _x(2, 4), _x(3, 4, 5)
    V1, V2, b = _x(3, 5), _x(4, 5), _x(5)
    # M = 12 + 3 + 4 = 19: FMA 24 + 10*19 = 214; no FMA 24 + 2*190 = 404
    # mread 74 + 15 + 20 + 5 = 114
    assert cost(F.bilinear, e1, e2, W, V1, V2, b) == (
        214, 114, 10, {'linear': True})
    assert cost(F.bilinear, e1, e2, W, V1, V2, b, fma=False) == (
        404, 114, 10, {'linear': True})


def test_bilinear_batch1_multidim():
    e1, e2, W = _x(1, 2, 2), _x(1, 3), _x(4, 3, 2)
    # N 1, J 4, K 3, L 2: outer 12; NL 2, M 12
    # FMA 12 + 24 = 36; no FMA 12 + 2*23 = 58; mread 4 + 3 + 24 = 31
    assert cost(F.bilinear, e1, e2, W) == (36, 31, 2, {'linear': False})
    assert cost(F.bilinear, e1, e2, W, fma=False) == (
        58, 31, 2, {'linear': False})


# LocalConvolution2DFunction

def test_local_conv2d_bias_batch2():
    x, W, b = _x(2, 3, 4, 4), _x(5, 2, 2, 3, 3, 3), _x(5, 2, 2)
    # n_out = 2*5*2*2 = 40, K = 3*3*3 = 27: FMA 1080; no FMA 2160
    # mread 96 + 540 + 20 = 656
    expected = {'k': 3, 's': 1, 'nobias': False}
    assert cost(F.local_convolution_2d, x, W, b) == (1080, 656, 40, expected)
    assert cost(F.local_convolution_2d, x, W, b, fma=False) == (
        2160, 656, 40, expected)
    assert F.local_convolution_2d(x, W, b).size == 40


def test_local_conv2d_nobias_stride_batch1():
    x, W = _x(1, 2, 5, 4), _x(3, 2, 2, 2, 3, 2)
    # out h (5-3)//2+1 = 2, w (4-2)//2+1 = 2: n_out 1*3*2*2 = 12
    # K = 2*3*2 = 12: FMA 144; no FMA 288 - 12 = 276; mread 40 + 144 = 184
    expected = {'k': (3, 2), 's': 2, 'nobias': True}
    assert cost(F.local_convolution_2d, x, W, stride=2) == (
        144, 184, 12, expected)
    assert cost(F.local_convolution_2d, x, W, stride=2, fma=False) == (
        276, 184, 12, expected)
    assert F.local_convolution_2d(x, W, stride=2).size == 12


# EmbedIDFunction

def test_embed_id():
    x = np.array([[0, 1, 2], [3, 1, 0]], np.int32)
    W = _x(4, 5)
    # |x| 6, V 4, D 5: mread 6 + min(6, 4)*5 = 26; mwrite 6*5 = 30
    assert cost(F.embed_id, x, W) == (0, 26, 30, {})
    assert F.embed_id(x, W).size == 30


def test_embed_id_ignore_label():
    x = np.array([[0, 1, -1], [3, -1, 0]], np.int32)
    W = _x(4, 5)
    # 6 comparisons; mread 26 + 1 (label) = 27; mwrite 30
    assert cost(F.embed_id, x, W, ignore_label=-1) == (
        6, 27, 30, {'ignore_label': -1})


def test_embed_id_batch1_few_indices():
    x = np.array([[7, 2]], np.int32)
    W = _x(10, 3)
    # |x| 2 < V 10: mread 2 + 2*3 = 8; mwrite 2*3 = 6
    assert cost(F.embed_id, x, W) == (0, 8, 6, {})


# Shift

def test_shift():
    x = _x(2, 9, 3, 3)
    # |x| = 2*9*3*3 = 162 read and written, no FLOPs
    assert cost(F.shift, x) == (0, 162, 162, {'k': 3, 'd': 1})
    assert F.shift(x).size == 162


def test_shift_anisotropic_batch1():
    x = _x(1, 3, 4, 4)
    # |x| = 48
    assert cost(F.shift, x, ksize=(3, 1), dilate=(2, 1)) == (
        0, 48, 48, {'k': (3, 1), 'd': (2, 1)})


# params: exactly the keys and value types of 0.1.2 for the types it covered


@pytest.mark.parametrize('fn, args, kwargs, expected', [
    (F.convolution_2d, (_x(1, 2, 5, 6), _x(4, 2, 3, 1), _x(4)),
     dict(stride=(2, 1), pad=(1, 0)),
     {'k': (3, 1), 's': (2, 1), 'p': (1, 0), 'd': 1, 'groups': 1,
      'nobias': False}),
    (F.convolution_2d, (_x(1, 4, 5, 5), _x(2, 2, 3, 3)),
     dict(pad=2, dilate=2, groups=2),
     {'k': 3, 's': 1, 'p': 2, 'd': 2, 'groups': 2, 'nobias': True}),
    (F.deconvolution_2d, (_x(1, 2, 3, 3), _x(2, 1, 2, 3)),
     dict(stride=2, dilate=(1, 2), groups=2),
     {'k': (2, 3), 's': 2, 'p': 0, 'd': (1, 2), 'groups': 2,
      'nobias': True}),
    (F.deconvolution_2d, (_x(1, 2, 3, 3), _x(2, 1, 2, 2), _x(1)),
     dict(pad=(1, 0)),
     {'k': 2, 's': 1, 'p': (1, 0), 'd': 1, 'groups': 1, 'nobias': False}),
    (F.linear, (_x(2, 3), _x(4, 3), _x(4)), {}, {'nobias': False}),
    (F.linear, (_x(2, 3), _x(4, 3)), {}, {'nobias': True}),
    (F.shift, (_x(1, 9, 3, 3),), dict(ksize=3, dilate=2), {'k': 3, 'd': 2}),
    (F.shift, (_x(1, 3, 3, 3),), dict(ksize=(1, 3), dilate=(2, 1)),
     {'k': (1, 3), 'd': (2, 1)}),
])
def test_params_of_0_1_2_types(fn, args, kwargs, expected):
    assert_params(cost(fn, *args, **kwargs).params, expected)


# Bytes through the hook: every array read in its own dtype

def _report(fn, *args, name, **kwargs):
    with ComputationalCostHook() as cch:
        fn(*args, **kwargs)
    r = cch.layer_report[name]
    return r['flops'], r['mread'], r['mwrite']


def test_embed_id_bytes_int64_ids_float32_rows():
    x, W = np.zeros((2, 3), np.int64), _x(10, 6)
    # 6 ids of 8 B + min(6, 10)*6 = 36 rows' elements of 4 B:
    # 48 + 144 = 192; output 36*4 = 144
    assert _report(F.embed_id, x, W, name='EmbedIDFunction-1') == (
        0, 192, 144)


def test_embed_id_bytes_float16_and_float64():
    x = np.zeros((2, 3), np.int32)
    # 6*4 + min(6, 4)*5*2 = 24 + 40 = 64; output 30*2 = 60
    assert _report(F.embed_id, x, _x(4, 5, dtype=np.float16),
                   name='EmbedIDFunction-1') == (0, 64, 60)
    # ignore_label: 2 comparisons; 2*4 + 2*3*8 + 4 (label, an id) = 60
    # output 6*8 = 48
    x1 = np.array([[3, -1]], np.int32)
    assert _report(F.embed_id, x1, _x(10, 3, dtype=np.float64),
                   ignore_label=-1, name='EmbedIDFunction-1') == (2, 60, 48)


def test_conv2d_bytes_mixed_precision():
    x, W = _x(2, 3, 4, 4, dtype=np.float16), _x(5, 3, 3, 3)
    # out 2x2: |y| = 2*5*2*2 = 40, K = 27: 1080 FLOPs (FMA)
    # mread 96*2 + 135*4 = 192 + 540 = 732; y is float16: 40*2 = 80
    assert _report(F.convolution_2d, x, W,
                   name='Convolution2DFunction-1') == (1080, 732, 80)


def test_conv2d_bytes_float64_bias():
    x, W = _x(1, 1, 3, 3, dtype=np.float64), _x(2, 1, 2, 2, dtype=np.float64)
    b = _x(2, dtype=np.float64)
    # |y| = 2*2*2 = 8, K 4: 32 FLOPs; mread (9 + 8 + 2)*8 = 152; 8*8 = 64
    assert _report(F.convolution_2d, x, W, b,
                   name='Convolution2DFunction-1') == (32, 152, 64)


def test_linear_bytes_mixed_precision_and_float64():
    x, W = _x(2, 3, dtype=np.float16), _x(4, 3)
    # 2*3*4 = 24 FLOPs; mread 6*2 + 12*4 = 60; y float16: 8*2 = 16
    assert _report(F.linear, x, W, name='LinearFunction-1') == (24, 60, 16)
    x, W, b = (_x(2, 3, dtype=np.float64), _x(4, 3, dtype=np.float64),
               _x(4, dtype=np.float64))
    # 24 + 8 = 32 FLOPs; mread (6 + 12 + 4)*8 = 176; 8*8 = 64
    assert _report(F.linear, x, W, b, name='LinearFunction-1') == (
        32, 176, 64)


# Gradients: each class applied by a backward pass

def _grad_of(f, *arrays, wrt):
    """A callable running ``f`` on ``arrays`` (those of the indexes
    ``wrt`` as Variables needing a gradient) and a backward pass from a
    gradient of ones."""
    def run():
        args = [chainer.Variable(a) if i in wrt else a
                for i, a in enumerate(arrays)]
        y = f(*args)
        y.grad = np.ones_like(y.array)
        y.backward()
    return run


def _backward_flops(f, arrays, fma):
    """FLOPs of the calls made by the backward pass of ``f`` run on
    Variables of ``arrays`` (the forward runs outside the recorder), each
    costed by its calculator."""
    y = f(*[chainer.Variable(a) for a in arrays])
    y.grad = np.ones_like(y.array)
    total = 0
    for node, in_data, out_shapes in calls_of(y.backward):
        calc = calculators[function_type(node)]
        total += calc(function_object(node), in_data, fma_1flop=fma,
                      out_shapes=out_shapes)[0]
    return total


def test_linear_backward_issue_figures():
    layer = L.Linear(30, 20)
    x = chainer.Variable(np.ones((8, 30), np.float32))
    for fma, expected in ((True, 9740), (False, 18500)):
        layer.cleargrads()
        x.cleargrad()
        loss = F.sum(layer(x))   # forward outside the recorder
        loss.grad = None
        calls = calls_of(loss.backward)
        names = [function_type(c[0]).__name__ for c in calls]
        # the loss's own Sum backward is a BroadcastTo; the bias gradient
        # is a Sum
        assert sorted(names) == ['BroadcastTo', 'LinearGradData',
                                 'LinearGradWeight', 'Sum']
        total = sum(
            calculators[function_type(n)](function_object(n), d,
                                          fma_1flop=fma, out_shapes=o)[0]
            for n, d, o in calls)
        # FMA: gx 8*20*30 = 4800, gW 20*30*8 = 4800, gb (8-1)*20 = 140:
        # 9740; no FMA: 240*(2*20-1) = 9360, 600*(2*8-1) = 9000, 140:
        # 18500
        assert total == expected


def test_conv2d_backward_is_twice_the_forward_multiply_adds():
    x, W, b = _x(1, 1, 3, 3), _x(2, 1, 2, 2), _x(2)
    # forward: |y| = 2*2*2 = 8 outputs of K = 4 products: 32 multiply-adds
    assert cost(F.convolution_2d, x, W, b)[0] == 32
    # gx (Deconvolution2DFunction): |gy| 8 * 1 * 4 = 32 products
    # gW (Convolution2DGradW): |gW| 8 sums of M = 1*2*2 = 4: 32
    # gb (Sum of gy over n, h, w): 2*(4-1) = 6
    # FMA: 32 + 32 + 6 = 70 = 2*32 + 6
    assert _backward_flops(F.convolution_2d, (x, W, b), True) == 70
    # no FMA: gx 2*32 - 9 (all 9 elements of x reached) = 55,
    # gW 8*(2*4-1) = 56, gb 6: 117
    assert _backward_flops(F.convolution_2d, (x, W, b), False) == 117


def test_conv2d_backward_strided():
    # 1x1 kernel, stride 2: the forward reads 4 of x's 16 elements
    x, W = _x(1, 1, 4, 4), _x(1, 1, 1, 1)

    def conv(x, W):
        return F.convolution_2d(x, W, stride=2)
    # forward |y| 4, K 1: 4 multiply-adds
    # FMA: gx 4 products + gW 1 sum of 4: 8 = 2*4, whatever the stride
    assert _backward_flops(conv, (x, W), True) == 8
    # no FMA: gx 2*4 - 4 (only the 4 elements the windows cover get a
    # product; the other 12 are zeros) = 4; gW 2*4 - 1 = 7: 11
    assert _backward_flops(conv, (x, W), False) == 11
    # 3x3, stride 2, pad 1: x (2, 3, 5, 5), W (4, 3, 3, 3), out 3x3
    # forward 2*4*9 * 27 = 1944 multiply-adds; FMA backward 2*1944 = 3888
    x, W = _x(2, 3, 5, 5), _x(4, 3, 3, 3)
    assert cost(F.convolution_2d, x, W, stride=2, pad=1)[0] == 1944
    assert _backward_flops(lambda x, W: F.convolution_2d(x, W, stride=2,
                                                         pad=1),
                           (x, W), True) == 3888


def test_conv2d_grad_w():
    x, W = _x(2, 3, 4, 4), _x(5, 3, 3, 3)
    run = _grad_of(lambda x, W: F.convolution_2d(x, W, pad=1), x, W,
                   wrt={1})
    # out 4x4: |gW| = 5*3*3*3 = 135 sums of M = 2*4*4 = 32
    # FMA 135*32 = 4320 (the forward's 160*27); no FMA 135*63 = 8505
    # mread |x| 96 + |gy| 2*5*16 = 160: 256; mwrite 135
    params = {'k': 3, 's': 1, 'p': 1, 'd': 1, 'groups': 1}
    assert cost(run, kind='Convolution2DGradW') == (4320, 256, 135, params)
    assert cost(run, kind='Convolution2DGradW', fma=False) == (
        8505, 256, 135, params)


def test_conv2d_grad_w_groups_dilate_stride():
    x, W = _x(1, 4, 5, 5), _x(6, 2, 3, 3)
    run = _grad_of(lambda x, W: F.convolution_2d(x, W, pad=2, dilate=2,
                                                 groups=2), x, W, wrt={1})
    # out 5x5: |gW| = 6*2*3*3 = 108 sums of M = 25: FMA 2700 (forward's)
    # no FMA 108*49 = 5292; mread 100 + 6*25 = 250; mwrite 108
    params = {'k': 3, 's': 1, 'p': 2, 'd': 2, 'groups': 2}
    assert cost(run, kind='Convolution2DGradW') == (2700, 250, 108, params)
    assert cost(run, kind='Convolution2DGradW', fma=False) == (
        5292, 250, 108, params)
    x, W = _x(1, 1, 5, 6), _x(2, 1, 3, 2)
    run = _grad_of(lambda x, W: F.convolution_2d(
        x, W, stride=(2, 1), pad=(1, 0)), x, W, wrt={1})
    # out 3x5: |gW| = 2*1*3*2 = 12 sums of 15: FMA 180; mread 30 + 30 = 60
    assert cost(run, kind='Convolution2DGradW') == (
        180, 60, 12, {'k': (3, 2), 's': (2, 1), 'p': (1, 0), 'd': 1,
                      'groups': 1})


def test_conv2d_grad_w_of_a_deconvolution():
    x, W = _x(1, 2, 2, 2), _x(2, 3, 2, 2)
    # Chainer 7.8.1 needs x's gradient too when W's is asked for
    run = _grad_of(lambda x, W: F.deconvolution_2d(x, W, stride=2), x, W,
                   wrt={0, 1})
    # y (1, 3, 4, 4); gW = correlation of gy (as x) with x (as gy):
    # |gW| = 2*3*2*2 = 24 sums of M = 1*2*2 = 4: FMA 96, the
    # deconvolution's P = 8*3*4 = 96; no FMA 24*7 = 168
    # mread |gy| 48 + |x| 8 = 56; mwrite 24
    params = {'k': 2, 's': 2, 'p': 0, 'd': 1, 'groups': 1}
    assert cost(run, kind='Convolution2DGradW') == (96, 56, 24, params)
    assert cost(run, kind='Convolution2DGradW', fma=False) == (
        168, 56, 24, params)


def test_conv_nd_grad_w():
    x, W = _x(2, 2, 3, 3, 3), _x(4, 2, 2, 2, 2)
    run = _grad_of(F.convolution_nd, x, W, wrt={1})
    # out 2x2x2: |gW| = 4*2*8 = 64 sums of M = 2*8 = 16: FMA 1024
    # no FMA 64*31 = 1984; mread 108 + 2*4*8 = 172; mwrite 64
    params = {'k': 2, 's': 1, 'p': 0, 'd': 1, 'groups': 1}
    assert cost(run, kind='ConvolutionNDGradW') == (1024, 172, 64, params)
    assert cost(run, kind='ConvolutionNDGradW', fma=False) == (
        1984, 172, 64, params)


def test_conv_nd_grad_w_of_a_deconvolution_1d():
    x, W = _x(1, 2, 2), _x(2, 3, 2)
    run = _grad_of(F.deconvolution_nd, x, W, wrt={1})
    # y (1, 3, 3); |gW| = 2*3*2 = 12 sums of M = 1*2 = 2: FMA 24 (the
    # deconvolution's 4*3*2); no FMA 12*3 = 36; mread 9 + 4 = 13
    params = {'k': 2, 's': 1, 'p': 0, 'd': 1, 'groups': 1}
    assert cost(run, kind='ConvolutionNDGradW') == (24, 13, 12, params)
    assert cost(run, kind='ConvolutionNDGradW', fma=False) == (
        36, 13, 12, params)


def test_linear_grad_data_and_weight():
    x, W, b = _x(2, 3), _x(4, 3), _x(4)
    run = _grad_of(F.linear, x, W, b, wrt={0, 1, 2})
    # gx = gy W: B 2, in 3, out 4: 6 dot products of 4
    # FMA 24; no FMA 6*7 = 42; mread |W| 12 + |gy| 8 = 20; mwrite 6
    assert cost(run, kind='LinearGradData') == (24, 20, 6, {})
    assert cost(run, kind='LinearGradData', fma=False) == (42, 20, 6, {})
    # gW = gy^T x: 12 dot products of 2: FMA 24; no FMA 12*3 = 36
    # mread |x| 6 + |gy| 8 = 14; mwrite 12
    assert cost(run, kind='LinearGradWeight') == (24, 14, 12, {})
    assert cost(run, kind='LinearGradWeight', fma=False) == (36, 14, 12, {})


def test_linear_grads_batch1_bytes_float64():
    x, W = _x(1, 5, dtype=np.float64), _x(2, 5, dtype=np.float64)
    with ComputationalCostHook(fma_1flop=False) as cch:
        _grad_of(F.linear, x, W, wrt={0, 1})()
    # gx: 5 dot products of 2: 5*3 = 15; reads (10 + 2)*8 = 96; 5*8 = 40
    r = cch.layer_report['LinearGradData-1']
    assert (r['flops'], r['mread'], r['mwrite']) == (15, 96, 40)
    # gW: 10 dot products of 1: 10; reads (5 + 2)*8 = 56; 10*8 = 80
    r = cch.layer_report['LinearGradWeight-1']
    assert (r['flops'], r['mread'], r['mwrite']) == (10, 56, 80)


def test_bilinear_grad():
    e1, e2, W = _x(2, 3), _x(2, 4), _x(3, 4, 5)
    run = _grad_of(F.bilinear, e1, e2, W, wrt={0, 1, 2})
    # N 2, J 3, K 4, L 5: outer NJK = 24; gW JKL = 60 dots of N = 2;
    # gy W: NJK = 24 dots of L = 5; ge1 NJ = 6 dots of K = 4; ge2 NK = 8
    # dots of J = 3
    # FMA 24 + 120 + 120 + 24 + 24 = 312
    # no FMA 24 + 60*3 + 24*9 + 6*7 + 8*5 = 24 + 180 + 216 + 42 + 40 = 502
    # mread 6 + 8 + 60 + |gy| 10 = 84; mwrite 6 + 8 + 60 = 74
    assert cost(run, kind='BilinearFunctionGrad') == (
        312, 84, 74, {'linear': False})
    assert cost(run, kind='BilinearFunctionGrad', fma=False) == (
        502, 84, 74, {'linear': False})


def test_bilinear_grad_linear_terms():
    arrays = _x(2, 3), _x(2, 4), _x(3, 4, 5), _x(3, 5), _x(4, 5), _x(5)
    run = _grad_of(F.bilinear, *arrays, wrt=set(range(6)))
    # as above with ge1 dots of K + L = 9, ge2 of J + L = 8, plus gV1 JL
    # = 15 and gV2 KL = 20 dots of N = 2 and gb L*(N-1) = 5
    # FMA 24 + 120 + 120 + 54 + 64 + 30 + 40 + 5 = 457
    # no FMA 24 + 180 + 216 + 6*17 + 8*15 + 15*3 + 20*3 + 5
    #   = 24 + 180 + 216 + 102 + 120 + 45 + 60 + 5 = 752
    # mread 84 + 15 + 20 = 119; mwrite 74 + 15 + 20 + 5 = 114
    assert cost(run, kind='BilinearFunctionGrad') == (
        457, 119, 114, {'linear': True})
    assert cost(run, kind='BilinearFunctionGrad', fma=False) == (
        752, 119, 114, {'linear': True})


def test_embed_id_grad():
    x = np.array([[0, 1, 2], [3, 1, 0]], np.int32)
    W = _x(4, 5)
    run = _grad_of(F.embed_id, x, W, wrt={1})
    # 6 rows of gy into V = 4 rows: 6 - 4 = 2 rows must add: 2*5 = 10
    # mread 6 + 30 = 36; mwrite 4*5 = 20
    assert cost(run, kind='EmbedIDGrad') == (10, 36, 20, {})
    with ComputationalCostHook() as cch:
        run()
    r = cch.layer_report['EmbedIDGrad-1']
    # bytes: 6 int32 ids + 30 float32: 24 + 120 = 144; 20*4 = 80
    assert (r['flops'], r['mread'], r['mwrite']) == (10, 144, 80)


def test_embed_id_grad_ignore_label_few_ids():
    x = np.array([[7, -1]], np.int32)
    W = _x(10, 3, dtype=np.float16)
    run = _grad_of(lambda x, W: F.embed_id(x, W, ignore_label=-1), x, W,
                   wrt={1})
    # 2 ids <= V 10: no addition; 2 comparisons with the label
    # mread 2 + 6 + 1 = 9; mwrite 10*3 = 30
    assert cost(run, kind='EmbedIDGrad') == (2, 9, 30, {'ignore_label': -1})
    with ComputationalCostHook() as cch:
        run()
    r = cch.layer_report['EmbedIDGrad-1']
    # bytes: 2*4 + 6*2 + 4 = 24; 30*2 = 60
    assert (r['flops'], r['mread'], r['mwrite']) == (2, 24, 60)


# flop_convention='torch': PyTorch's FlopCounterMode counts 2 FLOPs per
# multiply-add of a convolution or a matrix product and nothing for a bias,
# whatever fma_1flop says. Its formulas, for comparison: conv
# 2 * N * prod(out) * c_out * (c_in / groups) * prod(k); transposed conv
# the same over the input grid; mm/addmm 2 * M * K * N (bias ignored).

def _torch_flops(step, fma=True):
    return flops_by_layer(step, fma_1flop=fma, flop_convention='torch')


def test_torch_convention_conv_forward():
    x, W, b = _x(2, 3, 5, 5), _x(4, 3, 3, 3), _x(4)
    # pad 1: y (2,4,5,5), |y| = 200, K = 3*3*3 = 27; 2*200*27 = 10800
    # with or without bias, with or without FMA (ours: 5400 with FMA,
    # 2*5400 - 200 = 10600 without FMA and bias)
    for args in ((x, W, b), (x, W)):
        for fma in (True, False):
            assert _torch_flops(lambda: F.convolution_2d(*args, pad=1),
                                fma) == {'Convolution2DFunction-1': 10800}
    # stride 2, dilation 2, groups 2 on x (1,4,9,9), W (6,2,3,3):
    # out (9 + 2 - 5)//2 + 1 = 4: |y| = 6*4*4 = 96, K = (4/2)*3*3 = 18;
    # 2*96*18 = 3456
    assert _torch_flops(lambda: F.convolution_2d(
        _x(1, 4, 9, 9), _x(6, 2, 3, 3), stride=2, pad=1, dilate=2,
        groups=2)) == {'Convolution2DFunction-1': 3456}


def test_torch_convention_conv_nd_forward():
    # x (1,2,3,4,4), W (3,2,2,2,2), no pad: out (2,3,3), |y| = 3*18 = 54,
    # K = 2*2*2*2 = 16; 2*54*16 = 1728 (ours with FMA: 864)
    assert _torch_flops(lambda: F.convolution_nd(
        _x(1, 2, 3, 4, 4), _x(3, 2, 2, 2, 2), _x(3))) == {
            'ConvolutionND-1': 1728}


def test_torch_convention_conv_gradients():
    # x (2,3,5,5), W (4,3,3,3), no bias, pad 1, loss = sum(y):
    # input gradient (a Deconvolution2DFunction of gy (2,4,5,5)):
    # 2 * N * prod(gy grid) * c_gy * (c_x / groups) * prod(k)
    # = 2*2*25*4*3*9 = 10800, the forward's;
    # weight gradient: |gW| = 4*3*3*3 = 108 sums of M = 2*5*5 = 50:
    # 2*108*50 = 10800 (ours without FMA: 108*(2*50 - 1) = 10692)
    x = chainer.Variable(_x(2, 3, 5, 5))
    W = chainer.Variable(_x(4, 3, 3, 3))

    def step():
        F.sum(F.convolution_2d(x, W, pad=1)).backward()

    flops = _torch_flops(step, fma=False)
    assert flops['Convolution2DFunction-1'] == 10800
    assert flops['Deconvolution2DFunction-1'] == 10800
    assert flops['Convolution2DGradW-1'] == 10800


def test_torch_convention_grouped_weight_gradient():
    # groups 2: x (1,4,3,3), W (2,2,1,1): |gW| = 2*2 = 4 sums of
    # M = 1*3*3 = 9: 2*4*9 = 72. (FlopCounterMode leaves the groups out
    # of the weight gradient, pytorch/pytorch#183405, and counts
    # 2 * 3*3 * 1*1 * 4 * 2 * 1 = 144.)
    x = chainer.Variable(_x(1, 4, 3, 3))
    W = chainer.Variable(_x(2, 2, 1, 1))

    def step():
        F.sum(F.convolution_2d(x, W, groups=2)).backward()

    assert _torch_flops(step)['Convolution2DGradW-1'] == 72


def test_torch_convention_conv_nd_weight_gradient():
    # x (1,2,3,3,3), W (2,2,2,2,2): out (2,2,2); |gW| = 2*2*8 = 32 sums of
    # M = 1*8 = 8: 2*32*8 = 512
    x = chainer.Variable(_x(1, 2, 3, 3, 3))
    W = chainer.Variable(_x(2, 2, 2, 2, 2))

    def step():
        F.sum(F.convolution_nd(x, W)).backward()

    flops = _torch_flops(step)
    assert flops['ConvolutionNDGradW-1'] == 512
    # the input gradient: DeconvolutionND of gy (1,2,2,2,2):
    # 2 * 1*8 * 2 * 2 * 8 = 512, the forward's (2 * 16 outputs * 16 terms)
    assert flops['ConvolutionND-1'] == flops['DeconvolutionND-1'] == 512


def test_torch_convention_deconvolution():
    # x (1,2,3,3), W (2,3,2,2), stride 2: y (1,3,6,6); torch counts
    # 2 * N * prod(x grid) * c_in * (c_out / groups) * prod(k)
    # = 2*1*9*2*3*4 = 432, bias or not (ours: P = 216 with FMA;
    # 2*216 - 36 = 396 without FMA and bias)
    x, W, b = _x(1, 2, 3, 3), _x(2, 3, 2, 2), _x(3)
    for args in ((x, W, b), (x, W)):
        for fma in (True, False):
            assert _torch_flops(lambda: F.deconvolution_2d(
                *args, stride=2), fma) == {'Deconvolution2DFunction-1': 432}
    # N-d: x (1,1,2,2,2), W (1,2,2,2,2): 2*1*8*1*2*8 = 256
    assert _torch_flops(lambda: F.deconvolution_nd(
        _x(1, 1, 2, 2, 2), _x(1, 2, 2, 2, 2))) == {'DeconvolutionND-1': 256}


def test_torch_convention_linear():
    # x (3,4), W (5,4): 15 outputs of K = 4: 2*15*4 = 120, bias or not
    # (ours: 60 + 15 = 75 with FMA and bias; 15*7 = 105 without FMA and
    # bias)
    x, W, b = _x(3, 4), _x(5, 4), _x(5)
    for args in ((x, W, b), (x, W)):
        for fma in (True, False):
            assert _torch_flops(lambda: F.linear(*args), fma) == {
                'LinearFunction-1': 120}


def test_torch_convention_linear_gradients_batch1():
    # batch 1, Linear(4 -> 5) with bias, loss = sum(y):
    # LinearGradData: gy (1,5) W -> 1*4 sums of 5: 2*4*5 = 40 (ours
    # without FMA 4*9 = 36); LinearGradWeight: gy^T x -> 5*4 sums of 1:
    # 2*20*1 = 40 (ours without FMA 20*(2*1 - 1) = 20: half)
    x = chainer.Variable(_x(1, 4))
    W = chainer.Variable(_x(5, 4))
    b = chainer.Variable(_x(5))

    def step():
        F.sum(F.linear(x, W, b)).backward()

    flops = _torch_flops(step, fma=False)
    assert flops['LinearFunction-1'] == 40
    assert flops['LinearGradData-1'] == 40
    assert flops['LinearGradWeight-1'] == 40
    # batch 8, Linear(30 -> 20): 2*8*30*20 = 9600 each
    x = chainer.Variable(_x(8, 30))
    W = chainer.Variable(_x(20, 30))

    def step8():
        F.sum(F.linear(x, W)).backward()

    flops = _torch_flops(step8)
    assert (flops['LinearGradData-1'], flops['LinearGradWeight-1']) == (
        9600, 9600)


def test_torch_convention_leaves_other_layers_to_fma_1flop():
    # FlopCounterMode counts nothing for a bilinear layer or a local
    # convolution: they keep this package's model, FMA as fma_1flop says.
    # Bilinear e1 (2,3), e2 (2,4), W (3,4,5): NJK = 24 outer products,
    # NL = 10 sums of JK = 12: 24 + 120 with FMA, 24 + 10*23 = 254 without
    e1, e2, W = _x(2, 3), _x(2, 4), _x(3, 4, 5)
    assert _torch_flops(lambda: F.bilinear(e1, e2, W)) == {
        'BilinearFunction-1': 144}
    assert _torch_flops(lambda: F.bilinear(e1, e2, W), fma=False) == {
        'BilinearFunction-1': 254}


def test_torch_convention_reaches_custom_calculators():
    seen = []

    def custom(func, in_data, **kwargs):
        seen.append(dict(kwargs))
        return (1, 2, 3, {})

    x = _x(1, 4)
    for convention in (None, 'torch'):
        with pytest.warns(UserWarning, match='overriding the built-in'):
            with ComputationalCostHook(flop_convention=convention) as cch:
                cch.add_custom_cost_calculator(LinearFunction, custom)
                F.linear(x, _x(2, 4))
        assert cch.flop_convention == convention
        assert cch.layer_report['LinearFunction-1']['flops'] == 1
    # off: exactly the keywords of before; on: flop_convention added
    assert seen == [{'fma_1flop': True, 'out_shapes': ((1, 2),)},
                    {'fma_1flop': True, 'out_shapes': ((1, 2),),
                     'flop_convention': 'torch'}]


def test_torch_convention_in_any_case():
    # as every other name
    assert ComputationalCostHook(
        flop_convention='TORCH').flop_convention == 'torch'


@pytest.mark.parametrize('bad', ['pytorch', 'torch2', True, 2])
def test_torch_convention_refuses_other_values(bad):
    with pytest.raises(ValueError) as e:
        ComputationalCostHook(flop_convention=bad)
    assert str(e.value) == (
        "flop_convention must be None or 'torch', got {!r}".format(bad))
