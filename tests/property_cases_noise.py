"""Property cases of the gradient classes of ``chainer.functions.noise``
(see ``property_cases``)."""

from chainer.functions.noise.dropout import DropoutGradCuDNN
import chainer.functions as F
import numpy as np

from property_cases import B
from property_cases import case
from property_cases import Direct
from property_cases import Spec
from property_cases import var


@case('DropoutGrad')
def _dropout_grad(d, n):
    ratio = d.pick([0.2, 0.5])

    def f(x):
        y = F.dropout(var(x), ratio)
        y.grad = np.ones_like(y.array)
        y.backward()
    return Spec(f, [B(d.x(n))])


@case('DropoutGradCuDNN')
def _dropout_grad_cudnn(d, n):
    ratio = d.pick([0.2, 0.5])

    def f(gy):
        # cuDNN only: the node is built as Dropout's backward would
        return Direct(DropoutGradCuDNN(None, ratio), (gy,), [gy.shape])
    return Spec(f, [B(d.x(n))])
