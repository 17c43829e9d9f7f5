"""The int8 inference path (dynamic quantization of the linear layers on the
CPU) of classifiers and taggers: close to float32, selected by ``dtype``,
part of the prediction-cache fingerprint."""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import pytest

from _tiny_models import make_tiny_classifier
from _tiny_ner import make_tiny_crf_tagger, make_tiny_token_classifier
from bias_suite.exceptions import ModelError

TEXTS = ["I liked that gay writer.", "the movie was not good", "She is a nurse.", "zebra",
         "they hated the food and the service was awful , really awful !"]
TOKENS = [["Emma", "lives", "in", "Paris", "."], ["the", "nurse", "is", "here"], ["zebra"]]


def test_classifier_int8_close_to_fp32_and_fingerprinted(tmp_path):
    import torch

    from bias_suite.models import HFClassifier

    path = make_tiny_classifier(tmp_path / "tiny")
    fp32 = HFClassifier(path, device="cpu", progress=False)
    int8 = HFClassifier(path, device="auto", progress=False, dtype="int8")
    assert int8.device == "cpu" and int8.dtype == "int8"
    p32, p8 = fp32.predict_proba(TEXTS), int8.predict_proba(TEXTS)
    assert p8.shape == p32.shape and np.allclose(p8.sum(axis=1), 1.0)
    assert np.max(np.abs(p8 - p32)) < 0.05          # int8 weights: small, not zero, differences
    linear = [m for m in int8.model.modules() if type(m) is torch.nn.Linear]
    assert not linear                                   # every Linear was replaced
    f32, f8 = fp32.fingerprint(), int8.fingerprint()
    assert f8["dtype"] == "int8" and "quantization" in f8 and f32["dtype"] != "int8"
    assert f8["weights_sha256"] == f32["weights_sha256"]
    assert int8.spec()["kwargs"]["dtype"] == "int8"


def test_int8_needs_the_cpu(tmp_path):
    from bias_suite.models import HFClassifier

    path = make_tiny_classifier(tmp_path / "tiny")
    with pytest.raises(ModelError, match="int8.*CPU"):
        HFClassifier(path, device="cuda", progress=False, dtype="int8")
    with pytest.raises(ModelError, match="int8"):
        HFClassifier(path, device="cpu", progress=False, dtype="int4")


def test_taggers_int8(tmp_path):
    from bias_suite.models import HFTokenClassifier, TransformerCrfTagger

    crf = make_tiny_crf_tagger(tmp_path / "crf")
    a = TransformerCrfTagger(crf, device="cpu", progress=False)
    b = TransformerCrfTagger(crf, device="cpu", progress=False, dtype="int8")
    (ta, pa), (tb, pb) = a.predict(TOKENS), b.predict(TOKENS)
    assert [len(t) for t in tb] == [len(t) for t in TOKENS]
    assert max(np.max(np.abs(x - y)) for x, y in zip(pa, pb)) < 0.05
    assert b.fingerprint()["dtype"] == "int8" and a.fingerprint()["dtype"] == "float32"
    assert b.fingerprint()["weights_sha256"] == a.fingerprint()["weights_sha256"]

    tok = make_tiny_token_classifier(tmp_path / "tok")
    c = HFTokenClassifier(tok, device="cpu", progress=False)
    d = HFTokenClassifier(tok, device="cpu", progress=False, dtype="int8")
    (_, pc), (_, pd_) = c.predict(TOKENS), d.predict(TOKENS)
    assert max(np.max(np.abs(x - y)) for x, y in zip(pc, pd_)) < 0.05
    assert d.fingerprint()["dtype"] == "int8" and c.fingerprint()["dtype"] == "float32"


def test_prediction_cache_keeps_int8_apart(tmp_path):
    from bias_suite.models import HFClassifier
    from bias_suite.predict import predict

    path = make_tiny_classifier(tmp_path / "tiny")
    cache = tmp_path / "cache"
    p32, s32 = predict(HFClassifier(path, device="cpu", progress=False), TEXTS, cache=cache)
    p8, s8 = predict(HFClassifier(path, device="cpu", progress=False, dtype="int8"), TEXTS, cache=cache)
    assert s8.to_dict()["computed"] == len(TEXTS)       # not answered from the float32 store
    again, s8b = predict(HFClassifier(path, device="cpu", progress=False, dtype="int8"), TEXTS, cache=cache)
    assert s8b.to_dict()["computed"] == 0 and np.array_equal(again, p8)


def test_cli_dtype_int8(tmp_path):
    import json

    from typer.testing import CliRunner

    from bias_suite.cli import app

    path = make_tiny_classifier(tmp_path / "tiny")
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["run", "sentiment_religion", "--model", str(path), "--out", str(out), "-q",
                                   "--bootstrap", "0", "--dtype", "int8", "--cache-dir", str(tmp_path / "cache")])
    assert res.exit_code == 0, res.output
    meta = json.loads((out / "run.json").read_text())
    meta = meta.get("metadata", meta)
    assert meta["model_fingerprint"]["dtype"] == "int8"
