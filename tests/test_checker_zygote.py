"""The checker zygote: a fresh, pre-imported checker per notebook, and the fallback without it (fast).

Real processes, no kernel and no nbgrader: the kernel's end of the wire (``wire.answer``) runs here
on a namespace holding a lesson's reference answers or its stubs.
"""

import os
import select
import subprocess
import sys
import textwrap
import time

import nbformat
import pytest

from course_build.cell_roles import is_code_answer, is_test_cell
from course_build.checking import wire, zygote
from course_build.checking.checker import CheckerGone, CheckerProcess, names_used
from course_build.paths import nbgrader_source_notebook, student_notebook
from course_build.test_cells import solution_names

LESSON = "03_attention"  # 13 test cells, 6 of them with PyTorch oracles


@pytest.fixture
def own_zygote(monkeypatch):
    """A zygote of this test's own, ended afterwards; the fallback flag as a fresh process has it."""
    zygote.close_zygote()
    monkeypatch.setattr(zygote, "_zygote_failed", False)
    yield
    zygote.close_zygote()


def _run(checker: CheckerProcess, code: str, namespace: dict | None = None, names=()) -> dict:
    """Run one test cell in ``checker``, answering its kernel requests from ``namespace``."""
    checker.send({"op": "run", "code": code, "names": sorted(names)})
    while True:
        message = checker.receive(120)
        if message["op"] == "done":
            return {"printed": message["printed"], "error": message["error"]}
        request = {k: v for k, v in message["request"].items() if k != "printed"}
        checker.send({"op": "reply", "reply": wire.answer(request, namespace or {})})


def _printed(checker: CheckerProcess, code: str) -> str:
    result = _run(checker, code)
    assert result["error"] is None, result
    return result["printed"]["stdout"]


def _gone_within(pid: int, timeout_s: float) -> bool:
    """Whether process ``pid`` (not necessarily our child) ends within ``timeout_s``."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([pidfd], [], [], timeout_s)
        return bool(ready)
    finally:
        os.close(pidfd)


def _lesson_namespace(notebook_path) -> tuple[dict, set[str], list[str]]:
    """The notebook's code answers run in a namespace; the solution names; the test cells' code."""
    notebook = nbformat.read(notebook_path, as_version=4)
    namespace: dict = {}
    exec("import numpy as np", namespace)  # noqa: S102 - the lesson's own set-up import
    for cell in notebook.cells:
        if is_code_answer(cell):
            try:
                exec(cell.source, namespace)  # noqa: S102 - the course's own reference answers and stubs
            except NotImplementedError:  # a stub of a value answer
                pass
    source = nbformat.read(nbgrader_source_notebook(LESSON), as_version=4)
    tests = [cell.source for cell in source.cells if is_test_cell(cell)]
    return namespace, solution_names(source.cells), tests


def test_a_forked_checker_gives_exactly_the_results_of_a_started_one(own_zygote):
    """Every test cell of a lesson, on its reference answers and on its stubs: same output, same error."""
    checked = 0
    for notebook_path in (nbgrader_source_notebook(LESSON), student_notebook(LESSON)):
        namespace, names, tests = _lesson_namespace(notebook_path)
        started, forked = CheckerProcess(), zygote.start_checker()
        assert isinstance(forked, zygote.ForkedChecker)
        try:
            for code in tests:
                used = names & names_used(code)
                assert _run(forked, code, namespace, used) == _run(started, code, namespace, used)
                checked += 1
        finally:
            started.close()
            forked.close()
    assert checked == 26


def test_two_checkers_of_one_zygote_share_no_state(own_zygote):
    """A module global, a builtin and a file left by one notebook's checker are absent in the next."""
    first = zygote.start_checker()
    leave_behind = textwrap.dedent("""
        import builtins, os
        import transformer_course.checks as checks
        checks.LEFT_BEHIND = 1
        builtins.LEFT_BEHIND = 1
        open("left_behind.txt", "w").close()
        print(os.getpid(), sorted(os.listdir(".")))
    """)
    first_pid, first_files = _printed(first, leave_behind).split(" ", 1)
    assert "left_behind.txt" in first_files
    second = zygote.start_checker()
    look = textwrap.dedent("""
        import builtins, os
        import transformer_course.checks as checks
        print(os.getpid(), hasattr(checks, "LEFT_BEHIND"), hasattr(builtins, "LEFT_BEHIND"), os.listdir("."))
    """)
    second_pid, seen = _printed(second, look).split(" ", 1)
    assert isinstance(second, zygote.ForkedChecker)
    assert second_pid != first_pid
    assert seen.strip() == "False False ['stderr.txt']"  # its own log, as a started checker has
    first.close()
    second.close()


def test_a_killed_checker_fails_at_once_and_leaves_the_zygote_serving(own_zygote):
    checker = zygote.start_checker()
    zygote_pid = zygote._zygote.process.pid
    checker.send({"op": "run", "code": "while True: pass", "names": []})
    checker.process.kill()
    started = time.monotonic()
    with pytest.raises(CheckerGone):
        checker.receive(60)
    assert time.monotonic() - started < 10  # the end of its socket is seen, no waiting for a timeout
    checker.close()
    after = zygote.start_checker()
    assert isinstance(after, zygote.ForkedChecker)
    assert zygote._zygote.process.pid == zygote_pid
    assert _printed(after, "print(6 * 7)") == "42\n"
    after.close()


def test_the_zygote_forks_with_one_thread_and_its_checkers_compute_on_one(own_zygote):
    """Forking is safe only from a single-threaded process: importing torch must start no threads."""
    checker = zygote.start_checker()
    threads = _printed(checker, "import torch\nprint(torch.get_num_threads(), torch.ones(4).sum().item())")
    assert threads == "1 4.0\n"
    assert os.listdir(f"/proc/{zygote._zygote.process.pid}/task") == [str(zygote._zygote.process.pid)]
    checker.close()


def test_a_checker_that_ended_cannot_be_killed_twice_by_pid(own_zygote):
    """Killing goes through a pidfd: once the checker is gone, nothing else gets the signal."""
    checker = zygote.start_checker()
    checker.close()
    assert checker.process.poll() is not None
    checker.process.kill()  # no error, and no process of that pid (maybe reused) is touched


def test_the_zygote_ends_with_the_nbgrader_process_that_started_it(tmp_path):
    """Killed outright (no clean-up at exit), the owner's end of the control socket still closes."""
    script = textwrap.dedent("""
        import os, signal
        from course_build.checking import zygote
        checker = zygote.start_checker()
        print(zygote._zygote.process.pid, checker.process.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    zygote_pid, checker_pid = map(int, result.stdout.split())
    assert _gone_within(zygote_pid, 15)
    assert _gone_within(checker_pid, 15)  # its socket's other end closed with the owner


def test_without_its_zygote_a_process_falls_back_to_started_checkers(own_zygote):
    zygote.start_checker().close()
    dead = zygote._zygote.process
    dead.kill()
    dead.wait()
    checker = zygote.start_checker()
    assert type(checker) is CheckerProcess
    assert _printed(checker, "import numpy as np\nprint(np.arange(3).sum())") == "3\n"
    checker.close()
    assert zygote._zygote is None
    later = zygote.start_checker()
    assert type(later) is CheckerProcess  # for the rest of the process
    later.close()


def test_a_forked_checker_counts_parameters_on_the_meta_device_without_importing_anything(own_zygote):
    """Lesson 8's hidden tests count a model's parameters on the meta device; PyTorch imports
    torch._dynamo (2 s of CPU) on the first such model, which the zygote does once for all."""
    checker = zygote.start_checker()
    count = textwrap.dedent("""
        import sys
        before = set(sys.modules)
        from transformer_course.translation.model import TransformerConfig, count_parameters
        config = TransformerConfig(src_vocab_size=10, tgt_vocab_size=10, d_model=8, n_heads=2, d_ff=16)
        print(sum(count_parameters(config).values()) > 0, sorted(set(sys.modules) - before))
    """)
    assert isinstance(checker, zygote.ForkedChecker)
    assert _printed(checker, count) == "True []\n"
    checker.close()


def test_the_zygote_imports_what_the_lessons_tests_import_and_pytorch_only_where_they_use_it():
    def tests_of(lesson: str) -> list[str]:
        source = nbformat.read(nbgrader_source_notebook(lesson), as_version=4)
        return [cell.source for cell in source.cells if is_test_cell(cell)]

    with_torch = zygote.modules_to_preload(tests_of(LESSON))
    assert set(zygote.PRELOADED) <= set(with_torch)
    assert with_torch[: len(zygote.ALWAYS_PRELOADED)] == zygote.ALWAYS_PRELOADED
    lesson_8 = zygote.modules_to_preload(tests_of("08_encoder_decoder"))
    assert {"transformer_course.adapters", "transformer_course.translation.tokenization"} <= set(lesson_8)
    without = zygote.modules_to_preload(tests_of("10_decoder_only"))
    assert without == zygote.ALWAYS_PRELOADED  # lesson 10's tests compare numpy arrays only
    # the cells' own imports in order, then PyTorch's extras; a cell that does not parse adds nothing
    assert zygote.modules_to_preload(["import torch.nn.functional as F", "def broken("]) == (
        *zygote.ALWAYS_PRELOADED,
        "torch.nn.functional",
        "torch",
        "torch._dynamo",
        "transformer_course.translation.model",
    )


def test_a_checker_of_a_zygote_without_pytorch_imports_it_itself_with_the_same_results(own_zygote):
    """A zygote started for tests that do not use PyTorch has not imported it; a test that does
    import it still gets exactly a started checker's results, only slower."""
    first = zygote.start_checker(zygote.ALWAYS_PRELOADED)
    assert (
        _printed(first, "import sys\nprint('torch' in sys.modules, 'numpy' in sys.modules)") == "False True\n"
    )
    first.close()
    forked = zygote.start_checker(zygote.ALWAYS_PRELOADED)
    assert isinstance(forked, zygote.ForkedChecker)
    namespace, names, tests = _lesson_namespace(nbgrader_source_notebook(LESSON))
    started = CheckerProcess()
    try:
        for code in tests:
            used = names & names_used(code)
            assert _run(forked, code, namespace, used) == _run(started, code, namespace, used)
    finally:
        started.close()
        forked.close()
