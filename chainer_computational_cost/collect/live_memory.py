"""Live memory during a run: how many bytes its arrays take after each
call (the figures made of it are in
:mod:`~chainer_computational_cost.analysis.memory`).

The hook sees every array a function call creates (``FunctionNode.apply``
holds its outputs when it calls the hook), forward and backward alike.
With ``ComputationalCostHook(memory=True)`` a :class:`Tracker` keeps a weak
reference to the buffer behind each new output (and each new array the
function keeps as an attribute for its backward) and adds its bytes; the
reference's callback takes them off when the buffer is freed.  So ``live``
after a call is exact for what it counts:

* memory, not arrays: a view owns nothing (its ``.base`` chain leads to the
  array that owns the buffer), and a buffer reached by several outputs
  counts once;
* only what the run created: an array the user passed in (or a parameter)
  counts nothing, nor do the views of it a call returns;
* scratch memory a call frees before it returns (im2col's columns, cuDNN's
  workspace) is not in ``live``: the calculators' scratch functions state
  it per call (``cost_calculators.scratch_of``), records keep it apart,
  and the run's peak (``memory_report``) is the highest ``live + scratch``
  of its calls; arrays made outside function calls (``xp.ones_like`` for
  the loss's initial gradient is a few bytes) are not counted.

An interrupt never leaves the figures wrong.  A signal's handler may raise
(a ``KeyboardInterrupt`` on Ctrl-C, a timer's exception) at any point
where Python checks for signals: a call, a loop's jump, a function's
start.  So every change of the tracker's state is one operation that a
signal cannot split, and every figure is derived from those changes when
it is read:

* adding a buffer is one ``list.append`` of its weak reference to
  ``Tracker.born``, once its fields are set (the index ``seen`` is written
  after it; a reading writes it when an interrupt came between);
* a buffer's freeing is one ``list.append`` of its weak reference to
  ``Tracker.dead``, by the reference's callback, which is ``list.append``
  itself (C: it runs no Python code in which an interrupt could be raised
  and lost);
* a reading (``Tracker.now``) folds each list into its first item, a
  tuple of the bytes (activations, gradients) added or taken off: it
  computes the new tuple in local variables, then replaces the items it
  folded by it in one slice assignment.  An interrupt before that leaves
  the list as it was, and the next reading folds the same items again;
  the marks a fold leaves meanwhile (a reference's ``counted``, an entry
  of ``seen``) only ever say what folding those items says.  A freed
  buffer's bytes are taken off only if its adding was folded
  (``counted``): a reference whose buffer died before it was added
  changes nothing;
* marking a buffer as the user's is an adding of 0 bytes; the gradient
  table is stored, and the arrays a node kept before its forward are
  forgotten, only once their arrays are marked: a mark cut short is done
  again (and changes nothing the second time).  Those arrays are held by
  weak references meanwhile: a call an interrupt cut short leaves nothing
  alive.

The price is a loop at each reading over the buffers added and freed
since the last one, which the hook ran anyway to add and take off bytes.
"""

from inspect import CO_OPTIMIZED
import sys
import weakref

import chainer
import numpy

from chainer_computational_cost.core.records import MemoryState


# Following live memory (the hook's side)

def _owner(a):
    """The array that owns the buffer of ``a`` (``a`` itself unless it is
    a view)."""
    base = getattr(a, 'base', None)  # bytes, a ctypes array: none
    while base is not None:
        a = base
        base = getattr(a, 'base', None)
    return a


class _Owned(weakref.ref):
    """A weak reference to a buffer's owner, with what its freeing takes
    off (nothing for a buffer of the user's: see Tracker); ``counted`` is
    set once a reading has folded its adding."""

    __slots__ = ('key', 'nbytes', 'grad', 'counted')


#: The array classes a node may keep (NumPy's, CuPy's when installed).
_ARRAY_TYPES = frozenset(chainer.get_array_types())


_ADAPTER = chainer.function.FunctionAdapter


_VARIABLE = chainer.Variable


def _kept(node):
    """The arrays ``node`` keeps as attributes, directly or in a list or
    tuple (a pooling's argmax indexes, a dropout's mask, Tree-LSTM's gates);
    for an old-style Function's adapter, the Function's too."""
    found = []
    for v in node.__dict__.values():
        t = type(v)
        if t in _ARRAY_TYPES:
            found.append(v)
        elif t is tuple or t is list:
            found += [a for a in v if type(a) in _ARRAY_TYPES]
    if type(node) is _ADAPTER:
        function = node.function
        if function is not None:
            found += _kept(function)
    return found


def _weak(a):
    """A weak reference to array ``a`` (or a callable returning it, for
    an array that takes none)."""
    try:
        return weakref.ref(a)
    except TypeError:
        return lambda: a


def _backward_stops():
    import chainer._backprop_utils as utils
    import chainer.function_node as function_node
    codes = [utils.backprop_step, function_node.grad,
             getattr(function_node, '_backprop', None)]
    for name in ('chainer._backprop', 'chainer.variable'):
        module = sys.modules.get(name)
        codes.append(getattr(module, '_backprop_to_all', None))
    return frozenset(f.__code__ for f in codes if f is not None)


#: Where the frames of a node's backward end (Chainer 6's and 7's loops).
_BACKWARD_STOPS = _backward_stops()


#: Chainer's step of one node's backward (6 and 7): once the backward has
#: returned, it sums each input's gradients (``F.add``, a call) while the
#: others wait in its ``grad_inputs``, lists of Variables by input.
_STEP = chainer._backprop_utils.backprop_step.__code__


def _array_of(v, found):
    # An array, or a Variable's array.
    t = type(v)
    if t in _ARRAY_TYPES:
        found.append(v)
    elif t is _VARIABLE:
        a = v.array
        if a is not None:
            found.append(a)


def _backward_locals(frame):
    """The arrays (and Variables' arrays) the frames of the backward
    running hold, from ``frame`` (which made a call) up to Chainer's
    backward loop: what a backward made outside any call (Maxout's
    indexes, Contrastive's labels repeated, an old-style Function's
    gradients waiting to be summed) is alive from then on.  The copy of a
    frame's locals ``f_locals`` makes (Python < 3.13) is emptied at once,
    so that it keeps nothing alive.

    Returns ``(arrays, by_loop)``: ``by_loop`` when the call was made by
    Chainer's loop itself, outside any node's backward (summing the
    initial gradients given for one output twice), whose arrays are then
    the pass's initial gradients, not a backward's."""
    found = []
    for _ in range(16):
        if frame is None:
            break
        code = frame.f_code
        step = code is _STEP
        if code in _BACKWARD_STOPS and not step:
            return found, True
        names = frame.f_locals
        if step:
            waiting = names.get('grad_inputs')
            if isinstance(waiting, dict):
                for listed in waiting.values():
                    if type(listed) is list:
                        for v in listed:
                            _array_of(v, found)
        else:
            for v in names.values():
                _array_of(v, found)
        if type(names) is dict and code.co_flags & CO_OPTIMIZED:
            names.clear()
        if step:
            break
        frame = frame.f_back
    return found, False


def _leaf_grads(node):
    """The gradients the inputs of ``node`` that are leaves (parameters,
    the user's Variables) have before its backward."""
    return [x.grad for x in node.inputs if x.creator_node is None]


class Tracker(object):
    """Live bytes of the arrays one ``with`` block creates.

    Read them through :meth:`now`: ``(activations, gradients)``, bytes
    created by forward and by backward calls that are still alive.
    ``born`` and ``dead`` are the logs of buffers added and freed (see the
    module's docstring: each change is one ``list.append``, each first
    item the bytes folded so far); ``seen`` holds, by id, a weak reference
    to the owner of every buffer met: one counted, or one of the user's,
    which counts nothing (anything the block did not make: what it was
    given, the parameters, arrays made before it).
    """

    __slots__ = ('born', 'dead', 'seen', 'pre', 'table', '_freed',
                 '__weakref__')

    def __init__(self):
        self.born = [(0, 0)]
        self.dead = [(0, 0)]
        self.seen = {}
        # Arrays a node kept before its forward ran (see before).
        self.pre = {}
        self.table = None
        self._freed = self.dead.append

    def drain(self):
        """Fold the buffers added and freed since the last reading into
        the first items of ``born`` and ``dead``; returns those two
        tuples."""
        born = self.born
        seen = self.seen
        # Folding nothing new rewrites the first item as it was: no test
        # of the lengths, which an interrupt could not split either.
        n = len(born)
        (act, grad), *added = born[:n]
        for ref in added:
            other = seen.get(ref.key)
            # A second reference to a buffer met before (added again when
            # an interrupt came between take's append and its index)
            # counts nothing: the first one added decides whether it is
            # the user's.  A decision once marked stays.
            if other is not ref:
                if other is None or other() is None or not getattr(
                        other, 'counted', False):
                    seen[ref.key] = ref
                elif not getattr(ref, 'counted', False):
                    continue
            ref.counted = True
            if ref.grad:
                grad += ref.nbytes
            else:
                act += ref.nbytes
        born[:n] = [(act, grad)]
        dead = self.dead
        n = len(dead)
        (act, grad), *freed = dead[:n]
        for ref in freed:
            if getattr(ref, 'counted', False):
                if ref.grad:
                    grad += ref.nbytes
                else:
                    act += ref.nbytes
                if seen.get(ref.key) is ref:
                    del seen[ref.key]
        dead[:n] = [(act, grad)]
        return born[0], dead[0]

    def now(self):
        """``(activations, gradients)``: the bytes alive now."""
        (act, grad), (act_off, grad_off) = self.drain()
        return act - act_off, grad - grad_off

    def mark(self, a):
        """``a`` is the user's: its buffer counts nothing, ever."""
        self.take(a, None, False)

    def before(self, node):
        """Before ``node``'s forward: the arrays it already keeps were
        given to it (by the user, in a forward pass)."""
        found = _kept(node)
        if found:
            # Weak references: an interrupt (or an error in the forward)
            # may cut the call short before add, and the entry must not
            # keep the arrays alive.  Such an entry stays until a node of
            # the same id is added, which marks the arrays still alive:
            # marking changes nothing for an array a call made (counted
            # already), and the others were given to a node before its
            # forward, the user's.
            self.pre[id(node)] = [_weak(a) for a in found]

    def add(self, outputs, inputs, backward, node, frame=None):
        """Count the buffers a call created and keeps, each once: those of
        its ``outputs`` and of the arrays ``node`` keeps (see _kept); in a
        backward call (``backward``), also inputs nothing made before
        (made by a backward outside any call, such as a sign mask).  In a
        forward call, inputs and what the node kept before its forward
        are the user's.  Returns :meth:`now`."""
        take = self.take
        mark = self.mark
        pre = self.pre.get(id(node)) if self.pre else None
        if backward:
            grad = True
            found, by_loop = _backward_locals(frame)
            # What the loop itself sums are initial gradients, as
            # backward_started takes them: the user's or Chainer's seed.
            given = mark if by_loop else self._take_gradient
            for a in inputs:
                if a is not None:
                    given(a)
            for a in found:
                given(a)
        else:
            grad = False
            for a in inputs:
                if a is not None:
                    mark(a)
            if pre:
                for ref in pre:
                    a = ref()
                    if a is not None:
                        mark(a)
        if pre is not None:
            # forgotten once marked: an interrupt before marks them again
            del self.pre[id(node)]
        if outputs is not None:
            for a in outputs:
                if a is not None:
                    take(a, grad, True)
        for a in _kept(node):
            take(a, grad, True)
        return self.now()

    def _take_gradient(self, a):
        self.take(a, True, True)

    def backward_started(self, node, in_data, out_grad, table):
        """Before ``node``'s backward: what it holds that nothing counted
        was made before the block or by the user: its inputs, the arrays
        it keeps, the gradients given to it and those its inputs that are
        leaves already have (added to theirs).  ``table``: the gradients
        of the backward pass running (Chainer's GradTable), which holds
        the initial ones (given, or made by ``backward()`` and
        ``chainer.grad``) when its first node starts."""
        mark = self.mark
        if table is not None and (self.table is None
                                  or self.table() is not table):
            try:
                initial = [v.array for listed in table.grads.values()
                           for v in listed if v is not None]
            except Exception:  # not Chainer's GradTable
                initial = ()
            for a in initial:
                if a is not None:
                    mark(a)
            # Only once they are marked: an interrupt marks them again.
            self.table = weakref.ref(table)
        for arrays in (in_data, out_grad, _kept(node), _leaf_grads(node)):
            for a in arrays:
                if a is not None:
                    mark(a)

    def backward_done(self, node, grads):
        """After ``node``'s backward: the gradients it returned (an
        old-style Function makes them outside any call) and the arrays it
        kept meanwhile.  ``grads``: lists of gradient Variables."""
        take = self.take
        for listed in grads:
            for v in listed:
                if v is not None:
                    a = v.array
                    if a is not None:
                        take(a, True, True)
        for a in _kept(node):
            take(a, True, True)

    def inherit(self, old, new):
        """``new`` takes the place of ``old`` (a state array an optimizer
        replaced): counted as ``old`` is (the run's if the run made it,
        else the user's)."""
        try:
            base = old.base
            o = old if base is None else _owner(base)
            ref = self.seen.get(id(o))
            counted = ref is not None and ref() is o and ref.nbytes > 0
        except Exception:  # an array without .base (ChainerX's)
            return
        if counted:
            self.take(new, ref.grad, True)
        else:
            self.mark(new)

    def take(self, a, grad, count):
        # Count the buffer of ``a`` (``count``: as a gradient's if
        # ``grad``, else as an activation's) or mark it as the user's,
        # unless it was met before.
        try:
            base = a.base
            o = a if base is None else _owner(base)
            key = id(o)
            ref = self.seen.get(key)
            if ref is not None and ref() is not None:
                return
            nbytes = 0
            if count:
                nbytes = getattr(o, 'nbytes', None)
                if nbytes is None:  # a view of a non-array buffer
                    o = a
                    key = id(a)
                    nbytes = a.nbytes
                elif not nbytes and type(o) is numpy.ndarray:
                    nbytes = 1  # NumPy allocates a byte even for no item
            ref = _Owned(o, self._freed)
        except Exception:
            # An array without .base or .nbytes (ChainerX's), or one that
            # takes no weak reference: not counted, and never an error in
            # the user's run.
            return
        ref.key = key
        ref.nbytes = nbytes
        ref.grad = grad
        self.born.append(ref)  # the change; the index after it
        self.seen[key] = ref


class _LinkWatcher(chainer.LinkHook):
    """Follows the links called in a block (and the parameters the calls
    read, see :meth:`inputs`): the bytes of their parameters,
    each parameter once (read after every call of its link: lazily
    initialised ones exist by then, and one initialised by hand between
    two calls counts too).  A link's persistent arrays (running
    statistics) are the user's without it: a node is given them before
    its forward (kept, or as inputs), and Tracker marks those."""

    def __init__(self, name):
        self.name = name
        self.params = {}

    def forward_postprocess(self, args):
        self.inputs(args.link.params())

    def inputs(self, inputs):
        """Count the parameters among the ``inputs`` of a forward call
        (the variables FunctionNode.apply was given), as a called link's
        are: a Chain's own weight that a method of it uses (the Chain
        itself never called) is the model's all the same."""
        for x in inputs:
            if isinstance(x, chainer.Parameter) and x.array is not None:
                self.params[id(x)] = x.array.nbytes


class Follower(object):
    """What a hook with ``memory=True`` keeps: the tracker of the block
    running (or of the last one), its link watcher, and the figures of
    the last block at its exit."""

    def __init__(self):
        self.tracker = Tracker()
        self.watcher = None
        self.exit = None

    def start(self, name):
        """At the entry of a block: a fresh tracker (arrays of an earlier
        block are not this block's)."""
        self.tracker = Tracker()
        self.exit = None
        self.watcher = _LinkWatcher(name + '-memory')
        self.watcher.__enter__()

    def stop(self):
        """At the exit of a block: what is still alive, and the
        parameters' bytes."""
        watcher, self.watcher = self.watcher, None
        if watcher is None:
            return
        watcher.__exit__(None, None, None)
        self.exit = MemoryState(at_exit=self.tracker.now(),
                                params=sum(watcher.params.values()))

    def __deepcopy__(self, memo):
        # A copy of a hook is not active: it keeps the figures, not the
        # weak references to the run's buffers (those cannot be copied).
        twin = Follower()
        twin.exit = self.state()
        return twin

    def state(self):
        """The figures of the last block (inside a block: now)."""
        if self.exit is not None:
            return self.exit
        params = self.watcher.params if self.watcher is not None else {}
        return MemoryState(at_exit=self.tracker.now(),
                           params=sum(params.values()))
