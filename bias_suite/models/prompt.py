"""Language models as classifiers: a prompt, answer words, class probabilities.

:class:`PromptClassifier` puts each text into a prompt, runs a Hugging Face
causal LM (``AutoModelForCausalLM``: GPT-2, Llama, ...) or masked LM
(``AutoModelForMaskedLM``: BERT, RoBERTa, ...) and reads the probabilities of
each class's answer words (the *verbalizer*) at the answer position:

- causal LM: the position after the prompt's last token (the prompt is
  tokenized without added special tokens: no BOS/EOS);
- masked LM: the ``{mask}`` of the prompt (tokenized with the tokenizer's
  special tokens).

Class scores (``scoring="first-token"``, the default): a class's score is
the sum over its answer words of the probability of the word's **first
sub-token** at the answer position, and the scores are normalised over the
classes. Words whose first sub-tokens coincide are counted once within a
class and refused across classes (they could not be told apart). One
forward pass per text. ``scoring="word"``: a word's probability is its whole
likelihood, the product over its sub-tokens (causal LM: each sub-token given
the prompt and the word's earlier sub-tokens, one more pass per multi-token
word; masked LM: the word's sub-tokens in as many masks, filled left to
right, one pass per sub-token); single-token words cost nothing extra.

Answer tokens: a word is tokenized where it stands, after the prompt's
literal text before the answer: ``ids(tail + word)`` beyond ``ids(tail)``.
So a word after a space gets the tokenizer's leading-space form where it has
one (GPT-2's byte-level BPE: ``"Ġgood"``; SentencePiece: ``"▁good"``); a
WordPiece tokenizer (BERT) has none and gives the word's own tokens. For a
causal LM the answer follows the prompt after a space (trailing spaces of
the prompt are removed from the model input), or directly after a prompt
that ends with a newline; ``answer_prefix`` overrides that separator.

torch and transformers are imported when a classifier is created.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from bias_suite.exceptions import ModelError
from bias_suite.models.hf import (INT8, EncodedForward, config_and_tokenizer, distinct_texts, input_groups, inputs_of,
                                  library_versions, loading_bars, ready_for_inference, resolve_dtype_device,
                                  weights_digest)
from bias_suite.models.onnx_runtime import ONNX_MODES
from bias_suite.models.prompt_spec import (LM_KINDS, PLACEHOLDER, SCORINGS, check_prompt, check_verbalizer,
                                           fill_prompt)

__all__ = ["PromptClassifier", "answer_tokens"]

log = logging.getLogger(__name__)

#: Largest |difference| of log-probabilities accepted between the whole
#: output layer and the one applied at the answer positions only.
GATHER_CHECK_ATOL = 1e-4


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def answer_tokens(tokenizer, word: str, before: str) -> list[int]:
    """The token ids of ``word`` where it follows the text ``before``:
    ``ids(before + word)`` past their common start with ``ids(before)``
    (trailing spaces of ``before`` left out of the latter), tokenized
    without special tokens."""
    full = tokenizer(before + word, add_special_tokens=False)["input_ids"]
    head = tokenizer(before.rstrip(" "), add_special_tokens=False)["input_ids"] if before.rstrip(" ") else []
    return list(full[_common_prefix(full, head):])


class PromptClassifier(EncodedForward):
    """A causal or masked language model behind a prompt, as a classifier.

    Parameters
    ----------
    model : str or Path
        Folder saved with ``save_pretrained``, or a hub id.
    prompt : str
        Holds ``{text}`` (where each text goes) and, for a masked LM, one
        ``{mask}`` (the answer). Other braces are literal.
    verbalizer : mapping
        Class name -> answer word(s): a word, a list of words, or a
        comma-separated string. Class order is the column order.
    scoring : "first-token" or "word"
        See the module doc.
    kind : "auto", "causal" or "masked"
        ``"auto"``: from the config's architectures (``...ForCausalLM``,
        ``...LMHeadModel``, ``...ForMaskedLM``), else from the prompt
        (``{mask}``: masked).
    answer_prefix : str, optional
        Causal LM: the text between the prompt and the answer word (default
        ``" "``, or ``""`` after a prompt that ends with a newline).
    device, dtype, batch_size, max_length, trust_remote_code, progress, revision
        As :class:`~bias_suite.models.hf.HFClassifier`: ``batch_size`` is
        sequences per forward pass, ``dtype`` ``float32``, ``bf16``/``fp16``
        (GPUs) or ``int8`` (torch dynamic quantization of the linear
        layers, CPU); the ONNX paths are not supported for language models.
        ``max_length=None``: the model's limit; a longer prompt is an error
        (cutting it would cut the answer position or the instruction).

    Attributes
    ----------
    class_names : list of str
        The verbalizer's classes.
    lm_kind : "causal" or "masked"
    answer_ids : dict
        Class -> the token ids of each answer word (see the module doc).
    """

    def __init__(self, model: str | os.PathLike, prompt: str, verbalizer, *, scoring: str = "first-token",
                 kind: str = "auto", answer_prefix: str | None = None, device: str = "auto", batch_size: int = 32,
                 max_length: int | None = None, trust_remote_code: bool = False, progress: bool = True,
                 revision: str | None = None, dtype: Any = None, name: str | None = None):
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ModelError(f"batch_size must be a positive integer, got {batch_size!r}")
        if max_length is not None and (not isinstance(max_length, int) or max_length < 2):
            raise ModelError(f"max_length must be an integer >= 2 or None, got {max_length!r}")
        if scoring not in SCORINGS:
            raise ModelError(f"unknown scoring {scoring!r}; use one of {', '.join(SCORINGS)}")
        if kind not in LM_KINDS:
            raise ModelError(f"unknown language-model kind {kind!r}; use one of {', '.join(LM_KINDS)}")
        check_prompt(prompt)
        self.verbalizer = check_verbalizer(verbalizer)
        try:
            import torch
            import transformers  # noqa: F401 (checked here, used by config_and_tokenizer)
        except ImportError as e:  # pragma: no cover - dependency missing
            raise ModelError(f"PromptClassifier needs torch and transformers ({e}); install them") from None
        from .locate import locate_model

        self.model_id, self.is_local = locate_model(model, kind="classifier", progress=progress)
        self.name = name or str(model)
        self.prompt, self.scoring, self.revision = prompt, scoring, revision
        self.batch_size, self.progress = batch_size, bool(progress)
        self.trust_remote_code = bool(trust_remote_code)
        self._torch_dtype, runtime, self.device = resolve_dtype_device(dtype, device)
        if runtime in ONNX_MODES:
            raise ModelError(f"dtype {runtime!r} (ONNX Runtime) is not supported for language models behind a "
                             "prompt; use float32, bf16 or fp16 (GPU) or int8 (CPU)")
        self.quantized = runtime == INT8
        self.dtype = runtime or (None if self._torch_dtype is None else str(self._torch_dtype).replace("torch.", ""))
        kw: dict[str, Any] = {"trust_remote_code": self.trust_remote_code}
        if revision is not None:
            kw["revision"] = revision
        self._load_kw = kw
        self.config, self.tokenizer = config_and_tokenizer(self.model_id, kw, Path(self.model_id) if self.is_local
                                                           else None, self.progress, "language model")
        self.lm_kind = self._lm_kind(kind, prompt)
        check_prompt(prompt, masked=self.lm_kind == "masked")
        self._setup_prompt(answer_prefix)
        self._setup_answers()
        limits = [getattr(self.tokenizer, "model_max_length", None),
                  getattr(self.config, "max_position_embeddings", None), getattr(self.config, "n_positions", None)]
        limits = [x for x in limits if isinstance(x, int) and 0 < x < 1_000_000]
        self.max_length = max_length if max_length is not None else (min(limits) if limits else 1024)
        self._model = None
        self._gather = None  # the answer-position gather on the output layer, once checked
        self._fingerprint: dict | None = None
        self._torch = torch

    # ------------------------------------------------------------- set-up
    def _lm_kind(self, kind: str, prompt: str) -> str:
        if kind != "auto":
            return kind
        archs = list(getattr(self.config, "architectures", None) or [])
        if any(a.endswith("ForMaskedLM") for a in archs):
            return "masked"
        if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in archs):
            return "causal"
        if any(a.endswith("ForPreTraining") for a in archs) and "{mask}" in prompt:
            return "masked"
        if archs:  # e.g. a sequence classifier: its head is no language-model head
            raise ModelError(f"model {self.model_id!r} is a {archs[0]}, not a causal or masked language model; "
                             "run it without a prompt (or pass kind='causal' or kind='masked' if it is one)")
        from transformers.models.auto.modeling_auto import (MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
                                                            MODEL_FOR_MASKED_LM_MAPPING_NAMES)

        mtype = getattr(self.config, "model_type", None)
        masked, causal = mtype in MODEL_FOR_MASKED_LM_MAPPING_NAMES, mtype in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
        if masked and (not causal or "{mask}" in prompt):
            return "masked"
        if causal:
            return "causal"
        raise ModelError(f"model {self.model_id!r} ({mtype}, {archs or 'no architectures'}) is neither a causal nor "
                         "a masked language model; pass kind='causal' or kind='masked' if it is one")

    def _setup_prompt(self, answer_prefix: str | None) -> None:
        """The model-input template and the literal text before the answer."""
        tok = self.tokenizer
        if self.lm_kind == "masked":
            if answer_prefix is not None:
                raise ModelError("answer_prefix applies to causal language models; a masked LM's answer is "
                                 "where {mask} is in the prompt")
            if tok.mask_token is None or tok.mask_token_id is None:
                raise ModelError(f"the tokenizer of {self.model_id!r} has no mask token; a masked language model "
                                 "needs one")
            self.mask_id = int(tok.mask_token_id)
            self._template = self.prompt
            before = self.prompt[:self.prompt.index("{mask}")]
            self._before = PLACEHOLDER.split(before)[-1] if PLACEHOLDER.search(before) else before
            self.answer_prefix = None
            return
        self.mask_id = None
        template = self.prompt.rstrip(" \t")
        if answer_prefix is None:
            answer_prefix = "" if template.endswith(("\n", "\r")) else " "
        self.answer_prefix = answer_prefix
        self._template = template
        last = list(PLACEHOLDER.finditer(template))[-1]
        self._before = template[last.end():] + answer_prefix
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        self._pad_id = int(pad) if pad is not None else 0

    def _setup_answers(self) -> None:
        """Answer token ids per word, and the first-token columns per class."""
        tok = self.tokenizer
        unk = tok.unk_token_id
        self.answer_ids: dict[str, list[list[int]]] = {}
        first_owner: dict[int, tuple[str, str]] = {}
        seq_owner: dict[tuple, tuple[str, str]] = {}
        firsts: list[int] = []                         # distinct first tokens, in order
        words: list[tuple[int, list[int]]] = []        # (class index, tokens) of the distinct words
        for c, (cls, ws) in enumerate(self.verbalizer.items()):
            self.answer_ids[cls] = []
            for w in ws:
                ids = answer_tokens(tok, w, self._before)
                if not ids or (unk is not None and unk in ids):
                    raise ModelError(f"the tokenizer of {self.model_id!r} cannot encode answer word {w!r} (class "
                                     f"{cls!r}): it gives {tok.convert_ids_to_tokens(ids) or 'no tokens'}")
                self.answer_ids[cls].append(ids)
                key = tuple(ids) if self.scoring == "word" else (ids[0],)
                other = seq_owner.get(key) if self.scoring == "word" else first_owner.get(ids[0])
                if other is not None and other[0] != cls:
                    what = "the same tokens" if self.scoring == "word" else \
                        f"their first sub-token {tok.convert_ids_to_tokens(ids[:1])[0]!r}"
                    hint = "" if self.scoring == "word" else " (or use scoring='word')"
                    raise ModelError(f"answer words {other[1]!r} (class {other[0]!r}) and {w!r} (class {cls!r}) "
                                     f"share {what}; the classes cannot be told apart: choose other words{hint}")
                first_owner.setdefault(ids[0], (cls, w))
                if ids[0] not in firsts:
                    firsts.append(ids[0])
                if key not in seq_owner:
                    seq_owner[key] = (cls, w)
                    words.append((c, ids))
        self._firsts = np.asarray(firsts, dtype=np.int64)
        col = {t: i for i, t in enumerate(firsts)}
        if self.scoring == "first-token":  # one "word" per distinct first token of a class
            seen = set()
            words = [(c, ids[:1]) for c, ids in words if (c, ids[0]) not in seen and not seen.add((c, ids[0]))]
        self._word_class = np.asarray([c for c, _ in words], dtype=np.int64)
        self._word_first = np.asarray([col[ids[0]] for _, ids in words], dtype=np.int64)
        self._word_tokens = [ids for _, ids in words]
        self.class_names = list(self.verbalizer)
        # the extra sequences per text (scoring="word"): (word index, filled sub-tokens)
        multi = [(j, ids) for j, (_, ids) in enumerate(words) if len(ids) > 1]
        self._multi = np.asarray([j for j, _ in multi], dtype=np.int64)
        if self.lm_kind == "causal":
            self._extras = [(j, len(ids) - 1) for j, ids in multi]
        else:
            self._extras = [(j, k) for j, ids in multi for k in range(len(ids))]

    # -------------------------------------------------------------- loading
    @property
    def model(self):
        """The transformers model (loaded on first access)."""
        if self._model is None:
            from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

            auto = AutoModelForCausalLM if self.lm_kind == "causal" else AutoModelForMaskedLM
            kw = dict(self._load_kw, config=self.config)
            if self._torch_dtype is not None or self.quantized:
                kw["dtype"] = self._torch_dtype or self._torch.float32
            try:
                with loading_bars(self.progress):
                    m = auto.from_pretrained(self.model_id, **kw)
            except Exception as e:
                raise ModelError(f"could not load {self.lm_kind} language model {self.model_id!r}: "
                                 f"{type(e).__name__}: {e}") from e
            m = ready_for_inference(m, self._torch_dtype, self.device, self.quantized)
            self._model = m
            self._gather = _AnswerGather.install(m, self)
        return self._model

    @property
    def loaded(self) -> bool:
        """Whether the weights have been loaded."""
        return self._model is not None

    # -------------------------------------------------------------- encoding
    def encode(self, texts: Sequence[str]) -> dict:
        """Fill the prompt with the distinct texts and tokenize them once.

        Returns a dict with the token ids of each distinct text's prompt
        (``ids``), the answer position (``answer``: the prompt's last token
        for a causal LM, the mask for a masked LM), the batch ``order``
        (longest first) and ``inverse`` (input -> distinct text).
        """
        unique, inverse = distinct_texts(texts)
        if not unique:
            return {"n": 0, "inverse": inverse}
        mask = self.tokenizer.mask_token if self.lm_kind == "masked" else ""
        filled = [fill_prompt(self._template, t, mask) for t in unique]
        ids = self.tokenizer(filled, add_special_tokens=self.lm_kind == "masked")["input_ids"]
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        longest = self.max_length - (max((n for _, n in self._extras), default=0) if self.lm_kind == "causal" else 0)
        over = np.flatnonzero(lengths > longest)
        if len(over):
            i = int(over[0])
            raise ModelError(f"the prompt with text {unique[i]!r} has {int(lengths[i])} tokens, more than the "
                             f"{longest} that fit (max_length {self.max_length}); shorten the prompt or the texts")
        if self.lm_kind == "masked":
            answer = np.empty(len(ids), dtype=np.int64)
            for i, x in enumerate(ids):
                where = [p for p, t in enumerate(x) if t == self.mask_id]
                if len(where) != 1:
                    raise ModelError(f"the prompt with text {unique[i]!r} holds the mask token "
                                     f"{self.tokenizer.mask_token!r} {len(where)} times; the text itself must not "
                                     "contain it")
                answer[i] = where[0]
        else:
            answer = lengths - 1
        return {"n": len(unique), "inverse": inverse, "ids": ids, "lengths": lengths, "answer": answer,
                "order": np.argsort(-lengths, kind="stable")}

    def _rows(self, enc: dict, idx: np.ndarray):
        """The sequences of the distinct texts ``idx``: token lists, the
        positions to read per sequence, and the (sequence, slot, token,
        word) log-probabilities to gather for the extra sequences."""
        seqs, reads, pairs = [], [], []
        for u in idx:
            base, a = enc["ids"][u], int(enc["answer"][u])
            seqs.append(base)
            reads.append([a])
            for j, k in self._extras:
                w = self._word_tokens[j]
                r = len(seqs)
                if self.lm_kind == "causal":          # the prompt and the word's first k sub-tokens
                    seqs.append(list(base) + w[:k])
                    reads.append([a + i for i in range(k + 1)])
                    pairs += [(r, i, w[i], j) for i in range(1, k + 1)]
                else:                                 # k sub-tokens filled, the rest masked
                    m = len(w)
                    seqs.append(list(base[:a]) + w[:k] + [self.mask_id] * (m - k) + list(base[a + 1:]))
                    reads.append([a + k])
                    pairs.append((r, 0, w[k], j))
        return seqs, reads, pairs

    def _batch(self, seqs, reads) -> tuple[dict, Any]:
        """Padded tensors (left padding for a causal LM) and the read positions."""
        torch = self._torch
        lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
        width = int(lengths.max())
        left = self.lm_kind == "causal"
        pad = self._pad_id if left else (self.tokenizer.pad_token_id or 0)
        ids = np.full((len(seqs), width), pad, dtype=np.int64)
        att = np.zeros((len(seqs), width), dtype=np.int64)
        shift = width - lengths if left else np.zeros_like(lengths)
        for r, s in enumerate(seqs):
            ids[r, shift[r]:shift[r] + len(s)] = s
            att[r, shift[r]:shift[r] + len(s)] = 1
        k = max(len(x) for x in reads)
        pos = np.zeros((len(seqs), k), dtype=np.int64)
        for r, x in enumerate(reads):
            pos[r, :len(x)] = np.asarray(x) + shift[r]
            pos[r, len(x):] = pos[r, len(x) - 1]
        arrays = {"input_ids": ids, "attention_mask": att}
        if "token_type_ids" in getattr(self.tokenizer, "model_input_names", ()) and self._accepts("token_type_ids"):
            arrays["token_type_ids"] = np.zeros_like(ids)  # one segment, as the tokenizer gives it
        if left and self._accepts("position_ids"):
            arrays["position_ids"] = np.maximum(np.cumsum(att, axis=1) - 1, 0)
        out = {}
        for key, a in arrays.items():
            t = torch.from_numpy(np.ascontiguousarray(a))
            out[key] = t.pin_memory().to(self.device, non_blocking=True) if self.device.startswith("cuda") \
                else t.to(self.device)
        return out, torch.from_numpy(pos).to(self.device)

    def _accepts(self, name: str) -> bool:
        import inspect

        cache = self.__dict__.setdefault("_forward_params", {})
        if name not in cache:
            try:
                cache[name] = name in inspect.signature(self.model.forward).parameters
            except (TypeError, ValueError):  # pragma: no cover - exotic forward
                cache[name] = False
        return cache[name]

    def log_probs(self, batch: dict, pos) -> Any:
        """Log-probabilities over the vocabulary (float64, ``(rows, k, V)``)
        at the positions ``pos`` (``(rows, k)``) of a padded batch."""
        torch = self._torch
        model = self.model
        with torch.inference_mode():
            if self._gather is not None:
                with self._gather.at(pos):
                    logits = model(**batch).logits
            else:
                logits = model(**batch).logits
                logits = torch.gather(logits, 1, pos.unsqueeze(-1).expand(-1, -1, logits.shape[-1]))
            return torch.log_softmax(logits.double(), dim=-1)

    # ------------------------------------------------------------ predicting
    def iter_forward(self, enc: dict):
        """Run the batches of :meth:`encode` output one by one; yields
        ``(positions, probs)`` as :meth:`HFClassifier.iter_forward
        <bias_suite.models.hf.HFClassifier.iter_forward>` does."""
        from tqdm.auto import tqdm

        if not enc["n"]:
            return
        torch = self._torch
        per_text = 1 + len(self._extras)
        texts_per_batch = max(1, self.batch_size // per_text)
        members, bounds, counts = input_groups(enc["inverse"], enc["n"])
        firsts = torch.from_numpy(self._firsts).to(self.device)
        bar = tqdm(total=enc["n"], desc="Predicting", unit="text", disable=not self.progress, leave=False)
        try:
            for start in range(0, enc["n"], texts_per_batch):
                idx = enc["order"][start:start + texts_per_batch]
                seqs, reads, pairs = self._rows(enc, idx)
                batch, pos = self._batch(seqs, reads)
                lp = self.log_probs(batch, pos)
                base = torch.arange(0, len(seqs), per_text, device=lp.device)
                first = lp[base, 0][:, firsts].cpu().numpy()            # (texts, distinct first tokens)
                words = first[:, self._word_first]                      # (texts, words): first sub-token
                if pairs:
                    if self.lm_kind == "masked":  # multi-token words: every sub-token from their own masks
                        words[:, self._multi] = 0.0
                    p = np.asarray(pairs, dtype=np.int64)
                    got = lp[torch.from_numpy(p[:, 0]).to(lp.device), torch.from_numpy(p[:, 1]).to(lp.device),
                             torch.from_numpy(p[:, 2]).to(lp.device)].cpu().numpy()
                    np.add.at(words, (p[:, 0] // per_text, p[:, 3]), got)
                probs = self._class_probs(words)
                bar.update(len(idx))
                yield inputs_of(idx, members, bounds), np.repeat(probs, counts[idx], axis=0)
        finally:
            bar.close()

    def _class_probs(self, word_logp: np.ndarray) -> np.ndarray:
        """Class probabilities from the words' log-probabilities: per class
        the sum of its words' probabilities, normalised over the classes."""
        c = len(self.class_names)
        top = word_logp.max(axis=1, keepdims=True)
        p = np.exp(word_logp - top)                                 # scaled by exp(-top) per row
        scores = np.zeros((len(word_logp), c))
        np.add.at(scores.T, self._word_class, p.T)
        total = scores.sum(axis=1, keepdims=True)
        return scores / total

    # ------------------------------------------------------------ identity
    def fingerprint(self) -> dict:
        """What this classifier computes, for the prediction cache: the
        model (folder digest or hub revision), prompt, verbalizer and the
        answer token ids, scoring, LM kind, dtype, max length and library
        versions (not the device). Does not load the weights."""
        if self._fingerprint is None:
            fp = {"kind": "prompt-lm", "model": self.model_id, "revision": self.revision,
                  "commit_hash": getattr(self.config, "_commit_hash", None), "lm_kind": self.lm_kind,
                  "prompt": self.prompt, "answer_prefix": self.answer_prefix,
                  "verbalizer": [[c, list(w)] for c, w in self.verbalizer.items()],
                  "answer_ids": [[c, ids] for c, ids in self.answer_ids.items()], "scoring": self.scoring,
                  "class_names": list(self.class_names), "max_length": self.max_length,
                  "dtype": self.dtype or "checkpoint", "versions": library_versions()}
            if self.quantized:
                from .hf import quantization_info

                fp["quantization"] = quantization_info()
            if self.is_local:
                fp["weights_sha256"] = weights_digest(Path(self.model_id))
            self._fingerprint = fp
        return dict(self._fingerprint)

    def spec(self) -> dict:
        """How to rebuild this classifier in another process (Ray workers)."""
        return {"factory": "bias_suite.models.prompt:PromptClassifier",
                "kwargs": {"model": self.model_id, "prompt": self.prompt, "verbalizer": self.verbalizer,
                           "scoring": self.scoring, "kind": self.lm_kind,
                           "answer_prefix": self.answer_prefix, "batch_size": self.batch_size,
                           "max_length": self.max_length, "trust_remote_code": self.trust_remote_code,
                           "revision": self.revision, "dtype": self.dtype, "name": self.name}}

    def __repr__(self) -> str:
        return (f"PromptClassifier({self.model_id!r}, {self.lm_kind}, prompt={self.prompt!r}, "
                f"class_names={self.class_names}, device={self.device!r})")


class _AnswerGather:
    """A forward pre-hook on the model's output layer that applies it at
    the answer positions only: ``(rows, k, V)`` logits instead of
    ``(rows, length, V)``. Installed when it gives the whole layer's values
    on a check batch (the layers before the output layer work position by
    position in every transformers LM head); otherwise the whole logits are
    computed and gathered afterwards."""

    def __init__(self, head):
        self.head = head
        self.pos = None
        self.handle = head.register_forward_pre_hook(self._hook)

    def _hook(self, module, args):
        if self.pos is None or not args or getattr(args[0], "dim", lambda: 0)() != 3:
            return None
        import torch

        x = args[0]
        idx = self.pos.unsqueeze(-1).expand(-1, -1, x.shape[-1])
        return (torch.gather(x, 1, idx), *args[1:])

    def at(self, pos):
        import contextlib

        @contextlib.contextmanager
        def scope():
            self.pos = pos
            try:
                yield
            finally:
                self.pos = None

        return scope()

    @classmethod
    def install(cls, model, clf: PromptClassifier):
        import torch

        get = getattr(model, "get_output_embeddings", None)
        head = get() if callable(get) else None
        if not isinstance(head, torch.nn.Module):
            return None
        gather = cls(head)
        try:
            texts = ["a b c d e", "a"]
            enc = clf.encode(texts)
            seqs, reads, _ = clf._rows(enc, np.arange(enc["n"]))
            batch, pos = clf._batch(seqs, reads)
            with torch.inference_mode():
                whole = model(**batch).logits
                whole = torch.log_softmax(torch.gather(whole, 1, pos.unsqueeze(-1).expand(-1, -1, whole.shape[-1]))
                                          .double(), dim=-1)
                with gather.at(pos):
                    part = torch.log_softmax(model(**batch).logits.double(), dim=-1)
            if part.shape == whole.shape and bool((part - whole).abs().max() <= GATHER_CHECK_ATOL):
                return gather
            log.info("the output layer of %s does not work position by position; computing whole logits",
                     clf.model_id)
        except Exception as e:  # an architecture this check does not fit: whole logits
            log.info("answer-position gather not used for %s (%s: %s)", clf.model_id, type(e).__name__, e)
        gather.handle.remove()
        return None
