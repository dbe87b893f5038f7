"""Real models under a strict hook (no ignored layer, no warning), their
figures checked against numbers worked out by hand from the calculators'
docstring formulas (the arithmetic is in the comments).

Every run goes through ``run_model_checked``, which also checks that the
output shapes the hook recorded for each call are the shapes of the outputs
Chainer returned.  Memory figures are bytes: every array here is float32 or
int32, so bytes = 4 * elements.
"""

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest

from model_helpers import run_model_checked
from model_helpers import TrainCNN


# ``F.max_pooling_2d`` creates MaxPoolingND on Chainer 7, MaxPooling2D on
# Chainer 6 (same figures).
CHAINER_MAJOR = int(chainer.__version__.split('.')[0])
MAX_POOL_2D = 'MaxPoolingND' if CHAINER_MAJOR >= 7 else 'MaxPooling2D'


def type_counts(cch):
    """[(layer type, number of calls)] in order of first call."""
    return [(k, v['n_layers']) for k, v in cch.summary_report.items()
            if k != 'total']


def costs(entry):
    return (entry['flops'], entry['mread'], entry['mwrite'])


def per_type(cch, key):
    """{layer type: figure} for every type (``key`` one of flops, mread,
    mwrite)."""
    return {k: v[key] for k, v in cch.summary_report.items()
            if k != 'total'}


def total(cch):
    t = cch.total_report
    return (t['n_layers'], t['flops'], t['mread'], t['mwrite'])


# ---------------------------------------------------------------------------
# ResNet101 / ResNet152, input (1, 3, 64, 64).
#
# Their pool5 is a *global* average pooling (kernel = the map size, not a
# fixed 7), so any input that leaves a map >= 1x1 after res5 works.
# Spatial sizes: conv1 (7x7, s2, p3) 64 -> 32; pool1 (3x3, s2, cover_all)
# (32 - 3 + 1) // 2 + 1 = 16; res2 16 (P = 256 px), res3 8 (P = 64),
# res4 4 (P = 16), res5 2 (P = 4); pool5 2x2 kernel -> 1x1.
#
# Block with mid channels m, output 4m, P output pixels (FMA: |y| K):
#   BottleneckA(cin): 1x1 cin->m, 3x3 m->m, 1x1 m->4m, 1x1 cin->4m
#     FLOPs P (m cin + 9 m^2 + 4 m^2 + 4 m cin) = P (5 m cin + 13 m^2)
#     outputs P (m + m + 4m + 4m) = 10 m P
#   BottleneckB (input 4m): 1x1 4m->m, 3x3, 1x1 m->4m
#     FLOPs P (4 m^2 + 9 m^2 + 4 m^2) = 17 m^2 P, outputs 6 m P
#   res2 (m 64, cin 64, P 256):    A 256 * 18 * 4096 = 18874368
#   res3 (m 128, cin 256, P 64):   A 64 * (163840 + 212992) = 24117248
#   res4 (m 256, cin 512, P 16):   A 16 * (655360 + 851968) = 24117248
#   res5 (m 512, cin 1024, P 4):   A 4 * (2621440 + 3407872) = 24117248
#   every B: 17 * 4096 * 256 = 17 * 16384 * 64 = ... = 17825792
#   conv1: |y| = 64*32*32 = 65536, K = 3*7*7 = 147: 65536*147 = 9633792
# Outputs m P: res2 16384, res3 8192, res4 4096, res5 2048, so
#   A: 163840, 81920, 40960, 20480; B: 98304, 49152, 24576, 12288.
# ---------------------------------------------------------------------------


@pytest.fixture(scope='module')
def resnet101_model():
    return L.ResNet101Layers(pretrained_model=None)


@pytest.fixture(scope='module')
def resnet101(resnet101_model):
    return run_model_checked(resnet101_model,
                             np.zeros((1, 3, 64, 64), np.float32))


def test_resnet101_layer_types(resnet101):
    # 104 convs = conv1 + 4 A blocks * 4 + 29 B blocks * 3 = 1 + 16 + 87;
    # one BN per conv; ReLU: conv1 + 3 per block = 1 + 33*3 = 100;
    # one Add per block (33 = 3 + 4 + 23 + 3).
    assert type_counts(resnet101) == [
        ('Convolution2DFunction', 104), ('FixedBatchNormalization', 104),
        ('ReLU', 100), (MAX_POOL_2D, 1), ('Add', 33),
        ('AveragePooling2D', 1), ('Reshape', 1), ('LinearFunction', 1),
        ('Softmax', 1)]


def test_resnet101_flops(resnet101):
    assert per_type(resnet101, 'flops') == {
        # 9633792 + 18874368 + 3*24117248 + 29*17825792
        # = 9633792 + 18874368 + 72351744 + 516947968
        'Convolution2DFunction': 617807872,
        # FMA: 1 per element = all conv outputs:
        # 65536 + 163840 + 2*98304 + 81920 + 3*49152 + 40960 + 22*24576
        # + 20480 + 2*12288 = 1282048
        'FixedBatchNormalization': 1282048,
        # 6 m P per block (m P, m P, 4 m P) + conv1's 65536:
        # 65536 + 3*98304 + 4*49152 + 23*24576 + 3*12288 = 1159168
        'ReLU': 1159168,
        # 64*16*16 = 16384 outputs * (3*3 - 1) = 131072
        MAX_POOL_2D: 131072,
        # 4 m P per block: 3*65536 + 4*32768 + 23*16384 + 3*8192 = 729088
        'Add': 729088,
        # 2048 outputs * k_h k_w (2*2) = 8192
        'AveragePooling2D': 8192,
        'Reshape': 0,
        # 2048*1000 + 1000 (bias) = 2049000
        'LinearFunction': 2049000,
        # 3*1000 - 1 row = 2999
        'Softmax': 2999}


def test_resnet101_memory(resnet101):
    assert per_type(resnet101, 'mread') == {
        # |x|: conv1 3*64*64 = 12288; A reads its input twice (conv1,
        # conv4) and m P twice (conv2, conv3); B reads 4mP + mP + mP:
        # A2 2*16384 + 2*16384 = 65536, B2 98304, A3 2*65536 + 2*8192 =
        # 147456, B3 49152, A4 2*32768 + 2*4096 = 73728, B4 24576,
        # A5 2*16384 + 2*2048 = 36864, B5 12288:
        # 12288 + 65536 + 2*98304 + 147456 + 3*49152 + 73728 + 22*24576
        # + 36864 + 2*12288 = 1245184
        # |W| (= FLOPs / P per block): 64*147 = 9408, A2 73728,
        # B2 69632, A3 376832, B3 278528, A4 1507328, B4 1114112,
        # A5 6029312, B5 4456448:
        # 9408 + 73728 + 2*69632 + 376832 + 3*278528 + 1507328
        # + 22*1114112 + 6029312 + 2*4456448 = 42394816
        # |b|: only conv1 has a bias, 64.
        # (1245184 + 42394816 + 64) * 4 = 43640064 * 4
        'Convolution2DFunction': 174560256,
        # |x| + 2C per BN (x, the folded scale and shift): outputs
        # 1282048 + 2 * channels, channels 64 + 10*64 + 2*6*64 + 10*128
        # + 3*6*128 + 10*256 + 22*6*256 + 10*512 + 2*6*512 = 52672:
        # (1282048 + 105344) * 4 = 1387392 * 4
        'FixedBatchNormalization': 5549568,
        'ReLU': 1159168 * 4,
        MAX_POOL_2D: 64 * 32 * 32 * 4,
        'Add': 2 * 729088 * 4,
        'AveragePooling2D': 2048 * 2 * 2 * 4,
        'Reshape': 0,
        # (2048 + 2048*1000 + 1000) * 4 = 2051048 * 4
        'LinearFunction': 8204192,
        'Softmax': 1000 * 4}
    assert per_type(resnet101, 'mwrite') == {
        'Convolution2DFunction': 1282048 * 4,
        'FixedBatchNormalization': 1282048 * 4,
        'ReLU': 1159168 * 4,
        MAX_POOL_2D: 16384 * 4,
        'Add': 729088 * 4,
        'AveragePooling2D': 2048 * 4,
        'Reshape': 0,
        'LinearFunction': 1000 * 4,
        'Softmax': 1000 * 4}


def test_resnet101_totals(resnet101):
    # layers 104 + 104 + 100 + 1 + 33 + 1 + 1 + 1 + 1 = 346
    # FLOPs 617807872 + 1282048 + 1159168 + 131072 + 729088 + 8192
    #   + 2049000 + 2999 = 623169439
    # mread 174560256 + 5549568 + 4636672 + 262144 + 5832704 + 32768
    #   + 8204192 + 4000 = 199082304
    # mwrite 5128192 + 5128192 + 4636672 + 65536 + 2916352 + 8192 + 4000
    #   + 4000 = 17891136
    assert total(resnet101) == (346, 623169439, 199082304, 17891136)


def test_resnet101_layers(resnet101):
    report = resnet101.layer_report
    conv1 = report['Convolution2DFunction-1']
    # 9633792 (above); (12288 + 9408 + 64) * 4; 65536 * 4
    assert costs(conv1) == (9633792, 87040, 262144)
    assert conv1['input_shapes'] == [(1, 3, 64, 64), (64, 3, 7, 7), (64,)]
    assert conv1['output_shapes'] == [(1, 64, 32, 32)]
    assert conv1['params'] == {'k': 7, 's': 2, 'p': 3, 'd': 1, 'groups': 1,
                               'nobias': False}
    bn1 = report['FixedBatchNormalization-1']
    # |x| = 65536; (65536 + 2*64) * 4; 65536 * 4
    assert costs(bn1) == (65536, 262656, 262144)
    # The last conv: res5's last conv3, 1x1 512 -> 2048 on 2x2, no bias:
    # |y| = 2048*4 = 8192, K = 512: 4194304;
    # mread (512*4 + 2048*512) * 4 = 1050624 * 4; mwrite 8192 * 4
    last = report['Convolution2DFunction-104']
    assert last['input_shapes'] == [(1, 512, 2, 2), (2048, 512, 1, 1)]
    assert costs(last) == (4194304, 4202496, 32768)
    pool5 = report['AveragePooling2D-1']
    assert pool5['input_shapes'] == [(1, 2048, 2, 2)]
    assert pool5['output_shapes'] == [(1, 2048, 1, 1)]
    assert pool5['params'] == {'k': 2, 's': 1, 'p': 0}
    fc6 = report['LinearFunction-1']
    assert fc6['input_shapes'] == [(1, 2048), (1000, 2048), (1000,)]
    assert costs(fc6) == (2049000, 8204192, 4000)


def test_resnet101_without_fma(resnet101_model):
    cch = run_model_checked(resnet101_model,
                            np.zeros((1, 3, 64, 64), np.float32),
                            fma_1flop=False)
    flops = per_type(cch, 'flops')
    # conv1 has a bias: 2 |y| K = 2*9633792 = 19267584; the 103 others
    # have none: 2 |y| K - |y| summed = 2*(617807872 - 9633792)
    # - (1282048 - 65536) = 1216348160 - 1216512 = 1215131648;
    # 19267584 + 1215131648 = 1234399232
    assert flops['Convolution2DFunction'] == 1234399232
    # 2 |x|: 2*1282048
    assert flops['FixedBatchNormalization'] == 2564096
    # 1000 * (2*2048 - 1) + 1000 = 4095000 + 1000
    assert flops['LinearFunction'] == 4096000
    # unchanged: 1159168 + 131072 + 729088 + 8192 + 2999
    # total 1234399232 + 2564096 + 4096000 + 2030519 = 1243089847
    assert cch.total_report['flops'] == 1243089847
    # memory does not depend on FMA
    assert total(cch)[2:] == (199082304, 17891136)


@pytest.mark.slow
def test_resnet152():
    cch = run_model_checked(L.ResNet152Layers(pretrained_model=None),
                            np.zeros((1, 3, 64, 64), np.float32))
    # Blocks (3, 8, 36, 3): ResNet101 + 4 more B in res3, 13 more in res4.
    # convs 104 + 17*3 = 155; ReLU 100 + 17*3 = 151; Add 33 + 17 = 50
    assert type_counts(cch) == [
        ('Convolution2DFunction', 155), ('FixedBatchNormalization', 155),
        ('ReLU', 151), (MAX_POOL_2D, 1), ('Add', 50),
        ('AveragePooling2D', 1), ('Reshape', 1), ('LinearFunction', 1),
        ('Softmax', 1)]
    assert per_type(cch, 'flops') == {
        # 9633792 + 18874368 + 3*24117248 + 46*17825792
        # = 9633792 + 18874368 + 72351744 + 819986432
        'Convolution2DFunction': 920846336,
        # 1282048 + 4*49152 + 13*24576 = 1282048 + 196608 + 319488
        'FixedBatchNormalization': 1798144,
        # 1159168 + 4*6*8192 + 13*6*4096 = 1159168 + 196608 + 319488
        'ReLU': 1675264,
        MAX_POOL_2D: 131072,
        # 729088 + 4*32768 + 13*16384 = 729088 + 131072 + 212992
        'Add': 1073152,
        'AveragePooling2D': 8192,
        'Reshape': 0,
        'LinearFunction': 2049000,
        'Softmax': 2999}
    # conv mread: ResNet101's 43640064 elements + 4 B3 (x 49152,
    # W 278528) + 13 B4 (x 24576, W 1114112):
    # 43640064 + 4*(49152 + 278528) + 13*(24576 + 1114112)
    # = 43640064 + 1310720 + 14802944 = 59753728 elements
    conv = cch.summary_report['Convolution2DFunction']
    assert (conv['mread'], conv['mwrite']) == (59753728 * 4, 1798144 * 4)
    # layers 155*2 + 151 + 50 + 5 = 516; FLOPs 920846336 + 1798144
    # + 1675264 + 131072 + 1073152 + 8192 + 2049000 + 2999 = 927584159
    assert total(cch)[:2] == (516, 927584159)


# ---------------------------------------------------------------------------
# VGG19, input (1, 3, 224, 224) (fc6 is Linear(512*7*7, 4096): 224 needed).
# 16 convs 3x3 pad 1 (FLOPs |y| * 9 cin); maps 224, 112, 56, 28, 14
# (50176, 12544, 3136, 784, 196 px):
#   conv1_1 50176*64*27          = 86704128
#   conv1_2 50176*64*64*9        = 1849688064
#   conv2_1 12544*128*64*9       = 924844032
#   conv2_2 12544*128*128*9      = 1849688064
#   conv3_1 3136*256*128*9       = 924844032
#   conv3_2..3_4 3136*256*256*9  = 1849688064 each
#   conv4_1 784*512*256*9        = 924844032
#   conv4_2..4_4 784*512*512*9   = 1849688064 each
#   conv5_1..5_4 196*512*512*9   = 462422016 each
# ---------------------------------------------------------------------------


@pytest.mark.slow
def test_vgg19():
    cch = run_model_checked(L.VGG19Layers(pretrained_model=None),
                            np.zeros((1, 3, 224, 224), np.float32))
    assert type_counts(cch) == [
        ('Convolution2DFunction', 16), ('ReLU', 18), (MAX_POOL_2D, 5),
        ('Reshape', 1), ('LinearFunction', 3), ('Softmax', 1)]
    assert per_type(cch, 'flops') == {
        # 86704128 + 8*1849688064 + 3*924844032 + 4*462422016
        # = 86704128 + 14797504512 + 2774532096 + 1849688064
        'Convolution2DFunction': 19508428800,
        # conv outputs 50176*64*2 + 12544*128*2 + 3136*256*4 + 784*512*4
        # + 196*512*4 = 6422528 + 3211264 + 3211264 + 1605632 + 401408
        # = 14852096, + fc6 and fc7 outputs 2*4096 = 14860288
        'ReLU': 14860288,
        # outputs 112*112*64 + 56*56*128 + 28*28*256 + 14*14*512
        # + 7*7*512 = 802816 + 401408 + 200704 + 100352 + 25088
        # = 1530368, 3 comparisons each (2x2 window)
        MAX_POOL_2D: 4591104,
        'Reshape': 0,
        # fc6 25088*4096 + 4096 = 102764544, fc7 4096*4096 + 4096
        # = 16781312, fc8 4096*1000 + 1000 = 4097000
        'LinearFunction': 123642856,
        'Softmax': 2999}
    # conv mread: |x| 150528 + 3211264 + 802816 + 1605632 + 401408
    # + 3*802816 + 200704 + 3*401408 + 4*100352 = 10386432;
    # |W| 1728 + 36864 + 73728 + 147456 + 294912 + 3*589824 + 1179648
    # + 7*2359296 = 20018880; |b| 2*64 + 2*128 + 4*256 + 8*512 = 5504;
    # 30410816 elements
    assert per_type(cch, 'mread') == {
        'Convolution2DFunction': 30410816 * 4,
        'ReLU': 14860288 * 4,
        # inputs 64*50176 + 128*12544 + 256*3136 + 512*784 + 512*196
        # = 6121472
        MAX_POOL_2D: 6121472 * 4,
        'Reshape': 0,
        # (25088 + 102760448 + 4096) + (4096 + 16777216 + 4096)
        # + (4096 + 4096000 + 1000) = 123676136
        'LinearFunction': 123676136 * 4,
        'Softmax': 1000 * 4}
    report = cch.layer_report
    conv = report['Convolution2DFunction-16']  # conv5_4
    # 462422016; (100352 + 2359296 + 512) * 4; 100352 * 4
    assert costs(conv) == (462422016, 9840640, 401408)
    assert conv['output_shapes'] == [(1, 512, 14, 14)]
    fc6 = report['LinearFunction-1']
    assert fc6['input_shapes'] == [(1, 25088), (4096, 25088), (4096,)]
    # 102764544; (25088 + 102760448 + 4096) * 4; 4096 * 4
    assert costs(fc6) == (102764544, 411158528, 16384)
    # layers 16 + 18 + 5 + 1 + 3 + 1 = 44
    # FLOPs 19508428800 + 14860288 + 4591104 + 123642856 + 2999
    # mread (30410816 + 14860288 + 6121472 + 123676136 + 1000) * 4
    # mwrite (14852096 + 14860288 + 1530368 + 9192 + 1000) * 4
    assert total(cch) == (44, 19651526047, 700278848, 125011776)


# ---------------------------------------------------------------------------
# GoogLeNet, input (1, 3, 224, 224): pool5 is a fixed 7x7 window feeding
# Linear(1024, 1000), so the map before it must be 7x7: only 223 and 224
# work.  Maps: conv1 112, pool1 56 (conv2_reduce, conv2), pool2 28 (3a,
# 3b; 784 px), pool3 14 (4a-4e; 196 px), pool4 7 (5a, 5b; 49 px).
# Inception(in, o1, p3, o3, p5, o5, pp): per pixel
#   MACs = in (o1 + p3 + p5 + pp) + 9 p3 o3 + 25 p5 o5 (= |W| too)
#   3a (192, 64, 96, 128, 16, 32, 32): 39936 + 110592 + 12800 = 163328
#   3b (256, 128, 128, 192, 32, 96, 64): 90112 + 221184 + 76800 = 388096
#   4a (480, 192, 96, 208, 16, 48, 64): 176640 + 179712 + 19200 = 375552
#   4b (512, 160, 112, 224, 24, 64, 64): 184320 + 225792 + 38400 = 448512
#   4c (512, 128, 128, 256, 24, 64, 64): 176128 + 294912 + 38400 = 509440
#   4d (512, 112, 144, 288, 32, 64, 64): 180224 + 373248 + 51200 = 604672
#   4e (528, 256, 160, 320, 32, 128, 128):
#      304128 + 460800 + 102400 = 867328
#   5a (832, 256, 160, 320, 32, 128, 128):
#      479232 + 460800 + 102400 = 1042432
#   5b (832, 384, 192, 384, 48, 128, 128):
#      625664 + 663552 + 153600 = 1442816
# ---------------------------------------------------------------------------


@pytest.fixture(scope='module')
def googlenet():
    return run_model_checked(L.GoogLeNet(pretrained_model=None),
                             np.zeros((1, 3, 224, 224), np.float32))


def test_googlenet_layer_types(googlenet):
    # convs 3 + 9*6 = 57; ReLU 3 + 9*3 (proj3, proj5, after concat) = 30;
    # max pools 4 + 1 per inception = 13; dropout is identity in test mode
    assert type_counts(googlenet) == [
        ('Convolution2DFunction', 57), ('ReLU', 30), (MAX_POOL_2D, 13),
        ('LocalResponseNormalization', 2), ('Concat', 9),
        ('AveragePooling2D', 1), ('Reshape', 1), ('LinearFunction', 1),
        ('Softmax', 1)]


def test_googlenet_flops(googlenet):
    assert per_type(googlenet, 'flops') == {
        # conv1 12544*64*147 = 118013952, conv2_reduce 3136*64*64
        # = 12845056, conv2 3136*192*576 = 346816512, 3a 784*163328
        # = 128049152, 3b 784*388096 = 304267264, 4a 196*375552
        # = 73608192, 4b 196*448512 = 87908352, 4c 196*509440 = 99850240,
        # 4d 196*604672 = 118515712, 4e 196*867328 = 169996288,
        # 5a 49*1042432 = 51079168, 5b 49*1442816 = 70697984
        'Convolution2DFunction': 1581647872,
        # conv1 802816 + conv2_reduce 200704 + conv2 602112, then per
        # inception (p3 + p5 + concat channels) * px: 3a 368*784 = 288512,
        # 3b 640*784 = 501760, 4a 624*196 = 122304, 4b 648*196 = 127008,
        # 4c 664*196 = 130144, 4d 704*196 = 137984, 4e 1024*196 = 200704,
        # 5a 1024*49 = 50176, 5b 1264*49 = 61936: 1605632 + 1620528
        'ReLU': 3226160,
        # outputs: pool1 64*3136 = 200704, pool2 192*784 = 150528,
        # pool3 480*196 = 94080, pool4 832*49 = 40768; inception pools
        # (3x3, s1, p1: same size as their input) 192*784 + 256*784
        # + 480*196 + 3*512*196 + 528*196 + 2*832*49 = 931392;
        # (486080 + 931392) * 8 comparisons
        MAX_POOL_2D: 11339776,
        # n = 5, h = 2, A = 2((C-1) + (C-2)): after pool1 C = 64,
        # 4*200704 + 250*3136 = 1586816; after conv2 C = 192,
        # 4*602112 + 762*3136 = 4798080
        'LocalResponseNormalization': 6384896,
        'Concat': 0,
        # 1024 outputs * 7*7
        'AveragePooling2D': 50176,
        'Reshape': 0,
        # 1024*1000 + 1000
        'LinearFunction': 1025000,
        'Softmax': 2999}


def test_googlenet_memory(googlenet):
    assert per_type(googlenet, 'mread') == {
        # |x| = 150528 + 200704 + 200704 + sum over inceptions of
        # (4 in + p3 + p5) px = 689920 + 928256 + 398272 + 428064
        # + 431200 + 435904 + 451584 + 172480 + 174832: 4662448;
        # |W| = 9408 + 4096 + 110592 + sum of the per-pixel MACs above
        # = 5966272; |b| = 64 + 64 + 192 + 368 + 640 + 624 + 648 + 664
        # + 704 + 1024 + 1024 + 1264 = 7280; 10636000 elements
        'Convolution2DFunction': 10636000 * 4,
        'ReLU': 3226160 * 4,
        # inputs: 64*12544 + 192*3136 + 480*784 + 832*196 + 931392
        # = 802816 + 602112 + 376320 + 163072 + 931392 = 2875712
        MAX_POOL_2D: 2875712 * 4,
        # |x| + k, alpha, beta (3 scalars) per call
        'LocalResponseNormalization': (200704 + 3 + 602112 + 3) * 4,
        # concat outputs: 256*784 + 480*784 + 3*512*196 + 528*196
        # + 832*196 + 832*49 + 1024*49 = 1235584
        'Concat': 1235584 * 4,
        'AveragePooling2D': 50176 * 4,
        'Reshape': 0,
        'LinearFunction': (1024 + 1024000 + 1000) * 4,
        'Softmax': 1000 * 4}
    conv1 = googlenet.layer_report['Convolution2DFunction-1']
    # the brief's example: 64*112*112 * 3*7*7 = 118013952;
    # (150528 + 9408 + 64) * 4; 802816 * 4
    assert costs(conv1) == (118013952, 640000, 3211264)
    assert conv1['output_shapes'] == [(1, 64, 112, 112)]
    # FLOPs 1581647872 + 3226160 + 11339776 + 6384896 + 50176 + 1025000
    # + 2999; mread 42544000 + 12904640 + 11502848 + 3211264 + 4942336
    # + 200704 + 4104096 + 4000 + 2*3*4 (LRN scalars) = 79413912;
    # mwrite (conv outputs = ReLU inputs)
    # 12904640 * 2 + 1417472*4 + 3211264 + 4942336 + 4096 + 4000 + 4000
    assert total(googlenet) == (115, 1603676879, 79413912, 39644864)


# ---------------------------------------------------------------------------
# A word language model: vocabulary 11, 4 units, batch 2.  L.LSTM runs 3
# time steps on both sequences; L.NStepLSTM then reads the two hidden
# sequences cut to lengths 3 and 2, so that on CPU it runs its per-step
# functions with a batch shrinking from 2 to 1 (SplitAxis, Concat).
# ---------------------------------------------------------------------------


class WordLM(chainer.Chain):

    def __init__(self):
        super(WordLM, self).__init__()
        with self.init_scope():
            self.embed = L.EmbedID(11, 4)
            self.lstm = L.LSTM(4, 4)
            self.nstep = L.NStepLSTM(1, 4, 4, 0.0)
            self.out = L.Linear(4, 11)

    def forward(self, tokens, targets):
        # tokens: (time, batch); targets: one per output row
        self.lstm.reset_state()
        hs = [self.lstm(self.embed(tokens[t])) for t in range(len(tokens))]
        a, b = F.separate(F.stack(hs, axis=1), axis=0)  # (3, 4) each
        _, _, ys = self.nstep(None, None, [a, b[:2]])
        return F.softmax_cross_entropy(self.out(F.concat(ys, axis=0)),
                                       targets)


@pytest.fixture(scope='module')
def word_lm():
    tokens = np.array([[1, 2], [3, 4], [5, 6]], np.int32)
    targets = np.array([2, 3, 4, 5, 6], np.int32)
    return run_model_checked(WordLM(), tokens, targets)


def test_word_lm_layer_types(word_lm):
    # L.LSTM: 3 EmbedID, 3 upward + 2 lateral Linear, 2 Add, 3 LSTM.
    # Mine: 1 Stack, 1 Separate, 1 GetItem (b[:2]), 1 Concat, 1 Linear.
    # NStepLSTM on CPU: hx and cx made and separated (2 Separate), the
    # sequences regrouped by time (TransposeSequence); per step the 4
    # gate weights and biases of x and h stacked (4 Stack, 4 Reshape),
    # 2 Linear, 1 Add, 1 LSTM; at step 3 (batch 1) h and c are split
    # (2 SplitAxis) and put back (2 Concat); at the end the final states
    # stacked (2 Stack), unsorted (2 Permutate) and the outputs regrouped
    # by sequence (TransposeSequence).
    # Linear 5 + 3*2 + 1 = 12; Stack 1 + 3*4 + 2 = 15; Reshape 3*4 = 12;
    # Add 2 + 3 = 5; LSTM 3 + 3 = 6; Concat 2 + 1 = 3
    assert type_counts(word_lm) == [
        ('EmbedIDFunction', 3), ('LinearFunction', 12), ('LSTM', 6),
        ('Add', 5), ('Stack', 15), ('Separate', 3), ('GetItem', 1),
        ('TransposeSequence', 2), ('Reshape', 12), ('SplitAxis', 2),
        ('Concat', 3), ('Permutate', 2), ('SoftmaxCrossEntropy', 1)]


def test_word_lm_stateful_lstm(word_lm):
    # step 1 has no state: no lateral Linear, no Add
    names = list(word_lm.layer_report)[:13]
    assert names == [
        'EmbedIDFunction-1', 'LinearFunction-1', 'LSTM-1',
        'EmbedIDFunction-2', 'LinearFunction-2', 'LinearFunction-3',
        'Add-1', 'LSTM-2',
        'EmbedIDFunction-3', 'LinearFunction-4', 'LinearFunction-5',
        'Add-2', 'LSTM-3']
    report = word_lm.layer_report
    # EmbedID: 0 FLOPs; |x| + min(|x|, V) D = 2 + 2*4 = 10; |x| D = 8
    assert costs(report['EmbedIDFunction-1']) == (0, 40, 32)
    # upward: rows 2, in 4, out 16: 2*4*16 + 32 = 160;
    # 8 + 64 + 16 = 88 elements; 32 elements
    assert costs(report['LinearFunction-1']) == (160, 352, 128)
    # lateral, no bias: 128; 8 + 64 = 72; 32
    lateral = report['LinearFunction-3']
    assert lateral['params'] == {'nobias': True}
    assert costs(lateral) == (128, 288, 128)
    # LSTM: n = |x| / 4 = 8 units: 17*8 = 136; |c| + |x| = 8 + 32;
    # |c| + n = 16
    lstm = report['LSTM-1']
    assert lstm['input_shapes'] == [(2, 4), (2, 16)]
    assert lstm['output_shapes'] == [(2, 4), (2, 4)]
    assert costs(lstm) == (136, 160, 64)


def test_word_lm_nstep_last_step(word_lm):
    report = word_lm.layer_report
    # h (and c) of the 2 sequences split: 8 elements read and written
    split = report['SplitAxis-1']
    assert split['params'] == {'axis': 0, 'indices': (1,)}
    assert split['output_shapes'] == [(1, 4), (1, 4)]
    assert costs(split) == (0, 32, 32)
    # rows 1: 1*4*16 + 16 = 80; 4 + 64 + 16 = 84; 16
    assert costs(report['LinearFunction-10']) == (80, 336, 64)
    # n = 16 / 4 = 4: 17*4 = 68; 4 + 16 = 20; 4 + 4 = 8
    assert costs(report['LSTM-6']) == (68, 80, 32)
    # (1, 4) + (1, 4)
    assert costs(report['Concat-1']) == (0, 32, 32)


def test_word_lm_figures(word_lm):
    assert per_type(word_lm, 'flops') == {
        'EmbedIDFunction': 0,
        # L.LSTM 3*160 + 2*128; NStep steps 1-2 4*160, step 3 2*80;
        # output (5,4)x(11,4): 5*4*11 + 55 = 275:
        # 480 + 256 + 640 + 160 + 275
        'LinearFunction': 1811,
        # 5*136 + 68
        'LSTM': 748,
        # 4*32 + 16
        'Add': 144,
        'Stack': 0, 'Separate': 0, 'GetItem': 0, 'TransposeSequence': 0,
        'Reshape': 0, 'SplitAxis': 0, 'Concat': 0, 'Permutate': 0,
        # |x| = 55, M = 5: 3*55 + 2*5 + 2*5 (mean, normalize) = 185
        'SoftmaxCrossEntropy': 185}
    assert per_type(word_lm, 'mread') == {
        'EmbedIDFunction': 3 * 10 * 4,
        # 3*88 + 2*72 + 4*88 + 2*84 + (20 + 44 + 11)
        # = 264 + 144 + 352 + 168 + 75 = 1003
        'LinearFunction': 1003 * 4,
        # 5*40 + 20
        'LSTM': 220 * 4,
        # 4*64 + 32
        'Add': 288 * 4,
        # mine 3*8 = 24; per step 2*(4*16) + 2*(4*4) = 160, 3 steps 480;
        # final h and c 2*8 = 16: 520
        'Stack': 520 * 4,
        # mine 24, hx and cx (1, 2, 4) 8 each: 40
        'Separate': 40 * 4,
        # the 2*4 selected elements
        'GetItem': 8 * 4,
        # (3*4 + 2*4) twice
        'TransposeSequence': 2 * 20 * 4,
        'Reshape': 0,
        'SplitAxis': 2 * 8 * 4,
        # 8 + 8 + (12 + 8)
        'Concat': 36 * 4,
        # |x| + |indices| = 8 + 2, twice
        'Permutate': 2 * 10 * 4,
        # 55 + 5 + ignore_label
        'SoftmaxCrossEntropy': 61 * 4}
    assert per_type(word_lm, 'mwrite') == {
        'EmbedIDFunction': 3 * 8 * 4,
        # 5*32 + 4*32 + 2*16 + 55 = 375
        'LinearFunction': 375 * 4,
        # 5*16 + 8
        'LSTM': 88 * 4,
        # 4*32 + 16
        'Add': 144 * 4,
        'Stack': 520 * 4,
        'Separate': 40 * 4,
        'GetItem': 8 * 4,
        'TransposeSequence': 2 * 20 * 4,
        'Reshape': 0,
        'SplitAxis': 2 * 8 * 4,
        'Concat': 36 * 4,
        'Permutate': 2 * 8 * 4,
        'SoftmaxCrossEntropy': 1 * 4}
    # 3 + 12 + 6 + 5 + 15 + 3 + 1 + 2 + 12 + 2 + 3 + 2 + 1 = 67 layers;
    # FLOPs 1811 + 748 + 144 + 185 = 2888;
    # mread 120 + 4012 + 880 + 1152 + 2080 + 160 + 32 + 160 + 64 + 144
    # + 80 + 244 = 9128;
    # mwrite 96 + 1500 + 352 + 576 + 2080 + 160 + 32 + 160 + 64 + 144
    # + 64 + 4 = 5232
    assert total(word_lm) == (67, 2888, 9128, 5232)


# ---------------------------------------------------------------------------
# A Transformer encoder block: batch 2, 5 tokens, d_model 8, 2 heads of 4,
# FFN 16, dropout 0.1 (train mode).  Rows B*T = 10.
# ---------------------------------------------------------------------------


class EncoderBlock(chainer.Chain):

    def __init__(self, d_model=8, n_heads=2, d_ff=16):
        super(EncoderBlock, self).__init__()
        self.n_heads = n_heads
        with self.init_scope():
            self.wq = L.Linear(d_model, d_model)
            self.wk = L.Linear(d_model, d_model)
            self.wv = L.Linear(d_model, d_model)
            self.wo = L.Linear(d_model, d_model)
            self.ln1 = L.LayerNormalization(d_model)
            self.ff1 = L.Linear(d_model, d_ff)
            self.ff2 = L.Linear(d_ff, d_model)
            self.ln2 = L.LayerNormalization(d_model)

    def forward(self, x):
        b, t, d = x.shape
        h = self.n_heads
        dk = d // h
        x2 = F.reshape(x, (b * t, d))

        def heads(y):  # (b*t, d) -> (b*h, t, dk)
            y = F.transpose(F.reshape(y, (b, t, h, dk)), (0, 2, 1, 3))
            return F.reshape(y, (b * h, t, dk))

        q, k, v = heads(self.wq(x2)), heads(self.wk(x2)), heads(self.wv(x2))
        scores = F.matmul(q, k, transb=True) * (1.0 / np.sqrt(dk))
        attn = F.softmax(scores, axis=2)
        ctx = F.matmul(attn, v)  # (b*h, t, dk)
        ctx = F.transpose(F.reshape(ctx, (b, h, t, dk)), (0, 2, 1, 3))
        ctx = F.reshape(ctx, (b * t, d))
        y = self.ln1(x2 + F.dropout(self.wo(ctx), 0.1))
        f = self.ff2(F.dropout(F.relu(self.ff1(y)), 0.1))
        y = self.ln2(y + F.dropout(f, 0.1))
        return F.reshape(y, (b, t, d))


ENCODER_INPUT = np.arange(2 * 5 * 8, dtype=np.float32).reshape(2, 5, 8) / 80


@pytest.fixture(scope='module')
def encoder_model():
    return EncoderBlock()


@pytest.fixture(scope='module')
def encoder(encoder_model):
    return run_model_checked(encoder_model, ENCODER_INPUT, train=True)


def test_encoder_layer_types(encoder):
    # Reshape: input, 3*2 for the heads, 2 for the context, output = 10;
    # Transpose: 3 heads + context = 4
    assert type_counts(encoder) == [
        ('Reshape', 10), ('LinearFunction', 6), ('Transpose', 4),
        ('MatMul', 2), ('MulConstant', 1), ('Softmax', 1), ('Dropout', 3),
        ('Add', 2), ('LayerNormalization', 2), ('ReLU', 1)]


def test_encoder_figures(encoder):
    assert per_type(encoder, 'flops') == {
        'Reshape': 0,
        # Q, K, V, O: 10*8*8 + 80 = 720 each; FFN1 10*8*16 + 160 = 1440;
        # FFN2 10*16*8 + 80 = 1360: 2880 + 1440 + 1360
        'LinearFunction': 5680,
        'Transpose': 0,
        # scores (4,5,4)x(4,5,4)^T: |y| = 4*5*5 = 100, K = 4: 400;
        # context (4,5,5)x(4,5,4): |y| = 80, K = 5: 400
        'MatMul': 800,
        'MulConstant': 100,
        # 2*100 + (5 - 1)*20 rows = 280
        'Softmax': 280,
        # 80 + 160 + 80
        'Dropout': 320,
        'Add': 2 * 80,
        # 5 |x| + 4 B = 5*80 + 4*10 = 440 each
        'LayerNormalization': 880,
        'ReLU': 160}
    assert per_type(encoder, 'mread') == {
        'Reshape': 0,
        # 4*(80 + 64 + 8) + (80 + 128 + 16) + (160 + 128 + 8)
        # = 608 + 224 + 296 = 1128
        'LinearFunction': 1128 * 4,
        'Transpose': 4 * 80 * 4,
        # (80 + 80) + (100 + 80)
        'MatMul': 340 * 4,
        # 100 + the scalar 1
        'MulConstant': 101 * 4,
        'Softmax': 100 * 4,
        # x and mask: 2*(80 + 160 + 80)
        'Dropout': 640 * 4,
        'Add': 2 * 160 * 4,
        # 80 + 8 + 8, twice
        'LayerNormalization': 2 * 96 * 4,
        'ReLU': 160 * 4}
    # mwrite: Linear 4*80 + 160 + 80 = 560; Transpose 320; MatMul 180;
    # MulConstant 100; Softmax 100; Dropout 320; Add 160; LN 160;
    # ReLU 160: 2060 elements
    # FLOPs 5680 + 800 + 100 + 280 + 320 + 160 + 880 + 160 = 8380;
    # mread 1128 + 320 + 340 + 101 + 100 + 640 + 320 + 192 + 160 = 3301
    assert total(encoder) == (32, 8380, 3301 * 4, 2060 * 4)
    report = encoder.layer_report
    scores = report['MatMul-1']
    assert scores['input_shapes'] == [(4, 5, 4), (4, 5, 4)]
    assert scores['output_shapes'] == [(4, 5, 5)]
    assert scores['params'] == {'transa': False, 'transb': True,
                                'transc': False}
    assert report['Softmax-1']['params'] == {'axis': 2}
    assert report['Transpose-1']['output_shapes'] == [(2, 2, 5, 4)]
    assert costs(report['LayerNormalization-1']) == (440, 384, 320)


def test_encoder_without_fma(encoder_model):
    cch = run_model_checked(encoder_model, ENCODER_INPUT, train=True,
                            fma_1flop=False)
    flops = per_type(cch, 'flops')
    # rows*out*(2 in - 1) + rows*out: Q, K, V, O 80*15 + 80 = 1280 each;
    # FFN1 160*15 + 160 = 2560; FFN2 80*31 + 80 = 2560: 5120 + 5120
    assert flops['LinearFunction'] == 10240
    # |y| (2K - 1): 100*7 + 80*9 = 700 + 720
    assert flops['MatMul'] == 1420
    # 7 |x| + 3 B = 560 + 30 = 590 each
    assert flops['LayerNormalization'] == 1180
    # the rest unchanged: 100 + 280 + 320 + 160 + 160 = 1020
    assert cch.total_report['flops'] == 10240 + 1420 + 1180 + 1020


# ---------------------------------------------------------------------------
# A CNN forward in training mode with backprop enabled: batch 2, 3x8x8
# images, 8 channels, 10 classes.
# ---------------------------------------------------------------------------


def test_train_cnn():
    x = np.linspace(-1, 1, 2 * 3 * 8 * 8, dtype=np.float32).reshape(
        2, 3, 8, 8)
    t = np.array([1, 3], np.int32)
    model = TrainCNN()
    cch = run_model_checked(model, x, t, train=True, backprop=True)
    assert type_counts(cch) == [
        ('Convolution2DFunction', 1), ('BatchNormalization', 1),
        ('ReLU', 1), (MAX_POOL_2D, 1), ('Dropout', 1), ('Reshape', 1),
        ('LinearFunction', 1), ('SoftmaxCrossEntropy', 1),
        ('Accuracy', 1)]
    report = cch.layer_report
    # |y| = 2*8*8*8 = 1024, K = 3*3*3 = 27: 27648;
    # |x| + |W| + |b| = 384 + 216 + 8 = 608; 1024
    assert costs(report['Convolution2DFunction-1']) == (27648, 2432, 4096)
    bn = report['BatchNormalization-1']
    # training mode with running statistics, C = 8:
    # 5 |x| + 4C + 4C = 5120 + 64; |x| + |gamma| + |beta| + 2C + decay
    # = 1024 + 8 + 8 + 16 + 1 = 1057; |x| + 2C = 1040
    assert costs(bn) == (5184, 1057 * 4, 1040 * 4)
    assert bn['params'] == {'eps': 2e-05, 'axis': (0, 2, 3), 'decay': 0.9}
    # forward ran once under the hook, so the running mean was updated
    # once: 0.9 * 0 + 0.1 * the batch mean (twice would give 0.19 *)
    with chainer.using_config('enable_backprop', False):
        batch_mean = model.conv(x).array.mean(axis=(0, 2, 3))
    assert np.any(batch_mean != 0)
    np.testing.assert_allclose(model.bn.avg_mean, 0.1 * batch_mean,
                               rtol=1e-5, atol=1e-7)
    assert costs(report['ReLU-1']) == (1024, 4096, 4096)
    # 2*8*4*4 = 256 outputs * 3; 1024; 256
    pool = report[MAX_POOL_2D + '-1']
    assert costs(pool) == (768, 4096, 1024)
    assert pool['output_shapes'] == [(2, 8, 4, 4)]
    # 256; x and mask 512; 256
    assert costs(report['Dropout-1']) == (256, 2048, 1024)
    # 2*128*10 + 20 = 2580; 256 + 1280 + 10 = 1546; 20
    assert costs(report['LinearFunction-1']) == (2580, 6184, 80)
    # |x| = 20, M = 2: 60 + 4 + 4 = 68; 20 + 2 + ignore_label = 23; 1
    assert costs(report['SoftmaxCrossEntropy-1']) == (68, 92, 4)
    # |y| + |t| = 22; 22; 1
    assert costs(report['Accuracy-1']) == (22, 88, 4)
    # FLOPs 27648 + 5184 + 1024 + 768 + 256 + 2580 + 68 + 22 = 37550;
    # mread 608 + 1057 + 1024 + 1024 + 512 + 1546 + 23 + 22 = 5816;
    # mwrite 1024 + 1040 + 1024 + 256 + 256 + 20 + 1 + 1 = 3622
    assert total(cch) == (9, 37550, 5816 * 4, 3622 * 4)


# ---------------------------------------------------------------------------
# A 3D conv net: batch 2, 2 channels, 4x6x8 volumes.
# ---------------------------------------------------------------------------


class Net3D(chainer.Chain):

    def __init__(self):
        super(Net3D, self).__init__()
        with self.init_scope():
            self.conv = L.ConvolutionND(3, 2, 4, 3, pad=1)
            self.deconv = L.DeconvolutionND(3, 4, 2, 2, stride=2)

    def forward(self, x):
        h = F.average_pooling_nd(F.relu(self.conv(x)), 2)
        return self.deconv(h)


NET3D_INPUT = np.ones((2, 2, 4, 6, 8), np.float32)


@pytest.fixture(scope='module')
def net3d_model():
    return Net3D()


def test_net3d(net3d_model):
    cch = run_model_checked(net3d_model, NET3D_INPUT)
    assert type_counts(cch) == [
        ('ConvolutionND', 1), ('ReLU', 1), ('AveragePoolingND', 1),
        ('DeconvolutionND', 1)]
    report = cch.layer_report
    conv = report['ConvolutionND-1']
    assert conv['output_shapes'] == [(2, 4, 4, 6, 8)]
    # |y| = 2*4*4*6*8 = 1536, K = 2*3*3*3 = 54: 82944;
    # |x| + |W| + |b| = 768 + 216 + 4 = 988; 1536
    assert costs(conv) == (82944, 988 * 4, 1536 * 4)
    assert conv['params'] == {'k': 3, 's': 1, 'p': 1, 'd': 1, 'groups': 1,
                              'nobias': False}
    assert costs(report['ReLU-1']) == (1536, 1536 * 4, 1536 * 4)
    pool = report['AveragePoolingND-1']
    assert pool['output_shapes'] == [(2, 4, 2, 3, 4)]
    # |y| = 2*4*2*3*4 = 192, 2*2*2 = 8 each: 1536; 1536; 192
    assert costs(pool) == (1536, 1536 * 4, 192 * 4)
    deconv = report['DeconvolutionND-1']
    assert deconv['output_shapes'] == [(2, 2, 4, 6, 8)]
    # P = |x| (c_out / groups) prod k = 192*2*8 = 3072;
    # |x| + |W| + |b| = 192 + 4*2*8 + 2 = 258; |y| = 2*2*4*6*8 = 768
    assert costs(deconv) == (3072, 258 * 4, 768 * 4)
    # FLOPs 82944 + 1536 + 1536 + 3072 = 89088;
    # mread 988 + 1536 + 1536 + 258 = 4318;
    # mwrite 1536 + 1536 + 192 + 768 = 4032
    assert total(cch) == (4, 89088, 4318 * 4, 4032 * 4)


def test_net3d_without_fma(net3d_model):
    cch = run_model_checked(net3d_model, NET3D_INPUT, fma_1flop=False)
    flops = per_type(cch, 'flops')
    # both have a bias: 2 |y| K = 2*82944; 2P = 2*3072
    assert flops['ConvolutionND'] == 165888
    assert flops['DeconvolutionND'] == 6144
    # 165888 + 1536 + 1536 + 6144
    assert cch.total_report['flops'] == 175104
