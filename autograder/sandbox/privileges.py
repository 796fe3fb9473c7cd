"""Who a sandboxed child is: its user, its capabilities, its namespaces.

The child calls these after fork and before it imports any student code; the
supervisor of each run calls `kill_user_processes` after it. Resource limits are
in `limits.py`, filesystem and network confinement in `landlock.py`.
"""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import stat

_CLONE_NEWUSER, _CLONE_NEWNET, _CLONE_NEWIPC = 0x10000000, 0x40000000, 0x08000000
_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS = 1, 38
FIRST_SANDBOX_UID = 61000


@functools.cache
def libc() -> ctypes.CDLL:
    """The C library, loaded once: a process forked from one that loaded it has it at no cost (loading it
    takes a millisecond or more, several times in each run)."""
    return ctypes.CDLL(None, use_errno=True)


def die_with_parent(parent: int) -> None:
    """Be killed if our parent (pid `parent`: the fork server, the supervisor) dies, instead of running on."""
    prctl = getattr(libc(), "prctl", None)
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before the request took effect
        os._exit(70)


def forbid_new_privileges() -> bool:
    """Set no_new_privs, which the kernel never clears for this process or any it starts: no setuid program
    raises them, and it marks the process as sandboxed to whoever checks (the zygote refuses it)."""
    prctl = getattr(libc(), "prctl", None)
    return prctl is not None and prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0


def isolate_namespaces() -> dict[str, bool]:
    """Move into a fresh network namespace (no interfaces but a down loopback) and a fresh IPC namespace.

    Works as root, or as an ordinary user where unprivileged user namespaces
    are allowed. Returns which worked: without a network namespace Landlock
    still refuses TCP; without an IPC namespace the run's supervisor removes
    the SysV IPC objects the run leaves (`ipc`). Nothing a run makes in its
    own IPC namespace outlives the run: the kernel frees the namespace with
    its last process.
    """
    unshare = getattr(libc(), "unshare", None)
    if unshare is None:  # not Linux
        return {"network": False, "ipc": False}
    user = 0 if os.geteuid() == 0 else _CLONE_NEWUSER
    if unshare(ctypes.c_int(user | _CLONE_NEWNET | _CLONE_NEWIPC)) == 0:
        return {"network": True, "ipc": True}
    network = unshare(ctypes.c_int(user | _CLONE_NEWNET)) == 0
    # Once in a user namespace of our own, we hold the capability a new IPC namespace asks for.
    ipc = unshare(ctypes.c_int((0 if network else user) | _CLONE_NEWIPC)) == 0
    return {"network": network, "ipc": ipc}


@functools.cache
def ipc_namespaces_work() -> bool:
    """Whether a child here gets its own IPC namespace: tried once, in a process of its own (a zygote tries
    before it forks any fork server, which then knows)."""
    if not hasattr(os, "fork"):
        return False
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(0 if isolate_namespaces()["ipc"] else 1)
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


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

    One uid per leased slot (`lease.py`), so that its process limit and the
    final kill-everything of that uid touch no other run on the machine.
    """
    if os.geteuid() != 0:
        return None
    return int(os.environ.get("LMGRADE_SANDBOX_UID", FIRST_SANDBOX_UID)) + slot


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


CAP_DAC_READ_SEARCH = 2


def drop_privileges(uid: int, keep_read_search: bool) -> None:
    """Become `uid`, with no groups and no capabilities, for good and across execve.

    `keep_read_search` keeps CAP_DAC_READ_SEARCH alone, for an interpreter the
    unprivileged user could not read (one installed in root's home); Landlock
    then decides alone what may be read.
    """
    c = libc()
    pr_set_securebits, pr_capbset_drop = 28, 24
    # NOROOT and NO_SETUID_FIXUP, both locked, KEEP_CAPS locked off: no way
    # back to root's powers by setuid or by running a program.
    if c.prctl(pr_set_securebits, 0x2F & ~0x10, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECUREBITS)")
    cap = 0
    while True:
        if not (keep_read_search and cap == CAP_DAC_READ_SEARCH):
            if c.prctl(pr_capbset_drop, cap, 0, 0, 0) != 0:
                break
        cap += 1
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    kept = (1 << CAP_DAC_READ_SEARCH) if keep_read_search else 0
    header = _CapHeader(version=0x20080522, pid=0)
    data = (_CapData * 2)(_CapData(kept, kept, 0), _CapData(0, 0, 0))
    if c.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    if os.geteuid() == 0 or os.getuid() == 0:
        raise OSError("could not drop root privileges")


def kill_user_processes(uid: int) -> int:
    """Kill every process of `uid`: daemons that left the process group too. Returns the processes it
    started for it (0 or 1).

    Without forking this process (with torch loaded, a fork and its exit take 25 ms, once per run):
    every process whose real or effective uid is `uid` is killed through a pidfd, which a new process
    given the same number cannot take over, scan after scan until one finds none. Where there are no
    pidfds, or processes keep appearing, a fork of ours becomes `uid` and kills them all at once.
    """
    if hasattr(os, "pidfd_open") and os.path.isdir("/proc"):
        for _ in range(32):
            if not _kill_found(uid):
                return 0
    _kill_all_as(uid)
    return 1


def _kill_found(uid: int) -> bool:
    """Kill the processes of `uid` in /proc now; whether there were any."""
    found = False
    for name in os.listdir("/proc"):
        if not name.isdigit() or not _runs_as(name, uid):
            continue
        try:
            fd = os.pidfd_open(int(name))
        except OSError:  # gone already
            continue
        try:
            if _runs_as(name, uid):  # the process the pidfd holds, not one that took its number since
                signal.pidfd_send_signal(fd, signal.SIGKILL)
                found = True
        except OSError:
            pass
        finally:
            os.close(fd)
    return found


def _runs_as(pid: str, uid: int) -> bool:
    """Whether process `pid` runs (a zombie has ended: killing it again would find it forever) as `uid`."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"State:") and line.split()[1] in (b"Z", b"X"):
                    return False
                if line.startswith(b"Uid:"):
                    return str(uid).encode() in line.split()[1:3]
    except OSError:
        pass
    return False


def _kill_all_as(uid: int) -> None:
    pid = os.fork()
    if pid == 0:
        try:
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def reap_ended() -> None:
    """Reap every child of ours that has ended, waiting for none: here what ended after its supervisor did
    (it came to us as the subreaper); in a zygote, the fork servers it forked."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
