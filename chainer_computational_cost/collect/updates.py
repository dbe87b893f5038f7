"""The update phase: what a Chainer optimizer does to each parameter after
the backward pass, recorded by the hooks active in the thread.

An optimizer's update runs its update rules and optimizer hooks with array
arithmetic, not with Chainer functions, so function hooks never see it.
While at least one ``ComputationalCostHook`` is active, five methods
of Chainer's optimizer classes are replaced at class level by wrappers
that call the real method and then tell the hooks active in the calling
thread what was updated (their ``record_update``); the last hook to exit
puts the real methods back (only those still ours: a method someone else
replaced in between is left as it is).  A thread with no active hook goes
straight to the real method.  Nothing of the user's is touched: the
wrappers read the rule, the hook, the parameter and its gradient, and the
optimizer's target link, never change them, and run no arithmetic.

* ``GradientMethod.update``: the optimizer whose target owns the
  parameters (each record is in the link that owns its parameter, named
  as the hook saw it called: under the innermost link of the target that
  the block called, else under the target);
* ``UpdateRule.update``: one record per parameter a rule updates (none
  when the rule is disabled, or the parameter or its gradient is missing),
  made when ``update_core`` has returned, before the rule's 'post' hooks;
* ``_Hookable.call_hooks``: the timing ('pre' or 'post') of the hooks
  being called, for the records of the hooks;
* ``_Hookable.call_hook``: a hook of one update rule, one record;
* ``Optimizer.call_hook``: a hook of the optimizer, one record per
  parameter it ran on (every initialised parameter with a gradient).
"""

import sys
import threading

from chainer import optimizer as _optimizer

_Hookable = _optimizer._Hookable
_PATCHED = (
    (_optimizer.GradientMethod, 'update'),
    (_optimizer.UpdateRule, 'update'),
    (_Hookable, 'call_hooks'),
    (_Hookable, 'call_hook'),
    (_optimizer.Optimizer, 'call_hook'),
)
_REAL = {key: key[0].__dict__[key[1]] for key in _PATCHED}
_real_gm_update, _real_rule_update, _real_call_hooks, _real_call_hook, \
    _real_opt_call_hook = [_REAL[key] for key in _PATCHED]

# Hooks using the wrappers (all threads), under _LOCK.
_LOCK = threading.Lock()
_users = [0]


class _Thread(threading.local):
    """What one thread's updates are in: its active hooks, the optimizers
    updating (``[optimizer, owner chains or None, {id(hook): paths}]``, see
    _paths), the rules updating (see _rule_update) and the timings of the
    hooks running."""

    def __init__(self):
        self.hooks = []
        self.optimizers = []
        self.rules = []
        self.timings = []


_thread = _Thread()


def start(hook):
    """``hook`` records the updates of this thread from now on (called by
    its ``__enter__``)."""
    _thread.hooks.append(hook)
    with _LOCK:
        if not _users[0]:
            for key, wrapper in zip(_PATCHED, _WRAPPERS):
                cls, name = key
                if cls.__dict__.get(name) is _REAL[key]:
                    setattr(cls, name, wrapper)
        _users[0] += 1


def stop(hook):
    """``hook`` no longer records (called by its ``__exit__``)."""
    hooks = _thread.hooks
    for i in range(len(hooks) - 1, -1, -1):
        if hooks[i] is hook:
            del hooks[i]
            break
    with _LOCK:
        _users[0] -= 1
        if not _users[0]:
            for key, wrapper in zip(_PATCHED, _WRAPPERS):
                cls, name = key
                if cls.__dict__.get(name) is wrapper:
                    setattr(cls, name, _REAL[key])


def _chains(target):
    """``{id(parameter): ((link, path), ...)}``: for each parameter under
    ``target``, the links from ``target`` down to the one that owns it,
    with their paths under ``target`` ('/' for it, '/a/b' below; the first
    path met for a shared link or parameter)."""
    chains = {}
    stack = [(target, '/', ())]
    while stack:
        link, path, chain = stack.pop()
        chain += ((link, path),)
        for name in link._params:
            chains.setdefault(id(link.__dict__[name]), chain)
        prefix = '' if path == '/' else path
        stack.extend((child, prefix + '/' + child.name, chain)
                     for child in reversed(list(link.children())))
    return chains


def _known_links(hook):
    """``{id(link): path}`` of the links ``hook`` saw called in its block
    (its link observer measures each one after its call)."""
    observer = getattr(hook, '_link_observer', None)
    known = {}
    if observer is not None:
        for path, link_id in list(observer.param_sizes):
            known.setdefault(link_id, path)
    return known


def _path_in(chain, known):
    """The path of the last link of ``chain`` as the hook names it: below
    the innermost link of the chain it saw called (a Classifier calling the
    optimizer's target ``predictor`` names it '/predictor'), else its path
    under the optimizer's target."""
    owner_path = chain[-1][1]
    for link, path in reversed(chain):
        base = known.get(id(link))
        if base is None:
            continue
        rest = owner_path[len(path):] if path != '/' else (
            '' if owner_path == '/' else owner_path)
        if not rest:
            return base
        return rest if base == '/' else base + rest
    return owner_path


def _named(chain, known):
    """``(path, links not called)`` of the last link of ``chain`` (see
    _path_in): the links of the chain below the innermost one the block
    called, ``(path, link)`` innermost first, whose parameter counts the
    hook takes from here (they never reach its link observer)."""
    uncalled = []
    for i in range(len(chain), 0, -1):
        if id(chain[i - 1][0]) in known:
            break
        uncalled.append((_path_in(chain[:i], known), chain[i - 1][0]))
    return _path_in(chain, known), tuple(uncalled)


def _paths(entry, hook):
    """``{id(parameter): (link path, links not called)}`` (see _named)
    under the target of the optimizer of ``entry`` (see _Thread) as
    ``hook`` names links, made once per update and hook."""
    by_hook = entry[2]
    paths = by_hook.get(id(hook))
    if paths is None:
        if entry[1] is None:
            target = getattr(entry[0], 'target', None)
            entry[1] = {} if target is None else _chains(target)
        known = _known_links(hook)
        named = {}  # the parameters of a link share its chain
        paths = by_hook[id(hook)] = {}
        for key, chain in entry[1].items():
            found = named.get(id(chain))
            if found is None:
                found = named[id(chain)] = _named(chain, known)
            paths[key] = found
    return paths


_NO_OWNER = ('/', ())


def _owner(param, hook):
    """``(link path, links not called)`` of ``param`` (see _named; as
    ``hook`` names links) in the innermost optimizer updating that knows
    it (the root if none does: a parameter updated by hand)."""
    for entry in reversed(_thread.optimizers):
        found = _paths(entry, hook).get(id(param))
        if found is not None:
            return found
    return _NO_OWNER


def _arrays(param):
    """``(param, grad)`` arrays of a parameter, or None when either is
    missing (nothing is updated then)."""
    array = param.array
    grad = param.grad
    if array is None or grad is None:
        return None
    return array, grad


def _rule_arrays(rule):
    """The arrays a rule holds for its parameter: ``{key: array}`` of its
    state's and of its float32 master copy (key None)."""
    found = {k: a for k, a in (rule.state or {}).items()
             if getattr(a, 'nbytes', None) is not None}
    master = getattr(rule, '_fp32_param', None)
    if master is not None and master.array is not None:
        found[None] = master.array
    return found


def _emit(obj, param, owner, frame, kwargs, timed, new_arrays=()):
    """Hand every active hook the record of ``obj`` on ``param``, in the
    link ``owner`` (the parameter whose owner it names); ``timed``: its
    clock was started (see _start_clocks)."""
    in_data = _arrays(param)
    if in_data is None:
        return
    for hook in list(_thread.hooks):
        path, uncalled = _owner(owner, hook)
        hook.record_update(obj, in_data, path, frame, kwargs, new_arrays,
                           timed, uncalled)


def _start_clocks(obj, param):
    """Start the clock of ``obj`` in every hook that measures time (see
    ComputationalCostHook.start_clock); True if one did."""
    # nothing is updated without arrays: nothing is recorded or timed
    timing = [hook for hook in _thread.hooks if hook.measure_time] \
        if _arrays(param) is not None else []
    for hook in timing:
        hook.start_clock(obj, (param.array,))
    return bool(timing)


def in_update():
    """Whether this thread runs an update rule's update or an optimizer's
    or a rule's hooks: the update phase, for a call made there (an MPI
    call of an optimizer hook)."""
    return bool(_thread.rules or _thread.timings)


def _updating(optimizer):
    """The entry (see _Thread) of ``optimizer``'s update, the innermost if
    it is updating, else a new one (its hooks called by hand)."""
    for entry in reversed(_thread.optimizers):
        if entry[0] is optimizer:
            return entry
    return [optimizer, None, {}]


def _emit_rule(entry):
    """The record of the rule of ``entry`` (once)."""
    rule, param, frame, done, before, timed = entry
    if done:
        return
    entry[3] = True
    new = ()
    if before is not None:
        after = _rule_arrays(rule)
        new = [a for k, a in after.items() if k not in before]
        # A state array the rule replaced (SMORMS3 makes new ones at every
        # update) is not new state: it counts as the one it replaces did
        # (the run's, or the user's when the state existed before).
        for k, a in after.items():
            old = before.get(k, a)  # a new key: nothing replaced
            if old is not a:
                for hook in _thread.hooks:
                    if hook.memory:
                        hook._memory.tracker.inherit(old, a)
        # The old arrays die now, before the record reads what is alive.
        entry[4] = before = old = after = None
    kwargs = {}
    if param._loss_scale is not None:
        kwargs['loss_scaled'] = True
    _emit(rule, param, param, frame, kwargs, timed, new)


# The wrappers.  A thread with no active hook goes to the real method at
# once.

def _gm_update(self, lossfun=None, *args, **kwds):
    if not _thread.hooks:
        return _real_gm_update(self, lossfun, *args, **kwds)
    optimizers = _thread.optimizers
    optimizers.append([self, None, {}])
    try:
        return _real_gm_update(self, lossfun, *args, **kwds)
    finally:
        optimizers.pop()


def _rule_update(self, param):
    hooks = _thread.hooks
    if not hooks or not self.enabled:
        return _real_rule_update(self, param)
    # With memory followed, the arrays the rule holds before (only in the
    # entry, see _emit_rule): those it creates (its state at the first
    # update) are the run's.  Whether its clock runs is known when
    # update_core starts (Chainer calls the 'pre' hooks first, always).
    entry = [self, param, sys._getframe(1), False,
             _rule_arrays(self) if any(h.memory for h in hooks) else None,
             None]
    rules = _thread.rules
    rules.append(entry)
    try:
        result = _real_rule_update(self, param)
    finally:
        rules.pop()
    _emit_rule(entry)  # a rule whose update called no hooks
    return result


def _call_hooks(self, timing, args):
    if not _thread.hooks:
        return _real_call_hooks(self, timing, args)
    rules = _thread.rules
    if timing == 'post' and args and rules and rules[-1][0] is args[0]:
        # The rule's update_core has returned.
        _emit_rule(rules[-1])
    timings = _thread.timings
    timings.append(timing)
    try:
        result = _real_call_hooks(self, timing, args)
    finally:
        timings.pop()
    if timing == 'pre' and args and rules and rules[-1][0] is args[0]:
        # update_core starts: its time (measure_time) is the record's.
        rules[-1][5] = _start_clocks(args[0], args[1])
    return result


def _timing(hook):
    timings = _thread.timings
    return timings[-1] if timings else getattr(hook, 'timing', 'pre')


def _call_hook(self, hook, args):
    rules = _thread.rules
    if not (_thread.hooks and len(args) == 2 and rules and
            rules[-1][0] is args[0]):
        return _real_call_hook(self, hook, args)
    # A hook of the rule updating: on the parameter it updates (a float32
    # master copy's arrays under use_fp32_update, whose gradient is the
    # rule's temporary copy, alive during the hook: ``fp32_grad``).
    timed = _start_clocks(hook, args[1])
    result = _real_call_hook(self, hook, args)
    entry = rules[-1]
    kwargs = {'timing': _timing(hook)}
    if args[1] is not entry[1]:
        kwargs['fp32_grad'] = True
    _emit(hook, args[1], entry[1], entry[2], kwargs, timed)
    return result


def _opt_call_hook(self, hook):
    result = _real_opt_call_hook(self, hook)
    if _thread.hooks:
        target = self.target
        frame = sys._getframe(1)
        kwargs = {'timing': _timing(hook)}
        entry = _updating(self)
        each = getattr(hook, 'call_for_each_param', False)
        updated = [(param, _arrays(param)) for param in target.params()]
        for h in list(_thread.hooks):
            paths = _paths(entry, h)
            if not each and h.update_calculator(type(hook)) is None:
                # A hook of the optimizer's own that no calculator knows
                # (GradientClipping has one): one record, ignored.
                h.record_update(hook, (), '/', frame, kwargs, ())
                continue
            for param, in_data in updated:
                if in_data is not None:
                    path, uncalled = paths.get(id(param), _NO_OWNER)
                    h.record_update(hook, in_data, path, frame, kwargs, (),
                                    False, uncalled)
    return result


_WRAPPERS = (_gm_update, _rule_update, _call_hooks, _call_hook,
             _opt_call_hook)
