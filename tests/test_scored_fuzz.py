"""Property tests of the scored-example readers: any file or table is either
accepted (and then evaluates) or refused with the project's own error naming
where; never another exception.

Rows start from a valid example and get one to three mutations: a field set
to an arbitrary JSON value (huge integers, NaN, strings for numbers, lists,
objects, nesting), a field dropped, or a line replaced by arbitrary bytes.
The example count is bounded so the suite stays fast; raise it with
``BIAS_SUITE_FUZZ_EXAMPLES`` for a longer search.
"""
from __future__ import annotations

import json
import os
from datetime import timedelta

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bias_suite.exceptions import BiasSuiteError
from bias_suite.metrics import compute as evaluate
from bias_suite.families import as_scored, read_scored

N = int(os.environ.get("BIAS_SUITE_FUZZ_EXAMPLES", "200"))
# the deadline is loose (the machine may be shared); it catches a reader that goes quadratic
SETTINGS = settings(max_examples=N, deadline=timedelta(seconds=10), derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-10**400, max_value=10**400) | st.floats()
    | st.text(max_size=8) | st.sampled_from(["0.5", "[/x]", "negative", "positive", "", "female"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


def classification_rows(n_templates=3):
    out = []
    for t in range(n_templates):
        for g, p in (("female", 0.7), ("male", 0.4)):
            out.append({"id": f"{t}{g}", "template": f"t{t}", "attribute": "gender", "group": g, "term": g,
                        "text": f"text {t} {g}", "label": "positive" if t % 2 else "negative",
                        "probs": {"negative": round(1 - p, 6), "positive": p}})
    return out


def sequence_rows(n_templates=3):
    out = []
    for t in range(n_templates):
        for g, name in (("female", "Anna"), ("male", "Tom")):
            out.append({"id": f"{t}{g}", "template": f"t{t}", "attribute": "gender", "group": g, "term": name,
                        "tokens": [name, "lives", "in", "Paris"], "tags": ["U-PER", "O", "O", "U-LOC"],
                        "pred_tags": ["U-PER", "O", "O", "O"], "term_span": [0, 1],
                        "tag_probs": [{"O": 0.2, "U-PER": 0.7, "U-LOC": 0.1}] * 4})
    return out


CLS_FIELDS = ["id", "template", "attribute", "group", "term", "text", "label", "probs", "pred"]
SEQ_FIELDS = ["id", "template", "attribute", "group", "term", "tokens", "tags", "pred_tags", "term_span", "tag_probs"]


@st.composite
def mutated(draw, rows_fn, fields):
    rows = rows_fn()
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(rows) - 1))
        kind = draw(st.sampled_from(["set", "set", "drop", "inner"]))
        field = draw(st.sampled_from(fields))
        if kind == "set":
            rows[i][field] = draw(json_values)
        elif kind == "drop":
            rows[i].pop(field, None)
        else:  # a value inside a nested field
            target = rows[i].get("probs") if "probs" in rows[i] else rows[i].get("tag_probs")
            if isinstance(target, dict) and target:
                target[draw(st.sampled_from(sorted(map(str, target))))] = draw(json_values)
            elif isinstance(target, list) and target:
                target = list(target)
                target[0] = draw(json_values)
                rows[i]["tag_probs"] = target
    return rows


def _one_line(e):
    text = str(e)
    assert "\n" not in text and len(text) < 600, text  # one readable line, values cut
    return text


def _accepted_or_ours(fn):
    try:
        return fn()
    except BiasSuiteError as e:
        _one_line(e)
        return None


def _same_as_row_by_row(path):
    """read_scored (typed columns first) and the row-by-row reader agree: the
    same data, or the same error."""
    from bias_suite.families import check_scored, read_table

    def slow():
        df = read_table(path)
        return None if "tokens" in df.columns and "probs" not in df.columns else check_scored(df, source=str(path))

    outcomes = []
    for fn in (lambda: read_scored(path), slow):
        try:
            outcomes.append(fn())
        except BiasSuiteError as e:
            outcomes.append(_one_line(e))
    fast, ref = outcomes
    if ref is None:  # sequence labelling: read row by row only
        return None if isinstance(fast, str) else fast
    if isinstance(fast, str) or isinstance(ref, str):
        assert fast == ref
        return None
    assert fast.classes == ref.classes
    np.testing.assert_array_equal(fast.probs, ref.probs)
    np.testing.assert_array_equal(fast.y, ref.y)
    np.testing.assert_array_equal(fast.yhat, ref.yhat)
    pd.testing.assert_frame_equal(fast.frame, ref.frame)
    return fast


def _check_file(tmp_path, rows, raw_line):
    lines = [json.dumps(r).encode() for r in rows]
    if raw_line is not None:
        lines[len(lines) // 2] = raw_line
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    data = _same_as_row_by_row(path)
    if data is not None:
        _accepted_or_ours(lambda: evaluate(data, metrics=["FNED", "CFGap", "AvgGF"]))
    return data


@SETTINGS
@given(rows=mutated(classification_rows, CLS_FIELDS), raw=st.none() | st.binary(max_size=20))
def test_classification_jsonl_is_read_or_refused(tmp_path, rows, raw):
    _check_file(tmp_path, rows, raw)
    # the same rows as Python objects
    _accepted_or_ours(lambda: as_scored(rows))


@SETTINGS
@given(rows=mutated(sequence_rows, SEQ_FIELDS), raw=st.none() | st.binary(max_size=20))
def test_sequence_jsonl_is_read_or_refused(tmp_path, rows, raw):
    _check_file(tmp_path, rows, raw)


def _check_parquet(tmp_path, rows):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "fuzz.parquet"
    try:  # rows whose columns mix types cannot be written as Parquet at all: nothing to read
        pq.write_table(pa.Table.from_pylist(rows), path)
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        return
    data = _same_as_row_by_row(path)
    if data is not None:
        _accepted_or_ours(lambda: evaluate(data, metrics=["FNED", "CFGap"]))


@SETTINGS
@given(rows=mutated(classification_rows, CLS_FIELDS))
def test_parquet_is_read_or_refused(tmp_path, rows):
    _check_parquet(tmp_path, rows)


@SETTINGS
@given(rows=mutated(sequence_rows, SEQ_FIELDS))
def test_sequence_parquet_is_read_or_refused(tmp_path, rows):
    _check_parquet(tmp_path, rows)


@SETTINGS
@given(rows=mutated(classification_rows, CLS_FIELDS) | mutated(sequence_rows, SEQ_FIELDS))
def test_dataframes_are_read_or_refused(rows):
    # pandas infers column types here (int64, float64 with NaN for a missing cell, object)
    try:
        df = pd.DataFrame(rows)
    except (OverflowError, TypeError, ValueError):  # pandas itself cannot hold them (a 400-digit integer)
        return
    data = _accepted_or_ours(lambda: as_scored(df))
    if data is not None:
        assert len(data) == len(rows)


@pytest.mark.parametrize("mutate, field, msg", [
    (lambda r: r[0]["probs"].update(positive="0.3"), "probs", "not a number: str '0.3'"),
    (lambda r: r[0]["probs"].update(positive=True, negative=0.0), "probs", "not a number: bool True"),
    (lambda r: r[1].update(label=["positive"]), "label", "expected a class name (a string) or null, got list"),
    (lambda r: r[1].update(pred={"a": 1}), "pred", "expected a class name (a string) or null, got dict"),
    (lambda r: r[2].update(term=3), "term", "expected a non-empty string, got int 3"),
    (lambda r: r[2].update(text=["a"]), "text", "expected a string or null, got list"),
    (lambda r: r[3].update(template=10**400), "template", "got int 1000000000"),
    (lambda r: r[3]["probs"].update(positive=10**400), "probs", "finite numbers"),
])
def test_wrong_types_are_named(tmp_path, mutate, field, msg):
    from bias_suite.exceptions import ScoredFormatError

    rows = classification_rows()
    mutate(rows)
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ScoredFormatError) as e:
        read_scored(path)
    assert e.value.field == field and msg in str(e.value), str(e.value)
    assert len(str(e.value)) < 300   # a 400-digit number is cut, not printed whole
    with pytest.raises(ScoredFormatError):
        as_scored(rows)


def test_json_constants_and_pandas_nulls(tmp_path):
    from bias_suite.exceptions import ScoredFormatError

    rows = classification_rows()
    path = tmp_path / "nan.jsonl"
    lines = [json.dumps(r) for r in rows]
    lines[2] = lines[2].replace('"text": "text 1 female"', '"text": NaN')
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ScoredFormatError, match=r"nan.jsonl:3: invalid JSON \(NaN is not a JSON value"):
        read_scored(path)
    # in a DataFrame, pandas' own nulls are nulls
    df = pd.DataFrame(rows)
    df["label"] = df["label"].astype("string")
    df.loc[0, "label"] = pd.NA
    data = as_scored(df)
    assert data.y[0] == -1 and data.frame["label"].iat[0] is None and data.y[1] == 0


def test_encoding_and_nesting_errors_name_the_line(tmp_path):
    from bias_suite.exceptions import ScoredFormatError

    rows = [json.dumps(r).encode() for r in classification_rows()]
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b"\n".join(rows[:2] + ['{"id": "caf\u00e9"}'.encode("latin-1")] + rows[3:]) + b"\n")
    with pytest.raises(ScoredFormatError, match=r"latin1.jsonl:3: not UTF-8"):
        read_scored(bad)
    deep = tmp_path / "deep.jsonl"
    deep.write_bytes(b"\n".join(rows[:1] + [b'{"id": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"]) + b"\n")
    with pytest.raises(ScoredFormatError, match=r"deep.jsonl:2: invalid JSON"):
        read_scored(deep)


def test_parquet_probs_as_a_list_is_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bias_suite.exceptions import ScoredFormatError

    rows = classification_rows()
    for r in rows:
        r["probs"] = list(r["probs"].values())
    path = tmp_path / "list.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    with pytest.raises(ScoredFormatError, match=r"field 'probs': expected an object class -> probability"):
        read_scored(path)


def test_valid_rows_still_read_the_same(tmp_path):
    rows = classification_rows()
    path = tmp_path / "ok.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = read_scored(path)
    assert data.classes == ("negative", "positive") and len(data) == 6
    assert data.frame["label"].tolist() == ["negative", "negative", "positive", "positive", "negative", "negative"]
    assert isinstance(data.frame, pd.DataFrame) and data.probs[0, 1] == pytest.approx(0.7)


def test_valid_files_take_the_columnar_path(tmp_path):
    from bias_suite.families.classification import columnar
    from bias_suite.families import PROB_TOLERANCE, write_scored

    assert columnar.PROB_TOLERANCE == PROB_TOLERANCE
    rows = classification_rows()
    rows[1]["pred"] = "positive"
    rows[2]["label"] = None
    ref = as_scored(rows)
    files = write_scored(ref, tmp_path)
    for kind, path in files.items():
        assert columnar.read_columns(path, kind) is not None, kind
        data = read_scored(path)
        np.testing.assert_array_equal(data.probs, ref.probs)
        assert data.yhat.tolist() == ref.yhat.tolist() and data.y.tolist() == ref.y.tolist()
        assert data.yhat[1] == 1 and data.y[2] == -1
        pd.testing.assert_frame_equal(data.frame, ref.frame)
    # a blank line sends the file to the row-by-row reader, which reads it the same
    text = files["jsonl"].read_text().splitlines()
    gap = tmp_path / "gap.jsonl"
    gap.write_text("\n".join(text[:3] + [""] + text[3:]) + "\n")
    assert columnar.read_columns(gap, "jsonl") is None
    np.testing.assert_array_equal(read_scored(gap).probs, ref.probs)


def test_an_object_over_two_lines_is_refused_with_its_line(tmp_path):
    from bias_suite.exceptions import ScoredFormatError
    from bias_suite.families.classification import columnar

    lines = [json.dumps(r) for r in classification_rows()]
    lines[1] = lines[1].replace(', "term"', ',\n"term"')  # valid JSON, but not one object per line
    path = tmp_path / "split.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert columnar.read_columns(path, "jsonl") is None
    with pytest.raises(ScoredFormatError, match=r"split.jsonl:2: invalid JSON"):
        read_scored(path)
