"""The trusted checker: runs each test cell outside the student's kernel.

One fresh checker process serves each graded notebook for the grading preprocessor
(``course_build.nbgrader_plugins.sandboxed_execute``): forked, pre-imported, by
``course_build.checking.zygote``, or else started as ``python -I -m course_build.checking.checker``.
It never imports student code. For each test cell it executes the cell's code (visible and hidden
tests, as nbgrader restored them) in a fresh namespace where every name the lesson's solution
cells define is bound to what the student's kernel holds under that name:

* a plain value (a number, an array, a list ...) is fetched once, as plain data;
* a function becomes a ``StudentFunction``: calling it sends the plain arguments into the kernel,
  runs the student's function there on copies and brings back the plain result and the builtin
  type and message of an exception it raised (``call_many``: a batch of calls in one message;
  ``call_repeatedly``: one call made many times in one message, for a test that draws thousands of
  samples). The test's own arguments never change, except that a
  ``np.random.Generator`` advances as it did in the kernel; ``call_reporting_inputs`` reports how
  the function left its copies;
* a class (lesson 8's PyTorch modules) is a ``StudentFunction`` too, called only through
  ``through_adapter``: the kernel runs ``transformer_course.adapters``' adapter on the class (build,
  load plain weights, run) and only the resulting array comes back.

So assertions, oracles (``_oracle``, PyTorch references) and expected values exist only here, where
the student's code cannot reach them. A reply that is missing or malformed, a timeout or a dead
kernel fails the test cell whatever the test code does with the error (fail closed).

The process talks to the preprocessor over its stdin/stdout in length-prefixed JSON frames:
``run`` (a test cell) in, ``kernel`` requests out and their ``reply`` in, ``done`` out.
"""

import ast
import builtins
import contextlib
import functools
import io
import json
import os
import select
import struct
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from typing import BinaryIO

import numpy as np

from course_build.checking import wire

CELL_FILENAME = "<test cell>"
MAX_FRAME_BYTES = 1 << 30
PLAIN_KINDS = "numbers, strings, booleans, None, numpy arrays, or tuples/lists/dicts of these"


class CheckError(BaseException):
    """A failure of the grading itself (no answer, a malformed answer, a timeout, a dead kernel).

    It derives from BaseException so that a test's ``except Exception`` cannot turn it into a pass.
    """

    def __init__(self, ename: str, message: str) -> None:
        super().__init__(message)
        self.ename, self.message = ename, message


# --- framing ---------------------------------------------------------------------------------


def write_frame(stream: BinaryIO, message: dict) -> None:
    data = json.dumps(message).encode("utf-8")
    stream.write(struct.pack(">Q", len(data)) + data)
    stream.flush()


def _read_exactly(stream: BinaryIO, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError("the other end closed the pipe")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(stream: BinaryIO) -> dict:
    """The next frame's JSON object; ValueError (``wire.MalformedData``) for one off the caps."""
    (size,) = struct.unpack(">Q", _read_exactly(stream, 8))
    if size > MAX_FRAME_BYTES:
        raise ValueError(f"a frame of {size} bytes is larger than allowed")
    message = wire.loads(_read_exactly(stream, size), max_chars=MAX_FRAME_BYTES)
    if not isinstance(message, dict):
        raise ValueError("a frame must hold a JSON object")
    return message


# --- the kernel, seen from the trusted side ----------------------------------------------------


class KernelLink:
    """Puts requests to the student's kernel (through the preprocessor) and remembers fatal failures.

    ``ask`` sends a request and returns the reply. Once a reply says the kernel timed out, died or
    answered something malformed, ``fatal`` holds that failure and every later request raises it,
    so one broken answer cannot be papered over by the rest of the cell.
    """

    def __init__(self, ask: Callable[[dict], dict]) -> None:
        self._ask = ask
        self.fatal: CheckError | None = None

    def fail(self, ename: str, message: str) -> CheckError:
        if self.fatal is None:
            self.fatal = CheckError(ename, message)
        return self.fatal

    def ask(self, request: dict) -> dict:
        if self.fatal is not None:
            raise self.fatal
        reply = self._ask(request)
        if not isinstance(reply, dict):
            raise self.fail("GradingError", "the grader got no answer from the notebook's kernel")
        status = reply.get("status")
        if status == "timeout":
            raise self.fail("TimeoutError", str(reply.get("message", "the kernel did not answer in time")))
        if status == "dead":
            raise self.fail("DeadKernelError", str(reply.get("message", "the kernel died")))
        if status == "malformed":
            raise self.fail("GradingError", str(reply.get("message", "the kernel's answer was malformed")))
        return reply


def _exception_class(name: object) -> type[Exception]:
    """The builtin exception class a kernel reply names; Exception for anything else."""
    cls = getattr(builtins, name, None) if isinstance(name, str) else None
    if isinstance(cls, type) and issubclass(cls, Exception):
        return cls
    return Exception


def _exception(name: object, message: str) -> Exception:
    for cls in _exception_class(name).__mro__:
        try:
            return cls(message)
        except TypeError:  # e.g. UnicodeDecodeError needs five arguments
            continue
    return Exception(message)


def _carry_generator_states(originals: list, afters: list) -> None:
    """Advance the test's generator arguments as the student's function advanced its copies.

    Drawing from a generator is part of a sampling function's contract (a frequency test calls a
    sampler many times with one generator), so a generator's state is the one change that comes
    back. Arrays, lists, dicts and tuples never do: the test keeps its own data as it wrote it.
    """
    for original, after in zip(originals, afters, strict=True):
        if isinstance(original, np.random.Generator) and isinstance(after, np.random.Generator):
            original.bit_generator.state = after.bit_generator.state


class StudentFunction:
    """Stands for a function of the student's notebook: calling it runs that function in the kernel."""

    def __init__(self, name: str, link: KernelLink, adapter: str | None = None) -> None:
        self.__name__ = self.__qualname__ = name
        self._link = link
        self._adapter = {} if adapter is None else {"adapter": adapter}

    def __repr__(self) -> str:
        return f"<the student's function {self.__name__}>"

    def through_adapter(self, piece: str) -> "StudentFunction":
        """This name (a class of lesson 8) reached through ``transformer_course.adapters``' adapter
        for ``piece``: each call builds and runs the class in the kernel and brings back a plain array
        (``transformer_course.adapters.adapted`` asks for it)."""
        return StudentFunction(self.__name__, self._link, adapter=piece)

    def __call__(self, *args: object, **kwargs: object) -> object:
        """Run the student's function on copies of the arguments; only generators advance here."""
        reply = self._link.ask(
            {"op": "call", "name": self.__name__, **self._adapter, **self._encoded(args, kwargs)}
        )
        return self._result(reply, args, kwargs)

    def call_many(self, calls: list[tuple[tuple, dict]]) -> list[object]:
        """``[self(*args, **kwargs) for args, kwargs in calls]``, sent to the kernel in one message.

        A frequency test calls a sampler thousands of times; one message per call costs
        milliseconds each, a batch costs them once. Each call still runs on its own copies, in
        order, and each call's generators advance as they did in the kernel (tests reach this
        through ``transformer_course.checks.call_many``, which refuses a generator shared by two
        calls: all the calls are sent before any runs). The first call that raises stops the batch
        in the kernel and raises here, as it would stop the loop.
        """
        calls = [(tuple(args), dict(kwargs)) for args, kwargs in calls]
        if not calls:
            return []
        encoded = [self._encoded(args, kwargs) for args, kwargs in calls]
        reply = self._link.ask(
            {
                "op": "call_many",
                "name": self.__name__,
                **self._adapter,
                "calls": [[e["args"], e["kwargs"]] for e in encoded],
            }
        )
        replies = reply.get("replies")
        if (
            reply.get("status") != "batch"
            or not isinstance(replies, list)
            or not 0 < len(replies) <= len(calls)
        ):
            raise self._link.fail(
                "GradingError", f"the kernel's answer to calls of {self.__name__} was malformed"
            )
        results = [
            self._result(one, args, kwargs) for one, (args, kwargs) in zip(replies, calls, strict=False)
        ]
        if len(results) < len(calls):  # the kernel stopped early without a call that failed
            raise self._link.fail("GradingError", f"the kernel answered only some calls of {self.__name__}")
        return results

    def call_repeatedly(self, times: int, args: tuple, kwargs: dict) -> list[object]:
        """``[self(*args, **kwargs) for _ in range(times)]`` with the same generators throughout, in
        one message.

        A frequency test draws thousands of tokens from one distribution: as a loop would, the
        kernel runs each call on fresh copies of the arguments, its generators shared and advancing
        from call to call, and only the results and the generators' final states come back (not
        the arguments once per call, as ``call_many`` must send and return them). The first call
        that raises stops the rest in the kernel and raises here.
        """
        if type(times) is not int or not 0 < times <= wire.MAX_REPEATS:
            raise ValueError(
                f"call_repeatedly: times must be an int from 1 to {wire.MAX_REPEATS}, got {times!r}"
            )
        args, kwargs = tuple(args), dict(kwargs)
        reply = self._link.ask(
            {"op": "call_repeatedly", "name": self.__name__, "times": times, **self._adapter}
            | self._encoded(args, kwargs)
        )
        replies = reply.get("replies")
        if reply.get("status") == "missing":
            raise self._link.fail("NameError", f"name {self.__name__!r} is not defined in the notebook")
        if (
            reply.get("status") != "repeated"
            or not isinstance(replies, list)
            or not 0 < len(replies) <= times
        ):
            raise self._link.fail(
                "GradingError", f"the kernel's answer to calls of {self.__name__} was malformed"
            )
        *earlier, last = replies
        if not all(
            isinstance(one, dict) and one.get("status") == "returned" and "args_after" not in one
            for one in earlier
        ) or not isinstance(last, dict):
            raise self._link.fail(
                "GradingError", f"the kernel's answer to calls of {self.__name__} was malformed"
            )
        results = [self._result(one, args, kwargs) for one in earlier]
        # the arguments as the loop left them (its generators advanced) come with the last call
        final = {key: reply[key] for key in ("args_after", "kwargs_after") if key in reply}
        results.append(self._result({**last, **final}, args, kwargs))
        if len(results) < times:  # the kernel stopped early without a call that failed
            raise self._link.fail("GradingError", f"the kernel answered only some calls of {self.__name__}")
        return results

    def call_reporting_inputs(self, *args: object, **kwargs: object) -> tuple[object, tuple, dict]:
        """Call the function; return its result and its arguments as the student's code left them.

        The arguments come back decoded from the kernel's reply (or from what was sent, when the
        kernel reports no change), as fresh objects that share nothing with the test's own.
        ``transformer_course.checks.inputs_after_call`` uses this to check that a function leaves
        its inputs alone. An exception the function raised is raised here too.
        """
        reply = self._link.ask(
            {"op": "call", "name": self.__name__, **self._adapter, **self._encoded(args, kwargs)}
        )
        result, changed = self._read_reply(reply, args, kwargs)
        if changed is None:
            changed = wire.decode(wire.encode(list(args))), wire.decode(wire.encode(kwargs))
        args_after, kwargs_after = changed
        return result, tuple(args_after), kwargs_after

    def _encoded(self, args: tuple, kwargs: dict) -> dict:
        try:
            return {"args": wire.encode(list(args)), "kwargs": wire.encode(kwargs)}
        except wire.NotPlainData as error:
            raise TypeError(
                f"this test passes {error} to {self.__name__}; tests may pass only plain data ({PLAIN_KINDS})"
            ) from None

    def _result(self, reply: dict, args: tuple, kwargs: dict) -> object:
        """The result a call's reply carries; the test's generators advance as the kernel's did."""
        result, changed = self._read_reply(reply, args, kwargs)
        if changed is not None:
            args_after, kwargs_after = changed
            _carry_generator_states(list(args), args_after)
            _carry_generator_states(list(kwargs.values()), [kwargs_after[key] for key in kwargs])
        return result

    def _read_reply(
        self, reply: object, args: tuple, kwargs: dict
    ) -> tuple[object, tuple[list, dict] | None]:
        """The function's result, and its arguments as it left them where it changed any (else None)."""
        name = self.__name__
        if not isinstance(reply, dict):
            raise self._link.fail("GradingError", f"the kernel's answer to a call of {name} was malformed")
        status = reply.get("status")
        changed = None
        try:
            if "args_after" in reply:
                args_after = wire.decode(reply["args_after"])
                kwargs_after = wire.decode(reply.get("kwargs_after"))
                if not isinstance(args_after, list) or len(args_after) != len(args):
                    raise wire.MalformedData("the arguments came back changed in number")
                if not isinstance(kwargs_after, dict) or kwargs_after.keys() != kwargs.keys():
                    raise wire.MalformedData("the keyword arguments came back changed")
                changed = args_after, kwargs_after
            if status == "returned":
                return wire.decode(reply.get("value")), changed
        except wire.MalformedData as error:
            raise self._link.fail(
                "GradingError", f"{name} sent back data the grader cannot read ({error})"
            ) from None
        if status == "raised":
            raise _exception(reply.get("type"), str(reply.get("message", ""))[: wire.MAX_MESSAGE_CHARS])
        if status == "missing":
            raise self._link.fail("NameError", f"name {name!r} is not defined in the notebook")
        if status == "unreadable":
            raise self._link.fail(
                "GradingError",
                f"{name} returned {reply.get('why') or 'a ' + str(reply.get('type'))}, which the grader "
                f"cannot read: return {PLAIN_KINDS}",
            )
        raise self._link.fail("GradingError", f"the kernel's answer to a call of {name} was malformed")


def bind_names(link: KernelLink, names: list[str]) -> dict[str, object]:
    """The namespace entries for ``names``: plain values, StudentFunctions; missing names left out."""
    if not names:
        return {}
    reply = link.ask({"op": "describe", "names": names})
    described = reply.get("names")
    if not isinstance(described, dict):
        raise link.fail("GradingError", "the kernel's description of the notebook's names was malformed")
    bound: dict[str, object] = {}
    for name in names:
        info = described.get(name)
        kind = info.get("kind") if isinstance(info, dict) else None
        if kind == "missing":
            continue
        if kind == "function":
            bound[name] = StudentFunction(name, link)
        elif kind == "value":
            try:
                bound[name] = wire.decode(info.get("value"))
            except wire.MalformedData as error:
                raise link.fail(
                    "GradingError", f"{name} holds data the grader cannot read ({error})"
                ) from None
        elif kind == "unreadable":
            raise link.fail(
                "GradingError",
                f"{name} holds {info.get('why') or 'a ' + str(info.get('type'))}, which the grader cannot "
                f"read: store {PLAIN_KINDS}",
            )
        else:
            raise link.fail("GradingError", f"the kernel's description of {name} was malformed")
    return bound


# --- running one test cell -------------------------------------------------------------------


def _error_output(error: BaseException) -> dict:
    if isinstance(error, CheckError):
        return {"ename": error.ename, "evalue": error.message}
    try:
        evalue = str(error)
    except Exception:  # noqa: BLE001 - an unprintable message is shown as none
        evalue = ""
    return {"ename": type(error).__name__, "evalue": evalue}


class _Capture:
    """The test's printed output so far; flushed into the cell's outputs before each kernel call."""

    def __init__(self) -> None:
        self.stdout, self.stderr = io.StringIO(), io.StringIO()

    def take(self) -> dict[str, str]:
        taken = {"stdout": self.stdout.getvalue(), "stderr": self.stderr.getvalue()}
        for stream in (self.stdout, self.stderr):
            stream.seek(0)
            stream.truncate()
        return taken


def run_test_cell(code: str, names: list[str], ask: Callable[[dict], dict]) -> dict:
    """Execute one test cell against the kernel behind ``ask``; return its printed output and error.

    ``ask`` receives each kernel request with the test's output so far (``"printed"``) and returns
    the kernel's reply. The result: ``{"printed": {...}, "error": None | {"ename", "evalue"}}``.
    """
    capture = _Capture()
    link = KernelLink(lambda request: ask({**request, "printed": capture.take()}))
    error: BaseException | None = None
    with redirect_stdout(capture.stdout), redirect_stderr(capture.stderr), warnings.catch_warnings():
        warnings.simplefilter("default")
        try:
            namespace = {"__name__": "__main__", "__builtins__": builtins, **bind_names(link, names)}
            exec(compile(code, CELL_FILENAME, "exec"), namespace)  # noqa: S102 - the instructor's tests
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as raised:  # noqa: BLE001 - every failure of a test is its verdict
            error = raised
    if link.fatal is not None:
        error = link.fatal
    return {"printed": capture.take(), "error": None if error is None else _error_output(error)}


def main() -> int:
    """Serve ``run`` requests on stdin/stdout until ``exit`` or the pipe closes."""
    protocol_in = os.fdopen(os.dup(0), "rb")
    protocol_out = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # stray writes to fd 1 (C libraries) must not corrupt the frames

    def ask(request: dict) -> dict:
        write_frame(protocol_out, {"op": "kernel", "request": request})
        message = read_frame(protocol_in)
        return message.get("reply") if message.get("op") == "reply" else None

    while True:
        try:
            message = read_frame(protocol_in)
        except EOFError:
            return 0
        if message.get("op") == "exit":
            return 0
        result = run_test_cell(str(message["code"]), list(message["names"]), ask)
        write_frame(protocol_out, {"op": "done", **result})


# --- driving the checker from the grading preprocessor ----------------------------------------


class CheckerGone(RuntimeError):
    """The checker process died or stopped answering."""


def checker_environment() -> dict[str, str]:
    """The checker's environment: the locale and PATH, nothing else of nbgrader's; one math thread."""
    env = {key: os.environ[key] for key in ("PATH", "LANG", "LC_ALL", "TZ") if key in os.environ}
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0")
    return env


class CheckerProcess:
    """One checker process, started in an empty directory with a clean environment.

    ``process`` is its handle (``kill``, ``poll``, ``wait``); ``_start`` makes the process and
    returns it with the streams the frames go through, so a checker made another way (forked by
    ``course_build.checking.zygote``) shares everything else.
    """

    def __init__(self) -> None:
        self._directory = tempfile.TemporaryDirectory(prefix="course-checker-")
        self._log = open(os.path.join(self._directory.name, "stderr.txt"), "w+b")  # noqa: SIM115
        try:
            self.process, self._to_checker, self._from_checker = self._start()
        except BaseException:
            self._log.close()
            self._directory.cleanup()
            raise

    def _start(self) -> tuple[subprocess.Popen, BinaryIO, BinaryIO]:
        process = subprocess.Popen(
            [sys.executable, "-I", "-m", "course_build.checking.checker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            cwd=self._directory.name,
            env=checker_environment(),
        )
        return process, process.stdin, process.stdout

    def send(self, message: dict) -> None:
        try:
            write_frame(self._to_checker, message)
        except (BrokenPipeError, OSError) as error:
            raise CheckerGone(f"the checker stopped ({error}); {self._log_tail()}") from None

    def receive(self, timeout_s: float) -> dict:
        """The next frame, waiting at most ``timeout_s`` seconds for it to start."""
        deadline = time.monotonic() + timeout_s
        stream = self._from_checker
        while True:
            ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
            if ready:
                break
            if time.monotonic() >= deadline:
                raise CheckerGone(f"the checker did not answer within {timeout_s:g} s")
        try:
            return read_frame(stream)
        except (EOFError, ValueError, OSError) as error:  # a socket's end may say so with a reset
            raise CheckerGone(f"the checker stopped ({error}); {self._log_tail()}") from None

    def _log_tail(self) -> str:
        status = self._exit_status()  # first: a process that has ended has written all its log
        self._log.seek(0)
        tail = self._log.read()[-600:].decode("utf-8", "replace").strip()
        return f"{status}; its stderr: {tail or '(empty)'}"

    def _exit_status(self) -> str:
        self.process.poll()
        return f"exit code {self.process.returncode}"

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                write_frame(self._to_checker, {"op": "exit"})
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        for stream in (self._to_checker, self._from_checker):
            with contextlib.suppress(OSError):  # a frame left unsent to a dead checker is no error
                stream.close()
        self._log.close()
        self._directory.cleanup()


@functools.lru_cache(maxsize=4096)
def names_used(code: str) -> frozenset[str]:
    """Every name the code reads, anywhere (a superset of what it needs from the notebook). Cached:
    a grading process asks it for the same test cells in every notebook (20-40 ms each time)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return frozenset()
    return frozenset(node.id for node in ast.walk(tree) if isinstance(node, ast.Name))


if __name__ == "__main__":
    sys.exit(main())
