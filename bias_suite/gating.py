"""CI gating: fail a run when results cross thresholds.

Rules come from a suite file's ``thresholds:`` list, from the command line
(``--fail-if``, ``--fail-on-verdict``) or from Python, and are checked
against the tidy results table (one row per value).

Suite-file schema (each item of ``thresholds:`` is a mapping)::

    thresholds:
      - {metric: BPSN, min: 0.9}                      # any BPSN value below 0.9 fails
      - {metric: FNED, max: 0.1, class: negative}     # FNED above 0.1, class negative only
      - {metric: AccuracyDiff, max: 0.05, abs: true}  # |value| above 0.05
      - {metric: CFGap, verdict: material}            # a CFGap value judged material
      - {metric: FNED, max: 0.3, scope: accumulated, attribute: gender}

Keys:

- ``metric`` (required): a canonical metric name (case-insensitive), or
  ``"*"`` for every metric (useful with ``verdict``).
- ``min`` / ``max``: a value below ``min`` or above ``max`` is a violation
  (either or both).
- ``verdict``: a row whose ``verdict`` starts with this text
  (case-insensitive) is a violation; results without verdicts cannot pass
  such a rule.
- ``attribute``, ``class``, ``group``: restrict the rule (a string or a list).
  A group also matches the pairs it belongs to (``female`` matches
  ``female|male``).
- ``scope``: ``all`` (default), ``groups`` (per-group and per-pair rows) or
  ``accumulated`` (the rows with no group).
- ``abs``: compare the absolute value (for signed metrics).
- ``required`` (default true): a rule that matches no row with a value (a
  metric that was not computed, a typo) is itself a violation.
- ``name``: a label printed with the violations.

Null values (a metric that is not applicable, an undefined rate) are never
compared; they only count for ``required``.

Command-line form: ``--fail-if "BPSN<0.9"`` (fail when a value is below
0.9), ``--fail-if "FNED[class=negative,attribute=gender]>0.1"``,
``--fail-if "|AccuracyDiff|>0.05"``; operators ``<``, ``<=``, ``>``, ``>=``
state the failing condition. ``--fail-on-verdict CFGap`` (or
``"CFGap[class=positive]"``, or ``"*"``) fails on ``material`` verdicts (``--fail-on material:CFGap``).

>>> from bias_suite.gating import check_thresholds
>>> check_thresholds(results, ["BPSN<0.9", {"metric": "CFGap", "verdict": "material"}])  # doctest: +SKIP
"""
from __future__ import annotations

import math
import operator
import re
from dataclasses import dataclass, field
from typing import Iterable

import pandas as pd

from .exceptions import SuiteError, ThresholdError, did_you_mean
from .stats.topics import VERDICTS

EXIT_VIOLATIONS = 3
DEFAULT_VERDICT = "material"
RULE_KEYS = ("metric", "min", "max", "verdict", "attribute", "class", "group", "scope", "abs", "required", "name")
SCOPES = ("all", "groups", "accumulated")
OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


@dataclass(frozen=True)
class Rule:
    """One gating rule: which rows (metric and filters) and what fails
    (``conditions``: (operator, threshold) pairs meaning "fail when value OP
    threshold"; ``verdict``: fail when the verdict starts with this text)."""

    metric: str
    conditions: tuple = ()
    verdict: str | None = None
    attribute: tuple | None = None
    class_: tuple | None = None
    group: tuple | None = None
    scope: str = "all"
    absolute: bool = False
    required: bool = True
    name: str | None = None
    source: str | None = None

    def __post_init__(self):
        if not self.conditions and self.verdict is None:
            raise ThresholdError(f"rule on {self.metric!r} has no condition: give min, max or verdict")
        if self.scope not in SCOPES:
            raise ThresholdError(f"scope must be one of {list(SCOPES)}, got {self.scope!r}")
        for op, thr in self.conditions:
            if op not in OPS:
                raise ThresholdError(f"operator must be one of {list(OPS)}, got {op!r}")
            if not isinstance(thr, (int, float)) or isinstance(thr, bool) or math.isnan(thr):
                raise ThresholdError(f"threshold of {self.metric!r} must be a number, got {thr!r}")

    @property
    def subject(self) -> str:
        m = f"|{self.metric}|" if self.absolute else self.metric
        filt = [f"{k}={'/'.join(v)}" for k, v in (("attribute", self.attribute), ("class", self.class_), ("group", self.group)) if v]
        if self.scope != "all":
            filt.append(f"scope={self.scope}")
        return m + (f"[{','.join(filt)}]" if filt else "")

    def describe(self) -> str:
        """The failing condition, e.g. ``BPSN < 0.9`` or ``CFGap verdict "material"``."""
        parts = [f"{self.subject} {op} {thr:g}" for op, thr in self.conditions]
        if self.verdict is not None:
            parts.append(f'{self.subject} verdict "{self.verdict}"')
        text = " or ".join(parts)
        return f"{self.name}: {text}" if self.name else text

    def matches(self, df: pd.DataFrame) -> pd.Series:
        """Boolean mask of the rows this rule looks at."""
        mask = pd.Series(True, index=df.index)
        if self.metric not in ("*", "any", "all"):
            mask &= df["metric"].astype(str).str.lower() == self.metric.lower()
        if self.attribute:
            mask &= df["attribute"].isin(self.attribute)
        if self.class_:
            mask &= df["class"].isin(self.class_)
        if self.group:
            wanted = set(self.group)
            mask &= df["group"].map(lambda g: isinstance(g, str) and (g in wanted or bool(wanted & set(g.split("|")))))
        if self.scope == "groups":
            mask &= df["group"].notna()
        elif self.scope == "accumulated":
            mask &= df["group"].isna()
        return mask


@dataclass(frozen=True)
class Violation:
    """One result row that breaks a rule (or a rule with nothing to check)."""

    rule: Rule
    metric: str
    attribute: str | None = None
    class_: str | None = None
    group: str | None = None
    value: float | None = None
    verdict: str | None = None
    reason: str = ""
    extra: dict = field(default_factory=dict)

    @property
    def threshold(self) -> str:
        return self.rule.describe()

    def as_dict(self) -> dict:
        return {
            "metric": self.metric, "attribute": self.attribute, "class": self.class_,
            "group": self.group if self.group is not None else ("accumulated" if self.attribute is not None else None),
            "value": self.value, "threshold": self.threshold, "verdict": self.verdict, "reason": self.reason,
            "source": self.rule.source,
        }

    def __str__(self) -> str:
        where = " ".join(str(x) for x in (self.attribute, self.class_, self.group or ("accumulated" if self.attribute else None)) if x)
        val = "" if self.value is None else f" = {_fmt(self.value)}"
        return f"{self.metric} [{where}]{val}: {self.reason}" if where else f"{self.metric}: {self.reason}"


def _fmt(v) -> str:
    return "null" if v is None else f"{v:.4g}"


# ----------------------------------------------------------------- parsing
def _as_tuple(v, key: str, where: str):
    if v is None:
        return None
    if isinstance(v, str):
        return (v,)
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, str) for x in v):
        return tuple(v)
    raise ThresholdError(f"{where}: {key} must be a string or a list of strings, got {v!r}")


def _number(v, key: str, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        try:
            v = float(str(v))
        except ValueError:
            raise ThresholdError(f"{where}: {key} must be a number, got {v!r}") from None
    v = float(v)
    if math.isnan(v):
        raise ThresholdError(f"{where}: {key} must be a number, got nan")
    return v


def rule_from_dict(d: dict, *, source: str | None = None) -> Rule:
    """A :class:`Rule` from a suite-file mapping (schema in the module docstring)."""
    where = source or "threshold"
    if not isinstance(d, dict):
        raise ThresholdError(f"{where}: a threshold must be a mapping like {{metric: BPSN, min: 0.9}}, got {d!r}")
    unknown = [k for k in d if k not in RULE_KEYS]
    if unknown:
        raise ThresholdError(f"{where}: unknown key(s) {unknown}; allowed: {list(RULE_KEYS)}"
                             f"{did_you_mean(unknown[0], RULE_KEYS)}")
    metric = d.get("metric")
    if not isinstance(metric, str) or not metric.strip():
        raise ThresholdError(f"{where}: 'metric' is required (a metric name or '*'), got {metric!r}")
    conds = []
    if d.get("min") is not None:
        conds.append(("<", _number(d["min"], "min", where)))
    if d.get("max") is not None:
        conds.append((">", _number(d["max"], "max", where)))
    verdict = d.get("verdict")
    if verdict is not None and (not isinstance(verdict, str) or not verdict.strip()):
        raise ThresholdError(f"{where}: verdict must be one of {', '.join(VERDICT_WORDS)}, got {verdict!r}")
    for key in ("abs", "required"):
        if key in d and not isinstance(d[key], bool):
            raise ThresholdError(f"{where}: {key} must be true or false, got {d[key]!r}")
    scope = d.get("scope", "all")
    if scope not in SCOPES:
        raise ThresholdError(f"{where}: scope must be one of {list(SCOPES)}, got {scope!r}")
    if not conds and verdict is None:
        raise ThresholdError(f"{where}: rule on {metric!r} needs min, max or verdict")
    return Rule(
        metric=metric.strip(), conditions=tuple(conds), verdict=verdict.strip() if verdict else None,
        attribute=_as_tuple(d.get("attribute"), "attribute", where), class_=_as_tuple(d.get("class"), "class", where),
        group=_as_tuple(d.get("group"), "group", where), scope=scope, absolute=bool(d.get("abs", False)),
        required=bool(d.get("required", True)), name=d.get("name"), source=source,
    )


_COND = re.compile(
    r"^\s*(?P<abs1>\|)?\s*(?P<metric>[^\s\[\]<>=|]+)\s*(?P<abs2>\|)?\s*(?:\[(?P<filters>[^\]]*)\])?\s*"
    r"(?P<op><=|>=|<|>)\s*(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf)\s*$"
)
_SUBJECT = re.compile(r"^\s*(?P<metric>[^\s\[\]<>=|]+)\s*(?:\[(?P<filters>[^\]]*)\])?\s*$")


def _filters(text: str | None, spec: str) -> dict:
    """The :class:`Rule` keywords of a condition's filters: ``scope`` and the
    ``attribute``, ``class_`` and ``group`` tuples that are given."""
    out: dict = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        if "=" not in part:
            raise ThresholdError(f"{spec!r}: filters are key=value (attribute, class, group, scope), got {part.strip()!r}")
        k, v = (x.strip() for x in part.split("=", 1))
        if k not in ("attribute", "class", "group", "scope"):
            raise ThresholdError(f"{spec!r}: unknown filter {k!r}; use attribute, class, group or scope"
                                 f"{did_you_mean(k, ('attribute', 'class', 'group', 'scope'))}")
        if k == "scope":
            out[k] = v
        else:
            out.setdefault(k, []).append(v)
    scope = out.pop("scope", "all")
    return {"scope": scope, **{("class_" if k == "class" else k): tuple(v) for k, v in out.items()}}


def parse_condition(spec: str, *, source: str | None = "--fail-if") -> Rule:
    """``"BPSN<0.9"``, ``"FNED[class=negative]>0.1"``, ``"|AccuracyDiff|>0.05"``
    -> :class:`Rule` (the condition states what fails)."""
    m = _COND.match(spec or "")
    if not m or bool(m.group("abs1")) != bool(m.group("abs2")):
        raise ThresholdError(
            f"cannot read {spec!r}: expected METRIC[filters] OP NUMBER with OP one of < <= > >=, "
            "e.g. 'BPSN<0.9', 'FNED[class=negative]>0.1' or '|AccuracyDiff|>0.05'"
        )
    f = _filters(m.group("filters"), spec)
    if f["scope"] not in SCOPES:
        raise ThresholdError(f"{spec!r}: scope must be one of {list(SCOPES)}, got {f['scope']!r}")
    return Rule(metric=m.group("metric"), conditions=((m.group("op"), float(m.group("num"))),),
                absolute=bool(m.group("abs1")), source=source, **f)


def parse_verdict_rule(spec: str, *, verdict: str = DEFAULT_VERDICT, source: str | None = "--fail-on-verdict") -> Rule:
    """``"CFGap"`` or ``"CFGap[class=positive]"`` or ``"*"`` -> a rule failing
    on the verdict ``verdict`` ("material" by default)."""
    m = _SUBJECT.match(spec or "")
    if not m:
        raise ThresholdError(f"cannot read {spec!r}: expected METRIC or METRIC[filters], e.g. 'CFGap' or 'CFGap[class=positive]'")
    return Rule(metric=m.group("metric"), verdict=verdict, source=source, **_filters(m.group("filters"), spec))


def as_rule(spec, *, source: str | None = None) -> Rule:
    """A rule from a :class:`Rule`, a mapping (suite-file schema) or a string
    (``--fail-if`` syntax)."""
    if isinstance(spec, Rule):
        return spec
    if isinstance(spec, dict):
        return rule_from_dict(spec, source=source)
    if isinstance(spec, str):
        return parse_condition(spec, source=source or "rule")
    raise ThresholdError(f"a rule must be a mapping, a string like 'BPSN<0.9' or a Rule, got {spec!r}")


def as_rules(specs, *, source: str | None = None) -> list:
    if specs is None:
        return []
    if isinstance(specs, (str, dict, Rule)):
        specs = [specs]
    return [as_rule(s, source=source) for s in specs]


def rules_from_suite(suite) -> list:
    """The ``thresholds:`` of a loaded suite as rules (errors name the file).
    A rule whose ``class``, ``attribute`` or ``group`` names none of the
    suite's would never match a row: it is an error with a did-you-mean
    suggestion."""
    out = []
    for i, d in enumerate(getattr(suite, "thresholds", None) or []):
        try:
            rule = rule_from_dict(d, source=f"{suite.path or suite.name} thresholds[{i}]")
        except ThresholdError as e:
            raise SuiteError(str(e).split(": ", 1)[-1], file=suite.path or suite.name, field=f"thresholds[{i}]") from None
        _check_rule_names(rule, suite, i)
        out.append(rule)
    return out


def _check_rule_names(rule: Rule, suite, i: int) -> None:
    identity = getattr(suite, "identity", None) or {}
    classes = list(getattr(suite, "classes", None) or [])  # (sequence-labelling suites name no classes)
    known = {"class": classes + ["all"] if classes else [],
             "attribute": list(identity),
             "group": [g for t in identity.values() for g in t.groups]}
    for key, values in (("class", rule.class_), ("attribute", rule.attribute), ("group", rule.group)):
        if not values or not known[key]:
            continue
        for v in (p for value in values for p in (value.split("|") if key == "group" else [value])):
            if v not in known[key]:
                line = suite.line_of("thresholds", i, key) if hasattr(suite, "line_of") else None
                raise SuiteError(f"{key} {v!r} is none of the suite's ({known[key]}), so the rule would match no "
                                 f"row{did_you_mean(v, known[key])}", file=suite.path or suite.name, line=line,
                                 field=f"thresholds[{i}].{key}")


def rules_from_suites(suites: Iterable) -> list:
    return [r for s in suites for r in rules_from_suite(s)]


def recorded_rules(folder) -> list:
    """The suites' threshold rules a run recorded in its ``run.json``
    (``bias-suite check`` applies them without ``--suite``)."""
    import json
    from pathlib import Path

    try:
        meta = json.loads((Path(folder) / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    out = []
    for d in meta.get("rules") or meta.get("metadata", {}).get("rules") or []:
        d = dict(d)
        out.append(rule_from_dict(d, source=d.pop("source", None) or "run.json"))
    return out


VERDICT_WORDS = VERDICTS  # (bias_suite.stats.topics)


def parse_fail_on(spec: str, *, source: str | None = "--fail-on") -> Rule:
    """``--fail-on`` values: ``"material"`` (any metric), ``"material:FNED"``
    or ``"inconclusive:CFGap[class=positive]"``; a bare metric name (or
    ``"*"``) means ``material`` for it."""
    head, sep, rest = (spec or "").partition(":")
    if head.strip().lower() in VERDICT_WORDS:
        return parse_verdict_rule(rest.strip() if sep else "*", verdict=head.strip().lower(), source=source)
    return parse_verdict_rule(spec, source=source)


def unique_rules(rules) -> list:
    """Rules without repeats (a rule given in a suite and on the command
    line is checked and reported once)."""
    seen, out = set(), []
    for r in rules:
        key = (r.describe(), r.metric, r.attribute, r.class_, r.group, r.scope)
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def cli_rules(fail_if=None, fail_on_verdict=None) -> list:
    """Rules from the ``--fail-if`` and ``--fail-on`` options."""
    return [parse_condition(s) for s in (fail_if or [])] + [parse_fail_on(s) for s in (fail_on_verdict or [])]


# ----------------------------------------------------------------- checking
def _none(v):
    if v is None or v is pd.NA:
        return None
    if isinstance(v, float) and math.isnan(v):
        return None
    return v


def check_thresholds(results, rules) -> list:
    """Check ``rules`` against a results table and list the violations.

    Parameters
    ----------
    results : DataFrame (tidy results), a ``RunResult`` or a results folder.
    rules : rules as :class:`Rule`, mappings (suite-file schema) or strings
        (``"BPSN<0.9"``); for a ``RunResult`` with ``rules=None`` the suites'
        own thresholds.

    Returns
    -------
    list of :class:`Violation`, in rule order then result order; empty when
    everything passes.
    """
    from .io.results import as_results

    if rules is None and hasattr(results, "suites"):
        rules = rules_from_suites(results.suites)
    df = as_results(results)
    has_verdicts = "verdict" in df.columns and df["verdict"].isin(VERDICT_WORDS).any()
    out = []
    for rule in unique_rules(as_rules(rules)):
        sub = df[rule.matches(df)] if len(df) else df
        if rule.conditions:
            vals = pd.to_numeric(sub["value"], errors="coerce").astype(float)
            present = vals.notna()
            if rule.required and not present.any():
                out.append(Violation(rule, rule.metric, reason=(
                    f"no result matches {rule.subject}" if sub.empty else f"{rule.subject} has no values ({_first_note(sub)})"
                ) + " — was the metric computed?"))
            cmp = vals.abs() if rule.absolute else vals
            for op, thr in rule.conditions:
                bad = present & OPS[op](cmp, thr)
                for rec in sub[bad].to_dict("records"):
                    v = float(rec["value"])
                    shown = f"|{v:.4g}| = {abs(v):.4g}" if rule.absolute else f"{v:.4g}"
                    out.append(_violation(rule, rec, reason=f"{shown} {op} {thr:g}"))
        if rule.verdict is not None:
            if not has_verdicts:
                out.append(Violation(rule, rule.metric, reason="the results carry no verdicts (computed with "
                                     "--bootstrap 0?), so a verdict rule cannot be checked"))
                continue
            if rule.required and sub.empty:
                out.append(Violation(rule, rule.metric, reason=f"no result matches {rule.subject} — was the metric computed?"))
                continue
            want = rule.verdict.lower()
            hit = sub["verdict"].map(lambda v: isinstance(v, str) and (v.strip().lower() == want if want in VERDICT_WORDS
                                                                       else v.strip().lower().startswith(want)))
            for rec in sub[hit.astype(bool)].to_dict("records"):
                out.append(_violation(rule, rec, reason=f'verdict "{rec["verdict"]}"'))
    return out


def _first_note(sub: pd.DataFrame) -> str:
    notes = [n for n in sub.get("note", pd.Series(dtype=object)) if isinstance(n, str) and n]
    return notes[0] if notes else "all values are null"


def _violation(rule: Rule, rec: dict, *, reason: str) -> Violation:
    return Violation(
        rule, str(rec.get("metric")), _none(rec.get("attribute")), _none(rec.get("class")), _none(rec.get("group")),
        None if _none(rec.get("value")) is None else float(rec["value"]), _none(rec.get("verdict")), reason,
    )


def format_violations(violations) -> str:
    """A plain-text table of violations (what ``assert_no_bias`` raises)."""
    if not violations:
        return "no threshold violations"
    rows = [["metric", "attribute", "class", "group", "value", "rule", "why"]]
    for v in violations:
        d = v.as_dict()
        rows.append([str(d["metric"]), str(d["attribute"] or "–"), str(d["class"] or "–"), str(d["group"] or "–"),
                     "–" if d["value"] is None else f"{d['value']:.4g}", v.threshold, v.reason])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    n = len(violations)
    return f"{n} bias threshold violation{'s' if n != 1 else ''}:\n" + "\n".join(lines)
