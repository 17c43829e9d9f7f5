"""Suite -> examples: one row per (template, lexicon fill, attribute, group, term).

Lexicon slots are filled as CheckList's ``Editor.template`` fills them
(cartesian product of the lexicons, numbered keys such as ``{profession1}``,
CheckList's built-in lexicons such as ``{first_name}``), in the order in
which the slots first appear in the template, so that ids and order are a
pure function of the suite files; the identity slot is filled with every
term of every group; sentences are then rendered by bias_suite's own
formatter (articles by sound, capitalised slots, sentence-start capitals,
single spaces).

Columns: ``id, template, attribute, group, term, text, label`` plus
``suite, source_template, slot``. ``template`` is the counterfactual unit:
the suite, the template id and, when the template has lexicon slots, the
index of the lexicon fill (``sentiment_gender/pos-003#2``), so that the
variants of one ``template`` differ only in the identity term.

Size: the number of examples is known from the lexicon and term counts
before anything is expanded (:func:`example_counts`); expansion refuses
suites past ``max_examples`` (default :data:`DEFAULT_MAX_EXAMPLES`, or the
value set with :func:`example_limit`) with the count of each template.
"""
from __future__ import annotations

import contextlib
import contextvars
import itertools
import re
from math import prod
from pathlib import Path
from typing import Iterable

import pandas as pd

from ..exceptions import SuiteError, option
from .grammar import article, capitalize_first, tidy
from .loader import Suite, Template, get_editor, load_suite, slot_base  # noqa: F401 (get_editor re-exported)

EXAMPLE_COLUMNS = ["id", "template", "attribute", "group", "term", "text", "label", "suite", "source_template", "slot"]
DEFAULT_MAX_EXAMPLES = 1_000_000
_LIMIT = contextvars.ContextVar("bias_suite_max_examples", default=DEFAULT_MAX_EXAMPLES)


@contextlib.contextmanager
def example_limit(max_examples: int):
    """Raise (or lower) the expansion limit for code that expands suites
    itself (``bias_suite.pipeline``): ``with example_limit(5_000_000): run(...)``."""
    token = _LIMIT.set(int(max_examples))
    try:
        yield
    finally:
        _LIMIT.reset(token)


def _lexicon(name: str, lexicons: dict) -> list:
    """A lexicon's values: the suite's own, else CheckList's built-in one."""
    if name in lexicons:
        return list(lexicons[name])
    return list(get_editor().lexicons[name])


def _key_lexicons(template: Template, lexicons: dict) -> list:
    return [_lexicon(re.sub(r"\d+$", "", k), lexicons) for k in template.lexicon_keys]


def n_fills(template: Template, lexicons: dict) -> int:
    """How many lexicon fills a template has (1 without lexicon slots)."""
    return prod(len(v) for v in _key_lexicons(template, lexicons))


def lexicon_fills(template: Template, lexicons: dict):
    """Every combination of the template's lexicon slots, as dicts, in a
    fixed order: the cartesian product over the slots in order of first
    appearance (the last slot varies fastest); ``[{}]`` without slots.
    Lazy: fills are made as they are consumed."""
    keys = template.lexicon_keys
    if not keys:
        return iter([{}])
    return (dict(zip(keys, v)) for v in itertools.product(*_key_lexicons(template, lexicons)))


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


def example_counts(suite: Suite, *, attributes: Iterable[str] | None = None) -> list[tuple[Template, int]]:
    """Examples per template, from the lexicon and term counts alone (nothing
    is expanded): ``[(template, count)]`` in suite order."""
    wanted = _wanted(attributes)
    out = []
    for tpl in suite.templates:
        attrs = [a for a in suite.attributes_for(tpl) if wanted is None or a in wanted]
        terms = sum(len(suite.identity[a].terms[g][tpl.identity_kind]) for a in attrs for g in suite.identity[a].groups)
        out.append((tpl, n_fills(tpl, suite.lexicons) * terms if terms else 0))
    return out


def check_size(suites: Iterable, *, attributes=None, max_examples: int | None = None) -> int:
    """The number of examples the suites expand to; SuiteError past
    ``max_examples`` (default: :func:`example_limit`'s value, else
    :data:`DEFAULT_MAX_EXAMPLES`), naming the largest templates and their counts."""
    limit = _LIMIT.get() if max_examples is None else max_examples
    suites = [s if isinstance(s, Suite) else load_suite(s) for s in suites]
    per = [(s, tpl, n) for s in suites for tpl, n in example_counts(s, attributes=attributes)]
    total = sum(n for _, _, n in per)
    if total > limit:
        top = sorted(per, key=lambda x: -x[2])[:5]
        s0, t0, _ = top[0]
        listed = ", ".join(f"{s.name}/{t.id}: {n:,}" for s, t, n in top)
        more = f" (and {len(per) - len(top)} more templates)" if len(per) > len(top) else ""
        raise SuiteError(
            f"expands to {total:,} examples, more than the limit of {limit:,} "
            f"({option('max_examples=', '--max-examples')} raises it); per template: {listed}{more}",
            file=s0.path, line=t0.line, field=f"templates[{t0.index}]",
        )
    return total


def _wanted(attributes):
    return None if attributes is None else set([attributes] if isinstance(attributes, str) else attributes)


def expand_suite(suite: Suite | str | Path, *, attributes: Iterable[str] | None = None,
                 max_examples: int | None = None, rows=None, columns=None) -> pd.DataFrame:
    """All examples of a suite as a table (``EXAMPLE_COLUMNS``).

    Parameters
    ----------
    suite : Suite or path
    attributes : keep only these attributes (default all of the suite's).
    max_examples : refuse (SuiteError, before expanding) suites with more
        examples; default :data:`DEFAULT_MAX_EXAMPLES` or :func:`example_limit`'s value.
    rows, columns : the task family's row maker ``rows(suite, wanted, covering=False)``
        and its columns (default :func:`text_rows`, ``EXAMPLE_COLUMNS``);
        :func:`bias_suite.families.expand_suites` picks them by the suite's task.
    """
    if not isinstance(suite, Suite):
        suite = load_suite(suite)
    check_size([suite], attributes=attributes, max_examples=max_examples)
    return pd.DataFrame(list((rows or text_rows)(suite, _wanted(attributes))), columns=columns or EXAMPLE_COLUMNS)


def text_rows(suite: Suite, wanted=None, covering: bool = False):
    """One row per example (``EXAMPLE_COLUMNS``): the rendered text of every variant."""
    for tpl in suite.templates:
        for unit, a, g, t_idx, term, values in variants(suite, tpl, wanted, covering=covering):
            try:
                text = render(tpl.text, values)
            except KeyError as e:
                raise SuiteError(f"slot {{{e.args[0]}}} has no value", file=suite.path,
                                 line=suite.line_of("templates", tpl.index, "text"), field=f"templates[{tpl.index}].text") from None
            yield (f"{unit}/{a}/{g}/{t_idx}", unit, a, g, term, text, tpl.label, suite.name, tpl.id, tpl.identity_kind)


def _covering_fills(tpl: Template, lexicons: dict):
    """``(fill index, fill)`` pairs in which every value of every lexicon slot
    appears at least once (the other slots at their first value)."""
    if not tpl.lexicon_keys:
        yield 0, {}
        return
    lists = _key_lexicons(tpl, lexicons)
    sizes = [len(v) for v in lists]
    done = set()
    for k, vals in enumerate(lists):
        for j in range(len(vals)):
            pos = [0] * len(lists)
            pos[k] = j
            idx = 0
            for p, n in zip(pos, sizes):  # row-major index of the fill in lexicon_fills order
                idx = idx * n + p
            if idx not in done:
                done.add(idx)
                yield idx, {key: lists[i][pos[i]] for i, key in enumerate(tpl.lexicon_keys)}


def variants(suite: Suite, tpl: Template, wanted=None, *, covering: bool = False):
    """Every example of one template, in the deterministic expansion order:
    yields ``(unit, attribute, group, term_index, term, slot_values)`` for each
    lexicon fill (``unit`` is the counterfactual template id), attribute
    (restricted to ``wanted`` when given), group and identity term.

    ``covering=True`` yields only the examples that ``validate`` renders:
    every identity term with every value of every lexicon slot at least once."""
    attrs = [a for a in suite.attributes_for(tpl) if wanted is None or a in wanted]
    if not attrs:
        return
    many = n_fills(tpl, suite.lexicons) > 1
    fills = _covering_fills(tpl, suite.lexicons) if covering else enumerate(lexicon_fills(tpl, suite.lexicons))
    for f_idx, fill in fills:
        unit = f"{suite.name}/{tpl.id}" + (f"#{f_idx}" if many else "")
        for a in attrs:
            terms = suite.identity[a]
            for g in terms.groups:
                for t_idx, term in enumerate(terms.terms[g][tpl.identity_kind]):
                    values = dict(fill)
                    values[tpl.identity_kind] = term
                    yield unit, a, g, t_idx, term, values


def expand_suites(suites: Iterable, *, attributes=None, max_examples: int | None = None, rows_for=None) -> pd.DataFrame:
    """Expand several suites into one table (suite names must differ);
    ``max_examples`` bounds the total (see :func:`expand_suite`);
    ``rows_for(suite) -> (rows, columns)`` gives each suite's row maker."""
    loaded, names = [], set()
    for s in suites:
        s = s if isinstance(s, Suite) else load_suite(s)
        if s.name in names:
            raise SuiteError(f"two suites are named {s.name!r}", file=s.path, field="suite")
        names.add(s.name)
        loaded.append(s)
    check_size(loaded, attributes=attributes, max_examples=max_examples)
    frames = [expand_suite(s, attributes=attributes, max_examples=float("inf"),
                           **dict(zip(("rows", "columns"), rows_for(s) if rows_for else (None, None))))
              for s in loaded]
    if not frames:
        return pd.DataFrame(columns=EXAMPLE_COLUMNS)
    out = pd.concat(frames, ignore_index=True)
    dup = out["id"].duplicated()
    if dup.any():  # loader checks make this impossible; never hand on ambiguous ids
        raise SuiteError(f"duplicate example id {out['id'][dup].iloc[0]!r}", file=loaded[0].path)
    return out


def validate_suite(suite: Suite | str | Path, *, attributes=None, max_examples: int | None = None, rows=None) -> int:
    """Every check that expansion makes, without expanding: the size limit,
    the row maker's template checks (``rows``, as in :func:`expand_suite`),
    and a rendering of every identity term and every lexicon value of every
    template. Returns the number of examples the suite expands to; raises
    SuiteError."""
    if not isinstance(suite, Suite):
        suite = load_suite(suite)
    total = check_size([suite], attributes=attributes, max_examples=max_examples)
    for _ in (rows or text_rows)(suite, _wanted(attributes), covering=True):
        pass
    return total


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
