"""What the rnn checks do with a submission, inside the sandbox.

Each function gets ``modules`` ({"modules": modules.py, "elman": elman.py},
the submission's or the reference's) and one case's plain-data arguments
by name, and returns plain data. Parameters are assigned into ``params`` after
construction, as the contract allows, so that the submission and the
reference compute with the same numbers. Besides the answers, a scenario
differentiates the code's *own* forward by central differences, so the
judge can tell a student whether their forward or their backward is off.

Imported by the fork server before any student code: never imports the reference.
"""

from __future__ import annotations

import numpy as np

from lmgrade import (
    agreement,
    asked_beside,
    expected_only,
    explained,
    finite_differences,
    property_result,
    raised,
    warnings_of,
)


def _array(value) -> np.ndarray:
    return np.asarray(value, dtype=np.float64)


# --- modules.py ---


def _module(modules, kind, W=None, b=None):
    """An instance of the class `kind` of modules.py; a Linear with W and b assigned."""
    m = modules["modules"]
    if kind == "Linear":
        module = m.Linear(W.shape[1], W.shape[0], np.random.default_rng(0))
        module.params["W"], module.params["b"] = W.copy(), b.copy()
        return module
    return getattr(m, kind)()


# The contract speaks of warnings for these alone: Sigmoid "no overflow warning",
# Softmax "stable for |x| up to 1e4". Elsewhere a warning is the student's business.
WARNING_FREE = ("Sigmoid", "Softmax")


def kind_warns(kind: str) -> bool:
    return kind in WARNING_FREE


@asked_beside(left_out=("backward against finite differences of forward",))
def module(modules, module, x, g, W=None, b=None, call=False):
    """Forward, backward and parameter gradients of one module; its backward against its own forward.

    `module` is the class's name; W and b are a Linear's; `call` asks forward through ``mod(x)``.
    """
    kind = module
    mod = _module(modules, kind, W, b)
    y, caught = warnings_of(lambda: mod(x.copy()) if call else mod.forward(x.copy()))
    dx = mod.backward(g.copy())
    backward = {"input": _array(dx), **{f"grads[{k!r}]": _array(v) for k, v in sorted(mod.grads.items())}}

    def assign(name, value):
        nonlocal x
        if name == "input":
            x = value
        else:
            mod.params[name[7:-2]] = value

    def loss():
        return float(np.sum(_array(mod.forward(x.copy())) * g))

    arrays = {"input": x, **{f"grads[{k!r}]": np.array(v) for k, v in sorted(mod.params.items())}}
    answer = {
        "forward": _array(y),
        "backward": backward,
        "backward against finite differences of forward": explained(
            lambda: agreement(backward, finite_differences(loss, arrays, assign))
        ),
    }
    if kind_warns(kind):
        answer["warnings"] = caught
    if kind == "Linear":
        answer["initialisation"] = linear_init(modules, W.shape[1], W.shape[0], seed=1)
    return answer


def linear_init(modules, n_in, n_out, seed):
    """What Linear(n_in, n_out, default_rng(seed)) draws, as it drew it: `module_holds` judges it in the
    grading process (shapes, the range of W, zero b; not the values).

    What `grads` holds before the first backward is free (the contract): not read here.
    """
    lin = modules["modules"].Linear(n_in, n_out, np.random.default_rng(seed))
    return {"W": _array(lin.params["W"]), "b": _array(lin.params["b"])}


def module_holds(args, answer):
    """A module's answer with a Linear's initialisation summarised here, in the grading process, from the
    arrays it drew (never a verdict of the child's); any other answer as it is."""
    if not isinstance(answer, dict) or not isinstance(answer.get("initialisation"), dict):
        return answer
    drawn = answer["initialisation"]
    try:
        W, b = np.asarray(drawn["W"], dtype=np.float64), np.asarray(drawn["b"], dtype=np.float64)
    except (KeyError, TypeError, ValueError):
        return {**answer, "initialisation": "W and b are not arrays of numbers"}
    bound = 1 / np.sqrt(np.shape(args["W"])[1])
    finite = bool(np.all(np.isfinite(W)))
    return {
        **answer,
        "initialisation": {
            "W shape": W.shape,
            "b shape": b.shape,
            "W within +-1/sqrt(in)": finite and bool(np.all(np.abs(W) <= bound)),
            "W not constant": finite and bool(W.size == 1 or np.ptp(W) > 0),
            "b zeros": bool(np.all(b == 0)),
        },
    }


def cross_entropy(modules, probs, targets, g):
    """forward(probs, targets), then backward(g), or backward() where g is None; against its own forward."""
    ce = modules["modules"].CrossEntropy()
    value = ce.forward(probs.copy(), targets.copy())
    grad = ce.backward() if g is None else ce.backward(g)
    g = 1.0 if g is None else g

    def assign(name, value):
        nonlocal probs
        probs = value

    def loss():
        return g * float(ce.forward(probs.copy(), targets.copy()))

    return {
        "forward": float(value),
        "backward": {"probs": _array(grad)},
        "backward against finite differences of forward": explained(
            lambda: agreement({"probs": grad}, finite_differences(loss, {"probs": probs}, assign))
        ),
    }


# --- elman.py ---

PARAMS = ("W_ah", "W_ax", "b_a", "W_yh", "b_y")


def _shapes(params, names) -> dict[str, list[int] | str]:
    """The contract's parameters' shapes, as the constructor made them."""
    return {name: list(np.shape(params[name])) if name in params else "missing" for name in sorted(names)}


def _rnn(modules, params, activation):
    return _built_rnn(modules, params, activation)[0]


def _built_rnn(modules, params, activation, defaults=False):
    """An ElmanRNN of the sizes of `params` with them assigned, and its params' shapes before that."""
    W_ax, W_yh = params["W_ax"], params["W_yh"]
    sizes = (W_ax.shape[1], W_ax.shape[0], W_yh.shape[0])
    if defaults:  # activation and rng left out: "sigmoid" and a fresh generator
        rnn = modules["elman"].ElmanRNN(*sizes)
    else:
        rnn = modules["elman"].ElmanRNN(*sizes, activation=activation, rng=np.random.default_rng(0))
    shapes = _shapes(rnn.params, PARAMS)
    for name in PARAMS:
        rnn.params[name] = params[name].copy()
    return rnn, shapes


def elman_forward(modules, params, x, targets, h0, activation, defaults=False):
    """forward(x[, h0]): the outputs and self.hidden, and the params' shapes as built. `targets` is the
    loss's, unused here (the cases are elman_loss's)."""
    rnn, shapes = _built_rnn(modules, params, activation, defaults)
    y = rnn.forward(x.copy()) if h0 is None else rnn.forward(x.copy(), h0.copy())
    return {"params' shapes when built": shapes, "y": _array(y), "self.hidden": _array(rnn.hidden)}


def elman_loss(modules, params, x, targets, h0, activation):
    """loss(x, targets[, h0])."""
    rnn = _rnn(modules, params, activation)
    if h0 is None:
        return float(rnn.loss(x.copy(), targets.copy()))
    return float(rnn.loss(x.copy(), targets.copy(), h0.copy()))


def elman_backward(modules, params, x, targets, h0, activation):
    """Every gradient and grad_h0 of the loss; the backward against the code's own loss."""
    rnn = _rnn(modules, params, activation)
    if h0 is None:  # h0 left to its default: zeros
        loss = float(rnn.loss(x.copy(), targets.copy()))
        h0 = np.zeros(rnn.params["W_ah"].shape[0])
    else:
        loss = float(rnn.loss(x.copy(), targets.copy(), h0.copy()))
    grads = rnn.backward()
    answer = {"loss": loss, **{f"grads[{k!r}]": _array(grads[k]) for k in PARAMS}, "grad_h0": _array(rnn.grad_h0)}
    same_as_self_grads = all(np.array_equal(_array(grads[k]), _array(rnn.grads[k])) for k in PARAMS)

    def assign(name, value):
        nonlocal h0
        if name == "grad_h0":
            h0 = value
        else:
            rnn.params[name[7:-2]] = value

    arrays = {**{f"grads[{k!r}]": params[k] for k in PARAMS}, "grad_h0": h0}
    answer["returned == self.grads"] = same_as_self_grads
    answer["backward against finite differences of loss"] = explained(
        lambda: agreement(
            answer, finite_differences(lambda: float(rnn.loss(x.copy(), targets.copy(), h0.copy())), arrays, assign)
        )
    )
    return answer


def _lm(modules, params, activation):
    return _built_lm(modules, params, activation)[0]


def _built_lm(modules, params, activation, defaults=False):
    """An RNNLM of the sizes of `params` with them assigned, and its params' shapes before that."""
    E, W_ax = params["E"], params["W_ax"]
    sizes = (E.shape[0], E.shape[1], W_ax.shape[0])
    if defaults:
        lm = modules["elman"].RNNLM(*sizes)
    else:
        lm = modules["elman"].RNNLM(*sizes, activation=activation, rng=np.random.default_rng(0))
    shapes = _shapes(lm.params, ("E", *PARAMS))
    for name, value in params.items():
        lm.params[name] = value.copy()
    return lm, shapes


def rnnlm(modules, params, tokens, activation, defaults=False):
    """RNNLM's loss and gradients (E's accumulating over repeated tokens); backward against its own loss."""
    lm, shapes = _built_lm(modules, params, activation, defaults)
    loss = float(lm.loss(tokens.copy()))
    grads = lm.backward()
    answer = {
        "params' shapes when built": shapes,
        "loss": loss,
        **{f"grads[{k!r}]": _array(grads[k]) for k in sorted(params)},
    }

    def assign(name, value):
        lm.params[name[7:-2]] = value

    arrays = {f"grads[{k!r}]": v for k, v in sorted(params.items())}
    answer["backward against finite differences of loss"] = explained(
        lambda: agreement(answer, finite_differences(lambda: float(lm.loss(tokens.copy())), arrays, assign))
    )
    return answer


def sgd_step(modules, params, tokens, activation, lr, grads):
    """p -= lr * grad on gradients the grader sets into grads: the student's backward is not graded here.

    loss and backward run first (their failures ignored), so that an sgd_step
    that wants a backward before it finds one; then every entry of grads is
    replaced by the case's gradients.
    """
    lm = _lm(modules, params, activation)
    try:
        lm.loss(tokens.copy())
        lm.backward()
    except Exception:
        pass
    if not isinstance(getattr(lm, "grads", None), dict):
        lm.grads = {}
    for name, grad in grads.items():
        lm.grads[name] = grad.copy()
    lm.sgd_step(lr)
    return {name: _array(lm.params[name]) for name in sorted(params)}


def sample(modules, params, activation, start, max_len, end, draws, repeat, seed):
    """Draws for a statistical test, and the model's probability of every sequence to test them against."""
    lm = _lm(modules, params, activation)
    V = params["E"].shape[0]

    def draw(rng):
        return [int(t) for t in lm.sample(rng, start, max_len, end=end)]

    # Only rng may be random: the global generator is seeded, so that a sampler drawing from it draws the same
    # in every run (and its known mistake can be named by its draws), then shaken before drawing again.
    np.random.seed(seed % 2**32)
    rng = np.random.default_rng(seed)
    first = [draw(rng) for _ in range(draws)]
    np.random.seed(seed % 2**32 ^ 0x5EED)
    rng = np.random.default_rng(seed)
    again = [draw(rng) for _ in range(repeat)]
    rng = np.random.default_rng(seed + 1)
    other = [draw(rng) for _ in range(repeat)]
    table = expected_only(lambda: _sequence_probabilities(lm, V, start, max_len, end))
    return {"draws": first, "again": again, "other": other, "table": table}


def _sequence_probabilities(lm, V: int, start: int, max_len: int, end) -> dict:
    """The exact probability of every possible sample, from the model's own loss."""
    table = {}
    for length in range(1, max_len + 1):
        for seq in np.ndindex(*(V,) * length):
            if end is not None and end in seq[:-1]:
                continue
            table[seq] = float(np.exp(-lm.loss(np.array((start, *seq)))))
    return table


def _scripted_lm(modules, params):
    """An RNNLM whose loss, backward and sgd_step are the grader's: they log what train asks of them.

    train's bookkeeping (the order of the sequences, loss then backward then
    sgd_step for each, the per-epoch loss per predicted token) is graded on
    it, so a wrong backward or loss of the student's costs train nothing.
    The loss is a made-up number that depends on the tokens and on how many
    steps were taken, so a loss summed at the wrong moment shows.
    """

    class Scripted(modules["elman"].RNNLM):
        def __init__(self):
            # The student's constructor, for whatever else train reads (a check of the
            # tokens, the vocabulary size); a broken one is graded elsewhere, not here.
            try:
                super().__init__(
                    params["E"].shape[0], params["E"].shape[1], params["W_ax"].shape[0], rng=np.random.default_rng(0)
                )
            except Exception:
                pass
            self.params = {k: v.copy() for k, v in params.items()}
            self.grads, self.log, self.steps, self._last = {}, [], 0, None

        def loss(self, tokens):
            tokens = [int(t) for t in np.asarray(tokens)]
            self._last = {"tokens": tokens, "backward": False}
            return 0.25 + 0.1 * len(tokens) + 0.01 * sum(tokens) + 0.37 * self.steps

        def backward(self):
            if self._last is not None:
                self._last["backward"] = True
            return {}

        def sgd_step(self, lr):
            self.log.append(
                {
                    "sequence": None if self._last is None else self._last["tokens"],
                    "backward before it": bool(self._last and self._last["backward"]),
                    "lr": float(lr),
                }
            )
            self.steps += 1

    return Scripted()


def train(modules, params, sequences, epochs, lr, seed):
    """train's bookkeeping on a scripted model: each epoch's loss, and every step it took, in order. `epochs`
    lists the numbers of epochs to train for, each its own call."""
    answer = {}
    for count in epochs:  # in order, each on a fresh model, from the same seed
        lm = _scripted_lm(modules, params)
        copies = [s.copy() for s in sequences]
        losses = modules["elman"].train(lm, copies, count, lr, np.random.default_rng(seed))
        answer[f"epochs={count}"] = {"losses": [float(v) for v in losses], "steps": lm.log}
    return answer


# --- properties: each pays only with the right answer beside it ---


def _observed(value):
    """An observation as the grading process decoded it, numpy where it holds numbers."""
    inner = getattr(value, "values", None)  # a torch tensor arrives as lmgrade.boundary.wire.Tensor
    return inner if isinstance(inner, np.ndarray) else value


def _same(first, second) -> bool:
    """Whether two backward results are equal (dicts of arrays, or arrays), to rounding; NaN equals nothing."""
    first, second = _observed(first), _observed(second)
    if isinstance(first, dict):
        return isinstance(second, dict) and set(first) == set(second) and all(_same(first[k], second[k]) for k in first)
    a, b = _array(first), _array(second)
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-12, atol=1e-15))


FIRST, SECOND = "first backward", "second backward"


def repeatable_backward(
    modules,
    what,
    x,
    params=None,
    targets=None,
    h0=None,
    activation=None,
    module=None,
    W=None,
    b=None,
    g=None,
    call=False,
):
    """backward twice after one forward: both results, compared in the grading process (`repeatable_holds`).

    An ElmanRNN's case is elman_loss's (its h0 unused: loss(x, targets) alone), a module's is its check's
    (`call` unused: forward(x) alone).
    """
    if what == "ElmanRNN":
        rnn = _rnn(modules, params, activation)
        rnn.loss(x.copy(), targets.copy())
        first = {k: _array(v) for k, v in rnn.backward().items()}
        second = {k: _array(v) for k, v in rnn.backward().items()}
    else:
        mod = _module(modules, module, W, b)
        mod.forward(x.copy())
        first = _array(mod.backward(g.copy()))
        second = _array(mod.backward(g.copy()))
    return property_result(first, {FIRST: first, SECOND: second})


def repeatable_holds(args, observed) -> dict:
    """repeatable_backward's property, from both results as the call returned them."""
    return {"the second backward equals the first": _same(observed[FIRST], observed[SECOND])}


def no_mutation(
    modules,
    what,
    x=None,
    g=None,
    params=None,
    targets=None,
    h0=None,
    tokens=None,
    activation=None,
    module=None,
    W=None,
    b=None,
    call=False,
):
    """Call one method; its answer, and its array arguments as they are afterwards (`call` unused: a
    module's forward is called by name)."""
    if what == "ElmanRNN.loss":
        rnn = _rnn(modules, params, activation)
        answer = float(rnn.loss(x, targets, h0))
        rnn.backward()
        return property_result(answer, {"x": x, "targets": targets, "h0": h0})
    if what == "RNNLM.loss":
        lm = _lm(modules, params, activation)
        answer = float(lm.loss(tokens))
        lm.backward()
        return property_result(answer, {"tokens": tokens})
    mod = _module(modules, module, W, b)
    answer = {"forward": _array(mod.forward(x)), "backward": _array(mod.backward(g))}
    return property_result(answer, {"x": x, "g": g})


def bad_argument(modules, what, bad, params, activation, x=None, targets=None, h0=None, tokens=None):
    """ValueError for an activation other than "sigmoid" and "tanh" (`bad`), beside the answer with a right one:
    an ElmanRNN's forward(x) (its case's targets and h0 unused), an RNNLM's loss(tokens)."""
    e = modules["elman"]
    if what == "ElmanRNN":
        answer = _array(_rnn(modules, params, activation).forward(x.copy()))
        sizes = (params["W_ax"].shape[1], params["W_ax"].shape[0], params["W_yh"].shape[0])
    else:
        answer = float(_lm(modules, params, activation).loss(tokens.copy()))
        sizes = params["E"].shape + (params["W_ax"].shape[0],)
    cls = getattr(e, what)
    return property_result(answer, raised(lambda: cls(*sizes, activation=bad, rng=np.random.default_rng(0))))
