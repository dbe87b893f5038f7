"""ChainerMN support: the bytes a communicator hands to MPI, as records.

Inside a ``with ComputationalCostHook(comm=communicator)`` block the
communicator's mpi4py communicator (``comm.mpi_comm``) is replaced by a
:class:`MPIRecorder`: every attribute reads through to the real one, and
the calls that move data (``Allreduce``, ``Bcast``, ``Allgatherv``, ...,
and mpi4py's pickle-based ``bcast``, ``gather``, ``send``, ...) are made
unchanged, then reported to the hook with the bytes this rank handed to MPI.
Counting at this level is exact by construction: what ChainerMN converts
before the call (float16 gradients all-reduced as float32, metadata sent
as pickles) is what gets counted.  Nothing is called on MPI that the user's
code did not call; the real communicator is put back on exit.

The bytes of one call (``comm_bytes``):

* buffer calls: the first buffer argument that is given (the send buffer;
  for an in-place all-reduce, the receive buffer): its ``counts x
  datatype size`` when the buffer specification has counts, else the
  buffer's ``nbytes``; for ``Recv``, the message received (read from its
  status: the caller's, or one the recorder passes), not the buffer,
  which may be larger;
* pickle-based calls: the length of the pickle of the object sent (for a
  list scattered or sent all-to-all, the sum over its items), and for a
  receive the pickle of the object received.
"""

import collections
import pickle
import sys

from chainer_computational_cost import memory
from chainer_computational_cost import network as net
from chainer_computational_cost import plots
from chainer_computational_cost import report
from chainer_computational_cost import roofline
from chainer_computational_cost.aggregation import total_report
from chainer_computational_cost.rendering import check_columns

#: The record's type of each buffer call, by method name.
BUFFER_CALLS = {
    'Allreduce': 'MPI_Allreduce', 'Bcast': 'MPI_Bcast',
    'Allgather': 'MPI_Allgather', 'Allgatherv': 'MPI_Allgather',
    'Gather': 'MPI_Gather', 'Gatherv': 'MPI_Gather',
    'Scatter': 'MPI_Scatter', 'Scatterv': 'MPI_Scatter',
    'Alltoall': 'MPI_Alltoall', 'Alltoallv': 'MPI_Alltoall',
    'Reduce': 'MPI_Reduce', 'Send': 'MPI_Send', 'Ssend': 'MPI_Send',
    'Recv': 'MPI_Recv',
}

#: The record's type of each pickle-based call, by method name.
OBJECT_CALLS = {
    'allreduce': 'MPI_allreduce_obj', 'bcast': 'MPI_bcast_obj',
    'allgather': 'MPI_allgather_obj', 'gather': 'MPI_gather_obj',
    'scatter': 'MPI_scatter_obj', 'alltoall': 'MPI_alltoall_obj',
    'reduce': 'MPI_reduce_obj', 'send': 'MPI_send_obj',
    'ssend': 'MPI_send_obj', 'recv': 'MPI_recv_obj',
}

#: The communicator methods that all-reduce gradients (their calls belong
#: to the backward phase of a training step).
GRAD_CALLS = frozenset(['multi_node_mean_grad', 'allreduce_grad'])


def _pickled_size(obj):
    # mpi4py pickles with the highest protocol by default.
    return len(pickle.dumps(obj, pickle.HIGHEST_PROTOCOL))


def _mpi():
    """mpi4py.MPI if it is imported (a communicator imported it): this
    module never imports it, as importing it initialises MPI."""
    return sys.modules.get('mpi4py.MPI')


def _is_datatype(x):
    return isinstance(x, getattr(_mpi(), 'Datatype', ()))  # () matches none


def _in_place(spec):
    mpi = _mpi()
    return mpi is not None and spec is mpi.IN_PLACE


def buffer_bytes(spec):
    """Bytes of an mpi4py buffer specification: ``buf``, ``[buf, type]``,
    ``[buf, count, type]``, ``[buf, (counts, displs), type]`` or
    ``[buf, counts, displs, type]``; 0 for None or ``MPI.IN_PLACE``."""
    if spec is None or _in_place(spec):
        return 0
    if isinstance(spec, (list, tuple)) and spec:
        # Counts (after the buffer) count only with a datatype (last).
        dtype = spec[-1]
        counts = spec[1] if len(spec) > 2 else None
        if counts is not None and _is_datatype(dtype):
            if isinstance(counts, tuple) and len(counts) == 2 and \
                    not isinstance(counts[0], int):
                counts = counts[0]  # (counts, displacements)
            total = counts if isinstance(counts, int) else sum(counts)
            return int(total) * dtype.Get_size()
        return _nbytes(spec[0])
    return _nbytes(spec)


def _nbytes(buf):
    n = getattr(buf, 'nbytes', None)
    if isinstance(n, int):
        return n
    return memoryview(buf).nbytes


def _first_buffer(args):
    """The bytes of the first buffer argument that is given."""
    for spec in args[:2]:
        if spec is None or _in_place(spec):
            continue
        return buffer_bytes(spec)
    return 0


class MPIRecorder(object):
    """Stands in for an mpi4py communicator: reads through to ``real`` and
    reports each data-moving call, after it returned, to ``record(type,
    comm_bytes, caller frame, error)`` (``error``: the exception raised
    while sizing its buffers, else None)."""

    def __init__(self, real, record):
        self.__dict__['_real'] = real
        self.__dict__['_record'] = record

    def __getattr__(self, name):
        value = getattr(self._real, name)
        kind = BUFFER_CALLS.get(name) or OBJECT_CALLS.get(name)
        if kind is None or not callable(value):
            return value
        return _Call(self, value, name, kind)

    def __setattr__(self, name, value):
        setattr(self._real, name, value)


class _Call(object):
    __slots__ = ('owner', 'method', 'name', 'kind')

    def __init__(self, owner, method, name, kind):
        self.owner = owner
        self.method = method
        self.name = name
        self.kind = kind

    def __call__(self, *args, **kwargs):
        name = self.name
        status = None
        if name == 'Recv':
            args, kwargs, status = _with_status(args, kwargs)
        result = self.method(*args, **kwargs)  # errors propagate unchanged
        error = None
        try:
            if status is not None:
                # The message, not the buffer (which may be larger).
                nbytes = status.Get_count(_mpi().BYTE)
            elif name in BUFFER_CALLS:
                nbytes = _first_buffer(args or (
                    kwargs.get('sendbuf', kwargs.get('buf')),
                    kwargs.get('recvbuf')))
            else:
                nbytes = _object_bytes(name, args, kwargs, result,
                                       self.owner._real)
        except Exception as e:  # a buffer form not understood
            nbytes, error = 0, e
        try:
            self.owner._record(self.kind, nbytes, sys._getframe(1), error)
        except Exception:
            pass  # never raise in the user's code: the call was made
        return result


def _with_status(args, kwargs):
    """The arguments of ``Recv(buf, source, tag, status)`` with a status
    to read the message's size from: the caller's, else a new one."""
    mpi = _mpi()
    if mpi is None:
        return args, kwargs, None
    status = args[3] if len(args) > 3 else kwargs.get('status')
    if status is None:
        status = mpi.Status()
        if len(args) > 3:
            args = args[:3] + (status,) + args[4:]
        else:
            kwargs = dict(kwargs, status=status)
    return args, kwargs, status


def _object_bytes(name, args, kwargs, result, real):
    obj = args[0] if args else kwargs.get('obj', kwargs.get('sendobj'))
    if name == 'recv':
        return _pickled_size(result)
    root = kwargs.get('root', args[1] if len(args) > 1 else 0)
    if name == 'bcast':
        return _pickled_size(obj if real.rank == root else result)
    if name == 'scatter':
        if real.rank == root:
            return sum(_pickled_size(o) for o in obj)
        return _pickled_size(result)
    if name == 'alltoall':
        return sum(_pickled_size(o) for o in obj)
    return _pickled_size(obj)


def check_comm(comm):
    """``comm`` if it is a ChainerMN communicator with an mpi4py
    communicator; a one-line TypeError otherwise."""
    if comm is None:
        return None
    try:
        import chainermn
        base = chainermn.CommunicatorBase
    except Exception as e:  # no chainermn or no mpi4py
        raise TypeError('comm= needs ChainerMN with mpi4py (pip install '
                        'chainer_computational_cost[mpi]): {}'.format(e))
    if not isinstance(comm, base) or not hasattr(comm, 'mpi_comm'):
        raise TypeError('comm must be a ChainerMN communicator (from '
                        'chainermn.create_communicator), got {!r}'.format(
                            comm))
    return comm


def caller_name(frame, comm):
    """The name of the outermost method of ``comm`` among the callers of
    an MPI call (``multi_node_mean_grad``, ``bcast_obj``, ...): the
    ChainerMN operation that made it; the caller's name if none is."""
    name = frame.f_code.co_name
    while frame is not None:
        if frame.f_locals.get('self') is comm:
            name = frame.f_code.co_name
        frame = frame.f_back
    return name


def is_grad_call(frame):
    """Whether a gradient all-reduce method is on the stack."""
    while frame is not None:
        if frame.f_code.co_name in GRAD_CALLS:
            return True
        frame = frame.f_back
    return False


def gather(hook, root=0):
    """Every rank's records of ``hook`` (a ComputationalCostHook given
    ``comm=``), collected on ``root`` over the communicator with one
    pickle-based MPI gather: a :class:`GatheredReport` on the root, None
    on the other ranks.  Every rank must call it (it is a collective),
    after its ``with`` block."""
    comm = hook._comm
    if comm is None:
        raise ValueError('gather needs a hook made with comm= (a ChainerMN '
                         'communicator)')
    if hook._comm_saved:
        raise ValueError('gather must be called after the with block, not '
                         'inside it')
    parts = comm.mpi_comm.gather(rank_part(comm.rank, hook), root=root)
    if parts is None:
        return None
    return GatheredReport(parts)


def rank_part(rank, source):
    """What :func:`gather` sends of one rank: its rank and a frozen copy
    of ``source``'s reports (a
    :class:`~chainer_computational_cost.report.ReportSnapshot`, which
    pickles); a list of them makes a
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
      takes longest on the device; both add that ``rank``.
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
            'link_info': info}
        self._per_rank = [{'rank': r, 'layers': b['layers']}
                          for r, b in built.items()]

    def __reduce__(self):
        return (GatheredReport, (self._parts,))

    def _records(self):
        return self._gathered['layers']

    def _cached(self, name):
        built_now = name not in self._gathered
        value = super(GatheredReport, self)._cached(name)
        if name == 'summary' and built_now:
            # Per type, the rank with the most of its work: FLOPs, then
            # bytes moved, then bytes sent.
            work = {}
            for x in self._gathered['layers']:
                w = work.setdefault(x['type'], {}).setdefault(
                    x['rank'], [0, 0, 0])
                w[0] += x['flops']
                w[1] += x['mread'] + x['mwrite']
                w[2] += x.get('comm_bytes', 0)
            for key, entry in value.items():
                ranks = work.get(entry.get('type'))
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
        :func:`chainer_computational_cost.memory.memory_report`), the
        ``peak_layer`` named ``rank<r>/<name>``; needs every rank's hook
        made with ``memory=True``."""
        out = collections.OrderedDict()
        for r, snap in self._snapshots.items():
            figures = memory.memory_report(snap)
            if figures['peak_layer'] is not None:
                figures['peak_layer'] = 'rank{}/{}'.format(
                    r, figures['peak_layer'])
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
        columns = check_columns(columns or memory.MEMORY_COLUMNS,
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
