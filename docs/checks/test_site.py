"""The built documentation site, opened in a real headless browser.

Run after the build (CI does)::

    sphinx-build -W --keep-going -b html docs docs/_build/html
    python -m pytest docs/checks

Chromium is the system's (``chromium`` on the PATH, or ``KERNELMAPS_CHROMIUM``), driven by
Playwright.  Every checked page must load with no console error, no failed request and
every image decoded; the search page must find ``RandomFourierFeatures``.  Screenshots of
the home page, of ``Nystroem``'s API page and of a gallery example are written to
``docs/_build/screenshots`` (or ``KERNELMAPS_SCREENSHOTS``), the build's artefacts.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

DOCS = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get("KERNELMAPS_SITE", DOCS / "_build" / "html"))
SHOTS = Path(os.environ.get("KERNELMAPS_SCREENSHOTS", DOCS / "_build" / "screenshots"))
#: Each example of the gallery runs in less than this many seconds (on 2 cores).
EXAMPLE_BUDGET_S = 40.0
#: Flags for a closed network: no background connections, no sandbox (CI runs as root).
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _gallery_page() -> str:
    """The first executed example of the gallery, relative to the site."""
    pages = sorted((SITE / "auto_examples").rglob("plot_*.html"))
    assert pages, f"no gallery example under {SITE / 'auto_examples'}: build the site first"
    return pages[0].relative_to(SITE).as_posix()


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    """The built site served over HTTP on localhost (search needs it, as on a real host)."""
    assert (SITE / "index.html").is_file(), (
        f"no built site at {SITE}: run sphinx-build -W --keep-going -b html docs docs/_build/html"
    )
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason='pip install ".[docs]"')
    executable = os.environ.get("KERNELMAPS_CHROMIUM") or shutil.which("chromium")
    assert executable, "no chromium on the PATH: apt-get install chromium (or KERNELMAPS_CHROMIUM)"
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


class _Visit:
    """A page opened in the browser, with what went wrong while it loaded."""

    def __init__(self, browser: Any, url: str) -> None:
        self.problems: list[str] = []
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: self.problems.append(f"page error: {exc}"))
        self.page.on("requestfailed", self._request_failed)
        self.page.on("response", self._response)
        self.page.goto(url, wait_until="networkidle")

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.problems.append(f"console error: {message.text}")

    def _request_failed(self, request: Any) -> None:
        self.problems.append(f"request failed: {request.url} ({request.failure})")

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            self.problems.append(f"HTTP {response.status}: {response.url}")

    def broken_images(self) -> list[str]:
        """Every ``<img>`` of the page, scrolled into view, that did not decode."""
        return self.page.evaluate(
            """async () => {
                const broken = [];
                for (const img of document.images) {
                    img.loading = "eager";
                    img.scrollIntoView();
                    try { await img.decode(); } catch (e) { }
                    if (!img.complete || img.naturalWidth === 0) broken.push(img.src);
                }
                window.scrollTo(0, 0);
                return broken;
            }"""
        )


PAGES = {
    "home": "index.html",
    "api": "api.html",
    "nystroem": "generated/kernelmaps.Nystroem.html",
    "guide": "guide.html",
    "gallery index": "auto_examples/index.html",
}


@pytest.mark.parametrize("name", [*PAGES, "gallery example"])
def test_page_loads_cleanly(browser: Any, site_url: str, name: str) -> None:
    path = PAGES.get(name) or _gallery_page()
    visit = _Visit(browser, site_url + path)
    broken = visit.broken_images()
    assert not visit.problems, f"{path}: " + "; ".join(visit.problems)
    assert not broken, f"{path}: images that did not load: {broken}"
    if name in {"home", "nystroem", "gallery example"}:
        SHOTS.mkdir(parents=True, exist_ok=True)
        target = SHOTS / f"{name.replace(' ', '_')}.png"
        visit.page.screenshot(path=str(target), full_page=name != "home")
        assert target.stat().st_size > 10_000, f"{target} is nearly empty"
    visit.page.close()


def test_gallery_shows_its_figures(browser: Any, site_url: str) -> None:
    path = _gallery_page()
    visit = _Visit(browser, site_url + path)
    figures = visit.page.locator("img.sphx-glr-single-img, img.sphx-glr-multi-img")
    assert figures.count() >= 1, f"{path} shows no figure"
    visit.page.close()


def test_search_finds_random_fourier_features(browser: Any, site_url: str) -> None:
    visit = _Visit(browser, site_url + "search.html?q=RandomFourierFeatures")
    hit = visit.page.locator('#search-results a[href*="kernelmaps.RandomFourierFeatures.html"]')
    hit.first.wait_for(timeout=20_000)
    assert not visit.problems, "; ".join(visit.problems)
    visit.page.close()


def test_api_page_documents_parameters(browser: Any, site_url: str) -> None:
    visit = _Visit(browser, site_url + PAGES["nystroem"])
    text = visit.page.locator("main").inner_text()
    for word in ("Parameters", "n_components", "landmarks", "Attributes", "transform"):
        assert word in text, f"Nystroem's page does not show {word!r}"
    visit.page.close()


def test_every_example_ran_within_its_budget() -> None:
    """sphinx-gallery writes each example's running time into its generated page."""
    pages = sorted((DOCS / "auto_examples").rglob("plot_*.rst"))
    assert pages, "no executed example: build the site first"
    pattern = re.compile(r"running time of the script:\*\* \((\d+) minutes ([\d.]+) seconds\)")
    times = {}
    for page in pages:
        found = pattern.search(page.read_text(encoding="utf-8"))
        assert found, f"{page.name}: no running time (was it executed?)"
        times[page.stem] = 60 * int(found[1]) + float(found[2])
    slow = {name: t for name, t in times.items() if t >= EXAMPLE_BUDGET_S}
    assert not slow, f"examples over {EXAMPLE_BUDGET_S:.0f} s: {slow}"
