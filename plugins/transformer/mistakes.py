"""Known transformer mistakes, each made as an edit of a copy of the reference.

The oracle runs a check's scenario on the flawed copy; a submission whose
every answer matches it is told the mistake by name. Each edit is what a
student would have written in the reference's place. The reference's texts
are kept as constants: the catalogue of bugs makes the same edits.
"""

from __future__ import annotations

from lmgrade import Mistake

L, M, T = "layers.py", "model.py", "train.py"

# --- layers.py: the reference's lines ---
MEAN_X = "mean = x.mean(dim=-1, keepdim=True)"
VAR = "var = x.var(dim=-1, keepdim=True, correction=0)"
AFFINE = "return x_hat * self.weight + self.bias"
NORMALISE = "x_hat = (x - mean) / torch.sqrt(var + self.eps)"
SPLIT = {
    name: f"{name} = self.{name}_proj(x).view(B, T, self.n_heads, self.d_head).transpose(1, 2)"
    for name in ("q", "k", "v")
}
SCORES = "att = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)"
CAUSAL = "future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(diagonal=1)"
MASK = 'att = att.masked_fill(future, float("-inf"))'
SOFTMAX = "att = torch.softmax(att, dim=-1)  # over the keys"
MASK_THEN_SOFTMAX = f"        {MASK}\n        {SOFTMAX}\n"
MERGE = "y = y.transpose(1, 2).reshape(B, T, d_model)  # heads side by side, in order"
PRE_LN_ATTN = "x = x + self.attn(self.ln1(x))"
POST_LN_ATTN = "x = self.ln1(x + self.attn(x))"
BRANCHES = """        if self.pre_ln:
            # Normalise what enters each sublayer and leave the residual stream
            # untouched: the identity path carries gradients straight down.
            x = x + self.attn(self.ln1(x))
            x = x + self.ffn(self.ln2(x))
        else:
            # The original Transformer: normalise after each residual sum.
            x = self.ln1(x + self.attn(x))
            x = self.ln2(x + self.ffn(x))
"""
BRANCHES_SWAPPED = """        if self.pre_ln:
            x = self.ln1(x + self.attn(x))
            x = self.ln2(x + self.ffn(x))
        else:
            x = x + self.attn(self.ln1(x))
            x = x + self.ffn(self.ln2(x))
"""

OUT_PROJ = "return self.out_proj(y)"

# --- model.py ---
POSITIONS = "pos = torch.arange(T, device=idx.device)  # (T,)"
EMBED = "            x = x + self.pos_emb(pos)  # (B, T, d_model)\n"
HEAD = "return self.lm_head(x)  # (B, T, V)"
FINAL_LN = "        x = self.ln_f(x)\n"
SHIFT = "z = logits - logits.detach().amax(dim=-1, keepdim=True)  # (N, V), max 0 per row"
MEAN = "return nll.mean()"

# --- train.py ---
TARGETS = "y = data[rows + 1].to(device=device, dtype=torch.long)"
STARTS = "torch.randint(0, N - context_length, (batch_size,), generator=generator, device=on)"
ADAMW = "optimizer = torch.optim.AdamW(model.parameters(), lr=lr)"
WINDOWS = "for start in range(0, inputs.shape[0], context_length):"
WINDOW_NLL = "total_nll += cross_entropy(model(x), y).item() * y.numel()"
WINDOW_COUNT = "n_predicted += y.numel()"
PERPLEXITY = "return math.exp(total_nll / n_predicted)"
CROP = "idx_cond = idx[:, -model.context_length:]  # (1, <= context_length)"
SAMPLE = "next_token = torch.multinomial(probs, 1, generator=generator)  # (1, 1)"

LAYER_NORM_OVER_BATCH = Mistake(
    "layer_norm_over_batch",
    "LayerNorm takes the mean and variance over the first dimension (dim=0, across the batch, as BatchNorm "
    "does); it must normalise each position over its own d_model features (dim=-1)",
    edits=(
        (L, MEAN_X, "mean = x.mean(dim=0, keepdim=True)"),
        (L, VAR, "var = x.var(dim=0, keepdim=True, correction=0)"),
    ),
)

WEIGHT_BIAS_SWAPPED = Mistake(
    "layer_norm_weight_bias_swapped",
    "LayerNorm scales by the bias and shifts by the weight: the output is x_hat * weight + bias",
    edits=((L, AFFINE, "return x_hat * self.bias + self.weight"),),
)

SCALE_D_MODEL = Mistake(
    "scale_d_model",
    "the attention scores are divided by sqrt(d_model) instead of sqrt(d_head), the size of "
    "one head's query and key vectors",
    edits=((L, SCORES, "att = q @ k.transpose(-2, -1) / math.sqrt(d_model)"),),
)

NO_SCALING = Mistake(
    "no_scaling",
    "the attention scores q k^T are not divided by sqrt(d_head) before the softmax",
    edits=((L, SCORES, "att = q @ k.transpose(-2, -1)"),),
)

MASK_OFF_BY_ONE = Mistake(
    "mask_off_by_one",
    "the causal mask is off by one: position t also sees position t+1 (the mask must hide "
    "exactly the positions after t, triu with diagonal=1)",
    edits=((L, CAUSAL, CAUSAL.replace("diagonal=1", "diagonal=2")),),
)

MASK_AFTER_SOFTMAX = Mistake(
    "mask_after_softmax",
    "the future positions are zeroed after the softmax instead of set to -inf before "
    "it, so each query's attention weights no longer sum to 1",
    edits=((L, MASK_THEN_SOFTMAX, f"        {SOFTMAX}\n        att = att.masked_fill(future, 0.0)\n"),),
)

SOFTMAX_OVER_QUERIES = Mistake(
    "softmax_over_queries",
    "the attention softmax is taken over the queries (dim=-2) instead of over the keys (dim=-1)",
    edits=((L, SOFTMAX, "att = torch.softmax(att, dim=-2)"),),
)

HEAD_LAYOUT = Mistake(
    "head_layout",
    "the heads are split from an interleaved layout (view(B, T, d_head, n_heads)): head i must "
    "own the consecutive features [i*d_head, (i+1)*d_head) of q, k and v, and the heads are concatenated back "
    "in that order",
    edits=tuple(
        (L, SPLIT[name], f"{name} = self.{name}_proj(x).view(B, T, self.d_head, self.n_heads).permute(0, 3, 1, 2)")
        for name in ("q", "k", "v")
    )
    + ((L, MERGE, "y = y.permute(0, 2, 3, 1).reshape(B, T, d_model)"),),
)

HEADS_MERGED_WITHOUT_TRANSPOSE = Mistake(
    "heads_merged_without_transpose",
    "the heads are merged by reshaping y of shape (B, n_heads, T, d_head) straight to (B, T, d_model): "
    "transpose it to (B, T, n_heads, d_head) first, so that each position keeps its own heads' outputs",
    edits=((L, MERGE, "y = y.reshape(B, T, d_model)"),),
)

OUT_PROJ_MISSING = Mistake(
    "out_proj_missing",
    "the attention returns the concatenated heads without passing them through out_proj",
    edits=((L, OUT_PROJ, "return y"),),
)

UNBIASED_VARIANCE = Mistake(
    "unbiased_variance",
    "LayerNorm uses the unbiased variance (divided by d - 1); the contract asks for the "
    "population variance, divided by d",
    edits=((L, VAR, "var = x.var(dim=-1, keepdim=True)"),),
)

# As the Annotated Transformer writes it, with x.std: its backward is 0, not nan, where a row's variance is 0.
EPS_OUTSIDE_SQRT = Mistake(
    "eps_outside_sqrt",
    "LayerNorm adds eps outside the square root, (x - mean) / (sqrt(var) + eps), instead "
    "of (x - mean) / sqrt(var + eps)",
    edits=((L, NORMALISE, "x_hat = (x - mean) / (x.std(dim=-1, keepdim=True, correction=0) + self.eps)"),),
)

PRE_POST_SWAPPED = Mistake(
    "pre_post_swapped",
    "the block's pre-LN and post-LN branches are swapped: pre_ln=True must normalise what "
    "enters each sublayer, x + attn(ln1(x)), and pre_ln=False normalise after each residual sum",
    edits=((L, BRANCHES, BRANCHES_SWAPPED),),
)

RESIDUAL_MISSING = Mistake(
    "residual_missing",
    "the attention sublayer's residual connection is left out: its output must be added to x, not replace it",
    edits=((L, PRE_LN_ATTN, "x = self.attn(self.ln1(x))"), (L, POST_LN_ATTN, "x = self.ln1(self.attn(x))")),
)

POSITIONS_OFFSET = Mistake(
    "positions_offset",
    "the position embeddings are looked up for positions 1..T instead of 0..T-1 (arange(T))",
    edits=((M, POSITIONS, "pos = torch.arange(1, T + 1, device=idx.device)"),),
)

NO_POSITION_EMBEDDING = Mistake(
    "no_position_embedding",
    "no position embedding is added to the token embeddings: x must be tok_emb(idx) + pos_emb(arange(T))",
    edits=((M, EMBED, ""),),
)

HEAD_TIED_TO_EMBEDDING = Mistake(
    "head_tied_to_embedding",
    "the logits are computed with the token embedding matrix (x @ tok_emb.weight.T) instead of lm_head",
    edits=((M, HEAD, "return x @ self.tok_emb.weight.T"),),
)

LN_F_MISSING = Mistake(
    "ln_f_missing", "the final LayerNorm ln_f is not applied before lm_head", edits=((M, FINAL_LN, ""),)
)

CE_UNSTABLE = Mistake(
    "ce_unstable",
    "the cross-entropy takes the log of the sum of exp of the raw logits without subtracting "
    "each row's maximum first, so logits of 1e4 overflow to inf",
    edits=((M, SHIFT, "z = logits"),),
)

CE_SUMMED = Mistake(
    "ce_summed",
    "the cross-entropy is summed over the positions; the contract asks for the mean",
    edits=((M, MEAN, "return nll.sum()"),),
)

BATCH_TARGET_UNSHIFTED = Mistake(
    "batch_target_unshifted",
    "get_batch returns targets y equal to the inputs x: y must be the same windows "
    "shifted one token later, data[s+1 : s+T+1]",
    edits=((T, TARGETS, "y = data[rows].to(device=device, dtype=torch.long)"),),
)

BATCH_START_PAST_END = Mistake(
    "batch_start_past_end",
    "get_batch draws the starts from 0 to N - context_length inclusive, one too many "
    "(torch.randint(0, N - context_length + 1, ...)): the last start is N - context_length - 1, so that y "
    "ends at the last token",
    edits=((T, STARTS, STARTS.replace("N - context_length,", "N - context_length + 1,")),),
)

TRAIN_SGD = Mistake(
    "train_sgd",
    "train steps with plain SGD (torch.optim.SGD) instead of AdamW with its default betas, eps and weight decay",
    edits=((T, ADAMW, "optimizer = torch.optim.SGD(model.parameters(), lr=lr)"),),
)

TRAIN_NO_ZERO_GRAD = Mistake(
    "train_no_zero_grad",
    "train never zeroes the gradients, so each step adds its gradient to those of every step before",
    edits=((T, "        optimizer.zero_grad(set_to_none=True)\n", ""),),
)

PERPLEXITY_NO_EXP = Mistake(
    "perplexity_no_exp",
    "evaluate_perplexity returns the mean negative log-likelihood; perplexity is its exp",
    edits=((T, PERPLEXITY, "return total_nll / n_predicted"),),
)

PERPLEXITY_MEAN_OF_WINDOWS = Mistake(
    "perplexity_mean_of_windows",
    "evaluate_perplexity averages the windows' mean losses, so the shorter last window weighs as much as a full "
    "one: every predicted token must weigh the same (sum the NLL over tokens, divide by their number)",
    edits=((T, WINDOW_NLL, "total_nll += cross_entropy(model(x), y).item()"), (T, WINDOW_COUNT, "n_predicted += 1")),
)

PERPLEXITY_DROPS_LAST_WINDOW = Mistake(
    "perplexity_drops_last_window",
    "evaluate_perplexity reads full windows only and leaves out the shorter last one: every token after the "
    "first must be predicted once",
    edits=((T, WINDOWS, "for start in range(0, inputs.shape[0] - context_length + 1, context_length):"),),
)

BATCH_GLOBAL_RNG = Mistake(
    "batch_global_rng",
    "get_batch draws the starts from torch's global generator (torch.randint without generator=, as nanoGPT's "
    "get_batch does) instead of the generator it is given: pass generator=generator",
    edits=((T, STARTS, "torch.randint(0, N - context_length, (batch_size,), device=on)"),),
)

GENERATE_NO_CROP = Mistake(
    "generate_no_crop",
    "generate feeds the model the whole sequence instead of cropping it to the last context_length tokens",
    edits=((T, CROP, "idx_cond = idx"),),
)

GENERATE_ARGMAX = Mistake(
    "generate_argmax",
    "generate takes the most likely token (argmax) instead of sampling it with torch.multinomial and the generator",
    edits=((T, SAMPLE, "next_token = probs.argmax(dim=-1, keepdim=True)"),),
)

# generate's answers are draws: its mistakes are named where the submission's draws are exactly the mistaken
# reference's from the same generator (an argmax's are the same whatever the sampler's style; a sampler that
# draws otherwise than torch.multinomial on the probabilities is told what its draws show, by the judge).
TEMPERATURE = "logits = model(idx_cond)[:, -1, :] / temperature  # (1, V)"
GENERATE_IGNORES_TEMPERATURE = Mistake(
    "generate_ignores_temperature",
    "generate samples from softmax(logits) without dividing the logits by the temperature first",
    edits=((T, TEMPERATURE, "logits = model(idx_cond)[:, -1, :]  # (1, V)"),),
)
GENERATE_MISTAKES = (GENERATE_ARGMAX, GENERATE_NO_CROP, GENERATE_IGNORES_TEMPERATURE)

GELU_TANH = Mistake(
    "gelu_tanh",
    'the feed-forward network uses the tanh approximation of GELU (approximate="tanh", as GPT-2 '
    'and minGPT do); the contract asks for the exact, erf GELU, approximate="none" (the error is about 5e-4)',
    edits=((L, 'F.gelu(self.fc1(x), approximate="none")', 'F.gelu(self.fc1(x), approximate="tanh")'),),
)

# The causal mask left out, filled with 0 instead of -inf, or built with tril: each lets a position see later
# ones. Tried alone (the attention check has more mistakes than it pairs).
NO_CAUSAL_MASK = Mistake(
    "no_causal_mask",
    "the attention has no causal mask: every position attends to the whole sequence, later positions too; set "
    "the scores of the positions after t to -inf before the softmax",
    edits=((L, f"        {MASK}\n", ""),),
)
MASK_FILLS_ZERO = Mistake(
    "mask_fills_zero",
    "the future scores are set to 0 instead of -inf before the softmax, so each position still gives the later "
    "ones a weight of exp(0)",
    edits=((L, MASK, "att = att.masked_fill(future, 0.0)"),),
)
MASK_TRIL = Mistake(
    "mask_tril",
    "the causal mask is built with tril instead of triu: it hides the earlier positions and lets each position "
    "see the later ones; the mask must hide the positions after t, triu with diagonal=1",
    edits=((L, CAUSAL, CAUSAL.replace("triu(diagonal=1)", "tril(diagonal=-1)")),),
)
CE_LOG_OF_SOFTMAX = Mistake(
    "ce_log_of_softmax",
    "the cross-entropy takes the log of the softmax's probabilities, which underflow to 0 (and their log to "
    "-inf) for logits of about 1e4: use log(sum(exp(z))) - z[target] with each row's maximum subtracted",
    edits=(
        (M, SHIFT, "probs = torch.softmax(logits, dim=-1)"),
        (
            M,
            "nll = torch.log(torch.exp(z).sum(dim=-1)) - z.gather(-1, targets).squeeze(-1)  # (N,)",
            "nll = -torch.log(probs.gather(-1, targets).squeeze(-1))",
        ),
    ),
)

# Conventions of public code (the ports of tests/submissions/ports/transformer carry them).
FFN_RELU = Mistake(
    "ffn_relu",
    "the feed-forward network uses ReLU (as the original Transformer and the Annotated Transformer do); the "
    'contract\'s activation is the exact GELU, F.gelu(..., approximate="none")',
    edits=((L, 'F.gelu(self.fc1(x), approximate="none")', "F.relu(self.fc1(x))"),),
)
HEADS_SPLIT_WITHOUT_TRANSPOSE = Mistake(
    "heads_split_without_transpose",
    "the heads are split by viewing q, k and v of shape (B, T, d_model) straight as (B, n_heads, T, d_head), which "
    "mixes positions and features: view them as (B, T, n_heads, d_head) and then transpose(1, 2)",
    edits=tuple(
        (L, SPLIT[name], f"{name} = self.{name}_proj(x).view(B, self.n_heads, T, self.d_head)")
        for name in ("q", "k", "v")
    ),
)
MASK_HIDES_DIAGONAL = Mistake(
    "mask_hides_diagonal",
    "the causal mask also hides each position from itself (triu with diagonal=0), so the first position sees "
    "nothing and its weights are nan: the mask must hide exactly the positions after t, triu with diagonal=1",
    edits=((L, CAUSAL, CAUSAL.replace("diagonal=1", "diagonal=0")),),
)
EMBEDDING_SCALED = Mistake(
    "embedding_scaled",
    "the token embeddings are multiplied by sqrt(d_model) (as the original Transformer and the Annotated "
    "Transformer do); the contract adds the plain tok_emb(idx) to the position embeddings",
    edits=((M, "x = self.tok_emb(idx)  # (B, T, d_model)", "x = self.tok_emb(idx) * self.tok_emb.embedding_dim**0.5"),),
)
WEIGHTS_TIED = Mistake(
    "weights_tied",
    "the token embedding and lm_head share one matrix (weight tying, tok_emb.weight = lm_head.weight, as GPT-2 and "
    "nanoGPT do): the contract's tok_emb and lm_head are separate parameters, each loaded with its own values",
    edits=(
        (
            M,
            "        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)\n",
            "        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)\n"
            "        self.tok_emb.weight = self.lm_head.weight\n",
        ),
    ),
)

ALL = (
    LAYER_NORM_OVER_BATCH,
    WEIGHT_BIAS_SWAPPED,
    SCALE_D_MODEL,
    NO_SCALING,
    MASK_OFF_BY_ONE,
    MASK_AFTER_SOFTMAX,
    SOFTMAX_OVER_QUERIES,
    HEAD_LAYOUT,
    HEADS_MERGED_WITHOUT_TRANSPOSE,
    OUT_PROJ_MISSING,
    UNBIASED_VARIANCE,
    EPS_OUTSIDE_SQRT,
    PRE_POST_SWAPPED,
    RESIDUAL_MISSING,
    POSITIONS_OFFSET,
    NO_POSITION_EMBEDDING,
    HEAD_TIED_TO_EMBEDDING,
    LN_F_MISSING,
    GELU_TANH,
    CE_UNSTABLE,
    CE_SUMMED,
    BATCH_TARGET_UNSHIFTED,
    BATCH_START_PAST_END,
    TRAIN_SGD,
    TRAIN_NO_ZERO_GRAD,
    PERPLEXITY_NO_EXP,
    PERPLEXITY_MEAN_OF_WINDOWS,
    PERPLEXITY_DROPS_LAST_WINDOW,
    GENERATE_NO_CROP,
    GENERATE_ARGMAX,
    NO_CAUSAL_MASK,
    MASK_FILLS_ZERO,
    MASK_TRIL,
    CE_LOG_OF_SOFTMAX,
    FFN_RELU,
    HEADS_SPLIT_WITHOUT_TRANSPOSE,
    MASK_HIDES_DIAGONAL,
    EMBEDDING_SCALED,
    WEIGHTS_TIED,
)
