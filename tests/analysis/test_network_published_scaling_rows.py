"""Sanity of the published scaling rows' data (no prediction is made).

The oracle of every efficiency is the pair of published throughputs the
row records next to it: ``throughput / (gpus / base_gpus *
base_throughput)``, rounded to the 3 decimals the row keeps (so within
0.0005), or, for an efficiency the source states to 2 digits, within
0.005 of the ratio of the throughputs read from its figure.
"""

import pytest

from published_scaling_rows import BUS_BANDWIDTHS
from published_scaling_rows import ROWS as FIRST
from published_scaling_rows import SPREAD
from published_scaling_rows_held_out import ROWS as HELD_OUT

ROWS = FIRST + HELD_OUT

PRECISIONS = {'fp32', 'tf32', 'mixed'}
GPUS = {'v100', 'a100', 'p100', 'k80', 'titanx-maxwell'}
INTRA = {'nvlink2-cube', 'nvlink1-cube', 'nvswitch1', 'nvswitch2', 'pcie3',
         'pcie4', 'not stated'}
ALLREDUCE = {'ddp', 'horovod', 'chainermn', 'parameter_server',
             'replicated'}
MODELS = {'ResNet50', 'ResNet152', 'VGG16', 'BERT-large', 'Transformer-big'}


def ratio(row, gpus, throughput):
    return throughput / (gpus / row.base_gpus * row.base_throughput)


def multi_node(row):
    return row.gpus > row.gpus_per_node


def _ids():
    return [row.id for row in ROWS]


def test_enough_unique_cited_rows():
    assert len(FIRST) >= 15 and len(HELD_OUT) >= 15
    assert len(set(_ids())) == len(ROWS)
    for row in ROWS:
        assert row.citation.strip(), row.id


def test_coverage():
    assert any(multi_node(row) for row in ROWS)
    assert any(not multi_node(row) for row in ROWS)
    precisions = {row.precision for row in ROWS}
    assert {'fp32', 'mixed'} <= precisions
    # in-node and multi-node rows in both fp32 and mixed precision
    for precision in ('fp32', 'mixed'):
        assert any(multi_node(r) for r in ROWS if r.precision == precision)
        assert any(not multi_node(r) for r in ROWS
                   if r.precision == precision)


@pytest.mark.parametrize('row', ROWS, ids=_ids())
def test_efficiency_is_the_throughputs_ratio(row):
    tolerance = {'computed': 0.0005, 'stated': 0.005}[row.efficiency_how]
    assert row.efficiency == pytest.approx(
        ratio(row, row.gpus, row.throughput), abs=tolerance)


@pytest.mark.parametrize('row', ROWS, ids=_ids())
def test_ladder_holds_baseline_and_n(row):
    ns = [n for n, _ in row.ladder]
    assert ns == sorted(set(ns))
    assert row.ladder[0] == (row.base_gpus, row.base_throughput)
    assert row.ladder[-1] == (row.gpus, row.throughput)
    # rule 6: no run more than 5 % superlinear
    for n, throughput in row.ladder[1:]:
        assert ratio(row, n, throughput) <= 1.05, (row.id, n)


@pytest.mark.parametrize('row', ROWS, ids=_ids())
def test_small_n_by_the_rule(row):
    above = [n for n, _ in row.ladder[1:-1]]
    if multi_node(row):
        above = [n for n in above if n > row.gpus_per_node]
    expected = above[0] if above else None
    assert row.small_gpus == expected
    if expected is None:
        assert row.small_efficiency is None
    else:
        throughput = dict(row.ladder)[row.small_gpus]
        assert row.small_efficiency == pytest.approx(
            ratio(row, row.small_gpus, throughput), abs=0.0005)


@pytest.mark.parametrize('row', ROWS, ids=_ids())
def test_base_step_time(row):
    if row.unit == 'speedup':
        assert row.base_throughput == 1.0
        assert row.base_step_time is None
    else:
        assert row.base_step_time == pytest.approx(
            row.batch * row.base_gpus / row.base_throughput, abs=5e-5)


@pytest.mark.parametrize('row', ROWS, ids=_ids())
def test_fields(row):
    assert row.model in MODELS
    assert row.precision in PRECISIONS
    assert row.gpu in GPUS
    assert row.intra_node in INTRA
    assert row.allreduce in ALLREDUCE
    assert row.efficiency_how in ('computed', 'stated')
    assert row.base_gpus in (1, row.gpus_per_node)
    if multi_node(row):
        assert row.network is not None
        assert row.network_transport in ('rdma', 'tcp', 'not stated')
    else:
        assert row.network is None and row.network_transport is None
    # a model built from its paper records its size and its tokens
    built = row.model in ('BERT-large', 'Transformer-big')
    assert (row.paper_params is not None) == built
    assert (row.sequence is not None) == (row.model == 'BERT-large')
    if row.accumulation is not None:
        assert [n for n, _ in row.accumulation] == [n for n, _ in
                                                    row.ladder]


def test_bus_bandwidths_and_spread_are_cited():
    assert len({b.id for b in BUS_BANDWIDTHS}) == len(BUS_BANDWIDTHS)
    for bandwidth in BUS_BANDWIDTHS:
        assert bandwidth.citation.strip(), bandwidth.id
    assert SPREAD.citation.strip()
    assert 0 < SPREAD.average <= SPREAD.maximum
