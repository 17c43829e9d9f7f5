"""Fast path for reading classification scored examples: pyarrow reads the
file into typed columns (``pyarrow.json`` with an explicit schema for JSON
Lines, the file's own schema for Parquet) and every check runs on whole
columns.

The fast path only ever says yes: :func:`read_columns` returns the columns
when the file certainly passes, and None on any doubt (a type it does not
handle, a null where none may be, an unknown class, a duplicate id, a row
that is not on a line of its own...). The caller then reads the file row by
row with the slow reader, which accepts the same files and names the file,
row and field of the first problem.
"""
from __future__ import annotations

import json
import mmap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

IDENTITY = ("id", "template", "attribute", "group", "term")
OPTIONAL = ("text", "label", "pred")
PROB_TOLERANCE = 1e-3  # the same as scored.PROB_TOLERANCE (asserted in the tests)


def read_columns(path: Path, kind: str):
    """``(columns, P, classes, y, given)`` for a file that passes every check,
    else None.

    ``columns`` maps ``id, template, attribute, group, term`` (and ``text``
    when the file has it) and ``label`` to object arrays (str, or None for a
    null label or text); ``P`` is the ``n x C`` float64 probability array in
    the class order of the first row; ``y`` the gold class index (-1 for
    null) and ``given`` the index of the given ``pred`` (-1 where absent).
    """
    try:
        if kind == "jsonl":
            got = _read_jsonl(path)
            if got is None:
                return None
            table, classes, text_named = got
        else:
            import pyarrow.parquet as pq

            table = pq.read_table(path)
            classes, text_named = None, "text" in table.column_names
        return _check(table, classes, text_named)
    except Exception:  # noqa: BLE001 - any doubt goes to the row-by-row reader, which names the problem
        return None


def _read_jsonl(path: Path):
    import pyarrow.json as pj

    with open(path, "rb") as fh:
        first = fh.readline()
    obj = json.loads(first)
    probs = obj.get("probs") if isinstance(obj, dict) else None
    if not isinstance(probs, dict) or not probs or not all(isinstance(k, str) and k for k in probs):
        return None
    classes = tuple(probs)
    fields = [(c, pa.string()) for c in IDENTITY + OPTIONAL]
    fields.append(("probs", pa.struct([(c, pa.float64()) for c in classes])))
    opts = pj.ParseOptions(explicit_schema=pa.schema(fields), unexpected_field_behavior="infer",
                           newlines_in_values=False)
    table = pj.read_json(path, parse_options=opts)
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        if mm.find(b"\n\n") >= 0 or mm.find(b"\n\r\n") >= 0:  # blank lines: the slow reader skips them
            return None
        lines = _count_lines(mm)
        # the column is there when some row names it (all-null text stays a column)
        text_named = mm.find(b'"text"') >= 0
    if table.num_rows != lines:  # an object over several lines, or two on one: the slow reader decides
        return None
    return table, classes, text_named


def _count_lines(mm) -> int:
    n, step = 0, 1 << 24
    for start in range(0, len(mm), step):
        n += mm[start:start + step].count(b"\n")
    if len(mm) and mm[len(mm) - 1:] != b"\n":
        n += 1
    return n


def _strings(col: pa.ChunkedArray, *, nullable: bool, nonempty: bool, shared: bool):
    """Object array of the column, or None when it is not all strings (or
    nulls when ``nullable``; non-empty when ``nonempty``)."""
    t = col.type
    if pa.types.is_dictionary(t) and (pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type)):
        col = col.cast(t.value_type)
    elif pa.types.is_null(t):
        return np.full(len(col), None, dtype=object) if nullable else None
    elif not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        return None
    if col.null_count and not nullable:
        return None
    if nonempty and len(col) and pc.min(pc.utf8_length(col)).as_py() == 0:
        return None
    if not shared:
        return col.to_numpy(zero_copy_only=False)
    # few distinct values: one Python string each, shared by the rows
    enc = pc.dictionary_encode(col.combine_chunks())
    values = np.array(enc.dictionary.to_pylist() + [None], dtype=object)
    idx = enc.indices.fill_null(len(enc.dictionary)).to_numpy(zero_copy_only=False)
    return values[idx]


def _codes(col: pa.ChunkedArray | None, classes: tuple, n: int):
    """(object array, class index with -1 for null) of a label/pred column;
    None when a value is not a class name."""
    if col is None:
        return np.full(n, None, dtype=object), np.full(n, -1, dtype=np.int64)
    values = _strings(col, nullable=True, nonempty=False, shared=True)
    if values is None:
        return None
    if pa.types.is_null(col.type):
        return values, np.full(n, -1, dtype=np.int64)
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    idx = pc.index_in(col, value_set=pa.array(classes, type=col.type))
    if idx.null_count != col.null_count:  # a value that is no class
        return None
    return values, idx.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def _check(table: pa.Table, classes, text_named: bool):
    n = table.num_rows
    names = table.column_names
    if n == 0 or "probs" not in names or any(c not in names for c in IDENTITY):
        return None
    probs = table.column("probs")
    t = probs.type
    if not pa.types.is_struct(t) or t.num_fields == 0 or probs.null_count:
        return None
    fields = [t.field(k) for k in range(t.num_fields)]
    got = tuple(f.name for f in fields)
    if classes is None:
        classes = got
    if got != classes or len(set(classes)) != len(classes) or not all(classes):
        return None
    if not all(pa.types.is_floating(f.type) or pa.types.is_integer(f.type) for f in fields):
        return None
    probs = probs.combine_chunks()
    P = np.empty((n, len(classes)), dtype=np.float64)
    for k in range(len(classes)):
        child = probs.field(k)
        if child.null_count:
            return None
        P[:, k] = child.to_numpy(zero_copy_only=False)
    ok = np.isfinite(P).all() and (P >= -1e-9).all() and (P <= 1 + 1e-9).all()
    if not ok or (np.abs(P.sum(axis=1) - 1.0) > PROB_TOLERANCE).any():
        return None

    columns = {}
    for c in IDENTITY:
        col = table.column(c)
        if c == "id" and pc.count_distinct(col).as_py() != n:
            return None
        values = _strings(col, nullable=False, nonempty=True, shared=c != "id")
        if values is None:
            return None
        columns[c] = values
    if "text" in names and (text_named or table.column("text").null_count < n):
        values = _strings(table.column("text"), nullable=True, nonempty=False, shared=False)
        if values is None:
            return None
        columns["text"] = values
    coded = _codes(table.column("label") if "label" in names else None, classes, n)
    if coded is None:
        return None
    columns["label"], y = coded
    coded = _codes(table.column("pred") if "pred" in names else None, classes, n)
    if coded is None:
        return None
    given = coded[1]
    return columns, P, classes, y, given
