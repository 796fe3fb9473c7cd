"""How the lstm checks judge what a submission returned.

`judge_gradients` tells a student which half of a module is off, from the
forward, the backward, and whether the backward agrees with central
differences of the student's *own* forward. A check that composes another
component (the cell inside a StackedRNN, clip_grad_norm inside step) says
so through `Check.composes`: the harness names the component whose own
check failed.
`judge_dependence` says which rows changed (read in the grading process from
the outputs the scenario returns), whether or not it pays.
"""

from __future__ import annotations

from lmgrade import AGREE, ANSWER, PROPERTY, CaseVerdict, compare, which_half

CONSISTENCY = ("backward against finite differences of forward", "backward against finite differences of loss")
BACKWARD_PREFIXES = ("dx", "grad", "layers[", "rnn.layers[", "fwd.grads", "bwd.grads", "backward")


def _without(d: dict, *keys) -> dict:
    return {k: v for k, v in d.items() if k not in keys}


def judge_gradients(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    if not isinstance(got, dict):
        return CaseVerdict(False, compare(expected, got, check.tolerance, reveal=reveal) or "")
    consistency = next((key for key in CONSISTENCY if key in expected), None)
    agrees = consistency is None or got.get(consistency) == AGREE
    right = _without(expected, consistency)
    tolerance = check.tolerance_of(case)
    # What the constructor made is neither half: said on its own.
    built_keys = list(right) if case.args.get("construct") else [k for k in right if "built" in k]
    built = compare({k: right[k] for k in built_keys}, {k: got.get(k) for k in built_keys}, tolerance, reveal=reveal)
    if built is not None:
        return CaseVerdict(False, f"what the constructor made is wrong: {built}")
    right = _without(right, *built_keys)
    forward_keys = [k for k in right if not k.startswith(BACKWARD_PREFIXES)]
    backward_keys = [k for k in right if k not in forward_keys]
    forward = compare(
        {k: right[k] for k in forward_keys}, {k: got.get(k) for k in forward_keys}, tolerance, reveal=reveal
    )
    backward = compare(
        {k: right[k] for k in backward_keys}, {k: got.get(k) for k in backward_keys}, tolerance, reveal=reveal
    )
    if forward is None and backward is None:
        return CaseVerdict(True)
    what = "loss" if consistency and consistency.endswith("loss") else "forward"
    said = f"{got.get(consistency)}" if consistency else None  # None: not measured
    return CaseVerdict(False, which_half(forward, backward, what, agrees, said, reveal))


def _pattern_words(net: str, t: int, s: int, half: int, changed: bool) -> str:
    where = f"row {t + 1}" if net == "StackedRNN" else f"row {t + 1}, {('forward', 'backward')[half]} half,"
    if changed:
        return f"{where} of the output changed when x_{s + 1} changed"
    return f"{where} of the output did not change when x_{s + 1} changed"


RULES = {
    "StackedRNN": "a stacked (one-directional) RNN's row t depends on x_1 .. x_t and on nothing later",
    "BiRNN": "a BiRNN's forward half of row t depends on x_1 .. x_t, its backward half on x_t .. x_T",
}


def judge_dependence(check, case, expected, got, *, reveal: bool) -> CaseVerdict:
    """Pays where the output's dependence on x is the contract's, read here from the outputs the call returned
    (`Check.holds`), and the output itself is right; says what it saw either way."""
    net = case.args["net"]
    if not isinstance(got, dict) or set(got) != {ANSWER, PROPERTY}:
        return CaseVerdict(False, "the answer is not shaped like the contract's")
    want = check.judged_property(case, expected[PROPERTY])
    try:
        seen = check.judged_property(case, got[PROPERTY])
    except Exception:  # not outputs of the contract's kind: no dependence can be read from them
        seen = None
    if seen is None or seen["shape"] != want["shape"]:
        shape = tuple(seen["shape"]) if seen is not None else "another"
        return CaseVerdict(
            False,
            f"the output has shape {shape}, not {tuple(want['shape'])}, so which rows "
            "depend on which x could not be read",
        )
    for s, (w, g) in enumerate(zip(want["changed"], seen["changed"], strict=True)):
        if g is None:
            return CaseVerdict(
                False,
                f"the output with x_{s + 1} changed has another shape, so which rows depend on it could not be read",
            )
        for half, (w_half, g_half) in enumerate(zip(w, g, strict=True)):
            for t, (w_t, g_t) in enumerate(zip(w_half, g_half, strict=True)):
                if w_t != g_t:
                    return CaseVerdict(False, f"{_pattern_words(net, t, s, half, g_t)}: {RULES[net]}.")
    said = f"every row depends on x as it must ({RULES[net]})"
    answer = compare(expected[ANSWER], got[ANSWER], check.tolerance_of(case), reveal=reveal)
    if answer is not None:
        return CaseVerdict(
            False, f"{said}, but the output itself is wrong, so the property earns nothing here: {answer}"
        )
    return CaseVerdict(True, f"{said}.")
