"""``calibrate``: measure this machine and save a calibration for
``--predict-time`` and ``CostReport.time_report``::

    python -m chainer_computational_cost calibrate --out cpu.json --clock cpu
"""

import sys
import time
import warnings

from chainer_computational_cost.cli.args import build_calibrate_parser
from chainer_computational_cost.cli.args import cannot_write
from chainer_computational_cost.cli.args import check_calibrate_args
from chainer_computational_cost.cli.args import on_this_rank
from chainer_computational_cost.cli.args import say
from chainer_computational_cost.cli.args import WRITE_ERRORS
from chainer_computational_cost.cli.args import WRITE_FAILED_STATUS
from chainer_computational_cost.cli.args import write_out
from chainer_computational_cost.cli.models import CommandError
from chainer_computational_cost.cli.progress import progress_bar
from chainer_computational_cost.core.records import ReportWarning
from chainer_computational_cost.run.measure import calibrate


def calibrate_command(argv, ost):
    """``calibrate --out FILE [--seconds S] [--clock wall|cpu] [--seed
    N]``: measure this machine and save the calibration, with a progress
    bar on stderr; its summary on ``ost``."""
    args = build_calibrate_parser().parse_args(argv)
    # Checked before minutes of measuring.
    check_calibrate_args(args)
    started = time.time()
    try:
        with warnings.catch_warnings():
            # said once, after the summary, as the command's warning line
            warnings.simplefilter('ignore', ReportWarning)
            found = calibrate(seconds=args.seconds, clock=args.clock,
                              seed=args.seed,
                              progress=progress_bar(sys.stderr))
    except ValueError as e:
        with on_this_rank():  # this machine's measures
            raise CommandError(str(e))
    try:
        found.save(args.out)
    except WRITE_ERRORS as e:  # found writable, then not
        say(cannot_write(args.out, e))
        return WRITE_FAILED_STATUS
    error = found.error
    status = write_out(ost, 'calibrated {} in {:.0f} s: {} probe runs, '
                       'held-out error {} (inference), {} (training); saved '
                       'to {}\n'.format(
                           found.info.get('device'), time.time() - started,
                           error.get('n_probes'),
                           _percent(error.get('inference')),
                           _percent(error.get('training')), args.out),
                       'the summary')
    untrusted = found.untrusted()
    if untrusted is not None:
        say('warning: ' + untrusted)
    return status


def _percent(x):
    return 'n/a' if x is None else '{:.0%}'.format(x)
