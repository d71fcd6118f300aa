"""The order in which the test suite hands its files to pytest-xdist's workers: heaviest first.

``scripts/test.sh`` gives each worker whole files (``--dist loadfile``), so a file's module and
session fixtures (one nbgrader batch per lesson) are built once, and it keeps the order collected
(``--no-loadscope-reorder``). xdist's own order, by number of tests, hands out late the files
with few tests and minutes of work (the JupyterLab tests: 16 tests, about 310 s; lesson 9's
training test: one test, about 230 s), and a worker that starts one of them last runs alone while
the others wait: the longest-first order below ends the workers closer together (a replay of
the CI's per-file times: 1,728 s against 1,590 s on four workers).

``HEAVIEST_FILES`` names the files that take half a minute or more, heaviest first, by their time
in the last fresh-clone run of ``.ci/run`` on the 2-core machine (2,204 s of tests over the two
workers); every other file follows in its usual order.
"""

from pathlib import Path

import pytest

HEAVIEST_FILES = (
    "browser/test_jupyterlab.py",  # about 310 s: every solved lesson run in JupyterLab
    "test_integrity_lesson_3.py",  # about 230 s, most of it waiting on time limits
    "test_your_translator_training.py",  # about 230 s: one test, two float64 trainings
    "test_integrity_lesson_1.py",  # about 160 s
    "test_lesson_every_cell_02_to_08.py",  # about 160 s
    "test_lesson_variants_08.py",  # about 150 s
    "test_colab_like.py",  # about 120 s
    "test_lesson_variants_10.py",  # about 110 s
    "browser/test_site.py",  # about 100 s: builds the book the other site tests share
    "test_lesson_every_cell_09_10.py",  # about 80 s
    "test_lesson_variants_02_to_04.py",  # about 70 s
    "test_lesson_variants_05_to_07.py",  # about 60 s
    "test_grade_command.py",  # about 55 s
    "test_sandbox.py",  # about 35 s
    "test_shards_grading.py",  # about 35 s
    "browser/test_formgrader.py",  # about 30 s
    "test_lesson_variants_09.py",  # about 30 s
    "test_term_collect.py",  # about 30 s
)
TESTS = Path(__file__).parent


def heaviest_first(items: list[pytest.Item]) -> list[pytest.Item]:
    """``items`` with the files of ``HEAVIEST_FILES`` first, in its order; each file's tests stay
    together and in their own order, and the other files follow as they were."""
    rank = {name: position for position, name in enumerate(HEAVIEST_FILES)}

    def file_rank(item: pytest.Item) -> int:
        path = Path(item.path)
        name = path.relative_to(TESTS).as_posix() if path.is_relative_to(TESTS) else path.name
        return rank.get(name, len(HEAVIEST_FILES))

    return sorted(items, key=file_rank)  # a stable sort: the rest keep their collected order
