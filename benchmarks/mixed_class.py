"""A class of ngram submissions shaped like a Gradescope export, and how fast `lmgrade regrade` grades it.

    python benchmarks/mixed_class.py [--jobs 2] [--repeat 1] [--keep FOLDER] [--cold]

The class (`build`): 120 submission folders and a submission_metadata.yml,
each folder one of these kinds, in a fixed shuffled order:

- 25 correct: the reference, each with its student's name in a comment;
- 36 buggy: the catalogue's bugs in turn, each a single-bug submission;
- 10 notebooks: the reference in a %%writefile cell of a .ipynb;
- 12 zips: the reference zipped, alone in its folder;
- 16 copies: one buggy submission copied, byte for byte;
- 8 broken: a syntax error; 8 empty: a folder with no file;
- 5 infinite loops: 3 at import (a busy loop at the top level), one in `fit`,
  one in `sample` (the catalogue's sample_never_stops).

Each is regraded end to end by the command line (interpreter start and the
imports included) with the user's store of expected values warm, as a regrade
after the term's gradings finds it (--cold: as the store is, the expected
values computed once in the timed run where it misses); the script then checks every row against
what its kind expects (full marks, less, nothing) and prints submissions per
minute and the time per kind (from each submission's results.json).
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lmgrade.declare import catalog  # noqa: E402
from lmgrade.declare.flawed import write_flawed  # noqa: E402

KINDS = {
    "correct": 25,
    "buggy": 36,
    "notebook": 10,
    "zip": 12,
    "copy": 16,
    "broken": 8,
    "empty": 8,
    "import_loop": 3,
    "fit_loop": 1,
    "sample_loop": 1,
}
FIT = '    def fit(self, corpus: list[list[str]]) -> "NGramLM":\n'
LOOPING_FIT = FIT + "        while True:\n            pass\n"


def _notebook(source: str) -> str:
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    cells = [
        {"cell_type": "markdown", "metadata": {}, "source": "# N-gram language model"},
        {**cell, "source": "%%writefile ngram.py\n" + source},
        {**cell, "source": "!python -c 'import ngram'"},
    ]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)


def build(root: Path, seed: int = 49) -> dict[str, str]:
    """Write the class under `root` (a Gradescope export); returns each folder's kind."""
    spec = catalog.load_spec("ngram")
    reference = (spec.reference_folder() / "ngram.py").read_text()
    assert FIT in reference, "the reference's fit changed: update LOOPING_FIT"
    bugs = catalog.bugs("ngram")
    kinds = [kind for kind, count in KINDS.items() for _ in range(count)]
    random.Random(seed).shuffle(kinds)
    root.mkdir(parents=True)
    scratch = Path(tempfile.mkdtemp(prefix="lmgrade-class-"))
    flawed = {
        name: (write_flawed(spec.reference_folder(), spec.files, scratch / name, [bug]) / "ngram.py").read_text()
        for name, bug in sorted(bugs.items())
    }
    shutil.rmtree(scratch)
    ordinary = sorted(n for n in flawed if n != "sample_never_stops")
    copied = flawed[ordinary[0]]
    metadata, which = [], {}
    for i, kind in enumerate(kinds, start=1):
        name = f"submission_{1000 + i}"
        folder = root / name
        folder.mkdir()
        which[name] = kind
        signed = f"# student {i}\n"
        if kind == "correct":
            (folder / "ngram.py").write_text(signed + reference)
        elif kind == "buggy":
            (folder / "ngram.py").write_text(signed + flawed[ordinary[i % len(ordinary)]])
        elif kind == "notebook":
            (folder / "ngram.ipynb").write_text(_notebook(signed + reference))
        elif kind == "zip":
            with zipfile.ZipFile(folder / "submission.zip", "w") as archive:
                archive.writestr("ngram.py", signed + reference)
        elif kind == "copy":
            (folder / "ngram.py").write_text(copied)
        elif kind == "broken":
            (folder / "ngram.py").write_text(signed + reference.replace("def pad(", "def pad(:", 1))
        elif kind == "import_loop":
            (folder / "ngram.py").write_text(signed + reference + "\nwhile True:\n    pass\n")
        elif kind == "fit_loop":
            (folder / "ngram.py").write_text(signed + reference.replace(FIT, LOOPING_FIT, 1))
        elif kind == "sample_loop":
            (folder / "ngram.py").write_text(signed + flawed["sample_never_stops"])
        metadata.append(
            f"{name}:\n  :submitters:\n  - :name: Student {i}\n    :sid: '{i}'\n    :email: s{i}@example.edu\n"
        )
    (root / "submission_metadata.yml").write_text("".join(metadata))
    return which


def expected(kind: str, score: float) -> bool:
    """Whether a row's score is what its kind expects."""
    if kind in ("correct", "notebook", "zip"):
        return score == 100
    if kind in ("broken", "empty", "import_loop"):
        return score == 0
    return score < 100  # buggy, copies of a buggy one, a loop in one function


def regrade(root: Path, out: Path, jobs: int) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "lmgrade.cli", "regrade", "ngram", str(root), "-o", str(out / "scores.csv")]
        + ["--jobs", str(jobs), "--force"],
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"regrade failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return elapsed


def check_rows(out: Path, kinds: dict[str, str]) -> list[str]:
    wrong = []
    with open(out / "scores.csv", newline="") as f:
        for row in csv.DictReader(f):
            kind = kinds[row["submission"]]
            if not expected(kind, float(row["score"])):
                wrong.append(f"{row['submission']} ({kind}) scored {row['score']}")
    return wrong


def seconds_by_kind(out: Path, kinds: dict[str, str]) -> dict[str, float]:
    """Summed grading time per kind: each results.json's checks' wall time, once per grading (a copy byte for
    byte of another submission gets that one's grade, results.json and time: counted once)."""
    summed: dict[str, float] = {}
    seen: set[bytes] = set()
    for name, kind in kinds.items():
        found = list(out.rglob(f"{name}/results.json")) or list(out.rglob(f"{name}*.json"))
        if not found or found[0].read_bytes() in seen:
            continue
        seen.add(found[0].read_bytes())
        document = json.loads(found[0].read_text())
        seconds = document.get("execution_time") or sum(t.get("execution_time", 0) for t in document.get("tests", []))
        summed[kind] = summed.get(kind, 0.0) + float(seconds or 0)
    return summed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="build the class here and keep it")
    parser.add_argument("--cold", action="store_true", help="no regrade before the timed ones to fill the store")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        where = args.keep or Path(tmp)
        kinds = build(where / "class")
        n = len(kinds)
        # The expected values computed once, as the term's gradings have: what a regrade finds in the store.
        if not args.cold:
            regrade(where / "class", where / "warm", args.jobs)
        for attempt in range(1, args.repeat + 1):
            out = where / f"out{attempt}"
            elapsed = regrade(where / "class", out, args.jobs)
            wrong = check_rows(out, kinds)
            rate = 60 * n / elapsed
            print(f"run {attempt}: {n} submissions in {elapsed:.1f} s: {rate:.1f} a minute (--jobs {args.jobs})")
            print("  rows not as their kind expects: " + ("; ".join(wrong) if wrong else "none"))
            by_kind = seconds_by_kind(out, kinds)
            if by_kind:
                summed = ", ".join(f"{kind} {seconds:.0f}" for kind, seconds in sorted(by_kind.items()))
                print("  summed grading seconds by kind: " + summed)


if __name__ == "__main__":
    main()
