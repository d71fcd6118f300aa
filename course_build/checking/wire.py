"""The plain-data wire format between the trusted grader and the student's kernel, and its kernel end.

This one file runs in two places. The trusted side (``course_build.checking.checker``) imports it to encode
the arguments a test passes to a student's function and to decode, strictly, what comes back. The
grader also executes its source text inside the sandboxed student kernel when the kernel starts
(``kernel_startup_line``), where ``serve`` answers the grader's requests. So it imports
only the standard library and numpy, holds no secret, and never trusts what it decodes: anything
the kernel sends may be forged, and ``decode`` accepts only plain data.

Plain data: None, bool, int, float, complex, str, numpy arrays and scalars of bool, integer, float,
complex or unicode dtype (sent as dtype + shape + bytes, so an ``ndarray`` subclass arrives as a
plain array), tuples, lists and dicts of these, and ``np.random.Generator`` (sent as its bit
generator's state; for the PCG64 family, which ``np.random.default_rng`` makes, as one node of four
numbers, since a sampler test sends a generator thousands of times). Never pickle. Anything else
is refused with ``NotPlainData`` when encoding and ``MalformedData`` when decoding.
"""

import base64
import builtins
import copy
import json
import math
import os
import re
import sys

import numpy as np

END_OF_REQUESTS = "end"
MODULE_NAME = "_course_grader_wire"
DEFAULT_LIMIT_BYTES = 64 * 2**20
MAX_DEPTH = 32
MAX_INT_DIGITS = 4000
MAX_MESSAGE_CHARS = 2000
MAX_REPEATS = 100_000  # calls in one call_repeatedly request
MAX_JSON_CHARS = 128 * 2**20  # above the base64 text of DEFAULT_LIMIT_BYTES of arrays
MAX_JSON_ITEMS = 500_000  # values in one JSON text: each costs memory however small its text
MAX_JSON_DEPTH = 3 * MAX_DEPTH + 8  # a wire dict nests three JSON levels per level, plus the envelope
_DTYPE = re.compile(r"^[<>|=][biufcU][0-9]{1,6}$")
_INT = re.compile(rf"-?[0-9]{{1,{MAX_INT_DIGITS}}}")
_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")
# The PCG64 family's state, as numbers: a 128-bit state and increment, whether a 32-bit half of
# the last draw is kept for the next draw, and that half.
_PCG_GENERATORS = ("PCG64", "PCG64DXSM")
_PCG_LIMITS = (2**128, 2**128, 2, 2**32)
# A JSON escape that can stand for half of a surrogate pair, the only way a parsed string can hold
# a lone surrogate when the text itself is valid Unicode.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class NotPlainData(TypeError):
    """A value the wire format does not carry (an object, a Tensor, a function ...)."""


class MalformedData(ValueError):
    """Encoded data that breaks the wire format's rules."""


class _Budget:
    """Bytes left for one encoding or decoding, so a huge value fails instead of exhausting memory."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def charge(self, size: int, error: type[Exception]) -> None:
        self.left -= size
        if self.left < 0:
            raise error("the data is larger than the grader accepts")


def loads(
    text: str | bytes,
    *,
    max_chars: int = MAX_JSON_CHARS,
    max_items: int = MAX_JSON_ITEMS,
    max_depth: int = MAX_JSON_DEPTH,
    repair_text: bool = False,
) -> object:
    """``json.loads`` for text that came from the student's kernel: MalformedData instead of a
    parse that could exhaust memory or the stack, or yield text that cannot be written out.

    Before parsing: the length, and the number of values, counted from above by the commas and
    opening brackets anywhere in the text (a small text of empty lists expands a hundredfold in
    memory). Parsing itself stops at the interpreter's recursion limit (RecursionError, caught).
    After it, without recursion: the nesting depth (later steps serialize the value again) and no
    lone surrogate (``"\\ud800"``), which would fail when the notebook is saved. With
    ``repair_text`` (the kernel's printed output) undecodable bytes and lone surrogates become
    replacement characters instead of failing.
    """
    if len(text) > max_chars:
        raise MalformedData(f"a message of {len(text)} characters, more than the grader reads ({max_chars})")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8", "replace" if repair_text else "strict")
        except UnicodeDecodeError:
            raise MalformedData("a message that is not UTF-8 text") from None
    items = text.count(",") + text.count("[") + text.count("{") + 1 if len(text) > max_items else 0
    if items > max_items:
        raise MalformedData(f"a message of up to {items} values, more than the grader reads ({max_items})")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError, MemoryError) as error:
        raise MalformedData(f"a message that is not valid JSON ({type(error).__name__})") from None
    depth, valid_text = _shape_of_json(value, strings=_may_hold_a_lone_surrogate(text))
    if depth > max_depth:
        raise MalformedData(f"a message nested more than {max_depth} levels deep")
    if valid_text:
        return value
    if not repair_text:
        raise MalformedData("a message holding text that is not valid Unicode (a lone surrogate)")
    return json.loads(json.dumps(value, ensure_ascii=False).encode("utf-8", "replace").decode("utf-8"))


def _may_hold_a_lone_surrogate(text: str) -> bool:
    """Whether parsing ``text`` can give a string with a lone surrogate: when it holds one itself
    or an escape of one half of a pair. Most messages hold neither, and then no parsed string
    needs checking one by one (the slowest part of reading a message)."""
    if _SURROGATE_ESCAPE.search(text):
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _shape_of_json(value: object, strings: bool = True) -> tuple[int, bool]:
    """The nesting depth of a parsed JSON value and, when ``strings``, whether all its text is
    valid Unicode (else it is taken to be), found level by level, without recursion."""
    depth, level, texts = -1, [value], []
    while level:
        depth += 1
        below: list = []
        for item in level:
            kind = type(item)
            if kind is dict:
                if strings:
                    below += item
                below += item.values()
            elif kind is list:
                below += item
            elif kind is str and strings:
                texts.append(item)
        level = below
    try:
        for text in texts:
            text.encode("utf-8")
    except UnicodeEncodeError:
        return depth, False
    return depth, True


def loads_message_part(data: str | bytes) -> object:
    """A part of a Jupyter message from the kernel (``Session.unpack``): ``loads`` with its caps,
    text repaired, so that an odd character printed by a notebook never stops its grading."""
    return loads(data, repair_text=True)


def encode(value: object, limit: int = DEFAULT_LIMIT_BYTES) -> dict:
    """``value`` as a JSON-able tree of tagged nodes; raises NotPlainData for anything else."""
    return _encode(value, 0, _Budget(limit))


def _encode(value: object, depth: int, budget: _Budget) -> dict:
    if depth > MAX_DEPTH:
        raise NotPlainData(f"data nested more than {MAX_DEPTH} levels deep")
    if value is None:
        return {"t": "none"}
    if isinstance(value, bool):
        return {"t": "bool", "v": bool(value)}
    if isinstance(value, np.generic):
        return {"t": "scalar", **_array_fields(np.asarray(value), budget)}
    if isinstance(value, int):
        text = str(int(value))
        budget.charge(len(text), NotPlainData)
        return {"t": "int", "v": text}
    if isinstance(value, float):
        return {"t": "float", "v": float(value).hex()}
    if isinstance(value, complex):
        return {"t": "complex", "re": value.real.hex(), "im": value.imag.hex()}
    if isinstance(value, str):
        budget.charge(len(value), NotPlainData)
        return {"t": "str", "v": str(value)}
    if isinstance(value, np.ndarray):
        return {"t": "array", **_array_fields(np.asarray(value), budget)}
    if isinstance(value, np.random.Generator):
        state = value.bit_generator.state
        if state["bit_generator"] in _PCG_GENERATORS:
            numbers = (state["state"]["state"], state["state"]["inc"], state["has_uint32"], state["uinteger"])
            return {"t": "pcg", "kind": state["bit_generator"], "v": [str(int(n)) for n in numbers]}
        return {"t": "generator", "state": _encode(state, depth + 1, budget)}
    if isinstance(value, tuple | list):
        budget.charge(len(value), NotPlainData)
        kind = "tuple" if isinstance(value, tuple) else "list"
        return {"t": kind, "items": [_encode(item, depth + 1, budget) for item in value]}
    if isinstance(value, dict):
        budget.charge(len(value), NotPlainData)
        return {
            "t": "dict",
            "items": [
                [_encode(k, depth + 1, budget), _encode(v, depth + 1, budget)] for k, v in value.items()
            ],
        }
    raise NotPlainData(f"a value of type {type(value).__name__}")


def _array_fields(array: np.ndarray, budget: _Budget) -> dict:
    if not _DTYPE.match(array.dtype.str):
        raise NotPlainData(f"an array of dtype {array.dtype}")
    budget.charge(array.nbytes, NotPlainData)
    data = base64.b64encode(np.ascontiguousarray(array).tobytes()).decode("ascii")
    return {"dtype": array.dtype.str, "shape": list(array.shape), "data": data}


def decode(node: object, limit: int = DEFAULT_LIMIT_BYTES) -> object:
    """The value an ``encode`` tree stands for; raises MalformedData on anything off the format."""
    return _decode(node, 0, _Budget(limit))


def _fields(node: dict, *names: str) -> list:
    if set(node) != {"t", *names}:
        raise MalformedData(f"a {node['t']!r} node must have exactly the fields {sorted(names)}")
    return [node[name] for name in names]


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise MalformedData("expected a string")
    return value


def _float(value: object) -> float:
    try:
        return float.fromhex(_text(value))
    except (ValueError, OverflowError):
        raise MalformedData("a float that is not in float.hex() form") from None


def _decode(node: object, depth: int, budget: _Budget) -> object:
    if depth > MAX_DEPTH:
        raise MalformedData(f"data nested more than {MAX_DEPTH} levels deep")
    if not isinstance(node, dict) or not isinstance(node.get("t"), str):
        raise MalformedData("expected a tagged node")
    kind = node["t"]
    if kind == "none":
        _fields(node)
        return None
    if kind == "bool":
        (value,) = _fields(node, "v")
        if not isinstance(value, bool):
            raise MalformedData("a bool node must hold true or false")
        return value
    if kind == "int":
        (text,) = _fields(node, "v")
        if not _INT.fullmatch(_text(text)):
            raise MalformedData("an int node must hold decimal digits")
        budget.charge(len(text), MalformedData)
        return int(text)
    if kind == "float":
        return _float(_fields(node, "v")[0])
    if kind == "complex":
        real, imag = _fields(node, "re", "im")
        return complex(_float(real), _float(imag))
    if kind == "str":
        text = _text(_fields(node, "v")[0])
        budget.charge(len(text), MalformedData)
        return text
    if kind in ("array", "scalar"):
        array = _decode_array(*_fields(node, "dtype", "shape", "data"), budget)
        if kind == "scalar":
            if array.shape != ():
                raise MalformedData("a scalar node must have shape ()")
            return array[()]
        return array
    if kind in ("tuple", "list"):
        (items,) = _fields(node, "items")
        if not isinstance(items, list):
            raise MalformedData("items must be a list")
        budget.charge(len(items), MalformedData)
        values = [_decode(item, depth + 1, budget) for item in items]
        return tuple(values) if kind == "tuple" else values
    if kind == "dict":
        return _decode_dict(_fields(node, "items")[0], depth, budget)
    if kind == "generator":
        return _decode_generator(_decode(_fields(node, "state")[0], depth + 1, budget))
    if kind == "pcg":
        return _decode_pcg(*_fields(node, "kind", "v"))
    raise MalformedData(f"unknown node type {kind!r}")


def _decode_array(dtype: object, shape: object, data: object, budget: _Budget) -> np.ndarray:
    if not _DTYPE.match(_text(dtype)):
        raise MalformedData(f"an array dtype the grader does not accept: {dtype!r}")
    if (
        not isinstance(shape, list)
        or len(shape) > MAX_DEPTH
        or not all(type(n) is int and n >= 0 for n in shape)
    ):
        raise MalformedData("an array shape must be a list of non-negative ints")
    try:
        kind = np.dtype(dtype)
    except TypeError:
        raise MalformedData(f"not a dtype: {dtype!r}") from None
    size = math.prod(shape) * kind.itemsize
    # A zero-size array is charged as if each empty axis had length 1: its shape alone (2**26, 0)
    # makes a test that broadcasts it allocate, though its data is empty.
    budget.charge(math.prod(max(n, 1) for n in shape) * max(kind.itemsize, 1), MalformedData)
    try:
        raw = base64.b64decode(_text(data), validate=True)
    except ValueError:
        raise MalformedData("array data is not base64") from None
    if len(raw) != size or kind.itemsize == 0:
        raise MalformedData(f"array data has {len(raw)} bytes, its dtype and shape need {size}")
    return np.frombuffer(raw, dtype=kind).reshape(shape).copy()


def _decode_dict(items: object, depth: int, budget: _Budget) -> dict:
    if not isinstance(items, list):
        raise MalformedData("dict items must be a list")
    budget.charge(len(items), MalformedData)
    result = {}
    for pair in items:
        if not isinstance(pair, list) or len(pair) != 2:
            raise MalformedData("a dict item must be a [key, value] pair")
        key = _decode(pair[0], depth + 1, budget)
        try:
            hash(key)
        except TypeError:
            raise MalformedData("a dict key must be hashable") from None
        result[key] = _decode(pair[1], depth + 1, budget)
    return result


def _decode_pcg(name: object, numbers: object) -> np.random.Generator:
    if name not in _PCG_GENERATORS:
        raise MalformedData(f"an unknown PCG generator {name!r}")
    if not isinstance(numbers, list) or len(numbers) != len(_PCG_LIMITS):
        raise MalformedData("a pcg node holds four numbers")
    values = []
    for text, limit in zip(numbers, _PCG_LIMITS, strict=True):
        if not isinstance(text, str) or not re.fullmatch(r"[0-9]{1,39}", text) or int(text) >= limit:
            raise MalformedData("a pcg node's numbers must be decimal, each within its range")
        values.append(int(text))
    state, inc, has_uint32, uinteger = values
    return _decode_generator(
        {
            "bit_generator": name,
            "state": {"state": state, "inc": inc},
            "has_uint32": has_uint32,
            "uinteger": uinteger,
        }
    )


def _decode_generator(state: object) -> np.random.Generator:
    name = state.get("bit_generator") if isinstance(state, dict) else None
    if name not in _BIT_GENERATORS:
        raise MalformedData(f"an unknown bit generator {name!r}")
    bit_generator = getattr(np.random, name)(0)  # a fixed seed: its state is replaced next
    try:
        bit_generator.state = state
    except (TypeError, ValueError, KeyError, OverflowError):
        raise MalformedData(f"not a valid {name} state") from None
    return np.random.Generator(bit_generator)


# ---------------------------------------------------------------------------------------------
# The kernel's end. Everything below runs inside the student's (untrusted) kernel; the grader
# treats its answers as claims to be validated, never as verdicts.

_started: dict[str, object] = {}


def kernel_startup_line() -> str:
    """An IPython ``exec_lines`` entry that installs this file in a kernel as ``MODULE_NAME``.

    It binds no name in the notebook's namespace: the source is executed in a fresh module that
    is registered in ``sys.modules``, and ``start`` records what the notebook may later change.
    """
    with open(__file__, encoding="utf-8") as handle:
        source = handle.read()
    boot = (
        "import sys, types\n"
        f"module = types.ModuleType({MODULE_NAME!r})\n"
        f"exec(compile({source!r}, '<course grader wire>', 'exec'), module.__dict__)\n"
        f"sys.modules[{MODULE_NAME!r}] = module\n"
        "module.start()\n"
    )
    encoded = base64.b64encode(boot.encode("utf-8")).decode("ascii")
    return f'exec(__import__("base64").b64decode("{encoded}").decode(), {{"__name__": "{MODULE_NAME}_boot"}})'


SERVE_CODE = f'__import__("sys").modules["{MODULE_NAME}"].serve()'
"""The code the grader runs in the kernel for a session of requests (one per test cell)."""


def _shell():
    from IPython import get_ipython

    return get_ipython()


def _watched_modules() -> dict[str, object]:
    import numpy.linalg
    import numpy.random
    import numpy.testing

    return {
        "numpy": np,
        "numpy.linalg": numpy.linalg,
        "numpy.testing": numpy.testing,
        "numpy.random": numpy.random,
    }


def _hooks(shell) -> dict[str, object]:
    """The interpreter and IPython hooks through which code can rewrite or skip later cells."""
    state: dict[str, object] = {
        "sys.settrace": sys.gettrace(),
        "sys.setprofile": sys.getprofile(),
        "builtins.__import__": builtins.__import__,
    }
    if shell is not None:
        for name in ("input_transformers_cleanup", "input_transformers_post", "ast_transformers"):
            state[f"IPython {name}"] = tuple(getattr(shell, name, ()))
        state["IPython custom_exceptions"] = tuple(shell.custom_exceptions)
    return state


def start() -> None:
    """Record, before any student code runs, what a suspicious notebook might replace."""
    _started["modules"] = {
        name: {key: value for key, value in vars(module).items() if callable(value)}
        for name, module in _watched_modules().items()
    }
    per_request = ("input", "raw_input", "getpass")
    _started["builtins"] = {k: v for k, v in vars(builtins).items() if k not in per_request}
    _started["hooks"] = _hooks(_shell())


def _first_builtin_exception(error: BaseException) -> str:
    for cls in type(error).__mro__:
        if getattr(builtins, cls.__name__, None) is cls and issubclass(cls, Exception):
            return cls.__name__
    return "Exception"


def _message(error: BaseException) -> str:
    try:
        text = str(error)
    except Exception:  # noqa: BLE001 - a message that cannot be printed is no message
        text = ""
    return text if len(text) <= MAX_MESSAGE_CHARS else text[:MAX_MESSAGE_CHARS] + " …"


def _describe(namespace: dict, name: str) -> dict:
    if name not in namespace:
        return {"kind": "missing"}
    value = namespace[name]
    if callable(value):
        return {"kind": "function"}
    try:
        return {"kind": "value", "value": encode(value)}
    except NotPlainData as error:
        return {"kind": "unreadable", "type": type(value).__name__, "why": str(error)}


def _adapter(piece: str):
    """Lesson 8's locked adapter for ``piece`` (``transformer_course.adapters``): it builds the
    notebook's class, loads plain weights into it and runs it, so only plain data leaves."""
    from transformer_course.adapters import ADAPTERS

    return ADAPTERS[piece]


def _run(function, piece: str | None, args: list, kwargs: dict) -> dict:
    """The reply for one call of ``function`` (through ``piece``'s adapter when given): its result,
    or the exception it raised."""
    try:
        if piece is None:
            result = function(*args, **kwargs)
        else:  # the grader's adapter builds and runs the notebook's class
            result = _adapter(piece)(function, *args, **kwargs)
    except Exception as error:
        return {"status": "raised", "type": _first_builtin_exception(error), "message": _message(error)}
    try:
        return {"status": "returned", "value": encode(result)}
    except NotPlainData as error:
        return {"status": "unreadable", "type": type(result).__name__, "why": str(error)}


def _call(namespace: dict, request: dict) -> dict:
    function = namespace.get(request["name"])
    if function is None or not callable(function):
        return {"status": "missing"}
    args, kwargs = decode(request["args"]), decode(request["kwargs"])
    reply = _run(function, request.get("adapter"), args, kwargs)
    try:
        after = [encode(args), encode(kwargs)]
    except NotPlainData as error:
        return {"status": "unreadable", "type": "argument", "why": f"an argument now holds {error}"}
    if after != [request["args"], request["kwargs"]]:
        reply["args_after"], reply["kwargs_after"] = after
    return reply


def _call_many(namespace: dict, request: dict) -> dict:
    """The replies to a batch of calls of one function, in order, up to the first that did not
    return (a loop of calls in a test stops there too)."""
    replies = []
    for args, kwargs in request["calls"]:
        one = {"name": request["name"], "args": args, "kwargs": kwargs, "adapter": request.get("adapter")}
        reply = _call(namespace, one)
        replies.append(reply)
        if reply["status"] != "returned":
            break
    return {"status": "batch", "replies": replies}


def _generators(value: object) -> list[np.random.Generator]:
    """The ``np.random.Generator`` objects in decoded plain data, at any depth."""
    if isinstance(value, np.random.Generator):
        return [value]
    if isinstance(value, tuple | list):
        return [g for item in value for g in _generators(item)]
    if isinstance(value, dict):
        return [g for item in value.values() for g in _generators(item)]
    return []


def _call_repeatedly(namespace: dict, request: dict) -> dict:
    """The replies to ``times`` calls of one function with the same arguments, up to the first that
    did not return, as a loop of calls in a test gives them: each call gets fresh copies of the
    arguments, except that its generators are the same objects, advancing from call to call. The
    arguments as the calls left them (their generators advanced) come back as ``_call`` sends them.
    """
    function = namespace.get(request["name"])
    if function is None or not callable(function):
        return {"status": "missing"}
    times = request["times"]
    if type(times) is not int or not 0 < times <= MAX_REPEATS:
        return {"status": "malformed", "message": f"a number of calls outside 1..{MAX_REPEATS}"}
    args, kwargs = decode(request["args"]), decode(request["kwargs"])
    shared = {id(g): g for g in _generators([args, kwargs])}  # deepcopy's memo: passed, not copied
    replies = []
    for _ in range(times):
        call_args, call_kwargs = copy.deepcopy([args, kwargs], dict(shared))
        reply = _run(function, request.get("adapter"), call_args, call_kwargs)
        replies.append(reply)
        if reply["status"] != "returned":
            break
    reply = {"status": "repeated", "replies": replies}
    after = [encode(args), encode(kwargs)]
    if after != [request["args"], request["kwargs"]]:
        reply["args_after"], reply["kwargs_after"] = after
    return reply


def _other_processes() -> list[str]:
    """Command lines of processes the notebook started that are still running: in the sandbox's
    own PID namespace (the kernel's parent is its init, pid 1) every process but the kernel and
    init; elsewhere the kernel's descendants."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                    state, parent = handle.read().rsplit(")", 1)[1].split()[:2]
            except (OSError, ValueError):
                continue
            if state != "Z":  # a zombie has finished; only its exit status is left
                parents[int(entry)] = int(parent)
    me = os.getpid()
    if os.getppid() == 1:
        found = {pid for pid in parents if pid not in (1, me)}
    else:
        found, frontier = set(), {me}
        while frontier:
            frontier = {pid for pid, parent in parents.items() if parent in frontier}
            found |= frontier
    commands = []
    for pid in sorted(found):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                commands.append(handle.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()[:80])
        except OSError:
            continue
    return commands


def _report() -> list[str]:
    """What the notebook changed that a test might rely on, in words (for the instructor)."""
    if not _started:
        return ["the grader's kernel bridge did not start"]
    found = []
    for name, module in _watched_modules().items():
        current = vars(module)
        for key, original in _started["modules"].get(name, {}).items():
            if current.get(key) is not original:
                found.append(f"{name}.{key} was replaced")
    current_builtins = vars(builtins)
    for key, original in _started["builtins"].items():
        if current_builtins.get(key) is not original:
            found.append(f"builtins.{key} was replaced")
    for key, original in _hooks(_shell()).items():
        if _started["hooks"].get(key) != original:
            found.append(f"{key} was changed")
    shell = _shell()
    if shell is not None:
        for event, callbacks in shell.events.callbacks.items():
            if any(getattr(c, "__module__", None) == "__main__" for c in callbacks):
                found.append(f"the notebook registered an IPython {event!r} callback")
    left = _other_processes()
    if left:
        count = f"{len(left)} processes it started were" if len(left) > 1 else "a process it started was"
        found.append(f"{count} still running at the end (e.g. {left[0]!r})")
    return found


def answer(request: dict, namespace: dict) -> dict:
    """The reply to one grader request about the notebook's ``namespace``."""
    if request["op"] == "describe":
        return {"names": {name: _describe(namespace, name) for name in request["names"]}}
    if request["op"] == "call":
        return _call(namespace, request)
    if request["op"] == "call_many":
        return _call_many(namespace, request)
    if request["op"] == "call_repeatedly":
        return _call_repeatedly(namespace, request)
    if request["op"] == "report":
        return {"notes": _report()}
    return {"status": "malformed", "message": f"unknown request {request['op']!r}"}


def serve() -> None:
    """Answer the grader's requests until it sends ``END_OF_REQUESTS``.

    The requests and replies travel over the kernel's stdin channel, the one ``input()`` uses: each
    reply (a JSON object; ``{"status": "ready"}`` first) is the prompt of the next input request,
    and the grader's answer to that prompt is the next request. One cell serves all the calls of
    a test cell, so a call costs one message each way instead of the execution of a cell. An
    interrupt (the grader's timeout) during a call ends it with the reply ``interrupted``.
    """
    shell = _shell()
    reply: dict = {"status": "ready"}
    while True:
        text = shell.kernel.raw_input(json.dumps(reply))
        if text == END_OF_REQUESTS:
            return
        try:
            reply = answer(json.loads(text), shell.user_ns)
        except KeyboardInterrupt:
            reply = {"status": "interrupted"}
