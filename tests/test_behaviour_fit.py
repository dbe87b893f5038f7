"""fit_batch as a user reads it: what its answer counts, in words and
bytes (worked by hand; see benchmarks/mutate.py for how this file is
used)."""

import chainer.functions as F
import numpy

from chainer_computational_cost import fit_batch


def _relu(n):
    F.relu(numpy.ones((n, 4), numpy.float32))  # 16n bytes, the peak


def test_a_margin_is_counted_in_bytes_and_named_as_given():
    # a quarter of 1000 bytes kept back: 250, leaving 750 for the step:
    # 16 * 46 = 736 <= 750 < 16 * 47 = 752; a margin in bytes stays so
    f = fit_batch(_relu, capacity=1000, optimizer='sgd', margin=0.25,
                  check_answer=False)
    assert f['batch_size'] == 46
    assert f['counted'][-1] == 'a margin of 250 bytes (0.25)'
    f = fit_batch(_relu, capacity=1000, optimizer='sgd', margin=100,
                  check_answer=False)  # 900: 16 * 56 = 896
    assert (f['batch_size'], f['counted'][-1]) == (
        56, 'a margin of 100 bytes (100)')
