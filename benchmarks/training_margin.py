"""How far correct submissions end from the reference in the training check, and how far mistakes do.

Runs the training check's scenario (in this process, not the sandbox) on
several corpus seeds for the reference, the correct submissions of
tests/submissions/transformer, and two mistakes (gradients never zeroed, a
mask that shows the next token); prints each one's distance from the
reference's run on the same seed. The margins in plugins/transformer/public/training.py
come from this table.

    python benchmarks/training_margin.py [SEEDS]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lmgrade.declare.checks import CaseContext  # noqa: E402
from lmgrade.declare.flawed import write_flawed  # noqa: E402
from lmgrade.plugins.transformer.bugs import BUGS  # noqa: E402
from lmgrade.plugins.transformer.checks import training_cases  # noqa: E402
from lmgrade.plugins.transformer.public.training import training  # noqa: E402
from lmgrade.submissions.loader import load_files  # noqa: E402

FILES = ("layers.py", "model.py", "train.py")


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    torch.set_num_threads(1)
    scratch = tempfile.TemporaryDirectory(prefix="lmgrade-margin-")
    tmp = Path(scratch.name)
    folders = {"reference": ROOT / "reference" / "transformer"}
    folders.update({f"contract/{p.name}": p for p in sorted((ROOT / "tests/submissions/transformer").iterdir())})
    for bug in ("train_no_zero_grad", "mask_off_by_one"):
        folders[f"bug/{bug}"] = write_flawed(ROOT / "reference" / "transformer", FILES, tmp / bug, [BUGS[bug]])
    modules = {name: load_files(folder, FILES) for name, folder in folders.items()}
    print(f"{'seed':>4} {'H':>6} {'submission':<32} {'last 20':>8} {'d last':>8} {'held-out':>8} {'d held':>8}")
    worst = {"last": 0.0, "held": 0.0}
    for seed in range(seeds):
        (case,) = training_cases(CaseContext(rng=np.random.default_rng(seed), variant={"pre_ln": True}))
        runs = {name: training(mods, case.args) for name, mods in modules.items()}
        ref = runs["reference"]
        for name, got in runs.items():
            d_last = float(np.mean(got["losses"][-20:]) - np.mean(ref["losses"][-20:]))
            d_held = got["held-out loss"] - ref["held-out loss"]
            if name.startswith("contract"):
                worst["last"], worst["held"] = max(worst["last"], abs(d_last)), max(worst["held"], abs(d_held))
            print(
                f"{seed:>4} {case.args['entropy_rate']:6.3f} {name:<32} {np.mean(got['losses'][-20:]):8.3f} "
                f"{d_last:+8.4f} {got['held-out loss']:8.3f} {d_held:+8.4f}"
            )
    print(
        f"largest distance of a correct submission: last-20 loss {worst['last']:.4f}, held-out loss {worst['held']:.4f}"
    )


if __name__ == "__main__":
    main()
