"""A padded notebook read by the bounded reader (`lmgrade.submissions.notebook_reader`) against nbformat's whole parse.

    python benchmarks/notebook_bounds.py [--objects 1400000] [--nbformat-objects 300000]

The reference ngram.py pasted into a notebook whose one output is padded with --objects empty JSON objects
(1.4 million: 4 MiB, past the reader's bound, so refused in one line), and one with --nbformat-objects (within
it). Each is read by the bounded reader and, for the smaller, by nbformat as lmgrade read notebooks before;
this prints the time and the peak of Python's allocations (tracemalloc, timed apart) against the file's size.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lmgrade.submissions import notebook  # noqa: E402
from lmgrade.submissions.limits import UnreadableSubmission  # noqa: E402


def padded(path: Path, objects: int) -> Path:
    cell = {
        "cell_type": "code",
        "metadata": {},
        "outputs": [{"output_type": "display_data", "data": {}, "metadata": {"padding": "@"}}],
        "source": "%%writefile ngram.py\n" + (ROOT / "reference" / "ngram" / "ngram.py").read_text(),
    }
    text = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    path.write_text(text.replace('"@"', "[" + ",".join(["{}"] * objects) + "]"))
    return path


def bounded(path: Path) -> str:
    try:
        return ", ".join(notebook.written_files(notebook.read(path), ("ngram.py",)).files)
    except UnreadableSubmission as exc:
        return str(exc)


def whole(path: Path) -> str:
    import nbformat

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        node = nbformat.convert(nbformat.reader.reads(path.read_text()), 4)
    return ", ".join(notebook.written_files(node, ("ngram.py",)).files)


def measure(name: str, read, path: Path) -> None:
    t0 = time.perf_counter()
    said = read(path)
    seconds = time.perf_counter() - t0
    tracemalloc.start()
    read(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    size = path.stat().st_size
    print(
        f"{name:9s} {size / 2**20:5.2f} MiB file: {seconds:6.2f} s, peak {peak / 2**20:7.1f} MiB "
        f"({peak / size:4.1f}x the file): {said[:90]}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=1_400_000)
    parser.add_argument("--nbformat-objects", type=int, default=300_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        large = padded(Path(folder) / "large.ipynb", args.objects)
        measure("bounded", bounded, large)
        small = padded(Path(folder) / "small.ipynb", args.nbformat_objects)
        measure("bounded", bounded, small)
        measure("nbformat", whole, small)


if __name__ == "__main__":
    main()
