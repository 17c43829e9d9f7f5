"""What a finished run or evaluation prints: the prediction counts, then the
one-screen headline (:mod:`bias_suite.report.headline`) with the run's
title and where its files are.

``bias-suite run`` and ``bias-suite evaluate`` print through here, and so do
``bias_suite.Results.print()`` and ``bias_suite.RunResult.print()``: a run
started from Python prints what the command line prints for the same run.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import pandas as pd

from .headline import MAX_LINES

__all__ = ["print_run", "print_results", "headline_html", "run_title", "run_files", "shown", "prediction_line"]


def shown(folder) -> Path:
    """A folder as the user would type it: relative to the working folder when inside it."""
    p = Path(folder)
    try:
        return p.resolve().relative_to(Path.cwd().resolve())
    except ValueError:
        return p


def prediction_line(model: str, stats: dict) -> str:
    """'predictions (MODEL): 120 inputs, 60 distinct, ...' from a run's
    ``predictions`` metadata."""
    from ..predict.runner import PredictionStats

    fields = {k: v for k, v in stats.items() if k in PredictionStats.__dataclass_fields__}
    return f"predictions ({model}): {PredictionStats(**fields).summary()}"


def _label(part) -> str:
    from ..families import family_of

    return family_of(part.scored).label


def run_title(parts: Sequence) -> str:
    """'MODEL: N examples, M result rows' per part of a run, joined by ' · '."""
    out = []
    for p in parts:
        lab = _label(p)
        out.append(f"{p.model}: {len(p.examples)} {lab + ' ' if lab else ''}examples, {len(p.results)} result rows")
    return " · ".join(out)


def run_files(parts: Sequence, out=None) -> list:
    """Where the full tables of a run are: each part's ``results.csv`` and
    its HTML report when one was written (else the command that writes it);
    ``out``: the run's folder when the parts do not say."""
    files, reports = [], False
    for p in parts:
        folder = p.folder or out
        if folder is None:
            continue
        d = shown(folder)
        files.append(f"{d}/results.csv")
        if (Path(folder) / "report.html").exists():
            files.append(str(d / "report.html"))
            reports = True
    first = parts[0].folder if parts else None
    first = first if first is not None else out
    if not reports and first is not None:
        files.append(f"bias-suite report {shown(first)}")
    return files


def print_group_trail(results, *, console) -> None:
    """``--detail``: per group with a claim about it, the rows counted towards its status and the rows set
    apart, each with why (:func:`bias_suite.stats.groups.by_group` with ``trail``)."""
    from rich.markup import escape

    from ..stats.groups import by_group

    if results is None or "verdict" not in results.columns:
        return
    bg, trail = by_group(results, trail=True)
    busy = set(map(tuple, trail.loc[trail["role"] != "no claim", ["attribute", "group"]].to_numpy()))
    shown = bg[[(a, g) in busy for a, g in zip(bg["attribute"], bg["group"])]]
    if shown.empty:
        return
    console.print("[bold]Why each group has its status[/] (rows counted towards it; rows set apart, and why)")
    for r in shown.itertuples(index=False):
        t = trail[(trail["attribute"] == r.attribute) & (trail["group"] == r.group)]
        counted = t[t["role"] == "counted"]
        apart = t[t["role"].isin(("spill-over", "bystander pair", "another group's effect"))]
        console.print(escape(f"  {r.attribute} · {r.group}: {r.status} ({len(counted)} counted, {len(apart)} set "
                             "apart)"), highlight=False)
        for e in list(counted.itertuples(index=False))[:6]:
            vs = f" vs {e.other}" if e.other else ""
            console.print(escape(f"    counted   {e.metric} · {e.cls}{vs} ({e.verdict})"), highlight=False)
        for why, sub in apart.groupby("why", sort=False):
            names = ", ".join(f"{e.metric} · {e.cls}" + (f" vs {e.other}" if e.other else "")
                              for e in list(sub.itertuples(index=False))[:3])
            more = f" and {len(sub) - 3} more" if len(sub) > 3 else ""
            console.print(escape(f"    set apart {names}{more}: {why}"), highlight=False)
    console.print("")


def print_results(parts: Sequence[tuple], *, title: str, files: Sequence[str], intervals=None, console=None,
                  quiet: bool = False, detail: bool = False, used: int = 0, attributes=None,
                  lines: int = MAX_LINES) -> None:
    """The one-screen headline of ``parts`` [(results, scored, label)]; the
    per-group tables first with ``detail``; one line with ``quiet``;
    ``used``: lines already printed above it, out of ``lines``."""
    from rich.markup import escape

    from .headline import HeadlineInput, combine_results, print_headline
    from .terminal import make_console

    console = console if console is not None else make_console()
    if quiet:
        console.print(escape(title) + " → " + escape(", ".join(files)), highlight=False, soft_wrap=True)
        return
    if detail:
        from .terminal import print_summary

        for results, scored, _ in parts:
            print_summary(results, scored, console=console, attributes=attributes)
            print_group_trail(results, console=console)
    combined = combine_results([(label, results) for results, _, label in parts])
    inp = HeadlineInput(combined, scored=[(label, s) for _, s, label in parts], intervals=intervals, files=files,
                        detail_hint=not detail, title=title)
    print_headline(inp, console=console, max_lines=lines - used)


def print_run(result, *, console=None, out=None, quiet: bool = False, detail: bool = False,
              lines: int = MAX_LINES) -> None:
    """What ``bias-suite run`` prints when the run is done: a line of
    prediction counts per part, then the headline of all parts (a
    :class:`~bias_suite.pipeline.RunResult`; ``out``: its folder when the
    parts were not written)."""
    from rich.text import Text

    from .terminal import make_console

    console = console if console is not None else make_console()
    parts = result.parts()
    used = 0
    for part in parts:
        st = (part.metadata or {}).get("predictions")
        if st:
            line = Text(prediction_line(part.model, st))
            console.print(line, highlight=False)
            used += len(console.render_lines(line, pad=False))  # long paths wrap
    comparison = getattr(result, "comparison", None)  # run(..., baseline=...): its lines after the headline
    room = max(12, lines * 2 // 5) if comparison is not None and not quiet else 0
    print_results([(p.results, p.scored, _label(p)) for p in parts], title=run_title(parts),
                  files=run_files(parts, out), intervals=(result.metadata or {}).get("intervals"), console=console,
                  quiet=quiet, detail=detail, used=used, lines=lines - room)
    if comparison is not None:
        from .compare import print_comparison

        folder = parts[0].folder or out
        files = [f"{shown(Path(folder))}/comparison.jsonl"] if folder is not None else []
        if quiet:
            console.print(" · ".join(f"{n} {w}" for w, n in comparison.counts().items())
                          + (" → " + files[0] if files else ""), highlight=False, soft_wrap=True)
        else:
            console.print("")
            print_comparison(comparison, console=console, max_lines=room - 1, files=files)


def headline_html(results, *, title: str | None = None, top: int = 10) -> str:
    """The headline for a notebook: the verdict counts, the overview grid
    (worst verdict and largest effect, ×τ, per attribute and topic, shaded
    by effect) and the top findings with their reasons; the same selection
    as the terminal's. Results without verdicts give a line saying so."""
    from . import theme
    from .data import isnull
    from .findings import Prepared, select_findings, who
    from .headline import attribute_order, effect_text, findings_title, num, overview
    from .htmlfmt import esc
    from .summary import verdict_counts

    out = ['<div class="bias-suite-results">']
    if title:
        out.append(f"<p><b>{esc(title)}</b></p>")
    if "verdict" not in results.columns or not results["verdict"].isin(theme.VERDICTS).any():
        out.append(f"<p>{len(results)} result rows, no verdicts (verdicts need intervals: bootstrap &gt; 0).</p></div>")
        return "".join(out)
    counts = verdict_counts(results)
    out.append("<p>" + " · ".join(f"{counts[v]} {v}" for v in theme.VERDICTS if v == "material" or counts[v]) + "</p>")
    ov = overview(results)
    topics = [str(t) for t in pd.unique(ov["topic"])]
    cells = {(r["attribute"], str(r["topic"])): r for r in ov.to_dict("records")}
    out.append('<table><thead><tr><th style="text-align:left">attribute</th>'
               + "".join(f'<th style="text-align:left">{esc(t)}</th>' for t in topics) + "</tr></thead><tbody>")
    for a in attribute_order(ov):
        row = [f'<td style="text-align:left">{esc(a)}</td>']
        for t in topics:
            r = cells.get((a, t))
            if r is None:
                row.append("<td></td>")
                continue
            colour = theme.effect_colour(r.get("effect"))
            style = f"text-align:left;background:{colour};color:{theme.ink_on(colour)}" if colour else "text-align:left"
            eff = "" if isnull(r.get("effect")) else f" {effect_text(r['effect'])}×"
            row.append(f'<td style="{style}">{esc(r.get("verdict"))}{esc(eff)}</td>')
        out.append("<tr>" + "".join(row) + "</tr>")
    out.append("</tbody></table>")
    sel = select_findings(results, ov, top=top, attributes=attribute_order(ov), prepared=Prepared(results))
    if sel.rows.empty:
        out.append("<p>No finding above negligible.</p>")
    else:
        out.append(f"<p><b>{esc(findings_title(sel))}</b></p>")
        heads = ("", "effect ×τ", "verdict", "metric", "who", "value [interval]", "τ", "reason")
        out.append("<table><thead><tr>" + "".join(f'<th style="text-align:left">{h}</th>' for h in heads)
                   + "</tr></thead><tbody>")
        for k, r in enumerate(sel.rows.to_dict("records"), 1):
            metric = r.get("shown_metric") if not isnull(r.get("shown_metric")) else r.get("metric")
            value = num(r.get("value"))
            if not isnull(r.get("ci_low")) and not isnull(r.get("ci_high")):
                value += f" [{num(r['ci_low'])}, {num(r['ci_high'])}]"
            tau = "" if isnull(r.get("threshold")) else f"{float(r['threshold']):g}"
            reason = "" if isnull(r.get("reason")) else str(r["reason"])
            cells_ = (k, effect_text(r.get("effect")), r.get("verdict"), metric, who(r), value, tau, reason)
            out.append("<tr>" + "".join(f'<td style="text-align:left">{esc(c)}</td>' for c in cells_) + "</tr>")
        out.append("</tbody></table>")
    out.append(f"<p><small>{len(results)} result rows × {len(results.columns)} columns: "
               "<code>.findings()</code>, <code>.summary()</code>, <code>pd.DataFrame(results)</code> for the "
               "table</small></p></div>")
    return "".join(out)
