"""Examples tables: bias data sets that already exist as rows, read as examples.

A table gives the same examples as a suite expansion
(:data:`~bias_suite.suites.expansion.EXAMPLE_COLUMNS`), so the rest of a run
(predictions, metrics, statistics, files, report) is the same:

>>> from bias_suite.suites.tables import read_examples
>>> table = read_examples("eec.csv", text="Sentence", attribute_columns=["Gender", "Race"],
...                       template=["Template", "Emotion word"], term="Person", label="Emotion",
...                       label_map={"anger": "negative", "joy": "positive"})  # doctest: +SKIP
>>> table.frame.head()  # doctest: +SKIP

Formats (by extension, or ``format=``): ``csv``, ``tsv``, ``jsonl``,
``parquet``, ``datasets`` (a folder written by ``datasets.save_to_disk``,
read with pyarrow from its Arrow files) and ``conll`` (NER, see
:func:`read_conll`). A JSONL or Parquet table with ``tokens`` and ``tags``
columns holds NER examples (:func:`~bias_suite.suites.conll.read_tagged_table`). Files are read in chunks; only the mapped columns are
kept.

Columns (:class:`Columns`): ``text``; the groups, either one ``group``
column (with the attribute per row in ``attribute_name``, else the group
column's name as the attribute) or several ``attribute_columns`` (each column
is an attribute, its values the groups; an empty cell leaves the row out of
that attribute); ``template`` (one or more columns, joined: the
counterfactual unit; without it each row is its own template and only the
group view applies); ``term``, ``label``, ``id``. Defaults read what
``bias-suite expand`` writes.
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ..exceptions import ExamplesFormatError, did_you_mean, option
from .conll import has_tagged_columns, read_conll, read_tagged_table
from .expansion import EXAMPLE_COLUMNS
from .table_formats import (CHUNK_ROWS, TABLE_FORMATS, Columns, ExamplesTable, read_chunks, first_true, as_strings,
                            detect_format, is_examples_table, parse_mapping)

__all__ = ["Columns", "ExamplesTable", "read_examples", "from_frame", "read_conll", "detect_format",
           "is_examples_table", "check_labels", "parse_mapping", "TABLE_FORMATS"]


def read_examples(path, *, format: str | None = None, columns: Columns | None = None, label_map: dict | None = None,
                  encoding: str = "utf-8", chunk_rows: int = CHUNK_ROWS, progress: bool = False,
                  side=None, **column_kw) -> ExamplesTable:
    """Read an examples table as examples.

    Parameters
    ----------
    path : a CSV/TSV/JSONL/Parquet file, a ``datasets`` folder or a CoNLL file.
    format : force the format (default: from the extension).
    columns : a :class:`Columns`, or give its fields as keywords
        (``text="Sentence", attribute_columns=["Gender", "Race"], ...``).
    label_map : file value -> class (``{"anger": "negative"}``); values not
        in the map are kept as they are.
    encoding : text encoding of CSV/TSV/JSONL/CoNLL files.
    side : CoNLL only: the side file marking the identity spans (:func:`read_conll`).

    Raises :class:`~bias_suite.exceptions.ExamplesFormatError` naming the file,
    the row (line for text files, 1-based row for Parquet/datasets) and the column.
    """
    path = Path(path)
    cols = columns if columns is not None else Columns(**column_kw)
    if not path.exists():
        raise ExamplesFormatError("no such file or folder", file=path)
    fmt = detect_format(path, format)
    label_map = dict(label_map or {})
    if fmt == "conll":
        return read_conll(path, side=side, columns=cols, encoding=encoding)
    if has_tagged_columns(path, fmt, encoding):  # NER examples: tokens and tags (expand's and perturb's output)
        return read_tagged_table(path, fmt, encoding=encoding)
    resolved = {}

    def usecols(names):
        resolved.update(cols.resolved(names, path, 1))
        r = resolved
        wanted = [r["text"], r["group"], r["attribute_name"], r["term"], r["label"], r["id"], *r["attribute_columns"],
                  *r["template"]]
        return list(dict.fromkeys(c for c in wanted if c))

    from tqdm.auto import tqdm

    frames, rownums, read_rows, skipped = [], [], 0, 0
    stem = path.stem if path.is_file() else path.name
    it = read_chunks(path, fmt, usecols, encoding, chunk_rows)
    next(it)  # column names: resolves the mapping (missing columns fail here)
    with tqdm(desc="Reading", unit="row", disable=not progress, leave=False) as bar:
        for start, df in it:
            n = len(df)
            rows = np.asarray(start) if isinstance(start, np.ndarray) else np.arange(start, start + n)
            f, r, sk = _to_examples(df, rows, resolved, path, stem, label_map)
            frames.append(f)
            rownums.append(r)
            read_rows += n
            skipped += sk
            bar.update(n)
    if not frames or read_rows == 0:
        raise ExamplesFormatError("no rows", file=path)
    frame = pd.concat(frames, ignore_index=True)
    rows = np.concatenate(rownums)
    if frame.empty:
        raise ExamplesFormatError(f"no examples: every cell of the attribute columns {resolved['attribute_columns']} is empty",
                                  file=path)
    _check_consistency(frame, rows, resolved, path)
    return ExamplesTable(frame, str(path), fmt, rows, resolved["label"], bool(resolved["template"]), "classification",
                         label_map, read_rows, skipped)


def from_frame(df: pd.DataFrame, *, columns: Columns | None = None, label_map: dict | None = None,
               source: str = "<DataFrame>", **column_kw) -> ExamplesTable:
    """An in-memory table (pandas DataFrame) read like a file: the same
    column mapping and checks as :func:`read_examples`; rows are numbered from 1."""
    if "tokens" in df.columns and "term_span" in df.columns:  # already NER examples (expanded or read before)
        frame = df.reset_index(drop=True)
        return ExamplesTable(frame, source, "frame", np.arange(1, len(frame) + 1), None, "template" in frame.columns,
                             "sequence_labelling")
    cols = columns if columns is not None else Columns(**column_kw)
    path = Path(source)
    r = cols.resolved(df.columns, path, 1)
    if len(df) == 0:
        raise ExamplesFormatError("no rows", file=path)
    rows = np.arange(1, len(df) + 1)
    frame, rows_out, skipped = _to_examples(df.reset_index(drop=True), rows, r, path, "frame", dict(label_map or {}))
    _check_consistency(frame, rows_out, r, path)
    return ExamplesTable(frame, source, "frame", rows_out, r["label"], bool(r["template"]), "classification",
                         dict(label_map or {}), len(df), skipped)


def _to_examples(df: pd.DataFrame, rows: np.ndarray, r: dict, path: Path, stem: str, label_map: dict):
    """One chunk of the file -> examples (one per row and attribute)."""
    text = as_strings(df[r["text"]])
    bad = first_true(np.array([t is None or not t.strip() for t in text], dtype=bool))
    if bad is not None:
        raise ExamplesFormatError("empty text", file=path, row=int(rows[bad]), field=r["text"])
    if r["template"]:
        parts = [as_strings(df[c]) for c in r["template"]]  # several columns: joined, empty parts allowed
        empty = np.logical_and.reduce([np.array([v is None or not v.strip() for v in p], dtype=bool) for p in parts])
        bad = first_true(empty)
        if bad is not None:
            raise ExamplesFormatError("empty template id", file=path, row=int(rows[bad]), field=", ".join(r["template"]))
        template = parts[0] if len(parts) == 1 else np.array(["|".join(v or "" for v in t) for t in zip(*parts)], dtype=object)
    else:
        template = np.array([f"{stem}:{i}" for i in rows], dtype=object)
    term = as_strings(df[r["term"]]) if r["term"] else np.full(len(df), None, dtype=object)
    if r["label"]:
        label = as_strings(df[r["label"]])
        label = np.array([None if v is None or v == "" else label_map.get(v, v) for v in label], dtype=object)
    else:
        label = np.full(len(df), None, dtype=object)
    ids = as_strings(df[r["id"]]) if r["id"] else np.array([f"{stem}:{i}" for i in rows], dtype=object)

    if r["attribute_columns"]:
        pieces, skipped = [], 0
        for c in r["attribute_columns"]:
            g = as_strings(df[c])
            keep = np.array([v is not None and v.strip() != "" for v in g], dtype=bool)
            skipped += int((~keep).sum())
            multi = len(r["attribute_columns"]) > 1
            pieces.append((c, keep, g, np.array([f"{i}/{c}" for i in ids[keep]], dtype=object) if multi else ids[keep]))
        frames, rowparts = [], []
        for c, keep, g, idk in pieces:
            frames.append(_frame(idk, template[keep], np.full(int(keep.sum()), c, dtype=object), g[keep], term[keep],
                                 text[keep], label[keep], stem))
            rowparts.append(rows[keep])
        frame, rows_out = pd.concat(frames, ignore_index=True), np.concatenate(rowparts)
        order = np.argsort(rows_out, kind="stable")  # row by row, attributes in column order: chunk size has no effect
        return frame.iloc[order].reset_index(drop=True), rows_out[order], skipped
    group = as_strings(df[r["group"]])
    bad = first_true(np.array([v is None or not v.strip() for v in group], dtype=bool))
    if bad is not None:
        raise ExamplesFormatError("empty group", file=path, row=int(rows[bad]), field=r["group"])
    if r["attribute_name"]:
        attr = as_strings(df[r["attribute_name"]])
        bad = first_true(np.array([v is None or not v.strip() for v in attr], dtype=bool))
        if bad is not None:
            raise ExamplesFormatError("empty attribute", file=path, row=int(rows[bad]), field=r["attribute_name"])
    else:  # one attribute for the file: given, else the group column's name
        attr = np.full(len(df), r.get("attribute") or r["group"], dtype=object)
    return _frame(ids, template, attr, group, term, text, label, stem), rows, 0


def _frame(ids, template, attr, group, term, text, label, stem) -> pd.DataFrame:
    n = len(ids)
    return pd.DataFrame({"id": ids, "template": template, "attribute": attr, "group": group, "term": term,
                         "text": text, "label": label, "suite": np.full(n, stem, dtype=object),
                         "source_template": template, "slot": np.full(n, None, dtype=object)}, columns=EXAMPLE_COLUMNS)


def _check_consistency(frame: pd.DataFrame, rows: np.ndarray, r: dict, path: Path):
    """Unique ids; each group belongs to one attribute within a template (a
    template may cover several attributes, as an expanded suite does)."""
    dup = frame["id"].duplicated().to_numpy()
    i = first_true(dup)
    if i is not None:
        raise ExamplesFormatError(f"duplicate id {frame['id'].iat[i]!r}", file=path, row=int(rows[i]),
                                  field=r["id"] or "(row number)")
    if not r["template"] or r["attribute_columns"] and len(r["attribute_columns"]) > 1:
        return
    key = frame[["template", "group", "attribute"]].drop_duplicates()
    clash = key.duplicated(["template", "group"], keep=False).to_numpy()
    if clash.any():
        t, g = key["template"].to_numpy()[clash][0], key["group"].to_numpy()[clash][0]
        attrs = sorted(set(key.loc[(key["template"] == t) & (key["group"] == g), "attribute"]))
        pos = np.flatnonzero(((frame["template"] == t) & (frame["group"] == g) & (frame["attribute"] == attrs[-1])).to_numpy())
        raise ExamplesFormatError(f"template {t!r} has rows of group {g!r} under different attributes {attrs}: "
                                  "the rows of a template's group must share one attribute",
                                  file=path, row=int(rows[pos[0]]), field=r["attribute_name"] or r["group"])


def check_labels(table: ExamplesTable, classes: Sequence[str], class_map: dict | None = None) -> None:
    """Every label must be one of the model's classes (after the label map
    and the run's ``class_map``)."""
    known = set(classes)
    lab = table.frame["label"].to_numpy(dtype=object)
    if class_map:
        lab = np.array([class_map.get(v, v) if v is not None else None for v in lab], dtype=object)
    bad = first_true(np.array([v is not None and v not in known for v in lab], dtype=bool))
    if bad is None:
        return
    values = sorted({v for v in lab if v is not None and v not in known})
    hint = ",".join(f"{v}={list(classes)[0]}" for v in values[:3])
    py_hint = "{" + ", ".join(f"{v!r}: {list(classes)[0]!r}" for v in values[:3]) + "}"
    raise ExamplesFormatError(
        f"label {lab[bad]!r} is not one of the model's classes {list(classes)} (labels outside them: {values[:10]})"
        f"{did_you_mean(lab[bad], classes)}; map them with "
        + option(f"label_map= (read_examples), e.g. label_map={py_hint}", f"--label-map, e.g. --label-map {hint}"), file=table.source, row=int(table.rows[bad]),
        field=table.label_field or "label")


