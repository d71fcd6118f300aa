"""Runs beside nbgrader, in processes of their own: what judges a test cell, and what it talks to.

``checker`` is the trusted checker, one fresh process per graded notebook (``python -I -m
course_build.checking.checker``; its ``CheckerProcess`` is nbgrader's handle on it) to execute the
test cells; ``zygote`` forks those processes, pre-imported, from one process per nbgrader process
(``start_checker``); ``wire`` is the plain-data format the checker speaks, and its source text is
also executed inside the sandboxed student kernel, so it imports only the standard library and numpy.
"""
