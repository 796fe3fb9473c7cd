"""Same submission, same score: one flawed submission of each assignment graded again and again, under load.

    python benchmarks/same_score.py [ngram rnn ...] [--runs 5] [--busy 2]

Each assignment's demo bugs together make one submission whose components fail, so that its composed
checks are paid by the grader's stand-ins. It is graded --runs times with jobs 1, 2 and 4 in turn, each
grading with a store of expected values of its own (the reference's answers, its known mistakes' and its
stand-in records computed afresh, in as many threads as the jobs), beside --busy processes that keep the
cores busy. Prints, per assignment, the score of each run and every check whose score or feedback
differed between runs (none, where the verdicts depend on the submission alone).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lmgrade.declare import catalog  # noqa: E402
from lmgrade.declare.flawed import write_flawed  # noqa: E402
from lmgrade.grading.expected_store import ExpectedStore  # noqa: E402
from lmgrade.grading.grader import Grader  # noqa: E402
from lmgrade.grading.oracle import LiveReference  # noqa: E402

JOBS = (1, 2, 4)


def study(name: str, runs: int) -> tuple[list[float], list[str], float]:
    assignment, variant = catalog.load(name)
    demo = [bug for bug in catalog.bugs(name).values() if bug.demo and not bug.variant]
    seen, took = [], []
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_flawed(assignment.spec.reference_folder(), assignment.spec.files, Path(tmp) / "sub", demo)
        for run in range(runs):
            store = ExpectedStore(Path(tmp) / f"store{run}")
            oracle = LiveReference(assignment.spec)
            started = time.perf_counter()
            with Grader(assignment, variant, oracle, secret="same", jobs=JOBS[run % 3], store=store) as grader:
                seen.append({v.check.name: (round(v.score, 6), v.output) for v in grader.grade(folder)})
            took.append(time.perf_counter() - started)
    differing = sorted({c for other in seen[1:] for c in seen[0] if seen[0][c] != other.get(c)})
    return [round(sum(s for s, _ in run.values()), 4) for run in seen], differing, sum(took) / len(took)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="assignments (default: every built-in one)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--busy", type=int, default=2, help="busy processes beside the gradings")
    args = parser.parse_args()
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    try:
        for name in args.names or sorted(catalog.sources()):
            scores, differing, mean_s = study(name, args.runs)
            verdict = "the same on every check" if not differing else f"DIFFERENT on {', '.join(differing)}"
            print(f"{name}: scores {scores}, {verdict} ({mean_s:.1f} s a grading)", flush=True)
    finally:
        for loop in loops:
            loop.kill()


if __name__ == "__main__":
    main()
