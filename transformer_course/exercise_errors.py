"""Short, friendly messages for students working through a lesson's exercises.

A lesson's set-up cell calls :func:`explain_exercise_errors`. From then on, in this kernel:

* an exercise still to write (its cell says ``raise NotImplementedError()``), and every cell that
  needs it (its test, a demo calling the student's function, a cell using a value answer or a name
  such a cell did not get to define), prints one *Exercise still to do* line naming what is
  missing, and the cell counts as run, not failed. So Run All reaches the quiz everywhere, Colab
  included, where an error stops it (Colab ignores JupyterLab's ``raises-exception`` tag);
* any other error (a written but wrong answer, a typo) still fails the cell, shown as its message,
  the line of *your* code it came from (library internals are left out), and for a test that
  wraps an error of your function, that error too.

``%tb`` still prints the full traceback. While nbgrader runs the notebook every error fails its
cell as usual: an unwritten exercise raises, so the Validate button reports it and its tests score
zero. Under Validate (``NBGRADER_EXECUTION=validate``) the errors it lists are the short messages
above (for an unwritten exercise, its "still to do" line) instead of full tracebacks; autograding
changes nothing. Grades never depend on this module: when grading, test cells are judged by the
trusted checker outside the kernel (``course_build.checking``).
"""

from __future__ import annotations

import ast
import linecache
import os
import sys
import traceback
from collections.abc import Iterable
from types import TracebackType

from transformer_course.runtime import is_grading

RED, BOLD, RESET = "\x1b[31m", "\x1b[1m", "\x1b[0m"
STUB = "raise NotImplementedError()"
TO_DO = f"{RED}{BOLD}Exercise still to do{RESET}"


def explain_exercise_errors(answers: Iterable[str] = ()) -> None:
    """Show errors in this IPython kernel the short way and let Run All carry on past unwritten
    exercises; ``answers`` are the names that value exercises define (a stub leaves them
    undefined). Outside IPython and while nbgrader autogrades, nothing changes; under Validate the
    errors are short but every cell they stop still fails."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover (lessons always run in IPython)
        return
    shell = get_ipython()
    if shell is None:
        return
    validating = os.environ.get("NBGRADER_EXECUTION") == "validate"
    if is_grading() and not validating:
        return
    exercises = ExercisesToDo(answers, cells_fail=validating)
    shell.set_custom_exc((Exception,), exercises.show)
    callbacks = shell.events.callbacks["post_run_cell"]
    for earlier in [c for c in callbacks if isinstance(getattr(c, "__self__", None), ExercisesToDo)]:
        shell.events.unregister("post_run_cell", earlier)  # the set-up cell was run again
    shell.events.register("post_run_cell", exercises.carry_on)


class ExercisesToDo:
    """The kernel's memory of what unwritten exercises left missing, and its exception handler."""

    def __init__(self, answers: Iterable[str] = (), cells_fail: bool = False) -> None:
        self.answers = set(answers)
        self.cells_fail = cells_fail  # under Validate a cell stopped by an exercise still fails
        self.missing: dict[str, str] = {}  # name -> why it is not defined
        self._to_do: BaseException | None = None  # the error of the running cell, if it is a to-do

    def show(self, shell, etype, value, tb, tb_offset=None) -> list[str]:
        """IPython's custom exception handler: one "still to do" line for an unwritten exercise
        (on stdout, or as the cell's error under Validate), the short traceback for any other
        error; ``%tb`` keeps working."""
        sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
        to_do = self.to_do_message(value)
        if to_do is None:
            shell._showtraceback(etype, value, short_traceback(value))
            return []
        self._to_do = value
        if self.cells_fail:
            shell._showtraceback(etype, value, [to_do])
        else:
            print(to_do)
        return []

    def carry_on(self, result) -> None:
        """After each cell (IPython's ``post_run_cell`` event, before the kernel replies): a cell
        stopped only by an unwritten exercise counts as run (under Validate it still fails), and
        the names it would have defined are remembered as missing; a cell stopped by any other
        error fails, and its names are no longer blamed on an exercise."""
        error, self._to_do = self._to_do, None
        failed = getattr(result, "error_in_exec", None)
        if failed is None:
            return
        names = _names_bound(getattr(getattr(result, "info", None), "raw_cell", "") or "")
        if failed is not error:
            for name in names:
                self.missing.pop(name, None)
            return
        if not self.cells_fail:
            result.error_in_exec = None
        reason = _why_missing(error)
        self.missing |= dict.fromkeys(names, reason)

    def to_do_message(self, error: BaseException) -> str | None:
        """The "still to do" line for an error that an unwritten exercise explains, else None."""
        stub = _stub_error(error)
        if stub is not None:
            return _stub_message(stub)
        if isinstance(error, NameError):
            name = _missing_name(error)
            if name in self.answers:
                return (
                    f"{TO_DO}: `{name}` is not defined yet: it is the answer to an exercise above. "
                    "Write that exercise and run its cell, then run this one again."
                )
            if name in self.missing:
                return (
                    f"{TO_DO}: `{name}` is not defined yet: its cell stopped at {self.missing[name]}. "
                    "Write that exercise, run the cells from there, then run this one again."
                )
        return None


def _stub_error(error: BaseException) -> NotImplementedError | None:
    """The bare ``NotImplementedError()`` of a stub behind ``error``: the error itself, or one a
    test caught and turned into a message of its own (``raise AssertionError(...) from None`` keeps
    it as the context)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, NotImplementedError) and not str(current):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _raised_in(error: BaseException) -> traceback.FrameSummary | None:
    frames = _notebook_frames(error.__traceback__)
    return frames[-1] if frames else None


def _stub_message(stub: NotImplementedError) -> str:
    raised_in = _raised_in(stub)
    if raised_in is None or raised_in.name == "<module>":
        return f"{TO_DO}: write your answer in this cell in place of `{STUB}`, then run the cell again."
    return (
        f"{TO_DO}: `{raised_in.name}` is not written yet. Replace `{STUB}` in its cell with your "
        "code, run that cell, then run this one again."
    )


def _why_missing(error: BaseException) -> str:
    """What stopped a cell, for the names it did not get to define."""
    stub = _stub_error(error)
    raised_in = _raised_in(stub) if stub is not None else None
    if raised_in is not None and raised_in.name != "<module>":
        return f"`{raised_in.name}`, which is not written yet"
    if isinstance(error, NameError):
        return f"`{_missing_name(error)}`, which is not defined yet"
    return "an exercise still to do"


def _missing_name(error: NameError) -> str:
    name = getattr(error, "name", None)
    if name:
        return name
    parts = str(error).split("'")  # name 'x' is not defined
    return parts[1] if len(parts) > 2 else ""


def _names_bound(cell: str) -> set[str]:
    """Names a cell binds at its top level (assignments, loops, imports, functions, classes);
    a cell that is not plain Python (magics) binds none that this can see."""
    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(statement.name)
        elif isinstance(statement, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
        else:
            names |= {
                node.id
                for node in ast.walk(statement)
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)
            }
    return names


def _is_notebook_code(filename: str) -> bool:
    """Code typed into a cell: IPython keeps it in linecache under a name that is no real module
    (``/tmp/ipykernel_<pid>/<hash>.py`` in Jupyter, ``<ipython-input-…>`` in older IPython)."""
    return "ipykernel_" in filename or filename.startswith("<ipython-input")


def _notebook_frames(tb: TracebackType | None) -> list[traceback.FrameSummary]:
    return [frame for frame in traceback.extract_tb(tb) if _is_notebook_code(frame.filename)]


def _code(frame: traceback.FrameSummary) -> str:
    line = (frame.line or linecache.getline(frame.filename, frame.lineno or 0)).strip()
    return f":  {line}" if line else ""


def _place(frame: traceback.FrameSummary) -> str:
    if frame.name == "<module>":
        return f"at line {frame.lineno} of this cell"
    return f"in your function {frame.name}, line {frame.lineno}"


def _locations(frames: list[traceback.FrameSummary]) -> list[str]:
    """Where the error arose in the notebook's code and, if elsewhere, the line of this cell that
    led there; library frames are left out."""
    if not frames:
        return []
    innermost, outermost = frames[-1], frames[0]
    lines = [f"  {_place(innermost)}{_code(innermost)}"]
    if outermost is not innermost:
        lines.append(f"  called {_place(outermost)}{_code(outermost)}")
    return lines


def _message(error: BaseException) -> str:
    name = f"{RED}{BOLD}{type(error).__name__}{RESET}"
    return f"{name}: {error}" if str(error) else name


def short_traceback(error: BaseException) -> list[str]:
    """The lines shown for ``error``: its message and where in the notebook's code it arose (an
    unwritten exercise's stub: the one "still to do" line)."""
    if isinstance(error, NotImplementedError) and not str(error):
        return [_stub_message(error)]
    lines = [_message(error), *_locations(_notebook_frames(error.__traceback__))]
    cause = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
    if cause is not None:
        lines.append("It arose from this error:")
        lines += ["  " + line for line in short_traceback(cause) if not line.startswith("(run %tb")]
    lines.append("(run %tb in a cell for the full traceback)")
    return lines
