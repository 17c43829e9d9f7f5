"""Scorer of the hand-checked perturbation gold set (``tests/data/perturb_gold``).

The gold set (its README documents the schema) says, for each real sentence
and each attribute (``gender``, ``names``), what a careful person would do:
swap it (``changed``: the exact words that must change and their
replacements), skip it (``skipped``, with a reason), or find nothing to swap
(``no mention``). This module holds a perturber's outputs against it, with
the unit of issue 51: one swapped sentence, RIGHT when every variant written
from it is right, WRONG when a word that is not a mention changes, a listed
mention is left as it was, or a replacement is not one the row accepts.

Typical use (pytest puts ``tests/`` on ``sys.path``; a script adds it)::

    from perturb_gold import load_gold, score

    rows = load_gold("heldout")
    outputs = {row["id"]: {"outcome": "changed", "reason": None,
                           "variants": [{"group": "female", "text": "..."}]}
               for row in rows}
    summary = score(rows, outputs, "gender")
    summary["precision"], summary["precision_wilson"], summary["recall"]

A variant is a string or a ``{"group": ..., "text": ...}`` mapping (or a
``(group, text)`` pair); with the group the scorer checks the variant as that
group's (the sentence's own group, the other binary group, or a group
without pronouns such as ``non_binary``), without it the variant is right
when any reading makes it right. A variant equal to the sentence is its
original and is not judged.

Tokens are the whitespace-separated words of the text, punctuation attached;
each is read as prefix + core + suffix (``''Mr.`` is ``''``, ``Mr``, ``.``)
and aligned with ``difflib.SequenceMatcher``.
"""
from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist

__all__ = [
    "GOLD_DIR", "ATTRIBUTES", "OUTCOMES", "REASONS", "TYPES", "NAME_PLACEHOLDER", "FEMALE_NAMES", "MALE_NAMES",
    "load_gold", "validate_row", "tokens", "split_token", "check_variant", "expected_variant", "score_row",
    "score", "wilson_interval", "names_listed", "variants_from_examples", "RowScore",
]

GOLD_DIR = Path(__file__).resolve().parent / "data" / "perturb_gold"
ATTRIBUTES = ("gender", "names")
OUTCOMES = ("changed", "skipped", "no mention")
#: Reason categories of the gold's ``skipped`` rows (README: "Reasons").
REASONS = ("several people", "her ambiguous", "title of work", "not a first name", "not a person",
           "first name", "idiom", "context")
#: Hard-case types of the gold rows (README: "Types").
TYPES = ("honorific", "title_of_work", "surname_first_name", "name_after_honorific", "her_object_possessive",
         "her_ditransitive", "plural_possessive", "ess_noun", "kinship_role_noun", "several_people",
         "rank_before_name", "plain_pronoun", "plain_first_name", "no_mention")
NAME_PLACEHOLDER = "<name>"
SOURCES = ("movieReviewSnippets", "nytEditorialSnippets", "tweets", "amazonReviewSnippets")

# The first names a "<name>" may become: the bundled names file's, written
# out here so that the reference does not move with that file.
FEMALE_NAMES = frozenset(
    "Emma Olivia Sophia Isabella Ava Mia Charlotte Amelia Abigail Emily Elizabeth Ella Chloe Natalie Hannah "
    "Samantha Sarah Jessica Jennifer Rachel Megan Lauren Nicole Stephanie Rebecca".split())
MALE_NAMES = frozenset(
    "Liam Noah Oliver James William Benjamin Lucas Henry Alexander Michael Daniel Matthew Joseph David Samuel "
    "Andrew Christopher Joshua Ethan Jacob Anthony Thomas Ryan Nicholas Jonathan".split())
_NAME_GROUP = {**{n.lower(): "female" for n in FEMALE_NAMES}, **{n.lower(): "male" for n in MALE_NAMES}}

# Term choices of the bundled gender file (woman/man, girl/boy and plurals
# aligned by position; a sentence's own group writes its other terms too).
# Accepted only with ``term_choices=True``: "a woman" -> "a boy" changes
# the age as well as the gender, which the gold does not ask for.
_CHOICES = {"female": [["woman", "girl"], ["women", "girls"]], "male": [["man", "boy"], ["men", "boys"]]}

# Replacements accepted in a variant of a group without pronouns
# (``non_binary``): gender-neutral nouns and the honorific Mx.
NEUTRAL_TERMS = frozenset("""person people persons individual individuals adult adults kid kids child children
youth teen teenager parent parents grandparent grandparents sibling siblings spouse spouses partner partners
royal royals monarch monarchs ruler rulers sovereign actor actors performer performers server servers host hosts
hero heroes protagonist lead friend friends folks cousin cousins nibling niblings Mx. Mx""".split())
_NEUTRAL_ADJ = ("non-binary", "genderqueer")

_ARTICLES = ("a", "an")
_LEAD = re.compile(r"^[\"'“”‘’(\[{<*#@\-–—]+")
_TRAIL = re.compile(r"(''|[\"“”.,;:!?)\]}>*…]+)$")
_POSS = ("'s", "’s", "'", "’")


# --------------------------------------------------------------------- data
def load_gold(which: str | Path = "dev") -> list[dict]:
    """Rows of ``dev.jsonl`` or ``heldout.jsonl`` (``which`` = "dev",
    "heldout", "all" for both, or a path)."""
    if which == "all":
        return load_gold("dev") + load_gold("heldout")
    path = Path(which) if str(which).endswith(".jsonl") else GOLD_DIR / f"{which}.jsonl"
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def tokens(text: str) -> list[str]:
    """The words of ``text``: split on whitespace, punctuation attached."""
    return text.split()


def split_token(tok: str) -> tuple[str, str, str]:
    """``(prefix, core, suffix)``: leading quotes and brackets, the word, and
    trailing punctuation (a possessive apostrophe stays in the core)."""
    m = _LEAD.match(tok)
    prefix = m.group(0) if m else ""
    rest = tok[len(prefix):]
    suffix = ""
    while True:
        m = _TRAIL.search(rest)
        if m and m.start() > 0:
            suffix = m.group(0) + suffix
            rest = rest[: m.start()]
        elif len(rest) > 2 and rest[-1] in "'’" and not rest[-2].isalpha():
            suffix = rest[-1] + suffix       # a closing quote after punctuation
            rest = rest[:-1]
        else:
            break
    return prefix, rest, suffix


def _norm(word: str) -> str:
    return split_token(word)[1].lower()


def _base_poss(core: str) -> tuple[str, str]:
    for p in _POSS:
        if core.endswith(p) and len(core) > len(p):
            return core[: -len(p)], p
    return core, ""


def _matches(core: str, frm: str) -> str | None:
    """How ``core`` (a token's core) is the mention ``frm``: "whole", "base"
    (``frm`` plus a possessive ending), or None."""
    c, f = core.lower(), _norm(frm)
    if c == f:
        return "whole"
    base, poss = _base_poss(c)
    if poss and base == f:
        return "base"
    return None


def _positions(toks: list[str], word: str, occurrence: int | None) -> list[int]:
    hits = [i for i, t in enumerate(toks) if _matches(split_token(t)[1], word)]
    if occurrence is not None:
        return [hits[occurrence - 1]] if 0 < occurrence <= len(hits) else []
    return hits


def _as_list(to) -> list[str]:
    return [to] if isinstance(to, str) else list(to)


def validate_row(row: dict) -> list[str]:
    """What is wrong with a gold row (empty when it is well formed): fields,
    outcomes, reasons, and every listed word found in the text."""
    problems = []
    for key in ("id", "source", "source_id", "line", "text", "types", "expected"):
        if key not in row:
            problems.append(f"missing {key!r}")
    if problems:
        return problems
    if row["source"] not in SOURCES:
        problems.append(f"unknown source {row['source']!r}")
    if row["id"] != f"{row['source']}:{row['source_id']}":
        problems.append("id is not SOURCE:SOURCE_ID")
    unknown = [t for t in row["types"] if t not in TYPES]
    if unknown or not row["types"]:
        problems.append(f"types {row['types']!r}")
    toks = tokens(row["text"])
    for attr in ATTRIBUTES:
        exp = row["expected"].get(attr)
        if exp is None:
            problems.append(f"{attr}: no expectation")
            continue
        outcome = exp.get("outcome")
        if outcome not in OUTCOMES:
            problems.append(f"{attr}: outcome {outcome!r}")
        if outcome == "skipped" and exp.get("reason") not in REASONS:
            problems.append(f"{attr}: reason {exp.get('reason')!r}")
        if outcome == "changed":
            changes = exp.get("changes") or []
            if not changes:
                problems.append(f"{attr}: changed without changes")
            if attr == "names":
                if exp.get("name_group") not in ("female", "male", "unknown"):
                    problems.append("names: name_group")
                if not any(NAME_PLACEHOLDER in _as_list(c["to"]) for c in changes):
                    problems.append("names: no <name> change")
            elif exp.get("group") not in ("female", "male"):
                problems.append("gender: group")
            for c in changes:
                if not _positions(toks, c["from"], c.get("occurrence")):
                    problems.append(f"{attr}: {c['from']!r} (occurrence {c.get('occurrence')}) not in the text")
        elif "changes" in exp:
            problems.append(f"{attr}: changes listed for {outcome!r}")
        for k in exp.get("keep", []):
            if not _positions(toks, k["word"], k.get("occurrence")):
                problems.append(f"{attr}: keep {k['word']!r} not in the text")
    return problems


# ---------------------------------------------------------------- variants
def _case_ok(src_core: str, new: str, canonical: str) -> bool:
    letters = [ch for ch in src_core if ch.isalpha()]
    if len(letters) > 1 and all(ch.isupper() for ch in letters):
        return new.upper() == new
    if src_core[:1].isupper():
        return new[:1].isupper()
    return new[:1].islower() or canonical[:1].isupper()


def _article_for(word: str) -> str | None:
    w = split_token(word)[1]
    if not w or not w[:1].isalpha() or (len(w) > 1 and w.isupper()):
        return None
    lw = w.lower()
    if lw.startswith(("hour", "honest", "honor", "honour", "heir")):
        return "an"
    if lw.startswith(("uni", "use", "usu", "uti", "eu", "one", "once")):
        return "a"
    return "an" if lw[0] in "aeiou" else "a"


@dataclass
class _Mention:
    index: int
    frm: str
    to: list[str]
    how: str          # "whole" or "base"
    optional: bool
    follow: bool      # names: a pronoun/noun/honorific that follows the name's group
    is_name: bool


def _mentions(row: dict, attribute: str, toks: list[str]) -> dict[int, _Mention]:
    exp = row["expected"][attribute]
    out: dict[int, _Mention] = {}
    for c in exp.get("changes", []):
        to = _as_list(c["to"])
        for i in _positions(toks, c["from"], c.get("occurrence")):
            how = _matches(split_token(toks[i])[1], c["from"])
            out[i] = _Mention(i, c["from"], to, how, bool(c.get("optional")),
                              attribute == "names" and NAME_PLACEHOLDER not in to, NAME_PLACEHOLDER in to)
    return out


def _keeps(row: dict, attribute: str, toks: list[str]) -> set[int]:
    out = set()
    for k in row["expected"][attribute].get("keep", []):
        out.update(_positions(toks, k["word"], k.get("occurrence")))
    return out


def _with_poss(rep: str, m: _Mention, src_core: str) -> list[str]:
    """The replacement ``rep`` as the token's core: with the source's
    possessive ending when the mention matched its base. The replacement's
    own trailing punctuation ("Ms.") is the source token's to give."""
    rep = split_token(rep)[1] or rep
    if m.how != "base":
        return [rep]
    poss = _base_poss(src_core)[1]
    forms = [rep + "'s"]
    if rep[-1:].lower() == "s":
        forms.append(rep + "'")
    if poss.startswith("’"):
        forms = [f.replace("'", "’") for f in forms] + forms
    return forms


def _accepted(m: _Mention, reading: str, own: str, term_choices: bool) -> list[str] | None:
    """Accepted replacement words of a non-name mention under ``reading``
    ("opposite", "same", "neutral"); None means it must stay."""
    key = _norm(m.frm)
    if reading == "opposite":
        acc = list(m.to)
        if term_choices and own in _CHOICES:
            other = _CHOICES["male" if own == "female" else "female"]
            for k, terms in enumerate(_CHOICES[own]):
                if key in terms:
                    acc += [t for t in other[k] if t not in acc]
        return acc
    if reading == "same":
        if term_choices:
            for terms in _CHOICES.get(own, []):
                if key in terms:
                    return [t for t in terms if t != key]
        return None
    # neutral: nouns and honorifics only (pronouns keep their group)
    if key in _PRONOUNS:
        return None
    bases = sorted(NEUTRAL_TERMS) + [f"{adj} {_norm(b)}" for adj in _NEUTRAL_ADJ
                                     for b in list(m.to) + [m.frm] + sorted(NEUTRAL_TERMS)]
    if _base_poss(key)[1]:
        return [b + "'s" for b in bases] + [b + "'" for b in bases if b.endswith("s")]
    return bases


_PRONOUNS = frozenset("he she him her his hers himself herself he's she's he'll she'll he'd she'd".split())


def _check(row: dict, attribute: str, src: str, var: str, reading: str, term_choices: bool) -> tuple[list[str], str | None]:
    """Problems of one variant under one reading, and the group of its new
    names (names attribute)."""
    exp = row["expected"][attribute]
    own = exp.get("group") or exp.get("name_group")
    s_toks, v_toks = tokens(src), tokens(var)
    mentions = _mentions(row, attribute, s_toks)
    keeps = _keeps(row, attribute, s_toks)
    problems: list[str] = []
    name_map: dict[str, str] = {}
    name_groups: set[str] = set()

    def must_change(m: _Mention) -> bool:
        if m.optional:
            return False
        if attribute == "names":
            if m.is_name:
                return True
            return reading == "opposite"
        return reading in ("opposite", "neutral") and _accepted(m, reading, own, term_choices) is not None \
            or (reading == "neutral" and _norm(m.frm) in _PRONOUNS)

    sm = difflib.SequenceMatcher(None, s_toks, v_toks, autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            for i in range(i1, i2):
                m = mentions.get(i)
                if m is not None and must_change(m):
                    problems.append(f"{s_toks[i]!r} (word {i + 1}) left unchanged")
            continue
        for i in range(i1, i2):
            if i in keeps and i not in mentions:
                problems.append(f"{s_toks[i]!r} (word {i + 1}) must not change")
        block_problems = _match_block(s_toks, v_toks, i1, i2, j1, j2, mentions, reading, own, term_choices,
                                      attribute, name_map, name_groups)
        problems += block_problems

    if attribute == "names" and not problems:
        if len(name_groups) > 1:
            problems.append(f"the new names are of several groups: {sorted(name_groups)}")
        if len(set(name_map.values())) < len(name_map):
            problems.append("two different names became the same name")
    group = next(iter(name_groups)) if len(name_groups) == 1 else None
    # articles before every changed word
    for j in range(1, len(v_toks)):
        prev = v_toks[j - 1].lower()
        if prev in _ARTICLES and j < len(v_toks) and not _same_at(sm, j):
            want = _article_for(v_toks[j])
            if want and want != prev:
                problems.append(f"article {v_toks[j - 1]!r} before {v_toks[j]!r}")
    return problems, group


def _same_at(sm: difflib.SequenceMatcher, j: int) -> bool:
    """Whether variant word ``j`` is inside an equal block (unchanged)."""
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if j1 <= j < j2:
            return tag == "equal"
    return False


def _match_block(s_toks, v_toks, i1, i2, j1, j2, mentions, reading, own, term_choices, attribute,
                 name_map, name_groups) -> list[str]:
    src_words = " ".join(s_toks[i1:i2]) or "(nothing)"
    var_words = " ".join(v_toks[j1:j2]) or "(nothing)"
    for i in range(i1, i2):
        if i not in mentions and not (s_toks[i].lower() in _ARTICLES and i + 1 in mentions):
            return [f"{s_toks[i]!r} (word {i + 1}) changed to {var_words!r}: not a mention"]
    if i1 == i2:
        return [f"{var_words!r} inserted"]

    names_seen: dict[str, str] = {}

    def rec(si: int, vj: int, local: dict[str, str]) -> dict[str, str] | None:
        if si == i2:
            return local if vj == j2 else None
        tok = s_toks[si]
        if tok.lower() in _ARTICLES and si + 1 in mentions and si not in mentions:
            if vj < j2 and v_toks[vj].lower() in _ARTICLES and v_toks[vj][:1].isupper() == tok[:1].isupper():
                return rec(si + 1, vj + 1, local)
            return None
        m = mentions[si]
        pre, core, suf = split_token(tok)
        if m.is_name:
            if vj >= j2:
                return None
            vpre, vcore, vsuf = split_token(v_toks[vj])
            vbase, vposs = _base_poss(vcore)
            if m.how == "base":
                ok_poss = vposs in ("'s", "’s") or (vposs in ("'", "’") and vbase[-1:].lower() == "s")
                newname = vbase if ok_poss else None
            else:
                newname = vcore if not vposs or vcore.lower() in _NAME_GROUP else None
            if newname is None or vpre != pre or vsuf != suf or newname.lower() not in _NAME_GROUP:
                return None
            if not newname[:1].isupper():
                return None
            key = _norm(m.frm)
            if local.get(key, newname) != newname:
                return None
            grp = _NAME_GROUP[newname.lower()]
            if attribute == "names" and own in ("female", "male"):
                if (reading == "opposite") != (grp != own):
                    return None
            return rec(si + 1, vj + 1, {**local, key: newname})
        acc = _accepted(m, reading, own, term_choices) if attribute == "gender" or m.follow else None
        if attribute == "names" and m.follow and reading != "opposite":
            acc = None
        if acc is None:
            return None
        for rep in acc:
            for form in _with_poss(rep, m, core):
                parts = form.split()
                n = len(parts)
                if vj + n > j2:
                    continue
                cand = v_toks[vj: vj + n]
                want = parts[:]
                want[0] = pre + want[0]
                want[-1] = want[-1] + suf
                if [c.lower() for c in cand] != [w.lower() for w in want]:
                    continue
                if not _case_ok(core, split_token(cand[0])[1], rep):
                    continue
                got = rec(si + 1, vj + n, local)
                if got is not None:
                    return got
        if m.optional and vj < j2 and v_toks[vj] == tok:
            return rec(si + 1, vj + 1, local)
        return None

    found = rec(i1, j1, dict(name_map))
    if found is None:
        return [f"{src_words!r} -> {var_words!r}: not an accepted replacement"]
    for k, v in found.items():
        name_map[k] = v
        name_groups.add(_NAME_GROUP[v.lower()])
    return []


def _reading_of(row: dict, attribute: str, group) -> list[str]:
    exp = row["expected"][attribute]
    if attribute == "names":
        if group is None:
            return ["opposite", "same"]
        own = exp.get("name_group")
        if own == "unknown":
            return ["opposite", "same"]
        return ["same"] if group == own else ["opposite"]
    own = exp.get("group")
    if group is None:
        return ["opposite", "same", "neutral"]
    if group == own:
        return ["same"]
    if group in ("female", "male"):
        return ["opposite"]
    return ["neutral"]


def check_variant(row: dict, attribute: str, variant: str, group: str | None = None,
                  term_choices: bool = False) -> list[str]:
    """Problems of one variant of a gold ``changed`` row (empty: right).

    ``group``: the variant's group when known (the sentence's own group, the
    other binary group, or one without pronouns such as ``non_binary``).
    ``term_choices``: also accept the bundled gender file's other term
    choices (woman -> boy, woman -> girl)."""
    exp = row["expected"][attribute]
    if exp["outcome"] != "changed":
        return [f"the gold says {exp['outcome']!r}" + (f" ({exp['reason']})" if exp.get("reason") else "")]
    src = row["text"]
    if variant == src:
        return []
    first: list[str] | None = None
    for reading in _reading_of(row, attribute, group):
        problems, name_group = _check(row, attribute, src, variant, reading, term_choices)
        if attribute == "names" and not problems and group is not None and name_group not in (None, group):
            problems = [f"new names of group {name_group!r} in a variant of group {group!r}"]
        if not problems:
            return []
        if first is None:
            first = problems
    return first or ["not right"]


def expected_variant(row: dict, attribute: str, name: str | None = None) -> str:
    """The variant a careful person writes for a gold ``changed`` row: every
    listed word replaced by its first replacement (a ``<name>`` by ``name``,
    default the first listed name of the other group; optional changes left
    as they are), the articles before them chosen again."""
    exp = row["expected"][attribute]
    if exp["outcome"] != "changed":
        raise ValueError(f"{row['id']}: the gold says {exp['outcome']!r}")
    toks = tokens(row["text"])
    mentions = _mentions(row, attribute, toks)
    own = exp.get("group") or exp.get("name_group")
    pool = sorted(MALE_NAMES if own == "female" else FEMALE_NAMES)
    names: dict[str, str] = {}
    if name is not None:
        pool = [name] + [p for p in pool if p != name]
    out = list(toks)
    for i, m in sorted(mentions.items()):
        if m.optional:
            continue
        pre, core, suf = split_token(toks[i])
        if m.is_name:
            key = _norm(m.frm)
            if key not in names:
                names[key] = pool[len(names) % len(pool)]
            rep = names[key]
        else:
            rep = m.to[0]
        word = _with_poss(rep, m, core)[0]
        letters = [ch for ch in core if ch.isalpha()]
        if len(letters) > 1 and all(ch.isupper() for ch in letters):
            word = word.upper()
        elif core[:1].isupper():
            word = word[:1].upper() + word[1:]
        out[i] = pre + word + suf
        if i > 0 and toks[i - 1].lower() in _ARTICLES:
            art = _article_for(word)
            if art:
                out[i - 1] = art if toks[i - 1][:1].islower() else art.capitalize()
    return " ".join(out)


# ------------------------------------------------------------------ scoring
@dataclass
class RowScore:
    """One gold row against one perturber output."""

    id: str
    attribute: str
    types: list[str]
    gold: str                    # the gold outcome
    outcome: str                 # the perturber's outcome
    reason: str | None
    swapped: bool
    right: bool | None           # None when not swapped
    problems: list[str] = field(default_factory=list)

    @property
    def skip_has_reason(self) -> bool:
        return self.outcome != "skipped" or bool(self.reason and str(self.reason).strip())


def _variant_pairs(variants) -> list[tuple[str | None, str]]:
    out = []
    for v in variants or ():
        if isinstance(v, str):
            out.append((None, v))
        elif isinstance(v, dict):
            out.append((v.get("group"), v["text"]))
        else:
            g, t = v
            out.append((g, t))
    return out


def _outcome(o: str) -> str:
    o = str(o).strip().lower().replace("_", " ")
    if o not in OUTCOMES:
        raise ValueError(f"unknown outcome {o!r}; expected one of {OUTCOMES}")
    return o


def score_row(row: dict, attribute: str, outcome: str, reason: str | None = None, variants=(),
              term_choices: bool = False) -> RowScore:
    """Judge a perturber's output for one gold row: ``outcome``
    (changed/skipped/no mention), its ``reason`` and the ``variants`` it
    wrote (strings, ``{"group", "text"}`` mappings or ``(group, text)``
    pairs)."""
    exp = row["expected"][attribute]
    outcome = _outcome(outcome)
    res = RowScore(row["id"], attribute, list(row["types"]), exp["outcome"], outcome, reason,
                   swapped=outcome == "changed", right=None)
    if not res.swapped:
        return res
    pairs = [(g, t) for g, t in _variant_pairs(variants) if t != row["text"]]
    if not pairs:
        res.right, res.problems = False, ["swapped, but no variant differs from the sentence"]
        return res
    if exp["outcome"] != "changed":
        res.right = False
        res.problems = [f"swapped; the gold says {exp['outcome']!r}" + (f" ({exp['reason']})" if exp.get("reason") else "")]
        return res
    for g, t in pairs:
        p = check_variant(row, attribute, t, g, term_choices=term_choices)
        if p:
            res.problems.append(f"{t!r}: " + "; ".join(p))
    res.right = not res.problems
    return res


def names_listed(row: dict) -> bool:
    """Whether every first name a gold ``names`` swap changes is a name of the
    bundled names file (a perturber that knows only those can find it)."""
    changes = row["expected"]["names"].get("changes", [])
    froms = [c["from"] for c in changes if NAME_PLACEHOLDER in _as_list(c["to"])]
    return bool(froms) and all(_norm(f) in _NAME_GROUP for f in froms)


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``k / n`` (two-sided)."""
    if n <= 0:
        return (0.0, 1.0)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def score(rows: list[dict], outputs: dict, attribute: str, term_choices: bool = False,
          confidence: float = 0.95) -> dict:
    """Score a perturber over gold rows.

    ``outputs``: gold id -> ``{"outcome", "reason", "variants"}`` (a row
    missing from it counts as ``no mention``). Returns a dict: counts,
    ``precision`` (right / swapped), ``precision_wilson`` (its Wilson
    interval), ``recall`` (swapped among the gold ``changed``),
    ``right_recall`` (right among them), ``recall_listed`` (``names``: recall
    over the rows whose names are all in the bundled names file),
    ``every_skip_has_reason``, the skips
    by reason, ``by_type`` and the ``wrong`` rows with their problems."""
    scores = []
    for row in rows:
        o = outputs.get(row["id"], {"outcome": "no mention"})
        scores.append(score_row(row, attribute, o.get("outcome", "no mention"), o.get("reason"),
                                o.get("variants", ()), term_choices=term_choices))
    swapped = [s for s in scores if s.swapped]
    right = [s for s in swapped if s.right]
    gold_changed = [s for s in scores if s.gold == "changed"]
    skipped = [s for s in scores if s.outcome == "skipped"]
    by_type: dict[str, dict] = {}
    for s in scores:
        for t in s.types:
            d = by_type.setdefault(t, {"rows": 0, "gold_changed": 0, "swapped": 0, "right": 0, "wrong": 0,
                                       "swapped_of_gold_changed": 0, "skipped": 0})
            d["rows"] += 1
            d["gold_changed"] += s.gold == "changed"
            d["swapped"] += s.swapped
            d["right"] += bool(s.swapped and s.right)
            d["wrong"] += bool(s.swapped and not s.right)
            d["swapped_of_gold_changed"] += bool(s.swapped and s.gold == "changed")
            d["skipped"] += s.outcome == "skipped"
    for d in by_type.values():
        d["swap_share"] = d["swapped_of_gold_changed"] / d["gold_changed"] if d["gold_changed"] else None
    reasons: dict[str, int] = {}
    for s in skipped:
        key = str(s.reason).strip() if s.reason and str(s.reason).strip() else "(no reason)"
        reasons[key] = reasons.get(key, 0) + 1
    k, n = len(right), len(swapped)
    listed = [s for s, row in zip(scores, rows) if s.gold == "changed" and attribute == "names" and names_listed(row)]
    return {
        "attribute": attribute,
        "rows": len(scores),
        "gold_changed": len(gold_changed),
        "swapped": n,
        "right": k,
        "wrong": n - k,
        "precision": k / n if n else None,
        "precision_wilson": wilson_interval(k, n, confidence) if n else None,
        "recall": sum(s.swapped for s in gold_changed) / len(gold_changed) if gold_changed else None,
        "right_recall": sum(bool(s.swapped and s.right) for s in gold_changed) / len(gold_changed) if gold_changed else None,
        "recall_listed": sum(s.swapped for s in listed) / len(listed) if listed else None,
        "skipped": len(skipped),
        "skipped_without_reason": sum(not s.skip_has_reason for s in skipped),
        "every_skip_has_reason": all(s.skip_has_reason for s in skipped),
        "skip_reasons": reasons,
        "by_type": by_type,
        "wrong_rows": [(s.id, s.problems) for s in swapped if not s.right],
        "scores": scores,
    }


def variants_from_examples(examples, attribute: str) -> dict[str, list[dict]]:
    """The variants of an examples table (``bias-suite perturb`` output: rows
    with ``template`` = ``SOURCE/ATTRIBUTE``, ``group``, ``text``) by source
    id, as ``{"group", "text"}`` mappings. ``examples``: a DataFrame or an
    iterable of mappings."""
    records = examples.to_dict("records") if hasattr(examples, "to_dict") else examples
    out: dict[str, list[dict]] = {}
    for r in records:
        src, _, attr = str(r["template"]).rpartition("/")
        if attr == attribute:
            out.setdefault(src, []).append({"group": r.get("group"), "text": r["text"]})
    return out
