"""The manual's Python examples run, in order, and print what it says."""

import contextlib
import io
import os
import re
import warnings

import pytest

ROOT = os.path.join(os.path.dirname(__file__), os.pardir)
# The pages whose examples share one namespace, in the order the README
# had them before it became the manual.
PAGES = ['quickstart', 'reports', 'training', 'links', 'roofline',
         'projection', 'chainermn', 'memory', 'custom', 'contributing']


def _python_blocks():
    blocks = []
    for page in PAGES:
        path = os.path.join(ROOT, 'docs', page + '.md')
        with open(path) as f:
            text = f.read()
        blocks += [(path, b) for b in
                   re.findall(r'```python\n(.*?)```', text, re.S)]
    return blocks


@pytest.mark.slow
def test_readme_examples_run_and_print_what_they_claim():
    blocks = _python_blocks()
    assert len(blocks) >= 4
    namespace = {'__name__': 'readme'}
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter('error', UserWarning)
        # The custom-calculator example overrides a built-in on purpose.
        warnings.filterwarnings('ignore', 'overriding the built-in')
        for path, block in blocks:
            exec(compile(block, path, 'exec'), namespace)
    text = out.getvalue()
    # quick start: the seed's first and last rows
    assert '|Convolution2DFunction-1|0.087|0.001|0.012|0.013|\n' in text
    assert '|total|15.488|0.623|0.107|0.729|\n' in text
    # the values the README quotes in comments
    assert '86704128 609280 12845056\n' in text
    assert ("{'k': 3, 's': 1, 'p': 1, 'd': 1, 'groups': 1, "
            "'nobias': False}\n") in text
    assert '\n48\n' in text
    # the training step, its gradients cleared: no accumulating Add
    assert '\n231\n' in text
    # Linear(30 -> 20) at batch 8: with and without an input gradient, and
    # with the 600 + 20 additions into the fresh NaN-filled gradients
    assert '\n9740\n4940\n10360\n' in text
    # Will it fit: ResNet50's training step at batch 32, the largest batch
    # on a GTX 1080 Ti with Adam
    assert '|peak|2.823|2.417|0.406|Add-31|\n' in text
    assert '\n124\n' in text
    # the roofline of ResNet50 on a GTX 1080 Ti: its total row
    assert ('|total|3.885|0.385|9.403|fp32 vector|366.497|853.61|950.145'
            '||\n') in text
