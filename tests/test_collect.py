"""Collecting an LMS zip: names, ids, resubmissions and hostile file names (fast, no kernel)."""

import hashlib
import json
import re
import warnings
import zipfile

import nbformat
import pytest

from course_build.instructor.collect_zip import collect_zip
from course_build.instructor.late_policy import LatePolicy, assess
from course_build.instructor.lms import parse_submission_name, read_lms_zip, resubmission_number
from course_build.instructor.provenance import describe_source
from course_build.instructor.student_ids import assign_ids, nbgrader_id
from course_build.instructor.student_records import read_record
from course_build.instructor.submission_times import SubmissionTimeError, instructor_times
from course_build.instructor.submitted_folders import normalize_submission

LESSON = "03_attention"
SAFE_ID = re.compile(r"^[a-z][a-z0-9-]*$")


@pytest.mark.parametrize(
    "entry, parts",
    [
        ("smithjane_1234_5678_03_attention.ipynb", ("smithjane", None, "1234", "5678", "03_attention.ipynb")),
        (
            "doejohn_LATE_1240_5690_03_attention-1.ipynb",
            ("doejohn", "LATE_", "1240", "5690", "03_attention-1.ipynb"),
        ),
        ("MacDonald_late_7_8_notes.pdf", ("MacDonald", "late_", "7", "8", "notes.pdf")),
        ("anne marie_11_12_03_attention.ipynb", ("anne marie", None, "11", "12", "03_attention.ipynb")),
        ("submissions/zoë_13_14_a_99_98_b.ipynb", ("zoë", None, "13", "14", "a_99_98_b.ipynb")),
        ("../../etc/evil_15_16_x.ipynb", ("evil", None, "15", "16", "x.ipynb")),
        ("C:\\Users\\x\\bob_17_18_y.ipynb", ("bob", None, "17", "18", "y.ipynb")),
        ("jean_luc_19_20_x.ipynb", ("jean_luc", None, "19", "20", "x.ipynb")),
        ("SmithJane_21_22_03_Attention.IPYNB", ("SmithJane", None, "21", "22", "03_Attention.IPYNB")),
        ("李雷_LATE_23_24_03_attention-12.ipynb", ("李雷", "LATE_", "23", "24", "03_attention-12.ipynb")),
    ],
)
def test_lms_file_names_are_read_as_written(entry, parts):
    found = parse_submission_name(entry)
    assert (
        found["student"],
        found["late"],
        found["user_id"],
        found["submission_id"],
        found["file_name"],
    ) == parts


@pytest.mark.parametrize(
    "entry", ["README.txt", "03_attention.ipynb", "smith_x_1_file.ipynb", "nobody_12_.ipynb"]
)
def test_other_file_names_are_not_lms_files(entry):
    assert parse_submission_name(entry) is None


@pytest.mark.parametrize(
    "file_name, number",
    [
        (f"{LESSON}.ipynb", 0),
        (f"{LESSON}-1.ipynb", 1),
        (f"{LESSON}-12.ipynb", 12),
        ("03_Attention.IPYNB", 0),
        (f"{LESSON} (1).ipynb", None),
        (f"{LESSON}-.ipynb", None),
        (f"{LESSON}-1.ipynb.txt", None),
        (f"my_{LESSON}.ipynb", None),
        ("03_dot_products.ipynb", None),
    ],
)
def test_resubmissions_are_numbered_by_canvas_suffix(file_name, number):
    assert resubmission_number(file_name, LESSON) == number


@pytest.mark.parametrize(
    "name", ["zoë", "MacDonald", "anne marie", "../../x", "/abs/path", "Ωμέγα", "", "1st", "a" * 300]
)
def test_any_name_gives_a_safe_stable_id(name):
    student_id = nbgrader_id(name)
    assert SAFE_ID.match(student_id) and len(student_id) <= 64
    assert nbgrader_id(name) == student_id


def test_plain_names_keep_their_id_and_near_misses_never_collide():
    assert nbgrader_id("smithjane") == "smithjane"
    names = ["zoe", "zoë", "Zoe", "zoe-", "anne marie", "anne-marie", "annemarie", "ANNE MARIE"]
    assert len({nbgrader_id(n) for n in names}) == len(names)


def test_ids_are_told_apart_by_user_id_and_reused_later():
    first = assign_ids({"20": "smithjane", "10": "smithjane", "30": "zoë"}, known={})
    assert first["10"] == "smithjane" and first["20"] == "smithjane-u20"
    later = assign_ids({"20": "smithjane", "40": "smithjane"}, known=first)
    assert later["20"] == "smithjane-u20" and later["40"] == "smithjane-u40"


def _notebook(tag: str) -> bytes:
    return nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(tag)])).encode()


@pytest.fixture
def course(tmp_path):
    """A course directory with the blank release of the lesson."""
    course = tmp_path / "course"
    (course / "release" / LESSON).mkdir(parents=True)
    (course / "release" / LESSON / f"{LESSON}.ipynb").write_bytes(_notebook("blank release"))
    return course


def _zip(tmp_path, entries):
    archive = tmp_path / "download.zip"
    with zipfile.ZipFile(archive, "w") as zipped, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a repeated name is one of the cases
        for name, data in entries:
            zipped.writestr(name, data)
    return archive


def _graded(course, student):
    path = course / "submitted" / student / LESSON / f"{LESSON}.ipynb"
    return nbformat.reads(path.read_text(), as_version=4).cells[0].source if path.exists() else None


def test_a_messy_zip_gives_every_student_one_folder_and_a_record(course, tmp_path):
    entries = [
        (f"MacDonald_1_10_{LESSON}.ipynb", _notebook("macdonald")),
        (f"anne marie_2_20_{LESSON}.ipynb", _notebook("anne marie")),
        (f"zoë_3_30_{LESSON}.ipynb", _notebook("zoë")),
        (f"zoe_4_40_{LESSON}.ipynb", _notebook("zoe")),
        (f"late_5_50_{LESSON}.ipynb", _notebook("blank")),
        (f"late_LATE_5_51_{LESSON}-1.ipynb", _notebook("resubmitted")),
        (f"twice_6_60_{LESSON}.ipynb", _notebook("first copy")),
        (f"twice_6_60_{LESSON}.ipynb", _notebook("second copy")),
        (f"mallory_7_70_zoe_4_40_{LESSON}.ipynb", _notebook("mallory")),
        (f"../../evil_8_80_{LESSON}.ipynb", _notebook("evil")),
        (f"/abs/path/root_9_90_{LESSON}.ipynb", _notebook("abs")),
        ("nonotebook_10_100_answers.pdf", b"%PDF"),
        ("renamed_11_110_my work.ipynb", _notebook("renamed")),
        ("README.txt", b"added by the LMS"),
    ]
    collection = collect_zip(course, LESSON, _zip(tmp_path, entries), known={})
    students, ignored = collection.students, collection.ignored
    assert ignored == ["README.txt"]
    assert len(students) == len(set(students)) == 11 and all(SAFE_ID.match(s) for s in students)
    by_name = {read_record(course, LESSON, s).name: s for s in students}
    assert set(by_name) == {
        "MacDonald",
        "anne marie",
        "zoë",
        "zoe",
        "late",
        "twice",
        "mallory",
        "evil",
        "root",
        "nonotebook",
        "renamed",
    }
    assert by_name["zoe"] == "zoe" and by_name["zoë"] != "zoe"
    assert _graded(course, by_name["zoe"]) == "zoe" and _graded(course, by_name["zoë"]) == "zoë"
    assert _graded(course, by_name["mallory"]) == "mallory"  # not zoe's file
    assert _graded(course, by_name["late"]) == "resubmitted"
    assert _graded(course, by_name["twice"]) == "second copy"
    late = read_record(course, LESSON, by_name["late"])
    assert late.late and any("not graded: '03_attention.ipynb'" in n for n in late.notes)
    assert any("latest of 2" in n for n in read_record(course, LESSON, by_name["twice"]).notes)
    assert _graded(course, by_name["nonotebook"]) is None
    assert any("answers.pdf" in n for n in read_record(course, LESSON, by_name["nonotebook"]).notes)
    assert any(
        "submitted as 'my work.ipynb'" in n for n in read_record(course, LESSON, by_name["renamed"]).notes
    )
    written = sorted(p.relative_to(course).parts[0] for p in course.rglob("*") if p.is_file())
    assert set(written) == {"collected", "release", "submitted"}
    assert not (tmp_path / "etc").exists() and not any(tmp_path.parent.glob("evil*"))


def test_a_later_batch_keeps_the_ids_of_known_students(course, tmp_path):
    second = collect_zip(
        course,
        LESSON,
        _zip(
            tmp_path,
            [
                (f"smithjane_10_2_{LESSON}.ipynb", _notebook("b")),
                (f"smithjane_20_3_{LESSON}.ipynb", _notebook("c")),
            ],
        ),
        known={"20": "smithjane"},
    ).students
    assert sorted(second) == ["smithjane", "smithjane-u10"]
    assert _graded(course, "smithjane") == "c" and _graded(course, "smithjane-u10") == "b"


def test_fixing_up_a_folder_is_idempotent(course):
    folder = course / "submitted" / "broken" / LESSON
    folder.mkdir(parents=True)
    (folder / f"{LESSON}.ipynb").write_text('{"cells": [')
    notes = normalize_submission(course, LESSON, "broken")
    assert len(notes) == 1 and "could not be read" in notes[0]
    assert _graded(course, "broken") == "blank release"
    assert normalize_submission(course, LESSON, "broken") == notes
    record = json.loads((course / "collected" / LESSON / "broken" / "record.json").read_text())
    assert record["fixup_notes"] == notes


def test_a_folder_without_a_notebook_gets_the_blank_release(course):
    folder = course / "submitted" / "empty" / LESSON
    folder.mkdir(parents=True)
    (folder / "answers.py").write_text("x = 1")
    assert normalize_submission(course, LESSON, "empty") == [
        f"no {LESSON}.ipynb was submitted (files found: answers.py); graded as a blank notebook"
    ]


def test_the_zip_reader_lists_every_entry(tmp_path):
    files, ignored = read_lms_zip(_zip(tmp_path, [("a_1_2_x.ipynb", b"1"), ("dir/", b""), ("b.txt", b"")]))
    assert [f.student for f in files] == ["a"] and ignored == ["b.txt"]


def test_a_folder_with_a_resubmission_is_graded_on_the_latest(course):
    folder = course / "submitted" / "resubmitter" / LESSON
    folder.mkdir(parents=True)
    (folder / f"{LESSON}.ipynb").write_bytes(_notebook("blank"))
    (folder / f"{LESSON}-1.ipynb").write_bytes(_notebook("first try"))
    (folder / f"{LESSON}-2.ipynb").write_bytes(_notebook("correct"))
    notes = normalize_submission(course, LESSON, "resubmitter")
    assert _graded(course, "resubmitter") == "correct"
    assert any(f"not graded: '{LESSON}-1.ipynb', '{LESSON}.ipynb'" in note for note in notes), notes


@pytest.mark.parametrize("file_name", ["Lösung final.ipynb", "03_Attention.ipynb", "answers.IPYNB"])
def test_a_single_notebook_under_another_name_is_graded_and_kept(course, file_name):
    folder = course / "submitted" / "renamer" / LESSON
    folder.mkdir(parents=True)
    (folder / file_name).write_bytes(_notebook("my work"))
    notes = normalize_submission(course, LESSON, "renamer")
    assert _graded(course, "renamer") == "my work"
    assert notes == [f"notebook submitted as {file_name!r}; graded as '{LESSON}.ipynb'"]
    assert (folder / f"{file_name}.submitted").is_file()  # set aside, not deleted


def test_several_notebooks_none_named_after_the_lesson_get_the_blank_release(course):
    folder = course / "submitted" / "unsure" / LESSON
    folder.mkdir(parents=True)
    (folder / "a.ipynb").write_bytes(_notebook("a"))
    (folder / "b.ipynb").write_bytes(_notebook("b"))
    notes = normalize_submission(course, LESSON, "unsure")
    assert _graded(course, "unsure") == "blank release"
    assert notes == [
        f"no {LESSON}.ipynb was submitted (files found: a.ipynb, b.ipynb); graded as a blank notebook"
    ]


@pytest.mark.parametrize(
    "content, problem",
    [(b"{}", "ValidationError"), (b"\xff\xfe not json", "UnicodeDecodeError"), (b"", "NotJSONError")],
)
def test_a_notebook_that_is_not_one_is_set_aside_and_graded_blank(course, content, problem):
    folder = course / "submitted" / "broken" / LESSON
    folder.mkdir(parents=True)
    (folder / f"{LESSON}.ipynb").write_bytes(content)
    notes = normalize_submission(course, LESSON, "broken")
    assert _graded(course, "broken") == "blank release"
    assert len(notes) == 1 and f"could not be read ({problem}" in notes[0], notes
    assert (folder / f"{LESSON}.ipynb.submitted").read_bytes() == content


def test_a_student_without_a_folder_still_gets_one(course):
    notes = normalize_submission(course, LESSON, "absent")
    assert _graded(course, "absent") == "blank release"
    assert notes == [f"no {LESSON}.ipynb was submitted; graded as a blank notebook"]


# --- Submissions only move forward; every collected file keeps its provenance --------------------

FIRST_BATCH = [  # the term's first zip: Canvas names, times from the LMS
    (f"smithjane_1001_5001_{LESSON}.ipynb", "jane v1", (2026, 10, 12, 20, 0, 0)),
    (f"doejohn_LATE_1002_5002_{LESSON}.ipynb", "john v1", (2026, 10, 13, 9, 0, 0)),
    (f"MacDonald_LATE_1003_5003_{LESSON}.ipynb", "mac v1", (2026, 10, 14, 9, 0, 0)),
]
RESUBMISSIONS = [  # a later zip: Jane resubmitted late, under Canvas's -1 suffix
    (f"smithjane_LATE_1001_5101_{LESSON}-1.ipynb", "jane v2", (2026, 10, 15, 23, 0, 0)),
    (f"doejohn_LATE_1002_5002_{LESSON}.ipynb", "john v1", (2026, 10, 13, 9, 0, 0)),
]


def _timed_zip(path, entries):
    with zipfile.ZipFile(path, "w") as zipped:
        for name, tag, when in entries:
            zipped.writestr(zipfile.ZipInfo(name, date_time=when), _notebook(tag))
    return path


def _ledger(course):
    return [json.loads(line) for line in (course / "collected" / "ledger.jsonl").read_text().splitlines()]


def test_rerunning_an_older_zip_keeps_the_newer_submission_graded_and_its_lateness(course, tmp_path):
    first = _timed_zip(tmp_path / "first.zip", FIRST_BATCH)
    later = _timed_zip(tmp_path / "resubmissions.zip", RESUBMISSIONS)
    collect_zip(course, LESSON, first, known={})
    collect_zip(course, LESSON, later, known={})
    again = collect_zip(course, LESSON, first, known={})
    assert _graded(course, "smithjane") == "jane v2"
    jane = read_record(course, LESSON, "smithjane")
    assert (jane.late, jane.submitted_at, jane.submission_id) == (True, "2026-10-15T23:00:00", 5101)
    assert list(again.kept_newer) == ["smithjane"] and not again.replaced_newer
    assert (
        "submission 5001 of first.zip is older than the graded submission 5101"
        in again.kept_newer["smithjane"]
    )
    assert again.kept_newer["smithjane"] in jane.notes
    john = read_record(course, LESSON, "doejohn")  # the same submission again: unchanged
    assert (john.late, john.submitted_at, john.submission_id) == (True, "2026-10-13T09:00:00", 5002)
    kept = course / "collected" / LESSON / "smithjane" / "submissions"
    assert sorted(p.name for p in kept.iterdir()) == [f"5001-{LESSON}.ipynb", f"5101-{LESSON}-1.ipynb"]
    last = [line for line in _ledger(course) if line["student"] == "smithjane"][-1]
    assert (last["submission_id"], last["zip_name"]) == (5001, "first.zip")
    assert last["outcome"] == "kept aside: the graded submission 5101 is newer"


def test_replace_grades_the_older_file_and_says_so(course, tmp_path):
    first = _timed_zip(tmp_path / "first.zip", FIRST_BATCH)
    collect_zip(course, LESSON, _timed_zip(tmp_path / "resubmissions.zip", RESUBMISSIONS), known={})
    again = collect_zip(course, LESSON, first, known={}, replace=True)
    assert _graded(course, "smithjane") == "jane v1" and not again.kept_newer
    note = "--replace: graded submission 5001 of first.zip over the newer submission 5101"
    assert again.replaced_newer == {"smithjane": note}
    jane = read_record(course, LESSON, "smithjane")
    assert note in jane.notes and (jane.late, jane.submission_id) == (False, 5001)
    assert (course / "collected" / LESSON / "smithjane" / "submissions" / f"5101-{LESSON}-1.ipynb").is_file()


def test_every_collected_file_can_be_traced_to_its_zip_entry(course, tmp_path):
    first = _timed_zip(tmp_path / "first.zip", FIRST_BATCH)
    collect_zip(course, LESSON, first, known={})
    graded = course / "submitted" / "smithjane" / LESSON / f"{LESSON}.ipynb"
    source = read_record(course, LESSON, "smithjane").source
    assert source == {
        "zip_name": "first.zip",
        "zip_sha256": hashlib.sha256(first.read_bytes()).hexdigest(),
        "entry": f"smithjane_1001_5001_{LESSON}.ipynb",
        "submission_id": 5001,
        "submitted_at": "2026-10-12T20:00:00",
        "time_source": "zip entry time",
        "sha256": hashlib.sha256(graded.read_bytes()).hexdigest(),
    }
    assert describe_source(source).startswith(
        f"first.zip: smithjane_1001_5001_{LESSON}.ipynb (submission 5001"
    )
    lines = _ledger(course)
    assert sorted(line["entry"] for line in lines) == sorted(name for name, _, _ in FIRST_BATCH)
    for line in lines:
        stored = course / line["kept_as"]
        assert hashlib.sha256(stored.read_bytes()).hexdigest() == line["sha256"]
        assert line["outcome"] == "graded" and line["lesson"] == LESSON and line["collected_at"]
    collect_zip(course, LESSON, first, known={})
    assert _ledger(course)[: len(lines)] == lines and len(_ledger(course)) == 2 * len(lines)  # append-only


def test_a_folder_filled_by_hand_is_set_aside_not_deleted(course, tmp_path):
    folder = course / "submitted" / "smithjane" / LESSON
    folder.mkdir(parents=True)
    by_hand = _notebook("by hand")
    (folder / f"{LESSON}.ipynb").write_bytes(by_hand)
    collect_zip(course, LESSON, _timed_zip(tmp_path / "first.zip", FIRST_BATCH), known={})
    assert _graded(course, "smithjane") == "jane v1"
    aside = course / "collected" / LESSON / "smithjane" / "set-aside-1" / f"{LESSON}.ipynb"
    assert aside.read_bytes() == by_hand


# --- Lateness: a single entry's time is trusted; the instructor can give times ----------------------


def test_a_one_entry_zip_keeps_its_time_and_gets_the_per_day_penalty(course, tmp_path):
    late = [(f"smithjane_LATE_1001_5101_{LESSON}-1.ipynb", "jane v2", (2026, 10, 17, 11, 59, 0))]
    collect_zip(course, LESSON, _timed_zip(tmp_path / "late.zip", late), known={})
    jane = read_record(course, LESSON, "smithjane")
    assert (jane.submitted_at, jane.time_source) == ("2026-10-17T11:59:00", "zip entry time")
    policy = LatePolicy(deadlines={LESSON: "2026-10-12T23:59"}, penalty_per_day=0.1)
    lateness = assess(policy, LESSON, jane.submitted_at, jane.late)
    assert (lateness.days_late, lateness.penalty_fraction, lateness.notes) == (5, pytest.approx(0.5), ())


def test_a_zip_whose_entries_share_one_time_gives_no_time(course, tmp_path):
    same = (2026, 11, 1, 8, 0, 0)
    entries = [(name, tag, same) for name, tag, _ in FIRST_BATCH]
    collect_zip(course, LESSON, _timed_zip(tmp_path / "made-at-once.zip", entries), known={})
    jane = read_record(course, LESSON, "smithjane")
    assert (jane.submitted_at, jane.time_source) == (None, "unknown")


def test_times_the_instructor_gives_win_and_say_where_they_came_from(course, tmp_path):
    same = (2026, 11, 1, 8, 0, 0)
    entries = [(name, tag, same) for name, tag, _ in FIRST_BATCH]
    table = tmp_path / "times.csv"
    table.write_text("student,submitted_at\n1003,2026-10-14T10:00+02:00\n")
    times = instructor_times(["smithjane=2026-10-12T21:00", "doejohn=2026-10-13T09:30"], table)
    collect_zip(course, LESSON, _timed_zip(tmp_path / "z.zip", entries), known={}, times=times)
    records = {s: read_record(course, LESSON, s) for s in ("smithjane", "doejohn")}
    assert (records["smithjane"].submitted_at, records["smithjane"].time_source) == (
        "2026-10-12T21:00:00",
        "instructor (--submitted-at)",
    )
    mac = next(
        read_record(course, LESSON, p.name)
        for p in (course / "submitted").iterdir()
        if p.name.startswith("mac")
    )
    assert (mac.submitted_at, mac.time_source) == (
        "2026-10-14T10:00:00+02:00",
        f"instructor ({table} line 2)",
    )


@pytest.mark.parametrize(
    "pairs, rows, message",
    [
        (["smithjane"], None, "write STUDENT=TIME"),
        (["smithjane=yesterday"], None, "'yesterday' is not a time"),
        (["=2026-10-12T21:00"], None, "the student is missing"),
        (["smithjane=2026-10-12T21:00", "smithjane=2026-10-13T21:00"], None, "given a time twice"),
        ([], "name,time\njane,2026-10-12\n", "needs the columns student,submitted_at"),
        ([], "student,submitted_at\njane,soon\n", "line 2: 'soon' is not a time"),
        ([], "student;submitted_at\njane;2026-10-12\n", "needs the columns student,submitted_at"),
    ],
)
def test_a_malformed_time_is_one_clear_error(tmp_path, pairs, rows, message):
    table = None
    if rows is not None:
        table = tmp_path / "times.csv"
        table.write_text(rows)
    with pytest.raises(SubmissionTimeError, match=re.escape(message)):
        instructor_times(pairs, table)


@pytest.mark.parametrize(
    "written, message", [("nobody", "no student 'nobody' in this zip"), ("smith", "names 2 students")]
)
def test_a_time_for_a_student_not_in_the_zip_stops_before_anything_is_written(
    course, tmp_path, written, message
):
    entries = [
        (f"smith_1_10_{LESSON}.ipynb", "a", (2026, 10, 1, 0, 0, 0)),
        (f"smith_2_20_{LESSON}.ipynb", "b", (2026, 10, 2, 0, 0, 0)),
    ]
    archive = _timed_zip(tmp_path / "z.zip", entries)
    with pytest.raises(SubmissionTimeError, match=message):
        collect_zip(
            course, LESSON, archive, known={}, times=instructor_times([f"{written}=2026-10-12T21:00"], None)
        )
    assert not (course / "submitted").exists() and not (course / "collected").exists()


def test_a_newer_submission_without_a_notebook_is_not_undone_by_an_older_zip(course, tmp_path):
    notebook = [(f"smithjane_1001_5001_{LESSON}.ipynb", "jane v1", (2026, 10, 12, 20, 0, 0))]
    collect_zip(course, LESSON, _timed_zip(tmp_path / "first.zip", notebook), known={})
    with zipfile.ZipFile(tmp_path / "pdf.zip", "w") as zipped:
        zipped.writestr(zipfile.ZipInfo("smithjane_1001_5201_answers.pdf", (2026, 10, 13, 8, 0, 0)), b"%PDF")
    collect_zip(course, LESSON, tmp_path / "pdf.zip", known={})
    assert _graded(course, "smithjane") is None  # graded as the blank release, with a note
    again = collect_zip(course, LESSON, tmp_path / "first.zip", known={})
    assert list(again.kept_newer) == ["smithjane"] and _graded(course, "smithjane") is None
    assert read_record(course, LESSON, "smithjane").submission_id == 5201


def _with_lone_surrogates(*sources: str) -> bytes:
    """A notebook whose code cells hold ``sources``: escaped JSON, as a forged file carries them."""
    cells = [nbformat.v4.new_code_cell(source) for source in sources]
    return json.dumps(nbformat.v4.new_notebook(cells=cells), ensure_ascii=True).encode("ascii")


@pytest.mark.parametrize("submitted_as", [f"{LESSON}.ipynb", f"{LESSON}-1.ipynb"])
def test_a_cell_that_is_not_valid_unicode_is_kept_and_its_escaped_copy_graded_by_hand(course, submitted_as):
    folder = course / "submitted" / "forger" / LESSON
    folder.mkdir(parents=True)
    submitted = _with_lone_surrogates("x = 1", "softmax = '\ud800'  # \udc80")
    (folder / submitted_as).write_bytes(submitted)
    notes = normalize_submission(course, LESSON, "forger")
    assert (folder / f"{submitted_as}.submitted").read_bytes() == submitted  # kept byte for byte
    graded = nbformat.read(folder / f"{LESSON}.ipynb", as_version=4)
    assert [cell.source for cell in graded.cells] == ["x = 1", "softmax = '\\ud800'  # \\udc80"]
    assert any(
        "cell 1 of the notebook holds text that is not valid Unicode" in note
        and "every autograded cell waits for your grade" in note
        and f"kept unchanged as {submitted_as}.submitted" in note
        for note in notes
    ), notes
    assert read_record(course, LESSON, "forger").grade_by_hand
    assert normalize_submission(course, LESSON, "forger") == notes  # a regrade changes nothing
    assert (folder / f"{submitted_as}.submitted").read_bytes() == submitted


def test_a_valid_notebook_is_not_sent_to_hand_grading(course):
    folder = course / "submitted" / "honest" / LESSON
    folder.mkdir(parents=True)
    (folder / f"{LESSON}.ipynb").write_bytes(_with_lone_surrogates("text = 'zoë 李雷 \U0001f600'"))
    assert normalize_submission(course, LESSON, "honest") == []
    assert not read_record(course, LESSON, "honest").grade_by_hand
    assert not (folder / f"{LESSON}.ipynb.submitted").exists()
