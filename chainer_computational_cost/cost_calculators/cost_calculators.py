"""0.1.2's module path of the calculator registry, kept for code that
imports it: ``from chainer_computational_cost.cost_calculators.cost_calculators
import calculators, register, check_signature``."""

from chainer_computational_cost.cost_calculators import calculators  # NOQA
from chainer_computational_cost.cost_calculators import check_signature  # NOQA
from chainer_computational_cost.cost_calculators import register  # NOQA
