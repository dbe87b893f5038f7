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
from chainer_computational_cost.cost_calculators import Cost
from chainer_computational_cost.cost_calculators import function_object
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

# C-level: a list comprehension would run a Python frame per call.
_shape = operator.attrgetter('shape')

_getframe = sys._getframe

# What a calculator returns in the common case, checked in the hook itself.
_TUPLES = (tuple, Cost)


def _walk(frame, stack, stop_code=None, stop_id=None):
    """Append (code, lasti, code, lasti, ...) to the list ``stack``, from
    ``frame`` outwards up to the frame of code ``stop_code`` and id
    ``stop_id`` if it is met; tell whether it was.

    Code objects hold no arrays and no locals, unlike frames, and the
    bytecode offset is cheap to read where the line number is not: lines
    are only looked up when a report is read.
    """
    append = stack.append
    while frame is not None:
        code = frame.f_code
        append(code)
        append(frame.f_lasti)
        if code is stop_code and id(frame) == stop_id:
            return True
        frame = frame.f_back
    return False


def _lineno(code, lasti):
    line = code.co_firstlineno
    for offset, lineno in dis.findlinestarts(code):
        if offset > lasti:
            break
        if lineno is not None:
            line = lineno
    return line


def _format_stack(flat):
    """Text of a stack captured as a flat (code, lasti, ...) sequence,
    innermost frame first."""
    frames = [traceback.FrameSummary(
        flat[i].co_filename, _lineno(flat[i], flat[i + 1]), flat[i].co_name)
        for i in range(len(flat) - 2, -1, -2)]
    return ''.join(traceback.format_list(frames))


# A stored record is one flat tuple, the cheapest thing to keep per call:
# these fields, then the frames inside the ``with`` block as (code, lasti)
# pairs, innermost first.  ``params`` is None for a call that could not be
# costed; ``shapes`` holds the shapes of the ``n_in`` inputs, then of the
# outputs; ``outer`` is the flat stack outside the block, shared by every
# record.
(_TYPE, _FLOPS, _MREAD, _MWRITE, _PARAMS, _N_IN, _SHAPES, _ERROR, _OUTER,
 _FRAMES) = range(10)


def _numbered(records):
    """(name, record) pairs: each call named after its type and its rank
    among the calls of that type, costed or not."""
    counts = {}
    for r in records:
        k = counts.get(r[_TYPE], 0) + 1
        counts[r[_TYPE]] = k
        yield '{}-{}'.format(r[_TYPE], k), r


def _record_dict(name, r):
    """The public form of a stored record (fresh containers every time)."""
    n_in = r[_N_IN]
    d = {'name': name, 'type': r[_TYPE],
         'traceback': _format_stack(r[_FRAMES:] + r[_OUTER]),
         'input_shapes': list(r[_SHAPES][:n_in]),
         'output_shapes': list(r[_SHAPES][n_in:])}
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
        self._records = []
        self._warned = set()
        # One copy of each shapes tuple seen; see forward_postprocess.
        self._interned = {}
        # The frame that entered the ``with`` block (its id and code) and
        # the stack outside it; see forward_postprocess.
        self._entry_id = None
        self._entry_code = None
        self._outer = ()

    def __enter__(self):
        frame = _getframe(1)
        self._entry_id = id(frame)
        self._entry_code = frame.f_code
        outer = []
        _walk(frame.f_back, outer)
        self._outer = tuple(outer)
        return super(ComputationalCostHook, self).__enter__()

    def __exit__(self, *args):
        self._entry_id = self._entry_code = None
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
        # This runs once per function call of the user's forward pass (see
        # benchmarks/overhead.py).  Every object it keeps costs time later
        # (allocation in cold memory, garbage collection), so a call keeps
        # one flat tuple and shares everything else it can.
        caller = _getframe(1)
        outputs = (caller.f_locals.get('outputs')
                   if caller.f_code is _APPLY_CODE else None)
        # The shapes of the inputs, then of the outputs, in one tuple;
        # identical ones recur all the time (loops, repeated blocks) and
        # share one copy.
        if type(outputs) is tuple and type(in_data) is tuple:
            shapes = tuple(map(_shape, in_data + outputs))
            out_shapes = shapes[len(in_data):]
        else:  # not called by FunctionNode.apply: outputs unknown
            shapes = tuple(map(_shape, in_data))
            out_shapes = None
        shapes = self._interned.setdefault(shapes, shapes)
        function = function_object(function)  # what a calculator sees
        cls = type(function)
        type_name = cls.__name__

        calc = self._custom.get(cls) or calculators.get(cls)
        error = None
        if calc is None:
            flops = mread = mwrite = 0
            params = None
        else:
            try:
                result = calc(function, in_data, fma_1flop=self._fma_1flop,
                              out_shapes=out_shapes)
                # The common result passes these exact-type tests;
                # validate_cost checks (and explains) anything else.
                if type(result) not in _TUPLES or len(result) != 4:
                    result = validate_cost(result, calc, type_name)
                flops, mread, mwrite, params = result
                if not (type(flops) is int and type(mread) is int
                        and type(mwrite) is int and type(params) is dict
                        and flops >= 0 and mread >= 0 and mwrite >= 0):
                    flops, mread, mwrite, params = validate_cost(
                        result, calc, type_name)
            except Exception as e:
                if self._strict:
                    raise
                error = '{}: {}'.format(type(e).__name__, e)
                flops = mread = mwrite = 0
                params = None
            else:
                # Counts that carry their bytes (Elements) are exact; a
                # plain count of reads takes the first input's itemsize,
                # one of writes the first output's.
                if type(mread) is int:
                    mread *= _itemsize(in_data)
                else:
                    mread = mread.nbytes
                if type(mwrite) is int:
                    mwrite *= _itemsize(in_data if out_shapes is None
                                        else outputs)
                else:
                    mwrite = mwrite.nbytes

        # The frames inside the ``with`` block, up to the one that entered
        # it; the frames outside it are the same for every call.
        record = [type_name, flops, mread, mwrite, params, len(in_data),
                  shapes, error, ()]
        if _walk(caller, record, self._entry_code, self._entry_id):
            record[_OUTER] = self._outer
        self._records.append(tuple(record))
        if params is None:
            self._warn_ignored(cls, error)

    def _warn_ignored(self, cls, error):
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
        return [_record_dict(name, r) for name, r in _numbered(self._records)
                if r[_PARAMS] is not None]

    def _cost_rows(self):
        # What the aggregations need, without formatting tracebacks.
        return [{'type': r[_TYPE], 'flops': r[_FLOPS], 'mread': r[_MREAD],
                 'mwrite': r[_MWRITE]} for r in self._records
                if r[_PARAMS] is not None]

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
        for name, r in _numbered(self._records):
            if r[_PARAMS] is None:
                d = _record_dict(name, r)
                del d['name']
                out[name] = d
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
        if all(r[_PARAMS] is None for r in self._records):
            warnings.warn('nothing has been recorded by this '
                          'ComputationalCostHook yet: no report to show',
                          UserWarning, stacklevel=3)
            return
        ost.write(text)
