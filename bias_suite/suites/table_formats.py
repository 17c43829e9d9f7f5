"""Examples tables, the shared part: the column mapping (:class:`Columns`),
the result (:class:`ExamplesTable`), format detection and the chunked
readers of CSV/TSV (pyarrow streaming reader), JSONL, Parquet (row batches)
and ``datasets`` folders (the Arrow files a ``save_to_disk`` writes, read with
pyarrow). See :mod:`bias_suite.suites.tables`."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from ..exceptions import ExamplesFormatError, did_you_mean, option

TABLE_FORMATS = ("csv", "tsv", "jsonl", "parquet", "datasets", "conll")
_EXTENSIONS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
               ".parquet": "parquet", ".pq": "parquet", ".conll": "conll", ".iob": "conll", ".bio": "conll"}
CHUNK_ROWS = 100_000


#: a field of :class:`Columns` -> how to name its column (read_examples' keyword, the command line's flag)
_OPTIONS = {"text": ("text=", "--text-column"), "group": ("group=", "--group-column"),
            "attribute_name": ("attribute_name=", "--attribute-name-column"),
            "attribute_columns": ("attribute_columns=[...]", "--attribute-column"),
            "template": ("template=", "--template-column"), "term": ("term=", "--term-column"),
            "label": ("label=", "--label-column"), "id": ("id=", "--id-column")}


@dataclass
class Columns:
    """Which column holds what. ``None`` means the default name, used when the
    file has it (``text`` and ``group`` are required); a name given explicitly
    must exist."""

    text: str | None = None
    group: str | None = None
    attribute_name: str | None = None   # column naming each row's attribute
    attribute: str | None = None        # or one attribute name for the whole file
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

        def need(name, role, key):
            if name not in found:
                python, cli = _OPTIONS[key]
                raise ExamplesFormatError(f"no column {name!r} for the {role}; the file has {found}"
                                          f"{did_you_mean(name, found)} (name the column with "
                                          f"{option(python, cli)})", file=source, row=row, field=name)
            return name

        def opt(name, default, role, key):
            if name is not None:
                return need(name, role, key)
            return default if default in found else None

        out = {"text": need(self.text or "text", "text", "text")}
        if self.attribute_columns:
            both = [n for n in (self.group, self.attribute_name) if n is not None]
            if both:
                raise ExamplesFormatError(f"give either attribute columns {list(self.attribute_columns)} or a group "
                                          f"column (with an attribute-name column), not both (also given: {both})",
                                          file=source, field=both[0])
            out["attribute_columns"] = [need(c, "attribute", "attribute_columns") for c in self.attribute_columns]
            out["group"] = None
            out["attribute_name"] = None
        else:
            out["attribute_columns"] = []
            out["group"] = need(self.group or "group", "group (or give attribute columns)", "group")
            out["attribute_name"] = (opt(self.attribute_name, "attribute", "attribute", "attribute_name") if self.attribute is None
                                     else self.attribute_name and need(self.attribute_name, "attribute", "attribute_name"))
        out["attribute"] = self.attribute
        tpl = [self.template] if isinstance(self.template, str) else list(self.template or [])
        out["template"] = [need(c, "template id", "template") for c in tpl] if tpl else (["template"] if "template" in found else [])
        out["term"] = opt(self.term, "term", "term", "term")
        out["label"] = opt(self.label, "label", "label", "label")
        out["id"] = opt(self.id, "id", "id", "id")
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
    selected: dict | None = None  # {attribute: [groups]} kept by select_groups, in their order

    def select(self, attributes) -> "ExamplesTable":
        """Keep only these attributes (all when None); unknown names are an error."""
        if not attributes:
            return self
        wanted = [attributes] if isinstance(attributes, str) else list(attributes)
        have = list(pd.unique(self.frame["attribute"]))
        missing = [a for a in wanted if a not in have]
        if missing:
            raise ExamplesFormatError(f"unknown attribute(s) {missing}; the file has {have}{did_you_mean(missing[0], have)}",
                                      file=self.source)
        keep = self.frame["attribute"].isin(wanted).to_numpy()
        return ExamplesTable(self.frame[keep].reset_index(drop=True), self.source, self.format, self.rows[keep],
                             self.label_field, self.has_template, self.task, self.label_map, self.read_rows,
                             self.skipped)

    def select_groups(self, groups) -> "ExamplesTable":
        """Keep only the groups ``{attribute: [groups]}`` of the attributes
        named (in that order; see :mod:`bias_suite.suites.selection`)."""
        from .selection import group_mask

        if not groups:
            return self
        keep = group_mask(self.frame, groups, where=self.source)
        return dataclasses.replace(self, frame=self.frame[keep].reset_index(drop=True), rows=self.rows[keep],
                                   selected={a: list(g) for a, g in groups.items()})

    def group_order(self) -> dict:
        """Groups of each attribute in order of first appearance (the
        selected groups in the order they were selected)."""
        f = self.frame
        order = {a: list(pd.unique(f.loc[f["attribute"] == a, "group"])) for a in pd.unique(f["attribute"])}
        return {**order, **{a: g for a, g in (self.selected or {}).items() if a in order}}

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
                                      field=option("format", "--format"))
        return fmt
    if path.is_dir():
        return "datasets"
    fmt = _EXTENSIONS.get(path.suffix.lower())
    if fmt is None:
        raise ExamplesFormatError(f"cannot tell the format from the extension {path.suffix!r}; give "
                                  f"{option('format=', '--format')} ({', '.join(TABLE_FORMATS)})", file=path)
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
    return p.suffix.lower() in _EXTENSIONS or (p.is_dir() and any((p / f).exists() for f in ("state.json", "dataset_dict.json")))


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
                               f"convert it, or pass {option('encoding=', '--encoding')} (e.g. latin-1, cp1252)", file=path, **where)


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
                    "the file is not {0} or mixes encodings: convert it, or pass {1}".format(
                        encoding, option("encoding=", "--encoding")),
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


def read_chunks(path: Path, fmt: str, usecols, encoding: str, chunk_rows: int):
    if fmt in ("csv", "tsv"):
        return _iter_csv(path, "," if fmt == "csv" else "\t", usecols, encoding, chunk_rows)
    if fmt == "jsonl":
        return _iter_jsonl(path, usecols, encoding, chunk_rows)
    if fmt == "parquet":
        return _iter_parquet(path, usecols, chunk_rows)
    return _iter_datasets(path, usecols, chunk_rows)


def as_strings(s: pd.Series) -> np.ndarray:
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


def first_true(mask: np.ndarray):
    idx = np.flatnonzero(mask)
    return int(idx[0]) if len(idx) else None



def token_index(v) -> int:
    """An integer index written as ``3`` or ``3.0``."""
    f = float(v)
    if not f.is_integer() or f < 0:
        raise ValueError(v)
    return int(f)
