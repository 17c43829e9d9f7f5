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


def test_flags_and_python_read_one_options_model():
    """Every flag of run, evaluate, compare and checklist import that names
    an option of bias_suite.options has its default and help from the
    field; evaluate()'s keywords default to the same values, and the
    private _evaluate has none of its own."""
    import inspect

    from bias_suite.cli import checklist_cmds, compare_cmd, evaluate_cmd, run_cmd
    from bias_suite.evaluation import _evaluate, evaluate
    from bias_suite.options import DEFAULT_B, INHERIT, EvaluationOptions, RunOptions

    flag_names = {"attribute": "attributes", "group": "groups", "threshold": "thresholds"}
    for cmd in (run_cmd.run, evaluate_cmd.evaluate, checklist_cmds.import_cmd):
        seen = 0
        for name, p in inspect.signature(cmd).parameters.items():
            field = flag_names.get(name, name)
            if field not in RunOptions.names() or (cmd is checklist_cmds.import_cmd and name in ("group", "attribute")):
                continue  # (checklist import's --group and --attribute name a suite's terms)
            seen += 1
            info = p.default
            owner = EvaluationOptions if cmd is evaluate_cmd.evaluate else RunOptions
            f = owner.field_of(field)
            show = f.metadata["cli"].get("show", lambda v: v)
            assert info.default == show(f.default), (cmd.__name__, name)
            assert info.help == f.metadata["cli"].get("help", f.metadata["help"]), (cmd.__name__, name)
        assert seen >= 5, cmd.__name__
    assert inspect.signature(run_cmd.run).parameters["bootstrap"].default.default == DEFAULT_B
    # compare: not given, the runs' value, else the default (the help says which)
    b = inspect.signature(compare_cmd.compare).parameters["bootstrap"].default
    assert b.default is None and f"else {DEFAULT_B}" in b.help
    defaults = EvaluationOptions()
    params = inspect.signature(evaluate).parameters
    for name in EvaluationOptions.names():
        assert params[name].default == getattr(defaults, name), name
    assert not [n for n, p in inspect.signature(_evaluate).parameters.items()
                if n in EvaluationOptions.names()]
    from bias_suite.comparison import compare

    cp = inspect.signature(compare).parameters
    assert all(cp[n].default is INHERIT for n in ("bootstrap", "seed", "confidence", "multiplicity", "max_tuples"))


def test_options_objects():
    from bias_suite.options import EvaluationOptions, PredictionOptions, RunOptions

    run = RunOptions(bootstrap=50, device="cpu")
    assert run.evaluation() == EvaluationOptions(bootstrap=50, significance=True, bernstein=True)
    assert RunOptions.of(EvaluationOptions(seed=4)).seed == 4
    assert RunOptions.of(PredictionOptions(batch_size=8), seed=2).batch_size == 8
    assert set(RunOptions.names()) > set(EvaluationOptions.names()) | set(PredictionOptions.names())
    with pytest.raises(BiasSuiteError, match="not an evaluation option; did you mean 'max_tuples'"):
        EvaluationOptions().replace(max_tuple=3)
    assert "max_tuples = 100" in EvaluationOptions.__doc__  # the docstring lists every option
