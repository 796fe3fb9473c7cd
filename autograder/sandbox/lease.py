"""Sandbox slots leased across every grading process of the machine.

A slot is what a fork server owns alone: the uid its children run as (when
grading as root) and so that uid's process limit and the kill of every
process of that uid after each run. Two grading processes on one machine (a
regrade beside a check, tests run in parallel) must never share one, or the
end-of-run kill of one takes the other's children with it.

A lease is an exclusive `flock` on one file per slot. The grading process
takes it and hands the descriptor to the fork server it starts, which keeps
it open for its whole life: the kernel releases the lock when the last
holder exits, also when it is killed. A fork server exits when its grading
process goes (it sees its input close), so a grading process killed with
SIGKILL leaves no lease behind. Processes that outlived their server (a
daemon the student's code started) are killed by the next holder of the
slot before it runs anything.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
import time
from pathlib import Path

MAX_SLOTS = 256
LEASE_DIR_ENV = "LMGRADE_LEASE_DIR"


class LeaseError(RuntimeError):
    pass


def lease_dir() -> Path:
    """One folder per user of the machine, private to that user."""
    default = Path(tempfile.gettempdir()) / f"lmgrade-leases-{os.geteuid()}"
    path = Path(os.environ.get(LEASE_DIR_ENV) or default)
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.lstat()
    except OSError as exc:
        raise LeaseError(f"cannot use the lease folder {path}: {exc}") from None
    # Another user's folder (made before us in a shared /tmp) could hand out
    # our slots or refuse them: refuse it instead.
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise LeaseError(
            f"the lease folder {path} is not a private folder of this user; remove it or set {LEASE_DIR_ENV}"
        )
    return path


class Lease:
    """Slot `slot`, held through the open descriptor `fd`."""

    def __init__(self, slot: int, fd: int):
        self.slot, self.fd = slot, fd

    def release(self) -> None:
        """Close this process's descriptor (a fork server given a copy keeps the lease)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __repr__(self) -> str:
        return f"Lease(slot={self.slot})"


def _try_slot(folder: Path, slot: int) -> Lease | None:
    # Imported here: the harness must import where there is no flock (Windows),
    # if only to say that the sandbox cannot run there.
    import fcntl

    fd = os.open(folder / f"slot-{slot}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            return None
        raise
    return Lease(slot, fd)


def acquire(timeout_s: float = 600.0) -> Lease:
    """The lowest free slot; waits while every slot is taken."""
    folder = lease_dir()
    deadline = time.monotonic() + timeout_s
    while True:
        for slot in range(MAX_SLOTS):
            lease = _try_slot(folder, slot)
            if lease is not None:
                return lease
        if time.monotonic() > deadline:
            raise LeaseError(f"all {MAX_SLOTS} sandbox slots stayed taken for {timeout_s:g} s")
        time.sleep(0.2)


def held_slots() -> list[int]:
    """The slots some process holds now (for tests and diagnostics)."""
    folder = lease_dir()
    held = []
    for entry in sorted(folder.glob("slot-*")):
        slot = int(entry.name.split("-", 1)[1])
        lease = _try_slot(folder, slot)
        if lease is None:
            held.append(slot)
        else:
            lease.release()
    return sorted(held)
