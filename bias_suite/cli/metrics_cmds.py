"""``bias-suite metrics`` (the metric registry) and ``bias-suite sample-size``
(examples needed to claim a bias)."""
from __future__ import annotations

from typing import Optional

import typer
from rich.markup import escape

from ..exceptions import BiasSuiteError
from .output import exit_with, console

commands = typer.Typer()


#: Terminal width from which the registry is one table (narrower: two tables).
WIDE = 160


def _table(title, cells, columns, **kw):
    from rich.table import Table

    t = Table(title=title, **({"pad_edge": False, "collapse_padding": True, **kw} if kw else {}))
    for c in columns:  # only phi and source may wrap (at spaces)
        t.add_column("gen." if c == "generalized" and "phi" in columns and kw else c, overflow="fold",
                     no_wrap=c not in ("phi", "source"), min_width=18 if c == "phi" and kw else None)
    for row in cells.values():
        t.add_row(*(escape(str(row[c])) for c in columns))
    return t


@commands.command("metrics", short_help="List the registered metrics.")
def metrics_cmd(
    markdown: bool = typer.Option(False, help="Print as a Markdown table."),
    explain: Optional[str] = typer.Option(None, "--explain", metavar="NAME",
                                          help="One metric in plain words: meaning, direction, no-bias value, threshold."),
):
    """List the registered metrics: how each is built (generalized metric, phi,
    d, N, beta), its no-bias value b and threshold tau, and its source.
    Definitions: docs/metrics.md; intervals and tests: docs/statistics.md;
    verdicts: docs/verdicts.md (in the repository).

    Example: bias-suite metrics --explain FNED
    """
    from ..metrics import catalog_frame
    from ..metrics import explain as explain_

    if explain:
        try:
            console.print(escape(explain_(explain)), highlight=False)
        except BiasSuiteError as e:
            exit_with(e)
        return
    df = catalog_frame()
    if markdown:
        console.print(df.to_markdown(index=False) if hasattr(df, "to_markdown") else df.to_string(index=False))
        return
    title = f"{len(df)} registered metrics (bias-suite metrics --explain NAME for one in plain words)"
    cells = {r.name: dict(name=r.name, view=r.view, generalized=r.generalized, phi=r.phi, d=r.d, N=r.N, beta=r.beta,
                          b=r.b, tau=f"{r.tau:g}", topic=r.topic, source=r.source.split(",")[0])
             for r in df.itertuples(index=False)}
    if console.width >= WIDE:
        console.print(_table(title, cells, ("name", "view", "generalized", "phi", "d", "N", "beta", "b", "tau",
                                            "topic", "source")))
    else:  # two narrower tables: what each metric judges, then how it is built
        from rich import box

        console.print(_table(title, cells, ("name", "view", "topic", "b", "tau"), box=box.SIMPLE_HEAD))
        console.print(_table("how each is built (docs/metrics.md)", cells, ("name", "generalized", "d", "N", "beta"),
                             box=box.SIMPLE_HEAD))
        full = {n: dict(row, source=df.set_index("name").at[n, "source"]) for n, row in cells.items()}
        console.print(_table("what each scores (phi) and its source", full, ("name", "phi", "source"),
                             box=box.SIMPLE_HEAD))
    console.print("definitions: docs/metrics.md · intervals and tests: docs/statistics.md · "
                  "verdicts: docs/verdicts.md", highlight=False)


@commands.command("sample-size", short_help="Examples needed to claim a bias (Bernstein bound).")
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
    from ..stats import min_detectable_bias, sample_size

    try:
        res = sample_size(bias, confidence=confidence, gamma=gamma, max_cost=max_cost, variance=variance)
    except BiasSuiteError as e:
        exit_with(e)
    console.print(f"bound: n > {res.bound:.2f}")
    console.print(f"minimum n: {res.n}")
    if have is not None:
        if have >= res.n:
            console.print(f"you have {have} examples: enough to claim a bias of {abs(bias)} at confidence {confidence}")
        else:
            console.print(f"you have {have} examples: the data must be {res.n / have:.2f}x larger")
        smallest = min_detectable_bias(have, confidence=confidence, gamma=gamma, max_cost=max_cost, variance=variance)
        console.print(f"smallest bias detectable with {have} examples: {smallest:.4f}")
