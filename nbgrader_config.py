"""Lets nbgrader started from the repository root find the course in ``autograder/``.

nbgrader reads ``nbgrader_config.py`` from its working directory; without this file, nbgrader's
commands (or the formgrader in a ``jupyter lab`` started here) would treat the repository root as
an empty course and show nothing. The course's configuration is ``autograder/nbgrader_config.py``,
which sets the course directory to its own folder.
"""

import os

load_subconfig(os.path.join(os.path.dirname(os.path.abspath(__file__)), "autograder", "nbgrader_config.py"))  # noqa: F821
