"""The scaling report's sourced model against published data-parallel runs
(issue 46): the 59 rows of ``published_scaling_rows.py``, the 33 of
``published_scaling_rows_held_out.py`` (gathered after the model was
built, and held out from its changes since), each predicted by the rules
of ``published_scaling_predictions.py`` (fixed before the row was
compared), and the six rows of ``test_network_published_scaling.py``.

The report states its own error (``network.MODEL_ERRORS``,
``network.ANCHORED_ERROR``): these tests hold those figures to what the
rows give, and the issue's targets to the figures.
"""

import statistics

import chainer
import pytest

import published_scaling_predictions as predictions
import published_scaling_rows as published
import published_scaling_rows_held_out as held_out
# a sibling test module: pytest puts this folder on the path
import test_network_published_scaling as older

from chainer_computational_cost.analysis import network

# The figures are Chainer 7.8.1's runs (the records of 6.7.0 split a
# step a little differently); once is enough for minutes of models.
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    chainer.__version__ != '7.8.1', reason='figures of Chainer 7.8.1')]


@pytest.fixture(scope='module')
def errors():
    """Model -> [(row id, predicted - published)]: 'sourced' and 'bound'
    a priori over all 98 rows (the first 59, the 33 held out, the six
    older), 'anchored' over the 69 rows with a small N."""
    out = {'sourced': [], 'bound': [], 'anchored': []}
    for row in published.ROWS + held_out.ROWS:
        for model in ('sourced', 'bound'):
            out[model].append((row.id, predictions.predicted(row, model) -
                               row.efficiency))
        if row.small_gpus:
            out['anchored'].append((row.id, predictions.anchored(row) -
                                    row.efficiency))
    for row in older.ROWS:
        for model in ('sourced', 'bound'):
            out[model].append((row[0], older.predicted_efficiency(
                row, model) - row[-1]))
    return out


def _error(pairs, tolerance):
    """The :class:`network.ModelError` of ``pairs``, rounded as the
    report says them (a tenth of a point)."""
    e = [abs(d) for _, d in pairs]
    return network.ModelError(
        len(e), sum(x <= tolerance + 1e-9 for x in e), tolerance,
        round(statistics.median(e), 3), round(max(e), 3))


def _sourced_within(errors, rows):
    """How many of ``rows`` the sourced model predicts within 10 points."""
    ids = {row.id for row in rows}
    return sum(abs(d) <= 0.10 for i, d in errors['sourced'] if i in ids)


@pytest.mark.parametrize('model', ['sourced', 'bound'])
def test_the_stated_error_is_the_published_rows(errors, model):
    assert _error(errors[model], 0.10) == network.MODEL_ERRORS[model]


def test_the_stated_anchored_error_is_the_published_rows(errors):
    assert _error(errors['anchored'], 0.05) == network.ANCHORED_ERROR


@pytest.mark.xfail(strict=True, reason=(
    '42 of the first 59 rows within 10 points (71 %): with the default '
    'jitter read as its source defines a variation (0.0148, not 0.08), '
    '14 of the 17 misses are optimistic by 10-19 points, mostly in-node '
    'mixed-precision runs that lost 13-23 points to more than their '
    'all-reduce; the misread jitter had made up for them (50 of 59)'))
def test_sourced_within_10_points_on_80_percent_of_the_first_rows(errors):
    within = _sourced_within(errors, published.ROWS)
    assert within >= 0.8 * len(published.ROWS)


@pytest.mark.xfail(strict=True, reason=(
    '18 of the 33 held-out rows within 10 points (55 %, as with the old '
    'jitter; median miss 7.5 points for 8.7): 14 of the 15 misses are '
    'optimistic, runs that lost 13-60 points where the model loses 2-8 '
    '(real-data float16 on DLPerf, BERT fine-tuning on Lambda servers, '
    'TensorFlow float16 on a V100-SXM3 server); the other is VGG16 on '
    '8 A100 PCIe, which scaled at 1.01'))
def test_sourced_within_10_points_on_80_percent_of_the_held_out_rows(
        errors):
    within = _sourced_within(errors, held_out.ROWS)
    assert within >= 0.8 * len(held_out.ROWS)


def test_the_sourced_model_is_nearer_than_the_bound(errors):
    assert network.MODEL_ERRORS['sourced'].within > \
        network.MODEL_ERRORS['bound'].within


@pytest.mark.xfail(strict=True, reason=(
    'all 98 rows: 64 within 10 points (65 %); the first 59 rows 42, the '
    '33 held out 18, the six of the last round 4 (the model misses runs '
    'whose loss is not communication: see the two tests above)'))
def test_sourced_within_10_points_on_80_percent_of_all_rows(errors):
    within = sum(abs(d) <= 0.10 for _, d in errors['sourced'])
    assert within >= 0.8 * len(errors['sourced'])


@pytest.mark.xfail(strict=True, reason=(
    '50 of 69 rows within 5 points (72 %): where a run lost almost nothing '
    'at its small N (BERT pre-training: 0.97-1.00 at 16-32 GPUs) the '
    'anchored model predicts little more loss at 256, where the runs lost '
    '5-22 points; in-node runs whose efficiency is not monotone in N '
    '(TF benchmarks, DGX-1: 0.96 at 2 GPUs, 0.99 at 8); and float16 runs '
    'whose loss grows faster than communication does'))
def test_anchored_within_5_points_on_80_percent_of_the_rows(errors):
    within = sum(abs(d) <= 0.05 for _, d in errors['anchored'])
    assert within >= 0.8 * len(errors['anchored'])
