"""The one piece of arithmetic batch projection rests on: the line through
the first two of three points, checked against the third.

Exact on integers (no float rounding): costs and bytes are counts.  Both
:mod:`~chainer_computational_cost.run.projection` (costs) and
:mod:`~chainer_computational_cost.analysis.memory` (live bytes) use it; it
imports nothing.
"""


def affine(values, batches, target):
    """The value at ``target`` of the line through the first two points,
    or None if the third is not on it."""
    (n1, n2, n3), (v1, v2, v3) = batches, values
    step, rest = divmod(v2 - v1, n2 - n1)
    if rest or v1 + step * (n3 - n1) != v3:
        return None
    return v1 + step * (target - n1)
