"""Hostile and malformed suites: determinism, size and YAML budgets, one-line
errors (never a traceback, never rich markup read from user text)."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bias_suite.cli import app
from bias_suite.exceptions import SuiteError
from bias_suite.families import expand_suite, expand_suites, load_suite, validate_suite
from bias_suite.suites import check_size, example_counts, example_limit, load_identity_terms
from bias_suite.suites.loader import MAX_ALIAS_NODES, MAX_YAML_DEPTH
from bias_suite.suites.loader import load_suite as load_suite_file

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[1]

IDENT = """\
attribute: gender
sources: [test]
groups:
  female:
    identity_np: [woman, girl, mother]
  male:
    identity_np: [man, boy]
"""


def write(folder, name, text):
    p = Path(folder) / name
    p.write_text(textwrap.dedent(text))
    return p


def suite(folder, templates, extra="", name="s.yaml", identity="[g.yaml]"):
    write(folder, "g.yaml", IDENT)
    return write(folder, name, f"suite: hostile\nclasses: [negative, positive]\nidentity_terms: {identity}\n{extra}templates:\n{templates}")


ONE = '  - id: t1\n    text: "The {identity_np} left."\n    label: positive\n'


# ------------------------------------------------------------------ determinism
@pytest.mark.slow  # expands in subprocesses
def test_expansion_bytes_do_not_depend_on_hash_seed(tmp_path):
    lex = "".join(f"  {k}: [{', '.join(f'{k}{i}' for i in range(10))}]\n" for k in ("adj", "noun", "verb"))
    p = suite(tmp_path, '  - id: t1\n    text: "The {identity_np} {verb} the {adj} {noun}."\n    label: positive\n',
              extra="lexicons:\n" + lex)
    outs = []
    for seed in ("1", "3"):
        out = tmp_path / f"ex{seed}.jsonl"
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
        code = "import sys; from bias_suite.cli import app; app(sys.argv[1:])"
        r = subprocess.run([sys.executable, "-c", code, "expand", str(p), "--out", str(out), "--sample", "0"],
                           env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[0].count(b"\n") == 1000 * 5


def test_fill_order_is_the_product_in_slot_order(tmp_path):
    p = suite(tmp_path, '  - id: t1\n    text: "{b} {identity_np} {a}"\n    label: positive\n',
              extra="lexicons:\n  a: [x, y]\n  b: [p, q, r]\n")
    ex = expand_suite(p)
    first = ex.drop_duplicates("template")
    # slots in order of appearance (b, then a), the last varying fastest
    assert list(first["text"]) == ["P woman x", "P woman y", "Q woman x", "Q woman y", "R woman x", "R woman y"]
    assert list(first["template"]) == [f"hostile/t1#{i}" for i in range(6)]


# ------------------------------------------------------------------ size
def test_example_counts_from_sizes_and_the_limit(tmp_path):
    p = suite(tmp_path, ONE + '  - id: t2\n    text: "{a} {identity_np} {a1} {b}"\n    label: negative\n',
              extra="lexicons:\n  a: [x, y, z]\n  b: [p, q]\n")
    s = load_suite(p)
    assert [n for _, n in example_counts(s)] == [5, 3 * 3 * 2 * 5]
    assert check_size([s]) == 95 == len(expand_suite(s))
    with pytest.raises(SuiteError, match=r"expands to 95 examples, more than the limit of 94.*hostile/t2: 90, hostile/t1: 5") as e:
        expand_suites([s], max_examples=94)
    assert e.value.line == 11 and e.value.field == "templates[1]"
    with example_limit(10), pytest.raises(SuiteError, match="limit of 10"):
        expand_suite(s)
    assert len(expand_suite(s, max_examples=95)) == 95


def test_huge_suites_are_refused_before_expanding(tmp_path):
    lex = "".join(f"  l{c}: [{', '.join(f'{c}{i}' for i in range(100))}]\n" for c in "abcd")
    p = suite(tmp_path, '  - id: t1\n    text: "The {identity_np} {la} {lb} {lc} {ld}."\n    label: positive\n', extra="lexicons:\n" + lex)
    with pytest.raises(SuiteError, match="expands to 500,000,000 examples"):
        validate_suite(p)
    with pytest.raises(SuiteError, match="500,000,000"):
        expand_suite(p)
    # CheckList's built-in lexicons count too
    q = suite(tmp_path, '  - id: t1\n    text: "{first_name} {last_name} from {city} is a {identity_np}."\n    label: positive\n', name="q.yaml")
    with pytest.raises(SuiteError, match="hostile/t1: 10,000,000"):
        expand_suite(q)
    res = runner.invoke(app, ["validate", str(q)])
    assert res.exit_code == 2 and "10,000,000" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["expand", str(q), "--max-examples", "5"])
    assert res.exit_code == 2 and "limit of 5" in res.output
    # run refuses before it looks at the model
    res = runner.invoke(app, ["run", str(q), "--model", str(tmp_path / "no-such-model"), "--out", str(tmp_path / "out")])
    assert res.exit_code == 2 and "10,000,000" in res.output and not (tmp_path / "out").exists()
    ok = suite(tmp_path, ONE, name="ok.yaml")
    res = runner.invoke(app, ["run", str(ok), "--max-examples", "4", "--model", str(tmp_path / "no-such-model"),
                              "--out", str(tmp_path / "out")])
    assert res.exit_code == 2 and "expands to 5 examples, more than the limit of 4" in res.output


# ------------------------------------------------------------------ YAML budgets
def test_alias_bomb_is_refused_with_its_line(tmp_path):
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{cur}: &{cur} [{','.join(['*' + prev] * 9)}]")
    p = write(tmp_path, "bomb.yaml", "\n".join(lines) + "\n")
    with pytest.raises(SuiteError, match=f"more than {MAX_ALIAS_NODES}") as e:
        load_suite(p)
    assert e.value.line == 5 and e.value.file.endswith("bomb.yaml")
    # a few aliases within the budget are fine (and their lines are those of the alias)
    q = suite(tmp_path, '  - id: t1\n    text: "The {identity_np} left."\n    label: &pos positive\n'
                        '  - id: t2\n    text: "The {identity_np} came."\n    label: *pos\n')
    assert [t.label for t in load_suite(q).templates] == ["positive", "positive"]


def test_deep_and_recursive_yaml(tmp_path):
    p = write(tmp_path, "deep.yaml", "suite: x\ntemplates: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(SuiteError, match=f"more than {MAX_YAML_DEPTH} levels") as e:
        load_suite(p)
    assert e.value.line == 2
    p = write(tmp_path, "deep2.yaml", "suite: x\nx: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n")
    with pytest.raises(SuiteError, match="levels"):
        load_suite(p)
    p = write(tmp_path, "rec.yaml", "suite: x\nx: &a [1, *a]\n")
    with pytest.raises(SuiteError, match=r"alias \*a refers to a collection that contains it") as e:
        load_suite(p)
    assert e.value.line == 2
    # depth through aliases counts
    nest = "[" * 40 + "]" * 40
    p = write(tmp_path, "deep3.yaml", f"a: &a {nest}\nb: &b [*a]\nc: [[[[[[[[[[[[[[[[[[[[[[[[[*b]]]]]]]]]]]]]]]]]]]]]]]]]\n")
    with pytest.raises(SuiteError, match="aliases expanded") as e:
        load_suite(p)
    assert e.value.line == 3


def test_unreadable_identity_files(tmp_path):
    (tmp_path / "dir.yaml").mkdir()
    p = suite(tmp_path, ONE, identity="[dir.yaml]")
    with pytest.raises(SuiteError, match="'dir.yaml' is a folder") as e:
        load_suite(p)
    assert e.value.line == 3
    with pytest.raises(SuiteError, match="is a folder"):
        load_identity_terms(tmp_path / "dir.yaml")


# ------------------------------------------------------------------ validate == expansion's checks
@pytest.mark.parametrize("templates, extra, identity, field, msg", [
    ('  - id: t1\n    text: "The {identity_np!r} left."\n    label: positive\n', "", "[g.yaml]", "templates[0].text", "conversions"),
    ('  - id: t1\n    text: "The {{x}} {identity_np}."\n    label: positive\n', "", "[g.yaml]", "templates[0].text", "literal braces"),
    ('  - id: t1\n    text: "The {identity_np}}."\n    label: positive\n', "", "[g.yaml]", "templates[0].text", "Single"),
    (ONE, "", "[{file: g.yaml, groups: [female, female, male]}]", "identity_terms[0].groups", "listed twice"),
    ('  - id: a/b\n    text: "The {identity_np}."\n    label: positive\n', "", "[g.yaml]", "templates[0].id", "'/'"),
    ('  - id: t1\n    text: "The {identity_np:}."\n    label: positive\n', "", "[g.yaml]", "templates[0].text", "malformed slot"),
    ('  - id: t1\n    text: "The \\ud800 {identity_np}."\n    label: positive\n', "", "[g.yaml]", "templates[0].text", "surrogate"),
])
def test_validate_refuses_what_expansion_cannot_use(tmp_path, templates, extra, identity, field, msg):
    p = suite(tmp_path, templates, extra, identity=identity)
    with pytest.raises(SuiteError, match=msg) as e:
        validate_suite(p)
    assert e.value.field == field and e.value.line is not None
    res = runner.invoke(app, ["validate", str(p)])
    assert res.exit_code == 2 and res.output.count("\n") == 1 and f"field '{field}'" in res.output


NER_IDENT = "attribute: place\nsources: [test]\ngroups:\n  a:\n    country: [Japan, New Zealand]\n  b:\n    country: [Peru]\n"


@pytest.mark.parametrize("templates, extra, field, line, msg", [
    ('  - id: a\n    text: "{country} and {country}."\n', "", "templates[0].text", 6, "exactly once"),
    ('  - id: a\n    text: "Trip to {country}."\n    tags: {Paris: LOC}\n', "", "templates[0].tags", 7, "does not occur"),
    ('  - id: a\n    text: "Trip to {country}."\n    tags: [O, O]\n', "", "templates[0].tags", 7, "mapping"),
    ('  - id: a\n    text: "Trip to {country}n."\n', "", "templates[0].text", 6, "whole tokens"),
    ('  - id: a\n    text: "Trip to {country}."\n', "slot_tags:\n  country: B-LOC\n", "slot_tags.country", 5, "U-TYPE"),
    ('  - id: a\n    text: "Trip to {country}."\n', "slot_tags:\n  city: U-LOC\n", "slot_tags.city", 5, "unknown slot"),
])
def test_validate_runs_the_sequence_labelling_checks(tmp_path, templates, extra, field, line, msg):
    write(tmp_path, "place.yaml", NER_IDENT)
    p = write(tmp_path, "ner.yaml", f"suite: ner\ntask: sequence_labelling\nidentity_terms: [place.yaml]\n{extra}templates:\n{templates}")
    load_suite_file(p)  # the suite language itself is well formed (the family's checks come next)
    with pytest.raises(SuiteError, match=msg) as e:
        validate_suite(p)
    assert (e.value.field, e.value.line) == (field, line)
    res = runner.invoke(app, ["validate", str(p)])
    assert res.exit_code == 2 and res.output.count("\n") == 1 and "ner.yaml" in res.output


def test_validate_reports_the_count_of_a_good_suite(tmp_path):
    p = suite(tmp_path, ONE)
    res = runner.invoke(app, ["validate", str(p)])
    assert res.exit_code == 0 and "1 templates, 5 examples" in res.output
    assert validate_suite(p) == 5


# ------------------------------------------------------------------ markup in user text
@pytest.mark.parametrize("classes, label", [("[negative, positive]", "'[/x]'"), ("[negative, '[/x]']", "'[bold]x'")])
def test_markup_in_user_text_is_printed_literally(tmp_path, classes, label):
    write(tmp_path, "g.yaml", IDENT)
    p = write(tmp_path, "m.yaml", f"suite: m\nclasses: {classes}\nidentity_terms: [g.yaml]\ntemplates:\n"
                                  f"  - id: t1\n    text: The {{identity_np}}\n    label: {label}\n")
    res = runner.invoke(app, ["validate", str(p)])
    assert res.exit_code == 2 and "Traceback" not in res.output and "MarkupError" not in res.output
    out = res.output.replace("\n", "")
    assert f"label {label} is not among the classes" in out and "[/x]" in out


def test_markup_in_classes_and_groups_expands_and_prints(tmp_path):
    write(tmp_path, "g.yaml", IDENT)
    p = write(tmp_path, "m.yaml", "suite: m\nclasses: [negative, '[/x]']\nidentity_terms: [g.yaml]\ntemplates:\n"
                                  "  - id: t1\n    text: The {identity_np} [b]\n    label: '[/x]'\n")
    res = runner.invoke(app, ["expand", str(p), "--sample", "3"])
    assert res.exit_code == 0, res.output
    assert "[/x]" in res.output and "[b]" in res.output


def test_terminal_tables_escape_user_text():
    import pandas as pd
    from rich.console import Console

    from bias_suite.report.terminal import invariance_table

    res = pd.DataFrame({"family": ["invariance"], "group": ["[/x]"], "value": [0.5], "n": [3]})
    con = Console(record=True, width=120)
    con.print(invariance_table("[bold]attr", res))
    text = con.export_text()
    assert "[/x]" in text and "[bold]attr" in text
