"""All errors raised by bias_suite, each refining a builtin exception.

Messages name the file, the line or row, the field, what was expected and what
was found, so that one error is enough to fix the input.
"""
from __future__ import annotations


def _located(where: str, line, field, message: str) -> str:
    """``WHERE:LINE: field 'FIELD': message`` (line and field when given)."""
    if line is not None:
        where += f":{line}"
    what = f"field '{field}': " if field else ""
    return f"{where}: {what}{message}"


class BiasSuiteError(Exception):
    """Base class of bias_suite's own errors."""


class SuiteError(BiasSuiteError, ValueError):
    """A suite or identity-term YAML file is malformed.

    ``str(err)`` reads ``FILE:LINE: field 'FIELD': message``.
    """

    def __init__(self, message: str, *, file=None, line=None, field=None):
        self.file = None if file is None else str(file)
        self.line = line
        self.field = field
        self.message = message
        super().__init__(_located(self.file or "<suite>", line, field, message))


class ScoredFormatError(BiasSuiteError, ValueError):
    """A scored-examples file (JSONL/Parquet) does not follow docs/formats.md.

    ``str(err)`` reads ``FILE:ROW: field 'FIELD': message`` (rows are 1-based
    line numbers for JSONL, 1-based row numbers for Parquet).
    """

    def __init__(self, message: str, *, file=None, row=None, field=None):
        self.file = None if file is None else str(file)
        self.row = row
        self.field = field
        self.message = message
        super().__init__(_located(self.file or "<scored examples>", row, field, message))


class MetricError(BiasSuiteError, ValueError):
    """A metric was asked for with arguments it cannot take (unknown name,
    bad parameter)."""


class ModelError(BiasSuiteError, RuntimeError):
    """A model could not be loaded or gave output of the wrong shape."""


class OutputError(BiasSuiteError, OSError):
    """An output file or folder cannot be written (a file where a folder is
    expected, no permission, disk full), or a run folder's files no longer
    match the listing in its ``run.json``."""


class ExamplesFormatError(ScoredFormatError):
    """An examples table (CSV, TSV, JSONL, Parquet, a ``datasets`` folder or a
    CoNLL file given to ``bias-suite run``) cannot be read as examples.

    ``str(err)`` reads ``FILE:ROW: field 'COLUMN': message`` (rows are line
    numbers for text files, the header being line 1 of CSV/TSV; 1-based row
    numbers for Parquet and ``datasets`` folders).
    """


class ThresholdError(BiasSuiteError, ValueError):
    """A threshold rule is malformed (unknown key, bad number, bad operator)."""


class DillWarning(UserWarning):
    """Loading or saving a CheckList TestSuite with dill (pickle): loading
    executes arbitrary code from the file."""


class CacheWarning(UserWarning):
    """A cache entry or file was unusable and has been recomputed/replaced."""
