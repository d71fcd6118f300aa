"""The student's view: JupyterLab on localhost, notebooks run and widgets used in Chromium.

JupyterLab runs from this Python environment (where the course is installed) with token auth on
a free local port, serving a scratch folder that holds copies of the notebooks (running cells must
never touch the repository's files). The browser reaches only that server.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
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
from conftest import BADGE_STAND_IN, COLAB_BADGE, Watch, offline_context, screenshot_path

from course_build.paths import lesson_names, student_notebook
from course_build.submissions import make_submission, solution_answers

pytestmark = [pytest.mark.browser, pytest.mark.slow]

START_TIMEOUT_S = 90
RUN_TIMEOUT_MS = 300_000
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# User settings of the test's JupyterLab: no news or update checks (they need the internet), and
# every cell kept in the page (JupyterLab's default skips rendering cells scrolled out of view).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}


@dataclass
class Lab:
    url: str  # http://127.0.0.1:<port>/
    token: str
    root: Path  # the folder JupyterLab serves


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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


@pytest.fixture(scope="module")
def lab(tmp_path_factory, chromium) -> Iterator[Lab]:
    """A JupyterLab server with its own settings, serving an empty scratch folder."""
    base = tmp_path_factory.mktemp("jupyterlab")
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


@contextmanager
def notebook_run(chromium, lab: Lab, notebook: nbformat.NotebookNode, name: str, watch: Watch):
    """Open ``notebook`` (saved as ``name`` in the lab's folder), run all cells, yield the page.

    As in JupyterLab, running all cells stops at the first cell that raises. On exit the kernel
    is shut down and the browser context closed.
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
        page.wait_for_function(
            """() => {
              const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
              const kernel = panel && panel.sessionContext && panel.sessionContext.session
                && panel.sessionContext.session.kernel;
              return kernel && kernel.status === 'idle';
            }""",
            timeout=START_TIMEOUT_S * 1000,
        )
        page.evaluate(
            """async (timeoutMs) => {
              const panel = window.jupyterapp.shell.currentWidget;
              const deadline = Date.now() + timeoutMs;
              await window.jupyterapp.commands.execute('notebook:run-all-cells');
              // run-all may resolve before the kernel has finished: wait for every prompt to
              // lose its '*' and the kernel to be idle.
              const busy = () => panel.sessionContext.session.kernel.status !== 'idle'
                || panel.content.widgets.some((cell) => cell.promptNode
                     && cell.promptNode.textContent.includes('*'));
              while (busy()) {
                if (Date.now() > deadline) { throw new Error('cells still running'); }
                await new Promise((resolve) => setTimeout(resolve, 200));
              }
            }""",
            RUN_TIMEOUT_MS,
        )
        yield page
    finally:
        page.evaluate("() => window.jupyterapp?.shell.currentWidget?.sessionContext.shutdown()")
        context.close()


def test_moving_the_sequence_explorers_slider_updates_its_table(chromium, lab):
    lesson = "01_sequence_problem"
    watch = Watch()
    student = nbformat.read(student_notebook(lesson), as_version=4)
    with notebook_run(chromium, lab, student, f"{lesson}.ipynb", watch) as page:
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
        page.screenshot(path=screenshot_path(f"jupyterlab-{lesson}"))
    assert after != before, "moving the slider did not change the table"
    assert "n = 35" in after, f"three steps right of n = 32 should show n = 35: {after}"
    assert "n = 35 " in plot_alt, f"the plot should mark n = 35: {plot_alt}"
    assert watch.blocked == [], "JupyterLab or the notebook asked for the network"
    assert watch.console_errors == [], "JupyterLab's console shows errors"


def lessons_with_widgets() -> list[str]:
    return [
        lesson
        for lesson in lesson_names()
        if student_notebook(lesson).is_file() and WIDGET_VIEW in student_notebook(lesson).read_text("utf-8")
    ]


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


@pytest.mark.parametrize("lesson", lessons_with_widgets())
def test_every_widget_of_a_solved_lesson_renders_in_jupyterlab(chromium, lab, lesson):
    """With the answers filled in, run-all reaches every widget; each must render cleanly."""
    solved = make_submission(lesson, solution_answers(lesson))
    expected = sum(
        WIDGET_VIEW in output.get("data", {})
        for cell in solved.cells
        if cell.cell_type == "code"
        for output in cell.outputs
    )
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
        page.screenshot(path=screenshot_path(f"jupyterlab-{lesson}-solved"))
    assert error_texts == [], f"{lesson}: cells wrote to stderr or raised"
    assert len(outputs) == expected, (
        f"{lesson}: {len(outputs)} widget outputs, the saved run had {expected}; prompts: {prompts}"
    )
    assert all(o["rendered"] and not o["error"] for o in outputs), f"{lesson}: widgets failed: {outputs}"
    assert watch.blocked == [], f"{lesson}: JupyterLab or the notebook asked for the network"
    assert watch.console_errors == [], f"{lesson}: JupyterLab's console shows errors"
