"""The timing checks under load: false fails of correct code, detection of a Python loop, cost.

    python benchmarks/timing_checks.py [--repeat 30] [--device cpu|cuda] [--quiet]

Grades the transformer's `attention_speed` check `--repeat` times each on a
correct vectorised submission (tests/submissions/transformer/einsum) and on
the reference with its attention looping over the queries in Python (the
`attention_query_loop` bug), alternately, while a busy process spins on
another core (leave it out with --quiet). Prints how many of the correct
gradings failed (target 0), how many of the loop's passed (target 0), the
ratios seen, and the wall time of one timing check (target under 5 s).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lmgrade.declare import catalog  # noqa: E402
from lmgrade.declare.flawed import write_flawed  # noqa: E402
from lmgrade.grading.grader import Grader  # noqa: E402
from lmgrade.grading.oracle import LiveReference  # noqa: E402
from lmgrade.plugins.transformer.bugs import BUGS  # noqa: E402

CHECKS = ("attention_speed", "train_step_speed")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--check", default="attention_speed", choices=CHECKS)
    parser.add_argument("--quiet", action="store_true", help="no busy process beside the grading")
    args = parser.parse_args()
    assignment, variant = catalog.load("transformer")
    assignment = assignment.on(args.device)
    loop = write_flawed(
        ROOT / "reference" / "transformer",
        assignment.spec.files,
        Path(tempfile.mkdtemp()) / "loop",
        [BUGS["attention_query_loop"]],
    )
    submissions = {"correct (einsum)": ROOT / "tests/submissions/transformer/einsum", "python loop": loop}
    busy = None if args.quiet else subprocess.Popen([sys.executable, "-c", "while True: pass"])
    results = {name: [] for name in submissions}
    unjudged: dict[str, str] = {}
    try:
        with Grader(assignment, variant, LiveReference(assignment.spec), secret="benchmark", jobs=1) as grader:
            for _ in range(args.repeat):
                for name, folder in submissions.items():
                    start = time.perf_counter()
                    (verdict,) = grader.grade(folder, only={args.check})
                    wall = time.perf_counter() - start
                    ratio = re.search(r"\(([0-9.]+)x; median", verdict.output)
                    results[name].append((verdict.passed, wall, float(ratio.group(1)) if ratio else None))
                    if ratio is None:  # no time was judged: say what the check said instead
                        unjudged.setdefault(name, " ".join(verdict.output.split())[:300])
    finally:
        if busy is not None:
            busy.kill()
    load = "quiet machine" if args.quiet else "a busy process on another core"
    print(f"{args.check} on {args.device}, {args.repeat} gradings each, {load}:")
    for name, rows in results.items():
        passed = sum(p for p, _, _ in rows)
        ratios = sorted(r for _, _, r in rows if r is not None)
        walls = [w for _, w, _ in rows]
        seen = (
            f"ratio min {ratios[0]:.2f} median {statistics.median(ratios):.2f} max {ratios[-1]:.2f}"
            if ratios
            else "no ratio"
        )
        print(
            f"  {name:<18} passed {passed}/{len(rows)}; {seen} ({len(rows) - len(ratios)} without one); "
            f"wall per check median {statistics.median(walls):.2f} s, max {max(walls):.2f} s"
        )
        if name in unjudged:
            print(f"    without a ratio, it said: {unjudged[name]}")


if __name__ == "__main__":
    main()
