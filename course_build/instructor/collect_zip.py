"""Collect a lesson's submissions into nbgrader's ``submitted/`` folder, one gradable notebook each.

``collect_zip`` reads an LMS download (file names: ``course_build.instructor.lms``) instead of
``nbgrader zip_collect``, which stops the whole batch when two files map to one submission. It
works in two steps, so that everything that can be wrong is said before anything slow or lasting
happens: ``plan_collection`` checks the archive (``zip_safety``), reads who sent what, gives ids
and matches the submission times the instructor set (``submission_times``), and ``collect`` writes.
Every student in the zip gets exactly one folder ``submitted/<id>/<lesson>/`` with at most one
notebook, ``<lesson>.ipynb``, and a record ``collected/<lesson>/<id>/record.json`` holding the name
and LMS user id as the LMS wrote them, Canvas's ``LATE_`` marker, the submission time and where it
came from, the graded file's provenance and notes for the instructor:

* ids come from ``course_build.instructor.student_ids`` (any name is safe; an id once given is
  reused, as the gradebook keeps each student's LMS user id);
* of several notebooks a student sent, the latest is graded (highest submission id, then Canvas's
  ``-N`` resubmission suffix, then position in the zip), preferring those named after the lesson,
  and the others are named in a note;
* submissions only move forward: when the student's graded submission (from an earlier zip) has a
  higher LMS submission id than this zip's, it stays graded and this zip's file is kept aside and
  noted; ``replace=True`` (``--replace``) grades the zip's file anyway and says so;
* the submission time is the zip time stamp of the file graded, trusted unless several entries
  all carry one same time (the time the zip was made); a time the instructor gives wins;
* every file a student sent is kept, under a name the grader chooses (never a name from the zip,
  so no entry can land in another student's folder or outside the course), in
  ``collected/<lesson>/<id>/submissions/``, and recorded in the append-only ledger
  (``course_build.instructor.provenance``); nothing collected earlier is ever deleted.

The folders are then made gradable by ``course_build.instructor.submitted_folders``, whichever way
they were filled.
"""

import hashlib
import re
import shutil
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from course_build.instructor.lms import LmsFile, read_lms_zip, resubmission_number
from course_build.instructor.provenance import Provenance, append_ledger, file_sha256, ledger_line
from course_build.instructor.student_ids import assign_ids
from course_build.instructor.student_records import StudentRecord, read_record, record_path, write_record
from course_build.instructor.submission_times import GivenTime, match_students
from course_build.instructor.zip_safety import ArchiveError, check_archive

MAX_FILE_BYTES = 50 * 2**20
MAX_KEPT_FILES = 50
ZIP_TIME = "zip entry time"
UNKNOWN_TIME = "unknown"


@dataclass(frozen=True)
class CollectionPlan:
    """What an archive holds, checked and matched, before anything is written."""

    archive: Path
    sha256: str
    by_user: dict[str, list[LmsFile]]  # LMS user id -> the files they sent
    names: dict[str, str]  # LMS user id -> name as the LMS wrote it
    ids: dict[str, str]  # LMS user id -> nbgrader id
    stamped: bool  # whether the zip's time stamps say when each file was sent
    times: dict[str, GivenTime]  # nbgrader id -> a time the instructor set
    ignored: list[str]  # entries that are no LMS file

    @property
    def students(self) -> list[str]:
        return sorted(self.ids.values())


@dataclass(frozen=True)
class Collection:
    """What ``collect`` did: the students to grade, the entries it ignored, and the students whose
    graded submission it kept because it is newer than the zip's, or replaced by an older one."""

    students: list[str]
    ignored: list[str]
    kept_newer: dict[str, str] = field(default_factory=dict)  # student -> note
    replaced_newer: dict[str, str] = field(default_factory=dict)  # student -> note


def plan_collection(
    archive: Path, known: dict[str, str], times: dict[str, GivenTime] | None = None
) -> CollectionPlan:
    """Check ``archive`` and read who sent what (see the module docstring); ``known`` maps LMS user
    ids to the ids earlier batches gave them (``known_students``). Raises ArchiveError or
    SubmissionTimeError, one line each, before anything is written."""
    check_archive(archive)
    files, ignored = read_lms_zip(archive)
    if not files:
        raise ArchiveError(f"{archive}: no file name matches the LMS pattern <student>_<id>_<id>_<file>")
    distinct_times = {f.zip_time for f in files} - {None}
    stamped = len(files) == 1 or len(distinct_times) > 1
    by_user: dict[str, list[LmsFile]] = {}
    for item in files:
        by_user.setdefault(item.user_id, []).append(item)
    names = {user: max(items, key=lambda f: f.index).student for user, items in by_user.items()}
    ids = assign_ids(names, known)
    matched = match_students(times or {}, {ids[user]: (names[user], user) for user in by_user})
    return CollectionPlan(archive, file_sha256(archive), by_user, names, ids, stamped, matched, ignored)


def _latest_notebook(files: list[LmsFile], lesson: str) -> LmsFile | None:
    notebooks = [f for f in files if f.file_name.lower().endswith(".ipynb") and f.size <= MAX_FILE_BYTES]
    named = [f for f in notebooks if resubmission_number(f.file_name, lesson) is not None]
    candidates = named or notebooks
    if not candidates:
        return None
    return max(
        candidates, key=lambda f: (f.submission_id, resubmission_number(f.file_name, lesson) or 0, f.index)
    )


def _safe_name(file_name: str) -> str:
    """A plain file name for something a student uploaded."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", file_name).lstrip(".")[:100] or "file"


def _store(store: Path, item: LmsFile, data: bytes) -> Path:
    """Keep ``data`` in ``store`` as ``<submission id>-<safe name>``; the same file collected again
    is found, not copied twice; a different one of that name gets a number."""
    store.mkdir(parents=True, exist_ok=True)
    base, number = f"{item.submission_id}-{_safe_name(item.file_name)}", 1
    path = store / base
    digest = hashlib.sha256(data).hexdigest()
    while path.exists() and file_sha256(path) != digest:
        number += 1
        path = store / f"{number}-{base}"
    if not path.exists():
        path.write_bytes(data)
    return path


def _set_aside_folder(folder: Path, record_dir: Path, known: set[str]) -> None:
    """Empty ``submitted/<student>/<lesson>/`` for a new submission; files the course does not keep
    elsewhere (a folder filled by hand) are moved to ``collected/.../set-aside-N/``, never deleted."""
    if not folder.is_dir():
        return
    unknown = [p for p in folder.rglob("*") if p.is_file() and file_sha256(p) not in known]
    if unknown:
        number = 1
        while (record_dir / f"set-aside-{number}").exists():
            number += 1
        record_dir.mkdir(parents=True, exist_ok=True)
        shutil.move(str(folder), str(record_dir / f"set-aside-{number}"))
    else:
        shutil.rmtree(folder)


def submission_time(plan: CollectionPlan, student: str, chosen: LmsFile | None) -> tuple[str | None, str]:
    """When ``student`` submitted ``chosen`` and where that time comes from: the instructor's time,
    else the zip time of the file (when the zip's times can be trusted), else unknown."""
    if student in plan.times:
        return plan.times[student].submitted_at, plan.times[student].source
    if chosen is not None and plan.stamped and chosen.zip_time:
        return chosen.zip_time, ZIP_TIME
    return None, UNKNOWN_TIME


class _StudentCollector:
    """Collects one student's files of a planned zip (see ``collect``)."""

    def __init__(self, course: Path, lesson: str, plan: CollectionPlan, user: str, zipped: zipfile.ZipFile):
        self.course, self.lesson, self.plan, self.zipped = course, lesson, plan, zipped
        self.items = plan.by_user[user]
        self.user, self.student = user, plan.ids[user]
        self.record_dir = record_path(course, lesson, self.student).parent
        self.chosen = _latest_notebook(self.items, lesson)
        self.stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")

    def provenance(self, item: LmsFile, sha256: str) -> Provenance:
        if item is self.chosen:
            when, source = submission_time(self.plan, self.student, item)
        else:
            when = item.zip_time if self.plan.stamped else None
            source = ZIP_TIME if when else UNKNOWN_TIME
        return Provenance(
            zip_name=self.plan.archive.name,
            zip_sha256=self.plan.sha256,
            entry=item.entry,
            submission_id=item.submission_id,
            submitted_at=when,
            time_source=source,
            sha256=sha256,
        )

    def store_all(self) -> dict[int, tuple[Path | None, str]]:
        """Keep every file the student sent; index -> (where it is kept, its SHA-256)."""
        kept: dict[int, tuple[Path | None, str]] = {}
        readable = [f for f in self.items if f.size <= MAX_FILE_BYTES]
        for item in sorted(readable, key=lambda f: f.index)[:MAX_KEPT_FILES]:
            with self.zipped.open(self.zipped.infolist()[item.index]) as source:
                data = source.read(MAX_FILE_BYTES + 1)
            kept[item.index] = (
                _store(self.record_dir / "submissions", item, data),
                hashlib.sha256(data).hexdigest(),
            )
        if self.chosen is not None and self.chosen.index not in kept:  # beyond MAX_KEPT_FILES: still graded
            with self.zipped.open(self.zipped.infolist()[self.chosen.index]) as source:
                data = source.read(MAX_FILE_BYTES + 1)
            path = _store(self.record_dir / "submissions", self.chosen, data)
            kept[self.chosen.index] = (path, hashlib.sha256(data).hexdigest())
        return kept

    def collect(self, replace: bool) -> tuple[list[dict], str | None, str | None]:
        """Collect; return the ledger lines, and a note if a newer graded submission was kept or
        replaced."""
        previous = read_record(self.course, self.lesson, self.student)
        zip_id = self.chosen.submission_id if self.chosen else max(f.submission_id for f in self.items)
        graded_id = previous.submission_id if previous else None
        newer_graded = graded_id is not None and graded_id > zip_id
        kept = self.store_all()
        kept_note = replaced_note = None
        if newer_graded and not replace:
            kept_note = (
                f"submission {zip_id} of {self.plan.archive.name} is older than the graded submission "
                f"{graded_id}: kept aside in collected/, not graded"
            )
            previous.notes = [*previous.notes, *([kept_note] if kept_note not in previous.notes else [])]
            write_record(self.course, self.lesson, self.student, previous)
            chosen_outcome = f"kept aside: the graded submission {graded_id} is newer"
        else:
            if newer_graded:
                replaced_note = (
                    f"--replace: graded submission {zip_id} of {self.plan.archive.name} over the newer "
                    f"submission {graded_id}"
                )
            self.write_graded(kept, zip_id, replaced_note)
            chosen_outcome = replaced_note or "graded"
        lines = []
        for item in sorted(self.items, key=lambda f: f.index):
            path, sha256 = kept.get(item.index, (None, ""))
            if item is self.chosen:
                outcome = chosen_outcome
            elif path is None:
                outcome = (
                    f"not kept: larger than {MAX_FILE_BYTES // 2**20} MiB or beyond {MAX_KEPT_FILES} files"
                )
            elif item.file_name.lower().endswith(".ipynb"):
                outcome = "not graded: the student sent a later notebook"
            else:
                outcome = "kept for the instructor: not the lesson's notebook"
            lines.append(
                ledger_line(
                    self.provenance(item, sha256),
                    collected_at=self.stamp,
                    lesson=self.lesson,
                    student=self.student,
                    lms_name=item.student,
                    lms_user_id=self.user,
                    kept_as=str(path.relative_to(self.course)) if path else "",
                    outcome=outcome,
                )
            )
        return lines, kept_note, replaced_note

    def write_graded(
        self, kept: dict[int, tuple[Path | None, str]], submission_id: int, note: str | None
    ) -> None:
        """Put the zip's latest notebook in ``submitted/`` and write the student's record afresh;
        ``submission_id`` is the zip's latest submission of theirs, notebook or not."""
        folder = self.course / "submitted" / self.student / self.lesson
        store = self.record_dir / "submissions"
        known = {file_sha256(p) for p in store.iterdir()} if store.is_dir() else set()
        blank = self.course / "release" / self.lesson / f"{self.lesson}.ipynb"
        if blank.is_file():
            known.add(file_sha256(blank))
        _set_aside_folder(folder, self.record_dir, known)
        notes = [note] if note else []
        spellings = sorted({f.student for f in self.items} - {self.plan.names[self.user]})
        if spellings:
            notes.append(f"the LMS also named this student {', '.join(map(repr, spellings))}")
        notes += self.file_notes()
        source = None
        if self.chosen is not None:
            folder.mkdir(parents=True)
            path, sha256 = kept[self.chosen.index]
            shutil.copyfile(path, folder / f"{self.lesson}.ipynb")
            source = ledger_line(self.provenance(self.chosen, sha256))
        when, time_source = submission_time(self.plan, self.student, self.chosen)
        record = StudentRecord(
            name=self.plan.names[self.user],
            user_id=self.user,
            late=any(f.late for f in self.items),
            notes=notes,
            submitted_at=when,
            submission_id=submission_id,
            time_source=time_source if self.chosen else "",
            source=source,
        )
        write_record(self.course, self.lesson, self.student, record)

    def file_notes(self) -> list[str]:
        notes = []
        too_big = [f.file_name for f in self.items if f.size > MAX_FILE_BYTES]
        if too_big:
            notes.append(
                f"files larger than {MAX_FILE_BYTES // 2**20} MiB were not read: {', '.join(too_big)}"
            )
        chosen = self.chosen
        if chosen is None:
            listed = ", ".join(sorted(f.file_name for f in self.items if f.size <= MAX_FILE_BYTES))
            if listed:
                notes.append(f"no notebook among the files submitted: {listed}")
            return notes
        if chosen.file_name != f"{self.lesson}.ipynb":
            notes.append(f"notebook submitted as {chosen.file_name!r}; graded as '{self.lesson}.ipynb'")
        others = [f for f in self.items if f is not chosen and f.file_name.lower().endswith(".ipynb")]
        if others:
            listed = ", ".join(repr(f.file_name) for f in sorted(others, key=lambda f: f.index))
            latest = f"graded the latest of {len(others) + 1} notebooks ({chosen.file_name!r})"
            notes.append(f"{latest}; not graded: {listed}")
        return notes


def collect(course: Path, lesson: str, plan: CollectionPlan, *, replace: bool = False) -> Collection:
    """Collect every student of a planned zip (see the module docstring)."""
    kept_newer, replaced_newer, ledger = {}, {}, []
    with zipfile.ZipFile(plan.archive) as zipped:
        for user in sorted(plan.by_user, key=lambda u: plan.ids[u]):
            collector = _StudentCollector(course, lesson, plan, user, zipped)
            lines, kept_note, replaced_note = collector.collect(replace)
            ledger += lines
            if kept_note:
                kept_newer[collector.student] = kept_note
            if replaced_note:
                replaced_newer[collector.student] = replaced_note
    append_ledger(course, ledger)
    return Collection(plan.students, plan.ignored, kept_newer, replaced_newer)


def collect_zip(
    course: Path,
    lesson: str,
    archive: Path,
    known: dict[str, str],
    *,
    times: dict[str, GivenTime] | None = None,
    replace: bool = False,
) -> Collection:
    """Plan and collect ``archive`` in one call (see ``plan_collection`` and ``collect``)."""
    return collect(course, lesson, plan_collection(archive, known, times), replace=replace)
