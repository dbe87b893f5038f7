"""A Trainer extension: the cost of each training step in Chainer's log.

``trainer.extend(CostMonitor(device='a100'))`` reports, at every iteration,
through ``chainer.reporter`` (so that ``LogReport``, ``PrintReport`` and
``PlotReport`` show them):

* ``cost/flops``: the FLOPs of the whole step (forward, backward and the
  optimizer's update), a multiply-add counted as 2 FLOPs (the hook's total
  with ``fma_1flop=False``): a device's peak FLOP/s counts a multiply-add
  as 2, so ``cost/mfu`` compares like with like;
* ``cost/flops_per_second``: ``cost/flops`` over the measured time of the
  updater's update;
* ``cost/samples_per_second``: the batch size over that time;
* ``cost/mfu`` (with a device or a peak): the model FLOPs utilisation,
  ``cost/flops_per_second`` over the device's peak;
* ``cost/memory_peak`` (``memory=True``): the most bytes alive during the
  step (see ``ComputationalCostHook(memory=True)``);
* ``cost/comm_bytes`` (ChainerMN): the bytes this rank hands to MPI in
  the step;
* ``cost/predicted_time`` and ``cost/time`` (``calibration=``): the
  seconds a
  :class:`~chainer_computational_cost.analysis.calibration.Calibration`
  predicts for the step (see ``CostReport.time_report``), beside the
  measured time of the updater's update.

``CostMonitor(fma_1flop=True)`` counts a multiply-add as 1 FLOP instead,
as the hook and the command line do by default, and the two FLOP keys
say so: ``cost/flops_fma_1flop`` and ``cost/flops_per_second_fma_1flop``
replace ``cost/flops`` and ``cost/flops_per_second``; ``cost/mfu`` stays
the FLOPs of the step counted as the peak counts them (2 per multiply-add)
over the peak.

How it costs: while the trainer runs, the updater's ``update_core`` is
wrapped.  For the duration of each call, the ``update`` method of each of
the updater's optimizers is wrapped too; a call
``optimizer.update(lossfun, *args, **kwargs)`` (what ``StandardUpdater``
does with the converted batch) is keyed by the shapes and dtypes of its
arguments, and run inside a
:class:`~chainer_computational_cost.ComputationalCostHook` the first time
its key is seen.  The figures of that run stand for every later call with
the same key that does the same work, which is checked at every call
(running the hook at every step would slow the training down): its
forward pass (the loss function) runs under a light function hook that
compares each call's function class, input shapes and dtypes and its
node's settings (scalar and tuple attributes: window, stride, axis, ...;
the shapes and dtypes of the arrays it holds, never their values) with
the costed run's as they come; when it returns, the graph it left (where
each node's inputs come from, which output of their creator they are),
which decides the backward pass, is
compared too.  A call that does other work at the same shapes (an LSTM
whose batch shrinks as sequences end, a pooling window drawn per step, an
encoder cut off the graph) gets the FLOPs of its forward call by call
from the first call that differs, as the hook counts them, and those of
its backward pass and update from a hook entered when its forward
returns; no memory peak nor communication bytes for it, and a predicted
time only when its forward pass was the costed one's.  A step's figures
are the sum over the calls it makes.  The first iteration does one-off
work: the optimizer makes its state, which later steps hold throughout,
and ChainerMN broadcasts the parameters in place of the all-reduce and
the update.  With ``memory=True``, ChainerMN or a calibration (whose
figures that changes, or which a step with other work does not get), the
keys of the first iteration are costed once more the next time they are
seen; otherwise the next step is checked against the first iteration's,
and only if it does other work (a model that initialises itself in its
first forward pass) is the step after it costed as the key's reference.
The calls ``update_core`` makes outside the optimizers' updates are
costed by another light hook, one by one with the hook's calculators, at
every iteration (see _Outside); an update called from another's loss
function is in the outer one's figures.  Nothing outside
``update_core`` is costed: an ``Evaluator``'s forward passes are not.

A backward pass that runs on into nodes made before the loss function
was called (a state carried over steps, a graph the updater built) does
work the checks cannot see: such a step is costed like one whose backward
pass differs, at every step.  A NumPy integer among a node's attributes
is a setting; a NumPy float is a value the node computes from the data:
whether it is set (a clip's bound) is compared, not its value.

What the checks do not see: a change to the update alone (a link's
``disable_update()``, an update rule's hyperparameter set between steps,
an optimizer hook added during the training, an update that dynamic loss
scaling skips) keeps the costed figures of the key, its update phase
included.
A plain setting that changes at every step (a dropout ratio drawn per
step as a Python float) makes every such step one that does other work:
it is costed call by call at every step, exact but as slow as a hooked
step.
"""

import collections
import contextlib
import enum
import itertools
import math
import operator
import sys
import time
import types
from typing import NamedTuple
from typing import Optional
import warnings
import weakref

import chainer
from chainer.functions.loss import sigmoid_cross_entropy
from chainer.training import extension
from chainer.training import updaters
import numpy

from chainer_computational_cost.analysis import calibration as calib
from chainer_computational_cost.analysis import memory
from chainer_computational_cost.collect import mpi_recorder
from chainer_computational_cost.core import checks
from chainer_computational_cost.core import devices
from chainer_computational_cost.core.records import outside_stacklevel
from chainer_computational_cost.core.records import ReportWarning
from chainer_computational_cost.cost_calculators import calculator_for
from chainer_computational_cost.cost_calculators import skips_out_shapes
from chainer_computational_cost.cost_calculators import validate_cost
from chainer_computational_cost.run.hook import apply_outputs
from chainer_computational_cost.run.hook import ComputationalCostHook

#: The updaters that run forward and backward outside optimizer.update (and
#: where): CostMonitor refuses them (and subclasses) when the trainer starts.
_UNSUPPORTED = (
    (updaters.MultiprocessParallelUpdater, ' in other processes'),
    (updaters.ParallelUpdater, ''),
)

_MISSING = object()
_clock = time.perf_counter
_ADAPTER = chainer.function.FunctionAdapter

#: Function class -> its built-in calculator (or None), the nearest base
#: class's when it has none of its own: as the hook resolves them, less
#: custom calculators, which a CostMonitor's hooks never have.
_CALCULATORS = {}


def _calculator(cls):
    try:
        return _CALCULATORS[cls]
    except KeyError:
        pass
    found = _CALCULATORS[cls] = calculator_for(cls)
    return found


def _call_flops(function, in_data, fma_1flop=False, apply=None):
    """The FLOPs (a multiply-add as 2, as 1 with ``fma_1flop``) the hook
    records for one call of
    ``function`` on ``in_data``: the same calculator; 0 where the hook
    records an ignored call or an error.  A calculator that reads the
    output shapes (a custom one; no built-in one's FLOPs need them) gets
    them, as from the hook, from the outputs of the ``FunctionNode.apply``
    running in the frame ``apply`` (None: not known)."""
    if type(function) is _ADAPTER:
        function = function.function
    calc = _calculator(type(function))
    if calc is None:
        return 0
    try:
        if calc in skips_out_shapes:
            result = calc(function, in_data, fma_1flop=fma_1flop)
        else:
            result = calc(function, in_data, fma_1flop=fma_1flop,
                          out_shapes=_out_shapes(apply))
        return int(validate_cost(result, calc, type(function).__name__)[0])
    except Exception:
        return 0


def _out_shapes(apply):
    """The shapes of the outputs of the ``FunctionNode.apply`` running in
    the frame ``apply`` (see apply_outputs), or None."""
    outputs = apply_outputs(apply)
    return None if outputs is None else tuple([y.shape for y in outputs])


#: How a node attribute's type enters a call's key (see _settings): 0
#: left out, 1 as it is, 2 a sequence of such values, 3 an array's shape
#: and dtype (never its values).
_KINDS = {}


#: The types of a function a node holds (see _kind).
_FUNCTIONS = (types.FunctionType, types.MethodType,
              types.BuiltinFunctionType)


def _kind(t):
    try:
        return _KINDS[t]
    except KeyError:
        pass
    if t in (int, float, bool, str, bytes, type(None), type(Ellipsis),
             slice) or issubclass(t, (numpy.dtype, type, enum.Enum)):
        # (a class too: a cast's target given as numpy.float16; a mode
        # held as an Enum member)
        kind = 1
    elif issubclass(t, _FUNCTIONS):
        # a function the node runs (F.forget's, recomputed in the
        # backward pass): compared by its code, which a lambda made again
        # at each step keeps
        kind = 4
    elif t in (tuple, list):
        kind = 2
    elif issubclass(t, (numpy.integer, numpy.bool_)):
        # A size, a window or a flag given as a NumPy scalar (drawn with
        # NumPy, indexed from an array of settings): a setting.
        kind = 1
    elif issubclass(t, numpy.generic):
        # A NumPy float is what a function computes from the data (a
        # loss's normalising coefficient): a value, not a setting.
        kind = 0
    elif hasattr(t, 'shape') and hasattr(t, 'dtype'):
        kind = 3
    else:
        kind = 0
    _KINDS[t] = kind
    return kind


def _sequence(values):
    """A tuple or list attribute as a key, None if it holds anything but
    settings and arrays."""
    out = []
    for v in values:
        kind = _kind(type(v))
        if kind == 1 or isinstance(v, numpy.generic):
            out.append(v)
        elif kind == 2:
            v = _sequence(v)
            if v is None:
                return None
            out.append(v)
        elif kind >= 3:
            out.append(_value(v))
        else:
            return None
    return tuple(out)


#: FunctionNode's own bookkeeping (the graph, layouts, retained data):
#: the same for the same calls, not settings of the function.
_BOOKKEEPING = frozenset([
    '_input_layouts', '_output_layouts', '_input_indexes_to_retain',
    '_output_indexes_to_retain', '_retained_output_data', '_output_count',
    'rank', 'inputs', 'outputs', 'lazy_grad_sum', 'stack',
    '_config_use_ideep', '_is_chainerx_fallback_mode', 'chainerx_device',
    '_n_local_function_hooks', '_local_function_hooks'])

#: Attributes that hold a count a function computes from the data, as a
#: NumPy integer: values, not settings (no calculator reads them).
_DATA_COUNTS = {
    sigmoid_cross_entropy.SigmoidCrossEntropy: frozenset(['count']),
}

#: Function class -> how to read its nodes' settings: (a getter of the
#: attributes that held plain settings in its first node, or None if
#: none; their types; the names of the others: sequences and arrays; the
#: names of the plain ones; a getter of the others, or None).  Learnt from one
#: node's __dict__ a class: reading a node's __dict__ makes CPython 3.11
#: keep its attributes in a dict from then on, which slows every later
#: attribute access of it (Chainer's own, in the backward pass, too).
_LAYOUTS = {}


def _layout(cls, function):
    d = function.__dict__
    plain = []
    other = []
    counts = _DATA_COUNTS.get(cls, ())
    for name, v in d.items():
        if name in _BOOKKEEPING or name in counts:
            continue
        kind = _kind(type(v))
        if kind == 1:
            plain.append(name)
        elif kind or isinstance(v, numpy.generic):
            # (a value the node computed, as a NumPy float: its shape and
            # dtype, which say that it is set, not what it is)
            other.append(name)
    # a tuple from a getter in C, as for several: a lone name twice
    if len(plain) == 1:
        plain.append(plain[0])
    getter = operator.attrgetter(*plain) if plain else None
    others = operator.attrgetter(*other) if other else None
    layout = _LAYOUTS[cls] = (getter, tuple([type(d[n]) for n in plain]),
                              tuple(other), tuple(plain), others)
    return layout


def _value(v):
    """One attribute's value as a key (see _settings): a setting itself;
    an array's (or a NumPy float's: a value the node computed) shape and
    dtype; a function's code; else its type, which differs from None (a
    bound that is set from one that is not)."""
    kind = _kind(type(v))
    if kind == 1:
        return v
    if kind == 2:
        return _sequence(v)
    if kind == 4:  # (a bound method's function's)
        return getattr(getattr(v, '__func__', v), '__code__', v)
    if kind == 3 or isinstance(v, numpy.generic):
        # (an uninitialised Parameter has no shape)
        return getattr(v, 'shape', None), getattr(v, 'dtype', None)
    return type(v)


def _settings(function, layout):
    """What the cost of a call reads of its node besides the inputs: the
    settings among its attributes (window, stride, pad, axis, ratio,
    slices, ...) and the shapes and dtypes of the arrays it holds, never
    their values (nothing is copied from a GPU); read through the
    ``layout`` of its class (see _LAYOUTS)."""
    getter, types, other, plain, others = layout
    try:
        values = () if getter is None else getter(function)
    except AttributeError:  # a node without one of its class's settings
        values = tuple([getattr(function, n, _MISSING) for n in plain])
    if tuple(map(type, values)) != types:  # a setting that is not now
        values = tuple(map(_value, values))
    if others is None:
        return values
    return values, _held(function, other, others)


def _held(function, other, others):
    """The part of _settings that the arrays a node holds make: the
    shapes and dtypes of its attributes ``other``, read by ``others``."""
    try:
        held = others(function)
    except AttributeError:
        held = tuple([getattr(function, n, None) for n in other])
    else:
        if len(other) == 1:  # read once, not twice as the settings
            held = held,
    try:  # arrays only, the usual case: what _value makes of them
        return tuple(map(_SHAPE_DTYPE, held))
    except AttributeError:
        return tuple(map(_value, held))


def _same_settings(function, layout, settings):
    """Whether ``function``'s node has the ``settings`` (see _settings) of
    the costed node of its class: compared object by object first, as
    they usually are the same objects from call to call (a function's
    defaults, flags, small ints, interned strings), which a type check
    of each need not follow, else as _settings reads them; then the
    arrays it holds."""
    getter, _, other, _, others = layout
    try:
        same = getter is None or all(map(
            operator.is_, getter(function),
            settings if others is None else settings[0]))
    except AttributeError:
        same = False
    if not same:
        return _settings(function, layout) == settings
    # the same plain settings make the same part of the key
    return others is None or _held(function, other, others) == settings[1]


#: Readers of the graph (VariableNode's properties read these attributes,
#: in Chainer 6 and 7) and of a call's inputs, for whole sequences: a
#: check of a few inputs reads them in bytecode (see _same_graph).
_INPUTS = operator.attrgetter('inputs')
_CREATOR = operator.attrgetter('_creator_node')
_NEEDS_GRAD = operator.attrgetter('_requires_grad')
_ref = weakref.ref
_DEREF = weakref.ref.__call__  # the referent of each weak reference, in C
_SHAPE_DTYPE = operator.attrgetter('shape', 'dtype')


#: An input's creator in :func:`_graph` when a node outside the forward
#: pass made it (an earlier step's, the updater's) and it requires a
#: gradient: the backward pass runs on into a graph no check sees.
_OUTSIDE = 'outside'


def _output_index(x):
    """Which output of its creator the variable node ``x`` is, for a
    creator of several outputs (an LSTM's c and h: which one the loss
    reads decides its backward pass); None otherwise."""
    creator = x._creator_node
    outputs = () if creator is None else creator.outputs
    if len(outputs) > 1:
        for i, ref in enumerate(outputs):
            if ref() is x:
                return i
    return None


def _cleared(optimizer):
    """The nodes of the parameters whose gradients ``optimizer.update``
    clears (or zeroes) between its loss function and its backward pass:
    its target's.  The backward pass adds to the gradient any other leaf
    holds (see _holds_grad)."""
    try:
        return {param.node for param in optimizer.target.params()}
    except Exception:  # a target that is not a Link
        return set()


def _holds_grad(x, cleared):
    """For a leaf input ``x`` that requires a gradient and is not of
    ``cleared``: whether its variable holds a gradient, which the backward
    pass adds the new one to (an Add call: a discriminator's gradients,
    left by its own update, that a generator's loss reaches); else None."""
    if x._creator_node is not None or not x._requires_grad or x in cleared:
        return None
    var = x.get_variable_or_none()
    return var is not None and var.grad_var is not None


def _graph_inputs(nodes, loss):
    """The inputs of the forward's ``nodes``, in call order, then the node
    of ``loss``: the inputs that :func:`_graph` describes."""
    node = getattr(loss, 'node', None)
    # a node made without a graph (no_backprop_mode) has inputs None; a
    # node freed during the forward pass is None, and no input of a node
    # alive came from it
    inputs = list(itertools.chain.from_iterable(
        filter(None, map(_INPUTS, filter(None, nodes)))))
    if node is not None:
        inputs.append(node)
    return inputs


def _graph(nodes, loss, cleared=frozenset()):
    """What decides the calls of the backward pass of ``loss`` beyond the
    forward's calls (``nodes``, in call order): for every input of every
    node and for ``loss``, the node that made it (by call; None for a
    leaf, or for an input made outside the forward pass that requires no
    gradient, which the backward pass stops at; else :data:`_OUTSIDE`),
    whether it requires a gradient, the first input that is the same
    variable (shared variables, as tied weights, sum their gradients),
    which output of its creator it is (see _output_index) and whether it
    holds a gradient already (see _holds_grad; ``cleared``, the nodes of
    the parameters the update clears)."""
    return _described(nodes, _graph_inputs(nodes, loss), cleared)


def _described(nodes, inputs, cleared):
    """:func:`_graph`'s description of the forward's ``nodes`` and their
    ``inputs`` (see _graph_inputs)."""
    # The nodes themselves as keys, hashed by identity as Chainer's own
    # backward pass hashes them: no id() per node and input, at every step.
    index = dict(zip(nodes, itertools.count()))
    needs_grad = list(map(_NEEDS_GRAD, inputs))
    creators = [c if c is None else index.get(c, _OUTSIDE if g else None)
                for c, g in zip(map(_CREATOR, inputs), needs_grad)]
    firsts = {}
    return (creators, needs_grad,
            list(map(firsts.setdefault, inputs, itertools.count())),
            list(map(_output_index, inputs)),
            [_holds_grad(x, cleared) for x in inputs])


class _Graph(NamedTuple):
    """The graph a costed step's forward pass left, as later steps' are
    compared with it: ``full`` is :func:`_graph`'s; ``positions``, each
    input's creator as its position among the step's nodes (-1 for None;
    None when the backward pass runs into nodes made outside the forward
    pass, as ``outside`` says: then no later step is taken to do the same
    work); ``shared``, (k, j) for each input k that is the same variable
    as an earlier input j (its first); ``distinct``, how many variables
    the inputs are; ``outputs``, (k, i) for each input k that is output
    i of a creator of several outputs (see _output_index); ``leaves``,
    (k, a weak reference to its node, :func:`_holds_grad`'s answer) for
    each input k that is a leaf requiring a gradient."""

    full: tuple
    positions: Optional[tuple]
    shared: tuple
    distinct: int
    outside: bool
    outputs: tuple = ()
    leaves: tuple = ()

    @classmethod
    def of(cls, nodes, loss, cleared=frozenset()):
        """The :class:`_Graph` of a forward pass, whose update clears the
        gradients of the parameters whose nodes are ``cleared``."""
        inputs = _graph_inputs(nodes, loss)
        full = _described(nodes, inputs, cleared)
        creators, needs_grad, firsts, outputs, held = full
        if _OUTSIDE in creators:
            return cls(full, None, (), 0, True)
        return cls(full, tuple([-1 if c is None else c for c in creators]),
                   tuple([(k, j) for k, j in enumerate(firsts) if j != k]),
                   len(set(firsts)), False,
                   tuple([(k, i) for k, i in enumerate(outputs)
                          if i is not None]),
                   tuple([(k, _ref(inputs[k]), held[k])
                          for k, c in enumerate(creators)
                          if c is None and needs_grad[k]]))


def _same_graph(nodes, loss, reference, optimizer=None):
    """Whether the forward pass that made ``nodes`` and ``loss`` in an
    update of ``optimizer`` left the graph of ``reference`` (a
    :class:`_Graph`): :func:`_graph`'s comparison, made input by input as
    they come in the usual case (every node in the graph, no input made in
    an earlier step, the same leaves requiring a gradient), else
    :func:`_graph`'s own."""
    needs_grad = reference.full[1]
    positions = reference.positions
    made = nodes + [None]  # position -1: no creator
    inputs = []
    add = inputs.append
    k = 0
    # A plain loop: CPython 3.11 reads an attribute in bytecode for less
    # than a third of what an attrgetter mapped over the inputs costs.
    try:
        for node in nodes:
            if node is None:  # freed during the forward pass (see _graph)
                continue
            for x in node.inputs:
                if x._requires_grad is not needs_grad[k] or \
                        x._creator_node is not made[positions[k]]:
                    # (maybe made in an earlier step, as the costed
                    # step's were)
                    raise LookupError
                add(x)
                k += 1
        node = getattr(loss, 'node', None)
        if node is not None:
            if node._requires_grad is not needs_grad[k] or \
                    node._creator_node is not made[positions[k]]:
                raise LookupError
            add(node)
            k += 1
        if k != len(needs_grad):
            return False
        # Each leaf that requires a gradient: cleared by the update as
        # before, or holding a gradient as before (see _holds_grad)
        for at, ref, held in reference.leaves:
            x = inputs[at]
            if ref() is not x:  # a new leaf (an input)
                if isinstance(x.get_variable_or_none(), chainer.Parameter):
                    raise LookupError  # (one the update may clear)
                if held is None:
                    return False
            elif held is None:  # the costed step's, cleared as it was
                continue
            if _holds_grad(x, ()) is not held:
                return False
    except (TypeError, LookupError):
        # a node made without a graph, an input unlike the costed step's
        # or beyond them, another leaf: the whole comparison
        return _graph(nodes, loss, _cleared(optimizer)) == reference.full
    # Shared as before: each input that was an earlier one's variable
    # still is, and none more (as many variables as before).
    for k, j in reference.shared:
        if inputs[k] is not inputs[j]:
            return False
    if len(set(inputs)) != reference.distinct:
        return False
    # The same output of each creator of several outputs (whose inputs
    # come from the same calls as the costed step's)
    for k, i in reference.outputs:
        if inputs[k]._creator_node.outputs[i]() is not inputs[k]:
            return False
    return True


def _free_name(hooks, name):
    """``name-<k>``, the first k >= 2 not among ``hooks``: the hook of an
    update called inside another update's loss function."""
    k = 2
    while '{}-{}'.format(name, k) in hooks:
        k += 1
    return '{}-{}'.format(name, k)


def _added(hook):
    """``(hooks, key)``: ``hook`` put in the thread's function hooks (the
    dict itself, which is the thread's for good) under its name, or
    ``name-<k>`` when that is taken; ``hooks.pop(key, None)`` takes it out.
    FunctionHook's __enter__ and __exit__ less their lookups of the dict,
    at every step."""
    hooks = chainer.get_function_hooks()
    name = hook.name
    key = name if name not in hooks else _free_name(hooks, name)
    hooks[key] = hook
    return hooks, key


def _forward(lossfun, seen, done):
    """``lossfun`` run inside the function hook ``seen``: the forward pass
    only; then ``done(nodes, loss)`` is called with the nodes it made, in
    call order, and the loss."""

    def forward(*args, **kwargs):
        hooks, key = _added(seen)
        kept = seen.nodes
        try:
            loss = lossfun(*args, **kwargs)
            nodes = list(map(_DEREF, kept))
        finally:
            hooks.pop(key, None)
            # (the same list at every step, which a checker's closure
            # appends to: emptied for the next)
            kept.clear()
        done(nodes, loss)
        return loss
    return forward


class _Calls(chainer.FunctionHook):
    """What the forward pass of an ``optimizer.update`` call applies,
    cheaply: each call's function class, input shapes and dtypes and its
    node's settings (see _settings), compared as they come with the
    calls of the step that was costed for the same arguments; weak
    references to its nodes are kept for the graph the forward leaves
    (see _graph), which decides the backward pass: a node the forward
    pass drops (the graph of an encoder cut off) is freed then, as
    without the monitor, and its arrays with it.  From the first call
    that differs on (or throughout, with no reference: a costed step),
    each call's FLOPs are computed as the hook does, so that a step that
    does other work than the costed one is still costed exactly (see
    CostMonitor).  Not during the backward pass, whose calls follow from
    the forward's calls and graph: a hook there would cost every node of
    the backward pass too (Chainer calls each hook twice a node).  With
    ``fma_1flop``, the FLOPs with a multiply-add as 1 too (``flops_1``,
    ``each_1``).

    After the forward pass of a checked step, ``diverged`` says whether a
    call differed (or came beyond the costed step's), and then
    ``matched`` is how many calls matched before it.  A checker is made
    once per costed step and ``restart()`` before each step it checks:
    making one costs about as much as a step's checks."""

    name = 'CostMonitorCalls'

    def __init__(self, reference, fma_1flop=False):
        # reference: the costed step's calls (a list), or None to record
        # this step's calls and the FLOPs of each.
        self.nodes = []  # weak references, in call order
        self.diverged = reference is None
        self.matched = 0
        self.flops = 0
        self.flops_1 = 0 if fma_1flop else None
        if reference is None:
            self.graph = None
            self.calls = []
            self.each = []
            self.each_1 = [] if fma_1flop else None
        else:
            self.calls = self.each = self.each_1 = None
            self.forward_postprocess, self.restart = self._check(reference)

    # Chainer calls these at every call and on entering and leaving:
    # C callables that ignore their arguments cost no Python frame.
    forward_preprocess = staticmethod(operator.is_)
    added = deleted = staticmethod(id)

    def _check(self, reference):
        """The ``forward_postprocess`` of a step checked against the
        costed step's ``reference``: a closure, as it runs once per call
        of every monitored step.  An input may be None, as the hook
        allows."""
        n = len(reference)
        keep = self.nodes.append
        record = self._cost
        i = 0
        flops_1 = self.flops_1
        # Each call as compared: its class, its inputs' shapes and dtypes
        # in one flat tuple, and as _inputs gives them (for inputs that
        # are not all arrays), its settings and how to read them, how
        # many inputs and how long the flat tuple is (not counted at
        # every call).
        expected = [
            (cls, tuple(itertools.chain.from_iterable(inputs)), inputs,
             settings, _LAYOUTS.get(cls), len(inputs), 2 * len(inputs))
            for cls, inputs, settings in reference]

        def restart():
            nonlocal i
            i = 0
            self.forward_postprocess = forward_postprocess  # (see verify)
            # (matched is set before it is read: see verify)
            if self.diverged:  # the counts a step that differed made
                self.diverged = False
                self.flops = 0
                self.flops_1 = flops_1

        def forward_postprocess(function, in_data):
            nonlocal i
            keep(_ref(function))
            if i < n:
                # Compared part by part with the costed call, the
                # cheapest first, without building this call's key.
                cls, flat, inputs, settings, layout, count, end = \
                    expected[i]
                node = function.function if type(function) is _ADAPTER \
                    else function
                if type(node) is cls and len(in_data) == count:
                    # A plain loop, which stops at the first difference:
                    # each input's shape is a new tuple, its dtype
                    # usually the costed one itself.
                    k = 0
                    try:
                        for x in in_data:
                            d = x.dtype
                            if x.shape != flat[k] or (
                                    d is not flat[k + 1] and
                                    d != flat[k + 1]):
                                break
                            k += 2
                    except AttributeError:  # an input that is None
                        if _inputs(in_data) == inputs:
                            k = end
                    if k == end and (settings is None or _same_settings(
                            node, layout, settings)):
                        i += 1
                        return
            if i <= n:  # the first call that differs (or one more)
                self.matched = i
                self.diverged = True
                i = n + 1
            record(function, in_data)
        return forward_postprocess, restart

    def forward_postprocess(self, function, in_data):
        """Records a call and its FLOPs (see the class)."""
        self.nodes.append(_ref(function))
        self._cost(function, in_data)

    def _cost(self, function, in_data):
        if type(function) is _ADAPTER:
            function = function.function
        cls = type(function)
        # The node's settings (see _settings): none, the usual case
        layout = _LAYOUTS.get(cls) or _layout(cls, function)
        call = cls, _inputs(in_data), (
            None if layout[0] is None and not layout[2]
            else _settings(function, layout))
        # (called from forward_postprocess, called from apply)
        apply = sys._getframe(2)
        flops = _call_flops(function, in_data, False, apply)
        self.flops += flops
        if self.flops_1 is not None:
            flops_1 = _call_flops(function, in_data, True, apply)
            self.flops_1 += flops_1
            if self.each_1 is not None:
                self.each_1.append(flops_1)
        if self.calls is not None:
            self.calls.append(call)
            self.each.append(flops)


def _inputs(in_data):
    """The shapes and dtypes of a call's inputs (None for an input that
    is None)."""
    try:
        return tuple(map(_SHAPE_DTYPE, in_data))
    except AttributeError:
        return tuple([(getattr(x, 'shape', None), getattr(x, 'dtype', None))
                      for x in in_data])


class _Figures(NamedTuple):
    """What one ``optimizer.update`` call costs; None where it is not
    known (see CostMonitor); ``flops_1``, a multiply-add as 1, with
    ``CostMonitor(fma_1flop=True)`` only."""

    flops: int
    memory_peak: Optional[int]
    comm_bytes: Optional[int]
    predicted_time: Optional[float]
    flops_1: Optional[int] = None


class _Costed(NamedTuple):
    """The costed step of one key: its figures (None if it could not be
    costed), whether they stand for later steps (see _Steps.first_stands),
    its forward's calls, the FLOPs of the calls before each,
    the graph its forward left, and the predicted seconds of its forward
    pass (with a calibration); with ``fma_1flop``, the FLOPs (a
    multiply-add as 1) of the calls before each too; the :class:`_Calls`
    that checks later steps against it (None if none is checked);
    whether the next step that does other work replaces it: until a step
    matches it, once per key (see _Steps.first_stands); the parameters
    of the updater's optimizers not initialised then (see
    :func:`_uninitialised`); the FLOPs of the updates its loss function
    called, as _nested_update gathers them."""

    figures: Optional[_Figures]
    settled: bool
    calls: list
    before: list
    graph: Optional[_Graph]
    forward_time: Optional[float]
    before_1: Optional[list] = None
    checker: Optional[_Calls] = None
    replaceable: bool = False
    pending: tuple = ()
    nested: tuple = ()


def _param_state(optimizer):
    """What of ``optimizer``'s parameters a costed step may change as
    one-off work: the elements of the parameters that are initialised
    (a link initialised lazily) and how many update rules have made
    their state (at a parameter's first update); None for a target that
    is not a Link.  It walks every parameter: read around a costing
    only."""
    elements = states = 0
    try:
        for param in optimizer.target.params():
            if param.array is not None:
                elements += param.size
            rule = param.update_rule
            if rule is not None and rule.state is not None:
                states += 1
    except Exception:  # a target that is not a Link: nothing to follow
        return None
    return elements, states


def _uninitialised(optimizers):
    """Weak references to the parameters of ``optimizers``' targets that
    are not initialised (a link initialised lazily, not called yet): once
    one is, its optimizer's update takes it in at every step, whichever
    step, evaluation or call outside the updates initialised it."""
    pending = []
    try:
        for optimizer in optimizers:
            for param in optimizer.target.params():
                if param.array is None:
                    pending.append(_ref(param))
    except Exception:  # a target that is not a Link: nothing to follow
        return ()
    return tuple(pending)


def _initialised(pending):
    """Whether a parameter of ``pending`` (see _uninitialised) has been
    initialised since."""
    for ref in pending:
        param = ref()
        if param is not None and param.array is not None:
            return True
    return False


def _signature(value):
    """What decides the cost of a call with ``value`` as an argument:
    shape and dtype of arrays (and of arrays in lists, tuples and dicts),
    the type of anything else (a scalar's value is not a shape)."""
    shape = getattr(value, 'shape', None)
    if shape is not None:
        return shape, getattr(value, 'dtype', None)
    if isinstance(value, (list, tuple)):
        return (type(value),) + tuple(map(_signature, value))
    if isinstance(value, dict):
        return (dict,) + tuple(sorted(
            (repr(k), _signature(v)) for k, v in value.items()))
    return type(value)


def _batch_size(args, kwargs):
    """The length of the first array argument (None if there is none);
    the usual case, the first argument's, is read by the wrapped update
    itself (see _Steps.wrap)."""
    for value in list(args) + list(kwargs.values()):
        shape = getattr(value, 'shape', None)
        if shape:
            return shape[0]
        if isinstance(value, (list, tuple)) and value:
            return len(value)
    return None


def _step_dtype(optimizers):
    """The dtype name most of the parameters (by elements) of the
    optimizers' targets have; ``float32`` if none is initialised."""
    sizes = collections.Counter()
    for optimizer in optimizers:
        target = getattr(optimizer, 'target', None)
        if target is not None:
            for param in target.params():
                if param.array is not None:
                    sizes[param.dtype.name] += param.size
    return max(sizes, key=sizes.get) if sizes else 'float32'


def _step_figures(hook):
    """The :class:`_Figures` of what ``hook`` recorded, less the predicted
    time: the sums of its total report, read from the records (building
    the report would format a traceback per call)."""
    flops = 0
    comm = 0
    comm_of = hook.comm_bytes_of()
    for i, r in enumerate(hook.records()):
        if r.params is not None:  # not an ignored call
            flops += r.flops
            comm += comm_of.get(i, 0)
    peak = memory.memory_report(hook)['peak'] if hook.memory else None
    return _Figures(flops, peak, comm, None)


def _recorded_flops(hook, phase=None):
    """The FLOPs of the total report of ``hook``, read from its records
    (as :func:`_step_figures` reads them); of one ``phase`` only when
    given."""
    return sum([r.flops for r in hook.records() if r.params is not None
                and (phase is None or r.phase == phase)])


def _time_rows(hook, calibration):
    """The predicted seconds of each costed record of ``hook``, and
    whether any record is of a backward pass (a run without one predicts
    its forward calls with the overhead of inference)."""
    rows = list(hook.time_report(calibration).values())[:-1]
    return ([r['t_predicted'] for r in rows],
            any([r['phase'] == 'backward' for r in rows]))


def _quiet_warning(message):
    # A warning turned into an error must not stop a training.  It points
    # at the first caller outside this module: the updater's call of
    # optimizer.update, from the wrapped update and what it calls.
    level = outside_stacklevel(__name__)
    try:
        warnings.warn(message, ReportWarning, stacklevel=level)
    except Exception:
        pass


#: A check's forward_postprocess while hooks count the step (see
#: _Steps.verify): a C callable that ignores its arguments.
_UNCHECKED = operator.is_


def _exit_quietly(hook, exc_info):
    """``hook.__exit__(*exc_info)``; the warnings it gives on exit (a
    function it cannot cost) are the monitor's own, which never stop a
    training: one turned into an error (``-W error``) is let go."""
    try:
        hook.__exit__(*exc_info)
    except ReportWarning as w:  # (its last step: the hook is out)
        _quiet_warning(str(w))


@contextlib.contextmanager
def _hooked(hook, hook_1=None):
    """The block inside ``hook`` (and ``hook_1``, if given), left as
    :func:`_exit_quietly` leaves it."""
    hooks = [h for h in (hook, hook_1) if h is not None]
    for h in hooks:
        h.__enter__()
    try:
        yield
    finally:
        for h in reversed(hooks):
            _exit_quietly(h, sys.exc_info())


class _Outside(chainer.FunctionHook):
    """The calls an iteration makes outside its optimizers' updates (the
    forward passes a GAN updater runs before them, the forward and
    backward of an updater that calls ``update()`` without a loss
    function): each call's FLOPs as the hook counts them.  Out of the
    thread's function hooks while an update runs, so that the updates'
    calls pay nothing for it."""

    name = 'CostMonitorOutside'
    forward_preprocess = staticmethod(operator.is_)
    added = deleted = staticmethod(id)

    def __init__(self, fma_1flop):
        self.depth = 0
        self.fma_1flop = fma_1flop
        self.hooks = self.key = None
        self.restart()

    def restart(self):
        """Nothing seen yet: when made, and after an iteration that saw
        calls (see _Steps.add_outside) or failed."""
        self.seen = False
        self.flops = 0
        self.flops_1 = 0 if self.fma_1flop else None

    def forward_postprocess(self, function, in_data):
        """Counts a call made outside the updates."""
        self.seen = True
        apply = sys._getframe(1)
        self.flops += _call_flops(function, in_data, False, apply)
        if self.flops_1 is not None:
            self.flops_1 += _call_flops(function, in_data, True, apply)


def _nested_update(real_update, args, kwargs, into, fma_1flop):
    """``real_update`` called from the loss function of an update being
    checked; the FLOPs of its own update phase (no function's, which the
    check sees as the outer forward's calls) appended to ``into``, as
    ``(flops, flops with a multiply-add as 1 or None)``."""
    hook = ComputationalCostHook(fma_1flop=False)
    hook_1 = ComputationalCostHook() if fma_1flop else None
    with _hooked(hook, hook_1):
        result = real_update(*args, **kwargs)
    into.append((_recorded_flops(hook, 'update'), None if hook_1 is None
                 else _recorded_flops(hook_1, 'update')))
    return result


class CostMonitor(extension.Extension):
    """Reports the cost, throughput and MFU of each training step.

    Use it as ``trainer.extend(CostMonitor(device='a100'))`` and add the
    keys it reports (``cost/flops``, ``cost/flops_per_second``,
    ``cost/samples_per_second``, ``cost/mfu``, ``cost/memory_peak``,
    ``cost/comm_bytes``: see the module's documentation) to
    ``PrintReport``.  The figures of each iteration are reported while the
    updater's update runs, as a model reports its loss: every extension
    of that iteration reads them, whatever its priority or trigger.

    Args:
        device: a device preset of
            :data:`chainer_computational_cost.core.devices.DEVICES`
            (``'a100'``, ...) or a
            :class:`~chainer_computational_cost.core.devices.Device`:
            ``cost/mfu`` is then reported, over the device's matrix-unit
            peak for the dtype of most of the parameters (by elements) of
            the models the updater's optimizers update, read after the
            first iteration (float32: TF32 tensor cores on an A100, as
            cuDNN and cuBLAS use them by default; float16: FP16 tensor
            cores).  PaLM's MFU (Chowdhery
            et al. 2022, appendix B) divides by the hardware's theoretical
            peak, which for a deep network's training is its matrix units.
        peak_flops (float): instead of ``device``, the peak (FLOP/s) to
            divide by.
        limit (int): how many distinct argument signatures (shapes and
            dtypes of what an optimizer's update is given) are costed
            (>= 1; default 16).  An iteration with a signature beyond the
            limit reports no ``cost/flops`` (nor the keys derived from it),
            with a ReportWarning the first time.
        memory (bool): also report ``cost/memory_peak`` (bytes); not for
            a step that does other work than the costed step of its
            argument shapes (see the module's documentation).
        comm: a ChainerMN communicator for ``cost/comm_bytes``; by default
            the one of a multi-node optimizer
            (``chainermn.create_multi_node_optimizer``).
        calibration: a
            :class:`~chainer_computational_cost.analysis.calibration.Calibration`
            (see :func:`chainer_computational_cost.calibrate`) or the path
            of its JSON file: also report
            ``cost/predicted_time`` (not for a step whose forward pass
            does other work than the costed step of its argument shapes)
            and the measured ``cost/time``.
        fma_1flop (bool): count a multiply-add as 1 FLOP, as the hook and
            the command line do by default; the keys of the FLOPs then say
            so: ``cost/flops_fma_1flop`` and
            ``cost/flops_per_second_fma_1flop`` in place of ``cost/flops``
            and ``cost/flops_per_second``.  Default False: 2 FLOPs per
            multiply-add, as a device's peak FLOP/s counts them.
            ``cost/mfu`` is the same either way: the step's FLOPs counted
            as the peak counts them (2 per multiply-add) over the peak.

    Updaters: ``StandardUpdater`` (and subclasses that call
    ``optimizer.update(lossfun, *batch)``), ChainerMN's data-parallel
    training (a StandardUpdater and a multi-node optimizer per rank, one
    CostMonitor per rank) and custom updaters that call
    ``optimizer.update(lossfun, ...)`` are costed whole.  The Chainer calls
    an updater makes outside its optimizers' updates (a GAN updater's own
    forward passes, the forward and backward of an updater that calls
    ``update()`` without a loss function) are costed one by one as they
    run, at every step; such steps report no
    memory peak, communication bytes nor predicted time (a ReportWarning
    says so once).  An updater whose ``update()`` never calls
    ``update_core`` gets a ReportWarning after the first iteration:
    nothing is costed.  ``ParallelUpdater`` (the same) and
    ``MultiprocessParallelUpdater`` (its steps run in other processes) are
    refused when the trainer starts, as is an updater without
    ``update_core`` and ``get_all_optimizers``.

    Time: the wall time of the updater's ``update_core`` (fetching and
    converting the batch, forward, backward, update); other extensions
    (an Evaluator, snapshots) are not in it.  A costed iteration also runs
    the hook, so its rates are lower.  On a GPU it is the host's time:
    CuPy runs kernels asynchronously, so read the rates averaged over many
    iterations (LogReport's interval).  ``cost/samples_per_second`` takes
    the batch size from the first array given to the first
    ``optimizer.update`` of the iteration.

    Errors in the arguments are raised here; errors about the updater when
    the trainer starts (``initialize``).  An exception raised by the
    training step passes through unchanged, and the updater and its
    optimizers are left as they were.
    """

    # The figures are reported inside the updater's update, as a model
    # reports its loss: every extension of the iteration reads them.
    priority = extension.PRIORITY_WRITER

    def __init__(self, device=None, peak_flops=None, limit=16, memory=False,
                 comm=None, calibration=None, fma_1flop=False):
        if device is not None and peak_flops is not None:
            raise ValueError('CostMonitor: give either a device or '
                             'peak_flops, not both')
        self._device = None
        if device is not None:
            self._device = devices.resolve_device(device)
        self._peak_flops = None
        if peak_flops is not None:
            self._peak_flops = checks.positive('peak_flops', peak_flops)
        self._limit = checks.positive_int('CostMonitor: limit', limit)
        self._memory = checks.flag('CostMonitor: memory', memory)
        self._fma_1flop = checks.flag('CostMonitor: fma_1flop', fma_1flop)
        self._comm = mpi_recorder.check_comm(comm)
        self._calibration = None if calibration is None else \
            calib.load_calibration(calibration)
        self._updater = None
        self._saved_core = _MISSING
        self._steps = None
        self._trainer = None
        self.trigger = self._trigger

    # The trainer's side

    def initialize(self, trainer):
        """Checks the updater and wraps its ``update_core``."""
        updater = trainer.updater
        name = type(updater).__name__
        for cls, where in _UNSUPPORTED:
            if isinstance(updater, cls):
                raise TypeError(
                    'CostMonitor cannot cost a {}: it runs the forward and '
                    'backward passes outside optimizer.update{}; use a '
                    'StandardUpdater'.format(name, where))
        if not (callable(getattr(updater, 'update_core', None))
                and callable(getattr(updater, 'get_all_optimizers', None))
                and hasattr(updater, '__dict__')):
            raise TypeError(
                'CostMonitor needs an updater with update_core() and '
                'get_all_optimizers() (a StandardUpdater), got {}'.format(
                    name))
        wrapped = updater.__dict__.get('update_core')
        owner = getattr(wrapped, '_cost_monitor', None)
        if owner is not None:
            if owner is self:
                return  # initialized twice: wrapped already
            # The trainer does not finalize extensions when one fails to
            # initialize: leave the updater as it was, or as an earlier
            # trainer's monitor found it (another extension's failed start
            # left its wrapper on).
            ours = owner._trainer is not None and owner._trainer() is trainer
            owner._restore()
            if ours:
                raise RuntimeError('CostMonitor: this updater already has '
                                   'a CostMonitor; extend the trainer with '
                                   'one')
        optimizers = sorted(updater.get_all_optimizers().items())
        for opt_name, optimizer in optimizers:
            if not hasattr(optimizer, '__dict__'):
                raise TypeError('CostMonitor cannot wrap the update of '
                                'optimizer {!r} ({}): it has no __dict__'
                                .format(opt_name, type(optimizer).__name__))
        comm = self._comm
        if comm is None:
            for _, optimizer in optimizers:
                found = vars(optimizer).get('communicator')
                if found is not None:
                    comm = mpi_recorder.check_comm(found)
                    break
        # calculators registered since an earlier training count too
        _CALCULATORS.clear()
        self._steps = steps = _Steps(self, comm)
        self._updater = updater
        self._saved_core = updater.__dict__.get('update_core', _MISSING)
        real_core = updater.update_core

        def update_core():
            if steps.done:  # finalized, but put back by another's wrapper
                return real_core()
            steps.run(updater, real_core)
        update_core._cost_monitor = self
        updater.__dict__['update_core'] = update_core
        self._trainer = weakref.ref(trainer)

    def _trigger(self, trainer):
        """Never fires: each iteration's figures reach the reporter from
        the wrapped ``update_core`` (see _Steps.run).  After the first
        iteration, warns once if ``update_core`` did not run (an updater
        whose ``update()`` does the step itself: nothing is costed)."""
        steps = self._steps
        if steps is not None and not steps.checked:
            steps.checked = True
            if not steps.ran:
                _quiet_warning(
                    'CostMonitor: the updater\'s update_core did not run in '
                    'the first iteration ({}.update() does the step '
                    'itself): nothing is costed; put the step in '
                    'update_core'.format(type(trainer.updater).__name__))
        return False

    def __call__(self, trainer):
        """Nothing: each iteration's figures are reported from the
        updater's ``update_core`` while the trainer runs it."""

    def finalize(self):
        """Puts the updater's ``update_core`` back."""
        self._restore()

    def _restore(self):
        if self._steps is not None:
            self._steps.done = True
            # the optimizers' updates it wrapped: nothing of the user's
            # outlives the training in a monitor the user keeps
            self._steps.wrapped.clear()
        updater, self._updater = self._updater, None
        # (the user's own update_core, if any: not kept past the training)
        saved, self._saved_core = self._saved_core, _MISSING
        if updater is None:
            return
        current = updater.__dict__.get('update_core')
        if getattr(current, '_cost_monitor', None) is not self:
            return  # someone wrapped it after us: theirs to undo
        if saved is _MISSING:
            del updater.__dict__['update_core']
        else:
            updater.__dict__['update_core'] = saved

    def _peak_of(self, dtype):
        if self._peak_flops is not None:
            return self._peak_flops
        precision = devices.PRECISIONS.get(dtype, 'fp32')
        return self._device.peaks[('matrix', precision)][1]


class _Steps(object):
    """What CostMonitor does at each iteration, in a plain object: an
    Extension defines ``__getattr__``, which keeps CPython from
    specialising attribute reads, and this runs at every iteration (see
    benchmarks/extension_overhead.py)."""

    def __init__(self, monitor, comm):
        self.monitor = monitor
        self.limit = monitor._limit
        self.memory = monitor._memory
        self.fma_1flop = monitor._fma_1flop
        self.comm = comm
        self.calibration = monitor._calibration
        self.rated = monitor._device is not None or \
            monitor._peak_flops is not None
        # key -> its _Costed step
        self.costs = {}
        self.first = True  # in the first iteration
        # Whether the figures of the first iteration's steps stand for
        # later steps: its one-off work (the optimizer's state made, which
        # is alive throughout later steps; ChainerMN's broadcast in place
        # of the all-reduce and the update) changes only the memory peak
        # and the communication.  Not with a calibration either: a step
        # checked against the first that does other work in its forward
        # pass has no predicted time.  Else its keys are costed once more
        # the next time they are seen.  A forward pass may do one-off work
        # too (a model that initialises itself from its first batch), in
        # the first iteration's step or in the one costed again: then the
        # next step does other work, and the key's step after it is
        # costed as its reference (once a key, while no step has matched
        # the reference: see _Costed).
        self.first_stands = not self.memory and comm is None and \
            self.calibration is None
        self.ran = False  # whether update_core has run
        self.checked = False  # whether the trigger checked that it ran
        self.done = False  # finalized: update_core passes through
        self.warned = set()
        # Whether an optimizer was updated without a loss function (its
        # warning says what the outside calls' warning would).
        self.bare = False
        self.peak = None
        # While a checked update's loss function runs: the update-phase
        # FLOPs of the updates it calls, which no check of calls sees (a
        # step that differs adds them); else None.
        self.nested = None
        # Made once (and an optimizer's wrapper again only if its update
        # changes): made at each iteration they cost about 6,000
        # instructions a step.
        self.outside = _Outside(self.fma_1flop)
        # optimizer name -> (its update, as wrapped by wrap and counted)
        self.wrapped = {}
        # The updater's optimizers while a step runs (a costing reads
        # them), None between steps: nothing of the user's kept after one.
        self.optimizers = None
        # run() sets, for each iteration: self.calls, the figures of each
        # optimizer.update; self.batch, the batch size; self.last, the
        # last run's (iteration, calls, seconds, batch, observation)
        self.last = (None, (), 0.0, None, None)

    def run(self, updater, real_core):
        """One ``update_core``, its optimizers' updates wrapped."""
        self.ran = True
        optimizers = self.optimizers = updater.get_all_optimizers()
        saved = []
        self.calls = []
        self.batch = None
        outside = self.outside
        wrapped = self.wrapped
        try:
            for name, optimizer in optimizers.items():
                if saved and any(d is optimizer.__dict__ for d, _ in saved):
                    continue  # one optimizer under two names: its first
                d = optimizer.__dict__
                saved.append((d, d.get('update', _MISSING)))
                real_update = optimizer.update
                pair = wrapped.get(name)
                if pair is None or pair[0] != real_update:
                    pair = wrapped[name] = real_update, self.wrap(
                        name, optimizer, real_update)
                d['update'] = pair[1]
            # the outside calls' hook in the thread's function hooks
            hooks, key = _added(outside)
            outside.hooks, outside.key = hooks, key
            start = _clock()
            try:
                real_core()
            finally:
                hooks.pop(key, None)
            elapsed = _clock() - start
        except BaseException:
            # (an updater may catch it and go on: the updater stays
            # wrapped, and the trainer's finalize puts it back)
            _unwrap(saved)
            self.optimizers = None
            outside.restart()
            raise
        _unwrap(saved)
        self.optimizers = None
        if outside.seen:
            self.add_outside(outside)
        if self.peak is None and self.rated:
            self.peak = self.monitor._peak_of(_step_dtype(
                optimizers.values()))
        self.first = False
        iteration = getattr(updater, 'iteration', None)
        last = self.last
        if iteration is not None and iteration == last[0]:
            # update_core run again in one iteration (an updater whose
            # update() calls it twice): the iteration's figures are all
            # its runs', in place of the last run's
            _, calls, before, batch, reported = last
            self.calls = calls + self.calls
            elapsed += before
            if batch is not None and self.batch is not None:
                self.batch += batch
        else:
            reported = None
        observation = self.figures(elapsed)
        self.last = (iteration, self.calls, elapsed, self.batch, observation)
        if observation or reported:
            # What chainer.report does with plain numbers, less its copy
            # of each value (for Variables) and its config lookup: this
            # runs at every iteration.
            try:
                reporter = chainer.reporter.get_current_reporter()
            except IndexError:  # no reporter: nothing reads them
                return
            if reported:
                for key in reported:
                    reporter.observation.pop(key, None)
            reporter.observation.update(observation)

    def add_outside(self, outside):
        """The figures of the calls an iteration made outside its updates
        (see _Outside), as one more call's: FLOPs only."""
        self.calls.append(_Figures(outside.flops, None, None, None,
                                   outside.flops_1))
        outside.restart()
        if 'outside' not in self.warned and not self.bare:
            self.warned.add('outside')
            _quiet_warning(
                'CostMonitor: the updater calls Chainer functions outside '
                'optimizer.update (forward passes it runs itself): they '
                'are costed one by one as they run; cost/memory_peak, '
                'cost/comm_bytes and cost/predicted_time are not reported '
                'for its steps')

    def wrap(self, name, optimizer, real_update):
        """``real_update`` (``optimizer``'s), costed by its arguments'
        shapes and dtypes; the outside calls' hook (see _Outside) out of
        the function hooks while it runs.  One frame: it runs at every
        update.  ``real_update`` itself for an update called inside
        another (from its loss function): the outer update's figures hold
        it (see nested)."""
        costs = self.costs
        outside = self.outside

        def update(lossfun=None, *args, **kwargs):
            if outside.depth:
                if self.nested is None:
                    return real_update(lossfun, *args, **kwargs)
                return _nested_update(real_update, (lossfun,) + args,
                                      kwargs, self.nested, self.fma_1flop)
            outside.depth = 1
            hooks, hook_key = outside.hooks, outside.key
            watching = hooks is not None and \
                hooks.pop(hook_key, None) is outside
            try:
                calls = self.calls
                if self.batch is None and lossfun is not None:
                    try:  # the usual case; else _batch_size
                        self.batch = args[0].shape[0]
                    except (IndexError, AttributeError, TypeError):
                        self.batch = _batch_size(args, kwargs)
                try:  # arrays only, the usual case
                    sig = tuple(map(_SHAPE_DTYPE, args))
                except AttributeError:
                    sig = _signature(args)
                key = (name, lossfun is None, sig,
                       _signature(kwargs) if kwargs else None)
                try:
                    entry = costs.get(key)
                except TypeError:  # an argument whose shape is no key
                    return self.uncosted(
                        'key', 'an argument of the update of optimizer {!r} '
                        'has a shape or dtype that cannot be a key: its '
                        'steps are not costed'.format(name), real_update,
                        lossfun, args, kwargs)
                # (a link initialised since the costing, by another step,
                # an evaluation or a call outside the updates: costed
                # again)
                if entry is not None and entry.settled and not (
                        entry.pending and _initialised(entry.pending)):
                    if entry.figures is None or lossfun is None:
                        # not costed again; or an update alone: the same
                        # work
                        calls.append(entry.figures)
                        return real_update(lossfun, *args, **kwargs)
                    return self.verify(key, entry, optimizer, real_update,
                                       lossfun, args, kwargs)
                if entry is None and len(costs) >= self.limit:
                    return self.uncosted(
                        'limit', 'more than limit={} argument shapes and '
                        'dtypes; iterations with new ones are not '
                        'costed'.format(self.limit), real_update, lossfun,
                        args, kwargs)
                return self.cost(name, key, entry, optimizer, real_update,
                                 lossfun, args, kwargs)
            except BaseException:
                # (an updater that catches it goes on: the step is not
                # costed, as a step of one update that fails is not)
                self.calls.append(None)
                raise
            finally:
                outside.depth = 0
                if watching:
                    hooks[hook_key] = outside
        return update

    def cost(self, name, key, entry, optimizer, real_update, lossfun, args,
             kwargs):
        """``real_update`` of arguments whose ``key`` has no settled
        ``entry``, run inside the hook: its figures, and the reference
        later steps of the key are checked against."""
        costs = self.costs
        calls = self.calls
        if lossfun is None and name not in self.warned:
            self.warned.add(name)
            self.bare = True
            _quiet_warning(
                'CostMonitor: optimizer {!r} was updated without a loss '
                'function (the updater ran forward and backward '
                'itself): those calls are costed one by one as they '
                'run; cost/memory_peak, cost/comm_bytes and '
                'cost/predicted_time are not reported for its '
                'steps'.format(name))
        hook = ComputationalCostHook(
            fma_1flop=False, comm=self.comm, memory=self.memory)
        # the FLOPs shown with fma_1flop, and those a calibration's
        # fits take (a multiply-add as 1, as its probes count): a
        # second hook's, inside
        hook_1 = ComputationalCostHook() if self.fma_1flop or \
            self.calibration is not None else None
        seen = _Calls(None, self.fma_1flop)
        forward_end = []  # how many records the forward pass made
        before = _param_state(optimizer)

        def done(nodes, loss):
            try:
                seen.graph = _Graph.of(nodes, loss,
                                       _cleared(optimizer))
            except Exception:  # ours: no later step is the same
                seen.graph = None
            forward_end.append(len(hook.records()))
        # the updates its loss function calls, as a checked step
        # gathers them (see verify)
        outer, self.nested = self.nested, []
        try:
            with _hooked(hook, hook_1):
                result = real_update(
                    None if lossfun is None else _forward(
                        lossfun, seen, done), *args, **kwargs)
        finally:
            nested, self.nested = self.nested, outer
        after = _param_state(optimizer)
        forward_time = None
        try:
            figures = _step_figures(hook)
            if self.fma_1flop:
                figures = figures._replace(
                    flops_1=_recorded_flops(hook_1))
        except Exception as e:  # ours: it must not stop the training
            figures = None
            _quiet_warning('CostMonitor: a step could not be costed, '
                           'its shapes are not costed again: {}: {}'
                           .format(type(e).__name__, e))
        if figures is not None and self.calibration is not None:
            # the predicted seconds: a calibration that cannot predict
            # the step (times beyond a float) takes nothing else away
            try:
                times, backward = _time_rows(hook_1, self.calibration)
                figures = figures._replace(predicted_time=sum(times))
                if backward and forward_end:
                    # the forward's, for a step whose backward differs
                    # (both hooks record every call)
                    n = len([r for r in
                             hook_1.records()[:forward_end[0]]
                             if r.params is not None])
                    forward_time = sum(times[:n])
            except Exception as e:
                if 'predict' not in self.warned:
                    self.warned.add('predict')
                    _quiet_warning('CostMonitor: cost/predicted_time is not '
                                   'reported for a step its calibration '
                                   'cannot predict: {}: {}'.format(
                                       type(e).__name__, e))
        # The reference of later steps: the forward's calls, the FLOPs
        # of the calls before each, the graph it left.
        flops_before = [0]
        for flops in seen.each:
            flops_before.append(flops_before[-1] + flops)
        before_1 = None if seen.each_1 is None else list(
            itertools.accumulate([0] + seen.each_1))
        # A step that made parameters or their state did one-off work,
        # as the first iteration does (see first_stands): its memory
        # peak and time are the next step's, its FLOPs stand.
        costs[key] = _Costed(
            figures, figures is None or self.first_stands or (
                not self.first and before == after), seen.calls,
            flops_before, seen.graph, forward_time, before_1,
            None if figures is None or lossfun is None
            else _Calls(seen.calls, self.fma_1flop),
            figures is not None and (entry is None or entry.replaceable),
            _uninitialised(() if self.optimizers is None
                           else self.optimizers.values()),
            tuple(nested))
        calls.append(figures)
        return result

    def uncosted(self, why, message, real_update, lossfun, args, kwargs):
        """``real_update`` of a call that is not costed: the step gets no
        figures, and the first such call for ``why`` a warning."""
        self.calls.append(None)
        if why not in self.warned:
            self.warned.add(why)
            _quiet_warning('CostMonitor: ' + message)
        return real_update(lossfun, *args, **kwargs)

    def verify(self, key, entry, optimizer, real_update, lossfun, args,
               kwargs):
        """``real_update`` of arguments whose ``key`` has the costed
        ``entry``, its forward's calls compared with the costed one's as
        they come, then the graph it leaves: the cached figures when they
        are the same; else (other work at the same shapes) the FLOPs of the
        forward's calls (the costed step's up to the first that differs,
        then each call's own) and of the backward and update, run inside
        a hook entered when the forward returns; no memory peak nor
        communication, which only a run hooked throughout knows; the
        predicted time when only the backward pass differs."""
        reference = entry.calls
        seen = entry.checker
        # (no step is checked inside another: an update called from a
        # checked update's loss function passes by the wrappers)
        seen.restart()
        late = []

        def differs(nodes, loss):
            if late:  # a later pass of the loss function (see below)
                return
            if not seen.diverged:
                seen.matched = len(nodes)  # each call matched
            # (a link it initialised: its backward and update differ)
            if seen.matched == len(reference) and not seen.diverged and \
                    entry.graph is not None and not entry.graph.outside \
                    and not (entry.pending and _initialised(entry.pending)):
                try:
                    if _same_graph(nodes, loss, entry.graph, optimizer):
                        return
                except Exception:  # ours: costed as a step that differs
                    pass
            # comm: the FLOPs of an all-reduce are the update's
            hook = ComputationalCostHook(fma_1flop=False, comm=self.comm)
            hook.__enter__()
            late.append(hook)
            if self.fma_1flop or self.calibration is not None:
                # (a multiply-add as 1: fma_1flop's, the calibration's)
                hook = ComputationalCostHook()
                hook.__enter__()
                late.append(hook)
            # The hooks count the rest of the step, a later pass of the
            # loss function too (an update that runs it twice, as SAM):
            # the check adds none of it (until its restart).
            seen.forward_postprocess = _UNCHECKED
        outer, self.nested = self.nested, []
        try:
            result = real_update(_forward(lossfun, seen, differs), *args,
                                 **kwargs)
        finally:
            nested, self.nested = self.nested, outer
            for hook in reversed(late):
                _exit_quietly(hook, sys.exc_info())
        if not late:
            if entry.replaceable:  # matched: it stands
                self.costs[key] = entry._replace(replaceable=False)
            if (nested or entry.nested) and tuple(nested) != entry.nested:
                # the same forward, other updates called from it: theirs
                # for the costed step's
                self.calls.append(_with_nested(entry, nested))
                return result
            self.calls.append(entry.figures)
            return result
        same_forward = not seen.diverged and seen.matched == len(reference)
        made = _initialised(entry.pending)
        if entry.replaceable:
            # one-off work in the step costed as the reference (no step
            # has matched it): the next step is costed as the reference
            self.costs[key] = entry._replace(settled=False,
                                             replaceable=False)
        elif 'differs' not in self.warned and not made:
            # (a link this step initialised: the next step of the key is
            # costed again, see wrap)
            self.warned.add('differs')
            _quiet_warning(
                'CostMonitor: a step did other work than the costed step '
                'with the same argument shapes ({}): its FLOPs are counted '
                'call by call; cost/memory_peak and cost/comm_bytes are not '
                'reported for such steps'.format(
                    'its function calls differ from call {} on'.format(
                        seen.matched + 1) if not same_forward else
                    'its backward pass runs into nodes made outside its '
                    'loss function' if entry.graph is not None and
                    entry.graph.outside else 'its backward pass differs'))
        try:
            rest = _step_figures(late[0])
            rest_1 = _recorded_flops(late[1]) if self.fma_1flop else None
            predicted = None
            if same_forward and entry.forward_time is not None:
                times, backward = _time_rows(late[1], self.calibration)
                if backward:  # added in the hook's order
                    predicted = sum(times, entry.forward_time)
        except Exception:  # ours: it must not stop the training
            step = None
        else:
            step = _Figures(
                entry.before[seen.matched] + seen.flops + rest.flops +
                sum([f for f, _ in nested]), None, None, predicted,
                None if rest_1 is None else
                entry.before_1[seen.matched] + seen.flops_1 + rest_1 +
                sum([f for _, f in nested]))
        self.calls.append(step)
        return result

    def figures(self, elapsed):
        """The observation of an iteration that took ``elapsed`` s."""
        out = {}
        if self.batch is not None and elapsed > 0:
            out['cost/samples_per_second'] = self.batch / elapsed
        if self.calibration is not None:
            # measured, so known for a step that is not costed too
            out['cost/time'] = elapsed
        calls = self.calls
        if not calls or None in calls:
            return out
        flops = calls[0].flops if len(calls) == 1 else \
            sum([c.flops for c in calls])
        if self.fma_1flop:  # keys that say so; the MFU's FLOPs as the peak's
            each_1 = [c.flops_1 for c in calls]
            if None not in each_1:  # a costing of ours that failed
                out['cost/flops_fma_1flop'] = flops_1 = sum(each_1)
                if elapsed > 0:
                    out['cost/flops_per_second_fma_1flop'] = \
                        flops_1 / elapsed
        else:
            out['cost/flops'] = flops
        if elapsed > 0:
            fps = flops / elapsed
            if not self.fma_1flop:
                out['cost/flops_per_second'] = fps
            if self.peak is not None:
                mfu = fps / self.peak
                if mfu < math.inf:
                    out['cost/mfu'] = mfu
                elif 'mfu' not in self.warned:  # a peak of a few FLOP/s
                    self.warned.add('mfu')
                    _quiet_warning(
                        'CostMonitor: cost/mfu is not reported: the FLOP/s '
                        'over the peak ({:g} FLOP/s) overflow a float'
                        .format(self.peak))
        if self.memory and all(c.memory_peak is not None for c in calls):
            # The highest update's: each is costed by a hook of its own,
            # which follows the arrays it makes.  What an earlier update
            # leaves alive is not added: a later update's cleargrads frees
            # the gradients of its model that an earlier backward made (a
            # GAN's), and the sum would be far above the step's peak.
            out['cost/memory_peak'] = max(c.memory_peak for c in calls)
        if self.comm is not None and \
                all(c.comm_bytes is not None for c in calls):
            out['cost/comm_bytes'] = sum(c.comm_bytes for c in calls)
        if self.calibration is not None:
            if all(c.predicted_time is not None for c in calls):
                out['cost/predicted_time'] = sum(
                    c.predicted_time for c in calls)
        return out


def _with_nested(entry, nested):
    """The figures of a step that did the costed ``entry``'s work but
    called other updates from its loss function (``nested``, as
    _nested_update gathers them): FLOPs only."""
    figures = entry.figures
    flops = figures.flops - sum([f for f, _ in entry.nested]) + \
        sum([f for f, _ in nested])
    flops_1 = None if figures.flops_1 is None else \
        figures.flops_1 - sum([f for _, f in entry.nested]) + \
        sum([f for _, f in nested])
    return _Figures(flops, None, None, None, flops_1)


def _unwrap(saved):
    for d, value in reversed(saved):
        if value is _MISSING:
            d.pop('update', None)
        else:
            d['update'] = value
