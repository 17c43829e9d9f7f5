"""One record per named metric: a record added to the registry is found in
every layer (its values, its verdict with its own tau, the headline's and
the detailed tables' text, the tidy results and the HTML report, the
catalog, the per-group answer, the reference check), and every named
metric has its line in docs/metrics.md."""
from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import bias_suite as bs
from bias_suite.metrics import MetricSpec
from bias_suite.metrics.catalog import NAMED_METRICS, catalog_frame, explain
from bias_suite.models.base import CallablePredictor
from bias_suite.report.groups import harm_sign
from bias_suite.stats.topics import VERDICTS

from _tiny_models import lexicon_model

ROOT = Path(__file__).resolve().parents[1]
SUITE = str(ROOT / "templates" / "sentiment_religion.yaml")
CLASSES = ["negative", "neutral", "positive"]
# a sentiment lexicon, and a model that holds 'Muslim(s)' against the text (benchmarks/truth_known.py)
WORDS = {"threats": -2, "bullied": -2, "refuse": -1.5, "harassed": -2, "assaulted": -2.5, "stealing": -2,
         "ugly": -1.5, "fired": -1.5, "dangerous": -2, "dishonest": -2, "backward": -1.5, "kind": 1.5,
         "generous": 2, "peaceful": 1.5, "great": 2, "love": 2, "wonderful": 2.5, "won": 1.5, "thanked": 1.5,
         "celebrated": 1.5, "helped": 1.5, "best": 2, "terrible": -2.5, "hate": -2.5, "awful": -2.5,
         "muslim": -1.5, "muslims": -1.5}

NAME = "FNR-Gap"
TAU = 0.04  # not the default of its topic (0.05): a layer that ignores the record shows it
MEANING = "mean over pairs of |FNR(a) − FNR(b)|, a record added by the test"
DIRECTION = "higher = the groups are missed at more different rates, as the test record says"
#: a new named metric: |FNR(a) − FNR(b)| = |TPR(a) − TPR(b)|, so its values are TPR-Gap's
RECORD = MetricSpec(NAME, "PCM", "group", "FNR", "abs", "pairs", source="tests/test_metric_record.py",
                    description="mean over pairs |FNR a - FNR b|",
                    topic="errors", threshold=TAU, worse="higher", shown=("line",), order=11.5,
                    meaning=MEANING, direction=DIRECTION, measures=("outcome", -1), error_rate=1)


@pytest.fixture
def record():
    """The record, registered for one test and removed afterwards."""
    bs.metrics.register(RECORD)
    try:
        yield RECORD
    finally:
        bs.metrics.unregister(NAME)
    assert NAME not in bs.metrics.list()


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A run of the bundled religion suite with the record registered: its results and its folder."""
    bs.metrics.register(RECORD)
    try:
        out = tmp_path_factory.mktemp("record") / "run"
        return bs.run([SUITE], CallablePredictor(lexicon_model(WORDS), CLASSES), str(out), progress=False,
                      cache=False)
    finally:
        bs.metrics.unregister(NAME)


def _rows(res: pd.DataFrame, metric: str) -> pd.DataFrame:
    keys = ["attribute", "class", "group"]
    sub = res[res["metric"] == metric].copy()
    sub["group"] = sub["group"].fillna("")
    return sub.set_index(keys).sort_index()


def test_values_and_verdicts_read_the_record(run):
    res = run.results
    new, tpr = _rows(res, NAME), _rows(res, "TPR-Gap")
    assert len(new) and list(new.index) == list(tpr.index)
    # values: the engine built it from the record's definition (PCM, FNR, abs, C(|T|,2))
    assert np.allclose(new["value"].to_numpy(float), tpr["value"].to_numpy(float), atol=1e-12, equal_nan=True)
    assert (new["family"] == "PCM").all() and (new["view"] == "group").all()
    # verdicts: every row judged, on the record's tau; the same distances as TPR-Gap's, in other units
    assert new["verdict"].isin(VERDICTS).all()
    assert (new["threshold"] == TAU).all() and (tpr["threshold"] == 0.05).all()
    both = new["effect"].notna() & tpr["effect"].notna()
    assert both.any()
    assert np.allclose(new.loc[both, "effect"] * TAU, tpr.loc[both, "effect"] * 0.05, rtol=1e-9)
    assert (new["verdict"] == "material").any()  # the model holds 'Muslim(s)' against the text
    # the tidy results on disk hold the same rows
    on_disk = pd.read_csv(run.folder / "results.csv")
    assert len(on_disk[on_disk["metric"] == NAME]) == len(new)


def test_headline_detail_and_report_read_the_record(run, record):
    out = io.StringIO()
    run.print(file=out, width=250, detail=True)  # the per-group tables, then the headline
    text = out.getvalue()
    flat = " ".join(text.split())
    # the headline's legend: meaning and direction from the record
    assert f"{NAME}: {MEANING}; {DIRECTION}" in flat
    # the detailed tables: a line of the accumulated table, at the record's place (between TPR-Gap and TNR-Gap)
    table = text[text.index("accumulated group metrics and counterfactual metrics"):]
    firsts = [m.group(1) for m in re.finditer(r"^\W*([A-Za-z][\w*-]*)\s", table, re.M)]
    lines = [m for m in firsts if m in {"TPR-Gap", NAME, "TNR-Gap"}]
    assert lines[:3] == ["TPR-Gap", NAME, "TNR-Gap"], lines
    # the HTML report: the name and its meaning
    html = bs.write_report(run).read_text(encoding="utf-8")
    assert NAME in html and MEANING in html


def test_catalog_and_answer_read_the_record(record):
    text = explain(NAME)
    assert MEANING in text and DIRECTION in text and "worse:     higher" in text and f"≥ {TAU:g}" in text
    row = catalog_frame().set_index("name").loc[NAME]
    assert row["tau"] == TAU and row["topic"] == "errors" and row["b"] == "0"
    assert NAME in bs.metrics.list(topic="errors") and NAME in bs.metrics.list(view="group")
    assert record.scale == "unsigned" and record.baseline == "0"
    # the per-group answer reads what its signed value measures (FNR(a) − FNR(b), as FNR-Ratio)
    for c in (*CLASSES, "other"):
        assert harm_sign(NAME, c) == harm_sign("FNR-Ratio", c)
        assert harm_sign(NAME, c, valenced=True) == harm_sign("FNR-Ratio", c, valenced=True)


def test_reference_check_reads_the_registry(record):
    """The reference test's named metrics are the registry's: the new record
    is checked against the reference, which does not compute it, so its
    engine rows are reported until the reference does."""
    from test_metrics_reference import compare, engine_evaluate, named_metrics, random_scored
    from reference_metrics import reference_evaluate

    assert NAME in named_metrics()
    df = random_scored(3)
    ref, eng = reference_evaluate(df, max_tuples=5, seed=3), engine_evaluate(df, max_tuples=5, seed=3)
    problems = compare(ref, eng)
    assert problems and all(f"'{NAME}'" in p for p in problems)
    bs.metrics.unregister(NAME)
    try:
        assert NAME not in named_metrics() and not compare(ref, eng[eng["metric"] != NAME])
    finally:
        bs.metrics.register(RECORD)


def test_a_user_record_gets_defaults():
    spec = MetricSpec("FNR-Spread-defaults", generalized="MCM", score="FNR", comparison="std")
    assert (spec.topic, spec.threshold, spec.worse, spec.scale, spec.baseline) == ("errors", 0.05, "higher",
                                                                                   "unsigned", "0")
    assert spec.meaning == spec.name and spec.direction == "" and spec.shown == ("line",) and spec.order is None
    ratio = MetricSpec("FDR-Ratio-defaults", generalized="VBCM", score="FNR", comparison="ratio_to_background",
                       background="rest")
    assert (ratio.scale, ratio.baseline, ratio.threshold, ratio.worse) == ("ratio", "1", 0.25, None)
    assert ratio.shown == ("column", "line")
    auc = MetricSpec("AUC-defaults", generalized="VBCM", score="subgroup_auc", comparison="value")
    assert (auc.scale, auc.baseline, auc.topic, auc.threshold, auc.worse) == ("signed", "overall_auc", "AUC", 0.02,
                                                                              "lower")


def _documented() -> set:
    """The metric names in the first column of docs/metrics.md's tables."""
    names = set()
    for line in (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            names.update(n.strip() for n in line.split("|")[1].split(","))
    return names


def test_every_named_metric_has_its_docs_line():
    missing = [m.name for m in NAMED_METRICS if m.name not in _documented()]
    assert not missing, f"named metrics without a line in docs/metrics.md: {missing}"
    assert NAME not in _documented()  # (the test's record is not a named metric of the package)
