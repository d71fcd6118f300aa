"""One command grades an LMS zip of any names and files to a CSV with exactly one right row per student.

The zip mixes what a real download holds: capitals, spaces and non-ASCII letters in names, two
students whose names differ only by an accent, two students with the same name, resubmissions
(Canvas's ``-1`` suffix and a repeated entry name), a file named after another student, entries
with ``../`` and absolute paths, a broken notebook, no notebook, a cheat, and a file the LMS
added. Grading it twice gives the same CSV. Where the sandbox cannot run, grading refuses unless
``--unsandboxed`` is given, and then every row says so.
"""

import csv
import json
import shutil
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import nbformat
import pytest
from grading_harness import make_submission, solution_answers

from course_build.nbgrader_plugins.sandbox import memory_mode
from course_build.paths import AUTOGRADER_DIR, REPO_ROOT

pytestmark = pytest.mark.slow
LESSON = "01_sequence_problem"
NOTEBOOK = f"{LESSON}.ipynb"


def _notebook(**answers: str) -> bytes:
    return nbformat.writes(make_submission(LESSON, {**solution_answers(LESSON), **answers})).encode()


WRONG = {
    "apply_paths": "rnn_path_40 = 40\nattention_path_40 = 1",
    "apply_crossover": "largest_cheaper_n = 512",
}
BLANK = nbformat.writes(make_submission(LESSON, {})).encode()
# Correct answers, one cell holding a lone surrogate: valid (escaped) JSON that no editor writes.
FORGED = json.dumps(
    make_submission(LESSON, {**solution_answers(LESSON), "apply_steps": "rnn_steps_40 = 40  # \ud800"}),
    ensure_ascii=True,
).encode("ascii")
HAND_GRADED = ("forger", "1017")  # every autograded cell waits for the instructor

# (zip entry name, contents)
ZIP_FILES = [
    (f"goodstudent_1001_2001_{NOTEBOOK}", _notebook()),
    (f"wrongstudent_1002_2002_{NOTEBOOK}", _notebook(**WRONG)),
    (f"brokenstudent_1003_2003_{NOTEBOOK}", b'{"cells": ['),
    (
        f"cheater_1004_2004_{NOTEBOOK}",
        _notebook(apply_steps="np.allclose = lambda *a, **k: True\nrnn_steps_40 = 1"),
    ),
    (f"latestudent_1005_2005_{NOTEBOOK}", BLANK),
    (f"latestudent_LATE_1005_2006_{LESSON}-1.ipynb", _notebook()),
    ("nonotebook_1006_2007_answers.pdf", b"%PDF-1.4 not a notebook"),
    (f"MacDonald_1007_2008_{NOTEBOOK}", _notebook()),
    (f"anne marie_1008_2009_{NOTEBOOK}", _notebook()),
    (f"zoë_1009_2010_{NOTEBOOK}", _notebook()),
    (f"zoe_1010_2011_{NOTEBOOK}", _notebook(**WRONG)),
    (f"twice_1011_2012_{NOTEBOOK}", BLANK),
    (f"twice_1011_2012_{NOTEBOOK}", _notebook()),
    (f"mallory_1012_2013_zoe_1010_2011_{NOTEBOOK}", BLANK),
    (f"../../evil_1013_2014_{NOTEBOOK}", _notebook()),
    (f"/abs/path/root_1014_2015_{NOTEBOOK}", _notebook()),
    (f"smithjane_1015_2016_{NOTEBOOK}", _notebook()),
    (f"smithjane_1016_2017_{NOTEBOOK}", _notebook(**WRONG)),
    (f"forger_1017_2018_{NOTEBOOK}", FORGED),
    ("README.txt", b"a file the LMS added, matched by no student"),
]
# LMS name, user id -> (autograded score, a phrase its notes must hold or None for no notes)
EXPECTED = {
    ("goodstudent", "1001"): (5, None),
    ("wrongstudent", "1002"): (3, None),
    ("brokenstudent", "1003"): (0, "could not be read"),
    ("cheater", "1004"): (4, "numpy.allclose was replaced"),
    ("latestudent", "1005"): (5, "not graded: '01_sequence_problem.ipynb'"),
    ("nonotebook", "1006"): (0, "answers.pdf"),
    ("MacDonald", "1007"): (5, None),
    ("anne marie", "1008"): (5, None),
    ("zoë", "1009"): (5, None),
    ("zoe", "1010"): (3, None),
    ("twice", "1011"): (5, "graded the latest of 2"),
    ("mallory", "1012"): (0, "submitted as"),
    ("evil", "1013"): (5, None),
    ("root", "1014"): (5, None),
    ("smithjane", "1015"): (5, None),
    ("smithjane", "1016"): (3, None),
    HAND_GRADED: (0, "cell 24 of the notebook holds text that is not valid Unicode"),
}


def _course(tmp_path: Path, extra_config: str = "") -> Path:
    course = tmp_path / "autograder"
    shutil.copytree(AUTOGRADER_DIR / "source" / LESSON, course / "source" / LESSON)
    config = (AUTOGRADER_DIR / "nbgrader_config.py").read_text(encoding="utf-8")
    (course / "nbgrader_config.py").write_text(config + extra_config, encoding="utf-8")
    return course


def _archive(tmp_path: Path, files) -> Path:
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as zipped, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a repeated entry name is one of the cases
        for name, data in files:
            zipped.writestr(zipfile.ZipInfo(name), data)
    return archive


def _grade(course: Path, archive: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        "-m",
        "course_build.grade",
        LESSON,
        "--zip",
        str(archive),
        "--course",
        str(course),
    ]
    command += ["--out", str(out), *extra]
    return subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=1800)


@pytest.fixture(scope="module")
def graded_twice(tmp_path_factory):
    """The CSV of grading the zip, the command's output, and the CSV of grading it again."""
    tmp_path = tmp_path_factory.mktemp("grade_command")
    course, archive = _course(tmp_path), _archive(tmp_path, ZIP_FILES)
    first = _grade(course, archive, tmp_path / "grades.csv")
    assert first.returncode == 0, first.stdout + first.stderr
    again = _grade(course, archive, tmp_path / "grades-again.csv")
    assert again.returncode == 0, again.stdout + again.stderr
    return tmp_path, first.stdout


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_every_student_gets_exactly_one_right_row(graded_twice):
    tmp_path, _ = graded_twice
    rows = _rows(tmp_path / "grades.csv")
    by_lms = {(row["lms_name"], row["lms_user_id"]): row for row in rows}
    assert len(rows) == len(by_lms) == len(EXPECTED) and set(by_lms) == set(EXPECTED)
    assert len({row["student_id"] for row in rows}) == len(rows)
    for student, (score, note) in EXPECTED.items():
        row = by_lms[student]
        assert (float(row["auto_score"]), float(row["auto_max"])) == (score, 5), (student, row)
        if student == HAND_GRADED:
            continue  # test_a_cell_that_is_not_valid_unicode_sends_the_notebook_to_hand_grading
        assert row["assignment"] == LESSON and row["manual_pending"] in ("0", "5"), (student, row)
        if row["manual_pending"] == "5":  # written answers not graded yet: pending, never a 0
            assert row["manual_score"] == "" and row["total"] == row["auto_score"], (student, row)
            assert row["status"] == "5 points pending: recall_sequential, extend_long_inputs", (student, row)
        if note is None:
            assert row["notes"] == "", (student, row["notes"])
        else:
            assert note in row["notes"], (student, row["notes"])


def test_a_cell_that_is_not_valid_unicode_sends_the_notebook_to_hand_grading(graded_twice):
    """nbgrader cannot run or store such a cell: the student's file is kept as submitted, an
    escaped copy is graded, and no autograded point counts before the instructor decides."""
    tmp_path, _ = graded_twice
    row = next(r for r in _rows(tmp_path / "grades.csv") if (r["lms_name"], r["lms_user_id"]) == HAND_GRADED)
    assert (row["auto_score"], row["manual_pending"], row["total"]) == ("0", "10", "0"), row
    status = row["status"]
    assert status.startswith("10 points pending: ") and "apply_steps_test" in status, status
    assert "kept unchanged as 01_sequence_problem.ipynb.submitted" in row["notes"], row["notes"]
    folder = tmp_path / "autograder" / "submitted" / row["student_id"] / LESSON
    assert (folder / f"{NOTEBOOK}.submitted").read_bytes() == FORGED
    graded = tmp_path / "autograder" / "autograded" / row["student_id"] / LESSON / NOTEBOOK
    sources = [cell.source for cell in nbformat.read(graded, as_version=4).cells]
    assert "rnn_steps_40 = 40  # \\ud800" in sources  # the escape, as six characters


def test_names_become_safe_distinct_ids_and_late_markers_are_kept(graded_twice):
    rows = {(r["lms_name"], r["lms_user_id"]): r for r in _rows(graded_twice[0] / "grades.csv")}
    ids = {key: row["student_id"] for key, row in rows.items()}
    assert ids[("goodstudent", "1001")] == "goodstudent"
    assert ids[("zoe", "1010")] == "zoe" and ids[("zoë", "1009")].startswith("zoe-")
    assert ids[("smithjane", "1015")] == "smithjane" and ids[("smithjane", "1016")] == "smithjane-u1016"
    assert ids[("anne marie", "1008")].startswith("anne-marie-")
    assert {key for key, row in rows.items() if row["lms_late"] == "yes"} == {("latestudent", "1005")}


def test_no_zip_entry_was_written_outside_the_course(graded_twice):
    tmp_path, _ = graded_twice
    assert not list(tmp_path.parent.glob("evil*")) and not Path("/abs/path").exists()
    assert (
        sorted(p.name for p in (tmp_path / "autograder").iterdir() if p.name.startswith(("evil", "root")))
        == []
    )


def test_regrading_the_same_zip_gives_the_same_csv(graded_twice):
    tmp_path, _ = graded_twice
    assert _rows(tmp_path / "grades-again.csv") == _rows(tmp_path / "grades.csv")


def test_the_command_prints_a_table_the_ignored_files_and_the_time_of_each_phase(graded_twice):
    _, output = graded_twice
    lines = output.splitlines()
    assert "ignored 'README.txt'" in output
    header = next(line for line in lines if line.startswith("student"))
    assert header.split() == ["student", "auto", "written", "late", "total", "notes"]
    good = next(line for line in lines if line.startswith("goodstudent"))
    assert good.split()[1:6] == ["5/5", "pending", "(5)", "on", "time"] and "5/10 so far" in good
    assert all(student in output for student in ("goodstudent", "zoe", "macdonald-"))
    spent = next(line for line in lines if line.startswith("time spent: "))
    assert "nbgrader autograde" in spent and "nbgrader generate_feedback" in spent


def test_without_a_usable_sandbox_grading_refuses_or_says_every_grade_is_unprotected(tmp_path):
    course = _course(tmp_path, '\nc.SandboxedKernelManager.bwrap = "/nonexistent/bwrap"\n')
    archive = _archive(tmp_path, ZIP_FILES[:2])
    refused = _grade(course, archive, tmp_path / "grades.csv")
    assert refused.returncode == 2 and "Refusing to grade" in refused.stderr, refused.stdout + refused.stderr
    assert not (tmp_path / "grades.csv").exists()
    graded = _grade(course, archive, tmp_path / "grades.csv", "--unsandboxed")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    rows = _rows(tmp_path / "grades.csv")
    assert [(row["student_id"], row["auto_score"]) for row in rows] == [
        ("goodstudent", "5"),
        ("wrongstudent", "3"),
    ]
    assert all("UNPROTECTED" in row["notes"] for row in rows)


# Holds 1.25 GiB of shared memory (outside RLIMIT_DATA) before it answers.
MEMORY_HOG = (
    "import mmap\nheld = []\nfor _ in range(20):\n"
    "    held.append(mmap.mmap(-1, 64 * 2**20, flags=mmap.MAP_SHARED))\n"
    "    held[-1].write(b'x' * 64 * 2**20)\n"
    "rnn_steps_40 = 40"
)


def test_a_kernel_killed_for_memory_is_noted_as_such_and_its_neighbour_is_untouched(tmp_path):
    """Under a 0.75 GiB limit, a cgroup kills the hog's kernel: the note says it was memory and
    names the limit (a crash or a timeout reads otherwise). Where no cgroup can be made, the seccomp
    filter refuses shared memory instead, and nothing is killed."""
    course = _course(tmp_path, "\nc.SandboxedKernelManager.memory_limit_gib = 0.75\n")
    archive = _archive(
        tmp_path, [ZIP_FILES[0], (f"hog_1018_2019_{NOTEBOOK}", _notebook(apply_steps=MEMORY_HOG))]
    )
    graded = _grade(course, archive, tmp_path / "grades.csv")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    rows = {row["student_id"]: row for row in _rows(tmp_path / "grades.csv")}
    assert (rows["goodstudent"]["auto_score"], rows["goodstudent"]["notes"]) == ("5", "")
    killed = "apply_steps: the kernel was killed for using more than its memory limit of 0.75 GiB"
    if memory_mode()[0] == "cgroup":
        assert killed in rows["hog"]["notes"], rows["hog"]["notes"]
    else:
        assert "killed" not in rows["hog"]["notes"], rows["hog"]["notes"]
    assert rows["hog"]["auto_score"] == "4", rows["hog"]  # apply_steps_test alone fails
