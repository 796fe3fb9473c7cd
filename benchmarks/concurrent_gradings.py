"""Gradings side by side on one machine: does any lose a case?

    python benchmarks/concurrent_gradings.py [--rounds 10] [--at-once 4] [--jobs 2] [--peer DIR]

Each round starts `--at-once` gradings of the ngram reference together, each
with `--jobs` workers, and counts the cases that did not pass (target 0).
Then it times one grading alone (median of 5). `--peer DIR` runs the same on
another checkout of lmgrade (an earlier commit, say) in the same run, for a
before/after comparison on the same machine and load.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def command(tree: Path, submission: Path, results: Path, jobs: int) -> list[str]:
    boot = f"import sys; sys.path.insert(0, {str(tree)!r}); from lmgrade.cli import main; main()"
    return [
        sys.executable,
        "-c",
        boot,
        "grade",
        "ngram",
        str(submission),
        "--results",
        str(results),
        "--jobs",
        str(jobs),
    ]


def lost_cases(results: Path) -> int:
    lost = 0
    for test in json.loads(results.read_text())["tests"]:
        m = re.match(r"(\d+)/(\d+) cases passed", test["output"])
        if m:
            lost += int(m.group(2)) - int(m.group(1))
        elif test["score"] < test["max_score"]:
            lost += 1
    return lost


def rounds(tree: Path, submission: Path, work: Path, n_rounds: int, at_once: int, jobs: int) -> tuple[int, int]:
    lost = failed_runs = 0
    for r in range(n_rounds):
        paths = [work / f"{tree.name}-{r}-{i}.json" for i in range(at_once)]
        procs = [
            subprocess.Popen(
                command(tree, submission, p, jobs), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=work
            )
            for p in paths
        ]
        for proc in procs:
            proc.wait()
        counts = [lost_cases(p) for p in paths]
        lost += sum(counts)
        failed_runs += sum(c > 0 for c in counts)
    return lost, failed_runs


def alone(tree: Path, submission: Path, work: Path, repeat: int = 5, jobs: int = 2) -> float:
    times = []
    for i in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(
            command(tree, submission, work / f"alone-{i}.json", jobs), check=True, capture_output=True, cwd=work
        )
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--at-once", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--peer", type=Path, help="another checkout of lmgrade to measure beside this one")
    args = parser.parse_args()
    trees = {"this": ROOT, **({"peer": args.peer.resolve()} if args.peer else {})}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        submission = work / "reference"
        submission.mkdir()
        (submission / "ngram.py").write_bytes((ROOT / "reference" / "ngram" / "ngram.py").read_bytes())
        print(f"{os.cpu_count()} CPUs; {args.rounds} rounds of {args.at_once} gradings at once, --jobs {args.jobs}")
        timings = {}
        for label, tree in trees.items():
            lost, failed = rounds(tree, submission, work, args.rounds, args.at_once, args.jobs)
            print(f"{label:>5}: {lost} cases lost, {failed} of {args.rounds * args.at_once} gradings below full marks")
        for label, tree in trees.items():
            timings[label] = alone(tree, submission, work)
            print(f"{label:>5}: one grading alone, median of 5: {timings[label]:.2f} s")
        if "peer" in timings:
            print(f"ratio this / peer: {timings['this'] / timings['peer']:.2f}")


if __name__ == "__main__":
    main()
