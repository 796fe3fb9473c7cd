"""The checks of the ngram assignment: their inputs, tolerances and mistakes."""

from __future__ import annotations

from lmgrade import Case, CaseContext, Check, Limits, Tolerance

from . import mistakes as M
from .corpus import sentences
from .public import scenarios
from .public.sampling import judge_sample

BOS, EOS, UNK = "<s>", "</s>", "<unk>"

# The hand-computed trigram example of the handout: after "cows eat",
# corn 4/11, grass 3/11, hay 2/11 and the end of the sentence 2/11.
COWS = (
    [["cows", "eat", "corn"]] * 4
    + [["cows", "eat", "grass"]] * 3
    + [["cows", "eat", "hay"]] * 2
    + [["cows", "eat"]] * 2
)


LETTERS = "abcdefghijklmnopqrstuvwxyz"


def made_up_words(rng, count: int) -> list[str]:
    """`count` distinct made-up words. A hand-written case built on them is drawn from the course
    secret like any other, so answers recorded under another secret (the student bundle's) do not fit it."""
    words: list[str] = []
    while len(words) < count:
        word = "".join(rng.choice(list(LETTERS), size=int(rng.integers(3, 8))))
        if word not in words:
            words.append(word)
    return words


def renamed(rng, corpus: list[list[str]]) -> tuple[list[list[str]], dict[str, str]]:
    """`corpus` with each word replaced by a made-up one (the same word always by the same one), and the
    names given: the counts, and so every probability of a hand-computed example, stay as they are."""
    vocabulary = sorted({w for sentence in corpus for w in sentence})
    names = dict(zip(vocabulary, made_up_words(rng, len(vocabulary))))
    return [[names[w] for w in sentence] for sentence in corpus], names


# Tokens of every kind: some sort before "<s>", "</s>" and "<unk>", so code
# that compares tokens with < instead of == shows.
ODD_TOKENS = (",", "!", "42", "Alice", "naïve", "Straße")


def with_odd_tokens(rng, corpus: list[list[str]], share: float = 0.3, tokens=ODD_TOKENS) -> list[list[str]]:
    """`corpus` with one of `tokens` put into about `share` of its sentences."""
    out = []
    for sentence in corpus:
        sentence = list(sentence)
        if rng.random() < share:
            sentence.insert(int(rng.integers(len(sentence) + 1)), tokens[int(rng.integers(len(tokens)))])
        out.append(sentence)
    return out


def with_unk(corpus: list[list[str]]) -> list[list[str]]:
    """Training data that itself holds UNK, with a count of its own."""
    return [corpus[0] + [UNK], [UNK], *corpus[1:]]


def _corpus_label(corpus: list[list[str]]) -> str:
    if len(corpus) <= 4:
        return repr(corpus)
    return f"{len(corpus)} sentences, the first {corpus[0]!r}"


def _model_label(corpus, n, k=None, before=None) -> str:
    model = f"NGramLM(n={n})" if k is None else f"NGramLM(n={n}, k={k})"
    if before is not None:
        model += f" fitted on {_corpus_label(before)}, then"
    return f"{model} fitted on {_corpus_label(corpus)}"


def _queries(rng, corpus, n) -> list[tuple[str, list[str]]]:
    """Seen n-grams, unseen words and contexts, short and over-long contexts."""
    queries = []
    for _ in range(6):
        s = [BOS] * (n - 1) + corpus[int(rng.integers(len(corpus)))] + [EOS]
        t = int(rng.integers(n - 1, len(s)))
        queries.append((s[t], s[t - n + 1 : t] if n > 1 else []))
    # A sentence's first word after the all-BOS context and after an empty
    # one: missing BOS padding and an unpadded short context differ there.
    first = corpus[0][0] if corpus[0] else EOS
    queries += [(first, [BOS] * (n - 1)), (first, [])]
    queries += [
        ("zebra", queries[0][1]),
        (EOS, queries[1][1]),
        (UNK, queries[2][1]),
        (queries[3][0], ["zebra"] * (n - 1)),
        (queries[4][0], []),
        (queries[5][0], ["alice", "sees"] + queries[5][1]),
    ]
    if n > 2:
        queries.append((queries[0][0], queries[0][1][-1:]))
    return [(w, list(ctx)) for w, ctx in queries]


def pad_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    # The contract's examples with made-up words; an empty sentence with an order drawn too (pad([], 1)
    # alone would be the same under every secret).
    drawn = [
        (made_up_words(rng, 2), 3),
        ([], int(rng.integers(2, 60))),
        (made_up_words(rng, 2), 1),
        (made_up_words(rng, 1), 2),
        (sentences(rng, 1)[0], 5),
    ]
    return [Case(f"pad({s!r}, n={n})", {"sentence": s, "n": n}) for s, n in drawn]


def count_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    cows, _ = renamed(rng, COWS)
    small = sentences(rng, 8)
    a, b = made_up_words(rng, 2)
    corpora = [(cows, 3), (small, 1), (small, 2), (small, 3), ([[a, b, a], []], 2)]
    return [Case(f"count_ngrams({_corpus_label(c)}, n={n})", {"corpus": c, "n": n}) for c, n in corpora]


def fit_cases(ctx: CaseContext) -> list[Case]:
    corpus = sentences(ctx.rng, 10)
    cases = [
        Case(_model_label(c, n, k), {"corpus": c, "n": n, "k": k})
        for c, n, k in [(corpus, 2, 0.0), (corpus, 3, 0.5), ([made_up_words(ctx.rng, 1), []], 1, 0.0)]
    ]
    # A corpus of one word has the vocabulary of any pick of its words: asked beside the ten sentences.
    cases[-1].args["beside"] = {"corpus": corpus}
    cases[-1].label += "; and the same model fitted on the 10 sentences above"
    odd, first = with_unk(with_odd_tokens(ctx.rng, sentences(ctx.rng, 12), share=0.6)), sentences(ctx.rng, 5)
    cases.append(Case(_model_label(odd, 2, before=first), {"corpus": odd, "n": 2, "fitted_before_on": first}))
    return cases


def _prob_cases(ctx: CaseContext, settings) -> list[Case]:
    cases = []
    for n, k in settings:
        corpus = with_odd_tokens(ctx.rng, sentences(ctx.rng, 40))
        queries = _queries(ctx.rng, corpus, n) + [(t, []) for t in ODD_TOKENS[:3]]
        cases.append(Case(_model_label(corpus, n, k), {"corpus": corpus, "n": n, "k": k, "queries": queries}))
    # Fitted twice (the second fit must forget the first corpus), on data with UNK in it.
    before = sentences(ctx.rng, 20)
    n, k = settings[-1]
    corpus = with_unk(corpus)
    cases.append(
        Case(
            _model_label(corpus, n, k, before=before),
            {"corpus": corpus, "n": n, "k": k, "queries": queries, "fitted_before_on": before},
        )
    )
    return cases


def prob_mle_cases(ctx: CaseContext) -> list[Case]:
    # The handout's example, its words made up: after "cows eat", corn 4/11, grass 3/11, hay 2/11, EOS 2/11.
    corpus, names = renamed(ctx.rng, COWS)
    cows, eat, corn, hay = names["cows"], names["eat"], names["corn"], names["hay"]
    handout = "the handout's cows example with made-up words"
    cows_case = Case(
        f"{_model_label(corpus, 3)} ({handout})",
        {  # k left to its default, 0
            "corpus": corpus,
            "n": 3,
            "queries": [[names.get(w, w), [cows, eat]] for w in ("corn", "grass", "hay", EOS, "cows")],
        },
    )
    # context is a Sequence[str]: a tuple must do as well as a list.
    as_tuple = Case(
        f"{_model_label(corpus, 3, 0.0)} ({handout}); the context given as a tuple",
        {"corpus": corpus, "n": 3, "k": 0.0, "queries": [[corn, (cows, eat)], [hay, (eat,)]]},
    )
    return [cows_case, as_tuple] + _prob_cases(ctx, [(1, 0.0), (2, 0.0), (3, 0.0)])


def prob_add_k_cases(ctx: CaseContext) -> list[Case]:
    return _prob_cases(ctx, [(1, 1.0), (2, 1.0), (2, 0.5), (3, 0.01)])


def logprob_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    for n, k in [(2, 0.0), (3, 0.0), (2, 0.1), (3, 0.1)]:
        corpus = with_odd_tokens(ctx.rng, sentences(ctx.rng, 30))
        test = corpus[:3] + sentences(ctx.rng, 2) + [[], ["the", "zebra", "sleeps"]]
        cases.append(Case(_model_label(corpus, n, k), {"corpus": corpus, "n": n, "k": k, "sentences": test}))
    return cases


def perplexity_cases(ctx: CaseContext, count: int = 30) -> list[Case]:
    cases = []
    for n, k, held_out in [(2, 0.0, False), (3, 0.0, False), (2, 0.5, True), (3, 0.1, True), (2, 0.0, True)]:
        corpus = with_odd_tokens(ctx.rng, sentences(ctx.rng, count))
        # Unequal lengths expose a mean of per-sentence perplexities.
        test = sentences(ctx.rng, 6) if held_out else corpus[:6]
        args = {"corpus": corpus, "n": n, "k": k, "test": test}
        label = f"{_model_label(corpus, n, k)}; perplexity({_corpus_label(test)})"
        if n == 2 and k == 0.0 and held_out:
            # An unseen word under MLE: inf, what no work answers too, so asked beside seen sentences.
            args.update(test=test[:2] + [["the", "zebra", "sleeps"]], beside={"test": corpus[:3]})
            label = f"{_model_label(corpus, n, k)}; perplexity({_corpus_label(args['test'])}) and perplexity"
            label += f"({_corpus_label(corpus[:3])})"
        cases.append(Case(label, args))
    return cases


# Enough for the chi-square tests at one in a million against the catalogue's
# samplers, and for the stale-context likelihood ratio with a wide margin
# (benchmarks/sampling_power.py); the submission draws each one.
DRAWS, REPEAT = 400, 50


def sample_cases(ctx: CaseContext) -> list[Case]:
    cases = []
    # max_len None: sample(rng), its default used by omission.
    # k = 0.05 keeps the seen successors far likelier than the rest (a sampler drawing any word of the
    # vocabulary shows), and the unseen ones drawn often enough to show a sampler ignoring the smoothing.
    for n, k, max_len in [(2, 0.0, None), (3, 0.0, 100), (2, 0.05, 6)]:
        corpus = with_odd_tokens(ctx.rng, sentences(ctx.rng, 25))
        args = {
            "corpus": corpus,
            "n": n,
            "k": k,
            "max_len": max_len,
            "draws": DRAWS,
            "repeat": REPEAT,
            "seed": int(ctx.rng.integers(2**62)),
        }
        call = "sample(rng)" if max_len is None else f"sample(rng, max_len={max_len})"
        cases.append(Case(f"{_model_label(corpus, n, k)}; {DRAWS} draws of {call}", args))
    # Fitted, sampled from, fitted again: nothing of the first model may stay behind.
    before = sentences(ctx.rng, 10)
    cases.append(
        Case(
            f"{_model_label(corpus, 2, 0.0, before=before)} (sampled from in between); "
            f"{DRAWS} draws of sample(rng, max_len=100)",
            {
                **cases[0].args,
                "max_len": 100,
                "fitted_before_on": before,
                "sampled_before": True,
                "seed": int(ctx.rng.integers(2**62)),
            },
        )
    )
    # One long sentence of distinct words: the bigram model has a single draw,
    # longer than the default max_len, which must cut it at exactly 100 tokens.
    long = [made_up_words(ctx.rng, 150)]
    # Each of its draws asks prob about 152 words 100 times: a few draws show the cut.
    cases.append(
        Case(
            "NGramLM(n=2, k=0.0) fitted on one sentence of 150 distinct words; 10 draws of sample(rng)",
            {
                "corpus": long,
                "n": 2,
                "k": 0.0,
                "max_len": None,
                "draws": 10,
                "repeat": 5,
                "seed": int(ctx.rng.integers(2**62)),
            },
        )
    )
    return cases


def no_mutation_cases(ctx: CaseContext) -> list[Case]:
    corpus = sentences(ctx.rng, 6)
    sentence = sentences(ctx.rng, 1)[0] + made_up_words(ctx.rng, 1)
    calls = [
        ("pad", {"value": sentence, "n": 3}),
        ("count_ngrams", {"value": corpus, "n": 2}),
        ("fit", {"value": corpus, "n": 2, "k": 0.0}),
        ("prob", {"value": sentence[:2], "word": sentence[2], "corpus": corpus, "n": 3, "k": 0.5}),
        ("logprob", {"value": sentence, "corpus": corpus, "n": 2, "k": 0.5}),
        ("perplexity", {"value": corpus[:2], "corpus": corpus, "n": 2, "k": 0.5}),
    ]
    return [
        Case(f"{call} must leave its argument {args['value']!r} unchanged", {"call": call, **args})
        for call, args in calls
    ]


def bad_argument_cases(ctx: CaseContext) -> list[Case]:
    rng = ctx.rng
    domain = ("ValueError",)
    # A value of the wrong type may be refused as Python's own code does, with TypeError.
    wrong_type = ("ValueError", "TypeError")

    def order() -> int:
        return int(rng.integers(1, 6))

    def smoothing() -> float:
        return round(float(rng.uniform(0.0, 2.0)), 3)

    # Each bad value beside drawn ones (an order below 1 but 0, a k below 0, a float order, a string), and
    # the calls made on a drawn sentence: recorded answers to other draws do not fit. n = 0, the boundary,
    # stays 0: the sentence is what the secret draws there.
    calls = [
        ("pad", 0, 0.0, domain),
        ("pad", -int(rng.integers(1, 100)), 0.0, domain),
        ("pad", order() + 0.5, 0.0, wrong_type),
        ("count_ngrams", 0, 0.0, domain),
        ("count_ngrams", str(order()), 0.0, wrong_type),
        ("NGramLM", 0, smoothing(), domain),
        ("NGramLM", order(), -smoothing() - 0.01, domain),
        ("NGramLM", order(), made_up_words(rng, 1)[0], wrong_type),
    ]
    return [
        Case(
            f"{call}(..., n={n!r}{f', k={k!r}' if call == 'NGramLM' else ''}) must raise {' or '.join(accepted)}",
            {"call": call, "n": n, "k": k, "accepted": list(accepted), "sentence": made_up_words(rng, 2)},
        )
        for call, n, k, accepted in calls
    ]


def hidden_perplexity_cases(ctx: CaseContext) -> list[Case]:
    return perplexity_cases(ctx, count=200)


EXACT = Tolerance(rtol=1e-9, atol=1e-12)
LOG = Tolerance(rtol=1e-9, atol=1e-9)
PPL = Tolerance(rtol=1e-7, atol=1e-9)
# Each check names only the mistakes its cases can tell apart from each other
# and from the right answer (a test holds every check to that).
VOCAB_MISTAKES = (M.BOS_IN_VOCAB, M.NO_UNK_IN_VOCAB, M.ADD_K_DENOMINATOR)  # only add-k shows them
MLE_MISTAKES = (M.UNPADDED_CONTEXT, *M.PADDING, M.CONTEXT_NOT_TRUNCATED)
ADD_K_MISTAKES = (*MLE_MISTAKES, *VOCAB_MISTAKES)
LOGPROB_MISTAKES = (M.LOG2, M.LOG10, M.LOGPROB_NO_EOS, *M.PADDING, *VOCAB_MISTAKES)
# pad appending EOS to the caller's sentence shows in perplexity too: its count len(s) + 1 reads the longer list.
PPL_MISTAKES = (M.PERPLEXITY_MEAN, M.PERPLEXITY_NO_EOS, *LOGPROB_MISTAKES, M.PAD_MUTATES)


def ngram_checks() -> list[Check]:
    # The contract defines each quantity through the ones before it (counts of padded sentences,
    # prob from the counts, logprob from prob, perplexity from logprob): `composes` says so.
    quick = Limits(cpu_s=4, wall_s=8)
    return [
        Check(
            "pad",
            "pad adds n - 1 BOS and one EOS",
            scenarios.pad,
            pad_cases,
            mistakes=M.PADDING,
            limits=quick,
            grades=("ngram.pad",),
        ),
        Check(
            "count_ngrams",
            "count_ngrams counts every n-gram of the padded corpus",
            scenarios.count_ngrams,
            count_cases,
            mistakes=M.PADDING,
            composes=("pad",),
            limits=quick,
            grades=("ngram.count_ngrams",),
        ),
        Check(
            "fit",
            "fit returns self and builds the vocabulary",
            scenarios.fit,
            fit_cases,
            mistakes=(M.BOS_IN_VOCAB, M.NO_UNK_IN_VOCAB, M.EOS_PER_ORDER, M.NO_EOS, M.UNK_LABEL),
            composes=("count_ngrams",),
            limits=quick,
            grades=("ngram.NGramLM.fit",),
            stands_in=False,
        ),
        Check(
            "prob_mle",
            "prob under maximum likelihood",
            scenarios.prob,
            prob_mle_cases,
            tolerance=EXACT,
            mistakes=(*MLE_MISTAKES, M.UNSEEN_CONTEXT_DIVISION, M.CONTEXT_MUST_BE_A_LIST, M.UNSEEN_CONTEXT_NAN),
            composes=("fit",),
            limits=quick,
            grades=("ngram.NGramLM.prob",),
        ),
        Check(
            "prob_add_k",
            "prob with add-k smoothing",
            scenarios.prob,
            prob_add_k_cases,
            tolerance=EXACT,
            mistakes=(*ADD_K_MISTAKES, M.UNK_LABEL),
            composes=("fit",),
            limits=quick,
            grades=("ngram.NGramLM.prob",),
        ),
        Check(
            "logprob",
            "logprob of padded sentences, -inf for impossible ones",
            scenarios.logprob,
            logprob_cases,
            tolerance=LOG,
            mistakes=(*LOGPROB_MISTAKES, M.LOG_OF_ZERO, M.LOGPROB_MEAN),
            composes=("prob_mle", "prob_add_k"),
            limits=quick,
            grades=("ngram.NGramLM.logprob",),
        ),
        Check(
            "perplexity",
            "perplexity of a corpus, inf when a sentence is impossible",
            scenarios.perplexity,
            perplexity_cases,
            tolerance=PPL,
            mistakes=PPL_MISTAKES,
            composes=("logprob",),
            limits=quick,
            grades=("ngram.NGramLM.perplexity",),
        ),
        Check(
            "sample",
            "sample draws from p(. | context) using only rng",
            scenarios.sample,
            sample_cases,
            judge=judge_sample,
            mistakes=M.SAMPLER,
            composes=("prob_mle", "prob_add_k"),
            limits=Limits(cpu_s=30, wall_s=45),
            timeout_hint=(
                "sample must stop at EOS, or after max_len tokens at the latest. If it does, "
                "make prob fast (count once, in fit): sample asks it about every word of the "
                f"vocabulary at every step, {DRAWS} times per case."
            ),
            grades=("ngram.NGramLM.sample",),
        ),
        Check(
            "no_mutation",
            "no function changes its arguments",
            scenarios.no_mutation,
            no_mutation_cases,
            property_check=True,
            mistakes=(M.PAD_MUTATES,),
            composes=("perplexity", "sample"),
            limits=quick,
        ),
        Check(
            "bad_arguments",
            "ValueError for arguments outside the domain",
            scenarios.bad_argument,
            bad_argument_cases,
            property_check=True,
            holds=scenarios.bad_argument_holds,
            mistakes=(M.NO_VALIDATION, M.ASSERT_NOT_VALUE_ERROR),
            composes=("perplexity", "sample"),
            limits=quick,
        ),
        Check(
            "perplexity_hidden",
            "perplexity on larger held-out corpora",
            scenarios.perplexity,
            hidden_perplexity_cases,
            tolerance=PPL,
            mistakes=PPL_MISTAKES,
            visibility="after_due_date",
            composes=("logprob",),
            limits=quick,
            grades=("ngram.NGramLM.perplexity",),
        ),
    ]
