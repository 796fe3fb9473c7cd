"""Leave System V shared memory and a message queue behind, and read what an earlier run left.

Through libc (ctypes): shmget/shmat on a key of this assignment, msgget/msgsnd/msgrcv on another. What a
run finds from an earlier one (another process id) is printed as a CHEAT-FOUND line; then it leaves its
own record for the next run.
"""

from __future__ import annotations

import ctypes
import os
import time

from fill import IPC_KEYS, _found, _once, _tried

IPC_CREAT, IPC_NOWAIT = 0o1000, 0o4000
SHM_KEY, MSG_KEY = IPC_KEYS[:2]  # the catalogue's test removes them
SIZE = 256


class _Message(ctypes.Structure):
    _fields_ = [("mtype", ctypes.c_long), ("mtext", ctypes.c_char * SIZE)]


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    return libc


def _record():
    return f"CHEAT pid={os.getpid()} t={time.time():.3f}".encode()


def _shared_memory(libc):
    shmid = libc.shmget(SHM_KEY, SIZE, IPC_CREAT | 0o666)
    if shmid < 0:
        return _tried(f"shmget: {os.strerror(ctypes.get_errno())}")
    address = libc.shmat(shmid, None, 0)
    if address in (None, ctypes.c_void_p(-1).value):
        return _tried(f"shmat: {os.strerror(ctypes.get_errno())}")
    earlier = ctypes.string_at(address, SIZE).rstrip(b"\0")
    if earlier.startswith(b"CHEAT") and f"pid={os.getpid()} ".encode() not in earlier:
        _found(f"shared memory left by an earlier run: {earlier.decode(errors='replace')}")
    record = _record()
    ctypes.memmove(address, record + b"\0" * (SIZE - len(record)), SIZE)


def _message_queue(libc):
    queue = libc.msgget(MSG_KEY, IPC_CREAT | 0o666)
    if queue < 0:
        return _tried(f"msgget: {os.strerror(ctypes.get_errno())}")
    message = _Message()
    while libc.msgrcv(queue, ctypes.byref(message), SIZE, 0, IPC_NOWAIT) >= 0:
        _found(f"a message left by an earlier run: {message.mtext.decode(errors='replace')}")
    message.mtype, message.mtext = 1, _record()
    libc.msgsnd(queue, ctypes.byref(message), SIZE, IPC_NOWAIT)
    _tried("left a shared memory segment and a message; found none from an earlier run")


if _once("persist_ipc"):
    try:
        _libc_handle = _libc()
        _shared_memory(_libc_handle)
        _message_queue(_libc_handle)
    except (OSError, AttributeError) as exc:
        _tried(f"System V IPC: {type(exc).__name__}: {exc}")
