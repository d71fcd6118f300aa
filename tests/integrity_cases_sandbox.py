"""Adversarial cases against the sandbox's walls (issue 22, items 5 and 6), on lessons 1 and 3.

Registered in ``integrity_suite.py`` beside ``integrity_cases``: each goes through the same real
nbgrader batch as every other case of its lesson, so a case that stopped the batch or changed a
neighbour's grade shows up there.

* A key in the kernel keyring would outlive the sandbox under its pool uid (a channel to the next
  student): ``add_key`` is denied, and the notebook is graded on its merits, with no note.
* Replies built to exhaust the trusted side, sent as raw text by the kernel's end of the wire:
  30 MB of empty lists (hundreds of MB once parsed), nesting deeper than the stack, a lone
  surrogate in the notes. Each is refused before it is parsed; the report's failure is noted and
  the row agrees with the note.
* A zero-size array with a huge shape, (2**26, 0), returned honestly through the wire: it is
  refused before any test can broadcast it, so it earns nothing over the same wrong code.
"""

from integrity_cases import FULL, LESSON1, LESSON3, Case, _after, answers

KEYRING_KEY = """
import ctypes, errno
_libc = ctypes.CDLL(None, use_errno=True)
_key = _libc.syscall(248, b"user", b"to-the-next-student", b"answers", 7, ctypes.c_long(-4))
print("add_key:", "stored" if _key >= 0 else errno.errorcode[ctypes.get_errno()])
"""
# The kernel's end of the wire answers every request as usual, except the final report, which it
# sends as the raw text REPORT (its json.dumps passes text through).
FORGES_THE_REPORT = """
import json, sys
_wire = sys.modules["_course_grader_wire"]
_real_answer = _wire.answer


class _RawJson:
    loads = staticmethod(json.loads)

    @staticmethod
    def dumps(value):
        return value if isinstance(value, str) else json.dumps(value)


def _answer(request, namespace):
    return REPORT if request["op"] == "report" else _real_answer(request, namespace)


_wire.json, _wire.answer = _RawJson, _answer
"""
FORGED_REPORTS = {
    "a_report_of_30_mb_of_empty_lists": "REPORT = '[' + '[],' * 10_000_000 + '[]]'\n",
    "a_report_nested_past_the_stack": "REPORT = '[' * 100_000 + ']' * 100_000\n",
    "a_lone_surrogate_in_the_report": r"""REPORT = r'{"notes": ["\ud800 nothing suspicious"]}'""" + "\n",
}
ZERO_SIZE_SOFTMAX = """
def softmax(x, axis=-1):
    return np.zeros((2**26, 0))
"""
REPORT_UNREADABLE = "report of suspicious changes could not be read"


def _forged_report(lesson: str, after: str, report: str) -> Case:
    """The reference answers, then a cell that makes the final report ``report``: full marks, noted."""
    build = lambda course, port: _after(answers(lesson), after, report + FORGES_THE_REPORT)  # noqa: E731
    return Case(lesson, "exact", build, REPORT_UNREADABLE, score=FULL[lesson])


SANDBOX_CASES3: dict[str, Case] = {
    "keyring_key": Case(
        LESSON3,
        "exact",
        lambda course, port: _after(answers(LESSON3), "causal_mask", KEYRING_KEY),
        score=FULL[LESSON3],
    ),
    **{name: _forged_report(LESSON3, "causal_mask", report) for name, report in FORGED_REPORTS.items()},
    "a_zero_size_array_with_a_huge_shape": Case(
        LESSON3,
        "attack",
        lambda course, port: answers(LESSON3, softmax=ZERO_SIZE_SOFTMAX),
        baseline="wrong_axis",
    ),
}
SANDBOX_CASES1: dict[str, Case] = {
    "keyring_key": Case(
        LESSON1,
        "exact",
        lambda course, port: _after(answers(LESSON1), "apply_steps", KEYRING_KEY),
        score=FULL[LESSON1],
    ),
    "a_lone_surrogate_in_the_report": _forged_report(
        LESSON1, "apply_steps", FORGED_REPORTS["a_lone_surrogate_in_the_report"]
    ),
}
