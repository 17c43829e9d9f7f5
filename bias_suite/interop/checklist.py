"""CheckList interop: INV tests from bias_suite suites, two-way conversion,
and bias_suite tests inside a CheckList ``TestSuite`` (docs/checklist.md).

Everything here builds and runs *real* ``checklist`` objects
(``checklist.test_types.INV``, ``checklist.test_suite.TestSuite``,
``checklist.expect.Expect``); bias_suite adds the glue.

Invariance semantics (one INV per attribute)
-------------------------------------------
* One :class:`~checklist.test_types.INV` per attribute (name ``"INV <attribute>"``,
  capability ``"Fairness"``), spanning every suite and template family of the
  input. One test case per counterfactual template (the ``template`` column:
  suite/template id plus the lexicon fill), taken from
  :func:`bias_suite.suites.views.counterfactual_view`, so only templates that
  contain every group of the attribute are used (as for the counterfactual
  metrics).
* The case's sentences are its variants in group order: ``mode="per_group"``
  one variant per group (the view's seeded sampler draws one tuple per
  template: same seed, same variants), ``mode="all_terms"`` every term of
  every group (group order, then term order).
* Expectation, as in CheckList's INV, compares every sentence with the *first*
  sentence of its case (``Expect.pairwise``, ``agg_fn="all_except_first"``):
  - ``criterion="prob"`` (default): a sentence fails when any class
    probability differs from the first sentence's by more than ``threshold``
    (``max_c |p(x, c) - p(x_first, c)| > threshold``);
  - ``criterion="checklist"``: CheckList's own ``Expect.inv(threshold)``: fails
    only when the predicted class changes *and* the probability of the first
    sentence's predicted class moves by more than ``threshold``;
  - sequence labelling (``criterion="tags"``): fails when any predicted tag
    outside the identity-term span differs from the first sentence's.
  A case fails when any of its sentences fails.
* Tidy rows (family ``invariance``, view ``counterfactual``, metric
  ``INV-FailRate``, class ``all``): per attribute (group null) the fraction of
  failing cases (= CheckList's fail rate, ``n`` = test cases); per group pair
  ``"a|b"`` the fraction of test cases that fail *and* in which a sentence of
  group ``a`` and one of group ``b`` differ by the same criterion (symmetric
  form), so a pair's value never exceeds the attribute's (``n`` = test cases
  holding both groups).
"""
from __future__ import annotations

# The implementation is split by responsibility; every public name stays importable from here.
from ..exceptions import DillWarning  # noqa: F401
from .invariance import (  # noqa: F401
    CAPABILITY, CRITERIA, FAMILY, INV_METRIC, invariance_tests, MODES, prob_invariance, PROB_METRIC,
    tag_invariance, VIEW,
)
from .predict_fns import checklist_predict_fn, ScoredLookup, tagger_predict_fn  # noqa: F401
from .bias_tests import add_test, BiasTestSuite, MetricTest, run_testsuite, SignificanceTest, to_testsuite  # noqa: F401
from .results import (  # noqa: F401
    CheckListRun, examples_from_testsuite, FAILURE_COLUMNS, failures, inv_metric_name, invariance_and_failures,
    invariance_rows, run_checklist, scored_from_testsuite,
)
from .editor import from_editor, suite_from_templates  # noqa: F401
from .perturb import perturb  # noqa: F401
from .from_tests import adopt_inv, from_checklist, identity_lexicon  # noqa: F401
from .exchange import (  # noqa: F401
    export_checklist, import_checklist, import_raw_file, load_testsuite, MANIFEST, RAW_FILE, save_testsuite, SPEC,
    testsuite_from_dict, testsuite_to_dict, write_predictions,
)

# The names of ``bs.checklist`` (docs/checklist.md lists them by what they do); the
# other names imported above are the package's own.
__all__ = [
    "invariance_tests", "to_testsuite", "run_testsuite", "invariance_rows", "failures",
    "checklist_predict_fn", "tagger_predict_fn",
    "export_checklist", "write_predictions", "import_checklist", "import_raw_file", "CheckListRun",
    "from_editor", "suite_from_templates", "run_checklist", "from_checklist", "adopt_inv",
    "MetricTest", "SignificanceTest", "add_test", "BiasTestSuite",
    "save_testsuite", "load_testsuite", "perturb",
]
