"""``bias-suite`` command line: every stage usable on its own.

    bias-suite expand SUITE...            suites -> examples
    bias-suite run SUITE... --model M     expand, predict, score, metrics, summary
    bias-suite run TABLE --model M        the same on an examples table (CSV/JSONL/Parquet/...)
    bias-suite evaluate SCORED --out DIR  metrics on your own predictions
    bias-suite metrics                    the registry of named metrics
    bias-suite sample-size ...            Bernstein sample size to claim a bias
    bias-suite models build|list          the offline default models
    bias-suite validate SUITE...          check suite files
    bias-suite report RESULTS_DIR         self-contained HTML report
    bias-suite plot RESULTS_DIR --out D   publication figures (png/svg/pdf)
    bias-suite check RESULTS_DIR ...      thresholds on existing results (exit 3)

Errors are one line (exit 2; an unexpected one, a bug, exits 1);
``bias-suite --debug COMMAND ...`` shows the traceback instead.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer
import typer.core
from rich.markup import escape

from .exceptions import BiasSuiteError
from .report import theme

EXIT_ERROR = 2  # bad input, unwritable output (BiasSuiteError, OSError)
EXIT_BUG = 1  # an unexpected exception: a bug in bias_suite
_DEBUG = {"on": False}  # --debug of the command being run


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _report_exception(e: BaseException) -> int:
    """Print ``e`` as one line on stderr; return the exit code."""
    if isinstance(e, (BiasSuiteError, OSError)):
        msg, code = _one_line(e), EXIT_ERROR
        if not isinstance(e, BiasSuiteError):
            msg += " (rerun with --debug for the traceback)"
    else:
        msg = (f"internal error, a bug in bias_suite: {type(e).__name__}: {_one_line(e)}; "
               "rerun with --debug for the traceback and report it")
        code = EXIT_BUG
    err_console.print(f"[{theme.ERROR}]error:[/] {escape(msg)}", highlight=False, soft_wrap=True)
    return code


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
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException, KeyboardInterrupt):  # exits, usage errors
            raise
        except BrokenPipeError:  # the reader went away (`| head`): stop quietly, like other tools
            _silence_stdout()
            raise typer.Exit(141) from None
        except Exception as e:
            if _DEBUG["on"]:
                raise
            raise typer.Exit(_report_exception(e)) from None


# Plain (click) help: option names are never cut and descriptions wrap to the
# terminal's width; -h works as well as --help.
_HELP = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class _Command(typer.core.TyperCommand):
    """Plain help with the options grouped by their help panel."""

    def format_options(self, ctx, formatter):
        panels: dict = {}
        for p in self.get_params(ctx):
            rec = p.get_help_record(ctx)
            if rec is not None:
                default = "Arguments" if p.param_type_name == "argument" else "Options"
                panels.setdefault(getattr(p, "rich_help_panel", None) or default, []).append(rec)
        for name in sorted(panels, key=lambda k: (k != "Arguments", k != "Options")):
            with formatter.section(name):
                formatter.write_dl(panels[name])


app = typer.Typer(cls=_Group, add_completion=False, no_args_is_help=True, rich_markup_mode=None, context_settings=_HELP,
                  help="Behavioural bias testing for NLP models.")


@app.callback()
def _app_options(
    debug: bool = typer.Option(False, "--debug", help="Show the full traceback of an error (for bug reports)."),
):
    """Behavioural bias testing for NLP models."""
    _DEBUG["on"] = bool(debug)


models_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, context_settings=_HELP, help="Build and list the offline default models.")
app.add_typer(models_app, name="models")
cache_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, context_settings=_HELP, help="The prediction cache: what is stored, and clearing it.")
app.add_typer(cache_app, name="cache")
from .interop.cli import checklist_app  # noqa: E402  (light: imports checklist only inside its commands)

app.add_typer(checklist_app, name="checklist", short_help="CheckList interop: export suites, import predictions.")


class _LazyConsole:
    """Resolve the stream at print time (tests and pipes swap sys.stdout)."""

    def __init__(self, stderr: bool = False):
        self.stderr = stderr

    def __getattr__(self, name):
        from .report.terminal import make_console

        return getattr(make_console(self.stderr), name)


console = _LazyConsole()
err_console = _LazyConsole(stderr=True)


def _fail(e: Exception, code: int = 2):
    """Print a BiasSuiteError as one error line and exit (with --debug: raise it)."""
    if _DEBUG["on"]:
        raise e
    # messages quote user text (labels, groups, file names): never read it as markup
    err_console.print(f"[{theme.ERROR}]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _name_lists(specs: Optional[List[str]], option: str = "--group-order", form: str = "ATTRIBUTE=g1,g2,...") -> Optional[dict]:
    """Repeated NAME=a,b,... options (--group-order, checklist import --group) -> {name: [a, b, ...]}."""
    if not specs:
        return None
    out = {}
    for s in specs:
        if "=" not in s:
            raise BiasSuiteError(f"{option} expects {form}, got {s!r}")
        a, items = s.split("=", 1)
        out[a.strip()] = [g.strip() for g in items.split(",") if g.strip()]
    return out


_group_orders = _name_lists


def _thresholds(specs: Optional[List[str]]) -> Optional[dict]:
    """--threshold NAME=VALUE (a metric name or a topic) -> {name: tau}."""
    if not specs:
        return None
    out = {}
    for s in specs:
        name, _, value = s.partition("=")
        try:
            tau = float(value)
        except ValueError:
            tau = float("nan")
        if not name.strip() or not (tau > 0):
            raise BiasSuiteError(f"--threshold expects METRIC_OR_TOPIC=VALUE with a positive value, got {s!r}")
        out[name.strip()] = tau
    return out


def _class_map(specs: Optional[List[str]]) -> Optional[dict]:
    if not specs:
        return None
    out = {}
    for s in specs:
        if "=" not in s:
            raise BiasSuiteError(f"--class-map expects SUITE_CLASS=MODEL_CLASS, got {s!r}")
        a, b = s.split("=", 1)
        out[a.strip()] = b.strip()
    return out


@app.command(short_help="Expand suites into examples (counts, a sample, or a file).")
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

    from .families import write_jsonl, write_parquet
    from .families import expand_suites
    from .suites import expansion_counts, find_suite

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
                from .families.sequence.expansion import bracketed

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


@app.command(short_help="Check suite files and the identity-term files they use.")
def validate(
    suites: List[str] = typer.Argument(..., help="Suite files or bundled suite names."),
    max_examples: int = typer.Option(1_000_000, "--max-examples", help="Refuse suites that expand to more examples."),
):
    """Check suite files (and the identity-term files they use): every check that expansion makes, and the size.

    Example: bias-suite validate templates/sentiment_gender.yaml
    """
    from .families import load_suite, validate_suite
    from .suites import find_suite

    for s in suites:
        try:
            suite = load_suite(find_suite(s))
            n = validate_suite(suite, max_examples=max_examples)
            if suite.materiality:  # tau keys name metrics or topics (checked against the metric registry)
                from .run import suite_thresholds

                suite_thresholds([suite])
        except BiasSuiteError as e:
            _fail(e)
        console.print(escape(f"ok  {suite.path}: {len(suite.templates)} templates, {n:,} examples, attributes {list(suite.identity)}"),
                      highlight=False)


@app.command(cls=_Command, short_help="Run a model on suites: metrics, verdicts and a summary.")
def run(
    suites: List[str] = typer.Argument(..., help="Suite files or bundled suite names, or one examples table (CSV, TSV, JSONL, Parquet, a datasets folder, CoNLL)."),
    model: str = typer.Option("default-sentiment", "--model", "-m", help="default-sentiment, a local model folder or a hub id."),
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
    side: Optional[Path] = typer.Option(None, "--side", help="CoNLL: side file (CSV/JSONL) with sentence, attribute, group, [template], start/end or term.", rich_help_panel="Examples table"),
    encoding: str = typer.Option("utf-8", "--encoding", help="Text encoding of the examples table.", rich_help_panel="Examples table"),
    attribute: Optional[List[str]] = typer.Option(None, "--attribute", "-a"),
    metrics: Optional[str] = typer.Option(None, help="Comma-separated metric names (default: all)."),
    max_tuples: int = typer.Option(100, help="Counterfactual tuples per template before sampling."),
    seed: int = typer.Option(0),
    device: str = typer.Option("auto", help="auto, cpu, cuda or cuda:N."),
    batch_size: int = typer.Option(64),
    class_map: Optional[List[str]] = typer.Option(None, help="SUITE_CLASS=MODEL_CLASS, repeatable."),
    trust_remote_code: bool = typer.Option(False, help="Allow model code from the model folder/hub (off by default)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars or summary."),
    detail: bool = typer.Option(False, "--detail", help="Also print the full per-group tables of every attribute."),
    lines: int = typer.Option(60, "--lines", min=8, help="At most this many lines of summary."),
    report: bool = typer.Option(False, "--report", help="Also write the HTML report (OUT/report.html)."),
    fail_if: Optional[List[str]] = typer.Option(None, "--fail-if", help="Exit 3 when a value meets this condition, e.g. 'BPSN<0.9' (repeatable)."),
    fail_on_verdict: Optional[List[str]] = typer.Option(None, "--fail-on", "--fail-on-verdict", help="Exit 3 when a value gets this verdict: 'material' (any metric), 'material:FNED' (one metric) or a metric name (its material values); repeatable."),
    threshold: Optional[List[str]] = typer.Option(None, "--threshold", metavar="NAME=TAU",
                                                  help="Smallest effect that counts as material, for a metric or a topic (e.g. FNED=0.1, errors=0.03; repeatable; defaults: bias-suite metrics)."),
    bootstrap: int = typer.Option(200, "--bootstrap", help="B template resamples for cluster-bootstrap intervals and verdicts (0: off)."),
    confidence: float = typer.Option(0.95, help="Confidence of the intervals, tests and verdicts."),
    bernstein: bool = typer.Option(True, "--bernstein/--no-bernstein", help="Add Bernstein-bounded disparity rows."),
    cache: bool = typer.Option(True, "--cache/--no-cache", help="Reuse and store predictions in the prediction cache (resumes interrupted runs)."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Prediction cache folder (default: $BIAS_SUITE_CACHE/predictions or ~/.cache/bias_suite/predictions)."),
    engine: str = typer.Option("local", "--engine", help="Where predictions run: local, or ray (Ray Data actor pool; needs ray[data])."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Existing Ray cluster ('auto' or ray://host:port); default: start a local Ray."),
    num_workers: Optional[int] = typer.Option(None, "--num-workers", help="Ray predictor actors (default: one per GPU, else one per CPU)."),
    dtype: Optional[str] = typer.Option(None, "--dtype", help="Weights dtype for Hugging Face models and taggers: float32 (default), bf16 (GPUs, and CPUs with native bf16 such as AMX), fp16 (GPUs) or int8 (dynamic int8 quantization on the CPU). Faster, but probabilities move; see docs/scale.md."),
    invariance: bool = typer.Option(True, "--invariance/--no-invariance", help="Add CheckList INV fail rates over the counterfactual templates."),
    inv_threshold: float = typer.Option(0.1, "--inv-threshold", help="Threshold of the INV rule (classification; NER: any tag outside the identity changes)."),
    inv_criterion: str = typer.Option("checklist", "--inv-criterion", help="INV rule (classification): checklist = CheckList's Expect.inv, a case fails only when the prediction flips (INV-FailRate); prob = fails when any class probability moves by more than --inv-threshold (INV-ProbShift-FailRate)."),
    inv_cases: str = typer.Option("all_terms", "--inv-cases", help="INV test cases: all_terms = every term of every group per template, as a CheckList perturbation; per_group = one seeded term per group."),
    max_examples: int = typer.Option(1_000_000, "--max-examples", help="Refuse suites that expand to more examples."),
):
    """Expand suites, run the model, compute metrics, print a one-screen summary and write results.

    Thresholds (the suites' `thresholds:` and --fail-if/--fail-on-verdict) make the run exit with code 3 and a list of violations.

    Example: bias-suite run sentiment_gender --model default-sentiment --out results/gender
    """
    from .run import run as run_

    try:
        table = _read_table(suites, fmt, text_column, group_column, attribute_name_column, attribute_name, attribute_column,
                            template_column, term_column, label_column, id_column, label_map, side, encoding, quiet)
        rules = _gate_rules([] if table is not None else suites, fail_if, fail_on_verdict)
        res = (run_ if table is not None else _with_example_limit(max_examples, run_))(
            table if table is not None else suites, model, out, metrics=metrics, attributes=attribute, max_tuples=max_tuples, seed=seed, device=device,
            batch_size=batch_size, class_map=_class_map(class_map), progress=not quiet, trust_remote_code=trust_remote_code,
            bootstrap=bootstrap, confidence=confidence, bernstein=bernstein, dtype=dtype, invariance=invariance, inv_threshold=inv_threshold,
            engine=_engine(engine, ray_address, num_workers, quiet), cache=(cache_dir if cache_dir is not None else True) if cache else False,
            inv_criterion=inv_criterion, inv_cases=inv_cases, thresholds=_thresholds(threshold))
    except BiasSuiteError as e:
        _fail(e)
    except KeyboardInterrupt:
        console.print(f"[{theme.WARN}]interrupted[/]: finished predictions are in the prediction cache; "
                      "run the same command again to resume" if cache else f"[{theme.WARN}]interrupted[/]")
        raise typer.Exit(130)
    parts = [(p, d) for p, d in ((res, out), (getattr(res, "sequence", None), out / "ner")) if p is not None]
    used = 0
    for part, _ in parts:
        st = (part.metadata or {}).get("predictions")
        if st:
            from rich.text import Text

            line = Text(f"predictions ({part.model}): {_pred_summary(st)}")
            console.print(line, highlight=False)
            used += len(console.render_lines(line, pad=False))  # long paths wrap
    files = []
    for part, d in parts:
        files.append(f"{d}/results.csv")
        if report and (d / "results.jsonl").exists():
            from .report.html import write_html_report

            files.append(str(write_html_report(d)))
    if not report:
        files.append(f"bias-suite report {out}")
    title = " · ".join(f"{p.model}: {len(p.examples)} {'NER ' if p.scored.task != 'classification' else ''}examples, "
                       f"{len(p.results)} result rows" for p, _ in parts)
    _print_results([(p.results, p.scored, "NER" if p.scored.task != "classification" else "") for p, _ in parts],
                   title=title, files=files, intervals=(res.metadata or {}).get("intervals"), quiet=quiet,
                   detail=detail, used=used, lines=lines)
    if rules:
        import pandas as pd

        parts = [res.results] + ([res.sequence.results] if getattr(res, "sequence", None) is not None else [])
        _gate(pd.concat(parts, ignore_index=True), rules)


def _with_example_limit(max_examples: int, fn):
    """``fn(suites, ...)`` run under an expansion limit of ``max_examples``,
    after every suite passed validate's checks: a bad or oversized suite is
    refused before any prediction (also the NER part of a mixed run)."""
    from .families import load_suite, validate_suite
    from .suites import check_size, example_limit, find_suite

    def call(suites, *args, **kwargs):
        loaded = [load_suite(find_suite(s)) for s in suites]
        for task in dict.fromkeys(s.task for s in loaded):  # classification and NER parts expand separately
            check_size([s for s in loaded if s.task == task], attributes=kwargs.get("attributes"), max_examples=max_examples)
        for s in loaded:
            validate_suite(s, attributes=kwargs.get("attributes"), max_examples=float("inf"))
        with example_limit(max_examples):
            return fn(suites, *args, **kwargs)

    return call


def _print_results(parts, *, title: str, files: list, intervals=None, quiet: bool = False, detail: bool = False,
                   used: int = 0, attributes=None, lines: int = 60) -> None:
    """The one-screen headline of ``parts`` [(results, scored, label)]; the
    per-group tables first with ``--detail``; one line with ``--quiet``."""
    from .report.headline import HeadlineInput, combine_results, print_headline

    if quiet:
        console.print(escape(title) + " → " + escape(", ".join(files)), highlight=False, soft_wrap=True)
        return
    if detail:
        from .report.sequence_terminal import print_sequence_summary
        from .report.terminal import print_summary

        for results, scored, _ in parts:
            if scored.task == "classification":
                print_summary(results, scored, console=console, attributes=attributes)
            else:
                print_sequence_summary(results, scored, console=console, attributes=attributes)
    combined = combine_results([(label, results) for results, _, label in parts])
    inp = HeadlineInput(combined, scored=[(label, s) for _, s, label in parts], intervals=intervals, files=files,
                        detail_hint=not detail, title=title)
    print_headline(inp, console=console, max_lines=lines - used)


def _read_table(suites, fmt, text, group, attribute_name, attribute, attribute_columns, template, term, label, id_, label_map,
                side, encoding, quiet):
    """The examples table when the run's input is one (else None); mapping
    options without a table are an error."""
    from .suites.tables import Columns, is_examples_table, parse_mapping, read_examples

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


def _engine(name: str, address, num_workers, quiet):
    name = name.strip().lower()
    if name == "local":
        if address is not None or num_workers is not None:
            _fail(BiasSuiteError("--ray-address and --num-workers need --engine ray"))
        return "local"
    if name == "ray":
        from .predict.engines import get_engine

        return get_engine("ray", address=address, num_workers=num_workers, progress=not quiet)
    _fail(BiasSuiteError(f"unknown --engine {name!r}; use local or ray"))


def _pred_summary(st: dict) -> str:
    from .predict.runner import PredictionStats

    fields = {k: v for k, v in st.items() if k in PredictionStats.__dataclass_fields__}
    return PredictionStats(**fields).summary()


def _gate_rules(suites, fail_if, fail_on_verdict) -> list:
    """Threshold rules of the suite files plus the command-line ones (checked before the run)."""
    from .gating import cli_rules, rules_from_suites
    from .families import load_suite
    from .suites import find_suite

    loaded = [load_suite(find_suite(s)) for s in suites]
    return rules_from_suites(loaded) + cli_rules(fail_if, fail_on_verdict)  # (brackets: _fail escapes markup)


def _gate(results, rules) -> None:
    """Print the violations of ``rules`` and exit 3, or say that all passed."""
    from rich.table import Table

    from .gating import EXIT_VIOLATIONS, check_thresholds

    violations = check_thresholds(results, rules)
    if not violations:
        console.print(f"[{theme.OK}]thresholds: all {len(rules)} rule{'s' if len(rules) != 1 else ''} passed[/]")
        return
    t = Table(title=f"[{theme.ERROR}]{len(violations)} bias threshold violation{'s' if len(violations) != 1 else ''}[/]", title_justify="left")
    for c in ("metric", "attribute", "class", "group", "value", "threshold", "why", "from"):
        t.add_column(c, justify="right" if c == "value" else "left", overflow="fold")
    for v in violations:
        d = v.as_dict()
        cells = (d["metric"], d["attribute"] or "–", d["class"] or "–", d["group"] or "–",
                 "–" if d["value"] is None else f"{d['value']:.4g}", d["threshold"], v.reason, d["source"] or "")
        t.add_row(*(escape(str(c)) for c in cells))
    err_console.print(t)
    raise typer.Exit(EXIT_VIOLATIONS)


@app.command(short_help="Write the self-contained HTML report of a results folder.")
def report(
    results_dir: Path = typer.Argument(..., help="A results folder (results.jsonl, run.json, scored.*)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="HTML file (default RESULTS_DIR/report.html)."),
    title: Optional[str] = typer.Option(None, help="Report title."),
):
    """Write one self-contained HTML report (heatmaps, intervals, significance, verdicts, drill-down).

    Example: bias-suite report results/gender
    """
    from .report.html import write_html_report

    try:
        path = write_html_report(results_dir, out, title=title)
    except (BiasSuiteError, FileNotFoundError) as e:
        _fail(e)
    console.print(escape(f"report → {path}"))


@app.command(short_help="Write publication figures (png, svg or pdf).")
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
        from .report.plots import write_figures
    except ImportError as e:
        _fail(BiasSuiteError(f"plotting needs matplotlib ({e}); pip install matplotlib"))
    try:
        paths = write_figures(results_dir, out, fmt=fmt, attributes=attribute,
                              metrics=[m.strip() for m in metrics.split(",") if m.strip()] if metrics else None)
    except (BiasSuiteError, FileNotFoundError, ValueError) as e:
        _fail(e)
    console.print(escape(f"{len(paths)} figures → {out}"))


@app.command(short_help="Check thresholds on existing results (exit 3 on a violation).")
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
    from .gating import recorded_rules
    from .report.html import read_results_table

    try:
        rules = recorded_rules(results_dir) + _gate_rules(suite or [], fail_if, fail_on_verdict)
        if not rules:
            raise BiasSuiteError("no rules: the run recorded no suite thresholds; give --fail-if, --fail-on or --suite")
        results = read_results_table(results_dir)
    except (BiasSuiteError, FileNotFoundError) as e:
        _fail(e)
    _gate(results, rules)


@app.command(short_help="Metrics and verdicts on your own scored predictions.")
def evaluate(
    scored: Path = typer.Argument(..., help="Scored examples (.jsonl or .parquet)."),
    out: Path = typer.Option(..., "--out", "-o", help="Output folder for results.jsonl/results.csv."),
    attribute: Optional[List[str]] = typer.Option(None, "--attribute", "-a"),
    metrics: Optional[str] = typer.Option(None, help="Comma-separated metric names (default: all)."),
    max_tuples: int = typer.Option(100, help="Counterfactual tuples per template before sampling."),
    seed: int = typer.Option(0),
    group_order: Optional[List[str]] = typer.Option(None, help="ATTRIBUTE=g1,g2 (first minus second), repeatable."),
    significance: bool = typer.Option(True, help="Add Wilcoxon/Friedman rows."),
    threshold: Optional[List[str]] = typer.Option(None, "--threshold", metavar="NAME=TAU",
                                                  help="Smallest effect that counts as material, for a metric or a topic (e.g. FNED=0.1, errors=0.03; repeatable; defaults: bias-suite metrics)."),
    bootstrap: int = typer.Option(200, "--bootstrap", help="B template resamples for cluster-bootstrap intervals and verdicts (0: off)."),
    confidence: float = typer.Option(0.95, help="Confidence of the intervals, tests and verdicts."),
    bernstein: bool = typer.Option(True, "--bernstein/--no-bernstein", help="Add Bernstein-bounded disparity rows (classification)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary, one line."),
    detail: bool = typer.Option(False, "--detail", help="Also print the full per-group tables of every attribute."),
    lines: int = typer.Option(60, "--lines", min=8, help="At most this many lines of summary."),
):
    """Compute every applicable metric on a scored-examples file (bring your own predictions).

    Example: bias-suite evaluate results/gender/scored.jsonl --out results/again --metrics FNED,CFGap
    """
    from .evaluation import evaluate as evaluate_
    from .report.files import write_results
    from .families import read_scored

    try:
        data = read_scored(scored)
        res = evaluate_(data, metrics=metrics, attributes=attribute, max_tuples=max_tuples, seed=seed, group_order_override=_group_orders(group_order),
                        bootstrap=bootstrap, confidence=confidence, thresholds=_thresholds(threshold),
                        significance=significance, bernstein=bernstein)
        inside = [scored] if scored.resolve().parent == Path(out).resolve() else []  # an input in OUT stays, listed
        write_results(res, out, metadata={"scored": str(scored), "max_tuples": max_tuples, "seed": seed, "bootstrap": bootstrap, "confidence": confidence,
                                          "intervals": dict(res.attrs.get("intervals") or {}, bootstrap=bootstrap),
                                          "thresholds": _thresholds(threshold) or {}},
                      files=inside)
    except BiasSuiteError as e:
        _fail(e)
    _print_results([(res, data, "")], title=f"{scored}: {len(data)} examples, {len(res)} result rows",
                   files=[f"{out}/results.csv", f"bias-suite report {out}"], intervals=_intervals_of(out),
                   quiet=quiet, detail=detail, attributes=attribute, lines=lines)


def _intervals_of(folder: Path):
    """The ``intervals`` entry of a results folder's run.json (None if absent)."""
    import json

    try:
        return json.loads((folder / "run.json").read_text(encoding="utf-8")).get("intervals")
    except (OSError, ValueError, AttributeError):
        return None


@app.command("metrics", short_help="List the registered metrics.")
def metrics_cmd(
    markdown: bool = typer.Option(False, help="Print as a Markdown table."),
    explain: Optional[str] = typer.Option(None, "--explain", metavar="NAME",
                                          help="One metric in plain words: meaning, direction, no-bias value, threshold."),
):
    """List the registered metrics: how each is built (generalized metric, phi,
    d, N, beta), its no-bias value b and threshold tau, and its source.

    Example: bias-suite metrics --explain FNED
    """
    from rich.table import Table

    from .metrics import catalog_frame
    from .metrics import explain as explain_

    if explain:
        try:
            console.print(escape(explain_(explain)), highlight=False)
        except BiasSuiteError as e:
            _fail(e)
        return
    df = catalog_frame()
    if markdown:
        console.print(df.to_markdown(index=False) if hasattr(df, "to_markdown") else df.to_string(index=False))
        return
    t = Table(title=f"{len(df)} registered metrics (bias-suite metrics --explain NAME for one in plain words)")
    for c in ("name", "view", "generalized", "phi", "d", "N", "beta", "b", "tau", "topic", "source"):
        t.add_column(c, overflow="fold", no_wrap=c in ("name", "generalized", "view", "d", "N", "beta", "tau"))
    for r in df.itertuples(index=False):
        t.add_row(*(escape(str(x)) for x in (r.name, r.view, r.generalized, r.phi, r.d, r.N, r.beta, r.b, f"{r.tau:g}",
                                              r.topic, r.source.split(",")[0])))
    console.print(t)


@app.command("sample-size", short_help="Examples needed to claim a bias (Bernstein bound).")
def sample_size_cmd(
    bias: float = typer.Option(..., help="The bias delta to claim (absolute value is used)."),
    confidence: float = typer.Option(0.95, help="Confidence rho."),
    gamma: float = typer.Option(0.5, help="gamma = min(share protected, share unprotected)."),
    max_cost: float = typer.Option(1.0, help="Maximum cost C."),
    variance: Optional[float] = typer.Option(None, help="Variance of the amortized disparity (default (C/gamma)^2)."),
    have: Optional[int] = typer.Option(None, help="Examples you have: how much more is needed, or the smallest detectable bias."),
):
    """Minimum number of examples to claim a bias with Bernstein-bounded confidence (Ethayarajh 2020).

    Example: bias-suite sample-size --bias 0.05 --gamma 0.5
    """
    from .stats import min_detectable_bias, sample_size

    try:
        res = sample_size(bias, confidence=confidence, gamma=gamma, max_cost=max_cost, variance=variance)
    except BiasSuiteError as e:
        _fail(e)
    console.print(f"bound: n > {res.bound:.2f}")
    console.print(f"minimum n: {res.n}")
    if have is not None:
        if have >= res.n:
            console.print(f"you have {have} examples: enough to claim a bias of {abs(bias)} at confidence {confidence}")
        else:
            console.print(f"you have {have} examples: the data must be {res.n / have:.2f}x larger")
        smallest = min_detectable_bias(have, confidence=confidence, gamma=gamma, max_cost=max_cost, variance=variance)
        console.print(f"smallest bias detectable with {have} examples: {smallest:.4f}")


@models_app.command("build")
def models_build(
    name: str = typer.Argument("default-sentiment", help="Model to build (see `bias-suite models list`)."),
    force: bool = typer.Option(False, help="Rebuild even if cached."),
    out: Optional[Path] = typer.Option(None, help="Folder (default: the cache)."),
    epochs: Optional[float] = typer.Option(None, help="Training epochs (default: the recipe's)."),
    max_train: Optional[int] = typer.Option(None, help="Use at most this many training sentences."),
):
    """Build a default model offline and cache it.

    Example: bias-suite models build default-sentiment
    """
    from .models import build_model

    kw = {"force": force}
    if out is not None:
        kw["out_dir"] = out
    if epochs is not None:
        kw["epochs"] = epochs
    if max_train is not None:
        kw["max_train"] = max_train
    try:
        path = build_model(name, **kw)
    except BiasSuiteError as e:
        _fail(e)
    console.print(escape(f"{name}: {path}"))


@cache_app.command("info")
def cache_info(
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Prediction cache folder."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
):
    """One line per cached model: predictions stored, size, last use.

    Example: bias-suite cache info --json
    """
    import json as _json

    from rich.table import Table

    from .predict.cache import PredictionCache

    cache = PredictionCache(cache_dir)
    rows = cache.info()
    if as_json:
        typer.echo(_json.dumps({"root": str(cache.root), "stores": rows,
                                "corrupt_files": [str(p) for p in cache.corrupt_files()]}, indent=2))
        return
    console.print(escape(f"prediction cache: {cache.root}"))
    if not rows:
        console.print("empty")
        return
    t = Table("id", "model", "kind", "predictions", "size", "last used")
    for r in rows:
        t.add_row(*(escape(str(x)) for x in (r["id"], r.get("model") or r.get("fingerprint") or r.get("error"), r.get("kind"),
                                              r.get("predictions"), _size(r["bytes"]), r.get("last_used"))))
    console.print(t)
    total = sum(r["bytes"] for r in rows)
    console.print(f"{len(rows)} model(s), {sum(r.get('predictions') or 0 for r in rows)} predictions, {_size(total)}")
    bad = cache.corrupt_files()
    if bad:
        console.print(f"{len(bad)} unreadable file(s) moved aside (removed by `bias-suite cache clear`)")


@cache_app.command("clear")
def cache_clear(
    model: Optional[str] = typer.Argument(None, help="Only stores whose id starts with this, or whose model path/id contains it."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="Prediction cache folder."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
):
    """Delete cached predictions (all of them, or one model's).

    Example: bias-suite cache clear default-sentiment --yes
    """
    from .predict.cache import PredictionCache

    cache = PredictionCache(cache_dir)
    rows = [r for r in cache.info() if model is None or r["id"].startswith(model) or model in str(r.get("model") or "")]
    if not rows and not (model is None and cache.corrupt_files()):
        console.print(escape("nothing to clear" + (f" for {model!r}" if model else "")))
        return
    if not yes and not sys.stdin.isatty():
        _fail(BiasSuiteError(f"not deleting {len(rows)} cached model store(s) under {cache.root} without "
                             "confirmation: no terminal to ask on; pass --yes (-y) to delete"))
    if not yes and not typer.confirm(f"delete {len(rows)} cached model store(s) under {cache.root}?"):
        raise typer.Exit(1)
    removed = cache.clear(model)
    console.print(escape(f"removed {len(removed)} store(s) from {cache.root}"))


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


@models_app.command("list")
def models_list():
    """The default models, their cache folders and whether they are built.

    Example: bias-suite models list
    """
    from rich.table import Table

    from .models import list_models

    t = Table("name", "built", "held-out", "build time", "path", "description")
    for m in list_models():
        built = ("yes" if m.get("current", True) else "old recipe (rebuilt on next use)") if m["built"] else "no"
        scores = ", ".join(f"{k} {v:.3f}" for k, v in (m.get("metrics") or {}).items() if v is not None)
        secs = m.get("build_seconds")
        t.add_row(m["name"], built, scores, "" if secs is None else f"{secs:.0f} s", escape(m["path"]),
                  escape(m["description"]))
    console.print(t)


@models_app.command("path")
def models_path(name: str = typer.Argument("default-sentiment")):
    """Print the cache folder of a default model.

    Example: bias-suite models path default-sentiment
    """
    from .paths import model_dir

    console.print(escape(str(model_dir(name))), soft_wrap=True)


def main():  # console-script entry point
    try:
        app()
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
    except BrokenPipeError:
        _silence_stdout()
        sys.exit(141)


if __name__ == "__main__":
    main()
