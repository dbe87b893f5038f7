"""The update phase: what a Chainer optimizer does to each parameter after
the backward pass, recorded by the hooks active in the thread.

An optimizer's update runs its update rules and optimizer hooks with array
arithmetic, not with Chainer functions, so function hooks never see it.
While at least one ``ComputationalCostHook`` is active, five methods
of Chainer's optimizer classes are replaced at class level by wrappers
that call the real method and then tell the hooks active in the calling
thread what was updated (their ``_record_update``); the last hook to exit
puts the real methods back (only those still ours: a method someone else
replaced in between is left as it is).  A thread with no active hook goes
straight to the real method.  Nothing of the user's is touched: the
wrappers read the rule, the hook, the parameter and its gradient, and the
optimizer's target link, never change them, and run no arithmetic.

* ``GradientMethod.update``: the optimizer whose target owns the
  parameters (each record is in the link that owns its parameter);
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
    updating (``[optimizer, {id(param): link path} or None]``), the rules
    updating (see _rule_update) and the timings of the hooks running."""

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


def _link_paths(link):
    """``{id(parameter): path of the link that owns it}`` under ``link``
    (paths as the hook names links: '/' for ``link``, '/a/b' below)."""
    return {id(p): name.rpartition('/')[0] or '/'
            for name, p in link.namedparams()}


def _owner(param):
    """The link path of ``param`` in the innermost optimizer updating that
    knows it ('/' if none does: a parameter updated by hand)."""
    for entry in reversed(_thread.optimizers):
        paths = entry[1]
        if paths is None:
            target = getattr(entry[0], 'target', None)
            paths = entry[1] = {} if target is None else _link_paths(target)
        path = paths.get(id(param))
        if path is not None:
            return path
    return '/'


def _arrays(param):
    """``(param, grad)`` arrays of a parameter, or None when either is
    missing (nothing is updated then)."""
    array = param.array
    grad = param.grad
    if array is None or grad is None:
        return None
    return array, grad


def _rule_arrays(rule):
    """The arrays a rule holds for its parameter: its state's and its
    float32 master copy's."""
    found = [a for a in (rule.state or {}).values()
             if getattr(a, 'nbytes', None) is not None]
    master = getattr(rule, '_fp32_param', None)
    if master is not None and master.array is not None:
        found.append(master.array)
    return found


def _emit(obj, param, link, frame, kwargs, new_arrays=(), timed=False):
    in_data = _arrays(param)
    if in_data is None:
        return
    for hook in list(_thread.hooks):
        hook._record_update(obj, in_data, link, frame, kwargs, new_arrays,
                            timed)


def _start_clocks(obj, param):
    """Start the clock of ``obj`` in every hook that measures time (see
    ComputationalCostHook._start_clock); True if one did."""
    started = False
    if _arrays(param) is None:
        return started  # nothing is updated, nothing recorded
    for hook in _thread.hooks:
        if hook.measure_time:
            hook._start_clock(obj, (param.array,))
            started = True
    return started


def _emit_rule(entry):
    """The record of the rule of ``entry`` (once)."""
    rule, param, frame, done, before, timed = entry
    if done:
        return
    entry[3] = True
    new = ()
    if before is not None:
        new = [a for a in _rule_arrays(rule)
               if not any(a is b for b in before)]
    kwargs = {}
    if param._loss_scale is not None:
        kwargs['loss_scaled'] = True
    _emit(rule, param, _owner(param), frame, kwargs, new, timed)


# The wrappers.  A thread with no active hook goes to the real method at
# once.

def _gm_update(self, lossfun=None, *args, **kwds):
    if not _thread.hooks:
        return _real_gm_update(self, lossfun, *args, **kwds)
    optimizers = _thread.optimizers
    optimizers.append([self, None])
    try:
        return _real_gm_update(self, lossfun, *args, **kwds)
    finally:
        optimizers.pop()


def _rule_update(self, param):
    hooks = _thread.hooks
    if not hooks or not self.enabled:
        return _real_rule_update(self, param)
    # With memory followed, the arrays the rule holds before: those it
    # creates (its state at the first update) are the run's.
    before = (_rule_arrays(self) if any(h.memory for h in hooks)
              else None)
    entry = [self, param, sys._getframe(1), False, before, False]
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
    # master copy's arrays under use_fp32_update).
    timed = _start_clocks(hook, args[1])
    result = _real_call_hook(self, hook, args)
    entry = rules[-1]
    _emit(hook, args[1], _owner(entry[1]), entry[2],
          {'timing': _timing(hook)}, timed=timed)
    return result


def _opt_call_hook(self, hook):
    result = _real_opt_call_hook(self, hook)
    if _thread.hooks:
        target = self.target
        frame = sys._getframe(1)
        kwargs = {'timing': _timing(hook)}
        paths = _link_paths(target)
        each = getattr(hook, 'call_for_each_param', False)
        updated = [(param, _arrays(param)) for param in target.params()]
        for h in list(_thread.hooks):
            if not each and h._update_calculator(type(hook)) is None:
                # A hook of the optimizer's own that no calculator knows
                # (GradientClipping has one): one record, ignored.
                h._record_update(hook, (), '/', frame, kwargs, ())
                continue
            for param, in_data in updated:
                if in_data is not None:
                    h._record_update(hook, in_data,
                                     paths.get(id(param), '/'), frame,
                                     kwargs, ())
    return result


_WRAPPERS = (_gm_update, _rule_update, _call_hooks, _call_hook,
             _opt_call_hook)
