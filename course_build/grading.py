"""Grade submissions of a lesson with real nbgrader runs and read the scores back.

The tests use this to prove that the solution gets full marks, a blank notebook gets zero and
realistic wrong work gets partial marks with useful feedback.
"""

from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbgrader.api import Gradebook

from course_build.nbgrader_runner import make_course_dir, run_nbgrader
from course_build.paths import nbgrader_source_notebook


@dataclass(frozen=True)
class GradeReport:
    """One student's result for one lesson.

    ``scores`` maps every graded cell to its points; a written answer still waiting for the
    instructor maps to None. ``auto_total`` / ``auto_max`` cover the autograded cells only.
    """

    scores: dict[str, float | None]
    max_scores: dict[str, float]
    autograded: frozenset[str]
    feedback_html: str

    @property
    def auto_total(self) -> float:
        return sum(self.scores[g] or 0.0 for g in self.autograded)

    @property
    def auto_max(self) -> float:
        return sum(self.max_scores[g] for g in self.autograded)

    @property
    def awaiting_manual_grade(self) -> list[str]:
        return sorted(g for g, score in self.scores.items() if score is None)


def autograde(lesson: str, submissions: dict[str, NotebookNode], workdir: Path) -> dict[str, GradeReport]:
    """Run generate_assignment, autograde and generate_feedback on ``submissions`` (student -> notebook)."""
    source = nbformat.read(nbgrader_source_notebook(lesson), as_version=4)
    course = make_course_dir(Path(workdir), {lesson: source})
    run_nbgrader(course, "generate_assignment", lesson, "--force")
    for student, notebook in submissions.items():
        path = course / "submitted" / student / lesson / f"{lesson}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, path)
    run_nbgrader(course, "autograde", lesson, "--force")
    run_nbgrader(course, "generate_feedback", lesson, "--force")
    reports = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student in submissions:
            notebook = gradebook.find_submission_notebook(lesson, lesson, student)
            scores, max_scores, autograded = {}, {}, set()
            for grade in notebook.grades:
                max_scores[grade.name] = grade.max_score
                scores[grade.name] = None if grade.needs_manual_grade else grade.score
                if grade.cell_type == "code":
                    autograded.add(grade.name)
            feedback = course / "feedback" / student / lesson / f"{lesson}.html"
            reports[student] = GradeReport(
                scores=scores,
                max_scores=max_scores,
                autograded=frozenset(autograded),
                feedback_html=feedback.read_text(encoding="utf-8"),
            )
    return reports
