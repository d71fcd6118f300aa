"""Runs inside the grading kernel: limits its memory and proves that each test cell ran honestly.

nbgrader gives a test cell full marks when it finishes without an error, so a submission can
earn points by stopping test code from failing instead of by being right: replacing
``np.allclose`` or ``np.testing.assert_allclose``, shadowing ``isinstance`` or ``np``,
installing a trace function or an IPython input/AST transformer that rewrites later cells.
``start`` runs when the kernel starts (before any student code) and records the objects the
tests rely on; ``confirm`` runs as the last line of every test cell (appended by
``course_build.guarded_execute``) and displays the cell's one-time token only if the cell got
that far and nothing it relies on was swapped. A test cell without its token scores zero.

This is defence in depth, not a sandbox: code in the same process can in principle reach and
rewrite anything here. ``course_build.tamper_scan`` rejects the means of doing so before the
notebook runs; see the instructors' page for the limits.
"""

import builtins
import resource
import sys

import numpy
import numpy.linalg
import numpy.testing

TOKEN_MIMETYPE = "application/x.course-grader-token"
# Module attributes that lesson tests call to judge answers; each must stay the original object.
_WATCHED_MODULES = {"numpy": numpy, "numpy.testing": numpy.testing, "numpy.linalg": numpy.linalg}
# Names tests use unqualified; a student binding one of them in the notebook changes every test.
_SHADOWABLE = (
    "isinstance",
    "type",
    "len",
    "abs",
    "all",
    "any",
    "float",
    "int",
    "bool",
    "tuple",
    "range",
    "zip",
    "AssertionError",
    "np",
    "numpy",
    "torch",
    "math",
)

# ipykernel swaps these in for every execute request, to forward stdin to the client.
_REPLACED_PER_REQUEST = ("input", "raw_input", "getpass")

_originals: dict[str, dict[str, object]] = {}
_hooks: dict[str, object] = {}


class GradingIntegrityError(AssertionError):
    """Something a test relies on was replaced, so this test cell cannot be trusted."""


def _shell():
    from IPython import get_ipython

    return get_ipython()


def _hook_state(shell) -> dict[str, object]:
    """The interpreter and IPython hooks through which code can rewrite or skip later cells."""
    state: dict[str, object] = {
        "sys.settrace": sys.gettrace(),
        "sys.setprofile": sys.getprofile(),
        "sys.displayhook": sys.displayhook,
        "builtins.__import__": builtins.__import__,
    }
    if shell is not None:
        state.update(
            {
                "input_transformers_cleanup": tuple(shell.input_transformers_cleanup),
                "input_transformers_post": tuple(shell.input_transformers_post),
                "ast_transformers": tuple(shell.ast_transformers),
                "custom_exceptions": tuple(shell.custom_exceptions),
                "showtraceback": shell.showtraceback,
                "run_cell": shell.run_cell,
            }
        )
    return state


def start(memory_limit_bytes: int) -> None:
    """Cap the kernel's memory (a huge allocation fails with MemoryError) and record originals."""
    if memory_limit_bytes > 0:
        resource.setrlimit(resource.RLIMIT_DATA, (memory_limit_bytes, memory_limit_bytes))
    _originals.clear()
    _originals["builtins"] = {k: v for k, v in vars(builtins).items() if k not in _REPLACED_PER_REQUEST}
    for name, module in _WATCHED_MODULES.items():
        _originals[name] = {key: value for key, value in vars(module).items() if callable(value)}
    _hooks.clear()
    _hooks.update(_hook_state(_shell()))


def _expected(name: str) -> object:
    """What a shadowable name must be bound to in the notebook, if it is bound at all."""
    if name in ("np", "numpy"):
        return numpy
    if name in ("torch", "math"):
        return sys.modules.get(name)
    return _originals["builtins"].get(name)


def problems() -> list[str]:
    """What differs from the kernel's start, in words; empty when nothing was tampered with."""
    if not _originals:
        return ["the kernel guard did not start (is course_build installed where the kernel runs?)"]
    found = []
    modules = {"builtins": builtins, **_WATCHED_MODULES}
    for name, originals in _originals.items():
        current = vars(modules[name])
        for key, original in originals.items():
            if current.get(key) is not original:
                found.append(f"{name}.{key} was replaced")
    shell = _shell()
    for key, original in _hook_state(shell).items():
        if _hooks.get(key) != original:
            found.append(f"{key} was changed")
    if shell is not None:
        for name in _SHADOWABLE:
            if name in shell.user_ns and shell.user_ns[name] is not _expected(name):
                found.append(f"the name {name!r} was rebound in the notebook")
    return found


def confirm(token: str) -> None:
    """Display ``token`` if the test cell reached its end with everything intact; raise otherwise."""
    found = problems()
    if found:
        raise GradingIntegrityError(
            "the grader could not trust this test: " + "; ".join(sorted(set(found))[:5])
        )
    from IPython.display import display

    display({TOKEN_MIMETYPE: token}, raw=True)
