"""Byte-pair encoding in the classic get_stats / merge_vocab form over separator-joined symbol strings."""

import collections
import itertools
import re

END = "</w>"


def _separator(words):
    """A character that occurs in none of the words nor in END, so it can delimit symbols."""
    used = set(END)
    for word in words:
        used.update(word)
    if " " not in used:
        return " "
    return next(chr(i) for i in itertools.count(1) if chr(i) not in used)


def _spell(word, sep):
    return sep.join(list(word) + [END])


def _pattern(pair, sep):
    # The bigram must start and end at symbol boundaries: right after the start
    # or a separator, and right before the end or a separator.
    free = "[^" + re.escape(sep) + "]"
    bigram = re.escape(pair[0] + sep + pair[1])
    return re.compile("(?<!" + free + ")" + bigram + "(?!" + free + ")")


def _merge_word(spelled, pair, sep):
    if pair[0] + sep + pair[1] not in spelled:
        return spelled
    merged = pair[0] + pair[1]
    # re scans left to right and never overlaps matches: "a a a" -> "aa a".
    return _pattern(pair, sep).sub(lambda _: merged, spelled)


def get_stats(vocab, sep):
    pairs = collections.defaultdict(int)
    for word, freq in vocab.items():
        symbols = word.split(sep)
        for i in range(len(symbols) - 1):
            pairs[symbols[i], symbols[i + 1]] += freq
    return pairs


def merge_vocab(pair, v_in, sep):
    v_out = {}
    for word in v_in:
        v_out[_merge_word(word, pair, sep)] = v_in[word]
    return v_out


def train_bpe(word_counts, num_merges):
    if num_merges < 0:
        raise ValueError("num_merges must be non-negative")
    if any(word == "" for word in word_counts):
        raise ValueError("words must be non-empty")
    if any(count < 1 for count in word_counts.values()):
        raise ValueError("word counts must be at least 1")

    sep = _separator(word_counts)
    vocab = {_spell(word, sep): count for word, count in word_counts.items()}
    merges = []
    for _ in range(num_merges):
        pairs = get_stats(vocab, sep)
        if not pairs:
            break
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))
        vocab = merge_vocab(best, vocab, sep)
        merges.append(best)
    return merges


def _merge_chars(merges):
    return ["".join(pair) for pair in merges]


def _encode_spelled(word, merges, sep):
    spelled = _spell(word, sep)
    for a, b in merges:
        spelled = _merge_word(spelled, (a, b), sep)
    return spelled.split(sep)


def encode_word(word, merges):
    merges = [tuple(pair) for pair in merges]
    # The separator must not occur in the merge symbols either, or a bigram
    # could straddle more than two of this word's symbols.
    sep = _separator([word] + _merge_chars(merges))
    return _encode_spelled(word, merges, sep)


def encode(text, merges):
    merges = [tuple(pair) for pair in merges]
    words = text.split()
    sep = _separator(words + _merge_chars(merges))
    return [symbol for word in words for symbol in _encode_spelled(word, merges, sep)]


def decode(symbols):
    text = "".join(symbol.replace(END, " ") for symbol in symbols)
    return text[:-1] if len(symbols) and symbols[-1].endswith(END) else text
