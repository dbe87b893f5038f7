"""Pictures: PNG files written, and figures that show what their titles
say: axis ranges, the lines and points drawn (their data worked by hand
from literal reports), their styles and colours, the legend entries and
the labels, read from matplotlib's objects on the Agg canvas (never from
pixels) and from the files; a clear error without matplotlib.
"""

import collections
import io
import os
import pathlib
import sys
import warnings

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
    # a name longer than the file system takes: before anything is drawn
    long_name = str(tmp_path / ('x' * 300 + '.png'))
    with pytest.raises(ValueError, match='its file name is 304 bytes long'):
        plots.plot_roofline(LAYERS, long_name, device='a100')
    assert not path.exists()


TYPE_SUMMARY = [
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
    fig = plots.plot_summary(TYPE_SUMMARY, str(path), title='A model')
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
    rows = {'total (type)': dict(TYPE_SUMMARY[1], type='total', name='total'),
            'Conv': TYPE_SUMMARY[0], 'total': TYPE_SUMMARY[2]}
    fig = plots.plot_summary(rows, str(tmp_path / 's.png'))
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [
        'total', 'Conv']
    assert fig._suptitle is None


def test_summary_by_phase_labels(tmp_path):
    rows = [dict(TYPE_SUMMARY[0], phase='forward'),
            dict(TYPE_SUMMARY[0], phase='backward'), TYPE_SUMMARY[2]]
    fig = plots.plot_summary(rows, str(tmp_path / 's.png'))
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [
        'forward/Conv', 'backward/Conv']


def test_summary_of_nothing_is_an_error(tmp_path):
    with pytest.raises(ValueError, match='no layer types'):
        plots.plot_summary([TYPE_SUMMARY[2]], str(tmp_path / 's.png'))


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
                 lambda: plots.plot_summary(TYPE_SUMMARY, str(path)),
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
    plots.plot_summary(TYPE_SUMMARY, str(path))
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
    for draw in (lambda: plots.plot_summary(TYPE_SUMMARY, path),
                 lambda: plots.plot_roofline(LAYERS, path, device='a100')):
        with pytest.raises(ValueError) as e:
            draw()
        assert str(e.value) == message
    assert not (tmp_path / name).exists()


def test_a_text_or_closed_file_is_refused_before_drawing(
        tmp_path, monkeypatch):
    # a PNG is bytes: a text file took the drawing, then matplotlib failed
    # without naming path (and open(..., 'w') was left empty)
    monkeypatch.setattr(plots, '_new_figure', None)
    closed = open(str(tmp_path / 'closed.png'), 'wb')
    closed.close()
    text = io.StringIO()
    with pytest.raises(TypeError, match=r'^path must be the name of a file '
                       r'\(a str or os.PathLike\) or a binary file object, '
                       r'got a text file <_io.StringIO'):
        plots.plot_summary(TYPE_SUMMARY, text)
    with pytest.raises(ValueError, match=r'^path <_io.BufferedWriter name='
                       r"'.*closed.png'> is a closed file$"):
        plots.plot_summary(TYPE_SUMMARY, closed)
    assert text.getvalue() == ''


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


from matplotlib.colors import to_rgba  # NOQA: E402
from matplotlib.markers import MarkerStyle  # NOQA: E402


def _xy(line):
    return list(line.get_xdata()), list(line.get_ydata())


def _marker_vertices(marker):
    style = MarkerStyle(marker)
    return style.get_path().transformed(style.get_transform()).vertices


# The roofline plot.  A given peak of 100 FLOP/s and 10 B/s: the ridge
# point is at 100 / 10 = 10 FLOP/B, the attainable FLOP/s of a layer
# min(100, 10 * intensity).

CONV = layer('Convolution2DFunction-1', 'Convolution2DFunction', 1000, 40,
             10)   # 1000 / 50 = 20 FLOP/B: on the flat roof, at 100
RELU = layer('ReLU-1', 'ReLU', 100, 60, 40)  # 100 / 100 = 1: at 10
SMALL = layer('ReLU-2', 'ReLU', 4, 4, 4)     # 4 / 8 = 0.5: at 5


def _roof(layers, tmp_path, **kwargs):
    kwargs.setdefault('peak_flops', 100)
    kwargs.setdefault('bandwidth', 10)
    kwargs.setdefault('dpi', 20)  # a small file: these tests read no pixel
    fig = plots.plot_roofline(layers, str(tmp_path / 'r.png'), **kwargs)
    ax, = fig.axes
    return fig, ax


@pytest.mark.parametrize('layers, xlim, ylim', [
    # intensities 20, 1, 0.5 and the ridge 10: x from 0.5 / 4 = 0.125 to
    # 20 * 4 = 80; y from the lowest of the points (100, 10, 5) and the
    # roof's start 10 B/s * 0.125 = 1.25, halved: 0.625, up to 4 x 100
    ([CONV, RELU, SMALL], (0.125, 80.0), (0.625, 400.0)),
    # one point at 1, left of the ridge 10: x from 1 / 4 to 10 * 4; y from
    # the roof's start 10 * 0.25 = 2.5 (under the point's 10), halved
    ([RELU], (0.25, 40.0), (1.25, 400.0)),
    # one point at 20, right of the ridge: x from 10 / 4 to 20 * 4; y from
    # the roof's start 10 * 2.5 = 25 (under the point's 100), halved
    ([CONV], (2.5, 80.0), (12.5, 400.0)),
])
def test_roofline_axes_frame_every_point_and_the_ridge(layers, xlim, ylim,
                                                       tmp_path):
    fig, ax = _roof(layers, tmp_path)
    assert ax.get_xlim() == pytest.approx(xlim, rel=1e-12)
    assert ax.get_ylim() == pytest.approx(ylim, rel=1e-12)
    # the roof spans the x axis: the slope from its left end up to the
    # ridge (10, 100), then flat to its right end
    roof, = [line for line in ax.get_lines() if len(line.get_xdata()) == 3]
    xs, ys = _xy(roof)
    assert xs == pytest.approx([xlim[0], 10.0, xlim[1]], rel=1e-12)
    assert ys == pytest.approx([10 * xlim[0], 100.0, 100.0], rel=1e-12)


def test_each_roof_has_its_own_style_and_a_hollow_ridge_marker(tmp_path):
    # A100, float32: a convolution on the TF32 tensor cores (156 TFLOP/s)
    # and a ReLU on the FP32 units (19.5 TFLOP/s), 2039 GB/s
    layers = [layer('Convolution2DFunction-1', 'Convolution2DFunction',
                    156e6, 1e6, 0, dtype='float32'),
              layer('ReLU-1', 'ReLU', 8, 32, 32, dtype='float32')]
    fig, ax = _roof(layers, tmp_path, peak_flops=None, bandwidth=None,
                    device='a100')
    roofs = [line for line in ax.get_lines() if len(line.get_xdata()) == 3]
    # from the lower peak up: solid, then dashed, both black
    assert [line.get_linestyle() for line in roofs] == ['-', '--']
    assert [line.get_ydata()[-1] for line in roofs] == [19.5e12, 156e12]
    assert all(to_rgba(line.get_color()) == to_rgba('black')
               for line in roofs)
    ridges = [line for line in ax.get_lines() if len(line.get_xdata()) == 1]
    # ridges at 19.5e12 / 2039e9 = 9.56 and 156e12 / 2039e9 = 76.5 FLOP/B
    assert [(line.get_xdata()[0], line.get_ydata()[0]) for line in ridges] \
        == [(pytest.approx(19.5e12 / 2039e9, rel=1e-12), 19.5e12),
            (pytest.approx(156e12 / 2039e9, rel=1e-12), 156e12)]
    for line in ridges:
        assert (line.get_marker(), line.get_markersize()) == ('o', 7.0)
        assert to_rgba(line.get_markerfacecolor()) == to_rgba('white')
        assert to_rgba(line.get_markeredgecolor()) == to_rgba('black')
    # the ridge labels sit beside their points
    assert [t.xy for t in ax.texts] == [
        (pytest.approx(19.5e12 / 2039e9, rel=1e-12), 19.5e12),
        (pytest.approx(156e12 / 2039e9, rel=1e-12), 156e12)]


def test_every_peak_of_a_preset_has_a_roof_told_apart(tmp_path):
    # On the A100 each (class, precision) has its own peak: vector fp64
    # 9.7, fp32 19.5, matrix fp64 19.5, vector fp16 78, TF32 matrix 156,
    # fp16 matrix 312 TFLOP/s
    layers = [layer('{}-{}'.format(t, d), t, 1e9, 1e6, 0, dtype=d)
              for t, d in (('ReLU', 'float64'), ('ReLU', 'float32'),
                           ('MatMul', 'float64'), ('ReLU', 'float16'),
                           ('MatMul', 'float32'), ('MatMul', 'float16'))]
    fig, ax = _roof(layers, tmp_path, peak_flops=None, bandwidth=None,
                    device='a100')
    roofs = [line for line in ax.get_lines() if len(line.get_xdata()) == 3]
    assert [line.get_label() for line in roofs] == [
        'fp64 vector: 9.7 TFLOP/s roof', 'fp32 vector: 19.5 TFLOP/s roof',
        'fp64 matrix: 19.5 TFLOP/s roof', 'fp16 vector: 78 TFLOP/s roof',
        'tf32 matrix: 156 TFLOP/s roof', 'fp16 matrix: 312 TFLOP/s roof']
    # four line styles, then again from the first
    assert [line.get_linestyle() for line in roofs] == [
        '-', '--', ':', '-.', '-', '--']
    # room above the highest roof for its ridge's label: up to 4 x 312e12
    assert ax.get_ylim()[1] == 4 * 312e12


def test_layer_types_get_hollow_markers_of_their_own_shape_and_colour(
        tmp_path):
    fig, ax = _roof([CONV, RELU, SMALL], tmp_path)
    conv, relu = ax.collections
    assert (conv.get_label(), relu.get_label()) == (
        'Convolution2DFunction', 'ReLU')
    # tab10's first two colours, circles then squares, no fill
    tab10 = matplotlib.colormaps['tab10']
    for c, colour, marker in ((conv, tab10(0), 'o'), (relu, tab10(1), 's')):
        assert [tuple(e) for e in c.get_edgecolor()] == [colour]
        assert len(c.get_facecolor()) == 0
        assert list(c.get_sizes()) == [36]  # 6 pt markers: 6 ** 2
        assert c.get_paths()[0].vertices == pytest.approx(
            _marker_vertices(marker))


@pytest.mark.parametrize('n, cmap', [(10, 'tab10'), (12, 'tab20')])
def test_up_to_twenty_types_each_get_a_colour(n, cmap, tmp_path):
    layers = [layer('T{}-1'.format(i), 'T{}'.format(i), 100, 60, 40)
              for i in range(n)]
    fig, ax = _roof(layers, tmp_path)
    colours = [tuple(c.get_edgecolor()[0]) for c in ax.collections]
    assert colours == [matplotlib.colormaps[cmap](i) for i in range(n)]
    assert len(set(colours)) == n
    # ten marker shapes, then they start again: the eleventh type is
    # drawn in circles as the first
    shapes = [c.get_paths()[0].vertices for c in ax.collections]
    assert shapes[-1] == pytest.approx(_marker_vertices('8' if n == 10
                                                        else 's'))
    if n > 10:
        assert shapes[10] == pytest.approx(_marker_vertices('o'))


def test_layers_off_the_log_axes_are_counted_and_only_they(tmp_path):
    copy = layer('Copy-1', 'Copy', 0, 8, 8)  # traffic, no FLOPs
    fig, ax = _roof([CONV, copy], tmp_path)
    assert [t.get_text() for t in ax.texts] == [
        'ridge 10 FLOP/B', '1 layer(s) without FLOPs or traffic not shown']
    assert [c.get_label() for c in ax.collections] == [
        'Convolution2DFunction']
    fig, ax = _roof([CONV, RELU], tmp_path)
    assert [t.get_text() for t in ax.texts] == ['ridge 10 FLOP/B']


def test_points_are_achieved_only_when_every_shown_layer_was_timed(
        tmp_path):
    timed = [dict(CONV, time=20.0), dict(RELU, time=50.0)]
    # a layer without traffic is not drawn: its missing time does not
    # matter; achieved 1000 / 20 = 50 and 100 / 50 = 2 FLOP/s
    fig, ax = _roof(timed + [layer('Foo-1', 'Foo', 5, 0, 0)], tmp_path)
    assert ax.get_ylabel() == 'Achieved FLOP/s (measured time)'
    assert [c.get_offsets().tolist() for c in ax.collections] == [
        [[20.0, 50.0]], [[1.0, 2.0]]]
    # y from the roof's start 10 * 1 / 4 = 2.5 or the point at 2, halved
    assert ax.get_ylim()[0] == 1.0
    # a drawn layer without a time, or whose clock did not tick: every
    # point is attainable (on its roof) instead
    for last in (RELU, dict(RELU, time=0.0)):
        fig, ax = _roof([timed[0], last], tmp_path)
        assert ax.get_ylabel() == 'Attainable FLOP/s'
        assert [c.get_offsets().tolist() for c in ax.collections] == [
            [[20.0, 100.0]], [[1.0, 10.0]]]


def test_a_roofline_without_a_point_shows_its_roof(tmp_path):
    # only layers off the log axes, timed: nothing achieved to show
    fig, ax = _roof([layer('Foo-1', 'Foo', 5, 0, 0, time=1.0),
                     layer('Copy-1', 'Copy', 0, 8, 8, time=1.0)], tmp_path)
    assert ax.get_ylabel() == 'Attainable FLOP/s'
    assert len(ax.collections) == 0
    assert [t.get_text() for t in ax.texts] == [
        'ridge 10 FLOP/B', '2 layer(s) without FLOPs or traffic not shown']
    # framed by the ridge alone: x from 10 / 4 to 10 * 4, y from the
    # roof's start 10 * 2.5 = 25, halved
    assert ax.get_xlim() == (2.5, 40.0)
    assert ax.get_ylim() == (12.5, 400.0)


def test_roofline_of_a_preset_is_titled_by_its_product(tmp_path):
    fig, ax = _roof([CONV], tmp_path, peak_flops=None, bandwidth=None,
                    device='gtx1080ti')
    # 484e9 B/s = 484 GB/s; every layer costed in fp32: 10.6 TFLOP/s
    assert ax.get_title() == 'Roofline: NVIDIA GeForce GTX 1080 Ti (484 GB/s)'
    assert _legend(ax) == ['fp32 vector: 10.6 TFLOP/s roof',
                           'Convolution2DFunction']
    assert tuple(fig.get_size_inches()) == (9.0, 5.0)


def test_the_legend_is_beside_the_axes(four_figures):
    fig = four_figures['roofline']
    ax, = fig.axes
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    box = ax.get_window_extent(renderer)
    assert legend.x0 > box.x1 and legend.y1 <= box.y1 + 1


def test_a_path_object_and_a_file_object(tmp_path):
    path = tmp_path / 'r.PNG'
    plots.plot_roofline([CONV], path, peak_flops=100, bandwidth=10, dpi=10)
    assert path.read_bytes().startswith(b'\x89PNG')
    assert plots.plot_format(pathlib.Path('a.PDF')) == 'pdf'
    assert plots.plot_format(io.BytesIO()) == 'png'


# The summary: two bar panels.

TYPE_SUMMARY = [
    {'type': 'Conv', 'name': 'Conv', 'flops': 3000000000,
     'mread': 100 * MiB, 'mwrite': 50 * MiB},
    {'type': 'ReLU', 'name': 'ReLU', 'flops': 1000000,
     'mread': 10 * MiB, 'mwrite': 10 * MiB},
    {'type': 'total', 'name': 'total', 'flops': 3001000000,
     'mread': 110 * MiB, 'mwrite': 60 * MiB},
]


def test_summary_bars_first_type_on_top_with_shares_at_their_ends(
        tmp_path):
    fig = plots.plot_summary(TYPE_SUMMARY, str(tmp_path / 's.png'), dpi=20)
    ax1, ax2 = fig.axes
    # one bar a type at y 0, 1, ..., the y axis downwards
    assert ax1.yaxis_inverted()
    assert [p.get_y() + p.get_height() / 2 for p in ax1.patches] == [0, 1]
    # the shares at the bars' ends: 3 and 0.001 GFLOPs; 150 and 20 MiB
    assert [t.xy for t in ax1.texts] == [(3.0, 0), (0.001, 1)]
    assert [t.xy for t in ax2.texts] == [(150.0, 0), (20.0, 1)]
    # room right of the longest bar for its share: 15 % of 3 GFLOPs
    assert ax1.get_xlim()[1] == pytest.approx(3.0 * 1.15, rel=1e-12)
    # FLOPs blue, reads orange, writes green
    assert [to_rgba(p.get_facecolor()) for p in ax1.patches] == [
        to_rgba('tab:blue')] * 2
    assert [to_rgba(p.get_facecolor()) for p in ax2.patches] == [
        to_rgba('tab:orange')] * 2 + [to_rgba('tab:green')] * 2
    # 1.6 + 0.32 * 2 types inches high, 10 wide
    assert tuple(fig.get_size_inches()) == pytest.approx((10.0, 2.24))


def test_summary_of_small_and_of_zero_figures(tmp_path):
    rows = [{'type': 'Reshape', 'flops': 0, 'mread': 0, 'mwrite': 0},
            {'type': 'ReLU', 'flops': 999, 'mread': 1000, 'mwrite': 23},
            {'type': 'total', 'name': 'total', 'flops': 999,
             'mread': 1000, 'mwrite': 23}]
    fig = plots.plot_summary(rows, str(tmp_path / 's.png'), dpi=20)
    ax1, ax2 = fig.axes
    # 999 FLOPs and 1000 + 23 = 1023 bytes: under a kilo(bi)unit, no
    # prefix
    assert (ax1.get_xlabel(), ax2.get_xlabel()) == ('FLOPs', 'B')
    assert [p.get_width() for p in ax1.patches] == [0, 999]
    assert [t.get_text() for t in ax1.texts] == ['0.0%', '100.0%']
    # 1000 FLOPs and 1000 + 24 = 1024 bytes (read and written, stacked):
    # exactly one kilo(bi)unit, the prefix of the longest bars
    rows[1].update(flops=1000, mwrite=24)
    fig = plots.plot_summary(rows, str(tmp_path / 's.png'), dpi=20)
    ax1, ax2 = fig.axes
    assert (ax1.get_xlabel(), ax2.get_xlabel()) == ('KFLOPs', 'KiB')
    assert [p.get_width() for p in ax1.patches] == [0, 1.0]
    # reads 1000 / 1024 = 0.9765625 KiB, writes 24 / 1024 = 0.0234375
    assert [p.get_width() for p in ax2.patches] == [
        0, 0.9765625, 0, 0.0234375]
    # nothing at all: shares of 0 % rather than a division by zero
    rows = [{'type': 'Reshape', 'flops': 0, 'mread': 0, 'mwrite': 0}]
    fig = plots.plot_summary(rows, str(tmp_path / 's.png'), dpi=20)
    assert [t.get_text() for ax in fig.axes for t in ax.texts] == [
        '0.0%', '0.0%']


def test_summary_of_figures_past_a_float_is_drawn_from_exact_shares(
        tmp_path):
    # a projection to batch 10**307 has exact int figures a float cannot
    # hold (their sum 1.8e308 B): an OverflowError computing the shares
    rows = [{'type': 'A', 'flops': 8 * 10 ** 307, 'mread': 9 * 10 ** 307,
             'mwrite': 9 * 10 ** 307},
            {'type': 'B', 'flops': 2 * 10 ** 307, 'mread': 10 ** 307,
             'mwrite': 10 ** 307}]
    fig = plots.plot_summary(rows, str(tmp_path / 's.png'), dpi=20)
    ax1, ax2 = fig.axes
    # 8e307 / 1e12 TFLOPs; shares 8 / 10 and 18 / 20
    assert (ax1.get_xlabel(), ax2.get_xlabel()) == ('TFLOPs', 'TiB')
    assert _widths(ax1) == [8e295, 2e295]
    assert [t.get_text() for t in ax1.texts] == ['80.0%', '20.0%']
    assert [t.get_text() for t in ax2.texts] == ['90.0%', '10.0%']


@pytest.mark.parametrize('row, message', [
    ({'flops': 10 ** 330, 'mread': 1, 'mwrite': 1},
     'the FLOPs of layer type {!r} are beyond a float\'s range even in '
     'units of TFLOPs'),
    ({'flops': 1, 'mread': 10 ** 330, 'mwrite': 1},
     'the bytes read of layer type {!r} are beyond a float\'s range even '
     'in units of TiB'),
    # 1e308 TFLOPs is a float, but not with the axis' margin
    ({'flops': 10 ** 320, 'mread': 1, 'mwrite': 1},
     'the FLOPs of layer type {!r} are beyond a float\'s range even in '
     'units of TFLOPs'),
])
def test_summary_of_figures_no_unit_can_draw_names_them(
        tmp_path, row, message):
    rows = [{'type': 'Small', 'flops': 1, 'mread': 1, 'mwrite': 1},
            dict(row, type='Huge')]
    path = tmp_path / 's.png'
    with pytest.raises(ValueError) as e:
        plots.plot_summary(rows, str(path))
    assert str(e.value) == (
        'plot_summary: ' + message.format('Huge') + ': they cannot be '
        'drawn; give a smaller batch size, or show the summary report '
        'with unit=None (the exact figures)')
    assert not path.exists()


# The live memory over the calls.

KiB = 1024
FIGURES = {'peak_layer': 'ReLU-1', 'peak_between_calls_layer': 'Exp-1'}


def test_memory_curve_spikes_phases_and_marks(tmp_path):
    series = [(1 * KiB, 0, 'forward'), (3 * KiB, None, 'forward'),
              (2 * KiB, 0, 'backward'),
              (None, 0, 'forward'),  # no figure: not drawn
              (1 * KiB, 3 * KiB, 'forward')]
    fig = plots.plot_memory(series, FIGURES, str(tmp_path / 'm.png'), dpi=20)
    ax, = fig.axes
    # four calls drawn; the largest during a call is 1 + 3 = 4 KiB, at
    # call 4: every figure in KiB
    assert ax.get_ylabel() == 'Live KiB'
    assert ax.get_xlabel() == 'Function call'
    assert ax.get_title() == 'Live memory'
    assert ax.get_xlim() == (0.5, 4.5)
    assert ax.get_ylim() == pytest.approx((0, 4 * 1.4))  # 5.6
    step, = [line for line in ax.get_lines() if len(line.get_xdata()) > 1]
    assert _xy(step) == ([1, 2, 3, 4], [1, 3, 2, 1])
    assert step.get_drawstyle() == 'steps-mid'
    spikes, = ax.collections
    assert [s.tolist() for s in spikes.get_segments()] == [[[4, 1], [4, 4]]]
    # the peak during call 4 (right half: labelled leftwards of it) and
    # the peak between calls, 3 KiB after call 2
    assert [t.get_text() for t in ax.texts] == [
        'peak 4 KiB during ReLU-1', 'between calls 3 KiB after Exp-1']
    assert [t.xy for t in ax.texts] == [(4, 4), (2, 3)]
    assert [t.get_horizontalalignment() for t in ax.texts] == [
        'right', 'left']
    # one label a row, from the top of the axes down
    assert [t.xyann for t in ax.texts] == [
        (4, 0.95), (2, pytest.approx(0.86))]
    marks = [line for line in ax.get_lines() if len(line.get_xdata()) == 1]
    assert [(_xy(m), to_rgba(m.get_color())) for m in marks] == [
        (([4], [4]), to_rgba('tab:red')), (([2], [3]), to_rgba('tab:gray'))]
    assert [(m.get_marker(), m.get_markersize()) for m in marks] == [
        ('o', 6.0)] * 2
    # a thin line of the mark's colour joins each label to its point
    assert [(to_rgba(t.arrow_patch.get_edgecolor()),
             t.arrow_patch.get_linewidth()) for t in ax.texts] == [
        (to_rgba('tab:red'), 0.8), (to_rgba('tab:gray'), 0.8)]
    # runs of one phase shaded: calls 1-2 forward, 3 backward, 4 forward
    spans = ax.patches
    assert [(p.get_x(), p.get_x() + p.get_width()) for p in spans] == [
        (0.5, 2.5), (2.5, 3.5), (3.5, 4.5)]
    assert [to_rgba(p.get_facecolor())[:3] for p in spans] == [
        to_rgba(c)[:3] for c in ('tab:blue', 'tab:orange', 'tab:blue')]
    # each phase named once
    assert sorted(_legend(ax)) == sorted([
        'forward', 'backward', 'scratch (during the call)',
        'live (after the call)'])
    assert tuple(fig.get_size_inches()) == (9.0, 4.0)


@pytest.mark.parametrize('live, unit, text', [
    (1023, 'B', 'peak 1023 B after ReLU-1'),   # under 1 KiB: in bytes
    (1024, 'KiB', 'peak 1 KiB after ReLU-1'),  # from 1024 B: in KiB
    (1536 * KiB, 'MiB', 'peak 1.5 MiB after ReLU-1'),
])
def test_memory_figures_in_binary_units(live, unit, text, tmp_path):
    fig = plots.plot_memory([(live, 0, 'forward')], FIGURES,
                            str(tmp_path / 'm.png'), dpi=20)
    ax, = fig.axes
    assert ax.get_ylabel() == 'Live ' + unit
    assert [t.get_text() for t in ax.texts] == [text]


def test_memory_peak_after_a_call_is_marked_once(tmp_path):
    series = [(64, 0, 'update'), (96, 0, 'update'), (32, 0, 'other')]
    fig = plots.plot_memory(series, FIGURES, str(tmp_path / 'm.png'),
                            title='mine')
    ax, = fig.axes
    assert ax.get_title() == 'mine'
    # 96 B after call 2: one mark, in bytes; the y axis to 96 * 1.4
    assert [t.get_text() for t in ax.texts] == ['peak 96 B after ReLU-1']
    assert ax.get_ylabel() == 'Live B'
    assert ax.get_ylim() == pytest.approx((0, 134.4))
    assert len(ax.collections) == 0  # no scratch, no spike
    assert 'scratch (during the call)' not in _legend(ax)
    # the update phase green, any other grey
    assert [to_rgba(p.get_facecolor())[:3] for p in ax.patches] == [
        to_rgba(c)[:3] for c in ('tab:green', 'tab:gray')]
    assert sorted(_legend(ax)) == sorted(['update', 'other',
                                          'live (after the call)'])


def test_memory_of_nothing(tmp_path):
    # no bytes at all: the y axis still spans 0 to 1
    fig = plots.plot_memory([(0, 0, 'forward')], FIGURES,
                            str(tmp_path / 'm.png'), dpi=20)
    assert fig.axes[0].get_ylim() == (0, 1)
    with pytest.raises(ValueError, match='no calls to plot'):
        plots.plot_memory([(None, 0, 'forward')], FIGURES,
                          str(tmp_path / 'm.png'), dpi=20)


# The scaling efficiency against the workers.

def _curve(**efficiency):
    return {int(n[1:]): {'efficiency': e} for n, e in efficiency.items()}


CURVES = collections.OrderedDict([
    ('none', _curve(n1=1.0, n4=0.5, n2=0.8)),
    ('ddp', _curve(n1=1.0, n2=0.9, n4=0.7)),
    ('empty', {}),
])


def test_scaling_curves_and_published_points(tmp_path):
    fig = plots.plot_scaling(CURVES, str(tmp_path / 's.png'),
                             published=[(8, 0.6, 'a paper'), (2, 0.95)])
    ax, = fig.axes
    lines = ax.get_lines()
    # the curves in worker order, an empty one left out
    assert [_xy(line) for line in lines[:2]] == [
        ([1, 2, 4], [1.0, 0.8, 0.5]), ([1, 2, 4], [1.0, 0.9, 0.7])]
    assert [to_rgba(line.get_color()) for line in lines[:2]] == [
        matplotlib.colormaps['tab10'](i) for i in range(2)]
    # small dots on the curves, larger squares for the published runs
    assert [(line.get_marker(), line.get_markersize())
            for line in lines[:4]] == [('o', 3.0)] * 2 + [('s', 6.0)] * 2
    # the published points, black squares; only the labelled one named
    points = lines[2:4]
    assert [_xy(p) for p in points] == [([8], [0.6]), ([2], [0.95])]
    assert all(p.get_marker() == 's' and p.get_linestyle() == 'None'
               and to_rgba(p.get_color()) == to_rgba('black')
               for p in points)
    assert [(t.get_text(), t.xy) for t in ax.texts] == [
        ('a paper', (8, 0.6))]
    assert _legend(ax) == ['none', 'ddp', 'published']
    # workers on a log2 axis, efficiency from 0 to 1.05
    assert ax.get_xscale() == 'log'
    assert ax.xaxis.get_transform().base == 2
    assert ax.get_ylim() == (0, 1.05)
    assert ax.get_xlabel() == 'Workers'
    assert ax.get_ylabel() == 'Efficiency (step at 1 worker / step at N)'
    assert ax.get_title() == 'Scaling'
    assert tuple(fig.get_size_inches()) == (7.0, 4.5)


def test_scaling_shows_a_published_run_above_1(tmp_path):
    # a superlinear run (1.2 at 8 workers): the axis reaches 1.05 * 1.2
    fig = plots.plot_scaling(CURVES, str(tmp_path / 's.png'),
                             published=[(8, 1.2)])
    ax, = fig.axes
    assert ax.get_ylim() == pytest.approx((0, 1.26), rel=1e-12)


def test_scaling_of_one_worker(tmp_path):
    one = {'alone': _curve(n1=1.0)}
    fig = plots.plot_scaling(one, str(tmp_path / 's.png'), title='mine')
    ax, = fig.axes
    # one worker: no log axis to draw it on
    assert ax.get_xscale() == 'linear'
    assert ax.get_title() == 'mine'
    assert _legend(ax) == ['alone']
    # a published run at 8 workers widens it to a log axis
    fig = plots.plot_scaling(one, str(tmp_path / 's.png'),
                             published=[(8, 0.9)])
    assert fig.axes[0].get_xscale() == 'log'
    assert len(fig.axes[0].texts) == 0


@pytest.mark.parametrize('parts, title', [
    (('resnet50', 'v100', 'ib-edr'), 'resnet50 on v100, ib-edr: scaling'),
    (('resnet50', None, 'ib-edr'), 'resnet50 on ib-edr: scaling'),
    (('resnet50', None, None), 'resnet50: scaling'),
    ((None, 'v100', 'ib-edr'), 'Scaling on v100, ib-edr'),
    ((None, None, None), 'Scaling'),
])
def test_scaling_title_names_what_is_given(parts, title, tmp_path):
    assert plots.scaling_title(*parts) == title
    fig = plots.plot_scaling(CURVES, str(tmp_path / 's.png'),
                             title=plots.scaling_title(*parts))
    assert fig.axes[0].get_title() == title


def test_scaling_checks_its_arguments(tmp_path):
    path = tmp_path / 's.png'
    with pytest.raises(ValueError, match='no scaling report to plot'):
        plots.plot_scaling({'empty': {}}, str(path))
    for bad in ([(2,)], [(2, 0.5, 'x', 'y')], [5]):
        with pytest.raises(ValueError) as e:
            plots.plot_scaling(CURVES, str(path), published=bad)
        assert str(e.value) == (
            'published points must be (workers, efficiency[, label]), '
            'got {!r}'.format(bad[0]))
    assert not path.exists()


@pytest.mark.parametrize('published, error, message', [
    # each was drawn: a point below the axis, none at all (NaN), one at 0
    # workers on a log axis, strings and True taken as numbers
    ([(8, -1.0)], ValueError, 'published[0] efficiency must be a finite '
     'number > 0 up to 1e200, got -1.0'),
    ([(8, 0.9), (16, float('nan'))], ValueError, 'published[1] efficiency '
     'must be a finite number > 0 up to 1e200, got nan'),
    ([(8, 0)], ValueError, 'published[0] efficiency must be a finite '
     'number > 0 up to 1e200, got 0'),
    ([(0, 0.9)], ValueError, 'published[0] workers must be an int from 1 '
     'to 1e200, got 0'),
    ([('8', 0.9)], TypeError, "published[0] workers must be an int from 1 "
     "to 1e200, got '8'"),
    ([(True, 0.9)], TypeError, 'published[0] workers must be an int from 1 '
     'to 1e200, got True'),
    ([(8, '0.9')], TypeError, 'published[0] efficiency must be a finite '
     "number > 0 up to 1e200, got '0.9'"),
    # beyond what a logarithmic axis places without overflowing a float
    ([(10 ** 201, 0.9)], ValueError, 'published[0] workers must be an int '
     'from 1 to 1e200, got an int of 202 digits'),
    ([(8, 1e201)], ValueError, 'published[0] efficiency must be a finite '
     'number > 0 up to 1e200, got 1e+201'),
    ([(8, 0.9, 3)], TypeError, 'published[0] label must be a str or None, '
     'got 3'),
    # a bare TypeError, 'int' object is not iterable
    (5, TypeError, 'published must be None or a list of (workers, '
     'efficiency[, label]) points: workers an int from 1 to 1e200, '
     'efficiency a finite number > 0 up to 1e200, label a str or None, got '
     '5'),
])
def test_published_points_are_checked_naming_published(
        tmp_path, published, error, message):
    path = tmp_path / 's.png'
    with pytest.raises(error) as e:
        plots.plot_scaling(CURVES, str(path), published=published)
    assert str(e.value) == message
    assert not path.exists()


def test_a_published_point_of_no_label_is_drawn_unlabelled(tmp_path):
    fig = plots.plot_scaling(CURVES, str(tmp_path / 's.png'),
                             published=((8, 1.2, None),))
    ax, = fig.axes
    assert _xy(ax.get_lines()[2]) == ([8], [1.2])
    assert len(ax.texts) == 0  # None was drawn as the label 'None'


# What every figure shares.

@pytest.fixture(scope='module')
def four_figures(tmp_path_factory):
    """One figure of each kind (drawn once: the tests only read them),
    any warning an error."""
    path = str(tmp_path_factory.mktemp('figures') / 'f.png')
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        return _draw_four(path)


def _draw_four(path):
    return {
        'roofline': plots.plot_roofline(
            [CONV, RELU, layer('Foo-1', 'Foo', 5, 0, 0)], path,
            peak_flops=100, bandwidth=10, dpi=20),
        'summary': plots.plot_summary(TYPE_SUMMARY, path, dpi=20),
        'memory': plots.plot_memory(
            [(0, 0, 'forward'), (64, 200, 'forward'), (96, 0, 'backward')],
            FIGURES, path, dpi=20),
        'scaling': plots.plot_scaling(CURVES, path, published=[(8, 0.6, 'x')],
                                      dpi=20)}


def test_small_print_is_smaller_than_the_axis_labels(four_figures):
    # legends, notes and labels on points 8 pt, a summary's shares and a
    # published run's label 7 pt, under the axes' own 10 pt labels
    sizes = {}
    for name, fig in four_figures.items():
        for i, ax in enumerate(fig.axes):
            assert ax.xaxis.label.get_fontsize() == 10.0
            legend = ax.get_legend()
            if legend is not None:
                sizes['{} {} legend'.format(name, i)] = {
                    t.get_fontsize() for t in legend.get_texts()}
            sizes['{} {} texts'.format(name, i)] = {
                t.get_fontsize() for t in ax.texts}
    assert sizes == {
        'roofline 0 legend': {8.0}, 'roofline 0 texts': {8.0},
        'summary 0 texts': {7.0}, 'summary 1 legend': {8.0},
        'summary 1 texts': {7.0}, 'memory 0 legend': {8.0},
        'memory 0 texts': {8.0}, 'scaling 0 legend': {8.0},
        'scaling 0 texts': {7.0}}
    ticks = four_figures['summary'].axes[0].get_yticklabels()
    assert {t.get_fontsize() for t in ticks} == {8.0}


def _drawn(ax, artists):
    """When each of ``artists`` is drawn: matplotlib draws an axes'
    artists by zorder, those of one zorder in the order they were added."""
    order = sorted(ax.get_children(), key=lambda a: a.get_zorder())
    return [order.index(a) for a in artists]


def test_marks_are_drawn_over_the_lines_they_sit_on(four_figures):
    ax, = four_figures['roofline'].axes
    roof = [line for line in ax.get_lines() if len(line.get_xdata()) == 3]
    ridge = [line for line in ax.get_lines() if len(line.get_xdata()) == 1]
    # a layer on its roof is drawn over it, the ridge's marker over both
    assert max(_drawn(ax, roof)) < min(_drawn(ax, ax.collections))
    assert max(_drawn(ax, ax.collections)) < min(_drawn(ax, ridge))
    # the peaks over the live curve and the scratch spikes
    ax, = four_figures['memory'].axes
    curves = [line for line in ax.get_lines() if len(line.get_xdata()) > 1]
    marks = [line for line in ax.get_lines() if len(line.get_xdata()) == 1]
    assert max(_drawn(ax, curves + list(ax.collections))) < min(
        _drawn(ax, marks))
    # the published runs over the curves
    ax, = four_figures['scaling'].axes
    lines = ax.get_lines()
    assert max(_drawn(ax, lines[:2])) < min(_drawn(ax, lines[2:3]))


def test_each_figure_is_filled_and_nothing_falls_off_it(four_figures):
    for name, fig in four_figures.items():
        renderer = fig.canvas.get_renderer()
        to_fig = fig.transFigure.inverted()
        boxes = [ax.get_position() for ax in fig.axes] + [
            ax.get_legend().get_window_extent(renderer).transformed(to_fig)
            for ax in fig.axes if ax.get_legend() is not None]
        # the axes (with the roofline's legend beside them) span the
        # figure's width and most of its height
        assert min(b.x0 for b in boxes) < 0.12, name
        assert max(b.x1 for b in boxes) > 0.95, name
        assert max(b.y1 for b in boxes) - min(b.y0 for b in boxes) > 0.55
        # every text, tick label and legend inside the canvas
        tight = fig.get_tightbbox(renderer)
        width, height = fig.get_size_inches()
        assert (tight.x0 >= 0 and tight.y0 >= 0 and tight.x1 <= width
                and tight.y1 <= height), name


def test_a_light_grid_on_the_value_axes(four_figures):
    # the bars' and the memory curve's value axes only; both axes of the
    # roofline (major ticks only) and of the scaling plot
    grids = {}
    for name, fig in four_figures.items():
        for i, ax in enumerate(fig.axes):
            for axis in (ax.xaxis, ax.yaxis):
                lines = axis.get_gridlines()
                key = '{} {} {}'.format(name, i, axis.axis_name)
                grids[key] = {line.get_visible() for line in lines}
                if any(line.get_visible() for line in lines):
                    assert {(line.get_linewidth(), line.get_alpha())
                            for line in lines} == {(0.5, 0.5)}, key
            if name == 'roofline':
                minor = ax.xaxis.get_minor_ticks() + \
                    ax.yaxis.get_minor_ticks()
                assert not any(t.gridline.get_visible() for t in minor)
    assert grids == {
        'roofline 0 x': {True}, 'roofline 0 y': {True},
        'summary 0 x': {True}, 'summary 0 y': {False},
        'summary 1 x': {True}, 'summary 1 y': {False},
        'memory 0 x': {False}, 'memory 0 y': {True},
        'scaling 0 x': {True}, 'scaling 0 y': {True}}


@pytest.mark.parametrize('draw', ['roofline', 'summary', 'memory',
                                  'scaling'])
def test_each_figure_is_written_to_its_file(draw, tmp_path):
    calls = {
        'roofline': lambda p, **k: plots.plot_roofline(
            [CONV], p, peak_flops=100, bandwidth=10, **k),
        'summary': lambda p, **k: plots.plot_summary(TYPE_SUMMARY, p, **k),
        'memory': lambda p, **k: plots.plot_memory(
            [(64, 0, 'forward')], FIGURES, p, **k),
        'scaling': lambda p, **k: plots.plot_scaling(CURVES, p, **k)}
    png = tmp_path / 'f.png'
    fig = calls[draw](str(png), dpi=10)
    width, height = fig.get_size_inches()
    # read back at 10 dots an inch, and by default at 100
    assert matplotlib.image.imread(str(png)).shape[:2] == (
        round(height * 10), round(width * 10))
    calls[draw](str(png))
    assert matplotlib.image.imread(str(png)).shape[:2] == (
        round(height * 100), round(width * 100))


def test_line_weights_and_label_offsets(four_figures):
    # roofs 1.5 pt, hollow markers' edges 1.3 pt
    ax, = four_figures['roofline'].axes
    assert {line.get_linewidth() for line in ax.get_lines()
            if len(line.get_xdata()) == 3} == {1.5}
    assert {tuple(c.get_linewidths()) for c in ax.collections} == {(1.3,)}
    # a ridge's label right of and under its point
    ridge_labels = [t for t in ax.texts if t.get_text().startswith('ridge')]
    assert [(t.xyann, t.anncoords) for t in ridge_labels] == [
        ((6, -14), 'offset points')]
    # the live curve and the scratch spikes 1.2 pt; the phases shaded
    # lightly, without edges
    ax, = four_figures['memory'].axes
    step, = [line for line in ax.get_lines() if len(line.get_xdata()) > 1]
    spikes, = ax.collections
    assert (step.get_linewidth(), to_rgba(step.get_color())) == (
        1.2, to_rgba('black'))
    assert (tuple(spikes.get_linewidths()),
            [tuple(c) for c in spikes.get_colors()]) == (
        (1.2,), [to_rgba('tab:purple')])
    assert {(p.get_alpha(), p.get_linewidth()) for p in ax.patches} == {
        (0.12, 0)}
    # a summary's shares just right of their bars' ends
    for ax in four_figures['summary'].axes:
        assert {(t.xyann, t.anncoords) for t in ax.texts} == {
            ((3, -3), 'offset points')}
    # a published run's label left of and under its point
    ax, = four_figures['scaling'].axes
    assert [(t.xyann, t.anncoords, t.get_horizontalalignment())
            for t in ax.texts] == [((-6, -12), 'offset points', 'right')]


def test_drawing_warns_nothing(four_figures):
    # drawn with warnings as errors: matplotlib's warnings (a grid
    # switched off but styled, a singular axis, ...) would reach the
    # user's console
    assert sorted(four_figures) == ['memory', 'roofline', 'scaling',
                                    'summary']


# Every argument checked before anything is drawn (issue 44).

def _each_plot(path, **kwargs):
    """The four plots of small literal reports to ``path``, one by one."""
    return [
        lambda: plots.plot_roofline([CONV], path, peak_flops=100,
                                    bandwidth=10, **kwargs),
        lambda: plots.plot_summary(TYPE_SUMMARY, path, **kwargs),
        lambda: plots.plot_memory([(64, 0, 'forward')], FIGURES, path,
                                  **kwargs),
        lambda: plots.plot_scaling(CURVES, path, **kwargs)]


@pytest.fixture
def nothing_drawn(monkeypatch):
    # a figure would be made by _new_figure
    monkeypatch.setattr(plots, '_new_figure', None)


@pytest.mark.parametrize('bad', [None, 5, 1.5, b'x.png', ['x.png']])
def test_a_path_that_is_no_file_name_is_a_type_error(bad, nothing_drawn):
    # an int would be a file descriptor to open(), closed when done
    for draw in _each_plot(bad):
        with pytest.raises(TypeError) as e:
            draw()
        assert str(e.value) == (
            'path must be the name of a file (a str or os.PathLike) or a '
            'binary file object, got {!r}'.format(bad))


def test_a_path_in_no_directory_is_refused_before_drawing(tmp_path,
                                                          nothing_drawn):
    (tmp_path / 'file').write_text('')
    (tmp_path / 'd.png').mkdir()
    cases = [
        (tmp_path / 'no' / 'x.png', "path {!r}: cannot write in directory "
         "{!r}: it does not exist".format(str(tmp_path / 'no' / 'x.png'),
                                          str(tmp_path / 'no'))),
        (tmp_path / 'file' / 'x.png', "path {!r}: cannot write in directory "
         "{!r}: {!r} is a file, not a directory".format(
             str(tmp_path / 'file' / 'x.png'), str(tmp_path / 'file'),
             str(tmp_path / 'file'))),
        # a file above: named, not 'it does not exist'
        (tmp_path / 'file' / 'd' / 'x.png', "path {!r}: cannot write in "
         "directory {!r}: {!r} is a file, not a directory".format(
             str(tmp_path / 'file' / 'd' / 'x.png'),
             str(tmp_path / 'file' / 'd'), str(tmp_path / 'file'))),
        (tmp_path / 'd.png', "path {!r} is a directory: give a file name "
         "such as plot.png".format(str(tmp_path / 'd.png')))]
    for path, message in cases:
        for given in (str(path), path):  # os.PathLike too
            for draw in _each_plot(given):
                with pytest.raises(ValueError) as e:
                    draw()
                assert str(e.value) == message
    assert sorted(p.name for p in tmp_path.iterdir()) == ['d.png', 'file']


@pytest.mark.parametrize('bad, error', [
    (float('nan'), ValueError), (float('inf'), ValueError),
    (1e308, ValueError), (10 ** 400, ValueError), (-1, ValueError),
    (0, ValueError), (9.5, ValueError), (1200.5, ValueError),
    (True, TypeError), ('100', TypeError), (None, TypeError)])
def test_dpi_is_a_number_from_10_to_1200(bad, error, tmp_path,
                                         nothing_drawn):
    for draw in _each_plot(str(tmp_path / 'x.png'), dpi=bad):
        with pytest.raises(error) as e:
            draw()
        assert str(e.value) == ('dpi must be a number from 10 to 1200 (dots '
                                'per inch), got {!r}'.format(bad))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize('bad', [True, float('nan'), b'x', ['a', 'b'], 5])
def test_a_title_that_is_no_str_is_a_type_error(bad, tmp_path,
                                                nothing_drawn):
    for draw in _each_plot(str(tmp_path / 'x.png'), title=bad):
        with pytest.raises(TypeError) as e:
            draw()
        assert str(e.value) == 'title must be a str or None, got {!r}'.format(
            bad)
    assert list(tmp_path.iterdir()) == []


def test_a_plot_cut_short_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    # a full disk in the middle of the PNG: the user's file was cut short
    import matplotlib.figure
    path = tmp_path / 'owned.png'
    path.write_bytes(b'old')

    def full(self, f, **kwargs):
        f.write(b'partial')
        raise OSError(28, 'No space left on device')
    monkeypatch.setattr(matplotlib.figure.Figure, 'savefig', full)
    for draw in _each_plot(str(path)):
        with pytest.raises(OSError, match='No space'):
            draw()
        assert path.read_bytes() == b'old'
    assert os.listdir(tmp_path) == ['owned.png']


def test_dpi_bounds_are_allowed():
    assert plots.check_dpi(10) == 10.0
    assert plots.check_dpi(1200) == 1200.0
    assert plots.check_dpi(np.int64(300)) == 300.0
    assert plots.check_dpi(72.5) == 72.5


def test_the_hook_s_scaling_plot_checks_before_its_reports(tmp_path,
                                                           monkeypatch):
    with ComputationalCostHook() as cch:
        F.relu(np.zeros((2, 3), np.float32))

    def no_report(*args, **kwargs):
        raise AssertionError('a report was built')
    monkeypatch.setattr(cch, 'scaling_report', no_report)
    with pytest.raises(ValueError, match='dpi must be a number from 10'):
        cch.plot_scaling(str(tmp_path / 's.png'), [1, 2], device='a100',
                         network='eth-50g', dpi=float('nan'))
    with pytest.raises(ValueError, match='cannot write in directory'):
        cch.plot_scaling(str(tmp_path / 'no' / 's.png'), [1, 2],
                         device='a100', network='eth-50g')
    with pytest.raises(TypeError, match='path must be the name of a file'):
        cch.plot_scaling(None, [1, 2], device='a100', network='eth-50g')
    # an option no mode plotted takes, as scaling_report refuses it
    with pytest.raises(ValueError) as e:
        cch.plot_scaling(str(tmp_path / 's.png'), [1, 2], device='a100',
                         network='eth-50g', bucket_bytes=10)
    assert str(e.value) == ("bucket_bytes goes with overlaps holding 'ddp' "
                            "or 'horovod', not ['none']")
    with pytest.raises(ValueError) as e:
        cch.plot_scaling(str(tmp_path / 's.png'), [1, 2], device='a100',
                         network='eth-50g', overlaps=['none', 'ddp'],
                         cycle_time=1e-3)
    assert str(e.value) == ("cycle_time goes with overlaps holding "
                            "'horovod', not ['none', 'ddp']")
    # overlap (one curve) beside overlaps (the curves) would be ignored
    with pytest.raises(ValueError) as e:
        cch.plot_scaling(str(tmp_path / 's.png'), [1, 2], device='a100',
                         network='eth-50g', overlaps=['none'],
                         overlap='bogus')
    assert str(e.value) == (
        "plot_scaling takes overlaps (the curves) or overlap (one curve), "
        "not both: got overlaps=['none'] and overlap='bogus'")
    with pytest.raises(TypeError, match='^title must be a str or None'):
        cch.plot_scaling(str(tmp_path / 's.png'), [1, 2], device='a100',
                         network='eth-50g', title=object())
    assert list(tmp_path.iterdir()) == []


# PostScript has no transparency.

@pytest.mark.parametrize('ext', ['eps', 'ps', 'EPS'])
def test_postscript_plots_log_nothing_and_are_opaque(ext, tmp_path, caplog):
    # matplotlib logs 'The PostScript backend does not support
    # transparency' for a translucent colour: the command line's stderr
    # then holds more than notes and warnings on a successful run
    path = str(tmp_path / ('f.' + ext))
    with caplog.at_level('DEBUG', logger='matplotlib'):
        figures = _draw_four(path)
    assert [r.getMessage() for r in caplog.records
            if r.levelno >= 30] == []
    assert open(path, 'rb').read().startswith(MAGIC[ext.lower()])
    for name, fig in figures.items():
        for artist in fig.findobj():
            colours = []
            if hasattr(artist, 'get_facecolor'):
                colours += list(np.atleast_2d(artist.get_facecolor()))
            if hasattr(artist, 'get_edgecolor'):
                colours += list(np.atleast_2d(artist.get_edgecolor()))
            if hasattr(artist, 'get_color'):
                colours.append(to_rgba(artist.get_color()))
            alpha = artist.get_alpha()
            assert alpha is None or alpha in (0, 1), (name, artist)
            assert all(c[3] in (0, 1) for c in colours), (name, artist)
    # the forward phase's shading, tab:blue (31, 119, 180) at 0.12, as
    # it shows on white: 0.12 * c / 255 + 0.88
    ax, = figures['memory'].axes
    forward = ax.patches[0]
    assert forward.get_facecolor() == pytest.approx(
        (0.12 * 31 / 255 + 0.88, 0.12 * 119 / 255 + 0.88,
         0.12 * 180 / 255 + 0.88, 1.0), abs=1e-12)


def test_png_keeps_its_translucent_colours(four_figures):
    # the opaque colours are PostScript's alone
    ax, = four_figures['memory'].axes
    assert ax.patches[0].get_alpha() == 0.12
    assert to_rgba(ax.patches[0].get_facecolor()) == to_rgba('tab:blue',
                                                             0.12)
