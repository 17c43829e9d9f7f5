"""Option handling shared by the commands: the options of the options model
as flags (:func:`option`), the plain help layout and the parsers of repeated
NAME=a,b options."""
from __future__ import annotations

from typing import List, Optional

import typer.core

from ..exceptions import BiasSuiteError
from ..options import RunOptions


def option(name: str, *, default=..., help: str | None = None, owner=RunOptions, **typer_args):
    """The ``typer.Option`` of option ``name`` of the options model
    (:mod:`bias_suite.options`): its flags, default, help and metavar from
    the field (``owner``'s; :class:`RunOptions` holds every one), so that a
    command's flag cannot drift from the Python option. ``default``: a
    command that takes the default from elsewhere (``compare``: None, the
    runs' value); ``help``: that command's own words; further typer
    arguments (``min``, ``rich_help_panel``) as they are."""
    f = owner.field_of(name)
    cli = f.metadata["cli"]
    flags = cli.get("flags", ())  # none: typer's, from the parameter (named as the option): --max-tuples, --x/--no-x
    if default is ...:
        default = cli["show"](f.default) if "show" in cli else f.default
    extra = {"metavar": cli["metavar"]} if "metavar" in cli else {}
    extra.update(typer_args)
    return typer.Option(default, *flags, help=help if help is not None else cli.get("help", f.metadata["help"]),
                        **extra)

# Plain (click) help: option names are never cut and descriptions wrap to the
# terminal's width; -h works as well as --help.
HELP = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Command(typer.core.TyperCommand):
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


def comma_list(text: str) -> list:
    """'a, b,,c' -> ['a', 'b', 'c']"""
    return [x.strip() for x in text.split(",") if x.strip()]


def _name_values(specs: Optional[List[str]], option: str, form: str, parse=str.strip) -> Optional[dict]:
    """Repeated NAME=VALUE options -> {name: parse(value)} (None when none given)."""
    if not specs:
        return None
    out = {}
    for s in specs:
        if "=" not in s:
            raise BiasSuiteError(f"{option} expects {form}, got {s!r}")
        name, value = s.split("=", 1)
        out[name.strip()] = parse(value)
    return out


def name_lists(specs: Optional[List[str]], option: str = "--group-order", form: str = "ATTRIBUTE=g1,g2,...") -> Optional[dict]:
    """Repeated NAME=a,b,... options (--group-order, checklist import --group) -> {name: [a, b, ...]}."""
    return _name_values(specs, option, form, comma_list)


def parse_thresholds(specs: Optional[List[str]]) -> Optional[dict]:
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


def parse_class_map(specs: Optional[List[str]]) -> Optional[dict]:
    """--class-map SUITE_CLASS=MODEL_CLASS -> {suite class: model class}."""
    return _name_values(specs, "--class-map", "SUITE_CLASS=MODEL_CLASS")


def group_selection(specs: Optional[List[str]]) -> Optional[dict]:
    """--group ATTRIBUTE=g1,g2 (repeatable) -> {attribute: [groups]}; an
    attribute given twice is an error (None when none given)."""
    if not specs:
        return None
    seen = [s.split("=", 1)[0].strip() for s in specs if "=" in s]
    twice = sorted({a for a in seen if seen.count(a) > 1})
    if twice:
        raise BiasSuiteError(f"--group names attribute(s) {twice} twice; give each attribute's groups in one --group")
    return name_lists(specs, "--group", "ATTRIBUTE=GROUP,GROUP,...")


def terms_option(text: str):
    """``--resample-terms``: auto, yes or no (one clear error otherwise)."""
    from ..stats.bootstrap.terms import resample_terms_option

    try:
        return resample_terms_option(text)
    except BiasSuiteError as e:
        raise typer.BadParameter(str(e), param_hint="--resample-terms") from None
