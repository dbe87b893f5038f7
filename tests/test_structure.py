"""The package's layering: no import cycle between its modules, and each
concern in the module named after it (report.py reads, rendering.py
renders)."""

import ast
import os

import chainer_computational_cost

PACKAGE = 'chainer_computational_cost'
ROOT = os.path.dirname(os.path.abspath(chainer_computational_cost.__file__))


def _modules():
    """Module name -> path of every module of the package (the calculators'
    subpackage included)."""
    out = {}
    for directory, _, files in os.walk(ROOT):
        for f in files:
            if not f.endswith('.py'):
                continue
            path = os.path.join(directory, f)
            parts = os.path.relpath(path, ROOT)[:-3].split(os.sep)
            if parts[-1] == '__init__':
                parts = parts[:-1]
            out['.'.join([PACKAGE] + parts)] = path
    return out


def _imported(tree, name, modules):
    """The package modules a module's code imports, at module level or in
    a function: ``from package import module`` imports that module,
    ``from package import name`` the package (its ``__init__``)."""
    here = name if modules[name].endswith('__init__.py') else \
        name.rsplit('.', 1)[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                parts = here.split('.')
                parts = parts[:len(parts) - node.level + 1]
                base = '.'.join(parts + ([base] if base else []))
            targets = [base + '.' + a.name
                       if base + '.' + a.name in modules else base
                       for a in node.names]
        else:
            continue
        found.update(t for t in targets if t in modules and t != name)
    return found


def _graph():
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        with open(path, encoding='utf-8') as f:
            tree = ast.parse(f.read(), path)
        graph[name] = _imported(tree, name, modules)
    return graph


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


def _short(name):
    return name[len(PACKAGE) + 1:] or '__init__'


def test_the_graph_sees_the_imports_it_must_see():
    # A graph that missed imports would find no cycle trivially.
    graph = {_short(k): {_short(m) for m in v} for k, v in _graph().items()}
    assert {'columns', 'records', 'rendering', 'aggregation', 'memory',
            'network', 'plots', 'roofline'} <= graph['report']
    assert graph['columns'] == set()
    assert graph['records'] == set()
    assert graph['rendering'] == {'columns', 'records'}
    assert 'report' not in graph['plots'] | graph['memory']
    assert 'mn' in graph['computational_cost_hook']  # a function's import
    assert '__init__' in graph['__main__']  # the hook, from the package
    # The Trainer extension runs the hook: it sits above it.
    assert {'computational_cost_hook', 'mn', 'roofline'} <= \
        graph['extensions']


def test_no_import_cycle():
    cycle = _cycle(_graph())
    assert cycle is None, 'import cycle: ' + ' -> '.join(map(_short, cycle))


def test_cycle_finder_finds_a_planted_cycle():
    graph = {'a': {'b'}, 'b': {'c'}, 'c': {'a'}, 'd': set()}
    assert _cycle(graph) == ['a', 'b', 'c', 'a']
    assert _cycle({'a': {'b'}, 'b': set()}) is None


def _defined(module):
    with open(os.path.join(ROOT, module), encoding='utf-8') as f:
        tree = ast.parse(f.read())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets
                         if isinstance(t, ast.Name))
    return names


def test_report_holds_no_rendering():
    rendering_names = [n for n in _defined('report.py')
                       if n.startswith(('render', '_render', 'table_cells'))
                       or n in ('_formatter', '_header', '_TITLES',
                                '_number', '_scaled', '_json_value',
                                '_column_prefixes', '_indented')
                       or n.startswith('check_')]
    assert rendering_names == []
    # ... and they are where their name says.
    assert {'render', 'render_csv', 'render_md', 'render_table',
            'render_json', '_formatter', '_header', 'check_columns',
            '_indented'} <= _defined('rendering.py')
    assert {'total_report', 'layer_report', 'summary_report',
            'phase_report', 'link_report'} <= _defined('aggregation.py')


def test_docs_list_every_module_above_what_it_imports():
    # docs/contributing.md "Where the code lives": a reader trusts the
    # table's order.
    page = os.path.join(os.path.dirname(ROOT), 'docs', 'contributing.md')
    with open(page, encoding='utf-8') as f:
        text = f.read()
    section = text.split('## Where the code lives', 1)[1]
    order = []
    table = section.split('\n\n', 2)[2].split('\n\n', 1)[0]
    for line in table.splitlines()[2:]:
        for cell in line.split('|')[1].split(','):
            order.append(cell.strip().strip('`').replace('.py', '')
                         .rstrip('/'))
    graph = {_short(k): {_short(m) for m in v} for k, v in _graph().items()}
    modules = {k for k in graph if '.' not in k and k != '__init__'}
    assert sorted(order) == sorted(modules)
    for module in order:
        for imported in graph[module]:
            imported = imported.split('.')[0]
            if imported != '__init__':
                assert order.index(imported) > order.index(module), (
                    module, imported)
