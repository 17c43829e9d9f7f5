"""The end of ``run``, ``evaluate`` and ``check``: the one-screen results
headline, and the threshold rules with their violations (exit 3)."""
from __future__ import annotations

import typer
from rich.markup import escape

from ..report import theme
from .output import console, err_console


def _print_results(parts, *, title: str, files: list, intervals=None, quiet: bool = False, detail: bool = False,
                   used: int = 0, attributes=None, lines: int = 60) -> None:
    """The one-screen headline of ``parts`` [(results, scored, label)]; the
    per-group tables first with ``--detail``; one line with ``--quiet``."""
    from ..report.headline import HeadlineInput, combine_results, print_headline

    if quiet:
        console.print(escape(title) + " → " + escape(", ".join(files)), highlight=False, soft_wrap=True)
        return
    if detail:
        from ..report.terminal import print_summary

        for results, scored, _ in parts:
            print_summary(results, scored, console=console, attributes=attributes)
    combined = combine_results([(label, results) for results, _, label in parts])
    inp = HeadlineInput(combined, scored=[(label, s) for _, s, label in parts], intervals=intervals, files=files,
                        detail_hint=not detail, title=title)
    print_headline(inp, console=console, max_lines=lines - used)


def _gate_rules(suites, fail_if, fail_on_verdict) -> list:
    """Threshold rules of the suite files plus the command-line ones (checked before the run)."""
    from ..gating import cli_rules, rules_from_suites
    from ..families import load_suite
    from ..suites import find_suite

    loaded = [load_suite(find_suite(s)) for s in suites]
    return rules_from_suites(loaded) + cli_rules(fail_if, fail_on_verdict)  # (brackets: _fail escapes markup)


def _gate(results, rules) -> None:
    """Print the violations of ``rules`` and exit 3, or say that all passed."""
    from rich.table import Table

    from ..gating import EXIT_VIOLATIONS, check_thresholds

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


print_results = _print_results  # the one-screen headline, for the commands of other modules
