"""Transformer submissions that try to earn the timing checks' points with answers that are not right on
every lap, written from docs/time-and-gpu.md and docs/timing-checks.md alone.

Each attack is a correct submission (`tests/submissions/transformer/einsum`) whose `layers.py` ends with
`attacks/_shared.py` and then `attacks/<name>.py`, which replace `CausalSelfAttention.forward` on long
sequences (the timed cases) and keep it right on short ones.

    python tests/cheats/surfaces/timing_laps/build.py OUT   # every attack as OUT/<name>/
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ORIGIN = HERE.parents[2] / "submissions" / "transformer" / "einsum"
ATTACKS = sorted(p.stem for p in (HERE / "attacks").glob("*.py") if not p.stem.startswith("_"))


def write(name: str, out: Path) -> Path:
    """The attack `name` as a submission folder at `out`."""
    shutil.copytree(ORIGIN, out)
    layers = out / "layers.py"
    parts = [layers.read_text(encoding="utf-8"), (HERE / "attacks" / "_shared.py").read_text(encoding="utf-8")]
    parts.append((HERE / "attacks" / f"{name}.py").read_text(encoding="utf-8"))
    layers.write_text("\n\n".join(parts), encoding="utf-8")
    return out


if __name__ == "__main__":
    for attack in ATTACKS:
        write(attack, Path(sys.argv[1]) / attack)
