"""An oracle of live memory that owes nothing to the hook: tracemalloc.

NumPy reports every buffer it allocates to tracemalloc, in a domain of its
own, with the Python stack that allocated it.  The bytes a run's calls
created and still hold are then the NumPy buffers alive that were
allocated inside a function call (``FunctionNode.apply``: a forward, the
node's outputs and what it keeps) or inside a node's backward
(``backprop_step``: a ``FunctionNode.backward``, an old-style
``Function.backward``, the calls they make); what the user's own code
allocated (its inputs, the links' parameters, the initial gradient
``Variable.backward`` makes for a scalar) is everything else.

The hook never reads tracemalloc: it keeps weak references to the arrays
its calls return, keep and take.  The two agree only if both are right.
"""

import gc
import tracemalloc

import chainer
from chainer import _backprop_utils
from chainer import function_node

#: NumPy's tracemalloc domain (NPY_TRACE_DOMAIN).
NUMPY_DOMAIN = 389047

#: Frames kept per allocation: enough to reach apply or backprop_step
#: from any NumPy allocation of a forward or backward (apply at most 7
#: frames deep, backprop_step 10, over 400 of the fuzz test's programs;
#: a run's buffer allocated deeper would count as the user's, a failure of
#: the comparison, not a pass).  No more: tracemalloc records the frames of
#: every allocation, Python's included, and each frame costs (40 made the
#: fuzz test's runs five times slower than 12 under pytest).
NFRAMES = 12


def _lines(function):
    code = function.__code__
    return {(code.co_filename, line) for _, _, line in code.co_lines()
            if line is not None}


#: (file, line) of the two places a run allocates from.
RUN_LINES = frozenset(_lines(function_node.FunctionNode.apply)
                      | _lines(_backprop_utils.backprop_step))


#: (file, line) of a node's backward (where gradients are made).
BACKWARD_LINES = frozenset(_lines(_backprop_utils.backprop_step))


def _kind(frames):
    # 0: the user's, 1: a run's forward, 2: a run's backward.
    return (2 if any(f in BACKWARD_LINES for f in frames) else
            1 if any(f in RUN_LINES for f in frames) else 0)


#: The kind of each allocation stack met (the stacks of a run repeat).
_KINDS = {}


def traced_split():
    """``(user, forward, backward)``: bytes of the NumPy buffers alive
    (allocated since tracing started) that the user's code allocated,
    that the run's calls did outside any backward pass, and inside one."""
    # The raw traces take_snapshot() wraps, (domain, size, stack, ...)
    # with the stack as (file, line) pairs: the wrapping (an object per
    # trace and frame, in Python) is a hundred times slower, and the fuzz
    # test samples after thousands of calls.
    found = [0, 0, 0]
    kinds = _KINDS
    for trace in [t for t in tracemalloc._get_traces()
                  if t[0] == NUMPY_DOMAIN]:
        frames = trace[2]
        kind = kinds.get(frames)
        if kind is None:
            kind = kinds[frames] = _kind(frames)
        found[kind] += trace[1]
    return tuple(found)


def traced():
    """``(run, user)``: bytes of the NumPy buffers alive that the run's
    calls allocated, and that anything else allocated (since tracing
    started)."""
    user, forward, backward = traced_split()
    return forward + backward, user


def traced_peak(step):
    """tracemalloc's own peak while ``step()`` runs (every allocation of
    NumPy and Python), above what was traced before it: the step's inputs
    are made beforehand, so what it adds is what the hook should see."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        kept = step()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    del kept
    return peak


class Sampler(chainer.FunctionHook):
    """Samples ``traced()`` right after each call; entered after the cost
    hook, it runs after it, at the moment the hook's ``live`` is taken."""

    name = 'MemoryOracle'

    def __init__(self):
        self.samples = []

    def forward_postprocess(self, function, in_data):
        self.samples.append(traced()[0])


class Tracing(object):
    """``with Tracing():`` traces allocations (from now on only, so the
    buffers alive before are not seen) with the garbage collector off (a
    collection between the hook's reading and the sampler's would free
    cycles one saw and the other did not)."""

    def __enter__(self):
        self.gc = gc.isenabled()
        gc.disable()
        tracemalloc.start(NFRAMES)
        return self

    def __exit__(self, *args):
        tracemalloc.stop()
        _KINDS.clear()
        if self.gc:
            gc.enable()
