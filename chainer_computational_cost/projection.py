"""Costs at any batch size, from a few tiny runs.

Every figure of nearly every layer is affine in the batch size ``n``:
``a + b * n``, the batch-independent part being the parameters and
constants.  Three runs at small batches tell ``a`` and ``b`` and check that
the figures really are affine; the report for any batch size follows
exactly, without running it.
"""

import numbers
import warnings

from chainer_computational_cost.computational_cost_hook import (
    ComputationalCostHook)
from chainer_computational_cost import memory
from chainer_computational_cost import report
from chainer_computational_cost.report import (
    R_FLOPS, R_LINK, R_MREAD, R_MWRITE, R_N_IN, R_PARAMS, R_PHASE, R_SHAPES,
    R_TIME, R_TYPE)

#: The batch sizes that are run: two give the line, the third checks it.
BATCHES = (1, 2, 3)


class Projection(report.CostReport):
    """The costs of a run projected to ``batch_size``, with the reading API
    of :class:`ComputationalCostHook` (``layer_report``, ``summary_report``,
    ``total_report``, ``ignored_layers``, ``phase_report``,
    ``link_report``, the ``show_*`` methods, ``roofline_report``,
    ``memory_report``, ...).
    """

    #: The projected memory figures (see memory.project).
    _memory = None

    def __init__(self, records, link_info, batch_size, fma_1flop):
        self._projected = records
        self._links = link_info
        self.batch_size = batch_size
        self.fma_1flop = fma_1flop

    def _records(self):
        return self._projected

    def _memory_state(self):
        return self._memory

    def _link_info(self):
        return self._links


def _affine(values, batches, target):
    """The value at ``target`` of the line through the first two points,
    or None if the third is not on it."""
    (n1, n2, n3), (v1, v2, v3) = batches, values
    step, rest = divmod(v2 - v1, n2 - n1)
    if rest or v1 + step * (n3 - n1) != v3:
        return None
    return v1 + step * (target - n1)


def _project_value(values, batches, target):
    """Project a shape, a param or a number: equal values stay, integers
    move along their line, sequences element by element; None if they do
    not follow one."""
    first = values[0]
    if all(v == first for v in values[1:]):
        return first, True
    if all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
           for v in values):
        out = _affine([int(v) for v in values], batches, target)
        return out, out is not None
    if all(isinstance(v, (tuple, list)) for v in values) and len(
            {len(v) for v in values}) == 1:
        items = []
        for parts in zip(*values):
            item, ok = _project_value(parts, batches, target)
            if not ok:
                return first, False
            items.append(item)
        return type(first)(items), True
    return first, False


def _name_of(records):
    counts = {}
    names = []
    for r in records:
        k = counts.get(r[R_TYPE], 0) + 1
        counts[r[R_TYPE]] = k
        names.append('{}-{}'.format(r[R_TYPE], k))
    return names


def _check_calls(runs, batches):
    """Raise ValueError unless every run made the same calls."""
    names = [_name_of(r) for r in runs]
    for run, n in zip(names[1:], batches[1:]):
        for i, (a, b) in enumerate(zip(names[0], run)):
            if a != b:
                raise ValueError(
                    'the calls differ between batch sizes: call {} is {} '
                    'at n={} but {} at n={}; project_batch needs a run '
                    'whose calls do not depend on the batch size'.format(
                        i + 1, a, batches[0], b, n))
        if len(run) != len(names[0]):
            raise ValueError(
                'the calls differ between batch sizes: {} calls at n={}, '
                '{} at n={}'.format(len(names[0]), batches[0], len(run), n))
    for i, name in enumerate(names[0]):
        keys = {(r[i][R_PHASE], r[i][R_LINK], r[i][R_N_IN],
                 r[i][R_PARAMS] is None) for r in runs}
        if len(keys) != 1:
            raise ValueError(
                'the calls differ between batch sizes: {} is not made in '
                'the same phase, link, with the same inputs, or is not '
                'costed alike at n={}'.format(
                    name, ', '.join(str(n) for n in batches)))
    return names[0]


def project_records(runs, batches, batch_size):
    """Records at ``batch_size`` from the records of runs at ``batches``
    (three runs making the same calls).

    Raises ValueError naming the first layer whose calls or figures do not
    line up, with its figures at each batch size.
    """
    names = _check_calls(runs, batches)
    out = []
    for i, name in enumerate(names):
        calls = [run[i] for run in runs]
        record = list(calls[0])
        for field, label in ((R_FLOPS, 'flops'), (R_MREAD, 'mread'),
                             (R_MWRITE, 'mwrite')):
            values = [c[field] for c in calls]
            value = _affine(values, batches, batch_size)
            if value is None or value < 0:
                raise ValueError(
                    '{} of layer {} is not affine in the batch size: {}; '
                    'it cannot be projected to batch {}'.format(
                        label, name, ', '.join(
                            '{} at n={}'.format(v, n)
                            for v, n in zip(values, batches)),
                        batch_size))
            record[field] = value
        shapes, ok = _project_value([c[R_SHAPES] for c in calls], batches,
                                    batch_size)
        if not ok:
            raise ValueError(
                'the shapes of layer {} do not grow along the batch: {}'
                .format(name, ', '.join(
                    '{} at n={}'.format(c[R_SHAPES], n)
                    for c, n in zip(calls, batches))))
        record[R_SHAPES] = shapes
        if record[R_PARAMS] is not None:
            params = {}
            for key, value in record[R_PARAMS].items():
                values = [c[R_PARAMS].get(key) for c in calls]
                params[key] = _project_value(values, batches,
                                             batch_size)[0]
            record[R_PARAMS] = params
        record[R_TIME] = None
        out.append(tuple(record))
    return out


def project_batch(run, batch_size, fma_1flop=True):
    """Cost report of ``run(batch_size)`` computed from runs at batch
    sizes 1, 2 and 3.

    Args:
        run: a callable ``run(n)`` doing the user's forward pass (or
            training step) at batch size ``n``; it is called three times.
        batch_size (int): the batch size to report (>= 1).
        fma_1flop (bool): as for :class:`ComputationalCostHook`.

    Returns:
        Projection: the reading API of the hook, at ``batch_size``.

    Raises:
        ValueError: the runs do not make the same calls, or a figure is not
            affine in the batch size (``F.matmul(x, x.T)`` grows as n**2);
            the message names the first offending layer and its figures.
    """
    if not callable(run):
        raise TypeError('run must be a callable run(n), got {!r}'.format(
            run))
    if isinstance(batch_size, bool) or not isinstance(
            batch_size, numbers.Integral) or batch_size < 1:
        raise ValueError('batch_size must be an int >= 1, got {!r}'.format(
            batch_size))
    if not isinstance(fma_1flop, bool):
        raise TypeError('fma_1flop must be a bool, got {!r}'.format(
            fma_1flop))
    runs = []
    links = []
    states = []
    for n in BATCHES:
        hook = ComputationalCostHook(fma_1flop=fma_1flop, memory=True)
        with warnings.catch_warnings():
            if runs:  # the first run said it already
                warnings.simplefilter('ignore', report.ReportWarning)
            with hook:
                run(n)
        runs.append(hook._records())
        links.append(hook._link_info())
        states.append(hook._memory_state())
    if any(info != links[0] for info in links[1:]):
        raise ValueError('the links called differ between batch sizes: '
                         '{}'.format(', '.join(
                             '{} at n={}'.format(sorted(info), n)
                             for info, n in zip(links, BATCHES))))
    records = project_records(runs, BATCHES, int(batch_size))
    records, state = memory.project(runs, states, BATCHES, int(batch_size),
                                    records)
    result = Projection(records, links[0], int(batch_size), fma_1flop)
    result._memory = state
    return result
