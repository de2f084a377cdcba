"""The built documentation site, opened in a real headless browser.

Run after the build (CI does)::

    sphinx-build -W --keep-going -b html docs docs/_build/html
    python -m pytest docs/checks

Chromium is the system's (``chromium`` on the PATH, or ``KERNELMAPS_CHROMIUM``), driven by
Playwright.  Every checked page must load with no console error, no failed request and
every image decoded; the search page must find ``RandomFourierFeatures``.  Every page of
the site (guide, gallery, API) must fit a 1280 px wide screen, with nothing in its article
scrolling or cut sideways, and show each of its images once; gallery pages print no stray
return value, and the API sidebar lists a short list of groups.  Screenshots of the home
page, of ``Nystroem``'s API page, of a gallery example, of "Which map?" and of
``FeatureRidgeCV``'s API page are written to ``docs/_build/screenshots`` (or
``KERNELMAPS_SCREENSHOTS``), the build's artefacts.
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
#: The screen every page must fit: a laptop's.
VIEWPORT = {"width": 1280, "height": 900}
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

    def end_headers(self) -> None:
        """The static files are cached, as on a real host: the next page loads faster."""
        self.send_header("Cache-Control", "max-age=600")
        super().end_headers()


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
        self.page = browser.new_page(viewport=VIEWPORT)
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
    "choosing": "choosing.html",
    "uncertainty": "uncertainty.html",
    "feature ridge cv": "generated/kernelmaps.FeatureRidgeCV.html",
}
#: Pages whose screenshot is kept (full page but for the home page's first screen).
SCREENSHOTS = {"home", "nystroem", "gallery example", "choosing", "feature ridge cv"}


@pytest.mark.parametrize("name", [*PAGES, "gallery example"])
def test_page_loads_cleanly(browser: Any, site_url: str, name: str) -> None:
    path = PAGES.get(name) or _gallery_page()
    visit = _Visit(browser, site_url + path)
    broken = visit.broken_images()
    assert not visit.problems, f"{path}: " + "; ".join(visit.problems)
    assert not broken, f"{path}: images that did not load: {broken}"
    if name in SCREENSHOTS:
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


#: The sets of pages every one of which must fit the screen: the guide (the site's top
#: level), the gallery, and the API reference (one page per public name).
SITE_SECTIONS = {
    "guide": lambda: sorted(SITE.glob("*.html")),
    "gallery": lambda: sorted((SITE / "auto_examples").rglob("*.html")),
    "api": lambda: sorted((SITE / "generated").glob("*.html")),
}

#: What is too wide on the page open in the browser, one line each: the page scrolls
#: sideways, its article does, or an element of the article scrolls or cuts its content.
_TOO_WIDE_JS = """async () => {
    await document.fonts.ready;
    if (window.MathJax && MathJax.startup) await MathJax.startup.promise;
    const wide = [];
    const page = document.scrollingElement;
    if (page.scrollWidth > innerWidth + 1) {
        wide.push(`the page: ${page.scrollWidth} px wide in a ${innerWidth} px window`);
    }
    const article = document.querySelector("article.bd-article");
    if (!article) return wide;
    for (const el of [article, ...article.querySelectorAll("*")]) {
        if (el.clientWidth === 0 || el.scrollWidth <= el.clientWidth + 1) continue;
        if (el !== article && getComputedStyle(el).overflowX === "visible") continue;
        // Inline math measures its hidden MathML for screen readers too; it is not cut.
        if (el.matches("span.math")) continue;
        const text = (el.textContent || "").trim().replace(/\\s+/g, " ").slice(0, 50);
        const name = el.tagName.toLowerCase() + (el.className ? "." + el.className : "");
        wide.push(`${name} "${text}": ${el.scrollWidth} px in ${el.clientWidth} px`);
    }
    return wide;
}"""

#: The addresses of the article's images; of its figures (a gallery's thumbnails, the
#: same default picture for every example without a figure, left out).
_IMAGES_JS = """() => {
    const src = img => img.currentSrc || img.src;
    const all = Array.from(document.querySelectorAll("article.bd-article img"));
    return [all.map(src), all.filter(img => !img.closest(".sphx-glr-thumbcontainer")).map(src)];
}"""

#: Output of a gallery block that is the repr of a returned value, not printed text.
_STRAY_VALUE = re.compile(r"^\s*\[?<?(Text|Figure|Axes|Line2D|matplotlib\.\w+)[ (<]")


#: Two figures whose 64 × 64 grey thumbnails differ by less than this mean (of 255) are one
#: picture: the same figure saved at two resolutions differs by about 2, two figures of the
#: gallery by 7 or more.
SAME_PICTURE = 4.0


def _picture(url: str, site_url: str) -> tuple[float, Any] | None:
    """The aspect ratio and grey 64 × 64 thumbnail of an image of the site, or ``None``."""
    image = pytest.importorskip("PIL.Image", reason='pip install ".[docs]"')
    numpy = pytest.importorskip("numpy", reason='pip install ".[docs]"')
    path = SITE / url[len(site_url) :].split("#")[0].split("?")[0]
    if not url.startswith(site_url) or not path.is_file() or path.suffix == ".svg":
        return None
    with image.open(path) as img:
        grey = img.convert("L").resize((64, 64), image.Resampling.BOX)
        return img.width / img.height, numpy.asarray(grey, dtype=float)


def _same_pictures(urls: list[str], site_url: str) -> list[str]:
    """The pairs of ``urls`` that show one picture (at any resolution)."""
    pictures = [(url, _picture(url, site_url)) for url in urls]
    known = [(url, pic) for url, pic in pictures if pic is not None]
    return [
        f"{a} and {b} (the same picture)"
        for i, (a, (ratio_a, grey_a)) in enumerate(known)
        for b, (ratio_b, grey_b) in known[i + 1 :]
        if abs(ratio_a / ratio_b - 1) < 0.02 and abs(grey_a - grey_b).mean() < SAME_PICTURE
    ]


def _layout_problems(page: Any, site_url: str, path: str) -> list[str]:
    """What is too wide or shown twice on the page at ``path``."""
    page.goto(site_url + path, wait_until="load")
    problems = [f"{path}: too wide: {line}" for line in page.evaluate(_TOO_WIDE_JS)]
    images, figures = page.evaluate(_IMAGES_JS)
    twice = {url for url in images if images.count(url) > 1}
    twice.update(_same_pictures(sorted(set(figures)), site_url))
    problems += [f"{path}: shows an image twice: {url}" for url in sorted(twice)]
    for output in page.locator("div.sphx-glr-script-out pre").all_inner_texts():
        if _STRAY_VALUE.match(output):
            problems.append(f"{path}: prints a returned value: {output.strip()[:60]!r}")
    return problems


@pytest.mark.parametrize("section", SITE_SECTIONS)
def test_every_page_fits_the_screen_and_shows_each_image_once(
    browser: Any, site_url: str, section: str
) -> None:
    """At 1280 px nothing in an article scrolls or is cut sideways (a long title, a wide
    table, a long line of code), and no figure or image is shown twice."""
    paths = [p.relative_to(SITE).as_posix() for p in SITE_SECTIONS[section]()]
    assert paths, f"no {section} page under {SITE}: build the site first"
    page = browser.new_page(viewport=VIEWPORT)
    problems = [line for path in paths for line in _layout_problems(page, site_url, path)]
    page.close()
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems)


def test_api_sidebar_lists_groups() -> None:
    """The API reference's sidebar shows its groups (modules and topics), each name under
    its group, collapsed but on the current page's group."""
    html = (SITE / "generated" / "kernelmaps.FeatureRidgeCV.html").read_text(encoding="utf-8")
    nav = html[html.index('class="bd-docs-nav') : html.index("</nav>", html.index("bd-docs-nav"))]
    groups = re.findall(r'<li class="toctree-l1[^"]*"><a[^>]*>([^<]+)</a>', nav)
    assert 5 <= len(groups) <= 20, f"the API sidebar's groups: {groups}"
    assert "kernelmaps.experiments" in groups, f"no kernelmaps.experiments group in {groups}"
    open_groups = re.findall(r"<details open", nav)
    assert len(open_groups) == 1, "the API sidebar opens more than the current page's group"
