"""Deterministic, unpredictable seeds for the inputs of every check.

A check's inputs come from a seed derived from the assignment, the check and
a secret. The same submission therefore gets the same score every time, and
without the course secret the hidden inputs cannot be precomputed.
Students' local runs use the public default; instructors set
``LMGRADE_SECRET`` (the Gradescope bundle bakes it in).

A visible check's cases are drawn from the public default whatever the
course secret (`case_secret`): Gradescope shows their inputs and expected
values, and a student's `check --case CHECK:N` must show the very case
Gradescope numbered N, which no student could draw from a secret they lack.
Every other check follows the course secret (or a student's own seed).
"""

from __future__ import annotations

import hashlib
import os

import numpy as np

SECRET_ENV = "LMGRADE_SECRET"
PUBLIC_SECRET = "lmgrade-public"


def course_secret() -> str:
    return os.environ.get(SECRET_ENV) or PUBLIC_SECRET


def public_secret_warning(what: str, remedy: str) -> str | None:
    """The one-line warning where `what` (a zip, a grading) would draw its inputs from the public default secret.

    None where a course secret is set. Under the public secret the graded inputs are the ones every
    student can draw, and the student bundle holds the answers to the public ones.
    """
    if course_secret() != PUBLIC_SECRET:
        return None
    return (
        f"WARNING: {SECRET_ENV} is not set: {what} uses the public default secret, which every student has, "
        f"so the hidden inputs can be computed in advance. Set {SECRET_ENV} to the course's own secret and "
        f"{remedy}."
    )


def derive_seed(secret: str, *parts: str) -> int:
    """A 128-bit seed from the secret and the names that identify the draw."""
    h = hashlib.sha256(secret.encode())
    for part in parts:
        h.update(b"\0" + part.encode())
    return int.from_bytes(h.digest()[:16], "big")


def case_secret(visibility: str, secret: str) -> str:
    """The secret a check of `visibility` draws its cases from in a grading with `secret`: the public default
    for a visible check (students draw the same public cases), `secret` for every other."""
    return PUBLIC_SECRET if visibility == "visible" else secret


def check_rng(secret: str, assignment: str, check: str) -> np.random.Generator:
    return np.random.default_rng(derive_seed(secret, assignment, check))
