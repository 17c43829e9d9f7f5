"""What a model argument names: a default model, a local folder or a hub id.

Every place that takes a model by name (the CLI's ``--model``,
:class:`~bias_suite.models.hf.HFClassifier`, the token classifier, the CRF
tagger, :func:`~bias_suite.models.base.as_predictor`, the CheckList helpers)
resolves it here, so that the same names work everywhere:

- ``default-sentiment`` and ``default-ner`` (and ``default``: the default of
  the model's kind) are built offline on first use and then read from the
  model cache;
- an existing folder is used as it is; a path that does not exist is an
  error at once;
- anything else is a Hugging Face hub id. One found in the local hub cache is
  used; otherwise the hub is asked once, with a short time-out, and a hub
  that cannot be reached (or ``HF_HUB_OFFLINE=1``) is an error at once that
  lists the default models, instead of the download retries of transformers.

The default models register themselves (:mod:`bias_suite.models.default`
calls :func:`register_default`), so this module imports no builder.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from ..exceptions import ModelError

__all__ = ["register_default", "default_names", "default_for", "locate_model"]

#: name -> (kind, ensure(progress=...) -> Path); filled by bias_suite.models.default
_DEFAULTS: dict[str, tuple[str, Callable[..., Path]]] = {}
_KIND_DEFAULT = {"classifier": "default-sentiment", "tagger": "default-ner"}
HUB_TIMEOUT_S = 5.0


def register_default(name: str, kind: str, ensure: Callable[..., Path]) -> None:
    """Make ``name`` a default-model name of ``kind`` ("classifier" or
    "tagger"); ``ensure(progress=bool)`` returns its built folder."""
    _DEFAULTS[name] = (kind, ensure)


def default_names() -> list[str]:
    """The names that resolve to a default model, ``default`` included."""
    return ["default", *_DEFAULTS]


def default_for(name: str, kind: str) -> str | None:
    """The registered default model ``name`` stands for (``default`` is the
    default of ``kind``), or None when it is no default name."""
    name = _KIND_DEFAULT.get(kind, name) if name == "default" else name
    return name if name in _DEFAULTS else None


def _looks_like_path(model) -> bool:
    text = str(model)
    return isinstance(model, Path) or text.startswith((".", os.sep, "~")) or text.count("/") > 1 or "\\" in text


def _hub_error(name: str, why: str) -> ModelError:
    return ModelError(f"model {name!r} is not a default model ({', '.join(default_names())}), not a folder, and "
                      f"not a hub model that can be loaded here: {why}")


def locate_model(model, *, kind: str = "classifier", progress: bool = True) -> tuple[str, bool]:
    """``(model_id, is_local)`` for a model argument.

    ``model_id`` is an absolute folder when ``is_local`` (a folder, or a
    default model, built first when missing), else a hub id that is in the
    local hub cache or that the hub answered for.

    Raises
    ------
    ModelError
        For a path that does not exist, a default model of another kind
        (``default-ner`` given to a classifier), or a hub id that is neither
        cached nor reachable.
    """
    path = Path(model).expanduser()
    if path.is_dir():
        return str(path.resolve()), True
    name = str(model)
    default = default_for(name, kind)
    if default is not None:
        own_kind, ensure = _DEFAULTS[default]
        if own_kind != kind:
            raise ModelError(f"{default!r} is a {own_kind}, not a {kind}: use "
                             f"{_KIND_DEFAULT[kind]!r} (or 'default') here")
        return str(Path(ensure(progress=progress)).resolve()), True
    if _looks_like_path(model):
        raise ModelError(f"model folder {name!r} does not exist")
    return _hub_model(name), False


def _hub_model(name: str) -> str:
    try:
        from huggingface_hub import constants, model_info, try_to_load_from_cache
    except ImportError:  # pragma: no cover - transformers always brings huggingface_hub
        return name
    try:
        cached = try_to_load_from_cache(name, "config.json")
    except Exception as e:  # an id the hub library refuses (bad characters, ...)
        raise _hub_error(name, f"{type(e).__name__}: {e}") from None
    if isinstance(cached, str):
        return name
    if constants.HF_HUB_OFFLINE:
        raise _hub_error(name, "it is not in the local hub cache and HF_HUB_OFFLINE is set")
    try:
        model_info(name, timeout=HUB_TIMEOUT_S)
    except Exception as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise _hub_error(name, f"the hub did not answer for it ({type(e).__name__}: {first[:200]})") from None
    return name
