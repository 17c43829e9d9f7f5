"""Prediction cache, resume and the runner (bias_suite.predict)."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _tiny_models import FLOAT32_ATOL
from bias_suite.exceptions import BiasSuiteError
from bias_suite.models import CallablePredictor, HFClassifier
from bias_suite.predict import CacheWarning, Outputs, PredictionCache, predict
from bias_suite.predict.cache import store_id

TESTS = Path(__file__).resolve().parent


def toy_probs(texts):
    """Deterministic 3-class probabilities from the text alone."""
    a = np.array([[len(t) % 5 + 1.0, (sum(map(ord, t)) % 7) + 1.0, 2.0] for t in texts]).reshape(-1, 3)
    return a / a.sum(axis=1, keepdims=True)


class Counting:
    """A fingerprinted toy classifier that records the size of every call."""

    def __init__(self, fp="toy-v1", fail_on_call=None, exc=KeyboardInterrupt):
        self.calls: list[int] = []
        self.fail_on_call, self.exc = fail_on_call, exc
        self.pred = CallablePredictor(self._fn, ["neg", "neu", "pos"], fingerprint=fp)
        self.class_names = self.pred.class_names
        self.batch_size = 4

    def _fn(self, texts):
        self.calls.append(len(texts))
        if self.fail_on_call is not None and len(self.calls) == self.fail_on_call:
            raise self.exc("stop here")
        return toy_probs(texts)

    def predict_proba(self, texts):
        return self.pred.predict_proba(texts)

    def fingerprint(self):
        return self.pred.fingerprint()


TEXTS = [f"sentence number {i} {'x' * (i % 13)}" for i in range(60)]


def test_outputs_take_and_concat_by_hand():
    # item 0 has rows [1,2], item 1 none, item 2 row [3]
    o = Outputs(np.array([[1.0], [2.0], [3.0]]), np.array([0, 2, 2, 3]), np.array([7, 8, 9]))
    t = o.take([2, 0, 0, 1])
    assert t.offsets.tolist() == [0, 1, 3, 5, 5]
    assert t.values.ravel().tolist() == [3.0, 1.0, 2.0, 1.0, 2.0]
    assert t.tags.tolist() == [9, 7, 8, 7, 8]
    c = Outputs.concat([t, o])
    assert len(c) == 7 and c.offsets[-1] == 8 and c.take([5]).values.ravel().tolist() == []
    with pytest.raises(BiasSuiteError, match="offsets"):
        Outputs(np.zeros((2, 1)), np.array([0, 3]))


def test_second_run_makes_no_calls_and_is_bit_identical(tmp_path):
    texts = TEXTS + TEXTS[:20]  # duplicates are predicted once
    p1 = Counting()
    r1, s1 = predict(p1, texts, cache=tmp_path, chunk_size=16)
    assert s1.inputs == 80 and s1.distinct == 60 and s1.computed == 60 and s1.cached == 0
    assert sum(p1.calls) == 60 and max(p1.calls) <= 16 and s1.chunks == 4
    np.testing.assert_array_equal(r1, toy_probs(texts))
    p2 = Counting()
    r2, s2 = predict(p2, texts, cache=tmp_path, chunk_size=16)
    assert p2.calls == [] and s2.computed == 0 and s2.cached == 60
    assert np.array_equal(r1, r2)
    # only what is new is predicted; order of the inputs does not matter
    p3 = Counting()
    r3, s3 = predict(p3, ["brand new", *texts[::-1]], cache=tmp_path)
    assert p3.calls == [1] and s3.cached == 60
    assert np.array_equal(r3[1:], r1[::-1])


def test_fingerprint_separates_models(tmp_path):
    predict(Counting("v1"), TEXTS, cache=tmp_path)
    p = Counting("v2")
    _, s = predict(p, TEXTS, cache=tmp_path)
    assert s.computed == 60 and sum(p.calls) == 60
    info = PredictionCache(tmp_path).info()
    assert len(info) == 2 and sorted(r["predictions"] for r in info) == [60, 60]
    assert store_id({"a": 1, "b": 2}, "classification") == store_id({"b": 2, "a": 1}, "classification")
    assert store_id({"a": 1}, "classification") != store_id({"a": 1}, "sequence_labelling")


def test_no_fingerprint_or_cache_off_never_caches(tmp_path):
    calls = []

    def fn(texts):
        calls.append(len(texts))
        return toy_probs(texts)

    plain = CallablePredictor(fn, ["neg", "neu", "pos"])
    _, s = predict(plain, TEXTS, cache=tmp_path)
    _, s = predict(plain, TEXTS, cache=tmp_path)
    assert sum(calls) == 120 and "no fingerprint" in s.cache_note and s.cache is None
    p = Counting()
    _, s = predict(p, TEXTS, cache=False)
    assert s.cache_note == "cache off" and not list(tmp_path.glob("*.sqlite"))


def _store_path(root):
    (path,) = list(Path(root).glob("*.sqlite"))
    return path


def test_tampered_chunk_is_detected_and_recomputed(tmp_path):
    r1, _ = predict(Counting(), TEXTS, cache=tmp_path, chunk_size=16)
    con = sqlite3.connect(_store_path(tmp_path))
    (vals,) = con.execute("SELECT vals FROM chunks WHERE id = 2").fetchone()
    flipped = bytearray(vals)
    flipped[5] ^= 0x10  # one bit of one float, same length: only the digest can tell
    con.execute("UPDATE chunks SET vals = ? WHERE id = 2", (bytes(flipped),))
    con.commit()
    con.close()
    p = Counting()
    with pytest.warns(CacheWarning, match="failed their check"):
        r2, s = predict(p, TEXTS, cache=tmp_path, chunk_size=16)
    assert s.computed == 16 and sum(p.calls) == 16  # exactly the bad chunk
    assert np.array_equal(r1, r2)
    p = Counting()
    _, s = predict(p, TEXTS, cache=tmp_path)
    assert s.computed == 0  # repaired


def test_truncated_keys_and_wrong_kind_of_value(tmp_path):
    predict(Counting(), TEXTS, cache=tmp_path, chunk_size=30)
    con = sqlite3.connect(_store_path(tmp_path))
    con.execute("UPDATE chunks SET keys = substr(keys, 1, 40) WHERE id = 1")  # partial entry
    con.execute("UPDATE chunks SET vals = 'not a blob' WHERE id = 2")
    con.commit()
    con.close()
    p = Counting()
    with pytest.warns(CacheWarning):
        r, s = predict(p, TEXTS, cache=tmp_path, chunk_size=30)
    assert s.computed == 60 and np.array_equal(r, toy_probs(TEXTS))


def test_unreadable_file_is_moved_aside(tmp_path):
    r1, _ = predict(Counting(), TEXTS, cache=tmp_path)
    path = _store_path(tmp_path)
    for suffix in ("-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    path.write_bytes(b"this is not a database" * 100)
    with pytest.warns(CacheWarning, match="moved it to"):
        r2, s = predict(Counting(), TEXTS, cache=tmp_path)
    assert s.computed == 60 and np.array_equal(r1, r2)
    cache = PredictionCache(tmp_path)
    assert len(cache.corrupt_files()) == 1 and cache.info()[0]["predictions"] == 60
    assert cache.clear() and not cache.info() and not cache.corrupt_files()


def test_keyboard_interrupt_keeps_finished_chunks(tmp_path):
    p = Counting(fail_on_call=3)
    with pytest.raises(KeyboardInterrupt):
        predict(p, TEXTS, cache=tmp_path, chunk_size=10)
    assert PredictionCache(tmp_path).info()[0]["predictions"] == 20  # chunks 1 and 2
    p = Counting()
    r, s = predict(p, TEXTS, cache=tmp_path, chunk_size=10)
    assert s.cached == 20 and s.computed == 40 and sum(p.calls) == 40
    assert np.array_equal(r, toy_probs(TEXTS))


def test_killed_process_resumes(tmp_path):
    """SIGKILL in the middle of a run (no cleanup at all): the next run
    predicts only what the killed one had not committed."""
    script = tmp_path / "victim.py"
    script.write_text(textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(TESTS)!r})
        from test_predict_cache import TEXTS, toy_probs
        from bias_suite.models import CallablePredictor
        from bias_suite.predict import predict
        calls = []
        def fn(texts):
            calls.append(len(texts))
            if len(calls) == 4:
                os.kill(os.getpid(), signal.SIGKILL)
            return toy_probs(texts)
        predict(CallablePredictor(fn, ["neg", "neu", "pos"], fingerprint="toy-v1"), TEXTS,
                cache={str(tmp_path / "cache")!r}, chunk_size=10)
    """))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    p = Counting()
    r, s = predict(p, TEXTS, cache=tmp_path / "cache", chunk_size=10)
    assert s.cached == 30 and s.computed == 30 and sum(p.calls) == 30
    assert np.array_equal(r, toy_probs(TEXTS))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(TEXTS[:25]), min_size=0, max_size=40), st.lists(st.sampled_from(TEXTS[:25]), max_size=25),
       st.integers(1, 9))
def test_property_cache_never_changes_answers(tmp_path_factory, texts, warm, chunk):
    root = tmp_path_factory.mktemp("prop")
    predict(Counting(), warm, cache=root, chunk_size=chunk)
    p = Counting()
    r, s = predict(p, texts, cache=root, chunk_size=chunk)
    assert np.array_equal(r, toy_probs(texts).reshape(len(texts), 3))
    assert s.computed == len(set(texts) - set(warm)) == sum(p.calls)
    assert s.cached == len(set(texts) & set(warm))


# ----------------------------------------------------------- real models
@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    from _tiny_models import make_tiny_classifier

    return make_tiny_classifier(tmp_path_factory.mktemp("m") / "tiny")


@pytest.mark.slow  # builds a tiny Hugging Face model
def test_hf_cached_rerun_never_loads_weights(tiny_dir, tmp_path):
    words = "the movie was good bad awful great nice".split()
    texts = [" ".join(words[: 1 + i % 8]) + f" {'a' * (i % 5)}" for i in range(50)]
    clf = HFClassifier(tiny_dir, device="cpu", batch_size=4, progress=False)
    r1, s1 = predict(clf, texts, cache=tmp_path)
    assert clf.loaded and s1.computed == len(set(texts))
    np.testing.assert_allclose(r1, HFClassifier(tiny_dir, device="cpu", progress=False).predict_proba(texts),
                               atol=FLOAT32_ATOL, rtol=0)
    again = HFClassifier(tiny_dir, device="cpu", batch_size=4, progress=False)
    r2, s2 = predict(again, texts, cache=tmp_path)
    assert not again.loaded and s2.computed == 0 and np.array_equal(r1, r2)
    # anything that changes the predictions changes the store
    other = HFClassifier(tiny_dir, device="cpu", max_length=4, progress=False)
    _, s3 = predict(other, texts, cache=tmp_path)
    assert s3.computed == len(set(texts))
    assert len(PredictionCache(tmp_path).info()) == 2


def test_hf_weights_change_changes_fingerprint(tmp_path):
    from _tiny_models import make_tiny_classifier

    a = make_tiny_classifier(tmp_path / "a", seed=0)
    fp1 = HFClassifier(a, progress=False).fingerprint()
    make_tiny_classifier(tmp_path / "a", seed=1)  # same folder, new weights
    fp2 = HFClassifier(a, progress=False).fingerprint()
    assert fp1["weights_sha256"] != fp2["weights_sha256"]
    assert fp1["versions"]["torch"] and fp1["dtype"].startswith("auto:")
    tok = json.loads((Path(a) / "tokenizer_config.json").read_text())
    tok["do_lower_case"] = not tok.get("do_lower_case", True)  # a tokenizer change alone
    (Path(a) / "tokenizer_config.json").write_text(json.dumps(tok))
    assert HFClassifier(a, progress=False).fingerprint()["weights_sha256"] != fp2["weights_sha256"]


def test_tagger_cache_roundtrip(tmp_path):
    from _tiny_ner import make_tiny_crf_tagger

    from bias_suite.models import TransformerCrfTagger

    path = make_tiny_crf_tagger(tmp_path / "crf")
    sents = [["the", "man", "was", "good"], ["she", "is", "a", "nurse", "in", "the", "film"], ["a"],
             ["the", "man", "was", "good"]]
    t1 = TransformerCrfTagger(path, device="cpu", progress=False)
    direct = t1.predict(sents)
    (tags1, probs1), s1 = predict(t1, sents, cache=tmp_path / "c", chunk_size=2)
    assert s1.computed == 3 and tags1 == direct[0]
    for a, b in zip(probs1, direct[1]):  # chunks of 2 pad differently from the whole batch
        np.testing.assert_allclose(a, b, atol=FLOAT32_ATOL, rtol=0)
    t2 = TransformerCrfTagger(path, device="cpu", progress=False)
    (tags2, probs2), s2 = predict(t2, sents, cache=tmp_path / "c")
    assert s2.computed == 0 and tags2 == tags1
    assert all(np.array_equal(a, b) for a, b in zip(probs1, probs2))


def test_cli_run_uses_cache_and_cache_commands(tiny_dir, tmp_path):
    from typer.testing import CliRunner

    from bias_suite.cli import app

    from _report_data import mini_names_suite

    suite = mini_names_suite(tmp_path / "s")
    cache = tmp_path / "cache"
    runner = CliRunner()
    args = ["run", str(suite), "--model", str(tiny_dir), "-q", "--bootstrap", "0", "--cache-dir", str(cache)]
    r = runner.invoke(app, args + ["--out", str(tmp_path / "o1")])
    assert r.exit_code == 0, r.output
    m1 = json.loads((tmp_path / "o1" / "run.json").read_text())
    pred = m1.get("predictions") or m1["metadata"]["predictions"]
    n = pred["distinct"]
    assert n > 10 and pred["computed"] == n and pred["cached"] == 0 and f"{n} predicted" in r.output
    r = runner.invoke(app, args + ["--out", str(tmp_path / "o2")])
    m2 = json.loads((tmp_path / "o2" / "run.json").read_text())
    pred = m2.get("predictions") or m2["metadata"]["predictions"]
    assert r.exit_code == 0 and pred["computed"] == 0 and pred["cached"] == n
    assert (tmp_path / "o1" / "results.csv").read_text() == (tmp_path / "o2" / "results.csv").read_text()
    r = runner.invoke(app, args + ["--out", str(tmp_path / "o3"), "--no-cache"])
    m3 = json.loads((tmp_path / "o3" / "run.json").read_text())
    assert (m3.get("predictions") or m3["metadata"]["predictions"])["computed"] == n
    r = runner.invoke(app, ["cache", "info", "--cache-dir", str(cache), "--json"])
    info = json.loads(r.output)
    assert r.exit_code == 0 and len(info["stores"]) == 1 and info["stores"][0]["predictions"] == n
    assert info["stores"][0]["model"] == str(Path(tiny_dir).resolve())
    r = runner.invoke(app, ["cache", "info", "--cache-dir", str(cache)])
    assert str(n) in r.output and "classification" in r.output
    r = runner.invoke(app, ["cache", "clear", "nomatch", "--cache-dir", str(cache), "-y"])
    assert "nothing to clear" in r.output
    r = runner.invoke(app, ["cache", "clear", "--cache-dir", str(cache)])   # no terminal to ask on
    assert r.exit_code == 2 and "pass --yes (-y)" in r.output and PredictionCache(cache).info()
    r = runner.invoke(app, ["cache", "clear", "--cache-dir", str(cache), "-y"])
    assert r.exit_code == 0 and "removed 1" in r.output and not PredictionCache(cache).info()


def test_half_precision_taggers_and_classifier_on_cpu(tiny_dir, tmp_path):
    """bf16 weights (meant for GPUs; CPU runs them too): valid probabilities
    close to float32, the CRF still decodes valid tags, and the cache keeps
    float32 and bf16 predictions apart."""
    from _tiny_ner import make_tiny_crf_tagger

    from bias_suite.models import TransformerCrfTagger

    texts = ["the movie was good", "she is a nurse", "awful film"]
    p32 = HFClassifier(tiny_dir, device="cpu", progress=False).predict_proba(texts)
    clf16 = HFClassifier(tiny_dir, device="cpu", progress=False, dtype="bf16")
    assert next(clf16.model.parameters()).dtype.__str__() == "torch.bfloat16"
    p16, s = predict(clf16, texts, cache=tmp_path)
    np.testing.assert_allclose(p16.sum(axis=1), 1.0)
    np.testing.assert_allclose(p16, p32, atol=0.05)
    assert s.computed == 3
    _, s = predict(HFClassifier(tiny_dir, device="cpu", progress=False), texts, cache=tmp_path)
    assert s.computed == 3  # a float32 run does not reuse bf16 predictions
    path = make_tiny_crf_tagger(tmp_path / "crf")
    sents = [["the", "man", "was", "good"], ["she", "is", "a", "nurse"]]
    t32 = TransformerCrfTagger(path, device="cpu", progress=False)
    t16 = TransformerCrfTagger(path, device="cpu", progress=False, dtype="bf16")
    assert t16.fingerprint()["dtype"] == "bfloat16" and t32.fingerprint()["dtype"] == "float32"
    assert next(t16.model.crf.parameters()).dtype.__str__() == "torch.float32"
    tags, probs = t16.predict(sents)
    assert [len(t) for t in tags] == [4, 4] and all(t in t16.tag_names for seq in tags for t in seq)
    for a, b in zip(probs, t32.predict(sents)[1]):
        np.testing.assert_allclose(a, b, atol=0.05)


def test_interrupt_keeps_every_finished_batch_of_a_streaming_model(tiny_dir, tmp_path):
    """HFClassifier streams its batches: an interruption inside a chunk keeps
    the batches before it (a chunk of 40 texts = 10 batches of 4 here)."""
    texts = [f"the movie was good {'a' * i}" for i in range(40)]
    clf = HFClassifier(tiny_dir, device="cpu", batch_size=4, progress=False)
    seen = []

    def hook(module, args, kwargs):
        seen.append(kwargs["input_ids"].shape[0])
        if len(seen) == 4:
            raise KeyboardInterrupt

    h = clf.model.register_forward_pre_hook(hook, with_kwargs=True)
    with pytest.raises(KeyboardInterrupt):
        predict(clf, texts, cache=tmp_path, chunk_size=40)
    h.remove()
    assert PredictionCache(tmp_path).info()[0]["predictions"] == 12  # batches 1-3
    again = HFClassifier(tiny_dir, device="cpu", batch_size=4, progress=False)
    n_rows = []
    h = again.model.register_forward_pre_hook(lambda m, a, k: n_rows.append(k["input_ids"].shape[0]),
                                              with_kwargs=True)
    r, s = predict(again, texts, cache=tmp_path, chunk_size=40)
    h.remove()
    assert s.cached == 12 and s.computed == 28 and sum(n_rows) == 28
    ref = HFClassifier(tiny_dir, device="cpu", batch_size=4, progress=False).predict_proba(texts)
    np.testing.assert_allclose(r, ref, atol=FLOAT32_ATOL, rtol=0)
    # batch-by-batch results equal predict_proba's
    out = np.empty_like(ref)
    for pos, p in again.iter_predict_proba(texts + texts[:3]):
        out[pos[pos < 40]] = p[pos < 40]
    np.testing.assert_allclose(out, ref, atol=FLOAT32_ATOL, rtol=0)
