"""Every pair of the command line's documented options, on a tiny model:
status 0 with every report asked for in the output (in the documented
order), or status 2 with one ``error:`` line and the model never built.

The expected outcome comes from the rules of docs/cli.md, written out
below (:func:`expected`), not from the command's own checks.  Each option
comes with what it needs to run (``--workers`` with ``--network``,
``--train`` and a device; ``--fit`` with ``--train``; ``--peak-flops`` with
``--bandwidth``), so that a pair is two things a user would combine.
"""

import io
import itertools
import json

import pytest

from chainer_computational_cost.report import plots
from chainer_computational_cost.cli.main import main

import cli_models

BUILT = []


def build():
    """Linear(3 -> 2), counting its builds."""
    BUILT.append(1)
    return cli_models.build_linear()


MODEL = ('test_cli_combos:build', '--shape', '4,3')

#: Option -> its arguments, with what it needs to run (PLOT is replaced by
#: a file name).
OPTIONS = {
    '--shape': ['--shape', '5,3'],
    '--dtype': ['--dtype', 'float64'],
    '--unit': ['--unit', 'raw'],
    '--mode json': ['--mode', 'json'],
    '--mode csv': ['--mode', 'csv'],
    '--n-digits': ['--n-digits', '1'],
    '--columns': ['--columns', None],  # the asked report's, see columns()
    '--no-fma': ['--no-fma'],
    '--flop-convention': ['--flop-convention', 'torch'],
    '--train': ['--train'],
    '--project': ['--project'],
    '--measure-time': ['--measure-time'],
    '--time-unit': ['--time-unit', 's'],
    '--device': ['--device', 'a100'],
    '--peak-flops': ['--peak-flops', '1e12', '--bandwidth', '1e11'],
    '--links': ['--links'],
    '--phases': ['--phases'],
    '--summary': ['--summary'],
    '--memory': ['--memory'],
    '--fit': ['--train', '--fit', '1e6'],
    '--optimizer': ['--train', '--optimizer', 'sgd'],
    '--plot-roofline': ['--device', 'a100', '--plot-roofline', 'PLOT'],
    '--plot-summary': ['--plot-summary', 'PLOT'],
    '--plot-memory': ['--plot-memory', 'PLOT'],
    '--workers': ['--train', '--device', 'a100', '--workers', '1,8',
                  '--network', 'ib-edr'],
}

#: The documented order of the reports.
ORDER = ('fit', 'memory', 'roofline', 'scaling', 'links', 'phases',
         'summary', 'layers')

#: A valid --columns value of each report.
COLUMNS = {'fit': 'name,bytes', 'memory': 'name,bytes',
           'roofline': 'name,bound', 'scaling': 'workers,t_step',
           'links': 'name,flops', 'phases': 'name,flops',
           'summary': 'type,flops', 'layers': 'name,flops'}


def reports(given):
    """The reports a run of the options ``given`` prints, in order."""
    device = bool(given & {'--device', '--peak-flops', '--plot-roofline'})
    asked = {'fit': '--fit' in given, 'memory': '--memory' in given,
             'scaling': '--workers' in given,
             'roofline': device and '--workers' not in given,
             'links': '--links' in given, 'phases': '--phases' in given,
             'summary': '--summary' in given}
    kinds = [k for k in ORDER if asked.get(k)]
    train = bool(given & {'--train', '--fit', '--optimizer', '--workers'})
    return kinds or ['summary' if train else 'layers']


def expected(given):
    """'error' or the list of reports, by docs/cli.md's rules."""
    kinds = reports(given)
    mode = 'csv' if '--mode csv' in given else 'md'
    if '--mode json' in given and '--mode csv' in given:
        # the last given wins: pairs are given in OPTIONS' order
        mode = 'csv'
    elif '--mode json' in given:
        mode = 'json'
    if {'--device', '--peak-flops'} <= given or \
            {'--plot-roofline', '--peak-flops'} <= given or \
            {'--workers', '--peak-flops'} <= given:
        return 'error'  # a device twice
    if {'--project', '--measure-time'} <= given:
        return 'error'
    timed = {'roofline', 'links', 'phases', 'summary', 'layers'}
    if '--measure-time' in given and not timed & set(kinds):
        return 'error'
    if '--time-unit' in given and '--measure-time' not in given and \
            not {'roofline', 'scaling'} & set(kinds):
        return 'error'
    flops = set(kinds) - {'fit', 'memory'} or \
        given & {'--plot-summary', '--plot-roofline'}
    if given & {'--no-fma', '--flop-convention'} and not flops:
        return 'error'
    if mode == 'csv' and len(kinds) > 1:
        return 'error'
    if '--columns' in given and len(kinds) > 1:
        return 'error'
    return kinds


def kind_of(block):
    """The report a block of md output (or a csv table) is."""
    if block.startswith('largest batch') or block.startswith('Memory at'):
        return 'fit'
    header = block.strip('|').split('\n', 1)[0].replace(',', '|').split('|')
    first = header[0]
    if first == 'Phase':
        return 'summary' if header[1:2] == ['Layer type'] else 'phases'
    named = {'Memory': 'memory', 'Workers': 'scaling', 'Link': 'links',
             'Layer type': 'summary'}
    if first in named:
        return named[first]
    roofline = {'Bound', 'Intensity FLOP/B', 'Peak used'}
    return 'roofline' if roofline & set(header) else 'layers'


def printed(text, mode, kinds):
    """The reports in the output ``text``."""
    if mode == 'json':
        doc = json.loads(text)
        if len(kinds) == 1:
            # the report's own document; the fit's holds its answer
            assert 'rows' in doc
            return ['fit'] if 'batch_size' in doc else kinds
        return list(doc)
    return [kind_of(block) for block in text.split('\n\n')]


PAIRS = list(itertools.combinations(OPTIONS, 2))


@pytest.fixture
def stub_plots(monkeypatch):
    """Plots that write a stub file: what is tested is which file is
    written, not what it shows."""
    def stub(index):
        def draw(*args, **kwargs):
            with open(args[index], 'w') as f:
                f.write('plot')
        return draw
    # the index of each function's path argument
    for name, index in (('plot_roofline', 1), ('plot_summary', 1),
                        ('plot_memory', 2)):
        monkeypatch.setattr(plots, name, stub(index))


@pytest.mark.parametrize('pair', PAIRS, ids=[' '.join(p) for p in PAIRS])
def test_pair(pair, tmp_path, stub_plots, capsys):
    given = set(pair)
    outcome = expected(given)
    argv = list(MODEL)
    paths = []
    for option in pair:
        for arg in OPTIONS[option]:
            if arg == 'PLOT':
                arg = str(tmp_path / '{}.png'.format(option[7:]))
                paths.append(arg)
            elif arg is None:
                kinds = reports(given)
                arg = COLUMNS[kinds[0]] if len(kinds) == 1 else 'name'
            argv.append(arg)
    del BUILT[:]
    out = io.StringIO()
    status = main(argv, ost=out)
    err = capsys.readouterr().err
    if outcome == 'error':
        assert (status, out.getvalue(), BUILT) == (2, '', []), err
        assert err.startswith('error: ') and err.count('\n') == 1, err
        return
    assert status == 0, err
    assert 'error' not in err
    mode = 'json' if '--mode json' in given and '--mode csv' not in given \
        else 'csv' if '--mode csv' in given else 'md'
    assert printed(out.getvalue(), mode, outcome) == outcome
    for path in paths:
        with open(path) as f:
            assert f.read() == 'plot'
