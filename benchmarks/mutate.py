"""Mutation testing: do the tests catch realistic one-line bugs?

    python benchmarks/mutate.py [--modules run.fit,collect.updates]
        [--per-module 40] [--seed N] [--timeout 120] [--list] [--verbose]

For each module (default: every one of TESTS, by its dotted name under
the package: collect.live_memory, analysis.memory, run.fit, the
projection, the aggregation, the updates, the optimizer calculators, the
extensions, the hook, the argument checks, the command line's cli.main,
cli.args and cli.output, the records, the reports, rendering, the
roofline, calibration, measure, plots, netbench's measuring and
command, and the command line's calibrate, progress bar and models) it
lists every place where a realistic one-line bug can be planted, samples
``--per-module`` of them and for each one writes the mutated module into
a copy of the package and the tests in a temporary directory (never into
the working tree), runs the module's test files there (``-x -q``, with
``PYTHONPATH`` pointing at the copy, ``--timeout`` seconds at most, or
twice what the unmutated tests took if more: a mutant that hangs counts
as caught) and counts the mutant killed when
the tests fail.  It prints each surviving mutant (line, old -> new) and,
per module, killed/total, then the overall score.

Every run draws a fresh sample: its seed comes from ``os.urandom`` and is
printed first; ``--seed N`` draws that run's sample again (to check that
a fix kills what survived).  A score is worth something only on mutants
the tests were not written against: never tune a test to one sample's
survivors, write the behaviour a user would miss (docs/contributing.md).

The bugs planted (one per mutant):

* an arithmetic operator swapped (``+``/``-``, ``*``/``/``, ``//``/``/``),
  or a term dropped (``a + b`` -> ``a``);
* a comparison loosened or flipped (``<``/``<=``, ``>``/``>=``,
  ``==``/``!=``, ``is``/``is not``, ``in``/``not in``);
* an integer constant off by one, a float constant halved;
* a condition inverted (``if c`` -> ``if not c``), ``and``/``or`` swapped,
  ``min``/``max`` swapped, ``True``/``False`` swapped;
* an accumulation that keeps only the last value (``x += y`` -> ``x = y``);
* two positional arguments of a call swapped;
* a ``return`` of another variable of the function;
* a statement deleted (an assignment or a call made for its effect).

Mutants are made on the syntax tree and written back with
``ast.unparse``: the copy's text differs from the original in layout and
comments only, and in the one mutated place.  Before the mutants, the
unmutated copy's tests must pass (else the script stops).
"""

import argparse
import ast
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = 'chainer_computational_cost'

sys.path.insert(0, os.path.join(ROOT, 'tests'))
import processes  # NOQA: E402

#: An interrupt at every line of the live-memory tracker.
INTERRUPTS = ('collect/test_live_memory_interrupts.py'
              '::test_an_interrupt_at_any_line_of_the_tracker')

#: The tests of live memory: the tracker's and its figures'.
LIVE_MEMORY = [
    'collect/test_live_memory.py',
    INTERRUPTS,
    'run/test_fit.py',
    'cost_calculators/test_scratch.py',
    'collect/test_updates.py',
    'collect/test_live_memory_peak.py',
    'run/test_projection.py',
    'core/test_devices.py',
    'run/test_hook_links.py',
    'run/test_extensions.py',
]

#: Module (dotted, under the package) -> the test files (under tests/,
#: the module's own first: tests/<folder>/test_<module>.py, or the file
#: TESTED_ELSEWHERE of tests/docs/test_structure.py names) that must
#: catch its bugs, chosen to keep a mutant's run short.
TESTS = {
    'collect.live_memory': LIVE_MEMORY,
    'analysis.memory': LIVE_MEMORY,
    'run.fit': [
        'run/test_fit.py',
        'collect/test_live_memory_peak.py',
        'collect/test_live_memory.py',
    ],
    'report.gathered': [
        'collect/test_mpi_recorder.py',
        'analysis/test_network.py',
    ],
    'collect.mpi_recorder': [
        'collect/test_mpi_recorder.py',
        'analysis/test_network.py',
    ],
    'analysis.network': [
        'analysis/test_network.py',
        'analysis/test_network_sourced_model.py',
        'core/test_devices.py',
        'collect/test_mpi_recorder.py',
    ],
    'core.devices': [
        'core/test_devices.py',
        'analysis/test_network.py',
        'analysis/test_roofline.py',
        'collect/test_mpi_recorder.py',
        'analysis/test_network_sourced_model.py',
    ],
    'run.projection': [
        'run/test_projection.py',
        'analysis/test_network.py',
        'collect/test_updates.py',
        'run/test_fit.py',
        'collect/test_live_memory_peak.py',
        'run/test_hook_fuzz.py',
    ],
    'analysis.aggregation': [
        'analysis/test_aggregation.py',
        'report/test_rendering.py',
        'run/test_hook_links.py',
        'run/test_hook_phase.py',
        'collect/test_mpi_recorder.py',
    ],
    'collect.updates': [
        'collect/test_updates.py',
        'collect/test_updates_link.py',
        'run/test_extensions.py',
        'run/test_fit.py',
    ],
    'cost_calculators.optimizer': [
        'cost_calculators/test_optimizer.py',
        'collect/test_updates.py',
        'run/test_fit.py',
    ],
    'run.extensions': [
        'run/test_extensions.py',
        'collect/test_mpi_recorder.py'
        '::test_cost_monitor_logs_each_ranks_comm_bytes',
    ],
    'cli.main': [
        'cli/test_main.py',
        'cli/test_args_pairs.py',
        'cli/test_args.py',
    ],
    'cli.args': [
        'cli/test_args.py',
        'cli/test_main.py',
        'cli/test_args_pairs.py',
    ],
    'cli.output': [
        'cli/test_output.py',
        'cli/test_main.py',
        'cli/test_args_pairs.py',
        'analysis/test_network_sourced_model.py',
    ],
    'run.hook': [
        'run/test_hook.py',
        'run/test_hook_links.py',
        'run/test_hook_phase.py',
        'run/test_hook_robustness.py',
        'run/test_hook_side_effects.py',
        'run/test_hook_clock.py',
        'collect/test_updates.py',
        'collect/test_live_memory.py',
        'collect/test_mpi_recorder.py',
        'report/test_flop_convention.py',
    ],
    'core.checks': [
        'core/test_checks.py',
        'report/test_cost_report.py',
        'cli/test_args.py',
        'analysis/test_network.py',
    ],
    'core.records': [
        'core/test_records.py',
        'run/test_hook.py',
        'report/test_rendering.py',
        'report/test_cost_report_saving.py',
        'run/test_hook_robustness.py',
        'run/test_hook_links.py',
        'collect/test_live_memory.py',
    ],
    'report.cost_report': [
        'report/test_cost_report.py',
        'report/test_rendering.py',
        'report/test_rendering_json.py',
        'run/test_hook.py',
        'analysis/test_aggregation.py',
        'analysis/test_roofline.py',
        'report/test_cost_report_saving.py',
        'run/test_hook_robustness.py',
        # a gathered report's time columns are CostReport's own
        'collect/test_mpi_recorder.py::'
        'test_a_gathered_time_report_is_the_slowest_ranks_step',
    ],
    'report.rendering': [
        'report/test_rendering.py',
        'report/test_rendering_json.py',
        'run/test_hook_robustness.py',
        'run/test_hook_links.py',
        'analysis/test_roofline.py',
        'analysis/test_calibration.py',
        'report/test_cost_report.py',
    ],
    'analysis.roofline': [
        'analysis/test_roofline.py',
        'core/test_devices.py',
        'report/test_rendering.py',
        'report/test_rendering_json.py',
        'analysis/test_network.py',
    ],
    'analysis.calibration': [
        'analysis/test_calibration.py',
        'analysis/test_roofline.py',
    ],
    'run.measure': [
        'run/test_measure.py',
        'run/test_measure_device.py',
        'analysis/test_calibration.py',
        'analysis/test_roofline.py',
    ],
    'report.plots': [
        'report/test_plots.py',
    ],
    'run.netbench': [
        'run/test_netbench.py',
        'analysis/test_network.py',
    ],
    'cli.netbench': [
        'run/test_netbench.py',
        'cli/test_netbench_memory.py',
    ],
    'cli.calibrate': [
        'cli/test_main.py',
        'analysis/test_calibration.py',
    ],
    'cli.progress': [
        'cli/test_progress.py',
        'cli/test_main.py',
        'analysis/test_calibration.py',
    ],
    'cli.models': [
        'cli/test_models_failures.py',
        'cli/test_main.py',
    ],
}


_BINOP_SWAPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div,
                ast.Div: ast.Mult, ast.FloorDiv: ast.Div}
_CMP_SWAPS = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE,
              ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
              ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn,
              ast.NotIn: ast.In}


def _docstring_ids(tree):
    """ids of the docstring expressions (never mutated)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef,
                             ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(
                    first.value, ast.Constant) and isinstance(
                    first.value.value, str):
                out.add(id(first))
    return out


def _raise_ids(tree):
    """ids of every node inside a ``raise`` (error messages: not the
    figures the tests are about)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise):
            out.update(id(n) for n in ast.walk(node))
    return out


def _function_names(func):
    """Local names assigned in ``func`` and its arguments, in order."""
    names = [a.arg for a in func.args.args + func.args.kwonlyargs]
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) \
                and node.id not in names:
            names.append(node.id)
    return names


def mutations(tree):
    """Every mutation of ``tree``: a list of ``(node path, kind, apply)``
    where ``apply(node)`` changes the node (found again by its path in a
    fresh copy of the tree) in place and returns True if it could."""
    skip = _docstring_ids(tree) | _raise_ids(tree)
    found = []

    def visit(node, path, func):
        if id(node) in skip:
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            func = node
        for kind, apply in _node_mutations(node, func):
            found.append((path, kind, apply))
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                for i, child in enumerate(value):
                    if isinstance(child, ast.AST):
                        visit(child, path + ((field, i),), func)
            elif isinstance(value, ast.AST):
                visit(value, path + ((field, None),), func)
    visit(tree, (), None)
    return found


def _set(attr, value):
    def apply(node):
        setattr(node, attr, value)
        return True
    return apply


def _node_mutations(node, func):
    out = []
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOP_SWAPS:
        new = _BINOP_SWAPS[type(node.op)]
        out.append(('operator {} -> {}'.format(
            type(node.op).__name__, new.__name__), _set('op', new())))
        if isinstance(node.op, (ast.Add, ast.Sub)):
            out.append(('term dropped', _drop_right))
    if isinstance(node, ast.AugAssign) and isinstance(
            node.op, (ast.Add, ast.Sub)):
        out.append(('accumulation keeps the last value', None))
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and \
            type(node.ops[0]) in _CMP_SWAPS:
        new = _CMP_SWAPS[type(node.ops[0])]
        out.append(('comparison {} -> {}'.format(
            type(node.ops[0]).__name__, new.__name__),
            _set('ops', [new()])))
    if isinstance(node, ast.Constant) and type(node.value) is int:
        out.append(('constant {} -> {}'.format(node.value, node.value + 1),
                    _set('value', node.value + 1)))
        if node.value > 0:
            out.append(('constant {} -> {}'.format(
                node.value, node.value - 1), _set('value', node.value - 1)))
    if isinstance(node, ast.Constant) and type(node.value) is float and \
            node.value:
        out.append(('constant {!r} halved'.format(node.value),
                    _set('value', node.value / 2)))
    if isinstance(node, ast.Constant) and type(node.value) is bool:
        out.append(('{} -> {}'.format(node.value, not node.value),
                    _set('value', not node.value)))
    if isinstance(node, (ast.If, ast.While, ast.IfExp)):
        out.append(('condition inverted', _invert_test))
    if isinstance(node, ast.BoolOp):
        new = ast.Or if isinstance(node.op, ast.And) else ast.And
        out.append(('{} -> {}'.format(type(node.op).__name__,
                                      new.__name__), _set('op', new())))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id in ('min', 'max'):
        new = 'max' if node.func.id == 'min' else 'min'
        out.append(('{} -> {}'.format(node.func.id, new),
                    lambda n, new=new: setattr(n.func, 'id', new) or True))
    if isinstance(node, ast.Call) and len(node.args) >= 2 and not any(
            isinstance(a, ast.Starred) for a in node.args[:2]):
        out.append(('arguments 1 and 2 swapped', _swap_args))
    if isinstance(node, ast.Return) and isinstance(node.value, ast.Name) \
            and func is not None:
        others = [n for n in _function_names(func) if n != node.value.id]
        if others:
            other = others[0]
            out.append(('return {} -> return {}'.format(
                node.value.id, other),
                lambda n, other=other: setattr(n.value, 'id', other) or True))
    if isinstance(node, (ast.Assign, ast.AugAssign)) or (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        out.append(('statement deleted', 'delete'))
    return [(kind, apply if apply is not None else _keep_last)
            for kind, apply in out]


def _drop_right(node):
    return 'replace', node.left


def _keep_last(node):
    return 'replace', ast.Assign(targets=[node.target], value=node.value,
                                 lineno=node.lineno)


def _invert_test(node):
    node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)
    return True


def _swap_args(node):
    a, b = node.args[0], node.args[1]
    if ast.dump(a) == ast.dump(b):
        return False  # the same expression twice: no change
    node.args[0], node.args[1] = b, a
    return True


def _resolve(tree, path):
    """(parent, field, index, node) of ``path`` in ``tree``."""
    parent, field, index, node = None, None, None, tree
    for field, index in path:
        parent = node
        value = getattr(node, field)
        node = value[index] if index is not None else value
    return parent, field, index, node


def plant(source, path, apply):
    """The source of the module with the mutation applied, or None if it
    changes nothing."""
    tree = ast.parse(source)
    parent, field, index, node = _resolve(tree, path)
    if apply == 'delete':
        new = ast.Pass()
    else:
        result = apply(node)
        if result is False:
            return None
        new = result[1] if isinstance(result, tuple) else None
    if new is not None:
        ast.copy_location(new, node)
        if index is None:
            setattr(parent, field, new)
        else:
            getattr(parent, field)[index] = new
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


def describe(source, mutated, path, kind):
    """``line N:C: <kind>: <the line>`` for the report (C: the column,
    telling apart two mutants of one line)."""
    tree = ast.parse(source)
    node = _resolve(tree, path)[3]
    line = getattr(node, 'lineno', '?')
    old = source.splitlines()[line - 1].strip() if line != '?' else ''
    return 'line {}:{}: {}: {}'.format(
        line, getattr(node, 'col_offset', '?'), kind, old)


def prepare(tmp):
    """A copy of the package, the tests and the docs in ``tmp``."""
    shutil.copytree(os.path.join(ROOT, PACKAGE), os.path.join(tmp, PACKAGE),
                    ignore=shutil.ignore_patterns('__pycache__'))
    for name in ('tests', 'docs'):  # tests read docs/*.md
        if os.path.isdir(os.path.join(ROOT, name)):
            shutil.copytree(os.path.join(ROOT, name),
                            os.path.join(tmp, name),
                            ignore=shutil.ignore_patterns('__pycache__',
                                                          '_build'))
    for name in ('setup.cfg', 'README.md', 'DETAILS.md'):
        if os.path.exists(os.path.join(ROOT, name)):
            shutil.copy(os.path.join(ROOT, name), tmp)


def run_tests(tmp, files, timeout):
    """'killed', 'survived' or 'timeout' after running ``files`` in the
    copy."""
    env = dict(os.environ, PYTHONPATH=tmp, PYTHONDONTWRITEBYTECODE='1',
               OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
    cmd = [sys.executable, '-m', 'pytest', '-x', '-q', '-p',
           'no:cacheprovider', '-W', 'ignore'] + [
        os.path.join('tests', f) for f in files]
    # The tests' own runner of a child: a session of its own, killed whole
    # at the timeout (a mutant that hangs an MPI test leaves ranks spinning
    # in an all-reduce under mpiexec, which ending pytest alone would leave
    # running).
    try:
        status, out, _ = processes.communicate(
            cmd, cwd=tmp, env=env, stderr=subprocess.STDOUT,
            timeout=timeout)
    except subprocess.TimeoutExpired:
        return 'timeout', ''
    return ('survived' if status == 0 else 'killed'), out


def module_path(root, module):
    """The file of ``module`` (dotted, under the package) in ``root``."""
    return os.path.join(root, PACKAGE, *module.split('.')) + '.py'


def test_files(module):
    """The test files (under tests/) run against ``module``'s mutants."""
    return list(TESTS[module])


def sample(tmp, module, n, seed):
    """The ``n`` mutants of ``module`` (its copy in ``tmp``) chosen with
    ``seed``: a list of (description, mutated source)."""
    path = module_path(tmp, module)
    with open(path) as f:
        source = f.read()
    found = mutations(ast.parse(source))
    order = list(range(len(found)))
    random.Random('{}:{}'.format(seed, module)).shuffle(order)
    chosen = []
    for i in order:
        if n is not None and len(chosen) >= n:
            break
        tree_path, kind, apply = found[i]
        mutated = plant(source, tree_path, apply)
        if mutated is None or mutated == ast.unparse(ast.parse(source)):
            continue
        chosen.append((describe(source, mutated, tree_path, kind), mutated))
    return source, chosen, len(found)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--modules', default=','.join(TESTS),
                        help='comma-separated, from: ' + ', '.join(TESTS))
    parser.add_argument('--per-module', type=int, default=40,
                        help='mutants per module (0: all)')
    parser.add_argument('--seed', default=None,
                        help='the seed of an earlier run, to draw its '
                        'sample again (default: a fresh one)')
    parser.add_argument('--timeout', type=float, default=120,
                        help='seconds per mutant')
    parser.add_argument('--list', action='store_true',
                        help='list the sampled mutants, run nothing')
    parser.add_argument('--verbose', action='store_true')
    args = parser.parse_args(argv)
    modules = [m.strip() for m in args.modules.split(',') if m.strip()]
    unknown = [m for m in modules if m not in TESTS]
    if unknown:
        parser.error('unknown module(s) {}; choose from {}'.format(
            unknown, ', '.join(TESTS)))
    n = args.per_module or None
    seed = args.seed
    if seed is None:
        seed = str(int.from_bytes(os.urandom(4), 'big'))
    print('seed {} (--seed {} draws this sample again)'.format(seed, seed),
          flush=True)
    scores = {}
    with tempfile.TemporaryDirectory(prefix='mutate-') as tmp:
        prepare(tmp)
        for module in modules:
            source, chosen, n_sites = sample(tmp, module, n, seed)
            files = test_files(module)
            print('{}: {} mutants of {} sites; tests: {}'.format(
                module, len(chosen), n_sites, ' '.join(files)), flush=True)
            if args.list:
                for desc, _ in chosen:
                    print('  ' + desc)
                continue
            target = module_path(tmp, module)
            # The unmutated module, as ast.unparse writes it, must pass.
            with open(target, 'w') as f:
                f.write(ast.unparse(ast.parse(source)))
            start = time.time()
            status, out = run_tests(tmp, files, args.timeout * 3)
            if status != 'survived':
                print(out[-3000:])
                sys.exit('{}: the tests fail without a mutant ({})'.format(
                    module, status))
            # On a loaded machine a mutant is not a hang for being slow:
            # at least twice what the unmutated tests took.
            timeout = max(args.timeout, 2 * (time.time() - start))
            killed = 0
            for desc, mutated in chosen:
                with open(target, 'w') as f:
                    f.write(mutated)
                start = time.time()
                status, out = run_tests(tmp, files, timeout)
                if status != 'survived':
                    killed += 1
                if status == 'survived' or args.verbose:
                    print('  {:8s} {} ({:.0f} s)'.format(
                        status, desc, time.time() - start), flush=True)
            with open(target, 'w') as f:
                f.write(source)
            scores[module] = (killed, len(chosen))
            print('{}: {}/{} killed'.format(module, killed, len(chosen)),
                  flush=True)
    if args.list:
        return
    total_killed = sum(k for k, _ in scores.values())
    total = sum(t for _, t in scores.values())
    print()
    for module, (k, t) in scores.items():
        print('{:28s} {:3d}/{:3d}  {:5.1f} %'.format(
            module, k, t, 100.0 * k / t if t else 0.0))
    print('{:28s} {:3d}/{:3d}  {:5.1f} %  (seed {})'.format(
        'overall', total_killed, total,
        100.0 * total_killed / total if total else 0.0, seed))


if __name__ == '__main__':
    main()
