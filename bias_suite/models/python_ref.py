"""Python models named by reference: ``module:attribute`` or
``path/to/file.py:attribute`` (what ``bias-suite run --model`` takes for a
model written in Python).

The attribute (dots walk into it: ``pkg.models:registry.sentiment``) may be

- a predict function, ``texts -> probabilities`` or CheckList's ``(preds,
  confs)``: wrapped in :class:`~bias_suite.models.base.CallablePredictor`,
  its class names from ``class_names=`` (``--classes``) or the function's own
  ``class_names`` attribute, its cache key from a ``fingerprint`` attribute
  (a string or dict, e.g. ``predict.fingerprint = "my-model-v3"``); without
  one its predictions are not cached;
- a predictor object (``predict_proba`` and ``class_names``, or a
  scikit-learn style ``predict_proba`` with ``classes_``) or a tagger
  (``predict(tokens_list)`` and ``tag_names``): used as it is;
- a class of either: instantiated with no arguments.

A module is imported as Python imports it, with the working folder on the
path (the ``bias-suite`` script does not put it there by itself); a ``.py``
file is loaded from its path.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import re
import sys
from pathlib import Path
from typing import Any, Sequence

from bias_suite.exceptions import ModelError, did_you_mean, option

__all__ = ["is_python_ref", "load_python_model"]

_DOTTED = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_MODULE_REF = re.compile(rf"^(?P<module>{_DOTTED}):(?P<attr>{_DOTTED})$")
_FILE_REF = re.compile(rf"^(?P<file>.+\.py):(?P<attr>{_DOTTED})$")


def is_python_ref(text: Any) -> bool:
    """Whether ``text`` names a Python model (``module:attribute`` or
    ``file.py:attribute``) rather than a model folder, hub id or default
    name. An existing path is never a reference."""
    if not isinstance(text, str) or ":" not in text:
        return False
    if Path(text).expanduser().exists():
        return False
    return bool(_MODULE_REF.match(text) or _FILE_REF.match(text))


def _import_module(name: str):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        here = os.getcwd()
        top = name.split(".")[0]
        if e.name != top or here in sys.path or "" in sys.path:
            raise
        sys.path.insert(0, here)  # as `python -m` would have it: modules of the working folder
        return importlib.import_module(name)


def _load_file(path: Path):
    if not path.is_file():
        raise ModelError(f"model file {str(path)!r} not found")
    name = "bias_suite_user_model_" + re.sub(r"\W", "_", str(path.resolve()))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pickling (the Ray engine) finds its functions by module name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _module_of(ref: str):
    m = _FILE_REF.match(ref)  # "x.py:attr" is a file, never a module "x" with a submodule "py"
    if m:
        where, attr = m.group("file"), m.group("attr")
        load = lambda: _load_file(Path(where).expanduser())  # noqa: E731
    else:
        m = _MODULE_REF.match(ref)
        if m is None:
            raise ModelError(f"model reference {ref!r} is not MODULE:ATTRIBUTE nor FILE.py:ATTRIBUTE")
        where, attr = m.group("module"), m.group("attr")
        load = lambda: _import_module(where)  # noqa: E731
    try:
        return load(), attr
    except ModelError:
        raise
    except ModuleNotFoundError as e:
        raise ModelError(f"cannot import {where!r} for model {ref!r}: {e} (run from the module's folder, add it to "
                         f"PYTHONPATH, or name the file: path/to/{where.split('.')[-1]}.py:{attr})") from e
    except Exception as e:  # the user's module failed while it was imported
        raise ModelError(f"importing {where!r} for model {ref!r} failed: {type(e).__name__}: {e}") from e


def _attribute(module, attr: str, ref: str):
    obj = module
    for i, part in enumerate(attr.split(".")):
        if not hasattr(obj, part):
            names = [n for n in dir(obj) if not n.startswith("_")]
            where = ".".join([module.__name__.removeprefix("bias_suite_user_model_")] + attr.split(".")[:i])
            raise ModelError(f"model {ref!r}: {where!r} has no attribute {part!r}{did_you_mean(part, names)}")
        obj = getattr(obj, part)
    return obj


def load_python_model(ref: str, *, class_names: Sequence[str] | None = None):
    """The model ``ref`` names (see the module doc): a predictor, or a tagger.

    Parameters
    ----------
    ref : ``"module:attribute"`` or ``"path/to/file.py:attribute"``.
    class_names : the class names of a predict function (its column order);
        for an object with class names of its own they must agree.

    Raises
    ------
    ModelError
        When the module cannot be imported (or fails while it is), the
        attribute is missing, a class needs arguments, the object is no model,
        or the class names are missing or disagree.
    """
    from bias_suite.models.base import CallablePredictor, as_predictor

    module, attr = _module_of(ref)
    obj = _attribute(module, attr, ref)
    if isinstance(obj, type):
        try:
            obj = obj()
        except TypeError as e:
            raise ModelError(f"model {ref!r} is a class that needs arguments ({e}); name an instance instead "
                             f"(e.g. model = {obj.__name__}(...) in the module, then --model ...:model)") from e
    if hasattr(obj, "predict") and hasattr(obj, "tag_names"):
        if class_names is not None:
            raise ModelError(f"model {ref!r} is a tagger (tag_names {list(obj.tag_names)}): "
                             + option("class_names=", "--classes") + " is for classifiers")
        return obj
    if hasattr(obj, "predict_proba"):
        return as_predictor(obj, class_names)
    if not callable(obj):
        raise ModelError(f"model {ref!r} is a {type(obj).__name__}, not a model: expected a predict function "
                         "(texts -> probabilities), an object with predict_proba and class_names, or a tagger")
    names = class_names if class_names is not None else getattr(obj, "class_names", None)
    if names is None:
        raise ModelError(f"model {ref!r} is a predict function without class names: give "
                         + option("class_names=[...]", "--classes NAME,NAME,...")
                         + " in the column order of its probabilities, or set its class_names attribute")
    fingerprint = getattr(obj, "fingerprint", None)
    if callable(fingerprint) or not isinstance(fingerprint, (str, dict)):
        fingerprint = None
    own = getattr(obj, "name", None)
    name = own if isinstance(own, str) and own.strip() else (None if fingerprint is not None else ref)
    return CallablePredictor(obj, names, fingerprint=fingerprint, name=name)
