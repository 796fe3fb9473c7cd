"""The catalogue of realistic seq2seq bugs: one each, as edits of the reference.

`loses` names the checks that must lose points and words their feedback must
contain (the known mistake named, where the grader knows it). Tests prove the
graders with every bug; the demo grades a submission with the `demo` ones.
The bugs that are known mistakes make the very edits of `mistakes.py`.
"""

from __future__ import annotations

from lmgrade import Bug, Mistake

from . import mistakes as M
from .mistakes import MASK_SCORES, ZERO_PADDED

F = "seq2seq.py"

EMBED_SRC = "x = self.embed(src.masked_fill(~mask, 0))  # (B, S, E)"
SORTED = "batch_first=True, enforce_sorted=False)"
EMPTY_ROW = """    if not mask.any(dim=-1).all():
        raise ValueError("every row of mask needs at least one True position to attend to")
"""
LENGTH_RANGE = "if B and (src_lengths.min() < 1 or src_lengths.max() > S):"
KIND_CHECK = "if not isinstance(attention, str) or attention not in ATTENTION_KINDS:"
MEAN = "return nll.sum() / nll.shape[0]"
NLL = "nll = torch.log(torch.exp(z).sum(dim=-1)) - z.gather(-1, y[:, None])[:, 0]  # (N,)"

# What the checks print: a numeric comparison's failure, a property that does not hold.
VALUES, VALUE = "values wrong", "wrong value"
NOTHING = "the property does not hold"


def _as_bug(mistake: Mistake, what: str, loses: dict[str, str], demo: bool = False) -> Bug:
    """The bug a student makes by making `mistake`: its edits, all in one file."""
    return Bug(what, F, tuple((old, new) for _, old, new in mistake.edits), loses, demo)


BUGS = {
    # --- Encoder ---
    "h_n_padded_end": _as_bug(
        M.H_N_PADDED_END,
        "the encoder runs the GRU over the padded batch and takes its h_n, the state after the padding.",
        {"encoder": "after the padded end"},
        demo=True,
    ),
    "encoder_enforce_sorted": _as_bug(
        M.ENFORCE_SORTED,
        "the encoder packs with enforce_sorted=True, which refuses lengths in any order but decreasing.",
        {
            "encoder": "enforce_sorted=True (pack_padded_sequence's default)",
            # Every check whose lengths are not in decreasing order: torch's RuntimeError.
            "init": "RuntimeError",
            "teacher_forcing": "",
            "no_mutation": "",
            "bad_arguments": "",
        },
    ),
    "encoder_no_total_length": _as_bug(
        M.NO_TOTAL_LENGTH,
        "the encoder unpacks without total_length, so H_enc has as many columns as the longest sequence, not S.",
        {"encoder": "pass total_length=S"},
    ),
    "src_masked_in_place": Bug(
        "the encoder writes 0 into the padded positions of the src tensor it was given.",
        F,
        ((EMBED_SRC, "src.masked_fill_(~mask, 0)\n        x = self.embed(src)"),),
        {"no_mutation": NOTHING},
    ),
    # --- attention ---
    "attend_padding": _as_bug(
        M.ATTEND_PADDING,
        "the attention ignores the mask.",
        {"attention": "get attention weights", "alpha_rows": NOTHING},
    ),
    "softmax_wrong_axis": _as_bug(
        M.SOFTMAX_WRONG_AXIS,
        "the attention softmax runs over dim=0.",
        {"attention": "over the batch", "alpha_rows": NOTHING},
    ),
    "w_transposed": _as_bug(
        M.W_TRANSPOSED,
        "the bilinear score is computed with W.T.",
        {"attention": "W transposed"},
        demo=True,
    ),
    "scaled_scores": _as_bug(
        M.SCALED_SCORES,
        "the attention scores are divided by sqrt(hidden_size).",
        {"attention": "divided by sqrt(hidden_size)"},
    ),
    "additive_mask": Bug(
        "the attention adds -1e9 to the padded scores instead of setting them to -inf, and keeps the padded rows.",
        F,
        ((ZERO_PADDED, ""), (MASK_SCORES, "    scores = scores + padded * -1e9\n")),
        {"attention": "get attention weights"},
    ),
    "softmax_without_max": _as_bug(
        M.SOFTMAX_WITHOUT_MAX,
        "the attention softmax is exp(scores) / sum(exp(scores)), without subtracting the row's maximum.",
        {"attention": "without subtracting each row's maximum"},
    ),
    "padded_rows_kept": _as_bug(
        M.PADDED_ROWS_KEPT,
        "the attention weighs the padded rows of H_enc by alpha = 0 instead of zeroing them: right values, but a "
        "float32 row of 1e38 makes the backward nan.",
        {"attention": "but not zeroed"},
    ),
    "empty_mask_row_accepted": Bug(
        "attention never checks that every row of mask has a True position: such a row gives nan weights.",
        F,
        ((EMPTY_ROW, ""),),
        {"bad_arguments": "ValueError"},
    ),
    # --- Decoder.step ---
    "scores_from_new_state": _as_bug(
        M.SCORES_FROM_NEW_STATE,
        "step runs the cell first and takes the attention scores from the new state (Luong's order).",
        {"step": "from a new state"},
    ),
    "context_first": _as_bug(
        M.CONTEXT_FIRST,
        "step feeds the cell [context; embedding].",
        {"step": "[c_i; embedding]"},
    ),
    "previous_context": _as_bug(
        M.PREVIOUS_CONTEXT,
        "step feeds the cell the previous step's context.",
        {"step": "context of the previous step"},
    ),
    "logits_from_previous_state": _as_bug(
        M.LOGITS_FROM_PREVIOUS,
        "step computes the logits from h_prev instead of the new state.",
        {"step": "from the new state h_i alone"},
    ),
    "bilinear_ignores_W": _as_bug(
        M.BILINEAR_IGNORES_W,
        "step never passes W to the attention, so 'bilinear' scores like 'dot'.",
        {"step": "'bilinear' scores as 'dot'"},
    ),
    "unknown_attention_accepted": Bug(
        "the decoder never checks the attention kind: an unknown one behaves as 'dot'.",
        F,
        ((KIND_CHECK, "if not isinstance(attention, str):"),),
        {"bad_arguments": "ValueError"},
    ),
    # --- Seq2Seq.forward ---
    "h0_zero": _as_bug(
        M.H0_ZERO,
        "the decoder starts from zeros instead of the encoder's h_n.",
        {
            "forward": "starts from zeros",
            "forward_hidden": "starts from zeros",
            "greedy_decode": "starts from zeros",
            "teacher_forcing": NOTHING,
        },
        demo=True,
    ),
    "feeds_predictions": _as_bug(
        M.FEEDS_PREDICTIONS,
        "forward feeds each step the previous argmax instead of tgt_in.",
        {"forward": "argmax", "forward_hidden": "argmax", "teacher_forcing": NOTHING},
    ),
    "state_not_carried": _as_bug(
        M.STATE_NOT_CARRIED,
        "forward gives every step h_prev = c: the decoder's state is never carried from one step to the next.",
        {"forward": "given c as its previous state", "forward_hidden": VALUE, "teacher_forcing": NOTHING},
    ),
    # --- masked_cross_entropy ---
    "loss_over_pads": _as_bug(
        M.LOSS_OVER_PADS,
        "masked_cross_entropy averages over the pads too.",
        {"masked_cross_entropy": "padded ones too"},
    ),
    "loss_mean_of_means": _as_bug(
        M.LOSS_MEAN_OF_MEANS,
        "masked_cross_entropy averages the per-sequence means.",
        {"masked_cross_entropy": "mean of per-sequence means"},
    ),
    "loss_unstable": _as_bug(
        M.LOSS_UNSTABLE,
        "masked_cross_entropy takes log(sum(exp(logits))) without the max shift.",
        {"masked_cross_entropy": "without subtracting each row's maximum"},
    ),
    "loss_mask_multiplied": _as_bug(
        M.LOSS_MASK_MULTIPLIED,
        "masked_cross_entropy computes every position's loss and multiplies by the mask: nan logits at a pad "
        "make the loss nan.",
        {"masked_cross_entropy": "multiplied by the mask"},
    ),
    # --- greedy_decode ---
    "greedy_keeps_bos": _as_bug(
        M.GREEDY_KEEPS_BOS,
        "greedy_decode starts each list with bos.",
        {"greedy_decode": "returns bos"},
    ),
    "greedy_keeps_eos": _as_bug(
        M.GREEDY_KEEPS_EOS,
        "greedy_decode keeps the eos it stops at.",
        {"greedy_decode": "keeps the eos"},
    ),
    "greedy_no_stop": _as_bug(
        M.GREEDY_NO_STOP,
        "greedy_decode never stops at eos.",
        {"greedy_decode": "does not stop at eos"},
    ),
    "greedy_one_step_more": _as_bug(
        M.GREEDY_ONE_MORE, "greedy_decode runs max_len + 1 steps.", {"greedy_decode": "max_len + 1 steps"}
    ),
    "greedy_batch_stops_at_first_eos": _as_bug(
        M.GREEDY_STOPS_AT_FIRST_EOS,
        "greedy_decode stops the whole batch as soon as one example chooses eos.",
        {"greedy_decode": "stops the whole batch"},
    ),
    # --- train ---
    "train_no_zero_grad": _as_bug(
        M.TRAIN_NO_ZERO_GRAD,
        "train never zeroes the gradients, so they accumulate over the steps.",
        {"train": "zero_grad"},
    ),
    "train_optimizer_per_epoch": _as_bug(
        M.TRAIN_OPTIMIZER_PER_EPOCH,
        "train makes a new Adam at every epoch, so its moments restart.",
        {"train": "new Adam every epoch"},
    ),
    "train_batches_in_order": _as_bug(
        M.TRAIN_BATCHES_IN_ORDER,
        "train draws the permutation but takes the batches in their given order.",
        {"train": "in their given order"},
    ),
    "train_global_generator": Bug.from_mistake(
        M.TRAIN_GLOBAL_GENERATOR,
        {"train": VALUE},
        "train draws the order from torch's global generator instead of the one given.",
    ),
    # --- conventions of public code, as the ports of tests/submissions/ports carry them ---
    "scores_unmasked": Bug.from_mistake(
        M.SCORES_UNMASKED, {"attention": "their scores are not masked", "alpha_rows": NOTHING}
    ),
    "loss_per_sentence": Bug.from_mistake(
        M.LOSS_PER_SENTENCE, {"masked_cross_entropy": "divided by the number of sentences"}
    ),
    "loss_mean_over_all_steps": Bug.from_mistake(
        M.LOSS_MEAN_OVER_ALL_STEPS, {"masked_cross_entropy": "averaged over all of its T positions"}
    ),
    "loss_sum_of_step_means": Bug.from_mistake(
        M.LOSS_SUM_OF_STEP_MEANS, {"masked_cross_entropy": "a sum over the time steps"}
    ),
    "outputs_from_one": Bug.from_mistake(
        M.OUTPUTS_FROM_ONE,
        {"forward": "one position late", "forward_hidden": "one position late", "teacher_forcing": NOTHING},
    ),
    "bos_fed_twice": Bug.from_mistake(
        M.BOS_FED_TWICE,
        {"forward": "both fed tgt_in[:, 0]", "forward_hidden": "both fed tgt_in[:, 0]", "teacher_forcing": NOTHING},
    ),
    "mask_inverted": Bug.from_mistake(
        M.MASK_INVERTED,
        {
            "forward": "the mask inverted",
            "forward_hidden": "the mask inverted",
            # Where no row has padding the inverted mask has no True entry: the contract's ValueError.
            "init": "ValueError",
            "padding_ignored": "ValueError",
            "batch_independence": "ValueError",
            "none_equals_dot": "",
            "teacher_forcing": "",
            "no_mutation": "",
            "bad_arguments": "",
        },
    ),
    "mask_from_pad_id": Bug.from_mistake(
        M.MASK_FROM_PAD_ID,
        {
            "forward": "built from the ids",
            "forward_hidden": "get attention weights",
            "padding_ignored": NOTHING,
            "batch_independence": NOTHING,
            "none_equals_dot": "",
        },
    ),
    "mask_as_lengths": Bug.from_mistake(M.MASK_AS_LENGTHS, {"attention": "turned into lengths"}),
    "loss_log_of_softmax": Bug.from_mistake(M.LOSS_LOG_OF_SOFTMAX, {"masked_cross_entropy": "underflows to 0"}),
    "greedy_topk": Bug.from_mistake(M.GREEDY_TOPK, {"greedy_decode": "topk(1)"}),
    # --- validation ---
    "lengths_unchecked": Bug(
        "src_lengths are never checked against [1, S]: a length past S fails inside the packing with RuntimeError.",
        F,
        ((LENGTH_RANGE, "if False:"),),
        {"bad_arguments": "ValueError"},
    ),
}
