"""How far a grading batch has got: student n of N, the time it took so far, an estimate of the rest.

A batch of 100 students takes minutes, and nbgrader says nothing until it ends, so the grading
commands show progress while ``nbgrader autograde`` runs. nbgrader's output is read only when it
has finished; progress is read instead from the graded notebooks it writes
(``autograded/<student>/<lesson>/<lesson>.ipynb``, one per student as each is done), polled by a
background thread. On a terminal it is a tqdm bar; elsewhere (a log file, CI, a pipe) one plain
line per finished student, so a log stays readable.
"""

import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from types import TracebackType
from typing import TextIO

from tqdm import tqdm


def clock(seconds: float) -> str:
    """Seconds as ``m:ss`` (or ``h:mm:ss`` from an hour)."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


FALLBACK_SIZE = os.terminal_size((100, 24))  # for a terminal that says 0 (a new pseudo-terminal)


def terminal_size(stream: TextIO) -> os.terminal_size:
    """The size of the terminal ``stream`` writes to, FALLBACK_SIZE's where it reports 0. tqdm
    reads a 0 x 0 terminal as -1 rows and hides its bar below them: nothing at all was shown."""
    try:
        columns, lines = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):  # no file descriptor, or not a terminal after all
        columns = lines = 0
    return os.terminal_size((columns or FALLBACK_SIZE.columns, lines or FALLBACK_SIZE.lines))


def progress_line(label: str, done: int, total: int, elapsed: float) -> str:
    """One plain line: ``03_attention: student 3 of 12 graded, 0:41 so far, about 1:50 left``."""
    line = f"{label}: student {done} of {total} graded, {clock(elapsed)} so far"
    if 0 < done < total:
        line += f", about {clock(elapsed / done * (total - done))} left"
    return line


class BatchProgress:
    """Shows ``done()`` of ``total`` students while the ``with`` block runs.

    ``done`` counts the students finished so far (it is called from a background thread every
    ``interval_s``); counts only ever go up on screen. Use ``update`` directly where nothing needs
    polling.
    """

    def __init__(
        self,
        label: str,
        total: int,
        done: Callable[[], int] | None = None,
        *,
        stream: TextIO | None = None,
        interval_s: float = 1.0,
    ) -> None:
        self.label, self.total, self._done = label, total, done
        self.stream = stream or sys.stdout
        self.interval_s = interval_s
        self.shown = 0
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar: tqdm | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> "BatchProgress":
        self._started = time.monotonic()
        if self.stream.isatty():
            size = terminal_size(self.stream)
            self._bar = tqdm(
                total=self.total,
                desc=f"{self.label}: student",
                unit="student",
                file=self.stream,
                ncols=size.columns,
                nrows=size.lines,
                bar_format="{desc} {n_fmt} of {total_fmt} |{bar}| {elapsed} so far, about {remaining} left",
            )
        if self._done is not None:
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()
        return self

    def _poll(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.update(self._done())

    def update(self, done: int) -> None:
        """Show that ``done`` students are finished (a smaller number than shown before is ignored)."""
        with self._lock:
            done = min(done, self.total)
            if done <= self.shown:
                return
            if self._bar is not None:
                self._bar.update(done - self.shown)
            else:
                elapsed = time.monotonic() - self._started
                print(progress_line(self.label, done, self.total, elapsed), file=self.stream, flush=True)
            self.shown = done

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            if kind is None:
                self.update(self._done())
        if self._bar is not None:
            self._bar.close()


def files_written_since(paths: Sequence[Path], since: float) -> int:
    """How many of ``paths`` exist and were written at or after ``since`` (a ``time.time()``)."""
    count = 0
    for path in paths:
        try:
            count += path.stat().st_mtime >= since
        except OSError:  # not written yet, or removed by nbgrader's --force just now
            pass
    return count


def watch_files(label: str, paths: Sequence[Path], *, enabled: bool = True) -> AbstractContextManager:
    """Progress of a batch that writes one file per student (``paths``), or nothing when not ``enabled``."""
    if not enabled:
        return nullcontext()
    since = time.time() - 1.0  # file systems round modification times
    return BatchProgress(label, len(paths), lambda: files_written_since(paths, since))
