"""The checks of the lstm assignment: their inputs, tolerances and mistakes.

Every parameter (and, for `named_grads`, `step` and `train`, every gradient
and loss those components are given) is drawn here and assigned by the
scenario, so the submission and the reference compute with the same numbers
and a check grades one component. Sizes cover T = 1 and longer sequences,
J = 1 and larger, h0 and C0 given or left out.
"""

from __future__ import annotations

import numpy as np

from lmgrade import Case, CaseContext, Check, Limits, Tolerance, markov_sequences

from . import mistakes as M
from .public import scenarios
from .public.judges import judge_dependence, judge_gradients

# Float64 throughout: any correct order of operations agrees far inside
# these, and a detour through float32 (relative error near 6e-8) does not.
VALUES = Tolerance(rtol=1e-9, atol=1e-12)
GRADS = Tolerance(rtol=1e-8, atol=1e-11)
KEYS = {
    "lstm": ("W_f", "W_i", "W_C", "W_o", "b_f", "b_i", "b_C", "b_o"),
    "gru": ("W_r", "W_u", "W_n", "b_r", "b_u", "b_n"),
}
NAMES = {"lstm": "LSTM", "gru": "GRU"}


def _normal(rng, *shape, scale=1.0) -> np.ndarray:
    return rng.standard_normal(shape) * scale


def _cell_params(rng, kind, I, J, scale=0.8, bias=0.3) -> dict[str, np.ndarray]:
    return {
        k: _normal(rng, J, J + I, scale=scale) if k.startswith("W") else _normal(rng, J, scale=bias) for k in KEYS[kind]
    }


def _states(ctx, kind, J, h0, C0) -> tuple[dict, str]:
    args = {
        "h0": _normal(ctx.rng, J, scale=0.5) if h0 else None,
        "C0": _normal(ctx.rng, J, scale=0.5) if C0 and kind == "lstm" else None,
    }
    if kind == "gru":
        return args, "h0 given" if h0 else "h0 left out"
    said = {
        (False, False): "h0 and C0 left out",
        (True, True): "h0 and C0 given",
        (True, False): "h0 given, C0 left out",
        (False, True): "C0=... given by keyword, h0 left out",
    }
    return args, said[(h0, C0)]


def _cell_case(ctx, kind, T, I, J, h0=False, C0=False, **extra) -> Case:
    rng = ctx.rng
    states, said = _states(ctx, kind, J, h0, C0)
    args = {
        "cell": kind,
        "params": _cell_params(rng, kind, I, J),
        "x": _normal(rng, T, I),
        "G": _normal(rng, T, J),
        **states,
        **extra,
    }
    return Case(
        f"{NAMES[kind]}(input_size={I}, hidden_size={J}) with its params assigned; forward(x) with x of "
        f"shape ({T}, {I}), {said}",
        args,
    )


def _construction_case(kind, I, J, defaults=False) -> Case:
    how = "rng left out" if defaults else "rng=default_rng(0)"
    return Case(
        f"{NAMES[kind]}({I}, {J}, {how}) as built: params' keys and shapes, the weights' range, the biases",
        {"construct": True, "cell": kind, "I": I, "J": J, "defaults": defaults},
    )


CELL_SIZES = {
    "lstm": [(1, 2, 3, False, False), (5, 3, 1, True, True), (4, 2, 4, True, False), (6, 1, 2, False, True)],
    "gru": [(1, 2, 3, False, False), (5, 3, 1, True, False), (4, 2, 4, True, False), (6, 1, 2, False, False)],
}


def forward_cases(kind):
    def make(ctx: CaseContext) -> list[Case]:
        rng = ctx.rng
        # Sizes drawn: J * (J + I) >= 100 entries per W for the spread of the draws to show; J = 1 left to defaults.
        built = [
            _construction_case(kind, int(rng.integers(3, 40)), int(rng.integers(9, 30))),
            _construction_case(kind, int(rng.integers(2, 200)), 1, defaults=True),
        ]
        return built + [_cell_case(ctx, kind, *size) for size in CELL_SIZES[kind]]

    return make


def backward_cases(kind):
    def make(ctx: CaseContext) -> list[Case]:
        cases = [_cell_case(ctx, kind, *size) for size in CELL_SIZES[kind]]
        for case in cases:
            case.label += ", then backward(G)"
        return cases

    return make


def hidden_cases(ctx: CaseContext) -> list[Case]:
    cases = [
        _cell_case(ctx, "lstm", 12, 4, 6, True, True, finite_differences=False),
        _cell_case(ctx, "gru", 10, 3, 5, True, finite_differences=False),
    ]
    for case in cases:
        case.label += ", then backward(G)"
    return cases


def long_sequence_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    # Forget gate near 1 (b_f = 6: f is about 0.9975) or update gate near 0 (b_u = -6): the state
    # is carried for hundreds of steps, and so is the gradient, through C (LSTM) or h (GRU).
    for kind, T, I, J, h0, bias in [
        ("lstm", 300, 2, 3, True, ("b_f", 6.0)),
        ("lstm", 200, 1, 2, False, ("b_f", 5.0)),
        ("gru", 300, 2, 3, True, ("b_u", -6.0)),
    ]:
        case = _cell_case(ctx, kind, T, I, J, h0, h0)
        params = case.args["params"] = _cell_params(ctx.rng, kind, I, J, scale=0.3)
        params[bias[0]] = np.full(J, bias[1])
        G = np.zeros((T, J))
        G[-1] = _normal(ctx.rng, J)
        case.args["G"] = G
        case.label += f"; {bias[0]} = {bias[1]:g}; backward(G) with G zero except at the last step"
        cases.append(case)
    return cases


def _layers(rng, kind, I, J, L) -> list[dict[str, np.ndarray]]:
    return [_cell_params(rng, kind, I if l == 0 else J, J) for l in range(L)]


def stacked_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for kind, L, T, I, J in [("lstm", 1, 4, 3, 2), ("lstm", 2, 5, 3, 2), ("lstm", 3, 3, 2, 3), ("gru", 2, 4, 3, 2)]:
        rng = ctx.rng
        args = {"cell": kind, "layers": _layers(rng, kind, I, J, L), "x": _normal(rng, T, I), "G": _normal(rng, T, J)}
        cases.append(
            Case(
                f"StackedRNN({kind!r}, input_size={I}, hidden_size={J}, num_layers={L}) with every "
                f"layer's params assigned; forward(x) with x of shape ({T}, {I}), then backward(G)",
                args,
            )
        )
    return cases


def birnn_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for kind, T, I, J in [("lstm", 5, 2, 3), ("gru", 4, 3, 2), ("lstm", 1, 2, 1)]:
        rng = ctx.rng
        args = {
            "cell": kind,
            "halves": [_cell_params(rng, kind, I, J) for _ in range(2)],
            "x": _normal(rng, T, I),
            "G": _normal(rng, T, 2 * J),
            "probe_G": _normal(rng, T, J),
        }
        cases.append(
            Case(
                f"BiRNN({kind!r}, input_size={I}, hidden_size={J}) with fwd's and bwd's params assigned; "
                f"forward(x) with x of shape ({T}, {I}), then backward(G)",
                args,
            )
        )
    return cases


def depth_direction_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for net, kind, L, T, I, J in [
        ("StackedRNN", "lstm", 2, 5, 2, 3),
        ("StackedRNN", "gru", 3, 4, 3, 2),
        ("BiRNN", "lstm", 2, 5, 2, 3),
        ("BiRNN", "gru", 2, 4, 2, 2),
    ]:
        rng = ctx.rng
        args = {
            "net": net,
            "cell": kind,
            "layers": _layers(rng, kind, I, J, L)
            if net == "StackedRNN"
            else [_cell_params(rng, kind, I, J) for _ in range(2)],
            "x": _normal(rng, T, I),
            "J": J,
        }
        built = f"num_layers={L}" if net == "StackedRNN" else "fwd and bwd"
        cases.append(
            Case(
                f"{net}({kind!r}, input_size={I}, hidden_size={J}), {built} with params assigned: which "
                f"rows of forward(x), x of shape ({T}, {I}), change when one x_s changes",
                args,
            )
        )
    return cases


def _grads(rng, shapes, scale=1.0) -> dict[str, np.ndarray]:
    return {k: _normal(rng, *shape, scale=scale) for k, shape in shapes.items()}


def clip_cases(ctx: CaseContext) -> list[Case]:
    shapes = {"W": (3, 4), "b": (3,), "E": (2, 2)}
    cases = []
    for where in ("above", "at", "below"):
        grads = _grads(ctx.rng, shapes)
        total = float(np.sqrt(sum(np.sum(g**2) for g in grads.values())))
        max_norm = {"above": 2 * total, "at": total, "below": total / 3}[where]
        cases.append(
            Case(
                f"clip_grad_norm(3 arrays of total norm {total:.4g}, max_norm={max_norm:.4g}): the norm "
                f"{'below' if where == 'above' else 'at' if where == 'at' else 'above'} the threshold",
                {"grads": grads, "max_norm": max_norm},
            )
        )
    one = _grads(ctx.rng, {"g": (5,)}, scale=3.0)
    cases.append(Case("clip_grad_norm(one array, max_norm=0.5)", {"grads": one, "max_norm": 0.5}))
    many = _grads(ctx.rng, {f"rnn.{l}.W_{k}": (2, 3) for l in range(2) for k in "fi"}, scale=0.01)
    cases.append(Case("clip_grad_norm(4 small arrays, max_norm=1e-3)", {"grads": many, "max_norm": 1e-3}))
    rng = ctx.rng
    zeros = {k: np.zeros(tuple(int(d) for d in rng.integers(1, 5, int(rng.integers(1, 3))))) for k in "abc"}
    max_norm = round(float(rng.uniform(0.5, 2.0)), 3)
    # All zeros are what no work answers too: asked beside drawn gradients above the same threshold.
    beside = _grads(rng, {"a": (2, 3)})
    beside["a"] *= 3 * max_norm / np.linalg.norm(beside["a"])
    cases.append(
        Case(
            f"clip_grad_norm(every gradient zero, max_norm={max_norm}): nothing to scale; and the same on "
            "one array above the threshold",
            {"grads": zeros, "max_norm": max_norm, "beside": {"grads": beside}},
        )
    )
    return cases


def _lm_args(rng, V, D, J, L, scale=0.8) -> dict:
    return {
        "params": {"E": _normal(rng, V, D), "W_y": _normal(rng, V, J, scale=scale), "b_y": _normal(rng, V, scale=0.3)},
        "layers": _layers(rng, "lstm", D, J, L),
    }


def _lm_label(V, D, J, L) -> str:
    return f"LSTMLM(vocab_size={V}, embed_dim={D}, hidden_size={J}, num_layers={L}) with every param assigned"


def lstmlm_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    # Sizes drawn; left to its defaults, E and W_y hold enough entries (100 or more) for their spread to show.
    V, D, J = (int(v) for v in (rng.integers(5, 40), rng.integers(2, 6), rng.integers(3, 7)))
    V2, D2, J2 = (int(v) for v in (rng.integers(25, 60), rng.integers(4, 9), rng.integers(8, 13)))
    cases = [
        Case(
            f"LSTMLM({V}, {D}, {J}, num_layers=2, rng=default_rng(0)) as built: params' keys and shapes, E and W_y "
            "as drawn from rng in that order, the layers' sizes",
            {"construct": True, "V": V, "D": D, "J": J, "L": 2},
        ),
        Case(
            f"LSTMLM({V2}, {D2}, {J2}), num_layers and rng left out, as built: keys, shapes, the distributions of E "
            "and W_y",
            {"construct": True, "V": V2, "D": D2, "J": J2, "L": None},
        ),
    ]
    for V, D, J, L, T in [(5, 3, 4, 1, 6), (4, 2, 3, 2, 5), (3, 2, 1, 1, 1)]:
        rng = ctx.rng
        tokens = rng.integers(0, V, T + 1)
        tokens[T // 2] = tokens[0]  # a repeated token: its row of E gets the sum of its gradients
        args = {**_lm_args(rng, V, D, J, L), "tokens": tokens}
        cases.append(Case(f"{_lm_label(V, D, J, L)}; loss(tokens={tokens.tolist()}), then backward()", args))
    confident = cases[-2]
    confident.args["params"]["b_y"] = np.array([800.0, 0.0, -800.0, 1.0])
    confident.label = confident.label.replace(
        "; loss", "; b_y = [800, 0, -800, 1], so y_t is one-hot to machine precision (exp must not overflow); loss"
    )
    return cases


def _with_grads(rng, args) -> dict:
    args["grads"] = {k: _normal(rng, *v.shape) for k, v in args["params"].items()}
    args["layer_grads"] = [{k: _normal(rng, *v.shape) for k, v in layer.items()} for layer in args["layers"]]
    return args


def named_grads_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for V, D, J, L in [(4, 2, 3, 1), (5, 3, 2, 2)]:
        args = _with_grads(ctx.rng, _lm_args(ctx.rng, V, D, J, L))
        cases.append(
            Case(f"{_lm_label(V, D, J, L)}; self.grads and every layer's grads set by the grader; named_grads()", args)
        )
    return cases


def _norm(args) -> float:
    every = [*args["grads"].values(), *(g for layer in args["layer_grads"] for g in layer.values())]
    return float(np.sqrt(sum(np.sum(g**2) for g in every)))


def step_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for V, D, J, L, lr, clip in [
        (4, 2, 3, 1, 0.1, None),
        (5, 3, 2, 2, 0.5, "above"),
        (5, 3, 2, 2, 0.3, "below"),
        (3, 2, 2, 1, 1.0, "below"),
    ]:
        args = _with_grads(ctx.rng, _lm_args(ctx.rng, V, D, J, L))
        total = _norm(args)
        args["lr"] = lr
        args["max_norm"] = None if clip is None else (2 * total if clip == "above" else total / 4)
        how = f"step(lr={lr})" if clip is None else f"step(lr={lr}, max_norm={args['max_norm']:.4g})"
        cases.append(
            Case(
                f"{_lm_label(V, D, J, L)}; self.grads and every layer's grads set by the grader (total "
                f"norm {total:.4g}); {how}",
                args,
            )
        )
    return cases


def train_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    # The loop alone: a model whose loss, backward and step the grader answers and records.
    for count, epochs, lr, max_norm in [(4, 3, 0.1, 1.0), (3, 2, 0.25, None)]:
        rng = ctx.rng
        sequences = markov_sequences(rng, 5, count, high=9)
        while len({" ".join(map(str, s)) for s in sequences}) < count:
            sequences = markov_sequences(rng, 5, count, high=9)
        losses = {" ".join(map(str, s)): float(k + 1) * 1.25 for k, s in enumerate(sequences)}
        args = {
            "kind": "recorded",
            **_lm_args(rng, 5, 2, 2, 1),
            "sequences": sequences,
            "epochs": epochs,
            "lr": lr,
            "max_norm": max_norm,
            "seed": int(rng.integers(2**62)),
            "losses": losses,
        }
        clip = "" if max_norm is None else f", max_norm={max_norm}"
        cases.append(
            Case(
                f"train(model, {count} sequences, epochs={epochs}, lr={lr}, rng{clip}) on an LSTMLM whose "
                "loss, backward and step the grader answers and records: the calls made and the losses "
                "returned",
                args,
            )
        )
    # The whole loop on the student's own model, from a seeded Markov chain.
    for V, D, J, L, count, epochs, lr, max_norm in [
        (5, 3, 4, 1, 5, 3, 0.2, 1.0),
        (4, 2, 3, 2, 3, 2, 0.3, None),
        (4, 2, 2, 1, 2, 0, 0.1, 1.0),
    ]:
        rng = ctx.rng
        args = {
            "kind": "full",
            **_lm_args(rng, V, D, J, L, scale=0.5),
            "sequences": markov_sequences(rng, V, count, high=9),
            "epochs": epochs,
            "lr": lr,
            "max_norm": max_norm,
            "seed": int(rng.integers(2**62)),
        }
        clip = "" if max_norm is None else f", max_norm={max_norm}"
        cases.append(
            Case(
                f"{_lm_label(V, D, J, L)}; train(model, {count} sequences from a Markov chain, "
                f"epochs={epochs}, lr={lr}, rng{clip})",
                args,
            )
        )
    return cases


def no_mutation_cases(ctx: CaseContext) -> list[Case]:
    lstm = _cell_case(ctx, "lstm", 4, 2, 3, True, True)
    gru = _cell_case(ctx, "gru", 3, 3, 2, True)
    bi = birnn_cases(ctx)[0]
    lm = lstmlm_cases(ctx)[2]
    return [
        Case(
            "LSTM.forward(x, h0, C0), backward(G) must leave x, h0, C0 and G unchanged", {**lstm.args, "what": "LSTM"}
        ),
        Case("GRU.forward(x, h0), backward(G) must leave x, h0 and G unchanged", {**gru.args, "what": "GRU"}),
        Case("BiRNN.forward(x), backward(G) must leave x and G unchanged", {**bi.args, "what": "BiRNN"}),
        Case("LSTMLM.loss(tokens), backward() must leave tokens unchanged", {**lm.args, "what": "LSTMLM"}),
    ]


def bad_argument_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng

    def size() -> int:
        return int(rng.integers(2, 30))

    cases = []
    # The right sizes beside each bad argument are drawn, and so is what the bad call is given besides.
    for what, bad in [
        ("LSTM", (0, size())),
        ("LSTM", (size(), 0)),
        ("GRU", (0, size())),
        ("StackedRNN", (("rnn", "LSTM", "Elman", "transformer")[int(rng.integers(4))], int(rng.integers(1, 4)))),
        ("StackedRNN", ("lstm", 0)),
        ("BiRNN", ("LSTM", "Gru", "rnn")[int(rng.integers(3))]),
    ]:
        kind = "gru" if what == "GRU" else "lstm"
        I, J = size(), size()
        if what in ("LSTM", "GRU"):
            said, right = f"{what}{bad}", f"{what}({I}, {J})"
        elif what == "StackedRNN":
            layers = f"num_layers={bad[1]}" if bad[1] < 1 else bad[1]
            said = f"StackedRNN({bad[0]!r}, {I}, {J}, {layers})"
            right = f"StackedRNN('lstm', {I}, {J}, 2) with its layers' params assigned: forward(x)"
        else:
            said = f"BiRNN({bad!r}, {I}, {J})"
            right = f"BiRNN('lstm', {I}, {J}) with fwd's and bwd's params assigned: forward(x)"
        args = {"what": what, "bad": bad, "cell": kind, "I": I, "J": J}
        if what in ("StackedRNN", "BiRNN"):  # the answer beside is a forward pass: shapes alone need no work
            halves = [_cell_params(rng, kind, I, J) for _ in range(2)]
            args.update(layers=_layers(rng, kind, I, J, 2) if what == "StackedRNN" else halves)
            args.update(x=_normal(rng, int(rng.integers(1, 5)), I))
        cases.append(Case(f"{said} must raise ValueError (beside what {right} makes)", args))
    for bad in (0.0, -1.0):
        cases.append(
            Case(
                f"clip_grad_norm(grads, max_norm={bad}) must raise ValueError (beside clip_grad_norm(grads, 1.0))",
                {"what": "clip_grad_norm", "bad": bad, "grads": _grads(ctx.rng, {"a": (3,), "b": (2, 2)})},
            )
        )
    return cases


def _extremes(rng) -> np.ndarray:
    """-1e4, 0 and 1e4 among drawn entries of both signs and every size up to 1e4, in a drawn order."""
    drawn = rng.choice([-1.0, 1.0], 8) * 10 ** rng.uniform(1.0, 4.0, 8)
    return rng.permutation(np.concatenate([[-1e4, 0.0, 1e4], drawn]))


def sigmoid_cases(ctx: CaseContext) -> list[Case]:
    return [
        Case("sigmoid(x) with x of shape (3, 4)", {"x": _normal(ctx.rng, 3, 4, scale=3.0)}),
        Case("sigmoid(x) with entries from -1e4 to 1e4", {"x": _extremes(ctx.rng)}),
        Case("sigmoid(x) with x of shape (2, 3, 2)", {"x": _normal(ctx.rng, 2, 3, 2, scale=2.0)}),
    ]


FORWARD_MISTAKES = {
    "lstm": (
        M.GATE_ORDER,
        M.HX_ORDER,
        M.FORGET_BIAS_ZERO,
        M.CELL_ORDER,
        M.NO_TANH_C,
        M.H0_IGNORED,
        M.C0_IGNORED,
        M.CELL_ROWS_SHIFTED,
        M.HX_ORDER_AND_NO_TANH,
    ),
    "gru": (M.GRU_UPDATE_SWAPPED, M.GRU_RESET_AFTER, M.GRU_HX_ORDER),
}
BACKWARD_MISTAKES = {
    "lstm": (
        M.GATE_ORDER,
        M.HX_ORDER,
        M.NO_TANH_C,
        M.CELL_GRAD_NOT_CARRIED,
        M.CELL_GRAD_NO_FORGET,
        M.MISSING_TANH_PRIME,
        M.CELL_CARRY_DROPPED,
        M.TANH_PRIME_OF_C,
        M.C0_GRAD_NO_FORGET,
        M.GRADS_OVERWRITTEN,
        M.H0_IGNORED,
        M.C0_IGNORED,
        M.HX_ORDER_AND_NO_TANH,
        M.CELL_ORDER,
    ),
    "gru": (M.GRU_UPDATE_SWAPPED, M.GRU_HX_ORDER, M.GRU_RESET_TO_H_MISSING, M.GRU_RESET_AFTER),
}


# The cell's checks: what StackedRNN, BiRNN and the longer-sequence checks run the student's cells of.
CELL = ("lstm_forward", "lstm_backward", "gru_forward", "gru_backward")


def lstm_checks() -> list[Check]:
    quick = Limits(cpu_s=8, wall_s=15)
    slow = Limits(cpu_s=20, wall_s=30)
    checks = [
        Check(
            "sigmoid",
            "sigmoid: elementwise, no overflow warning at 1e4",
            scenarios.sigmoid,
            sigmoid_cases,
            tolerance=VALUES,
            mistakes=(M.SIGMOID_NAIVE, M.SIGMOID_TANH_WITHOUT_HALF),
            limits=quick,
            grades=("recurrent.sigmoid",),
        )
    ]
    for kind, name in NAMES.items():
        checks += [
            Check(
                f"{kind}_forward",
                f"{name}: its params as built, forward's states" + (" and self.cell" if kind == "lstm" else ""),
                scenarios.cell_forward,
                forward_cases(kind),
                tolerance=VALUES,
                holds=scenarios.cell_forward_judged,
                mistakes=FORWARD_MISTAKES[kind],
                limits=quick,
                # The cells call sigmoid: where only it is wrong, a cell is graded with the grader's.
                composes=("sigmoid",),
                grades=(f"recurrent.{name}",),
            ),
            Check(
                f"{kind}_backward",
                f"{name}.backward: BPTT, d x, every gradient and grad_h0" + (", grad_C0" if kind == "lstm" else ""),
                scenarios.cell_backward,
                backward_cases(kind),
                tolerance=GRADS,
                judge=judge_gradients,
                mistakes=BACKWARD_MISTAKES[kind],
                limits=quick,
                composes=("sigmoid",),
                grades=(f"recurrent.{name}",),
            ),
        ]
    return checks + [
        Check(
            "long_sequence",
            "gradients through 200 to 300 steps, forget gate near 1: the first step's still right",
            scenarios.long_sequence,
            long_sequence_cases,
            tolerance=GRADS,
            mistakes=(
                M.CELL_GRAD_NOT_CARRIED,
                M.CELL_GRAD_NO_FORGET,
                M.MISSING_TANH_PRIME,
                M.TANH_PRIME_OF_C,
                M.GRU_RESET_TO_H_MISSING,
            ),
            composes=CELL,
            limits=quick,
            grades=("recurrent.LSTM", "recurrent.GRU"),
        ),
        Check(
            "stacked",
            "StackedRNN: layers built and stacked, forward and backward through every layer",
            scenarios.stacked,
            stacked_cases,
            tolerance=GRADS,
            judge=judge_gradients,
            mistakes=(M.STACKED_ALL_LAYERS_READ_X, M.STACKED_BACKWARD_BOTTOM_UP),
            composes=CELL,
            limits=quick,
            grades=("recurrent.StackedRNN",),
            holds=scenarios.drawn_in_order_holds,
        ),
        Check(
            "birnn",
            "BiRNN: [h->_t ; h<-_t], forward and backward through both halves",
            scenarios.birnn,
            birnn_cases,
            tolerance=GRADS,
            judge=judge_gradients,
            mistakes=(M.BI_NOT_REVERSED, M.BI_GRAD_NOT_REVERSED, M.BI_STATES_NOT_REVERSED_BACK, M.BI_HALVES_SWAPPED),
            composes=CELL,
            limits=quick,
            grades=("recurrent.BiRNN",),
            holds=scenarios.drawn_in_order_holds,
        ),
        Check(
            "depth_direction",
            "which x each output row depends on: stacked x_1..x_t, bidirectional every x",
            scenarios.depth_direction,
            depth_direction_cases,
            tolerance=VALUES,
            judge=judge_dependence,
            property_check=True,
            holds=scenarios.depth_direction_holds,
            mistakes=(M.BI_NOT_REVERSED, M.BI_STATES_NOT_REVERSED_BACK, M.BI_HALVES_SWAPPED),
            composes=("stacked", "birnn"),
            limits=quick,
            grades=("recurrent.StackedRNN", "recurrent.BiRNN"),
        ),
        Check(
            "clip_grad_norm",
            "clip_grad_norm: one global norm, below, at and above max_norm; the norm returned; the input unchanged",
            scenarios.clip,
            clip_cases,
            tolerance=VALUES,
            mistakes=(M.CLIP_PER_ARRAY, M.CLIP_MUTATES, M.CLIP_PER_ENTRY, M.CLIP_EPSILON, M.CLIP_EPSILON_ABOVE),
            limits=quick,
            grades=("recurrent.clip_grad_norm",),
        ),
        Check(
            "lstmlm",
            "LSTMLM: its params as built, loss and every gradient, E's summed over repeated tokens",
            scenarios.lstmlm,
            lstmlm_cases,
            tolerance=GRADS,
            judge=judge_gradients,
            mistakes=(M.LOSS_MEAN, M.GRAD_E_NOT_ACCUMULATED, M.W_Y_GRAD_TRANSPOSED, M.LOG_OF_PROBS),
            composes=("stacked",),
            limits=quick,
            grades=("recurrent.LSTMLM",),
            holds=scenarios.lstmlm_judged,
        ),
        Check(
            "named_grads",
            "LSTMLM.named_grads: every gradient under its contract name",
            scenarios.named_grads,
            named_grads_cases,
            tolerance=VALUES,
            mistakes=(M.NAMED_GRADS_KEYS,),
            limits=quick,
            grades=("recurrent.LSTMLM",),
        ),
        Check(
            "step",
            "LSTMLM.step: on gradients the grader sets, p -= lr * g, clipped jointly when max_norm is given",
            scenarios.step,
            step_cases,
            tolerance=GRADS,
            mistakes=(M.CLIP_AFTER_STEP, M.STEP_RETURNS_CLIPPED_NORM, M.STEP_CLIPS_PER_MODULE, M.STEP_SKIPS_LAYERS),
            composes=("clip_grad_norm",),
            limits=quick,
            grades=("recurrent.LSTMLM",),
        ),
        # Epochs of SGD compound rounding differences a little: a looser tolerance than one step's.
        Check(
            "train",
            "train: the contract's loop (order, clipping, loss per token), then on a Markov-chain corpus",
            scenarios.train,
            train_cases,
            tolerance=Tolerance(rtol=1e-7, atol=1e-10),
            mistakes=(M.NO_SHUFFLE, M.TRAIN_DIV_LEN, M.TRAIN_DIV_SEQUENCES, M.TRAIN_FORGETS_MAX_NORM),
            composes=("lstmlm", "named_grads", "step"),
            limits=slow,
            grades=("recurrent.train",),
        ),
        Check(
            "no_mutation",
            "no method changes its array arguments",
            scenarios.no_mutation,
            no_mutation_cases,
            tolerance=GRADS,
            property_check=True,
            mistakes=(M.BACKWARD_MUTATES_GRAD_H,),
            limits=quick,
            composes=("lstm_forward", "lstm_backward", "gru_forward", "gru_backward", "birnn", "lstmlm"),
            # The code whose arguments must stay as they were: a stand-in may answer only for what it
            # calls (sigmoid).
            grades=("recurrent.LSTM", "recurrent.GRU", "recurrent.BiRNN", "recurrent.LSTMLM"),
        ),
        Check(
            "bad_arguments",
            "ValueError for sizes < 1, an unknown cell, num_layers < 1, max_norm <= 0",
            scenarios.bad_argument,
            bad_argument_cases,
            tolerance=VALUES,
            property_check=True,
            mistakes=(M.UNKNOWN_CELL_IS_LSTM,),
            limits=quick,
            composes=("sigmoid", "lstm_forward", "gru_forward", "stacked", "birnn", "clip_grad_norm"),
            grades=(
                "recurrent.LSTM",
                "recurrent.GRU",
                "recurrent.StackedRNN",
                "recurrent.BiRNN",
                "recurrent.LSTMLM",
                "recurrent.clip_grad_norm",
            ),
        ),
        Check(
            "bptt_hidden",
            "LSTM and GRU backward on longer sequences and larger sizes",
            scenarios.cell_backward,
            hidden_cases,
            tolerance=GRADS,
            judge=judge_gradients,
            visibility="after_due_date",
            composes=CELL,
            limits=quick,
            grades=("recurrent.LSTM", "recurrent.GRU"),
        ),
    ]
