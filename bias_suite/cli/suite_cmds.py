"""``bias-suite expand`` and ``bias-suite validate``: suites without a model."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.markup import escape

from ..exceptions import BiasSuiteError
from .options import group_selection, option
from .output import exit_with, console, warning_line

commands = typer.Typer()


@commands.command(short_help="Expand suites into examples (counts, a sample, or a file).")
def expand(
    suites: List[str] = typer.Argument(..., help="Suite files or bundled suite names."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write the examples (.jsonl or .parquet)."),
    attribute: Optional[List[str]] = typer.Option(None, "--attribute", "-a", help="Keep only these attributes."),
    group: Optional[List[str]] = option("groups"),
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

    from ..families import load_suite
    from ..suites.selection import check_attributes

    try:
        loaded = [load_suite(find_suite(s)) for s in suites]
        check_attributes(loaded, attribute)
        ex = expand_suites(loaded, attributes=attribute, groups=group_selection(group), max_examples=max_examples)
    except BiasSuiteError as e:
        exit_with(e)
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


@commands.command(short_help="Check suite files, the identity-term files they use, or identity-term files alone.")
def validate(
    suites: List[str] = typer.Argument(..., help="Suite files or bundled suite names, or identity-term files."),
    max_examples: int = typer.Option(1_000_000, "--max-examples", help="Refuse suites that expand to more examples."),
):
    """Check suite files (and the identity-term files they use): every check that expansion makes, the size,
    and the class names, metrics, attributes and groups the file names. An identity-term file (attribute,
    groups) is checked on its own.

    Example: bias-suite validate templates/sentiment_gender.yaml
    """
    from ..families import load_suite, validate_suite
    from ..suites import find_suite
    from ..suites.loader import is_identity_file, load_identity_terms

    for s in suites:
        try:
            path = find_suite(s)
            if is_identity_file(path):
                terms = load_identity_terms(path)
                console.print(escape(f"ok  {path}: identity terms of {terms.attribute!r}, groups {terms.groups}, "
                                     f"slot kinds {terms.kinds}"), highlight=False)
                continue
            suite = load_suite(path)
            n = validate_suite(suite, max_examples=max_examples)
            taus = None
            if suite.materiality:  # tau keys name metrics or topics (checked against the metric registry)
                from ..pipeline import suite_thresholds

                taus = suite_thresholds([suite])
            if suite.thresholds:  # the rules' syntax, and the classes, attributes and groups they name
                from ..gating import rules_from_suite

                rules_from_suite(suite)
        except BiasSuiteError as e:
            exit_with(e)
        console.print(escape(f"ok  {suite.path}: {len(suite.templates)} templates, {n:,} examples, attributes {list(suite.identity)}"),
                      highlight=False)
        from ..stats.suite_size import size_warnings

        for line in size_warnings([suite], thresholds=taus):  # too few templates per class: not an error
            warning_line(line)
