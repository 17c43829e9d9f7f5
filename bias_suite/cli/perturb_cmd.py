"""``bias-suite perturb``: counterfactual examples from a user's own
sentences (docs/perturb.md), and the report ``run --perturb`` prints too."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer
from rich.markup import escape

from ..exceptions import BiasSuiteError
from .options import Command
from .output import console, exit_with

commands = typer.Typer()

PANEL = "Perturbation"


@commands.command(cls=Command, short_help="Counterfactual examples from your own sentences, by identity.")
def perturb(
    data: Path = typer.Argument(..., help="Your sentences: CSV, TSV, JSONL, Parquet, a datasets folder, or CoNLL (names and nationality)."),
    attribute: Optional[List[str]] = typer.Option(None, "--attribute", "-a", metavar="ATTRIBUTE", help="A bundled attribute to perturb (gender, names, nationality, religion, race_ethnicity, sexual_orientation, disability, age); repeatable.", rich_help_panel=PANEL),
    identity_terms: Optional[List[Path]] = typer.Option(None, "--identity-terms", metavar="FILE", help="Your own identity-term file (YAML, docs/suite_format.md) as an attribute; repeatable.", rich_help_panel=PANEL),
    out: Optional[Path] = typer.Option(None, "--out", "-o", metavar="OUT", help="The examples table to write: .jsonl, .parquet, .csv or .tsv (NER: .jsonl or .parquet)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print what would be written, write nothing."),
    insert: bool = typer.Option(False, "--insert", help="Also put each identity adjective before the first determiner + person noun of a sentence that mentions none ('my friend' -> 'my Muslim friend').", rich_help_panel=PANEL),
    terms_per_group: Optional[int] = typer.Option(None, "--terms-per-group", min=1, metavar="K", help="Write at most K term choices per group and sentence, drawn with --seed (default: every term; the sentence itself is always kept).", rich_help_panel=PANEL),
    seed: int = typer.Option(0, "--seed", help="Seed of --terms-per-group.", rich_help_panel=PANEL),
    tagger: Optional[bool] = typer.Option(None, "--tagger/--no-tagger", help="Read each 'her' (object or possessive) with spaCy's part-of-speech tagger (--tagger: required), or by the rule of docs/perturb.md (--no-tagger); default: the tagger when installed.", rich_help_panel=PANEL),
    unlisted_names: bool = typer.Option(False, "--unlisted-names", help="Also swap a first name that the names file does not list: the common first names of one gender, and (when the tagger runs) a sentence's one PERSON entity of spaCy's recogniser; such a template names listed names only, the source sentence not among them (docs/perturb.md).", rich_help_panel=PANEL),
    log: Optional[Path] = typer.Option(None, "--log", metavar="FILE", help="Write what happened to every sentence: one row per sentence and attribute (id, attribute, outcome changed/skipped/no mention, reason, text, first variant, review), CSV/TSV or JSONL by the extension.", rich_help_panel=PANEL),
    keep: Optional[List[str]] = typer.Option(None, "--keep", metavar="WORDS", help="Words never swapped, comma-separated (repeatable): --keep Charlotte,mother.", rich_help_panel=PANEL),
    pairs: Optional[Path] = typer.Option(None, "--pairs", metavar="FILE", help="Extra swap pairs: a CSV/TSV/JSONL file whose columns are groups of the attribute (female,male) and whose rows are words that swap (actress,actor); an 'attribute' column when several are perturbed.", rich_help_panel=PANEL),
    review: Optional[Path] = typer.Option(None, "--review", metavar="FILE", help="A --log file with its 'review' column filled in: 'drop' leaves a changed sentence out, 'approve' swaps a sentence skipped for a guess about whose words they are (title, surname, first name, ...).", rich_help_panel=PANEL),
    fmt: Optional[str] = typer.Option(None, "--format", help="Format of DATA: csv, tsv, jsonl, parquet, datasets, conll (default: from the extension)."),
    text_column: Optional[str] = typer.Option(None, "--text-column", help="Column of the sentences (default text)."),
    label_column: Optional[str] = typer.Option(None, "--label-column", help="Column of the gold labels, carried over (default label, when present)."),
    id_column: Optional[str] = typer.Option(None, "--id-column", help="Column of unique sentence ids (default id, when present; else the row number from 1)."),
    encoding: str = typer.Option("utf-8", "--encoding", help="Text encoding of DATA."),
):
    """Perturb your own sentences by identity: every sentence that mentions an attribute becomes a counterfactual template, once per term of every group.

    The output is an examples table that `bias-suite run OUT --model M` reads with no further options.

    Example: bias-suite perturb examples.jsonl --attribute gender --out perturbed.jsonl
    """
    from ..suites.perturbation import perturb_with_report, write_examples

    try:
        if out is None and not dry_run:
            raise BiasSuiteError("give --out FILE (or --dry-run)")
        if not attribute and not identity_terms:
            raise BiasSuiteError("name an attribute to perturb: --attribute gender (repeatable), or --identity-terms FILE")
        frame, report = perturb_with_report(
            data, list(attribute or []), identity_terms=list(identity_terms or []), text_column=text_column,
            label_column=label_column, id_column=id_column, format=fmt, encoding=encoding, insert=insert,
            terms_per_group=terms_per_group, seed=seed, tagger="auto" if tagger is None else tagger,
            unlisted_names=unlisted_names, keep=list(keep or []), pairs=pairs, review=review, log=log is not None)
        print_report(report)
        if log is not None:
            from ..suites.perturbation.trail import write_log

            write_log(report.log, log)
            console.print(f"wrote the log of {_count(len(report.log), 'sentence')} to {escape(str(log))}",
                          soft_wrap=True, highlight=False)
        if frame.empty and dry_run:
            console.print("dry run: no sentence gives a template, nothing would be written")
            return
        if frame.empty:
            raise BiasSuiteError(f"no sentence of {data} mentions {', '.join(a.attribute for a in report.attributes)}: "
                                 "nothing to write")
        if dry_run:
            console.print(f"dry run: {_count(len(frame), 'example')} in {_count(frame['template'].nunique(), 'template')}, "
                          "nothing written")
            return
        write_examples(frame, out)
    except BiasSuiteError as e:
        exit_with(e)
    console.print(f"wrote {_count(len(frame), 'example')} ({_count(frame['template'].nunique(), 'template')}) to {escape(str(out))}; "
                  f"next: bias-suite run {escape(str(out))} --model MODEL", soft_wrap=True)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def print_report(report, *, pairs: bool = True) -> None:
    """Per attribute: sentences with a mention, sentences skipped and why,
    groups left out, templates and examples, three source -> variant pairs
    and a sample of the skipped sentences of each reason."""
    from rich.table import Table

    console.print(f"{escape(report.source)}: {_count(report.rows, 'sentence')} ({report.format})"
                  + (f", {report.empty} empty" if report.empty else "") + f"; \"her\" read by {report.tagger}",
                  soft_wrap=True, highlight=False)
    t = Table(show_edge=False, pad_edge=False)
    for c in ("attribute", "mentioned", "inserted", "skipped", "templates", "examples"):
        t.add_column(c, justify="left" if c == "attribute" else "right")
    for a in report.attributes:
        t.add_row(a.attribute, str(a.mentioned), str(a.inserted), str(sum(a.skipped.values())), str(a.templates),
                  str(a.examples))
    console.print(t)
    for a in report.attributes:
        if a.skipped:
            console.print(f"{a.attribute}: skipped " + ", ".join(f"{n} ({escape(why)})" for why, n in a.skipped.most_common()),
                          soft_wrap=True, highlight=False)
        if a.left_out:
            console.print(f"{a.attribute}: left out " + ", ".join(f"{escape(g)} in {_count(n, 'template')}" for g, n in a.left_out.most_common()),
                          soft_wrap=True, highlight=False)
    if pairs:
        for a in report.attributes:
            for src, var in a.pairs:
                console.print(f"  {a.attribute}: {escape(src)}  ->  {escape(var)}", soft_wrap=True, highlight=False)
            for why, n in a.skipped.most_common():
                for src in a.skip_samples.get(why, []):
                    console.print(f"  {a.attribute}: {escape(src)}  skipped: {escape(why)}", soft_wrap=True,
                                  highlight=False)
