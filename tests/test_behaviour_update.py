"""The update phase as a user meets it: which link an update record lands
in, what is recorded when a parameter is updated by hand, and that the
hook is invisible to Chainer's optimizers (see benchmarks/mutate.py for how
this file is used).

The model: ``Net``, ``l1 = Linear(3, 4)`` (W 12, b 4 elements) and ``l2 =
Linear(4, 2)`` (W 8, b 2).  SGD counts 1 FLOP per element with FMA (``p -=
lr * g``), WeightDecay 1 (``g += rate * p``), the hook's default.
"""

import chainer
import chainer.functions as F
import chainer.links as L
from chainer import optimizer_hooks as H
from chainer import optimizers as Op
from chainer.optimizers.sgd import SGDRule
import numpy as np

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.core.records import R_LIVE
from chainer_computational_cost.core.records import R_SCRATCH
from chainer_computational_cost.core.records import R_STATE
from chainer_computational_cost.core.records import R_TYPE


X = np.ones((2, 3), np.float32)
T = np.zeros(2, np.int32)


class Net(chainer.Chain):
    def __init__(self, direct=False):
        super(Net, self).__init__()
        self.direct = direct
        with self.init_scope():
            self.l1 = L.Linear(3, 4)
            self.l2 = L.Linear(4, 2)

    def forward(self, x):
        if self.direct:  # the children run without their __call__
            return self.l2.forward(F.relu(self.l1.forward(x)))
        return self.l2(F.relu(self.l1(x)))


def _updates(cch):
    """``[(type, link, FLOPs)]`` of the update records, in order."""
    return [(r['type'], r['link'], r['flops'])
            for k, r in cch.layer_report.items()
            if k != 'total' and r['phase'] == 'update']


def _by_link(cch):
    out = {}
    for _, link, flops in _updates(cch):
        out[link] = out.get(link, 0) + flops
    return out


def _grads(model, dtype=np.float32):
    """The gradients of a Classifier's loss, or of the sum of another
    link's outputs."""
    x = X.astype(dtype)
    loss = model(x, T) if isinstance(model, L.Classifier) else F.sum(
        model(x))
    model.cleargrads()
    loss.backward()


def test_a_parameter_updated_by_hand_is_recorded_at_the_root():
    net = Net()
    Op.SGD().setup(net)
    net.cleargrads()
    net.l1.W.grad = np.ones((4, 3), np.float32)
    with ComputationalCostHook(fma_1flop=True) as cch:
        net.l1.W.update()  # no optimizer updating: '/'
        net.l1.b.update()  # no gradient: nothing is updated
    assert _updates(cch) == [('SGDRule', '/', 12)]
    # the same after an optimizer's update in the block
    optimizer = Op.SGD().setup(net)
    with ComputationalCostHook(fma_1flop=True) as cch:
        _grads(net)
        optimizer.update()
        net.l2.b.update()
    assert _updates(cch)[-2:] == [('SGDRule', '/l2', 2), ('SGDRule', '/', 2)]


def _by_hand(rule, param):
    rule.update(param)


def _hook_by_hand(optimizer, hook):
    optimizer.call_hook(hook)


def test_an_update_records_the_line_of_the_users_code_that_made_it():
    net = Net()
    optimizer = Op.SGD().setup(net)
    net.cleargrads()
    net.l1.b.grad = np.ones(4, np.float32)
    net.l1.b.update_rule.add_hook(H.WeightDecay(1e-4))
    with ComputationalCostHook() as cch:
        _by_hand(net.l1.b.update_rule, net.l1.b)
        _hook_by_hand(optimizer, H.Lasso(1e-4))
    last = [r['traceback'].rstrip().splitlines()[-1].strip()
            for k, r in cch.layer_report.items() if k != 'total']
    # the rule and its hook: the call in _by_hand; Lasso on l1's b (the
    # one parameter with a gradient): the call in _hook_by_hand
    assert last == ['rule.update(param)'] * 2 + [
        'optimizer.call_hook(hook)']
    # an optimizer of Chainer's base class (no GradientMethod between), on
    # the 4 parameters (SGD's call_hook gave each a gradient)
    plain = chainer.Optimizer()
    plain.setup(net)
    with ComputationalCostHook() as cch:
        _hook_by_hand(plain, H.WeightDecay(1e-4))
    assert [r['traceback'].rstrip().splitlines()[-1].strip()
            for k, r in cch.layer_report.items() if k != 'total'] == [
        'optimizer.call_hook(hook)'] * 4


def test_a_rules_hook_on_a_float32_master_counts_the_gradient_copy():
    with chainer.using_config('dtype', np.float16):
        net = L.Linear(3, 4)
    optimizer = Op.SGD().setup(net)
    optimizer.use_fp32_update()
    net.W.update_rule.add_hook(H.WeightDecay(1e-4))
    with ComputationalCostHook(memory=True) as cch:
        _grads(net, np.float16)
        optimizer.update()
    scratch = [r[R_SCRATCH] for r in cch.records()
               if r[R_TYPE] == 'WeightDecay']
    # rate * p on W's float32 master (12 elements, 48 B) beside the rule's
    # float32 gradient copy (48 B)
    assert scratch == [96]


def test_a_link_never_initialised_gets_no_update_record():
    class Lazy(chainer.Chain):
        def __init__(self):
            super(Lazy, self).__init__()
            with self.init_scope():
                self.used = L.Linear(3, 2)
                self.unused = L.Linear(None, 2)  # W never initialised

        def forward(self, x):
            return self.used(x)

    model = L.Classifier(Lazy())
    optimizer = Op.SGD().setup(model)
    optimizer.add_hook(H.WeightDecay(1e-4))
    with ComputationalCostHook(fma_1flop=True) as cch:
        optimizer.update(model, X, T)
    # used: W 6 + b 2 = 8 elements, once by WeightDecay, once by SGD; the
    # unused link's b (2, initialised, zero gradient) as well
    assert _by_link(cch) == {'/predictor/used': 16, '/predictor/unused': 4}


def test_records_land_in_the_owner_through_forward_calls():
    # the step calls the Classifier; Net runs its children through their
    # forward(), which the hook never sees called: they are named below
    # the innermost link it saw, '/predictor'
    model = L.Classifier(Net(direct=True))
    optimizer = Op.SGD().setup(model.predictor)
    with ComputationalCostHook(fma_1flop=True) as cch:
        _grads(model)
        optimizer.update()
    # l1: 12 + 4 = 16, l2: 8 + 2 = 10
    assert _by_link(cch) == {'/predictor/l1': 16, '/predictor/l2': 10}
    # the model called as the root: '/l1', '/l2'
    net = Net(direct=True)
    optimizer = Op.SGD().setup(net)
    with ComputationalCostHook(fma_1flop=True) as cch:
        _grads(net)
        optimizer.update()
    assert _by_link(cch) == {'/l1': 16, '/l2': 10}


def test_a_parameter_of_the_target_itself_lands_in_the_target():
    class Scaled(Net):
        def __init__(self):
            super(Scaled, self).__init__()
            with self.init_scope():
                self.s = chainer.Parameter(np.ones((2,), np.float32))

        def forward(self, x):
            return super(Scaled, self).forward(x) * self.s

    model = L.Classifier(Scaled())
    optimizer = Op.SGD().setup(model.predictor)
    with ComputationalCostHook(fma_1flop=True) as cch:
        _grads(model)
        optimizer.update()
    # s: 2 elements in '/predictor' itself
    assert _by_link(cch) == {'/predictor': 2, '/predictor/l1': 16,
                             '/predictor/l2': 10}


def test_deeper_links_the_block_never_called_keep_their_full_path():
    class Outer(chainer.Chain):
        def __init__(self):
            super(Outer, self).__init__()
            with self.init_scope():
                self.enc = Net()

        def forward(self, x):
            return self.enc(x)

    model = L.Classifier(Outer())
    optimizer = Op.SGD().setup(model)
    _grads(model)  # before the block: the hook sees no link called
    with ComputationalCostHook(fma_1flop=True) as cch:
        optimizer.update()
    assert _by_link(cch) == {'/predictor/enc/l1': 16,
                             '/predictor/enc/l2': 10}


def test_a_rules_hook_on_a_float32_master_lands_in_the_owner():
    with chainer.using_config('dtype', np.float16):
        model = L.Classifier(Net())
    optimizer = Op.SGD().setup(model)
    optimizer.use_fp32_update()
    model.predictor.l2.W.update_rule.add_hook(H.WeightDecay(1e-4))
    with ComputationalCostHook(fma_1flop=True) as cch:
        _grads(model, np.float16)
        optimizer.update()
    hooks = [u for u in _updates(cch) if u[0] == 'WeightDecay']
    # on l2's W master copy: 8 elements
    assert hooks == [('WeightDecay', '/predictor/l2', 8)]


def test_optimizer_hooks_called_by_hand_land_in_the_owners():
    model = L.Classifier(Net())
    optimizer = Op.SGD().setup(model.predictor)
    optimizer.add_hook(H.WeightDecay(1e-4))
    _grads(model)
    with ComputationalCostHook(fma_1flop=True) as cch:
        assert optimizer.call_hooks('pre') is None
    # outside optimizer.update(): the paths under the optimizer's target
    assert _by_link(cch) == {'/l1': 16, '/l2': 10}


class SelfHooking(SGDRule):
    """An SGD rule that runs a hook of its own from its update_core,
    through the hook registry its hooks run through."""

    extra = H.WeightDecay(1e-4)
    returned = 'not called'

    def update_core(self, param):
        SelfHooking.returned = self._hookable.call_hook(
            self.extra, (self, param))
        super(SelfHooking, self).update_core(param)


def test_the_hook_leaves_what_chainer_returns_unchanged():
    net = Net()
    optimizer = Op.SGD().setup(net)
    net.l2.W.update_rule = SelfHooking(optimizer.hyperparam)
    with ComputationalCostHook(fma_1flop=True) as cch:
        _grads(net)
        assert optimizer.update() is None
        assert net.l1.W.update() is None
        assert net.l1.W.update_rule.update(net.l1.W) is None
        assert optimizer.call_hook(H.WeightDecay(1e-4)) is None
        # a rule's hooks called by hand, outside any update
        net.l1.b.update_rule.add_hook(H.Lasso(1e-4))
        assert net.l1.b.update_rule._hookable.call_hooks('pre', (
            net.l1.b.update_rule, net.l1.b)) is None
    # what Chainer's _Hookable.call_hook returns
    assert SelfHooking.returned is None
    # the rule's own hook is recorded on l2's W (8), in l2
    assert ('WeightDecay', '/l2', 8) in _updates(cch)


def test_a_hook_that_has_exited_records_nothing_more():
    model = L.Classifier(Net())
    optimizer = Op.SGD().setup(model)
    with ComputationalCostHook(fma_1flop=True) as first:
        optimizer.update(model, X, T)
    before = _by_link(first)
    assert before == {'/predictor/l1': 16, '/predictor/l2': 10}
    with ComputationalCostHook(fma_1flop=True) as second:
        optimizer.update(model, X, T)
    assert _by_link(first) == before
    assert _by_link(second) == before


def test_hooks_may_exit_in_any_order():
    model = L.Classifier(Net())
    optimizer = Op.SGD().setup(model)
    outer = ComputationalCostHook(fma_1flop=True)
    inner = ComputationalCostHook(fma_1flop=True)
    outer.__enter__()
    inner.__enter__()
    outer.__exit__(None, None, None)
    optimizer.update(model, X, T)  # the inner hook alone records it
    inner.__exit__(None, None, None)
    assert 'update' not in outer.phase_report
    assert _by_link(inner) == {'/predictor/l1': 16, '/predictor/l2': 10}


def test_a_method_someone_else_replaced_is_left_to_them():
    real = chainer.GradientMethod.update
    calls = []

    def theirs(self, *args, **kwargs):
        calls.append(1)
        return real(self, *args, **kwargs)

    model = L.Classifier(Net())
    optimizer = Op.SGD().setup(model)
    chainer.GradientMethod.update = theirs
    try:
        with ComputationalCostHook(fma_1flop=True) as cch:
            assert chainer.GradientMethod.update is theirs
            optimizer.update(model, X, T)
        assert chainer.GradientMethod.update is theirs
    finally:
        chainer.GradientMethod.update = real
    assert calls == [1]
    # the rules are still recorded (no optimizer updating: in '/')
    assert sum(_by_link(cch).values()) == 26
    # replaced while the hook is active: theirs stays after the exit
    with ComputationalCostHook():
        chainer.GradientMethod.update = theirs
    try:
        assert chainer.GradientMethod.update is theirs
    finally:
        chainer.GradientMethod.update = real


class Sync(H.WeightDecay):
    """A rule's 'post' hook that also updates another model (as an
    averaging or lookahead scheme does), once."""

    def __init__(self, other_optimizer):
        super(Sync, self).__init__(1e-4)
        self.other_optimizer = other_optimizer

    def __call__(self, rule, param):
        super(Sync, self).__call__(rule, param)
        other, self.other_optimizer = self.other_optimizer, None
        if other is not None:
            other.update()


def test_a_hook_that_updates_another_model_keeps_each_timing():
    other = Net()
    other_optimizer = Op.SGD().setup(other)
    other_optimizer.add_hook(H.WeightDecay(1e-4))  # 'pre'
    other.l1.b.update_rule.add_hook(H.Lasso(1e-4), timing='post')
    _grads(other)
    net = Net()
    optimizer = Op.SGD().setup(net)
    net.l2.b.update_rule.add_hook(Sync(other_optimizer), timing='post')
    with ComputationalCostHook(fma_1flop=True) as cch:
        _grads(net)
        optimizer.update()
    hooks = [(r['type'], r['params']['timing'], r['link'], r['flops'])
             for k, r in cch.layer_report.items()
             if k != 'total' and r['phase'] == 'update'
             and r['type'] in ('WeightDecay', 'Sync')]
    # the other optimizer's 'pre' hook on its 4 parameters (never called
    # in the block: named under its target), then Sync on l2's b (2)
    assert sorted(hooks) == sorted([
        ('WeightDecay', 'pre', '/l1', 12), ('WeightDecay', 'pre', '/l1', 4),
        ('WeightDecay', 'pre', '/l2', 8), ('WeightDecay', 'pre', '/l2', 2),
        ('Sync', 'post', '/l2', 2)])
    # the other model's rule on l1's b is recorded before its 'post' hook
    rows = [(r['type'], r['link'], r['flops'])
            for k, r in cch.layer_report.items()
            if k != 'total' and r['phase'] == 'update']
    i = rows.index(('Lasso', '/l1', 8))  # a sign and a multiply-add
    assert rows[i - 1] == ('SGDRule', '/l1', 4)


def test_a_rule_that_replaces_its_state_holds_it_once():
    # SMORMS3 makes new mem, g and g2 arrays at every update: after the
    # first step the live memory at each update is the steady one, the
    # replaced arrays are not counted beside their replacements
    net = L.Linear(3, 4)
    optimizer = Op.SMORMS3().setup(net)
    with ComputationalCostHook(memory=True) as cch:
        for _ in range(3):
            _grads(net)
            optimizer.update()
    rows = [r for r in cch.records() if r[R_TYPE] == 'SMORMS3Rule']
    # created at the first step: 3 float32 states of W (12 elements) and
    # of b (4): 3 * 12 * 4 = 144 and 3 * 4 * 4 = 48 B; none later
    assert [r[R_STATE] for r in rows] == [144, 48, 0, 0, 0, 0]
    steady = rows[1][R_LIVE]
    assert [r[R_LIVE] for r in rows[2:]] == [steady] * 4
