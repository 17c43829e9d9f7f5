"""The trail of a perturbation and what a user says back to it: the log of
every sentence (``--log``, ``log=True``), the reviewed log read back in
(``--review``), extra swap pairs (``--pairs``) and words never swapped
(``--keep``).

The log has one row per sentence and attribute, :data:`LOG_COLUMNS`:

- ``id``, ``attribute``: the source sentence and the attribute;
- ``outcome``: ``changed`` (it gave a template), ``skipped`` (it has a
  mention, or an insertion point, but swapping could break it) or ``no
  mention``;
- ``reason``: why it was skipped (a reason of the report), ``inserted``
  for a changed sentence given an adjective (``--insert``), else empty;
- ``text``: the sentence; ``variant``: its first variant that differs
  from it (changed sentences only);
- ``review``: empty; a reviewer writes ``drop`` (leave a changed sentence
  out) or ``approve`` (swap a sentence skipped for a reason of
  :data:`APPROVABLE`) and gives the file back with ``--review``.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd

from ...exceptions import SuiteError, did_you_mean
from .people import PEOPLE_SKIPS

__all__ = ["LOG_COLUMNS", "OUTCOMES", "REVIEW_DECISIONS", "APPROVABLE", "log_row", "log_frame", "write_log",
           "read_review", "read_pairs", "parse_keep"]

LOG_COLUMNS = ["id", "attribute", "outcome", "reason", "text", "variant", "review"]
OUTCOMES = ("changed", "skipped", "no mention")
REVIEW_DECISIONS = ("drop", "approve")
#: skip reasons a reviewer may overrule with ``approve``: a guess about whose words they are, not a sentence
#: that cannot be swapped
APPROVABLE = frozenset(PEOPLE_SKIPS) - {"several people"} | {"first name", "gender noun"}
_LOG_FORMATS = {".csv": ",", ".tsv": "\t", ".jsonl": None, ".ndjson": None}


def log_row(source_id, attribute, outcome, reason, text, variant) -> tuple:
    return (source_id, attribute, outcome, reason, text, variant, "")


def log_frame(rows) -> pd.DataFrame:
    """The log rows as a DataFrame of :data:`LOG_COLUMNS`."""
    return pd.DataFrame(list(rows), columns=LOG_COLUMNS)


def _log_format(path: Path) -> str | None:
    ext = path.suffix.lower()
    if ext not in _LOG_FORMATS:
        raise SuiteError(f"cannot tell the format from the extension {ext!r}; use .csv, .tsv or .jsonl", file=path)
    return _LOG_FORMATS[ext]


def write_log(log: pd.DataFrame, path) -> Path:
    """Write the log atomically (umask respected): CSV or TSV by extension,
    or JSON Lines (``.jsonl``)."""
    from ...io import atomic_path

    path = Path(path)
    sep = _log_format(path)
    with atomic_path(path) as tmp:
        if sep is None:
            with open(tmp, "w", encoding="utf-8") as fh:
                for rec in log.to_dict(orient="records"):
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        else:
            log.to_csv(tmp, index=False, sep=sep)
    return path


def _records(path: Path):
    """``(line, {column: value})`` of a CSV, TSV or JSONL file (line numbers of the file, header line 1)."""
    sep = _log_format(path)
    if not path.is_file():
        raise SuiteError("no such file", file=path)
    with open(path, encoding="utf-8", newline="") as fh:
        if sep is None:
            for n, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    raise SuiteError(f"not a JSON object: {e.msg}", file=path, line=n) from None
                if not isinstance(rec, dict):
                    raise SuiteError("not a JSON object", file=path, line=n)
                yield n, {k: "" if v is None else str(v) for k, v in rec.items()}
            return
        reader = csv.DictReader(fh, delimiter=sep)
        for rec in reader:
            yield reader.line_num, {k: (v or "") for k, v in rec.items() if k is not None}


def read_review(path, attributes=None) -> dict:
    """``{(id, attribute): "drop" | "approve"}`` of a reviewed log (rows
    whose ``review`` is empty are left as the engine decides). An unknown
    decision, or a row without an id or attribute, is one error naming the
    file, the line and the field."""
    path = Path(path)
    out = {}
    for line, rec in _records(path):
        for col in ("id", "attribute", "review"):
            if col not in rec:
                raise SuiteError(f"no column {col!r}; a review is a log of `bias-suite perturb --log` with its "
                                 f"'review' column filled in (columns {LOG_COLUMNS})", file=path, line=line, field=col)
        decision = rec["review"].strip().lower()
        if not decision:
            continue
        if decision not in REVIEW_DECISIONS:
            raise SuiteError(f"unknown review {rec['review']!r}; write one of {list(REVIEW_DECISIONS)} or leave it "
                             f"empty{did_you_mean(decision, REVIEW_DECISIONS)}", file=path, line=line, field="review")
        if attributes is not None and rec["attribute"] not in attributes:
            raise SuiteError(f"attribute {rec['attribute']!r} is not perturbed here ({sorted(attributes)})",
                             file=path, line=line, field="attribute")
        if not rec["id"].strip():
            raise SuiteError("empty id", file=path, line=line, field="id")
        out[(rec["id"], rec["attribute"])] = decision
    return out


def read_pairs(path, lexicons) -> dict:
    """``{attribute: [{group: word}, ...]}``: extra swap pairs (``--pairs``),
    a CSV, TSV or JSONL file whose columns are group names of one attribute
    (and ``attribute``, needed when several are perturbed; default the only
    one, else ``gender``) and whose rows are words that swap with one
    another ("actress,actor" under "female,male"). A group left empty or
    out has no word for that row. Every problem is one error naming the
    file, the line and the field."""
    path = Path(path)
    by_name = {lx.attribute: lx for lx in lexicons}
    default = lexicons[0].attribute if len(lexicons) == 1 else "gender"
    out: dict = {}
    for line, rec in _records(path):
        attr = rec.get("attribute", "").strip() or default
        if attr not in by_name:
            raise SuiteError(f"attribute {attr!r} is not perturbed here ({sorted(by_name)})", file=path, line=line,
                             field="attribute")
        lex = by_name[attr]
        row = {}
        for col, word in rec.items():
            if col == "attribute":
                continue
            if col not in lex.groups:
                raise SuiteError(f"no group {col!r} in attribute {attr!r}; its groups are {lex.groups}"
                                 f"{did_you_mean(col, lex.groups)}", file=path, line=line, field=col)
            word = word.strip()
            if word and not all(part.isalpha() or part in "'’-" for part in word):
                raise SuiteError(f"a pair's word must be one word of letters, got {word!r}", file=path, line=line,
                                 field=col)
            if word:
                row[col] = word.lower()
        if len(row) < 2:
            raise SuiteError(f"a pair needs words of two groups at least, got {row or 'none'}", file=path, line=line,
                             field=next((c for c in rec if c != "attribute"), "attribute"))
        out.setdefault(attr, []).append(row)
    return out


def parse_keep(words) -> frozenset:
    """``--keep``: words (comma- or space-separated, repeatable) never swapped, lower-cased."""
    if isinstance(words, str):
        words = [words]
    return frozenset(w.strip().lower() for item in (words or []) for w in str(item).replace(",", " ").split()
                     if w.strip())
