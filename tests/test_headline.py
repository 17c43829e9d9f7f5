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
    assert "1 material · 1 inconclusive · 1 small · 1 negligible" in out


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


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_attr=st.integers(1, 30), n_groups=st.integers(2, 9), width=st.sampled_from([60, 80, 120]),
       seed=st.integers(0, 10))
def test_never_more_than_the_line_budget(n_attr, n_groups, width, seed):
    res = big_frame(n_attr, n_groups, seed)
    out, n = render(HeadlineInput(res, files=["a/results.csv"], title="t"), width, max_lines=40)
    assert n == len(out.splitlines()) <= 40


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
