"""Property-based tests over every built-in cost calculator.

Each case of ``property_cases.CASES`` draws a small random call of one
Chainer function type; these tests run it under
``ComputationalCostHook(strict=True)`` and check the invariants every cost
model must satisfy:

* every recorded figure is a non-negative int;
* counting a fused multiply-add as 1 FLOP never costs more FLOPs than
  counting it as 2, and changes nothing else;
* doubling the batch doubles FLOPs and mwrite and adds to mread exactly the
  batch-dependent part (see the case for the exceptions and why);
* where the case says the cost model writes each output element once,
  mwrite is the total size of the real outputs;
* no layer is ignored;
* every calculator has a case (so a new calculator gets these checks).

Figures are compared in elements: the hook reports memory in bytes (each
array with its own itemsize), so a second hook records what the calculator
returns in elements for each call.

``PROPERTY_EXAMPLES`` (environment) sets the examples per case (default
5); ``PROPERTY_RANDOM=1`` draws new examples on each run instead of the
fixed, reproducible ones, and shrinks the failing ones.
"""

import collections
import os
import sys

import chainer
import pytest
from hypothesis import HealthCheck
from hypothesis import Phase
from hypothesis import given
from hypothesis import seed
from hypothesis import settings
from hypothesis import strategies as st

from chainer_computational_cost import ComputationalCostHook
from chainer_computational_cost.cost_calculators import calculators
from chainer_computational_cost.cost_calculators import function_object
from chainer_computational_cost.cost_calculators import prod
from chainer_computational_cost.cost_calculators import validate_cost
from property_cases import CASES
from property_cases import CHAINER_MAJOR
from property_cases import Direct
from property_cases import Draw


EXAMPLES = int(os.environ.get('PROPERTY_EXAMPLES', '5'))

EXPLORE = os.environ.get('PROPERTY_RANDOM') == '1'

# No shrinking (the known failures, marked xfail, would spend most of the
# time shrinking) and, through a seed per case and invariant, the same
# examples on every run, unless exploring.
property_settings = settings(
    max_examples=EXAMPLES, deadline=None, database=None,
    report_multiple_bugs=False,
    phases=list(Phase) if EXPLORE else [Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow,
                           HealthCheck.data_too_large])

#: Batch sizes n the cases are drawn with (then run with 2n and 3n).
BATCH = st.integers(1, 3)


def _params(invariant):
    params = []
    for c in CASES:
        marks = []
        if invariant in c.xfail:
            marks.append(pytest.mark.xfail(strict=True,
                                           reason=c.xfail[invariant]))
        params.append(pytest.param(c, id=c.id, marks=marks))
    return params


def _calculator_by_name():
    return {cls.__name__: cls for cls in calculators}


def _check_available(c):
    """Skip a case whose class this Chainer does not have."""
    if c.requires is not None and str(CHAINER_MAJOR) != c.requires:
        pytest.skip('{} only exists in Chainer {}'.format(c.target,
                                                          c.requires))
    assert c.target in _calculator_by_name(), (
        'no built-in calculator for {}: is the case named after the '
        'right class?'.format(c.target))


class _Elements(chainer.FunctionHook):
    """Records, per call, the function type and what its built-in
    calculator returns in elements (the ComputationalCostHook reports bytes,
    each array counted with its own dtype)."""

    name = 'PropertyTestElements'

    def __init__(self, fma, extra):
        self.fma = fma
        self.extra = extra
        self.calls = []

    def forward_postprocess(self, function, in_data):
        node = function_object(function)
        calc = calculators.get(type(node))
        # the outputs, as the hook reads them from FunctionNode.apply
        outputs = sys._getframe(1).f_locals.get('outputs')
        out_shapes = None
        if isinstance(outputs, tuple):
            out_shapes = tuple(getattr(y, 'shape', None) for y in outputs)
        counts = None
        if calc is not None:
            counts = validate_cost(
                calc(node, in_data, fma_1flop=self.fma,
                     out_shapes=out_shapes, **self.extra),
                calc.__name__, type(node).__name__)
        self.calls.append((type(node).__name__, counts))


Measure = collections.namedtuple(
    'Measure', 'flops mread mwrite out_size layers ignored')


def measure(c, spec, k=1, fma=True, convention=None):
    """Run the case's function on batch k*n and return the costs of its
    call of the target type, in elements, under the hook's
    ``flop_convention`` ``convention``."""
    call = spec.make(k)
    hook = ComputationalCostHook(fma_1flop=fma, strict=True,
                                 flop_convention=convention)
    extra = {} if convention is None else {'flop_convention': convention}
    counts = _Elements(fma, extra)
    with chainer.using_config('train', spec.train):
        with hook, counts:
            out = call()
    if isinstance(out, Direct):
        cls = type(out.node)
        assert cls.__name__ == c.target
        calc = calculators[cls]
        flops, mread, mwrite, _ = validate_cost(
            calc(out.node, out.in_data, fma_1flop=fma, **extra),
            calc.__name__,
            c.target)
        out_size = sum(prod(s) for s in out.output_shapes())
        return Measure(flops, int(mread), int(mwrite), out_size, [], {})
    # the hook names calls 'Type-k', counting each type from 1
    elements = {}
    seen = collections.Counter()
    for type_name, cost in counts.calls:
        seen[type_name] += 1
        elements['{}-{}'.format(type_name, seen[type_name])] = cost
    report = hook.layer_report
    layers = [r for name, r in report.items() if name != 'total']
    targets = [(report[name], elements[name]) for name in report
               if name != 'total' and report[name]['type'] == c.target]
    assert len(targets) == 1, (
        'the case must call {} exactly once; calls: {}'.format(
            c.target, [t for t, _ in counts.calls]))
    record, cost = targets[0]
    assert record['flops'] == cost.flops
    out_size = sum(prod(s) for s in record['output_shapes'] if s is not None)
    return Measure(cost.flops, int(cost.mread), int(cost.mwrite), out_size,
                   layers, hook.ignored_layers)


def check_examples(c, invariant, check):
    """Run ``check(spec, data)`` on examples of case ``c`` drawn by
    hypothesis.

    ``check`` returns None when it checked the example, or the reason why
    the invariant does not apply to it (then the next example is tried): a
    case none of whose examples apply is skipped with that reason.
    """
    _check_available(c)
    reasons = []
    checked = []

    @given(data=st.data())
    @property_settings
    def examples(data):
        n = data.draw(BATCH, label='n')
        spec = c.build(Draw(data.draw), n)
        reason = check(spec, data)
        (checked if reason is None else reasons).append(reason)

    if not EXPLORE:
        examples = seed('{}/{}'.format(c.id, invariant))(examples)
    examples()
    if not checked:
        pytest.skip(reasons[0])


@pytest.mark.parametrize('c', _params('ints'))
def test_costs_are_non_negative_ints(c):
    def check(spec, data):
        for fma in (True, False):
            m = measure(c, spec, fma=fma)
            figures = [(m.flops, m.mread, m.mwrite)]
            figures += [(r['flops'], r['mread'], r['mwrite'])
                        for r in m.layers]
            for fig in figures:
                for v in fig:
                    assert type(v) is int and v >= 0, fig
    check_examples(c, 'ints', check)


@pytest.mark.parametrize('c', _params('fma'))
def test_fma_never_costs_more(c):
    def check(spec, data):
        fused = measure(c, spec, fma=True)
        plain = measure(c, spec, fma=False)
        assert fused.flops <= plain.flops
        # counting FMAs only changes FLOPs
        assert (fused.mread, fused.mwrite) == (plain.mread, plain.mwrite)
    check_examples(c, 'fma', check)


#: The types flop_convention='torch' counts as PyTorch's FlopCounterMode:
#: 2 FLOPs per multiply-add, a bias free.
TORCH_COUNTED = {
    'Convolution2DFunction', 'ConvolutionND', 'Deconvolution2DFunction',
    'DeconvolutionND', 'Convolution2DGradW', 'ConvolutionNDGradW',
    'LinearFunction', 'LinearGradData', 'LinearGradWeight', 'MatMul',
    'BatchMatMul', 'BatchMatMulGrad', 'TensorDot'}


def test_torch_counted_types_have_cases():
    assert TORCH_COUNTED <= {c.target for c in CASES}


@pytest.mark.parametrize('c', [p for p in _params('torch')
                               if p.values[0].target in TORCH_COUNTED])
def test_torch_convention_is_twice_the_multiply_adds(c):
    def check(spec, data):
        fused = measure(c, spec, fma=True)
        plain = measure(c, spec, fma=False)
        torch = measure(c, spec, fma=True, convention='torch')
        assert (torch.mread, torch.mwrite) == (fused.mread, fused.mwrite)
        # never below the count without FMA, which only saves additions
        assert torch.flops >= plain.flops
        if c.target == 'LinearFunction':
            # with FMA a linear layer's bias add is counted, there it is free
            assert torch.flops in (2 * fused.flops,
                                   2 * (fused.flops - fused.out_size))
        else:
            # with FMA a multiply-add is 1 FLOP and a convolution's bias
            # initialises the accumulator
            assert torch.flops == 2 * fused.flops
    check_examples(c, 'torch', check)


@pytest.mark.parametrize('c', _params('batch'))
def test_doubling_the_batch(c):
    def check(spec, data):
        if spec.batch is not True:
            return spec.batch
        for fma in (True, False):
            runs = [measure(c, spec, k, fma) for k in (1, 2)]
            if spec.affine:
                runs.append(measure(c, spec, 3, fma))
            for metric in ('flops', 'mread', 'mwrite'):
                if metric in spec.unscaled:
                    continue
                at = [getattr(r, metric) for r in runs]
                if metric in spec.affine:
                    # f(k n) = a k + b: equal steps from n to 2n to 3n
                    assert at[2] - at[1] == at[1] - at[0], (metric, fma, at)
                elif metric == 'mread':
                    # the batch-independent inputs are read once whatever
                    # the batch
                    assert at[1] == 2 * at[0] - spec.fixed_mread, (
                        metric, at, spec.fixed_mread)
                else:
                    assert at[1] == 2 * at[0], (metric, fma, at)
    check_examples(c, 'batch', check)


@pytest.mark.parametrize('c', _params('outputs'))
def test_mwrite_is_the_output_size(c):
    def check(spec, data):
        if spec.writes_outputs is not True:
            return spec.writes_outputs
        m = measure(c, spec)
        assert m.mwrite == m.out_size, m
    check_examples(c, 'outputs', check)


@pytest.mark.parametrize('c', _params('ignored'))
def test_no_layer_is_ignored(c):
    def check(spec, data):
        m = measure(c, spec)
        assert m.ignored == {}
    check_examples(c, 'ignored', check)


def test_every_calculator_has_a_case():
    covered = {c.target for c in CASES}
    missing = sorted('{}.{}'.format(cls.__module__, cls.__name__)
                     for cls in calculators if cls.__name__ not in covered)
    assert missing == [], (
        'add a case to tests/property_cases.py (for a gradient class, to '
        'tests/property_cases_<module>.py, as docs/contributing.md says) '
        'for: ' + ', '.join(missing))


def test_every_case_names_a_calculator_of_its_chainer():
    names = set(_calculator_by_name())
    here = [c for c in CASES
            if c.requires is None or c.requires == str(CHAINER_MAJOR)]
    assert sorted({c.target for c in here} - names) == []
