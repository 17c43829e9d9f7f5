"""Examples tables (bias_suite.suites.tables): reading CSV/TSV/JSONL/Parquet/
datasets/CoNLL files as examples, the column mapping, errors that name file,
row and column, and `bias-suite run TABLE` giving the values of the Python path."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from bias_suite.cli import app
from bias_suite.exceptions import BiasSuiteError, ExamplesFormatError, ScoredFormatError
from bias_suite.pipeline import run
from bias_suite.families import expand_suites
from bias_suite.suites import find_suite
from bias_suite.suites.tables import Columns, from_frame, read_conll, read_examples

runner = CliRunner()
LABELS = {"anger": "negative", "sadness": "negative", "fear": "negative", "joy": "positive"}


class LenPredictor:
    """A deterministic classifier: P(positive) from the text's length."""

    class_names = ("negative", "neutral", "positive")
    batch_size = 8

    def predict_proba(self, texts):
        h = np.array([(len(t) % 7) / 7.0 for t in texts])
        return np.stack([(1 - h) / 2, (1 - h) / 2, h], axis=1)

    def fingerprint(self):
        return {"len-predictor": 1}


def eec_like() -> pd.DataFrame:
    """An Equity-Evaluation-Corpus-shaped table: names carry Race, noun
    phrases leave it empty; the counterfactual unit is (Template, Emotion word)."""
    persons = [("he", "male", ""), ("my brother", "male", ""), ("Jamal", "male", "African-American"),
               ("Adam", "male", "European"), ("she", "female", ""), ("my sister", "female", ""),
               ("Ebony", "female", "African-American"), ("Amanda", "female", "European")]
    templates = ["<person> feels <emotion>.", "The situation makes <person> feel <emotion>.",
                 "<person> told us all about the recent <emotion> events.", "I made <person> feel <emotion>."]
    words = {"anger": ["angry", "furious"], "joy": ["happy", "glad"], "sadness": ["sad"], "": [""]}
    rows = []
    for tpl in templates:
        for emo, ws in words.items():
            for w in ws:
                for p, g, r in persons:
                    s = tpl.replace("<person>", p).replace("<emotion>", w or "something").replace("  ", " ")
                    rows.append({"Sentence": s[0].upper() + s[1:], "Template": tpl, "Person": p, "Gender": g,
                                 "Race": r, "Emotion": emo, "Emotion word": w})
    return pd.DataFrame(rows)


EEC_FLAGS = ["--text-column", "Sentence", "--attribute-column", "Gender", "--attribute-column", "Race",
             "--template-column", "Template", "--template-column", "Emotion word", "--term-column", "Person",
             "--label-column", "Emotion", "--label-map", "anger=negative,sadness=negative", "--label-map", "joy=positive"]
EEC_COLUMNS = Columns(text="Sentence", attribute_columns=["Gender", "Race"], template=["Template", "Emotion word"],
                      term="Person", label="Emotion")


# ------------------------------------------------------------------ reading
def test_the_project_format_reads_without_flags_in_every_format(tmp_path):
    ex = expand_suites([find_suite("sentiment_gender")])
    ex.to_json(tmp_path / "ex.jsonl", orient="records", lines=True)
    ex.to_csv(tmp_path / "ex.csv", index=False)
    ex.to_csv(tmp_path / "ex.tsv", index=False, sep="\t")
    ex.to_parquet(tmp_path / "ex.parquet")
    datasets = pytest.importorskip("datasets")
    datasets.Dataset.from_pandas(ex, preserve_index=False).save_to_disk(str(tmp_path / "ex_ds"))
    cols = ["id", "template", "attribute", "group", "term", "text", "label"]
    for name in ("ex.jsonl", "ex.csv", "ex.tsv", "ex.parquet", "ex_ds"):
        t = read_examples(tmp_path / name, chunk_rows=50)  # several chunks
        pd.testing.assert_frame_equal(t.frame[cols], ex[cols].astype(object), check_dtype=False, obj=name)
        assert t.has_template and t.read_rows == len(ex)


def test_several_attribute_columns_give_one_attribute_each(tmp_path):
    df = eec_like()
    df.to_csv(tmp_path / "eec.csv", index=False)
    t = read_examples(tmp_path / "eec.csv", columns=EEC_COLUMNS, label_map=LABELS)
    f = t.frame
    assert sorted(f["attribute"].unique()) == ["Gender", "Race"]
    assert len(f[f["attribute"] == "Gender"]) == len(df)
    assert len(f[f["attribute"] == "Race"]) == (df["Race"] != "").sum()  # empty cells leave the row out of Race
    assert t.skipped == (df["Race"] == "").sum()
    assert set(f["label"].dropna()) == {"negative", "positive"}
    assert f["label"].isna().sum() == 2 * (df["Emotion"] == "").sum() - (df[(df["Emotion"] == "")]["Race"] == "").sum()
    # template = Template|Emotion word; the row numbers are file lines (header = line 1)
    row = f.iloc[0]
    assert row["template"] == f"{df['Template'][0]}|{df['Emotion word'][0]}"
    assert t.rows[0] == 2 and row["term"] == "he"


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunk=st.integers(min_value=1, max_value=300))
def test_the_chunk_size_does_not_change_the_examples(tmp_path_factory, chunk):
    d = tmp_path_factory.mktemp("chunks")
    eec_like().to_json(d / "eec.jsonl", orient="records", lines=True)
    eec_like().to_parquet(d / "eec.parquet")
    whole = read_examples(d / "eec.jsonl", columns=EEC_COLUMNS, chunk_rows=10**6).frame
    for name in ("eec.jsonl", "eec.parquet"):
        part = read_examples(d / name, columns=EEC_COLUMNS, chunk_rows=chunk)
        pd.testing.assert_frame_equal(part.frame.drop(columns="id"), whole.drop(columns="id"))


def test_datasets_folder_class_labels_read_as_names(tmp_path):
    datasets = pytest.importorskip("datasets")
    feats = datasets.Features({"text": datasets.Value("string"), "identity": datasets.Value("string"),
                               "label": datasets.ClassLabel(names=["negative", "positive"])})
    ds = datasets.Dataset.from_dict({"text": ["a b", "c d", "e f"], "identity": ["x", "y", "x"], "label": [0, 1, 1]},
                                    features=feats)
    ds.save_to_disk(str(tmp_path / "tweets"))
    t = read_examples(tmp_path / "tweets", group="identity")
    assert list(t.frame["label"]) == ["negative", "positive", "positive"]
    assert list(t.frame["attribute"]) == ["identity"] * 3  # no attribute column: the group column names it
    assert set(read_examples(tmp_path / "tweets", group="identity", attribute="religion").frame["attribute"]) == {"religion"}
    assert not t.has_template
    datasets.DatasetDict({"train": ds}).save_to_disk(str(tmp_path / "dd"))
    with pytest.raises(ExamplesFormatError, match="one split folder"):
        read_examples(tmp_path / "dd", group="identity")


# ------------------------------------------------------------------ errors
def _err(fn, *a, **kw) -> ExamplesFormatError:
    with pytest.raises(ExamplesFormatError) as e:
        fn(*a, **kw)
    assert isinstance(e.value, ScoredFormatError) and isinstance(e.value, BiasSuiteError)
    return e.value


def test_missing_column_lists_the_columns_found(tmp_path):
    eec_like().to_csv(tmp_path / "eec.csv", index=False)
    e = _err(read_examples, tmp_path / "eec.csv")
    assert e.field == "text" and "'Sentence'" in str(e) and "'Gender'" in str(e) and str(tmp_path / "eec.csv") in str(e)
    e = _err(read_examples, tmp_path / "eec.csv", text="Sentence", attribute_columns=["Gender"], label="Feeling")
    assert e.field == "Feeling" and "label" in str(e)


def test_a_missing_column_names_its_flag_and_the_nearest_column(tmp_path):
    """A new user's table: its sentences under 'sentence', the run given
    --text-column Sentence. The error names the flag (the Python keyword from
    Python) and the column meant."""
    df = eec_like().rename(columns={"Sentence": "sentence", "Gender": "gender"})
    df.to_csv(tmp_path / "eec.csv", index=False)
    e = _err(read_examples, tmp_path / "eec.csv", text="Sentence", attribute_columns=["gender"])
    assert e.field == "Sentence" and "did you mean 'sentence'?" in str(e) and "text=" in str(e)
    assert "--text-column" not in str(e)  # Python is told its keyword
    e = _err(read_examples, tmp_path / "eec.csv", attribute_columns=["gender"])  # no 'text' column at all
    assert "name the column with text=" in str(e)
    r = runner.invoke(app, ["run", str(tmp_path / "eec.csv"), "--text-column", "Sentence", "--attribute-column",
                            "gender", "--model", "default-sentiment", "--out", str(tmp_path / "o")])
    assert r.exit_code != 0
    out = " ".join(r.output.split())
    assert "no column 'Sentence'" in out and "did you mean 'sentence'?" in out and "--text-column" in out, r.output
    r = runner.invoke(app, ["run", str(tmp_path / "eec.csv"), "--attribute-column", "Gendr",
                            "--text-column", "sentence", "--model", "default-sentiment", "--out", str(tmp_path / "o")])
    out = " ".join(r.output.split())
    assert "no column 'Gendr'" in out and "did you mean 'gender'?" in out and "--attribute-column" in out, r.output


def test_empty_group_names_the_row(tmp_path):
    df = pd.DataFrame({"text": ["a", "b", "c"], "group": ["x", " ", "y"], "template": ["t", "t", "t"]})
    df.to_csv(tmp_path / "g.csv", index=False)
    e = _err(read_examples, tmp_path / "g.csv")
    assert (e.row, e.field) == (3, "group") and "empty group" in str(e)
    df.to_json(tmp_path / "g.jsonl", orient="records", lines=True)
    assert _err(read_examples, tmp_path / "g.jsonl").row == 2  # JSONL: the line


def test_a_group_under_two_attributes_in_a_template(tmp_path):
    df = pd.DataFrame({"text": ["a", "b", "c", "d"], "attribute": ["gender", "gender", "sex", "gender"],
                       "group": ["f", "m", "f", "f"], "template": ["t1", "t1", "t1", "t2"]})
    df.to_csv(tmp_path / "a.csv", index=False)
    e = _err(read_examples, tmp_path / "a.csv")
    assert "'t1'" in str(e) and "['gender', 'sex']" in str(e) and e.row == 4 and e.field == "attribute"
    # several attributes per template are fine (expanded suites have them)
    df.loc[2, "group"] = "other"
    df.to_csv(tmp_path / "a.csv", index=False)
    assert len(read_examples(tmp_path / "a.csv").frame) == 4


@pytest.mark.slow  # loads a model for its classes
def test_labels_outside_the_model_classes_give_the_mapping_hint(tmp_path):
    eec_like().to_csv(tmp_path / "eec.csv", index=False)
    t = read_examples(tmp_path / "eec.csv", columns=EEC_COLUMNS, label_map={"anger": "negative"})
    with pytest.raises(ExamplesFormatError) as e:
        run(t, LenPredictor(), None, cache=False, progress=False, bootstrap=0)
    msg = str(e.value)
    assert e.value.field == "Emotion" and "'joy'" in msg and "label_map={'joy': 'negative', 'sadness': 'negative'}" in msg
    assert "--label-map" not in msg  # Python is told its argument, the command line its flag (below)
    from _tiny_models import make_tiny_classifier

    model = make_tiny_classifier(tmp_path / "tiny", class_names=("negative", "positive"))
    res = runner.invoke(app, ["run", str(tmp_path / "eec.csv"), "--model", str(model), "--no-cache", *EEC_FLAGS[:-4]])
    assert res.exit_code == 2 and "map them with --label-map, e.g. --label-map anger=negative," in res.output and "eec.csv" in res.output


def test_invalid_and_mixed_encodings_name_the_line(tmp_path):
    good = "text,group,template\nna\u00efve he,m,t\n".encode()
    (tmp_path / "latin.csv").write_bytes(good + "caf\u00e9 she,f,t\n".encode("latin-1"))
    e = _err(read_examples, tmp_path / "latin.csv")
    assert e.row == 3 and "0xe9" in str(e) and "pass encoding=" in str(e)
    assert list(read_examples(tmp_path / "latin.csv", encoding="latin-1").frame["group"]) == ["m", "f"]
    (tmp_path / "mixed.jsonl").write_bytes(b'{"text": "a", "group": "m"}\n' + '{"text": "caf\u00e9", "group": "f"}\n'.encode("cp1252"))
    e = _err(read_examples, tmp_path / "mixed.jsonl")
    assert e.row == 2 and "mixes encodings" in str(e)


def test_duplicate_ids_unknown_format_and_a_suite_given_as_jsonl(tmp_path):
    pd.DataFrame({"id": ["1", "1"], "text": ["a", "b"], "group": ["x", "y"]}).to_csv(tmp_path / "d.csv", index=False)
    assert _err(read_examples, tmp_path / "d.csv").row == 3
    (tmp_path / "x.txt").write_text("a")
    assert "give format= (" in str(_err(read_examples, tmp_path / "x.txt"))
    (tmp_path / "s.jsonl").write_text("suite: x\n")
    e = _err(read_examples, tmp_path / "s.jsonl")
    assert e.row == 1 and "invalid JSON" in str(e)


# ------------------------------------------------------------------ runs
def _python_path(df: pd.DataFrame, predictor):
    """What a user does by hand: build the examples, predict, evaluate, test."""
    from bias_suite.metrics import compute as evaluate
    from bias_suite.pipeline import predict_examples
    from bias_suite.stats import significance_tests

    rows = []
    for i, r in df.iterrows():
        for a in ("Gender", "Race"):
            if r[a]:
                rows.append({"id": f"{i}/{a}", "template": f"{r['Template']}|{r['Emotion word']}", "attribute": a,
                             "group": r[a], "term": r["Person"], "text": r["Sentence"],
                             "label": LABELS.get(r["Emotion"]) if r["Emotion"] else None})
    scored = predict_examples(pd.DataFrame(rows), predictor)
    ev = evaluate(scored, max_tuples=100, seed=0)
    return pd.concat([ev.drop(columns="verdict", errors="ignore"), significance_tests(scored, adjust="holm")],
                     ignore_index=True)


def test_cli_run_on_a_table_equals_the_python_path(tmp_path):
    from _tiny_models import make_tiny_classifier

    from bias_suite.models import HFClassifier

    model = make_tiny_classifier(tmp_path / "tiny", class_names=("negative", "positive"))
    df = eec_like()
    df.to_csv(tmp_path / "eec.csv", index=False)
    out = tmp_path / "out"
    res = runner.invoke(app, ["run", str(tmp_path / "eec.csv"), "--model", str(model), "--out", str(out),
                              "--no-cache", "--bootstrap", "0", "--quiet", "--report", *EEC_FLAGS])
    assert res.exit_code == 0, res.output
    for f in ("examples.jsonl", "scored.jsonl", "scored.parquet", "results.jsonl", "results.csv", "run.json", "report.html"):
        assert (out / f).exists(), f
    meta = json.loads((out / "run.json").read_text())
    assert meta["examples_table"]["format"] == "csv" and meta["examples_table"]["rows"] == len(df)
    got = pd.read_json(out / "results.jsonl", lines=True)
    want = _python_path(df, HFClassifier(model, progress=False))
    key = ["metric", "attribute", "class", "group"]
    both = want.merge(got, on=key, suffixes=("_py", "_cli"))
    assert len(both) == len(want) > 100  # every Python-path row is in the CLI's results
    assert set(want["metric"]) >= {"FNED", "CFGap", "BPSN"} and "Wilcoxon" in " ".join(map(str, want["metric"].unique()))
    a, b = both["value_py"].to_numpy(float), both["value_cli"].to_numpy(float)
    assert np.array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], atol=1e-5)  # float32 model, other batch shapes


def test_a_table_without_templates_gets_the_group_view_only(tmp_path):
    df = pd.DataFrame({"tweet": [f"tweet number {i} {'good' if i % 3 else 'bad'}" for i in range(40)],
                       "identity": ["women", "men"] * 20, "gold": ["1", "0"] * 20})
    df.to_parquet(tmp_path / "tweets.parquet")
    res = run(read_examples(tmp_path / "tweets.parquet", text="tweet", group="identity", label="gold",
                            label_map={"1": "positive", "0": "negative"}), LenPredictor(), tmp_path / "o", cache=False,
              progress=False, bootstrap=0)
    views = set(res.results["view"].dropna())
    assert views <= {"group"} and "FNED" in set(res.results["metric"])
    assert not res.results["metric"].str.contains("Wilcoxon|Friedman|INV").any()
    assert set(res.examples["attribute"]) == {"identity"}
    with pytest.raises(BiasSuiteError, match=r"no template column \(columns=Columns\(template=\.\.\.\)\)"):
        run(read_examples(tmp_path / "tweets.parquet", text="tweet", group="identity"), LenPredictor(), None,
            metrics="CFGap", cache=False)


def test_rerun_uses_the_prediction_cache_and_dedups(tmp_path):
    df = eec_like()
    df.to_json(tmp_path / "eec.jsonl", orient="records", lines=True)
    t = read_examples(tmp_path / "eec.jsonl", columns=EEC_COLUMNS, label_map=LABELS)
    first = run(t, LenPredictor(), None, cache=tmp_path / "cache", progress=False, bootstrap=0)
    p = first.metadata["predictions"]
    assert p["inputs"] == len(t.frame) and p["distinct"] == df["Sentence"].nunique() == p["computed"]
    again = run(t, LenPredictor(), None, cache=tmp_path / "cache", progress=False, bootstrap=0)
    assert again.metadata["predictions"]["computed"] == 0
    pd.testing.assert_frame_equal(first.results, again.results)


def test_from_frame_and_plain_paths_go_through_run(tmp_path):
    ex = expand_suites([find_suite("sentiment_gender")])
    ex.to_json(tmp_path / "ex.jsonl", orient="records", lines=True)
    a = run(tmp_path / "ex.jsonl", LenPredictor(), None, cache=False, progress=False, bootstrap=0)
    b = run(from_frame(ex), LenPredictor(), None, cache=False, progress=False, bootstrap=0)
    c = run(["sentiment_gender"], LenPredictor(), None, cache=False, progress=False, bootstrap=0)
    for r in (b, c):
        pd.testing.assert_series_equal(a.results["value"], r.results["value"])
    with pytest.raises(BiasSuiteError, match="either suites or one examples table"):
        run([tmp_path / "ex.jsonl", "sentiment_gender"], LenPredictor(), None, cache=False)


def test_cli_mapping_flags_without_a_table_are_an_error():
    res = runner.invoke(app, ["run", "sentiment_gender", "--text-column", "x"])
    assert res.exit_code == 2 and "--text-column" in res.output


# ------------------------------------------------------------------ NER
CONLL = """-DOCSTART- -X- -X- O

Ahmed NNP B-NP B-PER
lives VBZ B-VP O
in IN B-PP O
Paris NNP B-NP B-LOC
. . O O

Anna NNP B-NP B-PER
Schmidt NNP I-NP I-PER
lives VBZ B-VP O
in IN B-PP O
Paris NNP B-NP B-LOC
. . O O

The DT B-NP O
weather NN I-NP O
is VBZ B-VP O
fine JJ B-ADJP O
"""


def test_conll_with_a_side_file(tmp_path):
    (tmp_path / "ner.conll").write_text(CONLL)
    pd.DataFrame({"sentence": [0, 1], "attribute": ["name", "name"], "group": ["arab", "german"],
                  "template": ["lives-in", "lives-in"], "start": [0, None], "end": [1, None],
                  "term": ["Ahmed", "Anna Schmidt"]}).to_csv(tmp_path / "side.csv", index=False)
    t = read_examples(tmp_path / "ner.conll", side=tmp_path / "side.csv")
    f = t.frame
    assert t.task == "sequence_labelling" and t.has_template and t.skipped == 1 and t.read_rows == 3
    assert list(f["term_span"]) == [[0, 1], [0, 2]]
    assert list(f["tags"][1]) == ["B-PER", "L-PER", "O", "O", "U-LOC", "O"]  # BIO -> BILOU
    assert list(f["group"]) == ["arab", "german"] and list(t.rows) == [3, 9]
    pd.DataFrame({"sentence": [0], "attribute": ["name"], "group": ["x"], "term": ["Bob"]}).to_csv(tmp_path / "bad.csv", index=False)
    e = _err(read_examples, tmp_path / "ner.conll", side=tmp_path / "bad.csv")
    assert e.row == 2 and "'Bob'" in str(e)


def test_conll_with_a_group_column_runs(tmp_path):
    from _tiny_ner import make_tiny_token_classifier

    lines = []
    for i, (name, grp) in enumerate([("ahmed", "arab"), ("anna", "german")] * 3):
        lines += [f"{name} B-PER {grp}", "lives O O", "in O O", f"city{i} B-LOC O", ""]
    (tmp_path / "g.conll").write_text("\n".join(lines))
    t = read_conll(tmp_path / "g.conll", attribute="name")
    assert list(t.frame["group"]) == ["arab", "german"] * 3 and list(t.frame["tags"][0]) == ["U-PER", "O", "O", "U-LOC"]
    assert not t.has_template
    model = make_tiny_token_classifier(tmp_path / "tagger")
    res = runner.invoke(app, ["run", str(tmp_path / "g.conll"), "--model", str(model), "--out", str(tmp_path / "o"),
                              "--no-cache", "--bootstrap", "0", "--quiet", "--attribute-name", "name"])
    assert res.exit_code == 0, res.output
    out = pd.read_json(tmp_path / "o" / "results.jsonl", lines=True)
    assert set(out["attribute"].dropna()) == {"name"} and set(out["view"].dropna()) <= {"group"}


def test_an_interrupted_table_run_resumes_from_the_cache(tmp_path):
    eec_like().to_csv(tmp_path / "eec.csv", index=False)
    t = read_examples(tmp_path / "eec.csv", columns=EEC_COLUMNS, label_map=LABELS)

    class Interrupted(LenPredictor):
        calls = 0
        batch_size = 4  # chunks of 32 texts: 3 of 6 chunks done before the interrupt

        def predict_proba(self, texts):
            Interrupted.calls += 1
            if Interrupted.calls > 3:
                raise KeyboardInterrupt
            return super().predict_proba(texts)

    from bias_suite.predict import runner

    chunk = runner.BATCHES_PER_CHUNK * Interrupted.batch_size  # texts per chunk, one predictor call each
    with pytest.raises(KeyboardInterrupt):
        run(t, Interrupted(), None, cache=tmp_path / "cache", progress=False, bootstrap=0)
    res = run(t, LenPredictor(), tmp_path / "o", cache=tmp_path / "cache", progress=False, bootstrap=0)
    p = res.metadata["predictions"]
    assert p["cached"] == 3 * chunk and p["computed"] == p["distinct"] - 3 * chunk > 0


@pytest.mark.slow  # expands and runs a bundled suite
def test_cli_runs_what_expand_writes_without_flags(tmp_path):
    from _tiny_models import make_tiny_classifier

    model = make_tiny_classifier(tmp_path / "tiny")
    ex = tmp_path / "examples.jsonl"
    assert runner.invoke(app, ["expand", "sentiment_gender", "sentiment_religion", "--out", str(ex)]).exit_code == 0
    res = runner.invoke(app, ["run", str(ex), "--model", str(model), "--out", str(tmp_path / "o"), "--no-cache",
                              "--bootstrap", "0", "--quiet", "-a", "religion"])
    assert res.exit_code == 0, res.output
    got = pd.read_json(tmp_path / "o" / "results.jsonl", lines=True)
    assert set(got["attribute"].dropna()) == {"religion"} and "CFGap" in set(got["metric"])


def test_attribute_columns_exclude_a_group_column(tmp_path):
    eec_like().to_csv(tmp_path / "eec.csv", index=False)
    e = _err(read_examples, tmp_path / "eec.csv", text="Sentence", attribute_columns=["Gender"], group="Race")
    assert e.field == "Race" and "not both" in str(e)


def test_an_examples_table_with_few_templates_gets_the_suites_warning():
    """22 counterfactual templates of two groups: the per-class rate metrics need 59 per class at tau 0.05,
    as a suite would be told; a table with enough templates gets no warning."""
    from bias_suite.exceptions import SuiteWarning

    def table(n):
        rows = [{"id": f"t{j}-{g}", "template": f"t{j}", "attribute": "gender", "group": g, "term": g,
                 "text": f"sentence {j} about the {g}", "label": ("negative", "positive")[j % 2]}
                for j in range(n) for g in ("woman", "man")]
        return from_frame(pd.DataFrame(rows))

    with pytest.warns(SuiteWarning, match=r"11 templates of class negative \(also positive 11\).*about 59 per class"):
        run(table(22), LenPredictor(), None, cache=False, progress=False, bootstrap=0)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", SuiteWarning)
        run(table(130), LenPredictor(), None, cache=False, progress=False, bootstrap=0)
