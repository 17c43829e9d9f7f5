"""NER models and the end-to-end path: the CRF (against brute force and
pytorch-crf), constrained Viterbi, a tiny transformer+CRF tagger saved and
reloaded, a tiny HF token classifier and the CLI on a tiny suite (the
reduced build of the default NER model is in test_ner_build.py)."""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import itertools
import json
import sys

import numpy as np
import pandas as pd
import pytest
import torch

from _tiny_models import FLOAT32_ATOL
from _tiny_ner import make_tiny_crf_model, make_tiny_crf_tagger, make_tiny_token_classifier
from bias_suite.exceptions import BiasSuiteError, ModelError
from bias_suite.models.crf import CRF, TransformerCrfTagger, bilou_constraints, is_crf_folder
from bias_suite.models.token import HFTokenClassifier, normalise_tag_names
from bias_suite.suites.bilou import allowed_transition, bilou_tag_set

@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Tiny models run on one thread: on a busy 2-core machine two torch
    threads spin against each other (a 60-step toy training went 1 s -> 27 s)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


SENTS = [["Emma", "lives", "in", "New", "Zealand", "."], ["zebra"], ["I", "liked", "that", "writer", "!"],
         ["Emma", "lives", "in", "New", "Zealand", "."], ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"]]


def _valid(seq):
    return (allowed_transition(None, seq[0]) and allowed_transition(seq[-1], None)
            and all(allowed_transition(a, b) for a, b in zip(seq, seq[1:])))


# ------------------------------------------------------------------ CRF
def test_crf_matches_brute_force_and_pytorch_crf():
    torch.manual_seed(0)
    T, B, L = 4, 3, 4
    crf = CRF(T)
    em = torch.randn(B, L, T)
    tags = torch.randint(0, T, (B, L))
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0], [1, 0, 0, 0]], dtype=torch.bool)
    with torch.no_grad():
        s, tr, e = crf.transition_scores()
        nll = crf(em, tags, mask, reduction="none")
        M = crf.marginals(em, mask)
        paths = crf.decode(em, mask)
    for b in range(B):
        n = int(mask[b].sum())
        scores = {}
        for seq in itertools.product(range(T), repeat=n):
            scores[seq] = float(s[seq[0]] + em[b, 0, seq[0]] + sum(tr[seq[i - 1], seq[i]] + em[b, i, seq[i]] for i in range(1, n)) + e[seq[-1]])
        logz = np.log(np.sum(np.exp(list(scores.values()))))
        gold = tuple(tags[b, :n].tolist())
        assert float(nll[b]) == pytest.approx(logz - scores[gold], abs=1e-4)
        assert tuple(paths[b]) == max(scores, key=scores.get)
        P = np.zeros((n, T))
        for seq, sc in scores.items():
            for i, x in enumerate(seq):
                P[i, x] += np.exp(sc - logz)
        np.testing.assert_allclose(M[b, :n].detach().numpy(), P, atol=1e-5)
        assert float(M[b, n:].abs().sum()) == 0.0
    torchcrf = pytest.importorskip("torchcrf")
    ref = torchcrf.CRF(T, batch_first=True)
    with torch.no_grad():
        ref.transitions.copy_(crf.transitions)
        ref.start_transitions.copy_(crf.start_transitions)
        ref.end_transitions.copy_(crf.end_transitions)
    with torch.no_grad():
        torch.testing.assert_close(nll, -ref(em, tags, mask, reduction="none"))
    assert paths == ref.decode(em, mask)


def test_constrained_viterbi_never_emits_invalid_bilou():
    torch.manual_seed(1)
    names = bilou_tag_set(["PER", "LOC", "ORG"])
    crf = CRF(len(names), bilou_constraints(names))
    with torch.no_grad():
        crf.transitions.normal_(0, 5)
    free = CRF(len(names))
    with torch.no_grad():
        free.transitions.copy_(crf.transitions)
    em = torch.randn(200, 9, len(names)) * 6
    lengths = torch.randint(1, 10, (200,))
    mask = torch.arange(9)[None, :] < lengths[:, None]
    invalid_free = 0
    for p, q in zip(crf.decode(em, mask), free.decode(em, mask)):
        seq = [names[i] for i in p]
        assert _valid(seq), seq
        invalid_free += not _valid([names[i] for i in q])
    assert invalid_free > 0  # the constraint is what makes them valid
    with torch.no_grad():
        M = crf.marginals(em.double(), mask)
    np.testing.assert_allclose(M.sum(-1).numpy(), mask.double().numpy(), atol=1e-9)


# ------------------------------------------------------------------ CRF tagger
@pytest.fixture(scope="module")
def crf_dir(tmp_path_factory):
    return make_tiny_crf_tagger(tmp_path_factory.mktemp("crf") / "tagger")


def test_crf_tagger_saved_and_reloaded(tmp_path, crf_dir):
    assert is_crf_folder(crf_dir)
    assert {"config.json", "model.safetensors"} <= {p.name for p in crf_dir.iterdir()}
    cfg = json.loads((crf_dir / "config.json").read_text())
    assert cfg["bias_suite_model"] == "transformer_crf" and cfg["constrained"] is True
    model, tok = make_tiny_crf_model(tmp_path / "again")
    live = TransformerCrfTagger(model, tokenizer=tok, device="cpu", progress=False)
    loaded = TransformerCrfTagger.from_pretrained(crf_dir, device="cpu", progress=False, batch_size=2)
    assert loaded.tag_names == bilou_tag_set(["PER", "LOC"]) == live.tag_names
    t1, p1 = live.predict(SENTS)
    t2, p2 = loaded.predict(SENTS)
    assert t1 == t2
    for a, b in zip(p1, p2):
        np.testing.assert_allclose(a, b, atol=FLOAT32_ATOL, rtol=0)
    for toks, tags, P in zip(SENTS, t2, p2):
        assert len(tags) == len(toks) and P.shape == (len(toks), len(loaded.tag_names))
        assert _valid(tags)
        np.testing.assert_allclose(P.sum(1), 1.0, atol=1e-9)
    assert t2[0] == t2[3]  # duplicates tagged once, same output
    # marginals option
    marg = TransformerCrfTagger(crf_dir, device="cpu", progress=False, probabilities="marginals")
    _, pm = marg.predict(SENTS[:2])
    np.testing.assert_allclose(pm[0].sum(1), 1.0, atol=FLOAT32_ATOL, rtol=0)
    assert not np.allclose(pm[0], p2[0])
    with pytest.raises(ModelError):
        TransformerCrfTagger(crf_dir, probabilities="bogus")
    with pytest.raises(ModelError, match="not a transformer"):
        TransformerCrfTagger(tmp_path)


def test_crf_tagger_learns_a_toy_task(tmp_path):
    from bias_suite.models.crf import encode_words, pad_batch

    model, tok = make_tiny_crf_model(tmp_path / "learn", seed=3)
    names = model.tag_names
    data = [(["emma", "went", "to", "new", "york"], ["U-PER", "O", "O", "B-LOC", "L-LOC"]),
            (["we", "met", "liam"], ["O", "O", "U-PER"])]
    ids, widx = encode_words(tok, [d[0] for d in data], 64)
    batch = pad_batch(ids, widx, tok.pad_token_id, tags=[[names.index(t) for t in d[1]] for d in data])
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    model.train()
    torch.manual_seed(0)
    for _ in range(60):
        loss = model(batch["input_ids"], batch["attention_mask"], batch["word_index"], batch["word_mask"], tags=batch["tags"])
        opt.zero_grad()
        loss.backward()
        opt.step()
    tagger = TransformerCrfTagger(model, tokenizer=tok, device="cpu", progress=False)
    pred, _ = tagger.predict([d[0] for d in data])
    assert pred == [d[1] for d in data]


# ------------------------------------------------------------------ HF token classifier
def test_hf_token_classifier_first_subtoken_alignment(tmp_path):
    d = make_tiny_token_classifier(tmp_path / "tok")
    clf = HFTokenClassifier(d, device="cpu", progress=False, batch_size=2)
    assert clf.tag_names == ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    tags, probs = clf.predict(SENTS)
    # reference: run the model on each sentence alone, take each word's first sub-token
    enc = clf.tokenizer(SENTS[0], is_split_into_words=True, return_tensors="pt")
    with torch.no_grad():
        logits = clf.model(**enc).logits[0].double()
    first = [enc.word_ids().index(w) for w in range(len(SENTS[0]))]
    ref = torch.softmax(logits[first], -1).numpy()
    np.testing.assert_allclose(probs[0], ref, atol=FLOAT32_ATOL, rtol=0)
    assert "zebra" not in clf.tokenizer.get_vocab() and len(clf.tokenizer.tokenize("zebra")) > 1
    for toks, t, P in zip(SENTS, tags, probs):
        assert len(t) == len(toks) and P.shape == (len(toks), 5)
        np.testing.assert_allclose(P.sum(1), 1.0, atol=1e-9)
        assert t == [clf.tag_names[i] for i in P.argmax(1)]
    with pytest.raises(ModelError):
        clf.predict("not a list of lists")


def test_tag_name_normalisation():
    assert normalise_tag_names(["O", "B-PER", "E-PER", "S-LOC", "LOC", "I_ORG"]) == ["O", "B-PER", "L-PER", "U-LOC", "I-LOC", "I-ORG"]
    with pytest.raises(ModelError):
        normalise_tag_names(["O", "PER", "I-PER"])


# ------------------------------------------------------------------ CLI end to end
IDENT = """attribute: place
sources: ["test"]
groups:
  short:
    country: [Japan, Peru]
  long:
    country: [New Zealand, Sierra Leone]
"""
SUITE = """suite: ner_tiny
task: sequence_labelling
identity_terms: [place.yaml]
slot_tags: {country: U-LOC}
templates:
  - id: t1
    text: "Emma flew to {country} in May."
    tags: {Emma: PER}
  - id: t2
    text: "{Country} is large."
  - id: t3
    text: "The bank opened an office in {country}."
"""


@pytest.mark.slow
def test_cli_end_to_end_with_tiny_tagger(tmp_path, crf_dir):
    from typer.testing import CliRunner

    from bias_suite.cli import app

    (tmp_path / "place.yaml").write_text(IDENT)
    (tmp_path / "ner_tiny.yaml").write_text(SUITE)
    runner = CliRunner()
    r = runner.invoke(app, ["expand", str(tmp_path / "ner_tiny.yaml"), "--out", str(tmp_path / "ex.jsonl")])
    assert r.exit_code == 0, r.output
    ex = pd.read_json(tmp_path / "ex.jsonl", lines=True)
    assert len(ex) == 12 and {"tokens", "tags", "term_span"} <= set(ex.columns)
    out = tmp_path / "run"
    r = runner.invoke(app, ["run", str(tmp_path / "ner_tiny.yaml"), "--model", str(crf_dir), "--out", str(out), "--detail"],
                      env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "LOC recall/F1" in r.output and "NER, group view" in r.output and "short" in r.output
    assert "one line per class: PER, LOC, O" in r.output and "FNED" in r.output
    res = pd.read_json(out / "results.jsonl", lines=True)
    assert {"FNED", "CFGap", "TPR-Gap", "AvgIF", "PertSS", "Wilcoxon-p-holm"} <= set(res["metric"])
    assert set(res.loc[res["metric"] == "CFGap", "class"]) == {"PER", "LOC", "O"}
    assert (res.loc[res["metric"] == "FPED", "note"] == "not applicable to sequence labelling").all()
    scored = pd.read_json(out / "scored.jsonl", lines=True)
    assert {"tokens", "tags", "pred_tags", "tag_probs", "term_span"} <= set(scored.columns)
    # evaluate the written scored file again: same metric values
    r = runner.invoke(app, ["evaluate", str(out / "scored.jsonl"), "--out", str(tmp_path / "ev"), "--detail"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "LOC recall/F1" in r.output and "FNED" in r.output
    again = pd.read_json(tmp_path / "ev" / "results.jsonl", lines=True)
    key = ["metric", "class", "group"]
    assert (res["metric"] == "INV-FailRate").any()  # run adds CheckList INV rows; evaluate does not
    res = res[res["family"] != "invariance"]
    m = res.merge(again, on=key + ["attribute"], suffixes=("", "_2"))
    assert len(m) == len(res)
    np.testing.assert_allclose(m["value"].astype(float), m["value_2"].astype(float), atol=1e-9)


def test_run_dispatch_and_mixed_task_errors(tmp_path, crf_dir):
    from bias_suite.pipeline import run
    from bias_suite.families.sequence.model import load_model as load_tagger

    tok_dir = make_tiny_token_classifier(tmp_path / "tokclf")
    assert isinstance(load_tagger(str(tok_dir), progress=False)[0], HFTokenClassifier)
    assert isinstance(load_tagger(str(crf_dir), progress=False)[0], TransformerCrfTagger)
    (tmp_path / "place.yaml").write_text(IDENT)
    (tmp_path / "ner_tiny.yaml").write_text(SUITE)
    res = run([tmp_path / "ner_tiny.yaml"], str(tok_dir), None, progress=False, significance=False, metrics=["FNED", "CFGap"])
    assert res.scored.task == "sequence_labelling" and set(res.results["metric"]) == {"FNED", "CFGap", "INV-FailRate"}
    with pytest.raises(BiasSuiteError, match="run them separately"):
        run([tmp_path / "ner_tiny.yaml", "templates/sentiment_gender.yaml"], str(tok_dir), None, progress=False)


def test_mixed_classification_and_ner_run(tmp_path, crf_dir, monkeypatch):
    """One run over a classification suite and an NER suite with the default
    model name: NER files go to OUT/ner (default models replaced by tiny ones)."""
    from typer.testing import CliRunner

    import dataclasses

    from _tiny_models import make_tiny_classifier
    from bias_suite.families import FAMILIES
    from bias_suite.cli import app
    from bias_suite.models import HFClassifier

    clf = HFClassifier(make_tiny_classifier(tmp_path / "clf"), device="cpu", progress=False)
    tagger = TransformerCrfTagger(crf_dir, device="cpu", progress=False)
    seen = {}

    def fake_predictor(model, **kw):
        seen["classification"] = model
        return clf, "tiny-sentiment"

    def fake_tagger(model, **kw):
        seen["ner"] = model
        return tagger, "tiny-ner"

    for name, fake in (("classification", fake_predictor), ("sequence_labelling", fake_tagger)):
        monkeypatch.setitem(FAMILIES, name, dataclasses.replace(FAMILIES[name], load_model=fake))
    (tmp_path / "place.yaml").write_text(IDENT)
    (tmp_path / "ner_tiny.yaml").write_text(SUITE)
    out = tmp_path / "mixed"
    r = CliRunner().invoke(app, ["run", "templates/sentiment_gender.yaml", str(tmp_path / "ner_tiny.yaml"),
                                 "--out", str(out), "--metrics", "FNED,CFGap", "--detail"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert seen == {"classification": "default-sentiment", "ner": "default-ner"}
    cls_res = pd.read_json(out / "results.jsonl", lines=True)
    ner_res = pd.read_json(out / "ner" / "results.jsonl", lines=True)
    assert set(cls_res["class"]) <= {"negative", "neutral", "positive", "all"}
    assert set(ner_res["class"]) <= {"PER", "LOC", "ORG", "MISC", "O", "all"} and "LOC" in set(ner_res["class"])
    assert "LOC recall/F1" in r.output and "NER, group view" in r.output and "NER examples" in r.output


def test_byte_level_bpe_tokenizer_gets_prefix_space(tmp_path):
    """RoBERTa-style tokenizers encode pre-split words with a leading space,
    as the words appear inside a sentence."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaForTokenClassification, RobertaTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(["Emma lives in New Zealand .", "I liked that writer !"] * 5, vocab_size=300,
                            min_frequency=1, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    tok = RobertaTokenizerFast(tokenizer_object=bpe._tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                               unk_token="<unk>", mask_token="<mask>")
    cfg = RobertaConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=130, pad_token_id=tok.pad_token_id,
                        num_labels=3, id2label={0: "O", 1: "B-PER", 2: "I-PER"}, label2id={"O": 0, "B-PER": 1, "I-PER": 2})
    RobertaForTokenClassification(cfg).save_pretrained(tmp_path / "m")
    tok.save_pretrained(tmp_path / "m")
    clf = HFTokenClassifier(tmp_path / "m", device="cpu", progress=False)
    assert clf.tokenizer.add_prefix_space
    enc = clf.tokenizer([["Emma", "lives"]], is_split_into_words=True)
    toks = clf.tokenizer.convert_ids_to_tokens(enc["input_ids"][0])
    assert toks[enc.word_ids().index(1)] == "Ġlives"
    tags, probs = clf.predict([["Emma", "lives", "in", "New", "Zealand", "."]])
    assert len(tags[0]) == 6 and probs[0].shape == (6, 3)


def test_ner_cluster_bootstrap(tmp_path, crf_dir, monkeypatch):
    """Intervals for NER metrics: a replicate that draws every template once
    reproduces the observed values (the resampling machinery is exact), runs
    are seeded, and run() writes intervals and verdicts for NER rows."""
    from bias_suite.metrics.engine import evaluate
    from bias_suite.pipeline import run
    from bias_suite.stats import bootstrap as bmod

    (tmp_path / "place.yaml").write_text(IDENT)
    (tmp_path / "ner_tiny.yaml").write_text(SUITE)
    res = run([tmp_path / "ner_tiny.yaml"], str(crf_dir), tmp_path / "out", progress=False, bootstrap=40, seed=3)
    r = res.results
    acc = r[(r["metric"] == "FNED") & r["group"].isna() & r["value"].notna()]
    assert len(acc) and acc["ci_low"].notna().all() and (acc["ci_low"] <= acc["ci_high"]).all()
    assert acc["verdict"].notna().all()
    again = run([tmp_path / "ner_tiny.yaml"], str(crf_dir), None, progress=False, bootstrap=40, seed=3).results
    np.testing.assert_array_equal(r["ci_low"].to_numpy(float), again["ci_low"].to_numpy(float))
    assert json.loads((tmp_path / "out" / "run.json").read_text())  # written

    # all-ones weights: the replicate is the data itself, relabelled
    monkeypatch.setattr(bmod, "template_weights", lambda J, B, rng: np.ones((B, J), dtype=np.int64))
    from bias_suite.stats.bootstrap import terms as tmod

    monkeypatch.setattr(tmod, "term_weights", lambda blocks, B, rng: np.ones((B, len(blocks)), dtype=np.int64))
    data = res.scored
    obs = evaluate(data, metrics=["FNED", "TPR-Gap", "AvgGF", "CFGap"], max_tuples=None)
    bs = bmod.resampling_bootstrap(data, obs, metrics=["FNED", "TPR-Gap", "AvgGF", "CFGap"], B=2, max_tuples=None,
                                 keep_replicates=True)
    keys, reps = bs.keys, bs.replicates
    merged = keys.assign(rep=reps[:, 0]).merge(obs, on=["attribute", "metric", "class", "group"])
    ok = merged["value"].notna()
    assert ok.sum() > 5
    np.testing.assert_allclose(merged.loc[ok, "rep"], merged.loc[ok, "value"].astype(float), atol=1e-12)
    # the signed basis beneath |x| (FNED per group, TPR-Gap and CFGap per pair) from signed twins: on the
    # all-ones replicate its interval is the point itself, and its absolute value is the row's value
    basis = bs.basis[bs.basis["basis_value"].notna()].merge(obs, on=["attribute", "metric", "class", "group"])
    assert {"FNED", "TPR-Gap", "CFGap"} <= set(basis["metric"])
    grp = basis["view"] == "group"   # |phi(a) - phi(b)| is the group value; a mean of |d| is at least |mean d|
    np.testing.assert_allclose(basis.loc[grp, "basis_value"].abs(), basis.loc[grp, "value"].astype(float), atol=1e-12)
    assert (basis.loc[~grp, "basis_value"].abs() <= basis.loc[~grp, "value"].astype(float) + 1e-12).all()
    assert (~grp).any()
    # (a rate whose sides differ in few templates gets at least the exact paired bound: docs/statistics.md)
    notes = bs.results[["attribute", "metric", "class", "group", "note"]].rename(columns={"note": "bootstrap_note"})
    basis = basis.merge(notes, on=["attribute", "metric", "class", "group"], how="left")
    widened = basis["bootstrap_note"].fillna("").str.contains("exact paired bound")
    assert (basis["basis_low"] <= basis["basis_value"] + 1e-12).all() and (basis["basis_value"] <= basis["basis_high"] + 1e-12).all()
    np.testing.assert_allclose(basis.loc[~widened, "basis_low"], basis.loc[~widened, "basis_value"], atol=1e-12)
    assert (~widened).any() and set(basis.loc[widened, "metric"]) <= {"FNED", "TPR-Gap"}  # rates only
    fned = basis[basis["metric"] == "FNED"]
    assert fned["basis"].str.contains("group").all()


def _forkable_tiny_ner(tmp_path, crf_dir):
    """The tiny NER suite's scored data and metric values; skips where the
    bootstrap does not fork workers."""
    import multiprocessing as mp

    from bias_suite.metrics.engine import evaluate
    from bias_suite.pipeline import run

    if not sys.platform.startswith("linux") or "fork" not in mp.get_all_start_methods():
        pytest.skip("workers are forked on Linux only")
    (tmp_path / "place.yaml").write_text(IDENT)
    (tmp_path / "ner_tiny.yaml").write_text(SUITE)
    data = run([tmp_path / "ner_tiny.yaml"], str(crf_dir), None, progress=False, bootstrap=0).scored
    return data, evaluate(data, max_tuples=None)


def test_ner_bootstrap_in_two_processes_equals_one(tmp_path, crf_dir):
    """The resampling bootstrap (``tuples="redraw"``) spread over forked workers gives the values,
    the key order and the intervals of the loop in one process."""
    from bias_suite.stats import bootstrap as bmod

    data, obs = _forkable_tiny_ner(tmp_path, crf_dir)
    one, two = (bmod.bootstrap(data, obs, B=9, max_tuples=None, seed=4, keep_replicates=True, n_jobs=n,
                               tuples="redraw") for n in (1, 2))
    assert one.replicates.shape[1] == 9 and len(one.keys) > 10
    assert one.keys.equals(two.keys)
    np.testing.assert_array_equal(one.replicates, two.replicates)
    pd.testing.assert_frame_equal(one.results, two.results)
    pd.testing.assert_frame_equal(one.basis, two.basis)
    assert np.isfinite(one.replicates).any() and one.results["ci_low"].notna().any()


def test_ner_bootstrap_survives_a_killed_worker(tmp_path, crf_dir, monkeypatch, caplog):
    """A worker killed by a signal (e.g. the out-of-memory killer) does not
    leave the loop waiting: the resamples are evaluated in this process,
    with the values of the one-process loop."""
    import logging
    import signal

    from bias_suite.stats.bootstrap import resamples as rs
    from bias_suite.stats import bootstrap as bmod

    data, obs = _forkable_tiny_ner(tmp_path, crf_dir)
    one = bmod.bootstrap(data, obs, B=6, max_tuples=None, seed=2, keep_replicates=True, n_jobs=1, tuples="redraw")
    parent, real = os.getpid(), rs._Task.run

    def run_or_die(self, i, start, stop, **kw):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(self, i, start, stop, **kw)

    monkeypatch.setattr(rs._Task, "run", run_or_die)
    with caplog.at_level(logging.WARNING, logger="bias_suite.stats.bootstrap.resamples"):
        two = bmod.bootstrap(data, obs, B=6, max_tuples=None, seed=2, keep_replicates=True, n_jobs=2,
                             tuples="redraw")
    assert "worker process stopped" in caplog.text
    np.testing.assert_array_equal(one.replicates, two.replicates)
    pd.testing.assert_frame_equal(one.results, two.results)


def test_bootstrap_process_count(monkeypatch):
    from bias_suite.stats.bootstrap import resamples as rs

    monkeypatch.delenv("BIAS_SUITE_JOBS", raising=False)
    monkeypatch.setattr(rs, "can_fork", lambda: True)
    assert rs.resample_jobs(None, rs.MIN_PARALLEL_WORK - 1, 200) == 1          # small: one process
    monkeypatch.setattr(rs.os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert rs.resample_jobs(None, rs.MIN_PARALLEL_WORK, 200) == rs.MAX_AUTO_JOBS
    assert rs.resample_jobs(3, 10, 200) == 3 and rs.resample_jobs(8, 10, 2) == 2 and rs.resample_jobs(0, 10, 5) == 1
    monkeypatch.setenv("BIAS_SUITE_JOBS", "2")
    assert rs.resample_jobs(None, 10, 200) == 2 and rs.resample_jobs(1, 10 ** 9, 200) == 1
    monkeypatch.setenv("BIAS_SUITE_JOBS", "many")
    assert rs.resample_jobs(None, 10 ** 9, 200) == 1
    monkeypatch.setenv("BIAS_SUITE_JOBS", "2")
    monkeypatch.setattr(rs, "can_fork", lambda: False)
    assert rs.resample_jobs(None, 10 ** 9, 200) == 1


def test_no_fork_beside_a_connected_ray_driver(monkeypatch):
    import multiprocessing as mp
    import types

    from bias_suite.stats.bootstrap import resamples as rs

    if not sys.platform.startswith("linux") or "fork" not in mp.get_all_start_methods():
        pytest.skip("workers are forked on Linux only")
    monkeypatch.setitem(sys.modules, "ray", types.SimpleNamespace(is_initialized=lambda: False))
    assert rs.can_fork()
    monkeypatch.setitem(sys.modules, "ray", types.SimpleNamespace(is_initialized=lambda: True))
    assert not rs.can_fork()
    monkeypatch.setenv("BIAS_SUITE_JOBS", "2")
    assert rs.resample_jobs(None, 10 ** 6, 200) == 1
