"""The function hook that records the theoretical cost of every call."""

import itertools
import sys
import threading
import traceback
import warnings

import chainer
import numpy

from chainer_computational_cost import cost_calculators
from chainer_computational_cost.cost_calculators import calculators
from chainer_computational_cost.cost_calculators import check_signature
from chainer_computational_cost.cost_calculators import function_object
from chainer_computational_cost.cost_calculators import validate_cost
from chainer_computational_cost import report


_hook_ids = itertools.count(1)


class _ForwardProbe(object):
    """Stands in for a node's ``forward`` for exactly one call, to see the
    shapes of the outputs without running anything twice.

    ``FunctionNode.apply`` calls ``self.forward`` once, between the hooks'
    pre- and post-processing, and does not hand the outputs to the hooks.
    The probe is put in the node's instance dict (shadowing the class's
    method), calls the real method, notes the output shapes and removes
    itself, so the node is left as it was.
    """

    __slots__ = ('node', 'previous', 'output_shapes')

    _MISSING = object()

    def __init__(self, node):
        self.node = node
        self.previous = node.__dict__.get('forward', self._MISSING)
        self.output_shapes = None
        node.__dict__['forward'] = self

    def _restore(self):
        d = self.node.__dict__
        if d.get('forward') is self:
            if self.previous is self._MISSING:
                del d['forward']
            else:
                d['forward'] = self.previous
        # Drop the node so that nothing keeps it alive through the probe.
        self.node = None

    def __call__(self, inputs):
        node = self.node
        self._restore()
        outputs = node.forward(inputs)
        if isinstance(outputs, tuple):
            self.output_shapes = [getattr(y, 'shape', None) for y in outputs]
        return outputs


def _probe(node):
    existing = node.__dict__.get('forward')
    if isinstance(existing, _ForwardProbe):  # another hook got there first
        return existing
    return _ForwardProbe(node)


def _capture_stack(frame):
    """The call stack as (code, line number) pairs, innermost last.

    Code objects hold no arrays and no locals, unlike frames; the text is
    only made when a report is read.
    """
    stack = []
    while frame is not None:
        stack.append((frame.f_code, frame.f_lineno))
        frame = frame.f_back
    stack.reverse()
    return tuple(stack)


def _format_stack(stack):
    return ''.join(traceback.format_list(
        [traceback.FrameSummary(code.co_filename, lineno, code.co_name)
         for code, lineno in stack]))


def _shape(x):
    shape = getattr(x, 'shape', None)
    return None if shape is None else tuple(shape)


def _itemsize(in_data):
    """Bytes per element: the first input's dtype decides (documented)."""
    for x in in_data:
        dtype = getattr(x, 'dtype', None)
        if dtype is not None:
            return numpy.dtype(dtype).itemsize
    return numpy.dtype(numpy.float32).itemsize


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
        self._local = threading.local()

    @property
    def fma_1flop(self):
        """Whether a fused multiply-add counts as one FLOP."""
        return self._fma_1flop

    @property
    def strict(self):
        """Whether calculator errors propagate."""
        return self._strict

    # Observation

    def _pending(self):
        pending = getattr(self._local, 'pending', None)
        if pending is None:
            pending = self._local.pending = {}
        return pending

    def forward_preprocess(self, function, in_data):
        """Prepare to see the output shapes of ``function``'s forward."""
        self._pending()[id(function)] = _probe(function)

    def forward_postprocess(self, function, in_data):
        """Cost one call and store its record."""
        probe = self._pending().pop(id(function), None)
        stack = _capture_stack(sys._getframe(1))
        func = function_object(function)
        cls = type(func)
        type_name = cls.__name__
        k = self._counts.get(type_name, 0) + 1
        self._counts[type_name] = k
        record = {
            'name': '{}-{}'.format(type_name, k),
            'type': type_name,
            'traceback': stack,
            'input_shapes': [_shape(x) for x in in_data],
            'output_shapes': (probe.output_shapes if probe is not None
                              else None) or [],
        }

        calc = self._custom.get(cls) or calculators.get(cls)
        if calc is None:
            self._ignore(record, cls, None)
            return
        try:
            result = calc(func, in_data, fma_1flop=self._fma_1flop)
            cost = validate_cost(result, getattr(calc, '__qualname__',
                                                 repr(calc)), type_name)
        except Exception as e:
            if self._strict:
                raise
            self._ignore(record, cls, e)
            return
        itemsize = _itemsize(in_data)
        record['flops'] = cost.flops
        record['mread'] = cost.mread * itemsize
        record['mwrite'] = cost.mwrite * itemsize
        record['params'] = cost.params
        self._layers.append(record)

    def _ignore(self, record, cls, error):
        qualname = '{}.{}'.format(cls.__module__, cls.__name__)
        if error is None:
            message = ('`{}` is not yet supported by ComputationalCostHook, '
                       'ignored'.format(qualname))
        else:
            message = ('the cost calculator for `{}` failed, layer ignored: '
                       '{}: {}'.format(qualname, type(error).__name__,
                                       error))
        record['error'] = None if error is None else '{}: {}'.format(
            type(error).__name__, error)
        self._ignored.append(record)
        if (cls, error is None) not in self._warned:
            self._warned.add((cls, error is None))
            warnings.warn(message, UserWarning, stacklevel=2)

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
        return [dict(r, traceback=_format_stack(r['traceback']),
                     input_shapes=list(r['input_shapes']),
                     output_shapes=list(r['output_shapes']),
                     params=dict(r['params']))
                for r in self._layers]

    @property
    def layer_report(self):
        """Ordered dict layer name -> costs of that call; last 'total'."""
        return report.layer_report(self._layer_dicts())

    @property
    def summary_report(self):
        """Ordered dict layer type -> summed costs; last 'total'."""
        return report.summary_report(self._layers)

    @property
    def total_report(self):
        """Total costs of every call recorded."""
        return report.total_report(self._layers)

    @property
    def ignored_layers(self):
        """Ordered dict layer name -> calls that could not be costed."""
        out = {}
        for r in self._ignored:
            entry = {'type': r['type'],
                     'traceback': _format_stack(r['traceback']),
                     'input_shapes': list(r['input_shapes']),
                     'output_shapes': list(r['output_shapes'])}
            if r['error'] is not None:
                entry['error'] = r['error']
            out[r['name']] = entry
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

