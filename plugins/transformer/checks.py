"""The checks of the transformer assignment: their inputs, tolerances and mistakes.

Every weight is drawn here, keyed like the module's ``state_dict``, and loaded
into the module the stub's ``__init__`` builds, so the submission and the
reference compute with the same numbers. Sizes cover one head and
d_head = 1, T = 1 and T shorter than context_length; each numeric check has
float64 cases (tight tolerance: a mistake as small as eps outside the sqrt
shows) and a float32 case (the dtype most code runs in).
"""

from __future__ import annotations

import numpy as np

from lmgrade import Case, CaseContext, Check, Limits, Tolerance

from . import mistakes as M
from .corpus import sparse_markov
from .public import scenarios, speed, training
from .public.judges import judge_causality, judge_generate

# Any correct order of operations agrees far inside these; float32 keeps
# about 7 digits, and LayerNorm's gradient divides by a standard deviation.
FLOAT64 = Tolerance(rtol=1e-8, atol=1e-10)
FLOAT32 = Tolerance(rtol=2e-4, atol=2e-5)
TOLERANCE = {"float64": FLOAT64, "float32": FLOAT32}


def _normal(rng, *shape, scale=1.0) -> np.ndarray:
    return rng.standard_normal(shape) * scale


def _case(label: str, args: dict) -> Case:
    dtype = args.get("dtype", "float64")
    return Case(f"{label}, {dtype}", args, tolerance=TOLERANCE[dtype])


# --- weights, keyed like state_dict ---


def linear_state(rng, prefix: str, n_in: int, n_out: int, bias: bool = True, gain: float = 1.0) -> dict:
    state = {f"{prefix}weight": _normal(rng, n_out, n_in, scale=gain / np.sqrt(n_in))}
    if bias:
        state[f"{prefix}bias"] = _normal(rng, n_out, scale=0.2)
    return state


def layer_norm_state(rng, prefix: str, d: int) -> dict:
    return {f"{prefix}weight": 1.0 + _normal(rng, d, scale=0.3), f"{prefix}bias": _normal(rng, d, scale=0.3)}


def attention_state(rng, d: int, prefix: str = "") -> dict:
    # Larger query and key weights give peaked attention, where scaling mistakes show.
    return {
        **linear_state(rng, f"{prefix}q_proj.", d, d, gain=2.0),
        **linear_state(rng, f"{prefix}k_proj.", d, d, gain=2.0),
        **linear_state(rng, f"{prefix}v_proj.", d, d),
        **linear_state(rng, f"{prefix}out_proj.", d, d),
    }


def feed_forward_state(rng, d: int, d_ff: int, prefix: str = "") -> dict:
    return {**linear_state(rng, f"{prefix}fc1.", d, d_ff, gain=1.5), **linear_state(rng, f"{prefix}fc2.", d_ff, d)}


def block_state(rng, d: int, d_ff: int, prefix: str = "") -> dict:
    return {
        **layer_norm_state(rng, f"{prefix}ln1.", d),
        **attention_state(rng, d, f"{prefix}attn."),
        **layer_norm_state(rng, f"{prefix}ln2.", d),
        **feed_forward_state(rng, d, d_ff, f"{prefix}ffn."),
    }


def lm_state(rng, config: dict) -> dict:
    V, ctx, d = config["vocab_size"], config["context_length"], config["d_model"]
    state = {"tok_emb.weight": _normal(rng, V, d), "pos_emb.weight": _normal(rng, ctx, d)}
    for i in range(config["n_layers"]):
        state.update(block_state(rng, d, config["d_ff"], f"blocks.{i}."))
    if config["pre_ln"]:
        state.update(layer_norm_state(rng, "ln_f.", d))
    state.update(linear_state(rng, "lm_head.", d, V, bias=False))
    return state


def lm_config(V, ctx, d, L, h, d_ff, pre_ln) -> dict:
    return {
        "vocab_size": V,
        "context_length": ctx,
        "d_model": d,
        "n_layers": L,
        "n_heads": h,
        "d_ff": d_ff,
        "pre_ln": pre_ln,
    }


def _describe(c: dict) -> str:
    return (
        f"TransformerLM(vocab_size={c['vocab_size']}, context_length={c['context_length']}, "
        f"d_model={c['d_model']}, n_layers={c['n_layers']}, n_heads={c['n_heads']}, d_ff={c['d_ff']}, "
        f"pre_ln={c['pre_ln']})"
    )


def _lm_args(rng, config: dict, dtype: str = "float64") -> dict:
    return {"config": config, "state": lm_state(rng, config), "dtype": dtype}


# --- layers.py ---


# (shape, std, eps, dtype): the first three with the default eps, far below their variance.
LAYER_NORM_SIZES = [
    ((2, 3, 8), 2.0, None, "float64"),
    ((5, 4), 1.0, None, "float32"),
    ((2, 2, 3, 6), 3.0, None, "float64"),
    ((3, 5), 0.01, 1e-3, "float64"),
    ((4, 1), 1.0, None, "float64"),
]


def layer_norm_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for shape, scale, eps, dtype in LAYER_NORM_SIZES:
        rng = ctx.rng
        d = shape[-1]
        x = _normal(rng, *shape, scale=scale) + _normal(rng, *shape[:-1], 1)
        args = {"state": layer_norm_state(rng, "", d), "x": x, "g": _normal(rng, *shape), "eps": eps, "dtype": dtype}
        made = f"LayerNorm({d})" if eps is None else f"LayerNorm({d}, eps={eps})"
        cases.append(_case(f"{made} with weight and bias loaded; x of shape {shape} (std {scale})", args))
    return cases


# (B, T, d_model, n_heads, dtype): one head, d_head = 1, T = 1.
ATTENTION_SIZES = [
    (2, 5, 8, 2, "float64"),
    (1, 1, 4, 1, "float64"),
    (2, 4, 6, 6, "float64"),
    (3, 6, 12, 3, "float32"),
    (1, 7, 8, 1, "float64"),
]


def _attention_case(rng, B, T, d, h, dtype) -> Case:
    args = {
        "d_model": d,
        "n_heads": h,
        "state": attention_state(rng, d),
        "x": _normal(rng, B, T, d),
        "g": _normal(rng, B, T, d),
        "dtype": dtype,
    }
    return _case(
        f"CausalSelfAttention(d_model={d}, n_heads={h}) with its weights loaded; x of shape ({B}, {T}, {d})", args
    )


def attention_cases(ctx: CaseContext) -> list[Case]:
    return [_attention_case(ctx.rng, *size) for size in ATTENTION_SIZES]


def feed_forward_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for B, T, d, d_ff, dtype in [(2, 3, 4, 16, "float64"), (1, 5, 6, 6, "float32"), (3, 1, 1, 3, "float64")]:
        rng = ctx.rng
        args = {
            "d_model": d,
            "d_ff": d_ff,
            "state": feed_forward_state(rng, d, d_ff),
            "x": _normal(rng, B, T, d),
            "g": _normal(rng, B, T, d),
            "dtype": dtype,
        }
        cases.append(
            _case(f"FeedForward(d_model={d}, d_ff={d_ff}) with its weights loaded; x of shape ({B}, {T}, {d})", args)
        )
    return cases


def block_cases(ctx: CaseContext) -> list[Case]:
    pre_ln = ctx.variant["pre_ln"]
    cases = []
    for B, T, d, h, d_ff, dtype in [
        (2, 5, 8, 2, 16, "float64"),
        (1, 3, 4, 4, 8, "float64"),
        (2, 4, 6, 1, 12, "float32"),
    ]:
        rng = ctx.rng
        args = {
            "d_model": d,
            "n_heads": h,
            "d_ff": d_ff,
            "pre_ln": pre_ln,
            "state": block_state(rng, d, d_ff),
            "x": _normal(rng, B, T, d),
            "g": _normal(rng, B, T, d),
            "dtype": dtype,
        }
        cases.append(
            _case(
                f"TransformerBlock(d_model={d}, n_heads={h}, d_ff={d_ff}, pre_ln={pre_ln}) with its "
                f"weights loaded; x of shape ({B}, {T}, {d})",
                args,
            )
        )
    if pre_ln:  # the contract's default
        cases[1].args["defaults"] = True
        cases[1].label = cases[1].label.replace(", pre_ln=True)", ") (pre_ln left out, so True)")
    return cases


# --- model.py ---


def _model_cases(ctx: CaseContext, sizes) -> list[Case]:
    pre_ln = ctx.variant["pre_ln"]
    cases = []
    for V, context, d, L, h, d_ff, B, T, dtype in sizes:
        rng = ctx.rng
        config = lm_config(V, context, d, L, h, d_ff, pre_ln)
        args = {**_lm_args(rng, config, dtype), "idx": rng.integers(0, V, (B, T)), "g": _normal(rng, B, T, V)}
        cases.append(_case(f"{_describe(config)} with its weights loaded; idx of shape ({B}, {T})", args))
    return cases


def model_cases(ctx: CaseContext) -> list[Case]:
    # T shorter than context_length, equal to it, and 1; one head; d_head = 1.
    cases = _model_cases(
        ctx,
        [
            (11, 8, 8, 2, 2, 16, 2, 6, "float64"),
            (7, 4, 4, 1, 1, 8, 1, 4, "float64"),
            (13, 10, 12, 2, 3, 20, 3, 5, "float32"),
            (5, 6, 6, 1, 6, 12, 2, 1, "float64"),
        ],
    )
    if ctx.variant["pre_ln"]:  # the contract's default
        cases[1].args["config"]["defaults"] = True
        cases[1].label = cases[1].label.replace(", pre_ln=True)", ") (pre_ln left out, so True)")
    return cases


def model_hidden_cases(ctx: CaseContext) -> list[Case]:
    return _model_cases(ctx, [(50, 16, 32, 3, 4, 64, 3, 13, "float64"), (40, 12, 24, 2, 8, 48, 2, 12, "float32")])


def cross_entropy_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for shape, scale, dtype in [
        ((6, 5), 2.0, "float64"),
        ((2, 3, 7), 3.0, "float64"),
        ((4, 10), 1.0, "float32"),
        ((1, 2), 1.0, "float64"),
        ((3, 4), 1e4, "float64"),
        ((2, 6), 1e4, "float32"),
    ]:
        rng = ctx.rng
        args = {
            "logits": _normal(rng, *shape, scale=scale),
            "targets": rng.integers(0, shape[-1], shape[:-1]),
            "dtype": dtype,
        }
        size = "logits of about 1e4" if scale >= 1e3 else f"logits of std {scale:g}"
        cases.append(_case(f"cross_entropy({size}, shape {shape}; targets of shape {shape[:-1]})", args))
    return cases


# --- train.py ---


def get_batch_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    # N = T + 1 leaves one start only: a draw past the end shows at once.
    for N, V, B, T in [(50, 9, 4, 6), (9, 5, 3, 8), (30, 7, 1, 1), (200, 20, 8, 16)]:
        rng = ctx.rng
        args = {"data": rng.integers(0, V, N), "batch_size": B, "context_length": T, "seed": int(rng.integers(2**62))}
        cases.append(
            Case(
                f"get_batch(data of {N} tokens, batch_size={B}, context_length={T}, a seeded generator, 'cpu'), twice",
                args,
            )
        )
    return cases


def train_cases(ctx: CaseContext) -> list[Case]:
    pre_ln = ctx.variant["pre_ln"]
    cases = []
    for V, context, d, L, h, d_ff, N, steps, B, lr in [
        (7, 6, 8, 1, 2, 16, 60, 4, 3, 3e-3),
        (5, 4, 4, 2, 1, 8, 30, 3, 2, 1e-2),
        (6, 5, 4, 1, 2, 8, 40, 0, 2, 1e-2),
    ]:
        rng = ctx.rng
        config = lm_config(V, context, d, L, h, d_ff, pre_ln)
        args = {
            **_lm_args(rng, config),
            "data": rng.integers(0, V, N),
            "steps": steps,
            "batch_size": B,
            "lr": lr,
            "seed": int(rng.integers(2**62)),
            "idx": rng.integers(0, V, (1, context)),
        }
        cases.append(
            _case(
                f"{_describe(config)} with its weights loaded; train(model, data of {N} tokens, "
                f"steps={steps}, batch_size={B}, lr={lr:g}, device='cpu', a seeded generator)",
                args,
            )
        )
    return cases


def perplexity_cases(ctx: CaseContext) -> list[Case]:
    pre_ln = ctx.variant["pre_ln"]
    cases = []
    # 20 tokens predict 19: windows of 8 leave a last one of 3; of 19, exactly one; of 1, each alone;
    # 2 tokens predict one.
    for V, context, d, h, N, window in [
        (9, 8, 8, 2, 20, 8),
        (6, 20, 4, 1, 20, 19),
        (5, 4, 4, 2, 7, 1),
        (7, 6, 6, 3, 30, 4),
        (5, 4, 4, 2, 2, 4),
    ]:
        rng = ctx.rng
        config = lm_config(V, context, d, 1, h, 2 * d, pre_ln)
        args = {**_lm_args(rng, config), "data": rng.integers(0, V, N), "context_length": window}
        cases.append(
            _case(
                f"{_describe(config)} with its weights loaded; evaluate_perplexity(model, data of {N} "
                f"tokens, context_length={window}, 'cpu')",
                args,
            )
        )
    return cases


GENERATE_DRAWS = 300  # the chi-square test's power against the catalogue's samplers: benchmarks/sampling_power.py


def generate_cases(ctx: CaseContext) -> list[Case]:
    pre_ln = ctx.variant["pre_ln"]
    cases = []
    # Prompts that fill the context make the later steps crop; temperatures sharpen and flatten.
    # temperature None is left out of the call (the default, 1.0).
    for V, context, prompt_len, new, temperature in [(4, 4, 3, 3, None), (3, 3, 3, 3, 0.5), (4, 6, 1, 2, 2.0)]:
        rng = ctx.rng
        config = lm_config(V, context, 4, 1, 2, 8, pre_ln)
        args = {
            **_lm_args(rng, config),
            "prompt": [int(t) for t in rng.integers(0, V, prompt_len)],
            "max_new_tokens": new,
            "temperature": temperature,
            "draws": GENERATE_DRAWS,
            "repeat": 30,
            "seed": int(rng.integers(2**62)),
        }
        args["state"]["lm_head.weight"] *= 2.0  # distinct next-token distributions
        cases.append(
            Case(
                f"{_describe(config)} with its weights loaded; {GENERATE_DRAWS} draws of generate(model, "
                f"idx={[args['prompt']]}, max_new_tokens={new}, "
                f"{'temperature left out' if temperature is None else f'temperature={temperature}'}, "
                f"generator), and with max_new_tokens=0",
                args,
            )
        )
    return cases


# --- properties ---


def causality_cases(ctx: CaseContext) -> list[Case]:
    pre_ln = ctx.variant["pre_ln"]
    cases = []
    for V, context, d, L, h, B, T in [(9, 8, 8, 2, 2, 2, 8), (6, 5, 4, 1, 1, 1, 5), (8, 6, 6, 1, 3, 2, 6)]:
        rng = ctx.rng
        config = lm_config(V, context, d, L, h, 2 * d, pre_ln)
        idx = rng.integers(0, V, (B, T))
        # For each position q >= 1, another token there, in every row of the batch.
        changes = [((idx[:, q] + 1 + rng.integers(0, V - 1, B)) % V).tolist() for q in range(1, T)]
        args = {**_lm_args(rng, config), "idx": idx, "changes": changes}
        cases.append(
            _case(
                f"{_describe(config)}: the token at each position q changed alone, the logits at "
                f"positions before q must not change, and those at q must",
                args,
            )
        )
    return cases


def attention_rows_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for B, T, d, h, dtype in [(2, 5, 8, 2, "float64"), (1, 4, 6, 3, "float64")]:
        case = _attention_case(ctx.rng, B, T, d, h, dtype)
        case.args["c"] = _normal(ctx.rng, d)
        case.label = (
            f"{case.label.split(';')[0]}; with v_proj giving one vector c everywhere and out_proj the "
            f"identity, every output must be c (weights summing to 1), {dtype}"
        )
        cases.append(case)
    return cases


def layer_norm_stats_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for case, (_, std, _, _) in zip(layer_norm_cases(ctx)[:3], LAYER_NORM_SIZES):
        # Every vector's own spread set to the case's std: a correct LayerNorm's variance is then 1 up to
        # eps / var <= 1e-5, far inside the property's 1e-4 in float32 too, whatever the draw (a vector of
        # four features drawn with a tiny spread would make the reference itself miss it).
        x = np.asarray(case.args["x"])
        mean = x.mean(axis=-1, keepdims=True)
        case.args["x"] = mean + (x - mean) / (x - mean).std(axis=-1, keepdims=True) * std
        case.label = (
            case.label.replace(" with weight and bias loaded", "")
            + "; with weight 1 and bias 0, every output must have mean 0 and variance 1"
        )
        cases.append(case)
    return cases


def ce_stable_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for shape, dtype in [((5, 7), "float64"), ((2, 3, 11), "float32")]:
        rng = ctx.rng
        huge = _normal(rng, *shape, scale=1e4)
        args = {
            "logits": _normal(rng, *shape, scale=2.0),
            "huge_logits": huge,
            "targets": rng.integers(0, shape[-1], shape[:-1]),
            "level": float(rng.uniform(-5, 5)),
            "dtype": dtype,
        }
        cases.append(
            _case(
                f"cross_entropy on logits of shape {shape}: finite at logits of about 1e4, ln "
                f"{shape[-1]} for uniform logits",
                args,
            )
        )
    return cases


def _indivisible(rng) -> tuple[int, int]:
    """(d_model, n_heads) with n_heads not dividing d_model."""
    while True:
        d, h = int(rng.integers(5, 40)), int(rng.integers(2, 9))
        if d % h:
            return d, h


def bad_argument_cases(ctx: CaseContext) -> list[Case]:
    pre_ln = ctx.variant["pre_ln"]
    attn = _attention_case(ctx.rng, 2, 3, 8, 2, "float64")
    # A d_model that n_heads does not divide, drawn.
    bad_d, bad_h = _indivisible(ctx.rng)
    attn.args.update(what="CausalSelfAttention", bad_d_model=bad_d, bad_n_heads=bad_h)
    attn.label = f"CausalSelfAttention(d_model={bad_d}, n_heads={bad_h}) must raise ValueError, float64"
    config = lm_config(7, 4, 4, 1, 2, 8, pre_ln)
    rng = ctx.rng
    lm = _case(
        f"{_describe(config)}: forward(idx of shape (2, 5)), longer than context_length, must raise ValueError",
        {
            **_lm_args(rng, config),
            "what": "TransformerLM",
            "idx": rng.integers(0, 7, (2, 4)),
            "too_long": rng.integers(0, 7, (2, 5)),
        },
    )
    return [attn, lm]


ATTENTION_MISTAKES = (
    M.SCALE_D_MODEL,
    M.NO_SCALING,
    M.MASK_OFF_BY_ONE,
    M.MASK_AFTER_SOFTMAX,
    M.SOFTMAX_OVER_QUERIES,
    M.HEAD_LAYOUT,
    M.HEADS_MERGED_WITHOUT_TRANSPOSE,
    M.OUT_PROJ_MISSING,
    M.HEADS_SPLIT_WITHOUT_TRANSPOSE,
    M.MASK_HIDES_DIAGONAL,
    M.NO_CAUSAL_MASK,
    M.MASK_FILLS_ZERO,
    M.MASK_TRIL,
)
LAYER_NORM_MISTAKES = (M.UNBIASED_VARIANCE, M.EPS_OUTSIDE_SQRT, M.LAYER_NORM_OVER_BATCH, M.WEIGHT_BIAS_SWAPPED)
MODEL_MISTAKES = (
    M.POSITIONS_OFFSET,
    M.NO_POSITION_EMBEDDING,
    M.HEAD_TIED_TO_EMBEDDING,
    M.LN_F_MISSING,
    M.PRE_POST_SWAPPED,
    M.RESIDUAL_MISSING,
    *ATTENTION_MISTAKES,
    *LAYER_NORM_MISTAKES,
    M.GELU_TANH,
    M.FFN_RELU,
    M.EMBEDDING_SCALED,
    M.WEIGHTS_TIED,
)


def transformer_checks() -> list[Check]:
    # Each check's reference run takes well under a second here (generate and training a few): these limits
    # leave slow but correct code ample room, and add up to what Gradescope's default timeout grades whole.
    quick = Limits(cpu_s=8, wall_s=16)
    slow = Limits(cpu_s=30, wall_s=40, wall_factor=10.0)
    L, Mo, T = ("layers.py",), ("layers.py", "model.py"), ("layers.py", "model.py", "train.py")
    # What each scenario runs, for the forbidden APIs found in the source.
    LM, CE = ("model.TransformerLM",), ("model.cross_entropy",)
    return [
        Check(
            "layer_norm",
            "LayerNorm: output and gradients; population variance, eps inside the sqrt",
            scenarios.layer_norm,
            layer_norm_cases,
            files=L,
            tolerance=FLOAT64,
            mistakes=LAYER_NORM_MISTAKES,
            uses=("layers.LayerNorm",),
            limits=quick,
            grades=("layers.LayerNorm",),
        ),
        Check(
            "attention",
            "CausalSelfAttention: output and gradients; 1 head, d_head = 1, T = 1",
            scenarios.attention,
            attention_cases,
            files=L,
            tolerance=FLOAT64,
            mistakes=ATTENTION_MISTAKES,
            uses=("layers.CausalSelfAttention",),
            limits=quick,
            grades=("layers.CausalSelfAttention",),
        ),
        Check(
            "feed_forward",
            "FeedForward: fc2(gelu(fc1(x))) with the exact GELU, and its gradients",
            scenarios.feed_forward,
            feed_forward_cases,
            files=L,
            tolerance=FLOAT64,
            mistakes=(M.GELU_TANH, M.FFN_RELU),
            uses=("layers.FeedForward",),
            limits=quick,
            grades=("layers.FeedForward",),
        ),
        Check(
            "block",
            "TransformerBlock: residuals and LayerNorms in the graded order, output and gradients",
            scenarios.block,
            block_cases,
            files=L,
            tolerance=FLOAT64,
            mistakes=(
                M.PRE_POST_SWAPPED,
                M.RESIDUAL_MISSING,
                *ATTENTION_MISTAKES,
                *LAYER_NORM_MISTAKES,
                M.GELU_TANH,
                M.FFN_RELU,
            ),
            uses=("layers.TransformerBlock",),
            composes=("layer_norm", "attention", "feed_forward"),
            limits=quick,
            grades=("layers.TransformerBlock",),
        ),
        Check(
            "model",
            "TransformerLM: logits and gradients of every parameter; T < context_length",
            scenarios.model,
            model_cases,
            files=Mo,
            tolerance=FLOAT64,
            mistakes=MODEL_MISTAKES,
            uses=LM,
            composes=("block",),
            limits=quick,
            grades=("model.TransformerLM",),
        ),
        Check(
            "cross_entropy",
            "cross_entropy: the mean over positions, stable at 1e4, and its gradient",
            scenarios.cross_entropy,
            cross_entropy_cases,
            files=Mo,
            tolerance=FLOAT64,
            mistakes=(M.CE_SUMMED, M.CE_UNSTABLE, M.CE_LOG_OF_SOFTMAX),
            uses=CE,
            limits=quick,
            grades=("model.cross_entropy",),
        ),
        Check(
            "get_batch",
            "get_batch: the contract's draw from the generator, targets shifted by one",
            scenarios.get_batch,
            get_batch_cases,
            files=T,
            tolerance=FLOAT64,
            mistakes=(M.BATCH_TARGET_UNSHIFTED, M.BATCH_START_PAST_END, M.BATCH_GLOBAL_RNG),
            uses=("train.get_batch",),
            limits=quick,
            grades=("train.get_batch",),
        ),
        # A few AdamW steps compound rounding differences: a looser float64 tolerance than one pass.
        Check(
            "train",
            "train: AdamW on get_batch batches, the loss of every step as the reference's",
            scenarios.train,
            train_cases,
            files=T,
            tolerance=Tolerance(rtol=1e-6, atol=1e-8),
            mistakes=(M.TRAIN_SGD, M.TRAIN_NO_ZERO_GRAD),
            uses=("train.train", *LM),
            composes=("model", "cross_entropy", "get_batch"),
            limits=slow,
            grades=("train.train",),
        ),
        Check(
            "evaluate_perplexity",
            "evaluate_perplexity: consecutive windows, the last one shorter",
            scenarios.evaluate_perplexity,
            perplexity_cases,
            files=T,
            tolerance=FLOAT64,
            mistakes=(M.PERPLEXITY_NO_EXP, M.PERPLEXITY_MEAN_OF_WINDOWS, M.PERPLEXITY_DROPS_LAST_WINDOW),
            uses=("train.evaluate_perplexity", *LM),
            composes=("model", "cross_entropy"),
            limits=quick,
            grades=("train.evaluate_perplexity",),
        ),
        Check(
            "generate",
            "generate: draws follow the model, crop to context_length, temperature, the generator",
            scenarios.generate,
            generate_cases,
            files=T,
            judge=judge_generate,
            mistakes=M.GENERATE_MISTAKES,
            uses=("train.generate", *LM),
            composes=("model",),
            limits=slow,
            grades=("train.generate",),
        ),
        Check(
            "causality",
            "no position sees the future: later tokens leave earlier logits unchanged",
            scenarios.causality,
            causality_cases,
            files=Mo,
            tolerance=FLOAT64,
            property_check=True,
            judge=judge_causality,
            uses=LM,
            composes=("model",),
            limits=quick,
        ),
        Check(
            "attention_rows",
            "attention weights sum to 1 over the keys of every query",
            scenarios.attention_rows,
            attention_rows_cases,
            files=L,
            tolerance=FLOAT64,
            property_check=True,
            holds=scenarios.attention_rows_holds,
            uses=("layers.CausalSelfAttention",),
            limits=quick,
            composes=("attention",),
        ),
        Check(
            "layer_norm_stats",
            "LayerNorm before its affine part: mean 0, variance 1",
            scenarios.layer_norm_stats,
            layer_norm_stats_cases,
            files=L,
            tolerance=FLOAT64,
            property_check=True,
            holds=scenarios.layer_norm_stats_holds,
            uses=("layers.LayerNorm",),
            limits=quick,
            composes=("layer_norm",),
        ),
        Check(
            "ce_stable",
            "cross_entropy: finite at logits of 1e4, ln V on uniform logits",
            scenarios.ce_stable,
            ce_stable_cases,
            files=Mo,
            tolerance=FLOAT64,
            property_check=True,
            holds=scenarios.ce_stable_holds,
            uses=CE,
            limits=quick,
            composes=("cross_entropy",),
        ),
        Check(
            "bad_arguments",
            "ValueError for n_heads not dividing d_model, and for T > context_length",
            scenarios.bad_argument,
            bad_argument_cases,
            files=Mo,
            tolerance=FLOAT64,
            property_check=True,
            uses=("layers.CausalSelfAttention", *LM),
            composes=("attention", "model"),
            limits=quick,
        ),
        Check(
            "model_hidden",
            "TransformerLM at larger sizes",
            scenarios.model,
            model_hidden_cases,
            files=Mo,
            tolerance=FLOAT64,
            mistakes=MODEL_MISTAKES,
            visibility="after_due_date",
            uses=LM,
            composes=("block",),
            limits=quick,
            grades=("model.TransformerLM",),
        ),
        Check(
            "training",
            "training on a Markov chain: the loss falls to the reference's, no future-token leak",
            training.training,
            training_cases,
            judge=training.judge_training,
            uses=("train.train", "train.evaluate_perplexity", *LM, *CE),
            composes=("train", "evaluate_perplexity"),
            limits=Limits(cpu_s=30, wall_s=45, wall_factor=10.0),
            # What it judges: the two functions' run together, so that a failed model runs here with the
            # grader's stand-in beneath the student's training loop (a leak of the attention is the attention's).
            grades=("train.train", "train.evaluate_perplexity"),
        ),
        # Timing: the fingerprints are float32 sums over many entries, in any order of operations.
        Check(
            "attention_speed",
            "CausalSelfAttention forward and backward, timed against the reference",
            speed.attention_timed,
            attention_speed_cases,
            files=L,
            tolerance=Tolerance(rtol=1e-3, atol=1e-3),
            timing=speed.ATTENTION,
            uses=("layers.CausalSelfAttention",),
            composes=("attention",),
            limits=Limits(cpu_s=8, wall_s=12),
        ),
        Check(
            "train_step_speed",
            "one training step of a small TransformerLM, timed against the reference",
            speed.train_step_timed,
            train_step_speed_cases,
            tolerance=Tolerance(rtol=1e-3, atol=1e-3),
            timing=speed.TRAIN_STEP,
            uses=(*LM, *CE),
            composes=("model", "cross_entropy"),
            limits=Limits(cpu_s=10, wall_s=15),
        ),
    ]


# --- training on a corpus with a known entropy rate ---


def training_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    corpus, model = training.CORPUS, training.MODEL
    source = sparse_markov(rng, corpus["vocab_size"], corpus["order"], corpus["successors"])
    config = {"vocab_size": corpus["vocab_size"], **model, "pre_ln": ctx.variant["pre_ln"]}
    args = {
        "config": config,
        "state": lm_state(rng, config),
        "dtype": "float32",
        "data": source.sample(20_000, rng),
        "held_out": source.sample(4_000, rng),
        "entropy_rate": source.entropy_rate(),
        "steps": training.STEPS,
        "batch_size": training.BATCH,
        "lr": training.LR,
        "seed": int(rng.integers(2**62)),
        "device": ctx.device,
    }
    label = (
        f"train a TransformerLM(vocab_size=12, context_length=16, d_model=32, n_layers=2, n_heads=4, d_ff=64) "
        f"for {args['steps']} steps (batch_size={args['batch_size']}, lr={args['lr']:g}, device='{ctx.device}') "
        f"on 20000 tokens of a "
        f"Markov chain of order 2 with entropy rate {args['entropy_rate']:.3f} nats per token; "
        f"then evaluate_perplexity on 4000 held-out tokens"
    )
    return [Case(label, args)]


# --- timing: sizes where a Python loop over positions shows, and a call takes milliseconds ---

SPEED_SIZES = {
    "cpu": {"B": 2, "T": 256, "d_model": 64, "n_heads": 4},
    "cuda": {"B": 16, "T": 512, "d_model": 256, "n_heads": 8},
}
STEP_SIZES = {
    "cpu": {"B": 4, "V": 64, "context": 128, "d": 64, "L": 2, "h": 4, "d_ff": 256},
    "cuda": {"B": 32, "V": 512, "context": 256, "d": 256, "L": 4, "h": 8, "d_ff": 1024},
}


def attention_speed_cases(ctx: CaseContext) -> list[Case]:
    size = SPEED_SIZES[ctx.device]
    args = {**size, "state": attention_state(ctx.rng, size["d_model"]), "dtype": "float32", "device": ctx.device}
    return [
        Case(
            f"CausalSelfAttention({size['d_model']}, {size['n_heads']}) forward and backward on x of shape "
            f"({size['B']}, {size['T']}, {size['d_model']}), float32, {ctx.device}",
            args,
        )
    ]


def train_step_speed_cases(ctx: CaseContext) -> list[Case]:
    s = STEP_SIZES[ctx.device]
    config = lm_config(s["V"], s["context"], s["d"], s["L"], s["h"], s["d_ff"], ctx.variant["pre_ln"])
    args = {**_lm_args(ctx.rng, config, "float32"), "B": s["B"], "lr": 1e-3, "device": ctx.device}
    return [
        Case(
            f"{_describe(config)}: forward, cross_entropy, backward and an AdamW step on a batch of "
            f"{s['B']} x {s['context']} tokens, float32, {ctx.device}",
            args,
        )
    ]
