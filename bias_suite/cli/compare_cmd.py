"""``bias-suite compare``: did the bias change between models?"""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..exceptions import BiasSuiteError
from ..options import INHERIT, EvaluationOptions
from .options import option, parse_thresholds
from .output import console

commands = typer.Typer()

FAIL_ON = ("worsened",)


def _inherited(name: str, help: str, **typer_args):
    """A flag of an evaluation option that, not given, takes the value the
    compared runs recorded (:data:`bias_suite.options.INHERIT`), else the
    option's default."""
    default = EvaluationOptions.field_of(name).default
    return option(name, default=None, help=f"{help} (default: the runs' value, else {default}).", **typer_args)


@commands.command(short_help="Compare models: did the bias change? Paired changes with intervals.")
def compare(
    baseline: Path = typer.Argument(..., help="The baseline: a run folder or a scored file (.jsonl/.parquet)."),
    candidates: List[Path] = typer.Argument(..., help="One or more candidates, each a run folder or a scored file of the same examples."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder for comparison.jsonl/.csv/.json (and comparison.html)."),
    inner: bool = typer.Option(False, "--inner", help="Keep the examples every model holds (else examples that do not pair are an error) and say how many were left out."),
    fail_on: Optional[List[str]] = typer.Option(None, "--fail-on", help="'worsened': exit 3 when any value worsened (a CI gate)."),
    report: bool = typer.Option(False, "--report", help="Also write the HTML page (OUT/comparison.html): both models' overviews and the change grid."),
    bootstrap: Optional[int] = _inherited("bootstrap", "B paired template resamples, the same for every model", min=1),
    seed: Optional[int] = _inherited("seed", "Seed of the resamples and of the tuple sampler"),
    confidence: Optional[float] = _inherited("confidence", "Level of the intervals and of the error control"),
    multiplicity: Optional[str] = _inherited("multiplicity", "Error control over the improved and worsened claims: hierarchical (groups and pairs at a family-wise error rate, their values at a selective false-discovery rate; as for verdicts), holm (family-wise error rate) or bh (false-discovery rate)"),
    threshold: Optional[List[str]] = option("thresholds", help="Smallest change that counts, for a metric or a topic (default: the runs' thresholds, else each metric's)."),
    lines: int = typer.Option(60, "--lines", min=8, help="At most this many lines of output."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="One line: the counts of each change."),
):
    """Compare a candidate's bias with a baseline's on the same examples: every judged value's change in distance from no bias, with a paired interval, and improved / worsened / unchanged / inconclusive.

    More candidates: a models x attributes overview, the models ranked, and each candidate against the baseline. --fail-on worsened exits 3 when any value worsened.

    Example: bias-suite compare results/gender results/gender/scored.jsonl --out results/compare
    """
    from ..comparison import EXIT_WORSENED, compare as compare_, write_comparison
    from ..report.compare import print_comparison, write_comparison_report

    bad = [f for f in fail_on or [] if f not in FAIL_ON]
    if bad:
        raise BiasSuiteError(f"--fail-on takes {', '.join(FAIL_ON)}, got {bad[0]!r}")
    given = dict(bootstrap=bootstrap, confidence=confidence, seed=seed, multiplicity=multiplicity,
                 thresholds=parse_thresholds(threshold))
    comp = compare_(baseline, *candidates, inner=inner,
                    **{k: INHERIT if v is None else v for k, v in given.items()})  # not given: the runs' value
    html = [write_comparison_report(comp, Path(out) / "comparison.html")] if report else []
    paths = write_comparison(comp, out, files=html)
    from ..report.runs import shown

    files = [str(shown(p)) for p in [paths["jsonl"], paths["csv"], *html]]
    if quiet:
        counts = comp.counts()
        console.print(" · ".join(f"{n} {w}" for w, n in counts.items()) + " → " + ", ".join(files), highlight=False,
                      soft_wrap=True)
    else:
        print_comparison(comp, console=console, max_lines=lines, files=files)
    if "worsened" in (fail_on or []) and (comp["change"] == "worsened").any():
        n = int((comp["change"] == "worsened").sum())
        console.print(f"--fail-on worsened: {n} value{'s' if n != 1 else ''} worsened", style="bold red", highlight=False)
        raise typer.Exit(EXIT_WORSENED)
