"""Any CheckList test in: INV/DIR tests (``Perturb`` output, custom
perturbation functions, Editor lists), TestSuites and plain lists of
perturbed variants become bias_suite examples whose counterfactual templates
are CheckList's test cases.

Each case's sentences are compared word by word with its first sentence; the
words that differ are the identity term, and the term's group comes from
``groups`` when given, else from the bundled identity lexicons
(``identity_terms/*.yaml``, first names in ``names.yaml``) and CheckList's own
first-name lists (``checklist/data/names.json``: men -> male, women ->
female; names on both lists are left out). Sentences whose term is in no
group are dropped (counted in ``examples.attrs["dropped"]``).
"""
from __future__ import annotations

import difflib
import functools
import json
import re
import warnings
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd
from munch import Munch

from ..exceptions import BiasSuiteError

__all__ = ["from_checklist", "adopt_inv", "identity_lexicon"]

_TOKEN = re.compile(r"\w[\w'-]*|[^\w\s]")
COLUMNS = ["id", "template", "attribute", "group", "term", "text", "label", "suite", "source_template", "slot"]


@functools.lru_cache(maxsize=1)
def identity_lexicon() -> dict:
    """``{"terms": {term.lower(): (attribute, group)}, "names": {Name: (...)}}``
    from the bundled identity files and CheckList's first-name lists (names
    match with their capital only, so "Tea" the name is not "tea"; terms
    claimed by two groups are left out)."""
    from ..paths import data_dir
    from ..suites.loader import load_identity_terms

    seen: dict = {}
    clash: set = set()

    def put(term, attribute, group):
        k = term.lower()
        if k in seen and seen[k] != (attribute, group):
            clash.add(k)
        seen.setdefault(k, (attribute, group))

    folder = Path(data_dir("identity_terms"))
    for path in sorted(folder.glob("*.yaml")):
        it = load_identity_terms(path)
        attribute = "gender" if it.attribute == "names" else it.attribute  # first names stand for gender
        for g in it.groups:
            for terms in it.terms[g].values():
                for t in terms:
                    put(t, attribute, g)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import checklist
        names = json.loads((Path(checklist.__file__).parent / "data" / "names.json").read_text(encoding="utf-8"))
        both = {n.lower() for n in names.get("men", [])} & {n.lower() for n in names.get("women", [])}
        exact = {n: ("gender", g) for key, g in (("men", "male"), ("women", "female")) for n in names.get(key, [])
                 if n.lower() not in both and n.lower() not in seen}
    except (ImportError, OSError, ValueError):  # no checklist data: the bundled lexicons only
        exact = {}
    return {"terms": {k: v for k, v in seen.items() if k not in clash}, "names": exact}


def _user_lexicon(groups: Mapping[str, Sequence[str]], attribute: str) -> dict:
    out = {}
    for g, terms in groups.items():
        if isinstance(terms, str):
            raise BiasSuiteError(f"groups[{g!r}] must be a list of terms, got the string {terms!r}")
        for t in terms:
            k = str(t).lower()
            if k in out and out[k][1] != g:
                raise BiasSuiteError(f"term {t!r} is in groups {out[k][1]!r} and {g!r}")
            out[k] = (attribute, g)
    return {"terms": out, "names": {}}


def _diff_terms(a: str, b: str) -> tuple[str, str] | None:
    """The words of ``a`` and ``b`` that differ (one span each), or None."""
    ta, tb = _TOKEN.findall(a), _TOKEN.findall(b)
    ops = [op for op in difflib.SequenceMatcher(a=ta, b=tb, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops:
        return None
    i1, i2, j1, j2 = ops[0][1], ops[-1][2], ops[0][3], ops[-1][4]
    return " ".join(ta[i1:i2]), " ".join(tb[j1:j2])


def _lookup(term: str, lex: dict):
    if not term:
        return None
    def one(w):
        return lex["names"].get(w) or lex["terms"].get(w.lower())

    hit = one(term)
    if hit is None:  # "Mary Smith" -> "Mary", "the Muslim" -> "Muslim"
        for w in term.split():
            hit = one(w)
            if hit is not None:
                break
    return hit


def _cases(x) -> list[tuple[str, list, list]]:
    """(test name, cases, labels) of a test, a TestSuite or a list of variants."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from checklist.abstract_test import AbstractTest
        from checklist.test_suite import TestSuite

    if isinstance(x, TestSuite):
        return [c for t in x.tests.values() for c in _cases(t)]
    if isinstance(x, AbstractTest):
        labels = x.labels if isinstance(x.labels, list) else [x.labels] * len(x.data)
        return [(x.name or type(x).__name__, list(x.data), labels)]
    data = x.get("data") if isinstance(x, Mapping) else getattr(x, "data", x)
    if isinstance(data, (list, tuple)):
        return [("perturbed", list(data), [None] * len(data))]
    raise BiasSuiteError(f"expected a CheckList test, TestSuite or a list of perturbed variants, got {type(x).__name__}")


def _label(v, class_names):
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        return class_names[v] if class_names and 0 <= v < len(class_names) else str(v)
    return str(v)


def case_meta(case: Sequence[str], lex: dict) -> list:
    """``{"attribute", "group", "term"}`` (or None) for each sentence of one case."""
    case = [str(s) for s in case]
    if len(case) < 2:
        return [None] * len(case)
    diffs = [_diff_terms(case[0], s) for s in case[1:]]
    first = next((d[0] for d in diffs if d is not None), None)
    terms = [first] + [d[1] if d is not None else first for d in diffs]
    out = []
    for t in terms:
        hit = _lookup(t, lex) if t else None
        out.append(None if hit is None else {"attribute": hit[0], "group": hit[1], "term": t})
    return out


def from_checklist(tests, *, groups: Mapping[str, Sequence[str]] | None = None, attribute: str | None = None,
                   class_names: Sequence[str] | None = None, suite: str = "checklist") -> pd.DataFrame:
    """bias_suite examples from CheckList tests (module docstring): one
    counterfactual template per CheckList test case (``"<suite>/<test>#<case>"``).

    ``groups``: ``{group: [terms]}`` for terms the bundled lexicons do not
    know (``attribute`` names them; default ``"identity"``). MFT labels
    (integers through ``class_names``) become the examples' labels."""
    lex = _user_lexicon(groups, attribute or "identity") if groups else identity_lexicon()
    rows, dropped = [], 0
    for name, cases, labels in _cases(tests):
        for d, case in enumerate(cases):
            sents = [case] if isinstance(case, str) else list(case)
            metas = case_meta(sents, lex)
            found = [m for m in metas if m is not None]
            if not found:
                dropped += len(sents)
                continue
            attrs = pd.Series([m["attribute"] for m in found]).value_counts()
            a = attribute or attrs.index[0]
            unit = f"{suite}/{name}#{d}"
            label = _label(labels[d] if d < len(labels) else None, class_names)
            seen = set()
            for k, (s, m) in enumerate(zip(sents, metas)):
                if m is None or (attribute is None and m["attribute"] != a) or s in seen:
                    dropped += 1
                    continue
                seen.add(s)
                rows.append({"id": f"{unit}/{a}/{m['group']}/{k}", "template": unit, "attribute": a,
                             "group": m["group"], "term": m["term"], "text": str(s), "label": label, "suite": suite,
                             "source_template": f"{suite}/{name}", "slot": "identity"})
    df = pd.DataFrame(rows, columns=COLUMNS)
    if df.empty:
        raise BiasSuiteError("no sentence of these CheckList tests has an identity term of a known group: "
                             "pass groups={group: [terms]}")
    df.attrs["dropped"] = dropped
    return df


def adopt_inv(test, *, groups: Mapping[str, Sequence[str]] | None = None, attribute: str | None = None,
              threshold: float = 0.1) -> None:
    """Let bias_suite read an INV test it did not build (``invariance_rows``,
    ``failures``): each sentence's group and term are found as in
    :func:`from_checklist`; the test's own expectation still decides which
    cases fail (CheckList's fail rate), ``threshold`` with CheckList's
    ``Expect.inv`` rule decides which group pairs differ."""
    lex = _user_lexicon(groups, attribute or "identity") if groups else identity_lexicon()
    metas = [case_meta([case] if isinstance(case, str) else list(case), lex) for case in test.data]
    found = [m for case in metas for m in case if m is not None]
    if not found:
        raise BiasSuiteError(f"test {test.name!r}: no sentence has an identity term of a known group: "
                             "pass groups={group: [terms]}")
    a = attribute or pd.Series([m["attribute"] for m in found]).value_counts().index[0]
    order = list(dict.fromkeys(m["group"] for m in found if m["attribute"] == a))
    case_meta_ = [[m if m is not None and m["attribute"] == a else {} for m in case] for case in metas]
    test.bias_suite = Munch({"kind": "invariance", "attribute": a, "groups": order, "threshold": float(threshold),
                             "criterion": "checklist", "mode": "checklist", "seed": 0, "task": "classification",
                             "class_names": None, "dropped_templates": 0, "case_meta": case_meta_, "adopted": True})
