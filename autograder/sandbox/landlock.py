"""Linux Landlock through ctypes: the sandboxed child's filesystem and network.

Landlock lets an unprivileged process give up access rights for itself and
every process it starts, irrevocably. The child allows reading what Python
needs (its installation, the libraries, its own copy of the submission) and
writing its temporary folder only; everything else, the reference and the
results path included, is refused by the kernel. From ABI 4 it also refuses
TCP bind and connect, and from ABI 6 signals to processes outside the
sandbox (the grader, the fork server) and abstract unix sockets.
"""

from __future__ import annotations

import ctypes
import os
import platform
from collections.abc import Iterable
from pathlib import Path

# Generic syscall numbers; x86_64 and aarch64 share them.
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38

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
    return ctypes.CDLL(None, use_errno=True)


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


def restrict(read: Iterable[Path], write: Iterable[Path], abi: int | None = None) -> dict:
    """Restrict this process (and its future children) for good.

    `read` paths allow reading and executing beneath them, `write` paths also
    allow creating, changing and removing. Paths that do not exist are
    skipped. Returns what was enforced, for the report.
    """
    abi = abi_version() if abi is None else abi
    if abi < 1:
        raise LandlockError(0, "Landlock is not available on this kernel")
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    handled = _handled_fs(abi)
    attr = _RulesetAttr(
        handled_access_fs=handled,
        handled_access_net=(NET_BIND_TCP | NET_CONNECT_TCP) if abi >= 4 else 0,
        scoped=(SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0,
    )
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
    fd = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        err = ctypes.get_errno()
        raise LandlockError(err, f"landlock_create_ruleset: {os.strerror(err)}")
    try:
        for paths, access in ((read, READ & handled), (write, handled)):
            for path in paths:
                _allow(libc, fd, Path(path), access)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            raise LandlockError(err, f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(err)}")
        if libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
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
    allowed: list[Path] = []

    def visit(path: Path) -> None:
        if path in protected:
            return
        if not any(path in p.parents for p in protected):
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
        if root.exists() and not any(p == root or p in root.parents for p in protected):
            visit(root)
    return allowed
