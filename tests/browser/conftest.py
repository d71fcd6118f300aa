"""Headless Chromium for the browser checks: the built book served on localhost, offline.

Every test here needs Debian's Chromium (``/usr/bin/chromium``, or ``$COURSE_CHROMIUM``) driven by
Playwright's Python package; where either is missing the tests are skipped with a message saying
what to install, never silently. Pages are opened in contexts that abort every request not
addressed to the local server, so a page that still needs a CDN fails its checks.
Screenshots land in ``test-artifacts/screenshots/`` (gitignored).
"""

from __future__ import annotations

import functools
import os
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from course_build.paths import REPO_ROOT

CHROMIUM = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
# Flags for a headless run in a container with no network: no sandbox (root), no GPU, and none of
# Chromium's own background traffic (updates, sync, QUIC probing).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Each notebook (and a student's graded copy) opens with an "Open in Colab" badge image from
# Colab's site; offline it is answered with a placeholder so that only unexpected requests show up
# as blocked.
COLAB_BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
BADGE_STAND_IN = '<svg xmlns="http://www.w3.org/2000/svg" width="117" height="20"></svg>'
SCREENSHOTS = REPO_ROOT / "test-artifacts" / "screenshots"
VIEWPORT = {"width": 1280, "height": 900}


def toc_pages() -> list[str]:
    """Documents of the table of contents, in reading order (``book/intro``, ``notebooks/…``)."""
    toc = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    pages = [toc["root"]]
    for part in toc["parts"]:
        pages += [chapter["file"] for chapter in part["chapters"]]
    return pages


def screenshot_path(name: str) -> Path:
    """Where a screenshot called ``name`` is saved (folders made as needed)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / f"{name.replace('/', '__')}.png"


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """A headless Chromium browser, or a skip that says what is missing.

    One per test file, not per session: while Playwright's sync API is started, its event loop
    counts as running in the worker's thread, so any later test file on that pytest-xdist worker
    that calls ``asyncio.run`` would fail (CI stops 33 and 34)."""
    if not CHROMIUM.is_file():
        pytest.skip(
            f"browser checks need Chromium at {CHROMIUM}: install it with "
            "`apt-get install -y chromium` (or set COURSE_CHROMIUM to its path)"
        )
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="browser checks need Playwright: pip install -r requirements-dev.txt"
    )
    playwright = sync_api.sync_playwright().start()
    browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    yield browser
    browser.close()
    playwright.stop()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        """Requests are checked in the browser; the server's access log would only be noise."""


@pytest.fixture(scope="session")
def site_url(built_site) -> Iterator[str]:
    """Base URL (ending in ``/``) of the built site served by a local HTTP server."""
    handler = functools.partial(_QuietHandler, directory=str(built_site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


@dataclass
class Watch:
    """What a page asked for and complained about while it was open."""

    blocked: list[str] = field(default_factory=list)  # non-local requests (aborted)
    failed: list[str] = field(default_factory=list)  # local responses >= 400, or failed loads
    console_errors: list[str] = field(default_factory=list)  # console.error and uncaught errors


def offline_context(
    browser: Any,
    local_prefix: str,
    watch: Watch,
    stand_ins: dict[str, tuple[str, str]] | None = None,
    **options: Any,
) -> Any:
    """A browser context that serves only URLs under ``local_prefix`` and records the rest.

    ``stand_ins`` maps an expected external URL to a ``(content type, body)`` answered locally.
    """
    context = browser.new_context(viewport=VIEWPORT, **options)
    stand_ins = stand_ins or {}

    def route(route: Any) -> None:
        url = route.request.url
        if url.startswith(local_prefix) or url.startswith("data:") or url.startswith("blob:"):
            route.continue_()
        elif url in stand_ins:
            content_type, body = stand_ins[url]
            route.fulfill(status=200, content_type=content_type, body=body)
        else:
            watch.blocked.append(url)
            route.abort()

    context.route("**/*", route)

    def on_response(response: Any) -> None:
        if response.status >= 400:
            watch.failed.append(f"{response.status} {response.url}")

    def on_console(message: Any) -> None:
        if message.type == "error":
            watch.console_errors.append(f"console: {message.text}")

    context.on("response", on_response)
    context.on("console", on_console)
    context.on("weberror", lambda error: watch.console_errors.append(f"uncaught: {error.error}"))
    return context


def free_port() -> int:
    """A TCP port on the loopback that nothing listens on now (for a server a test starts)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
