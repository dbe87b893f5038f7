"""The function hook that records the theoretical cost of every call."""

import dis
import itertools
import operator
import sys
import traceback
import warnings

import chainer

from chainer_computational_cost.cost_calculators import calculators
from chainer_computational_cost.cost_calculators import check_signature
from chainer_computational_cost.cost_calculators import validate_cost
from chainer_computational_cost import report


_hook_ids = itertools.count(1)


# ``FunctionNode.apply`` (Chainer 6 and 7) runs ``forward`` once, keeps
# its result in the local variable ``outputs`` and then calls the hooks'
# ``forward_postprocess`` itself.  Reading that local from the caller's frame
# gives the output shapes without running anything twice and without
# touching the node (an instance attribute set on a node, even for one call,
# slows down attribute access on every node of its class).
_APPLY_CODE = chainer.FunctionNode.apply.__code__


def _output_shapes(frame):
    """Shapes of the outputs ``FunctionNode.apply`` holds in ``frame``, or
    None if ``frame`` is not such a call."""
    if frame.f_code is not _APPLY_CODE:
        return None
    outputs = frame.f_locals.get('outputs')
    if type(outputs) is not tuple:
        return None
    return tuple(map(_shape, outputs))


# C-level: a list comprehension would run a Python frame per call.
_shape = operator.attrgetter('shape')

# An old-style ``chainer.Function`` reaches hooks wrapped in this adapter.
_ADAPTER = chainer.function.FunctionAdapter


def _walk(frame, stop=None):
    """Flat tuple (code, lasti, code, lasti, ...) from ``frame`` outwards,
    ending with the frame ``stop`` (an ``(id, code)`` pair) if it is met.

    Code objects hold no arrays and no locals, unlike frames, and the
    bytecode offset is cheap to read where the line number is not: lines
    are only looked up when a report is read.  Returns the tuple and whether
    ``stop`` was met.
    """
    stop_id, stop_code = stop if stop is not None else (None, None)
    stack = []
    append = stack.append
    while frame is not None:
        code = frame.f_code
        append(code)
        append(frame.f_lasti)
        if id(frame) == stop_id and code is stop_code:
            return tuple(stack), True
        frame = frame.f_back
    return tuple(stack), False


def _lineno(code, lasti):
    line = code.co_firstlineno
    for offset, lineno in dis.findlinestarts(code):
        if offset > lasti:
            break
        if lineno is not None:
            line = lineno
    return line


def _format_stack(stack):
    """Text of a stack captured as (inner, outer) flat tuples."""
    flat = stack[0] + stack[1]
    frames = [traceback.FrameSummary(
        flat[i].co_filename, _lineno(flat[i], flat[i + 1]), flat[i].co_name)
        for i in range(len(flat) - 2, -1, -2)]
    return ''.join(traceback.format_list(frames))


# A stored record is a plain tuple, the cheapest thing to build once per
# call; these name its fields.
(_TYPE, _INDEX, _FLOPS, _MREAD, _MWRITE, _PARAMS, _IN_SHAPES, _OUT_SHAPES,
 _STACK, _ERROR) = range(10)


def _record_dict(r):
    """The public form of a stored record (fresh containers every time)."""
    d = {'name': '{}-{}'.format(r[_TYPE], r[_INDEX]), 'type': r[_TYPE],
         'traceback': _format_stack(r[_STACK]),
         'input_shapes': list(r[_IN_SHAPES]),
         'output_shapes': list(r[_OUT_SHAPES] or ())}
    if r[_PARAMS] is not None:
        d.update(flops=r[_FLOPS], mread=r[_MREAD], mwrite=r[_MWRITE],
                 params=dict(r[_PARAMS]))
    if r[_ERROR] is not None:
        d['error'] = r[_ERROR]
    return d


def _itemsize(in_data):
    """Bytes per element: the first input's dtype decides (documented); an
    input without a dtype is skipped."""
    for x in in_data:
        dtype = getattr(x, 'dtype', None)
        if dtype is not None:
            return dtype.itemsize
    return 4  # no array input: assume float32


class ComputationalCostHook(chainer.FunctionHook):
    """Records the theoretical cost of every Chainer function call.

    Use it as a context manager around a forward pass::

        with ComputationalCostHook(fma_1flop=True) as cch:
            y = model(x)
        cch.show_report(unit='G', mode='md')

    Args:
        fma_1flop (bool): count a fused multiply-add as one FLOP (default)
            instead of two.
        strict (bool): let errors of cost calculators propagate instead of
            reporting the layer as ignored with a warning.
    """

    def __init__(self, fma_1flop=True, strict=False):
        for arg, value in (('fma_1flop', fma_1flop), ('strict', strict)):
            if not isinstance(value, bool):
                raise TypeError('{} must be a bool, got {!r}'.format(
                    arg, value))
        # A unique name lets several hooks be active at once (Chainer keys
        # active hooks by name).
        self.name = 'ComputationalCostHook-{}'.format(next(_hook_ids))
        self._fma_1flop = fma_1flop
        self._strict = strict
        self._custom = {}
        self._layers = []
        self._ignored = []
        self._counts = {}
        self._warned = set()
        # One copy of each shape tuple seen; see forward_postprocess.
        self._interned = {}
        # The frame that entered the ``with`` block, as (id, code), and the
        # stack outside it; see forward_postprocess.
        self._entry = None
        self._outer = ()

    def __enter__(self):
        frame = sys._getframe(1)
        self._entry = (id(frame), frame.f_code)
        self._outer = _walk(frame.f_back)[0]
        return super(ComputationalCostHook, self).__enter__()

    def __exit__(self, *args):
        self._entry = None
        return super(ComputationalCostHook, self).__exit__(*args)

    @property
    def fma_1flop(self):
        """Whether a fused multiply-add counts as one FLOP."""
        return self._fma_1flop

    @property
    def strict(self):
        """Whether calculator errors propagate."""
        return self._strict

    # Observation

    def forward_postprocess(self, function, in_data):
        """Cost one call and store its record."""
        # This runs once per function call of the user's forward pass:
        # keep it lean (see benchmarks/overhead.py).
        caller = sys._getframe(1)
        # Identical shapes recur all the time (loops, repeated blocks):
        # keeping one copy of each means the duplicates die at once and the
        # records give the garbage collector less to traverse.  (Stacks are
        # not interned: hashing code objects costs microseconds.)
        intern = self._interned.setdefault
        out_shapes = _output_shapes(caller)
        if out_shapes is not None:
            out_shapes = intern(out_shapes, out_shapes)
        # Frames outside the ``with`` block are the same for every call:
        # walk only up to the block's frame, and share the rest.
        inner, met = _walk(caller, self._entry)
        stack = inner, self._outer if met else ()
        cls = type(function)
        if cls is _ADAPTER:  # an old-style Function: cost what it wraps
            function = function.function
            cls = type(function)
        type_name = cls.__name__
        k = self._counts.get(type_name, 0) + 1
        self._counts[type_name] = k
        in_shapes = tuple(map(_shape, in_data))
        in_shapes = intern(in_shapes, in_shapes)

        calc = self._custom.get(cls) or calculators.get(cls)
        if calc is None:
            self._ignore((type_name, k, 0, 0, 0, None, in_shapes,
                          out_shapes, stack, None), cls, None)
            return
        try:
            result = calc(function, in_data, fma_1flop=self._fma_1flop)
            flops, mread, mwrite, params = validate_cost(
                result, calc, type_name)
        except Exception as e:
            if self._strict:
                raise
            error = '{}: {}'.format(type(e).__name__, e)
            self._ignore((type_name, k, 0, 0, 0, None, in_shapes,
                          out_shapes, stack, error), cls, error)
            return
        itemsize = _itemsize(in_data)
        self._layers.append((type_name, k, flops, mread * itemsize,
                             mwrite * itemsize, params, in_shapes,
                             out_shapes, stack, None))

    def _ignore(self, record, cls, error):
        self._ignored.append(record)
        key = (cls, error is None)
        if key in self._warned:
            return
        self._warned.add(key)
        qualname = '{}.{}'.format(cls.__module__, cls.__name__)
        if error is None:
            message = ('`{}` is not yet supported by ComputationalCostHook, '
                       'ignored'.format(qualname))
        else:
            message = ('the cost calculator for `{}` failed, layer ignored: '
                       '{}'.format(qualname, error))
        warnings.warn(message, UserWarning, stacklevel=3)

    # Custom calculators

    def add_custom_cost_calculator(self, func_type, calculator):
        """Use ``calculator`` for calls of ``func_type`` in this hook only.

        Args:
            func_type (type): a ``FunctionNode`` or old-style ``Function``
                subclass.
            calculator: a callable ``(func, in_data, **kwargs)`` returning
                ``(flops, mread, mwrite, params)``, counts in elements.
        """
        if not isinstance(func_type, type):
            raise TypeError('func_type must be a FunctionNode or Function '
                            'class, got {!r}'.format(func_type))
        if not check_signature(calculator):
            raise TypeError('a cost calculator must have the signature '
                            '(func, in_data, **kwargs), got {!r}'.format(
                                calculator))
        if func_type in self._custom:
            warnings.warn('replacing the custom cost calculator for {}'
                          .format(func_type.__name__), UserWarning,
                          stacklevel=2)
        elif func_type in calculators:
            warnings.warn('overriding the built-in cost calculator for {}'
                          .format(func_type.__name__), UserWarning,
                          stacklevel=2)
        self._custom[func_type] = calculator

    # Reports: each property builds a fresh structure, so changing what it
    # returns never changes the hook.

    def _layer_dicts(self):
        return [_record_dict(r) for r in self._layers]

    def _cost_rows(self):
        # What the aggregations need, without formatting tracebacks.
        return [{'type': r[_TYPE], 'flops': r[_FLOPS], 'mread': r[_MREAD],
                 'mwrite': r[_MWRITE]} for r in self._layers]

    @property
    def layer_report(self):
        """Ordered dict layer name -> costs of that call; last 'total'."""
        return report.layer_report(self._layer_dicts())

    @property
    def summary_report(self):
        """Ordered dict layer type -> summed costs; last 'total'."""
        return report.summary_report(self._cost_rows())

    @property
    def total_report(self):
        """Total costs of every call recorded."""
        return report.total_report(self._cost_rows())

    @property
    def ignored_layers(self):
        """Ordered dict layer name -> calls that could not be costed."""
        out = {}
        for r in self._ignored:
            d = _record_dict(r)
            del d['name']
            out['{}-{}'.format(r[_TYPE], r[_INDEX])] = d
        return out

    def show_report(self, ost=None, mode='csv', unit='autoaligned',
                    columns=report.ReportColumns.DEFAULT, n_digits=3):
        """Write the per-layer report to ``ost``.

        Args:
            ost: a writable text stream (default: ``sys.stdout``).
            mode (str): ``'csv'``, ``'md'`` or ``'table'``.
            unit: ``None``/``''`` (raw numbers), ``'K'``, ``'M'``, ``'G'``,
                ``'T'``, ``'autoaligned'`` (a prefix per column) or
                ``'auto'`` (a prefix per cell).
            columns (list): names from ``ReportColumns``.
            n_digits (int): decimals, 0 to 10 (None means 10).
        """
        columns = report.check_columns(columns, report.LAYER_COLUMNS)
        rows = list(self.layer_report.values())
        self._show(ost, rows, columns, mode, unit, n_digits)

    def show_summary_report(self, ost=None, mode='csv',
                            unit='autoaligned',
                            columns=report.SummaryColumns.DEFAULT,
                            n_digits=3):
        """Write the per-type summary to ``ost`` (see :meth:`show_report`).
        """
        columns = report.check_columns(columns, report.SUMMARY_COLUMNS)
        rows = list(self.summary_report.values())
        self._show(ost, rows, columns, mode, unit, n_digits)

    def _show(self, ost, rows, columns, mode, unit, n_digits):
        if ost is None:
            ost = sys.stdout
        if not callable(getattr(ost, 'write', None)):
            raise TypeError('ost must be a writable text stream, got '
                            '{!r}'.format(ost))
        text = report.render(rows, columns, mode, unit, n_digits)
        if not self._layers:
            warnings.warn('nothing has been recorded by this '
                          'ComputationalCostHook yet: no report to show',
                          UserWarning, stacklevel=3)
            return
        ost.write(text)
