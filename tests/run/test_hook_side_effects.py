"""The hook never changes what the user's code computes: model state,
random streams and outputs are bit-identical with and without it."""

import threading
import warnings
import weakref

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook

# Chainer's own function, taken before any hook is active.
_REAL_CHECK = chainer.is_arrays_compatible


def _maybe_hooked(hooked):
    if hooked:
        return ComputationalCostHook()
    return chainer.FunctionHook()  # a no-op hook: same code path otherwise


def _run(fn, hooked):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', UserWarning)
        with _maybe_hooked(hooked):
            return fn()


def test_training_batch_normalization_updates_running_stats_once():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    states = []
    for hooked in (False, True):
        bn = L.BatchNormalization(6)
        with chainer.using_config('train', True):
            y = _run(lambda: bn(x), hooked)
        states.append((bn.avg_mean.copy(), bn.avg_var.copy(),
                       y.array.copy()))
    (m0, v0, y0), (m1, v1, y1) = states
    # one update with decay 0.9 from zeros: 0.1 * column means 9, ..., 14
    # (two updates would give 0.19 * the means)
    np.testing.assert_allclose(m1, 0.1 * np.arange(9, 15), rtol=1e-6)
    np.testing.assert_array_equal(m0, m1)
    np.testing.assert_array_equal(v0, v1)
    np.testing.assert_array_equal(y0, y1)


def test_dropout_masks_and_the_random_stream_are_unchanged():
    x = np.ones((3, 50), np.float32)
    results = []
    for hooked in (False, True):
        np.random.seed(7)
        with chainer.using_config('train', True):
            y = _run(lambda: F.dropout(x, 0.5), hooked)
        results.append((y.array.copy(), np.random.rand()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1] == results[1][1]


@pytest.mark.slow
def test_vgg16_output_is_bit_identical():
    model = L.VGG16Layers(pretrained_model=None)
    x = np.random.RandomState(0).rand(1, 3, 224, 224).astype(np.float32)
    outputs = []
    for hooked in (False, True):
        with chainer.no_backprop_mode(), chainer.using_config('train', False):
            outputs.append(_run(lambda: model(x)['prob'].array, hooked))
    np.testing.assert_array_equal(outputs[0], outputs[1])


def test_parameters_and_gradients_are_unchanged_by_a_training_step():
    results = []
    for hooked in (False, True):
        np.random.seed(3)
        model = L.Classifier(L.Linear(4, 3))
        x = np.random.rand(5, 4).astype(np.float32)
        t = np.array([0, 1, 2, 1, 0], np.int32)
        loss = _run(lambda: model(x, t), hooked)
        loss.backward()
        results.append((loss.array.copy(), model.predictor.W.array.copy(),
                        model.predictor.W.grad.copy()))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


def _layers(cch):
    return [r for name, r in cch.layer_report.items() if name != 'total']


# The hook reads a call's outputs through a stand-in for
# chainer.is_arrays_compatible while it is active (see
# computational_cost_hook._spy): Chainer's own function comes back at exit,
# and what the stand-in saw never decides a figure unless it is the call's.

def test_is_arrays_compatible_is_chainers_own_after_the_block():
    real = chainer.is_arrays_compatible
    with ComputationalCostHook():
        F.relu(np.ones((2, 3), np.float32))
    assert chainer.is_arrays_compatible is real
    with pytest.raises(RuntimeError):
        with ComputationalCostHook():
            raise RuntimeError('boom')
    assert chainer.is_arrays_compatible is real


def test_nested_hooks_restore_is_arrays_compatible_once_both_exit():
    real = chainer.is_arrays_compatible
    x = np.ones((2, 3), np.float32)
    with ComputationalCostHook() as outer:
        with ComputationalCostHook() as inner:
            F.relu(x)
        assert chainer.is_arrays_compatible is not real  # outer still on
        F.relu(x)
    assert chainer.is_arrays_compatible is real
    # both hooks see the output shape, whichever read it first
    assert [r['output_shapes'] for r in _layers(inner)] == \
        [[(2, 3)]]
    assert [r['output_shapes'] for r in _layers(outer)] == \
        [[(2, 3)], [(2, 3)]]


def test_a_thread_without_a_hook_keeps_no_output_alive():
    # a hook active in thread A (making no calls) must not hold on to
    # the outputs of a call thread B makes without one
    entered, done = threading.Event(), threading.Event()

    def hooked():
        with ComputationalCostHook():
            entered.set()
            done.wait()
    a = threading.Thread(target=hooked)
    a.start()
    entered.wait()
    alive = []

    def unhooked():
        y = F.relu(np.ones((100, 100), np.float32))
        ref = weakref.ref(y.array)
        del y
        alive.append(ref() is not None)
    try:
        b = threading.Thread(target=unhooked)
        b.start()
        b.join()
    finally:
        done.set()
        a.join()
    assert alive == [False]


def test_a_replaced_is_arrays_compatible_is_left_alone():
    real = chainer.is_arrays_compatible
    seen = []

    def mine(arrays):
        seen.append(len(arrays))
        return real(arrays)

    chainer.is_arrays_compatible = mine
    try:
        with ComputationalCostHook() as cch:
            F.relu(np.ones((2, 3), np.float32))
        assert chainer.is_arrays_compatible is mine
    finally:
        chainer.is_arrays_compatible = real
    assert seen  # the user's function ran, the hook did not replace it
    # outputs then come from apply's frame: the same figures
    row, = _layers(cch)
    assert row['output_shapes'] == [(2, 3)]
    assert row['mwrite'] == 24  # 6 elements of 4 bytes


def test_the_stand_in_answers_what_chainers_check_answers():
    # It answers NumPy-only tuples itself and hands anything else to
    # Chainer's function: each answer below is Chainer's.
    x = np.ones((2, 3), np.float32)

    class Sub(np.ndarray):
        pass

    cases = [
        ((x, x), True),
        ((), True),
        ((x.view(Sub),), True),  # Chainer takes NumPy subclasses too
        ((x, None), True),  # missing arrays are skipped
        ((x, 1), False),
        ([x, x], True),  # not a tuple: Chainer's function
        ([x, 'a'], False),
    ]
    with ComputationalCostHook():
        assert chainer.is_arrays_compatible is not _REAL_CHECK
        got = [chainer.is_arrays_compatible(arrays) for arrays, _ in cases]
        # an iterator is not consumed before Chainer's function reads it
        got_iter = chainer.is_arrays_compatible(iter([x, 1]))
    assert got == [want for _, want in cases]
    assert got_iter is False
    assert [_REAL_CHECK(arrays) for arrays, _ in cases] == got


def test_a_check_made_inside_forward_does_not_pass_for_the_outputs():
    class CheckInside(chainer.FunctionNode):
        def forward(self, inputs):
            x, = inputs
            # another call of the check, from another frame, just before
            # apply's own: apply's must win
            chainer.is_arrays_compatible((np.ones((7, 7), np.float32),))
            return x[:1] * 2,

    got = []

    def calc(func, in_data, **kwargs):
        got.append(kwargs['out_shapes'])
        return 0, 0, 0, {}

    with ComputationalCostHook() as cch:
        cch.add_custom_cost_calculator(CheckInside, calc)
        CheckInside().apply((np.ones((3, 4), np.float32),))
    row, = _layers(cch)
    assert row['output_shapes'] == [(1, 4)]
    assert got == [((1, 4),)]


def test_a_hook_called_by_another_hook_does_not_take_its_locals_as_outputs():
    # a user's FunctionHook that forwards each call to the cost hook (a
    # hook multiplexer) and has a local named 'outputs' of its own: the
    # cost hook is not called from apply's frame, so the call's outputs
    # are unknown, never that local's
    class Forwarding(chainer.FunctionHook):
        name = 'Forwarding'

        def __init__(self, inner):
            self.inner = inner

        def forward_preprocess(self, function, in_data):
            self.inner.forward_preprocess(function, in_data)

        def forward_postprocess(self, function, in_data):
            outputs = (np.zeros((7, 7), np.float32),)  # its own buffer
            self.inner.forward_postprocess(function, in_data)
            return outputs

    inner = ComputationalCostHook()
    with inner:
        hooks = chainer.get_function_hooks()
        saved = hooks.pop(inner.name)  # the forwarder calls it instead
        try:
            with Forwarding(inner):
                F.relu(np.ones((2, 3), np.float32))
        finally:
            hooks[inner.name] = saved
    row, = _layers(inner)
    assert row['output_shapes'] == []
    # ReLU on 2*3 = 6 elements: 6 FLOPs, 6*4 = 24 bytes read and written
    assert (row['flops'], row['mread'], row['mwrite']) == (6, 24, 24)


def test_outputs_are_right_while_another_thread_runs_functions():
    import sys
    import threading
    stop = threading.Event()

    def other():
        # no hook in this thread: its checks go through the stand-in
        big = np.ones((5, 5, 5), np.float32)
        while not stop.is_set():
            chainer.is_arrays_compatible((big,))

    thread = threading.Thread(target=other)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    thread.start()
    try:
        with ComputationalCostHook() as cch:
            for _ in range(300):
                F.relu(np.ones((2, 3), np.float32))
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    shapes = {tuple(r['output_shapes'][0]) for r in _layers(cch)}
    assert shapes == {(2, 3)}
