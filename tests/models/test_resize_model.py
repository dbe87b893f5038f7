"""A small model with a bilinear ResizeImages, run as a user runs it: no
stand-in for ``numpy.float``, which Chainer 7.8.1's resize_images needs and
NumPy 1.24 removed (the Makefile installs NumPy 1.23.5 for that reason).
Figures by hand from the calculators' formulas, float32 (4 bytes)."""

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest

from model_helpers import run_model_checked

# Chainer's own use of the alias, warned about by NumPy 1.23
pytestmark = pytest.mark.filterwarnings(
    'ignore:`np.float` is a deprecated alias:DeprecationWarning')


class UpsampleHead(chainer.Chain):
    """A 1x1 convolution 3 -> 2 without bias, a bilinear resize from 4x4
    to 8x8, a ReLU: a segmentation head in miniature."""

    def __init__(self):
        super(UpsampleHead, self).__init__()
        with self.init_scope():
            self.score = L.Convolution2D(3, 2, 1, nobias=True)

    def forward(self, x):
        # bilinear: the default mode of Chainer 6 and 7
        return F.relu(F.resize_images(self.score(x), (8, 8)))


def test_bilinear_resize_in_a_model():
    x = np.zeros((1, 3, 4, 4), np.float32)
    cch = run_model_checked(UpsampleHead(), x)
    rows = {k: (r['type'], r['flops'], r['mread'], r['mwrite'])
            for k, r in cch.layer_report.items() if k != 'total'}
    # conv: |y| = 2*4*4 = 32 outputs of K = 3 multiply-adds: 96 FLOPs;
    #       reads x (48) and W (6): 216 B; writes 128 B.
    # resize: |y| = 2*8*8 = 128, 4|y| = 512 FLOPs with FMA; reads
    #       min(4|y|, |x|) = min(512, 32) = 32 elements: 128 B; writes
    #       512 B.
    # relu: 128 FLOPs, reads and writes 512 B.
    assert rows == {
        'Convolution2DFunction-1': ('Convolution2DFunction', 96, 216, 128),
        'ResizeImages-1': ('ResizeImages', 512, 128, 512),
        'ReLU-1': ('ReLU', 128, 512, 512)}
    # 96 + 512 + 128 = 736; 216 + 128 + 512 = 856; 128 + 512 + 512 = 1152
    total = cch.total_report
    assert (total['flops'], total['mread'], total['mwrite']) == (
        736, 856, 1152)
