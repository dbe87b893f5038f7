"""Where the cost lives: link paths on records, the link report and its
rendering, on small chains with hand-derived figures."""

import copy
import io
import sys
import threading
import traceback

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import LinkColumns


def _x(*shape):
    return np.ones(shape, np.float32)


class Twice(chainer.Chain):
    """Calls the same Linear(3 -> 4) twice, with a ReLU of its own."""

    def __init__(self):
        super(Twice, self).__init__()
        with self.init_scope():
            self.fc = L.Linear(3, 4)
            self.out = L.Linear(4, 3)

    def forward(self, x):
        h = F.relu(self.fc(x))
        return self.out(h) + self.fc(x)[:, :3]


def _link_of(cch):
    """Each layer's name -> its link."""
    return {name: r['link'] for name, r in cch.layer_report.items()
            if name != 'total'}


def _run(model, x, backward=False):
    with ComputationalCostHook(strict=True) as cch:
        y = model(x)
        if backward:
            F.sum(y).backward()
    return cch


def test_a_link_called_twice_accumulates_both_calls():
    cch = _run(Twice(), _x(2, 3))
    fc = cch.link_report['/fc']
    assert fc['n_calls'] == 2
    # each call: 2*4*3 multiply-adds + 2*4 bias adds = 32 FLOPs
    assert fc['flops'] == 2 * 32
    assert fc['n_layers'] == 2
    # W 4*3 + b 4
    assert fc['n_params'] == 16


def test_functions_belong_to_the_chain_that_calls_them():
    cch = _run(Twice(), _x(2, 3))
    links = [(r['type'], r['link'])
             for name, r in cch.layer_report.items() if name != 'total']
    assert links == [
        ('LinearFunction', '/fc'), ('ReLU', '/'), ('LinearFunction', '/out'),
        ('LinearFunction', '/fc'), ('GetItem', '/'), ('Add', '/')]


def test_every_level_sums_its_children_and_its_own_functions():
    cch = _run(Twice(), _x(2, 3))
    report = cch.link_report
    assert list(report) == ['/', '/fc', '/out', 'total']
    root = report['/']
    # /out: 2*3*4 + 2*3 = 30; ReLU 8; GetItem 0; Add 6
    assert report['/out']['flops'] == 30
    assert root['flops'] == 64 + 30 + 8 + 0 + 6
    for m in ('flops', 'mread', 'mwrite', 'mrw', 'n_layers'):
        assert root[m] == cch.total_report[m] == report['total'][m]
    # fc 16 + out 4*3 + 3 = 31
    assert root['n_params'] == cch.total_report['n_params'] == 31
    assert root['n_calls'] == 1


def test_functions_outside_any_link_go_to_the_root():
    with ComputationalCostHook() as cch:
        F.relu(_x(2))
        L.Linear(2, 2)(_x(1, 2))
    report = cch.link_report
    assert report['/']['n_layers'] == 2
    assert cch.layer_report['ReLU-1']['link'] == '/'


def test_backward_calls_go_to_the_link_whose_forward_made_them():
    cch = _run(Twice(), _x(2, 3), backward=True)
    grads = {(r['type'], r['link']) for name, r in cch.layer_report.items()
             if name != 'total' and r['phase'] == 'backward'}
    assert ('LinearGradWeight', '/fc') in grads
    assert ('LinearGradWeight', '/out') in grads
    assert ('ReLUGrad2', '/') in grads


def test_depth_keeps_the_cost_in_the_parents():
    class Outer(chainer.Chain):
        def __init__(self):
            super(Outer, self).__init__()
            with self.init_scope():
                self.inner = Twice()

        def forward(self, x):
            return F.relu(self.inner(x))

    cch = _run(Outer(), _x(2, 3))
    assert list(cch.link_report) == ['/', '/inner', '/inner/fc',
                                     '/inner/out', 'total']
    out = io.StringIO()
    cch.show_link_report(out, unit=None, depth=1,
                         columns=['name', 'n_calls', 'flops'])
    # inner: 108 (see above); Outer's ReLU on (2, 3): 6
    assert out.getvalue().splitlines() == [
        'Link,# Calls,FLOPs', '/,1,114', '/inner,1,108', 'total,1,114']


def test_names_are_indented_by_depth_in_table_and_md():
    cch = _run(Twice(), _x(2, 3))
    out = io.StringIO()
    cch.show_link_report(out, mode='md', unit=None,
                         columns=['name', 'flops'])
    lines = out.getvalue().splitlines()
    assert lines[2:] == ['|/|108|', '|\u00a0\u00a0fc|64|',
                         '|\u00a0\u00a0out|30|', '|total|108|']
    assert LinkColumns.DEFAULT == [
        'name', 'n_params', 'n_calls', 'n_layers', 'flops', 'mread',
        'mwrite', 'mrw']


def test_link_is_a_column_of_show_report():
    cch = _run(Twice(), _x(2, 3))
    out = io.StringIO()
    cch.show_report(out, unit=None, columns=['name', 'link'])
    assert out.getvalue().splitlines()[1:3] == [
        'LinearFunction-1,/fc', 'ReLU-1,/']


@pytest.mark.parametrize('depth', [-1, 1.5, 'deep'])
def test_bad_depth(depth):
    cch = _run(Twice(), _x(2, 3))
    with pytest.raises(ValueError, match='depth must be'):
        cch.show_link_report(io.StringIO(), depth=depth)


class _Shared(chainer.Chain):
    """One Linear(2 -> 3) under two names, a Linear(3 -> 1) never called,
    and a Linear(None -> 2) initialised by its call."""

    def __init__(self):
        super(_Shared, self).__init__()
        with self.init_scope():
            self.a = L.Linear(2, 3)
            self.b = self.a
            self.unused = L.Linear(3, 1)
            self.lazy = L.Linear(None, 2)

    def forward(self, x):
        return self.lazy(self.b(self.a(x)[:, :2]))


def test_n_params_counts_every_parameter_of_the_subtree_once():
    cch = _run(_Shared(), _x(1, 2))
    report = cch.link_report
    # a and b are one link (Chainer names it after its last attribute,
    # b): called twice, W 3*2 + b 3 = 9 counted once; unused (never
    # called): 3 + 1 = 4; lazy, initialised by its call on b's 3 outputs:
    # W 2*3 + b 2 = 8
    assert list(report) == ['/', '/b', '/lazy', 'total']
    assert report['/b']['n_calls'] == 2
    assert report['/b']['n_params'] == 9
    assert report['/lazy']['n_params'] == 8
    assert report['/']['n_params'] == 9 + 4 + 8
    assert cch.total_report['n_params'] == 21


class _Idle(chainer.Chain):
    """Calls ``used`` only; ``unused`` and ``idle`` (a Chain holding
    ``fc``) are parameters the optimizer updates all the same."""

    def __init__(self):
        super(_Idle, self).__init__()
        with self.init_scope():
            self.used = L.Linear(3, 2)
            self.unused = L.Linear(3, 2)
            self.idle = chainer.Chain()
            with self.idle.init_scope():
                self.idle.fc = L.Linear(3, 2)

    def forward(self, x):
        return self.used(x)


def test_a_link_updated_but_never_called_counts_its_parameters():
    model = _Idle()
    optimizer = chainer.optimizers.SGD().setup(model)
    with ComputationalCostHook(strict=True) as cch:
        model.cleargrads()
        F.sum(model(_x(1, 3))).backward()
        optimizer.update()
    report = cch.link_report
    # each Linear(3, 2): W 2*3 + b 2 = 8; the root holds the three
    assert report['/']['n_params'] == 24
    assert report['/']['n_calls'] == 1
    # never called: no call, but their parameters, which the update
    # (2 records each, W and b) touched; a Chain never called counts its
    # child's
    for path in ('/unused', '/idle', '/idle/fc'):
        assert report[path]['n_params'] == 8
        assert report[path]['n_calls'] == 0
        assert report[path]['n_layers'] == 2
    # the children add up to their parent: 8 + 8 + 8 = 24
    assert sum(report[p]['n_params']
               for p in ('/used', '/unused', '/idle')) == 24


class _Lists(chainer.Chain):
    """An encoder and a decoder, each a ChainList that ``forward`` loops
    over: the lists themselves are never called."""

    def __init__(self, first=3):
        super(_Lists, self).__init__()
        with self.init_scope():
            self.enc = chainer.ChainList(L.Linear(first, 4), L.Linear(4, 2))
            self.dec = chainer.ChainList(L.Linear(2, 5), L.Linear(5, 3))

    def forward(self, x, skip=None):
        for layer in self.enc:
            x = layer(x)
        for i, layer in enumerate(self.dec):
            if i != skip:
                x = layer(x)
        return x


def test_links_in_a_chainlist_looped_over_keep_their_place_in_the_tree():
    cch = _run(_Lists(), _x(2, 3))
    report = cch.link_report
    assert list(report) == ['/', '/enc', '/enc/0', '/enc/1', '/dec',
                            '/dec/0', '/dec/1', 'total']
    assert list(_link_of(cch).values()) == [
        '/enc/0', '/enc/1', '/dec/0', '/dec/1']
    # Linear(i, o) at batch 2: 2*o*i multiply-adds + 2*o bias adds;
    # parameters o*i + o
    for path, flops, n_params in [('/enc/0', 2 * 4 * 3 + 2 * 4, 16),
                                  ('/enc/1', 2 * 2 * 4 + 2 * 2, 10),
                                  ('/dec/0', 2 * 5 * 2 + 2 * 5, 15),
                                  ('/dec/1', 2 * 3 * 5 + 2 * 3, 18)]:
        assert (report[path]['flops'], report[path]['n_params'],
                report[path]['n_calls']) == (flops, n_params, 1)
    # the lists, never called: their children's costs and parameters
    assert (report['/enc']['flops'], report['/enc']['n_params'],
            report['/enc']['n_calls']) == (32 + 20, 16 + 10, 0)
    assert (report['/dec']['flops'], report['/dec']['n_params'],
            report['/dec']['n_calls']) == (30 + 36, 15 + 18, 0)
    assert report['/']['n_params'] == 16 + 10 + 15 + 18


def test_a_chainlist_looped_over_counts_its_lazily_initialised_children():
    cch = _run(_Lists(first=None), _x(2, 3))
    # enc[0] initialised by its call on 3 inputs: 4*3 + 4 = 16; enc[1]
    # 4*2 + 2 = 10
    assert cch.link_report['/enc']['n_params'] == 16 + 10


def test_an_update_of_a_child_skipped_goes_to_its_place_in_the_tree():
    model = _Lists()
    optimizer = chainer.optimizers.SGD().setup(model)
    with ComputationalCostHook(strict=True) as cch:
        model.cleargrads()
        y = model(_x(2, 3), skip=1)  # dec[1] (5 -> 3) not called
        F.sum(y).backward()
        optimizer.update()
    report = cch.link_report
    # the skipped link: no call, its W and b updated (2 records); its
    # parent's parameters are both children's: 15 + 18
    assert (report['/dec/1']['n_calls'], report['/dec/1']['n_layers'],
            report['/dec/1']['n_params']) == (0, 2, 18)
    assert report['/dec']['n_params'] == 15 + 18
    assert '/1' not in report and '/0' not in report


class _LazySub(chainer.Chain):
    """``fc`` (3 -> 3), called by its own forward; ``sub`` (None -> 2),
    which its parent calls directly after it."""

    def __init__(self):
        super(_LazySub, self).__init__()
        with self.init_scope():
            self.fc = L.Linear(3, 3)
            self.sub = L.Linear(None, 2)

    def forward(self, x):
        return self.fc(x)


def test_a_lazy_link_called_after_its_parent_returned_counts_in_it():
    top = chainer.Chain()
    with top.init_scope():
        top.a = _LazySub()
    top.forward = lambda x: top.a.sub(top.a(x))
    cch = _run(top, _x(1, 3))
    report = cch.link_report
    # fc 3*3 + 3 = 12; sub, initialised on 3 inputs after a's call
    # ended: 2*3 + 2 = 8
    assert report['/a/sub']['n_params'] == 8
    assert report['/a']['n_params'] == report['/']['n_params'] == 12 + 8
    assert cch.total_report['n_params'] == 20


def _enc_holding_a_linear():
    """A Chain whose forward reaches into its 'enc', a Chain holding a
    Linear(3, 4) as 'fc'."""
    model = chainer.Chain()
    with model.init_scope():
        model.enc = chainer.Chain()
        with model.enc.init_scope():
            model.enc.fc = L.Linear(3, 4)
    model.forward = lambda x: model.enc.fc(x)
    return model


def test_a_link_between_counts_every_link_it_stands_for():
    # one hook, two blocks, two models whose forward reaches into 'enc':
    # _Lists's ChainList of Linear(3, 4) and Linear(4, 2), 12 + 4 and
    # 8 + 2 parameters; then a Chain holding a Linear(3, 4), 12 + 4
    first = _Lists()
    first.forward = lambda x: first.enc[1](first.enc[0](x))
    second = _enc_holding_a_linear()
    cch = ComputationalCostHook()
    with cch:
        first(_x(1, 3))
    with cch:
        second(_x(1, 3))
    assert cch.link_report['/enc']['n_params'] == 16 + 10 + 16
    # the roots: all of _Lists's (its dec too: 2*5 + 5 and 5*3 + 3) and
    # the Chain's
    assert cch.link_report['/']['n_params'] == 16 + 10 + 15 + 18 + 16


def test_links_in_nested_chainlists_are_reached_at_their_position():
    model = chainer.Chain()
    with model.init_scope():
        model.blocks = chainer.ChainList(chainer.ChainList(L.Linear(3, 4)),
                                         chainer.ChainList(L.Linear(4, 2)))
    model.forward = lambda x: model.blocks[1][0](model.blocks[0][0](x))
    cch = _run(model, _x(1, 3))
    report = cch.link_report
    assert list(report) == ['/', '/blocks', '/blocks/0', '/blocks/0/0',
                            '/blocks/1', '/blocks/1/0', 'total']
    # blocks[0][0]: Linear(3, 4), 4*3 + 4 = 16 parameters; blocks[1][0]:
    # Linear(4, 2), 2*4 + 2 = 10; each list holds its one link's
    assert [report[p]['n_params'] for p in report] == [
        26, 26, 16, 16, 10, 10, 26]
    assert [report[p]['n_calls'] for p in report if p != 'total'] == [
        1, 0, 0, 1, 0, 1]


def test_a_lazy_link_initialised_between_blocks_counts_once_in_its_list():
    # one hook, two blocks.  Block 1: a model loops into its ChainList
    # 'enc' and calls enc[0] and enc[1], not enc[2], a Linear(None, 7)
    # whose W is not made yet.  Between the blocks enc[2] is called
    # outside the hook, which makes its W.  Block 2: another model reaches
    # into its own 'enc', a Chain holding a Linear(3, 4).
    first = chainer.Chain()
    with first.init_scope():
        first.enc = chainer.ChainList(L.Linear(3, 4), L.Linear(4, 2),
                                      L.Linear(None, 7))
    first.forward = lambda x: first.enc[1](first.enc[0](x))
    second = _enc_holding_a_linear()
    cch = ComputationalCostHook()
    with cch:
        first(_x(1, 3))
    first.enc[2](_x(1, 3))
    with cch:
        second(_x(1, 3))
    # block 1: enc[0] 4*3 + 4 = 16, enc[1] 2*4 + 2 = 10, enc[2]'s b 7 (its
    # W, 7*3, made after the block, is not counted); block 2: 4*3 + 4 =
    # 16; 16 + 10 + 7 + 16 = 49, as for the roots
    assert cch.link_report['/enc']['n_params'] == 49
    assert cch.link_report['/']['n_params'] == 49


def test_paths_follow_the_tree_as_it_is_in_each_block():
    model = _Lists()
    cch = ComputationalCostHook()
    with cch:
        model(_x(1, 3))
    # ChainList numbers the links it keeps again: dec[1] is dec[0] now
    del model.dec[0]
    model.enc[1] = L.Linear(4, 5)
    with cch:
        model(_x(1, 3))
    assert list(_link_of(cch).values()) == [
        '/enc/0', '/enc/1', '/dec/0', '/dec/1', '/enc/0', '/enc/1', '/dec/0']


class _Outside(chainer.Chain):
    """Calls links it does not hold (a plain list), after its own."""

    def __init__(self, links):
        super(_Outside, self).__init__()
        with self.init_scope():
            self.own = chainer.ChainList(*[L.Linear(2, 2) for _ in range(3)])
        self.links = links

    def forward(self, x):
        for link in list(self.own) + self.links:
            x = link(x)
        return x


def test_a_callers_tree_is_walked_at_most_twice_a_block():
    model = _Outside([L.Linear(2, 2) for _ in range(20)])
    walks = []
    real = model.namedlinks

    def namedlinks(skipself=False):
        walks.append(skipself)
        return real(skipself)
    model.namedlinks = namedlinks
    with ComputationalCostHook() as cch:
        model(_x(1, 2))
        model(_x(1, 2))
    # once for own's links, once again for the first link it does not
    # hold; the other 19 (and the second call) not at all
    assert walks == [True, True]
    assert list(_link_of(cch).values())[3:5] == ['/Linear', '/Linear']


class _Inner(chainer.Chain):

    def __init__(self):
        super(_Inner, self).__init__()
        with self.init_scope():
            self.fc = L.Linear(3, 3)


class _Grandchildren(chainer.Chain):
    """Calls its children's child ``fc`` directly: ``a`` and ``b``, each
    holding one, are never called."""

    def __init__(self):
        super(_Grandchildren, self).__init__()
        with self.init_scope():
            self.a = _Inner()
            self.b = _Inner()

    def forward(self, x):
        return self.b.fc(self.a.fc(x))


def test_grandchildren_called_directly_are_told_apart_by_their_parents():
    cch = _run(_Grandchildren(), _x(1, 3))
    report = cch.link_report
    assert list(_link_of(cch).values()) == ['/a/fc', '/b/fc']
    # Linear(3, 3) at batch 1: 3*3 + 3 = 12 FLOPs; parameters 3*3 + 3
    for path in ('/a', '/a/fc', '/b', '/b/fc'):
        assert (report[path]['flops'], report[path]['n_params']) == (12, 12)
    assert report['/a']['n_calls'] == 0
    assert report['/a/fc']['n_calls'] == 1


class _Holder(chainer.Chain):
    """Holds a link given as ``name`` and calls it, then ``own``."""

    def __init__(self, name, link):
        super(_Holder, self).__init__()
        self.held = name
        with self.init_scope():
            setattr(self, name, link)
            self.own = L.Linear(2, 2)

    def forward(self, x):
        return self.own(getattr(self, self.held)(x))


def test_a_link_held_in_two_places_is_named_where_the_caller_holds_it():
    shared = L.Linear(2, 2)
    model = chainer.Sequential(
        # Chainer names it 'second', after its last registration
        _Holder('first', shared), _Holder('second', shared))
    cch = _run(model, _x(1, 2))
    assert list(_link_of(cch).values()) == [
        '/0/first', '/0/own', '/1/second', '/1/own']


def test_a_link_two_children_hold_is_named_under_the_first_of_them():
    # one Linear(3, 3) held as a.conv and as b.conv (namedlinks gives
    # /a/conv first), which the model calls through a
    shared = L.Linear(3, 3)
    model = chainer.Chain()
    with model.init_scope():
        model.a = chainer.Chain()
        model.b = chainer.Chain()
        with model.a.init_scope():
            model.a.conv = shared
        with model.b.init_scope():
            model.b.conv = shared
    model.forward = lambda x: model.a.conv(x)
    cch = _run(model, _x(2, 3))
    assert list(_link_of(cch).values()) == ['/a/conv']
    assert list(cch.link_report) == ['/', '/a', '/a/conv', 'total']
    # Linear(3, 3) at batch 2: 2*3*3 multiply-adds + 2*3 bias adds = 24
    assert cch.link_report['/a/conv']['flops'] == 24


def test_an_lstm_s_lateral_link_on_its_first_step_counts_its_parameters():
    model = L.LSTM(2, 2)
    optimizer = chainer.optimizers.SGD().setup(model)
    with ComputationalCostHook(strict=True) as cch:
        model.cleargrads()
        F.sum(model(_x(1, 2))).backward()  # no state yet: lateral idle
        optimizer.update()
    report = cch.link_report
    # upward Linear(2, 8): 8*2 + 8 = 24; lateral Linear(2, 8, nobias):
    # 8*2 = 16; 24 + 16 = 40
    assert report['/upward']['n_params'] == 24
    assert report['/lateral']['n_params'] == 16
    assert report['/lateral']['n_calls'] == 0
    assert report['/']['n_params'] == 40


# Link attribution that must stay right whatever the user's code does
# (issue "Never break a run, round three").

class _Pair(chainer.Chain):
    """l1 = Linear(3 -> 4), a ReLU, l2 = Linear(4 -> 2)."""

    def __init__(self):
        super(_Pair, self).__init__()
        with self.init_scope():
            self.l1 = L.Linear(3, 4)
            self.l2 = L.Linear(4, 2)

    def forward(self, x):
        return self.l2(F.relu(self.l1(x)))


def test_a_hook_entered_inside_a_links_forward_does_not_break_it():
    hook = ComputationalCostHook(strict=True)

    class Net(chainer.Chain):
        def __init__(self):
            super(Net, self).__init__()
            with self.init_scope():
                self.fc = L.Linear(3, 4)

        def forward(self, x):
            hook.__enter__()
            return F.relu(self.fc(x))

    y = Net()(_x(2, 3))  # Net's own postprocess runs under the hook
    hook.__exit__(None, None, None)
    assert y.shape == (2, 4)
    report = hook.link_report
    # the links called in the block are its root: fc, W 4*3 + b 4 = 16;
    # Net itself was called before the block and is not counted
    assert list(report) == ['/', 'total']
    assert report['/']['n_calls'] == 1
    assert report['/']['n_params'] == 16
    assert report['/']['n_layers'] == 2


def test_repeated_training_steps_keep_backward_calls_in_their_link():
    model = _Pair()
    x = _x(5, 3)
    with ComputationalCostHook(strict=True) as cch:
        for _ in range(30):
            model.cleargrads()
            F.sum(model(x)).backward()
    report = cch.link_report
    # per step, l1: its forward, its weight gradient and its bias gradient
    # (a Sum); x is an array, so no input gradient: 3 * 30 = 90
    assert report['/l1']['n_layers'] == 90
    # l2: forward, weight, bias and input gradients: 4 * 30 = 120
    assert report['/l2']['n_layers'] == 120
    # the rest (ReLU, its gradient, Sum, its gradient) stays at the root
    assert report['/']['n_layers'] - 90 - 120 == 4 * 30


def test_n_params_counts_every_top_level_link():
    enc, dec = L.Linear(10, 20), L.Linear(20, 5)
    with ComputationalCostHook() as cch:
        dec(enc(_x(1, 10)))
    # enc 20*10 + 20 = 220, dec 5*20 + 5 = 105
    assert cch.total_report['n_params'] == 325
    assert cch.link_report['/']['n_params'] == 325
    assert cch.link_report['/']['n_calls'] == 2


def test_a_report_read_inside_the_block_is_rebuilt_after_it():
    hook = ComputationalCostHook()

    class Net(_Pair):
        def forward(self, x):
            y = super(Net, self).forward(x)
            hook.total_report  # read before Net's call has ended
            return y

    with hook:
        Net()(_x(1, 3))
    # l1 4*3 + 4 = 16, l2 2*4 + 2 = 10
    assert hook.total_report['n_params'] == 26
    assert hook.link_report['/']['n_params'] == 26


def test_an_exception_caught_inside_the_block_leaves_no_stale_link():
    class Boom(chainer.Chain):
        def __init__(self):
            super(Boom, self).__init__()
            with self.init_scope():
                self.fc = L.Linear(3, 3)

        def forward(self, x):
            self.fc(x)
            raise ValueError('boom')

    class Outer(chainer.Chain):
        def __init__(self):
            super(Outer, self).__init__()
            with self.init_scope():
                self.boom = Boom()

        def forward(self, x):
            try:
                self.boom(x)
            except ValueError:
                pass
            return F.relu(x)

    with ComputationalCostHook(strict=True) as cch:
        Outer()(_x(1, 3))
        try:
            Boom()(_x(1, 3))
        except ValueError:
            pass
        F.sigmoid(_x(1, 3))
    layers = cch.layer_report
    assert layers['LinearFunction-1']['link'] == '/boom/fc'
    assert layers['ReLU-1']['link'] == '/'
    assert layers['LinearFunction-2']['link'] == '/fc'
    assert layers['Sigmoid-1']['link'] == '/'


def test_recomputed_links_keep_their_path():
    class Net(chainer.Chain):
        def __init__(self):
            super(Net, self).__init__()
            with self.init_scope():
                self.fc = L.Linear(3, 3)

        def forward(self, x):
            return F.forget(lambda h: F.relu(self.fc(h)), x)

    x = chainer.Variable(_x(2, 3))
    with ComputationalCostHook(strict=True) as cch:
        F.sum(Net()(x)).backward()
    fcs = [r['phase'] for r in cch.layer_report.values()
           if r.get('type') == 'LinearFunction']
    # forward once, recomputed once in the backward pass: both in /fc
    assert fcs == ['forward', 'backward']
    links = {r['link'] for r in cch.layer_report.values()
             if r.get('type') == 'LinearFunction'}
    assert links == {'/fc'}
    # Net was called once; the recomputation calls fc, not Net, again
    assert cch.link_report['/']['n_calls'] == 1
    assert cch.link_report['/fc']['n_calls'] == 2


def test_a_model_recomputed_at_the_top_of_the_block_keeps_its_root():
    # F.forget(model, x) at the top: the model is the root in the forward
    # pass, and stays it when the backward pass recomputes it (it got a
    # new '/Blk' subtree, its children's calls split in two)
    class Blk(chainer.Chain):
        def __init__(self):
            super(Blk, self).__init__()
            with self.init_scope():
                self.c = L.Linear(5, 5)
                self.d = L.Linear(5, 5)

        def forward(self, x):
            return F.sigmoid(self.d(F.relu(self.c(x))))

    with ComputationalCostHook(strict=True) as cch:
        F.sum(F.forget(Blk(), _x(3, 5))).backward()
    assert {k: v['n_calls'] for k, v in cch.link_report.items()
            if k != 'total'} == {'/': 2, '/c': 2, '/d': 2}
    links = _link_of(cch)
    # the recomputation's calls, in the links of the forward's
    assert (links['LinearFunction-3'], links['LinearFunction-4']) == (
        '/c', '/d')


def test_recomputed_links_get_their_gradients():
    # Issue 27: the gradients of a link that F.forget recomputes in the
    # backward pass landed in '/'.
    class Net(chainer.Chain):
        def __init__(self):
            super(Net, self).__init__()
            with self.init_scope():
                self.fc = L.Linear(3, 3)

        def forward(self, x):
            return F.forget(lambda h: F.relu(self.fc(h)), x)

    with ComputationalCostHook(strict=True) as cch:
        F.sum(Net()(_x(2, 3))).backward()
    links = _link_of(cch)
    # fc's weight and input gradients, and its bias's (a Sum)
    assert links['LinearGradWeight-1'] == '/fc'
    assert links['LinearGradData-1'] == '/fc'
    assert links['Sum-2'] == '/fc'
    # the ReLU is Net's own, as is Forget
    assert links['ReLUGrad2-1'] == '/'


def test_a_double_backprop_differentiates_gradients_in_their_link():
    # A gradient penalty: chainer.grad keeps the graph of the first-order
    # backward, whose gradient functions (made in /a's and /b's backward)
    # the second backward differentiates; their backward belongs where
    # they were made, as a forward node's does (docs/links.md).
    class Net(chainer.Chain):
        def __init__(self):
            super(Net, self).__init__()
            with self.init_scope():
                self.a = L.Linear(3, 4)
                self.b = L.Linear(4, 2)

        def forward(self, x):
            return self.b(F.relu(self.a(x)))

    x = chainer.Variable(_x(2, 3))
    net = Net()
    with ComputationalCostHook(strict=True) as cch:
        y = F.sum(net(x) ** 2)
        gx, = chainer.grad([y], [x], enable_double_backprop=True)
        (y + F.sum(gx * gx)).backward()
    links = {name: r['link'] for name, r in cch.layer_report.items()
             if name.startswith(('Linear', 'ReLU'))}
    assert links == {
        'LinearFunction-1': '/a', 'ReLU-1': '/', 'LinearFunction-2': '/b',
        # first order, each in the link whose forward node it
        # differentiates; ReLU is the model's own
        'LinearGradData-1': '/b', 'ReLUGrad2-1': '/',
        'LinearGradData-2': '/a',
        # second order: LinearGradData-2's backward (a weight gradient and
        # a product with its weight), then -1's, in their links
        'LinearGradWeight-1': '/a', 'LinearFunction-3': '/a',
        'ReLUGrad2-2': '/',
        'LinearGradWeight-2': '/b', 'LinearFunction-4': '/b',
        # the backward of the forward nodes, second time round
        'LinearGradData-3': '/b', 'LinearGradWeight-3': '/b',
        'ReLUGrad2-3': '/',
        'LinearGradData-4': '/a', 'LinearGradWeight-4': '/a'}


def test_one_hook_cannot_be_active_twice_at_once():
    hook = ComputationalCostHook()
    with hook:
        with pytest.raises(RuntimeError, match='already active'):
            hook.__enter__()
        errors = []

        def other():
            try:
                with hook:
                    pass
            except RuntimeError as e:
                errors.append(str(e))
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert len(errors) == 1 and 'one hook per thread' in errors[0]
    with hook:  # once exited, it can be entered again
        F.relu(_x(2))
    assert len(hook.layer_report) == 2


def test_exiting_a_hook_not_active_in_this_thread_is_refused():
    hook = ComputationalCostHook()
    with pytest.raises(RuntimeError, match='ComputationalCostHook-1 is not '
                       r'active in this thread \(not entered\)'):
        hook.__exit__(None, None, None)
    with hook:
        errors = []

        def other():
            try:
                hook.__exit__(None, None, None)
            except RuntimeError as e:
                errors.append(str(e))
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert len(errors) == 1
        assert 'not active in this thread (entered in thread ' in errors[0]
        # untouched: still active here, and recording
        assert hook.active
        assert hook.name in chainer.get_function_hooks()
        F.relu(_x(2))
    assert not hook.active
    assert list(hook.layer_report) == ['ReLU-1', 'total']
    with pytest.raises(RuntimeError, match='not entered'):
        hook.__exit__(None, None, None)  # once more after its block


def test_reports_can_be_read_from_another_thread_during_the_run():
    class Named(chainer.Chain):
        """A Chain with one Linear(2 -> 2) child under a name of its own,
        so that every call adds a path while the other thread reads."""

        def __init__(self, name):
            super(Named, self).__init__()
            with self.init_scope():
                setattr(self, name, L.Linear(2, 2))
            self.child = name

        def forward(self, x):
            return getattr(self, self.child)(x)

    hook = ComputationalCostHook()
    done = threading.Event()
    errors = []

    def read():
        while not done.is_set():
            try:
                hook.link_report
                hook.layer_report
            except Exception:  # pragma: no cover (the failure)
                errors.append(traceback.format_exc())
                return
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    t = threading.Thread(target=read)
    t.start()
    try:
        with hook:
            for i in range(1500):
                Named('l{}'.format(i))(_x(1, 2))
    finally:
        done.set()
        t.join()
        sys.setswitchinterval(switch)
    assert errors == []
    # the root and 1500 children, then the total
    assert len(hook.link_report) == 1502


def test_nested_hooks_are_named_by_depth_as_in_0_1_2():
    with ComputationalCostHook() as outer:
        with ComputationalCostHook() as first:
            pass
        with ComputationalCostHook() as second:
            assert second.name == 'ComputationalCostHook-2'
    assert outer.name == 'ComputationalCostHook-1'
    assert first.name == 'ComputationalCostHook-2'


def test_a_hook_entered_after_an_outer_one_left_takes_a_free_name():
    # -1 and -2 entered, -1 left first: one hook of the class active, so
    # 1 + 1 = 2, taken; raised to the first free number, 3
    outer, inner = ComputationalCostHook(), ComputationalCostHook()
    outer.__enter__()
    inner.__enter__()
    outer.__exit__(None, None, None)
    try:
        with ComputationalCostHook() as third:
            assert third.name == 'ComputationalCostHook-3'
    finally:
        inner.__exit__(None, None, None)


def test_a_deep_copy_can_be_entered_beside_its_original():
    with ComputationalCostHook() as cch:
        F.relu(_x(2))
        twin = copy.deepcopy(cch)
        with twin:
            F.relu(_x(3))
    assert len(cch.layer_report) == 3
    assert len(twin.layer_report) == 3
    assert twin.layer_report['ReLU-2']['input_shapes'] == [(3,)]


def test_a_live_hook_refuses_pickling_and_names_what_to_pickle():
    import pickle
    with ComputationalCostHook() as cch:
        F.relu(_x(2))
    with pytest.raises(TypeError, match=r'hook\.snapshot\(\)'):
        pickle.dumps(cch)
    saved = pickle.loads(pickle.dumps(cch.snapshot()))
    # ReLU on 2 elements: 2 FLOPs
    assert saved.layer_report['ReLU-1']['flops'] == 2


def test_a_deep_copy_of_a_hook_following_memory_keeps_its_figures():
    with ComputationalCostHook(memory=True) as cch:
        F.relu(_x(2, 3))
        twin = copy.deepcopy(cch)  # inside the block, buffers alive
    # ReLU's output: 6 float32 = 24 bytes alive after the call
    assert twin.memory_report['peak'] == cch.memory_report['peak'] == 24
    assert twin.layer_report['ReLU-1']['live'] == 24
    assert not twin.active


# Chainer v1-v4 models define __call__ instead of forward: Chainer's link
# hooks never see such a link's call, the hook finds it on the stack.

class _OldNet(chainer.Chain):
    """The same layers as a forward model, called through __call__: a
    Convolution2D(3 -> 4, 3x3), a ReLU of its own, a Linear(None -> 2)."""

    def __init__(self):
        super(_OldNet, self).__init__()
        with self.init_scope():
            self.c1 = L.Convolution2D(3, 4, 3)
            self.fc = L.Linear(None, 2)

    def __call__(self, x):
        return self.fc(F.relu(self.c1(x)))


class _OldBlock(chainer.Chain):
    """A Sigmoid, a Linear(n_in -> n_out), a ReLU, in __call__: a function
    of its own before its first child and one after it."""

    def __init__(self, n_in=3, n_out=4):
        super(_OldBlock, self).__init__()
        with self.init_scope():
            self.fc = L.Linear(n_in, n_out)

    def __call__(self, x):
        return F.relu(self.fc(F.sigmoid(x)))


class _OldTop(chainer.Chain):
    """A Tanh over an _OldBlock, in __call__."""

    def __init__(self):
        super(_OldTop, self).__init__()
        with self.init_scope():
            self.block = _OldBlock()

    def __call__(self, x):
        return F.tanh(self.block(x))


class _NewTop(chainer.Chain):
    """A Tanh over an _OldBlock, in forward."""

    def __init__(self):
        super(_NewTop, self).__init__()
        with self.init_scope():
            self.block = _OldBlock()

    def forward(self, x):
        return F.tanh(self.block(x))


def _links(cch, phase='forward'):
    return [(r['type'], r['link']) for name, r in cch.layer_report.items()
            if name != 'total' and r['phase'] == phase]


def test_children_of_a_chain_defining_call_keep_their_paths():
    cch = _run(_OldNet(), _x(1, 3, 8, 8))
    # Linear reshapes its (1, 4, 6, 6) input to (1, 144) itself
    assert _links(cch) == [
        ('Convolution2DFunction', '/c1'), ('ReLU', '/'), ('Reshape', '/fc'),
        ('LinearFunction', '/fc')]
    report = cch.link_report
    assert list(report) == ['/', '/c1', '/fc', 'total']
    # c1: W 4*3*3*3 + b 4 = 112; fc, initialised by its call on 4*6*6 =
    # 144 inputs: W 2*144 + b 2 = 290
    assert report['/c1']['n_params'] == 112
    assert report['/fc']['n_params'] == 290
    assert report['/']['n_params'] == 112 + 290
    assert cch.total_report['n_params'] == 402
    assert [report[p]['n_calls'] for p in ('/', '/c1', '/fc')] == [1, 1, 1]
    assert report['/']['n_layers'] == 4


@pytest.mark.parametrize('top', [_OldTop, _NewTop])
def test_a_block_defining_call_owns_its_functions_and_children(top):
    cch = _run(top(), _x(2, 3))
    # the Sigmoid runs before the block's first child, the ReLU after it
    assert _links(cch) == [
        ('Sigmoid', '/block'), ('LinearFunction', '/block/fc'),
        ('ReLU', '/block'), ('Tanh', '/')]
    report = cch.link_report
    assert list(report) == ['/', '/block', '/block/fc', 'total']
    # fc: W 4*3 + b 4 = 16, the only parameters
    assert [report[p]['n_params'] for p in report] == [16, 16, 16, 16]
    assert [report[p]['n_calls'] for p in report if p != 'total'] == [
        1, 1, 1]
    assert [report[p]['n_layers'] for p in report] == [4, 3, 1, 4]


class _OldPair(chainer.Chain):
    """Two _OldBlocks of one class, 3 -> 4 -> 2, called in a loop from
    __call__ (the same code at the same place, two links)."""

    def __init__(self):
        super(_OldPair, self).__init__()
        with self.init_scope():
            self.b1 = _OldBlock(3, 4)
            self.b2 = _OldBlock(4, 2)

    def __call__(self, x):
        for name in ('b1', 'b2'):
            x = self[name](x)
        return x


def test_blocks_of_one_class_defining_call_are_told_apart():
    model = _OldPair()
    with ComputationalCostHook(strict=True) as cch:
        for _ in range(2):
            model.cleargrads()
            F.sum(model(_x(2, 3))).backward()
    records = _links(cch)
    step = [('Sigmoid', '/b1'), ('LinearFunction', '/b1/fc'),
            ('ReLU', '/b1'), ('Sigmoid', '/b2'), ('LinearFunction', '/b2/fc'),
            ('ReLU', '/b2'), ('Sum', '/')]
    assert records == step + step
    backward = set(_links(cch, 'backward'))
    assert {('ReLUGrad2', '/b1'), ('ReLUGrad2', '/b2'),
            ('LinearGradWeight', '/b1/fc'), ('LinearGradWeight', '/b2/fc'),
            ('LinearGradData', '/b2/fc')} <= backward
    report = cch.link_report
    assert list(report) == ['/', '/b1', '/b1/fc', '/b2', '/b2/fc', 'total']
    assert [report[p]['n_calls'] for p in report if p != 'total'] == [
        2, 2, 2, 2, 2]
    # b1: W 4*3 + b 4 = 16; b2: W 2*4 + b 2 = 10
    assert [report[p]['n_params'] for p in report] == [
        26, 16, 16, 10, 10, 26]


class _OldLists(chainer.Chain):
    """_Lists with _OldBlocks (3 -> 4 -> 2, then 2 -> 5 -> 3), which
    define __call__, in its ChainLists."""

    def __init__(self):
        super(_OldLists, self).__init__()
        with self.init_scope():
            self.enc = chainer.ChainList(_OldBlock(3, 4), _OldBlock(4, 2))
            self.dec = chainer.ChainList(_OldBlock(2, 5), _OldBlock(5, 3))

    def forward(self, x):
        for block in self.enc:
            x = block(x)
        for block in self.dec:
            x = block(x)
        return x


def test_blocks_defining_call_in_chainlists_keep_their_place_in_the_tree():
    cch = _run(_OldLists(), _x(1, 3))
    report = cch.link_report
    assert list(report) == [
        '/', '/enc', '/enc/0', '/enc/0/fc', '/enc/1', '/enc/1/fc', '/dec',
        '/dec/0', '/dec/0/fc', '/dec/1', '/dec/1/fc', 'total']
    # Linear(i, o): o*i + o parameters; enc/0 4*3 + 4 = 16, enc/1 2*4 + 2
    # = 10, dec/0 5*2 + 5 = 15, dec/1 3*5 + 3 = 18
    assert [report[p]['n_params'] for p in report] == [
        59, 26, 16, 16, 10, 10, 33, 15, 15, 18, 18, 59]
    assert [report[p]['n_calls'] for p in report if p != 'total'] == [
        1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1]


class _Wrapping(chainer.Chain):
    """A __call__ that hands over to Chainer's (so to forward) after a
    Sigmoid of its own."""

    def __init__(self):
        super(_Wrapping, self).__init__()
        with self.init_scope():
            self.fc = L.Linear(3, 4)

    def __call__(self, x):
        return super(_Wrapping, self).__call__(F.sigmoid(x))

    def forward(self, x):
        return F.relu(self.fc(x))


def test_a_call_handing_over_to_chainer_s_is_one_call_of_its_link():
    cch = _run(_Wrapping(), _x(2, 3))
    assert _links(cch) == [('Sigmoid', '/'), ('LinearFunction', '/fc'),
                           ('ReLU', '/')]
    report = cch.link_report
    assert list(report) == ['/', '/fc', 'total']
    assert report['/']['n_calls'] == 1
    # fc: W 4*3 + b 4 = 16
    assert report['/']['n_params'] == 16


class _HoldsWrapping(chainer.Chain):
    """A _Wrapping as its child ``w``."""

    def __init__(self):
        super(_HoldsWrapping, self).__init__()
        with self.init_scope():
            self.w = _Wrapping()

    def forward(self, x):
        return self.w(x)


def test_a_child_handing_over_to_chainer_s_call_is_one_call_of_its_link():
    # the same hand-over one link down: the top of the link stack, not
    # its root, is the call being handed over
    cch = _run(_HoldsWrapping(), _x(2, 3))
    assert _links(cch) == [('Sigmoid', '/w'), ('LinearFunction', '/w/fc'),
                           ('ReLU', '/w')]
    report = cch.link_report
    assert list(report) == ['/', '/w', '/w/fc', 'total']
    assert report['/w']['n_calls'] == 1


class _Scratchy(chainer.Chain):
    """Makes a (1, 1000) ReLU output in __call__ and returns its sum: the
    ReLU's 4000 bytes die when __call__ returns."""

    def __call__(self, x):
        h = F.relu(x)
        return F.sum(h)


def test_a_chain_defining_call_leaves_nothing_alive_after_it():
    with chainer.no_backprop_mode():
        with ComputationalCostHook(strict=True, memory=True) as cch:
            y = _Scratchy()(_x(1, 1000))
            F.relu(y)
    layers = cch.layer_report
    # ReLU-1: its own 1000*4 bytes; Sum-1: those and its 4 bytes
    assert layers['ReLU-1']['live'] == 4000
    assert layers['Sum-1']['live'] == 4004
    # ReLU-2: y's 4 bytes and its own 4, h freed with __call__'s frame
    assert layers['ReLU-2']['live'] == 8
    assert layers['ReLU-2']['link'] == '/'


def test_a_report_read_after_a_call_of_a_chain_defining_call_counts_it():
    model = _OldPair()
    with ComputationalCostHook(strict=True) as cch:
        F.sum(model(_x(2, 3)))
        # read after the next call, in the block
        n_params = [(p, r['n_params']) for p, r in cch.link_report.items()]
    # b1: W 4*3 + b 4 = 16; b2: W 2*4 + b 2 = 10
    assert n_params == [('/', 26), ('/b1', 16), ('/b1/fc', 16), ('/b2', 10),
                        ('/b2/fc', 10), ('total', 26)]


def test_a_report_read_after_a_block_defining_call_returned_counts_it():
    class Bare(chainer.Chain):
        def __init__(self):
            super(Bare, self).__init__()
            with self.init_scope():
                self.block = _OldBlock()

        def forward(self, x):
            return self.block(x)  # no call of its own after the block's

    with ComputationalCostHook(strict=True) as cch:
        Bare()(_x(2, 3))
        n_params = [(p, r['n_params']) for p, r in cch.link_report.items()]
    # fc: W 4*3 + b 4 = 16, the only parameters
    assert n_params == [('/', 16), ('/block', 16), ('/block/fc', 16),
                        ('total', 16)]


class _Catching(chainer.Chain):
    """Makes a (1, 1000) ReLU output in __call__ and its sum, then calls
    a child that raises after its own call, catches that and returns the
    sum: no call between the error and the return."""

    def __init__(self):
        super(_Catching, self).__init__()
        with self.init_scope():
            self.boom = _Raising()

    def __call__(self, x):
        h = F.relu(x)
        y = F.sum(h)
        try:
            self.boom(y)
        except ValueError:
            pass
        return y


class _Raising(chainer.Link):
    def forward(self, x):
        F.identity(x)
        raise ValueError('boom')


def test_a_chain_defining_call_that_caught_an_error_leaves_nothing_alive():
    with chainer.no_backprop_mode():
        with ComputationalCostHook(strict=True, memory=True) as cch:
            y = _Catching()(_x(1, 1000))
            F.relu(y)
    layers = cch.layer_report
    assert layers['Sum-1']['link'] == '/'
    assert layers['Identity-1']['link'] == '/boom'
    # ReLU-2: y's 4 bytes and its own 4, h freed with __call__'s frame
    assert layers['ReLU-2']['live'] == 8
    assert layers['ReLU-2']['link'] == '/'
