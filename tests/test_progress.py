"""A grading batch shows how far it has got: a bar on a terminal, plain lines in a log (fast, no kernel)."""

import contextlib
import io
import os
import subprocess
import sys
import time
from pathlib import Path

from course_build.instructor.progress import (
    BatchProgress,
    clock,
    files_written_since,
    progress_line,
    watch_files,
)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_plain_line_gives_student_n_of_n_the_time_so_far_and_an_estimate():
    assert progress_line("03_attention", 3, 12, 41.0) == (
        "03_attention: student 3 of 12 graded, 0:41 so far, about 2:03 left"
    )
    assert (
        progress_line("03_attention", 12, 12, 3725.0)
        == "03_attention: student 12 of 12 graded, 1:02:05 so far"
    )
    assert clock(59.6) == "1:00"


def test_not_on_a_terminal_each_finished_student_is_one_line_and_counts_never_go_back():
    stream = io.StringIO()
    with BatchProgress("L01", 3, stream=stream) as progress:
        for done in (1, 1, 0, 3, 5):
            progress.update(done)
    lines = stream.getvalue().splitlines()
    assert [line.split(" graded")[0] for line in lines] == ["L01: student 1 of 3", "L01: student 3 of 3"]
    assert "\r" not in stream.getvalue() and "about" in lines[0]


def test_on_a_terminal_it_is_a_bar_with_n_of_n_elapsed_and_remaining():
    stream = _Terminal()
    with BatchProgress("L01: autograde", 4, stream=stream) as progress:
        progress.update(2)
    shown = stream.getvalue()
    assert "\r" in shown and "L01: autograde: student 2 of 4" in shown
    assert "so far, about" in shown and "left" in shown


def test_watching_files_counts_the_graded_notebooks_written_during_the_batch(tmp_path: Path):
    old, first, second = (tmp_path / name for name in ("old.ipynb", "a.ipynb", "b.ipynb"))
    old.write_text("graded last week")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    stream = io.StringIO()
    watch = watch_files("L01", [old, first, second], enabled=True)
    watch.stream, watch.interval_s = stream, 0.05
    with watch:
        first.write_text("graded now")
        time.sleep(0.3)
        second.write_text("graded now")
    assert files_written_since([old, first, second], time.time() - 60) == 2
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("L01: student 1 of 3") and lines[-1].startswith("L01: student 2 of 3")


def test_without_progress_nothing_is_shown(capsys):
    with watch_files("L01", [Path("nowhere.ipynb")], enabled=False):
        pass
    assert capsys.readouterr().out == ""


SHOW_A_BAR = """
from course_build.instructor.progress import BatchProgress
with BatchProgress("L01: autograde", 4) as progress:
    progress.update(2)
"""


def test_a_terminal_that_reports_no_size_still_shows_the_bar():
    """A new pseudo-terminal is 0 x 0 until someone sets its size (``script`` run from a job,
    ``docker exec -t``, some CI runners); tqdm then showed nothing at all."""
    leader, follower = os.openpty()
    assert tuple(os.get_terminal_size(follower)) == (0, 0)
    child = subprocess.run([sys.executable, "-c", SHOW_A_BAR], stdout=follower, timeout=60)
    os.close(follower)
    shown = b""
    with contextlib.suppress(OSError):  # the terminal is closed once everything has been read
        while chunk := os.read(leader, 65536):
            shown += chunk
    os.close(leader)
    assert child.returncode == 0
    text = shown.decode("utf-8", "replace")
    assert "L01: autograde: student 2 of 4 |" in text and "so far, about" in text, text
