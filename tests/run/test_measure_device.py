"""calibrate's ``device``: what it may be, and the one-line error naming
it for anything else, given before anything runs."""

import chainer
import chainerx
import pytest

from chainer_computational_cost import calibrate
from chainer_computational_cost.core import checks
from chainer_computational_cost.core.devices import DEVICES
from chainer_computational_cost.run import measure

ALLOWED = ("device must be None or a Chainer device specifier as "
           "chainer.get_device takes it (such as '@numpy' or '@cupy:0'), "
           "got ")
PRESET = (': a device preset is the figures the reports use, not a device '
          'to run on; calibrate measures the device the arrays live on')


class _Ran(Exception):
    """The calibration started (and stopped there)."""


@pytest.fixture
def runs(monkeypatch):
    """The devices calibrate got as far as running on (none, for a bad
    one): its run is replaced by one noting the device and raising
    _Ran."""
    ran = []

    def run(seconds, device, progress, seed, clock):
        ran.append(device)
        raise _Ran
    monkeypatch.setattr(measure, '_calibrate', run)
    return ran


def _refused(device):
    with pytest.raises(ValueError) as e:
        calibrate(seconds=10, device=device)
    assert '\n' not in str(e.value)
    return e


@pytest.mark.parametrize('device', ['a100', 'A100', 'epyc9654'])
def test_a_preset_name_is_no_device_to_run_on(runs, device):
    e = _refused(device)
    assert type(e.value) is ValueError
    assert str(e.value) == ALLOWED + repr(device) + PRESET
    assert runs == []


def test_a_preset_is_no_device_to_run_on(runs):
    e = _refused(DEVICES['a100'])
    assert isinstance(e.value, TypeError)
    assert str(e.value) == ALLOWED + "the Device 'a100'" + PRESET
    assert runs == []


@pytest.mark.parametrize('device', [[1], 1.5, True, object])
def test_a_device_of_another_type_is_a_type_error(runs, device):
    e = _refused(device)
    assert isinstance(e.value, checks.ArgumentTypeError)
    assert str(e.value) == ALLOWED + repr(device)
    assert runs == []


@pytest.mark.parametrize('device, reason', [
    # CuPy is not installed here: Chainer's reason, on one line
    (5, "CUDA environment is not correctly set up"),
    ('@cupy:0', "No module named 'cupy'"),
    # without '@', a ChainerX device, and ChainerX is not built here
    ('', "Tried to parse ChainerX device specifier ''"),
    ('native:0', 'but ChainerX is not available'),
    # (Chainer 7's words; Chainer 6: 'Invalid device specifier: @cupy')
    ('@cupy', '@cupy'),
])
def test_a_device_chainer_cannot_use_says_why(runs, device, reason):
    if chainer.backends.cuda.available or chainerx.is_available():
        pytest.skip('CuPy or ChainerX is available here')
    e = _refused(device)
    assert type(e.value) is ValueError
    assert str(e.value).startswith(ALLOWED + repr(device) + ': ')
    assert reason in str(e.value)
    assert runs == []


@pytest.mark.parametrize('device', [None, '@numpy', -1, '-1'])
def test_numpy_devices_run_on_numpy(runs, device):
    with pytest.raises(_Ran):
        calibrate(seconds=10, device=device)
    assert len(runs) == 1
    assert runs[0].xp is chainer.backend.CpuDevice().xp
