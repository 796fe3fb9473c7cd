"""One submission's grade as plain data: what a worker sends back to the client.

`grade_folder` is the one function every executor runs, in this process or
on a Dask worker: it grades through `grade_submission` with the worker's
`Grader` and returns its `results.Graded` as a dict of strings and numbers (no
harness objects cross the wire, so a client and its workers need only agree
on this shape). Any
failure of the harness on one submission comes back as that submission's
`error`, never as an exception that would stop the others.
"""

from __future__ import annotations

import re
import time
from fnmatch import fnmatchcase
from pathlib import Path

from ...core.hidden_inputs import HiddenInputs
from ...declare.assignment import Assignment
from ...grading.feedback import FORBIDDEN_HIDDEN, NOT_IMPLEMENTED
from ...grading.grader import Grader
from ...grading.submission_grading import grade_submission
from ...reports.results import CheckScore, Graded, GradingRun, describe_failure
from ...sandbox.limits import Limits

__all__ = [
    "CheckScore",
    "Graded",
    "ZERO_CAUSES",
    "describe_failure",
    "grade_folder",
    "observed_facts",
    "zero_cause",
]


# Why a submission scored 0, most basic first: the first that applies is its cause.
ZERO_CAUSES = {
    "import": "syntax error or import failure",
    "missing": "missing or misnamed file",
    "stub": "untouched stub (every case raised NotImplementedError)",
    "wrong": "everything wrong",
}


def zero_cause(run: GradingRun) -> str:
    """The key of `ZERO_CAUSES` that says why `run` scored 0 ("" for a score above 0, or nothing to score)."""
    if run.score > 0 or not run.verdicts:
        return ""
    said = [run.note, *(v.output for v in run.verdicts)]
    messages = [verdict.message for v in run.verdicts for _, verdict in v.cases]
    if any("could not be imported" in text for text in said) or any(
        m.startswith("could not import the submission") for m in messages
    ):
        return "import"
    if (
        any(text.startswith("not graded:") and "is missing from the submission" in text for text in said)
        or "nothing was graded" in run.note
    ):
        return "missing"
    if messages and all(m == NOT_IMPLEMENTED for m in messages):
        return "stub"
    return "wrong"


# What a person should look at, as `Graded.observed` records it: (kind, check, detail). A time limit's
# detail is the limit (`limit_words`); an import that hung, or a grading past its budget, is a TIMEOUT of the
# check named IMPORT or BUDGET, which no check is.
TIMEOUT, FORBIDDEN, MUCH_FASTER = "timeout", "forbidden", "much faster"
IMPORT, BUDGET = "(import)", "(budget)"
# How the sandbox begins the message of a case stopped by a limit (`sandbox.pool.describe_death`), and of one
# left unrun when its check's time ran out.
TIMEOUT_OPENINGS = ("time limit exceeded", "CPU time limit exceeded", "not run: the check's time limit was used up")
IMPORT_OPENING = "could not import the submission: "  # `feedback.outcome_verdict`, before an import's failure
# How the grader begins the message of a forbidden use (`feedback.forbidden_message`), and how a timing check
# says a time much below the reference's (`timing_verdicts.judge_case`).
FORBIDDEN_OPENING = "used "
FASTER_WORDS = "flagged for review by the course staff"
_API = re.compile(r"[A-Za-z0-9_.:*]{1,120}")
_SECONDS = r"(\d{1,9}(?:\.\d{1,6})?(?:e[+-]?\d+)?)"
# The sandbox's own words for a case it stopped (`sandbox.pool.describe_death`), its limit in them.
_WALL_STOP = re.compile(rf"time limit exceeded: still running after {_SECONDS} s \(wall clock\)")
_CPU_STOP = re.compile(rf"CPU time limit exceeded \({_SECONDS} s\)")
# What every check of a submission says where its import hung (`import_probe.Imports.refusal`), or its grading
# ran past its budget (`Grader.over_budget_message`): the whole of the check's output, in the grader's words.
_IMPORT_HUNG = re.compile(r"not graded: (.+) could not be imported: it ran past its time limit \(see above\)")
_OVER_BUDGET = re.compile(
    rf"not graded: this submission's grading ran past its budget of {_SECONDS} s \(grading_budget_s\)"
)
_TIMES = re.compile(r"(\d[\d.]* ?[µm]?s) per call against the reference's (\d[\d.]* ?[µm]?s) \((\d[\d.]*)x")


def _forbidden_names(assignment: Assignment) -> tuple[str, ...]:
    """The names and patterns of everything the assignment forbids: the only API a review reason may name."""
    spec = assignment.spec
    names = [*spec.forbidden]
    for also in (spec.forbidden_also, spec.forbidden_operators):
        for api, others in also.items():
            names += [api, *others]
    return tuple(names)


def _forbidden_apis(message: str, forbidden: tuple[str, ...]) -> list[str]:
    """The forbidden APIs a case's message names, where the grader wrote its opening words: each must be one
    the assignment forbids, so that no text of the submission's (its code, its output) can become one."""
    if message == FORBIDDEN_HIDDEN:
        return ["an API this assignment forbids"]
    if not message.startswith(FORBIDDEN_OPENING):
        return []
    found = []
    for line in message.splitlines():
        if not line.startswith(FORBIDDEN_OPENING):
            break
        named = line[len(FORBIDDEN_OPENING) :].split(" in ")[0].split(", which")[0]
        for api in named.split(", "):
            if _API.fullmatch(api) and any(fnmatchcase(api, name) for name in forbidden) and api not in found:
                found.append(api)
    return found


def limit_words(cpu_s: float | None, wall_s: float | None) -> str:
    """A time limit as a review reason says it: "4 s CPU or 8 s wall clock"."""
    said = [f"{cpu_s:g} s CPU" if cpu_s is not None else "", f"{wall_s:g} s wall clock" if wall_s else ""]
    return " or ".join(part for part in said if part)


def _limit_stopped_at(message: str) -> str:
    """The limit in the sandbox's own words for a case it stopped ("" where they name none: a case not run)."""
    first = message.removeprefix(IMPORT_OPENING).split("\n")[0]
    if wall := _WALL_STOP.fullmatch(first):
        return limit_words(None, float(wall[1]))
    if cpu := _CPU_STOP.fullmatch(first):
        return limit_words(float(cpu[1]), None)
    return ""


def import_probe_limits(assignment: Assignment) -> tuple[float, float]:
    """(CPU s, wall s) of the import probe's run: the assignment's limits (`import_probe.ImportProbe._probe`)."""
    limits = Limits(**{**Limits().as_dict(), **assignment.spec.limits})
    return limits.cpu_s, limits.wall_s


def _stopped_whole(assignment: Assignment, output: str) -> tuple[str, str, str] | None:
    """The fact a check's whole output states where the grader stopped every check of the submission: its import
    hung (the files it names must be the assignment's), or its grading ran past its budget (the assignment's)."""
    if (hung := _IMPORT_HUNG.fullmatch(output)) and set(hung[1].split(" and ")) <= set(assignment.spec.files):
        return (TIMEOUT, IMPORT, limit_words(*import_probe_limits(assignment)))
    budget = f"{assignment.spec.grading_budget_s:g}"
    if (over := _OVER_BUDGET.fullmatch(output)) and over[1] == budget:
        return (TIMEOUT, BUDGET, f"{budget} s")
    return None


def observed_facts(assignment: Assignment, run: GradingRun) -> tuple[tuple[str, str, str], ...]:
    """What the grading observed that a person should look at, check by check: a check whose run a time limit
    stopped, with that limit (`Verdict.time_limits`, the sandbox's account, for hidden checks too), an import
    that hung or a grading past its budget (the whole of every check's output, in the grader's words, checked
    against the assignment); from the opening words of each case's message, which the grader always writes
    itself (a submission's text, where a message holds some, comes after them), a case stopped by a time
    limit, a forbidden API the assignment lists, a time much below the reference's (with the grader's own
    figures). Never a line the submission printed."""
    forbidden = _forbidden_names(assignment)
    timed = {c.name for c in assignment.checks if c.timing is not None}
    facts: list[tuple[str, str, str]] = []

    def add(fact: tuple[str, str, str]) -> None:
        if fact not in facts:
            facts.append(fact)

    for verdict in run.verdicts:
        name = verdict.check.name
        if (whole := _stopped_whole(assignment, verdict.output)) is not None:
            add(whole)
            continue
        # The limit the check's run was stopped by: the grader's record of it, else the sandbox's words.
        stopped = limit_words(*verdict.time_limits) if verdict.time_limits is not None else None
        for _, case in verdict.cases:
            if case.passed and name not in timed:
                continue
            message = case.message
            if message.removeprefix(IMPORT_OPENING).startswith(TIMEOUT_OPENINGS):
                stopped = stopped or _limit_stopped_at(message)
            for api in _forbidden_apis(message, forbidden):
                add((FORBIDDEN, name, api))
            if name in timed and FASTER_WORDS in message.split("\n")[0]:
                times = _TIMES.match(message)
                add((MUCH_FASTER, name, f"{times[1]} against {times[2]}, {times[3]}x" if times else ""))
        if stopped is not None:
            add((TIMEOUT, name, stopped))
    return tuple(facts)


def grade_folder(
    grader: Grader, assignment: Assignment, variant: dict, folder: Path, hidden: HiddenInputs | None = None
) -> dict:
    """Grade one submission folder with `grader` (and the student's `hidden` inputs, where they are drawn
    per student); its `Graded` as a dict, an `error` if grading failed."""
    started = time.perf_counter()
    try:
        run = grade_submission(assignment, variant, folder, grader=grader, hidden=hidden)
    except Exception as exc:  # a HarnessFault or a bug of the harness: this submission's row only
        return Graded.failed(exc).as_dict()
    wall_s = round(time.perf_counter() - started, 3)
    try:
        observed = observed_facts(assignment, run)
    except Exception as exc:  # a fault of reading the verdicts: the grade stands, the review queue says why
        observed = (("harness", "", describe_failure(exc)),)
    return Graded.of(run, wall_s=wall_s, zero_cause=zero_cause(run), observed=observed).as_dict()
