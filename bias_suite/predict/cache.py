"""On-disk prediction cache: one SQLite file per model fingerprint.

Layout: ``<root>/<store id>.sqlite`` where the store id is a hash of the
model's fingerprint (model id or folder, revision, weights and tokenizer
digest, dtype, max length, library versions, ... — whatever the predictor's
``fingerprint()`` says) and of this file format's version. Inside, each
committed **chunk** of predictions is one row::

    chunks(id, n, keys, offsets, vals, tags, digest, created)

``keys`` are the inputs' 16-byte BLAKE2b digests (text, or the token list for
taggers), ``offsets``/``vals``/``tags`` the :class:`~bias_suite.predict.outputs.Outputs`
of the chunk, and ``digest`` a BLAKE2b digest over all of them.

Why it survives interruptions: a chunk is written in one SQLite transaction
(write-ahead log), so a killed process leaves every finished chunk and
nothing of the unfinished one; the next run finds the finished chunks and
predicts only the rest. Why it is never silently wrong: every chunk read is
checked against its digest and its shape; a chunk that fails is deleted (with
a :class:`CacheWarning`) and its inputs are predicted again, and a file that
SQLite cannot read is moved aside as ``*.corrupt-<time>`` and started anew.
Probabilities are stored as float64, so cached values equal computed ones
bit for bit.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bias_suite.exceptions import BiasSuiteError, CacheWarning
from bias_suite.predict.outputs import KEY_BYTES, Outputs

__all__ = ["PredictionCache", "ModelStore", "CacheWarning", "store_id", "FORMAT_VERSION", "default_cache_root"]

#: Bump when the stored layout or the meaning of the keys changes.
FORMAT_VERSION = 1
_SQL_CHUNK_IDS = 500  # ids per "IN (...)" query (SQLite's variable limit is 999+)


def default_cache_root() -> Path:
    """``$BIAS_SUITE_PREDICTION_CACHE`` if set, else ``<bias_suite cache>/predictions``
    (see :func:`bias_suite.paths.cache_dir`)."""
    from bias_suite.paths import cache_dir

    env = os.environ.get("BIAS_SUITE_PREDICTION_CACHE")
    return Path(env).expanduser() if env else cache_dir() / "predictions"


def store_id(fingerprint: dict, kind: str) -> str:
    """The file stem of a model's store: SHA-256 of the canonical JSON of
    the fingerprint, the task kind and :data:`FORMAT_VERSION` (24 hex digits)."""
    blob = json.dumps({"format": FORMAT_VERSION, "kind": kind, "fingerprint": fingerprint},
                      sort_keys=True, default=str, ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def _chunk_digest(n: int, width: int, keys: bytes, offsets: bytes, vals: bytes, tags: bytes | None) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{FORMAT_VERSION}:{n}:{width}:{-1 if tags is None else len(tags)}\0".encode())
    for b in (keys, offsets, vals, tags or b""):
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.digest()


@dataclass
class _Index:
    """Every cached key with the chunk and position it lives at."""

    keys: np.ndarray     # S16, sorted by head
    head: np.ndarray     # uint64 first 8 bytes, sorted
    chunk: np.ndarray    # int64 chunk id
    pos: np.ndarray      # int64 position in the chunk


class ModelStore:
    """The cached predictions of one model (one SQLite file).

    Use :meth:`PredictionCache.store` to get one; :meth:`lookup` and :meth:`put`
    are all a runner needs.
    """

    def __init__(self, path: Path, *, fingerprint: dict, kind: str, width: int, with_tags: bool):
        self.path = Path(path)
        self.fingerprint = fingerprint
        self.kind = kind
        self.width = int(width)
        self.with_tags = bool(with_tags)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._con = self._open()
        except sqlite3.DatabaseError as e:
            self._move_aside(e)
            self._con = self._open()

    # ------------------------------------------------------------ file level
    def _open(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        try:
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA synchronous=NORMAL")
            con.execute("CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)")
            con.execute("CREATE TABLE IF NOT EXISTS chunks (id INTEGER PRIMARY KEY AUTOINCREMENT, n INTEGER NOT NULL, "
                        "keys BLOB NOT NULL, offsets BLOB NOT NULL, vals BLOB NOT NULL, tags BLOB, "
                        "digest BLOB NOT NULL, created REAL NOT NULL)")
            meta = dict(con.execute("SELECT k, v FROM meta").fetchall())
            want = {"format": str(FORMAT_VERSION), "kind": self.kind, "width": str(self.width),
                    "with_tags": str(int(self.with_tags))}
            if meta and any(meta.get(k) != v for k, v in want.items()):
                raise sqlite3.DatabaseError(f"store header {meta} does not match {want}")
            now = str(time.time())
            with con:
                con.execute("BEGIN IMMEDIATE")
                if not meta:
                    rows = dict(want, fingerprint=json.dumps(self.fingerprint, sort_keys=True, default=str),
                                created=now)
                    con.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", list(rows.items()))
                con.execute("INSERT OR REPLACE INTO meta VALUES ('last_used', ?)", (now,))
        except BaseException:
            con.close()
            raise
        return con

    def _move_aside(self, err: Exception) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        bad = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                os.replace(p, Path(str(bad) + suffix))
        warnings.warn(f"prediction cache {self.path} could not be read ({err}); moved it to {bad.name} and "
                      "started a new one: its predictions will be computed again", CacheWarning, stacklevel=3)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ----------------------------------------------------------------- index
    def _index(self) -> _Index:
        rows = self._con.execute("SELECT id, n, CAST(keys AS BLOB) FROM chunks ORDER BY id").fetchall()
        good = [(i, n, k) for i, n, k in rows if isinstance(k, bytes) and len(k) == n * KEY_BYTES]
        bad = [i for i, n, k in rows if not (isinstance(k, bytes) and len(k) == n * KEY_BYTES)]
        if bad:
            self._drop(bad, "its key list has the wrong length")
        if not good:
            z = np.zeros(0, dtype=np.int64)
            return _Index(np.zeros(0, dtype=f"S{KEY_BYTES}"), z.astype(np.uint64), z, z)
        keys = np.frombuffer(b"".join(k for _, _, k in good), dtype=f"S{KEY_BYTES}")
        ns = np.array([n for _, n, _ in good], dtype=np.int64)
        chunk = np.repeat(np.array([i for i, _, _ in good], dtype=np.int64), ns)
        pos = np.arange(len(keys)) - np.repeat(np.cumsum(ns) - ns, ns)
        head = np.frombuffer(keys.tobytes(), dtype="<u8")[::2].copy()
        order = np.argsort(head, kind="stable")  # stable: the oldest chunk wins among duplicates
        return _Index(keys[order], head[order], chunk[order], pos[order])

    def _drop(self, ids, why: str) -> None:
        ids = [int(i) for i in ids]
        warnings.warn(f"prediction cache {self.path.name}: {len(ids)} stored chunk(s) failed their check ({why}); "
                      "they are deleted and their inputs will be predicted again", CacheWarning, stacklevel=4)
        with self._con:
            self._con.execute("BEGIN IMMEDIATE")
            for s in range(0, len(ids), _SQL_CHUNK_IDS):
                part = ids[s:s + _SQL_CHUNK_IDS]
                self._con.execute(f"DELETE FROM chunks WHERE id IN ({','.join('?' * len(part))})", part)

    # ---------------------------------------------------------------- public
    def __len__(self) -> int:
        return int(self._con.execute("SELECT COALESCE(SUM(n), 0) FROM chunks").fetchone()[0])

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray, Outputs]:
        """Find ``keys`` (``S16`` array) in the store.

        Returns
        -------
        hit : bool array, one per key.
        outputs : the :class:`Outputs` of the hits, in the order of ``keys[hit]``.
        """
        keys = np.asarray(keys, dtype=f"S{KEY_BYTES}")
        empty = Outputs.empty(self.width, self.with_tags)
        try:
            return self._lookup(keys, empty)
        except sqlite3.DatabaseError as e:
            self.close()
            self._move_aside(e)
            self._con = self._open()
            return np.zeros(len(keys), dtype=bool), empty

    def _lookup(self, keys, empty):
        for _attempt in range(3):
            idx = self._index()
            hit = np.zeros(len(keys), dtype=bool)
            if not len(keys) or not len(idx.keys):
                return hit, empty
            head = np.frombuffer(keys.tobytes(), dtype="<u8")[::2]
            at = np.minimum(np.searchsorted(idx.head, head, side="left"), len(idx.head) - 1)
            # the heads match almost surely only for the same key; check the full 16 bytes
            hit = (idx.head[at] == head) & (idx.keys[at] == keys)
            if not hit.any():
                return hit, empty
            want_chunk, want_pos = idx.chunk[at[hit]], idx.pos[at[hit]]
            ids = np.unique(want_chunk)
            loaded, bad = self._load_chunks(ids)
            if bad:
                self._drop(bad, "digest or shape mismatch")
                continue  # index again without them: their keys become misses
            base = {cid: b for cid, b in zip(ids.tolist(), np.cumsum([0] + [len(o) for o in loaded])[:-1].tolist())}
            allout = Outputs.concat(loaded)
            item = np.fromiter((base[c] for c in want_chunk.tolist()), dtype=np.int64, count=len(want_chunk)) + want_pos
            return hit, allout.take(item)
        return np.zeros(len(keys), dtype=bool), empty  # pragma: no cover - a store rewritten under our feet

    def _load_chunks(self, ids: np.ndarray):
        got: dict[int, Outputs] = {}
        bad: list[int] = []
        ids_l = [int(i) for i in ids]
        for s in range(0, len(ids_l), _SQL_CHUNK_IDS):
            part = ids_l[s:s + _SQL_CHUNK_IDS]
            q = ("SELECT id, n, CAST(keys AS BLOB), CAST(offsets AS BLOB), CAST(vals AS BLOB), "
                 "CASE WHEN tags IS NULL THEN NULL ELSE CAST(tags AS BLOB) END, CAST(digest AS BLOB) "
                 f"FROM chunks WHERE id IN ({','.join('?' * len(part))})")
            for cid, n, k, off, vals, tags, dig in self._con.execute(q, part):
                out = self._decode(n, k, off, vals, tags, dig)
                if out is None:
                    bad.append(cid)
                else:
                    got[cid] = out
        bad += [i for i in ids_l if i not in got and i not in bad]  # vanished between index and load
        return [got[i] for i in ids_l if i in got], bad

    def _decode(self, n, k, off, vals, tags, dig) -> Outputs | None:
        blobs_ok = all(isinstance(b, bytes) for b in (k, off, vals)) and (tags is None or isinstance(tags, bytes))
        if not blobs_ok or dig != _chunk_digest(n, self.width, k, off, vals, tags):
            return None
        if (tags is not None) != self.with_tags or len(off) != 8 * (n + 1) or len(vals) % (8 * max(self.width, 1)):
            return None
        try:
            offsets = np.frombuffer(off, dtype="<i8").astype(np.int64)
            values = np.frombuffer(vals, dtype="<f8").reshape(-1, self.width).astype(np.float64)
            tag_ids = None if tags is None else np.frombuffer(tags, dtype="<i4").astype(np.int32)
            return Outputs(values, offsets, tag_ids)
        except Exception:  # inconsistent offsets etc.
            return None

    def put(self, keys: np.ndarray, outputs: Outputs) -> None:
        """Store one chunk (one transaction: all of it or nothing)."""
        keys = np.asarray(keys, dtype=f"S{KEY_BYTES}")
        if len(keys) != len(outputs):
            raise BiasSuiteError(f"cache put: {len(keys)} keys for {len(outputs)} predictions")
        if outputs.values.shape[1] != self.width or (outputs.tags is not None) != self.with_tags:
            raise BiasSuiteError("cache put: predictions do not have this store's shape")
        if not len(keys):
            return
        k = keys.tobytes()
        off = outputs.offsets.astype("<i8").tobytes()
        vals = outputs.values.astype("<f8").tobytes()
        tags = None if outputs.tags is None else outputs.tags.astype("<i4").tobytes()
        dig = _chunk_digest(len(keys), self.width, k, off, vals, tags)
        with self._con:
            self._con.execute("BEGIN IMMEDIATE")
            self._con.execute("INSERT INTO chunks (n, keys, offsets, vals, tags, digest, created) VALUES (?,?,?,?,?,?,?)",
                              (len(keys), k, off, vals, tags, dig, time.time()))


class PredictionCache:
    """All cached predictions under one folder.

    Parameters
    ----------
    root : folder, optional
        Default :func:`default_cache_root` (``$BIAS_SUITE_CACHE/predictions``
        or ``~/.cache/bias_suite/predictions``).

    Examples
    --------
    >>> cache = PredictionCache(tmp)                                    # doctest: +SKIP
    >>> with cache.store(model.fingerprint(), "classification", 3, False) as s:  # doctest: +SKIP
    ...     hit, out = s.lookup(keys)
    """

    def __init__(self, root=None):
        self.root = Path(root).expanduser() if root is not None else default_cache_root()

    def store(self, fingerprint: dict, kind: str, width: int, with_tags: bool) -> ModelStore:
        """Open (creating if needed) the store of one model fingerprint."""
        sid = store_id(fingerprint, kind)
        return ModelStore(self.root / f"{sid}.sqlite", fingerprint=fingerprint, kind=kind, width=width,
                          with_tags=with_tags)

    def _files(self) -> list[Path]:
        return sorted(self.root.glob("*.sqlite")) if self.root.is_dir() else []

    def info(self) -> list[dict]:
        """One dict per store: ``id``, ``model``, ``kind``, ``predictions``,
        ``chunks``, ``bytes`` (file + WAL), ``created``, ``last_used``
        (ISO times), ``fingerprint``; plus ``corrupt_files`` moved aside."""
        out = []
        for p in self._files():
            size = sum(Path(str(p) + s).stat().st_size for s in ("", "-wal") if Path(str(p) + s).exists())
            row = {"id": p.stem, "path": str(p), "bytes": size}
            try:
                con = sqlite3.connect(f"file:{p}?mode=ro", uri=True, timeout=10)
                try:
                    meta = dict(con.execute("SELECT k, v FROM meta").fetchall())
                    n, chunks = con.execute("SELECT COALESCE(SUM(n), 0), COUNT(*) FROM chunks").fetchone()
                finally:
                    con.close()
                fp = json.loads(meta.get("fingerprint", "{}"))
                row.update(model=fp.get("model"), kind=meta.get("kind"), predictions=int(n), chunks=int(chunks),
                           created=_iso(meta.get("created")), last_used=_iso(meta.get("last_used")), fingerprint=fp)
            except (sqlite3.DatabaseError, ValueError) as e:
                row.update(model=None, kind=None, predictions=None, chunks=None, error=str(e))
            out.append(row)
        return out

    def corrupt_files(self) -> list[Path]:
        return sorted(p for p in self.root.glob("*.corrupt-*")) if self.root.is_dir() else []

    def clear(self, match: str | None = None) -> list[str]:
        """Delete stores (all, or those whose id starts with ``match`` or whose
        model contains it) and files moved aside as corrupt. Returns the ids removed."""
        removed = []
        for row in self.info():
            if match is not None and not (row["id"].startswith(match) or match in str(row.get("model") or "")):
                continue
            for s in ("", "-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(str(row["path"]) + s)
            removed.append(row["id"])
        if match is None:
            for p in self.corrupt_files():
                with contextlib.suppress(FileNotFoundError):
                    os.remove(p)
        return removed


def _iso(t) -> str | None:
    if t is None:
        return None
    try:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(float(t)))
    except ValueError:
        return None
