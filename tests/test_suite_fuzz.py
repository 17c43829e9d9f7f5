"""Property: any suite file, however malformed, is loaded, validated and
expanded, or refused with the project's own error (a BiasSuiteError), never
another exception. ``BIAS_SUITE_FUZZ_EXAMPLES`` raises the example count.

The generators of nearly valid files must also produce files that load: each
such test asserts that a good share of its files is accepted (and expanded to
as many examples as validate counts), so a loader that refused everything, or
a generator that no longer makes valid files, fails."""
import os
import string
import warnings

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bias_suite.exceptions import BiasSuiteError, SuiteWarning
from bias_suite.families import expand_suite, load_suite, validate_suite

N = int(os.environ.get("BIAS_SUITE_FUZZ_EXAMPLES", "200"))
# The least share of generated files that must load. Mutated files are mostly broken on purpose (about 2-7% load
# at N = 200: the base and harmless mutations); near-valid ones about 15%; clean random suites all of them.
MIN_ACCEPTED = {"classification": 0.005, "ner": 0.005, "identity": 0.005, "near_valid": 0.05, "valid": 0.9}
FUZZ = settings(max_examples=N, deadline=2000, suppress_health_check=list(HealthCheck), derandomize=True)

IDENT = {"attribute": "gender", "sources": ["test"],
         "groups": {"female": {"identity_np": ["woman", "girl"], "identity_adj": ["female"]},
                    "male": {"identity_np": ["man"], "identity_adj": ["male"]}}}
BASE = {
    "suite": "fuzz", "classes": ["negative", "positive"], "identity_terms": ["g.yaml"],
    "lexicons": {"thing": ["cake", "apple"], "place": ["home"]},
    "templates": [
        {"id": "t1", "text": "The {identity_np} ate {a:thing}.", "label": "positive"},
        {"id": "t2", "text": "A {identity_adj} person at {place}", "label": "negative"},
    ],
}
NER_BASE = {
    "suite": "fuzz", "task": "sequence_labelling", "identity_terms": ["g.yaml"],
    "lexicons": {"thing": ["cake"]}, "slot_tags": {"thing": "U-MISC"},
    "templates": [{"id": "t1", "text": "The {identity_np} met the United Nations.", "tags": {"United Nations": "ORG"}}],
}

# text that looks like template syntax
SLOTTY = st.lists(st.sampled_from(list("{}[]!:/#a_ .x1'") + ["identity_np", "identity_adj", "thing", "place",
                                                           "first_name", "{identity_np}", "a:", "Identity_np"]),
                  max_size=12).map("".join)
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**6), st.floats(allow_nan=True), SLOTTY,
                   st.text(max_size=8), st.sampled_from(["positive", "negative", "[/x]", "female", "U-LOC", "B-X", "O",
                                                         "g.yaml", "", "task", "sequence_labelling", "ORG"]))
VALUE = st.recursive(SCALAR, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                    st.dictionaries(st.one_of(SLOTTY, SCALAR.filter(lambda x: x is not None)),
                                                                    kids, max_size=3)), max_leaves=12)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


@st.composite
def mutated(draw, base):
    """``base`` with a few fields replaced, deleted or added."""
    import copy

    doc = copy.deepcopy(base)
    for _ in range(draw(st.one_of(st.just(0), st.integers(1, 4)))):  # none: the valid base, which must load
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        op = draw(st.sampled_from(["set", "set", "slotty", "delete", "add"]))
        if op == "set":
            parent[path[-1]] = draw(VALUE)
        elif op == "slotty":
            parent[path[-1]] = draw(SLOTTY)
        elif op == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(SLOTTY)] = draw(VALUE)
        else:
            parent.append(draw(VALUE))
    return doc


def _check(tmp_path, suite_text: str, ident_text: str) -> bool:
    """True when the suite was accepted (and expanded to the examples validate
    counted), False when it was refused with a BiasSuiteError."""
    (tmp_path / "g.yaml").write_text(ident_text, encoding="utf-8")
    p = tmp_path / "s.yaml"
    p.write_text(suite_text, encoding="utf-8")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SuiteWarning)  # a fuzzed class name near 'positive' is only a warning
            s = load_suite(p)
        n = validate_suite(s, max_examples=2000)
        assert len(expand_suite(s, max_examples=2000)) == n
    except BiasSuiteError:
        return False
    return True


def _accepted_share(tmp_path, strategy, check) -> float:
    """Run ``check(tmp_path, drawn)`` over the strategy's examples; the share accepted."""
    seen = []

    @settings(FUZZ, deadline=None)  # the first file of a family imports its libraries (spaCy for NER)
    @given(drawn=strategy)
    def inner(drawn):
        seen.append(check(tmp_path, drawn))

    inner()
    assert seen
    return sum(seen) / len(seen)


def _dump(doc) -> str:
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)


@FUZZ
@given(text=st.text(max_size=300))
def test_random_text(tmp_path, text):
    _check(tmp_path, text, _dump(IDENT))


@FUZZ
@given(text=st.lists(st.sampled_from(list("&*ab[]{}:,- \n'\"!|>%@`?#") + ["suite:", "templates:", "&a", "*a", "!!str", "<<:"]),
                    max_size=80).map("".join))
def test_random_yaml_syntax(tmp_path, text):
    _check(tmp_path, text, _dump(IDENT))


def test_almost_valid_classification_suites(tmp_path):
    share = _accepted_share(tmp_path, mutated(BASE), lambda t, doc: _check(t, _dump(doc), _dump(IDENT)))
    assert share >= MIN_ACCEPTED["classification"], share


def test_almost_valid_ner_suites_and_identity_files(tmp_path):
    ident = mutated({**IDENT, "groups": {"a": {"identity_np": ["woman"]}, "b": {"identity_np": ["man", "New Zealander"]}}})
    share = _accepted_share(tmp_path, st.tuples(mutated(NER_BASE), ident),
                            lambda t, pair: _check(t, _dump(pair[0]), _dump(pair[1])))
    assert share >= MIN_ACCEPTED["ner"], share


def test_almost_valid_identity_files(tmp_path):
    share = _accepted_share(tmp_path, mutated(IDENT), lambda t, ident: _check(t, _dump(BASE), _dump(ident)))
    assert share >= MIN_ACCEPTED["identity"], share


WORD = st.sampled_from(["the", "a", "New Zealand", "United Nations", "it's", "U.S.", "hour", "8-year-old", "x", ".", ",",
                        "!", "(", ")", "'", "-", "co-op", "Ümit", "O'Brien", "e-mail", "…", "\u00a0", "😀", "n't"])
PIECE = st.one_of(WORD, WORD.map(lambda w: " " + w), st.sampled_from(
    ["{identity_np}", "{a:identity_np}", "{Identity_np}", "{thing}", "{thing1}", "{a:thing}", "{Thing}", "{place}",
     "{first_name}", "{identity_adj}", " ", "{", "}", "{a:Identity_np}"]))
TEXT = st.lists(PIECE, min_size=1, max_size=8).map("".join)
# a template text with exactly one identity slot among words and lexicon slots: mostly valid
PLAIN = st.one_of(WORD, st.sampled_from(["{thing}", "{thing1}", "{a:thing}", "{Thing}", "{place}", "{first_name}"]))
IDENTITY_SLOT = st.sampled_from(["{identity_np}", "{a:identity_np}", "{Identity_np}", "{identity_adj}",
                                 "{a:Identity_np}"])
VALID_TEXT = st.tuples(st.lists(PLAIN, max_size=4), IDENTITY_SLOT, st.lists(PLAIN, max_size=4)).map(
    lambda t: " ".join(t[0] + [t[1]] + t[2]))
TERM = st.lists(WORD, min_size=1, max_size=3).map(" ".join)


@st.composite
def near_valid(draw, task):
    """Suites with the right structure and random template texts, terms and lexicon values."""
    lex = {"thing": draw(st.lists(TERM, min_size=1, max_size=3)), "place": draw(st.lists(TERM, min_size=1, max_size=2))}
    tpls = []
    for i in range(draw(st.integers(1, 3))):
        t = {"id": draw(st.sampled_from([f"t{i}", f"t{i}", "t0", "a-b", "x.y"])),
             "text": draw(st.one_of(VALID_TEXT, VALID_TEXT, TEXT))}
        if task == "classification":
            t["label"] = draw(st.sampled_from(["positive", "negative", "positive", "negative", "other"]))
        elif draw(st.booleans()):
            t["tags"] = {draw(TERM): draw(st.sampled_from(["ORG", "LOC", "O", "x y"]))}
        tpls.append(t)
    doc = {"suite": "fuzz", "task": task, "identity_terms": ["g.yaml"], "lexicons": lex, "templates": tpls}
    if task == "classification":
        doc["classes"] = ["negative", "positive"]
    elif draw(st.booleans()):
        doc["slot_tags"] = {draw(st.sampled_from(["thing", "place", "identity_np"])): draw(st.sampled_from(["U-MISC", "O", "B-X", "U-"]))}
    groups = {g: {"identity_np": draw(st.lists(TERM, min_size=1, max_size=3)), "identity_adj": [f"{g}ish"]}
              for g in ("female", "male")}
    return doc, {**IDENT, "groups": groups}


def test_near_valid_suites_render_or_fail_cleanly(tmp_path):
    share = _accepted_share(tmp_path, st.one_of(near_valid("classification"), near_valid("sequence_labelling")),
                            lambda t, pair: _check(t, _dump(pair[0]), _dump(pair[1])))
    assert share >= MIN_ACCEPTED["near_valid"], share


CLEAN = st.sampled_from(["the", "a", "new", "old", "report", "city", "hour", "8-year-old", "co-op", "O'Brien", "Ümit",
                         "e-mail", "U.S.", "it's", "honest", "European"])
CLEAN_TERM = st.lists(CLEAN, min_size=1, max_size=2).map(" ".join)
CLEAN_TEXT = st.tuples(st.lists(st.one_of(CLEAN, st.sampled_from(["{thing}", "{a:thing}", "{Thing}", "{place}"])),
                                max_size=4),
                       IDENTITY_SLOT, st.lists(CLEAN, max_size=3)).map(lambda t: " ".join(t[0] + [t[1]] + t[2]))


@st.composite
def valid_suites(draw, task):
    """Suites that should load: random but clean words, terms told apart per group."""
    lex = {k: draw(st.lists(CLEAN_TERM, min_size=1, max_size=3, unique=True)) for k in ("thing", "place")}
    tpls = [{"id": f"t{i}", "text": draw(CLEAN_TEXT)} for i in range(draw(st.integers(1, 3)))]
    doc = {"suite": "fuzz", "task": task, "identity_terms": ["g.yaml"], "lexicons": lex, "templates": tpls}
    if task == "classification":
        doc["classes"] = ["negative", "positive"]
        for t in tpls:
            t["label"] = draw(st.sampled_from(["positive", "negative"]))
    groups = {g: {"identity_np": [f"{t} {g}" for t in draw(st.lists(CLEAN_TERM, min_size=1, max_size=3, unique=True))],
                  "identity_adj": [f"{g}ish"]} for g in ("female", "male")}
    return doc, {**IDENT, "groups": groups}


def test_clean_random_suites_load(tmp_path):
    share = _accepted_share(tmp_path, st.one_of(valid_suites("classification"), valid_suites("sequence_labelling")),
                            lambda t, pair: _check(t, _dump(pair[0]), _dump(pair[1])))
    assert share >= MIN_ACCEPTED["valid"], share
