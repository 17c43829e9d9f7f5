"""The default NER model: a reduced build on the real data (VADER sentences,
spaCy silver labels, MiniLM encoder, a few CRF training steps)."""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import json

import pytest

from bias_suite.models import default as dm
from bias_suite.models.crf import TransformerCrfTagger
from bias_suite.suites.bilou import allowed_transition


# Builds the default NER model: left out of make test-fast (pytest -m 'not slow')
pytestmark = pytest.mark.slow


def test_silver_labels_and_mapping():
    pytest.importorskip("spacy")
    from bias_suite.models.default_ner import SPACY_TO_CONLL, silver_label

    rows = silver_label(["Emma Watson visited Paris with Google engineers in 2019.", "Nothing  here ."])
    r = rows[0]
    assert r["tokens"][:2] == ["Emma", "Watson"] and r["tags"][:2] == ["B-PER", "L-PER"]
    assert r["tags"][r["tokens"].index("2019")] == "O"          # DATE -> O
    assert " " not in rows[1]["tokens"]                         # whitespace tokens dropped
    assert set(SPACY_TO_CONLL.values()) == {"PER", "LOC", "ORG", "MISC"}


def test_silver_pipeline_runs_only_ner_and_labels_as_the_fuller_one():
    spacy = pytest.importorskip("spacy")
    from bias_suite.models.default_ner import SPACY_MODEL, load_spacy, silver_label

    nlp = load_spacy()
    assert nlp.pipe_names == ["ner"]                   # the unused shared tok2vec is gone
    fuller = spacy.load(SPACY_MODEL, exclude=["tagger", "parser", "attribute_ruler", "lemmatizer"])
    assert "tok2vec" in fuller.pipe_names
    texts = ["Emma Watson visited Paris with Google engineers in 2019.", "The nurse from Ohio met Mr. Obama.",
             "I love New York and the Yankees!", "no entities at all here"]
    assert silver_label(texts, nlp, n_process=1) == silver_label(texts, fuller, n_process=1)


# ------------------------------------------------------------------ shipped silver labels
def test_shipped_silver_labels_are_spacys(vader_sdist_path):
    """The labels shipped with the project apply to the installed spaCy and
    equal its labels on a seeded sample of the corpus."""
    pytest.importorskip("spacy")
    import numpy as np

    from bias_suite.models.silver import shipped_labels, silver_label
    from bias_suite.models.vader import load_vader_sentences, merge_duplicates

    rows, _ = merge_duplicates(load_vader_sentences(vader_sdist_path))
    texts = [r.text for r in rows]
    shipped = shipped_labels(texts)
    assert shipped is not None and len(shipped) == len(texts) == 23_555
    idx = np.random.default_rng(7).choice(len(texts), size=400, replace=False)
    sample = [shipped[i] for i in idx]
    assert sum(t != "O" for r in sample for t in r["tags"]) > 100          # the sample holds entities
    assert silver_label([texts[i] for i in idx], n_process=1) == sample


def test_shipped_labels_apply_only_where_they_match(tmp_path, monkeypatch):
    pytest.importorskip("spacy")
    from bias_suite.models import silver

    texts = ["Emma Watson visited Paris with Google engineers in 2019.", "The nurse from Ohio met Mr. Obama.",
             "Nothing  here .", "I love New York and the Yankees!"]
    rows = silver.silver_label(texts, n_process=1)
    p = silver.write_shipped(texts, rows, tmp_path / "labels.json.gz")
    assert silver.shipped_labels(texts, p) == rows
    assert silver.write_shipped(texts, rows, tmp_path / "again.json.gz").read_bytes() == p.read_bytes()
    assert silver.shipped_labels(texts[:-1], p) is None                        # another corpus
    assert silver.shipped_labels([t.lower() for t in texts], p) is None
    other = [dict(r, tokens=[*r["tokens"][:-1], r["tokens"][-1] + "s"]) for r in rows]
    assert silver.shipped_labels(texts, silver.write_shipped(texts, other, tmp_path / "o.json.gz")) is None
    (tmp_path / "broken.json.gz").write_bytes(b"not gzip")
    assert silver.shipped_labels(texts, tmp_path / "broken.json.gz") is None
    import gzip
    with gzip.open(tmp_path / "list.json.gz", "wb") as fh:
        fh.write(b"[1, 2]")
    assert silver.shipped_labels(texts, tmp_path / "list.json.gz") is None
    labeller = silver._labeller()
    monkeypatch.setattr(silver, "_labeller", lambda: {**labeller, "spacy": "0.0"})
    assert silver.shipped_labels(texts, p) is None                             # another spaCy
    monkeypatch.undo()

    # silver_corpus: no cache here, so the shipped labels, without labelling; else None unless it may label
    monkeypatch.setenv("BIAS_SUITE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(silver, "SHIPPED", p)
    monkeypatch.setattr(silver, "silver_label", lambda *a, **k: pytest.fail("labelled again"))
    assert silver.silver_corpus(texts) == (rows, "shipped")
    assert silver.silver_corpus(texts[:2], label=False) == (None, None)
    assert silver.silver_corpus(texts, shipped=False, label=False) == (None, None)


# ------------------------------------------------------------------ default model (reduced build)
@pytest.mark.parametrize("shipped", [True, False], ids=["shipped-labels", "labelled-pool"])
def test_default_ner_reduced_build(tmp_path, vader_sdist_path, monkeypatch, shipped):
    pytest.importorskip("spacy")
    from bias_suite.models import DEFAULT_MODELS, build_model, list_models
    from bias_suite.models import silver

    monkeypatch.setenv("BIAS_SUITE_CACHE", str(tmp_path / "cache"))  # no cached silver labels
    if not shipped:  # nor shipped ones: label a small pool
        monkeypatch.setattr(silver, "SHIPPED", tmp_path / "absent.json.gz")
    labelled = []
    real = silver.silver_label
    monkeypatch.setattr("bias_suite.models.default_ner.silver_label", lambda t, **k: labelled.append(len(t)) or real(t, **k))
    assert "default-ner" in DEFAULT_MODELS
    p = build_model("default-ner", max_train=16, max_eval=8, epochs=1.0, batch_size=8, threads=1,
                    progress=False, download_dir=vader_sdist_path.parent)
    assert p == tmp_path / "cache" / "models" / "default-ner" and dm.is_built(p)
    assert [m for m in list_models() if m["name"] == "default-ner"][0]["built"]
    m = json.loads((p / "metrics.json").read_text())
    assert m["training"]["steps"] == 2 and m["held_out"]["n"] == 8
    assert labelled == ([] if shipped else [72])          # the pool: 4 x 16 train sentences + 8 held out
    assert m["data"]["sentences_with_entities"] > (5000 if shipped else 0)
    assert m["data"]["label_source"] == ("shipped" if shipped else "spaCy (a seeded pool)")
    assert set(m["held_out"]["span_scores"]) == {"PER", "LOC", "ORG", "MISC", "micro"}
    card = (p / "README.md").read_text()
    assert ("labels shipped with the project" in card) == shipped
    assert "Held-out exact-span scores" in card
    micro = m["held_out"]["span_scores"]["micro"]
    f1 = "–" if micro["f1"] is None else f"{micro['f1']:.3f}"
    assert f"| micro | " in card and f" {f1} | {micro['support']} |" in card      # the held-out scores
    assert m["build_seconds"] > 0 and f"in {m['build_seconds']:.0f} s ({m['build_cpu_seconds']:.0f} CPU-seconds" in card
    assert m["recipe"] == dm.current_recipe("default-ner") and m["training"]["frozen_layers"] == 3
    tagger = TransformerCrfTagger.from_pretrained(p, device="cpu", progress=False)
    tags, probs = tagger.predict([["Emma", "lives", "in", "Bosnia", "and", "Herzegovina", "."]])
    assert all(allowed_transition(a, b) for a, b in zip([None] + tags[0], tags[0] + [None])) and probs[0].shape == (7, 17)


def test_frozen_front_reuse_matches_the_whole_encoder():
    """Training on kept frozen-layer states computes what the whole encoder
    computes (to float rounding), with other padding, and leaves the frozen
    layers without gradients and in place afterwards."""
    import torch
    from transformers import BertConfig, BertModel

    from bias_suite.models.building import FrozenFront

    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=3, num_attention_heads=2, intermediate_size=32,
                     max_position_embeddings=32, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    enc = BertModel(cfg, add_pooling_layer=False).eval()
    for m in (enc.embeddings, enc.encoder.layer[0]):
        m.requires_grad_(False)
    seqs = {"a": [2, 5, 7, 9, 3], "b": [2, 8, 3], "c": [2, 11, 12, 13, 14, 15, 3]}

    def padded(keys):
        width = max(len(seqs[k]) for k in keys)
        ids = torch.zeros((len(keys), width), dtype=torch.long)
        att = torch.zeros_like(ids)
        for i, k in enumerate(keys):
            ids[i, :len(seqs[k])] = torch.tensor(seqs[k])
            att[i, :len(seqs[k])] = 1
        return ids, att

    front = FrozenFront(enc, 1)
    stack, embeddings = enc.encoder.layer, enc.embeddings
    for keys in (["a", "b"], ["c"]):                       # first visits: whole encoder, states kept
        ids, att = padded(keys)
        with front.batch(keys, att):
            enc(input_ids=ids, attention_mask=att)
    assert sorted(front.states) == ["a", "b", "c"] and front.reused == 0
    assert [len(front.states[k]) for k in "abc"] == [5, 3, 7]

    keys = ["c", "b", "a"]                                 # another batch, another padding
    ids, att = padded(keys)
    whole = enc(input_ids=ids, attention_mask=att).last_hidden_state
    with front.batch(keys, att):
        kept = enc(input_ids=ids, attention_mask=att).last_hidden_state
    assert front.reused == 1
    assert enc.encoder.layer is stack and enc.embeddings is embeddings and len(stack) == 3
    for i, k in enumerate(keys):
        n = len(seqs[k])
        assert torch.allclose(kept[i, :n], whole[i, :n], atol=1e-5)
    kept[att.bool()].sum().backward()
    assert all(p.grad is None for p in enc.encoder.layer[0].parameters())
    assert all(p.grad is not None for p in enc.encoder.layer[2].parameters())
