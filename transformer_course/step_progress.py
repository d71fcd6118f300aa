"""Progress of a loop that stops at a step count or at a time budget, whichever comes first.

Training in lessons 9 and 10 runs for minutes. A bar sized to the step count alone lies when the
time budget stops the run first: its estimate assumes every step will run, and it ends unfinished
with no word of why. So the bar here is sized to what will really run (the steps left, or the
steps that fit in the time left at the rate measured so far, whichever is fewer), and the run ends
with one line saying where it stopped and why.

In a notebook kernel (JupyterLab's ipywidgets 8, Colab's ipywidgets 7) the bar is a widget that
redraws in place; elsewhere (a terminal, a log, a test) it is a plain line every ``every_s``
seconds, so a log never floods.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Protocol, TextIO


def clock(seconds: float) -> str:
    """Seconds as ``m:ss`` (or ``h:mm:ss`` from an hour)."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def expected_final_step(
    step: int, target: int, steps_run: int, elapsed_s: float, time_budget_s: float | None
) -> int:
    """The step the run will stop at: ``target``, or earlier when the time budget runs out first.

    ``steps_run`` steps took ``elapsed_s`` in this call; the rest of the budget is assumed to go
    at the same rate. Before anything is measured the estimate is ``target``.
    """
    if time_budget_s is None or steps_run == 0 or elapsed_s <= 0:
        return target
    time_left = max(time_budget_s - elapsed_s, 0.0)
    return max(step, min(target, step + int(steps_run / elapsed_s * time_left)))


def status_text(
    label: str,
    step: int,
    final_step: int,
    target: int,
    elapsed_s: float,
    steps_run: int,
    detail: str = "",
    unit: str = "step",
) -> str:
    """One status line, e.g. ``training: step 230 of 460 (of 1,200; the time limit ends it first),
    1:10 so far, about 1:10 left; loss 3.2``."""
    text = f"{label}: {unit} {step:,} of {final_step:,}"
    if final_step < target:
        text += f" (of {target:,}; the time limit ends it first)"
    text += f", {clock(elapsed_s)} so far"
    if 0 < steps_run and step < final_step:
        text += f", about {clock(elapsed_s / steps_run * (final_step - step))} left"
    return f"{text}{'; ' + detail if detail else ''}"


def stop_line(
    label: str,
    step: int,
    target: int,
    elapsed_s: float,
    time_budget_s: float | None,
    interrupted: bool,
    unit: str = "step",
    reason: str | None = None,
) -> str:
    """The last line of a run: where it stopped and why (``reason``, when the loop knows one)."""
    if interrupted:
        return f"{label}: interrupted at {unit} {step:,} of {target:,} after {clock(elapsed_s)}."
    if step >= target:
        return f"{label}: finished all {target:,} {unit}s in {clock(elapsed_s)}."
    if reason is not None:
        return (
            f"{label}: stopped at {unit} {step:,} of at most {target:,} because {reason}, "
            f"after {clock(elapsed_s)}."
        )
    if time_budget_s is None or elapsed_s < time_budget_s:
        return f"{label}: stopped at {unit} {step:,} of {target:,} after {clock(elapsed_s)}."
    return (
        f"{label}: stopped at {unit} {step:,} of {target:,} because the {time_budget_s:.0f} s time "
        f"limit was reached (time_budget_s in the settings; None trains every step)."
    )


class ProgressView(Protocol):
    """Where progress is shown: ``show`` while running, ``finish`` once at the end."""

    def show(self, step: int, final_step: int, text: str) -> None: ...

    def finish(self, step: int, text: str, complete: bool) -> None: ...


class TextView:
    """Plain lines: the first, then at most one every ``every_s`` seconds, then the stop line."""

    def __init__(
        self,
        stream: TextIO | None = None,
        every_s: float = 15.0,
        clock_s: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream or sys.stdout
        self.every_s = every_s
        self.clock_s = clock_s
        self.last_shown: float | None = None

    def show(self, step: int, final_step: int, text: str) -> None:
        now = self.clock_s()
        if self.last_shown is None or now - self.last_shown >= self.every_s:
            print(text, file=self.stream, flush=True)
            self.last_shown = now

    def finish(self, step: int, text: str, complete: bool) -> None:
        print(text, file=self.stream, flush=True)


class WidgetView:
    """A progress bar and a status line, drawn with the ipywidgets API common to versions 7 and 8.

    Updates reach the browser at most every ``every_s`` seconds; the stop line is printed as text
    too, so it stays in the saved notebook and in plain (widget-less) execution.
    """

    def __init__(self, every_s: float = 0.25, clock_s: Callable[[], float] = time.monotonic) -> None:
        import ipywidgets as widgets
        from IPython.display import display

        self.bar = widgets.IntProgress(value=0, min=0, max=1, layout=widgets.Layout(width="40%"))
        self.label = widgets.Label(value="starting")
        self.view = widgets.HBox([self.bar, self.label])
        self.every_s = every_s
        self.clock_s = clock_s
        self.last_shown: float | None = None
        display(self.view)

    def show(self, step: int, final_step: int, text: str) -> None:
        now = self.clock_s()
        if self.last_shown is not None and now - self.last_shown < self.every_s:
            return
        self.last_shown = now
        self.bar.max = max(final_step, 1)
        self.bar.value = min(step, self.bar.max)
        self.label.value = text

    def finish(self, step: int, text: str, complete: bool) -> None:
        self.bar.max = max(step, 1)
        self.bar.value = step
        self.bar.bar_style = "success" if complete else "warning"
        self.label.value = text
        print(text, flush=True)


def in_notebook_kernel() -> bool:
    """True inside a Jupyter kernel (JupyterLab, Colab, nbclient), where widgets can be shown."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and hasattr(shell, "kernel")


def default_view() -> ProgressView:
    return WidgetView() if in_notebook_kernel() else TextView()


class StepProgress:
    """Progress of steps ``start_step`` .. ``target`` under an optional time budget (seconds).

    ``unit`` names what is counted in the lines shown (``step``, ``sentence``). Create it before
    the loop takes its own start time: its elapsed time is then never below the loop's, so a loop
    that its budget stopped is always said to have reached the time limit.

    Call :meth:`advance` after each step and :meth:`close` when the loop ends, also when an
    exception ends it (``interrupted``). Disabled, it shows nothing.
    """

    def __init__(
        self,
        label: str,
        target: int,
        start_step: int = 0,
        time_budget_s: float | None = None,
        enabled: bool = True,
        view: ProgressView | None = None,
        clock_s: Callable[[], float] = time.perf_counter,
        unit: str = "step",
    ) -> None:
        self.label, self.target, self.start_step, self.unit = label, target, start_step, unit
        self.step = start_step
        self.time_budget_s = time_budget_s
        self.clock_s = clock_s
        self.started = clock_s()
        self.view = (view or default_view()) if enabled else None

    @property
    def elapsed_s(self) -> float:
        return self.clock_s() - self.started

    def advance(self, step: int, detail: str = "") -> None:
        """Record that ``step`` steps are done in all; ``detail`` joins the status (the loss)."""
        self.step = step
        if self.view is None:
            return
        elapsed, steps_run = self.elapsed_s, step - self.start_step
        final = expected_final_step(step, self.target, steps_run, elapsed, self.time_budget_s)
        text = status_text(self.label, step, final, self.target, elapsed, steps_run, detail, self.unit)
        self.view.show(step, final, text)

    def close(self, interrupted: bool = False, reason: str | None = None) -> None:
        """Show the stop line: finished, stopped early for ``reason`` or by the time limit, or
        ``interrupted`` (an error)."""
        if self.view is None:
            return
        line = stop_line(
            self.label,
            self.step,
            self.target,
            self.elapsed_s,
            self.time_budget_s,
            interrupted,
            self.unit,
            reason,
        )
        complete = (self.step >= self.target or reason is not None) and not interrupted
        self.view.finish(self.step, line, complete=complete)
