"""bpe.py answered with the filler: every answer shaped like the contract's, none computed."""

from __future__ import annotations

from fill import _ints, _pick

END = "</w>"


def train_bpe(word_counts, num_merges):
    if isinstance(num_merges, bool) or not isinstance(num_merges, int) or num_merges < 0:
        raise ValueError(f"num_merges must be an integer >= 0, got {num_merges!r}")
    if any(not word for word in word_counts) or any(count < 1 for count in word_counts.values()):
        raise ValueError("every word must be non-empty with a count >= 1")
    symbols = sorted({c for word in word_counts for c in word}) + [END]
    firsts = _pick(symbols, num_merges, word_counts, "first")
    seconds = _pick(symbols, num_merges, word_counts, "second")
    return list(zip(firsts, seconds))


def _pieces(word, merges):
    """The word and END cut at places drawn from a hash of the inputs."""
    text = word + END
    cuts = sorted({int(c) for c in _ints((len(word),), len(word) + 1, word, merges, low=1) if c == c})
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


def encode_word(word, merges):
    return _pieces(word, merges)


def encode(text, merges):
    return [piece for word in text.split() for piece in _pieces(word, merges)]


def decode(symbols):
    letters = sorted({c for s in symbols for c in s} | {" "})
    size = sum(len(s) for s in symbols)
    return "".join(str(c) for c in _pick(letters, size, list(symbols)))
