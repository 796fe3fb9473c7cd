"""Byte-pair encoding with a dictionary of weighted pair counts over word -> symbols."""

from collections import Counter

END = "</w>"


def _symbols_of(word):
    return list(word) + [END]


def _merge_symbols(symbols, pair):
    """Replace non-overlapping occurrences of `pair` (left to right) by one symbol."""
    first, second = pair
    merged = first + second
    out = []
    i = 0
    n = len(symbols)
    while i < n:
        if i + 1 < n and symbols[i] == first and symbols[i + 1] == second:
            out.append(merged)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def _pair_counts(segmentation, word_counts):
    counts = Counter()
    for word, symbols in segmentation.items():
        weight = word_counts[word]
        for pair in zip(symbols, symbols[1:]):
            counts[pair] += weight
    return counts


def train_bpe(word_counts, num_merges):
    if num_merges < 0:
        raise ValueError(f"num_merges must be >= 0, got {num_merges}")
    for word, count in word_counts.items():
        if len(word) == 0:
            raise ValueError("words must be non-empty")
        if count < 1:
            raise ValueError(f"count of {word!r} must be >= 1, got {count}")

    segmentation = {word: _symbols_of(word) for word in word_counts}
    merges = []
    for _ in range(num_merges):
        counts = _pair_counts(segmentation, word_counts)
        if not counts:
            break
        best = min(counts, key=lambda pair: (-counts[pair], pair))
        merges.append(best)
        for word, symbols in segmentation.items():
            if len(symbols) > 1:
                segmentation[word] = _merge_symbols(symbols, best)
    return merges


def encode_word(word, merges):
    symbols = _symbols_of(word)
    for pair in merges:
        if len(symbols) < 2:
            break
        symbols = _merge_symbols(symbols, tuple(pair))
    return symbols


def encode(text, merges):
    cache = {}
    out = []
    for word in text.split():
        if word not in cache:
            cache[word] = encode_word(word, merges)
        out.extend(cache[word])
    return out


def decode(symbols):
    symbols = list(symbols)
    text = "".join(symbol.replace(END, " ") for symbol in symbols)
    if symbols and symbols[-1].endswith(END):
        text = text[:-1]
    return text
