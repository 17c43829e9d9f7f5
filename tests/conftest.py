import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Runs cache predictions by default; keep the tests' caches out of the user's.
if "BIAS_SUITE_PREDICTION_CACHE" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["BIAS_SUITE_PREDICTION_CACHE"] = tempfile.mkdtemp(prefix="bias_suite_test_predictions_")
    atexit.register(shutil.rmtree, os.environ["BIAS_SUITE_PREDICTION_CACHE"], ignore_errors=True)


def pytest_terminal_summary(terminalreporter):
    """Say how many documentation blocks ran and which were skipped, and why."""
    reports = [r for key in ("passed", "failed", "skipped") for r in terminalreporter.stats.get(key, [])
               if getattr(r, "nodeid", "").startswith("tests/test_docs.py::test_doc_block")]
    if not reports:
        return
    skipped = [r for r in reports if r.skipped]
    ran = len(reports) - len(skipped)
    terminalreporter.write_line(f"documentation blocks: {ran} run, {len(skipped)} skipped")
    for r in skipped:
        reason = r.longrepr[2] if isinstance(r.longrepr, tuple) else str(r.longrepr)
        terminalreporter.write_line(f"  skipped {reason.removeprefix('Skipped: ')}")


import pytest  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _metric_registry_per_module():
    """Metrics a test module registers (README and docs examples register
    their own) leave the registry when the module is done, so a later
    module's default metric set is the named metrics."""
    from bias_suite.metrics import catalog

    before = dict(catalog.REGISTRY)
    yield
    catalog.REGISTRY.clear()
    catalog.REGISTRY.update(before)


@pytest.fixture(scope="module")
def vader_sdist_path():
    """The cached vaderSentiment sdist the default models are built from; the
    test is skipped offline when no copy is cached."""
    from bias_suite.exceptions import ModelError
    from bias_suite.models import vader as vd

    try:
        return vd.vader_sdist()
    except ModelError as e:  # offline without a cached copy
        if "could not download" in str(e):
            pytest.skip(f"vaderSentiment sdist not cached and not downloadable: {e}")
        raise
