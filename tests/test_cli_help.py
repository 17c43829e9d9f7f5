"""`--help` of every command reads well in an 80-column terminal: lines fit,
option names are never cut, and the command lists are not truncated."""
from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from bias_suite.cli import app


def _commands(group, path=()):
    yield path, group
    if hasattr(group, "commands"):
        for name, cmd in group.commands.items():
            yield from _commands(cmd, path + (name,))


COMMANDS = list(_commands(typer.main.get_command(app)))


def test_every_command_is_covered():
    names = {" ".join(p) for p, _ in COMMANDS}
    assert {"", "run", "evaluate", "report", "models build", "cache clear", "checklist export"} <= names


@pytest.mark.parametrize("path,cmd", COMMANDS, ids=[" ".join(p) or "bias-suite" for p, _ in COMMANDS])
def test_help_at_80_columns(path, cmd):
    r = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "80", "TERMINAL_WIDTH": "80"})
    assert r.exit_code == 0, r.output
    out = r.output
    assert "…" not in out
    assert max(len(line) for line in out.splitlines()) <= 80, out
    for p in cmd.params:
        if getattr(p, "param_type_name", "") == "option":
            for name in p.opts + p.secondary_opts:
                assert name in out, f"{name} missing or cut in:\n{out}"
    if hasattr(cmd, "commands") and not path[:1] == ("checklist",):
        # the command list shows every summary whole
        assert "..." not in out.split("Commands:", 1)[-1], out


def test_run_help_keeps_long_option_names_whole():
    out = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "80"}).output
    assert "--trust-remote-code / --no-trust-remote-code" in out
    assert "--detail" in out and "--fail-on-verdict" in out


def test_explain_says_which_side_is_worse():
    from bias_suite.metrics.catalog import explain

    assert "worse:     higher than the no-bias value" in explain("FNR-Ratio")
    assert "worse:     lower than the no-bias value" in explain("BPSN")
    assert "for its first group" in explain("TPR-Diff")
    res = CliRunner().invoke(app, ["metrics", "--explain", "SubgroupAUC"])
    assert res.exit_code == 0 and "worse:     lower" in res.output
