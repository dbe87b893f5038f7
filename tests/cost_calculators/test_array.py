import gc
import weakref

import chainer
import chainer.functions as F
import numpy as np
import pytest
from chainer.functions.array.get_item import GetItem

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.cost_calculators import IndexArray
from chainer_computational_cost.cost_calculators.array import calc_get_item
from helpers import assert_params
from helpers import cost


def _x(*shape, dtype=np.float32):
    return np.arange(np.prod(shape), dtype=dtype).reshape(shape)


# AsStrided

def test_as_strided_overlapping_windows():
    x = _x(6)
    # windows of 3 with step 1: |y| = 4*3 = 12; reads min(6, 12) = 6
    c = cost(F.as_strided, x, (4, 3), (1, 1))
    assert c == (0, 6, 12, {'shape': (4, 3), 'strides': (1, 1),
                            'offset': 0})
    assert F.as_strided(x, (4, 3), (1, 1)).size == 12


def test_as_strided_subsample():
    x = _x(2, 3)
    # every other element: |y| = 3; reads min(6, 3) = 3
    c = cost(F.as_strided, x, (3,), (2,))
    assert c == (0, 3, 3, {'shape': (3,), 'strides': (2,), 'offset': 0})


# Assign (backward of SelectItem)

def _select_item_backward(x, t):
    y = F.select_item(x, t)
    y.grad = np.ones(y.shape, y.dtype)
    y.backward()


def test_assign():
    x = chainer.Variable(_x(3, 4))
    t = np.array([0, 3, 1], np.int32)
    # reads gy (3) + t (3) = 6; writes the zero-filled (3, 4): 12
    c = cost(_select_item_backward, x, t, kind='Assign')
    assert c == (0, 6, 12, {'shape': (3, 4)})


def test_assign_batch1():
    x = chainer.Variable(_x(1, 5))
    t = np.array([2], np.int32)
    # reads 1 + 1 = 2; writes 1*5 = 5
    c = cost(_select_item_backward, x, t, kind='Assign')
    assert c == (0, 2, 5, {'shape': (1, 5)})


# Broadcast, BroadcastTo

def test_broadcast():
    a, b = _x(2, 1, 3), _x(4, 1)
    # common shape (2, 4, 3): 24 elements, 2 outputs = 48 written;
    # reads 6 + 4 = 10
    assert cost(F.broadcast, a, b) == (0, 10, 48, {'shape': (2, 4, 3)})
    ys = F.broadcast(a, b)
    assert ys[0].size + ys[1].size == 48


def test_broadcast_to():
    x = _x(1, 3)
    # reads 3, writes 4*3 = 12
    assert cost(F.broadcast_to, x, (4, 3)) == (0, 3, 12, {'shape': (4, 3)})
    assert_params(cost(F.broadcast_to, x, (4, 3)).params, {'shape': (4, 3)})
    x2 = _x(2, 1, 3)
    # reads 2*3 = 6, writes 2*5*3 = 30
    assert cost(F.broadcast_to, x2, (2, 5, 3)) == (
        0, 6, 30, {'shape': (2, 5, 3)})
    assert F.broadcast_to(x2, (2, 5, 3)).size == 30


# Cast

def test_cast():
    x = _x(2, 3)
    # 6 conversions, 6 read, 6 written
    assert cost(F.cast, x, np.float16) == (6, 6, 6, {'type': 'float16'})
    xi = _x(4, dtype=np.int32)
    # 4 conversions
    assert cost(F.cast, xi, 'float32') == (4, 4, 4, {'type': 'float32'})


def test_cast_same_dtype_is_free():
    x = chainer.Variable(_x(1, 3))
    # astype(copy=False) returns x itself
    assert cost(F.cast, x, np.float32) == (0, 0, 0, {'type': 'float32'})


# Concat, Stack and the *stack family

def test_concat():
    a, b = _x(2, 3), _x(2, 5)
    # 6 + 10 = 16 read and written
    assert cost(F.concat, (a, b)) == (0, 16, 16, {'axis': 1})
    assert F.concat((a, b)).size == 16
    assert_params(cost(F.concat, (a, b)).params, {'axis': 1})
    # axis 0: (1, 3) + (2, 3): 3 + 6 = 9
    assert cost(F.concat, (_x(1, 3), _x(2, 3)), axis=0) == (
        0, 9, 9, {'axis': 0})


def test_stack():
    a, b = _x(2, 3), _x(2, 3)
    # 6 + 6 = 12
    assert cost(F.stack, (a, b)) == (0, 12, 12, {'axis': 0})
    assert cost(F.stack, (a, b), axis=2) == (0, 12, 12, {'axis': 2})
    assert F.stack((a, b), axis=2).size == 12


def test_hstack():
    # (2, 3) + (2, 1): 6 + 2 = 8
    assert cost(F.hstack, (_x(2, 3), _x(2, 1))) == (0, 8, 8, {})
    # 1-d: 3 + 2 = 5
    assert cost(F.hstack, (_x(3), _x(2))) == (0, 5, 5, {})
    assert F.hstack((_x(3), _x(2))).size == 5


def test_vstack():
    # (1, 3) + (2, 3): 3 + 6 = 9
    assert cost(F.vstack, (_x(1, 3), _x(2, 3))) == (0, 9, 9, {})
    # 1-d: 3 + 3 = 6 (output (2, 3))
    assert cost(F.vstack, (_x(3), _x(3))) == (0, 6, 6, {})
    assert F.vstack((_x(3), _x(3))).size == 6


def test_dstack():
    # (2, 3) + (2, 3): 6 + 6 = 12 (output (2, 3, 2))
    assert cost(F.dstack, (_x(2, 3), _x(2, 3))) == (0, 12, 12, {})
    # (2, 3, 1) + (2, 3, 2): 6 + 12 = 18
    assert cost(F.dstack, (_x(2, 3, 1), _x(2, 3, 2))) == (0, 18, 18, {})
    assert F.dstack((_x(2, 3, 1), _x(2, 3, 2))).size == 18


# Copy

def test_copy():
    x = _x(2, 3)
    # 6 read, 6 written, no FLOPs
    c = cost(F.copy, x, -1)
    assert c[:3] == (0, 6, 6)
    assert isinstance(c.params['dst'], str)


# Depth2Space, Space2Depth

def test_depth2space():
    x = _x(1, 8, 2, 3)
    # |x| = 1*8*2*3 = 48
    assert cost(F.depth2space, x, 2) == (0, 48, 48, {'r': 2})
    assert F.depth2space(x, 2).shape == (1, 2, 4, 6)


def test_space2depth():
    x = _x(2, 1, 4, 6)
    # |x| = 2*1*4*6 = 48
    assert cost(F.space2depth, x, 2) == (0, 48, 48, {'r': 2})
    assert F.space2depth(x, 2).size == 48


# Diagonal

@pytest.mark.parametrize('offset, n', [
    (0, 3),    # min(3, 4) = 3
    (1, 3),    # min(3, 4 - 1) = 3
    (2, 2),    # min(3, 4 - 2) = 2
    (-1, 2),   # min(3 - 1, 4) = 2
    (-5, 0),   # max(0, min(3 - 5, 4)) = 0
])
def test_diagonal_offsets(offset, n):
    x = _x(3, 4)
    assert cost(F.diagonal, x, offset) == (
        0, n, n, {'offset': offset, 'axis1': 0, 'axis2': 1})
    assert F.diagonal(x, offset).size == n


def test_diagonal_batched():
    x = _x(2, 3, 4)
    # axes 1, 2: 2 (batch) * min(3, 4) = 6
    assert cost(F.diagonal, x, 0, 1, 2) == (
        0, 6, 6, {'offset': 0, 'axis1': 1, 'axis2': 2})
    assert F.diagonal(x, 0, 1, 2).size == 6


# Metadata-only views

def test_expand_dims():
    assert cost(F.expand_dims, _x(2, 3), 1) == (0, 0, 0, {'axis': 1})


def test_squeeze():
    x = _x(1, 3, 1)
    # axis None: the length-1 axes 0 and 2
    assert cost(F.squeeze, x) == (0, 0, 0, {'axis': (0, 2)})
    assert cost(F.squeeze, x, 2) == (0, 0, 0, {'axis': (2,)})


def test_reshape():
    x = _x(2, 3)
    c = cost(F.reshape, x, (3, 2))
    assert c[:3] == (0, 0, 0)
    assert_params(c.params, {'in_shape': (2, 3), 'out_shape': (3, 2)})
    # the target shape as the user gave it, -1 included (as 0.1.2)
    c = cost(F.reshape, x, (1, -1))
    assert c[:3] == (0, 0, 0)
    assert_params(c.params, {'in_shape': (2, 3), 'out_shape': (1, -1)})
    # flatten is a Reshape to (|x|,) = (6,)
    assert_params(cost(F.flatten, _x(1, 2, 3)).params,
                  {'in_shape': (1, 2, 3), 'out_shape': (6,)})


# Flips and transpositions: |x| read and written

def test_flip():
    x = _x(2, 3)
    assert cost(F.flip, x, 1) == (0, 6, 6, {'axis': 1})


def test_fliplr_flipud():
    x = _x(2, 3)
    assert cost(F.fliplr, x) == (0, 6, 6, {})
    assert cost(F.flipud, _x(1, 4)) == (0, 4, 4, {})


@pytest.mark.chainer7_only
def test_as_layout():
    x = _x(2, 3, 4, 5)
    # |x| = 2*3*4*5 = 120, read once and written once, 0 FLOPs
    c = cost(lambda x: chainer.Variable(x).as_layout('CUDNN_CHANNEL_LAST_X'),
             x)
    assert c[:3] == (0, 120, 120)
    assert_params(c.params, {'layout': 'CUDNN_CHANNEL_LAST_X'})


def test_transpose():
    x = _x(2, 3, 4)
    # |x| = 24
    assert cost(F.transpose, x, (1, 0, 2)) == (
        0, 24, 24, {'axes': (1, 0, 2)})
    assert_params(cost(F.transpose, x, (1, 0, 2)).params,
                  {'axes': (1, 0, 2)})
    # default: reversed axes, reported as None (as given, as 0.1.2)
    c = cost(F.transpose, x)
    assert c[:3] == (0, 24, 24)
    assert_params(c.params, {'axes': None})


def test_moveaxis_rollaxis_swapaxes():
    x = _x(2, 3, 4)
    # |x| = 24 for each
    assert cost(F.moveaxis, x, 0, 2) == (
        0, 24, 24, {'source': (0,), 'destination': (2,)})
    assert cost(F.rollaxis, x, 2) == (0, 24, 24, {'axis': 2, 'start': 0})
    assert cost(F.swapaxes, _x(1, 5), 0, 1) == (
        0, 5, 5, {'axis1': 0, 'axis2': 1})


# GetItem

def test_get_item_slices():
    x = _x(4, 5)
    # rows 1, 2: 2*5 = 10
    c = cost(F.get_item, x, slice(1, 3))
    assert c[:3] == (0, 10, 10)
    assert_params(c.params, {'slices': [(1, 3, None)]})
    # column 1 of 4 rows: 4
    c = cost(F.get_item, x, (slice(None), 1))
    assert c[:3] == (0, 4, 4)
    assert_params(c.params, {'slices': [(None, None, None), 1]})
    # rows 0, 2, column 3, new axis: 1*2 = 2
    c = cost(F.get_item, x, (None, slice(None, None, 2), 3))
    assert c[:3] == (0, 2, 2)
    assert_params(c.params, {'slices': [None, (None, None, 2), 3]})
    assert F.get_item(x, (None, slice(None, None, 2), 3)).shape == (1, 2)


def test_get_item_params_are_python_ints():
    x = _x(4, 5)
    # NumPy integers (bounds and indices) are reported as ints
    s = (slice(np.int64(1), np.int32(4), np.int64(2)), np.int64(-1))
    assert_params(cost(F.get_item, x, s).params,
                  {'slices': [(1, 4, 2), -1]})


def test_get_item_batch():
    # (1, 3, 4)[:, 1:] -> 1*2*4 = 8; (2, 3, 4)[:, 1:] -> 2*2*4 = 16
    s = (slice(None), slice(1, None))
    assert cost(F.get_item, _x(1, 3, 4), s)[:3] == (0, 8, 8)
    assert cost(F.get_item, _x(2, 3, 4), s)[:3] == (0, 16, 16)
    # Variable.__getitem__ with Ellipsis: (2, 3, 4)[..., 0] -> 2*3 = 6
    xv = chainer.Variable(_x(2, 3, 4))
    c = cost(lambda: xv[..., 0])
    assert c[:3] == (0, 6, 6)
    assert_params(c.params, {'slices': [Ellipsis, 0]})


def test_get_item_index_arrays():
    x = _x(4, 5)
    # 3 rows of 5 = 15 gathered, + 3 indices read = 18
    c = cost(F.get_item, x, [0, 2, 3])
    assert c[:3] == (0, 18, 15)
    # Chainer turns a list of ints into a tuple of one list
    assert_params(c.params, {'slices': [[0, 2, 3]]})
    assert F.get_item(x, [0, 2, 3]).size == 15
    idx = np.array([[0, 1], [2, 3]])
    # (4, 2, 2) = 16 gathered + 4 indices = 20
    c = cost(F.get_item, x, (Ellipsis, idx))
    assert c[:3] == (0, 20, 16)
    # an index array by its shape and dtype, never the array itself
    assert_params(c.params,
                  {'slices': [Ellipsis, IndexArray((2, 2), np.int64)]})


def test_get_item_params_keep_no_index_of_the_user():
    # the records hold neither the user's index array (alive, and
    # changing with it) nor their list: a snapshot stays as it was
    x = _x(6, 2)
    idx = np.array([0, 2, 4])
    rows = [1, 3]
    with ComputationalCostHook() as cch:
        F.get_item(x, idx)
        F.get_item(x, (rows, slice(None)))
    ref = weakref.ref(idx)
    idx[:] = 5
    rows.append(0)
    del idx
    gc.collect()
    assert ref() is None
    params = [r['params'] for name, r in cch.layer_report.items()
              if name != 'total']
    assert params == [{'slices': [IndexArray((3,), np.int64)]},
                      {'slices': [[1, 3], (None, None, None)]}]
    assert str(params[0]['slices'][0]) == 'array(shape=(3,), dtype=int64)'


def test_get_item_repeated_indices_read_once():
    x = _x(2, 3)
    # rows [0, 1, 0, 1]: |y| = 4*3 = 12 > |x| = 6; reads min(12, 6) = 6
    # elements of x + 4 indices = 10
    assert cost(F.get_item, x, [0, 1, 0, 1])[:3] == (0, 10, 12)


@pytest.mark.parametrize('mask', [
    [True, False, True, False],
    np.array([True, False, True, False]),
])
def test_get_item_boolean_mask_counts_the_selection(mask):
    x = _x(3, 4, 5, 6)
    s = (slice(None), mask)
    # 2 of the 4 entries of axis 1: |y| = 3*2*5*6 = 180 written;
    # reads min(180, 360) + 4 mask elements = 184
    c = cost(F.get_item, x, s)
    assert c[:3] == (0, 184, 180)
    assert F.get_item(x, s).size == 180
    # through the hook: 0 FLOPs, 180 float32 elements written, 180*4 = 720
    with ComputationalCostHook() as cch:
        F.get_item(x, s)
    report = cch.layer_report['GetItem-1']
    assert (report['flops'], report['mwrite']) == (0, 720)


def test_get_item_boolean_mask_upper_bound_without_out_shapes():
    # a direct call (no out_shapes) counts every mask slot as selected
    x = _x(3, 4, 5, 6)
    s = (slice(None), np.array([True, False, True, False]))
    # all 4 entries: 3*4*5*6 = 360 written; reads min(360, 360) + 4 = 364
    c = calc_get_item(GetItem(s), (x,))
    assert c[:3] == (0, 364, 360)
    x2 = _x(4, 5)
    mask = np.array([True, False, True, True])
    # all 4 rows: 4*5 = 20 written (really 15), read 20 + 4 = 24
    c = calc_get_item(GetItem(mask), (x2,))
    assert c[:3] == (0, 24, 20)
    assert_params(c[3], {'slices': [IndexArray((4,), np.bool_)]})


# Im2Col

def test_im2col_stride_skips_pixels():
    x = _x(1, 1, 5, 5)
    # k 1, s 2: out 3x3 = 9 written; the taps reach rows and columns
    # 0, 2, 4 only: reads 3*3 = 9
    assert cost(F.im2col, x, 1, 2)[:3] == (0, 9, 9)


def test_im2col():
    x = _x(1, 2, 4, 4)
    # k 3, s 1, p 0: out 2x2; |y| = 1*2*3*3*2*2 = 72; reads |x| = 32
    c = cost(F.im2col, x, 3)
    assert c == (0, 32, 72, {'k': (3, 3), 's': (1, 1), 'p': (0, 0),
                             'd': (1, 1), 'cover_all': False})
    assert F.im2col(x, 3).size == 72
    # p 1: out 4x4; 2*9*16 = 288
    assert cost(F.im2col, x, 3, 1, 1)[:3] == (0, 32, 288)


def test_im2col_stride_cover_all_batch():
    x = _x(2, 2, 4, 4)
    # s 2, p 1: out (4+2-3)//2+1 = 2; 2*2*9*2*2 = 144; reads 64
    assert cost(F.im2col, x, 3, 2, 1)[:3] == (0, 64, 144)
    # cover_all: (4+2-3+1)//2+1 = 3; 2*2*9*3*3 = 324
    assert cost(F.im2col, x, 3, 2, 1, cover_all=True)[:3] == (0, 64, 324)
    assert F.im2col(x, 3, 2, 1, cover_all=True).size == 324


def test_im2col_dilate():
    x = _x(1, 2, 5, 5)
    # k 3, d 2: dk = 5, out 1x1; 2*9*1 = 18 written; the taps reach rows
    # and columns 0, 2, 4 only: reads 2*3*3 = 18
    c = cost(F.im2col, x, 3, dilate=2)
    assert c[:3] == (0, 18, 18)
    assert c.params['d'] == (2, 2)
    assert F.im2col(x, 3, dilate=2).size == 18


# Pad

def test_pad_constant():
    x = _x(2, 3)
    # (2+2)*(3+2) = 20 written; 6 + 1 (constant 0) read
    assert cost(F.pad, x, 1, 'constant') == (
        0, 7, 20, {'mode': 'constant', 'pad': ((1, 1), (1, 1))})
    assert F.pad(x, 1, 'constant').size == 20
    # ((0, 0), (1, 2)): 2*(3+3) = 12
    assert cost(F.pad, x, ((0, 0), (1, 2)), 'constant')[:3] == (0, 7, 12)
    # (1, 2) on every axis: (2+3)*(3+3) = 30
    c = cost(F.pad, x, (1, 2), 'constant')
    assert c[:3] == (0, 7, 30)
    assert c.params['pad'] == ((1, 2), (1, 2))


def test_pad_constant_values_and_no_padding():
    x = _x(1, 3)
    # 2 constants (before, after) read: 3 + 2 = 5; (1+2)*(3+2) = 15
    assert cost(F.pad, x, 1, 'constant', constant_values=(7, 8))[:3] == (
        0, 5, 15)
    # no padding: no constant written or read
    assert cost(F.pad, x, 0, 'constant')[:3] == (0, 3, 3)


def test_pad_edge():
    x = _x(2, 3)
    # no constant read: 6; (2+2)*(3+2) = 20
    assert cost(F.pad, x, 1, 'edge') == (
        0, 6, 20, {'mode': 'edge', 'pad': ((1, 1), (1, 1))})


# PadSequence

def test_pad_sequence():
    xs = [_x(3, 2), _x(1, 2), _x(2, 2)]
    # L = 3: 3*3*2 = 18 written; 6 + 2 + 4 + 1 (padding) = 13 read
    assert cost(F.pad_sequence, xs) == (
        0, 13, 18, {'length': 3, 'padding': 0})
    assert F.pad_sequence(xs).size == 18
    # L = 4: 3*4*2 = 24
    assert cost(F.pad_sequence, xs, 4, -1.5) == (
        0, 13, 24, {'length': 4, 'padding': -1.5})


def test_pad_sequence_no_padding():
    xs = [_x(2), _x(2)]
    # 2*2 = 4 written, 2 + 2 = 4 read, padding never used
    assert cost(F.pad_sequence, xs) == (
        0, 4, 4, {'length': 2, 'padding': 0})


# Permutate

def test_permutate():
    x = _x(2, 3)
    ind = np.array([2, 0, 1], np.int32)
    # reads 6 + 3 indices = 9, writes 6
    assert cost(F.permutate, x, ind, axis=1) == (
        0, 9, 6, {'axis': 1, 'inv': False})
    ind0 = np.array([1, 0], np.int32)
    # reads 6 + 2 = 8
    assert cost(F.permutate, x, ind0, inv=True) == (
        0, 8, 6, {'axis': 0, 'inv': True})


# Repeat

def test_repeat():
    x = _x(2, 3)
    # flattened, 2 each: 2*6 = 12
    assert cost(F.repeat, x, 2) == (0, 6, 12, {'repeats': (2,)})
    assert F.repeat(x, 2).size == 12
    # axis 1, 2 each: 2*(3*2) = 12
    assert cost(F.repeat, x, 2, 1) == (
        0, 6, 12, {'repeats': (2,), 'axis': 1})
    # axis 1, counts (1, 0, 3): 2*(1+0+3) = 8; column 1 (repeated 0
    # times) is not read: 2*2 = 4
    assert cost(F.repeat, x, (1, 0, 3), 1) == (
        0, 4, 8, {'repeats': (1, 0, 3), 'axis': 1})
    assert F.repeat(x, (1, 0, 3), 1).size == 8
    # axis -1, 3 each: 2*(3*3) = 18
    assert cost(F.repeat, x, 3, -1)[:3] == (0, 6, 18)


def test_repeat_flat_counts():
    x = _x(1, 6)
    # one count per element: 1+1+1+1+1+2 = 7
    assert cost(F.repeat, x, (1, 1, 1, 1, 1, 2))[:3] == (0, 6, 7)


# ResizeImages

@pytest.fixture
def numpy_float(monkeypatch):
    # Chainer's resize_images uses the alias numpy.float, removed in
    # NumPy 1.24 (deprecated before): put the plain alias in the module's
    # namespace for the duration of the test, without touching the
    # deprecated attribute.
    monkeypatch.setitem(vars(np), 'float', float)


def test_resize_images(numpy_float):
    x = _x(1, 2, 3, 4)
    # |y| = 1*2*5*6 = 60; FMA 4*60 = 240, no FMA 7*60 = 420;
    # reads min(4*60, 24) = 24
    c = cost(F.resize_images, x, (5, 6))
    assert c[:3] == (240, 24, 60)
    # 0.1.2's params: the size only (no mode for bilinear, the only mode
    # Chainer 6 has)
    assert_params(c.params, {'size': (5, 6)})
    assert cost(F.resize_images, x, (5, 6), fma=False)[:3] == (420, 24, 60)
    assert F.resize_images(x, (5, 6)).size == 60


def test_resize_images_batch(numpy_float):
    x = _x(2, 1, 2, 2)
    # |y| = 2*1*3*3 = 18; FMA 72, no FMA 126; reads 8
    assert cost(F.resize_images, x, (3, 3))[:3] == (72, 8, 18)
    assert cost(F.resize_images, x, (3, 3), fma=False)[:3] == (126, 8, 18)


def test_resize_images_shrink_reads_the_neighbours_only(numpy_float):
    x = _x(1, 1, 8, 8)
    # |y| = 1*1*2*2 = 4: reads min(4*4, 64) = 16 (0.1.2's formula);
    # FMA 4*4 = 16, no FMA 7*4 = 28
    assert cost(F.resize_images, x, (2, 2))[:3] == (16, 16, 4)
    assert cost(F.resize_images, x, (2, 2), fma=False)[:3] == (28, 16, 4)
    # batch 3: |y| = 3*1*2*2 = 12; min(4*12, 3*64) = 48
    x3 = _x(3, 1, 8, 8)
    assert cost(F.resize_images, x3, (2, 2))[:3] == (48, 48, 12)


@pytest.mark.chainer7_only
def test_resize_images_nearest_shrink(numpy_float):
    x = _x(1, 1, 8, 8)
    # a gather: |y| = 2*3 = 6 elements read (min(6, 64)) and written
    c = cost(F.resize_images, x, (2, 3), mode='nearest')
    assert c == (0, 6, 6, {'size': (2, 3), 'mode': 'nearest'})


@pytest.mark.chainer7_only
def test_resize_images_nearest(numpy_float):
    x = _x(1, 2, 3, 4)
    # a gather: 0 FLOPs; min(60, 24) = 24 read, 60 written
    c = cost(F.resize_images, x, (5, 6), mode='nearest')
    assert c[:3] == (0, 24, 60)
    # Chainer 7's nearest mode, which 0.1.2 never saw, is shown
    assert_params(c.params, {'size': (5, 6), 'mode': 'nearest'})


# ScatterAdd

def test_scatter_add():
    a = _x(3, 4)
    b = _x(3)
    # 3 additions; reads 12 + 3 = 15; writes 12
    c = cost(F.scatter_add, a, (slice(None), 1), b)
    assert c[:3] == (3, 15, 12)
    assert_params(c.params, {'slices': [(None, None, None), 1]})
    assert F.scatter_add(a, (slice(None), 1), b).size == 12


def test_scatter_add_index_array():
    a = _x(3, 4)
    b = _x(3, 4)
    ind = np.array([0, 0, 2])
    # 12 additions; reads 12 + 12 + 3 = 27; writes 12
    c = cost(F.scatter_add, a, ind, b)
    assert c[:3] == (12, 27, 12)
    assert_params(c.params, {'slices': [IndexArray((3,), ind.dtype)]})


# SelectItem

def test_select_item():
    x = _x(3, 4)
    t = np.array([0, 3, 1], np.int32)
    # reads 3 indices + 3 selected = 6, writes 3
    assert cost(F.select_item, x, t) == (0, 6, 3, {})
    # batch 1: 1 + 1 = 2, writes 1
    assert cost(F.select_item, _x(1, 4), t[:1]) == (0, 2, 1, {})


# Separate, SplitAxis

def test_separate():
    x = _x(2, 3)
    # 6 read and written in total
    assert cost(F.separate, x, 1) == (0, 6, 6, {'axis': 1})
    assert sum(y.size for y in F.separate(x, 1)) == 6


def test_split_axis():
    x = _x(2, 6)
    # 3 sections of (2, 2): 12 in total
    assert cost(F.split_axis, x, 3, 1) == (
        0, 12, 12, {'axis': 1, 'sections': 3})
    # indices [1, 4]: pieces 1, 3, 2 -> 2*6 = 12
    assert cost(F.split_axis, x, [1, 4], 1) == (
        0, 12, 12, {'axis': 1, 'indices': (1, 4)})
    # indices [2, 6]: pieces 2, 4 and an empty one -> 2*6 = 12
    ys = F.split_axis(x, [2, 6], 1)
    assert cost(F.split_axis, x, [2, 6], 1)[:3] == (0, 12, 12)
    assert len(ys) == 3
    assert sum(y.size for y in ys) == 12


# SpatialTransformerGrid, SpatialTransformerSampler

def test_spatial_transformer_grid():
    theta = _x(2, 2, 3)
    # |g| = 2*2*4*5 = 80; FMA 3*80 = 240, no FMA 5*80 = 400;
    # reads 12 + 3*4*5 = 72
    assert cost(F.spatial_transformer_grid, theta, (4, 5)) == (
        240, 72, 80, {'size': (4, 5)})
    assert cost(F.spatial_transformer_grid, theta, (4, 5),
                fma=False)[:3] == (400, 72, 80)
    assert F.spatial_transformer_grid(theta, (4, 5)).size == 80


def test_spatial_transformer_grid_batch1():
    theta = _x(1, 2, 3)
    # |g| = 1*2*4*5 = 40; 3*40 = 120; reads 6 + 60 = 66
    assert cost(F.spatial_transformer_grid, theta, (4, 5))[:3] == (
        120, 66, 40)


def test_spatial_transformer_sampler():
    x = _x(2, 3, 4, 5)
    grid = np.zeros((2, 2, 6, 7), np.float32)
    # P = 2*6*7 = 84 points, |y| = 84*3 = 252
    # FMA: 16*84 + 4*252 = 1344 + 1008 = 2352
    # no FMA: 18*84 + 7*252 = 1512 + 1764 = 3276
    # reads 120 + 168 = 288
    assert cost(F.spatial_transformer_sampler, x, grid) == (
        2352, 288, 252, {})
    assert cost(F.spatial_transformer_sampler, x, grid,
                fma=False) == (3276, 288, 252, {})
    assert F.spatial_transformer_sampler(x, grid).size == 252


def test_spatial_transformer_sampler_batch1():
    x = _x(1, 1, 2, 2)
    grid = np.zeros((1, 2, 1, 1), np.float32)
    # P = 1, |y| = 1: 16 + 4 = 20; reads 4 + 2 = 6
    assert cost(F.spatial_transformer_sampler, x, grid) == (20, 6, 1, {})


# Tile

def test_tile():
    x = _x(2, 3)
    # 6 * 2 = 12
    assert cost(F.tile, x, 2) == (0, 6, 12, {'reps': (2,)})
    # reps longer than ndim: 6 * 2*1*2 = 24, shape (2, 2, 6)
    assert cost(F.tile, x, (2, 1, 2)) == (0, 6, 24, {'reps': (2, 1, 2)})
    assert F.tile(x, (2, 1, 2)).size == 24


# TransposeSequence

def test_transpose_sequence():
    xs = [_x(3, 2), _x(2, 2), _x(1, 2)]
    # 6 + 4 + 2 = 12 read and written
    assert cost(F.transpose_sequence, xs) == (0, 12, 12, {'length': 3})
    assert sum(y.size for y in F.transpose_sequence(xs)) == 12


# Where

def test_where():
    c = np.array([[True, False, True], [False, True, False]])
    x, y = _x(2, 3), -_x(2, 3)
    # 6 selects; reads 6 + 6 + 6 = 18; writes 6
    assert cost(F.where, c, x, y) == (6, 18, 6, {})


def test_where_broadcast():
    c = np.array([[True], [False]])
    x, y = _x(1, 3), _x(2, 3)
    # output (2, 3): 6 selects; reads 2 + 3 + 6 = 11
    assert cost(F.where, c, x, y) == (6, 11, 6, {})
    assert F.where(c, x, y).size == 6


# Bytes through the hook: each array is read with its own dtype

def _bytes(name, fn, *args):
    """(flops, mread, mwrite) of the call ``name`` (e.g. 'Cast-1') of
    ``fn(*args)`` in the hook's report, memory in bytes."""
    with ComputationalCostHook() as cch:
        fn(*args)
    r = cch.layer_report[name]
    return r['flops'], r['mread'], r['mwrite']


@pytest.mark.parametrize('shape, src, dst, expected', [
    # 24 conversions; 24*4 = 96 B read (float32), 24*2 = 48 B written
    ((2, 3, 4), np.float32, np.float16, (24, 96, 48)),
    # 6 int32 read: 6*4 = 24 B; 6 float64 written: 6*8 = 48 B
    ((2, 3), np.int32, np.float64, (6, 24, 48)),
    # 6*8 = 48 B read, 6*2 = 12 B written
    ((2, 3), np.float64, np.float16, (6, 48, 12)),
    # 4*2 = 8 B read, 4*4 = 16 B written
    ((4,), np.float16, np.float32, (4, 8, 16)),
])
def test_cast_bytes(shape, src, dst, expected):
    x = _x(*shape, dtype=src)
    assert _bytes('Cast-1', F.cast, x, dst) == expected


@pytest.mark.parametrize('dtype, ind_dtype, expected', [
    # 6*8 = 48 B of x + 3*4 = 12 B of indices = 60; 6*8 = 48 written
    (np.float64, np.int32, (0, 60, 48)),
    # 6*2 = 12 + 3*8 = 24 -> 36; 6*2 = 12 written
    (np.float16, np.int64, (0, 36, 12)),
])
def test_permutate_bytes(dtype, ind_dtype, expected):
    x = _x(2, 3, dtype=dtype)
    ind = np.array([2, 0, 1], ind_dtype)
    assert _bytes('Permutate-1', F.permutate, x, ind, 1) == expected


def test_select_item_bytes():
    x = _x(3, 4, dtype=np.float64)
    t = np.array([0, 3, 1], np.int32)
    # 3 float64 gathered (24 B) + 3 int32 indices (12 B) = 36; 3*8 = 24
    assert _bytes('SelectItem-1', F.select_item, x, t) == (0, 36, 24)


def test_assign_bytes():
    x = chainer.Variable(_x(3, 4, dtype=np.float64))
    t = np.array([0, 3, 1], np.int32)
    # gy 3 float64 (24 B) + t 3 int32 (12 B) = 36; (3, 4) float64: 96 B
    assert _bytes('Assign-1', _select_item_backward, x, t) == (0, 36, 96)


@pytest.mark.parametrize('dtype, expected', [
    # 6 selects; 6 bools (6 B) + 2*6*8 = 102 B; 6*8 = 48 B written
    (np.float64, (6, 102, 48)),
    # 6 + 2*6*2 = 30 B; 6*2 = 12 B written
    (np.float16, (6, 30, 12)),
])
def test_where_bytes(dtype, expected):
    c = np.array([[True, False, True], [False, True, False]])
    x, y = _x(2, 3, dtype=dtype), _x(2, 3, dtype=dtype)
    assert _bytes('Where-1', F.where, c, x, y) == expected


def test_scatter_add_bytes():
    a, b = _x(3, 4, dtype=np.float64), _x(3, 4, dtype=np.float64)
    ind = np.array([0, 0, 2], np.int64)
    # 12 additions; 12*8 + 12*8 + 3*8 = 216 B; 12*8 = 96 B written
    assert _bytes('ScatterAdd-1', F.scatter_add, a, ind, b) == (12, 216, 96)


@pytest.mark.parametrize('index, expected', [
    # 15 float64 gathered (120 B) + 3 int32 (12 B) = 132; 120 written
    (np.array([0, 2, 3], np.int32), (0, 132, 120)),
    # a list of ints is an intp array: 120 + 3*8 = 144
    ([0, 2, 3], (0, 144, 120)),
])
def test_get_item_bytes(index, expected):
    x = _x(4, 5, dtype=np.float64)
    assert _bytes('GetItem-1', F.get_item, x, index) == expected


def test_get_item_mask_bytes():
    x = _x(3, 4, 5, 6, dtype=np.float16)
    s = (slice(None), [True, False, True, False])
    # 180 float16 selected (360 B) + 4 bools (4 B) = 364; 360 B written
    assert _bytes('GetItem-1', F.get_item, x, s) == (0, 364, 360)


def test_broadcast_bytes():
    a = _x(2, 1, 3, dtype=np.float16)
    b = _x(4, 1, dtype=np.float64)
    # reads 6*2 + 4*8 = 44 B; two (2, 4, 3) outputs in their inputs'
    # dtypes: 24*2 + 24*8 = 240 B
    assert _bytes('Broadcast-1', F.broadcast, a, b) == (0, 44, 240)


# Gradient classes: run forward and backward, cost the gradient node

def _backward(f, *args):
    """A function of ``x`` running ``f(Variable(x), *args)`` forward and
    backward (output gradients of ones)."""
    def run(x):
        y = f(chainer.Variable(x), *args)
        y.grad = np.ones(y.shape, y.dtype)
        y.backward()
    return run


def test_as_strided_grad_overlapping_windows():
    x = _x(6)
    # gy: windows of 3 with step 1, 4*3 = 12 elements onto the 6 of x:
    # 12 - min(6, 12) = 6 additions; reads 12, writes |x| = 6
    c = cost(_backward(F.as_strided, (4, 3), (1, 1)), x,
             kind='AsStridedGrad')
    assert c == (6, 12, 6, {'shape': (4, 3), 'strides': (1, 1),
                            'offset': 0})


def test_as_strided_grad_subsample():
    x = _x(2, 3)
    # 3 elements onto distinct ones: 3 - min(6, 3) = 0; reads 3, writes 6
    c = cost(_backward(F.as_strided, (3,), (2,)), x, kind='AsStridedGrad')
    assert c[:3] == (0, 3, 6)


def test_diagonal_grad():
    x = _x(3, 4)
    # gy: min(3, 4 - 1) = 3 read; the zero-filled (3, 4) = 12 written
    c = cost(_backward(F.diagonal, 1), x, kind='DiagonalGrad')
    assert c == (0, 3, 12, {'offset': 1, 'axis1': 0, 'axis2': 1})
    # batched over axis 0: gy 2*min(3, 4) = 6; 2*3*4 = 24 written
    c = cost(_backward(F.diagonal, 0, 1, 2), _x(2, 3, 4),
             kind='DiagonalGrad')
    assert c[:3] == (0, 6, 24)


def test_get_item_grad_slices():
    x = _x(4, 5)
    # gy 2*5 = 10 copied into a zero-filled (4, 5): 10 - min(20, 10) = 0
    # additions; reads 10, writes 20
    c = cost(_backward(F.get_item, slice(1, 3)), x, kind='GetItemGrad')
    assert c[:3] == (0, 10, 20)
    assert_params(c.params, {'slices': [(1, 3, None)]})


def test_get_item_grad_repeated_indices():
    x = _x(2, 3)
    idx = np.array([0, 1, 0, 1], np.int32)
    # gy 4*3 = 12 onto the 6 elements of x: 12 - min(6, 12) = 6
    # additions; reads 12 + 4 indices = 16; writes 6
    f = _backward(F.get_item, idx)
    c = cost(f, x, kind='GetItemGrad')
    assert c[:3] == (6, 16, 6)
    assert_params(c.params, {'slices': [IndexArray((4,), np.int32)]})
    # bytes: 12 float32 (48 B) + 4 int32 (16 B) = 64; 6*4 = 24 written
    assert _bytes('GetItemGrad-1', f, x) == (6, 64, 24)


def test_get_item_grad_mask():
    x = _x(3, 4, 5, 6)
    s = (slice(None), np.array([True, False, True, False]))
    # gy 3*2*5*6 = 180 (a copy, 0 additions); reads 180 + 4 = 184;
    # writes 3*4*5*6 = 360
    c = cost(_backward(F.get_item, s), x, kind='GetItemGrad')
    assert c[:3] == (0, 184, 360)


def test_im2col_grad():
    x = _x(1, 2, 4, 4)
    # k 3, s 1, p 0: out 2; per axis taps at o + u for o < 2, u < 3:
    # t = 6 inside, reaching r = 4 positions. FLOPs 1*2*(6*6 - 4*4) = 40;
    # reads 1*2*6*6 = 72 (all of gy); writes 1*2*4*4 = 32
    c = cost(_backward(F.im2col, 3), x, kind='Im2ColGrad')
    assert c == (40, 72, 32, {'k': (3, 3), 's': (1, 1), 'p': (0, 0),
                              'd': (1, 1), 'cover_all': False})


def test_im2col_grad_padding_dropped():
    x = _x(1, 2, 4, 4)
    # k 3, s 1, p 1: out 4; positions o + u - 1 for o < 4, u < 3: 12
    # taps, -1 and 4 outside: t = 10, r = 4. FLOPs 2*(10*10 - 4*4) = 168;
    # reads 2*10*10 = 200 (of |gy| = 2*9*4*4 = 288); writes 32
    c = cost(_backward(F.im2col, 3, 1, 1), x, kind='Im2ColGrad')
    assert c[:3] == (168, 200, 32)


def test_im2col_grad_stride_skips_pixels():
    x = _x(1, 1, 5, 5)
    # k 1, s 2: out 3; t = r = 3 per axis: 0 additions; reads 3*3 = 9;
    # writes 5*5 = 25 (zeros where no tap reaches)
    c = cost(_backward(F.im2col, 1, 2), x, kind='Im2ColGrad')
    assert c[:3] == (0, 9, 25)


def test_repeat_grad():
    x = _x(2, 3)
    # 2 copies of each of the 6 elements: 12 - 6 = 6 additions; reads 12,
    # writes 6
    c = cost(_backward(F.repeat, 2), x, kind='RepeatGrad')
    assert c == (6, 12, 6, {'repeats': (2,)})
    # axis 1, counts (1, 0, 3): gy 2*4 = 8 onto the 2*2 = 4 elements
    # repeated at least once: 8 - 4 = 4; reads 8, writes 6
    c = cost(_backward(F.repeat, (1, 0, 3), 1), x, kind='RepeatGrad')
    assert c == (4, 8, 6, {'repeats': (1, 0, 3), 'axis': 1})
    # axis -1 (shown as 1), 3 each: gy 18, 18 - 6 = 12; reads 18
    c = cost(_backward(F.repeat, 3, -1), x, kind='RepeatGrad')
    assert c == (12, 18, 6, {'repeats': (3,), 'axis': 1})


def test_resize_images_grad(numpy_float):
    x = _x(1, 1, 2, 2)
    f = _backward(F.resize_images, (3, 3))
    # gy 9, 4 products each: FMA 4*9 = 36; no FMA 36 multiplications +
    # 36 - min(4, 36) = 32 additions = 68; reads 9, writes 4
    assert cost(f, x, kind='ResizeImagesGrad') == (36, 9, 4, {'size': (3, 3)})
    assert cost(f, x, kind='ResizeImagesGrad', fma=False)[:3] == (68, 9, 4)


def test_resize_images_grad_shrink(numpy_float):
    x = _x(1, 1, 8, 8)
    f = _backward(F.resize_images, (2, 2))
    # gy 4: 16 products; no FMA 16 + 16 - min(64, 16) = 16; reads 4,
    # writes 8*8 = 64
    assert cost(f, x, kind='ResizeImagesGrad')[:3] == (16, 4, 64)
    assert cost(f, x, kind='ResizeImagesGrad', fma=False)[:3] == (16, 4, 64)


@pytest.mark.chainer7_only
def test_resize_images_grad_nearest(numpy_float):
    x = _x(1, 1, 2, 2)

    def f(x):
        y = F.resize_images(chainer.Variable(x), (3, 3), mode='nearest')
        y.grad = np.ones(y.shape, y.dtype)
        y.backward()
    # 9 gradients summed into 4 elements: 9 - min(4, 9) = 5 additions
    # (with or without FMA); reads 9, writes 4
    c = cost(f, x, kind='ResizeImagesGrad')
    assert c == (5, 9, 4, {'size': (3, 3), 'mode': 'nearest'})
    assert cost(f, x, kind='ResizeImagesGrad', fma=False)[:3] == (5, 9, 4)
