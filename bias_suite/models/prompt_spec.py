"""What a language model used as a classifier needs besides its weights: a
prompt and a verbalizer (the answer words of each class).

- :func:`check_prompt` and :func:`check_verbalizer` validate the two for
  :class:`~bias_suite.models.prompt.PromptClassifier`;
- :class:`PromptSpec` holds a model argument with its prompt and verbalizer
  (what ``bias-suite run --model PATH --prompt ... --verbalizer ...`` or a
  model spec file describe); the classification family turns it into a
  :class:`~bias_suite.models.prompt.PromptClassifier` with the run's device,
  dtype and batch size;
- :func:`read_prompt_spec` reads a model spec file (YAML, safe-loaded)::

      model: ./my-causal-lm          # a folder (relative to this file) or a hub id
      prompt: "Review: {text} Sentiment:"
      verbalizer:
        negative: [bad, awful]
        neutral: okay
        positive: good
      scoring: first-token           # optional: first-token (default) or word

No heavy library (torch, transformers) is imported here.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from bias_suite.exceptions import BiasSuiteError, ModelError

__all__ = ["PromptSpec", "SCORINGS", "LM_KINDS", "check_prompt", "check_verbalizer", "parse_verbalizer",
           "read_prompt_spec", "is_prompt_spec_file", "fill_prompt", "PLACEHOLDER"]

#: Class scores: the answer words' first sub-token (one forward pass per
#: text), or their whole-word likelihood (more passes for multi-token words).
SCORINGS = ("first-token", "word")
#: Language-model kinds: decided from the model's config, or given.
LM_KINDS = ("auto", "causal", "masked")
#: The placeholders of a prompt; every other brace is literal text.
PLACEHOLDER = re.compile(r"\{(text|mask)\}")
_SPEC_KEYS = ("model", "prompt", "verbalizer", "scoring", "kind", "answer_prefix")
_SPEC_SUFFIXES = (".yaml", ".yml")


def check_prompt(prompt: Any, masked: bool | None = None) -> str:
    """``prompt`` validated: a string with ``{text}``; with ``masked=True``
    exactly one ``{mask}``, with ``masked=False`` none (None: not checked).

    Raises
    ------
    ModelError
        With a one-line message saying what is missing.
    """
    if not isinstance(prompt, str) or not prompt.strip():
        raise ModelError(f"the prompt must be a non-empty string with {{text}} in it, got {prompt!r}")
    names = PLACEHOLDER.findall(prompt)
    if "text" not in names:
        raise ModelError(f"the prompt {prompt!r} has no {{text}}: put {{text}} where the text goes, "
                         "e.g. 'Review: {text} Sentiment:'")
    if masked is True and names.count("mask") != 1:
        what = "no {mask}" if "mask" not in names else f"{names.count('mask')} {{mask}}s"
        raise ModelError(f"the prompt {prompt!r} of a masked language model has {what}: put one {{mask}} where the "
                         "answer word goes, e.g. 'Review: {text} Sentiment: {mask}.'")
    if masked is False and "mask" in names:
        raise ModelError(f"the prompt {prompt!r} has {{mask}}, but the model is a causal language model: its answer "
                         "follows the prompt's last token; remove {mask} (or use a masked language model)")
    return prompt


def fill_prompt(prompt: str, text: str, mask: str = "") -> str:
    """``prompt`` with ``{text}`` replaced by ``text`` and ``{mask}`` by
    ``mask`` in one pass (placeholders inside ``text`` stay as they are)."""
    return PLACEHOLDER.sub(lambda m: text if m.group(1) == "text" else mask, prompt)


def _words(value: Any, cls: str) -> list[str]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, (list, tuple)):
        raise ModelError(f"verbalizer class {cls!r}: answer words must be a string or a list of strings, "
                         f"got {type(value).__name__}")
    words = []
    for w in value:
        if not isinstance(w, str):
            raise ModelError(f"verbalizer class {cls!r}: answer word {w!r} is not a string")
        w = w.strip()
        if not w:
            raise ModelError(f"verbalizer class {cls!r} has an empty answer word")
        if w not in words:
            words.append(w)
    if not words:
        raise ModelError(f"verbalizer class {cls!r} has no answer words")
    return words


def check_verbalizer(verbalizer: Any) -> dict[str, list[str]]:
    """``{class: [answer words]}`` in the given class order, from a mapping
    of class names to a word, a list of words, or a comma-separated string
    of words (as on the command line).

    Raises
    ------
    ModelError
        For no classes, a class without words, a non-string word, or a word
        given to two classes.
    """
    if isinstance(verbalizer, (list, tuple)) and all(isinstance(s, str) for s in verbalizer):
        return parse_verbalizer(verbalizer)
    if not isinstance(verbalizer, Mapping) or not verbalizer:
        raise ModelError("the verbalizer must map each class to its answer words, e.g. "
                         f"{{'negative': ['bad', 'awful'], 'positive': 'good'}}; got {verbalizer!r}")
    out: dict[str, list[str]] = {}
    owner: dict[str, str] = {}
    for cls, value in verbalizer.items():
        if not isinstance(cls, str) or not cls.strip():
            raise ModelError(f"verbalizer class names must be non-empty strings, got {cls!r}")
        cls = cls.strip()
        if cls in out:
            raise ModelError(f"verbalizer class {cls!r} is given twice")
        words = _words(value, cls)
        for w in words:
            if w in owner:
                raise ModelError(f"answer word {w!r} is given to two classes, {owner[w]!r} and {cls!r}")
            owner[w] = cls
        out[cls] = words
    if len(out) < 2:
        raise ModelError(f"the verbalizer needs at least two classes (their probabilities are normalised over "
                         f"the classes), got {list(out)}")
    return out


def parse_verbalizer(options: Sequence[str]) -> dict[str, list[str]]:
    """Repeated ``CLASS=WORD[,WORD]`` options -> a verbalizer (a class given
    twice collects the words of both)."""
    merged: dict[str, list[str]] = {}
    for s in options:
        cls, sep, words = str(s).partition("=")
        if not sep or not cls.strip() or not words.strip():
            raise ModelError(f"--verbalizer expects CLASS=WORD[,WORD,...], got {s!r}")
        merged.setdefault(cls.strip(), []).extend(words.split(","))
    return check_verbalizer(merged)


@dataclass
class PromptSpec:
    """A language model with its prompt and verbalizer, before loading.

    ``model`` is a folder or hub id; the other fields are
    :class:`~bias_suite.models.prompt.PromptClassifier`'s arguments of the
    same names. ``name`` is what results call the model (default: ``model``).
    """

    model: str
    prompt: str
    verbalizer: dict
    scoring: str = "first-token"
    kind: str = "auto"
    answer_prefix: str | None = None
    name: str | None = None
    source: str | None = field(default=None, compare=False)  # the spec file, when read from one

    def __post_init__(self):
        if not isinstance(self.model, (str, os.PathLike)) or not str(self.model).strip():
            raise ModelError(f"a prompt spec needs a model (folder or hub id), got {self.model!r}")
        self.model = str(self.model)
        self.prompt = check_prompt(self.prompt)
        self.verbalizer = check_verbalizer(self.verbalizer)
        if self.scoring not in SCORINGS:
            raise ModelError(f"unknown scoring {self.scoring!r}; use one of {', '.join(SCORINGS)}")
        if self.kind not in LM_KINDS:
            raise ModelError(f"unknown language-model kind {self.kind!r}; use one of {', '.join(LM_KINDS)}")
        if self.answer_prefix is not None and not isinstance(self.answer_prefix, str):
            raise ModelError(f"answer_prefix must be a string, got {self.answer_prefix!r}")

    @property
    def display_name(self) -> str:
        return self.name or self.model

    def options(self) -> dict:
        """The classifier arguments besides the model."""
        return {"prompt": self.prompt, "verbalizer": self.verbalizer, "scoring": self.scoring, "kind": self.kind,
                "answer_prefix": self.answer_prefix}


def is_prompt_spec_file(model: Any) -> bool:
    """Whether a model argument names a model spec file (an existing
    ``.yaml``/``.yml`` file)."""
    if not isinstance(model, (str, os.PathLike)):
        return False
    p = Path(model).expanduser()
    return p.suffix.lower() in _SPEC_SUFFIXES and p.is_file()


def read_prompt_spec(path: str | os.PathLike) -> PromptSpec:
    """Read a model spec file (see the module doc; YAML safe-loaded). A
    relative ``model`` that exists next to the file is taken from there.

    Raises
    ------
    ModelError
        ``FILE:LINE: field 'KEY': ...`` for a missing or unknown key or a
        bad value.
    """
    from bias_suite.suites.loader import read_yaml

    path = Path(path).expanduser()
    try:
        data, lines = read_yaml(path)
    except BiasSuiteError as e:
        raise ModelError(f"model spec {e}") from None

    def where(key=None) -> str:
        line = lines.get((key,)) if key is not None else None
        return f"{path}" + (f":{line}" if line else "") + (f": field {key!r}" if key else "")

    if not isinstance(data, dict):
        raise ModelError(f"{where()}: a model spec is a mapping with keys model, prompt and verbalizer")
    unknown = [k for k in data if k not in _SPEC_KEYS]
    if unknown:
        raise ModelError(f"{where(unknown[0])}: unknown key; a model spec has {', '.join(_SPEC_KEYS)}")
    for k in ("model", "prompt", "verbalizer"):
        if data.get(k) in (None, ""):
            raise ModelError(f"{where()}: field {k!r} is missing")
    model = data["model"]
    if not isinstance(model, str):
        raise ModelError(f"{where('model')}: a folder or hub id, got {model!r}")
    local = (path.parent / model).expanduser()
    if not Path(model).expanduser().is_absolute() and local.is_dir():
        model = str(local.resolve())
    values = {k: data[k] for k in _SPEC_KEYS if k in data}
    values["model"] = model
    for key in _SPEC_KEYS:  # check field by field, so that the error names its line
        try:
            if key == "prompt":
                check_prompt(values[key])
            elif key == "verbalizer":
                check_verbalizer(values[key])
        except ModelError as e:
            raise ModelError(f"{where(key)}: {e}") from None
    try:
        return PromptSpec(**values, source=str(path))
    except ModelError as e:
        bad = next((k for k in ("scoring", "kind", "answer_prefix") if k in values and k in str(e)), None)
        raise ModelError(f"{where(bad)}: {e}") from None
