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

* buffer calls, blocking or not (``Isend``, ``Iallreduce``, ...): the
  first buffer argument that is given, by position or keyword (the send
  buffer, of a send-receive too; for an in-place call or a rank that
  receives a scatter, the receive buffer): its ``counts x`` the size of
  its datatype (a ``Datatype``, a typecode, else the buffer's item) when
  the buffer specification has counts (Python or NumPy integers), else
  the buffer's ``nbytes``; for ``Recv``, the message received (read from
  its status: the caller's, or one the recorder passes), not the buffer,
  which may be larger (for ``Irecv`` the buffer: the message is known
  only when it completes);
* pickle-based calls: the length of the pickle of the object sent (for a
  list scattered or sent all-to-all, the sum over its items), and for a
  receive the pickle of the object received (0 for ``irecv``, whose
  object comes when its request completes).
"""

import operator
import pickle
import sys


#: The record's type of each buffer call, by method name, which is its
#: operation's.  A non-blocking call (``Isend``) is its blocking one's
#: (``MPI_Send``), as the same bytes cross the network whenever it waits.
BUFFER_CALLS = {
    'Allreduce': 'MPI_Allreduce', 'Iallreduce': 'MPI_Allreduce',
    'Bcast': 'MPI_Bcast', 'Ibcast': 'MPI_Bcast',
    'Allgather': 'MPI_Allgather', 'Allgatherv': 'MPI_Allgather',
    'Iallgather': 'MPI_Allgather', 'Iallgatherv': 'MPI_Allgather',
    'Gather': 'MPI_Gather', 'Gatherv': 'MPI_Gather',
    'Igather': 'MPI_Gather', 'Igatherv': 'MPI_Gather',
    'Scatter': 'MPI_Scatter', 'Scatterv': 'MPI_Scatter',
    'Iscatter': 'MPI_Scatter', 'Iscatterv': 'MPI_Scatter',
    'Alltoall': 'MPI_Alltoall', 'Alltoallv': 'MPI_Alltoall',
    'Alltoallw': 'MPI_Alltoall', 'Ialltoall': 'MPI_Alltoall',
    'Ialltoallv': 'MPI_Alltoall', 'Ialltoallw': 'MPI_Alltoall',
    'Reduce': 'MPI_Reduce', 'Ireduce': 'MPI_Reduce',
    'Reduce_scatter': 'MPI_Reduce_scatter',
    'Reduce_scatter_block': 'MPI_Reduce_scatter',
    'Ireduce_scatter': 'MPI_Reduce_scatter',
    'Ireduce_scatter_block': 'MPI_Reduce_scatter',
    'Scan': 'MPI_Scan', 'Exscan': 'MPI_Scan', 'Iscan': 'MPI_Scan',
    'Iexscan': 'MPI_Scan',
    'Send': 'MPI_Send', 'Ssend': 'MPI_Send', 'Bsend': 'MPI_Send',
    'Rsend': 'MPI_Send', 'Isend': 'MPI_Send', 'Issend': 'MPI_Send',
    'Ibsend': 'MPI_Send', 'Irsend': 'MPI_Send',
    'Recv': 'MPI_Recv', 'Irecv': 'MPI_Recv',
    'Sendrecv': 'MPI_Sendrecv', 'Sendrecv_replace': 'MPI_Sendrecv',
    'Isendrecv': 'MPI_Sendrecv', 'Isendrecv_replace': 'MPI_Sendrecv',
}


#: The record's type of each pickle-based call, by method name.
OBJECT_CALLS = {
    'allreduce': 'MPI_allreduce_obj', 'bcast': 'MPI_bcast_obj',
    'allgather': 'MPI_allgather_obj', 'gather': 'MPI_gather_obj',
    'scatter': 'MPI_scatter_obj', 'alltoall': 'MPI_alltoall_obj',
    'reduce': 'MPI_reduce_obj', 'scan': 'MPI_scan_obj',
    'exscan': 'MPI_scan_obj', 'send': 'MPI_send_obj',
    'ssend': 'MPI_send_obj', 'bsend': 'MPI_send_obj',
    'isend': 'MPI_send_obj', 'issend': 'MPI_send_obj',
    'ibsend': 'MPI_send_obj', 'recv': 'MPI_recv_obj',
    'irecv': 'MPI_recv_obj', 'sendrecv': 'MPI_sendrecv_obj',
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
    ``[buf, count]``, ``[buf, count, type]``, ``[buf, (count,
    displacement), type]``, ``[buf, (counts, displs), type]`` or ``[buf,
    counts, displs, type]``, the type a ``Datatype`` or a typecode
    (``'f'``), else the buffer's own; 0 for None or ``MPI.IN_PLACE``."""
    if spec is None or _in_place(spec):
        return 0
    if not isinstance(spec, (list, tuple)) or not spec:
        return _nbytes(spec)
    buf, rest = spec[0], list(spec[1:])
    size = None
    if rest and (rest[-1] is None or _is_datatype(rest[-1]) or
                 isinstance(rest[-1], str)):
        datatype = rest.pop()  # (None: the buffer's)
        if datatype is not None:
            size = _type_size(datatype)
    counts = rest[0] if rest else None
    if counts is None:  # no counts: the whole buffer
        return _nbytes(buf)
    if isinstance(counts, tuple) and len(counts) == 2:
        # (count, displacement) or (counts, displacements)
        first = _integer(counts[0])
        counts = counts[0] if first is None else first
    total = _integer(counts)
    if total is None:
        total = sum(operator.index(c) for c in counts)
    return total * (_itemsize(buf) if size is None else size)


def _type_size(datatype):
    """Bytes of one element of an mpi4py ``Datatype`` or typecode."""
    if isinstance(datatype, str):
        datatype = _mpi()._typedict[datatype]
    return datatype.Get_size()


def _itemsize(buf):
    n = getattr(buf, 'itemsize', None)
    if isinstance(n, int):
        return n
    return memoryview(buf).itemsize


def _integer(x):
    """``x`` as an int if it is an integer of any kind (NumPy's too, as
    mpi4py takes them), else None."""
    try:
        return operator.index(x)
    except TypeError:
        return None


def _nbytes(buf):
    n = getattr(buf, 'nbytes', None)
    if isinstance(n, int):
        return n
    return memoryview(buf).nbytes


#: The buffer parameters of mpi4py's buffer calls, in order: one buffer
#: for these, the send buffer of a send-receive (the bytes it sends), a
#: send and a receive buffer for the others.
_ONE_BUFFER = frozenset([
    'Bcast', 'Ibcast', 'Send', 'Ssend', 'Bsend', 'Rsend', 'Isend',
    'Issend', 'Ibsend', 'Irsend', 'Recv', 'Irecv', 'Sendrecv_replace',
    'Isendrecv_replace'])
_SEND_RECV = frozenset(['Sendrecv', 'Isendrecv'])


def _buffer_args(name, args, kwargs):
    """The buffer arguments of a call ``name(*args, **kwargs)``, whether
    given by position or by keyword (``Allreduce(MPI.IN_PLACE,
    recvbuf=b)``)."""
    names = ('buf',) if name in _ONE_BUFFER else ('sendbuf',) \
        if name in _SEND_RECV else ('sendbuf', 'recvbuf')
    return tuple(args[i] if i < len(args) else kwargs.get(key)
                 for i, key in enumerate(names))


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
    comm_bytes, caller frame, error, readings)`` (``error``: the exception
    raised while sizing its buffers, else None; ``readings``: with a
    ``clock``, its two readings around the call, an exception it raised
    being the reading, else None)."""

    def __init__(self, real, record, clock=None):
        self.__dict__['_real'] = real
        self.__dict__['_record'] = record
        self.__dict__['_clock'] = clock

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
        clock = self.owner._clock
        if clock is None:
            result = self.method(*args, **kwargs)  # errors propagate
            readings = None
        else:
            start = _reading(clock)
            result = self.method(*args, **kwargs)
            readings = start, _reading(clock)
        error = None
        try:
            if status is not None:
                # The message, not the buffer (which may be larger).
                nbytes = status.Get_count(_mpi().BYTE)
            elif name in BUFFER_CALLS:
                nbytes = _first_buffer(_buffer_args(name, args, kwargs))
            else:
                nbytes = _object_bytes(name, args, kwargs, result,
                                       self.owner._real)
        except Exception as e:  # a buffer form not understood
            nbytes, error = 0, e
        try:
            self.owner._record(self.kind, nbytes, sys._getframe(1), error,
                               readings)
        except Exception:
            pass  # never raise in the user's code: the call was made
        return result


def _reading(clock):
    """What ``clock()`` reads: the exception it raised, if it did (the
    hook turns the readings into seconds, or into no time)."""
    try:
        return clock()
    except Exception as e:
        return e


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
    if name == 'irecv':
        return 0  # (its object is known only when its request completes)
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


def real_comm(mpi_comm):
    """The mpi4py communicator under ``mpi_comm``'s stand-ins (hooks
    entered on the same communicator wrap it one over another)."""
    while isinstance(mpi_comm, MPIRecorder):
        mpi_comm = mpi_comm.__dict__['_real']
    return mpi_comm


def unwrap(comm, recorder):
    """Take ``recorder`` out of ``comm.mpi_comm``'s chain of stand-ins,
    wherever it is (hooks may exit in any order): the one above it then
    reads through to what it wrapped; the real communicator is back once
    the last one is out.  A chain the user replaced is left alone."""
    inner = recorder.__dict__['_real']
    if comm.mpi_comm is recorder:
        comm.mpi_comm = inner
        return
    above = comm.mpi_comm
    while isinstance(above, MPIRecorder):
        below = above.__dict__['_real']
        if below is recorder:
            above.__dict__['_real'] = inner
            return
        above = below


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
