"""The largest batch a device holds: :func:`fit_batch`, from the memory
(:mod:`~chainer_computational_cost.analysis.memory`: what is alive during each
call, its scratch included) of runs at batch sizes 1, 2 and 3 projected to
any batch (:mod:`~chainer_computational_cost.run.projection`), checked by real
runs, and its rendering.

It sits above both: nothing in the package but the command line and
``__init__`` imports it.
"""

import collections
from collections.abc import Callable
import math
import numbers
import sys

from chainer_computational_cost.analysis import memory
from chainer_computational_cost.analysis.memory import OPTIMIZERS
from chainer_computational_cost.core import checks
from chainer_computational_cost.core.devices import gpu_presets
from chainer_computational_cost.core.devices import preset_capacity
from chainer_computational_cost.core.records import MemoryState
from chainer_computational_cost.report import rendering
from chainer_computational_cost.run import projection

MiB = 1 << 20

# What a CUDA device holds beside the arrays, for margin='cuda'
# (docs/memory.md, "Will it fit"):
#: the CUDA context and the cuDNN and cuBLAS handles, taken before the
#: first array: a PyTorch user measured 723 MiB for a first one-element
#: tensor (discuss.pytorch.org, "How to reduce the memory requirement for
#: a GPU pytorch training process?"); the driver reserves it per context
#: (local memory for every resident thread, device code, the runtime heap:
#: NVIDIA forums, "How is CUDA memory managed?"), so it grows with the
#: GPU's multiprocessors.  768 MiB covers the figure measured.
CUDA_CONTEXT = 768 * MiB
#: Room for the memory pool, 10 % more than the peak.  CuPy rounds every
#: allocation up to 512 bytes (cupy/cuda/memory.pyx,
#: ``_allocation_unit_size = 512``) and keeps freed blocks for reuse, so
#: what it holds exceeds the live bytes when freed blocks do not fit new
#: requests.
POOL_SLACK = 0.10
#: What a NumPy ufunc allocates on a CPU in chunks beside its operands,
#: to cast one (a float times a bool mask) or to walk a broadcast or
#: strided one (a convolution's in-place bias add, no cast): at most two
#: operands of ``numpy.getbufsize()`` (8192) elements of 8 bytes; no
#: scratch function counts it (``left_out`` names it).
NUMPY_BUFFERS = 2 * 8192 * 8
#: The largest step :func:`fit_batch` runs by itself to check its answer
#: (``check_answer=None``): its projected memory at the answer, bytes.  A
#: step that fits in it runs in seconds on a CPU and in any CI runner.
CHECK_LIMIT = 1 << 30


def _capacity(device, capacity):
    """(device name or None, bytes) of the memory to fill."""
    if device is not None and capacity is not None:
        raise ValueError('give either device or capacity, not both')
    if capacity is not None:
        cap = checks.whole('capacity', capacity, 1, _CAPACITY_ALLOWED)
        # the margin's fraction, the answer (a batch project_batch takes)
        # and the reports' figures are floats: a float must hold it
        checks.number('capacity', cap, 1, allowed=_CAPACITY_ALLOWED + (
            ', at most {:.4g} (what a float holds)'.format(
                sys.float_info.max)))
        return None, cap
    if device is None:
        raise ValueError('give a device ({}) or a capacity in bytes'.format(
            ', '.join(gpu_presets())))
    cap = preset_capacity(device)  # checks the name first
    return device.lower(), cap


#: What ``capacity`` may be: never rounded down (0.5 to 0 bytes, 1000.7
#: to 1000).
_CAPACITY_ALLOWED = ('a number of bytes >= 1, whole (an int, or a float '
                     'that is whole: 1e6)')


def _where(device, cap):
    """The memory to fill, in words: the device, or the bare capacity."""
    if device is None:
        return 'the capacity {} bytes'.format(cap)
    return '{} ({} bytes)'.format(device, cap)


def _optimizer(optimizer):
    return checks.one_of('optimizer', optimizer, OPTIMIZERS, fold_case=True,
                         allowed='one of ' + ', '.join(OPTIMIZERS))


def _margin(margin, cap):
    """Bytes of ``margin`` (see fit_batch) on a device of ``cap`` bytes."""
    if isinstance(margin, str):
        if margin.lower() != 'cuda':
            raise ValueError('margin must be {}, got {!r}'.format(
                _MARGIN_ALLOWED, margin))
        if cap <= CUDA_CONTEXT:  # the context alone takes it all
            raise ValueError(
                'margin {!r} keeps the CUDA context free ({} bytes, '
                'fit.CUDA_CONTEXT) of a capacity of {} bytes: no batch can '
                'fit; give a margin in bytes or a fraction below the '
                'capacity, or 0'.format(margin, CUDA_CONTEXT, cap))
        # what is left beyond the context, once the pool may hold 10 %
        # more than the peak
        return cap - int((cap - CUDA_CONTEXT) / (1 + POOL_SLACK))
    if isinstance(margin, numbers.Integral):
        return checks.integer('margin', margin, 0, _MARGIN_ALLOWED)
    # a float is a fraction: 1.0 would leave nothing, 100.0 is no fraction
    fraction = checks.non_negative('margin', margin, _MARGIN_ALLOWED)
    if fraction >= 1:
        raise ValueError('margin must be {}, got {!r}'.format(
            _MARGIN_ALLOWED, margin))
    return int(math.ceil(fraction * cap))


def margin_bytes(margin, capacity):
    """The bytes ``margin`` (see :func:`fit_batch`) keeps free of a
    device of ``capacity`` bytes: a ValueError when that is all of them,
    before any run (no batch could fit)."""
    reserve = _margin(margin, capacity)
    if reserve >= capacity:
        raise ValueError(
            'margin {!r} keeps {} bytes free of a capacity of {} bytes: no '
            'batch can fit; give a margin below the capacity'.format(
                margin, reserve, capacity))
    return reserve


#: What ``run`` may be (a hook is neither: its records are of one batch).
_RUN_ALLOWED = ('a callable run(n) doing one training step at batch n, or '
                'the result of project_batch')

_MARGIN_ALLOWED = ("bytes (an int >= 0), a fraction of the capacity (a "
                   "float in [0, 1)) or 'cuda'")


#: The update rule of each optimizer of the table :data:`OPTIMIZERS`, as
#: the records of an update name it.
RULES = collections.OrderedDict([
    ('SGDRule', 'sgd'), ('MomentumSGDRule', 'momentumsgd'),
    ('AdamRule', 'adam')])


def _check_table_optimizer(records, key):
    """Refuse the table's row ``key`` when the step's update records are
    the rules of another optimizer of the table: its state, which no run
    created (it existed before), would be counted as the wrong one's."""
    rules = sorted({r.type for r in records
                    if r.phase == 'update' and r.type in RULES})
    runs = sorted({RULES[t] for t in rules})
    if runs and key not in runs:
        raise ValueError(
            "optimizer is {!r} ({} x the parameters of state), but the "
            "step runs {} (its update records are {} calls), whose state "
            "existed before the runs and is counted from the table: give "
            "optimizer={!r}".format(
                key, OPTIMIZERS[key], ' and '.join(runs), ', '.join(rules),
                runs[0]))


class _Memory(object):
    """The step's memory at any batch: measured at the batches that were
    run, on each call's line elsewhere (from the smallest batch of the
    lines up); without the optimizer state a run's first update creates
    (``state``: the most any run created), which a training loop keeps
    alive throughout, as the parameters."""

    def __init__(self, state):
        self.lines = state['lines']
        self.first = state['batches'][0]
        self.names = state['names']
        self.created = state['created']
        self.bounded = state.get('bounded', ())
        #: calls whose scratch a check run found under its line
        self.below = set()
        self.samples = dict(state['samples'])
        self.state = max(s[2][-1] if s[2] else 0
                         for s in self.samples.values())

    def at(self, n):
        """``(peak, call, live, gradients, scratch)`` of the call during
        which the most bytes are alive at batch ``n`` (the state apart), or
        None if batch ``n`` is below the lines and was not run."""
        if n in self.samples:
            names, figures, created = self.samples[n]
        elif n >= self.first:
            names, created = self.names, self.created
            figures = [tuple(a + b * n for a, b in line)
                       for line in self.lines]
        else:
            return None
        best = None
        for name, (live, grad, scratch), state in zip(names, figures,
                                                      created):
            if live is not None and (best is None or
                                     live - state + scratch > best[0]):
                best = (live - state + scratch, name, live - state, grad,
                        scratch)
        return best

    def largest(self, room):
        """The largest batch whose peak is at most ``room`` bytes (0 if
        none is), or None if nothing grows with the batch."""
        peaks = [(live[0] - state + s[0], live[1] + s[1])
                 for (live, _, s), state in zip(self.lines, self.created)]
        growing = [(room - a) // b for a, b in peaks if b > 0]
        if not growing:
            return None
        n = max(min(growing), 0)
        if any(a + b * max(n, self.first) > room for a, b in peaks):
            n = 0
        if n < self.first:  # below the lines: the runs made there
            n = 0
            # from the lines' first batch (its run's figures are on them:
            # over the room when the lines are there) down
            for k in range(self.first, 0, -1):
                found = self.at(k)
                if found is not None and found[0] <= room:
                    n = k
                    break
        return n

    def check(self, records, n):
        """Raise ValueError unless the records of a real run at ``n`` are on
        the lines; else remember its figures."""
        names, figures, created = memory.sample(records)
        if names != self.names:
            wrong = ('its calls differ: {} calls at batch {}, {} '
                     'before{}'.format(
                         len(names), n, len(self.names), next((
                             '; call {} is {} at batch {}, {} before'.format(
                                 i + 1, a, n, b)
                             for i, (a, b) in enumerate(zip(names,
                                                            self.names))
                             if a != b), '')))
        else:
            # a scratch under its line (NumPy reuses the temporaries of
            # large arrays: SwishGrad's drop from 256 KiB on) keeps the
            # line an upper bound there: answers stay on the safe side
            below = []
            wrong = memory.on_lines(self.lines, figures, n, names,
                                    self.bounded, below)
            if wrong is None:
                self.below.update(below)
        if wrong is not None:
            raise ValueError(
                'fit_batch cannot answer: the step at batch {} left the '
                'line of the smaller batches: {}; its memory at other '
                'batches cannot be told from a few runs'.format(
                    n, wrong))
        self.samples[n] = (names, figures, created)


def fit_batch(run, device=None, optimizer='adam', capacity=None, margin=None,
              check_answer=None):
    """The largest batch size whose training step fits a device's memory,
    from runs of ``run`` at batch sizes 1, 2 and 3 (``project_batch``),
    checked by real runs.

    Memory at batch ``n`` is the parameters, the optimizer's state, the
    peak of the step (the most bytes alive during any call: the arrays
    alive then, activations and gradients, plus the call's scratch) and
    ``margin``.  The optimizer's state is measured when the step contains
    the optimizer's update (records of phase ``'update'``: its state and
    temporaries are then in the peak); else it is the table
    :data:`OPTIMIZERS` (SGD none, MomentumSGD one copy of the parameters,
    Adam two): ``optimizer`` must then be the one whose update rule the
    step's update records show, if they show one of the table's
    (:data:`RULES`).  On a device preset (a GPU) the margin is by default
    ``'cuda'``: the CUDA context and the memory pool's slack, which a GPU
    takes beside the arrays; the answer says so (``margin=0`` leaves them
    out).  With ``capacity`` the default margin is 0.

    The answer is checked: the step is run once at ``min(9, answer)``
    (unless that batch was run already), and once at the answer itself
    when ``check_answer`` is True, or None and the step's projected memory
    there is at most :data:`CHECK_LIMIT` (1 GiB); a run whose figures are
    not on the lines of the smaller batches (a branch on the batch size, a
    slice ``x[:k]``) makes it refuse, naming the call that left the line.
    A projection given instead of ``run`` cannot be checked (``checked``
    is empty then).

    Args:
        run: a callable ``run(n)`` doing one training step at batch ``n``
            (clear the gradients first: ``model.cleargrads()``), or the
            result of ``project_batch`` of one.
        device (str): a GPU preset of :data:`CAPACITIES` (the names of
            ``roofline.DEVICES``; the CPU preset has no capacity: give
            ``capacity`` there).
        optimizer (str): ``'sgd'``, ``'momentumsgd'`` or ``'adam'``.
        capacity: the memory in bytes, instead of a device: a whole
            number >= 1 (an int, or a float that is whole, ``1e6``) that
            a float holds.
        margin: bytes kept free for what the tool cannot see: an int of
            bytes, a float in [0, 1) for that fraction of the capacity, or
            ``'cuda'``: :data:`CUDA_CONTEXT` (768 MiB) plus room for the
            memory pool to hold :data:`POOL_SLACK` (10 %) more than the
            rest.  Default (None): ``'cuda'`` with a ``device``, 0 with a
            ``capacity``.
        check_answer (bool or None): run the step at the answer to check
            it: None (when affordable, see above), True or False.

    Returns:
        OrderedDict: ``device`` (None with a ``capacity``), ``capacity``,
        ``optimizer``,
        ``batch_size`` (the largest that fits), and at that batch
        ``params``, ``optimizer_state``, ``activations``, ``gradients``,
        ``scratch`` (the split of the peak), ``peak``, ``peak_layer``,
        ``margin`` (bytes), ``total`` (all of them), ``free``;
        ``margin_asked``: ``margin`` as given, its default filled in
        (``'cuda'``, bytes or a fraction); ``next_total``: the
        total at one batch more; ``optimizer_state_from`` (``'table'`` or
        ``'measured'``); ``checked``: the batches run to check the answer;
        ``counted`` and ``left_out``: what the total holds and what it
        does not, in words.

    Raises:
        ValueError: bad arguments; ``optimizer`` is not the one the
            step's update runs, whose state the table counts; the step
            cannot be projected; a check
            run is off the lines; even batch 1 does not fit; or nothing
            grows with the batch.
    """
    name, cap = _capacity(device, capacity)
    where = _where(name, cap)
    key = _optimizer(optimizer)
    if margin is None:  # a GPU's answer leaves room for CUDA
        margin = 0 if name is None else 'cuda'
    if isinstance(margin, str):
        margin = margin.lower()
    reserve = margin_bytes(margin, cap)
    if isinstance(margin, float):
        margin += 0.0  # shown as given, but never as -0.0
    if check_answer is not None:
        check_answer = checks.flag('check_answer', check_answer,
                                   'None, True or False')
    checks.instance('run', run, (projection.Projection, Callable),
                    _RUN_ALLOWED)
    if isinstance(run, projection.Projection):
        projected = run  # several devices, one set of runs
        runner = None
    else:
        projected = projection.project_batch(run, 1, check_batch=None)
        runner = run
    state = MemoryState.of(projected.memory_state())
    if state.get('error'):
        raise ValueError(state['error'])
    if state.get('lines') is None:
        raise ValueError('fit_batch cannot answer: {}'.format(
            state.get('line_error') or 'the memory of this projection has '
            'no lines (made by an earlier version?): project it again'))
    step = _Memory(state)
    if not step.names:
        raise ValueError('run(n) made no function call')
    params = state['params']
    table = OPTIMIZERS[key] * params
    # The state a real first update allocates, when a run made one
    measured = step.state > 0
    updates = any(r.phase == 'update' for r in projected.records())
    if not measured:
        _check_table_optimizer(projected.records(), key)
    opt_state = step.state if measured else table
    fixed = params + opt_state + reserve
    n = step.largest(cap - fixed)
    if n is None:
        raise ValueError('the live memory does not grow with the batch '
                         'size: no largest batch')

    def refuse_batch_1():
        peak = step.at(1) or step.at(step.first)
        raise ValueError(
            'batch 1 does not fit {}: it needs {} bytes '
            '(parameters {}, optimizer state {}, peak {} during {}: '
            'activations {}, gradients {}, scratch {}{}); no batch fits'
            .format(where, fixed + peak[0], params, opt_state,
                    peak[0], peak[1], peak[2] - peak[3], peak[3], peak[4],
                    ', margin {}'.format(reserve) if reserve else ''))
    if n < 1:
        refuse_batch_1()
    checked = []
    if runner is not None:
        batches = [min(projection.CHECK_BATCH, n)]
        if check_answer is not False and n != batches[0]:
            if check_answer or step.at(n)[0] <= CHECK_LIMIT:
                batches.append(n)
        for k in batches:
            if k not in step.samples:
                step.check(projection.measure(runner, k, quiet=True)[0], k)
                checked.append(k)
    peak, layer, live, grad, scratch = step.at(n)
    total = fixed + peak
    if total > cap:  # the lines said it fits: never answer it then
        raise ValueError('fit_batch cannot answer: batch {} needs {} bytes '
                         'of {}, more than the lines told'.format(
                             n, total, where))
    return collections.OrderedDict([
        ('device', name), ('capacity', cap), ('optimizer', key),
        ('batch_size', n), ('params', params),
        ('optimizer_state', opt_state), ('activations', live - grad),
        ('gradients', grad), ('scratch', scratch), ('peak', peak),
        ('peak_layer', layer), ('margin', reserve),
        ('total', total), ('free', cap - total), ('margin_asked', margin),
        ('next_total', fixed + step.at(n + 1)[0]),
        ('optimizer_state_from', 'measured' if measured else 'table'),
        ('optimizer_state_table', table),
        ('checked', checked),
        ('counted', _counted(measured, updates, key, opt_state, table,
                             reserve, margin, step.bounded,
                             sorted(step.below))),
        ('left_out', _left_out(updates, margin))])


def _counted(measured, updates, key, opt_state, table, reserve, margin,
             bounded=(), below=()):
    """What a fit_batch total holds, in words."""
    if measured:
        state = ('the optimizer state the first update of a run allocated, '
                 '{} bytes, alive throughout the step'.format(opt_state))
        if opt_state != table:
            state += (" (the table's {} would say {}: {} x the parameters)"
                      .format(key, table, OPTIMIZERS[key]))
    else:
        state = 'the optimizer state, {} x the parameters ({}{})'.format(
            OPTIMIZERS[key], key, ': no run created it' if updates else '')
    out = ['the parameters of the links called and those the calls read',
           state,
           'the arrays alive during the call of the peak: activations kept '
           'for backward and gradients',
           "that call's scratch (memory it allocates and frees inside "
           "itself){}".format(", the update's temporaries among them"
                              if updates else '')]
    if bounded:
        out.append('the scratch of {}, not affine in the batch size, '
                   'bounded by a line above its runs'.format(
                       ', '.join(bounded)))
    if below:
        out.append('the scratch of {} on the line through the smaller '
                   'batches, above what a check run measured (NumPy '
                   'reuses temporaries of large arrays): an upper '
                   'bound'.format(', '.join(below)))
    if reserve:
        out.append('a margin of {} bytes ({!r}{})'.format(
            reserve, margin, ': the CUDA context, fit.CUDA_CONTEXT, and '
            'the memory pool, fit.POOL_SLACK of the rest'
            if margin == 'cuda' else ''))
    return out


def _left_out(updates, margin):
    """What a fit_batch total does not hold, in words."""
    out = ["the step's inputs and arrays made outside function calls (the "
           "loss's initial gradient, a recurrent link's zero initial "
           "state, the zero gradients the optimizer gives parameters that "
           "got none)",
           "on a CPU, the buffers NumPy's ufuncs take to cast an operand "
           "or walk a broadcast or strided one (at most fit.NUMPY_BUFFERS, "
           "128 KiB) and the Python objects of the graph"]
    if not updates:
        out.append("the optimizer's update temporaries (its update is not "
                   'in the run)')
    if not isinstance(margin, str):
        out.append('the CUDA context and the libraries (fit.CUDA_CONTEXT, '
                   "768 MiB, suggested: margin='cuda')")
        out.append("the memory pool's rounding and fragmentation "
                   "(fit.POOL_SLACK, 10 % of the peak, in margin='cuda')")
    return out


#: The columns of a rendered fit_batch result.
FIT_COLUMNS = ('name', 'bytes')


def fit_rows(fit):
    """Rows of a fit_batch result to render: what fills the memory at the
    largest batch."""
    return [{'name': name, 'bytes': fit[key]} for name, key in (
        ('parameters', 'params'), ('optimizer state', 'optimizer_state'),
        ('activations', 'activations'), ('gradients', 'gradients'),
        ('scratch', 'scratch'), ('margin', 'margin'), ('total', 'total'),
        ('capacity', 'capacity')) if key != 'margin' or fit.get(key)]


def answer(fit):
    """The sentence of a fit_batch result: the largest batch, the call
    during which its peak happens, and the margin kept (on a GPU preset,
    whether the CUDA context and the memory pool are in it)."""
    where = ('on ' + fit['device'] if fit['device'] is not None
             else 'in {} bytes'.format(fit['capacity']))
    asked = fit.get('margin_asked', fit['margin'])
    if asked == 'cuda':
        kept = ("; margin 'cuda': {} bytes kept for the CUDA context and "
                'the memory pool'.format(fit['margin']))
    elif fit['margin']:
        kept = '; margin {!r}: {} bytes kept'.format(asked, fit['margin'])
    elif fit['device'] is not None:
        kept = ('; margin {!r}: nothing kept for the CUDA context and the '
                'memory pool'.format(asked))
    else:
        kept = ''
    return 'largest batch {} with {}: {} (peak during {}{})'.format(
        where, fit['optimizer'], fit['batch_size'], fit['peak_layer'],
        kept)


def show_fit(fit, ost=None, mode='csv', unit='autoaligned', columns=None,
             n_digits=3):
    """Write a fit_batch result to ``ost``: a line with the largest batch
    (on stderr in mode 'json', which must stay one JSON document), then
    what fills the memory at that batch."""
    ost = checks.text_stream('ost', ost, sys.stdout)
    columns = rendering.check_columns(columns, FIT_COLUMNS, FIT_COLUMNS)
    text = rendering.render(fit_rows(fit), columns, mode, unit, n_digits,
                            name_title='Memory at batch {}'.format(
                                fit['batch_size']),
                            encoding=getattr(ost, 'encoding', None))
    line = sys.stderr if rendering.check_mode(mode) == 'json' else ost
    # (the call it names, in what the stream can encode)
    line.write(rendering.encodable(answer(fit) + '\n',
                                   getattr(line, 'encoding', None)))
    ost.write(text)
