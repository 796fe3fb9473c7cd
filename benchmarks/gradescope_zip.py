"""The Gradescope zip of an assignment: its size, setup.sh's time, and run_autograder against `lmgrade grade`.

    python benchmarks/gradescope_zip.py ngram [--repeat 5] [--set KEY=VALUE]...

Builds the zip with `lmgrade gradescope`, installs it with its own setup.sh
into a throwaway virtual environment (as the test suite does, with the
scripts' test-only settings), then grades the reference `--repeat` times
each way and prints the medians: run_autograder from start to exit (a fresh
root each time, unpacked before the clock starts, as Gradescope gives every
submission) and `lmgrade grade`
with its default --jobs. Needs this interpreter's `python3` to find the
assignment's requirements (and torch, for the transformer) through pip.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import median_time  # noqa: E402

from lmgrade.course.gradescope.local import clean_env, install  # noqa: E402
from lmgrade.declare import catalog  # noqa: E402

SECRET = "benchmark-secret"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("assignment")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    settings = [a for s in args.settings for a in ("--set", s)]
    spec = catalog.load_spec(args.assignment)
    reference = {f: (spec.reference_folder() / f).read_text() for f in spec.files}
    env = clean_env(LMGRADE_SECRET=SECRET)
    with tempfile.TemporaryDirectory(prefix="lmgrade-bench-") as tmp:
        tmp = Path(tmp)
        zip_path = tmp / "autograder.zip"
        subprocess.run(
            [sys.executable, "-m", "lmgrade.cli", "gradescope", args.assignment, "-o", str(zip_path), *settings],
            check=True,
            env=env,
            capture_output=True,
        )
        print(f"zip: {zip_path.stat().st_size / 1024:.0f} KiB")
        installed = install(zip_path, tmp, tmp / "venv")
        print(f"setup.sh: {installed.setup_s:.1f} s")

        scores = []

        # Gradescope unpacks the zip and the submission before run_autograder starts: so do these, untimed.
        layouts = iter([installed.new_root(reference) for _ in range(args.repeat + 1)])

        def run_autograder() -> None:
            layout = next(layouts)
            proc = installed.start(layout)
            out, _ = proc.communicate()
            if proc.returncode != 0:
                raise SystemExit(f"run_autograder failed:\n{out}")
            scores.append(json.loads(layout.results.read_text())["score"])

        submission = tmp / "reference"
        submission.mkdir()
        for name, text in reference.items():
            (submission / name).write_text(text)

        def lmgrade_grade() -> None:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "lmgrade.cli",
                    "grade",
                    args.assignment,
                    str(submission),
                    "--results",
                    str(tmp / "results.json"),
                    *settings,
                ],
                check=True,
                env=env,
                capture_output=True,
            )

        zipped = median_time(run_autograder, args.repeat, warmup=1)
        graded = median_time(lmgrade_grade, args.repeat, warmup=1)
        graded_score = json.loads((tmp / "results.json").read_text())["score"]
    print(f"run_autograder on the reference: median {zipped:.2f} s of {args.repeat}")
    print(f"lmgrade grade on the reference:  median {graded:.2f} s of {args.repeat}")
    print(f"scores of the reference: run_autograder {sorted(set(scores))}, lmgrade grade {graded_score}")


if __name__ == "__main__":
    main()
