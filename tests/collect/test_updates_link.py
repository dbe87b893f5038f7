"""The link of an update record: the link that owns the parameter, named as
the hook names the links the step calls, whatever link the optimizer was
set up on (issue 34).

The model: ``L.Classifier(MLP)`` (tests/mpi/mn_models.py) with ``l1 =
L.Linear(3, 4)`` (W 12, b 4 elements) and ``l2 = L.Linear(4, 2)`` (W 8, b
2).  SGD counts 1 FLOP per
element with FMA (``p -= lr * g``), WeightDecay 1 (``g += rate * p``).
"""

import chainer
import chainer.functions as F
import chainer.links as L
from chainer import optimizer_hooks as H
from chainer import optimizers as Op
import numpy as np

from chainer_computational_cost import ComputationalCostHook
from mpi.mn_models import MLP  # l1 Linear(3, 4), l2 Linear(4, 2)


X = np.ones((2, 3), np.float32)
T = np.zeros(2, np.int32)


def _step(model, optimizer):
    loss = model(X, T)
    model.cleargrads()
    loss.backward()
    optimizer.update()


def _update_flops(cch):
    """``{link: FLOPs of its update records}``."""
    out = {}
    for key, r in cch.layer_report.items():
        if key != 'total' and r['phase'] == 'update':
            out[r['link']] = out.get(r['link'], 0) + r['flops']
    return out


def test_optimizer_on_the_predictor_while_the_step_calls_the_classifier():
    model = L.Classifier(MLP())
    optimizer = Op.SGD().setup(model.predictor)
    with ComputationalCostHook() as cch:
        _step(model, optimizer)
    # l1: 12 + 4 = 16 elements, l2: 8 + 2 = 10, 1 FLOP each
    assert _update_flops(cch) == {'/predictor/l1': 16, '/predictor/l2': 10}
    # no phantom rows for links that were never called at those paths
    assert sorted(k for k in cch.link_report if k != 'total') == [
        '/', '/predictor', '/predictor/l1', '/predictor/l2']
    # each link's row holds its update: l1's forward and backward plus 16
    rest = sum(r['flops'] for k, r in cch.layer_report.items()
               if k != 'total' and r['link'] == '/predictor/l1'
               and r['phase'] != 'update')
    assert cch.link_report['/predictor/l1']['flops'] == rest + 16


def test_fine_tuning_the_head_only_lands_in_the_head():
    model = L.Classifier(MLP())
    optimizer = Op.SGD().setup(model.predictor.l2)
    with ComputationalCostHook() as cch:
        _step(model, optimizer)
    # l2 alone: 8 + 2 = 10 elements
    assert _update_flops(cch) == {'/predictor/l2': 10}


def test_optimizer_hooks_and_rule_hooks_land_in_the_owner_too():
    model = L.Classifier(MLP())
    optimizer = Op.SGD().setup(model.predictor)
    optimizer.add_hook(H.WeightDecay(1e-4))
    model.predictor.l2.W.update_rule.add_hook(H.WeightDecay(1e-4))
    with ComputationalCostHook() as cch:
        _step(model, optimizer)
    by_type = {}
    for key, r in cch.layer_report.items():
        if key != 'total' and r['phase'] == 'update':
            k = (r['type'], r['link'])
            by_type[k] = by_type.get(k, 0) + r['flops']
    # the optimizer's WeightDecay on every parameter (l1 16, l2 10), the
    # rule's on l2's W (8) once more
    assert by_type == {('WeightDecay', '/predictor/l1'): 16,
                       ('WeightDecay', '/predictor/l2'): 10 + 8,
                       ('SGDRule', '/predictor/l1'): 16,
                       ('SGDRule', '/predictor/l2'): 10}


def test_a_model_called_whole_keeps_its_paths():
    model = L.Classifier(MLP())
    optimizer = Op.SGD().setup(model)
    with ComputationalCostHook() as cch:
        optimizer.update(model, X, T)
    assert _update_flops(cch) == {'/predictor/l1': 16, '/predictor/l2': 10}


def test_a_link_the_block_never_called_is_named_under_the_target():
    # The forward runs before the block: the hook has seen no link, so the
    # paths are those under the optimizer's target.
    model = L.Classifier(MLP())
    optimizer = Op.SGD().setup(model.predictor)
    loss = model(X, T)
    model.cleargrads()
    loss.backward()
    with ComputationalCostHook() as cch:
        optimizer.update()
    assert _update_flops(cch) == {'/l1': 16, '/l2': 10}


def test_a_block_that_only_updates_counts_the_links_parameters():
    # no link is called in the block: each row's parameters are the
    # update's; l1 12 + 4 = 16, l2 8 + 2 = 10, 26 above them, no calls
    model = L.Classifier(MLP())
    optimizer = Op.SGD().setup(model)
    loss = model(X, T)
    model.cleargrads()
    loss.backward()
    with ComputationalCostHook() as cch:
        optimizer.update()
    links = cch.link_report
    assert {k: (r['n_params'], r['n_calls']) for k, r in links.items()
            if k != 'total'} == {
        '/': (26, 0), '/predictor': (26, 0), '/predictor/l1': (16, 0),
        '/predictor/l2': (10, 0)}
    assert links['total']['n_params'] == 26


def test_a_shared_link_is_named_where_the_step_called_it():
    class Shared(chainer.Chain):
        def __init__(self, inner):
            super(Shared, self).__init__()
            with self.init_scope():
                self.inner = inner

        def forward(self, x):
            return self.inner(x)

    inner = MLP()
    model = L.Classifier(Shared(inner))
    # the optimizer sees MLP as its root; the step calls it as
    # /predictor/inner
    optimizer = Op.SGD().setup(inner)
    with ComputationalCostHook() as cch:
        _step(model, optimizer)
    assert _update_flops(cch) == {'/predictor/inner/l1': 16,
                                  '/predictor/inner/l2': 10}


def test_a_link_held_by_two_children_is_named_under_the_one_called():
    class Holder(chainer.Chain):
        def __init__(self, fc):
            super(Holder, self).__init__()
            with self.init_scope():
                self.fc = fc

        def forward(self, x):
            return self.fc(x)

    class Twins(chainer.Chain):
        # one Linear(3, 3) in a and in b (a's path comes first in the
        # tree); the step calls b only
        def __init__(self):
            super(Twins, self).__init__()
            shared = L.Linear(3, 3)
            with self.init_scope():
                self.a = Holder(shared)
                self.b = Holder(shared)

        def forward(self, x):
            return self.b(x)

    model = Twins()
    optimizer = Op.SGD().setup(model)
    with ComputationalCostHook() as cch:
        model.cleargrads()
        F.sum(model(X)).backward()
        optimizer.update()
    # W 3*3 + b 3 = 12 elements, 1 FLOP each, updated twice (the model's
    # params() gives them under a and again under b): 2 * 12 = 24, all
    # where the forward ran
    assert _update_flops(cch) == {'/b/fc': 24}
    assert sorted(k for k in cch.link_report if k != 'total') == [
        '/', '/b', '/b/fc']
