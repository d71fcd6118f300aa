"""The student-only tree has what students need and none of the answers."""

import re
import shutil

import pytest
import yaml
from student_repository import student_book_steps

from course_build import student_tree
from course_build.paths import NOTEBOOKS_DIR, REPO_ROOT, SOLUTIONS_DIR
from course_build.repositories import RepositoryConfigError, course_repositories, mentions
from course_build.student_tree import (
    check_no_answers,
    files_naming_the_instructor_repository,
    main,
    write_student_tree,
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    out = tmp_path_factory.mktemp("student") / "tree"
    write_student_tree(out)
    return out


def test_tree_has_book_notebooks_package_and_requirements(tree):
    for relative in (
        "_config.yml",
        ".gitignore",
        ".github/workflows/pages.yml",
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


def test_the_lessons_export_file_stays_out_of_the_tree(tmp_path, monkeypatch):
    """An instructor who ran lessons 8 and 9 in their checkout has my_transformer.py, holding
    their answers, beside the notebooks: the student repository leaves it out."""
    checkout = tmp_path / "checkout"
    (checkout / "notebooks").mkdir(parents=True)
    (checkout / "notebooks" / "08_encoder_decoder.ipynb").write_text("{}")
    (checkout / "notebooks" / "my_transformer.py").write_text("class MultiHeadAttention: ...")
    monkeypatch.setattr(student_tree, "REPO_ROOT", checkout)
    write_student_tree(tmp_path / "tree")
    assert sorted(p.name for p in (tmp_path / "tree" / "notebooks").iterdir()) == ["08_encoder_decoder.ipynb"]


def test_a_leaked_solution_is_caught(tree, tmp_path):
    leaky = tmp_path / "leaky"
    shutil.copytree(tree, leaky)
    shutil.copy(SOLUTIONS_DIR / "01_sequence_problem.ipynb", leaky / "notebooks" / "extra.ipynb")
    assert any("extra.ipynb" in problem for problem in check_no_answers(leaky))


def test_command_refuses_an_existing_folder_in_one_line(tmp_path, capsys):
    assert main([str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path} exists; give a new folder\n"


# --- one published student repository, named in _config.yml ------------------------------------

REPOSITORIES = course_repositories()
COLAB_BADGE = re.compile(r"colab\.research\.google\.com/github/([\w.-]+/[\w.-]+)/blob/main/notebooks/")
INSTALL_CELL = re.compile(r"transformer_course @ git\+https://github\.com/([\w.-]+/[\w.-]+)")
CLONE = re.compile(r"git clone https://github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?\n\s*cd ([\w.-]+)")


def test_the_config_names_two_different_repositories():
    assert REPOSITORIES.student_path != REPOSITORIES.instructor_path


def test_every_badge_and_install_cell_names_the_student_repository(tree):
    for notebook in sorted((tree / "notebooks").glob("*.ipynb")):
        text = notebook.read_text(encoding="utf-8")
        assert COLAB_BADGE.findall(text) == [REPOSITORIES.student_path], notebook.name
        assert set(INSTALL_CELL.findall(text)) == {REPOSITORIES.student_path}, notebook.name


@pytest.mark.parametrize("document", ["README.md", "book/how_to_use.md"])
def test_clone_commands_name_the_student_repository(tree, document):
    clones = CLONE.findall((tree / document).read_text(encoding="utf-8"))
    folder = REPOSITORIES.student_path.split("/")[1]
    assert clones, f"{document} has no clone command"
    assert set(clones) == {(REPOSITORIES.student_path, folder)}, document


def test_the_tree_config_leaves_the_instructor_repository_out_and_keeps_the_rest(tree):
    config = yaml.safe_load((REPO_ROOT / "_config.yml").read_text(encoding="utf-8"))
    del config["instructor_repository"]
    assert yaml.safe_load((tree / "_config.yml").read_text(encoding="utf-8")) == config


def test_no_file_of_the_tree_names_the_instructor_repository(tree):
    assert files_naming_the_instructor_repository(tree) == []


@pytest.mark.parametrize(
    "planted",
    [
        "https://github.com/{path}",
        "git clone https://github.com/{path}.git",
        '<a href="https://colab.research.google.com/github/{path}/blob/main/notebooks/x.ipynb">',
        "%pip install 'transformer_course @ git+https://github.com/{path}'",
    ],
)
def test_a_link_to_the_instructor_repository_is_caught(tree, tmp_path, planted):
    leaky = tmp_path / "leaky"
    shutil.copytree(tree, leaky)
    (leaky / "book" / "extra.md").write_text(planted.format(path=REPOSITORIES.instructor_path))
    assert files_naming_the_instructor_repository(leaky) == [
        f"book/extra.md names {REPOSITORIES.instructor_path}"
    ]


def test_mentions_tells_a_repository_from_one_whose_name_extends_it():
    assert mentions("see github.com/org/course.", "org/course")
    assert mentions("git clone https://github.com/org/course.git", "org/course")
    assert not mentions("https://github.com/org/course-instructor", "org/course")
    assert not mentions("https://github.com/org/course.github.io", "org/course")
    assert not mentions("https://github.com/big-org/course", "org/course")


def test_the_tree_has_its_own_pages_workflow_that_builds_its_book_as_book_sh_does(tree):
    workflow = yaml.safe_load((tree / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8"))
    assert workflow["defaults"]["run"]["shell"] == "bash"
    install, build = student_book_steps(tree)
    assert install == "bash scripts/install.sh" and (tree / "scripts" / "install.sh").is_file()
    book_sh = (tree / "scripts" / "book.sh").read_text(encoding="utf-8")
    assert build.endswith(re.search(r"^jupyter-book build .*$", book_sh, re.M).group(0))
    steps = workflow["jobs"]["book"]["steps"]
    assert steps[-1]["uses"].startswith("actions/upload-pages-artifact") and steps[-1]["with"] == {
        "path": "_build/html"
    }
    deploy = workflow["jobs"]["deploy"]
    assert any(s.get("uses", "").startswith("actions/deploy-pages") for s in deploy["steps"])
    assert workflow[True]["push"] == {"branches": ["main"]}  # YAML 1.1 reads the key `on` as True


def test_a_config_naming_one_repository_twice_gets_a_one_line_error(tmp_path):
    config = tmp_path / "_config.yml"
    config.write_text(
        "repository:\n  url: https://github.com/org/course\n"
        "instructor_repository: https://github.com/org/course.git\n"
    )
    with pytest.raises(RepositoryConfigError, match="are the same repository"):
        course_repositories(config)
    config.write_text("repository:\n  url: https://github.com/org/course\n")
    with pytest.raises(RepositoryConfigError, match="has no instructor_repository"):
        course_repositories(config)


def test_command_reports_a_bad_config_in_one_line(monkeypatch, tmp_path, capsys):
    def broken():
        raise RepositoryConfigError("_config.yml has no instructor_repository")

    monkeypatch.setattr(student_tree, "course_repositories", broken)
    assert main([str(tmp_path / "new")]) == 2
    assert capsys.readouterr().err == "error: _config.yml has no instructor_repository\n"
    assert not (tmp_path / "new").exists()


@pytest.mark.slow
def test_the_published_tree_cloned_builds_its_book_with_its_pages_workflow(student_book):
    """The ``student_book`` fixture cloned the tree over file:// and ran the workflow's build step."""
    html = student_book / "_build" / "html"
    assert (html / "index.html").is_file()
    assert files_naming_the_instructor_repository(student_book) == []  # the built site included
    page = (html / "notebooks" / "01_sequence_problem.html").read_text(encoding="utf-8")
    badge = f"colab.research.google.com/github/{REPOSITORIES.student_path}/blob/main/notebooks/"
    assert badge + "01_sequence_problem.ipynb" in page
