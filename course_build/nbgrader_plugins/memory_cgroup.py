"""A memory and process cgroup per grading sandbox, where the machine lets the grader make one.

``RLIMIT_DATA`` counts a process's private memory only: pages it shares (``mmap`` with
``MAP_SHARED``), memfd files and files in a tmpfs are outside it, so a kernel limited to 1 GiB
could hold several more and leave the host's OOM killer to pick someone else. A memory cgroup
counts all of them. Each sandbox gets one, a child of the grader's own cgroup (cgroup v2, or the
v1 ``memory`` and ``pids`` hierarchies): ``memory.max`` (v1: ``memory.limit_in_bytes``) with no
swap, and ``pids.max``; the sandbox's first process joins it before it starts bubblewrap, so
everything in the sandbox is counted; it is removed when the kernel is gone.

Where no cgroup can be made (not root, cgroups not delegated: ``locate`` tries to make one),
``CgroupSupport.problem`` says why and the sandbox falls back to the seccomp rule against memfd
and shared anonymous memory plus size-limited private tmpfs
(``course_build.nbgrader_plugins.seccomp_filter``).
"""

import os
import signal
import time
import uuid
from dataclasses import dataclass
from functools import cache
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PREFIX = "course-sandbox-"


@dataclass(frozen=True)
class CgroupSupport:
    """Where sandbox cgroups go: one parent directory per hierarchy (v2: one for both)."""

    version: int
    memory_parent: Path | None = None
    pids_parent: Path | None = None
    problem: str | None = None


def _own_paths(proc_cgroup: str) -> dict[str, str]:
    """``/proc/self/cgroup`` as controller -> path (``""`` for the v2 hierarchy)."""
    paths = {}
    for line in proc_cgroup.splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(","):
            paths[name] = path
    return paths


def _parent(root: Path, own: str | None) -> Path:
    """Our own cgroup's directory when it is visible under ``root``, else ``root``."""
    if own:
        candidate = root / own.lstrip("/")
        if candidate.is_dir():
            return candidate
    return root


def locate(root: Path = CGROUP_ROOT, proc_cgroup: str | None = None) -> CgroupSupport:
    """Where a child cgroup with memory and pids limits can be made, tried by making one."""
    if proc_cgroup is None:
        try:
            proc_cgroup = Path("/proc/self/cgroup").read_text()
        except OSError as error:
            return CgroupSupport(0, problem=f"/proc/self/cgroup is unreadable ({error})")
    own = _own_paths(proc_cgroup)
    if (root / "cgroup.controllers").is_file():
        parent = _parent(root, own.get(""))
        enabled = (parent / "cgroup.subtree_control").read_text().split()
        if not {"memory", "pids"} <= set(enabled):
            return CgroupSupport(2, problem=f"{parent} does not delegate the memory and pids controllers")
        support = CgroupSupport(2, parent, parent)
    elif (root / "memory" / "memory.limit_in_bytes").is_file() and (root / "pids").is_dir():
        support = CgroupSupport(
            1, _parent(root / "memory", own.get("memory")), _parent(root / "pids", own.get("pids"))
        )
    else:
        return CgroupSupport(0, problem=f"no cgroup memory controller under {root}")
    try:
        SandboxCgroup(support, memory_bytes=2**30, processes=16).remove()
    except OSError as error:
        return CgroupSupport(support.version, problem=f"a cgroup cannot be made here ({error})")
    return support


@cache
def support() -> CgroupSupport:
    """This machine's ``locate()``, found once per process."""
    return locate()


class SandboxCgroup:
    """One sandbox's cgroup(s): made with limits, joined by writing a pid to ``procs_files``."""

    def __init__(self, where: CgroupSupport, *, memory_bytes: int, processes: int) -> None:
        name = f"{PREFIX}{uuid.uuid4().hex[:12]}"
        self.version = where.version
        self.directories: list[Path] = []
        try:
            if where.version == 2:
                folder = self._make(where.memory_parent / name)
                (folder / "memory.max").write_text(str(memory_bytes))
                (folder / "memory.swap.max").write_text("0")
                (folder / "pids.max").write_text(str(processes))
            else:
                memory = self._make(where.memory_parent / name)
                (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
                swap = memory / "memory.memsw.limit_in_bytes"
                if swap.exists():  # swap accounting is on: memory + swap within the same limit
                    swap.write_text(str(memory_bytes))
                pids = self._make(where.pids_parent / name)
                (pids / "pids.max").write_text(str(processes))
        except OSError:
            self.remove()
            raise

    def _make(self, folder: Path) -> Path:
        folder.mkdir()
        self.directories.append(folder)
        return folder

    @property
    def procs_files(self) -> list[str]:
        """Files a process writes its pid to, to join every hierarchy of this cgroup."""
        return [str(folder / "cgroup.procs") for folder in self.directories]

    def ran_out_of_memory(self) -> bool:
        """Whether the kernel hit the memory limit and the OOM killer ended a process of it."""
        folder = self.directories[0] if self.directories else None
        if folder is None:
            return False
        events = folder / ("memory.events" if self.version == 2 else "memory.oom_control")
        try:
            fields = dict(line.split() for line in events.read_text().splitlines() if line.strip())
        except (OSError, ValueError):
            return False
        return int(fields.get("oom_kill", "0")) > 0

    def remove(self) -> None:
        """Kill what is left in the cgroup and remove it (a removed cgroup frees its memory)."""
        for folder in reversed(self.directories):
            deadline = time.monotonic() + 5
            while folder.exists():
                try:
                    for pid in (folder / "cgroup.procs").read_text().split():
                        os.kill(int(pid), signal.SIGKILL)
                    folder.rmdir()
                except ProcessLookupError:
                    continue
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.02)
        self.directories = []
