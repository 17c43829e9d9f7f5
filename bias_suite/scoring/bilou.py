"""BILOU tags (kept at this name for existing imports): the helpers live in
:mod:`bias_suite.suites.bilou`, beside the sequence-labelling suites whose
tags they define, so that suites and models use them without importing the
scoring layer."""
from ..suites.bilou import *  # noqa: F401,F403
from ..suites.bilou import __all__  # noqa: F401
