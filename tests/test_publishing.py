"""The instructor repository's CI runs exactly the README's quick-start commands, so what CI checks
is what a reader following the README gets; it publishes nothing, because this repository holds
the solutions: the book is published from the student repository (``tests/test_student_tree.py``)."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]


def workflow() -> dict:
    return yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8"))


def test_the_quick_start_is_two_commands():
    assert quick_start_commands() == ["bash scripts/book.sh", "bash scripts/test.sh"]


def test_each_job_runs_one_readme_command_and_nothing_is_published():
    jobs = workflow()["jobs"]
    runs = {name: [s["run"] for s in job.get("steps", []) if "run" in s] for name, job in jobs.items()}
    book, test = quick_start_commands()
    assert set(jobs) == {"book", "test"}
    assert book in runs["book"] and test in runs["test"]
    actions = [s["uses"] for job in jobs.values() for s in job["steps"] if "uses" in s]
    assert actions == ["actions/checkout@v4", "actions/checkout@v4"]
    assert workflow()["permissions"] == {"contents": "read"}
    assert all("permissions" not in job for job in jobs.values())


def test_the_only_workflow_is_ci():
    assert sorted(p.name for p in (ROOT / ".github" / "workflows").iterdir()) == ["ci.yml"]


def test_the_readme_documents_ci_and_where_the_book_is_published():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ".github/workflows/ci.yml" in readme
    assert "python -m course_build.student_tree" in readme and "instructor_repository" in readme


def test_the_guide_says_which_repository_to_keep_private_and_how_to_publish_the_other():
    guide = (ROOT / "book" / "instructors.md").read_text(encoding="utf-8")
    section = guide.split("### 0. Before the term", 1)[1].split("\n### ", 1)[0]
    for needed in (
        "Keep the instructor repository private",
        "`instructor_repository`",
        "Publish the student repository",
        "`repository.url`",
        "python -m course_build.student_tree",
        '"GitHub Actions"',
    ):
        assert needed in section, needed
