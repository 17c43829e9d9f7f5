"""Sequence labelling measured at the identity term: the input of the
identity-span metrics (``docs/metrics.md``, "Measured at the identity term").

The span metrics of :mod:`.metric_input` count every gold span of a type,
the template's own entities ("Mark Johnson" in "{Person} and Mark Johnson
founded the company") as well as the identity term. A template's context
entities are the same for every group, so they add the same hits to every
group and dilute a difference that lies in the identity term. The
identity-span metrics count only the span the identity slot filled:

- **counts** per sentence and entity type (:func:`identity_counts`): the
  counts of :func:`bias_suite.suites.bilou.identity_span_counts`, tp = 1
  when the tagger predicts the identity span exactly, fn = 1 when it does
  not, under the usual names (``tp, fp, fn, pp, n, lab``), so that recall
  and FNR are the usual rates;
- **probability items**: one per sentence, the merged identity position of
  :func:`.metric_input.token_items` (the mean over the term's tokens), with
  the gold type of the term's first token.

Classes: the entity types that the attribute's identity spans have (a names
suite: PER), in the order of ``data.types``; an attribute whose identity
terms are no entity (tagged O) has every type, with null rows that say so.
Sentences without ``term_span`` have no identity counts and no item.
"""
from __future__ import annotations

import numpy as np

from ...exceptions import MetricError
from ...suites.bilou import identity_span_counts

__all__ = ["identity_counts", "identity_input", "measured_on"]


def identity_counts(data) -> np.ndarray:
    """(n, len(types), 4) tp, fp, fn, pp at each sentence's identity term
    (zeros without ``term_span``); computed once per data set and kept with
    it (``take`` passes it on)."""
    cached = data.__dict__.get("_identity_counts")
    if cached is not None:
        return cached
    types = list(data.types)
    out = np.zeros((len(data), len(types), 4), dtype=np.int64)
    for i, (s, e) in enumerate(data.term_span):
        if s < 0:
            continue
        c = identity_span_counts(data.tags[i], data.pred_tags[i], (s, e), types)
        out[i] = [c[t] for t in types]
    data.__dict__["_identity_counts"] = out
    return out


def counts_fn(counts: np.ndarray, labelled: np.ndarray, present: np.ndarray | None = None, what: str = "span"):
    """The engine's ``counts(c)`` from per-sentence span counts (n, types, 4:
    tp, fp, fn, predicted): a sentence counts as labelled where ``labelled``
    and, with ``present`` (the sentences that hold an identity term), only
    there."""
    n = counts.shape[0]
    zeros = np.zeros(n, dtype=np.int64)
    there = np.ones(n, dtype=bool) if present is None else present
    lab = (labelled & there).astype(np.int64)
    seen = there.astype(np.int64)

    def fn(c):
        if c is None or c >= counts.shape[1]:
            raise MetricError(f"{what} counts exist only for entity types")
        return {"tp": counts[:, c, 0], "fp": counts[:, c, 1], "fn": counts[:, c, 2], "tn": zeros,
                "pp": counts[:, c, 3], "n": seen, "lab": lab, "correct": zeros}

    return fn


def identity_input(data, rows: np.ndarray, token_items) -> dict:
    """The fields of the identity input that differ from the all-span input
    of the sentences ``rows`` (one attribute): ``classes``, ``counts`` and
    the probability items (none without tag probabilities).
    ``token_items(data, rows)`` gives the token items of sentences."""
    counts = identity_counts(data)[rows]
    gold_any = (counts[:, :, 0] + counts[:, :, 2]).sum(axis=0) > 0
    keep = np.flatnonzero(gold_any) if gold_any.any() else np.arange(len(data.types))
    classes = tuple(data.types[k] for k in keep)
    has_term = data.term_span[rows, 0] >= 0
    out = dict(classes=classes, counts=counts_fn(counts[:, keep], data.labelled[rows], has_term, what="identity-span"))
    K = len(keep)
    if data.type_probs is None or not has_term.any():
        out.update(item_row=np.zeros(0, np.int64), item_pos=np.zeros(0, np.int64), item_P=np.zeros((0, K)),
                   item_y=np.zeros(0, np.int64))
        return out
    local = np.flatnonzero(has_term)
    _, _, P, y, ident = token_items(data, rows[local])
    # gold type of each identity position as a class index; K: labelled, none of the classes (O, another type)
    to_class = np.full(len(data.prob_classes), K, dtype=np.int64)
    to_class[keep] = np.arange(K)
    yi = y[ident]
    out.update(item_row=local.astype(np.int64), item_pos=np.zeros(len(local), np.int64), item_P=P[ident][:, keep],
               item_y=np.where(yi >= 0, to_class[np.maximum(yi, 0)], -1))
    return out


def measured_on(spec, cls) -> str:
    """What a row of metric ``spec`` and class ``cls`` counts, for the
    findings: "PER identity span" / "all PER spans" (span metrics), "PER at
    the identity term" / "PER over all tokens" (probability metrics)."""
    at_term = getattr(spec.phi, "at", "all") == "identity"
    one = cls is not None and cls != "all"
    if spec.based_on == "prediction":
        if at_term:
            return f"{cls} identity span" if one else "identity span"
        return f"all {cls} spans" if one else "all spans"
    if at_term:
        return f"{cls} at the identity term" if one else "at the identity term"
    return f"{cls} over all tokens" if one else "all tokens"
