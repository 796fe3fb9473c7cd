"""System V IPC objects (shared memory, message queues, semaphore sets): what a run leaves, removed.

SysV IPC objects outlive the processes that make them: a segment, a queue or a semaphore set made
by student code would stay on the machine, readable by a later run under the same sandbox uid. A
child that gets its own IPC namespace (`privileges.isolate_namespaces`) makes them there, and the
kernel frees them with the namespace when the run's last process dies. Where it cannot have one,
the run's supervisor removes them here after the run, as `ipcrm` would: every object of the
sandbox uid when that uid is the slot's own (grading as root), and otherwise the objects of this
uid that appeared while the run went on.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from pathlib import Path

from . import privileges

KINDS = ("shm", "msg", "sem")
_IPC_RMID = 0
_PROC = Path("/proc/sysvipc")


@dataclass(frozen=True)
class IpcObject:
    kind: str  # "shm", "msg" or "sem"
    key: int
    id: int
    uid: int  # its owner (which its owner may change)
    cuid: int  # its creator (which nobody can)


def objects(proc: Path = _PROC) -> list[IpcObject]:
    """Every SysV IPC object of this IPC namespace ([] where /proc/sysvipc is absent: not Linux)."""
    found = []
    for kind in KINDS:
        try:
            lines = (proc / kind).read_text().splitlines()
        except OSError:
            continue
        if not lines:
            continue
        names = lines[0].split()
        # The id column is shmid, msqid or semid.
        column = {name: i for i, name in enumerate(names)}
        id_column = next(i for name, i in column.items() if name.endswith("id") and name not in ("uid", "gid"))
        for line in lines[1:]:
            fields = line.split()
            try:
                found.append(
                    IpcObject(
                        kind,
                        int(fields[column["key"]]),
                        int(fields[id_column]),
                        int(fields[column["uid"]]),
                        int(fields[column["cuid"]]),
                    )
                )
            except (IndexError, KeyError, ValueError):
                continue
    return found


def remove(obj: IpcObject) -> bool:
    """IPC_RMID on `obj`; whether the kernel removed it (it may be gone already)."""
    libc = privileges.libc()
    if obj.kind == "shm":
        status = libc.shmctl(ctypes.c_int(obj.id), ctypes.c_int(_IPC_RMID), None)
    elif obj.kind == "msg":
        status = libc.msgctl(ctypes.c_int(obj.id), ctypes.c_int(_IPC_RMID), None)
    else:
        status = libc.semctl(ctypes.c_int(obj.id), ctypes.c_int(0), ctypes.c_int(_IPC_RMID))
    return status == 0


def snapshot() -> frozenset[tuple[str, int]]:
    """The objects there are now, by kind and id: what a run found, so that only its own are removed."""
    return frozenset((o.kind, o.id) for o in objects())


def remove_left_by(uid: int, before: frozenset[tuple[str, int]] | None = None) -> list[IpcObject]:
    """Remove the objects `uid` made or owns; with `before`, only those not in it. Returns those removed."""
    removed = []
    for obj in objects():
        if uid not in (obj.uid, obj.cuid):
            continue
        if before is not None and (obj.kind, obj.id) in before:
            continue
        if remove(obj):
            removed.append(obj)
    return removed
