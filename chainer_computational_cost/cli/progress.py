"""The command line's progress while the model runs, on stderr:

* on a terminal, :class:`Progress`: one status line rewritten in place,
  erased before any other output and at the end;
* elsewhere (a log file, CI), :class:`LogProgress`: a line every
  :attr:`LogProgress.INTERVAL` seconds once the command has run that long,
  and a line as each run ends from then on; a quick command prints
  nothing.

Part of the command line (``__main__``).
"""

import contextlib
import sys
import time

import chainer

from chainer_computational_cost.cost_calculators import calculator_for


#: The clock of the progress (a test may give its own).
_clock = time.monotonic


def _write(stream, text):
    try:
        stream.write(text)
        stream.flush()
    except (OSError, ValueError):
        pass  # a closed or full stderr must not stop the run


class _Counting(chainer.FunctionHook):
    """A hook counting the Chainer calls of the run labelled
    :attr:`label`, for a progress on ``stream``; and of them, in
    :attr:`costable`, the calls of a function that has a cost calculator
    (the others' classes in :attr:`unsupported`)."""

    def __init__(self, stream):
        self.stream = stream
        self.calls = 0
        self.costable = 0
        self.unsupported = set()
        self.label = ''
        self._known = {}  # function class -> whether it has a calculator

    def _count(self, function):
        self.calls += 1
        if type(function) is chainer.function.FunctionAdapter:
            function = function.function
        cls = type(function)
        known = self._known.get(cls)
        if known is None:
            known = self._known[cls] = calculator_for(cls) is not None
        if known:
            self.costable += 1
        else:
            self.unsupported.add('{}.{}'.format(cls.__module__,
                                                cls.__name__))


class Progress(_Counting):
    """A status line on stderr while the model runs, when stderr is a
    terminal: which run it is and how many Chainer calls so far.

    The run's label is shown as the run starts (a command that takes
    seconds says what it does from its first second), then rewritten in
    place (``\r``) with the count at most every :attr:`INTERVAL`
    seconds, and erased before anything else is written to ``sys.stdout``
    or ``sys.stderr`` during the run (the model's own prints, warnings),
    so it never ends up inside other output; it is erased at the end.
    """

    name = 'ChainerComputationalCostProgress'
    #: Seconds between two updates of the line.
    INTERVAL = 0.25

    def __init__(self, stream):
        super(Progress, self).__init__(stream)
        self._shown = 0  # characters of the status line now on screen
        self._next = 0.0

    def forward_postprocess(self, function, in_data):
        """Count the call; redraw the line when it is time to."""
        self._count(function)
        now = _clock()
        if now >= self._next:
            self._next = now + self.INTERVAL
            self._draw('{}: {} calls so far'.format(self.label, self.calls))

    def _draw(self, text):
        # Padded over a longer line left from before.
        _write(self.stream, '\r' + text.ljust(self._shown))
        self._shown = max(self._shown, len(text))

    def clear(self):
        """Erase the status line, if one is shown."""
        if self._shown:
            _write(self.stream, '\r' + ' ' * self._shown + '\r')
            self._shown = 0

    @contextlib.contextmanager
    def running(self, label):
        """Show progress under ``label`` while the block runs: the hook
        entered and the standard streams wrapped to erase the line before
        they write."""
        self.label = label
        self.calls = 0
        self.unsupported.clear()
        self._next = _clock() + self.INTERVAL
        saved = sys.stdout, sys.stderr
        sys.stdout = _ClearingStream(sys.stdout, self)
        sys.stderr = _ClearingStream(sys.stderr, self)
        self._draw(label)
        try:
            with self:
                yield
        finally:
            sys.stdout, sys.stderr = saved
            self.clear()

    def building(self, label):
        """Show ``label`` while the block (the model's construction)
        runs."""
        return self.running(label)


class _ClearingStream(object):
    """A text stream that erases a :class:`Progress` line before each
    write to the stream it wraps."""

    def __init__(self, stream, progress):
        self._stream = stream
        self._progress = progress

    def write(self, text):
        """Erase the status line, then write ``text``."""
        self._progress.clear()
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


class LogProgress(_Counting):
    """Progress lines on a stderr that is not a terminal (a log file, CI),
    which cannot rewrite a line: once the command has run for
    :attr:`INTERVAL` seconds, a line every :attr:`INTERVAL` seconds
    (``batch 32: 12045 calls so far, 20 s``), and from then on a line as
    each run ends (``batch 32: done, 14000 calls in 23.4 s``).  A command
    quicker than that prints nothing."""

    name = 'ChainerComputationalCostLogProgress'
    #: Seconds between two lines (counted across the runs of a command).
    INTERVAL = 10.0

    def __init__(self, stream):
        super(LogProgress, self).__init__(stream)
        self._start = 0.0
        self._next = None  # set when the first run starts
        self._logging = False  # a line was written: runs' ends are too

    def forward_postprocess(self, function, in_data):
        """Count the call; write a line when it is time to."""
        self._count(function)
        now = _clock()
        if now >= self._next:
            self._next = now + self.INTERVAL
            self._logging = True
            _write(self.stream, '{}: {} calls so far, {:.0f} s\n'.format(
                self.label, self.calls, now - self._start))

    @contextlib.contextmanager
    def running(self, label):
        """Count the calls of the block under ``label``; a line at its end
        once lines are being written."""
        self.label = label
        self.calls = 0
        self.unsupported.clear()
        self._start = _clock()
        if self._next is None:
            self._next = self._start + self.INTERVAL
        with self:
            yield
        if self._logging:
            _write(self.stream, '{}: done, {} calls in {:.1f} s\n'.format(
                self.label, self.calls, _clock() - self._start))

    def building(self, label):
        """Nothing: a log gets lines once the command has run for a
        while, and the construction of a model is not a run."""
        return contextlib.nullcontext()


def make_progress(stream=None):
    """The progress for ``stream`` (default stderr): a :class:`Progress`
    on a terminal, else a :class:`LogProgress`."""
    stream = sys.stderr if stream is None else stream
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return Progress(stream) if tty else LogProgress(stream)


def watched(progress, label, call):
    """``call()`` run under ``progress`` (None: without any)."""
    if progress is None:
        return call()
    with progress.running(label):
        return call()


def progress_bar(stream):
    """A progress function drawing ``[####......]  40% text``: in place
    on a terminal, else a line each tenth."""
    tty = getattr(stream, 'isatty', lambda: False)()
    shown = set()  # the tenths with a line

    def progress(fraction, text):
        filled = int(round(30 * fraction))
        line = '[{}{}] {:3.0f}% {}'.format('#' * filled, '.' * (30 - filled),
                                           100 * fraction, text)
        if tty:
            stream.write('\r' + '{:70.70}'.format(line) +
                         ('\n' if fraction >= 1 else ''))
        elif int(10 * fraction) not in shown:
            shown.add(int(10 * fraction))
            stream.write(line + '\n')
        stream.flush()
    return progress
