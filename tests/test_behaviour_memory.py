"""Live memory as a user sees it (see benchmarks/mutate.py for how this
file is used): figures worked by hand, and what the hook must never do to
the user's run."""

import weakref

import chainer
import chainer.functions as F
import numpy

from chainer_computational_cost import ComputationalCostHook


class _DropsAMask(chainer.FunctionNode):
    """Doubles its input; its backward makes a mask outside any call,
    makes a call while holding it (so the hook reads the backward's
    locals), then drops it: ``freed`` says whether the mask was freed at
    once."""

    def __init__(self, freed):
        self.freed = freed

    def forward(self, inputs):
        x, = inputs
        return x * 2,

    def backward(self, indexes, grad_outputs):
        gy, = grad_outputs
        mask = numpy.ones(gy.shape, numpy.float32)
        gx = F.identity(gy * 2)
        dropped = weakref.ref(mask)
        del mask
        self.freed.append(dropped() is None)
        return gx,


def _drops_a_mask_costs(func, in_data, **kwargs):
    return 0, 0, 0, {}


def test_an_array_a_backward_drops_is_freed_at_once():
    # the hook reads the frames of a backward to find arrays it made
    # outside calls: reading them must not keep those arrays alive
    freed = []
    x = chainer.Variable(numpy.ones((2, 3), numpy.float32))
    with ComputationalCostHook(memory=True) as h:
        h.add_custom_cost_calculator(_DropsAMask, _drops_a_mask_costs)
        y = _DropsAMask(freed).apply((x,))[0]
        F.sum(y).backward()
    assert freed == [True]
