"""Registry of the buildable default models (``bias-suite models build|list``).

The recipes live in their own modules: :mod:`bias_suite.models.default_sentiment`
and :mod:`bias_suite.models.default_ner`; their shared data and machinery in
:mod:`bias_suite.models.vader` and :mod:`bias_suite.models.building`. Each
recipe records its :data:`RECIPE` key in ``metrics.json``; a cached model
built by another recipe is rebuilt by :func:`ensure_model` (the old folder
stays in place until the new one replaces it).
"""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Callable

from bias_suite import paths
from bias_suite.exceptions import ModelError
from bias_suite.models.building import built_recipe, is_built
from bias_suite.models.default_sentiment import build_default_sentiment
from bias_suite.models.locate import register_default

__all__ = [
    "DEFAULT_MODELS", "build_default_sentiment", "build_model", "current_recipe", "ensure_default_sentiment",
    "ensure_model", "is_built", "list_models",
]

log = logging.getLogger(__name__)


def _build_default_ner(**kw: Any) -> Path:
    from bias_suite.models.default_ner import build_default_ner

    return build_default_ner(**kw)


#: Buildable default models: name -> builder(out_dir=None, **kw) -> Path.
DEFAULT_MODELS: dict[str, Callable[..., Path]] = {
    "default-sentiment": build_default_sentiment,
    "default-ner": _build_default_ner,  # bias_suite.models.default_ner
}

_DESCRIPTIONS = {
    "default-sentiment": "3-class sentiment (negative/neutral/positive): MiniLM-L6 "
                         "fine-tuned on the VADER human ratings",
    "default-ner": "NER tagger (PER/LOC/ORG/MISC, BILOU): MiniLM-L6 + CRF trained on "
                   "spaCy en_core_web_sm silver labels of the VADER sentences",
}


register_default("default-sentiment", "classifier", lambda progress=True: ensure_model("default-sentiment", progress=progress))
register_default("default-ner", "tagger", lambda progress=True: ensure_model("default-ner", progress=progress))


def current_recipe(name: str) -> str:
    """The recipe key that a fresh build of default model ``name`` records."""
    _builder(name)
    if name == "default-sentiment":
        from bias_suite.models.default_sentiment import RECIPE
    else:
        from bias_suite.models.default_ner import RECIPE
    return RECIPE


def _builder(name: str) -> Callable[..., Path]:
    try:
        return DEFAULT_MODELS[name]
    except KeyError:
        raise ModelError(
            f"unknown model {name!r}; buildable models: {', '.join(DEFAULT_MODELS)}"
        ) from None


def build_model(name: str, **kw: Any) -> Path:
    """Build a registered default model (``bias-suite models build NAME``).

    Parameters
    ----------
    name : str
        A key of :data:`DEFAULT_MODELS`.
    **kw
        Passed to the builder (``out_dir``, ``epochs``, ``force``, ...). A
        folder built by an older recipe is rebuilt even without ``force``.

    Returns
    -------
    Path
        The model folder.
    """
    builder = _builder(name)
    path = Path(kw.get("out_dir") or paths.model_dir(name))
    if is_built(path) and not is_built(path, current_recipe(name)) and not kw.get("force"):
        log.info("%s was built by an older recipe; rebuilding", path)
        kw = dict(kw, out_dir=path, force=True)
    return builder(**kw)


def ensure_model(name: str, **kw: Any) -> Path:
    """The cached folder of model ``name``, building it first if missing or
    built by an older recipe (the old folder is replaced only once the new
    build is complete)."""
    _builder(name)
    path = Path(kw.get("out_dir") or paths.model_dir(name))
    if is_built(path, current_recipe(name)):
        return path
    return build_model(name, **dict(kw, out_dir=path))


def ensure_default_sentiment(**kw: Any) -> Path:
    """The cached default sentiment model folder, built first if missing.

    Parameters
    ----------
    **kw
        Passed to :func:`build_default_sentiment` when a build is needed.
    """
    return ensure_model("default-sentiment", **kw)


def list_models() -> list[dict]:
    """The buildable default models.

    Returns
    -------
    list of dict
        One dict per model: ``name``, ``description``, ``path`` (cache folder),
        ``built`` (bool), ``current`` (built by the current recipe) and, when
        built, ``metrics`` (held-out scores), ``built_at`` and
        ``build_seconds``.
    """
    out = []
    for name in DEFAULT_MODELS:
        path = paths.model_dir(name)
        item = {"name": name, "description": _DESCRIPTIONS.get(name, ""),
                "path": str(path), "built": is_built(path)}
        if item["built"]:
            item["current"] = built_recipe(path) == current_recipe(name)
            try:
                m = json.loads((path / "metrics.json").read_text(encoding="utf-8"))
                item["built_at"] = m.get("built_at")
                item["build_seconds"] = m.get("build_seconds")
                h = m["held_out"]
                if "accuracy" in h:
                    item["metrics"] = {k: h[k] for k in ("accuracy", "macro_f1")}
                else:
                    item["metrics"] = {"span_f1": h["span_scores"]["micro"]["f1"]}
            except (OSError, ValueError, KeyError, TypeError):
                pass
        out.append(item)
    return out
