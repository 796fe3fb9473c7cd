"""A catalogue of buggy ngram.py implementations, one realistic bug each.

Each bug is an edit of the reference (the lines as written, and what a
student wrote instead), so the catalogue stays in step with the reference:
an edit whose lines are gone from the reference fails loudly, not silently.
`loses` names the checks that must lose points and words their feedback must
contain (the known mistake named, where the grader knows it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

REFERENCE = Path(__file__).resolve().parents[1] / "reference" / "ngram.py"


@dataclass(frozen=True)
class Bug:
    what: str
    edits: tuple[tuple[str, str], ...]
    loses: dict[str, str] = field(default_factory=dict)

    def source(self) -> str:
        text = REFERENCE.read_text()
        text = text[text.index("from __future__"):]  # the reference's docstring goes
        for old, new in self.edits:
            if text.count(old) != 1:
                raise AssertionError(f"the reference no longer has exactly one {old!r}")
            text = text.replace(old, new)
        return f'"""A buggy ngram.py: {self.what}"""\n\n' + text

    def write(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "ngram.py").write_text(self.source())
        return folder


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
        ((PAD, "    return [BOS] * (n - 1) + list(sentence) + [EOS] * (n - 1)\n"),),
        {"pad": "n - 1 EOS markers", "count_ngrams": "n - 1 EOS markers", "prob_mle": ""}),
    "no_bos_padding": Bug(
        "pad does not add the BOS markers.",
        ((PAD, "    return list(sentence) + [EOS]\n"),),
        {"pad": "not padded with n - 1 BOS", "count_ngrams": "BOS"}),
    "bos_in_vocab": Bug(
        "the vocabulary keeps BOS.",
        ((VOCAB, "self.vocab = {tok for s in corpus for tok in pad(s, self.n)} | {UNK}"),),
        {"fit": "BOS is counted in the vocabulary", "prob_add_k": "BOS is counted"}),
    "no_unk_in_vocab": Bug(
        "the vocabulary lacks UNK.",
        ((VOCAB, "self.vocab = {tok for s in corpus for tok in pad(s, self.n) if tok != BOS}"),),
        {"fit": "UNK is not added", "prob_add_k": "UNK is not added"}),
    "add_k_denominator": Bug(
        "add-k adds k, not k * len(vocab), to the denominator.",
        (("(c_ctx + self.k * len(self.vocab))", "(c_ctx + self.k)"),),
        {"prob_add_k": "adds k to the context count"}),
    "unseen_context_division": Bug(
        "MLE divides by zero for an unseen context.",
        (("return c_ctx_w / c_ctx if c_ctx else 0.0", "return c_ctx_w / c_ctx"),),
        {"prob_mle": "ZeroDivisionError"}),
    "context_not_truncated": Bug(
        "prob uses the context from position n - 1 on, not its last n - 1 tokens.",
        (("last[-(self.n - 1) :]", "last[self.n - 1 :]"),),
        {"prob_mle": "wrong value"}),
    "context_must_be_a_list": Bug(
        "prob concatenates the context to a list, so a tuple context raises TypeError.",
        (("last = [BOS] * (self.n - 1) + list(context)", "last = [BOS] * (self.n - 1) + context"),),
        {"prob_mle": "TypeError"}),
    "log_base_2": Bug(
        "logprob uses log base 2.",
        (("total += math.log(p)", "total += math.log2(p)"),),
        {"logprob": "base 2", "perplexity": "base 2"}),
    "logprob_without_eos": Bug(
        "logprob leaves out the final EOS.",
        (("for t in range(self.n - 1, len(padded)):\n            p = self.prob",
          "for t in range(self.n - 1, len(padded) - 1):\n            p = self.prob"),),
        {"logprob": "final EOS is not predicted"}),
    "log_of_zero": Bug(
        "logprob calls math.log(0) instead of returning -inf.",
        (("            if p == 0.0:\n                return -math.inf\n", ""),),
        {"logprob": "ValueError", "perplexity": "ValueError"}),
    "perplexity_mean_of_sentences": Bug(
        "perplexity averages per-sentence perplexities.",
        ((PERPLEXITY, "        return sum(math.exp(-self.logprob(s) / (len(s) + 1)) for s in corpus) / len(corpus)"),),
        {"perplexity": "averaged over sentences", "perplexity_hidden": "averaged"}),
    "perplexity_without_eos": Bug(
        "perplexity counts len(s) tokens per sentence, leaving out EOS.",
        (("sum(len(s) + 1 for s in corpus)", "sum(len(s) for s in corpus)"),),
        {"perplexity": "leaves out the EOS"}),
    "sample_global_random": Bug(
        "sample draws from numpy's global generator, not rng.",
        ((DRAW, DRAW.replace("rng.choice", "numpy.random.choice")),),
        {"sample": "same seed gave different draws"}),
    "sample_greedy": Bug(
        "sample always takes the most likely word.",
        ((DRAW, "rng.random()\n            word = words[int(numpy.argmax(self._distribution(words, tuple(context))))]"),),
        {"sample": "ignores rng"}),
    "sample_stale_context": Bug(
        "sample never moves the context forward.",
        (("            context = context[1:] + [word] if self.n > 1 else context\n", ""),),
        {"sample": "do not follow p(. | context)"}),
    "sample_never_stops": Bug(
        "sample ignores max_len and skips EOS: it never returns.",
        (("        while len(out) < max_len:\n", "        while True:\n"),
         ("            if word == EOS:\n                break", "            if word == EOS:\n                continue")),
        {"sample": "time limit exceeded"}),
    "count_ngrams_missing": Bug(
        "count_ngrams is left unimplemented; NGramLM counts on its own, so sample keeps its points.",
        (("def count_ngrams(corpus", "def _count(corpus"),
         ("self.counts = count_ngrams(corpus, self.n)", "self.counts = _count(corpus, self.n)"),
         ("class NGramLM:", "def count_ngrams(corpus, n):\n    raise NotImplementedError\n\n\nclass NGramLM:")),
        {"count_ngrams": "not implemented"}),
    "pad_mutates": Bug(
        "pad appends EOS to the caller's list.",
        ((PAD, "    sentence.append(EOS)\n    return [BOS] * (n - 1) + sentence\n"),),
        {"no_mutation": "wrong"}),
    "no_validation": Bug(
        "nothing checks n >= 1 or k >= 0.",
        (("    if isinstance(n, bool) or not isinstance(n, int) or n < 1:\n"
          "        raise ValueError(f\"n must be an integer >= 1, got {n!r}\")\n", "    pass\n"),
         ("        if isinstance(k, bool) or not isinstance(k, (int, float)) or not k >= 0 or math.isinf(k):\n"
          "            raise ValueError(f\"k must be a finite number >= 0, got {k!r}\")\n", "")),
        {"bad_arguments": "expected 'ValueError', got 'no exception'"}),
}
