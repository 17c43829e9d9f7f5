"""The Ray engine (bias_suite.predict.ray_engine) on one local Ray instance.

Every test shares one ``ray.init(num_cpus=2)`` (module fixture): starting Ray
takes seconds, and each Ray run starts its own actors (a few seconds more,
mostly importing torch and transformers in the worker processes).
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

# Starts Ray: left out of make test-fast (pytest -m 'not slow')
pytestmark = pytest.mark.slow


ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")
torch = pytest.importorskip("torch")

from _tiny_models import make_tiny_classifier  # noqa: E402
from _tiny_ner import make_tiny_crf_tagger  # noqa: E402

from bias_suite.exceptions import ModelError  # noqa: E402
from bias_suite.predict import predict  # noqa: E402
from bias_suite.predict.outputs import ClassifierTask  # noqa: E402
from bias_suite.predict.ray_engine import RayEngine  # noqa: E402

WORDS = ("i you he she they like love hate good great bad awful the movie film book food doctor nurse "
         "teacher very not really").split()


@pytest.fixture(scope="module")
def ray_local():
    # The predictors below are defined in this test module, which the workers
    # cannot import (tests/ is on the driver's sys.path only): send them by value.
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield ray
    ray.cloudpickle.unregister_pickle_by_value(sys.modules[__name__])
    if started:
        ray.shutdown()


@pytest.fixture
def one_thread():
    """Local runs with one torch thread, like the actors (num_cpus_per_worker=1):
    torch's CPU kernels split their sums by thread count, so 2 threads here
    against 1 in the actor differ by ~1e-9 (float32 model); equal counts give
    bit-identical numbers."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def _texts(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    texts = [" ".join(rng.choice(WORDS, int(rng.integers(1, 14)))) for _ in range(n)]
    return texts + texts[: n // 4]  # duplicates


def _sentences(n: int, seed: int = 1) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    sents = [[str(w) for w in rng.choice(WORDS, int(rng.integers(1, 10)))] for _ in range(n)]
    return sents + sents[: n // 4]


@pytest.fixture(scope="module")
def tiny_clf(tmp_path_factory):
    from bias_suite.models import HFClassifier

    path = make_tiny_classifier(tmp_path_factory.mktemp("ray") / "clf")
    return HFClassifier(path, device="cpu", batch_size=8, progress=False)


# ----------------------------------------------------------------- predictors
class ChunkRecorder:
    """Classifier whose probabilities encode the call: for input ``c<i>-<j>``
    (item j of chunk i) the first column is ``len(texts)/100 + j/1000``. It
    raises when one call mixes two chunks."""

    class_names = ["a", "b"]

    def predict_proba(self, texts):
        chunks = {t.split("-")[0] for t in texts}
        if len(chunks) != 1:
            raise AssertionError(f"one call got items of several chunks: {sorted(chunks)}")
        first = np.array([len(texts) / 100 + int(t.split("-")[1]) / 1000 for t in texts])
        return np.stack([first, 1 - first], axis=1)


class _SizeRecorder:
    """First column ``len(texts)/100 + position/10000``."""

    class_names = ["a", "b"]

    def predict_proba(self, texts):
        first = np.array([len(texts) / 100 + j / 10000 for j in range(len(texts))])
        return np.stack([first, 1 - first], axis=1)


class Exploding:
    """Classifier that fails on one input."""

    class_names = ["a", "b"]

    def predict_proba(self, texts):
        if "boom" in texts:
            raise ValueError("the predictor exploded on 'boom'")
        return np.full((len(texts), 2), 0.5)


class LengthModel:
    """A cached (it has a fingerprint) classifier; counts its calls."""

    class_names = ["short", "long"]
    calls = 0

    def fingerprint(self):
        return {"kind": "test-length-model", "version": 1}

    def predict_proba(self, texts):
        type(self).calls += 1
        p = np.array([min(len(t), 50) / 50 for t in texts])
        return np.stack([1 - p, p], axis=1)


# ---------------------------------------------------------------------- tests
def test_classifier_matches_local_bit_for_bit(ray_local, tiny_clf, one_thread):
    texts = _texts(96)
    ray_probs, rs = predict(tiny_clf, texts, cache=False, engine=RayEngine(num_workers=2), chunk_size=16)
    local_probs, ls = predict(tiny_clf, texts, cache=False, engine="local", chunk_size=16)
    assert rs.engine == "ray" and rs.computed == ls.computed == rs.distinct and rs.chunks == ls.chunks > 2
    assert ray_probs.shape == (len(texts), 3) and ray_probs.dtype == np.float64
    assert np.array_equal(ray_probs, local_probs)


def test_tagger_matches_local_bit_for_bit(ray_local, tmp_path_factory, one_thread):
    from bias_suite.models import TransformerCrfTagger

    crf = TransformerCrfTagger(make_tiny_crf_tagger(tmp_path_factory.mktemp("ray_ner") / "crf"), device="cpu",
                               batch_size=4, progress=False)
    sents = _sentences(40)
    (ray_tags, ray_p), rs = predict(crf, sents, cache=False, engine=RayEngine(num_workers=2), chunk_size=8)
    (loc_tags, loc_p), _ = predict(crf, sents, cache=False, engine="local", chunk_size=8)
    assert rs.chunks > 2
    assert ray_tags == loc_tags  # Viterbi paths
    assert [len(t) for t in ray_tags] == [len(s) for s in sents]
    assert len(ray_p) == len(loc_p) == len(sents)
    assert all(np.array_equal(a, b) for a, b in zip(ray_p, loc_p))


def test_each_actor_call_is_exactly_one_chunk(ray_local):
    sizes = [1, 5, 2, 9, 3, 7, 1, 4]
    work = [[f"c{i}-{j}" for j in range(n)] for i, n in enumerate(sizes)]
    task = ClassifierTask(ChunkRecorder())
    results = list(RayEngine(num_workers=2).run(task, work))
    assert all(pos is None for _, pos, _ in results)  # whole chunks
    got = {i: out for i, _, out in results}
    assert sorted(got) == list(range(len(sizes))) and len(results) == len(sizes)
    for i, n in enumerate(sizes):
        want = np.array([n / 100 + j / 1000 for j in range(n)])  # the same float ops: exact
        assert np.array_equal(got[i].values[:, 0], want), i


def test_worker_error_surfaces_with_its_message(ray_local):
    texts = [f"text {i}" for i in range(20)] + ["boom"]
    with pytest.raises(ModelError, match=r"ValueError: the predictor exploded on 'boom'") as info:
        predict(Exploding(), texts, cache=False, engine=RayEngine(num_workers=2), chunk_size=4)
    assert "Traceback" in info.value.worker_traceback
    assert ray.is_initialized()  # the engine did not start this instance: it leaves it running


def test_more_workers_than_the_cluster_holds_is_one_clear_error(ray_local):
    """--num-workers past what the cluster can hold would start only some
    actors and stall: it is refused before any actor starts, naming the room."""
    with pytest.raises(ModelError, match=r"num_workers=4: each worker needs 1 CPU\(s\) and the Ray cluster "
                                         r"has 2 CPU\(s\), room for 2 worker\(s\)"):
        predict(LengthModel(), _texts(40), cache=False, engine=RayEngine(num_workers=4), chunk_size=4)


def test_ray_run_fills_the_cache_for_local_runs(ray_local, tmp_path):
    texts = _texts(50, seed=3)
    LengthModel.calls = 0
    a, s1 = predict(LengthModel(), texts, cache=tmp_path, engine=RayEngine(num_workers=2), chunk_size=8)
    assert s1.cached == 0 and s1.computed == s1.distinct and s1.cache
    assert LengthModel.calls == 0  # it ran on the workers
    b, s2 = predict(LengthModel(), texts, cache=tmp_path, engine="local", chunk_size=8)
    assert s2.computed == 0 and s2.cached == s2.distinct and LengthModel.calls == 0
    assert np.array_equal(a, b)
    assert np.array_equal(a, LengthModel().predict_proba(texts))


def test_engine_leaves_a_running_instance_alone(ray_local):
    assert ray.is_initialized()
    eng = RayEngine()  # default pool: CPUs // 1 = 2, capped by the chunks
    work = [["a"], ["b", "c"], ["d"], ["e", "f", "g"]]
    gen = eng.run(ClassifierTask(_SizeRecorder()), work)
    index, positions, out = next(gen)
    assert positions is None and len(out) == len(work[index])
    gen.close()  # an early stop (the runner interrupted) stops the pipeline, not Ray
    assert ray.is_initialized()
    assert ray.cluster_resources().get("CPU") == 2
    assert ray.get(ray.put(7)) == 7


def test_options_are_checked():
    with pytest.raises(Exception, match="num_workers"):
        RayEngine(num_workers=0)
    with pytest.raises(Exception, match="num_cpus_per_worker"):
        RayEngine(num_cpus_per_worker=0)
    assert RayEngine().name == "ray"


def test_an_actor_that_fits_on_no_node_is_an_error_not_a_hang(ray_local):
    with pytest.raises(ModelError, match="largest node has 2 CPU"):
        list(RayEngine(num_cpus_per_worker=3).run(ClassifierTask(_SizeRecorder()), [["x"]]))
    with pytest.raises(ModelError, match="no GPUs"):
        list(RayEngine(num_gpus_per_worker=1).run(ClassifierTask(_SizeRecorder()), [["x"]]))
    assert ray.is_initialized()


def test_missing_ray_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.setitem(sys.modules, "ray.data", None)
    with pytest.raises(ModelError, match=r'pip install "ray\[data\]"'):
        list(RayEngine().run(ClassifierTask(_SizeRecorder()), [["x"]]))


def test_cli_run_with_ray_engine_equals_local(ray_local, one_thread, tmp_path):
    """`bias-suite run --engine ray` end to end: the same result files as the
    local engine (the CLI joins the running Ray instance instead of starting one)."""
    import json

    from _report_data import mini_names_suite
    from typer.testing import CliRunner

    from bias_suite.cli import app

    model = make_tiny_classifier(tmp_path / "clf")
    suite = mini_names_suite(tmp_path / "s")
    common = ["run", str(suite), "--model", str(model), "-q", "--bootstrap", "20", "--no-cache", "--batch-size", "4"]
    runner = CliRunner()
    r = runner.invoke(app, common + ["--out", str(tmp_path / "local")])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, common + ["--out", str(tmp_path / "ray"), "--engine", "ray", "--num-workers", "2"])
    assert r.exit_code == 0, r.output
    meta = json.loads((tmp_path / "ray" / "run.json").read_text())
    pred = meta.get("predictions") or meta["metadata"]["predictions"]
    assert pred["engine"] == "ray" and pred["computed"] == pred["distinct"] > 0 and "on ray" in r.output
    assert ray.is_initialized()  # the CLI left the running instance alone
    for name in ("results.csv", "scored.jsonl"):
        assert (tmp_path / "local" / name).read_text() == (tmp_path / "ray" / name).read_text(), name
    r = runner.invoke(app, common + ["--out", str(tmp_path / "x"), "--num-workers", "2"])
    assert r.exit_code == 2 and "need --engine ray" in r.output


def test_prompt_classifier_matches_local_bit_for_bit(ray_local, tmp_path_factory, one_thread):
    from _tiny_lms import make_tiny_bert_mlm

    from bias_suite.models import PromptClassifier

    path = make_tiny_bert_mlm(tmp_path_factory.mktemp("ray-lm") / "mlm")
    clf = PromptClassifier(path, "Review: {text} Sentiment: {mask}.", {"negative": "bad", "positive": ["good", "great"]},
                           device="cpu", batch_size=8, progress=False)
    texts = _texts(40)
    ray_probs, rs = predict(clf, texts, cache=False, engine=RayEngine(num_workers=1), chunk_size=16)
    local_probs, _ = predict(clf, texts, cache=False, engine="local", chunk_size=16)
    assert rs.engine == "ray" and rs.computed == rs.distinct and ray_probs.shape == (len(texts), 2)
    assert np.array_equal(ray_probs, local_probs)
