"""One pre-imported checker per nbgrader process, forked afresh for each notebook.

A checker started from nothing for every notebook (``checker.CheckerProcess``) pays a Python start
and, in the first test cell with a PyTorch oracle, ``import torch`` (about 2 s of CPU) again and
again. Here each nbgrader process starts, on its first notebook, one *zygote*: a process started
exactly as a checker is (``python -I``, a clean environment, an empty temporary directory, one math
thread) that imports what the lesson's test cells use (numpy, the test helpers, PyTorch where they
use it) once, then waits. For each notebook it forks
a child that is exactly today's checker, only pre-imported: a fresh process with its own empty
directory and stderr log, serving the frame protocol of ``checker.main`` on a socket of its own. No
state crosses from one student's notebook to the next, because every child starts from the
zygote's untouched state and nothing ever runs in the zygote itself.

The protocol: the nbgrader process makes a socket pair per notebook and sends one end, with the
checker's log file and directory, to the zygote over a Unix socket (``socket.send_fds``). The
zygote forks; the child serves the frames on that end; the zygote answers with the child's pid and
a pidfd, so that killing a checker on a timeout can never hit another process that reused its pid.
The zygote exits when its control socket closes (the nbgrader process ended or closed it) or its
parent changes, and reaps its children as they end. A zygote belongs to the process that started
it: a forked copy of that process starts its own.

Whatever goes wrong with the zygote (it died, cannot fork, does not answer), ``start_checker``
falls back to a checker started from nothing for the rest of the process: the zygote can make
grading slower, never fail a student.
"""

import ast
import atexit
import contextlib
import functools
import importlib
import json
import os
import random
import select
import signal
import socket
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Iterable
from typing import BinaryIO, NoReturn

import numpy as np

from course_build.checking import checker
from course_build.checking.checker import CheckerProcess, checker_environment

# What the zygote imports before it forks, so that each checker has it already: numpy (the zygote
# reseeds it in each child) and the strict helpers every test compares with, then what the
# lesson's test cells import (``modules_to_preload``). A lesson whose tests use PyTorch also gets
# its functional API, the model for the PyTorch oracles and ``torch._dynamo`` (and sympy under it),
# which PyTorch imports on the first module built on the meta device: lesson 8's parameter counts
# (``count_parameters``) paid about 2 s of CPU for it in every notebook. A lesson whose tests do not
# use PyTorch (lessons 1 and 10) does not pay its import (1.9 s of CPU per grading process).
ALWAYS_PRELOADED = ("numpy", "transformer_course.checks")
WITH_TORCH = ("torch", "torch.nn.functional", "torch._dynamo", "transformer_course.translation.model")
PRELOADED = (*ALWAYS_PRELOADED, *WITH_TORCH)  # what a zygote imports when not told the lesson's tests
START_TIMEOUT_S = 120.0  # the first answer waits for the imports, slow on a loaded machine
FORK_TIMEOUT_S = 30.0
EXIT_TIMEOUT_S = 5.0
WAKE_S = 1.0  # how often an idle zygote reaps its children and checks that its parent lives
MAX_REQUEST_BYTES = 64 * 1024


class ZygoteGone(RuntimeError):
    """The zygote died, could not fork or did not answer."""


# --- the nbgrader process's side --------------------------------------------------------------


class Zygote:
    """The nbgrader process's handle on its zygote: starts it, asks it for checkers, ends it."""

    def __init__(self, preload: tuple[str, ...] = PRELOADED) -> None:
        self.owner, self.preload = os.getpid(), preload
        self._answered = False
        self._directory = tempfile.TemporaryDirectory(prefix="course-checker-zygote-")
        self._log = open(os.path.join(self._directory.name, "stderr.txt"), "w+b")  # noqa: SIM115
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-m", "course_build.checking.zygote", str(theirs.fileno()), *preload],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=self._log,
                cwd=self._directory.name,
                env=checker_environment(),
            )
        except BaseException:
            ours.close()
            self._log.close()
            self._directory.cleanup()
            raise
        finally:
            theirs.close()
        self._control = ours

    def fork(self, channel: socket.socket, log: BinaryIO, directory: str) -> tuple[int, int]:
        """A checker child serving ``channel``, writing its stderr to ``log``, working in ``directory``:
        its pid and a pidfd for it. ZygoteGone when none came."""
        timeout_s = FORK_TIMEOUT_S if self._answered else START_TIMEOUT_S
        request = json.dumps({"cwd": directory}).encode("utf-8")
        try:
            socket.send_fds(self._control, [request], [channel.fileno(), log.fileno()])
            ready, _, _ = select.select([self._control], [], [], timeout_s)
            if not ready:
                raise ZygoteGone(f"the checker zygote did not answer within {timeout_s:g} s")
            data, fds, _, _ = socket.recv_fds(self._control, MAX_REQUEST_BYTES, 1)
        except OSError as error:
            raise ZygoteGone(f"the checker zygote stopped ({error}); {self._log_tail()}") from None
        try:
            reply = json.loads(data) if data else {}
        except ValueError:
            reply = {}
        pid = reply.get("pid") if isinstance(reply, dict) else None
        if not isinstance(pid, int) or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            why = reply.get("error") if isinstance(reply, dict) and reply.get("error") else "no checker"
            raise ZygoteGone(f"the checker zygote gave {str(why)[:200]}; {self._log_tail()}")
        self._answered = True
        return pid, fds[0]

    def _log_tail(self) -> str:
        self.process.poll()
        self._log.seek(0)
        tail = self._log.read()[-600:].decode("utf-8", "replace").strip()
        return f"exit code {self.process.returncode}; its output: {tail or '(empty)'}"

    def close(self) -> None:
        """End the zygote (its control socket's end tells it to go) and remove its directory."""
        self._control.close()
        try:
            self.process.wait(timeout=EXIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()
        self._directory.cleanup()


class ForkedProcess:
    """What ``CheckerProcess`` uses of a ``Popen``, for a checker the zygote forked.

    Signals go through a pidfd, which always means this one process. The checker is the zygote's
    child, not ours, so its exit code is the zygote's to read: once it has ended ``returncode`` is
    ``ENDED``.
    """

    ENDED = -1

    def __init__(self, pid: int, pidfd: int) -> None:
        self.pid, self._pidfd = pid, pidfd
        self.returncode: int | None = None
        self.killed = False

    def poll(self) -> int | None:
        return self.wait(timeout=0) if self.returncode is None else self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        """Wait for the process to end; ``subprocess.TimeoutExpired`` after ``timeout`` (0: just look)."""
        if self.returncode is None:
            ready, _, _ = select.select([self._pidfd], [], [], timeout)
            if ready:
                self.returncode = self.ENDED
            elif timeout:
                raise subprocess.TimeoutExpired(f"checker {self.pid}", timeout)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):  # it has ended already
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            self.killed = True

    def release(self) -> None:
        """Close the pidfd (once the checker is done with)."""
        os.close(self._pidfd)


class ForkedChecker(CheckerProcess):
    """A checker forked by the zygote; otherwise exactly a ``CheckerProcess``."""

    def __init__(self, zygote: Zygote) -> None:
        self._zygote = zygote
        super().__init__()

    def _start(self) -> tuple[ForkedProcess, BinaryIO, BinaryIO]:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            pid, pidfd = self._zygote.fork(theirs, self._log, self._directory.name)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()  # the child holds its own copy: its end closes when the child ends
        fd = ours.detach()
        return ForkedProcess(pid, pidfd), os.fdopen(os.dup(fd), "wb"), os.fdopen(fd, "rb")

    def _exit_status(self) -> str:
        if self.process.poll() is None:
            return f"forked checker {self.process.pid} still running"
        return f"forked checker {self.process.pid} {'killed' if self.process.killed else 'ended'}"

    def close(self) -> None:
        try:
            super().close()
        finally:
            self.process.release()


_zygote: Zygote | None = None
_zygote_failed = False


def modules_to_preload(test_cells: Iterable[str]) -> tuple[str, ...]:
    """What a zygote for these test cells (their code) imports: ``ALWAYS_PRELOADED``, every module
    the cells import (read from their code, never run), and ``WITH_TORCH`` where that includes
    PyTorch. A cell that does not parse adds nothing (its checker reports the error)."""
    modules = dict.fromkeys(ALWAYS_PRELOADED)
    for code in test_cells:
        modules.update(dict.fromkeys(_imported_modules(code)))
    if any(name == "torch" or name.startswith("torch.") for name in modules):
        modules.update(dict.fromkeys(WITH_TORCH))
    return tuple(modules)


@functools.cache
def _imported_modules(code: str) -> tuple[str, ...]:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return ()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append(node.module)
    return tuple(found)


def start_checker(preload: tuple[str, ...] = PRELOADED) -> CheckerProcess:
    """A checker for one notebook: forked from this process's zygote (started on first use, with
    ``preload`` imported), or, where the zygote cannot give one, started from nothing as before.

    A process grades one lesson, so its zygote keeps the first ``preload`` it was given: a test
    that needs a module it lacks imports it in its own checker (slower, never different)."""
    global _zygote_failed
    if _zygote_failed:
        return CheckerProcess()
    try:
        return ForkedChecker(_own_zygote(preload))
    except (ZygoteGone, OSError) as gone:
        print(f"course_build: checkers start one per notebook from now on: {gone}", file=sys.stderr)
        _zygote_failed = True
        close_zygote()
        return CheckerProcess()


def _own_zygote(preload: tuple[str, ...]) -> Zygote:
    """This process's zygote, started on first use (a forked copy of a process starts its own)."""
    global _zygote
    if _zygote is None or _zygote.owner != os.getpid():
        if _zygote is None:
            atexit.register(close_zygote)
        _zygote = Zygote(preload)
    return _zygote


def close_zygote() -> None:
    """End this process's zygote, if it has one (at exit, or when it failed)."""
    global _zygote
    if _zygote is not None and _zygote.owner == os.getpid():
        _zygote.close()
    _zygote = None


# --- the zygote's side ------------------------------------------------------------------------


def _reap_children() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _become_checker(control: socket.socket, channel: int, log: int, directory: str) -> NoReturn:
    """In the forked child: become a checker serving ``channel``, exactly as a started one would."""
    code = 1
    try:
        control.close()
        os.chdir(directory)
        os.dup2(log, 2)
        os.dup2(channel, 0)
        os.dup2(channel, 1)
        os.close(channel)
        os.close(log)
        # a started checker draws fresh seeds; every child of one zygote would share its draws
        random.seed()
        np.random.seed()
        code = checker.main()
    except BaseException:  # noqa: BLE001 - reported in the checker's log, which the grader reads
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        os._exit(code)  # never back into the zygote's loop


def _fork_checker(control: socket.socket, request: bytes, fds: list[int]) -> dict:
    """Fork a checker for one request; the reply (with the child's pid) and, apart, its pidfd."""
    try:
        message = json.loads(request)
        directory = message["cwd"]
        if len(fds) != 2 or not isinstance(directory, str):
            raise ValueError("a request needs a directory, a socket and a log file")
    except (ValueError, KeyError, TypeError) as error:
        return {"error": f"a malformed request ({error})"}
    channel, log = fds
    try:
        pid = os.fork()
    except OSError as error:
        return {"error": f"no fork ({error})"}
    if pid == 0:
        _become_checker(control, channel, log, directory)
    try:
        return {"pid": pid, "pidfd": os.pidfd_open(pid)}  # the child is not reaped before this
    except OSError as error:
        os.kill(pid, signal.SIGKILL)  # still unreaped, so still this child
        return {"error": f"no pidfd for the checker ({error})"}


def serve(control: socket.socket) -> int:
    """Fork a checker for each request on ``control`` until it closes or the parent changes."""
    parent = os.getppid()
    while True:
        _reap_children()
        ready, _, _ = select.select([control], [], [], WAKE_S)
        if os.getppid() != parent:
            return 0
        if not ready:
            continue
        try:
            request, fds, _, _ = socket.recv_fds(control, MAX_REQUEST_BYTES, 2)
        except OSError:
            return 0
        if not request and not fds:
            return 0  # the nbgrader process closed its end
        try:
            reply = _fork_checker(control, request, fds)
        finally:
            for fd in fds:
                os.close(fd)  # the child has its copies; ours would keep its socket open
        pidfd = reply.pop("pidfd", None)
        answer = json.dumps(reply).encode("utf-8")
        try:
            if pidfd is None:
                control.send(answer)
            else:
                socket.send_fds(control, [answer], [pidfd])
        except OSError:
            return 0
        finally:
            if pidfd is not None:
                os.close(pidfd)


def main(argv: list[str]) -> NoReturn:
    control = socket.socket(fileno=int(argv[1]))
    for name in argv[2:]:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a test that imports it gets the error in its own checker
            traceback.print_exc()
    code = serve(control)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # torch's interpreter teardown would add a second to every nbgrader process


if __name__ == "__main__":
    main(sys.argv)
