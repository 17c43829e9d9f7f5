"""Which findings the headline and the report's first screen list, and how
each is named.

:func:`select_findings` takes the judged rows (``material``, ``small``,
``inconclusive``), ranked by verdict and then effect
(:func:`bias_suite.report.summary.findings`), and

1. leaves out **spill-overs**: rows whose ``source`` column names other
   groups (a group-vs-rest or group-vs-all effect caused by those groups in
   the background). They are no finding about their own group. A material
   grid cell whose material rows are all spill-overs still gets one line,
   named after its source: ``disability: via mental_illness`` (column
   ``via``);
2. merges **duplicates**: metrics that are the same number under two
   normalisations (``FNED``/``FNED*`` per group, ``DisparityScore``/
   ``DisparityScore*`` per pair) with identical values and intervals become
   one line naming both;
3. merges **partners and mirrors**: pair rows of one metric, attribute,
   class and verdict whose values and intervals are identical once seen from
   a shared group (``a|b`` and ``a|c`` from ``a``; ``a|b`` and ``b|a``) become
   one line, ``jewish vs 5 groups`` (or the pair itself for a mirror);
4. keeps the best line per attribute, group, class and topic, so the list
   shows who is affected rather than one group through related metrics;
5. picks the lines: first the best line of every ``material`` cell of the
   overview grid that is shown, then the next lines in rank order up to
   ``top``; the picked lines are listed in rank order, a "via" line after
   the other lines of its verdict.

The optional verdict column ``consistency`` (the share of templates whose
effect has the finding's sign) is shown as "in 92% of templates"
(:func:`consistency_text`). :func:`with_scope` adds what a finding's metric
counts where the task family says it (a tagger's "all PER spans" or "PER
identity span"), which :func:`who` then shows in place of the class.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from .data import isnull as _isnull, metric_spec

__all__ = ["JUDGED", "Prepared", "select_findings", "spill_over", "consistency_text", "reach_text", "who", "collapse", "Selection",
           "with_scope"]

JUDGED = ("material", "small", "inconclusive")  # verdicts worth a finding line, in rank order


def _summary():
    from . import summary

    return summary


def spill_over(res: pd.DataFrame) -> pd.Series:
    """True for rows whose ``source`` names the groups that cause them (a
    non-empty string); False everywhere when there is no such column."""
    return _summary().spill_over(res)


def consistency_text(v) -> str:
    """'in 92% of templates' from a share in [0, 1]; '' when missing."""
    if _isnull(v):
        return ""
    try:
        x = float(v)
    except (TypeError, ValueError):
        return ""
    if not math.isfinite(x):
        return ""
    return f"in {min(max(x, 0.0), 1.0):.0%} of templates"


def reach_text(r) -> str:
    """How far a claim reaches beyond the rows it was judged on, where that
    matters: 'terms 1 of 2' (or 'terms a: 1 of 2; b: 2 of 2') where not
    every listed term of its groups shares the claim's sign, and 'not shown
    beyond the listed terms' where the two-way reading does not hold it
    (:mod:`bias_suite.stats.scope`); '' for a claim that holds on every
    term and beyond them, and for rows that claim nothing."""
    if r.get("verdict") not in ("material", "small"):
        return ""
    parts = []
    ta = r.get("terms_agree")
    if not _isnull(ta) and any(int(k) < int(n) for k, n in re.findall(r"(\d+) of (\d+)", str(ta))):
        parts.append(f"terms {ta}")
    if r.get("beyond") == "not shown":
        parts.append("not shown beyond the listed terms")
    return "; ".join(parts)


def who(r) -> str:
    """'gender: female', 'gender: female vs male', 'religion: jewish vs 5
    groups', 'disability: via mental_illness', 'gender' (+ ' · class', or
    ' · scope' where the row has one: 'names: female · PER identity span')."""
    a = r.get("attribute")
    c = r.get("class")
    s = "" if _isnull(a) else str(a)
    via = r.get("via")
    if not _isnull(via):
        g = f"via {via}"
    else:
        g = r.get("shown_group", r.get("group"))
        if _isnull(g):
            g = r.get("group")
        g = "all groups" if _isnull(g) else str(g).replace("|", " vs ")
    s = f"{s}: {g}" if s else g
    scope = r.get("scope")
    if not _isnull(scope) and str(scope):
        s += f" · {scope}"
    elif not _isnull(c) and c != "all":
        s += f" · {c}"
    return s


def with_scope(rows: pd.DataFrame, scored) -> pd.DataFrame:
    """``rows`` with a column ``scope``: what each finding's metric counts,
    in the words of the task family of the scored data that holds its
    attribute (:attr:`~bias_suite.families.base.TaskFamily.measured_on`:
    "all PER spans", "PER identity span"); null where the family says
    nothing or the data is not at hand."""
    from ..families import FAMILIES
    from .pairs import locate

    out = []
    for r in rows.to_dict("records"):
        loc = locate(r, scored) if scored is not None else None
        fn = getattr(FAMILIES.get(getattr(loc[0], "task", None)), "measured_on", None) if loc else None
        spec = metric_spec(r.get("metric")) if fn is not None else None
        out.append(fn(spec, r.get("class")) if spec is not None else None)
    return rows.assign(scope=pd.Series(out, index=rows.index, dtype=object))


# ----------------------------------------------------------------- merging
def _num(v) -> float:
    if _isnull(v):
        return float("nan")
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def _key(x: float) -> str:
    """A value as a key: equal to 9 significant digits (round-off apart)."""
    return "nan" if not math.isfinite(x) else f"{x:.9g}"


def _mirror_kind(metric) -> str:
    """How a pair row's value reads from its second group: "negate" (signed
    differences), "invert" (ratios) or "same" (distances, unknown metrics)."""
    spec = metric_spec(metric)
    if spec is None:
        return "same"
    if spec.scale == "ratio":
        return "invert"
    return "negate" if spec.scale == "signed" and spec.baseline == "0" else "same"


def _mirrored(kind: str, v: float, lo: float, hi: float) -> tuple:
    if kind == "negate":
        return -v, -hi, -lo
    if kind == "invert":
        with np.errstate(divide="ignore"):
            inv = lambda x: 1.0 / x if x else float("nan")
            return inv(v), inv(hi), inv(lo)
    return v, lo, hi


def _merge_aliases(fd: pd.DataFrame) -> pd.DataFrame:
    """One line for metrics that differ only by a trailing '*' (another
    normaliser) and have identical values, intervals and verdicts."""
    metrics = fd["metric"].astype(str).tolist()
    keys = [(str(a), str(c), str(g), str(v), m.rstrip("*"), _key(_num(x)), _key(_num(lo)), _key(_num(hi)))
            for a, c, g, v, m, x, lo, hi in zip(fd["attribute"], fd["class"], fd["group"], fd["verdict"], metrics,
                                                 fd["value"], fd["ci_low"], fd["ci_high"])]
    names: dict = {}
    first: list = []
    for pos, (k, m) in enumerate(zip(keys, metrics)):
        if k not in names:
            names[k] = [m]
            first.append(pos)
        elif m not in names[k]:
            names[k].append(m)
    out = fd.iloc[first].copy()
    out["shown_metric"] = ["/".join(sorted(names[keys[p]], key=lambda s: (len(s), s))) for p in first]
    return out


def _merge_partners(fd: pd.DataFrame) -> pd.DataFrame:
    """Pair rows identical from a shared group become one line (see the module doc)."""
    g = fd["group"]
    is_pair = g.map(lambda x: isinstance(x, str) and x.count("|") == 1)
    if not is_pair.any():
        return fd
    recs = fd.to_dict("records")
    buckets: dict = {}
    for pos, (r, pair) in enumerate(zip(recs, is_pair)):
        if not pair:
            continue
        a, b = str(r["group"]).split("|")
        kind = _mirror_kind(r["metric"])
        v, lo, hi = _num(r["value"]), _num(r.get("ci_low")), _num(r.get("ci_high"))
        head = (str(r["attribute"]), str(r["class"]), str(r.get("shown_metric", r["metric"])), str(r["verdict"]))
        for own, other, vals in ((a, b, (v, lo, hi)), (b, a, _mirrored(kind, v, lo, hi))):
            k = head + (own,) + tuple(_key(x) for x in vals)
            buckets.setdefault(k, []).append((pos, other, vals))
    used: set = set()
    drop: set = set()
    shown: dict = {}
    for k, members in sorted(buckets.items(), key=lambda kv: (-len(kv[1]), kv[1][0][0])):
        free = [m for m in members if m[0] not in used]
        if len(free) < 2:
            continue
        own = k[4]
        first_pos, _, vals = free[0]
        partners = list(dict.fromkeys(m[1] for m in free))
        used.update(m[0] for m in free)
        drop.update(m[0] for m in free[1:])
        if len(partners) > 1:  # "a vs 5 groups", the values seen from a
            shown[first_pos] = (own, f"{own} vs {len(partners)} groups", vals, partners)
    out = fd.copy()
    out["shown_group"] = out["group"]
    out["partners"] = None
    out["own_group"] = None
    out = out.astype({"shown_group": object, "partners": object, "own_group": object})
    if "reason" not in out.columns:
        out["reason"] = None
    out = out.astype({"reason": object})
    cols = {c: out.columns.get_loc(c) for c in ("shown_group", "partners", "own_group", "value", "ci_low", "ci_high",
                                                "reason")}
    for pos, (own, text, (v, lo, hi), partners) in shown.items():
        out.iat[pos, cols["own_group"]] = own
        why = out.iat[pos, cols["reason"]]
        if not _isnull(why) and str(why).strip():
            out.iat[pos, cols["reason"]] = f"{why} (alike vs {len(partners) - 1} more groups)"
        out.iat[pos, cols["shown_group"]] = text
        out.iat[pos, cols["partners"]] = partners
        out.iat[pos, cols["value"]] = v
        out.iat[pos, cols["ci_low"]] = None if math.isnan(lo) else lo
        out.iat[pos, cols["ci_high"]] = None if math.isnan(hi) else hi
    return out.iloc[[p for p in range(len(out)) if p not in drop]]


def collapse(fd: pd.DataFrame) -> pd.DataFrame:
    """Ranked judged rows with duplicates and mirrors merged (steps 2 and 3
    of the module doc); adds ``shown_metric``, ``shown_group``,
    ``own_group`` (the shared group of a merged line) and ``partners`` (its
    other groups), the last two None for other lines."""
    if fd.empty:
        return fd.assign(shown_metric=pd.Series(dtype=object), shown_group=pd.Series(dtype=object),
                         partners=pd.Series(dtype=object), own_group=pd.Series(dtype=object))
    fd = fd.reset_index(drop=True)
    for c in ("ci_low", "ci_high"):
        if c not in fd.columns:
            fd[c] = None
    out = _merge_partners(_merge_aliases(fd).reset_index(drop=True))
    if "shown_group" not in out.columns:
        out = out.assign(shown_group=out["group"], partners=None, own_group=None)
    return out.reset_index(drop=True)


def _with_topic(fd: pd.DataFrame) -> pd.DataFrame:
    sm = _summary()
    fam = fd["family"] if "family" in fd.columns else pd.Series("", index=fd.index)
    return fd.assign(topic=[sm.topic_of(m, f) for m, f in zip(fd["metric"], fam)])


def _distinct(fd: pd.DataFrame) -> pd.DataFrame:
    """The best line per (attribute, shown group, class, topic) (step 4)."""
    if fd.empty:
        return fd
    key = pd.DataFrame({"a": fd["attribute"].astype(str), "g": fd["shown_group"].astype(str),
                        "c": fd["class"].astype(str), "t": fd["topic"].astype(str)})
    return fd[~key.duplicated()]


# ----------------------------------------------------------------- selection
class Selection:
    """The lines to list (``rows``, ranked, with ``shown_metric``,
    ``shown_group``, ``partners``, ``via`` and ``topic``), how many judged
    rows are not negligible (``judged``) and how many of them are
    spill-overs left out (``spill``)."""

    def __init__(self, rows: pd.DataFrame, judged: int, spill: int):
        self.rows, self.judged, self.spill = rows, judged, spill


def _first_material(fd: pd.DataFrame) -> dict:
    """{(attribute, topic): index of its first (best) material line}."""
    m = fd[fd["verdict"] == "material"]
    out: dict = {}
    for i, a, t in zip(m.index, m["attribute"], m["topic"]):
        out.setdefault((a, t), i)
    return out


def _ranked(results: pd.DataFrame) -> pd.DataFrame:
    fd = _summary().findings(results)
    return fd[fd["verdict"].isin(JUDGED)].reset_index(drop=True)


class Prepared:
    """The ranked, merged lines of a results table, computed once for any
    number of selections (:func:`select_findings`)."""

    def __init__(self, results: pd.DataFrame):
        self.fd = _ranked(results)
        self.spill = spill_over(self.fd)
        self.main = _distinct(_with_topic(collapse(self.fd[~self.spill]))).assign(via=None)
        self.best = _first_material(self.main)
        self._spilled = None

    @property
    def spilled(self) -> tuple:
        """(merged spill-over lines, their first material line per cell)."""
        if self._spilled is None:
            sp = _with_topic(collapse(self.fd[self.spill]))
            self._spilled = (sp, _first_material(sp))
        return self._spilled


def select_findings(results: pd.DataFrame, ov: pd.DataFrame | None = None, *, top: int = 10, attributes=None,
                    cover: bool = True, prepared: Prepared | None = None) -> Selection:
    """The finding lines of a results table (module doc): ``top`` lines,
    more when the material cells of ``ov`` (the overview grid, limited to
    ``attributes`` when given) need them and ``cover`` is set. ``prepared``:
    :class:`Prepared` of the same results, to select again cheaply."""
    p = prepared if prepared is not None else Prepared(results)
    main = p.main
    picks: list = []
    extra = []
    if cover and ov is not None and not ov.empty:
        mat = ov[ov["verdict"] == "material"]
        if attributes is not None:
            mat = mat[mat["attribute"].isin(list(attributes))]
        for a, t in zip(mat["attribute"], mat["topic"]):
            if (a, t) in p.best:
                picks.append(p.best[(a, t)])
                continue
            spilled, best_spilled = p.spilled
            if (a, t) in best_spilled:
                sp = spilled.loc[[best_spilled[(a, t)]]]
                extra.append(sp.assign(via=sp["source"].iloc[0]))
    picks = list(dict.fromkeys(picks))
    if len(picks) + len(extra) < top:
        chosen = set(picks)
        for i in main.index:
            if len(picks) + len(extra) >= top:
                break
            if i not in chosen:
                picks.append(i)
    rows = pd.concat([main.loc[picks], *extra], ignore_index=True) if extra else main.loc[picks]
    if len(rows):
        order = {v: k for k, v in enumerate(_summary().FINDING_ORDER)}
        eff = pd.to_numeric(rows["effect"], errors="coerce") if "effect" in rows.columns else pd.Series(np.nan, index=rows.index)
        via = rows["via"].map(lambda v: not _isnull(v))
        rows = rows.assign(_s=_summary().sizeless(rows["verdict"], eff), _r=rows["verdict"].map(order), _v=via,
                           _e=-eff.fillna(-np.inf)).sort_values(["_s", "_r", "_v", "_e"], kind="stable").drop(
            columns=["_s", "_r", "_v", "_e"])
    return Selection(rows.reset_index(drop=True), int(len(p.fd)), int(p.spill.sum()))
