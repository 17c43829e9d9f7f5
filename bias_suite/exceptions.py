"""All errors raised by bias_suite, each refining a builtin exception.

Messages name the file, the line or row, the field, what was expected and what
was found, so that one error is enough to fix the input.
"""
from __future__ import annotations

import difflib
import re

# The error and warning classes (``bs.exceptions``); the helpers below
# (option, cli_message, did_you_mean) are the package's own.
__all__ = [
    "BiasSuiteError", "SuiteError", "ScoredFormatError", "ExamplesFormatError", "MetricError", "ModelError",
    "OutputError", "ThresholdError", "PairingError",
    "SuiteWarning", "ProbabilityWarning", "CacheWarning", "DillWarning",
]

# An option named in both of its forms inside a message: "\ue000python\ue001cli\ue000".
_OPTION = re.compile("\ue000([^\ue000\ue001]*)\ue001([^\ue000]*)\ue000")


def option(python: str, cli: str) -> str:
    """Name an option in an error message in both forms: the Python argument
    (``class_map=``) and the command-line flag (``--class-map``).

    ``str(err)`` reads the Python form; the command line prints
    :func:`cli_message`, which reads the flag. One message thus serves both
    callers without naming a flag to a Python user.

    >>> str(BiasSuiteError("map it with " + option("class_map={...}", "--class-map A=B")))
    'map it with class_map={...}'
    >>> cli_message(BiasSuiteError("map it with " + option("class_map={...}", "--class-map A=B")))
    'map it with --class-map A=B'
    """
    return f"\ue000{python}\ue001{cli}\ue000"


def _render(text: str, cli: bool) -> str:
    return _OPTION.sub(lambda m: m.group(2 if cli else 1), text)


def cli_message(err: BaseException) -> str:
    """An error's message as the command line shows it: options named by
    their flags (see :func:`option`)."""
    if isinstance(err, BiasSuiteError):
        return _render(Exception.__str__(err), cli=True)
    return str(err)


def did_you_mean(name, choices, *, n: int = 3, cutoff: float = 0.6) -> str:
    """``"; did you mean 'positive'?"`` when ``name`` is close to some of
    ``choices`` (case aside; :func:`difflib.get_close_matches`), else ``""``:
    a suffix for the error about an unknown name.

    >>> did_you_mean("postive", ["negative", "neutral", "positive"])
    "; did you mean 'positive'?"
    """
    by_lower: dict = {}
    for c in choices:
        by_lower.setdefault(str(c).lower(), c)
    close = difflib.get_close_matches(str(name).lower(), list(by_lower), n=n, cutoff=cutoff)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(by_lower[c]) for c in close) + "?"


def _located(where: str, line, field, message: str) -> str:
    """``WHERE:LINE: field 'FIELD': message`` (line and field when given)."""
    if line is not None:
        where += f":{line}"
    what = f"field '{field}': " if field else ""
    return f"{where}: {what}{message}"


class BiasSuiteError(Exception):
    """Base class of bias_suite's own errors. A message may name an option in
    both forms (:func:`option`): ``str(err)`` gives the Python argument,
    :func:`cli_message` the command-line flag."""

    def __str__(self) -> str:
        return _render(super().__str__(), cli=False)


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


class PairingError(BiasSuiteError, ValueError):
    """The models of a comparison (``bias_suite.compare``) do not pair up:
    ids missing on one side, or the same id with another text, attribute,
    group or template."""


class DillWarning(UserWarning):
    """Loading or saving a CheckList TestSuite with dill (pickle): loading
    executes arbitrary code from the file."""


class CacheWarning(UserWarning):
    """A cache entry or file was unusable and has been recomputed/replaced."""


class ProbabilityWarning(UserWarning):
    """A model's probability rows missed summing to 1 by a rounding error
    (at most 1e-2) and were renormalised; the warning says how many."""


class SuiteWarning(UserWarning):
    """A suite file is valid but probably not what its author meant (a class
    name one letter away from the usual ones, say); the warning names the
    file, line and field."""
