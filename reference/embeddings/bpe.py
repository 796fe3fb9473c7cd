"""Reference solution of the `embeddings` assignment, file `bpe.py`: byte-pair encoding.

Follows spec/student-api.md exactly; the graders compare submissions with it.
Pure Python. Training keeps the count of every adjacent pair and the words
each pair occurs in, so a merge recounts only the words it changes instead
of every word of the corpus (Sennrich et al.'s loop recounts them all); the
merges made are the same.
"""

from __future__ import annotations

from collections import defaultdict

END = "</w>"


def _replace(symbols: tuple[str, ...], pair: tuple[str, str]) -> tuple[str, ...]:
    """`symbols` with each occurrence of `pair`, scanning left to right without overlap, made one symbol."""
    out = []
    i = 0
    while i < len(symbols):
        if symbols[i] == pair[0] and i + 1 < len(symbols) and symbols[i + 1] == pair[1]:
            out.append(pair[0] + pair[1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def train_bpe(word_counts: dict[str, int], num_merges: int) -> list[tuple[str, str]]:
    """The merges, in the order made: the most frequent adjacent pair each time, ties by the smallest pair."""
    if num_merges < 0:
        raise ValueError(f"num_merges must be >= 0, got {num_merges!r}")
    for word, count in word_counts.items():
        if not word:
            raise ValueError("a word of word_counts is empty")
        if count < 1:
            raise ValueError(f"the count of {word!r} is {count!r}; counts must be >= 1")
    words = [tuple(word) + (END,) for word in word_counts]  # the symbols of each word
    counts = list(word_counts.values())
    pair_count: dict[tuple[str, str], int] = defaultdict(int)  # weighted by the words' counts
    words_with: dict[tuple[str, str], set[int]] = defaultdict(set)  # pair -> indices of the words holding it
    for i, symbols in enumerate(words):
        for pair in zip(symbols, symbols[1:]):
            pair_count[pair] += counts[i]
            words_with[pair].add(i)

    merges = []
    while len(merges) < num_merges and pair_count:
        best = min(pair_count, key=lambda pair: (-pair_count[pair], pair))
        merges.append(best)
        for i in words_with.pop(best):
            old = words[i]
            for pair in zip(old, old[1:]):
                pair_count[pair] -= counts[i]
                if pair_count[pair] == 0:
                    del pair_count[pair]
                words_with.get(pair, set()).discard(i)
            words[i] = new = _replace(old, best)
            for pair in zip(new, new[1:]):
                pair_count[pair] += counts[i]
                words_with[pair].add(i)
    return merges


def encode_word(word: str, merges: list[tuple[str, str]]) -> list[str]:
    """The word's characters and END, with every merge applied in training order."""
    symbols = tuple(word) + (END,)
    for pair in merges:
        symbols = _replace(symbols, tuple(pair))
    return list(symbols)


def encode(text: str, merges: list[tuple[str, str]]) -> list[str]:
    """Every whitespace-separated word of `text` encoded, the symbols concatenated."""
    return [symbol for word in text.split() for symbol in encode_word(word, merges)]


def decode(symbols: list[str]) -> str:
    """The symbols joined, every END a space, the last one dropped."""
    text = "".join(symbols).replace(END, " ")
    return text[:-1] if text.endswith(" ") else text
