"""Deprecated path: run folders and tidy results live in :mod:`bias_suite.io.results`."""
from ..io.results import *  # noqa: F401,F403
from ..io.results import (OUTPUT_NAMES, RESULTS_CSV, RESULTS_JSONL, RUN_JSON, SUBFOLDERS, commit_run_folder,  # noqa: F401
                          file_entry, prepare_run_folder, read_manifest, read_results, remove_temp_files, run_file,
                          write_results)
