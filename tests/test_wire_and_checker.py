"""The plain-data wire format and the checker's proxies, without a kernel (fast).

The kernel's end of the wire (``wire.answer``) runs here on an ordinary namespace, with every
request and reply passed through JSON as the real pipes and kernel outputs pass them.
"""

import asyncio
import io
import json
import struct
from collections import namedtuple
from queue import Empty

import numpy as np
import pytest
import zmq
from kernel_stand_in import ask_through_json

from course_build.checking import wire
from course_build.checking.checker import (
    CheckError,
    KernelLink,
    StudentFunction,
    bind_names,
    names_used,
    read_frame,
    run_test_cell,
)
from course_build.nbgrader_plugins.kernel_session import KernelSession
from course_build.test_cells import defined_names

PLAIN_VALUES = [
    None,
    True,
    0,
    -(2**200),
    1.5,
    float("inf"),
    -0.0,
    complex(1, -2),
    "zoë ✓",
    np.float32(0.25),
    np.int64(-7),
    np.bool_(True),
    np.arange(12, dtype=np.int16).reshape(3, 4),
    np.zeros((0, 3)),
    np.array(5.0),
    np.array([[True, False]]),
    np.array(["ab", "c"]),
    np.arange(6.0).reshape(2, 3).T,  # not contiguous
    np.arange(3, dtype=">f8"),  # big-endian
    (1, [2.0, {"k": np.ones(2)}], ()),
    {"W_q": np.eye(2), 3: "three", (1, 2): None},
]


def _roundtrip(value):
    return wire.decode(json.loads(json.dumps(wire.encode(value))))


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return type(b) is dict and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and np.isnan(a):
        return np.isnan(b)
    return type(a) is type(b) and a == b and str(a) == str(b)


@pytest.mark.parametrize("value", PLAIN_VALUES, ids=lambda v: type(v).__name__)
def test_plain_values_cross_the_wire_unchanged(value):
    assert _same(_roundtrip(value), value)


def test_nan_crosses_the_wire():
    assert np.isnan(_roundtrip(float("nan")))


@pytest.mark.parametrize("bit_generator", ["PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"])
def test_a_generator_arrives_in_the_same_state(bit_generator):
    rng = np.random.Generator(getattr(np.random, bit_generator)(5))
    rng.standard_normal(3)
    rng.integers(0, 10, dtype=np.int32)  # keeps half of a 64-bit draw for the next one
    copy = _roundtrip(rng)
    assert isinstance(copy, np.random.Generator)
    assert type(copy.bit_generator) is type(rng.bit_generator)
    assert np.array_equal(
        copy.integers(0, 2**31, size=4, dtype=np.int32), rng.integers(0, 2**31, size=4, dtype=np.int32)
    )
    assert np.array_equal(copy.standard_normal(4), rng.standard_normal(4))


def test_the_default_generator_travels_as_one_small_node():
    """A sampler test sends a generator thousands of times: its node is a handful of JSON values."""
    node = wire.encode(np.random.default_rng(5))
    assert node["t"] == "pcg" and len(json.dumps(node)) < 150


PCG = wire.encode(np.random.default_rng(5))


@pytest.mark.parametrize(
    "node",
    [
        {**PCG, "kind": "MT19937"},
        {**PCG, "v": PCG["v"][:3]},
        {**PCG, "v": ["-1", *PCG["v"][1:]]},
        {**PCG, "v": ["1e3", *PCG["v"][1:]]},
        {**PCG, "v": [str(2**128), *PCG["v"][1:]]},
        {**PCG, "v": [*PCG["v"][:2], "2", "0"]},
        {**PCG, "v": [*PCG["v"][:3], str(2**32)]},
        {**PCG, "v": [5, *PCG["v"][1:]]},
        {**PCG, "v": "0 0 0 0"},
        {**PCG, "extra": 1},
    ],
    ids=[
        "other-kind",
        "three-numbers",
        "negative",
        "exponent",
        "state-too-big",
        "flag-2",
        "half-too-big",
        "not-text",
        "not-a-list",
        "extra-field",
    ],
)
def test_a_forged_pcg_generator_is_refused(node):
    with pytest.raises(wire.MalformedData):
        wire.decode(node)


def test_subclasses_arrive_as_plain_values():
    class Liar(np.ndarray):
        def __eq__(self, other):
            return np.ones(self.shape, dtype=bool)

    Pair = namedtuple("Pair", "output weights")
    value = _roundtrip(Pair(np.arange(3.0).view(Liar), 2))
    assert type(value) is tuple and type(value[0]) is np.ndarray
    assert not (value[0] == 7).any()


@pytest.mark.parametrize(
    "value",
    [
        object(),
        b"bytes",
        {1, 2},
        np.array([object()]),
        np.array(["2020-01-01"], dtype="datetime64[D]"),
        print,
    ],
    ids=lambda v: type(v).__name__,
)
def test_anything_else_is_refused(value):
    with pytest.raises(wire.NotPlainData):
        wire.encode(value)


def test_deep_or_huge_values_are_refused():
    nested: list = []
    for _ in range(wire.MAX_DEPTH + 2):
        nested = [nested]
    with pytest.raises(wire.NotPlainData):
        wire.encode(nested)
    with pytest.raises(wire.NotPlainData):
        wire.encode(np.zeros(1000), limit=100)


ARRAY = {"t": "array", "dtype": "<f8", "shape": [2], "data": "AAAAAAAA8D8AAAAAAAAAQA=="}


@pytest.mark.parametrize(
    "node",
    [
        {"t": "pickle", "v": "gASV"},
        {"t": "int", "v": 3},
        {"t": "int", "v": "1e3"},
        {"t": "bool", "v": 1},
        {"t": "float", "v": 1.5},
        {"t": "float", "v": "one"},
        {"t": "str", "v": "a", "extra": 1},
        {**ARRAY, "dtype": "|O8"},
        {**ARRAY, "dtype": "<M8"},
        {**ARRAY, "shape": [3]},
        {**ARRAY, "shape": [-2]},
        {**ARRAY, "shape": [2.0]},
        {**ARRAY, "data": "not base64!"},
        {"t": "scalar", "dtype": "<f8", "shape": [1], "data": "AAAAAAAA8D8="},
        {"t": "dict", "items": [[ARRAY, {"t": "none"}]]},
        {"t": "generator", "state": {"t": "str", "v": "PCG64"}},
        {"t": "list", "items": "abc"},
        ["t", "none"],
    ],
)
def test_malformed_data_is_refused(node):
    with pytest.raises(wire.MalformedData):
        wire.decode(node)


def test_a_huge_declared_array_is_refused_before_allocation():
    with pytest.raises(wire.MalformedData):
        wire.decode({"t": "array", "dtype": "<f8", "shape": [10**6, 10**6], "data": ""})


# --- the checker's proxies, against a namespace standing in for the kernel -------------------


STUDENT_CODE = """
import numpy as np

def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)

def in_place(x):
    x -= 1
    return None

class HeadsError(ValueError):
    pass

def split_heads(x, n_heads):
    raise HeadsError(f"{n_heads} heads do not divide {x.shape[-1]}")

def odd(x):
    raise KeyboardInterrupt

def draw(rng):
    return float(rng.standard_normal())

def tensor_like(x):
    return object()

def identity(*args, **kwargs):
    return args, kwargs

weight_on_key0 = np.float64(0.881)
unreadable_value = {1, 2}
"""


def _namespace():
    namespace: dict = {}
    exec(STUDENT_CODE, namespace)  # noqa: S102 - a stand-in for the student's kernel
    return namespace


def _run(code, namespace=None, replies=None):
    namespace = namespace if namespace is not None else _namespace()
    names = sorted(names_used(code) & defined_names(STUDENT_CODE))
    return run_test_cell(code, names, ask_through_json(namespace, replies))


def test_a_correct_function_passes_and_prints_its_confirmation():
    result = _run(
        "import numpy as np\n"
        "_s = softmax(np.array([[1.0, 2.0], [3.0, 3.0]]))\n"
        "assert type(_s) is np.ndarray and np.allclose(_s.sum(axis=-1), 1.0)\n"
        "assert 0.8 < weight_on_key0 < 0.9 and type(weight_on_key0) is np.float64\n"
        'print("✓ ok")'
    )
    assert result == {"printed": {"stdout": "✓ ok\n", "stderr": ""}, "error": None}


def test_a_failed_assertion_gives_its_message():
    result = _run('import numpy as np\nassert softmax(np.zeros(2))[0] == 1.0, "rows must sum to 1"')
    assert result["error"] == {"ename": "AssertionError", "evalue": "rows must sum to 1"}


def test_changes_to_an_argument_stay_in_theask_through_json():
    result = _run(
        "import numpy as np\n_x = np.array([1.0, 2.0])\nin_place(_x)\n"
        'assert np.array_equal(_x, [1.0, 2.0]), "changed its input"'
    )
    assert result["error"] is None


def test_a_generator_argument_advances_as_if_the_function_ran_here():
    result = _run(
        "import numpy as np\n_rng = np.random.default_rng(3)\n_a, _b = draw(_rng), draw(_rng)\n"
        "assert _a != _b and draw(np.random.default_rng(3)) == _a"
    )
    assert result["error"] is None


def test_exceptions_arrive_as_their_builtin_type_with_their_message():
    result = _run(
        "import numpy as np\ntry:\n    split_heads(np.zeros((3, 10)), 4)\nexcept ValueError as _e:\n"
        "    assert type(_e) is ValueError and 'do not divide' in str(_e)\n"
        "else:\n    raise AssertionError('no ValueError')"
    )
    assert result["error"] is None


def test_plain_arguments_of_every_kind_reach_the_function():
    result = _run(
        "import numpy as np\n"
        "_a, _k = identity(np.eye(2, dtype=np.float32), [1, 'b'], mask=None, rng=np.random.default_rng(1))\n"
        "assert _a[0].dtype == np.float32 and _a[1] == [1, 'b'] and _k['mask'] is None\n"
        "assert isinstance(_k['rng'], np.random.Generator)"
    )
    assert result["error"] is None


@pytest.mark.parametrize(
    "reply, ename",
    [
        ({"status": "timeout", "message": "did not finish within 5 s"}, "TimeoutError"),
        ({"status": "dead", "message": "the kernel died"}, "DeadKernelError"),
        ({"status": "malformed", "message": "no answer"}, "GradingError"),
        ({"status": "returned", "value": {"t": "pickle"}}, "GradingError"),
        ({"status": "returned"}, "GradingError"),
        (
            {
                "status": "raised",
                "type": "ValueError",
                "message": "x",
                "args_after": {"t": "list", "items": []},
            },
            "GradingError",
        ),
        ({"status": "bogus"}, "GradingError"),
    ],
)
def test_failures_of_the_kernel_fail_the_cell_even_when_the_test_swallows_them(reply, ename):
    code = (
        "import numpy as np\n"
        "try:\n    softmax(np.zeros(2))\nexcept BaseException:\n    pass\n"
        "try:\n    softmax(np.zeros(2))\nexcept BaseException:\n    pass\n"
    )
    result = _run(code, replies={"softmax": reply})
    assert result["error"]["ename"] == ename


def test_a_return_value_that_is_not_plain_data_fails_even_inside_except_exception():
    result = _run("try:\n    tensor_like(1)\nexcept Exception:\n    pass\n")
    assert result["error"]["ename"] == "GradingError"
    assert "cannot read" in result["error"]["evalue"]


def test_a_keyboard_interrupt_in_the_function_is_not_a_pass():
    ask = ask_through_json(_namespace())
    link = KernelLink(ask)
    with pytest.raises(KeyboardInterrupt):
        StudentFunction("odd", link)(1)  # in the real kernel: the interrupt after a timeout


def test_a_value_the_grader_cannot_read_fails_the_cell():
    result = _run("assert unreadable_value")
    assert result["error"]["ename"] == "GradingError"
    assert "unreadable_value holds" in result["error"]["evalue"]


def test_a_name_the_notebook_lacks_is_a_name_error():
    namespace = _namespace()
    del namespace["softmax"]
    result = run_test_cell("softmax(1)", ["softmax"], ask_through_json(namespace))
    assert result["error"] == {"ename": "NameError", "evalue": "name 'softmax' is not defined"}


def test_a_test_passing_something_that_is_not_plain_data_is_told_so():
    result = _run("softmax(object())")
    assert result["error"]["ename"] == "TypeError"
    assert "only plain data" in result["error"]["evalue"]


def test_the_test_cannot_be_reached_from_the_function():
    """The hidden tests' helpers live in the checker; the kernel's namespace never sees them."""
    namespace = _namespace()
    exec("def cheat(x):\n    return _oracle(x)\n", namespace)  # noqa: S102
    code = "def _oracle(x):\n    return x\nassert cheat(3) == 3"
    result = run_test_cell(code, ["cheat"], ask_through_json(namespace))
    assert result["error"] == {"ename": "NameError", "evalue": "name '_oracle' is not defined"}


def _counting(namespace):
    """A kernel ``ask`` that also records every request it receives."""
    requests, ask = [], ask_through_json(namespace)

    def counted(request):
        requests.append(request)
        return ask(request)

    return requests, counted


def test_call_many_sends_a_batch_in_one_message_and_gives_what_a_loop_gives():
    code = (
        "import numpy as np\n"
        "from transformer_course.checks import call_many\n"
        "_calls = [((np.random.default_rng([7, _i]),), {}) for _i in range(300)]\n"
        "_batch = call_many(draw, _calls)\n"
        "_loop = [draw(np.random.default_rng([7, _i])) for _i in range(300)]\n"
        "assert _batch == _loop and len(set(_batch)) == 300\n"
        "_x = np.array([1.0, 2.0])\n"
        "assert call_many(in_place, [((_x,), {})] * 3) == [None] * 3 and np.array_equal(_x, [1.0, 2.0])\n"
        "_rng = np.random.default_rng(3)\n"
        "assert call_many(draw, [((_rng,), {})]) == [float(np.random.default_rng(3).standard_normal())]\n"
        "assert float(_rng.standard_normal()) == float(np.random.default_rng(3).standard_normal(2)[1])\n"
        "assert call_many(draw, []) == []\n"
        "try:\n    call_many(draw, [((_rng,), {}), ((), {'rng': _rng})])\n"
        "except ValueError as _e:\n    assert 'its own np.random.Generator' in str(_e)\n"
        "else:\n    raise AssertionError('a shared generator was accepted')\n"
    )
    requests, ask = _counting(_namespace())
    result = run_test_cell(code, ["draw", "in_place"], ask)
    assert result["error"] is None, result
    ops = [r["op"] for r in requests]
    assert ops.count("call_many") == 3 and ops.count("call") == 300  # the batches, and the loop


def test_call_many_stops_at_the_first_call_that_raises_like_a_loop():
    namespace = _namespace()
    fragile = (
        "seen = []\ndef fragile(x):\n    seen.append(x)\n    if x == 2:\n        raise ValueError('two')\n"
    )
    fragile += "    return x"
    exec(fragile, namespace)  # noqa: S102 - a stand-in for the student's kernel
    code = (
        "from transformer_course.checks import call_many\n"
        "try:\n    call_many(fragile, [((_i,), {}) for _i in range(5)])\n"
        "except ValueError as _e:\n    assert str(_e) == 'two'\nelse:\n    raise AssertionError('no error')\n"
    )
    assert run_test_cell(code, ["fragile"], ask_through_json(namespace))["error"] is None
    assert namespace["seen"] == [0, 1, 2]


@pytest.mark.parametrize(
    "reply",
    [
        {"status": "batch", "replies": []},
        {"status": "batch", "replies": [{"status": "returned", "value": wire.encode(1.0)}]},  # 1 of 2
        {"status": "batch", "replies": [{"status": "returned", "value": wire.encode(1.0)}] * 3},
        {"status": "batch", "replies": "many"},
        {"status": "batch", "replies": [7, 8]},
        {"status": "returned", "value": wire.encode([1.0, 2.0])},
    ],
)
def test_a_forged_batch_reply_fails_the_cell_even_when_the_test_swallows_it(reply):
    code = (
        "import numpy as np\nfrom transformer_course.checks import call_many\n"
        "try:\n    call_many(softmax, [((np.zeros(2),), {})] * 2)\nexcept BaseException:\n    pass\n"
    )
    result = _run(code, replies={"softmax": reply})
    assert result["error"]["ename"] == "GradingError"


def test_call_many_in_the_kernel_copies_arguments_but_shares_generators():
    from transformer_course.checks import call_many

    namespace = _namespace()
    x, rng = np.array([1.0, 2.0]), np.random.default_rng(5)
    assert call_many(namespace["in_place"], [((x,), {})] * 2) == [None, None]
    assert np.array_equal(x, [1.0, 2.0])
    (first,) = call_many(namespace["draw"], [((), {"rng": rng})])
    replay = np.random.default_rng(5)
    assert first == float(replay.standard_normal())
    assert float(rng.standard_normal()) == float(replay.standard_normal()), "the generator advanced"
    with pytest.raises(ValueError, match="its own np.random.Generator"):
        call_many(namespace["draw"], [((rng,), {}), ((rng,), {})])


def test_call_repeatedly_sends_one_message_and_gives_what_a_loop_with_one_generator_gives():
    code = (
        "import numpy as np\n"
        "from transformer_course.checks import call_repeatedly\n"
        "_rng, _replay = np.random.default_rng(7), np.random.default_rng(7)\n"
        "_draws = call_repeatedly(draw, 300, _rng)\n"
        "assert _draws == [float(_replay.standard_normal()) for _ in range(300)]\n"
        "assert len(set(_draws)) == 300\n"
        "assert float(_rng.standard_normal()) == float(_replay.standard_normal()), 'the generator advanced'\n"
        "_x = np.array([1.0, 2.0])\n"
        "assert call_repeatedly(in_place, 3, _x) == [None] * 3 and np.array_equal(_x, [1.0, 2.0])\n"
        "assert call_repeatedly(identity, 2, 'a', k=[1, 2]) == [(('a',), {'k': [1, 2]})] * 2\n"
    )
    requests, ask = _counting(_namespace())
    result = run_test_cell(code, ["draw", "identity", "in_place"], ask)
    assert result["error"] is None, result
    assert [r["op"] for r in requests].count("call_repeatedly") == 3 and len(requests) == 4  # + describe


def test_call_repeatedly_gives_each_call_fresh_copies_and_stops_at_the_first_raise():
    namespace = _namespace()
    exec(  # noqa: S102 - a stand-in for the student's kernel
        "seen = []\ndef fragile(x, rng):\n    x += 1\n    seen.append(float(x[0]))\n"
        "    if len(seen) == 3:\n        raise ValueError('three')\n    return float(rng.random())",
        namespace,
    )
    code = (
        "import numpy as np\nfrom transformer_course.checks import call_repeatedly\n"
        "try:\n    call_repeatedly(fragile, 5, np.zeros(1), np.random.default_rng(0))\n"
        "except ValueError as _e:\n    assert str(_e) == 'three'\n"
        "else:\n    raise AssertionError('no error')\n"
    )
    assert run_test_cell(code, ["fragile"], ask_through_json(namespace))["error"] is None
    assert namespace["seen"] == [1.0, 1.0, 1.0], "each call starts from the test's own argument"


@pytest.mark.parametrize(
    "reply",
    [
        {"status": "repeated", "replies": []},
        {"status": "repeated", "replies": [{"status": "returned", "value": wire.encode(1.0)}]},  # 1 of 2
        {"status": "repeated", "replies": [{"status": "returned", "value": wire.encode(1.0)}] * 3},
        {"status": "repeated", "replies": [{"status": "raised", "type": "ValueError", "message": ""}, {}]},
        {"status": "repeated", "replies": "many"},
        {"status": "batch", "replies": [{"status": "returned", "value": wire.encode(1.0)}] * 2},
    ],
)
def test_a_forged_repeated_reply_fails_the_cell_even_when_the_test_swallows_it(reply):
    code = (
        "import numpy as np\nfrom transformer_course.checks import call_repeatedly\n"
        "try:\n    call_repeatedly(softmax, 2, np.zeros(2))\nexcept BaseException:\n    pass\n"
    )
    result = _run(code, replies={"softmax": reply})
    assert result["error"]["ename"] == "GradingError"


def test_call_repeatedly_in_the_kernel_copies_arguments_but_shares_generators():
    from transformer_course.checks import call_repeatedly

    namespace = _namespace()
    x, rng, replay = np.array([1.0, 2.0]), np.random.default_rng(5), np.random.default_rng(5)
    assert call_repeatedly(namespace["in_place"], 2, x) == [None, None]
    assert np.array_equal(x, [1.0, 2.0])
    assert call_repeatedly(namespace["draw"], 3, rng=rng) == [
        float(replay.standard_normal()) for _ in range(3)
    ]
    assert float(rng.standard_normal()) == float(replay.standard_normal()), "the generator advanced"


def test_the_kernel_refuses_a_number_of_repeats_outside_its_limit():
    for times in (0, wire.MAX_REPEATS + 1, 2.0):
        request = {
            "op": "call_repeatedly",
            "name": "draw",
            "times": times,
            "args": wire.encode([]),
            "kwargs": wire.encode({}),
        }
        assert wire.answer(request, _namespace())["status"] == "malformed"


def test_bound_names_are_plain_values_and_proxies():
    link = KernelLink(ask_through_json(_namespace()))
    bound = bind_names(link, ["softmax", "weight_on_key0", "not_there"])
    assert isinstance(bound["softmax"], StudentFunction) and bound["softmax"].__name__ == "softmax"
    assert type(bound["weight_on_key0"]) is np.float64 and "not_there" not in bound


def test_after_a_fatal_failure_no_further_call_reaches_theask_through_json():
    calls = []

    def ask(request):
        calls.append(request)
        return {"status": "dead", "message": "the kernel died"}

    link = KernelLink(ask)
    function = StudentFunction("softmax", link)
    for _ in range(3):
        with pytest.raises(CheckError):
            function(1)
    assert len(calls) == 1


# --- caps on what the kernel sends, before it is parsed --------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "[" + "[]," * 600_000 + "[]]",  # 1.8 MB of empty lists: hundreds of MB once parsed
        "[" * 100_000 + "]" * 100_000,  # deeper than the stack: RecursionError without the cap
        '{"a":' * 200 + "1" + "}" * 200,
        '"\\ud800"',  # a lone surrogate: parses, then fails when the notebook is saved
        '{"notes": ["ok", "\\udfff"]}',
        '{"notes": ["ok", "\\uDBFF"]}',  # escapes may be upper case
        '{"\\ud800": 1}',  # a key
        '"\ud800"',  # the character itself, in text that was never bytes
        "[1, 2",
        "NaN-ish garbage",
        b"\xff\xfe not UTF-8",
    ],
    ids=[
        "many-values",
        "deep-lists",
        "deep-dicts",
        "surrogate",
        "surrogate-inside",
        "surrogate-upper-case",
        "surrogate-key",
        "surrogate-raw",
        "cut",
        "garbage",
        "bytes",
    ],
)
def test_hostile_json_is_malformed_data_not_a_crash(text):
    with pytest.raises(wire.MalformedData):
        wire.loads(text)


def test_an_overlong_message_is_refused_before_it_is_parsed():
    with pytest.raises(wire.MalformedData, match="characters"):
        wire.loads('"' + "a" * 1000 + '"', max_chars=100)


@pytest.mark.parametrize(
    "text, value",
    [
        ('"\\ud83d\\ude00 [[[[[[{{{{"', "\U0001f600 [[[[[[{{{{"),  # a pair is one character; brackets in text
        ('["a\\"[[[[", "]]]"]', ['a"[[[[', "]]]"]),  # an escaped quote does not end the string
        ('{"status": "returned", "value": {"t": "none"}}', {"status": "returned", "value": {"t": "none"}}),
    ],
)
def test_ordinary_json_reads_as_json(text, value):
    assert wire.loads(text) == value


def test_a_real_reply_nested_as_deep_as_the_wire_allows_is_read():
    nested: object = 1.0
    for _ in range(wire.MAX_DEPTH - 1):
        nested = {"k": [nested]} if isinstance(nested, float) else [nested]
    reply = json.dumps(
        {"status": "returned", "value": wire.encode(nested), "array": wire.encode(np.ones(2**18))}
    )
    assert wire.decode(wire.loads(reply)["value"]) == nested


def test_a_zero_size_array_with_a_huge_shape_is_refused():
    """Shape (2**26, 0) has no data, but a test that broadcasts it allocates gigabytes."""
    for shape in ([2**26, 0], [0, 2**40]):
        with pytest.raises(wire.MalformedData):
            wire.decode({"t": "array", "dtype": "<f8", "shape": shape, "data": ""})
    empty = wire.decode({"t": "array", "dtype": "<f8", "shape": [0, 3], "data": ""})
    assert empty.shape == (0, 3)


@pytest.mark.parametrize(
    "payload",
    [b"[" * 5000 + b"]" * 5000, b'{"op": "reply", "reply": "\\ud800"}', b"\xff", b'["not an object"]'],
    ids=["deep", "surrogate", "not-utf8", "not-an-object"],
)
def test_a_hostile_frame_is_a_value_error(payload):
    stream = io.BytesIO(struct.pack(">Q", len(payload)) + payload)
    with pytest.raises(ValueError):
        read_frame(stream)


class _FakeKernelClient:
    """The parts of nbclient's client a KernelSession uses, with the kernel's stdin prompts scripted."""

    def __init__(self, prompts: list[object]) -> None:
        self.prompts = prompts
        self.sent: list[str] = []
        self.kc = self
        self.km = self
        self.iopub_channel = self
        self.clear_before_next_output = False
        self.serving = False

    async def execute(self, code, **kwargs):
        self.serving = True
        return "serve-cell"

    async def get_stdin_msg(self, timeout=None):
        if not self.serving or not self.prompts:
            raise Empty
        prompt = self.prompts.pop(0)
        if isinstance(prompt, BaseException):
            raise prompt
        return {"parent_header": {"msg_id": "serve-cell"}, "content": {"prompt": prompt}}

    async def get_msg(self, timeout=None):
        await asyncio.sleep(3600)  # the serve cell never finishes in these tests

    def input(self, text):
        self.sent.append(text)

    async def is_alive(self):
        return True


def _session_reply(prompts: list[object]) -> dict:
    async def run() -> dict:
        session = KernelSession(_FakeKernelClient(prompts), 0, call_timeout=2, grace=0.1)
        await session.start()
        reply = await session.ask({"op": "describe", "names": []})
        session._outputs.cancel()
        return reply

    return asyncio.run(run())


@pytest.mark.parametrize(
    "prompt, why",
    [
        ('{"names": ' + "[" * 50_000 + "]" * 50_000 + "}", "RecursionError"),
        ('{"names": ' + "[" * 500 + "]" * 500 + "}", "levels deep"),
        ('{"notes": ["\\ud800"]}', "surrogate"),
        ("[" + "[]," * 600_000 + "[]]", "values"),
        (ValueError("forged header"), "ValueError"),
        (wire.MalformedData("nested too deep"), "nested too deep"),
        (RecursionError(), "RecursionError"),
    ],
    ids=["past-the-stack", "deep", "surrogate", "many-values", "unpack-error", "unpack-caps", "recursion"],
)
def test_a_hostile_reply_fails_the_session_with_a_clear_message(prompt, why):
    reply = _session_reply(['{"status": "ready"}', prompt])
    assert reply["status"] == "malformed" and why in reply["message"]


def test_an_ordinary_reply_reaches_the_checker():
    assert _session_reply(['{"status": "ready"}', '{"names": {}}']) == {"names": {}}


def test_the_kernel_manager_parses_every_message_with_the_caps():
    from course_build.nbgrader_plugins.sandbox import MAX_MESSAGE_BYTES, SandboxedKernelManager

    manager = SandboxedKernelManager()
    assert manager.session.unpack is wire.loads_message_part
    assert manager.context.getsockopt(zmq.MAXMSGSIZE) == MAX_MESSAGE_BYTES


def test_printed_text_with_odd_characters_is_repaired_but_the_caps_still_hold():
    assert wire.loads_message_part(b'{"text": "a\\ud800b \xff"}') == {"text": "a?b \ufffd"}
    with pytest.raises(wire.MalformedData):
        wire.loads_message_part(b"[" * 1000 + b"]" * 1000)


def test_a_request_of_many_calls_gets_each_call_its_time():
    from course_build.nbgrader_plugins.sandboxed_execute import _calls_in

    assert _calls_in({"op": "call", "name": "f"}) == 1
    assert _calls_in({"op": "call_many", "calls": [[{}, {}]] * 7}) == 7
    assert _calls_in({"op": "call_repeatedly", "times": 1000}) == 1000
    assert _calls_in({"op": "call_repeatedly", "times": 10**9}) == wire.MAX_REPEATS
    assert _calls_in({"op": "call_repeatedly", "times": "many"}) == 1
