"""A Calibration as an object: checked once, where it is made, and then
kept as checked.  ``to_dict()`` hands out a copy the caller may edit; the
tables themselves refuse changes; a file that cannot be read or written,
or holds a bad field, is a ValueError naming the file.

The predicted time of every test is that of calibration_fixtures' add of
1000 bytes read and 500 written in inference: inside the call 1e-5 +
1e-9 * 1000 + 2e-9 * 500 = 1.2e-5 s, plus the 1e-6 s inference overhead,
1.3e-5 s.
"""

import copy
import json
import pickle
import re

import numpy
import pytest

from chainer_computational_cost.analysis import calibration as cal
from chainer_computational_cost import Calibration
from chainer_computational_cost import CostMonitor
from chainer_computational_cost.core.checks import ArgumentTypeError

from calibration_fixtures import add_layer
from calibration_fixtures import flat_table
from calibration_fixtures import literal_calibration
from calibration_fixtures import math_fit
from calibration_fixtures import OVERHEAD
from cli_runs import error_of

RAISING = 'cli_models:build_tiny'


def _predicted(c):
    return cal.time_report([add_layer('Add-1', 1000, 500)], c)[
        'total']['t_predicted']


def _with_nested_info():
    # a hand-edited file may hold lists and dicts in info, which the
    # checks leave free-form
    data = literal_calibration().to_dict()
    data['info'].update(uncovered=['MatMul'], threads={'blas': [4, 8]})
    return Calibration.from_dict(data)


# to_dict


def test_to_dict_hands_out_a_copy_that_editing_leaves_the_calibration():
    c = _with_nested_info()
    before = json.dumps(c.to_dict())
    assert _predicted(c) == pytest.approx(1.3e-5, rel=1e-12)
    data = c.to_dict()
    # every nested list and dict is the caller's own, and plain
    data['families']['math']['coef'][0] = 1.0
    data['families']['math']['note'] = 'edited'
    data['types']['Sub'] = 'math'
    data['error']['training'] = -1.0
    data['info']['device'] = 5
    data['info']['uncovered'].append('Add')
    data['info']['threads']['blas'][0] = -4
    data['overhead']['inference'] = -1.0
    data['gemm']['speed'][0][0][0] = -1.0
    data['gemm']['dims'].append(16)
    assert json.dumps(c.to_dict()) == before
    assert _predicted(c) == pytest.approx(1.3e-5, rel=1e-12)
    assert c.info['device'] == 'test'


def test_an_edited_to_dict_makes_a_checked_variant():
    # a constant of 2e-5 s: 2e-5 + 2e-6 + 1e-6 = 2.3e-5 s; a negative
    # one is refused by name, the original untouched either way
    c = literal_calibration()
    data = c.to_dict()
    data['families']['math']['coef'][0] = 2e-5
    assert _predicted(Calibration.from_dict(data)) == pytest.approx(
        2.3e-5, rel=1e-12)
    data['families']['math']['coef'][0] = -1.0
    with pytest.raises(ValueError, match=r"^a malformed calibration: field "
                       r"'families\.math\.coef\[0\]' must be a finite "
                       r'number >= 0, got -1\.0$'):
        Calibration.from_dict(data)
    assert _predicted(c) == pytest.approx(1.3e-5, rel=1e-12)


@pytest.mark.parametrize('where, message', [
    ('error', "error.inferense' is unknown (the fields there: inference, "
     'training, n_probes)'),
    ('fit', "families.math.inferense' is unknown (the fields there: coef, "
     'low, high, n)'),
])
def test_a_calibration_built_in_code_refuses_a_field_no_version_writes(
        where, message):
    # kept as given, a misspelt mode hid the held-out error it meant
    error = {'inferense': 0.9, 'training': 0.2, 'n_probes': 10}
    fit = dict(math_fit(), inferense=0.9)
    if where == 'error':
        fit = math_fit()
    else:
        error = {'inference': 0.9}
    with pytest.raises(ValueError) as e:
        Calibration(flat_table(), {'math': fit}, {'Add': 'math'}, OVERHEAD,
                    error)
    assert str(e.value) == "a malformed calibration: field '" + message


# The tables cannot be changed once checked


def _edits(c):
    """Each change to a checked calibration's tables, in place."""
    fit = c.families['math']
    return [
        lambda: c.families.__setitem__('matmul', dict(fit)),
        lambda: fit.__setitem__('coef', [-1.0] * 5),
        lambda: fit['coef'].__setitem__(0, -1.0),
        lambda: fit['high'].__setitem__(1, 0.0),
        lambda: c.types.__setitem__('Sub', 'math'),
        lambda: c.types.pop('Add'),
        lambda: c.error.__setitem__('training', float('nan')),
        lambda: c.info.__setitem__('device', 5),
        lambda: c.info['uncovered'].append('Add'),
        lambda: c.info['threads']['blas'].__setitem__(0, -4),
        lambda: c.gemm.speed[0][0].__setitem__(0, -1.0),
        lambda: c.gemm.dims.append(16),
    ]


def _assignments(c):
    """Each attribute of a checked calibration or its table set anew."""
    return [
        lambda: setattr(c, 'bandwidth', -1.0),
        lambda: setattr(c, 'families', {}),
        lambda: setattr(c, 'overhead', dict(OVERHEAD, inference=-1.0)),
        lambda: setattr(c, 'gemm', None),
        lambda: setattr(c.gemm, 'speed', [[[-1.0]]]),
        lambda: delattr(c, 'info'),
    ]


def test_a_calibrations_tables_refuse_changes_after_the_checks():
    # set to -1 after the checks, every coef made the step -3.5e-5 s;
    # bandwidth -1 failed in the roofline, naming no calibration field
    c = _with_nested_info()
    before = json.dumps(c.to_dict())
    for edit in _edits(c):
        with pytest.raises((TypeError, AttributeError)):
            edit()
    for assign in _assignments(c):
        with pytest.raises(AttributeError, match=r'^(Calibration|GemmTable)'
                           r'\.\w+ cannot be changed: a \1 is checked when '
                           'it is made; make a new one'):
            assign()
    # each says how to make a new one of its kind
    with pytest.raises(AttributeError) as e:
        c.bandwidth = 2e10
    assert str(e.value) == (
        'Calibration.bandwidth cannot be changed: a Calibration is checked '
        'when it is made; make a new one (Calibration.from_dict of an '
        'edited to_dict())')
    with pytest.raises(AttributeError) as e:
        c.gemm.dims = [1]
    assert str(e.value) == (
        'GemmTable.dims cannot be changed: a GemmTable is checked when it '
        'is made; make a new one (GemmTable(dims, speed))')
    assert json.dumps(c.to_dict()) == before
    assert _predicted(c) == pytest.approx(1.3e-5, rel=1e-12)
    assert c.bandwidth == 1e10 and c.device().bandwidth == 1e10


def test_the_tables_read_as_before():
    c = _with_nested_info()
    assert c.families['math']['coef'] == [1e-5, 1e-9, 2e-9, 0.0, 0.0]
    assert c.families['math']['n'] == 10
    assert c.types == {'Add': 'math'} and c.overhead == OVERHEAD
    assert c.error == {'inference': 0.1, 'training': 0.2, 'n_probes': 10}
    assert c.info['uncovered'] == ['MatMul']
    assert c.info['threads'] == {'blas': [4, 8]}
    assert c.gemm.dims == [1, 4]
    assert c.gemm.speed == [[[1e9] * 2] * 2] * 2
    # a checked calibration's own tables make another one
    again = Calibration(c.gemm, c.families, c.types, c.overhead, c.error,
                        c.info, c.bandwidth)
    assert again.to_dict() == c.to_dict()


@pytest.mark.parametrize('copied', [
    lambda c: pickle.loads(pickle.dumps(c)),
    copy.deepcopy,
    copy.copy,
    lambda c: Calibration.from_dict(c.to_dict()),
    lambda c: Calibration.from_dict(json.loads(json.dumps(c.to_dict()))),
], ids=['pickle', 'deepcopy', 'copy', 'to_dict', 'json'])
def test_a_copied_calibration_predicts_the_same_and_stays_read_only(
        copied):
    c = _with_nested_info()
    back = copied(c)
    assert _predicted(back) == _predicted(c)
    assert back.to_dict() == c.to_dict()
    for change in _edits(back) + _assignments(back):
        with pytest.raises((TypeError, AttributeError)):
            change()
    assert _predicted(back) == pytest.approx(1.3e-5, rel=1e-12)


def test_a_saved_and_loaded_calibration_predicts_the_same(tmp_path):
    c = _with_nested_info()
    c.save(tmp_path / 'c.json')
    back = Calibration.load(tmp_path / 'c.json')
    assert _predicted(back) == _predicted(c)
    assert back.to_dict() == c.to_dict()
    with pytest.raises(TypeError):
        back.families['math']['coef'][0] = -1.0


# Files that cannot be read or written, named


_OPEN = "^'{}' is not a calibration file \\(JSON written by calibrate\\): "


@pytest.mark.parametrize('name, oserror', [
    ('missing.json', r'\[Errno 2\] No such file or directory'),
    ('.', r'\[Errno 21\] Is a directory'),
    ('x' * 300 + '.json', r'\[Errno 36\] File name too long'),
])
def test_a_calibration_file_that_cannot_be_read_is_named(
        tmp_path, name, oserror):
    path = str(tmp_path / name)
    expected = _OPEN.format(re.escape(path)) + oserror
    calls = [lambda: Calibration.load(path),
             lambda: cal.load_calibration(path),
             lambda: cal.time_report([add_layer('Add-1')], path),
             lambda: CostMonitor(calibration=path)]
    for call in calls:
        with pytest.raises(ValueError, match=expected) as e:
            call()
        assert not isinstance(e.value, OSError)
        assert '\n' not in str(e.value)


def test_a_calibration_file_nested_beyond_the_parser_is_named(tmp_path):
    path = tmp_path / 'deep.json'
    path.write_text('[' * 100000 + ']' * 100000)
    expected = _OPEN.format(re.escape(str(path))) + \
        'maximum recursion depth exceeded'
    with pytest.raises(ValueError, match=expected):
        Calibration.load(str(path))


def test_the_command_line_names_the_file_it_cannot_read(tmp_path, capsys):
    path = str(tmp_path)
    err = error_of(capsys, RAISING, '--predict-time', path)
    assert re.match('^error: --predict-time: ' + _OPEN[1:].format(
        re.escape(path)) + r'\[Errno 21\] Is a directory', err), err


@pytest.mark.parametrize('name, oserror', [
    ('missing/c.json', r'\[Errno 2\] No such file or directory'),
    ('.', r'\[Errno 21\] Is a directory'),
])
def test_a_calibration_file_that_cannot_be_written_is_named(
        tmp_path, name, oserror):
    path = str(tmp_path / name)
    with pytest.raises(ValueError, match="^'{}' cannot be written (a "
                       'calibration file): {}'.format(
                           re.escape(path), oserror).replace(
                               '(a calibration file)',
                               r'\(a calibration file\)')) as e:
        literal_calibration().save(path)
    assert not isinstance(e.value, OSError)
    assert not (tmp_path / 'missing').exists()


def _file(tmp_path, edit):
    data = literal_calibration().to_dict()
    edit(data)
    path = str(tmp_path / 'edited.json')
    with open(path, 'w') as f:
        json.dump(data, f)
    return path


def test_a_bad_field_of_a_file_names_the_file_and_the_field(tmp_path):
    path = _file(tmp_path, lambda d: d['overhead'].update(forward=-1.0))
    expected = "^'{}': a malformed calibration: field 'overhead.forward' " \
        r'must be a finite number >= 0, got -1\.0$'.format(re.escape(path))
    for call in (lambda: Calibration.load(path),
                 lambda: cal.load_calibration(path),
                 lambda: CostMonitor(calibration=path)):
        with pytest.raises(ValueError) as e:
            call()
        assert re.match(expected, str(e.value)), str(e.value)
        assert not isinstance(e.value, TypeError)
    # a value of the wrong type stays a TypeError, the file named too
    path = _file(tmp_path, lambda d: d['info'].update(device=5))
    with pytest.raises(ArgumentTypeError, match="^'{}': a malformed "
                       "calibration: field 'info.device' must be a str or "
                       'None, got 5$'.format(re.escape(path))):
        Calibration.load(path)
    # built in code, there is no file to name
    with pytest.raises(ValueError, match="^a malformed calibration: field "
                       "'overhead.forward'"):
        literal_calibration(overhead=dict(OVERHEAD, forward=-1.0))


def test_the_device_of_a_calibration_checks_its_flag():
    # None, 0 or [] doubled every peak as False does
    c = literal_calibration()
    assert c.device(fma_1flop=numpy.bool_(False)) == c.device(False)
    assert c.device(False).peaks != c.device(True).peaks
    for value in (None, 0, []):
        with pytest.raises(ArgumentTypeError, match=r'^fma_1flop must be '
                           r'True or False, got '):
            c.device(fma_1flop=value)


# What save() writes and load() reads back


@pytest.mark.parametrize('value, why', [
    ({1, 2}, 'Object of type set is not JSON serializable'),
    (b'x', 'Object of type bytes is not JSON serializable'),
    (numpy.float32(1.5), 'Object of type float32 is not JSON serializable'),
    (float('nan'), 'Out of range float values are not JSON compliant'),
    # saved as '3', loaded back as another calibration
    ({3: 'x'}, 'key 3 is not a str'), ([{'a': {None: 1}}],
                                       'key None is not a str'),
])
def test_info_holds_json_data_only(value, why):
    # accepted, and then save() raised a TypeError halfway through the
    # file, which it left cut short
    data = literal_calibration().to_dict()
    data['info']['extra'] = value
    with pytest.raises(ValueError, match=re.escape(
            "a malformed calibration: field 'info' must hold JSON data only "
            '(str, finite numbers, bools, None, lists, dicts with str '
            'keys): ' + why)):
        Calibration.from_dict(data)


def test_a_save_that_fails_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    path = tmp_path / 'c.json'
    path.write_text('{"kept": 1}\n')
    c = literal_calibration()

    def fails(*args, **kwargs):
        raise TypeError('not encodable')
    monkeypatch.setattr(json, 'dumps', fails)
    with pytest.raises(TypeError, match='not encodable'):
        c.save(path)
    assert path.read_text() == '{"kept": 1}\n'


def test_info_nested_beyond_python_is_a_value_error():
    # 1,500 lists deep, in memory: from_dict's message (the data shown)
    # and the constructor raised RecursionError
    deep = []
    for _ in range(1500):
        deep = [deep]
    data = literal_calibration().to_dict()
    data['info']['extra'] = deep
    message = '^a malformed calibration: nested deeper than a calibration is$'
    with pytest.raises(ValueError, match=message):
        Calibration.from_dict(data)
    with pytest.raises(ValueError, match=message):
        Calibration(flat_table(), {'math': math_fit()}, {'Add': 'math'},
                    OVERHEAD, info={'extra': deep})


def test_a_calibration_built_in_code_refuses_an_unknown_overhead():
    # from_dict refused it; the constructor dropped it
    with pytest.raises(ValueError, match=re.escape(
            "a malformed calibration: field 'overhead.forwrd' is unknown "
            '(the fields there: inference, forward, backward, update)')):
        Calibration(flat_table(), {'math': math_fit()}, {'Add': 'math'},
                    dict(OVERHEAD, forwrd=1.0))


def test_info_nested_beyond_the_checks_is_a_value_error(tmp_path):
    # 500 lists deep in a free-form key: a RecursionError traceback
    path = tmp_path / 'deep.json'
    data = literal_calibration().to_dict()
    data['info']['extra'] = json.loads('[' * 500 + ']' * 500)
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="^'{}': a malformed calibration: "
                       'nested deeper than a calibration is$'.format(
                           re.escape(str(path)))):
        Calibration.load(path)


def test_a_held_out_error_is_one_whose_percentage_a_float_holds():
    # 1e308 passed, and the warning said "held-out error inf%"
    data = literal_calibration().to_dict()
    data['error']['inference'] = 1e308
    with pytest.raises(ValueError, match=re.escape(
            "field 'error.inference' must be a finite number >= 0 whose "
            'percentage a float holds (a share: 0.25 is 25 %), got 1e+308')):
        Calibration.from_dict(data)
    data['error']['inference'] = 1e306  # 1e308 %
    assert Calibration.from_dict(data).error['inference'] == 1e306


def test_a_held_out_error_is_kept_as_a_float(tmp_path):
    # an exact share (a Fraction), a NumPy float and -0.0 are kept as the
    # floats judged, which a file holds: a Fraction kept made save() raise
    import fractions
    data = literal_calibration().to_dict()
    data['error'] = {'inference': fractions.Fraction(3, 10),
                     'training': numpy.float32(-0.0), 'n_probes': 10}
    c = Calibration.from_dict(data)
    assert [(v, type(v)) for v in (c.error['inference'],
                                   c.error['training'])] == [
        (0.3, float), (0.0, float)]
    assert str(c.error['training']) == '0.0'  # not -0.0
    c.save(tmp_path / 'c.json')
    assert Calibration.load(tmp_path / 'c.json').error == c.error


def test_a_calibration_file_is_read_as_utf8(tmp_path):
    # written by hand with a device's own name; a byte that is no UTF-8
    # is refused, not read as Latin-1
    data = literal_calibration().to_dict()
    name = 'Intel\u00ae Xeon caf\u00e9'
    data['info']['device'] = name
    path = tmp_path / 'c.json'
    path.write_bytes(json.dumps(data, ensure_ascii=False).encode('utf-8'))
    assert Calibration.load(path).info['device'] == name
    path.write_bytes(path.read_bytes().replace('caf\u00e9'.encode('utf-8'),
                                               b'caf\xff'))
    with pytest.raises(ValueError, match="is not a calibration file .*"
                       "'utf-8' codec can't decode"):
        Calibration.load(path)


def test_an_error_just_above_the_threshold_is_said_in_tenths():
    # 0.254 read "held-out error 25% is above 25%"
    data = literal_calibration().to_dict()
    data['error']['inference'] = 0.254
    assert Calibration.from_dict(data).untrusted().startswith(
        'held-out error 25.4% is above 25%: ')
    data['error']['inference'] = 0.42
    assert Calibration.from_dict(data).untrusted().startswith(
        'held-out error 42% is above 25%: ')
