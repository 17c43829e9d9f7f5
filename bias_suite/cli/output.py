"""Where the command line's output goes, and its errors as one line.

``console`` and ``err_console`` resolve the stream when they print (tests and
pipes swap ``sys.stdout``). An error is one line on stderr: exit 2 for bad
input or an unwritable output, 1 for an unexpected exception (a bug);
``--debug`` raises instead.
"""
from __future__ import annotations

import contextlib
import warnings

import typer
from rich.markup import escape

from ..exceptions import BiasSuiteError, ProbabilityWarning, SuiteWarning, cli_message
from ..report import theme

EXIT_ERROR = 2  # bad input, unwritable output (BiasSuiteError, OSError)
EXIT_BUG = 1  # an unexpected exception: a bug in bias_suite
DEBUG = {"on": False}  # --debug of the command being run


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def report_exception(e: BaseException) -> int:
    """Print ``e`` as one line on stderr; return the exit code."""
    if isinstance(e, (BiasSuiteError, OSError)):
        msg, code = _one_line(cli_message(e)), EXIT_ERROR
        if not isinstance(e, BiasSuiteError):
            msg += " (rerun with --debug for the traceback)"
    else:
        msg = (f"internal error, a bug in bias_suite: {type(e).__name__}: {_one_line(e)}; "
               "rerun with --debug for the traceback and report it")
        code = EXIT_BUG
    _error_line(msg)
    return code


def _error_line(msg: str) -> None:
    # messages quote user text (labels, groups, file names): never read it as markup
    err_console.print(f"[{theme.ERROR}]error:[/] {escape(msg)}", highlight=False, soft_wrap=True)


class _LazyConsole:
    """Resolve the stream at print time (tests and pipes swap sys.stdout)."""

    def __init__(self, stderr: bool = False):
        self.stderr = stderr

    def __getattr__(self, name):
        from ..report.terminal import make_console

        return getattr(make_console(self.stderr), name)


console = _LazyConsole()
err_console = _LazyConsole(stderr=True)


def exit_with(e: Exception, code: int = EXIT_ERROR):
    """Print a BiasSuiteError as one error line and exit (with --debug: raise it)."""
    if DEBUG["on"]:
        raise e
    _error_line(cli_message(e))  # options named by their flags
    raise typer.Exit(code)


def warning_line(msg: str) -> None:
    """One plain ``warning:`` line on stderr (``msg`` is user text, never markup)."""
    err_console.print(f"[{theme.WARN}]warning:[/] {escape(msg)}", highlight=False, soft_wrap=True)


@contextlib.contextmanager
def warning_lines(categories=(ProbabilityWarning, SuiteWarning)):
    """Warnings of ``categories`` as one plain ``warning:`` line on stderr
    each, instead of Python's ``file:line: Category: ...`` form."""
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, categories):
            warning_line(str(message))
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = shown
