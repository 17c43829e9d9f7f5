"""Writing files so that they appear whole or not at all (the lowest layer:
every other part of bias_suite writes through these).

A hidden temporary file ``.<name>.<random>.tmp`` beside the target is
written, given the mode a plain ``open()`` would give (0o666 less the umask;
0644 under the usual umask 022) and renamed over the target. Folders are
checked before anything is created, and ``..`` is resolved first.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from pathlib import Path

from ..exceptions import OutputError

__all__ = ["atomic_path", "atomic_write_text", "check_folder", "ensure_folder", "file_mode"]

_UMASK_LOCK = threading.Lock()


# --------------------------------------------------------------------------
# atomic writes
# --------------------------------------------------------------------------
def _umask() -> int:
    """The process umask (read without changing it where the OS allows)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a new file gets from ``open()``: 0o666 less the umask."""
    return 0o666 & ~_umask()


def _os_reason(e: OSError) -> str:
    return e.strerror or str(e)


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path beside ``path``; on success give it the mode
    of a new file (umask respected) and rename it over ``path`` (atomic on
    POSIX), on error remove it. OS errors become :class:`OutputError`."""
    path = Path(path).expanduser()
    path = ensure_folder(path.parent) / path.name  # ".." resolved: no stray folders
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise OutputError(f"cannot write {path}: {_os_reason(e)}") from e
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, file_mode())  # mkstemp creates 0600
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(e, OSError) and not isinstance(e, OutputError):
            if isinstance(e, IsADirectoryError) or path.is_dir():
                raise OutputError(f"cannot write {path}: it is a folder") from e
            raise OutputError(f"cannot write {path}: {_os_reason(e)}") from e
        raise


def atomic_write_text(path, text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding=encoding) as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    return Path(path)


def check_folder(path) -> Path:
    """The folder ``path`` names (``..`` and links resolved), checked
    without creating anything: it, or the nearest part of it that exists,
    must be a writable folder; else one :class:`OutputError` says why."""
    shown = Path(path)
    target = Path(os.path.realpath(Path(path).expanduser()))
    existing = target
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise OutputError(f"output folder {shown}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        what = "not writable" if existing == target else f"cannot create it in {existing}"
        raise OutputError(f"output folder {shown}: {what} (permission denied)")
    return target


def ensure_folder(path) -> Path:
    """Create ``path`` (and its parents) as a writable folder, or raise one
    :class:`OutputError` saying why not. ``..`` is resolved first, so that
    ``a/../b`` never leaves an empty ``a`` behind."""
    target = check_folder(path)
    if not target.is_dir():
        try:
            target.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"output folder {Path(path)}: cannot create it ({_os_reason(e)})") from e
    return target
