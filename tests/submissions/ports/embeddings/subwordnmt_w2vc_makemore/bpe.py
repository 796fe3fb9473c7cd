"""Byte-pair encoding in the shape of subword-nmt's toy learner: a vocabulary of space-separated symbol strings."""

from __future__ import annotations

import collections
import re

END = "</w>"


def segment_chars(word):
    """A word as its characters and END, separated by spaces."""
    return " ".join(list(word) + [END])


def get_vocabulary(word_counts):
    """Each word as its symbols joined by spaces ("l o w </w>") -> the word's count."""
    vocab = {}
    for word, freq in word_counts.items():
        if not word:
            raise ValueError("a word of the corpus is empty")
        if freq < 1:
            raise ValueError(f"the count of {word!r} must be >= 1, got {freq}")
        vocab[segment_chars(word)] = freq
    return vocab


def get_stats(vocab):
    pairs = collections.defaultdict(int)
    for word, freq in vocab.items():
        symbols = word.split()
        for i in range(len(symbols) - 1):
            pairs[symbols[i], symbols[i + 1]] += freq
    return pairs


def merge_vocab(pair, v_in):
    """Every word of v_in with the pair's occurrences joined, scanning left to right."""
    v_out = {}
    bigram = re.escape(" ".join(pair))
    p = re.compile(r"(?<!\S)" + bigram + r"(?!\S)")
    for word in v_in:
        w_out = p.sub("".join(pair), word)
        v_out[w_out] = v_in[word]
    return v_out


def train_bpe(word_counts: dict[str, int], num_merges: int) -> list[tuple[str, str]]:
    if num_merges < 0:
        raise ValueError(f"num_merges must be >= 0, got {num_merges}")
    vocab = get_vocabulary(word_counts)
    merges = []
    for _ in range(num_merges):
        pairs = get_stats(vocab)
        try:
            # the most frequent pair; among equals the smallest
            best = min(pairs, key=lambda x: (-pairs[x], x))
        except ValueError:
            break  # no pair left: every word is one symbol
        vocab = merge_vocab(best, vocab)
        merges.append(best)
    return merges


def encode_word(word: str, merges: list[tuple[str, str]]) -> list[str]:
    vocab = {segment_chars(word): 1}
    for pair in merges:
        vocab = merge_vocab(pair, vocab)
    (segmented,) = vocab
    return segmented.split()


def encode(text: str, merges: list[tuple[str, str]]) -> list[str]:
    return [symbol for word in text.split() for symbol in encode_word(word, merges)]


def decode(symbols: list[str]) -> str:
    text = "".join(symbols)
    if text.endswith(END):
        text = text[: -len(END)]
    return text.replace(END, " ")
