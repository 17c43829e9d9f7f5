"""The end of ``run`` and ``check``: the threshold rules with their
violations (exit 3). The headline itself is the report layer's
(:mod:`bias_suite.report.runs`)."""
from __future__ import annotations

import typer
from rich.markup import escape

from ..report import theme
from .output import console, err_console


def gate_rules(suites, fail_if, fail_on_verdict) -> list:
    """Threshold rules of the suite files plus the command-line ones (checked before the run)."""
    from ..gating import cli_rules, rules_from_suites
    from ..families import load_suite
    from ..suites import find_suite

    loaded = [load_suite(find_suite(s)) for s in suites]
    return rules_from_suites(loaded) + cli_rules(fail_if, fail_on_verdict)  # (brackets: _fail escapes markup)


def gate(results, rules) -> None:
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


