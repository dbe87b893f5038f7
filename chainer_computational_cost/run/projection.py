"""Costs at any batch size, from a few tiny runs.

Every figure of nearly every layer is affine in the batch size ``n``:
``a + b * n``, the batch-independent part being the parameters and
constants.  Three runs at small batches tell ``a`` and ``b`` and check that
the figures really are affine; one more run at a larger batch checks that
they stay on their line beyond the small batches (``x[:4]`` follows the
batch only up to 4).  The report for any batch size follows exactly,
without running it.
"""

import math
import sys
import warnings

import chainer

from chainer_computational_cost.analysis import memory
from chainer_computational_cost.core import checks
from chainer_computational_cost.core.affine import affine
from chainer_computational_cost.core.records import as_records
from chainer_computational_cost.core.records import ReportWarning
from chainer_computational_cost.core.records import flat_records
from chainer_computational_cost.report import cost_report as report
from chainer_computational_cost.run.hook import ComputationalCostHook

#: The batch sizes that are run (two give the line, the third checks it).
BATCHES = (1, 2, 3)
#: The batch sizes used instead when batch 1 does not line up with the
#: others: Chainer skips some identity operations at batch 1 (the
#: broadcast of a gradient summed over the batch, the split of a single
#: sequence), so a run's calls may differ there only.
LATER_BATCHES = (2, 3, 4)
#: The default batch size of the run that checks a projection before it is
#: trusted: one more than the sizes programs most often slice (``x[:8]``).
CHECK_BATCH = 9

#: The figures of a record that are projected along their line.
_FIGURES = ('flops', 'mread', 'mwrite')


class Projection(report.ReportSnapshot):
    """The costs of a run projected to ``batch_size``, with the reading API
    of :class:`ComputationalCostHook` (``layer_report``, ``summary_report``,
    ``total_report``, ``ignored_layers``, ``phase_report``,
    ``link_report``, the ``show_*`` methods, ``roofline_report``,
    ``memory_report``, ...).  It can be pickled.
    """

    def __init__(self, records, link_info, batch_size, fma_1flop,
                 flop_convention=None, memory_state=None):
        # memory_state: the projected memory figures (see memory.project)
        super(Projection, self).__init__(records, link_info, fma_1flop,
                                         memory_state)
        self.batch_size = batch_size
        self.flop_convention = flop_convention

    def __reduce__(self):
        # Records hold interned stacks of code objects: saved as frames.
        return (Projection, (flat_records(self.records()),
                             self.link_info(), self.batch_size,
                             self.fma_1flop, self.flop_convention,
                             self._memory))


def same(values):
    """Whether the recorded values in ``values`` (one or more) are all
    equal, without raising: arrays (NumPy or CuPy, as a custom
    calculator's params may hold) are equal when their shapes, dtypes and
    elements are; containers element by element."""
    first, *others = values
    if all(v is first for v in others):
        return True
    if any(type(v) is not type(first) for v in others):
        return False
    if isinstance(first, (tuple, list)):
        return len({len(v) for v in values}) == 1 and all(
            same(items) for items in zip(*values))
    if isinstance(first, dict):
        return all(v.keys() == first.keys() for v in others) and all(
            same([v[k] for v in values]) for k in first)
    try:
        if hasattr(first, 'shape') and hasattr(first, 'dtype') and \
                hasattr(first, 'all'):
            return all(v.shape == first.shape and v.dtype == first.dtype
                       and bool((v == first).all()) for v in others)
        return all(bool(v == first) for v in others)
    except Exception:
        return False


def _project_value(values, batches, target):
    """Project a shape, a param or a number: equal values stay, integers
    move along their line, sequences element by element; None if they do
    not follow one."""
    first, *_ = values
    if same(values):
        return first, True
    if all(checks.is_int(v) for v in values):
        out = affine([int(v) for v in values], batches, target)
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
        k = counts.get(r.type, 0) + 1
        counts[r.type] = k
        names.append('{}-{}'.format(r.type, k))
    return names


def _check_calls(runs, batches):
    """Raise ValueError unless every run made the same calls."""
    names = [_name_of(r) for r in runs]
    first = names[0]
    for run, n in zip(names[1:], batches[1:]):
        for i, (a, b) in enumerate(zip(first, run)):
            if a != b:
                raise ValueError(
                    'the calls differ between batch sizes: call {} is {} '
                    'at n={} but {} at n={}; project_batch needs a run '
                    'whose calls do not depend on the batch size'.format(
                        i + 1, a, batches[0], b, n))
        if len(run) != len(first):
            raise ValueError(
                'the calls differ between batch sizes: {} calls at n={}, '
                '{} at n={}'.format(len(first), batches[0], len(run), n))
    for i, name in enumerate(first):
        # The number of inputs may follow the batch (TransposeSequence
        # takes one sequence per sample): project_records checks it.
        # Costed alike: params a dict in every run, or None (ignored).
        keys = {(r[i].phase, r[i].link, type(r[i].params)) for r in runs}
        if len(keys) != 1:
            raise ValueError(
                'the calls differ between batch sizes: {} is not made in '
                'the same phase or link, or is not costed alike at '
                'n={}'.format(
                    name, ', '.join(str(n) for n in batches)))
    return first


def project_records(runs, batches, batch_size):
    """Records at ``batch_size`` from the records of runs at ``batches``
    (three runs making the same calls).

    Raises ValueError naming the first layer whose calls or figures do not
    line up, with its figures at each batch size.
    """
    runs = [as_records(run) for run in runs]
    names = _check_calls(runs, batches)
    out = []
    for i, name in enumerate(names):
        calls = [run[i] for run in runs]
        fields = {}
        for label in _FIGURES:
            values = [getattr(c, label) for c in calls]
            value = affine(values, batches, batch_size)
            if value is None or value < 0:
                raise ValueError(
                    '{} of layer {} is not affine in the batch size: {}; '
                    'it cannot be projected to batch {}'.format(
                        label, name, ', '.join(
                            '{} at n={}'.format(v, n)
                            for v, n in zip(values, batches)),
                        batch_size))
            fields[label] = value
        shapes, n_in = _project_shapes(calls, batches, batch_size)
        if shapes is None:
            raise ValueError(
                'the shapes of layer {} do not grow along the batch: {}'
                .format(name, ', '.join(
                    '{} at n={}'.format(c.shapes, n)
                    for c, n in zip(calls, batches))))
        params = calls[0].params
        if params is not None:
            params = {}
            for key in calls[0].params:
                value, ok = _project_value(
                    [c.params.get(key) for c in calls], batches,
                    batch_size)
                # Unknown rather than the first run's (an index array of
                # one entry per sample).
                params[key] = value if ok else None
        out.append(calls[0]._replace(shapes=shapes, n_in=n_in,
                                     params=params, **fields))
    return out


def _project_shapes(calls, batches, batch_size):
    """(shapes, number of inputs) of a call at ``batch_size``, or (None,
    None).  The inputs and the outputs are projected apart: a list of the
    same length in every run shape by shape, a list whose length follows
    the batch (a sequence per sample) when each run repeats one shape;
    never a call without inputs or outputs."""
    n_in = affine([c.n_in for c in calls], batches, batch_size)
    n_out = affine([len(c.shapes) - c.n_in for c in calls], batches,
                   batch_size)
    if n_in is None or n_out is None or n_in < 1 or n_out < 1:
        return None, None
    shapes = ()
    for part, count in (((lambda c: c.shapes[:c.n_in]), n_in),
                        ((lambda c: c.shapes[c.n_in:]), n_out)):
        lists = [part(c) for c in calls]
        if len({len(x) for x in lists}) == 1:
            projected, ok = _project_value(lists, batches, batch_size)
        elif all(x and same(x) for x in lists):
            one, ok = _project_value([x[0] for x in lists], batches,
                                     batch_size)
            projected = (one,) * count
        else:
            ok = False
        if not ok:
            return None, None
        shapes += tuple(projected)
    return shapes, n_in


def _check_projection(projected, real, batches, n):
    """Raise ValueError unless the records ``projected`` to batch ``n``
    from ``batches`` are those of a real run at ``n``: a figure or a shape
    that follows the batch at small sizes and stops (a fixed slice
    ``x[:4]``, a cap) cannot be projected."""
    projected, real = as_records(projected), as_records(real)
    names = _check_calls([projected, real], (batches[-1], n))
    for name, p, r in zip(names, projected, real):
        for label in _FIGURES + ('shapes',):
            if not same([getattr(p, label), getattr(r, label)]):
                raise ValueError(
                    'layer {} does not follow the batch size beyond n={}: '
                    'its {} at n={} would be {} on the line through n={} '
                    'but a real run gives {}; project_batch needs figures '
                    'affine in the batch size'.format(
                        name, batches[-1], label, n, getattr(p, label),
                        ', '.join(str(b) for b in batches),
                        getattr(r, label)))


def sample_batches(batch_size, check_batch=CHECK_BATCH):
    """The batch sizes :func:`project_batch` may run for ``batch_size``
    (not all of them are: :data:`LATER_BATCHES` only when batch 1 does not
    line up, the check only beyond the first ones)."""
    sizes = set(BATCHES) | set(LATER_BATCHES)
    if check_batch is not None:
        sizes.add(min(check_batch, batch_size))
    return tuple(sorted(sizes))


def project_batch(run, batch_size, fma_1flop=True, flop_convention=None,
                  check_batch=CHECK_BATCH):
    """Cost report of ``run(batch_size)`` computed from runs at batch
    sizes 1, 2 and 3 (2, 3 and 4 when batch 1 does not line up with
    them), checked by a run at ``min(check_batch, batch_size)``.

    Args:
        run: a callable ``run(n)`` doing the user's forward pass (or
            training step) at batch size ``n``; it is called four or five
            times.
        batch_size (int): the batch size to report (>= 1).
        fma_1flop (bool): as for :class:`ComputationalCostHook`.
        flop_convention (str or None): as for
            :class:`ComputationalCostHook`.
        check_batch (int or None): the batch size of the run that checks
            the projection (>= 5; None: no check).  A figure that stops
            following the batch below it (``x[:k]``, ``k < check_batch``)
            is found; one that stops above it is not.

    Returns:
        Projection: the reading API of the hook, at ``batch_size``.

    Every argument is checked before the first run: a value of the
    wrong type is an ``ArgumentTypeError`` (a TypeError, and a ValueError
    too), one out of range a ValueError, each naming the argument.

    Raises:
        ValueError: the runs do not make the same calls, a figure is not
            affine in the batch size (``F.matmul(x, x.T)`` grows as n**2),
            or the check run is not on the line; the message names the
            first offending layer and its figures.
    """
    if not callable(run):
        raise TypeError('run must be a callable run(n), got {!r}'.format(
            run))
    if isinstance(run, chainer.Link):
        # callable, but with the model's inputs, not a batch size
        raise checks.ArgumentTypeError(
            'run must be a callable run(n) that runs the model at batch n, '
            'got the {} link itself, which takes the model\'s inputs: wrap '
            'it, as lambda n: model(x[:n])'.format(type(run).__name__))
    batch_size = checks.integer('batch_size', batch_size)
    if batch_size > sys.float_info.max:
        # the reports' times are floats: none could hold its figures
        raise ValueError(
            "batch_size must be an int >= 1 that a float holds (at most "
            "{:.4g}), got one of {} digits".format(
                sys.float_info.max, int(math.log10(batch_size)) + 1))
    fma_1flop = checks.flag('fma_1flop', fma_1flop)
    first_check = max(LATER_BATCHES) + 1
    if check_batch is not None:
        check_batch = checks.integer(
            'check_batch', check_batch, first_check,
            'None or an int >= {}'.format(first_check))
    runs = {}

    def record(n):
        # the first run says the warnings, the others repeat them
        runs[n] = measure(run, n, fma_1flop, flop_convention, bool(runs))

    for n in BATCHES:
        record(n)
    try:
        batches = BATCHES
        records = _project(runs, batches, batch_size)
    except ValueError as error:
        # The line may start at batch 2; if not, the first reason stands.
        record(max(LATER_BATCHES))
        try:
            batches = LATER_BATCHES
            records = _project(runs, batches, max(batch_size, 2))
        except ValueError:
            raise error from None
        if batch_size == 1:
            # Below the line: the run at 1 is the answer (its memory too;
            # the lines from the later batches are kept for fit_batch,
            # and why there are none: fit_batch's error).
            answer = runs[batch_size]
            state = _project_memory(runs, batches, batch_size, records,
                                    None, record)[1]
            state = state._replace(
                at_exit=answer[2]['at_exit'], error=None,
                line_error=state.error, batch_size=batch_size)
            return Projection(answer[0], answer[1], batch_size, fma_1flop,
                              flop_convention, state)
    checked = None
    # the links of the runs the lines go through (the same in each)
    first = batches[0]
    links = runs[first][1]
    if check_batch is not None and batch_size > batches[-1]:
        checked = min(check_batch, batch_size)
        record(checked)
        _check_links([links, runs[checked][1]], (first, checked))
        _check_projection(_project(runs, batches, checked),
                          runs[checked][0], batches, checked)
    records, state = _project_memory(runs, batches, batch_size, records,
                                     checked, record)
    return Projection(records, links, batch_size, fma_1flop,
                      flop_convention, state)


#: The batch sizes the memory's lines are drawn through when a call's
#: scratch bends below them (NumPy's copies in a weight gradient depend on
#: the batch: the scratch is the larger of two lines, which cross at a
#: small batch); the check batch among them.
TOP_BATCHES = (4, CHECK_BATCH, 2 * CHECK_BATCH - 4)


def _project_memory(runs, batches, batch_size, records, checked, record):
    """``(records, memory state)`` of a projection to ``batch_size`` (see
    memory.project), its lines through ``batches``, or, when they are not
    affine there, through :data:`LATER_BATCHES` (a reshape is a view of
    its input at batch 1 and a copy beyond: the figures of the later
    batches are the line), then, for a scratch that bends, through
    :data:`TOP_BATCHES`, running what is missing (``record``), and a
    scratch still off its lines bounded by a line above its points there
    (the call named in the state's ``bounded``); checked against the run
    at ``checked`` (None: no check run).  A batch that was
    run has its own figures."""
    names = _name_of(records)
    samples = {n: memory.sample(run[0]) for n, run in runs.items()}

    def attempt(sizes, bound=False):
        for n in sizes:
            if n not in runs:
                record(n)
                samples[n] = memory.sample(runs[n][0])
        if any(_name_of(runs[n][0]) != names for n in sizes):
            return None
        out, state = memory.project(
            [runs[n][0] for n in sizes], [runs[n][2] for n in sizes], sizes,
            batch_size, records, samples, bound)
        if not state['error'] and checked is not None \
                and checked not in sizes:
            wrong = memory.on_lines(state['lines'], samples[checked][1],
                                    checked, names, state['bounded'])
            if wrong is not None:
                state = state._replace(lines=None, off=None, error=(
                    '{}: the peak cannot be projected'.format(wrong)))
                out = [r._replace(live=None, grad=None, scratch=None)
                       for r in out]
        return out, state
    out, state = attempt(batches)
    if state['error'] and batches == BATCHES:
        again = attempt(LATER_BATCHES)
        if again is not None and not again[1]['error']:
            out, state = again
        elif again is not None:
            state = state._replace(off=again[1].off)
    if state['error'] and state.get('off') == 2:
        # only a scratch that bends is drawn from the top; one off every
        # line there (a copy whose size follows the batch unevenly) is
        # bounded from above, and one on a line is drawn by it (a bound
        # of points on a line is that line)
        again = attempt(TOP_BATCHES, bound=True)
        if again is not None and not again[1]['error']:
            out, state = again
    if not state['error'] and batch_size in samples and \
            samples[batch_size][0] == names:
        # a batch that was run: its own figures
        out = [r._replace(live=live, grad=grad, scratch=scratch)
               for r, (live, grad, scratch)
               in zip(out, samples[batch_size][1])]
        state = state._replace(at_exit=runs[batch_size][2]['at_exit'])
    return out, state


def measure(run, n, fma_1flop=True, flop_convention=None, quiet=False):
    """``(records, link info, memory state)`` of ``run(n)`` under a hook
    with ``memory=True`` (``quiet``: its ReportWarnings are not shown).
    It measures no time: a projection's records have none."""
    hook = ComputationalCostHook(fma_1flop=fma_1flop,
                                 flop_convention=flop_convention,
                                 memory=True)
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter('ignore', ReportWarning)
        with hook:
            run(n)
    return hook.records(), hook.link_info(), hook.memory_state()


def _check_links(infos, batches):
    first, *others = infos
    if all(info == first for info in others):
        return
    if any(info.keys() != first.keys() for info in others):
        raise ValueError('the links called differ between batch sizes: '
                         '{}'.format(', '.join(
                             '{} at n={}'.format(sorted(info), n)
                             for info, n in zip(infos, batches))))
    # the same links, called another number of times (a link called once
    # a sample) or holding other parameters (a lazily sized one)
    path = next(p for p in sorted(first)
                if any(info[p] != first[p] for info in others))
    field = next(i for i, value in enumerate(first[path])
                 if any(info[path][i] != value for info in others))
    words = ('is called {} times', 'holds {} parameters',
             'holds {} bytes of parameters')[field]
    raise ValueError('the links called differ between batch sizes: link '
                     '{!r} {} at n={}'.format(path, words.format(', '.join(
                         str(info[path][field]) for info in infos)),
                         ', '.join(map(str, batches))))


def _project(runs, batches, batch_size):
    """Records at ``batch_size`` from the runs at ``batches``."""
    _check_links([runs[n][1] for n in batches], batches)
    return project_records([runs[n][0] for n in batches], batches,
                           batch_size)
