"""The main command under mpiexec: a mistake in the arguments, which every
rank finds alike, is told once, by rank 0; a failure a rank may meet
alone (the user's model, a file of its node) is told by every rank that
meets it, named by its rank, so that a run that exits 2 always says why.
"""

import pytest

from chainer_computational_cost.cli.main import main
from cli_runs import run_mpi
from cli_runs import write_module
from processes import needs_mpi

#: A factory that fails on rank 1 alone, as one taking the GPU of its rank
#: would on a node with one GPU.
RANK_1_FAILS = ('import os\n'
                'import chainer.links as L\n'
                'def build():\n'
                "    if os.environ.get('PMI_RANK') == '1':\n"
                "        raise RuntimeError('no GPU 1 on this node')\n"
                '    return L.Linear(8, 4)\n')


def _status(argv):
    try:
        return main(list(argv))
    except SystemExit as e:
        return e.code


def test_a_model_failing_on_rank_1_is_told_by_rank_1(tmp_path, monkeypatch,
                                                     capsys):
    path = write_module(tmp_path, 'cli_rank1_fails', RANK_1_FAILS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv('PMI_RANK', '1')
    assert _status(['cli_rank1_fails:build', '--shape', '2,8']) == 2
    assert capsys.readouterr() == ('', (
        'error: rank 1: building the model failed at {}:5: RuntimeError: no '
        'GPU 1 on this node\n'.format(path)))


def test_a_network_file_missing_on_rank_1_is_told_by_rank_1(tmp_path,
                                                            monkeypatch,
                                                            capsys):
    monkeypatch.setenv('SLURM_PROCID', '1')
    missing = str(tmp_path / 'net.json')
    assert _status(['cli_models:build_tiny', '--shape', '2,3', '--train',
                    '--device', 'a100', '--workers', '2', '--network',
                    missing]) == 2
    out, err = capsys.readouterr()
    assert (out, err.count('\n')) == ('', 1), err
    assert err.startswith('error: rank 1: --network {!r}: no such network '
                          'file'.format(missing)), err


def test_figures_of_rank_1_s_own_run_that_overflow_are_told_by_it(
        monkeypatch, capsys):
    # found when the reports are rendered, from this rank's figures (a
    # rank whose model differs meets it alone): it exited 2 saying nothing
    monkeypatch.setenv('PMI_RANK', '1')
    assert _status(['cli_models:build_tiny', '--shape', '2,3',
                    '--peak-flops', '1e-304', '--bandwidth', '1e11',
                    '--mode', 'csv']) == 2
    assert capsys.readouterr() == ('', (
        'error: rank 1: roofline: the times of these figures at 1e-304 '
        'FLOP/s and 100000000000.0 B/s overflow; give a device with a '
        'larger peak_flops or bandwidth\n'))


@pytest.mark.parametrize('argv', [
    ('cli_models:build_tiny', '--shape', '2,3', '--memory', '--summary',
     '--mode', 'csv'),
    ('cli_models:build_tiny', '--shap', '2,3')])
def test_a_mistake_in_the_arguments_is_told_by_rank_0_alone(argv, monkeypatch,
                                                            capsys):
    monkeypatch.setenv('PMI_RANK', '1')
    assert _status(argv) == 2
    assert capsys.readouterr() == ('', '')


@needs_mpi
@pytest.mark.slow
def test_a_failure_on_rank_1_alone_is_its_one_line(tmp_path):
    # rank 0 prints its report; rank 1's failure was dropped, leaving an
    # exit status of 2 and nothing said
    path = write_module(tmp_path, 'cli_rank1_fails', RANK_1_FAILS)
    status, out, err = run_mpi(2, 'cli_rank1_fails:build', '--shape', '2,8',
                               '--mode', 'csv', cwd=tmp_path)
    assert status == 2
    assert err == ('error: rank 1: building the model failed at {}:5: '
                   'RuntimeError: no GPU 1 on this node\n'.format(path))
    assert out.startswith('Layer name,')  # rank 0's report


@needs_mpi
@pytest.mark.slow
def test_an_argument_mistake_under_mpiexec_is_one_line(tmp_path):
    status, out, err = run_mpi(2, 'cli_models:build_tiny', '--shape', '2,3',
                               '--memory', '--summary', '--mode', 'csv',
                               cwd=tmp_path)
    assert (status, out) == (2, '')
    assert err.count('\n') == 1 and err.startswith(
        'error: --mode csv writes one table'), err
