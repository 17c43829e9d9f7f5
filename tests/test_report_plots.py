"""``bias-suite plot``: matplotlib heatmaps and per-group charts."""
from __future__ import annotations

import shutil

import pytest
from _report_data import enrich, make_results
from typer.testing import CliRunner

from bias_suite.cli import app

pytest.importorskip("matplotlib")


# Runs a suite and draws every figure: left out of make test-fast (pytest -m 'not slow')
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    d = make_results(tmp_path_factory.mktemp("plots") / "res")
    rich = d.parent / "rich"
    shutil.copytree(d, rich)
    return enrich(rich)


def test_png_figures_per_attribute(results_dir, tmp_path):
    from PIL import Image

    from bias_suite.report.plots import write_figures

    paths = write_figures(results_dir, tmp_path, fmt="png", metrics=["FNED", "BPSN", "CFGap", "Bernstein-EqualOpportunity"])
    names = {p.name for p in paths}
    for a in ("gender", "names"):
        assert f"{a}_heatmap_groups.png" in names and f"{a}_heatmap_pairs.png" in names
        assert f"{a}_groups_BPSN.png" in names and f"{a}_groups_Bernstein-EqualOpportunity.png" in names
        assert f"{a}_groups_answer.png" in names  # the per-group answer, as the report opens with it
    assert paths[0].name == "gender_groups_answer.png"
    assert "gender_groups_CFGap.png" not in names  # pairwise: heatmap only
    with Image.open(tmp_path / "gender_heatmap_groups.png") as im:
        w, h = im.size
    # column width (3.4 in) at 300 dpi, give or take the tight bounding box
    assert 700 <= w <= 1400 and h > 300
    assert all(p.stat().st_size > 5000 for p in paths)


@pytest.mark.parametrize("fmt", ["svg", "pdf"])
def test_vector_formats_keep_labels(results_dir, tmp_path, fmt):
    from bias_suite.report.plots import write_figures

    paths = write_figures(results_dir, tmp_path, fmt=fmt, attributes=["names"], metrics=["FNED", "PosAEG"])
    assert {p.suffix for p in paths} == {f".{fmt}"}
    heat = tmp_path / f"names_heatmap_groups.{fmt}"
    data = heat.read_bytes()
    if fmt == "svg":
        text = data.decode()
        assert "FNED (positive)" in text and "accumulated" not in text and "acc." in text and "female" in text
        assert "(value − b) / τ" in text
    else:
        assert data.startswith(b"%PDF")


def test_cli_plot(results_dir, tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["plot", str(results_dir), "--out", str(tmp_path / "f"), "--format", "svg", "--metrics", "FNED,BPSN"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in (tmp_path / "f").iterdir()) == sorted([
        "gender_groups_answer.svg", "gender_heatmap_groups.svg", "gender_groups_FNED.svg", "gender_groups_BPSN.svg",
        "names_groups_answer.svg", "names_heatmap_groups.svg", "names_groups_FNED.svg", "names_groups_BPSN.svg",
    ])
    r = runner.invoke(app, ["plot", str(results_dir), "--out", str(tmp_path / "g"), "--format", "gif"])
    assert r.exit_code == 2 and "format must be one of" in r.output
    r = runner.invoke(app, ["plot", str(results_dir), "--out", str(tmp_path / "g"), "--metrics", "NOPE"])
    assert r.exit_code == 2 and "none of the metrics" in r.output
