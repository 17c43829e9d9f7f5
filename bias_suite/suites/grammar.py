"""Surface grammar of generated sentences: indefinite articles by sound,
capitalisation at sentence starts, spacing.

CheckList's own article rule looks at the first letter only ("an
university"); bias_suite chooses by the sound of the word instead.
"""
from __future__ import annotations

import re

# Words spelt with a vowel but read with a consonant sound (and vice versa).
_CONSONANT_SOUND_PREFIXES = (
    "eu", "ewe", "one", "once", "ouija", "uni", "use", "usu", "uti", "uto", "ure", "uri", "uro",
    "ukr", "ugand", "urug", "ural", "uvul", "uku", "ufo",
)
_SILENT_H = ("hour", "honest", "honor", "honour", "heir", "herb")
# Letters whose English names start with a vowel sound (acronyms are read letter by letter).
_VOWEL_LETTERS = set("AEFHILMNORSX")


def _is_acronym(word: str) -> bool:
    core = re.sub(r"[^A-Za-z]", "", word.split("-")[0])
    return len(core) >= 2 and core.isupper()


def article(phrase: str) -> str:
    """The indefinite article for ``phrase``: "a" or "an", by sound.

    >>> [article(w) for w in ["doctor", "engineer", "LGBT person", "European",
    ...                       "university", "hour", "8-year-old", "NGO", "Uzbek"]]
    ['a', 'an', 'an', 'a', 'a', 'an', 'an', 'an', 'an']
    """
    word = phrase.strip().split(" ")[0] if phrase.strip() else ""
    if not word:
        return "a"
    if word[0].isdigit():
        digits = re.match(r"\d+", word).group()
        if digits.startswith("8"):
            return "an"
        if digits in ("11", "18") or (len(digits) in (5, 8) and digits[:2] in ("11", "18")):
            return "an"
        return "a"
    if _is_acronym(word):
        return "an" if word[0].upper() in _VOWEL_LETTERS else "a"
    low = word.lower()
    if low.startswith(_SILENT_H):
        return "an"
    if low == "u":
        return "a"
    if low[0] in "aeiou":
        if low.startswith(_CONSONANT_SOUND_PREFIXES) and not low.startswith(("unin", "unim", "unid", "unil")):
            return "a"
        return "an"
    return "a"


def with_article(phrase: str) -> str:
    """``phrase`` preceded by its indefinite article."""
    return f"{article(phrase)} {phrase}"


def capitalize_first(s: str) -> str:
    """Upper-case the first letter, leaving the rest as written ("iPhone" aside)."""
    for i, ch in enumerate(s):
        if ch.isalpha():
            return s[:i] + ch.upper() + s[i + 1 :]
        if not ch.isspace() and ch not in "\"'([“‘":
            return s
    return s


_SPACES = re.compile(r"[ \t]{2,}")
_SPACE_BEFORE_PUNCT = re.compile(r" +([,.;:!?])")
_SENTENCE_START = re.compile(r"([.!?][\"'”’)]?\s+)([a-z])")


def tidy(text: str) -> str:
    """Collapse repeated spaces, drop spaces before punctuation, strip, and
    capitalise the first letter of each sentence."""
    text = _SPACES.sub(" ", text.strip())
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = capitalize_first(text)
    return _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), text)
