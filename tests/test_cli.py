"""The command line (small models only: the VGG16 run is in tests/models)."""

import io
import os

import pytest

from chainer_computational_cost.__main__ import main
from chainer_computational_cost.__main__ import parse_shape

import cli_models


def run(*argv):
    out = io.StringIO()
    status = main(list(argv), ost=out)
    return status, out.getvalue()


def line_of(marker, path=cli_models.__file__):
    """'path:line' of the one line of ``path`` containing ``marker``."""
    with open(path) as f:
        numbers = [i for i, line in enumerate(f, 1) if marker in line]
    assert len(numbers) == 1
    return '{}:{}'.format(path, numbers[0])


def error_of(capsys, *argv):
    """The stderr of a run that must fail with status 2 and print nothing
    on the report stream; it must be one line without a traceback."""
    status, text = run(*argv)
    err = capsys.readouterr().err
    assert (status, text) == (2, '')
    assert err.endswith('\n') and err.count('\n') == 1
    return err[:-1]


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
    assert err.startswith("error: unknown column(s) ['foo']; available "
                          "columns are ['name', 'type', ")


def test_negative_n_digits(capsys):
    err = error_of(capsys, 'cli_models:build_tiny', '--n-digits', '-1')
    assert err == 'error: n_digits must not be negative, got -1'


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


def write_module(directory, name, text):
    path = os.path.join(str(directory), name + '.py')
    with open(path, 'w') as f:
        f.write(text)
    return path


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
    with pytest.raises(SystemExit):
        main(['vgg16', '--unit', 'X'])
    assert 'unit must be one of' in capsys.readouterr().err


def test_bad_dtype_exits_before_building(capsys):
    with pytest.raises(SystemExit) as e:
        main(['cli_models:build_raising', '--dtype', 'int8'])
    assert e.value.code == 2
    assert ("argument --dtype: invalid choice: 'int8' (choose from "
            "'float16', 'float32', 'float64')") in capsys.readouterr().err
