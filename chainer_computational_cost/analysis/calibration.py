"""From cost to the time a call will take: a :class:`Calibration`.

A calibration holds what :func:`chainer_computational_cost.calibrate`
measured on one device (see :mod:`~chainer_computational_cost.run.measure`):

* a table of matrix-product times over a grid of shapes ``(M, N, K)``
  (the BLAS's speed depends on the shape far more than on the FLOPs);
* one linear fit per function *family* (:data:`FAMILIES`; each
  convolution type has its own, :func:`fit_key`) of the time a
  call spends inside its function on the call's features
  (:func:`features`): a constant, the table's time of its matrix product
  (matrix families), the bytes it reads and writes, the im2col buffer it
  fills (convolutions, pooling) and how it is laid out (convolutions),
  its FLOPs (the others), and the bytes of
  its arrays of :data:`COLD_BYTES` or more (out of cache, or fresh memory
  touched for the first time);
* a per-call overhead for each kind of call (:data:`OVERHEADS`):
  Chainer's own work around a call (type checks, building the graph,
  ``backward``'s bookkeeping), which a step made of many cheap calls
  spends most of its time in;
* its own error, cross-validated on held-out probes.

It predicts the time of each call a report holds (``t_call``, what the
hook's ``measure_time`` measures; ``t_predicted``, plus the overhead: what
the call adds to a step) and sums them per type, link, phase and in total
(:func:`time_report`).  A call whose type the calibration never ran, or
whose features lie outside the calibrated range, is predicted all the same
but *flagged* (``flag``), never silently extrapolated.

This module is pure (no measurement, no device): it imports the bottom of
the package only, and the reports read it.
"""

import bisect
import collections
import copy
import datetime
import itertools
import math
import os
import sys

import chainer

from chainer_computational_cost.analysis.aggregation import ancestors
from chainer_computational_cost.analysis.aggregation import group_key
from chainer_computational_cost.core import checks
from chainer_computational_cost.core import devices
from chainer_computational_cost.core.columns import PHASES
from chainer_computational_cost.core.columns import TIME_BY
from chainer_computational_cost.cost_calculators import time_family

#: The JSON format's version (a file of another one is refused).  Format
#: 2 gives each convolution type its own fit, with two more features.
FORMAT = 2

#: The fields of a calibration file (see :meth:`Calibration.to_dict`).
FILE_KEYS = ('format', 'info', 'error', 'overhead', 'bandwidth', 'gemm',
             'families', 'types')

#: Function types whose time is a matrix product's (forward and gradient
#: functions): convolutions, which also fill an im2col buffer, and the
#: plain products.
CONVOLUTION_TYPES = frozenset([
    'Convolution2DFunction', 'Convolution2DGradW',
    'Deconvolution2DFunction'])
MATMUL_TYPES = frozenset([
    'LinearFunction', 'LinearGradData', 'LinearGradWeight', 'MatMul',
    'BatchMatMul'])

#: Family -> what it holds.  Other types belong to the family their
#: calculator's module declares (its ``TIME_FAMILY``, see
#: :func:`~chainer_computational_cost.cost_calculators.time_family`).
FAMILIES = collections.OrderedDict([
    ('convolution', '2-D convolutions and their gradients (im2col + GEMM)'),
    ('matmul', 'linear layers, matmul, batch matmul and their gradients'),
    ('activation', 'activations and their gradients'),
    ('array', 'reshapes, transposes, concatenations, indexing'),
    ('connection', 'embeddings (EmbedID) and other connections'),
    ('loss', 'losses and their gradients'),
    ('math', 'elementwise arithmetic and reductions'),
    ('noise', 'dropout'),
    ('normalization', 'batch, layer and local response normalizations'),
    ('pooling', 'max and average pooling and their gradients'),
    ('rnn', 'LSTM and other recurrent cells'),
    ('update', 'update rules and optimizer hooks (the update phase)'),
])

#: The features of each kind of family, in the fit's order.
MATRIX_FEATURES = ('const', 'gemm', 'bytes', 'col', 'cold')
OTHER_FEATURES = ('const', 'mread', 'mwrite', 'flops', 'cold')
#: The features of a convolution type add two to a matrix family's
#: ``rows``, the contiguous runs its im2col (or col2im) copies, one per
#: row of the image's width (NumPy's strided copy pays per run as well as
#: per byte, so narrow images copy slowly), and ``window``, the kernel's
#: ``kh * kw`` (one sliced copy in Python each).
CONVOLUTION_FEATURES = MATRIX_FEATURES + ('rows', 'window')

#: The keys a fit may have in :attr:`Calibration.families`
#: (:func:`fit_key`): the families, each convolution type for theirs.
FIT_KEYS = tuple(k for k in FAMILIES if k != 'convolution') + tuple(
    sorted(CONVOLUTION_TYPES))

#: The kinds of call with their own overhead, forward calls in inference
#: (no graph kept) and in training, backward calls and updates.
OVERHEADS = ('inference', 'forward', 'backward', 'update')

#: The fields of a family's fit and of the held-out error (a misspelt
#: one is refused: it would be kept, and the field it meant missed).
FIT_FIELDS = ('coef', 'low', 'high', 'n')
ERROR_FIELDS = ('inference', 'training', 'n_probes')


def overhead_kind(layer, inference):
    """Which overhead of :data:`OVERHEADS` a call pays (``inference``: the
    run has no backward pass)."""
    phase = layer.get('phase') or 'forward'
    if phase == 'forward':
        return 'inference' if inference else 'forward'
    return phase if phase in OVERHEADS else 'backward'


#: The clocks a calibration may have measured with (``info['clock']``,
#: see :data:`chainer_computational_cost.run.measure.CLOCKS`).
CLOCKS = ('wall', 'cpu')


#: The held-out error above which a calibration warns that its predictions
#: cannot be trusted (:meth:`Calibration.untrusted`): a prediction that far
#: off was 2x off a measured step on a busy machine.
TRUSTED_ERROR = 0.25

#: Flags of a prediction.
UNCOVERED = 'uncovered type'
OTHER_DTYPE = 'other dtype'
OUT_OF_RANGE = 'outside range'

#: The dtype the calibration's probes run in; a call of another floating
#: dtype is predicted as if it were in this one, and flagged.
PROBED_DTYPE = 'float32'

#: A feature more than this factor above the largest the calibration ran
#: puts the call outside the range (a smaller call is mostly the fit's
#: constant, which the calibration measured).
RANGE_FACTOR = 4.0


def family_of(layer):
    """The family (a key of :data:`FAMILIES`) of a layer dict, or None when
    the type belongs to none."""
    if layer.get('phase') == 'update':
        return 'update'
    t = layer['type']
    if t in CONVOLUTION_TYPES:
        return 'convolution'
    if t in MATMUL_TYPES:
        return 'matmul'
    family = time_family(t)
    return family if family in FAMILIES else None


def fit_key(layer):
    """The key of the fit that predicts a layer dict in
    :attr:`Calibration.families`: its family, or for a convolution type
    its type, each having its own fit (the forward, the weight gradient
    and the input gradient run different code: im2col then GEMM, GEMM
    then col2im, with their own efficiency; one fit of the three mixed
    them in whatever proportion the probes drew)."""
    if layer['type'] in CONVOLUTION_TYPES:
        return layer['type']
    return family_of(layer)


def _prod(shape):
    out = 1
    for d in shape:
        out *= d
    return out


def _itemsize(layer):
    return {'float16': 2, 'float64': 8}.get(layer.get('dtype'), 4)


def gemm_shape(layer):
    """``(batch, M, N, K, col_elements)`` of the matrix products a call of
    a matrix family runs (``col_elements``: the im2col buffer it fills or
    reads, convolutions only), from its shapes; None when they do not
    say."""
    t = layer['type']
    ins = layer.get('input_shapes') or []
    outs = layer.get('output_shapes') or []
    try:
        if t == 'Convolution2DFunction':
            x, w, y = ins[0], ins[1], outs[0]
            m, k, n = y[0] * y[2] * y[3], w[1] * w[2] * w[3], w[0]
            return 1, m, n, k, x[0] * x[1] * w[2] * w[3] * y[2] * y[3]
        if t == 'Convolution2DGradW':
            x, gy, gw = ins[0], ins[1], outs[0]
            k = gy[0] * gy[2] * gy[3]
            return 1, gw[0], gw[1] * gw[2] * gw[3], k, \
                x[0] * x[1] * gw[2] * gw[3] * gy[2] * gy[3]
        if t == 'Deconvolution2DFunction':
            x, w = ins[0], ins[1]
            n = x[0] * x[2] * x[3]
            return 1, w[1] * w[2] * w[3], n, w[0], w[1] * w[2] * w[3] * n
        if t == 'LinearFunction':
            x, w = ins[0], ins[1]
            return 1, _prod(x) // w[1], w[0], w[1], 0
        if t == 'LinearGradData':
            w, gy = ins[0], ins[1]
            return 1, _prod(gy) // w[0], w[1], w[0], 0
        if t == 'LinearGradWeight':
            x, gy = ins[0], ins[1]
            return 1, gy[-1], x[-1], _prod(gy) // gy[-1], 0
        if t in ('MatMul', 'BatchMatMul'):
            a, y = ins[0], outs[0]
            m, n = (y[-2], y[-1]) if len(y) >= 2 else (1, y[-1])
            batch = _prod(y[:-2])
            return batch, m, n, _prod(a) // max(batch * m, 1), 0
    except (IndexError, TypeError, ZeroDivisionError):
        return None
    return None


def _conv_layout(layer):
    """``(rows, window)`` of a convolution type's im2col or col2im
    (:data:`CONVOLUTION_FEATURES`): the buffer's elements over the width
    of the image side it is laid out on, and ``kh * kw``."""
    t = layer['type']
    ins = layer['input_shapes']
    if t == 'Convolution2DFunction':
        w, width = ins[1], layer['output_shapes'][0][3]
    elif t == 'Convolution2DGradW':
        w, width = layer['output_shapes'][0], ins[1][3]
    else:  # Deconvolution2DFunction: col2im over the input's pixels
        w, width = ins[1], ins[0][3]
    col = gemm_shape(layer)[4]
    return float(col // max(width, 1)), float(w[2] * w[3])


def _pool_col(layer):
    # Chainer's CPU pooling goes through an im2col buffer too: the smaller
    # of the input and the output times the window.
    k = (layer.get('params') or {}).get('k')
    if k is None:
        return 0
    window = _prod(k) if isinstance(k, (tuple, list)) else k * k
    ins = layer.get('input_shapes') or [()]
    outs = layer.get('output_shapes') or [()]
    return min(_prod(ins[0] or ()), _prod(outs[0] or ())) * window


def _cold(layer):
    """Bytes of the call's arrays of :data:`COLD_BYTES` or more: memory out
    of cache, or freshly allocated and touched for the first time."""
    size = _itemsize(layer)
    total = 0
    for shape in (layer.get('input_shapes') or []) + \
            (layer.get('output_shapes') or []):
        n = _prod(shape or ()) * size
        if n >= COLD_BYTES:
            total += n
    return total


#: An array of this size or more is taken as out of cache (a core's L2
#: here is 1 MiB; glibc maps allocations of 128 KiB to 32 MiB afresh).
COLD_BYTES = 2 ** 20


def features(layer, gemm_time):
    """The fit's features of a layer dict (``flops, mread, mwrite`` in
    FLOPs and bytes, ``type``, shapes, ``dtype``, ``phase``), in the order
    of its fit's features (:data:`MATRIX_FEATURES`,
    ``CONVOLUTION_FEATURES`` or ``OTHER_FEATURES``); ``gemm_time(M, N,
    K)`` is the table's time of one product.  None for a matrix type whose
    shapes do not say."""
    family = family_of(layer)
    cold = float(_cold(layer))
    if family in ('convolution', 'matmul'):
        shape = gemm_shape(layer)
        if shape is None:
            return None
        batch, m, n, k, col = shape
        out = [1.0, batch * gemm_time(m, n, k),
               float(layer['mread'] + layer['mwrite']),
               float(col * _itemsize(layer)), cold]
        if layer['type'] in CONVOLUTION_TYPES:
            out.extend(_conv_layout(layer))
        return out
    if family == 'pooling':
        cold += _pool_col(layer) * _itemsize(layer)
    return [1.0, float(layer['mread']), float(layer['mwrite']),
            float(layer['flops']), cold]


def _frozen(value):
    """A copy of ``value``, plain data, with every dict and list in it,
    at any depth, one that refuses changes
    (:class:`~chainer_computational_cost.core.checks.ReadOnlyDict`,
    ``ReadOnlyList``): a table that stays what the checks passed."""
    if isinstance(value, dict):
        return checks.ReadOnlyDict(
            (k, _frozen(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return checks.ReadOnlyList(_frozen(v) for v in value)
    return copy.deepcopy(value)


def _thawed(value):
    """A deep copy of ``value`` made of plain dicts and lists, which its
    receiver may edit without touching the table it came from."""
    if isinstance(value, dict):
        return {k: _thawed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thawed(v) for v in value]
    return copy.deepcopy(value)


class _Checked(object):
    """An object whose attributes are set once, by its constructor, after
    its checks: setting or deleting one afterwards is refused, as its
    tables (:func:`_frozen`) refuse changes, so that what the checks
    passed is what it predicts from."""

    #: How to make a new object instead, for the refusal's message.
    _remake = ''

    def _keep(self, **fields):
        """Set the checked ``fields``, once, from the constructor."""
        self.__dict__.update(fields)

    def _refuse(self, name):
        raise AttributeError(
            '{0}.{1} cannot be changed: a {0} is checked when it is made; '
            'make a new one ({2})'.format(type(self).__name__, name,
                                          self._remake))

    def __setattr__(self, name, value):
        self._refuse(name)

    def __delattr__(self, name):
        self._refuse(name)


class GemmTable(_Checked):
    """Times of ``(M, K) x (K, N)`` products measured over a grid of
    dimensions, interpolated linearly in the logarithms of the dimensions
    and of the speed (FLOP/s), which varies slowly with the shape.  A
    dimension beyond the grid takes the speed at the grid's edge (and the
    call's other features then decide whether it is out of range).

    ``dims`` and ``speed`` (lists of lists) are checked when the table is
    made, and cannot be changed after."""

    _remake = 'GemmTable(dims, speed)'

    def __init__(self, dims, speed):
        dims = _check_dims(dims)
        # speed[i][j][k]: M*N*K / seconds at dims[i], dims[j], dims[k].
        self._keep(dims=_frozen(dims),
                   speed=_frozen(_check_speed(speed, len(dims))),
                   _logs=tuple(math.log(d) for d in dims))

    def _position(self, d):
        logs = self._logs
        x = math.log(max(d, 1))
        if x <= logs[0]:
            return 0, 0.0
        if x >= logs[-1]:
            return len(logs) - 2, 1.0
        i = bisect.bisect_left(logs, x) - 1  # logs[i] < x <= logs[i + 1]
        return i, (x - logs[i]) / (logs[i + 1] - logs[i])

    def time(self, m, n, k):
        """Seconds of one ``(m, k) x (k, n)`` product (0 when empty)."""
        if m * n * k == 0:
            return 0.0
        pos = [self._position(d) for d in (m, n, k)]
        log_speed = 0.0
        for corner in itertools.product((0, 1), repeat=3):
            w = 1.0
            idx = []
            for (i, f), c in zip(pos, corner):
                w *= f if c else 1.0 - f
                idx.append(i + c)
            if w:
                log_speed += w * math.log(
                    self.speed[idx[0]][idx[1]][idx[2]])
        return m * n * k / math.exp(log_speed)

    def peak(self):
        """The highest speed of the table (multiply-adds per second)."""
        return max(s for a in self.speed for b in a for s in b)


# Checks of a calibration's fields, every one named by its path in the
# JSON file ('families.math.coef[2]'), wherever the calibration is made.

def _field(path):
    return "a malformed calibration: field '{}'".format(path)


def _fields(path, value, keys=(), allowed='a dict'):
    """``value`` if it is a dict holding ``keys``."""
    checks.instance(_field(path), value, dict, allowed)
    for key in keys:
        if key not in value:
            raise ValueError('{} is missing'.format(
                _field('{}.{}'.format(path, key) if path else key)))
    return value


def _only(path, value, keys):
    """ValueError naming the first key of the dict ``value`` not among
    ``keys`` (a misspelt field would otherwise be ignored)."""
    for key in value:
        if key not in keys:
            raise ValueError('{} is unknown (the fields there: {})'.format(
                _field('{}.{}'.format(path, key) if path else str(key)),
                ', '.join(keys)))


def _numbers(path, values, count, check):
    """``count`` numbers, each passing ``check``, as a list of floats."""
    allowed = 'a list of {} numbers'.format(count)
    checks.instance(_field(path), values, (list, tuple), allowed)
    if len(values) != count:
        raise ValueError('{} must be {}, got {!r}'.format(
            _field(path), allowed, values))
    return [check(_field('{}[{}]'.format(path, i)), v)
            for i, v in enumerate(values)]


def _check_dims(dims):
    allowed = 'a list of ints >= 1 in increasing order, one or more'
    checks.instance(_field('gemm.dims'), dims, (list, tuple), allowed)
    out = [checks.positive_int(_field('gemm.dims[{}]'.format(i)), d)
           for i, d in enumerate(dims)]
    if not out or any(a >= b for a, b in zip(out, out[1:])):
        raise ValueError('{} must be {}, got {!r}'.format(
            _field('gemm.dims'), allowed, dims))
    return out


#: The fastest multiply-adds per second a table holds (see _check_speed).
_MAX_SPEED = sys.float_info.max / 2


def _check_speed(speed, n, path='gemm.speed', depth=3):
    """``speed`` as nested lists, ``n`` a level, of finite numbers from 1
    (multiply-adds a second: the table takes their logarithm, a call's
    time divides by it, and no device is slower than one a second) up to
    half a float's range (the peak counts 2 FLOPs a multiply-add)."""
    if not depth:
        allowed = 'a finite number from 1 to {:.4g} (multiply-adds per ' \
            'second, twice that as FLOP/s)'.format(_MAX_SPEED)
        return checks.number(_field(path), speed, 1, allowed=allowed,
                             high=_MAX_SPEED)
    allowed = 'a list of {} {}'.format(
        n, 'lists' if depth > 1 else 'numbers')
    checks.instance(_field(path), speed, (list, tuple), allowed)
    if len(speed) != n:
        raise ValueError('{} must be {} (one for each of gemm.dims), got '
                         '{!r}'.format(_field(path), allowed, speed))
    return [_check_speed(s, n, '{}[{}]'.format(path, i), depth - 1)
            for i, s in enumerate(speed)]


def _n_features(key):
    """How many features the fit of key ``key`` has."""
    if key in CONVOLUTION_TYPES:
        return len(CONVOLUTION_FEATURES)
    return len(MATRIX_FEATURES if key == 'matmul' else OTHER_FEATURES)


def _check_families(families):
    _fields('families', families)
    out = {}
    for key, fit in families.items():
        checks.one_of("a malformed calibration: a key of field 'families'",
                      key, FIT_KEYS)
        path = 'families.' + key
        _only(path, _fields(path, fit, FIT_FIELDS,
                            'a dict with coef, low, high and n'), FIT_FIELDS)
        n = _n_features(key)
        out[key] = dict(fit, **{
            k: _numbers('{}.{}'.format(path, k), fit[k], n,
                        checks.non_negative)
            for k in ('coef', 'low', 'high')})
        out[key]['n'] = checks.integer(_field(path + '.n'), fit['n'], 0)
        for j, (lo, hi) in enumerate(zip(out[key]['low'],
                                         out[key]['high'])):
            if hi < lo:
                raise ValueError(
                    '{} must be >= {}[{}] (a fit\'s range), got {!r} < '
                    '{!r}'.format(_field('{}.high[{}]'.format(path, j)),
                                  path + '.low', j, hi, lo))
    return _frozen(out)


def _check_types(types):
    _fields('types', types)
    for name, key in types.items():
        checks.instance("a malformed calibration: a key of field 'types'",
                        name, str, 'a function type name (a str)')
        checks.one_of(_field('types.' + name), key, FIT_KEYS)
    return _frozen(types)


def _check_info(info):
    _fields('info', info)
    out = dict(info)
    # free-form otherwise (versions, threads): what the reports read
    for key in ('device', 'date', 'xp', 'blas'):
        if key in out:
            checks.instance(_field('info.' + key), out[key],
                            (str, type(None)), 'a str or None')
    if 'seconds' in out:
        out['seconds'] = checks.positive(_field('info.seconds'),
                                         out['seconds'])
    if 'clock' in out:
        checks.one_of(_field('info.clock'), out['clock'], CLOCKS)
    if 'uncovered' in out:
        # a str would be listed character by character
        allowed = 'a list of function type names (str)'
        checks.instance(_field('info.uncovered'), out['uncovered'],
                        (list, tuple), allowed)
        for i, name in enumerate(out['uncovered']):
            checks.instance(_field('info.uncovered[{}]'.format(i)), name,
                            str, 'a function type name (a str)')
    # what save() writes and load() reads back: a key that is no str
    # would come back as one ({3: 'x'} as {'3': 'x'})
    e = checks.json_error(out)
    if isinstance(e, RecursionError):
        raise ValueError(_TOO_DEEP)
    if e is None:
        try:
            e = _key_not_str(out)
        except RecursionError:  # (its frames beside the encoder's)
            raise ValueError(_TOO_DEEP) from None
    if e is not None:
        raise ValueError('{} must hold JSON data only (str, finite '
                         'numbers, bools, None, lists, dicts with str '
                         'keys): {}'.format(_field('info'), e))
    return _frozen(out)


def _key_not_str(value):
    """Why JSON data ``value`` (of depth checked) would not read back as
    it is: 'key 3 is not a str' for its first dict key that is no str;
    None when none."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return 'key {!r} is not a str'.format(key)
            found = _key_not_str(item)
            if found is not None:
                return found
    elif isinstance(value, (list, tuple)):
        for item in value:
            found = _key_not_str(item)
            if found is not None:
                return found
    return None


#: A calibration whose lists or dicts nest beyond Python's depth.
_TOO_DEEP = 'a malformed calibration: nested deeper than a calibration is'


def _check_file(data):
    """The checks of the fields a file of format :data:`FORMAT` always
    has, beyond those of every calibration (:class:`Calibration`): a
    file calibrate() wrote has its held-out error and a measured
    bandwidth, and at least one fit (a missing ``info`` loads as an
    empty one, ``info['uncovered']`` is absent from earlier files, and
    the error's modes may be absent or None: too few probes)."""
    _fields('', data, ('error', 'bandwidth'))
    _fields('error', data['error'], (), 'a dict (the held-out errors)')
    if data['bandwidth'] is None:
        raise ValueError("{} must be a finite number > 0 (the measured "
                         "copy bandwidth, bytes/s), got None".format(
                             _field('bandwidth')))
    families = _fields('families', data['families'])
    if not families:
        raise ValueError('{} must hold at least one fit, got {{}}'.format(
            _field('families')))


def _check_error(error):
    _only('error', _fields('error', error), ERROR_FIELDS)
    out = dict(error)
    for key in ('inference', 'training'):
        if out.get(key) is not None:
            name = _field('error.' + key)
            value = checks.non_negative(name, out[key])
            if not math.isfinite(value * 100):  # said in percent
                raise ValueError(
                    '{} must be a finite number >= 0 whose percentage a '
                    'float holds (a share: 0.25 is 25 %), got {!r}'.format(
                        name, out[key]))
            out[key] = value
    if 'n_probes' in out:
        out['n_probes'] = checks.integer(_field('error.n_probes'),
                                         out['n_probes'], 0)
    return _frozen(out)


def nnls(rows, targets, weights):
    """Non-negative least squares, exactly, for a handful of features:
    every subset of the features is solved by least squares and the best
    all-non-negative solution kept, from all zeros up: a subset replaces
    it only when it lowers the residual by more than a part in 1e12 (a
    feature that lowers it less gets 0).  ``rows``: feature lists;
    residuals are weighted by ``weights``."""
    import numpy
    a = numpy.asarray(rows, dtype=float) * numpy.asarray(weights)[:, None]
    b = numpy.asarray(targets, dtype=float) * numpy.asarray(weights)
    n = a.shape[1]
    # Scale the columns: bytes and FLOPs are 1e9 times a constant.
    scale = numpy.abs(a).max(axis=0)
    scale[scale == 0] = 1.0
    a = a / scale
    best, best_res = numpy.zeros(n), float(b @ b)
    for size in range(1, n + 1):
        for subset in itertools.combinations(range(n), size):
            cols = list(subset)
            sol = numpy.linalg.lstsq(a[:, cols], b, rcond=None)[0]
            if (sol < 0).any():
                continue
            full = numpy.zeros(n)
            full[cols] = sol
            r = a @ full - b
            res = float(r @ r)
            if res < best_res * (1 - 1e-12):
                best, best_res = full, res
    return [float(c) for c in best / scale]


#: Below this many seconds a call's miss counts as absolute rather than
#: relative: a step's time is in its large calls.
FLOOR = 1e-4
#: A miss of ``t`` seconds weighs ``(t + FLOOR) ** -WEIGHT_POWER``.
WEIGHT_POWER = 0.25


def fit_family(samples):
    """``{'coef', 'low', 'high', 'n'}`` of one family from ``samples``,
    pairs ``(features, seconds)``: a least-squares fit whose miss of a
    call of ``t`` seconds weighs ``(t + FLOOR) ** -WEIGHT_POWER`` (a long
    call's miss counts, but less than in proportion to its time, so that
    many short calls are fitted too)."""
    rows = [f for f, _ in samples]
    times = [max(t, 1e-9) for _, t in samples]
    weights = [(t + FLOOR) ** -WEIGHT_POWER for t in times]
    coef = nnls(rows, times, weights)
    n = len(rows[0])
    low = [min((f[j] for f in rows if f[j] > 0), default=0.0)
           for j in range(n)]
    high = [max(f[j] for f in rows) for j in range(n)]
    return {'coef': coef, 'low': low, 'high': high, 'n': len(rows)}


def _dot(coef, f):
    return sum(c * x for c, x in zip(coef, f))


class Calibration(_Checked):
    """What :func:`chainer_computational_cost.calibrate` measured on one
    device, and the time it predicts for each call of a report.

    Attributes:
        gemm (GemmTable): matrix-product times over a grid of shapes.
        families (dict): fit key (:func:`fit_key`: a family, or a
            convolution type) -> ``{'coef', 'low', 'high', 'n'}``: the
            fit's coefficients (seconds per feature, see :func:`features`)
            and the range of each feature it was fitted on, and the number
            of calls.
        types (dict): function type -> fit key, every type the
            calibration ran (the others are flagged ``'uncovered
            type'``).
        overhead (dict): seconds of Chainer's own work per call, outside
            the calls' timed part (type checks, the graph), per kind of
            call (:data:`OVERHEADS`).
        error (dict): the median absolute relative error of predicted step
            times on held-out probes, ``{'inference': ..., 'training':
            ..., 'n_probes': ...}`` (fractions; None when too few probes).
        info (dict): versions of Chainer, NumPy or CuPy and the BLAS, the
            device, the date, the budget, the array module (``xp``), and
            ``uncovered``: the types of
            :data:`~chainer_computational_cost.run.measure.COVER_TYPES`
            the calibration has no fit for (too short a budget; absent
            from a file of an earlier version).
        bandwidth (float): a large copy's bytes per second, measured.

    Every field is checked when the calibration is made, and kept as
    checked: the attributes cannot be set again, and the tables (copies
    of the figures given) are dicts and lists that refuse changes.  To
    make a variant, edit what :meth:`to_dict` returns (a fresh copy,
    plain dicts and lists) and build it with :meth:`from_dict`.
    """

    _remake = 'Calibration.from_dict of an edited to_dict()'

    def __init__(self, gemm, families, types, overhead, error=None,
                 info=None, bandwidth=None):
        # Checked here, once, for every way a calibration is made (a file
        # edited by hand among them): nothing it predicts is then
        # negative, NaN or infinite, and no field is found missing later.
        checks.instance(_field('gemm'), gemm, GemmTable, 'a GemmTable')
        families = _check_families(families)
        types = _check_types(types)
        _only('overhead', _fields('overhead', overhead, OVERHEADS),
              OVERHEADS)
        overhead = checks.ReadOnlyDict((k, checks.non_negative(
            _field('overhead.' + k), overhead[k])) for k in OVERHEADS)
        error = _check_error({} if error is None else error)
        info = _check_info({} if info is None else info)
        bandwidth = None if bandwidth is None else checks.positive(
            _field('bandwidth'), bandwidth)
        self._keep(gemm=gemm, families=families, types=types,
                   overhead=overhead, error=error, info=info,
                   bandwidth=bandwidth)

    def untrusted(self):
        """Why this calibration's predictions cannot be trusted, in one
        line naming the likely cause and the remedies, or None: its
        held-out error (either mode) is above :data:`TRUSTED_ERROR`, its
        budget was too short to probe every type common networks spend
        their time in (``info['uncovered']``), or it was made with another
        version of Chainer (``info['chainer']``)."""
        reasons = [r for r in (self._error_reason(), self._cover_reason(),
                               self._version_reason()) if r is not None]
        return '; '.join(reasons) if reasons else None

    def _version_reason(self):
        made = self.info.get('chainer')
        if made is None or str(made) == chainer.__version__:
            return None
        return ('made with Chainer {}, used with Chainer {}: the code it '
                'timed differs, and types named otherwise are flagged {!r} '
                '(Chainer 6 has MaxPooling2D where 7 has MaxPoolingND; '
                'remedy: calibrate with the Chainer you run)'.format(
                    made, chainer.__version__, UNCOVERED))

    def _cover_reason(self):
        uncovered = self.info.get('uncovered')
        if not uncovered:
            return None
        return ('its budget was too short to probe {} of the types common '
                "networks spend their time in ({}): their calls are flagged "
                "'{}' (remedies: a longer budget, a quieter machine)".format(
                    len(uncovered), ', '.join(uncovered), UNCOVERED))

    def _error_reason(self):
        worst = max((self.error.get(k) or 0.0)
                    for k in ('inference', 'training'))
        if worst <= TRUSTED_ERROR:
            return None
        if self.info.get('clock', 'wall') == 'wall':
            cause = ('likely cause: other processes sharing the machine, '
                     'which the wall clock counts; remedies: --clock cpu '
                     "(calibrate(clock='cpu')), a quieter machine, a "
                     'longer budget')
        else:
            cause = ('likely cause: too few probes of the call types your '
                     'model runs, or a busy machine; remedies: a longer '
                     'budget, a quieter machine')
        # (in tenths where whole percents would read as the threshold)
        shown = '{:.0%}'.format(worst)
        if shown == '{:.0%}'.format(TRUSTED_ERROR):
            shown = '{:.1%}'.format(worst)
        return ('held-out error {} is above {:.0%}: predicted times may '
                'be off by that much or more ({})'.format(
                    shown, TRUSTED_ERROR, cause))

    def __repr__(self):
        return '<Calibration of {} ({}), {} families, {} types>'.format(
            self.info.get('device', '?'), self.info.get('date', '?'),
            len(self.families), len(self.types))

    # Prediction

    def predict(self, layer):
        """``(t_call, flag)`` for a layer dict: the seconds the call spends
        inside its function, and None or why the prediction is not
        backed by the calibration (:data:`UNCOVERED`, ``OTHER_DTYPE``,
        ``OUT_OF_RANGE``).  A call whose family has no fit, in a
        calibration without elementwise math's to stand in, is 0 s,
        flagged :data:`UNCOVERED`."""
        return self._predict(layer)[:2]

    def _predict(self, layer):
        """:meth:`predict`'s ``(t_call, flag)`` and the key of the fit
        whose coefficients gave ``t_call`` (None when none did)."""
        flag = None
        if layer['type'] not in self.types:
            flag = UNCOVERED
        key = fit_key(layer)
        fit = self.families.get(key)
        f = features(layer, self.gemm.time) if fit is not None else None
        if f is None:
            # No fit for the family: the closest thing, elementwise math.
            key, fit = 'math', self.families.get('math')
            if fit is None:
                return 0.0, UNCOVERED, None
            f = features(dict(layer, type='Add', phase='forward'),
                         self.gemm.time)
            flag = UNCOVERED
        t = max(_dot(fit['coef'], f), 0.0)
        dtype = layer.get('dtype')
        if flag is None and dtype != PROBED_DTYPE and \
                str(dtype).startswith('float'):
            flag = OTHER_DTYPE
        if flag is None:
            for x, hi in zip(f[1:], fit['high'][1:]):
                if x > hi * RANGE_FACTOR:
                    flag = OUT_OF_RANGE
                    break
        return t, flag, key

    def device(self, fma_1flop=True):
        """The roofline's
        :class:`~chainer_computational_cost.core.devices.Device` of this
        calibration: the table's fastest matrix product as
        every peak (twice that with ``fma_1flop=False``, when a multiply-add
        counts as two FLOPs) and the measured copy bandwidth."""
        fma_1flop = checks.flag('fma_1flop', fma_1flop)
        peak = self.gemm.peak() * (1 if fma_1flop else 2)
        peaks = {(u, p): ('calibrated', peak) for u in devices.UNITS
                 for p in devices.PRECISIONS.values()}
        return devices.Device('calibrated', self.info.get('device'),
                              self.bandwidth or 1e10, peaks)

    # JSON

    def to_dict(self):
        """The calibration as plain data (what :meth:`save` writes): a
        fresh deep copy of dicts and lists, which the caller may edit
        (then :meth:`from_dict` checks the edited copy) without changing
        this calibration."""
        return collections.OrderedDict((k, _thawed(v)) for k, v in [
            ('format', FORMAT), ('info', self.info), ('error', self.error),
            ('overhead', self.overhead), ('bandwidth', self.bandwidth),
            ('gemm', {'dims': self.gemm.dims, 'speed': self.gemm.speed}),
            ('families', self.families), ('types', self.types)])

    @classmethod
    def from_dict(cls, data):
        """A calibration from :meth:`to_dict`'s data (ValueError when it
        is not one: a one-line message naming the first field that is
        missing or wrong, what it is and what it must be)."""
        try:
            shown = str(data)[:80]
        except RecursionError:
            raise ValueError(_TOO_DEEP) from None
        not_one = ('not a calibration of format {} (see '
                   'chainer_computational_cost.calibrate): {!r}'.format(
                       FORMAT, shown))
        if not isinstance(data, dict) or 'format' not in data:
            raise ValueError(not_one)
        fmt = data['format']
        if type(fmt) is not int:  # a bool too
            raise ValueError('{} must be {} (the int this version '
                             'writes), got {!r}'.format(
                                 _field('format'), FORMAT, fmt))
        if fmt != FORMAT:
            if 'gemm' in data:
                raise ValueError(
                    'a calibration of format {}, and this version reads '
                    'format {} only: calibrate again'.format(fmt, FORMAT))
            raise ValueError(not_one)
        try:
            return cls._checked(data)
        except RecursionError:  # lists or dicts nested beyond the checks
            raise ValueError(_TOO_DEEP) from None

    @classmethod
    def _checked(cls, data):
        _fields('', data, ('gemm', 'families', 'types', 'overhead'))
        _only('', data, FILE_KEYS)
        _only('overhead', _fields('overhead', data['overhead']), OVERHEADS)
        _check_file(data)
        _only('gemm', _fields('gemm', data['gemm'], ('dims', 'speed'),
                              'a dict with dims and speed'), ('dims', 'speed'))
        gemm = GemmTable(data['gemm']['dims'], data['gemm']['speed'])
        return cls(gemm, data['families'], data['types'], data['overhead'],
                   data.get('error'), data.get('info'),
                   data.get('bandwidth'))

    def save(self, path):
        """Write the calibration to the JSON file ``path`` (a str or
        os.PathLike).  A path that cannot be opened for writing (a
        directory, a missing directory) is a ValueError naming it; an
        error while writing (a full disk) stays an OSError."""
        checks.path('path', path)
        data = self.to_dict()
        _check_file(data)  # never a file that load() refuses
        checks.write_json(path, data, 'a calibration file')

    @classmethod
    def load(cls, path):
        """The calibration saved in the JSON file ``path`` (a str or
        os.PathLike).  A one-line ValueError names the file when it
        cannot be read or is no JSON, and prefixes the file to
        :meth:`from_dict`'s message naming a field (a TypeError for a
        value of the wrong type, as there)."""
        checks.path('path', path)
        name = os.fspath(path)
        data = checks.load_json(
            path, '{!r} is not a calibration file (JSON written by '
            'calibrate): '.format(name), 'utf-8')
        try:
            return cls.from_dict(data)
        except ValueError as e:  # the checks' own message, the file named
            error = checks.ArgumentTypeError \
                if isinstance(e, TypeError) else ValueError
            raise error('{!r}: {}'.format(name, e)) from None


def load_calibration(calibration):
    """A :class:`Calibration`, given one or the path of its JSON file (a
    str or os.PathLike)."""
    if isinstance(calibration, Calibration):
        return calibration
    return Calibration.load(checks.path(
        'calibration', calibration, 'a Calibration or the path of its '
        'JSON file'))


def info_now(**extra):
    """The date (UTC, ISO 8601) and ``extra``, for :attr:`Calibration.info`
    (kept here so that every calibration names its date one way)."""
    out = collections.OrderedDict(
        date=datetime.datetime.now(datetime.timezone.utc).strftime(
            '%Y-%m-%dT%H:%M:%SZ'))
    out.update(extra)
    return out


def time_report(layers, calibration, roofline_rows=None, by='layer'):
    """Ordered dict name -> predicted time, one row per call (``by='layer'``)
    or summed per ``'type'``, ``'link'`` (every level of the tree) or
    ``'phase'``; last 'total'.

    ``layers``: layer dicts; ``calibration``: a :class:`Calibration` or
    the path of its file; ``roofline_rows``: the roofline report of the
    same layers (name -> row with ``t_roofline``) or None.  A call's row
    has ``name, type, phase, link, family``, ``t_call`` (seconds inside the
    call), ``t_predicted = t_call + calibration.overhead``, ``t_roofline``
    when given, ``time`` when the run measured it, and ``flag`` (None, or
    why the prediction is not backed, see :meth:`Calibration.predict`).
    Grouped rows sum ``t_call``, ``t_predicted``, ``t_roofline`` and
    ``time`` (when every call of the group has one), count ``n_layers`` and
    ``n_flagged``.
    """
    checks.one_of('by', by, TIME_BY)
    calibration = load_calibration(calibration)
    overhead = calibration.overhead
    inference = not any(x.get('phase') == 'backward' for x in layers)
    rows = []
    for layer in layers:
        try:
            t_call, flag = calibration.predict(layer)
        except OverflowError:  # an int a float cannot hold
            raise ValueError(
                "the figures of call {} (its FLOPs, bytes or shapes) are "
                "beyond a float's range: its time cannot be predicted; "
                'give a smaller batch size'.format(layer['name'])) from None
        kind = overhead_kind(layer, inference)
        row = collections.OrderedDict([
            ('name', layer['name']), ('type', layer['type']),
            ('phase', layer.get('phase')), ('link', layer.get('link')),
            ('family', family_of(layer)), ('n_layers', 1),
            ('n_flagged', 1 if flag else 0), ('t_call', t_call),
            ('t_predicted', t_call + overhead[kind])])
        if roofline_rows is not None:
            row['t_roofline'] = roofline_rows[layer['name']]['t_roofline']
        if layer.get('time') is not None:
            row['time'] = layer['time']
        row['flag'] = flag
        rows.append(row)
    report = collections.OrderedDict()
    # A type named like the total row keeps a row of its own, keyed as
    # the summary report keys it (named by its type)
    typed = {}

    def type_key(r):
        key = typed.get(r['type'])
        if key is None:
            key = typed[r['type']] = group_key(r['type'], report)
        return [key]
    keys = {'layer': lambda r: [r['name']], 'type': type_key,
            'phase': lambda r: [r['phase'] or 'forward'],
            'link': lambda r: ancestors(r['link'] or '/')}[by]
    if by == 'phase':
        for p in PHASES:
            if any((r['phase'] or 'forward') == p for r in rows):
                report[p] = _group(p)
    for r in rows:
        for key in keys(r):
            if by == 'layer':
                report[key] = r
            else:
                group = report.get(key)
                if group is None:
                    group = report[key] = _group(
                        r['type'] if by == 'type' else key)
                _add(group, r)
    if by == 'link':
        report = collections.OrderedDict(
            (k, report[k]) for k in sorted(report))
    if by != 'layer':
        for group in report.values():
            _finish(group)
    total = _group('total')
    for r in rows:
        _add(total, r)
    report['total'] = _finish(total)
    if not math.isfinite(total['t_predicted']):  # t_call is part of it
        raise ValueError(
            'the calibration predicts times beyond a float\'s range (total '
            't_predicted {}): its field(s) {} are too large; calibrate '
            'again'.format(total['t_predicted'], ', '.join(
                _overflowing(layers, calibration, inference))))
    return report


def _overflowing(layers, calibration, inference):
    """The fields of ``calibration`` that bring the total predicted time
    of ``layers`` past a float's range: each field's seconds of the total
    (a fit's coefficients, an overhead), summed again on this path only;
    those infinite, or above the largest float over the number of fields
    (the sum of the fields below that stays a float)."""
    parts = collections.defaultdict(float)
    for layer in layers:
        t_call, _, key = calibration._predict(layer)
        kind = overhead_kind(layer, inference)
        if key is not None:
            parts['families.{}.coef'.format(key)] += t_call
        parts['overhead.' + kind] += calibration.overhead[kind]
    limit = sys.float_info.max / max(len(parts), 1)
    return sorted(f for f, t in parts.items()
                  if not math.isfinite(t) or t > limit)


def _group(name):
    return collections.OrderedDict([
        ('name', name), ('n_layers', 0), ('n_flagged', 0), ('t_call', 0.0),
        ('t_predicted', 0.0)])


def _add(group, row):
    for k in ('n_layers', 'n_flagged', 't_call', 't_predicted'):
        group[k] += row[k]
    if 't_roofline' in row:
        group['t_roofline'] = group.get('t_roofline', 0.0) + \
            row['t_roofline']
    if 'time' in row:
        group['time'] = group.get('time', 0.0) + row['time']
        group['n_timed'] = group.get('n_timed', 0) + 1


def _finish(group):
    # A measured time only when every call of the group has one.
    if group.pop('n_timed', 0) != group['n_layers']:
        group.pop('time', None)
    return group


#: What each flag of a prediction means, for a reader of the report.
FLAG_REASONS = collections.OrderedDict([
    (UNCOVERED, "the calibration never ran that type: its family's fit, "
                "or elementwise math's, stands in (0 s with neither); a "
                'longer budget covers more types'),
    (OTHER_DTYPE, 'the calibration probes {}: a call in another float '
                  'dtype is predicted as if in {} (NumPy runs float16 far '
                  'slower on a CPU)'.format(PROBED_DTYPE, PROBED_DTYPE)),
    (OUT_OF_RANGE, 'bigger than {:g}x the largest call of its family the '
                   'calibration ran: extrapolated'.format(RANGE_FACTOR)),
])


def flagged_summary(rows):
    """One line saying which calls of a per-call time report (``rows``, as
    :func:`time_report` gives them ``by='layer'``) are flagged and why,
    counted by flag and type, most first; None when none is."""
    counts = collections.Counter(
        (row['flag'], row['type']) for name, row in rows.items()
        if name != 'total' and row.get('flag'))
    if not counts:
        return None
    by_flag = collections.OrderedDict()
    for (flag, type_name), n in sorted(counts.items(),
                                       key=lambda kv: (-kv[1], kv[0])):
        by_flag.setdefault(flag, []).append('{} {}'.format(n, type_name))
    parts = ['{!r} ({}): {}'.format(flag, FLAG_REASONS.get(flag, flag),
                                    ', '.join(types))
             for flag, types in by_flag.items()]
    return '{} of {} calls flagged; {}'.format(
        sum(counts.values()), len(rows) - ('total' in rows),
        '; '.join(parts))
