"""Runs beside nbgrader, in processes of their own: what judges a test cell, and what it talks to.

``checker`` is the trusted checker, started once per graded notebook (``python -I -m
course_build.checking.checker``; its ``CheckerProcess`` is nbgrader's handle on it) to execute the
test cells; ``wire`` is the plain-data format it speaks, and its source text is also executed
inside the sandboxed student kernel, so it imports only the standard library and numpy.
"""
