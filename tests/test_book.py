"""The Jupyter Book builds offline with warnings as errors and shows what readers need."""

import re
from urllib.parse import quote

import pytest
import yaml

from course_build.paths import REPO_ROOT, lesson_names

pytestmark = pytest.mark.slow


def toc_files() -> list[str]:
    toc = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc["parts"]:
        files += [chapter["file"] for chapter in part["chapters"]]
    return files


def test_every_lesson_is_in_the_table_of_contents():
    assert [f"notebooks/{lesson}" for lesson in lesson_names()] == [
        f for f in toc_files() if f.startswith("notebooks/")
    ]


def test_every_page_of_the_toc_is_built(built_site):
    for file in toc_files():
        assert (built_site / f"{file}.html").is_file(), f"{file} was not built"


def test_lesson_pages_show_outputs_and_widgets_but_no_solutions(built_site):
    for lesson in lesson_names():
        page = (built_site / "notebooks" / f"{lesson}.html").read_text(encoding="utf-8")
        for secret in ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS", "Model answer"):
            assert secret not in page, f"{lesson}'s page shows {secret!r}"
        assert "application/vnd.jupyter.widget-state+json" in page, f"{lesson} has no widget state"
        assert "NotImplementedError" in page, f"{lesson} shows no exercise stub"
        assert 'class="math notranslate nohighlight"' in page, f"{lesson} has no display math"


def test_lesson_one_shows_its_worked_example_and_widget_default_view(built_site):
    page = (built_site / "notebooks" / "01_sequence_problem.html").read_text(encoding="utf-8")
    assert "computed in 30 sequential steps" in page
    state = re.search(
        r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', page, re.S
    ).group(1)
    assert "data:image/png;base64," in state, "the explorer's default plot is saved with the page"
    assert "recurrent layer" in state, "the explorer's default table is saved with the page"
    assert "Why is training an RNN hard to parallelize" in state, "the quiz is saved with the page"


def test_launch_buttons_and_bibliography(built_site):
    page = (built_site / "notebooks" / "01_sequence_problem.html").read_text(encoding="utf-8")
    repo = yaml.safe_load((REPO_ROOT / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"]
    github_path = repo.removeprefix("https://github.com/")
    assert (
        f"colab.research.google.com/github/{github_path}/blob/main/notebooks/01_sequence_problem.ipynb"
        in page
    )
    assert "mybinder.org/v2/gh/" + github_path in page
    # A JupyterHub launch button exactly when _config.yml names a hub (as shipped it names none).
    hub = yaml.safe_load((REPO_ROOT / "_config.yml").read_text(encoding="utf-8"))["launch_buttons"]
    hub = hub.get("jupyterhub_url", "").rstrip("/")
    if hub:
        assert f"{hub}/hub/user-redirect/git-pull?repo={quote(repo, safe='/')}" in page
    else:
        assert "hub/user-redirect/git-pull" not in page and "JupyterHub" not in page
    bibliography = (built_site / "book" / "bibliography.html").read_text(encoding="utf-8")
    assert "Attention Is All You Need" in bibliography
