"""Where things live in the repository, and which lessons exist."""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
LESSONS_DIR = REPO_ROOT / "lessons"
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
SOLUTIONS_DIR = REPO_ROOT / "solutions"
AUTOGRADER_DIR = REPO_ROOT / "autograder"
NBGRADER_SOURCE_DIR = AUTOGRADER_DIR / "source"
NBGRADER_CONFIG = AUTOGRADER_DIR / "nbgrader_config.py"
BOOK_CONFIG = REPO_ROOT / "_config.yml"


def lesson_names() -> list[str]:
    """Lesson names (``01_sequence_problem`` …) in course order: the sources' file stems."""
    return sorted(p.stem for p in LESSONS_DIR.glob("[0-9][0-9]_*.md"))


def lesson_source(lesson: str) -> Path:
    path = LESSONS_DIR / f"{lesson}.md"
    if not path.is_file():
        known = ", ".join(lesson_names()) or "none"
        raise FileNotFoundError(f"no lesson source {path.relative_to(REPO_ROOT)} (lessons: {known})")
    return path


def nbgrader_source_notebook(lesson: str) -> Path:
    return NBGRADER_SOURCE_DIR / lesson / f"{lesson}.ipynb"


def student_notebook(lesson: str) -> Path:
    return NOTEBOOKS_DIR / f"{lesson}.ipynb"


def solution_notebook(lesson: str) -> Path:
    return SOLUTIONS_DIR / f"{lesson}.ipynb"
