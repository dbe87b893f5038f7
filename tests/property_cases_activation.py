"""Property cases of the gradient classes of ``chainer.functions.activation``
(see ``property_cases``): each runs a forward function, then a backward
pass from a gradient of ones that applies the target class once."""

from chainer.functions.activation.clipped_relu import ClippedReLUGrad3
from chainer.functions.activation.relu import ReLUGradCudnn
import chainer.functions as F
import numpy as np

from property_cases import B
from property_cases import case
from property_cases import CHAINER_MAJOR
from property_cases import Direct
from property_cases import Spec
from property_cases import var


def _backward(f):
    """``f`` on Variables of its arguments, then backward from ones."""
    def run(*arrays):
        y = f(*[var(a) for a in arrays])
        y.grad = np.ones_like(y.array)
        y.backward()
    return run


def _non_batch_axis(d, ndim):
    return d.int(1, ndim - 1)


@case('ReLUGrad2')
def _relu_grad2(d, n):
    return Spec(_backward(F.relu), [B(d.x(n))])


@case('ReLUGradCudnn')
def _relu_grad_cudnn(d, n):
    def f(x):
        # cuDNN only: the node is built as ReLU's backward would
        y = np.maximum(x, 0)
        node = (ReLUGradCudnn(x, y) if CHAINER_MAJOR == 6
                else ReLUGradCudnn(y))
        return Direct(node, (np.ones_like(y),), [y.shape])
    return Spec(f, [B(d.x(n))])


@case('ClippedReLUGrad2')
def _clipped_relu_grad2(d, n):
    z = d.pick([0.3, 1.0, 6.0])
    # the cap is a scalar constant read once
    return Spec(_backward(lambda x: F.clipped_relu(x, z)), [B(d.x(n))],
                const_reads=1)


@case('ClippedReLUGrad3')
def _clipped_relu_grad3(d, n):
    z = d.pick([0.3, 1.0])

    def f(x):
        # Chainer applies it after a cuDNN forward only; its CPU forward
        # runs when applied by hand
        y = np.clip(x, 0, z)
        return ClippedReLUGrad3(x, y, z).apply((np.ones_like(x),))
    return Spec(f, [B(d.x(n))], const_reads=1)


@case('ELUGrad')
def _elu_grad(d, n):
    alpha = d.pick([-0.5, 1.0])
    # alpha is a scalar constant read once
    return Spec(_backward(lambda x: F.elu(x, alpha)), [B(d.x(n, hi=3) - 0.5)],
                const_reads=1)


@case('HardSigmoidGrad')
def _hard_sigmoid_grad(d, n):
    return Spec(_backward(F.hard_sigmoid), [B(d.x(n))])


@case('_LeakyReLUGrad')
def _leaky_relu_grad(d, n):
    slope = d.pick([-0.1, 0.2])
    return Spec(_backward(lambda x: F.leaky_relu(x, slope)),
                [B(d.x(n) - 0.5)], const_reads=1)


@case('_RReLUGrad')
def _rrelu_grad(d, n):
    train = d.bool()
    return Spec(_backward(lambda x: F.rrelu(x, 0.1, 0.3)), [B(d.x(n) - 0.5)],
                train=train)


@case('SigmoidGrad')
def _sigmoid_grad(d, n):
    return Spec(_backward(F.sigmoid), [B(d.x(n))])


@case('SoftplusGrad')
def _softplus_grad(d, n):
    beta = d.pick([1.0, 2.0])
    return Spec(_backward(lambda x: F.softplus(x, beta)), [B(d.x(n))],
                const_reads=1)


@case('TanhGrad')
def _tanh_grad(d, n):
    return Spec(_backward(F.tanh), [B(d.x(n))])


@case('_SoftmaxGrad')
def _softmax_grad(d, n):
    x = d.x(n)
    axis = _non_batch_axis(d, x.ndim)
    return Spec(_backward(lambda x: F.softmax(x, axis)), [B(x)])


@case('LogSoftmaxGrad')
def _log_softmax_grad(d, n):
    x = d.x(n)
    axis = _non_batch_axis(d, x.ndim)
    return Spec(_backward(lambda x: F.log_softmax(x, axis)), [B(x)])


@case('PReLUFunctionGrad')
def _prelu_grad(d, n):
    x = d.x(n) - 0.5
    W = d.u(*x.shape[1:1 + d.int(1, x.ndim - 1)])
    # W is read whole; the sum into gW (|x| - |W| additions) and gW itself
    # (|W| elements) do not grow with the batch
    return Spec(_backward(F.prelu), [B(x), W], affine=('flops', 'mwrite'))


@case('SwishGrad')
def _swish_grad(d, n):
    x = d.x(n)
    beta = d.u(*x.shape[1:1 + d.int(1, x.ndim - 1)])
    # the sum into g_beta (|x| - |beta| additions) and g_beta itself
    # (|beta| elements) do not grow with the batch
    return Spec(_backward(F.swish), [B(x), beta], affine=('flops', 'mwrite'))
