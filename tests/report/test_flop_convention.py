"""The FLOP convention in the reports: figures that count a multiply-add
as 2 FLOPs (``ComputationalCostHook(fma_1flop=False)``; the default is 1)
say so in the headers of their FLOP columns and in a JSON field; figures
of the default convention look as they always did.

Worked by hand: a Linear(3, 4, nobias) at batch 2 is 2*3*4 = 24
multiply-adds: 24 FLOPs with fma_1flop=True, 2*4*(2*3 - 1) = 40 with
fma_1flop=False (DETAILS.md, LinearFunction); it reads x (6) and W (12)
elements, 18*4 = 72 bytes, and writes 8, 32 bytes.
"""

import io
import json
import pickle

import chainer.links as L
import numpy
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost import project_batch
from chainer_computational_cost.report import rendering

ROWS = [{'name': 'a', 'flops': 40, 'flops%': 100.0, 'mrw': 104,
         'intensity': 0.5, 'bytes': 8}]


def _linear_hook(fma_1flop):
    lin = L.Linear(3, 4, nobias=True)
    with ComputationalCostHook(fma_1flop=fma_1flop) as hook:
        lin(numpy.zeros((2, 3), numpy.float32))
    return hook


def _shown(report, method='show_report', **kwargs):
    buf = io.StringIO()
    getattr(report, method)(ost=buf, unit='raw', **kwargs)
    return buf.getvalue()


@pytest.mark.parametrize('mode, header', [
    ('csv', 'Layer name,FLOPs (2 per multiply-add),FLOPs (%) (2 per '
     'multiply-add),MemR+W B,Intensity FLOP/B (2 per multiply-add),'
     'Bytes B'),
    ('md', '|Layer name|FLOPs (2 per multiply-add)|FLOPs (%) (2 per '
     'multiply-add)|MemR+W B|Intensity FLOP/B (2 per multiply-add)|'
     'Bytes B|'),
])
def test_every_flop_column_and_no_other_says_2_per_multiply_add(
        mode, header):
    columns = ['name', 'flops', 'flops%', 'mrw', 'intensity', 'bytes']
    text = rendering.render(ROWS, columns, mode, unit='raw',
                            fma_1flop=False)
    assert text.splitlines()[0] == header
    plain = rendering.render(ROWS, columns, mode, unit='raw')
    assert '2 per multiply-add' not in plain
    # the cells are the same either way
    assert text.splitlines()[1:] == plain.splitlines()[1:]


def test_the_table_s_flop_header_has_the_label_as_its_last_line():
    pytest.importorskip('texttable')
    cells = rendering.table_cells(ROWS, ['name', 'flops'], unit='G',
                                  fma_1flop=False)
    assert cells[0] == ['Layer name', 'GFLOPs\n(2 per multiply-add)']
    text = rendering.render(ROWS, ['name', 'flops'], 'table',
                            fma_1flop=False)
    assert '(2 per multiply-add)' in text.splitlines()[2]


def test_json_names_the_convention_only_beside_flop_figures_of_2():
    doc = json.loads(rendering.render(ROWS, ['name', 'flops'], 'json',
                                      unit='raw', fma_1flop=False))
    assert list(doc) == ['flops_per_multiply_add', 'units', 'rows']
    assert doc['flops_per_multiply_add'] == 2
    assert doc['rows'] == [{'name': 'a', 'flops': 40}]
    for columns, fma_1flop in ((['name', 'flops'], True),
                               (['name', 'bytes'], False)):
        doc = json.loads(rendering.render(ROWS, columns, 'json', unit='raw',
                                          fma_1flop=fma_1flop))
        assert list(doc) == ['units', 'rows']


def test_fma_1flop_of_render_must_be_a_bool():
    with pytest.raises(TypeError, match=r'^fma_1flop must be True or False, '
                       r'got None \(NoneType\)$'):
        rendering.render(ROWS, ['flops'], fma_1flop=None)
    # NumPy's bool is a bool, as in every other check (checks.flag)
    text = rendering.render(ROWS, ['flops'], fma_1flop=numpy.bool_(False))
    assert text.splitlines()[0] == 'FLOPs (2 per multiply-add)'


def test_the_hook_s_report_says_so_with_fma_1flop_false():
    # 2*4*(2*3 - 1) = 40 FLOPs; 72 bytes read, 32 written
    text = _shown(_linear_hook(False), mode='csv')
    assert text.splitlines() == [
        'Layer name,FLOPs (2 per multiply-add),MemRead B,MemWrite B,'
        'MemR+W B',
        'LinearFunction-1,40,72,32,104',
        'total,40,72,32,104']
    doc = json.loads(_shown(_linear_hook(False), mode='json'))
    assert doc['flops_per_multiply_add'] == 2
    assert doc['rows'][-1]['flops'] == 40


def test_the_hook_s_default_report_is_as_it_was():
    # 2*3*4 = 24 multiply-adds, 1 FLOP each
    text = _shown(_linear_hook(True), mode='csv')
    assert text.splitlines() == [
        'Layer name,FLOPs,MemRead B,MemWrite B,MemR+W B',
        'LinearFunction-1,24,72,32,104',
        'total,24,72,32,104']
    doc = json.loads(_shown(_linear_hook(True), mode='json'))
    assert 'flops_per_multiply_add' not in doc


@pytest.mark.parametrize('method, kwargs', [
    ('show_summary_report', {}),
    ('show_phase_report', {}),
    ('show_link_report', {}),
    ('show_roofline_report', {'device': 'a100'}),
])
def test_every_report_of_flops_says_so(method, kwargs):
    text = _shown(_linear_hook(False), method, mode='md', **kwargs)
    header = text.splitlines()[0]
    assert '|FLOPs (2 per multiply-add)|' in header
    # 40 FLOPs on each row that holds the call
    assert '|40|' in text.splitlines()[-1]
    plain = _shown(_linear_hook(True), method, mode='md', **kwargs)
    assert '2 per multiply-add' not in plain


def test_a_snapshot_and_its_pickle_keep_the_label():
    snapshot = pickle.loads(pickle.dumps(_linear_hook(False).snapshot()))
    assert _shown(snapshot, mode='csv').splitlines()[:2] == [
        'Layer name,FLOPs (2 per multiply-add),MemRead B,MemWrite B,'
        'MemR+W B',
        'LinearFunction-1,40,72,32,104']


def test_the_torch_convention_is_labelled_as_2_per_multiply_add():
    # FlopCounterMode's count: 2 per multiply-add, 2*2*3*4 = 48 FLOPs
    lin = L.Linear(3, 4, nobias=True)
    with ComputationalCostHook(flop_convention='torch') as hook:
        lin(numpy.zeros((2, 3), numpy.float32))
    lines = [
        'Layer name,FLOPs (2 per multiply-add),MemRead B,MemWrite B,'
        'MemR+W B',
        'LinearFunction-1,48,72,32,104',
        'total,48,72,32,104']
    assert _shown(hook, mode='csv').splitlines() == lines
    doc = json.loads(_shown(hook, mode='json'))
    assert doc['flops_per_multiply_add'] == 2
    assert doc['rows'][-1]['flops'] == 48
    snapshot = pickle.loads(pickle.dumps(hook.snapshot()))
    assert _shown(snapshot, mode='csv').splitlines() == lines
    projected = project_batch(
        lambda n: lin(numpy.zeros((n, 3), numpy.float32)), 2,
        flop_convention='torch', check_batch=None)
    assert _shown(projected, mode='csv').splitlines() == lines


def test_reports_without_flops_are_unlabelled():
    # the memory report has no FLOP column, whatever the convention
    lin = L.Linear(3, 4, nobias=True)
    with ComputationalCostHook(fma_1flop=False, memory=True) as hook:
        lin(numpy.zeros((2, 3), numpy.float32))
    assert '2 per multiply-add' not in _shown(hook, 'show_memory_report',
                                              mode='md')
    doc = json.loads(_shown(hook, 'show_memory_report', mode='json'))
    assert 'flops_per_multiply_add' not in doc
