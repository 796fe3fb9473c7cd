"""What the processes of the sandbox say to each other.

    grading process (pool.py) --messages--> fork server (server.py) --fork--> supervisor --fork--> child
                              <--messages---------------------------------------        <--frames--

- *Messages*, between the grading process and its fork server, over the
  server's stdin and stdout: a JSON header and a binary payload, each
  length-prefixed. The first message is the server's set-up (``init``),
  which the fork server reads and answers itself. Then one run request per
  check, answered by one reply (see `RunReply`): these only the run's
  supervisor reads and writes, a process the fork server forks for that run
  alone before the request's first byte is read, so that nothing of a run
  ever enters the fork server that every later child is forked from.
- *Sealed*, right after each run request: a second message with what
  the run's child must never hold (a timed run's nonces, a stand-in's
  record of the reference's calls). The supervisor reads the request to
  its last byte and no further, forks the child, and only then reads it.

- *Frames*, from a child to its supervisor, over one pipe: kind, case index
  and payload. HELLO (the defences in force, sent before any student code
  runs), then CASE_START and CASE_RESULT for each case, then DONE. The
  supervisor passes the child's frames through unread; the grading process
  decodes them.

- *Ticks*, for a timed run only, between a child and its supervisor over
  a pipe each way: the child asks to start a lap (READY), the supervisor notes
  the time on its own clock and answers with a fresh random nonce, from
  which the child draws the lap's inputs; the child ends the lap (END) with
  a fingerprint of the outputs, and the supervisor notes the time again. The
  child cannot start work before its inputs exist, nor end a lap without
  numbers only the finished work gives (see `lmgrade.grading.timing_laps`).

Nothing here is pickle: payloads are `lmgrade.boundary.wire` data.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import asdict, dataclass, field

# --- frames: child -> grading process (through its supervisor) ---

HELLO, CASE_START, CASE_RESULT, DONE = 1, 2, 3, 4
FRAME = struct.Struct(">BiQ")


def pack_frame(kind: int, index: int, payload: bytes = b"") -> bytes:
    """One frame of the child: kind, case index, payload."""
    return FRAME.pack(kind, index, len(payload)) + payload


def unpack_frames(buffer: bytes) -> tuple[list[tuple[int, int, bytes]], bytes]:
    """Split complete frames off the front of `buffer`; return them and the rest."""
    frames = []
    offset = 0  # walked, never copied: a child's many tiny frames cost linear time
    while len(buffer) - offset >= FRAME.size:
        kind, index, size = FRAME.unpack_from(buffer, offset)
        start = offset + FRAME.size
        if len(buffer) < start + size:
            break
        frames.append((kind, index, bytes(buffer[start : start + size])))
        offset = start + size
    return frames, bytes(buffer[offset:])


# --- ticks: a timed child <-> its supervisor ---

TICK_READY, TICK_END = 1, 2
TICK = struct.Struct(">BiI")  # kind, case index, number of float64s that follow
NONCE = struct.Struct(">Q")
MAX_FINGERPRINT = 16


def pack_tick(kind: int, case: int, fingerprint: tuple[float, ...] = ()) -> bytes:
    return TICK.pack(kind, case, len(fingerprint)) + struct.pack(f">{len(fingerprint)}d", *fingerprint)


def unpack_ticks(buffer: bytes) -> tuple[list[tuple[int, int, tuple[float, ...]]], bytes]:
    """Split complete ticks off the front of `buffer`; a malformed one raises ValueError."""
    ticks = []
    while len(buffer) >= TICK.size:
        kind, case, count = TICK.unpack_from(buffer)
        if kind not in (TICK_READY, TICK_END) or count > MAX_FINGERPRINT:
            raise ValueError("malformed tick")
        end = TICK.size + 8 * count
        if len(buffer) < end:
            break
        ticks.append((kind, case, struct.unpack_from(f">{count}d", buffer, TICK.size)))
        buffer = buffer[end:]
    return ticks, buffer


# --- messages: grading process <-> fork server ---

_LENGTHS = struct.Struct(">QQ")


def read_message(f) -> tuple[dict, bytes] | None:
    """The next message from a binary stream, or None at its end."""
    head = f.read(_LENGTHS.size)
    if len(head) < _LENGTHS.size:
        return None
    n_json, n_blob = _LENGTHS.unpack(head)
    return json.loads(f.read(n_json)), f.read(n_blob)


def read_exactly(fd: int, n: int) -> bytes | None:
    """The next `n` bytes from `fd`, read as they come (a pipe hands out less at a time); None where the pipe
    ends before them."""
    chunks, left = [], n
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_message_exactly(fd: int) -> tuple[dict, bytes] | None:
    """The next message from `fd`, not a byte more (or None at its end): what follows it in the pipe is
    still unread, for a process forked after this read not to hold it."""
    head = read_exactly(fd, _LENGTHS.size)
    if head is None:
        return None
    n_json, n_blob = _LENGTHS.unpack(head)
    doc, blob = read_exactly(fd, n_json), read_exactly(fd, n_blob)
    if doc is None or blob is None:
        return None
    return json.loads(doc), blob


def write_all(fd: int, data: bytes) -> None:
    """All of `data` to `fd`, however many writes a pipe takes."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_message(fd: int, header: dict, blob: bytes = b"") -> None:
    doc = json.dumps(header).encode()
    write_all(fd, _LENGTHS.pack(len(doc), len(blob)) + doc + blob)


@dataclass
class RunReply:
    """The answer to one run request, from the run's supervisor (the frames travel as the payload).

    status: "exited" or "killed" (the child ran), "rejected" (the submission
    could not be prepared: `detail` says why), "harness" (the server failed).
    """

    status: str
    detail: str = ""
    killed: str | None = None  # "wall" or "result_size" when the server killed the child
    exit_code: int | None = None
    signal: int | None = None
    wall_s: float = 0.0
    cpu_s: float = 0.0
    output_head: str = ""  # the first and last bytes the child printed ...
    output_tail: str = ""
    output_bytes: int = 0  # ... and how many it printed in all
    case_seconds: list = field(default_factory=list)  # [case index, seconds from its start to its result]
    laps: list = field(default_factory=list)  # timed runs: [case, nonce, seconds, fingerprint] per finished lap
    processes: int = 0  # processes the run started besides the student's own: its supervisor, child, helpers

    def as_dict(self) -> dict:
        return asdict(self)


# --- what the sandbox keeps of the grader's environment ---

# All a child keeps of the environment (OpenBLAS needs its CPU type on some machines).
SAFE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
