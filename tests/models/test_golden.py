"""Golden figures measured on the original tool (REFERENCE.md section 2 and
the seed documents), reproduced exactly."""

import io

import chainer
import chainer.links as L
import numpy as np
import pytest

from chainer_computational_cost import SummaryColumns

from chainer_computational_cost import project_batch
from model_helpers import run_model


@pytest.fixture(scope='module')
def vgg16():
    model = L.VGG16Layers(pretrained_model=None)
    return run_model(model, np.zeros((1, 3, 224, 224), np.float32))


@pytest.fixture(scope='module')
def resnet50_model():
    return L.ResNet50Layers(pretrained_model=None)


@pytest.fixture(scope='module')
def resnet50(resnet50_model):
    return run_model(resnet50_model, np.zeros((1, 3, 224, 224), np.float32))


def test_vgg16_totals(vgg16):
    assert vgg16.total_report == {
        'name': 'total', 'type': 'total', 'n_layers': 38,
        'flops': 15488423327, 'mread': 668603456, 'mwrite': 114575168,
        'mrw': 783178624,
        # sum(p.size for p in model.params()): the model was a Link
        'n_params': 138357544}


def test_vgg16_per_type(vgg16):
    conv = vgg16.summary_report['Convolution2DFunction']
    assert (conv['n_layers'], conv['flops'], conv['mread'],
            conv['mwrite']) == (13, 15346630656, 95186176, 54190080)
    relu = vgg16.summary_report['ReLU']
    assert (relu['n_layers'], relu['flops'], relu['mread'],
            relu['mwrite']) == (15, 13555712, 54222848, 54222848)


def test_vgg16_first_layers(vgg16):
    report = vgg16.layer_report
    conv = report['Convolution2DFunction-1']
    assert (conv['flops'], conv['mread'], conv['mwrite']) == (
        86704128, 609280, 12845056)
    assert conv['input_shapes'] == [(1, 3, 224, 224), (64, 3, 3, 3), (64,)]
    assert conv['output_shapes'] == [(1, 64, 224, 224)]
    assert conv['params'] == {'k': 3, 's': 1, 'p': 1, 'd': 1, 'groups': 1,
                              'nobias': False}
    relu = report['ReLU-1']
    assert (relu['flops'], relu['mread'], relu['mwrite']) == (
        3211264, 12845056, 12845056)


# Seed 000's table (unit='G', mode='md'), MaxPooling2D -> MaxPoolingND.
VGG16_MD = """\
|Layer name|GFLOPs|MemRead GiB|MemWrite GiB|MemR+W GiB|
|:----|:----|:----|:----|:----|
|Convolution2DFunction-1|0.087|0.001|0.012|0.013|
|ReLU-1|0.003|0.012|0.012|0.024|
|Convolution2DFunction-2|1.85|0.012|0.012|0.024|
|ReLU-2|0.003|0.012|0.012|0.024|
|MaxPoolingND-1|0.002|0.012|0.003|0.015|
|Convolution2DFunction-3|0.925|0.003|0.006|0.009|
|ReLU-3|0.002|0.006|0.006|0.012|
|Convolution2DFunction-4|1.85|0.007|0.006|0.013|
|ReLU-4|0.002|0.006|0.006|0.012|
|MaxPoolingND-2|0.001|0.006|0.001|0.007|
|Convolution2DFunction-5|0.925|0.003|0.003|0.006|
|ReLU-5|0.001|0.003|0.003|0.006|
|Convolution2DFunction-6|1.85|0.005|0.003|0.008|
|ReLU-6|0.001|0.003|0.003|0.006|
|Convolution2DFunction-7|1.85|0.005|0.003|0.008|
|ReLU-7|0.001|0.003|0.003|0.006|
|MaxPoolingND-3|0.001|0.003|0.001|0.004|
|Convolution2DFunction-8|0.925|0.005|0.001|0.007|
|ReLU-8|0.0|0.001|0.001|0.003|
|Convolution2DFunction-9|1.85|0.01|0.001|0.012|
|ReLU-9|0.0|0.001|0.001|0.003|
|Convolution2DFunction-10|1.85|0.01|0.001|0.012|
|ReLU-10|0.0|0.001|0.001|0.003|
|MaxPoolingND-4|0.0|0.001|0.0|0.002|
|Convolution2DFunction-11|0.462|0.009|0.0|0.01|
|ReLU-11|0.0|0.0|0.0|0.001|
|Convolution2DFunction-12|0.462|0.009|0.0|0.01|
|ReLU-12|0.0|0.0|0.0|0.001|
|Convolution2DFunction-13|0.462|0.009|0.0|0.01|
|ReLU-13|0.0|0.0|0.0|0.001|
|MaxPoolingND-5|0.0|0.0|0.0|0.0|
|Reshape-1|0.0|0.0|0.0|0.0|
|LinearFunction-1|0.103|0.383|0.0|0.383|
|ReLU-14|0.0|0.0|0.0|0.0|
|LinearFunction-2|0.017|0.063|0.0|0.063|
|ReLU-15|0.0|0.0|0.0|0.0|
|LinearFunction-3|0.004|0.015|0.0|0.015|
|Softmax-1|0.0|0.0|0.0|0.0|
|total|15.488|0.623|0.107|0.729|
"""

VGG16_SUMMARY_MD = """\
|Layer type|# Layers|GFLOPs|MemRead GiB|MemWrite GiB|MemR+W GiB|
|:----|:----|:----|:----|:----|:----|
|Convolution2DFunction|13|15.347|0.089|0.05|0.139|
|ReLU|15|0.014|0.05|0.05|0.101|
|MaxPoolingND|5|0.005|0.023|0.006|0.029|
|Reshape|1|0.0|0.0|0.0|0.0|
|LinearFunction|3|0.124|0.461|0.0|0.461|
|Softmax|1|0.0|0.0|0.0|0.0|
|total|38|15.488|0.623|0.107|0.729|
"""


@pytest.mark.chainer7_only
def test_vgg16_markdown_matches_the_seed(vgg16):
    out = io.StringIO()
    vgg16.show_report(out, unit='G', mode='md')
    assert out.getvalue() == VGG16_MD
    out = io.StringIO()
    vgg16.show_summary_report(out, unit='G', mode='md')
    assert out.getvalue() == VGG16_SUMMARY_MD


def test_vgg16_summary_percentages(vgg16):
    out = io.StringIO()
    vgg16.show_summary_report(out, unit='G', mode='csv',
                              columns=SummaryColumns.ALL)
    # seed 000, the SummaryColumns.ALL table
    assert out.getvalue().splitlines()[1] == (
        'Convolution2DFunction,13,15.347,0.089,0.05,0.139,99.085%,14.237%,'
        '47.297%,19.073%')


def test_resnet50_totals(resnet50):
    assert resnet50.total_report == {
        'name': 'total', 'type': 'total', 'n_layers': 176,
        'flops': 3884871583, 'mread': 269226304, 'mwrite': 143920960,
        'mrw': 413147264,
        # conv1 has a bias: 64 more than torchvision's 25557032
        'n_params': 25557096}


# Seed 001: the first rows of the report (unit='M') and the summary with
# SummaryColumns.ALL, MaxPooling2D -> MaxPoolingND.
RESNET50_FIRST_ROWS = """\
|Convolution2DFunction-1|118.014|0.61|3.062|3.673|
|FixedBatchNormalization-1|0.803|3.063|3.062|6.125|
|ReLU-1|0.803|3.062|3.062|6.125|
|MaxPoolingND-1|1.606|3.062|0.766|3.828|
|Convolution2DFunction-2|12.845|0.781|0.766|1.547|
|FixedBatchNormalization-2|0.201|0.766|0.766|1.532|
|ReLU-2|0.201|0.766|0.766|1.531|
|Convolution2DFunction-3|115.606|0.906|0.766|1.672|
|FixedBatchNormalization-3|0.201|0.766|0.766|1.532|
|ReLU-3|0.201|0.766|0.766|1.531|
|Convolution2DFunction-4|51.38|0.828|3.062|3.891|
|FixedBatchNormalization-4|0.803|3.064|3.062|6.127|
|Convolution2DFunction-5|51.38|0.828|3.062|3.891|
|FixedBatchNormalization-5|0.803|3.064|3.062|6.127|
|Add-1|0.803|6.125|3.062|9.188|
|ReLU-4|0.803|3.062|3.062|6.125|
"""

RESNET50_SUMMARY = """\
|Layer type|# Layers|MFLOPs|MemRead MiB|MemWrite MiB|MemR+W MiB|FLOPs (%)|MemRead (%)|MemWrite (%)|MemR+W (%)|
|:----|:----|:----|:----|:----|:----|:----|:----|:----|:----|
|Convolution2DFunction|53|3855.925|128.138|40.387|168.524|99.255%|49.907%|29.425%|42.772%|
|FixedBatchNormalization|53|10.587|40.589|40.387|80.976|0.273%|15.809%|29.425%|20.552%|
|ReLU|49|9.082|34.645|34.645|69.289|0.234%|13.493%|25.241%|17.586%|
|MaxPoolingND|1|1.606|3.062|0.766|3.828|0.041%|1.193%|0.558%|0.972%|
|Add|16|5.519|42.109|21.055|63.164|0.142%|16.401%|15.34%|16.031%|
|AveragePooling2D|1|0.1|0.383|0.008|0.391|0.003%|0.149%|0.006%|0.099%|
|Reshape|1|0.0|0.0|0.0|0.0|0.0%|0.0%|0.0%|0.0%|
|LinearFunction|1|2.049|7.824|0.004|7.828|0.053%|3.047%|0.003%|1.987%|
|Softmax|1|0.003|0.004|0.004|0.008|0.0%|0.001%|0.003%|0.002%|
|total|176|3884.872|256.754|137.254|394.008|100.0%|100.0%|100.0%|100.0%|
"""  # NOQA


@pytest.mark.chainer7_only
def test_resnet50_tables_match_the_seed(resnet50):
    out = io.StringIO()
    resnet50.show_report(out, unit='M', mode='md')
    lines = out.getvalue().splitlines(True)
    assert ''.join(lines[2:18]) == RESNET50_FIRST_ROWS
    assert lines[-1] == '|total|3884.872|256.754|137.254|394.008|\n'
    out = io.StringIO()
    resnet50.show_summary_report(out, unit='M', mode='md',
                                 columns=SummaryColumns.ALL)
    assert out.getvalue() == RESNET50_SUMMARY


@pytest.fixture(scope='module')
def resnet50_batch32(resnet50_model):
    return run_model(resnet50_model, np.zeros((32, 3, 224, 224), np.float32))


@pytest.mark.slow
def test_resnet50_batch32_matches_the_blog(resnet50_batch32):
    cch = resnet50_batch32
    out = io.StringIO()
    cch.show_summary_report(out, unit='G', mode='csv',
                            columns=['type', 'flops', 'mread', 'mwrite'])
    # seed 001: total 124.316 GFLOPs, 5.072 GiB read, 4.289 GiB written
    assert out.getvalue().splitlines()[-1] == 'total,124.316,5.072,4.289'


# Where the cost lives: the link tree of the real models

def test_resnet50_link_root_is_the_total(resnet50, resnet50_model):
    root = resnet50.link_report['/']
    total = resnet50.total_report
    for key in ('n_layers', 'flops', 'mread', 'mwrite', 'mrw', 'n_params'):
        assert root[key] == total[key]
    assert root['n_params'] == sum(p.size for p in resnet50_model.params())
    assert root['n_params'] == 25557096


def test_resnet50_stages_sum_their_blocks(resnet50):
    report = resnet50.link_report
    layers = [r for name, r in resnet50.layer_report.items()
              if name != 'total']
    for stage in ('/res2', '/res3', '/res4', '/res5'):
        blocks = [p for p in report
                  if p.startswith(stage + '/') and p.count('/') == 2]
        own = sum(r['flops'] for r in layers if r['link'] == stage)
        assert report[stage]['flops'] == sum(
            report[b]['flops'] for b in blocks) + own
    # the stages have 3, 4, 6 and 3 blocks
    assert [len([p for p in report if p.startswith(s + '/')
                 and p.count('/') == 2])
            for s in ('/res2', '/res3', '/res4', '/res5')] == [3, 4, 6, 3]


def test_resnet50_conv1_is_the_first_convolution(resnet50):
    conv1 = resnet50.link_report['/conv1']
    first = resnet50.layer_report['Convolution2DFunction-1']
    assert first['link'] == '/conv1'
    assert (conv1['flops'], conv1['mread'], conv1['mwrite']) == (
        first['flops'], first['mread'], first['mwrite'])
    # 7*7*3*64 weights + 64 biases
    assert conv1['n_params'] == 9472 and conv1['n_calls'] == 1


def test_vgg16_link_root(vgg16):
    assert vgg16.link_report['/']['n_params'] == 138357544
    assert vgg16.link_report['/']['flops'] == 15488423327


# Any batch size without running it

@pytest.mark.slow
def test_resnet50_projected_to_batch32_equals_a_real_run(resnet50_model,
                                                         resnet50_batch32):
    def run(n):
        with chainer.using_config('train', False), \
                chainer.using_config('enable_backprop', False):
            resnet50_model(np.zeros((n, 3, 224, 224), np.float32))

    projected = project_batch(run, 32)
    real = resnet50_batch32.layer_report
    got = projected.layer_report
    assert list(got) == list(real)
    for name in real:
        for key in ('flops', 'mread', 'mwrite', 'input_shapes',
                    'output_shapes'):
            assert got[name].get(key) == real[name].get(key), (name, key)
    # the blog's 124.316 GFLOPs
    assert round(got['total']['flops'] / 1e9, 3) == 124.316
