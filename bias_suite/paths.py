"""Where bundled data and caches live."""
from __future__ import annotations

import os
from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_dir(kind: str) -> Path:
    """Folder of bundled YAML files, ``kind`` in {"templates", "identity_terms"}.

    Installed packages carry them in ``bias_suite/data/<kind>``; a checkout
    (or editable install) reads the top-level folders of the repository.
    """
    if kind not in ("templates", "identity_terms"):
        raise ValueError(f"unknown data kind {kind!r}")
    packaged = _PKG / "data" / kind
    if packaged.is_dir():
        return packaged
    return _PKG.parent / kind


def cache_dir() -> Path:
    """Root of bias_suite's caches: ``$BIAS_SUITE_CACHE``, else
    ``$XDG_CACHE_HOME/bias_suite``, else ``~/.cache/bias_suite``."""
    env = os.environ.get("BIAS_SUITE_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "bias_suite"


def model_dir(name: str) -> Path:
    """Cache folder of a model built by ``bias-suite models build NAME``."""
    return cache_dir() / "models" / name
