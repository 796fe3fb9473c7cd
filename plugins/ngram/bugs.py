"""The catalogue of realistic ngram bugs: one each, as edits of the reference.

`loses` names the checks that must lose points and words their feedback must
contain (the known mistake named, where the grader knows it). Tests prove the
graders with every bug; the demo grades a submission with the `demo` ones.
"""

from __future__ import annotations

from lmgrade import Bug

from . import mistakes as M

F = "ngram.py"
PAD = "    return [BOS] * (n - 1) + list(sentence) + [EOS]\n"
VOCAB = "self.vocab = {tok for s in corpus for tok in pad(s, self.n) if tok != BOS} | {UNK}"
DRAW = "word = words[rng.choice(len(words), p=self._distribution(words, tuple(context)))]"
PERPLEXITY = """        log_likelihood = sum(self.logprob(s) for s in corpus)
        if log_likelihood == -math.inf:
            return math.inf
        return math.exp(-log_likelihood / sum(len(s) + 1 for s in corpus))"""

BUGS = {
    "eos_per_order": Bug(
        "pad ends with n - 1 EOS markers instead of one.",
        F,
        ((PAD, "    return [BOS] * (n - 1) + list(sentence) + [EOS] * (n - 1)\n"),),
        {"pad": "n - 1 EOS markers"},
        demo=True,
    ),
    "no_bos_padding": Bug(
        "pad does not add the BOS markers.",
        F,
        ((PAD, "    return list(sentence) + [EOS]\n"),),
        {"pad": "not padded with n - 1 BOS"},
    ),
    "bos_in_vocab": Bug(
        "the vocabulary keeps BOS.",
        F,
        ((VOCAB, "self.vocab = {tok for s in corpus for tok in pad(s, self.n)} | {UNK}"),),
        {"fit": "BOS is counted in the vocabulary"},
    ),
    "no_unk_in_vocab": Bug(
        "the vocabulary lacks UNK.",
        F,
        ((VOCAB, "self.vocab = {tok for s in corpus for tok in pad(s, self.n) if tok != BOS}"),),
        {"fit": "UNK is not added"},
    ),
    "add_k_denominator": Bug(
        "add-k adds k, not k * len(vocab), to the denominator.",
        F,
        (("(c_ctx + self.k * len(self.vocab))", "(c_ctx + self.k)"),),
        {"prob_add_k": "adds k to the context count"},
    ),
    "unseen_context_division": Bug.from_mistake(
        M.UNSEEN_CONTEXT_DIVISION,
        {"prob_mle": "an unseen context gives every word probability 0"},
        "MLE divides by zero for an unseen context.",
    ),
    "context_not_truncated": Bug.from_mistake(
        M.CONTEXT_NOT_TRUNCATED,
        {"prob_mle": "its last n - 1 tokens", "prob_add_k": ""},
        "prob uses the context from position n - 1 on, not its last n - 1 tokens.",
    ),
    "context_must_be_a_list": Bug.from_mistake(
        M.CONTEXT_MUST_BE_A_LIST,
        {"prob_mle": "a context given as a tuple raises TypeError"},
        "prob concatenates the context to a list, so a tuple context raises TypeError.",
    ),
    "log_base_2": Bug(
        "logprob uses log base 2.",
        F,
        (("total += math.log(p)", "total += math.log2(p)"),),
        {"logprob": "base 2"},
    ),
    "logprob_without_eos": Bug(
        "logprob leaves out the final EOS.",
        F,
        (
            (
                "for t in range(self.n - 1, len(padded)):\n            p = self.prob",
                "for t in range(self.n - 1, len(padded) - 1):\n            p = self.prob",
            ),
        ),
        {"logprob": "final EOS is not predicted"},
    ),
    "log_of_zero": Bug.from_mistake(
        M.LOG_OF_ZERO,
        {"logprob": "instead of returning -inf"},
        "logprob calls math.log(0) instead of returning -inf.",
    ),
    "perplexity_mean_of_sentences": Bug(
        "perplexity averages per-sentence perplexities.",
        F,
        ((PERPLEXITY, "        return sum(math.exp(-self.logprob(s) / (len(s) + 1)) for s in corpus) / len(corpus)"),),
        {"perplexity": "averaged over sentences", "perplexity_hidden": "averaged"},
        demo=True,
    ),
    "perplexity_without_eos": Bug(
        "perplexity counts len(s) tokens per sentence, leaving out EOS.",
        F,
        (("sum(len(s) + 1 for s in corpus)", "sum(len(s) for s in corpus)"),),
        {"perplexity": "leaves out the EOS", "perplexity_hidden": ""},
    ),
    "sample_global_random": Bug.from_mistake(
        M.SAMPLE_GLOBAL_RANDOM,
        {"sample": "same seed gave different draws"},
        "sample draws from numpy's global generator, not rng.",
    ),
    "sample_greedy": Bug(
        "sample always takes the most likely word.",
        F,
        (
            (
                DRAW,
                "rng.random()\n            word = words[int(numpy.argmax(self._distribution(words, tuple(context))))]",
            ),
        ),
        {"sample": "chooses the most likely word"},
    ),
    "sample_stale_context": Bug(
        "sample never moves the context forward.",
        F,
        (("            context = context[1:] + [word] if self.n > 1 else context\n", ""),),
        {"sample": "do not follow p(. | context)"},
    ),
    "sample_never_stops": Bug(
        "sample ignores max_len and skips EOS: it never returns.",
        F,
        (
            ("        while len(out) < max_len:\n", "        while True:\n"),
            (
                "            if word == EOS:\n                break",
                "            if word == EOS:\n                continue",
            ),
        ),
        {"sample": "time limit exceeded"},
    ),
    "count_ngrams_missing": Bug(
        "count_ngrams is left unimplemented; NGramLM counts on its own, so sample keeps its points.",
        F,
        (
            ("def count_ngrams(corpus", "def _count(corpus"),
            ("self.counts = count_ngrams(corpus, self.n)", "self.counts = _count(corpus, self.n)"),
            ("class NGramLM:", "def count_ngrams(corpus, n):\n    raise NotImplementedError\n\n\nclass NGramLM:"),
        ),
        # Its property cases are count_ngrams's own: an unimplemented function shows no property.
        {"count_ngrams": "not implemented", "no_mutation": "not implemented", "bad_arguments": "not implemented"},
    ),
    "pad_mutates": Bug.from_mistake(
        M.PAD_MUTATES,
        {
            "no_mutation": "instead of returning a new list",
            "perplexity": "instead of returning a new list",
            "perplexity_hidden": "instead of returning a new list",
        },
        "pad appends EOS to the caller's list.",
    ),
    "no_validation": Bug.from_mistake(
        M.NO_VALIDATION,
        {"bad_arguments": "nothing checks that n is an integer >= 1"},
        "nothing checks n >= 1 or k >= 0.",
    ),
    "assert_not_value_error": Bug.from_mistake(
        M.ASSERT_NOT_VALUE_ERROR,
        {"bad_arguments": "use raise ValueError, the contract asks for it"},
        "n is checked with assert, not raise ValueError.",
    ),
    "sample_seen_successors_only": Bug(
        "sample draws only from the words seen after the context, even under add-k.",
        F,
        (
            (
                "            p = numpy.array([self.prob(w, context) for w in words])\n",
                "            seen = self.counts.get(self._context(context), {})\n"
                "            p = numpy.array([self.prob(w, context) if w in seen else 0.0 for w in words])\n"
                "            p = p if p.sum() > 0 else numpy.ones(len(words))\n",
            ),
        ),
        {"sample": "draws only from the words seen after each context"},
    ),
    # --- conventions of public code, as the ports of tests/submissions/ports carry them ---
    "unk_label": Bug.from_mistake(M.UNK_LABEL, {"fit": 'the contract\'s UNK is "<unk>"'}),
    "logprob_mean": Bug.from_mistake(M.LOGPROB_MEAN, {"logprob": "by the number of predicted tokens"}),
    "unseen_context_nan": Bug.from_mistake(M.UNSEEN_CONTEXT_NAN, {"prob_mle": "0 / 0 gives nan"}),
}
