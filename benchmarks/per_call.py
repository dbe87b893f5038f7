"""The hook's time per function call, against an earlier revision of it.

    python benchmarks/per_call.py [--against a05ac45] [--rounds 100]
                                  [--calls 500] [--instructions]

Both hooks run in one process, the earlier one imported from ``git archive``
of the revision (under another package name), so that machine noise hits
both alike. Each round times a loop of F.relu calls on a 4x4 array bare,
under this tree's hook and under the earlier one, in an order that turns
with the rounds, in CPU time. The extra time per call of a hook is its
loop's time minus the bare loop's, per call; the minimum, 10th percentile
and median over the rounds are printed. On a shared machine the low
percentiles are the steady ones: a busy spell only ever adds time.

``--instructions`` also counts the machine instructions a call costs under
valgrind's callgrind (valgrind must be installed): counts, unlike times,
are the same from one run to the next, whatever else the machine does.
Only the calls themselves are counted (the loop runs inside
``functools.reduce``, a C function callgrind can switch counting on for),
with ``PYTHONHASHSEED=0``; the per-call count of the bare loop is printed,
then each hook's extra.
"""

import argparse
import functools
import importlib
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import warnings

# Before NumPy is imported.
import one_blas_thread  # NOQA

import chainer
import chainer.functions as F
import numpy as np


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = 'chainer_computational_cost'


def load_revision(revision, into):
    """This package as it was at ``revision``, extracted from git into the
    directory ``into`` and imported as ``ccc_<revision>``: its hook
    class."""
    name = 'ccc_' + re.sub(r'\W', '_', revision)
    try:
        archive = subprocess.run(
            ['git', 'archive', '--format=tar', revision, PACKAGE],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        err = getattr(e, 'stderr', b'') or b''
        sys.exit('error: cannot read revision {!r} from git: {}'.format(
            revision, err.decode().strip() or e))
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        # The 'data' filter (Python 3.8.17+, 3.11.4+) refuses odd members.
        tar.extractall(into, **({'filter': 'data'} if hasattr(
            tarfile, 'data_filter') else {}))
    os.rename(os.path.join(into, PACKAGE), os.path.join(into, name))
    # Its modules import each other by the package's name.
    for folder, _, files in os.walk(os.path.join(into, name)):
        for file in files:
            if file.endswith('.py'):
                path = os.path.join(folder, file)
                with open(path) as f:
                    text = f.read()
                with open(path, 'w') as f:
                    f.write(text.replace(PACKAGE, name))
    sys.path.insert(0, into)
    return importlib.import_module(name).ComputationalCostHook


def this_tree():
    """The hook class of this tree (not of an installed copy)."""
    sys.path.insert(0, ROOT)
    from chainer_computational_cost import ComputationalCostHook
    return ComputationalCostHook


def relu_loop(calls):
    """A loop of ``calls`` F.relu calls on a 4x4 array, run inside
    functools.reduce (the C function callgrind counts in)."""
    x = np.ones((4, 4), np.float32)

    def step(_, __):
        F.relu(x)

    def loop():
        with chainer.no_backprop_mode():
            functools.reduce(step, range(calls), None)
    return loop


def time_rounds(hooks, calls, rounds):
    """CPU seconds per call of the loop, bare (key None) and under each
    hook class, over ``rounds`` rounds: a dict of lists."""
    loop = relu_loop(calls)
    runs = [(None, loop)]
    for label, hook_class in hooks:
        def hooked(hook_class=hook_class):
            with hook_class():
                loop()
        runs.append((label, hooked))
    for _, run in runs:  # warm up caches and lazy imports
        run()
    times = {label: [] for label, _ in runs}
    for i in range(rounds):
        # Each round starts with another run, so that no run always
        # follows the same one.
        shift = i % len(runs)
        for label, run in runs[shift:] + runs[:shift]:
            start = time.process_time()
            run()
            times[label].append((time.process_time() - start) / calls)
    return times


def percentile(values, q):
    """The ``q``-th percentile (nearest rank) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def count_instructions(variant, revision, calls):
    """Instructions per call of the loop (bare, 'tree' or 'revision') as
    callgrind counts them inside functools.reduce."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'callgrind.out')
        cmd = ['valgrind', '--tool=callgrind', '--collect-atstart=no',
               '--toggle-collect=functools_reduce',
               '--callgrind-out-file=' + out, sys.executable,
               os.path.abspath(__file__), '--child', variant,
               '--against', revision, '--calls', str(calls)]
        env = dict(os.environ, PYTHONHASHSEED='0')
        try:
            subprocess.run(cmd, env=env, check=True,
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
        except FileNotFoundError:
            sys.exit('error: --instructions needs valgrind, which is not '
                     'installed')
        with open(out) as f:
            summary = re.search(r'^summary:\s+(\d+)', f.read(), re.M)
    return int(summary.group(1)) / calls


def child(variant, revision, calls):
    """One run of the loop for count_instructions (in a subprocess)."""
    loop = relu_loop(calls)
    x = np.ones((4, 4), np.float32)

    def warm_up():  # outside functools.reduce: not counted
        with chainer.no_backprop_mode():
            for _ in range(50):
                F.relu(x)

    with tempfile.TemporaryDirectory() as tmp:
        if variant == 'bare':
            warm_up()
            loop()
            return
        hook_class = (this_tree() if variant == 'tree'
                      else load_revision(revision, tmp))
        with hook_class():
            warm_up()
            loop()


def main():
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--against', default='a05ac45', metavar='REVISION')
    parser.add_argument('--rounds', type=int, default=100)
    parser.add_argument('--calls', type=int, default=500)
    parser.add_argument('--instructions', action='store_true')
    parser.add_argument('--child', choices=('bare', 'tree', 'revision'),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rounds < 10:
        parser.error('--rounds must be at least 10, got {}'.format(
            args.rounds))
    if args.calls < 1:
        parser.error('--calls must be positive, got {}'.format(args.calls))
    warnings.simplefilter('ignore')
    if args.child:
        child(args.child, args.against, args.calls)
        return

    with tempfile.TemporaryDirectory() as tmp:
        hooks = [('this tree', this_tree()),
                 (args.against, load_revision(args.against, tmp))]
        times = time_rounds(hooks, args.calls, args.rounds)
    print('F.relu on a 4x4 array, {} calls a loop, {} rounds, CPU time'
          .format(args.calls, args.rounds))
    bare = times.pop(None)
    rows = {}
    print('{:<12}{:>9}{:>9}{:>9}   us per call'.format(
        '', 'min', 'p10', 'median'))
    for label, values in [('bare', None)] + list(times.items()):
        if values is None:
            stats = [percentile(bare, q) * 1e6 for q in (0, 10, 50)]
        else:
            stats = [(percentile(values, q) - percentile(bare, q)) * 1e6
                     for q in (0, 10, 50)]
            rows[label] = stats
        print('{:<12}{:9.2f}{:9.2f}{:9.2f}{}'.format(
            label, *stats, '' if values is None else '   extra'))
    ours, theirs = rows['this tree'], rows[args.against]
    print('extra per call, this tree / {}: {:.3f} (min), {:.3f} (p10), '
          '{:.3f} (median)'.format(
              args.against, *(a / b for a, b in zip(ours, theirs))))

    if args.instructions:
        calls = 1000
        counts = {v: count_instructions(v, args.against, calls)
                  for v in ('bare', 'tree', 'revision')}
        tree = counts['tree'] - counts['bare']
        revision = counts['revision'] - counts['bare']
        print('instructions per call (callgrind, {} calls): bare {:.0f}, '
              'this tree +{:.0f}, {} +{:.0f}; this tree / {}: {:.3f}'.format(
                  calls, counts['bare'], tree, args.against, revision,
                  args.against, tree / revision))


if __name__ == '__main__':
    main()
