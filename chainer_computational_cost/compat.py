"""The import paths of the flat layout (0.2.0 and before), kept working.

Until 0.2.0 every module sat in the package's top folder
(``chainer_computational_cost.report``, ``.roofline``, ``.mn``, ...).  Each
now lives in the folder of its role; :data:`OLD_PATHS` maps each old path
to the module (or modules, for one that was cut in parts) that holds its
names now, and an import hook installed by the package resolves the old
paths: code written against them, and objects pickled by 0.2.0, keep
working.  An old path that maps to one module is that module itself (the
same object, so setting an attribute on it is seen everywhere); one cut in
parts is a read-only view that finds each name in its parts in order.
"""

import importlib
import importlib.abc
import importlib.util
import sys
import types

PACKAGE = 'chainer_computational_cost'

#: Old module (below the package) -> the new modules holding its names, the
#: first the one it mostly became.  ``report`` is a folder now: its
#: ``__init__`` reads :data:`REPORT_PARTS` for the old module's other names.
OLD_PATHS = {
    'affine': ('core.affine',),
    'columns': ('core.columns',),
    'records': ('core.records',),
    'update': ('collect.updates',),
    'aggregation': ('analysis.aggregation',),
    'calibration': ('analysis.calibration',),
    'roofline': ('analysis.roofline', 'core.devices', 'core.columns'),
    'network': ('analysis.network', 'core.devices', 'core.checks'),
    'memory': ('analysis.memory', 'collect.live_memory', 'core.devices'),
    'rendering': ('report.rendering',),
    'plots': ('report.plots',),
    'mn': ('report.gathered', 'collect.mpi_recorder'),
    'computational_cost_hook': ('run.hook',),

    'projection': ('run.projection',),
    'fit': ('run.fit',),
    'measure': ('run.measure',),
    'netbench': ('run.netbench',),
    'extensions': ('run.extensions',),
}

#: Old modules that ran as a command with ``python -m``: the command they
#: are now (``python -m chainer_computational_cost <command>``).
OLD_COMMANDS = {'netbench': 'netbench'}

#: Where the names of the old ``report`` module that are not the reading
#: API itself now live.
REPORT_PARTS = ('report.cost_report', 'analysis.aggregation',
                'report.rendering', 'core.columns', 'core.records')


def old_name(parts, name, module):
    """``name`` from the first of ``parts`` (new module paths) that has
    it, as the old module ``module`` had it."""
    for part in parts:
        found = getattr(importlib.import_module(PACKAGE + '.' + part), name,
                        _MISSING)
        if found is not _MISSING:
            return found
    raise AttributeError('module {!r} has no attribute {!r}'.format(
        module, name))


_MISSING = object()


class _View(types.ModuleType):
    """An old module cut in parts: each name read from the first part that
    has it."""

    def __init__(self, name, parts):
        super(_View, self).__init__(name)
        self.__parts = parts

    def __getattr__(self, name):
        return old_name(self.__parts, name, self.__name__)

    def __dir__(self):
        names = set()
        for part in self.__parts:
            names.update(dir(importlib.import_module(PACKAGE + '.' + part)))
        return sorted(names)


class _OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolves ``chainer_computational_cost.<old>`` to its new module."""

    def __init__(self):
        self._specs = {}

    def find_spec(self, fullname, path=None, target=None):
        prefix, _, old = fullname.rpartition('.')
        if prefix != PACKAGE or old not in OLD_PATHS:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        parts = OLD_PATHS[spec.name.rpartition('.')[2]]
        if len(parts) > 1:
            return _View(spec.name, parts)
        module = importlib.import_module(PACKAGE + '.' + parts[0])
        self._specs[spec.name] = module.__spec__
        return module

    def get_code(self, fullname):
        """What ``python -m chainer_computational_cost.<old>`` runs: the
        command the old module was (None for a module that was none)."""
        command = OLD_COMMANDS.get(fullname.rpartition('.')[2])
        if command is None:
            return None
        return compile(
            'import sys\n'
            'from chainer_computational_cost.cli.main import main\n'
            'sys.exit(main([{!r}] + sys.argv[1:]))\n'.format(command),
            '<{}>'.format(fullname), 'exec')

    def exec_module(self, module):
        # The import system set the alias's spec on the real module: its
        # own goes back (reloading, pickling by name use it).
        spec = self._specs.pop(module.__spec__.name, None)
        if spec is not None:
            module.__spec__ = spec


def install():
    """Make the old paths importable (once per interpreter)."""
    if not any(isinstance(f, _OldPaths) for f in sys.meta_path):
        sys.meta_path.insert(0, _OldPaths())


install()
