"""The GitHub Pages workflow runs exactly the README's quick-start commands, so what CI publishes
is what a reader following the README gets."""

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
    return yaml.safe_load((ROOT / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8"))


def test_the_quick_start_is_two_commands():
    assert quick_start_commands() == ["bash scripts/book.sh", "bash scripts/test.sh"]


def test_each_job_runs_one_readme_command_and_the_book_job_publishes_what_it_built():
    jobs = workflow()["jobs"]
    runs = {name: [s["run"] for s in job.get("steps", []) if "run" in s] for name, job in jobs.items()}
    book, test = quick_start_commands()
    assert book in runs["book"] and test in runs["test"]
    uses = [s for s in jobs["book"]["steps"] if "uses" in s]
    upload = [s for s in uses if s["uses"].startswith("actions/upload-pages-artifact")]
    assert upload and upload[0]["with"]["path"] == "_build/html"
    deploy = jobs["deploy"]
    assert set(deploy["needs"]) == {"book", "test"}
    assert any(s.get("uses", "").startswith("actions/deploy-pages") for s in deploy["steps"])
    # Only main publishes; pull requests build and test.
    assert "refs/heads/main" in deploy["if"]


def test_the_readme_documents_the_workflow():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert ".github/workflows/pages.yml" in readme
