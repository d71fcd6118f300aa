"""Shards without a kernel: the partition, the ``--shard`` argument, finding a set of shards to
merge, copying gradebook rows, sizing the workers to the machine, and the cluster files, which
must run the commands and install what the code and the README do.

The end-to-end run (three shard processes, then merge, against one unsharded run) is in
``test_shards_grading.py``.
"""

import importlib.util
import json
import re
import shlex
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from nbgrader.api import Gradebook

from course_build import grade, merge
from course_build.instructor import grade_batch, machine
from course_build.instructor.collect_zip import plan_collection
from course_build.instructor.shard_merge import MergeOutcome, copy_gradebook_rows, find_shard_set, merge_shard
from course_build.instructor.shards import (
    Shard,
    ShardError,
    ShardManifest,
    course_state,
    parse_shard,
    plan_for_shard,
    prepare_shard,
    shard_of,
    write_manifest,
)
from course_build.paths import REPO_ROOT

CLUSTER = REPO_ROOT / "autograder" / "cluster"
LESSON = "01_sequence_problem"


@pytest.mark.parametrize(
    "text, expected", [("1/3", Shard(1, 3)), ("3/3", Shard(3, 3)), (" 2 / 5 ", Shard(2, 5))]
)
def test_a_shard_argument_reads_as_k_of_n(text, expected):
    assert parse_shard(text) == expected


@pytest.mark.parametrize(
    "text, says",
    [
        ("0/3", "between 1 and N"),
        ("4/3", "between 1 and N"),
        ("a/b", "expected K/N"),
        ("1/0", "at least 1"),
        ("2", "expected K/N"),
        ("-1/3", "expected K/N"),
    ],
)
def test_a_bad_shard_argument_is_one_friendly_line(text, says, capsys):
    with pytest.raises(SystemExit) as stopped:
        grade.main([LESSON, "--zip", "missing.zip", f"--shard={text}"])
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert says in error and len(error.strip().splitlines()) == 1 and "Traceback" not in error


def test_a_shard_writes_no_sheet_so_out_is_refused(capsys):
    with pytest.raises(SystemExit):
        grade.main([LESSON, "--zip", "z.zip", "--shard", "1/2", "--out", "x.csv"])
    assert "merge writes it" in capsys.readouterr().err


def test_every_student_is_in_exactly_one_shard_whatever_the_order():
    users = [str(1000 + i) for i in range(300)]
    for count in (1, 2, 3, 7):
        shards = {user: shard_of(user, count) for user in users}
        assert set(shards.values()) == set(range(1, count + 1))  # 300 students reach every shard
        assert {user: shard_of(user, count) for user in reversed(users)} == shards
    sizes = [list(shard_of(u, 3) for u in users).count(k) for k in (1, 2, 3)]
    assert min(sizes) > 60  # about a third each


def test_a_shard_depends_only_on_the_lms_user_id():
    # the same id, on any machine, in any process: sha256 of the id, not Python's salted hash()
    assert shard_of(" 2001 ", 3) == shard_of("2001", 3)
    assert [shard_of("2001", 1)] == [1]


def _zip(path: Path, users: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as zipped:
        for number, user in enumerate(users):
            zipped.writestr(f"student{user}_{user}_{5000 + number}_{LESSON}.ipynb", "{}")
    return path


def test_the_shards_of_a_plan_partition_its_students(tmp_path):
    plan = plan_collection(_zip(tmp_path / "z.zip", [str(100 + i) for i in range(20)]), {})
    parts = [plan_for_shard(plan, Shard(k, 3)) for k in (1, 2, 3)]
    assert sorted(s for part in parts for s in part.students) == plan.students
    assert all(part.stamped == plan.stamped and part.sha256 == plan.sha256 for part in parts)
    for part in parts:
        assert set(part.ids) == set(part.by_user) == set(part.names)


def _manifest(folder: Path, index: int, count: int, zip_sha: str = "abc", **extra) -> ShardManifest:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = ShardManifest(LESSON, index, count, "z.zip", zip_sha, "src", [], **extra)
    write_manifest(folder, manifest)
    return manifest


def _course(tmp_path: Path) -> Path:
    course = tmp_path / "autograder"
    (course / "source" / LESSON).mkdir(parents=True)
    (course / "source" / LESSON / f"{LESSON}.ipynb").write_text("{}")
    return course


def test_merge_names_the_missing_and_the_unfinished_shard(tmp_path):
    course = _course(tmp_path)
    root = course / "shards" / LESSON
    with pytest.raises(ShardError, match="there is none"):
        find_shard_set(course, LESSON)
    _manifest(root / "1-of-3", 1, 3)
    (root / "2-of-3").mkdir()  # started, not finished
    with pytest.raises(ShardError, match=r"shard 2/3 of 01_sequence_problem has not finished.*--shard 2/3"):
        find_shard_set(course, LESSON)
    _manifest(root / "2-of-3", 2, 3)
    with pytest.raises(ShardError, match=r"shard 3/3 of 01_sequence_problem is missing"):
        find_shard_set(course, LESSON)
    _manifest(root / "3-of-3", 3, 3, zip_sha="other")
    with pytest.raises(ShardError, match="different runs"):
        find_shard_set(course, LESSON)


def test_merge_refuses_shards_graded_with_another_source(tmp_path):
    course = _course(tmp_path)
    _manifest(course / "shards" / LESSON / "1-of-1", 1, 1)  # source digest "src": not this source
    with pytest.raises(ShardError, match="source of 01_sequence_problem changed"):
        find_shard_set(course, LESSON)


def test_the_merge_command_says_what_is_missing_in_one_line(tmp_path, capsys):
    course = _course(tmp_path)
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    with pytest.raises(SystemExit) as stopped:
        merge.main([LESSON, "--course", str(course)])
    assert stopped.value.code == 2
    error = capsys.readouterr().err
    assert "no shard of 01_sequence_problem to merge" in error and len(error.strip().splitlines()) == 1


def _gradebook(path: Path, student: str, auto: float, manual: float | None) -> Gradebook:
    gradebook = Gradebook(f"sqlite:///{path}")
    gradebook.add_assignment(LESSON)
    gradebook.add_notebook(LESSON, LESSON)
    gradebook.add_grade_cell("test", LESSON, LESSON, max_score=1, cell_type="code")
    gradebook.add_grade_cell("written", LESSON, LESSON, max_score=2, cell_type="markdown")
    gradebook.add_solution_cell("written", LESSON, LESSON)
    gradebook.update_or_create_student(student, last_name="Zoë", lms_user_id="77")
    gradebook.add_submission(LESSON, student)
    notebook = gradebook.find_submission_notebook(LESSON, LESSON, student)
    for row in notebook.grades:
        row.auto_score = auto if row.name == "test" else None
        row.manual_score = manual if row.name == "written" else None
        row.needs_manual_grade = row.name == "written" and manual is None
    notebook.comments[0].manual_comment = "clear" if manual else None
    notebook.late_submission_penalty = 0.5
    gradebook.db.commit()
    return gradebook


def _rows(gradebook: Gradebook, student: str) -> list:
    notebook = gradebook.find_submission_notebook(LESSON, LESSON, student)
    grades = sorted((g.name, g.auto_score, g.manual_score, g.needs_manual_grade) for g in notebook.grades)
    return [grades, [c.manual_comment for c in notebook.comments], notebook.late_submission_penalty]


def test_gradebook_rows_are_copied_into_the_existing_submission(tmp_path):
    with (
        _gradebook(tmp_path / "shard.db", "zoe", auto=1.0, manual=2.0) as shard,
        _gradebook(tmp_path / "course.db", "zoe", auto=0.0, manual=None) as course,
    ):
        kept_ids = {g.name: g.id for g in course.find_submission_notebook(LESSON, LESSON, "zoe").grades}
        copy_gradebook_rows(shard, course, LESSON, "zoe")
        assert _rows(course, "zoe") == _rows(shard, "zoe")
        assert {
            g.name: g.id for g in course.find_submission_notebook(LESSON, LESSON, "zoe").grades
        } == kept_ids
        assert course.find_student("zoe").lms_user_id == "77"


def test_a_student_changed_in_the_course_since_the_shard_copied_them_keeps_the_course_state(tmp_path):
    course, shard = tmp_path / "course", tmp_path / "course" / "shards" / LESSON / "1-of-1"
    record = Path("collected", LESSON, "zoe", "record.json")
    for root in (course, shard):
        (root / record).parent.mkdir(parents=True)
        (root / record).write_text('{"submission_id": 1}')
    _gradebook(course / "gradebook.db", "zoe", auto=0.0, manual=None).close()
    _gradebook(shard / "gradebook.db", "zoe", auto=1.0, manual=None).close()
    snapshot = course_state(course, LESSON, "zoe")
    (course / record).write_text('{"submission_id": 9}')  # a newer submission graded meanwhile
    (shard / "collected" / "ledger.jsonl").write_text(
        json.dumps({"student": "zoe", "outcome": "graded"}) + "\n"
    )
    manifest = ShardManifest(LESSON, 1, 1, "z.zip", "abc", "src", ["zoe"], course_states={"zoe": snapshot})
    outcome = MergeOutcome()
    merge_shard(course, shard, manifest, outcome)
    assert outcome.not_merged and not outcome.merged
    assert (course / record).read_text() == '{"submission_id": 9}'
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        assert _rows(gradebook, "zoe")[0][0][:2] == ("test", 0.0)  # the course's score, not the shard's
    assert outcome.ledger[0]["outcome"].startswith("not merged")


def test_workers_scale_with_cores_and_memory(monkeypatch):
    gib = 2**30
    monkeypatch.setattr(grade_batch, "usable_cores", lambda: 64)
    monkeypatch.setattr(grade_batch, "usable_memory", lambda: 128 * gib)
    assert grade_batch.default_jobs() == 25  # 128 GiB / (4 GiB kernel + 1 GiB beside it)
    monkeypatch.setattr(grade_batch, "usable_memory", lambda: 1024 * gib)
    assert grade_batch.default_jobs() == 64
    monkeypatch.setattr(grade_batch, "usable_memory", lambda: 2 * gib)
    assert grade_batch.default_jobs() == 1


def test_the_kernel_memory_limit_comes_from_the_course(tmp_path, monkeypatch):
    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()\nc.SandboxedKernelManager.memory_limit_gib = 1.0\n"
    )
    monkeypatch.setattr(grade_batch, "usable_cores", lambda: 64)
    monkeypatch.setattr(grade_batch, "usable_memory", lambda: 20 * 2**30)
    assert grade_batch.default_jobs(tmp_path) == 10


def test_cgroup_limits_are_read_v2_and_v1(tmp_path):
    v2 = tmp_path / "v2"
    (v2 / "kubepods" / "pod1").mkdir(parents=True)
    (v2 / "kubepods" / "pod1" / "cpu.max").write_text("300000 100000\n")
    (v2 / "kubepods" / "pod1" / "memory.max").write_text(f"{8 * 2**30}\n")
    (v2 / "kubepods" / "memory.max").write_text("max\n")
    (tmp_path / "self2").write_text("0::/kubepods/pod1\n")
    assert machine.cpu_quota(v2, tmp_path / "self2") == 3.0
    assert machine.memory_limit(v2, tmp_path / "self2") == 8 * 2**30
    v1 = tmp_path / "v1"
    (v1 / "memory" / "job").mkdir(parents=True)
    (v1 / "memory" / "job" / "memory.limit_in_bytes").write_text(f"{2**30}\n")
    (v1 / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")
    (v1 / "cpu").mkdir()
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    (tmp_path / "self1").write_text("4:memory:/job\n1:cpu,cpuacct:/\n0::/\n")
    assert machine.memory_limit(v1, tmp_path / "self1") == 2**30
    assert machine.cpu_quota(v1, tmp_path / "self1") is None


# The cluster files: their commands parse with the real command lines, their installs match.


def _lines_running(text: str, module: str) -> list[str]:
    return [
        line.strip()
        for line in text.splitlines()
        if f"python -m {module} " in line and not line.lstrip().startswith("#")
    ]


def _parse(parser, line: str, **values: str):
    """Parse ``line``'s arguments after ``python -m MODULE`` with shell variables given ``values``."""
    line = line.replace("\\$", "$")  # a heredoc's escaped dollar
    for name, value in values.items():
        line = re.sub(
            r"\$\(\(\s*JOB_COMPLETION_INDEX \+ 1\s*\)\)" if name == "INDEX+1" else rf"\$\{{?{name}\}}?",
            value,
            line,
        )
    return parser.parse_args(shlex.split(line)[3:])


def test_the_slurm_script_runs_the_shards_as_an_array_then_merge_after_them():
    text = (CLUSTER / "slurm.sh").read_text(encoding="utf-8")
    assert "#SBATCH --array=1-$shards" in text
    assert '--dependency="afterok:$job"' in text
    [shard_line] = _lines_running(text, "course_build.grade")
    args = _parse(
        grade.build_parser(), shard_line, q_lesson=LESSON, q_zip="z.zip", SLURM_ARRAY_TASK_ID="2", shards="3"
    )
    assert (args.lesson, args.zip, parse_shard(args.shard)) == (LESSON, Path("z.zip"), Shard(2, 3))
    [merge_line] = _lines_running(text, "course_build.merge")
    assert _parse(merge.build_parser(), merge_line, q_lesson=LESSON).lesson == LESSON


def test_the_kubernetes_job_is_indexed_and_shard_k_is_the_index_plus_one():
    grade_job, merge_job = yaml.safe_load_all((CLUSTER / "kubernetes.yaml").read_text(encoding="utf-8"))
    spec = grade_job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"]
    [container] = spec["template"]["spec"]["containers"]
    env = {item["name"]: item["value"] for item in container["env"]}
    assert env["SHARDS"] == str(spec["completions"])
    command = container["command"][-1]
    args = _parse(
        grade.build_parser(),
        command,
        **{"INDEX+1": "1"},
        LESSON=env["LESSON"],
        ZIP=env["ZIP"],
        SHARDS=env["SHARDS"],
    )
    assert parse_shard(args.shard) == Shard(1, spec["completions"])  # index 0 is shard 1
    assert [m["mountPath"] for m in container["volumeMounts"]] == [str(args.course)]
    [merger] = merge_job["spec"]["template"]["spec"]["containers"]
    merge_args = _parse(merge.build_parser(), merger["command"][-1], LESSON=env["LESSON"])
    assert merge_args.course == args.course and merge_args.lesson == env["LESSON"]
    assert (
        grade_job["metadata"]["labels"]["step"] == "grade"
        and merge_job["metadata"]["labels"]["step"] == "merge"
    )


def test_the_dockerfile_installs_as_the_readme_does():
    spec = importlib.util.spec_from_file_location("install_torch", REPO_ROOT / "scripts" / "install_torch.py")
    install_torch = importlib.util.module_from_spec(spec)
    sys.modules["install_torch"] = install_torch  # its dataclasses look their module up
    spec.loader.exec_module(install_torch)
    text = (CLUSTER / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^FROM python:3\.11\b", text, re.MULTILINE)
    assert re.search(r"apt-get install .*\bbubblewrap\b.*\blibseccomp2\b", text)
    index, pin = install_torch.CPU_INDEX, install_torch.TORCH_PIN
    cpu = f"pip install --no-cache-dir --no-deps --index-url {index} {pin}"
    assert cpu in text and text.index(cpu) < text.index("-r requirements-instructor.txt")
    pins = (REPO_ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert install_torch.TORCH_PIN in pins  # the README's pin, the one the image installs
    assert "pip install --no-cache-dir --no-deps -e ." in text
    ignored = (REPO_ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    assert {"autograder/submitted", "autograder/gradebook.db", ".venv"} <= set(ignored)


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_shard_copies_only_its_students_and_leaves_the_course_as_it_was(tmp_path):
    course = _course(tmp_path)
    (course / "nbgrader_config.py").write_text(
        "import os\nc = get_config()\nc.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))\n"
    )
    for student in ("ada", "bo"):
        for relative in ("submitted/{s}/L/L.ipynb", "collected/L/{s}/record.json", "grader_notes/{s}/L.json"):
            path = course / relative.format(s=student).replace("L", LESSON)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(student)
    before = _tree(course)
    folder, states = prepare_shard(course, LESSON, Shard(2, 3), ["ada"])
    assert folder == course / "shards" / LESSON / "2-of-3"
    copied = _tree(folder)
    assert f"submitted/ada/{LESSON}/{LESSON}.ipynb" in copied and f"grader_notes/ada/{LESSON}.json" in copied
    assert not any("bo" in Path(name).parts for name in copied)
    assert set(states) == {"ada"} and states["ada"] == course_state(course, LESSON, "ada")
    assert {k: v for k, v in _tree(course).items() if not k.startswith("shards/")} == before


def test_a_configuration_with_a_fixed_root_is_refused_so_no_shard_grades_into_the_course(tmp_path):
    course = _course(tmp_path)
    (course / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(course)!r}\n"
    )
    with pytest.raises(ShardError, match="c.CourseDirectory.root"):
        prepare_shard(course, LESSON, Shard(1, 1), [])


def test_a_merge_stopped_half_way_can_be_run_again(tmp_path):
    """A student the stopped merge already brought in is counted merged, not "changed since"."""
    course, shard = tmp_path / "course", tmp_path / "course" / "shards" / LESSON / "1-of-1"
    record = Path("collected", LESSON, "zoe", "record.json")
    for root in (course, shard):
        (root / record).parent.mkdir(parents=True)
        (root / record).write_text('{"submission_id": 2}')
        _gradebook(root / "gradebook.db", "zoe", auto=1.0, manual=None).close()
    manifest = ShardManifest(LESSON, 1, 1, "z.zip", "abc", "src", ["zoe"], course_states={"zoe": "before"})
    outcome = MergeOutcome()
    merge_shard(course, shard, manifest, outcome)
    assert outcome.merged == ["zoe"] and not outcome.not_merged
