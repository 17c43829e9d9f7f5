"""Which groups cause a metric's group-vs-background findings: the search
behind :func:`bias_suite.stats.attribution.attribute_sources`.

For one attribute, metric and class (a *cell*) the claims are the
``material`` and ``small`` rows that compare a group with its background.
The causes are the smallest set S of groups (one, then two, then three,
leaving at least two groups) such that every claim about a group outside S,
computed again with S left out of the data, falls back:

- a ``material`` claim to an effect below 1 (within tau);
- a ``small`` claim to less than half its effect (S explains most of it).

Whether S is the cause never depends on S's own verdicts: its rows may be
``inconclusive`` or ``undefined`` (a group with one term per slot, a rate
with no event). When several sets of the smallest size explain the claims,
the one that leaves the other groups most alike is taken (the smallest sum
of their effects without it), then the one whose members differ most from
the others (the largest sum of its members' effects, each computed with
the other members left out). A claim about a group outside S is then a
spill-over; its sources are the smallest part T of S that is enough for it
to fall back (S itself when no part is), ties broken in the same way. A cell whose claims no
set of up to three groups explains gets no sources.

Cost: every value without a set is computed once per (attribute, metric,
class, set), and one pass over the engine's input (with the set's examples
left out) computes every metric and class the open cells of a set need; the values of the smaller sets, which the ranking and
the sources read, are already there when a larger set is tried. The sets
of a size are tried only for the cells that no smaller set explained.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from ..exceptions import MetricError
from ..metrics.catalog import get_metric
from ..metrics.materiality import RATIO_BAND

__all__ = ["Cell", "Claim", "Values", "find_causes", "overall_aucs", "MAX_CAUSES", "BACKGROUNDS"]

#: the most groups a cell's causes may be
MAX_CAUSES = 3
#: the backgrounds a group is compared with that leaving groups out changes (AUC metrics: the overall AUC)
BACKGROUNDS = ("rest", "all", "S", "S\\S^t")


@dataclass
class Claim:
    idx: int  # the row's position in the results
    verdict: str  # "material" or "small"
    effect: float | None  # the verdict's effect (of the row's verdict basis)
    e0: float | None  # the effect of the row's value, as computed again without groups


@dataclass
class Cell:
    """One attribute, metric and class: its claims by group."""
    metric: str
    cls: str
    kind: str  # "ratio", "auc", "bernstein" or "difference"
    tau: float
    claims: dict = field(default_factory=dict)  # group -> Claim


def cell_kind(metric: str):
    """(kind, spec) of a metric whose group rows have a background that
    leaving groups out changes; (None, None) for any other metric."""
    if str(metric).startswith("Bernstein-"):
        return "bernstein", None
    try:
        spec = get_metric(metric)
    except MetricError:
        return None, None
    auc = spec.phi.own_background  # an AUC: its background is in its sides
    if not auc and spec.background not in BACKGROUNDS:
        return None, None
    if auc:
        return "auc", spec
    return ("ratio" if spec.d.name in ("ratio", "ratio_to_background") else "difference"), spec


def overall_aucs(sub, attr, weighting, order) -> dict:
    """{class: AUC of f(x, c) against [y = c] over all of ``sub``'s examples
    of ``attr`` (with the group view's weights)}: the no-bias value of the
    AUC metrics."""
    from ..metrics.engine import attribute_data
    from ..suites.views import counterfactual_view, group_order as order_of

    cf = counterfactual_view(sub.frame, max_tuples=1, seed=0, group_order_override=order)
    return _aucs(attribute_data(sub, attr, cf[attr], order_of(sub.frame, attr, order), weighting=weighting))


def _aucs(ad) -> dict:
    from ..metrics.generalized import NEG, POS

    out = {}
    for ci, cls in enumerate(ad.classes):
        h = ad.hist(ci)
        v = float(h.auc(h.counts[POS].sum(0), h.counts[NEG].sum(0)))
        out[cls] = v if np.isfinite(v) else None
    return out


def without_groups(ad, drop) -> object:
    """The group view's input ``ad`` (an attribute's
    :class:`~bias_suite.metrics.generalized.AttributeData`) without the
    examples of the groups ``drop`` (names): what the engine builds from the
    data without them (the template-balance weights of an example depend on
    its own group only). The counterfactual fields are left empty."""
    from ..metrics.generalized import AttributeData

    codes = [t for t, g in enumerate(ad.groups) if g in drop]
    keep_g = [t for t in range(ad.k) if t not in codes]
    remap = np.full(ad.k, -1, dtype=np.int64)
    remap[keep_g] = np.arange(len(keep_g))
    rows = ~np.isin(ad.g, codes)
    n = len(ad.g)
    pos = np.full(n, -1, dtype=np.int64)
    pos[rows] = np.arange(int(rows.sum()))
    counts = ad.counts

    def sub_counts(c, _rows=rows):
        return {k: (np.asarray(v)[_rows] if np.ndim(v) and len(v) == n else v) for k, v in counts(c).items()}

    items = None if ad.item_row is None else rows[ad.item_row]
    pick = (lambda a: None if a is None else a[items]) if items is not None else (lambda a: a)
    return AttributeData(
        attribute=ad.attribute, groups=[ad.groups[t] for t in keep_g], classes=ad.classes,
        g=remap[ad.g[rows]], y=ad.y[rows], yhat=ad.yhat[rows], counts=None if counts is None else sub_counts,
        item_row=None if ad.item_row is None else pos[ad.item_row[items]], item_P=pick(ad.item_P),
        item_y=pick(ad.item_y), item_pos=pick(ad.item_pos),
        row_weight=None if ad.row_weight is None else ad.row_weight[rows])


class Values:
    """The group rows of an attribute's metrics on its data without a set of
    its groups, computed when first needed and kept (``()``: the data
    itself). The engine's input is built once per kind from the data and
    the counterfactual view ``cf`` of the run, and the groups are left out
    of it (:func:`without_groups`)."""

    def __init__(self, data, attr: str, groups: list, cf, *, weighting: str):
        self.data, self.attr, self.groups, self.cf, self.weighting = data, attr, list(groups), cf, weighting
        self._inputs: dict = {}  # input kind -> the attribute's AttributeData
        self._rows = None  # the attribute's examples, for the Bernstein rows
        self.vals: dict = {}  # left-out set -> {(metric, class, group): value}
        self.have: dict = {}  # left-out set -> the (metric, class) pairs computed
        self.aucs: dict = {}  # left-out set -> {class: overall AUC}
        self.calls = 0  # left-out sets computed (for the cost benchmark)

    def _input(self, kind):
        if kind not in self._inputs:
            from ..metrics.engine import attribute_data

            ad = attribute_data(self.data, self.attr, self.cf, self.groups, probabilities=kind,
                                weighting=self.weighting)
            if ad.counts is not None:  # every set's input takes its counts from these: count once per class
                raw, memo = ad.counts, {}
                ad.counts = lambda c: memo[c] if c in memo else memo.setdefault(c, raw(c))
            self._inputs[kind] = ad
        return self._inputs[kind]

    def ensure(self, left_out: tuple, needs) -> None:
        """Compute the (metric, class) pairs of ``needs`` not yet known
        without ``left_out``, in one pass over the engine's input."""
        from ..metrics.engine import metric_input_kind
        from ..metrics.generalized import group_metric

        have = self.have.setdefault(left_out, set())
        missing = [n for n in needs if n not in have]
        if not missing:
            return
        self.calls += 1
        store = self.vals.setdefault(left_out, {})
        subs: dict = {}

        def sub(kind):
            if kind not in subs:
                full = self._input(kind)
                subs[kind] = without_groups(full, left_out) if left_out else full
            return subs[kind]

        bern: dict = {}
        for metric, cls in missing:
            kind, spec = cell_kind(metric)
            if kind == "bernstein":
                bern.setdefault(metric[len("Bernstein-"):], set()).add(cls)
                continue
            if spec is None or spec.two_groups:
                continue
            inp = metric_input_kind(self.data, spec)[0]
            if inp is None:
                continue
            ad = sub(inp)
            if kind == "auc" and left_out not in self.aucs:
                self.aucs[left_out] = _aucs(sub(True))
            if spec.per_class and cls not in ad.classes:
                continue
            c = list(ad.classes).index(cls) if spec.per_class else 0
            for r in group_metric(spec, ad, c, cls):
                g, v = r["group"], r["value"]
                if isinstance(g, str) and "|" not in g:
                    store[(metric, cls, g)] = None if v is None or not np.isfinite(v) else float(v)
        if bern:
            store.update(self._bernstein(bern, left_out))
        have.update(missing)

    def _bernstein(self, presets, left_out) -> dict:
        """The Bernstein rows' values without ``left_out`` ({preset: classes}):
        per class c, preset and group, the mean cost of the group's annotated examples minus that
        of the rest's (:func:`bias_suite.stats.bernstein.bernstein_rows`), for
        every group at once."""
        from .bernstein import PRESETS

        if self._rows is None:  # the attribute's examples: group codes (in self.groups), predicted and gold class
            frame = self.data.frame
            m = (frame["attribute"].to_numpy(dtype=object) == self.attr)
            codes = pd.Categorical(frame["group"].to_numpy(dtype=object)[m], categories=self.groups).codes
            self._rows = (codes, np.asarray(self.data.yhat)[m], np.asarray(self.data.y)[m])
        codes, pred, yy = self._rows
        names = [g for g in self.groups if g not in left_out]
        remap = np.array([names.index(g) if g in names else -1 for g in self.groups] + [-1])
        g = remap[codes]
        m = g >= 0
        g, pred, yy = g[m], pred[m], yy[m]
        labelled, k = yy >= 0, len(names)
        out = {}
        for ci, c in enumerate(self.data.classes):
            yhat, y = (pred == ci).astype(float), (yy == ci).astype(int)
            for name, classes in presets.items():
                p = PRESETS.get(name)
                if p is None or c not in classes:
                    continue
                cost = np.asarray(p.cost(yhat, y), dtype=float)
                ann = np.asarray(p.annotated(y, len(y)), dtype=bool) & (labelled if p.needs_labels else True)
                sums = np.bincount(g[ann], weights=cost[ann], minlength=k)
                cnt = np.bincount(g[ann], minlength=k).astype(float)
                with np.errstate(divide="ignore", invalid="ignore"):
                    delta = sums / cnt - (sums.sum() - sums) / (cnt.sum() - cnt)
                for t, grp in enumerate(names):
                    out[(p.metric, c, grp)] = float(delta[t]) if np.isfinite(delta[t]) else None
        return out

    def value(self, cell: "Cell", left_out: tuple, group: str):
        return self.vals.get(left_out, {}).get((cell.metric, cell.cls, group))

    def effect(self, cell: "Cell", left_out: tuple, group: str) -> float | None:
        """The effect (distance from no bias in tau) of ``group``'s row
        without ``left_out``; None where undefined."""
        v = self.value(cell, left_out, group)
        if v is None:
            return None
        if cell.kind == "ratio":
            if v < 0:
                return None
            return math.inf if v == 0 else abs(math.log(v)) / math.log(RATIO_BAND)
        if cell.kind == "auc":
            overall = self.aucs.get(left_out, {}).get(cell.cls)
            return None if overall is None else abs(v - overall) / cell.tau
        return abs(v) / cell.tau


def falls_back(claim: Claim, e: float | None) -> bool:
    """Whether a claim whose value's effect is ``e`` without some groups
    falls back (module doc). The verdict's effect (of the row's basis, which
    may differ a little from its value's) is scaled by how the value moved."""
    if e is None:
        return False
    size = claim.effect if claim.effect is not None and np.isfinite(claim.effect) else claim.e0
    if size is None:
        return False
    if claim.e0 is not None and np.isfinite(claim.e0) and claim.e0 > 0 and math.isfinite(e):
        e = e * size / claim.e0
    return e < 1 if claim.verdict == "material" else e < 0.5 * size


def _preference(values: Values, cell: Cell, S: tuple) -> tuple:
    """Which of several sets of one size explains a cell best (the larger
    the better): first the one that leaves the other groups most alike (the
    smallest sum of their effects without S), then the one whose members
    differ most from them (the largest sum of their effects, each without
    the other members); undefined effects count 0."""
    def total(items):
        return sum(0.0 if e is None else min(e, 1e9) for e in items)

    rest = total(values.effect(cell, S, g) for g in values.groups if g not in S)
    own = total(values.effect(cell, tuple(x for x in S if x != s), s) for s in S)
    return -rest, own


def _explains(values: Values, cell: Cell, S: tuple) -> bool:
    return all(falls_back(c, values.effect(cell, S, g)) for g, c in cell.claims.items() if g not in S)


def find_causes(values: Values, cells: list) -> dict:
    """{cell index: (S, {group: T})} for the cells whose claims a set of
    groups explains (module doc): S the causes, T the sources of each claim
    about a group outside S."""
    groups = values.groups
    out: dict = {}
    open_ = list(range(len(cells)))
    values.ensure((), {(c.metric, c.cls) for c in cells})
    for k in range(1, min(MAX_CAUSES, len(groups) - 2) + 1):
        if not open_:
            break
        passing: dict = {i: [] for i in open_}
        for S in combinations(groups, k):
            values.ensure(S, {(cells[i].metric, cells[i].cls) for i in open_})
            for i in open_:
                if _explains(values, cells[i], S):
                    passing[i].append(S)
        for i in open_:
            if passing[i]:
                cell = cells[i]
                S = max(passing[i], key=lambda s: _preference(values, cell, s))  # the first of equals
                out[i] = (S, _sources(values, cell, S))
        open_ = [i for i in open_ if i not in out]
    return out


def _sources(values: Values, cell: Cell, S: tuple) -> dict:
    """{group: T} for each claim outside S: the smallest part T of S without
    which it falls back (every part smaller than S was computed for this
    cell's metric when the sets of its size were tried)."""
    parts = [T for k in range(1, len(S)) for T in combinations(S, k)]
    out = {}
    for g, c in cell.claims.items():
        if g in S:
            continue
        found = S
        for k in range(1, len(S)):
            fits = [T for T in parts if len(T) == k and falls_back(c, values.effect(cell, T, g))]
            if fits:
                found = max(fits, key=lambda t: _preference(values, cell, t))
                break
        out[g] = found
    return out
