"""The warning for suites too small for their rate metrics: the bound, the
counts, the line, and that `validate` and `run` print it (docs/verdicts.md,
"How many templates a class needs")."""
from __future__ import annotations

import textwrap
import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from bias_suite.cli import app
from bias_suite.exceptions import SuiteWarning
from bias_suite.stats.suite_size import (
    format_shortfall, rate_metric_taus, size_shortfall, size_warnings, templates_needed, zero_difference_bound,
)
from bias_suite.suites import load_suite
from bias_suite.suites.sizes import class_templates

runner = CliRunner()


# ---------------------------------------------------------------- the bound
def test_zero_difference_bound_by_hand():
    # 1 - 0.05^(1/n): exp(-2.995732 / 59) = 0.950492; / 40: 0.927842; / 80: 0.963246
    assert zero_difference_bound(59) == pytest.approx(0.0495076, abs=1e-7)
    assert zero_difference_bound(40) == pytest.approx(0.0721575, abs=1e-7)  # statistics.md: "0 of 40 ... ±0.072"
    assert zero_difference_bound(80) == pytest.approx(0.0367542, abs=1e-7)  # "0 of 80 ... ±0.037"
    # it is the exact paired bound (one-sided Clopper-Pearson) of 0 of n that the verdicts use
    from bias_suite.stats.evidence import upper_share

    for n in (5, 59, 73, 400):
        assert zero_difference_bound(n) == pytest.approx(float(upper_share(0, n, 0.05)), rel=1e-9)


@pytest.mark.parametrize("tau, confidence, expected", [
    (0.05, 0.95, 59),   # ln 0.05 / ln 0.95 = 2.995732 / 0.051293 = 58.40
    (0.02, 0.95, 149),  # 2.995732 / 0.020203 = 148.28
    (0.10, 0.95, 29),   # 2.995732 / 0.105361 = 28.43
    (0.05, 0.99, 90),   # 4.605170 / 0.051293 = 89.78
    (0.05, 0.90, 45),   # 2.302585 / 0.051293 = 44.89
])
def test_templates_needed_by_hand(tau, confidence, expected):
    n = templates_needed(tau, confidence)
    assert n == expected
    assert zero_difference_bound(n, confidence) <= tau < zero_difference_bound(n - 1, confidence)


def test_templates_needed_refuses_nonsense():
    for bad in (0, -0.1, float("nan")):
        with pytest.raises(ValueError):
            templates_needed(bad)
    with pytest.raises(ValueError):
        templates_needed(0.05, confidence=1.0)


def _fair_scored(n):
    """Two classes of n templates each; two groups of two terms predicted
    alike in every template, a fifth of the templates wrong for everyone."""
    from bias_suite.families import scored_from_arrays

    rows, P = [], []
    for c in ("neg", "pos"):
        for j in range(n):
            wrong = j % 5 == 0
            for g in ("a", "b"):
                for t in range(2):
                    rows.append(dict(id=f"{c}{j}-{g}{t}", template=f"{c}{j}", attribute="x", group=g,
                                     term=f"{g}{t}", text="x", label=c))
                    p = 0.2 if (c == "pos") != wrong else 0.8  # P(pos)
                    P.append([1 - p, p])
    return scored_from_arrays(pd.DataFrame(rows), np.array(P), ["neg", "pos"])


def test_the_number_is_where_the_verdicts_turn():
    """A model that treats the groups alike: its FNED and TPR-Gap rows are
    inconclusive with 58 templates per class and negligible with 59, the
    number the warning quotes for tau = 0.05."""
    from bias_suite.evaluation import evaluate

    assert templates_needed(0.05) == 59
    for n, verdict in ((58, "inconclusive"), (59, "negligible")):
        res = evaluate(_fair_scored(n), metrics=["FNED", "TPR-Gap"], bootstrap=20, significance=False,
                       bernstein=False)
        rows = res[res["group"].notna()]
        assert len(rows) == 6 and (rows["value"] == 0).all()
        assert set(rows["verdict"]) == {verdict}, rows[["metric", "class", "group", "ci_high", "verdict"]]


# ---------------------------------------------------------------- the metrics and their tau
def test_rate_metric_taus():
    assert rate_metric_taus() == {m: 0.05 for m in ("FNED", "FNED*", "TPR-Gap", "TPR-Diff", "Recall-Diff")}
    ner = rate_metric_taus(identity_span=True)
    assert set(ner) == {"FNED", "FNED*", "TPR-Gap", "TPR-Diff", "Recall-Diff", "IdentitySpan-FNED",
                        "IdentitySpan-Recall-Gap", "IdentitySpan-Recall-Diff"}
    # a metric's own tau wins over its topic's; other metrics keep their default
    taus = rate_metric_taus({"FNED": 0.02, "errors": 0.1})
    assert taus["FNED"] == 0.02 and taus["TPR-Gap"] == 0.1 and taus["FNED*"] == 0.1
    # only the metrics the run computes; none of them: nothing to warn about
    assert rate_metric_taus(None, "TPR-Gap,CFGap") == {"TPR-Gap": 0.05}
    assert rate_metric_taus(None, ["CFGap", "FPED", "FNR-Ratio"]) == {}


# ---------------------------------------------------------------- the line
def test_shortfall_line_by_hand():
    taus = {"FNED": 0.05, "FNED*": 0.05, "TPR-Gap": 0.05}
    s = size_shortfall("toy", {"gender": {"negative": 12, "neutral": 10, "positive": 80}}, taus)
    assert s.needed == 59 and s.short == (("neutral", 10, None), ("negative", 12, None))
    assert format_shortfall(s) == ("toy: 10 templates of class neutral (also negative 12); the rate metrics "
                                   "(FNED, TPR-Gap, ...) need about 59 per class to show that a difference is "
                                   "below τ = 0.05")
    # every class at or above 59: nothing
    assert size_shortfall("toy", {"gender": {"negative": 59, "positive": 90}}, taus) is None
    assert size_shortfall("toy", {"gender": {"negative": 10}}, {}) is None
    # the smallest tau decides and names its metrics; the confidence is said when not 95%
    # (ln 0.01 / ln 0.98 = 4.605170 / 0.020203 = 227.95)
    s = size_shortfall("toy", {"a": {"pos": 100}}, {"FNED": 0.02, "TPR-Gap": 0.05}, 0.99, kind="entity type")
    assert format_shortfall(s) == ("toy: 100 templates of entity type pos; the rate metrics (FNED) need about "
                                   "228 per entity type to show that a difference is below τ = 0.02 at 99% "
                                   "confidence")


def test_shortfall_names_the_attribute_only_where_counts_differ():
    same = {"age": {"negative": 20, "positive": 20}, "gender": {"negative": 20, "positive": 20}}
    assert size_shortfall("s", same, {"FNED": 0.05}).short == (("negative", 20, None), ("positive", 20, None))
    differ = {"age": {"negative": 20, "positive": 30}, "gender": {"negative": 8, "positive": 30}}
    line = format_shortfall(size_shortfall("s", differ, {"FNED": 0.05}))
    assert line.startswith("s: 8 templates of class negative in attribute gender (also positive 30);")


# ---------------------------------------------------------------- counting a suite
SUITE = """\
suite: toy_size
classes: [negative, positive]
identity_terms: [gender.yaml, {file: age.yaml, groups: [young, old]}]
lexicons:
  place: [home, work, school]
templates:
  - {id: n1, text: "The {identity_np} hated the {place}.", label: negative}
  - {id: n2, text: "The {identity_np} was rude.", label: negative}
  - {id: n3, text: "The {identity_np} was rude again.", label: negative, attributes: [gender]}
  - {id: p1, text: "The {identity_np} loved it.", label: positive}
"""


def _toy(tmp_path, extra=""):
    p = tmp_path / "toy_size.yaml"
    p.write_text(SUITE.replace("templates:\n", extra + "templates:\n"))
    return p


def test_class_templates_counts_fills_and_attributes(tmp_path):
    suite = load_suite(_toy(tmp_path))
    # n1 has 3 lexicon fills; n3 applies to gender only
    assert class_templates(suite) == {"gender": {"negative": 5, "positive": 1}, "age": {"negative": 4, "positive": 1}}
    assert class_templates(suite, attributes=["age"]) == {"age": {"negative": 4, "positive": 1}}
    assert class_templates(suite, class_of=lambda t: None if t.label == "positive" else "x") == {
        "gender": {"x": 5}, "age": {"x": 4}}


def test_class_templates_match_the_expanded_templates():
    """The count is the number of counterfactual templates the expansion
    makes (the unit the intervals resample), per attribute and class."""
    from bias_suite.suites import expand_suite

    suite = load_suite("templates/sentiment_generic.yaml")
    ex = expand_suite(suite)
    units = ex.groupby(["attribute", "label"])["template"].nunique()
    counts = class_templates(suite)
    assert {(a, c): n for a, per in counts.items() for c, n in per.items()} == units.to_dict()
    assert any(t.lexicon_keys for t in suite.templates)  # the suite has lexicon fills to count


def test_size_warnings_honour_the_suite_materiality(tmp_path):
    suite = load_suite(_toy(tmp_path))
    assert size_warnings([suite]) == [
        "toy_size: 1 templates of class positive (also negative 4 in age); the rate metrics (FNED, TPR-Gap, ...) "
        "need about 59 per class to show that a difference is below τ = 0.05"]
    assert size_warnings([suite], attributes=["gender"])[0].startswith(
        "toy_size: 1 templates of class positive (also negative 5);")
    assert size_warnings([suite], metrics="CFGap") == []
    assert "need about 149 per class" in size_warnings([suite], thresholds={"FNED": 0.02})[0]
    assert "(FNED) need" in size_warnings([suite], thresholds={"FNED": 0.02})[0]


def test_ner_suites_count_the_identity_entity_type():
    suites = [load_suite(f"templates/{n}.yaml") for n in ("ner_names", "ner_nationality")]
    assert size_warnings(suites) == []  # 121 and 120 templates of PER and LOC
    assert size_warnings(suites, thresholds={"IdentitySpan-FNED": 0.02}) == [
        "ner_names: 121 templates of entity type PER; the rate metrics (IdentitySpan-FNED) need about 149 per "
        "entity type to show that a difference is below τ = 0.02",
        "ner_nationality: 120 templates of entity type LOC; the rate metrics (IdentitySpan-FNED) need about 149 "
        "per entity type to show that a difference is below τ = 0.02"]


# ---------------------------------------------------------------- validate and run say it
def test_validate_warns_without_failing(tmp_path):
    p = _toy(tmp_path)
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 0, r.output
    assert "ok  " in r.stdout and "warning" not in r.stdout
    err = " ".join(r.stderr.split())
    assert err.count("warning:") == 1
    assert "warning: toy_size: 1 templates of class positive (also negative 4 in age); the rate metrics" in err
    # the suite's own tau for the errors topic: 35 templates at 0.1
    r = runner.invoke(app, ["validate", str(_toy(tmp_path, "materiality: {errors: 0.1}\n"))])
    assert r.exit_code == 0 and "need about 29 per class" in " ".join(r.stderr.split())


def test_validate_is_quiet_for_a_large_enough_suite(tmp_path):
    rows = "".join(f'  - {{id: n{i}, text: "The {{identity_np}} broke vase {i}.", label: negative}}\n'
                   f'  - {{id: p{i}, text: "The {{identity_np}} fixed vase {i}.", label: positive}}\n'
                   for i in range(35))
    p = tmp_path / "big.yaml"
    p.write_text("suite: big\nclasses: [negative, positive]\nidentity_terms: [gender.yaml]\n"
                 "materiality: {errors: 0.1}\ntemplates:\n" + rows)
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 0 and r.stderr == "", r.stderr


MODEL = textwrap.dedent("""
    import numpy as np

    def predict(texts):
        return np.tile([0.7, 0.3], (len(texts), 1))
""")


def test_run_warns_once_before_it_starts(tmp_path, monkeypatch):
    (tmp_path / "size_model.py").write_text(MODEL)
    p = _toy(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["run", str(p), "--model", "size_model.py:predict", "--classes", "negative,positive",
                            "--out", str(tmp_path / "out"), "--bootstrap", "0", "--no-cache", "-q",
                            "--no-invariance", "--threshold", "TPR-Gap=0.02"])
    assert r.exit_code == 0, r.output
    err = " ".join(r.stderr.split())
    assert err.count("toy_size:") == 1
    assert "the rate metrics (TPR-Gap) need about 149 per class to show that a difference is below τ = 0.02" in err
    # from Python: a SuiteWarning; none when the run computes none of the rate metrics
    from bias_suite.models import CallablePredictor
    from bias_suite.pipeline import run

    model = CallablePredictor(lambda texts: np.tile([0.7, 0.3], (len(texts), 1)), ["negative", "positive"])
    with pytest.warns(SuiteWarning, match="toy_size: 1 templates of class positive"):
        run([p], model, None, progress=False, bootstrap=0, cache=False, invariance=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SuiteWarning)
        run([p], model, None, progress=False, bootstrap=0, cache=False, invariance=False, metrics=["CFGap"])
