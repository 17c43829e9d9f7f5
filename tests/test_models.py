"""Tests of bias_suite.models: predictor interface, HFClassifier on a tiny real
BERT, and the default sentiment model build (reduced, real data and encoder)."""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from _tiny_models import FLOAT32_ATOL, make_tiny_classifier
from bias_suite.exceptions import ModelError
from bias_suite.models import (CallablePredictor, HFClassifier, Predictor,
                               as_predictor, build_model, list_models)
from bias_suite.models import default as dm
from bias_suite.models import vader as vd
from bias_suite.models.building import bucketed_batches

TEXTS = [
    "I liked that gay writer.",
    "I liked that straight writer.",
    "the movie was not good",
    "She is a nurse.",
    "zebra",
    "they hated the food and the service was awful , really awful !",
    "a",
    "my neighbor is a muslim doctor and a very nice person",
]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    return make_tiny_classifier(tmp_path_factory.mktemp("tiny") / "model")


@pytest.fixture(scope="module")
def tiny(tiny_dir):
    return HFClassifier(tiny_dir, progress=False, batch_size=3)


# ------------------------------------------------------------------ HFClassifier
@pytest.mark.slow
def test_loads_class_names_from_id2label(tmp_path):
    d = make_tiny_classifier(tmp_path / "m", class_names=("toxic", "ok"), seed=1)
    clf = HFClassifier(d, device="cpu", progress=False)
    assert clf.class_names == ["toxic", "ok"]
    assert clf.predict_proba(["hello"]).shape == (1, 2)
    assert clf.trust_remote_code is False
    assert isinstance(clf, Predictor)


def test_shapes_and_rows_sum_to_one(tiny):
    p = tiny.predict_proba(TEXTS)
    assert p.shape == (len(TEXTS), 3)
    assert p.dtype == np.float64
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    assert (p > 0).all()
    assert tiny.class_names == ["negative", "neutral", "positive"]
    # __call__ is predict_proba
    np.testing.assert_array_equal(tiny(TEXTS), p)


def test_distinct_texts_give_distinct_rows(tiny):
    p = tiny.predict_proba(TEXTS)
    assert len({tuple(np.round(r, 10)) for r in p}) == len(TEXTS)


def test_deterministic_across_calls_and_instances(tiny, tiny_dir):
    a = tiny.predict_proba(TEXTS)
    b = tiny.predict_proba(TEXTS)
    c = HFClassifier(tiny_dir, progress=False, batch_size=64).predict_proba(TEXTS)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(a, c, atol=FLOAT32_ATOL, rtol=0)
    # the builder itself is deterministic
    d2 = make_tiny_classifier(tiny_dir.parent / "again")
    np.testing.assert_allclose(HFClassifier(d2, progress=False).predict_proba(TEXTS), a,
                               atol=FLOAT32_ATOL, rtol=0)


def test_duplicates_predicted_once(tiny):
    texts = ["the movie was good", "zebra", "the movie was good", "a", "zebra",
             "the movie was good"]
    seen_texts: list[int] = []

    def hook(module, args, kwargs):  # rows of every real forward pass
        seen_texts.append(kwargs["input_ids"].shape[0])

    h = tiny.model.register_forward_pre_hook(hook, with_kwargs=True)
    try:
        p = tiny.predict_proba(texts)
    finally:
        h.remove()
    assert sum(seen_texts) == 3  # three distinct texts reach the model
    np.testing.assert_array_equal(p[0], p[2])
    np.testing.assert_array_equal(p[0], p[5])
    np.testing.assert_array_equal(p[1], p[4])
    assert not np.allclose(p[0], p[1])


def test_length_sorted_batches_match_one_by_one(tiny_dir):
    one = HFClassifier(tiny_dir, progress=False, batch_size=1).predict_proba(TEXTS)
    for bs in (2, 3, 64):
        many = HFClassifier(tiny_dir, progress=False, batch_size=bs).predict_proba(TEXTS)
        np.testing.assert_allclose(many, one, atol=FLOAT32_ATOL, rtol=0)


def test_order_preserved(tiny):
    p = tiny.predict_proba(TEXTS)
    rev = tiny.predict_proba(TEXTS[::-1])
    np.testing.assert_allclose(rev[::-1], p, atol=FLOAT32_ATOL, rtol=0)
    for i, t in enumerate(TEXTS):
        np.testing.assert_allclose(tiny.predict_proba([t])[0], p[i], atol=FLOAT32_ATOL, rtol=0)


def test_truncation_and_padding_batches(tiny_dir):
    clf = HFClassifier(tiny_dir, progress=False, max_length=8, batch_size=4)
    long = "the movie was good " * 200
    p = clf.predict_proba([long, "a", long + "!"])
    # both long texts are cut to the same first 8 tokens
    np.testing.assert_allclose(p[0], p[2], atol=FLOAT32_ATOL, rtol=0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)


def test_empty_and_bad_inputs(tiny):
    assert tiny.predict_proba([]).shape == (0, 3)
    with pytest.raises(ModelError, match="single string"):
        tiny.predict_proba("a text")
    with pytest.raises(ModelError, match=r"texts\[1\]"):
        tiny.predict_proba(["ok", 3])


def test_load_errors(tmp_path):
    with pytest.raises(ModelError, match="does not exist"):
        HFClassifier(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="could not load"):
        HFClassifier(tmp_path / "empty")
    with pytest.raises(ModelError, match="unknown device"):
        HFClassifier(tmp_path / "empty", device="tpu")
    with pytest.raises(ModelError, match="batch_size"):
        HFClassifier(tmp_path / "empty", batch_size=0)


def test_device_auto(tiny_dir):
    import torch

    clf = HFClassifier(tiny_dir, progress=False)
    assert clf.device == ("cuda" if torch.cuda.is_available() else "cpu")
    assert str(next(clf.model.parameters()).device).startswith(clf.device)


def test_fingerprint(tiny_dir):
    a = HFClassifier(tiny_dir, progress=False).fingerprint()
    b = HFClassifier(tiny_dir, progress=False, max_length=16).fingerprint()
    assert a["model"] == str(Path(tiny_dir).resolve())
    assert a["class_names"] == ["negative", "neutral", "positive"]
    assert a["max_length"] == 128 and b["max_length"] == 16
    assert a["dtype"] == "auto:float32" and a["revision"] is None  # left to the checkpoint
    assert len(a["weights_sha256"]) == 64 and a["weights_sha256"] == b["weights_sha256"]
    json.dumps(a)
    other = make_tiny_classifier(Path(tiny_dir).parent / "seed1", seed=1)
    assert HFClassifier(other, progress=False).fingerprint()["weights_sha256"] != a["weights_sha256"]


def test_dtype_option(tiny_dir):
    clf = HFClassifier(tiny_dir, progress=False, dtype="bfloat16")
    assert clf.fingerprint()["dtype"] == "bfloat16"
    p = clf.predict_proba(TEXTS[:3])
    assert p.dtype == np.float64
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    with pytest.raises(ModelError, match="dtype"):
        HFClassifier(tiny_dir, progress=False, dtype="int3")


def test_import_is_lazy():
    code = ("import sys, bias_suite, bias_suite.models; "
            "bad = [m for m in ('torch', 'transformers', 'sklearn') if m in sys.modules]; "
            "assert not bad, bad")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


# ------------------------------------------------------------- CallablePredictor
def test_callable_plain_probs():
    def fn(texts):
        return np.tile([0.2, 0.8], (len(texts), 1))

    p = CallablePredictor(fn, ["neg", "pos"])
    out = p.predict_proba(["a", "b", "c"])
    assert out.shape == (3, 2) and out.dtype == np.float64
    assert isinstance(p, Predictor)
    assert p.predict_proba([]).shape == (0, 2)
    # lists are fine too
    q = CallablePredictor(lambda xs: [[1.0, 0.0, 0.0] for _ in xs], ["a", "b", "c"])
    np.testing.assert_array_equal(q(["x"]), [[1.0, 0.0, 0.0]])


def test_callable_checklist_convention():
    def checklist_fn(texts):
        confs = np.array([[0.1, 0.2, 0.7] if "good" in t else [0.6, 0.3, 0.1]
                          for t in texts])
        return confs.argmax(axis=1), confs

    p = as_predictor(checklist_fn, class_names=["negative", "neutral", "positive"])
    out = p.predict_proba(["good", "bad"])
    np.testing.assert_allclose(out, [[0.1, 0.2, 0.7], [0.6, 0.3, 0.1]])
    # a 2-row plain result (not a CheckList tuple) is still read as probabilities
    two = CallablePredictor(lambda xs: ([0.5, 0.5], [0.3, 0.7]), ["a", "b"])
    np.testing.assert_allclose(two(["x", "y"]), [[0.5, 0.5], [0.3, 0.7]])


@pytest.mark.parametrize("fn, match", [
    (lambda xs: np.full((len(xs), 3), 1 / 3), r"shape \(2, 3\); expected \(2, 2\)"),
    (lambda xs: np.full((len(xs) + 1, 2), 0.5), r"shape \(3, 2\)"),
    (lambda xs: np.full(len(xs), 0.5), r"shape \(2,\)"),
    (lambda xs: np.ones((len(xs), 2)), "do not sum to 1"),
    (lambda xs: np.array([[1.5, -0.5]] * len(xs)), "negative"),
    (lambda xs: np.array([[np.nan, 1.0]] * len(xs)), "non-finite"),
    (lambda xs: (np.zeros(len(xs)), np.full((len(xs), 3), 1 / 3)), "expected"),
    (lambda xs: "nonsense", "not a numeric array|shape"),
])
def test_callable_bad_outputs(fn, match):
    p = CallablePredictor(fn, ["neg", "pos"])
    with pytest.raises(ModelError, match=match):
        p.predict_proba(["a", "b"])


def test_as_predictor_variants(tiny_dir, tiny):
    with pytest.raises(ModelError, match="class_names"):
        as_predictor(lambda xs: xs)
    assert as_predictor(tiny) is tiny
    with pytest.raises(ModelError, match="has classes"):
        as_predictor(tiny, class_names=["a", "b", "c"])
    from_path = as_predictor(tiny_dir)
    assert isinstance(from_path, HFClassifier)
    np.testing.assert_allclose(from_path.predict_proba(TEXTS), tiny.predict_proba(TEXTS),
                               atol=FLOAT32_ATOL, rtol=0)

    class SklearnLike:
        classes_ = np.array(["neg", "pos"])

        def predict_proba(self, texts):
            return np.array([[0.9, 0.1] for _ in texts])

    sk = as_predictor(SklearnLike())
    assert sk.class_names == ["neg", "pos"]
    assert sk.predict_proba(["x"]).shape == (1, 2)
    with pytest.raises(ModelError, match="repeated"):
        CallablePredictor(lambda xs: xs, ["a", "a"])
    with pytest.raises(ModelError, match="cannot use"):
        as_predictor(42)


# ---------------------------------------------------------------- default model
def test_label_band():
    assert [vd.label_of(r, 1.0) for r in (-1.0, -0.99, 0, 0.99, 1.0)] == [0, 1, 1, 1, 2]


def test_bucketed_batches_cover_all_once():
    lengths = np.random.default_rng(0).integers(3, 60, size=1000)
    batches = bucketed_batches(lengths, 32, np.random.default_rng(1), chunk_batches=5)
    flat = np.concatenate(batches)
    assert sorted(flat.tolist()) == list(range(1000))
    assert all(len(b) <= 32 for b in batches)
    # within a batch lengths are close (sorted chunks)
    spread = np.mean([np.ptp(lengths[b]) for b in batches])
    assert spread < np.ptp(lengths) / 2


def test_registry_errors(tmp_path):
    with pytest.raises(ModelError, match="unknown model 'nope'.*default-sentiment"):
        build_model("nope")
    names = [m["name"] for m in list_models()]
    assert "default-sentiment" in names
    (tmp_path / "occupied").mkdir()
    (tmp_path / "occupied" / "x.txt").write_text("mine")
    with pytest.raises(ModelError, match="not a built model"):
        dm.build_default_sentiment(tmp_path / "occupied")
    with pytest.raises(ModelError, match="epochs"):
        dm.build_default_sentiment(tmp_path / "new", epochs=0)


def test_vader_data(vader_sdist_path):
    rows = vd.load_vader_sentences(vader_sdist_path)
    assert len(rows) == 23_703
    assert {s: sum(r.source == s for r in rows) for s in vd.VADER_COUNTS} == vd.VADER_COUNTS
    assert all(r.text for r in rows) and all(-4 <= r.rating <= 4 for r in rows)
    merged, n = vd.merge_duplicates(rows)
    assert n == 148 and len(merged) == 23_555
    assert len({vd.normalise_text(r.text) for r in merged}) == len(merged)


@pytest.mark.slow
def test_default_sentiment_build_reduced(tmp_path, vader_sdist_path, monkeypatch):
    """Real path: VADER data, MiniLM encoder, a few training steps."""
    monkeypatch.setenv("BIAS_SUITE_CACHE", str(tmp_path / "cache"))
    out = build_model("default-sentiment", max_train=128, max_eval=64, progress=False,
                      threads=2, download_dir=vader_sdist_path.parent)
    assert out == tmp_path / "cache" / "models" / "default-sentiment"
    assert dm.is_built(out)
    assert all(p.stat().st_mode & 0o044 == 0o044 for p in out.iterdir())  # readable by all
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no temp dirs left
    card = (out / "README.md").read_text()
    assert "VADER" in card and "MIT" in card and "r <= -1" in card
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["data"]["sentences"] == 23_703
    assert metrics["data"]["split"]["train_used"] == 128
    assert metrics["held_out"]["n"] == 64
    # the default recipe holds every person-mentioning sentence out (the real-text suite's)
    split = metrics["data"]["split"]
    assert split["hold_out"] == "people" and split["people_full"] == 2_985 and split["people_used"] == 64
    assert split["train_full"] + split["held_out_full"] + split["people_full"] == 23_555
    assert metrics["held_out_people"]["n"] == 64 and 0 <= metrics["held_out_people"]["accuracy"] <= 1
    assert "the 2,985 sentences that mention a person" in card and "sentiment_vader_people" in card
    assert 0 <= metrics["held_out"]["accuracy"] <= 1
    # the card and metrics.json record the build time, the recipe and the held-out scores
    h = metrics["held_out"]
    assert metrics["build_seconds"] > 0 and metrics["build_cpu_seconds"] > 0
    assert metrics["recipe"] == dm.current_recipe("default-sentiment")
    assert metrics["training"]["frozen_layers"] == 4
    assert f"Accuracy {h['accuracy']:.3f}, macro-F1 {h['macro_f1']:.3f}" in card
    assert f"in {metrics['build_seconds']:.0f} s" in card and f"{metrics['build_cpu_seconds']:.0f} CPU-seconds" in card

    # plain transformers can load it
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(out)
    tok = AutoTokenizer.from_pretrained(out)
    assert model.config.id2label == {0: "negative", 1: "neutral", 2: "positive"}
    with torch.inference_mode():
        logits = model(**tok(["I loved it.", "It was awful."], padding=True,
                             return_tensors="pt")).logits
    assert logits.shape == (2, 3)

    # cached: no rebuild without force; ensure/list see it
    mtime = (out / "model.safetensors").stat().st_mtime_ns
    assert dm.ensure_default_sentiment() == out
    assert dm.build_default_sentiment() == out
    assert (out / "model.safetensors").stat().st_mtime_ns == mtime
    item = [m for m in list_models() if m["name"] == "default-sentiment"][0]
    assert item["built"] and item["path"] == str(out)
    assert set(item["metrics"]) == {"accuracy", "macro_f1"}


def test_stale_recipe_is_rebuilt_old_folder_kept_until_then(tmp_path, monkeypatch):
    """A cached model whose metrics.json names another recipe is rebuilt by
    ensure_model; the old folder is left alone until the builder replaces it."""
    monkeypatch.setenv("BIAS_SUITE_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "cache" / "models" / "default-sentiment"
    out.mkdir(parents=True)
    for f in ("config.json", "README.md", "model.safetensors"):
        (out / f).write_text("x")
    (out / "metrics.json").write_text(json.dumps({"recipe": "default-sentiment-old"}))
    current = dm.current_recipe("default-sentiment")
    assert current.startswith("default-sentiment-") and current != "default-sentiment-old"
    assert dm.is_built(out) and not dm.is_built(out, current)
    calls = []

    def fake_builder(**kw):
        calls.append(kw)
        assert (out / "metrics.json").is_file()  # still there while building
        (out / "metrics.json").write_text(json.dumps({"recipe": current}))
        return out

    monkeypatch.setitem(dm.DEFAULT_MODELS, "default-sentiment", fake_builder)
    assert dm.ensure_model("default-sentiment", progress=False) == out
    assert len(calls) == 1 and calls[0]["force"] is True and calls[0]["out_dir"] == out
    assert dm.ensure_model("default-sentiment") == out and len(calls) == 1   # current now: no rebuild
    item = [m for m in list_models() if m["name"] == "default-sentiment"][0]
    assert item["built"] and item["current"]
    from typer.testing import CliRunner

    from bias_suite.cli import app

    res = CliRunner().invoke(app, ["models", "list"], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    line = next(x for x in res.output.splitlines() if "default-sentiment" in x)
    assert "yes" in line
    (out / "metrics.json").write_text(json.dumps({"recipe": "default-sentiment-old"}))
    res = CliRunner().invoke(app, ["models", "list"], env={"COLUMNS": "250"})
    assert "old recipe" in next(x for x in res.output.splitlines() if "default-sentiment" in x)
