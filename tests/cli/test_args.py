"""The command line's arguments (cli/args.py): defaults, the values each option
takes or refuses, and the checks made before the model is built
(``cli_models:build_raising`` fails if it is built, so an error about the
arguments proves the check came first). main() in-process."""

import os

import pytest

from chainer_computational_cost.cli import main as cli_main
from chainer_computational_cost.cli.main import main
from calibration_fixtures import literal_calibration
from cli_runs import error_of
from cli_runs import run
from cli_runs import write_module

RAISING = 'cli_models:build_raising'


def test_default_shape_is_one_224_by_224_rgb_image():
    # a ReLU over 1*3*224*224 = 150528 float32 elements: 150528 FLOPs,
    # 4*150528 = 602112 bytes read and as many written
    status, text = run('cli_models:build_tiny', '--unit', 'raw', '--mode',
                       'csv')
    assert status == 0
    assert text.splitlines()[-1] == 'total,150528,602112,602112,1204224'


def test_help_names_the_plot_formats(capsys):
    with pytest.raises(SystemExit) as e:
        main(['--help'])
    assert e.value.code == 0
    text = ' '.join(capsys.readouterr().out.split())
    assert 'in the format of its extension (.png, .svg, .pdf, .eps, .ps)' \
        in text
    assert text.startswith('usage: python -m chainer_computational_cost '
                           'MODEL [options]')


def test_help_names_the_console_command(monkeypatch, capsys):
    # (the console script on Windows ends with .exe)
    monkeypatch.setattr('sys.argv',
                        ['/venv/Scripts/chainer-computational-cost.exe'])
    with pytest.raises(SystemExit):
        main(['--help'])
    assert capsys.readouterr().out.startswith(
        'usage: chainer-computational-cost MODEL [options]')


def test_help_without_a_program_name(monkeypatch, capsys):
    # sys.argv empty or blank (an embedded interpreter)
    for argv in ([], ['']):
        monkeypatch.setattr('sys.argv', argv)
        with pytest.raises(SystemExit):
            main(['--help'])
        assert capsys.readouterr().out.startswith(
            'usage: python -m chainer_computational_cost MODEL [options]')


@pytest.mark.parametrize('shape', ['0', '2,0', '0,3,8,8'])
def test_a_shape_of_zero_is_refused(shape, capsys):
    assert error_of(capsys, RAISING, '--shape', shape) == (
        'error: argument --shape: shape must be positive integers separated '
        'by commas, e.g. 1,3,224,224; got {!r} (see --help)'.format(shape))


def test_a_device_slower_than_one_flop_a_second():
    # ReLU of 6 float32: 6 FLOPs at 0.5 FLOP/s = 12 s; 48 bytes at 0.25
    # B/s = 192 s: memory bound, 192 s
    status, text = run('cli_models:build_tiny', '--shape', '2,3', '--mode',
                       'csv', '--unit', 'raw', '--time-unit', 's',
                       '--peak-flops', '0.5', '--bandwidth', '0.25',
                       '--columns', 'name,t_compute,t_memory,t_roofline,'
                       'bound')
    assert status == 0
    assert text.splitlines()[1] == 'ReLU-1,12.0,192.0,192.0,memory'


# --fit and --margin

FIT = ('cli_models:build_tiny', '--shape', '2,3', '--unit', 'raw', '--train',
       '--optimizer', 'sgd')


@pytest.mark.parametrize('margin, kept', [('100', "margin 100: 100 bytes"),
                                          ('0.1', "margin 0.1: 100 bytes")])
def test_margin_in_bytes_or_as_a_fraction(margin, kept):
    # build_tiny's step needs 69n + 4 bytes (test_main.FIT_1000); 100 of
    # 1000 kept: 69n + 4 <= 900 up to n = 12 (832; 13 needs 901)
    status, text = run(*FIT, '--fit', '1e3', '--margin', margin)
    assert status == 0
    assert text.splitlines()[0] == (
        'largest batch in 1000 bytes with sgd: 12 (peak during '
        'SoftmaxCrossEntropy-1; {} kept)'.format(kept))


@pytest.mark.parametrize('margin', ['0', '5000', '0.5', '0.0', 'cuda',
                                    'CUDA'])
def test_margin_values_taken(margin, capsys):
    # taken by the parser: the next check, that --margin needs --fit
    assert error_of(capsys, RAISING, '--margin', margin) == (
        "error: --margin needs --fit: it is the memory the fit's answer "
        'keeps free')


@pytest.mark.parametrize('margin', ['1.0', '1.5', '1e5', '10000.9', '-1',
                                    '-0.5', 'nan', 'inf', 'gpu'])
def test_margin_values_refused(margin, capsys):
    # a decimal is a fraction, as fit_batch takes a float: 1.0 and 1e5 are
    # none
    assert error_of(capsys, RAISING, '--margin', margin) == (
        "error: argument --margin: must be bytes (an integer >= 0), a "
        "fraction of the capacity (a decimal in [0, 1), e.g. 0.1) or "
        "'cuda'; got {!r} (see --help)".format(margin))


def _status(argv):
    try:
        return main(list(argv))
    except SystemExit as e:
        return e.code


def test_under_mpiexec_only_rank_0_says_interrupted(monkeypatch, capsys):
    # Ctrl-C reaches every rank: 'interrupted' was said once per rank
    def interrupted(argv, ost):
        raise KeyboardInterrupt
    monkeypatch.setattr(cli_main, '_command', interrupted)
    monkeypatch.setenv('PMI_RANK', '1')
    assert main(['m:f']) == 130
    assert capsys.readouterr() == ('', '')
    monkeypatch.setenv('PMI_RANK', '0')
    assert main(['m:f']) == 130
    assert capsys.readouterr() == ('', 'interrupted\n')


@pytest.mark.parametrize('variable', ['PMI_RANK', 'OMPI_COMM_WORLD_RANK'])
@pytest.mark.parametrize('argv', [
    ('--shap', '1,3'), ('calibrat', '--out', 'x.json'),
    ('calibrate', '--seconds', 'abc', '--out', 'x.json'), ('--help',)])
def test_under_mpiexec_only_rank_0_tells(argv, variable, monkeypatch,
                                         capsys):
    # every rank of `mpiexec -n 2 ... --shap` makes the same mistake: one
    # line in all, from rank 0, and every rank ends with status 2 (0 for
    # --help)
    helping = argv == ('--help',)
    monkeypatch.setenv(variable, '1')
    assert _status(argv) == (0 if helping else 2)
    assert capsys.readouterr() == ('', '')
    monkeypatch.setenv(variable, '0')
    assert _status(argv) == (0 if helping else 2)
    out, err = capsys.readouterr()
    assert (out, err.count('\n')) != ('', 0) if helping else \
        err.startswith('error: ') and err.count('\n') == 1


@pytest.mark.parametrize('nbytes', ['26214400', '25e6', '1', '25M', '1k'])
def test_bucket_bytes_values_taken(nbytes, capsys):
    # whole bytes, 25e6 as --fit takes it, 25M as netbench's --sizes: taken
    # by the parser, the next check is the options it needs
    assert error_of(capsys, RAISING, '--bucket-bytes', nbytes) == (
        'error: --bucket-bytes needs --workers and --network')


@pytest.mark.parametrize('nbytes', ['1.5', '0', '-8', 'nan', 'inf', '25X',
                                    '0.5K', 'M', '1e1000000'])
def test_bucket_bytes_values_refused(nbytes, capsys):
    assert error_of(capsys, RAISING, '--bucket-bytes', nbytes) == (
        'error: argument --bucket-bytes: must be a whole number of bytes '
        '>= 1 (26214400, 25e6 or 25M); got {!r} (see --help)'.format(nbytes))


@pytest.mark.parametrize('nbytes', ['100000000000000000.5',
                                    '12345678901234567.5'])
def test_bucket_bytes_of_a_fraction_a_float_would_round_whole_is_refused(
        nbytes, capsys):
    # read exactly, not through a float (which rounds these to whole
    # bytes): refused as 1.5 is
    assert error_of(capsys, RAISING, '--bucket-bytes', nbytes) == (
        'error: argument --bucket-bytes: must be a whole number of bytes '
        '>= 1 (26214400, 25e6 or 25M); got {!r} (see --help)'.format(nbytes))


@pytest.mark.parametrize('nbytes, exactly', [
    ('1e23', 100000000000000000000000),
    ('100000000000000000000000', 100000000000000000000000),
    ('1.0e23', 100000000000000000000000),
    ('1e23K', 102400000000000000000000000),
    # digits beyond a float's range: an int, read as one
    ('1' + '0' * 400, 10 ** 400)])
def test_bucket_bytes_of_many_bytes_are_exactly_that_many(nbytes, exactly):
    # 1e23 as a float is 99999999999999991611392
    from chainer_computational_cost.cli.args import build_parser
    args = build_parser().parse_args(['m:f', '--bucket-bytes', nbytes])
    assert (type(args.bucket_bytes), args.bucket_bytes) == (int, exactly)


@pytest.mark.parametrize('fit, margin, kept', [
    ('1e3', '100', 'margin 100: 100 bytes'),
    ('1000.0', '100', 'margin 100: 100 bytes')])
def test_fit_reads_bytes_in_any_notation(fit, margin, kept):
    # a whole number of bytes: 1e3 = 1000.0 = 1000; the batch is
    # test_margin_in_bytes_or_as_a_fraction's (12 in 900 bytes)
    status, text = run(*FIT, '--fit', fit, '--margin', margin)
    assert status == 0
    assert text.splitlines()[0] == (
        'largest batch in 1000 bytes with sgd: 12 (peak during '
        'SoftmaxCrossEntropy-1; {} kept)'.format(kept))


@pytest.mark.parametrize('value', ['H100', 'a100-40GB', '1', '1e3'])
def test_fit_values_taken(value, capsys):
    # a GPU in any case, bytes as a number: taken by the parser, refused
    # by the next check (--fit needs --train)
    assert error_of(capsys, RAISING, '--fit', value) == (
        'error: --fit needs --train: it sizes the batch of a training step')


@pytest.mark.parametrize('value', ['0', '-5', 'inf', 'nan', 'big'])
def test_fit_values_refused(value, capsys):
    assert error_of(capsys, RAISING, '--fit', value) == (
        'error: argument --fit: {!r} is neither a device (gtx1080ti, a100, '
        'a100-40gb, a100-80gb, h100, p100, v100) nor a number of bytes > 0 '
        '(see --help)'.format(value))


def test_fit_beyond_a_float_written_as_a_decimal_says_so(capsys):
    # 2e308 is a number of bytes, beyond what a float holds (1.798e308),
    # as a 310-digit integer is: not "neither a device nor a number"
    assert error_of(capsys, RAISING, '--fit', '2e308') == (
        "error: argument --fit: '2e308' is more bytes than a float holds (at "
        'most 1.798e+308): give a device (gtx1080ti, a100, a100-40gb, '
        'a100-80gb, h100, p100, v100) or fewer bytes (see --help)')


@pytest.mark.parametrize('margin, as_float', [
    ('0.99999999999999999999', '1.0'), ('1e-400', '0.0')])
def test_a_margin_no_float_holds_is_refused_saying_why(margin, as_float,
                                                       capsys):
    # decimals in [0, 1), read exactly: the float they would be is 1 (no
    # fraction) or 0 (nothing kept), so they are refused, saying so
    assert error_of(capsys, RAISING, '--margin', margin) == (
        "error: argument --margin: must be bytes (an integer >= 0), a "
        "fraction of the capacity (a decimal in [0, 1), e.g. 0.1) or "
        "'cuda'; got {!r} ({} as a float) (see --help)".format(
            margin, as_float))


def test_fit_of_a_part_of_a_byte_is_refused(capsys):
    # 10000.9 bytes is no number of bytes: not cut to 10000
    assert error_of(capsys, RAISING, '--train', '--fit', '10000.9') == (
        "error: argument --fit: '10000.9' is not a whole number of bytes: "
        'give a device (gtx1080ti, a100, a100-40gb, a100-80gb, h100, p100, '
        'v100) or a whole number of bytes (e.g. 100000 or 1e5) (see --help)')


@pytest.mark.parametrize('value', ['12345678901234567.5',
                                   '100000000000000000.5'])
def test_fit_of_a_fraction_a_float_would_round_whole_is_refused(
        value, capsys):
    # read exactly, not through a float (which rounds these to the whole
    # 12345678901234568 and 100000000000000000): refused as 10000.9 is
    assert error_of(capsys, RAISING, '--train', '--fit', value) == (
        "error: argument --fit: {!r} is not a whole number of bytes: "
        'give a device (gtx1080ti, a100, a100-40gb, a100-80gb, h100, p100, '
        'v100) or a whole number of bytes (e.g. 100000 or 1e5) (see '
        '--help)'.format(value))


@pytest.mark.parametrize('value', ['1e23', '1.0e23',
                                   '100000000000000000000000'])
def test_fit_of_many_bytes_is_exactly_that_many(value):
    # 1e23 as a float is 99999999999999991611392: the capacity is 10**23
    # bytes, however written; build_tiny's step needs 69n + 4 bytes
    # (test_margin_in_bytes_or_as_a_fraction): n = (10**23 - 4) // 69
    status, text = run(*FIT, '--fit', value)
    assert status == 0
    assert text.splitlines()[0] == (
        'largest batch in 100000000000000000000000 bytes with sgd: '
        '1449275362318840579710 (peak during SoftmaxCrossEntropy-1)')


def test_fit_on_a_cpu_preset_is_refused(capsys):
    err = error_of(capsys, RAISING, '--train', '--fit', 'epyc9654')
    assert err.startswith('error: argument --fit: ')
    assert 'epyc9654' in err


# Scaling: --workers and its options

SCALING = ('--train', '--device', 'a100', '--workers', '1,8', '--network',
           'ib-edr')


@pytest.mark.parametrize('value', ['0,8', '8,-1', 'a', '1,,8'])
def test_workers_values_refused(value, capsys):
    assert error_of(capsys, RAISING, *SCALING[:3], '--network', 'ib-edr',
                    '--workers', value) == (
        'error: argument --workers: must be comma-separated ints >= 1, '
        'e.g. 1,8,64; got {!r} (see --help)'.format(value))


@pytest.mark.parametrize('options, message', [
    (('--overlap', 'ddp', '--jitter', '0.1'),
     '--jitter needs --workers and --network'),
    (('--plot-scaling', 'x.png'), '--plot-scaling needs --workers and '
     '--network'),
    (('--gpus-per-node', '4'), '--gpus-per-node needs --workers and '
     '--network'),
    (('--workers', '1,8'), '--workers and --network go together: e.g. '
     '--workers 1,8,64 --network ib-hdr200'),
    (('--network', 'ib-edr'), '--workers and --network go together: e.g. '
     '--workers 1,8,64 --network ib-hdr200'),
    (SCALING[1:], '--workers needs --train: scaling is of a training step'),
    (('--train',) + SCALING[3:], '--workers needs a --device (gtx1080ti, '
     'a100, a100-40gb, a100-80gb, h100, p100, v100, epyc9654) or '
     '--peak-flops and --bandwidth'),
])
def test_scaling_options_need_their_companions(options, message, capsys):
    assert error_of(capsys, RAISING, *options) == 'error: ' + message


def test_scaling_options_are_checked_before_the_run(capsys):
    err = error_of(capsys, RAISING, *SCALING, '--network', 'nosuchnet')
    assert err.startswith('error: ') and 'nosuchnet' in err
    err = error_of(capsys, RAISING, *SCALING, '--jitter', '-1')
    assert err.startswith('error: ') and 'jitter' in err


def test_scaling_report_replaces_the_roofline():
    status, text = run('cli_models:build_linear', '--shape', '4,3', '--mode',
                       'csv', '--columns', 'workers', *SCALING)
    assert (status, text) == (0, 'Workers\n1\n8\n')


def scaling_rows(*options):
    status, text = run('cli_models:build_conv_linear', '--shape', '4,3,8,8',
                       '--mode', 'csv', '--time-unit', 'us',
                       *SCALING[:4], '1,8,64', *SCALING[5:], *options)
    assert status == 0
    lines = text.splitlines()
    return [dict(zip(lines[0].split(','), line.split(',')))
            for line in lines[1:]]


def test_step_time_is_the_compute_time_of_each_worker():
    # 0.01 s = 10000 us of compute at every worker count
    rows = scaling_rows('--step-time', '0.01')
    assert [(r['T compute us'], r['Step from']) for r in rows] == [
        ('10000.0', 'step_time')] * 3


STEP = ('--step-time', '0.01')


@pytest.mark.parametrize('options, other', [
    # 3348 bytes of gradients in buckets of 8 bytes: more than one bucket
    (('--overlap', 'ddp', '--bucket-bytes', '8'), ('--overlap', 'ddp')),
    (('--overlap', 'horovod', '--bucket-bytes', '8'),
     ('--overlap', 'ddp', '--bucket-bytes', '8')),
    (('--gpus-per-node', '8'), ()),
    (('--gpus-per-node', '8', '--node-network', 'nvlink-a100'),
     ('--gpus-per-node', '8')),
    (('--jitter', '0.5'), ()),
])
def test_each_scaling_option_changes_the_report(options, other):
    # none of them is dropped on the way: the rows differ from those of a
    # run without it
    assert scaling_rows(*STEP, *options) != scaling_rows(*STEP, *other)


# Devices

@pytest.mark.parametrize('options, message', [
    (('--device', 'a100', '--peak-flops', '1e12'), 'give either --device '
     'or --peak-flops and --bandwidth, not both'),
    (('--device', 'a100', '--bandwidth', '1e12'), 'give either --device '
     'or --peak-flops and --bandwidth, not both'),
    (('--plot-summary', 'x.png', '--plot-roofline', 'x.png'),
     '--plot-roofline needs a device: --device (gtx1080ti, a100, '
     'a100-40gb, a100-80gb, h100, p100, v100, epyc9654) or --peak-flops '
     'and --bandwidth'),
])
def test_device_options(options, message, capsys):
    assert error_of(capsys, RAISING, *options) == 'error: ' + message


# Values checked as the API checks them, canonicalised

@pytest.mark.parametrize('unit', ['none', 'None', 'RAW', 'raw'])
def test_raw_unit_spellings(unit):
    # as test_default_shape: exact figures, no prefix
    status, text = run('cli_models:build_tiny', '--unit', unit, '--mode',
                       'csv')
    assert (status, text.splitlines()[-1]) == (
        0, 'total,150528,602112,602112,1204224')


def test_an_empty_unit_is_refused_as_an_empty_mode_is(capsys):
    # the API's '' is raw; typed, it is a value left out ($UNIT unset)
    assert error_of(capsys, RAISING, '--unit', '') == (
        "error: --unit must be one of 'raw', 'K', 'M', 'G', 'T', "
        "'autoaligned', 'auto' (any case), got ''")
    assert error_of(capsys, RAISING, '--mode', '') == (
        "error: --mode must be one of 'csv', 'md', 'table', 'json', got ''")


def test_json_defaults_to_exact_figures_in_seconds():
    # The convolution of test_main (3888 FLOPs, 1216 + 576 bytes) on a100:
    # fp32 vector 19.5e12 FLOP/s, 2.039e12 B/s: memory bound, 1792 /
    # 2.039e12 s, neither scaled to K nor rounded nor in us
    import json
    status, text = run('cli_models:build_conv_linear', '--shape', '1,3,8,8',
                       '--mode', 'json', '--device', 'a100')
    assert status == 0
    row = json.loads(text)['rows'][0]
    assert row['flops'] == 3888
    assert row['t_roofline'] == pytest.approx(1792 / 2.039e12, rel=1e-12)


def test_json_with_a_unit_is_rounded_as_asked():
    import json
    status, text = run('cli_models:build_conv_linear', '--shape', '1,3,8,8',
                       '--mode', 'json', '--unit', 'K', '--n-digits', '1',
                       '--columns', 'name,flops')
    assert status == 0
    # 3888 FLOPs: 3.9 K
    assert json.loads(text)['rows'][0] == {
        'name': 'Convolution2DFunction-1', 'flops': 3.9}


def test_n_digits_0_and_10_are_taken():
    # 3888 FLOPs = 0.000003888 G: nine decimals needed, 0 rounds it away
    for digits, cell in (('0', '0'), ('10', '0.000003888')):
        status, text = run('cli_models:build_conv_linear', '--shape',
                           '1,3,8,8', '--unit', 'G', '--mode', 'csv',
                           '--columns', 'name,flops', '--n-digits', digits)
        assert (status, text.splitlines()[1]) == (
            0, 'Convolution2DFunction-1,' + cell)


# Reports asked for and their columns

def header(*options):
    status, text = run('cli_models:build_tiny', '--shape', '2,3', '--mode',
                       'csv', *options)
    assert status == 0
    return text.splitlines()[0].split(',')


def test_measured_times_add_a_time_column_to_the_default_columns():
    assert header('--links', '--measure-time') == [
        'Link', '# Params', '# Calls', '# Layers', 'FLOPs', 'MemRead B',
        'MemWrite B', 'MemR+W B', 'Time ms']
    assert header('--links') == header('--links', '--measure-time')[:-1]


def test_measured_times_add_time_and_efficiency_to_the_roofline():
    untimed = ['Layer name', 'FLOPs', 'MemR+W B', 'Intensity FLOP/B',
               'Peak used', 'T compute us', 'T memory us', 'T roofline us',
               'Bound']
    assert header('--device', 'a100') == untimed
    assert header('--device', 'a100', '--measure-time') == untimed + [
        'Time us', 'Efficiency']


def test_a_calibration_file_that_does_not_exist(tmp_path, capsys):
    err = error_of(capsys, RAISING, '--predict-time', str(tmp_path / 'c'))
    assert err.startswith('error: --predict-time: ')
    assert 'No such file' in err


def test_predict_by_needs_predict_time(capsys):
    assert error_of(capsys, RAISING, '--predict-by', 'type') == (
        'error: --predict-by needs --predict-time FILE')


def test_a_calibration_that_is_not_one(tmp_path, capsys):
    path = tmp_path / 'c.json'
    path.write_text('[]')
    err = error_of(capsys, RAISING, '--predict-time', str(path))
    assert err.startswith("error: --predict-time: '{}': not a "
                          'calibration'.format(path))


def test_csv_of_one_report_with_an_option_that_adds_none():
    # --train alone: the summary by phase, one report, csv allowed
    status, text = run('cli_models:build_linear', '--shape', '4,3', '--mode',
                       'csv', '--train', '--columns', 'type,phase')
    assert status == 0
    assert text.splitlines()[:2] == ['Layer type,Phase',
                                     'LinearFunction,forward']


@pytest.mark.parametrize('options, column, why', [
    (('--columns', 'name,comm_bytes'), 'comm_bytes',
     'the command line runs no ChainerMN communication (give '
     'ComputationalCostHook a comm= in Python for it)'),
    (('--summary', '--columns', 'type,slowest_rank'), 'slowest_rank',
     'ranks are those of a gathered ChainerMN report '
     '(ComputationalCostHook.gather), which the command line does not '
     'make'),
])
def test_columns_no_run_fills(options, column, why, capsys):
    err = error_of(capsys, RAISING, *options)
    assert err == 'error: --columns: column {!r} would be empty: {}'.format(
        column, why)


def test_a_grouped_time_reports_calls_columns_are_refused(capsys, tmp_path):
    # --predict-by type --columns type printed a blank column
    path = tmp_path / 'c.json'
    literal_calibration().save(str(path))
    err = error_of(capsys, RAISING, '--predict-time', str(path),
                   '--predict-by', 'Type', '--columns', 'name,type')
    assert err == (
        "error: --columns: column 'type' would be empty: the rows of a time "
        "report by type are groups of calls, each named in its name column; "
        "type, phase, link, family and flag are columns of one call (by "
        "layer)")


def test_efficiency_of_the_scaling_report_is_kept():
    # the scaling report's efficiency is of predicted times, there
    # without --measure-time: on 1 worker nothing is all-reduced and no
    # one waits for a slower worker, t_step = t_compute, efficiency 1
    status, text = run('cli_models:build_linear', '--shape', '4,3',
                       '--mode', 'csv', *SCALING, '--columns',
                       'workers,efficiency')
    assert status == 0
    assert text.splitlines()[:2] == ['Workers,Efficiency', '1,1.0']


def test_a_column_named_twice_is_refused(capsys):
    # md would show it twice, json once (a key is a key)
    assert error_of(capsys, RAISING, '--columns', 'name, flops,name') == (
        "error: --columns: columns ['name', 'flops', 'name'] names 'name' "
        'more than once: each column is shown once')


def test_column_names_are_read_in_any_case():
    # as every other choice of the command line
    status, text = run('cli_models:build_linear', '--shape', '4,3',
                       '--mode', 'csv', '--columns', ' Name,FLOPS ')
    assert status == 0
    assert text.splitlines()[0] == 'Layer name,FLOPs'


def test_time_column_with_measured_times_is_kept():
    status, text = run('cli_models:build_tiny', '--shape', '2,3', '--mode',
                       'csv', '--measure-time', '--columns', 'name,time')
    assert status == 0
    assert text.splitlines()[0] == 'Layer name,Time ms'


def test_phase_column_of_a_training_summary_is_kept():
    status, text = run('cli_models:build_linear', '--shape', '4,3', '--mode',
                       'csv', '--train', '--summary', '--columns',
                       'type,phase')
    assert status == 0
    assert text.splitlines()[1] == 'LinearFunction,forward'


# Plot files: found unwritable before the run, left as they were

def test_an_existing_plot_file_is_left_as_it_was(tmp_path, capsys):
    path = tmp_path / 'old.png'
    path.write_bytes(b'old')
    err = error_of(capsys, RAISING, '--plot-summary', str(path))
    # the model failed (after the check), the file untouched, no probe left
    assert 'no weights for width 0' in err
    assert path.read_bytes() == b'old'
    assert os.listdir(str(tmp_path)) == ['old.png']


def test_a_plot_in_a_writable_directory_leaves_no_probe(tmp_path, capsys):
    err = error_of(capsys, RAISING, '--plot-memory', str(tmp_path / 'm.png'))
    assert 'no weights for width 0' in err
    assert os.listdir(str(tmp_path)) == []


def test_a_plot_file_that_cannot_be_written(tmp_path, capsys):
    path = tmp_path / 'ro.png'
    path.write_bytes(b'old')
    os.chmod(str(path), 0o444)
    try:
        if os.access(str(path), os.W_OK):
            pytest.skip('root writes read-only files')
        err = error_of(capsys, RAISING, '--plot-summary', str(path))
    finally:
        os.chmod(str(path), 0o644)
    assert err == ('error: --plot-summary {!r} cannot be written: '
                   'Permission denied'.format(str(path)))


# Values written as '-N' after an option taking one value

def test_every_command_joins_a_negative_value(tmp_path, monkeypatch,
                                              capsys):
    # the value's own check says what is wrong, not argparse's 'expected
    # one argument'
    _never_measured(monkeypatch)
    assert error_of(capsys, 'calibrate', '--out', str(tmp_path / 'c.json'),
                    '--seconds', '-5') == (
        'error: --seconds must be a finite number >= 10, got -5.0')
    # and a value that is not a number, or starts with a point
    for value, shown in (('-inf', '-inf'), ('-nan', 'nan'),
                         ('-.5', '-0.5')):
        assert error_of(capsys, 'calibrate', '--out',
                        str(tmp_path / 'c.json'), '--seconds', value) == (
            'error: --seconds must be a finite number >= 10, got ' + shown)
    assert error_of(capsys, 'netbench', '--sizes', '-4,8') == (
        'error: argument --sizes: must be two sizes or more in bytes >= 4, '
        "comma-separated (K, M, G suffixes: 4,1K,1M); got '-4,8' (see "
        '--help)')
    # a size below 4 beside a larger one: the smallest is what is checked
    assert error_of(capsys, 'netbench', '--sizes', '8,0') == (
        'error: argument --sizes: must be two sizes or more in bytes >= 4, '
        "comma-separated (K, M, G suffixes: 4,1K,1M); got '8,0' (see "
        '--help)')


@pytest.mark.parametrize('argv, message', [
    (('--n-digits', 'x'), "--n-digits: must be an int from 0 to 10, got "
     "'x'"),
    (('--workers', '1,8', '--network', 'ib-edr', '--gpus-per-node', '1.5'),
     "--gpus-per-node: must be an int >= 1, got '1.5'"),
    (('--workers', '1,8', '--network', 'ib-edr', '--accumulation', 'two'),
     "--accumulation: must be an int >= 1 (micro-batches per all-reduce), "
     "got 'two'"),
    (('--workers', '1,8', '--network', 'ib-edr', '--step-time', 'abc'),
     "--step-time: must be a finite number > 0 (seconds), got 'abc'"),
    (('--workers', '1,8', '--network', 'ib-edr', '--jitter', 'x'),
     "--jitter: must be a finite number >= 0, got 'x'"),
    (('--workers', '1,8', '--network', 'ib-edr', '--overlap', 'horovod',
      '--cycle-time', 'x'),
     "--cycle-time: must be a finite number > 0 (seconds), got 'x'"),
])
def test_a_number_that_does_not_parse_is_told_what_is_allowed(
        capsys, argv, message):
    # argparse's own "invalid int value: 'x'" said nothing of it
    assert error_of(capsys, RAISING, '--train', '--device', 'a100',
                    *argv) == ('error: argument {} (see --help)'.format(
                        message))


@pytest.mark.parametrize('argv, message', [
    (('--step-time', '1e-400'), "--step-time: must be a finite number > 0 "
     "(seconds), got '1e-400' (0.0 as a float)"),
    (('--jitter', '-1e-400'), "--jitter: must be a finite number >= 0, got "
     "'-1e-400' (-0.0 as a float)"),
    (('--overlap', 'horovod', '--cycle-time', '1e400'),
     "--cycle-time: must be a finite number > 0 (seconds), got '1e400' "
     "(inf as a float)"),
])
def test_a_number_a_float_cannot_hold_is_told_as_typed(capsys, argv,
                                                       message):
    # the later check named the float: 'got 0.0' for 1e-400
    assert error_of(capsys, RAISING, '--train', '--device', 'a100',
                    '--workers', '1,8', '--network', 'ib-edr', *argv) == (
                        'error: argument {} (see --help)'.format(message))


def test_a_negative_value_is_the_options_not_an_option(capsys):
    assert error_of(capsys, RAISING, '--n-digits', '-1') == (
        'error: --n-digits must be an int from 0 to 10, got -1')
    # a value that is no number stays argparse's mistake
    assert error_of(capsys, RAISING, '--columns', '-x') == (
        'error: argument --columns: expected one argument (see --help)')


# The commands and the first argument; --version

def test_help_names_the_other_commands(capsys):
    with pytest.raises(SystemExit) as e:
        main(['--help'])
    assert e.value.code == 0
    out = capsys.readouterr().out
    # its last paragraph, wrapped to the terminal
    assert ' '.join(out.split('\n\n')[-1].split()) == (
        'Other commands, typed in place of MODEL, each with its own --help: '
        'calibrate: measure this machine (NumPy) and save a calibration '
        "for --predict-time; netbench: under mpiexec, measure a ChainerMN "
        "communicator's all-reduce and save a network file for --network.")


@pytest.mark.parametrize('command', ['calibrate', 'netbench'])
def test_each_command_has_its_help(command, capsys):
    with pytest.raises(SystemExit) as e:
        main([command, '--help'])
    assert e.value.code == 0
    assert capsys.readouterr().out.startswith(
        'usage: python -m chainer_computational_cost {} [-h]'.format(
            command))


@pytest.mark.parametrize('build', ['build_parser', 'build_calibrate_parser',
                                   'build_netbench_parser'])
def test_every_option_taking_a_value_names_it(build):
    # '--shape N,C,H,W' in --help, not '--shape SHAPE': argparse's default
    # placeholder is the option's name in capitals, which says nothing of
    # what to type; a set of choices shows itself ({float16,...})
    from chainer_computational_cost.cli import args
    parser = getattr(args, build)()
    unnamed = [action.option_strings[-1] for action in parser._actions
               if action.option_strings and action.nargs != 0
               and action.metavar is None and action.choices is None]
    assert unnamed == []


def test_the_help_shows_each_placeholder(capsys):
    with pytest.raises(SystemExit):
        main(['--help'])
    out = capsys.readouterr().out
    for shown in ('--shape N,C,H,W', '--n-digits N', '--columns COL,...',
                  '--time-unit UNIT', '--network NET', '--device DEVICE'):
        assert shown in out
    with pytest.raises(SystemExit):
        main(['netbench', '--help'])
    out = capsys.readouterr().out
    for shown in ('--communicator NAME', '--sizes BYTES,...',
                  '--repeats N'):
        assert shown in out


@pytest.mark.parametrize('command', [[], ['calibrate'], ['netbench']])
def test_version_is_printed(command, capsys):
    # by every command, as each has its own --help
    import chainer_computational_cost
    with pytest.raises(SystemExit) as e:
        main(command + ['--version'])
    assert e.value.code == 0
    assert capsys.readouterr() == (
        'chainer_computational_cost {}\n'.format(
            chainer_computational_cost.__version__), '')


@pytest.mark.parametrize('argv, message', [
    # the options of a misspelt command are not taken for a model's
    (('calibrat', '--out', 'x.json'),
     "unknown command or model 'calibrat'; did you mean 'calibrate'?"),
    (('Calibrte',),
     "unknown command or model 'Calibrte'; did you mean 'calibrate'?"),
    (('netbech', '--communicator', 'naive'),
     "unknown command or model 'netbech'; did you mean 'netbench'?"),
    # the start of a command's name, too short for a close match
    (('calib', '--out', 'x.json'),
     "unknown command or model 'calib'; did you mean 'calibrate'?"),
    (('NET',), "unknown command or model 'NET'; did you mean 'netbench'?"),
    (('resnt50', '--shape', '2,3'),
     "unknown model 'resnt50' (did you mean 'resnet50'?): use one of "
     'googlenet, resnet101, resnet152, resnet50, vgg16, vgg19 or '
     'package.module:factory'),
    (('VGG-16',),
     "unknown model 'VGG-16' (did you mean 'vgg16'?): use one of "
     'googlenet, resnet101, resnet152, resnet50, vgg16, vgg19 or '
     'package.module:factory'),
])
def test_a_misspelt_command_or_model_gets_a_suggestion(argv, message,
                                                       capsys):
    assert error_of(capsys, *argv) == 'error: ' + message


def test_a_model_later_on_the_line_gets_its_suggestion_too(capsys):
    assert error_of(capsys, '--shape', '2,3', 'resnet5O') == (
        "error: unknown model 'resnet5O' (did you mean 'resnet50'?): use one "
        'of googlenet, resnet101, resnet152, resnet50, vgg16, vgg19 or '
        'package.module:factory')


def test_an_unknown_option_is_not_told_an_option_its_command_lacks(
        tmp_path, monkeypatch, capsys):
    # --depth means --links for a model's report; calibrate has no --links
    _never_measured(monkeypatch)
    assert error_of(capsys, 'calibrate', '--out', str(tmp_path / 'c.json'),
                    '--depth', '2') == (
        'error: unrecognized arguments: --depth 2 (see --help)')
    assert list(tmp_path.iterdir()) == []


def test_model_names_are_not_taken_for_commands():
    from chainer_computational_cost.cli.args import COMMANDS
    from chainer_computational_cost.cli.models import check_model_or_command
    # a built-in model in any case, a factory in a module named like a
    # command: models, not slips
    for spec in ('vgg16', 'ResNet50', 'calibrate:build', 'netbench.x:f'):
        check_model_or_command(spec, COMMANDS)
    # and a factory in such a module runs
    status, text = run('cli_models:build_tiny', '--shape', '2,3', '--mode',
                       'csv', '--columns', 'name,flops', '--unit', 'raw')
    assert (status, text) == (0, 'Layer name,FLOPs\nReLU-1,6\ntotal,6\n')


# Values refused before the model is built (RAISING fails if it is)

def test_a_worker_count_given_twice_is_refused(capsys):
    # one row per count: '8,8' would print one row for two counts
    assert error_of(capsys, RAISING, *SCALING[:3], '--network', 'ib-edr',
                    '--workers', '1,8,8') == (
        'error: argument --workers: workers gives 8 more than once in '
        '[1, 8, 8]: each worker count is a row, give it once (see --help)')


def test_a_missing_network_file_is_said_to_be_missing(tmp_path, capsys):
    path = str(tmp_path / 'nofile.json')
    presets = ('ib-edr, ib-hdr200, ib-ndr, eth-25g, eth-100g, nvlink-a100, '
               'eth-50g, roce-25g, nvlink-p100, pcie3-x16, nvlink-v100, '
               'ib-fdr, eth-10g, ib-hdr200x8, pcie4-x16, ib-edrx8')
    assert error_of(capsys, RAISING, *SCALING[:5], '--network', path) == (
        'error: --network {!r}: no such network file (written by netbench; '
        'the presets are {})'.format(path, presets))
    assert error_of(capsys, RAISING, *SCALING, '--gpus-per-node', '2',
                    '--node-network', path) == (
        'error: --node-network {!r}: no such network file (written by '
        'netbench; the presets are {})'.format(path, presets))
    (tmp_path / 'dir.json').mkdir()
    assert error_of(capsys, RAISING, *SCALING[:5], '--network',
                    str(tmp_path / 'dir.json')) == (
        'error: --network {!r}: a directory, not a network '
        'file'.format(str(tmp_path / 'dir.json')))


@pytest.mark.parametrize('value', ['0.5', '1e-300'])
def test_fit_below_one_byte_is_refused_before_the_build(value, capsys):
    # fit_batch takes whole bytes: 0, which it refuses only after the
    # model is built and run
    assert error_of(capsys, RAISING, '--train', '--fit', value) == (
        'error: argument --fit: {!r} is less than one byte: give a device '
        '(gtx1080ti, a100, a100-40gb, a100-80gb, h100, p100, v100) or a '
        'number of bytes >= 1 (see --help)'.format(value))


# The guide's table of what is refused (docs/cli.md, "What is refused")

def guide_section(title):
    """The text of the section ``title`` of docs/cli.md."""
    from cli_runs import ROOT
    with open(os.path.join(ROOT, 'docs', 'cli.md')) as f:
        text = f.read()
    return text.split('\n## {}\n'.format(title), 1)[1].split('\n## ')[0]


def refusal_rows():
    """The first cell (the combination refused) of each row of the
    guide's table of refusals."""
    import re
    return [m.group(1) for m in re.finditer(
        r'^\| (`.*?) \| ', guide_section('What is refused'), re.M)]


def test_the_guide_lists_every_refusal_of_a_lone_option(tmp_path, capsys,
                                                        monkeypatch):
    # Each option alone, on a model that fails if it is built: an error
    # other than the build's is a refusal, and the table has a row naming
    # the option, and the option it needs when the error names one
    # ('--margin needs --fit'). (In an empty directory: --predict-time's
    # example file is not there.)
    import re
    from chainer_computational_cost.cli.args import option_specs
    monkeypatch.chdir(tmp_path)
    rows = refusal_rows()
    assert len(rows) >= 15
    missing = []
    for spec in option_specs():
        if spec.arguments is None:
            continue
        error = error_of(capsys, RAISING, *spec.arguments)
        if error.startswith('error: building the model failed'):
            continue
        named = re.match(r'error: (--[a-z-]+)(?: needs (--[a-z-]+))?',
                         error).groups()
        options = ['`{}`'.format(o) for o in named if o is not None]
        if not any(all(o in row for o in options) for row in rows):
            missing.append(error)
    assert missing == []


def test_the_guide_names_every_key_of_a_json_of_several_reports():
    import re
    from chainer_computational_cost.cli.args import REPORT_ORDER
    text = ' '.join(guide_section('Output for scripts: json and csv').split())
    keys = re.search(r'keys are the reports, in the order above: (.*?), '
                     r'each holding', text).group(1)
    assert re.findall(r'`(\w+)`', keys) == list(REPORT_ORDER)


# Output files: the name itself is checked before the run

def _never_measured(monkeypatch):
    """calibrate's measuring replaced by a failure: a mistake it reports
    is found before minutes of measuring."""
    def calibrate(**kwargs):
        raise AssertionError('measured')
    monkeypatch.setattr('chainer_computational_cost.cli.calibrate.'
                        'calibrate', calibrate)


@pytest.mark.parametrize('variable', ['PMI_SIZE', 'OMPI_COMM_WORLD_SIZE'])
def test_calibrate_is_refused_under_mpiexec(variable, tmp_path, monkeypatch,
                                            capsys):
    # each rank would measure and write --out, each saying 'saved' with
    # its own figures: one line from rank 0 before anything is measured
    _never_measured(monkeypatch)
    monkeypatch.setenv(variable, '2')
    assert error_of(capsys, 'calibrate', '--out',
                    str(tmp_path / 'c.json')) == (
        'error: calibrate measures this machine from one process, not under '
        'mpiexec (2 ranks here would each measure and write --out): run it '
        'alone')
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setenv(variable, '1')  # mpiexec -n 1: one process
    with pytest.raises(AssertionError, match='measured'):
        run('calibrate', '--out', str(tmp_path / 'c.json'))


def test_an_empty_output_name_is_refused(tmp_path, monkeypatch, capsys):
    _never_measured(monkeypatch)
    monkeypatch.chdir(tmp_path)
    assert error_of(capsys, 'calibrate', '--out', '') == (
        'error: --out is empty: give a file name such as calibration.json')
    assert error_of(capsys, RAISING, '--plot-summary', '') == (
        'error: --plot-summary is empty: give a file name such as plot.png')
    assert os.listdir(str(tmp_path)) == []


def test_a_name_too_long_for_the_file_system_is_refused(tmp_path,
                                                        monkeypatch, capsys):
    # 300 characters and an extension: more than the 255 bytes a name
    # may have on Linux's file systems, told by the name (as the API's
    # plots tell it)
    _never_measured(monkeypatch)
    out = str(tmp_path / ('a' * 300 + '.json'))
    assert error_of(capsys, 'calibrate', '--out', out) == (
        'error: --out {!r}: its file name is 305 bytes long, more than the '
        '255 its file system takes: give a shorter name such as '
        'calibration.json'.format(out))
    plot = str(tmp_path / ('a' * 300 + '.png'))
    assert error_of(capsys, RAISING, '--plot-summary', plot) == (
        'error: --plot-summary {!r}: its file name is 304 bytes long, more '
        'than the 255 its file system takes: give a shorter name such as '
        'plot.png'.format(plot))
    assert os.listdir(str(tmp_path)) == []


def test_a_directory_that_is_a_file_is_said_to_be_one(tmp_path, monkeypatch,
                                                      capsys):
    _never_measured(monkeypatch)
    (tmp_path / 'f').write_bytes(b'')
    for out in (tmp_path / 'f' / 'c.json', tmp_path / 'f' / 'd' / 'c.json'):
        assert error_of(capsys, 'calibrate', '--out', str(out)) == (
            'error: --out {!r}: cannot write in directory {!r}: {!r} is a '
            'file, not a directory'.format(str(out), str(out.parent),
                                           str(tmp_path / 'f')))


def test_a_writable_name_is_created_and_removed(tmp_path, monkeypatch,
                                                capsys):
    # the check passes (the measuring is then the first failure) and
    # leaves nothing behind
    _never_measured(monkeypatch)
    with pytest.raises(AssertionError, match='measured'):
        main(['calibrate', '--out', str(tmp_path / 'c.json')])
    assert os.listdir(str(tmp_path)) == []


# --measured: one or two worker counts, each once

@pytest.mark.parametrize('measured', [
    ('--measured', '8=0.5', '--measured', '16=0.6'),
    ('--measured', '8=0.5,16=0.6')])
def test_steps_measured_on_two_worker_counts(measured):
    # both steps reach the report: the smaller count fixes the compute
    # (its step is the 0.5 s measured, 500.0 ms), the other the jitter
    # (the 32 gradient bytes take microseconds even at the slowest
    # network: the 0.1 s more at 16 are stragglers'); the last alone
    # would anchor only t_compute, at 16
    status, text = run('cli_models:build_linear', '--shape', '4,3',
                       '--mode', 'csv', '--train', '--device', 'a100',
                       '--workers', '8,16', '--network', 'ib-edr',
                       '--columns', 'workers,t_step,anchored', *measured)
    assert status == 0
    assert text.splitlines()[1] == '8,500.0,"t_compute, jitter"'


@pytest.mark.parametrize('measured, message', [
    (('8=0.5', '--measured', '8=0.6'), 'gives a step on 8 workers more '
     'than once: one time per worker count'),
    (('8=0.5,8=0.6',), 'gives a step on 8 workers more than once: one time '
     'per worker count'),
    (('8=0.5,16=0.6,32=0.7',), 'gives steps on 3 worker counts (8, 16, '
     '32): the report is fitted to one or two'),
    (('8=0.5,16=0.6', '--measured', '32=0.7'), 'gives steps on 3 worker '
     'counts (8, 16, 32): the report is fitted to one or two'),
])
def test_measured_steps_refused(measured, message, capsys):
    assert error_of(capsys, RAISING, *SCALING, '--measured', *measured) == (
        'error: argument --measured: {} (see --help)'.format(message))


# --network: a file whatever its name, a missing path said to be missing

PRESETS = ('ib-edr, ib-hdr200, ib-ndr, eth-25g, eth-100g, nvlink-a100, '
           'eth-50g, roce-25g, nvlink-p100, pcie3-x16, nvlink-v100, ib-fdr, '
           'eth-10g, ib-hdr200x8, pcie4-x16, ib-edrx8')


def test_a_network_file_of_any_name_is_read(tmp_path, monkeypatch):
    # netbench --output takes any name: net.txt is a network file too.
    # build_linear's gradients: 3*2 + 2 = 8 float32, 32 bytes; over 2
    # workers on 1e9 B/s and 1 us: 2*1/2 * 32/1e9 s + 2*1 * 1e-6 s =
    # 0.032 us + 2 us = 2.032 us
    from chainer_computational_cost.core import devices
    monkeypatch.chdir(tmp_path)
    devices.save_network(devices.Network('mine', 'm', 1e9, 1e-6),
                         'net.txt')
    for name in ('net.txt', str(tmp_path / 'net.txt')):
        status, text = run('cli_models:build_linear', '--shape', '4,3',
                           '--train', '--device', 'a100', '--workers', '2',
                           '--network', name, '--mode', 'csv', '--columns',
                           'workers,t_allreduce', '--time-unit', 'us')
        assert (status, text) == (0, 'Workers,T allreduce us\n2,2.032\n')


@pytest.mark.skipif(not os.path.isdir('/dev/fd'), reason='no /dev/fd')
def test_a_network_file_from_a_pipe_is_read(tmp_path, monkeypatch):
    # a shell's <(cat net.json) is a pipe, no regular file: it was 'no
    # such network file'.  The figures of the test above: 2.032 us
    from chainer_computational_cost.core import devices
    monkeypatch.chdir(tmp_path)
    devices.save_network(devices.Network('mine', 'm', 1e9, 1e-6),
                         'net.json')
    read, write = os.pipe()
    try:
        os.write(write, (tmp_path / 'net.json').read_bytes())
        os.close(write)
        status, text = run('cli_models:build_linear', '--shape', '4,3',
                           '--train', '--device', 'a100', '--workers', '2',
                           '--network', '/dev/fd/{}'.format(read), '--mode',
                           'csv', '--columns', 'workers,t_allreduce',
                           '--time-unit', 'us')
    finally:
        os.close(read)
    assert (status, text) == (0, 'Workers,T allreduce us\n2,2.032\n')


@pytest.mark.parametrize('name', ['NET.JSON', 'nodir/net', 'x.json/',
                                  'net.Json'])
def test_a_missing_path_is_no_such_network_file(name, tmp_path, monkeypatch,
                                                capsys):
    monkeypatch.chdir(tmp_path)
    assert error_of(capsys, RAISING, *SCALING[:5], '--network', name) == (
        'error: --network {!r}: no such network file (written by netbench; '
        'the presets are {})'.format(name, PRESETS))


def test_a_name_that_is_no_path_is_an_unknown_network(tmp_path, monkeypatch,
                                                      capsys):
    monkeypatch.chdir(tmp_path)
    err = error_of(capsys, RAISING, *SCALING[:5], '--network', 'ib-edx')
    assert err.startswith("error: unknown network 'ib-edx'; the presets "
                          "are 'ib-edr',")


def test_two_plots_into_one_file_are_refused_before_the_run(tmp_path,
                                                            monkeypatch,
                                                            capsys):
    # the summary plot was written, then overwritten by the memory plot:
    # status 0 and one plot lost; './x.png' and a link to it are x.png too
    monkeypatch.chdir(tmp_path)
    os.symlink('x.png', 'link.png')
    for second in ('x.png', './x.png', str(tmp_path / 'link.png')):
        assert error_of(capsys, RAISING, '--plot-summary', 'x.png',
                        '--plot-memory', second) == (
            "error: --plot-summary and --plot-memory name the same file {!r}: "
            'one plot would overwrite the other; give each plot its own '
            'file'.format(second))
    assert sorted(os.listdir(str(tmp_path))) == ['link.png']


def test_two_plots_into_one_file_by_a_hard_link_are_refused(tmp_path,
                                                            monkeypatch,
                                                            capsys):
    # a hard link is the file itself under another name, which no path
    # resolves to: the file's identity does
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'x.png').write_bytes(b'old')
    os.link('x.png', 'hard.png')
    assert error_of(capsys, RAISING, '--plot-summary', 'x.png',
                    '--plot-memory', 'hard.png') == (
        "error: --plot-summary and --plot-memory name the same file "
        "'hard.png': one plot would overwrite the other; give each plot its "
        'own file')
    assert (tmp_path / 'x.png').read_bytes() == b'old'


@pytest.mark.parametrize('plot', ['net.svg', './net.svg', 'hard.svg'])
def test_a_plot_over_the_network_file_read_is_refused(plot, tmp_path,
                                                      monkeypatch, capsys):
    # the scaling plot was written over the network file it read (netbench
    # --output takes any name): the user's measured network lost
    from chainer_computational_cost.core import devices
    monkeypatch.chdir(tmp_path)
    devices.save_network(devices.Network('mine', 'm', 1e9, 1e-6),
                         'net.svg')
    os.link('net.svg', 'hard.svg')
    saved = (tmp_path / 'net.svg').read_bytes()
    assert error_of(capsys, RAISING, *SCALING[:5], '--network', 'net.svg',
                    '--plot-scaling', plot) == (
        "error: --plot-scaling names the file --network reads ({!r}): the "
        'plot would overwrite it; give the plot its own file'.format(plot))
    assert (tmp_path / 'net.svg').read_bytes() == saved


def test_a_plot_over_the_calibration_read_is_refused(tmp_path, monkeypatch,
                                                     capsys):
    from calibration_fixtures import literal_calibration
    monkeypatch.chdir(tmp_path)
    literal_calibration().save('cal.png')
    saved = (tmp_path / 'cal.png').read_bytes()
    assert error_of(capsys, RAISING, '--predict-time', 'cal.png',
                    '--plot-summary', 'cal.png') == (
        "error: --plot-summary names the file --predict-time reads "
        "('cal.png'): the plot would overwrite it; give the plot its own "
        'file')
    assert (tmp_path / 'cal.png').read_bytes() == saved


def test_a_new_path_another_rank_probes_at_once_is_writable(
        tmp_path, monkeypatch):
    # under mpiexec every rank probes the same new plot path: the file
    # another rank made between this rank's look and its own creation
    # was 'File exists', and this rank refused the run
    from chainer_computational_cost.cli import args
    path = str(tmp_path / 'x.png')
    real_open = os.open

    def other_rank_first(name, flags, *mode):
        if flags & os.O_EXCL and not os.path.exists(name):
            os.close(real_open(name, os.O_WRONLY | os.O_CREAT, 0o666))
        return real_open(name, flags, *mode)
    monkeypatch.setattr(os, 'open', other_rank_first)
    args.check_output_file(path, '--plot-summary', 'plot.png')
    # the other rank's file, which that rank removes; none of this one's
    assert os.listdir(str(tmp_path)) == ['x.png']


def test_a_fifo_no_one_reads_is_refused_not_waited_on(tmp_path, capsys):
    os.mkfifo(str(tmp_path / 'x.png'))
    err = error_of(capsys, RAISING, '--plot-summary',
                   str(tmp_path / 'x.png'))
    assert err.startswith("error: --plot-summary {!r} cannot be written: "
                          .format(str(tmp_path / 'x.png')))


def test_a_link_to_a_file_not_yet_written_is_taken(tmp_path, monkeypatch):
    # the link's target was created with O_EXCL at the link itself: 'File
    # exists'; the file is written through the link, its target probed
    from chainer_computational_cost.cli.args import check_output_file
    monkeypatch.chdir(tmp_path)
    os.symlink('net.json', 'link.json')
    check_output_file('link.json', '--output', 'network.json')
    assert sorted(os.listdir(str(tmp_path))) == ['link.json']


@pytest.mark.parametrize('option', ['--out', '--output'])
def test_a_file_name_ending_with_a_slash_is_refused(option, tmp_path):
    # it read as the file 'c.json' in the directory, then the calibration
    # of minutes could not be saved: 'Is a directory'
    from chainer_computational_cost.cli.args import check_output_file
    from chainer_computational_cost.cli.models import CommandError
    path = str(tmp_path / 'c.json') + '/'
    with pytest.raises(CommandError) as e:
        check_output_file(path, option, 'c.json')
    assert str(e.value) == (
        '{} {!r} ends with a /, which names a directory: give a file name '
        'such as c.json'.format(option, path))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize('command', ['netbench', 'calibrate'])
def test_a_command_after_an_option_is_told_to_go_first(command, capsys):
    # it read as the model: "unknown model 'netbench'"
    told = ("error: {0!r} is a command, which goes first, before any "
            'option: python -m chainer_computational_cost {0} ...'.format(
                command))
    assert error_of(capsys, '--train', command) == told
    # with its own options after it: "unrecognized arguments: --out x"
    assert error_of(capsys, '--shape', '2,8', command, '--out', 'x') == told


def test_every_choice_in_any_case():
    # as --dtype, --mode and the units: a choice is a name, not a spelling
    from chainer_computational_cost.cli.args import build_calibrate_parser
    from chainer_computational_cost.cli.args import build_parser
    args = build_parser().parse_args([
        'm:f', '--predict-by', 'TYPE', '--overlap', 'DDP',
        '--scaling-model', 'Bound', '--optimizer', 'Adam'])
    assert (args.predict_by, args.overlap, args.scaling_model,
            args.optimizer) == ('type', 'ddp', 'bound', 'adam')
    assert build_calibrate_parser().parse_args(
        ['--out', 'c.json', '--clock', 'CPU']).clock == 'cpu'


# Writing the output

def test_a_report_longer_than_one_write_is_written_whole(tmp_path,
                                                         monkeypatch):
    # written in pieces of 8 KiB (8192 characters): this one is nearly 3
    write_module(tmp_path, 'cli_many_relus',
                 'import chainer\n'
                 'import chainer.functions as F\n'
                 '\n'
                 '\n'
                 'class Relus(chainer.Chain):\n'
                 '    def forward(self, x):\n'
                 '        for _ in range(2000):\n'
                 '            x = F.relu(x)\n'
                 '        return x\n'
                 '\n'
                 '\n'
                 'def build():\n'
                 '    return Relus()\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    status, text = run('cli_many_relus:build', '--shape', '2,3', '--mode',
                       'csv', '--columns', 'name,flops', '--unit', 'raw')
    assert status == 0
    # each ReLU on 2*3 elements: 6 FLOPs; 2000 of them: 12000
    assert text == 'Layer name,FLOPs\n' + ''.join(
        'ReLU-{},6\n'.format(i) for i in range(1, 2001)) + 'total,12000\n'
    # the header 17 characters; 'ReLU-1,6\n' 9 for 1-9, one more for each
    # digit after: 9*9 + 90*10 + 900*11 + 1001*12 = 22893; the total 12
    assert len(text) == 17 + 22893 + 12 > 2 * 8192
