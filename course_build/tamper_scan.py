"""Find and neutralize code in a submission that tampers with grading instead of answering.

Answers in this course are numpy (or PyTorch) code. Code that reaches for the interpreter, the
kernel or other modules' internals has no business in an answer and is how a submission fools
nbgrader: replacing ``np.allclose``, appending an IPython input transformer that blanks the
test cells, defining an ``__eq__`` that always says True, calling ``os._exit``. The scan reads
each edited cell's code (after IPython turns magics into calls) and flags every top-level
statement that

* imports a module outside ``ALLOWED_MODULES`` (top-level names, plus ``IPython.display``),
* calls a dynamic-code or introspection builtin (``exec``, ``eval``, ``setattr``, ``vars`` ...),
  or ``getattr`` with a computed, private or sensitive name,
* touches a dunder name or attribute (``__class__``, ``__builtins__``), an attribute from
  ``SENSITIVE_ATTRIBUTES``, or ``get_ipython()`` for anything but a harmless magic,
* assigns to or deletes an attribute of anything but ``self``,
* rebinds a name that tests rely on (``isinstance``, ``np`` ...), or
* defines a class with special methods beyond ``ALLOWED_DUNDER_METHODS``.

Flagged statements are replaced by a comment, so the rest of the work is still graded on its
merits and the instructor gets a note. This is a filter against the known ways of cheating, not a
proof of safety; the kernel guard (``course_build.kernel_guard``) checks the outcome at run time.
"""

import ast
from dataclasses import dataclass

from IPython.core.inputtransformer2 import TransformerManager

ALLOWED_MODULES = frozenset(
    {
        "__future__", "abc", "bisect", "cmath", "collections", "copy", "dataclasses", "decimal",
        "enum", "fractions", "functools", "heapq", "ipywidgets", "itertools", "json", "math",
        "matplotlib", "numbers", "numpy", "pandas", "random", "re", "scipy", "statistics",
        "string", "time", "torch", "tqdm", "transformer_course", "typing", "warnings", "sacrebleu",
        "IPython.display",
    }
)  # fmt: skip
BANNED_CALLS = frozenset(
    {
        "exec", "eval", "compile", "__import__", "globals", "locals", "vars", "setattr",
        "delattr", "open", "breakpoint", "input", "exit", "quit", "memoryview", "help",
    }
)  # fmt: skip
SENSITIVE_ATTRIBUTES = frozenset(
    {
        "os", "sys", "builtins", "modules", "_exit", "exit", "system", "popen", "kill",
        "settrace", "setprofile", "excepthook", "displayhook", "input_transformers_cleanup",
        "input_transformers_post", "ast_transformers", "input_transformer_manager",
        "custom_exceptions", "set_custom_exc", "showtraceback", "run_cell", "user_ns",
        "user_global_ns", "kernel", "events", "shell", "kernel_guard", "setrlimit", "get_ipython",
    }
)  # fmt: skip
PROTECTED_NAMES = frozenset(
    {
        "isinstance", "type", "len", "abs", "all", "any", "float", "int", "bool", "tuple",
        "range", "zip", "print", "AssertionError", "np", "numpy", "torch", "math", "get_ipython",
        "__import__",
    }
)  # fmt: skip
ALLOWED_DUNDER_NAMES = frozenset({"__name__", "__init__", "__doc__"})
ALLOWED_DUNDER_METHODS = frozenset(
    {"__init__", "__post_init__", "__repr__", "__str__", "__call__", "__len__", "__iter__", "__getitem__"}
)
ALLOWED_MAGICS = frozenset({"time", "timeit", "matplotlib", "precision"})
_ALIASES_OK = {"np": "numpy", "numpy": "numpy", "torch": "torch", "math": "math"}


@dataclass(frozen=True)
class Finding:
    """A top-level statement (lines ``first``..``last``, 1-based) and why it was flagged."""

    first: int
    last: int
    reason: str


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and name not in ALLOWED_DUNDER_NAMES


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node


def _magic_calls(tree: ast.AST) -> set[int]:
    """ids of ``get_ipython`` names used only to run an allowed magic (``%timeit`` ...)."""
    allowed = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("run_line_magic", "run_cell_magic")
            and isinstance(node.func.value, ast.Call)
            and isinstance(node.func.value.func, ast.Name)
            and node.func.value.func.id == "get_ipython"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in ALLOWED_MAGICS
        ):
            allowed.add(id(node.func.value.func))
    return allowed


def _reasons(statement: ast.stmt, magic_ok: set[int]) -> list[str]:
    """Why one top-level statement is suspicious (empty: it is fine)."""
    reasons = []
    for node in ast.walk(statement):
        if isinstance(node, ast.Import | ast.ImportFrom):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or "."]
            for module in modules:
                if node.__class__ is ast.ImportFrom and node.level:
                    reasons.append("uses a relative import")
                elif module.split(".")[0] not in ALLOWED_MODULES and module not in ALLOWED_MODULES:
                    reasons.append(f"imports {module}")
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]
                if bound in PROTECTED_NAMES and _ALIASES_OK.get(bound) != alias.name:
                    reasons.append(f"binds {bound!r} to {alias.name}")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id
            if name in BANNED_CALLS:
                reasons.append(f"calls {name}()")
            elif name == "getattr" and len(node.args) >= 2:
                attr = node.args[1]
                if not (isinstance(attr, ast.Constant) and isinstance(attr.value, str)):
                    reasons.append("calls getattr() with a computed name")
                elif attr.value.startswith("_") or attr.value in SENSITIVE_ATTRIBUTES:
                    reasons.append(f"calls getattr(..., {attr.value!r})")
            elif name == "type" and len(node.args) == 3:
                reasons.append("creates a class with type(name, bases, namespace)")
        elif isinstance(node, ast.Name):
            if node.id == "get_ipython" and id(node) not in magic_ok:
                reasons.append("uses get_ipython() for more than a %time/%timeit magic")
            elif _is_dunder(node.id):
                reasons.append(f"uses {node.id}")
            elif isinstance(node.ctx, ast.Store | ast.Del) and node.id in PROTECTED_NAMES:
                reasons.append(f"rebinds {node.id!r}, which the tests rely on")
        elif isinstance(node, ast.Attribute):
            if _is_dunder(node.attr):
                reasons.append(f"uses the attribute {node.attr}")
            elif node.attr in SENSITIVE_ATTRIBUTES:
                reasons.append(f"uses the attribute .{node.attr}")
            if isinstance(node.ctx, ast.Store | ast.Del):
                root = _root(node)
                if not (isinstance(root, ast.Name) and root.id == "self"):
                    reasons.append(f"assigns to {ast.unparse(node)}")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name in PROTECTED_NAMES:
                reasons.append(f"redefines {node.name!r}, which the tests rely on")
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _is_dunder(item.name):
                        if item.name not in ALLOWED_DUNDER_METHODS:
                            reasons.append(f"defines {node.name}.{item.name}")
    return list(dict.fromkeys(reasons))


def python_source(cell_source: str) -> str:
    """The cell as the kernel runs it: IPython magics turned into ``get_ipython()`` calls."""
    return TransformerManager().transform_cell(cell_source)


def scan(cell_source: str) -> list[Finding]:
    """The suspicious top-level statements of a code cell; a syntax error is left to the kernel."""
    try:
        tree = ast.parse(python_source(cell_source))
    except (SyntaxError, ValueError):
        return []
    magic_ok = _magic_calls(tree)
    findings = []
    for statement in tree.body:
        reasons = _reasons(statement, magic_ok)
        if reasons:
            findings.append(Finding(statement.lineno, statement.end_lineno, "; ".join(reasons)))
    return findings


def neutralize(cell_source: str, findings: list[Finding]) -> str:
    """The cell with each flagged statement replaced by a comment that says why."""
    lines = python_source(cell_source).split("\n")
    for finding in sorted(findings, key=lambda f: f.first, reverse=True):
        lines[finding.first - 1 : finding.last] = [f"# removed by the grader: {finding.reason}"]
    return "\n".join(lines)
