"""Byte-pair encoding in the shape of minbpe's BasicTokenizer: get_stats and merge over lists of symbols."""

from __future__ import annotations

END = "</w>"


def get_stats(ids, counts=None, weight=1):
    """Count every consecutive pair of ids into counts (a new dict if None), each occurrence adding weight."""
    counts = {} if counts is None else counts
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + weight
    return counts


def merge(ids, pair, idx):
    """Replace every occurrence of pair in ids by idx, left to right, without overlap."""
    newids = []
    i = 0
    while i < len(ids):
        if i < len(ids) - 1 and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            newids.append(idx)
            i += 2
        else:
            newids.append(ids[i])
            i += 1
    return newids


def _word_ids(word):
    # a word's starting symbols: its characters, then the end-of-word marker
    return list(word) + [END]


def train_bpe(word_counts: dict[str, int], num_merges: int) -> list[tuple[str, str]]:
    if num_merges < 0:
        raise ValueError(f"num_merges must be >= 0, got {num_merges}")
    for word, count in word_counts.items():
        if len(word) == 0:
            raise ValueError("a word of the corpus is empty")
        if count < 1:
            raise ValueError(f"the count of {word!r} must be >= 1, got {count}")
    ids = {word: _word_ids(word) for word in word_counts}
    merges = []
    for _ in range(num_merges):
        # count up the number of times every consecutive pair appears, weighted by the word counts
        stats = {}
        for word, word_ids in ids.items():
            get_stats(word_ids, stats, word_counts[word])
        if not stats:
            break
        # find the pair with the highest count, the smallest pair among equals
        pair = min(stats, key=lambda p: (-stats[p], p))
        idx = pair[0] + pair[1]
        ids = {word: merge(word_ids, pair, idx) for word, word_ids in ids.items()}
        merges.append(pair)
    return merges


def encode_word(word: str, merges: list[tuple[str, str]]) -> list[str]:
    ids = _word_ids(word)
    for pair in merges:
        ids = merge(ids, pair, pair[0] + pair[1])
    return ids


def encode(text: str, merges: list[tuple[str, str]]) -> list[str]:
    ids = []
    for word in text.split():
        ids.extend(encode_word(word, merges))
    return ids


def decode(symbols: list[str]) -> str:
    text = "".join(symbols).replace(END, " ")
    # every word ends with END, so the text ends with one space too many
    return text[:-1] if text.endswith(" ") else text
