"""Property cases of the gradient classes of ``chainer.functions.rnn`` (see
``property_cases`` for the markers and the Spec).

Each callable runs the cell on Variables and takes the gradients of some
of its outputs (``chainer.grad`` with gradients of ones), so that the
target gradient class is applied exactly once; the outputs left out reach
the gradient node as None.
"""

import chainer
import chainer.functions as F
import numpy as np

from property_cases import B
from property_cases import case
from property_cases import Spec
from property_cases import var


def _grad_of(outputs, inputs, which):
    """Gradients of the outputs named in ``which`` ('c', 'h' or both)."""
    c, h = outputs
    ys = [y for key, y in (('c', c), ('h', h)) if key in which]
    chainer.grad(ys, inputs, [np.ones_like(y.array) for y in ys])


@case('LSTMGrad')
def _lstm_grad(d, n):
    units = d.int(1, 3)
    which = d.pick(['ch', 'c', 'h'])

    def f(c, x):
        inputs = [var(c), var(x)]
        _grad_of(F.lstm(*inputs), inputs, which)
    return Spec(f, [B(d.u(n, units)), B(d.u(n, 4 * units))])


@case('SLSTMGrad')
def _slstm_grad(d, n):
    units = d.int(1, 3)
    which = d.pick(['ch', 'c', 'h'])

    def f(c1, c2, x1, x2):
        inputs = [var(c1), var(c2), var(x1), var(x2)]
        _grad_of(F.slstm(*inputs), inputs, which)
    return Spec(f, [B(d.u(n, units)), B(d.u(n, units)),
                    B(d.u(n, 4 * units)), B(d.u(n, 4 * units))])
