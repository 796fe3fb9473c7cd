"""A regrade on a local Dask cluster against the same regrade in one process, on the same cores, interleaved.

    python benchmarks/dask_vs_local.py [--copies 40] [--rounds 4] [--assignment ngram]

A class of --copies copies of the reference is regraded by the command line
(interpreter start and imports included), --force every time, alternately
with --jobs 2 and through a LocalCluster of two worker processes with one
thread each; the workers are restarted before each Dask run (not timed), so
that each pays for its own grader as the local run does, and the expected
values are in the user's store (as after the term's gradings). One series,
local and Dask in turn, so that a change in the machine's load falls on both.
Prints every run, then each side's median and the ratio Dask / local.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from regrade_class import make_class, regrade  # noqa: E402


def timed(assignment: str, root: Path, csv: Path, *options: str, before=lambda: None) -> float:
    """Seconds of one regrade, `before` it (not timed); once more where the workers refused it for another
    build's fingerprint (the sources changed between the client's start and the workers' answer: a checkout
    being edited)."""
    for attempt in (1, 2):
        before()
        try:
            return regrade(assignment, root, csv, *options, "--force")
        except SystemExit as failed:
            if attempt == 2 or "differ from the client's" not in str(failed):
                raise
            print("the sources changed during the run: run again", flush=True)
    raise AssertionError("not reached")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--assignment", default="ngram")
    args = parser.parse_args()
    from distributed import Client, LocalCluster

    with (
        tempfile.TemporaryDirectory() as tmp,
        LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        root = make_class(args.assignment, args.copies, Path(tmp) / "class")
        out = Path(tmp) / "out"
        dask = "dask://" + cluster.scheduler_address.removeprefix("tcp://")
        ways = {"local --jobs 2": ("--jobs", "2"), "dask 2 workers x 1 thread": ("--executor", dask)}
        regrade(args.assignment, root, out / "warm" / "s.csv", "--jobs", "2", "--force")  # the store, warm
        times: dict[str, list[float]] = {label: [] for label in ways}
        for round_ in range(1, args.rounds + 1):
            for label, options in ways.items():
                # Fresh worker processes before a Dask run: each builds its grader in the timed run.
                restart = client.restart if options[0] == "--executor" else lambda: None
                csv = out / f"{round_}{options[0]}" / "s.csv"
                seconds = timed(args.assignment, root, csv, *options, before=restart)
                times[label].append(seconds)
                print(f"round {round_} {label}: {seconds:.1f} s", flush=True)
    local, remote = (statistics.median(times[label]) for label in ways)
    print(f"\n{args.copies} copies of the {args.assignment} reference, {args.rounds} rounds")
    for label, series in times.items():
        print(f"{label:<28} median {statistics.median(series):.1f} s  ({', '.join(f'{s:.1f}' for s in series)})")
    summed = [sum(series) for series in times.values()]
    print(f"dask / local: {remote / local:.3f} (medians), {summed[1] / summed[0]:.3f} (sums)")


if __name__ == "__main__":
    main()
