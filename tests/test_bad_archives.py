"""A bad LMS download stops ``python -m course_build.grade`` with one line, before anything slow,
and changes nothing (fast: the command exits before nbgrader or a kernel starts).

Each case is a file an instructor could really be handed: a download cut short, something that is
no zip, an empty zip, a password-protected one, a zip bomb (by entry count, by declared size, by
compression ratio, and one that lies about its sizes). The grade sheet, the gradebook and
``submitted/`` must stay byte-identical, and ``generate_assignment`` must not have run.
"""

import io
import shutil
import time
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from course_build import grade
from course_build.instructor.zip_safety import ArchiveError, ZipLimits, check_archive
from course_build.paths import AUTOGRADER_DIR

LESSON = "01_sequence_problem"
GOOD_ENTRY = f"smithjane_1001_5001_{LESSON}.ipynb"


def _notebook() -> bytes:
    return nbformat.writes(nbformat.v4.new_notebook()).encode()


def _zip_bytes(entries: list[tuple[str, bytes]], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as zipped:
        for name, data in entries:
            zipped.writestr(name, data)
    return buffer.getvalue()


def _encrypted() -> bytes:
    """A zip whose entry says it is encrypted (zipfile writes none, so the flag is set by hand)."""
    data = bytearray(_zip_bytes([(GOOD_ENTRY, _notebook())]))
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.index(signature) + offset
        data[at] |= 0x01
    return bytes(data)


def _lying_sizes() -> bytes:
    """A zip whose central directory declares 10 bytes for an entry of 3 MiB."""
    data = bytearray(_zip_bytes([(GOOD_ENTRY, b"x" * 3 * 2**20)], zipfile.ZIP_STORED))
    for signature, offset in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.index(signature) + offset
        data[at : at + 4] = (10).to_bytes(4, "little")
    return bytes(data)


def _cut_short() -> bytes:
    """The first half of a zip, as a download that stopped half-way leaves it."""
    data = _zip_bytes([(GOOD_ENTRY, _notebook()), (f"doejohn_1002_5002_{LESSON}.ipynb", _notebook())])
    return data[: len(data) // 2]


BAD_ARCHIVES = {
    "truncated": (_cut_short(), "is a damaged or incomplete zip"),
    "not a zip": (b"<html>Your session expired. Log in again.</html>", "is not a zip file"),
    "empty": (_zip_bytes([]), "is empty (no files in it)"),
    "only folders": (_zip_bytes([("submissions/", b"")]), "is empty (no files in it)"),
    "encrypted": (_encrypted(), "is encrypted (password-protected)"),
    "bomb by ratio": (_zip_bytes([(GOOD_ENTRY, b"\0" * 20 * 2**20)]), "a zip bomb"),
    "lying sizes": (_lying_sizes(), "is a damaged or incomplete zip"),
    "no LMS names": (_zip_bytes([("README.txt", b"hello")]), "no file name matches the LMS pattern"),
}


@pytest.fixture(scope="module")
def _gradebook(tmp_path_factory):
    """A gradebook that knows a student (built once: creating one takes seconds)."""
    path = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
    with Gradebook(f"sqlite:///{path}") as gradebook:
        gradebook.add_student("smithjane", last_name="smithjane", lms_user_id="1001")
    return path


@pytest.fixture
def course(tmp_path, _gradebook):
    """A course that has graded before: a gradebook, a grade sheet and a submitted folder."""
    course = tmp_path / "autograder"
    (course / "source" / LESSON).mkdir(parents=True)
    shutil.copy(AUTOGRADER_DIR / "source" / LESSON / f"{LESSON}.ipynb", course / "source" / LESSON)
    shutil.copy(AUTOGRADER_DIR / "nbgrader_config.py", course)
    shutil.copy(_gradebook, course / "gradebook.db")
    (course / "grades.csv").write_text("assignment,student_id\n01_sequence_problem,smithjane\n")
    submitted = course / "submitted" / "smithjane" / LESSON
    submitted.mkdir(parents=True)
    (submitted / f"{LESSON}.ipynb").write_bytes(_notebook())
    return course


def _snapshot(course: Path) -> dict[str, bytes]:
    return {str(p.relative_to(course)): p.read_bytes() for p in sorted(course.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case", list(BAD_ARCHIVES))
def test_a_bad_archive_is_one_line_and_changes_nothing(course, tmp_path, capsys, case):
    data, message = BAD_ARCHIVES[case]
    archive = tmp_path / "submissions.zip"
    archive.write_bytes(data)
    before = _snapshot(course)
    started = time.monotonic()
    with pytest.raises(SystemExit) as stopped:
        grade.main([LESSON, "--zip", str(archive), "--course", str(course)])
    assert stopped.value.code == 2
    assert time.monotonic() - started < 10  # before generate_assignment (17 s on its own)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err, err
    assert _snapshot(course) == before
    assert not (course / "release").exists()  # generate_assignment never ran


def test_a_missing_archive_is_one_line(course, tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        grade.main([LESSON, "--zip", str(tmp_path / "nowhere.zip"), "--course", str(course)])
    assert stopped.value.code == 2 and capsys.readouterr().err.strip().endswith("nowhere.zip does not exist")


def test_a_bad_time_option_stops_before_anything_slow(course, tmp_path, capsys):
    archive = tmp_path / "submissions.zip"
    archive.write_bytes(_zip_bytes([(GOOD_ENTRY, _notebook())]))
    before = _snapshot(course)
    with pytest.raises(SystemExit) as stopped:
        grade.main(
            [LESSON, "--zip", str(archive), "--course", str(course), "--submitted-at", "zoe=2026-10-12"]
        )
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.count("\n") == 1 and "no student 'zoe' in this zip" in err
    assert _snapshot(course) == before


@pytest.mark.parametrize(
    "limits, entries, message",
    [
        (
            ZipLimits(max_entries=3),
            [(f"s{i}_{i}_{i}_x.ipynb", b"{}") for i in range(4)],
            "has 4 entries, more than 3",
        ),
        (ZipLimits(max_total_bytes=2**20), [(GOOD_ENTRY, b"x" * (2**20 + 1))], "unpacks to more than 1 MiB"),
    ],
)
def test_the_limits_hold_on_declared_sizes(tmp_path, limits, entries, message):
    archive = tmp_path / "z.zip"
    archive.write_bytes(_zip_bytes(entries))
    with pytest.raises(ArchiveError, match=message):
        check_archive(archive, limits)


def test_a_sound_archive_passes(tmp_path):
    archive = tmp_path / "z.zip"
    archive.write_bytes(_zip_bytes([(GOOD_ENTRY, _notebook()), ("README.txt", b"from the LMS")]))
    check_archive(archive)
