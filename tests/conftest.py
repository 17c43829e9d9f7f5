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
