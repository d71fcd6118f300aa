"""nbgrader's Execute step, hardened so one student's notebook can neither cheat nor stop the batch.

Stock nbgrader 0.9.6 runs every cell and scores a test cell by the absence of an error. Here:

* every test cell gets a last line calling ``course_build.kernel_guard.confirm`` with a one-time
  token; a test cell whose token does not show up (its code was rewritten or skipped, a failure
  was swallowed, a helper it relies on was replaced) gets an error and so scores zero;
* the kernel starts with a memory cap, so a huge allocation is a MemoryError in one cell;
* a cell that cannot be interrupted after the timeout, or that kills the kernel (``os._exit``,
  a crash), gets an error; the kernel is restarted and the earlier cells are replayed so the
  rest of the notebook is graded on its merits instead of the whole student failing;
* each such event leaves a note for the instructor in the notebook's metadata.
"""

import copy
import secrets

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbformat import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Float, Integer

from course_build.grader_notes import add_note, is_test_cell
from course_build.kernel_guard import TOKEN_MIMETYPE


def _error_output(ename: str, evalue: str) -> NotebookNode:
    return NotebookNode(output_type="error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def _confirm_line(token: str) -> str:
    return f'\n__import__("course_build.kernel_guard").kernel_guard.confirm("{token}")'


class GuardedExecute(Execute):
    """Execute a submission with integrity tokens on test cells and recovery from dead kernels."""

    memory_limit_gib = Float(4.0, help="Memory cap of the grading kernel (0: none).").tag(config=True)
    max_restarts = Integer(
        3, help="Kernel restarts per notebook before the remaining cells are given up."
    ).tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        limit = int(self.memory_limit_gib * 2**30)
        start = f'__import__("course_build.kernel_guard").kernel_guard.start({limit})'
        self.extra_arguments = [
            *[a for a in self.extra_arguments if not a.startswith("--IPKernelApp.exec_lines")],
            f"--IPKernelApp.exec_lines={start}",
        ]
        self._restarts = 0
        self._given_up = False
        self._lost: set[int] = set()
        return super().preprocess(nb, resources, km)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        if self._given_up:
            cell.outputs = [_error_output("NotRun", "not run: the kernel kept dying or hanging earlier")]
            return cell, resources
        token = secrets.token_hex(16) if is_test_cell(cell) else None
        original = cell.source
        if token:
            cell.source = original + _confirm_line(token)
        failure = None
        try:
            self.execute_cell(cell, index, store_history=True)
        except CellTimeoutError:
            failure = _error_output(
                "CellTimeoutError", f"the cell ran past {self.timeout} s and ignored the interrupt"
            )
        except DeadKernelError:
            failure = _error_output(
                "DeadKernelError", "the kernel died in this cell (os._exit, a crash or no memory left)"
            )
        finally:
            cell.source = original
        label = cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell {index}"
        if failure is not None:
            cell.outputs.append(failure)
            add_note(self.nb, f"{label}: {failure.evalue}; the kernel was restarted")
            self._lost.add(index)
            self._recover(index)
        elif any(o.get("ename") == "CellTimeoutError" for o in cell.outputs):
            add_note(self.nb, f"{label}: interrupted after {self.timeout} s (an endless loop?)")
        elif any(o.get("ename") == "MemoryError" for o in cell.outputs):
            add_note(self.nb, f"{label}: ran out of memory (the cap is {self.memory_limit_gib:g} GiB)")
        if token:
            self._check_token(cell, token, label)
        return cell, self.resources

    def _check_token(self, cell: NotebookNode, token: str, label: str) -> None:
        """Drop the token output; a test that shows neither its token nor an error gets one."""
        shown = [o for o in cell.outputs if TOKEN_MIMETYPE in o.get("data", {})]
        cell.outputs = [o for o in cell.outputs if TOKEN_MIMETYPE not in o.get("data", {})]
        failed = any(o.output_type == "error" for o in cell.outputs)
        if failed:
            integrity = [o for o in cell.outputs if o.get("ename") == "GradingIntegrityError"]
            if integrity:
                add_note(self.nb, f"{label}: {integrity[0].evalue}")
            return
        if not any(o["data"][TOKEN_MIMETYPE] == token for o in shown):
            evalue = "this test cell did not run to its end as written (its code was altered or skipped)"
            cell.outputs.append(_error_output("GradingIntegrityError", evalue))
            add_note(self.nb, f"{label}: {evalue}")

    def _recover(self, failed_index: int) -> None:
        """Restart the kernel and replay the cells before ``failed_index`` (outputs discarded)."""
        self._restarts += 1
        if self._restarts > self.max_restarts:
            self._given_up = True
            return
        run_sync(self._restart)()
        for index, earlier in enumerate(self.nb.cells[:failed_index]):
            if earlier.cell_type != "code" or index in self._lost:
                continue
            try:
                self.execute_cell(copy.deepcopy(earlier), index, store_history=False)
            except (CellTimeoutError, DeadKernelError):
                self._given_up = True
                return

    async def _restart(self) -> None:
        await ensure_async(self.km.restart_kernel(now=True))
        await ensure_async(self.kc.wait_for_ready(timeout=self.startup_timeout))
