"""The values every show_* method and the command line share: one check
each, any case, and numbers never written in scientific notation."""

import io

import chainer.functions as F
import numpy as np
import pytest

import chainer_computational_cost
from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.report import rendering
from chainer_computational_cost.core import columns
from chainer_computational_cost.core import devices


@pytest.fixture
def cch():
    with ComputationalCostHook() as hook:
        F.relu(np.zeros((2, 3), np.float32))
    return hook


def shown(cch, **kwargs):
    out = io.StringIO()
    cch.show_report(ost=out, columns=['name', 'flops'], **kwargs)
    return out.getvalue().splitlines()


@pytest.mark.parametrize('unit, header, cell', [
    # 6 FLOPs of a ReLU on 2x3
    ('RAW', 'FLOPs', '6'), ('none', 'FLOPs', '6'), ('k', 'KFLOPs', '0.006'),
    ('AUTO', 'FLOPs', '6'), ('AutoAligned', 'FLOPs', '6')])
def test_units_in_any_case(cch, unit, header, cell):
    assert shown(cch, unit=unit, mode='csv')[:2] == [
        'Layer name,' + header, 'ReLU-1,' + cell]


def test_modes_in_any_case(cch):
    assert shown(cch, mode='MD')[2] == '|ReLU-1|6|'


def test_check_unit_names_the_option():
    with pytest.raises(ValueError) as e:
        rendering.check_unit('X', '--unit')
    assert str(e.value) == (
        "--unit must be one of 'raw', 'K', 'M', 'G', 'T', 'autoaligned', "
        "'auto' (any case) or None, got 'X'")


def test_n_digits_5_is_not_scientific(cch):
    # 6 FLOPs = 0.000006 M: 0.00001 at 5 decimals (str() gives '1e-05')
    assert shown(cch, unit='M', mode='md', n_digits=5)[2] == '|ReLU-1|0.00001|'
    assert shown(cch, unit='M', mode='md', n_digits=6)[2] == \
        '|ReLU-1|0.000006|'


@pytest.mark.parametrize('value, n_digits, text', [
    (8e-05, 5, '0.00008'), (1.85, 3, '1.85'), (0.0, 3, '0.0'),
    (1e16, 3, '10000000000000000.0'), (123.456789, 10, '123.456789'),
    (2.5e-10, 10, '0.0000000003'), (-3e-05, 5, '-0.00003'), (7.6, 0, '8')])
def test_number_text(value, n_digits, text):
    assert rendering._number(value, n_digits) == text


def test_auto_unit_is_not_scientific():
    rows = [{'name': 'a', 'flops': 0.00002}]
    # 2e-05 FLOPs, no prefix, 5 decimals
    assert rendering.render(rows, ['flops'], 'csv', 'auto', 5) == \
        'FLOPs\n0.00002\n'


def test_roofline_columns_are_exported():
    assert chainer_computational_cost.RooflineColumns is \
        columns.RooflineColumns


def test_device_names_in_any_case():
    assert devices.resolve_device('A100') is devices.DEVICES['a100']
