"""Task families, found by name: the one place that knows which kinds of
model bias_suite tests (docs/architecture.md).

>>> from bias_suite.families import get_family
>>> get_family("classification").default_model
'default-sentiment'

Everything above this layer asks the family of a suite (``suite.task``) or
of scored data (``data.task``) for its steps; adding a family is a package
with a :class:`~bias_suite.families.base.TaskFamily` and one line in
:data:`FAMILIES` (or a :func:`register_family` call).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from ..exceptions import BiasSuiteError, ScoredFormatError, SuiteError, did_you_mean
from ..io.tables import read_table, table_kind, write_jsonl, write_parquet, write_scored
from ..suites import expansion as _expansion
from ..suites.loader import Suite, find_suite
from ..suites.loader import load_suite as _load_suite_file
from .base import TaskFamily
from .checks import PROB_TOLERANCE
from .classification import FAMILY as CLASSIFICATION
from .classification.scored import ScoredData, check_scored, scored_from_arrays
from .sequence import FAMILY as SEQUENCE_LABELLING
from .sequence.scored import SequenceData, check_sequence_scored

# The names of ``bs.families``: what adding a family needs (docs/architecture.md).
# The helpers below (load_suite, expand_suites, as_scored, read_scored, ...) are
# the package's own; the Python API's are bs.load_suite, bs.expand, bs.read_scored.
__all__ = ["TaskFamily", "FAMILIES", "register_family", "get_family", "family_of", "ScoredData", "SequenceData"]

# name -> family; the first is the default for scored tables no family claims
FAMILIES: dict[str, TaskFamily] = {f.name: f for f in (CLASSIFICATION, SEQUENCE_LABELLING)}


def register_family(family: TaskFamily) -> TaskFamily:
    """Add a family (a new name, or replace one of the same name)."""
    if not isinstance(family, TaskFamily):
        raise TypeError(f"expected a TaskFamily, got {type(family).__name__}")
    FAMILIES[family.name] = family
    return family


def get_family(name: str, *, suite: Suite | None = None) -> TaskFamily:
    """The family called ``name``; an unknown name is an error (naming the
    suite file, line and field when ``suite`` is given)."""
    try:
        return FAMILIES[name]
    except (KeyError, TypeError):
        msg = f"unknown task {name!r}; expected one of {list(FAMILIES)}{did_you_mean(name, FAMILIES)}"
        if suite is not None:
            raise SuiteError(msg, file=suite.path, line=suite.line_of("task"), field="task") from None
        raise BiasSuiteError(msg) from None


def family_of(obj) -> TaskFamily:
    """The family of a suite or of scored data (by its ``task``)."""
    return get_family(getattr(obj, "task", None), suite=obj if isinstance(obj, Suite) else None)


def families_of(suites: Iterable[Suite]) -> dict:
    """family name -> the suites of that family, in order of first appearance."""
    out: dict = {}
    for s in suites:
        out.setdefault(family_of(s).name, []).append(s)
    return out


# ------------------------------------------------------------------ suites
def load_suite(path) -> Suite:
    """Load a suite file: the suite language's checks, then its family's
    (each problem one :class:`SuiteError` naming file, line and field)."""
    suite = path if isinstance(path, Suite) else _load_suite_file(path)
    family_of(suite).check_suite(suite)
    return suite


def _loaded(suite) -> Suite:
    return suite if isinstance(suite, Suite) else load_suite(find_suite(suite) if isinstance(suite, str) else suite)


def _rows_for(suite):
    fam = family_of(suite)
    return fam.rows, list(fam.columns)


def expand_suite(suite, *, attributes=None, max_examples: int | None = None) -> pd.DataFrame:
    """All examples of one suite, with its family's columns
    (:func:`bias_suite.suites.expansion.expand_suite`)."""
    suite = _loaded(suite)
    rows, columns = _rows_for(suite)
    return _expansion.expand_suite(suite, attributes=attributes, max_examples=max_examples, rows=rows, columns=columns)


def expand_suites(suites: Iterable, *, attributes=None, groups=None, max_examples: int | None = None) -> pd.DataFrame:
    """Expand suites of one family into one table (names must differ);
    ``groups={attribute: [groups]}`` keeps only those groups
    (:func:`bias_suite.suites.selection.select_groups`)."""
    from ..suites.selection import select_groups

    return _expansion.expand_suites(select_groups([_loaded(s) for s in suites], groups), attributes=attributes,
                                    max_examples=max_examples, rows_for=_rows_for)


def validate_suite(suite, *, attributes=None, max_examples: int | None = None) -> int:
    """Every check of loading and expansion, without expanding; the number
    of examples the suite expands to."""
    suite = _loaded(suite)
    return _expansion.validate_suite(suite, attributes=attributes, max_examples=max_examples, rows=_rows_for(suite)[0])


# ------------------------------------------------------------------ scored data
def _detect(df: pd.DataFrame) -> TaskFamily:
    for fam in FAMILIES.values():
        if all(c in df.columns for c in fam.marker_columns):
            return fam
    return next(iter(FAMILIES.values()))  # its checks name the missing column


def as_scored(data, *, source: str | None = None):
    """Validated scored data from scored data, a DataFrame, a list of dicts
    or a path (JSONL or Parquet); the family is told by the columns."""
    if not isinstance(data, pd.DataFrame) and getattr(data, "task", None) in FAMILIES and hasattr(data, "frame"):
        return data
    if isinstance(data, (str, Path)):
        return read_scored(data)
    if isinstance(data, list):
        bad = next((i for i, r in enumerate(data) if not isinstance(r, dict)), None)
        if bad is not None:
            raise ScoredFormatError(f"expected one object (dict) per example, got {type(data[bad]).__name__}",
                                    file=source, row=bad + 1)
        data = pd.DataFrame(data, dtype=object) if data else pd.DataFrame()
    if not isinstance(data, pd.DataFrame):
        raise ScoredFormatError(f"expected a pandas DataFrame, got {type(data).__name__}", file=source)
    return _detect(data).check_scored(data, source=source)


def read_scored(path):
    """Read and validate a scored-examples file (JSONL or Parquet). A family
    may read its files as typed columns first (classification does); a file
    that does not pass there is read row by row, which names the file, row
    and field of its first problem."""
    path = Path(path)
    kind = table_kind(path)
    for fam in FAMILIES.values():
        if fam.read_fast is not None:
            data = fam.read_fast(path, kind)
            if data is not None:
                return data
    df = read_table(path)
    return _detect(df).check_scored(df, source=str(path))
