"""Sphinx extensions the book build loads (``_config.yml``); they run inside ``jupyter-book build``.

Apart from ``course_build`` so the students' repository (``python -m course_build.student_tree``)
can carry them, and build the book, without any of the course's grading code.
"""
