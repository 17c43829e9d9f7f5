"""Hugging Face sequence classifiers as :class:`~bias_suite.models.base.Predictor`.

torch and transformers are imported when a classifier is created, never when
``bias_suite`` is imported.
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from bias_suite.exceptions import ModelError
from bias_suite.models.base import check_texts

__all__ = ["HFClassifier", "resolve_device", "class_names_from_config"]

log = logging.getLogger(__name__)

_DTYPES = {"float32": "float32", "fp32": "float32", "float16": "float16",
           "fp16": "float16", "half": "float16", "bfloat16": "bfloat16",
           "bf16": "bfloat16"}


def resolve_device(device: str = "auto") -> str:
    """Turn ``"auto" | "cpu" | "cuda" | "cuda:N" | "mps"`` into a torch device string.

    Raises
    ------
    ModelError
        For an unknown spelling, or a GPU that is not available.
    """
    import torch

    d = str(device).strip().lower()
    if d == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if d == "cpu":
        return "cpu"
    m = re.fullmatch(r"cuda(?::(\d+))?", d)
    if m:
        if not torch.cuda.is_available():
            raise ModelError(f"device {device!r} requested but CUDA is not available")
        if m.group(1) is not None and int(m.group(1)) >= torch.cuda.device_count():
            raise ModelError(
                f"device {device!r} requested but only {torch.cuda.device_count()} "
                "CUDA device(s) are visible"
            )
        return d
    if d == "mps":
        if not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
            raise ModelError("device 'mps' requested but MPS is not available")
        return d
    raise ModelError(
        f"unknown device {device!r}; use 'auto', 'cpu', 'cuda' or 'cuda:N'"
    )


def class_names_from_config(config: Any, source: str = "model") -> list[str]:
    """Class names from ``config.id2label``, in id order.

    Raises
    ------
    ModelError
        If the ids are not exactly ``0..num_labels-1`` or names repeat.
    """
    id2label = getattr(config, "id2label", None) or {}
    try:
        pairs = sorted((int(k), str(v)) for k, v in id2label.items())
    except (TypeError, ValueError):
        raise ModelError(f"{source}: config.id2label has non-integer ids: {id2label}") from None
    ids = [k for k, _ in pairs]
    n = getattr(config, "num_labels", len(ids))
    if ids != list(range(len(ids))) or len(ids) != n:
        raise ModelError(
            f"{source}: config.id2label must map ids 0..{n - 1} to class names, "
            f"got {id2label}"
        )
    names = [v for _, v in pairs]
    if len(set(names)) != len(names):
        raise ModelError(f"{source}: config.id2label repeats class names: {names}")
    return names


class HFClassifier:
    """A ``transformers`` sequence-classification model with a predict API.

    Parameters
    ----------
    model : str or Path
        Hub id (``"org/name"``) or local folder saved with ``save_pretrained``.
    device : str
        ``"auto"`` (CUDA if available, else CPU), ``"cpu"``, ``"cuda"`` or
        ``"cuda:N"``.
    batch_size : int
        Texts per forward pass.
    max_length : int or None
        Longer inputs are truncated to this many tokens. ``None``: the
        tokenizer's / model's own limit.
    trust_remote_code : bool
        Passed to ``from_pretrained``; stays ``False`` unless set explicitly.
    progress : bool
        Show a tqdm progress bar while predicting.
    revision : str, optional
        Hub revision (branch, tag or commit).
    dtype : str or torch.dtype, optional
        Weights dtype (``"float32"``, ``"float16"``, ``"bfloat16"``).
        ``None``: whatever ``from_pretrained`` picks by default.

    Attributes
    ----------
    class_names : list of str
        From ``config.id2label`` in id order.
    model, tokenizer
        The loaded transformers objects.
    device : str
        The torch device in use.

    Notes
    -----
    Probabilities are ``softmax(logits)`` in float64, also for models
    trained as multi-label (their columns then no longer mean independent
    probabilities). Identical texts are predicted once; texts are sorted by
    token length and padded to the longest in each batch, which changes
    results only by float rounding.
    """

    def __init__(self, model: str | os.PathLike, *, device: str = "auto",
                 batch_size: int = 64, max_length: int | None = 128,
                 trust_remote_code: bool = False, progress: bool = True,
                 revision: str | None = None, dtype: Any = None):
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ModelError(f"batch_size must be a positive integer, got {batch_size!r}")
        if max_length is not None and (not isinstance(max_length, int) or max_length < 1):
            raise ModelError(f"max_length must be a positive integer or None, got {max_length!r}")
        try:
            import torch
            from transformers import AutoModelForSequenceClassification, AutoTokenizer
        except ImportError as e:  # pragma: no cover - dependency missing
            raise ModelError(
                f"HFClassifier needs torch and transformers ({e}); install them"
            ) from None

        self.model_id = str(model)
        local = Path(model).expanduser()
        self.is_local = local.is_dir()
        if self.is_local:
            self.model_id = str(local.resolve())
        elif isinstance(model, Path) or (os.sep in str(model) and str(model).startswith((".", os.sep, "~"))):
            raise ModelError(f"model folder {str(model)!r} does not exist")
        self.revision = revision
        self.batch_size = batch_size
        self.progress = bool(progress)
        self.trust_remote_code = bool(trust_remote_code)
        self.device = resolve_device(device)
        self._torch_dtype = _resolve_dtype(dtype)
        self.dtype = None if self._torch_dtype is None else str(self._torch_dtype).replace("torch.", "")

        kw: dict[str, Any] = {"trust_remote_code": self.trust_remote_code}
        if revision is not None:
            kw["revision"] = revision
        try:
            with _loading_bars(self.progress):
                self.tokenizer = AutoTokenizer.from_pretrained(self.model_id, **kw)
                self.model = AutoModelForSequenceClassification.from_pretrained(self.model_id, **kw)
        except ModelError:
            raise
        except Exception as e:
            raise ModelError(
                f"could not load sequence-classification model {self.model_id!r}"
                f"{'' if revision is None else f' (revision {revision!r})'}: "
                f"{type(e).__name__}: {e}"
            ) from e
        if self.tokenizer.pad_token is None:
            # e.g. GPT-2 style classifiers: batches need a pad token; reuse EOS.
            if self.tokenizer.eos_token is None:
                raise ModelError(
                    f"tokenizer of {self.model_id!r} has neither a pad nor an EOS "
                    "token; batched prediction needs one"
                )
            self.tokenizer.pad_token = self.tokenizer.eos_token
            if getattr(self.model.config, "pad_token_id", None) is None:
                self.model.config.pad_token_id = self.tokenizer.pad_token_id
        if self._torch_dtype is not None:
            self.model.to(self._torch_dtype)
        self.model.to(self.device)
        self.model.eval()
        self.class_names = class_names_from_config(self.model.config, self.model_id)

        if max_length is None:
            limits = [getattr(self.tokenizer, "model_max_length", None),
                      getattr(self.model.config, "max_position_embeddings", None)]
            limits = [x for x in limits if isinstance(x, int) and 0 < x < 1_000_000]
            max_length = min(limits) if limits else 512
        self.max_length = max_length
        self._fingerprint: dict | None = None
        self._torch = torch

    # ------------------------------------------------------------------ predict
    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """Class probabilities for ``texts``.

        Parameters
        ----------
        texts : sequence of str

        Returns
        -------
        numpy.ndarray
            ``float64`` array of shape ``(len(texts), len(class_names))``,
            rows in input order, each summing to 1.
        """
        from tqdm.auto import tqdm

        torch = self._torch
        texts = check_texts(texts)
        c = len(self.class_names)
        if not texts:
            return np.zeros((0, c), dtype=np.float64)

        # Identical texts are predicted once and scattered back.
        index: dict[str, int] = {}
        inverse = np.empty(len(texts), dtype=np.int64)
        for i, t in enumerate(texts):
            inverse[i] = index.setdefault(t, len(index))
        unique = list(index)

        # Token lengths (after truncation) to sort by; longest first so that
        # memory problems surface on the first batch.
        enc = self.tokenizer(unique, truncation=True, max_length=self.max_length)
        lengths = np.fromiter((len(x) for x in enc["input_ids"]), dtype=np.int64,
                              count=len(unique))
        order = np.argsort(-lengths, kind="stable")

        out = np.empty((len(unique), c), dtype=np.float64)
        bar = tqdm(total=len(unique), desc="Predicting", unit="text",
                   disable=not self.progress, leave=False)
        try:
            with torch.inference_mode():
                for start in range(0, len(unique), self.batch_size):
                    idx = order[start:start + self.batch_size]
                    batch = self.tokenizer(
                        [unique[i] for i in idx], padding=True, truncation=True,
                        max_length=self.max_length, return_tensors="pt",
                    )
                    batch = {k: v.to(self.device) for k, v in batch.items()}
                    logits = self.model(**batch).logits
                    if logits.ndim != 2 or logits.shape[1] != c:
                        raise ModelError(
                            f"model {self.model_id!r} returned logits of shape "
                            f"{tuple(logits.shape)}; expected (batch, {c})"
                        )
                    probs = torch.softmax(logits.double(), dim=-1)
                    out[idx] = probs.cpu().numpy()
                    bar.update(len(idx))
        finally:
            bar.close()
        return out[inverse]

    __call__ = predict_proba

    # -------------------------------------------------------------- fingerprint
    def fingerprint(self) -> dict:
        """Identify this predictor's configuration, for result caches.

        Returns
        -------
        dict
            ``model`` (hub id or absolute folder), ``revision``,
            ``commit_hash`` (hub snapshot, if known), ``weights_sha256``
            (local folders: digest over the weight files), ``class_names``,
            ``max_length``, ``dtype``.
        """
        if self._fingerprint is None:
            fp = {
                "kind": "hf",
                "model": self.model_id,
                "revision": self.revision,
                "commit_hash": getattr(self.model.config, "_commit_hash", None),
                "class_names": list(self.class_names),
                "max_length": self.max_length,
                "dtype": self.dtype or str(next(self.model.parameters()).dtype).replace("torch.", ""),
            }
            if self.is_local:
                fp["weights_sha256"] = _weights_digest(Path(self.model_id))
            self._fingerprint = fp
        return dict(self._fingerprint)

    def __repr__(self) -> str:
        return (f"HFClassifier({self.model_id!r}, device={self.device!r}, "
                f"class_names={self.class_names})")


@contextlib.contextmanager
def _loading_bars(enabled: bool):
    """Turn transformers' weight-loading progress bars off while loading
    when ``enabled`` is False (restoring the previous state)."""
    if enabled:
        yield
        return
    from transformers.utils import logging as tlog

    was_on = tlog.is_progress_bar_enabled()
    tlog.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            tlog.enable_progress_bar()


def _resolve_dtype(dtype: Any):
    if dtype is None:
        return None
    import torch

    if isinstance(dtype, torch.dtype):
        return dtype
    key = str(dtype).lower().replace("torch.", "")
    if key not in _DTYPES:
        raise ModelError(f"unknown dtype {dtype!r}; use float32, float16 or bfloat16")
    return getattr(torch, _DTYPES[key])


def _weights_digest(folder: Path) -> str:
    """SHA-256 over the names and contents of the weight and config files."""
    h = hashlib.sha256()
    files = sorted(p for p in folder.iterdir() if p.is_file() and (
        p.suffix in (".safetensors", ".bin", ".pt") or p.name == "config.json"))
    for p in files:
        h.update(p.name.encode() + b"\0")
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()
