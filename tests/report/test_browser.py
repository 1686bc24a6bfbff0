"""The report in a real browser: Debian's chromium, headless, driven by Playwright.

Playwright's own browser download (``playwright install``) is never used: the test runs the
system's ``/usr/bin/chromium``. Outside CI the test is skipped when chromium or Playwright
is missing; under ``.ci/run`` (``LIVEROOM_CI=1``), which installs both, it must run.
Screenshots go to ``$LIVEROOM_SCREENSHOT_DIR`` (``.ci/run`` sets ``build/screenshots``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from liveroom_sim.report import write_report

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]


def _browser_or_skip():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    missing = [what for what, ok in (("the playwright package (pip install '.[browser]')", sync_playwright),
                                     (CHROMIUM + " (apt-get install -y chromium)", Path(CHROMIUM).exists())) if not ok]
    if missing:
        if os.environ.get("LIVEROOM_CI"):
            pytest.fail("the browser test must run in CI, but it lacks " + " and ".join(missing))
        pytest.skip("needs " + " and ".join(missing))
    return sync_playwright


@pytest.fixture
def screenshots(tmp_path) -> Path:
    folder = Path(os.environ.get("LIVEROOM_SCREENSHOT_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_the_report_renders_and_an_episode_shows_its_turns(rollout_file, tmp_path, screenshots):
    sync_playwright = _browser_or_skip()
    report = write_report(rollout_file, tmp_path / "report.html")
    problems: list[str] = []
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on("request", lambda r: requests.append(r.url))
            page.goto(report.resolve().as_uri())
            assert page.locator("section.page.shown").get_attribute("id") == "overview"
            assert page.locator("#overview svg").count() >= 1
            page.screenshot(path=str(screenshots / "report-overview.png"))

            page.click("nav a[data-target='ep-2-0']")
            page.wait_for_selector("#ep-2-0 .turn", state="visible")
            assert page.locator("#overview").is_hidden()
            turns = page.locator("#ep-2-0 .turn")
            assert turns.count() > 10
            assert turns.first.is_visible() and "tool turn 1" in turns.first.inner_text()
            assert page.locator("#ep-2-0 .badge.fault").first.is_visible()
            assert page.locator("nav a.active").get_attribute("data-target") == "ep-2-0"
            page.screenshot(path=str(screenshots / "report-episode.png"))
            page.locator("#ep-2-0 .turn").nth(1).scroll_into_view_if_needed()
            page.screenshot(path=str(screenshots / "report-episode-replay.png"))

            page.click("nav a[data-target='groups']")
            page.wait_for_selector("#groups .side", state="visible")
            page.screenshot(path=str(screenshots / "report-groups.png"))
        finally:
            browser.close()
    assert problems == []
    assert all(url.startswith("file:") for url in requests), requests  # nothing fetched from anywhere else
    for name in ("report-overview.png", "report-episode.png", "report-groups.png"):
        assert (screenshots / name).stat().st_size > 10_000


def test_chromium_is_debians_and_playwright_never_downloaded_one():
    _browser_or_skip()
    assert shutil.which("chromium") == CHROMIUM
