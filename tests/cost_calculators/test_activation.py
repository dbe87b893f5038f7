import chainer
from chainer.functions.activation.clipped_relu import ClippedReLUGrad3
from chainer.functions.activation.relu import ReLUGradCudnn
import chainer.functions as F
import numpy as np

from chainer_computational_cost.cost_calculators import calculators
from chainer_computational_cost.cost_calculators import function_type
from chainer_computational_cost.cost_calculators import validate_cost
from helpers import calls_of
from helpers import cost
from helpers import typed
from property_cases import CHAINER_MAJOR


def _x(*shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 3


def test_relu():
    x = np.zeros((2, 3, 4), np.float32)
    # |x| = 2*3*4 = 24 comparisons, 24 read, 24 written
    assert cost(F.relu, x) == (24, 24, 24, {})
    assert cost(F.relu, x, fma=False) == (24, 24, 24, {})


def test_clipped_relu():
    x = _x(2, 3)
    # |x| = 6: 2*6 = 12 comparisons, 6 + 1 (cap) read, 6 written
    assert cost(F.clipped_relu, x, 10.0) == (12, 7, 6, {'z': 10.0})
    # relu6 creates a ClippedReLU with z = 6
    assert cost(F.relu6, x) == (12, 7, 6, {'z': 6.0})


def test_clipped_relu_batch1():
    x = _x(1, 4)
    # |x| = 4: 2*4 = 8 FLOPs, 4 + 1 = 5 read, 4 written
    assert cost(F.clipped_relu, x) == (8, 5, 4, {'z': 20.0})


def test_crelu_axis1():
    x = _x(2, 3, 4)
    # |x| = 24: 3*24 = 72 FLOPs, 24 read, 2*24 = 48 written
    assert cost(F.crelu, x) == (72, 24, 48, {'axis': 1})
    assert F.crelu(x).size == 48


def test_crelu_axis2_batch1():
    x = _x(1, 2, 3)
    # |x| = 6: 3*6 = 18 FLOPs, 6 read, 2*6 = 12 written
    assert cost(F.crelu, x, axis=2) == (18, 6, 12, {'axis': 2})
    assert F.crelu(x, axis=2).shape == (1, 2, 6)


def test_elu():
    x = _x(2, 3)
    # |x| = 6: 3*6 = 18 FLOPs (compare, expm1, multiply), 6 + 1 read
    assert cost(F.elu, x) == (18, 7, 6, {'alpha': 1.0})
    x1 = _x(1, 4)
    # |x| = 4: 3*4 = 12 FLOPs, 4 + 1 = 5 read, 4 written
    assert cost(F.elu, x1, alpha=0.5) == (12, 5, 4, {'alpha': 0.5})


def test_hard_sigmoid():
    x = _x(2, 3, 4)
    # |x| = 24: (1 FMA + 2 comparisons)*24 = 72; no FMA (2 + 2)*24 = 96
    assert cost(F.hard_sigmoid, x) == (72, 24, 24, {})
    assert cost(F.hard_sigmoid, x, fma=False) == (96, 24, 24, {})
    assert F.hard_sigmoid(x).size == 24


def test_leaky_relu():
    x = _x(2, 5)
    # |x| = 10: 2*10 = 20 FLOPs, 10 + 1 (slope) = 11 read, 10 written
    assert cost(F.leaky_relu, x) == (20, 11, 10, {})
    x1 = _x(1, 3)
    # |x| = 3: 2*3 = 6, 3 + 1 = 4, 3
    assert cost(F.leaky_relu, x1, slope=0.1) == (6, 4, 3, {})


def test_log_softmax():
    x = _x(2, 3)
    # axis 1: c = 3, rows = 2: exp 6 + sums (3-1)*2 = 4 + logs 2
    # + subtractions 6 = 18
    assert cost(F.log_softmax, x) == (18, 6, 6, {'axis': 1})
    # axis 0: c = 2, rows = 3: 6 + (2-1)*3 + 3 + 6 = 18
    assert cost(F.log_softmax, x, axis=0) == (18, 6, 6, {'axis': 0})
    x1 = _x(1, 2, 4)
    # axis 2: c = 4, rows = 2: 8 + 3*2 + 2 + 8 = 24
    assert cost(F.log_softmax, x1, axis=2) == (24, 8, 8, {'axis': 2})


def test_log_softmax_is_log_sum_exp_plus_a_subtraction():
    x = _x(4, 5)
    # |x| = 20, c = 5, 4 rows: LogSumExp's exp 20 + sums (5-1)*4 = 16
    # + logs 4 = 40 = 2*20, then 20 subtractions: 60 = 3*20
    assert cost(F.log_softmax, x, axis=1) == (60, 20, 20, {'axis': 1})


def test_prelu():
    x = _x(2, 3, 4)
    W = np.ones((3,), np.float32)
    # |x| = 24: 2*24 = 48 FLOPs, 24 + 3 = 27 read, 24 written
    assert cost(F.prelu, x, W) == (48, 27, 24, {'w_shape': (3,)})
    assert F.prelu(x, W).size == 24


def test_prelu_2d_weight_batch1():
    x = _x(1, 3, 4, 5)
    W = np.ones((3, 4), np.float32)
    # |x| = 60: 2*60 = 120 FLOPs, 60 + 12 = 72 read, 60 written
    assert cost(F.prelu, x, W) == (120, 72, 60, {'w_shape': (3, 4)})


def test_rrelu_train_and_test():
    x = _x(2, 3)
    # |x| = 6: 2*6 = 12 FLOPs, 6 + 6 (slopes r) = 12 read, 6 written
    expected = (12, 12, 6, {'l': 0.25, 'u': 0.5})
    assert cost(F.rrelu, x, l=0.25, u=0.5) == expected
    with chainer.using_config('train', False):
        assert cost(F.rrelu, x, l=0.25, u=0.5) == expected


def test_rrelu_given_r_batch1():
    x = _x(1, 4)
    r = np.full((1, 4), 0.2, np.float32)
    # |x| = 4: 2*4 = 8, 4 + 4 = 8, 4
    assert cost(F.rrelu, x, r=r) == (8, 8, 4, {'l': 0.125, 'u': 1. / 3})


def test_sigmoid():
    x = _x(2, 3, 4)
    # |x| = 24: 4*24 = 96 FLOPs, 24 read, 24 written
    assert cost(F.sigmoid, x) == (96, 24, 24, {})
    assert cost(F.sigmoid, x, fma=False) == (96, 24, 24, {})
    assert F.sigmoid(x).size == 24


def test_softmax_reference():
    x = np.zeros((1, 1000), np.float32)
    # 2*1000 + (1000-1)*1000/1000 = 2999
    assert cost(F.softmax, x) == (2999, 1000, 1000, {'axis': 1})


def test_softmax_axes():
    x = _x(2, 3, 4)
    # axis 1: c = 3, rows = 24/3 = 8: 2*24 + 2*8 = 64
    assert cost(F.softmax, x) == (64, 24, 24, {'axis': 1})
    # axis -1: c = 4, rows = 6: 2*24 + 3*6 = 66
    assert cost(F.softmax, x, axis=-1) == (66, 24, 24, {'axis': -1})
    assert F.softmax(x, axis=-1).size == 24


def test_softplus():
    x = _x(2, 3)
    # |x| = 6: 4*6 = 24 FLOPs, 6 + 1 (beta) = 7 read, 6 written
    assert cost(F.softplus, x) == (24, 7, 6, {'beta': 1.0})
    x1 = _x(1, 2)
    # |x| = 2: 4*2 = 8, 2 + 1 = 3, 2
    assert cost(F.softplus, x1, beta=2.0) == (8, 3, 2, {'beta': 2.0})


def test_swish():
    x = _x(2, 3, 4)
    beta = np.ones((3,), np.float32)
    # |x| = 24: (1 + 4 + 1)*24 = 144 FLOPs, 24 + 3 = 27 read, 24 written
    assert cost(F.swish, x, beta) == (144, 27, 24, {})
    beta2 = np.ones((3, 4), np.float32)
    # 144 FLOPs, 24 + 12 = 36 read
    assert cost(F.swish, x, beta2) == (144, 36, 24, {})
    assert F.swish(x, beta2).size == 24


def test_swish_batch1():
    x = _x(1, 5)
    beta = np.ones((5,), np.float32)
    # |x| = 5: 6*5 = 30, 5 + 5 = 10, 5
    assert cost(F.swish, x, beta) == (30, 10, 5, {})


def test_tanh():
    x = _x(2, 3)
    # |x| = 6: one tanh per element
    assert cost(F.tanh, x) == (6, 6, 6, {})
    assert cost(F.tanh, _x(1, 1)) == (1, 1, 1, {})


# 0.1.2 compatibility: the types 0.1.2 covered report exactly its params
# keys, with its value types.

def test_params_of_0_1_2_types():
    x = _x(2, 3, 4)
    W = np.ones((3, 4), np.float32)
    assert typed(cost(F.relu, x).params) == {}
    assert typed(cost(F.sigmoid, x).params) == {}
    # no slope key (0.1.2 had none)
    assert typed(cost(F.leaky_relu, x, slope=0.1).params) == {}
    # W.shape as a tuple of Python ints
    assert typed(cost(F.prelu, x, W).params) == {
        'w_shape': (tuple, ((int, 3), (int, 4)))}
    # axis a Python int, even when given as a NumPy integer
    assert typed(cost(F.softmax, x, axis=np.int64(2)).params) == {
        'axis': (int, 2)}
    assert typed(cost(F.softmax, x).params) == {'axis': (int, 1)}


def test_params_value_types_of_newer_types():
    x = _x(2, 3)
    assert typed(cost(F.log_softmax, x, axis=np.int32(1)).params) == {
        'axis': (int, 1)}
    assert typed(cost(F.crelu, x, axis=1).params) == {'axis': (int, 1)}
    assert typed(cost(F.clipped_relu, x, 5.0).params) == {
        'z': (float, 5.0)}
    assert typed(cost(F.elu, x, alpha=np.float32(0.5)).params) == {
        'alpha': (float, 0.5)}
    assert typed(cost(F.softplus, x, beta=2).params) == {
        'beta': (float, 2.0)}
    assert typed(cost(F.rrelu, x, l=0.25, u=0.5).params) == {
        'l': (float, 0.25), 'u': (float, 0.5)}


# Gradient nodes, applied by a backward pass from y.grad = 1.

def _backward_of(f):
    """A function running ``f`` on Variables of its array arguments, then
    backward from a gradient of ones."""
    def run(*arrays):
        y = f(*[chainer.Variable(a) for a in arrays])
        y.grad = np.ones_like(y.array)
        y.backward()
    return run


def _all_costs(fn, kind, *args):
    """The validated Costs of every call of class ``kind`` that ``fn``
    makes, in call order."""
    out = []
    for node, in_data, out_shapes in calls_of(fn, *args):
        cls = function_type(node)
        if cls.__name__ == kind:
            calc = calculators[cls]
            out.append(validate_cost(
                calc(node, in_data, fma_1flop=True, out_shapes=out_shapes),
                calc.__name__, kind))
    return out


def test_relu_grad2():
    x = _x(2, 3)
    # |gy| = 6 comparisons; read gy 6 + y 6 = 12; write 6
    assert cost(_backward_of(F.relu), x, kind='ReLUGrad2') == (
        6, 12, 6, {})


def test_relu_grad_cudnn_direct():
    x = _x(2, 3)
    y = np.maximum(x, 0)
    gy = np.ones_like(y)
    # built by hand: cuDNN is not available here. Chainer 6 keeps x too.
    node = (ReLUGradCudnn(x, y) if CHAINER_MAJOR == 6
            else ReLUGradCudnn(y))
    calc = calculators[ReLUGradCudnn]
    # as ReLUGrad2: 6 comparisons, gy 6 + y 6 = 12 read, 6 written
    assert validate_cost(calc(node, (gy,)), 'c', 'ReLUGradCudnn') == (
        6, 12, 6, {})


def test_clipped_relu_grads():
    x = _x(2, 3)
    # 2*6 = 12 comparisons; gy 6 + x 6 + cap 1 = 13 read; 6 written
    assert cost(_backward_of(lambda x: F.clipped_relu(x, 10.0)), x,
                kind='ClippedReLUGrad2') == (12, 13, 6, {'z': 10.0})

    def grad3(x):
        # Chainer applies it only after a cuDNN forward; its CPU forward
        # runs, so apply it by hand
        y = np.clip(x, 0, 10.0)
        return ClippedReLUGrad3(x, y, 10.0).apply((np.ones_like(x),))
    # the same: 12, 13, 6 (y is not read)
    assert cost(grad3, x) == (12, 13, 6, {'z': 10.0})


def test_elu_grad():
    x = _x(2, 3)
    # alpha >= 0: the condition is y itself: 2*6 = 12 FLOPs (compare,
    # add); read y 6 + alpha 1 = 7; write 6
    assert cost(_backward_of(F.elu), x, kind='ELUGrad') == (
        12, 7, 6, {'alpha': 1.0})
    # alpha < 0: the condition is x: 6 + 6 + 1 = 13 read
    assert cost(_backward_of(lambda x: F.elu(x, -0.5)), x,
                kind='ELUGrad') == (12, 13, 6, {'alpha': -0.5})


def test_hard_sigmoid_grad():
    x = _x(2, 3)
    # 3*6 = 18 (two comparisons, a product); gy 6 + x 6 = 12; 6
    assert cost(_backward_of(F.hard_sigmoid), x,
                kind='HardSigmoidGrad') == (18, 12, 6, {})


def test_leaky_relu_grad():
    x = _x(2, 5)
    # 2*10 = 20; gy 10 + cond 10 + slope 1 = 21; 10
    assert cost(_backward_of(F.leaky_relu), x, kind='_LeakyReLUGrad') == (
        20, 21, 10, {'slope': 0.2})
    # a negative slope keeps x as the condition: the same figures
    assert cost(_backward_of(lambda x: F.leaky_relu(x, -0.1)), x,
                kind='_LeakyReLUGrad') == (20, 21, 10, {'slope': -0.1})


def test_rrelu_grad():
    x = _x(2, 3)
    # 2*6 = 12; gy 6 + y 6 + r 6 = 18; 6
    assert cost(_backward_of(F.rrelu), x, kind='_RReLUGrad') == (
        12, 18, 6, {})


def test_sigmoid_and_tanh_grads():
    x = _x(2, 3, 4)
    # 3*24 = 72 (subtract, two products); y 24 + gy 24 = 48; 24
    assert cost(_backward_of(F.sigmoid), x, kind='SigmoidGrad') == (
        72, 48, 24, {})
    x = _x(2, 3)
    # FMA: (1 - y*y fused + product) 2*6 = 12; no FMA 3*6 = 18; 12 read
    assert cost(_backward_of(F.tanh), x, kind='TanhGrad') == (
        12, 12, 6, {})
    assert cost(_backward_of(F.tanh), x, kind='TanhGrad', fma=False) == (
        18, 12, 6, {})


def test_softplus_grad():
    x = _x(2, 3)
    # 6*6 = 36; x 6 + gy 6 + beta 1 = 13; 6
    assert cost(_backward_of(lambda x: F.softplus(x, 2.0)), x,
                kind='SoftplusGrad') == (36, 13, 6, {'beta': 2.0})


def test_softmax_grad():
    x = _x(2, 3)
    # axis 1: c = 3, 2 rows. FMA: 2*6 + (3-1)*2 = 16; no FMA:
    # 3*6 + 4 = 22; read y 6 + gy 6 = 12; write 6
    assert cost(_backward_of(F.softmax), x, kind='_SoftmaxGrad') == (
        16, 12, 6, {'axis': 1})
    assert cost(_backward_of(F.softmax), x, kind='_SoftmaxGrad',
                fma=False) == (22, 12, 6, {'axis': 1})


def test_log_softmax_grad():
    x = _x(4, 5)
    # c = 5, 4 rows. FMA: 2*20 + (5-1)*4 = 56; no FMA: 3*20 + 16 = 76;
    # read 20 + 20 = 40; write 20
    assert cost(_backward_of(F.log_softmax), x, kind='LogSoftmaxGrad') == (
        56, 40, 20, {'axis': 1})
    assert cost(_backward_of(F.log_softmax), x, kind='LogSoftmaxGrad',
                fma=False) == (76, 40, 20, {'axis': 1})


def test_prelu_grad():
    x = _x(2, 3, 4)
    W = np.full((3,), 0.5, np.float32)
    # |x| = 24, |W| = 3: 3*24 + (24 - 3) = 93; read x 24 + W 3 + gy 24
    # = 51 (the condition is x); write gx 24 + gW 3 = 27
    assert cost(_backward_of(F.prelu), x, W, kind='PReLUFunctionGrad') == (
        93, 51, 27, {'w_shape': (3,)})


def test_prelu_grad_double_backprop():
    x = _x(2, 3, 4)
    W = np.full((3,), 0.5, np.float32)

    def run(x, W):
        x, W = chainer.Variable(x), chainer.Variable(W)
        gx, gW = chainer.grad([F.sum(F.prelu(x, W))], [x, W],
                              enable_double_backprop=True)
        # both grads feed the loss: PReLUFunctionGrad's backward needs
        # the gradients of gx and gW
        (F.sum(gx * gx) + F.sum(gW * gW)).backward()
    first, again = _all_costs(run, 'PReLUFunctionGrad', x, W)[:2]
    assert first == (93, 51, 27, {'w_shape': (3,)})
    # inputs (gy, W, ggx), the condition the original x: 3*24 = 72, no
    # sum; read 24 + 3 + 24 + x 24 = 75; write 24 + 24 = 48
    assert again == (72, 75, 48, {'w_shape': (3,)})


def test_swish_grad():
    x = _x(2, 3)
    beta = np.ones((3,), np.float32)
    # |x| = 6, |beta| = 3. FMA: (1 + 4 + 1 + 1 + 1 + 1 + 1 + 3)*6 = 78,
    # + (6 - 3) = 81; no FMA: 14*6 + 3 = 87
    # read x 6 + beta 3 + gy 6 = 15; write gx 6 + gbeta 3 = 9
    assert cost(_backward_of(F.swish), x, beta, kind='SwishGrad') == (
        81, 15, 9, {})
    assert cost(_backward_of(F.swish), x, beta, kind='SwishGrad',
                fma=False) == (87, 15, 9, {})
