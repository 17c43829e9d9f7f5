r"""Verdicts: what a value and its interval say, as one of five categories.

:func:`add_verdicts` appends ``verdict``, ``threshold`` (tau), ``baseline``
(b), ``effect`` (|value − b| / tau) and ``reason`` after ``note``. With the
row's interval I (at the run's confidence) and the metric's no-bias value b
and threshold tau (:mod:`bias_suite.metrics.materiality`):

- ``material``: I excludes b and |value − b| ≥ tau;
- ``small``: I excludes b and |value − b| < tau: real, below the threshold;
- ``negligible``: I contains b and lies inside [b − tau, b + tau];
- ``inconclusive``: I contains b and reaches past b ± tau (the reason says
  about how many more templates would decide it, from half-widths shrinking
  as 1/sqrt(n)), or there is no interval, or too few templates/examples;
- ``undefined``: the value is null.

What is judged:

- Signed values (AccuracyDiff, PosAEG, Bernstein disparities, ...) by their
  own interval.
- Absolute values with a signed quantity underneath (FNED, FPED per group;
  TPR-Gap, ParityGap, DisparityScore per pair; CFGap, CFGap-TC, PertSS and
  AvgScoreDiff per pair, as the mean signed difference over variants or
  templates; ...) by the interval of that signed difference from the same
  bootstrap resamples: a percentile interval of |x| is pushed away from 0 by
  noise and would call everything biased. The row's ``effect`` is that of
  the signed difference and its ``reason`` starts with it.
- Distances with no signed quantity underneath in the counterfactual view
  (AvgIF (W1), PertSD, PertSR, CFGap without a bootstrap basis): a term swap
  that moves predictions at random gives them a positive value however many
  templates there are, so they are never ``material`` or ``small``:
  ``negligible`` when the whole interval is below tau, otherwise
  ``inconclusive`` (no ``effect``). Group-view distances (AvgGF) shrink with
  the sample and are judged one-sided against tau: ``material`` when the
  whole interval is at or above tau, ``negligible`` when it is below tau,
  ``inconclusive`` otherwise.
- Accumulated sums of |parts| (FNED, TPR-Gap, CFGap, ... with group null):
  the worst verdict of their parts (material, then inconclusive, then
  small, then negligible), the ``effect`` of the largest part; the reason
  counts the parts' verdicts and names the worst. tau is shown per sum:
  tau × parts / N.
- Ratios by |log ratio| against log 1.25 (the four-fifths rule: material
  outside [0.8, 1.25]).
- Subgroup AUC, BPSN and BNSP by the paired contrast AUC(group) − AUC(all)
  from the same resamples (b = the overall AUC).
- Significance tests (their own p-values, in the error control below) say
  whether groups are ordered consistently across templates, not how much:
  ``small`` when significant, else ``inconclusive``.

Many values are judged at once. A ``material`` or ``small`` verdict (a claim
that the interval excludes b) is kept only when its p-value (the distance
from b over the bootstrap standard error taken from the half of the
interval that faces b, referred to Student's t with the clusters less one,
at most ``MAX_DF``) passes the error control across every value judged in
the same call (:mod:`bias_suite.stats.multiplicity`; by default
hierarchical: groups and pairs by Holm over Simes p-values, then their
values by BH at alpha R / U; sums decided by their parts are not counted
twice); otherwise a ``material`` becomes ``inconclusive``, a ``small``
becomes ``negligible`` when its interval lies within b ± tau and
``inconclusive`` otherwise, and the reason says so.
``results.attrs["intervals"]`` records this for the summary.
"""
from __future__ import annotations

import functools
import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import MetricError, did_you_mean
from ..metrics.catalog import REGISTRY, get_metric
from ..metrics.comparisons import ROUND_OFF
from ..metrics.generalized import GENERALIZED, normalizer_value
from .evidence import MIN_EVENT_TEMPLATES, PairedBound
from .multiplicity import METHODS, control_claims, guarantee, is_hypothesis, rate_null, ratios_tested_by_differences
from .defaults import DEFAULT_MULTIPLICITY  # the default error control (evaluate, run, compare read it too)
from ..metrics.materiality import RATIO_BAND, TOPICS
from .suite_size import sized_reason, templates_for_tau
from .topics import SEVERITY, VERDICTS

__all__ = ["add_verdicts", "direction_of", "check_thresholds", "control_claims", "decide", "significance_verdict", "no_bias_reference", "VERDICTS", "VERDICT_COLUMNS", "EVIDENCE_COLUMNS",
           "SIGNED_COLUMNS",
           "DEFAULT_TOLERANCE"]

DEFAULT_TOLERANCE = 0.05
MIN_N = 20
MIN_TEMPLATES = 5
#: a row undefined in more than this share of the template resamples is inconclusive
MAX_UNDEFINED_SHARE = 0.1
#: the most degrees of freedom a bootstrapped row's p-value reads Student's t with (docs/statistics.md)
MAX_DF = 20
#: the error controls over a run's claims (bias_suite.stats.multiplicity); the default is in stats.defaults
MULTIPLICITY = METHODS

_SCORE_TEXT = {"positive_rate": "positive rate", "gold_prob": "gold-class probability", "recall": "recall"}
_BERNSTEIN_TEXT = {  # delta_bar > 0 means ...
    "DemographicParity": ("predicted '{c}' less often", "predicted '{c}' more often"),
    "EqualOpportunity": ("lower true-positive rate", "higher true-positive rate"),
    "FalsePositiveParity": ("higher false-positive rate", "lower false-positive rate"),
}


# --------------------------------------------------------------------------
# the decision
# --------------------------------------------------------------------------
#: how bad a part's verdict is for a sum of parts, by severity (bias_suite.stats.topics): one material part makes
#: the sum material; a part that may still be material (inconclusive) outweighs a real but small one
_WORST = {v: len(SEVERITY) - k for k, v in enumerate(SEVERITY) if v != "undefined"}
VERDICT_COLUMNS = ["verdict", "threshold", "baseline", "effect", "reason"]
#: after the verdict columns (and ``source``, ``consistency``): the p-value of a row's hypothesis and its
#: adjusted value in the run's error control
EVIDENCE_COLUMNS = ["p", "q"]
#: after them: the value a verdict is decided on and its interval, with their sign (a difference's signed
#: basis, an AUC's contrast with the overall AUC, a ratio as it is); null where nothing signed was judged
SIGNED_COLUMNS = ["signed", "signed_low", "signed_high"]


@functools.lru_cache(maxsize=16)
def _z(confidence: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 + confidence / 2))


def _fmt(x) -> str:
    return f"{x:.3g}" if abs(x) >= 1e-3 or x == 0 else f"{x:.2e}"


def _more(halfwidth: float, needed: float, templates, paired=None, target: float = 0.0, z: float = 1.96) -> str:
    """'about k× as many templates' to shrink an interval's half-width to
    ``needed`` (half-widths shrink as 1/sqrt(n)); a rate comparison's
    templates of its class (:meth:`PairedBound.needed_text`)."""
    said = paired.needed_text(halfwidth, needed, target, z) if paired is not None else None
    if said:
        return said
    if not (halfwidth > 0) or not (needed > 0):
        return "more data would decide it"
    k = (halfwidth / needed) ** 2
    if k > 100:
        return "it would take more than 100× the templates to decide"
    k = max(k, 1.1)
    if templates:
        return f"about {math.ceil(k * float(templates))} templates (now {int(templates)}) would decide it"
    return f"about {k:.1f}× as much data would decide it"


def decide(value, low, high, *, kind: str, tau: float, baseline: float = 0.0, confidence: float = 0.95,
           templates=None, direction: tuple[str, str] | None = None, what: str = "the value",
           df: int | None = None, paired: PairedBound | None = None) -> dict:
    """One verdict: ``{verdict, effect, reason, p}``.

    kind "signed": ``value``/``low``/``high`` are a signed quantity with
    no-bias value ``baseline`` (a difference, an AUC contrast, a Bernstein
    disparity); "ratio": a ratio, judged on its log against log 1.25;
    "unsigned": a distance or absolute value (no signed quantity underneath),
    judged one-sided against tau. ``p`` is the p-value of the hypothesis "no
    bias" (one-sided "below tau" for "unsigned"): the distance from b over
    the bootstrap standard error read off the half of the interval that
    faces b, referred to Student's t with ``df`` degrees of freedom (the
    clusters less one; normal when None). :func:`add_verdicts` controls the
    error rate of the claims across the rows it judges.

    ``paired``: a rate comparison's :class:`PairedBound`; where the interval
    is that bound (``paired.exact``) it holds b at every level: p is 1;
    elsewhere p is the bound's sign-flip p-value (the templates'
    contributions to the difference, exact up to 14 of them), not the
    bootstrap's t.

    Round-off: a value or interval end within ROUND_OFF of b is b, and the
    threshold comparisons allow ROUND_OFF, so an interval that ends at
    -0.050000000000000044 lies within ±0.05.
    """
    if value is None or not np.isfinite(value):
        return {"verdict": "undefined", "effect": None, "reason": "the value is undefined (see note)", "p": None}
    exact = paired is not None and paired.exact  # the interval is the exact paired bound, which always holds b
    if kind == "ratio":
        to_log = (lambda x: math.log(max(x, 1e-12)) if x is not None and np.isfinite(x) and x >= 0 else None)
        # an interval reaching down to a ratio of 0 is an interval all the same (log 0 taken as log 1e-12)
        v = math.log(value) if value is not None and np.isfinite(value) and value > 0 else None
        lo, hi, b, t = to_log(low), to_log(high), 0.0, math.log(RATIO_BAND)
        if v is None:
            return {"verdict": "undefined", "effect": None, "reason": "a ratio of 0 or less cannot be judged", "p": None}
    else:
        v, lo, hi, b, t = float(value), low, high, float(baseline), float(tau)
    v, lo, hi = (_snap(x, b) for x in (v, lo, hi))
    dist = abs(v - b) if kind not in ("unsigned", "distance") else v
    effect = dist / t if t > 0 else None
    if effect is not None and abs(effect - round(effect)) <= ROUND_OFF:
        effect = float(round(effect))
    shown = (f"{_fmt(value)}" if kind != "signed" or baseline == 0 else f"{_fmt(value)} (no-bias value {_fmt(baseline)})")
    if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
        return {"verdict": "inconclusive", "effect": effect, "p": None,
                "reason": f"{what} is {shown} but has no interval to judge it by (intervals: --bootstrap B > 0)"}
    half = (hi - lo) / 2
    z = _z(confidence)  # the bootstrap distribution's spread: its quantiles are normal ones
    se = half / z if half > 0 else 0.0
    band = ("[0.8, 1.25]" if kind == "ratio" else f"±{_fmt(t)} of {_fmt(b)}" if kind == "signed" else f"below {_fmt(t)}")
    tol = ROUND_OFF * max(1.0, abs(t))
    if kind == "distance":  # a distance with no signed quantity beneath it: noise alone makes it positive
        if hi < t - tol:  # (no effect: its size is not the size of a bias)
            return {"verdict": "negligible", "effect": None, "p": None,
                    "reason": f"{what} stays below the threshold (the whole interval)"}
        return {"verdict": "inconclusive", "effect": None, "p": None,
                "reason": f"{what} is a distance, which noise alone makes positive, so it cannot show a bias "
                          "by itself; the signed metrics of the same view decide"}
    if kind == "unsigned":
        p = 1.0 if exact else float(_sf((v - t) / se, df)) if se > 0 else (0.0 if v > t else 1.0)
        if lo >= t - tol:
            return {"verdict": "material", "effect": effect, "p": p,
                    "reason": f"{what} is at least {_fmt(t)} (the whole interval)"}
        if hi < t - tol:
            return {"verdict": "negligible", "effect": effect, "p": p,
                    "reason": f"{what} stays below the threshold (the whole interval)"}
        need = (t - v) if v < t else (v - t)
        return {"verdict": "inconclusive", "effect": effect, "p": p,
                "reason": "the interval reaches across the threshold; " + _more(half, need, templates)}
    # the standard error on the side of the interval that faces b: a percentile interval is not symmetric
    # (a ratio whose interval reaches 0 has an unbounded lower half on the log scale, which says nothing
    # about how far the value is from 1)
    toward = (hi - v) if b > v else (v - lo)
    se_b = toward / z if toward > 0 else se
    stat = abs(v - b) / se_b if se_b > 0 else (math.inf if v != b else 0.0)
    p = float(2 * _sf(stat, df)) if se_b > 0 else (0.0 if v != b else 1.0)
    if paired is not None and paired.p is not None:
        p = paired.p  # a rate comparison: the sign-flip test of its templates' contributions
    p = 1.0 if exact else min(p, 1.0)
    excludes = lo > b or hi < b
    side = None
    if direction is not None:
        side = direction[0] if v > b else direction[1]
    within = lo >= b - t - tol and hi <= b + t + tol
    if excludes and dist >= t - tol:
        return {"verdict": "material", "effect": effect, "p": p, "t": stat, "df": df, "within": within,
                "reason": side or f"{what} is beyond the threshold"}
    if excludes:
        return {"verdict": "small", "effect": effect, "p": p, "t": stat, "df": df, "within": within,
                "reason": (f"{side}, " if side else "real, ") + "but within the threshold"}
    if within:
        return {"verdict": "negligible", "effect": effect, "p": p, "t": stat, "df": df,
                "reason": f"the interval lies within {band}"}
    need = (t - dist) if dist < t else dist
    target = -math.expm1(-max(t - dist, 0.0)) if kind == "ratio" else max(t - dist, 0.0)  # the room, linear
    more = _more(half, need, templates, paired, target, z)
    return {"verdict": "inconclusive", "effect": effect, "p": p, "t": stat, "df": df,
            "reason": "the interval holds the no-bias value and reaches past the threshold; " + more
                      + ("" if exact else templates_for_tau(half, t, templates))}


def _snap(x, b):
    """``x`` as b when it is within round-off of b (None stays None)."""
    if x is None or not np.isfinite(x):
        return x
    return b if abs(x - b) <= ROUND_OFF * max(1.0, abs(b)) else x


def _sf(x: float, df: int | None) -> float:
    """P(T > x): normal, or Student's t with ``df`` degrees of freedom."""
    if df is None or df > 1000:
        return _norm_sf(x)
    from scipy.special import stdtr  # Student's t CDF: the values of scipy.stats.t.sf without its per-call overhead

    return float(stdtr(max(int(df), 1), -x))


def _norm_sf(z: float) -> float:
    """P(Z > z) of a standard normal (scipy's norm.sf, without its per-call overhead)."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


def no_bias_reference(spec) -> tuple[str, float]:
    """(kind, no-bias value) of a metric: ("ratio", 1), ("auc", overall AUC
    via the bootstrap contrast: 0 on the contrast), ("signed", 0) or
    ("unsigned", 0): the record's scale and no-bias value
    (:attr:`~bias_suite.metrics.catalog.MetricSpec.scale`)."""
    spec = get_metric(spec)
    if spec.baseline == "overall_auc":
        return "auc", 0.0
    return spec.scale, 1.0 if spec.scale == "ratio" else 0.0


def _wilcoxon_min_p(n: int) -> float:
    return min(1.0, 2.0 / 2.0 ** n)


def _friedman_min_p(n: int, k: int) -> float:
    from scipy.stats import chi2

    return float(chi2.sf(n * (k - 1), k - 1))


def significance_verdict(p, *, test: str, n=None, k=None, effect=None, groups: Sequence[str] | None = None,
                         confidence: float = 0.95, adjusted: str | None = None) -> dict | None:
    """A test says whether groups are ordered consistently across templates,
    not how large the difference is: significant -> ``small`` (real; the
    metric rows say whether it is material), otherwise ``inconclusive``.

    ``p`` is the test's own p-value; :func:`add_verdicts` keeps a ``small``
    only when it passes the error control over every value judged together
    (``adjusted`` names an adjustment already applied to ``p``, for a
    verdict of one test alone)."""
    if p is None or not np.isfinite(p):
        return None
    alpha = 1.0 - confidence
    which = f"{adjusted.upper() if adjusted == 'bh' else adjusted.capitalize()}-adjusted p" if adjusted else "p"
    size = ""
    if effect is not None and np.isfinite(effect):
        size = f", effect size {'r' if test == 'Wilcoxon' else 'W'} = {effect:.2f}"
    if n is not None:
        if test == "Wilcoxon":
            min_p = _wilcoxon_min_p(int(n))
            need = next(m for m in range(1, 200) if _wilcoxon_min_p(m) < alpha)
        elif k is not None and k >= 2:
            min_p = _friedman_min_p(int(n), int(k))
            need = next((m for m in range(1, 10_000) if _friedman_min_p(m, int(k)) < alpha), None)
        else:
            min_p, need = 0.0, None
        if min_p >= alpha:
            return {"verdict": "inconclusive", "effect": None, "p": None,
                    "reason": f"with {int(n)} templates the {test} test cannot reach p < {alpha:g}"
                              + (f" (needs at least {need})" if need else "")}
    not_shown = {"verdict": "inconclusive", "effect": None, "p": float(p), "test": True,
                 "reason": f"no consistent ordering of the groups across templates ({which} = {p:.2g}); "
                           "a test cannot show that groups are alike"}
    if p < alpha:
        order = "group scores differ consistently across templates"
        if test == "Wilcoxon" and effect is not None and np.isfinite(effect) and effect != 0 and groups and len(groups) == 2:
            hi, lo = (groups[0], groups[1]) if effect > 0 else (groups[1], groups[0])
            order = f"scores are higher for '{hi}' than '{lo}' consistently across templates"
        return {"verdict": "small", "effect": None, "p": float(p), "test": True, "demoted": not_shown,
                "reason": f"{order} ({which} = {p:.2g}{size}); whether the difference matters is for the "
                          "metric rows to say"}
    return not_shown


# --------------------------------------------------------------------------
# whole results
# --------------------------------------------------------------------------
def _isnull(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA


def _num(v):
    return None if _isnull(v) else float(v)


def direction_of(spec, kind, group, cls, pair_names):
    """(higher text, lower text) for the quantity that decides (a value
    above / below the no-bias value)."""
    d = _direction_texts(spec, kind, group, cls, pair_names)
    # d(background, group) = background - group (or background / group) is
    # high when the group is low; AEG(first, second) is high when the second is high
    reverse = ((spec.generalized in ("BCM", "VBCM") and spec.d.name in ("diff", "ratio") and group is not None
                and "|" not in group) or (spec.generalized == "PCM" and spec.d.name == "AEG"))
    return d[::-1] if (d is not None and reverse and kind != "auc") else d


def _score_text(sc, cls) -> str:
    """A score in words, naming the class it is about."""
    name = getattr(sc, "name", "value")
    if getattr(sc, "at", "all") == "identity" and name.startswith("identity_"):  # the identity-span metrics
        return _name_text(name[len("identity_"):], cls) + " at the identity term"
    return _name_text(name, cls)


def _name_text(name: str, cls) -> str:
    if name in _SCORE_TEXT:
        return _SCORE_TEXT[name]
    if name in ("prob", "mean_prob"):
        return f"probability of '{cls}'"
    if name in ("prob_pos", "mean_prob_pos"):
        return f"probability of '{cls}' (gold '{cls}')"
    if name == "prob_neg":
        return f"probability of '{cls}' (gold not '{cls}')"
    return name


def _direction_texts(spec, kind, group, cls, pair_names):
    sc = spec.phi
    name = _score_text(sc, cls)
    if kind == "auc":
        return (f"AUC higher for '{group}' than for all examples", f"AUC lower for '{group}' than for all examples")
    comp = spec.d.name
    if comp == "AEG":
        what = f"probability of '{cls}'"
        bg = "the rest" if spec.background in ("rest", "S\\S^t") else "all examples"
        if group is not None and "|" not in group:
            return (f"{what} higher for '{group}' than {bg}", f"{what} lower for '{group}' than {bg}")
    if group is None:
        if pair_names and len(pair_names) == 1 and spec.generalized == "PCM":
            a, b = pair_names[0].split("|", 1)
            return (f"{name} higher for '{a}' than '{b}'", f"{name} lower for '{a}' than '{b}'")
        return None
    if "|" in group:
        a, b = group.split("|", 1)
        return (f"{name} higher for '{a}' than '{b}'", f"{name} lower for '{a}' than '{b}'")
    bg = "the rest" if spec.background in ("rest", "S\\S^t") else "all examples"
    return (f"{name} higher for '{group}' than {bg}", f"{name} lower for '{group}' than {bg}")


def _what(group):
    if group is None:
        return "the accumulated value"
    if "|" in group:
        a, b = group.split("|", 1)
        return f"the difference between '{a}' and '{b}'"
    return f"the value for '{group}'"


def _tau(spec, thresholds, tolerance) -> float:
    """tau of a metric: a user's value for its name or its topic, else the
    record's (``tolerance`` overrides every non-ratio default)."""
    for key in (spec.name, spec.topic):
        if thresholds and key in thresholds:
            return float(thresholds[key])
    if tolerance is not None and spec.scale != "ratio":
        return float(tolerance)
    return spec.threshold


def threshold_names(metrics=None) -> set:
    """The keys a ``thresholds`` mapping may use: registered metric names,
    topics, the Bernstein rows (and the names of ``metrics`` given as specs)."""
    names = set(REGISTRY) | set(TOPICS) | {f"Bernstein-{k}" for k in _BERNSTEIN_TEXT}
    for m in (metrics or []):
        names.add(getattr(m, "name", m))
    return names


def check_thresholds(thresholds: Mapping[str, float] | None, metrics=None) -> dict:
    """``thresholds`` as a dict, or one error naming every key that is
    neither a metric nor a topic (a typo would otherwise change nothing)."""
    if not thresholds:
        return {}
    known = threshold_names(metrics)
    bad = [k for k in thresholds if k not in known]
    if bad:
        close = "".join(did_you_mean(b, known).replace("; did you mean", f"; {b!r}: did you mean") for b in bad)
        raise MetricError(f"thresholds for unknown metric or topic {bad}: give a metric name "
                          f"(bias-suite metrics) or a topic ({', '.join(TOPICS)}){close}")
    for k, v in thresholds.items():
        if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
            raise MetricError(f"the threshold of {k!r} must be a positive number, got {v!r}")
    return dict(thresholds)


def add_verdicts(results: pd.DataFrame, *, basis: pd.DataFrame | None = None, confidence: float = 0.95,
                 tolerance: float | None = None,
                 group_orders: Mapping[str, Sequence[str]] | None = None, metrics=None,
                 thresholds: Mapping[str, float] | None = None,
                 min_n: int = MIN_N, min_templates: int = MIN_TEMPLATES,
                 multiplicity: str = DEFAULT_MULTIPLICITY) -> pd.DataFrame:
    """Append (or complete) the verdict columns of tidy results:
    ``verdict`` (material / small / negligible / inconclusive / undefined),
    ``threshold`` (tau), ``baseline`` (b), ``effect`` (|value − b| / tau) and
    ``reason`` (one sentence), after ``note``.

    Parameters
    ----------
    results : tidy results; rows that already carry a verdict keep it (and
        their other verdict columns).
    basis : the ``basis`` frame of :func:`bias_suite.stats.bootstrap.bootstrap`
        (signed differences, AUC contrasts, undefined fractions, templates).
    confidence : the level of the intervals and of the tests.
    tolerance : one tau for every metric that is not a ratio (default: each
        metric's own, see :mod:`bias_suite.metrics.materiality`).
    thresholds : {metric name or topic: tau}, overriding the defaults.
    group_orders : {attribute: groups} (for the direction of Wilcoxon tests).
    metrics : user-defined :class:`MetricSpec` objects that are not registered.

    multiplicity : the error control over the claims of the rows judged
        here: "hierarchical" (default), "holm" or "bh" (module doc);
        ``results.attrs["intervals"]`` records it, its sizes and its
        guarantee in words.
    """
    thresholds = check_thresholds(thresholds, metrics)
    out = results.copy()
    for c in VERDICT_COLUMNS:
        if c not in out.columns:
            out[c] = None
    cols = [c for c in out.columns if c not in VERDICT_COLUMNS]
    pos = cols.index("note") + 1 if "note" in cols else len(cols)
    out = out[cols[:pos] + VERDICT_COLUMNS + cols[pos:]]
    specs = {}
    for m in (metrics or []):
        sp = get_metric(m)
        specs[sp.name] = sp
    bmap = {}
    if basis is not None and len(basis):
        for r in basis.to_dict("records"):
            g = r["group"] if isinstance(r["group"], str) else None
            bmap[(r["metric"], r["attribute"], r["class"], g)] = r
    recs = out.to_dict("records")
    parts: dict = {}
    sig: dict = {}
    for r in recs:
        g = r["group"] if isinstance(r["group"], str) else None
        if r["family"] in GENERALIZED and g is not None:
            parts.setdefault((r["metric"], r["attribute"], r["class"]), []).append(g)
        if r["family"] == "significance":
            sig[(r["attribute"], r["class"], r["metric"])] = r
    decided = []
    for r in recs:
        if r.get("verdict") in VERDICTS:
            decided.append(None)
            continue
        decided.append(_row_verdict(r, specs, bmap, parts, sig, confidence, tolerance, thresholds, group_orders,
                                    min_n, min_templates))
    ratios_tested_by_differences(recs, decided)  # a ratio and a difference of the same rates: one hypothesis
    sizes = control_claims(recs, decided, alpha=1.0 - confidence, method=multiplicity)
    by_key = {}
    for r, d in zip(recs, decided):
        if d is not None and not _isnull(r.get("group")):
            by_key[(r["metric"], r["attribute"], r["class"], r["group"])] = d
    for r, d in zip(recs, decided):  # an accumulated sum of |parts| is as bad as its worst part
        if d is None or "parts" not in d:
            continue
        names = d.pop("parts")
        if d["verdict"] == "undefined" or str(d.get("reason", "")).startswith("only "):
            continue
        got = [(g, by_key.get((r["metric"], r["attribute"], r["class"], g))) for g in names]
        effects = [x["effect"] for _, x in got if x is not None and x.get("effect") is not None]
        d["effect"] = max(effects) if effects else None  # the size of its largest part
        got = [(g, x["verdict"] if x is not None and x["verdict"] in _WORST else "inconclusive") for g, x in got]
        if not got:
            continue
        eff = {g: (x["effect"] if x is not None and x.get("effect") is not None else -1.0)
               for g, x in zip(names, [by_key.get((r["metric"], r["attribute"], r["class"], g)) for g in names])}
        # the worst verdict; among parts with it, the largest effect
        g_worst, worst = max(got, key=lambda gv: (_WORST[gv[1]], eff.get(gv[0], -1.0)))
        d["verdict"] = worst
        counts = {v: sum(1 for _, x in got if x == v) for v in _WORST}
        said = ", ".join(f"{n} {v}" for v, n in sorted(counts.items(), key=lambda kv: -_WORST[kv[0]]) if n)
        worst_name = "' vs '".join(str(g_worst).split("|", 1))
        d["reason"] = (f"judged by its {len(got)} parts ({said}); worst: '{worst_name}'"
                       if worst != "negligible" else f"all {len(got)} parts are negligible")
    for r, d in zip(recs, decided):
        if d is None:
            continue
        # the p-value of the row's hypothesis and its adjusted value in the run's error control
        # (claimed when q <= alpha); null for rows that make no claim
        hyp = is_hypothesis(d)
        r["p"], r["q"] = (float(d["p"]), float(d["q"])) if hyp and d.get("q") is not None else (None, None)
        r["verdict"] = d["verdict"]
        r["threshold"] = d.get("threshold")
        r["baseline"] = d.get("baseline")
        r["effect"] = None if d.get("effect") is None or not np.isfinite(d["effect"]) else float(d["effect"])
        r["reason"] = sized_reason(d)
        sc = d.get("scale") if d["verdict"] != "undefined" else None
        r["signed"], r["signed_low"], r["signed_high"] = sc if sc is not None else (None, None, None)
    for c in EVIDENCE_COLUMNS + SIGNED_COLUMNS:
        if c not in out.columns:
            out[c] = None
    new = pd.DataFrame(recs, columns=out.columns, index=out.index)
    for c in VERDICT_COLUMNS + EVIDENCE_COLUMNS + SIGNED_COLUMNS:
        out[c] = new[c].astype(object).where(new[c].notna(), None)
    for c in ("threshold", "baseline", "effect") + tuple(EVIDENCE_COLUMNS) + tuple(SIGNED_COLUMNS):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    alpha = 1.0 - confidence
    out.attrs["intervals"] = {
        "confidence": confidence,
        "method": guarantee(multiplicity, alpha, m=sizes["family"], units=sizes["units"]),
        "multiplicity": multiplicity,
        **sizes,
    }
    return out


def _row_verdict(r, specs, bmap, parts, sig, confidence, tolerance, thresholds, group_orders, min_n, min_templates):
    metric, fam = str(r["metric"]), r["family"]
    g = r["group"] if isinstance(r["group"], str) else None
    n = None if _isnull(r.get("n")) else int(r["n"])
    value = _num(r.get("value"))
    if fam == "significance":
        for suffix in ("-p-holm", "-p-bh"):
            if metric.endswith(suffix):
                test = metric[: -len(suffix)]
                break
        else:
            if metric.endswith("-p") and not any((r["attribute"], r["class"], metric + s) in sig for s in ("-holm", "-bh")):
                test = metric[:-2]
            else:
                return None
        raw = sig.get((r["attribute"], r["class"], f"{test}-p"))
        p_raw = _num(raw["value"]) if raw is not None else value
        eff = sig.get((r["attribute"], r["class"], f"{test}-r" if test == "Wilcoxon" else f"{test}-W"))
        groups = list(group_orders.get(r["attribute"], [])) if group_orders else None
        k = len(groups) if groups else None
        if k is None and test == "Friedman":
            st, w = sig.get((r["attribute"], r["class"], "Friedman")), sig.get((r["attribute"], r["class"], "Friedman-W"))
            if st is not None and w is not None and _num(w["value"]) and n:
                k = int(round(_num(st["value"]) / (_num(w["value"]) * n))) + 1
        # the test's own p-value joins the error control over every value judged together
        d = significance_verdict(p_raw, test=test, n=n, k=k, effect=_num(eff["value"]) if eff is not None else None,
                                 groups=groups, confidence=confidence)
        return None if d is None else dict(d, topic="significance")
    if fam == "bernstein":
        if metric.endswith("-SampleSize") or not metric.startswith("Bernstein-"):
            return None
        tau = float((thresholds or {}).get(metric, (thresholds or {}).get("Bernstein", tolerance or 0.05)))
        pos_, neg_ = _BERNSTEIN_TEXT.get(metric[len("Bernstein-"):], ("higher cost", "lower cost"))
        direction = (f"{pos_.format(c=r['class'])} for '{g}' than the rest", f"{neg_.format(c=r['class'])} for '{g}' than the rest")
        d = dict(decide(value, _num(r.get("ci_low")), _num(r.get("ci_high")), kind="signed", tau=tau,
                        confidence=confidence, direction=direction, what=f"the disparity for '{g}'"),
                 scale=(value, _num(r.get("ci_low")), _num(r.get("ci_high"))))
        if d["verdict"] in ("material", "small", "negligible") and n is not None and n < min_n:
            d.update(verdict="inconclusive", p=None, reason=f"only {n} examples (fewer than {min_n})")
        return dict(d, threshold=tau, baseline=0.0, topic="Bernstein")
    if fam not in GENERALIZED:
        return None
    spec = specs.get(metric)
    if spec is None:
        try:
            spec = get_metric(metric)
        except MetricError:
            return None
    kind, _ = no_bias_reference(spec)
    spec_kind = kind  # (kind becomes "distance" below for counterfactual distances)
    tau = _tau(spec, thresholds, tolerance)
    b = bmap.get((metric, r["attribute"], r["class"], g), {})
    siblings = parts.get((metric, r["attribute"], r["class"]), [])
    tau_row = tau
    if g is None and kind == "unsigned" and spec.generalized in ("PCM", "BCM") and siblings:
        k = len(siblings) if spec.generalized == "BCM" else int(round((1 + math.sqrt(1 + 8 * len(siblings))) / 2))
        N = normalizer_value(spec.normalizer, k)
        if N:  # an accumulated sum of N-normalised parts: tau per part
            tau_row = tau * len(siblings) / N
    pair_names = [x for x in siblings if "|" in x]
    direction = direction_of(spec, kind, g, r["class"], pair_names)
    bv, blo, bhi = _num(b.get("basis_value")), _num(b.get("basis_low")), _num(b.get("basis_high"))
    has_basis = blo is not None and bhi is not None and np.isfinite(blo) and np.isfinite(bhi) and bv is not None
    lo, hi = _num(r.get("ci_low")), _num(r.get("ci_high"))
    templates = b.get("templates")
    paired = b.get("paired") if isinstance(b.get("paired"), PairedBound) else None
    events = None if _isnull(b.get("event_templates")) else int(b["event_templates"])
    clusters = min(int(templates), events) if events is not None and not _isnull(templates) else templates
    df = min(int(clusters) - 1, MAX_DF) if clusters is not None and not _isnull(clusters) and clusters >= 2 else None
    base = {"threshold": tau_row, "baseline": 1.0 if kind == "ratio" else 0.0}
    if value is None or not np.isfinite(value):
        return dict(decide(None, None, None, kind="signed", tau=tau_row), **base)
    if kind == "auc":
        overall = value - bv if has_basis else None
        base["baseline"] = overall
        if not has_basis:
            return dict(base, verdict="inconclusive", effect=None, p=None,
                        reason="an AUC is judged against the overall AUC, which needs intervals (--bootstrap B > 0)")
        d = dict(decide(bv, blo, bhi, kind="signed", tau=tau_row, confidence=confidence, templates=templates,
                        direction=direction, what="AUC(group) − AUC(all)", df=df), scale=(bv, blo, bhi))
    elif has_basis and kind in ("signed", "unsigned"):
        d = dict(decide(bv, blo, bhi, kind="signed", tau=tau_row, confidence=confidence, templates=templates,
                        direction=direction,
                        what="the signed difference" if kind == "unsigned" else "the AEG across templates", df=df,
                        paired=paired),
                 scale=(bv, blo, bhi))
        if kind == "unsigned":  # effect and verdict are those of the signed difference; the reason gives it
            d["reason"] = f"signed {_fmt(bv)} [{_fmt(blo)}, {_fmt(bhi)}]: " + d["reason"]
        else:  # an AEG, decided across templates (pairs inside a template compare a sentence with its variant)
            d["reason"] = f"across templates {_fmt(bv)} [{_fmt(blo)}, {_fmt(bhi)}]: " + d["reason"]
    elif kind == "ratio":
        d = dict(decide(value, lo, hi, kind="ratio", tau=tau_row, confidence=confidence, templates=templates,
                        direction=direction, what="the ratio", df=df, paired=paired), scale=(value, lo, hi))
    else:
        if kind == "unsigned" and spec.view == "counterfactual":
            kind = "distance"  # no signed quantity beneath it (W1, std, range): see the module doc
        d = dict(decide(value, lo, hi, kind=kind, tau=tau_row, confidence=confidence, templates=templates,
                        direction=direction, what=_what(g), df=df, paired=paired))
        if kind == "signed":
            d["scale"] = (value, lo, hi)
    if g is None and spec_kind == "unsigned" and spec.generalized in ("PCM", "BCM") and siblings:
        d["parts"] = list(siblings)  # decided from its parts' verdicts once they are all known (add_verdicts)
    undefined = b.get("undefined")
    if templates is not None and templates < min_templates and d["verdict"] != "undefined":
        d.update(verdict="inconclusive", p=None,
                 reason=f"only {int(templates)} templates (the intervals need at least {min_templates})")
    elif events is not None and events < MIN_EVENT_TEMPLATES and d["verdict"] != "undefined":
        d.update(verdict="inconclusive", p=None,
                 reason=(f"rests on events in only {events} template{'s' if events != 1 else ''} "
                         f"(at least {MIN_EVENT_TEMPLATES} are needed): "
                         + ("no evidence either way" if events == 0 else "too few to judge")))
    elif undefined is not None and undefined > MAX_UNDEFINED_SHARE and d["verdict"] != "undefined":
        d.update(verdict="inconclusive", p=None,
                 reason=f"undefined in {undefined:.0%} of the template resamples (an interval without them "
                        "would be too narrow)")
    elif spec.view == "group" and n is not None and n < min_n and d["verdict"] in ("material", "small", "negligible"):
        d.update(verdict="inconclusive", p=None, reason=f"only {n} examples (fewer than {min_n})")
    return dict(d, **base, topic=spec.topic, null=rate_null(spec, r["attribute"], r["class"], g),
                ratio=spec_kind == "ratio", templates=templates)
