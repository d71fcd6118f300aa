"""The student-only tree has what students need and none of the answers."""

import shutil

import pytest

from course_build.paths import NOTEBOOKS_DIR, SOLUTIONS_DIR
from course_build.student_tree import check_no_answers, main, write_student_tree


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    out = tmp_path_factory.mktemp("student") / "tree"
    write_student_tree(out)
    return out


def test_tree_has_book_notebooks_package_and_requirements(tree):
    for relative in (
        "_config.yml",
        "_toc.yml",
        "book/intro.md",
        "requirements.txt",
        "README.md",
        "transformer_course/__init__.py",
        "transformer_course/quizzes/03_attention.yaml",
        "course_site/site_assets.py",
        "course_site/citations.py",
        "scripts/install-student.sh",
        "scripts/install-student.ps1",
        "scripts/venv.sh",
        "scripts/install_torch.py",
        "scripts/check_environment.py",
        "scripts/student_tools.sh",
        "requirements-instructor.txt",
    ):
        assert (tree / relative).is_file(), relative
    copied = sorted(p.name for p in (tree / "notebooks").glob("*.ipynb"))
    assert copied == sorted(p.name for p in NOTEBOOKS_DIR.glob("*.ipynb"))
    assert "01_sequence_problem.ipynb" in copied


def test_tree_has_no_instructor_material(tree):
    for relative in (
        "solutions",
        "autograder",
        "lessons",
        "tests",
        "course_build",
    ):
        assert not (tree / relative).exists(), relative
    assert check_no_answers(tree) == []


def test_a_leaked_solution_is_caught(tree, tmp_path):
    leaky = tmp_path / "leaky"
    shutil.copytree(tree, leaky)
    shutil.copy(SOLUTIONS_DIR / "01_sequence_problem.ipynb", leaky / "notebooks" / "extra.ipynb")
    assert any("extra.ipynb" in problem for problem in check_no_answers(leaky))


def test_command_refuses_an_existing_folder(tmp_path):
    with pytest.raises(FileExistsError):
        main([str(tmp_path)])
