"""The checks of the rnn assignment: their inputs, tolerances and mistakes.

Every parameter is drawn here and assigned into ``params`` by the scenario,
so the submission and the reference compute with the same numbers. Sizes
cover T = 1 and longer sequences, J = 1 and larger, h0 given and left out.
"""

from __future__ import annotations

import numpy as np

from lmgrade import Case, CaseContext, Check, Limits, Tolerance, markov_sequences

from . import mistakes as M
from .public import scenarios
from .public.judges import judge_gradients, judge_sample

# The modules checks import modules.py alone: a broken elman.py costs them nothing.
MODULES = ("modules.py",)
# Float64 throughout: any correct order of operations agrees far inside
# these, and a detour through float32 (relative error near 6e-8) does not.
VALUES = Tolerance(rtol=1e-9, atol=1e-12)
GRADS = Tolerance(rtol=1e-8, atol=1e-11)


def _normal(rng, *shape, scale=1.0) -> np.ndarray:
    return rng.standard_normal(shape) * scale


def _elman_params(rng, I, J, K, scale=0.8, bias=0.3) -> dict[str, np.ndarray]:
    return {
        "W_ah": _normal(rng, J, J, scale=scale),
        "W_ax": _normal(rng, J, I, scale=scale),
        "b_a": _normal(rng, J, scale=bias),
        "W_yh": _normal(rng, K, J, scale=scale),
        "b_y": _normal(rng, K, scale=bias),
    }


def _lm_params(rng, V, D, J, scale=0.8, bias=0.3) -> dict[str, np.ndarray]:
    return {"E": _normal(rng, V, D), **_elman_params(rng, D, J, V, scale, bias)}


# --- modules.py ---


def linear_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for N, n_in, n_out, call in [(3, 4, 2, False), (1, 1, 1, False), (5, 3, 3, True)]:
        rng = ctx.rng
        args = {
            "module": "Linear",
            "W": _normal(rng, n_out, n_in),
            "b": _normal(rng, n_out),
            "x": _normal(rng, N, n_in),
            "g": _normal(rng, N, n_out),
            "call": call,
        }
        how = "lin(x)" if call else "lin.forward(x)"
        cases.append(
            Case(
                f"Linear({n_in}, {n_out}) with W, b assigned; {how} with x of shape ({N}, {n_in}), then backward(g)",
                args,
            )
        )
    return cases


def _extremes(rng) -> np.ndarray:
    """One row: -1e4, 0 and 1e4, and -0.5 and 0.5 (a sign test off by a little, x >= -1, shows near 0), among
    drawn entries of both signs up to 1e4, in a drawn order."""
    drawn = rng.choice([-1.0, 1.0], 6) * 10 ** rng.uniform(0.5, 4.0, 6)
    return rng.permutation(np.concatenate([[-1e4, -0.5, 0.0, 0.5, 1e4], drawn]))[None, :]


def activation_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for kind in ("Sigmoid", "Tanh"):
        for x, what in [
            (_normal(ctx.rng, 3, 4, scale=3.0), "x of shape (3, 4)"),
            (_extremes(ctx.rng), "x with entries from -1e4 to 1e4, and +-0.5"),
            (_normal(ctx.rng, 5, scale=2.0), "a 1-D x of 5 entries"),
        ]:
            cases.append(
                Case(
                    f"{kind}: forward({what}), then backward(g)",
                    {"module": kind, "x": x, "g": _normal(ctx.rng, *x.shape)},
                )
            )
    return cases


def _large_rows(rng) -> np.ndarray:
    """A row of 1e4, a drawn entry near 0 and -1e4; a row of three entries near 1e4, 1 apart; each in a drawn order."""
    top = float(rng.uniform(9e3, 1e4))
    return np.array(
        [rng.permutation([1e4, float(rng.uniform(-10.0, 10.0)), -1e4]), rng.permutation([top, top - 1, top - 2])]
    )


def softmax_cases(ctx: CaseContext) -> list[Case]:
    inputs = [
        (_normal(ctx.rng, 4, 5, scale=3.0), "x of shape (4, 5)"),
        (_large_rows(ctx.rng), "rows with entries up to 1e4"),
        (_normal(ctx.rng, 1, 6), "one row of 6"),
        (_normal(ctx.rng, 3, 1), "3 rows of one entry"),
    ]
    cases = [
        Case(
            f"Softmax: forward({what}), then backward(g)",
            {"module": "Softmax", "x": x, "g": _normal(ctx.rng, *x.shape)},
        )
        for x, what in inputs
    ]
    # Rows of one entry have the answers of no work at all (1, and a zero gradient): asked beside rows of
    # three, so that the case is earned by a softmax only.
    x = _normal(ctx.rng, 2, 3)
    cases[-1].args["beside"] = {"x": x, "g": _normal(ctx.rng, *x.shape)}
    cases[-1].label = "Softmax: forward(3 rows of one entry), then backward(g); and the same on x of shape (2, 3)"
    return cases


def _probs(rng, N, K):
    z = _normal(rng, N, K, scale=2.0)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def cross_entropy_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for N, K, g in [(4, 5, None), (6, 3, 2.5), (1, 4, None), (3, 7, 0.5)]:
        probs, targets = _probs(ctx.rng, N, K), ctx.rng.integers(0, K, N)
        call = "backward()" if g is None else f"backward({g})"
        cases.append(
            Case(
                f"CrossEntropy: forward(probs of shape ({N}, {K}), {N} targets), then {call}",
                {"probs": probs, "targets": targets, "g": g},
            )
        )
    return cases


# --- elman.py ---


def _elman_case(ctx, T, I, J, K, with_h0, activation):
    rng = ctx.rng
    args = {
        "params": _elman_params(rng, I, J, K),
        "x": _normal(rng, T, I),
        "targets": rng.integers(0, K, T),
        "h0": _normal(rng, J, scale=0.5) if with_h0 else None,
        "activation": activation,
    }
    h0 = "h0 given" if with_h0 else "h0 left out"
    label = (
        f"ElmanRNN(input_size={I}, hidden_size={J}, output_size={K}, activation={activation!r}) "
        f"with its params assigned; T = {T}, {h0}"
    )
    return Case(label, args)


ELMAN_SIZES = [(1, 2, 3, 4, False), (5, 3, 1, 2, True), (4, 2, 4, 3, True), (6, 1, 2, 5, False)]
ACTIVATIONS = ("sigmoid", "tanh")


def emphasis(ctx: CaseContext, count: int) -> list[str]:
    """The activation of each of `count` cases: the variant's, and the other one in the last case.

    Both activations are part of the contract in every course: the variant
    chooses the default and what most cases use, never what goes unchecked.
    """
    chosen = ctx.variant["activation"]
    other = next(a for a in ACTIVATIONS if a != chosen)
    return [chosen] * (count - 1) + [other]


def elman_cases(ctx: CaseContext) -> list[Case]:
    return [_elman_case(ctx, *size, act) for size, act in zip(ELMAN_SIZES, emphasis(ctx, len(ELMAN_SIZES)))]


def elman_forward_cases(ctx: CaseContext) -> list[Case]:
    cases = elman_cases(ctx)
    built = _elman_case(ctx, 3, 4, 2, 3, False, "sigmoid")
    built.args["defaults"] = True
    built.label = (
        "ElmanRNN(4, 2, 3), activation and rng left out (so 'sigmoid'), with its params assigned; T = 3, h0 left out"
    )
    confident = _elman_case(ctx, 2, 3, 2, 3, True, ctx.variant["activation"])
    confident.args["params"]["b_y"] = np.array([1000.0, 0.0, -1000.0])
    confident.label += "; b_y = [1000, 0, -1000], so y_t is one-hot to machine precision"
    return cases + [built, confident]


def bptt_hidden_cases(ctx: CaseContext) -> list[Case]:
    sizes = [(12, 4, 6, 5, True), (9, 3, 5, 6, False)]
    return [_elman_case(ctx, *size, act) for size, act in zip(sizes, emphasis(ctx, len(sizes)))]


def _lm_case(ctx, V, D, J, T, activation, **extra):
    rng = ctx.rng
    tokens = rng.integers(0, V, T + 1)
    tokens[T // 2] = tokens[0]  # a repeated token: its row of E gets the sum of its gradients
    args = {"params": _lm_params(rng, V, D, J), "tokens": tokens, "activation": activation, **extra}
    return Case(
        f"RNNLM(vocab_size={V}, embed_dim={D}, hidden_size={J}, activation={activation!r}) with its "
        f"params assigned; loss(tokens={tokens.tolist()})",
        args,
    )


def rnnlm_cases(ctx: CaseContext) -> list[Case]:
    act = emphasis(ctx, 3)
    built = _lm_case(ctx, 4, 3, 2, 5, "sigmoid", defaults=True)
    built.label = built.label.replace("activation='sigmoid'", "activation and rng left out (so 'sigmoid')")
    return [
        _lm_case(ctx, 5, 3, 4, 7, act[0]),
        _lm_case(ctx, 3, 2, 1, 1, act[1]),
        _lm_case(ctx, 6, 4, 3, 10, act[2]),
        built,
    ]


def sgd_cases(ctx: CaseContext) -> list[Case]:
    act = ctx.variant["activation"]
    cases = [_lm_case(ctx, 4, 3, 3, 5, act, lr=0.1), _lm_case(ctx, 5, 2, 2, 4, act, lr=0.5)]
    for case in cases:
        # The gradients are the grader's, set into grads: a wrong backward costs sgd_step nothing.
        case.args["grads"] = {k: _normal(ctx.rng, *v.shape) for k, v in sorted(case.args["params"].items())}
        case.label += f", backward(), then every grads[k] replaced by a given array, sgd_step(lr={case.args['lr']})"
    return cases


DRAWS = 500  # the chi-square tests' power against the catalogue's samplers: benchmarks/sampling_power.py


MODE_MAX = 0.5  # the most mass a sampling case's model puts on one sample


def _likeliest_sample(params: dict, activation: str, start: int, max_len: int, end: int | None) -> float:
    """The probability of the likeliest sample of an RNNLM with `params`, by the contract's equations:
    h_t = act(W_ah h_{t-1} + W_ax E[x_t] + b_a) from h_0 = 0, p(. | x_<=t) = softmax(W_yh h_t + b_y)."""
    E, W_ah, W_ax, b_a, W_yh, b_y = (params[k] for k in ("E", "W_ah", "W_ax", "b_a", "W_yh", "b_y"))

    def act(a):
        return np.tanh(a) if activation == "tanh" else 1.0 / (1.0 + np.exp(-a))

    def best(h, token, length) -> float:  # the likeliest way on from `token`, `length` tokens drawn so far
        h = act(W_ah @ h + W_ax @ E[token] + b_a)  # (J,)
        z = W_yh @ h + b_y  # (V,)
        p = np.exp(z - z.max())
        p /= p.sum()
        if length + 1 == max_len:
            return float(p.max())
        return max(float(p[v]) * (1.0 if v == end else best(h, v, length + 1)) for v in range(len(p)))

    return best(np.zeros(W_ah.shape[0]), start, 0)


def sample_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    # Large biases make every parameter move the distribution far beyond
    # what the draws can miss; start 0 and end V - 1 are the edges of the ids.
    sizes = [(3, 2, 3, 3, 1, None), (4, 2, 2, 3, 0, 3), (3, 3, 2, 1, 2, None), (4, 3, 2, 4, 3, 0)]
    for (V, D, J, max_len, start, end), act in zip(sizes, emphasis(ctx, len(sizes))):
        rng = ctx.rng
        # A model that all but always draws one sample cannot tell a sampler from a constant: redrawn
        # until no sample has more than MODE_MAX of the mass.
        for _ in range(1000):
            params = _lm_params(rng, V, D, J, scale=1.5, bias=1.5)
            if _likeliest_sample(params, act, start, max_len, end) <= MODE_MAX:
                break
        args = {
            "params": params,
            "activation": act,
            "start": start,
            "max_len": max_len,
            "end": end,
            "draws": DRAWS,
            "repeat": 50,
            "seed": int(rng.integers(2**62)),
        }
        stop = "" if end is None else f", end={end}"
        cases.append(
            Case(
                f"RNNLM(vocab_size={V}, embed_dim={D}, hidden_size={J}, activation={act!r}) with its "
                f"params assigned; {DRAWS} draws of sample(rng, start={args['start']}, max_len={max_len}{stop})",
                args,
            )
        )
    return cases


def train_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    # One sequence alone, and no epochs at all (an empty list), are edges of the loop; zero epochs
    # is asked beside two, so that returning [] alone earns nothing.
    for V, count, epochs, lr in [(5, 6, (4,), 0.1), (4, 4, (3,), 0.3), (3, 1, (3,), 0.2), (4, 3, (0, 2), 0.1)]:
        rng = ctx.rng
        args = {
            "params": _lm_params(rng, V, 2, 3, scale=0.5),
            "sequences": markov_sequences(rng, V, count),
            "epochs": list(epochs),
            "lr": lr,
            "seed": int(rng.integers(2**62)),
        }
        calls = " and ".join(f"epochs={e}" for e in epochs)
        cases.append(
            Case(
                f"train(model, {count} sequences from a Markov chain, {calls}, lr={lr}, rng) on an "
                "RNNLM whose loss, backward and sgd_step are the grader's (they record the calls): "
                "the order of the steps and each epoch's loss per predicted token",
                args,
            )
        )
    return cases


# --- properties ---


def repeatable_cases(ctx: CaseContext) -> list[Case]:
    rnn = _elman_case(ctx, 4, 2, 3, 3, False, ctx.variant["activation"])
    rnn.args["what"] = "ElmanRNN"
    cases = [Case(f"{rnn.label}: loss, then backward() twice", rnn.args)]
    for case in (linear_cases(ctx)[0], softmax_cases(ctx)[0], activation_cases(ctx)[0]):
        cases.append(
            Case(
                f"{case.label.split(':')[0].split(' with')[0]}: forward, then backward(g) twice",
                {**case.args, "what": case.args["module"]},
            )
        )
    return cases


def no_mutation_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for case in (linear_cases(ctx)[0], softmax_cases(ctx)[0], activation_cases(ctx)[3]):
        cases.append(
            Case(
                f"{case.args['module']}.forward(x), backward(g) must leave x and g unchanged",
                {**case.args, "what": case.args["module"]},
            )
        )
    rnn = _elman_case(ctx, 4, 2, 3, 3, True, ctx.variant["activation"])
    cases.append(
        Case(
            "ElmanRNN.loss(x, targets, h0), backward() must leave x, targets and h0 unchanged",
            {**rnn.args, "what": "ElmanRNN.loss"},
        )
    )
    lm = _lm_case(ctx, 4, 2, 3, 6, ctx.variant["activation"])
    cases.append(Case("RNNLM.loss(tokens), backward() must leave tokens unchanged", {**lm.args, "what": "RNNLM.loss"}))
    return cases


def bad_argument_cases(ctx: CaseContext) -> list[Case]:
    act = ctx.variant["activation"]
    cases = []
    for what, bad in [("ElmanRNN", "relu"), ("ElmanRNN", ""), ("ElmanRNN", "Sigmoid"), ("RNNLM", "tanh ")]:
        right = _elman_case(ctx, 3, 2, 3, 2, False, act) if what == "ElmanRNN" else _lm_case(ctx, 4, 2, 3, 4, act)
        cases.append(
            Case(f"{what}(..., activation={bad!r}) must raise ValueError", {**right.args, "what": what, "bad": bad})
        )
    return cases


BACKWARD_MISTAKES = (
    M.BPTT_NO_CARRY,
    M.GRADS_OVERWRITTEN,
    M.DERIVATIVE_AT_PREACTIVATION,
    M.TRANSPOSED_W_AH,
    M.LOSS_MEAN,
    M.H0_IGNORED,
    M.GRAD_H0_WITHOUT_W_AH,
    M.SIGMOID_WITH_TANH_DERIVATIVE,
)


def rnn_checks() -> list[Check]:
    quick = Limits(cpu_s=8, wall_s=15)
    slow = Limits(cpu_s=30, wall_s=45)
    return [
        Check(
            "linear",
            "Linear: forward, backward, parameter gradients",
            scenarios.module,
            linear_cases,
            files=MODULES,
            tolerance=GRADS,
            judge=judge_gradients,
            holds=scenarios.module_holds,
            mistakes=(M.TRANSPOSED_LINEAR,),
            limits=quick,
            grades=("modules.Linear",),
        ),
        Check(
            "activations",
            "Sigmoid and Tanh: forward and backward, no overflow at 1e4",
            scenarios.module,
            activation_cases,
            files=MODULES,
            tolerance=GRADS,
            judge=judge_gradients,
            mistakes=(M.TANH_BACKWARD_FROM_INPUT, M.SIGMOID_NAIVE),
            limits=quick,
            grades=("modules.Sigmoid", "modules.Tanh"),
        ),
        Check(
            "softmax",
            "Softmax: row-wise, stable at 1e4, and its backward",
            scenarios.module,
            softmax_cases,
            files=MODULES,
            tolerance=GRADS,
            judge=judge_gradients,
            mistakes=(M.SOFTMAX_AXIS, M.SOFTMAX_NO_SHIFT),
            limits=quick,
            grades=("modules.Softmax",),
        ),
        Check(
            "cross_entropy",
            "CrossEntropy: a sum over rows, and its backward",
            scenarios.cross_entropy,
            cross_entropy_cases,
            files=MODULES,
            tolerance=GRADS,
            judge=judge_gradients,
            mistakes=(M.CE_MEAN, M.CE_EPS_IN_LOG, M.CE_LOGITS_GRADIENT),
            limits=quick,
            grades=("modules.CrossEntropy",),
        ),
        Check(
            "elman_forward",
            "ElmanRNN: its params, forward's outputs and self.hidden",
            scenarios.elman_forward,
            elman_forward_cases,
            tolerance=VALUES,
            mistakes=(M.H0_IGNORED, M.ELMAN_SOFTMAX_AXIS),
            limits=quick,
            grades=("elman.ElmanRNN.forward",),
        ),
        Check(
            "elman_loss",
            "ElmanRNN.loss: summed cross-entropy over time",
            scenarios.elman_loss,
            elman_cases,
            tolerance=VALUES,
            mistakes=(M.H0_IGNORED, M.LOSS_MEAN, M.ELMAN_SOFTMAX_AXIS),
            composes=("elman_forward",),
            limits=quick,
            grades=("elman.ElmanRNN.loss",),
        ),
        Check(
            "elman_backward",
            "ElmanRNN.backward: BPTT, every gradient and grad_h0",
            scenarios.elman_backward,
            elman_cases,
            tolerance=GRADS,
            judge=judge_gradients,
            mistakes=BACKWARD_MISTAKES,
            composes=("elman_loss",),
            limits=quick,
            grades=("elman.ElmanRNN.backward",),
        ),
        Check(
            "rnnlm",
            "RNNLM: its params, loss and gradients, E's summed over repeated tokens",
            scenarios.rnnlm,
            rnnlm_cases,
            tolerance=GRADS,
            judge=judge_gradients,
            mistakes=(
                M.BPTT_NO_CARRY,
                M.GRADS_OVERWRITTEN,
                M.DERIVATIVE_AT_PREACTIVATION,
                M.LOSS_MEAN,
                M.EMBEDDING_GRAD_NOT_ACCUMULATED,
                M.SIGMOID_WITH_TANH_DERIVATIVE,
            ),
            composes=("elman_forward", "elman_loss", "elman_backward"),
            limits=quick,
            grades=("elman.RNNLM",),
        ),
        Check(
            "sgd_step",
            "RNNLM.sgd_step: p -= lr * grad for every parameter",
            scenarios.sgd_step,
            sgd_cases,
            tolerance=GRADS,
            mistakes=(M.SGD_ASCENDS, M.SGD_ADAGRAD),
            limits=quick,
            grades=("elman.RNNLM.sgd_step",),
            stands_in=False,
        ),
        Check(
            "sample",
            "RNNLM.sample: draws follow y_t, use only rng, stop at end or max_len",
            scenarios.sample,
            sample_cases,
            judge=judge_sample,
            mistakes=M.SAMPLER,
            composes=("rnnlm",),
            limits=slow,
            grades=("elman.RNNLM.sample",),
        ),
        # On a model whose loss, backward and sgd_step are the grader's: train's own bookkeeping only.
        Check(
            "train",
            "train: rng.permutation order, loss, backward, sgd_step, the loss per predicted token",
            scenarios.train,
            train_cases,
            tolerance=VALUES,
            mistakes=(M.TRAIN_IN_GIVEN_ORDER,),
            limits=quick,
            grades=("elman.train",),
        ),
        Check(
            "repeatable_backward",
            "backward twice after one forward gives the same gradients",
            scenarios.repeatable_backward,
            repeatable_cases,
            tolerance=GRADS,
            property_check=True,
            holds=scenarios.repeatable_holds,
            mistakes=(M.GRADS_ACCUMULATE, M.SIGMOID_WITH_TANH_DERIVATIVE),
            composes=("linear", "activations", "softmax", "elman_backward"),
            limits=quick,
        ),
        Check(
            "no_mutation",
            "no method changes its array arguments",
            scenarios.no_mutation,
            no_mutation_cases,
            tolerance=GRADS,
            property_check=True,
            mistakes=(M.SOFTMAX_SHIFTS_IN_PLACE,),
            composes=("linear", "activations", "softmax", "elman_loss", "rnnlm"),
            limits=quick,
        ),
        Check(
            "bad_arguments",
            "ValueError for an activation other than 'sigmoid' and 'tanh'",
            scenarios.bad_argument,
            bad_argument_cases,
            tolerance=VALUES,
            property_check=True,
            mistakes=(M.UNKNOWN_ACTIVATION_IS_SIGMOID,),
            composes=("elman_forward", "rnnlm"),
            limits=quick,
        ),
        Check(
            "bptt_hidden",
            "BPTT on longer sequences and larger sizes",
            scenarios.elman_backward,
            bptt_hidden_cases,
            tolerance=GRADS,
            judge=judge_gradients,
            mistakes=BACKWARD_MISTAKES,
            visibility="after_due_date",
            composes=("elman_loss",),
            limits=quick,
            grades=("elman.ElmanRNN.backward",),
        ),
    ]
