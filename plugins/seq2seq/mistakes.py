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

# Said as what the answers show, not as a remedy: a mask built from the pad id (as pytorch-seq2seq's
# create_mask does) answers alike wherever the padding holds no 0, and that code sets -inf already.
ATTEND_PADDING = Mistake(
    "attend_padding",
    "the padded positions (j >= src_lengths[b]) get attention weights, so what H_enc holds there enters the "
    "context: each of them must get a weight of exactly 0, whatever id it holds",
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

LOSS_PER_SENTENCE = Mistake(
    "loss_per_sentence",
    "the summed loss is divided by the number of sentences (targets.shape[0]), as CS224N's NMT loss is: the "
    "contract's is one mean over the non-pad tokens, divided by their number",
    edits=((F, MEAN, "return nll.sum() / targets.shape[0]"),),
)

# d2l's MaskedSoftmaxCELoss: each position's loss weighed by the mask (0 at a pad), averaged over all T positions
# of its sequence, pads included, then over the sequences.
LOSS_MEAN_OVER_ALL_STEPS = Mistake(
    "loss_mean_over_all_steps",
    "each sequence's loss is averaged over all of its T positions, pads included (as zeros), and those means "
    "averaged, as d2l's MaskedSoftmaxCELoss does: the contract's is one mean over the non-pad tokens, divided by "
    "their number",
    edits=(
        (
            F,
            MEAN,
            "per = torch.zeros(targets.shape, dtype=nll.dtype, device=nll.device).masked_scatter(real, nll)\n"
            "    return per.mean(dim=-1).mean()",
        ),
    ),
)

# The PyTorch chatbot tutorial's training loop: maskNLLLoss at each step (a mean over that step's real tokens),
# the steps' means added up.
LOSS_SUM_OF_STEP_MEANS = Mistake(
    "loss_sum_of_step_means",
    "the loss is a sum over the time steps of each step's mean over its non-pad tokens, as the PyTorch chatbot "
    "tutorial's maskNLLLoss loop adds them: the contract's is one mean over all the non-pad tokens at once",
    edits=(
        (
            F,
            MEAN,
            "per = torch.zeros(targets.shape, dtype=nll.dtype, device=nll.device).masked_scatter(real, nll)\n"
            "    per, counts = per.reshape(-1, per.shape[-1]), real.reshape(-1, real.shape[-1]).sum(dim=0)\n"
            "    return (per.sum(dim=0)[counts > 0] / counts[counts > 0]).sum()",
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

# The PyTorch chatbot tutorial sorts each batch by length and packs with the default enforce_sorted=True.
# It shows only by raising: named where torch's own RuntimeError, message and all, arises on the same cases.
ENFORCE_SORTED = Mistake(
    "enforce_sorted",
    "the encoder packs with enforce_sorted=True (pack_padded_sequence's default), which refuses lengths that are "
    "not in decreasing order: the contract's src_lengths come in any order, so pass enforce_sorted=False",
    edits=((F, "batch_first=True, enforce_sorted=False)", "batch_first=True, enforce_sorted=True)"),),
    paired=False,
)
NO_TOTAL_LENGTH = Mistake(
    "no_total_length",
    "the encoder unpacks without total_length, so H_enc has as many columns as the batch's longest sequence, not "
    "S: pass total_length=S to pad_packed_sequence",
    edits=(
        (
            F,
            "H_enc, _ = pad_packed_sequence(out, batch_first=True, total_length=S)",
            "H_enc, _ = pad_packed_sequence(out, batch_first=True)",
        ),
    ),
)
GREEDY_STOPS_AT_FIRST_EOS = Mistake(
    "greedy_stops_at_first_eos",
    "greedy_decode stops the whole batch as soon as one example chooses eos: each example runs until its own eos "
    "or max_len",
    edits=((F, "if not any(running):", "if not all(running):"),),
)
# The PyTorch translation tutorial picks the next token with topk(1), which among equal maxima does not return
# the smallest id.
GREEDY_TOPK = Mistake(
    "greedy_topk",
    "greedy_decode picks the next token with topk(1), which among equal largest logits may return another id "
    "than the smallest: the contract's choice is argmax, the first maximum",
    edits=((F, "y = logits.argmax(dim=-1)  # (B,)", "y = logits.topk(1, dim=-1).indices[:, 0]  # (B,)"),),
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

# Teacher forcing one step late, in the two shapes public code gives it. pytorch-seq2seq fills outputs[0] with
# zeros and step t from trg[t - 1] (its loss drops position 0); the PyTorch translation tutorial starts from its
# own SOS and then feeds target[:, i], so fed the contract's tgt_in (which starts with bos) bos comes twice.
STEPS = "        logits = []\n        for i in range(tgt_in.shape[1]):\n"
OUTPUTS_FROM_ONE = Mistake(
    "outputs_from_one",
    "the logits are one position late: position 0 holds zeros and position i the step fed tgt_in[:, i - 1] "
    "(pytorch-seq2seq's outputs[0] left empty); the contract's step i is fed tgt_in[:, i] and gives logits[:, i]",
    edits=(
        (
            F,
            STEPS,
            "        logits = [c.new_zeros(tgt_in.shape[0], self.decoder.out.out_features)]\n"
            "        for i in range(1, tgt_in.shape[1]):\n",
        ),
        (F, FED, FED.replace("tgt_in[:, i]", "tgt_in[:, i - 1]")),
    ),
)
BOS_FED_TWICE = Mistake(
    "bos_fed_twice",
    "the first two steps are both fed tgt_in[:, 0] and step i > 0 tgt_in[:, i - 1]: the decoder starts from its "
    "own bos and then feeds the target from its first token, but tgt_in already starts with bos; step i must be "
    "fed tgt_in[:, i]",
    edits=((F, FED, FED.replace("tgt_in[:, i]", "tgt_in[:, max(i - 1, 0)]")),),
)
# CS224N's enc_masks are True at the padding; handed to an attention whose mask is True at the real positions.
MASK_INVERTED = Mistake(
    "mask_inverted",
    "the attention is given the mask inverted, True at the padding (as CS224N's enc_masks are): the contract's "
    "mask is True at the real positions j < src_lengths[b]",
    edits=(
        (
            F,
            "        mask = source_mask(src, src_lengths)  # (B, S)\n        h = c",
            "        mask = ~source_mask(src, src_lengths)  # (B, S)\n        h = c",
        ),
    ),
)
# pytorch-seq2seq's create_mask: src != src_pad_idx, where the contract's padding may hold any id.
MASK_FROM_PAD_ID = Mistake(
    "mask_from_pad_id",
    "the mask is built from the ids (src != 0), so a padded position holding another id is attended to and a "
    "real token 0 is not: the contract's mask comes from src_lengths alone, True at j < src_lengths[b]",
    edits=(
        (
            F,
            "return torch.arange(S, device=src.device) < src_lengths.to(src.device)[:, None]  # (B, S)",
            "return src != 0  # (B, S)",
        ),
    ),
)

# These two and the ones below marked paired=False are tried alone, never in a pair: a check tries pairs only
# among at most MAX_PAIRED mistakes, and these would take them from the seven it has.
LOGITS_FROM_PREVIOUS = Mistake(
    "logits_from_previous_state",
    "the logits are computed from h_{i-1}, the state the step was given; the contract's come from the new "
    "state h_i alone: logits = out(h_i)",
    edits=((F, LOGITS, "logits = self.out(h_prev)  # (B, V)"),),
    paired=False,
)
BILINEAR_IGNORES_W = Mistake(
    "bilinear_ignores_W",
    "'bilinear' scores as 'dot': W never reaches the attention, so h^d W h^e is h^d h^e whatever W holds",
    edits=((F, BILINEAR_W, "None)"),),
    paired=False,
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

# The PyTorch chatbot tutorial's Attn: the softmax over every position, no mask (here the padded rows zeroed, as
# its port does: their score is 0, not -inf). On forward the encoder's padded rows are 0 already, and
# ATTEND_PADDING, tried first, says the same.
SCORES_UNMASKED = Mistake(
    "scores_unmasked",
    "the padded rows of H_enc are zeroed but their scores are not masked: a padded position scores 0 and takes "
    "a share of the softmax; set the padded scores to -inf before it",
    edits=((F, MASK_SCORES, ""),),
)

# d2l's masked_softmax takes valid lengths: the contract's mask turned into lengths (mask.sum(-1)) masks a
# prefix of each row, wrong for a mask that is not one.
MASK_AS_LENGTHS = Mistake(
    "mask_as_lengths",
    "the mask is turned into lengths (mask.sum(-1), as d2l's masked_softmax takes valid_lens) and the first "
    "that many positions are attended to: right only where the mask is a prefix; use the mask itself",
    edits=(
        (
            F,
            MASK_SCORES,
            "    scores = scores.masked_fill(\n"
            "        torch.arange(scores.shape[-1], device=scores.device) >= mask.sum(dim=-1, keepdim=True), "
            'float("-inf")\n    )\n',
        ),
    ),
    paired=False,
)
ATTENTION_MISTAKES = (ATTEND_PADDING, SOFTMAX_WRONG_AXIS, W_TRANSPOSED, SCALED_SCORES)
# The attention check's own three besides, which its large, inf-holding and junk-holding cases show.
ATTENTION_CHECK_MISTAKES = (
    *ATTENTION_MISTAKES,
    SOFTMAX_WITHOUT_MAX,
    PADDED_ROWS_KEPT,
    SCORES_UNMASKED,
    MASK_AS_LENGTHS,
)
STEP_MISTAKES = (*ATTENTION_MISTAKES, SCORES_FROM_NEW_STATE, CONTEXT_FIRST, PREVIOUS_CONTEXT)
# The step's own two beyond its seven, tried alone.
STEP_CHECK_MISTAKES = (*STEP_MISTAKES, LOGITS_FROM_PREVIOUS, BILINEAR_IGNORES_W)
# The step's own two beyond its seven (which it tries in pairs) are named where forward runs it.
FORWARD_MISTAKES = (
    H_N_PADDED_END,
    *STEP_MISTAKES,
    H0_ZERO,
    FEEDS_PREDICTIONS,
    STATE_NOT_CARRIED,
    LOGITS_FROM_PREVIOUS,
    BILINEAR_IGNORES_W,
    # (not scores_unmasked: forward's answers under it are attend_padding's, which the attention check tells apart)
    OUTPUTS_FROM_ONE,
    BOS_FED_TWICE,
    MASK_INVERTED,
    MASK_FROM_PAD_ID,
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
# The PyTorch chatbot tutorial's maskNLLLoss: -log(gather(softmax)), the log of a probability that underflows
# to 0 for logits of about 1e4.
LOSS_LOG_OF_SOFTMAX = Mistake(
    "loss_log_of_softmax",
    "the loss takes the log of the softmax's probability, -log(softmax(logits)[target]), as the PyTorch "
    "chatbot tutorial's maskNLLLoss does: for logits of about 1e4 that probability underflows to 0 and its log "
    "to -inf; use log_softmax, or log(sum(exp(z))) - z[target] with each row's maximum subtracted",
    edits=(
        (
            F,
            "nll = torch.log(torch.exp(z).sum(dim=-1)) - z.gather(-1, y[:, None])[:, 0]  # (N,)",
            "nll = -torch.log(torch.softmax(z, dim=-1).gather(-1, y[:, None])[:, 0])  # (N,)",
        ),
    ),
    paired=False,
)
LOSS_MISTAKES = (
    LOSS_OVER_PADS,
    LOSS_MEAN_OF_MEANS,
    LOSS_UNSTABLE,
    LOSS_MASK_MULTIPLIED,
    LOSS_PER_SENTENCE,
    LOSS_MEAN_OVER_ALL_STEPS,
    LOSS_SUM_OF_STEP_MEANS,
    LOSS_LOG_OF_SOFTMAX,
)
GREEDY_MISTAKES = (
    GREEDY_KEEPS_BOS,
    GREEDY_KEEPS_EOS,
    GREEDY_NO_STOP,
    H0_ZERO,
    GREEDY_ONE_MORE,
    GREEDY_TOPK,
    GREEDY_STOPS_AT_FIRST_EOS,
)
# The scenario seeds torch's global generator (apart from the one it passes), so that an order drawn from it is
# the same in the grader's run and the child's.
TRAIN_GLOBAL_GENERATOR = Mistake(
    "train_global_generator",
    "train draws each epoch's order with torch.randperm(len(batches)) from torch's global generator instead of "
    "the generator it is given, so the same generator does not give the same training",
    edits=(
        (
            F,
            "order = torch.randperm(len(batches), generator=generator, device=generator.device)",
            "order = torch.randperm(len(batches))",
        ),
    ),
)
TRAIN_MISTAKES = (TRAIN_NO_ZERO_GRAD, TRAIN_OPTIMIZER_PER_EPOCH, TRAIN_BATCHES_IN_ORDER, TRAIN_GLOBAL_GENERATOR)

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
