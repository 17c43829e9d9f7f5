"""Self-contained HTML report of a results folder.

``write_html_report(results_dir, out)`` reads what a run wrote
(``results.jsonl``, ``run.json``, ``scored.parquet``/``scored.jsonl`` and,
when present, ``failures.jsonl``) and writes one HTML file with inline CSS,
JavaScript and SVG: it fetches nothing when opened.

The first screen is the overview the terminal prints (see
:mod:`bias_suite.report.headline`): verdict counts, the colour legend, the
attributes x topics grid (worst verdict, largest effect in units of tau) and
the top findings. Then, per attribute:

- heatmaps of the per-group and per-pair values (rows: metric and class).
  Each cell holds the raw value; its colour is the distance from the
  metric's no-bias value b in units of its threshold tau,
  ``(value - b) / tau``, on a binned diverging scale: red on the side that
  is worse for the group (each metric knows it: higher or lower is worse,
  written under its name), blue on the better side, full colour at a few
  tau; the verdict is marked after the value, so the same colour means the
  same size and side in every row. Metric names carry their meaning and
  direction as tooltips;
- point-and-interval charts of the per-group metrics;
- the significance tests, the Bernstein rows, the findings of the attribute
  (ranked by verdict and effect, with reasons), invariance failures and metrics without
  values;
- a per-template drill-down: which templates drive each group's gap.

Modules: :mod:`~bias_suite.report.data` (reading and shaping),
:mod:`~bias_suite.report.charts` (heatmaps, SVG charts),
:mod:`~bias_suite.report.sections` (tables, overview),
:mod:`~bias_suite.report.theme` (colours). The names below are re-exported
here for existing callers.
"""
from __future__ import annotations

import datetime as _dt
from pathlib import Path

from ..io.values import is_null
from .charts import render_group_chart, render_heatmap, scale_legend
from .data import (
    accumulated_only, as_results, bernstein_table, class_rank, FAILURES_NAMES, group_metric_rows,
    Heatmap, heatmap_tables, is_pair, load_report_data, missing_values, order_unique,
    read_results_table, ReportData, significance_table, template_drilldown, with_extra_columns,
)
from ..io.results import atomic_write_text
from .groups import render_groups
from .htmlfmt import esc, fmt, fmt_p, verdict_kind
from .sections import (
    slug,
    render_accumulated,
    render_bernstein,
    render_drilldown,
    render_failures,
    render_metadata,
    render_missing,
    render_overview,
    verdict_counts_html,
    render_rows,
    render_significance,
    render_verdicts,
)
from .theme import CLASS_COLOURS, PAGE_COLOURS

__all__ = [
    "REPORT_NAME", "FAILURES_NAMES", "CLASS_COLOURS", "Heatmap", "ReportData", "accumulated_only", "as_results",
    "bernstein_table", "group_metric_rows", "heatmap_tables", "load_report_data", "missing_values", "read_results_table",
    "significance_table", "template_drilldown", "with_extra_columns", "render_report", "write_html_report", "esc", "fmt",
    "fmt_p", "verdict_kind", "render_group_chart", "render_heatmap", "scale_legend", "class_rank", "is_pair",
    "is_null", "order_unique",
]

REPORT_NAME = "report.html"


CSS = ":root{" + ";".join(f"--{k}:{v}" for k, v in PAGE_COLOURS.items()) + "}" + """
*{box-sizing:border-box}
body{font:14px/1.45 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;color:var(--ink);background:var(--bg);margin:0}
header{padding:18px 28px;border-bottom:1px solid var(--line);background:var(--soft)}
header h1{margin:0 0 4px;font-size:22px}
main{padding:8px 28px 40px;max-width:1400px}
h2{font-size:19px;margin:28px 0 8px;padding-top:8px;border-top:2px solid var(--ink)}
h3{font-size:15px;margin:20px 0 6px}
nav a{margin-right:12px;color:var(--accent)}
.muted{color:var(--muted)}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:6px 0 12px;font-variant-numeric:tabular-nums}
caption{caption-side:bottom;text-align:left;color:var(--muted);font-size:12px;padding-top:4px;max-width:900px}
th,td{padding:3px 8px;border:1px solid var(--line);text-align:left;vertical-align:top}
thead th{background:var(--soft);font-weight:600;white-space:nowrap}
table.heatmap td.cell,table.heatmap td.acc{text-align:right;min-width:66px;white-space:nowrap}
table.heatmap td.spill{background:repeating-linear-gradient(135deg,#fff 0 4px,#e6e8eb 4px 8px)!important;color:var(--muted)!important;font-style:italic}
table.heatmap td.acc{background:var(--bg);font-weight:600;border-left:3px double var(--ink)}
table.heatmap thead th.acc{border-left:3px double var(--ink)}
table.heatmap tr.first th,table.heatmap tr.first td{border-top:2px solid var(--rule)}
table.heatmap th.metric{white-space:nowrap;font-weight:600;background:var(--bg)}
table.heatmap th.rep{color:var(--faint);font-weight:400}
.filtered table.heatmap th.rep{color:inherit;font-weight:600}
table.heatmap th .side{font-size:11px;color:var(--muted);font-weight:400}
table.heatmap td.cls{color:var(--muted);white-space:nowrap}
.tag{font-size:10px;background:var(--tag-bg);border:1px solid var(--tag-line);border-radius:3px;padding:0 3px;color:var(--tag-ink);font-weight:400}
table.data td{font-size:13px}
table.meta th{background:var(--soft);white-space:nowrap}
.verdict{display:inline-block;border-radius:3px;padding:0 6px;font-size:12px;white-space:nowrap;border:1px solid var(--line);background:var(--bg);color:var(--ink)}
.v-material{font-weight:700}.verdict.v-material{border:1.5px solid var(--ink)}
.v-inconclusive{font-style:italic}.verdict.v-inconclusive{border-style:dashed}
.v-negligible,.v-undefined,.v-other{color:var(--muted)}.v-undefined{font-style:italic}
.mark{font-size:11px;margin-left:3px}.m-material{font-weight:700}
.legend{font-size:12px;margin:4px 0 8px;display:flex;flex-direction:column;gap:3px}
.scale{white-space:nowrap}.sw{display:inline-block;padding:0 5px;margin-right:1px;font-size:11px;border:1px solid var(--line);font-variant-numeric:tabular-nums}
table.overview td.ov{white-space:nowrap;text-align:left;min-width:92px}table.overview td.ov .fx{float:right;margin-left:8px;font-variant-numeric:tabular-nums}
table.overview th a{color:var(--ink)}table.overview td.ov span{color:inherit}
table.findings td{font-size:13px}table.findings td.num,table.findings td.fx{text-align:right;white-space:nowrap}
table.findings td.reason{color:var(--muted);max-width:460px}
table.findings .meaning{color:var(--muted);font-size:12px;max-width:300px;white-space:normal}
table.findings td.pair{font-size:12px;min-width:260px;max-width:520px}
span.fx{display:inline-block;min-width:32px;text-align:right;padding:0 4px}
p.counts{margin:4px 0}
h2.first{border-top:none;margin-top:6px}
.sent{margin:1px 0;display:flex;justify-content:space-between;gap:12px}.sent .probs{white-space:nowrap}
.probs{color:var(--muted);font-size:12px;font-variant-numeric:tabular-nums}
.dev{display:inline-block;min-width:54px;text-align:right;padding:0 4px;border-radius:3px}
svg.chart{max-width:100%;height:auto;margin:4px 18px 8px 0;border:1px solid var(--line);background:var(--bg)}
svg .ct{font-weight:600;font-size:13px}svg .lg,svg .tk{font-size:11px;fill:var(--axis)}svg .gl{font-size:12px;fill:var(--legend)}
svg .grid{stroke:var(--grid)}svg .ref{stroke:var(--ref);stroke-dasharray:3 3}svg .stripe{fill:var(--stripe)}
.charts{display:flex;flex-wrap:wrap}
.controls{margin:6px 0}
.warn{background:var(--warn-bg);border:1px solid var(--warn-line);padding:6px 10px;border-radius:4px}
details summary{cursor:pointer;margin:4px 0}
footer{color:var(--muted);font-size:12px;padding:16px 28px;border-top:1px solid var(--line)}
@media print{nav,.controls{display:none}h2{break-before:page}}
"""

JS = """
(function(){
  'use strict';
  function filter(section, cls){
    var rows = section.querySelectorAll('table.heatmap tbody tr');
    for (var i = 0; i < rows.length; i++){
      var show = cls === '' || rows[i].getAttribute('data-class') === cls;
      rows[i].style.display = show ? '' : 'none';
    }
  }
  var selects = document.querySelectorAll('select.class-filter');
  for (var i = 0; i < selects.length; i++){
    selects[i].addEventListener('change', function(ev){
      var sec = ev.target.closest('section');
      if (sec) { filter(sec, ev.target.value); sec.classList.toggle('filtered', ev.target.value !== ''); }
    });
  }
  document.documentElement.setAttribute('data-report-ready', '1');
})();
"""


def render_report(data: ReportData, *, title: str | None = None, top_templates: int = 5) -> str:
    """The report as one HTML string."""
    from .. import __version__

    res = data.results
    classes = data.classes
    attrs = data.attributes
    meta = data.metadata
    model = meta.get("model") or meta.get("scored") or "results"
    title = title or f"bias_suite report — {model}"
    sections = []
    for a in attrs:
        ra = res[res["attribute"] == a]
        sid = f"attr-{slug(a)}"
        parts = [f'<section class="attribute" id="{sid}" data-attribute="{esc(a)}"><h2>{esc(a)}</h2>']
        groups = order_unique(ra.loc[ra["group"].notna() & ~ra["group"].map(is_pair), "group"])
        if data.scored is not None:
            fr = data.scored.frame
            groups = groups or order_unique(fr.loc[fr["attribute"] == a, "group"])
        if groups:
            parts.append(f'<p class="muted">groups: {", ".join(esc(g) for g in groups)}</p>')
        cls_here = sorted(order_unique(ra["class"]), key=class_rank(classes))
        hms = heatmap_tables(res, a, classes)
        if len(cls_here) > 1 and hms:
            opts = "".join(f'<option value="{esc(c)}">{esc(c)}</option>' for c in cls_here)
            parts.append(f'<div class="controls"><label>show class <select class="class-filter"><option value="">all</option>{opts}</select></label></div>')
        for hm in hms:
            parts.append(f"<h3>{'Per-group metrics' if hm.kind == 'group' else 'Pairwise metrics'}</h3>")
            parts.append(render_heatmap(hm))
        if not hms:
            parts.append('<p class="muted">No per-group or per-pair values for this attribute.</p>')
        acc = accumulated_only(res, a)
        if not acc.empty:
            parts.append("<h3>Metrics with one value per class</h3>" + render_accumulated(acc))
        gm = group_metric_rows(res, a)
        if gm:
            charts = "".join(render_group_chart(m, sub, classes, groups) for m, sub in gm.items())
            parts.append(f'<h3>Per-group values with intervals</h3><div class="charts">{charts}</div>')
        sig = significance_table(res, a)
        parts.append("<h3>Significance across templates</h3>" + render_significance(sig))
        bern = bernstein_table(res, a)
        if not bern.empty:
            parts.append("<h3>Bernstein-bounded disparity</h3>" + render_bernstein(bern))
        vhtml = render_verdicts(ra)
        if vhtml:
            parts.append("<h3>Findings: values that are not negligible, material, then small, then inconclusive, largest effect first</h3>" + vhtml)
        inv = ra[ra["family"] == "invariance"]
        fhtml = render_failures(data.failures, a)
        if not inv.empty or fhtml:
            parts.append("<h3>Invariance (INV) tests</h3>")
            if not inv.empty:
                parts.append(render_rows(inv))
            if fhtml and data.failures_source:
                parts.append(f'<p class="muted">Failing cases ({esc(data.failures_source)}):</p>')
            parts.append(fhtml or '<p class="muted">No INV failure cases recorded for this attribute.</p>')
        dd = template_drilldown(data.scored, a, top=top_templates)
        if dd:
            parts.append(
                "<h3>Which templates drive each group's gap</h3>"
                '<p class="muted">Per template: the group\'s mean probability of each class minus the template\'s mean over '
                f"groups; the {top_templates} templates with the largest absolute deviation per group.</p>" + render_drilldown(dd, classes)
            )
        parts.append(render_missing(missing_values(res, a)))
        parts.append("</section>")
        sections.append("".join(parts))
    # failures not tied to a known attribute
    if data.failures is not None and not data.failures.empty:
        rest = data.failures
        if "attribute" in rest.columns:
            rest = rest[~rest["attribute"].isin(attrs)]
        if not rest.empty:
            sections.append('<section id="inv-other"><h2>Invariance failures (other)</h2>' + render_failures(rest, None) + "</section>")
    nav = "".join(f'<a href="#attr-{slug(a)}">{esc(a)}</a>' for a in attrs)
    groups = render_groups(res, counts=verdict_counts_html(res))  # the answer and the verdict counts lead
    overview = render_overview(res, intervals=(meta or {}).get("intervals"), scored=data.scored, counts=not groups)
    warn = "".join(f'<p class="warn">{esc(w)}</p>' for w in data.warnings)
    created = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"<header><h1>{esc(title)}</h1>"
        f'<div class="muted">{len(res)} result rows · {len(attrs)} attribute{"s" if len(attrs) != 1 else ""} · classes {esc(", ".join(map(str, classes)))}</div>'
        f"<nav><a href=\"#groups\">groups</a><a href=\"#overview\">overview</a><a href=\"#findings\">findings</a>{nav}<a href=\"#run\">run</a></nav></header><main>{warn}"
        + groups
        + overview
        + "".join(sections)
        + f'<section id="run"><h2>Run</h2>{render_metadata(meta, data)}</section>'
        + f"</main><footer>Written by bias_suite {esc(__version__)} on {esc(created)} from {esc(data.source or '')}.</footer>"
        + f"<script>{JS}</script></body></html>\n"
    )


def write_html_report(results_dir, out=None, *, title: str | None = None, top_templates: int = 5) -> Path:
    """Write the self-contained HTML report of a results folder (atomically).

    Parameters
    ----------
    results_dir : a folder with ``results.jsonl`` (and optionally ``run.json``,
        ``scored.parquet``/``scored.jsonl``, ``failures.jsonl``), or the
        results file itself.
    out : the HTML file (default ``results_dir/report.html``).

    Returns
    -------
    Path of the written file.
    """
    data = load_report_data(results_dir)
    out = Path(out) if out is not None else data.source / REPORT_NAME
    return atomic_write_text(out, render_report(data, title=title, top_templates=top_templates))
