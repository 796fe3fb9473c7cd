#!/usr/bin/env python3
"""Set up and run lmgrade from a clone, with nothing but Python 3.10+.

    python3 dev.py demo [lmgrade demo options]   # set up, then run the demo
    python3 dev.py test [pytest options]         # set up, then run the test suite
    python3 dev.py test -m "not slow"            # the fast subset: no wheels, zips, bundles or installs
    python3 dev.py lint                          # set up, then ruff: lint and format check
    python3 dev.py docs [mkdocs build options]   # set up, then build the documentation site into site/
    python3 dev.py mutants [NAME ...]            # set up, then grade every mutant of each reference
    python3 dev.py study [pytest options]        # set up, then run the long studies the suite samples (hours)
    python3 dev.py setup                         # only set up

Set-up creates .venv (LMGRADE_VENV elsewhere), installs torch and the
project with its test and docs extras, and is redone only when pyproject.toml or
TORCH changes. torch is TORCH, default "torch==2.13.0" from the index pip is
configured to use: on Linux x86-64 the default index gives a CUDA build (a
few GB), unless pip's configuration points at CPU-only wheels. For a
CPU-only build, name PyTorch's CPU wheel index:
TORCH="torch==2.13.0 --index-url <PyTorch's CPU wheel index>".
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("LMGRADE_VENV", ROOT / ".venv"))
TORCH = os.environ.get("TORCH", "torch==2.13.0")
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PACKAGES = ("autograder", "plugins", "reference")  # pyproject.toml's package-dir: what lmgrade is made of


def run(*args: str) -> None:
    subprocess.run(args, check=True, cwd=ROOT)


def setup() -> None:
    stamp = VENV / ".lmgrade-installed"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + TORCH.encode()).hexdigest()
    if stamp.exists() and stamp.read_text() == wanted:
        return
    started = time.monotonic()
    steps = 4

    def step(number: int, what: str) -> None:  # one line per step: set-up takes minutes, and says where it is
        print(f"set-up {number}/{steps} ({time.monotonic() - started:.0f} s): {what} ...", flush=True)

    step(1, f"creating the environment {VENV}")
    venv.EnvBuilder(with_pip=True).create(VENV)
    # pip byte-compiles what it installs on one core (torch alone: thousands of modules); compileall
    # does it on every core once both are in.
    pip = [str(BIN / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile"]
    step(2, f"installing {TORCH} (the longest step)")
    run(*pip, *shlex.split(TORCH))  # a requirement, optionally with pip options (--index-url ...)
    step(3, "installing lmgrade with its test and docs extras")
    run(*pip, "-e", f"{ROOT}[test,docs]")
    site = subprocess.run(
        [str(BIN / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    step(4, "byte-compiling the environment on every core")
    compile_all(site)
    stamp.write_text(wanted)
    print(f"set-up done in {time.monotonic() - started:.0f} s", flush=True)


def compile_all(*folders: str) -> None:
    """Byte-compile `folders` on every core. Where PYTHONDONTWRITEBYTECODE is set, nothing else writes
    them, and every process (the suite starts hundreds: fork servers, commands) would compile its
    imports from source."""
    subprocess.run(
        [str(BIN / "python"), "-m", "compileall", "-q", "-j", "0", *folders], cwd=ROOT, stdout=subprocess.DEVNULL
    )


def main() -> int:
    if sys.version_info < (3, 10):  # noqa: UP036 -- dev.py runs on any python3, to say which it needs
        sys.exit("lmgrade needs Python 3.10 or newer")
    command, *rest = sys.argv[1:] or ["help"]
    if command not in ("setup", "demo", "test", "lint", "docs", "mutants", "study"):
        print(__doc__)
        return 0 if command in ("help", "-h", "--help") else 2
    setup()
    compile_all(*PACKAGES)  # what changed since the last run
    if command == "demo":
        return subprocess.run([str(BIN / "lmgrade"), "demo", *rest], cwd=ROOT).returncode
    if command == "test":
        return subprocess.run([str(BIN / "python"), "-m", "pytest", *rest], cwd=ROOT).returncode
    if command == "study":  # what the suite samples, whole (every bug, cheat, variant, zip): a benchmark
        test = [str(BIN / "python"), "-m", "pytest", "--study", "-m", "study", *rest]
        return subprocess.run(test, cwd=ROOT).returncode
    if command == "docs":  # mkdocs.yml: strict, so a warning (a broken link, a page left out) fails the build
        # Material for MkDocs prints a notice of its end of life (May 2027) on every build: known, and not a warning.
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
        return subprocess.run([str(BIN / "mkdocs"), "build", "--strict", *rest], cwd=ROOT, env=env).returncode
    if command == "lint":
        ruff = str(BIN / "ruff")
        return (
            subprocess.run([ruff, "check", "."], cwd=ROOT).returncode
            or subprocess.run([ruff, "format", "--check", "."], cwd=ROOT).returncode
        )
    if command == "mutants":  # the full mutation run, a benchmark: minutes per assignment
        names = (
            rest
            or subprocess.run(
                [str(BIN / "python"), "-c", "from lmgrade import catalog; print(*catalog.assignment_folders())"],
                cwd=ROOT,
                check=True,
                capture_output=True,
                text=True,
            ).stdout.split()
        )
        return max(
            subprocess.run([str(BIN / "lmgrade"), "mutants", name, "-o", f"mutants-{name}.json"], cwd=ROOT).returncode
            for name in names
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
