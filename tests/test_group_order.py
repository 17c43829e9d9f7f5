"""Group order overrides: a partial order puts the named groups first."""
import numpy as np
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


def _draw_by_draw(lists, max_tuples, rng):
    """The sampling protocol of docs/metrics.md, one draw at a time."""
    sizes = [len(x) for x in lists]
    seen, picked = set(), []
    while len(picked) < max_tuples:
        key = tuple(int(rng.integers(s)) for s in sizes)
        if key not in seen:
            seen.add(key)
            picked.append(key)
    return np.stack([lists[k][np.array([p[k] for p in picked])] for k in range(len(sizes))], axis=1)


@pytest.mark.parametrize("sizes,max_tuples", [
    ([10] * 8, 100), ([3, 3], 8), ([2, 2, 2], 7), ([1, 5, 1, 4], 19), ([1, 1, 2], 1),
    ([2 ** 33, 3], 50), ([7], 6), ([4, 4, 4], 63), ([255, 256, 65536, 2 ** 32 - 1, 2 ** 32], 40),
])
def test_batched_sampler_makes_the_draws_of_the_protocol(sizes, max_tuples):
    from bias_suite.suites.views import sample_tuples

    offsets = np.cumsum([0] + sizes)
    lists = [np.arange(a, a + s, dtype=np.int64) if s < 10 ** 6 else _Lazy(a, s) for a, s in zip(offsets, sizes)]
    for seed in range(5):
        r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
        want = _draw_by_draw(lists, max_tuples, r1)
        got = sample_tuples(lists, max_tuples, r2)
        assert np.array_equal(got, want)
        assert r1.integers(2 ** 40) == r2.integers(2 ** 40)  # the generator is left where the protocol leaves it


class _Lazy:
    """``np.arange(start, start + n)`` without the memory."""

    def __init__(self, start, n):
        self.start, self.n = int(start), int(n)

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        return self.start + np.asarray(idx, dtype=np.int64)


def test_counterfactual_view_tuples_follow_the_protocol():
    from bias_suite.suites.views import counterfactual_view

    rng = np.random.default_rng(3)
    rows = []
    for a, groups in (("a1", ["x", "y", "z"]), ("a2", ["u", "v"])):
        for t in range(12):
            for g in groups:
                for i in range(int(rng.integers(0, 6))):
                    rows.append({"attribute": a, "template": f"t{t}", "group": g, "id": f"{a}{t}{g}{i}"})
    rows = [rows[i] for i in rng.permutation(len(rows))]
    table = pd.DataFrame(rows)
    cfs = counterfactual_view(table, max_tuples=10, seed=7)
    ref = np.random.default_rng(7)
    sampled = 0
    for a, cf in cfs.items():
        for j, t in enumerate(cf.templates):
            lists = cf.members[t]
            mine = cf.tuples[cf.tuple_template == j]
            if t in cf.sampled:
                sampled += 1
                assert np.array_equal(mine, _draw_by_draw(lists, 10, ref))
            else:
                assert len(mine) == np.prod([len(x) for x in lists]) <= 10
    assert sampled >= 5


SUITE_WITH_ORDER = """\
suite: partial_order
task: classification
classes: [negative, positive]
identity_terms: [religion.yaml]
group_order:
  religion: {order}
templates:
  - {{id: t1, text: "The {{identity_adj}} neighbour was kind.", label: positive}}
  - {{id: t2, text: "The {{identity_adj}} neighbour was rude.", label: negative}}
"""


def test_a_suite_takes_a_partial_order(tmp_path):
    """As the README says and --group-order does: a suite's group_order may
    name some groups; they come first, the others follow in the identity-term
    file's order."""
    import bias_suite as bs

    path = tmp_path / "partial.yaml"
    path.write_text(SUITE_WITH_ORDER.format(order="[muslim, jewish]"))
    suite = bs.load_suite(path)
    groups = suite.identity["religion"].groups
    assert groups == ["muslim", "jewish", "christian", "hindu", "buddhist", "sikh", "atheist"]
    ex = bs.expand(suite)
    assert list(pd.unique(ex["group"])) == groups  # the examples follow the order (the metrics' order)
    # the same order as the one --group-order gives the scored examples
    assert group_order(ex, "religion", {"religion": ["muslim", "jewish"]}) == groups


@pytest.mark.parametrize("order, msg", [("[muslim, sikhs]", r"does not have: \['sikhs'\].*did you mean 'sikh'"),
                                        ("[muslim, muslim]", r"names \['muslim'\] more than once")])
def test_a_suite_order_naming_an_unknown_or_repeated_group_is_an_error(tmp_path, order, msg):
    import bias_suite as bs

    path = tmp_path / "bad.yaml"
    path.write_text(SUITE_WITH_ORDER.format(order=order))
    with pytest.raises(bs.exceptions.SuiteError, match=msg) as e:
        bs.load_suite(path)
    assert e.value.field == "group_order.religion" and e.value.line == 6
