"""YAML suites -> validated objects.

Two file kinds (format in docs/suite_format.md): identity-term files (one
attribute, its groups and their terms per slot kind) and suite files (task,
classes, identity-term files, lexicons, templates). Loading is safe YAML
only; every problem raises one :class:`SuiteError` naming the file, the line
and the field.
"""
from __future__ import annotations

import functools
import math
import os

import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..exceptions import SuiteError, did_you_mean
from ..paths import data_dir

IDENTITY_KINDS = ("identity_adj", "identity_np", "identity_plural", "person", "country")
_IDENT = re.compile(r"^[a-z][a-z0-9_]*$")
_SLOT_KEY = re.compile(r"^(?:(?P<opt>[^:{}]+):)?(?P<name>[A-Za-z_][A-Za-z0-9_]*?)(?P<num>\d*)$")


# ------------------------------------------------------------ YAML + lines
MAX_YAML_DEPTH = 64  # nesting levels of a suite file, aliases expanded (suites need about 5)
MAX_ALIAS_NODES = 10_000  # YAML nodes that aliases may add in all (refuses "billion laughs" files)


def _check_yaml_shape(text: str, path) -> None:
    """Refuse deep nesting and alias expansion past the budgets, from the
    event stream (no recursion, no expansion), with the line at fault."""
    stack: list = []  # open collections: [anchor, expanded node count, expanded depth below]
    size: dict = {}
    depth: dict = {}
    added = 0

    def close(n, d, mark):
        if d > MAX_YAML_DEPTH:
            raise SuiteError(f"YAML nested more than {MAX_YAML_DEPTH} levels deep (aliases expanded)", file=path, line=mark.line + 1)
        if stack:
            stack[-1][1] += n
            stack[-1][2] = max(stack[-1][2], d)

    for ev in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(ev, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(stack) >= MAX_YAML_DEPTH:
                raise SuiteError(f"YAML nested more than {MAX_YAML_DEPTH} levels deep", file=path, line=ev.start_mark.line + 1)
            stack.append([ev.anchor, 1, 0])
        elif isinstance(ev, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            anchor, n, d = stack.pop()
            if anchor is not None:
                size[anchor], depth[anchor] = n, d + 1
            close(n, d + 1, ev.start_mark)
        elif isinstance(ev, yaml.ScalarEvent):
            if ev.anchor is not None:
                size[ev.anchor], depth[ev.anchor] = 1, 0
            close(1, 0, ev.start_mark)
        elif isinstance(ev, yaml.AliasEvent):
            if ev.anchor not in size:
                what = "refers to a collection that contains it" if any(f[0] == ev.anchor for f in stack) else "is not defined before"
                raise SuiteError(f"YAML alias *{ev.anchor} {what}", file=path, line=ev.start_mark.line + 1)
            added += size[ev.anchor]
            if added > MAX_ALIAS_NODES:
                raise SuiteError(
                    f"YAML aliases expand to more than {MAX_ALIAS_NODES} values (nested aliases multiply); write the values out",
                    file=path, line=ev.start_mark.line + 1,
                )
            close(size[ev.anchor], depth[ev.anchor], ev.start_mark)


def _key(node):
    """A mapping key usable in paths: scalars only (others cannot name a field)."""
    return node.value if isinstance(node, yaml.ScalarNode) else None


def _line_index(root) -> dict:
    """Map key paths to 1-based line numbers from a composed YAML node.

    Iterative; a node reached a second time (through an alias) is not walked
    again: paths below an alias take the alias's own line."""
    out: dict = {}
    seen: set = set()
    todo = [(root, ())]
    while todo:
        node, path = todo.pop()
        out.setdefault(path, node.start_mark.line + 1)
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                key = _key(k)
                if key is None:
                    continue
                out[path + (key,)] = k.start_mark.line + 1
                todo.append((v, path + (key,)))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                todo.append((v, path + (i,)))
    return out


def _check_duplicate_keys(root, path) -> None:
    seen_nodes: set = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: dict = {}
            for k, v in node.value:
                key = _key(k)
                if key is not None and key in keys:
                    raise SuiteError(f"duplicate key {key!r} (first on line {keys[key]})", file=path, line=k.start_mark.line + 1, field=key)
                if key is not None:
                    keys[key] = k.start_mark.line + 1
                todo.extend((k, v))
        elif isinstance(node, yaml.SequenceNode):
            todo.extend(node.value)


def read_yaml(path: Path) -> tuple[Any, dict]:
    """Safe-load a YAML file; return the data and a key-path -> line map."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SuiteError("no such file", file=path) from None
    except IsADirectoryError:
        raise SuiteError("is a folder, not a YAML file", file=path) from None
    except UnicodeDecodeError as e:
        raise SuiteError(f"not UTF-8 text ({e.reason})", file=path) from None
    except OSError as e:
        raise SuiteError(f"cannot read: {e.strerror or e}", file=path) from None
    try:
        _check_yaml_shape(text, path)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        raise SuiteError(f"invalid YAML: {e.problem or e.context}{_tab_hint(text, mark)}", file=path,
                         line=mark.line + 1 if mark else None) from None
    except yaml.YAMLError as e:
        raise SuiteError(f"invalid YAML: {e}", file=path) from None
    try:
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else None
        raise SuiteError(f"invalid YAML: {e.problem or e.context}{_tab_hint(text, mark)}", file=path, line=line) from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as e:  # e.g. unhashable keys, out-of-range timestamps
        raise SuiteError(f"invalid YAML: {e}", file=path) from None
    if node is None:
        return data, {}
    # duplicate keys: safe_load keeps the last silently; refuse them
    _check_duplicate_keys(node, path)
    lines = _line_index(node)
    _check_text(data, path, lines)
    return data, lines


def _tab_hint(text: str, mark) -> str:
    """A hint when a tab in the indentation is what YAML stumbled on (its own
    message only says that a tab cannot start a token)."""
    lines = text.splitlines()
    at = mark.line if mark is not None else None
    order = ([at] if at is not None and at < len(lines) else []) + list(range(len(lines)))
    for i in order:
        indent = lines[i][: len(lines[i]) - len(lines[i].lstrip(" \t"))]
        if "\t" in indent:
            return f"; YAML does not allow tabs for indentation: replace the tab on line {i + 1} with spaces"
    return ""


def _check_text(data, path, lines) -> None:
    """Refuse strings that cannot be written out as UTF-8 (lone surrogates
    from ``"\\ud800"`` escapes). The data is small: aliases are budgeted."""
    todo = [(data, ())]
    while todo:
        obj, loc = todo.pop()
        if isinstance(obj, str):
            try:
                obj.encode("utf-8")
            except UnicodeEncodeError:
                raise SuiteError(f"not valid Unicode text (lone surrogate) in {obj!r}", file=path, line=_line_for(lines, loc),
                                 field=_fmt_loc(loc) or None) from None
        elif isinstance(obj, dict):
            todo.extend((k, loc) for k in obj)
            todo.extend((v, loc + (k,)) for k, v in obj.items())
        elif isinstance(obj, list):
            todo.extend((v, loc + (i,)) for i, v in enumerate(obj))


def _line_for(lines: dict, loc) -> int | None:
    loc = tuple(loc)
    while loc:
        if loc in lines:
            return lines[loc]
        loc = loc[:-1]
    return lines.get((), None)


def _fmt_loc(loc) -> str:
    out = ""
    for p in loc:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _validate(model, data, path, lines):
    if not isinstance(data, dict):
        raise SuiteError(f"expected a mapping at the top level, got {type(data).__name__}", file=path, line=1)
    try:
        return model.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = tuple(err["loc"])
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
        elif err["type"] == "missing":
            msg = "required field is missing"
        raise SuiteError(msg, file=path, line=_line_for(lines, loc), field=_fmt_loc(loc)) from None


# ------------------------------------------------------------ identity terms
class _IdentityModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    attribute: str
    description: str = ""
    sources: list[str] = Field(min_length=1)
    groups: dict[str, dict[str, list[str]]] = Field(min_length=1)
    group_source: str | None = None  # e.g. how countries were grouped

    @field_validator("attribute")
    @classmethod
    def _ident(cls, v):
        if not _IDENT.match(v):
            raise ValueError(f"must be a lowercase identifier (letters, digits, _), got {v!r}")
        return v


@dataclass(frozen=True)
class IdentityTerms:
    """One attribute's groups and terms: ``terms[group][kind] -> [terms]``."""

    attribute: str
    groups: list
    terms: dict
    sources: list
    description: str = ""
    path: str | None = None

    @property
    def kinds(self) -> list[str]:
        first = self.groups[0]
        return list(self.terms[first])

    def restrict(self, groups) -> "IdentityTerms":
        return IdentityTerms(self.attribute, list(groups), {g: self.terms[g] for g in groups}, self.sources, self.description, self.path)


def _check_term(term, path, line, fld):
    if not isinstance(term, str) or not term:
        raise SuiteError(f"terms must be non-empty strings, got {term!r}", file=path, line=line, field=fld)
    if term != term.strip() or "  " in term or "\t" in term or "\n" in term:
        raise SuiteError(f"stray whitespace in term {term!r}", file=path, line=line, field=fld)
    if "{" in term or "}" in term:
        raise SuiteError(f"braces are not allowed in terms: {term!r}", file=path, line=line, field=fld)


def is_identity_file(path) -> bool:
    """Whether a YAML file is an identity-term file (``attribute`` and
    ``groups`` at the top level, no ``suite``) rather than a suite; a file
    that cannot be read is neither (loading it says why)."""
    try:
        data, _ = read_yaml(Path(path))
    except SuiteError:
        return False
    return isinstance(data, dict) and "suite" not in data and {"attribute", "groups"} <= set(data)


def load_identity_terms(path) -> IdentityTerms:
    """Load and validate an identity-term file."""
    path = Path(path)
    data, lines = read_yaml(path)
    m = _validate(_IdentityModel, data, path, lines)
    kinds0 = None
    seen: dict = {}
    for g, kinds in m.groups.items():
        gl = _line_for(lines, ("groups", g))
        if not _IDENT.match(g):
            raise SuiteError(f"group names must be lowercase identifiers, got {g!r}", file=path, line=gl, field=f"groups.{g}")
        if not kinds:
            raise SuiteError(f"group {g!r} has no terms", file=path, line=gl, field=f"groups.{g}")
        for kind, terms in kinds.items():
            fl = f"groups.{g}.{kind}"
            kl = _line_for(lines, ("groups", g, kind))
            if kind not in IDENTITY_KINDS:
                raise SuiteError(f"unknown slot kind {kind!r}; expected one of {list(IDENTITY_KINDS)}{did_you_mean(kind, IDENTITY_KINDS)}",
                                 file=path, line=kl, field=fl)
            if not terms:
                raise SuiteError(f"empty group: no {kind} terms for group {g!r}", file=path, line=kl, field=fl)
            local = set()
            for i, t in enumerate(terms):
                tl = _line_for(lines, ("groups", g, kind, i))
                _check_term(t, path, tl, f"{fl}[{i}]")
                if t in local:
                    raise SuiteError(f"duplicate term {t!r}", file=path, line=tl, field=f"{fl}[{i}]")
                local.add(t)
                other = seen.get((kind, t.lower()))
                if other is not None and other != g:
                    raise SuiteError(f"term {t!r} is in groups {other!r} and {g!r}", file=path, line=tl, field=f"{fl}[{i}]")
                seen[(kind, t.lower())] = g
        if kinds0 is None:
            kinds0 = set(kinds)
        elif set(kinds) != kinds0:
            raise SuiteError(
                f"group {g!r} has slot kinds {sorted(kinds)}, other groups have {sorted(kinds0)}", file=path, line=gl, field=f"groups.{g}"
            )
    return IdentityTerms(m.attribute, list(m.groups), {g: dict(k) for g, k in m.groups.items()}, list(m.sources), m.description, str(path))


# ------------------------------------------------------------ suites
class _IdentityRef(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file: str
    groups: list[str] | None = None


class _TemplateModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    text: str
    label: str | None = None
    attributes: list[str] | None = None
    tags: Any = None  # sequence labelling: gold tags of the template's own tokens
    description: str | None = None


class _SuiteModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    suite: str
    task: str = "classification"
    description: str = ""
    classes: list[str] | None = None
    identity_terms: list[str | _IdentityRef] = Field(min_length=1)
    lexicons: dict[str, list[str]] = Field(default_factory=dict)
    slot_tags: dict[str, str] = Field(default_factory=dict)  # NER: slot -> U-X
    templates: list[_TemplateModel] = Field(min_length=1)
    group_order: dict[str, list[str]] | None = None
    thresholds: list[dict] | None = None
    materiality: dict[str, float] | None = None  # metric name or topic -> tau (the smallest material effect)

    @field_validator("materiality")
    @classmethod
    def _tau(cls, v):
        for k, tau in (v or {}).items():
            if not (math.isfinite(tau) and tau > 0):
                raise ValueError(f"the threshold of {k!r} must be a positive number, got {tau!r}")
        return v


@dataclass(frozen=True)
class Template:
    id: str
    text: str
    label: str | None
    identity_kind: str | None
    lexicon_keys: list
    attributes: list | None
    line: int | None = None
    tags: Any = None
    index: int = 0  # position in the suite's ``templates`` list (for error fields)


@dataclass
class Suite:
    """A validated suite: templates with their slots resolved."""

    name: str
    task: str
    classes: list
    identity: dict  # attribute -> IdentityTerms (file order)
    lexicons: dict
    templates: list
    description: str = ""
    path: str | None = None
    slot_tags: dict = field(default_factory=dict)
    thresholds: list = field(default_factory=list)
    lines: dict = field(default_factory=dict, repr=False)  # key path -> line in the suite file
    materiality: dict = field(default_factory=dict)  # metric name or topic -> tau

    def line_of(self, *key) -> int | None:
        """1-based line of a key path of the suite file (its parent's when absent)."""
        return _line_for(self.lines, key)

    def attributes_for(self, template: Template) -> list[str]:
        out = []
        for a, terms in self.identity.items():
            if template.attributes is not None and a not in template.attributes:
                continue
            if template.identity_kind in terms.kinds:
                out.append(a)
        return out


def parse_slots(text: str):
    """The ``{...}`` slots of a template as (option, base name, number, raw key).

    Raises ValueError on unbalanced braces, literal braces (``{{``) and
    conversions (``{x!r}``), none of which a template can use.
    """
    out = []
    for lit, key, spec, conv in string.Formatter().parse(text):
        if "{" in lit or "}" in lit:
            raise ValueError("literal braces ('{{' or '}}') are not supported in templates")
        if key is None:
            continue
        if conv:
            raise ValueError(f"conversions such as {{{key}!{conv}}} are not supported; write {{{key}}}")
        raw = key if not spec else f"{key}:{spec}"
        m = _SLOT_KEY.match(raw)
        if not m:
            raise ValueError(f"malformed slot {{{raw}}}")
        out.append((m.group("opt"), m.group("name"), m.group("num"), raw))
    for raw in re.findall(r"\{([^{}]*)\}", text):  # "{x:}" parses as "{x}" but renders as nothing
        if raw.endswith(":"):
            raise ValueError(f"malformed slot {{{raw}}}")
    return out


def slot_base(name: str) -> str:
    """``Identity_np`` -> ``identity_np`` (capitalised slots share the lexicon)."""
    return name[0].lower() + name[1:] if name else name


def identity_file_candidates(ref: str, suite_path: Path) -> list[Path]:
    """Where an identity-term file is looked for, in order: relative to the
    suite file, then the suite folder's sibling ``identity_terms/``, then the
    bundled folder (an absolute path only where it says)."""
    p = Path(ref)
    if p.is_absolute():
        return [p]
    return [suite_path.parent / p, suite_path.parent.parent / "identity_terms" / p, data_dir("identity_terms") / p]


def resolve_identity_file(ref: str, suite_path: Path) -> Path:
    """The first of :func:`identity_file_candidates` that exists (else the
    first candidate)."""
    cands = identity_file_candidates(ref, suite_path)
    return next((c for c in cands if c.exists()), cands[0])


def _missing_identity_file(ref: str, suite_path: Path) -> str:
    """The error text of an identity-term file that is nowhere: each path
    tried, and a close file name from those folders."""
    cands = identity_file_candidates(ref, suite_path)
    near = sorted({str(Path(ref).parent / f.name) for c in cands if c.parent.is_dir() for f in c.parent.glob("*.yaml")})
    return (f"identity-term file {ref!r} not found; looked for " + ", ".join(os.path.abspath(c) for c in cands)
            + did_you_mean(ref, near, cutoff=0.8))


def load_suite(path) -> Suite:
    """Load and validate a suite file (and the identity-term files it names)."""
    path = Path(path)
    data, lines = read_yaml(path)
    m = _validate(_SuiteModel, data, path, lines)
    if not _IDENT.match(m.suite):
        raise SuiteError(f"must be a lowercase identifier, got {m.suite!r}", file=path, line=_line_for(lines, ("suite",)), field="suite")
    if not _IDENT.match(m.task):
        raise SuiteError(f"a task is a lowercase identifier, got {m.task!r}", file=path, line=_line_for(lines, ("task",)), field="task")
    classes = list(m.classes or [])
    identity = {}
    for i, ref in enumerate(m.identity_terms):
        fl = _line_for(lines, ("identity_terms", i))
        file, groups = (ref, None) if isinstance(ref, str) else (ref.file, ref.groups)
        ipath = resolve_identity_file(file, path)
        if not ipath.exists():
            raise SuiteError(_missing_identity_file(file, path), file=path, line=fl, field=f"identity_terms[{i}]")
        if ipath.is_dir():
            raise SuiteError(f"identity-term file {file!r} is a folder", file=path, line=fl, field=f"identity_terms[{i}]")
        terms = load_identity_terms(ipath)
        if groups is not None:
            dup = sorted({g for g in groups if groups.count(g) > 1})
            if dup:
                raise SuiteError(f"group(s) {dup} listed twice", file=path, line=fl, field=f"identity_terms[{i}].groups")
            unknown = [g for g in groups if g not in terms.groups]
            if unknown:
                raise SuiteError(f"unknown group(s) {unknown}; {file} has {terms.groups}{did_you_mean(unknown[0], terms.groups)}",
                                 file=path, line=fl, field=f"identity_terms[{i}].groups")
            if not groups:
                raise SuiteError("empty group list", file=path, line=fl, field=f"identity_terms[{i}].groups")
            terms = terms.restrict(groups)
        if terms.attribute in identity:
            raise SuiteError(f"attribute {terms.attribute!r} listed twice", file=path, line=fl, field=f"identity_terms[{i}]")
        identity[terms.attribute] = terms
    if m.group_order:
        for a, order in m.group_order.items():
            gl = _line_for(lines, ("group_order", a))
            if a not in identity:
                raise SuiteError(f"unknown attribute {a!r} (the suite has {list(identity)}){did_you_mean(a, identity)}",
                                 file=path, line=gl, field=f"group_order.{a}")
            # the groups named come first, in this order; the attribute's others follow in their own
            # (as --group-order and bias_suite.suites.views.group_order)
            have = identity[a].groups
            odd = [g for g in order if g not in have]
            if odd:
                raise SuiteError(f"the attribute does not have: {odd}; its groups are {have}{did_you_mean(odd[0], have)}",
                                 file=path, line=gl, field=f"group_order.{a}")
            twice = sorted({g for g in order if order.count(g) > 1})
            if twice:
                raise SuiteError(f"names {twice} more than once", file=path, line=gl, field=f"group_order.{a}")
            identity[a] = identity[a].restrict(list(order) + [g for g in have if g not in order])
    for name, values in m.lexicons.items():
        ll = _line_for(lines, ("lexicons", name))
        if not re.match(r"^[a-z][a-z0-9_]*[a-z_]$|^[a-z]$", name):
            raise SuiteError(
                "lexicon names are lowercase identifiers not ending in a digit (digits number repeated slots)",
                file=path, line=ll, field=f"lexicons.{name}",
            )
        if name in IDENTITY_KINDS:
            raise SuiteError(f"{name!r} is an identity slot kind, not a lexicon", file=path, line=ll, field=f"lexicons.{name}")
        if not values:
            raise SuiteError("empty lexicon", file=path, line=ll, field=f"lexicons.{name}")
        for j, v in enumerate(values):
            _check_term(v, path, _line_for(lines, ("lexicons", name, j)), f"lexicons.{name}[{j}]")
    all_kinds = {k for t in identity.values() for k in t.kinds}
    templates, seen_ids = [], {}
    for i, t in enumerate(m.templates):
        tl = _line_for(lines, ("templates", i))
        fl = f"templates[{i}]"
        if t.id in seen_ids:
            raise SuiteError(f"duplicate template id {t.id!r} (first on line {seen_ids[t.id]})", file=path, line=_line_for(lines, ("templates", i, "id")), field=f"{fl}.id")
        seen_ids[t.id] = tl
        if not t.id.strip() or any(c in t.id for c in "/#") or t.id != t.id.strip():
            raise SuiteError(f"template ids are non-empty, without '/', '#' or surrounding spaces (they make example ids), got {t.id!r}",
                             file=path, line=_line_for(lines, ("templates", i, "id")), field=f"{fl}.id")
        try:
            slots = parse_slots(t.text)
        except ValueError as e:
            raise SuiteError(f"bad slot syntax in {t.text!r}: {e}", file=path, line=_line_for(lines, ("templates", i, "text")), field=f"{fl}.text") from None
        kinds, lex = [], []
        for opt, name, num, raw in slots:
            base = slot_base(name)
            if opt is not None and opt != "a":
                raise SuiteError(f"unknown slot option {opt!r} in {{{raw}}} (only 'a:')", file=path, line=_line_for(lines, ("templates", i, "text")), field=f"{fl}.text")
            if base in all_kinds:
                if num:
                    raise SuiteError(f"identity slots cannot be numbered: {{{raw}}}", file=path, line=_line_for(lines, ("templates", i, "text")), field=f"{fl}.text")
                kinds.append(base)
            elif base in IDENTITY_KINDS:
                raise SuiteError(
                    f"slot {{{raw}}} needs identity kind {base!r}, which none of the suite's identity-term files provides",
                    file=path, line=_line_for(lines, ("templates", i, "text")), field=f"{fl}.text",
                )
            elif base in m.lexicons or _checklist_lexicon(base):
                lex.append(base + num)
            else:
                raise SuiteError(
                    f"unknown slot {{{raw}}}: not an identity kind of this suite ({sorted(all_kinds)}) nor a lexicon "
                    f"({sorted(m.lexicons)}){did_you_mean(base, sorted(all_kinds | set(m.lexicons)))}",
                    file=path, line=_line_for(lines, ("templates", i, "text")), field=f"{fl}.text",
                )
        kinds = list(dict.fromkeys(kinds))
        if len(kinds) != 1:
            what = "no identity slot" if not kinds else f"several identity slot kinds {kinds}"
            raise SuiteError(f"a template needs exactly one identity slot kind, found {what}", file=path, line=_line_for(lines, ("templates", i, "text")), field=f"{fl}.text")
        if t.attributes is not None:
            unknown = [a for a in t.attributes if a not in identity]
            if unknown:
                raise SuiteError(f"unknown attribute(s) {unknown}; the suite has {list(identity)}{did_you_mean(unknown[0], identity)}",
                                 file=path, line=_line_for(lines, ("templates", i, "attributes")), field=f"{fl}.attributes")
        tpl = Template(t.id, t.text, t.label, kinds[0], list(dict.fromkeys(lex)), t.attributes, tl, t.tags, i)
        templates.append(tpl)
    suite = Suite(m.suite, m.task, classes, identity, dict(m.lexicons), templates, m.description, str(path), dict(m.slot_tags), list(m.thresholds or []), lines,
                  materiality=dict(m.materiality or {}))
    for i, tpl in enumerate(templates):
        if not suite.attributes_for(tpl):
            raise SuiteError(
                f"template {tpl.id!r} applies to no attribute: no listed attribute provides {tpl.identity_kind!r}",
                file=path, line=tpl.line, field=f"templates[{i}].text",
            )
    return suite


@functools.lru_cache(maxsize=1)
def get_editor():
    """One shared CheckList Editor (its construction loads lexicons, so it is made once)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # checklist's deps warn about pkg_resources
        from checklist.editor import Editor

        return Editor()


_CHECKLIST_LEXICONS = None


def _checklist_lexicon(name: str) -> bool:
    """Whether CheckList's Editor has a built-in lexicon of this name
    (first_name, last_name, city, ...), so CheckList templates work unchanged."""
    global _CHECKLIST_LEXICONS
    if _CHECKLIST_LEXICONS is None:
        try:
            _CHECKLIST_LEXICONS = {k for k, v in get_editor().lexicons.items() if isinstance(v, list)}
        except Exception:  # checklist missing: only the suite's own lexicons exist
            _CHECKLIST_LEXICONS = set()
    return name in _CHECKLIST_LEXICONS


def bundled_suites() -> list[Path]:
    """The suite files shipped with bias_suite."""
    return sorted(data_dir("templates").glob("*.yaml"))


def find_suite(name_or_path) -> Path:
    """A suite by path, or by name among the bundled suites ("sentiment_gender")."""
    p = Path(name_or_path)
    if p.exists():
        return p
    for cand in (data_dir("templates") / f"{name_or_path}.yaml", data_dir("templates") / str(name_or_path)):
        if cand.exists():
            return cand
    raise SuiteError(f"no such suite file or bundled suite; bundled: {[q.stem for q in bundled_suites()]}", file=p)
