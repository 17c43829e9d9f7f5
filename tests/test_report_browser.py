"""The HTML report in a real headless Chromium (Debian ``chromium`` and
``chromium-driver``, driven through selenium).

Opens the report from a file:// URL with networking off, checks the DOM
(a heatmap per attribute, the tables, the charts, the class filter), that
the page logged no console errors and requested nothing but itself, and
saves screenshots to ``$BIAS_SUITE_TEST_ARTIFACTS`` (default
``results/test-artifacts/``). If Chromium is missing the test installs it
with apt-get (as root) and skips only when that is impossible.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from _report_data import enrich, make_results

from bias_suite.report.html import read_results_table, write_html_report

# Drives headless Chromium: left out of make test-fast (pytest -m 'not slow')
pytestmark = pytest.mark.slow


ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("BIAS_SUITE_TEST_ARTIFACTS", ROOT / "results" / "test-artifacts"))
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic", "--disable-extensions", "--disable-default-apps",
    "--metrics-recording-only", "--no-default-browser-check", "--window-size=1400,1000", "--hide-scrollbars",
)


def _binaries():
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return chromium, driver


def ensure_chromium() -> tuple[str, str]:
    """Paths of chromium and chromedriver, installing the Debian packages
    when missing; ``pytest.skip`` with the reason when that cannot be done."""
    chromium, driver = _binaries()
    if chromium and driver:
        return chromium, driver
    if not shutil.which("apt-get"):
        pytest.skip("chromium/chromedriver are missing and apt-get is not available to install them")
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        pytest.skip("chromium/chromedriver are missing and installing them needs root (apt-get install chromium chromium-driver)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    log = []
    for cmd in (["apt-get", "install", "-y", "-q", "chromium", "chromium-driver"], ["apt-get", "update", "-q"],
                ["apt-get", "install", "-y", "-q", "chromium", "chromium-driver"]):
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
        except (OSError, subprocess.TimeoutExpired) as e:
            log.append(f"{' '.join(cmd)}: {e}")
            continue
        log.append(f"{' '.join(cmd)}: exit {p.returncode} {p.stderr[-300:]}")
        chromium, driver = _binaries()
        if chromium and driver:
            return chromium, driver
    pytest.skip("chromium could not be installed: " + " | ".join(log))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    d = enrich(make_results(tmp_path_factory.mktemp("browser") / "res"))
    return write_html_report(d), read_results_table(d)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium, driver_path = ensure_chromium()
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium-manager must not look for drivers online
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for f in FLAGS:
        opts.add_argument(f)
    opts.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    drv = webdriver.Chrome(options=opts, service=Service(executable_path=driver_path))
    drv.set_page_load_timeout(120)
    try:
        yield drv
    finally:
        drv.quit()


def test_report_in_headless_chromium(report, browser):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    path, results = report
    url = path.resolve().as_uri()
    browser.get(url)
    WebDriverWait(browser, 30).until(lambda d: d.execute_script("return document.documentElement.getAttribute('data-report-ready')") == "1")

    # a group heatmap (with numbers in its cells) for every attribute
    attributes = sorted(set(results["attribute"]))
    assert attributes == ["gender", "names"]
    for a in attributes:
        tables = browser.find_elements(By.CSS_SELECTOR, f'section[data-attribute="{a}"] table.heatmap[data-kind="group"]')
        assert len(tables) == 1, a
        cells = tables[0].find_elements(By.CSS_SELECTOR, "td.cell")
        assert len(cells) > 10 and all(c.text.strip() for c in cells)
        assert any(c.get_attribute("style") for c in cells)  # coloured
        assert tables[0].find_elements(By.CSS_SELECTOR, "thead th.acc")
        assert tables[0].size["width"] > 200 and tables[0].size["height"] > 100
    # the other tables and the charts render
    for sel in ("table.significance", "table.bernstein", "table.verdicts", "table.failures", "table.drilldown", "table.meta"):
        found = browser.find_elements(By.CSS_SELECTOR, sel)
        assert found, sel
        assert found[0].find_elements(By.CSS_SELECTOR, "tbody tr"), sel
    charts = browser.find_elements(By.CSS_SELECTOR, "svg.chart:not(.groups-chart)")
    assert len(charts) >= 2 and charts[0].size["width"] > 100
    assert len(charts[0].find_elements(By.CSS_SELECTOR, "circle")) > 3
    # the per-group answer opens the report as a chart per attribute, before its table
    answer = browser.find_elements(By.CSS_SELECTOR, "#groups svg.groups-chart")
    assert len(answer) == 2 and all(c.size["width"] > 300 for c in answer)
    first = browser.find_element(By.CSS_SELECTOR, "#groups table.groups")
    assert answer[0].location["y"] < first.location["y"]
    assert all(c.find_elements(By.CSS_SELECTOR, "rect") for c in answer)  # the ±τ band
    # escaped user text stays text
    assert "<script>alert(1)</script>" in browser.find_element(By.CSS_SELECTOR, "table.failures").text

    # the class filter hides the other classes' rows
    sec = browser.find_element(By.CSS_SELECTOR, 'section[data-attribute="gender"]')
    Select(sec.find_element(By.CSS_SELECTOR, "select.class-filter")).select_by_value("positive")
    rows = sec.find_elements(By.CSS_SELECTOR, 'table.heatmap[data-kind="group"] tbody tr')
    shown = [r.get_attribute("data-class") for r in rows if r.is_displayed()]
    assert shown and set(shown) == {"positive"}
    Select(sec.find_element(By.CSS_SELECTOR, "select.class-filter")).select_by_value("")
    assert all(r.is_displayed() for r in rows)

    # screenshots (checked by eye during development; kept as CI artifacts)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.execute_script("window.scrollTo(0, 0)")
    shot = ARTIFACTS / "report_top.png"
    assert browser.save_screenshot(str(shot))
    heat = sec.find_element(By.CSS_SELECTOR, 'table.heatmap[data-kind="pair"]')
    browser.execute_script("arguments[0].scrollIntoView()", heat)
    assert heat.screenshot(str(ARTIFACTS / "report_pair_heatmap.png"))
    from PIL import Image

    with Image.open(shot) as im:
        assert im.size[0] >= 1000 and im.size[1] >= 700
        lo, hi = im.convert("L").getextrema()
        assert hi - lo > 100  # not a blank page

    # no console errors, and nothing fetched but the file itself
    logs = browser.get_log("browser")
    errors = [e for e in logs if e.get("level") == "SEVERE"]
    assert not errors, errors
    urls = []
    for entry in browser.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    assert url in urls
    fetched = [u for u in urls if u.split(":", 1)[0].lower() in ("http", "https", "ws", "wss", "ftp")]
    assert not fetched, fetched  # chrome:// (the blank start tab) is Chromium itself, not the report


def test_first_screen_shows_the_overview_and_findings(report, browser):
    """At a laptop-sized window the first viewport holds the answer per group
    (the report opens with it) and the verdict counts; the overview grid and
    the top findings follow it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    path, _ = report
    browser.set_window_size(1280, 800)
    browser.get(path.resolve().as_uri())
    WebDriverWait(browser, 30).until(lambda d: d.execute_script("return document.documentElement.getAttribute('data-report-ready')") == "1")
    browser.execute_script("window.scrollTo(0, 0)")
    height = browser.execute_script("return window.innerHeight")
    assert 600 <= height <= 800
    tops = {}
    for sel in ("#groups", "table.groups tr[data-status]", "p.counts", "#legend", "#overview-grid", "#findings",
                "table.findings tbody tr"):
        el = browser.find_element(By.CSS_SELECTOR, sel)
        tops[sel] = browser.execute_script("return arguments[0].getBoundingClientRect().top", el)
        assert el.is_displayed() and tops[sel] >= 0, (sel, tops[sel])
    for sel in ("#groups", "table.groups tr[data-status]", "p.counts"):
        assert tops[sel] < height, (sel, tops[sel], height)
    assert tops["#groups"] < tops["#overview-grid"] < tops["table.findings tbody tr"]
    grid = browser.find_element(By.CSS_SELECTOR, "#overview-grid")
    assert {th.text for th in grid.find_elements(By.CSS_SELECTOR, "tbody th")} == {"gender", "names"}
    assert any(td.get_attribute("style") for td in grid.find_elements(By.CSS_SELECTOR, "td.ov"))  # colour = size
    assert browser.find_element(By.CSS_SELECTOR, "table.findings span.metric").get_attribute("title")  # meaning tooltip
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "report_first_screen.png"
    assert browser.save_screenshot(str(shot))
    from PIL import Image

    with Image.open(shot) as im:
        assert im.size == (1280, height) or im.size[0] >= 1200
        lo, hi = im.convert("L").getextrema()
        assert hi - lo > 100
    browser.set_window_size(1400, 1000)
