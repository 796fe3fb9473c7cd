"""The stand-in's channel: a child's calls of the grader's stand-in, asked one at a time of its supervisor.

A stand-in run (`lmgrade.grading.stand_in`) replaces a failed component of the student's by the grader's. The
record of what the reference's component did is never in the child: its supervisor reads it from the
grading process only after the child is forked (`server.py`), and answers each call the child makes
(`lmgrade.boundary.stand_in_answers`). Two pipes, as the timing checks' ticks have:

    child --question--> supervisor      (QUESTION_FD: a length, then a wire document)
    child <--answer---- supervisor      (ANSWER_FD: the same)

A child gets an answer to a call only after making it, and only the reference's answer to a call that
matches its own: what it can learn is what any correct component would have told it.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Callable

from ..boundary import wire
from ..boundary.call_snapshots import NoRecordedCall
from ..boundary.protocol import read_exactly, write_all

QUESTION_FD, ANSWER_FD = 6, 7
LENGTH = struct.Struct(">Q")
# A question is a call's arguments (a training step's batch, a model's parameters): far below this.
MAX_QUESTION_BYTES = 256 * 2**20
MAX_ANSWER_DOCUMENT_BYTES = wire.MAX_REQUEST_DOCUMENT_BYTES

enabled = False  # set by the child of a stand-in run
current_case = -1  # the case running now, set by the child before each
_here: Callable[[bytes], bytes] | None = None  # an answerer in this very process (`answered_here`)


def _read_exactly(fd: int, n: int) -> bytes:
    data = read_exactly(fd, n)
    if data is None:
        raise NoRecordedCall("the grader's stand-in is gone")
    return data


def ask(question: dict) -> dict:
    """The supervisor's answer to `question` (a call of the stand-in, as plain data), for the current case;
    `NoRecordedCall` where the record holds no answer to it."""
    payload = wire.encode({**question, "case": current_case})
    if _here is not None:
        reply = _here(payload)
    elif enabled:
        write_all(QUESTION_FD, LENGTH.pack(len(payload)) + payload)
        (size,) = LENGTH.unpack(_read_exactly(ANSWER_FD, LENGTH.size))
        reply = _read_exactly(ANSWER_FD, size)
    else:
        raise NoRecordedCall("no stand-in answers in this run")
    answer = wire.decode(reply, max_document_bytes=MAX_ANSWER_DOCUMENT_BYTES)
    if "none" in answer:
        raise NoRecordedCall(answer["none"])
    return answer


@contextlib.contextmanager
def answered_here(answer: Callable[[bytes], bytes], case: int = 0):
    """Stand-in calls answered by `answer` in this process, as case `case`: a replay run outside the
    sandbox (the grader's own tests of its stand-ins), with the same questions and answers as a child's."""
    global _here, current_case
    outer = _here, current_case
    _here, current_case = answer, case
    try:
        yield
    finally:
        _here, current_case = outer


class Questions:
    """The supervisor's side: a child's bytes split into questions, answers queued for a child that reads
    them when it will (the answer pipe is non-blocking: a child that asks and never reads cannot stall
    the supervisor, which keeps its clock)."""

    def __init__(self, answer_fd: int, answer):
        self.answer_fd, self.answer = answer_fd, answer
        self.buffer = bytearray()
        self.outgoing = bytearray()
        self.too_large = False
        os.set_blocking(answer_fd, False)

    def feed(self, chunk: bytes) -> None:
        """Take what the child wrote; answer every whole question in it."""
        self.buffer += chunk
        while len(self.buffer) >= LENGTH.size:
            (size,) = LENGTH.unpack_from(self.buffer)
            if size > MAX_QUESTION_BYTES:
                self.too_large = True
                return
            if len(self.buffer) < LENGTH.size + size:
                return
            payload = bytes(self.buffer[LENGTH.size : LENGTH.size + size])
            del self.buffer[: LENGTH.size + size]
            reply = self.answer(payload)
            self.outgoing += LENGTH.pack(len(reply)) + reply
        self.flush()

    def flush(self) -> None:
        """Write what the pipe takes now of the answers queued."""
        while self.outgoing:
            try:
                written = os.write(self.answer_fd, self.outgoing)
            except BlockingIOError:
                return
            except OSError:  # the child closed its end: nobody reads the answers
                self.outgoing.clear()
                return
            del self.outgoing[:written]
