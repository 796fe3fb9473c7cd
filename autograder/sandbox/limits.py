"""Resource limits and privilege changes applied inside the sandboxed child.

Everything here runs after fork and before any student code is imported.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import stat
from dataclasses import asdict, dataclass

_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Limits:
    """What one sandboxed run may use. Wall time is enforced by the parent."""

    cpu_s: float = 10.0
    wall_s: float = 20.0
    memory_mb: int = 2048
    processes: int = 4
    file_mb: int = 16
    output_kb: int = 64
    open_files: int = 256

    def as_dict(self) -> dict:
        return asdict(self)


def available_cpus(cgroup: str = "/sys/fs/cgroup") -> float:
    """CPUs this process may really use: affinity, capped by a cgroup CPU quota.

    Gradescope gives a container half a CPU while os.cpu_count() reports the
    host's; running one check per reported CPU there would starve them all.
    """
    try:
        cpus = float(len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS
        cpus = float(os.cpu_count() or 1)
    for quota_file, period_file in ((f"{cgroup}/cpu.max", None),  # cgroup v2, then v1
                                    (f"{cgroup}/cpu/cpu.cfs_quota_us", f"{cgroup}/cpu/cpu.cfs_period_us")):
        try:
            with open(quota_file) as f:
                fields = f.read().split()
            if period_file:
                with open(period_file) as f:
                    fields.append(f.read().strip())
            if fields[0] not in ("max", "-1"):
                return min(cpus, int(fields[0]) / int(fields[1]))
        except (OSError, ValueError, IndexError):
            continue
    return cpus


def _vm_size_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _own_process_count(uid: int) -> int:
    """Processes and threads this uid already runs (RLIMIT_NPROC counts them all)."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                pass
    return count


def _try_setrlimit(which: int, value: int, applied: list[str], name: str) -> None:
    try:
        resource.setrlimit(which, (value, value))
        applied.append(name)
    except (ValueError, OSError):
        pass  # not supported here (RLIMIT_AS on macOS): the parent's limits still hold


def apply_rlimits(limits: Limits, uid: int) -> list[str]:
    """CPU, address space (beyond what the fork server already maps), processes, files.

    `uid` is the user the child will run as: the process limit counts every
    process and thread of that user, so the budget is added to what it runs now.
    """
    cpu = max(1, int(limits.cpu_s + 0.999))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    applied = ["cpu"]
    # The fork server has numpy (and maybe torch) mapped already; the child's
    # budget is what it may add on top of that.
    if os.path.exists("/proc/self/statm"):
        _try_setrlimit(resource.RLIMIT_AS, _vm_size_bytes() + limits.memory_mb * 2**20, applied, "memory")
    _try_setrlimit(resource.RLIMIT_FSIZE, limits.file_mb * 2**20, applied, "file size")
    _try_setrlimit(resource.RLIMIT_NOFILE, limits.open_files, applied, "open files")
    _try_setrlimit(resource.RLIMIT_CORE, 0, applied, "core")
    if os.path.isdir("/proc"):
        _try_setrlimit(resource.RLIMIT_NPROC, limits.processes + _own_process_count(uid), applied, "processes")
    return applied


def die_with_parent(parent: int) -> None:
    """Be killed if the fork server (pid `parent`) dies, instead of running on."""
    prctl = getattr(ctypes.CDLL(None, use_errno=True), "prctl", None)
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the request took effect
        os._exit(70)


def isolate_network() -> bool:
    """Move into a fresh network namespace with no interfaces but a down loopback.

    Works as root, or as an ordinary user where unprivileged user namespaces
    are allowed. Returns whether it worked; Landlock still refuses TCP where
    it does not.
    """
    unshare = getattr(ctypes.CDLL(None, use_errno=True), "unshare", None)
    if unshare is None:  # not Linux
        return False
    flags = _CLONE_NEWNET if os.geteuid() == 0 else _CLONE_NEWUSER | _CLONE_NEWNET
    return unshare(ctypes.c_int(flags)) == 0


def world_readable(path: str) -> bool:
    """Whether any user can reach and read `path` (every parent searchable)."""
    path = os.path.realpath(path)
    try:
        if not os.stat(path).st_mode & stat.S_IROTH:
            return False
        parent = os.path.dirname(path)
        while True:
            if not os.stat(parent).st_mode & stat.S_IXOTH:
                return False
            if parent == os.path.dirname(parent):
                return True
            parent = os.path.dirname(parent)
    except OSError:
        return False


def sandbox_user(slot: int) -> int | None:
    """The unprivileged uid (and gid) student code runs as when the grader is root.

    One uid per fork server, so that its process limit and the final
    kill-everything of that uid touch no other check running in parallel.
    """
    if os.geteuid() != 0:
        return None
    return int(os.environ.get("LMGRADE_SANDBOX_UID", "61000")) + slot


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


CAP_DAC_READ_SEARCH = 2


def drop_privileges(uid: int, keep_read_search: bool) -> None:
    """Become `uid`, with no groups and no capabilities, for good and across execve.

    `keep_read_search` keeps CAP_DAC_READ_SEARCH alone, for an interpreter the
    unprivileged user could not read (one installed in root's home); Landlock
    then decides alone what may be read.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_securebits, pr_capbset_drop = 28, 24
    # NOROOT and NO_SETUID_FIXUP, both locked, KEEP_CAPS locked off: no way
    # back to root's powers by setuid or by running a program.
    if libc.prctl(pr_set_securebits, 0x2F & ~0x10, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECUREBITS)")
    cap = 0
    while True:
        if not (keep_read_search and cap == CAP_DAC_READ_SEARCH):
            if libc.prctl(pr_capbset_drop, cap, 0, 0, 0) != 0:
                break
        cap += 1
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    kept = (1 << CAP_DAC_READ_SEARCH) if keep_read_search else 0
    header = _CapHeader(version=0x20080522, pid=0)
    data = (_CapData * 2)(_CapData(kept, kept, 0), _CapData(0, 0, 0))
    if libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    if os.geteuid() == 0 or os.getuid() == 0:
        raise OSError("could not drop root privileges")
