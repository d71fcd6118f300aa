"""The course's two GitHub repositories, named in one place: ``_config.yml``.

``repository.url`` is the published student repository (Jupyter Book's own key, so the book's
launch buttons use it too); ``instructor_repository`` is the private one with the solutions,
hidden tests and autograder. The lessons' Colab badges and install cell, the student tree's
README and the clone commands name the student repository; nothing students get may name the
instructor's.
"""

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from course_build.paths import BOOK_CONFIG

GITHUB_URL = re.compile(r"^https://github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$")


class RepositoryConfigError(ValueError):
    """``_config.yml`` does not name the two repositories as the course needs."""


@dataclass(frozen=True)
class Repositories:
    student: str  # https://github.com/OWNER/NAME, no trailing slash
    instructor: str

    @property
    def student_path(self) -> str:
        """``OWNER/NAME`` of the student repository."""
        return github_path(self.student)

    @property
    def instructor_path(self) -> str:
        return github_path(self.instructor)


def github_path(url: str) -> str:
    """``OWNER/NAME`` of a ``https://github.com/OWNER/NAME`` URL (``.git`` and ``/`` allowed)."""
    match = GITHUB_URL.match(url.strip())
    if not match:
        raise RepositoryConfigError(f"{url!r} is not a GitHub repository URL (https://github.com/OWNER/NAME)")
    return match.group(1)


def course_repositories(config_path: Path = BOOK_CONFIG) -> Repositories:
    """Both repositories from ``_config.yml``; a clear error when one is missing or they coincide."""
    config = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
    student = str((config.get("repository") or {}).get("url") or "")
    instructor = str(config.get("instructor_repository") or "")
    if not student:
        raise RepositoryConfigError(f"{config_path.name} has no repository.url (the student repository)")
    if not instructor:
        raise RepositoryConfigError(f"{config_path.name} has no instructor_repository")
    repositories = Repositories(student.rstrip("/"), instructor.rstrip("/"))
    if repositories.student_path.lower() == repositories.instructor_path.lower():
        raise RepositoryConfigError(
            f"{config_path.name}: repository.url and instructor_repository are the same repository; "
            "students must get a repository of their own"
        )
    return repositories


def mentions(text: str, path: str) -> bool:
    """Whether ``text`` names the repository ``OWNER/NAME`` (any URL form, any case)."""
    return re.search(rf"(?<![\w.-]){re.escape(path)}(?![\w-]|\.(?!git\b)\w)", text, re.IGNORECASE) is not None
