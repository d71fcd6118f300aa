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
