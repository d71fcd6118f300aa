"""The course's own tooling, split by where each part runs (CONTRIBUTING.md has the map).

At the top: the commands (``python -m course_build`` regenerates the lessons, ``--check`` fails when
a generated file is stale; ``.grade``, ``.formgrader``, ``.report`` and ``.student_tree`` are the
instructor's) and the few modules every part shares: ``paths``, ``cell_roles`` (nbgrader's cell
roles), ``grader_notes``, ``test_cells`` (what a test cell may use) and ``nbgrader_runner``.
Subpackages: ``authoring`` (lesson source to notebooks), ``instructor`` (the grading commands'
engine), ``nbgrader_plugins`` (loaded by nbgrader and its formgrader) and ``checking`` (the trusted
checker process and the wire format the student's kernel speaks).
"""
