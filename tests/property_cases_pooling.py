"""Property cases of the gradient classes of ``chainer.functions.pooling``
(see ``property_cases`` for the markers and the Spec).

Each callable runs the forward function on a Variable and a backward pass
from a gradient of ones, so that the target gradient class is applied
exactly once. A gradient reads gy (and the indexes the forward kept) and
writes the gradient of x.
"""

import chainer.functions as F
import numpy as np

from property_cases import _pool_windows
from property_cases import _rois
from property_cases import _unpool_window
from property_cases import _upsampling_inputs
from property_cases import B
from property_cases import case
from property_cases import Spec
from property_cases import var


def _backward(y):
    y.grad = np.ones_like(y.array)
    y.backward()


def _planes(d, n, size):
    return d.u(n, d.int(1, 2), *size)


@case('AveragePooling2DGrad')
def _average_pooling_2d_grad(d, n):
    k, s, p, size = _pool_windows(d, 2)
    return Spec(lambda x: _backward(F.average_pooling_2d(var(x), k, s, p)),
                [B(_planes(d, n, size))])


@case('AveragePoolingNDGrad')
def _average_pooling_nd_grad(d, n):
    k, s, p, size = _pool_windows(d, d.int(1, 3))
    pad_value = d.pick([0, None])
    return Spec(lambda x: _backward(F.average_pooling_nd(
        var(x), k, s, p, pad_value=pad_value)), [B(_planes(d, n, size))])


@case('MaxPoolingNDGrad')
def _max_pooling_nd_grad(d, n):
    k, s, p, size = _pool_windows(d, d.int(1, 3))
    cover_all = d.bool()
    return Spec(lambda x: _backward(F.max_pooling_nd(var(x), k, s, p,
                                                     cover_all)),
                [B(_planes(d, n, size))])


@case('MaxPooling2DGrad', requires='6')
def _max_pooling_2d_grad(d, n):
    k, s, p, size = _pool_windows(d, 2)
    cover_all = d.bool()
    return Spec(lambda x: _backward(F.max_pooling_2d(var(x), k, s, p,
                                                     cover_all)),
                [B(_planes(d, n, size))])


@case('ROIPooling2DGrad')
def _roi_pooling_2d_grad(d, n):
    images, c = d.int(1, 2), d.int(1, 2)
    h, w = d.dims(2, lo=2, hi=4)
    outh, outw = d.dims(2, hi=3)
    x = d.u(images, c, h, w)
    rois = _rois(d, n, h, w, with_index_column=True, n_images=images)

    def f(x, r):
        _backward(F.roi_pooling_2d(var(x), r, outh, outw, 1.0))
    # reads the ROIs, gy, the argmax and the scale (once); writes the
    # gradient of the batch-independent x
    return Spec(f, [x, B(rois)], fixed_mread=1, affine=('mwrite',),
                unscaled={
                    # values forced onto one element: C max(0, R outh outw
                    # - N H W), not affine in the number R of regions
                    'flops': 'only the additions more regions force'})


@case('Unpooling2DGrad')
def _unpooling_2d_grad(d, n):
    (kh, sy, ph, h, ca), (kw, sx, pw, w, cb) = (_unpool_window(d),
                                                _unpool_window(d))
    cover_all = ca and cb
    return Spec(lambda x: _backward(F.unpooling_2d(
        var(x), (kh, kw), (sy, sx), (ph, pw), cover_all=cover_all)),
        [B(_planes(d, n, (h, w)))])


@case('UnpoolingNDGrad')
def _unpooling_nd_grad(d, n):
    windows = [_unpool_window(d) for _ in range(d.int(1, 3))]
    k, s, p, size, cover = (tuple(w[i] for w in windows) for i in range(5))
    cover_all = all(cover)
    return Spec(lambda x: _backward(F.unpooling_nd(
        var(x), k, s, p, cover_all=cover_all)), [B(_planes(d, n, size))])


@case('Upsampling2DGrad')
def _upsampling_2d_grad(d, n):
    x, indexes, (k, s, p, size, cover_all) = _upsampling_inputs(d, n)
    return Spec(lambda x, i: _backward(F.upsampling_2d(
        var(x), i, k, s, p, size, cover_all)), [B(x), B(indexes)])
