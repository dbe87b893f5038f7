"""Sphinx configuration of the chainer_computational_cost manual.

Build with ``make docs`` (warnings are errors).  The pages are MyST
Markdown; the API reference comes from the docstrings, the command line's
reference from its parser (``_cli_args.build_parser``).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

project = 'chainer_computational_cost'
author = 'the chainer_computational_cost authors'
copyright = 'the chainer_computational_cost authors, MIT licence'
release = '0.2.0'

extensions = [
    'myst_parser',
    'sphinx.ext.autodoc',
    'sphinxarg.ext',
]

source_suffix = {'.md': 'markdown'}
root_doc = 'index'
# Other helpers' drafts wait in _incoming until they are folded in; the
# build's own output and the figures' script are not pages either.
exclude_patterns = ['_build', '_incoming', 'Thumbs.db', '.DS_Store']

myst_enable_extensions = ['dollarmath', 'colon_fence']
# Pages link to each other's sections by their GitHub-style anchors.
myst_heading_anchors = 4

autodoc_member_order = 'bysource'
autodoc_typehints = 'none'

html_theme = 'furo'
html_title = 'chainer_computational_cost'
