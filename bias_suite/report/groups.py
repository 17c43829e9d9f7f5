"""The per-group answer: how the model treats each group, worst off first.

:func:`by_group` reads a judged results table (the columns of
docs/formats.md, with ``signed``, ``signed_low``, ``signed_high`` and, where
present, ``source``) and returns one row per attribute and group:

- ``effect``, ``effect_low``, ``effect_high``: the group's largest own
  effect in units of τ, directed so that **positive means worse off for the
  group** (a ratio on its log against log 1.25). It is that of its largest
  claim (``material`` or ``small``) with a direction; with no such claim,
  that of its largest estimate, so that undecided groups are ordered too.
- ``status``:
  ``worse off`` / ``better off`` (its claims with a direction all point one
  way), ``mixed`` (both ways, or claims without a direction),
  ``undecided`` (no claim, and some of its values may still be material:
  an ``inconclusive`` value whose estimate is at least τ),
  ``no difference shown`` (no claim, no estimate at least τ, but not every
  value is cleared), ``cleared`` (every judged value ``negligible``).
- ``finding``: its largest own value (metric · class, and the other group
  of a pair), ``value``, ``low``, ``high`` on the verdict's scale;
- counts of its own values by verdict, and ``spillover``: values about the
  group whose effect comes from other groups (``source``), counted apart and
  never a claim about the group;
- ``settle``: for an undecided group, what its largest inconclusive value
  says would decide it.

Own values: rows about the group against the rest or all examples, and
rows about a pair with it. A claim about a pair counts towards a group's
direction only when the group stands on the same side against at least half
of the attribute's other groups for that metric and class (a group harmed
against every other group is worse off; each of the others is better off
against it alone and is not called better off for that). With two groups
the pair is the whole comparison and counts for both.

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

import numpy as np
import pandas as pd

from ..io.values import is_null
from ..stats.topics import VERDICTS

__all__ = ["by_group", "harm_sign", "class_valence", "STATUSES", "GROUP_COLUMNS"]

STATUSES = ("worse off", "mixed", "undecided", "better off", "no difference shown", "cleared")
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


_SETTLE = re.compile(r"(about [^;]*? would decide it|more data would decide it)")


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
    from .data import is_ratio

    return is_ratio(metric)


def _own_rows(res: pd.DataFrame) -> pd.DataFrame:
    """The judged rows about one group or one pair, with a signed value."""
    fam = res["family"].astype(str)
    keep = (res["verdict"].isin(VERDICTS)
            & res["group"].map(lambda g: isinstance(g, str)) & (fam != "significance")
            & ~res["metric"].astype(str).str.endswith("-SampleSize"))
    return res[keep]


def by_group(results: pd.DataFrame) -> pd.DataFrame:
    """One row per attribute and group (module doc), groups of an attribute
    ordered worst off first, attributes in their order in the results."""
    if results is None or len(results) == 0 or "verdict" not in results.columns:
        return pd.DataFrame(columns=GROUP_COLUMNS)
    res = _own_rows(results)
    if res.empty:
        return pd.DataFrame(columns=GROUP_COLUMNS)
    src = res["source"] if "source" in res.columns else pd.Series(None, index=res.index, dtype=object)
    spill = src.map(lambda s: isinstance(s, str) and bool(s.strip()))
    signed = pd.to_numeric(res.get("signed", pd.Series(np.nan, index=res.index)), errors="coerce")
    slo = pd.to_numeric(res.get("signed_low", pd.Series(np.nan, index=res.index)), errors="coerce")
    shi = pd.to_numeric(res.get("signed_high", pd.Series(np.nan, index=res.index)), errors="coerce")
    tau = pd.to_numeric(res["threshold"], errors="coerce")
    valenced = any(class_valence(c) for c in pd.unique(res["class"]))
    entries: dict = {}  # (attribute, group) -> list of row readings
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
            flip = -1.0 if k == 1 else 1.0  # a pair is first − second: the second group sees it reversed
            hv = h * flip
            e, elo, ehi = (hv * x for x in (v, lo, hi)) if hv else (math.nan,) * 3
            if hv < 0:
                elo, ehi = ehi, elo
            o = _oriented(ratio, k, signed[idx], slo[idx], shi[idx])
            ov = (math.log(o["value"]) if ratio and o["value"] > 0 else o["value"]) if np.isfinite(o["value"]) else 0.0
            entries.setdefault((a, s), []).append(dict(
                dirn=(1 if e > 0 else -1) if hv and np.isfinite(e) else (1 if ov > 0 else -1 if ov < 0 else 0),
                idx=idx, metric=metric, cls=c, group=g, verdict=verdict, reason=reason, spill=bool(spill[idx]),
                pair=len(sides) == 2, side=k, harm=hv, e=e, elo=elo, ehi=ehi,
                size=abs(v) if np.isfinite(v) else (float(res.at[idx, "effect"]) if not is_null(res.at[idx, "effect"])
                                                    else math.nan),
                **o))
    counts_pairs = _pair_majorities(entries, groups_of)
    causes: dict = {}  # attribute -> {class: groups with their own material claim on it}
    for (a, g), es in entries.items():
        for e in es:
            if not e["pair"] and not e["spill"] and e["verdict"] == "material":
                causes.setdefault(a, {}).setdefault(e["cls"], set()).add(g)
    rows = []
    for a, groups in groups_of.items():
        out = []
        for g in groups:
            out.append(_group_row(a, g, entries.get((a, g), []), counts_pairs, two=len(groups) == 2,
                                  causes=causes.get(a, {})))
        out.sort(key=lambda r: (-(r["effect"] if np.isfinite(r["effect"]) else -1e9), STATUSES.index(r["status"])))
        rows.extend(out)
    return pd.DataFrame(rows, columns=GROUP_COLUMNS)


def _oriented(ratio: bool, side: int, v, lo, hi) -> dict:
    """A pair's value as the group on ``side`` sees it (its own minus the other's)."""
    if side == 0:
        return dict(value=v, low=lo, high=hi)
    if ratio:
        inv = (lambda x: 1.0 / x if x and np.isfinite(x) else math.nan)
        return dict(value=inv(v), low=inv(hi), high=inv(lo))
    return dict(value=-v, low=-hi, high=-lo)


def _pair_majorities(entries: dict, groups_of: dict) -> set:
    """The (attribute, group, metric, class, direction) whose claimed pairs put
    the group on that side against at least half of the attribute's other
    groups."""
    out = set()
    for (a, g), es in entries.items():
        others = len(groups_of.get(a, {})) - 1
        if others < 1:
            continue
        tally: dict = {}
        for e in es:
            if e["pair"] and e["verdict"] in ("material", "small") and not e["spill"] and e["dirn"]:
                key = (e["metric"], e["cls"], e["dirn"])
                tally[key] = tally.get(key, 0) + 1
        for (m, c, d), n in tally.items():
            if 2 * n >= others:
                out.add((a, g, m, c, d))
    return out


def _group_row(a, g, es: list, majorities: set, *, two: bool = False, causes: dict | None = None) -> dict:
    def counts_for_group(e) -> bool:
        if not e["pair"]:
            return True
        return (a, g, e["metric"], e["cls"], e["dirn"]) in majorities

    # a claim about a pair that the other group's own difference explains is as much a spill-over
    for e in es:
        if e["pair"] and not two and e["verdict"] in ("material", "small") and not counts_for_group(e):
            e["spill"] = True
    own = [e for e in es if not e["spill"]]
    counts = {v: sum(1 for e in own if e["verdict"] == v) for v in VERDICTS}
    spillover = sum(1 for e in es if e["spill"] and e["verdict"] in ("material", "small"))
    claims = [e for e in own if e["verdict"] in ("material", "small")]
    # without a claim, the group's own estimates: its rows against the rest or all examples (a pair's estimate
    # is as much the other group's), or its pair when the attribute has two groups
    # (the Bernstein rows' bounds are too wide to order groups by: they count, but do not lead)
    # A row against the rest or all examples is left out when other groups of the attribute have their own
    # material claims on the same class: its estimate may be theirs
    solo = [e for e in own if (not e["pair"] or two) and not str(e["metric"]).startswith("Bernstein-")
            and (e["verdict"] in ("material", "small") or not (set((causes or {}).get(e["cls"], ())) - {g}))]

    def counts_for_group(e) -> bool:
        if not e["pair"]:
            return True
        return (a, g, e["metric"], e["cls"], e["dirn"]) in majorities

    directed = [e for e in claims if e["harm"] and np.isfinite(e["e"]) and counts_for_group(e)]
    if any(e["verdict"] == "material" for e in directed):  # the material claims say which way, small ones only
        directed = [e for e in directed if e["verdict"] == "material"]  # where there is none
    undirected = [e for e in claims if not e["harm"] and not e["pair"]]
    worse = [e for e in directed if e["e"] > 0]
    better = [e for e in directed if e["e"] < 0]
    if worse and better:
        status = "mixed"
    elif worse:
        status = "worse off"
    elif better:
        status = "better off"
    elif undirected:
        status = "mixed"
    else:
        judged = [e for e in own if e["verdict"] != "undefined"]
        if judged and all(e["verdict"] == "negligible" for e in judged):
            status = "cleared"
        elif any(e["verdict"] == "inconclusive" and np.isfinite(e["size"]) and e["size"] >= 1.0 for e in solo):
            status = "undecided"
        else:
            status = "no difference shown"
    # (a Bernstein row's bound is the weakest evidence: it leads only where no other claim does)
    pool = _prefer((worse + better) if directed else undirected) if (directed or undirected) else [
        e for e in solo if e["verdict"] in ("inconclusive", "small", "negligible") and np.isfinite(e["e"])]
    best = max(pool, key=lambda e: abs(e["e"]) if np.isfinite(e["e"]) else e["size"], default=None)
    settle = None
    if status == "undecided":
        und = [e for e in solo if e["verdict"] == "inconclusive" and np.isfinite(e["size"])]
        top = max(und, key=lambda e: e["size"], default=None)
        m = _SETTLE.search(str(top["reason"])) if top is not None else None
        settle = f"{_where(top, g)}: {m.group(1)}" if m else None
    row = dict(attribute=a, group=g, status=status, effect=math.nan, effect_low=math.nan, effect_high=math.nan,
               finding=None, value=math.nan, low=math.nan, high=math.nan, **counts, spillover=spillover, settle=settle)
    if best is not None:
        row.update(effect=best["e"] if np.isfinite(best["e"]) else math.nan,
                   effect_low=best["elo"], effect_high=best["ehi"], finding=_where(best, g),
                   value=best["value"], low=best["low"], high=best["high"])
    return row


def _prefer(es: list) -> list:
    plain = [e for e in es if not str(e["metric"]).startswith("Bernstein-")]
    return plain or es


def _where(e: dict, g: str) -> str:
    """"CFGap · positive vs 'muslim'" for a pair, "FNED · negative" for a group row."""
    parts = str(e["group"]).split("|")
    other = [p for p in parts if p != g]
    vs = f" vs {other[0]}" if e["pair"] and other else ""
    return f"{e['metric']} · {e['cls']}{vs}"


# ----------------------------------------------------------------- terminal
#: how each status is drawn: worse off in the colour of harm, better off in that of the other side
STATUS_STYLES = {"worse off": "bold #b2182b", "better off": "bold #2166ac", "mixed": "bold magenta",
                 "undecided": "yellow", "no difference shown": "dim", "cleared": "green"}
#: statuses listed by name on one line per attribute rather than a line each
QUIET = ("no difference shown", "cleared")


def _num(x) -> str:
    if x is None or not np.isfinite(x):
        return "∞" if x is not None and x == math.inf else "−∞" if x is not None and x == -math.inf else "–"
    return f"{x:+.1f}".replace("-", "−")


def group_lines(bg: pd.DataFrame, max_rows: int | None = None) -> list[tuple]:
    """The rows of the terminal's per-group table: (attribute, group text,
    status, effect text, finding text, counts text); groups that need no
    line of their own (:data:`QUIET`) share one per attribute and status.
    Attributes with a worse-off or undecided group come first."""
    rows: list = []
    rank = {s: i for i, s in enumerate(STATUSES)}
    def key(a):
        sub = bg[bg["attribute"] == a]
        worst = sub["effect"].abs().max() if sub["effect"].notna().any() else 0.0
        return (min(rank[s] for s in sub["status"]), -worst)

    order = sorted(pd.unique(bg["attribute"]), key=key)
    for a in order:
        sub = bg[bg["attribute"] == a]
        first = True
        for r in sub.itertuples(index=False):
            if r.status in QUIET:
                continue
            eff = (f"{_num(r.effect)} [{_num(r.effect_low)}, {_num(r.effect_high)}]"
                   if r.effect is not None and np.isfinite(r.effect) else "")
            counts = " ".join(f"{n}{k[0]}" for k, n in (("material", r.material), ("small", r.small),
                                                        ("negligible", r.negligible), ("inconclusive", r.inconclusive))
                              if n)
            what = r.settle if r.status == "undecided" and r.settle else (r.finding or "")
            rows.append((a if first else "", r.group, r.status, eff, what, counts))
            first = False
        for st in QUIET:
            names = sub.loc[sub["status"] == st, "group"].tolist()
            if names:
                rows.append((a if first else "", ", ".join(names), st, "", "", ""))
                first = False
    if max_rows is not None and len(rows) > max_rows:
        hidden = len(rows) - max_rows + 1
        rows = rows[: max_rows - 1] + [("", f"… {hidden} more", "", "", "", "")]
    return rows


def groups_table(bg: pd.DataFrame, *, max_rows: int | None = None, width: int | None = None):
    """The per-group answer as a rich table (the headline's first section)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    t = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True, padding=(0, 1))
    values = width is None or width >= 140  # its values by verdict, where the line has room for them
    finding = width is None or width >= 100  # its largest finding, likewise
    t.add_column("attribute", no_wrap=True, overflow="ellipsis", max_width=18 if finding else 14)
    t.add_column("group", overflow="fold", min_width=8, max_width=28 if finding else 18)
    t.add_column("status", no_wrap=True, min_width=19)
    t.add_column("effect ×τ", no_wrap=True, min_width=21)
    if finding:
        t.add_column("largest own finding / what would settle it", overflow="ellipsis", no_wrap=True, max_width=44)
    if values:
        t.add_column("values", no_wrap=True, overflow="ellipsis", max_width=18)
    for a, g, st, eff, what, counts in group_lines(bg, max_rows):
        cells = [Text(a), Text(g), Text(st, style=STATUS_STYLES.get(st, "")), Text(eff)]
        if finding:
            cells.append(Text(what, style="dim" if st == "undecided" else ""))
        t.add_row(*cells, *([Text(counts, style="dim")] if values else []))
    return t


# ----------------------------------------------------------------- HTML
def render_groups(results: pd.DataFrame) -> str:
    """The per-group answer as the HTML report's opening section (every
    group a row, with its values by verdict; empty string when no group is
    judged)."""
    from .htmlfmt import esc

    bg = by_group(results)
    if bg.empty:
        return ""
    colours = {"worse off": "#b2182b", "better off": "#2166ac", "mixed": "#8e44ad", "undecided": "#9a6700",
               "no difference shown": "#6a737d", "cleared": "#1a7f37"}
    head = ("<tr><th>attribute</th><th>group</th><th>status</th><th>effect ×τ (+ worse off)</th>"
            "<th>largest own finding</th><th>value [interval]</th><th>material</th><th>small</th><th>negligible</th>"
            "<th>inconclusive</th><th>spill-overs</th><th>what would settle it</th></tr>")
    body = []
    for r in bg.itertuples(index=False):
        eff = f"{_num(r.effect)} [{_num(r.effect_low)}, {_num(r.effect_high)}]" if np.isfinite(r.effect) else ""
        val = (f"{r.value:.3g} [{r.low:.3g}, {r.high:.3g}]" if r.value is not None and np.isfinite(r.value)
               and np.isfinite(r.low) and np.isfinite(r.high) else "")
        body.append(
            f'<tr data-status="{esc(r.status)}"><td>{esc(r.attribute)}</td><td>{esc(r.group)}</td>'
            f'<td style="color:{colours.get(r.status, "inherit")};font-weight:600">{esc(r.status)}</td>'
            f"<td>{esc(eff)}</td><td>{esc(r.finding or '')}</td><td>{esc(val)}</td><td>{r.material}</td>"
            f"<td>{r.small}</td><td>{r.negligible}</td><td>{r.inconclusive}</td>"
            f'<td class="muted">{r.spillover}</td><td class="muted">{esc(r.settle or "")}</td></tr>')
    return ('<section id="groups"><h2>How the model treats each group</h2>'
            '<p class="muted">Per attribute, worst off first. The effect is the group\'s largest own effect in units '
            "of τ, positive when it is worse for the group; the counts are its own values by verdict, and spill-overs "
            "(values about the group caused by other groups) are counted apart and never a claim about it.</p>"
            f'<table class="groups">{head}{"".join(body)}</table></section>')
