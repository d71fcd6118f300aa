"""Lessons served with this environment's language_info, so untouched lessons open unmodified."""

import asyncio
import json
import sys

import nbformat
import pytest

from course_build.authoring.source import LANGUAGE_INFO
from transformer_course.lesson_contents import (
    MANAGER,
    LessonContentsManager,
    install,
    kernel_language_info,
    main,
    with_kernel_language_info,
)


def test_the_kernels_language_info_is_this_pythons():
    info = kernel_language_info()
    assert info["name"] == "python" and info["version"] == sys.version.split()[0]
    # the course's fixed value has the same fields, so only the version can differ
    assert info.keys() == LANGUAGE_INFO.keys()


def test_only_python_notebooks_with_content_are_changed():
    reported = {"name": "python", "version": "3.99.1"}
    notebook = {"type": "notebook", "content": {"metadata": {"language_info": dict(LANGUAGE_INFO)}}}
    assert with_kernel_language_info(notebook, reported)["content"]["metadata"]["language_info"] == reported
    other = {"type": "notebook", "content": {"metadata": {"language_info": {"name": "R", "version": "4"}}}}
    assert with_kernel_language_info(other, reported)["content"]["metadata"]["language_info"]["name"] == "R"
    listing = {"type": "notebook", "content": None}
    assert with_kernel_language_info(listing, reported) == {"type": "notebook", "content": None}


def test_the_manager_serves_a_lesson_with_this_python_and_leaves_the_file_alone(tmp_path):
    notebook = nbformat.v4.new_notebook(metadata={"language_info": {**LANGUAGE_INFO, "version": "3.10.0"}})
    nbformat.write(notebook, tmp_path / "lesson.ipynb")
    on_disk = (tmp_path / "lesson.ipynb").read_text(encoding="utf-8")
    manager = LessonContentsManager(root_dir=str(tmp_path))
    model = asyncio.run(manager.get("lesson.ipynb"))
    assert model["content"]["metadata"]["language_info"] == kernel_language_info()
    assert (tmp_path / "lesson.ipynb").read_text(encoding="utf-8") == on_disk


def test_install_keeps_the_rest_of_the_server_config(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path))
    (tmp_path / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {"port": 9999}}))
    assert main(["user"]) == 0
    config = json.loads((tmp_path / "jupyter_server_config.json").read_text())
    assert config == {"ServerApp": {"port": 9999, "contents_manager_class": MANAGER}}
    with pytest.raises(ValueError, match="user"):
        install("everywhere")
