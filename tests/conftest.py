"""The test tiers: ``make test-fast`` runs ``-m 'not slow'`` on Chainer
7.8.1 for the edit loop; ``make test`` the same tier on Chainer 7.8.1 and
6.7.0, with flake8 and the DETAILS.md check; CI (``make test-all``,
which the README's test command runs) every test on both.

Besides the tests marked ``@pytest.mark.slow`` where they are defined
(full-size models, the tests of the behaviours planted bugs got past),
the heavy oracles are slow here, by file name, so that a new fuzzing or
property module (``test_hook_fuzz*``, ``test_properties*``) joins its
tier without a marker: each of them is minutes of the suite's time, and
none is what an edit of one calculator or one page needs first.  The
fixtures the test folders share are here too.
"""

import pytest

from chainer_computational_cost import cost_calculators

#: Modules whose every test is slow, by the start of their file name:
#: random graphs and tracemalloc (run/test_hook_fuzz.py), every calculator
#: under generated shapes (cost_calculators/test_properties.py).
SLOW_MODULES = ('test_hook_fuzz', 'test_properties')

#: Directories whose every test is slow: full-size models (VGG, ResNet,
#: GoogLeNet) against published figures.
SLOW_DIRECTORIES = ('tests/models/',)

#: Single tests of other modules that take seconds each: real runs
#: measured against tracemalloc, an interrupt sent at every call or line,
#: runs under mpiexec (two or four ranks started for each), and the
#: probes' convolutions at their largest.
SLOW_TESTS = (
    'test_live_memory.py::test_an_interrupt_is_never_lost_nor_miscounts',
    'test_live_memory_peak.py::test_peak_against_tracemalloc',
    'test_live_memory_interrupts.py::'
    'test_an_interrupt_at_any_line_of_the_tracker',
    'test_netbench.py::test_netbench_under_mpiexec',
    'test_netbench.py::test_a_mistake_under_mpiexec_is_one_line_of_rank_0',
    'test_mpi_recorder.py::test_chainermn_functions_comm_bytes_equal_the_spy',
    'test_mpi_recorder.py::test_training_step_comm_bytes_equal_the_spy',
    'test_mpi_recorder.py::test_cost_monitor_logs_each_ranks_comm_bytes',
    'test_compat.py::test_the_old_netbench_module_runs_the_netbench_command',
    'test_calibration.py::test_a_cnn_probe_keeps_its_im2col_below_the_cap',
)


#: Quick tests of the slow modules, which the fast runs keep: whether
#: every calculator has a property case is what a contributor adding one
#: must hear from ``make test`` (docs/contributing.md).
FAST_TESTS = (
    'test_properties.py::test_every_calculator_has_a_case',
    'test_properties.py::test_every_case_names_a_calculator_of_its_chainer',
)


def pytest_collection_modifyitems(config, items):
    """Mark the tests of :data:`SLOW_MODULES` (but :data:`FAST_TESTS`),
    :data:`SLOW_DIRECTORIES` and :data:`SLOW_TESTS` slow."""
    for item in items:
        module = item.nodeid.split('::')[0].rsplit('/', 1)[-1]
        name = '{}::{}'.format(module, item.originalname or item.name)
        if module.startswith(SLOW_MODULES) and name not in FAST_TESTS or \
                name in SLOW_TESTS or \
                item.nodeid.startswith(SLOW_DIRECTORIES):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def planted(monkeypatch):
    """Plant a scratch function for a type: ``planted(cls, fn)``; every
    call's ``(backend, out_shapes)`` is noted in ``planted.calls``."""
    calls = []

    def plant(cls, nbytes):
        def scratch(func, in_data, out_shapes=None, backend=None):
            calls.append((backend, out_shapes))
            return nbytes(in_data)
        monkeypatch.setitem(cost_calculators.scratches, cls, scratch)
    plant.calls = calls
    return plant
