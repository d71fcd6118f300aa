"""Short, friendly error messages for students working through a lesson's exercises.

A lesson's first cell calls :func:`explain_exercise_errors`. From then on an error in the
notebook shows as a few lines instead of IPython's full traceback:

* an exercise still to write (its cell says ``raise NotImplementedError()``) names the exercise
  and says what to do, instead of a bare ``NotImplementedError:``;
* any other error shows its message, the line of *your* code it came from (library internals are
  left out), and for a test that wraps an error of your function, that error too;
* a name that is not defined yet gets a hint that an exercise above may still be to do.

``%tb`` still prints the full traceback. Nothing changes while nbgrader runs the notebook
(grading and the Validate button), so their reports keep nbgrader's own format.
"""

from __future__ import annotations

import linecache
import sys
import traceback
from types import TracebackType

from transformer_course.runtime import is_grading

RED, BOLD, RESET = "\x1b[31m", "\x1b[1m", "\x1b[0m"
STUB = "raise NotImplementedError()"


def explain_exercise_errors() -> None:
    """Show errors in this IPython kernel the short way (outside IPython, and while nbgrader runs
    the notebook, nothing changes)."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover (lessons always run in IPython)
        return
    shell = get_ipython()
    if shell is not None and not is_grading():
        shell.set_custom_exc((Exception,), _show_short_traceback)


def _show_short_traceback(shell, etype, value, tb, tb_offset=None) -> list[str]:
    """IPython's custom exception handler: display :func:`short_traceback`, keep ``%tb`` working."""
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
    shell._showtraceback(etype, value, short_traceback(value))
    return []


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


def _exercise_to_do(frames: list[traceback.FrameSummary]) -> list[str]:
    raised_in = frames[-1] if frames else None
    if raised_in is None or raised_in.name == "<module>":
        return [
            f"{RED}{BOLD}Exercise still to do{RESET}: write your answer in this cell in place of "
            f"`{STUB}`, then run the cell again.",
        ]
    return [
        f"{RED}{BOLD}Exercise still to do{RESET}: `{raised_in.name}` is not written yet. Replace "
        f"`{STUB}` in its cell with your code, run that cell, then run this one again.",
    ]


def short_traceback(error: BaseException) -> list[str]:
    """The lines shown for ``error``: its message and where in the notebook's code it arose."""
    frames = _notebook_frames(error.__traceback__)
    if isinstance(error, NotImplementedError) and not str(error):
        return _exercise_to_do(frames)
    lines = [_message(error)]
    if isinstance(error, NameError):
        lines.append(
            "  If it is the answer to an exercise above, write that exercise and run its cell first."
        )
    lines += _locations(frames)
    cause = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
    if cause is not None:
        lines.append("It arose from this error:")
        lines += ["  " + line for line in short_traceback(cause) if not line.startswith("(run %tb")]
    lines.append("(run %tb in a cell for the full traceback)")
    return lines
