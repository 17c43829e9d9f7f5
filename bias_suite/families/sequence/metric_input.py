"""What the metric engine and the significance tests take from
sequence-labelling (NER) data: the metrics are the generalized builders'
and the results the same tidy rows as classification (``docs/metrics.md``,
"Sequence labelling").

Two kinds of units:

- **examples** (sentences) carry the prediction-based scores: per entity
  type c, exact span matching gives per-sentence counts ``tp, fp, fn`` and
  ``pp`` (predicted spans of type c, the "positive rate" of ParityGap); the
  rates are ratios of counts summed over a set of sentences
  (FNR = FN / (TP + FN), recall = TPR, F1 from span precision and recall).
- **token positions** carry the probability-based scores: the probability of
  type X at a token is the sum of its B-X, I-X, L-X, U-X probabilities (O is
  its own class); the tokens of a multi-token identity term (``term_span``)
  are averaged into one position, whose gold type is that of the term's first
  token, so that every counterfactual variant aligns with the template's
  tokens. TC variants keep positions whose gold type is c.

Span metrics report the entity types; probability metrics the types plus
``O``. FPED, FPED*, FPR-Ratio and TNR-Gap (any metric on FPR or TNR) get one
row per class with value null and the note "not applicable to sequence
labelling"; AccuracyDiff (any metric on accuracy) is not reported.
Counterfactual metrics average d over the aligned positions of each tuple,
then over tuples; AvgIF/AvgScoreDiff pool the token scores of each S_j^t.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ...exceptions import MetricError
from ...suites.views import block_tables, group_order
from .identity import counts_fn, identity_input

#: the input kind of the metrics measured at the identity term (``at="identity"`` scores)
IDENTITY = "identity"

__all__ = ["metric_input", "block_scores", "token_items", "data_token_items", "identity_position_scores",
           "missing_probabilities", "NOT_APPLICABLE_NOTE", "MISSING_PROBABILITIES"]

NOT_APPLICABLE_NOTE = "not applicable to sequence labelling"
_NA_SCORES = ("FPR", "TNR")
_SKIP_SCORES = ("accuracy",)


def token_items(type_probs: list, gold: list, term_span: np.ndarray, prob_classes: Sequence[str]):
    """Probability items of a list of sentences: one per token, with the
    identity term's tokens merged into one position.

    Parameters
    ----------
    type_probs : list of (L_i, K+1) arrays (types then O).
    gold : list of BILOU tag lists (None: unlabelled).
    term_span : (n, 2) [start, end), -1 where unknown (no merge).
    prob_classes : the K+1 class names (types then "O").

    Returns
    -------
    item_row (m,), item_pos (m,), item_P (m, K+1), item_y (m,) (-1 unlabelled),
    identity_item (n,) index of each sentence's merged identity item (-1 without term_span).
    """
    col = {c: k for k, c in enumerate(prob_classes)}
    return _assemble([_merge_one(P, g, span, col) for P, g, span in zip(type_probs, gold, term_span)],
                     len(prob_classes))


def _merge_one(P, g, span, col: dict):
    """One sentence's items: (P (n_i, K+1), y (n_i,), identity position or -1)."""
    K1 = len(col)
    P = np.asarray(P, dtype=np.float64).reshape(-1, K1)
    L = P.shape[0]
    y = np.full(L, -1, dtype=np.int64) if g is None else np.array([col["O" if t == "O" else t[2:]] for t in g],
                                                                    dtype=np.int64)
    s, e = (int(span[0]), int(span[1])) if span[0] >= 0 else (-1, -1)
    if s >= 0 and e - s > 1:
        P = np.concatenate([P[:s], P[s:e].mean(axis=0, keepdims=True), P[e:]])
        y = np.concatenate([y[:s], y[s:s + 1], y[e:]])
    return P, y, s


def _assemble(pieces: list, K1: int):
    ident = np.full(len(pieces), -1, dtype=np.int64)
    if not pieces:
        return (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, K1)), np.zeros(0, np.int64), ident)
    lengths = np.fromiter((len(p[1]) for p in pieces), dtype=np.int64, count=len(pieces))
    starts = np.cumsum(lengths) - lengths
    s = np.fromiter((p[2] for p in pieces), dtype=np.int64, count=len(pieces))
    ident[s >= 0] = (starts + s)[s >= 0]
    rows = np.repeat(np.arange(len(pieces), dtype=np.int64), lengths)
    pos = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(starts, lengths)
    return (rows, pos, np.concatenate([p[0] for p in pieces]), np.concatenate([p[1] for p in pieces]), ident)


def data_token_items(data, rows: np.ndarray):
    """:func:`token_items` of ``data``'s examples ``rows``. Each example's
    items are computed once per data set and kept with it (``take`` passes
    them on, so the bootstrap's resamples do not recompute them)."""
    cache = data.__dict__.get("_token_items")
    if cache is None:
        cache = [None] * len(data)
        data.__dict__["_token_items"] = cache
    col = {c: k for k, c in enumerate(data.prob_classes)}
    pieces = []
    for i in rows:
        it = cache[i]
        if it is None:
            it = cache[i] = _merge_one(data.type_probs[i], data.tags[i], data.term_span[i], col)
        pieces.append(it)
    return _assemble(pieces, len(col))


def metric_input(data, attribute: str, cf, groups: list, probabilities: bool | str = False) -> dict:
    """Arrays of one attribute for the generalized builders: span counts per
    sentence (classes = entity types) and, with ``probabilities``, token
    items at aligned positions (classes = types + O); with
    ``probabilities="identity"`` the counts and items of the identity term
    only (:mod:`.identity`; classes = the identity spans' types)."""
    fr = data.frame
    rows = np.flatnonzero(fr["attribute"].to_numpy(dtype=object) == attribute)
    local = np.full(len(fr), -1, dtype=np.int64)
    local[rows] = np.arange(len(rows))
    code = {g: i for i, g in enumerate(groups)}
    g = np.fromiter((code[x] for x in fr["group"].to_numpy(dtype=object)[rows]), dtype=np.int64, count=len(rows))
    labelled = data.labelled[rows]
    row_template = np.full(len(rows), -1, dtype=np.int64)
    for j, t in enumerate(cf.templates):
        for members in cf.members[t]:
            row_template[local[members]] = j
    if probabilities == IDENTITY:
        part = identity_input(data, rows, data_token_items)
    elif probabilities:
        item_row, item_pos, item_P, item_y, _ = data_token_items(data, rows)
        part = dict(classes=tuple(data.prob_classes), item_row=item_row, item_P=item_P, item_y=item_y,
                    item_pos=item_pos)
    else:
        item_row, item_pos, item_y = (np.zeros(0, np.int64) for _ in range(3))
        part = dict(classes=tuple(data.types), item_row=item_row, item_P=np.zeros((0, len(data.types))),
                    item_y=item_y, item_pos=item_pos)
    out = dict(
        attribute=attribute, groups=list(groups), g=g,
        y=np.where(labelled, 0, -1).astype(np.int64), yhat=np.zeros(len(rows), np.int64),
        counts=counts_fn(data.span_counts[rows], labelled),
        tuples=local[cf.tuples] if len(cf.tuples) else np.zeros((0, len(groups)), dtype=np.int64),
        tuple_template=cf.tuple_template, templates=list(cf.templates), row_template=row_template,
    )
    out.update(part)
    return out


#: the note of the probability metrics' rows on data without tag probabilities
MISSING_PROBABILITIES = "needs tag probabilities (tag_probs), which the scored data does not have"


def missing_probabilities(data) -> str | None:
    return None if data.type_probs is not None else MISSING_PROBABILITIES


# ------------------------------------------------------------------ significance
def identity_position_scores(data, attribute: str, *, group_order_override=None) -> dict:
    """Template x group tables (one per class of ``data.prob_classes``) of
    the mean, over the group's terms, of the class probability at the merged
    identity position; templates missing a group are dropped. Rows need
    ``term_span`` (others are ignored)."""
    if data.type_probs is None:
        raise MetricError("identity-position scores need token probabilities (tag_probs)")
    fr = data.frame
    rows = np.flatnonzero((fr["attribute"].to_numpy(dtype=object) == attribute) & (data.term_span[:, 0] >= 0))
    groups = group_order(fr, attribute, group_order_override)
    classes = list(data.prob_classes)
    if len(rows) == 0:
        return {c: pd.DataFrame(columns=groups) for c in classes}
    _, _, item_P, _, ident = data_token_items(data, rows)
    return block_tables(fr.iloc[rows], classes, item_P[ident], groups)


def block_scores(data, attribute: str, groups: Sequence[str] | None = None, complete_only: bool = True) -> dict | None:
    """Block scores of the significance tests: the identity-position scores
    (None without token probabilities or identity spans)."""
    if data.type_probs is None or not (data.term_span[:, 0] >= 0).any():
        return None
    return identity_position_scores(data, attribute, group_order_override={attribute: list(groups)} if groups else None)
