import numpy as np

import chainer.functions as F

from helpers import cost


def test_relu():
    x = np.zeros((2, 3, 4), np.float32)
    # |x| = 2*3*4 = 24 comparisons, 24 read, 24 written
    assert cost(F.relu, x) == (24, 24, 24, {})
    assert cost(F.relu, x, fma=False) == (24, 24, 24, {})
