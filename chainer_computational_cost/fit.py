"""The largest batch a device holds: :func:`fit_batch`, from the live
memory (:mod:`~chainer_computational_cost.memory`) of runs at batch sizes
1, 2 and 3 projected to any batch
(:mod:`~chainer_computational_cost.projection`), and its rendering.

It sits above both: nothing in the package but the command line and
``__init__`` imports it.
"""

import collections
import numbers
import sys

from chainer_computational_cost import memory
from chainer_computational_cost import projection
from chainer_computational_cost import rendering
from chainer_computational_cost.memory import CAPACITIES, OPTIMIZERS


def _capacity(device, capacity):
    """(name, bytes) of the memory to fill."""
    if device is not None and capacity is not None:
        raise ValueError('give either device or capacity, not both')
    if capacity is not None:
        if isinstance(capacity, bool) or not isinstance(
                capacity, numbers.Real) or not capacity > 0 or \
                capacity == float('inf'):
            raise ValueError('capacity must be a number of bytes > 0, got '
                             '{!r}'.format(capacity))
        return 'given', int(capacity)
    if device is None:
        raise ValueError('give a device ({}) or a capacity in bytes'.format(
            ', '.join(CAPACITIES)))
    key = device.lower() if isinstance(device, str) else device
    if key not in CAPACITIES:
        raise ValueError('device {!r} has no memory capacity preset; '
                         'presets: {}; or give capacity= in bytes'.format(
                             device, ', '.join(CAPACITIES)))
    return key, CAPACITIES[key]


def _optimizer(optimizer):
    key = optimizer.lower() if isinstance(optimizer, str) else None
    if key not in OPTIMIZERS:
        raise ValueError('optimizer must be one of {}, got {!r}'.format(
            ', '.join(OPTIMIZERS), optimizer))
    return key


def fit_batch(run, device=None, optimizer='adam', capacity=None):
    """The largest batch size whose training step fits a device's memory,
    from runs of ``run`` at batch sizes 1, 2 and 3 (``project_batch``).

    Memory at batch ``n`` is the parameters, the optimizer's state (see
    :data:`OPTIMIZERS`: SGD none, MomentumSGD one copy of the parameters,
    Adam two) and the peak of the bytes the step's arrays take (activations
    kept for backward plus the gradients alive then, the parameters'
    among them).  Framework and CUDA context, cuDNN workspaces and memory
    pool fragmentation are left out (docs/memory.md, "Will it fit").

    Args:
        run: a callable ``run(n)`` doing one training step at batch ``n``
            (clear the gradients first: ``model.cleargrads()``), or the
            result of ``project_batch`` of one.
        device (str): a preset of :data:`CAPACITIES`.
        optimizer (str): ``'sgd'``, ``'momentumsgd'`` or ``'adam'``.
        capacity: the memory in bytes, instead of a device.

    Returns:
        OrderedDict: ``device``, ``capacity``, ``optimizer``,
        ``batch_size`` (the largest that fits), and at that batch
        ``params``, ``optimizer_state``, ``activations``, ``gradients``
        (the split of the peak), ``peak``, ``peak_layer``, ``total``,
        ``free``; ``next_total``: the total at one batch more.

    Raises:
        ValueError: bad arguments; the step cannot be projected; even
            batch 1 does not fit; or nothing grows with the batch.
    """
    name, cap = _capacity(device, capacity)
    key = _optimizer(optimizer)
    if isinstance(run, projection.Projection):
        projected = run  # several devices, one set of runs
    else:
        projected = projection.project_batch(run, 1)
    state = projected._memory_state()
    if state['error']:
        raise ValueError(state['error'])
    params = state['params']
    opt_state = OPTIMIZERS[key] * params
    room = cap - params - opt_state
    lines = [line for line, _ in state['lines']]
    if not lines:
        raise ValueError('run(n) made no function call')
    growing = [(room - a) // b for a, b in lines if b > 0]
    if not growing:
        raise ValueError('the live memory does not grow with the batch '
                         'size: no largest batch')
    n = min(growing)

    def at(n):
        values = [a + b * n for a, b in lines]
        peak = max(values)
        i = values.index(peak)
        (a, b), (c, d) = state['lines'][i]
        return peak, i, c + d * n

    peak, i, grad = at(max(n, 1))
    if n < 1 or peak > room:
        raise ValueError(
            'batch 1 does not fit {}: it needs {} bytes, {} has {}'.format(
                name, params + opt_state + peak, name, cap))
    total = params + opt_state + peak
    return collections.OrderedDict([
        ('device', name), ('capacity', cap), ('optimizer', key),
        ('batch_size', n), ('params', params),
        ('optimizer_state', opt_state), ('activations', peak - grad),
        ('gradients', grad), ('peak', peak),
        ('peak_layer', memory._names(projected._records())[i]),
        ('total', total), ('free', cap - total),
        ('next_total', params + opt_state + at(n + 1)[0])])


#: The columns of a rendered fit_batch result.
FIT_COLUMNS = ['name', 'bytes']


def fit_rows(fit):
    """Rows of a fit_batch result to render: what fills the memory at the
    largest batch."""
    return [{'name': name, 'bytes': fit[key]} for name, key in (
        ('parameters', 'params'), ('optimizer state', 'optimizer_state'),
        ('activations', 'activations'), ('gradients', 'gradients'),
        ('total', 'total'), ('capacity', 'capacity'))]


def show_fit(fit, ost=None, mode='csv', unit='autoaligned', columns=None,
             n_digits=3):
    """Write a fit_batch result to ``ost``: a line with the largest batch
    (on stderr in mode 'json', which must stay one JSON document), then
    what fills the memory at that batch."""
    ost = sys.stdout if ost is None else ost
    columns = rendering.check_columns(columns or FIT_COLUMNS, FIT_COLUMNS)
    text = rendering.render(fit_rows(fit), columns, mode, unit, n_digits,
                            name_title='Memory at batch {}'.format(
                                fit['batch_size']))
    line = ('largest batch on {} with {}: {} (peak after {})\n'.format(
        fit['device'], fit['optimizer'], fit['batch_size'],
        fit['peak_layer']))
    (sys.stderr if mode == 'json' else ost).write(line)
    ost.write(text)
