"""What reads and prints: the reading API (:class:`CostReport`, shared by
the hook, its snapshots, projections and the gathered report of ChainerMN
ranks), rendering to text, and plots."""

from chainer_computational_cost import compat
from chainer_computational_cost.report.cost_report import CostReport
from chainer_computational_cost.report.cost_report import ReportSnapshot

__all__ = ['CostReport', 'ReportSnapshot']


def __getattr__(name):
    # the other names of the module this folder replaced (0.2.0's report)
    return compat.old_name(compat.REPORT_PARTS, name, __name__)
