"""Records, stacks and the copies reports are handed out as, as a user
reads them.

Not tested, as nothing a user reads tells it apart: ``FreshDict``'s
``__slots__`` (without it each mapping handed out carries an empty
attribute dict, 16 bytes; its entries and copies are the same).
"""

import collections
import copy
import json
import os
import pickle
import sys
import sysconfig

import chainer
import numpy
import pytest

from chainer_computational_cost.core import records
from chainer_computational_cost.core.records import FreshDict
from chainer_computational_cost.core.records import SavedStack


def _here():
    """The interned stack of this call: (code, lasti, parent), and the
    (file, line, function) of its two frames as Python gives them."""
    inner = sys._getframe(1)
    outer = inner.f_back
    node = (inner.f_code, inner.f_lasti,
            (outer.f_code, outer.f_lasti, None))
    return node, [(outer.f_code.co_filename, outer.f_lineno,
                   outer.f_code.co_name),
                  (inner.f_code.co_filename, inner.f_lineno,
                   inner.f_code.co_name)]


def _called_here():
    return _here()


def test_a_stack_reads_outermost_frame_first_with_its_lines():
    node, frames = _called_here()
    assert records.stack_frames(node) == frames
    assert frames[1][2] == '_called_here'
    assert records.stack_frames(None) == []
    saved = SavedStack(frames)
    assert records.stack_frames(saved) == frames


class _Adds(object):
    # as a chainer.Variable's + calls F.add
    def __add__(self, other):
        return _here()


def _added_over_lines():
    a = _Adds()
    return (a
            + a)


def test_a_sum_over_several_lines_is_at_the_line_it_begins():
    # as Python's tracebacks show it: not at the line of its second term,
    # read just before the addition
    node, frames = _added_over_lines()
    line = _added_over_lines.__code__.co_firstlineno + 2
    assert frames[0][1:] == (line, '_added_over_lines')
    assert records.stack_frames(node) == frames


def test_a_saved_stack_is_as_small_as_a_tuple():
    frames = [('a.py', 1, 'f'), ('b.py', 2, 'g')]
    assert sys.getsizeof(SavedStack(frames)) == sys.getsizeof(
        tuple(frames))


def _record(stack, extra=()):
    return ('ReLU', 6, 24, 24, {}, 1, ((2, 3), (2, 3)), None, stack,
            'forward', '/l', numpy.dtype('float32'), None) + tuple(extra)


def test_saved_records_change_only_the_stacks():
    node, frames = _called_here()
    recs = [_record(node), _record(None), _record(node, (48, 0, 16, 0)),
            _record(SavedStack(frames[:1]))]
    saved = records.saved_records(recs)
    assert [len(r) for r in saved] == [13, 13, 17, 13]
    for old, new in zip(recs, saved):
        assert new[:records.R_STACK] == old[:records.R_STACK]
        assert new[records.R_STACK + 1:] == old[records.R_STACK + 1:]
    assert saved[0][records.R_STACK] == tuple(frames)
    assert type(saved[0][records.R_STACK]) is SavedStack
    # one stack saved once; none stays none; a saved one is kept
    assert saved[2][records.R_STACK] is saved[0][records.R_STACK]
    assert saved[1][records.R_STACK] is None
    assert saved[3][records.R_STACK] is recs[3][records.R_STACK]
    # the records given are not changed
    assert recs[0][records.R_STACK] is node
    back = pickle.loads(pickle.dumps(saved))
    assert records.format_stack(back[0][records.R_STACK]) == \
        records.format_stack(node)


def test_a_record_is_read_by_name_and_is_as_small_as_a_tuple():
    node, _ = _called_here()
    fields = _record(node, (48, 16, 8, 0))
    r = records.Record(*fields)
    assert (r.type, r.flops, r.mread, r.mwrite, r.n_in, r.stack, r.phase,
            r.link, r.live, r.grad, r.scratch, r.state) == (
        'ReLU', 6, 24, 24, 1, node, 'forward', '/l', 48, 16, 8, 0)
    assert r == fields
    assert sys.getsizeof(r) == sys.getsizeof(fields)
    assert r._replace(live=96) == fields[:13] + (96, 16, 8, 0)


def test_plain_tuples_of_earlier_versions_read_by_name():
    # 13 fields (no memory figures), 15 (no scratch, no state) and 17: the
    # fields a tuple lacks are None
    short, mid, full = (_record(None), _record(None, (48, 16)),
                        _record(None, (48, 16, 8, 0)))
    wrapped = records.as_records([short, mid, full])
    assert [type(r) for r in wrapped] == [records.Record] * 3
    assert [(r.flops, r.live, r.grad, r.scratch, r.state)
            for r in wrapped] == [(6, None, None, None, None),
                                  (6, 48, 16, None, None), (6, 48, 16, 8, 0)]
    # records are kept as they are (in a new list)
    assert records.as_records(wrapped) is not wrapped
    assert all(a is b for a, b in zip(records.as_records(wrapped), wrapped))
    assert records.as_record(wrapped[2]) is wrapped[2]


def test_a_memory_state_is_read_by_name_by_position_and_by_get():
    state = records.MemoryState(at_exit=(24, 8), params=32)
    assert state['at_exit'] == state.at_exit == (24, 8)
    # a named tuple still: by position and by slice
    assert state[0] == (24, 8)
    assert state[:2] == ((24, 8), 32)
    assert state[-1] is None  # batch_size, last
    assert state.get('error', 'none') == 'none'
    with pytest.raises(KeyError):
        state['peak']


def test_a_traceback_ends_in_the_users_code():
    chainer_file = chainer.__file__
    stack = SavedStack([('/home/u/train.py', 10, 'main'),
                        ('/home/u/model.py', 5, 'forward'),
                        (chainer_file, 100, 'apply'),
                        (records.__file__, 7, 'hook')])
    assert records.format_stack(stack) == (
        '  File "/home/u/train.py", line 10, in main\n'
        '  File "/home/u/model.py", line 5, in forward\n')
    # a user's frame after a library's still ends it
    stack = SavedStack([('/home/u/train.py', 10, 'main'),
                        (chainer_file, 100, 'apply'),
                        ('/home/u/cb.py', 3, 'callback')])
    assert records.format_stack(stack).splitlines()[-1] == \
        '  File "/home/u/cb.py", line 3, in callback'


def test_a_stack_all_in_libraries_is_shown_whole():
    stack = SavedStack([(os.__file__, 1, 'a'), (numpy.__file__, 2, 'b')])
    # (each frame followed by its source line, these files existing)
    text = records.format_stack(stack)
    assert [x for x in text.splitlines() if x.startswith('  File')] == [
        '  File "{}", line 1, in a'.format(os.__file__),
        '  File "{}", line 2, in b'.format(numpy.__file__)]
    assert records.format_stack(None) == ''


def test_which_files_are_the_users():
    assert records.is_library_file('<frozen importlib._bootstrap>')
    assert records.is_library_file(chainer.__file__)
    assert records.is_library_file(numpy.__file__)
    assert records.is_library_file(records.__file__)
    assert records.is_library_file(os.__file__)  # the standard library
    assert not records.is_library_file('/home/u/train.py')
    assert not records.is_library_file(__file__)
    # a package the user installed is the user's code, even one whose
    # name begins with chainer's (chainercv beside chainer)
    assert not records.is_library_file(pytest.__file__)
    beside = os.path.join(os.path.dirname(os.path.dirname(
        chainer.__file__)), 'chainercv', 'links', 'model.py')
    assert not records.is_library_file(beside)


def test_an_installed_package_inside_the_standard_library_is_users(
        monkeypatch):
    # some distributions keep site-packages under the standard library
    std = os.path.join(os.sep, 'opt', 'py', 'lib', 'python3')
    site = os.path.join(std, 'site-packages')
    paths = dict(sysconfig.get_paths(), stdlib=std, platstdlib=std,
                 purelib=site, platlib=site)
    monkeypatch.setattr(sysconfig, 'get_paths', lambda: paths)
    records.is_library_file.cache_clear()
    try:
        assert not records.is_library_file(os.path.join(site, 'm', 'x.py'))
        assert records.is_library_file(os.path.join(std, 'json', 'x.py'))
    finally:
        records.is_library_file.cache_clear()


class _Unprintable(Exception):
    def __str__(self):
        raise RuntimeError('no')


def test_error_text_never_raises():
    assert records.error_text(ValueError('bad shape')) == \
        'ValueError: bad shape'
    assert records.error_text(_Unprintable()) == \
        '_Unprintable: <unprintable _Unprintable object>'
    assert records.safe_text(3) == '3'


def test_fresh_copies_share_nothing_mutable_and_keep_types():
    inner = [1, 2]
    value = {'a': inner, 'b': (inner, 'x'), 'c': {1, 2},
             'd': collections.OrderedDict([('k', inner)]), 'e': None,
             'f': 1.5}
    got = records.fresh(value)
    assert got == value
    assert type(got['d']) is collections.OrderedDict
    assert type(got['b']) is tuple
    assert got['a'] is not inner and got['b'][0] is not inner
    assert got['c'] is not value['c']
    assert got['d']['k'] is not inner
    inner.append(3)
    assert got['a'] == [1, 2] and got['b'][0] == [1, 2]


def test_a_report_mapping_copies_its_entries_once():
    source = {'a': {'flops': 1}, 'b': [1]}
    d = FreshDict(source)
    entry = d['a']
    assert entry == {'flops': 1} and entry is not source['a']
    # the user's edits of what was read stay in the user's mapping
    entry['flops'] = 5
    assert d['a'] == {'flops': 5} and d['a'] is entry
    # but never reach the source nor another mapping of it
    assert source['a'] == {'flops': 1}
    assert FreshDict(source)['a'] == {'flops': 1}


def test_an_entry_set_is_given_back_as_set():
    d = FreshDict({'a': 1})
    mine = [1, 2]
    d['x'] = mine
    assert d['x'] is mine
    assert d.setdefault('y', mine) is mine and d['y'] is mine


def test_every_way_of_reading_a_report_mapping_copies():
    source = {'a': [1], 'b': [2]}
    d = FreshDict(source)
    assert d.get('a') == [1] and d.get('a') is not source['a']
    assert d.get('z', 7) == 7
    assert [v is source[k] for k, v in FreshDict(source).items()] == [
        False, False]
    assert [v is source['a'] for v in FreshDict(source).values()] == [
        False, False]
    plain = FreshDict(source).copy()
    assert type(plain) is dict and plain['a'] is not source['a']
    assert dict(FreshDict(source))['b'] is not source['b']
    assert copy.deepcopy(FreshDict(source)) == source
    assert json.loads(json.dumps(FreshDict(source))) == source
    back = pickle.loads(pickle.dumps(FreshDict(source)))
    assert back == source and type(back) is dict
    assert FreshDict(source).setdefault('a') is not source['a']


def test_popping_a_report_mapping():
    source = {'a': [1], 'b': [2], 'c': [3]}
    d = FreshDict(source)
    a = d.pop('a')
    assert a == [1] and a is not source['a'] and list(d) == ['b', 'c']
    assert d.pop('zz', None) is None
    with pytest.raises(KeyError):
        d.pop('zz')
    key, value = d.popitem()
    assert (key, value) == ('c', [3]) and value is not source['c']
    assert list(d) == ['b']
    assert source == {'a': [1], 'b': [2], 'c': [3]}
    d.popitem()
    # empty: a KeyError, as a dict's (a StopIteration would end a loop
    # around it silently, or be a RuntimeError inside a generator)
    with pytest.raises(KeyError, match='dictionary is empty'):
        d.popitem()


def test_link_depth():
    assert [records.link_depth(p) for p in ('/', '/a', '/a/b', '/a/b/')] \
        == [0, 1, 2, 2]


def test_flat_records_pickle_and_load_as_records():
    # the form snapshots pickle: one list of 17 fields a record, grouped
    # back into Records (a 13-field record of an earlier version gets
    # None for the four memory fields)
    node, frames = _called_here()
    recs = [_record(node), _record(None, (48, 0, 16, 0))]
    flat = pickle.loads(pickle.dumps(records.flat_records(recs)))
    assert flat.n == 17 and len(flat.fields) == 34
    loaded = records.as_records(flat)
    assert [type(r) for r in loaded] == [records.Record] * 2
    assert loaded[0].stack == tuple(frames)
    assert loaded[0][:records.R_STACK] == recs[0][:records.R_STACK]
    assert (loaded[0].live, loaded[1].live, loaded[1].scratch) == (
        None, 48, 16)
