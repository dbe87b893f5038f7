"""Cost calculators for ``chainermn.functions`` (ChainerMN's communicating
function nodes), registered only when ChainerMN imports (the targets are
dotted names: a name that cannot be imported registers nothing).

These nodes move data between processes: 0 FLOPs; the arrays handed to
the communicator are read and the arrays it returns are written, each in
its own dtype (an empty delegate variable counts 0).  The bytes that go
over the network are not the node's: a hook given ``comm=`` records every
MPI call the node makes, forward and backward, with its ``comm_bytes``
(exact, float16 sent as float32 included), right before the node's own
record; the node itself has ``comm_bytes`` 0, so that nothing is counted
twice.  Their backward applies no function node: only those MPI records
show it.
"""

from chainer_computational_cost.cost_calculators import elements
from chainer_computational_cost.cost_calculators import prod
from chainer_computational_cost.cost_calculators import reads_out_shapes

#: No family of a calibration's fits: its calls are predicted by none
#: (flagged as uncovered in a time report).
TIME_FAMILY = None

_CC = 'chainermn.functions.collective_communication.'
_P2P = 'chainermn.functions.point_to_point_communication.'
_PSEUDO = 'chainermn.functions.pseudo_connect.PseudoConnect'


#: Elements written, from the sizes of the inputs and the communicator's
#: size, for a direct call (no out_shapes): the root's view; what a rank
#: only receives cannot be known from its inputs and counts 0.
_RECEIVED = {
    'AllGather': lambda sizes, n: n * sum(sizes),
    'AllToAll': lambda sizes, n: sum(sizes),
    'Bcast': lambda sizes, n: sum(sizes),
    'Gather': lambda sizes, n: n * sum(sizes),
    'Scatter': lambda sizes, n: sizes[0] if sizes else 0,
}


def _moved(func, in_data, out_shapes, params):
    """0 FLOPs, every input read, every output written."""
    mread = sum(elements(x.size, x) for x in in_data if x is not None)
    n_ranks = int(func.comm.size)
    if out_shapes is None:
        received = _RECEIVED.get(type(func).__name__)
        mwrite = 0 if received is None else received(
            [x.size for x in in_data if x is not None], n_ranks)
    else:
        mwrite = sum(prod(s) for s in out_shapes if s is not None)
    params['n_ranks'] = n_ranks
    return 0, mread, mwrite, params


#: Per class: what the node sends and receives, and its params.
_COLLECTIVE = {
    _CC + 'AllGather': {
        'forward': r'MPI_Allgather: $(N-1)(a + S/B)$',
        'backward': r'MPI_Alltoall: $(N-1)a + \frac{N-1}{N} S/B$',
        'text': 'Every rank sends its x and receives the x of every rank.',
        'params': '`n_ranks` (the communicator\'s size)'},
    _CC + 'AllToAll': {
        'forward': r'MPI_Alltoall: $(N-1)a + \frac{N-1}{N} S/B$',
        'backward': r'MPI_Alltoall: $(N-1)a + \frac{N-1}{N} S/B$',
        'text': 'Every rank sends its i-th input to rank i and receives '
                'one array from each rank.',
        'params': '`n_ranks` (the communicator\'s size)'},
    _CC + 'Bcast': {
        'forward': r'MPI_Bcast: $\lceil \log_2 N \rceil (a + S/B)$',
        'backward': r'MPI_Gather: $\lceil \log_2 N \rceil a + (N-1) S/B$',
        'text': 'The root sends x, every rank receives it; a rank other '
                'than the root has no input.',
        'params': '`n_ranks` (the communicator\'s size), `root`'},
    _CC + 'Gather': {
        'forward': r'MPI_Gather: $\lceil \log_2 N \rceil a + (N-1) S/B$',
        'backward': r'MPI_Scatter: $(N-1)a + \frac{N-1}{N} S/B$',
        'text': 'Every rank sends x, the root receives them all; a rank '
                'other than the root writes an empty delegate variable.',
        'params': '`n_ranks` (the communicator\'s size), `root`'},
    _CC + 'Scatter': {
        'forward': r'MPI_Scatter: $(N-1)a + \frac{N-1}{N} S/B$',
        'backward': r'MPI_Gather: $\lceil \log_2 N \rceil a + (N-1) S/B$',
        'text': 'The root sends its i-th input to rank i; a rank other '
                'than the root has an empty delegate input.',
        'params': '`n_ranks` (the communicator\'s size), `root`'},
    _P2P + 'Send': {
        'forward': r'MPI_Send: $a + S/B$',
        'backward': r'MPI_Recv: $a + S/B$',
        'text': 'Reads the arrays it sends to `peer_rank`; its output is '
                'an empty delegate variable.',
        'params': '`n_ranks`, `peer_rank`, `peer_tag`'},
    _P2P + 'Recv': {
        'forward': r'MPI_Recv: $a + S/B$',
        'backward': r'MPI_Send: $a + S/B$',
        'text': 'Writes the arrays it receives from `peer_rank`; its '
                'input, if any, is an empty delegate variable.',
        'params': '`n_ranks`, `peer_rank`, `peer_tag`'},
}


@reads_out_shapes
def calc_chainermn_communication(func: tuple(_COLLECTIVE), in_data,
                                 **kwargs):
    r"""<<name>>

    ChainerMN: <<text>> The arrays handed to the communicator are read,
    the ones it returns are written (called directly, without the output
    shapes: inferred from the inputs as the root sees them; 0 for what a
    rank only receives).

    Network: a hook given `comm=` records the MPI calls of the forward
    (<<forward>>) and of the backward (<<backward>>), each with the bytes
    $S$ this rank hands to MPI (`comm_bytes`); `roofline_report(network=)`
    gives them that `t_network` over $N$ ranks on a network of latency $a$
    and bandwidth $B$ (the metadata ChainerMN pickles first is costed the
    same way). This record's own `comm_bytes` is 0: nothing counts twice.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | $\sum \|x_i\|$ |
    | mwrite | $\sum \|y_i\|$ |
    | params | <<params>> |
    """
    params = {}
    if hasattr(func, 'root'):
        params['root'] = int(func.root)
    if hasattr(func, 'peer_rank'):
        params['peer_rank'] = int(func.peer_rank)
        params['peer_tag'] = func.peer_tag
    return _moved(func, in_data, kwargs.get('out_shapes'), params)


calc_chainermn_communication.family = _COLLECTIVE


def calc_pseudo_connect(func: _PSEUDO, in_data, **kwargs):
    r"""PseudoConnect

    Returns its inputs after the first (the delegate variable) unchanged:
    the same arrays, nothing computed, read or written.

    | Item | Value |
    |:-----|:------|
    | FLOPs | 0 |
    | mread | 0 |
    | mwrite | 0 |
    | params | none |
    """
    return 0, 0, 0, {}


def scratch_chainermn_communication(func: tuple(_COLLECTIVE), in_data,
                                    **kwargs):
    r"""float16's float32 copies, and the concatenated send buffer.

    From ChainerMN's code (not measured here: it needs MPI), on NumPy and
    CuPy alike, for the $S$ elements this rank sends and the $R$ it
    receives (the output shapes; without them, as the calculator infers
    them): the communicator's receive buffer is the outputs' base, so it
    is not scratch, except for float16, which ChainerMN sends as float32:
    the float32 copies of the inputs ($4S$ bytes) and the float32 receive
    buffer ($4R$) are cast to the float16 outputs. `MPI_Alltoallv` and
    the root's scatter of several arrays send one concatenated copy of
    the inputs ($S$ elements, float32 for float16). The MPI library's own
    buffers are not counted.
    """
    xs = [x for x in in_data if x is not None and x.size]
    if not xs:
        return 0
    s = xs[0].dtype.itemsize
    sent = sum(x.size for x in xs)
    out_shapes = kwargs.get('out_shapes')
    if out_shapes is None:
        received = _RECEIVED.get(type(func).__name__, lambda *a: 0)(
            [x.size for x in xs], int(func.comm.size))
    else:
        received = sum(prod(shape) for shape in out_shapes
                       if shape is not None)
    half = s == 2
    name = type(func).__name__
    concat = (4 if half else s) * sent \
        if name == 'AllToAll' or (name == 'Scatter' and len(xs) > 1) else 0
    if not half:
        return concat
    if name == 'Recv':
        return 0
    cast, buffer = 4 * sent, (0 if name == 'Send' else 4 * received)
    out = 0 if name == 'Send' else 2 * received
    return max(cast + concat + buffer, cast + buffer + out) - out
