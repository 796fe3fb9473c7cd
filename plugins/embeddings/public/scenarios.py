"""What the embeddings checks do with a submission, inside the sandbox.

Each function gets ``modules`` ({"bpe": ..., "word2vec": ..., "ffnn_lm": ...},
the submission's or the reference's) and one case's plain-data arguments by
name, and returns plain data. Every input one function needs from another (merges
for encode_word, symbols for decode, W and C for step, a model for
train_ffnn and perplexity) is data drawn by the check, so each check grades
one function. Where a method calls the student's own functions (SkipGram's
train calls step, skipgram_pairs and noise_distribution), the scenario also
returns what those give on the case, so the judge can name the one that
failed first.

Imported by the fork server (with torch) before any student code: never
imports the reference.
"""

from __future__ import annotations

import numpy as np

from lmgrade import (
    NOT_MEASURED,
    agreement,
    asked_beside,
    explained,
    finite_differences,
    lazy_import,
    property_result,
    raised,
    warnings_of,
)

# Imported where first used: at once in the sandbox, only for the reference's values in the grading process.
torch = lazy_import("torch")

COMPONENTS = "components"


def _dtype(name: str) -> torch.dtype:
    """The torch dtype a case names ("float32", "float64")."""
    return {"float32": torch.float32, "float64": torch.float64}[name]


def _array(value) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def _number(value):
    """A float for any real scalar (float, numpy scalar, 0-d array or tensor); anything else as it is."""
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return float(value.item())
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        return float(value)
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iuf":
        return float(value)
    return value


def _attempt(call):
    """What `call` returns, or what it raised, in words: a component's answer for the judge."""
    try:
        return call()
    except Exception as exc:
        return f"raised {type(exc).__name__}: {str(exc)[:100]}"


# --- bpe.py ---


def _merge_list(merges) -> list:
    """The merges with each pair as a tuple (a list of two strings is the same pair)."""
    return [tuple(m) if isinstance(m, list) and len(m) == 2 else m for m in merges]


def train_bpe(modules, word_counts, num_merges):
    """train_bpe once for each of the case's merge counts (`num_merges` is a list)."""
    out = {}
    for merges_asked in num_merges:
        merges = modules["bpe"].train_bpe(dict(word_counts), merges_asked)
        out[f"train_bpe(word_counts, num_merges={merges_asked})"] = _merge_list(merges)
    return out


def encode_word(modules, merges, words):
    merges = [tuple(m) for m in merges]
    return {word: modules["bpe"].encode_word(word, list(merges)) for word in words}


def encode(modules, merges, texts):
    merges = [tuple(m) for m in merges]
    return [modules["bpe"].encode(text, list(merges)) for text in texts]


def decode(modules, symbols):
    return [modules["bpe"].decode(list(one)) for one in symbols]


# --- word2vec.py ---


def sigmoid(modules, x):
    value, caught = warnings_of(lambda: modules["word2vec"].sigmoid(x.copy()))
    return {"sigmoid(x)": _array(value), "warnings": caught}


def _pairs(pairs) -> list:
    return [tuple(int(v) for v in pair) for pair in pairs]


def skipgram_pairs(modules, calls):
    return [_pairs(modules["word2vec"].skipgram_pairs(list(tokens), window)) for tokens, window in calls]


def noise_distribution(modules, counts, power):
    """noise_distribution(counts), or with power= where the case gives one (None: the default, by omission)."""
    nd = modules["word2vec"].noise_distribution
    p = nd(counts.copy()) if power is None else nd(counts.copy(), power=power)
    return _array(p)


def sgns_loss(modules, vectors):
    return [_number(modules["word2vec"].sgns_loss(w.copy(), c.copy(), n.copy())) for w, c, n in vectors]


GRAD_NAMES = ("d loss / d w_vec", "d loss / d c_vec", "d loss / d neg_vecs")


def sgns_grads(modules, w_vec, c_vec, neg_vecs):
    """The gradients, the student's own loss at the point, and the gradients against its central differences."""
    w2v = modules["word2vec"]
    w, c, n = w_vec, c_vec, neg_vecs
    grads = w2v.sgns_grads(w.copy(), c.copy(), n.copy())
    answer = (
        dict(zip(GRAD_NAMES, (_array(g) for g in grads)))
        if isinstance(grads, (tuple, list)) and len(grads) == 3
        else {name: f"sgns_grads returned {type(grads).__name__}, not 3 arrays" for name in GRAD_NAMES}
    )
    own_loss = _attempt(lambda: _number(w2v.sgns_loss(w.copy(), c.copy(), n.copy())))
    if isinstance(own_loss, float) and all(isinstance(v, np.ndarray) for v in answer.values()):
        point = {"w_vec": w.copy(), "c_vec": c.copy(), "neg_vecs": n.copy()}

        def loss():
            return w2v.sgns_loss(*(point[k].copy() for k in ("w_vec", "c_vec", "neg_vecs")))

        consistency = explained(
            lambda: agreement(
                dict(zip(("w_vec", "c_vec", "neg_vecs"), answer.values())),
                finite_differences(loss, point, point.__setitem__),
            )
        )
    else:
        consistency = f"{NOT_MEASURED}: no loss or no gradients to compare"
    return {
        **answer,
        COMPONENTS: {"sgns_loss at this point": own_loss, "against finite differences of your sgns_loss": consistency},
    }


def _skipgram(modules, W, C):
    """A SkipGram of W's sizes with W and C assigned."""
    V, D = W.shape
    model = modules["word2vec"].SkipGram(V, D, rng=np.random.default_rng(0))
    model.W, model.C = W.copy(), C.copy()
    return model


def skipgram_init(modules, vocab_size, dim, seed):
    """SkipGram(vocab_size, dim), with rng seeded where the case gives a seed (None: rng left out)."""
    SkipGram = modules["word2vec"].SkipGram
    V, D = vocab_size, dim
    model = SkipGram(V, D) if seed is None else SkipGram(V, D, rng=np.random.default_rng(seed))
    made = {"W": _array(model.W), "C": _array(model.C)}
    if seed is not None:  # drawn from rng: the same seed gives the same W, another seed another
        made[SAME_SEED] = _array(SkipGram(V, D, rng=np.random.default_rng(seed)).W)
        made[OTHER_SEED] = _array(SkipGram(V, D, rng=np.random.default_rng(seed + 1)).W)
    return made


SAME_SEED, OTHER_SEED = "W made again with the same seed", "W made with another seed"


def skipgram_init_holds(args, made):
    """What the contract says of the constructor's draws, judged in the grading process from the arrays it
    made (never a verdict of the child's): shapes, W uniform in +-0.5/D, C zeros, W drawn from rng."""
    if not isinstance(made, dict) or not {"W", "C"} <= set(made):
        return made
    try:
        W, C = np.asarray(made["W"], dtype=np.float64), np.asarray(made["C"], dtype=np.float64)
        again = {k: np.asarray(made[k], dtype=np.float64) for k in (SAME_SEED, OTHER_SEED) if k in made}
    except (TypeError, ValueError):
        return "W and C are not arrays of numbers"
    D = args["dim"]
    bound = 0.5 / D
    seeded = {}
    if SAME_SEED in again and OTHER_SEED in again:
        seeded = {
            "the same seed gives the same W": bool(np.array_equal(W, again[SAME_SEED])),
            "another seed gives another W": not np.array_equal(W, again[OTHER_SEED]),
        }
    finite = W.size > 0 and bool(np.all(np.isfinite(W)))
    return {
        **seeded,
        "W shape": W.shape,
        "C shape": C.shape,
        "W within +-0.5/D": finite and bool(np.all(np.abs(W) <= bound)),
        "W spread over +-0.5/D (its largest |entry| above 0.25/D)": finite and bool(np.max(np.abs(W)) > bound / 2),
        "W has entries of both signs": finite and bool(np.any(W < 0) and np.any(W > 0)),
        "C zeros": bool(np.all(C == 0)),
    }


# step and train answer with what they changed, not W and C afterwards: parameters left as
# assigned would echo the case's data, and a method that does nothing must show none of it.
def step(modules, W, C, w, c, negatives, lr):
    model = _skipgram(modules, W, C)
    loss = model.step(w, c, negatives.copy(), lr)
    return {
        "returned loss": _number(loss),
        "W after the step minus W before": _array(model.W) - W,
        "C after the step minus C before": _array(model.C) - C,
    }


def train(modules, W, C, tokens, window, k, epochs, lr, seed):
    model = _skipgram(modules, W, C)
    losses = model.train(list(tokens), window, k, epochs, lr, np.random.default_rng(seed))
    return {
        "losses": [_number(v) for v in losses] if isinstance(losses, list) else losses,
        "W after training minus W before": _array(model.W) - W,
        "C after training minus C before": _array(model.C) - C,
    }


def most_similar(modules, W, C, queries):
    model = _skipgram(modules, W, C)
    return {
        f"most_similar({word}, topn={topn})": [int(i) for i in model.most_similar(word, topn)] for word, topn in queries
    }


# --- ffnn_lm.py ---


def _numeric_mode() -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def _load(module: torch.nn.Module, state: dict[str, np.ndarray], dtype: str) -> torch.nn.Module:
    """`module` in `dtype` with the case's weights; a parameter of the contract it lacks is an error."""
    _numeric_mode()
    module.to(_dtype(dtype))
    tensors = {name: torch.tensor(np.asarray(value), dtype=_dtype(dtype)) for name, value in state.items()}
    _, unexpected = module.load_state_dict(tensors, strict=False)
    if unexpected:
        raise ValueError(
            f"{type(module).__name__} has no parameter {unexpected[0]!r}: keep the parameters "
            "the contract names (self.E, self.W, self.U)"
        )
    return module


def ffnn_forward(modules, config, state, context, g, dtype):
    """The logits, and d sum(logits * g) / d every parameter, by the model's own autograd."""
    sizes = (config["vocab_size"], config["context_size"], config["embed_dim"], config["hidden_dim"])
    model = _load(modules["ffnn_lm"].FFNNLM(*sizes), state, dtype)
    logits = model(torch.tensor(context, dtype=torch.long))
    if not isinstance(logits, torch.Tensor):
        return {"logits": logits}
    (logits * torch.as_tensor(g, dtype=logits.dtype)).sum().backward()
    params = dict(model.named_parameters())
    answer = {"logits": _array(logits)}
    for name in state:
        p = params.get(name)
        answer[f"gradient w.r.t. {name}"] = (
            "no gradient (this parameter does not take part in the logits)"
            if p is None or p.grad is None
            else _array(p.grad)
        )
    return answer


@asked_beside
def make_examples(modules, tokens, context_size, pad):
    contexts, targets = modules["ffnn_lm"].make_examples(list(tokens), context_size, pad)
    return {
        "contexts": _array(contexts),
        "targets": _array(targets),
        "dtypes": (
            str(getattr(contexts, "dtype", type(contexts).__name__)),
            str(getattr(targets, "dtype", type(targets).__name__)),
        ),
    }


def grader_model(config: dict, state: dict, dtype: str) -> torch.nn.Module:
    """The grader's own feed-forward LM (not the student's FFNNLM): train_ffnn and perplexity are graded on it."""
    V, n, D, H = config["vocab_size"], config["context_size"], config["embed_dim"], config["hidden_dim"]
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Embedding(V, D), torch.nn.Flatten(), torch.nn.Linear(n * D, H), torch.nn.Tanh(), torch.nn.Linear(H, V)
    )
    return _load(model, state, dtype)


def train_ffnn(modules, config, state, contexts, targets, dtype, epochs, batch_size, lr, seed):
    model = grader_model(config, state, dtype)
    contexts, targets = (
        torch.tensor(contexts, dtype=torch.long),
        torch.tensor(targets, dtype=torch.long),
    )
    losses = modules["ffnn_lm"].train_ffnn(
        model,
        contexts,
        targets,
        epochs=epochs,
        batch_size=batch_size,
        lr=lr,
        generator=torch.Generator().manual_seed(seed),
    )
    return {
        "losses": [_number(v) for v in losses] if isinstance(losses, list) else losses,
        "parameters after training": {name: _array(p) for name, p in model.named_parameters()},
    }


def perplexity(modules, config, state, contexts, targets, dtype):
    model = grader_model(config, state, dtype)
    contexts, targets = (
        torch.tensor(contexts, dtype=torch.long),
        torch.tensor(targets, dtype=torch.long),
    )
    return _number(modules["ffnn_lm"].perplexity(model, contexts, targets))


# --- properties: each pays only with the right answer beside it ---


def no_mutation(
    modules,
    what,
    word_counts=None,
    num_merges=None,
    merges=None,
    word=None,
    counts=None,
    w_vec=None,
    c_vec=None,
    neg_vecs=None,
    W=None,
    C=None,
    w=None,
    c=None,
    negatives=None,
    lr=None,
    tokens=None,
    context_size=None,
    pad=None,
):
    """Call one function (`what`); its answer, and its arguments as they are afterwards. Each case gives only
    the arguments of its own call."""
    if what == "train_bpe":
        word_counts = dict(word_counts)
        answer = _merge_list(modules["bpe"].train_bpe(word_counts, num_merges))
        return property_result(answer, {"word_counts": word_counts})
    if what == "encode_word":
        merges = [tuple(m) for m in merges]
        answer = modules["bpe"].encode_word(word, merges)
        return property_result(answer, {"merges": merges})
    if what == "noise_distribution":
        counts = counts.copy()
        return property_result(_array(modules["word2vec"].noise_distribution(counts)), {"counts": counts})
    if what == "sgns_grads":
        w, c, n = w_vec.copy(), c_vec.copy(), neg_vecs.copy()
        grads = modules["word2vec"].sgns_grads(w, c, n)
        return property_result([_array(g) for g in grads], {"w_vec": w, "c_vec": c, "neg_vecs": n})
    if what == "SkipGram.step":
        model = _skipgram(modules, W, C)
        negatives = negatives.copy()
        loss = _number(model.step(w, c, negatives, lr))
        return property_result([loss, _array(model.W), _array(model.C)], {"negatives": negatives})
    tokens = list(tokens)
    contexts, targets = modules["ffnn_lm"].make_examples(tokens, context_size, pad)
    # Lists of rows: an answer with rows missing (no padded examples) is wrong but shows work.
    return property_result([_array(contexts).tolist(), _array(targets).tolist()], {"tokens": tokens})


def bad_argument(modules, what, good, word_counts=None, num_merges=None, tokens=None, window=None):
    """ValueError outside the domain (train_bpe's `word_counts` and `num_merges`, or skipgram_pairs' `tokens`
    and `window`), beside the answer of the same function inside it (`good` for train_bpe, window 1)."""
    if what == "skipgram_pairs":
        f = modules["word2vec"].skipgram_pairs
        answer = _pairs(f(list(tokens), 1))
        return property_result(answer, raised(lambda: f(list(tokens), window)))
    f = modules["bpe"].train_bpe
    answer = _merge_list(f(dict(good), 2))
    return property_result(answer, raised(lambda: f(dict(word_counts), num_merges)))
