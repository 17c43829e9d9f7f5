"""``bias-suite`` command line: every stage usable on its own.

    bias-suite expand SUITE...            suites -> examples
    bias-suite run SUITE... --model M     expand, predict, score, metrics, summary
    bias-suite run TABLE --model M        the same on an examples table (CSV/JSONL/Parquet/...)
    bias-suite perturb DATA -a ATTR --out F   counterfactual examples from your own sentences
    bias-suite evaluate SCORED --out DIR  metrics on your own predictions
    bias-suite compare BASE CAND --out D  did the bias change? paired changes (exit 3: --fail-on worsened)
    bias-suite metrics                    the registry of named metrics
    bias-suite sample-size ...            Bernstein sample size to claim a bias
    bias-suite models build|list|path     the offline default models
    bias-suite cache info|clear           the prediction cache
    bias-suite checklist export|predict|import   CheckList interop
    bias-suite validate SUITE...          check suite files
    bias-suite report RESULTS_DIR         self-contained HTML report
    bias-suite plot RESULTS_DIR --out D   publication figures (png/svg/pdf)
    bias-suite check RESULTS_DIR ...      thresholds on existing results (exit 3)

Errors are one line (exit 2; an unexpected one, a bug, exits 1);
``bias-suite --debug COMMAND ...`` shows the traceback instead.

The app and its top-level group live here; each command lives in the module
named after what it works on (``run_cmd``, ``evaluate_cmd``, ``compare_cmd``, ``results_cmds``:
report/plot/check, ``suite_cmds``: expand/validate, ``perturb_cmd``, ``metrics_cmds``:
metrics/sample-size, ``models_cmds``: models/cache, ``checklist_cmds``) and is
registered on ``app`` below; ``output`` holds the consoles and the one-line
errors, ``options`` the option parsers and the help layout.
"""
from __future__ import annotations

import sys

import typer
import typer.core

from . import compare_cmd, evaluate_cmd, metrics_cmds, perturb_cmd, results_cmds, run_cmd, suite_cmds
from .checklist_cmds import checklist_app
from .models_cmds import cache_app, models_app
from .options import HELP
from .output import DEBUG, EXIT_BUG, EXIT_ERROR, report_exception, console, err_console, warning_lines

__all__ = ["app", "main", "console", "err_console", "EXIT_ERROR", "EXIT_BUG"]


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that flushing at exit after a closed
    pipe does not raise again."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


class _Group(typer.core.TyperGroup):
    """The top-level group: no traceback reaches the user unless --debug."""

    def invoke(self, ctx):
        try:
            with warning_lines():  # bias_suite's warnings as plain "warning:" lines
                return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException, KeyboardInterrupt):  # exits, usage errors
            raise
        except BrokenPipeError:  # the reader went away (`| head`): stop quietly, like other tools
            _silence_stdout()
            raise typer.Exit(141) from None
        except Exception as e:
            if DEBUG["on"]:
                raise
            raise typer.Exit(report_exception(e)) from None


app = typer.Typer(cls=_Group, add_completion=False, no_args_is_help=True, rich_markup_mode=None, context_settings=HELP,
                  help="Behavioural bias testing for NLP models.")


@app.callback()
def _app_options(
    debug: bool = typer.Option(False, "--debug", help="Show the full traceback of an error (for bug reports)."),
):
    """Behavioural bias testing for NLP models."""
    DEBUG["on"] = bool(debug)


# the top-level commands, in the order of `bias-suite --help`, then the groups
for _module in (suite_cmds, perturb_cmd, run_cmd, results_cmds, evaluate_cmd, compare_cmd, metrics_cmds):
    app.registered_commands += _module.commands.registered_commands
app.add_typer(models_app, name="models")
app.add_typer(cache_app, name="cache")
app.add_typer(checklist_app, name="checklist", short_help="CheckList interop: export suites, import predictions.")


def main():  # console-script entry point
    try:
        app()
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
    except BrokenPipeError:
        _silence_stdout()
        sys.exit(141)

