r"""Cost calculators for the update phase: ``chainer.optimizers``' update
rules and ``chainer.optimizer_hooks``.

These are not function nodes: the hook calls them for each parameter an
optimizer updates (see ``chainer_computational_cost.collect.updates``), with
the
update rule or the optimizer hook as ``func`` and ``in_data = (param,
grad)``, the parameter's array and its gradient.  They are registered in
``cost_calculators.update_calculators``, not
among the function calculators.

The cost model is the one of every calculator: a straightforward
implementation reads each array once and writes each array it changes once,
in its own dtype, and computes the rule's formula per element, one FLOP per
operation (a square root, a division, a min or a max are one each).  FMA,
the same rule for every rule and hook: a multiplication whose product goes
straight into one addition or subtraction ($a b + c$, $c - a b$, $a b -
c$, $g^2 - v$ as well as $h + g^2$) is fused with it, one FLOP with
``fma_1flop=True`` and two without; an addition fuses at most one product
(in $a b + c d$ the other product stays a multiplication), and a product
that is used twice ($\hat m^2$ in MSVAG) is computed once, not fused.
The formula counted is the one Chainer's fused CUDA kernel writes (the
CPU code computes the same values in more passes); scalars derived from
the hyperparameters and the step count (a bias correction, AdaBound's
bounds, $1 - \beta$) are computed once per parameter and not counted.

Notation: $n$ is the number of elements of the parameter $p$ (its
gradient $g$ has the same); every optimizer state $s$ has the parameter's
shape and, as Chainer creates it with ``zeros_like``, its dtype.

Options of every rule:

* ``use_fp32_update()`` on a float16 parameter: the rule updates a float32
  master copy (its states are float32 too) and adds two casts of $n$
  elements, one FLOP each as ``Cast``: the gradient to float32 (read 2,
  write 4 bytes per element) and the master back to the parameter (read 4,
  write 2);
* loss scaling (``param._loss_scale`` set): the gradient is divided by the
  scale first, $n$ FLOPs, $g$ read and written once more;
* ``update_rule.enabled = False``, an uninitialised parameter or a missing
  gradient: nothing is updated and nothing is recorded.
"""

from chainer.optimizer_hooks import GradientClipping
from chainer.optimizer_hooks import GradientHardClipping
from chainer.optimizer_hooks import GradientLARS
from chainer.optimizer_hooks import GradientNoise
from chainer.optimizer_hooks import Lasso
from chainer.optimizer_hooks import WeightDecay
from chainer.optimizers.ada_delta import AdaDeltaRule
from chainer.optimizers.ada_grad import AdaGradRule
from chainer.optimizers.adam import AdamRule
from chainer.optimizers.corrected_momentum_sgd import CorrectedMomentumSGDRule
from chainer.optimizers.momentum_sgd import MomentumSGDRule
from chainer.optimizers.msvag import MSVAGRule
from chainer.optimizers.nesterov_ag import NesterovAGRule
from chainer.optimizers.rmsprop import RMSpropRule
from chainer.optimizers.rmsprop_graves import RMSpropGravesRule
from chainer.optimizers.sgd import SGDRule
from chainer.optimizers.smorms3 import SMORMS3Rule
import numpy

from chainer_computational_cost.cost_calculators import c_strides
from chainer_computational_cost.cost_calculators import dot_flops
from chainer_computational_cost.cost_calculators import elements
from chainer_computational_cost.cost_calculators import elides
from chainer_computational_cost.cost_calculators import strides_of

#: No family of its own: update rules are the 'update' family by their
#: phase (``analysis.calibration.family_of``).
TIME_FAMILY = None


_FLOAT16 = numpy.dtype(numpy.float16)
_FLOAT32 = numpy.dtype(numpy.float32)


def _scalar(value):
    """A hyperparameter as report data: bools and strings as they are,
    numbers as float, anything else as its text."""
    if isinstance(value, (bool, numpy.bool_)):
        return bool(value)
    if isinstance(value, str) or value is None:
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)


def rule_params(rule):
    """A rule's hyperparameters (its own and its optimizer's defaults) as
    ``params``, in name order, and whether it updates a float32 master
    copy (``fp32_update``)."""
    hp = rule.hyperparam.get_dict()
    params = {k: _scalar(hp[k]) for k in sorted(hp)}
    params['fp32_update'] = bool(rule._use_fp32_update)
    return params


def _rule_cost(rule, in_data, kwargs, per_element, n_read, n_written):
    """``(flops, mread, mwrite, params)`` of one parameter's update by
    ``rule``: ``per_element`` FLOPs per element ``(FMA, no FMA)``, the
    parameter and the gradient read, the parameter written, ``n_read``
    states read and ``n_written`` written; the casts of a float32 master
    copy and the division of a loss scale added (see the module)."""
    p, g = in_data
    n = p.size
    fma = kwargs.get('fma_1flop', False)
    params = rule_params(rule)
    fp32 = params['fp32_update'] and p.dtype == _FLOAT16
    dtype = _FLOAT32 if fp32 else p.dtype
    gdtype = _FLOAT32 if fp32 else g.dtype
    flops = n * per_element[0 if fma else 1]
    mread = elements(n * (1 + n_read), dtype) + elements(n, gdtype)
    mwrite = elements(n * (1 + n_written), dtype)
    if fp32:
        # the gradient to float32, the master copy back to float16
        flops += 2 * n
        mread += elements(n, g) + elements(n, _FLOAT32)
        mwrite += elements(n, _FLOAT32) + elements(n, p)
    if kwargs.get('loss_scaled', False):
        flops += n
        mread += elements(n, gdtype)
        mwrite += elements(n, gdtype)
    params['fp32_update'] = fp32
    return flops, mread, mwrite, params


def calc_sgd(rule: SGDRule, in_data, **kwargs):
    r"""SGDRule

    $$p \leftarrow p - \eta g$$

    One fusable multiply-add per element. Optimizer: ``SGD``.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $n$ |
    | FLOPs (no FMA) | $2 n$ |
    | mread | $\|p\| + \|g\|$ |
    | mwrite | $\|p\|$ |
    | params | `lr`, `fp32_update` |
    """
    return _rule_cost(rule, in_data, kwargs, (1, 2), 0, 0)


def calc_momentum_sgd(rule: MomentumSGDRule, in_data, **kwargs):
    r"""MomentumSGDRule

    $$v \leftarrow \mu v - \eta g, \quad p \leftarrow p + v$$

    Per element: a multiplication and a fusable multiply-add for $v$, an
    addition for $p$. State: the velocity $v$. Optimizer: ``MomentumSGD``.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $3 n$ |
    | FLOPs (no FMA) | $4 n$ |
    | mread | $\|p\| + \|g\| + \|v\|$ |
    | mwrite | $\|p\| + \|v\|$ |
    | params | `lr`, `momentum`, `fp32_update` |
    """
    return _rule_cost(rule, in_data, kwargs, (3, 4), 1, 1)


def calc_nesterov_ag(rule: NesterovAGRule, in_data, **kwargs):
    r"""NesterovAGRule

    $$v \leftarrow \mu v - \eta g, \quad
    p \leftarrow p + \mu^2 v - (1 + \mu) \eta g$$

    Per element: $v$ as in MomentumSGD (2 FLOPs with FMA, 3 without), then
    two multiply-adds into $p$ (2 with FMA, 4 without); $\mu^2$ and
    $(1 + \mu)\eta$ are scalars. State: $v$. Optimizer: ``NesterovAG``.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $4 n$ |
    | FLOPs (no FMA) | $7 n$ |
    | mread | $\|p\| + \|g\| + \|v\|$ |
    | mwrite | $\|p\| + \|v\|$ |
    | params | `lr`, `momentum`, `fp32_update` |
    """
    return _rule_cost(rule, in_data, kwargs, (4, 7), 1, 1)


def calc_corrected_momentum_sgd(rule: CorrectedMomentumSGDRule, in_data,
                                **kwargs):
    r"""CorrectedMomentumSGDRule

    $$v \leftarrow \mu v - g, \quad p \leftarrow p + \eta v$$

    Two fusable multiply-adds per element. State: $v$. Optimizer:
    ``CorrectedMomentumSGD``.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $2 n$ |
    | FLOPs (no FMA) | $4 n$ |
    | mread | $\|p\| + \|g\| + \|v\|$ |
    | mwrite | $\|p\| + \|v\|$ |
    | params | `lr`, `momentum`, `fp32_update` |
    """
    return _rule_cost(rule, in_data, kwargs, (2, 4), 1, 1)


def calc_adam(rule: AdamRule, in_data, **kwargs):
    r"""AdamRule

    $$m \leftarrow m + (1 - \beta_1)(g - m), \quad
    v \leftarrow v + (1 - \beta_2)(g^2 - v),$$
    $$p \leftarrow p - \eta \left(\frac{\alpha_t m}{\sqrt{\hat v} + \epsilon}
    + \lambda p\right)$$

    Per element: $m$ a subtraction and a multiply-add (2 FLOPs with FMA, 3
    without), $v$ two multiply-adds, $g^2 - v$ then the update (2, 4), $p$
    a square root, an addition, a multiplication, a division and two
    multiply-adds (6, 8): 10 FLOPs with FMA, 15 without. The weight decay
    term $\lambda p$ is counted whatever `weight_decay_rate` (Chainer's
    kernel computes it). States: $m$, $v$.

    * `amsgrad`: $\hat v \leftarrow \max(\hat v, v)$, one more FLOP and a
      third state $\hat v$ read and written (else $\hat v = v$);
    * `adabound`: the step $\alpha_t / (\sqrt{\hat v} + \epsilon)$ is
      clipped to AdaBound's bounds (scalars per step), a min and a max:
      two more FLOPs.

    Optimizers: ``Adam``, ``AdamW`` (a `weight_decay_rate`), ``AMSGrad``
    (`amsgrad`), ``AdaBound`` (`adabound`), ``AMSBound`` (both). For
    float32, 28 bytes per element (36 with `amsgrad`).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $(10 + [amsgrad] + 2 [adabound]) n$ |
    | FLOPs (no FMA) | $(15 + [amsgrad] + 2 [adabound]) n$ |
    | mread | $\|p\| + \|g\| + \|m\| + \|v\| + [amsgrad] \|\hat v\|$ |
    | mwrite | $\|p\| + \|m\| + \|v\| + [amsgrad] \|\hat v\|$ |
    | params | `alpha`, `beta1`, `beta2`, `eps`, `eta`, `weight_decay_rate`, `amsgrad`, `adabound`, `final_lr`, `gamma`, `fp32_update` |
    """  # NOQA: E501 (a table row)
    hp = rule.hyperparam
    extra = int(bool(hp.amsgrad)) + 2 * int(bool(hp.adabound))
    states = 3 if hp.amsgrad else 2
    return _rule_cost(rule, in_data, kwargs, (10 + extra, 15 + extra),
                      states, states)


def calc_ada_grad(rule: AdaGradRule, in_data, **kwargs):
    r"""AdaGradRule

    $$h \leftarrow h + g^2, \quad
    p \leftarrow p - \frac{\eta g}{\sqrt h + \epsilon}$$

    Per element: a fusable multiply-add for $h$; a square root, an
    addition, a multiplication, a division and a subtraction for $p$.
    State: $h$. Optimizer: ``AdaGrad``.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $6 n$ |
    | FLOPs (no FMA) | $7 n$ |
    | mread | $\|p\| + \|g\| + \|h\|$ |
    | mwrite | $\|p\| + \|h\|$ |
    | params | `lr`, `eps`, `fp32_update` |
    """
    return _rule_cost(rule, in_data, kwargs, (6, 7), 1, 1)


def calc_ada_delta(rule: AdaDeltaRule, in_data, **kwargs):
    r"""AdaDeltaRule

    $$s_g \leftarrow s_g + (1 - \rho)(g^2 - s_g), \quad
    \Delta = \sqrt{\frac{s_\Delta + \epsilon}{s_g + \epsilon}}\, g,$$
    $$s_\Delta \leftarrow s_\Delta + (1 - \rho)(\Delta^2 - s_\Delta), \quad
    p \leftarrow p - \Delta$$

    Per element: each mean square two multiply-adds, the square minus the
    mean then the update (2 FLOPs with FMA, 4 without); $\Delta$ two
    additions, a division, a square root and a multiplication (5); $p$ a
    subtraction.
    States: $s_g$ (`msg`), $s_\Delta$ (`msdx`). Optimizer: ``AdaDelta``.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $10 n$ |
    | FLOPs (no FMA) | $14 n$ |
    | mread | $\|p\| + \|g\| + \|s_g\| + \|s_\Delta\|$ |
    | mwrite | $\|p\| + \|s_g\| + \|s_\Delta\|$ |
    | params | `rho`, `eps`, `fp32_update` |
    """
    return _rule_cost(rule, in_data, kwargs, (10, 14), 2, 2)


def calc_rmsprop(rule: RMSpropRule, in_data, **kwargs):
    r"""RMSpropRule

    $$s \leftarrow \alpha s + (1 - \alpha) g^2, \quad
    p \leftarrow p - \frac{\eta g}{\sqrt s + \epsilon}$$

    Per element: $s$ three multiplications and an addition (3 FLOPs with
    FMA, 4 without); $p$ a square root, an addition, a multiplication, a
    division and a subtraction (5; `eps_inside_sqrt` moves the addition
    under the root, same count). State: $s$ (`ms`). Optimizer:
    ``RMSprop``.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $8 n$ |
    | FLOPs (no FMA) | $9 n$ |
    | mread | $\|p\| + \|g\| + \|s\|$ |
    | mwrite | $\|p\| + \|s\|$ |
    | params | `lr`, `alpha`, `eps`, `eps_inside_sqrt`, `fp32_update` |
    """
    return _rule_cost(rule, in_data, kwargs, (8, 9), 1, 1)


def calc_rmsprop_graves(rule: RMSpropGravesRule, in_data, **kwargs):
    r"""RMSpropGravesRule

    $$n_s \leftarrow \alpha n_s + (1 - \alpha) g^2, \quad
    \bar g \leftarrow \alpha \bar g + (1 - \alpha) g,$$
    $$\delta \leftarrow \mu \delta
    - \frac{\eta g}{\sqrt{n_s - \bar g^2 + \epsilon}}, \quad
    p \leftarrow p + \delta$$

    Per element: $n_s$ 3 FLOPs with FMA (4 without), $\bar g$ 2 (3),
    $\delta$ a multiply-add for $n_s - \bar g^2$, an addition, a reciprocal
    square root, two multiplications and a multiply-add (6, 8), $p$ an
    addition. States: $n_s$ (`n`), $\bar g$ (`g`), $\delta$ (`delta`).
    Optimizer: ``RMSpropGraves``.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $12 n$ |
    | FLOPs (no FMA) | $16 n$ |
    | mread | $\|p\| + \|g\| + \|n_s\| + \|\bar g\| + \|\delta\|$ |
    | mwrite | $\|p\| + \|n_s\| + \|\bar g\| + \|\delta\|$ |
    | params | `lr`, `alpha`, `momentum`, `eps`, `fp32_update` |
    """
    return _rule_cost(rule, in_data, kwargs, (12, 16), 3, 3)


def calc_smorms3(rule: SMORMS3Rule, in_data, **kwargs):
    r"""SMORMS3Rule

    $$r = \frac{1}{mem + 1}, \quad
    \bar g \leftarrow (1 - r) \bar g + r g, \quad
    \bar g_2 \leftarrow (1 - r) \bar g_2 + r g^2, \quad
    x = \frac{\bar g^2}{\bar g_2 + \epsilon},$$
    $$p \leftarrow p - \frac{g \min(\eta, x)}{\sqrt{\bar g_2} + \epsilon},
    \quad mem \leftarrow 1 + mem (1 - x)$$

    Per element: $r$ an addition and a division, $1 - r$ once (3); $\bar g$
    two multiplications and an addition (2 FLOPs with FMA, 3 without);
    $\bar g_2$ three multiplications and an addition (3, 4); $x$ 3; $p$ a
    min, a multiplication, a square root, an addition, a division and a
    subtraction (6); $mem$ a subtraction and a multiply-add (2, 3). States:
    $mem$, $\bar g$ (`g`), $\bar g_2$ (`g2`). Optimizer: ``SMORMS3``.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $19 n$ |
    | FLOPs (no FMA) | $22 n$ |
    | mread | $\|p\| + \|g\| + \|mem\| + \|\bar g\| + \|\bar g_2\|$ |
    | mwrite | $\|p\| + \|mem\| + \|\bar g\| + \|\bar g_2\|$ |
    | params | `lr`, `eps`, `fp32_update` |
    """
    return _rule_cost(rule, in_data, kwargs, (19, 22), 3, 3)


def calc_msvag(rule: MSVAGRule, in_data, **kwargs):
    r"""MSVAGRule

    $$m \leftarrow m + (1 - \beta)(g - m), \quad
    v \leftarrow v + (1 - \beta)(g^2 - v), \quad
    \hat m = \frac{m}{1 - \beta^t}, \quad \hat v = \frac{v}{1 - \beta^t},$$
    $$s = \frac{\hat v - \hat m^2}{1 - \rho}, \quad
    f = \mathrm{clip}\left(\frac{\hat m^2}{\hat m^2 + \rho s}, 0, 1\right),
    \quad p \leftarrow p - \eta (\eta_{lr} \hat m f + \lambda p)$$

    Per element: $m$ 2 FLOPs with FMA (3 without), $v$ 2 (4), $\hat m$,
    $\hat v$ and $\hat m^2$ one each, $s$ 2, $f$ a multiply-add, a division,
    a max and a min (4, 5), $p$ two multiplications and two multiply-adds
    (4, 6); $\rho$ and $\beta^t$ are scalars. The weight decay term is
    counted whatever `weight_decay_rate`. States: $m$, $v$. Optimizer:
    ``MSVAG``.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $17 n$ |
    | FLOPs (no FMA) | $23 n$ |
    | mread | $\|p\| + \|g\| + \|m\| + \|v\|$ |
    | mwrite | $\|p\| + \|m\| + \|v\|$ |
    | params | `lr`, `beta`, `eta`, `weight_decay_rate`, `fp32_update` |
    """
    return _rule_cost(rule, in_data, kwargs, (17, 23), 2, 2)


# Optimizer hooks: called per parameter (``call_for_each_param``, on the
# optimizer or on one update rule) or once for all (GradientClipping), they
# change the gradient in place.  in_data is (param, grad) as for the rules:
# the arrays the hook sees (a float32 master copy's under
# use_fp32_update).

def _hook_params(hook, names, kwargs):
    params = {k: _scalar(getattr(hook, k, None)) for k in names}
    params['timing'] = kwargs.get('timing')
    return params


def _hook_cost(in_data, kwargs, per_element, p_reads, g_reads):
    """``(flops, mread, mwrite)`` of a hook writing the gradient once,
    ``per_element`` FLOPs ``(FMA, no FMA)``, reading the parameter
    ``p_reads`` and the gradient ``g_reads`` times."""
    p, g = in_data
    n = g.size
    flops = n * per_element[0 if kwargs.get('fma_1flop', False) else 1]
    mread = elements(n * g_reads, g)
    if p_reads:
        mread += elements(p.size * p_reads, p)
    return flops, mread, elements(n, g)


def calc_weight_decay(hook: WeightDecay, in_data, **kwargs):
    r"""WeightDecay

    $$g \leftarrow g + \lambda p$$

    One fusable multiply-add per element (under loss scaling $\lambda$ is
    multiplied by the scale, a scalar).

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $n$ |
    | FLOPs (no FMA) | $2 n$ |
    | mread | $\|p\| + \|g\|$ |
    | mwrite | $\|g\|$ |
    | params | `rate`, `timing`: 'pre' or 'post' |
    """
    return _hook_cost(in_data, kwargs, (1, 2), 1, 1) + (
        _hook_params(hook, ('rate',), kwargs),)


def calc_lasso(hook: Lasso, in_data, **kwargs):
    r"""Lasso

    $$g \leftarrow g + \lambda\, \mathrm{sign}(p)$$

    Per element: a sign and a fusable multiply-add.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $2 n$ |
    | FLOPs (no FMA) | $3 n$ |
    | mread | $\|p\| + \|g\|$ |
    | mwrite | $\|g\|$ |
    | params | `rate`, `timing`: 'pre' or 'post' |
    """
    return _hook_cost(in_data, kwargs, (2, 3), 1, 1) + (
        _hook_params(hook, ('rate',), kwargs),)


def calc_gradient_hard_clipping(hook: GradientHardClipping, in_data,
                                **kwargs):
    r"""GradientHardClipping

    $$g \leftarrow \min(\max(g, l), u)$$

    Per element: a max and a min.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $2 n$ |
    | mread | $\|g\|$ |
    | mwrite | $\|g\|$ |
    | params | `lower_bound`, `upper_bound`, `timing`: 'pre' or 'post' |
    """
    return _hook_cost(in_data, kwargs, (2, 2), 0, 1) + (
        _hook_params(hook, ('lower_bound', 'upper_bound'), kwargs),)


def calc_gradient_noise(hook: GradientNoise, in_data, **kwargs):
    r"""GradientNoise

    $$g \leftarrow g + \nu$$

    The noise $\nu$ (shape and dtype of $g$) is a constant array read once,
    as the noise of ``F.gaussian`` and the masks of ``F.dropout`` are:
    drawing it is not counted. One addition per element.

    | Item | Value |
    |:-----|:------|
    | FLOPs | $n$ |
    | mread | $\|g\| + \|\nu\|$ |
    | mwrite | $\|g\|$ |
    | params | `eta`, `timing`: 'pre' or 'post' |
    """
    # the noise: one more read of the gradient's size and dtype
    return _hook_cost(in_data, kwargs, (1, 1), 0, 2) + (
        _hook_params(hook, ('eta',), kwargs),)


def calc_gradient_lars(hook: GradientLARS, in_data, **kwargs):
    r"""GradientLARS

    $$r = \frac{\|p\|_2}{\epsilon + \|g\|_2 + \lambda \|p\|_2}
    \;(\text{1 when } \|p\|_2 \le \theta), \quad
    g \leftarrow r (g + \lambda p)$$

    The two norms read $p$ and $g$ once each: a dot product of length $n$
    each ($n$ multiply-adds with FMA, $2n - 1$ FLOPs without); the rate is
    a scalar. Then per element a fusable multiply-add and a multiplication,
    reading $p$ and $g$ again. The weight decay term is counted whatever
    `weight_decay`.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $4 n$ |
    | FLOPs (no FMA) | $7 n - 2$ |
    | mread | $2 \|p\| + 2 \|g\|$ |
    | mwrite | $\|g\|$ |
    | params | `threshold`, `weight_decay`, `eps`, `timing`: 'pre' or 'post' |
    """
    p, g = in_data
    fma = kwargs.get('fma_1flop', False)
    flops, mread, mwrite = _hook_cost(in_data, kwargs, (2, 3), 2, 2)
    flops += dot_flops(1, p.size, fma) + dot_flops(1, g.size, fma)
    return flops, mread, mwrite, _hook_params(
        hook, ('threshold', 'weight_decay', 'eps'), kwargs)


def calc_gradient_clipping(hook: GradientClipping, in_data, **kwargs):
    r"""GradientClipping

    $$N = \sqrt{\textstyle\sum_k \|g_k\|_2^2}, \quad
    g_k \leftarrow g_k \min(1, \theta / N)$$

    Called once per update for all the parameters, recorded once per
    parameter $k$: its part of the global norm, a dot product of its
    gradient with itself ($n$ multiply-adds with FMA, $2n - 1$ FLOPs
    without) reading $g$ once, then the scaling, one multiplication per
    element reading and writing $g$. The scalars (the sum of the squares,
    the root, the rate) are not counted. The scaling is counted whatever
    the norm: Chainer skips it on the CPU when the norm is under the
    threshold (a value, which a calculator never reads) and always scales
    on the GPU.

    | Item | Value |
    |:-----|:------|
    | FLOPs (FMA) | $2 n$ |
    | FLOPs (no FMA) | $3 n - 1$ |
    | mread | $2 \|g\|$ |
    | mwrite | $\|g\|$ |
    | params | `threshold`, `timing`: 'pre' or 'post' |
    """
    p, g = in_data
    flops, mread, mwrite = _hook_cost(in_data, kwargs, (1, 1), 0, 2)
    flops += dot_flops(1, g.size, kwargs.get('fma_1flop', False))
    return flops, mread, mwrite, _hook_params(hook, ('threshold',), kwargs)


# Scratch of the updates: the temporaries of one parameter's update, from
# Chainer 7.8.1's code (UpdateRule.update and each rule's update_core_cpu,
# each hook's __call__), beyond what is alive after it.  On CuPy every rule
# and most hooks run one ElementwiseKernel, which makes no temporary.

def _numpy(kwargs):
    return kwargs.get('backend', 'numpy') != 'cupy'


def _fp32_master(rule, p):
    """Whether ``rule`` updates a float32 master copy of ``p``."""
    return bool(rule._use_fp32_update) and \
        p.dtype == _FLOAT16


def _update_scratch(rule, in_data, kwargs, core):
    r"""Scratch of one parameter's update by ``rule``: ``core(P, elide)``
    the temporaries of its ``update_core_cpu`` with $P$ the bytes of one
    array of the parameter's shape in the dtype it computes in, ``elide``
    whether NumPy reuses temporaries of $P$ bytes (``elides``).

    Under ``use_fp32_update()`` (float16 parameter) ``UpdateRule.update``
    adds the float32 copy of the gradient, alive throughout, and at the end
    the parameter cast back to float16 beside the old array: $4n +
    \max(core, 2n)$ on NumPy, $4n + 2n$ on CuPy."""
    p, _ = in_data  # the gradient has the parameter's shape and dtype
    n = p.size
    if _fp32_master(rule, p):
        big = 4 * n
        if not _numpy(kwargs):
            return big + 2 * n
        return big + max((core(big, elides(big)), 2 * n))
    if not _numpy(kwargs):
        return 0
    nbytes = n * p.dtype.itemsize
    return core(nbytes, elides(nbytes))


_FP32_DOC = r"""

    `use_fp32_update()` on a float16 parameter adds, on both backends, the
    float32 copy of the gradient ($4n$ bytes, alive through the update and
    the rule's hooks) and, at the end, the float16 cast of the master copy
    beside the old parameter array ($2n$): $4n + \max(S, 2n)$ with $S$ the
    figure above for the float32 master ($6n$ on CuPy)."""


def _doc(text):
    """A scratch function's docstring, the float32 master's paragraph
    appended."""
    def wrap(f):
        f.__doc__ = text + _FP32_DOC
        return f
    return wrap


def _one(size, elide):
    return size


def _two_or_three(size, elide):
    return (2 if elide else 3) * size


@_doc(r"""`lr * grad`: $\|p\|$ on NumPy, none on CuPy.

    NumPy: `param -= lr * grad` makes the product first. CuPy: one
    elementwise kernel.""")
def scratch_sgd(rule: SGDRule, in_data, **kwargs):
    return _update_scratch(rule, in_data, kwargs, _one)


@_doc(r"""`lr * grad`: $\|p\|$ on NumPy, none on CuPy.

    NumPy: `v -= lr * grad` makes the product first (`v` is scaled and
    `param` added to in place). CuPy: one elementwise kernel.""")
def scratch_momentum_sgd(rule: MomentumSGDRule, in_data, **kwargs):
    return _update_scratch(rule, in_data, kwargs, _one)


@_doc(r"""One product at a time: $\|p\|$ on NumPy, none on CuPy.

    NumPy: `lr * grad`, then `momentum * momentum * v`, then `(1 +
    momentum) * lr * grad`, each freed before the next. CuPy: one
    elementwise kernel.""")
def scratch_nesterov_ag(rule: NesterovAGRule, in_data, **kwargs):
    return _update_scratch(rule, in_data, kwargs, _one)


@_doc(r"""`lr * v`: $\|p\|$ on NumPy, none on CuPy.

    CuPy: one elementwise kernel.""")
def scratch_corrected_momentum_sgd(rule: CorrectedMomentumSGDRule, in_data,
                                   **kwargs):
    return _update_scratch(rule, in_data, kwargs, _one)


@_doc(r"""The step's temporaries: $2\|p\|$ (3 below 256 KiB) on NumPy,
    none on CuPy.

    NumPy: `grad * grad` ($\|p\|$), then `lr * grad` alive while
    `sqrt(h)` and `+ eps` are made; from 256 KiB NumPy's temporary elision
    writes `+ eps` and the division into their operand ($2\|p\|$), below it
    each is a new array ($3\|p\|$). CuPy: one elementwise kernel.""")
def scratch_ada_grad(rule: AdaGradRule, in_data, **kwargs):
    return _update_scratch(rule, in_data, kwargs, _two_or_three)


@_doc(r"""`dx` and one more temporary: $2\|p\|$ (3 below 256 KiB) on
    NumPy, none on CuPy.

    NumPy: `dx = sqrt((msdx + eps) / (msg + eps)) * grad` is alive to the
    end; `(1 - rho) * dx * dx` beside it is one temporary with NumPy's
    temporary elision (from 256 KiB), two below it. CuPy: one elementwise
    kernel.""")
def scratch_ada_delta(rule: AdaDeltaRule, in_data, **kwargs):
    return _update_scratch(rule, in_data, kwargs, _two_or_three)


@_doc(r"""`denom` and the step: $2\|p\|$ (3 below 256 KiB) on NumPy,
    none on CuPy.

    NumPy: `denom = sqrt(ms) + eps` (or `sqrt(ms + eps)`) alive while `lr *
    grad / denom` is made: one temporary with NumPy's temporary elision
    (from 256 KiB), two below it. CuPy: one elementwise kernel.""")
def scratch_rmsprop(rule: RMSpropRule, in_data, **kwargs):
    return _update_scratch(rule, in_data, kwargs, _two_or_three)


@_doc(r"""`lr * grad`, `n - g * g` and its root: $3\|p\|$ on NumPy, none
    on CuPy.

    NumPy: `lr * grad / sqrt(n - g * g + eps)` holds `lr * grad`, `g * g`
    and `n - g * g` (then the root in place of `g * g`) at once. CuPy: one
    elementwise kernel.""")
def scratch_rmsprop_graves(rule: RMSpropGravesRule, in_data, **kwargs):
    return _update_scratch(rule, in_data, kwargs, lambda size, e: 3 * size)


@_doc(r"""New state arrays beside the old ones: $6\|p\|$ (7 below 256 KiB)
    on NumPy, none on CuPy.

    NumPy: the rule makes new `g`, `g2` and `mem` arrays and puts them in
    its state at the end, so the old `g` and `g2` are alive beside the new
    ones; with `r = 1 / (mem + 1)` and `x` alive, `grad * min(x, lr)` and
    `sqrt(g2)` (then `+ eps` into it) make $6\|p\|$ above what is alive
    after the update; below 256 KiB `+ eps` and the division are new
    arrays too ($7\|p\|$). CuPy: one elementwise kernel updating the state
    in place.""")
def scratch_smorms3(rule: SMORMS3Rule, in_data, **kwargs):
    return _update_scratch(rule, in_data, kwargs,
                           lambda size, elide: (6 if elide else 7) * size)


@_doc(r"""`mt`, `vt`, `mt ** 2`, `s`, the factor and the step: $7\|p\|$ (8
    below 256 KiB) on NumPy, none on CuPy.

    NumPy: `mt`, `vt`, `mt2`, `s` and `factor` are alive to the end; the
    last line adds `lr * mt * factor` and `weight_decay_rate * param`
    ($7\|p\|$ with NumPy's temporary elision from 256 KiB; below it `* factor`
    and the sum are new arrays, $8\|p\|$). The NaN mask of `factor` ($n$
    bytes) is below that. CuPy: one elementwise kernel.""")
def scratch_msvag(rule: MSVAGRule, in_data, **kwargs):
    return _update_scratch(rule, in_data, kwargs,
                           lambda size, elide: (7 if elide else 8) * size)


@_doc(r"""The step and its products: $3P$ ($4P$ to $5P$ with a
    weight decay, $+2P$ for a float16 parameter) on NumPy, none on CuPy.

    NumPy, with $P$ the bytes of the parameter's shape in the dtype the
    rule computes in (float32 for a float16 parameter): `step =
    alpha_t / (sqrt(vhat) + eps)` alive while `step * m` and its scaled
    copy are made: $3P$, the most at any moment. A `weight_decay_rate`
    other than 0 makes `x[...] = a * x + b * y`: `a * param` (in the
    parameter's dtype) more, and below 256 KiB the sum too ($P$). A float16
    parameter without `use_fp32_update()` adds the float32 copy of the
    gradient and of `v` (`vhat.astype(float32)`), $2P$, alive throughout.
    NumPy's casting buffers of the in-place updates of float16 arrays by
    float32 ones are not counted (see docs/memory.md). CuPy: one
    elementwise kernel (its `_dummy` array is empty).""")
def scratch_adam(rule: AdamRule, in_data, **kwargs):
    p, _ = in_data
    half = p.dtype == _FLOAT16 and not _fp32_master(rule, p)

    def core(size, elide):
        if half:  # computes in float32; `size` is the float16 bytes
            size *= 2
            elide = elides(size)
        total = 3 * size
        if rule.hyperparam.weight_decay_rate:
            # `a * param` in the dtype of the array updated (the float16
            # parameter, or a float32 master copy)
            total += (_nbytes(p) if half else size) + (0 if elide else size)
        return total + (2 * size if half else 0)
    return _update_scratch(rule, in_data, kwargs, core)


# The hooks: on the arrays they are given (a float32 master copy's under
# use_fp32_update, whose gradient copy they then see alive: ``fp32_grad``).

def _hook_scratch(in_data, kwargs, numpy_bytes, cupy_bytes=0):
    """A hook's scratch: its own temporaries on the backend, plus the
    float32 gradient copy alive while a rule's hook runs on a float32
    master copy (``fp32_grad``)."""
    own = numpy_bytes if _numpy(kwargs) else cupy_bytes
    if kwargs.get('fp32_grad', False):
        _, g = in_data
        own += _nbytes(g)
    return own


def _nbytes(a):
    return a.size * a.dtype.itemsize


_HOOK_FP32_DOC = r"""

    On a rule under `use_fp32_update()` the hook runs on the float32 master
    copy while the rule's float32 copy of the gradient is alive: that copy
    ($\|g\|$) is added."""


def _hook_doc(text):
    def wrap(f):
        f.__doc__ = text + _HOOK_FP32_DOC
        return f
    return wrap


@_hook_doc(r"""`rate * p`: $\|p\|$ on NumPy, none on CuPy.

    CuPy: one elementwise kernel.""")
def scratch_weight_decay(hook: WeightDecay, in_data, **kwargs):
    p, _ = in_data
    return _hook_scratch(in_data, kwargs, _nbytes(p))


@_hook_doc(r"""`sign(p)` and `rate * sign`: $2\|p\|$ on NumPy, $\|p\|$ on
    CuPy.

    CuPy: `sign(p)`, then one elementwise kernel.""")
def scratch_lasso(hook: Lasso, in_data, **kwargs):
    p, _ = in_data
    return _hook_scratch(in_data, kwargs, 2 * _nbytes(p), _nbytes(p))


@_hook_doc(r"""The noise, drawn in float64 then cast: $(8 + s) n$ bytes for
    an itemsize $s$, on both backends.

    The default `exponential_decay_noise` draws `xp.random.normal(0, std,
    shape)` (float64) and casts it to the gradient's dtype; the float64
    draw is freed once the cast exists. A custom `noise_func` is counted
    the same.""")
def scratch_gradient_noise(hook: GradientNoise, in_data, **kwargs):
    _, g = in_data
    noise = g.size * (8 + g.dtype.itemsize)
    return _hook_scratch(in_data, kwargs, noise, noise)


def _ravel_copy(a):
    """Bytes ``a.ravel()`` copies: none for a contiguous array."""
    return 0 if c_strides(a.shape, a.dtype.itemsize) == strides_of(a) or \
        a.size <= 1 else _nbytes(a)


@_hook_doc(r"""`weight_decay * p`: $\|p\|$ on NumPy (whatever
    `weight_decay`), none on CuPy.

    NumPy: the two norms (`linalg.norm`, a dot product of the raveled
    array with itself) make no array for contiguous ones (a copy each of a
    non-contiguous one, not at once); `g += weight_decay * p` makes the
    product. CuPy: one elementwise kernel after the norms.""")
def scratch_gradient_lars(hook: GradientLARS, in_data, **kwargs):
    # A ravel copy (of p or g, both of p's size) is freed before the
    # product is made: the product is the most at any moment.
    p, _ = in_data
    return _hook_scratch(in_data, kwargs, _nbytes(p))


@_hook_doc(r"""None for a contiguous gradient.

    Both backends: the norm is a dot product of each raveled gradient with
    itself (a copy of a non-contiguous one), the scaling in place.""")
def scratch_gradient_clipping(hook: GradientClipping, in_data, **kwargs):
    _, g = in_data
    return _hook_scratch(in_data, kwargs, _ravel_copy(g), _ravel_copy(g))


@_hook_doc(r"""None.

    Both backends: `clip(grad, lower, upper, out=grad)` in place.""")
def scratch_gradient_hard_clipping(hook: GradientHardClipping, in_data,
                                   **kwargs):
    return _hook_scratch(in_data, kwargs, 0)
