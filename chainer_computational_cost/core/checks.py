"""The argument checks every entry point shares.

Each check returns the value (as the type it stands for: an ``int``, a
``float``) or raises a one-line error naming the argument, the value
given and what is allowed::

    step_time (seconds) must be a finite number > 0, got nan

A value of the wrong type raises :class:`ArgumentTypeError`, a value of
the right type out of range ``ValueError``.  ``allowed`` replaces the
words saying what is allowed where an argument takes more than one kind
of value (``'an int >= 1 (samples per worker) or None'``).

This module imports nothing of the package: every module may use it.
"""

import codecs
import contextlib
import io
import json
import math
import numbers
import os
import secrets
import shutil


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type.

    A ``TypeError``, and a ``ValueError`` as well: every bad argument is
    one to the code that catches ValueError to print one line (the command
    line), as it was before the checks told the two apart.
    """


def is_int(value):
    """Whether ``value`` is an integer (Python's or NumPy's; a bool is no
    integer here): the one test of every check of an int."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _refuse(error, name, value, allowed):
    raise error('{} must be {}, got {!r}'.format(name, allowed, value))


def integer(name, value, low=1, allowed=None):
    """``value`` as an int >= ``low`` (a bool is no int here)."""
    allowed = allowed or 'an int >= {}'.format(low)
    if not is_int(value):
        _refuse(ArgumentTypeError, name, value, allowed)
    if value < low:
        _refuse(ValueError, name, value, allowed)
    return int(value)


def number(name, value, low=0, strict=False, allowed=None, high=None):
    """``value`` as a finite float >= ``low`` (> ``low`` when
    ``strict``; at most ``high``, if given): never NaN nor infinite.  The
    float kept is the one judged: an exact value (a Fraction, a long
    double) whose float is 0 or infinite is refused as that float would
    be."""
    allowed = allowed or 'a finite number {} {:g}'.format(
        '>' if strict else '>=', low)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        _refuse(ArgumentTypeError, name, value, allowed)
    try:
        kept = float(value) + 0.0  # (-0.0 is 0.0: no quantity is signed 0)
    except OverflowError:  # an int beyond a float's range
        kept = math.inf
    if not math.isfinite(kept) or kept < low or (strict and kept == low):
        try:
            exact = math.isfinite(value) and value >= low and not (
                strict and value == low)
        except OverflowError:  # an int beyond a float's range
            exact = False
        if not exact:
            _refuse(ValueError, name, value, allowed)
        # (what fails is the float it would be)
        raise ValueError('{} must be {}, got {!r} ({!r} as a float)'.format(
            name, allowed, value, kept))
    if high is not None and kept > high:
        _refuse(ValueError, name, value, allowed)
    return kept


def whole(name, value, low=0, allowed=None):
    """``value`` as an int >= ``low``: an integer as it is (exact, not
    through a float), or a float that is whole (``1e6``); a fraction is
    refused, never rounded down."""
    allowed = allowed or 'a whole number >= {:g}'.format(low)
    if is_int(value):
        return integer(name, value, low, allowed)
    number(name, value, low, False, allowed)
    if value != math.floor(value):
        _refuse(ValueError, name, value, allowed)
    return int(value)


def flag(name, value, allowed='True or False'):
    """``value`` as a bool: ``True`` or ``False``, or NumPy's (a bool
    array of no dimensions), as NumPy's integers are ints here; nothing
    else (not 0 or 1, not None)."""
    if isinstance(value, bool):
        return value
    dtype = getattr(value, 'dtype', None)
    if getattr(dtype, 'kind', None) == 'b' and \
            getattr(value, 'shape', None) == ():
        return bool(value)
    raise ArgumentTypeError('{} must be {}, got {!r} ({})'.format(
        name, allowed, value, type(value).__name__))


def positive_int(name, value, allowed=None):
    """``value`` as an int >= 1."""
    return integer(name, value, 1, allowed)


def positive(name, value, allowed=None, high=None):
    """``value`` as a finite float > 0 (and at most ``high``, if given)."""
    return number(name, value, 0, True, allowed, high)


def non_negative(name, value, allowed=None):
    """``value`` as a finite float >= 0."""
    return number(name, value, 0, False, allowed)


def one_of(name, value, choices, fold_case=False, allowed=None):
    """``value`` if it is one of ``choices`` (with ``fold_case``, a str in
    any case, returned in lower case); ``ValueError`` otherwise, an
    :class:`ArgumentTypeError` for a value that is not a str where every
    choice is one (None, an optimizer object for its name)."""
    key = value.lower() if fold_case and isinstance(value, str) else value
    try:
        found = key in choices
    except TypeError:  # unhashable: a list is no name
        found = False
    if not found:
        names = not isinstance(value, str) and all(
            isinstance(c, str) for c in choices)
        _refuse(ArgumentTypeError if names else ValueError, name, value,
                allowed or 'one of {}'.format(
                    ', '.join(repr(c) for c in choices)))
    return key


def instance(name, value, types, allowed):
    """``value`` if it is an instance of ``types``; ``allowed`` says what
    is in words (``'a str or None'``)."""
    if not isinstance(value, types):
        _refuse(ArgumentTypeError, name, value, allowed)
    return value


def path(name, value, allowed=None):
    """``value`` if it names a file: a str or an ``os.PathLike``.  An int
    is refused, since ``open()`` takes it as a file descriptor and closes
    the caller's file when done with it; an open file object as well."""
    return instance(name, value, (str, os.PathLike),
                    allowed or 'the path of a file (a str or os.PathLike)')


def _binary_wrapper(value):
    """Whether ``value`` wraps a binary file without being one of io's
    classes: a ``tempfile.NamedTemporaryFile()`` or
    ``SpooledTemporaryFile()``, whose ``mode`` (``'rb+'``, ``'w+b'``)
    says so.  A codecs writer takes text whatever its stream's mode."""
    try:
        mode = getattr(value, 'mode', None)
    except Exception:  # (a property that fails: nothing to tell)
        return False
    return isinstance(mode, str) and 'b' in mode and not isinstance(
        value, (codecs.StreamWriter, codecs.StreamReaderWriter))


def text_stream(name, value, default):
    """``value`` (``default`` when None) if text can be written to it: an
    object with a ``write`` method that is not a binary stream (a
    ``BytesIO``, a file opened ``'wb'``) nor closed nor read-only."""
    value = default if value is None else value
    allowed = 'a writable text stream (io.StringIO, sys.stdout, a file ' \
        'opened with "w")'
    if not callable(getattr(value, 'write', None)) or \
            isinstance(value, (io.RawIOBase, io.BufferedIOBase)) or \
            _binary_wrapper(value):
        _refuse(ArgumentTypeError, name, value, allowed)
    if getattr(value, 'closed', False) is True:
        _refuse(ValueError, name, value, allowed + ', not closed')
    writable = getattr(value, 'writable', None)
    try:
        readonly = callable(writable) and writable() is False
    except ValueError:  # (a stream that cannot tell)
        readonly = False
    if readonly:
        _refuse(ValueError, name, value,
                allowed + ', not one opened for reading only')
    return value


#: The most characters a JSON file of ours is read for (a calibration is
#: kilobytes): a device such as /dev/zero, or the wrong file, is refused
#: rather than read into all the memory there is.
JSON_LIMIT = 64 * 2 ** 20


def load_json(path, not_ours, encoding=None):
    """The JSON document in the file ``path``, read for at most
    :data:`JSON_LIMIT` characters; a file that cannot be read, holds no
    JSON, is longer than that or nests arrays beyond the parser's depth
    is a one-line ValueError, ``not_ours`` (the file named: "'x.json' is
    not a network file (...): ") followed by why."""
    try:
        with open(path, encoding=encoding) as f:
            text = f.read(JSON_LIMIT + 1)
        if len(text) > JSON_LIMIT:
            raise ValueError('it is longer than {} characters, which no '
                             'file of ours is'.format(JSON_LIMIT))
        return json.loads(text)
    except (OSError, ValueError, RecursionError) as e:
        raise ValueError(not_ours + str(e)) from None


def json_error(value):
    """Why ``value`` cannot be written as JSON that reads back as it is
    (a type JSON lacks: a TypeError; NaN or an infinity: a ValueError;
    nesting beyond Python's depth: a RecursionError), as the exception
    json.dumps raised; None when it can."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        return e
    return None


def write_json(path, doc, what):
    """Write ``doc`` as JSON (indented, a newline at the end) to the file
    ``path``, opened as :func:`output_file` opens ``what``; the text is
    made first, so a document that cannot be written (see
    :func:`json_error`) leaves the file as it was."""
    text = json.dumps(doc, indent=1, allow_nan=False) + '\n'
    with output_file(path, what) as f:
        f.write(text)


class UnwritableFile(ValueError):
    """A file that cannot be opened for writing (see :func:`output_file`):
    a ValueError, as every bad argument is, that a command which checked
    the path before minutes of work tells apart (its directory went away
    since, as a full disk would)."""


def _not_a_directory(directory):
    """Why ``directory``, which is no directory, is not: the first of it
    and its parents that exists is a file (named), or it does not
    exist."""
    parent = directory
    while not os.path.lexists(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
    if os.path.lexists(parent) and not os.path.isdir(parent):
        return '{!r} is a file, not a directory'.format(parent)
    return 'it does not exist'


def file_place_problem(path, example):
    """Why no file can be written at ``path`` (a str), told by its name
    and the directories alone: a directory, a name ending with a /, a
    directory that is not there (``'x.json': cannot write in directory
    ...``), a file name longer than the file system takes; None
    otherwise.  ``example`` is the file name suggested."""
    if os.path.isdir(path):
        return '{!r} is a directory: give a file name such as {}'.format(
            path, example)
    if path.endswith(('/', os.sep)):
        return ('{!r} ends with a /, which names a directory: give a file '
                'name such as {}'.format(path, example))
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        return '{!r}: cannot write in directory {!r}: {}'.format(
            path, directory, _not_a_directory(directory))
    name = os.fsencode(os.path.basename(path))
    try:
        longest = os.pathconf(directory, 'PC_NAME_MAX')
    except (OSError, ValueError, AttributeError):  # not said: the usual
        longest = 255
    if len(name) > longest:
        return ('{!r}: its file name is {} bytes long, more than the {} '
                'its file system takes: give a shorter name such as {}'
                .format(path, len(name), longest, example))
    return None


def _unwritable(path, what, error):
    return UnwritableFile('{!r} cannot be written ({}): {}'.format(
        os.fspath(path), what, error))


def _replacement(target):
    """A new file beside ``target``, opened to write (binary), as ``open``
    would make ``target``: its permissions those of ``target`` if it
    exists, else the umask's; ``(file, its name)``."""
    directory, name = os.path.split(target)
    while True:
        temp = os.path.join(directory, '.{}.{}.part'.format(
            name, secrets.token_hex(4)))
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:  # (a name drawn twice: draw again)
            continue
    try:
        if os.path.isfile(target):
            shutil.copymode(target, temp)
    except OSError:
        pass  # (the umask's, as a new file)
    return os.fdopen(fd, 'wb'), temp


@contextlib.contextmanager
def output_file(path, what, binary=False):
    """``path`` (checked by :func:`path`) to write, text (UTF-8) or
    ``binary``, in one step: what the block writes goes to a new file
    beside it, which replaces ``path`` when the block ends, so a block
    that fails (a full disk, a file size limit) leaves a file of the
    user's as it was, never cut short.  A path that is no regular file (a
    device, a pipe) is written as it is, and so is a writable file in a
    directory that takes no new file.  One that cannot be opened (a
    directory, a missing directory) is a one-line :class:`UnwritableFile`
    naming it and ``what`` it was to hold (``'a calibration file'``); an
    error while writing (a full disk) stays an OSError."""
    target = os.path.realpath(os.fspath(path))
    direct = os.path.exists(target) and not os.path.isfile(target)
    temp = None
    if not direct:
        try:
            raw, temp = _replacement(target)
        except OSError as e:
            if not (os.path.isfile(target) and
                    os.access(target, os.W_OK)):
                raise _unwritable(path, what, OSError(
                    e.errno, e.strerror, os.fspath(path))) from None
    if temp is None:
        try:
            raw = open(target, 'wb')
        except OSError as e:
            raise _unwritable(path, what, e) from None
    try:
        with raw if binary else io.TextIOWrapper(
                raw, encoding='utf-8') as f:
            yield f
        if temp is not None:
            os.replace(temp, target)
    except BaseException:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        raise


class ReadOnlyDict(dict):
    """A dict that refuses changes: the table of an object checked when
    it was made (a Device's peaks, a Calibration's overheads) stays what
    the checks passed, and a preset shared by every report stays the
    preset; a new object is made to change one."""

    __slots__ = ()

    def _refuse(self, *args, **kwargs):
        """Refused: the table cannot be changed (see the class)."""
        raise TypeError('this table was checked when its object was made '
                        'and cannot be changed: make a new object with the '
                        'figures wanted (a Device: _replace(peaks=...); a '
                        'Calibration: from_dict of an edited to_dict())')

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self):
        return type(self), (dict(self),)


class ReadOnlyList(list):
    """A list that refuses changes, as :class:`ReadOnlyDict` does: the
    list of a checked table (a Calibration's coefficients, its matrix
    products' speeds), which still equals a plain list of its items."""

    __slots__ = ()

    _refuse = ReadOnlyDict._refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = clear = extend = insert = pop = remove = reverse = sort = \
        _refuse

    def __reduce__(self):
        return type(self), (list(self),)


class CheckedFields(object):
    """A mixin that checks every field of a namedtuple when it is built,
    by the constructor, ``_make`` and ``_replace`` alike:
    ``Point(CheckedFields, namedtuple(...))``, then ``Point._field_checks``
    maps each field to a check of its value (the value to keep, or an
    error naming the field)."""

    __slots__ = ()
    _field_checks = {}

    def __new__(cls, *args, **kwargs):
        values = super(CheckedFields, cls).__new__(cls, *args, **kwargs)
        return super(CheckedFields, cls).__new__(cls, *[
            cls._field_checks[f](v) for f, v in zip(cls._fields, values)])

    @classmethod
    def _make(cls, iterable):
        # namedtuple's _make (and so _replace) would skip __new__
        return cls(*iterable)


def once_each(name, values, shown, why):
    """``values`` (a list) when none is given twice; else a ValueError
    '{name} gives X more than once in {shown}: {why}, give it once' (the
    rows of a table that has one per value: a repeat would be the same
    row again, or silently one row fewer than the values given)."""
    repeated = sorted({v for v in values if values.count(v) > 1})
    if repeated:
        raise ValueError('{}gives {} more than once in {!r}: {}, give {} '
                         'once'.format(name + ' ' if name else '',
                                       ', '.join(map(str, repeated)), shown,
                                       why, 'it' if len(repeated) == 1
                                       else 'each'))
    return values
