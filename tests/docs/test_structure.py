"""The package's layout: folders by role along the data flow, each on one
floor, imports one way, no cycle, no module using another's private names,
and each decision in exactly one home (docs/contributing.md draws it)."""

import ast
import os
import re

import chainer_computational_cost
from chainer_computational_cost.core.records import Record

PACKAGE = 'chainer_computational_cost'
ROOT = os.path.dirname(os.path.abspath(chainer_computational_cost.__file__))
#: The tests' folder.
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: The folders from the ground up: a module imports from its own folder
#: and the folders before it, never from one after it.
FLOORS = ('core', 'cost_calculators', 'collect', 'analysis', 'report', 'run',
          'cli')

#: The modules of the package's top folder: the public names (the
#: package's ``__init__``, ''), ``python -m`` (``__main__``), and the old
#: module paths (``compat``, which imports no module of the package by
#: name: any may use it).  Only the command line, the top floor, imports
#: the package's public names.
TOP = ('', '__main__', 'compat')


def _modules():
    """Module name (below the package, '' for the package) -> path."""
    out = {}
    for directory, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith('.py'):
                path = os.path.join(directory, f)
                parts = os.path.relpath(path, ROOT)[:-3].split(os.sep)
                if parts[-1] == '__init__':
                    parts = parts[:-1]
                out['.'.join(parts)] = path
    return out


def _tree(path):
    with open(path, encoding='utf-8') as f:
        return ast.parse(f.read(), path)


def _imported(tree, name, modules):
    """The package modules ``tree`` imports (at module level or in a
    function): ``from package.a import b`` imports the module ``a.b`` if
    there is one, else ``a``."""
    here = name if modules[name].endswith('__init__.py') else \
        name.rpartition('.')[0]
    found = set()

    def short(target):
        if target == PACKAGE or target.startswith(PACKAGE + '.'):
            target = target[len(PACKAGE) + 1:]
            return target if target in modules else None
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(short(a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                parts = ([PACKAGE] + here.split('.')) if here else [PACKAGE]
                parts = parts[:len(parts) - node.level + 1]
                base = '.'.join(parts + ([base] if base else []))
            for a in node.names:
                module = short(base + '.' + a.name)
                found.add(module if module is not None else short(base))
    found.discard(None)
    found.discard(name)
    return found


def _graph():
    modules = _modules()
    return {name: _imported(_tree(path), name, modules)
            for name, path in modules.items()}


def _folder(module):
    return module.split('.')[0] if '.' in module or module in FLOORS \
        else None


def _cycle(graph):
    """One import cycle as a list of modules, or None."""
    state = {}

    def visit(node, path):
        state[node] = 'open'
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 'open':
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path)
                if found:
                    return found
        path.pop()
        state[node] = 'done'
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


def test_every_module_is_in_a_floor_or_on_top():
    for module in _modules():
        assert _folder(module) in FLOORS or module in TOP, module
    assert {_folder(m) for m in _modules()} - {None} == set(FLOORS)


def _upward(graph):
    """The imports of ``graph`` that go up the floors."""
    bad = []
    for module, imported in graph.items():
        floor = _folder(module)
        if floor is None:
            continue
        for other in imported:
            if other == 'compat' or (other == '' and floor == 'cli'):
                continue
            below = _folder(other)
            if below is None or FLOORS.index(below) > FLOORS.index(floor):
                bad.append('{} imports {}'.format(module, other or PACKAGE))
    return bad


def test_imports_go_down_the_floors():
    assert _upward(_graph()) == []


def test_the_floor_check_finds_a_planted_upward_import():
    assert _upward({'core.records': {'report.rendering', 'core.columns'},
                    'analysis.memory': {'core.records', 'compat'},
                    'run.fit': {''}}) == [
        'core.records imports report.rendering',
        'run.fit imports chainer_computational_cost']


def test_the_graph_sees_the_imports_it_must_see():
    # A graph that missed imports would pass the floors trivially.
    graph = _graph()
    assert {'report.rendering', 'analysis.aggregation', 'analysis.roofline',
            'core.columns'} <= graph['report.cost_report']
    assert graph['core.columns'] == set()
    assert 'collect.mpi_recorder' in graph['run.hook']  # in a function
    assert 'run.hook' in graph['run.extensions']
    assert 'cli.main' in graph['__main__']


def test_no_import_cycle():
    cycle = _cycle(_graph())
    assert cycle is None, 'import cycle: ' + ' -> '.join(cycle)


def test_cycle_finder_finds_a_planted_cycle():
    graph = {'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': set()}
    assert _cycle(graph) == ['a', 'b', 'c', 'a']
    assert _cycle({'a': {'b'}, 'b': set()}) is None


def _private_uses(tree, name, modules):
    """``module._name`` and ``from module import _name`` of another package
    module, and ``obj._method`` where ``_method`` is defined in a class of
    another module only."""
    out = []
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or '').startswith(
                PACKAGE):
            for a in node.names:
                if a.name.startswith('_') and not a.name.startswith('__'):
                    out.append('{} imports {}.{}'.format(
                        name, node.module, a.name))
                full = node.module + '.' + a.name
                if full[len(PACKAGE) + 1:] in modules:
                    aliases[a.asname or a.name] = full
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith('_') \
                and not node.attr.startswith('__') \
                and isinstance(node.value, ast.Name) \
                and node.value.id in aliases:
            out.append('{} uses {}.{}'.format(name, node.value.id, node.attr))
    return out


def _methods_by_module():
    """Module -> the underscore names its classes define."""
    out = {}
    for name, path in _modules().items():
        names = set()
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef,
                                         ast.AsyncFunctionDef)):
                        names.add(item.name)
        out[name] = {n for n in names
                     if n.startswith('_') and not n.startswith('__')}
    return out


def _foreign_method_calls(tree, name, methods):
    """``x._m(...)`` with x not self/cls and _m defined in another module's
    class but in none of this module's."""
    own = methods[name]
    elsewhere = set().union(*(v for k, v in methods.items() if k != name))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(
                node.func, ast.Attribute):
            attr = node.func.attr
            target = node.func.value
            if attr in elsewhere and attr not in own and not (
                    isinstance(target, ast.Name) and
                    target.id in ('self', 'cls')) and not (
                    isinstance(target, ast.Call) and
                    getattr(target.func, 'id', None) == 'super'):
                out.append('{} calls .{}()'.format(name, attr))
    return out


def test_no_module_uses_another_modules_private_names():
    modules = _modules()
    methods = _methods_by_module()
    found = []
    for name, path in modules.items():
        if name.startswith('cost_calculators'):
            continue  # reads Chainer's private helpers, not ours
        tree = _tree(path)
        found += _private_uses(tree, name, modules)
        found += _foreign_method_calls(tree, name, methods)
    assert found == []


def test_the_private_check_finds_a_planted_use():
    modules = {'a': '', 'b': ''}
    tree = ast.parse('from chainer_computational_cost import a\n'
                     'a._secret()\n'
                     'from chainer_computational_cost.a import _x\n')
    assert len(_private_uses(tree, 'b', modules)) == 2
    tree = ast.parse('hook._records()\nself._records()\n')
    methods = {'b': set(), 'c': {'_records'}}
    assert _foreign_method_calls(tree, 'b', methods) == [
        'b calls ._records()']


def _source(module):
    with open(_modules()[module], encoding='utf-8') as f:
        return f.read()


def _homes(pattern):
    """The modules whose code matches ``pattern`` (a regular expression)."""
    return sorted(m for m in _modules() if re.search(pattern, _source(m),
                                                     re.M))


def test_each_decision_has_one_home():
    # the presets: devices, their memory capacities, networks
    assert _homes(r'^(DEVICES|CAPACITIES|NETWORKS) = ') == ['core.devices']
    # argument checks: "an int, and not a bool" is tested once
    assert _homes(r'isinstance\(\w+, bool\) or not isinstance') == [
        'core.checks']
    assert _homes(r'^def (is_int|integer|number|positive|one_of)\(') == [
        'core.checks']
    # which calculator costs a function class
    assert _homes(r'for \w+ in cls\.__mro__') == ['cost_calculators']
    # (asked by the hook, the Trainer extension, and the command line's
    # progress, which counts the calls a report will hold)
    assert _homes(r'calculator_for\(') == [
        'cli.progress', 'cost_calculators', 'run.extensions', 'run.hook']
    # argument parsing: one parser class, every command's parser built
    # beside it
    assert _homes(r'argparse\.ArgumentParser|CommandParser\(') == [
        'cli.args']
    # progress shown while a command runs
    assert _homes(r'^(class \w*Progress\w*\(|def progress_bar\()') == [
        'cli.progress']


def test_the_home_check_finds_a_second_home():
    # _homes reads the modules' text: a pattern every module has is found
    # everywhere, one no module has nowhere.
    assert len(_homes(r'^import|^from|^"""')) == len(_modules())
    assert _homes(r'^NO MODULE HAS THIS LINE$') == []


def test_docs_draw_the_floors_in_order():
    page = os.path.join(os.path.dirname(ROOT), 'docs', 'contributing.md')
    with open(page, encoding='utf-8') as f:
        text = f.read()
    drawn = re.findall(r'^\s*(\w+)/\s', text.split('```', 2)[1], re.M)
    assert tuple(f for f in drawn if f in FLOORS) == FLOORS[::-1]


#: The modules that may name a record's fields by their ``R_*`` index:
#: their home, and the hook, whose flat list of fields (one list for every
#: call) has the same layout.
RECORD_INDEX_HOMES = ('core.records', 'run.hook')


def _record_indices(tree, name):
    """``name``'s uses of the ``R_*`` indices of a record's fields (an
    import, a name or ``records.R_x``), which read a record by position."""
    indices = {'R_' + f.upper() for f in Record._fields}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found = node.id
        elif isinstance(node, ast.Attribute):
            found = node.attr
        elif isinstance(node, ast.alias):
            found = node.name
        else:
            continue
        if found in indices:
            out.append('{}:{} {}'.format(name, node.lineno, found))
    return out


def test_records_are_read_by_field_name():
    found = []
    for name, path in _modules().items():
        if name not in RECORD_INDEX_HOMES:
            found += _record_indices(_tree(path), name)
    assert found == []


def test_the_field_check_finds_a_planted_index():
    tree = ast.parse('from chainer_computational_cost.core.records import '
                     'R_FLOPS\n'
                     'x = r[R_FLOPS] + r[records.R_LIVE]\n'
                     'y = r.flops + R_FLOPSY\n')
    assert [f.split(' ')[1] for f in _record_indices(tree, 'a')] == [
        'R_FLOPS', 'R_FLOPS', 'R_LIVE']


#: The modules whose tests are not in their own file (see
#: :func:`_own_tests`), and the test file that has them: each is tested
#: through the module that runs it or the command that uses it.
TESTED_ELSEWHERE = {
    '': 'docs/test_packaging.py',
    '__main__': 'cli/test_main.py',
    'compat': 'docs/test_compat.py',
    'report': 'docs/test_compat.py',
    'analysis.memory': 'collect/test_live_memory.py',
    'report.gathered': 'collect/test_mpi_recorder.py',
    'core.columns': 'report/test_rendering.py',
    'core.affine': 'cost_calculators/test_properties.py',
    'cli.calibrate': 'cli/test_main.py',
    'cost_calculators': 'cost_calculators/test_registry.py',
    'cost_calculators.chainermn': 'collect/test_mpi_recorder.py',
    'cost_calculators.cost_calculators': 'cost_calculators/test_registry.py',
}


def _own_tests(name):
    """The test files named after module ``name`` (``a.b``):
    ``tests/a/test_b.py`` and its parts, ``tests/a/test_b_*.py``."""
    folder, _, module = name.rpartition('.')
    where = os.path.join(TESTS, *folder.split('.')) if folder else TESTS
    if not os.path.isdir(where) or not module:
        return []
    return [f for f in os.listdir(where)
            if f == 'test_{}.py'.format(module)
            or f.startswith('test_{}_'.format(module))]


def _has_code(path):
    """Whether the module at ``path`` holds more than its docstring (a
    folder's ``__init__`` that only says what the folder is has nothing
    to test)."""
    body = _tree(path).body
    if body and isinstance(body[0], ast.Expr) and isinstance(
            getattr(body[0], 'value', None), ast.Constant):
        body = body[1:]
    return bool(body)


def _untested(modules, elsewhere):
    """The modules of ``modules`` (name -> path) with code but neither
    their own test file nor an existing one in ``elsewhere``."""
    return sorted(
        name for name, path in modules.items()
        if (not os.path.exists(path) or _has_code(path))
        and not _own_tests(name) and not (
            name in elsewhere and os.path.isfile(os.path.join(
                TESTS, elsewhere[name]))))


def test_every_module_has_its_tests_where_the_layout_says():
    # tests/<folder>/test_<module>.py, or the file TESTED_ELSEWHERE names
    assert _untested(_modules(), TESTED_ELSEWHERE) == []
    # and nothing listed there that has its own file
    assert sorted(name for name in TESTED_ELSEWHERE
                  if _own_tests(name)) == []


def test_the_tests_check_finds_a_module_without_tests():
    modules = dict(_modules(), **{'core.nowhere': 'x.py'})
    assert _untested(modules, TESTED_ELSEWHERE) == ['core.nowhere']
    assert _untested(modules, dict(TESTED_ELSEWHERE, **{
        'core.nowhere': 'core/test_no_such_file.py'})) == ['core.nowhere']
