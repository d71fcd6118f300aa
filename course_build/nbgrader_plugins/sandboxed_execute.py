"""nbgrader's Execute step for this course: the notebook runs sandboxed, test cells are judged outside it.

``SandboxedExecute`` replaces nbgrader's ``Execute`` in ``c.Autograde.autograde_preprocessors`` (see
``autograder/nbgrader_config.py``), so it applies to ``nbgrader autograde`` however it is started.

* The kernel runs in a bubblewrap sandbox on a private copy of the one submission
  (``course_build.nbgrader_plugins.sandbox``). Where the sandbox cannot run, grading stops with an
  error unless the instructor set ``unsandboxed`` (``python -m course_build.grade --unsandboxed``);
  every notebook graded that way carries a note saying its grade is unprotected.
* The student's cells, and the course cells they need, run in the kernel, in order; the course's
  demonstrations that no answer needs are skipped (``course_build.nbgrader_plugins.grading_plan``;
  ``run_every_cell`` runs them too).
* Test cells never run in the kernel. Each is executed by the trusted checker
  (``course_build.checking.checker``) with the lesson's solution names bound to the kernel's values and
  functions; the checker's printed output and its failure become the cell's outputs, so nbgrader's
  own scoring (an error output scores zero) and feedback work unchanged. Output the student's code
  writes to stderr during a passing test is shown as ordinary output and noted, not penalized.
* A cell that runs past the timeout, or kills the kernel, gets an error; the kernel is restarted and
  the earlier cells replayed so the rest of the notebook is graded on its merits. Output beyond a
  limit per cell is dropped. At the end, the kernel reports what the notebook changed that tests
  might rely on (replaced numpy functions, IPython hooks, processes left running): notes for the
  instructor that cost no points.
* Time is budgeted here, outside the sandbox (``course_build.nbgrader_plugins.time_budget``): each
  call into the kernel (``Execute.timeout``; a batch or a repetition of calls gets that much per
  call), each test cell in all (``test_cell_budget``: its calls plus the checker's work; past it
  the cell fails and the notebook goes on) and the notebook in all (``notebook_budget``: past it
  the remaining cells fail as not run). The notebook is always finished, and the run is marked finished in the
  grader's notes, so a run that was killed is told apart from one that ended
  (``course_build.instructor.grade_batch`` regrades it once).

Notes go to the grader's own store (``course_build.grader_notes``), never the notebook's metadata.
"""

import copy
import json
import os

import nbformat
from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbformat import NotebookNode
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import Execute
from traitlets import Bool, Float, Integer, default

from course_build.cell_roles import grade_id, is_test_cell
from course_build.checking import wire
from course_build.checking.checker import CheckerGone, CheckerProcess, names_used
from course_build.checking.zygote import modules_to_preload, start_checker
from course_build.grader_notes import UNPROTECTED_NOTE
from course_build.nbgrader_plugins.grading_plan import cells_to_skip
from course_build.nbgrader_plugins.kernel_session import KernelSession
from course_build.nbgrader_plugins.run_notes import notes_for
from course_build.nbgrader_plugins.sandbox import SandboxedKernelManager, sandbox_problem
from course_build.nbgrader_plugins.time_budget import TimeBudget
from course_build.test_cells import solution_names

CHECKER_GRACE_S = 2.0  # for the checker to report a test whose time budget ran out


class SandboxUnavailable(RuntimeError):
    """bubblewrap cannot run here and the instructor did not allow grading without it."""


def _error(ename: str, evalue: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def _stream(text: str) -> NotebookNode:
    return NotebookNode(output_type="stream", name="stdout", text=text)


class SandboxedExecute(Execute):
    """Execute a submission in a sandbox, judging its test cells in the trusted checker."""

    unsandboxed = Bool(
        False,
        help="Run kernels without the bubblewrap sandbox. Grades are then unprotected; use only where "
        "bubblewrap cannot run, and never for a class that has an incentive to cheat.",
    ).tag(config=True)
    max_restarts = Integer(3, help="Kernel restarts per notebook before the rest is given up.").tag(
        config=True
    )
    checker_timeout = Integer(
        600, help="Seconds the checker may work on one test cell between two calls into the kernel."
    ).tag(config=True)
    max_output_bytes = Integer(2_000_000, help="Output kept per cell; the rest is dropped.").tag(config=True)
    test_cell_budget = Float(
        300,
        help="Seconds one test cell may take in all (every call into the notebook plus the checker's "
        "own work); past it the cell fails and the rest of the notebook is graded.",
    ).tag(config=True)
    notebook_budget = Float(
        1200,
        help="Seconds one notebook may take in all; past it the remaining cells fail as not run.",
    ).tag(config=True)
    run_every_cell = Bool(
        False,
        help="Run the course's demonstrations too (worked examples, plots, widgets, studies) instead "
        "of skipping those no answer needs (course_build.nbgrader_plugins.grading_plan); slower, "
        "and the verdicts are the same.",
    ).tag(config=True)

    @default("shutdown_kernel")
    def _kill_the_kernel_when_graded(self) -> str:
        """nbclient's ``shutdown_kernel``, 'immediate' here: killing the kernel once the last cell
        is judged spares its exit bookkeeping (IPython's history and a last garbage collection:
        about 0.1 s of CPU per notebook with PyTorch loaded), and no code of the student's (an
        atexit hook) runs after grading."""
        return "immediate"

    def create_kernel_manager(self):
        if self.unsandboxed:
            self.km = AsyncKernelManager(kernel_name="python3", config=self.config)
            return self.km
        self.km = SandboxedKernelManager(config=self.config)
        problem = sandbox_problem(self.km.bwrap)
        if problem:
            raise SandboxUnavailable(
                f"the grading sandbox cannot run here: {problem}. Install bubblewrap "
                "(apt-get install bubblewrap), or grade without protection with --unsandboxed "
                "(SandboxedExecute.unsandboxed = True)"
            )
        return self.km

    def preprocess(self, nb, resources=None, km=None):
        startup = f"--IPKernelApp.exec_lines={wire.kernel_startup_line()}"
        self.extra_arguments = [
            *[a for a in self.extra_arguments if not a.startswith("--IPKernelApp.exec_lines")],
            startup,
        ]
        source = self._source_notebook(resources)
        self._names = solution_names(source.cells)
        self._skipped = set() if self.run_every_cell else cells_to_skip(source.cells, nb.cells)
        if self._skipped:
            self.log.info("Skipping %d course cells that no answer needs", len(self._skipped))
        self._notes = notes_for(self, resources)
        self._notebook_budget = TimeBudget("the notebook", self.notebook_budget)
        # every cell the kernel runs (replays included) stops when the notebook's time is up
        self.timeout_func = lambda cell: self._notebook_budget.whole_seconds(self.timeout or None)
        # started now, so that it loads while the kernel starts; restarted if it ever fails
        self._preload = modules_to_preload(c.source for c in source.cells if is_test_cell(c))
        has_tests = any(map(is_test_cell, nb.cells))
        self._checker: CheckerProcess | None = start_checker(self._preload) if has_tests else None
        self._restarts, self._given_up, self._lost = 0, "", set()
        self._stderr_cells: list[str] = []
        self._output_left, self._output_cut = self.max_output_bytes, False
        try:
            nb, resources = super().preprocess(nb, resources, km)
        finally:
            if self._checker is not None:
                self._checker.close()
        if self._stderr_cells:
            cells = ", ".join(dict.fromkeys(self._stderr_cells))
            self._notes.add(f"passing tests wrote to stderr, not penalized ({cells})")
        if self.unsandboxed:
            self._notes.add(UNPROTECTED_NOTE)
        self._notes.mark_finished()
        return nb, resources

    def _source_notebook(self, resources: dict) -> NotebookNode:
        """The lesson's nbgrader source notebook: the trusted copy, which says what the solution
        cells define (the gradebook keeps only the released stubs, which lack the names of value
        answers) and which cells are the course's own."""
        coursedir = CourseDirectory(config=self.config)
        info = resources["nbgrader"]
        folder = coursedir.format_path(coursedir.source_directory, ".", info["assignment"])
        return nbformat.read(os.path.join(folder, f"{info['notebook']}.ipynb"), as_version=4)

    # --- cells -------------------------------------------------------------------------------

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code":
            label = grade_id(cell) or f"cell {index}"
            self._output_left, self._output_cut = self.max_output_bytes, False
            if not self._given_up and self._notebook_budget.spent():
                self._give_up(self._notebook_budget.ran_out())
            if self._given_up:
                cell.outputs = [_error("NotRun", f"not run: {self._given_up}")]
            elif index in self._skipped:
                cell.outputs, cell.execution_count = [], None
            elif is_test_cell(cell):
                self._run_test_cell(cell, index, label)
            else:
                self._run_kernel_cell(cell, index, label)
            if self._output_cut:
                cell.outputs.append(
                    _stream(f"\n[the grader dropped output beyond {self.max_output_bytes} bytes]\n")
                )
                self._notes.add(f"{label}: output beyond {self.max_output_bytes} bytes was dropped")
        if index == len(self.nb.cells) - 1 and not self._given_up and not self._notebook_budget.spent():
            self._report_suspicious_changes(index)
        return cell, self.resources

    def _run_kernel_cell(self, cell: NotebookNode, index: int, label: str) -> None:
        failure = None
        try:
            self.execute_cell(cell, index, store_history=True)
        except CellTimeoutError:
            failure = "the cell ran past its time and ignored the interrupt"
        except DeadKernelError:
            failure = f"the kernel {self._how_the_kernel_died()} in this cell"
        if failure is not None:
            cell.outputs.append(
                _error("CellTimeoutError" if "ran past" in failure else "DeadKernelError", failure)
            )
            self._notes.add(f"{label}: {failure}; the kernel was restarted")
            self._lost.add(index)
            self._recover(index)
        elif any(o.get("ename") == "CellTimeoutError" for o in cell.outputs):
            endless = "" if self._notebook_budget.spent() else " (an endless loop?)"
            self._notes.add(f"{label}: {self._interrupted()}{endless}")
        elif any(o.get("ename") == "MemoryError" for o in cell.outputs):
            self._notes.add(f"{label}: ran out of memory")

    def _run_test_cell(self, cell: NotebookNode, index: int, label: str) -> None:
        judged = _Judged()
        budget = TimeBudget("this test cell", self.test_cell_budget, within=self._notebook_budget)
        try:
            if self._checker is None:
                self._checker = start_checker(self._preload)
            names = sorted(self._names & names_used(cell.source))
            self._checker.send({"op": "run", "code": cell.source, "names": names})
            run_sync(self._judge)(judged, index, budget)
        except CheckerGone as gone:
            if self._checker is not None:
                self._checker.process.kill()  # it may be busy: waiting for it would spend more time
                self._checker.close()
            self._checker = None
            if budget.ran_out():
                judged.error = {"ename": "TimeoutError", "evalue": budget.ran_out()}
            else:
                self._notes.add(f"{label}: the grader's checker failed ({gone}); the cell scores zero")
                judged.error = {
                    "ename": "GradingError",
                    "evalue": "the grader could not run this test; tell your instructor",
                }
        if judged.error is not None:
            judged.outputs.append(
                _error(str(judged.error.get("ename", "Error")), str(judged.error.get("evalue", "")))
            )
        elif judged.wrote_stderr:
            self._stderr_cells.append(label)
        cell.outputs, cell.execution_count = _coalesce(judged.outputs), None
        judged.ran_out = budget.ran_out()
        if judged.ran_out:
            self._notes.add(f"{label}: {judged.ran_out}; the cell fails")
        self._after_session(judged, index, label)

    async def _judge(self, judged: "_Judged", index: int, budget: TimeBudget) -> None:
        """Relay the checker's requests to a kernel session until the checker is done or ``budget``
        runs out (then every later request is answered with a timeout, and the test fails)."""
        session: KernelSession | None = None
        try:
            while True:
                # once the budget is spent, the checker has a moment to report the failed test
                wait_s = CHECKER_GRACE_S if budget.spent() else budget.wait_s(self.checker_timeout)
                message = self._checker.receive(wait_s)
                if message.get("op") == "kernel" and isinstance(message.get("request"), dict):
                    request = message["request"]
                    judged.add_printed(request.pop("printed", None))
                    if not budget.spent() and session is None:
                        session = await self._start_session(index, budget)
                    reply = await self._ask_within(session, request, budget)
                    if session is not None:
                        judged.add_kernel_outputs(session.take_outputs())
                    self._checker.send({"op": "reply", "reply": reply})
                elif message.get("op") == "done":
                    judged.add_printed(message.get("printed"))
                    judged.error = message.get("error")
                    return
                else:
                    raise CheckerGone(f"the checker sent an unexpected message {str(message)[:80]}")
        finally:
            if session is not None:
                judged.stopped = await session.end()
                judged.add_kernel_outputs(session.take_outputs())
                judged.failure = session.failure

    async def _ask_within(self, session: KernelSession | None, request: dict, budget: TimeBudget) -> dict:
        """The kernel's reply to ``request``, waiting no longer than ``budget`` allows; a timeout
        that the budget caused says so."""
        if session is None or budget.spent():
            return {"status": "timeout", "message": budget.ran_out()}
        per_call = self.timeout or None
        if per_call is not None:  # a batch has each call's time
            per_call *= _calls_in(request)
        session.call_timeout = budget.wait_s(per_call)
        reply = await session.ask(request)
        if reply.get("status") == "timeout" and budget.ran_out():
            return {"status": "timeout", "message": budget.ran_out()}
        return reply

    async def _start_session(self, index: int, budget: TimeBudget) -> KernelSession:
        session = KernelSession(
            self, index, call_timeout=budget.wait_s(self.timeout or None), grace=self._grace_s()
        )
        await session.start()
        return session

    def _grace_s(self) -> float:
        """How long a kernel may take to stop serving: a call's time, while the notebook has it."""
        return max(5.0, self._notebook_budget.wait_s(self.timeout or None))

    def _how_the_kernel_died(self) -> str:
        """Why the kernel that just died died, as far as the grader can tell: its cgroup counts a
        kill for memory (``memory.events``' ``oom_kill``), distinct from a crash or ``os._exit``."""
        killed = self.km.killed_for_memory() if isinstance(self.km, SandboxedKernelManager) else None
        if killed:
            return (
                f"was killed for using more than its memory limit of {self.km.memory_limit_gib:g} GiB "
                "(its cgroup's out-of-memory killer)"
            )
        if killed is None:
            return "died (os._exit, a crash or no memory left)"
        return "died (os._exit, a crash or a signal; not for memory: its cgroup saw no out-of-memory kill)"

    def _interrupted(self) -> str:
        """How the time of a cell or call ran out, in words."""
        over = self._notebook_budget.ran_out()
        return f"interrupted after {self.timeout} s" if over is None else f"interrupted: {over}"

    def _after_session(self, judged: "_Judged", index: int, label: str) -> None:
        """Notes on a session that failed; a kernel that did not stop serving is restarted."""
        status = (judged.failure or {}).get("status")
        if status == "dead":
            self._note_and_recover(index, label, f"the kernel {self._how_the_kernel_died()} during a call")
        elif status == "timeout" and judged.stopped:
            if not judged.ran_out:  # noted already
                self._notes.add(f"{label}: a call into the notebook was {self._interrupted()}")
        elif status == "timeout":
            self._note_and_recover(
                index, label, "a call into the notebook ran past its time and ignored the interrupt"
            )
        elif not judged.stopped:
            self._note_and_recover(index, label, "the kernel did not stop answering the grader")

    # --- the kernel -----------------------------------------------------------------------------

    def _run_quietly(self, cell: NotebookNode, index: int) -> None:
        """Execute ``cell`` in the kernel without recording it in the notebook or its counters."""
        saved, count = self.nb.cells[index], self.code_cells_executed
        try:
            self.execute_cell(cell, index, store_history=False)
        finally:
            self.nb.cells[index], self.code_cells_executed = saved, count

    async def _ask_once(self, request: dict, index: int) -> dict:
        session = await self._start_session(index, self._notebook_budget)
        try:
            return await session.ask(request)
        finally:
            await session.end()

    def _report_suspicious_changes(self, index: int) -> None:
        reply = run_sync(self._ask_once)({"op": "report"}, index)
        notes = reply.get("notes")
        if not isinstance(notes, list):
            self._notes.add(
                "the kernel's report of suspicious changes could not be read (no points deducted)"
            )
            return
        for note in notes[:20]:
            self._notes.add(f"suspicious, no points deducted: {str(note)[:200]}")

    def output(self, outs, msg, display_id, cell_index):
        """Keep at most ``max_output_bytes`` of each cell's output."""
        content = msg.get("content", {})
        data = content.get("data") or {}
        size = len(content.get("text", "")) + sum(len(json.dumps(value)) for value in data.values())
        self._output_left -= size
        if self._output_left < 0:
            self._output_cut = True
            return None
        return super().output(outs, msg, display_id, cell_index)

    def _note_and_recover(self, index: int, label: str, what: str) -> None:
        self._notes.add(f"{label}: {what}; the kernel was restarted")
        self._recover(index)

    def _give_up(self, why: str) -> None:
        self._given_up = why
        self._notes.add(f"{why}; the cells after it were not run")

    def _recover(self, failed_index: int) -> None:
        """Restart the kernel and replay the code cells before ``failed_index`` (outputs discarded)."""
        self._restarts += 1
        if self._restarts > self.max_restarts:
            self._give_up("the kernel kept dying or hanging")
            return
        run_sync(self._restart)()
        for index, earlier in enumerate(self.nb.cells[:failed_index]):
            if earlier.cell_type != "code" or index in self._lost | self._skipped or is_test_cell(earlier):
                continue
            if self._notebook_budget.spent():
                self._give_up(self._notebook_budget.ran_out())
                return
            try:
                self._run_quietly(copy.deepcopy(earlier), index)
            except (CellTimeoutError, DeadKernelError):
                self._give_up("the kernel kept dying or hanging")
                return

    async def _restart(self) -> None:
        await ensure_async(self.km.restart_kernel(now=True))
        await ensure_async(self.kc.wait_for_ready(timeout=self.startup_timeout))


class _Judged:
    """What judging one test cell produced: its outputs in order, its error, the session's fate."""

    def __init__(self) -> None:
        self.outputs: list[NotebookNode] = []
        self.wrote_stderr = False
        self.error: dict | None = None
        self.failure: dict | None = None
        self.stopped = True
        self.ran_out: str | None = None  # the time budget that ended the cell, in words

    def add_printed(self, streams: object) -> None:
        """The test's own printed output, as the checker reported it."""
        if isinstance(streams, dict):
            for name in ("stdout", "stderr"):
                text = streams.get(name)
                if isinstance(text, str) and text:
                    self.outputs.append(_stream(text))
                    self.wrote_stderr |= name == "stderr"

    def add_kernel_outputs(self, outputs: list[NotebookNode]) -> None:
        """What the student's code printed during the calls (its errors are the checker's to judge)."""
        for output in outputs:
            if output.output_type == "stream":
                self.wrote_stderr |= output.get("name") == "stderr"
                self.outputs.append(_stream(output.text))
            elif output.output_type != "error":
                self.outputs.append(output)


def _calls_in(request: dict) -> int:
    """How many calls of a student's function one request to the kernel makes (at least one)."""
    if request.get("op") == "call_many" and isinstance(request.get("calls"), list):
        return max(1, len(request["calls"]))
    if request.get("op") == "call_repeatedly" and type(request.get("times")) is int:
        return max(1, min(request["times"], wire.MAX_REPEATS))
    return 1


def _coalesce(outputs: list[NotebookNode]) -> list[NotebookNode]:
    """Consecutive stdout streams merged into one output, as Jupyter shows them."""
    merged: list[NotebookNode] = []
    for output in outputs:
        if output.output_type == "stream" and merged and merged[-1].output_type == "stream":
            merged[-1].text += output.text
        else:
            merged.append(output)
    return merged
