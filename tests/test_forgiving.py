"""Forgiving where it is safe, and clear where it is not: Python models from
the command line, rounded probabilities, errors that name the caller's
options, group selection, did-you-mean suggestions and CheckList's Munch
objects (issue 29)."""
import json
import re
import sys
import textwrap
import warnings

import numpy as np
import pytest
from typer.testing import CliRunner

from bias_suite.cli import app
from bias_suite.exceptions import BiasSuiteError, ModelError, ProbabilityWarning, cli_message, did_you_mean, option

runner = CliRunner()
CLASSES = ["negative", "neutral", "positive"]

MODULE = '''
import re

import numpy as np

def predict(texts):
    """A toy sentiment model: texts about women score a little more negative."""
    words = ("she", "her", "woman", "women", "girl", "girls", "female")
    fem = np.array([bool(set(re.findall(r"[a-z]+", t.lower())) & set(words)) for t in texts])
    return np.where(fem[:, None], [[0.5, 0.2, 0.3]], [[0.3, 0.2, 0.5]])

predict.fingerprint = "toy-sentiment-v1"

def bare(texts):
    return [[0.25, 0.25, 0.5]] * len(texts)

class Model:
    class_names = ["negative", "neutral", "positive"]
    name = "toy-object"

    def predict_proba(self, texts):
        return np.tile([0.2, 0.3, 0.5], (len(texts), 1))

def rounded(texts):
    """Probabilities rounded to two decimals: rows sum to 0.99, 1 or 1.01."""
    rng = np.random.default_rng(0)
    return np.round(rng.dirichlet([1.0, 1.0, 1.0], size=len(texts)), 2)
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """A model module in a folder of its own, the working folder of the test."""
    name = "user_models_" + tmp_path.name.replace("-", "_")
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    yield name
    sys.modules.pop(name, None)


# ---------------------------------------------------------------- 1. Python models from the CLI
@pytest.mark.slow
def test_cli_runs_a_python_predict_function_named_by_its_fingerprint(user_module, tmp_path):
    out = tmp_path / "out"
    r = runner.invoke(app, ["run", "sentiment_gender", "--model", f"{user_module}:predict", "--classes",
                            ",".join(CLASSES), "--out", str(out), "--bootstrap", "20", "--lines", "30"])
    assert r.exit_code == 0, r.output
    meta = json.loads((out / "run.json").read_text())
    assert meta["model"] == "toy-sentiment-v1"
    assert meta["model_fingerprint"]["id"] == "toy-sentiment-v1"
    assert meta["classes"] == CLASSES
    assert "toy-sentiment-v1: " in r.output and "CallablePredictor" not in r.output
    # the model's gap shows: 'female' texts get 0.2 more negative probability than 'male' ones
    res = __import__("pandas").read_json(out / "results.jsonl", lines=True)
    cf = res[(res.metric == "CFGap") & (res["class"] == "negative") & (res.group == "female|male")]
    assert cf["value"].iloc[0] == pytest.approx(0.2)
    # a second run reads the predictions from the cache (the fingerprint makes them cacheable)
    r = runner.invoke(app, ["run", "sentiment_gender", "--model", f"{user_module}:predict", "--classes",
                            ",".join(CLASSES), "--out", str(tmp_path / "again"), "--bootstrap", "0", "-q"])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "again" / "run.json").read_text())["predictions"]["cached"] > 0


def test_cli_takes_a_file_path_and_a_predictor_object(user_module, tmp_path):
    out = tmp_path / "o1"
    r = runner.invoke(app, ["run", "sentiment_gender", "--model", f"./{user_module}.py:Model", "--out", str(out),
                            "--bootstrap", "0", "-q"])
    assert r.exit_code == 0, r.output
    assert json.loads((out / "run.json").read_text())["model"] == "toy-object"
    r = runner.invoke(app, ["run", "sentiment_gender", "--model", f"{tmp_path / user_module}.py:bare", "--classes",
                            ",".join(CLASSES), "--out", str(tmp_path / "o2"), "--bootstrap", "0", "-q"])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "o2" / "run.json").read_text())["model"].endswith(f"{user_module}.py:bare")


def test_cli_python_model_errors_are_one_clear_line(user_module, tmp_path):
    def err(*args):
        r = runner.invoke(app, ["run", "sentiment_gender", "--out", str(tmp_path / "x"), "-q", *args])
        assert r.exit_code == 2, r.output
        return " ".join(r.output.split())

    assert "without class names: give --classes NAME,NAME,..." in err("--model", f"{user_module}:bare")
    assert f"has no attribute 'predcit'; did you mean 'predict'?" in err("--model", f"{user_module}:predcit")
    assert "cannot import 'no_such_module_here'" in err("--model", "no_such_module_here:predict")
    assert "--classes names the classes of a Python model" in err("--model", "default-sentiment", "--classes", "a,b")
    msg = err("--model", f"{user_module}:bare", "--classes", "negative,neutral,postive")
    assert "['positive'] are unknown to the model; 'positive': did you mean 'postive'?" in msg
    assert "--class-map SUITE_CLASS=MODEL_CLASS" in msg


def test_python_models_are_named_by_name_or_fingerprint():
    from bias_suite.models import CallablePredictor
    from bias_suite.models.base import as_predictor, model_name

    fn = lambda xs: [[0.5, 0.5]] * len(xs)  # noqa: E731
    assert CallablePredictor(fn, ["a", "b"], fingerprint="my-model-v3").name == "my-model-v3"
    assert CallablePredictor(fn, ["a", "b"], fingerprint={"name": "m", "v": 2}).name == "m"
    assert CallablePredictor(fn, ["a", "b"], fingerprint="v3", name="shown").name == "shown"

    def my_predict(xs):
        return [[0.5, 0.5]] * len(xs)

    assert model_name(as_predictor(my_predict, ["a", "b"])) == "my_predict"
    with pytest.raises(ModelError, match=r"needs class_names=\[\.\.\.\]"):
        as_predictor(my_predict)


def test_python_run_names_the_model_from_its_fingerprint():
    from bias_suite.models import CallablePredictor
    from bias_suite.pipeline import run

    model = CallablePredictor(lambda xs: np.tile([0.2, 0.3, 0.5], (len(xs), 1)), CLASSES, fingerprint="const-v1")
    res = run(["sentiment_gender"], model, None, bootstrap=0, cache=False, progress=False, invariance=False)
    assert res.model == "const-v1" and res.metadata["model"] == "const-v1"


# ---------------------------------------------------------------- 2. forgiving where it is safe
def _rounded(texts):
    rng = np.random.default_rng(len(texts))
    return np.round(rng.dirichlet([1.0, 1.0, 1.0], size=len(texts)), 2)


def test_rounded_probabilities_are_renormalised_with_one_warning():
    from bias_suite.models import CallablePredictor
    from bias_suite.predict import predict

    texts = [f"text {i}" for i in range(300)]
    model = CallablePredictor(_rounded, CLASSES)
    raw = np.concatenate([_rounded(texts[s:s + 25]) for s in range(0, 300, 25)])  # what the chunks of 25 return
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        probs, stats = predict(model, texts, cache=False, chunk_size=25)
    ours = [w for w in caught if issubclass(w.category, ProbabilityWarning)]
    assert len(ours) == 1  # one warning for the whole call, over 12 chunks
    assert len(caught) == 1
    # predictions come back in input order; rows are renormalised only where they were off
    sums = probs.sum(axis=1)
    np.testing.assert_allclose(sums, 1.0, atol=1e-12)
    off = np.abs(raw.sum(axis=1) - 1) > 1e-3
    n_off = int(off.sum())
    assert 0 < n_off < len(texts)
    assert stats.extra["renormalised"] == n_off
    assert f"{n_off} of 300 probability rows" in str(ours[0].message)


def test_rows_further_off_are_refused_with_the_right_advice():
    from bias_suite.models import CallablePredictor

    thirds = CallablePredictor(lambda xs: [[0.3, 0.3, 0.3]] * len(xs), CLASSES)
    with pytest.raises(ModelError) as e:
        thirds.predict_proba(["a", "b"])
    assert "do not sum to 1 (2 of 2; e.g. row 0 sums to 0.9" in str(e.value) and "softmax" not in str(e.value)
    scores = CallablePredictor(lambda xs: [[2.0, 0.5, 0.5]] * len(xs), CLASSES)
    with pytest.raises(ModelError, match="apply a softmax to logits"):
        scores.predict_proba(["a"])
    logits = CallablePredictor(lambda xs: [[2.0, -1.0, 0.5]] * len(xs), CLASSES)
    with pytest.raises(ModelError, match="negative probabilities .*apply a softmax"):
        logits.predict_proba(["a"])


def test_cli_run_of_rounded_probabilities_warns_once(user_module, tmp_path):
    r = runner.invoke(app, ["run", "sentiment_gender", "--model", f"{user_module}:rounded", "--classes",
                            ",".join(CLASSES), "--out", str(tmp_path / "o"), "--bootstrap", "0", "-q"])
    assert r.exit_code == 0, r.output
    # the renormalisation once for the whole run; besides it at most the suite's size for its rate metrics
    warned = [line for line in r.output.splitlines() if line.startswith("warning:")]
    assert sum("probability rows of" in w for w in warned) == 1, warned
    assert all("probability rows of" in w or w.startswith("warning: sentiment_gender: ") and "templates of class" in w
               for w in warned) and len(warned) <= 2, warned
    assert "probability rows of" in r.output and "were renormalised" in r.output
    n = json.loads((tmp_path / "o" / "run.json").read_text())["predictions"]["extra"]["renormalised"]
    assert f"warning: {n} of 988 probability rows" in " ".join(r.output.split())


def test_an_error_names_python_arguments_and_the_cli_its_flags():
    err = BiasSuiteError("raise it with " + option("max_examples=", "--max-examples"))
    assert str(err) == "raise it with max_examples="
    assert cli_message(err) == "raise it with --max-examples"
    assert cli_message(ValueError("plain")) == "plain"
    assert did_you_mean("Gendre", ["gender", "age"]) == "; did you mean 'gender'?"
    assert did_you_mean("zzz", ["gender", "age"]) == ""


def test_class_mismatch_names_class_map_in_python_and_the_flag_on_the_cli(tmp_path):
    from bias_suite.models import CallablePredictor
    from bias_suite.pipeline import run

    two = CallablePredictor(lambda xs: [[0.5, 0.5]] * len(xs), ["negative", "positive"])
    with pytest.raises(ModelError) as e:
        run(["sentiment_gender"], two, None, progress=False, cache=False)
    assert "class_map={'neutral': 'negative'}" in str(e.value) and "--class-map" not in str(e.value)
    from bias_suite.families import expand_suite

    with pytest.raises(BiasSuiteError) as e:
        expand_suite("sentiment_gender", max_examples=10)
    assert "(max_examples= raises it)" in str(e.value) and "--max-examples" not in str(e.value)
    r = runner.invoke(app, ["expand", "sentiment_gender", "--max-examples", "10"])
    assert r.exit_code == 2 and "(--max-examples raises it)" in r.output


# ---------------------------------------------------------------- 3. --group selects groups
def _const_model():
    from bias_suite.models import CallablePredictor

    # whole words only: "pushed" and "finished" hold "she" but name no one
    female = re.compile(r"\b(she|woman|women|girls?|female)\b")

    def fn(texts):
        fem = np.array([bool(female.search(t.lower())) for t in texts])
        return np.where(fem[:, None], [[0.5, 0.2, 0.3]], [[0.3, 0.2, 0.5]])

    return CallablePredictor(fn, CLASSES)


def test_python_run_selects_groups_in_the_order_given():
    from bias_suite.families import expand_suite
    from bias_suite.pipeline import run

    full = expand_suite("sentiment_gender")
    res = run(["sentiment_gender"], _const_model(), None, groups={"gender": ["male", "female"]}, bootstrap=0,
              cache=False, progress=False, invariance=False, significance=False)
    assert set(res.examples["group"]) == {"male", "female"}
    assert len(res.examples) == int(full["group"].isin(["male", "female"]).sum())
    r = res.results
    cf = r[(r.metric == "CFGap") & (r["class"] == "negative") & r.group.notna()]
    assert list(cf.group) == ["male|female"]  # the order given: male first
    assert cf["value"].iloc[0] == pytest.approx(0.2)


def test_group_selection_of_expansion_evaluation_and_tables(tmp_path):
    from bias_suite.evaluation import evaluate
    from bias_suite.families import expand_suites, scored_from_arrays
    from bias_suite.suites.tables import from_frame

    ex = expand_suites(["sentiment_gender"], groups={"gender": ["non_binary", "female"]})
    assert list(dict.fromkeys(ex["group"])) == ["non_binary", "female"]
    full = expand_suites(["sentiment_gender"])
    scored = scored_from_arrays(full, _const_model().predict_proba(list(full["text"])), CLASSES)
    sel = evaluate(scored, groups={"gender": ["female", "male"]}, bootstrap=0, significance=False, bernstein=False,
                   metrics=["CFGap", "FNED"])
    keep = full["group"].isin(["female", "male"]).to_numpy()
    by_hand = evaluate(scored.take(np.flatnonzero(keep)), bootstrap=0, significance=False, bernstein=False,
                       metrics=["CFGap", "FNED"], group_order_override={"gender": ["female", "male"]})
    cols = ["metric", "class", "group", "value"]
    assert sel[cols].fillna("-").equals(by_hand[cols].fillna("-"))
    table = from_frame(full).select_groups({"gender": ["male", "female"]})
    assert table.group_order()["gender"] == ["male", "female"] and set(table.frame["group"]) == {"male", "female"}


def test_unknown_attribute_or_group_is_an_error_with_a_suggestion(tmp_path):
    from bias_suite.families import expand_suites

    with pytest.raises(BiasSuiteError, match=r"groups=: unknown attribute 'gendre' .*; did you mean 'gender'\?"):
        expand_suites(["sentiment_gender"], groups={"gendre": ["male", "female"]})
    with pytest.raises(BiasSuiteError, match=r"has no group 'femal' .*; did you mean 'female'"):
        expand_suites(["sentiment_gender"], groups={"gender": ["male", "femal"]})
    with pytest.raises(BiasSuiteError, match="needs two groups or more"):
        expand_suites(["sentiment_gender"], groups={"gender": ["male"]})
    r = runner.invoke(app, ["expand", "sentiment_gender", "--group", "gender=male,femal"])
    assert r.exit_code == 2 and "--group: attribute 'gender' has no group 'femal'" in r.output
    r = runner.invoke(app, ["expand", "sentiment_gender", "--group", "gender=male,female", "--group", "gender=x,y"])
    assert r.exit_code == 2 and "twice" in r.output
    r = runner.invoke(app, ["expand", "sentiment_gender", "-g", "gender=male,female", "--sample", "0"])
    assert r.exit_code == 0 and "non_binary" not in r.output and "568 examples" in r.output


def test_cli_run_and_evaluate_take_group(user_module, tmp_path):
    r = runner.invoke(app, ["run", "sentiment_gender", "--model", f"{user_module}:predict", "--classes",
                            ",".join(CLASSES), "--group", "gender=female,male", "--out", str(tmp_path / "o"),
                            "--bootstrap", "0", "-q"])
    assert r.exit_code == 0, r.output
    import pandas as pd

    ex = pd.read_json(tmp_path / "o" / "examples.jsonl", lines=True)
    assert set(ex["group"]) == {"female", "male"}
    r = runner.invoke(app, ["evaluate", str(tmp_path / "o" / "scored.jsonl"), "--out", str(tmp_path / "e"),
                            "--group", "gender=male,female", "--bootstrap", "0", "-q", "--metrics", "CFGap"])
    assert r.exit_code == 0, r.output
    res = pd.read_json(tmp_path / "e" / "results.jsonl", lines=True)
    assert set(res.loc[res.metric == "CFGap", "group"].dropna()) == {"male|female"}
    r = runner.invoke(app, ["evaluate", str(tmp_path / "o" / "scored.jsonl"), "--out", str(tmp_path / "e2"),
                            "--group", "gender=female,non_binary", "-q"])
    assert r.exit_code == 2 and "has no group 'non_binary'" in r.output


# ---------------------------------------------------------------- 4. did-you-mean, tabs, identity files, validate
SUITE = """suite: dym
classes: [negative, positive]
identity_terms: [{file: gender.yaml, groups: [female, male]}]
lexicons:
  place: [home, work]
templates:
  - {id: a, text: "The {identity_np} is at {place}.", label: positive}
  - {id: b, text: "The {identity_np} left {place}.", label: negative}
"""


def _validate(tmp_path, text, name="s.yaml"):
    (tmp_path / name).write_text(text)
    r = runner.invoke(app, ["validate", str(tmp_path / name)])
    return r.exit_code, " ".join(r.output.split())


@pytest.mark.parametrize("old,new,expect", [
    ("{place}.", "{plac}.", "unknown slot {plac}: .*; did you mean 'place'\\?"),
    ("{identity_np} is", "{identiy_np} is", "unknown slot {identiy_np}: .*; did you mean 'identity_np'"),
    ("label: positive", "label: postive", "label 'postive' is not among the classes .*; did you mean 'positive'\\?"),
    ("groups: [female, male]", "groups: [female, mael]", "unknown group\\(s\\) \\['mael'\\]; .*did you mean 'male'"),
    ("classes: [negative, positive]", "classes: [negative, positive, postive]",
     "field 'classes\\[2\\]': class 'postive' is the label of no template but close to one; did you mean 'positive'"),
    ("templates:\n", "group_order: {gendr: [male, female]}\ntemplates:\n",
     "field 'group_order.gendr': unknown attribute 'gendr' .*; did you mean 'gender'"),
    ("templates:\n", "materiality: {FNDE: 0.1}\ntemplates:\n", "'FNDE': did you mean 'FNED'"),
    ("templates:\n", "thresholds:\n  - {metric: FNED, class: postive, max: 0.1}\ntemplates:\n",
     "thresholds\\[0\\].class': class 'postive' is none of the suite's .*did you mean 'positive'"),
    ("templates:\n", "thresholds:\n  - {metric: FNED, group: femal, max: 0.1}\ntemplates:\n",
     "thresholds\\[0\\].group': group 'femal' is none of the suite's .*did you mean 'female'"),
])
def test_validate_suggests_the_name_meant(tmp_path, old, new, expect):
    import re

    assert old in SUITE
    assert _validate(tmp_path, SUITE)[0] == 0
    code, out = _validate(tmp_path, SUITE.replace(old, new, 1))
    assert code == 2 and re.search(expect, out), out


def test_a_class_one_typo_from_the_usual_ones_is_a_warning(tmp_path):
    from bias_suite.exceptions import SuiteWarning
    from bias_suite.families import load_suite
    from bias_suite.families.classification.suite import COMMON_CLASSES
    from bias_suite.suites import bundled_suites
    from bias_suite.suites.loader import load_suite as read_suite

    bundled = {c for p in bundled_suites() for c in read_suite(p).classes}
    assert set(COMMON_CLASSES) == bundled  # the list stays the bundled suites' classes
    text = SUITE.replace("positive", "postive")  # misspelled consistently: valid, but no model has it
    code, out = _validate(tmp_path, text)
    assert code == 0 and "warning:" in out and "field 'classes[1]': class 'postive'" in out
    assert "did you mean 'positive'?" in out
    (tmp_path / "s.yaml").write_text(text)
    with pytest.warns(SuiteWarning, match="s.yaml:2: field 'classes\\[1\\]'"):
        load_suite(tmp_path / "s.yaml")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (tmp_path / "ok.yaml").write_text(SUITE)
        load_suite(tmp_path / "ok.yaml")  # no warning for the usual names


def test_a_tab_in_yaml_gets_a_hint_with_its_line(tmp_path):
    code, out = _validate(tmp_path, SUITE.replace("  - {id: b", "\t- {id: b"))
    assert code == 2 and "s.yaml:8: invalid YAML" in out
    assert "YAML does not allow tabs for indentation: replace the tab on line 8 with spaces" in out


def test_a_missing_identity_file_says_where_it_was_looked_for(tmp_path):
    code, out = _validate(tmp_path, SUITE.replace("file: gender.yaml", "file: gendr.yaml"))
    assert code == 2 and "identity-term file 'gendr.yaml' not found; looked for " in out
    tried = out.split("looked for ")[1].split("; did you mean")[0].split(", ")
    assert tried == [str(tmp_path / "gendr.yaml"), str(tmp_path.parent / "identity_terms" / "gendr.yaml"),
                     tried[2]] and tried[2].endswith("identity_terms/gendr.yaml")
    assert "did you mean 'gender.yaml'?" in out


def test_metric_attribute_and_class_names_get_suggestions(tmp_path):
    from bias_suite.exceptions import MetricError
    from bias_suite.metrics import get_metric

    assert get_metric("cfgap").name == "CFGap"  # a case difference alone is accepted
    with pytest.raises(MetricError, match=r"unknown metric 'CFGapp'; did you mean 'CFGap'"):
        get_metric("CFGapp")
    r = runner.invoke(app, ["metrics", "--explain", "FNDE"])
    assert r.exit_code == 2 and "did you mean 'FNED'" in r.output
    r = runner.invoke(app, ["expand", "sentiment_gender", "-a", "gendre"])
    assert r.exit_code == 2 and "--attribute: unknown attribute 'gendre'" in r.output and "'gender'?" in r.output


# ---------------------------------------------------------------- 7. the docs' examples validate on their own
def test_the_suite_format_examples_validate_on_their_own(tmp_path):
    """docs/suite_format.md: the identity-term example passes validate alone, and the suite example
    validates against it (not the bundled religion file) when it lies in identity_terms/ beside it."""
    import yaml
    from _doc_blocks import collect

    blocks = [b for b in collect() if b.doc == "docs/suite_format.md" and b.lang == "yaml"]
    ident = next(b for b in blocks if {"attribute", "groups"} <= set(yaml.safe_load(b.text) or {}))
    suite = next(b for b in blocks if "suite" in (yaml.safe_load(b.text) or {}))
    (tmp_path / "identity_terms").mkdir()
    (tmp_path / "identity_terms" / "religion.yaml").write_text(ident.text)
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "example.yaml").write_text(suite.text)
    r = runner.invoke(app, ["validate", str(tmp_path / "identity_terms" / "religion.yaml")])
    assert r.exit_code == 0 and "identity terms of 'religion', groups ['christian', 'muslim']" in r.output, r.output
    r = runner.invoke(app, ["validate", str(tmp_path / "suites" / "example.yaml")])
    assert r.exit_code == 0, r.output
    from bias_suite.families import load_suite

    loaded = load_suite(tmp_path / "suites" / "example.yaml")
    assert loaded.identity["religion"].path == str(tmp_path / "identity_terms" / "religion.yaml")
    assert loaded.identity["religion"].groups == ["christian", "muslim"]


# ---------------------------------------------------------------- 8. the registry at 80 columns
def test_metrics_registry_is_readable_at_80_columns(monkeypatch):
    from bias_suite.metrics import catalog_frame

    monkeypatch.setenv("COLUMNS", "80")
    r = runner.invoke(app, ["metrics"])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert max(map(len, lines)) <= 80
    for header in ("name", "view", "topic", "b", "tau", "phi", "d", "N", "beta", "source"):
        assert any(header in line.split() for line in lines), header
    words = " ".join(r.output.split())
    for m in catalog_frame().itertuples(index=False):
        rows = [line for line in lines if line.split()[:1] == [m.name] and len(line) - len(line.lstrip()) <= 1]
        assert len(rows) == 3, m.name  # whole, once in each table (what it judges, how it is built, source)
        assert f"{m.name} {m.view} {m.topic}" in " ".join(rows[0].split())
        assert all(w in words for w in str(m.phi).split()) and m.source.split(",")[0] in words
    monkeypatch.setenv("COLUMNS", "200")
    wide = runner.invoke(app, ["metrics"]).output
    assert "phi" in wide and sum(line.lstrip("│┃ ").startswith("FNED ") for line in wide.splitlines()) == 1


# ---------------------------------------------------------------- 5. CheckList's Munch objects
@pytest.fixture(scope="module")
def editor():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from bias_suite.suites.loader import get_editor

        return get_editor()


def test_editor_munch_output_in_and_munch_out(editor, tmp_path):
    import munch

    from bias_suite.interop.checklist import from_editor, invariance_tests, suite_from_templates

    one = editor.template("The {attr} {prof} was great.", attr=["woman", "man"], prof=["doctor", "nurse"],
                          meta=True, save=True)
    two = editor.template("I disliked the {attr} {prof}.", attr=["woman", "man"], prof=["doctor", "nurse"],
                          meta=True, save=True)
    both = one + two  # CheckList's MunchWithAdd: data, meta and templates concatenated
    assert isinstance(both, munch.Munch) and isinstance(both.meta[0], dict) and len(both.templates) == 2
    groups = munch.Munch(female=["woman"], male=["man"])  # groups as a Munch too
    ex = from_editor(both, attribute_key="attr", groups=groups, label="positive", template_id="t")
    assert len(ex) == 8 and set(ex["text"]) == set(both.data) and set(ex["group"]) == {"female", "male"}
    # a suite from both Editor calls: every template of the sum, not only the first call's
    suite = suite_from_templates(both, attribute_key="attr", groups=groups, classes=["negative", "positive"],
                                 labels=["positive", "negative"], out_dir=tmp_path)
    assert [t.text for t in suite.templates] == ["The {identity_adj} {prof} was great.",
                                                 "I disliked the {identity_adj} {prof}."]
    assert suite.lexicons == {"prof": ["doctor", "nurse"]}
    # the INV tests bias_suite builds carry their settings as a Munch, as CheckList keeps results
    tests = invariance_tests(ex)
    info = tests[0].bias_suite
    assert isinstance(info, munch.Munch) and info.attribute == "attr" and info.groups == ["female", "male"]


@pytest.mark.slow
def test_munch_test_meta_and_saved_suites_are_accepted(editor):
    import munch

    from bias_suite.interop.checklist import from_checklist, testsuite_from_dict, testsuite_to_dict, to_testsuite
    from bias_suite.interop.perturb import perturb

    # Perturb's output is a MunchWithAdd of cases; a CheckList test's meta may hold Munch objects
    Perturb = perturb()
    cases = Perturb.perturb(["Emma liked the film.", "Emma hated the film."],
                            lambda s: [s.replace("Emma", "Liam")])
    assert isinstance(cases, munch.Munch)
    ex = from_checklist(cases)
    assert set(ex["group"]) == {"female", "male"} and len(ex) == 4
    suite = to_testsuite(ex)
    saved = testsuite_to_dict(suite)
    for t in saved["tests"]:
        t["meta"] = [[munch.Munch(m) for m in case] for case in t["meta"]]
    back = testsuite_from_dict(munch.munchify(saved))  # the saved form read back as Munch objects
    t = next(iter(back.tests.values()))
    assert t.bias_suite.attribute == next(iter(suite.tests.values())).bias_suite["attribute"]
    assert [m["group"] for m in t.meta[0]] == ["female", "male"]
    json.dumps(testsuite_to_dict(back))  # Munch objects write as JSON
