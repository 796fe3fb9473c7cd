"""`lmgrade gradescope`: the autograder zip of one assignment and variant.

At its root, as Gradescope's specification wants: ``setup.sh`` (installs a
virtual environment with lmgrade's wheel, its requirements, a CPU build of
torch where the assignment imports torch, and the sandbox's accounts) and
``run_autograder`` (grades through `supervise.py`). Beside them the wheel,
``requirements.txt`` and the config, which holds the course secret and so is
stored readable by its owner alone.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import jinja2

from ... import __version__
from ...core.selection import Selection
from ...declare import catalog
from ...declare.assignment import Assignment
from ...grading.expected_store import RecordingStore, default_store
from ...grading.grader import Grader
from ...grading.oracle import LiveReference
from ...sandbox.limits import MAX_DEFAULT_JOBS
from ...sandbox.privileges import FIRST_SANDBOX_UID
from .config import ZipConfig, time_budget_s
from .layout import CONFIG_NAME, EXPECTED_FOLDER
from .wheel import (
    TORCH,
    build_wheel,
    check_carried,
    distribution_wheel,
    imported_by,
    requirement_name,
    source_root,
    torch_requirement,
    wheel_requirements,
)

# Where setup.sh makes lmgrade's virtual environment on the image (outside
# /autograder, whose source folder the sandbox may not read).
GRADESCOPE_VENV = "/opt/lmgrade/venv"
TEMPLATES = Path(__file__).resolve().parent / "templates"
# Fixed entry dates: the same wheel and config give the same zip.
ZIP_DATE = (1980, 1, 1, 0, 0, 0)


@dataclass
class BuiltZip:
    path: Path
    size: int
    config: ZipConfig
    torch: str | None  # the torch requirement setup.sh installs, if any
    entries: list[str]
    worst_case_s: float  # the checks' wall-time limits in its gradings added up (a timing check's once per run)


def _render(name: str, context: dict) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    return env.get_template(f"{name}.j2").render(context)


def _add(zf: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
    info.external_attr = (0o100000 | mode) << 16  # a regular file with these permissions
    info.compress_type = zipfile.ZIP_DEFLATED
    zf.writestr(info, data)


def record_expected(assignment: Assignment, variant: dict, secret: str, folder: Path) -> list[tuple[str, bytes]]:
    """Every check's expected values on the course's cases, and its mistakes' answers, as store entries.

    run_autograder then computes only the submission's side; timing checks still
    run the reference beside the submission, on Gradescope's machine. Values the
    user's store holds already (from a `grade` or an earlier zip) are copied, not
    computed again.
    """
    return _recorded(assignment, variant, secret, folder)[0]


def _recorded(assignment: Assignment, variant: dict, secret: str, folder: Path) -> tuple[list, float]:
    """`record_expected`'s entries, and the wall seconds a submission that uses every check's limit takes:
    the limits the zip's gradings will set (each check's floor, or its multiple of the reference's time
    recorded here, which the zip ships), a timing check's once per sandboxed run."""
    store = RecordingStore(folder, default_store())
    with Grader(assignment, variant, LiveReference(assignment.spec), secret=secret, store=store) as grader:
        grader.record_expected()
        worst_case_s = sum(
            grader.limits_of(c).wall_s * (c.timing.sandboxed_runs if c.timing else 1) for c in assignment.checks
        )
    entries = [(path.relative_to(folder).as_posix(), path.read_bytes()) for path in sorted(folder.rglob("*.wire"))]
    return entries, worst_case_s


def build_zip(
    assignment: Assignment,
    variant: dict,
    selection: Selection,
    out: Path,
    *,
    secret: str,
    public_secret: bool,
    per_student: bool = False,
) -> BuiltZip:
    """Write the zip to `out` (replaced only once complete); `per_student`: its hidden checks draw each
    student's own inputs, whose expected values the reference computes at grading time (`hidden_inputs`)."""
    root = source_root()
    distribution = catalog.sources()[assignment.name].distribution
    check_carried(assignment, root, distribution)
    budget = time_budget_s()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lmgrade-gradescope-") as tmp:
        wheel = build_wheel(root, Path(tmp))
        requirements = wheel_requirements(wheel)
        torch = torch_requirement(requirements) if TORCH in imported_by(selection) else None
        wheel_bytes = wheel.read_bytes()
        # An assignment from a package of its own: that package's wheel too, installed after lmgrade's.
        extra = (
            [distribution_wheel(distribution, Path(tmp) / "assignment")]
            if distribution not in (None, "lmgrade")
            else []
        )
        requirements += [
            r
            for w in extra
            for r in wheel_requirements(w)
            if requirement_name(r) not in {"lmgrade", *map(requirement_name, requirements)}
        ]
        config = ZipConfig.for_assignment(
            assignment,
            variant,
            selection,
            secret=secret,
            public_secret=public_secret,
            time_budget_s=budget,
            lmgrade_version=__version__,
            wheel=wheel.name,
            wheel_sha256=hashlib.sha256(wheel_bytes).hexdigest(),
            per_student=per_student,
        )
        context = {
            "assignment": assignment.name,
            "version": __version__,
            "venv": GRADESCOPE_VENV,
            "wheel": wheel.name,
            "assignment_wheels": [w.name for w in extra],
            "config": CONFIG_NAME,
            "torch": torch,
            "first_uid": FIRST_SANDBOX_UID,
            "users": MAX_DEFAULT_JOBS,
        }
        kept = [r for r in requirements if requirement_name(r) != TORCH]
        expected, worst_case_s = _recorded(assignment, variant, secret, Path(tmp) / EXPECTED_FOLDER)
        entries = [
            ("setup.sh", _render("setup.sh", context).encode(), 0o755),
            ("run_autograder", _render("run_autograder", context).encode(), 0o755),
            ("requirements.txt", "".join(f"{r}\n" for r in kept).encode(), 0o644),
            (wheel.name, wheel_bytes, 0o644),
            *((w.name, w.read_bytes(), 0o644) for w in extra),
            (CONFIG_NAME, config.to_json().encode(), 0o600),
            *((f"{EXPECTED_FOLDER}/{name}", data, 0o600) for name, data in expected),
        ]
        fd, partial = tempfile.mkstemp(prefix=".lmgrade-", suffix=".zip", dir=out.parent)
        os.close(fd)
        try:
            with zipfile.ZipFile(partial, "w") as zf:
                for name, data, mode in entries:
                    _add(zf, name, data, mode)
            os.replace(partial, out)
        except BaseException:
            Path(partial).unlink(missing_ok=True)
            raise
    return BuiltZip(
        path=out,
        size=out.stat().st_size,
        config=config,
        torch=torch,
        entries=[name for name, _, _ in entries],
        worst_case_s=worst_case_s,
    )
