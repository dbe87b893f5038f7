"""The test tiers: ``make test-fast`` runs ``-m 'not slow'`` for the edit
loop; ``make test`` and CI (``make test-all``) run every test.

Besides the tests marked ``@pytest.mark.slow`` where they are defined
(full-size models), the heavy oracles are slow here, by name, so that a
new fuzzing, property or mutant module joins its tier without a marker:
each of them is minutes of the suite's time, and none is what an edit of
one calculator or one page needs first.
"""

import pytest

#: Modules whose every test is slow: random graphs and tracemalloc
#: (test_fuzz), every calculator under generated shapes (test_properties),
#: planted bugs each run again (test_mutants_*).
SLOW_MODULES = ('test_fuzz', 'test_properties', 'test_mutants_')

#: Directories whose every test is slow: full-size models (VGG, ResNet,
#: GoogLeNet) against published figures.
SLOW_DIRECTORIES = ('tests/models/',)

#: Single tests of other modules that take many seconds: real runs
#: measured against tracemalloc, and an interrupt sent at every call.
SLOW_TESTS = (
    'test_memory.py::test_an_interrupt_is_never_lost_nor_miscounts',
    'test_peak.py::test_peak_against_tracemalloc',
)


def pytest_collection_modifyitems(config, items):
    """Mark the tests of :data:`SLOW_MODULES`, :data:`SLOW_DIRECTORIES`
    and :data:`SLOW_TESTS` slow."""
    for item in items:
        module = item.nodeid.split('::')[0].rsplit('/', 1)[-1]
        name = '{}::{}'.format(module, item.originalname or item.name)
        if module.startswith(SLOW_MODULES) or name in SLOW_TESTS or \
                item.nodeid.startswith(SLOW_DIRECTORIES):
            item.add_marker(pytest.mark.slow)
