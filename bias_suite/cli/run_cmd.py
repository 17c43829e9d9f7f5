"""``bias-suite run``: expand suites (or read an examples table), predict,
score, compute metrics, print the summary and check the thresholds."""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import List, Optional

import typer

from ..exceptions import BiasSuiteError
from ..report import theme
from .options import parse_class_map, Command, option, parse_thresholds, group_selection, terms_option
from .output import exit_with, console
from .summary import gate, gate_rules

commands = typer.Typer()


@commands.command(cls=Command, short_help="Run a model on suites: metrics, verdicts and a summary.")
def run(
    suites: List[str] = typer.Argument(..., help="Suite files or bundled suite names, or one examples table (CSV, TSV, JSONL, Parquet, a datasets folder, CoNLL) or the bundled real-text suite sentiment_vader_people."),
    model: str = typer.Option("default-sentiment", "--model", "-m", help="default-sentiment, a local model folder, a hub id, a model spec file (YAML: model, prompt, verbalizer) of a language model, or a Python model: module:attribute or path/to/file.py:attribute (a predict function, a predictor object or a tagger)."),
    classes: Optional[str] = typer.Option(None, "--classes", metavar="NAME,NAME,...", help="Class names of a Python predict function, in the column order of its probabilities (when it has no class_names of its own)."),
    out: Path = typer.Option(Path("results"), "--out", "-o", help="Output folder."),
    fmt: Optional[str] = typer.Option(None, "--format", help="Examples table format: csv, tsv, jsonl, parquet, datasets, conll (default: from the extension).", rich_help_panel="Examples table"),
    text_column: Optional[str] = typer.Option(None, "--text-column", help="Table column of the sentences (default text).", rich_help_panel="Examples table"),
    group_column: Optional[str] = typer.Option(None, "--group-column", help="Column of the groups (default group); the attribute comes from --attribute-name-column or --attribute-name, else is this column's name.", rich_help_panel="Examples table"),
    attribute_name_column: Optional[str] = typer.Option(None, "--attribute-name-column", help="Column naming each row's attribute (default attribute, when present).", rich_help_panel="Examples table"),
    attribute_name: Optional[str] = typer.Option(None, "--attribute-name", help="One attribute name for the whole table (with --group-column, or a CoNLL group column; default: the group column's name, CoNLL: identity).", rich_help_panel="Examples table"),
    attribute_column: Optional[List[str]] = typer.Option(None, "--attribute-column", help="A column whose values are the groups of the attribute named after it (repeatable: one attribute each; empty cells leave the row out of it).", rich_help_panel="Examples table"),
    template_column: Optional[List[str]] = typer.Option(None, "--template-column", help="Counterfactual template id column (default template, when present; repeatable: the values are joined). Without one, only group metrics.", rich_help_panel="Examples table"),
    term_column: Optional[str] = typer.Option(None, "--term-column", help="Column of the identity term (default term, when present).", rich_help_panel="Examples table"),
    label_column: Optional[str] = typer.Option(None, "--label-column", help="Column of the gold labels (default label, when present).", rich_help_panel="Examples table"),
    id_column: Optional[str] = typer.Option(None, "--id-column", help="Column of unique row ids (default id, when present; else FILE:LINE).", rich_help_panel="Examples table"),
    label_map: Optional[List[str]] = typer.Option(None, "--label-map", help="VALUE=CLASS,... : label values of the table -> model classes (e.g. anger=negative,joy=positive).", rich_help_panel="Examples table"),
    perturb: Optional[List[str]] = typer.Option(None, "--perturb", metavar="ATTRIBUTE", help="Your own sentences as the one table: perturb them by this attribute (a bundled one, e.g. gender, or an identity-term file; repeatable) and run on the counterfactual examples. The table's columns are --text-column, --label-column, --id-column; bias-suite perturb has more options and writes the examples to a file.", rich_help_panel="Examples table"),
    sample_templates: Optional[int] = typer.Option(None, "--sample-templates", min=1, metavar="N", help="A bundled real-text suite (sentiment_vader_people): at most N templates per attribute, drawn with --seed (docs/real_text.md).", rich_help_panel="Examples table"),
    side: Optional[Path] = typer.Option(None, "--side", help="CoNLL: side file (CSV/JSONL) with sentence, attribute, group, [template], start/end or term.", rich_help_panel="Examples table"),
    encoding: str = typer.Option("utf-8", "--encoding", help="Text encoding of the examples table.", rich_help_panel="Examples table"),
    prompt: Optional[str] = typer.Option(None, "--prompt", help="Use --model as a language model behind this prompt: {text} marks the text, {mask} a masked LM's answer (e.g. 'Review: {text} Sentiment:').", rich_help_panel="Language model"),
    verbalizer: Optional[List[str]] = typer.Option(None, "--verbalizer", metavar="CLASS=WORD[,WORD]", help="Answer words of a class (repeatable, one per class): a class's probability is the sum of its words' probabilities at the answer position.", rich_help_panel="Language model"),
    scoring: Optional[str] = typer.Option(None, "--scoring", help="first-token (default: the words' first sub-token) or word (whole-word likelihood of multi-token words).", rich_help_panel="Language model"),
    attribute: Optional[List[str]] = option("attributes"),
    group: Optional[List[str]] = option("groups"),
    metrics: Optional[str] = option("metrics"),
    max_tuples: int = option("max_tuples"),
    seed: int = option("seed"),
    device: str = option("device"),
    batch_size: int = option("batch_size"),
    class_map: Optional[List[str]] = option("class_map"),
    trust_remote_code: bool = option("trust_remote_code"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars or summary."),
    detail: bool = typer.Option(False, "--detail", help="Also print the full per-group tables of every attribute."),
    lines: int = typer.Option(60, "--lines", min=8, help="At most this many lines of summary."),
    report: bool = typer.Option(False, "--report", help="Also write the HTML report (OUT/report.html)."),
    fail_if: Optional[List[str]] = typer.Option(None, "--fail-if", help="Exit 3 when a value meets this condition, e.g. 'BPSN<0.9' (repeatable)."),
    fail_on_verdict: Optional[List[str]] = typer.Option(None, "--fail-on", "--fail-on-verdict", help="Exit 3 when a value gets this verdict: 'material' (any metric), 'material:FNED' (one metric) or a metric name (its material values); repeatable."),
    threshold: Optional[List[str]] = option("thresholds"),
    bootstrap: int = option("bootstrap"),
    confidence: float = option("confidence"),
    bernstein: bool = option("bernstein"),
    multiplicity: str = option("multiplicity"),
    weighting: str = option("weighting"),
    resample_terms: str = option("resample_terms"),
    cache: bool = option("cache"),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Prediction cache folder (default: $BIAS_SUITE_CACHE/predictions or ~/.cache/bias_suite/predictions)."),
    engine: str = option("engine"),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Existing Ray cluster ('auto' or ray://host:port); default: start a local Ray."),
    num_workers: Optional[int] = typer.Option(None, "--num-workers", help="Ray predictor actors (default: one per GPU, else one per CPU)."),
    dtype: Optional[str] = option("dtype"),
    invariance: bool = option("invariance"),
    inv_threshold: float = option("inv_threshold"),
    inv_criterion: str = option("inv_criterion"),
    inv_cases: str = option("inv_cases"),
    max_examples: int = typer.Option(1_000_000, "--max-examples", help="Refuse suites that expand to more examples."),
    sample_terms: Optional[int] = option("sample_terms", min=1, rich_help_panel="Examples table"),
    baseline: Optional[Path] = option("baseline"),
):
    """Expand suites, run the model, compute metrics, print a one-screen summary and write results.

    Thresholds (the suites' `thresholds:` and --fail-if/--fail-on-verdict) make the run exit with code 3 and a list of violations.

    Your own sentences: bias-suite run DATA --perturb gender --model M perturbs them first (bias-suite perturb).

    Example: bias-suite run sentiment_gender --model default-sentiment --out results/gender
    """
    from ..options import RunOptions
    from ..pipeline import run as run_

    resample_terms = terms_option(resample_terms)  # a bad value fails before any work

    try:
        if _real_text(suites):
            table = _real_text_table(suites, sample_templates, seed, quiet, perturb,
                                     {"--format": fmt, "--text-column": text_column, "--group-column": group_column,
                                      "--attribute-name-column": attribute_name_column,
                                      "--attribute-name": attribute_name, "--attribute-column": attribute_column,
                                      "--template-column": template_column, "--term-column": term_column,
                                      "--label-column": label_column, "--id-column": id_column,
                                      "--label-map": label_map, "--side": side})
        elif sample_templates is not None:
            raise BiasSuiteError("--sample-templates samples a bundled real-text suite (sentiment_vader_people); "
                                 f"{suites} is not one")
        elif perturb:
            table = _perturbed(suites, perturb, fmt, text_column, label_column, id_column, label_map, encoding, quiet,
                               {"--group-column": group_column, "--attribute-name-column": attribute_name_column,
                                "--attribute-name": attribute_name, "--attribute-column": attribute_column,
                                "--template-column": template_column, "--term-column": term_column, "--side": side})
        else:
            table = _read_table(suites, fmt, text_column, group_column, attribute_name_column, attribute_name,
                                attribute_column, template_column, term_column, label_column, id_column, label_map, side,
                                encoding, quiet)
        worsened = "worsened" in (fail_on_verdict or [])
        if worsened and baseline is None:
            raise BiasSuiteError("--fail-on worsened needs --baseline RUN_DIR (the run to compare with)")
        rules = gate_rules([] if table is not None else suites, fail_if,
                           [f for f in fail_on_verdict or [] if f != "worsened"])
        model = _model_arg(model, prompt, verbalizer, scoring, classes)
        options = RunOptions(
            metrics=metrics, attributes=attribute, groups=group_selection(group), max_tuples=max_tuples, seed=seed, device=device,
            batch_size=batch_size, class_map=parse_class_map(class_map), progress=not quiet,
            trust_remote_code=trust_remote_code, bootstrap=bootstrap, confidence=confidence, bernstein=bernstein,
            dtype=dtype, invariance=invariance, inv_threshold=inv_threshold, inv_criterion=inv_criterion,
            inv_cases=inv_cases, engine=_engine(engine, ray_address, num_workers, quiet),
            cache=(cache_dir if cache_dir is not None else True) if cache else False,
            thresholds=parse_thresholds(threshold), multiplicity=multiplicity, weighting=weighting,
            resample_terms=resample_terms, baseline=baseline, sample_terms=sample_terms)
        res = (run_ if table is not None else _with_example_limit(max_examples, run_))(
            table if table is not None else suites, model, out, options)
    except BiasSuiteError as e:
        exit_with(e)
    except KeyboardInterrupt:
        console.print(f"[{theme.WARN}]interrupted[/]: finished predictions are in the prediction cache; "
                      "run the same command again to resume" if cache else f"[{theme.WARN}]interrupted[/]")
        raise typer.Exit(130)
    if report:
        from ..report.html import write_html_report
        from ..report.runs import shown

        for part in res.parts():
            if part.folder is not None and (part.folder / "results.jsonl").exists():
                write_html_report(shown(part.folder))
    from ..report.runs import print_run

    print_run(res, console=console, out=out, quiet=quiet, detail=detail, lines=lines)
    if rules:
        import pandas as pd

        gate(pd.concat([p.results for p in res.parts()], ignore_index=True), rules)
    if worsened and res.comparison is not None and (res.comparison["change"] == "worsened").any():
        from ..comparison import EXIT_WORSENED

        console.print(f"[{theme.ERROR}]--fail-on worsened: {int((res.comparison['change'] == 'worsened').sum())} "
                      "values worsened against the baseline[/]")
        raise typer.Exit(EXIT_WORSENED)


def _model_arg(model: str, prompt, verbalizer, scoring, classes=None):
    """``--model`` as the run takes it: the name itself, a Python model
    (``module:attribute``, with ``--classes``), or a language model with its
    prompt and verbalizer (--prompt/--verbalizer/--scoring, or a model spec
    file, whose fields those options override)."""
    from ..models.prompt_spec import PromptSpec, is_prompt_spec_file, parse_verbalizer, read_prompt_spec
    from ..models.python_ref import is_python_ref, load_python_model

    if is_python_ref(model):
        if prompt is not None or verbalizer or scoring is not None:
            raise BiasSuiteError("--prompt, --verbalizer and --scoring are for a language model, not a Python model")
        names = None if classes is None else [c.strip() for c in classes.split(",") if c.strip()]
        return load_python_model(model, class_names=names)
    if classes is not None:
        raise BiasSuiteError(f"--classes names the classes of a Python model (--model module:attribute); {model!r} "
                             "has its own")
    if not is_prompt_spec_file(model):
        if prompt is None and not verbalizer and scoring is None:
            return model
        if prompt is None or not verbalizer:
            raise BiasSuiteError("a language model needs both --prompt (with {text}) and --verbalizer CLASS=WORD[,WORD] "
                                 "(one per class), or a model spec file as --model")
        return PromptSpec(model, prompt, parse_verbalizer(verbalizer), **({"scoring": scoring} if scoring else {}))
    spec = read_prompt_spec(model)
    if prompt is None and not verbalizer and scoring is None:
        return spec
    return PromptSpec(spec.model, prompt if prompt is not None else spec.prompt,
                      parse_verbalizer(verbalizer) if verbalizer else spec.verbalizer, scoring=scoring or spec.scoring,
                      kind=spec.kind, answer_prefix=spec.answer_prefix, name=spec.name, source=spec.source)


def _with_example_limit(max_examples: int, fn):
    """``fn(suites, ...)`` run under an expansion limit of ``max_examples``,
    after every suite passed validate's checks: a bad or oversized suite is
    refused before any prediction (also the NER part of a mixed run)."""
    from ..families import families_of, load_suite, validate_suite
    from ..suites import check_size, example_limit, find_suite

    def call(suites, model, out, options):
        loaded = [load_suite(find_suite(s)) for s in suites]
        for part in families_of(loaded).values():  # each task family's part expands separately
            check_size(part, attributes=options.attributes, max_examples=max_examples)
        for s in loaded:
            validate_suite(s, attributes=options.attributes, max_examples=float("inf"))
        with example_limit(max_examples):
            return fn(suites, model, out, options)

    return call


def _read_table(suites, fmt, text, group, attribute_name, attribute, attribute_columns, template, term, label, id_, label_map,
                side, encoding, quiet):
    """The examples table when the run's input is one (else None); mapping
    options without a table are an error."""
    from ..suites.tables import Columns, is_examples_table, parse_mapping, read_examples

    mapping = {"--text-column": text, "--group-column": group, "--attribute-name-column": attribute_name,
               "--attribute-name": attribute,
               "--attribute-column": attribute_columns, "--template-column": template, "--term-column": term,
               "--label-column": label, "--id-column": id_, "--label-map": label_map, "--side": side}
    if not any(is_examples_table(s, fmt) for s in suites):
        given = [k for k, v in mapping.items() if v]
        if given:
            raise BiasSuiteError(f"{', '.join(given)} apply to an examples table; {suites} are suites")
        return None
    if len(suites) != 1:
        raise BiasSuiteError(f"give either suites or one examples table, got {suites}")
    cols = Columns(text=text, group=group, attribute_name=attribute_name, attribute=attribute, attribute_columns=attribute_columns or (),
                   template=template or None, term=term, label=label, id=id_)
    return read_examples(suites[0], format=fmt, columns=cols, label_map=parse_mapping(label_map), encoding=encoding,
                         side=side, progress=not quiet)


def _perturbed(inputs, attributes, fmt, text, label, id_, label_map, encoding, quiet, other_options):
    """``--perturb``: the one table of ``inputs``, perturbed by
    ``attributes``, as an examples table (the report printed unless quiet)."""
    from ..suites.perturbation import perturb_with_report
    from ..suites.tables import from_frame, parse_mapping
    from .perturb_cmd import print_report

    given = [k for k, v in other_options.items() if v]
    if given:
        raise BiasSuiteError(f"the options of a ready examples table ({', '.join(given)}) do not go with --perturb, "
                             "which makes one from your sentences (their columns: --text-column, --label-column, "
                             "--id-column)")
    if len(inputs) != 1:
        raise BiasSuiteError(f"--perturb takes one table of sentences, got {inputs}")
    frame, report = perturb_with_report(inputs[0], attributes, text_column=text, label_column=label, id_column=id_,
                                        format=fmt, encoding=encoding)
    if not quiet:
        print_report(report)
    if frame.empty:
        raise BiasSuiteError(f"no sentence of {inputs[0]} mentions {', '.join(a.attribute for a in report.attributes)}: "
                             "nothing to run")
    table = from_frame(frame, label_map=parse_mapping(label_map), source=str(inputs[0]))
    how = f"{report.format}, perturbed by {', '.join(a.attribute for a in report.attributes)}"
    return dataclasses.replace(table, format=how, read_rows=report.rows)  # run.json: what was read and done


def _real_text(inputs) -> bool:
    """Whether the run's input is a bundled real-text suite, by name (a file
    of that name comes first)."""
    from ..models.real_text import is_real_text_suite

    return any(is_real_text_suite(s) and not Path(s).exists() for s in inputs)


def _real_text_table(inputs, templates, seed, quiet, perturb, other_options):
    """A bundled real-text suite made into its examples table (the
    perturbation report printed unless quiet)."""
    from ..models.real_text import real_text_examples
    from ..suites.tables import from_frame
    from .perturb_cmd import print_report

    if len(inputs) != 1:
        raise BiasSuiteError(f"a real-text suite runs alone (it is an examples table), got {inputs}")
    given = [k for k, v in other_options.items() if v] + (["--perturb"] if perturb else [])
    if given:
        raise BiasSuiteError(f"{inputs[0]} is a bundled real-text suite: {', '.join(given)} do not apply to it")
    frame, report = real_text_examples(inputs[0], templates=templates, seed=seed)
    if not quiet:
        print_report(report)
    table = from_frame(frame, source=inputs[0])
    return dataclasses.replace(table, format=report.format, read_rows=report.rows)


def _engine(name: str, address, num_workers, quiet):
    name = name.strip().lower()
    if name == "local":
        if address is not None or num_workers is not None:
            exit_with(BiasSuiteError("--ray-address and --num-workers need --engine ray"))
        return "local"
    if name == "ray":
        from ..predict.engines import get_engine

        return get_engine("ray", address=address, num_workers=num_workers, progress=not quiet)
    exit_with(BiasSuiteError(f"unknown --engine {name!r}; use local or ray"))
