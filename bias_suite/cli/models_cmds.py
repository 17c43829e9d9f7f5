"""``bias-suite models build|list|path`` (the offline default models) and
``bias-suite cache info|clear`` (the prediction cache)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape

from ..exceptions import BiasSuiteError
from .options import HELP
from .output import exit_with, console

models_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, context_settings=HELP, help="Build and list the offline default models.")
cache_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, context_settings=HELP, help="The prediction cache: what is stored, and clearing it.")


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
    from ..models import build_model

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
        exit_with(e)
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

    from ..predict.cache import PredictionCache

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
    from ..predict.cache import PredictionCache

    cache = PredictionCache(cache_dir)
    rows = [r for r in cache.info() if model is None or r["id"].startswith(model) or model in str(r.get("model") or "")]
    if not rows and not (model is None and cache.corrupt_files()):
        console.print(escape("nothing to clear" + (f" for {model!r}" if model else "")))
        return
    if not yes and not sys.stdin.isatty():
        exit_with(BiasSuiteError(f"not deleting {len(rows)} cached model store(s) under {cache.root} without "
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

    from ..models import list_models

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
    from ..paths import model_dir

    console.print(escape(str(model_dir(name))), soft_wrap=True)
