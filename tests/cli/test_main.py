"""The command line (cli/main.py), main() in-process on the tiny models of
cli_models.py (a full-size model would take seconds a run): its reports,
the progress labels of the runs it makes, the logits a training step
accepts, and the ``calibrate`` command's checks, progress bar and
summary line.
"""

import io
import warnings
import json
import os
import sys

import chainer
import chainer.links as L
import pytest

from chainer_computational_cost.report import plots
from chainer_computational_cost.cli.main import main
from chainer_computational_cost.cli.main import parse_shape
from chainer_computational_cost.cli import calibrate as calibrate_command
from chainer_computational_cost.core.records import ReportWarning
from chainer_computational_cost.cli import main as cli
from chainer_computational_cost.cli.progress import progress_bar

import cli_models
from cli_runs import error_of
from cli_runs import HERE
from cli_runs import unwritable_stdout
from cli_runs import ROOT
from cli_runs import run
from cli_runs import write_module


def line_of(marker, path=cli_models.__file__):
    """'path:line' of the one line of ``path`` containing ``marker``."""
    with open(path) as f:
        numbers = [i for i, line in enumerate(f, 1) if marker in line]
    assert len(numbers) == 1
    return '{}:{}'.format(path, numbers[0])


def test_factory_model_raw_csv():
    status, text = run('cli_models:build_tiny', '--shape', '2,3', '--unit',
                       'raw', '--mode', 'csv')
    assert status == 0
    # 6 elements of float32: 6 FLOPs, 24 bytes each way
    assert text == ('Layer name,FLOPs,MemRead B,MemWrite B,MemR+W B\n'
                    'ReLU-1,6,24,24,48\n'
                    'total,6,24,24,48\n')


def test_summary_and_columns_and_dtype():
    status, text = run('cli_models:build_tiny', '--shape', '4', '--unit',
                       'raw', '--summary', '--columns', 'type,mread',
                       '--dtype', 'float16')
    assert status == 0
    # 4 elements of 2 bytes
    assert text.splitlines()[2] == '|ReLU|8|'


def total_row(*options):
    status, text = run('cli_models:build_conv_linear', '--shape', '1,3,8,8',
                       '--unit', 'raw', '--summary', '--mode', 'csv',
                       '--columns', 'type,flops,mread,mwrite,mrw', *options)
    assert status == 0
    return text.splitlines()[-1]


# Input 1x3x8x8 (192 elements). Convolution 3->4, 3x3, no padding: output
# 1x4x6x6 (144), 27 multiply-adds each: 3888 FLOPs; reads x, W (108) and
# b (4), 304 elements; writes 144. Linear 144->5 after a free reshape:
# 720 multiply-adds + 5 bias adds = 725 FLOPs; reads 144 + 720 + 5 = 869;
# writes 5. In all 4613 FLOPs, 1173 elements read, 149 written.

def test_dtype_float32_is_the_default():
    assert total_row() == 'total,4613,4692,596,5288'
    assert total_row('--dtype', 'float32') == 'total,4613,4692,596,5288'


def test_dtype_float16_halves_traffic_not_flops():
    # The weights are float16 too (2 bytes), or the bytes would not halve.
    assert total_row('--dtype', 'float16') == 'total,4613,2346,298,2644'


def test_dtype_float64_doubles_traffic():
    assert total_row('--dtype', 'float64') == 'total,4613,9384,1192,10576'


def test_columns_with_spaces():
    status, text = run('cli_models:build_tiny', '--shape', '4', '--unit',
                       'raw', '--mode', 'csv', '--columns', ' name , flops ')
    assert status == 0
    assert text == 'Layer name,FLOPs\nReLU-1,4\ntotal,4\n'


def listed_columns(err):
    """The column names an error message offers, after 'are '."""
    return err.split('available columns are ', 1)[1].split(', ')


# Subsets: other report columns may be added to the lists.
LAYER_COLUMNS = {'name', 'type', 'flops', 'mread', 'mwrite', 'mrw', 'flops%',
                 'mread%', 'mwrite%', 'mrw%', 'input_shapes', 'output_shapes',
                 'params', 'traceback'}
SUMMARY_COLUMNS = {'type', 'name', 'n_layers', 'flops', 'mread', 'mwrite',
                   'mrw', 'flops%', 'mread%', 'mwrite%', 'mrw%'}


@pytest.mark.parametrize('columns', ['name,,flops', 'name,', ' ', ''])
def test_empty_column_names_are_errors(columns, capsys):
    err = error_of(capsys, 'cli_models:build_tiny', '--columns', columns)
    assert err.startswith('error: --columns {!r} has an empty column name; '
                          'available columns are '.format(columns))
    assert LAYER_COLUMNS <= set(listed_columns(err))


def test_empty_summary_column_lists_summary_columns(capsys):
    err = error_of(capsys, 'cli_models:build_tiny', '--summary',
                   '--columns', 'type,')
    listed = set(listed_columns(err))
    assert SUMMARY_COLUMNS <= listed
    assert 'input_shapes' not in listed


def test_unknown_column(capsys):
    err = error_of(capsys, 'cli_models:build_tiny', '--columns', 'name,foo')
    assert err.startswith("error: --columns: unknown column(s) ['foo']; "
                          "available columns are ['name', 'type', ")


def test_negative_n_digits(capsys):
    err = error_of(capsys, 'cli_models:build_tiny', '--n-digits', '-1')
    assert err == 'error: --n-digits must be an int from 0 to 10, got -1'


def test_input_of_wrong_rank(capsys):
    err = error_of(capsys, 'cli_models:build_conv_linear',
                   '--shape', '1,3,8')
    assert err == (
        'error: the model rejected input of shape (1, 3, 8) and dtype '
        'float32 at {}: InvalidType: Invalid operation is performed in: '
        'Convolution2DFunction (Forward); Expect: in_types[0].ndim == 4; '
        'Actual: 3 != 4'.format(line_of('# conv call')))


def test_input_of_wrong_shape(capsys):
    err = error_of(capsys, 'cli_models:build_conv_linear', '--shape',
                   '1,2,8,8', '--dtype', 'float16')
    assert err == (
        'error: the model rejected input of shape (1, 2, 8, 8) and dtype '
        'float16 at {}: InvalidType: Invalid operation is performed in: '
        'Convolution2DFunction (Forward); Expect: in_types[0].shape[1] == '
        'in_types[1].shape[1] * 1; Actual: 2 != 3'.format(
            line_of('# conv call')))


def test_input_too_big_to_allocate(capsys):
    # 10**27 elements: numpy refuses at once, and before the model is built
    # (this factory would raise).
    err = error_of(capsys, 'cli_models:build_raising', '--shape',
                   '1000000000,1000000000,1000000000')
    assert err.startswith(
        'error: cannot allocate an input of shape (1000000000, 1000000000, '
        '1000000000) and dtype float32: ')


def test_factory_that_raises(capsys):
    err = error_of(capsys, 'cli_models:build_raising')
    assert err == ('error: building the model failed at {}: ValueError: '
                   'no weights for width 0'.format(
                       line_of('# factory raise')))


def test_factory_that_returns_a_non_callable(capsys):
    err = error_of(capsys, 'cli_models:build_not_callable')
    assert err == ('error: the factory of cli_models:build_not_callable '
                   'returned an object of type int, which is not callable: '
                   'it must return the model')


def test_factory_that_returns_none(capsys):
    err = error_of(capsys, 'cli_models:build_none')
    assert err == ('error: the factory of cli_models:build_none returned '
                   'None: it must return the model')


def test_factory_that_is_not_callable(capsys):
    err = error_of(capsys, 'cli_models:NOT_A_FACTORY')
    assert err == ('error: cli_models:NOT_A_FACTORY is an object of type '
                   'str, not a factory: give a function that returns the '
                   'model')


def test_missing_factory(capsys):
    err = error_of(capsys, 'cli_models:nothing')
    assert err == ("error: cannot find the factory of model "
                   "'cli_models:nothing': module 'cli_models' has no "
                   "attribute 'nothing'")


def test_module_that_does_not_exist(capsys):
    err = error_of(capsys, 'no_such_module_here:build')
    assert err == ("error: cannot import module 'no_such_module_here' of "
                   "model 'no_such_module_here:build': No module named "
                   "'no_such_module_here'")


def test_module_that_fails_to_import(tmp_path, monkeypatch, capsys):
    # The module exists; what it imports does not: the user's line shows.
    path = write_module(tmp_path, 'cli_bad_import',
                        '"""Broken."""\n'
                        'import no_such_dependency_here\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    err = error_of(capsys, 'cli_bad_import:build')
    assert err == ("error: importing module 'cli_bad_import' failed at "
                   "{}:2: ModuleNotFoundError: No module named "
                   "'no_such_dependency_here'".format(path))


def test_module_with_a_syntax_error(tmp_path, monkeypatch, capsys):
    path = write_module(tmp_path, 'cli_bad_syntax',
                        'def build():\n'
                        '    return (\n'
                        '\n'
                        'x = 1 +\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    err = error_of(capsys, 'cli_bad_syntax:build')
    assert err.startswith("error: importing module 'cli_bad_syntax' failed "
                          "at {}:".format(path))
    assert ': SyntaxError: ' in err


def test_bug_in_this_package_keeps_its_traceback(capsys):
    # A one-line message would hide where the bug is.
    with pytest.raises(RuntimeError, match='bug'):
        run('cli_models:build_package_bug')


@pytest.mark.parametrize('spec', ['nosuchmodel', ':build', 'cli_models:'])
def test_unknown_model_name(spec, capsys):
    err = error_of(capsys, spec)
    assert err == ('error: unknown model {!r}: use one of googlenet, '
                   'resnet101, resnet152, resnet50, vgg16, vgg19 or '
                   'package.module:factory'.format(spec))


@pytest.mark.parametrize('bad', ['', '1,,3', '1,-3', 'a,b'])
def test_parse_shape_rejects(bad):
    with pytest.raises(Exception, match='positive integers'):
        parse_shape(bad)


def test_bad_unit_exits(capsys):
    # checked before the model is built (build_raising would raise)
    err = error_of(capsys, 'cli_models:build_raising', '--unit', 'X')
    # (not the API's 'or None': no command line can type None)
    assert err == ("error: --unit must be one of 'raw', 'K', 'M', 'G', 'T', "
                   "'autoaligned', 'auto' (any case), got 'X'")


def test_bad_dtype_exits_before_building(capsys):
    with pytest.raises(SystemExit) as e:
        main(['cli_models:build_raising', '--dtype', 'int8'])
    assert e.value.code == 2
    assert ("argument --dtype: invalid choice: 'int8' (choose from "
            "'float16', 'float32', 'float64')") in capsys.readouterr().err


# --train on Linear(3 -> 2) at batch 4 (float32, FMA as one FLOP), labels
# drawn at random (the costs do not depend on them):
#   forward  LinearFunction: 4*2*3 multiply-adds + 8 bias adds = 32 FLOPs;
#            reads x (12), W (6), b (2): 80 B; writes 8: 32 B.
#            SoftmaxCrossEntropy (n = 8 logits, M = 4 rows, mean):
#            3n + 2M + 2 * (M - 1 + 1) = 24 + 8 + 8 = 40 FLOPs; reads the
#            logits, the int32 labels and the ignore label: 32 + 16 + 4;
#            writes the scalar loss: 4 B.
#   backward its gradient (softmax cached): n + 3M + 1 = 21 FLOPs; reads
#            y, t, the loss gradient and the ignore label: 32+16+4+4 = 56;
#            writes gx: 32 B.  x is an array, so no LinearGradData;
#            LinearGradWeight: 2*3 dot products of length 4 = 24 FLOPs,
#            reads x and gy (20 elements), writes 6; the bias gradient's
#            Sum over 4 rows: 2*3 = 6 additions, reads 8, writes 2.
LINEAR_TRAIN_SUMMARY = (
    'Phase,Layer type,# Layers,FLOPs,MemRead B,MemWrite B,MemR+W B\n'
    'forward,LinearFunction,1,32,80,32,112\n'
    'forward,SoftmaxCrossEntropy,1,40,52,4,56\n'
    'backward,_SoftmaxCrossEntropyGrad_NoDoubleBackprop,1,21,56,32,88\n'
    'backward,LinearGradWeight,1,24,80,24,104\n'
    'backward,Sum,1,6,32,8,40\n'
    # --optimizer adam (the default) on W (6) and b (2), 8 elements:
    # 10 * 8 = 80 FLOPs; reads p, g, m, v: 4 * 4 * 8 = 128 B; writes p,
    # m, v: 3 * 4 * 8 = 96 B
    'update,AdamRule,2,80,128,96,224\n'
    ',total,7,203,428,196,624\n')
LINEAR_TRAIN_PHASES = (
    'Phase,# Layers,FLOPs,MemRead B,MemWrite B,MemR+W B\n'
    'forward,2,72,132,36,168\n'
    'backward,3,51,168,64,232\n'
    'update,2,80,128,96,224\n'
    'total,7,203,428,196,624\n')


def test_train_prints_the_summary_by_phase():
    assert run('cli_models:build_linear', '--shape', '4,3', '--unit', 'raw',
               '--mode', 'csv', '--train') == (0, LINEAR_TRAIN_SUMMARY)


def test_train_summary_is_by_phase():
    assert run('cli_models:build_linear', '--shape', '4,3', '--unit', 'raw',
               '--mode', 'csv', '--train', '--summary') == (
                   0, LINEAR_TRAIN_SUMMARY)


def test_train_phases():
    assert run('cli_models:build_linear', '--shape', '4,3', '--unit', 'raw',
               '--mode', 'csv', '--train', '--phases') == (
                   0, LINEAR_TRAIN_PHASES)


@pytest.mark.parametrize('optimizer, update', [
    # 8 parameters: SGD 1 FLOP, 2 * 4 bytes read, 4 written per element
    ('sgd', 'update,2,8,64,32,96\n'),
    # MomentumSGD: 3 FLOPs, 3 * 4 bytes read, 2 * 4 written
    ('momentumsgd', 'update,2,24,96,64,160\n')])
def test_train_runs_the_update_of_the_optimizer(optimizer, update):
    status, text = run('cli_models:build_linear', '--shape', '4,3',
                       '--unit', 'raw', '--mode', 'csv', '--train',
                       '--phases', '--optimizer', optimizer)
    assert status == 0
    assert text.splitlines()[3] + '\n' == update


def test_train_logits_in_a_dict_of_one_entry():
    # The same Linear(3 -> 2), inside a Chain: the same step.
    assert run('cli_models:build_one_output', '--shape', '4,3', '--unit',
               'raw', '--mode', 'csv', '--train', '--phases') == (
                   0, LINEAR_TRAIN_PHASES)


def test_train_project_equals_the_step_at_that_batch():
    assert run('cli_models:build_linear', '--shape', '4,3', '--unit', 'raw',
               '--mode', 'csv', '--train', '--project') == (
                   0, LINEAR_TRAIN_SUMMARY)


def test_phases_without_train_is_all_forward():
    status, text = run('cli_models:build_conv_linear', '--shape', '1,3,8,8',
                       '--unit', 'raw', '--mode', 'csv', '--phases')
    assert status == 0
    assert text == ('Phase,# Layers,FLOPs,MemRead B,MemWrite B,MemR+W B\n'
                    'forward,3,4613,4692,596,5288\n'
                    'backward,0,0,0,0,0\n'
                    'total,3,4613,4692,596,5288\n')


NEEDS_LOGITS = ('error: --train needs the model to return logits of shape '
                '(N, n_classes): a Variable or array, alone or as the one '
                'entry of a dict; it returned ')


@pytest.mark.parametrize('model,shape,returned', [
    ('build_two_outputs', '4,3', "a dict of 2 entries ('relu', 'sigmoid')"),
    ('build_tuple_output', '4,3', 'an object of type tuple'),
    ('build_tiny', '4', 'shape (4,) for a batch of 4'),
    ('build_tiny', '4,3,2', 'shape (4, 3, 2) for a batch of 4'),
])
def test_train_needs_logits(model, shape, returned, capsys):
    err = error_of(capsys, 'cli_models:' + model, '--shape', shape,
                   '--train')
    assert err == NEEDS_LOGITS + returned


# The links of ConvLinear at 1x3x8x8 (figures of the comment above
# test_dtype_float32_is_the_default): conv holds 108 + 4 parameters, fc
# 720 + 5; the reshape L.Linear makes is a call of fc's.
LINKS = ('Link,# Params,# Calls,# Layers,FLOPs,MemRead B,MemWrite B,'
         'MemR+W B\n'
         '/,837,1,3,4613,4692,596,5288\n'
         '/conv,112,1,1,3888,1216,576,1792\n'
         '/fc,725,1,2,725,3476,20,3496\n'
         'total,837,1,3,4613,4692,596,5288\n')


def links(*options):
    return run('cli_models:build_conv_linear', '--shape', '1,3,8,8',
               '--unit', 'raw', '--links', *options)


def test_links_every_level():
    assert links('--mode', 'csv') == (0, LINKS)


def test_links_depth_0_keeps_the_root():
    lines = LINKS.splitlines(True)
    assert links('0', '--mode', 'csv') == (
        0, lines[0] + lines[1] + lines[4])


def test_links_md_indents_by_depth():
    status, text = links('1')
    assert status == 0
    assert text.splitlines()[2:] == [
        '|/|837|1|3|4613|4692|596|5288|',
        '|\u00a0\u00a0conv|112|1|1|3888|1216|576|1792|',
        '|\u00a0\u00a0fc|725|1|2|725|3476|20|3496|',
        '|total|837|1|3|4613|4692|596|5288|']


@pytest.mark.parametrize('depth', ['-1', 'x', '1.5'])
def test_links_bad_depth(depth, capsys):
    with pytest.raises(SystemExit) as e:
        main(['cli_models:build_raising', '--links', depth])
    assert e.value.code == 2
    assert capsys.readouterr().err == (
        'error: argument --links: depth must be an integer >= 0, got {!r} '
        '(a --links without a depth goes after the model) (see '
        '--help)\n'.format(depth))


def test_links_before_the_model_is_explained(capsys):
    with pytest.raises(SystemExit):
        main(['--links', 'cli_models:build_tiny'])
    assert "got 'cli_models:build_tiny'" in capsys.readouterr().err


def test_links_columns_are_checked_against_the_link_report(capsys):
    err = error_of(capsys, 'cli_models:build_raising', '--links',
                   '--columns', 'name,type')
    assert err.startswith("error: --columns: unknown column(s) ['type']; "
                          "available columns are ['name', 'n_params', ")


# Roofline of ConvLinear on a given device of 1000 FLOP/s and 1024 B/s:
# ridge point 1000 / 1024 = 0.977 FLOP/B.
#   conv: 3888 FLOPs / 1792 B = 2.170 FLOP/B, compute bound:
#         t_compute = 3888 / 1000 = 3.888 s, t_memory = 1792 / 1024 = 1.75
#   reshape: nothing to do: no intensity, no bound, zero times
#   fc: 725 / 3496 = 0.207 FLOP/B, memory bound: 0.725 s and 3496 / 1024 =
#       3.4140625 s
#   total: 4613 / 5288 = 0.872; t_roofline = 3.888 + 3.4140625 = 7.302;
#       t_memory = 5288 / 1024 = 5.1640625
ROOFLINE = (
    'Layer name,FLOPs,MemR+W B,Intensity FLOP/B,Peak used,T compute s,'
    'T memory s,T roofline s,Bound\n'
    'Convolution2DFunction-1,3888,1792,2.17,given,3.888,1.75,3.888,'
    'compute\n'
    'Reshape-1,0,0,,given,0.0,0.0,0.0,\n'
    'LinearFunction-1,725,3496,0.207,given,0.725,3.414,3.414,memory\n'
    'total,4613,5288,0.872,given,4.613,5.164,7.302,\n')


def roofline(*options):
    return run('cli_models:build_conv_linear', '--shape', '1,3,8,8',
               '--unit', 'raw', '--mode', 'csv', '--peak-flops', '1000',
               '--bandwidth', '1024', *options)


def test_roofline_of_a_given_device():
    assert roofline('--time-unit', 's') == (0, ROOFLINE)


def test_roofline_default_time_unit_is_us():
    status, text = roofline('--columns', 'name,t_compute', '--n-digits',
                            '0')
    assert (status, text) == (0, 'Layer name,T compute us\n'
                                 'Convolution2DFunction-1,3888000\n'
                                 'Reshape-1,0\n'
                                 'LinearFunction-1,725000\n'
                                 'total,4613000\n')


def test_roofline_with_the_other_reports():
    # Every report asked for is printed, in the documented order, each as
    # it prints alone, a blank line between (md: csv holds one table).
    def alone(*options):
        status, text = run('cli_models:build_conv_linear', '--shape',
                           '1,3,8,8', '--unit', 'raw', *options)
        assert status == 0
        return text
    device = ('--peak-flops', '1000', '--bandwidth', '1024')
    parts = [alone(*device), alone('--links'), alone('--phases'),
             alone('--summary')]
    # the given order of the options does not matter
    assert alone('--summary', '--phases', '--links', *device) == \
        '\n'.join(parts)
    # ROOFLINE's figures, in md
    assert parts[0].splitlines()[3] == (
        '|Reshape-1|0|0||given|0.0|0.0|0.0||')
    assert [p.split('|', 2)[1] for p in parts] == [
        'Layer name', 'Link', 'Phase', 'Layer type']


def test_csv_holds_one_report(capsys):
    # refused before the model is built (this factory raises)
    err = error_of(capsys, 'cli_models:build_raising', '--mode', 'csv',
                   '--device', 'a100', '--links', '--summary')
    assert err == ('error: --mode csv writes one table, and 3 reports are '
                   'asked for (--device, --links, --summary): ask for one, '
                   'or use --mode json (one document holding every report) '
                   'or md')


def test_roofline_of_a_preset():
    # The GTX 1080 Ti preset: 10.6 TFLOP/s (fp32), 484 GB/s.
    status, text = run('cli_models:build_tiny', '--shape', '4', '--unit',
                       'raw', '--mode', 'csv', '--device', 'gtx1080ti',
                       '--columns', 'name,peak_used,peak_flops,bandwidth')
    assert status == 0
    assert text.splitlines()[1] == (
        'ReLU-1,fp32 vector,10600000000000.0,484000000000.0')


def test_report_order():
    def first_cells(*options):
        status, text = run('cli_models:build_conv_linear', '--shape',
                           '1,3,8,8', '--mode', 'md', *options)
        assert status == 0
        return [t.split('|', 2)[1] for t in text.split('\n\n')]
    assert first_cells('--summary', '--phases', '--links', '--memory') == [
        'Memory', 'Link', 'Phase', 'Layer type']
    assert first_cells('--summary', '--phases') == ['Phase', 'Layer type']
    assert first_cells('--summary') == ['Layer type']
    assert first_cells() == ['Layer name']


# Each report kind in JSON: numbers stay numbers, the total row last.
@pytest.mark.parametrize('options,first', [
    ((), 'Convolution2DFunction-1'),
    (('--summary',), 'Convolution2DFunction'),
    (('--links',), '/'),
    (('--phases',), 'forward'),
    (('--peak-flops', '1000', '--bandwidth', '1024'),
     'Convolution2DFunction-1'),
])
def test_json_of_every_report(options, first):
    status, text = run('cli_models:build_conv_linear', '--shape', '1,3,8,8',
                       '--unit', 'raw', '--mode', 'json', *options)
    assert status == 0
    rows = json.loads(text)['rows']
    key = 'type' if options == ('--summary',) else 'name'
    assert rows[0][key] == first
    assert rows[-1][key] == 'total'
    assert rows[-1]['flops'] == 4613


def test_json_of_the_training_summary():
    status, text = run('cli_models:build_linear', '--shape', '4,3',
                       '--unit', 'raw', '--mode', 'json', '--train')
    assert status == 0
    rows = json.loads(text)['rows']
    assert [(r['phase'], r['type'], r['flops']) for r in rows] == [
        ('forward', 'LinearFunction', 32),
        ('forward', 'SoftmaxCrossEntropy', 40),
        ('backward', '_SoftmaxCrossEntropyGrad_NoDoubleBackprop', 21),
        ('backward', 'LinearGradWeight', 24), ('backward', 'Sum', 6),
        ('update', 'AdamRule', 80),  # 10 FLOPs x 8 parameters
        (None, 'total', 203)]


def test_json_roofline_times_in_seconds():
    status, text = roofline('--mode', 'json', '--time-unit', 's')
    assert status == 0
    doc = json.loads(text)
    assert doc['units']['t_roofline'] == 's'
    assert [(r['t_compute'], r['t_memory'], r['bound'])
            for r in doc['rows']] == [
        (3.888, 1.75, 'compute'), (0.0, 0.0, None),
        (0.725, 3.414, 'memory'), (4.613, 5.164, None)]


def test_measure_time_adds_a_time_column():
    status, text = run('cli_models:build_conv_linear', '--shape', '1,3,8,8',
                       '--unit', 'raw', '--mode', 'json', '--measure-time',
                       '--time-unit', 's', '--n-digits', '10')
    assert status == 0
    doc = json.loads(text)
    assert doc['units']['time'] == 's'
    rows = doc['rows']
    assert list(rows[0]) == ['name', 'flops', 'mread', 'mwrite', 'mrw',
                             'time']
    times = [r['time'] for r in rows]
    assert all(t >= 0 for t in times)
    # The total is the sum of the layers' (to the rounding of 10 digits).
    assert abs(sum(times[:-1]) - times[-1]) < 1e-9
    # Every other figure is unchanged.
    assert [r['flops'] for r in rows] == [3888, 0, 725, 4613]


def test_measure_time_in_other_reports():
    for options, header in (
            (('--summary',), 'Layer type,# Layers,FLOPs,MemRead B,'
                             'MemWrite B,MemR+W B,Time ms'),
            (('--peak-flops', '1000', '--bandwidth', '1024'),
             'Layer name,FLOPs,MemR+W B,Intensity FLOP/B,Peak used,'
             'T compute us,T memory us,T roofline us,Bound,Time us,'
             'Efficiency')):
        status, text = run('cli_models:build_conv_linear', '--shape',
                           '1,3,8,8', '--unit', 'raw', '--mode', 'csv',
                           '--measure-time', *options)
        assert status == 0
        assert text.splitlines()[0] == header


def test_measure_time_excludes_project(capsys):
    err = error_of(capsys, 'cli_models:build_raising', '--project',
                   '--measure-time')
    assert err == ('error: --project and --measure-time exclude each '
                   'other: a projected report has no measured times '
                   '(measure a real run at the batch size)')


CONV_LINEAR_COLUMNS = 'name,flops,mread,mwrite,input_shapes,output_shapes'


def test_project_equals_a_real_run(capsys):
    # Batch 12: every figure and shape of the projection from batches 1,
    # 2 and 3 is the real run's.
    options = ('cli_models:build_conv_linear', '--shape', '12,3,8,8',
               '--unit', 'raw', '--mode', 'csv', '--columns',
               CONV_LINEAR_COLUMNS)
    projected = run(*options, '--project')
    assert capsys.readouterr().err == ''
    real = run(*options)
    assert projected == real
    # By hand: 12 times the batch-1 figures, but the weights read once:
    # conv reads 12*192 + 112 elements, fc 12*144 + 725.
    assert real[1].splitlines()[1:] == [
        'Convolution2DFunction-1,46656,9664,6912,"[(12, 3, 8, 8), '
        '(4, 3, 3, 3), (4,)]",\"[(12, 4, 6, 6)]"',
        'Reshape-1,0,0,0,"[(12, 4, 6, 6)]","[(12, 144)]"',
        'LinearFunction-1,8700,9812,240,"[(12, 144), (5, 144), (5,)]",'
        '"[(12, 5)]"',
        'total,55356,19476,7152,,']


def test_project_by_hand():
    assert run('cli_models:build_tiny', '--shape', '40,3', '--unit', 'raw',
               '--mode', 'csv', '--project') == (
                   0, 'Layer name,FLOPs,MemRead B,MemWrite B,MemR+W B\n'
                      'ReLU-1,120,480,480,960\n'
                      'total,120,480,480,960\n')


def timed(monkeypatch, seconds):
    """The run at --shape takes ``seconds`` by the command's clock (read
    at its start and at its end)."""
    readings = iter([100.0, 100.0 + seconds])
    monkeypatch.setattr(cli, '_clock', lambda: next(readings))


def test_a_slow_large_batch_suggests_project(monkeypatch, capsys):
    # batch 40 in 8 s: --project runs 1 + 2 + 3 + 9 = 15 samples, about
    # 8 * 15 / 40 = 3 s, and saves 8 * 25 / 40 = 5 s, the threshold; at
    # most batch 1, 2, 3, 4, 9 and 14: 33 samples, 8 * 33 / 40 = 6.6 s
    timed(monkeypatch, 8.0)
    status, text = run('cli_models:build_tiny', '--shape', '40,3', '--unit',
                       'raw', '--mode', 'csv')
    assert (status, text.splitlines()[1]) == (0, 'ReLU-1,120,480,480,960')
    assert capsys.readouterr().err == (
        'note: the run at batch 40 took 8 s; --project gives the same '
        'figures from runs at batch 1, 2, 3 and a check run at 9 (15 '
        'samples instead of 40), in about 3 s; at most 6 runs (33 samples, '
        '7 s) when the memory of a call does not follow the batch on a '
        'line\n')


@pytest.mark.parametrize('batch, seconds', [
    (40, 7.9),  # it would save 7.9 * 25 / 40 = 4.94 s
    (16, 60.0),  # 60 * 1 / 16 = 3.75 s
    (9, 1000.0),  # 15 samples instead of 9: slower
    (3, 1000.0),  # 1 + 2 + 3 = 6 samples instead of 3
    # ResNet50's training step: its weight gradients' scratch bends, and
    # the projection runs batch 1, 2, 3, 9, 4 and 14, 33 samples
    (24, 1000.0),
    (33, 1000.0),
])
def test_no_suggestion_when_project_saves_little(monkeypatch, capsys, batch,
                                                 seconds):
    timed(monkeypatch, seconds)
    assert run('cli_models:build_tiny', '--shape', '{},3'.format(batch))[0] \
        == 0
    assert capsys.readouterr().err == ''


def test_no_suggestion_when_the_calls_are_short(monkeypatch, capsys):
    # batch 40 in 8 s, as above, but in 10000 calls: 0.8 ms a call, under
    # 1 ms, mostly the fixed cost of a call that every run of the
    # projection pays too: its time is not 8 * 15 / 40 = 3 s
    timed(monkeypatch, 8.0)
    assert run('cli_models:build_relus', '--shape', '40,3')[0] == 0
    assert capsys.readouterr().err == ''


def test_no_suggestion_after_a_quick_run(capsys):
    # a tiny model at batch 10000: a large batch, but milliseconds of
    # this machine's clock
    assert run('cli_models:build_tiny', '--shape', '10000,3')[0] == 0
    assert capsys.readouterr().err == ''


@pytest.mark.parametrize('options', [('--shape', '8,3'),
                                     ('--shape', '40,3', '--project'),
                                     ('--shape', '40,3', '--measure-time')])
def test_no_suggestion(options, monkeypatch, capsys):
    # At batch 8 --project runs more samples (1 + 2 + 3 + 8); with it,
    # and with times (which a projection cannot give), there is nothing to
    # suggest, however long the run.
    timed(monkeypatch, 1000.0)
    assert run('cli_models:build_tiny', *options)[0] == 0
    assert capsys.readouterr().err == ''


def test_project_of_quadratic_flops(capsys):
    # x x^T of (n, 3): n*n dot products of length 3.
    err = error_of(capsys, 'cli_models:build_gram', '--shape', '4,3',
                   '--project')
    assert err == ('error: --project cannot project to batch 4: flops of '
                   'layer MatMul-1 is not affine in the batch size: 3 at '
                   'n=1, 12 at n=2, 27 at n=3; it cannot be projected to '
                   'batch 4')


def test_project_of_calls_per_sample(capsys):
    err = error_of(capsys, 'cli_models:build_per_sample', '--shape', '4,3',
                   '--project')
    assert err == ('error: --project cannot project to batch 4: the calls '
                   'differ between batch sizes: 1 calls at n=1, 2 at n=2')


def test_project_reports_model_errors_at_the_batch_run(capsys):
    err = error_of(capsys, 'cli_models:build_conv_linear', '--shape',
                   '5,3,8', '--project')
    assert err.startswith('error: the model rejected input of shape '
                          '(1, 3, 8) and dtype float32 at {}: '
                          'InvalidType: '.format(line_of('# conv call')))


# Devices: every mistake is found before the model is built (this
# factory raises).

def test_unknown_device(capsys):
    err = error_of(capsys, 'cli_models:build_raising', '--device', 'tpu')
    assert err.startswith("error: unknown device 'tpu'; the presets are ")
    assert "'gtx1080ti'" in err


@pytest.mark.parametrize('options,message', [
    (('--peak-flops', '1e12'),
     '--peak-flops needs --bandwidth (or give a --device: '),
    (('--bandwidth', '1e9'),
     '--bandwidth needs --peak-flops (or give a --device: '),
    (('--device', 'gtx1080ti', '--peak-flops', '1e12'),
     'give either --device or --peak-flops and --bandwidth, not both'),
    (('--device', 'gtx1080ti', '--bandwidth', '1e9'),
     'give either --device or --peak-flops and --bandwidth, not both'),
    (('--plot-roofline', 'r.png'),
     '--plot-roofline needs a device: --device ('),
])
def test_device_options_go_together(options, message, capsys):
    err = error_of(capsys, 'cli_models:build_raising', *options)
    assert err.startswith('error: ' + message)


@pytest.mark.parametrize('value', ['0', '-1', 'nan', 'inf', 'fast'])
def test_peak_and_bandwidth_are_positive_numbers(value, capsys):
    for option in ('--peak-flops', '--bandwidth'):
        with pytest.raises(SystemExit) as e:
            main(['cli_models:build_raising', option, value])
        assert e.value.code == 2
        assert capsys.readouterr().err == (
            'error: argument {}: must be a finite number > 0, e.g. '
            '10.6e12; got {!r} (see --help)\n'.format(option, value))


def test_argparse_mistakes_are_one_line(capsys):
    with pytest.raises(SystemExit) as e:
        main(['cli_models:build_raising', '--dtype', 'h'])
    assert e.value.code == 2
    assert capsys.readouterr().err == (
        "error: argument --dtype: invalid choice: 'h' (choose from "
        "'float16', 'float32', 'float64') (see --help)\n")


def test_bad_time_unit_is_one_line(capsys):
    err = error_of(capsys, 'cli_models:build_raising', '--time-unit', 'h')
    assert err == ("error: --time-unit must be one of 's', 'ms', 'us', got "
                   "'h'")


# Plots

PNG = b'\x89PNG\r\n\x1a\n'


def test_plots_are_written(tmp_path):
    roof = str(tmp_path / 'roofline.png')
    summary = str(tmp_path / 'summary.png')
    status, text = roofline('--time-unit', 's', '--plot-roofline', roof,
                            '--plot-summary', summary)
    # The report is printed as without plots.
    assert (status, text) == (0, ROOFLINE)
    for path in (roof, summary):
        with open(path, 'rb') as f:
            assert f.read(8) == PNG


def test_plot_summary_of_a_training_step(tmp_path, monkeypatch):
    # The bars are those of the printed summary: per phase and type.
    drawn = []
    monkeypatch.setattr(plots, 'plot_summary',
                        lambda rows, path: drawn.append((rows, path)))
    summary = str(tmp_path / 'summary.png')
    assert run('cli_models:build_linear', '--shape', '4,3', '--unit', 'raw',
               '--mode', 'csv', '--train', '--plot-summary', summary) == (
                   0, LINEAR_TRAIN_SUMMARY)
    (rows, path), = drawn
    assert path == summary
    assert [(r.get('phase'), r['type'], r['flops'])
            for r in rows.values()] == [
        ('forward', 'LinearFunction', 32),
        ('forward', 'SoftmaxCrossEntropy', 40),
        ('backward', '_SoftmaxCrossEntropyGrad_NoDoubleBackprop', 21),
        ('backward', 'LinearGradWeight', 24), ('backward', 'Sum', 6),
        ('update', 'AdamRule', 80),  # 10 FLOPs x 8 parameters
        (None, 'total', 203)]


@pytest.mark.parametrize('option', ['--plot-summary', '--plot-roofline'])
def test_plot_without_matplotlib(option, tmp_path, monkeypatch, capsys):
    # None in sys.modules makes 'import matplotlib' raise ImportError.
    monkeypatch.setitem(sys.modules, 'matplotlib', None)
    err = error_of(capsys, 'cli_models:build_raising', '--device',
                   'gtx1080ti', option, str(tmp_path / 'p.png'))
    assert err.startswith('error: {} needs the matplotlib package: pip '
                          'install matplotlib'.format(option))
    assert '[plot]' in err
    assert not os.path.exists(str(tmp_path / 'p.png'))


def test_plot_into_a_missing_directory(tmp_path, capsys):
    path = str(tmp_path / 'nowhere' / 'p.png')
    err = error_of(capsys, 'cli_models:build_raising', '--plot-summary',
                   path)
    assert err == ('error: --plot-summary {!r}: cannot write in directory '
                   '{!r}: it does not exist'.format(
                       path, str(tmp_path / 'nowhere')))


def test_plot_onto_a_directory(tmp_path, capsys):
    err = error_of(capsys, 'cli_models:build_raising', '--plot-summary',
                   str(tmp_path))
    assert err == ('error: --plot-summary {!r} is a directory: give a file '
                   'name such as plot.png'.format(str(tmp_path)))


def test_flop_convention_torch():
    # conv x (1,3,8,8), W (4,3,3,3) with bias: y (1,4,6,6), |y| = 144,
    # K = 27: 2*144*27 = 7776 (3888 with FMA by default); Linear(144 -> 5)
    # with bias: 2*5*144 = 1440, the bias free (725 with FMA); 2 FLOPs per
    # multiply-add, and the header says so
    expected = ('Layer name,FLOPs (2 per multiply-add)\n'
                'Convolution2DFunction-1,7776\n'
                'Reshape-1,0\n'
                'LinearFunction-1,1440\n'
                'total,9216\n')
    options = ('cli_models:build_conv_linear', '--unit', 'raw', '--mode',
               'csv', '--columns', 'name,flops', '--flop-convention', 'torch')
    assert run(*options, '--shape', '1,3,8,8') == (0, expected)
    # projected to batch 12: 12 times each figure
    assert run(*options, '--shape', '12,3,8,8', '--project') == (
        0, 'Layer name,FLOPs (2 per multiply-add)\n'
           'Convolution2DFunction-1,93312\n'
           'Reshape-1,0\n'
           'LinearFunction-1,17280\n'
           'total,110592\n')


def test_flop_convention_unknown(capsys):
    with pytest.raises(SystemExit) as e:
        main(['cli_models:build_raising', '--flop-convention', 'pytorch'])
    assert e.value.code == 2
    assert capsys.readouterr().err == (
        "error: argument --flop-convention: invalid choice: 'pytorch' "
        "(choose from 'torch') (see --help)\n")


# Optional packages are checked with the other options, before the model
# is built (build_raising would fail if it were built).

def test_table_without_texttable(monkeypatch, capsys):
    # None in sys.modules makes 'import texttable' raise ImportError.
    monkeypatch.setitem(sys.modules, 'texttable', None)
    err = error_of(capsys, 'cli_models:build_raising', '--mode', 'table')
    assert err == ('error: --mode table needs the texttable package: pip '
                   'install texttable, or install chainer_computational_cost '
                   'with the [table] extra')


def test_table_with_texttable():
    status, text = run('cli_models:build_tiny', '--shape', '2,3', '--unit',
                       'raw', '--mode', 'TABLE')
    assert status == 0
    # 6 float32 elements: 6 FLOPs, 24 bytes each way
    assert '| ReLU-1     | 6     | 24      | 24       | 48     |' in text


# Columns the run leaves empty are refused, saying why.

@pytest.mark.parametrize('options, column, why', [
    (['--columns', 'name,time'], 'time',
     'times are measured only with --measure-time'),
    (['--device', 'a100', '--columns', 'name,efficiency'], 'efficiency',
     'times are measured only with --measure-time'),
    (['--summary', '--columns', 'type,phase'], 'phase',
     'the summary is split by phase only with --train (the layer report '
     'has a phase column)'),
])
def test_empty_columns_are_refused(options, column, why, capsys):
    err = error_of(capsys, 'cli_models:build_raising', *options)
    assert err == ('error: --columns: column {!r} would be empty: '
                   '{}'.format(column, why))


def test_columns_that_have_data_are_kept():
    status, text = run('cli_models:build_linear', '--shape', '4,3',
                       '--unit', 'raw', '--mode', 'csv', '--train',
                       '--summary', '--columns', 'phase,type,flops')
    assert status == 0
    # LINEAR_TRAIN_SUMMARY's first rows: 4*2*3 + 8 = 32 FLOPs
    assert text.splitlines()[1] == 'forward,LinearFunction,32'


# One validation of each value, shared with the API, any case.

@pytest.mark.parametrize('unit, header', [
    ('g', 'GFLOPs'), ('AUTO', 'FLOPs'), ('RAW', 'FLOPs'), ('none', 'FLOPs'),
    ('Autoaligned', 'FLOPs')])
def test_units_in_any_case(unit, header):
    status, text = run('cli_models:build_tiny', '--shape', '2,3', '--unit',
                       unit, '--mode', 'csv', '--columns', 'name,flops')
    assert status == 0
    assert text.splitlines()[0] == 'Layer name,' + header


def test_default_unit_is_autoaligned():
    # 6 FLOPs: with 'G' (the old default) the cell would read 0.0
    status, text = run('cli_models:build_tiny', '--shape', '2,3',
                       '--columns', 'name,flops')
    assert status == 0
    assert text.splitlines()[2:] == ['|ReLU-1|6|', '|total|6|']


@pytest.mark.parametrize('value', ['11', '100'])
def test_n_digits_above_10(value, capsys):
    err = error_of(capsys, 'cli_models:build_raising', '--n-digits', value)
    assert err == ('error: --n-digits must be an int from 0 to 10, got '
                   '{}'.format(value))


def test_mode_and_dtype_in_any_case():
    status, text = run('cli_models:build_tiny', '--shape', '2,3', '--unit',
                       'raw', '--mode', 'CSV', '--dtype', 'Float32')
    assert (status, text.splitlines()[1]) == (0, 'ReLU-1,6,24,24,48')


def test_device_in_any_case():
    status, text = run('cli_models:build_tiny', '--shape', '2,3', '--device',
                       'GTX1080Ti', '--mode', 'csv', '--columns', 'name')
    assert (status, text) == (0, 'Layer name\nReLU-1\ntotal\n')


def test_builtin_model_names_in_any_case():
    from chainer_computational_cost.cli.main import model_name
    assert model_name('VGG16') == 'vgg16'
    assert model_name('ResNet50') == 'resnet50'
    assert model_name('cli_models:build_tiny') == 'cli_models:build_tiny'


@pytest.mark.parametrize('argv', [['--shape', '-1,3'], ['--shape=-1,3']])
def test_negative_shape_is_explained(argv, capsys):
    with pytest.raises(SystemExit) as e:
        main(['cli_models:build_raising'] + argv)
    assert e.value.code == 2
    assert capsys.readouterr().err == (
        "error: argument --shape: shape must be positive integers separated "
        "by commas, e.g. 1,3,224,224; got '-1,3' (see --help)\n")


@pytest.mark.parametrize('spec, hint', [
    ('mypackage.bad', 'mypackage:bad'),
    ('my.pkg.models.build', 'my.pkg.models:build')])
def test_dotted_factory_gets_a_colon_hint(spec, hint, capsys):
    err = error_of(capsys, spec)
    assert err.endswith('package.module:factory (a colon before the '
                        'factory: {}?)'.format(hint))


# Plots in the format their name says

MAGIC = {'png': b'\x89PNG', 'svg': b'<?xml', 'pdf': b'%PDF',
         'eps': b'%!PS-Adobe', 'ps': b'%!PS-Adobe'}


@pytest.mark.parametrize('ext', ['svg', 'pdf', 'PNG', 'eps'])
def test_plot_format_follows_the_extension(ext, tmp_path):
    path = str(tmp_path / ('s.' + ext))
    status, _ = run('cli_models:build_conv_linear', '--shape', '1,3,8,8',
                    '--plot-summary', path)
    assert status == 0
    with open(path, 'rb') as f:
        assert f.read().startswith(MAGIC[ext.lower()])


@pytest.mark.parametrize('name', ['s.jpg', 's', 's.png.txt'])
def test_plot_of_unknown_format(name, tmp_path, capsys):
    path = str(tmp_path / name)
    err = error_of(capsys, 'cli_models:build_raising', '--plot-summary', path)
    assert err == ('error: --plot-summary: cannot tell the plot format of '
                   '{!r}: the file name must end with .png, .svg, .pdf, '
                   '.eps, .ps'.format(path))


# Progress: on a terminal only, and never inside other output

class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


class Printing(cli_models.Tiny):
    """Tiny, printing a line of its own in each forward pass."""

    def forward(self, x):
        print('model says hi')
        return super(Printing, self).forward(x)


def build_printing():
    return Printing()


def progress_run(monkeypatch, *argv):
    from chainer_computational_cost.cli import main as cli
    # Every call redraws the line.
    monkeypatch.setattr(cli.Progress, 'INTERVAL', 0.0)
    err = FakeTerminal()
    monkeypatch.setattr(sys, 'stderr', err)
    status, text = run(*argv)
    return status, text, err.getvalue()


def test_progress_on_a_terminal(monkeypatch, capsys):
    status, text, err = progress_run(
        monkeypatch, 'cli_models:build_conv_linear', '--shape', '3,3,8,8',
        '--unit', 'raw', '--mode', 'csv', '--columns', 'name', '--project')
    assert status == 0
    # each run: convolution, reshape, linear: 3 calls
    for k, n in enumerate((1, 2, 3), 1):
        assert '\rbatch {} (run {} of at most 6): 3 calls so far'.format(
            n, k) in err
    # erased at the end of each run: the last thing written is blanks (the
    # last run may be a fourth, at batch 4, when the convolution's scratch
    # is off its line at batch 1)
    assert err.endswith('\r' + ' ' * len(
        'batch 4 (run 4 of at most 6): 3 calls so far') + '\r')
    assert text.splitlines()[0] == 'Layer name'


def test_progress_is_erased_before_the_models_own_output(monkeypatch,
                                                         capsys):
    monkeypatch.setattr(sys.modules[__name__], 'build_printing',
                        build_printing, raising=False)
    out = FakeTerminal()
    monkeypatch.setattr(sys, 'stdout', out)
    events = []
    real_write = FakeTerminal.write

    def write(self, s):
        events.append((self is out, s))
        return real_write(self, s)
    monkeypatch.setattr(FakeTerminal, 'write', write)
    status, _, err = progress_run(
        monkeypatch, 'test_main:build_printing', '--shape', '1,3',
        '--project', '--columns', 'name')
    assert status == 0
    assert out.getvalue().count('model says hi\n') == 3
    # Whenever the model prints, no status line is left on the screen:
    # the writes to stderr before each print end by erasing it.
    shown = False
    for is_out, s in events:
        if is_out:
            assert not shown
        elif s.startswith('\r') and s.endswith('\r') and not s.strip():
            shown = False
        elif s.startswith('\r'):
            shown = True


class Warns(cli_models.Tiny):
    """Tiny, writing a line of its own to stderr in its forward pass."""

    def forward(self, x):
        sys.stderr.write('model warns\n')
        return super(Warns, self).forward(x)


def build_warning():
    return Warns()


def test_progress_is_erased_before_the_models_own_stderr(monkeypatch,
                                                         capsys):
    # the model's line on the terminal the status line is on: the status
    # line is erased (blanks between two returns) just before it
    monkeypatch.setattr(sys.modules[__name__], 'build_warning',
                        build_warning, raising=False)
    status, _, err = progress_run(
        monkeypatch, 'test_main:build_warning', '--shape', '1,3',
        '--columns', 'name')
    assert status == 0
    before, _ = err.split('model warns\n')
    assert '\rbatch 1' in before
    erased = before.split('\r')[-2]
    assert before.endswith('\r') and erased and not erased.strip()


def test_no_progress_when_stderr_is_not_a_terminal(capsys):
    status, _ = run('cli_models:build_tiny', '--shape', '2,3')
    assert status == 0
    assert capsys.readouterr().err == ''


# Pipes and encodings

def test_ascii_stream_gets_plain_spaces(tmp_path):
    path = tmp_path / 'out.txt'
    with open(str(path), 'w', encoding='ascii') as f:
        status = main(['cli_models:build_conv_linear', '--shape', '1,3,8,8',
                       '--unit', 'raw', '--links', '1'], ost=f)
    assert status == 0
    # test_links_md_indents_by_depth's rows, with plain spaces
    assert path.read_text().splitlines()[3] == '|  conv|112|1|1|3888|1216|' \
        '576|1792|'


def _command(*argv, stdout=None, preexec_fn=None, **env):
    import subprocess
    environ = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, HERE]),
                   **env)
    return subprocess.Popen(
        [sys.executable, '-m', 'chainer_computational_cost'] + list(argv),
        stdout=subprocess.PIPE if stdout is None else stdout,
        stderr=subprocess.PIPE, env=environ, cwd=ROOT, preexec_fn=preexec_fn)


def test_reader_that_goes_away_is_not_an_error():
    # as 'python -m chainer_computational_cost ... | head -n 0'
    p = _command('cli_models:build_tiny', '--shape', '2,3')
    p.stdout.close()
    err = p.stderr.read()
    assert (p.wait(), err) == (141, b'')


def test_reader_that_goes_away_during_a_long_report_is_told():
    # as '... | head -n 1' on a report of 10000 rows (over 300 KB, far
    # more than a pipe holds): the reader's going away is seen
    p = _command('cli_models:build_relus', '--shape', '2,3')
    assert p.stdout.readline().startswith(b'|Layer name|')
    p.stdout.close()
    err = p.stderr.read()
    assert (p.wait(), err) == (141, b'')


@pytest.mark.parametrize('mode, row', [
    ('md', b'\n|  conv|112|1|1|3888|1216|576|1792|\n'),
    ('table', b'\n|   conv | 112 ')])
def test_ascii_stdout(mode, row):
    p = _command('cli_models:build_conv_linear', '--shape', '1,3,8,8',
                 '--unit', 'raw', '--links', '1', '--mode', mode,
                 PYTHONIOENCODING='ascii')
    out, err = p.communicate()
    assert (p.returncode, err) == (0, b'')
    assert row in out


def test_flop_convention_in_any_case():
    # Linear(144 -> 5) etc. as in test_flop_convention_torch: 9216 in all
    status, text = run('cli_models:build_conv_linear', '--unit', 'raw',
                       '--mode', 'csv', '--columns', 'name,flops',
                       '--flop-convention', 'TORCH', '--shape', '1,3,8,8')
    assert (status, text.splitlines()[-1]) == (0, 'total,9216')


# Combined options: every report asked for, or a refusal before the run
# (tests/cli/test_args_pairs.py walks every pair).

TINY_TRAIN = ('cli_models:build_tiny', '--shape', '2,3', '--unit', 'raw',
              '--train')
# build_tiny's step at batch n: the ReLU's output 12n, the loss 4 and the
# softmax the loss keeps for its backward 12n: 24n + 4, and the loss's
# scratch 45n during it: 69n + 4 <= 1000 for n <= 14
# (tests/collect/test_live_memory.py's test_cli_fit).
FIT_1000 = ('--fit', '1000', '--optimizer', 'sgd')


def test_fit_with_project():
    # was TypeError: 'Projection' object is not subscriptable
    fitted = run(*TINY_TRAIN, *FIT_1000)
    assert fitted[0] == 0
    assert run(*TINY_TRAIN, *FIT_1000, '--project') == fitted
    # 69n + 4 <= 1000 (test_live_memory.test_cli_fit)
    assert fitted[1].startswith('largest batch in 1000 bytes with sgd: 14 ')


# build_linear's training step with Adam (Linear(3 -> 2): W 2*3*4 = 24
# bytes, b 2*4 = 8: parameters 32, Adam's two moments 64), the update
# included as in every --train report: during AdamRule-1, W's update,
# the logits the step still holds (8n), the gradients of W and b (32) and
# Adam's three temporaries of W's size (3*24 = 72): 8n + 104.  During the
# loss: the logits 8n, the softmax it keeps 8n, the loss 4, and its
# scratch 41n (log_y 8n, the label mask n, the masked labels 4n, an int64
# arange 8n, fancy indexing's two int64 buffers 16n, the gathered values
# 4n): 57n + 4.  The update's peak is the larger up to n = 2.
LINEAR_ADAM = ('cli_models:build_linear', '--shape', '2,3', '--unit', 'raw',
               '--train', '--optimizer', 'adam')


def test_fit_counts_the_update_of_the_step(capsys):
    # batch 1: 32 + 64 + 8 + 104 = 208 > 200.  Without the update the fit
    # answered batch 1 (32 + 64 + 57 + 4 = 157), a step that does not fit
    err = error_of(capsys, *LINEAR_ADAM, '--fit', '200')
    assert err == ('error: --fit: batch 1 does not fit the capacity 200 '
                   'bytes: it needs 208 bytes (parameters 32, optimizer '
                   'state 64, peak 112 during AdamRule-1: activations 8, '
                   'gradients 32, scratch 72); no batch fits')
    # batch 2: 96 + 16 + 104 = 216, the update's; batch 3: 96 + 57*3 + 4
    # = 271, the loss's
    status, text = run(*LINEAR_ADAM, '--fit', '216', '--mode', 'json')
    assert status == 0
    doc = json.loads(text)
    assert (doc['batch_size'], doc['total'], doc['next_total'],
            doc['peak_layer'], doc['activations'], doc['gradients'],
            doc['scratch'], doc['optimizer_state'],
            doc['optimizer_state_from']) == (
        2, 216, 271, 'AdamRule-1', 16, 32, 72, 64, 'measured')
    assert not any('update' in x for x in doc['left_out'])


def test_fit_changes_no_other_report():
    # the fit sizes the step the other reports show: its update phase
    # stays, and so does what is alive at exit: the gradients, 32 bytes,
    # and Adam's moments, 64, which W's and b's update rules hold
    status, alone = run(*LINEAR_ADAM, '--phases', '--memory')
    assert status == 0
    status, fitted = run(*LINEAR_ADAM, '--phases', '--memory', '--fit',
                         '1e6')
    assert status == 0
    fit, rest = fitted.split('\n\n', 1)
    assert fit.startswith('largest batch in 1000000 bytes with adam: ')
    assert rest == alone
    assert '|update|2|' in alone
    assert '|at exit|96|64|32|||' in alone


def test_fit_with_scaling():
    # was AttributeError: no show_scaling_report on the fit's answer.
    # Linear(3 -> 2): 6 + 2 = 8 parameters, 32 bytes of float32 gradients
    status, text = run('cli_models:build_linear', '--shape', '4,3',
                       '--unit', 'raw', '--train', '--fit', 'h100',
                       '--device', 'a100', '--workers', '1,8', '--network',
                       'ib-edr')
    assert status == 0
    fit, scaling = text.split('\n\n')
    assert fit.startswith('largest batch on h100 with adam: ')
    assert scaling.splitlines()[0].startswith('|Workers|Comm B|')
    assert [r.split('|')[1:3] for r in scaling.splitlines()[2:]] == [
        ['1', '32'], ['8', '32']]


@pytest.mark.parametrize('options, asked', [
    (TINY_TRAIN[-1:] + ('--fit', 'h100'), '--fit'),
    (('--memory',), '--memory'),
])
def test_measure_time_without_a_time_column(options, asked, capsys):
    # was ValueError: unknown column(s) ['time'], after the run
    err = error_of(capsys, 'cli_models:build_raising', '--measure-time',
                   *options)
    assert err == ('error: --measure-time changes nothing in the reports '
                   'asked for ({}): it needs a report with a time column: '
                   'the layer report, --summary, --phases, --links or '
                   '--device'.format(asked))


def test_measure_time_with_memory_and_summary():
    status, text = run('cli_models:build_conv_linear', '--shape', '1,3,8,8',
                       '--unit', 'raw', '--memory', '--summary',
                       '--measure-time')
    assert status == 0
    memory, summary = text.split('\n\n')
    assert memory.startswith('|Memory|Bytes B|Activations B|Gradients B|'
                             'Scratch B|Layer|\n')
    assert summary.splitlines()[0].endswith('|Time ms|')


def test_fit_of_a_step_off_the_line_is_an_answer():
    # was KeyError: 'error' in fit_batch: batch 1 leaves the line (its
    # logits are all 0), so the lines go through batches 2, 3 and 4 and the
    # answer is checked by a real run; the largest batch fills 1e7 bytes
    # to within one sample's step
    status, text = run('cli_models:build_centered', '--shape', '4,3',
                       '--unit', 'raw', '--train', '--fit', '1e7')
    assert status == 0
    assert text.startswith('largest batch in 10000000 bytes with adam: ')
    rows = dict(line.strip('|').split('|') for line in
                text.splitlines()[3:])
    assert int(rows['total']) <= 10 ** 7 == int(rows['capacity'])


def test_fit_value_errors_are_one_line(capsys):
    err = error_of(capsys, *TINY_TRAIN, '--fit', '10')
    # batch 1: activations 24 + 4 = 28, the loss's scratch 45 (29 + 16
    # for fancy indexing's int64 buffers of the int32 label): 73
    assert err == ('error: --fit: batch 1 does not fit the capacity 10 '
                   'bytes: it needs 73 bytes (parameters 0, optimizer state '
                   '0, peak 73 during SoftmaxCrossEntropy-1: activations 28, '
                   'gradients 0, scratch 45); no batch fits')


def test_columns_of_the_scaling_report(capsys):
    options = ('cli_models:build_linear', '--shape', '4,3', '--unit', 'raw',
               '--mode', 'csv', '--train', '--device', 'a100', '--workers',
               '1,8', '--network', 'ib-edr')
    # 8 parameters of 4 bytes, as in test_fit_with_scaling
    assert run(*options, '--columns', 'workers,comm_bytes') == (
        0, 'Workers,Comm B\n1,32\n8,32\n')
    capsys.readouterr()  # the scaling model's note of that run
    err = error_of(capsys, *options, '--columns', 'name')
    assert err.startswith("error: --columns: unknown column(s) ['name']; "
                          "available columns are ['workers', 'comm_bytes', ")


def test_a_scaling_report_of_a_step_with_no_gradient_says_so(capsys):
    # one ReLU: the command's training step makes no backward call
    err = error_of(capsys, 'cli_models:build_tiny', '--shape', '2,3',
                   '--train', '--device', 'a100', '--network', 'ib-hdr200',
                   '--workers', '1,8')
    assert err == ('error: --workers: the training step made no backward '
                   'call (no parameter of the model takes a gradient): '
                   'there is no gradient to all-reduce, so no scaling '
                   'report')


@pytest.mark.parametrize('project', [(), ('--project',)])
def test_the_scaling_report_is_at_the_batch_of_shape(project):
    # a model whose first call is on a parameter of batch 1 (a class
    # token): 4 samples of --shape in the measured 1 ms = 4000/s
    assert run('cli_models:build_class_token', '--shape', '4,3', '--train',
               '--optimizer', 'sgd', '--device', 'a100', '--network',
               'ib-hdr200', '--workers', '1', '--step-time', '1e-3',
               '--mode', 'csv', '--unit', 'raw', '--columns',
               'workers,samples_per_s', *project) == (
        0, 'Workers,Samples/s\n1,4000.0\n')


@pytest.mark.parametrize('options, column', [
    (('--summary', '--columns', 'type,comm_bytes'), 'comm_bytes'),
    (('--columns', 'name,comm_bytes'), 'comm_bytes'),
    (('--columns', 'name,rank'), 'rank'),
    (('--summary', '--columns', 'type,slowest_rank'), 'slowest_rank'),
])
def test_columns_no_command_line_run_fills(options, column, capsys):
    err = error_of(capsys, 'cli_models:build_raising', *options)
    assert err.startswith("error: --columns: column {!r} would be empty: "
                          .format(column))


def test_columns_with_several_reports(capsys):
    err = error_of(capsys, 'cli_models:build_raising', '--memory',
                   '--summary', '--columns', 'name')
    assert err == ('error: --columns picks the columns of one report, and '
                   '2 are asked for (--memory, --summary): ask for one, or '
                   'leave --columns out')


@pytest.mark.parametrize('options, message', [
    (('--optimizer', 'sgd'), '--optimizer needs --train (and applies to '
                             '--fit): a forward pass updates nothing'),
    (('--memory', '--time-unit', 's'),
     '--time-unit changes nothing in the reports asked for (--memory): it '
     'needs times: --device, --workers or --measure-time'),
    (('--memory', '--no-fma'),
     '--no-fma changes nothing in the reports asked for (--memory): it '
     'needs a report or plot of FLOPs: any report but --fit and --memory, '
     '--plot-summary or --plot-roofline'),
    (('--train', '--fit', 'h100', '--flop-convention', 'torch'),
     '--flop-convention changes nothing in the reports asked for (--fit): '
     'it needs a report or plot of FLOPs'),
])
def test_options_that_would_change_nothing(options, message, capsys):
    err = error_of(capsys, 'cli_models:build_raising', *options)
    assert err.startswith('error: ' + message)


def test_optimizer_with_train():
    status, text = run('cli_models:build_linear', '--shape', '4,3',
                       '--train', '--optimizer', 'momentumsgd')
    assert status == 0
    assert text.startswith('|Phase|Layer type|')


# One JSON document holding every report; CSV only

def test_json_of_the_fit_holds_the_answer(capsys):
    status, text = run(*TINY_TRAIN, *FIT_1000, '--mode', 'json')
    assert status == 0
    doc = json.loads(text)
    assert (doc['batch_size'], doc['device'], doc['capacity'],
            doc['optimizer']) == (14, None, 1000, 'sgd')
    assert doc['peak_layer'] == 'SoftmaxCrossEntropy-1'
    # the table's rows: total 69*14 + 4 = 970 bytes
    assert {r['name']: r['bytes'] for r in doc['rows']}['total'] == 970
    assert capsys.readouterr().err == ''


def test_json_of_several_reports_is_one_document():
    status, text = run('cli_models:build_conv_linear', '--shape', '1,3,8,8',
                       '--unit', 'raw', '--mode', 'json', '--summary',
                       '--memory', '--peak-flops', '1000', '--bandwidth',
                       '1024')
    assert status == 0
    doc = json.loads(text)
    assert list(doc) == ['memory', 'roofline', 'summary']
    assert [r['name'] for r in doc['memory']['rows']] == [
        'peak', 'peak between calls', 'at exit', 'parameters']
    # the figures of ROOFLINE and of test_dtype_float32_is_the_default
    assert [r['bound'] for r in doc['roofline']['rows']] == [
        'compute', None, 'memory', None]
    assert [(r['type'], r['flops']) for r in doc['summary']['rows']] == [
        ('Convolution2DFunction', 3888), ('Reshape', 0),
        ('LinearFunction', 725), ('total', 4613)]


def test_json_of_fit_and_a_report(capsys):
    status, text = run(*TINY_TRAIN, *FIT_1000, '--phases', '--mode', 'json')
    assert status == 0
    doc = json.loads(text)
    assert list(doc) == ['fit', 'phases']
    assert doc['fit']['batch_size'] == 14  # test_live_memory.test_cli_fit
    assert [r['name'] for r in doc['phases']['rows']] == [
        'forward', 'backward', 'total']


# Blank cells: not applicable, and said so

ROOFLINE_NOTE = (
    'note: blank cells of the roofline report are not applicable: a blank '
    'Intensity is a layer that moves no bytes (FLOPs per byte has no '
    'value); a blank Bound is a layer that does neither FLOPs nor memory '
    "traffic (a reshape or a view); the total's Bound is blank: each layer "
    'is bound by its own limit, a sum of them by none\n')


def test_roofline_blanks_are_explained(capsys):
    assert roofline('--time-unit', 's') == (0, ROOFLINE)
    assert capsys.readouterr().err == ROOFLINE_NOTE
    # only the blanks shown are explained
    assert roofline('--columns', 'name,flops')[0] == 0
    assert capsys.readouterr().err == ''
    assert roofline('--columns', 'name,intensity')[0] == 0
    assert capsys.readouterr().err == (
        'note: blank cells of the roofline report are not applicable: a '
        'blank Intensity is a layer that moves no bytes (FLOPs per byte '
        'has no value)\n')


# Output that cannot be written; Ctrl-C

class FullDisk(io.StringIO):
    def write(self, text):
        raise OSError(28, 'No space left on device')


def test_report_to_a_full_disk(capsys, monkeypatch):
    status = main(['cli_models:build_tiny', '--shape', '2,3'],
                  ost=FullDisk())
    assert (status, capsys.readouterr().err) == (
        1, 'error: cannot write the report: No space left on device\n')
    # under mpiexec, a node's full disk is its rank's own: named
    monkeypatch.setenv('PMI_RANK', '1')
    status = main(['cli_models:build_tiny', '--shape', '2,3'],
                  ost=FullDisk())
    assert (status, capsys.readouterr().err) == (
        1, 'error: rank 1: cannot write the report: No space left on '
        'device\n')


def test_a_plot_to_a_full_disk(tmp_path, monkeypatch, capsys):
    # the path was found writable; then the disk is full: status 1, as
    # for the report, and no report printed after the error
    pytest.importorskip('matplotlib')
    from chainer_computational_cost.report import plots

    def full(*args, **kwargs):
        raise OSError(28, 'No space left on device')
    monkeypatch.setattr(plots, 'plot_summary', full)
    path = str(tmp_path / 's.png')
    status, text = run('cli_models:build_tiny', '--shape', '2,3',
                       '--plot-summary', path)
    assert (status, text, capsys.readouterr().err) == (
        1, '', "error: cannot write the plot {!r}: No space left on "
        "device\n".format(path))


def test_a_plot_whose_directory_went_away(tmp_path, monkeypatch, capsys):
    # checked before the run, removed while it ran: status 1, as a full
    # disk (it was status 2, as a mistake in the options)
    pytest.importorskip('matplotlib')
    from chainer_computational_cost.report import plots
    (tmp_path / 'out').mkdir()
    path = str(tmp_path / 'out' / 's.png')
    save = plots._save

    def after_rmdir(*args):
        (tmp_path / 'out').rmdir()
        return save(*args)
    monkeypatch.setattr(plots, '_save', after_rmdir)
    status, text = run('cli_models:build_tiny', '--shape', '2,3',
                       '--plot-summary', path)
    assert (status, text, capsys.readouterr().err) == (
        1, '', "error: {!r} cannot be written (a plot): [Errno 2] No such "
        "file or directory: {!r}\n".format(path, path))


def test_stdout_on_dev_full():
    if not os.path.exists('/dev/full'):
        pytest.skip('no /dev/full')
    with open('/dev/full', 'w') as full:
        p = _command('cli_models:build_tiny', '--shape', '2,3',
                     stdout=full)
        err = p.communicate()[1]
    assert (p.returncode, err) == (
        1, b'error: cannot write the report: No space left on device\n')


@pytest.mark.parametrize('argv, what', [
    (('--help',), 'help'), (('--version',), 'version'),
    (('calibrate', '--help'), 'help'), (('netbench', '--help'), 'help')])
def test_help_and_version_on_dev_full(argv, what):
    # status 0 with nothing written: as the report, status 1 and a line
    if not os.path.exists('/dev/full'):
        pytest.skip('no /dev/full')
    with open('/dev/full', 'w') as full:
        p = _command(*argv, stdout=full)
        err = p.communicate()[1]
    assert (p.returncode, err) == (
        1, 'error: cannot write the {}: No space left on device\n'.format(
            what).encode())


def test_report_to_a_closed_stdout(monkeypatch, capsys):
    # '>&-': Python's sys.stdout is None; one line and status 1, as for a
    # full disk, not a traceback
    monkeypatch.setattr(sys, 'stdout', None)
    status = main(['cli_models:build_tiny', '--shape', '2,3'])
    assert (status, capsys.readouterr().err) == (
        1, 'error: cannot write the report: Bad file descriptor\n')


def test_stdout_closed():
    # as 'python -m chainer_computational_cost ... >&-'
    import subprocess
    if os.name != 'posix':
        pytest.skip('closes file descriptor 1 before exec (POSIX)')
    p = _command('cli_models:build_tiny', '--shape', '2,3',
                 stdout=subprocess.DEVNULL, preexec_fn=lambda: os.close(1))
    err = p.communicate()[1]
    assert (p.returncode, err) == (
        1, b'error: cannot write the report: Bad file descriptor\n')


def test_ctrl_c_is_one_line(tmp_path):
    import signal
    import time
    started = tmp_path / 'started'

    def ctrl_c_as_a_terminal_sends_it():
        # A test run started in the background of a shell without job
        # control ignores SIGINT, and its children would inherit that
        # (Python then installs no KeyboardInterrupt for it).
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    p = _command('cli_models:build_slow', '--shape', '2,3',
                 CLI_STARTED=str(started),
                 preexec_fn=ctrl_c_as_a_terminal_sends_it)
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and p.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), p.communicate()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    finally:
        # A failure, a timeout or an interrupted test run must not leave
        # the endless model running (it also stops by itself, see
        # cli_models.SLOW_LIMIT).
        if p.poll() is None:
            p.kill()
            p.wait()
    assert (p.returncode, out, err) == (130, b'', b'interrupted\n')


# Plots and optional packages: checked before the run

def test_plot_memory_without_matplotlib(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, 'matplotlib', None)
    err = error_of(capsys, 'cli_models:build_raising', '--plot-memory',
                   str(tmp_path / 'm.png'))
    assert err.startswith('error: --plot-memory needs the matplotlib '
                          'package: pip install matplotlib')


@pytest.fixture
def read_only_dir(tmp_path):
    """A directory no file can be created in (root too: immutable)."""
    import subprocess
    path = tmp_path / 'ro'
    path.mkdir()
    path.chmod(0o555)
    immutable = False
    if hasattr(os, 'geteuid') and os.geteuid() == 0:
        immutable = subprocess.call(['chattr', '+i', str(path)],
                                    stderr=subprocess.DEVNULL) == 0
    try:
        probe = path / 'probe'
        try:
            probe.touch()
        except OSError:
            pass
        else:
            probe.unlink()
            pytest.skip('cannot make a read-only directory here')
        yield path
    finally:
        if immutable:
            subprocess.call(['chattr', '-i', str(path)])
        path.chmod(0o755)


@pytest.mark.parametrize('option', ['--plot-summary', '--plot-roofline',
                                    '--plot-memory'])
def test_plot_into_a_read_only_directory(option, read_only_dir, capsys):
    path = str(read_only_dir / 'p.png')
    err = error_of(capsys, 'cli_models:build_raising', '--device', 'a100',
                   option, path)
    assert err.startswith('error: {} {!r} cannot be written: '.format(
        option, path))


def test_plot_over_an_existing_file_keeps_it_until_drawn(tmp_path):
    # The check opens an existing file without changing it.
    path = tmp_path / 's.png'
    path.write_bytes(b'old')
    assert run('cli_models:build_raising', '--plot-summary', str(path))[0] \
        == 2
    assert path.read_bytes() == b'old'


# Progress in a log (stderr not a terminal)

def log_run(monkeypatch, *argv):
    from chainer_computational_cost.cli import progress as _cli_progress
    monkeypatch.setattr(_cli_progress.LogProgress, 'INTERVAL', 0.0)
    err = io.StringIO()
    monkeypatch.setattr(sys, 'stderr', err)
    status, text = run(*argv)
    return status, text, err.getvalue()


def test_progress_lines_in_a_log(monkeypatch):
    import re
    status, text, err = log_run(
        monkeypatch, 'cli_models:build_conv_linear', '--shape', '3,3,8,8',
        '--mode', 'csv', '--columns', 'name', '--project')
    assert status == 0
    # each run: convolution, reshape, linear: a line per call (interval
    # 0), then one as the run ends; the convolution's scratch at batch 1
    # is off the line of batches 2 and 3 (tensordot copies its columns
    # only from batch 2), so a fourth run at batch 4 draws the lines
    expected = []
    for k, n in enumerate((1, 2, 3, 4), 1):
        run_label = 'batch {} \\(run {} of at most 6\\)'.format(n, k)
        expected += ['{}: {} calls so far, \\d+ s'.format(run_label, c)
                     for c in (1, 2, 3)]
        expected.append(run_label + r': done, 3 calls in \d+\.\d s')
    lines = err.splitlines()
    assert len(lines) == len(expected)
    for line, pattern in zip(lines, expected):
        assert re.fullmatch(pattern, line), (line, pattern)
    assert '\r' not in err


def test_log_lines_start_after_the_interval(monkeypatch):
    from chainer_computational_cost.cli import progress as _cli_progress
    # A clock that moves 4 s a reading: the first line comes at the
    # first call read 10 s or more after the first run started.
    clock = iter(range(0, 4000, 4))
    monkeypatch.setattr(_cli_progress, '_clock', lambda: next(clock))
    err = io.StringIO()
    monkeypatch.setattr(sys, 'stderr', err)
    status, _ = run('cli_models:build_conv_linear', '--shape', '3,3,8,8',
                    '--columns', 'name', '--project')
    assert status == 0
    # run 1 starts at 0 (next line at 10); its calls read 4, 8, 12: a
    # line at 12 (next at 22), its end at 16; run 2 starts at 20, calls
    # at 24 (a line, next at 34), 28, 32, ends at 36; run 3 starts at 40,
    # calls at 44 (a line), 48, 52, ends at 56; run 4 at batch 4 (see
    # test_progress_lines_in_a_log) starts at 60, calls at 64 (a line),
    # 68, 72, ends at 76.
    assert err.getvalue() == (
        'batch 1 (run 1 of at most 6): 3 calls so far, 12 s\n'
        'batch 1 (run 1 of at most 6): done, 3 calls in 16.0 s\n'
        'batch 2 (run 2 of at most 6): 1 calls so far, 4 s\n'
        'batch 2 (run 2 of at most 6): done, 3 calls in 16.0 s\n'
        'batch 3 (run 3 of at most 6): 1 calls so far, 4 s\n'
        'batch 3 (run 3 of at most 6): done, 3 calls in 16.0 s\n'
        'batch 4 (run 4 of at most 6): 1 calls so far, 4 s\n'
        'batch 4 (run 4 of at most 6): done, 3 calls in 16.0 s\n')


def test_fit_shows_progress_on_a_terminal(monkeypatch, capsys):
    status, text, err = progress_run(monkeypatch, *TINY_TRAIN, *FIT_1000)
    assert status == 0
    assert '\rfit: batch 1 (run 1): ' in err
    assert '\rfit: batch 3 (run 3): ' in err


# Scripts and people: exact json, no abbreviations, help that fits

def test_json_without_unit_is_exact():
    status, text = run('cli_models:build_conv_linear', '--shape', '1,3,8,8',
                       '--mode', 'json', '--device', 'gtx1080ti')
    assert status == 0
    doc = json.loads(text)
    assert doc['units'] == {'flops': 'FLOPs', 'mrw': 'B', 't_compute': 's',
                            't_memory': 's', 't_roofline': 's'}
    conv = doc['rows'][0]
    # 4 outputs * 6*6 positions * 3*3*3 multiply-adds = 3888 FLOPs over
    # 1792 bytes (test_links_md_indents_by_depth's row), on 10.6e12 FLOP/s:
    # not rounded to 3 decimals (2.17) nor to 10 (4e-10 s)
    assert (conv['flops'], conv['mrw']) == (3888, 1792)
    assert conv['intensity'] == 3888 / 1792
    assert conv['t_compute'] == 3888 / 10.6e12


def test_json_with_unit_is_scaled_and_rounded():
    status, text = run('cli_models:build_conv_linear', '--shape', '1,3,8,8',
                       '--mode', 'json', '--unit', 'K', '--columns',
                       'name,flops')
    assert status == 0
    # 3888 / 1000 to 3 decimals
    assert json.loads(text)['rows'][0] == {
        'name': 'Convolution2DFunction-1', 'flops': 3.888}


@pytest.mark.parametrize('given, meant', [
    # argparse would take --shap for --shape
    ('--shap 2,3', '--shape'),
    # the link report's depth is what --links takes (--depth is nearest
    # --mode by its spelling)
    ('--depth 1', '--links'),
    # the batch is --shape's first number (--batch is nearest --bandwidth)
    ('--batch 8', '--shape'), ('--batch-size=8', '--shape'),
    # the output format is --mode (--format is nearest --no-fma)
    ('--format csv', '--mode'),
    ('--precision float16', '--dtype')])
def test_an_unknown_option_is_told_the_one_meant(capsys, given, meant):
    with pytest.raises(SystemExit) as e:
        main(['cli_models:build_tiny'] + given.split())
    assert e.value.code == 2
    assert capsys.readouterr().err == (
        'error: unrecognized arguments: {}; did you mean {}? (see --help)'
        '\n'.format(given, meant))


@pytest.mark.parametrize('argv, shown', [
    # argparse takes the option's value for MODEL and leaves the model
    (['--batch', '8', 'cli_models:build_tiny'], '--batch 8'),
    (['--batch-size', '8', '--format', 'md', 'cli_models:build_tiny'],
     '--batch-size 8 --format md'),
    # an option with no word of its own to take
    (['--bacth', 'cli_models:build_tiny'], '--bacth')])
def test_an_unknown_option_before_the_model_is_shown_as_written(
        capsys, argv, shown):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert capsys.readouterr().err.startswith(
        'error: unrecognized arguments: {}; did you mean '.format(shown))


def test_help_fits_the_terminal(monkeypatch, capsys):
    monkeypatch.setenv('COLUMNS', '60')
    with pytest.raises(SystemExit):
        main(['--help'])
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= 60
    # short group titles; the explanation is wrapped text below them
    assert {'reports:', 'plots:', 'scaling:'} <= set(lines)
    # never broken inside an option's name
    assert not [line for line in lines if line.rstrip().endswith('-')]
    # the defaults said once, in the help's own words (not argparse's
    # '(default: None)' after them)
    text = ' '.join(' '.join(lines).split())
    assert '(default: None)' not in text
    assert '(default: (1, 3, 224, 224))' not in text
    assert 'input shape, comma separated, the batch size first (default ' \
        '1,3,224,224)' in text
    assert 'shows the summary by phase unless another report is asked ' \
        'for' in text


def test_progress_says_what_it_does_at_once(monkeypatch, capsys):
    from chainer_computational_cost.cli import main as cli
    # An interval no run reaches: only the lines drawn as each step
    # starts are shown.
    monkeypatch.setattr(cli.Progress, 'INTERVAL', 1e9)
    err = FakeTerminal()
    monkeypatch.setattr(sys, 'stderr', err)
    status, _ = run(*TINY_TRAIN, *FIT_1000)
    assert status == 0
    assert err.getvalue().startswith('\rbuilding the model')
    assert '\rfit: batch 1 (run 1)' in err.getvalue()
    assert 'calls so far' not in err.getvalue()


def labels(monkeypatch, *argv):
    """The run labels the progress shows on a terminal, in order, and the
    report."""
    monkeypatch.setattr(cli.Progress, 'INTERVAL', 0.0)
    err = FakeTerminal()
    monkeypatch.setattr(sys, 'stderr', err)
    status, text = run(*argv)
    assert status == 0
    shown = []
    for part in err.getvalue().split('\r'):
        label = part.split(':')[0] if not part.startswith('fit') else \
            ':'.join(part.split(':')[:2])
        if part.strip() and label not in shown and label != \
                'building the model':
            shown.append(label)
    return shown, text


# Progress: which run of how many

def assert_counted(shown):
    """Every label of a projection's run says 'run i of at most n': the
    same n throughout, i counting 1, 2, 3, ... and never beyond n."""
    import re
    counts = [re.fullmatch(r'batch \d+ \(run (\d+) of at most (\d+)\)',
                           label) for label in shown]
    assert all(counts), shown
    runs = [int(m.group(1)) for m in counts]
    totals = {int(m.group(2)) for m in counts}
    assert runs == list(range(1, len(runs) + 1)), shown
    assert len(totals) == 1 and len(runs) <= totals.pop(), shown


# A projection runs batches 1, 2, 3; 4 when batch 1 is off their line; its
# check at min(9, batch) beyond batch 3; 4, 9 and 14 when a scratch bends
# (projection.TOP_BATCHES): at most {1, 2, 3, 4, 9, 14}, 6 runs, and a
# seventh, the check, at a batch of 5 to 8.

def test_progress_counts_the_check_run_of_a_projection(monkeypatch):
    # --shape 10: runs at batch 1, 2, 3 and the check run at 9 (the help:
    # 'runs at batch 1, 2 and 3 and a check run at 9'): 4 of at most 6
    shown, _ = labels(monkeypatch, 'cli_models:build_tiny', '--shape', '10,3',
                      '--project', '--unit', 'raw', '--mode', 'csv')
    assert shown == ['batch 1 (run 1 of at most 6)',
                     'batch 2 (run 2 of at most 6)',
                     'batch 3 (run 3 of at most 6)',
                     'batch 9 (run 4 of at most 6)']
    assert_counted(shown)


def test_progress_of_a_projection_to_batch_3_has_no_check_run(monkeypatch):
    shown, _ = labels(monkeypatch, 'cli_models:build_tiny', '--shape', '3,3',
                      '--project', '--unit', 'raw', '--mode', 'csv')
    assert shown == ['batch 1 (run 1 of at most 6)',
                     'batch 2 (run 2 of at most 6)',
                     'batch 3 (run 3 of at most 6)']
    assert_counted(shown)


def bending_relu_scratch(monkeypatch):
    """A ReLU scratch of 4n bytes, 4 more at odd batches: on no line
    through batches 1, 2, 3 nor 2, 3, 4, so the projection draws it
    through 4, 9 and 14 (projection.TOP_BATCHES)."""
    from chainer_computational_cost import cost_calculators
    relu = chainer.functions.activation.relu.ReLU
    monkeypatch.setitem(
        cost_calculators.scratches, relu,
        lambda func, in_data, out_shapes=None, backend=None:
        4 * len(in_data[0]) + 4 * (len(in_data[0]) % 2))


def test_projection_runs_batches_beyond_those_it_prepared(monkeypatch):
    # the bending scratch: after the check run at 9, batch 4 and 14; the
    # input of batch 14 is made when it runs
    bending_relu_scratch(monkeypatch)
    shown, text = labels(monkeypatch, 'cli_models:build_tiny', '--shape',
                         '20,3', '--project', '--memory', '--unit', 'raw',
                         '--mode', 'csv')
    assert shown == ['batch 1 (run 1 of at most 6)',
                     'batch 2 (run 2 of at most 6)',
                     'batch 3 (run 3 of at most 6)',
                     'batch 9 (run 4 of at most 6)',
                     'batch 4 (run 5 of at most 6)',
                     'batch 14 (run 6 of at most 6)']
    assert_counted(shown)
    # at batch 20: the ReLU's output 20*3*4 = 240 bytes, and its scratch
    # bounded from above: at least 4*20 = 80
    peak = text.splitlines()[1].split(',')
    assert peak[0] == 'peak' and peak[2] == '240' and int(peak[4]) >= 80


def test_progress_of_the_most_runs_a_projection_makes(monkeypatch):
    # at batch 6 the check run is at 6, not among 4, 9, 14: 7 runs, the
    # most there can be
    bending_relu_scratch(monkeypatch)
    shown, _ = labels(monkeypatch, 'cli_models:build_tiny', '--shape',
                      '6,3', '--project', '--memory', '--unit', 'raw',
                      '--mode', 'csv')
    assert shown == ['batch 1 (run 1 of at most 7)',
                     'batch 2 (run 2 of at most 7)',
                     'batch 3 (run 3 of at most 7)',
                     'batch 6 (run 4 of at most 7)',
                     'batch 4 (run 5 of at most 7)',
                     'batch 9 (run 6 of at most 7)',
                     'batch 14 (run 7 of at most 7)']
    assert_counted(shown)


def test_progress_of_a_plain_run_names_its_batch(monkeypatch):
    shown, _ = labels(monkeypatch, 'cli_models:build_tiny', '--shape', '5,3')
    assert shown == ['batch 5']


def test_progress_of_fit_numbers_its_runs(monkeypatch):
    # fit's runs: the line through batches 1, 2, 3, its check at 9, then
    # the answer checked by a real run: 14 (69n + 4 <= 1000, see
    # test_main.FIT_1000)
    shown, text = labels(monkeypatch, 'cli_models:build_tiny', '--shape',
                         '2,3', '--unit', 'raw', '--train', '--fit', '1000',
                         '--optimizer', 'sgd')
    assert shown == ['fit: batch 1 (run 1)', 'fit: batch 2 (run 2)',
                     'fit: batch 3 (run 3)', 'fit: batch 9 (run 4)',
                     'fit: batch 14 (run 5)']
    assert text.startswith('largest batch in 1000 bytes with sgd: 14 ')


# The logits a training step accepts

def build_one_class():
    """Linear(3 -> 1): logits of a single class."""
    return L.Linear(3, 1)


class NoClasses(chainer.Chain):
    def forward(self, x):
        return x[:, :0]


def build_no_classes():
    """Logits of shape (n, 0)."""
    return NoClasses()


class OneRowShort(chainer.Chain):
    def forward(self, x):
        return x[1:]


def build_one_row_short():
    """Logits of one sample fewer than the batch."""
    return OneRowShort()


class Normalized(chainer.Chain):
    def __init__(self):
        super(Normalized, self).__init__()
        with self.init_scope():
            self.bn = L.BatchNormalization(3)

    def forward(self, x):
        return self.bn(x)


def build_normalized():
    """A batch normalization over 3 features: logits of 3 classes."""
    return Normalized()


def test_inference_in_test_mode_and_a_step_in_train_mode():
    # chainer.config.train: a batch normalization uses its running
    # statistics (FixedBatchNormalization) in inference, the batch's own
    # (BatchNormalization) in a training step
    def first_type(*options):
        status, text = run('test_main:build_normalized',
                           '--shape', '2,3', '--mode', 'csv', '--columns',
                           'type', '--summary', *options)
        assert status == 0
        return text.splitlines()[1].split(',')[-1]  # (after the phase)
    assert first_type() == 'FixedBatchNormalization'
    assert first_type('--train') == 'BatchNormalization'


def test_train_takes_logits_of_a_single_class():
    # Linear(3 -> 1) at batch 2: forward 2*3 multiply-adds + 2 bias adds
    # = 8 FLOPs (the forward LinearFunction row)
    status, text = run('test_main:build_one_class', '--shape',
                       '2,3', '--unit', 'raw', '--train', '--mode', 'csv',
                       '--columns', 'type,phase,flops')
    assert status == 0
    assert 'LinearFunction,forward,8' in text.splitlines()


@pytest.mark.parametrize('factory, shape', [
    ('build_no_classes', '(2, 0)'), ('build_one_row_short', '(1, 3)')])
def test_train_refuses_logits_of_no_class_or_another_batch(factory, shape,
                                                           capsys):
    status, text = run('test_main:' + factory, '--shape', '2,3',
                       '--train')
    err = capsys.readouterr().err
    assert (status, text) == (2, '')
    assert err == ('error: --train needs the model to return logits of '
                   'shape (N, n_classes): a Variable or array, alone or as '
                   'the one entry of a dict; it returned shape {} for a '
                   'batch of 2\n'.format(shape))


# calibrate: checks before minutes of measuring, the bar, the summary

def test_calibrate_needs_its_out_file(capsys):
    with pytest.raises(SystemExit) as e:
        main(['calibrate'])
    assert e.value.code == 2
    # one line, as every mistake of every command: no usage block
    assert capsys.readouterr().err == (
        'error: the following arguments are required: --out (see '
        '--help)\n')


def _never_calibrated(monkeypatch):
    """calibrate() replaced by a failure: a mistake found by the command
    is found before minutes of measuring."""

    def calibrate(**kwargs):
        raise AssertionError('measured')
    monkeypatch.setattr(calibrate_command, 'calibrate', calibrate)


@pytest.mark.parametrize('argv, message', [
    # argparse's "invalid float value" said nothing of what is allowed
    (['--seconds', 'abc'], 'argument --seconds: must be a finite number >= '
                           "10 (seconds), got 'abc' (see --help)"),
    (['--clock', 'gpu'], "argument --clock: invalid choice: 'gpu' (choose "
                         "from 'wall', 'cpu') (see --help)"),
    (['--seed', 'x'], 'argument --seed: must be an int from 0 to '
                      "4294967295, got 'x' (see --help)"),
    (['--seconds', '5'], '--seconds must be a finite number >= 10, got '
                         '5.0'),
    (['--seconds', 'nan'], '--seconds must be a finite number >= 10, '
                           'got nan'),
    # a budget without end would measure forever
    (['--seconds', 'inf'], '--seconds must be a finite number >= 10, '
                           'got inf'),
    (['--secs', '30'], 'unrecognized arguments: --secs 30; did you mean '
                       '--seconds? (see --help)'),
    (['--zzzz', '30'], 'unrecognized arguments: --zzzz 30 (see --help)'),
    # NumPy's RandomState takes 0 to 2**32 - 1: checked before measuring
    (['--seed', '-1'], '--seed must be an int from 0 to 4294967295, got -1'),
    (['--seed', '4294967296'], '--seed must be an int from 0 to 4294967295, '
                               'got 4294967296'),
])
def test_calibrate_mistakes_are_one_error_line(argv, message, tmp_path,
                                               monkeypatch, capsys):
    _never_calibrated(monkeypatch)
    assert error_of(capsys, 'calibrate', '--out', str(tmp_path / 'c.json'),
                    *argv) == 'error: ' + message
    assert not (tmp_path / 'c.json').exists()


@pytest.mark.parametrize('out, message', [
    (' ', "--out is blank (' '): give a file name such as calibration.json"),
    ('-', "--out '-' would be a file named '-', not standard output: give a "
          'file name such as calibration.json')])
def test_calibrate_refuses_a_blank_or_dash_out(out, message, tmp_path,
                                               monkeypatch, capsys):
    # both were taken, measured for minutes and written as files named so
    monkeypatch.chdir(tmp_path)
    _never_calibrated(monkeypatch)
    assert error_of(capsys, 'calibrate', '--out', out) == 'error: ' + message
    assert os.listdir(str(tmp_path)) == []


def test_a_misspelt_required_option_is_told_as_unknown(
        tmp_path, monkeypatch, capsys):
    # --ou for --out: the unknown option, not '--out is required'
    _never_calibrated(monkeypatch)
    assert error_of(capsys, 'calibrate', '--ou', str(tmp_path / 'c.json')
                    ) == ('error: unrecognized arguments: --ou; did you '
                          'mean --out? (see --help)')
    # nothing unknown: the required one is missing
    assert error_of(capsys, 'calibrate', '--seconds', '30') == (
        'error: the following arguments are required: --out (see --help)')


def test_calibrate_refuses_a_directory_or_a_missing_one(tmp_path,
                                                        monkeypatch, capsys):
    _never_calibrated(monkeypatch)
    assert error_of(capsys, 'calibrate', '--out', str(tmp_path)) == (
        'error: --out {!r} is a directory: give a file name such as '
        'calibration.json'.format(str(tmp_path)))
    missing = str(tmp_path / 'no' / 'c.json')
    assert error_of(capsys, 'calibrate', '--out', missing) == (
        'error: --out {!r}: cannot write in directory {!r}: it does not '
        'exist'.format(missing, str(tmp_path / 'no')))


def test_calibrate_refuses_an_unwritable_directory(tmp_path, monkeypatch,
                                                   capsys):
    _never_calibrated(monkeypatch)
    locked = tmp_path / 'locked'
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(str(locked), os.W_OK):  # root writes anyway
            pytest.skip('a read-only directory is writable here (root)')
        path = str(locked / 'c.json')
        assert error_of(capsys, 'calibrate', '--out', path) == (
            'error: --out {!r} cannot be written: Permission '
            'denied'.format(path))
    finally:
        locked.chmod(0o700)


class FakeCalibration(object):
    info = {'device': 'cpu-test'}
    error = {'n_probes': 12, 'inference': 0.154, 'training': None}
    untrusted_reason = None

    def untrusted(self):
        return self.untrusted_reason

    def save(self, path):
        with open(path, 'w') as f:
            f.write('{}')


def test_calibrate_prints_its_summary(tmp_path, monkeypatch):
    seen = {}

    def calibrate(seconds, clock, seed, progress):
        seen.update(seconds=seconds, clock=clock, seed=seed)
        return FakeCalibration()
    monkeypatch.setattr(calibrate_command, 'calibrate', calibrate)
    out = io.StringIO()
    path = str(tmp_path / 'c.json')
    assert main(['calibrate', '--out', path, '--seconds', '30', '--clock',
                 'cpu', '--seed', '5'], ost=out) == 0
    assert seen == dict(seconds=30.0, clock='cpu', seed=5)
    # 0.154 -> '15%'; no training error -> 'n/a'
    assert out.getvalue() == (
        'calibrated cpu-test in 0 s: 12 probe runs, held-out error 15% '
        '(inference), n/a (training); saved to {}\n'.format(path))
    assert (tmp_path / 'c.json').read_text() == '{}'


@pytest.mark.parametrize('closed', [True, False])
def test_calibrate_whose_summary_cannot_be_written_is_one_line(
        tmp_path, monkeypatch, capsys, closed):
    # the calibration is saved; a closed stdout (None, '>&-') or a full
    # disk takes no summary: one line and status 1, not a traceback
    monkeypatch.setattr(calibrate_command, 'calibrate',
                        lambda **kwargs: FakeCalibration())
    path = tmp_path / 'c.json'
    with unwritable_stdout(monkeypatch, closed) as (ost, reason):
        status = main(['calibrate', '--out', str(path)], ost=ost)
    assert (status, capsys.readouterr().err) == (
        1, 'error: cannot write the summary: {}\n'.format(reason))
    assert path.read_text() == '{}'


def test_calibrate_whose_directory_went_away_is_one_line(tmp_path,
                                                         monkeypatch, capsys):
    # --out was found writable before the minutes of measuring; its
    # directory is gone when the calibration is saved: status 1 and one
    # line naming the file (it was a traceback)
    from calibration_fixtures import literal_calibration

    def calibrate(**kwargs):
        (tmp_path / 'out').rmdir()
        return literal_calibration()
    monkeypatch.setattr(calibrate_command, 'calibrate', calibrate)
    (tmp_path / 'out').mkdir()
    path = str(tmp_path / 'out' / 'c.json')
    out = io.StringIO()
    assert main(['calibrate', '--out', path], ost=out) == 1
    assert out.getvalue() == ''
    assert capsys.readouterr().err == (
        "error: {!r} cannot be written (a calibration file): [Errno 2] No "
        "such file or directory: {!r}\n".format(path, path))


def test_calibrate_warns_after_its_summary_when_untrusted(
        tmp_path, monkeypatch, capsys):
    found = FakeCalibration()
    found.untrusted_reason = 'held-out error 42% is above 25%: ...'

    def calibrate(**kwargs):
        # the API's own warning is not said a second time
        warnings.warn('held-out error 42%', ReportWarning)
        return found
    monkeypatch.setattr(calibrate_command, 'calibrate', calibrate)
    out = io.StringIO()
    # (pytest records the warnings a test leaves instead of printing them
    # as Python would: caught here, as printed)
    with warnings.catch_warnings(record=True) as printed:
        warnings.simplefilter('always')
        assert main(['calibrate', '--out', str(tmp_path / 'c.json')],
                    ost=out) == 0
    assert out.getvalue().startswith('calibrated cpu-test')
    # one line on stderr, after the summary: no Python warning beside it
    assert capsys.readouterr().err == (
        'warning: held-out error 42% is above 25%: ...\n')
    assert [str(w.message) for w in printed] == []


def test_calibrate_defaults(tmp_path, monkeypatch):
    # the help's defaults: 120 s, the wall clock, random probes
    seen = {}

    def calibrate(**kwargs):
        seen.update(kwargs)
        return FakeCalibration()
    monkeypatch.setattr(calibrate_command, 'calibrate', calibrate)
    assert main(['calibrate', '--out', str(tmp_path / 'c.json')],
                ost=io.StringIO()) == 0
    assert (seen['seconds'], seen['clock'], seen['seed']) == (120, 'wall',
                                                              None)


def test_calibrate_reports_a_refused_budget(tmp_path, monkeypatch, capsys):

    def calibrate(**kwargs):
        raise ValueError('seconds must be at least 10')
    monkeypatch.setattr(calibrate_command, 'calibrate', calibrate)
    assert main(['calibrate', '--out', str(tmp_path / 'c.json')]) == 2
    assert capsys.readouterr().err == 'error: seconds must be at least 10\n'


def test_calibrate_bar_in_a_log_is_a_line_each_tenth():
    log = io.StringIO()
    progress = progress_bar(log)
    for fraction in (0, 0.05, 0.095, 0.1, 0.15, 0.19, 0.4, 1.0):
        progress(fraction, 'probe')
    # 0 -> tenth 0; 0.05, 0.095 -> 0 again (no line); 0.1 -> 1; 0.15,
    # 0.19 -> 1 (none); 0.4: 12 of 30 filled; 1.0: all 30
    assert log.getvalue().splitlines() == [
        '[' + '.' * 30 + ']   0% probe',
        '[###' + '.' * 27 + ']  10% probe',
        '[' + '#' * 12 + '.' * 18 + ']  40% probe',
        '[' + '#' * 30 + '] 100% probe']


class Log(object):
    """A stream with nothing but write and flush (no isatty)."""

    def __init__(self):
        self.lines = []

    def write(self, text):
        self.lines.append(text)

    def flush(self):
        self.lines.append('<flushed>')


def test_calibrate_bar_on_a_stream_without_isatty_is_a_log():
    log = Log()
    progress = progress_bar(log)
    progress(0.5, 'x')
    # flushed at once: a log shows each line as it is written
    assert log.lines == ['[' + '#' * 15 + '.' * 15 + ']  50% x\n',
                         '<flushed>']


def test_calibrate_bar_on_a_terminal_is_redrawn_in_place():
    tty = FakeTerminal()
    progress = progress_bar(tty)
    progress(0.5, 'x')
    progress(1.0, 'x')
    # 15 of 30 filled; each line padded to 70 columns, a newline at the end
    half = '[' + '#' * 15 + '.' * 15 + ']  50% x'
    full = '[' + '#' * 30 + '] 100% x'
    assert tty.getvalue() == ('\r' + half + ' ' * (70 - len(half)) + '\r' +
                              full + ' ' * (70 - len(full)) + '\n')
    # a long text is cut at 70 columns
    tty = FakeTerminal()
    progress_bar(tty)(0.0, 'y' * 80)
    assert tty.getvalue() == '\r[' + '.' * 30 + ']   0% ' + 'y' * 32


def build_array_logits():
    """Logits of 2 classes as a NumPy array, not a Variable: a ReLU's
    output cut from the graph."""
    return lambda x: chainer.functions.relu(x).array[:, :2]


def test_train_takes_logits_as_an_array():
    # the ReLU, then the loss on the array (softmax cross entropy of 3
    # samples of 2 classes): no input requires a gradient, no backward
    status, text = run('test_main:build_array_logits', '--shape',
                       '3,4', '--unit', 'raw', '--train', '--mode', 'csv',
                       '--columns', 'type,phase')
    assert status == 0
    assert text.splitlines()[1:] == [
        'ReLU,forward', 'SoftmaxCrossEntropy,forward', 'total,']


# Plots

def scaling_plot_title(monkeypatch, tmp_path, *options):
    """The title of the scaling plot a run of build_linear writes, and
    the file's first bytes."""
    drawn = []
    draw = plots.plot_scaling

    def kept(*args, **kwargs):
        drawn.append(draw(*args, **kwargs))
        return drawn[-1]
    monkeypatch.setattr(plots, 'plot_scaling', kept)
    path = str(tmp_path / 'scaling.png')
    status, _ = run('cli_models:build_linear', '--shape', '4,3', '--train',
                    '--workers', '1,8', '--plot-scaling', path, *options)
    assert status == 0
    with open(path, 'rb') as f:
        head = f.read(8)
    fig, = drawn
    return fig.axes[0].get_title(), head


def test_plot_scaling_is_written(monkeypatch, tmp_path):
    title, head = scaling_plot_title(monkeypatch, tmp_path, '--device',
                                     'A100', '--network', 'IB-EDR')
    assert head == b'\x89PNG\r\n\x1a\n'
    # the model as typed, the presets by their names
    assert title == 'cli_models:build_linear on a100, ib-edr: scaling'


@pytest.mark.parametrize('name, title, shown', [
    ('', 'mine', 'mine'), (None, None, 'given network'),
    ('', '', 'given network')])
def test_plot_scaling_of_a_network_file_without_a_name(
        monkeypatch, tmp_path, name, title, shown):
    # the title named no network: 'cli_models:build_linear on a100'
    from chainer_computational_cost.core import devices
    net = str(tmp_path / 'net.json')
    devices.save_network(devices.Network(name, title, 1e9, 1e-5), net)
    got, _ = scaling_plot_title(monkeypatch, tmp_path, '--device', 'a100',
                                '--network', net)
    assert got == 'cli_models:build_linear on a100, {}: scaling'.format(
        shown)


def test_plot_scaling_draws_every_mode_whatever_overlap_the_table_has(
        monkeypatch, tmp_path):
    drawn = []
    draw = plots.plot_scaling

    def kept(curves, *args, **kwargs):
        drawn.append(list(curves))
        return draw(curves, *args, **kwargs)
    monkeypatch.setattr(plots, 'plot_scaling', kept)
    status, _ = run('cli_models:build_linear', '--shape', '4,3', '--train',
                    '--workers', '1,8', '--device', 'a100', '--network',
                    'ib-edr', '--overlap', 'ddp', '--plot-scaling',
                    str(tmp_path / 's.png'))
    assert status == 0
    assert drawn == [['none', 'chainermn-double-buffering', 'ddp',
                      'horovod']]


def test_plot_scaling_of_a_given_peak_over_a_network_file(monkeypatch,
                                                          tmp_path):
    from chainer_computational_cost.core import devices
    net = str(tmp_path / 'net.json')
    devices.save_network(devices.Network('my-net', 'mine', 1e9, 1e-5), net)
    title, _ = scaling_plot_title(monkeypatch, tmp_path, '--peak-flops',
                                  '1e12', '--bandwidth', '1e11',
                                  '--network', net)
    assert title == 'cli_models:build_linear on given peak, my-net: scaling'
