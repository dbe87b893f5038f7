"""Sphinx configuration of the chainer_computational_cost manual.

Build with ``make docs`` (warnings are errors, every one: see
_MarkupErrors).  The pages are MyST Markdown; the API reference comes from
the docstrings, the command line's reference from its parsers (the
``{argparse}`` directive, shown as ``--help`` prints them: see
_ReferenceDirective).
"""

import argparse
import importlib
import os
import re
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

project = 'chainer_computational_cost'
author = 'the chainer_computational_cost authors'
copyright = 'the chainer_computational_cost authors, MIT licence'
release = '0.3.0'

extensions = [
    'myst_parser',
    'sphinx.ext.autodoc',
    # The docstrings' Args: and Returns: sections (Google style).
    'sphinx.ext.napoleon',
    'sphinxarg.ext',
    # MathJax copied into the site (the [docs] extra installs it): the
    # per-function formulas render offline, with no script from a CDN.
    'sphinx-mathjax-offline',
]

source_suffix = {'.md': 'markdown'}
root_doc = 'index'
# The build's own output is not a page.
exclude_patterns = ['_build', 'Thumbs.db', '.DS_Store']

myst_enable_extensions = ['dollarmath', 'colon_fence']
# Pages link to each other's sections by their GitHub-style anchors.
myst_heading_anchors = 4

autodoc_member_order = 'bysource'
autodoc_typehints = 'none'

html_theme = 'furo'
html_title = 'chainer_computational_cost'
# Code and its output told apart (docs/_static/manual.css); the sidebar's
# title broken only after an underscore (_templates/sidebar/brand.html).
html_static_path = ['_static']
html_css_files = ['manual.css']
templates_path = ['_templates']
# Options are typed as written: no en dash for '--', no curly quotes.
smartquotes = False

#: The MyST comment before a block that shows what the code before it
#: prints (tests/docs/test_docs.py reads the same comments).
OUTPUT_MARKER = '<!-- output'
#: The MyST comment before a block the reader saves as a file.
FILE_MARKER = '<!-- file: '

PACKAGE = 'chainer_computational_cost.'


def _resolve_short_name(app, env, node, contnode):
    """Resolve a docstring's short reference to the one place the manual
    documents the object.

    Docstrings name what their module imports by its short name
    (``:func:`fit_batch``` in ``fit.py``, ``:data:`OPTIMIZERS``` imported
    from ``memory``), and what the package re-exports is documented once,
    at the package.  A reference that matches exactly one documented
    object of the package by its last component goes there (of several,
    the one the referring module itself holds under that name); anything
    else stays unresolved, and nitpicky mode reports it.
    """
    if node.get('refdomain') != 'py':
        return None
    name = node['reftarget'].rsplit('.', 1)[-1]
    domain = env.domains['py']
    found = [full for full in domain.objects
             if full.startswith(PACKAGE) and full.endswith('.' + name)]
    if len(found) > 1:
        # The one the referring module holds under that name.
        held = getattr(sys.modules.get(node.get('py:module') or ''), name,
                       None)
        found = [full for full in found if held is not None
                 and getattr(sys.modules.get(full.rsplit('.', 1)[0]), name,
                             None) is held]
    if len(found) != 1:
        return None
    return domain.resolve_xref(env, node['refdoc'], app.builder,
                               node['reftype'], found[0], node, contnode)


def _mark_outputs(app, doctree):
    """Give the class ``output`` to each block or table that a page marks
    as output (``<!-- output -->`` right before it), so that the style
    sheet shows it apart from code, labelled; give a block the reader
    saves as a file (``<!-- file: NAME -->``) NAME as its caption."""
    from docutils import nodes
    for raw in list(doctree.findall(nodes.raw)):
        marker = raw.astext().strip().split('\n')[-1]
        parent = raw.parent
        index = parent.index(raw)
        if index + 1 == len(parent):
            continue
        block = parent[index + 1]
        if marker.startswith(OUTPUT_MARKER) and isinstance(
                block, (nodes.literal_block, nodes.table)):
            block['classes'].append('output')
        elif marker.startswith(FILE_MARKER) and isinstance(
                block, nodes.literal_block):
            name = marker[len(FILE_MARKER):-len('-->')].strip()
            wrapper = nodes.container('', literal_block=True,
                                      classes=['literal-block-wrapper'])
            parent.replace(block, wrapper)
            wrapper += nodes.caption('', '', nodes.Text(name))
            wrapper += block
            doctree.set_id(wrapper)  # a caption's permalink needs one


def _one_bar_notation(app, doctree):
    """Write the element count of an array as |x| in every formula.

    The calculators' docstrings escape the bars (``$\\|x\\|$``) so that
    a markdown table keeps its cells; in a table the escape is removed
    before the formula is read, in prose it reaches MathJax, which draws a
    norm (double bars).  One notation: single bars everywhere.
    """
    from docutils import nodes
    for node in list(doctree.findall(
            lambda n: isinstance(n, (nodes.math, nodes.math_block)))):
        text = node.astext()
        if '\\|' in text:
            node.replace(node[0], nodes.Text(text.replace('\\|', '|')))


#: A character reStructuredText reads as markup in a line of text.
_RST_SPECIAL = re.compile(r'([\\`*_|])')


def _as_text(text):
    """``text`` (a help string: plain text, as --help prints it) escaped so
    that reStructuredText shows it as written: ``(*.json)`` is an
    asterisk, not the start of an emphasis."""
    return None if text is None else _RST_SPECIAL.sub(r'\\\1', text)


def _invocations(parser):
    """Option strings as sphinx-argparse shows them (``-o, --out``) -> as
    ``--help`` shows them, with the placeholder of their argument
    (``-o OUT, --out OUT``, ``--links [DEPTH]``)."""
    formatter = parser._get_formatter()
    return {', '.join(action.option_strings):
            formatter._format_action_invocation(action)
            for action in parser._actions if action.option_strings}


def _reference_directive():
    """The ``{argparse}`` directive, its parser's text shown as typed.

    sphinx-argparse parses each help string as reStructuredText, in a
    document of its own whose reporter writes to stderr instead of
    Sphinx's log (so -W never sees the error), and shows an option
    without its argument (``--fit``, not ``--fit DEVICE``).  This one
    gives it a copy of the parser with its text escaped, and puts the
    arguments back.
    """
    from docutils import nodes
    from sphinxarg.ext import ArgParseDirective

    class ReferenceDirective(ArgParseDirective):
        def run(self):
            module = importlib.import_module(self.options['module'])
            parser = getattr(module, self.options['func'])()
            shown = _invocations(parser)
            for p in [parser] + [a.choices[name] for a in parser._actions
                                 if isinstance(a, argparse._SubParsersAction)
                                 for name in a.choices]:
                p.description = _as_text(p.description)
                p.epilog = _as_text(p.epilog)
                for group in p._action_groups:
                    group.description = _as_text(group.description)
                for action in p._actions:
                    action.help = _as_text(action.help)
            holder = types.ModuleType('_manual_reference_parser')
            holder.parser = parser
            sys.modules[holder.__name__] = holder
            self.options = dict(self.options, module=holder.__name__,
                                func='parser')
            try:
                result = super().run()
            finally:
                del sys.modules[holder.__name__]
            for node in [n for item in result
                         for n in item.findall(nodes.option_string)]:
                if node.astext() in shown:
                    node.replace(node[0], nodes.Text(shown[node.astext()]))
            return result

    return ReferenceDirective


def _markup_errors():
    """A transform that makes every markup error docutils found a warning
    of Sphinx's, which -W turns into a failed build.

    Sphinx logs the errors of the pages it parses, but not those of text
    an extension parses in a document of its own (sphinx-argparse's help
    strings): docutils writes those to stderr, leaves a red "problematic"
    node in the page, and the build passes.  This runs before Sphinx
    removes the messages from the doctree (FilterSystemMessages, priority
    999) and reports each one again through Sphinx (an error Sphinx
    logged already is then reported twice, in a build that fails
    anyway).
    """
    from docutils import nodes
    from sphinx.transforms import SphinxTransform
    from sphinx.util import logging

    logger = logging.getLogger('manual')

    class MarkupErrors(SphinxTransform):
        default_priority = 998

        def apply(self, **kwargs):
            reported = set()
            for message in self.document.findall(nodes.system_message):
                if message['level'] >= 2:
                    reported.update(message['ids'])
                    logger.warning('markup error: %s',
                                   message.astext().strip(),
                                   location=message.parent or message)
            for node in self.document.findall(nodes.problematic):
                if node.get('refid') not in reported:
                    logger.warning('markup error at %r', node.astext(),
                                   location=node.parent or node)

    return MarkupErrors


def setup(app):
    """Register the short-name resolver (see _resolve_short_name), the
    marking of output and file blocks (_mark_outputs), the one notation
    of the formulas (_one_bar_notation), the command line's reference as
    typed (_reference_directive) and the check that fails the build on
    any markup error (_markup_errors)."""
    app.connect('missing-reference', _resolve_short_name)
    app.connect('doctree-read', _mark_outputs)
    app.connect('doctree-read', _one_bar_notation)
    app.add_directive('argparse', _reference_directive(), override=True)
    app.add_transform(_markup_errors())
