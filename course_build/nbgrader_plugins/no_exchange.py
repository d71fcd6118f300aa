"""nbgrader's exchange for a course that does not use one (named in ``autograder/nbgrader_config.py``).

Submissions reach this course as LMS downloads (``python -m course_build.grade``), so nbgrader's
exchange directory, through which JupyterHub students fetch and submit, does not exist. With the
stock exchange the formgrader then shows a warning that the exchange directory is missing, which
is irrelevant here. These classes take its place: listing finds nothing (no warning), and any
attempt to release, collect, fetch or submit through an exchange fails with a message that says
how this course moves files and how to switch the exchange back on for a JupyterHub class.
"""

from nbgrader.exchange import abc

EXPLANATION = (
    "this course does not use nbgrader's exchange: students hand in through the learning management "
    "system and you grade its download with `python -m course_build.grade LESSON --zip FILE`. "
    "For a JupyterHub class, delete the c.ExchangeFactory lines from autograder/nbgrader_config.py "
    "(book/instructors.md, 'With JupyterHub')."
)


class _Refuse:
    """Fails on start with ``EXPLANATION``."""

    def start(self):
        self.fail(f"Not available: {EXPLANATION}")


class NoExchange(_Refuse, abc.Exchange):
    pass


class NoExchangeList(abc.ExchangeList):
    """Lists no released assignments and no submissions: nothing goes through an exchange."""

    def start(self):
        return []


class NoReleaseAssignment(_Refuse, abc.ExchangeReleaseAssignment):
    pass


class NoReleaseFeedback(_Refuse, abc.ExchangeReleaseFeedback):
    pass


class NoFetchAssignment(_Refuse, abc.ExchangeFetchAssignment):
    pass


class NoFetchFeedback(_Refuse, abc.ExchangeFetchFeedback):
    pass


class NoSubmit(_Refuse, abc.ExchangeSubmit):
    pass


class NoCollect(_Refuse, abc.ExchangeCollect):
    pass
