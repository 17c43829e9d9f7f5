"""Statistics on scored examples: significance tests across counterfactual
templates (:mod:`.significance`) and Bernstein-bounded uncertainty
(:mod:`.bernstein`). The cluster bootstrap lives in ``bias_suite.stats.bootstrap``
and the verdicts (``verdict`` column) in ``bias_suite.stats.verdicts`` (import
them from there; they build on ``bias_suite.metrics``).

All result-producing functions return the tidy results table of docs/formats.md
(columns metric, family, view, attribute, class, group, value, ci_low,
ci_high, n, note).
"""
from importlib import import_module

# name -> submodule; imported on first use (scipy.stats alone takes about a
# second to import, which a run that only needs metric values should not pay)
_LAZY = {
    **dict.fromkeys(["BernsteinPreset", "DemographicParity", "EqualizedOdds", "EqualOpportunity",
                     "FalsePositiveParity", "PRESETS", "SampleSize", "bernstein_interval", "bernstein_rows",
                     "bernstein_t", "min_detectable_bias", "sample_size"], "bernstein"),
    **dict.fromkeys(["add_adjusted_pvalues", "adjust_pvalues", "block_test", "significance_from_block_scores",
                     "significance_tests", "template_group_scores"], "significance"),
}


def __getattr__(name):
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BernsteinPreset", "DemographicParity", "EqualOpportunity",
    "FalsePositiveParity", "EqualizedOdds", "PRESETS", "SampleSize",
    "bernstein_t", "bernstein_interval", "sample_size", "min_detectable_bias",
    "bernstein_rows",
    "adjust_pvalues", "template_group_scores", "block_test",
    "significance_from_block_scores", "add_adjusted_pvalues", "significance_tests",
]
