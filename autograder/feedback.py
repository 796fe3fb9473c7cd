"""A check's verdict in words: what the student reads for each check.

The numbers are judged elsewhere (`checks.Check.verdict`); this module says
what happened in the sandbox (an exception, a crash, a timeout), sums the
cases up within Gradescope's output budget, and reports what the code
printed. For a check that is not visible, nothing in the feedback may reveal
its inputs: no case labels, no expected values, and none of the student's
own output (which could print the inputs).
"""

from __future__ import annotations

from typing import Any

from .checks import Case, CaseVerdict, Check, Mistake
from .sandbox.pool import CaseOutcome, Output

ALL_CASES_NOTE = "{passed}/{total} cases passed"
NOT_IMPLEMENTED = "not implemented (raised NotImplementedError)"
# Gradescope cuts a results.json whose outputs pass 100,000 characters; no
# check may take more than its share.
MAX_FEEDBACK_CHARS = 6000
OUTPUT_EXCERPT_CHARS = 600


def outcome_verdict(
    check: Check, case: Case, expected: Any, outcome: CaseOutcome, reveal: bool, dead: str | None = ""
) -> CaseVerdict:
    """Turn what happened in the sandbox into a verdict on one case (`dead`: see `Check.verdict`)."""
    if outcome.kind == "ok":
        return check.verdict(case, expected, outcome.value, reveal=reveal, dead=dead)
    if outcome.kind in ("error", "import_error"):
        err = outcome.error or {}
        if outcome.kind == "import_error":
            return CaseVerdict(
                False,
                f"could not import the submission: {err.get('type')}: {err.get('message')}\n" + traceback_tail(err),
            )
        if err.get("type") == "NotImplementedError":
            return CaseVerdict(False, NOT_IMPLEMENTED)
        if err.get("type") == "MemoryError":
            return CaseVerdict(False, f"ran out of memory (limit {check.limits.memory_mb} MiB)")
        return CaseVerdict(False, f"raised {err.get('type')}: {err.get('message')}\n" + traceback_tail(err))
    if outcome.kind == "forbidden":
        return CaseVerdict(False, forbidden_message(outcome.value))
    if outcome.kind == "timeout" and check.timeout_hint:
        return CaseVerdict(False, f"{outcome.message}\n{check.timeout_hint}")
    return CaseVerdict(False, outcome.message)


def forbidden_message(apis: list[str], where: str = "") -> str:
    """What a student reads when a case used a library API the assignment forbids."""
    named = ", ".join(apis)
    return (
        f"used {named}{where}, which this assignment forbids: the point is to write it yourself "
        "(see the handout's list of forbidden APIs)"
    )


def traceback_tail(err: dict, lines: int = 6) -> str:
    """The end of the traceback, without the import machinery's own frames."""
    kept, skip = [], False
    for line in (err.get("traceback") or "").rstrip().splitlines():
        if line.lstrip().startswith('File "<frozen '):
            skip = True
            continue
        if skip and line.startswith("    ") and not line.lstrip().startswith("File "):
            continue
        skip = False
        kept.append(line)
    return "\n".join(kept[-lines:])


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + line for line in text.splitlines())


def summarize(cases: list[tuple[Case, CaseVerdict]], reveal: bool, mistake: Mistake | None = None) -> str:
    """The cases' verdicts in at most about MAX_FEEDBACK_CHARS characters."""
    passed = sum(v.passed for _, v in cases)
    lines = [ALL_CASES_NOTE.format(passed=passed, total=len(cases)) + "."]
    if mistake is not None:
        lines.append(f"Every failed case matches a known mistake: {mistake.explanation}.")
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


def describe_output(output: Output, *, failed: bool, reveal: bool) -> str:
    """What the code printed: said for a failed visible check, counted otherwise.

    Prints never cost points; they are shown only where they help to find a
    failure, and never for a check whose inputs are not shown.
    """
    if not output.total_bytes:
        return ""
    size = human_bytes(output.total_bytes)
    note = f"Your code printed {size}" + ("; output shortened" if output.shortened else "")
    if not (failed and reveal):
        return f"({note}.)"
    head = output.head[:OUTPUT_EXCERPT_CHARS]
    tail = output.tail[-OUTPUT_EXCERPT_CHARS:]
    parts = [f"{note}. It began:", _indent(head.rstrip())]
    if tail and (output.shortened or len(output.head) > OUTPUT_EXCERPT_CHARS):
        parts += ["and ended:", _indent(tail.rstrip())]
    return "\n".join(parts)
