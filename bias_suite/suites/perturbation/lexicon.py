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
    ``male`` (``words.PRONOUNS``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ...exceptions import SuiteError, did_you_mean
from .words import CLITIC_COPULAS, COPULAS, PERSON_NOUNS, PRONOUN_GROUPS, PRONOUN_ROLES, alternation

__all__ = ["Entry", "Lexicon", "lexicon_of", "load_lexicon", "bundled_attributes", "KINDS"]

KINDS = ("identity_np", "identity_plural", "identity_adj", "person", "country")
_NP_KINDS = ("identity_np", "identity_plural")
_EXACT_KINDS = ("person", "country")
_LEFT = r"(?<![\w\-'’])"
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
    pattern: re.Pattern = field(init=False, repr=False)
    entries: dict = field(init=False, repr=False)   # (named group, key) -> [Entry, ...]
    first_words: frozenset = field(init=False, repr=False)

    def __post_init__(self):
        self.entries = {}
        parts = []
        firsts = {_TOKEN.findall(w.lower())[0] for g in self.groups for ws in self.terms[g].values() for w in ws
                  if _TOKEN.search(w)}
        self.first_words = frozenset(firsts | (set(PRONOUN_ROLES) if self.pronouns else set()))
        np_terms, exact_terms, adj_terms, pred_terms = [], [], [], []
        for g in self.groups:
            for kind, words in self.terms[g].items():
                for i, w in enumerate(words):
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
        if np_terms:
            parts.append(rf"{_LEFT}(?P<np>{alternation(np_terms)}){_RIGHT}(?!\s+{_PERSON})")
        if exact_terms:
            parts.append(rf"{_LEFT}(?P<exact>{alternation(exact_terms)}){_RIGHT}")
        if adj_terms:
            parts.append(rf"{_LEFT}(?P<adj>{alternation(adj_terms)})(?=\s+{_PERSON})")
        if pred_terms:
            copula = rf"(?:(?<![\w\-])(?i:{alternation(COPULAS)})|(?<=\w)['’](?i:{alternation(CLITIC_COPULAS)}))"
            parts.append(rf"{copula}\s+(?:(?i:not|so|very|also|openly|proudly)\s+)?"
                         rf"(?P<pred>{alternation(pred_terms)})(?=\s*(?:[.,;:!?]|$)|\s+(?:and|or|too)\b)")
        if self.pronouns:
            parts.append(rf"{_LEFT}(?P<pro>(?i:{alternation(PRONOUN_ROLES)})){_RIGHT}")
        # \b first: the engine tries the alternatives at word starts (and apostrophes) only
        self.pattern = re.compile(r"(?:\b|(?=['’]))(?:" + "|".join(parts) + ")" if parts else r"(?!x)x")

    def may_mention(self, text: str) -> bool:
        """False when no word of ``text`` begins a term (or is a pronoun):
        a set lookup of the sentence's words that spares most sentences the
        expression."""
        return not self.first_words.isdisjoint(_TOKEN.findall(text.lower()))

    def lookup(self, kind: str, surface: str) -> list:
        """The entries a matched surface string stands for (``kind``: the named group)."""
        if kind == "exact":
            return self.entries.get(("exact", surface), [])
        if kind == "pred":
            return self.entries.get(("adj", _key(surface)), [])
        return self.entries.get((kind, _key(surface)), [])

    def group_has_pronouns(self, group: str) -> bool:
        return self.pronouns is not None and group in PRONOUN_GROUPS

    def kinds(self) -> list:
        return list(self.terms[self.groups[0]])


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
