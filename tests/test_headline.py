"""The one-screen headline of run/evaluate: at most 60 lines for any input,
at 80 columns and piped, colour only on terminals, escaped user text, the
ranking of findings and the worst counterfactual pair."""
from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from bias_suite.metrics.engine import results_frame
from bias_suite.report.headline import HeadlineInput, combine_results, print_headline, worst_pair
from bias_suite.report.html import with_extra_columns

ANSI = re.compile(r"\x1b\[")
VERDICTS = ("material", "inconclusive", "small", "negligible", "undefined")


def row(metric, attribute, cls, group, value, *, verdict, baseline=0.0, threshold=0.05, family="BCM", view="group",
        ci=None, reason=None):
    effect = None if value is None else abs(value - baseline) / threshold
    return {"metric": metric, "family": family, "view": view, "attribute": attribute, "class": cls, "group": group,
            "value": value, "ci_low": None if ci is None else ci[0], "ci_high": None if ci is None else ci[1], "n": 20,
            "note": None, "verdict": verdict, "threshold": threshold, "baseline": baseline, "effect": effect,
            "reason": reason or f"{metric} differs for {group!r}"}


def frame(rows) -> pd.DataFrame:
    return with_extra_columns(results_frame(rows), pd.DataFrame(rows))


def render(inp: HeadlineInput, width: int, *, tty: bool = False, max_lines: int = 60) -> tuple[str, int]:
    buf = io.StringIO()
    con = Console(file=buf, width=width, force_terminal=tty, color_system="truecolor" if tty else None)
    n = print_headline(inp, console=con, max_lines=max_lines)
    return buf.getvalue(), n


def big_frame(n_attr=12, n_groups=8, seed=0) -> pd.DataFrame:
    """Many attributes of 8 groups, three classes, several metrics and pairs."""
    rng = np.random.default_rng(seed)
    rows = []
    for a in range(n_attr):
        groups = [f"group_{a}_{g}" for g in range(n_groups)]
        for m, fam in (("FNED", "BCM"), ("FPED", "BCM"), ("AvgGF", "VBCM"), ("SubgroupAUC", "VBCM")):
            for c in ("negative", "neutral", "positive"):
                for g in groups:
                    v = float(rng.normal(0, 0.08))
                    rows.append(row(m, f"attribute_{a}", c, g, v, family=fam, ci=(v - 0.05, v + 0.05),
                                    verdict=VERDICTS[int(rng.integers(5))]))
        for i in range(n_groups - 1):
            v = float(abs(rng.normal(0, 0.1)))
            rows.append(row("CFGap", f"attribute_{a}", "positive", f"{groups[i]}|{groups[i + 1]}", v, family="PCM",
                            view="counterfactual", verdict=VERDICTS[int(rng.integers(4))]))
    return frame(rows)


@pytest.mark.parametrize("width", [80, 200])
def test_headline_fits_one_screen_for_a_large_input(width):
    res = big_frame()
    assert len(res) > 1000
    inp = HeadlineInput(res, files=["out/results.csv", "out/report.html"], title="model: 12 attributes")
    out, n = render(inp, width)
    lines = out.splitlines()
    assert len(lines) == n <= 60
    assert max(len(x.rstrip()) for x in lines) <= width
    assert not ANSI.search(out)  # piped: no escape codes, no trailing blanks
    assert all(x == x.rstrip() for x in lines)
    assert "Overview" in out and "Top findings" in out
    assert "full tables: --detail · out/results.csv · out/report.html" in out
    counts = res["verdict"].value_counts()
    assert f"{counts['material']} material" in out


def test_colour_only_on_a_terminal_and_sizes_are_coloured():
    res = frame([row("FNED", "gender", "negative", "female", 0.30, verdict="material", ci=(0.2, 0.4)),
                 row("FNED", "gender", "negative", "male", 0.01, verdict="negligible", ci=(0.0, 0.02))])
    out, _ = render(HeadlineInput(res), 80, tty=True)
    assert ANSI.search(out)
    # the effect of 6 tau sits on the darkest size colour (#b35806 = 179,88,6)
    assert "48;2;179;88;6" in out


def test_findings_are_ranked_by_effect_and_carry_value_interval_tau_and_reason():
    res = frame([
        row("FNED", "gender", "negative", "female", 0.12, verdict="small", ci=(0.06, 0.2), reason="FNR higher for 'female'"),
        row("FPED", "gender", "positive", "male", -0.31, verdict="material", ci=(-0.4, -0.2), reason="FPR lower for 'male'"),
        row("CFGap", "religion", "positive", "a|b", 0.08, verdict="inconclusive", family="PCM", view="counterfactual", ci=(0.0, 0.3)),
        row("FNED", "gender", "neutral", "female", 0.001, verdict="negligible"),
    ])
    out, _ = render(HeadlineInput(res), 100)
    findings = out.split("Top findings", 1)[1]
    i_fped, i_fned, i_cf = (findings.index(s) for s in ("gender: male · positive", "gender: female · negative", "religion: a vs b"))
    assert i_fped < i_fned < i_cf  # 6.2, 2.4 and 1.6 tau
    assert "6.2×" in findings and "material" in findings
    assert "-0.310 [-0.400, -0.200]" in findings and "τ = 0.05" in findings
    assert "FPR lower for 'male'" in findings
    assert "neutral" not in findings.split("\n\n")[0]  # negligible rows are not findings
    assert "1 material · 1 inconclusive · 1 small · 1 negligible (decided: 3 of 4 defined values)" in out


def test_user_strings_are_printed_literally():
    res = frame([row("FNED", "[bold]attr[/bold]", "negative", "[red]g[/red]", 0.3, verdict="material",
                     reason="higher for '[link]x'")])
    out, _ = render(HeadlineInput(res, title="model [b]m[/b]", files=["dir[1]/results.csv"]), 120)
    for s in ("[bold]attr[/bold]", "[red]g[/red]", "'[link]x'", "model [b]m[/b]", "dir[1]/results.csv"):
        assert s in out


def test_results_without_verdicts_say_so():
    res = results_frame([{"metric": "FNED", "family": "BCM", "view": "group", "attribute": "a", "class": "c",
                          "group": "g", "value": 0.1, "ci_low": None, "ci_high": None, "n": 3, "note": None}])
    out, n = render(HeadlineInput(res, files=["o/results.csv"]), 80)
    assert "No verdicts to summarise" in out and n <= 3


def test_tasks_stay_apart_in_one_headline():
    cls = frame([row("FNED", "nationality", "negative", "french", 0.2, verdict="material")])
    ner = frame([row("FNED", "nationality", "LOC", "french", 0.1, verdict="small")])
    both = combine_results([("", cls), ("NER", ner)])
    assert set(both["attribute"]) == {"nationality", "nationality (NER)"}
    out, _ = render(HeadlineInput(both), 100)
    assert "nationality (NER)" in out and "nationality (NER): french · LOC" in out


def _scored():
    from bias_suite.families import as_scored

    rows = []
    p = {("t1", "a", 0): 0.9, ("t1", "a", 1): 0.7, ("t1", "b", 0): 0.5, ("t1", "c", 0): 0.2,
         ("t2", "a", 0): 0.6, ("t2", "b", 0): 0.1, ("t2", "c", 0): 0.55}
    for (t, g, k), pos in p.items():
        rows.append({"id": f"{t}{g}{k}", "template": t, "attribute": "x", "group": g, "term": f"{g}{k}",
                     "text": f"{t}: the {g}{k} person", "label": "pos", "probs": {"pos": pos, "neg": 1 - pos}})
    return as_scored(pd.DataFrame(rows))


def test_worst_pair_is_the_largest_gap_within_a_template():
    s = _scored()
    wp = worst_pair(s, "x", "pos")
    assert wp["template"] == "t1" and wp["gap"] == pytest.approx(0.7)  # a0 0.9 vs c0 0.2
    assert [r[0] for r in wp["rows"]] == ["a", "c"] and wp["rows"][0][1] == "t1: the a0 person"
    wp = worst_pair(s, "x", "pos", ["b"])  # group b against any other
    assert wp["template"] == "t2" and wp["gap"] == pytest.approx(0.5)  # a0 0.6 vs b0 0.1
    wp = worst_pair(s, "x", "neg", ["b", "c"])  # that pair only
    assert wp["template"] == "t2" and wp["gap"] == pytest.approx(0.45) and wp["rows"][0][0] == "b"


def test_headline_shows_the_largest_pair_of_the_top_findings_attribute():
    """The top finding is about group b, but the pair is the largest gap of
    its attribute and class (a0 0.9 vs c0 0.2 in t1), not the largest that
    involves b (0.5 in t2): the headline calls it the worst pair."""
    res = frame([row("FNED", "x", "pos", "b", 0.3, verdict="material")])
    out, _ = render(HeadlineInput(res, scored=[_scored()]), 100)
    assert "Worst counterfactual pair of x: template t1" in out and "pos differs by 0.700" in out
    assert "p=0.900" in out and "t1: the a0 person" in out and "t1: the c0 person" in out


@pytest.mark.slow  # 15 random headlines, each a whole evaluation
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_attr=st.integers(1, 30), n_groups=st.integers(2, 9), width=st.sampled_from([60, 80, 120]),
       seed=st.integers(0, 10))
def test_never_more_than_the_line_budget(n_attr, n_groups, width, seed):
    res = big_frame(n_attr, n_groups, seed)
    out, n = render(HeadlineInput(res, files=["a/results.csv"], title="t"), width, max_lines=40)
    assert n == len(out.splitlines()) <= 40


@pytest.mark.slow
def test_run_and_evaluate_print_one_screen(tmp_path):
    """`run` with the tiny classifier: the default output fits 60 lines at 80
    columns, --detail adds the per-group tables, -q prints one line."""
    from _report_data import mini_names_suite
    from _tiny_models import make_tiny_classifier
    from typer.testing import CliRunner

    from bias_suite.cli import app

    model = make_tiny_classifier(tmp_path / "tiny")
    suite = mini_names_suite(tmp_path / "suites")
    runner = CliRunner()
    out = tmp_path / "run"
    args = ["run", "sentiment_gender", str(suite), "--model", str(model), "--out", str(out), "--bootstrap", "20"]
    r = runner.invoke(app, args, env={"COLUMNS": "80"})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert len(lines) <= 60 and max(len(x) for x in lines) <= 80, r.output
    assert "full tables: --detail" in r.stdout and not ANSI.search(r.stdout)
    judged = "effect" in pd.read_json(out / "results.jsonl", lines=True).columns  # the verdict columns of stats
    if judged:
        assert "Overview" in r.stdout and "Top findings" in r.stdout and "Worst counterfactual pair" in r.stdout
    else:
        assert "No verdicts to summarise" in r.stdout
    detail = runner.invoke(app, args + ["--detail"], env={"COLUMNS": "200"})
    assert detail.exit_code == 0 and "group view" in detail.stdout and len(detail.stdout.splitlines()) > 100
    assert "full tables:" in detail.stdout and "--detail" not in detail.stdout.split("full tables:")[1]
    short = runner.invoke(app, args + ["--lines", "30"], env={"COLUMNS": "80"})  # e.g. two runs sharing a screen
    assert short.exit_code == 0 and len(short.stdout.splitlines()) <= 30, short.stdout
    quiet = runner.invoke(app, args + ["-q"], env={"COLUMNS": "80"})
    assert quiet.exit_code == 0 and "Overview" not in quiet.stdout and f"{out}/results.csv" in quiet.stdout
    ev = runner.invoke(app, ["evaluate", str(out / "scored.parquet"), "--out", str(tmp_path / "ev"), "--bootstrap", "20"],
                       env={"COLUMNS": "80"})
    assert ev.exit_code == 0, ev.output
    assert len(ev.stdout.splitlines()) <= 60 and ("Overview" in ev.stdout) == judged


# ----------------------------------------------------------------- ranking, merging, coverage (issue 28)
def _findings_text(out: str) -> str:
    """The findings block of a printed headline (up to the legend)."""
    return out.split("Top findings", 1)[1].split("\n\n", 1)[0]


def _finding_lines(out: str) -> list:
    """The first line of each finding: '<rank> <effect>× <verdict> <metric> <who>'."""
    return [x for x in _findings_text(out).splitlines()[1:] if re.match(r"^\s*\d+\s+\S+×", x)]


def test_findings_rank_material_then_small_then_inconclusive_then_effect():
    res = frame([
        row("FNED", "age", "negative", "old", 0.50, verdict="inconclusive", ci=(0.0, 1.0), reason="only 15 examples"),
        row("FNED", "gender", "negative", "female", 0.10, verdict="material", ci=(0.08, 0.12)),
        row("FPED", "gender", "positive", "male", 0.20, verdict="small", ci=(0.1, 0.3)),
        row("FNED", "religion", "negative", "sikh", 0.30, verdict="material", ci=(0.25, 0.35)),
    ])
    lines = _finding_lines(render(HeadlineInput(res), 100)[0])
    assert [x.split("×")[1].split()[0] for x in lines] == ["material", "material", "small", "inconclusive"]
    assert "religion: sikh" in lines[0] and "gender: female" in lines[1] and "age: old" in lines[3]  # 6, 2; 10 tau last
    from bias_suite.report.summary import findings

    assert list(findings(res)["verdict"]) == ["material", "material", "small", "inconclusive"]


def test_identical_partner_rows_are_one_line():
    """Five pairs of one group with identical values: one line 'jewish vs 5
    groups'; a sixth pair with another value stays its own line."""
    partners = ["christian", "muslim", "hindu", "sikh", "atheist"]
    rows = [row("TPR-Gap", "religion", "positive", f"jewish|{o}", 0.2, verdict="material", ci=(0.1, 0.3),
                reason=f"TPR higher for 'jewish' than {o!r}") for o in partners]
    rows.append(row("TPR-Gap", "religion", "positive", "christian|muslim", 0.15, verdict="material", ci=(0.1, 0.2)))
    out, _ = render(HeadlineInput(frame(rows)), 100)
    lines = _finding_lines(out)
    assert len(lines) == 2
    assert "religion: jewish vs 5 groups · positive" in lines[0] and "religion: christian vs muslim" in lines[1]
    assert _findings_text(out).count("0.200 [0.100, 0.300]") == 1 and "(alike vs 4 more groups)" in " ".join(out.split())


def test_mirrors_and_duplicate_metrics_are_one_line():
    from bias_suite.report.findings import collapse
    from bias_suite.report.summary import findings

    rows = [row("CFGap", "race", "positive", "a|b", 0.15, verdict="small", family="PCM", view="counterfactual", ci=(0.06, 0.2)),
            row("CFGap", "race", "positive", "b|a", 0.15, verdict="small", family="PCM", view="counterfactual", ci=(0.06, 0.2)),
            # a signed difference read from its other group is the negated value: a mirror
            row("TPR-Diff", "sex", "pos", "f|m", 0.2, verdict="material", ci=(0.1, 0.3)),
            row("TPR-Diff", "sex", "pos", "m|f", -0.2, verdict="material", ci=(-0.3, -0.1)),
            # the same numbers with the same sign both ways contradict each other: no mirror
            row("TPR-Diff", "sex", "neg", "f|m", 0.2, verdict="material", ci=(0.1, 0.3)),
            row("TPR-Diff", "sex", "neg", "m|f", 0.2, verdict="material", ci=(0.1, 0.3)),
            # FNED and FNED* per group: the same number twice
            row("FNED", "race", "negative", "a", 0.12, verdict="small", ci=(0.06, 0.2)),
            row("FNED*", "race", "negative", "a", 0.12, verdict="small", ci=(0.06, 0.2)),
            row("FNED", "race", "negative", "b", 0.12, verdict="small", ci=(0.06, 0.2)),
            row("FNED*", "race", "negative", "b", 0.03, verdict="small", ci=(0.01, 0.05))]
    c = collapse(findings(frame(rows)))
    key = lambda m, cls: c[(c["metric"].str.rstrip("*") == m) & (c["class"] == cls)]
    assert len(key("CFGap", "positive")) == 1 and len(key("TPR-Diff", "pos")) == 1 and len(key("TPR-Diff", "neg")) == 2
    fned = key("FNED", "negative")
    assert list(fned["shown_metric"]) == ["FNED/FNED*", "FNED", "FNED*"]  # group b: two different numbers
    out, _ = render(HeadlineInput(frame(rows)), 100)
    assert "FNED/FNED*" in out and len([x for x in _finding_lines(out) if "race: a vs b" in x]) == 1


def _cells_frame():
    """Six attributes with a material cell each in errors (FNED) and scores
    (AvgGF) of 1.2-2.2 tau, and twelve inconclusive rows of 10-21 tau."""
    rows = []
    for k in range(6):
        a = f"attr{k}"
        rows.append(row("FNED", a, "negative", f"g{k}", 0.06 + 0.005 * k, verdict="material", ci=(0.055, 0.2)))
        rows.append(row("AvgGF", a, "negative", f"h{k}", 0.07 + 0.005 * k, verdict="material", family="VBCM",
                        ci=(0.06, 0.2)))
        for j in range(2):
            rows.append(row("FPED", a, "positive", f"g{j}", 0.5 + 0.05 * k + 0.01 * j, verdict="inconclusive",
                            ci=(0.0, 1.0), reason="only 15 examples"))
    return frame(rows)


@pytest.mark.parametrize("max_lines", [60, 40])
def test_every_material_cell_shown_in_the_grid_has_a_finding(max_lines):
    out, n = render(HeadlineInput(_cells_frame()), 80, max_lines=max_lines)
    assert n <= max_lines and max(len(x) for x in out.splitlines()) <= 80
    grid = out.split("Top findings")[0].split("Overview", 1)[1]  # (the per-group table above it names them too)
    shown = [a for a in (f"attr{k}" for k in range(6)) if re.search(rf"^{a}\s", grid, re.M)]
    assert shown  # at least one grid row
    lines = _finding_lines(out)
    for a in shown:
        assert any(f"{a}: g" in x and "FNED" in x and "material" in x for x in lines), (a, out)
        assert any(f"{a}: h" in x and "AvgGF" in x and "material" in x for x in lines), (a, out)
    # effect alone would have listed ten inconclusive rows first
    assert lines[0].split("×")[1].split()[0] == "material"


def test_spill_over_rows_are_not_findings_about_their_own_group():
    def spilled(metric, grp, value, source, **kw):
        r = row(metric, "disability", "negative", grp, value, verdict="material", **kw)
        r["source"] = source
        return r

    rows = [spilled("FNED", "deaf", 0.4, "mental_illness, intellectual_disability", ci=(0.3, 0.5),
                    reason="background shifted by 'mental_illness', 'intellectual_disability'; without them 0.004"),
            spilled("BPSN", "autism", 0.80, "mental_illness", baseline=0.9, threshold=0.02, family="VBCM", ci=(0.75, 0.85)),
            row("SubgroupAUC", "disability", "negative", "mental_illness", 0.85, verdict="material", baseline=0.9,
                threshold=0.02, family="VBCM", ci=(0.8, 0.88), reason="AUC lower for 'mental_illness'"),
            {**row("FNED", "gender", "negative", "female", 0.2, verdict="material", ci=(0.1, 0.3)), "source": None}]
    res = frame(rows)
    out, _ = render(HeadlineInput(res), 100)
    findings = _findings_text(out)
    assert "deaf" not in findings and "autism" not in findings  # never named as affected
    assert "2 spill-overs" in out
    lines = _finding_lines(out)
    # the AUC cell has its own material row; the errors cell only a spill-over: one line naming its source, last
    assert any("SubgroupAUC" in x and "disability: mental_illness" in x for x in lines)
    assert "disability: via mental_illness, intellectual_disability · negative" in lines[-1]
    assert not any("BPSN" in x for x in lines)
    # the grid: a cell's effect and place come from its own rows when it has any (BPSN autism's 5 tau is a spill-over)
    from bias_suite.report.summary import overview

    ov = overview(res).set_index(["attribute", "topic"])
    assert ov.loc[("disability", "AUC"), "group"] == "mental_illness" and ov.loc[("disability", "AUC"), "effect"] == pytest.approx(2.5)
    assert ov.loc[("disability", "errors"), "source"] == "mental_illness, intellectual_disability"
    assert ov.loc[("gender", "errors"), "source"] is None
    # without the column, the same rows are ordinary findings
    out2, _ = render(HeadlineInput(res.drop(columns="source")), 100)
    assert "disability: deaf" in _findings_text(out2) and "spill-over" not in out2


def test_consistency_is_shown_when_present():
    a = row("FNED", "gender", "negative", "female", 0.3, verdict="material", ci=(0.2, 0.4))
    b = row("FNED", "gender", "negative", "male", 0.2, verdict="material", ci=(0.1, 0.3))
    out, _ = render(HeadlineInput(frame([{**a, "consistency": 0.916}, {**b, "consistency": None}])), 100)
    assert out.count("of templates") == 1 and "in 92% of templates" in out
    out, _ = render(HeadlineInput(frame([a, b])), 100)  # no column: no crash, no text
    assert "of templates" not in out


def _two_attribute_scored(gap_x: float = 0.4):
    """Attribute x (groups a, b) whose largest pos gap is ``gap_x`` (t2), and
    y whose gap 0.9 is larger still."""
    from bias_suite.families import as_scored

    p = {("x", "t1", "a"): 0.5, ("x", "t1", "b"): 0.45, ("x", "t2", "a"): 0.5 + gap_x, ("x", "t2", "b"): 0.5,
         ("y", "u1", "c"): 0.05, ("y", "u1", "d"): 0.95}
    rows = [{"id": f"{t}{g}", "template": t, "attribute": att, "group": g, "term": g, "text": f"{t}: the {g} one",
             "label": "pos", "probs": {"pos": v, "neg": 1 - v}} for (att, t, g), v in p.items()]
    return as_scored(pd.DataFrame(rows))


def test_the_pair_is_the_largest_gap_of_the_top_findings_attribute():
    res = frame([row("FNED", "x", "pos", "a", 0.3, verdict="material", ci=(0.2, 0.4)),
                 row("FNED", "y", "pos", "c", 0.1, verdict="small", ci=(0.06, 0.14))])
    out, _ = render(HeadlineInput(res, scored=_two_attribute_scored()), 100)
    assert "Worst counterfactual pair of x: template t2" in out and "differs by 0.400" in out  # x, not y's 0.9
    # the top finding decides: material in y puts y's pair on screen
    res = frame([row("FNED", "x", "pos", "a", 0.3, verdict="small", ci=(0.2, 0.4)),
                 row("FNED", "y", "pos", "c", 0.1, verdict="material", ci=(0.06, 0.14))])
    out, _ = render(HeadlineInput(res, scored=_two_attribute_scored()), 100)
    assert "Worst counterfactual pair of y: template u1" in out and "differs by 0.900" in out


@pytest.mark.parametrize("gap", [0.0, 1e-17])
def test_no_pair_when_every_gap_is_round_off(gap):
    """A model that ignores the attribute (gaps 0 or 1e-17) gets no pair,
    not 'differs by 0.000'."""
    from bias_suite.families import as_scored

    rows = [{"id": f"{t}{g}", "template": t, "attribute": "x", "group": g, "term": g, "text": f"{t} {g}",
             "label": "pos", "probs": {"pos": 0.3 + (gap if g == "a" else 0.0), "neg": 0.7 - (gap if g == "a" else 0.0)}}
            for t in ("t1", "t2") for g in ("a", "b", "c")]
    s = as_scored(pd.DataFrame(rows))
    assert worst_pair(s, "x", "pos") is None and worst_pair(s, "x", "neg") is None
    res = frame([row("AvgScoreDiff", "x", "pos", "a|b", 0.07, verdict="small", family="PCM", view="counterfactual",
                     ci=(0.06, 0.08))])
    out, _ = render(HeadlineInput(res, scored=s), 100)
    assert "Top findings" in out and "counterfactual pair" not in out and "0.000" not in out.split("Top findings")[1]


def test_terminal_values_are_red_when_worse_for_the_group_and_blue_when_better():
    """FNR-Ratio: higher is worse; SubgroupAUC: lower is worse."""
    res = frame([
        row("FNR-Ratio", "gender", "negative", "female", 1.6, verdict="material", baseline=1.0, threshold=0.25, ci=(1.3, 1.9)),
        row("FNR-Ratio", "gender", "negative", "male", 0.6, verdict="material", baseline=1.0, threshold=0.25, ci=(0.5, 0.7)),
        row("SubgroupAUC", "gender", "positive", "male", 0.80, verdict="material", baseline=0.9, threshold=0.02,
            family="VBCM", ci=(0.75, 0.85)),
        row("SubgroupAUC", "religion", "positive", "sikh", 0.99, verdict="material", baseline=0.9, threshold=0.02,
            family="VBCM", ci=(0.97, 1.0)),
    ])
    out, _ = render(HeadlineInput(res), 120, tty=True)
    red, blue = "38;2;178;24;43m", "38;2;33;102;172m"
    assert f"{red}1.600 [1.300, 1.900]" in out and f"{blue}0.600 [0.500, 0.700]" in out
    assert f"{red}0.800 [0.750, 0.850]" in out and f"{blue}0.990 [0.970, 1.000]" in out
    assert "worse for the group" in out  # the key, on a terminal
