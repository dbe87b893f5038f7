"""Memory figures from the records: the run's peak and what it is made of
(``memory_report``), the series of live bytes, and their projection to any
batch size (lines through runs at small batches, see :func:`project`).

A call's record carries the bytes alive after it (collected by
:mod:`~chainer_computational_cost.collect.live_memory`) and its scratch:
the peak is the highest ``live + scratch`` over the calls.
"""
import collections

from chainer_computational_cost.core.affine import affine
from chainer_computational_cost.core.records import as_record
from chainer_computational_cost.core.records import as_records
from chainer_computational_cost.core.records import MemoryState


#: Bytes of optimizer state per byte of parameters, in the parameters'
#: dtype: SGD keeps nothing, MomentumSGD a velocity, Adam two moments.
OPTIMIZERS = collections.OrderedDict(
    [('sgd', 0), ('momentumsgd', 1), ('adam', 2)])


# The reports

_NOT_FOLLOWED = ('memory was not followed in this run: use '
                 'ComputationalCostHook(memory=True) (on the command line, '
                 '--memory)')


def _names(records):
    counts = {}
    names = []
    for r in records:
        k = counts[r.type] = counts.get(r.type, 0) + 1
        names.append('{}-{}'.format(r.type, k))
    return names


def scratch(record):
    """The scratch bytes of a record: 0 when none is known (an MPI call, a
    record saved before scratch was recorded)."""
    return as_record(record).scratch or 0


def memory_report(source):
    """The memory figures of ``source`` (a hook or a projection): an
    ordered dict

    * ``peak``: the most bytes alive at any moment of the run, which is
      during a call: what was alive when it started, what it adds (its
      outputs and the arrays it keeps) and its scratch (what it allocates
      and frees inside itself), i.e. its ``live`` plus its scratch;
      ``peak_layer`` names that call (None if nothing was called),
      ``peak_phase`` its phase; the split of the peak: ``activations``
      (alive, created by forward calls), ``gradients`` (alive, created by
      backward calls) and ``scratch`` (the call's);
    * ``peak_between_calls``: the most bytes alive right after a call (the
      highest ``live``), ``peak_between_calls_layer`` that call, split the
      same way (``peak_between_calls_activations``,
      ``peak_between_calls_gradients``);
    * ``at_exit``: bytes still alive when the block exited, split the same
      way (``at_exit_activations``, ``at_exit_gradients``);
    * ``params``: bytes of the parameters of the links called (they
      existed before the block: not in the figures above);
    * ``n_calls``: calls seen.

    A hook used for several blocks follows each block's arrays from zero:
    the peaks are over every call recorded, ``at_exit`` the last block's.

    Raises ValueError if memory was not followed, or (a projection) if it
    cannot be projected.
    """
    state = MemoryState.of(source.memory_state())
    if state is None:
        raise ValueError(_NOT_FOLLOWED)
    if state.get('error'):
        raise ValueError(state['error'])
    records = as_records(source.records())
    peak = between = 0
    at = at_between = None
    for i, r in enumerate(records):
        live = r.live
        if live is None:
            continue
        during = live + (r.scratch or 0)
        if at is None or during > peak:
            peak, at = during, i
        if at_between is None or live > between:
            between, at_between = live, i
    names = _names(records) if at is not None else None

    def split(i, total):
        # (activations, gradients) of the bytes alive after call i
        grad = records[i].grad if i is not None else 0
        return total - grad, grad
    act, grad = split(at, peak - (0 if at is None else scratch(records[at])))
    between_act, between_grad = split(at_between, between)
    act_exit, grad_exit = state['at_exit']
    out = collections.OrderedDict([
        ('peak', peak),
        ('peak_layer', None if at is None else names[at]),
        ('peak_phase', None if at is None else records[at].phase),
        ('activations', act), ('gradients', grad),
        ('scratch', peak - act - grad),
        ('peak_between_calls', between),
        ('peak_between_calls_layer',
         None if at is None else names[at_between]),
        ('peak_between_calls_activations', between_act),
        ('peak_between_calls_gradients', between_grad),
        ('at_exit', act_exit + grad_exit),
        ('at_exit_activations', act_exit),
        ('at_exit_gradients', grad_exit),
        ('params', state['params']), ('n_calls', len(records))])
    if state.batch_size is not None:
        out['batch_size'] = state.batch_size
    return out


#: The columns of the rendered memory report.
MEMORY_COLUMNS = ('name', 'bytes', 'activations', 'gradients', 'scratch',
                  'layer')


def memory_rows(figures):
    """The rows ``show_memory_report`` renders: the peak (during a call),
    the peak between calls, at exit, the parameters."""
    return [
        {'name': 'peak', 'bytes': figures['peak'],
         'activations': figures['activations'],
         'gradients': figures['gradients'], 'scratch': figures['scratch'],
         'layer': figures['peak_layer']},
        {'name': 'peak between calls',
         'bytes': figures['peak_between_calls'],
         'activations': figures['peak_between_calls_activations'],
         'gradients': figures['peak_between_calls_gradients'],
         'scratch': None, 'layer': figures['peak_between_calls_layer']},
        {'name': 'at exit', 'bytes': figures['at_exit'],
         'activations': figures['at_exit_activations'],
         'gradients': figures['at_exit_gradients'], 'scratch': None,
         'layer': None},
        {'name': 'parameters', 'bytes': figures['params'],
         'activations': None, 'gradients': None, 'scratch': None,
         'layer': None},
    ]


def live_series(source):
    """``(live bytes, scratch bytes, phase)`` of each call of ``source``.
    """
    return [(r.live, r.scratch or 0, r.phase)
            for r in as_records(source.records())]


# Any batch size: each call's live bytes (and its scratch) are a sum of
# array sizes, each affine in the batch size, so runs at a few batch sizes
# give every call's line, and the peak at any batch is the highest of the
# lines there.

def _line(values, batches):
    """``(a, b)`` with ``values[k] == a + b * batches[k]`` for every k, or
    None."""
    a = affine(values, batches, 0)
    if a is None:
        return None
    return a, affine(values, batches, 1) - a


def figures(records):
    """``(live, gradients, scratch)`` bytes of each record: what a
    projection's lines are drawn through and checked against."""
    return [(r.live, r.grad, r.scratch or 0) for r in as_records(records)]


def created(records):
    """Per record, the bytes of optimizer state the calls up to it created
    (a first update's; 0 throughout without update calls, or when the
    state existed before the run)."""
    out = []
    total = 0
    for r in as_records(records):
        if r.state:
            total += r.state
        out.append(total)
    return out


def sample(records):
    """What fit_batch keeps of a run: ``(call names, figures, created)``
    (see :func:`figures` and :func:`created`)."""
    records = as_records(records)
    return _names(records), figures(records), created(records)


_FIELDS = ('live bytes', 'gradient bytes', 'scratch bytes')


def on_lines(lines, real, n, names, bounded=(), below=None):
    """None if the figures of a real run at batch ``n`` (``real``, see
    :func:`figures`, the same calls as ``names``) are those the ``lines``
    give there (a ``bounded`` call's scratch at most that), else a
    sentence naming the first call off its line.  With a list ``below``,
    any call's scratch may also be under its line (the line then bounds
    it from above, as for a ``bounded`` call): such calls are appended to
    it."""
    for name, line, got in zip(names, lines, real):
        if line is None:
            continue
        for label, (a, b), value in zip(_FIELDS, line, got):
            if label == _FIELDS[2] and below is not None \
                    and value < a + b * n and name not in bounded:
                below.append(name)
                continue
            if a + b * n != value and not (
                    label == _FIELDS[2] and name in bounded
                    and value <= a + b * n):
                return ('the {} of {} at batch {} are {} on the line '
                        'through the smaller batches but {} in a real run'
                        .format(label, name, n, a + b * n, value))
    return None


def _upper_line(values, batches):
    """``(a, b)``: a line at or above every point, with the steepest
    slope between consecutive ones, through the highest point relative to
    it: a bound of a figure that bends, beyond the batches."""
    slope = max(-(-(v2 - v1) // (n2 - n1)) for v1, v2, n1, n2 in zip(
        values, values[1:], batches, batches[1:]))
    slope = max(slope, 0)
    return max(v - slope * n for v, n in zip(values, batches)), slope


def project(runs, states, batches, batch_size, records, samples,
            bound_scratch=False):
    """The records of a projection to ``batch_size`` with their memory
    figures projected, and the memory state of the projection.

    ``runs`` are the records of runs at ``batches`` (the same calls),
    ``states`` their memory states, ``samples`` the figures of every run
    made (batch -> :func:`sample`), kept for ``fit_batch``.  A call whose
    live bytes, their gradients' part or its scratch are not affine in the
    batch size gets None, and the state an error that ``memory_report``
    raises.  The state's ``lines`` hold each call's ``((a, b) of live, of
    gradients, of scratch)``, the bytes ``a + b * n`` at batch ``n`` (None
    for all of them when one call's are not affine), ``names`` their
    calls, ``batches`` the sizes they go through, ``created`` the
    optimizer state in their live bytes (see :func:`created`).  With
    ``bound_scratch``, a scratch that is not affine gets a line above its
    points instead (``_upper_line``), its call named in the state's
    ``bounded``.
    """
    runs = [as_records(run) for run in runs]
    names = _names(runs[0])
    error = off = None
    lines = []
    bounded = []
    out = []
    for i, record in enumerate(as_records(records)):
        line = tuple(_line(values, batches)
                     for values in zip(*figures([run[i] for run in runs])))
        bound = bound_scratch and line[2] is None
        if bound:
            line = line[:2] + (_upper_line(
                [scratch(run[i]) for run in runs], batches),)
        if None in line:
            lines.append(None)
            projected = (None, None, None)
            if error is None:
                k = off = line.index(None)
                error = (
                    'the {} {} {} are not affine in the batch size ({}): '
                    'the peak cannot be projected'.format(
                        _FIELDS[k], 'of' if k == 2 else 'after', names[i],
                        ', '.join('{} at n={}'.format(
                            figures([run[i]])[0][k], n)
                            for run, n in zip(runs, batches))))
        else:
            if bound:
                bounded.append(i)
            lines.append(line)
            projected = tuple(a + b * batch_size for a, b in line)
        live, grad, scratch_bytes = projected
        out.append(record._replace(live=live, grad=grad,
                                   scratch=scratch_bytes))
    at_exit = []
    for k in (0, 1):
        line = _line([s['at_exit'][k] for s in states], batches)
        if line is None:
            error = error or (
                'the bytes alive at exit are not affine in the batch size '
                '({}): they cannot be projected'.format(', '.join(
                    '{} at n={}'.format(sum(s['at_exit']), n)
                    for s, n in zip(states, batches))))
        # None: unknown (memory_report raises the error instead)
        at_exit.append(None if line is None
                       else line[0] + line[1] * batch_size)
    params = {s['params'] for s in states}
    if len(params) != 1:
        error = error or ('the parameters differ between batch sizes: {}'
                          .format(', '.join(
                              '{} bytes at n={}'.format(s['params'], n)
                              for s, n in zip(states, batches))))
    state = MemoryState(
        at_exit=tuple(at_exit), params=states[0]['params'], error=error,
        off=off, lines=None if error else lines,
        bounded=[names[i] for i in bounded], batches=tuple(batches),
        names=names, samples=samples, created=created(runs[0]),
        batch_size=batch_size)
    return out, state
