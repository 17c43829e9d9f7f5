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
:func:`read_conll`). Files are read in chunks; only the mapped columns are
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

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import pandas as pd

from ..exceptions import ExamplesFormatError
from .expansion import EXAMPLE_COLUMNS

__all__ = ["Columns", "ExamplesTable", "read_examples", "from_frame", "read_conll", "detect_format", "is_examples_table",
           "check_labels", "parse_mapping", "TABLE_FORMATS"]

TABLE_FORMATS = ("csv", "tsv", "jsonl", "parquet", "datasets", "conll")
_EXTENSIONS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
               ".parquet": "parquet", ".pq": "parquet", ".conll": "conll", ".iob": "conll", ".bio": "conll"}
CHUNK_ROWS = 100_000
_NO_GROUP = ("", "O", "-", "_")  # CoNLL group column: tokens outside the identity span


@dataclass
class Columns:
    """Which column holds what. ``None`` means the default name, used when the
    file has it (``text`` and ``group`` are required); a name given explicitly
    must exist."""

    text: str | None = None
    group: str | None = None
    attribute_name: str | None = None
    attribute_columns: Sequence[str] = ()
    template: Sequence[str] | str | None = None
    term: str | None = None
    label: str | None = None
    id: str | None = None

    def resolved(self, found: Sequence[str], source, row) -> dict:
        """Column names to read: ``{role: name or [names] or None}``; a
        missing required or explicitly named column is an error listing the
        columns found."""
        found = list(found)

        def need(name, role):
            if name not in found:
                raise ExamplesFormatError(f"no column {name!r} for the {role}; the file has {found}",
                                          file=source, row=row, field=name)
            return name

        def opt(name, default, role):
            if name is not None:
                return need(name, role)
            return default if default in found else None

        out = {"text": need(self.text or "text", "text")}
        if self.attribute_columns:
            out["attribute_columns"] = [need(c, "attribute") for c in self.attribute_columns]
            out["group"] = None
            out["attribute_name"] = None
        else:
            out["attribute_columns"] = []
            out["group"] = need(self.group or "group", "group (or give attribute columns)")
            out["attribute_name"] = opt(self.attribute_name, "attribute", "attribute")
        tpl = [self.template] if isinstance(self.template, str) else list(self.template or [])
        out["template"] = [need(c, "template id") for c in tpl] if tpl else (["template"] if "template" in found else [])
        out["term"] = opt(self.term, "term", "term")
        out["label"] = opt(self.label, "label", "label")
        out["id"] = opt(self.id, "id", "id")
        return out


@dataclass
class ExamplesTable:
    """Examples read from a table, with where each came from."""

    frame: pd.DataFrame          # EXAMPLE_COLUMNS (+ tokens, tags, term_span for NER)
    source: str
    format: str
    rows: np.ndarray             # row/line number in the file of each example
    label_field: str | None = None
    has_template: bool = True
    task: str = "classification"
    label_map: dict = field(default_factory=dict)
    read_rows: int = 0           # rows (sentences for CoNLL) read from the file
    skipped: int = 0             # rows left out (empty cell of an attribute column, unmarked sentence)

    def select(self, attributes) -> "ExamplesTable":
        """Keep only these attributes (all when None); unknown names are an error."""
        if not attributes:
            return self
        wanted = [attributes] if isinstance(attributes, str) else list(attributes)
        have = list(pd.unique(self.frame["attribute"]))
        missing = [a for a in wanted if a not in have]
        if missing:
            raise ExamplesFormatError(f"unknown attribute(s) {missing}; the file has {have}", file=self.source)
        keep = self.frame["attribute"].isin(wanted).to_numpy()
        return ExamplesTable(self.frame[keep].reset_index(drop=True), self.source, self.format, self.rows[keep],
                             self.label_field, self.has_template, self.task, self.label_map, self.read_rows,
                             self.skipped)

    def group_order(self) -> dict:
        """Groups of each attribute in order of first appearance."""
        f = self.frame
        return {a: list(pd.unique(f.loc[f["attribute"] == a, "group"])) for a in pd.unique(f["attribute"])}

    def describe(self) -> dict:
        """What run.json records about the input."""
        return {"path": self.source, "format": self.format, "rows": int(self.read_rows), "examples": int(len(self.frame)),
                "skipped": int(self.skipped), "templates": bool(self.has_template), "label_map": dict(self.label_map)}


# ------------------------------------------------------------------ formats
def detect_format(path, format: str | None = None) -> str:
    """The table format of ``path``: ``format`` when given, else from the
    extension (a folder is a ``datasets`` folder)."""
    path = Path(path)
    if format is not None:
        fmt = format.strip().lower()
        fmt = {"hf": "datasets", "arrow": "datasets", "json": "jsonl", "ndjson": "jsonl", "pq": "parquet"}.get(fmt, fmt)
        if fmt not in TABLE_FORMATS:
            raise ExamplesFormatError(f"unknown format {format!r}; use one of {', '.join(TABLE_FORMATS)}", file=path,
                                      field="--format")
        return fmt
    if path.is_dir():
        return "datasets"
    fmt = _EXTENSIONS.get(path.suffix.lower())
    if fmt is None:
        raise ExamplesFormatError(f"cannot tell the format from the extension {path.suffix!r}; give --format "
                                  f"({', '.join(TABLE_FORMATS)})", file=path)
    return fmt


def is_examples_table(path, format: str | None = None) -> bool:
    """True when ``path`` should be read as an examples table (not as a suite):
    a format was given, or it is an existing folder or file with a table
    extension (``.jsonl``, ``.csv``, ...)."""
    if format is not None:
        return True
    p = Path(str(path))
    if p.suffix.lower() in (".yaml", ".yml"):
        return False
    return p.suffix.lower() in _EXTENSIONS or (p.is_dir() and (p / "state.json").exists())


def parse_mapping(specs, option: str = "--label-map") -> dict:
    """``["a=b,c=d", "e=f"]`` -> ``{"a": "b", "c": "d", "e": "f"}``."""
    out = {}
    for spec in [specs] if isinstance(specs, str) else list(specs or []):
        for part in str(spec).split(","):
            if not part.strip():
                continue
            if "=" not in part:
                raise ExamplesFormatError(f"{option} expects VALUE=CLASS pairs separated by commas, got {part!r}",
                                          field=option)
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


# ------------------------------------------------------------------ chunked readers
def _bad_utf8_line(path: Path, encoding: str) -> tuple[int, str] | None:
    """The first line (1-based) that does not decode, and why."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                raw.decode(encoding)
            except UnicodeDecodeError as e:
                return lineno, f"byte 0x{raw[e.start]:02x} at column {e.start + 1} is not valid {encoding}"
    return None


def _encoding_error(path: Path, encoding: str, detail=None):
    bad = _bad_utf8_line(path, encoding)
    where = {"row": bad[0]} if bad else {}
    why = bad[1] if bad else str(detail)
    return ExamplesFormatError(f"cannot decode the file: {why}; the file is not {encoding} or mixes encodings: "
                               f"convert it, or pass --encoding (e.g. latin-1, cp1252)", file=path, **where)


def _iter_csv(path: Path, sep: str, usecols, encoding: str, chunk_rows: int):
    """(first line number, DataFrame of strings) per chunk; header is line 1."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    ro = pcsv.ReadOptions(block_size=1 << 24, encoding=encoding)
    po = pcsv.ParseOptions(delimiter=sep)
    try:
        head = pcsv.open_csv(path, read_options=ro, parse_options=po)
        names = head.schema.names
    except pa.ArrowInvalid as e:
        if "UTF8" in str(e) or "decode" in str(e).lower():
            raise _encoding_error(path, encoding, e) from None
        raise ExamplesFormatError(f"cannot read as {'TSV' if sep == chr(9) else 'CSV'}: {e}", file=path) from None
    yield names, None
    cols = usecols(names)
    co = pcsv.ConvertOptions(column_types={c: pa.string() for c in cols}, include_columns=cols,
                             strings_can_be_null=False, quoted_strings_can_be_null=False)
    reader, line = None, 2
    while True:
        try:
            if reader is None:  # opening reads (and converts) the first block
                reader = pcsv.open_csv(path, read_options=ro, parse_options=po, convert_options=co)
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except pa.ArrowInvalid as e:
            if "UTF8" in str(e) or "decode" in str(e).lower():
                raise _encoding_error(path, encoding, e) from None
            raise ExamplesFormatError(f"cannot read row after line {line - 1}: {e}", file=path) from None
        df = batch.to_pandas()
        yield line, df
        line += len(df)


def _iter_jsonl(path: Path, usecols, encoding: str, chunk_rows: int):
    names_seen = None
    records, lines = [], []
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                s = raw.decode(encoding).strip()
            except UnicodeDecodeError as e:
                raise ExamplesFormatError(
                    f"cannot decode the line: byte 0x{raw[e.start]:02x} at column {e.start + 1} is not valid {encoding}; "
                    "the file is not {0} or mixes encodings: convert it, or pass --encoding".format(encoding),
                    file=path, row=lineno) from None
            if lineno == 1 and s.startswith("\ufeff"):
                s = s[1:]
            if not s:
                continue
            try:
                obj = json.loads(s)
            except json.JSONDecodeError as e:
                hint = " (a suite must be YAML: .yaml/.yml)" if lineno == 1 else ""
                raise ExamplesFormatError(f"invalid JSON ({e.msg} at column {e.colno}){hint}", file=path, row=lineno) from None
            if not isinstance(obj, dict):
                raise ExamplesFormatError(f"expected a JSON object, got {type(obj).__name__}", file=path, row=lineno)
            if names_seen is None:
                names_seen = list(obj)
                yield names_seen, None
                keep = usecols(names_seen)
            records.append({c: obj.get(c) for c in keep})
            lines.append(lineno)
            if len(records) >= chunk_rows:
                yield np.asarray(lines), pd.DataFrame.from_records(records, columns=keep)
                records, lines = [], []
    if names_seen is None:
        raise ExamplesFormatError("no rows", file=path)
    if records:
        yield np.asarray(lines), pd.DataFrame.from_records(records, columns=keep)


def _iter_arrow_batches(path: Path, batches, names, usecols, class_labels: dict):
    yield names, None
    cols = usecols(names)
    row = 1
    for b in batches(cols):
        df = b.to_pandas()
        for c, labels in class_labels.items():
            if c in df.columns:
                df[c] = df[c].map(lambda v: labels[int(v)] if v is not None and v == v and 0 <= int(v) < len(labels) else v)
        yield row, df
        row += len(df)


def _iter_parquet(path: Path, usecols, chunk_rows: int):
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises several types for broken files
        raise ExamplesFormatError(f"cannot read Parquet: {e}", file=path) from None
    yield from _iter_arrow_batches(path, lambda cols: pf.iter_batches(batch_size=chunk_rows, columns=cols),
                                   pf.schema_arrow.names, usecols, {})


def _iter_datasets(path: Path, usecols, chunk_rows: int):
    """A ``save_to_disk`` folder: ``state.json`` lists the Arrow stream files;
    ClassLabel columns (``dataset_info.json``) are read as their names."""
    import pyarrow as pa

    if (path / "dataset_dict.json").exists():
        splits = json.loads((path / "dataset_dict.json").read_text()).get("splits", [])
        raise ExamplesFormatError(f"a DatasetDict: give one split folder, e.g. {path / (splits[0] if splits else 'train')}",
                                  file=path)
    state_file = path / "state.json"
    if not state_file.exists():
        raise ExamplesFormatError("not a datasets folder (no state.json; write it with Dataset.save_to_disk)", file=path)
    files = [path / f["filename"] for f in json.loads(state_file.read_text()).get("_data_files", [])]
    if not files:
        raise ExamplesFormatError("state.json lists no data files", file=state_file)
    class_labels = {}
    info = path / "dataset_info.json"
    if info.exists():
        for c, feat in (json.loads(info.read_text()).get("features") or {}).items():
            if isinstance(feat, dict) and feat.get("_type") == "ClassLabel" and feat.get("names"):
                class_labels[c] = list(feat["names"])

    def open_(f):
        try:
            return pa.ipc.open_stream(pa.memory_map(str(f)))
        except (pa.ArrowInvalid, OSError) as e:
            raise ExamplesFormatError(f"cannot read the Arrow file: {e}", file=f) from None

    names = open_(files[0]).schema.names

    def batches(cols):
        for f in files:
            for b in open_(f):
                yield b.select(cols)

    yield from _iter_arrow_batches(path, batches, names, usecols, class_labels)


def _chunks(path: Path, fmt: str, usecols, encoding: str, chunk_rows: int):
    if fmt in ("csv", "tsv"):
        return _iter_csv(path, "," if fmt == "csv" else "\t", usecols, encoding, chunk_rows)
    if fmt == "jsonl":
        return _iter_jsonl(path, usecols, encoding, chunk_rows)
    if fmt == "parquet":
        return _iter_parquet(path, usecols, chunk_rows)
    return _iter_datasets(path, usecols, chunk_rows)


# ------------------------------------------------------------------ table -> examples
def _strings(s: pd.Series) -> np.ndarray:
    """Object array of str (None for null/NaN); numbers as their text."""
    out = s.to_numpy(dtype=object)
    if s.dtype == object and all(isinstance(v, str) for v in out[:50]):
        null = pd.isna(s).to_numpy()
        if null.any():
            out = out.copy()
            out[null] = None
        return out
    return np.array([None if v is None or (isinstance(v, float) and v != v) else
                     (str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)) for v in out], dtype=object)


def _first(mask: np.ndarray):
    idx = np.flatnonzero(mask)
    return int(idx[0]) if len(idx) else None


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
    cols = columns if columns is not None else Columns(**{k: v for k, v in column_kw.items() if k != "attribute"})
    if not path.exists():
        raise ExamplesFormatError("no such file or folder", file=path)
    fmt = detect_format(path, format)
    label_map = dict(label_map or {})
    if fmt == "conll":
        return read_conll(path, side=side, columns=cols, encoding=encoding, attribute=column_kw.get("attribute"))
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
    it = _chunks(path, fmt, usecols, encoding, chunk_rows)
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
    text = _strings(df[r["text"]])
    bad = _first(np.array([t is None or not t.strip() for t in text], dtype=bool))
    if bad is not None:
        raise ExamplesFormatError("empty text", file=path, row=int(rows[bad]), field=r["text"])
    if r["template"]:
        parts = [_strings(df[c]) for c in r["template"]]  # several columns: joined, empty parts allowed
        empty = np.logical_and.reduce([np.array([v is None or not v.strip() for v in p], dtype=bool) for p in parts])
        bad = _first(empty)
        if bad is not None:
            raise ExamplesFormatError("empty template id", file=path, row=int(rows[bad]), field=", ".join(r["template"]))
        template = parts[0] if len(parts) == 1 else np.array(["|".join(v or "" for v in t) for t in zip(*parts)], dtype=object)
    else:
        template = np.array([f"{stem}:{i}" for i in rows], dtype=object)
    term = _strings(df[r["term"]]) if r["term"] else np.full(len(df), None, dtype=object)
    if r["label"]:
        label = _strings(df[r["label"]])
        label = np.array([None if v is None or v == "" else label_map.get(v, v) for v in label], dtype=object)
    else:
        label = np.full(len(df), None, dtype=object)
    ids = _strings(df[r["id"]]) if r["id"] else np.array([f"{stem}:{i}" for i in rows], dtype=object)

    if r["attribute_columns"]:
        pieces, skipped = [], 0
        for c in r["attribute_columns"]:
            g = _strings(df[c])
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
    group = _strings(df[r["group"]])
    bad = _first(np.array([v is None or not v.strip() for v in group], dtype=bool))
    if bad is not None:
        raise ExamplesFormatError("empty group", file=path, row=int(rows[bad]), field=r["group"])
    if r["attribute_name"]:
        attr = _strings(df[r["attribute_name"]])
        bad = _first(np.array([v is None or not v.strip() for v in attr], dtype=bool))
        if bad is not None:
            raise ExamplesFormatError("empty attribute", file=path, row=int(rows[bad]), field=r["attribute_name"])
    else:
        attr = np.full(len(df), r["group"], dtype=object)
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
    i = _first(dup)
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
    bad = _first(np.array([v is not None and v not in known for v in lab], dtype=bool))
    if bad is None:
        return
    values = sorted({v for v in lab if v is not None and v not in known})
    hint = ",".join(f"{v}={list(classes)[0]}" for v in values[:3])
    raise ExamplesFormatError(
        f"label {lab[bad]!r} is not one of the model's classes {list(classes)} (labels outside them: {values[:10]}); "
        f"map them with --label-map, e.g. --label-map {hint}", file=table.source, row=int(table.rows[bad]),
        field=table.label_field or "label")


# ------------------------------------------------------------------ NER: CoNLL
def _conll_sentences(path: Path, encoding: str) -> Iterator[tuple[int, list[list[str]]]]:
    """(first line, rows of columns) per sentence; ``-DOCSTART-`` lines skipped."""
    sent, start = [], None
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                s = raw.decode(encoding).rstrip("\r\n")
            except UnicodeDecodeError as e:
                raise ExamplesFormatError(f"cannot decode the line: byte 0x{raw[e.start]:02x} at column {e.start + 1} "
                                          f"is not valid {encoding}; convert the file, or pass --encoding",
                                          file=path, row=lineno) from None
            if lineno == 1:
                s = s.lstrip("\ufeff")
            if not s.strip():
                if sent:
                    yield start, sent
                sent, start = [], None
                continue
            parts = s.split()
            if parts[0] == "-DOCSTART-":
                continue
            if len(parts) < 2:
                raise ExamplesFormatError(f"expected a token and a tag, got {s!r}", file=path, row=lineno)
            if start is None:
                start = lineno
            sent.append(parts)
    if sent:
        yield start, sent


def read_conll(path, *, side=None, columns: Columns | None = None, group_column: int | None = None,
               attribute: str | None = None, encoding: str = "utf-8") -> ExamplesTable:
    """NER examples from a CoNLL-2003 style file: a token and its tag per
    line (the token first, the NER tag last; columns in between are
    ignored), sentences separated by blank lines, ``-DOCSTART-`` skipped. Tags
    may be BIO or BILOU.

    The identity span is marked either

    - by a side file (CSV/TSV/JSONL) with one row per marked sentence:
      ``sentence`` (0-based index among the file's sentences), ``attribute``,
      ``group``, ``template`` (optional), and ``start``/``end`` (token range,
      end exclusive) or ``term`` (the span's words, found in the sentence);
      the column names follow ``columns`` for group/attribute/template/term;
    - or by a group column in the CoNLL file itself (``group_column``, the
      token column index, default: the last column when lines have 3+ columns
      and no side file): the group on the identity tokens, ``O``/``-``/``_``
      elsewhere; the tag is then the column before it. The attribute is
      ``attribute`` (default ``"identity"``); no templates (group view only).

    Sentences without a mark are left out.
    """
    from ..scoring.bilou import to_bilou

    path = Path(path)
    cols = columns or Columns()
    sents = list(_conll_sentences(path, encoding))
    if not sents:
        raise ExamplesFormatError("no sentences", file=path)
    marks = _side_marks(Path(side), cols, encoding) if side is not None else None
    recs, rows = [], []
    for k, (line, sent) in enumerate(sents):
        tokens = [p[0] for p in sent]
        if marks is None:
            gc = group_column if group_column is not None else len(sent[0]) - 1
            if len(sent[0]) < 3:
                raise ExamplesFormatError("no group column: lines have only a token and a tag; give a side file "
                                          "(--side) marking the identity spans", file=path, row=line)
            tag_col = gc - 1  # the NER tag is the column before the group column
            g = [p[gc] if len(p) > gc else "O" for p in sent]
            marked = [i for i, v in enumerate(g) if v not in _NO_GROUP]
            if not marked:
                continue
            s, e = marked[0], marked[-1] + 1
            groups = set(g[s:e])
            if marked != list(range(s, e)) or len(groups) != 1:
                raise ExamplesFormatError("the group column must mark one contiguous span with one group per sentence",
                                          file=path, row=line + s, field=f"column {gc + 1}")
            raw_tags = [p[tag_col] for p in sent]
            mark = {"attribute": attribute or cols.attribute_name or "identity", "group": groups.pop(), "template": None, "span": (s, e),
                    "row": line + s}
        else:
            if k not in marks:
                continue
            mark = marks[k]
            raw_tags = [p[-1] for p in sent]
            if mark["span"] is None:
                words = mark["term"].split()
                hits = [i for i in range(len(tokens) - len(words) + 1) if tokens[i:i + len(words)] == words]
                if not hits:
                    raise ExamplesFormatError(f"term {mark['term']!r} does not occur in sentence {k} ({' '.join(tokens)!r})",
                                              file=side, row=mark["row"], field=cols.term or "term")
                mark["span"] = (hits[0], hits[0] + len(words))
            s, e = mark["span"]
            if not 0 <= s < e <= len(tokens):
                raise ExamplesFormatError(f"span [{s}, {e}) is outside sentence {k} of {len(tokens)} tokens",
                                          file=side, row=mark["row"], field="start")
        try:
            tags = to_bilou(raw_tags)
        except ValueError as err:
            raise ExamplesFormatError(str(err), file=path, row=line) from None
        s, e = mark["span"]
        term = mark.get("term") or " ".join(tokens[s:e])
        tpl = mark["template"] or f"{path.stem}:{k}"
        recs.append({"id": f"{path.stem}:{k}", "template": tpl, "attribute": mark["attribute"], "group": mark["group"],
                     "term": term, "text": " ".join(tokens), "label": None, "suite": path.stem, "source_template": tpl,
                     "slot": None, "tokens": tokens, "tags": tags, "term_span": [s, e]})
        rows.append(line)
    if not recs:
        raise ExamplesFormatError("no sentence has an identity mark", file=side or path)
    frame = pd.DataFrame.from_records(recs)
    has_template = marks is not None and any(m["template"] for m in marks.values())
    return ExamplesTable(frame, str(path), "conll", np.asarray(rows), None, has_template, "sequence_labelling", {},
                         len(sents), len(sents) - len(recs))


def _side_marks(side: Path, cols: Columns, encoding: str) -> dict:
    """sentence index -> {attribute, group, template, span, term, row} from a side file."""
    fmt = detect_format(side)
    if fmt not in ("csv", "tsv", "jsonl"):
        raise ExamplesFormatError("the side file must be CSV, TSV or JSONL", file=side)
    if not side.exists():
        raise ExamplesFormatError("no such file", file=side)
    names = {"sentence": "sentence", "attribute": cols.attribute_name or "attribute", "group": cols.group or "group",
             "template": cols.template if isinstance(cols.template, str) else (list(cols.template or []) or ["template"])[0],
             "term": cols.term or "term", "start": "start", "end": "end"}
    keep = []

    def usecols(found):
        for role in ("sentence", "attribute", "group"):
            if names[role] not in found:
                raise ExamplesFormatError(f"no column {names[role]!r} for the {role}; the file has {list(found)}",
                                          file=side, row=1, field=names[role])
        if not ({"start", "end"} <= set(found) or names["term"] in found):
            raise ExamplesFormatError(f"give the span as 'start'/'end' columns or a {names['term']!r} column; "
                                      f"the file has {list(found)}", file=side, row=1)
        keep[:] = [c for c in names.values() if c in found]
        return keep

    out = {}
    it = _chunks(side, fmt, usecols, encoding, CHUNK_ROWS)
    next(it)
    for start, df in it:
        rows = np.asarray(start) if isinstance(start, np.ndarray) else np.arange(start, start + len(df))
        vals = {role: _strings(df[c]) if c in df.columns else np.full(len(df), None, dtype=object) for role, c in names.items()}
        for j, row in enumerate(rows):
            try:
                k = _token_index(vals["sentence"][j])
            except (TypeError, ValueError):
                raise ExamplesFormatError(f"expected a sentence index, got {vals['sentence'][j]!r}", file=side,
                                          row=int(row), field=names["sentence"]) from None
            if k in out:
                raise ExamplesFormatError(f"sentence {k} is marked twice", file=side, row=int(row), field=names["sentence"])
            for role in ("attribute", "group"):
                if not vals[role][j]:
                    raise ExamplesFormatError(f"empty {role}", file=side, row=int(row), field=names[role])
            span = None
            if vals["start"][j] and vals["end"][j]:
                try:
                    span = tuple(_token_index(vals[c][j]) for c in ("start", "end"))
                except ValueError:
                    raise ExamplesFormatError(f"start/end must be token indices, got {vals['start'][j]!r}, "
                                              f"{vals['end'][j]!r}", file=side, row=int(row), field="start") from None
            elif not vals["term"][j]:
                raise ExamplesFormatError("no span: give start/end or the term", file=side, row=int(row), field=names["term"])
            out[k] = {"attribute": vals["attribute"][j], "group": vals["group"][j], "template": vals["template"][j] or None,
                      "span": span, "term": vals["term"][j], "row": int(row)}
    return out


def _token_index(v) -> int:
    """An integer index written as ``3`` or ``3.0``."""
    f = float(v)
    if not f.is_integer() or f < 0:
        raise ValueError(v)
    return int(f)
