"""Every command the guide's "A term, step by step" shows exists and accepts the flags it is shown with.

The section is what an instructor copies from all term long; a renamed module or flag would leave
them with an argparse error in the middle of grading. Each ``python -m course_build...`` command
of the section (in its table and its code blocks) must name a module whose ``--help`` lists every
flag the guide gives it, and every subcommand it uses (``export lms``, ``roster drop``).
"""

import re
import shlex
import subprocess
import sys
from functools import cache

import pytest

from course_build.paths import REPO_ROOT

GUIDE = REPO_ROOT / "book" / "instructors.md"
SECTION = "## A term, step by step"
STEPS = ("grade", "formgrader", "report", "regrade", "roster", "export")  # each step the section covers


def section_text() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start : end if end != -1 else None]


def guide_commands() -> list[list[str]]:
    """Each ``python -m course_build[.x] ...`` command line of the section, as words."""
    commands = []
    for match in re.finditer(r"python -m (course_build(?:\.\w+)?)([^`\n]*)", section_text()):
        words = shlex.split(match[2].split("#")[0])
        commands.append([match[1], *words])
    return commands


@cache
def help_text(module: str, *subcommand: str) -> tuple[int, str]:
    result = subprocess.run(
        [sys.executable, "-m", module, *subcommand, "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return result.returncode, result.stdout + result.stderr


def _subcommands(help_output: str) -> set[str]:
    """The choices of an argparse subcommand (``{lms,feedback}`` in the usage line; an option's
    choices, ``[--lesson {a,b}]``, are not subcommands; a whole option before them, ``[-h]``, is
    no option of theirs)."""
    usage = help_output.split("\n\n")[0]
    groups = re.finditer(r"(\S+)\s+\{([\w,-]+)\}", usage)
    return {
        choice
        for group in groups
        if not (group[1].lstrip("[").startswith("-") and not group[1].endswith("]"))
        for choice in group[2].split(",")
    }


def test_the_section_covers_every_step_of_a_term():
    modules = {command[0] for command in guide_commands()}
    assert {f"course_build.{step}" for step in STEPS} <= modules, modules
    for words in (
        "export lms",
        "export feedback",
        "roster drop",
        "roster restore",
        "--replace",
        "--submitted-at",
    ):
        assert words in section_text(), words


@pytest.mark.parametrize("command", guide_commands(), ids=lambda c: " ".join(c)[:60])
def test_each_command_names_a_real_module_and_flags_it_accepts(command):
    module, *words = command
    code, shown = help_text(module)
    assert code == 0, f"python -m {module} --help failed:\n{shown}"
    subcommands = _subcommands(shown)
    if subcommands:
        positional = [word for word in words if not word.startswith("-")]
        assert positional and positional[0] in subcommands, (command, subcommands)
        code, shown = help_text(module, positional[0])
        assert code == 0, shown
    for flag in (word.split("=")[0] for word in words if word.startswith("--")):
        assert re.search(rf"(^|[\s,\[]){re.escape(flag)}\b", shown), f"{module} does not accept {flag}"
