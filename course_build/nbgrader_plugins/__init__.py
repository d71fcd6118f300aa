"""Runs inside nbgrader's own process: the classes ``autograder/nbgrader_config.py`` names.

The sanitizing and execute steps of ``nbgrader autograde`` (restored cells, the sandboxed kernel,
test cells sent to the trusted checker), the feedback page, the stand-in exchange, and the
formgrader's Jupyter server extension with the templates both pages render.
"""
