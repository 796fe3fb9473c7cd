"""The checks of the embeddings assignment: their inputs, tolerances and mistakes.

Every input a function takes from another is drawn here as data (merges for
encode_word, symbols for decode, W and C for step, weights for the models),
so each check grades one function. BPE corpora are crafted where a rule
shows (ties, overlaps, counts, zero merges, more merges than pairs) and drawn
at random beside them; no case can be passed by a constant or an empty list.
"""

from __future__ import annotations

import numpy as np

from lmgrade import Case, CaseContext, Check, Limits, Tolerance

from . import mistakes as M
from .public import scenarios
from .public.judges import judge_gradients

BPE, W2V, FFNN = ("bpe.py",), ("word2vec.py",), ("ffnn_lm.py",)
END = "</w>"
EXACT = Tolerance(rtol=1e-9, atol=1e-12)
# SGD over many steps compounds rounding differences of any correct order of sums a little.
TRAINED = Tolerance(rtol=1e-8, atol=1e-11)
FLOAT64 = Tolerance(rtol=1e-8, atol=1e-10)
FLOAT32 = Tolerance(rtol=2e-4, atol=2e-5)
TOLERANCE = {"float64": FLOAT64, "float32": FLOAT32}

TEXTBOOK = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
# Its first ten merges (the first five are Sennrich et al.'s; the rest follow the tie rule).
TEXTBOOK_MERGES = [
    ("e", "s"),
    ("es", "t"),
    ("est", END),
    ("l", "o"),
    ("lo", "w"),
    ("e", "w"),
    ("ew", "est" + END),
    ("n", "ewest" + END),
    ("low", END),
    ("d", "est" + END),
]


def _normal(rng, *shape, scale=1.0) -> np.ndarray:
    return rng.standard_normal(shape) * scale


# Letters a crafted example's may be renamed to, in the order of their code points, all after END's "<":
# a renaming that keeps the letters' order keeps every comparison of two symbols (the tie rule) as it was.
ALPHABET = "abcdefghijklmnopqrstuvwxyzßàáâãäåæçèéêëìíîïñòóôõöøùúûüýÿ"


class Renaming:
    """The letters of crafted BPE examples renamed, drawn from the course secret, their order kept.

    A crafted example shows a rule (ties, overlaps, counts); renamed in order, it shows the same rule and
    its merges are the same ones renamed, yet answers recorded under another secret do not fit it.
    """

    def __init__(self, rng, *texts: str):
        letters = sorted({ch for text in texts for ch in text.replace(END, "") if not ch.isspace()})
        chosen = sorted(rng.choice(len(ALPHABET), len(letters), replace=False))
        self.table = str.maketrans({a: ALPHABET[i] for a, i in zip(letters, chosen)})

    def __call__(self, text: str) -> str:
        """`text` (a word, a symbol, a text) renamed; END stays END."""
        return END.join(part.translate(self.table) for part in text.split(END))

    def merges(self, merges) -> list[tuple[str, str]]:
        return [(self(a), self(b)) for a, b in merges]

    def counts(self, word_counts: dict[str, int], scale: int = 1) -> dict[str, int]:
        """Renamed words, each count times `scale`: the same pairs win, the same ties stay."""
        return {self(word): count * scale for word, count in word_counts.items()}


def _letters_of(*parts) -> str:
    """Every letter of words, texts and merges, for a `Renaming` of them all."""
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            out.extend(part)
        else:
            out.extend(s for item in part for s in (item if isinstance(item, tuple) else (item,)))
    return " ".join(out)


# --- bpe.py ---


def random_word_counts(rng, words: int, alphabet: str, max_len: int = 7) -> dict[str, int]:
    out = {}
    while len(out) < words:
        word = "".join(rng.choice(list(alphabet), size=int(rng.integers(1, max_len + 1))))
        out[word] = int(rng.integers(1, 10))
    return out


def random_merges(rng, alphabet: str, count: int) -> list[tuple[str, str]]:
    """Merges in a training order: each joins two symbols that exist by then, so most of them apply."""
    symbols = list(alphabet) + [END]
    merges = []
    while len(merges) < count:
        starts = [s for s in symbols if s != END]  # END ends a word: nothing follows it
        a, b = starts[int(rng.integers(len(starts)))], symbols[int(rng.integers(len(symbols)))]
        if (a, b) in merges:
            continue
        merges.append((a, b))
        symbols.append(a + b)
    return merges


def _counts_label(word_counts: dict) -> str:
    if len(word_counts) <= 5:
        return f"train_bpe({word_counts!r}, ...)"
    first = list(word_counts.items())[:3]
    return f"train_bpe({len(word_counts)} words, the first {first!r}, ...)"


def _crafted(rng, word_counts: dict[str, int]) -> dict[str, int]:
    """A crafted corpus with its letters renamed in order and its counts scaled: drawn, yet showing its rule."""
    return Renaming(rng, _letters_of(word_counts)).counts(word_counts, scale=int(rng.integers(1, 40)))


def train_bpe_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    overlapping = _crafted(rng, {"aaa": 2, "aaaa": 1, "baaab": 1})
    a = next(iter(overlapping))[0]
    crafted = [
        (_crafted(rng, TEXTBOOK), [10], "the textbook's example, its letters renamed in order, its counts scaled"),
        (_crafted(rng, {"ab": 1, "ba": 1, "cd": 1, "dc": 1}), [3, int(rng.integers(5, 12))], "every pair tied"),
        (overlapping, [4], f"overlapping pairs: {a} {a} {a} holds ({a}, {a}) twice"),
        (_crafted(rng, {"ab": 1, "cab": 1, "dd": 9}), [0, 2], "counts weigh the pairs; no merge at all first"),
        (
            _crafted(rng, {"ab": 2, "b": 1}),
            [1, int(rng.integers(4, 200))],
            "more merges asked for than pairs there are",
        ),
        (random_word_counts(rng, 25, "abcde"), [30], "random words"),
        (random_word_counts(rng, 15, "aé1ß."), [12], "random words of other characters"),
    ]
    # After (a, b), (ab, END) and (c, END), the 4th merge is (b, c END): "ab c</w>" holds "b c</w>" as text
    # only, so a merge made by replacing text joins ab and c</w> too (drawn last: the cases above stay as drawn).
    across = _crafted(rng, {"ab": 10, "bc": 6, "abc": 1})
    crafted.append((across, [5], "a symbol that ends in a pair's first symbol, before its second"))
    return [
        Case(
            f"{_counts_label(counts)} with num_merges in {merges} ({what})",
            {"word_counts": counts, "num_merges": merges},
        )
        for counts, merges, what in crafted
    ]


def _renamed_example(rng, merges, words) -> tuple[list[tuple[str, str]], list[str]]:
    """Crafted merges and the words they are tried on, their letters renamed alike."""
    rename = Renaming(rng, _letters_of(merges, words))
    return rename.merges(merges), [rename(w) for w in words]


UNORDERED_MERGES = [("ab", "c"), ("a", "b"), ("c", "d"), ("ab", "cd")]


def encode_word_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    random = random_merges(rng, "abcd", 14)
    words = ["".join(rng.choice(list("abcd"), size=int(rng.integers(1, 9)))) for _ in range(8)]
    textbook = _renamed_example(rng, TEXTBOOK_MERGES, ["lowest", "newer", "low", "wider", "slow", "est", "x", "lowlow"])
    overlaps = _renamed_example(
        rng,
        [("b", "c"), ("a", "b"), ("bc", "d"), ("a", "a"), ("aa", "a")],
        ["abcd", "aaa", "aaaa", "aaaaa", "abc", "ab", "dcba"],
    )
    ends = _renamed_example(
        rng, [("o", END), ("g", "o" + END), ("g", "o"), ("o" + END, "g")], ["go", "ego", "goo", "gog", "o"]
    )
    # No training makes these: a merge of a symbol that only a later merge creates. Merges applied in their
    # order never use it; a loop taking, at each step, the present pair learned earliest (minbpe's) does.
    unordered = _renamed_example(rng, UNORDERED_MERGES, ["abc", "abcd", "abab", "cabc", "dabcab"])
    return [
        Case(
            f"encode_word(word, the textbook's 10 merges, their letters renamed: {textbook[0]!r}) for words seen "
            "and unseen",
            {"merges": textbook[0], "words": textbook[1]},
        ),
        Case(
            f"encode_word(word, {overlaps[0]!r}) (training order is not longest first; overlaps)",
            {"merges": overlaps[0], "words": overlaps[1]},
        ),
        Case(f"encode_word(word, {random!r}) for 8 random words", {"merges": random, "words": words}),
        Case(
            f"encode_word(word, merges) with merges that join END: {ends[0]!r}",
            {"merges": ends[0], "words": ends[1]},
        ),
        Case(
            f"encode_word(word, {unordered[0]!r}) (out of training order: the first merge joins a symbol only the "
            "second makes)",
            {"merges": unordered[0], "words": unordered[1]},
        ),
    ]


def encode_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    merges = random_merges(rng, "abc", 10)
    texts = ["ab ca", "  abc\tcab \n bb  ", "a", "\n\t c  c c", "abcabc bca"]
    textbook, handout = _renamed_example(rng, TEXTBOOK_MERGES, ["low lowest  newer", " widest "])
    unordered, unordered_texts = _renamed_example(rng, UNORDERED_MERGES, ["abc abcd", " cabc\tabab "])
    return [
        Case(
            f"encode(text, the textbook's merges, their letters renamed: {textbook!r}) for {handout!r}",
            {"merges": textbook, "texts": handout},
        ),
        Case(
            f"encode(text, {merges!r}) for texts with tabs, newlines and runs of spaces: {texts!r}",
            {"merges": merges, "texts": texts},
        ),
        Case(
            f"encode(text, {unordered!r}) (out of training order) for {unordered_texts!r}",
            {"merges": unordered, "texts": unordered_texts},
        ),
    ]


def _segmented(rng, word: str) -> list[str]:
    """word + END cut into random pieces: symbols a BPE could have made."""
    units = list(word) + [END]
    cuts = sorted({int(c) for c in rng.integers(1, len(units), size=len(units) // 2)}) if len(units) > 1 else []
    return ["".join(units[a:b]) for a, b in zip([0, *cuts], [*cuts, len(units)])]


def decode_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    cases = []
    for count in (1, 3, 6):
        sentences = []
        for _ in range(3):
            words = ["".join(rng.choice(list("abcdeé"), size=int(rng.integers(1, 7)))) for _ in range(count)]
            sentences.append([s for word in words for s in _segmented(rng, word)])
        cases.append(
            Case(
                f"decode(symbols) for symbols of {count} word{'s' * (count > 1)} each: {sentences!r}",
                {"symbols": sentences},
            )
        )
    lo, w, est, a, b = made_up_symbols(rng, 5)
    symbols = [[lo, w + END, est + END], [], [a + END, END, b, END]]
    cases.append(Case(f"decode(symbols) for [], a lone '</w>' and more: {symbols!r}", {"symbols": symbols}))
    return cases


def made_up_symbols(rng, count: int) -> list[str]:
    """`count` distinct made-up symbols of one to three letters."""
    out: list[str] = []
    while len(out) < count:
        symbol = "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyzé"), size=int(rng.integers(1, 4))))
        if symbol not in out:
            out.append(symbol)
    return out


# --- word2vec.py ---


def _extremes(rng) -> np.ndarray:
    """-1e4, 0 and 1e4 among drawn entries of both signs, some near 0 (a sign test off by a little shows
    there) and some up to 1e4, in a drawn order."""
    signs = rng.choice([-1.0, 1.0], 8)
    sizes = np.concatenate([10 ** rng.uniform(-4.0, -2.0, 3), 10 ** rng.uniform(1.0, 4.0, 5)])
    return rng.permutation(np.concatenate([[-1e4, 0.0, 1e4], signs * sizes]))


def sigmoid_cases(ctx: CaseContext) -> list[Case]:
    return [
        Case("sigmoid(x) for x of shape (3, 4)", {"x": _normal(ctx.rng, 3, 4, scale=3.0)}),
        Case("sigmoid(x) for x with entries from -1e4 to 1e4", {"x": _extremes(ctx.rng)}),
        Case("sigmoid(x) for a 1-D x of 5 entries", {"x": _normal(ctx.rng, 5, scale=2.0)}),
    ]


def skipgram_pairs_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    tokens = [int(t) for t in rng.integers(0, 9, 7)]
    short = [int(t) for t in rng.integers(0, 9, 3)]
    calls = [
        [(tokens, 1), (tokens, 2)],
        [(tokens, 3), (short, 5)],
        [(short, 1), ([int(rng.integers(0, 9))], 2), ([int(t) for t in rng.integers(0, 9, 2)], 1)],
        [([int(t) for t in rng.integers(0, 5, 12)], 2), ([], 1)],
    ]
    return [Case("; ".join(f"skipgram_pairs({t}, window={w})" for t, w in group), {"calls": group}) for group in calls]


def noise_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    cases = []
    # Fourth powers: their 0.75 powers are whole numbers, the right answer exact.
    fourth_powers = rng.integers(1, 8, int(rng.integers(4, 7))) ** 4
    for counts, power in [
        (fourth_powers, None),
        (rng.integers(0, 20, 8), None),
        (rng.integers(0, 5, 6), 0.5),
        (rng.integers(0, 10, int(rng.integers(5, 8))), 1.0),
    ]:
        counts[int(rng.integers(len(counts)))] = 0  # a word never seen
        counts[0] = max(counts[0], 1)
        call = "noise_distribution(counts)" if power is None else f"noise_distribution(counts, power={power})"
        cases.append(Case(f"{call} with counts = {counts.tolist()}", {"counts": counts, "power": power}))
    return cases


def _vectors(rng, D, K, scale):
    return (_normal(rng, D, scale=scale), _normal(rng, D, scale=scale), _normal(rng, K, D, scale=scale))


def sgns_loss_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    cases = [
        Case(
            f"sgns_loss(w_vec, c_vec, neg_vecs) with D = {D}, K = {K}",
            {"vectors": [_vectors(rng, D, K, scale) for _ in range(3)]},
        )
        for D, K, scale in [(5, 3, 1.0), (1, 1, 2.0), (8, 6, 0.4)]
    ]
    big = [_huge_dots(rng, D, signs) for D, signs in [(2, (1, -1, 1)), (1, (-1, 1, -1)), (2, (1, -1))]]
    cases.append(
        Case(
            "sgns_loss with dot products of about +-1e4: "
            + "; ".join(
                f"w_vec={_rounded(w)}, c_vec={_rounded(c)}, neg_vecs={[_rounded(v) for v in n]}" for w, c, n in big
            ),
            {"vectors": big},
        )
    )
    return cases


def _huge_dots(rng, D: int, signs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """w_vec of length 100, c_vec and each negative along +-w_vec (signs[0] for c_vec, the rest for the
    negatives), each with a little drawn besides: every dot product with w_vec is about +-1e4."""
    u = _normal(rng, D)
    w = 100 * u / np.linalg.norm(u)
    c, *negatives = (sign * w + _normal(rng, D, scale=0.5) for sign in signs)
    return w, c, np.array(negatives)


def _rounded(v: np.ndarray) -> list[float]:
    return [round(float(x), 2) for x in v]


def sgns_grads_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    cases = []
    for D, K, scale in [(5, 3, 1.0), (1, 1, 1.5), (8, 6, 0.4), (3, 2, 2.0)]:
        w, c, n = _vectors(rng, D, K, scale)
        cases.append(
            Case(f"sgns_grads(w_vec, c_vec, neg_vecs) with D = {D}, K = {K}", {"w_vec": w, "c_vec": c, "neg_vecs": n})
        )
    return cases


def skipgram_init_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng

    def seed() -> int:
        return int(rng.integers(2**31))

    # Sizes and seeds drawn. W has 30 entries or more (its largest above a quarter of the bound but
    # once in a billion draws); rng left out, 200 or more: the fresh draws must show the same.
    sizes = [
        (int(rng.integers(6, 12)), int(rng.integers(5, 9)), seed()),
        (int(rng.integers(20, 40)), 2, seed()),
        (int(rng.integers(8, 16)), int(rng.integers(30, 50)), None),
    ]
    return [
        Case(
            f"SkipGram({V}, {D}{'' if seed is None else ', rng'})" + (" (rng left out)" if seed is None else ""),
            {"vocab_size": V, "dim": D, "seed": seed},
        )
        for V, D, seed in sizes
    ]


def _skipgram_args(rng, V, D, scale=0.5):
    return {"W": _normal(rng, V, D, scale=scale), "C": _normal(rng, V, D, scale=scale)}


def step_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    cases = []
    for V, D, w, c, negatives, lr, what in [
        (6, 3, 0, 1, [2, 3, 4], 0.1, "distinct negatives"),
        (5, 4, 2, 3, [1, 3], 0.5, "a negative equal to the context"),
        (5, 2, 4, 0, [1, 1, 2, 1], 0.3, "a negative drawn three times"),
        (4, 3, 1, 1, [1, 0, 1], 0.2, "w = c = a negative, repeated"),
    ]:
        args = {**_skipgram_args(rng, V, D), "w": w, "c": c, "negatives": np.array(negatives), "lr": lr}
        cases.append(
            Case(
                f"SkipGram({V}, {D}) with W and C assigned; step(w={w}, c={c}, negatives={negatives}, "
                f"lr={lr}) ({what})",
                args,
            )
        )
    return cases


def train_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    cases = []
    for V, D, length, window, k, epochs, lr in [
        (6, 3, 10, 2, 3, 2, 0.1),
        (5, 2, 8, 1, 1, 3, 0.3),
        (7, 4, 9, 3, 2, 1, 0.2),
    ]:
        tokens = [int(t) for t in rng.integers(0, V - 1, length)]  # id V - 1 never occurs: noise probability 0
        args = {
            **_skipgram_args(rng, V, D),
            "tokens": tokens,
            "window": window,
            "k": k,
            "epochs": epochs,
            "lr": lr,
            "seed": int(rng.integers(2**62)),
        }
        cases.append(
            Case(
                f"SkipGram({V}, {D}) with W and C assigned; train(tokens={tokens}, window={window}, "
                f"k={k}, epochs={epochs}, lr={lr}, rng)",
                args,
            )
        )
    return cases


def _similar_W(rng, V: int, D: int) -> np.ndarray:
    """Integer rows (exact dot products in any order) whose cosines are far apart but for planted ties:
    a copy of a row and a row scaled by 2 have exactly the same cosine to every row."""
    while True:
        W = rng.integers(-4, 5, size=(V, D)).astype(np.float64)
        W[V - 2] = W[1]  # an exact copy
        W[V - 1] = 2 * W[2]  # the same direction, twice as long
        norms = np.linalg.norm(W, axis=1)
        if np.any(norms == 0):
            continue
        cos = (W @ W.T) / np.outer(norms, norms)
        distinct = np.delete(cos, [V - 2, V - 1], axis=1)
        if all(np.min(np.diff(np.sort(row))) > 1e-6 for row in distinct):
            return W


def most_similar_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    cases = []
    for V, D, queries in [
        (8, 3, [(0, 3), (1, 7), (5, 2)]),
        (10, 4, [(3, 9), (2, 4), (9, 1)]),
        (6, 2, [(4, 5), (0, 2)]),
    ]:
        W = _similar_W(rng, V, D)
        cases.append(
            Case(
                f"SkipGram({V}, {D}) with W = {W.astype(int).tolist()} (row {V - 2} a copy of row 1, row "
                f"{V - 1} twice row 2: exact ties); " + ", ".join(f"most_similar({w}, topn={n})" for w, n in queries),
                {"W": W, "C": np.zeros_like(W), "queries": queries},
            )
        )
    return cases


# --- ffnn_lm.py ---


def _ffnn_state(rng, V, n, D, H, prefix=("E.", "W.", "U.")) -> dict:
    E, W, U = prefix
    return {
        f"{E}weight": _normal(rng, V, D),
        f"{W}weight": _normal(rng, H, n * D, scale=1.5 / np.sqrt(n * D)),
        f"{W}bias": _normal(rng, H, scale=0.3),
        f"{U}weight": _normal(rng, V, H, scale=1.5 / np.sqrt(H)),
        f"{U}bias": _normal(rng, V, scale=0.3),
    }


def _config(V, n, D, H) -> dict:
    return {"vocab_size": V, "context_size": n, "embed_dim": D, "hidden_dim": H}


def ffnn_forward_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    cases = []
    for V, n, D, H, B, dtype in [
        (7, 3, 4, 5, 6, "float64"),
        (2, 1, 1, 1, 1, "float64"),
        (9, 4, 3, 6, 5, "float32"),
        (5, 2, 2, 3, 4, "float64"),
    ]:
        context = rng.integers(0, V, (B, n))
        context[0, :] = context[0, 0]  # a token repeated in one context: its row's gradient adds up
        args = {
            "config": _config(V, n, D, H),
            "state": _ffnn_state(rng, V, n, D, H),
            "context": context,
            "g": _normal(rng, B, V),
            "dtype": dtype,
        }
        cases.append(
            Case(
                f"FFNNLM(vocab_size={V}, context_size={n}, embed_dim={D}, hidden_dim={H}) with its weights "
                f"loaded; forward(context of shape ({B}, {n})), then the gradient of sum(logits * g), "
                f"{dtype}",
                args,
                tolerance=TOLERANCE[dtype],
            )
        )
    return cases


def make_examples_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    cases = []
    # The empty corpus with a drawn context size and pad.
    for length, n, pad in [
        (7, 3, 0),
        (2, 4, 9),
        (5, 1, 3),
        (6, 2, 5),
        (0, int(rng.integers(1, 9)), int(rng.integers(10))),
    ]:
        tokens = [int(t) for t in rng.integers(0, 9, length)]
        cases.append(
            Case(
                f"make_examples({tokens}, context_size={n}, pad={pad})",
                {"tokens": tokens, "context_size": n, "pad": pad},
            )
        )
    # The empty corpus's answers (two empty arrays) need no work: asked beside a drawn one.
    beside = [int(t) for t in rng.integers(0, 9, 4)]
    cases[-1].args["beside"] = {"tokens": beside}
    cases[-1].label += f"; and make_examples({beside}, the same context_size and pad)"
    return cases


SEQUENTIAL = ("0.", "2.", "4.")
GRADER_MODEL = "the grader's own model (nn.Sequential(Embedding, Flatten, Linear, Tanh, Linear), not your FFNNLM)"


def _grader_model_args(rng, V, n, D, H, N, dtype, scale=1.0):
    state = _ffnn_state(rng, V, n, D, H, SEQUENTIAL)
    state["4.weight"] *= scale
    return {
        "config": _config(V, n, D, H),
        "state": state,
        "contexts": rng.integers(0, V, (N, n)),
        "targets": rng.integers(0, V, N),
        "dtype": dtype,
    }


def train_ffnn_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    cases = []
    for V, n, D, H, N, epochs, batch_size, lr, dtype in [
        (6, 2, 3, 4, 11, 2, 4, 0.3, "float64"),
        (5, 3, 2, 3, 7, 3, 10, 0.5, "float64"),
        (4, 1, 2, 2, 6, 2, 1, 0.2, "float64"),
        (7, 2, 4, 5, 13, 2, 5, 0.3, "float32"),
    ]:
        args = {
            **_grader_model_args(rng, V, n, D, H, N, dtype),
            "epochs": epochs,
            "batch_size": batch_size,
            "lr": lr,
            "seed": int(rng.integers(2**62)),
        }
        cases.append(
            Case(
                f"train_ffnn({GRADER_MODEL} with V={V}, n={n}, D={D}, H={H}; {N} examples, epochs={epochs}, "
                f"batch_size={batch_size}, lr={lr}, generator), {dtype}",
                args,
                tolerance=FLOAT32 if dtype == "float32" else TRAINED,
            )
        )
    return cases


def perplexity_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    cases = []
    for V, n, D, H, N, dtype in [(6, 2, 3, 4, 9, "float64"), (5, 1, 2, 3, 4, "float64"), (8, 3, 2, 5, 12, "float32")]:
        args = _grader_model_args(rng, V, n, D, H, N, dtype, scale=2.0)
        cases.append(
            Case(
                f"perplexity({GRADER_MODEL} with V={V}, n={n}, D={D}, H={H}; {N} examples), {dtype}",
                args,
                tolerance=TOLERANCE[dtype],
            )
        )
    return cases


# --- properties ---


def no_mutation_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    w, c, n = _vectors(rng, 3, 2, 1.0)
    merges, (word,) = _renamed_example(rng, TEXTBOOK_MERGES[:6], ["lowest"])
    counts = rng.integers(0, 10, 5)
    counts[int(rng.integers(5))] = 0
    calls = [
        (
            "train_bpe",
            {"word_counts": _crafted(rng, {"low": 5, "lower": 2, "newest": 6}), "num_merges": 4},
            "word_counts",
        ),
        ("encode_word", {"merges": merges, "word": word}, "merges"),
        ("noise_distribution", {"counts": counts}, "counts"),
        # Float counts too (the contract names no dtype): `counts **= power` changes them in place.
        ("noise_distribution", {"counts": np.round(rng.uniform(0.0, 10.0, 5), 2)}, "counts (floats)"),
        ("sgns_grads", {"w_vec": w, "c_vec": c, "neg_vecs": n}, "w_vec, c_vec and neg_vecs"),
        (
            "SkipGram.step",
            {**_skipgram_args(rng, 4, 3), "w": 0, "c": 1, "negatives": np.array([2, 1, 2]), "lr": 0.1},
            "negatives",
        ),
        ("make_examples", {"tokens": [int(t) for t in rng.integers(0, 9, 5)], "context_size": 2, "pad": 0}, "tokens"),
    ]
    return [
        Case(f"{what} must leave its argument {changed} unchanged", {"what": what, **args})
        for what, args, changed in calls
    ]


def bad_argument_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    # Two merges without a tie, (c, </w>) then (b, c</w>), in letters renamed in order.
    good = _crafted(rng, {"abc": 4, "bc": 1, "c": 2})
    below = -1  # the boundary: a check written num_merges < -1 (or <= -2) lets it through
    narrow = -int(rng.integers(1, 9))
    calls = [
        ("train_bpe", {"word_counts": good, "num_merges": below}, f"num_merges={below}"),
        ("train_bpe", {"word_counts": _crafted(rng, {"ab": 1, "cd": 0}), "num_merges": 1}, "a count of 0"),
        ("train_bpe", {"word_counts": _crafted(rng, {"ab": 2, "": 1}), "num_merges": 1}, "an empty word"),
        ("skipgram_pairs", {"tokens": [int(t) for t in rng.integers(0, 9, 3)], "window": 0}, "window=0"),
        ("skipgram_pairs", {"tokens": [int(t) for t in rng.integers(0, 9, 3)], "window": narrow}, f"window={narrow}"),
    ]
    return [
        Case(f"{what} with {bad} must raise ValueError", {"what": what, "good": good, **args})
        for what, args, bad in calls
    ]


def embeddings_checks() -> list[Check]:
    quick = Limits(cpu_s=8, wall_s=15)
    return [
        Check(
            "train_bpe",
            "train_bpe: the most frequent pair, ties by the smallest, merged without overlap",
            scenarios.train_bpe,
            train_bpe_cases,
            files=BPE,
            mistakes=M.TRAIN_BPE,
            limits=quick,
            grades=("bpe.train_bpe",),
        ),
        Check(
            "encode_word",
            "encode_word: every merge in training order, on words never seen",
            scenarios.encode_word,
            encode_word_cases,
            files=BPE,
            mistakes=M.ENCODE_WORD,
            limits=quick,
            grades=("bpe.encode_word",),
        ),
        Check(
            "encode",
            "encode: any whitespace splits words, symbols concatenated",
            scenarios.encode,
            encode_cases,
            files=BPE,
            mistakes=M.ENCODE,
            limits=quick,
            # Each word encoded: where encode calls encode_word, the grader's stands in for a wrong one.
            composes=("encode_word",),
            grades=("bpe.encode",),
        ),
        Check(
            "decode",
            "decode: END becomes a space, the last one dropped",
            scenarios.decode,
            decode_cases,
            files=BPE,
            mistakes=M.DECODE,
            limits=quick,
            grades=("bpe.decode",),
        ),
        Check(
            "sigmoid",
            "sigmoid: no overflow warning at 1e4",
            scenarios.sigmoid,
            sigmoid_cases,
            files=W2V,
            tolerance=EXACT,
            mistakes=M.SIGMOID,
            limits=quick,
            grades=("word2vec.sigmoid",),
        ),
        Check(
            "skipgram_pairs",
            "skipgram_pairs: every (w, c) in the window, in order, within the sequence",
            scenarios.skipgram_pairs,
            skipgram_pairs_cases,
            files=W2V,
            mistakes=M.PAIRS,
            limits=quick,
            grades=("word2vec.skipgram_pairs",),
        ),
        Check(
            "noise_distribution",
            "noise_distribution: counts ** 0.75, normalised; 0 for unseen words",
            scenarios.noise_distribution,
            noise_cases,
            files=W2V,
            tolerance=EXACT,
            mistakes=M.NOISE,
            limits=quick,
            grades=("word2vec.noise_distribution",),
        ),
        Check(
            "sgns_loss",
            "sgns_loss: the SGNS loss, finite for dot products of 1e4",
            scenarios.sgns_loss,
            sgns_loss_cases,
            files=W2V,
            tolerance=EXACT,
            mistakes=M.LOSS,
            limits=quick,
            grades=("word2vec.sgns_loss",),
        ),
        Check(
            "sgns_grads",
            "sgns_grads: the three gradients, to 1e-9 and against your own loss",
            scenarios.sgns_grads,
            sgns_grads_cases,
            files=W2V,
            tolerance=EXACT,
            judge=judge_gradients,
            mistakes=M.GRADS,
            limits=quick,
            grades=("word2vec.sgns_grads",),
        ),
        Check(
            "skipgram_init",
            "SkipGram: W uniform in +-0.5/D, C zeros",
            scenarios.skipgram_init,
            skipgram_init_cases,
            files=W2V,
            holds=scenarios.skipgram_init_holds,
            mistakes=M.INIT,
            limits=quick,
            grades=("word2vec.SkipGram",),
        ),
        Check(
            "step",
            "SkipGram.step: the loss, then every update from gradients taken before any",
            scenarios.step,
            step_cases,
            files=W2V,
            tolerance=EXACT,
            mistakes=M.STEP,
            composes=("sgns_loss", "sgns_grads"),
            limits=quick,
            grades=("word2vec.SkipGram.step",),
            stands_in=False,
        ),
        Check(
            "train",
            "SkipGram.train: the contract's rng calls and SGD loop, as the reference's",
            scenarios.train,
            train_cases,
            files=W2V,
            tolerance=TRAINED,
            mistakes=M.TRAIN,
            composes=("skipgram_pairs", "noise_distribution", "step"),
            limits=quick,
            grades=("word2vec.SkipGram.train",),
        ),
        Check(
            "most_similar",
            "SkipGram.most_similar: cosine of W rows, ties by the smaller id",
            scenarios.most_similar,
            most_similar_cases,
            files=W2V,
            mistakes=M.SIMILAR,
            limits=quick,
            grades=("word2vec.SkipGram.most_similar",),
        ),
        Check(
            "ffnn_forward",
            "FFNNLM: logits and the gradient of every parameter, float32 and float64",
            scenarios.ffnn_forward,
            ffnn_forward_cases,
            files=FFNN,
            tolerance=FLOAT64,
            mistakes=M.FORWARD,
            limits=quick,
        ),
        Check(
            "make_examples",
            "make_examples: the n tokens before t, left-padded",
            scenarios.make_examples,
            make_examples_cases,
            files=FFNN,
            mistakes=M.EXAMPLES,
            limits=quick,
            grades=("ffnn_lm.make_examples",),
        ),
        Check(
            "train_ffnn",
            "train_ffnn: SGD on randperm batches; losses and weights as the reference's",
            scenarios.train_ffnn,
            train_ffnn_cases,
            files=FFNN,
            tolerance=TRAINED,
            mistakes=M.TRAIN_FFNN,
            limits=quick,
            grades=("ffnn_lm.train_ffnn",),
        ),
        Check(
            "perplexity",
            "perplexity: exp of the mean negative log-likelihood",
            scenarios.perplexity,
            perplexity_cases,
            files=FFNN,
            tolerance=FLOAT64,
            mistakes=M.PERPLEXITY,
            limits=quick,
            grades=("ffnn_lm.perplexity",),
        ),
        Check(
            "no_mutation",
            "no function changes its arguments",
            scenarios.no_mutation,
            no_mutation_cases,
            tolerance=EXACT,
            property_check=True,
            limits=quick,
            composes=("train_bpe", "encode_word", "noise_distribution", "sgns_grads", "step", "make_examples"),
        ),
        Check(
            "bad_arguments",
            "ValueError for num_merges < 0, a count < 1, an empty word, window < 1",
            scenarios.bad_argument,
            bad_argument_cases,
            files=BPE + W2V,
            property_check=True,
            limits=quick,
            composes=("skipgram_pairs", "train_bpe"),
        ),
    ]
