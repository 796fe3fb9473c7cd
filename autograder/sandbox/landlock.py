"""Linux Landlock through ctypes: the sandboxed child's filesystem and network.

Landlock lets an unprivileged process give up access rights for itself and
every process it starts, irrevocably. The child allows reading what its run
needs (`reads`: the interpreter, the libraries the assignment needs, its own
copy of the submission, its assignment's public scenarios) and writing its
own folder only; everything else, the reference, every assignment's checks
and the results path included, is refused by the kernel. From ABI 4 it also
refuses TCP bind and connect, and from ABI 6 signals to processes outside the
sandbox (the grader, the fork server) and abstract unix sockets. Landlock
also refuses a sandboxed process ptrace and process_vm_readv on any process
outside its sandbox.
"""

from __future__ import annotations

import ctypes
import os
import platform
from collections.abc import Iterable
from pathlib import Path

from . import privileges

# Generic syscall numbers; x86_64 and aarch64 share them.
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38
# Where a reading ruleset's descriptor goes: above the pipes a run opens and the numbers a child gives them.
FIRST_RULESET_FD = 100

EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK = 1 << 8, 1 << 9, 1 << 10, 1 << 11
MAKE_SYM, REFER, TRUNCATE, IOCTL_DEV = 1 << 12, 1 << 13, 1 << 14, 1 << 15

READ = EXECUTE | READ_FILE | READ_DIR
_WRITE_V1 = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_DIR | MAKE_REG | MAKE_SYM | MAKE_FIFO | MAKE_SOCK
_FILE_ONLY = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV

NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class LandlockError(OSError):
    pass


def _libc():
    return privileges.libc()


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 where Landlock is absent or disabled."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "aarch64"):
        return 0
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def _handled_fs(abi: int) -> int:
    access = READ | _WRITE_V1 | MAKE_CHAR | MAKE_BLOCK
    if abi >= 2:
        access |= REFER
    if abi >= 3:
        access |= TRUNCATE
    if abi >= 5:
        access |= IOCTL_DEV
    return access


def _create(libc, handled_fs: int, abi: int, net: bool) -> int:
    attr = _RulesetAttr(
        handled_access_fs=handled_fs,
        handled_access_net=(NET_BIND_TCP | NET_CONNECT_TCP) if net and abi >= 4 else 0,
        scoped=(SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if net and abi >= 6 else 0,
    )
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
    fd = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        err = ctypes.get_errno()
        raise LandlockError(err, f"landlock_create_ruleset: {os.strerror(err)}")
    return fd


def reading_ruleset(read: Iterable[Path], abi: int | None = None) -> int:
    """The first of a child's two layers, made once by the fork server and applied by each child (`restrict`).

    It handles reading (and from ABI 4 TCP, from ABI 6 signals and abstract
    unix sockets) and grants reading beneath each of `read`: the allow-list
    (`reads`) is hundreds of rules, a cost paid once here instead of in every
    child. Returns the ruleset's descriptor, numbered from `FIRST_RULESET_FD`
    up, away from the few a child renumbers. Paths that do not exist are
    skipped.
    """
    import fcntl  # here: the harness imports this module where there is none (to say that it cannot sandbox)

    abi = abi_version() if abi is None else abi
    if abi < 1:
        raise LandlockError(0, "Landlock is not available on this kernel")
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    fd = _create(libc, READ, abi, net=True)
    try:
        for path in read:
            _allow(libc, fd, Path(path), READ)
        moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, FIRST_RULESET_FD)
    finally:
        os.close(fd)
    return moved


def grant_reading(reading: int, paths: Iterable[Path]) -> None:
    """Add rules to a reading ruleset before it is applied: for paths that only the process applying it can name.

    /proc/self, say, is resolved when a rule is added: in the fork server it
    would be the fork server's. Only for a ruleset of one run's own, since a
    ruleset shared by every child would keep each child's grant.
    """
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    for path in paths:
        _allow(libc, reading, Path(path), READ)


def restrict(reading: int, write: Iterable[Path], abi: int | None = None) -> dict:
    """Restrict this process (and its future children) for good.

    Two layers, each refusing what the other allows of what it handles:
    `reading` (`reading_ruleset`) decides what may be read, and a second
    layer made here handles every other access right and grants them beneath
    each of `write`. Paths that do not exist are skipped. Returns what was
    enforced, for the report.
    """
    abi = abi_version() if abi is None else abi
    if abi < 1:
        raise LandlockError(0, "Landlock is not available on this kernel")
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    handled = _handled_fs(abi) & ~READ
    fd = _create(libc, handled, abi, net=False)
    try:
        for path in write:
            _allow(libc, fd, Path(path), handled)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            raise LandlockError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")
        for layer in (reading, fd):
            if libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(layer), ctypes.c_uint32(0)) != 0:
                err = ctypes.get_errno()
                raise LandlockError(err, f"landlock_restrict_self: {os.strerror(err)}")
    finally:
        os.close(fd)
    return {"abi": abi, "network": abi >= 4, "signals": abi >= 6}


def _allow(libc, ruleset_fd: int, path: Path, access: int) -> None:
    try:
        path_fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            access &= _FILE_ONLY
        rule = _PathBeneathAttr(allowed_access=access, parent_fd=path_fd)
        if (
            libc.syscall(
                _SYS_ADD_RULE,
                ctypes.c_int(ruleset_fd),
                ctypes.c_int(_RULE_PATH_BENEATH),
                ctypes.byref(rule),
                ctypes.c_uint32(0),
            )
            != 0
        ):
            err = ctypes.get_errno()
            raise LandlockError(err, f"landlock_add_rule({path}): {os.strerror(err)}")
    finally:
        os.close(path_fd)


def readable_except(roots: Iterable[Path], protected: Iterable[Path]) -> list[Path]:
    """The paths to allow so that every root is readable but nothing protected.

    Landlock only grants; to hide one folder inside an allowed tree, grant its
    siblings one by one instead of their parent, recursively down to it.
    """
    protected = {Path(os.path.realpath(p)) for p in protected}
    # Every folder that holds something protected, looked up in a set: hundreds of paths are visited.
    holding = {parent for p in protected for parent in p.parents}
    allowed: list[Path] = []

    def visit(path: Path) -> None:
        if path in protected:
            return
        if path not in holding:
            allowed.append(path)
            return
        try:
            children = sorted(path.iterdir())
        except OSError:
            return
        for child in children:
            if child.is_symlink():
                continue  # its target is granted (or not) on its own
            visit(child)

    for root in {Path(os.path.realpath(r)) for r in roots}:
        # A root inside a protected folder stays hidden.
        if root.exists() and not (root in protected or any(parent in protected for parent in root.parents)):
            visit(root)
    return allowed
