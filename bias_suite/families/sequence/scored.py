"""Scored examples of sequence labelling (NER), validated once and made
columnar (``docs/formats.md``, "Scored examples: sequence labelling").

One row per generated example with ``id, template, attribute, group, term``,
``tokens``, ``tags`` (gold, BILOU or BIO; null for an unlabelled row),
``pred_tags``, optionally ``tag_probs`` (one object tag -> probability per
token) and ``term_span`` ([start, end) token indices of the identity term).

:func:`check_sequence_scored` validates a table (each problem raises one
:class:`~bias_suite.exceptions.ScoredFormatError` naming file, row and
field), converts BIO sequences to BILOU (per sequence: one with no ``L-``/
``U-`` tag is BIO) and returns a :class:`SequenceData`.

Entity types (the classes of span metrics) are ordered by first appearance
in the tag names of ``tag_probs`` (first row, first token), then in the gold
and predicted tags of the rows in order. Probability classes are the types
plus ``O``; the probability of type X at a token is the sum of the
probabilities of B-X, I-X, L-X and U-X (whichever the tag set has).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd

from ...exceptions import ScoredFormatError
from ...io.values import is_null
from ...suites.bilou import is_valid_tag, span_counts, tag_type, to_bilou
from ..checks import PROB_TOLERANCE, first_bad, is_number, row_number, show_value, check_string_columns

__all__ = ["SequenceData", "check_sequence_scored", "sequence_scored_from_predictions", "tag_class_matrix"]

SEQ_REQUIRED = ("id", "template", "attribute", "group", "term", "tokens", "tags", "pred_tags")


@dataclass(frozen=True)
class SequenceData:
    """Validated sequence-labelling scores.

    Attributes
    ----------
    frame : DataFrame — ``id, template, attribute, group, term`` (and ``text``
        when given), input order.
    tokens : list of list of str.
    tags : list of (list of BILOU str or None) — gold, None when unlabelled.
    pred_tags : list of list of BILOU str.
    types : tuple of str — entity types (span-metric classes).
    tag_names : tuple of str or None — tag set of ``tag_probs``.
    tag_probs : list of ndarray (L_i, len(tag_names)) or None.
    type_probs : list of ndarray (L_i, len(types) + 1) or None — BILOU-prefix
        sums per type, last column O.
    term_span : ndarray (n, 2) of int — [start, end), -1 where unknown.
    span_counts : ndarray (n, len(types), 4) — per example and type: tp, fp,
        fn (exact span matching; 0 when unlabelled) and predicted spans.
    """

    frame: pd.DataFrame
    tokens: list
    tags: list
    pred_tags: list
    types: tuple
    tag_names: tuple | None
    tag_probs: list | None
    type_probs: list | None
    term_span: np.ndarray
    span_counts: np.ndarray
    source: str | None = None
    task: str = field(default="sequence_labelling")

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def classes(self) -> tuple:
        """Entity types (the classes of span metrics)."""
        return self.types

    def take(self, rows, *, templates=None) -> "SequenceData":
        """The examples ``rows`` (an int array; repeats allowed), in that
        order, optionally with new ``template`` labels (the cluster bootstrap
        gives each copy of a template a label of its own)."""
        import dataclasses

        rows = np.asarray(rows, dtype=np.int64)
        frame = self.frame.iloc[rows].reset_index(drop=True)
        if templates is not None:
            frame["template"] = np.asarray(templates, dtype=object)
        pick = (lambda xs: None if xs is None else [xs[i] for i in rows])
        out = dataclasses.replace(
            self, frame=frame, tokens=pick(self.tokens), tags=pick(self.tags), pred_tags=pick(self.pred_tags),
            tag_probs=pick(self.tag_probs), type_probs=pick(self.type_probs), term_span=self.term_span[rows],
            span_counts=self.span_counts[rows])
        items = self.__dict__.get("_token_items")  # per-example token items (metric_input), computed once
        if items is not None:
            out.__dict__["_token_items"] = pick(items)
        ident = self.__dict__.get("_identity_counts")  # counts at the identity term (identity.py), computed once
        if ident is not None:
            out.__dict__["_identity_counts"] = ident[rows]
        return out

    @property
    def prob_classes(self) -> tuple:
        """Entity types plus ``O`` (the classes of probability metrics)."""
        return tuple(self.types) + ("O",)

    @property
    def labelled(self) -> np.ndarray:
        return np.array([t is not None for t in self.tags], dtype=bool)

    def attributes(self) -> list[str]:
        return list(pd.unique(self.frame["attribute"]))

    def to_frame(self) -> pd.DataFrame:
        """Back to the interchange layout (tags as BILOU, ``tag_probs`` as
        one dict per token)."""
        out = self.frame.copy()
        out["tokens"] = [list(t) for t in self.tokens]
        out["tags"] = [None if t is None else list(t) for t in self.tags]
        out["pred_tags"] = [list(t) for t in self.pred_tags]
        if self.tag_probs is not None:
            names = list(self.tag_names)
            out["tag_probs"] = [[dict(zip(names, map(float, row))) for row in P] for P in self.tag_probs]
        out["term_span"] = [None if s < 0 else [int(s), int(e)] for s, e in self.term_span]
        return out


def tag_class_matrix(tag_names: Sequence[str], types: Sequence[str]) -> np.ndarray:
    """(len(tag_names), len(types) + 1) 0/1 matrix mapping each tag to its
    type column (O last): ``type_probs = tag_probs @ matrix``."""
    col = {t: k for k, t in enumerate(types)}
    M = np.zeros((len(tag_names), len(types) + 1))
    for i, t in enumerate(tag_names):
        ty = tag_type(t)
        M[i, len(types) if ty == "O" else col[ty]] = 1.0
    return M


def _as_list(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (list, tuple)):
        return list(v)
    return v


def check_sequence_scored(df: pd.DataFrame, *, source: str | None = None) -> SequenceData:
    """Validate a sequence-labelling scored table and make it columnar.

    Checks (each failing with one :class:`ScoredFormatError` naming file, row
    and field): required columns; ``id`` unique and non-empty; ``template``,
    ``attribute``, ``group`` non-empty strings; ``tokens`` a non-empty list
    of non-empty strings; ``tags`` null or a list of valid tags, one per
    token; ``pred_tags`` likewise (not null); ``tag_probs`` (optional, then on
    every row) a list of objects, one per token, with the same tag names on
    every token, finite values in [0, 1] summing to 1 within 1e-3;
    ``term_span`` (optional) null or ``[start, end)`` with
    ``0 <= start < end <= len(tokens)``.
    """
    if not isinstance(df, pd.DataFrame):
        raise ScoredFormatError(f"expected a pandas DataFrame, got {type(df).__name__}", file=source)
    if len(df) == 0:
        raise ScoredFormatError("no rows", file=source)
    for col in SEQ_REQUIRED:
        if col not in df.columns:
            raise ScoredFormatError("missing column", file=source, row=row_number(df, 0), field=col)

    def err(msg, i, fld):
        raise ScoredFormatError(msg, file=source, row=row_number(df, i), field=fld)

    check_string_columns(df, ("id", "template", "attribute", "group", "term"), source)
    check_string_columns(df, ("text",), source, nullable=True, nonempty=False)
    i = first_bad(df["id"].duplicated().to_numpy())
    if i is not None:
        err(f"duplicate id {show_value(df['id'].iat[i])}", i, "id")

    n = len(df)
    tokens, gold, pred = [], [], []
    tok_col, tag_col, pred_col = df["tokens"].to_numpy(dtype=object), df["tags"].to_numpy(dtype=object), df["pred_tags"].to_numpy(dtype=object)
    for i in range(n):
        toks = _as_list(tok_col[i])
        if not isinstance(toks, list) or not toks:
            err(f"expected a non-empty list of tokens, got {show_value(tok_col[i])}", i, "tokens")
        for j, t in enumerate(toks):
            if not isinstance(t, str) or t == "":
                err(f"token {j} must be a non-empty string, got {show_value(t)}", i, "tokens")
        L = len(toks)
        tokens.append(toks)
        for name, col, out, nullable in (("tags", tag_col, gold, True), ("pred_tags", pred_col, pred, False)):
            v = col[i]
            if is_null(v):
                if nullable:
                    out.append(None)
                    continue
                err("expected a list of tags, got null", i, name)
            v = _as_list(v)
            if not isinstance(v, list):
                err(f"expected a list of tags, got {show_value(v)}", i, name)
            if len(v) != L:
                err(f"{len(v)} tags for {L} tokens", i, name)
            for j, t in enumerate(v):
                if not is_valid_tag(t):
                    err(f"malformed tag {show_value(t)} at token {j}: expected 'O' or B-/I-/L-/U- followed by a type", i, name)
            out.append(to_bilou(v))

    # term spans
    spans_arr = np.full((n, 2), -1, dtype=np.int64)
    if "term_span" in df.columns:
        col = df["term_span"].to_numpy(dtype=object)
        for i in range(n):
            v = col[i]
            if is_null(v):
                continue
            v = _as_list(v)
            ok = isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in v)
            if not ok or not (0 <= v[0] < v[1] <= len(tokens[i])):
                err(f"expected [start, end) token indices with 0 <= start < end <= {len(tokens[i])}, got {show_value(col[i])}", i, "term_span")
            spans_arr[i] = v

    # token probabilities
    tag_names = tag_probs = None
    if "tag_probs" in df.columns:
        col = df["tag_probs"].to_numpy(dtype=object)
        first = _as_list(col[0])
        if not isinstance(first, list) or not first or not isinstance(first[0], dict) or not first[0]:
            err(f"expected a list of objects tag -> probability, one per token, got {show_value(col[0])}", 0, "tag_probs")
        tag_names = tuple(first[0].keys())
        for t in tag_names:
            if not is_valid_tag(t):
                err(f"malformed tag name {show_value(t)} in tag_probs", 0, "tag_probs")
        kset = set(tag_names)
        tag_probs = []
        for i in range(n):
            v = _as_list(col[i])
            if is_null(v) or not isinstance(v, list):
                err(f"expected a list of objects tag -> probability, one per token, got {show_value(col[i])}", i, "tag_probs")
            if len(v) != len(tokens[i]):
                err(f"{len(v)} probability objects for {len(tokens[i])} tokens", i, "tag_probs")
            rows = []
            for j, d in enumerate(v):
                if not isinstance(d, dict) or (tuple(d.keys()) != tag_names and set(d.keys()) != kset):
                    got = list(d.keys()) if isinstance(d, dict) else d
                    err(f"token {j}: mixed tag sets: expected tags {show_value(list(tag_names), 120)} (from the first row), got {show_value(got, 120)}", i, "tag_probs")
                bad = next((t for t in tag_names if not is_number(d[t])), None)
                if bad is not None:
                    err(f"token {j}: the probability of {show_value(bad)} must be a number, got {type(d[bad]).__name__} "
                        f"{show_value(d[bad])}", i, "tag_probs")
                try:
                    rows.append([float(d[t]) for t in tag_names])
                except OverflowError:
                    err(f"token {j}: probabilities must be finite numbers in [0, 1], got {show_value(d)}", i, "tag_probs")
            P = np.asarray(rows, dtype=np.float64)
            if not np.isfinite(P).all() or (P < -1e-9).any() or (P > 1 + 1e-9).any():
                j = int(np.flatnonzero(~(np.isfinite(P) & (P >= -1e-9) & (P <= 1 + 1e-9)).all(axis=1))[0])
                err(f"token {j}: probabilities must be finite numbers in [0, 1], got {dict(zip(tag_names, P[j].tolist()))}", i, "tag_probs")
            s = P.sum(axis=1)
            if (np.abs(s - 1) > PROB_TOLERANCE).any():
                j = int(np.flatnonzero(np.abs(s - 1) > PROB_TOLERANCE)[0])
                err(f"token {j}: probabilities sum to {s[j]:.6g}, not 1 (tolerance {PROB_TOLERANCE})", i, "tag_probs")
            tag_probs.append(P)

    keep = [c for c in ("id", "template", "attribute", "group", "term", "text") if c in df.columns]
    frame = df[keep].reset_index(drop=True).copy()
    return _build(frame, tokens, gold, pred, tag_names, tag_probs, spans_arr, source)


def _build(frame, tokens, gold, pred, tag_names, tag_probs, spans_arr, source) -> SequenceData:
    seen: dict[str, None] = {}
    for t in tag_names or ():
        ty = tag_type(t)
        if ty != "O":
            seen.setdefault(ty, None)
    for g, p in zip(gold, pred):
        for t in (g or ()):
            if t != "O":
                seen.setdefault(t[2:], None)
        for t in p:
            if t != "O":
                seen.setdefault(t[2:], None)
    types = tuple(seen)
    type_probs = None
    if tag_probs is not None:
        M = tag_class_matrix(tag_names, types)
        type_probs = [P @ M for P in tag_probs]
    counts = np.zeros((len(tokens), len(types), 4), dtype=np.int64)
    for i, (g, p) in enumerate(zip(gold, pred)):
        c = span_counts(g, p, types)
        for k, t in enumerate(types):
            counts[i, k] = c[t]
    return SequenceData(frame, tokens, gold, pred, types, tag_names, tag_probs, type_probs, spans_arr, counts, source)


def sequence_scored_from_predictions(examples: pd.DataFrame, pred_tags: list, tag_probs: list | None,
                                     tag_names: Sequence[str] | None, *, source: str | None = None) -> SequenceData:
    """Build :class:`SequenceData` from expanded examples (``tokens``,
    ``tags``, ``term_span``) and a tagger's outputs (the model-runner path:
    arrays, no dict round trip; the same checks on shapes and tags)."""
    ex = examples.reset_index(drop=True)
    n = len(ex)
    if len(pred_tags) != n or (tag_probs is not None and len(tag_probs) != n):
        raise ScoredFormatError(f"{len(pred_tags)} predictions for {n} examples", file=source)
    tokens = [list(t) for t in ex["tokens"]]
    gold, pred = [], []
    for i in range(n):
        g = ex["tags"].iat[i]
        gold.append(None if is_null(g) else to_bilou(list(g)))
        p = list(pred_tags[i])
        if len(p) != len(tokens[i]):
            raise ScoredFormatError(f"{len(p)} predicted tags for {len(tokens[i])} tokens", file=source, row=i + 1, field="pred_tags")
        try:
            pred.append(to_bilou(p))
        except ValueError as e:
            raise ScoredFormatError(f"the tagger returned {e}", file=source, row=i + 1, field="pred_tags") from None
    probs = None
    if tag_probs is not None:
        probs = []
        for i, P in enumerate(tag_probs):
            P = np.asarray(P, dtype=np.float64)
            if P.shape != (len(tokens[i]), len(tag_names)):
                raise ScoredFormatError(f"tag probabilities of shape {P.shape}, expected {(len(tokens[i]), len(tag_names))}",
                                        file=source, row=i + 1, field="tag_probs")
            probs.append(P)
    spans_arr = np.full((n, 2), -1, dtype=np.int64)
    if "term_span" in ex.columns:
        for i, v in enumerate(ex["term_span"]):
            if not is_null(v) and v is not None:
                spans_arr[i] = list(v)
    keep = [c for c in ("id", "template", "attribute", "group", "term", "text") if c in ex.columns]
    return _build(ex[keep].copy(), tokens, gold, pred, None if tag_names is None else tuple(tag_names), probs, spans_arr, source)
