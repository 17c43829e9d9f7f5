"""The command line's assembly and its NAME=VALUE option parsers: the
commands (each in its own module of bias_suite.cli) appear in `bias-suite
--help` in their fixed order, and a malformed option is one error line, exit 2."""
from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from bias_suite.cli import app
from bias_suite.cli.options import parse_class_map, name_lists
from bias_suite.exceptions import BiasSuiteError


def test_top_level_commands_in_help_order():
    names = list(typer.main.get_command(app).commands)
    assert names == ["expand", "validate", "perturb", "run", "report", "plot", "check", "evaluate", "compare", "metrics", "sample-size",
                     "models", "cache", "checklist"]


def test_name_value_parsers():
    assert name_lists(["religion = muslim, christian,", "gender=f"]) == {"religion": ["muslim", "christian"],
                                                                         "gender": ["f"]}
    assert parse_class_map([" pos = positive", "neg=negative=bad"]) == {"pos": "positive", "neg": "negative=bad"}
    assert name_lists(None) is None and parse_class_map([]) is None
    with pytest.raises(BiasSuiteError, match=r"--group expects GROUP=TERM,TERM, got 'Emma'"):
        name_lists(["Emma"], "--group", "GROUP=TERM,TERM")


def test_malformed_class_map_is_one_error_line():
    r = CliRunner().invoke(app, ["run", "sentiment_generic", "--class-map", "positive"])
    assert r.exit_code == 2, r.output
    assert "--class-map expects SUITE_CLASS=MODEL_CLASS, got 'positive'" in r.output
    assert "Traceback" not in r.output
