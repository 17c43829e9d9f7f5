"""Commands on a results folder: ``report`` (HTML), ``plot`` (figures) and
``check`` (thresholds, exit 3)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.markup import escape

from ..exceptions import BiasSuiteError
from .options import comma_list
from .output import exit_with, console
from .summary import gate, gate_rules

commands = typer.Typer()


@commands.command(short_help="Write the self-contained HTML report of a results folder.")
def report(
    results_dir: Path = typer.Argument(..., help="A results folder (results.jsonl, run.json, scored.*)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="HTML file (default RESULTS_DIR/report.html)."),
    title: Optional[str] = typer.Option(None, help="Report title."),
):
    """Write one self-contained HTML report (heatmaps, intervals, significance, verdicts, drill-down).

    Example: bias-suite report results/gender
    """
    from ..report.html import write_html_report

    try:
        path = write_html_report(results_dir, out, title=title)
    except (BiasSuiteError, FileNotFoundError) as e:
        exit_with(e)
    console.print(escape(f"report → {path}"))


@commands.command(short_help="Write publication figures (png, svg or pdf).")
def plot(
    results_dir: Path = typer.Argument(..., help="A results folder (results.jsonl, run.json)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the figures."),
    fmt: str = typer.Option("png", "--format", "-f", help="png, svg or pdf."),
    attribute: Optional[List[str]] = typer.Option(None, "--attribute", "-a", help="Only these attributes."),
    metrics: Optional[str] = typer.Option(None, help="Comma-separated metric names (default: all)."),
):
    """Write publication figures (matplotlib): heatmaps per attribute and per-group charts with intervals.

    Example: bias-suite plot results/gender --out figures --format png
    """
    try:
        from ..report.plots import write_figures
    except ImportError as e:
        exit_with(BiasSuiteError(f"plotting needs matplotlib ({e}); pip install matplotlib"))
    try:
        paths = write_figures(results_dir, out, fmt=fmt, attributes=attribute,
                              metrics=comma_list(metrics) if metrics else None)
    except (BiasSuiteError, FileNotFoundError, ValueError) as e:
        exit_with(e)
    console.print(escape(f"{len(paths)} figures → {out}"))


@commands.command(short_help="Check thresholds on existing results (exit 3 on a violation).")
def check(
    results_dir: Path = typer.Argument(..., help="A results folder (results.jsonl)."),
    fail_if: Optional[List[str]] = typer.Option(None, "--fail-if", help="e.g. 'BPSN<0.9' (repeatable)."),
    fail_on_verdict: Optional[List[str]] = typer.Option(None, "--fail-on", "--fail-on-verdict", help="'material', 'material:METRIC' or a metric name (repeatable)."),
    suite: Optional[List[str]] = typer.Option(None, "--suite", "-s", help="Also use this suite file's thresholds (repeatable)."),
):
    """Check thresholds on existing results (e.g. after `evaluate`): exit 3 with
    the violations. The thresholds of the suites the run used (recorded in its
    run.json) are checked too.

    Example: bias-suite check results/gender --fail-on material
    """
    from ..gating import recorded_rules
    from ..report.html import read_results_table

    try:
        rules = recorded_rules(results_dir) + gate_rules(suite or [], fail_if, fail_on_verdict)
        if not rules:
            raise BiasSuiteError("no rules: the run recorded no suite thresholds; give --fail-if, --fail-on or --suite")
        results = read_results_table(results_dir)
    except (BiasSuiteError, FileNotFoundError) as e:
        exit_with(e)
    gate(results, rules)
