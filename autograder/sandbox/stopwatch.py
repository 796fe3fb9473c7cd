"""Timed laps across the sandbox boundary, on the fork server's clock.

A timed scenario in the child runs each lap as: `start()` (blocks until the
fork server answers with a nonce), draw the inputs from the nonce, call the
submission, `stop(fingerprint)` with numbers computed from the outputs. The
fork server (`Timekeeper`) reads the time when it sends the nonce and when
the END arrives. Student code runs only in the child, so patching `time`,
`timeit`, CUDA events or `synchronize` there changes nothing the server
reads; and since the inputs do not exist before the nonce is sent, no work
on them can happen before the clock starts. A fingerprint that is not the
reference's on the same nonce (checked by the grading process on a random
sample of laps) shows work left undone when the lap ended.

The grading process may choose the nonces (`nonces[case][k]` for the case's
k-th lap), so that the reference's own timed run answers the same ones: the
fork server hands each to the child only as its lap starts, as a drawn one.
"""

from __future__ import annotations

import os
import time

from ..boundary.protocol import NONCE, TICK_END, TICK_READY, pack_tick, read_exactly, unpack_ticks, write_all

# The child's ends of the two tick pipes (next to the result pipe, fd 3).
TICK_FD, NONCE_FD = 4, 5

# Set by the child before each case: which case a lap belongs to.
current_case = -1
enabled = False


def _read_exactly(fd: int, n: int) -> bytes:
    data = read_exactly(fd, n)
    if data is None:
        raise RuntimeError("the grader's clock stopped answering (too many laps?)")
    return data


def start() -> int:
    """Start a lap: returns the nonce to draw its inputs from."""
    if not enabled:
        raise RuntimeError("not a timed run")
    write_all(TICK_FD, pack_tick(TICK_READY, current_case))
    return NONCE.unpack(_read_exactly(NONCE_FD, NONCE.size))[0]


def stop(fingerprint) -> None:
    """End the lap, with numbers computed from its outputs."""
    write_all(TICK_FD, pack_tick(TICK_END, current_case, tuple(float(v) for v in fingerprint)))


class Timekeeper:
    """The fork server's side: answers READY with a nonce, times each lap on its own clock.

    At most `max_laps` laps; one READY then one END at a time. A child that
    breaks the order gets no more nonces (its next `start()` fails).
    """

    def __init__(self, max_laps: int, nonce_fd: int, nonces: list[list[int]] | None = None):
        self.max_laps, self.nonce_fd = max_laps, nonce_fd
        self.nonces = nonces or []
        self.per_case: dict[int, int] = {}  # laps given so far, per case
        self.buffer = b""
        self.open: tuple[int, int, float] | None = None  # case, nonce, start time
        self.laps: list[list] = []
        self.given = 0
        self.broken = False

    def feed(self, chunk: bytes) -> None:
        now = time.perf_counter()  # first thing: the END's arrival is the lap's end
        if self.broken:
            return
        try:
            ticks, self.buffer = unpack_ticks(self.buffer + chunk)
        except ValueError:
            return self._break()
        for kind, case, fingerprint in ticks:
            if kind == TICK_READY and self.open is None and self.given < self.max_laps:
                nonce = self._nonce(case)
                self.given += 1
                self.open = (case, nonce, time.perf_counter())
                try:
                    write_all(self.nonce_fd, NONCE.pack(nonce))
                except OSError:
                    return self._break()
            elif kind == TICK_END and self.open is not None and case == self.open[0]:
                case, nonce, started = self.open
                self.laps.append([case, nonce, now - started, list(fingerprint)])
                self.open = None
            else:
                return self._break()

    def _nonce(self, case: int) -> int:
        """The grading process's nonce for the case's next lap where it chose one, else a fresh one."""
        k = self.per_case.get(case, 0)
        self.per_case[case] = k + 1
        if 0 <= case < len(self.nonces) and k < len(self.nonces[case]):
            return int(self.nonces[case][k])
        return int.from_bytes(os.urandom(8), "big") >> 1

    def _break(self) -> None:
        self.broken = True
        try:
            os.close(self.nonce_fd)
        except OSError:
            pass
