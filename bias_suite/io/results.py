"""The tidy results table and run folders: one schema, one reader and
writer (everything written atomically through :mod:`bias_suite.io`).

Results
    One row per metric x class x group/pair/accumulated value with
    ``RESULT_COLUMNS`` (docs/formats.md), plus the verdict columns
    ``OPTIONAL_COLUMNS`` when something was judged.

Run folders
    A run (``bias-suite run``, ``evaluate``, ``checklist import``) owns its
    output folder. Its ``run.json`` is written last and lists, under
    ``"files"``, every file the run produced with its size and SHA-256.
    Readers (``report``, ``check``, ``plot``) take only listed files, and
    refuse a listed file that changed since. Before the run's ``run.json``
    is written, the files an earlier run left in the folder (those its
    ``run.json`` listed, and bias_suite's own file names) are removed, and
    temporary files of an interrupted write (``kill -9``) are removed when
    the next run prepares the folder.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from pathlib import Path

import pandas as pd

from ..exceptions import OutputError
from . import atomic_path, atomic_write_text, check_folder, ensure_folder, file_mode  # noqa: F401 (file_mode re-exported)
from .tables import write_jsonl

RESULT_COLUMNS = ["metric", "family", "view", "attribute", "class", "group", "value", "ci_low", "ci_high", "n", "note"]
OPTIONAL_COLUMNS = ["verdict", "threshold", "baseline", "effect", "reason", "source", "consistency",
                    "p", "q", "signed", "signed_low", "signed_high", "terms_agree", "term_effects", "beyond",
                    "beyond_low", "beyond_high"]  # the verdict stage, after `note`

RESULTS_JSONL = "results.jsonl"
RESULTS_CSV = "results.csv"
RUN_JSON = "run.json"
MANIFEST_KEY = "files"

#: Names bias_suite writes into a run folder; an earlier run's copies are
#: stale once a new run owns the folder (``ner/`` holds the NER part of a
#: run that mixes tasks).
OUTPUT_NAMES = ("examples.jsonl", "scored.jsonl", "scored.parquet", RESULTS_JSONL, RESULTS_CSV,
                "failures.jsonl", "inv_failures.jsonl", "report.html", "comparison.jsonl", "comparison.csv",
                "comparison.json", RUN_JSON)
SUBFOLDERS = ("ner",)

_TMP_RE = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9_]{8}\.tmp$")  # atomic_path's temp names (tempfile.mkstemp)


# --------------------------------------------------------------------------
# run folders
# --------------------------------------------------------------------------
def remove_temp_files(folder) -> list[Path]:
    """Remove the temporary files an interrupted atomic write of a run's
    file left in ``folder`` (and its ``ner/``); returns them."""
    removed = []
    for d in [Path(folder)] + [Path(folder) / s for s in SUBFOLDERS]:
        if not d.is_dir():
            continue
        ours = set(OUTPUT_NAMES) | set(read_manifest(d) or ())
        for p in d.iterdir():
            m = _TMP_RE.match(p.name)
            if m and m.group("name") in ours and p.is_file():
                with contextlib.suppress(FileNotFoundError):
                    p.unlink()
                    removed.append(p)
    return removed


def prepare_run_folder(path, *, create: bool = True) -> Path:
    """Make ``path`` ready for a run: a writable folder (created unless
    ``create=False``, which only checks, e.g. before a run spends time on
    predictions) without the temporary files of an interrupted write."""
    target = ensure_folder(path) if create else check_folder(path)
    if target.is_dir():
        remove_temp_files(target)
    return target


def file_entry(path) -> dict:
    """``{"bytes": size, "sha256": hex}`` of a file."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return {"bytes": os.path.getsize(path), "sha256": h.hexdigest()}


def read_manifest(folder) -> dict | None:
    """The ``"files"`` listing of ``folder/run.json``, or None when the
    folder has no ``run.json`` or one without a listing (written by hand or
    by an older bias_suite)."""
    meta = Path(folder) / RUN_JSON
    if not meta.is_file():
        return None
    try:
        doc = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    files = doc.get(MANIFEST_KEY) if isinstance(doc, dict) else None
    return files if isinstance(files, dict) else None


def _remove_stale(folder: Path, keep: set) -> None:
    """Remove what an earlier run left in ``folder``, except ``keep``: the
    files its ``run.json`` listed and its ``report.html`` (a run.json from
    before the listings: every name bias_suite writes; no run.json: nothing)."""
    if not (folder / RUN_JSON).is_file():  # not a run folder: leave files with our names alone
        return
    old = read_manifest(folder)
    if old is None:
        names = set(OUTPUT_NAMES)
    else:
        names = {n for n in old if "/" not in n and n not in ("", ".", "..")} | {"report.html"}
    for name in names:
        p = folder / name
        if p.resolve() in keep or not p.is_file():
            continue
        with contextlib.suppress(FileNotFoundError):
            p.unlink()
    for sub in SUBFOLDERS:
        d = folder / sub
        if d.is_dir() and (d / RUN_JSON).exists() and not any(k.parent == d.resolve() for k in keep):
            # an earlier run's NER part: remove its files, and the folder when nothing else is in it
            _remove_stale(d, set())
            remove_temp_files(d)
            with contextlib.suppress(OSError):
                d.rmdir()


def commit_run_folder(folder, files, metadata: dict) -> Path:
    """Finish a run folder: remove an earlier run's files, then write
    ``run.json`` (``metadata`` plus the ``"files"`` listing of ``files``,
    paths inside ``folder``). ``run.json`` is written last: a folder whose
    ``run.json`` lists a file holds that run's file."""
    folder = Path(folder)
    written = [Path(p) for p in files if p is not None]
    keep = {p.resolve() for p in written}
    _remove_stale(folder, keep)
    listing = {}
    base = folder.resolve()
    for p in written:
        try:
            rel = p.resolve().relative_to(base).as_posix()
        except ValueError:  # not in the folder: not the folder's file
            continue
        listing[rel] = file_entry(p)
    meta = dict(metadata)
    meta[MANIFEST_KEY] = listing
    return atomic_write_text(folder / RUN_JSON, json.dumps(meta, indent=2, default=str) + "\n")


def run_file(folder, *names) -> Path | None:
    """The first of ``names`` (e.g. ``"scored.parquet", "scored.jsonl"``)
    that the run of ``folder`` wrote, checked against its ``run.json``;
    None when the run wrote none of them. A folder without a listing (its
    files written by hand or by an older bias_suite) gives the first that
    exists. A listed file that is missing or changed raises
    :class:`OutputError`: it is not the run's file any more."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    for name in names:
        p = folder / name
        if manifest is None:
            if p.is_file():
                return p
            continue
        entry = manifest.get(name)
        if entry is None:
            continue
        if not p.is_file():
            raise OutputError(f"{p}: listed in {folder / RUN_JSON} but missing; rerun to write the folder again")
        if isinstance(entry, dict) and entry.get("sha256"):
            got = file_entry(p)
            if got["bytes"] != entry.get("bytes") or got["sha256"] != entry["sha256"]:
                raise OutputError(f"{p}: changed since the run wrote it (size or SHA-256 differ from "
                                  f"{folder / RUN_JSON}); rerun to write the folder again")
        return p
    return None


# --------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------
def results_frame(rows: list) -> pd.DataFrame:
    """Rows (dicts) as a results table with the tidy columns and dtypes
    (plus the verdict columns when any row carries them)."""
    keys = set().union(*(r for r in rows if isinstance(r, dict)))
    extra = [c for c in OPTIONAL_COLUMNS
             if c in keys and any(isinstance(r, dict) and r.get(c) is not None for r in rows)]
    df = pd.DataFrame(rows, columns=RESULT_COLUMNS + extra)
    for c in extra:
        df[c] = df[c].astype(object).where(df[c].notna(), None)
    df["value"] = pd.to_numeric(df["value"], errors="coerce").astype(float)
    for c in ("ci_low", "ci_high"):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    df["n"] = pd.array(pd.to_numeric(df["n"], errors="coerce"), dtype="Int64")
    for c in ("group", "note"):
        df[c] = df[c].astype(object).where(df[c].notna(), None)
    return df


def empty_results() -> pd.DataFrame:
    return results_frame([])


def write_results(results, out_dir, *, metadata: dict | None = None, files=()) -> dict:
    """Write tidy results as ``results.jsonl`` and ``results.csv``, each
    atomically. With ``metadata``, the folder becomes this run's: files of
    an earlier run are removed and ``run.json`` lists the results and the
    already written ``files``."""
    out_dir = ensure_folder(out_dir) if metadata is None else prepare_run_folder(out_dir)  # ".." resolved
    paths = {"jsonl": write_jsonl(results, out_dir / RESULTS_JSONL)}
    with atomic_path(out_dir / RESULTS_CSV) as tmp:
        results.to_csv(tmp, index=False)
    paths["csv"] = out_dir / RESULTS_CSV
    if metadata is not None:
        paths["metadata"] = commit_run_folder(out_dir, list(files) + [paths["jsonl"], paths["csv"]], metadata)
    return paths


def read_results(path):
    """Read ``results.jsonl`` (or a folder holding it) back into a DataFrame."""
    path = Path(path)
    if path.is_dir():
        found = run_file(path, RESULTS_JSONL)
        if found is None:
            raise OutputError(f"{path}: no {RESULTS_JSONL} written by the run of this folder")
        path = found
    return results_frame(pd.read_json(path, lines=True, dtype=False).to_dict("records"))


def read_results_table(path) -> pd.DataFrame:
    """Read ``results.jsonl`` (or ``results.csv``; or a folder holding
    either) keeping any extra columns such as ``verdict``."""
    path = Path(path)
    if path.is_dir():  # the results the folder's run wrote (run.json lists them)
        path = run_file(path, RESULTS_JSONL, RESULTS_CSV) or path / RESULTS_JSONL
    if not path.exists():
        raise FileNotFoundError(f"no results file at {path} (expected {RESULTS_JSONL} or {RESULTS_CSV})")
    if path.suffix == ".csv":
        raw = pd.read_csv(path, dtype={"group": object, "class": object, "attribute": object})
    else:
        raw = pd.read_json(path, lines=True, dtype=False) if path.stat().st_size else pd.DataFrame(columns=RESULT_COLUMNS)
    return with_extra_columns(results_frame(raw.to_dict("records")), raw)


def with_extra_columns(base: pd.DataFrame, raw: pd.DataFrame) -> pd.DataFrame:
    """``base`` plus the columns of ``raw`` it dropped (same row order)."""
    for c in raw.columns:
        if c not in base.columns:
            col = raw[c].astype(object)
            base[c] = col.where(col.notna(), None).to_numpy()
    return base


def as_results(results) -> pd.DataFrame:
    """A results table from a DataFrame, a RunResult, a folder or a file."""
    if isinstance(results, pd.DataFrame):
        return results
    if hasattr(results, "results") and isinstance(results.results, pd.DataFrame):
        return results.results
    if isinstance(results, (str, Path)):
        return read_results_table(results)
    if isinstance(results, list):
        raw = pd.DataFrame(results)
        return with_extra_columns(results_frame(results), raw)
    raise TypeError(f"expected a results DataFrame, a RunResult or a results folder, got {type(results).__name__}")
