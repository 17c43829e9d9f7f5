"""Tables of the HTML report: significance, verdicts, Bernstein rows,
invariance failures, the per-template drill-down, accumulated values,
metrics without values and the run metadata."""
from __future__ import annotations

import json

import pandas as pd

from ..io.values import is_null
from .data import ReportData
from . import theme
from .htmlfmt import verdict_badge, cell_style, fmt_count, effect_style, esc, fmt, fmt_p, metric_title, verdict_kind

def _table(headers, rows, cls="data", attrs="") -> str:
    head = "".join(f'<th scope="col">{h}</th>' for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<div class="scroll"><table class="{cls}"{attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def render_significance(sig: pd.DataFrame) -> str:
    if sig.empty:
        return '<p class="muted">No significance tests in these results.</p>'
    rows = []
    for r in sig.to_dict("records"):
        rows.append([
            esc(r["attribute"]), esc(r["class"]), esc(r["test"]), fmt(r["statistic"]), fmt_p(r["p"]),
            fmt_p(r["p_adj"]) + (f' <span class="muted">({esc(r["adjustment"])})</span>' if r.get("adjustment") else ""),
            f'{fmt(r["effect"])} <span class="muted">{esc(r["effect_name"])}</span>',
            "" if is_null(r["n"]) else str(r["n"]),
            verdict_badge(r.get("verdict")) or esc(r.get("note") or ""),
        ])
    return _table(["attribute", "class", "test", "statistic", "p", "adjusted p", "effect size", "templates", "verdict / note"], rows, "data significance")


def render_verdicts(res: pd.DataFrame, *, limit: int = 40) -> str:
    """The judged rows of one attribute that are not negligible, material
    first, then small, then inconclusive, largest effect first within each,
    with the reason (a spill-over row names its source); the rest only
    counted."""
    if "verdict" not in res.columns:
        return ""
    v = res[res["verdict"].map(verdict_kind).notna()]
    if v.empty:
        return ""
    kinds = v["verdict"].map(verdict_kind)
    counts = kinds.value_counts()
    summary = " · ".join(f"{counts.get(k, 0)} {k}" for k in (*theme.VERDICTS, "other") if counts.get(k, 0))
    from .summary import findings as ranked

    show = ranked(v[kinds.isin(["material", "inconclusive", "small"])])
    rows = []
    for r in show.head(limit).to_dict("records"):
        src = r.get("source")
        via = f" (via {src})" if isinstance(src, str) and src.strip() else ""
        ci = "" if is_null(r["ci_low"]) and is_null(r["ci_high"]) else f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]"
        e = r.get("effect")
        rows.append([f'<span class="fx"{effect_style(e)}>{fmt(e, 1)}</span>', verdict_badge(r["verdict"]),
                     f'<span title="{esc(metric_title(r["metric"]))}">{esc(r["metric"])}</span>', esc(r["class"]),
                     esc((str(r["group"]).replace("|", " vs ") if not is_null(r["group"]) else "accumulated") + via),
                     fmt(r["value"]), ci, fmt(r.get("threshold")), esc(r.get("reason") or "")])
    more = f'<p class="muted">The {limit} largest of {len(show)}; all rows are in results.csv.</p>' if len(show) > limit else ""
    table = _table(["×τ", "verdict", "metric", "class", "group", "value", "interval", "τ", "reason"], rows, "data verdicts") if rows else ""
    return f'<p>{esc(summary)}</p>' + table + more


def render_bernstein(b: pd.DataFrame) -> str:
    if b.empty:
        return ""
    rows = []
    for r in b.to_dict("records"):
        rows.append([
            esc(str(r["metric"]).removeprefix("Bernstein-")), esc(r["class"]), esc(r["group"]), fmt(r["value"]),
            f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]", "" if is_null(r["n"]) else str(r["n"]),
            fmt_count(r.get("sample_size")), verdict_badge(r.get("verdict")) or esc(r.get("note") or ""),
        ])
    return _table(["preset", "class", "group", "δ̄ (group − rest)", "Bernstein interval", "n", "n needed", "verdict / note"], rows, "data bernstein")


def _fmt_sentence_probs(p) -> str:
    if isinstance(p, dict):
        return ", ".join(f"{esc(k)} {fmt(v)}" for k, v in p.items())
    if isinstance(p, (list, tuple)):
        return ", ".join(fmt(x) for x in p)
    return fmt(p)


def render_failures(fail: pd.DataFrame, attribute: str | None, *, limit: int = 50) -> str:
    """INV failures: per failing case the sentences (group, prediction and
    class probabilities of each) and the largest change, largest first."""
    if fail is None or fail.empty:
        return ""
    f = fail
    if attribute is not None and "attribute" in f.columns:
        f = f[f["attribute"] == attribute]
    if f.empty:
        return ""
    if "change" in f.columns:
        f = f.sort_values("change", ascending=False, kind="stable", key=lambda s: pd.to_numeric(s, errors="coerce"))
    sent_col = next((c for c in ("sentences", "pairs_text", "texts", "text") if c in f.columns), None)
    if sent_col is None and "pairs" in f.columns and f["pairs"].map(lambda v: isinstance(v, (list, tuple)) and v and isinstance(v[0], (list, tuple))).any():
        sent_col = "pairs"  # pairs of sentences
    prob_col = next((c for c in ("probabilities", "probs", "probas") if c in f.columns), None)
    inline = {"template", "attribute", sent_col, prob_col, "groups", "preds", "terms", "id"}
    extra = [c for c in f.columns if c not in inline]
    rows = []
    for r in f.head(limit).to_dict("records"):
        sents = r.get(sent_col) if sent_col else None
        probs = r.get(prob_col) if prob_col else None
        groups = r.get("groups") if isinstance(r.get("groups"), (list, tuple)) else None
        preds = r.get("preds") if isinstance(r.get("preds"), (list, tuple)) else None
        if isinstance(sents, (list, tuple)) and sents and isinstance(sents[0], (list, tuple)):
            sents = [s for pair in sents for s in pair]  # a list of pairs -> one list
        if isinstance(sents, str):
            sents = [sents]
        lines = []
        for k, s in enumerate(sents or []):
            p = probs[k] if isinstance(probs, (list, tuple)) and k < len(probs) else None
            tag = f'<span class="tag">{esc(groups[k])}</span> ' if groups and k < len(groups) else ""
            pred = f"→ <b>{esc(preds[k])}</b> " if preds and k < len(preds) else ""
            pr = _fmt_sentence_probs(p) if p is not None else ""
            lines.append(f'<div class="sent"><span>{tag}{esc(s)}</span><span class="probs">{pred}{pr}</span></div>')
        if not sents and probs is not None:
            lines.append(f'<div class="probs">{_fmt_sentence_probs(probs)}</div>')
        rows.append([esc(r.get("template", "")), "".join(lines)] + [esc(_short(r.get(c))) for c in extra])
    more = f'<p class="muted">Showing the {limit} largest of {len(f)} failures.</p>' if len(f) > limit else ""
    return _table(["template", "sentences, predictions and probabilities"] + [esc(c) for c in extra], rows, "data failures") + more


def _short(v, n: int = 160) -> str:
    if isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v):
        s = ", ".join(v)
    elif isinstance(v, (list, dict, tuple)):
        s = json.dumps(v, default=str)
    elif is_null(v):
        return ""
    elif isinstance(v, float):
        return fmt(v)
    else:
        s = str(v)
    return s if len(s) <= n else s[: n - 1] + "…"


def render_drilldown(dd: dict, classes) -> str:
    if not dd:
        return ""
    blocks = []
    for g, t in dd.items():
        rows = []
        for r in t.to_dict("records"):
            devs = []
            for c in classes:
                d = r.get(f"dev_{c}")
                s = 0 if is_null(d) or r["max_abs"] == 0 else d / r["max_abs"]
                devs.append(f'<span class="dev"{cell_style(3 * s)}>{fmt(d)}</span>')
            rows.append([esc(r["template"]), esc(r["label"] if not is_null(r["label"]) else ""), esc(r["text"]), str(r["n"]), " ".join(devs)])
        head = f"Δ mean p ({' / '.join(esc(c) for c in classes)})"
        blocks.append(f'<details class="dd" open><summary><b>{esc(g)}</b>: top {len(t)} templates</summary>'
                      + _table(["template", "gold", "example (this group)", "n", head], rows, "data drilldown") + "</details>")
    return "".join(blocks)


def _value_cells(r: dict) -> list:
    """Value, interval, n and verdict (or note) of a result row."""
    return [fmt(r["value"]), "" if is_null(r["ci_low"]) else f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]",
            "" if is_null(r["n"]) else str(r["n"]), verdict_badge(r.get("verdict")) or esc(r.get("note") or "")]


def render_accumulated(acc: pd.DataFrame) -> str:
    if acc.empty:
        return ""
    rows = [[esc(r["metric"]), esc(r["view"]), esc(r["class"]), *_value_cells(r)] for r in acc.to_dict("records")]
    return _table(["metric", "view", "class", "value", "interval", "n", "verdict / note"], rows, "data accumulated")


def render_rows(df: pd.DataFrame) -> str:
    """Result rows as a plain table (metric, class, group, value, interval, n, verdict/note)."""
    if df.empty:
        return ""
    rows = [[esc(r["metric"]), esc(r["class"]), esc(r["group"] or "accumulated"), *_value_cells(r)]
            for r in df.to_dict("records")]
    return _table(["metric", "class", "group", "value", "interval", "n", "verdict / note"], rows, "data rows")


def render_missing(miss: pd.DataFrame) -> str:
    if miss.empty:
        return ""
    items = "".join(f"<li><b>{esc(r['metric'])}</b> ({esc(r['class'])}): {esc(r['note'] or 'no value')}</li>" for r in miss.to_dict("records"))
    return f'<details class="missing"><summary>{len(miss)} metric/class combinations without values</summary><ul>{items}</ul></details>'


def render_metadata(meta: dict, data: ReportData) -> str:
    if not meta:
        return '<p class="muted">No run.json in the results folder: model, suites and seed unknown.</p>'
    rows = []
    suites = meta.get("suites")
    pretty = {
        "model": meta.get("model"),
        "suites": ", ".join(f"{s.get('name')} ({s.get('path')})" if isinstance(s, dict) else str(s) for s in suites) if isinstance(suites, list) else suites,
        "seed": meta.get("seed"),
        "max_tuples": meta.get("max_tuples"),
        "classes": ", ".join(map(str, meta.get("classes") or [])) or None,
        "examples": meta.get("examples"),
        "bias_suite": meta.get("bias_suite"),
        "python": meta.get("python"),
        "created": meta.get("created"),
    }
    fp = meta.get("model_fingerprint")
    if isinstance(fp, dict):
        sha = fp.get("weights_sha256")
        pretty["model fingerprint"] = ", ".join(f"{k}={v}" for k, v in fp.items()
                                                if v is not None and k != "weights_sha256" and not isinstance(v, (list, dict)))
        if sha:
            pretty["weights sha256"] = sha
    files = meta.get("files")
    if isinstance(files, dict) and files:  # the run's own files (run.json lists them)
        pretty["files"] = ", ".join(sorted(files))
    versions = meta.get("versions")
    if isinstance(versions, dict):
        pretty["versions"] = ", ".join(f"{k} {v}" for k, v in versions.items() if v)
    for k, v in meta.items():
        if k not in pretty and k not in ("model_fingerprint", "versions", "files") and v is not None:
            pretty[k] = v if not isinstance(v, (dict, list)) else json.dumps(v, default=str)
    for k, v in pretty.items():
        if v is None or v == "":
            continue
        rows.append(f'<tr><th scope="row">{esc(k)}</th><td>{esc(v)}</td></tr>')
    return f'<table class="meta"><tbody>{"".join(rows)}</tbody></table>'


def slug(s) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in str(s)).strip("-").lower() or "x"


def _pair_html(wp: dict | None) -> str:
    """A counterfactual pair as two short lines: probability, group, sentence."""
    if not wp:
        return '<span class="muted">–</span>'
    lines = [f'<div class="sent"><span><span class="tag">{esc(g)}</span> {esc(t)}</span>'
             f'<span class="probs">p={fmt(p)}</span></div>' for g, t, p in wp["rows"]]
    return (f'<div class="probs">{esc(wp["class"])}: gap {fmt(abs(wp["gap"]))}, template {esc(wp["template"])}</div>'
            + "".join(lines))


def _metric_cell(r: dict) -> str:
    """The metric's name, its meaning in plain words and which side is worse."""
    from .data import metric_worse
    from .htmlfmt import metric_text

    name = r.get("shown_metric") if not is_null(r.get("shown_metric")) else r["metric"]
    meaning, direction = metric_text(r["metric"])
    side = direction or {"higher": "higher is worse", "lower": "lower is worse"}.get(metric_worse(r["metric"]), "")
    words = "; ".join(x for x in (meaning.rstrip(". "), side) if x)
    return (f'<span class="metric" title="{esc(metric_title(r["metric"]))}"><b>{esc(name)}</b></span>'
            + (f'<div class="meaning">{esc(words)}</div>' if words else ""))


def verdict_counts_html(results: pd.DataFrame) -> str:
    """The verdict counts as the report shows them (``<p class="counts">``)."""
    from .headline import headline_summary

    counts = headline_summary().verdict_counts(results)
    spans = " · ".join(f'<span class="v-{v}">{int(counts.get(v, 0))} {v}</span>' for v in theme.VERDICTS
                       if v == "material" or counts.get(v, 0))
    return f'<p class="counts">{spans}</p>'


def render_overview(results: pd.DataFrame, *, intervals: dict | None = None, top: int = 10, scored=None,
                    counts: bool = True) -> str:
    """The report's first screen: verdict counts, the colour legend, the
    attributes x topics grid (worst verdict, largest effect in tau) and the
    top findings, chosen and ranked as in the terminal
    (:func:`bias_suite.report.findings.select_findings`: every material cell
    has a line), each with its metric in plain words, its value coloured
    worse or better for the group and, from ``scored``, its example pair
    (the largest gap involving its groups)."""
    from .charts import scale_legend
    from .data import metric_worse
    from .findings import consistency_text, reach_text, select_findings, with_scope
    from .headline import has_verdicts, headline_summary, attribute_order, effect_text, error_control, overview, value_side, who
    from .htmlfmt import direction_cell_style
    from .pairs import finding_pair

    if results is None or results.empty or not has_verdicts(results):
        return ('<section id="overview"><p class="muted">These results carry no verdicts; run with a bootstrap '
                "(--bootstrap B) for intervals, verdicts and this overview.</p></section>")
    sm = headline_summary()
    count_html = verdict_counts_html(results) if counts else ""
    marks = " ".join(f'<span class="mark m-{v}">{esc(m)}</span> {v}' for v, m in theme.VERDICT_MARKS.items() if m)
    legend = (f'<div class="legend" id="legend"><div><b>Colour is size</b> in units of each metric\'s threshold τ, '
              f"from its no-bias value b: {scale_legend(signed=False)}</div>"
              f'<div><b>Values</b> (heatmaps, findings): {scale_legend(signed=True)}; each metric says which side is '
              f"worse (under its name) · marks {marks} · verdicts are words.</div></div>")
    ov = overview(results)
    topics = sm.ordered_topics(ov["topic"])
    head = "".join(f'<th scope="col">{esc(t)}</th>' for t in topics)
    body = []
    for a, row_cells in sm.grid_cells(ov, attribute_order(ov), topics):
        tds = []
        for t, r in row_cells:
            if r is None:
                tds.append('<td class="ov empty"></td>')
                continue
            where = " · ".join(esc(x) for x in (r.get("metric"), r.get("class"), r.get("group")) if not is_null(x))
            if not is_null(r.get("source")):
                where += f" (via {esc(r['source'])}: other groups in the background)"
            tds.append(f'<td class="ov"{effect_style(r.get("effect"))} title="largest: {where}">'
                       f'<span class="v-{esc(r["verdict"])}">{esc(r["verdict"])}</span> '
                       f'<span class="fx">{esc(effect_text(r.get("effect")))}</span></td>')
        body.append(f'<tr><th scope="row"><a href="#attr-{slug(a)}">{esc(a)}</a></th>{"".join(tds)}</tr>')
    grid = (f'<div class="scroll"><table class="overview" id="overview-grid"><thead><tr><th scope="col">attribute</th>{head}'
            f'</tr></thead><tbody>{"".join(body)}</tbody></table></div>')
    sel = select_findings(results, ov, top=top)
    shown = sel.rows if scored is None or sel.rows.empty else with_scope(sel.rows, scored)
    agree = "consistency" in shown.columns and shown["consistency"].notna().any()
    reach = [reach_text(r) for r in shown.to_dict("records")]
    with_reach = any(reach)
    with_pairs = scored is not None
    rows = []
    for k, r in enumerate(shown.to_dict("records"), 1):
        ci = "" if is_null(r.get("ci_low")) or is_null(r.get("ci_high")) else f" [{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]"
        partners = r.get("partners")
        title = f' title="vs {esc(", ".join(map(str, partners)))}"' if isinstance(partners, (list, tuple)) else ""
        side = direction_cell_style(value_side(r), metric_worse(r["metric"])) if value_side(r) is not None else ""
        cells_ = [f'<td class="num">{k}</td><td class="fx"{effect_style(r.get("effect"))}>{esc(effect_text(r.get("effect")))}</td>',
                  f'<td>{verdict_badge(r.get("verdict"))}</td>', f"<td>{_metric_cell(r)}</td>", f"<td{title}>{esc(who(r))}</td>",
                  f'<td class="num"{side}>{fmt(r.get("value"))}{ci}</td><td class="num">{fmt(r.get("threshold"))}</td>']
        if agree:
            cells_.append(f'<td class="num">{esc(consistency_text(r.get("consistency")).removeprefix("in "))}</td>')
        if with_reach:
            cells_.append(f'<td>{esc(reach[k - 1])}</td>')
        cells_.append(f'<td class="reason">{esc(r.get("reason") or "")}</td>')
        if with_pairs:
            cells_.append(f'<td class="pair">{_pair_html(finding_pair(r, scored))}</td>')
        rows.append("<tr>" + "".join(cells_) + "</tr>")
    heads = ["#", "×τ", "verdict", "metric", "who", "value [interval]", "τ"] + (["templates agreeing"] if agree else []) \
        + (["reach (listed terms)"] if with_reach else []) + ["reason"] + (["example pair (largest gap for its groups)"] if with_pairs else [])
    spill = (f"; {sel.spill} spill-over{'s' if sel.spill != 1 else ''} (effects caused by other groups in the "
             "background) not listed as findings about their own group" if sel.spill else "")
    findings = (f'<h2 id="findings">Top findings <span class="muted">material, then small, then inconclusive, largest '
                f"effect first; the best per group and topic and for every material cell; {sel.judged} results are not "
                f"negligible{esc(spill)}</span></h2>"
                + (f'<div class="scroll"><table class="findings"><thead><tr>{"".join(f"<th>{h}</th>" for h in heads)}'
                   f'</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
                   if rows else '<p>No finding above negligible: every judged value is within its threshold, or undefined.</p>'))
    iv = error_control(results, intervals)
    control = ""
    if iv:
        bits = [str(iv.get("method") or "")]
        if iv.get("confidence") is not None:
            bits.append(f"{float(iv['confidence']):.0%} intervals")
        if iv.get("bootstrap"):
            bits.append(f"B = {iv['bootstrap']} template resamples")
        control = f'<p class="muted" id="error-control">Error control across cells: {esc(", ".join(b for b in bits if b))}.</p>'
    return (f'<section id="overview"><h2 class="first">Overview <span class="muted">worst verdict and largest effect (×τ) '
            f'per attribute and topic</span></h2>{count_html}{legend}{grid}{findings}{control}</section>')
