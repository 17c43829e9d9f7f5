"""CheckList ``Editor`` outputs and templates as bias_suite examples and suites.
"""
from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..exceptions import BiasSuiteError

# =========================================================================
# CheckList Editor outputs and templates -> bias_suite


# =========================================================================
def _group_of(groups: Mapping[str, Sequence[str]]) -> dict:
    out = {}
    for g, terms in groups.items():
        for t in terms:
            if t in out and out[t] != g:
                raise BiasSuiteError(f"term {t!r} is in groups {out[t]!r} and {g!r}")
            out[t] = g
    return out


def _label_of(label, class_names, ret, i, j):
    if callable(label):
        return label(i, j)
    if label is not None:
        return label
    labels = ret.get("labels") if isinstance(ret, Mapping) else getattr(ret, "labels", None)
    if labels is None:
        return None
    v = labels[i]
    if isinstance(v, (list, tuple)) and j is not None:
        v = v[j]
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        if class_names is None:
            raise BiasSuiteError("the Editor labels are integers: pass class_names=[...] to name them")
        return class_names[int(v)]
    return None if v is None else str(v)


def _skeleton(text: str, term: str) -> str:
    """The sentence with its identity term (and an article just before it)
    blanked: sentences of one template share it whatever the term."""
    pat = re.compile(r"(?:\b(?:an?|An?)\s+)?" + re.escape(term) + r"\b" if term[-1:].isalnum() else re.escape(term),
                     flags=re.IGNORECASE)
    return pat.sub("\x00", text, count=1)


def _keys_and_groups(attribute_key, groups):
    """(identity keys, key -> group or None, groups) for the forms of ``attribute_key``."""
    if isinstance(attribute_key, str):
        return [attribute_key], {attribute_key: None}, dict(groups or {})
    if isinstance(attribute_key, Mapping):  # {"male": "male", "female": "female"}: one lexicon per group
        key_group = {str(k): str(g) for k, g in attribute_key.items()}
    else:
        key_group = {str(k): None for k in attribute_key}
    if not key_group:
        raise BiasSuiteError("attribute_key names no template key")
    return list(key_group), key_group, dict(groups or {})


def from_editor(ret, *, attribute_key, groups: Mapping[str, Sequence[str]] | None = None, label=None,
                template_id: str = "editor", attribute: str | None = None,
                class_names: Sequence[str] | None = None, suite: str = "checklist") -> pd.DataFrame:
    """Examples (docs/formats.md columns) from ``Editor.template(..., meta=True)``.

    Parameters
    ----------
    ret : the Editor's output, CheckList's Munch (``ret.data``, ``ret.meta``;
        ``ret.labels`` when given to the Editor), also several outputs added
        with ``+``, or a plain dict of the same keys. Several templates in one call (lists in
        ``ret.data``) become one template family each.
    attribute_key : the template key holding the identity term (``"{attr}"`` ->
        ``"attr"``); ``meta[attribute_key]`` is the term. With one lexicon per
        group (``editor.template("{male} ...")`` + ``editor.template("{female} ...")``)
        a list of keys (each key is its group's name unless ``groups`` places
        the term) or a mapping ``{key: group}``.
    groups : ``{group: [terms]}``; sentences whose term is in no group raise.
        Optional when every key maps to a group.
    label : a class name for every example, a callable ``(i, j) -> label``, or
        None to take ``ret.labels`` (integers mapped through ``class_names``).
    template_id : id of the template family; sentences that differ only in
        the identity term share one counterfactual ``template``
        (``"<suite>/<template_id>#<k>"``, k numbering the other fill-ins).
    attribute : attribute name (default ``attribute_key``).
    """
    data = ret["data"] if isinstance(ret, Mapping) else ret.data
    meta = (ret.get("meta") if isinstance(ret, Mapping) else getattr(ret, "meta", None))
    if meta is None:
        raise BiasSuiteError("the Editor output has no meta: call editor.template(..., meta=True)")
    if len(meta) != len(data):
        raise BiasSuiteError(f"ret.meta has {len(meta)} entries for {len(data)} data items")
    keys, key_group, groups = _keys_and_groups(attribute_key, groups)
    attribute = attribute or (keys[0] if len(keys) == 1 else "identity")
    group_of = _group_of(groups)
    lower = {t.lower(): g for t, g in group_of.items()}
    term_index = {g: {t: k for k, t in enumerate(ts)} for g, ts in groups.items()}
    seen_terms: dict = {}
    fills: dict = {}
    rows = []
    nested = bool(data) and isinstance(data[0], (list, tuple))
    for i, (item, m) in enumerate(zip(data, meta)):
        texts = list(item) if nested else [item]
        key = next((k for k in keys if k in m), None)
        if key is None:
            raise BiasSuiteError(f"item {i} ({str(texts[0])!r}): its meta has no key {' or '.join(map(repr, keys))} "
                                 f"(keys: {sorted(m)}); pass attribute_key=[...] naming the key of every template")
        term = str(m[key])
        g = group_of.get(term, lower.get(term.lower())) or key_group.get(key)
        if g is None and len(keys) > 1:
            g = key
        if g is None:
            raise BiasSuiteError(f"item {i} ({str(texts[0])!r}): term {term!r} of key {key!r} is in no group of "
                                 f"{sorted(groups)}")
        t_idx = term_index.get(g, {}).get(term)
        if t_idx is None:
            t_idx = next((k for k, t in enumerate(groups.get(g, [])) if t.lower() == term.lower()), None)
        if t_idx is None:
            t_idx = seen_terms.setdefault(g, {}).setdefault(term, len(seen_terms.setdefault(g, {})))
        others = tuple(sorted((k, str(v)) for k, v in m.items() if k not in keys))
        k = fills.setdefault((others, _skeleton(str(texts[0]), term)), len(fills))
        for j, text in enumerate(texts):
            fam = f"{template_id}/{j}" if nested else template_id
            rows.append({"fam": fam, "k": k, "attribute": attribute, "group": g, "term": term, "text": str(text),
                         "label": _label_of(label, class_names, ret, i, j if nested else None),
                         "suite": suite, "source_template": fam, "slot": key, "t_idx": t_idx, "item": i})
    several = len(fills) > 1
    out = []
    for r in rows:
        unit = f"{suite}/{r['fam']}" + (f"#{r['k']}" if several else "")
        out.append({"id": f"{unit}/{r['attribute']}/{r['group']}/{r['t_idx']}", "template": unit, **{
            k: r[k] for k in ("attribute", "group", "term", "text", "label", "suite", "source_template", "slot")}})
    df = pd.DataFrame(out, columns=["id", "template", "attribute", "group", "term", "text", "label", "suite",
                                    "source_template", "slot"])
    dup = df["id"].duplicated()
    if dup.any():
        r = rows[int(np.flatnonzero(dup.to_numpy())[0])]
        raise BiasSuiteError(f"item {r['item']} ({r['text']!r}) repeats the sentence of an earlier item with the same "
                             f"fill-ins (key {r['slot']!r} = {r['term']!r}): the Editor output holds it twice")
    return df


_KEY_RE = re.compile(r"\{(?:(?P<opt>[^:{}]+):)?(?P<key>[A-Za-z_][A-Za-z0-9_]*)\}")


def suite_from_templates(templates, *, attribute_key: str, groups: Mapping[str, Sequence[str]], classes: Sequence[str],
                         labels, lexicons: Mapping[str, Sequence[str]] | None = None, name: str = "checklist",
                         attribute: str | None = None, kind: str = "identity_adj", out_dir=None,
                         description: str = "Converted from CheckList templates",
                         sources: Sequence[str] = ("CheckList Editor fill-ins supplied by the user",),
                         template_ids: Sequence[str] | None = None):
    """A bias_suite suite (YAML files + loaded :class:`Suite`) from
    CheckList-style templates and lexicons.

    ``templates``: a template string, a list of them, or an Editor output made
    with ``save=True`` (CheckList's Munch; its template strings and fill-ins
    are used, those of every output when several were added with ``+``). The
    identity key (``{attr}``/``{a:attr}``) becomes the slot ``{<kind>}``;
    other keys become the suite's lexicons (``lexicons``, else the Editor's
    fill-ins). ``labels``: one class name (or index into ``classes``) per
    template, or one for all. Writes ``<name>.yaml`` and
    ``identity_terms/<attribute>.yaml`` to ``out_dir`` (a new temporary
    folder when None) and returns the loaded Suite.
    """
    import yaml

    from ..families import load_suite

    lexicons = dict(lexicons or {})
    saved = templates.get("templates") if isinstance(templates, Mapping) and "data" in templates else None
    if saved is not None:  # an Editor output (a Munch); outputs added together keep one entry per template call
        strings = []
        for params, items in saved:
            ts = params["templates"]
            strings.extend([ts] if isinstance(ts, str) else list(ts))
            for k, v in items.items():
                if k != attribute_key:
                    lexicons.setdefault(re.sub(r"\d+$", "", k), list(v) if isinstance(v, (list, tuple)) else [v])
        templates = strings
    elif isinstance(templates, Mapping):
        raise BiasSuiteError("an Editor output needs save=True to carry its templates; or pass the template strings")
    tpl_list = [templates] if isinstance(templates, str) else list(templates)
    if not tpl_list or not all(isinstance(t, str) for t in tpl_list):
        raise BiasSuiteError("templates must be strings")
    attribute = attribute or attribute_key
    lab = list(labels) if isinstance(labels, (list, tuple)) else [labels] * len(tpl_list)
    if len(lab) != len(tpl_list):
        raise BiasSuiteError(f"{len(lab)} labels for {len(tpl_list)} templates")
    lab = [classes[int(v)] if isinstance(v, (int, np.integer)) else str(v) for v in lab]
    converted, used = [], set()
    for t in tpl_list:
        def sub(m):
            key, opt = m.group("key"), m.group("opt")
            if key == attribute_key:
                return "{" + (f"{opt}:" if opt else "") + kind + "}"
            if key == "mask":
                raise BiasSuiteError("{mask} (masked-language-model fill-ins) cannot be converted")
            used.add(re.sub(r"\d+$", "", key))
            return m.group(0)
        converted.append(_KEY_RE.sub(sub, t))
    missing = sorted(k for k in used if k not in lexicons)
    if missing:
        raise BiasSuiteError(f"no fill-ins for {missing}: pass lexicons={{...}} (or an Editor output made with save=True)")
    out = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="bias_suite_checklist_"))
    (out / "identity_terms").mkdir(parents=True, exist_ok=True)
    ident = {"attribute": attribute, "description": f"{attribute} (from CheckList)", "sources": list(sources),
             "groups": {g: {kind: list(ts)} for g, ts in groups.items()}}
    from ..io import atomic_write_text

    atomic_write_text(out / "identity_terms" / f"{attribute}.yaml", yaml.safe_dump(ident, sort_keys=False, allow_unicode=True))
    ids = list(template_ids) if template_ids else [f"t{i:03d}" for i in range(len(converted))]
    doc = {"suite": name, "task": "classification", "description": description, "classes": list(classes),
           "identity_terms": [f"identity_terms/{attribute}.yaml"],
           "lexicons": {k: [str(x) for x in lexicons[k]] for k in sorted(used)},
           "templates": [{"id": i, "text": t, "label": l} for i, t, l in zip(ids, converted, lab)]}
    path = out / f"{name}.yaml"
    atomic_write_text(path, yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    return load_suite(path)
