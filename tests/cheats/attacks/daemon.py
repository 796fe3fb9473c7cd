"""Leave a daemon behind (double fork, new session, renamed cheatd-<assignment>) that outlives the run for a
few seconds, watching for later runs; a later run that finds it alive says so.

The daemon beats into a file in every writable place it knows and into System V shared memory; a run that
finds a beat younger than a second from another process reports it. It lives 4 seconds at most.
"""

from __future__ import annotations

import ctypes
import os
import time

from fill import ASSIGNMENT, DAEMON, IPC_KEYS, _found, _once, _tried

BEAT_KEY = IPC_KEYS[2]
LIFETIME_S = 4.0


def _beat_places():
    return [os.path.join(folder, f"lmgrade-cheatd-{ASSIGNMENT}") for folder in ("/tmp", "/dev/shm", os.getcwd())]


def _shared_beat(libc):
    libc.shmat.restype = ctypes.c_void_p
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    shmid = libc.shmget(BEAT_KEY, 64, 0o1000 | 0o666)
    address = libc.shmat(shmid, None, 0) if shmid >= 0 else None
    return None if address in (None, ctypes.c_void_p(-1).value) else address


def _live():
    """The daemon's life: beat every 0.2 s, then go."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(15, DAEMON.encode(), 0, 0, 0)  # PR_SET_NAME: the catalogue's test looks for it
    for fd in range(0, 64):
        try:
            os.close(fd)
        except OSError:
            pass
    address = _shared_beat(libc)
    end = time.monotonic() + LIFETIME_S
    while time.monotonic() < end:
        beat = f"{os.getpid()} {time.time():.3f}".encode()
        if address is not None:
            ctypes.memmove(address, beat.ljust(64, b"\0"), 64)
        for path in _beat_places():
            try:
                with open(path, "wb") as f:
                    f.write(beat)
            except OSError:
                pass
        time.sleep(0.2)


def _earlier_daemon():
    beats = []
    for path in _beat_places():
        try:
            with open(path, "rb") as f:
                beats.append((path, f.read(64)))
        except OSError:
            pass
    address = _shared_beat(ctypes.CDLL(None, use_errno=True))
    if address is not None:
        beats.append(("shared memory", ctypes.string_at(address, 64).rstrip(b"\0")))
    for where, beat in beats:
        try:
            pid, stamp = beat.split()
            if time.time() - float(stamp) < 1.0:
                _found(f"a daemon of an earlier run (pid {int(pid)}) is alive: it beat in {where}")
        except ValueError:
            pass


def _start():
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return _tried("started a daemon; no beat of an earlier one found")
    try:
        os.setsid()
        if os.fork() == 0:
            _live()
    finally:
        os._exit(0)


if _once("daemon"):
    try:
        _earlier_daemon()
        _start()
    except OSError as exc:
        _tried(f"daemon: {type(exc).__name__}: {exc}")
