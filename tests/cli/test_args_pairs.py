"""Every pair of the command line's options, on a tiny model: status 0
with every report asked for in the output (in the documented order), or
status 2 with one ``error:`` line and the model never built.

The options and a valid value of each come from the parser
(:func:`~chainer_computational_cost.cli.args.option_specs`), so that a new
option joins the pairs, or fails :func:`test_every_option_has_a_sample_value`
by name until it has a sample value.  The expected outcome comes from the
rules of docs/cli.md, written out below (:func:`expected`), not from the
command's own checks.  Each option comes with what it needs to run
(:data:`NEEDS`: ``--workers`` with ``--network``, ``--train`` and a device;
``--fit`` with ``--train``; ``--peak-flops`` with ``--bandwidth``; ...), so
that a pair is two things a user would combine.
"""

import io
import itertools
import json

import pytest

from chainer_computational_cost.analysis.calibration import Calibration
from chainer_computational_cost.analysis.calibration import GemmTable
from chainer_computational_cost.analysis.calibration import OVERHEADS
from chainer_computational_cost.cli.args import build_parser
from chainer_computational_cost.cli.args import option_specs
from chainer_computational_cost.cli.args import SAMPLE_VALUES
from chainer_computational_cost.cli.main import main
from chainer_computational_cost.report import plots

import cli_models

BUILT = []


def build():
    """Linear(3 -> 2), counting its builds."""
    BUILT.append(1)
    return cli_models.build_linear()


MODEL = ('test_args_pairs:build', '--shape', '4,3')

#: The options with a sample value (one without is not paired: it fails
#: test_every_option_has_a_sample_value).
SPECS = [s for s in option_specs() if s.arguments is not None]
#: Label ('--train', or '--mode json' for an option of several sample
#: values) -> its OptionSpec.
ENTRIES = {}
for _spec in SPECS:
    _several = sum(s.option == _spec.option for s in SPECS) > 1
    ENTRIES[' '.join(_spec.arguments) if _several
            else _spec.option] = _spec

#: What an option needs to run, by docs/cli.md (each with its sample
#: value; what they need is added in turn).
SCALED = ('--workers',)
NEEDS = {
    '--peak-flops': ('--bandwidth',), '--bandwidth': ('--peak-flops',),
    '--fit': ('--train',), '--margin': ('--fit',),
    '--optimizer': ('--train',),
    '--plot-roofline': ('--device',),
    '--predict-by': ('--predict-time',),
    '--workers': ('--network', '--train', '--device'),
    '--network': SCALED, '--step-time': SCALED, '--overlap': SCALED,
    '--bucket-bytes': SCALED + ('--overlap',),
    '--gpus-per-node': SCALED,
    '--node-network': SCALED + ('--gpus-per-node',),
    '--plot-scaling': SCALED, '--jitter': SCALED,
    '--scaling-model': SCALED, '--measured': SCALED,
    '--accumulation': SCALED, '--cycle-time': SCALED + ('--overlap',),
}

#: The documented order of the reports.
ORDER = ('fit', 'memory', 'roofline', 'scaling', 'time', 'links', 'phases',
         'summary', 'layers')

#: A valid --columns value of each report.
COLUMNS = {'fit': 'name,bytes', 'memory': 'name,bytes',
           'roofline': 'name,bound', 'scaling': 'workers,t_step',
           'time': 'name,t_predicted', 'links': 'name,flops',
           'phases': 'name,flops', 'summary': 'type,flops',
           'layers': 'name,flops'}

#: A calibration for --predict-time: 1 us a call, 1 GFLOP/s matrix
#: products; the report's figures are not what is tested here.
CALIBRATION = Calibration(
    GemmTable([1, 4], [[[1e9] * 2] * 2] * 2),
    {'math': {'coef': [1e-5, 0.0, 0.0, 0.0, 0.0], 'low': [1.0] + [0.0] * 4,
              'high': [1.0] * 5, 'n': 1}}, {},
    dict.fromkeys(OVERHEADS, 1e-6), {}, bandwidth=1e10)


def given_options(pair):
    """The options a run of the pair ``pair`` (two labels) gives: theirs
    and all they need."""
    given = {ENTRIES[label].option for label in pair}
    todo = list(given)
    while todo:
        for option in NEEDS.get(todo.pop(), ()):
            if option not in given:
                given.add(option)
                todo.append(option)
    return given


def reports(given):
    """The reports a run of the options ``given`` prints, in order."""
    device = bool(given & {'--device', '--peak-flops', '--bandwidth'})
    asked = {'fit': '--fit' in given, 'memory': '--memory' in given,
             'roofline': device and '--workers' not in given,
             'scaling': '--workers' in given,
             'time': '--predict-time' in given,
             'links': '--links' in given, 'phases': '--phases' in given,
             'summary': '--summary' in given}
    kinds = [k for k in ORDER if asked.get(k)]
    return kinds or ['summary' if '--train' in given else 'layers']


def expected(given, mode):
    """'error' or the list of reports, by docs/cli.md's rules."""
    kinds = reports(given)
    if '--device' in given and given & {'--peak-flops', '--bandwidth'}:
        return 'error'  # a device twice
    if {'--project', '--measure-time'} <= given:
        return 'error'
    timed = {'roofline', 'time', 'links', 'phases', 'summary', 'layers'}
    if '--measure-time' in given and not timed & set(kinds):
        return 'error'
    if '--time-unit' in given and '--measure-time' not in given and \
            not {'roofline', 'scaling', 'time'} & set(kinds):
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
    if any(h.startswith('T predicted') for h in header):
        return 'time'
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


def command(pair, given, kinds, tmp_path):
    """(argv, plot files) of a run of ``pair``: each option of ``given``
    once, in the order of --help, with its sample value (the pair's own
    where the option has several), files in ``tmp_path``."""
    chosen = [ENTRIES[label] for label in pair]
    chosen += [FIRST[option] for option in
               given - {spec.option for spec in chosen}]
    chosen.sort(key=SPECS.index)
    argv = list(MODEL)
    paths = []
    for spec in chosen:
        option, values = spec.arguments[0], spec.arguments[1:]
        argv.append(option)
        for value in values:
            if option.startswith('--plot-'):
                value = str(tmp_path / '{}.png'.format(option[7:]))
                paths.append(value)
            elif option == '--predict-time':
                value = str(tmp_path / 'calibration.json')
                CALIBRATION.save(value)
            elif option == '--columns':
                # the asked report's: --columns of two is refused anyway
                value = COLUMNS[kinds[0]] if len(kinds) == 1 else 'name'
            argv.append(value)
    return argv, paths


def mode_of(argv):
    """The output mode of ``argv``: the last --mode given wins."""
    modes = [v for o, v in zip(argv, argv[1:]) if o == '--mode']
    return modes[-1] if modes else 'md'


#: Option -> its first OptionSpec (what another option that needs it
#: gives).
FIRST = {}
for _spec in reversed(SPECS):
    FIRST[_spec.option] = _spec

PAIRS = list(itertools.combinations(ENTRIES, 2))


def test_every_option_has_a_sample_value():
    # a new option joins the pairs once SAMPLE_VALUES gives it a value
    assert [s.option for s in option_specs() if s.arguments is None] == []


def test_every_sample_value_is_of_an_option():
    options = {o for a in build_parser()._actions for o in a.option_strings}
    assert sorted(set(SAMPLE_VALUES) - options) == []
    assert sorted({o for needs in NEEDS.values() for o in needs}
                  .union(NEEDS) - options) == []


def test_the_matrix_has_every_option():
    # every option but those that print and exit, each in some pair
    options = {a.option_strings[-1] for a in build_parser()._actions
               if a.option_strings} - {'--help', '--version'}
    assert {ENTRIES[label].option for pair in PAIRS
            for label in pair} == options


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
                        ('plot_memory', 2), ('plot_scaling', 1)):
        monkeypatch.setattr(plots, name, stub(index))


@pytest.mark.parametrize('pair', PAIRS, ids=[' '.join(p) for p in PAIRS])
def test_pair(pair, tmp_path, stub_plots, capsys):
    given = given_options(pair)
    kinds = reports(given)
    argv, paths = command(pair, given, kinds, tmp_path)
    mode = mode_of(argv)
    outcome = expected(given, mode)
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
    assert printed(out.getvalue(), mode, outcome) == outcome
    for path in paths:
        with open(path) as f:
            assert f.read() == 'plot'
