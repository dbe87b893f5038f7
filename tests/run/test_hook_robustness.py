"""The hook never breaks a run, and what it keeps stays small and correct:
None arrays, warnings as errors, unprintable errors, absurd figures,
copies, key collisions, subclasses, deep stacks, large reports."""

import contextlib
import gc
import io
import json
import re
import warnings
import weakref

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import ReportWarning
from chainer_computational_cost.report import rendering
from chainer_computational_cost.report import cost_report as report_module
from chainer.functions.activation.relu import ReLU


class Echo(chainer.FunctionNode):
    """y = x (first input); the others may be None."""

    def forward(self, inputs):
        return inputs[0].copy(),


class OldEcho(chainer.Function):
    def forward(self, inputs):
        return inputs[0].copy(),


def calc_echo(func, in_data, **kwargs):
    x = in_data[0]
    return (x.size, x.size, x.size, {})


def _x(*shape):
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


# The user's run never fails because of the hook

def test_lstm_backward_with_none_grads_runs_and_records():
    x = _x(3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ReportWarning)
        with ComputationalCostHook() as cch:
            F.sum(L.LSTM(4, 5)(x)).backward()
    types = [r['type'] for r in list(cch.layer_report.values())[:-1]]
    types += [r['type'] for r in cch.ignored_layers.values()]
    assert 'LSTMGrad' in types


def test_old_style_function_called_with_none():
    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(OldEcho, calc_echo)
    with hook:
        y = OldEcho()(_x(2, 3), None)
    np.testing.assert_array_equal(y.array, _x(2, 3))
    r = hook.layer_report['OldEcho-1']
    assert r['input_shapes'] == [(2, 3), None]
    assert r['output_shapes'] == [(2, 3)]
    # 6 elements of 4 bytes
    assert (r['flops'], r['mread'], r['mwrite']) == (6, 24, 24)


def test_warnings_as_errors_never_interrupt_a_function():
    def broken(func, in_data, **kwargs):
        raise ZeroDivisionError('boom')

    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(Echo, broken)
    ran = []
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        with pytest.raises(ReportWarning, match='ZeroDivisionError: boom'):
            with hook:
                Echo().apply((_x(2),))
                ran.append('after the call')
    # the block ran to its end; the warning came at its exit
    assert ran == ['after the call']
    assert list(hook.ignored_layers) == ['Echo-1']


def test_unsupported_warning_is_given_once_per_type_at_exit():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        with ComputationalCostHook():
            Echo().apply((_x(2),))
            Echo().apply((_x(2),))
            assert caught == []  # nothing while the block runs
    assert len(caught) == 1
    assert caught[0].category is ReportWarning
    assert issubclass(ReportWarning, UserWarning)
    assert 'test_hook_robustness.Echo` is not yet supported' in str(
        caught[0].message)


def test_a_users_exception_is_not_replaced_by_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        with pytest.raises(KeyError, match='mine'):
            with ComputationalCostHook():
                Echo().apply((_x(2),))
                raise KeyError('mine')


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError('no text')


def test_an_unprintable_exception_is_reported_not_raised():
    def calc(func, in_data, **kwargs):
        raise Unprintable()

    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(Echo, calc)
    with pytest.warns(ReportWarning, match='unprintable Unprintable'):
        with hook:
            Echo().apply((_x(2),))
    assert hook.ignored_layers['Echo-1']['error'] == (
        'Unprintable: <unprintable Unprintable object>')


@pytest.mark.parametrize('result', [
    (10 ** 400, 0, 0, {}), (0, 2 ** 63, 0, {}), (0, 0, -1, {}),
    (float('inf'), 0, 0, {}), (0, float('nan'), 0, {}),
    # elements below 2**63 whose bytes are not
    (0, 2 ** 62, 0, {}),
])
def test_absurd_figures_are_calculator_errors(result):
    def calc(func, in_data, **kwargs):
        return result

    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(Echo, calc)
    with pytest.warns(ReportWarning, match='failed'):
        with hook:
            Echo().apply((_x(2),))
            F.relu(_x(2))
    assert list(hook.ignored_layers) == ['Echo-1']
    # no report raises
    assert hook.summary_report['total']['flops'] == 2
    assert hook.layer_report['total']['n_layers'] == 1
    hook.show_report(io.StringIO())


# Correct copies, no key collisions

def test_custom_params_are_copied_both_ways():
    shared = {'sizes': [1, 2]}

    def calc(func, in_data, **kwargs):
        return (1, 1, 1, shared)

    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(Echo, calc)
    with hook:
        Echo().apply((_x(2),))
    shared['sizes'].append(3)
    got = hook.layer_report['Echo-1']['params']
    assert got == {'sizes': [1, 2]}
    got['sizes'].append(4)
    assert hook.layer_report['Echo-1']['params'] == {'sizes': [1, 2]}


def test_every_way_of_reading_a_report_gives_copies():
    with ComputationalCostHook() as cch:
        F.relu(_x(2))
    for entry in cch.layer_report.values():
        entry['flops'] = -1
    for name, entry in cch.layer_report.items():
        if name != 'total':
            entry['input_shapes'].append(None)
    dict(cch.layer_report)['ReLU-1']['flops'] = -2
    cch.layer_report.copy()['ReLU-1']['flops'] = -3
    cch.layer_report.get('ReLU-1')['flops'] = -4
    cch.summary_report['ReLU']['flops'] = -5
    cch.link_report['total']['flops'] = -6
    r = cch.layer_report['ReLU-1']
    assert (r['flops'], r['input_shapes']) == (2, [(2,)])
    assert cch.summary_report['ReLU']['flops'] == 2
    assert json.loads(json.dumps(cch.layer_report))['ReLU-1']['flops'] == 2


def _named(name):
    return type(name, (chainer.FunctionNode,), {
        'forward': lambda self, inputs: (inputs[0] + 1,)})


def test_a_type_named_total_does_not_hide_the_total_row():
    Total = _named('total')
    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(Total, calc_echo)
    with hook:
        Total().apply((_x(3),))
        F.relu(_x(2))
    summary = hook.summary_report
    assert list(summary) == ['total (type)', 'ReLU', 'total']
    assert summary['total (type)']['type'] == 'total'
    # the total sums everything: 3 + 2 FLOPs
    assert summary['total']['flops'] == 5
    assert summary['total']['n_layers'] == 2
    layers = hook.layer_report
    assert list(layers) == ['total-1', 'ReLU-1', 'total']
    assert layers['total']['flops'] == 5


@pytest.mark.parametrize('name', ['name', 'type', 'flops'])
def test_types_named_like_fields_are_plain_types(name):
    Odd = _named(name)
    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(Odd, calc_echo)
    with hook:
        Odd().apply((_x(3),))
    entry = hook.summary_report[name]
    assert (entry['type'], entry['name'], entry['flops']) == (name, name, 3)


def test_total_row_is_the_same_in_every_report():
    with ComputationalCostHook() as cch:
        F.relu(_x(2))
        F.relu(_x(3))
    assert cch.layer_report['total'] == cch.summary_report['total']
    assert list(cch.layer_report['total']) == [
        'name', 'type', 'n_layers', 'flops', 'mread', 'mwrite', 'mrw',
        'flops%', 'mread%', 'mwrite%', 'mrw%']


def test_total_rows_are_the_same_with_links_and_phases():
    model = chainer.Sequential(L.Linear(3, 2), F.relu)
    with ComputationalCostHook() as cch:
        F.sum(model(_x(2, 3))).backward()
    totals = [cch.layer_report['total'], cch.summary_report['total'],
              cch.summary_report_by_phase()['total'],
              cch.phase_report['total'], cch.link_report['total']]
    for total in totals[1:]:
        assert list(total.items()) == list(totals[0].items())
    # Linear 3 -> 2: 6 weights and 2 biases
    assert list(totals[0]) == [
        'name', 'type', 'n_layers', 'flops', 'mread', 'mwrite', 'mrw',
        'n_params', 'flops%', 'mread%', 'mwrite%', 'mrw%']
    assert totals[0]['n_params'] == 8
    assert dict(cch.total_report) == {
        k: v for k, v in totals[0].items() if not k.endswith('%')}
    # shown beside the links, the total has the root's link columns
    out = io.StringIO()
    cch.show_link_report(out, unit=None, columns=['name', 'n_params',
                                                  'n_calls'])
    assert out.getvalue().splitlines()[-1] == 'total,8,1'


def test_total_rows_are_the_same_without_links():
    with ComputationalCostHook() as cch:
        F.relu(_x(2))
    layer_total = cch.layer_report['total']
    assert cch.phase_report['total'] == layer_total
    assert cch.link_report['total'] == layer_total
    assert 'n_params' not in layer_total
    out = io.StringIO()
    cch.show_link_report(out, unit=None, columns=['name', 'n_params',
                                                  'n_calls', 'flops'])
    # ReLU of 2: 2 FLOPs, at the root, which no link called
    assert out.getvalue().splitlines()[1:] == ['/,0,0,2', 'total,0,0,2']


class MyReLU(ReLU):
    pass


def test_a_subclass_is_costed_by_its_base_class_calculator():
    with ComputationalCostHook() as cch:
        MyReLU().apply((_x(2, 3),))
    r = cch.layer_report['MyReLU-1']
    assert r['type'] == 'MyReLU'
    # ReLU's formula: |x| = 6 FLOPs, 24 bytes each way
    assert (r['flops'], r['mread'], r['mwrite']) == (6, 24, 24)


def test_a_subclass_finds_a_custom_calculator_of_its_base():
    class Sub(Echo):
        pass

    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(Echo, lambda f, d, **kw: (7, 1, 1, {}))
    with hook:
        Sub().apply((_x(2),))
    assert hook.layer_report['Sub-1']['flops'] == 7


def test_the_hook_keeps_no_user_class_alive():
    def make():
        class Local(chainer.FunctionNode):
            def forward(self, inputs):
                return inputs[0] * 2,
        return Local

    Local = make()
    ref = weakref.ref(Local)
    hook = ComputationalCostHook()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with hook:
            Local().apply((_x(2),))
            MyReLU().apply((_x(2),))
    del Local
    gc.collect()
    assert ref() is None
    assert list(hook.ignored_layers) == ['Local-1']


@pytest.mark.parametrize('func_type', [int, object, L.Linear])
def test_custom_calculator_needs_a_function_class(func_type):
    with pytest.raises(TypeError, match='FunctionNode or Function subclass'):
        ComputationalCostHook().add_custom_cost_calculator(
            func_type, calc_echo)


# Scale

def test_reports_are_built_once_per_change(monkeypatch):
    built = []
    original = report_module.layer_report

    def counting(*args, **kwargs):
        built.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(report_module, 'layer_report', counting)
    with ComputationalCostHook() as cch:
        for _ in range(5):
            F.relu(_x(2))
    for i in range(1, 6):
        assert cch.layer_report['ReLU-{}'.format(i)]['flops'] == 2
    assert len(built) == 1
    with cch:
        F.relu(_x(2))
    assert list(cch.layer_report)[-2] == 'ReLU-6'
    assert len(built) == 2


def _recurse(depth, fn):
    if depth == 0:
        return fn()
    return _recurse(depth - 1, fn)


def _loop(n):
    for _ in range(n):
        F.relu(_x(2))


@pytest.mark.parametrize('depth', [5, 200])
def test_stack_memory_does_not_grow_with_calls(depth):
    with ComputationalCostHook() as cch:
        nodes = []
        for n in (3, 100):
            _recurse(depth, lambda: _loop(n))
            nodes.append(len(cch._nodes))
    # the same stacks: no new node for 100 more calls
    assert nodes[0] == nodes[1]
    tb = cch.layer_report['ReLU-50']['traceback']
    # depth frames of _recurse at its recursive line (Python prints 3 and
    # counts the rest), then the one that calls fn
    assert tb.count('in _recurse') == 4
    assert 'Previous line repeated {} more times'.format(depth - 3) in tb


def _first(x):
    return F.relu(x)


def _second(x):
    return F.relu(x)


def test_stacks_at_the_same_offsets_in_other_functions_stay_apart():
    # _first and _second have the same bytecode, so they call relu at the
    # same offset, from the same line of the loop: the stacks differ only
    # by the functions' code objects
    assert _first.__code__.co_code == _second.__code__.co_code
    with ComputationalCostHook() as cch:
        for _ in range(2):
            for f in (_first, _second, _first):
                f(_x(2))
    names = [re.findall(r'in (_first|_second)\n', r['traceback'])
             for r in list(cch.layer_report.values())[:-1]]
    assert names == [['_first'], ['_second'], ['_first']] * 2


@contextlib.contextmanager
def _wrapped(hook):
    with hook:
        yield hook


def test_a_wrapped_hook_shares_stacks_too():
    with _wrapped(ComputationalCostHook()) as cch:
        nodes = []
        for n in (3, 100):
            _loop(n)
            nodes.append(len(cch._nodes))
    assert nodes[0] == nodes[1]
    assert 'in _loop' in cch.layer_report['ReLU-103']['traceback']
    assert 'test_a_wrapped_hook_shares' in cch.layer_report['ReLU-1'][
        'traceback']


# Rendering

def test_markdown_cells_are_escaped():
    rows = [{'name': 'a|b', 'traceback': 'line 1\nline 2', 'flops': 1}]
    text = rendering.render(rows, ['name', 'traceback', 'flops'], 'md',
                            None)
    assert text.splitlines() == [
        '|Layer name|Traceback|FLOPs|', '|:----|:----|:----|',
        '|a\\|b|line 1<br>line 2|1|']


def test_the_api_accepts_the_raw_unit():
    with ComputationalCostHook() as cch:
        F.relu(_x(2, 3))
    out = io.StringIO()
    cch.show_report(out, unit='raw')
    assert out.getvalue().splitlines()[1] == 'ReLU-1,6,24,24,48'


# Found by tests/run/test_hook_fuzz.py: empty arrays gave negative FLOPs

def _empty_batch_backward(fn):
    x = chainer.Variable(np.zeros((0, 3), np.float32))
    w = chainer.Variable(np.ones(3, np.float32))
    F.sum(fn(x, w)).backward()


@pytest.mark.parametrize('fn, grad', [(F.prelu, 'PReLUFunctionGrad'),
                                      (F.swish, 'SwishGrad')])
def test_an_empty_batch_costs_nothing_in_backward(fn, grad):
    with ComputationalCostHook(strict=True) as cch:
        _empty_batch_backward(fn)
    # no element: no product, and no sum into |W| or |beta| (it was
    # |x| - |W| = -3)
    assert cch.layer_report['{}-1'.format(grad)]['flops'] == 0


def test_a_dot_product_of_nothing_costs_nothing():
    with ComputationalCostHook(fma_1flop=False, strict=True) as cch:
        F.simplified_dropconnect(np.zeros((2, 0), np.float32),
                                 np.zeros((1, 0), np.float32), None, 0.5)
    # W and its mask are empty and y's 2 outputs sum no product (it was
    # 2 * (2*0 - 1) = -2)
    assert cch.layer_report['SimplifiedDropconnect-1']['flops'] == 0
