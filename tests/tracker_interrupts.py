"""Interrupts planted in the live-memory tracker, at a given line."""

from chainer_computational_cost.collect import live_memory


#: The tracker's functions that change its counts.
UPDATES = ('drain', 'take', 'freed', '_count')


def interrupt_at(k, counter):
    """A trace function (for ``sys.settrace``) that raises
    KeyboardInterrupt at the ``k``-th line run in the live-memory
    tracker's functions that add bytes and take them off; ``counter[0]``
    counts those lines."""
    tracker_file = live_memory.__file__

    def local(frame, event, arg):
        if event == 'line':
            counter[0] += 1
            if counter[0] == k:
                raise KeyboardInterrupt
        return local

    def tracer(frame, event, arg):
        code = frame.f_code
        if code.co_filename == tracker_file and code.co_name in UPDATES:
            return local(frame, event, arg)
        return None
    return tracer
