"""Pictures: PNG files written, and figures that show what their titles
say (checked on the returned matplotlib figures and read back from the
files); a clear error without matplotlib."""

import io
import sys

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.report import plots
from helpers import layer

matplotlib = pytest.importorskip('matplotlib')

PNG = b'\x89PNG\r\n\x1a\n'
MiB = 1024 * 1024


# Peak 100 FLOP/s, 10 B/s: ridge at 10 FLOP/B.  Attainable FLOP/s is
# min(100, 10 * intensity).
LAYERS = [
    # intensity 1000 / 50 = 20: on the flat roof, at 100
    layer('Convolution2DFunction-1', 'Convolution2DFunction', 1000, 40, 10),
    # intensity 100 / 100 = 1: on the slope, at 10 * 1 = 10
    layer('ReLU-1', 'ReLU', 100, 60, 40),
    # intensity 4 / 8 = 0.5: at 5
    layer('ReLU-2', 'ReLU', 4, 4, 4),
    # no traffic, no FLOPs: neither has a place on log axes
    layer('Foo-1', 'Foo', 50, 0, 0),
    layer('Reshape-1', 'Reshape', 0, 0, 0),
]


def _is_png(path):
    with open(str(path), 'rb') as f:
        return f.read(8) == PNG


def _points(ax):
    """label -> list of (x, y) of each scatter of ``ax``."""
    return {c.get_label(): [tuple(p) for p in c.get_offsets().tolist()]
            for c in ax.collections}


def _legend(ax):
    return [t.get_text() for t in ax.get_legend().get_texts()]


def test_roofline_of_literal_layers(tmp_path):
    path = tmp_path / 'roof.png'
    fig = plots.plot_roofline(LAYERS, str(path), peak_flops=100,
                              bandwidth=10)
    assert _is_png(path)
    ax, = fig.axes
    assert ax.get_title() == 'Roofline: given peak (10 B/s)'
    assert (ax.get_xscale(), ax.get_yscale()) == ('log', 'log')
    assert ax.get_xlabel() == 'Arithmetic intensity (FLOP/byte)'
    assert ax.get_ylabel() == 'Attainable FLOP/s'
    assert _points(ax) == {'Convolution2DFunction': [(20.0, 100.0)],
                           'ReLU': [(1.0, 10.0), (0.5, 5.0)]}
    assert _legend(ax) == ['given: 100 FLOP/s roof',
                           'Convolution2DFunction', 'ReLU']
    texts = [t.get_text() for t in ax.texts]
    assert 'ridge 10 FLOP/B' in texts
    assert '2 layer(s) without FLOPs or traffic not shown' in texts
    # the roof: slope up to the ridge (10, 100), then flat; the ridge
    # point marked by a line of one point there
    lines = [(list(line.get_xdata()), list(line.get_ydata()))
             for line in ax.get_lines()]
    roof = [xy for xy in lines if len(xy[0]) == 3]
    assert len(roof) == 1 and roof[0][0][1:2] == [10.0]
    assert roof[0][1][1:] == [100.0, 100.0]
    assert ([10.0], [100.0]) in lines


def test_roofline_png_reads_back_at_its_size(tmp_path):
    path = tmp_path / 'roof.png'
    plots.plot_roofline(LAYERS, str(path), peak_flops=100, bandwidth=10,
                        dpi=50)
    image = matplotlib.image.imread(str(path))
    # 9 x 5 inches at 50 dpi
    assert image.shape[:2] == (250, 450)


def test_roofline_one_roof_per_peak(tmp_path):
    layers = [layer('Convolution2DFunction-1', 'Convolution2DFunction',
                    156e6, 1e6, 0, dtype='float32'),
              layer('ReLU-1', 'ReLU', 8, 32, 32, dtype='float32')]
    fig = plots.plot_roofline(layers, str(tmp_path / 'a100.png'),
                              device='a100')
    ax, = fig.axes
    assert ax.get_title() == 'Roofline: NVIDIA A100 SXM4 80GB (2.039 TB/s)'
    legend = _legend(ax)
    # roofs from the lower peak up
    assert legend[:2] == ['fp32 vector: 19.5 TFLOP/s roof',
                          'tf32 matrix: 156 TFLOP/s roof']
    texts = [t.get_text() for t in ax.texts]
    # 19.5e12 / 2039e9 = 9.56 and 156e12 / 2039e9 = 76.5 FLOP/B
    assert 'ridge 9.56 FLOP/B' in texts and 'ridge 76.5 FLOP/B' in texts


def test_roofline_with_measured_times(tmp_path):
    layers = [layer('ReLU-1', 'ReLU', 100, 60, 40, time=50.0),
              layer('MatMul-1', 'MatMul', 1000, 40, 10, time=20.0)]
    fig = plots.plot_roofline(layers, str(tmp_path / 't.png'),
                              peak_flops=100, bandwidth=10, title='mine')
    ax, = fig.axes
    assert ax.get_title() == 'mine'
    assert ax.get_ylabel() == 'Achieved FLOP/s (measured time)'
    # achieved: 100 / 50 = 2 and 1000 / 20 = 50 FLOP/s
    assert _points(ax) == {'ReLU': [(1.0, 2.0)], 'MatMul': [(20.0, 50.0)]}


def test_roofline_to_a_file_object():
    buf = io.BytesIO()
    plots.plot_roofline(LAYERS, buf, device='gtx1080ti')
    assert buf.getvalue().startswith(PNG)


def test_roofline_checks_its_arguments(tmp_path):
    path = tmp_path / 'x.png'
    with pytest.raises(ValueError, match='gtx1080ti'):
        plots.plot_roofline(LAYERS, str(path))
    with pytest.raises(ValueError, match='no layers'):
        plots.plot_roofline([], str(path), device='a100')
    assert not path.exists()


SUMMARY = [
    {'type': 'Conv', 'name': 'Conv', 'n_layers': 2, 'flops': 3000000000,
     'mread': 100 * MiB, 'mwrite': 50 * MiB},
    {'type': 'ReLU', 'name': 'ReLU', 'n_layers': 1, 'flops': 1000000,
     'mread': 10 * MiB, 'mwrite': 10 * MiB},
    {'type': 'total', 'name': 'total', 'n_layers': 3, 'flops': 3001000000,
     'mread': 110 * MiB, 'mwrite': 60 * MiB},
]


def _widths(ax):
    return [p.get_width() for p in ax.patches]


def test_summary_of_literal_rows(tmp_path):
    path = tmp_path / 's.png'
    fig = plots.plot_summary(SUMMARY, str(path), title='A model')
    assert _is_png(path)
    ax1, ax2 = fig.axes
    assert fig._suptitle.get_text() == 'A model'
    assert ax1.get_title() == 'FLOPs per layer type'
    assert ax2.get_title() == 'Memory traffic per layer type'
    # largest bar 3e9 FLOPs -> G: 3.0 and 0.001; largest traffic 150 MiB
    # -> MiB: reads 100 and 10, writes 50 and 10
    assert ax1.get_xlabel() == 'GFLOPs' and ax2.get_xlabel() == 'MiB'
    assert _widths(ax1) == [3.0, 0.001]
    assert _widths(ax2) == [100.0, 10.0, 50.0, 10.0]
    # writes are stacked after the reads
    assert [p.get_x() for p in ax2.patches[2:]] == [100.0, 10.0]
    assert [t.get_text() for t in ax1.get_yticklabels()] == ['Conv', 'ReLU']
    assert [t.get_text() for t in ax2.get_legend().get_texts()] == [
        'read', 'write']
    # shares: 3e9 / 3.001e9 = 99.97 %; (150) / 170 MiB = 88.2 %
    texts1 = [t.get_text() for t in ax1.texts]
    texts2 = [t.get_text() for t in ax2.texts]
    assert texts1 == ['100.0%', '0.0%'] and texts2 == ['88.2%', '11.8%']


def test_summary_takes_the_report_dict_and_keeps_a_type_named_total(
        tmp_path):
    rows = {'total (type)': dict(SUMMARY[1], type='total', name='total'),
            'Conv': SUMMARY[0], 'total': SUMMARY[2]}
    fig = plots.plot_summary(rows, str(tmp_path / 's.png'))
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [
        'total', 'Conv']
    assert fig._suptitle is None


def test_summary_by_phase_labels(tmp_path):
    rows = [dict(SUMMARY[0], phase='forward'),
            dict(SUMMARY[0], phase='backward'), SUMMARY[2]]
    fig = plots.plot_summary(rows, str(tmp_path / 's.png'))
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [
        'forward/Conv', 'backward/Conv']


def test_summary_of_nothing_is_an_error(tmp_path):
    with pytest.raises(ValueError, match='no layer types'):
        plots.plot_summary([SUMMARY[2]], str(tmp_path / 's.png'))


def test_through_the_hook(tmp_path):
    model = chainer.Sequential(L.Convolution2D(3, 4, 3), F.relu)
    x = np.ones((1, 3, 8, 8), np.float32)
    with ComputationalCostHook(strict=True) as cch:
        model(x)
    roof = tmp_path / 'roof.png'
    summary = tmp_path / 'summary.png'
    cch.plot_roofline(str(roof), device='h100')
    cch.plot_summary(str(summary))
    assert _is_png(roof) and _is_png(summary)
    # default resolution: 100 dpi, 9 x 5 inches
    assert matplotlib.image.imread(str(roof)).shape[:2] == (500, 900)
    # 2 types: 1.6 + 0.32 * 2 = 2.24 inches high, 10 wide
    assert matplotlib.image.imread(str(summary)).shape[:2] == (224, 1000)


def test_pyplot_state_is_left_alone(tmp_path):
    backend = matplotlib.get_backend()
    plots.plot_roofline(LAYERS, str(tmp_path / 'r.png'), device='a100')
    assert matplotlib.get_backend() == backend
    if 'matplotlib.pyplot' in sys.modules:
        assert sys.modules['matplotlib.pyplot'].get_fignums() == []


def test_missing_matplotlib_says_how_to_install(tmp_path, monkeypatch):
    plots.require_matplotlib()  # installed here: no error
    monkeypatch.setitem(sys.modules, 'matplotlib', None)
    path = tmp_path / 'r.png'
    for call in (lambda: plots.plot_roofline(LAYERS, str(path),
                                             device='a100'),
                 lambda: plots.plot_summary(SUMMARY, str(path)),
                 plots.require_matplotlib):
        with pytest.raises(ImportError) as e:
            call()
        assert 'pip install matplotlib' in str(e.value)
        assert '[plot]' in str(e.value)
    assert not path.exists()


# The format is the one the file name's extension names.

MAGIC = {'png': PNG, 'svg': b'<?xml', 'pdf': b'%PDF-',
         'eps': b'%!PS-Adobe-3.0 EPSF', 'ps': b'%!PS-Adobe'}


@pytest.mark.parametrize('name', ['x.svg', 'x.pdf', 'x.eps', 'x.ps',
                                  'x.PNG', 'x.Svg'])
def test_summary_in_the_format_of_its_name(name, tmp_path):
    path = tmp_path / name
    plots.plot_summary(SUMMARY, str(path))
    with open(str(path), 'rb') as f:
        assert f.read().startswith(MAGIC[name[2:].lower()])


def test_roofline_as_svg_through_the_hook(tmp_path):
    with ComputationalCostHook() as cch:
        F.relu(np.zeros((2, 3), np.float32))
    path = tmp_path / 'r.svg'
    cch.plot_roofline(str(path), device='a100')
    assert b'<svg' in path.read_bytes()


@pytest.mark.parametrize('name', ['x.jpg', 'x', 'x.svg.bak'])
def test_unknown_extension_is_refused_before_drawing(name, tmp_path,
                                                     monkeypatch):
    # Nothing is drawn: the figure would be made by _new_figure.
    monkeypatch.setattr(plots, '_new_figure', None)
    path = str(tmp_path / name)
    message = ('cannot tell the plot format of {!r}: the file name must end '
               'with .png, .svg, .pdf, .eps, .ps'.format(path))
    for draw in (lambda: plots.plot_summary(SUMMARY, path),
                 lambda: plots.plot_roofline(LAYERS, path, device='a100')):
        with pytest.raises(ValueError) as e:
            draw()
        assert str(e.value) == message
    assert not (tmp_path / name).exists()


def test_memory_labels_are_above_every_curve(tmp_path):
    # Two calls of 8 elements of float32, the first with scratch: the
    # labels of both marks must sit where no line or spike is drawn.
    pytest.importorskip('matplotlib')
    series = [(64, 200, 'forward'), (96, 0, 'forward'), (32, 0, 'backward')]
    figures = {'peak_layer': 'ReLU-1', 'peak_between_calls_layer': 'Exp-1'}
    fig = plots.plot_memory(series, figures, str(tmp_path / 'm.png'), dpi=50)
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    to_data = ax.transData.inverted()
    # the highest drawn point: live 64 + scratch 200 at call 1
    assert [t.get_text() for t in ax.texts] == [
        'peak 264 B during ReLU-1', 'between calls 96 B after Exp-1']
    from matplotlib.text import Text
    for text in ax.texts:
        box = Text.get_window_extent(text, renderer)  # the arrow left out
        (_, bottom), = to_data.transform([(box.x0, box.y0)])
        assert bottom > 264, text.get_text()
    # the legend is outside the axes
    legend = ax.get_legend().get_window_extent(renderer)
    assert legend.y1 < ax.get_window_extent(renderer).y0
