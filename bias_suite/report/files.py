"""Atomic file output: everything bias_suite writes appears whole or not at all."""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path beside ``path``; on success rename it over
    ``path`` (atomic on POSIX), on error remove it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding=encoding) as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    return Path(path)


RESULTS_JSONL = "results.jsonl"
RESULTS_CSV = "results.csv"


def write_results(results, out_dir, *, metadata: dict | None = None) -> dict:
    """Write tidy results as ``results.jsonl`` and ``results.csv`` (and
    ``run.json`` metadata when given), each atomically."""
    import json

    from ..scoring.scored import write_jsonl

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {"jsonl": write_jsonl(results, out_dir / RESULTS_JSONL)}
    with atomic_path(out_dir / RESULTS_CSV) as tmp:
        results.to_csv(tmp, index=False)
    paths["csv"] = out_dir / RESULTS_CSV
    if metadata is not None:
        paths["metadata"] = atomic_write_text(out_dir / "run.json", json.dumps(metadata, indent=2, default=str) + "\n")
    return paths


def read_results(path):
    """Read ``results.jsonl`` (or a folder holding it) back into a DataFrame."""
    import pandas as pd

    from ..metrics.engine import results_frame

    path = Path(path)
    if path.is_dir():
        path = path / RESULTS_JSONL
    return results_frame(pd.read_json(path, lines=True, dtype=False).to_dict("records"))
