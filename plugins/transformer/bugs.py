"""The catalogue of realistic transformer bugs: one each, as edits of the reference.

`loses` names the checks that must lose points and words their feedback must
contain (the known mistake named, where the grader knows it). Tests prove the
graders with every bug; the demo grades a submission with the `demo` ones.
The bugs that are known mistakes make the very edits of `mistakes.py`.
"""

from __future__ import annotations

from lmgrade import Bug, Mistake

from . import mistakes as M
from . import positions as P
from .mistakes import CAUSAL, MASK, STARTS

LAYERS, MODEL, TRAIN = "layers.py", "model.py", "train.py"

GELU = 'F.gelu(self.fc1(x), approximate="none")'
TEMPERATURE = "logits = model(idx_cond)[:, -1, :] / temperature  # (1, V)"
SCORES = "att = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (B, n_heads, T, T)"
WEIGHTED = "y = att @ v  # (B, n_heads, T, d_head)"
# Right values, one query at a time: T small steps forward and T more backward.
QUERY_LOOP = """rows = []
        for t in range(T):
            s_t = q[:, :, t:t + 1] @ k[:, :, :t + 1].transpose(-2, -1) / math.sqrt(self.d_head)
            rows.append(torch.softmax(s_t, dim=-1) @ v[:, :, :t + 1])
        y = torch.cat(rows, dim=2)  # (B, n_heads, T, d_head)"""
SOFTMAX = "att = torch.softmax(att, dim=-1)  # over the keys"
LOOP_EDITS = ((SCORES, QUERY_LOOP), (CAUSAL, ""), (MASK, ""), (SOFTMAX, ""), (WEIGHTED, ""))
# What a submission that games its own timers would add: none of it reaches the grader's clock.
PATCHED_TIMERS = """import time as _time, timeit as _timeit
_frozen = _time.perf_counter()
_time.perf_counter = _time.monotonic = _time.time = _timeit.default_timer = lambda: _frozen
_time.perf_counter_ns = _time.monotonic_ns = _time.time_ns = lambda: 0
if hasattr(torch, "cuda"):
    torch.cuda.synchronize = lambda *a, **k: None
    torch.cuda.Event = type("Event", (), {"__init__": lambda self, **k: None, "record": lambda self, *a: None,
                                          "elapsed_time": lambda self, other: 0.0, "synchronize": lambda self: None})
"""
SLOWER = "slower than the allowed"

# What the checks print: a numeric comparison's failure (arrays, numbers), a
# property whose own call answered wrongly, a sampler off the model.
VALUES, VALUE = "values wrong", "wrong value"
NOTHING = "the property does not hold"
FINITE = "finite at logits of 1e4"
SAMPLED = "do not follow the model"


def _as_bug(
    mistake: Mistake, what: str, loses: dict[str, str], demo: bool = False, variant: dict[str, str] | None = None
) -> Bug:
    """The bug a student makes by making `mistake`: its edits, all in one file."""
    (file,) = {file for file, _, _ in mistake.edits}
    return Bug(what, file, tuple((old, new) for _, old, new in mistake.edits), loses, demo, variant or {})


BUGS = {
    # --- layers.py: LayerNorm ---
    "unbiased_variance": _as_bug(
        M.UNBIASED_VARIANCE,
        "LayerNorm uses torch's default, unbiased variance.",
        {
            "layer_norm": "unbiased variance",
            "layer_norm_stats": NOTHING,
        },
    ),
    "eps_outside_sqrt": _as_bug(
        M.EPS_OUTSIDE_SQRT,
        "LayerNorm divides by sqrt(var) + eps.",
        {
            "layer_norm": "eps outside the square root",
        },
        demo=True,
    ),
    "layer_norm_over_batch": _as_bug(
        M.LAYER_NORM_OVER_BATCH,
        "LayerNorm takes the mean and variance over the first dimension, as BatchNorm does.",
        {"layer_norm": "over the first dimension", "layer_norm_stats": NOTHING},
    ),
    "layer_norm_weight_bias_swapped": _as_bug(
        M.WEIGHT_BIAS_SWAPPED,
        "LayerNorm scales by the bias and shifts by the weight.",
        {"layer_norm": "scales by the bias", "layer_norm_stats": NOTHING},
    ),
    # --- layers.py: attention ---
    "scale_d_model": _as_bug(
        M.SCALE_D_MODEL,
        "the attention scores are divided by sqrt(d_model).",
        {
            "attention": "instead of sqrt(d_head)",
        },
        demo=True,
    ),
    "no_scaling": _as_bug(
        M.NO_SCALING,
        "the attention scores are not scaled.",
        {
            "attention": "not divided by sqrt(d_head)",
        },
    ),
    "mask_off_by_one": _as_bug(
        M.MASK_OFF_BY_ONE,
        "the causal mask is triu(diagonal=2), so each position also sees the next.",
        # training runs the grader's attention in its place (a stand-in), so the leak costs attention alone.
        {"attention": "off by one"},
    ),
    "mask_after_softmax": _as_bug(
        M.MASK_AFTER_SOFTMAX,
        "the future weights are zeroed after the softmax.",
        {"attention": "zeroed after the softmax", "attention_rows": NOTHING},
    ),
    "softmax_over_queries": _as_bug(
        M.SOFTMAX_OVER_QUERIES,
        "the attention softmax runs over dim=-2.",
        {"attention": "over the queries", "attention_rows": NOTHING},
    ),
    "head_layout": _as_bug(
        M.HEAD_LAYOUT,
        "the heads are split with view(B, T, d_head, n_heads) and merged back the same way.",
        {"attention": "interleaved layout"},
    ),
    "no_causal_mask": _as_bug(
        M.NO_CAUSAL_MASK,
        "the attention has no causal mask: every position sees the whole sequence.",
        {"attention": "has no causal mask"},
    ),
    "mask_fills_zero": _as_bug(
        M.MASK_FILLS_ZERO,
        "the future scores are set to 0 instead of -inf before the softmax.",
        {"attention": "set to 0 instead of -inf"},
    ),
    "mask_tril": _as_bug(
        M.MASK_TRIL,
        "the mask is built with tril instead of triu: each position sees the future, not the past.",
        {"attention": "built with tril instead of triu"},
    ),
    "heads_merged_without_transpose": _as_bug(
        M.HEADS_MERGED_WITHOUT_TRANSPOSE,
        "the heads are merged by reshaping (B, n_heads, T, d_head) straight to (B, T, d_model).",
        {"attention": "transpose it to (B, T, n_heads, d_head) first", "attention_rows": ""},
    ),
    "out_proj_missing": _as_bug(
        M.OUT_PROJ_MISSING,
        "the attention returns the concatenated heads without out_proj.",
        {"attention": "without passing them through out_proj"},
    ),
    # --- layers.py: feed-forward and block ---
    "gelu_tanh": _as_bug(
        M.GELU_TANH,
        "the feed-forward network uses the tanh approximation of GELU.",
        {
            "feed_forward": "tanh approximation of GELU",
        },
    ),
    "pre_post_swapped": _as_bug(
        M.PRE_POST_SWAPPED,
        "the block runs the post-LN code when pre_ln is True and the pre-LN code otherwise.",
        {"block": "branches are swapped"},
    ),
    "residual_missing": _as_bug(
        M.RESIDUAL_MISSING,
        "the attention sublayer's output replaces x instead of being added to it.",
        {"block": "residual connection is left out"},
    ),
    # --- model.py ---
    "positions_offset": _as_bug(
        M.POSITIONS_OFFSET,
        "the position embeddings are taken at arange(1, T + 1).",
        # The model raises at T = context_length: its own property and timing checks, whose cases call it
        # there themselves, lose too.
        {
            "model": "positions 1..T",
            "model_hidden": "positions 1..T",
            "causality": "index out of range",
            "bad_arguments": "index out of range",
            "train_step_speed": "index out of range",
        },
    ),
    "no_position_embedding": _as_bug(
        M.NO_POSITION_EMBEDDING,
        "the model adds no position embedding to the token embeddings.",
        {"model": "no position embedding is added", "model_hidden": ""},
    ),
    "ln_f_missing": _as_bug(
        M.LN_F_MISSING,
        "forward skips the final LayerNorm.",
        {"model": "ln_f is not applied", "model_hidden": "ln_f is not applied"},
    ),
    "head_tied_to_embedding": _as_bug(
        M.HEAD_TIED_TO_EMBEDDING,
        "the logits are computed with the token embedding matrix instead of lm_head.",
        {"model": "token embedding matrix", "model_hidden": ""},
    ),
    "ce_unstable": _as_bug(
        M.CE_UNSTABLE,
        "cross_entropy computes log(sum(exp(logits))) without the max shift.",
        {"cross_entropy": "without subtracting each row's maximum", "ce_stable": FINITE},
        demo=True,
    ),
    "ce_log_of_softmax": _as_bug(
        M.CE_LOG_OF_SOFTMAX,
        "cross_entropy takes the log of softmax probabilities, which underflow to 0 for logits of 1e4.",
        {"cross_entropy": "the log of the softmax's probabilities", "ce_stable": FINITE},
    ),
    "ce_summed": _as_bug(
        M.CE_SUMMED,
        "cross_entropy sums over positions instead of averaging.",
        {
            # train's losses are exactly this mistake's: paid, naming it.
            "cross_entropy": "summed over the positions",
            "ce_stable": NOTHING,
        },
    ),
    # --- train.py ---
    "batch_target_unshifted": _as_bug(
        M.BATCH_TARGET_UNSHIFTED, "get_batch returns y = x.", {"get_batch": "equal to the inputs x"}
    ),
    "batch_start_past_end": _as_bug(
        M.BATCH_START_PAST_END,
        "get_batch draws starts up to N - context_length inclusive, one too many.",
        {"get_batch": "inclusive, one too many"},
    ),
    "batch_global_rng": Bug(
        "get_batch draws the starts from torch's global generator, ignoring the one given.",
        TRAIN,
        ((STARTS, "torch.randint(0, N - context_length, (batch_size,), device=on)"),),
        {"get_batch": VALUES},
    ),
    "train_no_zero_grad": _as_bug(
        M.TRAIN_NO_ZERO_GRAD,
        "train never zeroes the gradients, so they accumulate over the steps.",
        {"train": "never zeroes the gradients", "training": "did not fall"},
        demo=True,
    ),
    "train_sgd": _as_bug(
        M.TRAIN_SGD,
        "train steps with plain SGD instead of AdamW.",
        {"train": "plain SGD"},
    ),
    "perplexity_no_exp": _as_bug(
        M.PERPLEXITY_NO_EXP,
        "evaluate_perplexity returns the mean NLL, not its exp.",
        # training judges evaluate_perplexity's answer on the trained model too (it grades both functions).
        {"evaluate_perplexity": "perplexity is its exp", "training": "evaluate_perplexity gives"},
    ),
    "perplexity_mean_of_windows": _as_bug(
        M.PERPLEXITY_MEAN_OF_WINDOWS,
        "evaluate_perplexity averages the windows' mean losses, so the short last window weighs as much as a full one.",
        {"evaluate_perplexity": "averages the windows' mean losses"},
    ),
    "perplexity_drops_last_window": _as_bug(
        M.PERPLEXITY_DROPS_LAST_WINDOW,
        "evaluate_perplexity reads full windows only, leaving out the shorter last one.",
        {"evaluate_perplexity": "full windows only"},
    ),
    "generate_no_crop": _as_bug(
        M.GENERATE_NO_CROP, "generate feeds the whole sequence to the model.", {"generate": "does not crop its input"}
    ),
    "generate_argmax": _as_bug(
        M.GENERATE_ARGMAX, "generate takes the argmax instead of sampling.", {"generate": "argmax"}
    ),
    "attention_query_loop": Bug(
        "CausalSelfAttention loops over the queries in Python: right values, T times the small steps.",
        LAYERS,
        LOOP_EDITS,
        {"attention_speed": SLOWER, "train_step_speed": ""},
    ),
    "attention_query_loop_patched_timers": Bug(
        "the same query loop, in a file that freezes time.perf_counter, time.time, timeit and the CUDA timers.",
        LAYERS,
        (*LOOP_EDITS, ("import torch\n", "import torch\n" + PATCHED_TIMERS)),
        {"attention_speed": SLOWER, "train_step_speed": ""},
    ),
    "generate_ignores_temperature": Bug(
        "generate samples from softmax(logits), never dividing by the temperature.",
        TRAIN,
        ((TEMPERATURE, "logits = model(idx_cond)[:, -1, :]  # (1, V)"),),
        {"generate": SAMPLED},
    ),
    # --- conventions of public code, as the ports of tests/submissions/ports carry them ---
    "ffn_relu": Bug.from_mistake(M.FFN_RELU, {"feed_forward": "uses ReLU"}),
    "heads_split_without_transpose": Bug.from_mistake(
        # attention_rows asks the attention's own weights, which mix positions: its property fails too.
        M.HEADS_SPLIT_WITHOUT_TRANSPOSE,
        {"attention": "straight as (B, n_heads, T, d_head)", "attention_rows": "the property does not hold"},
    ),
    "embedding_scaled": Bug.from_mistake(
        M.EMBEDDING_SCALED, {"model": "multiplied by sqrt(d_model)", "model_hidden": "multiplied by sqrt(d_model)"}
    ),
    "weights_tied": Bug.from_mistake(M.WEIGHTS_TIED, {"model": "share one matrix", "model_hidden": "share one matrix"}),
}


# --- the positions variant: each bug graded in the variant that builds it ---
SINUSOIDAL, ROPE = {"positions": "sinusoidal"}, {"positions": "rope"}

BUGS.update(
    {
        "rope_rotate_half": _as_bug(
            P.ROPE_ROTATE_HALF,
            'RoPE pairs feature i with i + d_head/2 ("rotate half"), not 2i with 2i + 1.',
            {"rope": "rotate half", "rope_relative": "attention's own output is wrong"},
            variant=ROPE,
        ),
        "rope_rotates_v": _as_bug(
            P.ROPE_ROTATES_V,
            "RoPE rotates the values as well as the queries and keys.",
            {"rope": "rotates the values", "rope_relative": "v is rotated too"},
            variant=ROPE,
        ),
        "rope_angle_d_model": _as_bug(
            P.ROPE_ANGLE_D_MODEL,
            "the RoPE angles are t * 10000^(-2i / d_model).",
            {"rope": "use d_model", "rope_relative": "attention's own output is wrong"},
            variant=ROPE,
        ),
        "rope_q_only": _as_bug(
            P.ROPE_Q_ONLY,
            "RoPE rotates the queries only, so the scores depend on where the tokens are.",
            {"rope": "rotates the queries only", "rope_relative": "not only on t - s"},
            variant=ROPE,
        ),
        "rope_turns_backward": _as_bug(
            P.ROPE_TURNS_BACKWARD,
            "RoPE turns each pair by -theta: (x1 cos + x2 sin, -x1 sin + x2 cos).",
            {"rope": "turns each pair the other way", "rope_relative": "attention's own output is wrong"},
            variant=ROPE,
        ),
        "rope_before_projections": _as_bug(
            P.ROPE_BEFORE_PROJECTIONS,
            "RoPE turns the attention's input x, before q_proj, k_proj and v_proj.",
            {"rope": "before the projections", "rope_relative": "the effect of the shift cannot be read"},
            variant=ROPE,
        ),
        "rope_angle_pair_index": _as_bug(
            P.ROPE_ANGLE_PAIR_INDEX,
            "the RoPE angles are t * 10000^(-i / d_head) with i the pair's index, not 2i.",
            {"rope": "the pair's index", "rope_relative": "attention's own output is wrong"},
            variant=ROPE,
        ),
        "rope_per_head": _as_bug(
            P.ROPE_NOT_BY_POSITION,
            "RoPE turns q and k while they are (B, T, n_heads, d_head), so the angle counts heads, not positions.",
            {"rope": "not turned by their position", "rope_relative": "attention's own output is wrong"},
            variant=ROPE,
        ),
        "rope_keeps_pos_emb": _as_bug(
            P.ROPE_KEEPS_POS_EMB,
            "the rope model still adds the learned position embedding pos_emb to the token embeddings.",
            {"model": "still makes the learned pos_emb", "model_hidden": "still makes the learned pos_emb"},
            variant=ROPE,
        ),
        "token_embeddings_scaled": _as_bug(
            P.EMBEDDINGS_SCALED,
            "the token embeddings are multiplied by sqrt(d_model) before the table is added.",
            {"model": "multiplied by sqrt(d_model)", "model_hidden": "multiplied by sqrt(d_model)"},
            variant=SINUSOIDAL,
        ),
        "sin_cos_swapped": _as_bug(
            P.SIN_COS_SWAPPED,
            "the table has cos in the even columns and sin in the odd ones.",
            {"sinusoidal": "sin and cos are swapped"},
            variant=SINUSOIDAL,
        ),
        "table_from_one": _as_bug(
            P.TABLE_FROM_ONE,
            "the table's rows are positions 1..context_length.",
            {"sinusoidal": "start at 1"},
            variant=SINUSOIDAL,
        ),
        "table_parameter": _as_bug(
            P.TABLE_PARAMETER,
            "the table is an nn.Parameter, which AdamW then trains.",
            {"sinusoidal": "registered as a parameter"},
            variant=SINUSOIDAL,
        ),
        "table_halves": _as_bug(
            P.TABLE_HALVES,
            "the table holds sin in its first d_model/2 columns and cos in the rest, not interleaved.",
            {"sinusoidal": "[sin | cos]"},
            variant=SINUSOIDAL,
        ),
        "table_pair_index": _as_bug(
            P.TABLE_PAIR_INDEX,
            "the table's frequencies are 1 / 10000^(i / d_model) with i the pair's index, not 2i.",
            {"sinusoidal": "the pair's index"},
            variant=SINUSOIDAL,
        ),
        "table_t2t_timescale": _as_bug(
            P.TABLE_T2T_TIMESCALE,
            "the table's frequencies step by log(10000) / (d_model/2 - 1), as tensor2tensor's timescales do.",
            {"sinusoidal": "tensor2tensor"},
            variant=SINUSOIDAL,
        ),
        "table_odd_d_model_accepted": Bug(
            "the model never checks that d_model is even: an odd one fails in the table with torch's RuntimeError, "
            "not ValueError.",
            MODEL,
            (("            if d_model % 2 != 0:\n", "            if False:\n"),),
            {"bad_arguments": "RuntimeError, not ValueError"},
            variant=SINUSOIDAL,
        ),
    }
)
