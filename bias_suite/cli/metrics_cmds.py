"""``bias-suite metrics`` (the metric registry) and ``bias-suite sample-size``
(examples needed to claim a bias)."""
from __future__ import annotations

from typing import Optional

import typer
from rich.markup import escape

from ..exceptions import BiasSuiteError
from .output import _fail, console

commands = typer.Typer()


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
    from rich.table import Table

    from ..metrics import catalog_frame
    from ..metrics import explain as explain_

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
