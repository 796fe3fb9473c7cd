"""What the tests share: paths, the catalogue's submissions, graders' helpers, the command line.

Test modules import from here, never from each other; conftest.py holds the fixtures.
"""

from __future__ import annotations

import ast
import dataclasses
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest
from click.testing import CliRunner

from lmgrade.declare import catalog, templates
from lmgrade.declare.flawed import write_flawed
from lmgrade.sandbox.limits import Limits

ROOT = Path(__file__).resolve().parents[1]


TEST_SECRET = "test-secret-5e81c0"  # distinctive: tests assert it never shows in what students see


def shortened(assignment, cpu_s: float = 4, wall_s: float = 6, wall_factor: float | None = None):
    """The assignment with limits short enough for a hanging submission in a test (`wall_factor`: times
    the reference's time a check may take, where given)."""
    checks = [
        dataclasses.replace(
            c,
            limits=Limits(
                **{
                    **c.limits.as_dict(),
                    "cpu_s": min(c.limits.cpu_s, cpu_s),
                    "wall_s": min(c.limits.wall_s, wall_s),
                    **({} if wall_factor is None else {"wall_factor": wall_factor}),
                }
            ),
        )
        for c in assignment.checks
    ]
    return dataclasses.replace(assignment, checks=checks)


ASSIGNMENTS = list(catalog.assignment_folders())


SUBMISSIONS = ROOT / "tests" / "submissions"


def variants_of(name: str) -> list[tuple[str, ...]]:
    """The default variant, then each other choice of each variant, as --set pairs."""
    return [tuple(f"{k}={v}" for k, v in selection.settings) for selection in catalog.variants(name)]


def variant_params(slow_variants: bool = False):
    """(assignment, --set pairs) for every assignment and variant, as pytest ids; with `slow_variants`, the
    variants other than the default are marked slow (the fast subset grades the default one)."""
    return [
        pytest.param(
            name, pairs, id="-".join([name, *pairs]), marks=[pytest.mark.slow] if slow_variants and pairs else []
        )
        for name in ASSIGNMENTS
        for pairs in variants_of(name)
    ]


def contract_submissions(name: str) -> list[Path]:
    """Correct submissions written from the contract alone, in other styles than the reference's."""
    folder = SUBMISSIONS / name
    return sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []


def port_submissions(name: str) -> list[Path]:
    """Correct ports of public code to the contract (tests/submissions/ports/NAME/, not its bugs/)."""
    folder = SUBMISSIONS / "ports" / name
    return sorted(p for p in folder.iterdir() if p.is_dir() and p.name != "bugs") if folder.is_dir() else []


def write_bugs(assignment, root: Path) -> dict[str, Path]:
    """Folder of each buggy submission of the assignment's catalogue, by name."""
    spec = assignment.spec
    return {
        name: write_flawed(spec.reference_folder(), spec.files, root / name, [bug])
        for name, bug in catalog.bugs(spec.name).items()
    }


def by_name(verdicts):
    return {v.check.name: v for v in verdicts}


# The command line


def lmgrade(*args, cwd=None, timeout=300):
    return subprocess.run(
        [sys.executable, "-m", "lmgrade.cli", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def invoke(*args):
    """`lmgrade ARGS` in this process (click's runner): for what a usage error or a listing says."""
    from lmgrade.cli.app import main

    return CliRunner().invoke(main, [str(a) for a in args])


# Gradescope's results.json

GRADESCOPE_SCHEMA = {
    "type": "object",
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "number"},
        "output": {"type": "string"},
        "output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
        "visibility": {"enum": ["hidden", "after_due_date", "after_published", "visible"]},
        "stdout_visibility": {"enum": ["hidden", "after_due_date", "after_published", "visible"]},
        "extra_data": {"type": "object"},
        "leaderboard": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "value"],
                "properties": {"name": {"type": "string"}, "order": {"enum": ["asc", "desc"]}},
            },
        },
        "tests": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "score", "max_score", "output", "visibility"],
                "properties": {
                    "score": {"type": "number"},
                    "max_score": {"type": "number"},
                    "status": {"enum": ["passed", "failed"]},
                    "name": {"type": "string"},
                    "number": {"type": "string"},
                    "output": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "visibility": {"enum": ["hidden", "after_due_date", "after_published", "visible"]},
                },
                "additionalProperties": False,
            },
        },
    },
    "required": ["tests"],
    "additionalProperties": False,
}


def validate(document: dict) -> None:
    jsonschema.validate(document, GRADESCOPE_SCHEMA)
    assert document["score"] == pytest.approx(sum(t["score"] for t in document["tests"]))


# The reference's own lines


def code_lines(source: str) -> list[str]:
    """The lines of a module that are code: docstrings left out (they may say what the handout says)."""
    docstrings = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            docstrings.update(range(node.lineno, node.end_lineno + 1))
    return [line for number, line in enumerate(source.splitlines(), start=1) if number not in docstrings]


def distinctive_reference_lines(name: str) -> list[str]:
    """Code lines of the reference that nothing else has: not the stubs' signatures, not short ones."""
    assignment, variant = catalog.load(name)
    stub_lines = {line.strip() for text in templates.render(assignment, variant).values() for line in text.splitlines()}
    folder = assignment.spec.reference_folder()
    lines = [
        line.strip()
        for filename in assignment.spec.files
        for line in code_lines((folder / filename).read_text(encoding="utf-8"))
    ]
    return sorted(
        {
            line
            for line in lines
            if len(line) >= 20 and not line.startswith("#") and not any(line in stub for stub in stub_lines)
        }
    )


# Gradients by central differences


def numeric_grad(f, x, h=1e-6):
    """Central differences of the scalar f at x, one entry at a time (float64)."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + h
        up = f(x.copy())
        x[i] = old - h
        down = f(x.copy())
        x[i] = old
        grad[i] = (up - down) / (2 * h)
    return grad


def rel_error(a, b):
    """|a - b| / (|a| + |b|) in the Frobenius norm; 0 when both are zero."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    scale = np.linalg.norm(a) + np.linalg.norm(b)
    return 0.0 if scale == 0 else np.linalg.norm(a - b) / scale


def graded_in(assignment, pairs: tuple[str, ...]) -> set[str]:
    """The checks a correct submission is graded on in a variant: all of them in the default one, all but the
    timing checks in the others (a time is judged against the reference's in the same variant, and the
    attention and training step a variant changes are timed in the reference's own test of each variant)."""
    return {c.name for c in assignment.checks if not pairs or c.timing is None}


# Too slow to grade for every bug (training runs 200 steps; timing checks time dozens of calls): a bug's
# grading leaves them out unless its catalogue entry names them.
SLOW_CHECKS = {"training", "attention_speed", "train_step_speed"}


def suite_bugs(name: str, most: int) -> list[str]:
    """The bugs of `name`'s catalogue the suite grades (the study grades them all): at most `most`, chosen so
    that together they lose on as many different checks as such a sample can, in the default variant,
    without a hang (each costs a check's whole time limit) and without a slow check to lose on."""
    bugs = catalog.bugs(name)
    candidates = sorted(
        bug
        for bug, entry in bugs.items()
        if not entry.variant
        and not any("time limit" in words for words in entry.loses.values())
        and not set(entry.loses) & SLOW_CHECKS
    )
    chosen: list[str] = []
    covered: set[str] = set()
    while candidates and len(chosen) < most:
        best = max(candidates, key=lambda bug: (len(set(bugs[bug].loses) - covered), -candidates.index(bug)))
        chosen.append(best)
        covered |= set(bugs[best].loses)
        candidates.remove(best)
    return chosen


def study_unless(kept: bool) -> list:
    """pytest marks for a parameter: none where the suite keeps it, `study` where only the study runs it."""
    return [] if kept else [pytest.mark.study]
