"""What the three processes of the sandbox say to each other.

    grading process (pool.py) --messages--> fork server (server.py) --fork--> child (child.py)
                              <--messages--                          <--frames--

- *Messages*, between the grading process and its fork server, over the
  server's stdin and stdout: a JSON header and a binary payload, each
  length-prefixed. The first message is the server's set-up (``init``); then
  one run request per check, answered by one reply (see `RunReply`).
- *Frames*, from a child to its fork server, over one pipe: kind, case index
  and payload. HELLO (the defences in force, sent before any student code
  runs), then CASE_START and CASE_RESULT for each case, then DONE. The server
  passes the child's frames through unread; the grading process decodes them.

Nothing here is pickle: payloads are `autograder.wire` data.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import asdict, dataclass

# --- frames: child -> grading process (through the fork server) ---

HELLO, CASE_START, CASE_RESULT, DONE = 1, 2, 3, 4
_FRAME = struct.Struct(">BiQ")


def pack_frame(kind: int, index: int, payload: bytes = b"") -> bytes:
    """One frame of the child: kind, case index, payload."""
    return _FRAME.pack(kind, index, len(payload)) + payload


def unpack_frames(buffer: bytes) -> tuple[list[tuple[int, int, bytes]], bytes]:
    """Split complete frames off the front of `buffer`; return them and the rest."""
    frames = []
    while len(buffer) >= _FRAME.size:
        kind, index, size = _FRAME.unpack_from(buffer)
        if len(buffer) < _FRAME.size + size:
            break
        frames.append((kind, index, buffer[_FRAME.size : _FRAME.size + size]))
        buffer = buffer[_FRAME.size + size :]
    return frames, buffer


# --- messages: grading process <-> fork server ---

_LENGTHS = struct.Struct(">QQ")


def read_message(f) -> tuple[dict, bytes] | None:
    """The next message from a binary stream, or None at its end."""
    head = f.read(_LENGTHS.size)
    if len(head) < _LENGTHS.size:
        return None
    n_json, n_blob = _LENGTHS.unpack(head)
    return json.loads(f.read(n_json)), f.read(n_blob)


def write_message(fd: int, header: dict, blob: bytes = b"") -> None:
    doc = json.dumps(header).encode()
    data = memoryview(_LENGTHS.pack(len(doc), len(blob)) + doc + blob)
    while data:
        data = data[os.write(fd, data):]


@dataclass
class RunReply:
    """The fork server's answer to one run request (the frames travel as the payload).

    status: "exited" or "killed" (the child ran), "rejected" (the submission
    could not be prepared: `detail` says why), "harness" (the server failed).
    """

    status: str
    detail: str = ""
    killed: str | None = None          # "wall" or "result_size" when the server killed the child
    exit_code: int | None = None
    signal: int | None = None
    wall_s: float = 0.0
    cpu_s: float = 0.0
    output_head: str = ""              # the first and last bytes the child printed ...
    output_tail: str = ""
    output_bytes: int = 0              # ... and how many it printed in all

    def as_dict(self) -> dict:
        return asdict(self)


# --- what the sandbox keeps of the grader's environment ---

# All a child keeps of the environment (OpenBLAS needs its CPU type on some machines).
SAFE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
