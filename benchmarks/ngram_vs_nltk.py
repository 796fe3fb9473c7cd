"""The reference NGramLM against NLTK's `nltk.lm` on the same corpus: fitting and scoring.

    python benchmarks/ngram_vs_nltk.py [--repeat 5] [--sentences 2000]

Both fit the same generated corpus (the course's grammar, seeded) for n = 2
to 4, then score every held-out n-gram whose context was seen: the
reference (k = 0) with `prob`, NLTK's MLE with `score`. Median of --repeat;
the ratio is the reference's time divided by NLTK's (below 1: the reference is
faster). The probabilities are compared where the conventions agree (NLTK pads
the end with n - 1 markers, the contract with one): the largest difference is
printed beside the times.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from nltk.lm import MLE
from nltk.lm.preprocessing import padded_everygram_pipeline

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from timing import median_time  # noqa: E402

from lmgrade.plugins.ngram.corpus import sentences  # noqa: E402
from lmgrade.reference.ngram import ngram as ref  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sentences", type=int, default=2000)
    args = parser.parse_args()
    corpus = sentences(np.random.default_rng(0), args.sentences)
    held_out = sentences(np.random.default_rng(1), args.sentences // 10)
    print(f"{len(corpus)} training sentences, {len(held_out)} held out, median of {args.repeat}")
    print(
        f"{'model':<6} {'fit ours':>9} {'fit nltk':>9} {'ratio':>6} {'score ours':>11} {'score nltk':>11} {'ratio':>6}"
        f" {'max |diff|':>10}"
    )
    for n in (2, 3, 4):
        ours = ref.NGramLM(n)

        def theirs_fitted():
            model = MLE(n)
            train, vocab = padded_everygram_pipeline(n, corpus)
            model.fit(train, vocab)
            return model

        fit_ours = median_time(lambda: ref.NGramLM(n).fit(corpus), args.repeat)
        fit_nltk = median_time(theirs_fitted, args.repeat)
        ours.fit(corpus)
        theirs = theirs_fitted()
        # Held-out n-grams whose context the training saw, without the end marker (padded differently).
        grams = [
            (tuple(padded[i - n + 1 : i]), padded[i])
            for sentence in held_out
            for padded in [ref.pad(sentence, n)]
            for i in range(n - 1, len(padded) - 1)
        ]
        grams = [(c, w) for c, w in grams if theirs.counts[list(c)].N() > 0]
        score_ours = median_time(lambda: [ours.prob(w, c) for c, w in grams], args.repeat)
        score_nltk = median_time(lambda: [theirs.score(w, list(c)) for c, w in grams], args.repeat)
        diff = max(abs(ours.prob(w, c) - theirs.score(w, list(c))) for c, w in grams)
        name = f"n={n}"
        print(
            f"{name:<6} {fit_ours * 1e3:>7.1f}ms {fit_nltk * 1e3:>7.1f}ms {fit_ours / fit_nltk:>6.2f} "
            f"{score_ours * 1e3:>9.1f}ms {score_nltk * 1e3:>9.1f}ms {score_ours / score_nltk:>6.2f} {diff:>10.1e}"
        )


if __name__ == "__main__":
    main()
