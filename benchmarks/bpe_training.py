"""The reference's BPE training against a straightforward loop, and the `tokenizers` library's trainer.

    python benchmarks/bpe_training.py [--megabytes 1] [--merges 1000] [--repeat 3]

The input is generated (seeded): words made of random syllables, drawn with
Zipfian frequencies until the text is --megabytes long. All three learn
--merges merges from the same word counts:

- the reference (reference/embeddings/bpe.py): pair counts kept up to date, only the
  words a merge changes recounted;
- a straightforward loop, written here: every pair of every word recounted
  for every merge, as in Sennrich et al.'s listing;
- `tokenizers`' BpeTrainer, when it is installed (it is not a dependency of
  lmgrade): the end of a word is a character of its own there, so that its
  merges can be read in the contract's terms.

Prints each one's median time, the ratio to the reference, and whether its
merges equal the reference's (where not, the first merge that differs: the
library breaks ties by its own rule, not the smallest pair).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "reference" / "embeddings"))

from bpe import END, encode_word, train_bpe  # noqa: E402
from timing import median_time  # noqa: E402

SYLLABLES = ["ka", "to", "ri", "mu", "se", "na", "lo", "pe", "di", "ung", "ath", "er", "is", "qu", "ou", "st"]
MARK = "\u2581"  # the end of a word, as one character the text never holds


def generated_text(megabytes: float, seed: int = 0) -> str:
    """Seeded text of made-up words with Zipfian frequencies."""
    rng = np.random.default_rng(seed)
    lexicon = sorted({"".join(rng.choice(SYLLABLES, size=int(rng.integers(1, 5)))) for _ in range(20_000)})
    ranks = np.arange(1, len(lexicon) + 1)
    p = 1.0 / ranks
    words, size = [], 0
    while size < megabytes * 1e6:
        for i in rng.choice(len(lexicon), size=10_000, p=p / p.sum()):
            words.append(lexicon[i])
            size += len(lexicon[i]) + 1
    return " ".join(words)


def straightforward_bpe(word_counts: dict[str, int], num_merges: int) -> list[tuple[str, str]]:
    """Every merge: count every pair of every word, take the best, rebuild every word."""
    words = [(list(word) + [END], count) for word, count in word_counts.items()]
    merges = []
    for _ in range(num_merges):
        pairs: dict[tuple[str, str], int] = defaultdict(int)
        for symbols, count in words:
            for pair in zip(symbols, symbols[1:]):
                pairs[pair] += count
        if not pairs:
            break
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))
        merges.append(best)
        rebuilt = []
        for symbols, count in words:
            out, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                    out.append(best[0] + best[1])
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            rebuilt.append((out, count))
        words = rebuilt
    return merges


def tokenizers_bpe(word_counts: dict[str, int], num_merges: int):
    """The merges of `tokenizers`' BpeTrainer on the same words, END a character of its own; None if not installed."""
    try:
        from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    except ImportError:
        return None
    alphabet = {c for word in word_counts for c in word} | {MARK}
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    trainer = trainers.BpeTrainer(
        vocab_size=len(alphabet) + num_merges,
        min_frequency=1,
        show_progress=False,
        initial_alphabet=sorted(alphabet),
        special_tokens=[],
    )
    # The trainer counts words itself: each word once per occurrence, END marked.
    tokenizer.train_from_iterator(((word + MARK + " ") * count for word, count in word_counts.items()), trainer)
    model = __import__("json").loads(tokenizer.to_str())["model"]
    merges = [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in model["merges"]]
    return [tuple(s.replace(MARK, END) for s in m) for m in merges]


def pair_counts_after(word_counts: dict[str, int], merges: list) -> Counter:
    counts: Counter = Counter()
    for word, count in word_counts.items():
        symbols = encode_word(word, merges)
        for pair in zip(symbols, symbols[1:]):
            counts[pair] += count
    return counts


def first_difference(word_counts: dict[str, int], a: list, b: list) -> str:
    """ "equal", or the first merge where b differs from a, and both pairs' counts there."""
    if a == b:
        return "equal"
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    if i == min(len(a), len(b)):
        return f"equal for {i} merges, then one list ends"
    counts = pair_counts_after(word_counts, a[:i])
    return (
        f"differ from merge {i + 1} of {len(a)} on: {a[i]} (count {counts[a[i]]}) against {b[i]} (count {counts[b[i]]})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=1.0)
    parser.add_argument("--merges", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    text = generated_text(args.megabytes)
    word_counts = dict(Counter(text.split()))
    print(
        f"{len(text) / 1e6:.2f} MB, {len(text.split())} words, {len(word_counts)} distinct; "
        f"{args.merges} merges; median of {args.repeat}"
    )
    reference = train_bpe(word_counts, args.merges)
    t_reference = median_time(lambda: train_bpe(word_counts, args.merges), args.repeat)
    print(f"{'reference (incremental counts)':34} {t_reference:8.3f} s   1.0x")
    plain = straightforward_bpe(word_counts, args.merges)
    t_plain = median_time(lambda: straightforward_bpe(word_counts, args.merges), args.repeat)
    print(
        f"{'straightforward (recount all)':34} {t_plain:8.3f} s {t_plain / t_reference:5.1f}x   "
        f"merges {first_difference(word_counts, reference, plain)}"
    )
    library = tokenizers_bpe(word_counts, args.merges)
    if library is None:
        print("tokenizers: not installed (pip install tokenizers to compare)")
        return
    t_library = median_time(lambda: tokenizers_bpe(word_counts, args.merges), args.repeat)
    print(
        f"{'tokenizers BpeTrainer':34} {t_library:8.3f} s {t_library / t_reference:5.2f}x   "
        f"merges {first_difference(word_counts, reference, library)}"
    )


if __name__ == "__main__":
    main()
