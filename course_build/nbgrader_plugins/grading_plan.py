"""Which cells of a submission run while it is graded: the student's, and the course cells they need.

A lesson notebook is mostly the course's own cells: worked examples, plots, widgets, studies. The
grade depends on none of them. Test cells run in the trusted checker and read only names the
lesson's solution cells define (``course_build.test_cells``), so the kernel has to hold exactly
what the student's cells make of those names, and whatever the student's cells read. Running every
demonstration again for each student costs most of a notebook's grading time.

So under grading a code cell is skipped when all of these hold, and runs otherwise ("running"
cells are the student's and those kept so far, to a fixed point):

* it is one of the course's own cells, unchanged: its source is that of a code cell of the
  lesson's nbgrader source notebook (the trusted copy) that is neither an answer nor a test. A
  cell the student added or edited always runs, and so does every answer cell;
* it binds (imports included) no name that a running cell may read from another cell, nor a
  name the solution cells define that a test cell reads. Reads are followed through function
  bodies, which look names up when called, so a later cell that binds them again runs too. A
  solution name a test only mentions as a local of its own (the checker fetches it, the test never
  reads it) may be bound by a skipped cell only to a plain literal (``d, d_ff = 512, 2048``),
  which the checker can always read, and only where no running cell before it binds the name.
  An import that binds a name to what it holds already is no binding: every running cell that
  binds the name does so by that same import and nothing else (``import torch.nn.functional as
  F`` in the student's cell and in the course's), and one of them runs before the cell, or before
  (or is) every running cell that reads the name, which no test reads from the notebook (lesson
  8's first ``import torch`` sits in a demonstration; the student's cell imports torch again);
* it changes nothing that a running cell reads: no object bound by another cell that a running
  cell reads (``rows.append(...)``, ``model.eval()``), no attribute or item of it (``np.x = ...``),
  no ``set_...``/``use_...``/save/write call on it (printing and thread settings excepted);
* it makes no call that changes the process or its files by a bare name (``open``, the course's
  ``explain_exercise_errors``, warnings filters, ``chdir``, ``putenv``...);
* it seeds no generator (``np.random.seed``, ``torch.manual_seed``) before a running cell whose
  statements use any name of the notebook as they run (they may draw from it, directly or through
  a helper): a ``def``'s decorators, defaults and annotations, a class's header and body, and
  every other statement, or that subclasses a class no import made (its ``__init_subclass__``
  runs). Function bodies are exempt: tests call functions with a generator of their own, and a
  test can never rely on the kernel's global generator, which any earlier cell may draw from;
* the student's cells all parse and reach no name indirectly (``globals()``, ``eval``, ``exec``,
  ``get_ipython``, ``sys``, frames, ``__dict__``, ``from m import *``): otherwise nothing is skipped.

The student's code is never edited, and never skipped: only unchanged course cells are. A skipped
cell keeps no output in the graded notebook.
"""

import ast
import builtins
import functools
import re
from collections.abc import Callable, Iterator, Sequence

from nbformat import NotebookNode

from course_build.cell_roles import is_answer, is_test_cell
from course_build.checking.checker import names_used
from course_build.test_cells import parse_cell, solution_names, statement_bindings

# Names through which code reaches the notebook's variables without naming them.
INDIRECT_NAMES = frozenset(
    {
        "globals",
        "locals",
        "vars",
        "eval",
        "exec",
        "compile",
        "get_ipython",
        "__import__",
        "sys",
        "inspect",
        "importlib",
        "builtins",
        "__builtins__",
        "__main__",
        "gc",
        "In",  # IPython's history of inputs and outputs
        "Out",
        "_ih",
        "_oh",
    }
)
INDIRECT_ATTRIBUTES = frozenset({"__globals__", "f_globals", "f_locals", "__dict__"})
# Calls that change the process or its files (``explain_...``: the set-up cell installs the
# course's short error messages): a course cell making one always runs.
STATEFUL_CALL = re.compile(
    r"^set_|^setattr$|^use_|^explain_|filterwarnings|simplefilter|chdir|environ|putenv|save|"
    r"dump|write|mkdir|remove|unlink|rename|rmtree|move|^open$|touch|register|install|patch"
)
# Settings that change how fast, or how printed, never what is computed.
HARMLESS_SETTINGS = frozenset({"set_printoptions", "set_num_threads", "set_num_interop_threads"})
SEEDING_CALL = re.compile(r"seed")
BUILTIN_NAMES = frozenset(dir(builtins))


@functools.lru_cache(maxsize=4096)
def _analysed(source: str) -> "_Cell":
    """The analysis of a cell's source, made once per source in a grading process: every
    submission of a lesson holds the same course cells, and analysing them again cost 0.1-0.2 s of
    CPU per notebook (lessons 3, 8, 10). The analysis is read, never changed, by ``cells_to_skip``."""
    return _Cell(source)


@functools.lru_cache(maxsize=4096)
def _test_cell_reads(source: str) -> tuple[frozenset[str], frozenset[str] | None]:
    """The names a test cell's code mentions (``checker.names_used``) and those it may read from
    the notebook (``global_reads``; None when it does not parse), once per source."""
    try:
        reads = frozenset(global_reads(parse_cell(source)))
    except SyntaxError:
        reads = None
    return names_used(source), reads


class _Cell:
    """What a code cell binds and reads, by name."""

    def __init__(self, source: str) -> None:
        self.parsed = True
        try:
            tree = parse_cell(source)
        except SyntaxError:
            self.parsed, tree = False, ast.Module(body=[], type_ignores=[])
        self.binds = set().union(*(statement_bindings(s) for s in tree.body))
        self.binding_sources = _binding_sources(tree)
        self.constants = _constant_names(tree)
        # what the cell may bind in the notebook's namespace: top-level bindings, names declared
        # ``global`` and every import (one nested in a ``try`` binds at the top level too)
        self.global_binds = self.binds | {
            name
            for node in ast.walk(tree)
            if isinstance(node, ast.Global | ast.Import | ast.ImportFrom)
            for name in (
                node.names
                if isinstance(node, ast.Global)
                else [(alias.asname or alias.name).split(".")[0] for alias in node.names]
            )
        }
        self.binds_data = set().union(
            *(statement_bindings(s) for s in tree.body if not isinstance(s, _DEFINITIONS))
        )
        reads = _reads_from_elsewhere(tree)
        # a function reading a name its own cell binds finds the cell's value, unless a later cell
        # binds the name again before the function is called
        self.reads_after_cell = reads & self.binds
        self.reads = reads - self.binds
        everything_read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        attributes = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        self.indirect = bool(
            everything_read & INDIRECT_NAMES or attributes & INDIRECT_ATTRIBUTES or "*" in self.binds
        )
        own_functions = {s.name for s in tree.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)}
        calls = _stateful_calls(tree, own_functions, STATEFUL_CALL)
        # a module's or object's state, changed through its name: it matters where running code reads it
        self.touches = (_changed_from_outside(tree) | {root for root in calls if root}) - self.binds_data
        # a stateful function called by its bare name (``explain_exercise_errors()``, ``open(...)``)
        self.stateful = None in calls
        self.seeds = bool(_stateful_calls(tree, own_functions, SEEDING_CALL))
        # the notebook's names the cell's statements use as they run (not what the functions they
        # define read when called), less the bases of plain subclasses, which ``base_classes`` holds
        self.reads_now = _statement_reads(tree.body, frozenset(), _read_when_defined) - BUILTIN_NAMES
        self.base_classes = _plain_base_roots(tree) - BUILTIN_NAMES
        for name, value in list(vars(self).items()):  # shared by every notebook (``_analysed``)
            if isinstance(value, set):
                setattr(self, name, frozenset(value))


def _binding_sources(tree: ast.Module) -> dict[str, set[str | None]]:
    """How the cell binds each name, anywhere in it: the dotted path a leading import (one that
    only imports and a docstring come before, so it runs whenever the cell starts) imports
    (``import torch.nn.functional as F`` and ``from torch.nn import functional as F`` both give
    ``torch.nn.functional``; ``import torch.nn`` gives ``torch.nn``, not ``torch``), None for every
    other binding (an assignment, a definition, a parameter, a ``del``, a ``global`` declaration,
    a relative import, an import after other statements or nested in a block)."""
    sources: dict[str, set[str | None]] = {}
    leading_imports: set[int] = set()
    for position, statement in enumerate(tree.body):
        is_docstring = (
            position == 0 and isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        )
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                leading_imports.add(id(alias))
                bound = alias.asname or alias.name.split(".")[0]
                sources.setdefault(bound, set()).add(alias.name)
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
            for alias in statement.names:
                if alias.name != "*":
                    leading_imports.add(id(alias))
                    path = f"{statement.module}.{alias.name}"
                    sources.setdefault(alias.asname or alias.name, set()).add(path)
        elif not is_docstring:
            break
    for name, node in _binding_nodes(tree):
        if not (isinstance(node, ast.alias) and id(node) in leading_imports):
            sources.setdefault(name, set()).add(None)
    return sources


def _binding_nodes(tree: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """Every place the code binds (or unbinds) a name, anywhere, with the node that does it."""
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names = [node.id]
        elif isinstance(node, ast.alias):
            names = [(node.asname or node.name).split(".")[0]]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names = list(node.names)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            names = [node.name]
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names = [node.rest]
        for name in names:
            yield name, node


def _constant_names(tree: ast.Module) -> set[str]:
    """Names the cell binds only by top-level assignments of plain literals (``d, d_ff = 512,
    2048``): whatever runs, the checker can read their values."""
    literal_targets: set[int] = set()
    for statement in tree.body:
        if not isinstance(statement, ast.Assign):
            continue
        try:
            value = ast.literal_eval(statement.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        for target in statement.targets:
            if isinstance(target, ast.Name) and _plain(value):
                literal_targets.add(id(target))
            elif isinstance(target, ast.Tuple | ast.List) and isinstance(value, tuple | list):
                if len(target.elts) == len(value) and all(isinstance(e, ast.Name) for e in target.elts):
                    pairs = zip(target.elts, value, strict=True)
                    literal_targets.update(id(name) for name, item in pairs if _plain(item))
    constant: dict[str, bool] = {}
    for name, node in _binding_nodes(tree):
        constant[name] = constant.get(name, True) and id(node) in literal_targets
    return {name for name, only_literals in constant.items() if only_literals}


def _plain(value: object) -> bool:
    """A number, string, boolean or None, or a tuple or list of these (what the wire carries)."""
    if isinstance(value, tuple | list):
        return all(map(_plain, value))
    return value is None or isinstance(value, bool | int | float | str)


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _reads_from_elsewhere(tree: ast.Module) -> set[str]:
    """Names the cell may take from other cells: read before the cell's own statements surely
    bound them, or read by a function at call time (when another cell may have bound them again)."""
    return _statement_reads(tree.body, frozenset())


def _statement_reads(
    statements: list[ast.stmt],
    bound: frozenset[str],
    definition_reads: Callable[[ast.stmt], set[str]] | None = None,
) -> set[str]:
    """What ``statements``, run in order, read that neither ``bound`` nor they themselves surely
    bound first. A name bound only inside a branch or a loop's body is not sure to be bound.
    ``definition_reads`` says what a ``def`` or ``class`` statement reads: by default everything
    its functions may read when called too."""
    definition_reads = definition_reads or global_reads
    reads: set[str] = set()
    for statement in statements:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            reads |= definition_reads(statement)
        elif isinstance(statement, ast.For | ast.AsyncFor):
            reads |= global_reads(statement.iter) - bound
            target = {n.id for n in ast.walk(statement.target) if isinstance(n, ast.Name)}
            reads |= _statement_reads(statement.body, bound | target, definition_reads)
            reads |= _statement_reads(statement.orelse, bound, definition_reads)
            continue
        elif isinstance(statement, ast.If):
            reads |= global_reads(statement.test) - bound
            reads |= _statement_reads(statement.body, bound, definition_reads)
            reads |= _statement_reads(statement.orelse, bound, definition_reads)
            continue
        elif isinstance(statement, ast.With | ast.AsyncWith):
            reads |= set().union(*(global_reads(item.context_expr) for item in statement.items)) - bound
            names: set[str] = set()
            for item in statement.items:
                if item.optional_vars is not None:
                    names |= {n.id for n in ast.walk(item.optional_vars) if isinstance(n, ast.Name)}
            reads |= _statement_reads(statement.body, bound | names, definition_reads)
        else:
            reads |= global_reads(statement) - bound
        bound = bound | statement_bindings(statement)
    return reads


def _read_when_defined(statement: ast.stmt) -> set[str]:
    """What running a ``def`` or ``class`` statement reads, before anything calls what it defines:
    a function's decorators, defaults and annotations; a class's decorators, keywords and bases
    (those of a plain subclass excepted: ``_plain_base_roots``) and what its body runs."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        arguments = statement.args
        parameters = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        parameters += [p for p in (arguments.vararg, arguments.kwarg) if p is not None]
        parts = [*statement.decorator_list, *arguments.defaults, *arguments.kw_defaults, statement.returns]
        parts += [parameter.annotation for parameter in parameters]
        return set().union(*(global_reads(part) for part in parts if part is not None))
    assert isinstance(statement, ast.ClassDef)
    header = [*statement.decorator_list, *statement.keywords]
    if not _is_plain_subclass(statement):
        header += statement.bases
    reads = set().union(*(global_reads(part) for part in header))
    return reads | _statement_reads(statement.body, frozenset(), _read_when_defined)


def _dotted_root(expression: ast.expr) -> str | None:
    """The name a dotted name starts from (``nn`` for ``nn.Module``); None for anything else."""
    while isinstance(expression, ast.Attribute):
        expression = expression.value
    return expression.id if isinstance(expression, ast.Name) else None


def _is_plain_subclass(statement: ast.ClassDef) -> bool:
    """A class with no decorator and no keyword (``metaclass=``), whose bases are dotted names
    (``class Layer(nn.Module)``): defining it runs no code of the notebook's beyond its body,
    unless a base is the notebook's own class (its ``__init_subclass__``)."""
    no_extras = not (statement.decorator_list or statement.keywords)
    return no_extras and all(_dotted_root(base) is not None for base in statement.bases)


def _plain_base_roots(tree: ast.AST) -> set[str]:
    """The names plain subclasses (``_is_plain_subclass``) anywhere in ``tree`` derive from
    (``nn`` for ``nn.Module``)."""
    return {
        _dotted_root(base)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and _is_plain_subclass(node)
        for base in node.bases
    }


def global_reads(tree: ast.AST) -> set[str]:
    """Names the code may look up in the notebook's globals: every name read at the top level,
    and every name a function (or comprehension) reads without binding it in its own scope.
    Errs on the side of reading more: a name read is dropped only where it is surely local."""
    reads: set[str] = set()

    def visit(node: ast.AST, local: frozenset[str]) -> None:
        if isinstance(node, _FUNCTIONS):
            arguments = node.args
            for default in [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]:
                visit(default, local)
            for decorator in getattr(node, "decorator_list", []):
                visit(decorator, local)
            body = node.body if isinstance(node.body, list) else [node.body]
            inner = local | _scope_bindings(arguments, body)
            for statement in body:
                visit(statement, inner)
        elif isinstance(node, _COMPREHENSIONS):
            first, *rest = node.generators
            targets = [n for g in node.generators for n in ast.walk(g.target)]
            inner = local | {n.id for n in targets if isinstance(n, ast.Name)}
            visit(first.iter, local)  # the only part evaluated in the enclosing scope
            for part in [*(g.iter for g in rest), *(c for g in node.generators for c in g.ifs)]:
                visit(part, inner)
            for part in (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,):
                visit(part, inner)
        elif isinstance(node, ast.ClassDef):
            for child in [*node.bases, *node.keywords, *node.decorator_list]:
                visit(child, local)
            for statement in node.body:  # methods do not see the class's names: keep ``local``
                visit(statement, local)
        else:
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                if node.target.id not in local:  # ``x += 1`` reads x first
                    reads.add(node.target.id)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in local:
                reads.add(node.id)
            for child in ast.iter_child_nodes(node):
                visit(child, local)

    visit(tree, frozenset())
    return reads


def _scope_bindings(arguments: ast.arguments, body: list[ast.AST]) -> frozenset[str]:
    """The local names of a function: its parameters and what its own body binds (not what a
    nested function or comprehension binds), less the names it declares ``global``."""
    names = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    names |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    declared_global: set[str] = set()
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Global):
            declared_global.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            continue  # its body is a scope of its own
        if isinstance(node, (ast.Lambda, *_COMPREHENSIONS)):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return frozenset(names - declared_global)


def _stateful_calls(tree: ast.AST, own_functions: set[str], pattern: re.Pattern) -> set[str | None]:
    """Where the calls that may change state go: the root name of ``np.random.seed(0)`` (``np``),
    or None for a stateful function called by its bare name. Calls of a function the cell itself
    defines are left out (its body is read anyway)."""
    roots: set[str | None] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        target = node.func
        if isinstance(target, ast.Name) and target.id not in own_functions:
            if pattern.search(target.id) and target.id not in HARMLESS_SETTINGS:
                roots.add(None)
        elif isinstance(target, ast.Attribute) and pattern.search(target.attr):
            if target.attr in HARMLESS_SETTINGS:
                continue
            root = target.value
            while isinstance(root, ast.Attribute | ast.Subscript | ast.Call):
                root = root.func if isinstance(root, ast.Call) else root.value
            roots.add(root.id if isinstance(root, ast.Name) else None)
    return roots


def _changed_from_outside(tree: ast.Module) -> set[str]:
    """Names whose attribute or item a top-level statement sets or deletes (``np.x = ...``,
    ``table[k] = ...``): the object may belong to another cell, or be a module."""
    roots = set()
    for statement in tree.body:
        if isinstance(statement, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            single = not isinstance(statement, ast.Assign | ast.Delete)
            targets = [statement.target] if single else statement.targets
            for target in targets:
                while isinstance(target, ast.Attribute | ast.Subscript):
                    target = target.value
                    if isinstance(target, ast.Name):
                        roots.add(target.id)
    return roots


def _is_course_cell(cell: NotebookNode) -> bool:
    return cell.cell_type == "code" and not is_answer(cell) and not is_test_cell(cell)


def _names_tests_take(
    source_cells: Sequence[NotebookNode], submitted_cells: Sequence[NotebookNode]
) -> tuple[set[str], set[str]]:
    """The solution names the checker fetches from the kernel for the test cells (those their code
    mentions: ``checker.names_used``), and those of them the tests' code may read (a name a test
    only uses as a local of its own function is fetched, never read: its value cannot change a
    verdict, only whether the checker can read it)."""
    names = solution_names(list(source_cells))
    asked: set[str] = set()
    read: set[str] = set()
    for cell in [*source_cells, *submitted_cells]:
        if cell.cell_type != "code" or not is_test_cell(cell):
            continue
        mentioned, reads = _test_cell_reads(cell.source)
        asked |= names & mentioned
        read |= names if reads is None else names & reads
    return asked, read


def cells_to_skip(source_cells: Sequence[NotebookNode], submitted_cells: Sequence[NotebookNode]) -> set[int]:
    """Indices of ``submitted_cells`` that need not run under grading (see the module's rules).

    ``source_cells`` are the lesson's nbgrader source notebook's cells (trusted): they say which
    sources are the course's own and which names the solution cells define.
    """
    course_sources = {cell.source for cell in source_cells if _is_course_cell(cell)}
    candidates: dict[int, _Cell] = {}
    running: dict[int, _Cell] = {}
    for index, cell in enumerate(submitted_cells):
        if cell.cell_type != "code" or is_test_cell(cell):
            continue
        if _is_course_cell(cell) and cell.source in course_sources:
            candidates[index] = _analysed(cell.source)
        else:
            running[index] = _analysed(cell.source)
    if any(not cell.parsed or cell.indirect for cell in running.values()):
        return set()
    asked, read_by_tests = _names_tests_take(source_cells, submitted_cells)
    needed = read_by_tests.union(*(cell.reads for cell in running.values()))
    data = set().union(*(cell.binds_data for cell in running.values()))

    def read_after(index: int) -> set[str]:
        """Names running cells before ``index`` read at call time from their own cell: a cell at
        ``index`` binding one of them again changes what those functions find."""
        return set().union(*(cell.reads_after_cell for i, cell in running.items() if i < index))

    def rebinds_what_it_holds(name: str, index: int) -> bool:
        """Whether the candidate at ``index`` binds ``name`` only by an import that every running
        cell binding the name makes too, and nothing else, where running code only ever finds that
        object under the name: one of those cells runs before the candidate, or before (or is)
        every running cell that reads the name, and no test reads it from the notebook."""
        sources = candidates[index].binding_sources.get(name, {None})
        if None in sources or len(sources) != 1:
            return False
        binders = [i for i, cell in running.items() if name in cell.binding_sources]
        if not binders or any(running[i].binding_sources[name] != sources for i in binders):
            return False
        first = min(binders)
        if first < index:
            return True
        readers = [i for i, cell in running.items() if name in cell.reads | cell.reads_after_cell]
        return name not in read_by_tests and all(i >= first for i in readers)

    def bound_before(index: int) -> set[str]:
        """Names a running cell before ``index`` may bind: a literal bound to one of them again
        would replace a value of the student's, which the checker might not read."""
        return set().union(*(cell.global_binds for i, cell in running.items() if i < index))

    def observed() -> set[str]:
        """Names whose objects a running cell or a test may look at (a change to one matters):
        the needed ones, those the checker fetches, those running functions read from their cell."""
        return needed | asked | set().union(*(cell.reads_after_cell for cell in running.values()))

    def imported() -> set[str]:
        """Names that running cells bind by imports and nothing else."""
        sources: dict[str, set[str | None]] = {}
        for cell in running.values():
            for name in cell.global_binds:
                sources.setdefault(name, set()).update(cell.binding_sources.get(name, {None}))
        return {name for name, paths in sources.items() if None not in paths}

    def drawn_after(index: int) -> bool:
        """Whether the statements of a running cell after ``index`` may draw random numbers: they
        use a name of the notebook, or subclass a class that no import made (a library's classes
        draw nothing when subclassed)."""
        library = imported()
        return any(cell.reads_now or cell.base_classes - library for i, cell in running.items() if i > index)

    changed = True
    while changed:
        changed = False
        for index, cell in candidates.items():
            rebound = {
                name
                for name in cell.binds & (needed | read_after(index))
                if not rebinds_what_it_holds(name, index)
            }
            if index in running or not (
                rebound
                or (cell.binds & asked) - (cell.constants - bound_before(index))
                or "*" in cell.binds
                or cell.reads & data & observed()
                or cell.touches & observed()
                or (cell.seeds and drawn_after(index))
                or cell.stateful
            ):
                continue
            running[index] = cell
            needed |= cell.reads
            data |= cell.binds_data
            changed = True
    return set(candidates) - set(running)
