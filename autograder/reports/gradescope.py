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

from ..atomic import write_atomically
from ..results import CheckScore

if TYPE_CHECKING:  # the Gradescope supervisor writes results.json without numpy
    from ..checks import Check

NOT_GRADED = "not graded: the autograder stopped before this check finished"


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
) -> dict:
    """The results.json document: graded checks (by number) with their score, the others at 0.

    `checks` may hold the zip's `CheckEntry`s instead (their name, title, points and visibility).
    """
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

    def __init__(self, path: Path, checks: list[Check], output: str = ""):
        self.path = Path(path)
        self.checks = list(enumerate(checks, start=1))
        self.graded: dict[int, CheckScore] = {}
        self.output = output
        self.started = time.time()
        self.write()

    def record(self, num: int, score: CheckScore) -> None:
        self.graded[num] = score
        self.write()

    def write(self) -> None:
        write_atomically(self.path, results_json(self.checks, self.graded, output=self.output, started=self.started))
