"""Transformer + CRF sequence tagger: any Hugging Face encoder, a linear
layer giving per-word emission scores, and a linear-chain CRF on top.

- :class:`CRF`: a compact linear-chain CRF (log-likelihood by the forward
  algorithm, batched Viterbi decoding, per-token marginals by
  forward-backward), all on the tensors' device. Transitions can be
  *constrained* to valid BILOU sequences (see
  :func:`bias_suite.suites.bilou.allowed_transition`): forbidden
  transitions get a score of ``-1e4`` in training and can never be chosen
  by Viterbi, so decoding always yields well-formed BILOU.
- :class:`TransformerCrfModel`: encoder + dropout + linear + CRF
  (``torch.nn.Module``). Words are represented by their **first
  sub-token**; a word with no sub-token of its own (nothing left after
  normalisation, or cut by ``max_length``) takes the state of the last
  sub-token before it, so every word gets a tag.
- :class:`TransformerCrfTagger`: the predictor. ``predict(tokens_list)``
  returns ``(pred_tags, tag_probs)``: Viterbi tags per word and, per word,
  probabilities over ``tag_names``: the softmax of the emissions (default,
  as in the literature) or, with ``probabilities="marginals"``, the CRF's
  marginals P(tag_i = t | sentence) from forward-backward.

Saved as a folder: ``config.json`` (``"bias_suite_model":
"transformer_crf"``, the tag names, the encoder's config), ``model.safetensors``
(encoder, classifier and CRF weights) and the tokenizer files; load with
:meth:`TransformerCrfTagger.from_pretrained` (or the constructor).
torch and transformers are imported when a model is built or loaded.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Sequence

import numpy as np

from bias_suite.exceptions import ModelError
from bias_suite.suites.bilou import allowed_transition, is_valid_tag

__all__ = ["CRF", "TransformerCrfModel", "TransformerCrfTagger", "is_crf_folder", "bilou_constraints", "CONFIG_MARK"]

CONFIG_MARK = "transformer_crf"
FORBIDDEN = -1e4
#: ``dtype="onnx-int8"``: a sentence is tagged again from float32 emissions
#: when any word's two most probable tags under the CRF marginals of the int8
#: emissions are closer than this. On default-ner (2,068 suite sentences)
#: 0.1 re-checks 8.7% of them and leaves 99.52% of the sentences tagged as in
#: float32 (97.87% with int8 alone); margins of the emission softmax were a
#: poor guide (0.1 there re-checked 72%).
CRF_RECHECK_MARGIN = 0.1


def bilou_constraints(tag_names: Sequence[str]):
    """Allowed transitions of a BILOU tag set as numpy bool arrays:
    ``(start (T,), trans (T, T) [from, to], end (T,))``."""
    T = len(tag_names)
    start = np.array([allowed_transition(None, t) for t in tag_names])
    end = np.array([allowed_transition(t, None) for t in tag_names])
    trans = np.array([[allowed_transition(a, b) for b in tag_names] for a in tag_names]).reshape(T, T)
    return start, trans, end


def _torch():
    try:
        import torch
    except ImportError as e:  # pragma: no cover
        raise ModelError(f"the CRF tagger needs torch ({e})") from None
    return torch


def _crf_class():
    torch = _torch()
    nn = torch.nn

    class _CRF(nn.Module):
        """Linear-chain CRF over ``num_tags`` tags.

        Parameters
        ----------
        num_tags : int
        constraints : (start, trans, end) bool arrays or None
            Allowed start tags, transitions [from, to] and end tags; forbidden
            ones are fixed at -1e4 (not learned). None: everything allowed.

        Shapes: emissions (B, L, T), tags (B, L) long, mask (B, L) bool with
        each row's valid positions first (mask[:, 0] must be True).
        """

        def __init__(self, num_tags: int, constraints=None):
            super().__init__()
            self.num_tags = num_tags
            self.start_transitions = nn.Parameter(torch.zeros(num_tags))
            self.end_transitions = nn.Parameter(torch.zeros(num_tags))
            self.transitions = nn.Parameter(torch.zeros(num_tags, num_tags))
            nn.init.uniform_(self.start_transitions, -0.1, 0.1)
            nn.init.uniform_(self.end_transitions, -0.1, 0.1)
            nn.init.uniform_(self.transitions, -0.1, 0.1)
            if constraints is None:
                s = torch.ones(num_tags, dtype=torch.bool)
                tr = torch.ones(num_tags, num_tags, dtype=torch.bool)
                e = torch.ones(num_tags, dtype=torch.bool)
            else:
                s, tr, e = (torch.as_tensor(np.asarray(x), dtype=torch.bool) for x in constraints)
            self.register_buffer("allowed_start", s)
            self.register_buffer("allowed_trans", tr)
            self.register_buffer("allowed_end", e)

        # effective (masked) scores
        def transition_scores(self, forbidden: float = FORBIDDEN):
            f = torch.tensor(forbidden, dtype=self.transitions.dtype, device=self.transitions.device)
            return (
                torch.where(self.allowed_start, self.start_transitions, f),
                torch.where(self.allowed_trans, self.transitions, f),
                torch.where(self.allowed_end, self.end_transitions, f),
            )

        def forward(self, emissions, tags, mask, reduction: str = "mean"):
            """Negative log-likelihood of ``tags`` (``reduction``: "mean" over
            sentences, "sum", or "none")."""
            nll = self.log_partition(emissions, mask) - self.score(emissions, tags, mask)
            if reduction == "none":
                return nll
            if reduction == "sum":
                return nll.sum()
            return nll.mean()

        def score(self, emissions, tags, mask):
            """Unnormalised score of each tag sequence, (B,)."""
            start, trans, end = self.transition_scores()
            B, L, _ = emissions.shape
            m = mask.to(emissions.dtype)
            em = emissions.gather(2, tags.unsqueeze(2)).squeeze(2)  # (B, L)
            s = start[tags[:, 0]] + em[:, 0]
            if L > 1:
                tr = trans[tags[:, :-1], tags[:, 1:]]  # (B, L-1)
                s = s + ((tr + em[:, 1:]) * m[:, 1:]).sum(1)
            last = mask.long().sum(1) - 1
            s = s + end[tags.gather(1, last.unsqueeze(1)).squeeze(1)]
            return s

        def _forward_alphas(self, emissions, mask):
            start, trans, end = self.transition_scores()
            B, L, T = emissions.shape
            alpha = start + emissions[:, 0]  # (B, T)
            alphas = [alpha]
            for i in range(1, L):
                nxt = torch.logsumexp(alpha.unsqueeze(2) + trans.unsqueeze(0), dim=1) + emissions[:, i]
                alpha = torch.where(mask[:, i].unsqueeze(1), nxt, alpha)
                alphas.append(alpha)
            return alphas, end

        def log_partition(self, emissions, mask):
            """log Z per sentence, (B,)."""
            alphas, end = self._forward_alphas(emissions, mask)
            return torch.logsumexp(alphas[-1] + end, dim=1)

        def marginals(self, emissions, mask):
            """P(tag_i = t | x) by forward-backward, (B, L, T); rows past a
            sentence's end are zeros."""
            start, trans, end = self.transition_scores()
            B, L, T = emissions.shape
            alphas, _ = self._forward_alphas(emissions, mask)
            beta = end.unsqueeze(0).expand(B, T)
            betas = [None] * L
            # beta_i(t) = log sum over continuations from position i in tag t (excluding emission i)
            lengths = mask.long().sum(1)
            betas[L - 1] = beta
            for i in range(L - 2, -1, -1):
                nxt = torch.logsumexp(trans.unsqueeze(0) + (emissions[:, i + 1] + betas[i + 1]).unsqueeze(1), dim=2)
                # positions i that are the last valid one keep beta = end
                is_last = (lengths - 1 == i).unsqueeze(1)
                valid_next = mask[:, i + 1].unsqueeze(1)
                betas[i] = torch.where(valid_next, nxt, torch.where(is_last, beta, betas[i + 1]))
            A = torch.stack(alphas, 1)
            Bt = torch.stack(betas, 1)
            logz = torch.logsumexp(alphas[-1] + end, dim=1)
            lm = A + Bt - logz[:, None, None]
            p = lm.exp() * mask.unsqueeze(2).to(emissions.dtype)
            return p

        def decode(self, emissions, mask) -> list:
            """Batched Viterbi on the emissions' device; list of tag-index lists.
            Forbidden transitions score -inf here, so they are never taken."""
            start, trans, end = self.transition_scores(float("-inf"))
            B, L, T = emissions.shape
            score = start + emissions[:, 0]
            history = []
            for i in range(1, L):
                cand = score.unsqueeze(2) + trans.unsqueeze(0)  # (B, from, to)
                best, idx = cand.max(dim=1)
                nxt = best + emissions[:, i]
                m = mask[:, i].unsqueeze(1)
                score = torch.where(m, nxt, score)
                # masked steps point back to the same tag (identity)
                ident = torch.arange(T, device=emissions.device).unsqueeze(0).expand(B, T)
                history.append(torch.where(m, idx, ident))
            score = score + end
            best_last = score.argmax(dim=1)  # (B,)
            path = [best_last]
            cur = best_last
            for h in reversed(history):
                cur = h.gather(1, cur.unsqueeze(1)).squeeze(1)
                path.append(cur)
            path.reverse()
            P = torch.stack(path, 1).cpu().numpy()  # (B, L)
            lengths = mask.long().sum(1).cpu().numpy()
            return [P[b, : lengths[b]].tolist() for b in range(B)]

    return _CRF


def CRF(num_tags: int, constraints=None):
    """A linear-chain CRF module (see the module docstring)."""
    return _crf_class()(num_tags, constraints)


def _model_class():
    torch = _torch()
    nn = torch.nn

    class _TransformerCrfModel(nn.Module):
        def __init__(self, encoder, tag_names: Sequence[str], *, dropout: float = 0.1, constrained: bool = True):
            super().__init__()
            self.encoder = encoder
            self.tag_names = list(tag_names)
            hidden = encoder.config.hidden_size
            self.dropout = nn.Dropout(dropout)
            self.classifier = nn.Linear(hidden, len(self.tag_names))
            cons = bilou_constraints(self.tag_names) if constrained else None
            self.crf = CRF(len(self.tag_names), cons)
            self.constrained = constrained
            self.dropout_p = dropout

        def emissions(self, input_ids, attention_mask, word_index, token_type_ids=None):
            """Per-word emission scores (B, W, T) from the first sub-token of
            each word (``word_index`` (B, W): sub-token position per word)."""
            kw = {"input_ids": input_ids, "attention_mask": attention_mask}
            if token_type_ids is not None:
                kw["token_type_ids"] = token_type_ids
            h = self.encoder(**kw).last_hidden_state  # (B, S, H)
            idx = word_index.unsqueeze(2).expand(-1, -1, h.shape[2])
            hw = h.gather(1, idx)
            return self.classifier(self.dropout(hw))

        def forward(self, input_ids, attention_mask, word_index, word_mask, tags=None, token_type_ids=None):
            em = self.emissions(input_ids, attention_mask, word_index, token_type_ids)
            if tags is None:
                return em
            return self.crf(em, tags, word_mask)

    return _TransformerCrfModel


def TransformerCrfModel(encoder, tag_names, *, dropout: float = 0.1, constrained: bool = True):
    """Encoder + dropout + linear + CRF as a ``torch.nn.Module``."""
    return _model_class()(encoder, tag_names, dropout=dropout, constrained=constrained)


def is_crf_folder(path) -> bool:
    """True if ``path`` is a folder saved by :meth:`TransformerCrfTagger.save_pretrained`."""
    p = Path(path) / "config.json"
    if not p.is_file():
        return False
    try:
        return json.loads(p.read_text(encoding="utf-8")).get("bias_suite_model") == CONFIG_MARK
    except (OSError, ValueError):
        return False


def load_word_tokenizer(name_or_path, **kw):
    """A fast tokenizer that accepts pre-split words (``is_split_into_words``);
    byte-level BPE tokenizers (RoBERTa, GPT-2, BART, DeBERTa) are reloaded with
    ``add_prefix_space=True``, which they need for pre-split input."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(name_or_path), **kw)
    backend = getattr(tok, "backend_tokenizer", None)
    byte_level = backend is not None and "ByteLevel" in repr(backend.pre_tokenizer)
    if byte_level and not getattr(tok, "add_prefix_space", False):
        # without it, every word is encoded as if it started the text ("Emma", not "ĠEmma")
        tok = AutoTokenizer.from_pretrained(str(name_or_path), add_prefix_space=True, **kw)
    return tok


def encode_words(tokenizer, tokens_list: Sequence[Sequence[str]], max_length: int):
    """Sub-token ids of pre-split sentences plus, per word, the position of
    its first sub-token (falling back to the previous sub-token for words
    without one). Returns ``(input_ids lists, word_index lists)``."""
    enc = tokenizer([list(t) for t in tokens_list], is_split_into_words=True, truncation=True, max_length=max_length)
    ids, widx = [], []
    for b, toks in enumerate(tokens_list):
        word_ids = enc.word_ids(b)
        first: dict[int, int] = {}
        for pos, w in enumerate(word_ids):
            if w is not None and w not in first:
                first[w] = pos
        out, last = [], 0
        for w in range(len(toks)):
            if w in first:
                last = first[w]
            out.append(last)
        ids.append(list(enc["input_ids"][b]))
        widx.append(out)
    return ids, widx


class TransformerCrfTagger:
    """A saved transformer + CRF tagger with a ``predict`` API.

    Parameters
    ----------
    model : str or Path, or a ``TransformerCrfModel``
        A folder written by :meth:`save_pretrained` (or a module, then
        ``tokenizer`` is required).
    tokenizer : a transformers tokenizer (fast), when ``model`` is a module.
    device : "auto", "cpu", "cuda", "cuda:N".
    batch_size : sentences per forward pass.
    max_length : sub-tokens per sentence (longer ones are cut; the words past
        the cut reuse the last kept sub-token, see the module doc).
    probabilities : "softmax" (softmax of the emissions, default) or
        "marginals" (CRF forward-backward marginals).
    progress : show a tqdm bar.
    dtype : weights dtype of the encoder and CRF ("bf16"/"fp16" for GPUs),
        or "int8": dynamic int8 quantization of the linear layers (CPU; the
        CRF stays float32). None keeps the saved float32.

    Attributes
    ----------
    tag_names : list of str — BILOU tag set in column order of the probabilities.
    """

    def __init__(self, model, *, tokenizer=None, device: str = "auto", batch_size: int = 64,
                 max_length: int = 128, probabilities: str = "softmax", progress: bool = True, dtype=None):
        from .hf import INT8, quantize_int8, resolve_dtype_device
        from .onnx_runtime import ONNX_MODES

        torch = _torch()
        if probabilities not in ("softmax", "marginals"):
            raise ModelError(f"probabilities must be 'softmax' or 'marginals', got {probabilities!r}")
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ModelError(f"batch_size must be a positive integer, got {batch_size!r}")
        self._torch_dtype, self.runtime, self.device = resolve_dtype_device(dtype, device)
        self.quantized = self.runtime == INT8
        self.batch_size = batch_size
        self.max_length = int(max_length)
        self.probabilities = probabilities
        self.progress = bool(progress)
        self.path = None
        if isinstance(model, (str, os.PathLike)):
            from .locate import locate_model

            where, local = locate_model(model, kind="tagger", progress=progress)
            if not local:
                raise ModelError(f"TransformerCrfTagger loads a folder saved by save_pretrained; {str(model)!r} is "
                                 "not one (a hub token classifier loads with HFTokenClassifier)")
            self.path = Path(where)
            self.model, self.tokenizer, cfg = _load(self.path)
            self.max_length = int(cfg.get("max_length", self.max_length)) if max_length == 128 else self.max_length
        else:
            if tokenizer is None:
                raise ModelError("TransformerCrfTagger(module) needs tokenizer=...")
            self.model, self.tokenizer = model, tokenizer
        self.dtype = self.runtime or (
            None if self._torch_dtype is None else str(self._torch_dtype).replace("torch.", ""))
        if self._torch_dtype is not None:
            self.model.to(self._torch_dtype)
            self.model.crf.float()  # the encoder runs in half precision; Viterbi and marginals stay in float32+
        self.model.to(self.device)
        self.model.eval()
        if self.quantized:  # encoder and emission layer int8; the CRF stays float32
            self.model = quantize_int8(self.model)
        self._emissions = self.model.emissions
        if self.runtime in ONNX_MODES:  # encoder and emission layer in ONNX Runtime; the CRF stays in torch
            self._emissions = _ort_emissions(self.model, self.tokenizer, self.runtime)
        self.tag_names = list(self.model.tag_names)
        self._torch = torch

    @classmethod
    def from_pretrained(cls, path, **kw) -> "TransformerCrfTagger":
        """Load a folder written by :meth:`save_pretrained`."""
        return cls(path, **kw)

    def save_pretrained(self, path) -> Path:
        """Write ``config.json``, ``model.safetensors`` and the tokenizer."""
        return save_crf_model(self.model, self.tokenizer, path, max_length=self.max_length)

    # ------------------------------------------------------------ predict
    def predict(self, tokens_list: Sequence[Sequence[str]]):
        """Tags and per-word tag probabilities for pre-tokenized sentences.

        Returns
        -------
        pred_tags : list of list of str — Viterbi tags (valid BILOU when the
            transitions are constrained).
        tag_probs : list of ndarray (n_words, len(tag_names)), float64, rows sum to 1.
        """
        from tqdm.auto import tqdm

        torch = self._torch
        tokens_list = check_tokens(tokens_list)
        n = len(tokens_list)
        if n == 0:
            return [], []
        # identical sentences are tagged once
        index: dict[tuple, int] = {}
        inverse = np.empty(n, dtype=np.int64)
        for i, t in enumerate(tokens_list):
            inverse[i] = index.setdefault(tuple(t), len(index))
        uniq = [list(k) for k in index]
        ids, widx = encode_words(self.tokenizer, uniq, self.max_length)
        order = np.argsort(-np.array([len(x) for x in ids]), kind="stable")
        tags_out: list = [None] * len(uniq)
        probs_out: list = [None] * len(uniq)
        pad = self.tokenizer.pad_token_id or 0
        bar = tqdm(total=len(uniq), desc="Tagging", unit="sent", disable=not self.progress, leave=False)
        try:
            with torch.inference_mode():
                for s in range(0, len(uniq), self.batch_size):
                    b = order[s:s + self.batch_size]
                    batch = pad_batch([ids[i] for i in b], [widx[i] for i in b], pad, self.device)
                    em = self._emissions(batch["input_ids"], batch["attention_mask"], batch["word_index"]).float()
                    mask = batch["word_mask"]
                    paths = self.model.crf.decode(em, mask)
                    if self.probabilities == "marginals":
                        P = self.model.crf.marginals(em.double(), mask)
                    else:
                        P = torch.softmax(em.double(), dim=-1)
                    P = P.cpu().numpy()
                    for j, i in enumerate(b):
                        L = len(uniq[i])
                        tags_out[i] = [self.tag_names[k] for k in paths[j]]
                        probs_out[i] = P[j, :L].copy()
                    bar.update(len(b))
        finally:
            bar.close()
        return [list(tags_out[k]) for k in inverse], [probs_out[k] for k in inverse]

    __call__ = predict

    def fingerprint(self) -> dict | None:
        """What this tagger computes, for the prediction cache; None for a
        tagger built from an in-memory module (nothing identifies its weights)."""
        from .hf import library_versions, weights_digest, runtime_info

        if self.path is None:
            return None
        fp = {"kind": "transformer_crf", "model": str(self.path), "tag_names": self.tag_names,
              "max_length": self.max_length, "probabilities": self.probabilities,
              "dtype": self.dtype or "float32", "versions": library_versions(),
              "weights_sha256": weights_digest(self.path)}
        if self.runtime:
            fp["quantization"] = runtime_info(self.runtime, recheck=(
                f"sentences with a word whose top-two CRF marginals are closer than {CRF_RECHECK_MARGIN}"))
        return fp

    def spec(self) -> dict:
        """How to rebuild this tagger in another process (Ray workers); a
        tagger built from an in-memory module travels pickled instead."""
        if self.path is None:
            return {"object": self}
        return {"factory": "bias_suite.models.crf:TransformerCrfTagger",
                "kwargs": {"model": str(self.path), "batch_size": self.batch_size, "max_length": self.max_length,
                           "probabilities": self.probabilities, "dtype": self.dtype}}

    def __repr__(self) -> str:
        return f"TransformerCrfTagger({str(self.path) if self.path else '<module>'!r}, tags={len(self.tag_names)})"


def _ort_emissions(model, tokenizer, mode: str):
    """``model.emissions`` run by ONNX Runtime (:mod:`bias_suite.models.onnx_runtime`);
    returns torch tensors like the module does."""
    from .onnx_runtime import OrtFunction, top2_margin

    torch = _torch()
    ids, widx = encode_words(tokenizer, [["a", "b", "c"], ["a"]], 16)
    example = pad_batch(ids, widx, tokenizer.pad_token_id or 0)
    names = ["input_ids", "attention_mask", "word_index"]
    dynamic = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
               "word_index": {0: "batch", 1: "words"}, "out": {0: "batch", 1: "words"}}

    def margin(out, feed):
        """Per sentence, the smallest gap between the two most probable
        tags of a word under the CRF marginals of the int8 emissions."""
        w = feed["word_index"]
        # padded word slots point at sub-token 0; a real word does only when it is the first one
        mask = (w > 0) | (np.arange(w.shape[1]) == 0)
        with torch.no_grad():
            p = model.crf.marginals(torch.from_numpy(out).double(), torch.from_numpy(mask)).numpy()
        return top2_margin(p, mask)

    fn = OrtFunction(model, model.emissions, {k: example[k] for k in names}, dynamic, mode=mode, margin=margin,
                     recheck=CRF_RECHECK_MARGIN)

    def emissions(input_ids, attention_mask, word_index):
        return torch.from_numpy(fn(input_ids=input_ids, attention_mask=attention_mask, word_index=word_index))

    emissions.function = fn     # its ``rows`` / ``rechecked`` counts
    return emissions


def check_tokens(tokens_list) -> list:
    if isinstance(tokens_list, (str, bytes)):
        raise ModelError("tokens_list must be a list of token lists, got a string")
    out = []
    for i, toks in enumerate(tokens_list):
        if isinstance(toks, (str, bytes)):
            raise ModelError(f"tokens_list[{i}] must be a list of tokens, got a string: {toks!r}")
        toks = list(toks)
        if not toks:
            raise ModelError(f"tokens_list[{i}] is empty")
        for j, t in enumerate(toks):
            if not isinstance(t, str) or not t:
                raise ModelError(f"tokens_list[{i}][{j}] must be a non-empty string, got {t!r}")
        out.append(toks)
    return out


def pad_batch(ids: list, widx: list, pad_id: int, device: str = "cpu", tags: list | None = None) -> dict:
    """Pad sub-token ids and word indices into tensors on ``device``."""
    torch = _torch()
    B = len(ids)
    S = max(len(x) for x in ids)
    W = max(len(x) for x in widx)
    input_ids = torch.full((B, S), pad_id, dtype=torch.long)
    att = torch.zeros((B, S), dtype=torch.long)
    word_index = torch.zeros((B, W), dtype=torch.long)
    word_mask = torch.zeros((B, W), dtype=torch.bool)
    out_tags = torch.zeros((B, W), dtype=torch.long) if tags is not None else None
    for b in range(B):
        input_ids[b, : len(ids[b])] = torch.tensor(ids[b])
        att[b, : len(ids[b])] = 1
        word_index[b, : len(widx[b])] = torch.tensor(widx[b])
        word_mask[b, : len(widx[b])] = True
        if tags is not None:
            out_tags[b, : len(tags[b])] = torch.tensor(tags[b])
    d = {"input_ids": input_ids, "attention_mask": att, "word_index": word_index, "word_mask": word_mask}
    if tags is not None:
        d["tags"] = out_tags
    if str(device).startswith("cuda"):  # pinned host memory: asynchronous copies
        return {k: v.pin_memory().to(device, non_blocking=True) for k, v in d.items()}
    return {k: v.to(device) for k, v in d.items()}


def save_crf_model(model, tokenizer, path, *, max_length: int = 128, extra: dict | None = None) -> Path:
    """Save a ``TransformerCrfModel`` and its tokenizer as a folder."""
    from safetensors.torch import save_file

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    cfg = {
        "bias_suite_model": CONFIG_MARK,
        "architecture": "encoder + dropout + linear + linear-chain CRF",
        "tag_names": list(model.tag_names),
        "constrained": bool(model.constrained),
        "dropout": float(model.dropout_p),
        "max_length": int(max_length),
        "word_representation": "first sub-token",
        "encoder": model.encoder.config.to_dict(),
    }
    if extra:
        cfg.update(extra)
    (path / "config.json").write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(path / "model.safetensors"), metadata={"format": "pt"})
    tokenizer.save_pretrained(path)
    return path


def _load(path: Path):
    torch = _torch()
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModel

    if not path.is_dir():
        raise ModelError(f"model folder {str(path)!r} does not exist")
    if not is_crf_folder(path):
        raise ModelError(f"{path} is not a transformer+CRF tagger folder (config.json lacks \"bias_suite_model\": \"{CONFIG_MARK}\")")
    cfg = json.loads((path / "config.json").read_text(encoding="utf-8"))
    tags = cfg.get("tag_names") or []
    bad = [t for t in tags if not is_valid_tag(t)]
    if not tags or bad:
        raise ModelError(f"{path}/config.json: tag_names must be BILOU tags, got {bad or tags}")
    enc_cfg = dict(cfg["encoder"])
    model_type = enc_cfg.pop("model_type", None)
    if model_type is None:
        raise ModelError(f"{path}/config.json: encoder.model_type is missing")
    try:
        econf = AutoConfig.for_model(model_type, **enc_cfg)
        encoder = AutoModel.from_config(econf)
        model = TransformerCrfModel(encoder, tags, dropout=cfg.get("dropout", 0.1), constrained=cfg.get("constrained", True))
        state = load_file(str(path / "model.safetensors"))
        missing, unexpected = model.load_state_dict(state, strict=False)
        missing = [k for k in missing if not k.endswith("position_ids") and ".pooler." not in k]
        unexpected = [k for k in unexpected if not k.endswith("position_ids")]
        if missing or unexpected:
            raise ModelError(f"{path}: weights do not match the model (missing {missing[:5]}, unexpected {unexpected[:5]})")
        tokenizer = load_word_tokenizer(path)
    except ModelError:
        raise
    except Exception as e:
        raise ModelError(f"could not load transformer+CRF tagger {str(path)!r}: {type(e).__name__}: {e}") from e
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(f"{path}: a fast tokenizer is needed (word alignment uses word_ids())")
    _ = torch
    return model, tokenizer, cfg
