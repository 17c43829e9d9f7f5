"""Suites: YAML files -> validated objects -> examples, and the group and
counterfactual views of example tables."""
from .expansion import (
    DEFAULT_MAX_EXAMPLES, EXAMPLE_COLUMNS, check_size, example_counts, example_limit, expand_suite, expand_suites,
    expansion_counts, render, validate_suite,
)
from .grammar import article, tidy, with_article
from .loader import IdentityTerms, Suite, Template, bundled_suites, find_suite, load_identity_terms, load_suite
from .views import CounterfactualView, GroupView, counterfactual_view, group_view

__all__ = [
    "DEFAULT_MAX_EXAMPLES", "EXAMPLE_COLUMNS", "check_size", "example_counts", "example_limit", "validate_suite", "expand_suite", "expand_suites", "expansion_counts", "render", "article", "tidy", "with_article",
    "IdentityTerms", "Suite", "Template", "bundled_suites", "find_suite", "load_identity_terms", "load_suite",
    "CounterfactualView", "GroupView", "counterfactual_view", "group_view",
]
