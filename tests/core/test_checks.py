"""The shared argument checks (checks.py): what each returns and the one
line each raises, naming the argument, the value and what is allowed."""

import codecs
import collections
import fractions
import io
import math
import os
import tempfile

import numpy
import pytest

from chainer_computational_cost.core import checks


def test_a_number_comes_back_as_a_float_and_an_int_as_an_int():
    assert checks.positive('x', 3) == 3.0
    assert type(checks.positive('x', numpy.float32(0.5))) is float
    assert checks.non_negative('x', 0) == 0.0
    assert checks.number('x', 10, 10) == 10.0  # >= its bound
    assert checks.positive_int('n', numpy.int64(7)) == 7
    assert type(checks.positive_int('n', numpy.int64(7))) is int
    assert checks.integer('n', 0, 0) == 0


@pytest.mark.parametrize('check, value, message', [
    (checks.positive, 0, '^x must be a finite number > 0, got 0$'),
    (checks.positive, -1.5, 'got -1.5$'),
    (checks.positive, float('nan'), 'got nan$'),
    (checks.positive, float('inf'), 'got inf$'),
    (checks.non_negative, -1e-9, '^x must be a finite number >= 0, got '
     '-1e-09$'),
    (checks.non_negative, float('-inf'), 'got -inf$'),
    (checks.positive_int, 0, '^x must be an int >= 1, got 0$'),
])
def test_a_value_out_of_range_is_a_value_error(check, value, message):
    with pytest.raises(ValueError, match=message) as e:
        check('x', value)
    assert not isinstance(e.value, TypeError)


def test_the_float_kept_is_the_one_judged():
    # an exact value > 0 whose float is 0 was kept as 0.0 (a network of
    # bandwidth 0.0, a ZeroDivisionError later); an int beyond a float
    # is refused too, and -0.0 comes back as 0.0
    tiny = fractions.Fraction(1, 10 ** 400)
    with pytest.raises(ValueError, match=r'^x must be a finite number > 0, '
                       r'got Fraction\(1, 1000*\) \(0\.0 as a float\)$'):
        checks.positive('x', tiny)
    assert checks.non_negative('x', tiny) == 0.0  # >= 0 holds for 0.0
    with pytest.raises(ValueError, match=r'^x must be a finite number > 0, '
                       r'got 1000*$'):
        checks.positive('x', 10 ** 400)
    kept = checks.non_negative('x', -0.0)
    assert (kept, math.copysign(1, kept)) == (0.0, 1.0)


@pytest.mark.parametrize('check, value, message', [
    (checks.positive, '1', "^x must be a finite number > 0, got '1'$"),
    (checks.positive, True, 'got True$'),  # a bool is no number here
    (checks.non_negative, None, 'got None$'),
    (checks.positive_int, 2.0, '^x must be an int >= 1, got 2.0$'),
    (checks.positive_int, False, 'got False$'),
])
def test_a_value_of_the_wrong_type_is_both_errors(check, value, message):
    # a TypeError, and a ValueError for the code that catches those
    with pytest.raises(TypeError, match=message):
        check('x', value)
    with pytest.raises(ValueError, match=message):
        check('x', value)


def test_a_flag_is_a_bool_or_numpy_s():
    assert checks.flag('memory', False) is False
    assert checks.flag('memory', numpy.bool_(True)) is True
    assert checks.flag('memory', numpy.array(False)) is False


@pytest.mark.parametrize('value, message', [
    (1, r'^memory must be True or False, got 1 \(int\)$'),
    (None, r'got None \(NoneType\)$'),
    (numpy.array([True]), r'got array\(\[ True\]\) \(ndarray\)$'),
])
def test_a_flag_of_another_type_is_refused_with_its_type(value, message):
    with pytest.raises(checks.ArgumentTypeError, match=message):
        checks.flag('memory', value)


def test_a_bound_and_its_words():
    with pytest.raises(ValueError, match='^seconds must be a finite number '
                       '>= 10, got 9.5$'):
        checks.number('seconds', 9.5, 10)
    with pytest.raises(ValueError, match=r'^b must be an int >= 1 \(per '
                       r'worker\) or None, got -2$'):
        checks.positive_int('b', -2, 'an int >= 1 (per worker) or None')


def test_a_choice():
    assert checks.one_of('mode', 'md', ('csv', 'md')) == 'md'
    assert checks.one_of('opt', 'Adam', {'adam': 2}, fold_case=True) == \
        'adam'
    with pytest.raises(ValueError, match="^mode must be one of 'csv', 'md', "
                       "got 'MD'$"):
        checks.one_of('mode', 'MD', ('csv', 'md'))
    # unhashable: not a name, and not a crash
    with pytest.raises(ValueError, match=r"got \['md'\]$"):
        checks.one_of('mode', ['md'], {'md': 1})
    with pytest.raises(ValueError, match='^opt must be one of sgd, adam, '
                       'got 3$'):
        checks.one_of('opt', 3, ('sgd', 'adam'),
                      allowed='one of sgd, adam')
    # no str where every choice is a name: the wrong type, as the other
    # checks tell it (a str out of the choices is a wrong value)
    for bad in (3, None, ['md'], object()):
        with pytest.raises(checks.ArgumentTypeError):
            checks.one_of('mode', bad, ('csv', 'md'))
    with pytest.raises(ValueError) as e:
        checks.one_of('mode', 'MD', ('csv', 'md'))
    assert type(e.value) is ValueError
    # choices that are not all names: a value of another type is a value
    with pytest.raises(ValueError) as e:
        checks.one_of('n', 'x', (1, 2))
    assert type(e.value) is ValueError


def test_an_instance():
    assert checks.instance('name', None, (str, type(None)), 'a str') is None
    with pytest.raises(TypeError, match='^name must be a str or None, got '
                       '3$'):
        checks.instance('name', 3, (str, type(None)), 'a str or None')


class _Pair(checks.CheckedFields, collections.namedtuple('_Pair', 'a b')):
    __slots__ = ()


_Pair._field_checks = {'a': lambda v: checks.positive('a', v),
                       'b': lambda v: v}


def test_checked_fields_of_a_named_tuple():
    assert _Pair(1, 'x') == (1.0, 'x') and type(_Pair(1, 'x').a) is float
    for make in (lambda: _Pair(0, 'x'), lambda: _Pair(a=0, b='x'),
                 lambda: _Pair._make([0, 'x']),
                 lambda: _Pair(1, 'x')._replace(a=0)):
        with pytest.raises(ValueError, match='^a must be a finite number > '
                           '0, got 0$'):
            make()


def test_a_json_file_is_read_for_a_bounded_length(tmp_path, monkeypatch):
    # /dev/zero as a calibration or network file was read into all the
    # memory there is; 10 characters stand for the 64 MiB here
    monkeypatch.setattr(checks, 'JSON_LIMIT', 10)
    path = tmp_path / 'f.json'
    path.write_text('[1, 2, 33]')  # 10 characters
    assert checks.load_json(path, 'f.json: ') == [1, 2, 33]
    path.write_text('[1, 2, 333]')
    with pytest.raises(ValueError, match='^f.json: it is longer than 10 '
                       'characters, which no file of ours is$'):
        checks.load_json(path, 'f.json: ')


def test_a_path_is_a_str_or_a_path_like(tmp_path):
    # open(3) would take 3 as a file descriptor, read the caller's file
    # and close it: a path is a str or an os.PathLike, nothing else
    assert checks.path('path', 'a.json') == 'a.json'
    assert checks.path('path', tmp_path) is tmp_path
    for value in (3, b'a.json', None, io.StringIO()):
        with pytest.raises(TypeError, match=r'^path must be the path of a '
                           r'file \(a str or os.PathLike\), got '):
            checks.path('path', value)


def test_a_file_name_longer_than_its_file_system_takes(tmp_path):
    import os
    longest = os.pathconf(str(tmp_path), 'PC_NAME_MAX')
    path = str(tmp_path / ('x' * (longest - 4) + '.png'))
    assert checks.file_place_problem(path, 'plot.png') is None
    path = str(tmp_path / ('x' * (longest - 3) + '.png'))
    assert checks.file_place_problem(path, 'plot.png') == (
        '{!r}: its file name is {} bytes long, more than the {} its file '
        'system takes: give a shorter name such as plot.png'.format(
            path, longest + 1, longest))


def test_a_whole_number_is_an_int_or_a_whole_float():
    # 1e3 is 1000; an int stays exact, past a float's 53 bits
    assert checks.whole('n', 1e3, 1) == 1000
    assert checks.whole('n', 2 ** 60 + 1, 1) == 2 ** 60 + 1
    for bad in (0.5, 1000.7, 0, 0.0, math.inf, math.nan):
        with pytest.raises(ValueError, match=r'n must be a whole number '
                           r'>= 1, got '):
            checks.whole('n', bad, 1)
    with pytest.raises(TypeError):
        checks.whole('n', True, 1)


def test_a_text_stream_is_given_back_or_the_default_for_none():
    out = io.StringIO()
    assert checks.text_stream('ost', out, None) is out
    assert checks.text_stream('ost', None, out) is out


def test_a_binary_stream_or_no_stream_is_refused_as_a_type(tmp_path):
    with open(str(tmp_path / 'b'), 'wb') as binary:
        for value in (io.BytesIO(), binary, 3):
            with pytest.raises(checks.ArgumentTypeError,
                               match='ost must be a writable text stream '
                               r'\(io.StringIO, sys.stdout, a file opened '
                               'with "w"\\), got '):
                checks.text_stream('ost', value, None)


def test_an_unbuffered_binary_file_is_refused_as_a_type(tmp_path):
    # open(path, 'wb', buffering=0) gives a raw FileIO, not a buffered one
    with open(str(tmp_path / 'b'), 'wb', buffering=0) as raw:
        with pytest.raises(checks.ArgumentTypeError,
                           match='^ost must be a writable text stream '
                           r'\(io.StringIO, sys.stdout, a file opened '
                           'with "w"\\), got '):
            checks.text_stream('ost', raw, None)


def test_a_temporary_file_is_refused_when_binary_only(tmp_path):
    # tempfile's wrappers are none of io's classes: their mode tells
    binaries = (tempfile.NamedTemporaryFile(dir=str(tmp_path)),
                tempfile.SpooledTemporaryFile())
    for value in binaries:
        with value:
            with pytest.raises(checks.ArgumentTypeError,
                               match='^ost must be a writable text stream'):
                checks.text_stream('ost', value, None)
    texts = (tempfile.NamedTemporaryFile('w', dir=str(tmp_path)),
             tempfile.SpooledTemporaryFile(mode='w+'))
    for value in texts:
        with value:
            assert checks.text_stream('ost', value, None) is value
    # a codecs writer takes text onto a binary file
    with open(str(tmp_path / 'c'), 'wb') as binary:
        writer = codecs.getwriter('utf-8')(binary)
        assert checks.text_stream('ost', writer, None) is writer

    # a stream whose mode cannot be read tells nothing: taken as text
    class NoMode(io.StringIO):
        @property
        def mode(self):
            raise OSError('no mode here')
    stream = NoMode()
    assert checks.text_stream('ost', stream, None) is stream


def test_a_missing_directory_is_told_apart_from_a_file_in_the_way(
        tmp_path):
    # the directory of the file does not exist: nothing in its way
    missing = str(tmp_path / 'nowhere' / 'deeper')
    assert checks.file_place_problem(
        os.path.join(missing, 'x.json'), 'x.json') == (
        '{!r}: cannot write in directory {!r}: it does not exist'.format(
            os.path.join(missing, 'x.json'), missing))
    # a file where a directory of it should be: named
    (tmp_path / 'plain').write_text('')
    inside = str(tmp_path / 'plain' / 'deeper')
    assert checks.file_place_problem(
        os.path.join(inside, 'x.json'), 'x.json') == (
        '{!r}: cannot write in directory {!r}: {!r} is a file, not a '
        'directory'.format(os.path.join(inside, 'x.json'), inside,
                           str(tmp_path / 'plain')))


def test_a_checked_table_takes_no_attribute_either():
    # its items cannot change, nor can anything be hung on it
    for table in (checks.ReadOnlyDict(a=1), checks.ReadOnlyList([1])):
        with pytest.raises(AttributeError):
            table.note = 'changed'


def test_a_closed_or_read_only_stream_is_refused(tmp_path):
    closed = io.StringIO()
    closed.close()
    with pytest.raises(ValueError, match=', not closed, got <_io.StringIO'):
        checks.text_stream('ost', closed, None)
    (tmp_path / 'r').write_text('')
    with open(str(tmp_path / 'r')) as readonly:
        with pytest.raises(ValueError,
                           match='not one opened for reading only, got'):
            checks.text_stream('ost', readonly, None)


# Files written in one step (output_file, write_json)

_LIMITED = '''
import resource, sys
from chainer_computational_cost.core import checks
resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))
try:
    checks.write_json(sys.argv[1], {'text': 'x' * 20000}, 'a test file')
except OSError as e:
    print(e.errno)
'''


def test_a_write_cut_short_leaves_the_file_as_it_was(tmp_path):
    # a file size limit of 8 KiB (ulimit -f 8): Python ignores SIGXFSZ,
    # so the write past it fails with EFBIG; the file of 12 bytes the user
    # had was cut to 8,192 bytes of broken JSON
    import errno
    import subprocess
    import sys
    path = tmp_path / 'owned.json'
    path.write_text('{"mine": 1}\n')
    done = subprocess.run([sys.executable, '-c', _LIMITED, str(path)],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == str(errno.EFBIG)
    assert path.read_text() == '{"mine": 1}\n'
    assert os.listdir(tmp_path) == ['owned.json']  # no part left


def test_a_block_that_fails_leaves_the_file_and_no_part(tmp_path):
    path = tmp_path / 'owned.json'
    path.write_text('old')
    with pytest.raises(OSError, match='No space'):
        with checks.output_file(str(path), 'a test file') as f:
            f.write('partial')
            raise OSError(28, 'No space left on device')
    assert path.read_text() == 'old'
    assert os.listdir(tmp_path) == ['owned.json']


def test_a_file_replaced_keeps_its_permissions_and_its_link(tmp_path):
    path = tmp_path / 'owned.json'
    path.write_text('old')
    os.chmod(path, 0o640)
    link = tmp_path / 'link.json'
    link.symlink_to(path)
    checks.write_json(str(link), [1], 'a test file')
    assert path.read_text() == '[\n 1\n]\n'
    assert os.stat(path).st_mode & 0o777 == 0o640
    assert link.is_symlink()
    assert sorted(os.listdir(tmp_path)) == ['link.json', 'owned.json']


def test_a_new_file_has_the_permissions_open_gives(tmp_path):
    checks.write_json(str(tmp_path / 'a.json'), {}, 'a test file')
    with open(tmp_path / 'b.json', 'w'):
        pass
    assert os.stat(tmp_path / 'a.json').st_mode == \
        os.stat(tmp_path / 'b.json').st_mode


def test_a_device_is_written_as_it_is():
    checks.write_json(os.devnull, {'a': 1}, 'a test file')
    assert not os.path.isfile(os.devnull)


def test_a_missing_directory_names_the_file(tmp_path):
    path = str(tmp_path / 'gone' / 'x.json')
    with pytest.raises(checks.UnwritableFile) as e:
        checks.write_json(path, {}, 'a test file')
    assert str(e.value) == (
        "{!r} cannot be written (a test file): [Errno 2] No such file or "
        "directory: {!r}".format(path, path))


def test_a_directory_that_takes_no_new_file(tmp_path, monkeypatch):
    # (as a directory the user may not write in): a file of it that is
    # writable is written as it is; a new one cannot be made there
    def refused(target):
        raise PermissionError(13, 'Permission denied')
    monkeypatch.setattr(checks, '_replacement', refused)
    path = tmp_path / 'owned.json'
    path.write_text('old')
    checks.write_json(str(path), [1], 'a test file')
    assert path.read_text() == '[\n 1\n]\n'
    new = str(tmp_path / 'new.json')
    with pytest.raises(checks.UnwritableFile) as e:
        checks.write_json(new, [1], 'a test file')
    assert str(e.value) == ("{!r} cannot be written (a test file): [Errno "
                            "13] Permission denied: {!r}".format(new, new))
