"""How the lstm checks judge what a submission returned.

`judge_gradients` tells a student which half of a module is off, from the
forward, the backward, and whether the backward agrees with central
differences of the student's *own* forward. A check that composes another
component (the cell inside a StackedRNN, clip_grad_norm inside step) names
that component when it differs on the same data, before anything else.
Property checks say what they saw, whether or not it pays.
"""

from __future__ import annotations

from autograder import CaseVerdict
from autograder.checks import ANSWER, PROPERTY
from autograder.compare import compare

from .scenarios import AGREE, COMPONENT

CONSISTENCY = ("backward against finite differences of forward", "backward against finite differences of loss")
BACKWARD_PREFIXES = ("dx", "grad", "layers[", "rnn.layers[", "fwd.grads", "bwd.grads", "backward")

# check -> (what the component is, the check that grades it)
COMPONENTS = {
    "stacked": ("{cell}: the cell alone, on layer 0's parameters,", "{cell_checks}"),
    "birnn": ("{cell}: the cell alone, on fwd's parameters,", "{cell_checks}"),
    "lstmlm": ("StackedRNN of LSTMs: alone, on the same embedded inputs,", "stacked"),
    "step": ("clip_grad_norm: alone, on the same gradients and max_norm,", "clip_grad_norm"),
    "train": ("LSTMLM: one loss, backward and step on the first sequence,", "lstmlm, named_grads and step"),
}


def _component_problem(check, case, expected, got, reveal) -> str | None:
    """The sentence naming a composed component that differs, or None."""
    if COMPONENT not in expected:
        return None
    diff = compare(expected[COMPONENT], got.get(COMPONENT) if isinstance(got, dict) else None,
                   check.tolerance_of(case), reveal=reveal)
    if diff is None:
        return None
    cell = {"lstm": "LSTM", "gru": "GRU"}.get(case.args.get("cell"), "")
    what, where = COMPONENTS[check.name]
    cell_checks = f"{cell.lower()}_forward and {cell.lower()}_backward"
    what, where = what.format(cell=cell), where.format(cell_checks=cell_checks)
    return (f"your {what} differs from the expected ({diff}).\nSee the check(s) {where}: fix that first; "
            f"this check grades what {check.name} adds on top of it.")


def _without(d: dict, *keys) -> dict:
    return {k: v for k, v in d.items() if k not in keys}


def judge_values(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    """A plain comparison, after the composed component (if any) is found right."""
    tolerance = check.tolerance_of(case)
    if isinstance(expected, dict) and isinstance(got, dict):
        diff = compare(_without(expected, COMPONENT), _without(got, COMPONENT), tolerance, reveal=reveal)
    else:
        diff = compare(expected, got, tolerance, reveal=reveal)
    if diff is None:
        return CaseVerdict(True)
    component = _component_problem(check, case, expected, got, reveal) if isinstance(got, dict) else None
    return CaseVerdict(False, component or diff)


def judge_gradients(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    if not isinstance(got, dict):
        return CaseVerdict(False, compare(expected, got, check.tolerance, reveal=reveal) or "")
    consistency = next((key for key in CONSISTENCY if key in expected), None)
    agrees = consistency is None or got.get(consistency) == AGREE
    right = _without(expected, consistency, COMPONENT)
    tolerance = check.tolerance_of(case)
    # What the constructor made is neither half: said on its own.
    built_keys = list(right) if case.args.get("construct") else [k for k in right if "built" in k]
    built = compare({k: right[k] for k in built_keys}, {k: got.get(k) for k in built_keys}, tolerance, reveal=reveal)
    if built is not None:
        return CaseVerdict(False, f"what the constructor made is wrong: {built}")
    right = _without(right, *built_keys)
    forward_keys = [k for k in right if not k.startswith(BACKWARD_PREFIXES)]
    backward_keys = [k for k in right if k not in forward_keys]
    forward = compare({k: right[k] for k in forward_keys}, {k: got.get(k) for k in forward_keys},
                      tolerance, reveal=reveal)
    backward = compare({k: right[k] for k in backward_keys}, {k: got.get(k) for k in backward_keys},
                       tolerance, reveal=reveal)
    if forward is None and backward is None:
        return CaseVerdict(True)
    component = _component_problem(check, case, expected, got, reveal)
    if component:
        return CaseVerdict(False, component)
    what = "loss" if consistency and consistency.endswith("loss") else "forward"
    if consistency is None:
        return CaseVerdict(False, f"the {what} is wrong: {forward}" if forward else f"the backward is wrong: {backward}")
    if forward is not None and agrees:
        return CaseVerdict(False, f"the {what} is wrong: {forward}\nYour backward does agree with finite "
                                  f"differences of your own {what}: fix the {what} first.")
    if forward is None:
        hint = (f"\nIt does not agree with finite differences of your own {what} either "
                f"({got.get(consistency)})." if not agrees else
                f"\nIt agrees with finite differences of your own {what}, which is right: "
                "look at what backward assumes that forward does not do (a cache, a default).")
        return CaseVerdict(False, f"the backward is wrong: {backward}{hint}")
    return CaseVerdict(False, f"the {what} is wrong: {forward}\nThe backward is wrong too, and does not agree "
                              f"with finite differences of your own {what} ({got.get(consistency)}).")


def _pattern_words(net: str, t: int, s: int, half: int, changed: bool) -> str:
    where = f"row {t + 1}" if net == "StackedRNN" else f"row {t + 1}, {('forward', 'backward')[half]} half,"
    if changed:
        return f"{where} of the output changed when x_{s + 1} changed"
    return f"{where} of the output did not change when x_{s + 1} changed"


RULES = {"StackedRNN": "a stacked (one-directional) RNN's row t depends on x_1 .. x_t and on nothing later",
         "BiRNN": "a BiRNN's forward half of row t depends on x_1 .. x_t, its backward half on x_t .. x_T"}


def judge_dependence(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    """Pays where the output's dependence on x is the contract's; says what it saw either way."""
    net = case.args["net"]
    want, seen = expected[PROPERTY], got.get(PROPERTY) if isinstance(got, dict) else None
    if not isinstance(seen, dict) or seen.get("shape") != want["shape"]:
        shape = seen.get("shape") if isinstance(seen, dict) else None
        return CaseVerdict(False, f"the output has shape {shape}, not {tuple(want['shape'])}, so which rows "
                                  "depend on which x could not be read")
    for s, (w, g) in enumerate(zip(want["changed"], seen["changed"])):
        for half, (w_half, g_half) in enumerate(zip(w, g or [])):
            for t, (w_t, g_t) in enumerate(zip(w_half, g_half)):
                if w_t != g_t:
                    return CaseVerdict(False, f"{_pattern_words(net, t, s, half, g_t)}: {RULES[net]}.")
    return CaseVerdict(True, f"every row depends on x as it must ({RULES[net]}).")


def judge_property(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    """The property, said in words; it pays only beside the same call's right answer."""
    tolerance = check.tolerance_of(case)
    seen = got.get(PROPERTY) if isinstance(got, dict) else None
    holds = compare(expected[PROPERTY], seen, tolerance, reveal=True) is None
    answer = compare(expected[ANSWER], got.get(ANSWER) if isinstance(got, dict) else None, tolerance, reveal=reveal)
    if check.name == "bad_arguments":
        said = f"it raised {seen}" if seen != "no exception" else "it raised nothing"
        if not holds:
            hint = " (use raise ValueError: an assert is not what the contract asks for)" \
                if seen == "AssertionError" else ""
            return CaseVerdict(False, f"{said}: the contract asks for ValueError{hint}.")
        sentence = "it raised ValueError, as the contract asks"
    else:
        if not holds:
            diff = compare(expected[PROPERTY], seen, tolerance, reveal=True)
            return CaseVerdict(False, f"an argument was changed by the call: {diff}")
        sentence = "the arguments were left unchanged"
    if answer is None:
        return CaseVerdict(True)
    return CaseVerdict(False, f"{sentence}, but the call's own answer is wrong ({answer}), so the property earns "
                              "nothing here: code that does nothing would keep it too.")
