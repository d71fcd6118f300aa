"""The authoring pipeline: one lesson source in, nbgrader / student / solution notebooks out.

``python -m course_build`` regenerates every artifact; ``--check`` fails when one is stale.
"""
