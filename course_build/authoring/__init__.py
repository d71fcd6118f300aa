"""Runs on the course author's machine when ``python -m course_build`` regenerates the lessons.

A lesson source becomes the nbgrader source, solution and student notebooks; ``stable_widget_ids``
runs inside the kernel that executes a lesson for regeneration (never a student's kernel).
"""
