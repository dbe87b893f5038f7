"""What the hook stores per call and how it is read back as plain data.

* :class:`Record`: what the hook stores per call, a named tuple read by
  field name (the projection builds records of the same type), and
  :func:`as_records`, which wraps the plain tuples of earlier versions;
* stacks: the interned call stacks records hold, their text
  (:func:`format_stack`, ending in the user's code) and their picklable
  form (:class:`SavedStack`, :func:`saved_records`);
* :func:`fresh` and :class:`FreshDict`: the copies every report is handed
  out as, so that nothing read is shared with a cache;
* :func:`link_depth` of the link paths records carry;
* :func:`error_text` and :class:`ReportWarning`.

It imports nothing of the package: every other module may use it.
"""

import collections
import copy
import functools
import os
import sys
import sysconfig
import traceback
import typing

# Records: what the hook stores per call.


class Record(typing.NamedTuple):
    """What the hook stores per call: one small tuple, read by field name
    (``record.flops``), as small as a plain tuple of its fields; the
    hook's records share their shapes and stacks, interned (one object
    for every call alike).  The projection builds records of the same
    type.

    Its fields:

    * ``type``: the class name of the function (``'LinearFunction'``),
      of an optimizer's update rule (``'AdamRule'``) or the MPI call;
    * ``flops``, ``mread``, ``mwrite``: the call's FLOPs and the bytes it
      reads and writes (0 for an ignored call);
    * ``params``: the calculator's dict of parameters; None for an
      ignored call (no calculator, or it failed);
    * ``n_in``: how many of ``shapes`` are the inputs';
    * ``shapes``: the inputs' shapes, then the outputs';
    * ``error``: why the call was ignored (``'Type: message'``), or None;
    * ``stack``: where the call was made: an interned stack node while
      recorded, a :class:`SavedStack` once saved, or None;
    * ``phase``: ``'forward'``, ``'backward'`` or ``'update'``;
    * ``link``: the path of the link the call belongs to (``'/'`` the
      root);
    * ``dtype``: the NumPy dtype of the call's first input, or None;
    * ``time``: the seconds it took when timed, else None;
    * ``live``: with memory=True, the bytes alive after the call;
    * ``grad``: the part of ``live`` that backward calls created;
    * ``scratch``: the bytes the call allocated and freed inside itself
      (im2col's columns, temporaries);
    * ``state``: the bytes of optimizer state the call created (an
      update's first: Adam's moments; 0 for other calls).

    The last four are None without memory=True (and in records saved by
    versions that did not record them).
    """

    type: str
    flops: int
    mread: int
    mwrite: int
    params: typing.Optional[dict]
    n_in: int
    shapes: tuple
    error: typing.Optional[str]
    stack: typing.Any
    phase: str
    link: str
    dtype: typing.Any
    time: typing.Optional[float]
    live: typing.Optional[int] = None
    grad: typing.Optional[int] = None
    scratch: typing.Optional[int] = None
    state: typing.Optional[int] = None


def as_record(record):
    """``record`` as a :class:`Record`: a plain tuple (a pickled record,
    possibly of an earlier version without the last fields, which are
    then None) is wrapped."""
    if type(record) is Record:
        return record
    if len(record) == _N_FIELDS:
        return _make_record(record)
    return Record(*record)


class FlatRecords(typing.NamedTuple):
    """Records as one flat list of their fields (``n`` a record), the form
    snapshots pickle: loaded, it is grouped into :class:`Record` objects
    without making a throw-away tuple per record first (100,000 of them
    made the garbage collector run full collections while loading)."""

    n: int
    fields: list


def as_records(records):
    """A new list of ``records`` as :class:`Record` (see
    :func:`as_record`, :class:`FlatRecords`), holding the same objects
    when every one is one already."""
    if type(records) is FlatRecords:
        if records.n == _N_FIELDS:
            return list(map(_make_record,
                            zip(*[iter(records.fields)] * records.n)))
        records = zip(*[iter(records.fields)] * records.n)
    records = list(records)
    if any(type(r) is not Record for r in records):
        records = [as_record(r) for r in records]
    return records


_N_FIELDS = len(Record._fields)
# A Record of a whole tuple of fields in one C call (Record._make checks
# the length in Python).
_make_record = functools.partial(tuple.__new__, Record)


# The index of each field in a record, as code written for earlier versions
# reads them (the hook lays out its flat list of fields the same way).
(R_TYPE, R_FLOPS, R_MREAD, R_MWRITE, R_PARAMS, R_N_IN, R_SHAPES, R_ERROR,
 R_STACK, R_PHASE, R_LINK, R_DTYPE, R_TIME, R_LIVE, R_GRAD, R_SCRATCH,
 R_STATE) = range(len(Record._fields))


class SavedStack(tuple):
    """A stack as plain data that pickles: ``(filename, line, function)``
    per frame, outermost first.  A record holds an interned node ``(code,
    lasti, parent)`` while it is recorded (code objects do not pickle); it
    becomes one of these when the records are saved (:func:`saved_records`).
    """

    __slots__ = ()


def stack_frames(node):
    """``(filename, line, function)`` of each frame of a stack (an interned
    node, a :class:`SavedStack` or None), outermost first."""
    if type(node) is SavedStack:
        return list(node)
    frames = []
    while node is not None:
        code, lasti, node = node
        frames.append((code.co_filename, _line_of(code, lasti),
                       code.co_name))
    frames.reverse()
    return frames


def saved_records(records):
    """``records`` with every stack a :class:`SavedStack` (a record whose
    stack is shared keeps sharing it): records that can be pickled, each
    of the type it was given as."""
    saved = {}
    out = []
    for r in records:
        stack = r[R_STACK]
        if type(stack) is not SavedStack and stack is not None:
            new = saved.get(id(stack))
            if new is None:
                new = saved[id(stack)] = SavedStack(stack_frames(stack))
            if type(r) is Record:
                r = r._replace(stack=new)
            else:  # a plain tuple keeps its fields
                r = r[:R_STACK] + (new,) + r[R_STACK + 1:]
        out.append(r)
    return out


def flat_records(records):
    """``records`` as the :class:`FlatRecords` that snapshots pickle, their
    stacks saved (see :func:`saved_records`): a list of plain fields
    pickles faster than records, and loads faster than tuples."""
    fields = []
    for r in saved_records(as_records(records)):
        fields.extend(r)
    return FlatRecords(_N_FIELDS, fields)


def format_stack(node):
    """Text of a stack (see :func:`stack_frames`), outermost frame first (as
    Python prints a traceback), ending at the last frame of the user's code:
    the frames of Chainer and of this package a call goes through after it
    tell nothing about where it was made (all of them are kept when no
    frame is the user's)."""
    frames = stack_frames(node)
    end = len(frames)
    while end and is_library_file(frames[end - 1][0]):
        end -= 1
    if end:
        frames = frames[:end]
    return ''.join(traceback.format_list(
        [traceback.FrameSummary(*f) for f in frames]))


#: The folder of the package (a frame in a file below it is the library's).
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_under(path, directory):
    """Whether ``path`` is ``directory`` or inside it (absolute paths)."""
    return path == directory or path.startswith(directory + os.sep)


@functools.lru_cache(maxsize=None)
def is_library_file(filename):
    """Whether a frame's file belongs to Python, Chainer, NumPy or this
    package rather than to the user's code."""
    if filename.startswith('<frozen'):
        return True
    import chainer
    import numpy
    path = os.path.abspath(filename)
    libraries = [PACKAGE_DIR] + [
        os.path.dirname(os.path.abspath(m.__file__)) for m in (chainer, numpy)]
    if any(is_under(path, d) for d in libraries):
        return True
    paths = sysconfig.get_paths()
    # Some distributions keep site-packages inside the standard library's
    # directory; a user's installed package there is still user code.
    installed = (paths['purelib'], paths['platlib'])
    if any(is_under(path, os.path.abspath(d)) for d in installed):
        return False
    return any(is_under(path, os.path.abspath(paths[k]))
               for k in ('stdlib', 'platstdlib'))


def _line_of(code, lasti):
    # The line of the last range starting at or before the instruction
    # (co_lines gives them in order) that has one: the instruction's own,
    # or for one without a line, the line before it.
    line = code.co_firstlineno
    for start, _, lineno in code.co_lines():
        if start > lasti:
            break
        if lineno is not None:
            line = lineno
    return line


def safe_text(obj):
    """``str(obj)``, or a placeholder when its ``__str__`` raises."""
    try:
        return str(obj)
    except Exception:
        return '<unprintable {} object>'.format(type(obj).__name__)


def error_text(e):
    """'Type: message' of an exception, never raising."""
    return '{}: {}'.format(type(e).__name__, safe_text(e))


class ReportWarning(UserWarning):
    """Warnings of chainer_computational_cost: functions ignored, cost
    calculators that failed, empty reports.  Filter them by this class."""


def outside_stacklevel(module):
    """The ``stacklevel`` at which a ``warnings.warn`` in the function that
    calls this one points at the first caller outside the module named
    ``module`` (its ``__name__``): the user's line, however many of the
    module's own functions lie between."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get('__name__') == module:
        frame = frame.f_back
        level += 1
    return level


# Fresh copies

def fresh(value):
    """A copy of a report value sharing nothing mutable with it: dicts,
    lists, sets and tuples are rebuilt; numbers and strings are kept."""
    t = type(value)
    if t in (int, float, str, bool) or value is None:
        return value
    if t is dict or t is collections.OrderedDict:
        return t((k, fresh(v)) for k, v in value.items())
    if t is list:
        return [fresh(v) for v in value]
    if t is tuple:
        return tuple([fresh(v) for v in value])
    return copy.deepcopy(value)


class FreshDict(dict):
    """An ordered report mapping whose entries are copied the first time
    they are read.

    Building it is one dict copy, however many layers there are; reading an
    entry copies that entry only.  Every way of reading (``[]``, ``get``,
    iteration of ``items``/``values``, ``dict(...)``, ``json.dumps``,
    ``copy``) goes through the copying path, so nothing read from it is
    shared with the cache it was made from.
    """

    __slots__ = ('_copied',)

    def __init__(self, source=()):
        dict.__init__(self, source)
        self._copied = set()

    def __getitem__(self, key):
        value = dict.__getitem__(self, key)
        if key not in self._copied:
            value = fresh(value)
            dict.__setitem__(self, key, value)
            self._copied.add(key)
        return value

    def __setitem__(self, key, value):
        dict.__setitem__(self, key, value)
        self._copied.add(key)

    # Overriding __iter__ (even unchanged) makes CPython copy this mapping
    # through keys() and __getitem__ in dict(), {**d}, update() and copy.
    def __iter__(self):
        return dict.__iter__(self)

    def get(self, key, default=None):
        """The copied entry for ``key``, or ``default``."""
        return self[key] if key in self else default

    def items(self):
        """(key, copied entry) pairs in order."""
        return [(k, self[k]) for k in dict.keys(self)]

    def values(self):
        """Copied entries in order."""
        return [self[k] for k in dict.keys(self)]

    def pop(self, key, *default):
        """Remove ``key`` and return its copied entry."""
        if key in self:
            value = self[key]
            dict.__delitem__(self, key)
            return value
        return dict.pop(self, key, *default)

    def popitem(self):
        """Remove and return the last (key, copied entry) pair; a KeyError
        when empty, as a dict's."""
        if not dict.__len__(self):
            raise KeyError('popitem(): dictionary is empty')
        key = next(reversed(dict.keys(self)))
        return key, self.pop(key)

    def setdefault(self, key, default=None):
        """The copied entry for ``key``, inserting ``default`` if absent."""
        if key in self:
            return self[key]
        self[key] = default
        return default

    def copy(self):
        """A plain dict of copied entries."""
        return dict(self.items())

    def __reduce__(self):
        return dict, (self.items(),)

    def __deepcopy__(self, memo):
        return copy.deepcopy(dict(self.items()), memo)


def link_depth(path):
    """How many links below the root a link path is: '/' 0, '/a/b' 2."""
    return len([p for p in path.split('/') if p])


class MemoryState(typing.NamedTuple):
    """The figures of live memory that the records do not hold: those of
    a hook's block (``at_exit``, ``params``) and, for a projection, the
    lines its figures were drawn on.  Read as a mapping too
    (``state['at_exit']``, ``state.get('lines')``), as it was a dict.

    Its fields: ``at_exit``, the ``(activations, gradients)`` bytes
    alive when the block ended; ``params``, the bytes of the parameters
    the block's links hold; ``error``, why the memory could not be
    projected (None if it could); ``line_error``, for a projection
    answered by a run, why its lines cannot be (``fit_batch``'s error);
    ``off``, how many batch sizes a figure was off its line; ``lines``,
    per record, the lines of its live, gradient and scratch bytes over
    the batch size; ``bounded``, the records whose scratch is a bound
    from above; ``batches``, the batch sizes the lines go through;
    ``names``, the records' layer names; ``samples``, batch size ->
    (names, figures) of the runs made; ``created``, per record, the bytes
    its call created; ``batch_size``, the batch size projected to (None
    for a hook's).
    """

    at_exit: tuple = (0, 0)
    params: int = 0
    error: typing.Optional[str] = None
    line_error: typing.Optional[str] = None
    off: typing.Optional[int] = None
    lines: typing.Any = None
    bounded: typing.Any = ()
    batches: tuple = ()
    names: typing.Any = ()
    samples: typing.Any = None
    created: typing.Any = None
    batch_size: typing.Optional[int] = None

    def __getitem__(self, key):
        if isinstance(key, str):
            try:
                return getattr(self, key)
            except AttributeError:
                raise KeyError(key)
        return tuple.__getitem__(self, key)

    def get(self, key, default=None):
        """The field ``key``, or ``default`` if there is none or it is
        None."""
        value = getattr(self, key, None)
        return default if value is None else value

    @classmethod
    def of(cls, state):
        """``state`` as a MemoryState: None stays None, a mapping (as
        snapshots pickled by 0.2.0 hold) gives its fields."""
        if state is None or isinstance(state, cls):
            return state
        return cls(**dict(state))
