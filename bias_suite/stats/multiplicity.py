r"""Error control over the claims of a run: which p-values may stand.

A run tests hundreds of hypotheses at once (every group or pair, class and
metric, the tests, the Bernstein rows). :func:`control` decides which of
them are claimed, given their p-values and, for the hierarchical method, the
*unit* each belongs to. Three methods:

``"hierarchical"`` (the default of :func:`bias_suite.stats.verdicts.add_verdicts`)
    Two stages. A unit is what a reader acts on: one group or pair of an
    attribute, every metric and class about it together ("group g0 is
    treated differently"); the caller defines them
    (:mod:`bias_suite.stats.verdicts`: per attribute, a unit per group, per
    pair, and per topic of the rows about no group, such as the tests).

    1. Each unit u gets the Simes p-value of its m_u hypotheses,
       :math:`p_u = \min_i m_u\,p_{(i)}/i` (sorted within the unit), which
       tests "nothing in the unit" and is valid when the unit's p-values are
       positively dependent (proven for PRDS p-values; for the two-sided
       p-values of correlated, roughly normal statistics, such as the rows
       about one group, it is known to hold in simulation);
       Holm's step-down procedure over the U units at level alpha selects R
       units. The family-wise error rate of these unit claims is at most
       alpha: on data without any effect, the chance that any unit is claimed
       is at most alpha.
    2. Within each selected unit the hypotheses are tested by
       Benjamini-Hochberg at level alpha R / U (``within="bh"``; or Holm at
       alpha R / U, ``within="holm"``). This is Benjamini and Bogomolov's
       (2014) selective inference over families: averaged over the selected
       units, the share of false claims among a unit's claims (its FDR;
       with Holm, the chance of any false claim in it) is at most alpha
       (proven for independent units; the units of a run are not, which
       benchmarks/calibration.py measures).

    A group whose treatment shows in several rows (a counterfactual gap, an
    AEG, FNED, FNR-Ratio of one class) is found on their joint evidence, and
    its rows are then tested at a level that grows with the share of units
    claimed rather than shrinking with every value of the run.

``"holm"``
    Holm's step-down procedure over all m hypotheses: family-wise error rate
    alpha for every single claim.

``"bh"``
    Benjamini-Hochberg over all m hypotheses: false-discovery rate alpha.

References: Simes (1986), Biometrika 73:751; Holm (1979), Scand. J. Stat.
6:65; Benjamini and Hochberg (1995), JRSS B 57:289; Benjamini and Bogomolov
(2014), JRSS B 76:297.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Hashable, Sequence

import numpy as np

from ..exceptions import MetricError
from ..metrics.comparisons import COMPARISONS
from ..metrics.materiality import RATIOS
from ..metrics.scores import SCORES

__all__ = ["METHODS", "Control", "control", "control_claims", "is_hypothesis", "hypothesis_key", "unit_of", "simes",
           "holm", "bh", "guarantee", "rate_null", "ratios_tested_by_differences"]

METHODS = ("hierarchical", "holm", "bh")
WITHIN = ("bh", "holm")


def _check_p(p) -> np.ndarray:
    p = np.asarray(p, dtype=float).ravel()
    if np.isnan(p).any() or np.any((p < 0) | (p > 1)):
        raise MetricError(f"p-values must lie in [0, 1], got {p[np.isnan(p) | (p < 0) | (p > 1)][:5].tolist()}")
    return p


def simes(p) -> float:
    r"""Simes' combined p-value of the hypotheses with p-values ``p``:
    :math:`\min_i m\,p_{(i)}/i`, at most 1 (1 for no p-values)."""
    p = np.sort(_check_p(p))
    if not p.size:
        return 1.0
    return float(min(1.0, np.min(p.size * p / np.arange(1, p.size + 1))))


def holm(p) -> np.ndarray:
    """Holm-adjusted p-values (in the input order): the i-th smallest
    becomes max over j <= i of min(1, (m - j + 1) p_(j))."""
    p = _check_p(p)
    m = p.size
    if not m:
        return p
    order = np.argsort(p, kind="stable")
    adj = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adj
    return out


def bh(p) -> np.ndarray:
    """Benjamini-Hochberg q-values (in the input order): the i-th smallest
    becomes min over j >= i of min(1, m p_(j) / j)."""
    p = _check_p(p)
    m = p.size
    if not m:
        return p
    order = np.argsort(p, kind="stable")
    adj = np.minimum.accumulate(np.minimum(1.0, m * p[order] / np.arange(1, m + 1))[::-1])[::-1]
    out = np.empty(m)
    out[order] = adj
    return out


@dataclass(frozen=True)
class Control:
    """The outcome of :func:`control`, per hypothesis in the input order.

    claimed : whether the hypothesis is rejected (its claim stands).
    adjusted : a number comparable with alpha, claimed iff <= alpha: the
        Holm-adjusted p or the BH q-value; hierarchical: the unit's adjusted
        p where the unit is not selected, else the within-unit adjusted
        value times U / R.
    unit_adjusted : hierarchical: the Holm-adjusted Simes p of the
        hypothesis' unit (else None).
    method, within, alpha; m : hypotheses; units : U; selected : R.
    """

    method: str
    alpha: float
    claimed: np.ndarray
    adjusted: np.ndarray
    m: int
    within: str | None = None
    units: int = 0
    selected: int = 0
    unit_adjusted: np.ndarray | None = field(default=None, repr=False)

    @property
    def level(self) -> float:
        """The within-unit level alpha R / U (hierarchical; else alpha)."""
        if self.method != "hierarchical":
            return self.alpha
        return self.alpha * self.selected / self.units if self.units else 0.0


def control(p, units: Sequence[Hashable] | None = None, *, alpha: float = 0.05, method: str = "hierarchical",
            within: str = "bh") -> Control:
    """Which of the hypotheses with p-values ``p`` are claimed (module doc).

    ``units`` (hierarchical only, required there): the unit of each
    hypothesis, any hashable. Never claims more when a p-value grows, and
    claims nothing when every p-value is 1.
    """
    if method not in METHODS:
        raise MetricError(f"multiplicity must be one of {list(METHODS)}, got {method!r}")
    if within not in WITHIN:
        raise MetricError(f"within must be one of {list(WITHIN)}, got {within!r}")
    p = _check_p(p)
    m = p.size
    if method in ("holm", "bh"):
        adj = holm(p) if method == "holm" else bh(p)
        return Control(method, alpha, adj <= alpha, adj, m)
    if units is None or len(units) != m:
        raise MetricError("the hierarchical method needs one unit per p-value")
    names = list(dict.fromkeys(units))
    index = {u: i for i, u in enumerate(names)}
    code = np.array([index[u] for u in units], dtype=int)
    U = len(names)
    if not m:
        return Control(method, alpha, np.zeros(0, bool), p, 0, within, 0, 0, p)
    unit_p = np.array([simes(p[code == k]) for k in range(U)])
    unit_adj = holm(unit_p)
    chosen = unit_adj <= alpha
    R = int(chosen.sum())
    adjusted = unit_adj[code].copy()
    claimed = np.zeros(m, bool)
    scale = U / R if R else np.inf
    for k in np.flatnonzero(chosen):
        rows = np.flatnonzero(code == k)
        inner = (bh if within == "bh" else holm)(p[rows])
        # tested at alpha R / U: the inner adjusted value times U / R is compared with alpha
        adjusted[rows] = np.maximum(np.minimum(1.0, inner * scale), unit_adj[k])
        claimed[rows] = inner <= alpha * R / U
    return Control(method, alpha, claimed, adjusted, m, within, U, R, unit_adj[code])


def guarantee(method: str, alpha: float, *, m: int, units: int = 0, within: str = "bh") -> str:
    """The guarantee over the claims (``material``, ``small``) of a method, in
    plain words, with its family sizes: the line the summary prints."""
    if method == "holm":
        return f"at most a {alpha:.0%} chance of any false claim (Holm over {m} values)"
    if method == "bh":
        return f"at most {alpha:.0%} of the claims false on average (Benjamini-Hochberg over {m} values)"
    inner = (f"at most {alpha:.0%} of the values claimed within them false on average" if within == "bh"
             else f"at most a {alpha:.0%} chance of a false value claimed within one, on average")
    return (f"at most a {alpha:.0%} chance that any group or pair is wrongly called different ({units} units); "
            f"{inner} ({m} values)")


# --------------------------------------------------------------------------
# the rows of a verdict stage
# --------------------------------------------------------------------------
def is_hypothesis(d) -> bool:
    """Whether a decision of the verdict stage counts in the error control:
    it has a p-value and is not a sum decided by its parts."""
    return (d is not None and d["verdict"] != "undefined" and d.get("p") is not None
            and bool(np.isfinite(d["p"])) and "parts" not in d)


def hypothesis_key(r, d):
    """Rows that test one hypothesis count once: the same attribute, the
    same groups (a|b and b|a alike), the same distance from b and the same
    p-value (FNED and FNED*, a class and its mirror class, TPR-Gap and
    FNR-Gap...); a ratio tested by a difference
    (:func:`ratios_tested_by_differences`) is that difference's hypothesis."""
    if d.get("same_as") is not None:
        return d["same_as"]
    g = r.get("group")
    groups = tuple(sorted(g.split("|"))) if isinstance(g, str) else ()
    size = d.get("effect")
    return (r["attribute"], groups, None if size is None else f"{size:.9g}", f"{d['p']:.9g}")


#: rates that are equal exactly when another one is (FNR = 1 - TPR, TNR = 1 - FPR): one null hypothesis
_SAME_RATE = {"recall": "TPR", "FNR": "TPR", "TNR": "FPR", "identity_FNR": "identity_recall"}
#: the built-in comparisons whose no-bias value is "the two rates are equal"
_SAME_NULL = ("abs", "diff", *RATIOS)


def rate_null(spec, attribute, cls, group):
    """The null hypothesis "the two sides have the same rate" of a group-view
    row that compares a built-in rate (a ratio of summed counts: TPR, FPR,
    precision, F1, positive rate, accuracy...) between a group and its
    background or between two groups, as a hashable key; None for any other
    row. A group's rate equals the rate of all examples exactly when it
    equals the rest's (the rate of all is a weighted mean of the two), so a
    difference to all, a difference to the rest and a ratio to the rest of
    one rate test one hypothesis, as do a pair's difference and ratio."""
    sc, d = getattr(spec, "phi", None), getattr(spec, "d", None)
    if spec.view != "group" or not isinstance(group, str) or getattr(sc, "parts", None) is None \
            or SCORES.get(sc.name) is not sc or spec.true_class \
            or getattr(d, "name", None) not in _SAME_NULL or COMPARISONS.get(d.name) is not d:
        return None  # (a user's comparison, or "value", says something else about the rates)
    if spec.generalized in ("BCM", "VBCM") and spec.background in ("all", "rest") and "|" not in group:
        sides = ("group", group)
    elif spec.generalized == "PCM" and "|" in group:
        sides = ("pair",) + tuple(sorted(group.split("|")))
    else:
        return None
    return (attribute, str(cls), _SAME_RATE.get(sc.name, sc.name), sides)


def ratios_tested_by_differences(recs, decided) -> None:
    """A ratio of two rates and the difference of the same rates test one
    hypothesis (:func:`rate_null`); test it once, by the difference, in
    place. A ratio rests on its weaker side (its standard error on the log
    scale is that of the smaller rate, whose events may come from a few
    templates), while the difference rests on the events of both; both are
    valid tests of equal rates, and the difference is chosen beforehand,
    never the smaller p-value of the two. The ratio's verdict still reads
    its own interval (whether it excludes 1 and reaches past the band); its
    p-value, degrees of freedom and hypothesis become the difference's, so
    the error control counts them once. A ratio whose run has no such
    difference keeps its own test. Decisions are the ``d`` dicts of
    :func:`control_claims`, which carry ``null`` (:func:`rate_null`) and
    ``ratio`` (whether the row is a ratio)."""
    twins = {}
    for r, d in zip(recs, decided):
        if is_hypothesis(d) and d.get("null") is not None and not d.get("ratio"):
            twins.setdefault(d["null"], (r, d))
    for r, d in zip(recs, decided):
        if not (is_hypothesis(d) and d.get("ratio") and d.get("null") in twins):
            continue
        tr, td = twins[d["null"]]
        d.update(p=td["p"], df=td.get("df"), t=td.get("t"), same_as=hypothesis_key(tr, td), tested_by=tr["metric"])


def unit_of(r, d):
    """The unit of a row (hierarchical error control): its attribute and its
    group or pair (a|b and b|a alike), every topic together; a row about no
    group or pair (the tests of an attribute) is one unit per attribute and
    topic."""
    g = r.get("group")
    if isinstance(g, str):
        return (r["attribute"], "group", "|".join(sorted(g.split("|"))))
    return (r["attribute"], "topic", d.get("topic") or str(r.get("family")))


def _unit_text(unit) -> str:
    attribute, kind, name = unit
    if kind == "topic":
        return f"the groups of '{attribute}' ({name})"
    return f"'{name}'" if "|" not in name else "'" + "' vs '".join(name.split("|")) + "'"


def control_claims(recs, decided, *, alpha: float, method: str) -> dict:
    """The error control of the verdict stage
    (:func:`bias_suite.stats.verdicts.add_verdicts`): ``decided`` holds one
    decision per row of ``recs`` (None: not judged). A ``material`` or
    ``small`` claim is kept only when it passes :func:`control` across
    every row that could make a claim (a p-value: intervals, tests; not a
    sum decided by its parts), one hypothesis per :func:`hypothesis_key`,
    units by :func:`unit_of`; the others are demoted in place (``material``
    to ``inconclusive``, ``small`` to ``negligible`` within b ± tau, else
    ``inconclusive``), the reason saying why. Every decision with a
    p-value gets ``q``, its adjusted value. Returns the sizes ``{"family":
    m, "units": U, "selected": R}``."""
    if method not in METHODS:
        raise MetricError(f"multiplicity must be one of {list(METHODS)}, got {method!r}")
    keys, members = {}, []
    for r, d in zip(recs, decided):
        if not is_hypothesis(d):
            continue
        key = hypothesis_key(r, d)
        keys.setdefault(key, (float(d["p"]), unit_of(r, d)))
        members.append((key, d))
    if not keys:
        return {"family": 0, "units": 0, "selected": 0}
    uniq = list(keys)
    ctl = control(np.array([keys[k][0] for k in uniq]), [keys[k][1] for k in uniq], alpha=alpha, method=method)
    pos = {k: i for i, k in enumerate(uniq)}
    m, U, R = ctl.m, ctl.units, ctl.selected
    what = {"bh": "at a false-discovery rate of", "holm": "at a family-wise error rate of"}.get(method)
    for key, d in members:
        i = pos[key]
        d["q"] = float(ctl.adjusted[i])
        if d["verdict"] not in ("material", "small") or ctl.claimed[i]:
            continue
        was = d["verdict"]
        if method == "hierarchical":
            unit = keys[key][1]
            if ctl.unit_adjusted[i] > alpha:
                why = (f"no difference shown for {_unit_text(unit)} at a family-wise error rate of {alpha:.0%} "
                       f"(Holm-adjusted Simes p = {ctl.unit_adjusted[i]:.2g}, {U} units, {m} values)")
            else:
                why = (f"a difference is shown for {_unit_text(unit)}, but this value is not among its claims at a "
                       f"false-discovery rate of {ctl.level:.2g} ({alpha:.0%} x {R} of {U} units claimed; "
                       f"adjusted {d['q']:.2g}, {m} values)")
        else:
            adj = f"{'q' if method == 'bh' else 'Holm-adjusted p'} = {d['q']:.2g}, {m} values"
            why = f"{what} {alpha:.0%} ({adj})"
        if d.get("tested_by"):
            why += f" (tested by {d['tested_by']}, the difference of the same rates)"
        if d.get("test"):
            d.update(verdict="inconclusive",
                     reason=d["demoted"]["reason"] + (f" (not significant {why})" if method != "hierarchical"
                                                      else f" (not significant: {why})"))
            continue
        d["verdict"] = "negligible" if was == "small" and d.get("within") else "inconclusive"
        noun = "real" if was == "small" else "material"
        d["reason"] += f"; not {noun} {why}" if method != "hierarchical" else f"; not {noun}: {why}"
    return {"family": m, "units": U, "selected": R}
