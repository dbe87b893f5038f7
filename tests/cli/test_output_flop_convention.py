"""The command line's FLOP convention in its output: with --no-fma (a
multiply-add as 2 FLOPs; the default is 1, as in 0.1.2) the FLOP columns'
headers and the JSON documents say so.  main() in-process, worked by hand
on tests/cli_models.py's Linear(3, 2) at batch 4: 4*3*2 = 24 multiply-adds
and 4*2 = 8 bias additions, 24 + 8 = 32 FLOPs by default and
4*2*(2*3 - 1) + 8 = 48 with --no-fma (DETAILS.md, LinearFunction)."""

import json

from cli_runs import run

LINEAR = ('cli_models:build_linear', '--shape', '4,3', '--unit', 'raw')


def test_csv_with_no_fma_says_so_in_the_flops_header():
    status, text = run(*LINEAR, '--mode', 'csv', '--no-fma')
    assert status == 0
    lines = text.splitlines()
    assert lines[0].split(',')[:2] == ['Layer name',
                                       'FLOPs (2 per multiply-add)']
    assert lines[1].split(',')[:2] == ['LinearFunction-1', '48']


def test_the_default_csv_is_as_it_was():
    status, text = run(*LINEAR, '--mode', 'csv')
    assert status == 0
    lines = text.splitlines()
    assert lines[0].split(',')[:2] == ['Layer name', 'FLOPs']
    assert lines[1].split(',')[:2] == ['LinearFunction-1', '32']


def test_json_with_no_fma_names_the_convention():
    status, text = run(*LINEAR, '--mode', 'json', '--no-fma')
    assert status == 0
    doc = json.loads(text)
    assert doc['flops_per_multiply_add'] == 2
    assert doc['rows'][0]['flops'] == 48
    status, text = run(*LINEAR, '--mode', 'json')
    assert 'flops_per_multiply_add' not in json.loads(text)


def test_json_of_several_reports_names_it_in_each_report_of_flops():
    status, text = run(*LINEAR, '--mode', 'json', '--no-fma', '--summary',
                       '--memory')
    assert status == 0
    doc = json.loads(text)
    assert doc['summary']['flops_per_multiply_add'] == 2
    assert doc['summary']['rows'][-1]['flops'] == 48
    assert 'flops_per_multiply_add' not in doc['memory']


def test_a_projection_with_no_fma_says_so():
    status, text = run(*LINEAR, '--mode', 'md', '--no-fma', '--project')
    assert status == 0
    lines = text.splitlines()
    assert lines[0].startswith('|Layer name|FLOPs (2 per multiply-add)|')
    assert lines[2].startswith('|LinearFunction-1|48|')
