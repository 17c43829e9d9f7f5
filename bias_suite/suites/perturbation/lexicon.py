"""An attribute's identity terms as a lexicon: what each term is (group,
slot kind, position in its list) and one compiled regular expression that
finds every mention of the attribute in a sentence.

Kinds of mention, each a named group of the expression:

``np``
    a noun phrase or plural of the file (``identity_np``,
    ``identity_plural``: "woman", "Jews", "older people"), its first letter
    in either case, unless a person noun follows ("senior" in "senior
    engineer" is no mention);
``exact``
    a first name (``person``) or a country (``country``), exactly as the file
    spells it ("Emma", "South Korea"; "china" is not "China");
``adj``
    an adjective (``identity_adj``) right before a person noun ("a Muslim
    doctor", "white men", ``words.PERSON_NOUNS``);
``pred``
    an adjective the file spells with a capital, after a form of "be"
    ("she is Muslim.", "they were Japanese and ..."), where a full stop,
    comma, "and", "or", "too" or the end follows;
``pro``
    a gendered pronoun, for attributes whose groups are named ``female`` and
    ``male`` (``words.PRONOUNS``);
``hon``
    an honorific before a capitalised word ("Mr. Jones", "Miss Daisy", "Sir
    Elton"), for a lexicon made by :func:`with_person_words`.

:func:`with_person_words` adds the person nouns of ``words.GENDER_NOUNS``
(and a user's own pairs, ``--pairs``) as *paired* kinds: a paired term
swaps with the term of the same row in each other group, never with the
other rows ("mother" -> "father", not "dad").
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ...exceptions import SuiteError, did_you_mean
from .words import (CLITIC_COPULAS, COPULAS, GENDER_NOUNS, GENDER_PLURALS, HONORIFICS, KNIGHTHOODS,
                    NEUTRAL_COUNTERPARTS, PERSON_NOUNS, PRONOUN_GROUPS, PRONOUN_ROLES, alternation)

__all__ = ["Entry", "Lexicon", "lexicon_of", "load_lexicon", "bundled_attributes", "with_person_words", "KINDS",
           "PAIRED_KINDS", "FIXED_KINDS", "PLURAL_KINDS"]

KINDS = ("identity_np", "identity_plural", "identity_adj", "person", "country")
#: person nouns and a user's pairs: term i of a group swaps with term i of another, nothing else
PAIRED_KINDS = ("paired_np", "paired_plural")
#: kinds whose term never changes with the term choice (paired nouns, honorifics)
FIXED_KINDS = PAIRED_KINDS + ("honorific", "knighthood")
PLURAL_KINDS = ("identity_plural", "paired_plural")
_NP_KINDS = ("identity_np", "identity_plural") + PAIRED_KINDS
_EXACT_KINDS = ("person", "country")
_LEFT = r"(?<![\w\-'’])"
# person words (with_person_words): a quote or a dash before a word is no part of it ("''husband''", " -she")
_LEFT_PERSON = r"(?<!\w)(?<!\w[\-'’])"
_RIGHT = r"(?![\w\-])"
_PERSON = r"(?:" + alternation(PERSON_NOUNS) + r")" + _RIGHT
_TOKEN = re.compile(r"\w+")


@dataclass(frozen=True)
class Entry:
    """One term of an identity file: ``terms[group][kind][index]``."""

    group: str
    kind: str
    index: int


def _both_cases(term: str) -> list:
    return list(dict.fromkeys([term, term[:1].upper() + term[1:], term[:1].lower() + term[1:]]))


def _key(term: str) -> str:
    """Lookup key of a noun phrase or adjective: first letter lower-cased."""
    return term[:1].lower() + term[1:]


@dataclass
class Lexicon:
    """The identity terms of one attribute, ready to find mentions.

    ``terms[group][kind]`` are the file's lists. ``pronouns`` says what the
    gendered pronouns are to this attribute: ``"mention"`` (they are
    mentions of the groups ``female`` and ``male``: the gender attribute),
    ``"along"`` (they follow the swapped name: an attribute of first names)
    or ``None`` (left alone)."""

    attribute: str
    groups: list
    terms: dict
    path: str | None = None
    pronouns: str | None = None
    honorifics: bool = False    # "Mr.", "Mrs.", "Ms.", "Miss", "Sir", "Dame" before a capitalised word
    fixed: frozenset = frozenset(FIXED_KINDS)   # kinds whose term i only swaps with term i (no term choices)
    extra_names: dict = field(default_factory=dict)   # first name -> group: mentions beyond the file's (--unlisted-names)
    pattern: re.Pattern = field(init=False, repr=False)
    entries: dict = field(init=False, repr=False)   # (named group, key) -> [Entry, ...]
    first_words: frozenset = field(init=False, repr=False)

    def __post_init__(self):
        self.entries = {}
        parts = []
        firsts = {_TOKEN.findall(w.lower())[0] for g in self.groups for ws in self.terms[g].values() for w in ws
                  if _TOKEN.search(w)}
        if self.honorifics:
            firsts |= {h.lower() for g in self.groups if g in HONORIFICS for h in HONORIFICS[g]}
            firsts |= {KNIGHTHOODS[g].lower() for g in self.groups if g in KNIGHTHOODS}
        firsts |= {n.lower() for n in self.extra_names}
        self.first_words = frozenset(firsts | (set(PRONOUN_ROLES) if self.pronouns else set()))
        np_terms, exact_terms, adj_terms, pred_terms = [], [], [], []
        for g in self.groups:
            for kind, words in self.terms[g].items():
                for i, w in enumerate(words):
                    if not w or kind in ("honorific", "knighthood") or (kind in PAIRED_KINDS and
                                                                        w in NEUTRAL_COUNTERPARTS):
                        continue  # a gap; honorifics have their own pattern; "actor" is said of anyone
                    if kind in _NP_KINDS:
                        np_terms += _both_cases(w)
                        self.entries.setdefault(("np", _key(w)), []).append(Entry(g, kind, i))
                    elif kind in _EXACT_KINDS:
                        exact_terms.append(w)
                        self.entries.setdefault(("exact", w), []).append(Entry(g, kind, i))
                    elif kind == "identity_adj":
                        adj_terms += _both_cases(w)
                        self.entries.setdefault(("adj", _key(w)), []).append(Entry(g, kind, i))
                        if w[:1].isupper():
                            pred_terms.append(w)
        for name, g in self.extra_names.items():
            if ("exact", name) not in self.entries:
                exact_terms.append(name)
                self.entries[("exact", name)] = [Entry(g, "extra", -1)]   # its place is chosen per sentence (find)
        left = _LEFT_PERSON if self.honorifics or self.extra_names else _LEFT
        if self.honorifics:
            hons = []
            for g in self.groups:
                for h in HONORIFICS.get(g, ()):
                    hons.append(h)
                    self.entries[("hon", h)] = [Entry(g, "honorific", 0)]
                if g in KNIGHTHOODS:
                    hons.append(KNIGHTHOODS[g])
                    self.entries[("hon", KNIGHTHOODS[g])] = [Entry(g, "knighthood", 0)]
            parts.append(rf"{left}(?P<hon>{alternation(hons)})(?=\.?\s+[A-Z])")
        if np_terms:
            # "senior" in "senior engineer" is no age group; but "women voters" are women (person words: gender)
            head = "" if self.honorifics else rf"(?!\s+{_PERSON})"
            parts.append(rf"{left}(?P<np>{alternation(np_terms)}){_RIGHT}{head}")
        if exact_terms:
            parts.append(rf"{left}(?P<exact>{alternation(exact_terms)}){_RIGHT}")
        if adj_terms:
            parts.append(rf"{left}(?P<adj>{alternation(adj_terms)})(?=\s+{_PERSON})")
        if pred_terms:
            copula = rf"(?:(?<![\w\-])(?i:{alternation(COPULAS)})|(?<=\w)['’](?i:{alternation(CLITIC_COPULAS)}))"
            parts.append(rf"{copula}\s+(?:(?i:not|so|very|also|openly|proudly)\s+)?"
                         rf"(?P<pred>{alternation(pred_terms)})(?=\s*(?:[.,;:!?]|$)|\s+(?:and|or|too)\b)")
        if self.pronouns:
            parts.append(rf"{left}(?P<pro>(?i:{alternation(PRONOUN_ROLES)})){_RIGHT}")
        # \b first: the engine tries the alternatives at word starts (and apostrophes) only
        self.pattern = re.compile(r"(?:\b|(?=['’]))(?:" + "|".join(parts) + ")" if parts else r"(?!x)x")

    def may_mention(self, text: str) -> bool:
        """False when no word of ``text`` begins a term (or is a pronoun):
        a set lookup of the sentence's words that spares most sentences the
        expression."""
        return not self.first_words.isdisjoint(_TOKEN.findall(text.lower()))

    def lookup(self, kind: str, surface: str) -> list:
        """The entries a matched surface string stands for (``kind``: the named group)."""
        if kind in ("exact", "hon"):
            return self.entries.get((kind, surface), [])
        if kind == "pred":
            return self.entries.get(("adj", _key(surface)), [])
        return self.entries.get((kind, _key(surface)), [])

    def group_has_pronouns(self, group: str) -> bool:
        return self.pronouns is not None and group in PRONOUN_GROUPS

    def kinds(self) -> list:
        return list(self.terms[self.groups[0]])

    def has_kind(self, group: str, kind: str) -> bool:
        """Whether ``group`` has terms of ``kind`` (a group may lack a paired
        noun: gender's non_binary has no "mother")."""
        return bool(self.terms[group].get(kind))


def lexicon_of(identity_terms) -> Lexicon:
    """The lexicon of a loaded identity-term file
    (:class:`~bias_suite.suites.loader.IdentityTerms`)."""
    it = identity_terms
    terms = {g: {k: list(v) for k, v in it.terms[g].items()} for g in it.groups}
    kinds = set(terms[it.groups[0]])
    gendered = set(PRONOUN_GROUPS) <= set(it.groups)
    if "person" in kinds:
        pronouns = "along" if set(PRONOUN_GROUPS) & set(it.groups) else None
    else:
        pronouns = "mention" if gendered else None
    return Lexicon(it.attribute, list(it.groups), terms, it.path, pronouns)


def with_person_words(lex: Lexicon, pairs=(), first_names: bool = False) -> Lexicon:
    """``lex`` with the person words the engine knows beyond the identity
    file, as :data:`PAIRED_KINDS` terms: for a lexicon whose pronouns are
    mentions (``gender``), the person nouns of ``words.GENDER_NOUNS`` and
    ``words.GENDER_PLURALS`` and the honorifics; for any lexicon, ``pairs``,
    the user's own rows ``{group: word}`` of this attribute (``--pairs``).
    A group missing from a row has no term of that row. ``first_names``:
    for an attribute of first names, the common first names of one gender
    (first_names.py) are mentions too, each swapped for a listed name."""
    from .first_names import FIRST_NAME_GROUPS

    extra = {}
    if first_names and lex.pronouns == "along" and "person" in lex.kinds():
        extra = {n: g for n, g in FIRST_NAME_GROUPS.items() if g in lex.groups}
    rows = []
    gendered = lex.pronouns == "mention" and set(PRONOUN_GROUPS) <= set(lex.groups)
    if gendered:
        rows += [({"female": f, "male": m}, "paired_np") for f, m in GENDER_NOUNS]
        rows += [({"female": f, "male": m}, "paired_plural") for f, m in GENDER_PLURALS]
    rows += [(row, "paired_plural" if _looks_plural(row) else "paired_np") for row in pairs]
    if not rows and not gendered and not extra:
        return lex
    terms = {g: {k: list(v) for k, v in lex.terms[g].items()} for g in lex.groups}
    for row, kind in rows:
        # one index per row in every group of the row; a group without the row gets a gap it never uses
        n = max(len(terms[g].get(kind, [])) for g in lex.groups)
        for g in lex.groups:
            words = terms[g].setdefault(kind, [])
            words += [""] * (n - len(words)) + ([row[g]] if g in row else [])
    for g in lex.groups:
        for kind in PAIRED_KINDS:
            if kind in terms[g] and not any(terms[g][kind]):
                del terms[g][kind]
    if gendered:
        for g in PRONOUN_GROUPS:
            terms[g]["honorific"] = [HONORIFICS[g][0]]
            terms[g]["knighthood"] = [KNIGHTHOODS[g]]
    # gender: "woman" swaps with "man" only, not "boy" (which would change the age too)
    fixed = frozenset(FIXED_KINDS) | (frozenset(_NP_KINDS) if gendered else frozenset())
    return Lexicon(lex.attribute, lex.groups, terms, lex.path, lex.pronouns, honorifics=gendered, fixed=fixed,
                   extra_names=extra)


def _looks_plural(row: dict) -> bool:
    """A user's pair is plural when every word of it ends in a plural -s
    (not -ss, -us, -is) or is an irregular plural."""
    def plural(w):
        w = w.lower()
        return w.endswith(("men", "people", "children", "wives")) or (w.endswith("s") and not w.endswith(("ss", "us", "is")))

    return all(plural(w) for w in row.values())


def bundled_attributes() -> dict:
    """``{attribute: path}`` of the bundled identity-term files."""
    from ...paths import data_dir

    return {p.stem: p for p in sorted(Path(data_dir("identity_terms")).glob("*.yaml"))}


def load_lexicon(name_or_path) -> Lexicon:
    """The lexicon of a bundled attribute (``"gender"``) or of an
    identity-term file (a path to a ``.yaml`` file)."""
    from ..loader import load_identity_terms

    text = str(name_or_path)
    bundled = bundled_attributes()
    if text in bundled:
        return lexicon_of(load_identity_terms(bundled[text]))
    path = Path(text)
    if path.suffix.lower() in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise SuiteError("no such identity-term file", file=path)
        return lexicon_of(load_identity_terms(path))
    raise SuiteError(f"unknown attribute {text!r}; the bundled ones are {sorted(bundled)}"
                     f"{did_you_mean(text, sorted(bundled))}, or give an identity-term file (.yaml)")
