"""The issue's bar: one command grades an LMS zip of mixed submissions to a CSV whose every row is right."""

import csv
import shutil
import subprocess
import sys
import zipfile

import nbformat
import pytest

from course_build.paths import AUTOGRADER_DIR, REPO_ROOT
from course_build.submissions import make_submission, solution_answers

LESSON = "01_sequence_problem"
CHEAT = (
    "np.allclose = lambda *a, **k: True\n"
    "get_ipython().input_transformers_cleanup.append(lambda lines: [])\n"
    "rnn_steps_40 = 1"
)


def _notebook(**answers: str) -> bytes:
    return nbformat.writes(make_submission(LESSON, {**solution_answers(LESSON), **answers})).encode()


# Canvas file name -> contents; student -> (autograded score, a phrase its notes must hold or None)
ZIP_FILES = {
    f"goodstudent_1001_2001_{LESSON}.ipynb": _notebook(),
    f"wrongstudent_1002_2002_{LESSON}.ipynb": _notebook(
        apply_paths="rnn_path_40 = 40\nattention_path_40 = 1", apply_crossover="largest_cheaper_n = 512"
    ),
    f"brokenstudent_1003_2003_{LESSON}.ipynb": b'{"cells": [',
    f"cheater_1004_2004_{LESSON}.ipynb": _notebook(apply_steps=CHEAT),
    f"latestudent_LATE_1005_2005_{LESSON}-1.ipynb": _notebook(),
    "nonotebook_1006_2006_answers.pdf": b"%PDF-1.4 not a notebook",
    "README.txt": b"a file the LMS added, matched by no student",
}
EXPECTED = {
    "goodstudent": (5, None),
    "wrongstudent": (3, None),
    "brokenstudent": (0, "could not be read"),
    "cheater": (4, "assigns to np.allclose"),
    "latestudent": (5, "submitted as"),
    "nonotebook": (0, "answers.pdf"),
}


@pytest.mark.slow
def test_one_command_grades_a_mixed_zip_to_a_correct_csv(tmp_path):
    course = tmp_path / "autograder"
    shutil.copytree(AUTOGRADER_DIR / "source" / LESSON, course / "source" / LESSON)
    shutil.copy(AUTOGRADER_DIR / "nbgrader_config.py", course / "nbgrader_config.py")
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for name, data in ZIP_FILES.items():
            zipped.writestr(name, data)
    out = tmp_path / "grades.csv"
    command = [
        sys.executable,
        "-m",
        "course_build.grade",
        LESSON,
        "--zip",
        str(archive),
        "--course",
        str(course),
        "--out",
        str(out),
    ]
    result = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = {row["student_id"]: row for row in csv.DictReader(out.open(encoding="utf-8"))}
    assert set(rows) == set(EXPECTED)
    for student, (score, note) in EXPECTED.items():
        row = rows[student]
        assert (float(row["auto_score"]), float(row["auto_max"])) == (score, 5), (student, row)
        assert row["assignment"] == LESSON and float(row["manual_pending"]) in (0, 5), (student, row)
        if note is None:
            assert row["notes"] == "", (student, row["notes"])
        else:
            assert note in row["notes"], (student, row["notes"])
    table = result.stdout
    assert "student" in table.splitlines()[0] and "notes" in table.splitlines()[0]
    assert all(student in table for student in EXPECTED)
