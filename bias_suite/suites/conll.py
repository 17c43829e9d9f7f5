"""NER examples from CoNLL-2003 style files (see :func:`read_conll`)."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import pandas as pd

from ..exceptions import ExamplesFormatError, option
from .table_formats import CHUNK_ROWS, Columns, ExamplesTable, read_chunks, as_strings, token_index, detect_format

_NO_GROUP = ("", "O", "-", "_")  # group column: tokens outside the identity span

def conll_sentences(path: Path, encoding: str) -> Iterator[tuple[int, list[list[str]]]]:
    """(first line, rows of columns) per sentence; ``-DOCSTART-`` lines skipped."""
    sent, start = [], None
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            try:
                s = raw.decode(encoding).rstrip("\r\n")
            except UnicodeDecodeError as e:
                raise ExamplesFormatError(f"cannot decode the line: byte 0x{raw[e.start]:02x} at column {e.start + 1} "
                                          f"is not valid {encoding}; convert the file, or pass {option('encoding=', '--encoding')}",
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
    from .bilou import to_bilou

    path = Path(path)
    cols = columns or Columns()
    sents = list(conll_sentences(path, encoding))
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
                                          f"({option('side=', '--side')}) marking the identity spans", file=path, row=line)
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
            mark = {"attribute": attribute or cols.attribute or "identity", "group": groups.pop(), "template": None, "span": (s, e),
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
    it = read_chunks(side, fmt, usecols, encoding, CHUNK_ROWS)
    next(it)
    for start, df in it:
        rows = np.asarray(start) if isinstance(start, np.ndarray) else np.arange(start, start + len(df))
        vals = {role: as_strings(df[c]) if c in df.columns else np.full(len(df), None, dtype=object) for role, c in names.items()}
        for j, row in enumerate(rows):
            try:
                k = token_index(vals["sentence"][j])
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
                    span = tuple(token_index(vals[c][j]) for c in ("start", "end"))
                except ValueError:
                    raise ExamplesFormatError(f"start/end must be token indices, got {vals['start'][j]!r}, "
                                              f"{vals['end'][j]!r}", file=side, row=int(row), field="start") from None
            elif not vals["term"][j]:
                raise ExamplesFormatError("no span: give start/end or the term", file=side, row=int(row), field=names["term"])
            out[k] = {"attribute": vals["attribute"][j], "group": vals["group"][j], "template": vals["template"][j] or None,
                      "span": span, "term": vals["term"][j], "row": int(row)}
    return out


TAGGED_COLUMNS = ("id", "template", "attribute", "group", "term", "text", "label", "tokens", "tags", "term_span")


def has_tagged_columns(path: Path, fmt: str, encoding: str = "utf-8") -> bool:
    """Whether a JSONL or Parquet table holds NER examples (``tokens`` and
    ``tags`` columns: what ``bias-suite expand`` and ``bias-suite perturb``
    write for sequence labelling)."""
    if fmt not in ("jsonl", "parquet"):
        return False
    try:
        names, _ = next(read_chunks(path, fmt, lambda found: [], encoding, 1))  # the first item: the column names
    except (ExamplesFormatError, StopIteration):
        return False
    return {"tokens", "tags"} <= set(names)


def read_tagged_table(path, fmt: str, *, encoding: str = "utf-8") -> ExamplesTable:
    """NER examples from a JSONL or Parquet table with ``tokens`` (list of
    strings), ``tags`` (BIO or BILOU, one per token), ``group``,
    ``attribute``, and optionally ``id``, ``template``, ``term`` and
    ``term_span`` (``[start, end)`` token indices of the identity term, or
    null)."""
    from .bilou import to_bilou

    path = Path(path)
    stem = path.stem
    present: list = []

    def usecols(found):
        for need in ("tokens", "tags", "group", "attribute"):
            if need not in found:
                raise ExamplesFormatError(f"no column {need!r}; NER examples need tokens, tags, attribute and group; "
                                          f"the file has {list(found)}", file=path, row=1, field=need)
        present[:] = [c for c in TAGGED_COLUMNS if c in found]
        return present

    recs, rows = [], []
    it = read_chunks(path, fmt, usecols, encoding, CHUNK_ROWS)
    next(it)
    for start, df in it:
        lines = np.asarray(start) if isinstance(start, np.ndarray) else np.arange(start, start + len(df))
        for row, rec in zip(lines, df.to_dict("records")):
            recs.append(_tagged_record(rec, int(row), path, stem, to_bilou))
            rows.append(int(row))
    if not recs:
        raise ExamplesFormatError("no rows", file=path)
    frame = pd.DataFrame.from_records(recs)
    dup = frame["id"].duplicated().to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        raise ExamplesFormatError(f"duplicate id {frame['id'].iat[i]!r}", file=path, row=rows[i], field="id")
    return ExamplesTable(frame, str(path), fmt, np.asarray(rows), None, "template" in present, "sequence_labelling",
                         {}, len(recs), 0)


def _as_list(v):
    return list(v.tolist() if isinstance(v, np.ndarray) else v) if isinstance(v, (list, tuple, np.ndarray)) else None


def _tagged_record(rec: dict, row: int, path: Path, stem: str, to_bilou) -> dict:
    def text(name, required=True):
        v = rec.get(name)
        if v is None or (isinstance(v, float) and v != v):
            if required:
                raise ExamplesFormatError(f"empty {name}", file=path, row=row, field=name)
            return None
        return str(v)

    tokens, tags = _as_list(rec.get("tokens")), _as_list(rec.get("tags"))
    if not tokens or not all(isinstance(t, str) and t for t in tokens):
        raise ExamplesFormatError("tokens must be a non-empty list of non-empty strings", file=path, row=row,
                                  field="tokens")
    if tags is None or len(tags) != len(tokens):
        raise ExamplesFormatError(f"expected one tag per token ({len(tokens)}), got {tags!r}", file=path, row=row,
                                  field="tags")
    try:
        tags = to_bilou(tags)
    except ValueError as e:
        raise ExamplesFormatError(str(e), file=path, row=row, field="tags") from None
    span = _as_list(rec.get("term_span"))
    if span is not None:
        try:
            s, e = (token_index(x) for x in span)
        except (TypeError, ValueError):
            s, e = -1, -1
        if not 0 <= s < e <= len(tokens):
            raise ExamplesFormatError(f"term_span {rec.get('term_span')!r} is not a [start, end) range of the "
                                      f"{len(tokens)} tokens", file=path, row=row, field="term_span")
        span = [s, e]
    ident = text("id", False) or f"{stem}:{row}"
    tpl = text("template", False) or f"{stem}:{row}"
    return {"id": ident, "template": tpl, "attribute": text("attribute"), "group": text("group"),
            "term": text("term", False), "text": " ".join(tokens), "label": None, "suite": stem,
            "source_template": tpl, "slot": None, "tokens": tokens, "tags": tags, "term_span": span}
