"""Hugging Face token classifiers (``AutoModelForTokenClassification``) as
taggers: pre-tokenized sentences in, tags and per-word tag probabilities out.

Word-level alignment: the sentence's words are given to the tokenizer with
``is_split_into_words=True``; a word's probabilities are the softmax of the
logits of its **first sub-token** (the usual convention of BERT-style NER,
Devlin et al. 2019). A word with no sub-token of its own (nothing left after
normalisation, or cut by ``max_length``) takes the probabilities of the last
sub-token before it. The predicted tag of a word is the argmax of its
probabilities (the first tag on ties); the sequence is not repaired (spans
come from well-formed runs only, see :mod:`bias_suite.suites.bilou`).

Tag names come from ``config.id2label``: BIO (``B-PER``, ``I-PER``), BILOU,
IOB1 (only ``I-`` tags) or bare types (``PER``, read as ``I-PER``); ``O``
(also ``0``/``OUT``) is outside. Identical sentences are tagged once;
sentences are sorted by sub-token length and padded per batch, as in
:class:`~bias_suite.models.hf.HFClassifier`.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from bias_suite.exceptions import ModelError
from bias_suite.suites.bilou import TAG_RE

__all__ = ["HFTokenClassifier", "normalise_tag_names"]


def normalise_tag_names(names: Sequence[str], source: str = "model") -> list[str]:
    """Map ``id2label`` names to ``O`` / ``P-TYPE`` tags (see module doc)."""
    out = []
    for n in names:
        s = str(n).strip()
        if s.upper() in ("O", "0", "OUT"):
            out.append("O")
        elif TAG_RE.match(s):
            out.append(s)
        elif len(s) > 2 and s[1] in "-_" and s[0].upper() in "BILUES":
            p = {"E": "L", "S": "U"}.get(s[0].upper(), s[0].upper())  # BIOES/IOBES -> BILOU
            out.append(f"{p}-{s[2:]}")
        elif s and " " not in s:
            out.append(f"I-{s}")
        else:
            raise ModelError(f"{source}: cannot read label {n!r} of config.id2label as a tag")
    if len(set(out)) != len(out):
        raise ModelError(f"{source}: config.id2label gives repeated tags after normalisation: {out}")
    return out


class HFTokenClassifier:
    """A ``transformers`` token-classification model with a tagger API.

    Parameters
    ----------
    model : str or Path — hub id or local folder.
    device, batch_size, trust_remote_code, progress, revision, dtype : as for
        :class:`~bias_suite.models.hf.HFClassifier`.
    max_length : int — sub-tokens per sentence (longer ones are cut).

    Attributes
    ----------
    tag_names : list of str — tags in id order (columns of the probabilities).
    """

    def __init__(self, model: str | os.PathLike, *, device: str = "auto", batch_size: int = 64,
                 max_length: int = 256, trust_remote_code: bool = False, progress: bool = True,
                 revision: str | None = None, dtype: Any = None):
        from .hf import (INT8, OrtSequenceClassifier, loading_bars, class_names_from_config, quantize_int8,
                         resolve_dtype_device)
        from .onnx_runtime import ONNX_MODES

        if not isinstance(batch_size, int) or batch_size < 1:
            raise ModelError(f"batch_size must be a positive integer, got {batch_size!r}")
        try:
            import torch
            from transformers import AutoModelForTokenClassification
        except ImportError as e:  # pragma: no cover
            raise ModelError(f"HFTokenClassifier needs torch and transformers ({e})") from None
        from .locate import locate_model

        self.model_id, self.is_local = locate_model(model, kind="tagger", progress=progress)
        self._torch_dtype, self.runtime, self.device = resolve_dtype_device(dtype, device)
        self.quantized = self.runtime == INT8
        self.batch_size = batch_size
        self.max_length = int(max_length)
        self.progress = bool(progress)
        self.revision = revision
        self.trust_remote_code = bool(trust_remote_code)
        self.dtype = self.runtime or (
            None if self._torch_dtype is None else str(self._torch_dtype).replace("torch.", ""))
        kw: dict[str, Any] = {"trust_remote_code": bool(trust_remote_code)}
        if revision is not None:
            kw["revision"] = revision
        try:
            with loading_bars(self.progress):
                from .crf import load_word_tokenizer

                self.tokenizer = load_word_tokenizer(self.model_id, **kw)
                self.model = AutoModelForTokenClassification.from_pretrained(self.model_id, **kw)
        except Exception as e:
            raise ModelError(f"could not load token-classification model {self.model_id!r}: {type(e).__name__}: {e}") from e
        if not getattr(self.tokenizer, "is_fast", False):
            raise ModelError(f"{self.model_id}: a fast tokenizer is needed (word alignment uses word_ids())")
        if self._torch_dtype is not None:
            self.model.to(self._torch_dtype)
        self.model.to(self.device)
        self.model.eval()
        if self.quantized:
            self.model = quantize_int8(self.model)
        self._forward = self.model
        if self.runtime in ONNX_MODES:
            self._forward = OrtSequenceClassifier(self.model, self.tokenizer, self.runtime, logits_dims=3,
                                                  inputs=("input_ids", "attention_mask"))
        self.tag_names = normalise_tag_names(class_names_from_config(self.model.config, self.model_id), self.model_id)
        self._torch = torch

    def predict(self, tokens_list: Sequence[Sequence[str]]):
        """Tags and per-word tag probabilities for pre-tokenized sentences.

        Returns
        -------
        pred_tags : list of list of str (argmax per word).
        tag_probs : list of ndarray (n_words, len(tag_names)), float64.
        """
        from tqdm.auto import tqdm

        from .crf import check_tokens, encode_words

        torch = self._torch
        tokens_list = check_tokens(tokens_list)
        if not tokens_list:
            return [], []
        index: dict[tuple, int] = {}
        inverse = np.empty(len(tokens_list), dtype=np.int64)
        for i, t in enumerate(tokens_list):
            inverse[i] = index.setdefault(tuple(t), len(index))
        uniq = [list(k) for k in index]
        ids, widx = encode_words(self.tokenizer, uniq, self.max_length)
        order = np.argsort(-np.array([len(x) for x in ids]), kind="stable")
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        C = len(self.tag_names)
        probs: list = [None] * len(uniq)
        bar = tqdm(total=len(uniq), desc="Tagging", unit="sent", disable=not self.progress, leave=False)
        try:
            with torch.inference_mode():
                for s in range(0, len(uniq), self.batch_size):
                    b = order[s:s + self.batch_size]
                    S = max(len(ids[i]) for i in b)
                    input_ids = torch.full((len(b), S), pad, dtype=torch.long)
                    att = torch.zeros((len(b), S), dtype=torch.long)
                    for j, i in enumerate(b):
                        input_ids[j, : len(ids[i])] = torch.tensor(ids[i])
                        att[j, : len(ids[i])] = 1
                    logits = self._forward(input_ids=input_ids.to(self.device), attention_mask=att.to(self.device)).logits
                    if logits.ndim != 3 or logits.shape[2] != C:
                        raise ModelError(f"model {self.model_id!r} returned logits of shape {tuple(logits.shape)}; expected (batch, length, {C})")
                    P = torch.softmax(logits.double(), dim=-1).cpu().numpy()
                    for j, i in enumerate(b):
                        probs[i] = P[j, widx[i]]
                    bar.update(len(b))
        finally:
            bar.close()
        names = np.asarray(self.tag_names, dtype=object)
        tags = [names[p.argmax(axis=1)].tolist() for p in probs]
        return [list(tags[k]) for k in inverse], [probs[k] for k in inverse]

    __call__ = predict

    def fingerprint(self) -> dict:
        """What this tagger computes, for the prediction cache (see
        :meth:`bias_suite.models.hf.HFClassifier.fingerprint`)."""
        from .hf import library_versions, weights_digest, runtime_info
        from .onnx_runtime import RECHECK_MARGIN

        fp = {"kind": "hf_token", "model": self.model_id, "revision": self.revision,
              "commit_hash": getattr(self.model.config, "_commit_hash", None), "tag_names": list(self.tag_names),
              "max_length": self.max_length,
              "dtype": self.runtime or str(next(self.model.parameters()).dtype).replace("torch.", ""),
              "versions": library_versions()}
        if self.runtime:
            fp["quantization"] = runtime_info(self.runtime, recheck=(
                "sentences with a sub-token whose top-two tag probabilities are closer than "
                f"{RECHECK_MARGIN}"))
        if self.is_local:
            fp["weights_sha256"] = weights_digest(Path(self.model_id))
        return fp

    def spec(self) -> dict:
        """How to rebuild this tagger in another process (Ray workers)."""
        return {"factory": "bias_suite.models.token:HFTokenClassifier",
                "kwargs": {"model": self.model_id, "batch_size": self.batch_size, "max_length": self.max_length,
                           "trust_remote_code": self.trust_remote_code, "revision": self.revision,
                           "dtype": self.dtype}}

    def __repr__(self) -> str:
        return f"HFTokenClassifier({self.model_id!r}, device={self.device!r}, tags={self.tag_names})"
