"""CI gating: threshold rules from suite files, the command line and pytest."""
from __future__ import annotations

import pandas as pd
import pytest
from _report_data import make_results, mini_names_suite
from typer.testing import CliRunner

from bias_suite.cli import app
from bias_suite.exceptions import SuiteError
from bias_suite.gating import (
    EXIT_VIOLATIONS,
    Rule,
    ThresholdError,
    check_thresholds,
    format_violations,
    parse_condition,
    parse_verdict_rule,
    rule_from_dict,
    rules_from_suite,
)
from bias_suite.metrics.engine import results_frame
from bias_suite.families import load_suite
from bias_suite.testing import assert_no_bias


def _r(metric, cls, group, value, attribute="gender", **kw):
    return {"metric": metric, "family": kw.get("family", "VBCM"), "view": "group", "attribute": attribute, "class": cls,
            "group": group, "value": value, "ci_low": None, "ci_high": None, "n": 10, "note": kw.get("note")}


@pytest.fixture
def results():
    res = results_frame([
        _r("BPSN", "pos", "female", 0.95), _r("BPSN", "pos", "male", 0.85), _r("BPSN", "neg", "male", 0.91),
        _r("BPSN", "pos", "female", 0.7, attribute="race"),
        _r("FNED", "neg", "female", 0.05, family="BCM"), _r("FNED", "neg", None, 0.12, family="BCM"),
        _r("AccuracyDiff", "all", "female|male", -0.08, family="PCM"), _r("AccuracyDiff", "all", None, -0.08, family="PCM"),
        _r("AccuracyDiff", "all", None, None, attribute="race", family="PCM", note="not applicable: needs exactly two groups"),
        _r("CFGap", "pos", "female|male", 0.2, family="PCM"), _r("CFGap", "neg", "female|male", 0.01, family="PCM"),
    ])
    res["verdict"] = [None] * 9 + ["material", "negligible"]
    return res


def _keys(vs):
    return [(v.metric, v.attribute, v.class_, v.group) for v in vs]


def test_min_max_filters_and_scope(results):
    vs = check_thresholds(results, [{"metric": "BPSN", "min": 0.9}])
    assert _keys(vs) == [("BPSN", "gender", "pos", "male"), ("BPSN", "race", "pos", "female")]
    assert vs[0].value == 0.85 and "0.85 < 0.9" in vs[0].reason and vs[0].threshold == "BPSN < 0.9"
    assert _keys(check_thresholds(results, [{"metric": "bpsn", "min": 0.9, "attribute": "gender", "class": ["pos"]}])) == [
        ("BPSN", "gender", "pos", "male")]
    assert _keys(check_thresholds(results, [{"metric": "FNED", "max": 0.1}])) == [("FNED", "gender", "neg", None)]
    assert check_thresholds(results, [{"metric": "FNED", "max": 0.1, "scope": "groups"}]) == []
    # a group matches the pairs it is in
    assert _keys(check_thresholds(results, [{"metric": "CFGap", "max": 0.1, "group": "male"}])) == [("CFGap", "gender", "pos", "female|male")]


def test_abs_and_null_values(results):
    assert check_thresholds(results, [{"metric": "AccuracyDiff", "max": 0.05}]) == []  # -0.08 is not above 0.05
    vs = check_thresholds(results, [{"metric": "AccuracyDiff", "max": 0.05, "abs": True}])
    assert len(vs) == 2 and all(v.attribute == "gender" for v in vs)  # the null race value is not compared
    vs = check_thresholds(results, [{"metric": "AccuracyDiff", "max": 0.05, "attribute": "race"}])
    assert len(vs) == 1 and "has no values" in vs[0].reason and "needs exactly two groups" in vs[0].reason
    assert check_thresholds(results, [{"metric": "AccuracyDiff", "max": 0.05, "attribute": "race", "required": False}]) == []
    vs = check_thresholds(results, ["FNEDD>0.1"])
    assert len(vs) == 1 and "no result matches FNEDD" in vs[0].reason


def test_verdict_rules(results):
    from bias_suite.gating import parse_fail_on

    vs = check_thresholds(results, [{"metric": "CFGap", "verdict": "material"}])
    assert _keys(vs) == [("CFGap", "gender", "pos", "female|male")] and vs[0].verdict == "material"
    assert _keys(check_thresholds(results, [parse_verdict_rule("*")])) == _keys(vs)
    assert check_thresholds(results, [parse_verdict_rule("CFGap[class=neg]")]) == []
    # --fail-on: a verdict word, a verdict and a metric, or a metric (material)
    assert _keys(check_thresholds(results, [parse_fail_on("material")])) == _keys(vs)
    assert _keys(check_thresholds(results, [parse_fail_on("negligible:CFGap")])) == [("CFGap", "gender", "neg", "female|male")]
    assert check_thresholds(results, [parse_fail_on("material:FNED")]) == []
    assert _keys(check_thresholds(results, [parse_fail_on("CFGap")])) == _keys(vs)
    # a rule given twice (suite and command line) is checked and reported once
    assert len(check_thresholds(results, [parse_fail_on("material:CFGap"), {"metric": "CFGap", "verdict": "material"}])) == 1
    no_verdicts = results.drop(columns="verdict")
    vs = check_thresholds(no_verdicts, [parse_verdict_rule("CFGap")])
    assert len(vs) == 1 and "no verdicts" in vs[0].reason  # fail closed


def test_parse_condition():
    r = parse_condition("BPSN<0.9")
    assert r.metric == "BPSN" and r.conditions == (("<", 0.9),) and r.scope == "all"
    r = parse_condition(" FNED* [class=negative, attribute=gender, scope=accumulated] >= 1e-1 ")
    assert r.metric == "FNED*" and r.conditions == ((">=", 0.1),) and r.class_ == ("negative",) and r.scope == "accumulated"
    assert parse_condition("|AccuracyDiff|>0.05").absolute
    assert parse_condition("CFGap[group=female|male]>0.1").group == ("female|male",)
    for bad in ("BPSN", "BPSN<<0.9", "BPSN<x", "|BPSN<0.9", "BPSN[colour=red]<0.9", "BPSN[scope=some]<1", "BPSN=0.9"):
        with pytest.raises(ThresholdError):
            parse_condition(bad)


def test_rule_from_dict_errors():
    for bad, msg in [
        ({"min": 0.9}, "'metric' is required"),
        ({"metric": "BPSN"}, "needs min, max or verdict"),
        ({"metric": "BPSN", "mni": 0.9}, "unknown key"),
        ({"metric": "BPSN", "min": "high"}, "must be a number"),
        ({"metric": "BPSN", "min": 0.9, "abs": "yes"}, "true or false"),
        ({"metric": "BPSN", "min": 0.9, "class": 3}, "string or a list"),
        ({"metric": "BPSN", "min": 0.9, "scope": "everything"}, "scope must be"),
        ("BPSN >", "cannot read"),
    ]:
        with pytest.raises(ThresholdError, match=msg):
            rule_from_dict(bad) if isinstance(bad, dict) else parse_condition(bad)
    r = rule_from_dict({"metric": "FNED", "min": 0, "max": 0.1, "name": "fned budget"})
    assert r.conditions == (("<", 0.0), (">", 0.1)) and r.describe().startswith("fned budget: ")
    with pytest.raises(ThresholdError):
        Rule("BPSN")


def test_suite_thresholds(tmp_path):
    path = mini_names_suite(tmp_path, "thresholds:\n  - {metric: BPSN, min: 0.9}\n  - {metric: CFGap, verdict: material, class: positive}\n")
    rules = rules_from_suite(load_suite(path))
    assert [r.metric for r in rules] == ["BPSN", "CFGap"] and "thresholds[0]" in rules[0].source
    bad = mini_names_suite(tmp_path / "bad", "thresholds:\n  - {metric: BPSN, minimum: 0.9}\n")
    with pytest.raises(SuiteError, match=r"thresholds\[0\].*unknown key"):
        rules_from_suite(load_suite(bad))


def test_format_and_assert_no_bias(results):
    vs = check_thresholds(results, ["BPSN<0.9"])
    text = format_violations(vs)
    assert text.startswith("2 bias threshold violations:") and "BPSN < 0.9" in text and "0.85" in text and "race" in text
    assert format_violations([]) == "no threshold violations"
    assert_no_bias(results, ["BPSN<0.5", {"metric": "FNED", "max": 0.2}])
    with pytest.raises(AssertionError, match="BPSN < 0.9"):
        assert_no_bias(results, ["BPSN<0.9"], msg="fairness budget")
    with pytest.raises(AssertionError, match='verdict "material"'):   # default: no material value
        assert_no_bias(results)
    assert_no_bias(results.assign(verdict=[None] * 9 + ["small", "negligible"]))


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    base = tmp_path_factory.mktemp("gating")
    return make_results(base / "res", suites=["sentiment_gender"])


@pytest.mark.slow  # runs sentiment_gender (the module's run_dir)
def test_cli_run_exits_3_with_violations(run_dir, tmp_path):
    model = run_dir.parent / f"{run_dir.name}_model"
    suite = mini_names_suite(tmp_path / "s", "thresholds:\n  - {metric: BPSN, min: 0.99}\n")
    runner = CliRunner()
    r = runner.invoke(app, ["run", str(suite), "--model", str(model), "--out", str(tmp_path / "o"), "-q"])
    assert r.exit_code == EXIT_VIOLATIONS, r.output
    assert "bias threshold violation" in r.output and "BPSN < 0.99" in r.output and "thresholds[0]" in r.output
    assert (tmp_path / "o" / "results.jsonl").exists()  # results are written before the gate
    # check reads the suite's thresholds the run recorded: no --suite needed, reported once with --suite too
    r = runner.invoke(app, ["check", str(tmp_path / "o")])
    assert r.exit_code == EXIT_VIOLATIONS and "BPSN < 0.99" in r.output and "thresholds[0]" in r.output
    again = runner.invoke(app, ["check", str(tmp_path / "o"), "--suite", str(suite)])
    assert again.exit_code == EXIT_VIOLATIONS and again.output.count("BPSN < 0.99") == r.output.count("BPSN < 0.99")
    # the command line adds rules; a passing set exits 0
    ok = mini_names_suite(tmp_path / "ok")
    r = runner.invoke(app, ["run", str(ok), "--model", str(model), "--out", str(tmp_path / "o2"), "-q", "--fail-if", "BPSN<0"])
    assert r.exit_code == 0 and "all 1 rule passed" in r.output
    r = runner.invoke(app, ["run", str(ok), "--model", str(model), "--out", str(tmp_path / "o3"), "-q",
                            "--fail-if", "CFGap[class=positive]>0", "--fail-on-verdict", "CFGap"])
    assert r.exit_code == EXIT_VIOLATIONS
    assert "CFGap[class=positive] > 0" in r.output  # brackets survive the console markup
    # a malformed rule stops the run before the model is loaded
    r = runner.invoke(app, ["run", str(ok), "--model", "/nonexistent", "--out", str(tmp_path / "o4"), "--fail-if", "BPSN<<1"])
    assert r.exit_code == 2 and "cannot read 'BPSN<<1'" in r.output and "METRIC[filters]" in r.output


@pytest.mark.slow  # runs sentiment_gender (the module's run_dir)
def test_cli_check(run_dir, tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["check", str(run_dir), "--fail-if", "FNED[scope=accumulated]>0.0"])
    assert r.exit_code == EXIT_VIOLATIONS and "FNED" in r.output
    r = runner.invoke(app, ["check", str(run_dir), "--fail-if", "FNED>10"])
    assert r.exit_code == 0
    r = runner.invoke(app, ["check", str(run_dir)])
    assert r.exit_code == 2 and "no rules" in r.output


@pytest.mark.slow  # runs sentiment_gender (the module's run_dir)
def test_pytest_helper_on_a_run(run_dir, tmp_path):
    from bias_suite.pipeline import run

    model = run_dir.parent / f"{run_dir.name}_model"
    suite = mini_names_suite(tmp_path, "thresholds:\n  - {metric: SubgroupAUC, min: 0.0}\n")
    res = run([str(suite)], str(model), progress=False)
    assert_no_bias(res)  # the suite's own thresholds
    with pytest.raises(AssertionError, match="SubgroupAUC"):
        assert_no_bias(res, [{"metric": "SubgroupAUC", "min": 1.01}])
    # a results folder works too: BPSN is an AUC, never below 0; "BPSN<1" fails exactly the rows below 1
    assert check_thresholds(run_dir, ["BPSN<0"]) == []
    rows = pd.read_json(run_dir / "results.jsonl", lines=True)
    below = rows[(rows["metric"] == "BPSN") & (rows["value"] < 1)]
    got = pd.DataFrame([v.as_dict() for v in check_thresholds(run_dir, ["BPSN<1"])])
    assert len(below) > 0 and len(got) == len(below)
    assert set(got["metric"]) == {"BPSN"} and (got["value"] < 1).all()
    assert sorted(got["value"]) == pytest.approx(sorted(below["value"]))


@pytest.mark.slow  # runs sentiment_gender (the module's run_dir)
def test_suite_materiality_sets_tau(run_dir, tmp_path):
    """tau per metric or topic in the suite file; the command line's/caller's value wins; a key that is
    neither a metric nor a topic is one error naming the file, line and field."""
    import json

    from bias_suite.pipeline import run

    model = run_dir.parent / f"{run_dir.name}_model"
    suite = mini_names_suite(tmp_path / "m", "materiality:\n  FNED: 0.2\n  counterfactual: 0.1\n")
    res = run([str(suite)], str(model), tmp_path / "o", progress=False, bootstrap=20).results
    tau = res.groupby("metric")["threshold"].first()
    assert tau["FPED"] == pytest.approx(0.05)   # a metric the suite leaves alone keeps its default
    assert set(res.loc[(res["metric"] == "FNED") & res["group"].notna(), "threshold"]) == {0.2}
    assert set(res.loc[(res["metric"] == "CFGap") & res["group"].notna(), "threshold"]) == {0.1}
    assert json.loads((tmp_path / "o" / "run.json").read_text())["thresholds"] == {"FNED": 0.2, "counterfactual": 0.1}
    res = run([str(suite)], str(model), None, progress=False, bootstrap=20, thresholds={"FNED": 0.03}).results
    assert set(res.loc[(res["metric"] == "FNED") & res["group"].notna(), "threshold"]) == {0.03}
    bad = mini_names_suite(tmp_path / "bad", "materiality:\n  FNDE: 0.2\n")
    with pytest.raises(SuiteError) as e:
        run([str(bad)], str(model), None, progress=False, bootstrap=0)
    n = len(bad.read_text().splitlines())
    assert f"mini_names.yaml:{n}: field 'materiality.FNDE'" in str(e.value) and "unknown metric or topic" in str(e.value)
    with pytest.raises(SuiteError, match="materiality"):
        load_suite(mini_names_suite(tmp_path / "neg", "materiality:\n  FNED: -1\n"))
    r = CliRunner().invoke(app, ["validate", str(bad)])
    assert r.exit_code != 0 and "materiality.FNDE" in r.output
