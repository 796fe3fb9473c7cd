"""Write the child's result frames ourselves: every case "answered", bools claimed True, then DONE and exit.

At the first call, the child's own frame (found up the stack) gives the check's scenario, its cases and the
loaded modules; each case is run here and its outcome written as a CASE_RESULT frame (an error becomes the
answer True, every bool inside an answer becomes True) for every case index, before and after the current
one; then DONE, to the result pipe (fd 3), stdout, stderr and every other descriptor up to 20, and the
child leaves with status 0 before the harness writes anything of its own.
"""

from __future__ import annotations

import os
import struct
import sys

from fill import _tried

_FRAME = struct.Struct(">BiQ")  # kind, case index, payload length
_CASE_START, _CASE_RESULT, _DONE = 2, 3, 4


def _frame(kind, index, payload=b""):
    return _FRAME.pack(kind, index, len(payload)) + payload


def _claimed(value, depth=0):
    if depth > 20:
        return value
    if isinstance(value, bool):
        return True
    if isinstance(value, list):
        return [_claimed(v, depth + 1) for v in value]
    if isinstance(value, tuple):
        return tuple(_claimed(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return {k: _claimed(v, depth + 1) for k, v in value.items()}
    return value


def _childs_frame():
    frame = sys._getframe()
    while frame is not None:
        names = frame.f_locals
        if "scenario" in names and "cases" in names and "modules" in names:
            return frame
        frame = frame.f_back
    return None


def _write_everywhere(data):
    for fd in [3, 1, 2, *range(4, 21)]:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except OSError:
            pass


def _hook():
    if sys.__dict__.get("_cheat_forging"):
        return
    frame = _childs_frame()
    wire = sys.modules.get("lmgrade.wire")
    if frame is None or wire is None:
        return
    sys._cheat_forging = True
    names = frame.f_locals
    scenario, cases, modules = names["scenario"], names["cases"], names["modules"]
    frames = []
    for index, case in enumerate(cases):
        try:
            payload = wire.encode({"ok": _claimed(scenario(modules, case))})
        except BaseException:
            payload = wire.encode({"ok": True})
        frames += [_frame(_CASE_START, index), _frame(_CASE_RESULT, index, payload)]
    _tried(f"forging {len(cases)} case results and DONE")
    _write_everywhere(b"".join(frames) + _frame(_DONE, -1))
    os._exit(0)
