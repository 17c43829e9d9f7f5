r"""Cluster-bootstrap intervals for every metric value: templates, and the
identity terms of groups with several, are resampled.

Templates are the unit of independent evidence (every example of a template
shares its wording), so the bootstrap resamples *templates*, not examples.
A group's terms are a sample too (a claim about "low-income countries" is
about more than the eight a suite lists), so where a group has several terms
in a template that the model tells apart, the terms are resampled as well:
a two-way cluster bootstrap (:mod:`bias_suite.stats.bootstrap.terms`;
``resample_terms``).

Resampling scheme
-----------------
Per attribute, in the order of first appearance in the data (whatever
attributes are requested, so an attribute's intervals never depend on the
others), one ``numpy.random.default_rng(seed)`` draws the template weights
(J uniform template draws per resample, counted; :func:`template_weights`)

.. math::

    W_b \sim \mathrm{Multinomial}(J, (1/J, \dots, 1/J)), \quad W \in \mathbb{N}^{B \times J},

where J is the number of templates of the attribute (complete or not) and
``W[b, j]`` is how often template j occurs in resample b. In resample b:

- every example of template j counts ``W[b, j]`` times (group view: sums of
  counts, score sets, AUCs, AEGs, W1 all use these multiplicities);
- the counterfactual tuples are the *observed* ones (drawn once by the
  engine's sampler with the same ``max_tuples`` and tuple seed), each counted
  ``W[b, j]`` times for its template j; a template drawn twice counts twice;
- per-template metrics (AvgIF, AvgScoreDiff) average the per-template values
  with weights ``W[b, j]``.

Where terms are resampled, a second generator (a child of the seed's seed
sequence, so ``W`` is the same with or without terms) draws term weights
``T[b, t]``: within each block of terms that share templates, its n terms
drawn n times with replacement and counted; a term alone in its block
weighs 1. Then an example of template j and term t counts
``W[b, j] * T[b, t]`` times (times its integer balance multiplier), a tuple
of template j counts ``W[b, j]`` times the product of its members' term
weights, and the per-template sets and means weigh their examples by
``T``. Attributes whose blocks have one term each are resampled exactly as
without terms.

Every metric value (per group, per pair and accumulated) is recomputed on every
resample and the percentile interval
:math:`[q_{\alpha/2}, q_{1-\alpha/2}]`, :math:`\alpha = 1 - \text{confidence}`,
fills ``ci_low``/``ci_high``.

Undefined values
----------------
A resample can make a value undefined (e.g. a group left with no gold
positives). Such replicates are dropped from the percentiles; when more than
1% of them are undefined the row's ``note`` says how many, and when more than
half are undefined no interval is given (note says why). If the observed value
is null the interval stays null. An attribute with fewer than 2 templates (or
fewer than 2 complete templates, for counterfactual metrics) gets no interval.

Two paths, same numbers
-----------------------
*Fast path* (every named metric and any user :class:`MetricSpec` built from the
registered score types): no Python loop over rows; the set metrics take
their resamples in chunks of ``RESAMPLES_PER_CHUNK``.
With term weights the same quantities are weighted by ``T`` as well
(:mod:`bias_suite.stats.bootstrap.term_kernels`): rates from per-(template, term)
count sums, ``((W @ C) * T)`` summed per group; set metrics with item
weights ``W * T``; tuple means from one product of the tuple weights with
the per-tuple values of every tuple metric; per-template W1 linear in ``T``
where a template holds every term of a block; the AEG's own pairs of a
template from one pass over its items weighted by ``T``.

- Rate scores: per-(template, group) count sums ``C`` once; ``W @ C`` gives the
  (B, k) group sums of every resample and the score functions and
  comparisons of :mod:`bias_suite.metrics` (numpy-vectorized) are applied to
  them unchanged.
- Tuple metrics: the per-tuple values d are computed once; a resample value is
  :math:`\sum_j W_{bj} S_j / \sum_j W_{bj} M_j` with :math:`S_j` the sum of d
  over template j's tuples and :math:`M_j` their number. Per-template metrics
  likewise from the per-template values.
- Set metrics (W1, AEG, the AUCs): the scores of one class are sorted once;
  one compiled loop over the items in that order
  (:mod:`bias_suite.stats.bootstrap.kernels`, numba) reads each item's
  weight ``W[b, template(i)]`` (times its term's draws and its balance
  multiplier) for every resample b side by side and keeps the resamples'
  running sums (exact integers). W1 is
  :math:`\sum_i |F_P(x_i) - F_Q(x_i)| (x_{i+1} - x_i)` over the sorted items;
  Mann-Whitney U (ties 1/2) is
  :math:`\sum_{q \in Q} w_q (C_P(<x_q) + \tfrac12 C_P(=x_q))`, exact in
  integers, for all groups at once; AUC = U/(n_P n_N), AEG = 1/2 - U/(|B||G|),
  the same formulas as :class:`bias_suite.metrics.sets.BlockHist` (whose
  dense (group x distinct value) count tensors would cost k times more per
  resample for U). Rest-of-group sets follow from linearity,
  U(rest over t) = U(all over t) - U(t over t), U(A over A) = |A|^2 / 2 and
  U(A over B) + U(B over A) = |A||B|. A pair's W1 is integrated only where
  an item of one of its two groups moves ``|F_a - F_b|``. Matrix products run on one BLAS thread
  (threadpoolctl): multi-threaded BLAS gains nothing on these skinny products
  and is very slow on a busy machine.

Several cores: the compiled loops cut the resamples into blocks, one
thread each, and a large evaluation runs its attributes (each attribute's
metrics of one input kind) in forked processes
(:func:`~bias_suite.stats.bootstrap.resamples.forked_map`), ``n_jobs`` or
``$BIAS_SUITE_JOBS`` of them (default one per core, at most 4). Each
resample's value comes from the same operations either way, so the
results do not depend on the count. A second bootstrap of the same data
(the reading beyond the listed terms) reuses the evidence counts the
first kept on it.

*Generic path* (any other user-defined metric kind, or ``method="generic"``):
for every resample it builds the resampled :class:`AttributeData` (rows of
template j repeated ``W[b, j]`` times as distinct template copies, in each
copy a row of term t repeated ``T[b, t]`` times, the observed tuples
repeated with them) and calls the engine's ``metric_rows`` - slower,
and correct by construction. The test suite checks that both paths give the
same replicate values for every named metric.

Verdict basis
-------------
:func:`bootstrap` also returns, per bootstrapped row, what
:mod:`bias_suite.stats.verdicts` needs: the fraction of undefined replicates,
the number of templates, whether terms were resampled (``terms_resampled``),
and - where the row's value is unsigned but a signed
quantity underlies it - the interval of that signed quantity from the same
resamples: phi(group) - phi(background) for BCM/VBCM with d = abs,
phi(first) - phi(second) for PCM pairs with d = abs, in the counterfactual
view the mean over variants of f(first) - f(second) (CFGap, CFGap-TC, PertSS)
or over templates of the difference of the template means (AvgScoreDiff),
and for the AUC metrics
(SubgroupAUC, BPSN, BNSP) the paired contrast AUC(group) - AUC(all examples of
the attribute).

The fast path lives in :mod:`bias_suite.stats.bootstrap.fast`, the
weighted item sets of the set metrics in
:mod:`bias_suite.stats.bootstrap.weighted_items`, the prepared attribute in
:mod:`bias_suite.stats.bootstrap.prepared`; classifiers and taggers
both take it, one prepared input per input kind a family gives (a tagger's
span counts, token probabilities and identity-term counts).
:func:`resampling_bootstrap` evaluates every resample again instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ...exceptions import MetricError
from ...metrics.catalog import MetricSpec, get_metric
from ...families import as_scored, family_of
from ...metrics.engine import attribute_data, metric_input_kind, metric_values, resolve_metrics
from ...metrics.generalized import GENERALIZED
from ...metrics.scores import get_score
from ...suites.views import counterfactual_view, group_order
from .fast import fast_attribute
from .prepared import BACKGROUND, Prepared, fast_supported
from .weighted_items import item_multipliers
from .generic import generic_attribute, resampled_attribute
from .._common import single_threaded_blas
from ..evidence import event_templates, paired_bounds
from .intervals import fill as _fill
from .kernels import kernel_threads, load_compiler
from .resamples import (MIN_FORKED_WORK, AttributeResamples, evaluate_resamples, forked_map,
                         kernel_thread_count, resample_jobs)
from .terms import draw_term_weights, resample_terms_option
from ..defaults import DEFAULT_B  # the one default of B (evaluate, run, compare and the CLI read it too)

__all__ = [
    "BootstrapResult", "bootstrap", "resampling_bootstrap", "bootstrap_intervals", "bootstrap_replicates",
    "template_weights", "DEFAULT_B", "resampled_attribute", "prepare_attribute",
]



# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------
@dataclass
class BootstrapResult:
    """What :func:`bootstrap` returns.

    results : the input results with ``ci_low``/``ci_high`` filled (and notes).
    basis : one row per bootstrapped value: ``metric, attribute, class, group,
        undefined`` (fraction of undefined replicates), ``templates`` (J),
        ``B``, ``confidence``, ``terms_resampled`` (whether the attribute's
        terms were resampled), and where available ``basis`` (what the signed
        quantity is), ``basis_value``, ``basis_low``, ``basis_high``.
    keys, replicates : with ``keep_replicates=True``: a frame of (attribute,
        metric, class, group) and the (len(keys), B) replicate values.
    basis_replicates : with ``keep_replicates=True``: the (len(keys), B)
        replicates of each key's signed basis (NaN rows for keys without one),
        from the same resamples.

    The resamples depend on the examples alone (their attributes, templates
    and order) and the seed, never on the predictions: two models' scored
    examples in the same order give the same resamples, so their replicates
    pair up column by column (:mod:`bias_suite.comparison`).
    """

    results: pd.DataFrame
    basis: pd.DataFrame
    keys: pd.DataFrame | None = None
    replicates: np.ndarray | None = None
    basis_replicates: np.ndarray | None = None


def template_weights(n_templates: int, B: int, rng: np.random.Generator) -> np.ndarray:
    """(B, J) multinomial template counts: each row resamples J templates
    with replacement (row sums are J), drawn as J uniform template indices
    per row (``rng.integers``) and counted."""
    J = int(n_templates)
    if J == 0:
        return np.zeros((B, 0), dtype=np.int64)
    idx = rng.integers(J, size=(B, J)) + (np.arange(B) * J)[:, None]
    return np.bincount(idx.ravel(), minlength=B * J).reshape(B, J)


def bootstrap_intervals(scored, results: pd.DataFrame, **options) -> pd.DataFrame:
    """Cluster-bootstrap percentile intervals for the metric rows of ``results``:
    :func:`bootstrap`'s ``results``, with the same options.

    Parameters
    ----------
    scored : scored examples (anything :func:`bias_suite.metrics.compute` takes).
    results : tidy results of ``evaluate`` on the same data.
    metrics : names or :class:`MetricSpec` objects to bootstrap (default: every
        metric of ``results`` found in the registry; pass user-defined specs
        that are not registered here).
    B : number of template resamples.
    confidence : interval level (percentile interval).
    seed : seed of the resampling generator (and, unless ``tuple_seed`` is
        given, of the tuple sampler, as in ``evaluate(seed=...)``).
    max_tuples, group_order_override : as given to ``evaluate``.
    method : "auto" (fast path where possible), "fast" (error if a metric
        needs the generic path) or "generic" (resample, then the engine).
    resample_terms : "auto" (default: the terms too, in the blocks of a
        group's terms that the model tells apart;
        :mod:`bias_suite.stats.bootstrap.terms`), True (every block of
        several terms, and every example must have a term id), False
        (templates only), or a mapping {attribute: blocks}.
    tuples : the counterfactual tuples of a resample: "observed" (the
        tuples drawn once from the data, each counted with its template's
        weight: the closed form), "redraw" (drawn again from every
        resample, which is evaluated again: :func:`resampling_bootstrap`,
        so the intervals include the tuple sampling), or "auto" (default:
        "observed" where the data's family has the closed form, else
        "redraw").

    Returns
    -------
    DataFrame: the rows of ``results`` (same order, same columns) with
    ``ci_low``/``ci_high`` filled for the bootstrapped rows.

    Examples
    --------
    >>> res = evaluate(scored, metrics=["FNED", "CFGap"])  # doctest: +SKIP
    >>> res = bootstrap_intervals(scored, res, B=200, seed=0)  # doctest: +SKIP
    """
    return bootstrap(scored, results, **options).results


def bootstrap(
    scored,
    results: pd.DataFrame | None = None,
    *,
    metrics=None,
    B: int = DEFAULT_B,
    confidence: float = 0.95,
    seed: int = 0,
    max_tuples: int | None = 100,
    group_order_override: Mapping[str, Sequence[str]] | None = None,
    tuple_seed: int | None = None,
    method: str = "auto",
    keep_replicates: bool = False,
    n_jobs: int | None = None,
    weighting: str = "balanced",
    resample_terms="auto",
    tuples: str = "auto",
) -> BootstrapResult:
    """Like :func:`bootstrap_intervals`, returning a :class:`BootstrapResult`
    (intervals, the verdict basis and optionally the replicate values).
    ``results=None`` evaluates first. ``n_jobs``: threads of the closed
    form's compiled loops (default: ``$BIAS_SUITE_JOBS``, else one per
    core, at most 4; the values do not depend on it) and processes of the
    resampling path (families without the closed form; see
    :func:`resampling_bootstrap`). ``weighting``: the group view's example
    weights, as given to ``evaluate``. ``resample_terms``, ``tuples``: as in
    :func:`bootstrap_intervals`."""
    _check(B, confidence, method)
    resample_terms = resample_terms_option(resample_terms)
    data = as_scored(scored)
    tseed = seed if tuple_seed is None else tuple_seed
    if _redraw_tuples(data, tuples):
        return resampling_bootstrap(data, results, metrics=metrics, B=B, confidence=confidence, seed=seed,
                                    max_tuples=max_tuples, group_order_override=group_order_override,
                                    tuple_seed=tseed, keep_replicates=keep_replicates, n_jobs=n_jobs,
                                    weighting=weighting, resample_terms=resample_terms)
    if results is None:
        from ...metrics.engine import evaluate

        results = evaluate(data, metrics=metrics, max_tuples=max_tuples, seed=tseed,
                           group_order_override=group_order_override, weighting=weighting)
    specs = _specs_for(results, metrics)
    wanted_attrs = [a for a in pd.unique(results["attribute"]) if isinstance(a, str)]
    asked: dict = {}  # what the rows ask for: {attribute: {metric: classes}}
    for a, m, c in results[["attribute", "metric", "class"]].drop_duplicates().itertuples(index=False, name=None):
        asked.setdefault(a, {}).setdefault(m, set()).add(c)
    weights = _draw_weights(data, B, seed)
    terms = draw_term_weights(data, B, seed, resample_terms)
    with single_threaded_blas(), kernel_threads(kernel_thread_count(n_jobs)):
        keys, reps, extra = _replicates(data, specs, weights, attributes=wanted_attrs, asked=asked, method=method,
                                        max_tuples=max_tuples, tuple_seed=tseed,
                                        group_order_override=group_order_override, weighting=weighting, terms=terms,
                                        confidence=confidence, n_jobs=n_jobs)
    out, basis = _fill(results, keys, reps, extra, confidence, B)
    if not keep_replicates:
        return BootstrapResult(out, basis)
    kf = pd.DataFrame(keys, columns=["attribute", "metric", "class", "group"])
    return BootstrapResult(out, basis, kf, reps, _basis_replicates(keys, extra, B))


def resampling_bootstrap(data, results=None, *, metrics=None, B: int = DEFAULT_B, confidence: float = 0.95, seed: int = 0,
                         max_tuples: int | None = 100, group_order_override=None, tuple_seed: int | None = None,
                         keep_replicates: bool = False, n_jobs: int | None = None,
                         weighting: str = "balanced", resample_terms="auto") -> BootstrapResult:
    """Cluster bootstrap over templates (and terms) by evaluating every
    resample again: the path of ``bootstrap(..., tuples="redraw")`` and of
    any family without the closed form.

    Same resampling units and percentile intervals as the closed-form path: in replicate b, every template of an attribute is drawn
    ``W[b, j]`` times (multinomial over the J templates, the same weights
    :func:`bootstrap` draws), each copy becomes a template of its own, every
    example of term t in it is repeated ``T[b, t]`` times (the term weights
    of :mod:`bias_suite.stats.bootstrap.terms`, where terms are resampled), and
    the metrics are computed again. Unlike the closed-form path, the counterfactual tuples of a copied template
    are drawn again (``max_tuples``), so the intervals include the tuple
    sampling too. The verdict basis of a metric with d = abs (per group or
    pair) comes from a signed twin (the same metric with d = x - y) evaluated
    on the same resamples: phi(first) - phi(second) for pairs,
    phi(group) - phi(background) for groups. Cost: B evaluations of each
    attribute (docs/scale.md measures them), spread over
    ``n_jobs`` processes (default: ``$BIAS_SUITE_JOBS``, else one per core
    for large inputs; :mod:`bias_suite.stats.bootstrap.resamples`) with the same
    values as one process.
    """
    from ...metrics.engine import evaluate

    tseed = seed if tuple_seed is None else tuple_seed
    if results is None:
        results = evaluate(data, metrics=metrics, max_tuples=max_tuples, seed=tseed,
                           group_order_override=group_order_override, weighting=weighting)
    specs = _specs_for(results, metrics)
    cf_names = {s.name for s in specs if s.view == "counterfactual"}
    attrs = [a for a in pd.unique(results["attribute"]) if isinstance(a, str)]
    twins = _signed_twins(specs)
    run_specs = specs + [t for _, t in twins.values()]
    observed = {}
    if twins:
        obs = metric_values(data, metrics=[t for _, t in twins.values()], attributes=attrs, max_tuples=max_tuples,
                            seed=tseed, group_order_override=group_order_override, weighting=weighting)
        for a, m, c, g, v in zip(obs["attribute"], obs["metric"], obs["class"], obs["group"], obs["value"]):
            if isinstance(g, str) and v is not None and not pd.isna(v):
                observed[(a, m, c, g)] = float(v)
    weights = _draw_weights(data, B, seed)
    terms = draw_term_weights(data, B, seed, resample_terms)
    cfs = counterfactual_view(data.frame, max_tuples=max_tuples, seed=tseed, group_order_override=group_order_override)
    fr = data.frame
    attr_col = fr["attribute"].to_numpy(dtype=object)
    template_col = fr["template"].to_numpy(dtype=object)
    parts = []
    for a in attrs:
        rows = np.flatnonzero(attr_col == a)
        codes, _names = pd.factorize(pd.Series(template_col[rows], dtype=object), sort=False)
        at, T = terms[a]
        parts.append(AttributeResamples(a, rows, codes, template_col[rows].astype(str), weights[a],
                                        None if T is None else at.codes, T))
    every = evaluate_resamples(data, parts, run_specs, max_tuples=max_tuples, seed=tseed,
                               group_order_override=group_order_override, n_jobs=n_jobs, weighting=weighting)
    keys, rows_out, extra = [], [], {}
    for a, part, vals in zip(attrs, parts, every):
        W = part.weights
        J, Jc = int(W.shape[1]), len(cfs[a].templates) if a in cfs else 0
        evidence = _events(data, a, cfs[a], part.codes, J, specs, group_order_override, weighting, confidence)
        for key, v in vals.items():
            if key[1] in twins:
                continue
            keys.append(key)
            rows_out.append(v)
            extra[key] = {"templates": Jc if key[1] in cf_names else J, "terms_resampled": part.term_weights is not None,
                          **evidence.get(key[1:], {})}
        for key, v in vals.items():  # the signed basis of the metric each twin shadows
            if key[1] not in twins or key[3] is None or key not in observed:
                continue
            spec, _ = twins[key[1]]
            sign = 1.0 if spec.generalized == "PCM" else -1.0  # d(background, group): report group - background
            own = (key[0], spec.name, key[2], key[3])
            phi = getattr(spec.phi, "name", "phi")
            text = (f"{phi}(first) - {phi}(second)" if spec.generalized == "PCM"
                    else f"{phi}(group) - {phi}({'all' if BACKGROUND.get(spec.background) == 'all' else 'rest'})")
            extra.setdefault(own, {}).update(basis=text, basis_reps=sign * v, basis_obs=sign * observed[key])
    reps = np.vstack(rows_out) if rows_out else np.zeros((0, B))
    out, basis = _fill(results, keys, reps, extra, confidence, B)
    if not keep_replicates:
        return BootstrapResult(out, basis)
    return BootstrapResult(out, basis, pd.DataFrame(keys, columns=["attribute", "metric", "class", "group"]), reps,
                           _basis_replicates(keys, extra, B))


def _basis_replicates(keys, extra, B: int) -> np.ndarray:
    """(len(keys), B): each key's signed-basis replicates, NaN without one."""
    out = np.full((len(keys), B), np.nan)
    for i, k in enumerate(keys):
        v = extra.get(k, {}).get("basis_reps")
        if v is not None:
            out[i] = v
    return out


def _events(data, attribute, cf, codes, J, specs, group_order_override, weighting, confidence=0.95) -> dict:
    """:func:`_row_evidence` of every metric of one attribute, for the
    resampling path (which has no prepared attribute data)."""
    groups = group_order(data.frame, attribute, group_order_override)
    tpl = np.asarray(codes, dtype=np.int64)
    inputs: dict = {}  # the engine's input for each kind of metric, built when first needed
    out: dict = {}
    for s in specs:
        probabilities, _, _ = metric_input_kind(data, s)
        if probabilities is None:  # not computed on this data: nothing to count
            continue
        if probabilities not in inputs:
            inputs[probabilities] = attribute_data(data, attribute, cf, groups, probabilities=probabilities,
                                                   weighting=weighting)
        _row_evidence(s, inputs[probabilities], tpl, J, confidence, out)
    return out


def _row_evidence(spec, ad, tpl, J, confidence, into: dict, classes=None, known=None) -> None:
    """Add to ``into`` {(metric, class, group): {"event_templates": templates
    with events, "paired": the exact paired bound of a rate comparison}} of
    one metric (:mod:`bias_suite.stats.evidence`); ``classes``: only these
    (None: all); ``known``: the two counts' results where already at hand
    (:func:`_known_evidence`)."""
    events, paired = known if known is not None else _evidence_of(spec, ad, tpl, J, confidence)
    for (c, g), n in events.items():
        if classes is None or c in classes:
            into.setdefault((spec.name, c, g), {})["event_templates"] = n
    for (c, g), m in paired.items():
        if classes is None or c in classes:
            into.setdefault((spec.name, c, g), {})["paired"] = m


def _evidence_of(spec, ad, tpl, J, confidence) -> tuple:
    return event_templates(spec, ad, tpl, J), paired_bounds(spec, ad, tpl, J, confidence)


def _evidence_key(attribute, kind, spec, prep, confidence, weighting, view):
    """What a metric's evidence on an attribute depends on (the observed
    data and how it is viewed, never the resamples or the term weights), or
    None where a user's metric cannot be a key."""
    key = (attribute, kind, spec, float(confidence), tuple(prep.ad.groups), weighting, view)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _known_evidence(data) -> dict:
    """The evidence already counted on ``data`` (a second bootstrap of the
    same data, such as the reading beyond the listed terms, reuses it)."""
    return data.__dict__.setdefault("_bootstrap_evidence", {})


def _signed_twins(specs) -> dict:
    """{twin name: (spec, twin)}: for each metric comparing per group or pair
    with d = abs, the same metric with d = x - y (its signed quantity)."""
    import dataclasses

    out = {}
    for sp in specs:
        if sp.comparison == "abs" and sp.generalized in ("PCM", "BCM", "VBCM") and not sp.per_template:
            twin = dataclasses.replace(sp, name=f"{sp.name}\x00signed", comparison="diff", signed=True)
            out[twin.name] = (sp, twin)
    return out


def bootstrap_replicates(
    scored,
    *,
    metrics=None,
    B: int = DEFAULT_B,
    seed: int = 0,
    max_tuples: int | None = 100,
    group_order_override: Mapping[str, Sequence[str]] | None = None,
    tuple_seed: int | None = None,
    attributes: Iterable[str] | None = None,
    method: str = "auto",
    resample_terms="auto",
) -> tuple[pd.DataFrame, np.ndarray]:
    """The replicate values themselves: a frame of keys (attribute, metric,
    class, group) and an array (len(keys), B); NaN where undefined. Same
    resamples as :func:`bootstrap` with the same seed and ``resample_terms``."""
    _check(B, 0.95, method)
    data = as_scored(scored)
    if not family_of(data).fast_bootstrap:
        raise MetricError(f"replicate values come from the closed-form bootstrap; {family_of(data).name} data is "
                          "resampled and evaluated again (bootstrap(..., keep_replicates=True))")
    specs = resolve_metrics(metrics)
    attrs = data.attributes() if attributes is None else ([attributes] if isinstance(attributes, str) else list(attributes))
    weights = _draw_weights(data, B, seed)
    terms = draw_term_weights(data, B, seed, resample_terms)
    with single_threaded_blas():
        keys, reps, _ = _replicates(data, specs, weights, attributes=attrs, method=method, max_tuples=max_tuples,
                                    tuple_seed=seed if tuple_seed is None else tuple_seed,
                                    group_order_override=group_order_override, terms=terms)
    return pd.DataFrame(keys, columns=["attribute", "metric", "class", "group"]), reps


# --------------------------------------------------------------------------
# setup
# --------------------------------------------------------------------------
def _redraw_tuples(data, tuples: str) -> bool:
    """Whether the resamples draw their counterfactual tuples again
    (``tuples`` of :func:`bootstrap_intervals`)."""
    if tuples not in ("auto", "observed", "redraw"):
        raise MetricError(f"tuples must be 'auto', 'observed' or 'redraw', got {tuples!r}")
    closed = family_of(data).fast_bootstrap
    if tuples == "observed" and not closed:
        raise MetricError(f"{family_of(data).name} data has no closed-form bootstrap: its resamples are evaluated "
                          "again and draw their tuples again (tuples='redraw' or 'auto')")
    return tuples == "redraw" or not closed


def _check(B, confidence, method):
    if not isinstance(B, (int, np.integer)) or B < 1:
        raise MetricError(f"B (number of bootstrap resamples) must be a positive integer, got {B!r}")
    if not 0.0 < float(confidence) < 1.0:
        raise MetricError(f"confidence must lie in (0, 1), got {confidence!r}")
    if method not in ("auto", "fast", "generic"):
        raise MetricError(f"method must be 'auto', 'fast' or 'generic', got {method!r}")


def _specs_for(results: pd.DataFrame, metrics) -> list[MetricSpec]:
    """The specs whose rows get intervals: ``metrics`` if given, else every
    generalized-metric name in ``results`` that the registry knows."""
    if metrics is not None:
        return resolve_metrics(metrics)
    specs = []
    rows = results[results["family"].isin(GENERALIZED)]
    for name in pd.unique(rows["metric"]):
        try:
            specs.append(get_metric(name))
        except MetricError:
            continue  # a user-defined metric that is not registered: pass it in `metrics`
    return specs


def _draw_weights(data, B: int, seed: int) -> dict:
    """Template weights per attribute, drawn in order of first appearance."""
    rng = np.random.default_rng(seed)
    fr = data.frame
    attr = fr["attribute"].to_numpy(dtype=object)
    tpl = fr["template"].to_numpy(dtype=object)
    out = {}
    for a in data.attributes():
        J = len(pd.unique(pd.Series(tpl[attr == a], dtype=object)))
        out[a] = template_weights(J, B, rng)
    return out


def prepare_attribute(data, cf, attribute, group_order_override, weighting="balanced", terms=None,
                      probabilities=True) -> Prepared:
    """One attribute's arrays; ``terms`` (:class:`~bias_suite.stats.bootstrap.terms.AttributeTerms`):
    every row's term, where terms are resampled; ``probabilities``: the
    input kind (:func:`~bias_suite.metrics.engine.metric_input_kind`)."""
    groups = group_order(data.frame, attribute, group_order_override)
    ad = attribute_data(data, attribute, cf, groups, probabilities=probabilities, weighting=weighting)
    fr = data.frame
    rows = np.flatnonzero(fr["attribute"].to_numpy(dtype=object) == attribute)
    codes, names = pd.factorize(pd.Series(fr["template"].to_numpy(dtype=object)[rows], dtype=object), sort=False)
    index = {t: i for i, t in enumerate(names)}
    complete = np.array([index[t] for t in ad.templates], dtype=np.int64)
    if terms is None:
        return Prepared(ad, np.asarray(codes, dtype=np.int64), len(names), complete)
    return Prepared(ad, np.asarray(codes, dtype=np.int64), len(names), complete, terms.codes,
                    terms.group_codes(ad.groups))


def _from_items(spec) -> bool:
    """Whether a metric's replicates come from weighted probability items
    (group view: the set and AUC metrics), whose integer weights must hold
    the template balance."""
    return spec.view == "group" and get_score(spec.score).weighted_from == "items"


def _kind_replicates(prep, specs, W, T, method, vals, basis, classes=None):
    """The replicates of ``specs`` on one prepared input, by the closed form
    where it holds (only the ``classes`` {metric: classes} asked, None:
    all), else by the generic path; into ``vals`` and ``basis``."""
    fast = [s for s in specs if method != "generic" and fast_supported(s)]
    if any(_from_items(s) for s in fast):
        try:
            item_multipliers(prep.ad.row_weight, prep.ad.item_row)
        except MetricError:  # a template balance the integer closed form cannot hold: the generic path
            fast = [s for s in fast if not _from_items(s)]
    if method == "fast" and len(fast) < len(specs):
        slow = [s.name for s in specs if s not in fast]
        raise MetricError(f"metrics {slow} need the generic bootstrap path (method='auto' or 'generic')")
    slow = [s for s in specs if s not in fast]
    if fast:
        v, bs = fast_attribute(prep, fast, W, T, classes=classes)
        vals.update(v)
        basis.update(bs)
    if slow:
        v, bs = generic_attribute(prep, slow, W, T)
        vals.update(v)
        basis.update(bs)


def _replicates(data, specs, weights, *, attributes, method, max_tuples, tuple_seed, group_order_override,
                weighting="balanced", terms=None, confidence=0.95, asked=None, n_jobs=None):
    """keys [(attribute, metric, class, group)], values (len(keys), B), extra
    {key: dict(basis=..., basis_obs=..., basis_reps=..., templates=J)};
    ``terms`` {attribute: (AttributeTerms, T or None)}; ``asked``
    {attribute: {metric name: classes}}: only those metrics of an attribute,
    and on the closed form only those classes of them (None: every one of
    ``specs``, every class); ``n_jobs``: processes (as in :func:`bootstrap`)."""
    cfs = counterfactual_view(data.frame, max_tuples=max_tuples, seed=tuple_seed,
                              group_order_override=group_order_override)
    # a metric the data's family does not report (the identity-span metrics of a classifier) has no replicates
    specs = [s for s in specs if metric_input_kind(data, s)[0] is not None]
    # the units of work: each attribute's metrics of one input kind (a classifier: one per attribute),
    # independent of each other, so they may run in forked processes (:func:`forked_map`)
    units = []
    attr_rows = data.frame["attribute"].to_numpy(dtype=object)
    for a in attributes:
        chosen = specs if asked is None else [s for s in specs if s.name in asked.get(a, ())]
        by_kind: dict = {}  # the metrics of each input the family gives
        for s in chosen:
            by_kind.setdefault(metric_input_kind(data, s)[0], []).append(s)
        n_rows = int(np.count_nonzero(attr_rows == a))
        units.extend((a, kind, kind_specs, n_rows * len(kind_specs)) for kind, kind_specs in by_kind.items())

    def unit_replicates(unit):
        a, kind, kind_specs, _ = unit
        at, T = (terms or {}).get(a, (None, None))
        vals, basis, evidence = {}, {}, {}
        prep = prepare_attribute(data, cfs[a], a, group_order_override, weighting, at if T is not None else None,
                                 probabilities=kind)
        classes = None if asked is None else asked.get(a)
        _kind_replicates(prep, kind_specs, weights[a], T, method, vals, basis, classes)
        fresh = {}  # evidence counted here, kept on the data by the caller (a forked process cannot)
        for s in kind_specs:
            key = _evidence_key(a, kind, s, prep, confidence, weighting, (max_tuples, tuple_seed))
            got = known.get(key) if key is not None else None
            if got is None:
                got = _evidence_of(s, prep.ad, prep.tpl, prep.J, confidence)
                if key is not None:
                    fresh[key] = got
            _row_evidence(s, prep.ad, prep.tpl, prep.J, confidence, evidence,
                          None if classes is None else classes.get(s.name), known=got)
        # the replicates as two arrays rather than thousands (a forked process sends them back pickled)
        names = list(vals)
        B = weights[a].shape[0]
        V = np.vstack([vals[k] for k in names]) if names else np.zeros((0, B))
        with_reps = [k for k, e in basis.items() if "basis_reps" in e]
        BR = np.vstack([basis[k]["basis_reps"] for k in with_reps]) if with_reps else np.zeros((0, B))
        basis = {k: {f: v for f, v in e.items() if f != "basis_reps"} for k, e in basis.items()}
        return names, V, with_reps, BR, basis, evidence, prep.J, len(prep.complete_idx), fresh

    B = next(iter(weights.values())).shape[0] if weights else 0
    jobs = resample_jobs(n_jobs, sum(u[3] for u in units) * B, max(len(units), 1), min_work=MIN_FORKED_WORK)
    if jobs > 1:
        load_compiler()  # once here, not once in every forked process
    known = _known_evidence(data)
    done = forked_map(unit_replicates, units, jobs, cost=[u[3] for u in units])
    keys, rows, extra = [], [], {}
    for (a, _, kind_specs, _), (names, V, with_reps, BR, basis, evidence, J, n_complete, fresh) in zip(units, done):
        known.update(fresh)
        for i, k in enumerate(with_reps):
            basis[k]["basis_reps"] = BR[i]
        _, T = (terms or {}).get(a, (None, None))
        cf_names = {s.name for s in kind_specs if s.view == "counterfactual"}
        rows.append(V)
        for m, c, g in names:
            key = (a, m, c, g)
            keys.append(key)
            e = {"templates": int(n_complete if m in cf_names else J), "terms_resampled": T is not None,
                 **evidence.get((m, c, g), {})}
            if (m, c, g) in basis:
                e.update(basis[(m, c, g)])
            extra[key] = e
    values = np.vstack(rows) if rows else np.zeros((0, B))
    return keys, values, extra
