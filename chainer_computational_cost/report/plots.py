"""Pictures of a cost report, written as PNG, SVG, PDF, EPS or PS files
(the format the file name's extension names).

matplotlib is an optional dependency (the ``[plot]`` extra): it is imported
only when a picture is drawn, and figures are drawn on their own Agg canvas,
so the user's pyplot state and backend are left alone.  PostScript (EPS,
PS) has no transparency: there the translucent parts of a figure are drawn
in the opaque colours they show on white (the figure returned has them).
"""

import collections
import io
import itertools
import math
import os

from chainer_computational_cost.analysis import roofline
from chainer_computational_cost.core import checks
from chainer_computational_cost.core import devices
from chainer_computational_cost.core.columns import PREFIXES
from chainer_computational_cost.report import rendering


def _matplotlib():
    """The Figure class and the Agg canvas, or an ImportError saying how to
    install matplotlib."""
    try:
        # The package first: a cached submodule would be found even when
        # the package itself cannot be imported.
        import matplotlib  # NOQA: F401
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise ImportError(
            'plotting needs matplotlib: pip install matplotlib, or install '
            "chainer_computational_cost with the [plot] extra "
            "(pip install 'chainer_computational_cost[plot]')") from e
    return Figure, FigureCanvasAgg


def require_matplotlib():
    """Raise an ImportError saying how to install matplotlib unless it can
    be imported (a command line checks this before a long forward pass).
    """
    _matplotlib()


def _new_figure(size):
    Figure, FigureCanvasAgg = _matplotlib()
    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig


#: The formats a plot can be written in, each named by its file extension
#: (any case); a file object gets PNG.
FORMATS = ('png', 'svg', 'pdf', 'eps', 'ps')


def plot_format(path):
    """The format of :data:`FORMATS` the file name ``path`` ends with
    ('png' for a file object), or a ValueError naming the ones allowed."""
    if not isinstance(path, (str, os.PathLike)):
        return 'png'
    ext = os.path.splitext(os.fspath(path))[1][1:].lower()
    if ext not in FORMATS:
        raise ValueError('cannot tell the plot format of {!r}: the file name '
                         'must end with {}'.format(
                             os.fspath(path), ', '.join(
                                 '.' + f for f in FORMATS)))
    return ext


def check_path(path):
    """The format ``path`` is written in (see :func:`plot_format`), checked
    before anything is drawn: ``path`` is the name of a file (a str or an
    ``os.PathLike``) whose directory exists, or a binary file object (PNG);
    an ArgumentTypeError (a TypeError) or a ValueError naming ``path``
    otherwise."""
    if not isinstance(path, (str, os.PathLike)) and callable(
            getattr(path, 'write', None)):
        if isinstance(path, io.TextIOBase):  # a PNG is bytes
            raise checks.ArgumentTypeError(
                'path must be the name of a file (a str or os.PathLike) or '
                'a binary file object, got a text file {!r}'.format(path))
        if getattr(path, 'closed', False):
            raise ValueError('path {!r} is a closed file'.format(path))
        return 'png'
    checks.path('path', path, 'the name of a file (a str or os.PathLike) '
                'or a binary file object')
    ext = plot_format(path)
    problem = checks.file_place_problem(os.fspath(path), 'plot.png')
    if problem is not None:
        raise ValueError('path ' + problem)
    return ext


#: The lowest and the highest resolution of a plot, in dots per inch.
#: Below 10 the smallest labels (7 points) are about a pixel high, where
#: matplotlib cannot set a font's size; above 1200 (a printer's
#: resolution) a raster image of a plot takes gigabytes (7000 dpi took
#: 16 GB and minutes).
DPI_RANGE = (10, 1200)


def check_dpi(dpi):
    """``dpi`` as a float from ``DPI_RANGE[0]`` to ``DPI_RANGE[1]``: an
    ArgumentTypeError (a TypeError) for a value that is no number (a bool
    too), a ValueError for one out of that range (NaN and infinities
    too)."""
    allowed = 'a number from {} to {} (dots per inch)'.format(*DPI_RANGE)
    value = checks.number('dpi', dpi, DPI_RANGE[0], allowed=allowed)
    if value > DPI_RANGE[1]:
        raise ValueError('dpi must be {}, got {!r}'.format(allowed, dpi))
    return value


def check_title(title):
    """``title`` if it is a str or None (a plot's own title): anything else
    is an ArgumentTypeError, rather than its ``str()`` drawn."""
    return checks.instance('title', title, (str, type(None)),
                           'a str or None')


#: The formats with no transparency (matplotlib draws a translucent
#: colour there at full strength, with a message on stderr).
OPAQUE_FORMATS = ('eps', 'ps')


def _on_white(rgba):
    """The opaque colour ``rgba`` shows on a white background."""
    alpha = rgba[3]
    return tuple(alpha * c + 1 - alpha for c in rgba[:3]) + (1.0,)


def _opaque(fig):
    """Replace every translucent colour of ``fig`` (the grid, shaded
    spans, a legend's frame) with the opaque one it shows on white, for a
    format with no transparency: drawn at full strength instead, a
    shaded span would hide the curve it is behind.  A colour that is
    fully transparent ('none') stays so: every format leaves it out."""
    from matplotlib import colors
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    def fix(colour, alpha):
        if isinstance(colour, str) and colour.lower() == 'none':
            return colour
        rgba = colors.to_rgba(colour, alpha)
        return _on_white(rgba) if 0 < rgba[3] < 1 else rgba

    for artist in fig.findobj():
        alpha = artist.get_alpha()
        if isinstance(artist, Line2D):
            line = (fix(artist.get_color(), alpha),
                    fix(artist.get_markerfacecolor(), alpha),
                    fix(artist.get_markeredgecolor(), alpha))
            artist.set_alpha(None)
            artist.set_color(line[0])
            artist.set_markerfacecolor(line[1])
            artist.set_markeredgecolor(line[2])
        elif isinstance(artist, (Patch, Collection)):
            # their colours already hold the artist's alpha
            if isinstance(artist, Patch):
                face = [artist.get_facecolor()]
                edge = [artist.get_edgecolor()]
            else:
                face = artist.get_facecolor()
                edge = artist.get_edgecolor()
            face = [fix(tuple(c), None) for c in face]
            edge = [fix(tuple(c), None) for c in edge]
            artist.set_alpha(None)
            if isinstance(artist, Patch):
                face, edge = face[0], edge[0]
            artist.set_facecolor(face)
            artist.set_edgecolor(edge)


def _save(fig, path, ext, dpi):
    """Write ``fig`` to ``path`` in the format ``ext`` (checked by
    :func:`check_path`) at ``dpi``: a file named in one step (see
    :func:`checks.output_file`), never left cut short."""
    if ext in OPAQUE_FORMATS:
        _opaque(fig)
    if not isinstance(path, (str, os.PathLike)):  # a file object
        fig.savefig(path, format=ext, dpi=dpi)
        return
    with checks.output_file(path, 'a plot', binary=True) as f:
        fig.savefig(f, format=ext, dpi=dpi)


def _si(value, unit, base=1000):
    """'10.6 TFLOP/s'-style text for ``value`` in ``unit``."""
    prefix = rendering.prefix_for(value, base)
    scaled = value / base ** PREFIXES.index(prefix)
    infix = 'i' if prefix and base == 1024 else ''
    return '{:.4g} {}{}{}'.format(scaled, prefix, infix, unit)


def _colours(n):
    # tab10 tells ten types apart best; tab20 beyond that, cycling after
    # twenty (a legend entry still names each).
    import matplotlib
    cmap = matplotlib.colormaps['tab10' if n <= 10 else 'tab20']
    return [cmap(i % cmap.N) for i in range(n)]


_MARKERS = ('o', 's', '^', 'D', 'v', 'p', '<', 'h', '>', '8')


def plot_roofline(layers, path, device=None, peak_flops=None,
                  bandwidth=None, title=None, dpi=100):
    """Write a roofline plot of ``layers`` to the file ``path``, in the
    format its extension names (:data:`FORMATS`).

    Log-log axes: arithmetic intensity (FLOP/byte) against FLOP/s.  Each
    peak the layers use draws its roof (the bandwidth slope up to the ridge
    point, marked, then the flat peak).  Each layer is a point coloured by
    type: at its attainable FLOP/s (on its roof), or, when every layer has
    a measured ``time``, at its achieved ``flops / time``.  Layers with no
    FLOPs or no traffic have no place on log axes and are counted in a
    note instead.

    Args:
        layers: layer dicts as for
            :func:`chainer_computational_cost.analysis.roofline.roofline_report`.
        path: a file name in a directory that exists, or a binary file
            object (PNG).
        device, peak_flops, bandwidth: the device, as for
            :func:`~chainer_computational_cost.analysis.roofline.roofline_report`.
        title (str): the title; default 'Roofline: <device>'.
        dpi: the resolution of raster images, dots per inch: a number
            of :data:`DPI_RANGE` (checked before drawing, as ``path``).

    Returns:
        the matplotlib Figure (already written).
    """
    # before drawing: a wrong name is a quick mistake
    ext, dpi = check_path(path), check_dpi(dpi)
    check_title(title)
    rows = roofline.roofline_report(layers, device, peak_flops, bandwidth)
    dev = devices.resolve_device(device, peak_flops, bandwidth)
    rows = [r for k, r in rows.items() if k != 'total']
    if not rows:
        raise ValueError('no layers to plot')
    fig = _new_figure((9, 5))
    ax = fig.add_subplot(1, 1, 1)
    ax.set_xscale('log')
    ax.set_yscale('log')

    shown = [r for r in rows if r['flops'] and r['intensity']]
    measured = bool(shown) and all(
        r.get('time') is not None and r['time'] > 0 for r in shown)

    def y_of(r):
        return r['flops'] / (r['time'] if measured else r['t_roofline'])

    # The x range covers every point and every ridge, with a margin.
    roofs = collections.OrderedDict()
    for r in rows:
        roofs.setdefault(r['peak_used'], r['peak_flops'])
    bw = dev.bandwidth
    ridges = [peak / bw for peak in roofs.values()]
    xs = [r['intensity'] for r in shown] + ridges
    x_lo, x_hi = min(xs) / 4, max(xs) * 4

    for i, (label, peak) in enumerate(
            sorted(roofs.items(), key=lambda kv: kv[1])):
        ridge = peak / bw
        ax.plot([x_lo, ridge, x_hi], [bw * x_lo, peak, peak], color='black',
                linewidth=1.5, linestyle=('-', '--', ':', '-.')[i % 4],
                label='{}: {} roof'.format(label, _si(peak, 'FLOP/s')))
        ax.plot([ridge], [peak], marker='o', markersize=7,
                markerfacecolor='white', markeredgecolor='black', zorder=4)
        ax.annotate('ridge {:.3g} FLOP/B'.format(ridge), (ridge, peak),
                    textcoords='offset points', xytext=(6, -14),
                    fontsize=8)

    # Layers of different types often share a point (a ReLU and a batch
    # normalisation on the same array): hollow markers of different shapes
    # stay visible on top of each other.
    types = list(collections.OrderedDict((r['type'], None) for r in shown))
    for i, (colour, t) in enumerate(zip(_colours(len(types)), types)):
        pts = [r for r in shown if r['type'] == t]
        ax.scatter([r['intensity'] for r in pts], [y_of(r) for r in pts],
                   marker=_MARKERS[i % len(_MARKERS)], s=36,
                   facecolors='none', edgecolors=[colour], linewidths=1.3,
                   label=t, zorder=3)

    hidden = len(rows) - len(shown)
    if hidden:
        ax.text(0.99, 0.02, '{} layer(s) without FLOPs or traffic not '
                'shown'.format(hidden), transform=ax.transAxes,
                ha='right', va='bottom', fontsize=8)
    ax.set_xlim(x_lo, x_hi)
    # Room above the highest roof for its ridge label.
    ys = [y_of(r) for r in shown] + [bw * x_lo]
    ax.set_ylim(min(ys) / 2, max(roofs.values()) * 4)
    ax.set_xlabel('Arithmetic intensity (FLOP/byte)')
    ax.set_ylabel('Achieved FLOP/s (measured time)' if measured
                  else 'Attainable FLOP/s')
    if title is None:
        name = dev.title or 'given peak'
        title = 'Roofline: {} ({})'.format(name, _si(bw, 'B/s'))
    ax.set_title(title)
    ax.grid(True, which='major', linewidth=0.5, alpha=0.5)
    ax.legend(loc='upper left', bbox_to_anchor=(1.01, 1.0), fontsize=8,
              frameon=False)
    fig.tight_layout()
    _save(fig, path, ext, dpi)
    return fig


def _summary_entries(summary_rows):
    rows = list(summary_rows.values()) if isinstance(
        summary_rows, dict) else list(summary_rows)
    # summary_report always ends with its total row; a function type named
    # 'total' also has type 'total', so only the last row is dropped.
    if rows and rows[-1].get('name') == 'total':
        rows = rows[:-1]
    return rows


def plot_summary(summary_rows, path, title=None, dpi=100):
    """Write two bar panels to the file ``path`` (in the format its
    extension names, :data:`FORMATS`): FLOPs per layer type and memory
    traffic (read and write stacked) per layer type.

    Args:
        summary_rows: the rows of a summary report (its values, or the
            ordered dict itself), the total row last.
        path: a file name in a directory that exists, or a binary file
            object (PNG).
        title (str): an overall title (none by default).
        dpi: the resolution of raster images, dots per inch: a number
            of :data:`DPI_RANGE` (checked before drawing, as ``path``).

    Returns:
        the matplotlib Figure (already written).
    """
    ext, dpi = check_path(path), check_dpi(dpi)
    check_title(title)
    rows = _summary_entries(summary_rows)
    if not rows:
        raise ValueError('no layer types to plot')
    labels = [('{}/{}'.format(r['phase'], r['type']) if r.get('phase')
               else r['type']) for r in rows]
    flops = [r['flops'] for r in rows]
    reads = [r['mread'] for r in rows]
    writes = [r['mwrite'] for r in rows]
    # One prefix per panel, that of its largest bar, as in 'autoaligned'.
    fp = rendering.prefix_for(max(flops), 1000)
    bp = rendering.prefix_for(max(r + w for r, w in zip(reads, writes)), 1024)
    fs = 1000 ** PREFIXES.index(fp)
    bs = 1024 ** PREFIXES.index(bp)
    # Shares from the exact figures (a projection's ints may be past a
    # float's range, their ratios never are); a bar past it is refused.
    total_f = sum(flops) or 1
    total_b = sum(reads) + sum(writes) or 1
    f_share = [100 * f / total_f for f in flops]
    b_share = [100 * (r + w) / total_b for r, w in zip(reads, writes)]
    f_bars = _bars(labels, 'FLOPs', flops, fs, 'FLOPs')
    r_bars = _bars(labels, 'bytes read', reads, bs, 'iB')
    w_bars = _bars(labels, 'bytes written', writes, bs, 'iB')
    b_bars = _bars(labels, 'bytes read and written',
                   [r + w for r, w in zip(reads, writes)], bs, 'iB')

    fig = _new_figure((10, 1.6 + 0.32 * len(rows)))
    ax1, ax2 = fig.subplots(1, 2, sharey=True)
    pos = list(range(len(rows)))
    ax1.barh(pos, f_bars, color='tab:blue')
    ax1.set_yticks(pos)
    ax1.set_yticklabels(labels, fontsize=8)
    ax1.invert_yaxis()  # first-called type on top
    ax1.set_title('FLOPs per layer type')
    ax1.set_xlabel(fp + 'FLOPs')
    ax2.barh(pos, r_bars, color='tab:orange', label='read')
    ax2.barh(pos, w_bars, left=r_bars, color='tab:green', label='write')
    ax2.set_title('Memory traffic per layer type')
    ax2.set_xlabel((bp + 'iB') if bp else 'B')
    ax2.legend(loc='lower right', fontsize=8)
    for i in pos:
        ax1.annotate('{:.1f}%'.format(f_share[i]), (f_bars[i], i),
                     textcoords='offset points', xytext=(3, -3), fontsize=7)
        ax2.annotate('{:.1f}%'.format(b_share[i]), (b_bars[i], i),
                     textcoords='offset points', xytext=(3, -3), fontsize=7)
    for ax in (ax1, ax2):
        ax.margins(x=0.15)
        ax.grid(True, axis='x', linewidth=0.5, alpha=0.5)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    _save(fig, path, ext, dpi)
    return fig


def _bars(labels, what, values, scale, unit):
    """``values`` over ``scale`` as floats a plot can draw (with room for
    its margins), or a ValueError naming the layer type and ``what`` is
    past a float's range even in the largest prefix of ``unit`` (an
    exact int of a custom calculator's, or of a projection)."""
    bars = []
    for label, value in zip(labels, values):
        try:
            bar = value / scale
            drawable = math.isfinite(bar * 4)  # the axis' margins too
        except OverflowError:  # an int past a float's range
            drawable = False
        if not drawable:
            raise ValueError(
                "plot_summary: the {} of layer type {!r} are beyond a "
                "float's range even in units of {}: they cannot be drawn; "
                "give a smaller batch size, or show the summary report "
                "with unit=None (the exact figures)".format(
                    what, label, PREFIXES[-1] + unit))
        bars.append(bar)
    return bars


def plot_memory(series, figures, path, title=None, dpi=100):
    """Write the bytes alive after each call to the file ``path`` (in the
    format its extension names, as for :func:`plot_roofline`): a
    step line over the calls, each call's scratch as a spike above it (the
    memory during the call), the calls of each phase shaded (forward
    blue, backward orange), the peak (during a call) and the peak between
    calls marked and labelled.

    Args:
        series: ``(live bytes, scratch bytes, phase)`` per call, in call
            order.
        figures: the memory report (``peak``, ``peak_layer``,
            ``peak_between_calls``, ...).
        path: a file name in a directory that exists, or a binary file
            object (PNG).
        title (str): the title; default 'Live memory'.
        dpi: the resolution of raster images, dots per inch: a number
            of :data:`DPI_RANGE` (checked before drawing, as ``path``).

    Returns:
        the matplotlib Figure (already written).
    """
    ext, dpi = check_path(path), check_dpi(dpi)  # as the other plots
    check_title(title)
    series = [(live, scratch or 0, phase) for live, scratch, phase in series
              if live is not None]
    if not series:
        raise ValueError('no calls to plot')
    during = [live + scratch for live, scratch, _ in series]
    largest = max(during)
    prefix = rendering.prefix_for(largest, 1024)
    scale = 1024 ** PREFIXES.index(prefix)
    fig = _new_figure((9, 4))
    ax = fig.add_subplot(1, 1, 1)
    xs = list(range(1, len(series) + 1))
    ys = [live / scale for live, _, _ in series]
    # Contiguous runs of calls of one phase, shaded.
    colours = {'forward': 'tab:blue', 'backward': 'tab:orange',
               'update': 'tab:green'}
    start = 0
    labelled = set()
    for phase, run in itertools.groupby(series, key=lambda s: s[2]):
        end = start + len(list(run))
        ax.axvspan(start + 0.5, end + 0.5, alpha=0.12, linewidth=0,
                   color=colours.get(phase, 'tab:gray'),
                   label=None if phase in labelled else phase)
        labelled.add(phase)
        start = end
    spikes = [(x, y, scratch / scale) for x, y, (_, scratch, _) in
              zip(xs, ys, series) if scratch]
    if spikes:
        ax.vlines([x for x, _, _ in spikes], [y for _, y, _ in spikes],
                  [y + s for _, y, s in spikes], color='tab:purple',
                  linewidth=1.2, label='scratch (during the call)')
    ax.step(xs, ys, where='mid', color='black', linewidth=1.2,
            label='live (after the call)')
    at = during.index(largest)
    between = max(ys)
    at_between = ys.index(between)
    marks = [(xs[at], largest / scale, 'peak {} {} {}'.format(
        _si(largest, 'B', 1024), 'during' if series[at][1] else 'after',
        figures.get('peak_layer')), 'tab:red')]
    if series[at][1]:  # else the same point
        marks.append((xs[at_between], between, 'between calls {} after {}'
                      .format(_si(between * scale, 'B', 1024),
                              figures.get('peak_between_calls_layer')),
                      'tab:gray'))
    # The labels go in a band above every curve (the y axis reaches 1.4
    # times the peak), one row each, with an arrow to their point: a label
    # beside its point could land under the curve around it.
    for row, (x, y, text, colour) in enumerate(marks):
        ax.plot([x], [y], marker='o', markersize=6, color=colour)
        ax.annotate(text, (x, y), xytext=(x, 0.95 - 0.09 * row),
                    textcoords=ax.get_xaxis_transform(), fontsize=8,
                    va='top', ha='right' if x > len(series) / 2 else 'left',
                    arrowprops=dict(arrowstyle='-', color=colour,
                                    linewidth=0.8))
    ax.set_xlim(0.5, len(series) + 0.5)
    ax.set_ylim(0, largest / scale * 1.4 or 1)
    ax.set_xlabel('Function call')
    ax.set_ylabel('Live ' + ((prefix + 'iB') if prefix else 'B'))
    ax.set_title(title or 'Live memory')
    ax.grid(True, axis='y', linewidth=0.5, alpha=0.5)
    # Below the axes: inside, it would cover part of the curve or a label.
    ax.legend(loc='upper center', bbox_to_anchor=(0.5, -0.15), ncol=5,
              fontsize=8, frameon=False)
    fig.tight_layout()
    _save(fig, path, ext, dpi)
    return fig


#: The largest worker count or efficiency a scaling plot places (the
#: margins of a logarithmic axis reaching much further overflow a float).
AXIS_MAX = 10 ** 200

#: What ``published`` of :func:`plot_scaling` allows, in words.
PUBLISHED = ('None or a list of (workers, efficiency[, label]) points: '
             'workers an int from 1 to 1e200, efficiency a finite number '
             '> 0 up to 1e200, label a str or None')


def check_axis_workers(workers):
    """``workers`` (checked worker counts) if a scaling plot can place
    them: each at most :data:`AXIS_MAX`; a one-line ValueError
    otherwise."""
    huge = [n for n in workers if n > AXIS_MAX]
    if huge:
        raise ValueError('workers of a scaling plot must be at most 1e200 '
                         '(a logarithmic axis of more overflows a float), '
                         'got an int of {} digits'.format(len(str(huge[0]))))
    return workers


def check_published(published):
    """``[(workers, efficiency, label)]`` of ``published`` (None, or a
    list of pairs or triples), checked before anything is drawn: a
    one-line error naming ``published`` otherwise."""
    if published is None:
        return []
    checks.instance('published', published, (list, tuple), PUBLISHED)
    points = []
    for i, p in enumerate(published):
        if not isinstance(p, (list, tuple)) or len(p) not in (2, 3):
            error = ValueError if isinstance(p, (list, tuple)) \
                else checks.ArgumentTypeError
            raise error('published points must be (workers, efficiency'
                        '[, label]), got {!r}'.format(p))
        name = 'published[{}]'.format(i)
        n = checks.positive_int(name + ' workers', p[0],
                                'an int from 1 to 1e200')
        if n > AXIS_MAX:
            raise ValueError('{} workers must be an int from 1 to 1e200, '
                             'got an int of {} digits'.format(
                                 name, len(str(n))))
        eff = checks.positive(name + ' efficiency', p[1],
                              'a finite number > 0 up to 1e200', AXIS_MAX)
        label = checks.instance(name + ' label', p[2], (str, type(None)),
                                'a str or None') if len(p) > 2 else None
        points.append((n, eff, label))
    return points


def scaling_title(model=None, device=None, network=None):
    """The title of a scaling plot naming what it is of, from the parts
    given (None: left out): ``'resnet50 on v100, ib-edr: scaling'``,
    ``'Scaling on v100, ib-edr'`` without a model, ``'Scaling'`` with
    nothing."""
    where = ', '.join(part for part in (device, network) if part)
    if model:
        return '{}{}: scaling'.format(model, ' on ' + where if where else '')
    return 'Scaling on ' + where if where else 'Scaling'


def plot_scaling(curves, path, published=None, title=None, dpi=100):
    """Write the efficiency of a data-parallel step against the number of
    workers to the file ``path`` (in the format its extension names, as
    for :func:`plot_roofline`): one line per curve, the workers on a
    logarithmic axis, and published runs as black points, labelled.

    Args:
        curves: an ordered mapping label -> scaling report (N -> row with
            ``efficiency``), e.g. one per overlap mode.
        path: a file name in a directory that exists, or a binary file
            object (PNG).
        published: a list of ``(workers, efficiency[, label])`` points
            measured in published runs (workers an int >= 1, efficiency a
            finite number > 0, label a str or None), or None.
        title (str): the title; default 'Scaling' (see
            :func:`scaling_title` for one naming the model, the device and
            the network).
        dpi: the resolution of raster images, dots per inch: a number
            of :data:`DPI_RANGE` (checked before drawing, as ``path``).

    Returns:
        the matplotlib Figure (already written).
    """
    ext, dpi = check_path(path), check_dpi(dpi)  # as the other plots
    check_title(title)
    points = check_published(published)
    curves = collections.OrderedDict(
        (label, rows) for label, rows in curves.items() if rows)
    if not curves:
        raise ValueError('no scaling report to plot')
    fig = _new_figure((7, 4.5))
    ax = fig.add_subplot(1, 1, 1)
    colours = _colours(len(curves))
    for colour, (label, rows) in zip(colours, curves.items()):
        ns = sorted(rows)
        ax.plot(ns, [rows[n]['efficiency'] for n in ns], marker='o',
                markersize=3, color=colour, label=label)
    for n, eff, label in points:
        ax.plot([n], [eff], marker='s', markersize=6, color='black',
                linestyle='none')
        if label:
            ax.annotate(label, (n, eff), textcoords='offset points',
                        xytext=(-6, -12), fontsize=7, ha='right')
    if points:  # one legend entry for the published points
        ax.plot([], [], marker='s', color='black', linestyle='none',
                label='published')
    xs = [n for rows in curves.values() for n in rows] + [
        n for n, _, _ in points]
    if max(xs) > 1:
        ax.set_xscale('log', base=2)
    # (a published run may scale above 1: superlinear, as a batch that
    # fits a cache better)
    ax.set_ylim(0, 1.05 * max([1.0] + [eff for _, eff, _ in points]))
    ax.set_xlabel('Workers')
    ax.set_ylabel('Efficiency (step at 1 worker / step at N)')
    ax.set_title(title or 'Scaling')
    ax.grid(True, linewidth=0.5, alpha=0.5)
    ax.legend(loc='lower left', fontsize=8)
    fig.tight_layout()
    _save(fig, path, ext, dpi)
    return fig
