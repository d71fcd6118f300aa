"""The grader's end of a session with the student's kernel: requests in, untrusted replies out.

A test cell calls the student's functions many times (lesson 10's sampler test draws 5,000
tokens, 1,000 to a request: ``call_repeatedly``). Executing a cell in the kernel for every call
costs about ten milliseconds of messages and bookkeeping each; a session costs one message each
way per call instead. The grader executes one cell in the kernel, ``wire.SERVE_CODE``, which
reads requests with ``input()`` and sends each reply as the prompt of its next ``input()``
(``wire.serve``), over the kernel's stdin channel; the session relays them and collects what the
cell prints, through the grading client's own output handling (so the per-cell output limit
applies).

Everything the kernel sends is a claim: a reply that is not a JSON object is ``malformed``, and so
is one that breaks ``wire.loads``'s caps (length and number of values, checked before it is parsed;
depth and valid Unicode). The session keeps its own clock: a call that runs past ``call_timeout`` is
interrupted and answered ``timeout``, a kernel that dies is answered ``dead``, a serve cell that
stops answering is answered ``malformed``; after any of these the session answers every later
request the same way.
``end`` tells the kernel to stop serving and says whether it did: if not, the caller restarts it.
"""

import asyncio
import json
import time
from queue import Empty

from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionComplete
from nbclient.util import ensure_async
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell

from course_build.checking import wire

POLL_S = 1.0  # how often a wait for the kernel checks that the kernel and its cell are alive
# What reading a message the kernel forged can raise (the session's unpack is wire.loads)
UNREADABLE = (AttributeError, KeyError, TypeError, ValueError, RecursionError, MemoryError)


def _field(message: object, *path: str) -> object:
    """``message[path[0]][path[1]]...``, or None where a forged message lacks it."""
    for key in path:
        message = message.get(key) if isinstance(message, dict) else None
    return message


def _unreadable(error: BaseException) -> wire.MalformedData:
    detail = str(error) if isinstance(error, wire.MalformedData) else type(error).__name__
    return wire.MalformedData(detail)


class KernelSession:
    """One run of ``wire.serve`` in the kernel of ``client``, for the cell at ``index``."""

    def __init__(self, client: NotebookClient, index: int, call_timeout: float, grace: float) -> None:
        self.client, self.index = client, index
        self.call_timeout, self.grace = call_timeout, grace
        self.cell = new_code_cell(wire.SERVE_CODE, metadata={"execution": {}})
        self.failure: dict | None = None
        self._taken = 0
        self._msg_id: str | None = None
        self._outputs: asyncio.Task | None = None
        self._waiting = False  # the kernel waits for a request

    async def start(self) -> None:
        """Run the serve cell and wait for it to say it is ready (or record why it is not)."""
        kc = self.client.kc
        while True:  # prompts left over from an earlier session whose kernel was restarted
            try:
                await ensure_async(kc.get_stdin_msg(timeout=0))
            except Empty:
                break
        self.client.clear_before_next_output = False
        self._msg_id = await ensure_async(kc.execute(self.cell.source, store_history=False, allow_stdin=True))
        self._outputs = asyncio.ensure_future(self._collect_outputs())
        ready = await self._next_reply(self.call_timeout)
        if self.failure is None and ready != {"status": "ready"}:
            self._fail("malformed", "the notebook's kernel did not start answering the grader")

    async def ask(self, request: dict) -> dict:
        """The kernel's reply to ``request``, or the session's failure."""
        if self.failure is not None:
            return self.failure
        self.client.kc.input(json.dumps(request))
        self._waiting = False
        return await self._next_reply(self.call_timeout)

    async def end(self) -> bool:
        """Stop the serve cell; False if the kernel did not stop within ``grace`` (restart it)."""
        deadline = time.monotonic() + self.grace
        try:
            while not self._outputs.done():
                if self._waiting:
                    self.client.kc.input(wire.END_OF_REQUESTS)
                    self._waiting = False
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                if await self._next_prompt(left) in ("dead", "timeout"):
                    return self._outputs.done()
            return True
        finally:
            if not self._outputs.done():
                self._outputs.cancel()

    def take_outputs(self) -> list[NotebookNode]:
        """What the serve cell printed since the last call."""
        outputs = self.cell.outputs[min(self._taken, len(self.cell.outputs)) :]  # (cleared: fewer)
        self._taken = len(self.cell.outputs)
        return outputs

    # --- internals -------------------------------------------------------------------------------

    async def _collect_outputs(self) -> None:
        """Process the serve cell's iopub messages into ``cell.outputs`` until the kernel is idle."""
        while True:
            try:
                message = await ensure_async(self.client.kc.iopub_channel.get_msg(timeout=None))
                if _field(message, "parent_header", "msg_id") == self._msg_id:
                    self.client.process_message(message, self.cell, self.index)
            except CellExecutionComplete:
                return
            except UNREADABLE as error:
                why = _unreadable(error)
                self._fail("malformed", f"the notebook's kernel sent a message the grader cannot read: {why}")
                return

    async def _next_prompt(self, timeout: float) -> object:
        """The next prompt of the serve cell (any JSON value), or why none came: ``"ended"`` (the
        cell finished), ``"dead"`` (the kernel died) or ``"timeout"``; a ``MalformedData`` saying
        why, if the prompt is not JSON within the caps."""
        kc, deadline = self.client.kc, time.monotonic() + timeout
        while True:
            wait_s = max(0.0, min(POLL_S, deadline - time.monotonic()))
            prompt = asyncio.ensure_future(ensure_async(kc.get_stdin_msg(timeout=wait_s)))
            await asyncio.wait({prompt, self._outputs}, return_when=asyncio.FIRST_COMPLETED)
            if not prompt.done():  # the cell finished: no prompt is coming
                prompt.cancel()
                return "ended"
            try:
                message = prompt.result()
            except UNREADABLE as error:
                return _unreadable(error)
            except Empty:
                if self._outputs.done():
                    return "ended"
                if not await ensure_async(self.client.km.is_alive()):
                    return "dead"
                if time.monotonic() >= deadline:
                    return "timeout"
                continue
            if _field(message, "parent_header", "msg_id") != self._msg_id:
                continue
            self._waiting = True
            text = _field(message, "content", "prompt")
            if not isinstance(text, str):
                return wire.MalformedData("a prompt that is not text")
            try:
                return {"reply": wire.loads(text)}
            except wire.MalformedData as error:
                return error

    async def _next_reply(self, timeout: float) -> dict:
        prompt = await self._next_prompt(timeout)
        if isinstance(prompt, dict) and isinstance(prompt["reply"], dict):
            reply = prompt["reply"]
            if reply.get("status") == "interrupted":
                return self._fail("malformed", "the notebook's code was interrupted")
            return reply
        if prompt == "timeout":
            await ensure_async(self.client.km.interrupt_kernel())
            return self._fail("timeout", f"the notebook's code did not finish within {self.call_timeout:g} s")
        if prompt == "dead":
            return self._fail("dead", "the kernel died while running the notebook's code")
        if prompt == "ended":
            return self._fail("malformed", "the notebook's kernel stopped answering the grader")
        if isinstance(prompt, wire.MalformedData):
            return self._fail(
                "malformed", f"the notebook's kernel sent an answer the grader cannot read: {prompt}"
            )
        return self._fail("malformed", "the notebook's kernel sent a malformed answer")

    def _fail(self, status: str, message: str) -> dict:
        if self.failure is None:
            self.failure = {"status": status, "message": message}
        return self.failure
