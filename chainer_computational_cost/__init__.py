"""Theoretical computational cost of Chainer forward passes, per layer."""

from chainer_computational_cost.calibration import Calibration  # NOQA
from chainer_computational_cost.columns import LinkColumns  # NOQA
from chainer_computational_cost.columns import PhaseColumns  # NOQA
from chainer_computational_cost.columns import ReportColumns  # NOQA
from chainer_computational_cost.columns import SummaryColumns  # NOQA
from chainer_computational_cost.columns import TimeColumns  # NOQA
from chainer_computational_cost.computational_cost_hook import ComputationalCostHook  # NOQA
from chainer_computational_cost.extensions import CostMonitor  # NOQA
from chainer_computational_cost.fit import fit_batch  # NOQA
from chainer_computational_cost.measure import calibrate  # NOQA
from chainer_computational_cost.projection import project_batch  # NOQA
from chainer_computational_cost.projection import Projection  # NOQA
from chainer_computational_cost.records import ReportWarning  # NOQA
from chainer_computational_cost.roofline import RooflineColumns  # NOQA

__version__ = '0.2.0'

__all__ = ['Calibration', 'ComputationalCostHook', 'CostMonitor',
           'LinkColumns',
           'PhaseColumns',
           'Projection', 'ReportColumns', 'ReportWarning', 'RooflineColumns',
           'SummaryColumns', 'TimeColumns', 'calibrate', 'fit_batch',
           'project_batch']
