"""One sentence, one attribute: find the mentions, then write the variants.

:func:`find` reads a sentence with an attribute's :class:`~.lexicon.Lexicon`
and returns a :class:`Found` (the mentions, all of one group), a skip reason
(a string of :data:`SKIPS`) or None (no mention). :func:`variants` writes
the sentence once per term choice of every group: all the mentions of the
sentence swapped together, consistently.

Term choice ``c`` of group G replaces a mention that is term ``i`` of its
kind (``identity_np``, ``person``, ...) in its own group by term
``(i + c) mod n`` of the same kind in G (n: G's number of terms of that
kind). The choices of G are ``0 .. n - 1`` for the longest such list among
the sentence's mentions (one choice when only pronouns are mentioned). So
two mentions of different terms stay different ("Emma met Olivia" ->
"Liam met Noah"), the same term stays the same, and choice 0 of the
sentence's own group is the sentence itself, unchanged.

Around each swapped mention: the case of a sentence start, of an all-caps
word, or of a capital the text gave a lower-case term is kept; an article
"a"/"an" right before it is chosen again by sound
(:func:`~bias_suite.suites.grammar.article`); a possessive apostrophe after
a word in -s gets its "s" when the new word does not end in -s ("James'
car" -> "Emma's car"; "Emma's" -> "James's").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..grammar import article, capitalize_first
from .lexicon import PLURAL_KINDS, Entry, Lexicon
from .people import PEOPLE_SKIPS
from .pronouns import rule_role
from .words import INSERT_DETERMINERS, INSERT_NOUNS, PERSON_NOUNS, PRONOUN_ROLES, PRONOUNS, alternation

__all__ = ["Mention", "Found", "Guards", "find", "find_insertion", "variants", "SKIPS", "LEFT_OUT", "apply_edits"]

#: why a sentence with a mention gives no template
SKIPS = {
    "several groups": "mentions of more than one group (\"she thanked him\", \"Japanese and Chinese people\")",
    "ambiguous term": "a term the identity file lists under several groups",
    "first name": "a first name: the pronouns and nouns may be that person's (perturb it with the names attribute)",
    "gender noun": "a gender noun (woman, men, ...) that may be the named person's",
    "pronouns of another group": "pronouns that are not of the name's group",
    "entity tags": "NER: a first name outside a PER entity, or a mention that is part of an entity and could change its length",
    "no person noun": "--insert: no determiner + person noun to put an adjective between",
    "one group left": "every other group was left out",
    "dropped in review": "--review: the reviewer dropped the sentence",
    **PEOPLE_SKIPS,
}
#: why a group is left out of a sentence's template
LEFT_OUT = {"no pronouns": "the sentence has gendered pronouns and the group has none to swap to",
            "no such word": "the sentence has a person noun or an honorific (mother, Mr.) the group has no word for"}

_ART = re.compile(r"(?<![\w\-'’])([Aa][Nn]?)(\s+)\Z")
_POSS = re.compile(r"(\s?)(['’])(s?)(?![A-Za-z])")
_OPENERS = "\"'“‘([{"
_ABBREVIATION = re.compile(r"(?:(?<![\w.])(?:[A-Za-z]\.){2,}|(?<![\w\-])(?:Mrs|Mr|Ms|Dr|St|Jr|Sr|Prof|Gen|Col|Lt|Sgt|vs)\.)\Z")
_AFTER_HONORIFIC = re.compile(r"(?<![\w\-])(?:Mrs|Mr|Ms)\.?\s+\Z")


@dataclass
class Mention:
    start: int
    end: int
    surface: str
    kind: str                  # np, exact, adj, pred, pro (lexicon.py)
    group: str
    entry: Entry | None = None
    pronoun: str | None = None  # lower-case form of a pronoun
    role: str | None = None     # of "her" and "his": object/det, indep/det


@dataclass
class Found:
    """A sentence whose mentions are all of one ``group`` (None: an
    insertion, ``--insert``, which has no group of its own)."""

    text: str
    mentions: list
    group: str | None
    insert_at: int | None = None       # --insert: where the adjective goes
    article_at: tuple | None = None    # --insert: (start, end) of an article "a"/"an" before it
    no_first_choice: frozenset = frozenset()   # groups whose term choice 0 would leave a listed name as it is


@dataclass
class Guards:
    """Words of other attributes that make a sentence unsafe to swap:
    ``first_names`` for the gender attribute, ``gender_nouns`` for names."""

    first_names: re.Pattern | None = None
    gender_nouns: re.Pattern | None = None

    @staticmethod
    def of(words_first_names, words_gender_nouns) -> "Guards":
        def pat(words, flags=0):
            words = list(words)
            return re.compile(rf"(?<![\w\-])(?:{alternation(words)})(?![\w\-])", flags) if words else None

        return Guards(pat(words_first_names), pat(words_gender_nouns))

    def has_first_name(self, text: str, honorifics: bool = False) -> bool:
        """Whether ``text`` holds a first name; with ``honorifics``, a name
        right after one is a surname that goes with it ("Mr. Andrew")."""
        if self.first_names is None:
            return False
        for m in self.first_names.finditer(text):
            if not (honorifics and _AFTER_HONORIFIC.search(text, max(0, m.start() - 6), m.start())):
                return True
        return False


def find(text: str, lex: Lexicon, guards: Guards | None = None, keep=frozenset()):
    """The mentions of ``lex``'s attribute in ``text``: a :class:`Found`, a
    skip reason (a key of :data:`SKIPS`) or None when nothing is mentioned.
    ``keep``: lower-cased words that are never mentions (``--keep``)."""
    if not lex.may_mention(text):
        return None
    mentions = []
    for m in lex.pattern.finditer(text):
        kind = m.lastgroup
        s, e = m.span(kind)
        surface = m.group(kind)
        if keep and surface.lower() in keep:
            continue
        if kind == "pro":
            low = surface.lower()
            group = PRONOUN_ROLES[low][0]
            mentions.append(Mention(s, e, surface, kind, group, pronoun=low))
            continue
        entries = lex.lookup(kind, surface)
        groups = {x.group for x in entries}
        if len(groups) != 1:
            return "ambiguous term" if groups else None
        mentions.append(Mention(s, e, surface, kind, entries[0].group, entry=entries[0]))
    terms = [x for x in mentions if x.kind != "pro"]
    if lex.pronouns == "along" and not terms:
        return None  # pronouns alone are no mention of a name
    if not mentions:
        return None
    if lex.pronouns == "along":
        groups = {x.group for x in terms}
        if len(groups) > 1:
            return "several groups"
        if any(x.group not in groups for x in mentions if x.kind == "pro"):
            return "pronouns of another group"
        if guards and guards.gender_nouns is not None and guards.gender_nouns.search(text):
            return "gender noun"
    else:
        groups = {x.group for x in mentions}
        if len(groups) > 1:
            return "several groups"
        singular = any(x.kind in ("pro", "hon") or x.entry.kind not in PLURAL_KINDS for x in mentions)
        if lex.pronouns == "mention" and singular and guards and guards.has_first_name(text, lex.honorifics):
            return "first name"   # (plurals are groups: "two men who discover what William James called ...")
    for x in mentions:
        if x.pronoun in ("her", "his"):
            x.role = rule_role(x.pronoun, text, x.end)
    if any(x.entry is not None and x.entry.kind == "extra" for x in mentions):
        listed = frozenset(x.group for x in mentions if x.entry is not None and x.entry.kind == "person")
        _place_extra_names(mentions)
        # no own group: every variant names listed names, none keeps one of the sentence's
        return Found(text, mentions, None, no_first_choice=listed)
    return Found(text, mentions, groups.pop())


def _place_extra_names(mentions) -> None:
    """Give each distinct first name outside the file (``extra``) a place
    among the file's names that no other name of the sentence holds, so that
    different names stay different ("Robert Altman, Spike Lee" -> "Liam
    Altman, Noah Lee")."""
    used = {x.entry.index for x in mentions if x.entry is not None and x.entry.kind == "person"}
    places = {}
    for x in mentions:
        if x.entry is None or x.entry.kind != "extra":
            continue
        if x.surface not in places:
            k = 0
            while k in used:
                k += 1
            used.add(k)
            places[x.surface] = k
        x.entry = Entry(x.entry.group, "person", places[x.surface])


def _insert_pattern(nouns) -> re.Pattern:
    return re.compile(rf"(?<![\w\-'’])(?P<det>(?i:{alternation(INSERT_DETERMINERS)}))\s+"
                      rf"(?P<noun>(?i:{alternation(nouns)}))(?![\w\-])")


_INSERT_NEUTRAL = _insert_pattern(INSERT_NOUNS)   # gender: "my friend", not "my brother"
_INSERT_ANY = _insert_pattern(PERSON_NOUNS)       # the other attributes: "my Muslim brother" too


def find_insertion(text: str, lex: Lexicon, guards: Guards | None = None):
    """``--insert``: the first determiner + person noun of a sentence without
    a mention ("my friend"; for gender a gender-neutral noun of
    ``words.INSERT_NOUNS``, for the other attributes any of
    ``words.PERSON_NOUNS``), as a :class:`Found` whose variants put each
    identity adjective between the two; a skip reason when the sentence has
    none or is unsafe for the attribute (gender: a first name)."""
    m = (_INSERT_NEUTRAL if lex.pronouns == "mention" else _INSERT_ANY).search(text)
    if m is None:
        return "no person noun"
    if lex.pronouns == "mention" and guards and guards.first_names is not None and guards.first_names.search(text):
        return "first name"
    det = m.group("det")
    art = m.span("det") if det.lower() in ("a", "an") else None
    return Found(text, [], None, insert_at=m.start("noun"), article_at=art)


def _sentence_initial(text: str, start: int) -> bool:
    before = text[:start].rstrip()
    while before and before[-1] in _OPENERS:
        before = before[:-1].rstrip()
    if before.endswith(".") and _ABBREVIATION.search(before):
        return False   # "a D.O.I. spokesman", "Mr. Smith"
    return not before or before[-1] in ".!?"


def _cased(new: str, old: str, old_term: str, initial: bool) -> str:
    """``new`` in the case the text gave ``old`` (``old_term``: how the file
    or the pronoun table spells it): all caps, or a capital the file does
    not have (a sentence start, a title), or the file's own case."""
    if len(old) > 1 and old.isupper() and any(ch.islower() for ch in old_term):
        return new.upper()
    if initial or (old[:1].isupper() and not old_term[:1].isupper()):
        return capitalize_first(new)
    return new


def _article_edit(text: str, start: int, new: str, edits: list) -> None:
    m = _ART.search(text, max(0, start - 8), start)
    if m is None:
        return
    old = m.group(1)
    art = article(new)
    if old.isupper() and len(old) > 1:
        art = art.upper()
    elif old[:1].isupper():
        art = art.capitalize()
    if art != old:
        edits.append((m.start(1), m.end(1), art))


def _possessive_edit(text: str, end: int, old: str, new: str, plural: bool, edits: list) -> None:
    """A possessive after a swapped word, made right for the new word: a
    bare apostrophe gets its "s" when the new word does not end in -s
    ("James' car" -> "Emma's car", "boys' room" -> "men's room"); a plural
    in -s takes the bare apostrophe ("men's" -> "boys'", never "boys's")."""
    m = _POSS.match(text, end)
    if m is None:
        return
    ends_s = new.lower().endswith("s")
    if m.group(3) and plural and ends_s:
        edits.append((m.start(2), m.end(3), m.group(2)))
    elif not m.group(3) and old.lower().endswith("s") and not ends_s:
        edits.append((m.start(2), m.end(2), m.group(2) + "s"))


def apply_edits(text: str, edits) -> str:
    out, pos = [], 0
    for s, e, new in sorted(edits):
        out.append(text[pos:s])
        out.append(new)
        pos = e
    out.append(text[pos:])
    return "".join(out)


def mention_edits(found: Found, lex: Lexicon, group: str, choice: int):
    """The edits that turn ``found.text`` into term choice ``choice`` of
    ``group``: a list of ``(start, end, new text)``, and the variant's term."""
    text, edits, head = found.text, [], None
    for x in found.mentions:
        if x.kind == "pro":
            roles = PRONOUN_ROLES[x.pronoun][1]
            role = x.role if x.role is not None else roles[0]
            file_term, old_term = PRONOUNS[group][role], x.pronoun
        elif x.entry.kind in lex.fixed:
            if group == found.group:  # a paired noun or an honorific of the sentence's group stays as written
                head = head or (x.surface if x.kind == "hon" else lex.terms[group][x.entry.kind][x.entry.index])
                continue
            file_term = old_term = lex.terms[group][x.entry.kind][x.entry.index]
        else:
            words = lex.terms[group][x.entry.kind]
            file_term = words[(x.entry.index + choice) % len(words)]
            own = lex.terms.get(x.entry.group)  # None: an unlisted name (unlisted.py)
            old_term = own[x.entry.kind][x.entry.index] if own is not None else x.surface
        if head is None and x.kind != "pro":
            head = file_term
        if group == found.group and file_term == old_term:
            continue  # the mention stays as written
        new = file_term if x.kind in ("exact", "hon") else _cased(file_term, x.surface, old_term,
                                                                 _sentence_initial(text, x.start))
        edits.append((x.start, x.end, new))
        _article_edit(text, x.start, new, edits)
        if x.kind in ("exact", "np"):
            _possessive_edit(text, x.end, x.surface, new, x.entry is not None and x.entry.kind in PLURAL_KINDS,
                             edits)
    if head is None:
        head = PRONOUNS[group]["subject"] if group in PRONOUNS else group
    return edits, head


def _choices(found: Found, lex: Lexicon, group: str) -> int:
    sizes = [len(lex.terms[group][x.entry.kind]) for x in found.mentions
             if x.kind != "pro" and x.entry.kind not in lex.fixed]
    return max(sizes) if sizes else 1


def _left_out(found: Found, lex: Lexicon, group: str, has_pro: bool):
    """Why ``group`` cannot be written for ``found`` (a key of :data:`LEFT_OUT`), or None."""
    if has_pro and not lex.group_has_pronouns(group):
        return "no pronouns"
    for x in found.mentions:
        if x.kind != "pro" and x.entry.kind in lex.fixed and (
                len(lex.terms[group].get(x.entry.kind, [])) <= x.entry.index
                or not lex.terms[group][x.entry.kind][x.entry.index]):
            return "no such word"
    return None


def variants(found: Found, lex: Lexicon, *, sample=None):
    """``(rows, left_out)``: rows ``(group, term, text, edits)`` of every
    group and term choice (the sentence's own group first with its text
    unchanged, then the others in the file's order; equal texts within a
    group once; ``edits``: the ``(start, end, new text)`` that made it), and
    ``{group: reason}`` for the groups left out (a key of :data:`LEFT_OUT`).
    ``sample(group, n, own)`` picks the choices to write among ``range(n)``
    (default: all; ``own``: the sentence's group, whose choice 0 must stay).
    An unlisted name (``found.group`` None, unlisted.py) has no own group:
    every group in the file's order, the sentence itself not among them."""
    if found.insert_at is not None:
        return _insertions(found, lex, sample), {}
    has_pro = any(x.kind == "pro" for x in found.mentions)
    rows, left = [], {}
    order = ([found.group] if found.group in lex.groups else []) + [g for g in lex.groups if g != found.group]
    for g in order:
        why = _left_out(found, lex, g, has_pro) if g != found.group else None
        if why:
            left[g] = why
            continue
        n = _choices(found, lex, g)
        picks = list(range(n)) if sample is None else sample(g, n, g == found.group)
        if g in found.no_first_choice:
            picks = [c for c in picks if c] or ([1] if n > 1 else [])
        seen = set()
        for c in picks:
            edits, term = mention_edits(found, lex, g, c)
            text = found.text if not edits else apply_edits(found.text, edits)
            if text not in seen:
                seen.add(text)
                rows.append((g, term, text, edits))
    return rows, left


def _insertions(found: Found, lex: Lexicon, sample):
    rows = []
    for g in lex.groups:
        words = lex.terms[g].get("identity_adj") or []
        picks = range(len(words)) if sample is None else sample(g, len(words), False)
        for c in picks:
            adj = words[c]
            new = capitalize_first(adj) if _sentence_initial(found.text, found.insert_at) else adj
            edits = [(found.insert_at, found.insert_at, new + " ")]
            if found.article_at is not None:
                s, e = found.article_at
                old = found.text[s:e]
                art = article(adj)
                art = art.capitalize() if old[:1].isupper() else art
                if art != old:
                    edits.append((s, e, art))
            rows.append((g, adj, apply_edits(found.text, edits), edits))
    return rows
