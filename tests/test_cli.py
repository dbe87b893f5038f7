"""The command line (small models only: the VGG16 run is in tests/models)."""

import io

import chainer
import chainer.functions as F
import pytest

from chainer_computational_cost.__main__ import main
from chainer_computational_cost.__main__ import parse_shape


class Tiny(chainer.Chain):
    def forward(self, x):
        return F.relu(x)


def build_tiny():
    return Tiny()


def run(*argv):
    out = io.StringIO()
    status = main(list(argv), ost=out)
    return status, out.getvalue()


def test_factory_model_raw_csv():
    status, text = run('test_cli:build_tiny', '--shape', '2,3', '--unit',
                       'raw', '--mode', 'csv')
    assert status == 0
    # 6 elements of float32: 6 FLOPs, 24 bytes each way
    assert text == ('Layer name,FLOPs,MemRead B,MemWrite B,MemR+W B\n'
                    'ReLU-1,6,24,24,48\n'
                    'total,6,24,24,48\n')


def test_summary_and_columns_and_dtype():
    status, text = run('test_cli:build_tiny', '--shape', '4', '--unit',
                       'raw', '--summary', '--columns', 'type,mread',
                       '--dtype', 'float16')
    assert status == 0
    # 4 elements of 2 bytes
    assert text.splitlines()[2] == '|ReLU|8|'


@pytest.mark.parametrize('argv, message', [
    (['nosuchmodel'], 'unknown model'),
    (['test_cli:nothing'], 'nothing'),
    (['test_cli:build_tiny', '--columns', 'name,foo'], 'unknown column'),
    (['test_cli:build_tiny', '--n-digits', '-1'], 'negative'),
])
def test_errors_are_reported_with_exit_status_2(argv, message, capsys):
    status, text = run(*argv)
    assert status == 2 and text == ''
    assert message in capsys.readouterr().err


@pytest.mark.parametrize('bad', ['', '1,,3', '1,-3', 'a,b'])
def test_parse_shape_rejects(bad):
    with pytest.raises(Exception, match='positive integers'):
        parse_shape(bad)


def test_bad_unit_exits(capsys):
    with pytest.raises(SystemExit):
        main(['vgg16', '--unit', 'X'])
    assert 'unit must be one of' in capsys.readouterr().err
