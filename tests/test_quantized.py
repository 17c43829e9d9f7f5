"""The CPU inference paths of classifiers and taggers beyond float32:
``int8`` (torch dynamic quantization of the linear layers), ``onnx`` (ONNX
Runtime, float32), ``onnx-int8`` (ONNX Runtime, int8 weights, uncertain
rows recomputed in float32) and ``onnx-int8-unchecked`` (int8 alone). Close to float32 (``onnx``: equal up to float rounding), selected
by ``dtype`` from Python and ``--dtype`` on the command line, part of the
prediction-cache fingerprint."""
from __future__ import annotations

import os
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import pytest

from _tiny_models import make_tiny_classifier
from _tiny_ner import make_tiny_crf_tagger, make_tiny_token_classifier
from bias_suite.exceptions import ModelError

# Exports ONNX models and quantizes them: left out of make test-fast (pytest -m 'not slow')
pytestmark = pytest.mark.slow


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


# ------------------------------------------------------------------ ONNX Runtime paths
#: ONNX Runtime's float32 kernels (MLAS, fused attention / layer norm / GELU)
#: round differently from torch's; 1e-4 is ten times FLOAT32_ATOL (two torch
#: float32 paths) and still far below anything a metric notices.
ONNX_ATOL = 1e-4
#: int8 weights in every weight MatMul of the tiny random models (hidden 16,
#: activations quantized per batch): a loose, machine-independent bound on
#: how far the probabilities may move (0.11 seen); the default models'
#: figures are in docs/scale.md.
ONNX_INT8_ATOL = 0.25
LONG = " ".join(["they hated the food"] * 12)


def _ort():
    return pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install onnxruntime onnx)")


def _margin(p):
    s = np.sort(p, axis=1)
    return s[:, -1] - s[:, -2]


@pytest.mark.parametrize("batch_size", [2, 64])
def test_classifier_onnx_same_argmax_as_fp32(tmp_path, batch_size):
    _ort()
    from bias_suite.models import HFClassifier

    path = make_tiny_classifier(tmp_path / "tiny")
    texts = TEXTS + [LONG, "a"]
    fp32 = HFClassifier(path, device="cpu", progress=False, batch_size=batch_size)
    onnx = HFClassifier(path, device="auto", progress=False, dtype="onnx", batch_size=batch_size)
    assert onnx.device == "cpu" and onnx.dtype == "onnx" and onnx.runtime == "onnx" and not onnx.quantized
    p32, po = fp32.predict_proba(texts), onnx.predict_proba(texts)
    assert po.shape == p32.shape and np.allclose(po.sum(axis=1), 1.0)
    # batches of other shapes than the export's example (batch 2, length 6) run through the same graph
    assert np.max(np.abs(po - p32)) < ONNX_ATOL
    assert _margin(p32).min() > 10 * ONNX_ATOL          # no near-tie: the argmax is well defined
    assert np.array_equal(po.argmax(axis=1), p32.argmax(axis=1))
    f32, fo = fp32.fingerprint(), onnx.fingerprint()
    assert fo["dtype"] == "onnx" and fo["quantization"]["scheme"].startswith("ONNX Runtime float32")
    assert fo["weights_sha256"] == f32["weights_sha256"] and "quantization" not in f32
    assert onnx.spec()["kwargs"]["dtype"] == "onnx"


def _export_tiny(path, tmp_path):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from bias_suite.models.onnx_runtime import OPSET

    m = AutoModelForSequenceClassification.from_pretrained(path).eval()
    b = dict(AutoTokenizer.from_pretrained(path)(["a b c", "a"], padding=True, return_tensors="pt"))
    src = tmp_path / "m.onnx"
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")             # the TorchScript exporter's deprecation and tracer notes
        torch.onnx.export(m, (), str(src), kwargs=b, input_names=list(b), output_names=["logits"],
                          dynamic_axes={k: {0: "b", 1: "s"} for k in b}, opset_version=OPSET, dynamo=False)
    return m, src


def test_onnx_int8_quantizes_every_weight_matmul(tmp_path):
    _ort()
    import onnx as onnx_lib

    from bias_suite.models.onnx_runtime import quantize_matmuls, weight_matmuls

    path = make_tiny_classifier(tmp_path / "tiny")
    m, src = _export_tiny(path, tmp_path)
    names = weight_matmuls(src)
    # the tiny model has one layer: query, key, value, attention output, intermediate, output
    assert len(names) == 6 and sum("attention" in n for n in names) == 4
    assert quantize_matmuls(src, tmp_path / "q.onnx") == names
    nodes = onnx_lib.load(str(tmp_path / "q.onnx")).graph.node
    ops = [n.op_type for n in nodes]
    assert ops.count("MatMulInteger") + ops.count("DynamicQuantizeMatMul") == 6
    # attention's scores and weighted values stay float32 products of activations
    kept = {n.name for n in nodes if n.op_type == "MatMul"}
    assert {"/bert/encoder/layer.0/attention/self/MatMul", "/bert/encoder/layer.0/attention/self/MatMul_1"} <= kept
    assert not kept & set(names)
    with pytest.raises(ModelError, match="no weight MatMul"):
        quantize_matmuls(src, tmp_path / "none.onnx", nodes=[])


def test_onnx_int8_rechecks_exactly_the_uncertain_rows(tmp_path):
    _ort()
    import torch

    from bias_suite.models.onnx_runtime import OrtFunction

    path = make_tiny_classifier(tmp_path / "tiny")
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    tok = AutoTokenizer.from_pretrained(path)
    batch = {k: v.numpy() for k, v in tok(TEXTS + [LONG], padding=True, return_tensors="pt").items()
             if k in ("input_ids", "attention_mask")}
    example = {k: torch.from_numpy(v[:2]) for k, v in batch.items()}
    dynamic = {k: {0: "b", 1: "s"} for k in batch} | {"out": {0: "b"}}

    def fn(ids, att):
        return model(input_ids=ids, attention_mask=att).logits

    unsure = np.array([True, False, True, False, False, True])    # a fixed verdict per row

    def make(mode, **kw):
        return OrtFunction(model, fn, example, dynamic, mode=mode, **kw)

    f32, raw = make("onnx"), make("onnx-int8-unchecked")
    checked = make("onnx-int8", margin=lambda out, feed: np.where(unsure, 0.0, 1.0), recheck=0.5)
    o32, oraw, ochk = f32(**batch), raw(**batch), checked(**batch)
    assert np.abs(oraw - o32).max() > 0                                   # int8 moves the logits
    assert np.array_equal(ochk[~unsure], oraw[~unsure])                   # the sure rows keep int8
    assert np.abs(ochk[unsure] - o32[unsure]).max() < ONNX_ATOL           # the unsure ones are float32
    assert (checked.rows, checked.rechecked) == (6, 3)
    nothing = make("onnx-int8", margin=lambda out, feed: np.ones(len(out)), recheck=0.5)
    assert np.array_equal(nothing(**batch), oraw) and nothing.rechecked == 0


def test_classifier_onnx_int8_rechecked_rows_are_float32(tmp_path):
    _ort()
    from bias_suite.models import HFClassifier
    from bias_suite.models.onnx_runtime import RECHECK_MARGIN

    path = make_tiny_classifier(tmp_path / "tiny")
    texts = TEXTS + [LONG, "a"]
    fp32 = HFClassifier(path, device="cpu", progress=False, dtype="onnx")
    q = HFClassifier(path, device="cpu", progress=False, dtype="onnx-int8")
    raw = HFClassifier(path, device="cpu", progress=False, dtype="onnx-int8-unchecked")
    assert q.dtype == "onnx-int8" and raw.dtype == "onnx-int8-unchecked"
    p32, pq, praw = fp32.predict_proba(texts), q.predict_proba(texts), raw.predict_proba(texts)
    assert 0 < np.abs(praw - p32).max() < ONNX_INT8_ATOL                 # int8 weights: small, not zero, differences
    sure = _margin(praw) >= RECHECK_MARGIN
    assert np.array_equal(pq[sure], praw[sure])
    assert np.abs(pq[~sure] - p32[~sure]).max(initial=0) < ONNX_ATOL
    f = q.model.function
    assert f.rows == len(texts) and f.rechecked == int((~sure).sum())
    scheme = q.fingerprint()["quantization"]["scheme"]
    assert "every weight MatMul" in scheme and f"closer than {RECHECK_MARGIN}" in scheme
    assert "float32" not in raw.fingerprint()["quantization"]["scheme"]


def test_onnx_needs_the_cpu_and_known_spellings(tmp_path):
    _ort()
    from bias_suite.models import HFClassifier

    path = make_tiny_classifier(tmp_path / "tiny")
    with pytest.raises(ModelError, match="onnx.*CPU"):
        HFClassifier(path, device="cuda", progress=False, dtype="onnx")
    with pytest.raises(ModelError, match="onnx-int8"):
        HFClassifier(path, device="cpu", progress=False, dtype="onnx-int4")
    assert HFClassifier(path, device="cpu", progress=False, dtype="ORT").dtype == "onnx"
    assert HFClassifier(path, device="cpu", progress=False, dtype="onnx_int8").dtype == "onnx-int8"
    assert HFClassifier(path, device="cpu", progress=False, dtype="ort-int8-unchecked").dtype == "onnx-int8-unchecked"


def test_taggers_onnx(tmp_path):
    _ort()
    from bias_suite.models import HFTokenClassifier, TransformerCrfTagger

    tokens = TOKENS + [LONG.split()]
    crf = make_tiny_crf_tagger(tmp_path / "crf")
    a = TransformerCrfTagger(crf, device="cpu", progress=False, batch_size=2)
    b = TransformerCrfTagger(crf, device="cpu", progress=False, batch_size=2, dtype="onnx")
    (ta, pa), (tb, pb) = a.predict(tokens), b.predict(tokens)
    assert [len(t) for t in tb] == [len(t) for t in tokens]
    assert max(np.max(np.abs(x - y)) for x, y in zip(pa, pb)) < ONNX_ATOL
    assert min(_margin(x).min() for x in pa) > 10 * ONNX_ATOL and ta == tb   # Viterbi on near-equal emissions
    assert b.fingerprint()["dtype"] == "onnx" and b.fingerprint()["weights_sha256"] == a.fingerprint()["weights_sha256"]
    c = TransformerCrfTagger(crf, device="cpu", progress=False, dtype="onnx-int8")
    assert c.fingerprint()["dtype"] == "onnx-int8" and c.spec()["kwargs"]["dtype"] == "onnx-int8"
    assert "CRF marginals" in c.fingerprint()["quantization"]["scheme"]
    tc_, pc_ = c.predict(tokens)
    assert [len(t) for t in tc_] == [len(t) for t in tokens]
    f = c._emissions.function
    assert f.rows == len(tokens) and 0 <= f.rechecked <= f.rows

    tok = make_tiny_token_classifier(tmp_path / "tok")
    c = HFTokenClassifier(tok, device="cpu", progress=False, batch_size=2)
    d = HFTokenClassifier(tok, device="cpu", progress=False, batch_size=2, dtype="onnx")
    (tc, pc), (td, pd_) = c.predict(tokens), d.predict(tokens)
    assert max(np.max(np.abs(x - y)) for x, y in zip(pc, pd_)) < ONNX_ATOL
    assert min(_margin(x).min() for x in pc) > 10 * ONNX_ATOL and tc == td
    assert d.fingerprint()["dtype"] == "onnx" and d.spec()["kwargs"]["dtype"] == "onnx"


def test_prediction_cache_keeps_onnx_apart(tmp_path):
    _ort()
    from bias_suite.models import HFClassifier
    from bias_suite.predict import predict

    path = make_tiny_classifier(tmp_path / "tiny")
    cache = tmp_path / "cache"
    predict(HFClassifier(path, device="cpu", progress=False), TEXTS, cache=cache)
    po, so = predict(HFClassifier(path, device="cpu", progress=False, dtype="onnx"), TEXTS, cache=cache)
    assert so.to_dict()["computed"] == len(TEXTS)       # not answered from the float32 store
    _, sq = predict(HFClassifier(path, device="cpu", progress=False, dtype="onnx-int8"), TEXTS, cache=cache)
    assert sq.to_dict()["computed"] == len(TEXTS)
    again, so2 = predict(HFClassifier(path, device="cpu", progress=False, dtype="onnx"), TEXTS, cache=cache)
    assert so2.to_dict()["computed"] == 0 and np.array_equal(again, po)


@pytest.mark.parametrize("dtype", ["onnx", "onnx-int8", "onnx-int8-unchecked"])
def test_cli_dtype_onnx(tmp_path, dtype):
    _ort()
    import json

    from typer.testing import CliRunner

    from bias_suite.cli import app

    path = make_tiny_classifier(tmp_path / "tiny")
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["run", "sentiment_religion", "--model", str(path), "--out", str(out), "-q",
                                   "--bootstrap", "0", "--dtype", dtype, "--cache-dir", str(tmp_path / "cache")])
    assert res.exit_code == 0, res.output
    meta = json.loads((out / "run.json").read_text())
    meta = meta.get("metadata", meta)
    assert meta["model_fingerprint"]["dtype"] == dtype
