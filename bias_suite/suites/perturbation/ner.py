"""Perturbation of tagged sentences (CoNLL): the text engine on the
space-joined tokens, the edits mapped back to tokens, the entity tags kept.

A swapped span keeps its tags when its token count stays; when the count
changes ("Japan" -> "South Korea"), a span that was one whole entity becomes
one entity of the same type over the new tokens (BILOU ``U-LOC`` ->
``B-LOC L-LOC``; BIO ``B-LOC`` -> ``B-LOC I-LOC``) and a span of ``O`` tags
stays ``O``. A sentence is left out ("entity tags") when a first name is not
tagged as a person (``PER``) or a mention that is only part of an entity
could change its length. Tags are written in the sentence's own scheme.
"""
from __future__ import annotations

import bisect

from ..bilou import is_bio, spans, split_tag, to_bilou
from .engine import Found, apply_edits

__all__ = ["TaggedSentence", "check_entities", "retokenize", "to_bio"]


class TaggedSentence:
    """Tokens and tags (BILOU inside) with the character offset of each
    token in the space-joined text."""

    def __init__(self, tokens, tags):
        self.tokens = list(tokens)
        self.bio = is_bio(tags)
        self.tags = to_bilou(tags)
        self.text = " ".join(self.tokens)
        self.offsets, pos = [], 0
        for t in self.tokens:
            self.offsets.append(pos)
            pos += len(t) + 1
        self.entities = {(s, e): t for t, s, e in spans(self.tags)}

    def token_at(self, char: int) -> int:
        return bisect.bisect_right(self.offsets, char) - 1

    def token_span(self, start: int, end: int) -> tuple:
        return self.token_at(start), self.token_at(max(start, end - 1)) + 1


def to_bio(tags) -> list:
    """BILOU -> BIO (``U-X`` -> ``B-X``, ``L-X`` -> ``I-X``)."""
    out = []
    for t in tags:
        p, typ = split_tag(t)
        out.append("O" if p == "O" else f"{'B' if p in ('B', 'U') else 'I'}-{typ}")
    return out


def check_entities(sent: TaggedSentence, found: Found, single_token_kinds) -> bool:
    """Whether every mention of ``found`` can be swapped without breaking an
    entity: a first name must start a PER entity; a span that is not all
    ``O`` and not exactly one entity may only be swapped token for token
    (its kind's terms are all one token: ``single_token_kinds``)."""
    for x in found.mentions:
        s, e = sent.token_span(x.start, x.end)
        tags = sent.tags[s:e]
        if x.entry is not None and x.entry.kind == "person" and split_tag(tags[0])[1] != "PER":
            return False
        if all(t == "O" for t in tags) or (s, e) in sent.entities:
            continue
        if x.kind == "pro" or (e - s == 1 and x.entry is not None and x.entry.kind in single_token_kinds):
            continue
        return False
    return True


def retokenize(sent: TaggedSentence, edits, head: tuple | None):
    """``(tokens, tags, term_span)`` of a variant: each edited token range
    rebuilt from its edited text, split on spaces; ``head``: the (start,
    end) characters of the mention whose new token span is ``term_span``."""
    ranges = {}
    for s, e, new in edits:
        ts, te = sent.token_span(s, e)
        ranges.setdefault((ts, te), []).append((s, e, new))
    # merge overlapping token ranges (a name and its attached apostrophe)
    merged = []
    for (ts, te), ed in sorted(ranges.items()):
        if merged and ts < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(te, merged[-1][1]), merged[-1][2] + ed)
        else:
            merged.append((ts, te, ed))
    tokens, tags, span, pos, shift = [], [], None, 0, 0
    hs, he = sent.token_span(*head) if head is not None else (None, None)
    for ts, te, ed in merged:
        tokens += sent.tokens[pos:ts]
        tags += sent.tags[pos:ts]
        base = sent.offsets[ts]
        piece = sent.text[base:sent.offsets[te - 1] + len(sent.tokens[te - 1])]
        new = apply_edits(piece, [(s - base, e - base, n) for s, e, n in ed]).split()
        old = sent.tags[ts:te]
        if len(new) == len(old):
            new_tags = list(old)
        elif all(t == "O" for t in old):
            new_tags = ["O"] * len(new)
        else:  # one whole entity (check_entities made sure)
            typ = sent.entities[(ts, te)]
            new_tags = [f"U-{typ}"] if len(new) == 1 else [f"B-{typ}"] + [f"I-{typ}"] * (len(new) - 2) + [f"L-{typ}"]
        if head is not None and span is None and any(s <= head[0] < max(e, s + 1) for s, e, _ in ed):
            span = [len(tokens), len(tokens) + len(new)]
        if hs is not None and te <= hs:
            shift += len(new) - (te - ts)
        tokens += new
        tags += new_tags
        pos = te
    tokens += sent.tokens[pos:]
    tags += sent.tags[pos:]
    if head is not None and span is None:  # the head mention kept its words
        span = [hs + shift, he + shift]
    return tokens, (to_bio(tags) if sent.bio else tags), span
