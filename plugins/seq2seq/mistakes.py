"""Known seq2seq mistakes, each made as an edit of a copy of the reference.

The oracle runs a check's scenario on the flawed copy; a submission whose
every answer matches it is told the mistake by name. Each edit is what a
student would have written in the reference's place. The reference's texts
are kept as constants: the catalogue of bugs makes the same edits.
"""

from __future__ import annotations

from lmgrade import Mistake

F = "seq2seq.py"

# --- the reference's lines ---
PACKED = """        packed = pack_padded_sequence(x, src_lengths.to("cpu", torch.int64), batch_first=True, enforce_sorted=False)
        out, h_n = self.rnn(packed)  # h_n: (1, B, H)
        H_enc, _ = pad_packed_sequence(out, batch_first=True, total_length=S)  # (B, S, H), zeros at padded rows
"""
ZERO_PADDED = "    H_enc = H_enc.masked_fill(padded[:, :, None], 0.0)  # (B, S, H)\n"
QUERY = "query = h_dec if W is None else h_dec @ W"
SCORES = "scores = (H_enc @ query[:, :, None])[:, :, 0]"
MASK_SCORES = '    scores = scores.masked_fill(padded, float("-inf"))\n'
SOFTMAX = "alpha = torch.softmax(scores, dim=-1)"
ATTEND = 'c_i, alpha = attention(h_prev, H_enc, mask, self.W if self.attention == "bilinear" else None)'
CELL = "h = self.cell(torch.cat([self.embed(y_prev), c_i], dim=-1), h_prev)"
H0 = "h = c  # h_0^d = c = h_n^e: the bottleneck starts the decoder"
FED = "logits_i, h, _ = self.decoder.step(tgt_in[:, i], h, H_enc, mask, c)"
REAL_LOGITS = "z = logits[real]  # (N, V)"
REAL_TARGETS = "y = targets[real].long()  # (N,)"
SHIFT = "    z = z - z.detach().amax(dim=-1, keepdim=True)\n"
MEAN = "return nll.sum() / nll.shape[0]"
GREEDY_H0 = "    h = c\n    chosen"
CHOSEN = "chosen: list[list[int]] = [[] for _ in range(B)]"
STOP = """                if token == eos:
                    running[b] = False
                else:
                    chosen[b].append(token)
"""

H_N_PADDED_END = Mistake(
    "h_n_padded_end",
    "the encoder's h_n is the GRU's state after the padded end of the batch, not after each sequence's last "
    "real token: run the GRU over packed sequences (pack_padded_sequence) or pick H_enc[b, src_lengths[b] - 1]",
    edits=((F, PACKED, "        H_enc, h_n = self.rnn(x)  # h_n: (1, B, H)\n"),),
)

ATTEND_PADDING = Mistake(
    "attend_padding",
    "the padded positions get attention weights, so what H_enc holds there enters the context: set their scores "
    "to -inf before the softmax (adding a large negative number is not enough where a padded score is larger "
    "still)",
    edits=((F, ZERO_PADDED, ""), (F, MASK_SCORES, "")),
)

SOFTMAX_WRONG_AXIS = Mistake(
    "softmax_wrong_axis",
    "the attention softmax runs over the batch (dim=0) instead of over the source positions (dim=-1)",
    edits=((F, SOFTMAX, "alpha = torch.softmax(scores, dim=0)"),),
)

W_TRANSPOSED = Mistake(
    "w_transposed",
    "the bilinear score uses W transposed, h_enc W h_dec: the contract's score is h_dec @ W @ h_enc "
    "(W's rows meet h_dec)",
    edits=((F, QUERY, "query = h_dec if W is None else h_dec @ W.T"),),
)

SCALED_SCORES = Mistake(
    "scaled_scores",
    "the attention scores are divided by sqrt(hidden_size), as the Transformer's are; the contract's scores are "
    "not scaled",
    edits=((F, SCORES, f"{SCORES} / math.sqrt(H_enc.shape[-1])"),),
)

SCORES_FROM_NEW_STATE = Mistake(
    "scores_from_new_state",
    "the attention scores come from a new state h_i^d (Luong's order: the cell run first, fed the bottleneck c) "
    "instead of from the previous state h_{i-1}^d = h_prev",
    edits=(
        (
            F,
            ATTEND,
            "c_i, alpha = attention(self.cell(torch.cat([self.embed(y_prev), c], dim=-1), h_prev), H_enc, mask, "
            'self.W if self.attention == "bilinear" else None)',
        ),
    ),
)

CONTEXT_FIRST = Mistake(
    "context_first",
    "the cell's input is [c_i; embedding]; the contract's is [embedding; c_i], the embedding first",
    edits=((F, CELL, "h = self.cell(torch.cat([c_i, self.embed(y_prev)], dim=-1), h_prev)"),),
)

PREVIOUS_CONTEXT = Mistake(
    "previous_context",
    "each step feeds the cell the context of the previous step (c at the first): step i must use its own c_i, "
    "from h_{i-1}^d",
    edits=(
        (
            F,
            ATTEND,
            'fresh, alpha = attention(h_prev, H_enc, mask, self.W if self.attention == "bilinear" else None)\n'
            '            c_i, self._last_context = getattr(self, "_last_context", c), fresh',
        ),
    ),
)

H0_ZERO = Mistake(
    "h0_zero",
    "the decoder starts from zeros; the contract's h_0^d is c = h_n^e, the encoder's last real state",
    edits=((F, H0, "h = torch.zeros_like(c)"), (F, GREEDY_H0, "    h = torch.zeros_like(c)\n    chosen")),
)

FEEDS_PREDICTIONS = Mistake(
    "feeds_predictions",
    "forward feeds each step the previous step's argmax, not the given token tgt_in[:, i - 1] (teacher forcing "
    "feeds the true tokens)",
    edits=(
        (
            F,
            FED,
            "logits_i, h, _ = self.decoder.step(tgt_in[:, 0] if i == 0 else logits[-1].argmax(dim=-1), h, H_enc, "
            "mask, c)",
        ),
    ),
)

LOSS_OVER_PADS = Mistake(
    "loss_over_pads",
    "the loss is averaged over every position, the padded ones too: only positions whose target is not pad count",
    edits=((F, REAL_LOGITS, "z = logits.reshape(-1, V)"), (F, REAL_TARGETS, "y = targets.reshape(-1).long()")),
)

LOSS_MEAN_OF_MEANS = Mistake(
    "loss_mean_of_means",
    "the loss is a mean of per-sequence means; the contract's is one mean over every non-pad position of the batch",
    edits=(
        (
            F,
            MEAN,
            "per = torch.zeros(targets.shape, dtype=nll.dtype, device=nll.device).masked_scatter(real, nll)\n"
            "    counts = real.sum(dim=-1)\n"
            "    return (per.sum(dim=-1)[counts > 0] / counts[counts > 0]).mean()",
        ),
    ),
)

LOSS_UNSTABLE = Mistake(
    "loss_unstable",
    "the loss takes log(sum(exp(logits))) without subtracting each row's maximum first, so logits of 1e4 overflow",
    edits=((F, SHIFT, ""),),
)

GREEDY_KEEPS_BOS = Mistake(
    "greedy_keeps_bos",
    "greedy_decode returns bos at the start of each list: bos is fed, never chosen, and left out",
    edits=((F, CHOSEN, "chosen: list[list[int]] = [[int(bos)] for _ in range(B)]"),),
)

GREEDY_KEEPS_EOS = Mistake(
    "greedy_keeps_eos",
    "greedy_decode keeps the eos it stops at: the chosen eos ends the list and is left out",
    edits=(
        (
            F,
            STOP,
            "                chosen[b].append(token)\n                if token == eos:\n"
            "                    running[b] = False\n",
        ),
    ),
)

GREEDY_NO_STOP = Mistake(
    "greedy_no_stop",
    "greedy_decode does not stop at eos: it always returns max_len tokens",
    edits=((F, STOP, "                chosen[b].append(token)\n"),),
)

# The text the mistakes below edit (the catalogue's bugs make the same edits: bugs.py).
BILINEAR_W = 'self.W if self.attention == "bilinear" else None)'
LOGITS = "logits = self.out(h)  # (B, V)"
CARRY = "logits_i, h, _ = self.decoder.step(tgt_in[:, i], h, H_enc, mask, c)"
GREEDY_LOOP = "    for _ in range(max_len):\n        logits, h, _ = model.decoder.step(y, h, H_enc, mask, c)  # (B, V)"
ZERO_GRAD = "            optimizer.zero_grad()\n"
ADAM = "    optimizer = torch.optim.Adam(model.parameters(), lr=lr)  # once per call: its moments span the epochs\n"
EPOCHS = "    for _ in range(epochs):\n"
IN_ORDER = "for k in order.tolist():"

LOGITS_FROM_PREVIOUS = Mistake(
    "logits_from_previous_state",
    "the logits are computed from h_{i-1}, the state the step was given; the contract's come from the new "
    "state h_i alone: logits = out(h_i)",
    edits=((F, LOGITS, "logits = self.out(h_prev)  # (B, V)"),),
)
BILINEAR_IGNORES_W = Mistake(
    "bilinear_ignores_W",
    "'bilinear' scores as 'dot': W never reaches the attention, so h^d W h^e is h^d h^e whatever W holds",
    edits=((F, BILINEAR_W, "None)"),),
)
STATE_NOT_CARRIED = Mistake(
    "decoder_state_not_carried",
    "every decoder step is given c as its previous state: only the first starts from c = h_n^e, and each "
    "later one from the state the step before it returned",
    edits=((F, CARRY, "logits_i, h, _ = self.decoder.step(tgt_in[:, i], c, H_enc, mask, c)"),),
)
GREEDY_ONE_MORE = Mistake(
    "greedy_one_step_more",
    "greedy_decode runs max_len + 1 steps; it makes at most max_len tokens",
    edits=((F, GREEDY_LOOP, GREEDY_LOOP.replace("range(max_len)", "range(max_len + 1)")),),
)
TRAIN_NO_ZERO_GRAD = Mistake(
    "train_never_zeroes_gradients",
    "train never zeroes the gradients, so each step's are added to every earlier step's: call "
    "optimizer.zero_grad() before each backward",
    edits=((F, ZERO_GRAD, ""),),
)
TRAIN_OPTIMIZER_PER_EPOCH = Mistake(
    "train_optimizer_per_epoch",
    "train makes a new Adam every epoch, so its moment estimates start again: one optimizer per call of train, "
    "made before the epochs",
    edits=((F, ADAM, ""), (F, EPOCHS, EPOCHS + "    " + ADAM)),
)
TRAIN_BATCHES_IN_ORDER = Mistake(
    "train_batches_in_order",
    "train takes the batches in their given order; the contract takes them in the order "
    "torch.randperm(len(batches), generator=generator) draws, again each epoch",
    edits=((F, IN_ORDER, "for k in range(len(batches)):"),),
)
SOFTMAX_WITHOUT_MAX = Mistake(
    "softmax_without_max",
    "the attention softmax is exp(scores) / sum(exp(scores)) without subtracting each row's maximum first, so "
    "large scores overflow to inf and the weights to nan: use torch.softmax, or subtract the row's maximum",
    edits=((F, SOFTMAX, "alpha = torch.exp(scores) / torch.exp(scores).sum(dim=-1, keepdim=True)"),),
)

PADDED_ROWS_KEPT = Mistake(
    "padded_rows_kept",
    "the padded rows of H_enc are weighed by alpha = 0 but not zeroed: the context is right, but finite junk as "
    "large as float32's 1e38 there overflows in the backward and makes the gradients nan, where the contract "
    "says those values change nothing; zero the padded rows before the weighted sum",
    edits=((F, ZERO_PADDED, ""),),
)

ATTENTION_MISTAKES = (ATTEND_PADDING, SOFTMAX_WRONG_AXIS, W_TRANSPOSED, SCALED_SCORES)
# The attention check's own two besides, which its large and inf-holding cases show.
ATTENTION_CHECK_MISTAKES = (*ATTENTION_MISTAKES, SOFTMAX_WITHOUT_MAX, PADDED_ROWS_KEPT)
STEP_MISTAKES = (*ATTENTION_MISTAKES, SCORES_FROM_NEW_STATE, CONTEXT_FIRST, PREVIOUS_CONTEXT)
# The step's own two beyond its seven (which it tries in pairs) are named where forward runs it.
FORWARD_MISTAKES = (
    H_N_PADDED_END,
    *STEP_MISTAKES,
    H0_ZERO,
    FEEDS_PREDICTIONS,
    STATE_NOT_CARRIED,
    LOGITS_FROM_PREVIOUS,
    BILINEAR_IGNORES_W,
)
LOSS_MASK_MULTIPLIED = Mistake(
    "loss_mask_multiplied",
    "the loss is computed at every position and multiplied by the mask: a pad position whose logits are nan or "
    "inf makes 0 * nan = nan; leave the pad positions out (logits[real]) instead of weighing them by 0",
    edits=(
        (F, REAL_LOGITS, "z = logits.reshape(-1, V)"),
        (F, REAL_TARGETS, "y = targets.reshape(-1).long().clamp(0, V - 1)"),
        (F, MEAN, "return (nll * real.reshape(-1)).sum() / real.sum()"),
    ),
)
LOSS_MISTAKES = (LOSS_OVER_PADS, LOSS_MEAN_OF_MEANS, LOSS_UNSTABLE, LOSS_MASK_MULTIPLIED)
GREEDY_MISTAKES = (GREEDY_KEEPS_BOS, GREEDY_KEEPS_EOS, GREEDY_NO_STOP, H0_ZERO, GREEDY_ONE_MORE)
# Not the order drawn from torch's global generator: its state differs between the grader's run and the
# child's, so no answer could match the mistake's.
TRAIN_MISTAKES = (TRAIN_NO_ZERO_GRAD, TRAIN_OPTIMIZER_PER_EPOCH, TRAIN_BATCHES_IN_ORDER)

ALL = (
    H_N_PADDED_END,
    *STEP_MISTAKES,
    H0_ZERO,
    FEEDS_PREDICTIONS,
    *LOSS_MISTAKES,
    GREEDY_KEEPS_BOS,
    GREEDY_KEEPS_EOS,
    GREEDY_NO_STOP,
)
