"""Scratch figures (bytes a call allocates and frees inside itself) against
tracemalloc, call by call, on NumPy: the probe and its allowances, for
the tests of the calculators' scratch.

A probe hook resets tracemalloc's peak when a call starts and reads it when
the call ends: the peak above what is traced at the end (outputs and what
the node keeps) is the call's scratch as the model defines it.  The figure
of each case is derived by hand in a comment of its test.

What tracemalloc sees beside the modelled buffers:

* Python's own objects made (or freed) during a call: frames, tuples,
  NumPy scalars and index arrays of a few elements, measured between -1.4
  and +3.8 KiB on these calls (``PY``);
* NumPy's ufunc buffers (``bufsize``, 8192 elements): a ufunc that casts
  an operand or walks strided views in its buffered loop takes up to one
  buffer of ``min(8192, n)`` elements per operand; not modelled (NumPy's
  internals), so a case whose path has such a ufunc allows them, named in
  a comment.
"""

import tracemalloc

import chainer
import numpy as np

from chainer_computational_cost import cost_calculators as cc


#: Python objects a call makes or frees (see the module docstring).
PY = 4096

#: NumPy's default ufunc buffer, in elements.
BUFSIZE = 8192


def buffers(k, n, itemsize=4):
    """Up to ``k`` ufunc buffers of a loop over ``n`` elements."""
    return k * min(BUFSIZE, n) * itemsize


class _Probe(chainer.FunctionHook):
    """Each call's traced peak above what is traced when it ends, beside
    the scratch figure."""

    name = 'ScratchProbe'

    def __init__(self):
        self.calls = []

    def forward_preprocess(self, function, in_data):
        tracemalloc.reset_peak()

    def forward_postprocess(self, function, in_data):
        current, peak = tracemalloc.get_traced_memory()
        figure = cc.scratch_of(function, in_data)
        name = type(cc.function_object(function)).__name__
        self.calls.append((name, peak - current, figure))

    # An old-style Function's backward runs no call: its step is measured
    # the same way, as '<type> backward', beside its backward figure.
    def backward_preprocess(self, function, in_data, out_grad):
        if isinstance(function, chainer.function.FunctionAdapter):
            tracemalloc.reset_peak()

    def backward_postprocess(self, function, in_data, out_grad):
        if isinstance(function, chainer.function.FunctionAdapter):
            current, peak = tracemalloc.get_traced_memory()
            figure = cc.scratch_of(function, in_data, backward=True,
                                   grad_outputs=out_grad)
            name = type(function.function).__name__ + ' backward'
            self.calls.append((name, peak - current, figure))


def probe(step):
    """``{type name: [(measured, figure), ...]}`` of the calls ``step()``
    makes."""
    p = _Probe()
    tracemalloc.start()
    try:
        with p:
            step()
    finally:
        tracemalloc.stop()
    out = {}
    for name, measured, figure in p.calls:
        out.setdefault(name, []).append((measured, figure))
    return out


def check(calls, name, expected, allowance=0):
    """Every call of ``name`` (or of the first of a tuple of names that
    ran: Chainer 6 and 7 name some classes differently): the figure is
    ``expected`` (derived by hand) and tracemalloc's scratch is within
    ``PY`` of it, plus ``allowance`` of ufunc buffers above."""
    names = name if isinstance(name, tuple) else (name,)
    found = [n for n in names if n in calls]
    assert found, sorted(calls)
    for measured, figure in calls[found[0]]:
        assert figure == expected
        assert -PY <= measured - figure <= PY + allowance, (measured, figure)


def rand(rng, *shape, dtype=np.float32):
    """A Variable of ``shape`` drawn from ``rng`` (uniform in [0, 1))."""
    return chainer.Variable(rng.rand(*shape).astype(dtype))


def backprop(y):
    """Backward from a C-contiguous gradient of ones."""
    y.grad = np.ones(y.shape, y.dtype)
    y.backward()
