"""A loss curve that redraws while training runs (pass it as the trainer's callback).

It draws into an ``ipywidgets.HTML`` like every plot of the course, so the last picture stays
in the saved notebook; :meth:`LiveLossCurve.show_log` draws a finished run's log the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

import ipywidgets as widgets

from transformer_course.figures import figure_to_html, new_figure
from transformer_course.training import LogEntry


class LiveLossCurve:
    """Training loss against step, redrawn every ``redraw_every`` log entries."""

    def __init__(self, title: str = "training loss", redraw_every: int = 1) -> None:
        if redraw_every < 1:
            raise ValueError(f"redraw_every must be positive, got {redraw_every}")
        self.title = title
        self.redraw_every = redraw_every
        self.entries: list[LogEntry] = []
        self.view = widgets.HTML(value="<i>The curve appears after the first logged steps.</i>")

    def __call__(self, entry: LogEntry) -> None:
        self.entries.append(entry)
        if len(self.entries) % self.redraw_every == 0:
            self.redraw()

    def show_log(self, entries: Sequence[LogEntry]) -> None:
        """Replace the curve with a finished run's log (a loaded checkpoint's history)."""
        self.entries = list(entries)
        self.redraw()

    def redraw(self) -> None:
        if not self.entries:
            return
        fig = new_figure(width=6.0, height=3.2)
        ax = fig.add_subplot()
        ax.plot([e.step for e in self.entries], [e.loss for e in self.entries], marker=".")
        ax.set_xlabel("optimizer step")
        ax.set_ylabel("label-smoothed cross-entropy")
        last = self.entries[-1]
        ax.set_title(f"{self.title} (step {last.step}, loss {last.loss:.3f})")
        ax.grid(alpha=0.3)
        self.view.value = figure_to_html(fig, alt=f"{self.title} against optimizer step")

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.view)
