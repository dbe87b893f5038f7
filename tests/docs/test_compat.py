"""The import paths of 0.2.0's flat layout resolve to the new modules
(``compat.OLD_PATHS``): the same module where one became one, a view of
its parts where one was cut; and the old ``python -m`` command runs."""

import importlib
import pickle
import subprocess
import sys

import pytest

import chainer_computational_cost
from chainer_computational_cost import compat
from chainer_computational_cost.analysis import network
from chainer_computational_cost.collect import live_memory
from chainer_computational_cost.core import devices
from chainer_computational_cost.report import gathered
from chainer_computational_cost.run import hook


def test_a_moved_module_is_the_same_module():
    old = importlib.import_module(
        'chainer_computational_cost.computational_cost_hook')
    assert old is hook
    assert old.ComputationalCostHook is \
        chainer_computational_cost.ComputationalCostHook
    # its own name and spec are kept (pickles and reloads use them)
    assert hook.__name__ == 'chainer_computational_cost.run.hook'
    assert hook.__spec__.name == 'chainer_computational_cost.run.hook'


def test_a_module_cut_in_parts_finds_each_name_in_its_part():
    from chainer_computational_cost import memory, mn, roofline
    from chainer_computational_cost import network as old_network
    assert memory.Tracker is live_memory.Tracker
    assert memory.CAPACITIES is devices.CAPACITIES
    assert roofline.DEVICES is devices.DEVICES
    assert roofline.RooflineColumns is \
        chainer_computational_cost.RooflineColumns
    assert old_network.NETWORKS is devices.NETWORKS
    assert old_network.scaling_report is network.scaling_report
    assert mn.GatheredReport is gathered.GatheredReport
    assert 'MPIRecorder' in dir(mn)
    with pytest.raises(AttributeError, match="'chainer_computational_cost"
                                             ".memory' has no attribute "
                                             "'nothing_here'"):
        memory.nothing_here


def test_the_old_report_module_names_are_read_from_the_report_folder():
    from chainer_computational_cost import report
    from chainer_computational_cost.analysis import aggregation
    from chainer_computational_cost.core import records
    assert report.ReportSnapshot.__module__ == \
        'chainer_computational_cost.report.cost_report'
    assert report.layer_report is aggregation.layer_report
    assert report.R_FLOPS == records.R_FLOPS
    with pytest.raises(AttributeError):
        report.nothing_here


def test_every_old_path_imports():
    for old in compat.OLD_PATHS:
        module = importlib.import_module('chainer_computational_cost.' + old)
        assert dir(module), old


def test_an_old_path_pickles_as_its_new_module():
    # what is pickled now names the new module; an old pickle's names load
    # (tests/docs/test_pickles.py)
    net = devices.NETWORKS['eth-50g']
    assert b'core.devices' in pickle.dumps(net)


def test_the_old_netbench_module_runs_the_netbench_command():
    done = subprocess.run(
        [sys.executable, '-m', 'chainer_computational_cost.netbench',
         '--help'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert 'netbench' in done.stdout and '--communicator' in done.stdout
