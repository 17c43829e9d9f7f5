"""A comparison on one screen, and as one HTML page.

:func:`comparison_renderables` turns a :class:`~bias_suite.comparison.Comparison`
into rich renderables, in this order:

1. the models compared and the paired examples;
2. with several candidates: a models × attributes grid (each model's worst
   verdict per attribute and the largest effect, ×τ, of its rows with that
   verdict), the models ranked; then each candidate against the first
   model in a few lines;
3. with one candidate: the grid of changes, attributes × topics (topics in
   :data:`~bias_suite.stats.topics.TOPIC_ORDER`): per cell the most
   urgent change (worsened, improved, inconclusive, unchanged) and the
   largest change of its rows in units of τ, signed (− closer to no bias);
4. what got materially worse, then what got materially better: one line
   per change (duplicates and mirrors merged, spill-overs counted apart)
   with both models' values and verdicts, the change and its interval, τ
   and the reason;
5. the counterfactual sentence pair whose probability gap changed most, in
   the attribute and class of the first change listed;
6. the counts of each change, the error control and where the files are.

:func:`print_comparison` fits it to ``max_lines`` (60 by default) by
listing fewer changes, then fewer grid rows. :func:`render_comparison` is
the HTML page (``--report``): the same blocks, every material change, and
each model's own overview (:func:`bias_suite.report.sections.render_overview`).
"""
from __future__ import annotations

import datetime as _dt
import re

import numpy as np
import pandas as pd

from . import theme
from ..io.values import is_null
from ..stats import change
from ..stats.topics import ordered_topics
from .headline import num, render_text
from .summary import grid_cells

__all__ = ["comparison_renderables", "print_comparison", "render_comparison", "write_comparison_report",
           "comparison_html", "on_scale", "changed_pair", "CHANGE_STYLES", "CHANGE_SHORT", "MAX_LINES"]

MAX_LINES = 60
CHANGE_STYLES = {"worsened": f"bold {theme.WORSE_INK}", "improved": f"bold {theme.BETTER_INK}",
                 "inconclusive": "italic", "unchanged": "dim"}
CHANGE_SHORT = {"worsened": "wrs", "improved": "imp", "inconclusive": "inc", "unchanged": "same"}
COMPACT_TOPICS = {"counterfactual": "counterf", "Bernstein": "Bernst", "significance": "signif"}


def _size(v, signed: bool = True) -> str:
    """A change in units of τ: '+2.4', '−0.8', '>99'."""
    if is_null(v):
        return ""
    x = float(v)
    mag = ">99" if abs(x) >= 99.5 else (f"{abs(x):.1f}" if abs(x) < 9.95 else f"{abs(x):.0f}")
    return (("+" if x > 0 else "−" if x < 0 else "±") + mag) if signed else mag


def _label(comp, attribute, task) -> str:
    labels = getattr(getattr(comp, "details", None), "labels", {}) or {}
    lab = labels.get(task, "")
    return f"{attribute} ({lab})" if lab and len(labels) > 1 else str(attribute)


# ----------------------------------------------------------------- lines
def _dedupe(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per change that several rows say alike: the same attribute,
    groups (a mirror too), class, change and interval (FNED and FNED*, a|b
    and b|a); the line names every metric."""
    if rows.empty:
        return rows.assign(shown_metric=[])
    key = [(r["candidate"], r["task"], r["attribute"], tuple(sorted(str(r["group"]).split("|"))), r["class"],
            f"{r['change_value']:.9g}", f"{r['ci_low']:.9g}", f"{r['ci_high']:.9g}")
           for r in rows.to_dict("records")]
    rows = rows.assign(_k=key)
    names = rows.groupby("_k", sort=False)["metric"].agg(lambda m: "/".join(dict.fromkeys(m)))
    first = rows.drop_duplicates("_k").copy()
    first["shown_metric"] = first["_k"].map(names)
    return first.drop(columns="_k").reset_index(drop=True)


#: a group's change that a row's change contradicts (the row moves the other way than the group's effect)
_CONTRADICTS = {"worsened": ("reduced",), "improved": ("increased",)}


def _group_statuses(bg: pd.DataFrame) -> dict:
    """{(candidate, attribute label, group): the group's change status} of Comparison.by_group()'s ``bg``."""
    return {(r.candidate, r.attribute, r.group): r.status for r in bg.itertuples(index=False)}


def _claims(comp, word: str, candidate=None, groups: dict | None = None) -> tuple[pd.DataFrame, int]:
    """(lines of one change word, spill-overs left out), largest first; a line whose groups' own effect
    changed the other way (an error rate that flips where the scores say the opposite) goes last."""
    rows = comp.findings(word)
    if candidate is not None:
        rows = rows[rows["candidate"] == candidate]
    spill = rows["source"].map(lambda s: isinstance(s, str) and bool(s))
    rows = _dedupe(rows[~spill].reset_index(drop=True))
    if groups and not rows.empty:
        against = _CONTRADICTS.get(word, ())
        late = [any(groups.get((r["candidate"], _label(comp, r["attribute"], r["task"]), g)) in against
                    for g in str(r["group"]).split("|")) for _, r in rows.iterrows()]
        rows = rows.assign(_late=late).sort_values("_late", kind="stable").drop(columns="_late").reset_index(drop=True)
    return rows, int(spill.sum())


def group_change_table(bg: pd.DataFrame, candidate, *, max_rows: int | None = None):
    """What changed for each group (Comparison.by_group()): groups whose effect changed first, then the
    unchanged ones of an attribute on one line."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    bg = bg[bg["candidate"] == candidate]
    if bg.empty:
        return None
    styles = {"increased": "bold #b2182b", "reversed": "bold magenta", "reduced": "bold #1a7f37", "undecided": "yellow",
              "unchanged": "dim"}
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False, collapse_padding=True, padding=(0, 1))
    for col in ("attribute", "group", "change", "effect ×τ before → after", "change ×τ [interval]"):
        t.add_column(col, no_wrap=col != "group", overflow="fold")
    rows = []
    for a, sub in bg.groupby("attribute", sort=False):
        for r in sub[sub["status"] != "unchanged"].itertuples(index=False):
            eff = f"{_size(r.effect_before)} → {_size(r.effect_after)}" if pd.notna(r.effect_before) else ""
            chg = (f"{_size(r.change)} [{_size(r.change_low)}, {_size(r.change_high)}]" if pd.notna(r.change) else "")
            rows.append((a, r.group, r.status, eff, chg))
        same = sub.loc[sub["status"] == "unchanged", "group"].tolist()
        if same:
            rows.append((a, ", ".join(same), "unchanged", "", ""))
    if max_rows is not None and len(rows) > max_rows:
        rows = rows[: max_rows - 1] + [("", f"… {len(rows) - max_rows + 1} more", "", "", "")]
    last = None
    for a, g, st, eff, chg in rows:
        t.add_row(Text("" if a == last else a), Text(g), Text(st, style=styles.get(st, "")), Text(eff), Text(chg))
        last = a
    return t


def _who(comp, r) -> str:
    g = r.get("group")
    g = "all groups" if is_null(g) else str(g).replace("|", " vs ")
    c = r.get("class")
    return f"{_label(comp, r['attribute'], r['task'])}: {g}" + (f" · {c}" if not is_null(c) and c != "all" else "")


def on_scale(r) -> str:
    """What the change of row ``r`` is measured on, when its two values as
    shown do not subtract to it (docs/compare.md, "What changes"): the
    scale and both models' distances from no bias on it, which do
    (``"|signed difference| 0.040 → 0.020"``); ``""`` when the values
    themselves subtract to the change."""
    vb, vc, d = r.get("value_baseline"), r.get("value_candidate"), r.get("change_value")
    if is_null(d):
        return ""
    d = float(d)
    if not (is_null(vb) or is_null(vc)) and abs((float(vc) - float(vb)) - d) <= 1e-9 * max(1.0, abs(d)):
        return ""
    scale = r.get("scale")
    db, dc = r.get("distance_baseline"), r.get("distance_candidate")
    if is_null(db) or is_null(dc):
        return f"change of {scale}" if isinstance(scale, str) and scale else ""
    if scale == change.SCALES["basis"] and str(r.get("metric", "")).endswith("AEG"):
        scale = "|AEG across templates|"  # an AEG's verdict (and so its change) is decided across templates
    return f"{scale} {num(db)} → {num(dc)}"


def _change_lines(comp, fd: pd.DataFrame, marks=None):
    """Two lines per change: rank, size ×τ, change, metric, who; then both
    values with their verdicts, the change [interval], τ and the reason."""
    from rich.table import Table
    from rich.text import Text

    t = Table.grid(padding=(0, 1))
    t.add_column(justify="right")
    t.add_column(justify="right")
    t.add_column()
    recs = fd.to_dict("records")
    wm = min(16, max((len(str(r.get("shown_metric") or r["metric"])) for r in recs), default=0))
    for k, r in enumerate(recs, 1):
        size = (r["change_value"] / r["threshold"]) if not (is_null(r["change_value"]) or is_null(r["threshold"])) else None
        body = Text()
        body.append(f"{str(r.get('shown_metric') or r['metric']):<{wm}}", style="bold")
        body.append(" " + _who(comp, r))
        body.append("\n")
        body.append(f"{num(r['value_baseline'])} ({r['verdict_baseline']}) → {num(r['value_candidate'])} "
                    f"({r['verdict_candidate']})")
        scale = on_scale(r)
        if scale:
            body.append(f"  {scale}", style=theme.MUTED)
        body.append(f"  change {num(r['change_value'])} [{num(r['ci_low'])}, {num(r['ci_high'])}]",
                    style=CHANGE_STYLES.get(r["change"], ""))
        body.append(f"  τ = {float(r['threshold']):.3g}" if not is_null(r["threshold"]) else "", style=theme.MUTED)
        body.append(f"  {r['reason']}", style=theme.MUTED)
        t.add_row(Text(str(k) if marks is None else marks[k - 1]), Text(_size(size) + "×",
                                                                          style=CHANGE_STYLES.get(r["change"], "")), body)
    return t


# ----------------------------------------------------------------- grids
def _attribute_order(sm: pd.DataFrame) -> list:
    rank = sm.assign(_r=sm["change"].map({c: i for i, c in enumerate(change.CHANGES)}),
                     _s=-sm["size"].astype(float).fillna(-1))
    order = rank.groupby("attribute", sort=False)[["_r", "_s"]].min().sort_values(["_r", "_s"], kind="stable")
    return list(order.index)


def change_grid(sm: pd.DataFrame, *, compact: bool, max_rows: int | None = None):
    """Attributes × topics of :meth:`Comparison.summary` (one candidate)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    topics = ordered_topics(sm["topic"])
    attrs = _attribute_order(sm)
    hidden = max(0, len(attrs) - max_rows) if max_rows is not None else 0
    attrs = attrs[: len(attrs) - hidden]
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 0) if compact else (0, 1), show_edge=False,
              collapse_padding=True)
    t.add_column("attribute", overflow="ellipsis", no_wrap=True, max_width=22)
    for tp in topics:
        t.add_column(COMPACT_TOPICS.get(tp, tp) if compact else tp, no_wrap=compact)
    for a, row_cells in grid_cells(sm, attrs, topics):
        row = [Text(str(a))]
        for tp, r in row_cells:
            if r is None:
                row.append(Text(""))
                continue
            cell = Text(CHANGE_SHORT[r["change"]] if compact else r["change"], style=CHANGE_STYLES.get(r["change"], ""))
            if r["change"] in ("worsened", "improved") and not is_null(r["size"]):
                cell.append(" " + _size(r["size"] * (1 if r["change"] == "worsened" else -1)))
            row.append(cell)
        t.add_row(*row)
    if hidden:
        t.add_row(Text(f"… {hidden} more", style=theme.MUTED), *[""] * len(topics))
    return t


def models_grid(comp, *, compact: bool):
    """Models (ranked) × attributes: the worst verdict and largest effect."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    ov = comp.models()
    ranked = list(comp.ranking()["model"])
    attrs = list(pd.unique(ov["attribute"]))
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 0) if compact else (0, 1), show_edge=False,
              collapse_padding=True)
    t.add_column("model", overflow="ellipsis", no_wrap=True, max_width=24)
    for a in attrs:
        t.add_column(a, no_wrap=compact, overflow="ellipsis", max_width=12 if compact else None)
    cells = {(r["model"], r["attribute"]): r for r in ov.to_dict("records")}
    for k, m in enumerate(ranked, 1):
        row = [Text(f"{k}. {m}")]
        for a in attrs:
            r = cells.get((m, a))
            if r is None:
                row.append(Text(""))
                continue
            v = r["verdict"]
            cell = Text(theme.VERDICT_SHORT.get(v, v) if compact else v, style=theme.VERDICT_STYLES.get(v, ""))
            if not is_null(r["effect"]):
                cell.append(" ")
                cell.append(_size(r["effect"], signed=False), style=theme.effect_style(r["effect"]))
            row.append(cell)
        t.add_row(*row)
    return t


# ----------------------------------------------------------------- the pair
def changed_pair(base, cand, attribute: str, classes=None) -> dict | None:
    """The counterfactual pair (two examples of two groups, same template)
    of ``attribute`` whose probability gap for a class changed most between
    two models' aligned scored data ``base`` and ``cand``: {"template",
    "class", "gap_baseline", "gap_candidate", "rows": [(group, text, p_b, p_c),
    (group, text, p_b, p_c)]}, or None."""
    from ..families import FAMILIES
    from .pairs import ZERO_GAP, example_texts

    fam = FAMILIES.get(getattr(base, "task", None))
    if fam is None:
        return None
    fr = base.frame
    rows = np.flatnonzero((fr["attribute"] == attribute).to_numpy())
    if rows.size < 2:
        return None
    classes = [c for c in (classes or list(base.classes)) if c in tuple(base.classes)] or list(base.classes)
    tpl = pd.factorize(fr["template"].to_numpy(dtype=object)[rows])[0]
    grp = fr["group"].to_numpy(dtype=object)[rows]
    left = pd.DataFrame({"t": tpl, "i": np.arange(rows.size)})
    pairs = left.merge(left, on="t", suffixes=("_a", "_b"))
    a, b = pairs["i_a"].to_numpy(), pairs["i_b"].to_numpy()
    keep = grp[a] != grp[b]
    a, b = a[keep], b[keep]
    if a.size == 0:
        return None
    best = None
    for c in classes:
        pb, pc = fam.example_scores(base, c), fam.example_scores(cand, c)
        if pb is None or pc is None:
            continue
        pb, pc = np.asarray(pb, float)[rows], np.asarray(pc, float)[rows]
        gb, gc = pb[a] - pb[b], pc[a] - pc[b]
        d = np.abs(gc) - np.abs(gb)
        d = np.where(np.isfinite(d), d, 0.0)
        k = int(np.argmax(np.abs(d)))
        if best is None or abs(d[k]) > best[0]:
            best = (abs(d[k]), c, a[k], b[k], gb[k], gc[k], pb, pc)
    if best is None or best[0] <= ZERO_GAP:
        return None
    _, c, i, j, gb, gc, pb, pc = best
    if gc < 0 or (gc == 0 and gb < 0):  # the higher probability first
        i, j, gb, gc = j, i, -gb, -gc
    texts = example_texts(base)
    return {"template": fr["template"].iloc[rows[i]], "class": c, "gap_baseline": float(gb), "gap_candidate": float(gc),
            "rows": [(grp[i], texts[rows[i]], float(pb[i]), float(pc[i])), (grp[j], texts[rows[j]], float(pb[j]), float(pc[j]))]}


def _pair_for(comp, candidate, first: pd.DataFrame):
    """The changed pair of the first listed change of ``candidate`` (else its largest change)."""
    info = getattr(comp, "details", None)
    if info is None:
        return None, None
    if first is None or first.empty:
        rows = pd.DataFrame(comp[(comp["candidate"] == candidate) & comp["ci_low"].notna()])
        if rows.empty:
            return None, None
        first = rows.loc[[(rows["change_value"].abs() / rows["threshold"]).fillna(-1).idxmax()]]
    r = first.iloc[0]
    base, cand = info.scored[info.models[0]].get(r["task"]), info.scored[candidate].get(r["task"])
    if base is None or cand is None:
        return None, None
    cls = None if r["class"] == "all" else [r["class"]]
    return changed_pair(base, cand, r["attribute"], cls), _label(comp, r["attribute"], r["task"])


def _pair_block(wp, label) -> list:
    from rich.table import Table
    from rich.text import Text

    if wp is None:
        return []
    head = Text.assemble(("Pair whose gap changed most", "bold"), f" in {label}: template {wp['template']}, "
                         f"probability of ", (str(wp["class"]), "bold"),
                         f", gap {abs(wp['gap_baseline']):.3f} → {abs(wp['gap_candidate']):.3f}")
    g = Table.grid(padding=(0, 1))
    g.add_column(justify="right")
    g.add_column(style=theme.MUTED)
    g.add_column()
    for grp, text, pb, pc in wp["rows"]:
        g.add_row(Text(f"p={pb:.3f} → {pc:.3f}", style="bold"), Text(str(grp)), Text(str(text)))
    return [head, g]


# ----------------------------------------------------------------- assembly
def _counts_text(counts: dict):
    from rich.text import Text

    t = Text("")
    parts = [(f"{n} {w}", CHANGE_STYLES.get(w, theme.MUTED)) for w, n in counts.items() if n or w == "worsened"]
    for k, (s, st) in enumerate(parts):
        if k:
            t.append(" · ")
        t.append(s, style=st)
    return t


def _control_line(comp, candidate):
    from rich.text import Text

    info = getattr(comp, "details", None)
    if info is None:
        return None
    st = info.settings
    from ..stats.multiplicity import guarantee

    mine = [v for k, v in info.family.items() if k.split("|", 1)[0] == candidate]
    m = sum(int(v.get("family", 0)) for v in mine)
    units = sum(int(v.get("units", 0) or 0) for v in mine)
    said = guarantee(st["multiplicity"], 1 - st["confidence"], m=m, units=units)
    return Text(f"error control of improved and worsened: {said.replace(' values)', ' changes)')} "
                f"({st['confidence']:.0%} intervals, B = {st['bootstrap']} paired template resamples)",
                style=theme.MUTED)


def _title(comp) -> str:
    info = getattr(comp, "details", None)
    if info is None:
        return "Comparison"
    n = sum(len(d) for d in info.scored[info.models[0]].values())
    lost = sum(info.dropped.values())
    left = f" ({lost} unpaired examples left out)" if lost else ""
    return f"Comparison: {' → '.join(info.models[:2])}{' and ' + str(len(info.models) - 2) + ' more' if len(info.models) > 2 else ''}: {n} paired examples{left}"


def comparison_renderables(comp, *, top: int = 5, max_attributes: int | None = None, compact: bool = False,
                           pair: bool = True, files=(), group_rows: int | None = 12,
                           changes: pd.DataFrame | None = None) -> list:
    """The comparison as a list of rich renderables (see the module doc); ``changes``: its
    ``Comparison.by_group()`` when the caller has it already."""
    from rich.text import Text

    blank = Text("")
    out = [Text(_title(comp), style="bold")]
    info = getattr(comp, "details", None)
    cands = info.models[1:] if info is not None else list(pd.unique(comp["candidate"]))
    if len(cands) > 1:
        out += [blank, Text("Models × attributes: worst verdict and largest effect (×τ), ranked", style="bold"),
                models_grid(comp, compact=compact)]
        for c in cands:
            worse, _ = _claims(comp, "worsened", c)
            better, _ = _claims(comp, "improved", c)
            out += [blank, Text.assemble((f"{info.models[0]} → {c}: ", "bold"), _counts_text(comp.counts(c)))]
            if top:
                for fd, mark in ((worse.head(1), "worst"), (better.head(1), "best")):
                    if not fd.empty:
                        out.append(_change_lines(comp, fd, marks=[mark]))
        out += [blank, Text("Every candidate against the first model: the comparison files; one at a time: "
                            "bias-suite compare BASELINE CANDIDATE", style=theme.MUTED)]
    else:
        c = cands[0] if cands else None
        sm = comp.summary()
        sm = sm[sm["candidate"] == c] if c is not None else sm
        changes = comp.by_group() if changes is None else changes
        groups = _group_statuses(changes)
        table = group_change_table(changes, c, max_rows=group_rows) if c is not None and group_rows else None
        if table is not None:
            out += [blank, Text("What changed for each group (effect ×τ, + = worse off; change of its distance from "
                                "no bias: − closer, + further)", style="bold"), table]
        out += [blank, Text("Changes per attribute and topic: most urgent change, largest change (×τ; − closer to no "
                            "bias, + further)", style="bold")]
        out.append(change_grid(sm, compact=compact, max_rows=max_attributes) if not sm.empty
                   else Text("no value with a paired interval", style=theme.MUTED))
        first = None
        for word, head in (("worsened", "Materially worse"), ("improved", "Materially better")):
            lines, spill = _claims(comp, word, c, groups)
            n = int(((comp["candidate"] == c) & (comp["change"] == word)).sum())
            notes = [f"{spill} spill-over{'s' if spill != 1 else ''} not listed"] if spill else []
            if len(lines) + spill < n:
                notes.append("duplicates and mirrors on one line")
            extra = f" ({'; '.join(notes)})" if notes else ""
            out += [blank, Text(f"{head}: {n} value{'s' if n != 1 else ''}{extra}", style="bold")]
            if top and not lines.empty:
                out.append(_change_lines(comp, lines.head(top)))
                if len(lines) > top:
                    out.append(Text(f"… {len(lines) - top} more lines in the comparison files", style=theme.MUTED))
            if first is None and not lines.empty:
                first = lines.head(1)
        if pair and c is not None:
            block = _pair_block(*_pair_for(comp, c, first))
            out += [blank] + block if block else []
    out.append(blank)
    for c in cands[:1] if len(cands) == 1 else []:
        out.append(_counts_text(comp.counts(c)))
        line = _control_line(comp, c)
        if line is not None:
            out.append(line)
    if files:
        out.append(Text("files: " + " · ".join(map(str, files)), style=theme.MUTED))
    return out


def fit_comparison(comp, width: int, max_lines: int = MAX_LINES, files=()) -> list:
    """The richest comparison screen that fits ``max_lines`` at ``width``."""
    changes = comp.by_group()  # (once: every try below reads it)
    wide = comparison_renderables(comp, top=0, pair=False, files=files, changes=changes)
    compact = max(len(line) for line in render_text(wide, 10_000).splitlines()) > width
    for top in (5, 4, 3, 2, 1):
        r = comparison_renderables(comp, top=top, compact=compact, files=files, changes=changes)
        if render_text(r, width).count("\n") <= max_lines:
            return r
    for rows in (16, 8, 4, 2, 1):
        for pair in (True, False):
            r = comparison_renderables(comp, top=1, max_attributes=rows, compact=True, pair=pair, files=files,
                                       changes=changes)
            if render_text(r, width).count("\n") <= max_lines:
                return r
    for rows in (8, 4):  # the per-group table is the last to shrink
        r = comparison_renderables(comp, top=0, max_attributes=1, compact=True, pair=False, files=files,
                                   changes=changes, group_rows=rows)
        if render_text(r, width).count("\n") <= max_lines:
            return r
    return comparison_renderables(comp, top=0, max_attributes=1, compact=True, pair=False, files=files,
                                  changes=changes, group_rows=4)[:max_lines]


def print_comparison(comp, *, console=None, max_lines: int = MAX_LINES, files=()) -> int:
    """Print the comparison fitted to ``max_lines`` at the console's width;
    return the number of lines. Plain text (no trailing spaces) to a pipe or a file."""
    from rich.console import Console

    from .terminal import make_console

    if not isinstance(console, Console):
        console = make_console()
    rend = fit_comparison(comp, console.width, max_lines, files=files)
    if console.is_terminal:
        for r in rend:
            console.print(r)
        return render_text(rend, console.width).count("\n")
    text = "\n".join(line.rstrip() for line in render_text(rend, console.width).splitlines())
    console.file.write(text + "\n")
    console.file.flush()
    return text.count("\n") + 1


def comparison_html(comp, *, width: int = 110, max_lines: int = MAX_LINES) -> str:
    """The comparison for a notebook: the screen :func:`print_comparison`
    prints, as preformatted text, and how to get the rows."""
    from .htmlfmt import esc

    text = "\n".join(line.rstrip() for line in render_text(fit_comparison(comp, width, max_lines), width).splitlines())
    return (f'<div class="bias-suite-comparison"><pre>{esc(text)}</pre><p><small>{len(comp)} rows × '
            f"{len(comp.columns)} columns: <code>.findings()</code>, <code>.summary()</code>, <code>.counts()</code>, "
            "<code>pd.DataFrame(comparison)</code> for the table</small></p></div>")


# ----------------------------------------------------------------- HTML
def _esc(x) -> str:
    from .htmlfmt import esc

    return esc("" if is_null(x) else x)


def _html_changes(comp, fd: pd.DataFrame) -> str:
    if fd.empty:
        return '<p class="muted">None.</p>'
    heads = ["×τ", "metric", "who", "baseline", "candidate", "change [interval]", "τ", "reason"]
    body = []
    for r in fd.to_dict("records"):
        size = r["change_value"] / r["threshold"] if not (is_null(r["change_value"]) or is_null(r["threshold"])) else None
        body.append(
            f'<tr><td class="fx">{_esc(_size(size))}</td><td>{_esc(r.get("shown_metric") or r["metric"])}</td>'
            f'<td>{_esc(_who(comp, r))}</td><td class="num">{_esc(num(r["value_baseline"]))} '
            f'<span class="verdict v-{_esc(r["verdict_baseline"])}">{_esc(r["verdict_baseline"])}</span></td>'
            f'<td class="num">{_esc(num(r["value_candidate"]))} <span class="verdict v-{_esc(r["verdict_candidate"])}">'
            f'{_esc(r["verdict_candidate"])}</span></td><td class="num">{_esc(num(r["change_value"]))} '
            f'[{_esc(num(r["ci_low"]))}, {_esc(num(r["ci_high"]))}]{_esc((" " + on_scale(r)) if on_scale(r) else "")}</td><td class="num">{_esc(num(r["threshold"]))}</td>'
            f'<td class="reason">{_esc(r["reason"])}</td></tr>')
    return (f'<div class="scroll"><table class="findings"><thead><tr>{"".join(f"<th>{h}</th>" for h in heads)}</tr>'
            f'</thead><tbody>{"".join(body)}</tbody></table></div>')


def _html_group_changes(bg: pd.DataFrame, candidate) -> str:
    """What changed for each group, as the comparison's first table (Comparison.by_group()'s ``bg``)."""
    bg = bg[bg["candidate"] == candidate]
    if bg.empty:
        return ""
    colours = {"increased": "#b2182b", "reversed": "#8e44ad", "reduced": "#1a7f37", "undecided": "#9a6700",
               "unchanged": "#6a737d"}
    body = []
    for r in bg.itertuples(index=False):
        eff = f"{_size(r.effect_before)} → {_size(r.effect_after)}" if pd.notna(r.effect_before) else ""
        chg = f"{_size(r.change)} [{_size(r.change_low)}, {_size(r.change_high)}]" if pd.notna(r.change) else ""
        body.append(f'<tr data-status="{_esc(r.status)}"><td>{_esc(r.attribute)}</td><td>{_esc(r.group)}</td>'
                    f'<td style="color:{colours.get(r.status, "inherit")};font-weight:600">{_esc(r.status)}</td>'
                    f"<td>{_esc(r.status_before)} → {_esc(r.status_after)}</td><td>{_esc(eff)}</td>"
                    f"<td>{_esc(chg)}</td><td>{_esc(r.finding or '')}</td></tr>")
    return ('<h3>What changed for each group <span class="muted">effect ×τ, + = worse off; the change of its distance '
            'from no bias with its paired interval</span></h3><table class="groups"><tr><th>attribute</th><th>group</th>'
            "<th>change</th><th>status before → after</th><th>effect before → after</th><th>change [interval]</th>"
            f"<th>followed</th></tr>{''.join(body)}</table>")


def _html_grid(sm: pd.DataFrame) -> str:
    if sm.empty:
        return '<p class="muted">No value with a paired interval.</p>'
    topics = ordered_topics(sm["topic"])
    head = "".join(f'<th scope="col">{_esc(t)}</th>' for t in topics)
    rows = []
    for a, row_cells in grid_cells(sm, _attribute_order(sm), topics):
        tds = []
        for t, r in row_cells:
            if r is None:
                tds.append('<td class="ov empty"></td>')
                continue
            size = ""
            if r["change"] in ("worsened", "improved") and not is_null(r["size"]):
                size = _size(r["size"] * (1 if r["change"] == "worsened" else -1))
            where = " · ".join(str(x) for x in (r["metric"], r["class"], r["group"]) if not is_null(x))
            counts = ", ".join(f"{r[w]} {w}" for w in ("worsened", "improved", "inconclusive", "unchanged") if r[w])
            tds.append(f'<td class="ov" title="largest: {_esc(where)}; {_esc(counts)}"><span class="c-{r["change"]}">'
                       f'{_esc(r["change"])}</span> <span class="fx">{_esc(size)}</span></td>')
        rows.append(f'<tr><th scope="row">{_esc(a)}</th>{"".join(tds)}</tr>')
    return (f'<div class="scroll"><table class="overview"><thead><tr><th scope="col">attribute</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _suffix_ids(html: str, suffix: str) -> str:
    """Ids (and links to them) of one model's overview made unique on a page
    holding several; links to a run report's attribute sections (not on
    this page) become plain text."""
    html = re.sub(r'<a href="#attr-[^"]*">(.*?)</a>', r"\1", html)
    html = re.sub(r'id="([^"]+)"', lambda m: f'id="{m.group(1)}-{suffix}"', html)
    return re.sub(r'href="#([^"]+)"', lambda m: f'href="#{m.group(1)}-{suffix}"', html)


def render_comparison(comp, *, title: str | None = None) -> str:
    """The comparison as one self-contained HTML page."""
    from .. import __version__
    from .html import CSS
    from .sections import render_overview

    info = comp.details
    title = title or f"bias_suite comparison — {' vs '.join(info.models)}"
    parts = []
    cands = info.models[1:]
    if len(cands) > 1:
        ov, rk = comp.models(), comp.ranking()
        attrs = list(pd.unique(ov["attribute"]))
        cells = {(r["model"], r["attribute"]): r for r in ov.to_dict("records")}
        body = []
        for r in rk.to_dict("records"):
            tds = "".join(
                f'<td class="ov"><span class="v-{_esc(cells[(r["model"], a)]["verdict"])}">{_esc(cells[(r["model"], a)]["verdict"])}'
                f'</span> <span class="fx">{_esc(_size(cells[(r["model"], a)]["effect"], signed=False))}</span></td>'
                if (r["model"], a) in cells else '<td class="ov empty"></td>' for a in attrs)
            body.append(f'<tr><th scope="row">{r["rank"]}. {_esc(r["model"])}</th>{tds}<td class="num">{r["material"]}</td></tr>')
        heads = "".join(f"<th>{_esc(a)}</th>" for a in attrs)
        parts.append('<section id="models"><h2 class="first">Models × attributes <span class="muted">worst verdict and '
                     'largest effect (×τ) on the paired examples; ranked by material values, then their effects</span></h2>'
                     f'<div class="scroll"><table class="overview"><thead><tr><th>model</th>{heads}<th>material</th></tr>'
                     f'</thead><tbody>{"".join(body)}</tbody></table></div></section>')
    sm = comp.summary()
    changes = comp.by_group()
    groups = _group_statuses(changes)
    for c in cands:
        worse, ws = _claims(comp, "worsened", c, groups)
        better, bs = _claims(comp, "improved", c, groups)
        counts = " · ".join(f'<span class="c-{w}">{n} {w}</span>' for w, n in comp.counts(c).items())
        wp, label = _pair_for(comp, c, worse.head(1) if not worse.empty else better.head(1))
        pair = ""
        if wp is not None:
            sent = "".join(f'<div class="sent"><span>{_esc(g)}: {_esc(t)}</span><span class="probs">p = {pb:.3f} → '
                           f'{pc:.3f}</span></div>' for g, t, pb, pc in wp["rows"])
            pair = (f"<h3>Pair whose gap changed most <span class=\"muted\">{_esc(label)}, template {_esc(wp['template'])}, "
                    f"probability of {_esc(wp['class'])}: gap {abs(wp['gap_baseline']):.3f} → "
                    f"{abs(wp['gap_candidate']):.3f}</span></h3>{sent}")
        spill = lambda n: f" ({n} spill-over{'s' if n != 1 else ''} not listed)" if n else ""
        parts.append(
            f'<section id="changes-{_slug(c)}"><h2>{_esc(info.models[0])} → {_esc(c)} <span class="muted">changes of the '
            f'distance from the no-bias value (− closer to no bias)</span></h2><p class="counts">{counts}</p>'
            f'{_html_group_changes(changes, c)}'
            f'<h3>Changes per attribute and topic</h3>{_html_grid(sm[sm["candidate"] == c])}'
            f'<h3>Materially worse{spill(ws)}</h3>{_html_changes(comp, worse)}'
            f'<h3>Materially better{spill(bs)}</h3>{_html_changes(comp, better)}{pair}</section>')
    for k, name in enumerate(info.models):
        for task, res in info.results[name].items():
            lab = info.labels.get(task, "")
            ov = render_overview(res, intervals=res.attrs.get("intervals"), scored=info.scored[name][task])
            parts.append(f'<section id="model-{k}-{_slug(task)}"><h2>{_esc(name)}{" (" + _esc(lab) + ")" if lab else ""}: '
                         f'its own verdicts on the paired examples</h2>{_suffix_ids(ov, f"{k}-{_slug(task)}")}</section>')
    st = info.settings
    meta = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in (
        ("models", ", ".join(f"{n} ({info.sources.get(n)})" for n in info.models)),
        ("left out (inner)", ", ".join(f"{n}: {d}" for n, d in info.dropped.items())),
        ("resamples", f"B = {st['bootstrap']}, seed {st['seed']}, {st['confidence']:.0%} intervals"),
        ("error control", st["multiplicity"]), ("thresholds", st.get("thresholds") or "defaults"),
        ("weighting", st.get("weighting")), ("max_tuples", st.get("max_tuples"))))
    created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    css = CSS + ".c-worsened{color:#b2182b;font-weight:700}.c-improved{color:#2166ac;font-weight:700}" \
        ".c-inconclusive{font-style:italic}.c-unchanged{color:var(--muted)}"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
            f"<title>{_esc(title)}</title><style>{css}</style></head><body><header><h1>{_esc(title)}</h1>"
            f'<div class="muted">{_esc(_title(comp))}</div></header><main>' + "".join(parts)
            + f'<section id="settings"><h2>Settings</h2><table class="meta">{meta}</table></section></main>'
            f"<footer>Written by bias_suite {_esc(__version__)} on {_esc(created)}.</footer></body></html>\n")


def _slug(x) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", str(x)).strip("-") or "x"


def write_comparison_report(comp, path):
    """Write :func:`render_comparison` to ``path`` atomically."""
    from ..io import atomic_write_text

    return atomic_write_text(path, render_comparison(comp))
