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
    # private helpers of backward passes
    '_MulInvStd', '_XHat', '_SetItemZero',
    # GPU-only internals (they do have calculators, see below), and the
    # bridge to Theano, whose cost is whatever graph it wraps
    'CudnnRNNWeightConcat', 'RsqrtGPU', 'TheanoFunction',
}

# Forward function types deliberately left without a calculator, each with
# the reason. Empty: every one is covered.
EXCLUDED = {}


def _is_backward(name):
    return 'Grad' in name or 'Backward' in name


def forward_function_types():
    """Forward FunctionNode / Function classes defined in chainer.functions.
    """
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
                    and not _is_backward(name) and name not in NOT_COUNTED):
                found.add(obj)
    return found


def test_every_forward_function_has_a_calculator():
    types = forward_function_types()
    missing = sorted('{}.{}'.format(c.__module__, c.__name__) for c in types
                     if c not in calculators and c.__name__ not in EXCLUDED)
    covered = sum(1 for c in types if c in calculators)
    print('covered {} of {}'.format(covered, len(types)))
    assert missing == []


@pytest.mark.skipif(chainer.__version__ != '7.8.1',
                    reason='the 192 are counted on Chainer 7.8.1')
def test_chainer_7_8_1_has_192():
    assert len(forward_function_types()) == 192


def test_gpu_only_internals_have_calculators_too():
    names = {c.__name__ for c in calculators}
    assert {'CudnnRNNWeightConcat', 'RsqrtGPU'} <= names
