"""How long grading ngram takes, and where the time goes.

    python benchmarks/grade_ngram.py [--repeat 5]

Measured in one run, side by side:
- `lmgrade grade ngram` on the reference, end to end (median of --repeat);
- the sandbox's cost per run (fork from the warm server, copy the submission,
  lock down, send frames back) against the peer design that starts a fresh
  interpreter and imports numpy for every check;
- the fork server's start, paid once per worker;
- encoding and decoding the largest ngram result (the 2000 draws of `sample`);
- a submission whose every function hangs, against the sum of the checks' limits.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import median_time  # noqa: E402

from lmgrade.boundary import wire  # noqa: E402
from lmgrade.declare import catalog  # noqa: E402
from lmgrade.sandbox.limits import Limits  # noqa: E402
from lmgrade.sandbox.pool import SandboxPool  # noqa: E402

HANGING = textwrap.dedent("""
    import time
    def pad(sentence, n): time.sleep(1000)
    def count_ngrams(corpus, n): time.sleep(1000)
    class NGramLM:
        def __init__(self, n, k=0.0): time.sleep(1000)
""")


def grade(submission: Path, results: Path, jobs: int) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "lmgrade.cli",
            "grade",
            "ngram",
            str(submission),
            "--results",
            str(results),
            "--jobs",
            str(jobs),
        ],
        check=True,
        capture_output=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        submission = tmp / "reference"
        submission.mkdir()
        (submission / "ngram.py").write_text((ROOT / "reference" / "ngram" / "ngram.py").read_text())

        total = median_time(lambda: grade(submission, tmp / "r.json", args.jobs), args.repeat)
        rows.append(("lmgrade grade ngram <reference> (end to end)", total, None))

        # The sandbox per run, against a fresh interpreter per check.
        with SandboxPool(
            preload=["numpy", "lmgrade.plugins.ngram.public.scenarios"],
            forbidden_modules=["lmgrade.reference"],
            protected=[ROOT / "reference"],
            jobs=1,
        ) as pool:

            def one_run():
                pool.run(
                    scenario="lmgrade.plugins.ngram.public.scenarios:pad",
                    submission=submission,
                    files=["ngram.py"],
                    cases=[{"sentence": ["a"], "n": 2}],
                    limits=Limits(),
                )

            one_run()  # starts the server
            per_run = median_time(one_run, 20)
            server_start = pool.started_s[0]
        peer = median_time(lambda: subprocess.run([sys.executable, "-c", "import numpy"], check=True), 10)
        rows.append(("fork server start (once per worker)", server_start, None))
        rows.append(("sandboxed run of one trivial case (fork, copy, lock down, frames)", per_run, None))
        rows.append(("peer: fresh interpreter + import numpy, per check", peer, peer / per_run))

        assignment, variant = catalog.load("ngram")
        checks = {c.name: c for c in assignment.checks}
        from lmgrade.declare.checks import CaseContext
        from lmgrade.grading.oracle import LiveReference

        sample = checks["sample"]
        case = sample.make_cases(CaseContext(np.random.default_rng(0), variant))[0]
        result = LiveReference(assignment.spec).expected(sample, [case])[0]
        blob = wire.encode(result)
        codec = median_time(lambda: wire.decode(wire.encode(result)), 20)
        rows.append((f"encode + decode the sample result ({len(blob) / 1024:.0f} KiB)", codec, None))

        hanging = tmp / "hanging"
        hanging.mkdir()
        (hanging / "ngram.py").write_text(HANGING)
        t0 = time.perf_counter()
        grade(hanging, tmp / "h.json", args.jobs)
        hang = time.perf_counter() - t0
        limit_sum = sum(c.limits.wall_s for c in assignment.checks)
        rows.append(
            (f"every function hangs (sum of wall limits {limit_sum:g} s, --jobs {args.jobs})", hang, limit_sum / hang)
        )

    width = max(len(r[0]) for r in rows)
    print(f"{'measurement':<{width}}  {'seconds':>9}  ratio")
    for name, seconds, ratio in rows:
        print(f"{name:<{width}}  {seconds:>9.3f}  {'' if ratio is None else f'{ratio:.1f}x'}")
    print("ratio: the peer's time (or the limit) divided by ours")


if __name__ == "__main__":
    main()
