"""Suite -> examples: one row per (template, lexicon fill, attribute, group, term).

Lexicon slots are filled with CheckList's ``Editor.template`` (cartesian
product, numbered keys such as ``{profession1}``, CheckList's built-in
lexicons); the identity slot is filled with every term of every group;
sentences are then rendered by bias_suite's own formatter (articles by sound,
capitalised slots, sentence-start capitals, single spaces).

Columns: ``id, template, attribute, group, term, text, label`` plus
``suite, source_template, slot``. ``template`` is the counterfactual unit:
the suite, the template id and, when the template has lexicon slots, the
index of the lexicon fill (``sentiment_gender/pos-003#2``), so that the
variants of one ``template`` differ only in the identity term. Ids and order
are deterministic.
"""
from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Iterable

import pandas as pd

from ..exceptions import SuiteError
from .grammar import article, capitalize_first, tidy
from .loader import Suite, Template, load_suite, slot_base

EXAMPLE_COLUMNS = ["id", "template", "attribute", "group", "term", "text", "label", "suite", "source_template", "slot"]


@functools.lru_cache(maxsize=1)
def get_editor():
    """One shared CheckList Editor (its construction loads lexicons, ~1 s)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # checklist's deps warn about pkg_resources
        from checklist.editor import Editor

        return Editor()


def lexicon_fills(template: Template, lexicons: dict) -> list[dict]:
    """Every combination of the template's lexicon slots, via CheckList's
    ``Editor.template(..., meta=True)``; ``[{}]`` when there is none."""
    keys = template.lexicon_keys
    if not keys:
        return [{}]
    skeleton = " ".join("{%s}" % k for k in keys)
    own = {k: v for k, v in lexicons.items() if any(re.sub(r"\d+$", "", key) == k for key in keys)}
    ret = get_editor().template(skeleton, meta=True, **own)
    return [dict(m) for m in ret.meta]


_SLOT_RE = re.compile(r"\{([^{}]*)\}")


def render(text: str, values: dict) -> str:
    """Fill ``{slot}``, ``{a:slot}`` and ``{Slot}`` from ``values`` (keys are
    lower-case slot names, numbered keys kept) and tidy the sentence."""

    def sub(m):
        raw = m.group(1)
        opt, _, name = raw.rpartition(":")
        key = slot_base(name)
        if key not in values:
            raise KeyError(raw)
        v = str(values[key])
        if name[:1].isupper():
            v = capitalize_first(v)
        if opt == "a":
            art = article(v)
            v = f"{art.capitalize() if name[:1].isupper() else art} {v}"
        return v

    return tidy(_SLOT_RE.sub(sub, text))


def expand_suite(suite: Suite | str | Path, *, attributes: Iterable[str] | None = None) -> pd.DataFrame:
    """All examples of a suite as a table (``EXAMPLE_COLUMNS``).

    Parameters
    ----------
    suite : Suite or path
    attributes : keep only these attributes (default all of the suite's).
    """
    if not isinstance(suite, Suite):
        suite = load_suite(suite)
    if suite.task == "sequence_labelling":  # tokens, BILOU tags, term_span (bias_suite.suites.sequence)
        from .sequence import expand_sequence_suite

        return expand_sequence_suite(suite, attributes=attributes)
    wanted = None if attributes is None else set([attributes] if isinstance(attributes, str) else attributes)
    rows = []
    for tpl in suite.templates:
        for unit, a, g, t_idx, term, values in variants(suite, tpl, wanted):
            try:
                text = render(tpl.text, values)
            except KeyError as e:
                raise SuiteError(f"slot {{{e.args[0]}}} has no value", file=suite.path, line=tpl.line, field="text") from None
            rows.append((f"{unit}/{a}/{g}/{t_idx}", unit, a, g, term, text, tpl.label, suite.name, tpl.id, tpl.identity_kind))
    return pd.DataFrame(rows, columns=EXAMPLE_COLUMNS)


def variants(suite: Suite, tpl: Template, wanted=None):
    """Every example of one template, in the deterministic expansion order:
    yields ``(unit, attribute, group, term_index, term, slot_values)`` for each
    lexicon fill (``unit`` is the counterfactual template id), attribute
    (restricted to ``wanted`` when given), group and identity term."""
    attrs = [a for a in suite.attributes_for(tpl) if wanted is None or a in wanted]
    if not attrs:
        return
    fills = lexicon_fills(tpl, suite.lexicons)
    for f_idx, fill in enumerate(fills):
        unit = f"{suite.name}/{tpl.id}" + (f"#{f_idx}" if len(fills) > 1 else "")
        for a in attrs:
            terms = suite.identity[a]
            for g in terms.groups:
                for t_idx, term in enumerate(terms.terms[g][tpl.identity_kind]):
                    values = dict(fill)
                    values[tpl.identity_kind] = term
                    yield unit, a, g, t_idx, term, values


def expand_suites(suites: Iterable, *, attributes=None) -> pd.DataFrame:
    """Expand several suites into one table (suite names must differ)."""
    frames, names = [], set()
    for s in suites:
        s = s if isinstance(s, Suite) else load_suite(s)
        if s.name in names:
            raise SuiteError(f"two suites are named {s.name!r}", file=s.path, field="suite")
        names.add(s.name)
        frames.append(expand_suite(s, attributes=attributes))
    if not frames:
        return pd.DataFrame(columns=EXAMPLE_COLUMNS)
    return pd.concat(frames, ignore_index=True)


def expansion_counts(examples: pd.DataFrame) -> pd.DataFrame:
    """Examples, templates and terms per attribute and group."""
    g = examples.groupby(["attribute", "group"], sort=False)
    return pd.DataFrame(
        {
            "examples": g.size(),
            "templates": g["template"].nunique(),
            "terms": g["term"].nunique(),
        }
    ).reset_index()
