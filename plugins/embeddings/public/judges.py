"""How sgns_grads is judged: against the reference, and against the student's own sgns_loss.

Only the contract's gradients decide a case; the student's own sgns_loss at
the point, which the scenario returns beside them, only chooses the words.
(Checks that run other components of the student, SkipGram.step and train,
declare them with `composes`: the harness names the one that failed.)
"""

from __future__ import annotations

from lmgrade import AGREE, NOT_MEASURED, CaseVerdict, compare

from .scenarios import COMPONENTS


def _answers(value) -> dict:
    return {k: v for k, v in value.items() if k != COMPONENTS} if isinstance(value, dict) else value


def _differs(expected, got, tolerance) -> bool:
    return compare(expected, got, tolerance, reveal=True) is not None


def judge_gradients(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    """sgns_grads against the reference; a wrong one is told whether it fits the student's own sgns_loss."""
    tolerance = check.tolerance_of(case)
    diff = compare(_answers(expected), _answers(got), tolerance, reveal=reveal)
    if diff is None:
        return CaseVerdict(True)
    mine = got.get(COMPONENTS, {}) if isinstance(got, dict) else {}
    consistency = mine.get("against finite differences of your sgns_loss")
    loss_wrong = _differs(
        expected[COMPONENTS]["sgns_loss at this point"], mine.get("sgns_loss at this point"), tolerance
    )
    if consistency == AGREE and loss_wrong:
        return CaseVerdict(
            False,
            f"the gradients are wrong: {diff}\nThey are the gradients of your own sgns_loss, "
            "which differs from the contract's at this point (see the check sgns_loss): "
            "fix the loss first.",
        )
    if consistency == AGREE:
        return CaseVerdict(False, f"the gradients are wrong: {diff}")
    if not isinstance(consistency, str) or consistency.startswith(NOT_MEASURED):
        # Not measured (no finite loss, or nothing to compare): nothing is said of the agreement.
        return CaseVerdict(False, f"the gradients are wrong: {diff}")
    if not reveal:  # how they disagree is the child's text: a hidden case says only that they do
        consistency = "they disagree"
    if loss_wrong:
        return CaseVerdict(
            False,
            f"the gradients are wrong: {diff}\nYour sgns_loss differs from the contract's "
            "at this point too (see the check sgns_loss), and the gradients do not agree "
            f"with its finite differences either ({consistency}).",
        )
    return CaseVerdict(
        False,
        f"the gradients are wrong: {diff}\nYour sgns_loss is right at this point, and the "
        f"gradients do not agree with its central differences ({consistency}).",
    )
