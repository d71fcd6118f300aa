"""The published book in headless Chromium, with every non-local request blocked.

Each page of the table of contents is opened once (light and dark colour scheme, a full-page
screenshot of each); the tests below check what was recorded: no local 404, no request that
needs the network, no console error, math typeset by MathJax, widgets rendered from the saved
state, launch buttons, search, and no solution code or hidden test on any page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import quote

import nbformat
import pytest
import yaml
from conftest import Watch, offline_context, screenshot_path, toc_pages

from course_build.paths import BOOK_CONFIG, lesson_names, nbgrader_source_notebook, student_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = toc_pages()
LESSON_PAGES = [page for page in PAGES if page.startswith("notebooks/")]
VIEW_SCRIPT = 'script[type="application/vnd.jupyter.widget-view+json"]'
LOAD_TIMEOUT_MS = 30_000

# Runs in the page once it has loaded: waits for MathJax's first typeset pass, then for the
# widget manager to have rendered one view per saved widget-view script.
SETTLE_JS = """
async (viewSelector) => {
  if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; }
  const views = document.querySelectorAll(viewSelector).length;
  const deadline = Date.now() + 20000;
  while (document.querySelectorAll('.widget-subarea').length < views && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await new Promise((resolve) => setTimeout(resolve, 300));  // let images decode
}
"""

# Runs in the page after it settled: what the tests check.
SURVEY_JS = """
(viewSelector) => {
  const all = (selector) => Array.from(document.querySelectorAll(selector));
  const math = all('.math');
  return {
    text: document.body.innerText,
    math: math.length,
    untypeset: math.filter((el) => !el.querySelector('mjx-container')).length,
    math_errors: all('mjx-merror').map((el) => el.textContent),
    views: all(viewSelector).length,
    rendered_views: all('.widget-subarea').filter((el) => el.querySelector('.jupyter-widgets')).length,
    widget_errors: all('.widget-subarea').map((el) => el.innerText)
      .filter((text) => /Error displaying widget|model not found/i.test(text)),
    sliders: all('.widget-slider').length,
    widget_images: all('.widget-html-content img').filter((img) => img.naturalWidth > 0).length,
    broken_images: all('img').filter((img) => img.complete && img.naturalWidth === 0)
      .map((img) => img.getAttribute('src')).map((src) => (src || '').slice(0, 80)),
    links: all('a[href]').map((a) => a.href),
    launch_menu: all('.dropdown-launch-buttons').length,
  };
}
"""


@dataclass
class Visit:
    """One page as the reader's browser saw it."""

    watch: Watch
    survey: dict = field(default_factory=dict)
    dark_watch: Watch = field(default_factory=Watch)


def open_page(browser, site_url: str, page_name: str, color_scheme: str, watch: Watch) -> dict:
    context = offline_context(browser, site_url, watch, color_scheme=color_scheme)
    try:
        page = context.new_page()
        page.goto(f"{site_url}{page_name}.html", wait_until="networkidle", timeout=LOAD_TIMEOUT_MS)
        page.evaluate(SETTLE_JS, VIEW_SCRIPT)
        page.screenshot(path=screenshot_path(f"{page_name}-{color_scheme}"), full_page=True)
        return page.evaluate(SURVEY_JS, VIEW_SCRIPT)
    finally:
        context.close()


@pytest.fixture(scope="module")
def visits(chromium, site_url) -> dict[str, Visit]:
    """Every toc page opened offline in light and dark mode, screenshots saved."""
    result = {}
    for page_name in PAGES:
        visit = Visit(watch=Watch())
        visit.survey = open_page(chromium, site_url, page_name, "light", visit.watch)
        open_page(chromium, site_url, page_name, "dark", visit.dark_watch)
        result[page_name] = visit
    return result


@pytest.mark.parametrize("page_name", PAGES)
def test_page_loads_offline_without_errors(visits, page_name):
    visit = visits[page_name]
    for scheme, watch in (("light", visit.watch), ("dark", visit.dark_watch)):
        assert watch.failed == [], f"{page_name} ({scheme}): local requests failed"
        assert watch.blocked == [], f"{page_name} ({scheme}) needs the network for these"
        assert watch.console_errors == [], f"{page_name} ({scheme}) logged errors"
    assert visit.survey["broken_images"] == [], f"{page_name}: images that did not load"


@pytest.mark.parametrize("page_name", PAGES)
def test_math_is_typeset_without_tex_errors(visits, page_name):
    survey = visits[page_name].survey
    assert survey["untypeset"] == 0, f"{page_name}: {survey['untypeset']} of {survey['math']} formulas raw"
    assert survey["math_errors"] == [], f"{page_name}: MathJax could not parse these"


def test_lesson_pages_have_typeset_math(visits):
    assert all(visits[page].survey["math"] > 0 for page in LESSON_PAGES), "a lesson page has no math"


@pytest.mark.parametrize("page_name", LESSON_PAGES)
def test_widgets_render_from_saved_state(visits, page_name):
    survey = visits[page_name].survey
    assert survey["views"] > 0, f"{page_name} carries no saved widget view"
    assert survey["rendered_views"] == survey["views"], (
        f"{page_name}: {survey['rendered_views']} of {survey['views']} widget views rendered"
    )
    assert survey["widget_errors"] == []


def test_lesson_one_explorer_shows_slider_table_and_plot(visits):
    survey = visits["notebooks/01_sequence_problem"].survey
    assert survey["sliders"] >= 1, "the sequence explorer's slider is missing"
    assert "recurrent layer" in survey["text"], "the explorer's table is missing"
    assert survey["widget_images"] >= 1, "the explorer's plot did not load"


@pytest.mark.parametrize("page_name", LESSON_PAGES)
def test_launch_buttons_open_the_lesson_elsewhere(visits, page_name):
    survey = visits[page_name].survey
    config = yaml.safe_load(BOOK_CONFIG.read_text(encoding="utf-8"))
    github = config["repository"]["url"].removeprefix("https://github.com/")
    notebook = f"{page_name}.ipynb"
    assert survey["launch_menu"] == 1, f"{page_name} has no launch menu"
    wanted = {
        "Colab": f"colab.research.google.com/github/{github}/blob/main/{notebook}",
        "Binder": f"mybinder.org/v2/gh/{github}/main?urlpath=lab/tree/{notebook}",
    }
    for name, target in wanted.items():
        assert any(target in link for link in survey["links"]), f"{page_name}: no {name} button"
    # A JupyterHub button only when launch_buttons.jupyterhub_url names a hub (none as shipped).
    hub = config["launch_buttons"].get("jupyterhub_url", "").rstrip("/")
    hub_links = [link for link in survey["links"] if "/hub/user-redirect/" in link]
    assert hub_links == ([link for link in hub_links if link.startswith(hub)] if hub else []), page_name
    assert bool(hub_links) == bool(hub), f"{page_name}: JupyterHub button and configuration disagree"


def search_results(chromium, site_url: str, query: str) -> list[str]:
    """Links the book's search page lists for ``query`` (after the search has finished)."""
    context = offline_context(chromium, site_url, Watch())
    try:
        page = context.new_page()
        page.goto(f"{site_url}search.html?q={quote(query)}", wait_until="networkidle")
        page.wait_for_selector("#search-results .search-summary", timeout=LOAD_TIMEOUT_MS)
        page.screenshot(path=screenshot_path(f"search-{query}"), full_page=True)
        return page.eval_on_selector_all("#search-results ul.search li a", "(as) => as.map((a) => a.href)")
    finally:
        context.close()


def test_search_finds_lesson_one_by_a_word_from_its_text(chromium, site_url, visits):
    word = "bottleneck"
    assert word in visits["notebooks/01_sequence_problem"].survey["text"]
    links = search_results(chromium, site_url, word)
    assert any("notebooks/01_sequence_problem.html" in link for link in links), links


def test_search_lists_nothing_for_a_word_not_in_the_book(chromium, site_url):
    assert search_results(chromium, site_url, "quixotrombulous") == []


def public_text() -> str:
    """The sources of every student notebook: what students may see anyway."""
    return "\n".join(
        cell.source
        for lesson in lesson_names()
        if student_notebook(lesson).is_file()
        for cell in nbformat.read(student_notebook(lesson), as_version=4).cells
    )


def secrets_of(lesson: str, public: str) -> set[str]:
    """Lines only the instructor may see: solution code and hidden tests of ``lesson``.

    Lines students see anyway (an idiom shared with visible tests, a signature given in a stub)
    are left out, and so are short ones, too generic to tell anything. A page that shows one of
    the rest was built from the wrong notebook or leaks through an output (a traceback, say).
    """
    source = nbformat.read(nbgrader_source_notebook(lesson), as_version=4)
    regions = r"### BEGIN SOLUTION\n(.*?)### END SOLUTION|### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS"
    lines = set()
    for cell in source.cells:
        if cell.cell_type != "code":
            continue
        for match in re.finditer(regions, cell.source, re.S):
            lines |= {line.strip() for line in (match.group(1) or match.group(2)).splitlines()}
    return {line for line in lines if len(line) >= 12 and not line.startswith("#") and line not in public}


@pytest.fixture(scope="session")
def secrets() -> dict[str, set[str]]:
    public = public_text()
    return {
        lesson: secrets_of(lesson, public)
        for lesson in lesson_names()
        if nbgrader_source_notebook(lesson).is_file() and student_notebook(lesson).is_file()
    }


@pytest.mark.parametrize("page_name", PAGES)
def test_no_page_shows_solution_code_or_hidden_tests(visits, secrets, page_name):
    text = visits[page_name].survey["text"]
    # The instructors' guide documents the lesson format, so it names the markers; its text is
    # still checked for every real solution and hidden-test line below, like every page's.
    markers = () if page_name == "book/instructors" else ("BEGIN SOLUTION", "HIDDEN TESTS", "Model answer")
    for marker in markers:
        assert marker not in text, f"{page_name} shows {marker!r}"
    leaked = {lesson: sorted(line for line in lines if line in text) for lesson, lines in secrets.items()}
    assert {lesson: lines for lesson, lines in leaked.items() if lines} == {}
