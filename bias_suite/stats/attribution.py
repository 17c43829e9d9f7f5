"""Whose effect is it? Group-vs-background findings attributed to their source.

A metric that compares a group with the rest (or with all examples) carries
the other groups in its background. When one group is treated very
differently (a model that misses 'mental_illness' far more often), every
other group looks different from a background that holds it: 'deaf' gets a
material "FNR lower than the rest" although the model treats deaf terms like
any other. :func:`attribute_sources` tells the two apart.

Rule. The affected groups of an attribute are those whose material
group-vs-background row is the largest of some metric and class. Every other
``material`` or ``small`` group-vs-background row of the attribute is
computed again with the affected groups (other than its own) left out of
the attribute, and so out of its background; when it is then below the threshold
(``effect < 1``; for a ``small`` row, also less than half its effect: the
sources explain most of it), the row is a spill-over: its value and verdict
stay, its ``source`` column names the groups that cause it, and its reason
says so with the value without them. A row whose effect survives is the
group's own. The largest effect of a metric and class never has a source, so
two groups cannot explain each other's effects away; an attribute with two
groups, each the other's whole background, gets no sources at all.

The AUC metrics (Subgroup AUC, BPSN, BNSP) are judged against the overall
AUC, which is computed again without the sources too; the Bernstein rows
(the group's mean cost minus the rest's) are computed again on the same
data. Effects of the rows without an interval-backed effect (no ``effect``)
are not attributed.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..metrics.catalog import get_metric
from ..metrics.engine import metric_values
from ..metrics.materiality import RATIO_BAND
from ..exceptions import MetricError

__all__ = ["attribute_sources", "change_sources", "template_consistency"]

_BACKGROUNDS = ("rest", "all", "S", "S\\S^t")


def _effect(spec, value, tau):
    if value is None or not np.isfinite(value):
        return None
    if spec.d.name in ("ratio", "ratio_to_background"):
        return abs(math.log(value)) / math.log(RATIO_BAND) if value > 0 else None
    return abs(value) / tau if tau else None


def _candidates(res: pd.DataFrame) -> pd.DataFrame:
    if "verdict" not in res.columns or res.empty:
        return res.iloc[0:0]
    bern = (res["family"] == "bernstein") & ~res["metric"].astype(str).str.endswith("-SampleSize")
    m = (((res["family"].isin(["BCM", "VBCM"]) & (res["view"] == "group")) | bern)
         & res["verdict"].isin(["material", "small"])
         & res["group"].map(lambda g: isinstance(g, str) and "|" not in g))
    return res[m]


def _overall_auc(sub, attr, cls, weighting, group_order) -> float | None:
    """AUC of f(x, c) against [y = c] over all of the attribute's examples
    (with the group view's weights): the no-bias value of the AUC metrics."""
    from ..metrics.engine import attribute_data
    from ..metrics.generalized import NEG, POS
    from ..suites.views import counterfactual_view, group_order as order_of

    cf = counterfactual_view(sub.frame, max_tuples=1, seed=0, group_order_override=group_order)
    ad = attribute_data(sub, attr, cf[attr], order_of(sub.frame, attr, group_order), weighting=weighting)
    if cls not in ad.classes:
        return None
    h = ad.hist(list(ad.classes).index(cls))
    v = float(h.auc(h.counts[POS].sum(0), h.counts[NEG].sum(0)))
    return v if np.isfinite(v) else None


def _value_without(spec, r, sub, attr, order, weighting, max_tuples, seed, memo: dict, key):
    """The row's value and effect on ``sub``, the data without the source
    groups; ``memo`` keeps what one (attribute, sources) computes for every
    row of a metric (its values, the overall AUC of a class)."""
    if spec is None:  # a Bernstein row: the group's mean cost minus the rest's
        from .bernstein import bernstein_rows

        mk = key + (r["metric"],)
        if mk not in memo:
            memo[mk] = bernstein_rows(sub, attributes=[attr], presets=[r["metric"][len("Bernstein-"):]])
        vals = memo[mk]
    else:
        mk = key + (spec.name,)
        if mk not in memo:
            memo[mk] = metric_values(sub, metrics=[spec], attributes=[attr], max_tuples=max_tuples, seed=seed,
                                     group_order_override=order, weighting=weighting)
        vals = memo[mk]
    hit = vals[(vals["metric"] == r["metric"]) & (vals["class"] == r["class"]) & (vals["group"] == r["group"])]
    v = None if hit.empty or pd.isna(hit["value"].iloc[0]) else float(hit["value"].iloc[0])
    if v is None:
        return None, None
    if spec is None:
        return v, abs(v) / r["threshold"]
    if type(spec.phi).__name__ == "AucScore":
        ak = key + ("overall AUC", r["class"])
        if ak not in memo:
            memo[ak] = _overall_auc(sub, attr, r["class"], weighting, order)
        overall = memo[ak]
        return v, (None if overall is None else abs(v - overall) / r["threshold"])
    return v, _effect(spec, v, r["threshold"])


def attribute_sources(res: pd.DataFrame, data, *, max_tuples=100, seed: int = 0, group_order_override=None,
                      weighting: str = "balanced") -> pd.DataFrame:
    """``res`` with a ``source`` column (after ``reason``): the groups that
    cause a spill-over row, comma-separated, else null (module doc)."""
    out = res.copy()
    if "source" not in out.columns:
        cols = list(out.columns)
        pos = cols.index("reason") + 1 if "reason" in cols else len(cols)
        out.insert(pos, "source", None)
    out["source"] = out["source"].astype(object)
    cand = _candidates(out)
    if cand.empty:
        return out
    frame = data.frame
    attr_col = frame["attribute"].to_numpy(dtype=object)
    group_col = frame["group"].to_numpy(dtype=object)
    subsets: dict = {}  # (attribute, sources) -> the data without the sources
    memo: dict = {}
    mat = cand[cand["verdict"] == "material"]
    top_rows = mat.loc[mat.groupby(["attribute", "metric", "class"], sort=False)["effect"].idxmax().dropna()]
    affected: dict = {}  # attribute -> groups whose own effect is the largest of some metric and class
    for a, g in zip(top_rows["attribute"], top_rows["group"]):
        groups = affected.setdefault(a, [])
        if g not in groups:
            groups.append(g)
    tops = set(top_rows.index)
    for (attr, metric, cls), rows in cand.groupby(["attribute", "metric", "class"], sort=False):
        if len(pd.unique(group_col[attr_col == attr])) < 3:
            continue  # with two groups each is the other's whole background: the data cannot say whose effect it is
        if str(metric).startswith("Bernstein-"):
            spec = None
        else:
            try:
                spec = get_metric(metric)
            except MetricError:
                continue
            if spec.background not in _BACKGROUNDS and type(spec.phi).__name__ != "AucScore":
                continue
        for idx, r in rows.iterrows():
            if idx in tops:  # the largest effect of a metric and class is never explained away
                continue
            sources = tuple(g for g in affected.get(attr, []) if g != r["group"])
            if not sources:
                continue
            key = (attr, sources)
            if key not in subsets:
                keep = np.flatnonzero((attr_col == attr) & ~np.isin(group_col, list(sources)))
                subsets[key] = data.take(keep)
            order = None
            if group_order_override and attr in group_order_override:  # the groups left, in the same order
                order = {attr: [g for g in group_order_override[attr] if g not in sources]}
            v, eff = _value_without(spec, r, subsets[key], attr, order, weighting, max_tuples, seed, memo, key)
            if eff is None or eff >= 1 or (r["verdict"] == "small" and eff >= 0.5 * r["effect"]):
                continue
            names = ", ".join(f"'{g}'" for g in sources)
            out.at[idx, "source"] = ", ".join(sources)
            out.at[idx, "reason"] = (f"{r['reason']}; the background is shifted by {names}: without "
                                     f"{'it' if len(sources) == 1 else 'them'} the value is {v:.3g}, below the "
                                     "threshold, so this is their effect, not this group's")
    return out


#: counterfactual metrics whose per-template effect is the difference of the groups' mean probability of c
_CONSISTENCY_METRICS = ("CFGap", "AvgScoreDiff", "PertSS")


def template_consistency(res: pd.DataFrame, data, *, basis: pd.DataFrame | None = None,
                         group_order_override=None) -> pd.DataFrame:
    """``res`` with a ``consistency`` column: for the ``material`` and
    ``small`` counterfactual pair rows of CFGap, AvgScoreDiff and PertSS, the
    share of the templates (with every group, and a difference beyond
    round-off) whose difference of the two groups' mean probability of the
    class has the sign of the row's own signed difference; null elsewhere.
    It tells an effect the model shows in nearly every template from one a
    few templates carry. ``basis``: the bootstrap's verdict basis, whose
    ``basis_value`` is a row's signed difference (else its value)."""
    from ..families import family_of
    from ..metrics.comparisons import ROUND_OFF

    out = res.copy()
    if "consistency" not in out.columns:
        cols = list(out.columns)
        pos = cols.index("source") + 1 if "source" in cols else len(cols)
        out.insert(pos, "consistency", np.nan)
    if "verdict" not in out.columns:
        return out
    fam = family_of(data)
    sel = out[(out["view"] == "counterfactual") & out["metric"].isin(_CONSISTENCY_METRICS)
              & out["verdict"].isin(["material", "small"]) & out["group"].map(lambda g: isinstance(g, str) and "|" in g)]
    signed_of = {}
    if basis is not None and len(basis):
        for m, a, c, g, v in zip(basis["metric"], basis["attribute"], basis["class"], basis["group"],
                                 basis["basis_value"]):
            if v is not None and not pd.isna(v):
                signed_of[(m, a, c, g)] = float(v)
    tables: dict = {}
    for idx, r in sel.iterrows():
        attr = r["attribute"]
        if attr not in tables:
            order = (group_order_override or {}).get(attr)
            tables[attr] = fam.block_scores(data, attr, order, True) if fam.block_scores else None
        t = tables[attr]
        if not t or r["class"] not in t:
            continue
        a, b = r["group"].split("|", 1)
        tab = t[r["class"]]
        if a not in tab.columns or b not in tab.columns:
            continue
        diff = (tab[a] - tab[b]).to_numpy(dtype=float)
        diff = diff[np.isfinite(diff) & (np.abs(diff) > ROUND_OFF)]
        signed = signed_of.get((r["metric"], attr, r["class"], r["group"]),
                               None if pd.isna(r["value"]) else float(r["value"]))
        if diff.size == 0 or signed is None or signed == 0:
            continue
        out.at[idx, "consistency"] = float(np.mean(np.sign(diff) == np.sign(signed)))
    return out



def change_sources(changes: pd.DataFrame, base, cand, *, max_tuples=100, seed: int = 0, group_order_override=None,
                   weighting: str = "balanced") -> pd.DataFrame:
    """``changes`` (rows of :func:`bias_suite.stats.change.paired_changes`
    between two models on the same examples ``base`` and ``cand``) with a
    ``source`` column: the spill-overs of a change.

    The rule of :func:`attribute_sources`, applied to the change. The
    changed groups of an attribute: the group of the largest ``improved`` or
    ``worsened`` group-vs-background change of each metric and class, taken
    largest first, unless the groups already taken explain it (below). Every
    other such row is computed again for both models with the changed groups
    (other than its own) left out; when the change of its distance from b is
    then within tau (the two models' effects differ by less than 1), the
    row is a spill-over: its change stays, its ``source`` names the groups
    whose change causes it and its reason says so.
    """
    out = changes.copy()
    out["source"] = None
    claim = out["change"].isin(["improved", "worsened"]) & out["view"].eq("group") \
        & out["family"].isin(["BCM", "VBCM"]) & out["group"].map(lambda g: isinstance(g, str) and "|" not in g)
    if not claim.any():
        return out
    frame = base.frame
    attr_col = frame["attribute"].to_numpy(dtype=object)
    group_col = frame["group"].to_numpy(dtype=object)
    subsets: dict = {}
    memos: tuple = ({}, {})  # per model: (attribute, sources) -> {(metric, class, group): value}; overall AUCs
    done: set = set()

    def spec_of(idx):
        r = out.loc[idx]
        if len(pd.unique(group_col[attr_col == r["attribute"]])) < 3:
            return None  # with two groups each is the other's whole background: the data cannot say whose it is
        try:
            spec = get_metric(r["metric"])
        except MetricError:
            return None
        return spec if spec.background in _BACKGROUNDS or type(spec.phi).__name__ == "AucScore" else None

    def compute(attr, sources, specs):
        """Every metric of ``specs`` without ``sources``, in one call per
        model: {(metric, class, group): value} of each model."""
        key = (attr, sources)
        if key not in subsets:
            keep = np.flatnonzero((attr_col == attr) & ~np.isin(group_col, list(sources)))
            subsets[key] = (base.take(keep), cand.take(keep))
        order = None
        if group_order_override and attr in group_order_override:
            order = {attr: [g for g in group_order_override[attr] if g not in sources]}
        todo = [sp for sp in specs if (key, sp.name) not in done]
        if todo:
            for sub, memo in zip(subsets[key], memos):
                vals = metric_values(sub, metrics=todo, attributes=[attr], max_tuples=max_tuples, seed=seed,
                                     group_order_override=order, weighting=weighting)
                memo.setdefault(key, {}).update(
                    ((m, c, g), None if pd.isna(v) else float(v))
                    for m, c, g, v in zip(vals["metric"], vals["class"], vals["group"], vals["value"]))
            done.update((key, sp.name) for sp in todo)
        return order

    def effect(spec, r, k, key, order):
        """The row's effect (its distance from b in tau) in model k without the sources."""
        v = memos[k][key].get((r["metric"], r["class"], r["group"]))
        if v is None:
            return None
        if type(spec.phi).__name__ == "AucScore":  # against the overall AUC, also without the sources
            ak = (key, "overall AUC", r["class"])
            if ak not in memos[k]:
                memos[k][ak] = _overall_auc(subsets[key][k], key[0], r["class"], weighting, order)
            overall = memos[k][ak]
            return None if overall is None else abs(v - overall) / r["threshold"]
        return _effect(spec, v, r["threshold"])

    def explain(idx, spec, sources) -> bool:
        """Whether the row's change is within tau without ``sources`` (then say so)."""
        r = out.loc[idx]
        key = (r["attribute"], sources)
        order = compute(r["attribute"], sources, [spec])
        effects = [effect(spec, r, k, key, order) for k in (0, 1)]
        if any(e is None for e in effects) or abs(effects[1] - effects[0]) >= 1:
            return False
        names = ", ".join(f"'{g}'" for g in sources)
        out.at[idx, "source"] = ", ".join(sources)
        out.at[idx, "reason"] = (f"{r['reason']}; the background is shifted by {names}: without "
                                 f"{'it' if len(sources) == 1 else 'them'} the change is "
                                 f"{(effects[1] - effects[0]) * r['threshold']:.3g}, within τ, so this is their "
                                 "change, not this group's")
        return True

    size = (out["change_value"].abs() / out["threshold"]).where(claim)
    tops = size[claim].groupby([out["attribute"][claim], out["metric"][claim], out["class"][claim]],
                               sort=False).idxmax().dropna()
    tops = sorted(tops, key=lambda i: -size[i])
    changed: dict = {}  # attribute -> the groups whose own change it is, largest first
    for idx in tops:
        attr, g = out.at[idx, "attribute"], out.at[idx, "group"]
        taken = changed.setdefault(attr, [])
        if g in taken:
            continue
        spec = spec_of(idx)
        sources = tuple(h for h in taken if h != g)
        if not sources or spec is None or not explain(idx, spec, sources):
            taken.append(g)
    rows = [(idx, spec_of(idx)) for idx in out.index[claim.to_numpy()]
            if idx not in set(tops) and pd.isna(out.at[idx, "source"])]
    needed: dict = {}
    for idx, spec in rows:  # compute every metric one (attribute, sources) needs at once
        sources = tuple(h for h in changed.get(out.at[idx, "attribute"], []) if h != out.at[idx, "group"])
        if spec is not None and sources:
            needed.setdefault((out.at[idx, "attribute"], sources), []).append((idx, spec))
    for (attr, sources), items in needed.items():
        compute(attr, sources, list({sp.name: sp for _, sp in items}.values()))
        for idx, spec in items:
            explain(idx, spec, sources)
    return out
