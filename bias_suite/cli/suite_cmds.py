"""``bias-suite expand`` and ``bias-suite validate``: suites without a model."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.markup import escape

from ..exceptions import BiasSuiteError
from .output import _fail, console

commands = typer.Typer()


@commands.command(short_help="Expand suites into examples (counts, a sample, or a file).")
def expand(
    suites: List[str] = typer.Argument(..., help="Suite files or bundled suite names."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write the examples (.jsonl or .parquet)."),
    attribute: Optional[List[str]] = typer.Option(None, "--attribute", "-a", help="Keep only these attributes."),
    sample: int = typer.Option(8, help="How many example sentences to print."),
    seed: int = typer.Option(0, help="Seed of the printed sample."),
    max_examples: int = typer.Option(1_000_000, "--max-examples", help="Refuse suites that expand to more examples."),
):
    """Expand suites into examples: print counts per attribute/group and a sample, or write them.

    Example: bias-suite expand sentiment_gender --out examples.jsonl
    """
    from rich.table import Table

    from ..families import expand_suites, write_jsonl, write_parquet
    from ..suites import expansion_counts, find_suite

    try:
        ex = expand_suites([find_suite(s) for s in suites], attributes=attribute, max_examples=max_examples)
    except BiasSuiteError as e:
        _fail(e)
    counts = expansion_counts(ex)
    t = Table(title=f"{len(ex)} examples, {ex['template'].nunique()} counterfactual templates")
    for c in counts.columns:
        t.add_column(c, justify="right" if c in ("examples", "templates", "terms") else "left")
    for r in counts.itertuples(index=False):
        t.add_row(*[escape(str(x)) for x in r])
    console.print(t)
    if len(ex) and sample:
        s = ex.sample(min(sample, len(ex)), random_state=seed)
        t2 = Table(title="sample")
        ner = "tags" in s.columns  # sequence labelling: show the gold entities inline
        for c in ("attribute", "group") + (("gold entities",) if ner else ("label", "text")):
            t2.add_column(c)
        for r in s.itertuples(index=False):
            if ner and isinstance(r.tags, list):
                from ..families.sequence.expansion import bracketed

                t2.add_row(escape(r.attribute), escape(r.group), escape(bracketed(r.tokens, r.tags)))
            else:
                t2.add_row(escape(str(r.attribute)), escape(str(r.group)), escape(str(r.label)), escape(str(r.text)))
        console.print(t2)
    if out is not None:
        if out.suffix == ".parquet":
            write_parquet(ex, out)
        else:
            write_jsonl(ex, out)
        console.print(f"wrote {len(ex)} examples to {escape(str(out))}", highlight=False)


@commands.command(short_help="Check suite files and the identity-term files they use.")
def validate(
    suites: List[str] = typer.Argument(..., help="Suite files or bundled suite names."),
    max_examples: int = typer.Option(1_000_000, "--max-examples", help="Refuse suites that expand to more examples."),
):
    """Check suite files (and the identity-term files they use): every check that expansion makes, and the size.

    Example: bias-suite validate templates/sentiment_gender.yaml
    """
    from ..families import load_suite, validate_suite
    from ..suites import find_suite

    for s in suites:
        try:
            suite = load_suite(find_suite(s))
            n = validate_suite(suite, max_examples=max_examples)
            if suite.materiality:  # tau keys name metrics or topics (checked against the metric registry)
                from ..pipeline import suite_thresholds

                suite_thresholds([suite])
        except BiasSuiteError as e:
            _fail(e)
        console.print(escape(f"ok  {suite.path}: {len(suite.templates)} templates, {n:,} examples, attributes {list(suite.identity)}"),
                      highlight=False)
