"""The transformer's `positions` variant: learned embeddings, a sinusoidal table, or RoPE.

`--set positions=learned|sinusoidal|rope` chooses how the model the checks
build knows where a token is (spec/student-api.md, "Variant `positions`").
This module holds what the variant adds, beside the checks of checks.py:

- `threaded`: the checks that build a TransformerLM or a TransformerBlock
  build it in the variant (positions="sinusoidal" or "rope"; a block with
  rope=True), and name the variant's mistakes. In the default variant they
  are left exactly as they are, so a submission written before the variant
  existed is graded as before.
- `position_checks`: the variant's own checks. `sinusoidal`: the table in
  pos_enc and that it is a buffer outside state_dict. `rope`: the attention
  with rope=True, output and gradients, at T = 1, with odd and even numbers
  of heads, in float32 and float64. `rope_relative`: the score of query t
  and key s depends on t - s only, measured by shifting a sequence, judged
  in the grading process from the attention weights the call returned, and
  paid where it holds beside a right answer, as every property check's.
- Their mistakes, made as edits of the reference (so this module holds
  the reference's lines: it stays in the grading process); the sandbox's
  side, scenarios and judge, is position_scenarios.py.

The model-level checks are given the exact sinusoidal table in the
student's own pos_enc (`supply_table`): the table is data that the
`sinusoidal` check grades on its own, and a table built in float32 in
__init__ (the contract leaves its dtype free) must not fail a float64 model.
A rope model that still makes the learned pos_emb (the contract's has none)
is given the learned variant's drawn weights there, so that its answers are
the same each run and the mistake can be named.
"""

from __future__ import annotations

import functools
import re
from dataclasses import replace

from lmgrade import Case, CaseContext, Check, Limits, Mistake, Tolerance

from .public.position_scenarios import (
    LEARNED,
    LEARNED_POS_EMB,
    ROPE,
    SINUSOIDAL,
    judge_rope_relative,
    rope_relative,
    sinusoidal,
)

L, M = "layers.py", "model.py"

# The checks of checks.py whose cases build a whole TransformerLM (args["config"]), and those that build a block.
LM_CHECKS = (
    "model",
    "model_hidden",
    "train",
    "evaluate_perplexity",
    "generate",
    "causality",
    "bad_arguments",
    "training",
    "train_step_speed",
)
BLOCK_CHECKS = ("block",)


def positions_of(variant: dict) -> str:
    return variant.get("positions", LEARNED)


# --- the reference's lines, and the mistakes made by editing them ---

ROTATE_QK = "q, k = rotate(torch.stack((q, k))).unbind(0)"
ANGLE = "angle = t[:, None] * 10000.0 ** (-i / d_head)  # (T, d_head / 2)"
FEATURE_INDEX = "i = torch.arange(0, d_head, 2, dtype=x.dtype, device=x.device)  # 2i, (d_head / 2,)"
SHAPES = "B, T, _ = x.shape"
ROPE_BLOCK = """        if self.rope:
            # Queries and keys only: the score of t and s then depends on t - s
            # alone; the values carry content, not position.
            q, k = rotate(torch.stack((q, k))).unbind(0)  # both at once: (2, B, n_heads, T, d_head)
"""
HEADS = ".view(B, T, self.n_heads, self.d_head).transpose(1, 2)  # (B, n_heads, T, d_head)"
PAIRS = "even, odd = x[..., 0::2], x[..., 1::2]  # (..., T, d_head / 2) each"
TURNED = "turned = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)  # (..., T, d_head / 2, 2)"
PAIRS_BACK = "return turned.flatten(-2)  # pairs back side by side: (..., T, d_head)"
TABLE_T = "t = torch.arange(context_length, dtype=torch.float64)[:, None]  # (context_length, 1)"
TABLE_SIN = "table[:, 0::2] = torch.sin(angle)"
TABLE_COS = "table[:, 1::2] = torch.cos(angle)"
BUFFER = 'self.register_buffer("pos_enc", sinusoidal_table(context_length, d_model), persistent=False)'
TABLE_INDEX = "i = torch.arange(0, d_model, 2, dtype=torch.float64)  # 2i, (d_model / 2,)"
TABLE_ANGLE = "angle = t / 10000.0 ** (i / d_model)  # (context_length, d_model / 2)"
MAKES_POS_EMB = 'if positions == "learned":'
ADDS_POS_EMB = 'if self.positions == "learned":'

ROPE_ROTATE_HALF = Mistake(
    "rope_rotate_half",
    'RoPE turns the pairs (i, i + d_head/2), the "rotate half" layout some libraries use; '
    "the contract pairs adjacent features, (2i, 2i + 1), as the RoFormer paper does",
    edits=(
        (L, PAIRS, "even, odd = x[..., :d_head // 2], x[..., d_head // 2:]"),
        (L, TURNED, "turned = torch.cat((even * cos - odd * sin, even * sin + odd * cos), dim=-1)"),
        (L, PAIRS_BACK, "return turned"),
    ),
)

ROPE_ROTATES_V = Mistake(
    "rope_rotates_v",
    "RoPE also rotates the values v: only the queries and keys are rotated (the values carry content, not position)",
    edits=((L, ROTATE_QK, "q, k, v = rotate(torch.stack((q, k, v))).unbind(0)"),),
)

ROPE_ANGLE_D_MODEL = Mistake(
    "rope_angle_d_model",
    "the RoPE angles use d_model where the contract has d_head: "
    "theta = t * 10000^(-2i / d_head), with d_head the size of one head",
    edits=((L, ANGLE, "angle = t[:, None] * 10000.0 ** (-i / (x.shape[-3] * d_head))"),),
)

ROPE_TURNS_BACKWARD = Mistake(
    "rope_turns_backward",
    "RoPE turns each pair the other way, (x[2i] cos + x[2i+1] sin, -x[2i] sin + x[2i+1] cos), by -theta: "
    "the contract turns it by +theta, (x[2i] cos - x[2i+1] sin, x[2i] sin + x[2i+1] cos)",
    edits=((L, TURNED, "turned = torch.stack((even * cos + odd * sin, -even * sin + odd * cos), dim=-1)"),),
)

ROPE_BEFORE_PROJECTIONS = Mistake(
    "rope_before_projections",
    "RoPE turns the input x (pairs of its d_model features, angles with d_model) before the "
    "projections, so q_proj, k_proj and v_proj all read the turned x: the contract turns q and k, "
    "each head's d_head features, after the projections, and leaves v alone",
    edits=(
        (L, SHAPES, f"{SHAPES}\n        if self.rope:\n            x = rotate(x)  # (B, T, d_model)"),
        (L, ROPE_BLOCK, ""),
    ),
)

ROPE_ANGLE_PAIR_INDEX = Mistake(
    "rope_angle_pair_index",
    "the RoPE angles are t * 10000^(-i / d_head) with i the pair's index: the contract's exponent is "
    "-2i / d_head, the pair's first feature index 2i over d_head",
    edits=((L, FEATURE_INDEX, "i = torch.arange(d_head // 2, dtype=x.dtype, device=x.device)  # (d_head / 2,)"),),
)

# rotate() applied before the heads are moved next to the batch reads the head index as the position: q and k
# of one head turn by the same angle at every t, and (R q) . (R k) = q . k, so the scores are exactly those
# without RoPE. The explanation says what such code does, whichever way it came to do it.
ROPE_NOT_BY_POSITION = Mistake(
    "rope_not_by_position",
    "q and k are not turned by their position t: the scores are those of attention without RoPE (as when "
    "rope is ignored, or when rotate runs on (B, T, n_heads, d_head) before the transpose, so that its "
    "angle counts heads and turns q and k of one head alike at every t); the contract turns q and k at "
    "position t by t * 10000^(-2i / d_head), after the heads are split",
    edits=(
        (L, f"q = self.q_proj(x){HEADS}", "q = self.q_proj(x).view(B, T, self.n_heads, self.d_head)"),
        (L, f"k = self.k_proj(x){HEADS}", "k = self.k_proj(x).view(B, T, self.n_heads, self.d_head)"),
        (
            L,
            f"{ROTATE_QK}  # both at once: (2, B, n_heads, T, d_head)",
            f"{ROTATE_QK}  # (2, B, T, n_heads, d_head)\n        q, k = q.transpose(1, 2), k.transpose(1, 2)",
        ),
    ),
)

ROPE_KEEPS_POS_EMB = Mistake(
    "rope_keeps_pos_emb",
    "the model with positions='rope' still makes the learned pos_emb and adds it to the token embeddings: "
    "with RoPE nothing is added to them (no pos_emb), the positions enter only as the turns of q and k",
    edits=(
        (M, MAKES_POS_EMB, 'if positions != "sinusoidal":'),
        (M, ADDS_POS_EMB, 'if self.positions != "sinusoidal":'),
    ),
)

SIN_COS_SWAPPED = Mistake(
    "sin_cos_swapped",
    "sin and cos are swapped in the table: pos_enc[t, 2i] = sin(t / 10000^(2i / d_model)) "
    "and pos_enc[t, 2i + 1] = cos of the same angle",
    edits=((M, TABLE_SIN, "table[:, 0::2] = torch.cos(angle)"), (M, TABLE_COS, "table[:, 1::2] = torch.sin(angle)")),
)

TABLE_FROM_ONE = Mistake(
    "table_from_one",
    "the table's positions start at 1: row t of pos_enc is position t, 0-based, so row 0 is sin 0 = 0 and cos 0 = 1",
    edits=((M, TABLE_T, "t = torch.arange(1, context_length + 1, dtype=torch.float64)[:, None]"),),
)

TABLE_HALVES = Mistake(
    "table_halves",
    "the table holds sin in its first d_model/2 columns and cos in the last d_model/2 ([sin | cos], as in "
    "some libraries): the contract interleaves them, sin in column 2i and cos of the same angle in 2i + 1",
    edits=(
        (M, TABLE_SIN, "table[:, : d_model // 2] = torch.sin(angle)"),
        (M, TABLE_COS, "table[:, d_model // 2 :] = torch.cos(angle)"),
    ),
)

TABLE_PAIR_INDEX = Mistake(
    "table_pair_index",
    "the table's frequencies are 1 / 10000^(i / d_model) with i the pair's index: the contract's exponent "
    "is 2i / d_model, the column 2i of the pair's sin over d_model",
    edits=((M, TABLE_INDEX, "i = torch.arange(d_model // 2, dtype=torch.float64)  # (d_model / 2,)"),),
)

TABLE_T2T_TIMESCALE = Mistake(
    "table_t2t_timescale",
    "the table's frequencies step by log(10000) / (d_model/2 - 1), tensor2tensor's timescale increment, so "
    "the last pair's is exactly 1/10000: the contract's step is log(10000) / (d_model/2), "
    "frequencies 1 / 10000^(2i / d_model)",
    edits=((M, TABLE_ANGLE, "angle = t / 10000.0 ** ((i / 2) / max(d_model // 2 - 1, 1))  # tensor2tensor"),),
)

EMBEDDINGS_SCALED = Mistake(
    "token_embeddings_scaled",
    "the token embeddings are multiplied by sqrt(d_model) before the table is added (as in Vaswani et al.); "
    "the contract adds pos_enc[:T] to tok_emb(idx) as it is",
    edits=((M, "x = self.tok_emb(idx)  # (B, T, d_model)", "x = self.tok_emb(idx) * self.tok_emb.embedding_dim**0.5"),),
)

TABLE_PARAMETER = Mistake(
    "table_parameter",
    "pos_enc is registered as a parameter (nn.Parameter), so AdamW would train it: the "
    "contract asks for a buffer, register_buffer('pos_enc', table, persistent=False)",
    edits=((M, BUFFER, "self.pos_enc = nn.Parameter(sinusoidal_table(context_length, d_model))"),),
)
ROPE_Q_ONLY = Mistake(
    "rope_q_only",
    "RoPE rotates the queries only: the keys must be rotated by the same angles, so that the score of query t "
    "and key s depends on t - s alone, not on where the tokens are",
    edits=((L, ROTATE_QK, "q = rotate(q)"),),
)


# RoPE's positions starting at 1 is no mistake: q and k turn by one more step alike, and their scores depend
# on t - s only. The same for RoPE after the scaling by 1/sqrt(d_head): a rotation commutes with a scale.
ROPE_MISTAKES = (
    ROPE_ROTATE_HALF,
    ROPE_ROTATES_V,
    ROPE_Q_ONLY,
    ROPE_ANGLE_D_MODEL,
    ROPE_TURNS_BACKWARD,
    ROPE_BEFORE_PROJECTIONS,
    ROPE_ANGLE_PAIR_INDEX,
    ROPE_NOT_BY_POSITION,
)
# A model's own mistakes in the rope variant: the checks that build a whole TransformerLM name them.
ROPE_MODEL_MISTAKES = (ROPE_KEEPS_POS_EMB,)
SINUSOIDAL_MODEL_MISTAKES = (EMBEDDINGS_SCALED,)
TABLE_MISTAKES = (SIN_COS_SWAPPED, TABLE_FROM_ONE, TABLE_PARAMETER, TABLE_HALVES, TABLE_PAIR_INDEX, TABLE_T2T_TIMESCALE)


# --- the checks of checks.py, in the variant ---


def threaded(checks: list[Check], variant: dict) -> list[Check]:
    """`checks` as the variant builds them: TransformerLM(..., positions=...) and TransformerBlock(..., rope=True)."""
    positions = positions_of(variant)
    if positions == LEARNED:
        return checks
    out = []
    for check in checks:
        if check.name in LM_CHECKS or check.name in BLOCK_CHECKS:
            # A model's numbers follow its attention's: RoPE's mistakes show there. The table is supplied (above).
            extra = ROPE_MISTAKES if positions == ROPE and check.mistakes else ()
            if positions == ROPE and check.mistakes and check.name in LM_CHECKS:
                extra = (*extra, *ROPE_MODEL_MISTAKES)
            if positions == SINUSOIDAL and check.mistakes and check.name in LM_CHECKS:
                extra = (*extra, *SINUSOIDAL_MODEL_MISTAKES)
            # They run the student's RoPE attention: where `rope` fails, their stand-in runs replace it.
            # The sinusoidal table is supplied to them, so they do not compose `sinusoidal`.
            composes = ("rope",) if positions == ROPE else ()
            check = replace(
                check,
                make_cases=functools.partial(_in_variant, check.make_cases, positions),
                mistakes=(*check.mistakes, *extra),
                composes=(*check.composes, *composes),
            )
        if check.name == "bad_arguments":
            check = replace(check, make_cases=functools.partial(_with_odd_sizes, check.make_cases))
        out.append(check)
    return out


def _in_variant(make_cases, positions: str, ctx: CaseContext) -> list[Case]:
    cases = make_cases(ctx)
    for case in cases:
        args = case.args
        if "config" in args:
            config = args["config"]
            config["positions"] = positions
            learned = args["state"].pop("pos_emb.weight", None)
            if positions == ROPE and learned is not None:
                # Kept aside for a pos_emb the model should not have: its effect is then the same each run.
                config[LEARNED_POS_EMB] = learned
            if positions == ROPE:
                config["n_heads"] = _rope_heads(config["d_model"], config["n_heads"], case, "TransformerLM")
            case.label = re.sub(r"(TransformerLM\([^()]*)\)", rf"\1, positions='{positions}')", case.label)
            if args.get("dtype") == "float32":
                case.tolerance = POSITIONS_FLOAT32
        elif "pre_ln" in args and positions == ROPE:
            args["rope"] = True
            args["n_heads"] = _rope_heads(args["d_model"], args["n_heads"], case, "TransformerBlock")
            case.label = re.sub(r"(TransformerBlock\([^()]*)\)", r"\1, rope=True)", case.label)
    return cases


def _rope_heads(d_model: int, n_heads: int, case: Case, made: str) -> int:
    """The most heads up to n_heads whose size is even: RoPE turns a head's features in pairs."""
    h = n_heads
    while h > 1 and (d_model % h or (d_model // h) % 2):
        h -= 1
    if h != n_heads:
        case.label = re.sub(rf"({made}\([^()]*n_heads=){n_heads}\b", rf"\g<1>{h}", case.label)
    return h


def _with_odd_sizes(make_cases, ctx: CaseContext) -> list[Case]:
    return make_cases(ctx) + odd_size_cases(ctx)


# --- the sinusoidal table ---

TABLE_TOLERANCE = Tolerance(rtol=0.0, atol=2e-5)  # a table built in float32, angles up to ~60 radians
# The table adds unit-sized features where learned embeddings are small, and RoPE turns q and k by sin and
# cos of angles up to T radians: float32 logits and gradients of a correct model in another order of
# operations differ from the reference's by a few 1e-5 in both variants (float64 stays exact).
POSITIONS_FLOAT32 = Tolerance(rtol=2e-4, atol=1e-4)


def _sinusoidal_sizes(rng) -> list[tuple[int, int, int, int]]:
    """(vocab_size, context_length, d_model, n_heads), drawn: d_model = 2 (one pair), a few pairs, and
    contexts of 30 to 72 positions, where an angle off at a low frequency shows."""

    def heads(d: int) -> int:
        return int(rng.choice([h for h in range(1, d + 1) if d % h == 0 and h <= 4]))

    def size(low: int, high: int) -> int:
        return int(rng.integers(low, high))

    d_few, d_many, d_long = 2 * size(2, 7), 2 * size(4, 8), 2 * size(2, 6)
    return [
        (size(4, 40), size(3, 40), 2, 1),
        (size(5, 40), size(6, 17), d_few, heads(d_few)),
        (size(5, 40), size(30, 49), d_many, heads(d_many)),
        (size(5, 40), size(56, 73), d_long, heads(d_long)),
    ]


def sinusoidal_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for V, context, d, h in _sinusoidal_sizes(ctx.rng):
        config = {
            "vocab_size": V,
            "context_length": context,
            "d_model": d,
            "n_layers": 1,
            "n_heads": h,
            "d_ff": 2 * d,
            "pre_ln": ctx.variant.get("pre_ln", True),
        }
        made = (
            f"TransformerLM(vocab_size={V}, context_length={context}, d_model={d}, n_layers=1, "
            f"n_heads={h}, d_ff={2 * d}, pre_ln={config['pre_ln']}, positions='sinusoidal')"
        )
        cases.append(Case(f"{made}: the values of pos_enc", {"config": config, "ask": "values"}))
    # How it is registered, a case of its own: a bookkeeping detail costs a case, not every value's.
    cases.append(
        Case(
            cases[0].label.replace(": the values of pos_enc", ": how pos_enc is registered"),
            {"config": cases[0].args["config"], "ask": "registration"},
        )
    )
    return cases


# --- RoPE: the attention's numbers ---

# (B, T, d_model, n_heads, dtype): T = 1; one, two, three and four heads; d_head = 2; float32.
ROPE_SIZES = [
    (2, 5, 8, 2, "float64"),
    (1, 1, 4, 1, "float64"),
    (2, 6, 12, 3, "float64"),
    (3, 7, 16, 2, "float32"),
    (1, 9, 8, 4, "float64"),
    (2, 12, 24, 3, "float64"),
]


def rope_cases(ctx: CaseContext) -> list[Case]:
    from .checks import _attention_case

    cases = []
    for size in ROPE_SIZES:
        case = _attention_case(ctx.rng, *size)
        case.args["rope"] = True
        case.label = case.label.replace(f"n_heads={size[3]})", f"n_heads={size[3]}, rope=True)")
        cases.append(case)
    return cases


# --- RoPE: the relative-position property ---


def rope_relative_cases(ctx: CaseContext) -> list[Case]:
    from .checks import TOLERANCE, attention_state

    cases = []
    # (B, T, shift, content features, d_model, n_heads, dtype): one, two and three heads.
    for B, T, shift, content, d, h, dtype in [
        (2, 5, 4, 6, 16, 1, "float64"),
        (1, 6, 7, 12, 32, 2, "float64"),
        (2, 4, 3, 10, 24, 3, "float64"),
        (1, 5, 9, 8, 32, 2, "float32"),
    ]:
        rng = ctx.rng
        args = {
            "d_model": d,
            "n_heads": h,
            "dtype": dtype,
            "content": content,
            "rows": shift + T,
            "shift": shift,
            "state": attention_state(rng, d),
            "x": rng.standard_normal((B, T, content)),
            "before": rng.standard_normal((B, shift, content)),
        }
        # Milder queries and keys than the numeric checks': every weight stays far from underflow.
        for proj in ("q_proj", "k_proj"):
            args["state"][f"{proj}.weight"] *= 0.5
        cases.append(
            Case(
                f"CausalSelfAttention(d_model={d}, n_heads={h}, rope=True), v_proj and out_proj set so "
                f"that the output is the attention weights: {T} tokens alone, and the same {T} after "
                f"{shift} others, {dtype}",
                args,
                tolerance=TOLERANCE[dtype],
            )
        )
    return cases


# --- ValueError for sizes the variant cannot pair ---


def odd_size_cases(ctx: CaseContext) -> list[Case]:
    """bad_arguments' cases of the variant: an odd d_model (sinusoidal) or d_head (rope) raises ValueError."""
    from .checks import _attention_case, _lm_args, lm_config

    positions = positions_of(ctx.variant)
    rng = ctx.rng
    if positions == ROPE:
        case = _attention_case(rng, 2, 4, 8, 2, "float64")
        # n_heads heads of an odd size, drawn.
        heads, d_head = int(rng.integers(1, 5)), 2 * int(rng.integers(0, 5)) + 1
        d = heads * d_head
        case.args.update(what="odd size", rope=True, bad_d_model=d, bad_n_heads=heads)
        case.label = (
            f"CausalSelfAttention(d_model={d}, n_heads={heads}, rope=True), d_head = {d_head} odd, "
            "must raise ValueError"
        )
        return [case]
    if positions == SINUSOIDAL:
        config = {**lm_config(7, 4, 4, 1, 2, 8, ctx.variant.get("pre_ln", True)), "positions": SINUSOIDAL}
        args = {
            **_lm_args(ctx.rng, config),
            "what": "odd size",
            "idx": ctx.rng.integers(0, 7, (2, 4)),
            "bad_d_model": 2 * int(rng.integers(1, 8)) + 1,  # odd, drawn
        }
        args["state"].pop("pos_emb.weight")
        return [
            Case(
                f"TransformerLM(vocab_size=7, context_length=4, d_model={args['bad_d_model']}, n_layers=1, "
                "n_heads=1, d_ff=8, positions='sinusoidal'), d_model odd, must raise ValueError, float64",
                args,
                tolerance=Tolerance(rtol=1e-8, atol=1e-10),
            )
        ]
    return []


# --- the variant's own checks ---


def position_checks(variant: dict) -> list[Check]:
    from .checks import ATTENTION_MISTAKES, FLOAT64
    from .public import scenarios

    quick = Limits(cpu_s=8, wall_s=16)
    positions = positions_of(variant)
    if positions == SINUSOIDAL:
        return [
            Check(
                "sinusoidal",
                "the sinusoidal table: pos_enc's values, a buffer outside state_dict",
                sinusoidal,
                sinusoidal_cases,
                files=(L, M),
                tolerance=TABLE_TOLERANCE,
                mistakes=TABLE_MISTAKES,
                uses=("model.TransformerLM",),
                limits=quick,
            )
        ]
    if positions == ROPE:
        uses = ("layers.CausalSelfAttention",)
        return [
            Check(
                "rope",
                "RoPE in the attention: q and k rotated in adjacent pairs, v not; T = 1, odd and even "
                "heads, float32 and float64",
                scenarios.attention,
                rope_cases,
                files=(L,),
                tolerance=FLOAT64,
                mistakes=(*ROPE_MISTAKES, *ATTENTION_MISTAKES),
                uses=uses,
                limits=quick,
                # RoPE lives in the attention: where it is wrong, the checks running it stand the grader's in.
                grades=("layers.CausalSelfAttention",),
            ),
            Check(
                "rope_relative",
                "RoPE's scores depend on t - s only: the same tokens shifted later",
                rope_relative,
                rope_relative_cases,
                files=(L,),
                tolerance=FLOAT64,
                property_check=True,
                judge=judge_rope_relative,
                uses=uses,
                limits=quick,
            ),
        ]
    return []
