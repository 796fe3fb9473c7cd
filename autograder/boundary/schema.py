"""What the grading process accepts from a sandboxed child: every field of every frame, its type and its size.

A child may write its frames itself (its result pipe is open to the
student's code), so each field below is a claim, never a fact: the schema
takes what it declares and nothing else, and decoding never raises. A frame
that does not fit becomes a failed case with a plain reason; the grading
process goes on to its verdict.

Per frame (`protocol`: kind, case index, payload):

- HELLO, the first frame, sent by the harness before any student code runs:
  a dict of the defences in force (`hello`). Frames before it are not read.
- CASE_START: the case index alone (no payload is read).
- CASE_RESULT: a `wire` value of one dict of one entry (`case_result`):
  - ``{"ok": VALUE}``: the answer, any plain data `wire.decode` accepts;
  - ``{"error": ERROR}`` or ``{"import_error": ERROR}``: ERROR a dict whose
    fields `ERROR_FIELDS` are strings of at most their length (any other
    type is written as an empty string, any other key dropped);
  - ``{"forbidden": APIS}``: APIS a list of at most `MAX_FORBIDDEN` names,
    each a dotted identifier of at most `MAX_API_CHARS` characters.
- DONE: no payload is read.

The import probe's answer (`probe_names`) is a dict from a module name of
the submission's files to a list of identifiers; anything else is dropped.
Nothing a child names is a path the grading process opens: names select
among the grader's own lists, compared as text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from . import wire

# The fields of an exception's report, and the most characters of each that are kept.
ERROR_FIELDS = {"type": 200, "message": 4000, "traceback": 4000, "file": 200, "where": 4000}
OUTCOME_KEYS = ("ok", "error", "import_error", "forbidden")
MAX_FORBIDDEN = 20
MAX_API_CHARS = 200
API_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# A forbidden operator's record (`guards._stop_operator`): the API, and the operator it was reached through
# ("aten::cross_entropy_loss", or a Python version of one), each a name of that shape alone.
_OPERATOR = r"[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*"
API_CALL = re.compile(rf"{API_NAME.pattern} \(reached through {_OPERATOR}(?:, a Python version of {_OPERATOR})?\)")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# The most names a file's entry of the import probe's answer keeps, and their length.
MAX_DEFINED = 1000
MAX_NAME_CHARS = 100
MAX_HELLO_BYTES = 64 * 2**10


@dataclass
class CaseOutcome:
    """What became of one case in the sandbox.

    kind: "ok" (value holds the returned data), "error" (the submission raised),
    "import_error", "forbidden" (value: the forbidden APIs it called),
    "crashed" (the process died), "timeout", "not_run".
    """

    kind: str
    value: Any = None
    error: dict | None = None
    message: str = ""
    seconds: float | None = None  # from its start to its result, on the fork server's clock


class MalformedHello(ValueError):
    """The harness's first frame could not be read: the sandbox itself failed, not the submission."""


def hello(payload: bytes) -> dict:
    """The defences the child's harness reports; `MalformedHello` where the frame is not a dict of them."""
    try:
        info = wire.decode(payload, max_document_bytes=MAX_HELLO_BYTES)
    except wire.WireError as exc:
        raise MalformedHello(str(exc)) from None
    if not isinstance(info, dict) or not all(isinstance(k, str) for k in info):
        raise MalformedHello("the defences are not a dict of names")
    failed = info.get("harness_error")
    if failed is not None:
        message = failed.get("message") if isinstance(failed, dict) else None
        info["harness_error"] = {"message": message[:4000] if isinstance(message, str) else "(no message)"}
    return info


def case_result(payload: bytes) -> CaseOutcome:
    """One case's outcome from its CASE_RESULT payload; never raises."""
    try:
        outcome = wire.decode(payload)
    except wire.WireError as exc:
        return unreadable(str(exc))
    except Exception as exc:  # the decoder's own promise broken: still the case's verdict, not the grader's fault
        return unreadable(f"undecodable result ({type(exc).__name__})")
    if not isinstance(outcome, dict) or len(outcome) != 1:
        return unreadable("not one outcome")
    ((key, value),) = outcome.items()
    if key == "ok":
        return CaseOutcome("ok", value=value)
    if key in ("error", "import_error"):
        return CaseOutcome(key, error=error_report(value))
    if key == "forbidden":
        return CaseOutcome("forbidden", value=api_names(value))
    return unreadable("an unknown outcome")


def unreadable(why: str) -> CaseOutcome:
    """A result that does not fit the schema: the case failed, with why (shown on visible checks only)."""
    return CaseOutcome("error", message=f"unreadable result: {why}"[:500])


def error_report(value: Any) -> dict[str, str]:
    """An exception's report: each of `ERROR_FIELDS` a string of at most its length ("" where not a string)."""
    value = value if isinstance(value, dict) else {}
    return {f: _text(value.get(f), most) for f, most in ERROR_FIELDS.items()}


def _text(value: Any, most: int) -> str:
    if not isinstance(value, str):
        return ""
    # A lone surrogate (json's \\ud800) cannot be written out as UTF-8: each becomes U+FFFD.
    return value[:most].encode("utf-8", "replace").decode("utf-8")


def api_names(value: Any) -> list[str]:
    """The forbidden APIs a case is said to have called: dotted names only, at most `MAX_FORBIDDEN`."""
    items = value if isinstance(value, list) else []
    names = [v for v in items[:MAX_FORBIDDEN] if isinstance(v, str) and len(v) <= MAX_API_CHARS]
    return [v for v in names if API_NAME.fullmatch(v) or API_CALL.fullmatch(v)] or ["an API it may not use"]


def probe_names(value: Any, modules: list[str]) -> dict[str, list[str]]:
    """The import probe's answer: for each of `modules` (the submission's files' module names) the public
    names it defines, identifiers only; any other key or item is dropped."""
    if not isinstance(value, dict):
        return {}
    out: dict[str, list[str]] = {}
    for module in modules:
        names = value.get(module)
        if isinstance(names, list):
            out[module] = [
                n
                for n in names[:MAX_DEFINED]
                if isinstance(n, str) and len(n) <= MAX_NAME_CHARS and IDENTIFIER.fullmatch(n)
            ]
    return out
