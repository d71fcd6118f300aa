"""Lessons that open unmodified on any Python: JupyterLab's contents served with this kernel's
``language_info``.

When a kernel starts, JupyterLab 4 writes the kernel's ``language_info`` into the open notebook
(``NotebookPanel._updateLanguage``); the shared model marks the notebook modified unless the new
object deep-equals the old one (``YNotebook.setMetadata``), version string included. The course's
notebooks carry one fixed ``language_info`` (Python 3.11.7, so that generated files are identical
everywhere), so on any other Python an untouched lesson used to ask "Save your work?" when closed.
No fixed value fits every Python, so the student's JupyterLab serves each Python notebook with
what ipykernel in this environment will report; the file on disk is unchanged until the student
saves, when JupyterLab would have written the same thing.

``python -m transformer_course.lesson_contents user|sys_prefix`` switches it on for the user's
Jupyter configuration or the active environment's (``scripts/student_tools.sh`` calls it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from jupyter_core.paths import ENV_CONFIG_PATH, jupyter_config_dir
from jupyter_server.config_manager import BaseJSONConfigManager
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager

MANAGER = "transformer_course.lesson_contents.LessonContentsManager"


def kernel_language_info() -> dict[str, Any]:
    """What ipykernel in this environment reports as ``language_info`` (its Python version)."""
    from ipykernel.ipkernel import IPythonKernel

    return dict(IPythonKernel.language_info)


def with_kernel_language_info(model: dict[str, Any], language_info: dict[str, Any]) -> dict[str, Any]:
    """``model`` (a contents model) with ``language_info`` written into it if it is a Python
    notebook with content; anything else is returned unchanged."""
    if model.get("type") != "notebook" or not model.get("content"):
        return model
    metadata = model["content"].setdefault("metadata", {})
    if metadata.get("language_info", {}).get("name") == "python":
        metadata["language_info"] = dict(language_info)
    return model


class LessonContentsManager(AsyncLargeFileManager):
    """Jupyter Server's default contents manager, serving Python notebooks with this kernel's
    ``language_info``."""

    async def get(self, path: str, content: bool = True, type: str | None = None, **kwargs: Any) -> dict:
        model = await super().get(path, content=content, type=type, **kwargs)
        return with_kernel_language_info(model, kernel_language_info())


def config_dir(level: str) -> Path:
    """The Jupyter configuration folder for ``level``: ``user`` or ``sys_prefix``."""
    if level == "user":
        return Path(jupyter_config_dir())
    if level == "sys_prefix":
        return Path(ENV_CONFIG_PATH[0])
    raise ValueError(f"level must be 'user' or 'sys_prefix', got {level!r}")


def install(level: str) -> Path:
    """Make Jupyter Server at ``level`` use :class:`LessonContentsManager`, keeping the rest of
    its ``jupyter_server_config.json``; returns the folder written."""
    folder = config_dir(level)
    BaseJSONConfigManager(config_dir=str(folder)).update(
        "jupyter_server_config", {"ServerApp": {"contents_manager_class": MANAGER}}
    )
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m transformer_course.lesson_contents",
        description="Serve lessons with this Python's language_info, so untouched lessons close "
        "without a save prompt.",
    )
    parser.add_argument("level", choices=("user", "sys_prefix"))
    args = parser.parse_args(argv)
    install(args.level)
    return 0


if __name__ == "__main__":
    sys.exit(main())
