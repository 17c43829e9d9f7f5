"""The default NER model: a reduced build on the real data (VADER sentences,
spaCy silver labels, MiniLM encoder, a few CRF training steps)."""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import json

import pytest

from bias_suite.exceptions import ModelError
from bias_suite.models import default as dm
from bias_suite.models.crf import TransformerCrfTagger
from bias_suite.suites.bilou import allowed_transition


@pytest.fixture(scope="module")
def vader_sdist_path():
    try:
        return dm.vader_sdist()
    except ModelError as e:  # offline without a cached copy
        if "could not download" in str(e):
            pytest.skip(f"vaderSentiment sdist not cached and not downloadable: {e}")
        raise


def test_silver_labels_and_mapping():
    pytest.importorskip("spacy")
    from bias_suite.models.default_ner import SPACY_TO_CONLL, silver_label

    rows = silver_label(["Emma Watson visited Paris with Google engineers in 2019.", "Nothing  here ."])
    r = rows[0]
    assert r["tokens"][:2] == ["Emma", "Watson"] and r["tags"][:2] == ["B-PER", "L-PER"]
    assert r["tags"][r["tokens"].index("2019")] == "O"          # DATE -> O
    assert " " not in rows[1]["tokens"]                         # whitespace tokens dropped
    assert set(SPACY_TO_CONLL.values()) == {"PER", "LOC", "ORG", "MISC"}


# ------------------------------------------------------------------ default model (reduced build)
def test_default_ner_reduced_build(tmp_path, vader_sdist_path, monkeypatch):
    pytest.importorskip("spacy")
    from bias_suite.models import DEFAULT_MODELS, build_model, list_models

    monkeypatch.setenv("BIAS_SUITE_CACHE", str(tmp_path / "cache"))  # no cached silver labels: label a small pool
    assert "default-ner" in DEFAULT_MODELS
    p = build_model("default-ner", max_train=16, max_eval=8, epochs=1.0, batch_size=8, threads=1,
                    progress=False, download_dir=vader_sdist_path.parent)
    assert p == tmp_path / "cache" / "models" / "default-ner" and dm.is_built(p)
    assert [m for m in list_models() if m["name"] == "default-ner"][0]["built"]
    m = json.loads((p / "metrics.json").read_text())
    assert m["training"]["steps"] == 2 and m["held_out"]["n"] == 8
    assert set(m["held_out"]["span_scores"]) == {"PER", "LOC", "ORG", "MISC", "micro"}
    card = (p / "README.md").read_text()
    assert "Held-out exact-span scores" in card
    micro = m["held_out"]["span_scores"]["micro"]
    f1 = "–" if micro["f1"] is None else f"{micro['f1']:.3f}"
    assert f"| micro | " in card and f" {f1} | {micro['support']} |" in card      # the held-out scores
    assert m["build_seconds"] > 0 and f"in {m['build_seconds']:.0f} s ({m['build_cpu_seconds']:.0f} CPU-seconds" in card
    assert m["recipe"] == dm.current_recipe("default-ner") and m["training"]["frozen_layers"] == 3
    tagger = TransformerCrfTagger.from_pretrained(p, device="cpu", progress=False)
    tags, probs = tagger.predict([["Emma", "lives", "in", "Bosnia", "and", "Herzegovina", "."]])
    assert all(allowed_transition(a, b) for a, b in zip([None] + tags[0], tags[0] + [None])) and probs[0].shape == (7, 17)
