"""What the embeddings checks do with a submission, inside the sandbox.

Each function gets ``modules`` ({"bpe": ..., "word2vec": ..., "ffnn_lm": ...},
the submission's or the reference's) and one case's plain-data arguments,
and returns plain data. Every input one function needs from another (merges
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


def train_bpe(modules, args):
    out = {}
    for num_merges in args["num_merges"]:
        merges = modules["bpe"].train_bpe(dict(args["word_counts"]), num_merges)
        out[f"train_bpe(word_counts, num_merges={num_merges})"] = _merge_list(merges)
    return out


def encode_word(modules, args):
    merges = [tuple(m) for m in args["merges"]]
    return {word: modules["bpe"].encode_word(word, list(merges)) for word in args["words"]}


def encode(modules, args):
    merges = [tuple(m) for m in args["merges"]]
    return [modules["bpe"].encode(text, list(merges)) for text in args["texts"]]


def decode(modules, args):
    return [modules["bpe"].decode(list(symbols)) for symbols in args["symbols"]]


# --- word2vec.py ---


def sigmoid(modules, args):
    value, caught = warnings_of(lambda: modules["word2vec"].sigmoid(args["x"].copy()))
    return {"sigmoid(x)": _array(value), "warnings": caught}


def _pairs(pairs) -> list:
    return [tuple(int(v) for v in pair) for pair in pairs]


def skipgram_pairs(modules, args):
    return [_pairs(modules["word2vec"].skipgram_pairs(list(tokens), window)) for tokens, window in args["calls"]]


def noise_distribution(modules, args):
    nd = modules["word2vec"].noise_distribution
    counts = args["counts"]
    p = nd(counts.copy()) if args["power"] is None else nd(counts.copy(), power=args["power"])
    return _array(p)


def sgns_loss(modules, args):
    return [_number(modules["word2vec"].sgns_loss(w.copy(), c.copy(), n.copy())) for w, c, n in args["vectors"]]


GRAD_NAMES = ("d loss / d w_vec", "d loss / d c_vec", "d loss / d neg_vecs")


def sgns_grads(modules, args):
    """The gradients, the student's own loss at the point, and the gradients against its central differences."""
    w2v = modules["word2vec"]
    w, c, n = args["w_vec"], args["c_vec"], args["neg_vecs"]
    grads = w2v.sgns_grads(w.copy(), c.copy(), n.copy())
    answer = (
        dict(zip(GRAD_NAMES, (_array(g) for g in grads)))
        if isinstance(grads, (tuple, list)) and len(grads) == 3
        else {name: f"sgns_grads returned {type(grads).__name__}, not 3 arrays" for name in GRAD_NAMES}
    )
    own_loss = _attempt(lambda: _number(w2v.sgns_loss(w.copy(), c.copy(), n.copy())))
    if isinstance(own_loss, float) and all(isinstance(v, np.ndarray) for v in answer.values()):
        point = {"w_vec": w.copy(), "c_vec": c.copy(), "neg_vecs": n.copy()}
        numeric = finite_differences(
            lambda: w2v.sgns_loss(*(point[k].copy() for k in ("w_vec", "c_vec", "neg_vecs"))), point, point.__setitem__
        )
        consistency = agreement(dict(zip(("w_vec", "c_vec", "neg_vecs"), answer.values())), numeric)
    else:
        consistency = f"{NOT_MEASURED}: no loss or no gradients to compare"
    return {
        **answer,
        COMPONENTS: {"sgns_loss at this point": own_loss, "against finite differences of your sgns_loss": consistency},
    }


def _skipgram(modules, args):
    """A SkipGram of the case's sizes with the case's W and C assigned."""
    V, D = args["W"].shape
    model = modules["word2vec"].SkipGram(V, D, rng=np.random.default_rng(0))
    model.W, model.C = args["W"].copy(), args["C"].copy()
    return model


def skipgram_init(modules, args):
    SkipGram = modules["word2vec"].SkipGram
    V, D = args["vocab_size"], args["dim"]
    model = SkipGram(V, D) if args["seed"] is None else SkipGram(V, D, rng=np.random.default_rng(args["seed"]))
    W, C = _array(model.W), _array(model.C)
    bound = 0.5 / D
    seeded = {}
    if args["seed"] is not None:  # drawn from rng: the same seed gives the same W, another seed another
        seeded = {
            "the same seed gives the same W": bool(
                np.array_equal(W, _array(SkipGram(V, D, rng=np.random.default_rng(args["seed"])).W))
            ),
            "another seed gives another W": not np.array_equal(
                W, _array(SkipGram(V, D, rng=np.random.default_rng(args["seed"] + 1)).W)
            ),
        }
    return {
        **seeded,
        "W shape": W.shape,
        "C shape": C.shape,
        "W within +-0.5/D": bool(np.all(np.abs(W) <= bound)),
        "W spread over +-0.5/D (its largest |entry| above 0.25/D)": bool(np.max(np.abs(W)) > bound / 2),
        "W has entries of both signs": bool(np.any(W < 0) and np.any(W > 0)),
        "C zeros": bool(np.all(C == 0)),
    }


# step and train answer with what they changed, not W and C afterwards: parameters left as
# assigned would echo the case's data, and a method that does nothing must show none of it.
def step(modules, args):
    model = _skipgram(modules, args)
    loss = model.step(args["w"], args["c"], args["negatives"].copy(), args["lr"])
    return {
        "returned loss": _number(loss),
        "W after the step minus W before": _array(model.W) - args["W"],
        "C after the step minus C before": _array(model.C) - args["C"],
    }


def train(modules, args):
    model = _skipgram(modules, args)
    tokens = list(args["tokens"])
    losses = model.train(
        tokens, args["window"], args["k"], args["epochs"], args["lr"], np.random.default_rng(args["seed"])
    )
    return {
        "losses": [_number(v) for v in losses] if isinstance(losses, list) else losses,
        "W after training minus W before": _array(model.W) - args["W"],
        "C after training minus C before": _array(model.C) - args["C"],
    }


def most_similar(modules, args):
    model = _skipgram(modules, args)
    return {
        f"most_similar({word}, topn={topn})": [int(i) for i in model.most_similar(word, topn)]
        for word, topn in args["queries"]
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


def ffnn_forward(modules, args):
    """The logits, and d sum(logits * g) / d every parameter, by the model's own autograd."""
    c = args["config"]
    model = _load(
        modules["ffnn_lm"].FFNNLM(c["vocab_size"], c["context_size"], c["embed_dim"], c["hidden_dim"]),
        args["state"],
        args["dtype"],
    )
    logits = model(torch.tensor(args["context"], dtype=torch.long))
    if not isinstance(logits, torch.Tensor):
        return {"logits": logits}
    (logits * torch.as_tensor(args["g"], dtype=logits.dtype)).sum().backward()
    params = dict(model.named_parameters())
    answer = {"logits": _array(logits)}
    for name in args["state"]:
        p = params.get(name)
        answer[f"gradient w.r.t. {name}"] = (
            "no gradient (this parameter does not take part in the logits)"
            if p is None or p.grad is None
            else _array(p.grad)
        )
    return answer


@asked_beside
def make_examples(modules, args):
    contexts, targets = modules["ffnn_lm"].make_examples(list(args["tokens"]), args["context_size"], args["pad"])
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


def train_ffnn(modules, args):
    model = grader_model(args["config"], args["state"], args["dtype"])
    contexts, targets = (
        torch.tensor(args["contexts"], dtype=torch.long),
        torch.tensor(args["targets"], dtype=torch.long),
    )
    losses = modules["ffnn_lm"].train_ffnn(
        model,
        contexts,
        targets,
        epochs=args["epochs"],
        batch_size=args["batch_size"],
        lr=args["lr"],
        generator=torch.Generator().manual_seed(args["seed"]),
    )
    return {
        "losses": [_number(v) for v in losses] if isinstance(losses, list) else losses,
        "parameters after training": {name: _array(p) for name, p in model.named_parameters()},
    }


def perplexity(modules, args):
    model = grader_model(args["config"], args["state"], args["dtype"])
    contexts, targets = (
        torch.tensor(args["contexts"], dtype=torch.long),
        torch.tensor(args["targets"], dtype=torch.long),
    )
    return _number(modules["ffnn_lm"].perplexity(model, contexts, targets))


# --- properties: each pays only with the right answer beside it ---


def no_mutation(modules, args):
    """Call one function; its answer, and its arguments as they are afterwards."""
    what = args["what"]
    if what == "train_bpe":
        word_counts = dict(args["word_counts"])
        answer = _merge_list(modules["bpe"].train_bpe(word_counts, args["num_merges"]))
        return property_result(answer, {"word_counts": word_counts})
    if what == "encode_word":
        merges = [tuple(m) for m in args["merges"]]
        answer = modules["bpe"].encode_word(args["word"], merges)
        return property_result(answer, {"merges": merges})
    if what == "noise_distribution":
        counts = args["counts"].copy()
        return property_result(_array(modules["word2vec"].noise_distribution(counts)), {"counts": counts})
    if what == "sgns_grads":
        w, c, n = args["w_vec"].copy(), args["c_vec"].copy(), args["neg_vecs"].copy()
        grads = modules["word2vec"].sgns_grads(w, c, n)
        return property_result([_array(g) for g in grads], {"w_vec": w, "c_vec": c, "neg_vecs": n})
    if what == "SkipGram.step":
        model = _skipgram(modules, args)
        negatives = args["negatives"].copy()
        loss = _number(model.step(args["w"], args["c"], negatives, args["lr"]))
        return property_result([loss, _array(model.W), _array(model.C)], {"negatives": negatives})
    tokens = list(args["tokens"])
    contexts, targets = modules["ffnn_lm"].make_examples(tokens, args["context_size"], args["pad"])
    # Lists of rows: an answer with rows missing (no padded examples) is wrong but shows work.
    return property_result([_array(contexts).tolist(), _array(targets).tolist()], {"tokens": tokens})


def bad_argument(modules, args):
    """ValueError outside the domain, beside the answer of the same function inside it."""
    if args["what"] == "skipgram_pairs":
        f = modules["word2vec"].skipgram_pairs
        answer = _pairs(f(list(args["tokens"]), 1))
        return property_result(answer, raised(lambda: f(list(args["tokens"]), args["window"])))
    f = modules["bpe"].train_bpe
    answer = _merge_list(f(dict(args["good"]), 2))
    return property_result(answer, raised(lambda: f(dict(args["word_counts"]), args["num_merges"])))
