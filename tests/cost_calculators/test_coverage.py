"""Every forward function type of the installed chainer.functions has a
calculator."""

import importlib
import inspect
import pkgutil

import chainer
import chainer.functions
import pytest

from chainer_computational_cost.cost_calculators import calculators

# Classes of chainer.functions that are not forward function types a model
# calls, so not counted (the 192 of Chainer 7.8.1 exclude them too).
NOT_COUNTED = {
    # abstract bases, never applied themselves
    'BaseNStepRNN', 'IndexSelectorBase', 'SelectorBase', 'Pooling2D',
    '_PoolingND',
    # GPU-only internals (they do have calculators, see below), and the
    # bridge to Theano, whose cost is whatever graph it wraps
    'CudnnRNNWeightConcat', 'RsqrtGPU', 'TheanoFunction',
}

#: Private FunctionNodes that only backward passes apply (counted with the
#: gradient classes).
BACKWARD_HELPERS = {'_MulInvStd', '_XHat', '_SetItemZero'}

# Forward function types deliberately left without a calculator, each with
# the reason. Empty: every one is covered.
EXCLUDED = {}


def _is_backward(name):
    return 'Grad' in name or 'Backward' in name or name in BACKWARD_HELPERS


def _function_types(backward):
    found = set()
    prefix = chainer.functions.__name__ + '.'
    for info in pkgutil.walk_packages(chainer.functions.__path__, prefix):
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # optional backends (theano) may be missing
            continue
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and obj.__module__ == module.__name__
                    and issubclass(obj, (chainer.FunctionNode,
                                         chainer.Function))
                    and _is_backward(name) == backward
                    and name not in NOT_COUNTED):
                found.add(obj)
    return found


def forward_function_types():
    """Forward FunctionNode / Function classes defined in chainer.functions.
    """
    return _function_types(backward=False)


def gradient_function_types():
    """The FunctionNodes of chainer.functions that backward passes apply:
    the ``*Grad*`` / ``*Backward*`` classes and private helpers."""
    return _function_types(backward=True)


def test_every_forward_function_has_a_calculator():
    types = forward_function_types()
    missing = sorted('{}.{}'.format(c.__module__, c.__name__) for c in types
                     if c not in calculators and c.__name__ not in EXCLUDED)
    covered = sum(1 for c in types if c in calculators)
    print('covered {} of {}'.format(covered, len(types)))
    assert missing == []


def test_every_gradient_function_has_a_calculator():
    types = gradient_function_types()
    missing = sorted('{}.{}'.format(c.__module__, c.__name__) for c in types
                     if c not in calculators)
    covered = sum(1 for c in types if c in calculators)
    print('covered {} of {} gradient classes'.format(covered, len(types)))
    assert missing == []


@pytest.mark.skipif(chainer.__version__ != '7.8.1',
                    reason='the 192 are counted on Chainer 7.8.1')
def test_chainer_7_8_1_has_192():
    assert len(forward_function_types()) == 192


def test_gpu_only_internals_have_calculators_too():
    names = {c.__name__ for c in calculators}
    assert {'CudnnRNNWeightConcat', 'RsqrtGPU'} <= names
