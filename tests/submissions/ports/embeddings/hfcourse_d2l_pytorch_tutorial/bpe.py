"""Byte-pair encoding in the shape of the Hugging Face course's BPE chapter: word_freqs, splits, merge_pair."""

from __future__ import annotations

from collections import defaultdict

END = "</w>"


def compute_pair_freqs(splits, word_freqs):
    pair_freqs = defaultdict(int)
    for word, freq in word_freqs.items():
        split = splits[word]
        if len(split) == 1:
            continue
        for i in range(len(split) - 1):
            pair = (split[i], split[i + 1])
            pair_freqs[pair] += freq
    return pair_freqs


def merge_pair(a, b, split):
    """The split with every a, b side by side joined into a + b, left to right."""
    i = 0
    while i < len(split) - 1:
        if split[i] == a and split[i + 1] == b:
            split = split[:i] + [a + b] + split[i + 2 :]
        else:
            i += 1
    return split


def train_bpe(word_counts: dict[str, int], num_merges: int) -> list[tuple[str, str]]:
    if num_merges < 0:
        raise ValueError(f"num_merges must be >= 0, got {num_merges}")
    word_freqs = dict(word_counts)
    for word, freq in word_freqs.items():
        if word == "":
            raise ValueError("an empty word cannot be split")
        if freq < 1:
            raise ValueError(f"the count of {word!r} must be >= 1, got {freq}")
    splits = {word: [c for c in word] + [END] for word in word_freqs.keys()}
    merges = {}
    while len(merges) < num_merges:
        pair_freqs = compute_pair_freqs(splits, word_freqs)
        if not pair_freqs:
            break
        best_pair = ""
        max_freq = None
        for pair, freq in pair_freqs.items():
            # a higher count wins; an equal count goes to the smaller pair
            if max_freq is None or max_freq < freq or (max_freq == freq and pair < best_pair):
                best_pair = pair
                max_freq = freq
        splits = {word: merge_pair(*best_pair, split) for word, split in splits.items()}
        merges[best_pair] = best_pair[0] + best_pair[1]
    return list(merges)


def encode_word(word: str, merges: list[tuple[str, str]]) -> list[str]:
    split = [c for c in word] + [END]
    for pair in merges:
        split = merge_pair(*pair, split)
    return split


def encode(text: str, merges: list[tuple[str, str]]) -> list[str]:
    pre_tokenized_text = text.split()
    splits = [encode_word(word, merges) for word in pre_tokenized_text]
    return sum(splits, [])


def decode(symbols: list[str]) -> str:
    words = "".join(symbols).split(END)
    # the text after the last END is empty when the symbols end a word
    if words and words[-1] == "":
        words.pop()
    return " ".join(words)
