"""Theoretical computational cost of Chainer forward passes, per layer."""

# first: the old module paths (compat) resolve from here on
from chainer_computational_cost import compat  # NOQA

from chainer_computational_cost.analysis.calibration import Calibration  # NOQA
from chainer_computational_cost.core.columns import LinkColumns  # NOQA
from chainer_computational_cost.core.columns import PhaseColumns  # NOQA
from chainer_computational_cost.core.columns import ReportColumns  # NOQA
from chainer_computational_cost.core.columns import RooflineColumns  # NOQA
from chainer_computational_cost.core.columns import SummaryColumns  # NOQA
from chainer_computational_cost.core.columns import TimeColumns  # NOQA
from chainer_computational_cost.run.hook import ComputationalCostHook  # NOQA
from chainer_computational_cost.run.extensions import CostMonitor  # NOQA
from chainer_computational_cost.run.fit import fit_batch  # NOQA
from chainer_computational_cost.run.measure import calibrate  # NOQA
from chainer_computational_cost.run.projection import project_batch  # NOQA
from chainer_computational_cost.run.projection import Projection  # NOQA
from chainer_computational_cost.core.records import ReportWarning  # NOQA

__version__ = '0.3.0'

__all__ = ['Calibration', 'ComputationalCostHook', 'CostMonitor',
           'LinkColumns',
           'PhaseColumns',
           'Projection', 'ReportColumns', 'ReportWarning', 'RooflineColumns',
           'SummaryColumns', 'TimeColumns', 'calibrate', 'fit_batch',
           'project_batch']
