"""One bug, one place: which checks each catalogue bug loses points on, beyond the ones it names.

    python benchmarks/one_bug_one_place.py [ngram rnn ...] [--jobs 2] [--runs 1]

Grades every catalogue bug of each assignment (in its own variant) and lists the checks it loses points
on that its `loses` does not name. A bug that loses nowhere else is in one place; the share of such
bugs per assignment is what docs/benchmarks.md reports, with the exceptions named. Timing checks count
as any other: a time is judged on right answers, or on answers exactly those of the known mistake named
on the failed check of the timed code.

With --runs N > 1, each bug is graded N times (jobs alternating 1 and --jobs) and any difference in a
check's score or feedback between the runs is printed: the same submission, the same score.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lmgrade.core.selection import Selection  # noqa: E402
from lmgrade.declare import catalog  # noqa: E402
from lmgrade.declare.flawed import write_flawed  # noqa: E402
from lmgrade.grading.grader import Grader  # noqa: E402
from lmgrade.grading.oracle import LiveReference  # noqa: E402


def study(name: str, jobs: int, runs: int) -> tuple[int, int, list[str]]:
    """(bugs, bugs in one place, lines naming the others) for one assignment."""
    bugs = catalog.bugs(name)
    by_variant: dict[tuple, list[str]] = {}
    for bug_name, bug in bugs.items():
        by_variant.setdefault(tuple(sorted(bug.variant.items())), []).append(bug_name)
    alone, lines = 0, []
    for variant_pairs, names in by_variant.items():
        assignment, variant = catalog.load(Selection.parse(name, tuple(f"{k}={v}" for k, v in variant_pairs)))
        oracle = LiveReference(assignment.spec)
        graders = [Grader(assignment, variant, oracle, secret="one bug", jobs=j) for j in {1, jobs}]
        try:
            with tempfile.TemporaryDirectory() as tmp:
                for bug_name in names:
                    bug = bugs[bug_name]
                    folder = write_flawed(
                        assignment.spec.reference_folder(), assignment.spec.files, Path(tmp) / bug_name, [bug]
                    )
                    seen = []
                    for run in range(runs):
                        grader = graders[run % len(graders)]
                        seen.append({v.check.name: (v.score, v.max_score, v.output) for v in grader.grade(folder)})
                    first = seen[0]
                    for other in seen[1:]:
                        moved = [c for c in first if first[c][:1] != other[c][:1] or first[c][2] != other[c][2]]
                        if moved:
                            lines.append(f"  {bug_name}: DIFFERS between runs on {', '.join(moved)}")
                    lost = {c for c, (score, most, _) in first.items() if score < most}
                    timing = {c.name for c in assignment.checks if c.timing is not None}
                    elsewhere = sorted(lost - set(bug.loses))
                    if not elsewhere:
                        alone += 1
                    else:
                        named = [f"{c} (timing)" if c in timing else c for c in elsewhere]
                        lines.append(f"  {bug_name}: also loses {', '.join(named)}")
        finally:
            for grader in graders:
                grader.close()
    return len(bugs), alone, lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="assignments (default: every built-in one)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    for name in args.names or sorted(catalog.sources()):
        total, alone, lines = study(name, args.jobs, args.runs)
        print(f"{name}: {alone} of {total} bugs lose points only on the checks they name ({100 * alone / total:.0f}%)")
        for line in lines:
            print(line)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
