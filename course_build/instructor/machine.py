"""What this machine (or this container, or this Slurm task) lets grading use: cores and memory.

``grade_batch.default_jobs`` sizes the parallel nbgrader processes from these, so a batch uses
every core it was given without more kernels than memory holds. Both read what the process is
really allowed, not what the host has: the CPU affinity (Slurm's ``--cpus-per-task`` and
``taskset`` set it) and a cgroup's CPU quota (Kubernetes' CPU limit), the physical memory and a
cgroup's memory limit (Kubernetes' memory limit, Slurm's ``--mem``), cgroup v2 or v1.
"""

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except OSError:
        return None


def _cgroup_dirs(controller: str, root: Path, proc_self_cgroup: Path) -> list[Path]:
    """The folders of the cgroups holding this process for ``controller`` (v1: ``memory``, ``cpu``;
    v2: ``""``), from its own up to the hierarchy's root."""
    dirs = []
    for line in (_read(proc_self_cgroup) or "").splitlines():
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(",") if controller else controllers == "":
            top = root / controller if controller else root
            own = top / path.lstrip("/")
            dirs += [own, *(parent for parent in own.parents if parent == top or top in parent.parents)]
    return dirs


def cpu_quota(root: Path = CGROUP_ROOT, proc_self_cgroup: Path = Path("/proc/self/cgroup")) -> float | None:
    """The smallest CPU quota (in cores) of the cgroups holding this process; None if unlimited."""
    quotas = []
    for folder in _cgroup_dirs("", root, proc_self_cgroup):
        fields = (_read(folder / "cpu.max") or "").split()
        if len(fields) == 2 and fields[0].isdigit():
            quotas.append(int(fields[0]) / int(fields[1]))
    for folder in _cgroup_dirs("cpu", root, proc_self_cgroup):
        quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
        if quota and period and quota.isdigit():  # -1: no quota
            quotas.append(int(quota) / int(period))
    return min(quotas) if quotas else None


def memory_limit(root: Path = CGROUP_ROOT, proc_self_cgroup: Path = Path("/proc/self/cgroup")) -> int | None:
    """The smallest memory limit (bytes) of the cgroups holding this process; None if unlimited."""
    limits = []
    for folder in _cgroup_dirs("", root, proc_self_cgroup):
        value = _read(folder / "memory.max")
        if value and value.isdigit():  # "max": no limit
            limits.append(int(value))
    for folder in _cgroup_dirs("memory", root, proc_self_cgroup):
        value = _read(folder / "memory.limit_in_bytes")
        if value and value.isdigit() and int(value) < 2**60:  # v1 writes a huge number for "none"
            limits.append(int(value))
    return min(limits) if limits else None


def usable_cores() -> int:
    """Cores this process may run on: its CPU affinity, capped by a cgroup CPU quota."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = cpu_quota()
    if quota is not None:
        cores = min(cores, math.floor(quota))
    return max(1, cores)


def usable_memory() -> int:
    """Bytes of memory this process may use: the physical memory, capped by a cgroup limit."""
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    limit = memory_limit()
    return min(physical, limit) if limit is not None else physical
