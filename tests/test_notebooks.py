"""Every notebook in notebooks/ runs top to bottom (nbclient, the venv's
ipykernel as kernel "python3", offline) without a cell error."""
from __future__ import annotations

from pathlib import Path

import pytest

# Runs every notebook in a kernel: left out of make test-fast (pytest -m 'not slow')
pytestmark = pytest.mark.slow


NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))
# what a successful run prints (the notebooks end with their own checks)
EXPECT = {
    "quickstart.ipynb": ("result rows", "report: report.html", "ok"),
    "custom_metric.ipynb": ("FNR-Range", "by hand", "ok"),
    "bring_your_own_predictions.ipynb": ("exit code: 3", "ok"),
    "bring_your_own_data.ipynb": ("--label-map", "examples.jsonl", "ok"),
    "checklist_tutorial.ipynb": ("CheckList INV fail rate", "Swap first names", "CFGap", "ok"),
    "test_a_language_model.ipynb": ("largest difference", "exit code: 0", "has no {mask}", "ok"),
}


def test_the_notebooks_are_there():
    names = {p.name for p in NOTEBOOKS}
    assert {"quickstart.ipynb", "custom_metric.ipynb", "bring_your_own_predictions.ipynb", "bring_your_own_data.ipynb"} <= names


def _text(nb) -> str:
    out = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":
                out.append(o.get("text", ""))
            elif "data" in o:
                out.append(str(o["data"].get("text/plain", "")))
    return "\n".join(out)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    # the kernel inherits the environment: no hub downloads, no colour codes in the outputs
    for k, v in {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TQDM_DISABLE": "1"}.items():
        monkeypatch.setenv(k, v)
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:  # run from a clean slate, not from stored outputs
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=False,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # raises CellExecutionError naming the cell on any error
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.get("output_type") == "error"]
    assert not errors, errors
    text = _text(nb)
    for expected in EXPECT.get(path.name, ()):
        assert expected in text, f"{path.name}: {expected!r} not in the outputs"
