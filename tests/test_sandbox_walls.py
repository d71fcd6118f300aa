"""The sandbox's walls without starting one (fast): the seccomp filter, the memory cgroup's
placement and its fallback, and the command that joins them to bubblewrap."""

from pathlib import Path

from course_build.nbgrader_plugins import memory_cgroup, sandbox, seccomp_filter
from course_build.nbgrader_plugins.memory_cgroup import CgroupSupport, locate


def test_the_filter_compiles_and_denies_more_without_a_cgroup():
    with_cgroup = seccomp_filter.filter_program(count_shared_memory=True)
    without = seccomp_filter.filter_program(count_shared_memory=False)
    assert with_cgroup and without and len(without) > len(with_cgroup)
    assert {"add_key", "keyctl", "request_key", "ptrace", "mount", "bpf", "unshare", "setns"} <= set(
        seccomp_filter.DENIED
    )


def test_no_cgroup_controller_is_a_problem_in_words(tmp_path):
    assert "no cgroup memory controller" in locate(tmp_path, "0::/\n").problem


def test_a_v2_parent_that_does_not_delegate_memory_is_a_problem(tmp_path):
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids")
    (tmp_path / "grader").mkdir()
    (tmp_path / "grader" / "cgroup.subtree_control").write_text("cpu")
    support = locate(tmp_path, "0::/grader\n")
    assert support.version == 2 and "does not delegate" in support.problem


def test_own_cgroup_paths_are_read_per_controller():
    paths = memory_cgroup._own_paths("9:name=systemd:/\n4:memory:/jobs/a\n3:cpu,cpuacct:/\n0::/\n")
    assert paths["memory"] == "/jobs/a" and paths["cpuacct"] == "/" and paths[""] == "/"


def test_a_cgroup_that_cannot_be_made_falls_back_to_the_seccomp_mode(monkeypatch, tmp_path):
    missing = tmp_path / "no-such-hierarchy"
    monkeypatch.setattr(memory_cgroup, "support", lambda: CgroupSupport(1, missing, missing))
    walls = sandbox.Walls("cgroup", sandbox.Limits())
    try:
        assert walls.cgroup is None and "making the sandbox's cgroup failed" in walls.fallback
        assert Path(walls.filter_path).read_bytes() == seccomp_filter.filter_program(
            count_shared_memory=False
        )
        argv = walls.launch(["/usr/bin/bwrap", "--seccomp", "3"])
        assert argv[:5] == ["/bin/sh", "-c", sandbox.LAUNCH, "sh", walls.filter_path] and argv[5] == "--"
    finally:
        walls.close()
    assert not Path(walls.filter_path).exists()


def _cgroup_with_events(folder: Path, version: int, events: str) -> memory_cgroup.SandboxCgroup:
    """A SandboxCgroup over ``folder`` (not a real cgroup) whose OOM counters read ``events``."""
    cgroup = memory_cgroup.SandboxCgroup.__new__(memory_cgroup.SandboxCgroup)
    cgroup.version, cgroup.directories = version, [folder]
    (folder / ("memory.events" if version == 2 else "memory.oom_control")).write_text(events)
    return cgroup


def test_a_kill_for_memory_is_read_from_the_cgroups_counter_and_outlives_the_cleanup(tmp_path):
    """v2's memory.events and v1's memory.oom_control both count ``oom_kill``; the kernel manager
    still knows after its kernel (and cgroup) are cleaned up, where the grader asks why it died."""
    v2 = _cgroup_with_events(tmp_path, 2, "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n")
    assert v2.ran_out_of_memory()
    (tmp_path / "v1").mkdir()
    v1 = _cgroup_with_events(tmp_path / "v1", 1, "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    assert not v1.ran_out_of_memory()

    class _Walls:  # a sandbox's walls whose cgroup is ``cgroup``; closing removes nothing here
        def __init__(self, cgroup):
            self.cgroup = cgroup

        def ran_out_of_memory(self):
            return self.cgroup.ran_out_of_memory()

        def close(self):
            self.cgroup = None

    manager = sandbox.SandboxedKernelManager()
    assert manager.killed_for_memory() is None, "no cgroup: the grader cannot tell"
    manager._walls = _Walls(v2)
    assert manager.killed_for_memory() is True
    manager._close_walls()
    assert manager.killed_for_memory() is True and manager.ran_out_of_memory()
    manager._walls = _Walls(v1)
    manager._close_walls()
    assert manager.killed_for_memory() is False
    manager._walls = _Walls(None)
    assert manager.killed_for_memory() is None
