"""BILOU tags: validation, BIO -> BILOU conversion, span extraction and
exact span matching (docs/metrics.md, "Sequence labelling").

A tag is ``O`` or ``P-TYPE`` with the prefix P in B (begin), I (inside),
L (last), U (unit, a one-token entity). BIO sequences (prefixes B and I only)
are accepted everywhere and converted first:

- a sequence with no ``L-`` and no ``U-`` tag is read as BIO;
- in BIO, an ``I-X`` with no preceding ``B-X``/``I-X`` starts an entity;
- spans come only from well-formed ``U-X`` or ``B-X I-X* L-X`` runs of the
  (converted) BILOU sequence; anything else (``B-X O``, ``I-X L-Y``) yields
  no span.

>>> to_bilou(["B-PER", "I-PER", "O", "I-LOC"])
['B-PER', 'L-PER', 'O', 'U-LOC']
>>> spans(["U-LOC", "O", "B-PER", "I-PER", "L-PER"])
[('LOC', 0, 1), ('PER', 2, 5)]
>>> expand_unit("U-LOC", 3)
['B-LOC', 'I-LOC', 'L-LOC']
"""
from __future__ import annotations

import re
from typing import Iterable, Sequence

__all__ = [
    "PREFIXES", "TAG_RE", "is_valid_tag", "split_tag", "tag_type", "is_bio",
    "bio_to_bilou", "to_bilou", "spans", "match_spans", "span_counts",
    "expand_unit", "spans_to_bilou", "bilou_tag_set", "allowed_transition",
    "entity_types",
]

PREFIXES = ("B", "I", "L", "U")
TAG_RE = re.compile(r"^(?:O|([BILU])-(\S+))$")


def is_valid_tag(tag) -> bool:
    """``O`` or ``B-X``/``I-X``/``L-X``/``U-X`` with a non-empty type X."""
    return isinstance(tag, str) and TAG_RE.match(tag) is not None


def split_tag(tag: str) -> tuple[str, str | None]:
    """``"B-PER"`` -> ``("B", "PER")``; ``"O"`` -> ``("O", None)``.

    Raises ValueError for a malformed tag.
    """
    m = TAG_RE.match(tag) if isinstance(tag, str) else None
    if m is None:
        raise ValueError(f"malformed tag {tag!r}: expected 'O' or B-/I-/L-/U- followed by a type")
    if m.group(1) is None:
        return "O", None
    return m.group(1), m.group(2)


def tag_type(tag: str) -> str:
    """Entity type of a tag, ``"O"`` for the outside tag."""
    p, t = split_tag(tag)
    return "O" if t is None else t


def is_bio(tags: Sequence[str]) -> bool:
    """True when the sequence has no ``L-`` and no ``U-`` tag (read as BIO)."""
    return not any(t[:2] in ("L-", "U-") for t in tags)


def bio_to_bilou(tags: Sequence[str]) -> list[str]:
    """Convert a BIO sequence to BILOU.

    An entity begins at ``B-X``, or at ``I-X`` whose predecessor is not
    ``B-X``/``I-X`` of the same type; it continues while the next tag is
    ``I-X``. One-token entities become ``U-X``, longer ones ``B-X I-X* L-X``.
    """
    out = []
    n = len(tags)
    parsed = [split_tag(t) for t in tags]
    for i, (p, t) in enumerate(parsed):
        if p == "O":
            out.append("O")
            continue
        if p not in ("B", "I"):
            raise ValueError(f"tag {tags[i]!r} at position {i} is not a BIO tag")
        prev = parsed[i - 1] if i > 0 else ("O", None)
        begins = p == "B" or not (prev[0] in ("B", "I") and prev[1] == t)
        nxt = parsed[i + 1] if i + 1 < n else ("O", None)
        continues = nxt[0] == "I" and nxt[1] == t
        if begins and continues:
            out.append(f"B-{t}")
        elif begins:
            out.append(f"U-{t}")
        elif continues:
            out.append(f"I-{t}")
        else:
            out.append(f"L-{t}")
    return out


def to_bilou(tags: Sequence[str]) -> list[str]:
    """BILOU tags of a sequence: BIO sequences (no L-/U-) are converted,
    BILOU sequences returned as they are (validated)."""
    tags = list(tags)
    for i, t in enumerate(tags):
        if not is_valid_tag(t):
            raise ValueError(f"malformed tag {t!r} at position {i}: expected 'O' or B-/I-/L-/U- followed by a type")
    return bio_to_bilou(tags) if is_bio(tags) else tags


def spans(tags: Sequence[str]) -> list[tuple[str, int, int]]:
    """Entity spans ``(type, start, end)`` (end exclusive) of a BILOU
    sequence, from well-formed runs only (``U-X``; ``B-X I-X* L-X``).
    BIO input is converted first."""
    tags = to_bilou(tags)
    out = []
    i, n = 0, len(tags)
    while i < n:
        p, t = split_tag(tags[i])
        if p == "U":
            out.append((t, i, i + 1))
            i += 1
            continue
        if p == "B":
            j = i + 1
            while j < n and tags[j] == f"I-{t}":
                j += 1
            if j < n and tags[j] == f"L-{t}":
                out.append((t, i, j + 1))
                i = j + 1
                continue
            i = j if j > i + 1 else i + 1  # broken run: no span, resume at the breaking tag
            continue
        i += 1
    return out


def match_spans(gold: Iterable[tuple], pred: Iterable[tuple]) -> tuple[set, set, set]:
    """Exact span matching: (true positives, false positives, false
    negatives) as sets of ``(type, start, end)``. A predicted span is a TP
    only if type, start and end all equal a gold span's."""
    g, p = set(gold), set(pred)
    return g & p, p - g, g - p


def span_counts(gold_tags: Sequence[str] | None, pred_tags: Sequence[str], types: Sequence[str]) -> dict:
    """Per-type counts of one sentence: ``{type: (tp, fp, fn, pp)}``.

    ``gold_tags=None`` (unlabelled): tp = fp = fn = 0, pp counted.
    """
    ps = spans(pred_tags)
    pp = {t: 0 for t in types}
    for t, _, _ in ps:
        if t in pp:
            pp[t] += 1
    if gold_tags is None:
        return {t: (0, 0, 0, pp[t]) for t in types}
    tp, fp, fn = match_spans(spans(gold_tags), ps)
    out = {}
    for t in types:
        out[t] = (
            sum(1 for s in tp if s[0] == t),
            sum(1 for s in fp if s[0] == t),
            sum(1 for s in fn if s[0] == t),
            pp[t],
        )
    return out


def identity_span_counts(gold_tags: Sequence[str] | None, pred_tags: Sequence[str], term: tuple[int, int],
                         types: Sequence[str]) -> dict:
    """Per-type counts at the identity term of one sentence: ``{type: (tp,
    fp, fn, pp)}``, the counts of :func:`span_counts` restricted to the term.

    The *identity span* is the gold span that holds the term's first token
    ``term[0]`` (for a suite's example: exactly the tokens the identity slot
    filled). tp = 1 when a predicted span has its type, start and end, fn = 1
    when none has; pp counts the predicted spans of the type that overlap the
    term's tokens ``[term[0], term[1])`` and fp those of them that are not
    the identity span. No identity span (the term is tagged O), or no gold
    tags (``gold_tags=None``): tp = fn = 0.
    """
    s, e = int(term[0]), int(term[1])
    near = [p for p in spans(pred_tags) if p[1] < e and p[2] > s]
    pp = {t: 0 for t in types}
    for t, _, _ in near:
        if t in pp:
            pp[t] += 1
    ident = None
    if gold_tags is not None:
        ident = next((g for g in spans(gold_tags) if g[1] <= s < g[2]), None)
    out = {}
    for t in types:
        hit = int(ident is not None and ident[0] == t and ident in near)
        miss = int(ident is not None and ident[0] == t and not hit)
        out[t] = (hit, pp[t] - hit, miss, pp[t])
    return out


def expand_unit(tag: str, n: int) -> list[str]:
    """The tags of an ``n``-token fill of a slot tagged ``tag``: ``U-X``
    stays ``U-X`` for one token and becomes ``B-X I-X ... L-X`` for more;
    ``O`` gives ``O`` for every token."""
    if n < 1:
        raise ValueError(f"a fill needs at least one token, got {n}")
    p, t = split_tag(tag)
    if p == "O":
        return ["O"] * n
    if p != "U":
        raise ValueError(f"slot tags must be 'U-TYPE' or 'O', got {tag!r}")
    if n == 1:
        return [f"U-{t}"]
    return [f"B-{t}"] + [f"I-{t}"] * (n - 2) + [f"L-{t}"]


def spans_to_bilou(n: int, ents: Iterable[tuple[str, int, int]]) -> list[str]:
    """BILOU tags of ``n`` tokens with entity spans ``(type, start, end)``
    (non-overlapping; end exclusive)."""
    tags = ["O"] * n
    for t, s, e in ents:
        if not (0 <= s < e <= n):
            raise ValueError(f"span {(t, s, e)} outside 0..{n}")
        if any(x != "O" for x in tags[s:e]):
            raise ValueError(f"span {(t, s, e)} overlaps another span")
        tags[s:e] = expand_unit(f"U-{t}", e - s)
    return tags


def bilou_tag_set(types: Sequence[str]) -> list[str]:
    """``["O", "B-T1", "I-T1", "L-T1", "U-T1", "B-T2", ...]``."""
    return ["O"] + [f"{p}-{t}" for t in types for p in PREFIXES]


def allowed_transition(a: str | None, b: str | None) -> bool:
    """Whether BILOU tag ``b`` may follow tag ``a`` (``None``: the sequence
    start for ``a`` or the end for ``b``).

    After O, L-X, U-X or at the start: O, B-Y, U-Y. After B-X or I-X: I-X or
    L-X. Before the end: O, L-X or U-X.
    """
    pa = "O" if a is None else split_tag(a)[0]
    if b is None:
        return pa in ("O", "L", "U")
    pb, tb = split_tag(b)
    if pa in ("O", "L", "U"):
        return pb in ("O", "B", "U")
    ta = split_tag(a)[1]
    return pb in ("I", "L") and tb == ta


def entity_types(tag_lists: Iterable[Sequence[str]]) -> list[str]:
    """Entity types in order of first appearance over tag sequences."""
    seen: dict[str, None] = {}
    for tags in tag_lists:
        for t in tags:
            ty = tag_type(t)
            if ty != "O":
                seen.setdefault(ty, None)
    return list(seen)
