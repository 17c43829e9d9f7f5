"""Tiny, real transformers classifiers for tests (built locally, no hub).

``make_tiny_classifier(path)`` writes a 1-layer BERT (hidden 16, 2 heads) with
a WordPiece tokenizer over a small vocabulary to ``path`` via
``save_pretrained``; load it with ``HFClassifier(path)`` or plain
``AutoModelForSequenceClassification.from_pretrained(path)``. Building takes
well under a second.

Usage from any test module (pytest puts ``tests/`` on ``sys.path``)::

    from _tiny_models import make_tiny_classifier

    def test_x(tmp_path):
        model_dir = make_tiny_classifier(tmp_path / "tiny")
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = (
    "i you he she they we it a an the this that is was are were be not no and "
    "but or very so really liked like love loved hate hated good great bad "
    "awful terrible fine okay nice writer doctor nurse teacher engineer person "
    "man woman men women gay straight lesbian bisexual trans black white asian "
    "christian muslim jewish young old movie film book food service friend "
    "neighbor am my his her their is . , ! ? '"
).split()
LETTERS = list("abcdefghijklmnopqrstuvwxyz0123456789")

#: Absolute tolerance for probabilities of a float32 model computed along two
#: different paths (batch sizes, padding, chunking, another instance). float32
#: is not bit-stable across batch shapes: padding and the BLAS kernel chosen
#: for a shape move probabilities by ~1e-7 on one machine and more on others.
#: 1e-5 (~100 float32 ulps at 1.0) holds on any machine and is still far below
#: any difference a metric or a test of behaviour cares about. Same path, same
#: shape: compare exactly instead.
FLOAT32_ATOL = 1e-5


def tiny_vocab() -> list[str]:
    """The vocabulary: special tokens, words, single characters and
    ``##``-continuations so that any lower-case ASCII word tokenizes."""
    vocab: list[str] = []
    for tok in SPECIAL + WORDS + LETTERS + ["##" + c for c in LETTERS]:
        if tok not in vocab:
            vocab.append(tok)
    return vocab


def make_tiny_classifier(path: str | os.PathLike,
                         class_names: Sequence[str] = ("negative", "neutral", "positive"),
                         seed: int = 0) -> Path:
    """Build and save a tiny random BERT sequence classifier.

    Parameters
    ----------
    path : path
        Output folder (created).
    class_names : sequence of str
        Written to ``config.id2label`` in this order.
    seed : int
        Seeds the random weights; same seed, same model.

    Returns
    -------
    Path
        ``path``, holding config, weights and tokenizer files.
    """
    import torch
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    vocab = tiny_vocab()
    ids = {t: i for i, t in enumerate(vocab)}

    tok = Tokenizer(WordPiece(ids, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=None,
                                                clean_text=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0",
        pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])],
    )
    tok.decoder = decoders.WordPiece(prefix="##")
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
        cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]",
        model_max_length=128,
    )
    fast.save_pretrained(path)

    names = [str(c) for c in class_names]
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=32, max_position_embeddings=128,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        initializer_range=0.5, pad_token_id=ids["[PAD]"],
        num_labels=len(names), id2label=dict(enumerate(names)),
        label2id={n: i for i, n in enumerate(names)},
    )
    gen_state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        model = BertForSequenceClassification(config)
    finally:
        torch.random.set_rng_state(gen_state)
    model.eval()
    model.save_pretrained(path)
    return path


def install_tiny_defaults(cache_root) -> dict:
    """Put tiny stand-ins of the default models where ``bias-suite models``
    keeps them (``<cache_root>/models/<name>``, i.e. ``$BIAS_SUITE_CACHE``),
    marked as built by the current recipes, so that ``default-sentiment``
    and ``default-ner`` resolve in seconds. Returns ``{name: folder}``."""
    import json

    from _tiny_ner import make_tiny_crf_tagger

    from bias_suite.models.default import current_recipe

    root = Path(cache_root) / "models"
    out = {"default-sentiment": make_tiny_classifier(root / "default-sentiment"),
           "default-ner": make_tiny_crf_tagger(root / "default-ner", types=("PER", "LOC", "ORG", "MISC"))}
    for name, path in out.items():
        (path / "metrics.json").write_text(json.dumps({"recipe": current_recipe(name), "note": "tiny stand-in"}))
        (path / "README.md").write_text(f"# {name}: a tiny stand-in for tests\n")
    return out


def lexicon_model(words: dict):
    """A sentiment model whose output depends only on the words of ``words``
    (word -> score) a text holds: ``predict(texts) -> (n, 3)`` probabilities
    of negative, neutral and positive."""
    import re

    import numpy as np

    def predict(texts):
        out = []
        for t in texts:
            s = sum(words.get(w, 0.0) for w in re.findall(r"[a-z]+", t.lower()))
            z = np.array([-s, 0.6 - 0.5 * abs(s), s])
            p = np.exp(z - z.max())
            out.append(p / p.sum())
        return np.array(out)
    return predict
