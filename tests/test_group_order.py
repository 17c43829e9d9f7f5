"""Group order overrides: a partial order puts the named groups first."""
import pandas as pd
import pytest

from bias_suite.exceptions import BiasSuiteError
from bias_suite.suites.views import group_order

TABLE = pd.DataFrame({"attribute": ["religion"] * 4 + ["gender"] * 2,
                      "group": ["christian", "muslim", "jewish", "hindu", "female", "male"]})


def test_partial_order_puts_the_named_groups_first():
    assert group_order(TABLE, "religion", {"religion": ["muslim", "christian"]}) == \
        ["muslim", "christian", "jewish", "hindu"]
    assert group_order(TABLE, "religion", {"religion": ["hindu", "jewish", "muslim", "christian"]}) == \
        ["hindu", "jewish", "muslim", "christian"]
    assert group_order(TABLE, "religion", {"gender": ["male"]}) == ["christian", "muslim", "jewish", "hindu"]
    assert group_order(TABLE, "religion") == ["christian", "muslim", "jewish", "hindu"]


@pytest.mark.parametrize("order, msg", [(["muslim", "sikh"], r"does not have: \['sikh'\]"),
                                        (["muslim", "muslim"], r"names \['muslim'\] more than once")])
def test_bad_order_is_one_clear_error(order, msg):
    with pytest.raises(BiasSuiteError, match=msg):
        group_order(TABLE, "religion", {"religion": order})


def test_evaluate_cli_takes_a_partial_order(tmp_path):
    """The README's example on a seven-group attribute: muslim − christian is
    the first pair of the two-group-style pair list."""
    import json

    from typer.testing import CliRunner

    from bias_suite.cli import app

    rows = []
    for t in range(4):
        for g, p in [("christian", 0.9), ("muslim", 0.6), ("jewish", 0.7)]:
            rows.append({"id": f"{t}{g}", "template": f"t{t}", "attribute": "religion", "group": g, "term": g,
                         "text": f"{g} {t}", "label": "pos", "probs": {"neg": 1 - p, "pos": p}})
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = CliRunner().invoke(app, ["evaluate", str(path), "--out", str(tmp_path / "o"), "--metrics", "CFGap",
                                 "--group-order", "religion=muslim,christian", "--bootstrap", "0"])
    assert r.exit_code == 0, r.output
    res = pd.read_json(tmp_path / "o" / "results.jsonl", lines=True)
    pairs = res.query("metric == 'CFGap' and `class` == 'pos'")["group"].dropna().tolist()
    assert pairs == ["muslim|christian", "muslim|jewish", "christian|jewish"]
    got = res.query("metric == 'CFGap' and `class` == 'pos' and group == 'muslim|christian'")["value"].item()
    assert got == pytest.approx(0.3)
