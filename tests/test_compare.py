"""Comparing models (bias_suite.comparison, bias_suite.stats.change): truth
known, pairing, and the command line.

A planted bias that the candidate removes is ``improved`` on its group's
rows and nothing else improves or worsens except as that group's spill-over;
a model compared with itself changes nothing; the resamples are paired (a
constant shift of one group gives a change interval of zero width); examples
that do not pair are one clear error; ``bias-suite compare`` on two bundled
suite runs and ``run(..., baseline=...)`` write their files; ``--fail-on
worsened`` exits 3 when the candidate adds a bias.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bias_suite.cli import app  # noqa: E402
from bias_suite.comparison import PairingError, compare  # noqa: E402
from _tiny_models import lexicon_model  # noqa: E402

# Compares models on 200 paired resamples: left out of make test-fast (pytest -m 'not slow')
pytestmark = pytest.mark.slow


CLASSES = ["negative", "neutral", "positive"]


def _involves(group, name) -> bool:
    return isinstance(group, str) and name in group.split("|")


# ----------------------------------------------------------------- truth known
@pytest.fixture(scope="module")
def planted():
    """The calibration benchmark's generator: the baseline shifts the
    negative logit of group g0 (a large bias); the candidate is the same
    data without it (the same noise: every other group is unchanged)."""
    from calibration import generate

    import bias_suite as bs

    base = generate(100, seed=3, planted_group="g0", shift=-1.5)
    cand = generate(100, seed=3, planted_group="g0", shift=0.0)
    return base, cand, bs.compare(base, cand, names=["biased", "debiased"])  # the public one: it prints itself


def test_removing_a_planted_bias_improves_that_groups_rows(planted):
    _, _, comp = planted
    assert list(comp["baseline"].unique()) == ["biased"] and list(comp["candidate"].unique()) == ["debiased"]
    assert not (comp["change"] == "worsened").any(), comp[comp["change"] == "worsened"][["metric", "group", "reason"]]
    own = comp[comp["group"].map(lambda g: _involves(g, "g0"))]
    # the rows that show the planted bias: the group's own error, score and counterfactual rows
    for metric, group, cls in (("FNED", "g0", "negative"), ("PosAEG", "g0", "negative"),
                               ("NegAEG", "g0", "negative"), ("CFGap", "g0|g1", "negative")):
        r = own[(own["metric"] == metric) & (own["group"] == group) & (own["class"] == cls)]
        assert len(r) == 1 and r["change"].iloc[0] == "improved", r[["metric", "change", "reason"]]
        assert r["change_value"].iloc[0] <= -0.05 and r["ci_high"].iloc[0] < 0
    material = own[own["verdict_baseline"] == "material"]
    assert (material["change"] == "improved").mean() > 0.8, material["change"].value_counts()


def test_nothing_else_changes_except_as_the_groups_spill_over(planted):
    _, _, comp = planted
    claims = comp[comp["change"].isin(["improved", "worsened"]) & comp["group"].notna()]
    others = claims[~claims["group"].map(lambda g: _involves(g, "g0"))]
    assert len(others), "the large planted bias shifts the background of the other groups"
    assert (others["source"] == "g0").all(), others[["metric", "group", "source", "reason"]]
    assert others["reason"].str.contains("shifted by 'g0'").all()
    # pairs of two other groups do not change at all: the same predictions, the same resamples
    pairs = comp[comp["group"].map(lambda g: isinstance(g, str) and "|" in g and not _involves(g, "g0"))
                 & comp["ci_low"].notna()]
    assert len(pairs) and (pairs["change_value"].abs() < 1e-12).all()
    assert set(pairs["change"]) <= {"unchanged", "inconclusive"} and (pairs["change"] == "unchanged").mean() > 0.8
    why = pairs.loc[pairs["change"] == "inconclusive", "reason"]
    assert why.str.contains("templates|distance that noise").all(), why.tolist()  # too little evidence, or a distance


def test_a_model_compared_with_itself_changes_nothing(planted):
    base, _, _ = planted
    comp = compare(base, base, bootstrap=50, names=["m", "m"])
    assert set(comp["change"]) <= {"unchanged", "inconclusive"}, comp["change"].value_counts()
    cv = comp["change_value"].dropna()
    assert len(cv) > 100 and (cv == 0).all()
    assert (comp.loc[comp["ci_low"].notna(), ["ci_low", "ci_high"]] == 0).all().all()
    assert (comp["verdict_baseline"] == comp["verdict_candidate"]).all()
    assert comp.details.models == ["m (baseline)", "m (candidate)"]  # a name given twice is told apart


def _shown(text: str) -> float:
    return float(text.replace("−", "-"))


def test_a_change_line_shows_values_that_subtract_to_its_change(planted):
    """An AEG's change is of its AEG across templates (as its verdict), not
    of the value shown: where the values shown do not subtract to the
    change, the line names the scale and shows both distances from no bias,
    and those do, to the printed digits."""
    import io

    from bias_suite.report.compare import on_scale

    _, _, comp = planted
    row = {"metric": "AccuracyDiff", "value_baseline": -0.040, "value_candidate": 0.020, "change_value": -0.020,
           "scale": "|value|", "distance_baseline": 0.040, "distance_candidate": 0.020}
    assert on_scale(row) == "|value| 0.040 → 0.020"
    assert on_scale({**row, "value_baseline": 0.040}) == ""  # the values themselves subtract to the change
    aeg = comp[comp["metric"].str.endswith("AEG") & comp["change_value"].notna()]
    assert len(aeg)
    d = aeg["distance_candidate"] - aeg["distance_baseline"]
    assert np.allclose(d, aeg["change_value"], atol=1e-12)  # the columns: d(candidate) − d(baseline)
    checked = 0
    for r in aeg.to_dict("records"):
        values = float(f"{r['value_candidate']:.3f}") - float(f"{r['value_baseline']:.3f}")
        note = on_scale(r)
        if not note:  # the values shown subtract to the change
            assert abs(values - r["change_value"]) < 2e-3, r
            continue
        m = re.fullmatch(r"\|AEG across templates\| (\S+) → (\S+)", note)
        assert m, note
        assert abs((_shown(m.group(2)) - _shown(m.group(1))) - float(f"{r['change_value']:.3f}")) < 1.5e-3, (note, r)
        checked += 1
    assert checked, "the planted data have AEG rows whose values do not subtract to their change"
    # the printed screen and a notebook show the same lines
    buf = io.StringIO()
    comp.print(file=buf, width=200, lines=200)
    text = buf.getvalue()
    assert text.startswith("Comparison: biased → debiased") and "Materially better" in text
    from bias_suite.report.compare import comparison_renderables
    from bias_suite.report.headline import render_text

    every = render_text(comparison_renderables(comp, top=1000), 300)  # every change line, not the top five
    shown = [ln for ln in every.splitlines() if "|AEG across templates|" in ln]
    assert shown and all(re.search(r"change [−-]?\d", ln) for ln in shown), shown
    html = comp._repr_html_()
    assert "Comparison: biased → debiased" in html and "<pre>" in html
    sub = comp[comp["change"] == "improved"]  # a frame made from it is a table
    assert "<pre>" not in sub._repr_html_() and "<table" in sub._repr_html_()


def _two_class_data(J=40, shift=0.0, seed=0):
    """Two classes, four groups of two terms; ``shift`` adds to the positive
    probability of every g0 example (no clipping: probabilities stay in [0.1, 0.85])."""
    rng = np.random.default_rng(seed)
    rows = []
    for j in range(J):
        base = rng.uniform(0.1, 0.75)
        label = "positive" if rng.random() < 0.5 else "negative"
        for g in ("g0", "g1", "g2", "g3"):
            for k in range(2):
                p = base + rng.normal(0, 0.02) + (shift if g == "g0" else 0.0)
                rows.append({"id": f"{j}-{g}-{k}", "template": f"t{j}", "attribute": "identity", "group": g,
                             "term": f"{g}_{k}", "text": f"sentence {j} about {g}_{k}", "label": label,
                             "probs": {"negative": 1 - p, "positive": p}})
    return pd.DataFrame(rows)


def test_the_resamples_are_paired():
    """A shift of 0.1 more for every g0 example (0.05 in the baseline, 0.15
    in the candidate) moves the mean counterfactual difference of g0 and each
    other group by exactly 0.1 in every resample: with the same resamples for
    both models the change's interval has no width (unpaired resamples would
    give it the width of two intervals). Templates only: with the terms
    resampled too, a template mean may rest on one term, whose noise can
    flip the sign of |mean f(a) - mean f(b)| in the baseline, so the change
    of that distance is no longer exactly the shift."""
    base, cand = _two_class_data(shift=0.05), _two_class_data(shift=0.15)
    comp = compare(base, cand, bootstrap=100, metrics=["CFGap", "AvgScoreDiff"], resample_terms=False)
    rows = comp[comp["group"].isin(["g0|g1", "g0|g2", "g0|g3"]) & (comp["class"] == "positive")]
    assert len(rows) == 6
    signed = rows[rows["metric"] == "AvgScoreDiff"]
    assert np.allclose(signed["change_value"], 0.1, atol=1e-9), signed[["group", "change_value"]]
    assert np.allclose(rows["ci_high"] - rows["ci_low"], 0, atol=1e-9), rows[["metric", "group", "ci_low", "ci_high"]]
    assert (rows["change"] == "worsened").all()
    # and the same seed gives the same resamples whatever the predictions: the bootstrap's replicates
    # of the two models differ by the shift alone
    from bias_suite.evaluation import evaluate_with_replicates

    _, b1 = evaluate_with_replicates(base, metrics=["AvgScoreDiff"], bootstrap=30, attribution=False,
                                     resample_terms=False)
    _, b2 = evaluate_with_replicates(cand, metrics=["AvgScoreDiff"], bootstrap=30, attribution=False,
                                     resample_terms=False)
    k = np.flatnonzero((b1.keys["group"] == "g0|g1").to_numpy() & (b1.keys["class"] == "positive").to_numpy())[0]
    np.testing.assert_allclose(b2.replicates[k] - b1.replicates[k], 0.1, atol=1e-9)


# ----------------------------------------------------------------- pairing
def test_unpaired_and_mismatched_examples_are_one_clear_error():
    base = _two_class_data(J=12)
    cand = base.drop(index=[0, 5, 9]).reset_index(drop=True)
    with pytest.raises(PairingError) as e:
        compare(base, cand, bootstrap=10)
    msg = str(e.value)
    assert "3 examples of baseline have no id in candidate (e.g. '0-g0-0')" in msg and "--inner" in msg, msg
    other = base.copy()
    other.loc[7, "text"] = "another sentence"
    with pytest.raises(PairingError, match=r"1 ids hold different examples \(e.g. id '0-g3-1': text "
                                           r"'sentence 0 about g3_1' in baseline, 'another sentence' in candidate\)"):
        compare(base, other, bootstrap=10)


def test_inner_keeps_the_common_examples_and_says_how_many_were_dropped():
    base = _two_class_data(J=12)
    cand = base.drop(index=[0, 5, 9]).reset_index(drop=True)
    extra = pd.DataFrame([dict(base.iloc[0], id="new-1")])
    cand = pd.concat([cand, extra], ignore_index=True)
    comp = compare(base, cand, inner=True, bootstrap=20)
    assert comp.details.dropped == {"baseline": 3, "candidate": 1}
    assert len(comp.details.scored["candidate"]["classification"]) == len(base) - 3
    assert len(comp) and set(comp["change"]) <= {"unchanged", "inconclusive"}


# ----------------------------------------------------------------- runs and the command line


SENTIMENT = {"threats": -2, "bullied": -2, "harassed": -2, "assaulted": -2.5, "kind": 1.5, "generous": 2,
             "peaceful": 1.5, "great": 2, "love": 2, "wonderful": 2.5, "helped": 1.5, "terrible": -2.5, "hate": -2.5}


@pytest.fixture(scope="module")
def religion_runs(tmp_path_factory):
    """Two run folders of the bundled religion suite: a lexicon model that
    ignores identity terms, and the same lexicon scoring 'Muslim(s)' negatively."""
    from bias_suite.models.base import CallablePredictor
    from bias_suite.pipeline import run

    d = tmp_path_factory.mktemp("runs")
    fair = run(["sentiment_religion"], CallablePredictor(lexicon_model(SENTIMENT), CLASSES), d / "fair", progress=False,
               cache=False, bootstrap=0, invariance=False)
    biased = run(["sentiment_religion"], CallablePredictor(lexicon_model({**SENTIMENT, "muslim": -1.5, "muslims": -1.5}),
                                                             CLASSES), d / "biased", progress=False, cache=False,
                 bootstrap=0, invariance=False)
    return d, fair, biased


def _invoke(args):
    return CliRunner().invoke(app, args, env={"COLUMNS": "100"})


def test_cli_fail_on_worsened_exits_3_when_the_candidate_adds_a_bias(religion_runs):
    d, _, _ = religion_runs
    r = _invoke(["compare", str(d / "fair"), str(d / "biased"), "--out", str(d / "cmp"), "--bootstrap", "100",
                 "--fail-on", "worsened", "--report"])
    assert r.exit_code == 3, r.output
    assert "--fail-on worsened" in r.output and "Materially worse" in r.output
    lines = r.output.splitlines()
    assert len(lines) <= 61, len(lines)  # 60 lines of comparison and the gate's line
    worse = [ln for ln in lines if "muslim" in ln]
    assert worse, r.output
    rows = pd.read_json(d / "cmp" / "comparison.jsonl", lines=True, dtype=False)
    bad = rows[rows["change"] == "worsened"]
    about = bad["group"].map(lambda g: _involves(g, "muslim") or not isinstance(g, str)) | (bad["source"] == "muslim")
    assert len(bad) and about.all(), bad.loc[~about, ["metric", "group", "source", "reason"]]
    assert not (rows["change"] == "improved").any()
    meta = json.loads((d / "cmp" / "comparison.json").read_text())
    assert meta["baseline"] == meta["models"][0]["name"] and set(meta["files"]) == {
        "comparison.jsonl", "comparison.csv", "comparison.html"}
    assert list(rows.columns[:5]) == ["baseline", "candidate", "task", "metric", "family"]
    html = (d / "cmp" / "comparison.html").read_text()
    assert "Changes per attribute and topic" in html and html.count("its own verdicts on the paired examples") == 2
    # the same comparison the other way round: the bias is removed
    r = _invoke(["compare", str(d / "biased"), str(d / "fair"), "--out", str(d / "back"), "--bootstrap", "100",
                 "--fail-on", "worsened"])
    assert r.exit_code == 0, r.output
    back = pd.read_json(d / "back" / "comparison.jsonl", lines=True, dtype=False)
    assert (back["change"] == "improved").sum() == len(bad) and not (back["change"] == "worsened").any()


def test_run_with_a_baseline_writes_the_comparison_into_the_run_folder(religion_runs):
    from bias_suite.models.base import CallablePredictor
    from bias_suite.pipeline import run

    d, fair, _ = religion_runs
    out = d / "again"
    res = run(["sentiment_religion"], CallablePredictor(lexicon_model(SENTIMENT), CLASSES), out, progress=False,
              cache=False, bootstrap=30, invariance=False, baseline=d / "fair")
    comp = res.comparison
    assert len(comp) and set(comp["change"]) <= {"unchanged", "inconclusive"}
    assert (comp["change_value"].dropna() == 0).all()
    meta = json.loads((out / "run.json").read_text())
    assert {"comparison.jsonl", "comparison.csv", "comparison.json"} <= set(meta["files"])
    assert meta["comparison"]["changes"]["worsened"] == 0 and meta["group_orders"]["religion"][0] == "christian"
    from bias_suite.io.results import run_file

    assert run_file(out, "comparison.jsonl") == out / "comparison.jsonl"  # listed, size and SHA-256 as written


def test_python_api_and_several_models(religion_runs):
    import bias_suite

    d, fair, biased = religion_runs
    comp = bias_suite.compare(fair, biased, d / "fair" / "scored.jsonl", bootstrap=30)
    assert isinstance(comp, bias_suite.Comparison)
    assert comp.details.models == [fair.model, biased.model, "scored"] or len(set(comp.details.models)) == 3
    rank = comp.ranking()
    assert list(rank["rank"]) == [1, 2, 3] and rank["model"].iloc[-1] == comp.details.models[1]
    grid = comp.models()
    assert set(grid["model"]) == set(comp.details.models) and "religion" in set(grid["attribute"])
    sm = comp.summary()
    assert list(sm.columns[:5]) == ["candidate", "attribute", "topic", "change", "size"]
    from bias_suite.stats.topics import TOPIC_ORDER

    for _, part in sm.groupby("candidate"):
        topics = list(part["topic"])
        assert topics == sorted(topics, key=lambda t: TOPIC_ORDER.index(t) if t in TOPIC_ORDER else 99)
    f = comp.findings("worsened")
    assert len(f) and (f["candidate"] == comp.details.models[1]).all()


def test_compare_takes_the_runs_resample_count_unless_told(tmp_path):
    """Two runs made with bootstrap=50 (and seed 3) are compared with B = 50
    and seed 3, in Python and on the command line; an explicit value, or an
    options object, overrides the runs'; a run without intervals records no
    B, so its comparison takes the default."""
    from bias_suite.models.base import CallablePredictor
    from bias_suite.options import DEFAULT_B, EvaluationOptions
    from bias_suite.pipeline import run

    quick = dict(progress=False, cache=False, invariance=False, significance=False, bernstein=False,
                 metrics=["CFGap"])
    for name, lex in (("a", SENTIMENT), ("b", {**SENTIMENT, "muslim": -1.5})):
        run(["sentiment_religion"], CallablePredictor(lexicon_model(lex), CLASSES), tmp_path / name, bootstrap=50,
            seed=3, **quick)
    comp = compare(tmp_path / "a", tmp_path / "b", metrics=["CFGap"])
    assert comp.details.settings["bootstrap"] == 50 and comp.details.settings["seed"] == 3
    assert {"bootstrap", "seed"} <= set(comp.details.settings["from_runs"])
    told = compare(tmp_path / "a", tmp_path / "b", metrics=["CFGap"], bootstrap=20)
    assert told.details.settings["bootstrap"] == 20 and "bootstrap" not in told.details.settings["from_runs"]
    opts = compare(tmp_path / "a", tmp_path / "b", options=EvaluationOptions(bootstrap=25, metrics=["CFGap"]))
    assert opts.details.settings["bootstrap"] == 25 and opts.details.settings["seed"] == 0
    r = _invoke(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "cmp"), "-q"])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "cmp" / "comparison.json").read_text())["settings"]["bootstrap"] == 50
    r = _invoke(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "cmp30"), "-q",
                 "--bootstrap", "30"])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "cmp30" / "comparison.json").read_text())["settings"]["bootstrap"] == 30
    # without intervals a run records no resample count: the default
    run(["sentiment_religion"], CallablePredictor(lexicon_model(SENTIMENT), CLASSES), tmp_path / "none",
        bootstrap=0, **quick)
    assert compare(tmp_path / "none", tmp_path / "none", metrics=["CFGap"]).details.settings["bootstrap"] == DEFAULT_B


def test_cli_compares_two_tiny_model_runs_of_a_bundled_suite(tmp_path):
    from _tiny_models import make_tiny_classifier

    runs = []
    for seed in (0, 1):
        model = make_tiny_classifier(tmp_path / f"m{seed}", seed=seed)
        out = tmp_path / f"run{seed}"
        r = _invoke(["run", "sentiment_gender", "--model", str(model), "--out", str(out), "-q", "--no-cache",
                     "--bootstrap", "0", "--no-invariance"])
        assert r.exit_code == 0, r.output
        runs.append(out)
    r = _invoke(["compare", str(runs[0]), str(runs[1]), "--out", str(tmp_path / "cmp"), "--bootstrap", "50"])
    assert r.exit_code == 0, r.output
    assert len(r.output.splitlines()) <= 60
    assert re.search(r"Comparison: .*m0 →\s.*m1: \d+ paired examples", r.output, re.S), r.output
    assert "gender" in r.output and "error control" in r.output
    rows = pd.read_json(tmp_path / "cmp" / "comparison.jsonl", lines=True, dtype=False)
    assert set(rows["change"]) <= {"improved", "worsened", "unchanged", "inconclusive"} and len(rows) > 100
    assert rows["task"].eq("classification").all()
    r = _invoke(["compare", str(runs[0]), str(tmp_path / "nothing"), "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "no such run folder or scored file" in r.output
    # the same model again, compared with its first run as it ends: nothing worsened, so the gate passes
    again = tmp_path / "again"
    r = _invoke(["run", "sentiment_gender", "--model", str(tmp_path / "m0"), "--out", str(again), "--no-cache",
                 "--bootstrap", "0", "--no-invariance", "--baseline", str(runs[0]), "--fail-on", "worsened"])
    assert r.exit_code == 0, r.output
    shown = [ln for ln in r.output.replace("\r", "\n").splitlines() if ln.strip() and "Predicting" not in ln]
    print("\n".join(shown))
    assert len(shown) <= 60 and "Comparison:" in r.output and "0 worsened" in r.output
    assert (again / "comparison.jsonl").is_file() and "comparison" in json.loads((again / "run.json").read_text())
    r = _invoke(["run", "sentiment_gender", "--model", str(tmp_path / "m0"), "--out", str(tmp_path / "y"),
                 "--fail-on", "worsened"])
    assert r.exit_code == 2 and "--fail-on worsened needs --baseline" in r.output


def _ner_data(miss: float, J=12, seed=0):
    """Sequence-labelling scored examples: one-token person names of three
    groups in J templates; the tagger misses a name of group 'a' with
    probability ``miss`` (the same random draws for every ``miss``)."""
    rng = np.random.default_rng(seed)
    rows = []
    for j in range(J):
        noise = rng.random(6)
        for k, (g, name) in enumerate([(g, f"{g}{t}") for g in ("a", "b", "c") for t in range(2)]):
            hit = noise[k] >= (miss if g == "a" else 0.1)
            p = 0.9 if hit else 0.2
            rows.append(dict(id=f"{j}-{name}", template=f"t{j}", attribute="names", group=g, term=name,
                             tokens=[name, "went", f"home{j}"], tags=["U-PER", "O", "O"],
                             pred_tags=["U-PER" if hit else "O", "O", "O"], term_span=[0, 1],
                             tag_probs=[{"U-PER": p, "O": 1 - p}, {"U-PER": 0.0, "O": 1.0}, {"U-PER": 0.0, "O": 1.0}]))
    return pd.DataFrame(rows)


def test_sequence_labelling_models_compare_on_paired_resamples():
    """The NER path (each resample evaluated again) keeps its replicates and
    signed bases too: a tagger compared with itself changes nothing, and one
    that stops missing group 'a' changes only rows about 'a' or all groups."""
    base = _ner_data(0.7)
    same = compare(base, base, bootstrap=20, metrics=["FNED", "CFGap", "TPR-Gap"])
    assert set(same["task"]) == {"sequence_labelling"}
    assert set(same["change"]) <= {"unchanged", "inconclusive"} and (same["change_value"].dropna() == 0).all()
    assert same["ci_low"].notna().sum() > 10
    better = compare(base, _ner_data(0.1), bootstrap=20, metrics=["FNED", "CFGap", "TPR-Gap"],
                     resample_terms=False)  # 20 resamples: the templates' variation alone, for power
    moved = better[better["change_value"].abs() > 1e-12]
    assert len(moved) and moved["group"].map(lambda g: not isinstance(g, str) or _involves(g, "a")
                                                      or isinstance(g, str) and "|" not in g).all()
    assert not (better["change"] == "worsened").any()
    fned = better[(better["metric"] == "FNED") & (better["group"] == "a")]
    assert fned["change"].iloc[0] == "improved" and fned["ci_high"].iloc[0] < 0
