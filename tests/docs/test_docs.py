"""The manual: every example of README.md and docs/*.md runs and prints
what its page shows; every public name has an API entry.

A page marks its blocks with MyST comments on the lines right before them:

- ``<!-- continues -->`` before a Python block: it runs in the namespace
  the page's previous Python block left (which may itself continue).
  Every other Python block runs in a fresh namespace, so a block that
  lacks an import fails.
- ``<!-- output -->`` before a fenced block or a markdown table: what the
  Python or shell block before it prints (several such parts follow on,
  in order), as a terminal shows it (a shell block's stdout and stderr
  together; the erase codes of Chainer's PrintReport left out).
  A line ``...`` (or a table row of ``...`` cells) stands for any number
  of lines; every other line must be printed exactly, figures included.
  A warning is shown as ``<Category>: <message>`` where it is given.
  A block that prints must show it.
- ``<!-- output: figures vary -->``: the same, for output whose figures
  change from run to run (measured times): every number may differ, the
  rest must be printed exactly.
- A ``sh`` block without a marker is run by bash, in a directory of the
  page's own where the venv's ``python`` comes first on the PATH, after
  the page's ``<!-- file: NAME -->`` blocks above it are written there
  (a ``python`` block so marked is a file the reader saves, not run).
- ``<!-- run: mpiexec -n 2 -->`` before a ``py`` block: the test writes it
  to a file and runs it under the venv's mpiexec; its outputs are marked
  ``<!-- output: rank R -->`` with what rank R prints.
- ``<!-- not run: <reason> -->`` before a block of commands (``sh``): the
  tests cannot run it, and say why.

The site built from these pages is checked by tests/docs/test_site.py.
"""

import importlib
import inspect
import json
import os
import re
import subprocess
import sys

import pytest

import chainer_computational_cost
from processes import communicate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, 'docs')
PAGES = ['README.md'] + sorted(
    os.path.join('docs', name) for name in os.listdir(DOCS)
    if name.endswith('.md'))
MPIEXEC = os.path.join(os.path.dirname(sys.executable), 'mpiexec')

FENCE = re.compile(r'^(`{3,})(\S*)')
MARKER = re.compile(r'^<!-- (.*?) -->$')
ELLIPSIS_ROW = re.compile(r'^(\|\.\.\.)+\|$')


class Block(object):
    """A code block of a page, with the markers before it and the output
    parts the page shows after it."""

    def __init__(self, page, line, lang, code, markers):
        self.page = page
        self.line = line
        self.lang = lang
        self.code = code
        self.markers = markers
        self.outputs = []  # (marker, lines)
        files = [m[len('file: '):] for m in markers
                 if m.startswith('file: ')]
        #: The name a reader saves this block under (None: not a file).
        self.file = files[0] if files else None

    def __repr__(self):
        return '{}:{} ({})'.format(self.page, self.line, self.lang)


def _markers_before(lines, i):
    markers = []
    j = i - 1
    while j >= 0 and MARKER.match(lines[j]):
        markers.insert(0, MARKER.match(lines[j]).group(1))
        j -= 1
    return markers


def parse(page):
    """The page's code blocks, each with its markers and output parts."""
    with open(os.path.join(ROOT, page), encoding='utf-8') as f:
        lines = f.read().split('\n')
    blocks = []
    last_code = None
    i = 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        markers = _markers_before(lines, i)
        output = [m for m in markers if m.startswith('output')]
        if fence:
            end = i + 1
            while not lines[end].startswith(fence.group(1)):
                end += 1
            body = lines[i + 1:end]
            if output:
                assert last_code is not None, (page, i + 1)
                last_code.outputs.append((output[0], body))
            else:
                block = Block(page, i + 1, fence.group(2), '\n'.join(body),
                              markers)
                blocks.append(block)
                # (a command not run is not what an output shows: the
                # MPI pages show how to run the script above it)
                if block.lang in ('python', 'py') and not block.file or \
                        block.lang == 'sh' and not block.markers:
                    last_code = block
            i = end + 1
            continue
        if output and lines[i].startswith('|'):
            end = i
            while end < len(lines) and lines[end].startswith('|'):
                end += 1
            assert last_code is not None, (page, i + 1)
            last_code.outputs.append((output[0], lines[i:end]))
            i = end
            continue
        i += 1
    return blocks


def all_blocks():
    return [b for page in PAGES for b in parse(page)]


def python_blocks(pages=PAGES):
    """The Python blocks that run (not the files a reader saves)."""
    return [b for page in pages for b in parse(page)
            if b.lang == 'python' and b.file is None]


def matches(pattern, actual):
    """Whether the printed lines ``actual`` are what ``pattern`` shows, a
    line ``...`` standing for any number of lines."""
    pattern = ['...' if ELLIPSIS_ROW.match(p) else p.rstrip()
               for p in pattern]
    actual = [a.rstrip() for a in actual]

    def match(p, a):
        if p == len(pattern):
            return a == len(actual)
        if pattern[p] == '...':
            return any(match(p + 1, k) for k in range(a, len(actual) + 1))
        return (a < len(actual) and pattern[p] == actual[a]
                and match(p + 1, a + 1))
    return match(0, 0)


#: The marker of output whose figures change from run to run.
VARYING = 'output: figures vary'
NUMBER = re.compile(r'[-+]?\d+(\.\d+)?(e[-+]?\d+)?')


def _expected(block, marker='output'):
    lines = []
    for m, part in block.outputs:
        if m == marker or (marker == 'output' and m == VARYING):
            lines += part
    return lines


def _without_figures(lines):
    """Lines with every number as '#' and runs of spaces as one (a
    column's width follows its figures)."""
    return [' '.join(NUMBER.sub('#', line).split()) for line in lines]


def _check_printed(block, printed):
    expected = _expected(block)
    assert expected or not printed, (
        '{!r} prints, but the page does not show it:\n{}'.format(
            block, printed))
    assert any(line.strip() not in ('', '...') for line in expected) or \
        not expected, '{!r}: an output of only "..."'.format(block)
    actual = printed.split('\n')[:-1]
    if any(m == VARYING for m, _ in block.outputs):
        expected, actual = _without_figures(expected), \
            _without_figures(actual)
    assert matches(expected, actual), (
        '{!r} printed\n{}\nbut the page shows\n{}'.format(
            block, printed, '\n'.join(expected)))


def _as_on_a_terminal(text):
    """``text`` as a terminal shows it: Chainer's PrintReport writes an
    erase code (ESC [J) before each line, which a terminal does not
    show."""
    return text.replace('\033[J', '')


def _pages_with(lang):
    return [page for page in PAGES
            if any(b.lang == lang for b in parse(page))]


# The pages show what Chainer 7.8.1 prints (Chainer 6 names some classes
# differently: MaxPooling2D for MaxPoolingND).  A page a test: the pages
# run in parallel under pytest-xdist.
@pytest.mark.slow
@pytest.mark.chainer7_only
@pytest.mark.parametrize('page', _pages_with('python'))
def test_every_python_example_prints_what_its_page_shows(tmp_path, page):
    blocks = python_blocks([page])
    printed = _run_page(blocks, tmp_path)
    assert len(printed) == len(blocks)
    for block, text in zip(blocks, printed):
        _check_printed(block, text)


#: Runs a page's Python blocks as a script would (its own process, the
#: real stdout: what Chainer's PrintReport writes to by default), a block
#: that does not continue in a fresh namespace; a line of SEPARATOR after
#: each block's output.
DRIVER = '''
import json, linecache, sys, warnings

def show(message, category, filename, lineno, file=None, line=None):
    sys.stdout.write('{}: {}\\n'.format(category.__name__, message))

# ReportWarning is a UserWarning: each is shown, once per hook
warnings.simplefilter('always', UserWarning)
warnings.showwarning = show
namespace = None
for name, code, continues in json.load(sys.stdin):
    if not continues or namespace is None:
        namespace = {'__name__': '__docs__'}
    # a traceback shows the block's lines, as a script's would
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    exec(compile(code, name, 'exec'), namespace)
    sys.stdout.write(%r)
    sys.stdout.flush()
'''
SEPARATOR = '\x00 end of block\n'


def _example_env(**env):
    """The environment of an example's process: the checkout importable,
    Python's output buffered as in a terminal session (unbuffered, print
    writes its text and its newline apart, and mpiexec's rank prefix can
    land in the middle of a line)."""
    environ = dict(os.environ, PYTHONPATH=ROOT + os.pathsep
                   + os.environ.get('PYTHONPATH', ''), **env)
    environ.pop('PYTHONUNBUFFERED', None)
    return environ


def _run_page(blocks, cwd):
    """What each of ``blocks`` prints, run in order by one Python process
    in ``cwd`` (the files examples write go there)."""
    script = json.dumps([('{}:{}'.format(b.page, b.line), b.code,
                          'continues' in b.markers) for b in blocks])
    status, out, err = communicate(
        [sys.executable, '-c', DRIVER % SEPARATOR], cwd, _example_env(),
        stdin=script)
    assert status == 0, err[-3000:]
    return [_as_on_a_terminal(part)
            for part in out.split(SEPARATOR)[:-1]]


def test_the_pages_have_python_examples():
    assert len(python_blocks()) >= 15


def _shell_blocks(page):
    """The page's blocks that shell examples need, in order: the files
    to save and the commands to run."""
    return [b for b in parse(page)
            if b.file is not None or (b.lang == 'sh' and not b.markers)]


def _run_shell(block, cwd):
    """What ``block``'s commands print, stdout and stderr together, run
    by bash in ``cwd`` with the venv first on the PATH; the commands and
    whatever they started are killed if the test fails or times out."""
    env = _example_env(COLUMNS='80', PATH=os.path.dirname(sys.executable)
                       + os.pathsep + os.environ.get('PATH', ''))
    _, out, _ = communicate(['bash', '-c', block.code], cwd, env,
                            stderr=subprocess.STDOUT)
    # A command that runs 10 s writes progress lines to a log; on a
    # terminal, where the reader runs it, that is a status line erased as
    # it ends.
    return ''.join(line for line in out.splitlines(True)
                   if not PROGRESS.match(line))


#: A progress line of the command line in a log (_cli_progress.py).
PROGRESS = re.compile(r'^.*: (\d+ calls so far, \d+ s|done, \d+ calls in '
                      r'\d+\.\d s)$')


@pytest.mark.slow
@pytest.mark.chainer7_only
@pytest.mark.parametrize('page', [p for p in PAGES if any(
    b.lang == 'sh' for b in _shell_blocks(p))])
def test_every_shell_example_prints_what_its_page_shows(tmp_path, page):
    for block in _shell_blocks(page):
        if block.file is not None:
            (tmp_path / block.file).write_text(block.code + '\n')
        else:
            _check_printed(block, _run_shell(block, tmp_path))


def _mpi_blocks():
    return [b for b in all_blocks() if b.lang == 'py']


@pytest.mark.slow
@pytest.mark.chainer7_only
@pytest.mark.parametrize('block', _mpi_blocks(), ids=repr)
def test_mpi_example_prints_what_its_page_shows(tmp_path, block):
    assert 'run: mpiexec -n 2' in block.markers, block
    if not os.path.exists(MPIEXEC):
        pytest.skip('no mpiexec beside ' + sys.executable)
    script = tmp_path / 'example.py'
    script.write_text(block.code)
    env = _example_env(OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
    status, out, err = communicate(
        [MPIEXEC, '-prepend-rank', '-n', '2', sys.executable, str(script)],
        tmp_path, env, timeout=300)
    assert status == 0, err[-3000:]
    for rank in (0, 1):
        prefix = '[{}] '.format(rank)
        printed = [line[len(prefix):] for line in out.splitlines()
                   if line.startswith(prefix)]
        expected = _expected(block, 'output: rank {}'.format(rank))
        assert expected and matches(expected, printed), (
            'rank {} printed\n{}\nbut the page shows\n{}'.format(
                rank, '\n'.join(printed), '\n'.join(expected)))


def test_every_block_is_run_or_says_why_not():
    for block in all_blocks():
        if block.lang == 'python':
            assert block.markers in ([], ['continues']) or \
                block.file is not None and len(block.markers) == 1, block
        elif block.lang == 'py':
            assert block.markers == ['run: mpiexec -n 2'], block
        elif block.lang == 'sh':
            # run, or not run with a reason
            assert not block.markers or len(block.markers) == 1 and \
                block.markers[0].startswith('not run: '), (
                    '{!r}: commands the tests do not run need '
                    '<!-- not run: reason -->'.format(block))
        elif block.lang in ('console', 'bash'):
            assert False, '{!r}: write commands as sh blocks'.format(block)
        else:
            # text (signatures, error lines) and the Sphinx directives
            assert block.lang == 'text' or block.lang.startswith('{'), block


def test_every_python_block_is_self_contained():
    # A fresh namespace is what makes a missing import fail; a block that
    # continues says so, and only a block of its own page.
    previous = None
    fresh = 0
    for block in python_blocks():
        if 'continues' in block.markers:
            assert previous is not None and previous.page == block.page, (
                '{!r} continues a block of another page'.format(block))
        else:
            fresh += 1
        previous = block
    assert fresh >= 12


def test_the_matcher():
    assert matches(['a', '...', 'd'], ['a', 'b', 'c', 'd'])
    assert matches(['a', '|...|...|', 'd'], ['a', 'd'])
    assert not matches(['a', 'd'], ['a', 'b', 'd'])
    assert not matches(['a', '...'], ['b'])
    assert not matches(['|1|2.0|'], ['|1|2.01|'])


def test_a_block_without_its_import_fails(tmp_path):
    # The quick start's block without `import numpy as np`: np is
    # undefined in a fresh namespace.
    block = [b for b in parse('docs/custom.md') if b.lang == 'python'][0]
    assert 'import numpy as np\n' in block.code
    broken = Block(block.page, block.line, 'python',
                   block.code.replace('import numpy as np\n', ''), [])
    with pytest.raises(AssertionError, match="NameError: name 'np'"):
        _run_page([broken], tmp_path)


# The API reference

#: The package's modules that users import from, besides the package
#: itself, or whose objects the reading API hands out. The modules below
#: the reading API are documented whole (automodule), the calculators'
#: modules by DETAILS.md.
#: The modules the API page documents: every module of the package's
#: folders but the command line's (documented by docs/cli_reference.md)
#: and the calculators' submodules (their docstrings are DETAILS.md).
MODULES = sorted(
    '{}.{}'.format(folder, name[:-3])
    for folder in ('run', 'report', 'analysis', 'collect', 'core')
    for name in os.listdir(os.path.join(os.path.dirname(
        chainer_computational_cost.__file__), folder))
    if name.endswith('.py') and name != '__init__.py') + [
        'cost_calculators']


def _public_names():
    package = importlib.import_module('chainer_computational_cost')
    names = ['chainer_computational_cost.' + n for n in package.__all__]
    for short in MODULES:
        module = importlib.import_module('chainer_computational_cost.'
                                         + short)
        for name, value in vars(module).items():
            if name.startswith('_') or not (inspect.isclass(value)
                                            or inspect.isfunction(value)):
                continue
            if value.__module__ != module.__name__:
                continue  # imported, documented where it is defined
            names.append(module.__name__ + '.' + name)
    return names


def _api_directives():
    with open(os.path.join(DOCS, 'api.md')) as f:
        text = f.read()
    entries = re.findall(r'^\.\. auto(\w+):: (\S+)((?:\n   :.*)*)', text,
                         re.M)
    documented, whole = set(), {}
    for kind, target, options in entries:
        if kind == 'module':
            if ':members:' in options:
                excluded = re.search(r':exclude-members: (.*)', options)
                whole[target] = set() if excluded is None else {
                    n.strip() for n in excluded.group(1).split(',')}
        else:
            documented.add(target)
    return documented, whole


def test_every_public_name_has_an_api_entry_and_a_docstring():
    documented, whole = _api_directives()
    package = importlib.import_module('chainer_computational_cost')
    missing = []
    for full in _public_names():
        module, name = full.rsplit('.', 1)
        value = getattr(importlib.import_module(module), name)
        assert inspect.getdoc(value), full + ' has no docstring'
        if full in documented:
            continue
        if module in whole and name not in whole[module]:
            continue
        # a name the package re-exports is documented at the package
        if name in package.__all__ and \
                'chainer_computational_cost.' + name in documented:
            continue
        missing.append(full)
    assert missing == []


def test_the_api_check_sees_a_missing_entry():
    documented, whole = _api_directives()
    assert 'chainer_computational_cost.ComputationalCostHook' in documented
    assert whole['chainer_computational_cost.analysis.calibration'] == {
        'Calibration'}
    assert 'chainer_computational_cost.core.devices.Device' in \
        _public_names()
    assert 'chainer_computational_cost.cost_calculators.register' in \
        _public_names()


def test_every_page_is_in_a_toctree():
    with open(os.path.join(DOCS, 'index.md')) as f:
        index = f.read()
    listed = set(re.findall(r'^(\w+)$', index, re.M))
    pages = {name[:-3] for name in os.listdir(DOCS)
             if name.endswith('.md') and name != 'index.md'}
    assert pages <= listed, pages - listed


# What a newcomer trips on

#: A line of a ``text`` block that is code to run, not a signature, an
#: error line or output: an import, a ``with`` block, an assignment from
#: a call, a call on its own line.
CODE_LINE = re.compile(r'^(import \w|from [\w.]+ import |with .*:$|\w+ = .*\(|'
                       r'\w+(\.\w+)*\(.*\)$)')


def test_code_is_fenced_as_python_and_run():
    # Code fenced as text is never run: nothing checks that its names
    # (model, x, optimizer...) are defined or that it still works.
    for page in PAGES:
        for block in parse(page):
            if block.lang == 'text':
                code = [line for line in block.code.split('\n')
                        if CODE_LINE.match(line)]
                assert code == [], (block, code)


def _user_guide():
    with open(os.path.join(DOCS, 'index.md'), encoding='utf-8') as f:
        index = f.read()
    toctree = re.search(r':caption: User guide\n(?::.*\n)*\n((?:\w+\n)+)',
                        index)
    return toctree.group(1).split()


def test_every_user_guide_page_has_an_example_the_tests_run():
    guide = _user_guide()
    assert 'predicted_time' in guide and len(guide) >= 10
    for name in guide:
        page = os.path.join('docs', name + '.md')
        run = [b for b in parse(page)
               if b.lang == 'python' and b.file is None
               or b.lang == 'sh' and not b.markers or b.lang == 'py']
        assert run, page


def test_a_training_step_clears_its_gradients():
    # Copied into a loop, a step without cleargrads() adds each new
    # gradient to the last: the report shows Add calls, and the update
    # follows the sum.
    for block in all_blocks():
        if block.lang in ('python', 'py', 'text') and \
                re.search(r'\boptimizer\.update\(\)', block.code):
            assert 'cleargrads()' in block.code, block


#: A link of the README to a page of the manual, its text and its page.
README_LINK = re.compile(r'\[([^\]]+)\]\((docs/\w+\.md|DETAILS\.md)\)')


def _title(page):
    with open(os.path.join(ROOT, page), encoding='utf-8') as f:
        first = f.readline()
    assert first.startswith('# '), page
    return first[2:].strip()


def test_the_readme_names_each_page_by_its_title():
    # One name per page: the README's list, the page's title and the
    # sidebar (which shows the title) agree, so a reader who scans the
    # sidebar for "ChainerMN" or "memory" finds the page the README named.
    with open(os.path.join(ROOT, 'README.md'), encoding='utf-8') as f:
        readme = f.read()
    links = README_LINK.findall(readme)
    manual = readme[readme.index('## The manual'):]
    listed = {page for _, page in README_LINK.findall(manual)}
    pages = {os.path.join('docs', name) for name in os.listdir(DOCS)
             if name.endswith('.md') and name not in ('index.md',
                                                      'details.md')}
    assert listed == pages | {'DETAILS.md'}
    for text, page in links:
        page = 'docs/details.md' if page == 'DETAILS.md' else page
        assert text == _title(page), (text, page)
    assert 'ChainerMN' in _title('docs/chainermn.md')
    assert 'Memory' in _title('docs/memory.md')


def test_each_script_has_its_own_name():
    # A script a page saves and runs (under mpiexec) is named on its first
    # line; two different scripts never share a name.
    names = {}
    for block in _mpi_blocks():
        first = block.code.split('\n')[0]
        assert re.match(r'^# \w+\.py$', first), block
        assert first not in names, (block, names.get(first))
        names[first] = block


def test_output_is_shown_as_the_program_prints_it():
    # A report in markdown mode prints pipe text: a page of the manual
    # shows that text, fenced, not the table a browser renders from it.
    for page in PAGES[1:]:
        with open(os.path.join(ROOT, page), encoding='utf-8') as f:
            lines = f.read().split('\n')
        for i, line in enumerate(lines[:-1]):
            if line.startswith(OUTPUT_MARKER):
                assert not lines[i + 1].startswith('|'), (page, i + 2)


#: The comment before an output (docs/conf.py's OUTPUT_MARKER).
OUTPUT_MARKER = '<!-- output'


#: How a page says which FLOP convention its figures use.
FLOP_CONVENTION = re.compile(r'multiply-add\s+(as|being|counts as)\s+(1|one)'
                             r'\s+FLOP')


def test_a_page_showing_flops_says_how_it_counts_them():
    # The hook and the command line count a multiply-add as 1 FLOP by
    # default, CostMonitor (and a device's peak) as 2: a figure means
    # nothing without its convention.
    for page in PAGES[1:]:
        shown = [line for block in parse(page) for _, lines in block.outputs
                 for line in lines]
        if any('FLOP' in line for line in shown):
            with open(os.path.join(ROOT, page), encoding='utf-8') as f:
                assert FLOP_CONVENTION.search(f.read()), page
