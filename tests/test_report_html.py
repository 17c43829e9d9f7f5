"""The self-contained HTML report: content, colour scaling, drill-down,
graceful degradation, atomic writing and the CLI."""
from __future__ import annotations

import re
import shutil

import numpy as np
import pandas as pd
import pytest
from _report_data import enrich, make_results
from typer.testing import CliRunner

from bias_suite.cli import app
from bias_suite.metrics.engine import results_frame
from bias_suite.report.html import (
    heatmap_tables,
    load_report_data,
    read_results_table,
    render_report,
    significance_table,
    template_drilldown,
    write_html_report,
)
from bias_suite.families import as_scored


# Runs suites to render their reports: left out of make test-fast (pytest -m 'not slow')
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    return make_results(tmp_path_factory.mktemp("report") / "res")


@pytest.fixture(scope="module")
def rich_dir(results_dir, tmp_path_factory):
    d = tmp_path_factory.mktemp("report_rich") / "res"
    shutil.copytree(results_dir, d)
    return enrich(d)


def _row(metric, family, attribute, cls, group, value, view="group", **kw):
    return {"metric": metric, "family": family, "view": view, "attribute": attribute, "class": cls, "group": group,
            "value": value, "ci_low": kw.get("ci_low"), "ci_high": kw.get("ci_high"), "n": kw.get("n", 10), "note": kw.get("note")}


def test_report_has_a_heatmap_per_attribute_and_the_tables(results_dir):
    path = write_html_report(results_dir)
    assert path == results_dir / "report.html"
    html = path.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    for attr in ("gender", "names"):
        assert f'<table class="heatmap" data-attribute="{attr}" data-kind="group">' in html
        assert f'<table class="heatmap" data-attribute="{attr}" data-kind="pair">' in html
        assert f'<section class="attribute" id="attr-{attr}" data-attribute="{attr}">' in html
    assert 'class="data significance"' in html and "Friedman" in html and "Wilcoxon" in html
    assert "Kendall&#x27;s W" in html and "rank-biserial" in html and "(holm)" in html
    assert 'class="data drilldown"' in html  # per-template drill-down from scored.*
    assert "<svg" in html and 'class="chart"' in html  # per-group charts
    # metadata from run.json
    meta = load_report_data(results_dir).metadata
    assert meta["seed"] == 0
    assert "sentiment_gender" in html and "mini_names" in html and "seed" in html and "transformers" in html
    # groups in the identity-file order, accumulated column last
    head = re.search(r'data-attribute="gender" data-kind="group">.*?<thead>(.*?)</thead>', html, re.S).group(1)
    assert re.findall(r"<th[^>]*>([^<]*)</th>", head) == ["metric", "class", "female", "male", "non_binary", "accumulated"]


def test_report_fetches_nothing(results_dir):
    html = write_html_report(results_dir).read_text(encoding="utf-8")
    assert not re.search(r'(src|href)\s*=\s*["\']?(https?:)?//', html, re.I)
    assert "@import" not in html and "url(" not in html
    assert "<link" not in html and "<iframe" not in html
    assert "default-src 'none'" in html  # CSP: the browser refuses any fetch


def _judged(row, baseline, threshold, verdict, reason="r"):
    v = row["value"]
    row.update(baseline=baseline, threshold=threshold, verdict=verdict, reason=reason,
               effect=None if v is None else abs(v - baseline) / threshold)
    return row


def _judged_frame(rows):
    from bias_suite.report.html import with_extra_columns

    return with_extra_columns(results_frame(rows), pd.DataFrame(rows))


def test_heatmap_colour_is_the_distance_from_the_no_bias_value_in_tau():
    """Colour means size: (value - b) / tau on the binned diverging scale,
    the same in every row; AUCs of 0.995 and 0.996 around b = 0.995 stay
    white while a gap of 8 tau is full blue."""
    from bias_suite.report import theme

    res = _judged_frame([
        _judged(_row("FNED", "BCM", "g", "pos", "a", 0.1), 0.0, 0.05, "material"),
        _judged(_row("FNED", "BCM", "g", "pos", "b", -0.4), 0.0, 0.05, "material"),
        _judged(_row("FNED", "BCM", "g", "pos", None, 0.01), 0.0, 0.05, "negligible"),
        _judged(_row("SubgroupAUC", "VBCM", "g", "pos", "a", 0.995), 0.995, 0.02, "negligible"),
        _judged(_row("SubgroupAUC", "VBCM", "g", "pos", "b", 0.996), 0.995, 0.02, "negligible"),
        _row("BPSN", "VBCM", "g", "pos", "a", 0.8),
        _row("BPSN", "VBCM", "g", "pos", "b", None, note="undefined: no negatives"),
        _row("CFGap", "PCM", "g", "pos", "a|b", 0.2, view="counterfactual"),
    ])
    hms = {h.kind: h for h in heatmap_tables(res, "g", ["pos"])}
    g = hms["group"]
    assert g.columns == ["a", "b"]
    assert [r[0] for r in g.rows] == ["FNED", "SubgroupAUC", "BPSN"]
    np.testing.assert_allclose(g.distance[0], [2.0, -8.0])
    np.testing.assert_allclose(g.distance[1], [0.0, 0.05], atol=1e-9)
    assert np.isnan(g.distance[2]).all()  # not judged: no colour
    np.testing.assert_allclose(g.accumulated_distance[0], 0.2)
    html = render_report(load_report_data_from_frame(res))
    cells = re.findall(r'<td class="cell"( style="[^"]*")? title="[^"]*">([^<]*)', html)
    style = {v: st for st, v in cells}
    assert theme.DIVERGING_COLOURS[7] in style["0.100"]  # +2 tau: the 2-4 bin above b
    assert theme.DIVERGING_COLOURS[0] in style["−0.400"]  # -8 tau: full blue
    assert theme.DIVERGING_COLOURS[4] in style["0.995"] and theme.DIVERGING_COLOURS[4] in style["0.996"]
    assert style["0.800"] == ""  # no threshold: uncoloured
    # verdict marks in the cells, tooltips with b, tau and the meaning of the metric
    assert re.search(r'>0\.100<span class="mark m-material"', html)
    assert "no-bias value b = 0.0000, threshold τ = 0.0500" in html


def test_first_screen_is_the_overview_and_the_findings():
    rows = [_judged(_row("FNED", "BCM", "gender", "neg", "female", 0.3), 0.0, 0.05, "material", "FNR higher for 'female'"),
            _judged(_row("FNED", "BCM", "gender", "neg", "male", 0.01), 0.0, 0.05, "negligible"),
            _judged(_row("CFGap", "PCM", "religion", "pos", "a|b", 0.08, view="counterfactual"), 0.0, 0.05, "inconclusive"),
            _row("FNED", "BCM", "gender", "neg", None, 0.2)]
    html = render_report(load_report_data_from_frame(_judged_frame(rows)))
    main = html.split("<main>", 1)[1]
    # the overview comes first, before any attribute section
    assert main.index('id="overview"') < main.index('id="findings"') < main.index('class="attribute"')
    assert 'id="legend"' in main and main.index('id="legend"') < main.index('id="overview-grid"')
    assert "1 material · 1 inconclusive · 1 negligible" in re.sub(r"<[^>]+>", "", main.split('class="counts">', 1)[1].split("</p>")[0])
    findings = main.split('class="findings"', 1)[1].split("</table>")[0]
    assert findings.index("gender: female · neg") < findings.index("religion: a vs b · pos")  # by effect
    assert "FNR higher for &#x27;female&#x27;" in findings and "negligible" not in findings
    assert "bias detected" not in html


def load_report_data_from_frame(res):
    from bias_suite.report.html import ReportData

    return ReportData(results=res)


def test_template_drilldown_subtracts_the_template_mean():
    rows = []
    probs = {("t1", "a"): 0.9, ("t1", "b"): 0.5, ("t2", "a"): 0.4, ("t2", "b"): 0.6}
    for (t, g), p in probs.items():
        for k in range(2):
            rows.append({"id": f"{t}{g}{k}", "template": t, "attribute": "x", "group": g, "term": f"{g}{k}",
                         "text": f"{t} {g}{k}", "label": "pos", "probs": {"pos": p, "neg": 1 - p}})
    dd = template_drilldown(as_scored(pd.DataFrame(rows)), "x", top=5)
    a = dd["a"].set_index("template")
    assert a.loc["t1", "dev_pos"] == pytest.approx(0.2) and a.loc["t2", "dev_pos"] == pytest.approx(-0.1)
    assert list(dd["a"]["template"]) == ["t1", "t2"]  # largest |deviation| first
    assert dd["b"].set_index("template").loc["t1", "dev_neg"] == pytest.approx(0.2)


def test_significance_table_pairs_adjusted_p_and_effect_sizes(results_dir):
    sig = significance_table(read_results_table(results_dir))
    assert set(sig["test"]) == {"Friedman", "Wilcoxon"}
    w = sig[sig["test"] == "Wilcoxon"].iloc[0]
    assert w["adjustment"] == "holm" and w["p_adj"] >= w["p"] and -1 <= w["effect"] <= 1
    assert sig["n"].notna().all()


def test_verdicts_bernstein_invariance_and_failures(rich_dir):
    data = load_report_data(rich_dir)
    assert data.has_verdicts and data.failures is not None
    html = write_html_report(rich_dir).read_text(encoding="utf-8")
    assert 'class="data verdicts"' in html and "v-material" in html and "higher for" in html
    assert 'class="data bernstein"' in html and "DemographicParity" in html and "n needed" in html
    assert "Invariance (INV) tests" in html and "INV-FailureRate" in html and 'class="data failures"' in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert(1)" not in html  # escaped
    assert '<span class="mark m-material" aria-label="material">●</span>' in html  # material cells are marked


def test_report_degrades_without_side_files(results_dir, tmp_path):
    shutil.copy(results_dir / "results.jsonl", tmp_path / "results.jsonl")
    html = write_html_report(tmp_path, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "No run.json" in html and "drilldown" not in html
    assert html.count('class="heatmap"') == 4
    # a broken scored file is reported, not fatal
    (tmp_path / "scored.jsonl").write_text("{not json\n")
    html = write_html_report(tmp_path, tmp_path / "r.html").read_text(encoding="utf-8")
    assert "could not be read" in html


def test_csv_results_and_extra_columns(results_dir, tmp_path):
    res = read_results_table(results_dir)
    res.to_csv(tmp_path / "results.csv", index=False)
    back = read_results_table(tmp_path)
    assert len(back) == len(res) and back["group"].isna().sum() == res["group"].isna().sum()


def test_report_is_written_atomically(results_dir, tmp_path, monkeypatch):
    import bias_suite.report.html as h

    out = tmp_path / "report.html"
    out.write_text("old")

    def boom(*a, **k):
        raise RuntimeError("render failed")

    monkeypatch.setattr(h, "render_report", boom)
    with pytest.raises(RuntimeError):
        h.write_html_report(results_dir, out)
    assert out.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_cli_report_and_run_report(results_dir, tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["report", str(results_dir), "--out", str(tmp_path / "x.html")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "x.html").read_text(encoding="utf-8").count('data-kind="group"') == 2
    r = runner.invoke(app, ["report", str(tmp_path / "nothing")])
    assert r.exit_code == 2 and "no results file" in r.output
    model = results_dir.parent / f"{results_dir.name}_model"
    suite = results_dir.parent / f"{results_dir.name}_suites" / "mini_names.yaml"
    r = runner.invoke(app, ["run", str(suite), "--model", str(model), "--out", str(tmp_path / "run"), "-q", "--report"])
    assert r.exit_code == 0, r.output
    assert 'data-attribute="names"' in (tmp_path / "run" / "report.html").read_text(encoding="utf-8")


def test_heatmap_colour_says_worse_or_better_for_the_group():
    """FNR-Ratio: higher is worse; SubgroupAUC: lower is worse. The same
    side of b gets opposite colours: red where the group is worse off."""
    from bias_suite.metrics.catalog import get_metric
    from bias_suite.report import theme

    assert get_metric("FNR-Ratio").materiality.worse == "higher" and get_metric("SubgroupAUC").materiality.worse == "lower"
    red, blue = theme.DIVERGING_COLOURS[-1], theme.DIVERGING_COLOURS[0]
    res = _judged_frame([
        _judged(_row("FNR-Ratio", "VBCM", "g", "pos", "a", 2.5), 1.0, 0.25, "material"),   # +6 tau: worse
        _judged(_row("FNR-Ratio", "VBCM", "g", "pos", "b", 0.6), 1.0, 0.25, "material"),   # log 0.6 / log 1.25 = -2.3: better
        _judged(_row("SubgroupAUC", "VBCM", "g", "pos", "a", 0.99), 0.90, 0.02, "material"),  # +4.5 tau: better
        _judged(_row("SubgroupAUC", "VBCM", "g", "pos", "b", 0.80), 0.90, 0.02, "material"),  # -5 tau: worse
    ])
    html = render_report(load_report_data_from_frame(res))
    cells = re.findall(r'<tr data-class="pos" data-metric="([^"]+)".*?</tr>', html, re.S)
    assert cells == ["FNR-Ratio", "SubgroupAUC"]
    style = {}
    for m in ("FNR-Ratio", "SubgroupAUC"):
        row_html = re.search(rf'<tr data-class="pos" data-metric="{m}".*?</tr>', html, re.S).group(0)
        for st, v in re.findall(r'<td class="cell"( style="[^"]*")? title="[^"]*">([^<]*)', row_html):
            style[(m, v)] = st
    assert red in style[("FNR-Ratio", "2.500")] and blue in style[("SubgroupAUC", "0.990")]
    assert theme.DIVERGING_COLOURS[1] in style[("FNR-Ratio", "0.600")]  # 2-4 on the log scale (not 1.6 linear)
    assert red in style[("SubgroupAUC", "0.800")]  # below b: worse, though blue used to mean below
    assert "higher is worse" in html and "lower is worse" in html  # under each metric's name
    # the findings of the first screen: the value coloured by side, too
    findings = html.split('class="findings"', 1)[1].split("</table>")[0]
    vals = dict((v, st) for st, v in re.findall(r'<td class="num"( style="[^"]*")?>([0-9.]+)<', findings))
    assert red in vals["2.500"] and red in vals["0.800"] and blue in vals["0.990"]


def test_first_screen_shows_each_findings_metric_in_words_and_its_pair():
    rows = [_judged(_row("FNR-Ratio", "VBCM", "x", "pos", "b", 1.6, ci_low=1.3, ci_high=1.9), 1.0, 0.25, "material"),
            _judged(_row("FNED", "BCM", "x", "pos", "a", 0.3, ci_low=0.2, ci_high=0.4), 0.0, 0.05, "small")]
    probs = {("t1", "a"): 0.9, ("t1", "b"): 0.6, ("t1", "c"): 0.2, ("t2", "a"): 0.6, ("t2", "b"): 0.1, ("t2", "c"): 0.55}
    scored = as_scored(pd.DataFrame([{"id": f"{t}{g}", "template": t, "attribute": "x", "group": g, "term": g,
                                      "text": f"{t}: the {g} person", "label": "pos", "probs": {"pos": p, "neg": 1 - p}}
                                     for (t, g), p in probs.items()]))
    from bias_suite.report.html import ReportData

    html = render_report(ReportData(results=_judged_frame(rows), scored=scored))
    findings = html.split('class="findings"', 1)[1].split("</table>")[0]
    text = re.sub(r"<[^>]+>", " ", findings)  # what is on screen, not in tooltips
    assert "FNR(group) ÷ FNR(rest)" in text and "above 1 = the group gets more false negatives" in text
    assert "sum over groups of |FNR(group) − FNR(all)|" in text
    # each finding's pair: the largest gap that involves its group (b: 0.5 in t2; a: 0.7 in t1)
    assert "gap 0.500, template t2" in text and "t2: the b person" in text
    assert "gap 0.700, template t1" in text and "t1: the c person" in text
    assert text.index("gap 0.500") < text.index("gap 0.700")  # material before small


def test_first_screen_lists_no_spill_over_as_its_groups_finding_and_merges_partners():
    rows = [dict(_judged(_row("FNED", "BCM", "disability", "neg", "deaf", 0.4, ci_low=0.3, ci_high=0.5), 0.0, 0.05,
                         "material", "background shifted by 'mental_illness'"), source="mental_illness"),
            dict(_judged(_row("FNED", "BCM", "disability", "neg", "mental_illness", 0.3, ci_low=0.2, ci_high=0.4), 0.0,
                         0.05, "material"), source=None)]
    rows += [dict(_judged(_row("TPR-Gap", "PCM", "religion", "pos", f"jewish|{o}", 0.2, ci_low=0.1, ci_high=0.3), 0.0,
                          0.05, "material"), source=None) for o in ("christian", "muslim", "hindu")]
    html = render_report(load_report_data_from_frame(_judged_frame(rows)))
    findings = html.split('class="findings"', 1)[1].split("</table>")[0]
    text = re.sub(r"<[^>]+>", " ", findings)
    assert "disability: mental_illness" in text and "deaf" not in text
    assert "1 spill-over (" in html and text.count("religion:") == 1 and "religion: jewish vs 3 groups · pos" in text


def test_a_merged_lines_pair_involves_its_shared_group():
    from bias_suite.report.findings import select_findings
    from bias_suite.report.pairs import finding_pair

    rows = [dict(_judged(_row("TPR-Gap", "PCM", "x", "pos", f"b|{o}", 0.2, ci_low=0.1, ci_high=0.3), 0.0, 0.05,
                         "material")) for o in ("a", "c")]
    probs = {("t1", "a"): 0.9, ("t1", "b"): 0.6, ("t1", "c"): 0.2, ("t2", "a"): 0.6, ("t2", "b"): 0.1, ("t2", "c"): 0.55}
    scored = as_scored(pd.DataFrame([{"id": f"{t}{g}", "template": t, "attribute": "x", "group": g, "term": g,
                                      "text": f"{t}: the {g} person", "label": "pos", "probs": {"pos": p, "neg": 1 - p}}
                                     for (t, g), p in probs.items()]))
    line = select_findings(_judged_frame(rows)).rows.to_dict("records")
    assert len(line) == 1 and line[0]["own_group"] == "b" and sorted(line[0]["partners"]) == ["a", "c"]
    wp = finding_pair(line[0], scored)
    assert "b" in [g for g, _, _ in wp["rows"]] and wp["gap"] == pytest.approx(0.5)  # b vs a in t2, not a vs c (0.7)
