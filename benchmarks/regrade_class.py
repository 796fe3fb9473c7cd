"""How fast `lmgrade regrade` grades a class, and what resuming a finished regrade costs.

    python benchmarks/regrade_class.py [--copies 50] [--assignments ngram rnn transformer]

For each assignment: a class of --copies copies of a correct submission (the
reference), regraded end to end by the command line (interpreter start and
the client's imports included) with --jobs 1, with --jobs 2, and through a
local Dask cluster of two worker processes with one thread each (started
before the timing; each worker still pays for its own Grader: imports, the
expected values, the sandbox's start). Then the same command once more on
the finished regrade: the cost of resuming, with nothing left to grade.
Prints submissions per minute and the speed-up over --jobs 1.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lmgrade.declare import catalog  # noqa: E402


def make_class(assignment: str, copies: int, root: Path) -> Path:
    spec = catalog.load_spec(assignment)
    for i in range(1, copies + 1):
        folder = root / f"submission_{i}"
        folder.mkdir(parents=True)
        for filename in spec.files:
            shutil.copyfile(spec.reference_folder() / filename, folder / filename)
    return root


def regrade(assignment: str, root: Path, csv: Path, *options: str) -> float:
    """Seconds of one `lmgrade regrade`, end to end."""
    start = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-m", "lmgrade.cli", "regrade", assignment, str(root), "-o", str(csv), *options],
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"regrade failed:\n{out.stdout}\n{out.stderr}")
    scores = [line.split(",")[3] for line in csv.read_text().splitlines()[1:]]
    if set(scores) != {"100"}:
        raise SystemExit(f"a copy of the reference lost points: {sorted(set(scores))}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=50)
    parser.add_argument("--assignments", nargs="+", default=["ngram"])
    args = parser.parse_args()
    from distributed import LocalCluster

    rows = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
    ):
        dask = "dask://" + cluster.scheduler_address.removeprefix("tcp://")
        for assignment in args.assignments:
            root = make_class(assignment, args.copies, Path(tmp) / assignment / "class")
            out = Path(tmp) / assignment / "out"
            timings = {}
            for label, options in (
                ("--jobs 1", ("--jobs", "1")),
                ("--jobs 2", ("--jobs", "2")),
                ("dask, 2 workers x 1 thread", ("--executor", dask)),
            ):
                timings[label] = regrade(
                    assignment, root, out / label.split(",")[0].replace(" ", "") / "s.csv", *options, "--force"
                )
                print(f"{assignment} {label}: {timings[label]:.1f} s", flush=True)
            resume = regrade(assignment, root, out / "--jobs2" / "s.csv", "--jobs", "2")
            base = timings["--jobs 1"]
            for label, seconds in timings.items():
                rows.append((assignment, label, seconds, 60 * args.copies / seconds, base / seconds))
            rows.append((assignment, "resume (nothing to grade)", resume, None, None))
    print(f"\n{args.copies} copies of the reference per assignment")
    print(f"{'assignment':<12} {'how':<28} {'wall s':>8} {'subm/min':>9} {'speed-up':>9}")
    for assignment, label, seconds, rate, speedup in rows:
        print(f"{assignment:<12} {label:<28} {seconds:>8.1f} " + (f"{rate:>9.1f} {speedup:>8.2f}x" if rate else ""))


if __name__ == "__main__":
    main()
