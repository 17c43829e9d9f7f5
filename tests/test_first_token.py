"""The last encoder layer computed for the first token only
(:mod:`bias_suite.models.first_token`): the same logits as the whole model up
to float rounding for the architectures it accepts, the whole graph for the
others, and the model left as it was."""
from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import pytest

from _tiny_models import make_tiny_classifier

# Builds and runs encoders: left out of make test-fast (pytest -m 'not slow')
pytestmark = pytest.mark.slow


torch = pytest.importorskip("torch")


def _batch(vocab_size, lengths, seed=0):
    """Random ids, right-padded to the longest of ``lengths`` (id 0 = pad)."""
    g = torch.Generator().manual_seed(seed)
    width = max(lengths)
    ids = torch.zeros((len(lengths), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for i, n in enumerate(lengths):
        ids[i, :n] = torch.randint(5, vocab_size, (n,), generator=g)
        mask[i, :n] = 1
    return {"input_ids": ids, "attention_mask": mask}


def _model(kind, layers=3, seed=0):
    from transformers import (BertConfig, BertForSequenceClassification, ElectraConfig,
                              ElectraForSequenceClassification, RobertaConfig, RobertaForSequenceClassification)

    common = dict(vocab_size=50, hidden_size=24, num_hidden_layers=layers, num_attention_heads=3,
                  intermediate_size=40, max_position_embeddings=64, num_labels=3, initializer_range=0.5,
                  hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    torch.manual_seed(seed)
    if kind == "bert":
        config = BertConfig(**common, architectures=["BertForSequenceClassification"])
        return BertForSequenceClassification(config).eval()
    if kind == "roberta":
        config = RobertaConfig(**common, pad_token_id=1, architectures=["RobertaForSequenceClassification"])
        return RobertaForSequenceClassification(config).eval()
    config = ElectraConfig(**common, embedding_size=16, architectures=["ElectraForSequenceClassification"])
    return ElectraForSequenceClassification(config).eval()


@pytest.mark.parametrize("kind", ["bert", "roberta", "electra"])
@pytest.mark.parametrize("layers", [1, 3])
def test_first_token_graph_gives_the_whole_models_logits(kind, layers):
    from bias_suite.models.first_token import first_token_last_layer

    model = _model(kind, layers)
    last = model.base_model.encoder.layer[-1]
    batch = _batch(50, [9, 1, 4, 9, 2], seed=layers)
    with torch.no_grad():
        whole = model(**batch).logits
        with first_token_last_layer(model, check=_batch(50, [5, 2])) as used:
            assert used
            assert model.base_model.encoder.layer[-1] is not last
            # the swapped layer hands on one position per text
            h = model.base_model(**batch).last_hidden_state
            assert h.shape == (5, 1, 24)
            part = model(**batch).logits
        assert model.base_model.encoder.layer[-1] is last          # restored
        again = model(**batch).logits
    assert torch.equal(again, whole)
    assert part.shape == whole.shape
    assert float((part - whole).abs().max()) < 1e-5
    # padding is masked: a padded text gets the logits it has alone
    with torch.no_grad():
        short = model(input_ids=batch["input_ids"][2:3, :4], attention_mask=batch["attention_mask"][2:3, :4]).logits
    assert float((part[2] - short[0]).abs().max()) < 1e-5


def test_a_head_that_reads_every_position_keeps_the_whole_graph():
    from bias_suite.models.first_token import first_token_last_layer

    model = _model("bert", 2)

    class MeanPooler(torch.nn.Module):
        def __init__(self, dense):
            super().__init__()
            self.dense = dense

        def forward(self, h):
            return torch.tanh(self.dense(h.mean(1)))

    model.bert.pooler = MeanPooler(model.bert.pooler.dense)
    last = model.bert.encoder.layer[-1]
    with first_token_last_layer(model, check=_batch(50, [6, 6, 6])) as used:
        assert not used
        assert model.bert.encoder.layer[-1] is last
    assert model.bert.encoder.layer[-1] is last


def test_which_configs_qualify():
    from transformers import BertConfig, DistilBertConfig

    from bias_suite.models.first_token import reads_first_token

    assert reads_first_token(BertConfig(architectures=["BertForSequenceClassification"]))
    assert reads_first_token(BertConfig())                                   # no architectures recorded
    assert not reads_first_token(BertConfig(architectures=["BertForTokenClassification"]))
    assert not reads_first_token(BertConfig(is_decoder=True))
    assert not reads_first_token(DistilBertConfig())
    assert not reads_first_token(None)
    relative = BertConfig()
    relative.position_embedding_type = "relative_key"
    assert not reads_first_token(relative)


def test_onnx_classifier_uses_the_first_token_graph(tmp_path):
    pytest.importorskip("onnxruntime")
    from bias_suite.models import HFClassifier

    path = make_tiny_classifier(tmp_path / "tiny")
    texts = ["I liked that gay writer.", "zebra", "a", "the movie was not good , really not good at all"]
    p32 = HFClassifier(path, device="cpu", progress=False).predict_proba(texts)
    onnx = HFClassifier(path, device="cpu", progress=False, dtype="onnx", batch_size=3)
    po = onnx.predict_proba(texts)
    assert onnx.model.first_token
    assert np.abs(po - p32).max() < 1e-5
    assert onnx.fingerprint()["quantization"]["graph"].startswith("last layer for the first token only")
    assert "quantization" not in HFClassifier(path, device="cpu", progress=False).fingerprint()
