r"""Cluster-bootstrap intervals for every metric value: templates are resampled.

Templates are the unit of independent evidence (every example of a template
shares its wording), so the bootstrap resamples *templates*, not examples.

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
registered score types): no Python loop over rows; resamples are processed in
chunks (about ``CHUNK_ELEMENTS`` resample x item cells, to stay in cache).

- Rate scores: per-(template, group) count sums ``C`` once; ``W @ C`` gives the
  (B, k) group sums of every resample and the score functions and
  comparisons of :mod:`bias_suite.metrics` (numpy-vectorized) are applied to
  them unchanged.
- Tuple metrics: the per-tuple values d are computed once; a resample value is
  :math:`\sum_j W_{bj} S_j / \sum_j W_{bj} M_j` with :math:`S_j` the sum of d
  over template j's tuples and :math:`M_j` their number. Per-template metrics
  likewise from the per-template values.
- Set metrics (W1, AEG, the AUCs): the scores of one class are sorted once;
  each chunk of resamples gathers the item weights ``W[b, template(i)]`` in
  sorted order and uses integer cumulative sums. W1 is
  :math:`\sum_i |F_P(x_i) - F_Q(x_i)| (x_{i+1} - x_i)` over the sorted items;
  Mann-Whitney U (ties 1/2) is
  :math:`\sum_{q \in Q} w_q (C_P(<x_q) + \tfrac12 C_P(=x_q))`, exact in
  integers, for all groups at once; AUC = U/(n_P n_N), AEG = 1/2 - U/(|B||G|),
  the same formulas as :class:`bias_suite.metrics.sets.BlockHist` (whose
  dense (group x distinct value) count tensors would cost k times more per
  resample for U). Rest-of-group sets follow from linearity,
  U(rest over t) = U(all over t) - U(t over t), U(A over A) = |A|^2 / 2 and
  U(A over B) + U(B over A) = |A||B|. Matrix products run on one BLAS thread
  (threadpoolctl): multi-threaded BLAS gains nothing on these skinny products
  and is very slow on a busy machine.

*Generic path* (any other user-defined metric kind, or ``method="generic"``):
for every resample it builds the resampled :class:`AttributeData` (rows of
template j repeated ``W[b, j]`` times as distinct template copies, the observed
tuples repeated with them) and calls the engine's ``metric_rows`` - slower,
and correct by construction. The test suite checks that both paths give the
same replicate values for every named metric.

Verdict basis
-------------
:func:`bootstrap` also returns, per bootstrapped row, what
:mod:`bias_suite.stats.verdicts` needs: the fraction of undefined replicates,
the number of templates, and - where the row's value is unsigned but a signed
quantity underlies it - the interval of that signed quantity from the same
resamples: phi(group) - phi(background) for BCM/VBCM with d = abs,
phi(first) - phi(second) for PCM pairs with d = abs, in the counterfactual
view the mean over variants of f(first) - f(second) (CFGap, CFGap-TC, PertSS)
or over templates of the difference of the template means (AvgScoreDiff),
and for the AUC metrics
(SubgroupAUC, BPSN, BNSP) the paired contrast AUC(group) - AUC(all examples of
the attribute).

Sequence labelling (NER) data are not supported yet (MetricError).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import MetricError
from ..metrics.catalog import MetricSpec, get_metric
from ..metrics.comparisons import get_comparison
from ..metrics.engine import attribute_data, classification_counts, metric_rows, resolve_metrics
from ..metrics.generalized import (
    GENERALIZED, NEG, POS, UNLABELLED, AttributeData, _member_values, normalizer_value,
    per_template_differences,
)
from ..metrics.scores import SCORES, AucScore, GoldProbScore, MeanScore, RateScore, SetScore, get_score
from ..scoring.scored import as_scored
from ..suites.views import counterfactual_view, group_order

__all__ = [
    "BootstrapResult", "bootstrap", "bootstrap_intervals", "bootstrap_replicates",
    "template_weights", "cluster_bootstrap_difference",
]

#: undefined-replicate fractions: above NOTE_FRACTION a note, above MAX_UNDEFINED no interval
NOTE_FRACTION = 0.01
MAX_UNDEFINED = 0.5
#: target size (resamples x items) of one chunk of the set-metric computations
CHUNK_ELEMENTS = 160_000

_CATS = {"all": (POS, NEG, UNLABELLED), "pos": (POS,), "neg": (NEG,)}
_BACKGROUND = {"all": "all", "S": "all", "rest": "rest", "S\\S^t": "rest"}


# --------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------
@dataclass
class BootstrapResult:
    """What :func:`bootstrap` returns.

    results : the input results with ``ci_low``/``ci_high`` filled (and notes).
    basis : one row per bootstrapped value: ``metric, attribute, class, group,
        undefined`` (fraction of undefined replicates), ``templates`` (J),
        ``B``, ``confidence``, and where available ``basis`` (what the signed
        quantity is), ``basis_value``, ``basis_low``, ``basis_high``.
    keys, replicates : with ``keep_replicates=True``: a frame of (attribute,
        metric, class, group) and the (len(keys), B) replicate values.
    """

    results: pd.DataFrame
    basis: pd.DataFrame
    keys: pd.DataFrame | None = None
    replicates: np.ndarray | None = None


def template_weights(n_templates: int, B: int, rng: np.random.Generator) -> np.ndarray:
    """(B, J) multinomial template counts: each row resamples J templates
    with replacement (row sums are J), drawn as J uniform template indices
    per row (``rng.integers``) and counted."""
    J = int(n_templates)
    if J == 0:
        return np.zeros((B, 0), dtype=np.int64)
    idx = rng.integers(J, size=(B, J)) + (np.arange(B) * J)[:, None]
    return np.bincount(idx.ravel(), minlength=B * J).reshape(B, J)


def bootstrap_intervals(
    scored,
    results: pd.DataFrame,
    *,
    metrics=None,
    B: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    max_tuples: int | None = 100,
    group_order_override: Mapping[str, Sequence[str]] | None = None,
    tuple_seed: int | None = None,
    method: str = "auto",
) -> pd.DataFrame:
    """Cluster-bootstrap percentile intervals for the metric rows of ``results``.

    Parameters
    ----------
    scored : scored examples (anything :func:`bias_suite.metrics.evaluate` takes).
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

    Returns
    -------
    DataFrame: the rows of ``results`` (same order, same columns) with
    ``ci_low``/``ci_high`` filled for the bootstrapped rows.

    Examples
    --------
    >>> res = evaluate(scored, metrics=["FNED", "CFGap"])  # doctest: +SKIP
    >>> res = bootstrap_intervals(scored, res, B=1000, seed=0)  # doctest: +SKIP
    """
    return bootstrap(
        scored, results, metrics=metrics, B=B, confidence=confidence, seed=seed, max_tuples=max_tuples,
        group_order_override=group_order_override, tuple_seed=tuple_seed, method=method,
    ).results


def bootstrap(
    scored,
    results: pd.DataFrame | None = None,
    *,
    metrics=None,
    B: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    max_tuples: int | None = 100,
    group_order_override: Mapping[str, Sequence[str]] | None = None,
    tuple_seed: int | None = None,
    method: str = "auto",
    keep_replicates: bool = False,
) -> BootstrapResult:
    """Like :func:`bootstrap_intervals`, returning a :class:`BootstrapResult`
    (intervals, the verdict basis and optionally the replicate values).
    ``results=None`` evaluates first."""
    _check(B, confidence, method)
    data = as_scored(scored)
    tseed = seed if tuple_seed is None else tuple_seed
    if getattr(data, "task", "classification") != "classification":
        return sequence_bootstrap(data, results, metrics=metrics, B=B, confidence=confidence, seed=seed,
                                  max_tuples=max_tuples, group_order_override=group_order_override,
                                  tuple_seed=tseed, keep_replicates=keep_replicates)
    if results is None:
        from ..metrics.engine import evaluate

        results = evaluate(data, metrics=metrics, max_tuples=max_tuples, seed=tseed,
                           group_order_override=group_order_override)
    specs = _specs_for(results, metrics)
    wanted_attrs = [a for a in pd.unique(results["attribute"]) if isinstance(a, str)]
    weights = _draw_weights(data, B, seed)
    with _single_threaded_blas():
        keys, reps, extra = _replicates(data, specs, weights, attributes=wanted_attrs, method=method,
                                        max_tuples=max_tuples, tuple_seed=tseed,
                                        group_order_override=group_order_override)
    out, basis = _fill(results, keys, reps, extra, confidence, B)
    if not keep_replicates:
        return BootstrapResult(out, basis)
    kf = pd.DataFrame(keys, columns=["attribute", "metric", "class", "group"])
    return BootstrapResult(out, basis, kf, reps)


def sequence_bootstrap(data, results=None, *, metrics=None, B: int = 200, confidence: float = 0.95, seed: int = 0,
                       max_tuples: int | None = 100, group_order_override=None, tuple_seed: int | None = None,
                       keep_replicates: bool = False) -> BootstrapResult:
    """Cluster bootstrap over templates for sequence-labelling (NER) results.

    Same resampling unit and percentile intervals as the classification
    bootstrap: in replicate b, every template of an attribute is drawn
    ``W[b, j]`` times (multinomial over the J templates, the same weights
    :func:`bootstrap` draws), each copy becomes a template of its own, and
    the metrics are computed again with
    :func:`bias_suite.metrics.sequence.evaluate_sequence`. Unlike the
    classification fast path, the counterfactual tuples of a copied template
    are drawn again (``max_tuples``), so the intervals include the tuple
    sampling too. The verdict basis of a metric with d = abs (per group or
    pair) comes from a signed twin (the same metric with d = x - y) evaluated
    on the same resamples: phi(first) - phi(second) for pairs,
    phi(group) - phi(background) for groups. Cost: B evaluations of each
    attribute (about 0.07 s each for the bundled NER suites).
    """
    from tqdm.auto import tqdm

    from ..metrics.engine import evaluate
    from ..metrics.sequence import evaluate_sequence
    from ..suites.views import counterfactual_view

    tseed = seed if tuple_seed is None else tuple_seed
    if results is None:
        results = evaluate(data, metrics=metrics, max_tuples=max_tuples, seed=tseed,
                           group_order_override=group_order_override)
    specs = _specs_for(results, metrics)
    cf_names = {s.name for s in specs if s.view == "counterfactual"}
    attrs = [a for a in pd.unique(results["attribute"]) if isinstance(a, str)]
    twins = _signed_twins(specs)
    run_specs = specs + [t for _, t in twins.values()]
    observed = {}
    if twins:
        obs = evaluate_sequence(data, metrics=[t for _, t in twins.values()], attributes=attrs, max_tuples=max_tuples,
                                seed=tseed, group_order_override=group_order_override)
        for a, m, c, g, v in zip(obs["attribute"], obs["metric"], obs["class"], obs["group"], obs["value"]):
            if isinstance(g, str) and v is not None and not pd.isna(v):
                observed[(a, m, c, g)] = float(v)
    weights = _draw_weights(data, B, seed)
    cfs = counterfactual_view(data.frame, max_tuples=max_tuples, seed=tseed, group_order_override=group_order_override)
    fr = data.frame
    attr_col = fr["attribute"].to_numpy(dtype=object)
    keys, rows_out, extra = [], [], {}
    for a in attrs:
        rows = np.flatnonzero(attr_col == a)
        codes, _names = pd.factorize(pd.Series(fr["template"].to_numpy(dtype=object)[rows], dtype=object), sort=False)
        W = weights[a]
        vals: dict = {}
        base_tpl = fr["template"].to_numpy(dtype=object)[rows].astype(str)
        # each NER resample is evaluated again (seconds per attribute at B = 200): show it on a terminal
        for b in tqdm(range(B), desc=f"intervals for {a} (NER: every resample evaluated)", unit="resample",
                      disable=None, leave=False):
            reps = W[b][codes]
            pick = np.repeat(np.arange(len(rows)), reps)
            copy = np.arange(len(pick)) - np.repeat(np.cumsum(reps) - reps, reps)
            labels = np.char.add(np.char.add(base_tpl[pick], "#"), copy.astype(str))
            sub = data.take(rows[pick], templates=labels)
            res_b = evaluate_sequence(sub, metrics=run_specs, attributes=[a], max_tuples=max_tuples, seed=tseed,
                                      group_order_override=group_order_override)
            for m, c, g, v in zip(res_b["metric"], res_b["class"], res_b["group"], res_b["value"]):
                key = (a, m, c, g if isinstance(g, str) else None)
                if key not in vals:
                    vals[key] = np.full(B, np.nan)
                if v is not None and not pd.isna(v):
                    vals[key][b] = float(v)
        J, Jc = int(W.shape[1]), len(cfs[a].templates) if a in cfs else 0
        for key, v in vals.items():
            if key[1] in twins:
                continue
            keys.append(key)
            rows_out.append(v)
            extra[key] = {"templates": Jc if key[1] in cf_names else J}
        for key, v in vals.items():  # the signed basis of the metric each twin shadows
            if key[1] not in twins or key[3] is None or key not in observed:
                continue
            spec, _ = twins[key[1]]
            sign = 1.0 if spec.generalized == "PCM" else -1.0  # d(background, group): report group - background
            own = (key[0], spec.name, key[2], key[3])
            phi = getattr(spec.phi, "name", "phi")
            text = (f"{phi}(first) - {phi}(second)" if spec.generalized == "PCM"
                    else f"{phi}(group) - {phi}({'all' if _BACKGROUND.get(spec.background) == 'all' else 'rest'})")
            extra.setdefault(own, {}).update(basis=text, basis_reps=sign * v, basis_obs=sign * observed[key])
    reps = np.vstack(rows_out) if rows_out else np.zeros((0, B))
    out, basis = _fill(results, keys, reps, extra, confidence, B)
    if not keep_replicates:
        return BootstrapResult(out, basis)
    return BootstrapResult(out, basis, pd.DataFrame(keys, columns=["attribute", "metric", "class", "group"]), reps)


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
    B: int = 1000,
    seed: int = 0,
    max_tuples: int | None = 100,
    group_order_override: Mapping[str, Sequence[str]] | None = None,
    tuple_seed: int | None = None,
    attributes: Iterable[str] | None = None,
    method: str = "auto",
) -> tuple[pd.DataFrame, np.ndarray]:
    """The replicate values themselves: a frame of keys (attribute, metric,
    class, group) and an array (len(keys), B); NaN where undefined. Same
    resamples as :func:`bootstrap` with the same seed."""
    _check(B, 0.95, method)
    data = as_scored(scored)
    if getattr(data, "task", "classification") != "classification":
        raise MetricError("bootstrap intervals are implemented for classification only (not sequence labelling)")
    specs = resolve_metrics(metrics)
    attrs = data.attributes() if attributes is None else ([attributes] if isinstance(attributes, str) else list(attributes))
    weights = _draw_weights(data, B, seed)
    with _single_threaded_blas():
        keys, reps, _ = _replicates(data, specs, weights, attributes=attrs, method=method, max_tuples=max_tuples,
                                    tuple_seed=seed if tuple_seed is None else tuple_seed,
                                    group_order_override=group_order_override)
    return pd.DataFrame(keys, columns=["attribute", "metric", "class", "group"]), reps


def cluster_bootstrap_difference(costs, annotations, clusters, *, confidence: float = 0.95, seed: int = 0,
                                 B: int = 1000):
    """Cluster-bootstrap percentile interval of mean_A(c) - mean_B(c), A the
    rows annotated +1 and B those annotated -1, resampling ``clusters``
    (e.g. templates) with the same multinomial scheme as :func:`bootstrap`.
    Returns ``(low, high)`` or ``(None, None)`` when undefined in more than
    half of the resamples. (The hook of ``benchmarks/coverage.py``.)"""
    c = np.asarray(costs, float).ravel()
    f = np.asarray(annotations).ravel()
    codes, _ = pd.factorize(pd.Series(np.asarray(clusters).ravel()), sort=False)
    J = int(codes.max()) + 1 if codes.size else 0
    if J < 2:
        return None, None
    W = template_weights(J, B, np.random.default_rng(seed)).astype(float)
    cell = np.zeros((J, 4))
    a, b = f == 1, f == -1
    cell[:, 0] = np.bincount(codes, weights=c * a, minlength=J)
    cell[:, 1] = np.bincount(codes, weights=a.astype(float), minlength=J)
    cell[:, 2] = np.bincount(codes, weights=c * b, minlength=J)
    cell[:, 3] = np.bincount(codes, weights=b.astype(float), minlength=J)
    S = W @ cell
    with np.errstate(divide="ignore", invalid="ignore"):
        d = S[:, 0] / S[:, 1] - S[:, 2] / S[:, 3]
    d = d[np.isfinite(d)]
    if d.size < B * (1 - MAX_UNDEFINED):
        return None, None
    alpha = 1.0 - confidence
    lo, hi = np.quantile(d, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


# --------------------------------------------------------------------------
# setup
# --------------------------------------------------------------------------
def _single_threaded_blas():
    """The bootstrap's matrix products are skinny (a chunk of resamples times
    thousands of items); a multi-threaded BLAS gains nothing on them and can
    be orders of magnitude slower on a busy machine, so use one thread."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover (threadpoolctl comes with scikit-learn)
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


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


@dataclass
class _Prepared:
    """One attribute: the engine's arrays plus every row's template among all
    of the attribute's templates (complete or not)."""

    ad: AttributeData
    tpl: np.ndarray  # (n,) all-template index per row
    J: int
    complete_idx: np.ndarray  # (Jc,) all-template index of each complete template


def _prepare(data, cf, attribute, group_order_override) -> _Prepared:
    groups = group_order(data.frame, attribute, group_order_override)
    ad = attribute_data(data, attribute, cf, groups)
    fr = data.frame
    rows = np.flatnonzero(fr["attribute"].to_numpy(dtype=object) == attribute)
    codes, names = pd.factorize(pd.Series(fr["template"].to_numpy(dtype=object)[rows], dtype=object), sort=False)
    index = {t: i for i, t in enumerate(names)}
    complete = np.array([index[t] for t in ad.templates], dtype=np.int64)
    return _Prepared(ad, np.asarray(codes, dtype=np.int64), len(names), complete)


def _replicates(data, specs, weights, *, attributes, method, max_tuples, tuple_seed, group_order_override):
    """keys [(attribute, metric, class, group)], values (len(keys), B), extra
    {key: dict(basis=..., basis_obs=..., basis_reps=..., templates=J)}."""
    cfs = counterfactual_view(data.frame, max_tuples=max_tuples, seed=tuple_seed,
                              group_order_override=group_order_override)
    keys, rows, extra = [], [], {}
    for a in attributes:
        W = weights[a]
        prep = _prepare(data, cfs[a], a, group_order_override)
        vals, basis = {}, {}
        fast = [s for s in specs if method != "generic" and _fast_supported(s)]
        if method == "fast" and len(fast) < len(specs):
            slow = [s.name for s in specs if s not in fast]
            raise MetricError(f"metrics {slow} need the generic bootstrap path (method='auto' or 'generic')")
        slow = [s for s in specs if s not in fast]
        if fast:
            v, bs = _fast_attribute(prep, fast, W)
            vals.update(v)
            basis.update(bs)
        if slow:
            vals.update(_generic_attribute(prep, slow, W))
        for (m, c, g), v in vals.items():
            key = (a, m, c, g)
            keys.append(key)
            rows.append(v)
            spec_view = "counterfactual" if m in {s.name for s in specs if s.view == "counterfactual"} else "group"
            e = {"templates": int(len(prep.complete_idx) if spec_view == "counterfactual" else prep.J)}
            if (m, c, g) in basis:
                e.update(basis[(m, c, g)])
            extra[key] = e
    B = next(iter(weights.values())).shape[0] if weights else 0
    values = np.vstack(rows) if rows else np.zeros((0, B))
    return keys, values, extra


def _fast_supported(spec: MetricSpec) -> bool:
    """Whether the vectorized path covers a metric (classification)."""
    sc = get_score(spec.score)
    comp = get_comparison(spec.comparison)
    if isinstance(sc, RateScore) and not any(sc is s for s in SCORES.values()):
        return False  # a user rate function may not broadcast over resamples
    if spec.view == "group":
        if isinstance(sc, (SetScore, GoldProbScore)):
            return comp.name in ("W1", "AEG") and getattr(sc, "select", "all") in _CATS
        return isinstance(sc, (RateScore, AucScore))
    if spec.per_template:
        return (isinstance(sc, SetScore) and comp.name == "W1") or isinstance(sc, MeanScore)
    return isinstance(sc, (GoldProbScore, SetScore, RateScore))


def _class_list(spec, ad):
    if not spec.per_class:
        return [(0, "all")]
    return list(enumerate(ad.classes))


# --------------------------------------------------------------------------
# fast path
# --------------------------------------------------------------------------
def _fast_attribute(prep: _Prepared, specs, W):
    """Replicate values of every fast-path metric on one attribute; the last
    row of the internal weight matrix is all ones (the observed data) and is
    used only for the observed value of the verdict basis."""
    ad = prep.ad
    B = W.shape[0]
    Wx = np.vstack([W, np.ones((1, prep.J), dtype=W.dtype)]) if prep.J else np.zeros((B + 1, 0), dtype=np.int64)
    Wf = Wx.astype(np.float64)
    out, basis = {}, {}
    set_jobs = {}  # class index -> list of (spec, cls_name)
    sums_cache: dict = {}
    for spec in specs:
        if spec.two_groups and ad.k != 2:
            continue
        sc = get_score(spec.score)
        comp = get_comparison(spec.comparison)
        for c, cls in _class_list(spec, ad):
            if spec.view == "group":
                if spec.generalized in ("PCM", "MCM") and ad.k < 2:
                    continue
                if isinstance(sc, RateScore):
                    phi = _rate_phi(prep, sc, c, Wf, sums_cache)
                    _store(out, basis, spec, cls, *_scalar_values(spec, ad, sc, comp, phi), B)
                else:
                    set_jobs.setdefault(c, []).append((spec, cls))
            else:
                if ad.k < 2 or len(ad.templates) == 0:
                    continue
                if spec.per_template:
                    res = _per_template_values(spec, prep, sc, comp, c, Wf)
                else:
                    res = _tuple_values(spec, prep, sc, comp, c, Wf)
                if res is not None:
                    _store(out, basis, spec, cls, *res, B)
    for c, jobs in set_jobs.items():
        _set_values(prep, c, jobs, Wx, out, basis, B)
    return out, basis


def _store(out, basis, spec, cls, values: dict, signed: dict, B):
    """Keep the replicate rows (first B) and the basis (replicates + observed)."""
    for g, v in values.items():
        out[(spec.name, cls, g)] = np.asarray(v, float)[:B]
    for g, (label, v) in signed.items():
        v = np.asarray(v, float)
        basis[(spec.name, cls, g)] = {"basis": label, "basis_reps": v[:B], "basis_obs": v[B]}


def _nan_where(bad, val):
    val = np.asarray(val, float)
    return np.where(bad | ~np.isfinite(val), np.nan, val)


def _count_sums(prep, c, Wf, cache):
    """Per-group count sums (R, k) of every resample, one matmul per class:
    per-(template, group) counts C once, then W @ C."""
    if c not in cache:
        ad = prep.ad
        k, J = ad.k, prep.J
        cnt = ad.class_counts(c)
        names = list(cnt)
        key = prep.tpl * k + ad.g
        C = np.concatenate([np.bincount(key, weights=cnt[n], minlength=J * k).reshape(J, k) for n in names], axis=1)
        S = Wf @ C
        cache[c] = {n: S[:, i * k:(i + 1) * k] for i, n in enumerate(names)}
    return cache[c]


def _rate_phi(prep, score, c, Wf, cache):
    """Group / all / rest values of a rate score on every resample: (R, k)."""
    k = prep.ad.k
    S = _count_sums(prep, c, Wf, cache)
    total = {n: s.sum(1) for n, s in S.items()}
    rest = {n: total[n][:, None] - s for n, s in S.items()}
    R = Wf.shape[0]

    def phi(s, shape):
        v, bad, _ = score.fn(s)
        return (np.broadcast_to(np.asarray(v, float), shape), np.broadcast_to(np.asarray(bad, bool), shape))

    gv, gb = phi(S, (R, k))
    av, ab = phi(total, (R,))
    rv, rb = phi(rest, (R, k))
    return {
        "group": (gv, gb),
        "all": (np.repeat(av[:, None], k, 1), np.repeat(ab[:, None], k, 1)),
        "rest": (rv, rb),
    }


def _scalar_values(spec, ad, score, comp, phi, contrast=None):
    """Mirror of the engine's scalar group metrics on (R, k) phi arrays.
    Returns (values {group label: (R,)}, signed basis {label: (text, (R,))})."""
    gen, k = spec.generalized, ad.k
    gv, gb = phi["group"]
    out, signed = {}, {}
    phi_name = getattr(score, "name", "phi")
    if gen == "PCM":
        N = normalizer_value(spec.normalizer, k)
        pairs = ad.pairs()
        a = np.array([p[0] for p in pairs], dtype=np.int64)
        b = np.array([p[1] for p in pairs], dtype=np.int64)
        val, dbad = comp.fn(gv[:, a], gv[:, b])
        val = np.asarray(val, float)
        bad = gb[:, a] | gb[:, b] | np.asarray(dbad, bool)
        pv = _nan_where(bad, val)
        for i, name in enumerate(ad.pair_names()):
            out[name] = pv[:, i]
            if comp.name == "abs":
                signed[name] = (f"{phi_name}(first) - {phi_name}(second)", _nan_where(bad[:, i], gv[:, a[i]] - gv[:, b[i]]))
        acc = np.full(gv.shape[0], np.nan) if N == 0 else _nan_where(bad.any(1), val.sum(1) / N)
        out[None] = acc
        return out, signed
    if gen in ("BCM", "VBCM"):
        if isinstance(score, AucScore):
            bv, bb = gv, np.zeros(gv.shape, bool)
        else:
            key = _BACKGROUND.get(spec.background)
            if key is None:
                raise MetricError(f"{spec.name}: background must be 'all' or 'rest', got {spec.background!r}")
            bv, bb = phi[key]
        val, dbad = comp.fn(bv, gv)
        val = np.asarray(val, float)
        bad = gb | bb | np.asarray(dbad, bool)
        pv = _nan_where(bad, val)
        bg_text = "all" if _BACKGROUND.get(spec.background) == "all" else "rest"
        for t, name in enumerate(ad.groups):
            out[name] = pv[:, t]
            if comp.name == "abs" and not isinstance(score, AucScore):
                signed[name] = (f"{phi_name}(group) - {phi_name}({bg_text})", _nan_where(bad[:, t], gv[:, t] - bv[:, t]))
            elif isinstance(score, AucScore) and contrast is not None:
                signed[name] = ("AUC(group) - AUC(all examples)", _nan_where(bad[:, t], contrast[:, t]))
        if gen == "BCM":
            N = normalizer_value(spec.normalizer, k)
            out[None] = np.full(gv.shape[0], np.nan) if N == 0 else _nan_where(bad.any(1), val.sum(1) / N)
        return out, signed
    if gen == "MCM":
        if comp.kind != "multi":
            raise MetricError(f"{spec.name}: MCM needs a multi-group comparison (std, range), got {comp.name!r}")
        out[None] = _nan_where(gb.any(1), comp.fn(gv))
        return out, signed
    raise MetricError(f"unknown generalized metric {gen!r}")


def _tuple_values(spec, prep, score, comp, c, Wf):
    """Counterfactual tuple metrics: per-tuple d once, template-weighted means."""
    ad = prep.ad
    k, gen = ad.k, spec.generalized
    V, ok = _member_values(ad, score, c)
    if V.ndim == 2:
        V, ok = V[:, :, None], ok[:, :, None]
    pos_ok = ok.all(axis=1)
    tup_ok = pos_ok.any(axis=1)
    if not tup_ok.any():
        return None
    V, pos_ok = V[tup_ok], pos_ok[tup_ok]
    tt = ad.tuple_template[tup_ok]
    w = pos_ok / pos_ok.sum(axis=1, keepdims=True)
    Vz = np.where(pos_ok[:, None, :], V, 0.0)

    def per_tuple(x):
        return np.sum(np.where(pos_ok, x, 0.0) * w, axis=1)

    labels, cols = [], []
    signed_labels, signed_cols = [], []
    phi_name = getattr(score, "name", "f")
    if gen == "PCM":
        N = normalizer_value(spec.normalizer, k)
        D = np.stack([per_tuple(comp.fn(Vz[:, a], Vz[:, b])[0]) for a, b in ad.pairs()], axis=1)
        labels = ad.pair_names() + [None]
        cols = np.column_stack([D, D.sum(axis=1) / N])
        if comp.name == "abs":  # the signed difference beneath |f(a) - f(b)|, per variant
            signed_labels = ad.pair_names()
            signed_cols = [per_tuple(Vz[:, a] - Vz[:, b]) for a, b in ad.pairs()]
    elif gen == "MCM":
        labels = [None]
        cols = per_tuple(comp.fn(np.moveaxis(Vz, 1, -1)))[:, None]
    elif gen in ("BCM", "VBCM"):
        total = Vz.sum(axis=1)
        D = []
        for t in range(k):
            bg = total / k if _BACKGROUND.get(spec.background) == "all" else (total - Vz[:, t]) / (k - 1)
            D.append(per_tuple(comp.fn(bg, Vz[:, t])[0]))
            if comp.name == "abs":
                signed_labels.append(ad.groups[t])
                signed_cols.append(per_tuple(Vz[:, t] - bg))
        D = np.stack(D, axis=1)
        labels = list(ad.groups)
        cols = D
        if gen == "BCM":
            labels = labels + [None]
            cols = np.column_stack([D, D.sum(axis=1) / normalizer_value(spec.normalizer, k)])
    else:
        raise MetricError(f"unknown generalized metric {gen!r}")
    n_signed = len(signed_cols)
    if n_signed:
        cols = np.column_stack([cols] + signed_cols)
    Jc = len(ad.templates)
    S = np.zeros((Jc, cols.shape[1]))
    np.add.at(S, tt, cols)
    M = np.bincount(tt, minlength=Jc).astype(float)
    Wc = Wf[:, prep.complete_idx]
    with np.errstate(divide="ignore", invalid="ignore"):
        vals = (Wc @ S) / (Wc @ M)[:, None]
    vals[~np.isfinite(vals)] = np.nan
    n = len(labels)
    text = (f"{phi_name}(first) - {phi_name}(second), mean over variants" if gen == "PCM"
            else f"{phi_name}(group) - {phi_name}(background), mean over variants")
    signed = {lab: (text, vals[:, n + i]) for i, lab in enumerate(signed_labels)}
    return {lab: vals[:, i] for i, lab in enumerate(labels)}, signed


def _per_template_values(spec, prep, score, comp, c, Wf):
    """AvgIF-style metrics: per-template values once, template-weighted means."""
    ad = prep.ad
    k = ad.k
    D = per_template_differences(spec, ad, score, comp, c)
    ok = np.isfinite(D).all(axis=1)
    if not ok.any():
        return None
    D = D[ok]
    cols = np.column_stack([D, D.sum(axis=1) / normalizer_value(spec.normalizer, k)])
    signed_on = comp.name == "abs" and isinstance(score, MeanScore)
    if signed_on:  # the signed difference of the template means beneath |mean f(a) - mean f(b)|
        cols = np.column_stack([cols, per_template_differences(spec, ad, score, get_comparison("diff"), c)[ok]])
    Wc = Wf[:, prep.complete_idx[ok]]
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (Wc @ cols) / Wc.sum(axis=1)[:, None]
    out[~np.isfinite(out)] = np.nan
    labels = ad.pair_names() + [None]
    n = len(labels)
    signed = ({lab: ("mean f(first) - mean f(second), mean over templates", out[:, n + i])
               for i, lab in enumerate(ad.pair_names())} if signed_on else {})
    return {lab: out[:, i] for i, lab in enumerate(labels)}, signed


# ------------------------------------------------------------ set metrics
class _ClassItems:
    """The probability items of one attribute and class, sorted by f(x, c)
    once; per chunk of resamples, integer item weights in that order.

    Static structures (positions of a selection, group masks, tie blocks) are
    built once per class; per chunk, the gathered weights and the cumulative
    counts are cached and float buffers reused."""

    def __init__(self, prep: _Prepared, c: int):
        ad = prep.ad
        x = np.asarray(ad.item_P[:, c], dtype=np.float64)
        order = np.argsort(x, kind="stable")
        self.x = x[order]
        self.g = ad.item_g()[order]
        yy = ad.item_y[order]
        self.cat = np.where(yy < 0, UNLABELLED, np.where(yy == c, POS, NEG))
        self.tpl = prep.tpl[ad.item_row[order]]
        self.k, self.J, self.m = ad.k, prep.J, self.x.size
        self._static: dict = {}
        self._chunk: dict = {}

    # -- static (per class) helpers
    def _memo(self, key, fn):
        if key not in self._static:
            self._static[key] = fn()
        return self._static[key]

    def positions(self, cats) -> np.ndarray:
        """Items of a selection, in score order."""
        return self._memo(("p", cats), lambda: np.flatnonzero(np.isin(self.cat, cats)))

    def positions_by_group(self, cats):
        """Items of a selection in (group, score) order, and the group segments."""
        def make():
            p = self.positions(cats)
            p = p[np.argsort(self.g[p], kind="stable")]
            sizes = np.bincount(self.g[p], minlength=self.k)
            return p, np.cumsum(sizes) - sizes, sizes
        return self._memo(("pg", cats), make)

    def cells(self, cats) -> np.ndarray:
        """(J, k) item counts of a selection per template and group."""
        def make():
            p = self.positions(cats)
            return np.bincount(self.tpl[p] * self.k + self.g[p], minlength=self.J * self.k).reshape(self.J, self.k)
        return self._memo(("cells", cats), make)

    @staticmethod
    def _ties(x, seg=None):
        """None without ties, else (block start, block end) per item; blocks
        never cross the segment boundaries ``seg`` (group starts)."""
        if x.size < 2:
            return None
        new = np.r_[True, x[1:] != x[:-1]]
        if seg is not None:
            new[seg[seg < x.size]] = True
        if new.all():
            return None
        block = np.cumsum(new) - 1
        starts = np.flatnonzero(new)
        ends = np.r_[starts[1:], x.size] - 1
        bstart = starts[block]
        at_seg_start = np.isin(bstart, seg) if seg is not None else None
        return bstart, ends[block], at_seg_start

    # -- per chunk
    def start(self, Wc: np.ndarray):
        """A new chunk of resamples: ``Wc`` (Bc, J) int32 template weights."""
        self.Wc = Wc
        self.Wf = Wc.astype(np.float64)
        wmax = int(Wc.max()) if Wc.size else 0
        # U sums w_h * (2 C_L + w_l) per item: int32 unless that could overflow
        self.idt = np.int32 if 2 * (self.m + 1) * (wmax + 1) ** 2 < 2**31 else np.int64
        self._chunk = {}

    def _weights(self, key, p):
        """Item weights (Bc, len(p)) of the positions ``p`` (cached per chunk)."""
        ck = ("w", key)
        if ck not in self._chunk:
            tp = self._memo(("tpl", key), lambda: self.tpl[p])
            self._chunk[ck] = self.Wc[:, tp]
        return self._chunk[ck]

    def n(self, cats) -> np.ndarray:
        """(Bc, k) weighted item counts of a selection per group."""
        key = ("n", cats)
        if key not in self._chunk:
            self._chunk[key] = self.Wf @ self.cells(cats)
        return self._chunk[key]

    # -- W1 = sum_i |F_Q(x_i) - F_P(x_i)| (x_{i+1} - x_i) over the sorted items
    def _w1_static(self, cats):
        def make():
            p = self.positions(cats)
            dx = np.zeros(p.size)
            if p.size > 1:
                dx[:-1] = np.diff(self.x[p])
            gm = [(self.g[p] == t).astype(np.int32) for t in range(self.k)]
            return p, dx, gm
        return self._memo(("w1", cats), make)

    def _cum(self, cats, d, out=None):
        """Cumulative weighted counts (Bc, m_sel) of ("all",), ("g", t) or
        ("rest", t) within a selection (the "all" one cached)."""
        p, dx, gm = self._w1_static(cats)
        Wp = self._weights(("sel", cats), p)
        if d[0] == "all":
            key = ("cum", cats)
            if key not in self._chunk:
                self._chunk[key] = np.cumsum(Wp, axis=1, dtype=np.int32)
            return self._chunk[key]
        buf = np.multiply(Wp, gm[d[1]], out=out)
        np.cumsum(buf, axis=1, dtype=np.int32, out=buf)
        if d[0] == "rest":
            np.subtract(self._cum(cats, ("all",)), buf, out=buf)
        return buf

    def _cdf(self, cats, d, out, ibuf):
        """Normalized cumulative counts into ``out``; also the undefined mask."""
        C = self._cum(cats, d, out=ibuf)
        n = C[:, -1].astype(np.float64)
        with np.errstate(divide="ignore"):
            inv = np.where(n > 0, 1.0 / np.where(n > 0, n, 1.0), 0.0)
        np.multiply(C, inv[:, None], out=out)
        return n == 0

    def w1(self, cats, P, Q) -> np.ndarray:
        """W1 between the sets P and Q of a selection, per resample."""
        p, dx, gm = self._w1_static(cats)
        Bc = self.Wc.shape[0]
        if p.size == 0:
            return np.full(Bc, np.nan)
        bufs = self._chunk.get(("w1buf", cats))
        if bufs is None:
            bufs = self._chunk[("w1buf", cats)] = (np.empty((Bc, p.size)), np.empty((Bc, p.size)),
                                                    np.empty((Bc, p.size), np.int32))
        fp, fq, ibuf = bufs
        if P == ("all",):  # shared by every group: normalized once per chunk
            if ("Fall", cats) not in self._chunk:
                self._chunk[("Fall", cats)] = self._cdf(cats, P, fp, ibuf)
            badP = self._chunk[("Fall", cats)]
        else:
            self._chunk.pop(("Fall", cats), None)
            badP = self._cdf(cats, P, fp, ibuf)
        badQ = self._cdf(cats, Q, fq, ibuf)
        np.subtract(fq, fp, out=fq)
        np.abs(fq, out=fq)
        out = fq @ dx
        out[badP | badQ] = np.nan
        return out

    def w1_groups(self, cats, background: str) -> np.ndarray:
        """(Bc, k): W1(background, group t) for every group t, background
        "all" (the whole selection) or "rest" (the selection minus t)."""
        p, dx, gm = self._w1_static(cats)
        Bc, k = self.Wc.shape[0], self.k
        if p.size == 0:
            return np.full((Bc, k), np.nan)
        Wp = self._weights(("sel", cats), p)
        call = self._cum(cats, ("all",))
        n = self.n(cats)
        nall = n.sum(1)
        nb = nall[:, None] - n if background == "rest" else np.repeat(nall[:, None], k, 1)

        def inv(v):
            return np.where(v > 0, 1.0 / np.where(v > 0, v, 1.0), 0.0)

        inv_n, inv_b = inv(n), inv(nb)
        fp, fq, ibuf = np.empty((Bc, p.size)), np.empty((Bc, p.size)), np.empty((Bc, p.size), np.int32)
        if background == "all":  # F_all, shared by every group
            np.multiply(call, inv_b[:, :1], out=fp)
        out = np.empty((Bc, k))
        for t in range(k):  # integer cumulative counts of group t, then |F_t - F_background| . dx
            np.multiply(Wp, gm[t], out=ibuf)
            np.cumsum(ibuf, axis=1, dtype=np.int32, out=ibuf)
            np.multiply(ibuf, inv_n[:, t:t + 1], out=fq)
            if background == "rest":
                np.subtract(call, ibuf, out=ibuf)
                np.multiply(ibuf, inv_b[:, t:t + 1], out=fp)
            np.subtract(fq, fp, out=fq)
            np.abs(fq, out=fq)
            out[:, t] = fq @ dx
        out[(n == 0) | (nb == 0)] = np.nan
        return out

    # -- Mann-Whitney U(H over L) = #{h > l} + 1/2 #{h = l}, exact in integers
    def _u2(self, key, p, inL, inH, ties, seg=None, cells=None):
        """2 U(H over L): per cell (``cells`` = (cell of each item, number
        of cells); value order, L of every group), per segment ``seg`` (group
        order: L and H of one group), or in total."""
        Wp = self._weights(key, p)
        idt = self.idt
        if Wp.dtype != idt:
            Wp = Wp.astype(idt)
        wL = Wp * inL
        CL = np.cumsum(wL, axis=1, dtype=idt)
        if seg is not None:  # cumulative counts restart in every group segment
            starts, sizes = seg
            before = np.zeros((CL.shape[0], starts.size), dtype=idt)
            nz = starts > 0
            before[:, nz] = CL[:, starts[nz] - 1]
            CL -= np.repeat(before, sizes, axis=1)
        if ties is None:  # C_L(<x) + C_L(<=x) = 2 C_L(before) + own weight
            term = CL
            term *= 2
            term -= wL
        else:  # C_L(<x) from the item before the tie block, C_L(<=x) at its end
            bstart, bend, at_seg_start = ties
            Cpad = np.zeros((CL.shape[0], CL.shape[1] + 1), dtype=idt)
            Cpad[:, 1:] = CL
            term = Cpad[:, bstart]
            if at_seg_start is not None:  # a block opening a group segment has nothing below it
                term[:, at_seg_start] = 0
            term += Cpad[:, bend + 1]
        v = Wp * term
        if not (np.isscalar(inH) and inH == 1):
            v *= inH
        if cells is not None:  # sum per (resample, cell) with one bincount
            cell, n_cells = cells
            Bc = v.shape[0]
            idx = self._chunk.get(("cellidx", key))
            if idx is None:
                idx = self._chunk[("cellidx", key)] = (np.arange(Bc)[:, None] * n_cells + cell).ravel()
            return np.bincount(idx, weights=v.ravel(), minlength=Bc * n_cells).reshape(Bc, n_cells)
        if seg is None:
            return v.sum(axis=1, dtype=np.float64)[:, None]
        starts, sizes = seg
        out = np.zeros((v.shape[0], starts.size))
        ne = sizes > 0
        if ne.any():
            out[:, ne] = np.add.reduceat(v, starts[ne], axis=1)
        return out

    def u_by_cat(self, catsL) -> np.ndarray:
        """(Bc, 3, k): U(items of category c and group t over L of all
        groups), for every category at once, from one cumulative count of L
        over all items in score order."""
        key = ("u_by_cat", catsL)
        if key not in self._chunk:
            def make():
                p = np.arange(self.m)
                inL = np.isin(self.cat, catsL).astype(np.int32)
                return p, inL, 1, self._ties(self.x), (self.cat * self.k + self.g, 3 * self.k)
            p, inL, inH, ties, cells = self._memo(key, make)
            u2 = self._u2(("sel", _CATS["all"]), p, inL, inH, ties, cells=cells)
            self._chunk[key] = u2.reshape(-1, 3, self.k) / 2.0
        return self._chunk[key]

    def u_over_all(self, catsH, catsL) -> np.ndarray:
        """(Bc, k): U(H within group t over L of all groups)."""
        return self.u_by_cat(catsL)[:, list(catsH), :].sum(axis=1)

    def u_grp(self, catsH, catsL) -> np.ndarray:
        """(Bc, k): U(H within t over L within t), all groups in one pass;
        U(A over A) = |A|^2 / 2 needs no data."""
        if catsH == catsL:
            return self.n(catsH) ** 2 / 2.0
        key = ("u_grp", catsH, catsL)
        if key not in self._chunk:
            def make():
                union = tuple(sorted(set(catsH) | set(catsL)))
                p, starts, sizes = self.positions_by_group(union)
                inL = np.isin(self.cat[p], catsL).astype(np.int32)
                inH = np.isin(self.cat[p], catsH).astype(np.int32)
                return union, p, inL, inH, self._ties(self.x[p], starts), (starts, sizes)
            union, p, inL, inH, ties, seg = self._memo(key, make)
            self._chunk[key] = self._u2(("grp", union), p, inL, inH, ties, seg=seg) / 2.0
        return self._chunk[key]

    def u_pair(self, catsH, catsL, a, b) -> np.ndarray:
        """(Bc,): U(H within group a over L within group b)."""
        key = ("u_pair", catsH, catsL, a, b)

        def make():
            p_all = self.positions(tuple(sorted(set(catsH) | set(catsL))))
            p = p_all[(self.g[p_all] == a) | (self.g[p_all] == b)]
            inL = (np.isin(self.cat[p], catsL) & (self.g[p] == b)).astype(np.int32)
            inH = (np.isin(self.cat[p], catsH) & (self.g[p] == a)).astype(np.int32)
            return p, inL, inH, self._ties(self.x[p])
        p, inL, inH, ties = self._memo(key, make)
        return self._u2(key, p, inL, inH, ties)[:, 0] / 2.0


def _ratio(num, den):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den == 0, np.nan, num / np.where(den == 0, 1.0, den))


def _auc_group(items: _ClassItems, score: AucScore):
    """(Bc, k) AUC per group and the (Bc,) AUC of all examples; AUC =
    U(positives over negatives) / (n_pos n_neg), rest-of-group sets by
    linearity of U in each argument."""
    pos, neg = _CATS["pos"], _CATS["neg"]
    npos, nneg = items.n(pos), items.n(neg)
    npa, nna = npos.sum(1, keepdims=True), nneg.sum(1, keepdims=True)
    Ugg = items.u_grp(pos, neg)  # U(pos_t over neg_t)
    Uta = items.u_over_all(pos, neg)  # U(pos_t over neg_all)
    Utot = Uta.sum(1, keepdims=True)  # U(pos_all over neg_all)
    side = (score.pos_from, score.neg_from)
    if side == ("group", "group"):
        U, nP, nN = Ugg, npos, nneg
    elif side == ("group", "rest"):
        U, nP, nN = Uta - Ugg, npos, nna - nneg
    else:
        Uat = npa * nneg - items.u_over_all(neg, pos)  # U(pos_all over neg_t) = |P||N| - U(neg_t over pos_all)
        if side == ("rest", "group"):
            U, nP, nN = Uat - Ugg, npa - npos, nneg
        elif side == ("rest", "rest"):
            U, nP, nN = Utot - Uta - Uat + Ugg, npa - npos, nna - nneg
        else:
            raise MetricError(f"AUC sides must be 'group' or 'rest', got {side}")
    return _ratio(U, nP * nN), _ratio(Utot[:, 0], (npa * nna)[:, 0])


def _set_values(prep: _Prepared, c: int, jobs, Wx, out, basis, B):
    """Set and AUC metrics of one class, in chunks of resamples."""
    ad = prep.ad
    items = _ClassItems(prep, c)
    R = Wx.shape[0]
    Bc = int(np.clip(CHUNK_ELEMENTS // max(items.m, 1), 1, 256))
    Wi32 = Wx.astype(np.int32)
    acc: dict = {}
    for s in range(0, R, Bc):
        items.start(Wi32[s:s + Bc])
        for spec, cls in jobs:
            sc = get_score(spec.score)
            comp = get_comparison(spec.comparison)
            if isinstance(sc, AucScore):
                gv, overall = _auc_group(items, sc)
                phi = {"group": (gv, ~np.isfinite(gv))}
                contrast = gv - overall[:, None]
                vals, signed = _scalar_values(spec, ad, sc, comp, phi, contrast=contrast)
            else:
                vals, signed = _set_metric_chunk(spec, ad, sc, comp, items), {}
            for g, v in vals.items():
                acc.setdefault((spec.name, cls, g), []).append(v)
            for g, (label, v) in signed.items():
                acc.setdefault(("basis", spec.name, cls, g), [label]).append(v)
    for key, parts in acc.items():
        if key[0] == "basis":
            label, parts = parts[0], parts[1:]
            v = np.concatenate(parts)
            basis[key[1:]] = {"basis": label, "basis_reps": v[:B], "basis_obs": v[B]}
        else:
            out[key] = np.concatenate(parts)[:B]


def _set_metric_chunk(spec, ad, score, comp, items: _ClassItems) -> dict:
    """W1 / AEG metrics of one chunk: {group label: (Bc,)}; mirrors the
    engine's set metrics (accumulated value undefined if any part is)."""
    k, gen = ad.k, spec.generalized
    cats = _CATS[getattr(score, "select", "all")]
    n = items.n(cats)  # (Bc, k)
    n_all = n.sum(1)
    out = {}
    if gen == "PCM":
        vals = []
        for a, b in ad.pairs():
            if comp.name == "W1":
                vals.append(items.w1(cats, ("g", a), ("g", b)))
            else:  # AEG(background a, group b) = 1/2 - U(a over b) / (|a||b|)
                vals.append(0.5 - _ratio(items.u_pair(cats, cats, a, b), n[:, a] * n[:, b]))
        V = np.column_stack(vals) if vals else np.zeros((n.shape[0], 0))
        for i, name in enumerate(ad.pair_names()):
            out[name] = V[:, i]
        N = normalizer_value(spec.normalizer, k)
        out[None] = _acc(V, N)
        return out
    if gen not in ("BCM", "VBCM"):
        raise MetricError(f"{spec.name}: {gen} with a set-valued score is not defined (use PCM, BCM or VBCM)")
    bg = _BACKGROUND.get(spec.background)
    if bg is None:
        raise MetricError(f"{spec.name}: background must be 'all' or 'rest', got {spec.background!r}")
    if comp.name == "W1":
        V = items.w1_groups(cats, bg)
    else:  # AEG = 1/2 - U(bg over t)/(|bg||t|) = U(t over bg)/(|bg||t|) - 1/2
        U = items.u_over_all(cats, cats)
        nb = np.repeat(n_all[:, None], k, 1)
        if bg == "rest":
            U = U - items.u_grp(cats, cats)
            nb = nb - n
        V = _ratio(U, nb * n) - 0.5
    for t, name in enumerate(ad.groups):
        out[name] = V[:, t]
    if gen == "BCM":
        out[None] = _acc(V, normalizer_value(spec.normalizer, k))
    return out


def _acc(V, N):
    if N == 0 or V.shape[1] == 0:
        return np.full(V.shape[0], np.nan)
    bad = ~np.isfinite(V).all(axis=1)
    return np.where(bad, np.nan, np.nan_to_num(V).sum(axis=1) / N)


# --------------------------------------------------------------------------
# generic path: resample, then the engine
# --------------------------------------------------------------------------
def resampled_attribute(prep: _Prepared, w: np.ndarray) -> AttributeData:
    """The attribute's data in one resample: rows of template j repeated
    ``w[j]`` times, each copy a template of its own; the observed tuples of a
    complete template repeated with its copies."""
    ad = prep.ad
    w = np.asarray(w, dtype=np.int64)
    n = len(ad.g)
    reps = w[prep.tpl] if n else np.zeros(0, np.int64)
    new_rows = np.repeat(np.arange(n), reps)
    start = np.cumsum(reps) - reps
    copy = np.arange(new_rows.size) - start[new_rows]
    wc = w[prep.complete_idx] if len(prep.complete_idx) else np.zeros(0, np.int64)
    comp_start = np.cumsum(wc) - wc
    rt = ad.row_template[new_rows]
    new_rt = np.where(rt >= 0, comp_start[np.maximum(rt, 0)] + copy if wc.size else -1, -1)
    templates = [f"{ad.templates[j]}#{r}" for j in range(len(wc)) for r in range(int(wc[j]))]
    tt = ad.tuple_template
    if len(tt):
        tw = wc[tt]
        idx = np.repeat(np.arange(len(tt)), tw)
        tcopy = np.arange(idx.size) - (np.cumsum(tw) - tw)[idx]
        tuples = start[ad.tuples[idx]] + tcopy[:, None]
        tuple_template = comp_start[tt[idx]] + tcopy
    else:
        tuples = np.zeros((0, ad.k), dtype=np.int64)
        tuple_template = np.zeros(0, dtype=np.int64)
    y, yhat = ad.y[new_rows], ad.yhat[new_rows]
    return AttributeData(
        attribute=ad.attribute, groups=list(ad.groups), classes=ad.classes, g=ad.g[new_rows], y=y, yhat=yhat,
        counts=classification_counts(y, yhat), item_row=np.arange(new_rows.size), item_P=ad.item_P[new_rows],
        item_y=ad.item_y[new_rows], tuples=tuples.astype(np.int64), tuple_template=tuple_template.astype(np.int64),
        templates=templates, row_template=new_rt.astype(np.int64),
    )


def _generic_attribute(prep: _Prepared, specs, W) -> dict:
    B = W.shape[0]
    out: dict = {}
    for b in range(B):
        adb = resampled_attribute(prep, W[b])
        for spec in specs:
            for r in metric_rows(spec, adb):
                key = (r["metric"], r["class"], r["group"])
                if key not in out:
                    out[key] = np.full(B, np.nan)
                if r["value"] is not None:
                    out[key][b] = r["value"]
    return out


# --------------------------------------------------------------------------
# percentiles into the results
# --------------------------------------------------------------------------
def _fill(results: pd.DataFrame, keys, reps, extra, confidence: float, B: int):
    out = results.copy()
    index = {k: i for i, k in enumerate(keys)}
    alpha = 1.0 - float(confidence)
    defined = np.isfinite(reps)
    frac_undef = 1.0 - defined.mean(axis=1) if reps.size else np.zeros(len(keys))
    q = np.full((2, len(keys)), np.nan)
    full = defined.all(axis=1) if reps.size else np.zeros(len(keys), bool)
    probs = [alpha / 2, 1 - alpha / 2]
    if full.any():
        q[:, full] = np.quantile(reps[full], probs, axis=1)
    part = ~full & defined.any(axis=1) if reps.size else full
    if part.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            q[:, part] = np.nanquantile(reps[part], probs, axis=1)
    lows, highs, notes = out["ci_low"].to_numpy(dtype=float).copy(), out["ci_high"].to_numpy(dtype=float).copy(), \
        out["note"].to_numpy(dtype=object).copy()
    basis_rows = []
    for pos, r in enumerate(out[["attribute", "metric", "class", "group", "value", "family"]].itertuples(index=False)):
        if r.family not in GENERALIZED:
            continue
        g = r.group if isinstance(r.group, str) else None
        key = (r.attribute, r.metric, r[2], g)
        i = index.get(key)
        if i is None or pd.isna(r.value):
            continue
        e = extra.get(key, {})
        J = e.get("templates", 0)
        brow = {"metric": r.metric, "attribute": r.attribute, "class": r[2], "group": g,
                "undefined": float(frac_undef[i]), "templates": J, "B": B, "confidence": float(confidence),
                "basis": None, "basis_value": None, "basis_low": None, "basis_high": None}
        msg = None
        if J < 2:
            msg = f"bootstrap: needs at least 2 templates, found {J}; no interval"
        elif frac_undef[i] > MAX_UNDEFINED:
            msg = f"bootstrap: undefined in {frac_undef[i]:.0%} of {B} template resamples; no interval"
        else:
            lows[pos], highs[pos] = q[0, i], q[1, i]
            if frac_undef[i] > NOTE_FRACTION:
                msg = f"bootstrap: undefined in {frac_undef[i]:.0%} of {B} template resamples (dropped from the interval)"
            if "basis_reps" in e:
                v = e["basis_reps"]
                ok = np.isfinite(v)
                if ok.mean() >= 1 - MAX_UNDEFINED and np.isfinite(e["basis_obs"]):
                    bl, bh = np.quantile(v[ok], [alpha / 2, 1 - alpha / 2])
                    brow.update(basis=e["basis"], basis_value=float(e["basis_obs"]), basis_low=float(bl),
                                basis_high=float(bh))
        if msg:
            notes[pos] = msg if notes[pos] is None or (isinstance(notes[pos], float) and np.isnan(notes[pos])) \
                else f"{notes[pos]}; {msg}"
        basis_rows.append(brow)
    out["ci_low"], out["ci_high"], out["note"] = lows, highs, notes
    out["note"] = out["note"].astype(object).where(out["note"].notna(), None)
    cols = ["metric", "attribute", "class", "group", "undefined", "templates", "B", "confidence",
            "basis", "basis_value", "basis_low", "basis_high"]
    return out, pd.DataFrame(basis_rows, columns=cols)

