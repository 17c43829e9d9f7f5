"""CheckList's ``Perturb`` without a network connection.

``checklist.perturb`` imports ``pattern.en``, whose WordNet module downloads
three NLTK corpora (wordnet, wordnet_ic, sentiwordnet) at import time when
they are not on disk. Offline the download fails and so does
``from checklist.perturb import Perturb``, although none of Perturb's
functions uses WordNet (they use spaCy, CheckList's own lexicons and
pattern's verb tables).

:func:`perturb` returns the ``Perturb`` class in both cases: when the corpora
are missing, ``pattern.text.en.wordnet`` is replaced by a stand-in module
before the import, so nothing is downloaded; any use of pattern's WordNet
through it raises an error that says what to install.
"""
from __future__ import annotations

import importlib
import sys
import types
import warnings

__all__ = ["perturb", "wordnet_available", "WORDNET_MODULE"]

WORDNET_MODULE = "pattern.text.en.wordnet"
_CORPORA = ("wordnet", "wordnet_ic", "sentiwordnet")


def wordnet_available() -> bool:
    """True when the NLTK corpora pattern's WordNet module needs are on disk."""
    import nltk

    for token in _CORPORA:
        try:
            nltk.data.find("corpora/" + token)
        except LookupError:
            return False
    return True


class _NoWordNet(types.ModuleType):
    """Stand-in for ``pattern.text.en.wordnet``: importable, unusable."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise RuntimeError(
            "pattern's WordNet is not available offline (bias_suite.interop.perturb replaced it); "
            "install the NLTK corpora wordnet, wordnet_ic and sentiwordnet (python -m nltk.downloader "
            "wordnet wordnet_ic sentiwordnet) to use it"
        )


def perturb():
    """CheckList's ``Perturb`` class, importable with no network.

    >>> Perturb = perturb()  # doctest: +SKIP
    >>> Perturb.perturb(docs, Perturb.change_names, nsamples=100)  # doctest: +SKIP
    """
    if "checklist.perturb" not in sys.modules and WORDNET_MODULE not in sys.modules and not wordnet_available():
        sys.modules[WORDNET_MODULE] = _NoWordNet(WORDNET_MODULE)
    with warnings.catch_warnings():  # checklist's dependencies warn about pkg_resources
        warnings.simplefilter("ignore")
        return importlib.import_module("checklist.perturb").Perturb
