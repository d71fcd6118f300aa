"""Shards: one lesson's zip graded as N independent jobs (a cluster's job array), then merged.

``python -m course_build.grade LESSON --zip Z --shard K/N`` grades the students of shard K and
``python -m course_build.merge LESSON`` brings the N shards into the course. The design:

* **Who is in which shard.** A student's shard is a stable hash of their LMS user id, as the zip
  gives it (``shard_of``): every machine computes the same partition from the zip alone, in any
  order, whatever the course's state; every student is in exactly one shard; a shard may be empty.
* **A shard works only in its own folder**, ``COURSE/shards/LESSON/K-of-N/``, a complete nbgrader
  course directory (``prepare_shard``): the course's configuration and the lesson's source, a
  snapshot of the course's gradebook (SQLite's backup API: a consistent copy even while the
  formgrader writes), and, for each of its students, their files in the course as they are now
  (submitted, autograded, feedback, the collected record and every file collected before, the
  grader's notes). The shard then collects, autogrades and writes feedback there exactly as one
  run of ``grade`` does in the course, so the one run's rules hold against that snapshot: a
  student whose graded submission is newer than the zip's keeps it, hand grades of unchanged
  answers are kept. A shard job reads the course and never writes it, and needs nothing another
  shard writes, so N jobs on N machines sharing a filesystem never contend (each has its own
  gradebook).
* **A shard is finished** when its manifest ``shard.json`` exists: it is removed when the job
  starts and written last, with the zip's digest, the lesson source's digest, the students it
  collected and, for each, a digest of what the course held for them when the snapshot was taken
  (``course_state``). Merge uses that digest to apply the forward-only rule a second time: a
  student graded (or hand-graded) in the course since the snapshot keeps what the course has
  (``course_build.instructor.shard_merge``).
"""

import hashlib
import json
import os
import re
import shutil
import sqlite3
import tempfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from traitlets.config.loader import PyFileConfigLoader

from course_build.instructor.collect_zip import CollectionPlan
from course_build.instructor.provenance import file_sha256
from course_build.nbgrader_plugins.restore_cells import earlier_releases_dir

SHARDS_FOLDER = "shards"
MANIFEST = "shard.json"
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class ShardError(ValueError):
    """A shard argument or a set of shards is not usable; the message says why, in one line."""


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def folder_name(self) -> str:
        return f"{self.index}-of-{self.count}"


def parse_shard(text: str) -> Shard:
    """``"K/N"`` -> Shard(K, N), with 1 <= K <= N; ShardError says what is wrong otherwise."""
    match = _SHARD.match(text)
    if not match:
        raise ShardError(f"--shard {text!r}: expected K/N, two whole numbers such as 2/3 (shard 2 of 3)")
    index, count = int(match[1]), int(match[2])
    if count < 1:
        raise ShardError(f"--shard {text!r}: the number of shards N must be at least 1")
    if not 1 <= index <= count:
        raise ShardError(f"--shard {text!r}: K must be between 1 and N ({count}), counting from 1")
    return Shard(index, count)


def shard_of(lms_user_id: str, count: int) -> int:
    """The shard (1..count) of a student: a hash of their LMS user id, the same on every machine."""
    digest = hashlib.sha256(lms_user_id.strip().encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def plan_for_shard(plan: CollectionPlan, shard: Shard) -> CollectionPlan:
    """The part of ``plan`` that falls in ``shard``: its students' files, ids and given times."""
    users = {user for user in plan.by_user if shard_of(user, shard.count) == shard.index}
    ids = {user: plan.ids[user] for user in users}
    return replace(
        plan,
        by_user={user: plan.by_user[user] for user in users},
        names={user: plan.names[user] for user in users},
        ids=ids,
        times={student: time for student, time in plan.times.items() if student in ids.values()},
    )


def shard_dir(course: Path, lesson: str, shard: Shard) -> Path:
    return course / SHARDS_FOLDER / lesson / shard.folder_name


def student_paths(lesson: str, student: str) -> list[Path]:
    """What the course keeps of one student's lesson, relative to the course directory: files and
    folders a grading run replaces as a whole."""
    return [
        Path("submitted", student, lesson),
        Path("autograded", student, lesson),
        Path("feedback", student, lesson),
        Path("grader_notes", student, f"{lesson}.json"),
    ]


def collected_dir(lesson: str, student: str) -> Path:
    """The student's collected files and record, relative to the course directory (only added to)."""
    return Path("collected", lesson, student)


def _tree_digest(root: Path, relative: Path) -> str:
    """A digest of every file under ``root / relative`` (or of the file itself), names included."""
    digest = hashlib.sha256()
    path = root / relative
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []
    if path.is_file():
        files = [path]
    for item in files:
        digest.update(str(item.relative_to(root)).encode("utf-8", "surrogateescape") + b"\0")
        digest.update(file_sha256(item).encode() + b"\0")
    return digest.hexdigest()


def _read_only(gradebook: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{gradebook}?mode=ro", uri=True)


def known_students_read_only(course: Path) -> dict[str, str]:
    """``student_records.known_students`` without writing: a shard job only reads the course's
    gradebook (nbgrader's Gradebook adds its course row when it opens one)."""
    gradebook = course / "gradebook.db"
    if not gradebook.is_file():
        return {}
    connection = _read_only(gradebook)
    try:
        rows = connection.execute("SELECT lms_user_id, id FROM student WHERE lms_user_id != ''").fetchall()
    except sqlite3.OperationalError:  # no table yet: a gradebook nbgrader never filled
        rows = []
    finally:
        connection.close()
    return dict(rows)


def _grades(gradebook: Path, lesson: str, student: str) -> list[list]:
    """The grades (autograded and by hand) and the comments of ``student``'s ``lesson``, read with
    plain SQL from a read-only connection (nbgrader's Gradebook would write its course row)."""
    if not gradebook.is_file():
        return []
    query = """
        SELECT base_cell.name, grade.auto_score, grade.manual_score, grade.extra_credit,
            grade.needs_manual_grade, NULL
        FROM grade
        JOIN submitted_notebook ON grade.notebook_id = submitted_notebook.id
        JOIN submitted_assignment ON submitted_notebook.assignment_id = submitted_assignment.id
        JOIN assignment ON submitted_assignment.assignment_id = assignment.id
        JOIN base_cell ON grade.cell_id = base_cell.id
        WHERE assignment.name = ? AND submitted_assignment.student_id = ?
        UNION ALL
        SELECT base_cell.name, NULL, NULL, NULL, NULL, comment.manual_comment
        FROM comment
        JOIN submitted_notebook ON comment.notebook_id = submitted_notebook.id
        JOIN submitted_assignment ON submitted_notebook.assignment_id = submitted_assignment.id
        JOIN assignment ON submitted_assignment.assignment_id = assignment.id
        JOIN base_cell ON comment.cell_id = base_cell.id
        WHERE assignment.name = ? AND submitted_assignment.student_id = ?
    """
    connection = _read_only(gradebook)
    try:
        rows = connection.execute(query, (lesson, student, lesson, student)).fetchall()
    except sqlite3.OperationalError:  # no table yet: a gradebook nbgrader never filled
        rows = []
    finally:
        connection.close()
    return sorted([list(row) for row in rows], key=repr)


def course_state(course: Path, lesson: str, student: str) -> str:
    """A digest of what the course holds for ``student``'s ``lesson``: their collected record and
    files, submitted and autograded folders, and their grades and comments in the gradebook.
    Equal digests before a shard runs and at merge mean nothing happened to the student meanwhile."""
    digest = hashlib.sha256()
    for relative in [collected_dir(lesson, student), *student_paths(lesson, student)[:2]]:
        digest.update(_tree_digest(course, relative).encode())
    grades = _grades(course / "gradebook.db", lesson, student)
    digest.update(json.dumps(grades, sort_keys=True).encode())
    return digest.hexdigest()


@dataclass
class ShardManifest:
    """What a finished shard holds (``shard.json``), and whether merge has brought it in."""

    lesson: str
    index: int
    count: int
    zip_name: str
    zip_sha256: str
    source_sha256: str  # the lesson's source notebook the shard graded with
    students: list[str]  # every student of the zip in this shard, in id order
    kept_newer: dict[str, str] = field(default_factory=dict)  # student -> note
    replaced_newer: dict[str, str] = field(default_factory=dict)  # student -> note
    ignored: list[str] = field(default_factory=list)  # the zip's entries no student sent
    course_states: dict[str, str] = field(default_factory=dict)  # student -> course_state at snapshot
    merged_at: str | None = None

    @property
    def shard(self) -> Shard:
        return Shard(self.index, self.count)


def source_sha256(course: Path, lesson: str) -> str:
    return file_sha256(course / "source" / lesson / f"{lesson}.ipynb")


def read_manifest(folder: Path) -> ShardManifest | None:
    """The manifest of a finished shard, None while it is running or if it never started."""
    path = folder / MANIFEST
    if not path.is_file():
        return None
    try:
        return ShardManifest(**json.loads(path.read_text(encoding="utf-8")))
    except (ValueError, TypeError) as error:
        raise ShardError(f"{path} cannot be read ({error}): run that shard again") from None


def write_manifest(folder: Path, manifest: ShardManifest) -> None:
    """Write ``shard.json`` in one step, so a reader never sees half of it."""
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".shard-", suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as file:
        json.dump(asdict(manifest), file, indent=1, ensure_ascii=False)
    os.replace(temporary, folder / MANIFEST)


def _copy(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target, dirs_exist_ok=True)
    elif source.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def snapshot_gradebook(course: Path, target: Path) -> None:
    """A consistent copy of the course's gradebook (none if the course has none yet)."""
    source = course / "gradebook.db"
    if not source.is_file():
        return
    reader = _read_only(source)
    writer = sqlite3.connect(target)
    try:
        reader.backup(writer)
    finally:
        writer.close()
        reader.close()


def _check_root(folder: Path) -> None:
    """The copied configuration must make the shard folder nbgrader's course root, or nbgrader
    would grade into the course itself (a ``c.CourseDirectory.root`` set to a fixed path)."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(folder)).load_config()
    root = config.CourseDirectory.get("root")
    if root is not None and Path(root).resolve() != folder.resolve():
        raise ShardError(
            f"nbgrader_config.py sets c.CourseDirectory.root to {root}: shards need the folder the "
            "file is in (os.path.dirname(os.path.abspath(__file__)), as the course's own file has it)"
        )


def prepare_shard(
    course: Path, lesson: str, shard: Shard, students: list[str]
) -> tuple[Path, dict[str, str]]:
    """Make the shard's course directory afresh (see the module docstring) for ``students``;
    return it and each student's ``course_state`` at the snapshot. Only reads ``course``."""
    folder = shard_dir(course, lesson, shard)
    if folder.exists():
        shutil.rmtree(folder)  # an earlier try of this shard: its own scratch, rebuilt from the course
    folder.mkdir(parents=True)
    shutil.copy2(course / "nbgrader_config.py", folder / "nbgrader_config.py")
    _check_root(folder)
    _copy(course / "source" / lesson, folder / "source" / lesson)
    _copy(course / "release" / lesson, folder / "release" / lesson)
    _copy(earlier_releases_dir(course, lesson), earlier_releases_dir(folder, lesson))
    snapshot_gradebook(course, folder / "gradebook.db")
    states = {}
    for student in students:
        states[student] = course_state(course, lesson, student)
        for relative in [collected_dir(lesson, student), *student_paths(lesson, student)]:
            _copy(course / relative, folder / relative)
    return folder, states
