"""Whose effect is it? Group-vs-background findings attributed to their source.

A metric that compares a group with the rest (or with all examples) carries
the other groups in its background. When one group is treated very
differently (a model that misses 'mental_illness' far more often), every
other group looks different from a background that holds it: 'deaf' gets a
material "FNR lower than the rest" although the model treats deaf terms like
any other. :func:`attribute_sources` tells the two apart.

Rule. Per attribute, metric and class, the causes are found from the values
and the data, never from the causing groups' own verdicts
(:mod:`bias_suite.stats.causes`): the smallest set S of groups (one, then
two, then three) such that every ``material`` or ``small``
group-vs-background row of a group outside S, computed again with S left
out of the data, falls back (a ``material`` row below the threshold,
``effect < 1``; a ``small`` row to less than half its effect); of several
such sets the one that leaves the other groups most alike, then the one
whose members differ most from them. S's own rows may be ``inconclusive``
or ``undefined`` (a group with one term per slot has fewer than 20 examples
in some rows): a bystander is never taken for the cause because the cause
could not be judged. A row that falls back
is a spill-over: its value and verdict stay, its ``source`` column names the
groups that cause it (the smallest part of S without which it falls back:
several groups together when no one of them is enough) and its reason says
so with the value without them. S's own rows and the rows of a metric and
class that no set of up to three groups explains keep no source. An
attribute with two groups, each the other's whole background, gets no
sources at all.

The AUC metrics (Subgroup AUC, BPSN, BNSP) are judged against the overall
AUC, which is computed again without the sources too; the Bernstein rows
(the group's mean cost minus the rest's) are computed again on the same
data.

Before the causes are sought, a claim whose interval has no width because
of ties is made ``inconclusive`` (:mod:`bias_suite.stats.ties`).
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

from .causes import BACKGROUNDS as _BACKGROUNDS


def _effect(spec, value, tau):
    if value is None or not np.isfinite(value):
        return None
    if spec.d.name in ("ratio", "ratio_to_background"):
        return abs(math.log(value)) / math.log(RATIO_BAND) if value > 0 else None
    return abs(value) / tau if tau else None


def _overall_auc(sub, attr, cls, weighting, group_order) -> float | None:
    """AUC of f(x, c) against [y = c] over all of the attribute's examples
    (with the group view's weights): the no-bias value of the AUC metrics."""
    from .causes import overall_aucs

    return overall_aucs(sub, attr, weighting, group_order).get(cls)


def _claim_cells(out: pd.DataFrame) -> dict:
    """{attribute: {(metric, class): [(position, group, verdict, effect, tau)]}}: the ``material`` and
    ``small`` group-vs-background rows of ``out`` (positions, not labels)."""
    fam = out["family"].to_numpy(dtype=object)
    metric = out["metric"].astype(str).to_numpy(dtype=object)
    group = out["group"].to_numpy(dtype=object)
    verdict = out["verdict"].to_numpy(dtype=object)
    view = out["view"].to_numpy(dtype=object)
    bern = (fam == "bernstein") & ~np.char.endswith(metric.astype(str), "-SampleSize")
    single = np.array([isinstance(g, str) and "|" not in g for g in group], dtype=bool)
    m = ((np.isin(fam, ["BCM", "VBCM"]) & (view == "group")) | bern) & single & np.isin(verdict, ["material", "small"])
    cells: dict = {}
    attr, cls = out["attribute"].to_numpy(dtype=object), out["class"].to_numpy(dtype=object)
    effect = pd.to_numeric(out["effect"], errors="coerce").to_numpy(dtype=float)
    tau = pd.to_numeric(out["threshold"], errors="coerce").to_numpy(dtype=float)
    for i in np.flatnonzero(m):
        cells.setdefault(attr[i], {}).setdefault((metric[i], cls[i]), []).append(
            (int(i), group[i], verdict[i], effect[i], tau[i]))
    return cells


def attribute_sources(res: pd.DataFrame, data, *, max_tuples=100, seed: int = 0, group_order_override=None,
                      weighting: str = "balanced") -> pd.DataFrame:
    """``res`` with a ``source`` column (after ``reason``): the groups that
    cause a spill-over row, comma-separated, else null (module doc); claims
    whose zero-width interval comes from ties are made ``inconclusive``
    first (:func:`bias_suite.stats.ties.tied_claims`)."""
    from ..suites.views import counterfactual_view, group_order
    from .causes import Cell, Claim, Values, cell_kind, find_causes
    from .ties import tied_claims

    out = res.copy()
    if "source" not in out.columns:
        cols = list(out.columns)
        pos = cols.index("reason") + 1 if "reason" in cols else len(cols)
        out.insert(pos, "source", None)
    out["source"] = out["source"].astype(object)
    if "verdict" not in out.columns or out.empty:
        return out
    out = tied_claims(out, data, max_tuples=max_tuples, seed=seed, group_order_override=group_order_override,
                      weighting=weighting)
    found = _claim_cells(out)
    if not found:
        return out
    # the run's own view (computed for its values, and kept): the engine's input is built from it
    cfs = counterfactual_view(data.frame, max_tuples=max_tuples, seed=seed, group_order_override=group_order_override)
    source = out["source"].to_numpy(dtype=object).copy()
    reason = out["reason"].to_numpy(dtype=object).copy()
    for attr, by_cell in found.items():
        groups = group_order(data.frame, attr, group_order_override)
        if len(groups) < 3:
            continue  # with two groups each is the other's whole background: the data cannot say whose effect it is
        cells = []
        for (metric, cls), claims in by_cell.items():
            kind, _ = cell_kind(metric)
            tau = next((t for *_, t in claims if np.isfinite(t)), None)
            if kind is not None and tau is not None and tau > 0:
                cells.append((Cell(metric, cls, kind, float(tau)), claims))
        if not cells:
            continue
        values = Values(data, attr, groups, cfs[attr], weighting=weighting)
        values.ensure((), {(c.metric, c.cls) for c, _ in cells})
        for cell, claims in cells:
            for i, g, v, e, _ in claims:
                cell.claims[g] = Claim(i, v, float(e) if np.isfinite(e) else None, values.effect(cell, (), g))
        cells = [c for c, _ in cells]
        for k, (S, sources) in find_causes(values, cells).items():
            cell = cells[k]
            for g, T in sources.items():
                i = cell.claims[g].idx
                v = values.value(cell, T, g)
                names = ", ".join(f"'{h}'" for h in T)
                against = ""
                if cell.kind == "auc":
                    overall = values.aucs.get(T, {}).get(cell.cls)
                    against = "" if overall is None else f" against an overall AUC of {overall:.3g}"
                within = "below the threshold" if cell.claims[g].verdict == "material" else "less than half of it"
                source[i] = ", ".join(T)
                reason[i] = (f"{reason[i]}; the background is shifted by {names}: without "
                             f"{'it' if len(T) == 1 else 'them'} the value is {v:.3g}{against}, "
                             f"{within}, so this is their effect, not this group's")
    out["source"] = source
    out["reason"] = reason
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

    Unlike :func:`attribute_sources`, the changed groups are taken from the
    claimed changes themselves (not yet by its search). The changed groups
    of an attribute: the group of the largest ``improved`` or
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
        return spec if spec.background in _BACKGROUNDS or spec.phi.own_background else None

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
        if spec.phi.own_background:  # an AUC: against the overall AUC, also without the sources
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
