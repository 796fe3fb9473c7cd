"""How long `lmgrade grade ASSIGNMENT` takes on the reference, and how much of it is overhead.

    python benchmarks/grade_assignment.py rnn [--repeat 5] [--jobs 2]

Measured in one run, side by side:
- `lmgrade grade` on the reference, end to end (median of --repeat), with
  the expected-value store warm (a second grading: only the submission's side
  is computed, as run_autograder does with the values its zip carries) and
  cold (LMGRADE_CACHE=off: the reference computes every expected value);
- the checks' own compute: every check's scenario run twice in this process
  on the reference modules (once for the expected values, once in the place of
  the submission), without sandbox, wire or judging (median of --repeat);
- the share of the end-to-end time spent outside that compute (interpreter
  and plugin start, fork servers, copies, frames, judging, named mistakes);
- the same grading as the first on the machine (no zygote warm: it starts
  one) and with every fork server started afresh (LMGRADE_ZYGOTE=off);
- an untouched stub's grading (the generated starter files, no store);
- the processes one grading starts: fork servers (interpreters) and children.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import median_time  # noqa: E402

from lmgrade.declare import catalog, templates  # noqa: E402
from lmgrade.declare.checks import CaseContext  # noqa: E402
from lmgrade.grading.grader import Grader  # noqa: E402
from lmgrade.grading.oracle import LiveReference, run_scenario  # noqa: E402
from lmgrade.submissions.loader import load_files  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("assignment")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()

    assignment, variant = catalog.load(args.assignment)
    spec = assignment.spec
    with tempfile.TemporaryDirectory() as tmp:
        submission = Path(tmp) / "reference"
        submission.mkdir()
        for filename in spec.files:
            shutil.copy(spec.reference_folder() / filename, submission / filename)

        def grade(store: str, folder: Path = submission, **env: str):
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "lmgrade.cli",
                    "grade",
                    args.assignment,
                    str(folder),
                    "--results",
                    str(Path(tmp) / "results.json"),
                    "--jobs",
                    str(args.jobs),
                ],
                check=True,
                capture_output=True,
                cwd=ROOT,
                env={**os.environ, "LMGRADE_CACHE": store, **env},
            )

        fresh = iter(range(10**6))

        def first_on_the_machine() -> None:  # a zygote of its own each time: started, not found warm
            grade(warm_store, LMGRADE_ZYGOTE_DIR=str(Path(tmp) / f"zygotes-{next(fresh)}"), LMGRADE_ZYGOTE_IDLE="2")

        warm_store = str(Path(tmp) / "store")
        grade(warm_store)  # fills the store, and warms the file cache
        grade(warm_store)  # and starts the zygote the next gradings find warm
        total = median_time(lambda: grade(warm_store), args.repeat)
        first = median_time(first_on_the_machine, args.repeat)
        afresh = median_time(lambda: grade(warm_store, LMGRADE_ZYGOTE="off"), args.repeat)
        cold = median_time(lambda: grade("off"), args.repeat)
        stub_folder = Path(tmp) / "stub"
        templates.generate(assignment, variant, stub_folder)
        stub = median_time(lambda: grade("off", stub_folder), args.repeat)

        with Grader(assignment, variant, LiveReference(spec), secret="benchmark", jobs=args.jobs) as grader:
            grader.grade(submission)
            servers, children = len(grader.pool.started_s), grader.pool.children
            zygote_forked = sum(server.forked_by_zygote for server in grader.pool._all)

        modules = load_files(submission, spec.files)
        cases = {
            check.name: check.make_cases(CaseContext(np.random.default_rng(0), variant)) for check in assignment.checks
        }

        def compute():  # timing checks aside: their laps run only in the sandbox, and are not compute to share
            for check in (c for c in assignment.checks if c.timing is None):
                for case in cases[check.name]:
                    for _ in range(2):  # the expected values, and the submission's answers
                        run_scenario(check, modules, case)

        own = median_time(compute, args.repeat)

    print(
        f"lmgrade grade {args.assignment} <reference> --jobs {args.jobs}, median of {args.repeat}: "
        f"{total:.2f} s with the expected values stored, {cold:.2f} s computing them"
    )
    print(
        f"the same, the first on the machine (its zygote started, not found warm): {first:.2f} s; "
        f"every fork server started afresh (LMGRADE_ZYGOTE=off): {afresh:.2f} s"
    )
    print(f"an untouched stub (generated), no store, median of {args.repeat}: {stub:.2f} s")
    print(
        f"processes one grading starts: {servers} fork servers ({zygote_forked} forked by the zygote, "
        f"{servers - zygote_forked} interpreters started), {children} forked children "
        f"for {len(assignment.checks)} checks"
    )
    print(f"the checks' own compute (reference and submission side, serial, in process): {own:.2f} s")
    print(
        f"share of the wall time outside that compute: {max(0.0, 1 - own / total):.0%} "
        f"(the compute alone is {own / total:.2f}x the wall time; --jobs {args.jobs} runs checks in parallel)"
    )


if __name__ == "__main__":
    main()
