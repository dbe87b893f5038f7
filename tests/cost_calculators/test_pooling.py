import chainer
import chainer.functions as F
from chainer.functions.pooling.max_pooling_nd import MaxPoolingND
from chainer.functions.pooling.max_pooling_nd import MaxPoolingNDWithIndexes
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.cost_calculators import resolve_target
from helpers import assert_params
from helpers import cost


def _x(*shape):
    return np.ones(shape, dtype=np.float32)


def _window(k, s, p):
    return {'k': k, 's': s, 'p': p}


def _unpool(k, s, p, outsize, cover_all):
    return {'k': k, 's': s, 'p': p, 'outsize': outsize,
            'cover_all': cover_all}


# MaxPoolingND (F.max_pooling_2d on Chainer 7) and Chainer 6's MaxPooling2D

def test_max_pooling_2d_resnet_reference():
    x = _x(1, 64, 112, 112)
    # cover_all (default): out (112+2-3+2-1)//2+1 = 57
    # |y| = 64*57*57 = 207936; FLOPs 207936*(9-1) = 1663488
    # mread 64*112*112 = 802816
    assert cost(F.max_pooling_2d, x, 3, stride=2, pad=1) == (
        1663488, 802816, 207936, _window(3, 2, 1))
    assert F.max_pooling_2d(x, 3, stride=2, pad=1).size == 207936
    # no cover_all: out (112+2-3)//2+1 = 56: |y| = 64*56*56 = 200704
    # FLOPs 200704*8 = 1605632
    assert cost(F.max_pooling_2d, x, 3, stride=2, pad=1,
                cover_all=False) == (1605632, 802816, 200704,
                                     _window(3, 2, 1))


def test_max_pooling_2d_batch2():
    x = _x(2, 3, 4, 4)
    # k 2, stride 2: out 2x2: |y| = 2*3*2*2 = 24; FLOPs 24*3 = 72
    assert cost(F.max_pooling_2d, x, 2) == (72, 96, 24, _window(2, 2, 0))
    assert cost(F.max_pooling_2d, x, 2, fma=False) == (
        72, 96, 24, _window(2, 2, 0))


def test_max_pooling_2d_cover_all():
    x = _x(1, 1, 5, 5)
    # cover_all: out (5-2+2-1)//2+1 = 3: |y| 9, FLOPs 9*3 = 27
    assert cost(F.max_pooling_2d, x, 2) == (27, 25, 9, _window(2, 2, 0))
    assert F.max_pooling_2d(x, 2).size == 9
    # no cover_all: out (5-2)//2+1 = 2: |y| 4, FLOPs 12
    assert cost(F.max_pooling_2d, x, 2, cover_all=False) == (
        12, 25, 4, _window(2, 2, 0))


def test_max_pooling_3d_anisotropic():
    x = _x(1, 2, 4, 4, 3)
    # out (2, 2, 1): |y| = 2*4 = 8; FLOPs 8*(2*2*3-1) = 88; mread 96
    kw = dict(stride=(2, 2, 1), cover_all=False)
    assert cost(F.max_pooling_nd, x, (2, 2, 3), **kw) == (
        88, 96, 8, _window((2, 2, 3), (2, 2, 1), 0))
    assert F.max_pooling_nd(x, (2, 2, 3), **kw).size == 8


def test_max_pooling_1d_pad():
    x = _x(2, 1, 5)
    # out (5+2-3)//1+1 = 5: |y| 10; FLOPs 10*2 = 20; mread 10
    assert cost(F.max_pooling_1d, x, 3, stride=1, pad=1,
                cover_all=False) == (20, 10, 10, _window(3, 1, 1))


@pytest.mark.skipif(
    resolve_target('chainer.functions.pooling.max_pooling_2d.MaxPooling2D')
    is None, reason='MaxPooling2D exists only in Chainer 6')
def test_max_pooling_2d_chainer6():
    x = _x(2, 3, 5, 5)
    # cover_all: out (5-2+2-1)//2+1 = 3: |y| = 2*3*9 = 54; FLOPs 54*3 = 162
    # mread 150
    assert cost(F.max_pooling_2d, x, 2, kind='MaxPooling2D') == (
        162, 150, 54, _window(2, 2, 0))
    # no cover_all, pad 1, stride 1: out (5+2-2)//1+1 = 6: |y| 2*3*36 = 216
    assert cost(F.max_pooling_2d, x, 2, stride=1, pad=1, cover_all=False,
                kind='MaxPooling2D') == (648, 150, 216, _window(2, 1, 1))


# MaxPoolingNDWithIndexes

def _with_indexes(x, ksize, stride, pad, cover_all):
    def run():
        pool = MaxPoolingND(x.ndim - 2, ksize, stride, pad, cover_all)
        pool.apply((x,))
        return MaxPoolingNDWithIndexes(pool).apply((x,))[0]
    return run


def test_max_pooling_with_indexes():
    x = _x(2, 3, 4, 4)
    run = _with_indexes(x, 2, 2, 0, True)
    # |y| = 2*3*2*2 = 24: mread min(96, 24) + 24 = 48; no FLOPs
    assert cost(run, kind='MaxPoolingNDWithIndexes') == (
        0, 48, 24, _window(2, 2, 0))
    assert run().size == 24


def test_max_pooling_with_indexes_more_outputs_than_inputs():
    x = _x(1, 1, 2, 2)
    run = _with_indexes(x, 2, 1, 1, False)
    # out (2+2-2)//1+1 = 3: |y| 9 > |x| 4: mread 4 + 9 = 13
    assert cost(run, kind='MaxPoolingNDWithIndexes') == (
        0, 13, 9, _window(2, 1, 1))
    assert run().size == 9


@pytest.mark.skipif(
    resolve_target('chainer.functions.pooling.max_pooling_2d.'
                   'MaxPooling2DWithIndexes') is None,
    reason='MaxPooling2DWithIndexes exists only in Chainer 6')
def test_max_pooling_2d_with_indexes_chainer6():
    from chainer.functions.pooling import max_pooling_2d as mp2d
    x = _x(2, 3, 5, 5)

    def run():
        pool = mp2d.MaxPooling2D(2, 2, 0, True)
        pool.apply((x,))
        return mp2d.MaxPooling2DWithIndexes(pool).apply((x,))[0]
    # cover_all: out (5-2+2-1)//2+1 = 3: |y| = 2*3*9 = 54
    # mread min(150, 54) + 54 = 108; no FLOPs
    assert cost(run, kind='MaxPooling2DWithIndexes') == (
        0, 108, 54, _window(2, 2, 0))
    assert run().size == 54


# AveragePooling2D

def test_average_pooling_2d_resnet_reference():
    x = _x(1, 2048, 7, 7)
    # |y| = 2048; FLOPs 2048*49 = 100352; mread 2048*49 = 100352
    assert cost(F.average_pooling_2d, x, 7) == (
        100352, 100352, 2048, _window(7, 7, 0))
    assert F.average_pooling_2d(x, 7).size == 2048


def test_average_pooling_2d_pad_batch2():
    x = _x(2, 3, 4, 4)
    # out (4+2-2)//1+1 = 5: |y| = 2*3*25 = 150; FLOPs 150*4 = 600
    assert cost(F.average_pooling_2d, x, 2, stride=1, pad=1) == (
        600, 96, 150, _window(2, 1, 1))
    assert F.average_pooling_2d(x, 2, stride=1, pad=1).size == 150


def test_average_pooling_2d_anisotropic():
    x = _x(1, 1, 5, 6)
    # out (5-3)//2+1 = 2, (6-2)//2+1 = 3: |y| 6; FLOPs 6*3*2 = 36
    assert cost(F.average_pooling_2d, x, (3, 2), stride=2) == (
        36, 30, 6, _window((3, 2), 2, 0))


# AveragePoolingND

def test_average_pooling_3d():
    x = _x(1, 2, 4, 4, 4)
    # out 2x2x2: |y| = 2*8 = 16; FLOPs 16*8 = 128; mread 128
    assert cost(F.average_pooling_nd, x, 2) == (
        128, 128, 16, _window(2, 2, 0))
    assert F.average_pooling_nd(x, 2).size == 16


def test_average_pooling_1d_pad_value_none():
    x = _x(2, 1, 3)
    # out (3+2-2)//1+1 = 4: |y| = 2*4 = 8; FLOPs 8*2 = 16; mread 6
    for pad_value in (0, None):
        assert cost(F.average_pooling_1d, x, 2, stride=1, pad=1,
                    pad_value=pad_value) == (16, 6, 8, _window(2, 1, 1))
    assert F.average_pooling_1d(x, 2, stride=1, pad=1).size == 8


# Unpooling2D, UnpoolingND, Upsampling2D

def test_unpooling_2d():
    x = _x(2, 3, 2, 2)
    # cover_all (default): out 2*(2-1)+2-2+1 = 3: |y| 2*3*9 = 54; mread 24
    assert cost(F.unpooling_2d, x, 2) == (
        0, 24, 54, _unpool(2, 2, 0, (3, 3), True))
    assert F.unpooling_2d(x, 2).size == 54
    # no cover_all: out 2*(2-1)+2 = 4: |y| 2*3*16 = 96
    assert cost(F.unpooling_2d, x, 2, cover_all=False) == (
        0, 24, 96, _unpool(2, 2, 0, (4, 4), False))
    assert F.unpooling_2d(x, 2, cover_all=False).size == 96


def test_unpooling_2d_outsize_batch1():
    x = _x(1, 1, 2, 3)
    # outsize (4, 5): |y| 20; mread 6
    assert cost(F.unpooling_2d, x, 2, outsize=(4, 5)) == (
        0, 6, 20, _unpool(2, 2, 0, (4, 5), True))
    assert F.unpooling_2d(x, 2, outsize=(4, 5)).size == 20


def test_unpooling_nd():
    x = _x(1, 2, 2, 2, 2)
    # no cover_all: out 4x4x4: |y| = 2*64 = 128; mread 16
    assert cost(F.unpooling_nd, x, 2, cover_all=False) == (
        0, 16, 128, _unpool(2, 2, 0, (4, 4, 4), False))
    assert F.unpooling_nd(x, 2, cover_all=False).size == 128
    x1 = _x(2, 1, 3)
    # cover_all: out 2*(3-1)+2-2+1 = 5: |y| 2*5 = 10; mread 6
    assert cost(F.unpooling_nd, x1, 2) == (
        0, 6, 10, _unpool(2, 2, 0, (5,), True))
    assert F.unpooling_nd(x1, 2).size == 10


def test_unpooling_nd_outsize_stride():
    x = _x(1, 1, 3)
    # ksize 3, stride 2, outsize (7,): windows 0..2, 2..4, 4..6
    # H = 3*3 = 9 copies on R = 7 positions: 9 - 7 = 2 additions
    # mread 3; |y| 7
    assert cost(F.unpooling_nd, x, 3, stride=2, outsize=(7,),
                cover_all=False) == (2, 3, 7, _unpool(3, 2, 0, (7,), False))


def test_unpooling_2d_overlapping_windows_add():
    x = _x(1, 1, 3, 3)
    y = F.unpooling_2d(x, 3, 2, 1, cover_all=False)
    # out 2*(3-1)+3-2 = 5 per axis: |y| 25
    # per axis, input i covers i*2-1 .. i*2+1 inside [0, 5): i=0 -> 0..1
    # (2), i=1 -> 1..3 (3), i=2 -> 3..4 (2): H = 7, R = 5
    # FLOPs 7*7 - 5*5 = 49 - 25 = 24; mread 9
    assert cost(F.unpooling_2d, x, 3, 2, 1, cover_all=False) == (
        24, 9, 25, _unpool(3, 2, 1, (5, 5), False))
    # the 49 copies of ones are all in the output
    assert y.shape == (1, 1, 5, 5) and y.array.sum() == 49
    # batch 2, 2 channels: 4 planes: 4*24 = 96
    x4 = _x(2, 2, 3, 3)
    assert cost(F.unpooling_2d, x4, 3, 2, 1, cover_all=False)[:3] == (
        96, 36, 100)


def test_unpooling_2d_overlap_cover_all_anisotropic():
    x = _x(1, 2, 2, 3)
    y = F.unpooling_2d(x, (3, 2), 1)
    # stride 1, cover_all: out h 1*(2-1)+3-1+1-0 = 4, w (3-1)+2 = 4
    # h: inputs 0, 1 cover 0..2, 1..3: H 6, R 4; w: inputs 0..2 cover
    # 0..1, 1..2, 2..3: H 6, R 4
    # FLOPs 2 planes * (6*6 - 4*4) = 2*20 = 40; mread 12; |y| 2*16 = 32
    assert cost(F.unpooling_2d, x, (3, 2), 1) == (
        40, 12, 32, _unpool((3, 2), 1, 0, (4, 4), True))
    assert y.shape == (1, 2, 4, 4) and y.array.sum() == 2 * 36


def test_unpooling_nd_overlap_3d():
    x = _x(1, 1, 2, 2, 1)
    # k 2, s 1, no cover_all: out 3, 3, 2; axes 0, 1: H 4, R 3; axis 2:
    # one input covers 0..1: H 2, R 2
    # FLOPs 4*4*2 - 3*3*2 = 32 - 18 = 14; |y| 18; mread 4
    assert cost(F.unpooling_nd, x, 2, 1, cover_all=False) == (
        14, 4, 18, _unpool(2, 1, 0, (3, 3, 2), False))
    assert F.unpooling_nd(x, 2, 1, cover_all=False).array.sum() == 32


def test_upsampling_2d_indexes_forced_onto_fewer_positions():
    y, indexes = F.max_pooling_2d(_x(1, 1, 2, 2), 2, 1, 1, cover_all=False,
                                  return_indices=True)
    x = y.array
    # x 3x3 (k 2, s 1, p 1 on 2x2); back onto outsize (2, 2): per axis
    # inputs 0..2 cover -1..0, 0..1, 1..2: R = 2 positions inside
    # 9 values on at most 2*2 = 4 positions: 9 - 4 = 5 additions
    # mread |x| + |indexes| = 18; |y| 4
    assert cost(F.upsampling_2d, x, indexes, 2, 1, 1, outsize=(2, 2),
                cover_all=False) == (
        5, 18, 4, _unpool(2, 1, 1, (2, 2), False))
    out = F.upsampling_2d(x, indexes, 2, 1, 1, outsize=(2, 2),
                          cover_all=False)
    assert out.array.sum() == 9


def test_upsampling_2d():
    y, indexes = F.max_pooling_2d(_x(1, 2, 4, 4), 2, return_indices=True)
    x = y.array
    # |x| = |indexes| = 1*2*2*2 = 8: mread 16
    # cover_all (default): out 2*(2-1)+2-2+1 = 3: |y| 2*9 = 18
    assert cost(F.upsampling_2d, x, indexes, 2) == (
        0, 16, 18, _unpool(2, 2, 0, (3, 3), True))
    assert F.upsampling_2d(x, indexes, 2).size == 18
    # outsize (4, 4): |y| 2*16 = 32
    assert cost(F.upsampling_2d, x, indexes, 2, outsize=(4, 4)) == (
        0, 16, 32, _unpool(2, 2, 0, (4, 4), True))
    assert F.upsampling_2d(x, indexes, 2, outsize=(4, 4)).size == 32


def test_upsampling_2d_no_cover_all_batch2():
    y, indexes = F.max_pooling_2d(_x(2, 1, 4, 6), 2, cover_all=False,
                                  return_indices=True)
    x = y.array
    # |x| = |indexes| = 2*1*2*3 = 12: mread 24
    # out 2*(2-1)+2 = 4, 2*(3-1)+2 = 6: |y| 2*24 = 48
    assert cost(F.upsampling_2d, x, indexes, 2, cover_all=False) == (
        0, 24, 48, _unpool(2, 2, 0, (4, 6), False))


# ROI functions

def _rois4():
    return np.array([[0, 0, 5, 7], [1, 1, 4, 4]], np.float32)


def _roi_indices():
    return np.array([0, 1], np.int32)


def _roi_params(outsize, scale):
    return {'outsize': outsize, 'spatial_scale': scale}


def test_roi_pooling_2d():
    x = _x(2, 3, 6, 8)
    rois = np.array([[0, 0, 0, 7, 5], [1, 1, 1, 4, 4], [0, 2, 2, 6, 5]],
                    np.float32)
    # bin = ceil(6/2)*ceil(8/3) = 3*3 = 9; |y| = 3*3*2*3 = 54
    # FLOPs 54*8 = 432; mread 288 + 15 + 1 = 304; mwrite 2*54 = 108
    assert cost(F.roi_pooling_2d, x, rois, 2, 3, 1.0) == (
        432, 304, 108, _roi_params((2, 3), 1.0))
    assert F.roi_pooling_2d(x, rois, 2, 3, 1.0).size == 54


def test_roi_pooling_2d_batch1():
    x = _x(1, 2, 3, 3)
    rois = np.array([[0, 0, 0, 2, 2]], np.float32)
    # bin = ceil(3/2)^2 = 4; |y| = 1*2*2*2 = 8; FLOPs 8*3 = 24
    # mread 18 + 5 + 1 = 24; mwrite 16
    assert cost(F.roi_pooling_2d, x, rois, 2, 2, 0.5) == (
        24, 24, 16, _roi_params((2, 2), 0.5))


def test_roi_max_pooling_2d():
    x = _x(2, 3, 6, 8)
    # bin 3*3 = 9; |y| = 2*3*2*3 = 36; FLOPs 36*8 = 288
    # mread 288 + 8 + 2 + 1 = 299; mwrite 72
    assert cost(F.roi_max_pooling_2d, x, _rois4(), _roi_indices(), (2, 3),
                1.0) == (288, 299, 72, _roi_params((2, 3), 1.0))
    assert F.roi_max_pooling_2d(x, _rois4(), _roi_indices(), (2, 3),
                                1.0).size == 36


def test_roi_average_pooling_2d():
    x = _x(2, 3, 6, 8)
    # bin ceil(6/2)*ceil(8/2) = 12; |y| = 2*3*2*2 = 24; FLOPs 24*12 = 288
    # mread 299; mwrite 24
    assert cost(F.roi_average_pooling_2d, x, _rois4(), _roi_indices(), 2,
                0.5) == (288, 299, 24, _roi_params((2, 2), 0.5))
    assert F.roi_average_pooling_2d(x, _rois4(), _roi_indices(), 2,
                                    0.5).size == 24


def _align_params(sampling_ratio):
    params = _roi_params((2, 3), 1.0)
    params['sampling_ratio'] = sampling_ratio
    return params


def test_roi_max_align_2d():
    x = _x(2, 3, 6, 8)
    args = (x, _rois4(), _roi_indices(), (2, 3), 1.0)
    # |y| = 36; G = ceil(6/2)*ceil(8/3) = 9
    # FMA 36*(4*9 + 9 - 1) = 36*44 = 1584; no FMA 36*(7*9 + 8) = 2556
    # mread 288 + 8 + 2 + 1 = 299; mwrite 72
    assert cost(F.roi_max_align_2d, *args) == (
        1584, 299, 72, _align_params((0, 0)))
    assert cost(F.roi_max_align_2d, *args, fma=False) == (
        2556, 299, 72, _align_params((0, 0)))
    assert F.roi_max_align_2d(*args).size == 36
    # sampling_ratio 2: G 4: FMA 36*(16 + 3) = 684; no FMA 36*(28 + 3) = 1116
    assert cost(F.roi_max_align_2d, *args, sampling_ratio=2) == (
        684, 299, 72, _align_params((2, 2)))
    assert cost(F.roi_max_align_2d, *args, sampling_ratio=2,
                fma=False) == (1116, 299, 72, _align_params((2, 2)))
    # sampling_ratio (1, 3): G 3: FMA 36*(12 + 2) = 504
    assert cost(F.roi_max_align_2d, *args, sampling_ratio=(1, 3)) == (
        504, 299, 72, _align_params((1, 3)))


def test_roi_average_align_2d():
    x = _x(2, 3, 6, 8)
    args = (x, _rois4(), _roi_indices(), (2, 3), 1.0)
    # |y| = 36; G 9: FMA 36*(4*9 + 1) = 1332; no FMA 36*8*9 = 2592
    # mread 299; mwrite 36
    assert cost(F.roi_average_align_2d, *args) == (
        1332, 299, 36, _align_params((0, 0)))
    assert cost(F.roi_average_align_2d, *args, fma=False) == (
        2592, 299, 36, _align_params((0, 0)))
    assert F.roi_average_align_2d(*args).size == 36
    # sampling_ratio 2: G 4: FMA 36*17 = 612; no FMA 36*32 = 1152
    assert cost(F.roi_average_align_2d, *args, sampling_ratio=2) == (
        612, 299, 36, _align_params((2, 2)))
    assert cost(F.roi_average_align_2d, *args, sampling_ratio=2,
                fma=False) == (1152, 299, 36, _align_params((2, 2)))


def test_roi_average_align_2d_batch1_small_map():
    x = _x(1, 1, 2, 2)
    rois = np.array([[0, 0, 2, 2]], np.float32)
    indices = np.array([0], np.int32)
    # outsize 3 > H: G = ceil(2/3)^2 = 1; |y| = 9
    # FMA 9*(4 + 1) = 45; mread 4 + 4 + 1 + 1 = 10; mwrite 9
    assert cost(F.roi_average_align_2d, x, rois, indices, 3, 1.0) == (
        45, 10, 9, {'outsize': (3, 3), 'spatial_scale': 1.0,
                    'sampling_ratio': (0, 0)})


# params: exactly the keys and value types of 0.1.2 for the types it covered


def _indexes(shape, k, s, cover_all=True):
    return F.max_pooling_2d(_x(*shape), k, s, cover_all=cover_all,
                            return_indices=True)[1]


@pytest.mark.parametrize('kind, fn, args, kwargs, expected', [
    ('AveragePooling2D', F.average_pooling_2d, (_x(1, 1, 5, 6), (3, 2)),
     dict(stride=(2, 1), pad=(1, 0)), {'k': (3, 2), 's': (2, 1), 'p': (1, 0)}),
    ('AveragePooling2D', F.average_pooling_2d, (_x(1, 1, 4, 4), 2), {},
     {'k': 2, 's': 2, 'p': 0}),
    # F.max_pooling_2d makes a MaxPoolingND on Chainer 7, a MaxPooling2D on 6
    (None, F.max_pooling_2d, (_x(1, 1, 5, 6), (3, 2)),
     dict(stride=(2, 1), pad=(1, 0)), {'k': (3, 2), 's': (2, 1), 'p': (1, 0)}),
    (None, F.max_pooling_2d, (_x(1, 1, 4, 4), 2), {},
     {'k': 2, 's': 2, 'p': 0}),
    # out (3-1)*2+2-2 = 4 and (3-1)*1+3-0 = 5
    ('Unpooling2D', F.unpooling_2d, (_x(1, 1, 3, 3), (2, 3)),
     dict(stride=(2, 1), pad=(1, 0), cover_all=False),
     {'k': (2, 3), 's': (2, 1), 'p': (1, 0), 'outsize': (4, 5),
      'cover_all': False}),
    ('Unpooling2D', F.unpooling_2d, (_x(1, 1, 2, 2), 2),
     dict(outsize=(4, 3)),
     {'k': 2, 's': 2, 'p': 0, 'outsize': (4, 3), 'cover_all': True}),
    # out 2*(2-1)+2 = 4 and 2*(3-1)+2 = 6
    ('Upsampling2D', F.upsampling_2d,
     (_x(1, 1, 2, 3), _indexes((1, 1, 4, 6), 2, 2, False), 2),
     dict(cover_all=False),
     {'k': 2, 's': 2, 'p': 0, 'outsize': (4, 6), 'cover_all': False}),
    ('Upsampling2D', F.upsampling_2d,
     (_x(1, 1, 3, 3), _indexes((1, 1, 5, 5), 2, 2), 2),
     dict(outsize=(5, 5)),
     {'k': 2, 's': 2, 'p': 0, 'outsize': (5, 5), 'cover_all': True}),
])
def test_params_of_0_1_2_types(kind, fn, args, kwargs, expected):
    assert_params(cost(fn, *args, kind=kind, **kwargs).params, expected)


def test_params_of_unpooling_nd():
    # out 2*(2-1)+3-2 = 3 and 1*(3-1)+1 = 3
    params = cost(F.unpooling_nd, _x(1, 1, 2, 3), (3, 1), stride=(2, 1),
                  pad=(1, 0), cover_all=False).params
    assert_params(params, {'k': (3, 1), 's': (2, 1), 'p': (1, 0),
                           'outsize': (3, 3), 'cover_all': False})


# Bytes through the hook: every array read in its own dtype

def _report(fn, *args, name, **kwargs):
    with ComputationalCostHook() as cch:
        fn(*args, **kwargs)
    r = cch.layer_report[name]
    return r['flops'], r['mread'], r['mwrite']


def test_upsampling_2d_bytes_int64_indexes():
    y, indexes = F.max_pooling_2d(_x(1, 2, 4, 4), 2, return_indices=True)
    assert indexes.dtype == np.int64
    # x 8 float32 + 8 int64 indexes: 32 + 64 = 96; |y| 2*3*3 = 18: 72
    assert _report(F.upsampling_2d, y.array, indexes, 2,
                   name='Upsampling2D-1') == (0, 96, 72)


def test_max_pooling_with_indexes_bytes():
    x = _x(2, 3, 4, 4).astype(np.float16)
    run = _with_indexes(x, 2, 2, 0, True)
    # |y| 24: 24 float16 picked + 24 int64 indexes: 48 + 192 = 240
    # |y| 24 float16: 48
    assert _report(run, name='MaxPoolingNDWithIndexes-1') == (0, 240, 48)


def test_roi_max_pooling_2d_bytes_float64():
    x = _x(2, 3, 6, 8).astype(np.float64)
    rois = _rois4().astype(np.float64)
    # 288 + 8 float64 + 2 int32 + the scale: 2304 + 64 + 8 + 8 = 2384
    # |y| 36 float64 and 36 int32 argmax: 288 + 144 = 432
    assert _report(F.roi_max_pooling_2d, x, rois, _roi_indices(), (2, 3),
                   1.0, name='ROIMaxPooling2D-1') == (288, 2384, 432)


def test_roi_pooling_2d_bytes_float64():
    x = _x(1, 2, 3, 3).astype(np.float64)
    rois = np.array([[0, 0, 0, 2, 2]], np.float64)
    # bin 2*2 = 4: |y| 8, FLOPs 8*3 = 24
    # mread (18 + 5 + 1)*8 = 192; mwrite 8*8 + 8*4 (argmax) = 96
    assert _report(F.roi_pooling_2d, x, rois, 2, 2, 1.0,
                   name='ROIPooling2D-1') == (24, 192, 96)


# Gradients: each class applied by a backward pass

def _grad_of(f, x, *rest):
    """A callable running ``f`` on a Variable of ``x`` (and ``rest`` as
    they are) and a backward pass from a gradient of ones; it returns the
    gradient of x."""
    def run():
        xv = chainer.Variable(x)
        y = f(xv, *rest)
        y.grad = np.ones_like(y.array)
        y.backward()
        return xv.grad
    return run


def test_average_pooling_2d_grad():
    run = _grad_of(lambda x: F.average_pooling_2d(x, 2), _x(1, 1, 4, 4))
    # gy 2x2 into x 4x4: per axis H 4 (2 windows of 2), R 4
    # FLOPs 1*16: one division per element; mread 4; mwrite 16
    assert cost(run, kind='AveragePooling2DGrad') == (
        16, 4, 16, _window(2, 2, 0))


def test_average_pooling_2d_grad_overlapping_batch2():
    x = _x(2, 3, 5, 5)
    run = _grad_of(lambda x: F.average_pooling_2d(x, 3, 2, 1), x)
    # gy 3x3; per axis window i covers 2i-1 .. 2i+1 inside [0, 5):
    # 2 + 3 + 2 = 7 pairs (H), R 5; FLOPs 6 planes * 7*7 = 294
    # mread |gy| 2*3*9 = 54; mwrite 150
    assert cost(run, kind='AveragePooling2DGrad') == (
        294, 54, 150, _window(3, 2, 1))
    # with gy = 1 each of the 6*49 pairs inside x adds 1/9
    assert np.isclose(run().sum(), 6 * 49 / 9)


def test_average_pooling_nd_grad_pad_value():
    x = _x(1, 1, 5)
    # k 3, s 2, p 1: gy (5+2-3)//2+1 = 3; H 2 + 3 + 2 = 7, R 5
    for pad_value, flops in ((0, 7), (None, 3 + 7 - 5)):
        # pad_value=0: 7 (one per pair); None: |gy| 3 divisions + 2
        # additions = 5; mread 3; mwrite 5
        run = _grad_of(lambda x: F.average_pooling_nd(
            x, 3, 2, 1, pad_value=pad_value), x)
        assert cost(run, kind='AveragePoolingNDGrad') == (
            flops, 3, 5, _window(3, 2, 1))


def test_average_pooling_3d_grad():
    run = _grad_of(lambda x: F.average_pooling_nd(x, 2), _x(2, 1, 4, 4, 2))
    # gy (2, 1, 2, 2, 1); per axis H = R = size: one per element: 64
    assert cost(run, kind='AveragePoolingNDGrad') == (
        64, 8, 64, _window(2, 2, 0))


def test_max_pooling_nd_grad():
    x = _x(2, 3, 4, 4)
    run = _grad_of(lambda x: F.max_pooling_nd(x, 2), x)
    # 4 gy per plane onto 16 positions: no addition forced
    # mread |gy| 24 + 24 indexes = 48; mwrite 96
    assert cost(run, kind='MaxPoolingNDGrad') == (0, 48, 96, _window(2, 2, 0))
    with ComputationalCostHook() as cch:
        run()
    r = cch.layer_report['MaxPoolingNDGrad-1']
    # bytes: 24*4 + 24*8 (int64 indexes) = 288; 96*4 = 384
    assert (r['flops'], r['mread'], r['mwrite']) == (0, 288, 384)


def test_max_pooling_nd_grad_forced_additions():
    run = _grad_of(lambda x: F.max_pooling_nd(x, 2, 1, 1, cover_all=False),
                   _x(1, 1, 2, 2))
    # gy 3x3 = 9 values; per axis windows cover -1..0, 0..1, 1..2: R 2
    # 9 values on at most 4 positions: 9 - 4 = 5 additions
    # mread 9 + 9 = 18; mwrite 4
    assert cost(run, kind='MaxPoolingNDGrad') == (5, 18, 4, _window(2, 1, 1))
    assert run().sum() == 9


@pytest.mark.skipif(
    resolve_target('chainer.functions.pooling.max_pooling_2d.'
                   'MaxPooling2DGrad') is None,
    reason='MaxPooling2DGrad exists only in Chainer 6')
def test_max_pooling_2d_grad_chainer6():
    run = _grad_of(lambda x: F.max_pooling_2d(x, 2, 1, 1, cover_all=False),
                   _x(2, 1, 2, 2))
    # as above, 2 planes: 2*5 = 10; mread 18 + 18 = 36; mwrite 8
    assert cost(run, kind='MaxPooling2DGrad') == (10, 36, 8, _window(2, 1, 1))
    run = _grad_of(lambda x: F.max_pooling_2d(x, 2), _x(1, 2, 4, 4))
    # cover_all: gy 2x2 per plane onto 16: none; mread 8 + 8; mwrite 32
    assert cost(run, kind='MaxPooling2DGrad') == (0, 16, 32, _window(2, 2, 0))


def test_roi_pooling_2d_grad():
    x = _x(1, 2, 3, 3)
    rois = np.array([[0, 0, 0, 2, 2]], np.float32)
    run = _grad_of(lambda x: F.roi_pooling_2d(x, rois, 2, 2, 1.0), x)
    # gy (1, 2, 2, 2): 4 values per channel onto 9 positions: none
    # mread |rois| 5 + |gy| 8 + 8 argmax + 1 = 22; mwrite |x| 18
    assert cost(run, kind='ROIPooling2DGrad') == (
        0, 22, 18, _roi_params((2, 2), 1.0))


def test_roi_pooling_2d_grad_many_regions():
    x = _x(1, 1, 2, 2)
    rois = np.array([[0, 0, 0, 1, 1]] * 3, np.float32)
    run = _grad_of(lambda x: F.roi_pooling_2d(x, rois, 2, 2, 1.0), x)
    # gy (3, 1, 2, 2): 12 values onto 4 positions: 12 - 4 = 8 additions
    # mread 15 + 12 + 12 + 1 = 40; mwrite 4
    assert cost(run, kind='ROIPooling2DGrad') == (
        8, 40, 4, _roi_params((2, 2), 1.0))
    assert run().sum() == 12


def test_unpooling_2d_grad():
    run = _grad_of(lambda x: F.unpooling_2d(x, 3, 2, 1, cover_all=False),
                   _x(1, 1, 3, 3))
    # gy 5x5; each of the 9 gx sums a 3x3 window: 9*8 = 72
    # mread 25; mwrite 9
    assert cost(run, kind='Unpooling2DGrad') == (
        72, 25, 9, _unpool(3, 2, 1, (5, 5), False))


def test_unpooling_nd_grad():
    run = _grad_of(lambda x: F.unpooling_nd(x, 2), _x(2, 1, 3))
    # cover_all: gy 2*(3-1)+2-2+1 = 5; gx 2*3 = 6 sums of 2: 6
    # mread 10; mwrite 6
    assert cost(run, kind='UnpoolingNDGrad') == (
        6, 10, 6, _unpool(2, 2, 0, (5,), True))
    run = _grad_of(lambda x: F.unpooling_nd(x, (2, 1, 3), cover_all=False),
                   _x(1, 1, 2, 2, 1))
    # gy (4, 2, 3): 4 gx sums of 2*1*3 = 6: 4*5 = 20; mread 24; mwrite 4
    assert cost(run, kind='UnpoolingNDGrad') == (
        20, 24, 4, _unpool((2, 1, 3), (2, 1, 3), 0, (4, 2, 3), False))


def test_upsampling_2d_grad():
    y, indexes = F.max_pooling_2d(_x(1, 2, 4, 4), 2, return_indices=True)
    run = _grad_of(lambda x: F.upsampling_2d(x, indexes, 2), y.array)
    # gy (1, 2, 3, 3) = 18; gx 8 picks: mread min(18, 8) + 8 indexes = 16
    # mwrite 8
    assert cost(run, kind='Upsampling2DGrad') == (
        0, 16, 8, _unpool(2, 2, 0, (3, 3), True))
    with ComputationalCostHook() as cch:
        run()
    r = cch.layer_report['Upsampling2DGrad-1']
    # bytes: 8*4 + 8*8 (int64 indexes) = 96; 8*4 = 32
    assert (r['flops'], r['mread'], r['mwrite']) == (0, 96, 32)
