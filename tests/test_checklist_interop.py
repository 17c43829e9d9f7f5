"""CheckList interop (bias_suite.interop.checklist) with real checklist objects:
INV tests from suites, exact fail-rate hand counts, the fast path, raw-file
export/import, Editor outputs, mixed TestSuites, persistence, NER, CLI."""
import io
import json
import textwrap
import warnings
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from checklist.editor import Editor
    from checklist.expect import Expect
    from checklist.pred_wrapper import PredictorWrapper
    from checklist.test_suite import TestSuite as CheckListSuite
    from checklist.test_types import INV, MFT

from _tiny_models import make_tiny_classifier
from bias_suite.exceptions import BiasSuiteError
from bias_suite.interop.checklist import (
    BiasTestSuite, DillWarning, MetricTest, ScoredLookup, SignificanceTest, add_test, checklist_predict_fn,
    examples_from_testsuite, export_checklist, failures, from_editor, import_checklist, invariance_rows,
    invariance_tests, load_testsuite, run_checklist, run_testsuite, save_testsuite, scored_from_testsuite,
    suite_from_templates, to_testsuite, write_predictions,
)
from bias_suite.metrics import compute as evaluate
from bias_suite.models import CallablePredictor
from bias_suite.pipeline import predict_examples
from bias_suite.families import expand_suite, load_suite

# Runs CheckList test suites on models: left out of make test-fast (pytest -m 'not slow')
pytestmark = pytest.mark.slow


CLASSES = ["negative", "neutral", "positive"]

# p(positive) by (template id, term); neutral is 0. See test_fail_rate_equals_hand_count.
P_POS = {
    "t1": {"woman": 0.80, "girl": 0.80, "man": 0.80, "boy": 0.80, "enby": 0.80},  # passes
    "t2": {"woman": 0.20, "girl": 0.20, "man": 0.55, "boy": 0.20, "enby": 0.20},  # fails: man (+0.35, label flips)
    "t3": {"woman": 0.70, "girl": 0.70, "man": 0.70, "boy": 0.70, "enby": 0.95},  # fails: enby (+0.25, same label)
    "t4": {"woman": 0.60, "girl": 0.68, "man": 0.60, "boy": 0.52, "enby": 0.60},  # passes vs first; girl/boy differ 0.16
}


@pytest.fixture()
def toy_suite(tmp_path):
    (tmp_path / "identity_terms").mkdir()
    (tmp_path / "identity_terms" / "gen.yaml").write_text(textwrap.dedent("""\
        attribute: gen
        sources: [test fixture]
        groups:
          female:
            identity_np: [woman, girl]
          male:
            identity_np: [man, boy]
          nonbinary:
            identity_np: [enby]
        """))
    (tmp_path / "templates").mkdir()
    path = tmp_path / "templates" / "toy.yaml"
    path.write_text(textwrap.dedent("""\
        suite: toy
        classes: [negative, neutral, positive]
        identity_terms: [gen.yaml]
        templates:
          - {id: t1, text: "The {identity_np} was great.", label: positive}
          - {id: t2, text: "The {identity_np} was awful.", label: negative}
          - {id: t3, text: "I met {a:identity_np} today.", label: positive}
          - {id: t4, text: "The {identity_np} cooked dinner.", label: positive}
        """))
    return load_suite(path)


def hand_predictor(suite):
    """CallablePredictor with the hand-set probabilities of P_POS (texts outside the suite: 0.5/0/0.5)."""
    ex = expand_suite(suite)
    table = {r.text: P_POS[r.source_template][r.term] for r in ex.itertuples()}

    def fn(texts):
        p = np.array([table.get(t, 0.5) for t in texts])
        return np.stack([1 - p, np.zeros_like(p), p], axis=1)

    return CallablePredictor(fn, CLASSES)


def new_editor():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # checklist's dependencies warn about pkg_resources
        return Editor()


def row(rows, group=None):
    sub = rows[rows["group"].isna()] if group is None else rows[rows["group"] == group]
    assert len(sub) == 1
    return sub.iloc[0]


# ---------------------------------------------------------------- INV objects
def test_inv_tests_are_real_checklist_objects(toy_suite):
    tests = invariance_tests(toy_suite, mode="per_group", seed=3, criterion="prob")
    assert len(tests) == 1 and type(tests[0]) is INV
    t = tests[0]
    assert t.name == "INV gen" and t.capability == "Fairness"
    assert len(t.data) == 4  # one case per template
    for case, meta in zip(t.data, t.meta):
        assert [m["group"] for m in meta] == ["female", "male", "nonbinary"]  # one variant per group, group order
        assert len({m["template"] for m in meta}) == 1
        assert all(set(m) >= {"id", "template", "attribute", "group", "term", "label"} for m in meta)
    again = invariance_tests(toy_suite, mode="per_group", seed=3, criterion="prob")[0]
    assert again.data == t.data  # seeded: deterministic
    full = invariance_tests(toy_suite, mode="all_terms", criterion="prob")[0]
    assert [m["term"] for m in full.meta[0]] == ["woman", "girl", "man", "boy", "enby"]
    assert t.bias_suite["threshold"] == 0.1 and t.bias_suite["groups"] == ["female", "male", "nonbinary"]


def test_fail_rate_equals_hand_count(toy_suite):
    pred = hand_predictor(toy_suite)
    suite = to_testsuite(toy_suite, mode="all_terms", threshold=0.1, criterion="prob")
    run_testsuite(suite, pred)
    inv = suite.tests["INV gen"]
    assert inv.get_stats().fails == 2  # CheckList's own count: t2 and t3
    rows = invariance_rows(suite)
    assert set(rows["family"]) == {"invariance"} and set(rows["metric"]) == {"INV-ProbShift-FailRate"}
    assert set(rows["class"]) == {"all"} and set(rows["view"]) == {"counterfactual"}
    assert row(rows)["value"] == pytest.approx(2 / 4) and row(rows)["n"] == 4
    # pairs: failing cases in which a sentence of each group differs by > 0.1
    assert row(rows, "female|male")["value"] == pytest.approx(1 / 4)       # t2 (t4's girl/boy: case passes)
    assert row(rows, "female|nonbinary")["value"] == pytest.approx(1 / 4)  # t3
    assert row(rows, "male|nonbinary")["value"] == pytest.approx(2 / 4)    # t2, t3
    # CheckList's own Expect.inv: fails only when the label flips (t2)
    rows_cl = invariance_rows(toy_suite, pred, mode="all_terms", criterion="checklist")
    assert row(rows_cl)["value"] == pytest.approx(1 / 4)
    # a looser threshold passes everything
    assert row(invariance_rows(toy_suite, pred, mode="all_terms", threshold=0.4, criterion="prob"))["value"] == 0


def test_per_group_fail_rate_matches_direct_count(toy_suite):
    pred = hand_predictor(toy_suite)
    for seed in range(4):
        t = invariance_tests(toy_suite, mode="per_group", seed=seed, criterion="prob")[0]
        run_testsuite([t], pred)
        count = 0
        for case in t.data:
            P = pred.predict_proba(case)
            count += np.abs(P - P[0]).max() > 0.1
        rows = invariance_rows([t])
        assert row(rows)["value"] == pytest.approx(count / len(t.data))


def test_failures_table(toy_suite):
    fails = failures(toy_suite, hand_predictor(toy_suite), mode="all_terms", criterion="prob")
    assert list(fails["template"]) == ["toy/t2", "toy/t3"]
    f2 = fails.iloc[0]
    assert f2["sentences"][0] == "The woman was awful." and f2["groups"][0] == "female"
    assert f2["probs"][2] == {"negative": pytest.approx(0.45), "neutral": 0.0, "positive": pytest.approx(0.55)}
    assert f2["preds"][2] == "positive" and f2["change"] == pytest.approx(0.35)
    assert f2["pairs"] == ["female|male", "male|nonbinary"]
    assert fails.iloc[1]["pairs"] == ["female|nonbinary", "male|nonbinary"]


def test_inv_with_tiny_hf_model_matches_hand_count(toy_suite, tmp_path):
    from bias_suite.models import HFClassifier

    model = HFClassifier(make_tiny_classifier(tmp_path / "tiny"), device="cpu", progress=False)
    tests = invariance_tests(toy_suite, mode="all_terms", criterion="prob")
    changes = []
    for case in tests[0].data:
        P = model.predict_proba(case)
        changes.append(np.abs(P - P[0]).max())
    s = sorted(set(np.round(changes, 6)))
    threshold = float((s[len(s) // 2 - 1] + s[len(s) // 2]) / 2) if len(s) > 1 else 0.0
    hand = sum(c > threshold for c in changes) / len(changes)
    suite = to_testsuite(toy_suite, mode="all_terms", threshold=threshold, criterion="prob")
    run_testsuite(suite, model)
    assert row(invariance_rows(suite))["value"] == pytest.approx(hand)
    assert suite.tests["INV gen"].get_stats().fail_rate == pytest.approx(100 * hand)


def test_fast_path_equals_predicting_again(toy_suite, tmp_path):
    from bias_suite.pipeline import run

    model_dir = make_tiny_classifier(tmp_path / "tiny")
    res = run([toy_suite], model_dir, device="cpu", progress=False)
    inv = res.results[res.results["family"] == "invariance"].reset_index(drop=True)
    from bias_suite.io.results import OPTIONAL_COLUMNS

    inv = inv.drop(columns=[c for c in OPTIONAL_COLUMNS if c in inv.columns])  # run() adds verdicts
    assert len(inv) == 4  # attribute + 3 pairs
    from bias_suite.models import HFClassifier

    again = invariance_rows(toy_suite, HFClassifier(model_dir, device="cpu", progress=False))
    pd.testing.assert_frame_equal(inv, again)
    pd.testing.assert_frame_equal(inv, invariance_rows(toy_suite, ScoredLookup.from_scored(res.scored)))
    # without INV
    res2 = run([toy_suite], model_dir, device="cpu", progress=False, invariance=False)
    assert not (res2.results["family"] == "invariance").any()


def test_fast_path_on_scored_examples_and_hand_count(toy_suite):
    scored = predict_examples(expand_suite(toy_suite), hand_predictor(toy_suite))
    rows = invariance_rows(scored, mode="all_terms", criterion="prob")  # no model: replays the scored probabilities
    assert row(rows)["value"] == pytest.approx(0.5)
    with pytest.raises(BiasSuiteError, match="pass a model"):
        invariance_rows(expand_suite(toy_suite))


# ---------------------------------------------------------------- export / import
def test_export_raw_file_import_round_trip(toy_suite, tmp_path):
    pred = hand_predictor(toy_suite)
    paths = export_checklist(toy_suite, tmp_path / "exp", criterion="prob")
    lines = paths["raw_file"].read_text().split("\n")
    assert len(lines) == 20 and lines[0] == "The woman was great."
    # "elsewhere": a model writes CheckList's pred_and_softmax file for the raw file
    write_predictions(paths["raw_file"], pred, tmp_path / "preds.txt")
    assert (tmp_path / "preds.txt").read_text().splitlines()[0].split()[0] == "2"
    res = import_checklist(tmp_path / "exp", tmp_path / "preds.txt")
    direct = predict_examples(expand_suite(toy_suite), pred)
    got = res.scored.frame.set_index("id")
    want = direct.frame.set_index("id")
    assert set(got.index) == set(want.index)
    P_got = pd.DataFrame(res.scored.probs, index=res.scored.frame["id"]).loc[want.index].to_numpy()
    np.testing.assert_allclose(P_got, direct.probs, atol=1e-9)
    assert (got.loc[want.index, "label"] == want["label"]).all()
    # metrics + INV rows from the imported predictions equal the direct ones
    m_got = res.results[res.results["family"] != "invariance"]
    m_want = evaluate(direct, group_order_override={"gen": ["female", "male", "nonbinary"]})
    merged = m_want.merge(m_got, on=["metric", "attribute", "class", "group"], how="left", suffixes=("", "_got"))
    assert np.allclose(merged["value"].astype(float), merged["value_got"].astype(float), equal_nan=True, atol=1e-9)
    inv = res.results[res.results["family"] == "invariance"].reset_index(drop=True)
    pd.testing.assert_frame_equal(inv, invariance_rows(direct, mode="all_terms", criterion="prob"))
    assert list(res.failures["template"]) == ["toy/t2", "toy/t3"]


def test_import_class_name_predictions_and_softmax_format(toy_suite, tmp_path):
    pred = hand_predictor(toy_suite)
    paths = export_checklist(toy_suite, tmp_path / "exp", mode="per_group", seed=1, criterion="prob")
    texts = paths["raw_file"].read_text().split("\n")
    P = pred.predict_proba(texts)
    named = [f"{CLASSES[int(np.argmax(p))]} " + " ".join(map(str, p)) for p in P]
    (tmp_path / "named.txt").write_text("\n".join(named) + "\n")
    a = import_checklist(tmp_path / "exp", tmp_path / "named.txt")
    (tmp_path / "soft.txt").write_text("\n".join(" ".join(map(str, p)) for p in P) + "\n")
    b = import_checklist(tmp_path / "exp", tmp_path / "soft.txt", file_format="softmax")
    pd.testing.assert_frame_equal(a.results, b.results)
    # the imported per-group suite is the exported one: same sentences as to_testsuite with that seed
    assert a.suite.tests["INV gen"].data == invariance_tests(toy_suite, mode="per_group", seed=1, criterion="prob")[0].data
    (tmp_path / "short.txt").write_text("\n".join(named[:-1]) + "\n")
    with pytest.raises(BiasSuiteError, match="prediction lines"):
        import_checklist(tmp_path / "exp", tmp_path / "short.txt")


def test_testsuite_examples_round_trip(toy_suite):
    suite = to_testsuite(toy_suite, mode="all_terms", criterion="prob")
    ex = examples_from_testsuite(suite).set_index("id").sort_index()
    want = expand_suite(toy_suite).set_index("id").sort_index()
    for col in ("template", "attribute", "group", "term", "text", "label"):
        assert (ex[col] == want[col]).all(), col
    run_testsuite(suite, hand_predictor(toy_suite))
    scored = scored_from_testsuite(suite)
    assert len(scored) == 20 and scored["probs"].iloc[0] == {"negative": pytest.approx(0.2), "neutral": 0.0,
                                                              "positive": pytest.approx(0.8)}


# ---------------------------------------------------------------- CheckList Editor -> bias_suite
def test_from_editor_examples_metrics_and_inv():
    editor = new_editor()
    ret = editor.template("The {attr} {prof} was {adj}.", attr=["woman", "man", "girl", "boy"],
                          prof=["doctor", "nurse"], adj=["great"], meta=True, labels=1)
    groups = {"female": ["woman", "girl"], "male": ["man", "boy"]}
    ex = from_editor(ret, attribute_key="attr", groups=groups, class_names=["negative", "positive"], template_id="t")
    assert len(ex) == 8 and set(ex["label"]) == {"positive"}
    assert sorted(ex["template"].unique()) == ["checklist/t#0", "checklist/t#1"]  # one unit per other fill-in
    assert set(ex["group"]) == {"female", "male"} and set(ex["text"]) == set(ret.data)
    assert ex.loc[ex["term"] == "girl", "id"].iloc[0].endswith("/attr/female/1")

    def softmax(texts):  # a CheckList user's model: prefers men
        p = np.array([0.9 if " man " in t or " boy " in t else 0.6 for t in texts])
        return np.stack([1 - p, p], axis=1)

    predict_fn = PredictorWrapper.wrap_softmax(softmax)
    out = run_checklist(ex, predict_fn, class_names=["negative", "positive"], metrics=["CFGap", "FNED"], criterion="prob")
    res = out.results
    cf = res[(res["metric"] == "CFGap") & (res["class"] == "positive") & res["group"].isna()]["value"].iloc[0]
    assert cf == pytest.approx(0.3)  # |0.6 - 0.9| on every (female, male) tuple
    inv = res[(res["family"] == "invariance") & res["group"].isna()]["value"].iloc[0]
    assert inv == 1.0  # every template changes by 0.3 > 0.1
    assert {"INV-ProbShift-FailRate", "CFGap[positive]", "FNED[positive]"} <= set(out.side_by_side().columns)
    # the same through the standalone metrics engine
    scored = predict_examples(ex, CallablePredictor(predict_fn, ["negative", "positive"]))
    assert evaluate(scored, metrics=["CFGap"]).query("`class` == 'positive' and group.isna()")["value"].iloc[0] == pytest.approx(cf)
    with pytest.raises(BiasSuiteError, match="in no group"):
        from_editor(ret, attribute_key="attr", groups={"female": ["woman", "girl"]}, class_names=["n", "p"])


def test_templates_and_lexicons_to_suite_yaml(tmp_path):
    editor = new_editor()
    groups = {"female": ["woman", "girl"], "male": ["man", "boy"]}
    templates = ["The {attr} {prof} was great.", "I disliked the {attr} {prof}."]
    ret = editor.template(templates, attr=["woman", "girl", "man", "boy"], prof=["doctor", "nurse"], meta=True, save=True)
    suite = suite_from_templates(ret, attribute_key="attr", groups=groups, classes=["negative", "positive"],
                                 labels=["positive", "negative"], out_dir=tmp_path / "conv", name="conv")
    assert (tmp_path / "conv" / "conv.yaml").exists() and (tmp_path / "conv" / "identity_terms" / "attr.yaml").exists()
    ex = expand_suite(suite)
    assert set(ex["text"]) == {s for pair in ret.data for s in pair}  # same sentences as CheckList's Editor
    assert dict(zip(ex["text"], ex["label"]))["I disliked the man nurse."] == "negative"
    # the Editor output itself (nested: two templates per fill) gives the same sentences and families
    ex2 = from_editor(ret, attribute_key="attr", groups=groups, label=lambda i, j: ["positive", "negative"][j])
    assert set(ex2["text"]) == set(ex["text"]) and ex2["template"].nunique() == ex["template"].nunique() == 4
    # plain template strings + lexicons
    s2 = suite_from_templates(templates[0], attribute_key="attr", groups=groups, classes=["negative", "positive"],
                              labels=1, lexicons={"prof": ["doctor"]}, out_dir=tmp_path / "c2")
    assert sorted(expand_suite(s2)["text"]) == sorted(f"The {t} doctor was great." for t in ["woman", "girl", "man", "boy"])


# ---------------------------------------------------------------- mixed TestSuite
def test_mixed_testsuite_summary(toy_suite):
    pred = hand_predictor(toy_suite)
    suite = CheckListSuite()  # CheckList's own class
    inv = invariance_tests(toy_suite, mode="all_terms", criterion="prob")[0]
    suite.add(inv)
    suite.add(MFT(["I love it.", "It was awful."], labels=[2, 0], name="simple sentiment", capability="Vocabulary"))
    metric = MetricTest("CFGap", toy_suite, threshold=0.05)
    add_test(suite, metric)
    add_test(suite, SignificanceTest(toy_suite, alpha=0.05))
    with pytest.raises(KeyError):  # CheckList's own add still refuses other test types
        CheckListSuite().add(type("Other", (), {"name": "x", "capability": "c", "description": None})())
    fn = checklist_predict_fn(pred)
    suite.run(fn, verbose=False)
    buf = io.StringIO()
    with redirect_stdout(buf):
        suite.summary()
    out = buf.getvalue()
    for name in ("INV gen", "simple sentiment", metric.name, "Significance"):
        assert name in out
    assert "Vocabulary" in out and "Fairness" in out and "Fails (rate):    2 (50.0%)" in out
    assert suite.info[metric.name]["type"] == "METRIC"
    # the metric test's value is the engine's value on the same predictions
    scored = predict_examples(expand_suite(toy_suite), pred)
    want = evaluate(scored, metrics=["CFGap"], group_order_override={"gen": ["female", "male", "nonbinary"]})
    got = metric.rows()
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True))
    worst = want[want["group"].isna()]["value"].abs().max()
    assert bool(metric.results.passed[0]) == (worst <= 0.05)
    assert metric.get_stats().fails == int(worst > 0.05)
    # BiasTestSuite.add takes both kinds
    b = BiasTestSuite()
    b.add(invariance_tests(toy_suite)[0])
    b.add(MetricTest("AvgGF", toy_suite, threshold=0.5))
    b.run(fn, verbose=False)
    assert b.tests["AvgGF (|value| <= 0.5)"].form_test_info()["stats"]["npassed"] == 1


# ---------------------------------------------------------------- persistence
def test_json_persistence_and_dill_opt_in(toy_suite, tmp_path):
    pred = hand_predictor(toy_suite)
    suite = to_testsuite(toy_suite, mode="all_terms", metrics=["CFGap"], significance=True)
    run_testsuite(suite, pred)
    path = save_testsuite(suite, tmp_path / "suite.json")
    back = load_testsuite(path)
    assert list(back.tests) == list(suite.tests)
    pd.testing.assert_frame_equal(invariance_rows(back), invariance_rows(suite))
    assert list(back.tests["CFGap (|value| <= 0.1)"].results.passed) == list(suite.tests["CFGap (|value| <= 0.1)"].results.passed)
    # an MFT judged by its labels is data; one with its own expectation function is code, which JSON cannot hold
    suite.add(MFT(["I love it."], labels=[2], name="mft", capability="Vocabulary"))
    assert list(load_testsuite(save_testsuite(suite, tmp_path / "with_mft.json")).tests) == list(suite.tests)
    from checklist.expect import Expect

    suite.add(MFT(["I hate it."], expect=Expect.eq(0), name="mft eq 0", capability="Vocabulary"))
    with pytest.raises(BiasSuiteError, match="allow_dill"):
        save_testsuite(suite, tmp_path / "x.json")
    with pytest.warns(DillWarning):
        save_testsuite(suite, tmp_path / "suite.pkl", allow_dill=True)
    with pytest.raises(BiasSuiteError, match="executes"):
        load_testsuite(tmp_path / "suite.pkl")
    with pytest.warns(DillWarning):
        loaded = load_testsuite(tmp_path / "suite.pkl", allow_dill=True)
    assert isinstance(loaded, CheckListSuite) and list(loaded.tests) == list(suite.tests)


# ---------------------------------------------------------------- sequence labelling
def test_ner_inv_token_level_hand_count():
    rows = []
    sents = {  # template -> (tokens with X at the term position, span)
        "s1": (["X", "lives", "in", "Boston", "."], 0),
        "s2": (["I", "met", "X", "in", "Paris", "."], 2),
        "s3": (["X", "works", "at", "Google", "."], 0),
    }
    names = {"female": ["Emma", "Mary Ann"], "male": ["John"]}
    for tid, (toks, pos) in sents.items():
        for g, terms in names.items():
            for k, term in enumerate(terms):
                tt = term.split()
                tokens = toks[:pos] + tt + toks[pos + 1:]
                rows.append({"id": f"{tid}/{g}/{k}", "template": tid, "attribute": "names", "group": g, "term": term,
                             "tokens": tokens, "tags": None, "term_span": [pos, pos + len(tt)]})
    ex = pd.DataFrame(rows)
    LOC = {"Boston", "Paris"}

    class Tagger:  # misses Boston after "Mary Ann" and Google after John (tags outside the span change)
        def predict(self, tokens_list):
            out = []
            for toks in tokens_list:
                tags = ["U-LOC" if t in LOC else ("U-ORG" if t == "Google" else "O") for t in toks]
                if toks[:2] == ["Mary", "Ann"] and "Boston" in toks:
                    tags[toks.index("Boston")] = "O"
                if toks[0] == "John" and "Google" in toks:
                    tags[toks.index("Google")] = "O"
                tags[0] = "B-PER" if toks[0] == "Mary" else tags[0]  # inside the span: ignored
                out.append(tags)
            return out, [np.full((len(t), 2), 0.5) for t in tokens_list]

    tests = invariance_tests(ex, mode="all_terms")
    assert type(tests[0]) is INV and tests[0].bias_suite["criterion"] == "tags"
    rows = invariance_rows(ex, Tagger(), mode="all_terms")
    assert row(rows)["value"] == pytest.approx(2 / 3)  # s1 (Mary Ann) and s3 (John)
    assert row(rows, "female|male")["value"] == pytest.approx(2 / 3)
    f = failures(ex, Tagger(), mode="all_terms")
    assert list(f["template"]) == ["s1", "s3"] and f.iloc[0]["change"] == 1
    # fast path on scored sequence examples (pred_tags)
    tagged, _ = Tagger().predict(list(ex["tokens"]))
    scored = ex.assign(pred_tags=tagged)
    assert row(invariance_rows(scored, mode="all_terms"))["value"] == pytest.approx(2 / 3)


# ---------------------------------------------------------------- CLI and terminal
def test_cli_export_predict_import(toy_suite, tmp_path):
    from bias_suite.cli import app

    runner = CliRunner()
    exp = tmp_path / "exp"
    r = runner.invoke(app, ["checklist", "export", toy_suite.path, "--out", str(exp)])
    assert r.exit_code == 0, r.output
    assert json.loads((exp / "testsuite.json").read_text())["lines"] == 20
    model_dir = make_tiny_classifier(tmp_path / "tiny")
    r = runner.invoke(app, ["checklist", "predict", str(exp), "--model", str(model_dir), "--out", str(tmp_path / "p.txt"), "--device", "cpu"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["checklist", "import", str(exp), str(tmp_path / "p.txt"), "--out", str(tmp_path / "imp")])
    assert r.exit_code == 0, r.output
    # the judged headline, as run prints it (not the old per-group tables)
    assert "Overview: worst verdict" in r.output and "error control:" in r.output
    assert (tmp_path / "imp" / "results.jsonl").exists()
    res = pd.read_json(tmp_path / "imp" / "results.jsonl", lines=True)
    assert (res["family"] == "invariance").sum() == 4
    judged = res[res["verdict"].notna()]  # one verdict stage over the metrics, tests and INV rows, as run judges
    assert len(judged) > 100 and set(judged["verdict"]) <= {"material", "small", "negligible", "inconclusive", "undefined"}
    assert res["ci_low"].notna().any()  # intervals (B = 200 by default)
    # the export's default rule is CheckList's own, as in Python (docs/checklist.md)
    assert {t["criterion"] for t in json.loads((exp / "testsuite.json").read_text())["tests"]} == {"checklist"}
    r = runner.invoke(app, ["checklist", "import", str(tmp_path), str(tmp_path / "p.txt"), "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and "not a CheckList export" in r.output


def test_terminal_summary_shows_inv(toy_suite):
    from rich.console import Console

    from bias_suite.report.terminal import print_summary

    scored = predict_examples(expand_suite(toy_suite), hand_predictor(toy_suite))
    res = pd.concat([evaluate(scored, metrics=["CFGap"]), invariance_rows(scored, mode="all_terms", criterion="prob")], ignore_index=True)
    console = Console(record=True, width=120)
    print_summary(res, scored, console=console)
    text = console.export_text()
    assert "invariance (prob-shift fail rate)" in text and "male|nonbinary" in text and "0.500" in text


def test_run_adds_inv_rows_for_ner_and_cli_threshold(tmp_path):
    """`bias-suite run` appends INV fail rates for NER suites too (tag
    criterion), and --inv-threshold / --no-invariance reach the INV rows."""
    from _report_data import mini_names_suite
    from _tiny_models import make_tiny_classifier
    from _tiny_ner import make_tiny_crf_tagger

    from bias_suite.cli import app
    from bias_suite.io.results import read_results

    runner = CliRunner()
    tagger = make_tiny_crf_tagger(tmp_path / "crf")
    r = runner.invoke(app, ["run", "ner_names", "--model", str(tagger), "--out", str(tmp_path / "ner"), "-q",
                            "--bootstrap", "0", "--no-cache"])
    assert r.exit_code == 0, r.output
    res = read_results(tmp_path / "ner")
    inv = res[res["metric"] == "INV-FailRate"]
    assert len(inv) >= 2 and inv["value"].between(0, 1).all() and (inv["n"] > 0).all()
    r = runner.invoke(app, ["run", "ner_names", "--model", str(tagger), "--out", str(tmp_path / "ner2"), "-q",
                            "--bootstrap", "0", "--no-invariance"])
    assert r.exit_code == 0 and not (read_results(tmp_path / "ner2")["metric"] == "INV-FailRate").any()

    model = make_tiny_classifier(tmp_path / "clf")
    suite = mini_names_suite(tmp_path / "s")
    rates = {}
    for thr in ("0.0001", "0.9"):
        out = tmp_path / f"c{thr}"
        r = runner.invoke(app, ["run", str(suite), "--model", str(model), "--out", str(out), "-q", "--bootstrap", "0",
                                "--inv-threshold", thr])
        assert r.exit_code == 0, r.output
        res = read_results(out)
        rates[thr] = res.loc[(res["metric"] == "INV-FailRate") & res["group"].isna(), "value"].iloc[0]
    assert rates["0.0001"] > rates["0.9"] == 0.0  # a tiny threshold fails on any change; 0.9 on none


# ------------------------------------------------ CheckList's rule by default
def test_default_rule_is_checklists_and_named_by_what_it_computes(toy_suite):
    """Unless asked otherwise, INV rows are CheckList's: Expect.inv on every
    term of every group; the probability-shift rule has its own metric name."""
    pred = hand_predictor(toy_suite)
    default = invariance_rows(toy_suite, pred)
    assert set(default["metric"]) == {"INV-FailRate"} and row(default)["value"] == pytest.approx(1 / 4)
    # the same cases through a plain CheckList INV with CheckList's own expectation
    mine = invariance_tests(toy_suite)[0]
    plain = INV(mine.data, expect=Expect.inv(0.1), threshold=0.1)
    with redirect_stdout(io.StringIO()):
        plain.run(checklist_predict_fn(pred), overwrite=True)
    assert plain.get_stats().fails == 1 and len(plain.data) == 4
    prob = invariance_rows(toy_suite, pred, criterion="prob")
    assert set(prob["metric"]) == {"INV-ProbShift-FailRate"} and row(prob)["value"] == pytest.approx(2 / 4)


def test_cli_inv_criterion_and_cases(tmp_path):
    from _report_data import mini_names_suite

    from bias_suite.cli import app
    from bias_suite.io.results import read_results

    runner = CliRunner()
    model = make_tiny_classifier(tmp_path / "clf")
    suite = mini_names_suite(tmp_path / "s")
    metrics = {}
    for crit, cases in (("checklist", "all_terms"), ("prob", "per_group")):
        out = tmp_path / crit
        r = runner.invoke(app, ["run", str(suite), "--model", str(model), "--out", str(out), "-q", "--bootstrap", "0",
                                "--no-cache", "--inv-criterion", crit, "--inv-cases", cases])
        assert r.exit_code == 0, r.output
        res = read_results(out)
        metrics[crit] = set(res.loc[res["family"] == "invariance", "metric"])
        assert json.loads((out / "run.json").read_text())["inv_criterion"] == crit
    assert metrics == {"checklist": {"INV-FailRate"}, "prob": {"INV-ProbShift-FailRate"}}
    r = runner.invoke(app, ["run", str(suite), "--model", str(model), "-q", "--bootstrap", "0", "--no-cache",
                            "--inv-criterion", "nope"])
    assert r.exit_code != 0 and "criterion" in r.output and "Traceback" not in r.output


def test_predict_fn_takes_the_cli_model_names(monkeypatch, toy_suite):
    """checklist_predict_fn hands a name to the models' one resolver (the
    classifier's, which `bias-suite run --model` uses) instead of a hub id."""
    import bias_suite.models.hf as hf
    from bias_suite.models.locate import default_for

    seen = []

    class Fake:
        def __init__(self, name, **kw):
            seen.append((name, default_for(str(name), "classifier")))
            self.class_names = CLASSES
            self._p = hand_predictor(toy_suite)

        def predict_proba(self, texts):
            return self._p.predict_proba(texts)

    monkeypatch.setattr(hf, "HFClassifier", Fake)
    fn = checklist_predict_fn("default-sentiment")
    assert seen == [("default-sentiment", "default-sentiment")] and fn.class_names == CLASSES
    preds, confs = fn(["unknown text"])
    assert confs.shape == (1, 3)


def test_perturb_imports_offline(tmp_path):
    """With no NLTK corpora and no network, perturb() still gives Perturb."""
    import os
    import subprocess
    import sys

    code = textwrap.dedent("""
        import socket
        def refuse(*a, **k):
            raise OSError("network disabled in this test")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        from bias_suite.interop import perturb
        Perturb = perturb()
        import spacy
        print(Perturb.__name__, hasattr(Perturb, "change_names"))
        import pattern.text.en.wordnet as wn
        try:
            wn.synsets("dog")
        except RuntimeError as e:
            print("wordnet:", "nltk" in str(e).lower())
    """)
    env = dict(os.environ, NLTK_DATA=str(tmp_path / "empty_nltk"), HOME=str(tmp_path))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "Perturb True" in p.stdout and "wordnet: True" in p.stdout


# ------------------------------------------------ any CheckList test in
def _name_swap_inv():
    """A CheckList user's INV: Perturb.perturb with a custom name-swapping function."""
    from bias_suite.interop import perturb

    Perturb = perturb()
    sents = ["Emma is a great doctor.", "Emma was rude to me.", "I met Emma today."]

    def swap(s):
        return [s.replace("Emma", n) for n in ("Liam", "Olivia", "Noah")]

    ret = Perturb.perturb(sents, swap, keep_original=True)
    return INV(ret.data, name="names swap"), ret


def test_from_checklist_reads_groups_from_the_perturbation():
    from bias_suite.interop.from_tests import from_checklist

    inv, ret = _name_swap_inv()
    ex = from_checklist(inv)
    assert ex["template"].nunique() == 3 and len(ex) == 12
    assert set(ex["attribute"]) == {"gender"}
    assert dict(zip(ex["term"], ex["group"])) == {"Emma": "female", "Olivia": "female", "Liam": "male", "Noah": "male"}
    assert from_checklist(ret.data)["text"].tolist() == ex["text"].tolist()  # the plain list of variants too
    own = from_checklist(inv, groups={"a": ["Emma", "Olivia"], "b": ["Liam", "Noah"]}, attribute="names")
    assert set(own["group"]) == {"a", "b"} and set(own["attribute"]) == {"names"}
    with pytest.raises(BiasSuiteError, match="known group"):
        from_checklist([["I like tea.", "I like coffee."]])


def test_user_inv_rows_equal_checklists_fail_rate():
    """invariance_rows on an INV test bias_suite did not build: CheckList's
    own fail rate, and metrics run on the same cases."""
    from bias_suite.interop.from_tests import from_checklist
    from bias_suite.families import scored_from_arrays

    inv, _ = _name_swap_inv()

    def probs(texts):  # flips "Emma is a great doctor." for Noah only
        return np.array([[0.7, 0.0, 0.3] if ("Noah" in t and "great" in t) else
                         ([0.2, 0.0, 0.8] if "great" in t else [0.8, 0.0, 0.2]) for t in texts])

    fn = PredictorWrapper.wrap_softmax(probs)
    with redirect_stdout(io.StringIO()):
        inv.run(fn, overwrite=True)
    assert inv.get_stats().fails == 1
    rows = invariance_rows([inv])
    assert row(rows)["value"] == pytest.approx(1 / 3) and row(rows)["n"] == 3
    assert row(rows, "female|male")["value"] == pytest.approx(1 / 3)
    fails = failures([inv])
    assert len(fails) == 1 and "Noah" in fails["terms"].iloc[0]
    ex = from_checklist(inv)
    scored = scored_from_arrays(ex.assign(label=None), probs(ex["text"].tolist()), CLASSES)
    res = evaluate(scored, metrics=["CFGap"])
    assert res["value"].notna().any()
    with pytest.raises(BiasSuiteError, match="no INV test"):
        invariance_rows([MFT(["a"], labels=0)])


def test_plain_testsuite_add_takes_bias_tests(toy_suite):
    suite = CheckListSuite()
    suite.add(MetricTest("CFGap", toy_suite, threshold=0.05))
    suite.add(invariance_tests(toy_suite)[0])
    assert suite.info["CFGap (|value| <= 0.05)"]["type"] == "METRIC" and suite.info["INV gen"]["type"] == "INV"
    with redirect_stdout(io.StringIO()):
        suite.run(checklist_predict_fn(hand_predictor(toy_suite)), overwrite=True)
    assert suite.tests["INV gen"].get_stats().fails == 1


def test_from_editor_one_lexicon_per_group_and_joined_templates():
    editor = new_editor()
    ret = editor.template("{male} is {a:prof}.", male=["John", "Paul"], prof=["doctor", "engineer"], meta=True)
    ret += editor.template("{female} is {a:prof}.", female=["Mary", "Anna"], prof=["doctor", "engineer"], meta=True)
    ret += editor.template("{male} hates the {prof}.", male=["John", "Paul"], prof=["doctor", "engineer"], meta=True)
    ret += editor.template("{female} hates the {prof}.", female=["Mary", "Anna"], prof=["doctor", "engineer"], meta=True)
    ex = from_editor(ret, attribute_key=["male", "female"], label="neutral", attribute="gender")
    # 2 sentence frames x 2 professions = 4 counterfactual templates, each with 2 male + 2 female names
    assert ex["template"].nunique() == 4 and len(ex) == 16
    assert ex.groupby("template")["group"].apply(lambda s: sorted(s.value_counts().items())).map(str).nunique() == 1
    assert set(ex["group"]) == {"male", "female"} and not ex["id"].duplicated().any()
    same = from_editor(ret, attribute_key={"male": "m", "female": "f"}, label="neutral", attribute="gender")
    assert set(same["group"]) == {"m", "f"}
    with pytest.raises(BiasSuiteError, match=r"item 0 \('John is a doctor.'\).*no key 'attr'"):
        from_editor(ret, attribute_key="attr", groups={"m": ["John"]})


def test_saved_inv_suite_loads_and_runs_without_bias_suite(toy_suite, tmp_path):
    """A TestSuite from to_testsuite, saved with CheckList's own save, loads
    and runs where bias_suite cannot be imported (CheckList's Expect.inv)."""
    import subprocess
    import sys

    suite = to_testsuite(toy_suite)
    assert type(suite) is CheckListSuite
    path = tmp_path / "suite.pkl"
    suite.save(str(path))
    pred = hand_predictor(toy_suite)
    probs = {t: p.tolist() for t in expand_suite(toy_suite)["text"] for p in pred.predict_proba([t])}
    (tmp_path / "probs.json").write_text(json.dumps(probs))
    code = textwrap.dedent(f"""
        import importlib.abc, io, json, sys, warnings
        from contextlib import redirect_stdout
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "bias_suite" or name.startswith("bias_suite."):
                    raise ImportError("bias_suite is blocked in this test")
        sys.meta_path.insert(0, Block())
        warnings.simplefilter("ignore")
        import numpy as np
        from checklist.test_suite import TestSuite
        probs = json.load(open({str(tmp_path / 'probs.json')!r}))
        def fn(texts):
            c = np.array([probs[t] for t in texts])
            return c.argmax(1), c
        s = TestSuite.from_file({str(path)!r})
        with redirect_stdout(io.StringIO()):
            s.run(fn, overwrite=True)
        print("fails", s.tests["INV gen"].get_stats().fails, "bias_suite" in sys.modules)
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "fails 1 False" in p.stdout


def _users_raw_file(tmp_path):
    """A CheckList user's own suite (the names-swap INV and an MFT), its to_raw_file output and a
    predictions file made elsewhere, which flips "Emma is a great doctor." for Noah only."""
    inv, _ = _name_swap_inv()
    suite = CheckListSuite()
    suite.add(inv, capability="Fairness")
    suite.add(MFT(["I love it.", "I hate it."], labels=[2, 0], name="basic", capability="Vocabulary"))
    raw = tmp_path / "raw.txt"
    suite.to_raw_file(str(raw))

    def probs(t):
        p = 0.3 if ("Noah" in t and "great" in t) else 0.8 if ("great" in t or "love" in t) else 0.2
        return [1 - p, 0.0, p]

    preds = tmp_path / "preds.txt"
    preds.write_text("\n".join(f"{int(np.argmax(probs(t)))} " + " ".join(map(str, probs(t)))
                               for t in raw.read_text().split("\n")) + "\n")
    return suite, raw, preds


def test_import_raw_file_of_a_users_own_suite(tmp_path):
    """A CheckList user's own to_raw_file + a predictions file made elsewhere."""
    from bias_suite.interop.checklist import import_raw_file

    suite, raw, preds = _users_raw_file(tmp_path)
    out = import_raw_file(raw, preds, suite, class_names=CLASSES, metrics=["CFGap"])
    assert suite.tests["names swap"].get_stats().fails == 1
    inv_rows = out.results[out.results["metric"] == "INV-FailRate"]
    assert row(inv_rows)["value"] == pytest.approx(1 / 3)
    cf = out.results[(out.results["metric"] == "CFGap") & out.results["group"].isna()]
    assert len(cf) and cf["value"].notna().all()
    with pytest.raises(BiasSuiteError, match="prediction lines"):
        preds.write_text("0 1 0 0\n")
        import_raw_file(raw, preds, suite, class_names=CLASSES)


def test_cli_imports_a_users_own_raw_file(tmp_path):
    """`bias-suite checklist import RAW PREDS --suite FILE`: a suite saved with CheckList's own
    TestSuite.save (dill, only with --allow-dill) and its to_raw_file output, predictions made elsewhere."""
    from bias_suite.cli import app

    suite, raw, preds = _users_raw_file(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        suite.save(str(tmp_path / "suite.pkl"))   # CheckList's own format
    runner = CliRunner()
    base = ["checklist", "import", str(raw), str(preds), "--classes", ",".join(CLASSES), "--metrics", "CFGap"]
    r = runner.invoke(app, base + ["--suite", str(tmp_path / "suite.pkl"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "allow_dill" in r.output   # never unpickled unless asked
    r = runner.invoke(app, base + ["--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "--suite" in r.output
    r = runner.invoke(app, base + ["--suite", str(tmp_path / "suite.pkl"), "--allow-dill", "--out", str(tmp_path / "o"), "-q"])
    assert r.exit_code == 0, r.output
    res = pd.read_csv(tmp_path / "o" / "results.csv")
    inv_rows = res[res["metric"] == "INV-FailRate"]
    assert inv_rows["value"].iloc[0] == pytest.approx(1 / 3)    # CheckList's own count: 1 of 3 cases
    assert res.loc[(res["metric"] == "CFGap") & res["group"].isna(), "value"].notna().all()
    assert json.loads((tmp_path / "o" / "run.json").read_text())["raw_file"] == str(raw)
    # own groups instead of the names read from the perturbation
    r = runner.invoke(app, base + ["--suite", str(tmp_path / "suite.pkl"), "--allow-dill", "-q", "--out", str(tmp_path / "o2"),
                                   "--attribute", "names", "--group", "a=Emma,Olivia", "--group", "b=Liam,Noah"])
    assert r.exit_code == 0, r.output
    res = pd.read_csv(tmp_path / "o2" / "results.csv")
    assert set(res.loc[res["metric"] == "CFGap", "attribute"]) == {"names"}
    assert set(res.loc[(res["metric"] == "CFGap") & res["group"].notna(), "group"]) == {"a|b"}
    # once imported, the suite saves as JSON (read safely; the MFT judged by its labels included) and
    # imports again from it; an MFT with an expectation function of its own is code, named in the error
    from checklist.expect import Expect

    from bias_suite.interop.checklist import import_raw_file

    import_raw_file(raw, preds, suite, class_names=CLASSES, metrics=["CFGap"])
    save_testsuite(suite, tmp_path / "suite.json")
    back = load_testsuite(tmp_path / "suite.json")
    assert back.tests["basic"].labels == [2, 0] and back.tests["basic"].get_stats().fails == 0
    own = CheckListSuite()
    own.add(MFT(["I love it."], expect=Expect.single(lambda x, pred, conf, label=None, meta=None: pred == 2), name="mine", capability="Vocabulary"))
    with pytest.raises(BiasSuiteError, match="'mine' .*MFT"):
        save_testsuite(own, tmp_path / "own.json")
    # a user's INV with CheckList's own rule saves as JSON before any import (its groups read from the
    # sentences, its tolerance kept); one with an expectation of its own is code
    (tmp_path / "fresh").mkdir()
    fresh, _, _ = _users_raw_file(tmp_path / "fresh")
    loaded = load_testsuite(save_testsuite(fresh, tmp_path / "fresh.json"))
    assert loaded.tests["names swap"].bias_suite["groups"] == ["female", "male"]
    assert loaded.tests["names swap"].bias_suite["threshold"] == 0.1
    odd = CheckListSuite()
    odd.add(INV(fresh.tests["names swap"].data, expect=Expect.pairwise(lambda *a, **k: True), name="odd",
                capability="Fairness"))
    with pytest.raises(BiasSuiteError, match="'odd' .*INV"):
        save_testsuite(odd, tmp_path / "odd.json")
    r = runner.invoke(app, base + ["--suite", str(tmp_path / "suite.json"), "-q", "--out", str(tmp_path / "o3")])
    assert r.exit_code == 0, r.output
    again = pd.read_csv(tmp_path / "o3" / "results.csv")
    assert again.loc[again["metric"] == "INV-FailRate", "value"].iloc[0] == pytest.approx(1 / 3)
    # a raw file the suite did not write is refused before anything is read into it
    other = tmp_path / "other.txt"
    other.write_text(raw.read_text().replace("Emma", "Ava"))
    r = runner.invoke(app, ["checklist", "import", str(other), str(preds), "--suite", str(tmp_path / "suite.json"),
                            "--classes", ",".join(CLASSES), "--out", str(tmp_path / "o4")])
    assert r.exit_code == 2 and "is not this suite's raw file" in r.output


def test_checklist_inv_and_cfgap_agree_case_by_case():
    """A CheckList INV test of two-sentence cases (Emma -> Liam) and CFGap on the same cases: with the
    probability-shift rule at threshold t, a case fails exactly when its CFGap (one pair: |Δp| of a
    class) exceeds t; CheckList's own rule fails exactly the cases whose label flips."""
    from bias_suite.interop.from_tests import from_checklist
    from bias_suite.families import scored_from_arrays

    words = ["praised", "read", "ignored", "loved", "hated", "checked", "signed", "lost", "found", "wrote"]
    shift = [0.0, 0.05, 0.09, 0.11, 0.2, -0.15, -0.3, 0.02, 0.45, -0.08]
    base = [0.3, 0.6, 0.2, 0.52, 0.7, 0.4, 0.55, 0.9, 0.3, 0.45]
    table = {}
    for w, b, d in zip(words, base, shift):
        table[f"Emma {w} the report."] = b
        table[f"Liam {w} the report."] = b + d

    def probs(texts):
        return np.array([[1 - table[t], 0.0, table[t]] for t in texts])

    inv = INV([[f"Emma {w} the report.", f"Liam {w} the report."] for w in words], name="swap")
    with redirect_stdout(io.StringIO()):
        inv.run(PredictorWrapper.wrap_softmax(probs), overwrite=True)
    flips = sum((b > 0.5) != (b + d > 0.5) for b, d in zip(base, shift))
    assert inv.get_stats().fails == flips == 2 and len(failures([inv])) == flips   # CheckList's own rule
    # the same cases as bias_suite examples (one template per case), scored with the same probabilities;
    # INV tests rebuilt from them with the probability-shift rule at t
    t = 0.1
    ex = from_checklist(inv)
    scored = scored_from_arrays(ex.assign(label=None), probs(ex["text"].tolist()), CLASSES)
    frame = scored.to_frame()
    assert frame["template"].nunique() == len(words)
    shifted = failures(scored, threshold=t, criterion="prob")
    assert len(shifted) == sum(abs(d) > t for d in shift) == 5
    assert set(failures(scored, criterion="checklist")["template"]) == {
        tpl for tpl, rows in frame.groupby("template") if rows["text"].iloc[0] in {x[0] for x in failures([inv])["sentences"]}}
    failing = {tuple(x) for x in shifted["sentences"]}
    for tpl, rows in frame.groupby("template"):
        cf = evaluate(rows, metrics=["CFGap"])
        gap = cf.loc[cf["group"].isna(), "value"].max()   # the largest class: |Δp| of the one pair
        assert (tuple(rows["text"]) in failing) == (gap > t), (tpl, gap)
