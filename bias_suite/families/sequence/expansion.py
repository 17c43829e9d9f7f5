"""Sequence-labelling (NER) suites -> examples with tokens and gold BILOU tags.

A ``task: sequence_labelling`` suite is written like a classification suite
(docs/suite_format.md) with two additions:

- ``slot_tags`` (suite level): the tag of each slot's fill, ``U-TYPE`` or
  ``O`` (``{country: U-LOC, company: U-ORG}``). Defaults: ``person`` ->
  ``U-PER``, ``country`` -> ``U-LOC``, every other slot ``O``. A fill of one
  token keeps ``U-X``; a fill of n > 1 tokens becomes ``B-X I-X ... L-X``.
- ``tags`` (per template): the entities among the template's own words, as a
  mapping phrase -> type (``{"United Nations": ORG, Paris: LOC}``). Every
  occurrence of the phrase (as whole tokens, outside slots) is tagged; a
  phrase that does not occur is an error. Every other template token is O.

Rendering follows the classification expansion (``{a:slot}`` articles by
sound, ``{Slot}`` capitalised, sentence-start capitals), then the sentence
is tokenized as a whole with spaCy's English tokenizer (``spacy.blank("en")``,
the tokenizer of spaCy's English pipelines); whitespace tokens are dropped.
A slot fill must cover whole tokens. ``term_span`` is the ``[start, end)``
token range of the identity term (without its article); an NER template has
exactly one identity slot occurrence so that the variants of a template
align token by token outside the term.

Columns: ``EXAMPLE_COLUMNS`` (``label`` is None) plus ``tokens``, ``tags``
(gold BILOU) and ``term_span``.
"""
from __future__ import annotations

import functools
import re
import string
from typing import Iterable

import pandas as pd

from ...exceptions import SuiteError, did_you_mean
from ...suites.bilou import expand_unit, split_tag
from ...suites.expansion import EXAMPLE_COLUMNS, check_size, variants
from ...suites.grammar import article, capitalize_first
from ...suites.loader import Suite, Template, load_suite, slot_base

__all__ = ["SEQUENCE_COLUMNS", "DEFAULT_SLOT_TAGS", "expand_sequence_suite", "tokenize", "get_tokenizer",
           "render_tokens", "template_tags", "bracketed"]

SEQUENCE_COLUMNS = EXAMPLE_COLUMNS + ["tokens", "tags", "term_span"]
DEFAULT_SLOT_TAGS = {"person": "U-PER", "country": "U-LOC"}
_SENTENCE_START = re.compile(r"([.!?][\"'”’)]?\s+)([a-z])")


@functools.lru_cache(maxsize=1)
def get_tokenizer():
    """spaCy's English tokenizer (``spacy.blank("en")``), loaded once."""
    try:
        import spacy
    except ImportError as e:  # pragma: no cover
        raise SuiteError(f"sequence-labelling suites need spaCy for tokenization ({e}); pip install spacy") from None
    return spacy.blank("en").tokenizer


def tokenize(text: str) -> list[tuple[str, int]]:
    """``(token, char offset)`` pairs of ``text``, whitespace tokens dropped."""
    return [(t.text, t.idx) for t in get_tokenizer()(text) if not t.is_space]


def bracketed(tokens, tags) -> str:
    """Tokens with their entities in brackets: ``[New Zealand]LOC is far .``"""
    from ...suites.bilou import spans

    starts = {s: (t, e) for t, s, e in spans(tags)}
    out, i = [], 0
    while i < len(tokens):
        if i in starts:
            t, e = starts[i]
            out.append(f"[{' '.join(tokens[i:e])}]{t}")
            i = e
        else:
            out.append(tokens[i])
            i += 1
    return " ".join(out)


def _pieces(text: str):
    """Literal and slot pieces of a template: ("lit", text) / ("slot", opt, name)."""
    out = []
    for lit, key, spec, _ in string.Formatter().parse(text):
        if lit:
            out.append(("lit", lit))
        if key is None:
            continue
        raw = key if not spec else f"{key}:{spec}"
        opt, _, name = raw.rpartition(":")
        out.append(("slot", opt or None, name))
    return out


def render_tokens(text: str, values: dict):
    """Render a template and tokenize it.

    Returns ``(sentence, tokens, slot_tokens)`` where ``slot_tokens`` lists,
    per slot occurrence, ``(base name, [token indices of the fill])`` (the
    article of ``{a:slot}`` is not part of the fill). Raises KeyError for a
    slot without value and ValueError when a fill does not cover whole tokens.
    """
    parts, fills, pos = [], [], 0
    for p in _pieces(text):
        if p[0] == "lit":
            parts.append(p[1])
            pos += len(p[1])
            continue
        _, opt, name = p
        key = slot_base(name)
        if key not in values:
            raise KeyError(name if opt is None else f"{opt}:{name}")
        v = str(values[key])
        if name[:1].isupper():
            v = capitalize_first(v)
        prefix = ""
        if opt == "a":
            art = article(v)
            prefix = (art.capitalize() if name[:1].isupper() else art) + " "
        parts.append(prefix + v)
        fills.append((key, pos + len(prefix), pos + len(prefix) + len(v)))
        pos += len(prefix) + len(v)
    sentence = "".join(parts)
    # same-length edits only, so that the fill offsets stay valid
    sentence = capitalize_first(sentence)
    sentence = _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), sentence)
    toks = tokenize(sentence)
    slot_tokens = []
    for key, s, e in fills:
        idx = []
        for i, (t, o) in enumerate(toks):
            te = o + len(t)
            if te <= s or o >= e:
                continue
            if o < s or te > e:
                raise ValueError(f"the fill {sentence[s:e]!r} of {{{key}}} does not cover whole tokens (token {t!r})")
            idx.append(i)
        if not idx:
            raise ValueError(f"the fill of {{{key}}} produced no token")
        slot_tokens.append((key, idx))
    return sentence, [t for t, _ in toks], slot_tokens


def _phrase_tags(phrases: dict, tokens: list, in_slot: set, where: str) -> dict:
    """Token index -> tag for the template's own entities."""
    out = {}
    for phrase, typ in phrases.items():
        ptoks = [t for t, _ in tokenize(str(phrase))]
        n = len(ptoks)
        found = False
        for i in range(len(tokens) - n + 1):
            window = range(i, i + n)
            if any(j in in_slot for j in window):
                continue
            if all(tokens[j] == p or tokens[j] == capitalize_first(p) for j, p in zip(window, ptoks)):
                for j, tag in zip(window, expand_unit(f"U-{typ}", n)):
                    if j in out and out[j] != tag:
                        raise ValueError(f"{where}: entity {phrase!r} overlaps another entity")
                    out[j] = tag
                found = True
        if not found:
            raise ValueError(f"{where}: entity phrase {phrase!r} does not occur in the template's own words {tokens}")
    return out


def template_tags(tpl: Template) -> dict:
    """The template's ``tags`` field as ``{phrase: TYPE}`` (validated)."""
    t = tpl.tags
    if t is None:
        return {}
    if not isinstance(t, dict):
        raise ValueError(f"tags must be a mapping entity phrase -> type (e.g. {{\"United Nations\": ORG}}), got {t!r}")
    out = {}
    for k, v in t.items():
        if not isinstance(k, str) or not k.strip():
            raise ValueError(f"entity phrases must be non-empty strings, got {k!r}")
        if not isinstance(v, str) or not re.match(r"^[A-Za-z][A-Za-z0-9_]*$", v) or v == "O":
            raise ValueError(f"entity type of {k!r} must be a type name such as PER, LOC, ORG, MISC; got {v!r}")
        out[k] = v
    return out


def identity_type(suite: Suite):
    """``template -> entity type`` of the template's identity slot fill
    (``PER`` for ``{person}`` by default; None when the slot is tagged
    ``O``): the class whose rates a template gives a chance."""
    tags = _slot_tags(suite)

    def of(template):
        tag = tags.get(template.identity_kind, "O")
        return None if tag == "O" else split_tag(tag)[1]

    return of


def _slot_tags(suite: Suite) -> dict:
    tags = dict(DEFAULT_SLOT_TAGS)
    known = {k for t in suite.identity.values() for k in t.kinds} | set(suite.lexicons)
    known |= {re.sub(r"\d+$", "", k) for tp in suite.templates for k in (tp.lexicon_keys or [])}
    for name, tag in (suite.slot_tags or {}).items():
        line = _line(suite, ("slot_tags", name))
        if name not in known:
            raise SuiteError(f"unknown slot {name!r} (slots of this suite: {sorted(known)}){did_you_mean(name, known)}",
                             file=suite.path, line=line,
                             field=f"slot_tags.{name}")
        try:
            p, _ = split_tag(tag) if isinstance(tag, str) else (None, None)
        except ValueError:
            p = None
        if p not in ("U", "O"):
            raise SuiteError(f"slot tags are 'U-TYPE' (expanded to B-/I-/L- for multi-token fills) or 'O', got {tag!r}",
                             file=suite.path, line=line, field=f"slot_tags.{name}")
        tags[name] = tag
    return tags


def _line(suite: Suite, key) -> int | None:
    return suite.line_of(*key)


def expand_sequence_suite(suite: Suite | str, *, attributes: Iterable[str] | None = None,
                          max_examples: int | None = None) -> pd.DataFrame:
    """All examples of a sequence-labelling suite (``SEQUENCE_COLUMNS``).

    Parameters
    ----------
    suite : Suite or path
    attributes : keep only these attributes (default all of the suite's).
    max_examples : size limit, as in :func:`bias_suite.suites.expand_suite`.
    """

    if not isinstance(suite, Suite):
        suite = load_suite(suite)
    if suite.task != "sequence_labelling":
        raise SuiteError(f"suite {suite.name!r} has task {suite.task!r}, not sequence_labelling", file=suite.path, field="task")
    wanted = None if attributes is None else set([attributes] if isinstance(attributes, str) else attributes)
    check_size([suite], attributes=attributes, max_examples=max_examples)
    return pd.DataFrame(list(sequence_rows(suite, wanted)), columns=SEQUENCE_COLUMNS)


def check_suite(suite: Suite) -> None:
    """The checks of a sequence-labelling suite before any example is made:
    slot tags, each template's identity slot used exactly once (so that the
    variants align token by token) and its phrase tags."""
    _slot_tags(suite)
    for ti, tpl in enumerate(suite.templates):
        fld = f"templates[{ti}]"
        n_ident = sum(1 for p in _pieces(tpl.text) if p[0] == "slot" and slot_base(p[2]) == tpl.identity_kind)
        if n_ident != 1:
            raise SuiteError(
                f"a sequence-labelling template uses its identity slot {{{tpl.identity_kind}}} exactly once (found {n_ident}), "
                "so that its variants align token by token", file=suite.path, line=_line(suite, ("templates", ti, "text")),
                field=f"{fld}.text")
        try:
            template_tags(tpl)
        except ValueError as e:
            raise SuiteError(str(e), file=suite.path, line=_line(suite, ("templates", ti, "tags")), field=f"{fld}.tags") from None


def sequence_rows(suite: Suite, wanted=None, *, covering: bool = False):
    """The rows of :func:`expand_sequence_suite`, one at a time, after the
    suite-level and template-level checks (``covering``: only the examples
    that ``validate`` renders, see :func:`bias_suite.suites.expansion.variants`)."""
    check_suite(suite)
    slot_tags = _slot_tags(suite)
    for ti, tpl in enumerate(suite.templates):
        fld = f"templates[{ti}]"
        phrases = template_tags(tpl)
        for unit, a, g, t_idx, term, values in variants(suite, tpl, wanted, covering=covering):
            try:
                text, tokens, slot_toks = render_tokens(tpl.text, values)
                tags = ["O"] * len(tokens)
                in_slot = set()
                span = None
                for key, idx in slot_toks:
                    base = re.sub(r"\d+$", "", key)
                    tag = slot_tags.get(key, slot_tags.get(base, "O"))
                    for j, tg in zip(idx, expand_unit(tag, len(idx))):
                        tags[j] = tg
                    in_slot.update(idx)
                    if key == tpl.identity_kind:
                        span = [idx[0], idx[-1] + 1]
                for j, tg in _phrase_tags(phrases, tokens, in_slot, f"template {tpl.id!r}").items():
                    tags[j] = tg
            except KeyError as e:
                raise SuiteError(f"slot {{{e.args[0]}}} has no value", file=suite.path, line=_line(suite, ("templates", ti, "text")),
                                 field=f"{fld}.text") from None
            except ValueError as e:
                part = "tags" if "entity" in str(e) else "text"
                raise SuiteError(str(e), file=suite.path, line=_line(suite, ("templates", ti, part)),
                                 field=f"{fld}.{part}") from None
            yield (f"{unit}/{a}/{g}/{t_idx}", unit, a, g, term, text, None, suite.name, tpl.id,
                   tpl.identity_kind, tokens, tags, span)
