"""The student bundle: its size, and `lmgrade check` in it against `lmgrade grade`.

    python benchmarks/student_bundle.py ngram [rnn ...] [--repeat 5] [--jobs 2]

For each assignment: builds the bundle as a zip (its size, unpacked and not,
and the time to build, which records the public checks from the reference),
installs its wheel into a fresh venv without lmgrade (the third-party
libraries come from this venv's site-packages through a .pth line), then
times end to end, on the reference (median of --repeat):
- `lmgrade check` in that venv: the public checks, expected values read
  from the recorded fixtures;
- `pytest` in the bundle's folder, the reference's files in place of the
  stubs: the same checks, one test each;
- `lmgrade grade` here: every check, expected values computed by the
  reference, results.json written.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import median_time  # noqa: E402

from lmgrade.declare import catalog  # noqa: E402


def quiet(args: list, cwd: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "LMGRADE_SECRET"}
    subprocess.run([str(a) for a in args], cwd=cwd, env=env, check=True, capture_output=True)


def student_venv(folder: Path, wheel: Path) -> Path:
    venv.EnvBuilder(with_pip=False).create(folder)
    python = folder / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        cwd=folder,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(purelib) / "project_libraries.pth").write_text(sysconfig.get_path("purelib") + "\n")
    quiet([python, "-m", "pip", "install", "--no-index", wheel], cwd=folder)
    return folder / "bin" / "lmgrade"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("assignments", nargs="+")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    lmgrade = [sys.executable, "-m", "lmgrade.cli"]
    for name in args.assignments:
        spec = catalog.load_spec(name)
        with tempfile.TemporaryDirectory(prefix="lmgrade-bench-") as tmp:
            tmp = Path(tmp)
            start = time.perf_counter()
            quiet([*lmgrade, "student-bundle", name, "-o", tmp / "bundle.zip"], cwd=tmp)
            built_s = time.perf_counter() - start
            with zipfile.ZipFile(tmp / "bundle.zip") as archive:
                archive.extractall(tmp)
            folder_bytes = sum(p.stat().st_size for p in (tmp / name).rglob("*") if p.is_file())
            (wheel,) = (tmp / name / "wheels").glob("*.whl")
            student_lmgrade = student_venv(tmp / "venv", wheel)
            reference = tmp / "reference"
            shutil.copytree(spec.reference_folder(), reference, ignore=shutil.ignore_patterns("__pycache__"))
            check_s = median_time(lambda: quiet([student_lmgrade, "check", name, reference], cwd=tmp), args.repeat)
            for f in spec.files:
                shutil.copy(reference / f, tmp / name / f)
            pytest_s = median_time(
                lambda: quiet([student_lmgrade.parent / "python", "-m", "pytest", "-q"], cwd=tmp / name), args.repeat
            )
            grade_s = median_time(
                lambda: quiet(
                    [*lmgrade, "grade", name, reference, "--jobs", str(args.jobs), "--results", tmp / "results.json"],
                    cwd=tmp,
                ),
                args.repeat,
            )
            print(
                f"{name}: bundle {(tmp / 'bundle.zip').stat().st_size / 1e3:.0f} kB zipped, "
                f"{folder_bytes / 1e3:.0f} kB as a folder (wheel {wheel.stat().st_size / 1e3:.0f} kB), "
                f"built in {built_s:.1f} s"
            )
            print(
                f"{name}: median of {args.repeat}, on the reference: lmgrade check in the bundle {check_s:.2f} s, "
                f"pytest in the bundle {pytest_s:.2f} s, lmgrade grade {grade_s:.2f} s (--jobs {args.jobs})",
                flush=True,
            )


if __name__ == "__main__":
    main()
