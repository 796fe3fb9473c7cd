"""How the embeddings checks judge what a submission returned.

Only the contract's answers decide a case; the components a scenario returns
beside them (the student's own sgns_loss at the point, what SkipGram's train
builds on) only choose the words: a wrong answer is told which function of
the submission to fix first, and only where that function does differ.
"""

from __future__ import annotations

from autograder import CaseVerdict
from autograder.checks import ANSWER, PROPERTY
from autograder.compare import compare

from .scenarios import AGREE, COMPONENTS

# The check that grades each component a composed answer builds on.
CHECK_OF = {"skipgram_pairs": "skipgram_pairs", "noise_distribution": "noise_distribution", "step": "step",
            "sgns_loss": "sgns_loss", "sgns_grads": "sgns_grads"}


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
    loss_wrong = _differs(expected[COMPONENTS]["sgns_loss at this point"], mine.get("sgns_loss at this point"),
                          tolerance)
    if consistency == AGREE and loss_wrong:
        return CaseVerdict(False, f"the gradients are wrong: {diff}\nThey are the gradients of your own sgns_loss, "
                                  "which differs from the contract's at this point (see the check sgns_loss): "
                                  "fix the loss first.")
    if consistency == AGREE:
        return CaseVerdict(False, f"the gradients are wrong: {diff}")
    if loss_wrong:
        return CaseVerdict(False, f"the gradients are wrong: {diff}\nYour sgns_loss differs from the contract's "
                                  "at this point too (see the check sgns_loss), and the gradients do not agree "
                                  f"with its finite differences either ({consistency}).")
    return CaseVerdict(False, f"the gradients are wrong: {diff}\nYour sgns_loss is right at this point, and the "
                              f"gradients do not agree with its central differences ({consistency}).")


def judge_composed(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    """A method's answers against the reference; where wrong, the first function it builds on that differs."""
    tolerance = check.tolerance_of(case)
    diff = compare(_answers(expected), _answers(got), tolerance, reveal=reveal)
    if diff is None:
        return CaseVerdict(True)
    mine = got.get(COMPONENTS, {}) if isinstance(got, dict) else {}
    for name, right in expected[COMPONENTS].items():
        if _differs(right, mine.get(name), tolerance):
            return CaseVerdict(False, f"{diff}\nYour {name} differs from the contract's on this case's data (see "
                                      f"the check {CHECK_OF[name]}): fix that first.")
    return CaseVerdict(False, diff)


# The check that grades the answer a property is evaluated beside.
ANSWER_CHECK = {"train_bpe": "train_bpe", "encode_word": "encode_word", "noise_distribution": "noise_distribution",
                "sgns_grads": "sgns_grads", "SkipGram.step": "step", "make_examples": "make_examples",
                "skipgram_pairs": "skipgram_pairs"}


def judge_property(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    """The property, said as seen whether or not it pays; it pays only beside the call's right answer."""
    tolerance = check.tolerance_of(case)
    what = case.args["what"]
    problem = compare(expected[PROPERTY], got[PROPERTY], tolerance, reveal=True)
    if check.name == "bad_arguments":
        seen = "it raised ValueError" if problem is None else f"the ValueError is missing: {problem}"
    else:
        changed = ", ".join(expected[PROPERTY])
        seen = f"{changed} unchanged" if problem is None else f"{what} changed its argument: {problem}"
    wrong = compare(expected[ANSWER], got[ANSWER], tolerance, reveal=reveal)
    if wrong is None:
        return CaseVerdict(problem is None, "" if problem is None else seen)
    return CaseVerdict(False, f"{seen}; but the answer of the same call is wrong (see the check "
                              f"{ANSWER_CHECK[what]}), so the property earns nothing here: {wrong}")
