"""Assert bias thresholds in a project's own pytest suite.

    import bias_suite as bs

    def test_sentiment_model_is_fair_enough():
        result = bs.run(["my_suite.yaml"], "path/to/model", progress=False)
        bs.assert_no_bias(result)                    # the suite's thresholds, else: no material value
        bs.assert_no_bias(result, ["BPSN<0.9", {"metric": "CFGap", "verdict": "material"}])

Rules use the schema of :mod:`bias_suite.gating` (suite-file mappings,
``--fail-if`` strings or :class:`~bias_suite.gating.Rule` objects). Results
may be a ``RunResult``, a tidy results DataFrame or a results folder.
"""
from __future__ import annotations

from .gating import Rule, Violation, check_thresholds, format_violations, parse_condition, parse_verdict_rule

__all__ = ["assert_no_bias", "check_thresholds", "Violation", "Rule", "parse_condition", "parse_verdict_rule"]


def assert_no_bias(results, rules=None, *, msg: str | None = None) -> None:
    """Raise ``AssertionError`` listing every violation of ``rules``.

    Parameters
    ----------
    results : a ``RunResult``, a results DataFrame or a results folder.
    rules : rules to check; default (None) the thresholds of the run's suites,
        or, when there are none, "no value is judged material".
    msg : text put before the list of violations.
    """
    __tracebackhide__ = True  # pytest shows the caller's line
    if rules is None:
        from .gating import rules_from_suites

        rules = rules_from_suites(getattr(results, "suites", None) or []) or [parse_verdict_rule("*", verdict="material")]
    violations = check_thresholds(results, rules)
    if violations:
        text = format_violations(violations)
        raise AssertionError(f"{msg}\n{text}" if msg else text)
