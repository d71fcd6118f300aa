"""Wall-clock budgets for grading, kept on the grader's side of the sandbox.

A per-call timeout alone lets a test cell that calls a slow student function thousands of times
(each call just under the limit) hold the batch for hours. So the grader also budgets the whole of
a test cell (every call into the kernel plus the checker's own work) and the whole notebook. A
test cell's budget sits inside its notebook's: whichever runs out first ends the cell. Every wait
of the grader asks its budget how long it may wait (``wait_s``), so no wait outlives a budget.
"""

import math
import time
from collections.abc import Callable


class TimeBudget:
    """Seconds that ``what`` (e.g. "this test cell") may still take, from when it was made."""

    def __init__(
        self,
        what: str,
        seconds: float,
        within: "TimeBudget | None" = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.what, self.seconds, self.within, self._clock = what, seconds, within, clock
        self._deadline = clock() + seconds

    def left(self) -> float:
        """Seconds left, of this budget and every budget it sits in (never negative)."""
        own = max(0.0, self._deadline - self._clock())
        return own if self.within is None else min(own, self.within.left())

    def spent(self) -> bool:
        return self.left() <= 0

    def wait_s(self, limit: float | None) -> float:
        """How long a wait limited to ``limit`` seconds (None: no limit of its own) may last."""
        return self.left() if limit is None else min(float(limit), self.left())

    def whole_seconds(self, limit: float | None) -> int:
        """``wait_s`` rounded up to whole seconds, at least 1 (for timeouts that take integers)."""
        return max(1, math.ceil(self.wait_s(limit)))

    def ran_out(self) -> str | None:
        """Which budget ran out, in words ("the notebook used up its time budget of 600 s"), or None.

        The enclosing budget is named first: when the notebook's time is up, that is what ended it."""
        enclosing = self.within.ran_out() if self.within is not None else None
        if enclosing is not None:
            return enclosing
        if self._deadline - self._clock() <= 0:
            return f"{self.what} used up its time budget of {self.seconds:g} s"
        return None
