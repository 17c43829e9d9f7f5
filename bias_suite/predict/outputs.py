"""Predictions as one ragged structure, shared by classifiers and taggers.

A classifier gives one probability row per text; a tagger gives one row per
word, plus the tag it chose for each word (Viterbi or argmax, which need not
be the argmax of the stored probabilities). :class:`Outputs` holds either as

- ``values``: ``(rows, width)`` float64, the rows of all items stacked,
- ``offsets``: ``(n + 1,)`` int64, item ``i`` owns rows ``offsets[i]:offsets[i+1]``,
- ``tags``: ``(rows,)`` int32 tag ids, or None (classifiers).

Everything the cache stores and every engine returns is an :class:`Outputs`,
so gathering, concatenating and storing are written once, vectorized.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from bias_suite.exceptions import ModelError
from bias_suite.models.base import check_texts, validate_probs
from bias_suite.models.checks import RENORMALISE_ATOL, renormalise_rows

__all__ = ["Outputs", "ClassifierTask", "TaggerTask", "make_task", "KEY_BYTES"]

#: Bytes of an input key (BLAKE2b digest).
KEY_BYTES = 16


@dataclass
class Outputs:
    """Ragged predictions of ``n`` items (see module doc)."""

    values: np.ndarray
    offsets: np.ndarray
    tags: np.ndarray | None = None

    def __post_init__(self):
        self.values = np.ascontiguousarray(self.values, dtype=np.float64)
        self.offsets = np.ascontiguousarray(self.offsets, dtype=np.int64)
        if self.tags is not None:
            self.tags = np.ascontiguousarray(self.tags, dtype=np.int32)
        if self.values.ndim != 2 or self.offsets.ndim != 1 or len(self.offsets) < 1:
            raise ModelError("Outputs: values must be 2-D and offsets 1-D with n + 1 entries")
        if self.offsets[0] != 0 or self.offsets[-1] != len(self.values) or (np.diff(self.offsets) < 0).any():
            raise ModelError("Outputs: offsets must rise from 0 to the number of value rows")
        if self.tags is not None and len(self.tags) != len(self.values):
            raise ModelError("Outputs: one tag id per value row is needed")

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @classmethod
    def empty(cls, width: int, with_tags: bool) -> "Outputs":
        return cls(np.zeros((0, width)), np.zeros(1, dtype=np.int64),
                   np.zeros(0, dtype=np.int32) if with_tags else None)

    def take(self, index) -> "Outputs":
        """The items ``index`` (an int array, repeats allowed), in that order."""
        index = np.asarray(index, dtype=np.int64)
        lengths = self.lengths[index]
        offsets = _offsets(lengths)
        # row r of the result comes from offsets_old[item] + (r - offsets_new[item])
        rows = np.repeat(self.offsets[:-1][index] - offsets[:-1], lengths) + np.arange(offsets[-1])
        return Outputs(self.values[rows], offsets, None if self.tags is None else self.tags[rows])

    @staticmethod
    def concat(parts: Sequence["Outputs"]) -> "Outputs":
        if not parts:
            raise ModelError("Outputs.concat needs at least one part")
        lengths = np.concatenate([p.lengths for p in parts])
        tags = None if parts[0].tags is None else np.concatenate([p.tags for p in parts])
        return Outputs(np.concatenate([p.values for p in parts]), _offsets(lengths), tags)


def _offsets(lengths: np.ndarray) -> np.ndarray:
    """Offsets (``n + 1``, from 0) of items with these row counts."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _digest_all(prefix: bytes, blobs) -> np.ndarray:
    """BLAKE2b-128 of ``prefix + blob`` for each blob, as an ``S16`` array."""
    out = np.empty(len(blobs), dtype=f"S{KEY_BYTES}")
    for i, b in enumerate(blobs):  # hashlib has no batch API; ~1 µs per item
        out[i] = hashlib.blake2b(prefix + b, digest_size=KEY_BYTES).digest()
    return out


class ClassifierTask:
    """Texts in, one probability row per text (a ``Predictor``)."""

    kind = "classification"

    def __init__(self, predictor):
        self.predictor = predictor
        self.names = list(predictor.class_names)
        self.width = len(self.names)
        self.with_tags = False

    @staticmethod
    def check(items) -> list:
        return check_texts(items)

    @staticmethod
    def keys(items: Sequence[str]) -> np.ndarray:
        return _digest_all(b"text\0", [t.encode("utf-8", "surrogatepass") for t in items])

    @staticmethod
    def sizes(items: Sequence[str]) -> np.ndarray:
        """A cheap length proxy to group items of similar length into chunks."""
        return np.fromiter((len(t) for t in items), dtype=np.int64, count=len(items))

    def compute(self, items: Sequence[str]) -> Outputs:
        probs = self.predictor.predict_proba(list(items))
        probs = validate_probs(probs, len(items), self.names, source=f"model {type(self.predictor).__name__}",
                               atol=RENORMALISE_ATOL)
        return Outputs(probs, np.arange(len(items) + 1, dtype=np.int64))

    def compute_iter(self, items: Sequence[str]):
        """Yield ``(positions, Outputs)`` as the predictor finishes batches
        (predictors with ``iter_predict_proba``), else once for all items."""
        it = getattr(self.predictor, "iter_predict_proba", None)
        if not callable(it):
            yield np.arange(len(items)), self.compute(items)
            return
        for positions, probs in it(list(items)):
            positions = np.asarray(positions, dtype=np.int64)
            probs = validate_probs(probs, len(positions), self.names,
                                   source=f"model {type(self.predictor).__name__}", atol=RENORMALISE_ATOL)
            yield positions, Outputs(probs, np.arange(len(positions) + 1, dtype=np.int64))

    @staticmethod
    def renormalise(out: Outputs) -> tuple[Outputs, int]:
        """Rows within ``RENORMALISE_ATOL`` of summing to 1 divided by their
        sums (the runner counts them for its one warning)."""
        values, n = renormalise_rows(out.values)
        return (Outputs(values, out.offsets, out.tags) if n else out), n

    def finish(self, out: Outputs) -> np.ndarray:
        """``(n, C)`` probabilities."""
        return out.values.reshape(len(out), self.width) if len(out) else np.zeros((0, self.width))


class TaggerTask:
    """Token lists in, per-word tag probabilities and tags out (a tagger with
    ``predict(tokens_list) -> (tags, probs)`` and ``tag_names``)."""

    kind = "sequence_labelling"

    def __init__(self, tagger):
        self.predictor = tagger
        self.names = list(tagger.tag_names)
        self.width = len(self.names)
        self.with_tags = True
        self._tag_id = {t: i for i, t in enumerate(self.names)}

    @staticmethod
    def check(items) -> list:
        from bias_suite.models.crf import check_tokens

        return check_tokens(items)

    @staticmethod
    def keys(items) -> np.ndarray:
        return _digest_all(b"tokens\0", [json.dumps(list(t), ensure_ascii=False).encode("utf-8", "surrogatepass")
                                         for t in items])

    @staticmethod
    def sizes(items) -> np.ndarray:
        return np.fromiter((sum(map(len, t)) + len(t) for t in items), dtype=np.int64, count=len(items))

    def compute(self, items) -> Outputs:
        items = [list(t) for t in items]
        tags, probs = self.predictor.predict(items)
        n_words = np.fromiter((len(t) for t in items), dtype=np.int64, count=len(items))
        if len(tags) != len(items):
            raise ModelError(f"tagger returned {len(tags)} tag sequences for {len(items)} sentences")
        offsets = _offsets(n_words)
        try:
            tag_ids = np.fromiter((self._tag_id[t] for seq in tags for t in seq), dtype=np.int32)
        except KeyError as e:
            raise ModelError(f"tagger returned tag {e.args[0]!r}, which is not in its tag_names") from None
        if len(tag_ids) != offsets[-1] or any(len(s) != n for s, n in zip(tags, n_words)):
            raise ModelError("tagger returned a tag sequence whose length differs from its sentence's")
        if probs is None:
            values = np.full((offsets[-1], self.width), np.nan)
        else:
            values = np.concatenate([np.asarray(p, dtype=np.float64).reshape(-1, self.width) for p in probs]) \
                if len(probs) else np.zeros((0, self.width))
            if len(values) != offsets[-1]:
                raise ModelError("tagger returned probabilities whose rows do not match the words")
        return Outputs(values, offsets, tag_ids)

    @staticmethod
    def renormalise(out: Outputs) -> tuple[Outputs, int]:
        """Tag probabilities are kept as the tagger gave them."""
        return out, 0

    def compute_iter(self, items):
        """Taggers answer a chunk at once: one ``(positions, Outputs)``."""
        yield np.arange(len(items)), self.compute(items)

    def finish(self, out: Outputs):
        """``(tags, probs)`` as the tagger's ``predict`` returns them."""
        names = np.asarray(self.names, dtype=object)
        bounds = out.offsets
        all_tags = names[out.tags].tolist()
        tags = [all_tags[bounds[i]:bounds[i + 1]] for i in range(len(out))]
        if len(out.values) and np.isnan(out.values).all():
            return tags, None
        probs = [out.values[bounds[i]:bounds[i + 1]] for i in range(len(out))]
        return tags, probs


def make_task(predictor, kind: str | None = None):
    """The task adapter of ``predictor``: a tagger (``predict`` + ``tag_names``)
    or a classifier (``predict_proba`` + ``class_names``)."""
    if kind == "sequence_labelling" or (kind is None and hasattr(predictor, "tag_names")
                                         and hasattr(predictor, "predict")):
        return TaggerTask(predictor)
    if not (hasattr(predictor, "predict_proba") and hasattr(predictor, "class_names")):
        raise ModelError(f"{type(predictor).__name__} is neither a classifier (predict_proba, class_names) "
                         "nor a tagger (predict, tag_names)")
    return ClassifierTask(predictor)
