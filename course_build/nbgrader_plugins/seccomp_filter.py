"""The seccomp filter of the grading sandbox: system calls a notebook has no use for fail with EPERM.

bubblewrap applies no filter unless given one (``--seccomp FD``), and the sandbox's namespaces and
unprivileged uid leave some kernel interfaces open that reach past the sandbox. Each group below is
denied for a reason:

* **The kernel keyring** (``add_key``, ``keyctl``, ``request_key``): keys belong to a uid on the
  host, not to a namespace, so a key one sandbox stores under its pool uid outlives it and is
  readable by the next sandbox that gets the same uid (a channel between students).
* **Other processes' memory** (``ptrace``, ``process_vm_readv``/``writev``, ``kcmp``): nothing
  in a notebook needs to read or steer another process.
* **Mounts and namespaces** (``mount``, ``umount2``, ``pivot_root``, the new mount API, ``chroot``,
  ``unshare``, ``setns``, and ``clone`` asking for a new namespace; ``clone3``, whose flags a filter
  cannot read, answers ENOSYS so that the C library falls back to ``clone``): the sandbox's view
  of the file system and its namespaces stay as bubblewrap made them.
* **Kernel attack surface a notebook never touches** (``bpf``, ``perf_event_open``,
  ``userfaultfd``, ``io_uring_*``, ``open_by_handle_at``/``name_to_handle_at``): the interfaces
  most kernel exploits start from.
* **The machine itself** (``kexec_*``, ``init_module``/``finit_module``/``delete_module``,
  ``swapon``/``swapoff``, ``reboot``, ``syslog``, ``acct``, ``quotactl``, clocks): a notebook has
  no business with them, and a misconfigured capability must not turn into a host change.
* **Memory the limits do not count** (only where no memory cgroup runs, ``count_shared_memory``
  False): ``memfd_create`` and shared anonymous mappings (``mmap`` with ``MAP_SHARED`` and
  ``MAP_ANONYMOUS``) are outside ``RLIMIT_DATA``; with a cgroup they are counted and stay allowed.

Everything else is allowed: numpy, PyTorch on the CPU, matplotlib, ipykernel and zmq over unix
sockets work under it (the sandbox's slow tests grade real lessons through it). Only the machine's
own architecture is allowed; a system call made through another ABI (``int 0x80``) kills the
process, so the rules cannot be bypassed that way.
"""

import errno
import tempfile
from functools import cache

DENIED = (
    # the kernel keyring: keys persist per uid on the host, across sandboxes
    "add_key",
    "keyctl",
    "request_key",
    # other processes' memory
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    # mounts and namespaces
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "unshare",
    "setns",
    # kernel attack surface
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "open_by_handle_at",
    "name_to_handle_at",
    "lookup_dcookie",
    # the machine itself
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "swapon",
    "swapoff",
    "reboot",
    "syslog",
    "acct",
    "quotactl",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
)
NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
    "CLONE_NEWTIME": 0x00000080,
}
MAP_SHARED, MAP_ANONYMOUS = 0x01, 0x20


class SeccompUnavailable(RuntimeError):
    """libseccomp or its Python bindings are missing, so no filter can be built."""


def _seccomp():
    try:
        import pyseccomp
    except (ImportError, OSError, RuntimeError) as error:  # OSError: libseccomp.so.2 missing
        raise SeccompUnavailable(
            f"the seccomp bindings do not load ({error}); pip install -r requirements-instructor.txt "
            "and apt-get install libseccomp2"
        ) from None
    return pyseccomp


@cache
def filter_program(count_shared_memory: bool) -> bytes:
    """The compiled BPF program bubblewrap loads with ``--seccomp FD``.

    ``count_shared_memory``: True where a memory cgroup counts memfd and shared pages; False
    denies them too (``RLIMIT_DATA`` alone would let them past the memory limit).
    """
    seccomp = _seccomp()
    denied = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in DENIED:
        rules.add_rule(denied, name)
    for flag in NAMESPACE_FLAGS.values():
        rules.add_rule(denied, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    if not count_shared_memory:
        rules.add_rule(denied, "memfd_create")
        shared_anonymous = MAP_SHARED | MAP_ANONYMOUS
        rules.add_rule(denied, "mmap", seccomp.Arg(3, seccomp.MASKED_EQ, shared_anonymous, shared_anonymous))
    with tempfile.TemporaryFile() as handle:
        rules.export_bpf(handle)
        handle.seek(0)
        return handle.read()
