"""ComputationalCostHook: recording, custom calculators, fault tolerance,
isolation and the promise never to change the user's run."""

import gc
import io
import threading
import warnings
import weakref

import chainer
import chainer.functions as F
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import ReportWarning
from chainer_computational_cost.cost_calculators import calculators

from helpers import OldDouble


class Twice(chainer.FunctionNode):
    """y = 2x; counts how often forward runs."""

    n_forward = 0

    def forward(self, inputs):
        Twice.n_forward += 1
        x, = inputs
        return x * 2,


class OldTwice(chainer.Function):
    """The same as an old-style Function."""

    def forward(self, inputs):
        x, = inputs
        return x * 2,


def twice(x):
    return Twice().apply((x,))[0]


def calc_twice(func, in_data, **kwargs):
    x, = in_data
    return (x.size, x.size, x.size, {'factor': 2})


def _quiet_hook(**kwargs):
    return ComputationalCostHook(**kwargs)


def test_records_relu_in_bytes_with_names_counting_from_one():
    x = np.zeros((2, 3), np.float32)
    with ComputationalCostHook() as cch:
        F.relu(x)
        F.relu(x)
    report = cch.layer_report
    assert list(report) == ['ReLU-1', 'ReLU-2', 'total']
    r = report['ReLU-1']
    # 6 elements: 6 FLOPs, 6*4 = 24 bytes read and written
    assert (r['flops'], r['mread'], r['mwrite'], r['mrw']) == (6, 24, 24, 48)
    assert r['input_shapes'] == [(2, 3)]
    assert r['output_shapes'] == [(2, 3)]
    assert r['params'] == {}
    assert 'test_hook.py' in r['traceback']
    assert report['total']['flops'] == 12
    assert cch.total_report == {'name': 'total', 'type': 'total',
                                'n_layers': 2, 'flops': 12, 'mread': 48,
                                'mwrite': 48, 'mrw': 96}
    assert cch.summary_report['ReLU']['n_layers'] == 2


@pytest.mark.parametrize('dtype, itemsize', [
    (np.float16, 2), (np.float64, 8), (np.int32, 4), (np.int8, 1)])
def test_bytes_follow_the_itemsize(dtype, itemsize):
    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(Twice, calc_twice)
    with hook:
        twice(np.zeros((5,), dtype))
    # 5 elements
    assert hook.layer_report['Twice-1']['mread'] == 5 * itemsize


def test_mixed_dtypes_use_the_first_input():
    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(
        Twice2, lambda f, in_data, **kw: (0, 3, 1, {}))
    with hook:
        Twice2().apply((np.zeros(3, np.float16), np.zeros(3, np.float64)))
    # 3 elements read, 1 written, float16 = 2 bytes each
    r = hook.layer_report['Twice2-1']
    assert (r['mread'], r['mwrite']) == (6, 2)


class Twice2(chainer.FunctionNode):
    def forward(self, inputs):
        return inputs[0] * 2,


def test_forward_runs_once_per_apply():
    Twice.n_forward = 0
    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(Twice, calc_twice)
    x = np.ones((4,), np.float32)
    with hook:
        y = twice(x)
        twice(y)
    assert Twice.n_forward == 2
    assert hook.layer_report['Twice-2']['output_shapes'] == [(4,)]
    np.testing.assert_array_equal(y.array, np.full(4, 2, np.float32))


def test_node_is_left_unchanged():
    node = Twice()
    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(Twice, calc_twice)
    with hook:
        node.apply((np.ones(2, np.float32),))
    assert 'forward' not in vars(node)


def test_no_array_referenced_after_the_block():
    x = np.ones((3, 4), np.float32)
    with ComputationalCostHook() as cch:
        y = F.relu(x)
    refs = [weakref.ref(x), weakref.ref(y.array)]
    del x, y
    gc.collect()
    assert all(r() is None for r in refs)
    assert cch.layer_report['ReLU-1']['flops'] == 12


def test_unsupported_function_is_ignored_with_warning():
    with pytest.warns(UserWarning, match=r'`test_hook\.Twice` is not yet '
                      r'supported by ComputationalCostHook, ignored'):
        with ComputationalCostHook() as cch:
            twice(np.ones(3, np.float32))
    ignored = cch.ignored_layers
    assert list(ignored) == ['Twice-1']
    assert ignored['Twice-1']['type'] == 'Twice'
    assert ignored['Twice-1']['input_shapes'] == [(3,)]
    assert 'test_hook.py' in ignored['Twice-1']['traceback']
    assert list(cch.layer_report) == ['total']


def test_custom_calculator_is_used_and_belongs_to_its_hook():
    a, b = ComputationalCostHook(), ComputationalCostHook()
    a.add_custom_cost_calculator(Twice, calc_twice)
    x = np.ones((2, 2), np.float32)
    with a:
        twice(x)
    with pytest.warns(UserWarning, match='not yet supported'):
        with b:
            twice(x)
    # 4 elements
    assert a.layer_report['Twice-1']['flops'] == 4
    assert a.layer_report['Twice-1']['params'] == {'factor': 2}
    assert 'Twice-1' in b.ignored_layers
    assert Twice not in calculators


def test_custom_calculator_overrides_builtin_with_warning():
    hook = ComputationalCostHook()
    with pytest.warns(UserWarning, match='overriding the built-in'):
        hook.add_custom_cost_calculator(
            F.activation.relu.ReLU, lambda f, x, **kw: (7, 0, 0, {}))
    with pytest.warns(UserWarning, match='replacing the custom'):
        hook.add_custom_cost_calculator(
            F.activation.relu.ReLU, lambda f, x, **kw: (9, 0, 0, {}))
    with hook:
        F.relu(np.ones(3, np.float32))
    assert hook.layer_report['ReLU-1']['flops'] == 9


def test_calculators_can_change_between_calls_of_one_type():
    x = np.ones(3, np.float32)
    relu = F.activation.relu.ReLU
    hook = ComputationalCostHook()
    with hook:
        F.relu(x)
        with pytest.warns(UserWarning, match='overriding the built-in'):
            hook.add_custom_cost_calculator(
                relu, lambda f, x, **kw: (7, 0, 0, {}))
        F.relu(x)
    # built-in: 3 comparisons; then the custom one
    assert [r['flops'] for r in list(hook.layer_report.values())[:-1]] \
        == [3, 7]

    # the registry is read again when a hook is entered again
    other = ComputationalCostHook()
    builtin = calculators[relu]
    try:
        with other:
            F.relu(x)
        calculators[relu] = lambda f, x, **kw: (5, 0, 0, {})
        with other:
            F.relu(x)
    finally:
        calculators[relu] = builtin
    assert [r['flops'] for r in list(other.layer_report.values())[:-1]] \
        == [3, 5]


def test_readme_custom_calculator_example():
    def custom_calculator(func, in_data, **kwargs):
        x, y = in_data
        return (x.size, x.size + y.size, x.size, {})

    x = chainer.Variable(np.ones((2, 3), np.float32))
    with ComputationalCostHook(fma_1flop=True) as cch:
        with pytest.warns(UserWarning, match='overriding the built-in'):
            cch.add_custom_cost_calculator(F.math.basic_math.Add,
                                           custom_calculator)
        x + x
    # 6 elements: 6 FLOPs, (6+6)*4 = 48 bytes read
    assert cch.layer_report['Add-1']['flops'] == 6
    assert cch.layer_report['Add-1']['mread'] == 48


@pytest.mark.parametrize('func_type, calc, message', [
    ('Add', calc_twice, 'func_type must be'),
    (Twice, lambda f, x: (0, 0, 0, {}), 'signature'),
    (Twice, lambda f, x, y, **kw: (0, 0, 0, {}), 'signature'),
    (Twice, None, 'signature'),
])
def test_add_custom_cost_calculator_rejects_bad_input(func_type, calc,
                                                      message):
    with pytest.raises(TypeError, match=message):
        ComputationalCostHook().add_custom_cost_calculator(func_type, calc)


def test_old_style_function_is_reported_under_its_own_name():
    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(OldTwice, calc_twice)
    with hook:
        OldTwice()(np.ones(5, np.float32))
    # 5 elements
    assert hook.layer_report['OldTwice-1']['flops'] == 5
    assert hook.layer_report['OldTwice-1']['type'] == 'OldTwice'


def test_numpy_integers_are_accepted_as_int():
    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(
        Twice, lambda f, x, **kw: (np.int64(3), np.int32(2), 1, {}))
    with hook:
        twice(np.ones(3, np.float32))
    r = hook.layer_report['Twice-1']
    assert (r['flops'], r['mread'], r['mwrite']) == (3, 8, 4)
    assert type(r['flops']) is int


@pytest.mark.parametrize('result, error, message', [
    ((1, 2, 3), TypeError, 'must return a 4-tuple'),
    ((1.5, 2, 3, {}), TypeError, 'flops=1.5 of type float'),
    ((1, -2, 3, {}), ValueError, 'negative mread'),
    ((1, 2, 3, []), TypeError, 'params of type list'),
])
def test_bad_results(result, error, message):
    def calc(func, in_data, **kwargs):
        return result

    lenient = ComputationalCostHook()
    lenient.add_custom_cost_calculator(Twice, calc)
    x = np.ones(2, np.float32)
    with pytest.warns(UserWarning, match='failed, layer ignored'):
        with lenient:
            y = twice(x)
    np.testing.assert_array_equal(y.array, [2, 2])
    assert message in lenient.ignored_layers['Twice-1']['error']

    strict = ComputationalCostHook(strict=True)
    strict.add_custom_cost_calculator(Twice, calc)
    with pytest.raises(error, match=message) as excinfo:
        with strict:
            twice(x)
    assert 'calc' in str(excinfo.value) and 'Twice' in str(excinfo.value)


def test_calculator_exception_never_reaches_the_forward_pass():
    def broken(func, in_data, **kwargs):
        raise ZeroDivisionError('boom')

    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(Twice, broken)
    x = np.ones(2, np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        with hook:
            twice(x)
            twice(x)
            F.relu(x)
    messages = [str(w.message) for w in caught]
    # one warning per failing function type, naming the error
    assert len(messages) == 1
    assert 'ZeroDivisionError: boom' in messages[0]
    assert list(hook.ignored_layers) == ['Twice-1', 'Twice-2']
    assert list(hook.layer_report) == ['ReLU-1', 'total']


def test_calls_numbered_in_order_across_costed_and_ignored():
    def fails_on_size_3(func, in_data, **kwargs):
        x, = in_data
        if x.size == 3:
            raise ValueError('size 3')
        return calc_twice(func, in_data)

    hook = ComputationalCostHook()
    hook.add_custom_cost_calculator(Twice, fails_on_size_3)
    with pytest.warns(UserWarning, match='size 3'):
        with hook:
            twice(np.ones(2, np.float32))
            twice(np.ones(3, np.float32))
            twice(np.ones(4, np.float32))
    # the second call is ignored but keeps its rank among Twice calls
    assert list(hook.ignored_layers) == ['Twice-2']
    assert hook.ignored_layers['Twice-2']['input_shapes'] == [(3,)]
    report = hook.layer_report
    assert list(report) == ['Twice-1', 'Twice-3', 'total']
    # FLOPs are |x|: 2 and 4
    assert (report['Twice-1']['flops'], report['Twice-3']['flops']) == (2, 4)
    assert report['Twice-3']['output_shapes'] == [(4,)]


def test_nested_hooks_both_record_everything():
    x = np.ones(3, np.float32)
    with ComputationalCostHook() as outer:
        F.relu(x)
        with ComputationalCostHook(fma_1flop=False) as inner:
            F.relu(x)
    assert list(outer.layer_report) == ['ReLU-1', 'ReLU-2', 'total']
    assert list(inner.layer_report) == ['ReLU-1', 'total']


def test_threads_see_only_their_own_calls():
    results = {}
    barrier = threading.Barrier(2)

    def work(n):
        x = np.ones(2, np.float32)
        with ComputationalCostHook() as cch:
            barrier.wait()
            for _ in range(n):
                F.relu(x)
            barrier.wait()
        results[n] = cch.total_report['n_layers']

    threads = [threading.Thread(target=work, args=(n,)) for n in (3, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {3: 3, 5: 5}


def test_properties_return_copies():
    with ComputationalCostHook() as cch:
        F.relu(np.ones(2, np.float32))
    cch.layer_report['ReLU-1']['flops'] = 99
    cch.layer_report['ReLU-1']['params']['x'] = 1
    cch.summary_report['ReLU']['flops'] = 99
    cch.total_report['flops'] = 99
    assert cch.layer_report['ReLU-1']['flops'] == 2
    assert cch.layer_report['ReLU-1']['params'] == {}
    assert cch.summary_report['ReLU']['flops'] == 2
    assert cch.total_report['flops'] == 2


def test_show_report_writes_to_the_stream():
    with ComputationalCostHook() as cch:
        F.relu(np.ones((2, 3), np.float32))
    out = io.StringIO()
    cch.show_report(out, mode='csv', unit=None)
    assert out.getvalue() == (
        'Layer name,FLOPs,MemRead B,MemWrite B,MemR+W B\n'
        'ReLU-1,6,24,24,48\n'
        'total,6,24,24,48\n')
    out = io.StringIO()
    cch.show_summary_report(ost=out, mode='md', unit='K', n_digits=2)
    assert out.getvalue().splitlines()[2] == '|ReLU|1|0.01|0.02|0.02|0.05|'


def test_show_report_default_stream_is_current_stdout(capsys):
    with ComputationalCostHook() as cch:
        F.relu(np.ones(2, np.float32))
    cch.show_summary_report(unit=None)
    assert capsys.readouterr().out.startswith('Layer type,# Layers')


def test_show_before_anything_ran_warns_and_prints_nothing():
    out = io.StringIO()
    cch = ComputationalCostHook()
    with pytest.warns(UserWarning, match='nothing has been recorded'):
        cch.show_report(out)
    assert out.getvalue() == ''


@pytest.mark.parametrize('kwargs, error', [
    ({'mode': 'xls'}, ValueError), ({'unit': 'X'}, ValueError),
    ({'columns': ['nope']}, ValueError), ({'n_digits': -2}, ValueError),
    ({'ost': 'stdout.txt'}, TypeError)])
def test_show_bad_arguments_raise_before_writing(kwargs, error):
    with ComputationalCostHook() as cch:
        F.relu(np.ones(2, np.float32))
    kwargs.setdefault('ost', io.StringIO())
    with pytest.raises(error):
        cch.show_report(**kwargs)
    if not isinstance(kwargs['ost'], str):
        assert kwargs['ost'].getvalue() == ''


@pytest.mark.parametrize('kwargs, message', [
    ({'fma_1flop': 1}, 'fma_1flop must be True or False, got 1 (int)'),
    ({'strict': 'yes'}, "strict must be True or False, got 'yes' (str)"),
    ({'measure_time': None},
     'measure_time must be True or False, got None (NoneType)'),
    ({'memory': 0}, 'memory must be True or False, got 0 (int)'),
])
def test_constructor_rejects_non_bool(kwargs, message):
    with pytest.raises(TypeError) as e:
        ComputationalCostHook(**kwargs)
    assert str(e.value) == message


def test_constructor_takes_numpy_s_bools_as_bools():
    # as NumPy's ints are ints: each flag is a plain bool on the hook
    hook = ComputationalCostHook(
        fma_1flop=np.bool_(False), strict=np.bool_(True),
        measure_time=np.bool_(True), memory=np.array(True))
    flags = (hook.fma_1flop, hook.strict, hook.measure_time, hook.memory)
    assert flags == (False, True, True, True)
    assert all(type(f) is bool for f in flags)
    x = np.ones((2, 3), np.float32)
    with hook:
        chainer.functions.relu(x)
    # memory and measure_time took effect: the ReLU's output, 2*3
    # float32 = 24 bytes, is live after its call, and the call is timed
    layer = hook.layer_report['ReLU-1']
    assert layer['live'] == 24
    assert layer['time'] >= 0


def test_flop_convention_of_another_type_is_a_type_error():
    with pytest.raises(TypeError) as e:
        ComputationalCostHook(flop_convention=2)
    assert str(e.value) == "flop_convention must be None or 'torch', got 2"


class Failing(chainer.FunctionNode):
    def forward(self, inputs):
        raise RuntimeError('forward failed')


def test_a_failing_forward_propagates_and_leaves_nothing_behind():
    node = Failing()
    hook = ComputationalCostHook()
    with pytest.raises(RuntimeError, match='forward failed'):
        with hook:
            node.apply((np.ones(2, np.float32),))
    assert 'forward' not in vars(node)
    assert list(hook.layer_report) == ['total']


def test_an_old_style_backward_not_counted_is_told_once_a_type():
    x = chainer.Variable(np.ones((2, 3), np.float32))
    with pytest.warns(ReportWarning) as caught:
        with ComputationalCostHook() as cch:
            # (the forward of a type without a calculator warns too)
            y = OldDouble()(OldDouble()(x))
            F.sum(y).backward()
    told = [str(w.message) for w in caught
            if 'old-style' in str(w.message)]
    assert told == [
        'the backward of old-style chainer.Function `helpers.OldDouble` '
        'runs no Chainer call: its FLOPs and memory traffic are not '
        'counted']
    # the backward phase holds Sum's gradient only (BroadcastTo)
    assert [r['type'] for r in cch.layer_report.values()
            if r.get('phase') == 'backward'] == ['BroadcastTo']
    # a forward pass alone is not told
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        with ComputationalCostHook():
            OldDouble()(x)
    assert not [w for w in caught if 'old-style' in str(w.message)]
