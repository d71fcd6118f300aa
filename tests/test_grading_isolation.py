"""Nothing of one submission reaches the next one graded by the same worker.

One nbgrader process grades a worker's share of the class in turn (``grade_batch._autograde``):
each notebook gets its own sandboxed kernel (a fresh private copy, ``/tmp``, ``/dev/shm`` and
environment) and its own checker forked from the untouched zygote, and the grading step resets its
per-notebook state (notes, restarts, cells that wrote to stderr) in ``SandboxedExecute.preprocess``.
Here one worker grades a submission that leaves traces everywhere its code can reach, and kills
its own kernel, and then a witness: the reference answers, whose softmax cell fails when it finds
any of those traces. The witness must get exactly the reference's verdict, with no note of the
planter's. (Graded without the sandbox the witness finds the planter's files in the shared
``/tmp`` and loses its softmax points: the test fails where state crosses.)
"""

import nbformat
import pytest
from grading_harness import autograde, check_reference_report, make_submission, solution_answers

pytestmark = pytest.mark.slow

LESSON = "03_attention"
PLACES = (
    "course_planted.txt",
    "/tmp/course_planted.txt",
    "/dev/shm/course_planted.txt",
    "~/course_planted.txt",
    "../course_planted.txt",
)

# Each plant is tried on its own: one the sandbox refuses (a read-only folder) leaves the others.
PLANT = f"""
import builtins, os, sys, types
plants = [
    lambda: os.environ.__setitem__("COURSE_PLANTED", "1"),
    lambda: os.putenv("COURSE_PLANTED_PUTENV", "1"),
    lambda: setattr(builtins, "course_planted", True),
    lambda: sys.modules.__setitem__("course_planted", types.ModuleType("course_planted")),
]
plants += [
    (lambda place: lambda: open(os.path.expanduser(place), "w").write("planted"))(place)
    for place in {PLACES!r}
]
for plant in plants:
    try:
        plant()
    except OSError:
        pass
course_planted = True
os._exit(1)
"""

# A softmax that writes to stderr: the planter's passing test earns it a note the witness must not get.
NOISY_SOFTMAX = """
import sys
def softmax(x, axis=-1):
    sys.stderr.write("planted\\n")
    x = np.asarray(x, dtype=float)
    shifted = np.exp(x - x.max(axis=axis, keepdims=True))
    return shifted / shifted.sum(axis=axis, keepdims=True)
"""

WITNESS_CHECK = f"""
import builtins, os, sys
traces = [name for name in ("COURSE_PLANTED", "COURSE_PLANTED_PUTENV") if name in os.environ]
traces += [place for place in {PLACES!r} if os.path.exists(os.path.expanduser(place))]
traces += ["builtins"] * hasattr(builtins, "course_planted")
traces += ["sys.modules"] * ("course_planted" in sys.modules)
try:
    course_planted
    traces.append("a global")
except NameError:
    pass
if traces:
    raise RuntimeError(f"state of another submission reached this kernel: {{traces}}")
"""


def test_a_submission_leaves_nothing_to_the_next_one_graded_by_its_worker(tmp_path):
    reference = solution_answers(LESSON)
    planter = make_submission(LESSON, {**reference, "softmax": NOISY_SOFTMAX})
    softmax_at = next(i for i, c in enumerate(planter.cells) if c.source == NOISY_SOFTMAX)
    planter.cells.insert(softmax_at + 1, nbformat.v4.new_code_cell(PLANT))
    witness = make_submission(LESSON, {**reference, "softmax": WITNESS_CHECK + reference["softmax"]})
    # one worker, the students in order: the planter's notebook is graded first, in the same process
    reports = autograde(LESSON, {"a_planter": planter, "b_witness": witness}, tmp_path, jobs=1)

    planted = " ".join(reports["a_planter"].notes)
    assert "the kernel died" in planted, f"the planting cell did not run to its end: {planted}"
    assert "passing tests wrote to stderr" in planted, planted
    check_reference_report(LESSON, reports["b_witness"])
    assert reports["b_witness"].notes == (), "the planter's notes or traces reached the witness"
