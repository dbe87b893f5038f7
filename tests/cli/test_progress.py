"""The status line of cli.progress, written to a literal stream."""

import io

from chainer_computational_cost.cli.progress import Progress


def test_a_status_line_is_erased_once():
    # 'batch 1' shown while the run lasts, then erased with as many
    # blanks between two returns; erasing again writes nothing (each
    # write of the model's own output erases first: blanks before every
    # line it printed were a mutant's)
    stream = io.StringIO()
    progress = Progress(stream)
    with progress.running('batch 1'):
        pass
    progress.clear()
    assert stream.getvalue() == '\rbatch 1' + '\r       \r'
