"""Byte-pair encoding that rebuilds every word's symbol list after each merge, with plain loops."""

END = "</w>"


def apply_merge(symbols, left, right):
    """Return a new list where each non-overlapping (left, right), read left to right, is joined."""
    new_symbols = []
    i = 0
    while i < len(symbols):
        if i < len(symbols) - 1 and symbols[i] == left and symbols[i + 1] == right:
            new_symbols.append(left + right)
            i = i + 2
        else:
            new_symbols.append(symbols[i])
            i = i + 1
    return new_symbols


def count_pairs(words):
    """words: list of (symbols, count). Returns {pair: weighted number of occurrences}."""
    counts = {}
    for symbols, count in words:
        for i in range(len(symbols) - 1):
            pair = (symbols[i], symbols[i + 1])
            if pair in counts:
                counts[pair] = counts[pair] + count
            else:
                counts[pair] = count
    return counts


def best_pair(counts):
    best = None
    best_count = None
    for pair in counts:
        c = counts[pair]
        if best is None or c > best_count or (c == best_count and pair < best):
            best = pair
            best_count = c
    return best


def train_bpe(word_counts, num_merges):
    if num_merges < 0:
        raise ValueError("num_merges cannot be negative")
    words = []
    for word in word_counts:
        count = word_counts[word]
        if word == "":
            raise ValueError("the empty word is not allowed")
        if count < 1:
            raise ValueError("every word count must be at least 1")
        words.append((list(word) + [END], count))

    merges = []
    for _ in range(num_merges):
        counts = count_pairs(words)
        if len(counts) == 0:
            break
        left, right = best_pair(counts)
        merges.append((left, right))
        rebuilt = []
        for symbols, count in words:
            rebuilt.append((apply_merge(symbols, left, right), count))
        words = rebuilt
    return merges


def encode_word(word, merges):
    symbols = list(word) + [END]
    for merge in merges:
        left, right = merge
        symbols = apply_merge(symbols, left, right)
    return symbols


def encode(text, merges):
    result = []
    for word in text.split():
        result.extend(encode_word(word, merges))
    return result


def decode(symbols):
    text = ""
    for symbol in symbols:
        text += symbol.replace(END, " ")
    if len(symbols) > 0 and symbols[-1].endswith(END):
        text = text[:-1]
    return text
