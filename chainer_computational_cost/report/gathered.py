"""The reports of every ChainerMN rank in one: :func:`gather` sends each
rank's frozen reports to the root, which reads them as one
:class:`GatheredReport` (layers named ``rank<r>/<layer>``, per-rank
totals, the slowest rank per layer type)."""
import collections
import pickle
import sys
import warnings

from chainer_computational_cost.analysis import calibration as calib
from chainer_computational_cost.analysis import memory
from chainer_computational_cost.analysis import network as net
from chainer_computational_cost.analysis import roofline
from chainer_computational_cost.analysis.aggregation import total_report
from chainer_computational_cost.collect import mpi_recorder
from chainer_computational_cost.core import checks
from chainer_computational_cost.core.columns import TIME_BY
from chainer_computational_cost.core.records import error_text
from chainer_computational_cost.core.records import ReportWarning
from chainer_computational_cost.report import cost_report as report
from chainer_computational_cost.report import plots
from chainer_computational_cost.report.rendering import check_columns


def gather(hook, root=0):
    """Every rank's records of ``hook`` (a ComputationalCostHook given
    ``comm=``), collected on ``root`` over the communicator with one
    MPI gather of pickles: a :class:`GatheredReport` on the root, None
    on the other ranks.  Every rank must call it (it is a collective),
    after its ``with`` block.

    Each rank first checks and pickles its own part, then the ranks agree
    on whether every one of them can send: when one cannot (called inside
    its block, no ``comm=``, a record that does not pickle, a wrong
    ``root``), every rank raises instead of waiting for it (the failing
    rank its own error, the others a RuntimeError naming it); when the
    ranks give different roots, every rank raises a ValueError naming
    them."""
    comm = hook._comm
    mpi_comm = _agreement_comm(comm)
    payload, mine = None, None
    try:
        payload = _own_part(hook, root)
    except Exception as e:  # any: the other ranks must hear of it
        mine = e
    flags = _flags(mpi_comm, mine, root)
    failed = [(r, m) for r, (m, _) in enumerate(flags) if m is not None]
    roots = [given for _, given in flags]
    if not failed and len(set(roots)) > 1:
        # each rank would wait in a gather to another root
        raise ValueError('gather needs the same root on every rank; the '
                         'roots given, by rank: {}'.format(roots))
    if mine is not None:
        kind = type(mine) if type(mine) in (ValueError, TypeError) \
            else RuntimeError
        raise kind('gather failed on rank {}: {}'.format(
            _rank(mpi_comm), mine)) from mine
    if failed:
        rank, message = failed[0]
        raise RuntimeError('gather failed on rank {}: {}; no rank gathered'
                           .format(rank, message))
    parts = comm.mpi_comm.gather(payload, root=root)
    if parts is None:
        return None
    return GatheredReport([pickle.loads(p) for p in parts])


def _agreement_comm(comm):
    """The mpi4py communicator the ranks agree on before gathering: the
    hook's real one (not a hook's stand-in: the agreement is not the
    user's traffic); without ``comm=``, MPI.COMM_WORLD when MPI runs with
    more than one rank (the communicator ChainerMN makes by default), so
    that the other ranks learn of the mistake instead of waiting; else
    None."""
    if comm is not None:
        return mpi_recorder.real_comm(comm.mpi_comm)
    mpi = sys.modules.get('mpi4py.MPI')
    if mpi is None or not mpi.Is_initialized() or mpi.Is_finalized() or \
            mpi.COMM_WORLD.Get_size() < 2:
        return None
    return mpi.COMM_WORLD


def _rank(mpi_comm):
    return 0 if mpi_comm is None else mpi_comm.Get_rank()


def _flags(mpi_comm, error, root):
    """Every rank's error message (None: it can send) and ``root``, by
    rank (the root as an int when the rank can send)."""
    mine = (None, int(root)) if error is None else (str(error), None)
    if mpi_comm is None:
        return [mine]
    return mpi_comm.allgather(mine)


def _own_part(hook, root):
    """This rank's part, pickled; a ValueError or TypeError saying why it
    cannot be sent."""
    comm = hook._comm
    if comm is None:
        raise ValueError('gather needs a hook made with comm= (a ChainerMN '
                         'communicator)')
    if hook._comm_saved:
        raise ValueError('gather must be called after the with block, not '
                         'inside it')
    if not checks.is_int(root) or not 0 <= root < comm.size:
        raise ValueError('root must be a rank of the communicator, an '
                         'integer in [0, {}); got {!r}'.format(comm.size,
                                                               root))
    part = rank_part(comm.rank, hook)
    try:
        return pickle.dumps(part, pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # a calculator's params holding a lambda, ...
        raise TypeError('its records cannot be pickled (a custom '
                        "calculator's params must be plain values: "
                        'numbers, strings, lists, dicts): {}'.format(
                            error_text(e)))


def rank_part(rank, source):
    """What :func:`gather` sends of one rank: its rank and a frozen copy
    of ``source``'s reports (a
    :class:`~chainer_computational_cost.report.cost_report.ReportSnapshot`,
    which pickles); a list of them makes a
    :class:`GatheredReport`."""
    return {'rank': rank, 'snapshot': source.snapshot()}


def _graph(layers):
    return [(x['type'], x.get('phase'), tuple(
        tuple(s) if s is not None else None
        for s in x['input_shapes'])) for x in layers]


def _merged_link_info(infos):
    """Per link path: the calls summed over the ranks, the parameters of
    the rank that holds the most (each rank has its own copy)."""
    out = {}
    for info in infos:
        for path, entry in info.items():
            old = out.get(path)
            if old is None:
                out[path] = tuple(entry)
            else:
                out[path] = (old[0] + entry[0],) + tuple(
                    max(a, b) for a, b in zip(old[1:], entry[1:]))
    return out


class GatheredReport(report.CostReport):
    """Every rank's records, on the root, with the whole reading API.

    * The layer, summary, phase, link and roofline reports (and their
      ``show_*`` and plots) hold every rank's calls: each layer is named
      ``rank<r>/<name>`` and carries its ``rank``; totals sum over the
      ranks.  The summary names, per type, its ``slowest_rank``: the rank
      with the most of that type's work (FLOPs, then bytes moved, then
      bytes sent).  The link report sums each link's calls over the ranks
      and gives it the parameters of one rank.
    * What is one worker's by nature reads the rank that bounds the run:
      ``memory_report`` (and ``show_memory_report``, ``plot_memory``) the
      rank with the highest peak, ``scaling_report`` the rank whose step
      takes longest on the device, ``time_report`` (and
      ``show_time_report``) the rank whose predicted step is longest;
      each adds that ``rank``.
    * :meth:`rank` gives one rank's own reports; :meth:`rank_report`,
      :meth:`memory_report_by_rank` and :meth:`slowest_rank` compare them.

    Attributes:
        ranks (list): the ranks, in order.
        differing_ranks (list): the ranks whose sequence of calls
            (type, phase, input shapes) differs from the first rank's;
            empty when every rank ran the same graph.
    """

    def __init__(self, parts):
        parts = sorted(parts, key=lambda p: p['rank'])
        self._parts = parts
        self._snapshots = collections.OrderedDict(
            (p['rank'], p['snapshot']) for p in parts)
        self.ranks = list(self._snapshots)
        # The FLOP convention the reports' headers state: the ranks'.
        conventions = collections.OrderedDict(
            (r, (getattr(s, 'fma_1flop', None),
                 getattr(s, 'flop_convention', None)))
            for r, s in self._snapshots.items())
        self.fma_1flop, self.flop_convention = conventions[self.ranks[0]]
        if len(set(conventions.values())) > 1:
            warnings.warn(
                'gather: the ranks count FLOPs differently (rank: '
                '(fma_1flop, flop_convention) {}): their sums mix the '
                'conventions, and the headers state rank {}\'s'.format(
                    dict(conventions), self.ranks[0]),
                ReportWarning, stacklevel=3)
        built = collections.OrderedDict(
            (r, s._built()) for r, s in self._snapshots.items())
        first = _graph(built[self.ranks[0]]['layers'])
        self.differing_ranks = [r for r in self.ranks
                                if _graph(built[r]['layers']) != first]
        layers = []
        ignored = collections.OrderedDict()
        for r, b in built.items():
            prefix = 'rank{}/'.format(r)
            for x in b['layers']:
                layers.append(dict(x, name=prefix + x['name'], rank=r))
            for name, x in b['ignored'].items():
                ignored[prefix + name] = dict(x, rank=r)
        info = _merged_link_info(b['link_info'] for b in built.values())
        self._gathered = {
            'layers': layers, 'ignored': ignored,
            'n_params': built[self.ranks[0]]['n_params'],
            'link_info': info,
            'comm': any(s.has_comm() for s in self._snapshots.values())}
        self._per_rank = [{'rank': r, 'layers': b['layers']}
                          for r, b in built.items()]

    def __reduce__(self):
        return (GatheredReport, (self._parts,))

    def records(self):
        return self._gathered['layers']

    def _cached(self, name):
        built_now = name not in self._gathered
        value = super(GatheredReport, self)._cached(name)
        if name in ('summary', 'summary_phase') and built_now:
            # Per type (and phase, by phase), the rank with the most of
            # its work: FLOPs, then bytes moved, then bytes sent.
            by_phase = name == 'summary_phase'
            work = {}
            for x in self._gathered['layers']:
                group = (x.get('phase', 'forward'), x['type']) if by_phase \
                    else x['type']
                w = work.setdefault(group, {}).setdefault(
                    x['rank'], [0, 0, 0])
                w[0] += x['flops']
                w[1] += x['mread'] + x['mwrite']
                w[2] += x.get('comm_bytes', 0)
            for key, entry in value.items():
                ranks = work.get((entry.get('phase'), entry.get('type'))
                                 if by_phase else entry.get('type'))
                if key != 'total' and ranks:
                    entry['slowest_rank'] = max(
                        sorted(ranks), key=lambda r: ranks[r])
        return value

    def _built(self):
        return self._gathered

    def rank(self, r):
        """Rank ``r``'s own reports (a ReportSnapshot: the whole reading
        API, its layers named as on that rank)."""
        if r not in self._snapshots:
            raise ValueError('no rank {!r}: the ranks are {}'.format(
                r, self.ranks))
        return self._snapshots[r]

    def snapshot(self):
        """A frozen copy (a gathered report is one already: it pickles)."""
        return GatheredReport(self._parts)

    def rank_report(self):
        """Ordered dict rank -> that rank's totals: ``n_layers``,
        ``flops``, ``mread``, ``mwrite``, ``mrw``, ``comm_bytes``."""
        out = collections.OrderedDict()
        for p in self._per_rank:
            total = total_report(p['layers'])
            total['name'] = 'rank{}'.format(p['rank'])
            total['comm_bytes'] = sum(x.get('comm_bytes', 0)
                                      for x in p['layers'])
            out[p['rank']] = total
        return out

    def slowest_rank(self, device=None, network=None, peak_flops=None,
                     bandwidth=None):
        """``(rank, seconds)`` of the rank whose records take longest
        on ``device`` (roofline) plus ``network`` (t_network, if
        given); the first such rank on a tie."""
        best = None
        for p in self._per_rank:
            rows = roofline.roofline_report(p['layers'], device,
                                            peak_flops, bandwidth)
            t = rows['total']['t_roofline']
            if network is not None:
                net.add_t_network(rows, p['layers'], network)
                t += rows['total']['t_network']
            if best is None or t > best[1]:
                best = (p['rank'], t)
        return best

    # One worker's figures: the rank that bounds the run.

    def memory_report_by_rank(self):
        """Ordered dict rank -> that rank's memory figures (see
        :func:`chainer_computational_cost.analysis.memory.memory_report`), the
        calls it names (``peak_layer``, ``peak_between_calls_layer``)
        named ``rank<r>/<name>``, as the layer report names them; needs
        every rank's hook made with ``memory=True``."""
        out = collections.OrderedDict()
        for r, snap in self._snapshots.items():
            figures = memory.memory_report(snap)
            for key in ('peak_layer', 'peak_between_calls_layer'):
                if figures[key] is not None:
                    figures[key] = 'rank{}/{}'.format(r, figures[key])
            out[r] = figures
        return out

    @property
    def memory_report(self):
        """The memory figures of the rank with the highest peak (the
        first one on a tie), with its ``rank``: what each worker needs."""
        by_rank = self.memory_report_by_rank()
        r = max(by_rank, key=lambda r: by_rank[r]['peak'])
        figures = by_rank[r]
        figures['rank'] = r
        return figures

    def show_memory_report(self, ost=None, mode='csv', unit='autoaligned',
                           n_digits=3, columns=None):
        """Write :attr:`memory_report` (the rank with the highest peak) to
        ``ost`` (see :meth:`.CostReport.show_memory_report`)."""
        columns = check_columns(columns, memory.MEMORY_COLUMNS,
                                memory.MEMORY_COLUMNS)
        figures = self.memory_report
        self._show(ost, lambda: memory.memory_rows(figures), columns, mode,
                   unit, n_digits, 'ms', 'Memory')

    def plot_memory(self, path, **kwargs):
        """Plot the live bytes of the rank with the highest peak (see
        :meth:`.CostReport.plot_memory`)."""
        figures = self.memory_report
        return plots.plot_memory(
            memory.live_series(self._snapshots[figures['rank']]), figures,
            path, **kwargs)

    def scaling_report(self, workers, device=None, network=None,
                       peak_flops=None, bandwidth=None, batch_size=None,
                       grad_bytes=None, **options):
        """The scaling report (see :meth:`.CostReport.scaling_report`,
        whose ``step_time``, ``overlap``, ... ``options`` are) of the rank
        whose step takes longest on the device (the first one on a tie):
        data-parallel workers wait for the slowest; each row gets that
        ``rank``."""
        workers = net.check_workers(workers)
        times = collections.OrderedDict()
        for r, snap in self._snapshots.items():
            rows = roofline.roofline_report(snap._built()['layers'], device,
                                            peak_flops, bandwidth)
            times[r] = rows['total']['t_roofline']
        r = max(times, key=lambda r: times[r])
        rows = self._snapshots[r].scaling_report(
            workers, device, network, peak_flops, bandwidth, batch_size,
            grad_bytes, **options)
        for row in rows.values():
            row['rank'] = r
        return rows

    def _scaling_columns(self):
        return net.SCALING_COLUMNS + ('rank',)

    def _time_rows(self, calibration, by, device, peak_flops, bandwidth):
        """The time report (see :meth:`.CostReport.time_report`) of the
        rank whose predicted step is longest (the first one on a tie):
        the ranks run their steps side by side, and the step is the
        slowest one's; its calls named ``rank<r>/<name>``, as the layer
        report names them, and each row with that ``rank``."""
        # (a file read once, not once a rank; by checked first, as there)
        checks.one_of('by', by, TIME_BY, fold_case=True)
        calibration = calib.load_calibration(calibration)
        best = None
        for r, snap in self._snapshots.items():
            by, rows = snap._time_rows(calibration, by, device, peak_flops,
                                       bandwidth)
            if best is None or rows['total']['t_predicted'] > \
                    best[1]['total']['t_predicted']:
                best = r, rows
        r, rows = best
        out = collections.OrderedDict()
        for key, row in rows.items():
            if by == 'layer' and key != 'total':
                key = row['name'] = 'rank{}/{}'.format(r, key)
            row['rank'] = r
            out[key] = row
        return by, out

    def _time_columns(self):
        return ('rank',)
