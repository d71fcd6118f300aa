"""Bring the finished shards of a lesson into the course, as one run of ``grade`` would leave it.

``find_shard_set`` picks the shards to merge and says, in one line, what is missing; ``merge_shard``
brings one shard in. For every student of a shard:

* **forward only, again**: if what the course holds for the student (record, collected files,
  submitted and autograded folders, grades: ``shards.course_state``) is no longer what the
  shard copied, the course graded or hand-graded them since; the course's state is kept, the
  zip's files are still kept in ``collected/`` and the ledger says the shard's grade was not
  merged. Otherwise:
* the student's ``submitted/``, ``autograded/``, ``feedback/`` and grader's notes replace the
  course's (the shard started from them and moved on exactly as a run in the course would);
  ``collected/<lesson>/<student>/`` is added to (the record replaced, every collected file kept);
* the gradebook rows are copied with nbgrader's own API: the student (LMS name and user id), the
  submission (time stamp, extension), and every grade and comment (autograded score, hand score,
  extra credit, "needs manual grade", flags, late penalty), into the course's existing rows where
  there are some (the formgrader's links stay valid).

The shards' ledger lines are added to the course's ledger in the order one run writes them.
"""

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from course_build.instructor.provenance import append_ledger, read_ledger
from course_build.instructor.shards import (
    SHARDS_FOLDER,
    Shard,
    ShardError,
    ShardManifest,
    collected_dir,
    course_state,
    read_manifest,
    source_sha256,
    student_paths,
)


@dataclass
class MergeOutcome:
    """What merging shards did: the students merged and those whose course state was kept."""

    merged: list[str] = field(default_factory=list)
    not_merged: dict[str, str] = field(default_factory=dict)  # student -> why
    ledger: list[dict] = field(default_factory=list)


def find_shard_set(course: Path, lesson: str) -> list[tuple[Path, ShardManifest]]:
    """The shards of ``lesson`` to merge: every shard 1..N of one zip, finished, at least one not
    merged yet. Raises ShardError naming what is missing or mixed."""
    root = course / SHARDS_FOLDER / lesson
    folders = sorted(p for p in root.glob("*-of-*") if p.is_dir()) if root.is_dir() else []
    manifests = {folder: read_manifest(folder) for folder in folders}
    pending = {folder: m for folder, m in manifests.items() if m is not None and m.merged_at is None}
    if not pending:
        running = [f.name for f, m in manifests.items() if m is None]
        if running:
            raise ShardError(
                f"no finished shard of {lesson} to merge: {', '.join(running)} in {root} "
                "have not finished (or were stopped): wait for them or run them again"
            )
        merged = "every shard there is merged already" if folders else "there is none"
        raise ShardError(
            f"no shard of {lesson} to merge in {root} ({merged}): grade with "
            f"python -m course_build.grade {lesson} --zip ZIP --shard K/N first"
        )
    runs = {(m.zip_sha256, m.count) for m in pending.values()}
    if len(runs) > 1:
        listed = ", ".join(f"{f.name} ({m.zip_name})" for f, m in sorted(pending.items()))
        raise ShardError(
            f"the unmerged shards of {lesson} come from different runs ({listed}): run the missing "
            "shards of one run, or delete the folders of the other"
        )
    zip_sha256, count = runs.pop()
    chosen = []
    for index in range(1, count + 1):
        shard = Shard(index, count)
        folder = root / shard.folder_name
        manifest = manifests.get(folder)
        example = next(iter(pending.values()))
        rerun = f"python -m course_build.grade {lesson} --zip {example.zip_name} --shard {shard}"
        if manifest is None:
            state = "has not finished (or was stopped)" if folder.is_dir() else "is missing"
            raise ShardError(f"shard {shard} of {lesson} {state} ({folder}): {rerun}")
        if manifest.zip_sha256 != zip_sha256:
            raise ShardError(
                f"shard {shard} of {lesson} graded another zip ({manifest.zip_name}) than the others "
                f"({example.zip_name}): {rerun}"
            )
        chosen.append((folder, manifest))
    current = source_sha256(course, lesson)
    for folder, manifest in chosen:
        if manifest.source_sha256 != current and manifest.merged_at is None:
            raise ShardError(
                f"the source of {lesson} changed since shard {manifest.shard} graded it ({folder}): "
                "grade the shards again"
            )
    return chosen


def _replace(source: Path, target: Path) -> None:
    """Make ``target`` what ``source`` is (a folder, a file, or nothing)."""
    if target.is_dir():
        shutil.rmtree(target)
    elif target.exists():
        target.unlink()
    if source.is_dir():
        shutil.copytree(source, target)
    elif source.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def _add_files(source: Path, target: Path, *, overwrite: bool) -> None:
    """Copy every file under ``source`` to ``target``; existing files are replaced only if
    ``overwrite``."""
    for path in sorted(source.rglob("*")) if source.is_dir() else []:
        destination = target / path.relative_to(source)
        if path.is_file() and (overwrite or not destination.exists()):
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)


def copy_gradebook_rows(source: Gradebook, target: Gradebook, lesson: str, student: str) -> None:
    """Make ``target``'s rows of ``student`` (and their ``lesson`` submission) what ``source`` has."""
    known = source.find_student(student)
    target.update_or_create_student(
        student,
        first_name=known.first_name,
        last_name=known.last_name,
        email=known.email,
        lms_user_id=known.lms_user_id,
    )
    try:
        submission = source.find_submission(lesson, student)
    except MissingEntry:
        return
    copied = target.update_or_create_submission(lesson, student)
    copied.timestamp, copied.extension = submission.timestamp, submission.extension
    for notebook in submission.notebooks:
        into = target.find_submission_notebook(notebook.name, lesson, student)
        into.flagged, into.late_submission_penalty = notebook.flagged, notebook.late_submission_penalty
        grades = {grade.name: grade for grade in into.grades}
        for grade in notebook.grades:
            row = grades[grade.name]
            row.auto_score, row.manual_score = grade.auto_score, grade.manual_score
            row.extra_credit, row.needs_manual_grade = grade.extra_credit, grade.needs_manual_grade
        comments = {comment.name: comment for comment in into.comments}
        for comment in notebook.comments:
            row = comments[comment.name]
            row.auto_comment, row.manual_comment = comment.auto_comment, comment.manual_comment
    target.db.commit()


def _not_merged_note(manifest: ShardManifest) -> str:
    return (
        f"not merged: the course graded this student since shard {manifest.shard} copied them "
        "(the course's grade is kept)"
    )


def _chosen_file(line: dict) -> bool:
    """Whether a ledger line is of the file a collection graded (or would have: ``--replace``)."""
    outcome = str(line.get("outcome", ""))
    return outcome == "graded" or outcome.startswith("--replace")


def merge_shard(course: Path, folder: Path, manifest: ShardManifest, outcome: MergeOutcome) -> None:
    """Bring one finished shard into the course (see the module docstring), adding to ``outcome``."""
    lesson = manifest.lesson
    now = {student: course_state(course, lesson, student) for student in manifest.students}
    # brought in already by a merge that was stopped before it marked the shard merged
    already = {
        student for student in manifest.students if now[student] == course_state(folder, lesson, student)
    }
    changed = {
        student
        for student in manifest.students
        if student not in already and now[student] != manifest.course_states.get(student)
    }
    with (
        Gradebook(f"sqlite:///{folder / 'gradebook.db'}") as source,
        Gradebook(f"sqlite:///{course / 'gradebook.db'}") as target,
    ):
        for student in manifest.students:
            if student in changed:
                _add_files(
                    folder / collected_dir(lesson, student) / "submissions",
                    course / collected_dir(lesson, student) / "submissions",
                    overwrite=False,
                )
                outcome.not_merged[student] = _not_merged_note(manifest)
                continue
            if student in already:
                outcome.merged.append(student)
                continue
            for relative in student_paths(lesson, student):
                _replace(folder / relative, course / relative)
            _add_files(
                folder / collected_dir(lesson, student),
                course / collected_dir(lesson, student),
                overwrite=True,
            )
            copy_gradebook_rows(source, target, lesson, student)
            outcome.merged.append(student)
    for line in read_ledger(folder):
        if line.get("student") in changed and _chosen_file(line):
            line = {**line, "outcome": _not_merged_note(manifest)}
        outcome.ledger.append(line)


def add_ledger_in_order(course: Path, lines: list[dict]) -> None:
    """Append the shards' ledger lines in the order one run writes them: by student, each
    student's files in the zip's order (the sort is stable)."""
    append_ledger(course, sorted(lines, key=lambda line: line.get("student", "")))
