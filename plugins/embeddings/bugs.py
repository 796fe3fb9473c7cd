"""The catalogue of realistic embeddings bugs: one each, as edits of the reference.

`loses` names the checks that must lose points and words their feedback must
contain (the known mistake named, where the grader knows it). A bug in one
component loses on its own checks only, where the checks that compose it pass
with the grader's stand-in for it. Tests prove the graders with
every bug; the demo grades a submission with the `demo` ones. The bugs that
are known mistakes make the very edits of `mistakes.py`.
"""

from __future__ import annotations

from lmgrade import Bug, Mistake

from . import mistakes as M

BPE, W2V, FFNN = "bpe.py", "word2vec.py", "ffnn_lm.py"


def _made(mistake: Mistake, what: str, loses: dict[str, str], demo: bool = False) -> Bug:
    """The bug a student makes when they make `mistake` (`Bug.from_mistake`, in this file's argument order)."""
    return Bug.from_mistake(mistake, loses, what, demo=demo)


BUGS = {
    # --- bpe.py ---
    "ties_by_first_occurrence": _made(
        M.TIES_FIRST,
        "train_bpe takes the first pair found among those of the highest count.",
        {"train_bpe": "which pair occurs first"},
        demo=True,
    ),
    "merged_by_string_replace": _made(
        M.STRING_REPLACE,
        'a merge replaces "a b" in " ".join(symbols), then splits on spaces again.',
        {"train_bpe": "joined by spaces", "encode_word": "joined by spaces"},
    ),
    "overlapping_replacement": _made(
        M.OVERLAP,
        "every adjacent occurrence of the pair is merged, overlapping ones too.",
        {"train_bpe": "overlapping occurrences", "encode_word": "overlapping occurrences"},
    ),
    "end_forgotten": _made(
        M.NO_END, "train_bpe starts each word from its characters alone, without END.", {"train_bpe": "without END"}
    ),
    "counts_ignored": _made(
        M.UNWEIGHTED,
        "train_bpe counts each word's pairs once, whatever the word's count.",
        {"train_bpe": "not weighted by the word's count"},
    ),
    "no_early_stop": Bug(
        "train_bpe goes on after the last pair is merged, taking min() of no pairs.",
        BPE,
        (("while len(merges) < num_merges and pair_count:", "while len(merges) < num_merges:"),),
        {"train_bpe": "ValueError"},
    ),
    "longest_first": _made(
        M.ENCODE_LONGEST_FIRST,
        "encode_word matches the longest known symbol from the left, WordPiece style.",
        {"encode_word": "longest symbol first"},
    ),
    "earliest_present_pair": _made(
        M.ENCODE_EARLIEST_PAIR,
        "encode_word merges, at each step, the present pair learned earliest (minbpe's loop).",
        {"encode_word": "learned earliest"},
    ),
    "noise_power_in_place": Bug(
        "noise_distribution raises the counts to the power in place (counts **= power).",
        W2V,
        (
            (
                "    weights = np.asarray(counts, dtype=np.float64) ** power  # (V,)",
                "    weights = np.asarray(counts, dtype=np.float64)  # (V,)\n    weights **= power",
            ),
        ),
        {"no_mutation": "noise_distribution"},
    ),
    "split_on_one_space": _made(
        M.SPLIT_ON_SPACE, "encode splits the text on single spaces.", {"encode": 'text.split(" ")'}
    ),
    "last_space_kept": _made(
        M.DECODE_KEEPS_LAST, "decode keeps the space of the last END.", {"decode": "ends with a space"}
    ),
    "no_validation": Bug(
        "train_bpe checks neither num_merges nor the words and their counts.",
        BPE,
        (
            (
                '    if num_merges < 0:\n        raise ValueError(f"num_merges must be >= 0, got {num_merges!r}")\n'
                "    for word, count in word_counts.items():\n        if not word:\n"
                '            raise ValueError("a word of word_counts is empty")\n        if count < 1:\n'
                '            raise ValueError(f"the count of {word!r} is {count!r}; counts must be >= 1")\n',
                "",
            ),
        ),
        {"bad_arguments": "expected 'ValueError', got 'no exception'"},
    ),
    # --- word2vec.py ---
    "sigmoid_overflows": _made(
        M.SIGMOID_OVERFLOW, "sigmoid is 1 / (1 + exp(-x)) as written.", {"sigmoid": "overflows in exp"}
    ),
    "window_counts_the_centre": _made(
        M.PAIRS_CENTRE,
        "skipgram_pairs forgets to skip t' = t.",
        {"skipgram_pairs": "includes the centre word"},
    ),
    "pairs_across_the_edge": _made(
        M.PAIRS_WRAP,
        "skipgram_pairs takes positions modulo the length instead of clipping them.",
        {"skipgram_pairs": "wraps around"},
    ),
    "window_short_on_the_right": _made(
        M.PAIRS_SHORT_RIGHT,
        "skipgram_pairs loops over range(t - window, t + window), leaving t + window out.",
        {
            "skipgram_pairs": "one short on the right",
        },
    ),
    "counts_not_raised": _made(
        M.NO_POWER,
        "noise_distribution forgets the power.",
        {"noise_distribution": "not raised to the power"},
    ),
    "power_after_normalising": _made(
        M.POWER_AFTER_NORMALISING,
        "noise_distribution returns (counts / counts.sum()) ** power.",
        {
            "noise_distribution": "normalised first and then raised to the power",
        },
    ),
    "positive_term_sign": _made(
        M.POSITIVE_SIGN,
        "the positive term's sign is flipped, in the loss and its gradient alike.",
        {
            "sgns_loss": "positive term has the wrong sign",
            "sgns_grads": "positive term has the wrong sign",
        },
    ),
    "log_one_minus_sigmoid": _made(
        M.UNSTABLE_LOG, "sgns_loss takes the log of sigmoids.", {"sgns_loss": "-logaddexp(0, -x)"}
    ),
    "dw_without_negatives": _made(
        M.DW_WITHOUT_NEGATIVES,
        "d loss / d w_vec forgets the negatives.",
        {"sgns_grads": "leaves out the negatives' term"},
    ),
    "c_updated_before_w_gradient": _made(
        M.C_BEFORE_W,
        "step updates C, then takes W's gradient with the new C.",
        {
            # step has no stand-in (what it leaves in W and C is SkipGram's state), but its mistake is named:
            # train and no_mutation, whose answers are exactly that mistake's, are paid.
            "step": "C is updated before W's gradient is taken",
        },
        demo=True,
    ),
    "w_updated_before_c_gradient": _made(
        M.W_BEFORE_C,
        "step updates W, then takes C's gradients with the new W.",
        {
            "step": "W is updated before C's gradients are taken",
        },
    ),
    "updates_one_at_a_time": _made(
        M.SEQUENTIAL_UPDATES,
        "step updates the context, then each negative in turn, word2vec.c style.",
        {
            "step": "word2vec.c's order",
        },
    ),
    "repeated_negatives_not_added": _made(
        M.NEGATIVES_OVERWRITE, "step updates C[negatives] with fancy indexing.", {"step": "buffered fancy indexing"}
    ),
    "loss_after_the_update": _made(
        M.LOSS_AFTER_STEP, "step returns the loss after updating.", {"step": "after the update"}
    ),
    "c_init_random": _made(M.C_RANDOM, "SkipGram draws C like W.", {"skipgram_init": "C is drawn like W"}),
    "negatives_uniform": _made(M.UNIFORM_NEGATIVES, "train draws negatives without p.", {"train": "drawn uniformly"}),
    "negatives_drawn_before_the_permutation": _made(
        M.NEGATIVES_BEFORE_SHUFFLE,
        "train draws every pair's negatives at the start of the epoch, before rng.permutation.",
        {"train": "before rng.permutation"},
    ),
    "epoch_loss_summed": _made(M.EPOCH_SUM, "train returns each epoch's summed loss.", {"train": "the sum over"}),
    "dot_product_not_cosine": _made(
        M.DOT_PRODUCT, "most_similar ranks by dot products.", {"most_similar": "dot product"}
    ),
    "ties_by_larger_id": _made(
        M.TIES_LARGER_ID, "most_similar sorts ascending and reverses.", {"most_similar": "larger id first"}
    ),
    "negatives_mutated": Bug(
        "step sorts the caller's negatives in place.",
        W2V,
        (
            (
                "        w_vec, c_vec, neg_vecs = self.W[w]",
                "        negatives.sort()\n        w_vec, c_vec, neg_vecs = self.W[w]",
            ),
        ),
        {"no_mutation": "negatives"},
    ),
    # --- ffnn_lm.py ---
    "context_newest_first": _made(
        M.NEWEST_FIRST,
        "forward concatenates the context's embeddings newest first.",
        {"ffnn_forward": "newest first"},
        demo=True,
    ),
    "hidden_without_tanh": _made(M.NO_TANH, "forward leaves out the tanh.", {"ffnn_forward": "has no tanh"}),
    "no_padding": _made(
        M.NO_PADDING,
        "make_examples starts at t = n, without padded examples.",
        {"make_examples": "get no (padded) example"},
    ),
    "examples_newest_first": _made(
        M.EXAMPLES_NEWEST_FIRST,
        "make_examples reverses each context, newest token first.",
        {
            "make_examples": "newest first",
        },
    ),
    "epoch_loss_mean_of_batches": _made(
        M.MEAN_OF_BATCHES, "train_ffnn averages its batches' losses.", {"train_ffnn": "mean of its batches' losses"}
    ),
    "gradients_not_zeroed": _made(M.NO_ZERO_GRAD, "train_ffnn never calls zero_grad.", {"train_ffnn": "never zeroed"}),
    "one_order_for_every_epoch": _made(
        M.ONE_ORDER, "train_ffnn draws one order before the epochs.", {"train_ffnn": "drawn once"}
    ),
    "randperm_without_generator": _made(
        M.RANDPERM_GLOBAL,
        "train_ffnn calls torch.randperm(N) without the generator.",
        {"train_ffnn": "global generator"},
    ),
    "perplexity_mean": _made(
        M.PERPLEXITY_MEAN, "perplexity averages per-example perplexities.", {"perplexity": "per-example"}
    ),
    "perplexity_exp_of_bits": _made(
        M.PERPLEXITY_EXP_OF_BITS, "perplexity takes exp of the mean NLL in bits.", {"perplexity": "in bits (log2)"}
    ),
    # Conventions of public code (tests/submissions/ports/embeddings/bugs/), each its known mistake.
    "end_joined_to_the_last_character": _made(
        M.END_JOINED,
        "words start as subword-nmt writes them, END glued to the last character.",
        {"train_bpe": "glued to each word's last character", "encode_word": "glued to each word's last character"},
    ),
    "loss_mean_over_the_k_plus_1_scores": _made(
        M.LOSS_MEAN_OVER_SCORES, "sgns_loss averages its K + 1 terms (d2l's SigmoidBCELoss).", {"sgns_loss": "mean"}
    ),
    "sigmoid_saturated_past_6": _made(
        M.SIGMOID_SATURATED, "sgns_grads saturates σ past |f| = 6 (word2vec.c's MAX_EXP).", {"sgns_grads": "MAX_EXP"}
    ),
    "negatives_redrawn_while_equal_to_the_context": _made(
        M.NEGATIVES_REDRAWN,
        "train draws each negative alone, again while it equals c (CS224N's getNegativeSamples).",
        {"train": "drawn again while it equals the context word"},
    ),
    "hidden_relu": _made(M.RELU_HIDDEN, "the hidden layer is a ReLU.", {"ffnn_forward": "ReLU"}),
    "adam_instead_of_sgd": _made(M.ADAM, "train_ffnn steps with Adam.", {"train_ffnn": "torch.optim.Adam"}),
}
