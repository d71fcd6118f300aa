"""The course's late policy: when a submission is late, by how much, and what that costs.

Set in the course's nbgrader configuration (``autograder/nbgrader_config.py``), all optional:

    c.LatePolicy.deadlines = {"03_attention": "2026-10-12T23:59"}   # per lesson
    c.LatePolicy.timezone = "Europe/Berlin"   # of deadlines without an offset and of zip times
    c.LatePolicy.grace_minutes = 15
    c.LatePolicy.penalty_per_day = 0.1        # a tenth of the lesson's points per started day
    c.LatePolicy.flat_penalty = 0.0           # a fraction taken from any late submission
    c.LatePolicy.max_penalty = 0.5            # never more than half the lesson's points

With no penalty configured (the default) lateness is still shown and costs nothing. A submission
is late when its time (the zip time stamp of the notebook graded, or the time the instructor gave
with ``--submitted-at``) is past the lesson's deadline
plus the grace period; where the deadline or the time is unknown, the LMS's own ``LATE_`` marker
decides, and only the flat penalty can apply (days late are unknown). A penalty never takes more
than the points earned, so a total is never negative.
"""

import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from traitlets import Dict, Float, Unicode
from traitlets.config import Configurable
from traitlets.config.loader import ConfigFileNotFound, PyFileConfigLoader


class LatePolicyError(ValueError):
    """The late policy in the course configuration cannot be applied as written."""


class LatePolicy(Configurable):
    """Deadlines and penalties, read from ``c.LatePolicy`` (see the module docstring)."""

    deadlines = Dict(
        value_trait=Unicode(),
        help="lesson -> deadline, ISO 8601: '2026-10-12T23:59' (in `timezone`) or with an offset",
    ).tag(config=True)
    timezone = Unicode("UTC", help="IANA time zone of deadlines without an offset and of zip times").tag(
        config=True
    )
    grace_minutes = Float(0.0, help="minutes after a deadline that still count as on time").tag(config=True)
    penalty_per_day = Float(0.0, help="fraction of a lesson's points per started day late").tag(config=True)
    flat_penalty = Float(0.0, help="fraction of a lesson's points taken from any late submission").tag(
        config=True
    )
    max_penalty = Float(1.0, help="the largest fraction of a lesson's points a penalty takes").tag(
        config=True
    )

    def check(self) -> None:
        """Raise LatePolicyError, saying what to write instead, for any setting that cannot work."""
        self.zone()
        for name in ("penalty_per_day", "flat_penalty", "max_penalty"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise LatePolicyError(
                    f"c.LatePolicy.{name} = {value!r}: write a fraction of the lesson's points "
                    "between 0 and 1 (0.1 is 10 %)"
                )
        if self.grace_minutes < 0:
            raise LatePolicyError(f"c.LatePolicy.grace_minutes = {self.grace_minutes!r} must not be negative")
        for lesson in self.deadlines:
            self.deadline(lesson)

    @property
    def has_penalty(self) -> bool:
        return self.penalty_per_day > 0 or self.flat_penalty > 0

    def zone(self) -> ZoneInfo:
        try:
            return ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise LatePolicyError(
                f"c.LatePolicy.timezone = {self.timezone!r} is not an IANA time zone "
                "(write e.g. 'UTC' or 'Europe/Berlin')"
            ) from None

    def local_time(self, text: str) -> datetime:
        """``text`` (ISO 8601) as an aware time; without an offset it is in ``timezone``."""
        moment = datetime.fromisoformat(text)
        return moment if moment.tzinfo else moment.replace(tzinfo=self.zone())

    def deadline(self, lesson: str) -> datetime | None:
        text = self.deadlines.get(lesson)
        if text is None:
            return None
        try:
            return self.local_time(text)
        except ValueError:
            raise LatePolicyError(
                f"c.LatePolicy.deadlines[{lesson!r}] = {text!r} is not a date and time: write it as "
                "'2026-10-12T23:59' (in c.LatePolicy.timezone) or '2026-10-12T23:59+02:00'"
            ) from None

    def describe(self) -> str:
        """The policy in words, for the grade sheet and the feedback."""
        if not self.has_penalty:
            return "no penalty for late submissions"
        parts = []
        if self.flat_penalty:
            parts.append(f"{self.flat_penalty:.0%} of the lesson's points")
        if self.penalty_per_day:
            parts.append(f"{self.penalty_per_day:.0%} per started day late")
        cap = f", at most {self.max_penalty:.0%}" if self.max_penalty < 1 else ""
        grace = f", after {self.grace_minutes:g} minutes' grace" if self.grace_minutes else ""
        return f"late submissions lose {' plus '.join(parts)}{cap}{grace}"


@dataclass(frozen=True)
class Lateness:
    """Whether one submission was late, by how much, and the fraction of the lesson's points it costs."""

    late: bool
    submitted_at: datetime | None
    days_late: int | None
    penalty_fraction: float
    notes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """``on time``, ``2 days late``, or ``late`` (marked by the LMS, days unknown)."""
        if not self.late:
            return "on time"
        if self.days_late is None:
            return "late"
        return f"{self.days_late} day{'s' if self.days_late != 1 else ''} late"


def assess(policy: LatePolicy, lesson: str, submitted_at: str | None, lms_late: bool) -> Lateness:
    """Apply ``policy`` to a submission of ``lesson`` made at ``submitted_at`` (zip time, local to
    the policy's time zone) that the LMS did or did not mark late."""
    deadline = policy.deadline(lesson)
    moment = policy.local_time(submitted_at) if submitted_at else None
    notes = []
    days = None
    if deadline is not None and moment is not None:
        overdue = moment - deadline - timedelta(minutes=policy.grace_minutes)
        late = overdue > timedelta(0)
        days = math.ceil(overdue / timedelta(days=1)) if late else 0
        if late != lms_late:
            marked = "late" if lms_late else "on time"
            notes.append(
                f"the LMS marked this submission {marked}, but by the deadline in the course "
                f"configuration it is {'late' if late else 'on time'}; check for an extension"
            )
    else:
        late = lms_late
        if late and policy.penalty_per_day:
            missing = (
                "no deadline for this lesson in c.LatePolicy.deadlines"
                if deadline is None
                else "no submission time known; give it with --submitted-at STUDENT=TIME"
            )
            notes.append(f"days late unknown ({missing}): the per-day penalty was not applied")
    fraction = 0.0
    if late:
        fraction = policy.flat_penalty + policy.penalty_per_day * (days or 0)
        fraction = min(fraction, policy.max_penalty)
    return Lateness(
        late=late,
        submitted_at=moment,
        days_late=days if late else None,
        penalty_fraction=fraction,
        notes=tuple(notes),
    )


def course_late_policy(course: Path) -> LatePolicy:
    """The late policy configured in ``course/nbgrader_config.py``, checked."""
    try:
        config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    except ConfigFileNotFound:
        raise LatePolicyError(f"{course} has no nbgrader_config.py: it is not a course directory") from None
    policy = LatePolicy(config=config)
    policy.check()
    return policy
