"""Gradescope's results.json, written through gradescope-utils.

Each check becomes one plain unittest test, decorated with gradescope-utils'
``weight``, ``number``, ``visibility`` and ``partial_credit``, and the suite
is run by its ``JSONTestRunner``. What the runner is known to lose cannot
happen here: no test is skipped, uses subTest or has a setUpClass (the
verdict is computed before the test runs; the test only reports it), and the
file is replaced atomically after every check, starting with a provisional
file, so a crash of anything leaves valid JSON with every check listed.
"""

from __future__ import annotations

import io
import json
import time
import unittest
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from gradescope_utils.autograder_utils.decorators import number, partial_credit, visibility
from gradescope_utils.autograder_utils.json_test_runner import JSONTestRunner

from ..core.atomic import write_atomically
from .results import CheckScore

if TYPE_CHECKING:  # the Gradescope supervisor writes results.json without numpy
    from ..declare.checks import Check

NOT_GRADED = "not graded: the autograder stopped before this check finished"


def page_pointer(assignment: str) -> str:
    """Where a student sees the pictures that results.json's text cannot hold: their own feedback page.

    results.json stays text (no `output_format`): as "html" every output, text a submission controls
    included, would be read as markup, and what Gradescope's sanitiser keeps of an inline picture is not
    documented; the line links to nothing outside."""
    return (
        f"Pictures of where your numbers differ: run `lmgrade check {assignment} . --html feedback.html` in your "
        "submission's folder, with the course's student bundle installed, then open feedback.html in a browser."
    )


def _test_method(check: Check, num: int, score: float, output: str):
    @number(str(num))
    @visibility(check.visibility)
    @partial_credit(check.points)
    def test(self, set_score=None):
        set_score(round(score, 6))
        if output:
            print(output)

    test.__doc__ = f"{check.name}: {check.title}"
    return test


def results_json(
    checks: Iterable[tuple[int, Check]],
    graded: dict[int, CheckScore],
    *,
    output: str = "",
    started: float | None = None,
    pointer: str = "",
) -> dict:
    """The results.json document: graded checks (by number) with their score, the others at 0.

    `checks` may hold the zip's `CheckEntry`s instead (their name, title, points and visibility).
    `pointer` (`page_pointer`) ends the top-level output where a visible check lost points.
    """
    checks = list(checks)
    lost = any(
        num in graded and graded[num].score < check.points and check.visibility == "visible" for num, check in checks
    )
    output = "\n\n".join(part for part in (output, pointer if lost else "") if part)
    methods = {}
    for num, check in checks:
        score, text = (graded[num].score, graded[num].output) if num in graded else (0.0, NOT_GRADED)
        methods[f"test_{num:04d}"] = _test_method(check, num, score, text)
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(type("Checks", (unittest.TestCase,), methods))

    def post(data: dict) -> None:
        for test in data["tests"]:
            # The runner leaves out an empty output, and print adds a newline.
            test["output"] = test.get("output", "").rstrip("\n")
        data["execution_time"] = round(time.time() - started, 3) if started else 0.0
        data["score"] = round(sum(t.get("score", 0.0) for t in data["tests"]), 6)
        data["output"] = output
        data["stdout_visibility"] = "hidden"
        if not data.get("leaderboard"):
            data.pop("leaderboard", None)

    stream = io.StringIO()
    JSONTestRunner(stream=stream, visibility=None, post_processor=post, failure_prefix="").run(suite)
    return json.loads(stream.getvalue())


class ResultsFile:
    """results.json kept valid from before the first check until the last."""

    def __init__(self, path: Path, checks: list[Check], output: str = "", pointer: str = ""):
        self.path = Path(path)
        self.checks = list(enumerate(checks, start=1))
        self.graded: dict[int, CheckScore] = {}
        self.output = output
        self.pointer = pointer
        self.started = time.time()
        self.write()

    def record(self, num: int, score: CheckScore) -> None:
        self.graded[num] = score
        self.write()

    def write(self) -> None:
        write_atomically(
            self.path,
            results_json(self.checks, self.graded, output=self.output, started=self.started, pointer=self.pointer),
        )
