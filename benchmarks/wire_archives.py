"""The wire's archives written and read directly (`npy_members`) against zipfile and numpy's own code.

    python benchmarks/wire_archives.py [--arrays 18000] [--repeat 5]

A stand-in's record of an LSTM's steps is thousands of small float64 arrays. Both writers give the same
bytes (tests/test_npy_members.py); this prints each one's time, median of --repeat, and the ratio:
- writing: `wire.save_arrays` (zipfile, `numpy.lib.format.write_array`) against `npy_members.stored_archive`;
- reading the headers: numpy's `read_array_header_1_0` (a `literal_eval` each) against `npy_members.header`.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import median_time  # noqa: E402

from lmgrade.boundary import npy_members, wire  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arrays", type=int, default=18_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=(4, 8)) if i % 3 else rng.normal(size=8) for i in range(args.arrays)]
    members = [memoryview(npy_members.npy_bytes(a)) for a in arrays]

    def by_zipfile():
        wire.save_arrays(arrays, io.BytesIO())

    def by_numpy_headers():
        for member in members:
            head = io.BytesIO(bytes(member[:65_536]))
            np.lib.format.read_magic(head)
            np.lib.format.read_array_header_1_0(head)

    rows = [
        ("write the archive", by_zipfile, lambda: npy_members.stored_archive(arrays)),
        ("read the headers", by_numpy_headers, lambda: [npy_members.header(m) for m in members]),
    ]
    print(f"{args.arrays} arrays, median of {args.repeat}")
    for what, peer, ours in rows:
        t_peer, t_ours = median_time(peer, args.repeat), median_time(ours, args.repeat)
        print(f"  {what:18s} zipfile/numpy {t_peer:6.3f} s   direct {t_ours:6.3f} s   {t_peer / t_ours:5.1f}x faster")


if __name__ == "__main__":
    main()
