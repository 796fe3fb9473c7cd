"""A check's verdict in words: what the student reads for each check.

The numbers are judged elsewhere (`checks.Check.verdict`); this module says
what happened in the sandbox (an exception, a crash, a timeout), sums the
cases up within Gradescope's output budget, and reports what the code
printed.

A visible check says all it can: the values, the exception's type, message
and the traceback of the student's own frames (their files named as in the
submission: the grader's frames, the check's scenario and the sandbox, are
said in words, the grader's and the libraries' paths never).

A check that is not visible says of a failed case only which case failed and
the kind of failure, one of the four of `HIDDEN_FAILURES`: nothing the
submission chose (no line number, no exception's type or message, nothing it
printed, no number computed from its answer), which could spell out the
hidden inputs. A failing hidden case carries at most two bits; the check as
a whole adds the known mistake every failed case matches, if one does (one of
the check's own list).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from ..core.comparison import without_float32_hint
from ..declare.checks import Case, CaseVerdict, Check, Mistake
from ..sandbox.pool import CaseOutcome, Output

ALL_CASES_NOTE = "{passed}/{total} cases passed"
NOT_IMPLEMENTED = "not implemented (raised NotImplementedError)"
# Gradescope cuts a results.json whose outputs pass 100,000 characters; no
# check may take more than its share.
MAX_FEEDBACK_CHARS = 6000
OUTPUT_EXCERPT_CHARS = 600


def outcome_verdict(
    check: Check, case: Case, expected: Any, outcome: CaseOutcome, reveal: bool, dead: str | None = ""
) -> CaseVerdict:
    """Turn what happened in the sandbox into a verdict on one case (`dead`: see `Check.verdict`).

    Hidden (`reveal` False): a passed case says nothing, a failed one its kind of failure alone (`hidden_failure`).
    """
    if not reveal:
        if outcome.kind == "ok":  # the judge's own facts kept (passed, ...), its words replaced
            judged = _judged(check, case, expected, outcome.value, False, dead)
            return replace(judged, message="" if judged.passed else hidden_failure(outcome))
        return CaseVerdict(False, hidden_failure(outcome))
    if outcome.kind == "ok":
        return _judged(check, case, expected, outcome.value, reveal, dead)
    if outcome.kind in ("error", "import_error"):
        if outcome.error is None:  # what the child sent could not be read (`sandbox.schema` says why)
            return CaseVerdict(False, outcome.message)
        err = outcome.error
        if outcome.kind == "import_error":
            if err.get("where"):  # the child wrote it from the student's frames, files as submitted
                return CaseVerdict(False, "could not import the submission:\n" + _indent(err["where"], "  "))
            return CaseVerdict(False, f"could not import the submission: {raised(check, err)}")
        if err.get("type") == "NotImplementedError":
            return CaseVerdict(False, NOT_IMPLEMENTED)
        if err.get("type") == "MemoryError":
            return CaseVerdict(False, f"ran out of memory (limit {check.limits.memory_mb} MiB)")
        if err.get("type") == "WireError":  # the child could not send the answer (`wire.encode` says why)
            return CaseVerdict(False, f"{NOT_PLAIN}: {err.get('message')}")
        return CaseVerdict(False, raised(check, err))
    if outcome.kind == "forbidden":
        return CaseVerdict(False, forbidden_message(outcome.value))
    if outcome.kind == "timeout" and check.timeout_hint:
        return CaseVerdict(False, f"{outcome.message}\n{check.timeout_hint}")
    return CaseVerdict(False, outcome.message)


# What a failed case of a hidden check says: one of these four sentences, and nothing else (two bits).
WRONG_HIDDEN = "wrong value (a hidden check shows none of its inputs, nor the right value, nor yours)"
UNANSWERED_HIDDEN = (
    "no answer: it raised an exception, ran out of time or memory, or the process running it ended (a hidden "
    "check says neither which nor where: the visible checks, and your own tests on inputs like it, show it)"
)
FORBIDDEN_HIDDEN = (
    "used an API this assignment forbids (the visible checks name it): the point is to write it yourself "
    "(see the handout's list of forbidden APIs)"
)
HIDDEN_FAILURES = (WRONG_HIDDEN, NOT_IMPLEMENTED, UNANSWERED_HIDDEN, FORBIDDEN_HIDDEN)


def hidden_failure(outcome: CaseOutcome) -> str:
    """The one sentence of `HIDDEN_FAILURES` a failed hidden case says, from what became of it.

    An answer judged wrong, or one that could not be read or sent, is a wrong value; a NotImplementedError
    (the stub's) is not implemented; any other exception, an import that failed in the check, a timeout, a
    case not run for lack of time, a memory limit and a dead process are no answer."""
    if outcome.kind == "ok":
        return WRONG_HIDDEN
    if outcome.kind == "forbidden":
        return FORBIDDEN_HIDDEN
    if outcome.kind == "error" and (outcome.error is None or outcome.error.get("type") == "WireError"):
        return WRONG_HIDDEN
    if outcome.kind == "error" and outcome.error.get("type") == "NotImplementedError":
        return NOT_IMPLEMENTED
    return UNANSWERED_HIDDEN


NOT_PLAIN = "the answer is not plain data the grader accepts"


def _judged(check: Check, case: Case, expected: Any, got: Any, reveal: bool, dead: str | None) -> CaseVerdict:
    """The check's verdict on an answer; a failed case where the answer is not what the check's scenario
    returns (a child may send any plain data in its place) and the judge cannot read it."""
    try:
        return check.verdict(case, expected, got, reveal=reveal, dead=dead)
    except Exception as exc:
        try:  # the judge reads the reference's own answer: then the fault is in the one it was given
            check.verdict(case, expected, expected, reveal=reveal, dead=dead)
        except Exception:
            raise exc from None  # the judge itself fails: the grader's error, not the submission's
        return CaseVerdict(
            False,
            f"the answer could not be judged ({type(exc).__name__} while reading it): "
            "it is not shaped as the contract's answer",
        )


def forbidden_message(apis: list[str], where: str = "") -> str:
    """What a student reads when a case used a library API the assignment forbids."""
    named = ", ".join(apis)
    return (
        f"used {named}{where}, which this assignment forbids: the point is to write it yourself "
        "(see the handout's list of forbidden APIs)"
    )


# A frame of the traceback the child sends (`traceback.format`), and the path of a submitted file in
# the sandbox: the fork server copies the submission into <its temporary folder>/lmgrade-run-*/submission.
_FRAME = re.compile(r'  File "(?P<path>[^"]*)", line (?P<line>\d{1,9}), in (?P<name>.*)')
_SUBMITTED = re.compile(r"/lmgrade-run-[^/]+/submission/(?P<file>.+)")
_OUTSIDE = "  (code outside your files)"


@dataclass
class Frame:
    """One frame of a traceback: the submitted file (None: the grader's or a library's), line, function, source."""

    file: str | None
    line: int
    name: str
    source: list[str]


def frames(traceback: str) -> list[Frame]:
    """The frames of the last exception of a formatted traceback, outermost first."""
    lines = traceback.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")]
    found: list[Frame] = []
    current = None
    for line in lines[starts[-1] if starts else 0 :]:
        match = _FRAME.fullmatch(line)
        if match:
            submitted = _SUBMITTED.search(match["path"])
            current = Frame(submitted and submitted["file"], int(match["line"]), match["name"], [])
            found.append(current)
        elif current is not None and line.startswith("    ") and len(current.source) < 3:
            current.source.append(line)  # the frame's line of source, and its carets
        else:
            current = None
    return found


def raised(check: Check, err: dict) -> str:
    """An exception of the student's code as the student reads it on a visible check: its type and message,
    then the traceback of the student's own frames (`student_traceback`)."""
    return f"raised {err.get('type')}: {err.get('message')}\n" + student_traceback(
        check, frames(err.get("traceback") or "")
    )


def student_traceback(check: Check, seen: list[Frame]) -> str:
    """The student's frames of a traceback, the grader's call and any code outside their files in words."""
    lines = [f"  called by the grader's check {check.name}"]
    own = False
    for frame in seen:
        if frame.file is None:
            if own and lines[-1] != _OUTSIDE:
                lines.append(_OUTSIDE)
            continue
        own = True
        lines.append(f'  File "{frame.file}", line {frame.line}, in {frame.name}')
        lines += frame.source
    if not own:
        lines.append("  (raised outside your files)")
    return "\n".join(lines)


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def summarize(cases: list[tuple[Case, CaseVerdict]], reveal: bool, mistake: Mistake | None = None) -> str:
    """The cases' verdicts in at most about MAX_FEEDBACK_CHARS characters."""
    passed = sum(v.passed for _, v in cases)
    lines = [ALL_CASES_NOTE.format(passed=passed, total=len(cases)) + "."]
    if mistake is not None:
        lines.append(f"Every failed case matches a known mistake: {mistake.explanation}.")
    if mistake is not None:  # the known mistake is the cause: no float32 sentence beside it
        cases = [(c, replace(v, message=without_float32_hint(v.message))) for c, v in cases]
    messages = {v.message for _, v in cases}
    if not passed and len(cases) > 1 and len(messages) == 1:
        return "\n".join(lines) + f"\nevery case: {messages.pop()}"
    shown: set[str] = set()
    for i, (case, verdict) in enumerate(cases):
        if verdict.passed:
            continue
        label = case.label if reveal else "hidden input"
        # The same failure on every case (not implemented, import error) is said once.
        if verdict.message in shown:
            lines.append(f"case {i + 1}: {label}: same as above")
            continue
        shown.add(verdict.message)
        block = f"case {i + 1}: {label}\n{_indent(verdict.message)}"
        if sum(map(len, lines)) + len(block) > MAX_FEEDBACK_CHARS:
            rest = sum(not v.passed for _, v in cases[i:])
            lines.append(f"... and {rest} more failed case{'s' if rest > 1 else ''}, not shown")
            break
        lines.append(block)
    return "\n".join(lines)


def human_bytes(n: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} bytes"


# Where the sandbox ran the submission's copy: a temporary folder of a new name each run. A warning the
# submission printed names its file there; shown relative, as the student's own Python would, so that the
# same submission gets the same feedback every time (and no folder of the grading machine is shown).
_RUN_FOLDER = re.compile(r"[^\s'\"(]*/lmgrade-run-[^/\s]+/submission/")


def describe_output(output: Output, *, failed: bool, reveal: bool) -> str:
    """What the code printed: said for a failed visible check, counted for a passed one.

    Prints never cost points; they are shown only where they help to find a
    failure. A check whose inputs are not shown says nothing of them, not even
    how much was printed (the amount is the submission's to choose).
    """
    if not output.total_bytes or not reveal:
        return ""
    size = human_bytes(output.total_bytes)
    note = f"Your code printed {size}" + ("; output shortened" if output.shortened else "")
    if not (failed and reveal):
        return f"({note}.)"
    head = _RUN_FOLDER.sub("", output.head)[:OUTPUT_EXCERPT_CHARS]
    tail = _RUN_FOLDER.sub("", output.tail)[-OUTPUT_EXCERPT_CHARS:]
    parts = [f"{note}. It began:", _indent(head.rstrip())]
    if tail and (output.shortened or len(output.head) > OUTPUT_EXCERPT_CHARS):
        parts += ["and ended:", _indent(tail.rstrip())]
    return "\n".join(parts)
