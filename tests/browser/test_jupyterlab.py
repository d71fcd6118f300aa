"""The student's view: JupyterLab on localhost, notebooks run and widgets used in Chromium.

JupyterLab runs from this Python environment (where the course is installed) with token auth on
a free local port, serving a scratch folder that holds copies of the notebooks (running cells must
never touch the repository's files). The browser reaches only that server.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from conftest import BADGE_STAND_IN, COLAB_BADGE, Watch, free_port, offline_context, screenshot_path
from grading_harness import make_submission, solution_answers
from matplotlib.image import imread

from course_build.paths import REPO_ROOT, lesson_names, solution_notebook, student_notebook
from transformer_course.widgets.quiz import answer_positions, load_questions

pytestmark = [pytest.mark.browser, pytest.mark.slow]

STUDENT_TOOLS = REPO_ROOT / "scripts" / "student_tools.sh"
START_TIMEOUT_S = 90
# Lesson 9 alone runs about 4.5 min on a busy 2-core machine (its beam-search cell most of it).
RUN_TIMEOUT_MS = 600_000
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# User settings of the test's JupyterLab: no news or update checks (they need the internet), and
# every cell kept in the page (JupyterLab's default skips rendering cells scrolled out of view).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/themes": {"theme": "JupyterLab Light"},
}


@dataclass
class Lab:
    url: str  # http://127.0.0.1:<port>/
    token: str
    root: Path  # the folder JupyterLab serves


def wait_until_up(lab: Lab, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    request = urllib.request.Request(f"{lab.url}api/status", headers={"Authorization": f"token {lab.token}"})
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"JupyterLab exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    pytest.fail(f"JupyterLab did not answer within {START_TIMEOUT_S} s:\n{log.read_text()[-3000:]}")


@contextmanager
def running_lab(base: Path, student: bool = False) -> Iterator[Lab]:
    """A JupyterLab server with its own settings, serving an empty scratch folder.

    ``student``: nbgrader's instructor tools switched off as ``scripts/install-student.sh`` does
    (the same shell function, written to this server's own config folder).
    """
    root = base / "work"
    root.mkdir()
    for plugin, values in LAB_SETTINGS.items():
        path = base / "settings" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")},
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(base / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
    }
    if student:
        subprocess.run(
            [
                "bash",
                "-c",
                f"source {STUDENT_TOOLS} && disable_instructor_tools user"
                " && serve_lessons_for_this_python user",
            ],
            env=env,
            check=True,
            capture_output=True,
        )
    log = base / "jupyterlab.log"
    with log.open("w") as log_file:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyterlab",
                "--no-browser",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={token}",
                f"--ServerApp.root_dir={root}",
                # lets the test drive JupyterLab's commands (run all cells) like a menu click
                "--LabApp.expose_app_in_browser=True",
                # CI containers run as root
                *(["--allow-root"] if os.geteuid() == 0 else []),
            ],
            cwd=root,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    lab = Lab(url=f"http://127.0.0.1:{port}/", token=token, root=root)
    try:
        wait_until_up(lab, process, log)
        yield lab
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def lab(tmp_path_factory, chromium) -> Iterator[Lab]:
    """JupyterLab as the full (instructor) install has it."""
    with running_lab(tmp_path_factory.mktemp("jupyterlab")) as server:
        yield server


@pytest.fixture(scope="module")
def student_lab(tmp_path_factory, chromium) -> Iterator[Lab]:
    """JupyterLab as a student's install has it: nbgrader's instructor tools switched off."""
    with running_lab(tmp_path_factory.mktemp("jupyterlab-student"), student=True) as server:
        yield server


# True once the open notebook's kernel has started and is idle.
KERNEL_IDLE_JS = """
() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session
    && panel.sessionContext.session.kernel;
  return kernel && kernel.status === 'idle';
}
"""


@contextmanager
def notebook_run(chromium, lab: Lab, notebook: nbformat.NotebookNode, name: str, watch: Watch):
    """Open ``notebook`` (saved as ``name`` in the lab's folder), run all cells, yield the page.

    Running all cells must reach the last code cell (cells tagged ``raises-exception`` let it go
    past their errors); otherwise this fails. On exit the kernel is shut down and the browser
    context closed.
    """
    nbformat.write(notebook, lab.root / name)
    context = offline_context(
        chromium, lab.url, watch, stand_ins={COLAB_BADGE: ("image/svg+xml", BADGE_STAND_IN)}
    )
    page = context.new_page()
    try:
        # ?reset starts from an empty workspace: JupyterLab would otherwise reopen the notebooks
        # of earlier tests beside this one, and their outputs would be read as this one's.
        page.goto(f"{lab.url}lab/tree/{name}?reset&token={lab.token}", wait_until="domcontentloaded")
        page.wait_for_function(KERNEL_IDLE_JS, timeout=START_TIMEOUT_S * 1000)
        page.evaluate(
            """async (timeoutMs) => {
              const panel = window.jupyterapp.shell.currentWidget;
              const deadline = Date.now() + timeoutMs;
              await window.jupyterapp.commands.execute('notebook:run-all-cells');
              // run-all may resolve before the kernel has finished: wait for the last code cell
              // to have run, every prompt to lose its '*' and the kernel to be idle. (After a
              // cell fails, JupyterLab clears the '*' of cells still queued in the kernel.)
              const code = panel.content.widgets.filter((cell) => cell.model.type === 'code');
              const busy = () => code[code.length - 1].model.executionCount === null
                || panel.sessionContext.session.kernel.status !== 'idle'
                || code.some((cell) => cell.promptNode && cell.promptNode.textContent.includes('*'));
              while (busy()) {
                if (Date.now() > deadline) { throw new Error('cells still running or never run'); }
                await new Promise((resolve) => setTimeout(resolve, 200));
              }
            }""",
            RUN_TIMEOUT_MS,
        )
        yield page
    finally:
        page.evaluate("() => window.jupyterapp?.shell.currentWidget?.sessionContext.shutdown()")
        context.close()


def switch_theme(page, theme: str) -> None:
    """Switch the open JupyterLab to ``theme`` as its Settings menu does, and wait until it shows."""
    page.evaluate("(theme) => window.jupyterapp.commands.execute('apputils:change-theme', {theme})", theme)
    light = "false" if "Dark" in theme else "true"
    page.wait_for_function(
        "(light) => document.body.dataset.jpThemeLight === light", arg=light, timeout=30_000
    )


def check_the_sequence_explorers_slider_updates_its_table(page, watch: Watch) -> None:
    """Lesson 1's explorer: three steps right on its slider redraw its table and its plot."""
    explorer = page.locator(".jp-OutputArea-output", has=page.locator(".widget-slider")).first
    explorer.scroll_into_view_if_needed()
    table = explorer.locator(".widget-html-content table").first
    before = table.text_content()
    assert "n = 32" in before, before

    explorer.locator(".noUi-handle").first.focus()
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    # Each key press is a kernel round trip; wait until the table and the plot show the
    # slider's value. The HTML widgets replace their content: look it up afresh each time.
    page.wait_for_function(
        """(output) => {
          const value = output.querySelector('.widget-readout').textContent.trim();
          const table = output.querySelector('.widget-html-content table');
          const plot = output.querySelector('.widget-html-content img');
          return value !== '32' && table.textContent.includes('n = ' + value)
            && plot.alt.includes('n = ' + value + ' ');
        }""",
        arg=explorer.element_handle(),
        timeout=30_000,
    )
    after = table.text_content()
    plot_alt = explorer.locator(".widget-html-content img").first.get_attribute("alt")
    page.screenshot(path=screenshot_path("jupyterlab-01_sequence_problem"))
    assert after != before, "moving the slider did not change the table"
    assert "n = 35" in after, f"three steps right of n = 32 should show n = 35: {after}"
    assert "n = 35 " in plot_alt, f"the plot should mark n = 35: {plot_alt}"
    assert watch.console_errors == [], "JupyterLab's console shows errors"


def check_picking_a_part_of_the_architecture_explorer_updates_it_in_both_themes(page, watch: Watch) -> None:
    """Lesson 8's diagram: choosing a part redraws the highlight and the panel, in light and dark."""
    explorer = page.locator(".jp-OutputArea-output", has=page.locator(".widget-dropdown")).first
    explorer.scroll_into_view_if_needed()
    details = explorer.locator(".widget-html-content").nth(1)
    assert "DecoderLayer.forward" in details.text_content()
    picture = explorer.locator(".widget-html-content img").first
    before = picture.get_attribute("src")
    assert picture.evaluate("(img) => img.naturalWidth") > 0, "the diagram did not load"
    explorer.locator("select").select_option(label="Position-wise feed-forward network")
    page.wait_for_function(
        "(output) => output.textContent.includes('FeedForward.forward')",
        arg=explorer.element_handle(),
        timeout=30_000,
    )
    assert picture.get_attribute("src") != before, "the highlight did not move"
    page.screenshot(path=screenshot_path("jupyterlab-08_encoder_decoder-explorer-light"))
    switch_theme(page, "JupyterLab Dark")
    try:
        explorer.scroll_into_view_if_needed()
        assert picture.evaluate("(img) => img.naturalWidth") > 0
        page.screenshot(path=screenshot_path("jupyterlab-08_encoder_decoder-explorer-dark"))
    finally:
        switch_theme(page, "JupyterLab Light")  # the theme is a saved setting: later runs start light
    assert watch.console_errors == [], "JupyterLab's console shows errors"


def lessons_with_widgets() -> list[str]:
    return [
        lesson
        for lesson in lesson_names()
        if student_notebook(lesson).is_file() and WIDGET_VIEW in student_notebook(lesson).read_text("utf-8")
    ]


def _widget_outputs(path: Path) -> int:
    """How many widget views the saved outputs of the notebook at ``path`` hold."""
    notebook = nbformat.read(path, as_version=4)
    return sum(
        WIDGET_VIEW in output.get("data", {})
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )


# The open notebook's cell outputs that hold a widget (in ipywidgets 8 the view's root is a direct
# child; a view that failed shows the manager's error text instead). Outputs inside an Output
# widget belong to that widget and are not counted.
WIDGET_OUTPUTS_JS = """
() => Array.from(document.querySelectorAll('.jp-OutputArea-output'))
  .filter((output) => !output.parentElement.closest('.jupyter-widgets'))
  .map((output) => ({
    rendered: output.querySelector(':scope > .jupyter-widgets') !== null,
    error: /Error displaying widget|model not found/i.test(output.textContent),
  }))
  .filter((output) => output.rendered || output.error)
"""


def assert_no_quiz_explanation_shows(lesson: str, page_text: str) -> None:
    """No option's explanation is in the page before the student checks an answer."""
    for question in load_questions(lesson):
        for option in question.options:
            assert option.why not in page_text, f"{lesson}: an explanation shows before any check"


# What a student then does with a lesson's widgets, checked on the page of the lesson's solved run
# (a run of its own would execute every cell of the lesson once more).
SOLVED_RUN_CHECKS = {
    "08_encoder_decoder": check_picking_a_part_of_the_architecture_explorer_updates_it_in_both_themes,
}


@pytest.mark.parametrize("lesson", lessons_with_widgets())
def test_every_widget_of_a_solved_lesson_renders_in_jupyterlab(chromium, lab, lesson):
    """With the answers filled in, run-all runs every cell without an error or a line on stderr
    (this is the suite's run of each lesson's solution) and reaches every widget; each must render
    cleanly. Then the lesson's ``SOLVED_RUN_CHECKS`` use its widgets."""
    solved = make_submission(lesson, solution_answers(lesson))
    # Count from the solution run: the student notebook saves no output for a widget that needs
    # the student's functions (lesson 7's word-order explorer), which the solved run does show.
    expected = _widget_outputs(solution_notebook(lesson))
    watch = Watch()
    with notebook_run(chromium, lab, solved, f"{lesson}-solved.ipynb", watch) as page:
        # Views are created in the browser after the kernel has gone idle: give them up to 30 s,
        # then report what rendered.
        outputs = page.evaluate(
            f"""async (expected) => {{
              const survey = {WIDGET_OUTPUTS_JS};
              const deadline = Date.now() + 30000;
              while (survey().length < expected && Date.now() < deadline) {{
                await new Promise((resolve) => setTimeout(resolve, 200));
              }}
              return survey();
            }}""",
            expected,
        )
        # JupyterLab renders both stderr text and tracebacks with the stderr MIME type.
        errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
        error_texts = [errors.nth(i).text_content()[:300] for i in range(errors.count())]
        prompts = page.locator(".jp-InputArea-prompt").all_text_contents()
        page_text = page.locator("body").inner_text()
        page.screenshot(path=screenshot_path(f"jupyterlab-{lesson}-solved"))
        assert error_texts == [], f"{lesson}: cells wrote to stderr or raised"
        assert len(outputs) == expected, (
            f"{lesson}: {len(outputs)} widget outputs, the solution run had {expected}; prompts: {prompts}"
        )
        assert all(o["rendered"] and not o["error"] for o in outputs), f"{lesson}: widgets failed: {outputs}"
        assert_no_quiz_explanation_shows(lesson, page_text)
        if lesson in SOLVED_RUN_CHECKS:
            SOLVED_RUN_CHECKS[lesson](page, watch)
    assert watch.blocked == [], f"{lesson}: JupyterLab or the notebook asked for the network"
    assert watch.console_errors == [], f"{lesson}: JupyterLab's console shows errors"


# Every code cell of the open notebook once run-all has finished: its tags, whether it ran, its
# errors (ANSI colours stripped) and its source.
CELLS_JS = r"""
() => window.jupyterapp.shell.currentWidget.content.widgets
  .filter((cell) => cell.model.type === 'code')
  .map((cell) => ({
    source: cell.model.sharedModel.getSource(),
    tags: cell.model.getMetadata('tags') || [],
    ran: cell.model.executionCount !== null,
    errors: cell.model.outputs.toJSON().filter((o) => o.output_type === 'error')
      .map((o) => o.traceback.join('\n').replace(/\x1b\[[0-9;]*m/g, '')),
    printed: cell.model.outputs.toJSON().filter((o) => o.output_type === 'stream')
      .map((o) => [].concat(o.text).join('').replace(/\x1b\[[0-9;]*m/g, '')).join(''),
  }))
"""


# Every lesson's fresh notebook runs to its quiz in tests/test_colab_like.py, and every lesson's
# solved notebook renders each widget and the quiz here; in JupyterLab the fresh run is checked for
# one lesson of each kind of exercise: values (1), functions (3), and functions a widget needs (7).
FRESH_RUN_LESSONS = ("01_sequence_problem", "03_attention", "07_encoder_layer")


def test_the_fresh_runs_cover_each_kind_of_exercise():
    values, functions, widget_needs_functions = FRESH_RUN_LESSONS
    assert not any("def " in answer for answer in solution_answers(values).values())
    assert any("def " in answer for answer in solution_answers(functions).values())
    fresh, solved = student_notebook(widget_needs_functions), solution_notebook(widget_needs_functions)
    assert _widget_outputs(fresh) < _widget_outputs(solved), "no widget of lesson 7 waits for the student"


def relative_luminance(rgb: str) -> float:
    channels = [int(v) / 255 for v in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(foreground: str, background: str) -> float:
    light, dark = sorted((relative_luminance(foreground), relative_luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


# The verdict of the quiz's first question after choosing option ``index`` and pressing Check:
# its text colour, its own background, and the page background behind the quiz.
VERDICT_JS = """
async ([index, previous]) => {
  const question = document.querySelectorAll('.jp-OutputArea-output .widget-radio-box')[0]
    .closest('.widget-vbox');
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  // The feedback is the question's last HTMLMath; its first span is the verdict badge.
  const shown = () => Array.from(question.querySelectorAll('.widget-htmlmath-content')).pop()
    .querySelector('span');
  question.querySelectorAll('input[type=radio]')[index].click();
  // Each click is a round trip to the kernel: press Check until the new verdict arrives.
  for (let attempt = 0; attempt < 5 && !(shown() && shown().textContent !== previous); attempt++) {
    await sleep(300);
    question.querySelector('button').click();
    const deadline = Date.now() + 4000;
    while (!(shown() && shown().textContent !== previous) && Date.now() < deadline) { await sleep(100); }
  }
  const badge = shown();
  if (!badge) { return {text: null}; }
  const style = getComputedStyle(badge);
  return {
    text: badge.textContent,
    color: style.color,
    background: style.backgroundColor,
    page: getComputedStyle(document.querySelector('.jp-Notebook')).backgroundColor,
  };
}
"""


def check_quiz_verdicts_and_plots_are_readable_in_the_dark_theme(page, watch: Watch) -> None:
    """Lesson 3's quiz answered right, then wrong, and its plots, in JupyterLab's dark theme."""
    lesson = "03_attention"
    switch_theme(page, "JupyterLab Dark")
    try:
        page.locator(".jp-OutputArea-output .widget-radio-box").first.scroll_into_view_if_needed()
        right = answer_positions(load_questions(lesson), seed=lesson)[0]
        wrong = (right + 1) % len(load_questions(lesson)[0].options)
        verdicts = [page.evaluate(VERDICT_JS, [right, ""])]
        verdicts.append(page.evaluate(VERDICT_JS, [wrong, verdicts[0]["text"]]))
        figure_filter = page.evaluate(
            "() => getComputedStyle(document.querySelector('.jp-OutputArea-output img.course-figure')).filter"
        )
        figure = page.locator(".jp-OutputArea-output img.course-figure").first
        figure.scroll_into_view_if_needed()
        figure_pixels = imread(io.BytesIO(figure.screenshot()), format="png")[..., :3]
        page.screenshot(path=screenshot_path(f"jupyterlab-{lesson}-dark-quiz"))
    finally:
        switch_theme(page, "JupyterLab Light")  # the theme is a saved setting: later runs start light
    assert relative_luminance(verdicts[0]["page"]) < 0.05, f"the dark theme is not on: {verdicts[0]['page']}"
    assert [v["text"] for v in verdicts] == ["Correct.", "Not quite."], verdicts
    for verdict in verdicts:
        ratio = contrast(verdict["color"], verdict["background"])
        assert ratio >= 4.5, f"{verdict['text']} has contrast {ratio:.2f} on the dark theme"
    assert "invert" in figure_filter, f"plots stay white blocks in the dark theme (filter: {figure_filter})"
    # As drawn on screen: a dark panel (a white one averages near 1), with lines and labels on it.
    brightness = figure_pixels.mean(axis=-1)
    assert brightness.mean() < 0.35, f"the plot is a bright block in the dark theme: {brightness.mean():.2f}"
    assert (brightness > 0.6).mean() > 0.002, "nothing light on the dark plot: its lines and labels vanished"


# What a student then does with a fresh lesson's widgets, checked on the page of its fresh run (a
# run of its own would execute every cell of the lesson once more).
FRESH_RUN_CHECKS = {
    "01_sequence_problem": check_the_sequence_explorers_slider_updates_its_table,
    "03_attention": check_quiz_verdicts_and_plots_are_readable_in_the_dark_theme,
}


@pytest.mark.parametrize("lesson", FRESH_RUN_LESSONS)
def test_run_all_on_a_fresh_student_notebook_runs_everything_but_exercises_and_shows_the_quiz(
    chromium, student_lab, lesson
):
    """The student's first Run All: every explanation, example and widget runs, unwritten
    exercises say so in a line, and the quiz at the end renders, with its answers nowhere in
    the page. Then the lesson's ``FRESH_RUN_CHECKS`` use its widgets."""
    watch = Watch()
    student = nbformat.read(student_notebook(lesson), as_version=4)
    with notebook_run(chromium, student_lab, student, f"{lesson}.ipynb", watch) as page:
        cells = page.evaluate(CELLS_JS)
        quiz = page.locator(".jp-OutputArea-output .widget-radio-box")
        page.wait_for_function(
            "(n) => document.querySelectorAll('.jp-OutputArea-output .widget-radio-box').length >= n",
            arg=len(load_questions(lesson)),
            timeout=30_000,
        )
        quiz.last.scroll_into_view_if_needed()
        page.screenshot(path=screenshot_path(f"jupyterlab-{lesson}-run-all"))
        page_text = page.locator("body").inner_text()
        questions = quiz.count()
        assert all(c["ran"] for c in cells), (
            f"{lesson}: Run All stopped before {next(c for c in cells if not c['ran'])}"
        )
        failed = [c["source"][:80] for c in cells if c["errors"]]
        assert failed == [], f"{lesson}: cells raised although every error is an exercise still to do"
        to_do = [line for c in cells for line in c["printed"].splitlines() if "still to do" in line]
        assert to_do, f"{lesson}: a fresh notebook should have exercises still to do"
        assert all(line.startswith("Exercise still to do: ") for line in to_do), to_do
        assert questions == len(load_questions(lesson)), f"{lesson}: the quiz did not render every question"
        quiz_cell = cells[-1]["source"]
        assert quiz_cell.endswith(f'lesson_quiz("{lesson}")'), quiz_cell
        assert_no_quiz_explanation_shows(lesson, page_text)
        if lesson in FRESH_RUN_CHECKS:
            FRESH_RUN_CHECKS[lesson](page, watch)
    assert watch.blocked == [], f"{lesson}: JupyterLab or the notebook asked for the network"


# The open notebook's toolbar buttons and menus, and the right sidebar's tab titles.
TOOLS_JS = """
() => ({
  toolbar: Array.from(document.querySelectorAll('.jp-NotebookPanel-toolbar .jp-ToolbarButtonComponent'))
    .map((b) => (b.textContent || '').trim() + ' ' + (b.title || '')),
  menus: Array.from(document.querySelectorAll('#jp-MainMenu .lm-MenuBar-itemLabel'))
    .map((m) => m.textContent),
  sidebar: Array.from(document.querySelectorAll('.jp-SideBar .lm-TabBar-tab'))
    .map((t) => (t.title || '') + ' ' + t.textContent),
})
"""


# A Python version no kernel here has: the lesson opened as on a student's other Python.
OTHER_PYTHON = "3.10.0"


def tools_shown(chromium, lab: Lab, name: str) -> dict:
    watch = Watch()
    notebook = nbformat.read(student_notebook("02_dot_products"), as_version=4)
    notebook.metadata.language_info.version = OTHER_PYTHON
    nbformat.write(notebook, lab.root / name)
    context = offline_context(
        chromium, lab.url, watch, stand_ins={COLAB_BADGE: ("image/svg+xml", BADGE_STAND_IN)}
    )
    try:
        page = context.new_page()
        page.goto(f"{lab.url}lab/tree/{name}?reset&token={lab.token}", wait_until="domcontentloaded")
        page.wait_for_selector(".jp-NotebookPanel-toolbar", timeout=START_TIMEOUT_S * 1000)
        page.wait_for_function(KERNEL_IDLE_JS, timeout=START_TIMEOUT_S * 1000)
        page.wait_for_timeout(2000)  # extensions add their buttons and tabs after the panel appears
        page.screenshot(path=screenshot_path(f"jupyterlab-tools-{name}"))
        tools = page.evaluate(TOOLS_JS)
        # The kernel has answered (its language_info is in the notebook's model): closing the
        # untouched notebook must not ask to save it.
        tools["modified"] = page.evaluate("() => window.jupyterapp.shell.currentWidget.context.model.dirty")
        page.evaluate("() => { window.jupyterapp.commands.execute('application:close'); }")
        page.wait_for_timeout(1500)
        tools["save_prompt"] = page.locator(".jp-Dialog").count() > 0
        page.evaluate("() => window.jupyterapp?.shell.currentWidget?.sessionContext?.shutdown()")
        return tools
    finally:
        context.close()


def test_a_student_install_shows_validate_but_no_instructor_tools(chromium, lab, student_lab):
    student = tools_shown(chromium, student_lab, "student-tools.ipynb")
    text = json.dumps(student)
    assert "Validate" in text, f"the Validate button is gone: {student['toolbar']}"
    for tool in ("Create Assignment", "Nbgrader", "Formgrader"):
        assert tool not in text, f"a student install shows {tool!r}: {student}"
    assert not student["modified"] and not student["save_prompt"], (
        f"an untouched lesson written on Python {OTHER_PYTHON} opens as modified and asks to be "
        "saved when closed"
    )
    # The same checks on the full install find them, so they can fail: without the student
    # install's contents manager, the kernel's Python version marks the lesson modified.
    instructor = tools_shown(chromium, lab, "instructor-tools.ipynb")
    assert "Create Assignment" in json.dumps(instructor) and "Nbgrader" in json.dumps(instructor)
    assert instructor["modified"] and instructor["save_prompt"]


TRAINING_CALL = "lesson_translator(train=TRAIN_NOW, callback=curve)"


def lesson_9_training_notebook() -> nbformat.NotebookNode:
    """Lesson 9's training cell as a student runs it with ``TRAIN_NOW``, its time limit cut to 30 s
    (and a loss logged every 2 steps) so that the test sees a run stopped by its limit."""
    student = nbformat.read(student_notebook("09_translator"), as_version=4)
    cells = [c for c in student.cells if c.cell_type == "code" and TRAINING_CALL in c.source]
    assert len(cells) == 1, "lesson 9 has no training cell calling " + TRAINING_CALL
    shortened = cells[0].source.replace(
        TRAINING_CALL, TRAINING_CALL[:-1] + ', settings=preset("quick", time_budget_s=30, log_every=2))'
    )
    setup = "from transformer_course.translation.settings import preset\n\nTRAIN_NOW = True"
    return nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(setup), nbformat.v4.new_code_cell(shortened)],
        metadata=student.metadata,
    )


# While the training cell runs (no stop line yet): the progress bar's line once the loss curve is
# drawn, or null.
TRAINING_SHOWN_JS = """
() => {
  const notebook = document.querySelector('.jp-Notebook');
  const curve = notebook.querySelector('.jp-OutputArea-output img[alt*="against optimizer step"]');
  const bar = Array.from(notebook.querySelectorAll('.widget-hbox'))
    .map((box) => box.innerText).find((text) => text.includes('training: step'));
  return curve && bar && !notebook.innerText.includes('training: stopped') ? bar : null;
}
"""


def test_lesson_9s_training_draws_its_curve_while_it_runs_and_says_why_it_stopped(chromium, student_lab):
    watch = Watch()
    name = "09_translator-training.ipynb"
    nbformat.write(lesson_9_training_notebook(), student_lab.root / name)
    context = offline_context(
        chromium, student_lab.url, watch, stand_ins={COLAB_BADGE: ("image/svg+xml", BADGE_STAND_IN)}
    )
    page = context.new_page()
    try:
        page.goto(
            f"{student_lab.url}lab/tree/{name}?reset&token={student_lab.token}", wait_until="domcontentloaded"
        )
        page.wait_for_function(KERNEL_IDLE_JS, timeout=START_TIMEOUT_S * 1000)
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        try:
            bar_while_running = page.wait_for_function(
                TRAINING_SHOWN_JS, timeout=240_000, polling=250
            ).json_value()
        finally:
            page.screenshot(path=screenshot_path("jupyterlab-09_translator-training-waited"))
        page.screenshot(path=screenshot_path("jupyterlab-09_translator-training-running"))
        page.wait_for_function(
            "() => document.querySelector('.jp-Notebook').innerText.includes('training: stopped at step')",
            timeout=240_000,
        )
        page.screenshot(path=screenshot_path("jupyterlab-09_translator-training-stopped"))
        shown = page.locator(".jp-Notebook").inner_text()
    finally:
        page.evaluate("() => window.jupyterapp?.shell.currentWidget?.sessionContext.shutdown()")
        context.close()
    # Sized to the steps that fit in the time limit, not to all 1,200 (the estimate's arithmetic
    # is unit-tested in tests/test_step_progress.py).
    assert "of 1,200; the time limit ends it first" in bar_while_running, bar_while_running
    stop = next(line for line in shown.splitlines() if "training: stopped at step" in line)
    assert "of 1,200 because the 30 s time limit was reached" in stop, stop
    assert watch.blocked == [], "JupyterLab or the notebook asked for the network"
