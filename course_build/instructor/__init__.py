"""Runs in the instructor's grading commands (``python -m course_build.grade``, ``.report``,
``.roster``).

Reads the LMS download into nbgrader's ``submitted/`` folder, drives ``nbgrader autograde`` and
``generate_feedback`` as subprocesses, and reads the gradebook back into the grade sheet. The
nbgrader plugins read lateness and results from here too.
"""
