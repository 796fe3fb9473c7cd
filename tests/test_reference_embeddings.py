"""The `embeddings` reference against independent implementations: Sennrich et al.'s BPE loop,
torch autograd and central differences for SGNS, a loop for the feed-forward LM, and what
each model must learn from seeded corpora with known structure."""

from __future__ import annotations

import collections
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from lmgrade.plugins.transformer.corpus import sparse_markov
from lmgrade.submissions.loader import load_files

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def ref():
    return load_files(ROOT / "reference" / "embeddings", ["bpe.py", "word2vec.py", "ffnn_lm.py"])


# --- bpe.py ---


def sennrich_bpe(word_counts: dict[str, int], num_merges: int) -> list[tuple[str, str]]:
    """Sennrich, Haddow and Birch (2016), Algorithm 1, as printed: the vocabulary as space-separated
    strings, all pairs recounted every merge, the merge made with a regular expression. Only the tie
    rule is the contract's (the paper's max() keeps the first pair inserted)."""
    vocab = {" ".join(word) + " </w>": count for word, count in word_counts.items()}
    merges = []
    for _ in range(num_merges):
        pairs = collections.defaultdict(int)
        for word, freq in vocab.items():
            symbols = word.split()
            for i in range(len(symbols) - 1):
                pairs[symbols[i], symbols[i + 1]] += freq
        if not pairs:
            break
        best = min(pairs, key=lambda pair: (-pairs[pair], pair))
        merges.append(best)
        bigram = re.escape(" ".join(best))
        p = re.compile(r"(?<!\S)" + bigram + r"(?!\S)")
        vocab = {p.sub("".join(best), word): freq for word, freq in vocab.items()}
    return merges


def random_word_counts(rng, words: int, alphabet: str = "abcde.+", max_len: int = 7) -> dict[str, int]:
    out = {}
    for _ in range(words):
        word = "".join(rng.choice(list(alphabet), size=int(rng.integers(1, max_len + 1))))
        out[word] = int(rng.integers(1, 20))
    return out


def test_the_textbook_example_gives_its_known_first_merges(ref):
    # Sennrich et al.'s example: low 5, lower 2, newest 6, widest 3.
    merges = ref["bpe"].train_bpe({"low": 5, "lower": 2, "newest": 6, "widest": 3}, 10)
    assert merges[:5] == [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]
    assert ref["bpe"].encode_word("lowest", merges) == ["low", "est</w>"]


@pytest.mark.parametrize("seed", range(8))
def test_bpe_merges_equal_sennrichs_loop(ref, seed):
    rng = np.random.default_rng(seed)
    counts = random_word_counts(rng, 30, alphabet="ab" if seed % 2 else "abcde.+")
    for num_merges in (0, 1, 5, 40, 500):
        assert ref["bpe"].train_bpe(counts, num_merges) == sennrich_bpe(counts, num_merges)


def test_overlaps_are_replaced_left_to_right_and_merges_stop_when_no_pair_is_left(ref):
    bpe = ref["bpe"]
    merges = bpe.train_bpe({"aaa": 1}, 10)
    assert merges == [("a", "a"), ("a", "</w>"), ("aa", "a</w>")]
    assert bpe.encode_word("aaaaa", merges[:1]) == ["aa", "aa", "a", "</w>"]


def test_encode_and_decode_round_trip(ref):
    bpe = ref["bpe"]
    rng = np.random.default_rng(3)
    counts = random_word_counts(rng, 40)
    merges = bpe.train_bpe(counts, 30)
    text = "  abc\tdd.e \n +a  " + " ".join(rng.choice(list(counts), 10))
    assert bpe.decode(bpe.encode(text, merges)) == " ".join(text.split())
    assert bpe.encode("", merges) == [] and bpe.decode([]) == ""


@pytest.mark.parametrize("word_counts,num_merges", [({"ab": 1}, -1), ({"ab": 0}, 1), ({"": 2}, 1)])
def test_bpe_refuses_what_the_contract_refuses(ref, word_counts, num_merges):
    with pytest.raises(ValueError):
        ref["bpe"].train_bpe(word_counts, num_merges)


# --- word2vec.py ---


def test_pairs_at_the_edges(ref):
    w2v = ref["word2vec"]
    assert w2v.skipgram_pairs([7, 8, 9], 1) == [(7, 8), (8, 7), (8, 9), (9, 8)]
    assert w2v.skipgram_pairs([1, 2], 5) == [(1, 2), (2, 1)]
    assert w2v.skipgram_pairs([4], 2) == []
    with pytest.raises(ValueError):
        w2v.skipgram_pairs([1, 2], 0)


def test_noise_distribution_gives_zero_counts_zero(ref):
    p = ref["word2vec"].noise_distribution(np.array([16, 0, 1, 81]))
    np.testing.assert_allclose(p, np.array([8, 0, 1, 27]) / 36, rtol=1e-15)


def _sgns_torch(w, c, n):
    w, c, n = (torch.tensor(a, requires_grad=True) for a in (w, c, n))
    loss = -torch.nn.functional.logsigmoid(c @ w) - torch.nn.functional.logsigmoid(-(n @ w)).sum()
    loss.backward()
    return loss.item(), w.grad.numpy(), c.grad.numpy(), n.grad.numpy()


@pytest.mark.parametrize("D,K,scale", [(5, 3, 1.0), (1, 1, 2.0), (8, 6, 0.3), (4, 2, 30.0)])
def test_sgns_loss_and_gradients_equal_torch_autograd_and_central_differences(ref, D, K, scale):
    w2v = ref["word2vec"]
    rng = np.random.default_rng(D * 10 + K)
    w, c, n = rng.normal(size=D) * scale, rng.normal(size=D) * scale, rng.normal(size=(K, D)) * scale
    loss, dw, dc, dn = _sgns_torch(w, c, n)
    assert w2v.sgns_loss(w, c, n) == pytest.approx(loss, rel=1e-12, abs=1e-12)
    got = w2v.sgns_grads(w, c, n)
    for mine, theirs in zip(got, (dw, dc, dn)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)
    if scale <= 2:
        h = 1e-6
        for which, array in enumerate((w, c, n)):
            numeric = np.zeros_like(array)
            for i in np.ndindex(array.shape):
                args = [w.copy(), c.copy(), n.copy()]
                args[which][i] += h
                up = w2v.sgns_loss(*args)
                args[which][i] -= 2 * h
                numeric[i] = (up - w2v.sgns_loss(*args)) / (2 * h)
            np.testing.assert_allclose(got[which], numeric, rtol=1e-6, atol=1e-8)


def test_sgns_loss_is_finite_for_dot_products_of_1e4(ref):
    w2v = ref["word2vec"]
    with np.errstate(all="raise", under="ignore"):  # underflow to 0 is exact enough
        big = w2v.sgns_loss(np.array([100.0]), np.array([-100.0]), np.array([[100.0]]))
        assert big == pytest.approx(2e4)
        assert np.array_equal(w2v.sigmoid(np.array([-1e4, 0.0, 1e4])), [0.0, 0.5, 1.0])


def test_step_adds_up_a_negative_equal_to_the_context_and_repeated_negatives(ref):
    w2v = ref["word2vec"]
    rng = np.random.default_rng(0)
    model = w2v.SkipGram(4, 3, rng=rng)
    model.C = rng.normal(size=(4, 3))
    W, C = model.W.copy(), model.C.copy()
    negatives = np.array([2, 1, 2])  # 1 is also the context; 2 is drawn twice
    loss = model.step(0, 1, negatives, 0.1)
    assert loss == pytest.approx(w2v.sgns_loss(W[0], C[1], C[negatives]))
    dw, dc, dn = w2v.sgns_grads(W[0], C[1], C[negatives])
    np.testing.assert_allclose(model.W[0], W[0] - 0.1 * dw)
    np.testing.assert_allclose(model.C[1], C[1] - 0.1 * dc - 0.1 * dn[1])
    np.testing.assert_allclose(model.C[2], C[2] - 0.1 * (dn[0] + dn[2]))
    np.testing.assert_array_equal(model.C[3], C[3])


def planted_groups(rng, groups=((0, 1, 2, 3, 4), (5, 6, 7, 8, 9)), runs=40, run_length=40) -> list[int]:
    """Runs of words drawn from one group at a time: words co-occur (almost) only within their group."""
    tokens = []
    for r in range(runs):
        tokens += [int(t) for t in rng.choice(groups[r % len(groups)], size=run_length)]
    return tokens


def test_skipgram_learns_which_words_share_contexts(ref):
    w2v = ref["word2vec"]
    rng = np.random.default_rng(5)
    model = w2v.SkipGram(10, 8, rng=rng)
    losses = model.train(planted_groups(rng), window=2, k=4, epochs=3, lr=0.05, rng=rng)
    assert losses[-1] < losses[0]
    for word in range(10):
        group = set(range(5)) if word < 5 else set(range(5, 10))
        assert set(model.most_similar(word, 4)) == group - {word}


def test_most_similar_breaks_exact_ties_by_the_smaller_id(ref):
    model = ref["word2vec"].SkipGram(5, 2, rng=np.random.default_rng(0))
    model.W = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [1.0, 0.0], [-1.0, 0.5]])
    assert model.most_similar(0, 4) == [2, 3, 1, 4]
    assert model.most_similar(3, 2) == [0, 2]


def test_train_draws_as_the_contract_says(ref):
    """The rng calls of train, written out: permutation per epoch, then choice per pair."""
    w2v = ref["word2vec"]
    tokens, V = [0, 1, 2, 1, 0, 3], 5
    model, check = w2v.SkipGram(V, 3, rng=np.random.default_rng(1)), w2v.SkipGram(V, 3, rng=np.random.default_rng(1))
    losses = model.train(tokens, 2, 3, 2, 0.1, np.random.default_rng(9))
    rng, p = np.random.default_rng(9), np.array([2, 2, 1, 1, 0]) ** 0.75
    pairs, expected = w2v.skipgram_pairs(tokens, 2), []
    for _ in range(2):
        epoch = [check.step(*pairs[i], rng.choice(V, size=3, p=p / p.sum()), 0.1) for i in rng.permutation(len(pairs))]
        expected.append(sum(epoch) / len(epoch))
    assert losses == pytest.approx(expected, rel=1e-12)
    np.testing.assert_array_equal(model.W, check.W)


# --- ffnn_lm.py ---


def ffnn_loop(model, context):
    """The model written as the lectures' equations, one example and one context word at a time."""
    rows = []
    for b in range(context.shape[0]):
        e = torch.cat([model.E.weight[int(w)] for w in context[b]])  # oldest first
        h = torch.tanh(model.W.weight @ e + model.W.bias)
        rows.append(model.U.weight @ h + model.U.bias)
    return torch.stack(rows)


@pytest.mark.parametrize("V,n,D,H,B", [(7, 3, 4, 5, 6), (2, 1, 1, 1, 1), (5, 4, 2, 3, 3)])
def test_ffnnlm_equals_the_loop(ref, V, n, D, H, B):
    torch.manual_seed(V * n)
    model = ref["ffnn_lm"].FFNNLM(V, n, D, H).double()
    context = torch.randint(0, V, (B, n))
    torch.testing.assert_close(model(context), ffnn_loop(model, context), rtol=1e-12, atol=1e-12)
    assert sorted(k for k, _ in model.named_parameters()) == ["E.weight", "U.bias", "U.weight", "W.bias", "W.weight"]


def test_make_examples_pads_at_the_start(ref):
    contexts, targets = ref["ffnn_lm"].make_examples([4, 5, 6], 2, 0)
    assert contexts.tolist() == [[0, 0], [0, 4], [4, 5]] and targets.tolist() == [4, 5, 6]
    assert contexts.dtype == targets.dtype == torch.long
    contexts, _ = ref["ffnn_lm"].make_examples([], 3, 1)
    assert contexts.shape == (0, 3)


def test_train_ffnn_epoch_loss_is_the_mean_over_examples(ref):
    f = ref["ffnn_lm"]
    torch.manual_seed(0)
    model = f.FFNNLM(5, 2, 3, 4).double()
    contexts, targets = f.make_examples([1, 2, 3, 4, 0, 1, 2], 2, 0)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    losses = f.train_ffnn(
        model, contexts, targets, epochs=1, batch_size=3, lr=0.0, generator=torch.Generator().manual_seed(1)
    )
    model.load_state_dict(start)
    with torch.no_grad():
        mean = torch.nn.functional.cross_entropy(model(contexts), targets).item()
    assert losses == pytest.approx([mean], rel=1e-12)
    assert f.perplexity(model, contexts, targets) == pytest.approx(math.exp(mean), rel=1e-12)


def test_ffnn_perplexity_falls_toward_the_markov_chains_own(ref):
    f = ref["ffnn_lm"]
    rng = np.random.default_rng(0)
    source = sparse_markov(rng, 8, 1, 2)
    train, held_out = source.sample(4000, rng).tolist(), source.sample(1000, rng).tolist()
    # The chain's own perplexity on these held-out tokens: what a perfect model scores on them, without
    # the sampling noise of 1000 tokens around the entropy rate.
    tokens = np.asarray(held_out)
    best = math.exp(-np.log(source.transitions[tokens[:-1], tokens[1:]]).mean())
    torch.manual_seed(0)
    model = f.FFNNLM(9, 2, 8, 16)
    contexts, targets = f.make_examples(train, 2, 8)
    test_contexts, test_targets = f.make_examples(held_out, 2, 8)
    before = f.perplexity(model, test_contexts, test_targets)
    f.train_ffnn(model, contexts, targets, epochs=8, batch_size=32, lr=0.5, generator=torch.Generator().manual_seed(0))
    after = f.perplexity(model, test_contexts, test_targets)
    assert before > 2 * best
    assert best * 0.97 < after < best * 1.1, (before, after, best)
