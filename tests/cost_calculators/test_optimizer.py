"""The update phase's calculators as a user reads them: the scratch memory
of each rule and hook (what memory=True adds to the peak while one
parameter is updated) and the parameters a record shows, worked by hand
from the docstrings of cost_calculators/optimizer.py.

Sizes: SMALL is 64 x 64 elements (float32: 16384 bytes, under NumPy's 256
KiB temporary elision, so every temporary is a new array), BIG 256 x 256
(float32: 262144 bytes = 256 KiB, elided).  The arrays are never read:
a scratch figure is a function of shapes, strides and dtypes.
"""

from chainer import optimizer_hooks as H
from chainer import optimizers as Op
import numpy as np
import pytest

from chainer_computational_cost.cost_calculators import lookup
from chainer_computational_cost.cost_calculators import scratch_of
from chainer_computational_cost.cost_calculators import scratches
from chainer_computational_cost.cost_calculators import update_calculators


SMALL = (64, 64)  # 4096 elements
BIG = (256, 256)  # 65536 elements


def _arrays(shape, dtype=np.float32):
    p = np.zeros(shape, dtype)
    return p, np.zeros(shape, dtype)


def _rule(factory, fp32=False):
    rule = factory().create_update_rule()
    if fp32:
        rule.use_fp32_update()
    return rule


# (optimizer, scratch in units of P = the parameter's bytes: below 256
# KiB, from 256 KiB), float32, NumPy.
RULES = [
    ('SGD', Op.SGD, 1, 1),  # lr * grad
    ('MomentumSGD', Op.MomentumSGD, 1, 1),
    ('NesterovAG', Op.NesterovAG, 1, 1),
    ('CorrectedMomentumSGD', getattr(Op, 'CorrectedMomentumSGD', None), 1,
     1),
    # lr * grad, sqrt(h), + eps: 3 arrays; the last two elided: 2
    ('AdaGrad', Op.AdaGrad, 3, 2),
    ('AdaDelta', Op.AdaDelta, 3, 2),
    ('RMSprop', Op.RMSprop, 3, 2),
    ('RMSpropGraves', Op.RMSpropGraves, 3, 3),
    ('SMORMS3', Op.SMORMS3, 7, 6),
    ('MSVAG', getattr(Op, 'MSVAG', None), 8, 7),
    ('Adam', Op.Adam, 3, 3),  # step, step * m, its scaled copy
    # + a * param, and below 256 KiB the sum: 5, elided 4
    ('AdamW', lambda: Op.Adam(weight_decay_rate=0.01), 5, 4),
]


@pytest.mark.parametrize('name, factory, small, big', RULES)
def test_each_rules_temporaries_in_float32(name, factory, small, big):
    if factory is None:
        pytest.skip('{} is not in this Chainer'.format(name))
    rule = _rule(factory)
    assert scratch_of(rule, _arrays(SMALL)) == small * 16384
    assert scratch_of(rule, _arrays(BIG)) == big * 262144
    # CuPy: one elementwise kernel, no temporary
    assert scratch_of(rule, _arrays(BIG), backend='cupy') == 0


def test_fp32_master_copy_adds_the_gradient_copy_and_the_cast():
    p16 = _arrays(SMALL, np.float16)
    # SGD on the float32 master: the float32 gradient copy 4 * 4096 =
    # 16384, then max(lr * grad on the master 16384, the float16 cast
    # 2 * 4096 = 8192): 32768
    assert scratch_of(_rule(Op.SGD, True), p16) == 32768
    # CuPy: the gradient copy and the cast, 16384 + 8192 = 24576
    assert scratch_of(_rule(Op.SGD, True), p16, backend='cupy') == 24576
    # AdaGrad on the master (16384 B, not elided): 3 * 16384 = 49152,
    # + 16384 = 65536
    assert scratch_of(_rule(Op.AdaGrad, True), p16) == 65536
    # BIG: the master is 4 * 65536 = 262144 B, elided: 2 * 262144 +
    # 262144 = 786432
    assert scratch_of(_rule(Op.AdaGrad, True),
                      _arrays(BIG, np.float16)) == 786432
    # on a float32 parameter use_fp32_update() changes nothing: 16384
    assert scratch_of(_rule(Op.SGD, True), _arrays(SMALL)) == 16384


def test_adam_on_float16_computes_in_float32():
    adam = _rule(Op.Adam)
    adamw = _rule(lambda: Op.Adam(weight_decay_rate=0.01))
    # SMALL float16: float32 arrays of 4 * 4096 = 16384 B, not elided;
    # step, step * m, scaled copy (3) + float32 grad and v copies (2):
    # 5 * 16384 = 81920
    assert scratch_of(adam, _arrays(SMALL, np.float16)) == 81920
    # AdamW: + a * param in float16 (8192) + the sum (16384): 106496
    assert scratch_of(adamw, _arrays(SMALL, np.float16)) == 106496
    # BIG float16 (131072 B) computes on float32 arrays of 262144 B, which
    # NumPy elides although the float16 parameter is under 256 KiB:
    # 5 * 262144 = 1310720, AdamW + 131072 (no sum) = 1441792
    assert scratch_of(adam, _arrays(BIG, np.float16)) == 1310720
    assert scratch_of(adamw, _arrays(BIG, np.float16)) == 1441792
    # with use_fp32_update(): the gradient copy 16384 + on the master
    # 3 * 16384 (Adam) or 5 * 16384 (AdamW): 65536 and 98304
    assert scratch_of(_rule(Op.Adam, True),
                      _arrays(SMALL, np.float16)) == 65536
    assert scratch_of(
        _rule(lambda: Op.Adam(weight_decay_rate=0.01), True),
        _arrays(SMALL, np.float16)) == 98304


# (hook, NumPy, CuPy) scratch on SMALL float32 (P = 16384 B)
HOOKS = [
    ('WeightDecay', lambda: H.WeightDecay(1e-4), 16384, 0),  # rate * p
    ('Lasso', lambda: H.Lasso(1e-4), 2 * 16384, 16384),  # sign, rate *
    # the float64 draw and its float32 cast: (8 + 4) * 4096 = 49152
    ('GradientNoise', lambda: H.GradientNoise(0.01), 49152, 49152),
    ('GradientLARS', lambda: H.GradientLARS(), 16384, 0),  # wd * p
    ('GradientClipping', lambda: H.GradientClipping(1.0), 0, 0),
    ('GradientHardClipping', lambda: H.GradientHardClipping(-1, 1), 0,
     0),
]


@pytest.mark.parametrize('name, factory, numpy_bytes, cupy_bytes', HOOKS)
def test_each_hooks_temporaries(name, factory, numpy_bytes, cupy_bytes):
    hook = factory()
    assert scratch_of(hook, _arrays(SMALL)) == numpy_bytes
    assert scratch_of(hook, _arrays(SMALL), backend='cupy') == cupy_bytes
    # on a rule's float32 master copy the rule's float32 gradient copy
    # (4 * 4096 = 16384) is alive beside the hook's own
    assert scratch_of(hook, _arrays(SMALL), fp32_grad=True) == \
        numpy_bytes + 16384


def test_clipping_copies_a_non_contiguous_gradient_to_ravel_it():
    base = np.zeros((64, 128), np.float32)
    g = base[:, ::2]  # 64 x 64, every other column: 16384 B copied
    p = np.zeros((64, 64), np.float32)
    clip = H.GradientClipping(1.0)
    assert scratch_of(clip, (p, g)) == 16384
    assert scratch_of(clip, (p, g), backend='cupy') == 16384
    # one element needs no copy, whatever its stride; two do (8 B)
    two = np.zeros(4, np.float32)[::2]
    assert scratch_of(clip, (two[:1], two[:1])) == 0
    assert scratch_of(clip, (two, two)) == 8
    # LARS: its own product (16384) is as large as the copy
    assert scratch_of(H.GradientLARS(), (p, g)) == 16384


def _calc(obj, p, g, **kwargs):
    return lookup(update_calculators, type(obj))(obj, (p, g), **kwargs)


def test_a_rules_params_are_its_hyperparameters_in_name_order():
    _, _, _, params = _calc(_rule(lambda: Op.MomentumSGD(lr=0.5)),
                            *_arrays((2, 3)))
    assert list(params.items()) == [('lr', 0.5), ('momentum', 0.9),
                                    ('fp32_update', False)]
    rule = _rule(lambda: Op.RMSprop(eps_inside_sqrt=True))
    _, _, _, params = _calc(rule, *_arrays((2, 3)))
    assert params['eps_inside_sqrt'] is True
    assert type(params['lr']) is float and params['lr'] == 0.01
    # use_fp32_update() shows only where a float32 master copy is made
    rule = _rule(Op.SGD, True)
    assert _calc(rule, *_arrays((2, 3)))[3]['fp32_update'] is False
    assert _calc(rule, *_arrays((2, 3), np.float16))[3][
        'fp32_update'] is True


def test_a_hyperparameter_that_is_no_number_is_shown_as_text():
    rule = _rule(Op.SGD)
    rule.hyperparam.lr = None
    assert _calc(rule, *_arrays((2,)))[3]['lr'] is None
    rule.hyperparam.lr = 'warmup'
    assert _calc(rule, *_arrays((2,)))[3]['lr'] == 'warmup'
    rule.hyperparam.lr = np.float32(0.5)
    assert type(_calc(rule, *_arrays((2,)))[3]['lr']) is float
    rule.hyperparam.lr = [1, 2]
    assert _calc(rule, *_arrays((2,)))[3]['lr'] == '[1, 2]'
    rule.hyperparam.lr = np.bool_(True)
    assert _calc(rule, *_arrays((2,)))[3]['lr'] is True


def test_a_hooks_params_name_its_settings_and_timing():
    hook = H.GradientHardClipping(-0.5, 2)
    assert _calc(hook, *_arrays((2,)), timing='post')[3] == {
        'lower_bound': -0.5, 'upper_bound': 2.0, 'timing': 'post'}
    lars = H.GradientLARS(threshold=0.1, weight_decay=0.2, eps=0.3)
    assert _calc(lars, *_arrays((2,)), timing='pre')[3] == {
        'threshold': 0.1, 'weight_decay': 0.2, 'eps': 0.3,
        'timing': 'pre'}


def test_float16_and_fp32_masters_are_counted_in_their_dtypes():
    # AdaDelta on 6 float16 elements without a master: p, g, 2 states
    # read (4 * 2 * 6 = 48 B), p and 2 states written (3 * 2 * 6 = 36)
    p, g = _arrays((2, 3), np.float16)
    flops, mread, mwrite, _ = _calc(_rule(Op.AdaDelta), p, g,
                                    fma_1flop=True)
    assert (flops, mread.nbytes, mwrite.nbytes) == (60, 48, 36)
    # without fma_1flop, 14 FLOPs per element: 84
    assert _calc(_rule(Op.AdaDelta), p, g)[0] == 84
    # with a float32 master: 4 * 4 * 6 = 96 + the float16 gradient 12 +
    # the master 24 read; 3 * 4 * 6 = 72 + the float32 gradient 24 + the
    # float16 parameter 12 written; 10 + 2 FLOPs per element
    flops, mread, mwrite, _ = _calc(_rule(Op.AdaDelta, True), p, g,
                                    fma_1flop=True)
    assert (flops, mread.nbytes, mwrite.nbytes) == (72, 132, 108)
    # loss scaling on the master: the float32 gradient read and written
    # once more (24 B each), 6 FLOPs
    flops, mread, mwrite, _ = _calc(_rule(Op.AdaDelta, True), p, g,
                                    fma_1flop=True, loss_scaled=True)
    assert (flops, mread.nbytes, mwrite.nbytes) == (78, 156, 132)


def test_lars_and_clipping_count_their_norms_without_fma():
    # 6 elements: each norm a dot of 6 (2 * 6 - 1 = 11 FLOPs without FMA,
    # 6 with); LARS: two norms + 3 per element = 11 + 11 + 18 = 40 (FMA
    # 6 + 6 + 12 = 24)
    p, g = _arrays((2, 3))
    assert _calc(H.GradientLARS(), p, g)[0] == 40
    assert _calc(H.GradientLARS(), p, g, fma_1flop=True)[0] == 24
    # clipping: one norm + 1 per element: 11 + 6 = 17 (FMA 12)
    assert _calc(H.GradientClipping(1.0), p, g)[0] == 17
    assert _calc(H.GradientClipping(1.0), p, g, fma_1flop=True)[0] == 12


def test_every_scratch_figure_documents_the_float32_master_copy():
    # DETAILS.md shows each scratch function's docstring: a rule's says
    # what use_fp32_update() adds, a hook's what it sees on a master copy
    from chainer.optimizers.sgd import SGDRule
    from chainer.optimizers.smorms3 import SMORMS3Rule
    for rule in (SGDRule, SMORMS3Rule):
        assert 'adds, on both backends, the float32 copy of the gradient' \
            in ' '.join(scratches[rule].__doc__.split())
    for hook in (H.WeightDecay, H.GradientHardClipping):
        assert "the rule's float32 copy of the gradient is alive" in \
            ' '.join(scratches[hook].__doc__.split())
