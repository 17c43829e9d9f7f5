"""The CheckList interop notebook runs top to bottom (nbclient, python3 kernel)."""
from pathlib import Path

import pytest

# Runs a notebook in a kernel: left out of make test-fast (pytest -m 'not slow')
pytestmark = pytest.mark.slow


NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "checklist_interop.ipynb"


def test_checklist_notebook_executes():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "INV gender" in outputs and "ok" in outputs
