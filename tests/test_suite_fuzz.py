"""Property: any suite file, however malformed, is loaded, validated and
expanded, or refused with the project's own error (a BiasSuiteError), never
another exception. ``BIAS_SUITE_FUZZ_EXAMPLES`` raises the example count."""
import os
import string

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bias_suite.exceptions import BiasSuiteError
from bias_suite.families import expand_suite, load_suite, validate_suite

N = int(os.environ.get("BIAS_SUITE_FUZZ_EXAMPLES", "200"))
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
    for _ in range(draw(st.integers(1, 4))):
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


def _check(tmp_path, suite_text: str, ident_text: str):
    (tmp_path / "g.yaml").write_text(ident_text, encoding="utf-8")
    p = tmp_path / "s.yaml"
    p.write_text(suite_text, encoding="utf-8")
    try:
        s = load_suite(p)
        n = validate_suite(s, max_examples=2000)
        assert len(expand_suite(s, max_examples=2000)) == n
    except BiasSuiteError:
        pass


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


@FUZZ
@given(doc=mutated(BASE))
def test_almost_valid_classification_suites(tmp_path, doc):
    _check(tmp_path, _dump(doc), _dump(IDENT))


@FUZZ
@given(doc=mutated(NER_BASE), ident=mutated({**IDENT, "groups": {"a": {"identity_np": ["woman"]}, "b": {"identity_np": ["man", "New Zealander"]}}}))
def test_almost_valid_ner_suites_and_identity_files(tmp_path, doc, ident):
    _check(tmp_path, _dump(doc), _dump(ident))


@FUZZ
@given(ident=mutated(IDENT))
def test_almost_valid_identity_files(tmp_path, ident):
    _check(tmp_path, _dump(BASE), _dump(ident))


WORD = st.sampled_from(["the", "a", "New Zealand", "United Nations", "it's", "U.S.", "hour", "8-year-old", "x", ".", ",",
                        "!", "(", ")", "'", "-", "co-op", "Ümit", "O'Brien", "e-mail", "…", "\u00a0", "😀", "n't"])
PIECE = st.one_of(WORD, WORD.map(lambda w: " " + w), st.sampled_from(
    ["{identity_np}", "{a:identity_np}", "{Identity_np}", "{thing}", "{thing1}", "{a:thing}", "{Thing}", "{place}",
     "{first_name}", "{identity_adj}", " ", "{", "}", "{a:Identity_np}"]))
TEXT = st.lists(PIECE, min_size=1, max_size=8).map("".join)
TERM = st.lists(WORD, min_size=1, max_size=3).map(" ".join)


@st.composite
def near_valid(draw, task):
    """Suites with the right structure and random template texts, terms and lexicon values."""
    lex = {"thing": draw(st.lists(TERM, min_size=1, max_size=3)), "place": draw(st.lists(TERM, min_size=1, max_size=2))}
    tpls = []
    for i in range(draw(st.integers(1, 3))):
        t = {"id": draw(st.sampled_from([f"t{i}", "t0", "a-b", "x.y"])), "text": draw(TEXT)}
        if task == "classification":
            t["label"] = draw(st.sampled_from(["positive", "negative", "other"]))
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


@FUZZ
@given(pair=st.one_of(near_valid("classification"), near_valid("sequence_labelling")))
def test_near_valid_suites_render_or_fail_cleanly(tmp_path, pair):
    doc, ident = pair
    _check(tmp_path, _dump(doc), _dump(ident))
