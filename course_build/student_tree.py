"""``python -m course_build.student_tree OUT_DIR``: the public repository students get.

It holds what students need to read, run and build the course (the book sources, the student
notebooks, the helper package, the requirements, a README for students) and nothing that gives
answers away: no lesson sources, no solution notebooks, no nbgrader course directory, no tests
(they hold the realistic wrong answers) and no ``course_build``: the book build's Sphinx extensions
are ``course_site``, a package of their own. ``check_no_answers`` proves it on the written tree.

It is published under its own name (``repository.url`` in ``_config.yml``) while the instructor
repository stays private: the tree's ``_config.yml`` leaves ``instructor_repository`` out, its
README clones the student repository, it carries its own GitHub Pages workflow
(``student_pages.yml``), and ``files_naming_the_instructor_repository`` proves that no file points
back at the instructor repository.
"""

import argparse
import shutil
import sys
from pathlib import Path

import nbformat

from course_build.cell_roles import is_written_answer
from course_build.paths import BOOK_CONFIG, REPO_ROOT, lesson_names, nbgrader_source_notebook
from course_build.repositories import RepositoryConfigError, course_repositories, mentions
from transformer_course.translation.solution_export import EXPORT_FILE

# Paths relative to the repository root; folders are copied whole.
INCLUDED = (
    ".gitignore",
    "_toc.yml",
    "book",
    "notebooks",
    "transformer_course",
    "course_site",
    "pyproject.toml",
    "requirements.txt",
    "requirements-instructor.txt",
    "requirements-dev.txt",
    "package.json",
    "package-lock.json",
    "scripts/install-student.sh",
    "scripts/install-student.ps1",
    "scripts/venv.sh",
    "scripts/install_torch.py",
    "scripts/check_environment.py",
    "scripts/student_tools.sh",
    "scripts/install.sh",
    "scripts/book.sh",
)
# Left out of copied folders: caches, and the file lessons 8 and 9's export cells write beside the
# notebooks (``my_transformer.py``, ``solution_export.EXPORT_FILE``), which holds whoever ran the
# lessons' answers: the instructor's, on the instructor's checkout.
IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints", "*.egg-info", EXPORT_FILE)
ANSWER_MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
PAGES_WORKFLOW = Path(".github") / "workflows" / "pages.yml"
STUDENT_PAGES_TEMPLATE = Path(__file__).with_name("student_pages.yml")

STUDENT_README = r"""# Attention, Built Up

An open course that builds the Transformer of *Attention Is All You Need* (Vaswani et al., 2017)
from a dot product up, one Jupyter notebook per lesson.

## Start

- **Colab**: open a notebook in `notebooks/` and click its "Open in Colab" badge.
- **JupyterLab**:

  ```bash
  git clone {clone_url}
  cd {folder}
  bash scripts/install-student.sh   # .venv with the lessons' packages; nbgrader's Validate button only
  source .venv/bin/activate
  jupyter lab notebooks/
  ```

  Python 3.10 or newer and git are needed (on Debian and Ubuntu also `python3-venv`). On Linux the
  script installs PyTorch's CPU build (about 200 MB); `--gpu` installs PyPI's CUDA build instead
  (about 2.7 GB). On Windows, in PowerShell:
  `powershell -ExecutionPolicy Bypass -File scripts\install-student.ps1`, then
  `.venv\Scripts\Activate.ps1` and `jupyter lab notebooks\`.

- **The book**: `bash scripts/book.sh` (it installs the book tools too), then open
  `_build/html/index.html`.

Each lesson has exercises: written ones (Recall, Extend) and code you complete where a cell says
`raise NotImplementedError()`. The box at the top of each notebook says how they work; the visible
tests under each exercise tell you what to fix, and your instructor grades the submitted notebook
with more tests of the same properties.

The book is published from this repository by `.github/workflows/pages.yml` (set the repository's
Pages source to "GitHub Actions").
"""


def _normalized(text: str) -> str:
    """Lines stripped of indentation and blank lines dropped, so a copied region still matches."""
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def model_answers() -> list[str]:
    """Text only the instructor has (normalized): solution regions, hidden tests, model answers."""
    answers = []
    for lesson in lesson_names():
        path = nbgrader_source_notebook(lesson)
        if not path.is_file():
            continue
        for cell in nbformat.read(path, as_version=4).cells:
            if is_written_answer(cell):
                answers.append(_normalized(cell.source))
            for start, end in (
                ("### BEGIN SOLUTION", "### END SOLUTION"),
                ("### BEGIN HIDDEN", "### END HIDDEN"),
            ):
                for region in cell.source.split(start)[1:]:
                    answers.append(_normalized(region.split(end, 1)[0]))
    # A one-line answer (``rnn_steps_40 = 40``) is ordinary text; whole regions are what must not leak.
    return [answer for answer in answers if answer.count("\n") >= 1 or len(answer) >= 60]


def without_instructor_entry(config_text: str) -> str:
    """``_config.yml``'s text without ``instructor_repository`` and the comment lines above it."""
    lines = config_text.splitlines(keepends=True)
    kept: list[str] = []
    for line in lines:
        if line.startswith("instructor_repository:"):
            while kept and kept[-1].startswith("#"):
                kept.pop()
            continue
        kept.append(line)
    return "".join(kept)


def student_readme(student_url: str) -> str:
    """The student repository's README, its clone command naming that repository."""
    folder = student_url.rsplit("/", 1)[1]
    return STUDENT_README.replace("{clone_url}", f"{student_url}.git").replace("{folder}", folder)


def write_student_tree(out_dir: Path) -> list[Path]:
    """Write the student repository into ``out_dir`` (which must not exist); return its files."""
    if out_dir.exists():
        raise FileExistsError(f"{out_dir} exists; give a new folder")
    repositories = course_repositories()
    for relative in INCLUDED:
        source, target = REPO_ROOT / relative, out_dir / relative
        if source.is_dir():
            shutil.copytree(source, target, ignore=IGNORED)
        elif source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    config = without_instructor_entry(BOOK_CONFIG.read_text(encoding="utf-8"))
    (out_dir / "_config.yml").write_text(config, encoding="utf-8")
    (out_dir / "README.md").write_text(student_readme(repositories.student), encoding="utf-8")
    (out_dir / PAGES_WORKFLOW).parent.mkdir(parents=True)
    shutil.copy2(STUDENT_PAGES_TEMPLATE, out_dir / PAGES_WORKFLOW)
    return sorted(p for p in out_dir.rglob("*") if p.is_file())


def check_no_answers(out_dir: Path) -> list[str]:
    """Files of the tree that contain an answer marker or a model answer (empty: clean)."""
    answers = model_answers()
    problems = []
    for path in sorted(p for p in out_dir.rglob("*") if p.is_file()):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary files (checkpoints, images) carry no source text
        if path.suffix == ".ipynb":  # compare the cells' text, not its JSON quoting
            cells = nbformat.reads(text, as_version=4).cells
            text = "\n".join(c.source + "".join(str(o) for o in c.get("outputs", [])) for c in cells)
        normalized = _normalized(text)
        leaked = [m for m in ANSWER_MARKERS if m in text] + [a[:60] for a in answers if a in normalized]
        if leaked:
            problems.append(f"{path.relative_to(out_dir)}: {leaked[:3]}")
    return problems


def _text_files(out_dir: Path) -> list[tuple[Path, str]]:
    """Every file of the tree that reads as UTF-8 text, with its text."""
    texts = []
    for path in sorted(
        p for p in out_dir.rglob("*") if p.is_file() and ".git" not in p.relative_to(out_dir).parts
    ):
        try:
            texts.append((path, path.read_text(encoding="utf-8")))
        except (UnicodeDecodeError, OSError):
            continue  # binary files (checkpoints, images)
    return texts


def files_naming_the_instructor_repository(out_dir: Path) -> list[str]:
    """Files of the tree that name the instructor repository (empty: clean)."""
    instructor = course_repositories().instructor_path
    return [
        f"{path.relative_to(out_dir)} names {instructor}"
        for path, text in _text_files(out_dir)
        if mentions(text, instructor)
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m course_build.student_tree",
        description="Write the student-only repository (no solutions, no autograder) to OUT_DIR.",
    )
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args(argv)
    try:
        repositories = course_repositories()
        files = write_student_tree(args.out_dir)
    except (RepositoryConfigError, FileExistsError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    problems = check_no_answers(args.out_dir) + files_naming_the_instructor_repository(args.out_dir)
    for problem in problems:
        print(f"LEAK: {problem}")
    if problems:
        return 1
    print(
        f"{len(files)} files written to {args.out_dir}; no solution, hidden test or link to the "
        f"instructor repository in them. Publish it as {repositories.student}."
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
