"""Whose words are they: the checks that skip a sentence whose mentions may
not all be one person's, or whose names are not a person's first name.

:func:`context_skip` reads a :class:`~.engine.Found` and returns a skip
reason (a key of :data:`PEOPLE_SKIPS`) or None:

``her: object or possessive``
    "her" right after a verb that takes two objects (``words.DITRANSITIVES``)
    and before a noun phrase: "I handed her keys" is "gave the keys to her"
    or "gave her keys to someone". Both paths skip it, whatever the tagger
    says.
``several people``
    honorifics of more than one person ("Mr. Smith thanked Mr. Jones").
``surname``
    a listed first name right after an honorific ("Mr. Andrew") or after
    another capitalised word that may be a first name ("Elton John",
    "George Michael").
``rank or title``
    a listed first name right after a rank with no surname after it
    ("Captain James"), or after a title that carries a gender ("Aunt
    Emma"); a capitalised person noun before a name ("Queen Elizabeth",
    "Mother Teresa").
``title``
    a mention inside the title of a work, an organisation, a product or a
    place. By the rule (both paths): inside quotes around title-cased words
    ("Emma"), after a capitalised small word ("There's Something About
    Mary"), as "Name's Capitalised" ("Sophie's Choice") or at the head of
    three or more title-cased words inside a sentence that is otherwise not
    title-cased (a headline in title case throughout is not skipped for its
    capitals). With spaCy's recogniser (the tagger path) also inside a
    ``WORK_OF_ART``, ``ORG``, ``PRODUCT``, ``FAC`` or ``GPE`` entity longer
    than the mention, and after the first name of a ``PERSON`` entity
    ("surname").

Capitalised mentions only: names, and person nouns or honorifics the text
capitalises mid-sentence or before a capitalised word.
"""
from __future__ import annotations

import re

from .first_names import FIRST_NAMES
from .lexicon import PAIRED_KINDS, PLURAL_KINDS
from .pronouns import causative
from .words import (DITRANSITIVES, FOLLOWERS, GENDERED_TITLES, HONORIFICS, IDIOMS, KNIGHTHOODS, NEUTRAL_COUNTERPARTS,
                    NOT_FIRST_NAMES, RANKS, STARTERS, THING_WORDS)

__all__ = ["context_skip", "PEOPLE_SKIPS", "TITLE_ENTITIES", "sentence_initial"]

PEOPLE_SKIPS = {
    "her: object or possessive": "\"her\" right after a verb of two objects (give, hand, send, ...) and before a "
                                 "noun phrase: object or possessive",
    "several people": "honorifics of more than one person (\"Mr. Smith thanked Mr. Jones\")",
    "surname": "a first name right after an honorific or another first name: a surname (\"Mr. Andrew\", "
               "\"Elton John\")",
    "rank or title": "a first name after a rank with no surname after it (\"Captain James\"), or a title of a person "
                     "before a name (\"Aunt Emma\", \"Queen Elizabeth\")",
    "quoted word": "a gendered word in quotes, named rather than said of anyone (\"husband\" on a form)",
    "idiom": "a fixed phrase whose gendered word is no person's (\"earth mother\", \"drag queen\")",
    "title": "inside the title of a work, an organisation, a product or a place (\"Being John Malkovich\", "
             "\"Driving Miss Daisy\")",
}
#: spaCy entity labels whose spans are titles and names of things, not people
TITLE_ENTITIES = frozenset({"WORK_OF_ART", "ORG", "PRODUCT", "FAC", "GPE"})

_NOT_A_FIRST = STARTERS | NOT_FIRST_NAMES | frozenset("a an the of and or in on at to for".split())
_HONORIFIC_WORDS = frozenset(h.lower() for hs in HONORIFICS.values() for h in hs) | \
    frozenset(k.lower() for k in KNIGHTHOODS.values()) | {"mx", "mister", "madam", "madame"}
_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*")
_PREV_WORD = re.compile(r"([A-Za-z][A-Za-z'’\-]*)(\.?)(\s+)\Z")
_OPENERS = "\"'“‘([{"
_QUOTES = re.compile(r"[\"“]([^\"“”]{1,80})[\"”]")
_SMALL = frozenset("a an the of and or in on at to for with from by about as into vs nor but".split())
_CAP_AFTER = re.compile(r"\s+([A-Z][A-Za-z'’\-]*)")
_RUN = re.compile(r"\s+(?:(?:of|the)\s+)?([A-Z][A-Za-z'’\-]*)")
_FULL_NAME = re.compile(r"\.?\s+([A-Z][a-z][A-Za-z'’\-]*)\s+[A-Z][a-z]")
_OF_TITLE = re.compile(r"([A-Z][A-Za-z'’\-]*)\s+(?:of|of the|the)\s+\Z")
_BIGRAM = re.compile(r"(?<![\w\-'’.])([A-Z][a-z][A-Za-z\-]*)(?:\s+[A-Z]\.)?\s+([A-Z][a-z][A-Za-z'’\-]*|[A-Z]\.)")
_CAP_POSS = re.compile(r"(?<![\w\-'’.])([A-Z][a-z][A-Za-z\-]*)['’]s?(?![A-Za-z])")
_TITLE_NAME = re.compile(r"(?<![\w\-'’])([A-Z][a-z]+)\.?\s+(?=([A-Z][a-z][A-Za-z'’\-]*))")
_HONORIFIC_NAME = re.compile(r"(?<![\w\-])(?:Mrs|Mr|Ms|Miss|Dr|Sir|Dame|Madame|Lady|Lord)\.?\s+[A-Z]")
_BYWORD = re.compile(r"(?<![\w\-])an?\s+(?:[A-Z][\w'’\-]*\s+){1,3}(?:sort|kind|type)\s+of\b")
_NEUTRAL_WORD = re.compile(r"(?<![\w\-])(?:" + "|".join(sorted(NEUTRAL_COUNTERPARTS)) + r")(?![\w\-])", re.IGNORECASE)
_OPEN_QUOTES = ('"', "\u201c", "\u2018", "'")
_CLOSE_QUOTES = ('"', "\u201d", "\u2019", "'")
_SURNAME_GAP = re.compile(r"\s+(?:[A-Z]\.\s+)?")
_IDIOM = re.compile(r"(?<![\w\-])(?:" + "|".join(re.escape(i) for i in IDIOMS) + r")(?![\w\-])", re.IGNORECASE)
_CAP_WORD = re.compile(r"(?<![\w\-'’])([A-Z][a-z]+)(?:['’]s?)?(?![\w\-])")
_POSS_CAP = re.compile(r"['’]s\s+[A-Z][a-z]")


def sentence_initial(text: str, start: int) -> bool:
    """Whether ``start`` begins a sentence (after an opening quote or bracket too)."""
    before = text[:start].rstrip()
    while before and before[-1] in _OPENERS:
        before = before[:-1].rstrip()
    return not before or before[-1] in ".!?:;"


def _prev_word(text: str, start: int):
    """``(word, its start)`` of the word right before ``start`` (a full stop
    after it allowed: "Mr."), or None."""
    m = _PREV_WORD.search(text, max(0, start - 30), start)
    return (m.group(1), m.start(1)) if m else None


def _next_word(text: str, end: int):
    m = _CAP_AFTER.match(text, end)
    return m.group(1) if m else None


def title_cased(text: str) -> bool:
    """A headline in title case throughout: most words (small words aside)
    capitalised, four words at least."""
    words = [w for w in _WORD.findall(text) if w.lower() not in _SMALL]
    return len(words) >= 4 and sum(w[:1].isupper() for w in words) >= 0.8 * len(words)


def _ambiguous_her(text: str, x) -> bool:
    prev = _prev_word(text, x.start)
    if prev is None or prev[0].lower() not in DITRANSITIVES or causative(text, x.start, x.end):
        return False  # "made her cry": an object
    m = re.compile(r"\s*([A-Za-z][\w'’\-]*)").match(text, x.end)
    if m is None:
        return False  # punctuation or the end: an object
    nxt = m.group(1).lower()
    return not (nxt in FOLLOWERS or nxt == "own" or (nxt.endswith("ly") and len(nxt) > 4))


def _several_honorifics(text: str, mentions) -> bool:
    """Honorifics (or ranks and titles before a name) of more than one
    person ("Mr. Smith thanked Mr. Jones", "Judge Munson ... Mr. Morris's"),
    or an honorific's person beside someone named by a noun ("Mr. Quayle's
    looks ... women voters", "Ms. Gunter's book ... your wife")."""
    hons = [x for x in mentions if x.kind == "hon"]
    if not hons:
        return False
    people = {_next_word(text, x.end + (text[x.end:x.end + 1] == ".")) for x in hons}
    people |= {m.group(2) for m in _TITLE_NAME.finditer(text) if m.group(1).lower() in RANKS | GENDERED_TITLES
               and m.group(1).lower() not in _HONORIFIC_WORDS}
    return len(people) > 1 or any(x.kind == "np" for x in mentions)


def _capitalised_mid(text: str, x) -> bool:
    return x.surface[:1].isupper() and not sentence_initial(text, x.start)


def _rule_title(text: str, x, headline: bool) -> bool:
    """The rule's reading of a title around mention ``x``."""
    for q in _QUOTES.finditer(text):
        if q.start(1) <= x.start and x.end <= q.end(1):
            words = [w for w in _WORD.findall(q.group(1)) if w.lower() not in _SMALL]
            if words and all(w[:1].isupper() for w in words):
                return True
    if headline:
        return False
    if x.surface[:1].isupper() and _POSS_CAP.match(text, x.end):
        return True   # "Sophie's Choice", "Charlotte's Web", "The King's Speech", "Mother's Day"
    prev = _prev_word(text, x.start)
    if prev is not None and prev[0][:1].isupper() and prev[0].lower() in _SMALL and not sentence_initial(text, prev[1]):
        return True   # "Something About Mary"
    m = _OF_TITLE.search(text, max(0, x.start - 40), x.start)
    if m is not None and not sentence_initial(text, m.start(1)):
        return True   # "The Curious Case of Benjamin Button"
    run, pos = 0, x.end
    while True:
        m = _RUN.match(text, pos)
        if m is None:
            break
        run, pos = run + 1, m.end()
    return run >= 2


def _name_skip(text: str, x, ents, headline: bool):
    """Why the listed first name ``x`` is not one, or None."""
    prev = _prev_word(text, x.start)
    if prev is not None:
        word, at = prev
        low = word.lower()
        if low in _HONORIFIC_WORDS:
            return "surname"
        if low in GENDERED_TITLES and word[:1].isupper():
            return "rank or title"
        if low in RANKS and word[:1].isupper():
            return None if _next_word(text, x.end) else "rank or title"
        if not headline and word[:1].isupper() and (not sentence_initial(text, at) or (
                low not in STARTERS and not low.endswith("ing"))) and low not in _SMALL:
            return "surname"
    if _rule_title(text, x, headline):
        return "title"
    return _entity_skip(x, ents) if ents is not None else None


def _entity_skip(x, ents):
    """spaCy's reading: a mention inside a longer title entity, or inside a
    PERSON entity after its first name (an entity that is the mention
    alone, "Emma" as ORG, is more often the recogniser's error)."""
    for s, e, label, first_end in ents:
        if s <= x.start and x.end <= e:
            if label in TITLE_ENTITIES and (s, e) != (x.start, x.end):
                return "title"
            if label == "PERSON" and x.start >= first_end:
                return "surname"
    return None


def full_names(text: str, ents=None) -> list:
    """``(start, end)`` of what looks like a person's full name: two
    capitalised words (a middle initial between them allowed) whose first
    is no honorific, rank, title, small or common word ("Tim Allen",
    "Naomi Watts"; not "New York", "The Doors", "Mr. Jones"); with spaCy's
    entities, the ``PERSON`` entities of two words or more as well."""
    out = []
    if ents is not None:   # the recogniser's people, and the rule's
        out += [(s, e) for s, e, label, first_end in ents if label == "PERSON" and first_end < e]
    for m in _BIGRAM.finditer(text):
        first = m.group(1).lower()
        second = m.group(2).lower().rstrip("'’s")
        if first in _NOT_A_FIRST or first in RANKS or first in GENDERED_TITLES or second in THING_WORDS or \
                second in _NOT_A_FIRST or first.endswith("ing"):
            continue   # ("Watching Haneke's film")
        prev = _prev_word(text, m.start())
        if prev is not None and prev[0].lower() in _HONORIFIC_WORDS:
            continue  # "Mr. Day Lewis": a surname of two words
        out.append((m.start(), m.end()))
    return out


def _first_names(text: str, found) -> bool:
    """Whether a common first name (first_names.py) other than the
    sentence's own mentions stands in the sentence, not as a surname (after
    an honorific or another capitalised word)."""
    own = {(x.start, x.end) for x in found.mentions}
    for m in _CAP_WORD.finditer(text):
        if m.group(1) not in FIRST_NAMES or (m.start(1), m.end(1)) in own:
            continue
        prev = _prev_word(text, m.start())
        if prev is not None and (prev[0].lower() in _HONORIFIC_WORDS or (
                prev[0][:1].isupper() and not sentence_initial(text, prev[1]) and prev[0].lower() not in _SMALL)):
            continue   # "Mr. Andrew", "Woody Allen": a surname
        return True
    return False


def _other_people(text: str, found, ents) -> bool:
    """Whether someone besides the sentence's one named person is named:
    a full name that is not the mention's own (the mention and the
    capitalised words right after it: "Emma Watson")."""
    spans = []
    for x in found.mentions:
        if x.kind != "pro":
            end = x.end
            while (m := _CAP_AFTER.match(text, end)) is not None:
                end = m.end()
            spans.append((x.start, end))
    for s, e in full_names(text, ents):
        if not any(s <= ms < e or ms <= s < me for ms, me in spans):
            return True
    return False


def context_skip(found, lex, ents=None):
    """A reason of :data:`PEOPLE_SKIPS` to skip ``found``, or None.
    ``ents``: spaCy's entities of the sentence as ``(start, end, label,
    end of the first token)`` (the tagger path), or None (the rule)."""
    text = found.text
    if any(x.pronoun == "her" and _ambiguous_her(text, x) for x in found.mentions):
        return "her: object or possessive"
    if lex.pronouns is None:
        return None
    if lex.pronouns == "along":
        _drop_surnames(found)
    if _several_honorifics(text, found.mentions):
        return "several people"
    if lex.pronouns == "mention" and any(x.kind == "hon" and (m := _FULL_NAME.match(text, x.end)) and
                                         m.group(1) in FIRST_NAMES for x in found.mentions):
        return "first name"   # "Sir Elton John", "Mrs. Emma Thompson": the first name keeps its gender
    why = _mention_skip(text, found, ents) or _capitalised_pronoun(text, found) or \
        _names_around(text, found, lex, ents)
    if why:
        return why
    if any(x.kind == "np" and _quoted(text, x) for x in found.mentions):
        return "quoted word"   # she crossed off "husband" and "wife": words named, not said of anyone
    if lex.pronouns == "mention" and _NEUTRAL_WORD.search(text) and any(
            x.entry is not None and x.entry.kind in PAIRED_KINDS and x.group == "female" for x in found.mentions):
        return "several people"   # "two actresses (and one actor)": the actor is someone else
    if _IDIOM.search(text) or _BYWORD.search(text):
        return "idiom"   # "earth mother", "in a Michael Jackson sort of way"
    if lex.pronouns == "mention" and any(m.group(1).lower() in GENDERED_TITLES - _HONORIFIC_WORDS
                                         for m in _TITLE_NAME.finditer(text)):
        return "rank or title"   # "Lord Byron ... women": a titled person of a gender of their own
    return None


def _mention_skip(text: str, found, ents):
    """The first mention that is a surname, a rank's or inside a title."""
    headline = None
    for x in found.mentions:
        if x.kind == "pro":
            continue
        if headline is None:
            headline = title_cased(text)
        if x.kind == "exact" and x.entry is not None and x.entry.kind == "person":
            why = _name_skip(text, x, ents, headline)
        elif x.kind == "hon" or _capitalised_mid(text, x) or (x.surface[:1].isupper() and _next_word(text, x.end)):
            why = _noun_skip(text, x, ents, headline)
        else:
            why = None
        if why:
            return why
    return None


def _quoted(text: str, x) -> bool:
    before, after = text[:x.start].rstrip(), text[x.end:].lstrip()
    return before.endswith(_OPEN_QUOTES) and after.startswith(_CLOSE_QUOTES)


def _drop_surnames(found) -> None:
    """A name right after another name of the sentence is its surname
    ("George Lucas", "Dylan Thomas"): no mention, it stays as written."""
    names = [x for x in found.mentions if x.kind == "exact"]
    drop = {id(b) for a, b in zip(names, names[1:]) if _SURNAME_GAP.fullmatch(found.text, a.end, b.start)}
    if drop:
        found.mentions = [x for x in found.mentions if id(x) not in drop]


def _capitalised_pronoun(text: str, found):
    """"Talk to Her", "the Girls' blowout": a pronoun or a person noun the
    text capitalises mid-sentence is part of a title (a headline aside)."""
    for x in found.mentions:
        if x.surface[:1].isupper() and x.kind in ("pro", "np") and not sentence_initial(text, x.start) and \
                x.surface != "I" and not title_cased(text):
            return "title"
    return None


def _names_around(text: str, found, lex, ents):
    """Other people named in the sentence: for gender, any full name (its
    pronouns may be that person's: "Tim Allen is great in his role"), or,
    beside an honorific, another person's possessive ("Ms. Hutchins ... Zelda's
    fate"); for names, a full name that is not the mention's."""
    if ents is None and title_cased(text):
        return None   # a headline: every word has its capital
    if lex.pronouns == "mention":
        # a named person's words: a pronoun, or a noun or honorific of one person (plurals are groups)
        singular = any(x.kind in ("pro", "hon") or (x.entry is not None and x.entry.kind not in PLURAL_KINDS)
                       for x in found.mentions)
        if singular and (full_names(text, ents) or _first_names(text, found)):
            return "first name"
        hons = [x for x in found.mentions if x.kind == "hon"]
        if hons:
            surnames = {_next_word(text, x.end + (text[x.end:x.end + 1] == ".")) for x in hons}
            for m in _CAP_POSS.finditer(text):
                prev = _prev_word(text, m.start())
                if m.group(1) not in surnames and not (prev and prev[0].lower() in _HONORIFIC_WORDS | RANKS) \
                        and m.group(1).lower() not in _NOT_A_FIRST:
                    return "several people"
        return None
    starts = {x.start for x in found.mentions}
    first = min((x.start for x in found.mentions if x.kind != "pro"), default=0)
    if lex.pronouns == "along" and (_other_people(text, found, ents) or
                                    _first_names(text, found) or any(
            m.end() - 1 not in starts for m in _HONORIFIC_NAME.finditer(text)) or any(
            x.kind == "pro" and x.start < first for x in found.mentions)):
        # another full name, someone's honorific ("Mr. Schaeffer, Christopher and ..."), or a pronoun before the
        # name, which is someone else's ("... from himself and from newcomer Derek Luke")
        return "several people"
    return None


def _noun_skip(text: str, x, ents, headline: bool):
    """A capitalised person noun or an honorific: before a name ("Queen
    Elizabeth"), or inside a title ("Driving Miss Daisy", "Wonder Woman")."""
    if x.kind != "hon" and _next_word(text, x.end) and not headline:
        return "rank or title"
    prev = _prev_word(text, x.start)
    if not headline and prev is not None and prev[0][:1].isupper() and not (
            sentence_initial(text, prev[1]) and prev[0].lower() in STARTERS):
        return "title"
    if x.kind != "hon" and _rule_title(text, x, headline):
        return "title"
    return "title" if ents is not None and _entity_skip(x, ents) == "title" else None
