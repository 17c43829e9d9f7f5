"""The per-group answer: how the model treats each group, worst off first.

:func:`by_group` reads a judged results table (the columns of
docs/formats.md, with ``signed``, ``signed_low``, ``signed_high`` and, where
present, ``source``) and returns one row per attribute and group:

- ``status``: ``worse off`` / ``better off`` (its own material claims with
  a direction all point one way), ``slightly worse off`` / ``slightly
  better off`` (no material one; its own ``small`` claims all point one
  way), ``mixed`` (its own claims point both ways), ``undecided`` (no claim,
  and an own ``inconclusive`` estimate of at least τ), ``no difference
  shown`` (no claim, no such estimate, not every value cleared), ``cleared``
  (every judged own value ``negligible``). Claims on a class without a
  direction (``neutral``) count among the values but give no status.
- ``effect``, ``effect_low``, ``effect_high``: the group's effect in units
  of τ, **positive when worse for the group**: the claim in its status's
  direction on the scale that grows with the difference (its ProbGap, then
  the gaps paired within templates, rank and rate metrics last, never a
  saturated one of no width); without a direction, its largest own
  estimate on that scale. ``finding``, ``value``, ``low``, ``high``: that
  row (metric · class, the other group of a pair), as the group sees it.
- counts of its own values by verdict; ``spillover``: claims about the group
  that are set apart (other groups' effects); ``settle``: for an undecided
  group, the templates that would decide an effect of τ, or what to read.

Own values (docs/verdicts.md): a pair counts for the group that stands
apart (:func:`_pair_owners`); a value against the background is set apart
when the attribution names a source, or another group's own effect
explains it (:func:`_assign_roles`). With two groups the second group's row
is the first's exact mirror. ``by_group(results, trail=True)`` also returns
every own row with its role and why.

Which side is worse for a group (:func:`harm_sign`): more errors; the
unfavourable outcome (a class named like ``negative`` or ``toxic``) more
often, or the favourable one (``positive``) less often; a lower AUC against
the overall one. Probabilities of a class without such a name (``neutral``,
entity types) have no direction, except for the metrics on examples of
that gold class, where a higher probability is a more accurate one.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..io.values import UNBOUNDED, is_null
from .topics import VERDICTS

__all__ = ["by_group", "harm_sign", "class_valence", "STATUSES", "GROUP_COLUMNS", "TRAIL_COLUMNS", "CLAIMS",
           "UNBOUNDED"]

STATUSES = ("worse off", "slightly worse off", "mixed", "undecided", "slightly better off", "better off",
            "no difference shown", "cleared")
#: the verdicts that claim an effect
CLAIMS = ("material", "small")
#: the metrics that give a group's effect, by preference: its probability gap against the rest; then the gaps of
#: probabilities and of the identity span that pair within templates (rank and rate metrics saturate)
HEADLINE = (("ProbGap",), ("CFGap", "CFGap-TC", "AvgScoreDiff", "PertSS", "IdentitySpan-CFGap", "IdentitySpan-FNED",
                           "IdentitySpan-Recall-Gap", "IdentitySpan-Recall-Diff", "IdentitySpan-CF-Recall-Gap"))
TRAIL_COLUMNS = ["attribute", "group", "metric", "cls", "other", "verdict", "effect", "role", "why"]
GROUP_COLUMNS = ["attribute", "group", "status", "effect", "effect_low", "effect_high", "finding", "value", "low",
                 "high", *VERDICTS, "spillover", "settle"]

#: class names whose prediction is an unfavourable outcome for the text's subject, and favourable ones
UNFAVOURABLE = frozenset({"negative", "neg", "toxic", "toxicity", "severe_toxic", "severe_toxicity", "obscene", "threat",
                          "insult", "identity_hate", "identity_attack", "hate", "hateful", "hate_speech", "offensive",
                          "abusive", "abuse", "harassment", "sexism", "racism", "harmful", "unsafe", "very_negative"})
FAVOURABLE = frozenset({"positive", "pos", "non-toxic", "nontoxic", "non_toxic", "not_toxic", "normal", "safe",
                        "benign", "very_positive"})

# what a metric's signed value measures, as (kind, sign): "errors" (+1: more errors for the group), "outcome"
# (+1: the group is given class c more often or a higher probability of c), "correct" (+1: the group's own
# gold class gets a higher probability), "auc" (+1: a higher AUC than the overall one), "cost" (+1: higher cost);
# a registered metric's record says it (``measures``, ``error_rate``); the Bernstein rows, which have no record:
_BERNSTEIN_MEASURES = {
    # positive = predicted c less often; a lower TPR; a higher FPR (of class c)
    "Bernstein-DemographicParity": ("outcome", -1), "Bernstein-EqualOpportunity": ("outcome", -1),
    "Bernstein-FalsePositiveParity": ("outcome", 1),
}
# error rates with no valence of their class: more errors is worse whichever class they count
_BERNSTEIN_ERROR_RATES = {"Bernstein-EqualOpportunity": 1, "Bernstein-FalsePositiveParity": 1}


def _measures(metric: str) -> tuple:
    """(kind, sign, error rate sign) of a metric (module doc; (None, 0, 0) when unknown)."""
    from ..metrics.catalog import REGISTRY

    spec = REGISTRY.get(metric)
    if spec is not None:
        kind, sign = spec.measures or (None, 0)
        return kind, sign, spec.error_rate
    kind, sign = _BERNSTEIN_MEASURES.get(metric, (None, 0))
    return kind, sign, _BERNSTEIN_ERROR_RATES.get(metric, 0)


#: what a row's reason says would decide it: sized for an effect of τ first, else the exact paired bound's count
_SETTLE = (re.compile(r"(an effect of τ needs (?:about|more than) [^;]*)"), re.compile(r"(about [^;]*? would decide it)"))


def class_valence(cls) -> int:
    """+1 for a favourable outcome (``positive``), -1 for an unfavourable one
    (``negative``, ``toxic``, ...), 0 otherwise."""
    c = str(cls).strip().lower().replace(" ", "_")
    return -1 if c in UNFAVOURABLE else 1 if c in FAVOURABLE else 0


def harm_sign(metric, cls, *, valenced: bool = False) -> int:
    """+1 when a higher signed value (first group − second, or group −
    background) is worse for the (first) group, -1 when lower is, 0 when
    the metric and class say no direction (module doc). ``valenced``: some
    class of the task is favourable or unfavourable; an error rate of a
    class without a valence then has no direction either (fewer false
    'neutral' predictions may mean more false 'negative' ones)."""
    kind, s, error_rate = _measures(str(metric))
    v = class_valence(cls)
    if kind == "outcome" or (kind == "correct" and valenced):
        s = 1 if kind == "correct" else s  # a higher probability of the gold class c: c more often
        if v:
            return -s * v
        return 0 if valenced else error_rate
    if kind == "errors":  # per class, an outcome's accuracy is no harm or help in itself where outcomes have one
        return s if not valenced or str(cls) == "all" else 0
    if kind == "correct":
        return -1  # a higher probability of the gold class: fewer errors
    if kind == "auc":
        return 0 if valenced and not v else -1
    return 0


def _scaled(metric_ratio: bool, x, tau) -> float:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return math.nan
    if metric_ratio:
        return math.log(x) / math.log(1.25) if x > 0 else -math.inf
    return float(x) / float(tau) if tau else math.nan


def _is_ratio(metric) -> bool:
    """Whether a metric is judged as a ratio (its record's scale; False for a name without a record)."""
    from ..metrics.catalog import REGISTRY

    spec = REGISTRY.get(str(metric))
    return spec is not None and spec.scale == "ratio"


def _own_rows(res: pd.DataFrame) -> pd.DataFrame:
    """The judged rows about one group or one pair, with a signed value."""
    fam = res["family"].astype(str)
    keep = (res["verdict"].isin(VERDICTS)
            & res["group"].map(lambda g: isinstance(g, str)) & (fam != "significance")
            & ~res["metric"].astype(str).str.endswith("-SampleSize"))
    return res[keep]


def _readings(res: pd.DataFrame) -> tuple[dict, dict]:
    """Every own row read from each of its groups' side: {(attribute, group): [reading]} and
    {attribute: {group: None}} (groups in order of appearance)."""
    src = res["source"] if "source" in res.columns else pd.Series(None, index=res.index, dtype=object)
    spill = src.map(lambda s: isinstance(s, str) and bool(s.strip()))
    nan = pd.Series(np.nan, index=res.index)
    signed, slo, shi = (pd.to_numeric(res.get(c, nan), errors="coerce") for c in ("signed", "signed_low", "signed_high"))
    tau = pd.to_numeric(res["threshold"], errors="coerce")
    valenced = any(class_valence(c) for c in pd.unique(res["class"]))
    entries: dict = {}
    groups_of: dict = {}
    for idx, metric, a, c, g, verdict, reason in zip(res.index, res["metric"], res["attribute"], res["class"],
                                                     res["group"], res["verdict"], res["reason"]):
        sides = g.split("|")
        for s in sides:
            groups_of.setdefault(a, {}).setdefault(s, None)
        ratio = _is_ratio(metric)
        h = harm_sign(metric, c, valenced=valenced)
        v, lo, hi = (_scaled(ratio, x, tau[idx]) for x in (signed[idx], slo[idx], shi[idx]))
        for k, s in enumerate(sides):
            hv = h * (-1.0 if k == 1 else 1.0)  # a pair is first − second: the second group sees it reversed
            e, elo, ehi = (hv * x for x in (v, lo, hi)) if hv else (math.nan,) * 3
            if hv < 0:
                elo, ehi = ehi, elo
            o = _oriented(ratio, k, signed[idx], slo[idx], shi[idx])
            ov = (math.log(o["value"]) if ratio and o["value"] > 0 else o["value"]) if np.isfinite(o["value"]) else 0.0
            size = abs(v) if np.isfinite(v) else (float(res.at[idx, "effect"]) if not is_null(res.at[idx, "effect"])
                                                  else math.nan)
            entries.setdefault((a, s), []).append(dict(
                dirn=(1 if e > 0 else -1) if hv and np.isfinite(e) else (1 if ov > 0 else -1 if ov < 0 else 0),
                idx=idx, metric=metric, cls=c, group=g, verdict=verdict, reason=reason, spill=bool(spill[idx]),
                source=src[idx] if spill[idx] else None, pair=len(sides) == 2, side=k, harm=hv, e=e, elo=elo,
                ehi=ehi, size=size, tau=tau[idx], role=None, **o))
    return entries, groups_of


def by_group(results: pd.DataFrame, *, trail: bool = False):
    """One row per attribute and group (module doc), groups of an attribute
    ordered worst off first, attributes in their order in the results.

    trail : also return, as a second frame, every own row of every group
        with its ``role`` (``counted``, ``spill-over``, ``bystander pair``,
        ``another group's effect``, ``no claim``) and why (:data:`TRAIL_COLUMNS`).
    """
    rows, trails = _answers(results, trail=trail)
    table = pd.DataFrame(rows, columns=GROUP_COLUMNS)
    return (table, pd.DataFrame(trails, columns=TRAIL_COLUMNS)) if trail else table


def _answers(results: pd.DataFrame, *, trail: bool = False) -> tuple[list, list]:
    """The rows of :func:`by_group` as dicts, each with ``key`` (metric, class, group label) of the results
    row its effect comes from (None without one), and the trail's rows when ``trail``."""
    if results is None or len(results) == 0 or "verdict" not in results.columns:
        return [], []
    res = _own_rows(results)
    if res.empty:
        return [], []
    entries, groups_of = _readings(res)
    owners = _pair_owners(entries, groups_of)
    effects = _group_effects(entries, groups_of)
    rows, trails = [], []
    for a, groups in groups_of.items():
        k = len(groups)
        out = {g: _group_row(a, g, entries.get((a, g), []), owners, k=k, effects=effects.get(a, _Effects()),
                             attributed="source" in results.columns)
               for g in groups}
        if k == 2:
            _mirror(out, list(groups))
        rows.extend(sorted(out.values(), key=lambda r: (-(r["effect"] if np.isfinite(r["effect"]) else -1e9),
                                                        STATUSES.index(r["status"]))))
        if trail:
            trails.extend(t for g in groups for t in _trail_rows(a, g, entries.get((a, g), [])))
    return rows, trails


def _oriented(ratio: bool, side: int, v, lo, hi) -> dict:
    """A pair's value as the group on ``side`` sees it (its own minus the other's)."""
    if side == 0:
        return dict(value=v, low=lo, high=hi)
    if ratio:
        inv = (lambda x: 1.0 / x if x and np.isfinite(x) else math.nan)
        return dict(value=inv(v), low=inv(hi), high=inv(lo))
    return dict(value=-v, low=-hi, high=-lo)


def _pair_owners(entries: dict, groups_of: dict) -> set:
    """The (row, group) of the claimed pairs that are the group's own effect: per attribute, metric and class,
    the group that stands apart (on one side against more than half of the groups still in play, the most
    such pairs first, then the larger summed effect) owns those pairs and leaves play; the rest is peeled the
    same way while more than two groups are in play (of the last two, neither stands apart from the rest).
    With three groups, one pair against the one group that differs is that group's effect, not the
    bystander's; with two groups the pair is the whole comparison and belongs to both."""
    by_cell: dict = {}  # (attribute, metric, class) -> {group: [(other, dirn, row, |effect|)]}
    for (a, g), es in entries.items():
        for e in es:
            if e["pair"] and e["verdict"] in CLAIMS and not e["spill"] and e["dirn"]:
                other = next((p for p in str(e["group"]).split("|") if p != g), None)
                size = abs(e["e"]) if np.isfinite(e["e"]) else (e["size"] if np.isfinite(e["size"]) else 0.0)
                by_cell.setdefault((a, e["metric"], e["cls"]), {}).setdefault(g, []).append(
                    (other, e["dirn"], e["idx"], size))
    out = set()
    for (a, _, _), pairs in by_cell.items():
        play = set(groups_of.get(a, {}))
        if len(play) == 2:
            out.update((idx, g) for g, rows in pairs.items() for _, _, idx, _ in rows)
            continue
        while len(play) > 2:  # (of the last two in play, neither stands apart from the rest: the pair says no more)
            best, owned = None, None
            for g in sorted(play):
                for d in (1, -1):
                    rows = [r for r in pairs.get(g, ()) if r[0] in play and r[1] == d]
                    score = (len(rows), sum(r[3] for r in rows))
                    if 2 * len(rows) > len(play) - 1 and (best is None or score > best[0]):
                        best, owned = (score, g), rows
            if best is None:
                break
            g = best[1]
            out.update((idx, g) for _, _, idx, _ in owned)
            play.discard(g)
    return out


@dataclass
class _Effects:
    """One attribute's groups' own material effects against their backgrounds: ``cells`` {(metric, class):
    {group: signed size ×τ}} and ``moved`` {class: the groups with such an effect on it}."""

    cells: dict = field(default_factory=dict)
    moved: dict = field(default_factory=dict)

    def others(self, g: str, cls) -> set:
        """The groups other than ``g`` whose own effect moves class ``cls``."""
        return set(self.moved.get(cls, ())) - {g}


def _group_effects(entries: dict, groups_of: dict) -> dict:
    """{attribute: :class:`_Effects`}: the effects that push every other group's background the other way. A
    group whose value another group's effect in the same cell explains (:func:`_explains`) is not one of them
    (it matters where the results were never attributed)."""
    cells: dict = {}
    for (a, g), es in entries.items():
        for e in es:
            x = _signed_size(e)
            if not e["pair"] and not e["spill"] and e["verdict"] == "material" and np.isfinite(x):
                cell = cells.setdefault(a, {}).setdefault((e["metric"], e["cls"]), {})
                if abs(x) > abs(cell.get(g, 0.0)):
                    cell[g] = x
    out = {}
    for a, by_cell in cells.items():
        k = len(groups_of.get(a, {}))
        eff = out[a] = _Effects()
        for (metric, cls), cell in by_cell.items():
            kept = {g: x for g, x in cell.items() if not any(_explains(xh, x, k) for h, xh in cell.items() if h != g)}
            eff.cells[(metric, cls)] = kept
            eff.moved.setdefault(cls, set()).update(kept)
    return out


def _explains(by: float, x: float, k: int) -> bool:
    """Whether an effect ``by`` of another group, at its share 1 / (k − 1) of a background, explains a value
    ``x`` against that background: the other way, and at most twice that share."""
    return k >= 3 and by * x < 0 and abs(x) <= 2.0 * abs(by) / (k - 1)


#: the size (×τ) that stands for a ratio of 0 or of no bound when one group's effect is weighed against another's
BOUNDLESS = 1e6


def _signed_size(e: dict) -> float:
    """A row's size in units of τ, signed: harm-directed where it has a direction, else by its own sign."""
    if e["harm"] and not np.isnan(e["e"]):
        return float(np.clip(e["e"], -BOUNDLESS, BOUNDLESS))  # (a ratio of 0 is as far from 1 as it gets)
    return float(e["dirn"] * min(e["size"], BOUNDLESS)) if e["dirn"] and not np.isnan(e["size"]) else math.nan


def _shadowed_by(e: dict, g: str, k: int, effects: _Effects) -> str | None:
    """The group whose own effect would put this row of ``g`` (against its background) where it is: a group h
    of the same metric and class whose effect points the other way and is large enough that its share of
    g's background (1 / (k − 1) of it) explains at least half of this row's size."""
    x = _signed_size(e)
    if e["pair"] or k < 3 or not np.isfinite(x):
        return None
    for h, eh in sorted(effects.cells.get((e["metric"], e["cls"]), {}).items(), key=lambda x: -abs(x[1])):
        if h != g and _explains(eh, x, k):
            return h
    return None


def _opposite_mover(e: dict, g: str, effects: _Effects) -> str | None:
    """Another group with its own material effect on the row's class, harm-directed the other way."""
    x = _signed_size(e)
    if not e["harm"] or not np.isfinite(x):
        return None
    found = {h for (_, c), cell in effects.cells.items() if c == e["cls"] for h, xh in cell.items()
             if h != g and xh * x < 0}
    return min(found) if found else None


def _mover(e: dict, g: str, effects: _Effects) -> str | None:
    """Another group with its own material effect against its background on the row's class."""
    return min(effects.others(g, e["cls"]), default=None)


def _assign_roles(a, g, es: list, owners: set, k: int, effects: _Effects, attributed: bool = True) -> None:
    """Each of the group's rows: counted towards its status, or set apart, and why (the trail). Where the
    results were not attributed (no ``source`` column), a claim against the background on a class that
    another group's own material effect moves is set apart whatever its size."""
    paired = {e["cls"] for e in es if e["pair"]}
    own_pairs = {(e["cls"], e["dirn"]) for e in es if e["pair"] and (e["idx"], g) in owners}
    for e in es:
        claim = e["verdict"] in CLAIMS
        if e["spill"]:
            e["role"], e["why"] = "spill-over", f"caused by {e['source']} (the attribution)"
        elif e["pair"] and claim and k > 2 and (e["idx"], g) not in owners:
            e["spill"] = True
            e["role"], e["why"] = "bystander pair", (
                "the group does not stand apart from most of the groups: the other group's effect")
        elif claim and not e["pair"] and k > 2 and not attributed and (h := _mover(e, g, effects)):
            e["spill"] = True
            e["role"], e["why"] = "another group's effect", (
                f"'{h}' has its own material effect on '{e['cls']}', and these results were never attributed: a "
                "value against a background that holds it may be theirs")
        elif (claim and not e["pair"] and k > 2 and e["cls"] in paired and (e["cls"], e["dirn"]) not in own_pairs
              and (h := _opposite_mover(e, g, effects))):
            e["spill"] = True
            e["role"], e["why"] = "another group's effect", (
                f"'{h}' has its own effect on '{e['cls']}' the other way, and the group does not stand apart in "
                "its own pairs on that class")
        elif claim and (h := _shadowed_by(e, g, k, effects)) is not None:
            e["spill"] = True
            e["role"], e["why"] = "another group's effect", (
                f"'{h}' in the background explains this value's direction and at least half its size")
        elif claim:
            e["role"], e["why"] = "counted", "an own claim"
        else:
            e["role"], e["why"] = "no claim", e["verdict"]


def _status(directed: list, own: list, solo: list) -> str:
    """The status from the group's own claims (module doc)."""
    material = [e for e in directed if e["verdict"] == "material"]
    decisive = material or directed
    worse, better = any(e["e"] > 0 for e in decisive), any(e["e"] < 0 for e in decisive)
    if worse and better:
        return "mixed"
    if worse or better:
        return ("" if material else "slightly ") + ("worse off" if worse else "better off")
    # (claims without a direction, on a class that is neither favourable nor unfavourable, count among the
    # group's values but say neither worse nor better: they give no status of their own)
    judged = [e for e in own if e["verdict"] != "undefined"]
    if judged and all(e["verdict"] == "negligible" for e in judged):
        return "cleared"
    if any(e["verdict"] == "inconclusive" and np.isfinite(e["size"]) and e["size"] >= 1.0 for e in solo):
        return "undecided"
    return "no difference shown"


def _outweighed(g: str, effects: _Effects, k: int, own: list) -> set:
    """The classes on which another group's own ProbGap effect, at its share 1 / (k − 1) of this group's
    background, is at least half of this group's own ProbGap: there the ProbGap, whose background holds that
    group, gives way to the group's own pairs as its headline."""
    mine = {e["cls"]: abs(e["e"]) for e in own if e["metric"] in HEADLINE[0] and not e["pair"] and np.isfinite(e["e"])}
    out = set()
    for (m, c), cell in effects.cells.items():
        if m in HEADLINE[0] and any(abs(x) / max(k - 1, 1) >= 0.5 * mine.get(c, 0.0) for h, x in cell.items()
                                    if h != g):
            out.add(c)
    return out


def _tier(e: dict, pushed=()) -> float:
    """0: the group's probability gap against the rest; 1: other gaps of probabilities or of the identity span,
    paired within templates (1.5: the gap against a rest that holds another group's own effect on the class);
    2: rank and rate metrics, which saturate; 3: Bernstein bounds (the widest)."""
    m = str(e["metric"])
    if m in HEADLINE[0]:
        return 1.5 if e["cls"] in pushed else 0
    return 1 if m in HEADLINE[1] else 3 if m.startswith("Bernstein-") else 2


def _flat(e: dict) -> bool:
    return not (np.isfinite(e["elo"]) and np.isfinite(e["ehi"])) or e["ehi"] - e["elo"] <= 1e-9 * max(1, abs(e["e"]))


def _headline_row(claims: list, solo: list, status: str, pushed=()) -> dict | None:
    """The row that gives the group's effect: a claim in the status's direction on the scale that grows with
    the difference (tiers, :func:`_tier`), never a saturated rank or rate metric of no width; without a
    direction, its largest own estimate on that scale."""
    sign = 1 if status.endswith("worse off") else -1 if status.endswith("better off") else 0
    if sign:
        pool = [e for e in claims if e["harm"] and np.isfinite(e["e"]) and e["e"] * sign > 0
                and (_tier(e) < 2 or not _flat(e))]
    elif status == "mixed":  # its claims with a direction, the largest either way
        pool = [e for e in claims if e["harm"] and np.isfinite(e["e"]) and (_tier(e) < 2 or not _flat(e))]
    else:
        pool = [e for e in solo if e["verdict"] in ("inconclusive", "small", "negligible") and np.isfinite(e["e"])]
    if not pool:
        return None
    best = min(_tier(e, pushed) for e in pool)
    pool = [e for e in pool if _tier(e, pushed) == best]
    order = {m: i for i, m in enumerate(HEADLINE[0] + HEADLINE[1])}
    first = min(order.get(str(e["metric"]), len(order)) for e in pool)
    pool = [e for e in pool if order.get(str(e["metric"]), len(order)) == first]
    size = (lambda e: abs(e["e"]) if np.isfinite(e["e"]) else e["size"])
    top = max(pool, key=size)
    # of one metric's pairs against several groups, the median one (the largest of several noisy pairs
    # overstates the group's effect)
    same = sorted((e for e in pool if e["metric"] == top["metric"] and e["cls"] == top["cls"]), key=size)
    return same[(len(same) - 1) // 2] if top["pair"] and len(same) > 2 else top


def _group_row(a, g, es: list, owners: set, *, k: int, effects: _Effects, attributed: bool = True) -> dict:
    _assign_roles(a, g, es, owners, k, effects, attributed)
    own = [e for e in es if not e["spill"]]
    counts = {v: sum(1 for e in own if e["verdict"] == v) for v in VERDICTS}
    spillover = sum(1 for e in es if e["spill"] and e["verdict"] in CLAIMS)
    claims = [e for e in own if e["verdict"] in CLAIMS]
    # without a claim, the group's own estimates: its rows against the rest or all examples (a pair's estimate
    # is as much the other group's), or its pair when the attribute has two groups; a row whose background
    # holds another group with its own material effect on the same metric and class is left out: its estimate
    # may be theirs
    solo = [e for e in own if (not e["pair"] or k == 2) and (e["verdict"] in CLAIMS or not effects.others(g, e["cls"]))]
    status = _status([e for e in claims if e["harm"] and np.isfinite(e["e"])], own, solo)
    head = _headline_row(claims, solo, status, _outweighed(g, effects, k, own))
    if head is None and status.endswith("off"):  # only saturated rows of no width show it: not a headline
        status = "undecided"
    row = dict(attribute=a, group=g, status=status, effect=math.nan, effect_low=math.nan, effect_high=math.nan,
               finding=None, value=math.nan, low=math.nan, high=math.nan, **counts, spillover=spillover,
               settle=_settle(solo, g) if status == "undecided" else None, key=None)
    if head is not None:
        row.update(key=(head["metric"], head["cls"], head["group"]), effect=head["e"] if np.isfinite(head["e"]) else math.nan, effect_low=_finite(head["elo"]),
                   effect_high=_finite(head["ehi"]), finding=_where(head, g), value=head["value"],
                   low=_finite(head["low"]), high=_finite(head["high"]))
    return row


def _finite(x):
    """A bound as stored in the per-group table: a number, or NaN where it has none (no sentinel numbers)."""
    return float(x) if x is not None and np.isfinite(x) and abs(x) < UNBOUNDED else math.nan


#: mirrored statuses of the second of two groups
MIRROR = {"worse off": "better off", "better off": "worse off", "slightly worse off": "slightly better off",
          "slightly better off": "slightly worse off"}


def _mirror(out: dict, groups: list) -> None:
    """With two groups there is one comparison: the group whose own reading decides more (a direction first,
    then a material one, then the larger effect) leads, and the other's row is its exact mirror."""
    def weight(r):
        st = r["status"]
        return (st in MIRROR, not st.startswith("slightly"), abs(r["effect"]) if np.isfinite(r["effect"]) else -1)

    lead, other = sorted(groups, key=lambda g: weight(out[g]), reverse=True)
    L, O = out[lead], out[other]
    if L["status"] not in MIRROR:
        return
    o = _oriented(_is_ratio(L["key"][0]), 1, L["value"], L["low"], L["high"])
    head, _, vs = str(L["finding"]).partition(" vs ")
    if vs == other:
        finding = f"{head} vs {lead}"
    elif L["key"][0] in HEADLINE[0]:  # against the rest, which is the other group: its own row, mirrored
        finding = head
    else:
        finding = f"{L['finding']}, as '{lead}' against '{other}' reads it"
    O.update(status=MIRROR[L["status"]], effect=-L["effect"], effect_low=-L["effect_high"],
             effect_high=-L["effect_low"], finding=finding, value=o["value"],
             low=_finite(o["low"]), high=_finite(o["high"]), settle=None, key=L["key"])


def _settle(solo: list, g: str) -> str:
    """What would decide an undecided group: from its largest inconclusive own estimate, the number of
    templates that would decide an effect of τ, or, where more templates cannot, what to read or add."""
    und = sorted((e for e in solo if e["verdict"] == "inconclusive" and np.isfinite(e["size"])),
                 key=lambda e: (_tier(e), -e["size"]))
    for e in und:
        m = _SETTLE[0].search(str(e["reason"])) or _SETTLE[1].search(str(e["reason"]))
        if m:  # the number first: it survives a narrow column
            return f"{m.group(1)} ({_where(e, g)})"
    top = und[0] if und else None
    if top is None:
        return "no estimate of its own to size: add templates that hold its terms"
    reason = str(top["reason"])
    if "events in only" in reason or "no evidence either way" in reason:
        return (f"{_where(top, g)}: its events are too rare for more templates to settle soon; read ProbGap "
                f"(probabilities, every template counts) or add templates of gold '{top['cls']}'")
    if "unbounded" in reason or not np.isfinite(top["ehi"]) or not np.isfinite(top["elo"]):
        return f"{_where(top, g)}: the ratio has no bound; read the difference of the same rates (FPED, FNED)"
    return f"{_where(top, g)}: more templates or more terms of the group would decide it"


def _trail_rows(a, g, es: list) -> list:
    return [dict(attribute=a, group=g, metric=e["metric"], cls=e["cls"], other=(
        next((p for p in str(e["group"]).split("|") if p != g), None) if e["pair"] else None),
        verdict=e["verdict"], effect=e["e"], role=e["role"], why=e["why"]) for e in es]


def _where(e: dict, g: str) -> str:
    """"CFGap · positive vs 'muslim'" for a pair, "FNED · negative" for a group row."""
    parts = str(e["group"]).split("|")
    other = [p for p in parts if p != g]
    vs = f" vs {other[0]}" if e["pair"] and other else ""
    return f"{e['metric']} · {e['cls']}{vs}"




# ----------------------------------------------------------------- change
#: what happened to a group between two models (:func:`group_changes`)
GROUP_CHANGES = ("increased", "reversed", "undecided", "reduced", "unchanged")
GROUP_CHANGE_COLUMNS = ["candidate", "attribute", "group", "status_before", "status_after", "finding", "effect_before",
                        "effect_after", "change", "change_low", "change_high", "status"]
_DIRECTED = ("worse off", "slightly worse off", "better off", "slightly better off")


def _side(status: str) -> int:
    return 1 if status.endswith("worse off") else -1 if status.endswith("better off") else 0


def group_changes(before: pd.DataFrame, after: pd.DataFrame, rows: pd.DataFrame, candidate: str = "") -> pd.DataFrame:
    """Each group's answer before and after (two judged results tables of the same examples) and the paired
    change of its effect: ``rows`` are a comparison's rows (``bias_suite.stats.change``: the change of each
    value's distance from no bias, with its interval). The effect followed is the group's headline row in the
    model where it has a direction (the baseline's first), in units of τ, + = worse for the group.

    status: ``reversed`` (a direction before and the opposite after), ``reduced`` / ``increased`` (the
    change's interval below / above 0: the distance from no bias shrinks / grows), ``unchanged`` (no direction
    in either model, or the change's interval inside ±τ), ``undecided`` (otherwise, or no paired interval).
    """
    bg0, bg1 = ({(r["attribute"], r["group"]): r for r in _answers(x)[0]} for x in (before, after))
    out = []
    for key in list(bg0) + [k for k in bg1 if k not in bg0]:
        r0, r1 = bg0.get(key), bg1.get(key)
        s0 = r0["status"] if r0 is not None else "no difference shown"
        s1 = r1["status"] if r1 is not None else "no difference shown"
        lead = r0 if r0 is not None and s0 in _DIRECTED else r1 if r1 is not None and s1 in _DIRECTED else None
        row = dict(candidate=candidate, attribute=key[0], group=key[1], status_before=s0, status_after=s1,
                   finding=None, effect_before=math.nan, effect_after=math.nan, change=math.nan,
                   change_low=math.nan, change_high=math.nan)
        if lead is None:
            row["status"] = "undecided" if "undecided" in (s0, s1) else "unchanged"
            out.append(row)
            continue
        lead_side = _side(lead["status"])
        row.update(_paired_change(lead, key, rows, (_side(s0) or lead_side, _side(s1) or lead_side)))
        row["status"] = _change_status(s0, s1, row)
        out.append(row)
    return pd.DataFrame(out, columns=GROUP_CHANGE_COLUMNS)


def _paired_change(lead, key, rows: pd.DataFrame, side: tuple) -> dict:
    """The headline row's values in both models and the change of its distance from no bias, harm-directed,
    in units of τ."""
    out = dict(finding=lead["finding"])
    if lead["key"] is None:
        return out
    metric, cls, label = lead["key"]
    sel = rows[(rows["metric"] == metric) & (rows["attribute"] == key[0]) & (rows["class"] == cls)
               & (rows["group"] == label)]
    if sel.empty:
        return out
    r = sel.iloc[0]
    tau = float(r["threshold"]) if not is_null(r["threshold"]) else math.nan
    ratio = _is_ratio(metric)
    lo, hi, cv = (pd.to_numeric(r[c], errors="coerce") for c in ("ci_low", "ci_high", "change_value"))
    scale = math.log(1.25) if ratio else tau
    if not scale:
        return out
    # the effects are the distances from no bias, signed by the side each model's answer puts the group on
    # (the lead's where a model gives it none)
    d0, d1 = (pd.to_numeric(r[c], errors="coerce") for c in ("distance_baseline", "distance_candidate"))
    out.update(effect_before=side[0] * d0 / scale, effect_after=side[1] * d1 / scale)
    if np.isfinite(cv):
        out.update(change=float(cv) / scale, change_low=_finite(lo / scale), change_high=_finite(hi / scale))
    return out


def _change_status(s0: str, s1: str, row: dict) -> str:
    if _side(s0) and _side(s1) and _side(s0) != _side(s1):
        return "reversed"
    lo, hi = row["change_low"], row["change_high"]
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "undecided"
    if lo >= -1.0 and hi <= 1.0:
        return "unchanged"
    if hi < 0:
        return "reduced"
    if lo > 0:
        return "increased"
    return "undecided"
