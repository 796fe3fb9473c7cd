"""Whose hidden inputs a grading draws: the course's, or one student's.

By default every check draws its cases from the course secret
(`seeds.check_rng`), so every student is graded on the same hidden cases.
With per-student hidden inputs (assignment.toml's ``[assignment]
hidden_inputs = "per_student"``, or ``--per-student``), a check that is not
``visible`` draws its cases from a seed of the student's own instead,
``derive_seed(course secret, "student", identity)``: two students' hidden
cases differ, while one student's are the same at every grading, and no
identity can be turned into another student's seed without the secret.
Public checks keep the course's cases: they are the ones students compare
notes on, and what the student bundle runs.

The identity is the submitters' emails (a submitter without one by their
SID), lowercased, sorted and joined by commas: every member of a group gets
the group's inputs, and Gradescope's submission_metadata.json and its
export's submission_metadata.yml name the same students the same way. Where
per-student inputs are asked for but no identity is known, the grading says
so in one line and uses the course's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from .seeds import derive_seed

COURSE = "course"
PER_STUDENT = "per_student"
CHOICES = (COURSE, PER_STUDENT)
"""The values of assignment.toml's ``[assignment] hidden_inputs``."""


class Submitter(Protocol):
    """What identifies a submitter: a regrade's `Student` and a Gradescope user both have it."""

    email: str
    sid: str


def student_identity(submitters: Iterable[Submitter]) -> str | None:
    """The identity of a submission's students, the same for each member of a group; None where none is known."""
    keys = set()
    for person in submitters:
        email, sid = (str(getattr(person, name, "") or "").strip() for name in ("email", "sid"))
        if email:
            keys.add(email.lower())
        elif sid:
            keys.add(f"sid:{sid}")
    return ",".join(sorted(keys)) or None


@dataclass(frozen=True)
class _Named:
    email: str = ""
    sid: str = ""


def identity_of_option(value: str) -> str | None:
    """The identity `--student` names: a student's email, or a group's emails separated by commas; an entry
    without an @ (or written sid:SID) is a SID, for a student with no email. Spelled as `student_identity`
    spells it, so `grade --student EMAIL` draws the inputs Gradescope and a regrade draw for that student."""
    named = []
    for entry in (part.strip() for part in value.split(",")):
        if "@" in entry:
            named.append(_Named(email=entry))
        elif entry:
            named.append(_Named(sid=entry.removeprefix("sid:")))
    return student_identity(named)


@dataclass(frozen=True)
class HiddenInputs:
    """Where one grading's hidden checks draw their cases from."""

    per_student: bool = False
    """Whether per-student hidden inputs were asked for."""
    seed: int | None = None
    """The student's seed; None where the hidden checks draw from the course secret."""

    @property
    def secret(self) -> str | None:
        """What the hidden checks' generators are seeded from in place of the course secret (None: that one)."""
        return None if self.seed is None else f"student-{self.seed:032x}"

    @property
    def tag(self) -> str:
        """A short hash of the seed, safe to show (it tells nothing of the seed or the secret); "course"
        where the course's inputs are used."""
        if self.seed is None:
            return COURSE
        return hashlib.sha256(f"lmgrade student seed\0{self.seed:032x}".encode()).hexdigest()[:12]

    def line(self) -> str | None:
        """What the grading says of its hidden inputs: None where per-student inputs were not asked for."""
        if not self.per_student:
            return None
        if self.seed is None:
            return "hidden inputs: no student identity is known, so the course's hidden inputs are used"
        return f"hidden inputs drawn for student {self.tag}"


def hidden_inputs(secret: str, identity: str | None, per_student: bool) -> HiddenInputs:
    """The hidden inputs of a grading with the course `secret` of the student `identity` (`student_identity`)."""
    if not per_student or not identity:
        return HiddenInputs(per_student=per_student)
    return HiddenInputs(per_student=True, seed=derive_seed(secret, "student", identity))


def per_student_asked(setting: str, flag: bool) -> bool:
    """Whether a grading draws per-student hidden inputs: asked by `--per-student` (`flag`), or by
    assignment.toml's `hidden_inputs` (`setting`)."""
    return flag or setting == PER_STUDENT
