"""``bias-suite evaluate``: metrics and verdicts on a user's own scored predictions."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..exceptions import BiasSuiteError
from ..options import EvaluationOptions
from .options import name_lists, option, parse_thresholds, group_selection, terms_option
from .output import exit_with, console

commands = typer.Typer()


@commands.command(short_help="Metrics and verdicts on your own scored predictions.")
def evaluate(
    scored: Path = typer.Argument(..., help="Scored examples (.jsonl or .parquet)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder for results.jsonl/results.csv."),
    attribute: Optional[List[str]] = option("attributes"),
    group: Optional[List[str]] = option("groups"),
    metrics: Optional[str] = option("metrics"),
    max_tuples: int = option("max_tuples"),
    seed: int = option("seed"),
    group_order: Optional[List[str]] = typer.Option(None, help="ATTRIBUTE=g1,g2 (first minus second), repeatable."),
    significance: Optional[bool] = option("significance", owner=EvaluationOptions),
    threshold: Optional[List[str]] = option("thresholds"),
    bootstrap: int = option("bootstrap"),
    confidence: float = option("confidence"),
    bernstein: Optional[bool] = option("bernstein", owner=EvaluationOptions),
    multiplicity: str = option("multiplicity"),
    weighting: str = option("weighting"),
    resample_terms: str = option("resample_terms"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary, one line."),
    detail: bool = typer.Option(False, "--detail", help="Also print the full per-group tables of every attribute."),
    lines: int = typer.Option(60, "--lines", min=8, help="At most this many lines of summary."),
):
    """Compute every applicable metric on a scored-examples file (bring your own predictions).

    Example: bias-suite evaluate results/gender/scored.jsonl --out results/again --metrics FNED,CFGap
    """
    from ..evaluation import evaluate as evaluate_
    from ..families import read_scored
    from ..io.results import write_results

    resample_terms = terms_option(resample_terms)  # a bad value fails before any work

    try:
        data = read_scored(scored)
        groups = group_selection(group)
        if groups:  # the summary's counts and example pairs from the selected groups too
            import numpy as np

            from ..suites.selection import group_mask

            data = data.take(np.flatnonzero(group_mask(data.frame, groups, where=str(scored))))
        res = evaluate_(data, metrics=metrics, attributes=attribute, groups=groups, max_tuples=max_tuples, seed=seed, group_order_override=name_lists(group_order),
                        bootstrap=bootstrap, confidence=confidence, thresholds=parse_thresholds(threshold),
                        significance=significance, bernstein=bernstein,
                        multiplicity=multiplicity, weighting=weighting, resample_terms=resample_terms)
        inside = [scored] if scored.resolve().parent == Path(out).resolve() else []  # an input in OUT stays, listed
        write_results(res, out, metadata={"scored": str(scored), "max_tuples": max_tuples, "seed": seed, "bootstrap": bootstrap, "confidence": confidence,
                                          "weighting": weighting, "resample_terms": resample_terms,
                                          "intervals": dict(res.attrs.get("intervals") or {}, bootstrap=bootstrap),
                                          "thresholds": parse_thresholds(threshold) or {}},
                      files=inside)
    except BiasSuiteError as e:
        exit_with(e)
    from ..report.runs import print_results

    print_results([(res, data, "")], title=f"{scored}: {len(data)} examples, {len(res)} result rows",
                  files=[f"{out}/results.csv", f"bias-suite report {out}"], intervals=_intervals_of(out),
                  console=console, quiet=quiet, detail=detail, attributes=attribute, lines=lines)


def _intervals_of(folder: Path):
    """The ``intervals`` entry of a results folder's run.json (None if absent)."""
    import json

    try:
        return json.loads((folder / "run.json").read_text(encoding="utf-8")).get("intervals")
    except (OSError, ValueError, AttributeError):
        return None
