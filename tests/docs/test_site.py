"""The manual as a reader gets it: the site ``make docs`` builds, read as
HTML. It must work offline (no script or style sheet from elsewhere, math
rendered by a MathJax copied into the site), show options as they are
typed, and set every block of output apart from the code before it.

The site is built once (about a minute), by Sphinx with the options of
``make docs``: warnings are errors.
"""

import glob
import importlib
import os
import re
import struct
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, 'docs')

pytestmark = pytest.mark.slow


@pytest.fixture(scope='module')
def site(tmp_path_factory):
    """The directory of the built site."""
    for module in ('sphinx', 'myst_parser', 'furo', 'sphinxarg',
                   'sphinx-mathjax-offline'):
        try:
            importlib.import_module(module)
        except ImportError:
            pytest.skip('the [docs] extra is not installed ({})'.format(
                module))
    out = str(tmp_path_factory.mktemp('html'))
    proc = subprocess.run(
        [sys.executable, '-m', 'sphinx', '-W', '--keep-going', '-n', '-q',
         '-b', 'html', DOCS, out], cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, universal_newlines=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return out


def _pages(site):
    return sorted(glob.glob(os.path.join(site, '*.html')))


def _read(path):
    with open(path, encoding='utf-8') as f:
        return f.read()


def test_options_are_shown_as_typed(site):
    html = _read(os.path.join(site, 'cli_reference.html'))
    assert '<kbd>--train</kbd>' in html
    # an en dash (or an em dash) where '--' was typed
    assert re.findall(r'[\u2013\u2014][a-z]', html) == []
    # group titles are short headings; their explanation is text
    assert re.search(r'<h2>reports<a ', html)
    assert 'Every report given is printed: --fit, --memory' in html


MATH = re.compile(r'<(span|div) class="math[^"]*">.*?</\1>', re.S)


def test_math_renders_offline(site):
    with_math = 0
    for page in _pages(site):
        html = _read(page)
        # \( ... \) outside a math element is shown raw: MathJax only
        # typesets the math elements
        assert '\\(' not in MATH.sub('', html), os.path.basename(page)
        if MATH.search(html):
            with_math += 1
            # one notation for the element count: |x|, never a norm ||x||
            assert not [m.group(0) for m in MATH.finditer(html)
                        if '\\|' in m.group(0)], os.path.basename(page)
            src, = re.findall(r'<script[^>]* src="([^"]*mathjax[^"]*)"',
                              html)
            assert os.path.isfile(os.path.join(site, src)), src
    assert with_math >= 1  # the per-function formulas


EXTERNAL = re.compile(r'^(https?:)?//')


def test_no_script_or_style_sheet_from_elsewhere(site):
    for page in _pages(site):
        html = _read(page)
        sources = re.findall(r'<script[^>]* src="([^"]*)"', html) + \
            re.findall(r'<link[^>]* href="([^"]*)"[^>]*>', html)
        links = [s for s in sources if EXTERNAL.match(s)]
        assert links == [], os.path.basename(page)
    for sheet in glob.glob(os.path.join(site, '_static', '**', '*.css'),
                           recursive=True):
        css = _read(sheet)
        assert not re.search(r'@import|url\(["\']?(https?:)?//', css), sheet


def _output_markers(name):
    with open(os.path.join(DOCS, name[:-len('.html')] + '.md'),
              encoding='utf-8') as f:
        return len(re.findall(r'^<!-- output', f.read(), re.M))


def test_every_output_is_set_apart_from_its_code(site):
    marked = 0
    for page in _pages(site):
        html = _read(page)
        name = os.path.basename(page)
        # Each output the page marks: its comment is followed by the block
        # or table, which carries the class the style sheet labels.
        after = re.findall(r'<!-- output[^>]*-->\s*<(\w+) class="([^"]*)"',
                           html)
        for tag, classes in after:
            assert 'output' in classes.split(), (name, tag, classes)
        if os.path.exists(os.path.join(DOCS, name[:-5] + '.md')):
            assert len(after) == _output_markers(name), name
        marked += len(after)
    assert marked >= 20
    css = _read(os.path.join(site, '_static', 'manual.css'))
    assert 'content: "Output"' in css and 'content: "Python"' in css


def test_sidebar_title_breaks_only_between_words(site):
    html = _read(os.path.join(site, 'index.html'))
    assert '<span class="sidebar-brand-text">chainer_<wbr>computational_' \
        '<wbr>cost</span>' in html


def test_the_index_does_not_repeat_the_sidebar(site):
    html = _read(os.path.join(site, 'index.html'))
    article = html[html.index('<article'):html.index('</article>')]
    # the toctrees are hidden: the sidebar lists the pages, the page's
    # own text links to them
    assert 'toctree-l1' not in article


def _png_size(path):
    with open(path, 'rb') as f:
        head = f.read(24)
    assert head[:8] == b'\x89PNG\r\n\x1a\n'
    return struct.unpack('>II', head[16:24])


@pytest.mark.parametrize('name', ['memory_resnet50.png',
                                  'roofline_resnet50_gtx1080ti.png',
                                  'summary_resnet50.png'])
def test_figures_are_sharp_on_a_laptop(name):
    # twice the ~700 pixels the page's column shows them at
    width, height = _png_size(os.path.join(DOCS, name))
    assert width >= 1300, (width, height)


def test_a_file_to_save_is_captioned_with_its_name(site):
    # the command line guide's models.py, which its shell examples import
    html = _read(os.path.join(site, 'cli.html'))
    assert re.search(r'<div class="code-block-caption"><span '
                     r'class="caption-text">models.py</span>', html)


def test_the_reference_shows_options_as_help_prints_them(site):
    html = _read(os.path.join(site, 'cli_reference.html'))
    # each option with the placeholder of its argument
    assert '<kbd>--fit DEVICE</kbd>' in html
    assert '<kbd>--links [DEPTH]</kbd>' in html
    assert '<kbd>--out FILE</kbd>' in html  # calibrate's
    # a help string is text: its asterisk is one, not an emphasis
    assert 'a network file (*.json) from netbench' in html
    # defaults as the help says them, typed; no Python value beside them
    assert '(default 1,3,224,224)' in html
    assert '(1, 3, 224, 224)' not in html and 'Default:' not in html


def test_no_page_shows_a_markup_error(site):
    for page in _pages(site):
        assert 'class="problematic"' not in _read(page), \
            os.path.basename(page)


def _conf():
    spec = importlib.util.spec_from_file_location(
        'manual_conf', os.path.join(DOCS, 'conf.py'))
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    return conf


def test_a_markup_error_outside_sphinx_s_log_is_a_warning(caplog):
    # Text parsed in a document of its own (sphinx-argparse's help
    # strings): docutils reports its errors to its stream, not to
    # Sphinx's log, and -W let them pass.
    import io

    pytest.importorskip('sphinx', reason='the [docs] extra is not '
                        'installed')

    from docutils.core import publish_doctree
    stream = io.StringIO()
    doctree = publish_doctree('a network file (*.json) from netbench\n',
                              settings_overrides={'warning_stream': stream})
    assert 'Inline emphasis start-string' in stream.getvalue()
    transform = _conf()._markup_errors()(doctree)
    with caplog.at_level('WARNING'):
        transform.apply()
    assert [r.getMessage() for r in caplog.records] == [
        'markup error: <string>:1: (WARNING/2) Inline emphasis '
        'start-string without end-string.']


def test_help_text_is_escaped_as_typed():
    pytest.importorskip('sphinx', reason='the [docs] extra is not '
                        'installed')
    conf = _conf()
    assert conf._as_text('(*.json), a_b, `x`, a|b') == \
        '(\\*.json), a\\_b, \\`x\\`, a\\|b'
    from docutils.core import publish_doctree
    text = 'a (*.json) b_ `c` d|e \\f'
    assert publish_doctree(conf._as_text(text)).astext() == text
