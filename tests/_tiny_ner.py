"""Tiny, real NER models for tests (built locally, no hub): a 1-layer BERT
token classifier and a 1-layer BERT + CRF tagger, both with the WordPiece
tokenizer of ``_tiny_models`` (any lower-case ASCII word tokenizes)."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from _tiny_models import make_tiny_classifier, tiny_vocab  # noqa: E402


def _tiny_config(num_labels=None, id2label=None):
    from transformers import BertConfig

    vocab = tiny_vocab()
    kw = {}
    if id2label is not None:
        kw = dict(num_labels=len(id2label), id2label=dict(enumerate(id2label)),
                  label2id={n: i for i, n in enumerate(id2label)})
    return BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                      intermediate_size=32, max_position_embeddings=128, hidden_dropout_prob=0.0,
                      attention_probs_dropout_prob=0.0, initializer_range=0.5, pad_token_id=0, **kw)


_TOKENIZER_DIR: list = []


def _tokenizer(path: Path):
    """The tiny WordPiece tokenizer (built once per process, in a temp folder)."""
    import tempfile

    from transformers import AutoTokenizer

    if not _TOKENIZER_DIR:
        import atexit
        import shutil

        root = tempfile.mkdtemp(prefix="tiny_ner_tok_")
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        _TOKENIZER_DIR.append(make_tiny_classifier(Path(root) / "tok"))
    return AutoTokenizer.from_pretrained(str(_TOKENIZER_DIR[0]))


def make_tiny_token_classifier(path, tags: Sequence[str] = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC"), seed: int = 0) -> Path:
    """A tiny random ``BertForTokenClassification`` saved to ``path``."""
    import torch
    from transformers import BertForTokenClassification

    path = Path(path)
    tok = _tokenizer(path.parent / (path.name + "_src"))
    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        model = BertForTokenClassification(_tiny_config(id2label=list(tags)))
    finally:
        torch.random.set_rng_state(state)
    model.eval()
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def make_tiny_crf_model(path, types: Sequence[str] = ("PER", "LOC"), seed: int = 0, transition_scale: float = 3.0):
    """A tiny random encoder + CRF (not saved): ``(model, tokenizer)``.
    Transitions are drawn with a large scale so that unconstrained decoding
    would often produce invalid BILOU."""
    import torch
    from transformers import BertModel

    from bias_suite.models.crf import TransformerCrfModel
    from bias_suite.suites.bilou import bilou_tag_set

    tok = _tokenizer(Path(path).parent / (Path(path).name + "_src"))
    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        enc = BertModel(_tiny_config(), add_pooling_layer=False)
        model = TransformerCrfModel(enc, bilou_tag_set(types), dropout=0.0)
        with torch.no_grad():
            model.crf.transitions.normal_(0, transition_scale)
            model.classifier.weight.normal_(0, 1.0)
    finally:
        torch.random.set_rng_state(state)
    model.eval()
    return model, tok


def make_tiny_crf_tagger(path, **kw) -> Path:
    """A tiny encoder + CRF tagger saved to ``path`` (config.json + safetensors)."""
    from bias_suite.models.crf import save_crf_model

    model, tok = make_tiny_crf_model(path, **kw)
    save_crf_model(model, tok, path, max_length=64)
    return Path(path)


class GazetteerTagger:
    """A deterministic tagger whose truth is known: it tags as PER every
    capitalised token of its gazetteer (a run of them is one span) and
    nothing else, except the names in ``missed``, which it tags O. Its tag
    probabilities follow its tags (0.9 on the predicted tag; a missed name
    keeps 0.3 on U-PER); ``probabilities=False``: a tagger that gives none."""

    def __init__(self, names, missed=(), *, probabilities: bool = True):
        from bias_suite.suites.bilou import bilou_tag_set, expand_unit

        self.names = set(names) - set(missed)
        self.missed = set(missed)
        self.tag_names = bilou_tag_set(["PER"])
        self.probabilities = probabilities
        self._expand = expand_unit
        self.name = "gazetteer"

    def _tags(self, tokens):
        tags, i = ["O"] * len(tokens), 0
        while i < len(tokens):
            j = i
            while j < len(tokens) and tokens[j] in self.names:
                j += 1
            if j > i:
                tags[i:j] = self._expand("U-PER", j - i)
                i = j
            else:
                i += 1
        return tags

    def _probs(self, tokens, tags):
        import numpy as np

        col = {t: k for k, t in enumerate(self.tag_names)}
        P = np.zeros((len(tokens), len(self.tag_names)))
        for i, (tok, tag) in enumerate(zip(tokens, tags)):
            if tag != "O":
                P[i, col[tag]], P[i, col["O"]] = 0.9, 0.1
            elif tok in self.missed:
                P[i, col["U-PER"]], P[i, col["O"]] = 0.3, 0.7
            else:
                P[i, col["U-PER"]], P[i, col["O"]] = 0.05, 0.95
        return P

    def predict(self, sentences):
        tags = [self._tags(list(s)) for s in sentences]
        if not self.probabilities:
            return tags, None
        return tags, [self._probs(list(s), t) for s, t in zip(sentences, tags)]
