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
from bias_suite.models.checks import check_texts
from bias_suite.models.first_token import first_token_last_layer, reads_first_token
from bias_suite.models.onnx_runtime import (ONNX, ONNX_INT8, ONNX_INT8_UNCHECKED, ONNX_MODES, OrtFunction, onnx_info,
                                            softmax_margin)

__all__ = ["HFClassifier", "EncodedForward", "config_and_tokenizer", "ready_for_inference", "resolve_device", "resolve_dtype_device", "quantize_int8", "class_names_from_config",
           "runtime_info", "distinct_texts", "input_groups", "inputs_of", "loading_bars", "weights_digest",
           "weight_files", "library_versions"]

log = logging.getLogger(__name__)

_DTYPES = {"float32": "float32", "fp32": "float32", "float16": "float16",
           "fp16": "float16", "half": "float16", "bfloat16": "bfloat16",
           "bf16": "bfloat16"}
#: Spellings of dynamic int8 quantization (CPU): fp32 weights loaded, then
#: every ``nn.Linear`` replaced by its dynamically quantized int8 version.
INT8 = "int8"
_INT8_ALIASES = {"int8", "qint8", "int8-dynamic"}
#: Spellings of the ONNX Runtime paths (:mod:`bias_suite.models.onnx_runtime`):
#: float32, int8 weights with a float32 re-check of uncertain rows, int8 alone.
_ONNX_ALIASES = {"onnx": ONNX, "onnx-fp32": ONNX, "onnx-float32": ONNX, "ort": ONNX,
                 "onnx-int8": ONNX_INT8, "ort-int8": ONNX_INT8,
                 "onnx-int8-unchecked": ONNX_INT8_UNCHECKED, "ort-int8-unchecked": ONNX_INT8_UNCHECKED}
#: Every ``dtype`` that is a CPU inference path rather than a torch dtype.
CPU_MODES = (INT8, *ONNX_MODES)


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


def config_and_tokenizer(model_id: str, kw: dict, local: Path | None, progress: bool, what: str):
    """(config, tokenizer) of a model folder or hub id; a local folder must
    hold weight files. Any failure is one :class:`ModelError` naming
    ``what`` and the model (and the revision in ``kw``)."""
    from transformers import AutoConfig, AutoTokenizer

    try:
        config = AutoConfig.from_pretrained(model_id, **kw)
        if local is not None and not weight_files(local):
            raise ModelError(f"model folder {model_id} has no weight files (*.safetensors or *.bin)")
        with loading_bars(progress):
            tokenizer = AutoTokenizer.from_pretrained(model_id, **kw)
    except ModelError:
        raise
    except Exception as e:
        rev = kw.get("revision")
        raise ModelError(f"could not load {what} {model_id!r}{'' if rev is None else f' (revision {rev!r})'}: "
                         f"{type(e).__name__}: {e}") from e
    return config, tokenizer


def ready_for_inference(model, torch_dtype, device: str, quantized: bool):
    """A loaded model in ``torch_dtype`` (None: as loaded) on ``device``, in
    eval mode, quantized to dynamic int8 when ``quantized``."""
    if torch_dtype is not None:
        model.to(torch_dtype)
    model.to(device)
    model.eval()
    return quantize_int8(model) if quantized else model


class EncodedForward:
    """What a classifier with ``encode(texts)`` and ``iter_forward(enc)``
    (yielding ``(positions, probs)`` batch by batch) offers: probabilities
    for encoded input and for texts, batch by batch or at once."""

    def forward_encoded(self, enc: dict) -> np.ndarray:
        """Probabilities for the output of :meth:`encode`, rows in input order."""
        out = np.empty((len(enc["inverse"]), len(self.class_names)), dtype=np.float64)
        for positions, probs in self.iter_forward(enc):
            out[positions] = probs
        return out

    def iter_predict_proba(self, texts: Sequence[str]):
        """:meth:`predict_proba` batch by batch: yields ``(positions, probs)``
        (the prediction runner commits each batch to the cache as it comes)."""
        return self.iter_forward(self.encode(texts))

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """Class probabilities for ``texts``: a ``float64`` array of shape
        ``(len(texts), len(class_names))``, rows in input order, each
        summing to 1."""
        return self.forward_encoded(self.encode(texts))

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        return self.predict_proba(texts)


class HFClassifier(EncodedForward):
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
        Weights dtype (``"float32"``, ``"float16"``/``"fp16"``,
        ``"bfloat16"``/``"bf16"``; fp16 is meant for GPUs, bf16 for GPUs and
        CPUs with native bf16 arithmetic), or a CPU inference path:
        ``"onnx"`` (the float32 model exported to ONNX and run by ONNX
        Runtime: faster on the CPU, same probabilities up to float rounding),
        ``"onnx-int8"`` (int8 weights, with uncertain predictions recomputed
        in float32), ``"onnx-int8-unchecked"`` (int8 alone) or ``"int8"``
        (torch dynamic int8 quantization of every linear layer). bf16 and
        the int8 paths move the probabilities (docs/scale.md).
        ``None``: what ``from_pretrained`` picks (the checkpoint's own dtype).
    prefetch : bool or "auto"
        Pad and copy the next batch to the device in a background thread
        while the current one runs (pinned host memory, non-blocking copies).
        ``"auto"``: on for CUDA, off for CPU, where both would compete for
        the same cores.

    Attributes
    ----------
    class_names : list of str
        From ``config.id2label`` in id order.
    config, tokenizer
        Loaded when the classifier is created.
    model
        Loaded on first use (a run whose predictions are all in the
        prediction cache never loads the weights).
    device : str
        The torch device in use.

    Notes
    -----
    Probabilities are ``softmax(logits)`` in float64, also for models
    trained as multi-label (their columns then no longer mean independent
    probabilities). Identical texts are predicted once; every text is
    tokenized once, texts are sorted by token length (longest first) and each
    batch is padded to its longest text, which changes results only by float
    rounding.
    """

    def __init__(self, model: str | os.PathLike, *, device: str = "auto",
                 batch_size: int = 64, max_length: int | None = 128,
                 trust_remote_code: bool = False, progress: bool = True,
                 revision: str | None = None, dtype: Any = None, prefetch: Any = "auto"):
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ModelError(f"batch_size must be a positive integer, got {batch_size!r}")
        if max_length is not None and (not isinstance(max_length, int) or max_length < 1):
            raise ModelError(f"max_length must be a positive integer or None, got {max_length!r}")
        if prefetch not in (True, False, "auto"):
            raise ModelError(f"prefetch must be True, False or 'auto', got {prefetch!r}")
        try:
            import torch
            import transformers  # noqa: F401 (checked here, used by config_and_tokenizer)
        except ImportError as e:  # pragma: no cover - dependency missing
            raise ModelError(
                f"HFClassifier needs torch and transformers ({e}); install them"
            ) from None

        from .locate import locate_model

        self.model_id, self.is_local = locate_model(model, kind="classifier", progress=progress)
        local = Path(self.model_id)
        self.revision = revision
        self.batch_size = batch_size
        self.progress = bool(progress)
        self.trust_remote_code = bool(trust_remote_code)
        self._torch_dtype, self.runtime, self.device = resolve_dtype_device(dtype, device)
        self.quantized = self.runtime == INT8
        self.dtype = self.runtime or (
            None if self._torch_dtype is None else str(self._torch_dtype).replace("torch.", ""))
        self.prefetch = self.device.startswith("cuda") if prefetch == "auto" else bool(prefetch)
        self._prefetch_arg = prefetch

        kw: dict[str, Any] = {"trust_remote_code": self.trust_remote_code}
        if revision is not None:
            kw["revision"] = revision
        self._load_kw = kw
        self.config, self.tokenizer = config_and_tokenizer(self.model_id, kw, local if self.is_local else None,
                                                           self.progress, "sequence-classification model")
        if self.tokenizer.pad_token is None:
            # e.g. GPT-2 style classifiers: batches need a pad token; reuse EOS.
            if self.tokenizer.eos_token is None:
                raise ModelError(
                    f"tokenizer of {self.model_id!r} has neither a pad nor an EOS "
                    "token; batched prediction needs one"
                )
            self.tokenizer.pad_token = self.tokenizer.eos_token
            if getattr(self.config, "pad_token_id", None) is None:
                self.config.pad_token_id = self.tokenizer.pad_token_id
        self.class_names = class_names_from_config(self.config, self.model_id)

        if max_length is None:
            limits = [getattr(self.tokenizer, "model_max_length", None),
                      getattr(self.config, "max_position_embeddings", None)]
            limits = [x for x in limits if isinstance(x, int) and 0 < x < 1_000_000]
            max_length = min(limits) if limits else 512
        self.max_length = max_length
        self._model = None
        self._fingerprint: dict | None = None
        self._torch = torch

    # -------------------------------------------------------------- loading
    @property
    def model(self):
        """The transformers model (loaded on first access)."""
        if self._model is None:
            from transformers import AutoModelForSequenceClassification

            kw = dict(self._load_kw, config=self.config)
            if self._torch_dtype is not None or self.runtime:
                kw["dtype"] = self._torch_dtype or torch_float32()
            try:
                with loading_bars(self.progress):
                    m = AutoModelForSequenceClassification.from_pretrained(self.model_id, **kw)
            except Exception as e:
                raise ModelError(
                    f"could not load sequence-classification model {self.model_id!r}"
                    f"{'' if self.revision is None else f' (revision {self.revision!r})'}: "
                    f"{type(e).__name__}: {e}"
                ) from e
            m = ready_for_inference(m, self._torch_dtype, self.device, self.quantized)
            if self.runtime in ONNX_MODES and not self.quantized:
                m = OrtSequenceClassifier(m, self.tokenizer, self.runtime)
            self._model = m
        return self._model

    @property
    def loaded(self) -> bool:
        """Whether the weights have been loaded."""
        return self._model is not None

    # ------------------------------------------------------------------ predict
    def encode(self, texts: Sequence[str]) -> dict:
        """Tokenize ``texts`` once (no padding) and plan the batches.

        Returns a dict with the distinct texts' token ids as one flat array
        (``ids``, ``type_ids`` or None), their ``offsets`` and ``lengths``,
        the batch ``order`` (longest first) and ``inverse`` (input -> distinct
        text). :meth:`forward_encoded` turns it into probabilities.
        """
        unique, inverse = distinct_texts(texts)
        if not unique:
            return {"n": 0, "inverse": inverse}
        enc = self.tokenizer(unique, truncation=True, max_length=self.max_length)
        lengths = np.fromiter((len(x) for x in enc["input_ids"]), dtype=np.int64, count=len(unique))
        offsets = np.zeros(len(unique) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        ids = np.fromiter((t for x in enc["input_ids"] for t in x), dtype=np.int64, count=int(offsets[-1]))
        type_ids = None
        if "token_type_ids" in enc:
            type_ids = np.fromiter((t for x in enc["token_type_ids"] for t in x), dtype=np.int64,
                                   count=int(offsets[-1]))
        return {"n": len(unique), "inverse": inverse, "ids": ids, "type_ids": type_ids, "offsets": offsets,
                "lengths": lengths, "order": np.argsort(-lengths, kind="stable")}

    def _batch(self, enc: dict, idx: np.ndarray) -> dict:
        """Padded tensors for the distinct texts ``idx`` (vectorized gather)."""
        torch = self._torch
        lengths = enc["lengths"][idx]
        width = int(lengths.max())
        col = np.arange(width)
        if getattr(self.tokenizer, "padding_side", "right") == "left":
            shift = width - lengths
            mask = col[None, :] >= shift[:, None]
            pos = enc["offsets"][idx][:, None] + col[None, :] - shift[:, None]
        else:
            mask = col[None, :] < lengths[:, None]
            pos = enc["offsets"][idx][:, None] + col[None, :]
        pos = np.where(mask, pos, 0)
        pad = self.tokenizer.pad_token_id
        arrays = {"input_ids": np.where(mask, enc["ids"][pos], pad if pad is not None else 0),
                  "attention_mask": mask.astype(np.int64)}
        if enc["type_ids"] is not None:
            arrays["token_type_ids"] = np.where(mask, enc["type_ids"][pos],
                                                getattr(self.tokenizer, "pad_token_type_id", 0) or 0)
        out = {}
        for k, a in arrays.items():
            t = torch.from_numpy(np.ascontiguousarray(a))
            if self.device.startswith("cuda"):
                t = t.pin_memory().to(self.device, non_blocking=True)
            elif self.device != "cpu":
                t = t.to(self.device)
            out[k] = t
        return out

    def iter_forward(self, enc: dict):
        """Run the batches of :meth:`encode` output one by one.

        Yields
        ------
        positions : int array
            Which inputs (indices into the texts given to :meth:`encode`,
            duplicates included) this batch answers.
        probs : ndarray ``(len(positions), C)``, float64.

        Consumers that store results as they come (the prediction cache)
        keep every finished batch when a run is interrupted.
        """
        from tqdm.auto import tqdm

        torch = self._torch
        c = len(self.class_names)
        if not enc["n"]:
            return
        model = self.model
        order = enc["order"]
        inverse = enc["inverse"]
        members, bounds, counts = input_groups(inverse, enc["n"])
        starts = range(0, enc["n"], self.batch_size)
        bar = tqdm(total=enc["n"], desc="Predicting", unit="text", disable=not self.progress, leave=False)
        pool = None
        try:
            if self.prefetch and len(starts) > 1:
                from concurrent.futures import ThreadPoolExecutor

                pool = ThreadPoolExecutor(1, thread_name_prefix="bias_suite-prefetch")
            nxt = None
            for k, start in enumerate(starts):
                idx = order[start:start + self.batch_size]
                batch = nxt.result() if nxt is not None else self._batch(enc, idx)
                if pool is not None and k + 1 < len(starts):
                    s2 = starts[k + 1]
                    nxt = pool.submit(self._batch, enc, order[s2:s2 + self.batch_size])
                else:
                    nxt = None
                with torch.inference_mode():
                    logits = model(**batch).logits
                    if logits.ndim != 2 or logits.shape[1] != c:
                        raise ModelError(
                            f"model {self.model_id!r} returned logits of shape "
                            f"{tuple(logits.shape)}; expected (batch, {c})"
                        )
                    probs = torch.softmax(logits.double(), dim=-1).cpu().numpy()
                bar.update(len(idx))
                yield inputs_of(idx, members, bounds), np.repeat(probs, counts[idx], axis=0)
        finally:
            bar.close()
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)


    # -------------------------------------------------------------- fingerprint
    def fingerprint(self) -> dict:
        """Identify what this predictor computes, for the prediction cache.

        Returns
        -------
        dict
            ``model`` (hub id or absolute folder), ``revision``,
            ``commit_hash`` (hub snapshot, if known), ``weights_sha256``
            (local folders: digest over the weight, config and tokenizer
            files), ``class_names``, ``max_length``, ``dtype`` (``auto:X``
            when left to the checkpoint), ``padding_side`` and the torch and
            transformers versions. The device is not part of it: CPU and GPU
            give the same predictions up to float rounding. Computing it does
            not load the weights.
        """
        if self._fingerprint is None:
            fp = {
                "kind": "hf",
                "model": self.model_id,
                "revision": self.revision,
                "commit_hash": getattr(self.config, "_commit_hash", None),
                "class_names": list(self.class_names),
                "max_length": self.max_length,
                "dtype": self.dtype or f"auto:{_config_dtype(self.config)}",
                **({"quantization": runtime_info(self.runtime, first_token=reads_first_token(self.config))}
                   if self.runtime else {}),
                "padding_side": getattr(self.tokenizer, "padding_side", "right"),
                "versions": library_versions(),
            }
            if self.is_local:
                fp["weights_sha256"] = weights_digest(Path(self.model_id))
            self._fingerprint = fp
        return dict(self._fingerprint)

    def spec(self) -> dict:
        """How to rebuild this classifier in another process (Ray workers):
        the folder or hub id must be reachable there too."""
        return {"factory": "bias_suite.models.hf:HFClassifier",
                "kwargs": {"model": self.model_id, "batch_size": self.batch_size, "max_length": self.max_length,
                           "trust_remote_code": self.trust_remote_code, "revision": self.revision,
                           "dtype": self.dtype, "prefetch": self._prefetch_arg}}

    def __repr__(self) -> str:
        return (f"HFClassifier({self.model_id!r}, device={self.device!r}, "
                f"class_names={self.class_names})")


def distinct_texts(texts: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """The distinct texts of ``texts`` (validated) in first-seen order, and
    ``inverse``: for each input, the index of its distinct text."""
    texts = check_texts(texts)
    index: dict[str, int] = {}
    inverse = np.fromiter((index.setdefault(t, len(index)) for t in texts), dtype=np.int64, count=len(texts))
    return list(index), inverse


def input_groups(inverse: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(members, bounds, counts)``: the inputs grouped by distinct text
    (distinct text ``u`` owns ``members[bounds[u]:bounds[u + 1]]``, ``counts[u]``
    of them), for :func:`inputs_of`."""
    members = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[members], np.arange(n + 1))
    return members, bounds, np.diff(bounds)


def inputs_of(idx: np.ndarray, members: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """The inputs (duplicates included) of the distinct texts ``idx``, text by text."""
    return np.concatenate([members[bounds[u]:bounds[u + 1]] for u in idx])


def torch_float32():
    import torch

    return torch.float32


def _config_dtype(config) -> str:
    d = getattr(config, "dtype", None) or getattr(config, "torch_dtype", None)
    return str(d).replace("torch.", "") if d is not None else "default"


def library_versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for dist in ("torch", "transformers", "tokenizers"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:  # pragma: no cover
            out[dist] = None
    return out


def weight_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in (".safetensors", ".bin", ".pt"))


@contextlib.contextmanager
def loading_bars(enabled: bool):
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
    key = str(dtype).lower().replace("torch.", "").replace("_", "-")
    if key in _INT8_ALIASES:
        return INT8
    if key in _ONNX_ALIASES:
        return _ONNX_ALIASES[key]
    if key not in _DTYPES:
        raise ModelError(f"unknown dtype {dtype!r}; use float32, float16, bfloat16, onnx, onnx-int8, "
                         "onnx-int8-unchecked or int8")
    return getattr(torch, _DTYPES[key])


def resolve_dtype_device(dtype: Any, device: str) -> tuple[Any, str | None, str]:
    """``(torch dtype or None, CPU path or None, torch device)`` of a
    predictor's ``dtype`` and ``device`` arguments. The CPU path is one of
    ``"int8"``, ``"onnx"``, ``"onnx-int8"`` (:data:`CPU_MODES`); these run on
    the CPU: ``"auto"`` becomes ``"cpu"`` and a GPU device is an error."""
    td = _resolve_dtype(dtype)
    if td not in CPU_MODES:
        return td, None, resolve_device(device)
    if str(device).strip().lower() not in ("auto", "cpu"):
        what = "dynamic quantization" if td == INT8 else "ONNX Runtime"
        raise ModelError(f"dtype {td} ({what}) runs on the CPU; got device {device!r}: "
                         "use device 'cpu' or another dtype")
    if td in ONNX_MODES:
        from bias_suite.models.onnx_runtime import require_onnxruntime

        require_onnxruntime()
    return None, td, "cpu"


def quantize_int8(module):
    """Dynamic int8 quantization of every ``torch.nn.Linear`` in ``module``
    (weights int8 per output channel, activations quantized per batch on the
    fly; ``torch.ao.quantization.quantize_dynamic``). CPU only; returns a new
    module in eval mode. Per-channel weights keep the default sentiment
    model's argmax agreement with float32 at 98% (per tensor: 95%)."""
    import warnings

    import torch
    from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

    # torch announces the removal of its quantized tensor types; the kernels work.
    warnings.filterwarnings("ignore", message=r".*quantiz.*deprecated", category=UserWarning)
    warnings.filterwarnings("ignore", message=r".*torch\.ao\.quantization.*", category=DeprecationWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        q = quantize_dynamic(module.float().eval(), {torch.nn.Linear: per_channel_dynamic_qconfig},
                             dtype=torch.qint8)
    return q.eval()


def runtime_info(mode: str, recheck: str | None = None, first_token: bool = False) -> dict:
    """What a CPU path (:data:`CPU_MODES`) computes, for prediction-cache
    fingerprints; ``first_token``: an ONNX graph whose last layer is computed
    for the first token only (:mod:`bias_suite.models.first_token`)."""
    if mode == INT8:
        return quantization_info()
    info = onnx_info(mode, recheck)
    if first_token:
        info["graph"] = "last layer for the first token only, where it gives the whole model's logits"
    return info


class OrtSequenceClassifier:
    """A sequence (or token, ``logits_dims=3``) classifier's forward pass run
    by ONNX Runtime: called like the torch model (``model(**batch).logits``),
    returns float32 logits. A sequence classifier that reads the first token
    is exported with its last layer computed for that token alone
    (:mod:`bias_suite.models.first_token`; ``first_token`` says whether)."""

    def __init__(self, model, tokenizer, mode: str, logits_dims: int = 2,
                 inputs: Sequence[str] = ("input_ids", "attention_mask", "token_type_ids")):
        import torch

        self.config = model.config
        example = dict(tokenizer(["a b c d", "a"], padding=True, return_tensors="pt"))
        names = [k for k in inputs if k in example]
        example = {k: example[k] for k in names}

        def forward(*args):
            return model(**dict(zip(names, args))).logits

        dynamic = {k: {0: "batch", 1: "sequence"} for k in names}
        dynamic["out"] = {0: "batch"} if logits_dims == 2 else {0: "batch", 1: "sequence"}

        def margin(out, feed):  # token logits: every real sub-token counts
            return softmax_margin(out, feed.get("attention_mask") if out.ndim == 3 else None)

        # a sequence classifier reading the first token: its last layer is exported for that token alone
        pruned = first_token_last_layer(model, check=example) if logits_dims == 2 else contextlib.nullcontext(False)
        with pruned as first_token:
            self.function = OrtFunction(model, forward, example, dynamic, mode=mode, margin=margin)
        self.first_token = first_token
        self._torch = torch

    def __call__(self, **batch):
        from types import SimpleNamespace

        return SimpleNamespace(logits=self._torch.from_numpy(self.function(**batch)))


def quantization_info() -> dict:
    """What the int8 path computes, for prediction-cache fingerprints."""
    import torch

    return {"scheme": "dynamic int8, nn.Linear weights per channel", "engine": torch.backends.quantized.engine}


def weights_digest(folder: Path) -> str:
    """SHA-256 over the names and contents of the weight, config and
    tokenizer files of a model folder (memoised per file size and mtime)."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and (
        p.suffix in (".safetensors", ".bin", ".pt", ".model") or p.name in _DIGEST_NAMES))
    key = tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    memo = _DIGESTS.get(str(folder))
    if memo is not None and memo[0] == key:
        return memo[1]
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode() + b"\0")
        with open(p, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    _DIGESTS[str(folder)] = (key, h.hexdigest())
    return h.hexdigest()


#: Non-weight files that change what a model folder computes.
_DIGEST_NAMES = {"config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
                 "vocab.json", "merges.txt", "added_tokens.json", "spiece.model", "sentencepiece.bpe.model"}
_DIGESTS: dict[str, tuple] = {}
