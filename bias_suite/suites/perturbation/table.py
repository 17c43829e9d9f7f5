"""A user's own sentences, perturbed by identity: read the table, find and
swap the mentions of each attribute, and return an examples table (one
template per source sentence and attribute) with a report of what happened.
"""
from __future__ import annotations

import functools
import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ...exceptions import ExamplesFormatError, SuiteError, did_you_mean, option
from ..table_formats import CHUNK_ROWS, as_strings, detect_format, read_chunks
from .engine import Found, Guards, find, find_insertion, variants
from .lexicon import Lexicon, bundled_attributes, load_lexicon, with_person_words
from .ner import TaggedSentence, check_entities, retokenize
from .people import context_skip
from .pronouns import load_tagger
from .words import GENDER_NOUNS, NEUTRAL_COUNTERPARTS
from .trail import APPROVABLE, log_frame, log_row, parse_keep, read_pairs, read_review
from .unlisted import find_unlisted, load_person_finder

__all__ = ["perturb", "perturb_texts", "AttributeReport", "PerturbReport", "read_sentences", "write_examples",
           "OUTPUT_COLUMNS", "NER_ATTRIBUTES"]

OUTPUT_COLUMNS = ["id", "template", "attribute", "group", "term", "text", "label"]
NER_COLUMNS = OUTPUT_COLUMNS + ["tokens", "tags", "term_span"]
#: what a tagged (CoNLL) input perturbs: the kinds of each attribute it swaps
NER_ATTRIBUTES = {"names": ("person",), "nationality": ("country",)}
_PAIRS = 3
_SKIP_SAMPLES = 2


@dataclass
class AttributeReport:
    """What perturbing one attribute did."""

    attribute: str
    sentences: int = 0
    mentioned: int = 0                                   # sentences with a mention (swapped or skipped)
    inserted: int = 0                                    # --insert: sentences given an adjective
    skipped: Counter = field(default_factory=Counter)    # reason -> sentences
    left_out: Counter = field(default_factory=Counter)   # "group (reason)" -> templates it is left out of
    templates: int = 0
    examples: int = 0
    unlisted: int = 0                                    # templates of an unlisted name (no source variant)
    pairs: list = field(default_factory=list)            # (source, variant), the first three
    skip_samples: dict = field(default_factory=dict)     # reason -> the first skipped sentences, two at most

    def skip(self, reason: str, text: str) -> None:
        """Count a skipped sentence under ``reason`` (and keep it as a sample)."""
        self.skipped[reason] += 1
        seen = self.skip_samples.setdefault(reason, [])
        if len(seen) < _SKIP_SAMPLES:
            seen.append(text)

    def as_dict(self) -> dict:
        return {"attribute": self.attribute, "sentences": self.sentences, "mentioned": self.mentioned,
                "inserted": self.inserted, "skipped": dict(self.skipped), "left_out": dict(self.left_out),
                "templates": self.templates, "examples": self.examples, "unlisted_templates": self.unlisted,
                "pairs": [list(p) for p in self.pairs], "skip_samples": dict(self.skip_samples)}


@dataclass
class PerturbReport:
    source: str
    format: str
    rows: int
    empty: int
    tagger: str
    attributes: list
    log: pd.DataFrame | None = field(default=None, repr=False)   # log=True: one row per sentence and attribute

    def as_dict(self) -> dict:
        return {"source": self.source, "format": self.format, "rows": self.rows, "empty": self.empty,
                "tagger": self.tagger, "attributes": [a.as_dict() for a in self.attributes]}


# ------------------------------------------------------------------ reading
def read_sentences(path, *, format=None, text_column=None, label_column=None, id_column=None,
                   encoding: str = "utf-8"):
    """``(ids, texts, labels, fmt, tagged)`` of a table (``tagged``: the
    CoNLL sentences as ``(tokens, tags)``, else None). An absent id column
    numbers the rows from 1 (CoNLL: the sentence index from 0, as a side
    file counts them)."""
    path = Path(path)
    if not path.exists():
        raise ExamplesFormatError("no such file or folder", file=path)
    fmt = detect_format(path, format)
    if fmt == "conll":
        from ..conll import conll_sentences

        from ..bilou import to_bilou

        tagged, ids = [], []
        for k, (line, sent) in enumerate(conll_sentences(path, encoding)):
            tokens, tags = [p[0] for p in sent], [p[-1] for p in sent]
            try:
                to_bilou(tags)
            except ValueError as e:
                raise ExamplesFormatError(str(e), file=path, row=line) from None
            tagged.append((tokens, tags))
            ids.append(str(k))
        if not tagged:
            raise ExamplesFormatError("no sentences", file=path)
        return ids, [" ".join(t) for t, _ in tagged], [None] * len(tagged), fmt, tagged
    names = {}

    def usecols(found):
        found = list(found)
        for role, given, default in (("text", text_column, "text"), ("label", label_column, "label"),
                                     ("id", id_column, "id")):
            flag = option(f"{role}_column=", f"--{role}-column")
            if given is not None and given not in found:
                raise ExamplesFormatError(f"no column {given!r} for the {role}; the file has {found}"
                                          f"{did_you_mean(given, found)} (name the column with {flag})", file=path,
                                          row=1, field=given)
            if role == "text" and given is None and default not in found:
                raise ExamplesFormatError(f"no column 'text' for the sentences; the file has {found}"
                                          f"{did_you_mean('text', found)} (name another with {flag})", file=path,
                                          row=1, field="text")
            names[role] = given if given is not None else (default if default in found else None)
        return [c for c in dict.fromkeys(names.values()) if c]

    ids, texts, labels, rows = [], [], [], []
    it = read_chunks(path, fmt, usecols, encoding, CHUNK_ROWS)
    next(it)
    count = 0
    for start, df in it:
        n = len(df)
        rows.append(np.asarray(start) if isinstance(start, np.ndarray) else np.arange(start, start + n))
        texts.append(as_strings(df[names["text"]]))
        labels.append(as_strings(df[names["label"]]) if names["label"] else np.full(n, None, dtype=object))
        ids.append(as_strings(df[names["id"]]) if names["id"]
                   else np.array([str(i) for i in range(count + 1, count + n + 1)], dtype=object))
        count += n
    if not count:
        raise ExamplesFormatError("no rows", file=path)
    ids, texts, labels, rows = (np.concatenate(x) for x in (ids, texts, labels, rows))
    _check_ids(ids, rows, path, names["id"])
    return list(ids), list(texts), list(labels), fmt, None


def _check_ids(ids, rows, path, field_name):
    bad = [i for i, v in enumerate(ids) if v is None or not str(v).strip()]
    if bad:
        raise ExamplesFormatError("empty id", file=path, row=int(rows[bad[0]]), field=field_name)
    dup = pd.Series(ids).duplicated().to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise ExamplesFormatError(f"duplicate id {ids[i]!r}", file=path, row=int(rows[i]), field=field_name or "id")


# ------------------------------------------------------------------ perturbing
def guards_of(lexicons) -> Guards:
    """First names (the gender attribute's guard) and gender nouns (the
    names attribute's): the bundled files', and those of the lexicons given."""
    first, nouns = set(), set()
    bundled = bundled_attributes()
    extra = [load_lexicon(a) for a in ("names", "gender") if a in bundled]
    for lex in list(lexicons) + extra:
        for g in lex.groups:
            if lex.pronouns == "along":
                first.update(lex.terms[g].get("person", []))
            elif lex.pronouns == "mention":
                nouns.update(w for w in lex.terms[g].get("identity_np", []) if " " not in w)
    # "chairman", "wife": whose gender may be the name's (singular and lower-case: "two men", "the Coen
    # Brothers", "Birthday Girl" name no one person)
    nouns.update(w for row in GENDER_NOUNS for w in row if w not in NEUTRAL_COUNTERPARTS)
    return Guards.of(sorted(first), sorted(nouns))


def _sampler(k, seed, key):
    if k is None:
        return None
    rng = random.Random(f"{seed}/{key}")

    def pick(group, n, own):
        if n <= k:
            return list(range(n))
        if own:
            return [0] + sorted(rng.sample(range(1, n), k - 1))
        return sorted(rng.sample(range(n), k))

    return pick


def perturb_texts(ids, texts, labels, lexicons, *, insert: bool = False, terms_per_group: int | None = None,
                  seed: int = 0, tagger=None, tagged=None, persons=None, keep=(), pairs=None, review=None,
                  recogniser=None, log: list | None = None, first_names: bool = False):
    """``(frame, reports)``: the examples of every attribute (``lexicons``,
    in order) and one :class:`AttributeReport` each. ``tagger``: a
    :class:`~.pronouns.Tagger` for "her", or None for the rule. ``tagged``:
    ``(tokens, tags)`` per sentence for NER input. ``persons``: a
    :class:`~.unlisted.PersonFinder` that also swaps the first names the
    file does not list (attributes of ``person`` terms; unlisted.py).
    ``recogniser``: a :class:`~.unlisted.PersonFinder` whose entities tell
    titles and surnames (the tagger path; None: the rule, people.py).
    ``keep``: words never swapped; ``pairs``: ``{attribute: [{group: word}]}``
    of extra pairs; ``review``: ``{(id, attribute): "drop" | "approve"}``
    (trail.py). ``log``: a list that gets one :data:`~.trail.LOG_COLUMNS`
    row per sentence and attribute. ``first_names``: the common first names
    of one gender are mentions of an attribute of first names too
    (``--unlisted-names``; lexicon.with_person_words)."""
    if terms_per_group is not None and terms_per_group < 1:
        raise SuiteError(f"terms per group must be at least 1, got {terms_per_group}")
    run = _Run(ids, texts, labels, guards_of(lexicons), frozenset(w.lower() for w in keep), review or {},
               [TaggedSentence(*t) for t in tagged] if tagged is not None else None, tagger, recogniser, log)
    cols = {c: [] for c in (NER_COLUMNS if tagged is not None else OUTPUT_COLUMNS)}
    reports = []
    for lex in lexicons:
        lex = with_person_words(lex, (pairs or {}).get(lex.attribute, ()), first_names=first_names)
        rep = AttributeReport(lex.attribute)
        found = _find_all(run, lex, rep, insert and "identity_adj" in lex.kinds(), persons)
        for i, f in found:
            _write_template(run, lex, rep, i, f, cols, terms_per_group, seed)
        reports.append(rep)
        if log is not None:  # the trail in the order of the sentences
            log += [row for _, row in sorted(run.rows, key=lambda r: r[0])]
            run.rows.clear()
    return pd.DataFrame(cols), reports


@dataclass
class _Run:
    """The sentences and settings of one :func:`perturb_texts` call."""

    ids: list
    texts: list
    labels: list
    guards: Guards
    keep: frozenset
    review: dict
    sents: list | None
    tagger: object
    recogniser: object
    log: list | None
    rows: list = field(default_factory=list)   # (sentence index, log row) of the attribute at hand

    def trail(self, i, attribute, outcome, reason="", variant=""):
        if self.log is not None:
            self.rows.append((i, log_row(self.ids[i], attribute, outcome, reason, self.texts[i], variant)))


def _find_all(run: _Run, lex: Lexicon, rep: AttributeReport, can_insert: bool, persons) -> list:
    """``[(sentence index, Found)]`` of ``lex``'s attribute, the skipped and
    unmentioned sentences counted in ``rep`` and written to the trail."""
    texts, sents = run.texts, run.sents
    single = tuple(k for k in lex.kinds() if all(" " not in w for g in lex.groups for w in lex.terms[g].get(k, [])))
    unlisted = {}
    if persons is not None and "person" in lex.kinds():
        if sents is not None:
            raise SuiteError("unlisted names are found in plain text, not in tagged (CoNLL) sentences")
        todo = [i for i, t in enumerate(texts) if t is not None and t.strip() and find(t, lex, run.guards) is None]
        words = _identity_words()
        unlisted = {i: find_unlisted(texts[i], p, lex, run.guards, words)
                    for i, p in zip(todo, persons.persons(texts[i] for i in todo))}
    found = []
    for i, text in enumerate(texts):
        if text is None or not text.strip():
            run.trail(i, lex.attribute, "no mention", "empty sentence")
            continue
        rep.sentences += 1
        decision = run.review.get((run.ids[i], lex.attribute))
        f = unlisted[i] if i in unlisted else find(text, lex, None if decision == "approve" else run.guards, run.keep)
        if isinstance(f, Found) and sents is not None and not check_entities(sents[i], f, single):
            f = "entity tags"
        if f is None:
            f = find_insertion(text, lex, run.guards) if can_insert else "no person noun"
            if isinstance(f, Found):
                rep.inserted += 1
                found.append((i, f))
            elif f != "no person noun":
                _skip(run, rep, i, lex.attribute, f, decision)
            else:
                run.trail(i, lex.attribute, "no mention")
            continue
        rep.mentioned += 1
        if isinstance(f, str):
            _skip(run, rep, i, lex.attribute, f, decision)
        else:
            found.append((i, f))
    found = _checked(run, lex, rep, found)
    if run.tagger is not None:
        _tag_her(found, lex, run.tagger)
    return found


def _skip(run: _Run, rep: AttributeReport, i: int, attribute: str, why: str, decision) -> None:
    if decision == "approve":
        raise SuiteError(f"sentence {run.ids[i]!r} ({attribute}) cannot be approved: it is skipped for "
                         f"{why!r}, which no review can undo (only {sorted(APPROVABLE)})")
    rep.skip(why, run.texts[i])
    run.trail(i, attribute, "skipped", why)


def _checked(run: _Run, lex: Lexicon, rep: AttributeReport, found: list) -> list:
    """``found`` less the sentences whose mentions may not be one person's
    (people.py: titles, surnames, "her" after give, ...), the reviewer's
    approvals and drops applied."""
    ents = {}
    if run.recogniser is not None and lex.pronouns is not None:
        want = list(dict.fromkeys(run.texts[i] for i, f in found if any(
            x.kind != "pro" and x.surface[:1].isupper() for x in f.mentions)))  # each distinct sentence once
        by_text = dict(zip(want, run.recogniser.entities(want)))
        ents = {i: by_text[run.texts[i]] for i, _ in found if run.texts[i] in by_text}
    out = []
    for i, f in found:
        decision = run.review.get((run.ids[i], lex.attribute))
        why = None if decision == "approve" or f.insert_at is not None else context_skip(
            f, lex, ents.get(i, []) if run.recogniser is not None else None)
        if why is None and decision == "drop":
            why = "dropped in review"
        if why is None:
            out.append((i, f))
        else:
            rep.skip(why, run.texts[i])
            run.trail(i, lex.attribute, "skipped", why)
    return out


def _write_template(run: _Run, lex: Lexicon, rep: AttributeReport, i: int, f: Found, cols: dict, k, seed) -> None:
    rows, left = variants(f, lex, sample=_sampler(k, seed, f"{run.ids[i]}/{lex.attribute}"))
    rep.left_out.update(f"{g} ({why})" for g, why in left.items())
    if run.sents is not None:  # tokens, tags and term span of each variant
        head = next(((x.start, x.end) for x in f.mentions if x.kind != "pro"), None)
        rows = [r[:3] + retokenize(run.sents[i], r[3], head) for r in rows]
    if len({r[0] for r in rows}) < 2:  # one group only: no counterfactual
        rep.skip("one group left", run.texts[i])
        run.trail(i, lex.attribute, "skipped", "one group left")
        return
    rep.templates += 1
    rep.unlisted += f.group is None and f.insert_at is None
    tpl = f"{run.ids[i]}/{lex.attribute}"
    per_group = Counter()
    first = next((r[2] for r in rows if r[2] != f.text), "")
    run.trail(i, lex.attribute, "changed", "inserted" if f.insert_at is not None else "", first)
    for r in rows:
        g, term, text = r[:3]
        cols["id"].append(f"{tpl}/{g}/{per_group[g]}")
        per_group[g] += 1
        cols["template"].append(tpl)
        cols["attribute"].append(lex.attribute)
        cols["group"].append(g)
        cols["term"].append(term)
        cols["text"].append(text)
        cols["label"].append(run.labels[i])
        if run.sents is not None:
            cols["tokens"].append(r[3])
            cols["tags"].append(r[4])
            cols["term_span"].append(r[5])
    if len(rep.pairs) < _PAIRS and first:
        rep.pairs.append((f.text, first))
    rep.examples += len(rows)


@functools.lru_cache(maxsize=1)
def _identity_words() -> frozenset:
    """The words of every bundled attribute's terms, lower-cased (an
    unlisted name must not be one: "Jordan", "Christian")."""
    out = set()
    for a in bundled_attributes():
        lex = load_lexicon(a)
        out.update(w.lower() for g in lex.groups for ws in lex.terms[g].values() for t in ws for w in t.split())
    return frozenset(out)


def _tag_her(found, lex, tagger) -> None:
    """spaCy's reading of each "her" to be swapped to another group's pronoun."""
    items = {}
    for _, f in found:
        hers = [x for x in f.mentions if x.pronoun == "her"]
        if hers and any(lex.group_has_pronouns(g) and g != f.group for g in lex.groups):
            items.setdefault(f.text, set()).update(x.start for x in hers)  # each distinct sentence once
    if not items:
        return
    roles = tagger.roles((text, sorted(starts)) for text, starts in items.items())
    for _, f in found:
        for x in f.mentions:
            if x.pronoun == "her" and (f.text, x.start) in roles:
                x.role = roles[(f.text, x.start)]


def perturb(table, attributes=None, *, identity_terms=None, text_column=None, label_column=None, id_column=None,
            format=None, encoding: str = "utf-8", insert: bool = False, terms_per_group: int | None = None,
            seed: int = 0, tagger="auto", unlisted_names: bool = False, keep=(), pairs=None, review=None,
            log: bool = False):
    """Counterfactual examples from a user's own sentences.

    Every sentence of ``table`` that mentions an attribute's identity terms
    becomes one template: the sentence once per term of every group of the
    attribute (all its mentions swapped together), its own group's variant
    being the sentence itself. The examples table that comes back has the
    columns ``id, template, attribute, group, term, text, label``
    (docs/formats.md; NER input adds ``tokens, tags, term_span``), the
    input ``bias-suite run`` and :func:`bias_suite.run` read; what happened
    to each attribute is in ``frame.attrs["perturbation"]``.

    Parameters
    ----------
    table : a CSV/TSV/JSONL/Parquet file, a ``datasets`` folder, a CoNLL file
        (names and nationality only), or a DataFrame with a text column.
    attributes : bundled attribute names (``"gender"``, ``"names"``, ...)
        or identity-term files; ``identity_terms`` adds files.
    text_column, label_column, id_column : default ``text``, ``label``,
        ``id`` (label and id when present; without ids, rows count from 1).
    insert : also put each identity adjective before the first
        determiner + person noun of a sentence without a mention.
    terms_per_group, seed : write only this many term choices per group
        and sentence (the sentence's own text always among its group's).
    tagger : ``"auto"`` (spaCy's tagger for "her" when installed), True
        (required) or False (the rule, docs/perturb.md). With the tagger,
        spaCy's recogniser also tells titles and surnames from first names.
    unlisted_names : also swap a first name the identity file does not
        list (attributes of first names: ``names``): the common first names
        of one gender (first_names.py), and, unless ``tagger=False``, the
        one PERSON entity of spaCy's recogniser (then required); such a
        template names listed names only, the source sentence not among its
        variants (docs/perturb.md, "Unlisted names").
    keep : words never swapped (``["Charlotte", "mother"]``).
    pairs : a file of extra swap pairs (docs/perturb.md, "Your own words").
    review : a log written by ``log=True`` or ``--log`` with its ``review``
        column filled in: ``drop`` leaves a changed sentence out, ``approve``
        swaps a sentence skipped for a guess about whose words they are.
    log : also return the log, one row per sentence and attribute (``id,
        attribute, outcome, reason, text, variant, review``).

    Returns
    -------
    DataFrame, or ``(DataFrame, log DataFrame)`` when ``log`` is True.

    >>> import bias_suite as bs
    >>> ex = bs.perturb("reviews.csv", ["gender", "names"])  # doctest: +SKIP
    >>> ex, trail = bs.perturb("reviews.csv", ["gender"], log=True)  # doctest: +SKIP
    """
    frame, report = perturb_with_report(table, attributes, identity_terms=identity_terms, text_column=text_column,
                                        label_column=label_column, id_column=id_column, format=format,
                                        encoding=encoding, insert=insert, terms_per_group=terms_per_group, seed=seed,
                                        tagger=tagger, unlisted_names=unlisted_names, keep=keep, pairs=pairs,
                                        review=review, log=log)
    return (frame, report.log) if log else frame


def perturb_with_report(table, attributes=None, *, identity_terms=None, text_column=None, label_column=None,
                        id_column=None, format=None, encoding="utf-8", insert=False, terms_per_group=None, seed=0,
                        tagger="auto", unlisted_names=False, keep=(), pairs=None, review=None, log=False):
    """:func:`perturb` and its :class:`PerturbReport` (its ``log``: the
    log as a DataFrame when ``log`` is True, else None)."""
    lexicons = _lexicons(attributes, identity_terms)
    if isinstance(table, pd.DataFrame):
        ids, texts, labels, fmt, tagged, source = _from_frame(table, text_column, label_column, id_column)
    else:
        ids, texts, labels, fmt, tagged = read_sentences(table, format=format, text_column=text_column,
                                                         label_column=label_column, id_column=id_column,
                                                         encoding=encoding)
        source = str(table)
    if tagged is not None:
        bad = [lx.attribute for lx in lexicons if lx.attribute not in NER_ATTRIBUTES]
        if bad:
            raise SuiteError(f"tagged (CoNLL) sentences are perturbed by names and nationality only, not {bad}")
        lexicons = [_restricted(lx, NER_ATTRIBUTES[lx.attribute]) for lx in lexicons]
    tag, how = _tagger(tagger, any(lx.pronouns for lx in lexicons))
    persons = recogniser = None
    if tag is not None and tagged is None:
        recogniser = load_person_finder()
        how += "; titles and surnames: spaCy's entities"
    if unlisted_names:
        if tagged is not None:
            raise SuiteError("unlisted names are found in plain text, not in tagged (CoNLL) sentences")
        how += "; unlisted names: common first names"
        if tagger is not False:   # --no-tagger: no spaCy at all, the common first names alone
            persons = recogniser or load_person_finder()
            how += " and spaCy en_core_web_sm PERSON entities"
    trail = [] if log else None
    frame, reports = perturb_texts(
        ids, texts, labels, lexicons, insert=insert, terms_per_group=terms_per_group, seed=seed, tagger=tag,
        tagged=tagged, persons=persons, recogniser=recogniser, keep=parse_keep(keep), log=trail,
        first_names=bool(unlisted_names),
        pairs=read_pairs(pairs, lexicons) if pairs is not None else None,
        review=read_review(review, {lx.attribute for lx in lexicons}) if review is not None else None)
    empty = sum(1 for t in texts if t is None or not t.strip())
    report = PerturbReport(source, fmt, len(texts), empty, how, reports)
    frame.attrs["perturbation"] = report.as_dict()
    report.log = log_frame(trail) if log else None
    return frame, report


def _lexicons(attributes, identity_terms) -> list:
    names = [attributes] if isinstance(attributes, (str, Path)) else list(attributes or [])
    names += [identity_terms] if isinstance(identity_terms, (str, Path)) else list(identity_terms or [])
    if not names:
        raise SuiteError("name at least one attribute to perturb (gender, names, ...) or an identity-term file")
    lexicons = [load_lexicon(a) for a in names]
    seen = Counter(lx.attribute for lx in lexicons)
    twice = sorted(a for a, n in seen.items() if n > 1)
    if twice:
        raise SuiteError(f"attribute(s) {twice} given twice")
    return lexicons


def _restricted(lex: Lexicon, kinds) -> Lexicon:
    """The lexicon with only these kinds of term (NER input: names and countries)."""
    terms = {g: {k: v for k, v in lex.terms[g].items() if k in kinds} for g in lex.groups}
    return Lexicon(lex.attribute, lex.groups, terms, lex.path, lex.pronouns)


def _tagger(choice, needed: bool):
    if choice not in ("auto", True, False):
        raise SuiteError(f"tagger must be 'auto', True or False, got {choice!r}")
    if not needed or choice is False:
        return None, "rule"
    tag = load_tagger(required=choice is True)
    return (tag, "spaCy en_core_web_sm") if tag is not None else (None, "rule (spaCy's en_core_web_sm is not installed)")


def _from_frame(df: pd.DataFrame, text_column, label_column, id_column):
    path = Path("<DataFrame>")
    t = text_column or "text"
    if t not in df.columns:
        raise ExamplesFormatError(f"no column {t!r} for the sentences; the frame has {list(df.columns)}"
                                  f"{did_you_mean(t, df.columns)} (name another with text_column=)", file=path,
                                  field=t)
    for given, kw in ((label_column, "label_column="), (id_column, "id_column=")):
        if given is not None and given not in df.columns:
            raise ExamplesFormatError(f"no column {given!r}; the frame has {list(df.columns)}"
                                      f"{did_you_mean(given, df.columns)} (name another with {kw})", file=path,
                                      field=given)
    lab = label_column or ("label" if "label" in df.columns else None)
    idc = id_column or ("id" if "id" in df.columns else None)
    texts = list(as_strings(df[t]))
    labels = list(as_strings(df[lab])) if lab else [None] * len(df)
    ids = list(as_strings(df[idc])) if idc else [str(i) for i in range(1, len(df) + 1)]
    _check_ids(np.asarray(ids, dtype=object), np.arange(1, len(df) + 1), path, idc)
    return ids, texts, labels, "frame", None, "<DataFrame>"


def write_examples(frame: pd.DataFrame, out) -> Path:
    """Write the examples atomically as JSONL, Parquet, CSV or TSV (by the
    extension of ``out``; NER examples: JSONL or Parquet)."""
    from ...io import atomic_path
    from ...io.tables import write_jsonl, write_parquet

    out = Path(out)
    ext = out.suffix.lower()
    if ext in (".jsonl", ".ndjson"):
        return write_jsonl(frame, out)
    if ext in (".parquet", ".pq"):
        return write_parquet(frame, out)
    if ext in (".csv", ".tsv"):
        if "tokens" in frame.columns:
            raise SuiteError(f"tagged examples keep their tokens in JSONL or Parquet, not {ext}: {out}")
        with atomic_path(out) as tmp:
            frame.to_csv(tmp, index=False, sep="," if ext == ".csv" else "\t")
        return out
    raise SuiteError(f"cannot tell the format of {out} from its extension; use .jsonl, .parquet, .csv or .tsv")
