"""Cost calculators for ``chainer.functions.activation``."""

from chainer.functions.activation.relu import ReLU


def calc_relu(func: ReLU, in_data, **kwargs):
    r"""ReLU

    $$y = \max(0, x)$$

    One comparison per element.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $\|x\|$ |
    | mread | $\|x\|$ |
    | mwrite | $\|x\|$ |
    | params | none |
    """
    x, = in_data
    return (x.size, x.size, x.size, {})
