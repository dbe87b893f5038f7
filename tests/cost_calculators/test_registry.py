"""The calculator registry: signatures, registration, discovery and the
shared shape helpers."""

import json

import chainer
import chainer.functions as F
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import cost_calculators as cc
from chainer_computational_cost.cost_calculators import calculators
from chainer_computational_cost.cost_calculators import check_signature
from chainer_computational_cost.cost_calculators import register


def test_check_signature():
    def good(func, in_data, **kwargs):
        pass

    def no_kwargs(func, in_data):
        pass

    def four(func, in_data, extra, **kwargs):
        pass

    def varargs(func, *in_data, **kwargs):
        pass

    assert check_signature(good)
    assert check_signature(lambda f, x, **kw: None)
    assert not check_signature(no_kwargs)
    assert not check_signature(four)
    assert not check_signature(varargs)
    assert not check_signature(None)
    assert not check_signature('calc')


class Dummy(chainer.FunctionNode):
    pass


def test_register_by_class_and_dotted_name():
    def calc(func, in_data, **kwargs):
        return (0, 0, 0, {})

    try:
        assert register(Dummy)(calc) is calc
        assert calculators[Dummy] is calc
        del calculators[Dummy]
        register('test_registry.Dummy')(calc)
        assert calculators[Dummy] is calc
    finally:
        calculators.pop(Dummy, None)


def test_register_tells_when_it_replaces_a_calculator(monkeypatch):
    relu = chainer.functions.activation.relu.ReLU
    monkeypatch.setitem(calculators, relu, calculators[relu])

    def mine(func, in_data, **kwargs):
        return (0, 0, 0, {})
    with pytest.warns(UserWarning, match=r'^register: test_register_tells_'
                      r'when_it_replaces_a_calculator.<locals>.mine replaces '
                      r'calc_elementwise_activation as the calculator of '
                      r'ReLU for every hook of this process$'):
        register(relu)(mine)
    assert calculators[relu] is mine
    # its time is still predicted as an activation's
    assert cc.time_family('ReLU') == 'activation'


class Twice(chainer.FunctionNode):

    def forward(self, inputs):
        return inputs[0] * 2,


def test_a_calculator_registered_by_the_user_has_its_params_copied():
    shared = {'calls': 0}

    def counting(func, in_data, **kwargs):
        shared['calls'] += 1
        return (0, 0, 0, shared)
    try:
        register(Twice)(counting)
        with ComputationalCostHook(strict=True) as cch:
            Twice().apply((np.ones(2, np.float32),))
            Twice().apply((np.ones(2, np.float32),))
        shared['calls'] = 99
        assert [r['params']['calls'] for name, r in
                cch.layer_report.items() if name != 'total'] == [1, 2]
    finally:
        calculators.pop(Twice, None)


def test_register_skips_missing_names_and_tells_the_user():
    # (discovery's own names, absent from a Chainer version, are skipped
    # before the built-in calculators are known: silently)
    before = dict(calculators)
    for name in ('chainer.functions.nowhere.Missing', 'NoDots'):
        with pytest.warns(UserWarning, match="^register: '{}' does not "
                          r'import \(a module path and a class name, '
                          r'dotted\): nothing registered for it$'.format(
                              name)):
            register(name)(lambda f, x, **kw: (0, 0, 0, {}))
    assert calculators == before


def test_register_written_without_its_class_is_refused():
    def calc(func, in_data, **kwargs):
        return (0, 0, 0, {})
    with pytest.raises(TypeError, match=r'^register takes the function '
                       r'class to cost, as in @register\(MyFunction\), got '
                       r'<function '):
        register(calc)


def test_register_warns_on_bad_signature():
    with pytest.warns(UserWarning, match='signature'):
        register(Dummy)(lambda f, x: None)
    assert Dummy not in calculators


def test_register_rejects_bad_targets():
    with pytest.raises(TypeError, match='class or a dotted name'):
        register(42)(lambda f, x, **kw: None)


def test_discovery_uses_the_first_annotation():
    relu = chainer.functions.activation.relu.ReLU
    calc = calculators[relu]
    assert calc.__name__.startswith('calc_')
    assert calc.__module__.endswith('cost_calculators.activation')
    target = cc._first_param_annotation(calc)
    assert relu is target or relu in target


@pytest.mark.chainer7_only
def test_max_pooling_on_chainer7():
    from chainer.functions.pooling.max_pooling_nd import MaxPoolingND
    assert MaxPoolingND in calculators


def test_function_type_unwraps_old_style_functions():
    class Old(chainer.Function):
        def forward(self, inputs):
            return inputs[0],

    old = Old()
    adapter = chainer.function.FunctionAdapter(old)
    assert cc.function_type(adapter) is Old
    assert cc.function_object(adapter) is old
    node = F.activation.relu.ReLU()
    assert cc.function_object(node) is node


def test_shape_helpers():
    assert cc.prod(()) == 1
    assert cc.prod((2, 3, 4)) == 24
    assert cc.as_tuple(3, 2) == (3, 3)
    assert cc.as_tuple((1, 2), 2) == (1, 2)
    assert cc.broadcast_shape((2, 1, 4), (3, 1), ()) == (2, 3, 4)
    assert cc.reduced_shape((2, 3, 4), 1) == (2, 4)
    assert cc.reduced_shape((2, 3, 4), (0, -1), keepdims=True) == (1, 3, 1)
    assert cc.reduced_shape((2, 3), None) == ()
    # dot products of length 5: 5 FMAs, or 5 mul + 4 add
    assert cc.dot_flops(10, 5, True) == 50
    assert cc.dot_flops(10, 5, False) == 90
    assert cc.dot_flops(10, 0, False) == 0


@pytest.mark.parametrize('size, k, s, p, cover_all, d, expected', [
    (224, 3, 1, 1, False, 1, 224),  # (224+2-3)//1+1
    (112, 3, 2, 0, True, 1, 56),  # (112-3+2-1)//2+1 = 55+1
    (112, 3, 2, 0, False, 1, 55),  # (112-3)//2+1
    (10, 3, 1, 0, False, 2, 6),  # dilated k = 5: (10-5)//1+1
])
def test_conv_out_size(size, k, s, p, cover_all, d, expected):
    assert cc.conv_out_size(size, k, s, p, cover_all, d) == expected


def test_deconv_out_size():
    # 2*(4-1) + 3 - 2*1 = 7
    assert cc.deconv_out_size(4, 3, 2, 1) == 7
    # cover_all: 2*(4-1) + 3 - 2 + 1 - 2*1 = 6
    assert cc.deconv_out_size(4, 3, 2, 1, cover_all=True) == 6


def test_cost_is_the_plain_tuple():
    cost = cc.validate_cost((1, 2, 3, {}), 'c', 'T')
    assert cost == (1, 2, 3, {})
    flops, mread, mwrite, params = cost
    assert cost.mwrite == 3


def test_compact():
    assert cc.compact((3, 3)) == 3
    assert cc.compact((3, 1)) == (3, 1)
    assert cc.compact([2]) == 2


def test_every_calculator_documents_its_class():
    for cls, calc in calculators.items():
        doc = calc.__doc__ or ''
        family = getattr(calc, 'family', None)
        if family is not None:
            # a family's docstring is filled in per class of its table
            assert cls in cc.resolve_table(family), calc.__name__
            doc = cc.fill_doc(doc, {'name': cls.__name__})
        lines = doc.strip().splitlines()
        assert lines and lines[0].strip() == cls.__name__, (
            '{}: its docstring must start with the line {} (DETAILS.md is '
            'made from it)'.format(calc.__name__, cls.__name__))
        assert '| FLOPs' in doc and '| mread' in doc and '| mwrite' in doc, (
            calc.__name__)


class _Base(chainer.FunctionNode):
    pass


class _Child(_Base):
    pass


def test_family_tables_resolve_and_fill_docstrings():
    table = {_Base: {'flops': 2}, 'no.such.Module': {'flops': 9}}
    assert cc.resolve_table(table) == {_Base: {'flops': 2}}
    assert cc.fill_doc('<<name>>\n\n$<<flops>> \\|x\\|$',
                       {'name': 'Exp', 'flops': 2}) == (
        'Exp\n\n$2 \\|x\\|$')
    # a subclass finds its nearest listed base class
    assert cc.lookup(cc.resolve_table(table), _Child) == {'flops': 2}
    assert cc.lookup({}, _Child) is None


def test_a_tuple_annotation_registers_every_class_of_a_family():
    def calc(func, in_data, **kwargs):
        return (0, 0, 0, {})
    try:
        with pytest.warns(UserWarning, match="'no.such.Module' does not"):
            cc.register((_Base, _Child, 'no.such.Module'))(calc)
        assert calculators[_Base] is calc and calculators[_Child] is calc
    finally:
        calculators.pop(_Base, None)
        calculators.pop(_Child, None)


def test_elements_keep_bytes_per_dtype():
    ids = np.zeros((2, 3), np.int64)
    w = np.zeros((10, 6), np.float32)
    # 6 ids of 8 bytes + 36 float32 of 4 bytes = 48 + 144 = 192
    n = cc.size_of(ids) + cc.elements(36, w)
    assert n == 42 and n.nbytes == 192
    assert (n * 2).nbytes == 384
    assert cc.total_size([ids, None, w]).nbytes == 48 + 240
    assert sum([cc.size_of(ids), cc.size_of(ids)]).nbytes == 96
    # a plain count loses the bytes: the hook then guesses the itemsize
    assert type(cc.size_of(ids) + 1) is int
    # a scalar constant is a plain 1
    assert type(cc.size_of(np.float64(2))) is int


def test_elements_hold_python_ints_and_refuse_other_counts():
    w = np.zeros(6, np.float32)
    # a count from NumPy (a shape's product): 6 elements of 4 bytes, both
    # plain ints, as JSON writes them
    n = cc.elements(np.prod(w.shape), w)
    assert (type(int(n)), int(n), type(n.nbytes), n.nbytes) == (
        int, 6, int, 24)
    assert json.dumps([n, n.nbytes]) == '[6, 24]'
    with pytest.raises(TypeError,
                       match=r'^Elements: count must be an integer, '
                       r'got 2\.5$'):
        cc.elements(2.5, w)
    with pytest.raises(ValueError,
                       match=r'^Elements: nbytes must be >= 0, got -24$'):
        cc.Elements(6, -24)


def test_old_module_path_of_the_registry():
    from chainer_computational_cost.cost_calculators import cost_calculators
    assert cost_calculators.calculators is calculators
    assert cost_calculators.register is cc.register
    assert cost_calculators.check_signature is cc.check_signature


def _mentions_out_shapes(calc):
    # 'out_shapes' among the constants: kwargs.get('out_shapes') or
    # kwargs['out_shapes'] in the calculator's own body
    return 'out_shapes' in calc.__code__.co_consts


def test_out_shapes_go_to_the_calculators_that_read_them():
    readers = {c for c in calculators.values() if _mentions_out_shapes(c)}
    # GetItem and the three pooling gradients, and ChainerMN's
    # communication nodes (their outputs are what they receive)
    assert {c.__name__ for c in readers} - {
        'calc_chainermn_communication'} == {
        'calc_get_item', 'calc_average_pooling_2d_grad',
        'calc_average_pooling_nd_grad', 'calc_max_pooling_grad'}
    assert not readers & cc.skips_out_shapes
    assert cc.skips_out_shapes == set(calculators.values()) - readers


def test_custom_calculators_receive_out_shapes():
    from chainer.functions.activation.relu import ReLU
    from chainer_computational_cost import ComputationalCostHook
    from chainer_computational_cost import ReportWarning
    seen = []

    def relu_calc(func, in_data, **kwargs):
        seen.append(kwargs)
        return (0, 0, 0, {})

    with ComputationalCostHook() as cch:
        with pytest.warns(ReportWarning, match='overriding'):
            cch.add_custom_cost_calculator(ReLU, relu_calc)
        F.relu(np.ones((2, 3), np.float32))
    assert seen == [{'fma_1flop': True, 'out_shapes': ((2, 3),)}]


def test_scratch_of_a_type_without_scratch_function_is_zero():
    x = np.zeros((2, 3), np.float32)
    node = F.identity(chainer.Variable(x)).creator
    assert cc.scratch_of(node, (x,)) == 0


def test_scratch_of_checks_what_a_scratch_function_returns(monkeypatch):
    x = np.zeros((2, 3), np.float32)
    node = F.identity(chainer.Variable(x)).creator
    seen = []

    def scratch_identity(func, in_data, **kwargs):
        seen.append(kwargs)
        return result[0]
    monkeypatch.setitem(cc.scratches, type(node),
                        scratch_identity)
    result = [24]
    assert cc.scratch_of(node, (x,), backend='cupy') == 24
    assert seen == [{'out_shapes': None, 'backend': 'cupy'}]
    for bad in (-1, 1.5, True, None):
        result[0] = bad
        with pytest.raises(ValueError, match='scratch function'):
            cc.scratch_of(node, (x,))
