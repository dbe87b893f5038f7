"""The function hook that records the theoretical cost of every call."""

import copy
import inspect
import math
import numbers
import operator
import sys
import threading
import time
import warnings
import weakref

import chainer
import numpy

from chainer_computational_cost.analysis.aggregation import ancestors
from chainer_computational_cost.collect import live_memory
from chainer_computational_cost.collect import mpi_recorder
from chainer_computational_cost.collect import updates as _update
from chainer_computational_cost.core import checks
from chainer_computational_cost.core.records import error_text
from chainer_computational_cost.core.records import fresh
from chainer_computational_cost.core.records import link_depth
from chainer_computational_cost.core.records import R_LIVE
from chainer_computational_cost.core.records import R_SCRATCH
from chainer_computational_cost.core.records import R_STATE
from chainer_computational_cost.core.records import Record
from chainer_computational_cost.core.records import ReportWarning
from chainer_computational_cost.cost_calculators import built_in
from chainer_computational_cost.cost_calculators import calculator_for
from chainer_computational_cost.cost_calculators import calculators
from chainer_computational_cost.cost_calculators import check_signature
from chainer_computational_cost.cost_calculators import Cost
from chainer_computational_cost.cost_calculators import Elements
from chainer_computational_cost.cost_calculators import FLOP_CONVENTIONS
from chainer_computational_cost.cost_calculators import scratch_of
from chainer_computational_cost.cost_calculators import skips_out_shapes
from chainer_computational_cost.cost_calculators import update_calculators
from chainer_computational_cost.cost_calculators import validate_cost
from chainer_computational_cost.cost_calculators import with_keywords
from chainer_computational_cost.report import cost_report as report
from chainer_computational_cost.report import gathered as mn


# ``FunctionNode.apply`` (Chainer 6 and 7) runs ``forward`` once, keeps
# its result in the local variable ``outputs`` and then calls the hooks'
# ``forward_postprocess`` itself.  Reading that local from the caller's frame
# gives the output shapes without running anything twice and without
# touching the node (an instance attribute set on a node, even for one call,
# slows down attribute access on every node of its class).
_APPLY_CODE = chainer.FunctionNode.apply.__code__

# But ``frame.f_locals`` copies all of apply's locals into a dict (raising
# and clearing a KeyError for each unbound one): a third of the hook's time
# per call.  The last thing apply does before calling the hooks is
# ``chainer.is_arrays_compatible(outputs)``, looked up on the module at each
# call; while a hook is active that name is a spy that notes
# ``(id of its caller's frame, outputs)`` (in one store, so that a thread
# switch cannot pair one call's frame with another's outputs) and returns
# what the real function does.  The hook takes the noted outputs only when
# the note is from the very apply frame that calls it, which is alive, so
# its id is its own: a note from another thread, from a nested call or from
# any other caller is not, and the hook reads f_locals then.
_REAL_CHECK = chainer.is_arrays_compatible
_SPY_WORKS = 'is_arrays_compatible' in _APPLY_CODE.co_names
_seen = [None]
_is_ndarray = numpy.ndarray.__instancecheck__  # isinstance(x, ndarray), in C
#: Thread id -> its active hooks using the spy (changed under _ENTER_LOCK):
#: only those threads' calls are noted, as only their hooks take the notes;
#: another thread's note would keep its call's outputs alive.
_spying = {}
_get_ident = threading.get_ident


def _spy(arrays):
    """chainer.is_arrays_compatible while a hook is active (see above)."""
    if _get_ident() in _spying:
        _seen[0] = (id(_getframe(1)), arrays)
    # NumPy arrays alone are compatible, which is what Chainer's function
    # answers through three list comprehensions (about 1 us a call in a
    # loop of small calls, more than a third of this hook's own work);
    # anything else goes to it.
    if type(arrays) is tuple and all(map(_is_ndarray, arrays)):
        return True
    return _REAL_CHECK(arrays)


def _start_spying():
    if _SPY_WORKS and not _spying and \
            chainer.is_arrays_compatible is _REAL_CHECK:
        chainer.is_arrays_compatible = _spy
    thread = _get_ident()
    _spying[thread] = _spying.get(thread, 0) + 1


def _stop_spying():
    thread = _get_ident()
    _spying[thread] -= 1
    if not _spying[thread]:
        del _spying[thread]
    if not _spying:
        if chainer.is_arrays_compatible is _spy:
            chainer.is_arrays_compatible = _REAL_CHECK
        _seen[0] = None  # keeps no arrays alive


# C-level: a list comprehension would run a Python frame per call.
_shape = operator.attrgetter('shape')

_getframe = sys._getframe

_ADAPTER = chainer.function.FunctionAdapter

# One frame of this code on the stack per link being called (with hooks).
_LINK_CALL_CODE = chainer.Link.__call__.__code__

_INF = math.inf


def _is_real(value):
    """Whether a clock's reading is a number of seconds: a real number
    (Python's or NumPy's), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


class _CudaStart(object):
    """The start of a call on CuPy arrays: a CUDA event recorded before
    it (a type no clock returns, so that any reading of one is seconds)."""

    __slots__ = ('event',)

    def __init__(self, event):
        self.event = event


# What a hook holds only while calls run: not copied by deepcopy.
_TRANSIENT = frozenset(['_link_stack', '_backward_links', '_clock',
                        '_comm_saved', '_anchor', '_base_anchor'])

# Names are handed out at __enter__ under this lock, with the check that
# a hook is not active twice at once.
_ENTER_LOCK = threading.Lock()
_NAME_PREFIX = 'ComputationalCostHook-'

# What a calculator returns in the common case, checked in the hook itself.
_TUPLES = (tuple, Cost)
# Fields of a record (see records.py).
_N_FIELDS = R_STATE + 1


def _backward_codes():
    """Ids of the code objects that drive a backward pass in Chainer 6 and
    7: a call made while one of them is on the stack is a backward call,
    the accumulation of gradients into ``.grad`` included."""
    import chainer.function_node
    import chainer.variable
    codes = [chainer.function_node.grad.__code__]
    for module_name in ('chainer._backprop', 'chainer.variable'):
        module = sys.modules.get(module_name)
        if module is None:
            try:
                module = __import__(module_name, fromlist=['_'])
            except ImportError:
                continue
        f = getattr(module, '_backprop_to_all', None)
        if f is not None:
            codes.append(f.__code__)
    return frozenset(id(c) for c in codes)


_BACKWARD_IDS = _backward_codes()


def _caller_locals(*names):
    """The values of local variables ``names`` (None when missing) of the
    caller of a hook method (Chainer's backward loop), which keep living
    only as long as it keeps them (see _locals_of)."""
    return _locals_of(_getframe(2), names)


def _locals_of(frame, names):
    """The values of local variables ``names`` (None when missing) of
    ``frame``: Python < 3.13 keeps a copy of a frame's locals for
    ``f_locals``, emptied here (never a module's), so that the values live
    only as long as the frame keeps them."""
    found = frame.f_locals
    values = [found.get(name) for name in names]
    if type(found) is dict and frame.f_code.co_flags & inspect.CO_OPTIMIZED:
        found.clear()
    return values


def _calling_link(frame):
    """The link whose own ``__call__`` ``frame`` runs (a Chainer v1-v4
    model overriding ``Link.__call__`` instead of defining ``forward``),
    else None.  Chainer calls link hooks from ``Link.__call__`` only, so
    the hook finds such a call on the stack.  Only the method that
    ``type(link).__call__`` is (or wraps, through ``functools.wraps``)
    counts: a base class's ``__call__`` reached through ``super()`` is
    the same call of the same link, and a mixin's ``__call__`` that
    ``Link.__call__`` runs as the forward is the link call itself."""
    code = frame.f_code
    if code.co_name != '__call__' or code is _LINK_CALL_CODE or \
            not code.co_argcount:
        return None
    link = _locals_of(frame, code.co_varnames[:1])[0]
    if not isinstance(link, chainer.Link):
        return None
    method = getattr(type(link), '__call__', None)
    for _ in range(8):  # a few decorators deep; a cycle of them ends too
        if method is None:
            break
        if getattr(method, '__code__', None) is code:
            return link
        method = getattr(method, '__wrapped__', None)
    return None


#: What _new_stack returns for a stack that runs the ``__call__`` of a
#: link (see _calling_link) that the link stack does not hold yet.
_UNOPENED = object()


def _shapes(arrays):
    """Shapes of ``arrays``, None for a missing array."""
    try:
        return tuple(map(_shape, arrays))
    except AttributeError:
        return tuple([None if a is None else a.shape for a in arrays])


def apply_outputs(frame):
    """The outputs of the ``FunctionNode.apply`` running in ``frame`` (its
    local ``outputs``, made before it calls the hooks'
    ``forward_postprocess``): a tuple of arrays, or None when ``frame`` is
    not apply's."""
    outputs = (frame.f_locals.get('outputs')
               if frame.f_code is _APPLY_CODE else None)
    return outputs if type(outputs) is tuple else None


def _observe(caller, in_data):
    """(outputs, shapes, dtype, itemsize, output itemsize) of a call, when
    the hook's inline path cannot: not called by FunctionNode.apply
    (outputs unknown: None), missing arrays, no inputs or no outputs.  The
    first input's dtype is None if there is no array; a missing itemsize
    counts 4 bytes (the output's is the input's when outputs are unknown).
    """
    outputs = apply_outputs(caller)
    if outputs is not None and type(in_data) is tuple:
        shapes = _shapes(in_data + outputs)
    else:
        shapes = _shapes(in_data)
        outputs = None
    dtype = _first_dtype(in_data)
    out_dtype = dtype if outputs is None else _first_dtype(outputs)
    return (outputs, shapes, dtype,
            4 if dtype is None else dtype.itemsize,
            4 if out_dtype is None else out_dtype.itemsize)


def _checked(result, calc, type_name, itemsize, out_itemsize):
    """A calculator's result, validated (validate_cost), with memory counts
    in bytes: those that carry their bytes (Elements) are exact, plain ones
    are multiplied by the itemsize of the first input (reads) or output
    (writes)."""
    flops, mread, mwrite, params = validate_cost(result, calc, type_name)
    mread = mread.nbytes if type(mread) is Elements else mread * itemsize
    mwrite = (mwrite.nbytes if type(mwrite) is Elements
              else mwrite * out_itemsize)
    if (mread | mwrite) >> 63:
        raise _too_many_bytes(type_name)
    return flops, mread, mwrite, params


def _too_many_bytes(type_name):
    return ValueError('the cost calculator for {} returned more than 2**63 '
                      'bytes'.format(type_name))


def _first_dtype(arrays):
    """The dtype of the first array (None if there is none)."""
    try:
        return arrays[0].dtype  # the usual case, at the cost of one lookup
    except (AttributeError, IndexError):
        pass
    for x in arrays:
        dtype = getattr(x, 'dtype', None)
        if dtype is not None:
            return dtype
    return None


def _trie_walk(frame, anchor):
    """``(node, backward, link depth)`` of ``frame``'s stack from the trie
    of ``anchor`` (see ComputationalCostHook._new_stack), or None when the
    trie does not know it or ``anchor`` is not on this stack.
    forward_postprocess has this walk inline: it runs at every call."""
    stop_code, stop_id, level = anchor[:3]
    try:
        while frame is not None:
            code = frame.f_code
            lasti = frame.f_lasti
            entry = level[lasti]
            if entry[0] is not code:
                entry = level[lasti, id(code)]
            level = entry[1]
            if code is stop_code and id(frame) == stop_id:
                break
            frame = frame.f_back
        return level[None]
    except KeyError:
        return None


def _top_anchor(tries):
    """The anchor of a hook not active: stacks go up to the top frame."""
    return (None, None, tries.setdefault(id(None), {}), None, False, 0, None)


def _pick_name(hooks):
    """``ComputationalCostHook-<k>``: k is 1 + the number of hooks of this
    class among ``hooks`` (a thread's active hooks), raised until the name
    is free; an outer hook is ``-1``, one nested in it ``-2``."""
    k = 1 + sum(1 for name in hooks if name.startswith(_NAME_PREFIX))
    while _NAME_PREFIX + str(k) in hooks:
        k += 1
    return _NAME_PREFIX + str(k)


class _LinkObserver(chainer.LinkHook):
    """Follows link calls for a ComputationalCostHook: the path of the
    links being called, and per path the calls and parameter count.

    The stack of link calls is checked against the interpreter's own: an
    entry holds the ``Link.__call__`` frame of its call (alive while the
    call runs), and a link whose forward raised never reaches its
    postprocess, so at each link call the entries above the frame of the
    nearest enclosing link call are dropped.  A postprocess of a link that
    has no entry (called before the hook was entered) changes nothing.

    A link whose class overrides ``__call__`` (Chainer v1-v4 style) is
    called without ``Link.__call__``, so without link hooks: its call is
    found on the stack, on the slow paths only (a link call whose stack
    is not the usual one from the link call on top, a function call whose
    stack is new), and gets an entry of five fields, its ``__call__``
    frame first and the link last, opened there (see enclosing) and
    closed when a later call finds that frame no longer running.
    """

    def __init__(self, owner):
        self.name = owner.name + '-links'
        self._owner = owner
        # Per path [n_calls, n_params, bytes of those parameters]; bumped
        # at each change of it (the reports' cache key).
        self.links = {}
        self.version = 0
        # In this with block (the tree may change between blocks):
        # (parent path, id(link)) -> (path, weak reference to the link);
        # id(link) -> [weak reference to it, {id(descendant): its path
        # under the link}, whether walked again], the trees of the links
        # that called others.
        self.paths = {}
        self.trees = {}
        # path -> {id(link): weak reference} of the links not called but
        # between a link call and a link it called (a ChainList looped
        # over): the path has a row, their parameters counted as their
        # descendants' are measured.
        self.between = {}
        # (path, id(link)) -> weak reference to each link measured in
        # this block: measured again at its exit.
        self.measured = {}
        # (path, id(link)) -> {id(param): (size, nbytes)} of that link, in
        # this with block; per path the union of its links' parameters.
        self.param_sizes = {}
        self.path_sizes = {}
        # (path, id(link)) -> weak reference to each link overriding
        # __call__ called in this with block: measured when its call is
        # found to have returned, or at the block's exit.
        self.overriding = {}
        # id(link) -> weak reference to each link called at the top of
        # this with block (path '/'): recomputed in a backward pass
        # (F.forget(model, x)), it is still the root, not a child of it.
        self.roots = {}

    def forward_preprocess(self, args):
        owner = self._owner
        stack = owner._link_stack
        frame = _getframe(1)  # this call's Link.__call__
        # The stack above this call's frame stays as it is while the call
        # runs: found once here, it is where the stacks of the calls inside
        # begin (the anchor, see ComputationalCostHook._new_stack).  The
        # usual case: called in the link call on top of the stack, whose
        # anchor's trie knows the frames in between, the only link call
        # among them being that one (its anchor's depth + 1).
        found = None
        if stack:
            above = stack[-1][3]
            found = _trie_walk(frame.f_back, above)
            if found is not None and found[2] == above[5] + 1:
                parent = stack[-1][2]
            else:
                found = None
        link = args.link
        same = False
        if found is None:
            parent, above = self.enclosing(frame.f_back)
            found = owner._stack_at(frame.f_back, above)
            # An overriding __call__ handing over to Link.__call__
            # (super().__call__): the same call of the same link.
            same = (len(stack) > 0 and len(stack[-1]) == 5 and
                    stack[-1][1] == id(link))
            if not stack and self._is_root(link):
                parent = None  # recomputed in a backward pass
        if same:
            path = parent
        elif parent is None:
            path = '/'
            self.roots[id(link)] = weakref.ref(link)
        else:
            hit = self.paths.get((parent, id(link)))
            if hit is not None and hit[1]() is link:
                path = hit[0]
            else:
                path = self._child_path(parent, link,
                                        stack[-1] if stack else None)
        node = found[0]
        tries = owner._tries
        trie = tries.get(id(node))
        if trie is None:
            trie = tries[id(node)] = {}
        anchor = (_LINK_CALL_CODE, id(frame), trie, node, found[1],
                  found[2], path)
        stack.append((frame, id(link), path, anchor))
        owner._anchor = anchor
        info = self.links.get(path)
        if info is None:
            self.links[path] = [1, None, None]
        elif not same:
            info[0] += 1
        self.version += 1

    def _is_root(self, link):
        """Whether ``link`` was called at the top of this with block."""
        ref = self.roots.get(id(link))
        return ref is not None and ref() is link

    def _child_path(self, parent, link, caller):
        """The path of ``link`` called in the link call at ``parent``,
        whose stack entry is ``caller`` (None for none, as in a backward
        pass), kept for the next calls: ``parent`` and where ``link`` sits
        in the tree of the calling link, so that the links between them
        (a ChainList looped over, ``self.a.conv(x)``) are in it; else
        (not in that tree) ``parent`` and its name."""
        hit = self.paths.get((parent, id(link)))
        if hit is not None and hit[1]() is link:
            return hit[0]
        # (a link overriding __call__ is the entry's last field; else the
        # entry's frame is Link.__call__'s, of the calling link)
        calling = None if caller is None else caller[4] \
            if len(caller) == 5 else caller[0].f_locals.get('self')
        under = self._under(calling, link)
        if under is None:
            under = '/' + (link.name or type(link).__name__)
        elif under.count('/') > 1:
            self._add_between(parent, under, calling)
        path = parent + under[1:] if parent == '/' else parent + under
        self.paths[parent, id(link)] = path, weakref.ref(link)
        return path

    def _add_between(self, parent, under, link):
        """Rows for the links between the calling ``link``, at ``parent``,
        and the one it called at ``under`` below it, which were not
        called."""
        path = parent
        for name in under.split('/')[1:-1]:
            link = _child(link, name)
            if link is None:  # (a tree that namedlinks walks otherwise)
                return
            path = path + name if path == '/' else path + '/' + name
            refs = self.between.setdefault(path, {})
            ref = refs.get(id(link))
            if ref is None or ref() is not link:
                refs[id(link)] = weakref.ref(link)
                if path not in self.links:
                    self.links[path] = [0, None, None]
                self._measure_between(path)

    def _under(self, caller, link):
        """``'/a/b'``: the path of ``link`` in the tree of ``caller`` (the
        first that ``namedlinks`` gives, as for the updates' parameters),
        or None when it is not there."""
        if not isinstance(caller, chainer.Link):
            return None
        name = link.name
        if _child(caller, name) is link:  # the usual case: a child
            return '/' + name
        known = self.trees.get(id(caller))
        if known is None or known[0]() is not caller or (
                id(link) not in known[1] and not known[2]):
            # walked once a caller and block, and once again for a link
            # not found in it (added to the tree since): not at each
            # link it does not hold (a list of links, links made in the
            # forward pass), whose paths are kept
            tree = {}
            try:
                for path, below in caller.namedlinks(skipself=True):
                    tree.setdefault(id(below), path)
            except Exception:  # a Link whose tree cannot be walked
                pass
            again = known is not None and known[0]() is caller
            known = self.trees[id(caller)] = (weakref.ref(caller), tree,
                                              again)
        return known[1].get(id(link))

    def enclosing(self, outer):
        """``(path of the innermost link call running or None, its
        anchor)`` for a call made in frame ``outer``, after dropping the
        entries of calls that raised (or, overriding ``__call__``, have
        returned) and opening the calls of links overriding ``__call__``
        not opened yet: the nearest ``Link.__call__`` frame, or opened
        ``__call__`` frame, from ``outer`` up in the block is the
        enclosing call's.  With none, the anchor is the block's entry and,
        in a backward pass (a recomputation, F.forget), the path is the
        link of the node being differentiated."""
        owner = self._owner
        stack = owner._link_stack
        base = owner._base_anchor
        entry_code = base[0]
        entry_id = base[1]
        calls = []  # (frame, link) overriding __call__, innermost first
        while outer is not None:
            code = outer.f_code
            if code is _LINK_CALL_CODE:
                break
            if code is entry_code and id(outer) == entry_id:
                outer = None
                break
            if code.co_name == '__call__':
                if any(entry[0] is outer for entry in stack):
                    break  # opened
                link = _calling_link(outer)
                if link is not None:
                    calls.append((outer, link))
            outer = outer.f_back
        while stack and stack[-1][0] is not outer:
            self._close(stack.pop())  # a call that raised (or returned)
        for frame, link in reversed(calls):
            self._open(frame, link)
        if stack:
            return stack[-1][2], stack[-1][3]
        if owner._backward_links:
            return owner._backward_links[-1][1], base
        return None, base

    def _open(self, frame, link):
        """Push the call of ``link``, running its own ``__call__`` in
        ``frame``, on the link stack, as forward_preprocess does for a
        call through ``Link.__call__``; its anchor is that frame."""
        owner = self._owner
        stack = owner._link_stack
        if stack:
            parent, above = stack[-1][2], stack[-1][3]
        else:
            above = owner._base_anchor
            bw = owner._backward_links
            parent = bw[-1][1] if bw and not self._is_root(link) else None
        path = '/' if parent is None else self._child_path(
            parent, link, stack[-1] if stack else None)
        if parent is None:
            self.roots[id(link)] = weakref.ref(link)
        # The frames between it and the enclosing call run no such
        # __call__ (those are opened outermost first).
        found = (_trie_walk(frame.f_back, above) or
                 owner._new_stack(frame.f_back, above, False) or
                 owner._new_stack(frame.f_back, owner._base_anchor, False))
        node = found[0]
        trie = owner._tries.setdefault(id(node), {})
        anchor = (frame.f_code, id(frame), trie, node, found[1], found[2],
                  path)
        stack.append((frame, id(link), path, anchor, link))
        owner._anchor = anchor
        self.overriding[path, id(link)] = weakref.ref(link)
        info = self.links.get(path)
        if info is None:
            self.links[path] = [1, None, None]
        else:
            info[0] += 1
        self.version += 1

    def _close(self, entry):
        """An entry taken off the link stack: the parameters of a link
        overriding ``__call__`` are measured once its call has returned
        (lazily initialised ones exist then)."""
        if len(entry) == 5 and (entry[2], entry[1]) not in self.param_sizes:
            self._measure(entry[2], entry[4])

    def forward_postprocess(self, args):
        owner = self._owner
        stack = owner._link_stack
        frame = _getframe(1)
        top = len(stack) - 1
        for i in range(top, -1, -1):
            if stack[i][0] is frame:
                break
        else:
            return  # called before the block was entered
        path = stack[i][2]
        if i != top:
            # calls that raised, or overriding __call__ and returned
            for entry in stack[i + 1:]:
                self._close(entry)
        del stack[i:]  # its own entry and any a raising callee left
        owner._anchor = stack[-1][3] if stack else owner._base_anchor
        link = args.link
        if (path, id(link)) not in self.param_sizes:
            # After the call: lazily initialised parameters exist now.
            self._measure(path, link)

    def _measure(self, path, link):
        """Count the parameters of ``link``, called at ``path``, in its
        path's (once per with block)."""
        measured = self.param_sizes
        self._count(path, link, _param_sizes(link, path, measured))
        if self.between:
            for above in ancestors(path)[:-1]:
                if above in self.between:
                    self._measure_between(above)

    def _measure_between(self, path):
        """Count the parameters of the link not called at ``path`` (see
        between) as they are now: all of them, its children's included,
        walked again as its descendants' lazily initialised ones come."""
        for ref in list(self.between[path].values()):
            link = ref()
            if link is not None:
                self._count(path, link,
                            _param_sizes(link, path, self.param_sizes))

    def _count(self, path, link, sizes):
        """``sizes`` (see _param_sizes), the parameters of ``link`` at
        ``path``, in its path's counts."""
        self.param_sizes[path, id(link)] = sizes
        self.measured[path, id(link)] = weakref.ref(link)
        merged = self.path_sizes.setdefault(path, {})
        merged.update(sizes)
        info = self.links[path]
        info[1] = int(sum(n for n, _ in merged.values()))
        info[2] = int(sum(b for _, b in merged.values()))
        self.version += 1

    def not_called(self, links):
        """Links whose parameters the block updated without calling them,
        ``((path, link), ...)``: each path not seen yet gets the link's
        parameter count and no call, so that a parent's count is its
        children's."""
        for path, link in links:
            if path not in self.links:
                sizes = [(p.size, p.array.nbytes) for p in link.params()
                         if p.array is not None]
                self.links[path] = [0, int(sum(n for n, _ in sizes)),
                                    int(sum(b for _, b in sizes))]
                self.version += 1

    def __exit__(self, *args):
        # Links overriding __call__ whose return no later call saw.
        for (path, me), ref in self.overriding.items():
            link = ref()
            if link is not None and (path, me) not in self.param_sizes:
                self._measure(path, link)
        self.overriding = {}
        self.roots = {}
        # Each link measured again, children first: a lazily initialised
        # descendant called after the end of a link's first call (a
        # model's second call, self.a.sub(x) after self.a(x)) counts in
        # its ancestors too.
        measured, self.measured = self.measured, {}
        self.param_sizes = {}
        for (path, me), ref in sorted(
                measured.items(), key=lambda item: -link_depth(item[0][0])):
            link = ref()
            if link is not None:
                self._count(path, link,
                            _param_sizes(link, path, self.param_sizes))
        # Links are measured again in the next block, and paths found
        # again: they may have changed in between (lazy initialisation,
        # new parameters, links added or removed).
        self.param_sizes = {}
        self.measured = {}
        self.paths = {}
        self.trees = {}
        self.between = {}
        return super(_LinkObserver, self).__exit__(*args)


def _child(link, name):
    """The child of ``link`` named ``name`` (a ChainList's by position), as
    ``namedlinks`` finds it; None when there is none."""
    try:
        children = link._children
        if isinstance(children, list):
            return children[int(name)]
        return link.__dict__[name] if name in children else None
    except Exception:  # (no name, a name that is no position)
        return None


def _param_sizes(link, path, known):
    """``{id(parameter): (size, nbytes)}`` of the initialised parameters
    of ``link`` at ``path`` and of its children, each parameter once
    (shared ones too).

    A child already measured in this ``with`` block (``known``:
    ``(path, id of the link)`` -> its sizes) is not walked again: children
    finish before their parent, so a model's parameters are walked about
    once, not once per level of nesting.
    """
    sizes = {}
    for name in link._params:
        p = link.__dict__[name]
        if p.array is not None:
            sizes[id(p)] = (p.size, p.array.nbytes)
    prefix = path if path == '/' else path + '/'
    for child in link.children():
        entry = known.get((prefix + str(child.name), id(child)))
        if entry is not None:
            sizes.update(entry)
        else:
            sizes.update((id(p), (p.size, p.array.nbytes))
                         for p in child.params() if p.array is not None)
    return sizes


class ComputationalCostHook(chainer.FunctionHook, report.CostReport):
    """Records the theoretical cost of every Chainer function call.

    Use it as a context manager around a forward pass (or a training
    step)::

        with ComputationalCostHook(fma_1flop=True) as cch:
            y = model(x)
        cch.show_report(unit='G', mode='md')

    A Chainer optimizer's update inside the block is recorded too, one
    record per parameter per update rule and optimizer hook, in the phase
    ``update`` (see ``chainer_computational_cost.collect.updates``).

    Args:
        fma_1flop (bool): count a fused multiply-add as one FLOP (default)
            instead of two.
        strict (bool): let errors of cost calculators propagate instead of
            reporting the layer as ignored with a warning.
        measure_time (bool): also record the wall time of each function's
            forward (column ``time``, seconds); it changes no other figure.
        flop_convention (str or None): ``'torch'`` counts
            convolutions, linear layers and matrix products (and their
            gradients) as PyTorch's ``FlopCounterMode`` does: 2 FLOPs per
            multiply-add, a bias free; calculators get it as a keyword.
        comm: a ChainerMN communicator: every call it makes to MPI inside
            the block becomes a record with its ``comm_bytes`` (see
            :mod:`chainer_computational_cost.report.gathered`).
        memory (bool): also follow the bytes of the arrays the run creates
            that are alive after each call (column ``live``,
            ``memory_report``); it changes no other figure.
        clock: with ``measure_time``, the function giving seconds that
            times each call on NumPy (default ``time.perf_counter``;
            ``time.process_time`` counts the process's CPU time only).
            Any real number is seconds, an int too (so
            ``time.perf_counter_ns`` needs ``/ 1e9``).  A call whose two
            readings are not numbers (or a clock that raised), or give a
            time that is NaN, infinite or negative (a clock going back),
            has no time, and the block's exit warns once (a
            ``ReportWarning`` naming ``clock``): the forward pass is never
            interrupted.
    """

    def __init__(self, fma_1flop=True, strict=False, measure_time=False,
                 flop_convention=None, comm=None, memory=False, clock=None):
        fma_1flop = checks.flag('fma_1flop', fma_1flop)
        strict = checks.flag('strict', strict)
        measure_time = checks.flag('measure_time', measure_time)
        memory = checks.flag('memory', memory)
        # Chainer keys active hooks by name: as in 0.1.2, a hook is named
        # by its depth among this thread's active ones (made unique when
        # it is entered, see _pick_name).
        self.name = _pick_name(chainer.get_function_hooks())
        self._active_thread = None
        self._fma_1flop = fma_1flop
        self._strict = strict
        self._measure_time = measure_time
        if clock is not None and not callable(clock):
            raise TypeError('clock must be a function giving seconds (such '
                            'as time.perf_counter), got {!r}'.format(clock))
        self._now = time.perf_counter if clock is None else clock
        given = flop_convention
        if flop_convention is not None:
            checks.instance('flop_convention', flop_convention, str,
                            "None or 'torch'")
        if isinstance(flop_convention, str):
            flop_convention = flop_convention.lower()  # any case
        if flop_convention not in FLOP_CONVENTIONS:
            raise ValueError("flop_convention must be None or 'torch', got "
                             '{!r}'.format(given))
        # Passed to calculators by wrapping them (see _dispatch_of): the
        # usual call stays as it is without it.
        self._flop_convention = flop_convention
        self._custom = {}
        # Classes dispatched through a base class's calculator; weak, so
        # that the hook keeps no user class alive.
        self._resolved = weakref.WeakKeyDictionary()
        # Per class with a built-in calculator (classes the registry keeps
        # alive anyway): (calculator, True, whether it skips out_shapes,
        # class name).
        # Read again from the registry at every entry (see _dispatch_of).
        self._dispatch = {}
        self._flat_records = []
        self._records_cache = []
        # Warnings are collected while functions run and given when the
        # ``with`` block exits (a warning turned into an error must not
        # interrupt the user's forward pass); keys of the ones given.
        self._pending = {}
        self._warned = set()
        # One copy of each shapes tuple seen; see forward_postprocess.
        self._interned = {}
        # Stacks are interned as a tree of (code, lasti, parent) nodes,
        # found through a trie per root (see _new_stack), from the
        # innermost anchor: the block's entry frame, or the frame of the
        # innermost link call running (see _LinkObserver).
        self._nodes = {}
        self._tries = {}
        self._base_anchor = self._anchor = _top_anchor(self._tries)
        # Links: the path being called, the stack of calls, per path
        # [n_calls, n_params, param bytes]; forward nodes' paths for their
        # backward.
        self._link_observer = _LinkObserver(self)
        self._link_stack = []
        self._node_links = {}
        self._backward_links = []
        # memory=True: id of an old-style Function's adapter -> (a weak
        # reference to it, the index of its call's record)
        self._old_style = {}
        self._clock = []
        # ChainerMN: record index -> bytes handed to MPI; this hook's
        # stand-in for the mpi4py communicator while the block runs.
        self._comm_bytes = {}
        self._comm = None
        self._comm_saved = []
        if comm is not None:
            self._comm = mpi_recorder.check_comm(comm)
        # One attribute: beyond 30, CPython 3.11 stops sharing the keys of
        # instance dicts, and every attribute read of the hook slows down.
        self._memory = live_memory.Follower() if memory else None
        if memory:
            # Only a hook following memory pays for these (see
            # memory.Tracker); a timing one for a forward_preprocess.
            self.forward_preprocess = (self._before_and_clock if
                                       measure_time else self._before)
            self.backward_preprocess = self._memory_backward_preprocess
            self.backward_postprocess = self._memory_backward_postprocess
        elif measure_time:
            self.forward_preprocess = self.start_clock

    def __enter__(self):
        hooks = chainer.get_function_hooks()
        with _ENTER_LOCK:
            if self._active_thread is not None:
                raise RuntimeError(
                    '{} is already active (entered in thread {}): a hook '
                    'is entered once at a time; use one hook per thread'
                    .format(self.name, self._active_thread))
            self.name = _pick_name(hooks)
            self._link_observer.name = self.name + '-links'
            self._active_thread = threading.get_ident()
            _start_spying()
        try:
            frame = _getframe(1)
            self._dispatch = {}  # the registry may have changed since
            # Stacks end at the frame that enters the block, under the
            # stack outside it (not counted for phases and links).
            outer = self._new_stack(frame.f_back, _top_anchor(self._tries))
            self._base_anchor = self._anchor = (
                frame.f_code, id(frame),
                self._tries.setdefault(id(outer[0]), {}), outer[0], False, 0,
                None)
            super(ComputationalCostHook, self).__enter__()
            self._link_observer.__enter__()
            if self._comm is not None:
                # This hook's own stand-in, over whatever is there (another
                # hook's stand-in too): exit takes out this one wherever
                # it is by then.
                recorder = mpi_recorder.MPIRecorder(
                    self._comm.mpi_comm, self._comm_record,
                    self._now if self._measure_time else None)
                self._comm_saved.append(recorder)
                self._comm.mpi_comm = recorder
            if self._memory is not None:
                self._memory.start(self.name)
            _update.start(self)
        except BaseException:
            if self._comm_saved:
                mpi_recorder.unwrap(self._comm, self._comm_saved.pop())
            hooks.pop(self.name, None)
            with _ENTER_LOCK:
                _stop_spying()
                self._active_thread = None
            raise
        return self

    def __exit__(self, exc_type, *args):
        entered = self._active_thread
        if entered != threading.get_ident():
            # Nothing is touched: a hook active in another thread runs on.
            raise RuntimeError(
                '{} is not active in this thread ({}): a hook is exited '
                'once per entry, in the thread that entered it'.format(
                    self.name, 'not entered' if entered is None else
                    'entered in thread {}'.format(entered)))
        _update.stop(self)
        if self._comm_saved:
            mpi_recorder.unwrap(self._comm, self._comm_saved.pop())
        self._base_anchor = self._anchor = _top_anchor(self._tries)
        self._link_observer.__exit__(exc_type, *args)
        if self._memory is not None:
            self._memory.stop()
        self._link_stack = []
        self._node_links = {}
        self._backward_links = []
        self._old_style = {}
        self._clock = []
        result = super(ComputationalCostHook, self).__exit__(exc_type,
                                                             *args)
        with _ENTER_LOCK:
            _stop_spying()
            self._active_thread = None
        self._flush_warnings(exc_type is not None)
        return result

    def __deepcopy__(self, memo):
        """A copy holding the same records, not active: it may be entered
        beside the original (it gets its own name then)."""
        cls = type(self)
        twin = cls.__new__(cls)
        memo[id(self)] = twin
        for k, v in self.__dict__.items():
            if k in _TRANSIENT:  # calls running now (frames among them)
                v = []
            elif k == '_comm':  # the communicator is the user's: shared
                twin._comm = v
                continue
            twin.__dict__[k] = copy.deepcopy(v, memo)
        twin._active_thread = None
        twin._base_anchor = twin._anchor = _top_anchor(twin._tries)
        return twin

    def __reduce_ex__(self, protocol):
        raise TypeError(
            'a ComputationalCostHook cannot be pickled (it holds code '
            'objects and live state); pickle its reports instead, or '
            'hook.snapshot(), which has the same reading API')

    @property
    def active(self):
        """Whether the hook is entered (in some thread) and not exited."""
        return self._active_thread is not None

    @property
    def fma_1flop(self):
        """Whether a fused multiply-add counts as one FLOP."""
        return self._fma_1flop

    @property
    def flop_convention(self):
        """None, or ``'torch'`` for PyTorch's FlopCounterMode counts."""
        return self._flop_convention

    @property
    def strict(self):
        """Whether calculator errors propagate."""
        return self._strict

    @property
    def measure_time(self):
        """Whether the wall time of each forward is recorded."""
        return self._measure_time

    @property
    def memory(self):
        """Whether the live bytes of the run's arrays are followed."""
        return self._memory is not None

    # Observation

    def _new_stack(self, frame, anchor, check=True):
        """The interned stack of ``frame`` and its callers, up to the frame
        of ``anchor`` (then under the anchor's root), whether a backward
        pass is running and how many link calls are running in the block:
        ``(node, backward, link depth)``; None when ``anchor`` is a link
        call's that is not on this stack (a call that raised).

        An anchor is ``(code, id of its frame, trie, root node, backward,
        link depth, link path)``: the block's entry frame (path None), or
        the ``Link.__call__`` frame of a link call running (a frame alive
        while the call runs, so its id is its own), with what is known of
        the stack above it.

        A record holds one node of a tree of ``(code, lasti, parent)``: its
        memory does not grow with the depth of the stack, and nodes hold
        code objects and offsets, never frames, so no local variable of the
        user's stays alive.  This builds a stack not seen before and enters
        it in the anchor's trie, which forward_postprocess walks for the
        ones seen before (with ``check``, a stack running the ``__call__``
        of a link that overrides it and is not on the link stack is not
        entered: _UNOPENED is returned, see _stack_at): one level per
        frame, innermost first, keyed by the frame's offset and holding
        ``(code, next level)`` (keyed by ``(offset, id(code))`` for a
        second code at the same offset; the trie keeps the codes, so their
        ids stay theirs), the found triple under the key None.
        """
        stop_code, stop_id, level, root, backward, depth, path = anchor
        codes = []
        node = None
        # Above the block (stop_code None) no link counts.
        check = check and stop_code is not None
        while frame is not None:
            code = frame.f_code
            codes.append((code, frame.f_lasti))
            if code is stop_code and id(frame) == stop_id:
                node = root  # the stack goes on above the anchor
                break
            if check and code.co_name == '__call__' and \
                    _calling_link(frame) is not None:
                # Its link is not on the link stack: nothing is kept (the
                # next call of this stack comes back here), the caller
                # opens the link (_LinkObserver.enclosing) and asks again.
                return _UNOPENED
            frame = frame.f_back
        else:
            if path is not None:
                return None
        for code, lasti in codes:
            entry = level.get(lasti)
            if entry is not None and entry[0] is not code:
                entry = level.get((lasti, id(code)))
                if entry is None:
                    entry = level[lasti, id(code)] = (code, {})
            elif entry is None:
                entry = level[lasti] = (code, {})
            level = entry[1]
        nodes = self._nodes
        for code, lasti in reversed(codes):
            key = (id(node), id(code), lasti)
            child = nodes.get(key)
            if child is None:
                child = nodes[key] = (code, lasti, node)
            node = child
        found = level[None] = (
            node,
            backward or any(id(code) in _BACKWARD_IDS for code, _ in codes),
            depth + sum(1 for code, _ in codes if code is _LINK_CALL_CODE))
        return found

    def _stack_at(self, frame, anchor):
        """``(node, backward, link depth, link path)`` of ``frame`` (see
        _new_stack): from ``anchor``, or from the block's entry when
        ``anchor`` is not on this stack; a stack not seen before is built.
        """
        for anchor in (anchor, self._base_anchor):
            found = _trie_walk(frame, anchor) or self._new_stack(frame,
                                                                 anchor)
            if found is _UNOPENED or found is None and any(
                    len(entry) == 5 for entry in self._link_stack):
                # A link overriding __call__ is being called and not on
                # the link stack, or the anchor is not running and the
                # stack holds such a call, which may have returned
                # (Chainer tells nothing when it does): the link stack is
                # brought up to date (the frames of calls that returned,
                # and the arrays they held, freed) and the innermost link
                # call running is the anchor from now on.
                anchor = self._anchor = self._link_observer.enclosing(
                    frame)[1]
                found = (_trie_walk(frame, anchor) or
                         self._new_stack(frame, anchor, False))
            if found is not None:
                node, backward, depth = found
                link = anchor[6]
                if link is None:
                    link = self._link_of(depth, backward)
                return node, backward, depth, link
        raise AssertionError('the base anchor always finds a stack')

    def _dispatch_of(self, cls):
        """``(calculator or None, built-in?, skips out_shapes?, class
        name)`` for ``cls``; remembered in ``_dispatch`` for a built-in
        calculator, so that the usual call finds all four in one lookup."""
        calc = self._calculator(cls)
        builtin = calc is not None and calc is calculators.get(cls) and \
            cls not in self._custom and calc in built_in
        found = (calc, builtin, calc in skips_out_shapes, cls.__name__)
        if calc is not None and self._flop_convention is not None:
            found = (with_keywords(calc, {
                'flop_convention': self._flop_convention}),) + found[1:]
        if builtin:
            self._dispatch[cls] = found
        return found

    def _calculator(self, cls):
        """The calculator for ``cls``: a custom one, a built-in one, or the
        one of the nearest base class that has either (None if none)."""
        calc = self._custom.get(cls) or calculators.get(cls)
        if calc is not None:
            return calc
        try:
            return self._resolved[cls]
        except KeyError:
            pass
        found = self._resolved[cls] = calculator_for(cls, self._custom)
        return found

    def forward_postprocess(self, function, in_data):
        """Cost one call and store its record."""
        # This runs once per function call of the user's forward pass (see
        # benchmarks/overhead.py).  Every object it keeps costs time later
        # (allocation in cold memory, garbage collection), so a call keeps
        # one flat tuple and shares everything else it can; and the usual
        # case is written inline, as function calls are what costs here.
        elapsed = self._stop_clock(function) if self._measure_time else None
        caller = _getframe(1)
        try:
            # The usual call: from FunctionNode.apply, arrays everywhere.
            # The shapes of the inputs, then of the outputs, in one tuple.
            if caller.f_code is not _APPLY_CODE:
                raise KeyError
            # The stack starts at apply's caller (see below).
            start = caller.f_back
            seen = _seen[0]
            if seen is not None and seen[0] == id(caller):
                outputs = seen[1]
                _seen[0] = None  # keeps no arrays alive
            else:
                outputs = caller.f_locals['outputs']
            x = in_data[0]
            y = outputs[0]
            if len(in_data) == 1 and len(outputs) == 1:
                # One array in, one out (most calls): a tuple built from
                # a map over a concatenation costs twice as much.
                shapes = (x.shape, y.shape)
            else:
                shapes = tuple(map(_shape, in_data + outputs))
            dtype = x.dtype
            itemsize = dtype.itemsize
            out_itemsize = y.dtype.itemsize
        except (AttributeError, IndexError, KeyError, TypeError):
            outputs, shapes, dtype, itemsize, out_itemsize = _observe(
                caller, in_data)
            start = (caller.f_back if caller.f_code is _APPLY_CODE
                     else caller)
        # Identical shapes recur all the time (loops, repeated blocks) and
        # share one copy.
        shapes = self._interned.setdefault(shapes, shapes)
        node = function
        cls = type(function)
        try:
            calc, builtin, skip, type_name = self._dispatch[cls]
        except KeyError:
            # An old-style Function's adapter (never in _dispatch): the
            # calculator sees the Function (function_object(), inline).
            if isinstance(function, _ADAPTER):
                function = function.function
                cls = type(function)
            calc, builtin, skip, type_name = (self._dispatch.get(cls)
                                              or self._dispatch_of(cls))
        error = None
        if calc is None:
            flops = mread = mwrite = 0
            params = None
        else:
            try:
                if skip:
                    result = calc(function, in_data,
                                  fma_1flop=self._fma_1flop)
                else:
                    result = calc(function, in_data,
                                  fma_1flop=self._fma_1flop,
                                  out_shapes=None if outputs is None else
                                  shapes[len(in_data):])
                # The common result (a plain FLOP count, memory counts
                # that are plain or Elements, and a dict) is turned into
                # bytes and checked here; _checked validates (and
                # explains) anything else, a count or a byte count out of
                # [0, 2**63) included: (a | b | c) >> 63 is 0 when all
                # three are in that range.
                flops = None
                if type(result) in _TUPLES and len(result) == 4:
                    flops, mread, mwrite, params = result
                    if type(mread) is int:
                        mread *= itemsize
                    elif type(mread) is Elements:
                        mread = mread.nbytes
                    else:
                        flops = None
                    if type(mwrite) is int:
                        mwrite *= out_itemsize
                    elif type(mwrite) is Elements:
                        mwrite = mwrite.nbytes
                    else:
                        flops = None
                    if (type(flops) is not int or type(params) is not dict
                            or (flops | mread | mwrite) >> 63):
                        flops = None
                if flops is None:
                    flops, mread, mwrite, params = _checked(
                        result, calc, type_name, itemsize, out_itemsize)
                if not builtin:
                    # A custom calculator may keep and change its dict.
                    params = fresh(params)
            except Exception as e:
                if self._strict:
                    raise
                error = error_text(e)
                flops = mread = mwrite = 0
                params = None

        # The interned stack, found in the trie of the innermost anchor (see
        # _new_stack): per frame up to the anchor's, two attribute reads
        # and one lookup, nothing allocated that stays; a stack not seen
        # before is the rare KeyError.  It starts at the frame that called
        # FunctionNode.apply: apply's own frame is the same in every call
        # (and a traceback shows Chainer's frames only when no frame is
        # the user's).
        anchor = self._anchor
        try:
            stop_code, stop_id, level, _, _, _, link = anchor
            frame = start
            while frame is not None:
                code = frame.f_code
                lasti = frame.f_lasti
                entry = level[lasti]
                if entry[0] is not code:
                    entry = level[lasti, id(code)]
                level = entry[1]
                if code is stop_code and id(frame) == stop_id:
                    break
                frame = frame.f_back
            stack, backward, depth = level[None]
        except KeyError:
            stack, backward, depth, link = self._stack_at(start, anchor)
        else:
            if link is None:
                # From the block's entry: at the top, out of any link call
                # and of any backward pass, the usual call is the model's
                # ('/', see _link_of).
                link = (self._link_of(depth, backward) if depth or backward
                        else '/')
        phase = 'backward' if backward else 'forward'
        # Its backward is attributed to the same link: a forward node's; a
        # forward recomputed inside a link call in a backward pass
        # (F.forget), whose backward runs later in that pass; a gradient
        # function made in a backward pass, which a double backprop's next
        # pass differentiates.  Every node of the block writes (or clears)
        # its entry, so a later node that reuses the id of a dead one never
        # reads the dead one's link; nothing is kept but an int and a
        # shared str.
        if link != '/':
            self._node_links[id(node)] = link
        elif self._node_links:
            self._node_links.pop(id(node), None)
        follower = self._memory
        if follower is None:
            live = grad = scratch = state = None
        else:
            live, grad = follower.tracker.add(
                outputs, in_data, backward, node, start if backward else None)
            if not backward and follower.watcher is not None and \
                    caller.f_code is _APPLY_CODE:
                follower.watcher.inputs(caller.f_locals['inputs'])
            live += grad
            scratch = self._scratch(function, in_data, shapes, outputs)
            state = 0
            if function is not node:
                # an old-style Function: its backward's scratch comes back
                # to this record (_old_style_backward)
                self._old_style[id(node)] = (
                    weakref.ref(node), len(self._flat_records) // _N_FIELDS)
        # One flat list of fields, extended by a record's fields: the
        # tuple built here is freed at once, so the calls leave no new
        # container for the garbage collector to walk (a list of record
        # tuples made it run every few hundred calls); _records() groups
        # them.
        self._flat_records.extend(
            (type_name, flops, mread, mwrite, params, len(in_data), shapes,
             error, stack, phase, link, dtype, elapsed, live, grad,
             scratch, state))
        if params is None:
            self._note_ignored(cls, error)

    def backward_preprocess(self, function, in_data, out_grad):
        """Remember which link the node being back-propagated was created
        in: the gradient functions its backward applies belong there."""
        me = id(function)
        if type(function) is _ADAPTER:
            self._old_style_not_counted(function)
        link = self._node_links.get(me)
        if link is None:
            # A node made in the backward of another (F.forget's
            # recomputation) belongs where that one does.
            bw = self._backward_links
            link = bw[-1][1] if bw else '/'
        self._backward_links.append((me, link))

    def _old_style_not_counted(self, node):
        """Warn once a type that the backward of an old-style Function,
        which runs no Chainer call, has no record: its FLOPs and memory
        traffic are not counted (ChainerMN's, whose backward is
        communication, have the records of its MPI calls)."""
        cls = type(node.function)
        key = ('{}.{}'.format(cls.__module__, cls.__name__), 'backward')
        if key not in self._warned and key not in self._pending and \
                not cls.__module__.startswith('chainermn.'):
            self._pending[key] = (
                'the backward of old-style chainer.Function `{}` runs no '
                'Chainer call: its FLOPs and memory traffic are not '
                'counted'.format(key[0]))

    def backward_postprocess(self, function, in_data, out_grad):
        """End of one node's backward (and of any whose backward raised
        inside it)."""
        bw = self._backward_links
        me = id(function)
        for i in range(len(bw) - 1, -1, -1):
            if bw[i][0] == me:
                del bw[i:]
                break

    # Live memory (memory=True only)

    def _before(self, function, in_data):
        self._memory.tracker.before(function)

    def _before_and_clock(self, function, in_data):
        self._memory.tracker.before(function)
        self.start_clock(function, in_data)

    def _memory_backward_preprocess(self, function, in_data, out_grad):
        # The backward loops of Chainer 6 and 7 (_backprop_to_all, and
        # chainer.grad's _backprop) keep their gradients in 'grads'.
        self._memory.tracker.backward_started(
            function, in_data, out_grad, _caller_locals('grads')[0])
        ComputationalCostHook.backward_preprocess(self, function, in_data,
                                                  out_grad)

    def _memory_backward_postprocess(self, function, in_data, out_grad):
        ComputationalCostHook.backward_postprocess(self, function, in_data,
                                                   out_grad)
        # The gradients the node's backward returned, in Chainer's
        # backward loop (Chainer 6's and 7's _backprop_to_all: 'in_grad';
        # chainer.grad's _backprop: 'x_grads'): lists of Variables.
        in_grad, x_grads = _caller_locals('in_grad', 'x_grads')
        grads = x_grads if in_grad is None else in_grad
        self._memory.tracker.backward_done(
            function, grads.values() if isinstance(grads, dict) else ())
        if type(function) is _ADAPTER:
            self._old_style_backward(function, in_data, out_grad)

    def _old_style_backward(self, node, in_data, out_grad):
        """The scratch of an old-style Function's backward, which runs no
        call of its own, goes to the record of the Function's call: that
        record's scratch becomes the larger of its own and the backward's
        peak (the bytes alive when it returned, plus its scratch) above
        the call's live bytes, so the run's peak counts it."""
        entry = self._old_style.get(id(node))
        if entry is None or entry[0]() is not node:
            return  # called before the block: no record of its own
        nbytes = self._scratch(node, in_data, (), None,
                               {'backward': True, 'grad_outputs': out_grad})
        if not nbytes:
            return
        at = entry[1] * _N_FIELDS
        flat = self._flat_records
        peak = sum(self._memory.tracker.now()) + nbytes - flat[at + R_LIVE]
        if peak > flat[at + R_SCRATCH]:
            flat[at + R_SCRATCH] = peak

    def _comm_record(self, kind, nbytes, caller, error=None,
                     readings=None):
        """Record one MPI call of the communicator (see MPIRecorder):
        no FLOPs, no device memory traffic, ``nbytes`` handed to MPI; a
        call whose bytes could not be counted (``error``) is ignored, with
        a warning at exit.  With measure_time, its wall time from the
        clock's two ``readings`` around it."""
        stack, backward, depth, link = self._stack_at(caller, self._anchor)
        params = {'call': mpi_recorder.caller_name(caller, self._comm),
                  'n_ranks': self._comm_saved[-1].size}
        if error is not None:
            params = None
            error = error_text(error)
            self._pending[(kind, False)] = (
                'the bytes of an MPI call ({}) could not be counted, call '
                'ignored: {}'.format(kind, error))
        phase = 'backward' if backward or mpi_recorder.is_grad_call(caller) \
            else 'update' if _update.in_update() else 'forward'
        elapsed = None if readings is None else \
            self._seconds(kind, *readings)
        if elapsed is not None and self._clock:
            # Made inside a timed call (a chainermn.functions node's
            # forward): its seconds are this record's, not that call's
            # too, as its bytes are (nothing counted twice)
            fid, start = self._clock[-1]
            if _is_real(start):
                self._clock[-1] = fid, start + elapsed
        self._comm_bytes[len(self._flat_records) // _N_FIELDS] = nbytes
        self._flat_records.extend(
            (kind, 0, 0, 0, params, 0, (), error, stack, phase,
             link, None, elapsed) + self._live())

    def record_update(self, obj, in_data, link, frame, kwargs, new_arrays,
                      timed=False, uncalled=()):
        """Record what an update rule or an optimizer hook ``obj`` did to
        one parameter (see ``chainer_computational_cost.collect.updates``):
        ``in_data`` is ``(param, grad)`` (empty for an optimizer hook
        without a calculator), ``link`` the path of the link owning the
        parameter, ``frame`` where the update was called from, ``kwargs``
        more keywords for the calculator (``timing``, ``loss_scaled``),
        ``new_arrays`` the arrays the rule created (its state, counted
        live when memory is followed); ``timed``: its clock was started
        (measure_time: the time of the rule's update_core, of the rule's
        hook; an optimizer's hook is not timed per parameter);
        ``uncalled``: the links owning the parameter that the block did not
        call, ``(path, link)`` (see _LinkObserver.not_called).  Phase
        ``update``."""
        elapsed = self._stop_clock(obj) if timed and self._measure_time \
            else None
        if uncalled:
            self._link_observer.not_called(uncalled)
        cls = type(obj)
        calc = self.update_calculator(cls) if in_data else None
        # A hook may be a plain function: its name says more than its type.
        type_name = (getattr(obj, '__name__', cls.__name__)
                     if inspect.isroutine(obj) else cls.__name__)
        shapes = tuple([a.shape for a in in_data])
        error = None
        flops = mread = mwrite = 0
        params = None
        if calc is not None:
            # The rule writes the parameter, a hook its gradient (the same
            # shape); bytes the calculator does not give exactly are in
            # the parameter's itemsize.
            out_shapes = shapes[:1]
            itemsize = in_data[0].dtype.itemsize
            try:
                cost = _checked(calc(obj, in_data, fma_1flop=self._fma_1flop,
                                     out_shapes=out_shapes, **kwargs),
                                calc, type_name, itemsize, itemsize)
            except Exception as e:
                if self._strict:
                    raise
                error = error_text(e)
            else:
                flops, mread, mwrite = cost[:3]
                params = fresh(cost[3])
            shapes += out_shapes
        stack = self._stack_at(frame, self._anchor)[0]
        follower = self._memory
        live = self._live()
        if follower is not None:
            # The optimizer's state is neither an activation nor a
            # gradient; it is counted with the activations (slot 0).
            before = follower.tracker.now()[0]
            for a in new_arrays:
                follower.tracker.take(a, 0, True)
            # the rule's temporaries (Adam's: 3 x the parameter on NumPy),
            # and the state it created
            live = self._live()[:2] + (
                self._scratch(obj, in_data, shapes, None, kwargs)
                if in_data else 0,
                follower.tracker.now()[0] - before)
        self._flat_records.extend(
            (type_name, flops, mread, mwrite, params, len(in_data), shapes,
             error, stack, 'update', link,
             in_data[0].dtype if in_data else None, elapsed) + live)
        if params is None:
            module = getattr(obj, '__module__', None) or cls.__module__
            self._note_ignored('{}.{}'.format(module, type_name), error,
                               'update')

    def _live(self):
        """``(live, gradients, scratch, state)`` bytes now (the record's
        last four fields; an MPI call's scratch is not known: 0; it creates
        no optimizer state), four None when memory is not followed."""
        follower = self._memory
        if follower is None:
            return None, None, None, None
        live, grad = follower.tracker.now()
        return live + grad, grad, 0, 0

    def _scratch(self, function, in_data, shapes, outputs, kwargs=None):
        """Bytes the call of ``function`` allocated and freed inside
        itself (see cost_calculators.scratch_of), on the backend of its
        first input array; a scratch function that fails counts 0, with a
        warning at exit (raised with ``strict=True``), as a calculator that
        fails: it never breaks the user's run.  ``kwargs``: an update
        record's keywords (``timing``, ``fp32_grad``, ...)."""
        backend = 'numpy'
        for x in in_data:
            if x is not None:
                if not _is_ndarray(x):
                    backend = 'cupy'
                break
        out_shapes = None if outputs is None else shapes[len(in_data):]
        try:
            return scratch_of(function, in_data, out_shapes, backend,
                              **(kwargs or {}))
        except Exception as e:
            if self._strict:
                raise
            cls = type(function)
            key = ('{}.{}'.format(cls.__module__, cls.__name__), 'scratch')
            if key not in self._warned and key not in self._pending:
                self._pending[key] = (
                    'the scratch function for `{}` failed, its scratch '
                    'counted as 0: {}'.format(key[0], error_text(e)))
            return 0

    def _link_of(self, depth, backward):
        """The link path of a call whose stack was found from the block's
        entry, with ``depth`` link calls running in the block: the
        innermost link call running (a recomputation in a backward pass
        too), else in a backward pass the link of the node being
        differentiated."""
        links = self._link_stack
        if depth:
            return links[min(depth, len(links)) - 1][2] if links else '/'
        bw = self._backward_links
        return bw[-1][1] if backward and bw else '/'

    def gather(self, root=0):
        """Every rank's records, collected on ``root`` (a hook made with
        ``comm=``; every rank calls it, after the block): a report with
        this hook's reading API on the root, None elsewhere (see
        :func:`chainer_computational_cost.report.gathered.gather`)."""
        return mn.gather(self, root)

    # Timing

    def start_clock(self, function, in_data):
        xp = chainer.backend.get_array_module(*[
            x for x in in_data if x is not None])
        if xp.__name__ == 'cupy':  # pragma: no cover (no GPU here)
            start = _CudaStart(xp.cuda.Event())
            start.event.record()
        else:
            try:
                start = self._now()
            except Exception as e:  # the user's clock: see _seconds
                start = e
        self._clock.append((id(function), start))

    def _stop_clock(self, function):
        me = id(function)
        clock = self._clock
        while clock:
            fid, start = clock.pop()
            if fid == me:
                break
        else:
            return None
        if start.__class__ is _CudaStart:  # pragma: no cover (no GPU here)
            # CuPy: the device runs asynchronously, so its own events
            # time it.
            import cupy
            end = cupy.cuda.Event()
            end.record()
            end.synchronize()
            return cupy.cuda.get_elapsed_time(start.event, end) / 1e3
        try:
            end = self._now()
        except Exception as e:  # the user's clock: see _seconds
            end = e
        if start.__class__ is float and end.__class__ is float:
            elapsed = end - start
            if 0.0 <= elapsed < _INF:  # not NaN either
                return elapsed
        return self._seconds(type(function).__name__, start, end)

    def _seconds(self, what, start, end):
        """The seconds from ``start`` to ``end``, two readings of the
        clock around a call of ``what`` (its type's name) that are not two
        floats in order: any real numbers (an int, NumPy's) are seconds
        too.  An elapsed time that is not a finite number >= 0 (a reading
        that is no number, NaN or infinite, a clock going back, a clock
        that raised: the exception is the reading) is no time at all:
        None, and a warning at exit naming the clock (raising here would
        break the user's forward pass)."""
        elapsed = None
        if _is_real(start) and _is_real(end):
            try:
                if checks.is_int(start) and checks.is_int(end):
                    elapsed = float(int(end) - int(start))  # exact first
                else:
                    elapsed = float(end) - float(start)
            except OverflowError:
                elapsed = None
        if elapsed is not None and 0.0 <= elapsed < _INF:
            return elapsed
        key = ('clock',)
        if key not in self._warned and key not in self._pending:
            self._pending[key] = (
                'clock must be a function giving seconds, a finite number '
                'that never goes back (such as time.perf_counter), but it '
                'read {!r} then {!r} around a call of {}: the calls it '
                'timed so have no time'.format(start, end, what))
        return None

    # Warnings

    def update_calculator(self, cls):
        """The calculator of an update rule or optimizer hook class: a
        custom one or a built-in one, of the class or of its nearest base
        class that has either (None if none)."""
        return calculator_for(cls, self._custom, update_calculators)

    def _note_ignored(self, cls, error, what='layer'):
        """A warning for the exit: calls of ``cls`` (a class, or the
        qualified name of an update rule or optimizer hook, ``what`` being
        'update') are ignored."""
        qualname = (cls if isinstance(cls, str) else
                    '{}.{}'.format(cls.__module__, cls.__name__))
        key = (qualname, error is None)
        if key in self._warned or key in self._pending:
            return
        if error is None:
            message = ('{}`{}` is not yet supported by '
                       'ComputationalCostHook, ignored'.format(
                           'the update of ' if what == 'update' else '',
                           qualname))
        else:
            message = ('the cost calculator for `{}` failed, {} ignored: '
                       '{}'.format(qualname, what, error))
        self._pending[key] = message

    def _flush_warnings(self, quiet):
        pending, self._pending = self._pending, {}
        for key, message in pending.items():
            self._warned.add(key)
            if quiet:
                # An exception is on its way out: a warning turned into an
                # error must not replace it.
                try:
                    warnings.warn(message, ReportWarning, stacklevel=3)
                except Exception:
                    pass
            else:
                warnings.warn(message, ReportWarning, stacklevel=3)

    # Custom calculators

    def add_custom_cost_calculator(self, func_type, calculator):
        """Use ``calculator`` for calls of ``func_type`` (and its subclasses
        without a calculator of their own) in this hook only.

        Args:
            func_type (type): a ``FunctionNode`` or old-style ``Function``
                subclass; or for the update phase an ``UpdateRule``
                subclass or an optimizer hook class (one with a ``timing``
                attribute, as Chainer's have), whose calculator gets the
                rule or hook and ``in_data = (param, grad)`` of each
                parameter it updates.
            calculator: a callable ``(func, in_data, **kwargs)`` returning
                ``(flops, mread, mwrite, params)``, counts in elements.
        """
        if not (isinstance(func_type, type) and (issubclass(
                func_type, (chainer.FunctionNode, chainer.Function,
                            chainer.UpdateRule))
                or hasattr(func_type, 'timing'))):
            raise TypeError('func_type must be a FunctionNode or Function '
                            'subclass, an UpdateRule subclass or an '
                            'optimizer hook class, got {!r}'.format(
                                func_type))
        if not check_signature(calculator):
            raise TypeError('a cost calculator must have the signature '
                            '(func, in_data, **kwargs), got {!r}'.format(
                                calculator))
        if func_type in self._custom:
            warnings.warn('replacing the custom cost calculator for {}'
                          .format(func_type.__name__), ReportWarning,
                          stacklevel=2)
        elif func_type in calculators or func_type in update_calculators:
            warnings.warn('overriding the built-in cost calculator for {}'
                          .format(func_type.__name__), ReportWarning,
                          stacklevel=2)
        self._custom[func_type] = calculator
        self._resolved = weakref.WeakKeyDictionary()
        self._dispatch = {}

    # What the reports read (report.CostReport)

    def records(self):
        # Grouped once per change (another thread may be extending the
        # list: a slice is taken in one step, whole records only).
        n = len(self._flat_records) // _N_FIELDS
        cached = self._records_cache
        if len(cached) != n:
            flat = self._flat_records[:n * _N_FIELDS]
            cached = self._records_cache = list(
                map(Record._make, zip(*[iter(flat)] * _N_FIELDS)))
        return cached

    def link_info(self):
        # dict.copy() first, which runs no Python code (list(d.items())
        # allocates a tuple per item, and a garbage collection then may run
        # weakref callbacks and switch threads): another thread may be
        # adding paths.
        links = self._link_observer.links.copy()
        return {path: (info[0], info[1] or 0, info[2] or 0)
                for path, info in links.items()}

    def _cache_key(self):
        return (len(self._flat_records) // _N_FIELDS,
                self._link_observer.version)

    def comm_bytes_of(self):
        return self._comm_bytes

    def has_comm(self):
        return self._comm is not None

    def memory_state(self):
        return None if self._memory is None else self._memory.state()
