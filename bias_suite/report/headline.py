"""The headline: one screen that says who is affected, in which direction
and by how much.

:func:`headline_renderables` turns a tidy results frame (any task: the
renderer reads only the result columns of docs/formats.md and the verdict
columns ``verdict``, ``threshold``, ``baseline``, ``effect`` and ``reason``,
and ``source`` and ``consistency`` where present, which may be null)
into rich renderables, in this order:

1. an overview grid, attributes x metric topics: the worst verdict of each
   cell and the largest effect of its rows with that verdict, in units of
   tau (``|value - b| / tau``);
2. the top findings (metric, who, value and interval, tau, the share of
   templates that agree when the results carry ``consistency``, effect,
   verdict) with the reason sentence under each, ranked material, then
   small, then inconclusive, and by effect within each; every material cell
   of the grid shown has a line; duplicates and mirrors are one line and
   spill-overs (rows with a ``source``) are no finding about their own group
   (:mod:`bias_suite.report.findings`);
3. a legend: what each metric of the findings means and what higher means,
   and how colour and marks read;
4. for runs with scored examples: the counterfactual sentence pair with the
   largest probability gap in the attribute of the top finding, for its
   class, with its probabilities (none when every gap is round-off:
   :mod:`bias_suite.report.pairs`);
5. the metrics that could not be computed on this data, by what they need
   ("not computed (needs tag probabilities): AvgGF, CFGap, ..."), the
   counts per verdict, how the error rate across cells is controlled, and
   where the full tables are.

:func:`print_headline` fits it to ``max_lines`` (60 by default) at the
console's width by showing fewer findings and attributes, so the headline is
one screen for any input. The effect's colour is size; a finding's value is
red when it lies on the side that is worse for its group and blue on the
better side (:mod:`bias_suite.report.theme`); with no terminal (a pipe, a
file) rich writes no escape codes.
"""
from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field
from typing import Sequence

import pandas as pd

from ..io.values import is_null, UNBOUNDED, UNBOUNDED_NOTE
from . import theme
from .data import metric_worse, signed_distance
from .findings import JUDGED, Prepared, consistency_text, reach_text, select_findings, who, with_scope
from .htmlfmt import metric_text as _metric_text
from .pairs import example_pair, example_pair_block, worst_pair

__all__ = ["HeadlineInput", "headline_renderables", "print_headline", "combine_results", "worst_pair", "example_pair",
           "MAX_LINES", "JUDGED", "who"]

MAX_LINES = 60


@dataclass
class HeadlineInput:
    """What the headline is made of.

    results : tidy results frame (several tasks may be concatenated with
        :func:`combine_results`).
    scored : scored examples (classification ``ScoredData`` or sequence
        ``SequenceData``), a list of them or of (label, scored) pairs with
        the labels given to :func:`combine_results`, or None; used for the
        worst counterfactual pair.
    intervals : how the error rate across cells is controlled (run metadata
        ``"intervals"``: confidence, method, bootstrap), or None.
    files : where the full tables are, e.g. ["results/results.csv", "results/report.html"].
    detail_hint : say that ``--detail`` prints the full tables.
    title : first line (model, examples).
    """

    results: pd.DataFrame
    scored: object = None
    intervals: dict | None = None
    files: Sequence[str] = field(default_factory=list)
    detail_hint: bool = True
    title: str | None = None


# ----------------------------------------------------------------- data
def headline_summary():
    from . import summary

    return summary


_OVERVIEW_NAMES = {"worst": "verdict", "worst_verdict": "verdict", "max_effect": "effect", "effect_max": "effect"}


def overview(results: pd.DataFrame) -> pd.DataFrame:
    """:func:`bias_suite.report.summary.overview` with the column names the
    renderers read: attribute, topic, verdict (the worst), effect (the
    largest, in tau), metric, class, group."""
    ov = headline_summary().overview(results)
    return ov.rename(columns={k: v for k, v in _OVERVIEW_NAMES.items() if k in ov.columns and v not in ov.columns})


def combine_results(parts: Sequence[tuple]) -> pd.DataFrame:
    """Concatenate (label, results) parts of one run. When there are several
    parts, attributes are suffixed with their label ("nationality (NER)")
    wherever a label is given, so that tasks stay apart in the grid."""
    frames = []
    several = len([p for p in parts if p[1] is not None]) > 1
    for label, res in parts:
        if res is None or len(res) == 0:
            continue
        r = res.copy()
        if several and label:
            r["attribute"] = r["attribute"].map(lambda a: a if a is None or (isinstance(a, float) and math.isnan(a)) else f"{a} ({label})")
        frames.append(r)
    if not frames:
        return parts[0][1] if parts else pd.DataFrame()
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def has_verdicts(res: pd.DataFrame) -> bool:
    return "verdict" in res.columns and res["verdict"].isin(theme.VERDICTS).any()


# ----------------------------------------------------------------- formatting
def num(v, digits: int = 3) -> str:
    """A value for the terminal: 3 decimals below 10, fewer above; '–' when missing."""
    if is_null(v):
        return "–"
    x = float(v)
    if not math.isfinite(x) or abs(x) >= UNBOUNDED:
        return "unbounded"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    s = f"{x:.{digits}f}"
    return s[1:] if s.startswith("-") and float(s) == 0 else s


def effect_text(e) -> str:
    """An effect in units of tau: '2.4', '12', '>99'; '–' when missing."""
    if is_null(e):
        return "–"
    x = float(e)
    if not math.isfinite(x) or x >= 99.5:
        return ">99"
    return f"{x:.1f}" if x < 9.95 else f"{x:.0f}"


def _interval(r) -> str:
    lo, hi = r.get("ci_low"), r.get("ci_high")
    if not is_null(lo) and is_null(hi) and r.get("note") == UNBOUNDED_NOTE:
        return f"[{num(lo)}, unbounded]"
    if is_null(lo) or is_null(hi):
        return ""
    return f"[{num(lo)}, {num(hi)}]"


# ----------------------------------------------------------------- blocks
def _title(text: str):
    from rich.text import Text

    return Text(text, style="bold")


def attribute_order(ov: pd.DataFrame) -> list:
    """The attributes of an overview, worst verdict first, then largest effect."""
    order = (ov.assign(_s=ov["verdict"].map(theme.severity), _e=-pd.to_numeric(ov["effect"], errors="coerce").fillna(-1))
             .groupby("attribute", sort=False)[["_s", "_e"]].min().sort_values(["_s", "_e"], kind="stable"))
    return list(order.index)


def error_control(results: pd.DataFrame, intervals: dict | None) -> dict | None:
    """How the error rate across cells is controlled: the run's ``intervals``
    metadata, else what the results tell (None when they cannot)."""
    sm = headline_summary()
    if intervals is None and hasattr(sm, "multiplicity"):
        try:
            return sm.multiplicity(results)
        except Exception:  # a printout must not die on metadata
            return None
    return intervals


#: Column heads of the compact overview (narrow terminals): short enough that
#: eight columns fit in 80 without folding a word over two lines.
COMPACT_TOPICS = {"counterfactual": "counterf", "Bernstein": "Bernst", "significance": "signif"}


def overview_table(ov: pd.DataFrame, *, compact: bool, max_rows: int | None = None):
    """The attributes x topics grid of :func:`bias_suite.report.summary.overview`."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    topics = headline_summary().ordered_topics(ov["topic"])
    attrs = attribute_order(ov)
    hidden = 0
    if max_rows is not None and len(attrs) > max_rows:
        hidden = len(attrs) - max_rows
        attrs = attrs[:max_rows]
    # one space between columns when compact (two otherwise): eight columns fit in 80
    t = Table(box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 0) if compact else (0, 1), show_edge=False,
              collapse_padding=True)
    t.add_column("attribute", overflow="ellipsis", no_wrap=True, max_width=22)
    for tp in topics:
        t.add_column(COMPACT_TOPICS.get(str(tp), str(tp)) if compact else str(tp), justify="left", no_wrap=compact)
    for a, row_cells in headline_summary().grid_cells(ov, attrs, topics):
        row = [Text(str(a))]
        for tp, r in row_cells:
            if r is None:
                row.append(Text(""))
                continue
            v = r.get("verdict")
            word = theme.VERDICT_SHORT.get(v, str(v)) if compact else str(v)
            cell = Text()
            cell.append(word, style=theme.VERDICT_STYLES.get(v, ""))
            if not is_null(r.get("effect")):
                cell.append(" ")
                cell.append(effect_text(r["effect"]), style=theme.effect_style(r["effect"]))
            row.append(cell)
        t.add_row(*row)
    if hidden:
        t.add_row(Text(f"… {hidden} more", style=theme.MUTED), *[""] * len(topics))
    return t


def value_side(r) -> float | None:
    """(value - b) / tau of a finding (ratios: log value / log 1.25), or None."""
    return signed_distance(r.get("metric"), r.get("value"), r.get("baseline"), r.get("threshold"))


def findings_table(fd: pd.DataFrame):
    """Top findings, two lines each: verdict, metric, who and effect; then
    value [interval] (red: worse for the group, blue: better), tau, the
    templates that agree, how far the claim reaches past its listed terms
    where that matters, and the reason (wrapped under the text)."""
    from rich.table import Table
    from rich.text import Text

    t = Table.grid(padding=(0, 1))
    t.add_column(justify="right")  # rank
    t.add_column(justify="right")  # effect
    t.add_column()  # the finding
    recs = fd.to_dict("records")
    name = lambda r: str(r.get("shown_metric") if not is_null(r.get("shown_metric")) else r["metric"])
    wm = min(16, max((len(name(r)) for r in recs), default=0))
    for k, r in enumerate(recs, 1):
        v = r.get("verdict")
        body = Text()
        body.append(f"{str(v):<12}", style=theme.VERDICT_STYLES.get(v, ""))
        body.append(" ")
        body.append(f"{name(r):<{wm}}", style="bold")
        body.append(" ")
        body.append(who(r))
        iv = _interval(r)
        tau = r.get("threshold")
        second = Text("\n")
        second.append(num(r.get("value")) + (f" {iv}" if iv else ""),
                      style=theme.direction_style(value_side(r), metric_worse(r["metric"])))
        if not is_null(tau):
            second.append(f"  τ = {float(tau):g}", style=theme.MUTED)
        agree = consistency_text(r.get("consistency"))
        if agree:
            second.append(f"  {agree}")
        reach = reach_text(r)
        if reach:
            second.append(f"  {reach}", style=theme.MUTED)
        reason = r.get("reason")
        if not is_null(reason) and str(reason).strip():
            second.append(f"  {reason}", style=theme.MUTED)
        body.append_text(second)
        t.add_row(Text(f"{k}"), Text(effect_text(r.get("effect")) + "×", style=theme.effect_style(r.get("effect"))), body)
    return t


def _scale_line():
    from rich.text import Text

    s = Text()
    s.append("colour = size, |value − b| / τ: ", style=theme.MUTED)
    for label, col in zip(theme.bin_labels(), theme.EFFECT_COLOURS):
        s.append(f" {label} ", style=f"{theme.ink_on(col)} on {col}")
        s.append(" ")
    s.append("\nvalues: ", style=theme.MUTED)
    s.append("worse for the group", style=f"bold {theme.WORSE_INK}")
    s.append(" · ", style=theme.MUTED)
    s.append("better", style=f"bold {theme.BETTER_INK}")
    return s


def legend_lines(metrics: Sequence[str], *, compact: bool, compact_used: Sequence[str] = ()) -> list:
    """One line per metric: meaning; direction. Plus the verdict key when compact."""
    from rich.text import Text

    out = []
    for m in metrics:
        meaning, direction = _metric_text(m)
        if not meaning and not direction:
            continue
        line = Text()
        line.append(str(m), style="bold")
        line.append(": " + meaning.rstrip(". ") + (f"; {direction}" if direction else ""))
        out.append(line)
    if compact:
        used = [v for v in theme.VERDICTS if v in set(compact_used or theme.VERDICTS)]
        out.append(Text("grid: " + " · ".join(f"{theme.VERDICT_SHORT[v]} {v}" for v in used), style=theme.MUTED))
    return out


# ----------------------------------------------------------------- footer
def not_computed(results: pd.DataFrame) -> list:
    """[(need, metrics)]: the metrics with no value anywhere in ``results``
    whose rows all say that they need something the data does not have (a
    note "needs ...": a tagger without tag probabilities gets "needs tag
    probabilities (tag_probs), ..."), grouped by the need ("needs tag
    probabilities"), in order of first appearance."""
    if results is None or results.empty or "note" not in results.columns:
        return []
    out: dict = {}
    for m, g in results.groupby("metric", sort=False):
        if g["value"].notna().any() or g["note"].isna().any():
            continue
        needs = {re.split(r" \(|;|,", str(n), maxsplit=1)[0].strip() for n in g["note"]}
        if len(needs) == 1 and next(iter(needs)).startswith("needs "):
            out.setdefault(needs.pop(), []).append(str(m))
    return list(out.items())


def _not_computed_lines(results: pd.DataFrame) -> list:
    """'not computed (needs tag probabilities): AvgGF, CFGap, ...' per need."""
    from rich.text import Text

    return [Text(f"not computed ({need}): {', '.join(ms)}", style=theme.WARN) for need, ms in not_computed(results)]


def _counts_line(counts: dict):
    """'12 material · 30 inconclusive · ... (decided: 12 of 42 defined values)'
    (zero counts left out, except material; decided: material, small or
    negligible)."""
    from rich.text import Text

    t = Text("")
    parts = [(f"{int(counts.get(v, 0))} {v}", theme.VERDICT_STYLES.get(v, "")) for v in theme.VERDICTS
             if v == "material" or counts.get(v, 0)]
    for k, (s, st) in enumerate(parts):
        if k:
            t.append(" · ")
        t.append(s, style=st)
    defined = sum(int(counts.get(v, 0)) for v in theme.VERDICTS if v != "undefined")
    if defined:  # decided: a verdict that is not inconclusive
        decided = defined - int(counts.get("inconclusive", 0))
        t.append(f" (decided: {decided} of {defined} defined values)", style="dim")
    return t


def _intervals_line(iv: dict | None):
    from rich.text import Text

    if not iv:
        return None
    conf = iv.get("confidence")
    method = iv.get("method")
    B = iv.get("bootstrap")
    s = "error control: "
    if method:
        s += str(method)
    bits = []
    if conf is not None:
        bits.append(f"{float(conf):.0%} intervals")
    if B:
        bits.append(f"B = {B} template resamples")
    if bits:
        s += (" (" + ", ".join(bits) + ")") if method else ", ".join(bits)
    return Text(s, style=theme.MUTED)


def _where_line(files, detail_hint: bool):
    from rich.text import Text

    bits = []
    if detail_hint:
        bits.append("--detail")
    bits += [str(f) for f in files]
    if not bits:
        return None
    return Text("full tables: " + " · ".join(bits), style=theme.MUTED)


# ----------------------------------------------------------------- assembly
def findings_title(sel) -> str:
    """The heading of the findings: the order and how many rows are judged."""
    spill = f", {sel.spill} spill-over{'s' if sel.spill != 1 else ''}" if sel.spill else ""
    return f"Top findings by verdict, then effect ({sel.judged} not negligible{spill})"


def _prepared(inp: HeadlineInput) -> tuple:
    """(overview, :class:`~bias_suite.report.findings.Prepared`) of the
    input's results, computed once per input (fitting renders it many times)."""
    cache = inp.__dict__.setdefault("_cache", {})
    if cache.get("results") is not inp.results:
        cache.clear()
        cache.update(results=inp.results, ov=overview(inp.results), prepared=Prepared(inp.results))
    return cache["ov"], cache["prepared"]


def _selection(inp: HeadlineInput, top: int, max_attributes: int | None, cover: bool):
    ov, prepared = _prepared(inp)
    attrs = attribute_order(ov)
    shown = attrs if max_attributes is None else attrs[:max_attributes]
    return select_findings(inp.results, ov, top=top, attributes=shown, cover=cover, prepared=prepared)


def _too_long(inp: HeadlineInput, top: int, max_attributes: int | None, max_lines: int, cover: bool = True,
              group_rows: int | None = None) -> bool:
    """Whether the headline surely exceeds ``max_lines``: two lines per
    finding, one per grid row and one per row of the per-group table,
    before rendering anything."""
    ov, _ = _prepared(inp)
    n_attr = len(attribute_order(ov)) if max_attributes is None else min(max_attributes, len(attribute_order(ov)))
    n_groups = 0
    if group_rows:
        from .groups import group_lines

        n_groups = len(group_lines(_by_group(inp), group_rows)) + 4
    return 2 * len(_selection(inp, top, max_attributes, cover).rows) + n_attr + 4 + n_groups > max_lines


def _by_group(inp: HeadlineInput):
    cache = inp.__dict__.setdefault("_cache", {})
    if cache.get("groups_of") is not inp.results:
        from .groups import by_group

        cache.update(groups_of=inp.results, groups=by_group(inp.results))
    return cache["groups"]


def groups_section(inp: HeadlineInput, max_rows: int | None, width: int | None = None) -> list:
    """The per-group answer (:mod:`bias_suite.report.groups`): a title, the
    table and one line on how to read it; nothing when no group is judged."""
    from rich.text import Text

    from .groups import GROUP_FINDING_WIDTH, group_rows_shown, groups_table

    bg = _by_group(inp)
    if bg.empty or max_rows == 0:
        return []
    out = [_title("How the model treats each group (worst off first; effect in units of τ, + = worse off)"),
           groups_table(bg, max_rows=max_rows, width=width)]
    if width is not None and width < GROUP_FINDING_WIDTH:  # the settle column does not fit: a line under the table
        shown = {(a, g) for a, g, *_ in group_rows_shown(bg, max_rows)}
        for r in bg.itertuples(index=False):
            if r.status == "undecided" and r.settle and (r.attribute, r.group) in shown:
                out.append(Text(f"  {r.group}: {r.settle}", style=theme.MUTED))
    out.append(Text("a group's own values only; values that other groups cause are counted apart (Results.by_group() "
                    "has its values by verdict)", style=theme.MUTED))
    return out


def headline_renderables(inp: HeadlineInput, *, top: int = 10, max_attributes: int | None = None,
                         compact: bool = False, legend: bool = True, worst: bool = True, colour: bool = True,
                         cover: bool = True, group_rows: int | None = 24, width: int | None = None,
                         overview: bool = True) -> list:
    """The headline as a list of rich renderables (see the module doc).

    ``top`` findings (more when the material cells of the grid shown need
    them and ``cover`` is set), at most ``max_attributes`` grid rows (worst
    first), ``compact`` verdict words in the grid, the metric ``legend`` and
    the ``worst`` counterfactual pair; ``colour``: add the colour-scale
    lines."""
    from rich.text import Text

    res = inp.results
    out: list = []
    blank = Text("")
    if inp.title:
        out.append(_title(inp.title))
    if res is None or len(res) == 0:
        return out + [Text("no results")]
    if not has_verdicts(res):
        why = ("verdicts need intervals: --bootstrap B > 0" if "effect" in res.columns
               else "they have no verdict, threshold and effect columns")
        out.append(Text(f"No verdicts to summarise in these results ({why}).", style=theme.WARN))
        where = _where_line(inp.files, inp.detail_hint)
        return out + ([where] if where is not None else [])
    sm = headline_summary()
    ov, prepared = _prepared(inp)
    section = groups_section(inp, group_rows, width)
    if section:
        out += [blank] + section
    if overview:  # (the last thing a tight --lines gives up before the per-group answer)
        out += [blank, _title("Overview: worst verdict and largest effect (×τ) per attribute and topic"),
                overview_table(ov, compact=compact, max_rows=max_attributes)]
    sel = _selection(inp, top, max_attributes, cover)
    shown = sel.rows if top else sel.rows.iloc[0:0]
    if not shown.empty and inp.scored is not None:
        shown = with_scope(shown, inp.scored)  # which spans a tagger's finding counts
    if not shown.empty:
        out += [blank, _title(findings_title(sel)), findings_table(shown)]
    elif sel.judged:
        out.append(Text(f"{sel.judged} findings are not negligible."))
    else:
        out.append(Text("No finding above negligible: every judged value is within its threshold, or undefined."))
    if legend:
        lines = legend_lines(list(pd.unique(shown["metric"])) if not shown.empty else [], compact=compact,
                             compact_used=list(pd.unique(ov["verdict"])))
        if colour:
            lines.append(_scale_line())
        out += [blank] + lines if lines else []
    if worst and inp.scored is not None and not shown.empty:
        wt = example_pair_block(shown, inp.scored)
        out += [blank] + wt if wt else []
    out += [blank, *_not_computed_lines(res), _counts_line(sm.verdict_counts(res))]
    for line in (_intervals_line(error_control(res, inp.intervals)), _where_line(inp.files, inp.detail_hint)):
        if line is not None:
            out.append(line)
    return out


def render_text(renderables: list, width: int) -> str:
    """Renderables as plain text at ``width`` columns (in a notebook too)."""
    from rich.console import Console

    buf = io.StringIO()
    c = Console(file=buf, width=width, color_system=None, force_terminal=False, force_jupyter=False,
                legacy_windows=False)  # in a notebook too: text into buf, not a display
    for r in renderables:
        c.print(r)
    return buf.getvalue()


def _lines(renderables: list, width: int) -> int:
    return render_text(renderables, width).count("\n")


def _grid_fits(inp: HeadlineInput, width: int) -> bool:
    """Whether the overview grid with full verdict words fits ``width``."""
    from rich.console import Console

    t = overview_table(_prepared(inp)[0], compact=False)
    return Console(file=io.StringIO(), width=10_000, color_system=None, force_jupyter=False).measure(t).maximum <= width


def fit_headline(inp: HeadlineInput, width: int, max_lines: int = MAX_LINES, *, colour: bool = True) -> list:
    """The richest headline that fits ``max_lines`` at ``width`` columns:
    fewer findings first, then fewer grid rows, then no legend, then no
    example pair."""
    if inp.results is None or len(inp.results) == 0 or not has_verdicts(inp.results):
        return headline_renderables(inp, colour=colour)
    compact = not _grid_fits(inp, width)
    # the per-group answer leads: it keeps its lines longest (fewer findings and grid rows go first)
    for group_rows in (24, 16, 10, 6):
        r = _fit(inp, width, max_lines, compact, colour, group_rows)
        if r is not None:
            return r
    # the last resort: one grid row, no legend; its material cells, then the example pair, while they fit
    # (the per-group answer is never dropped: the overview grid goes first, and at least 2 of its rows stay)
    tries = [(rows, top, cover, worst, True) for top in (1, 0) for rows in (6, 4, 3) for cover in (True, False)
             for worst in (True, False)] + [(rows, 0, False, False, False) for rows in (4, 3, 2)]
    for i, (rows, top, cover, worst, grid) in enumerate(tries):
        r = headline_renderables(inp, top=top, max_attributes=1, compact=True, legend=False, worst=worst,
                                 colour=colour, cover=cover, group_rows=rows, width=width, overview=grid)
        if _lines(r, width) <= max_lines or i == len(tries) - 1:
            return r


def _fit(inp: HeadlineInput, width: int, max_lines: int, compact: bool, colour: bool, group_rows: int) -> list | None:
    for top in (10, 8, 6, 5, 4, 3, 2, 1):
        if _too_long(inp, top, None, max_lines, group_rows=group_rows):
            continue
        r = headline_renderables(inp, top=top, compact=compact, colour=colour, group_rows=group_rows, width=width)
        if _lines(r, width) <= max_lines:
            return r
    n_attr = int(inp.results.loc[inp.results["verdict"].isin(theme.VERDICTS), "attribute"].nunique())
    cap = n_attr
    while cap > 1:
        cap = cap // 2
        for top in (5, 3, 1):
            if _too_long(inp, top, max(cap, 1), max_lines, group_rows=group_rows):
                continue
            r = headline_renderables(inp, top=top, max_attributes=max(cap, 1), compact=compact, colour=colour,
                                     group_rows=group_rows, width=width)
            if _lines(r, width) <= max_lines:
                return r
    return None


def print_headline(inp: HeadlineInput, *, console=None, max_lines: int = MAX_LINES) -> int:
    """Print the headline fitted to ``max_lines`` at the console's width;
    return the number of lines it took. On a terminal it is in colour; to a
    pipe or a file it is plain text without trailing spaces."""
    from rich.console import Console

    from .terminal import make_console

    if not isinstance(console, Console):
        console = make_console()
    rend = fit_headline(inp, console.width, max_lines, colour=console.is_terminal and console.color_system is not None)
    if console.is_terminal:
        for r in rend:
            console.print(r)
        return _lines(rend, console.width)
    text = "\n".join(line.rstrip() for line in render_text(rend, console.width).splitlines())
    console.file.write(text + "\n")
    console.file.flush()
    return text.count("\n") + 1
