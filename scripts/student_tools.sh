#!/usr/bin/env bash
# Sourced by install-student.sh (and the browser tests): nbgrader installs its instructor tools
# with its student ones. Switch off the Formgrader, Create Assignment, the course and assignment
# lists (a local install has no nbgrader exchange to fetch from; a JupyterHub image built as in
# book/instructors.md keeps them) and the Nbgrader menu; keep the Validate button. LEVEL is where
# the setting is written: sys_prefix (the active environment) or user ($JUPYTER_CONFIG_DIR).

INSTRUCTOR_LAB_PLUGINS=(
  "@jupyter/nbgrader:formgrader"
  "@jupyter/nbgrader:create-assignment"
  "@jupyter/nbgrader:course-list"
  "@jupyter/nbgrader:assignment-list"
  "@jupyter/nbgrader:menu"
)
INSTRUCTOR_SERVER_EXTENSIONS=(
  "nbgrader.server_extensions.formgrader"
  "nbgrader.server_extensions.course_list"
  "nbgrader.server_extensions.assignment_list"
)

disable_instructor_tools() {
  local level="$1"
  local server_flag="--sys-prefix"
  [ "$level" = user ] && server_flag="--user"
  # One call each, quiet: disabled plugins are also locked, so JupyterLab's plugin manager
  # cannot switch them back on (what JupyterLab >= 4.1 says after every disable otherwise).
  jupyter labextension disable --level="$level" --log-level=WARN "${INSTRUCTOR_LAB_PLUGINS[@]}"
  jupyter labextension lock --level="$level" --log-level=WARN "${INSTRUCTOR_LAB_PLUGINS[@]}"
  for extension in "${INSTRUCTOR_SERVER_EXTENSIONS[@]}"; do
    jupyter server extension disable "$server_flag" "$extension" >/dev/null 2>&1
  done
}

# JupyterLab marks a lesson modified when the kernel's language_info (its Python version included)
# differs from the notebook's; serve lessons with this environment's, so that an untouched lesson
# closes without asking to save on any Python (transformer_course/lesson_contents.py).
serve_lessons_for_this_python() {
  python -m transformer_course.lesson_contents "$1"
}
