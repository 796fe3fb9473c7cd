"""The `rnn` reference against finite differences, torch autograd and the contract."""

from __future__ import annotations

import copy
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from helpers import numeric_grad, rel_error
from lmgrade.submissions.loader import load_files

ROOT = Path(__file__).resolve().parents[1]
ACTIVATIONS = ["sigmoid", "tanh"]
RNN_KEYS = ["W_ah", "W_ax", "b_a", "W_yh", "b_y"]


@pytest.fixture(scope="module")
def ref():
    return load_files(ROOT / "reference" / "rnn", ["modules.py", "elman.py"])


@pytest.fixture(scope="module")
def mod(ref):
    return ref["modules"]


@pytest.fixture(scope="module")
def elman(ref):
    return ref["elman"]


def read_only(a):
    a = np.array(a)
    a.flags.writeable = False
    return a


@pytest.fixture
def strict_floats():
    """Overflow, division by zero and invalid operations fail the test.

    Underflow to zero (exp(-2e4) == 0.0) is IEEE's correct result and numpy
    ignores it by default, so it is allowed.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", divide="raise", invalid="raise"):
            yield


# ---------------------------------------------------------------------------
# modules.py


def test_module_base_class(mod):
    m = mod.Module()
    assert m.params == {} and m.grads == {}
    for cls in (mod.Linear, mod.Sigmoid, mod.Tanh, mod.Softmax, mod.CrossEntropy):
        assert issubclass(cls, mod.Module)
    assert mod.Sigmoid().params == {} and mod.CrossEntropy().params == {}


def test_linear_init_follows_the_contract(mod):
    lin = mod.Linear(4, 3, np.random.default_rng(0))
    W, b = lin.params["W"], lin.params["b"]
    assert W.shape == (3, 4) and b.shape == (3,)
    assert W.dtype == np.float64 and b.dtype == np.float64
    assert np.all(np.abs(W) <= 1 / np.sqrt(4)) and np.all(b == 0)
    assert np.array_equal(W, mod.Linear(4, 3, np.random.default_rng(0)).params["W"])


def test_linear_forward_backward_by_formula(mod):
    rng = np.random.default_rng(1)
    lin = mod.Linear(4, 3, rng)
    x, g = rng.normal(size=(5, 4)), rng.normal(size=(5, 3))
    W, b = lin.params["W"], lin.params["b"]
    assert np.allclose(lin(x), x @ W.T + b, rtol=0, atol=1e-14)
    dx = lin.backward(g)
    assert np.allclose(lin.grads["W"], g.T @ x) and np.allclose(lin.grads["b"], g.sum(0))
    assert np.allclose(dx, g @ W)


@pytest.mark.parametrize("name", ["Linear", "Sigmoid", "Tanh", "Softmax"])
@pytest.mark.parametrize("N", [1, 4])
def test_module_input_gradient_matches_finite_differences(mod, name, N):
    rng = np.random.default_rng(2)
    module = mod.Linear(3, 5, rng) if name == "Linear" else getattr(mod, name)()
    x = rng.uniform(-3, 3, size=(N, 3 if name == "Linear" else 5))
    G = rng.normal(size=(N, 5))
    module(x)
    analytic = module.backward(G)
    numeric = numeric_grad(lambda x_: float((module(x_) * G).sum()), x)
    assert rel_error(analytic, numeric) < 1e-6


def test_linear_parameter_gradients_match_finite_differences(mod):
    rng = np.random.default_rng(3)
    lin = mod.Linear(3, 4, rng)
    x, G = rng.normal(size=(6, 3)), rng.normal(size=(6, 4))
    lin(x)
    lin.backward(G)
    for key in ("W", "b"):
        original = lin.params[key]

        def f(value, key=key):
            lin.params[key] = value
            return float((lin(x) * G).sum())

        numeric = numeric_grad(f, original)
        lin.params[key] = original
        assert rel_error(lin.grads[key], numeric) < 1e-6


def test_cross_entropy_is_a_sum_with_the_right_gradient(mod):
    rng = np.random.default_rng(4)
    probs = rng.uniform(0.05, 1.0, size=(4, 3))
    probs /= probs.sum(1, keepdims=True)
    targets = np.array([2, 0, 2, 1])
    ce = mod.CrossEntropy()
    loss = ce(probs, targets)
    assert isinstance(loss, float)
    assert np.isclose(loss, -np.log(probs[np.arange(4), targets]).sum(), rtol=1e-14)
    halves = mod.CrossEntropy()(probs[:2], targets[:2]) + mod.CrossEntropy()(probs[2:], targets[2:])
    assert np.isclose(loss, halves, rtol=1e-14)

    ce(probs, targets)
    for g in (1.0, 2.5):
        analytic = ce.backward() if g == 1.0 else ce.backward(g)
        numeric = numeric_grad(lambda p, g=g: g * ce(p, targets), probs)
        ce(probs, targets)
        assert rel_error(analytic, numeric) < 1e-6


def test_softmax_rows_are_distributions(mod):
    x = np.random.default_rng(5).normal(size=(3, 6)) * 5
    y = mod.Softmax()(x)
    assert y.shape == (3, 6) and np.all(y >= 0) and np.allclose(y.sum(1), 1, rtol=0, atol=1e-15)
    e = np.exp(x)
    assert np.allclose(y, e / e.sum(1, keepdims=True), rtol=1e-13)


def test_sigmoid_and_softmax_at_plus_minus_1e4(mod, strict_floats):
    x = np.array([[-1e4, -50.0, 0.0, 50.0, 1e4]])
    sig = mod.Sigmoid()
    y = sig(x)
    assert y[0, 0] == 0.0 and y[0, 2] == 0.5 and y[0, 4] == 1.0
    assert np.isclose(y[0, 1], np.exp(-50) / (1 + np.exp(-50)), rtol=1e-14)
    assert np.all(np.isfinite(sig.backward(np.ones_like(x))))
    assert np.tanh(1e4) == mod.Tanh()(np.array([1e4]))[0]

    soft = mod.Softmax()
    assert np.array_equal(soft(np.array([[1e4, -1e4, 0.0]])), [[1.0, 0.0, 0.0]])
    assert np.allclose(soft(np.array([[1e4, 1e4], [-1e4, -1e4]])), 0.5, rtol=0, atol=1e-15)
    assert np.all(np.isfinite(soft.backward(np.ones((2, 2)))))


def test_module_backward_twice_gives_the_same(mod):
    rng = np.random.default_rng(6)
    x, G = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    for module in (mod.Linear(4, 4, rng), mod.Sigmoid(), mod.Tanh(), mod.Softmax()):
        module(x)
        first = module.backward(G)
        grads = copy.deepcopy(module.grads)
        assert np.array_equal(first, module.backward(G))
        assert all(np.array_equal(grads[k], module.grads[k]) for k in grads)
    ce = mod.CrossEntropy()
    ce(mod.Softmax()(x), np.array([0, 3, 1]))
    assert np.array_equal(ce.backward(1.0), ce.backward(1.0))


def test_linear_reads_params_assigned_after_construction(mod):
    rng = np.random.default_rng(7)
    lin = mod.Linear(3, 2, rng)
    W, b = rng.normal(size=(2, 3)), rng.normal(size=(2,))
    lin.params["W"], lin.params["b"] = W, b
    x, g = rng.normal(size=(4, 3)), rng.normal(size=(4, 2))
    assert np.allclose(lin(x), x @ W.T + b)
    assert np.allclose(lin.backward(g), g @ W)


def test_modules_mutate_no_argument(mod):
    rng = np.random.default_rng(8)
    x, g = read_only(rng.normal(size=(3, 4))), read_only(rng.normal(size=(3, 4)))
    saved_x, saved_g = x.copy(), g.copy()
    lin = mod.Linear(4, 4, rng)
    lin.params["W"], lin.params["b"] = read_only(lin.params["W"]), read_only(lin.params["b"])
    for module in (lin, mod.Sigmoid(), mod.Tanh(), mod.Softmax()):
        module(x)
        module.backward(g)
    probs = read_only(mod.Softmax()(x))
    targets = read_only(np.array([0, 1, 3]))
    ce = mod.CrossEntropy()
    ce(probs, targets)
    ce.backward()
    assert np.array_equal(x, saved_x) and np.array_equal(g, saved_g)


# ---------------------------------------------------------------------------
# elman.py: a torch float64 re-implementation of the same equations


def torch_rnn(params, x, targets, h0, activation):
    """Probabilities, hidden states, loss and every gradient (h0 and x included) by autograd."""
    P = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in params.items()}
    x = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    J = params["W_ah"].shape[0]
    h0 = torch.tensor(np.zeros(J) if h0 is None else h0, dtype=torch.float64, requires_grad=True)
    act = torch.sigmoid if activation == "sigmoid" else torch.tanh
    h, hs = h0, []
    for t in range(len(x)):
        h = act(P["W_ah"] @ h + P["W_ax"] @ x[t] + P["b_a"])
        hs.append(h)
    H = torch.stack(hs)
    logits = H @ P["W_yh"].T + P["b_y"]
    loss = -torch.log_softmax(logits, -1)[torch.arange(len(x)), torch.as_tensor(targets)].sum()
    loss.backward()
    grads = {k: p.grad.numpy() for k, p in P.items()}
    return (
        torch.softmax(logits, -1).detach().numpy(),
        H.detach().numpy(),
        loss.item(),
        grads,
        h0.grad.numpy(),
        x.grad.numpy(),
    )


def torch_lm(params, tokens, activation):
    """Loss and every gradient of an RNNLM by autograd (the embedding lookup included)."""
    E = torch.tensor(params["E"], requires_grad=True)
    rnn_params = {k: params[k] for k in RNN_KEYS}
    x = E[torch.as_tensor(tokens[:-1])]
    P = {k: torch.tensor(v, requires_grad=True) for k, v in rnn_params.items()}
    act = torch.sigmoid if activation == "sigmoid" else torch.tanh
    h, loss = torch.zeros(params["W_ah"].shape[0], dtype=torch.float64), 0.0
    for t in range(len(x)):
        h = act(P["W_ah"] @ h + P["W_ax"] @ x[t] + P["b_a"])
        loss = loss - torch.log_softmax(P["W_yh"] @ h + P["b_y"], -1)[int(tokens[t + 1])]
    loss.backward()
    return loss.item(), {"E": E.grad.numpy(), **{k: p.grad.numpy() for k, p in P.items()}}


def random_params(rng, I, J, K, scale=1.0):
    return {
        "W_ah": rng.normal(size=(J, J)) * scale,
        "W_ax": rng.normal(size=(J, I)) * scale,
        "b_a": rng.normal(size=J) * scale,
        "W_yh": rng.normal(size=(K, J)) * scale,
        "b_y": rng.normal(size=K) * scale,
    }


def rnn_case(elman, activation, T, J, with_h0, seed=0, I=3, K=5):
    rng = np.random.default_rng(seed)
    rnn = elman.ElmanRNN(I, J, K, activation, rng)
    x = rng.normal(size=(T, I))
    targets = rng.integers(0, K, size=T)
    h0 = rng.normal(size=J) if with_h0 else None
    return rnn, x, targets, h0


SHAPES = [(1, 1), (1, 4), (5, 1), (6, 4)]  # (T, J)


def test_elman_construction_follows_the_contract(elman):
    rnn = elman.ElmanRNN(3, 4, 5, "tanh", np.random.default_rng(0))
    shapes = {k: v.shape for k, v in rnn.params.items()}
    assert shapes == {"W_ah": (4, 4), "W_ax": (4, 3), "b_a": (4,), "W_yh": (5, 4), "b_y": (5,)}
    assert all(v.dtype == np.float64 for v in rnn.params.values())
    assert np.all(rnn.params["b_a"] == 0) and np.all(rnn.params["b_y"] == 0)
    assert np.all(np.abs(rnn.params["W_ax"]) <= 1 / np.sqrt(3))
    assert np.all(np.abs(rnn.params["W_ah"]) <= 1 / np.sqrt(4))
    again = elman.ElmanRNN(3, 4, 5, "tanh", np.random.default_rng(0))
    assert all(np.array_equal(rnn.params[k], again.params[k]) for k in RNN_KEYS)
    assert elman.ElmanRNN(3, 4, 5).params["W_ah"].shape == (4, 4)  # rng None, sigmoid by default
    lm = elman.RNNLM(7, 3, 4, rng=np.random.default_rng(0))
    shapes = {k: v.shape for k, v in lm.params.items()}
    assert shapes == {"E": (7, 3), "W_ah": (4, 4), "W_ax": (4, 3), "b_a": (4,), "W_yh": (7, 4), "b_y": (7,)}


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("with_h0", [False, True])
def test_elman_forward_and_loss_match_torch(elman, activation, with_h0):
    rnn, x, targets, h0 = rnn_case(elman, activation, 6, 4, with_h0)
    rnn.params.update(random_params(np.random.default_rng(9), 3, 4, 5))
    y = rnn.forward(x, h0)
    t_y, t_h, t_loss, *_ = torch_rnn(rnn.params, x, targets, h0, activation)
    assert y.shape == (6, 5) and rnn.hidden.shape == (6, 4)
    assert np.allclose(y.sum(1), 1, rtol=0, atol=1e-14)
    assert np.allclose(y, t_y, rtol=1e-12, atol=1e-15) and np.allclose(rnn.hidden, t_h, rtol=1e-12, atol=1e-15)
    loss = rnn.loss(x, targets, h0)
    assert isinstance(loss, float) and np.isclose(loss, t_loss, rtol=1e-12)
    assert np.isclose(loss, -np.log(y[np.arange(6), targets]).sum(), rtol=1e-12)


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("T,J", SHAPES)
@pytest.mark.parametrize("with_h0", [False, True])
def test_elman_gradients_match_torch(elman, activation, T, J, with_h0):
    rnn, x, targets, h0 = rnn_case(elman, activation, T, J, with_h0, seed=T * 10 + J)
    rnn.loss(x, targets, h0)
    grads = rnn.backward()
    *_, t_grads, t_grad_h0, _ = torch_rnn(rnn.params, x, targets, h0, activation)
    assert set(grads) == set(RNN_KEYS) and set(rnn.grads) == set(RNN_KEYS)
    for k in RNN_KEYS:
        assert grads[k].shape == rnn.params[k].shape
        assert np.allclose(grads[k], t_grads[k], rtol=1e-10, atol=1e-13), k
        assert np.array_equal(rnn.grads[k], grads[k])
    assert rnn.grad_h0.shape == (J,) and np.allclose(rnn.grad_h0, t_grad_h0, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("T,J", SHAPES)
@pytest.mark.parametrize("with_h0", [False, True])
def test_elman_gradients_match_finite_differences(elman, activation, T, J, with_h0):
    rnn, x, targets, h0 = rnn_case(elman, activation, T, J, with_h0, seed=T * 10 + J + 1)
    rnn.loss(x, targets, h0)
    grads = rnn.backward()
    grad_h0 = rnn.grad_h0
    for k in RNN_KEYS:
        original = rnn.params[k]

        def f(value, k=k):
            rnn.params[k] = value
            return rnn.loss(x, targets, h0)

        numeric = numeric_grad(f, original)
        rnn.params[k] = original
        assert rel_error(grads[k], numeric) < 1e-6, k
    at = np.zeros(J) if h0 is None else h0
    assert rel_error(grad_h0, numeric_grad(lambda h: rnn.loss(x, targets, h), at)) < 1e-6


def test_elman_h0_none_means_zeros(elman):
    rnn, x, targets, _ = rnn_case(elman, "tanh", 4, 3, False)
    assert np.array_equal(rnn.forward(x), rnn.forward(x, np.zeros(3)))
    assert rnn.loss(x, targets) == rnn.loss(x, targets, np.zeros(3))


def test_elman_backward_is_for_the_last_loss_and_repeatable(elman):
    rnn, x, targets, h0 = rnn_case(elman, "sigmoid", 5, 3, True)
    rnn.loss(x, targets, h0)
    first, first_h0 = copy.deepcopy(rnn.backward()), rnn.grad_h0.copy()
    rnn.forward(x[:2] * 3)  # a forward alone is not a loss() call
    second = rnn.backward()
    assert all(np.array_equal(first[k], second[k]) for k in RNN_KEYS)
    assert np.array_equal(first_h0, rnn.grad_h0)


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_elman_reads_params_assigned_after_construction(elman, activation):
    rnn, x, targets, h0 = rnn_case(elman, activation, 4, 3, True)
    new = random_params(np.random.default_rng(10), 3, 3, 5)
    for k in RNN_KEYS:
        rnn.params[k] = new[k]
    t_y, _, t_loss, t_grads, t_grad_h0, _ = torch_rnn(new, x, targets, h0, activation)
    assert np.allclose(rnn.forward(x, h0), t_y, rtol=1e-12)
    assert np.isclose(rnn.loss(x, targets, h0), t_loss, rtol=1e-12)
    grads = rnn.backward()
    assert all(np.allclose(grads[k], t_grads[k], rtol=1e-10, atol=1e-13) for k in RNN_KEYS)
    assert np.allclose(rnn.grad_h0, t_grad_h0, rtol=1e-10, atol=1e-13)


def test_elman_with_extreme_logits_stays_finite(elman, strict_floats):
    rnn, x, targets, h0 = rnn_case(elman, "sigmoid", 4, 3, True)
    rnn.params.update(random_params(np.random.default_rng(11), 3, 3, 5, scale=1e4))
    y = rnn.forward(x, h0)
    assert np.all(np.isfinite(y)) and np.allclose(y.sum(1), 1)
    assert np.isfinite(rnn.loss(x, targets, h0))
    assert all(np.all(np.isfinite(g)) for g in rnn.backward().values())


def test_elman_mutates_no_argument(elman):
    rnn, x, targets, h0 = rnn_case(elman, "tanh", 5, 3, True)
    x, targets, h0 = read_only(x), read_only(targets), read_only(h0)
    for k in RNN_KEYS:
        rnn.params[k] = read_only(rnn.params[k])
    saved = [a.copy() for a in (x, targets, h0)]
    rnn.forward(x, h0)
    rnn.loss(x, targets, h0)
    rnn.backward()
    assert all(np.array_equal(a, b) for a, b in zip((x, targets, h0), saved))


# ---------------------------------------------------------------------------
# elman.py: the language model


def lm_case(elman, activation, T=7, V=6, D=3, J=4, seed=0):
    rng = np.random.default_rng(seed)
    lm = elman.RNNLM(V, D, J, activation, rng)
    tokens = rng.integers(0, V, size=T + 1)
    if T >= 5:
        tokens[[1, 4]] = tokens[0]  # repeated inputs: their embedding gradients must add up
    return lm, tokens


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("T", [1, 7])
def test_rnnlm_loss_and_gradients_match_torch(elman, activation, T):
    lm, tokens = lm_case(elman, activation, T=T, seed=T)
    loss = lm.loss(tokens)
    grads = lm.backward()
    t_loss, t_grads = torch_lm(lm.params, tokens, activation)
    assert np.isclose(loss, t_loss, rtol=1e-12)
    assert set(grads) == set(lm.params) == set(lm.grads) == {"E", *RNN_KEYS}
    for k in grads:
        assert np.allclose(grads[k], t_grads[k], rtol=1e-10, atol=1e-13), k


@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("T,J", [(1, 1), (7, 1), (7, 4)])
def test_rnnlm_gradients_match_finite_differences(elman, activation, T, J):
    lm, tokens = lm_case(elman, activation, T=T, J=J, seed=T + J)
    lm.loss(tokens)
    grads = lm.backward()
    for k in lm.params:
        original = lm.params[k]

        def f(value, k=k):
            lm.params[k] = value
            return lm.loss(tokens)

        numeric = numeric_grad(f, original)
        lm.params[k] = original
        assert rel_error(grads[k], numeric) < 1e-6, k


def test_rnnlm_is_an_elman_rnn_over_embeddings(elman):
    lm, tokens = lm_case(elman, "tanh")
    rnn = elman.ElmanRNN(3, 4, 6, "tanh", np.random.default_rng(0))
    rnn.params.update({k: lm.params[k] for k in RNN_KEYS})
    assert lm.loss(tokens) == rnn.loss(lm.params["E"][tokens[:-1]], tokens[1:])


def test_rnnlm_backward_twice_and_sgd_step(elman):
    lm, tokens = lm_case(elman, "sigmoid")
    lm.loss(tokens)
    first = copy.deepcopy(lm.backward())
    assert all(np.array_equal(first[k], v) for k, v in lm.backward().items())
    before = {k: read_only(v) for k, v in lm.params.items()}
    lm.params.update(before)
    loss_before = lm.loss(tokens)
    lm.backward()
    lm.sgd_step(0.01)  # read-only params: the step must make new arrays
    for k in before:
        assert np.allclose(lm.params[k], before[k] - 0.01 * first[k], rtol=0, atol=1e-15)
    assert lm.loss(tokens) < loss_before


def test_rnnlm_reads_params_assigned_after_construction(elman):
    lm, tokens = lm_case(elman, "tanh")
    rng = np.random.default_rng(12)
    new = {"E": rng.normal(size=(6, 3)), **random_params(rng, 3, 4, 6)}
    for k, v in new.items():
        lm.params[k] = v
    loss = lm.loss(tokens)
    grads = lm.backward()
    t_loss, t_grads = torch_lm(new, tokens, "tanh")
    assert np.isclose(loss, t_loss, rtol=1e-12)
    assert all(np.allclose(grads[k], t_grads[k], rtol=1e-10, atol=1e-13) for k in new)


def test_rnnlm_mutates_no_argument(elman):
    lm, tokens = lm_case(elman, "tanh")
    tokens = read_only(tokens)
    saved = tokens.copy()
    lm.loss(tokens)
    lm.backward()
    lm.sgd_step(0.5)
    sequences = [read_only(tokens), read_only(tokens[:3])]
    elman.train(lm, sequences, 2, 0.1, np.random.default_rng(0))
    assert np.array_equal(tokens, saved) and np.array_equal(sequences[1], saved[:3])


def test_sample_is_reproducible_and_in_range(elman):
    lm, _ = lm_case(elman, "tanh", V=8)
    a = lm.sample(np.random.default_rng(3), start=2, max_len=40)
    b = lm.sample(np.random.default_rng(3), start=2, max_len=40)
    assert a == b and len(a) == 40
    assert all(isinstance(t, int) and 0 <= t < 8 for t in a)
    assert lm.sample(np.random.default_rng(3), start=2, max_len=0) == []
    assert len(lm.sample(np.random.default_rng(4), start=0, max_len=5)) == 5


def test_sample_draws_from_y_t_with_rng(elman):
    """Each draw is rng.choice over the model's y_t (h_0 = 0), the drawn token fed back in."""
    lm, _ = lm_case(elman, "sigmoid", V=5)
    lm.params.update(random_params(np.random.default_rng(20), 3, 4, 5, scale=2.0))
    rnn = elman.ElmanRNN(3, 4, 5, "sigmoid", np.random.default_rng(0))
    rnn.params.update({k: lm.params[k] for k in RNN_KEYS})
    for seed in range(40):  # many short paths: the first draws are where h_0 shows
        got = lm.sample(np.random.default_rng(seed), start=seed % 5, max_len=4)
        rng, tokens = np.random.default_rng(seed), [seed % 5]
        for _ in range(4):
            y = rnn.forward(lm.params["E"][tokens])[-1]
            tokens.append(int(rng.choice(5, p=y / y.sum())))
        assert got == tokens[1:], seed


def test_sample_stops_at_end_and_includes_it(elman):
    lm, _ = lm_case(elman, "tanh", V=6)
    b_y = np.zeros(6)
    b_y[4] = 50.0  # token 4 is all but certain at every step
    lm.params["b_y"] = b_y
    assert lm.sample(np.random.default_rng(0), start=0, max_len=10, end=4) == [4]
    assert lm.sample(np.random.default_rng(0), start=0, max_len=10) == [4] * 10
    out = lm_case(elman, "tanh", V=6)[0].sample(np.random.default_rng(1), start=0, max_len=200, end=3)
    assert out[-1] == 3 and 3 not in out[:-1]


def synthetic_sequences(rng, n=6, V=5):
    """Cyclic sequences 0 1 2 3 4 0 1 ... from random offsets: easy to learn."""
    return [(rng.integers(0, V) + np.arange(rng.integers(4, 10))) % V for _ in range(n)]


def test_train_loss_decreases(elman):
    rng = np.random.default_rng(14)
    sequences = synthetic_sequences(rng)
    lm = elman.RNNLM(5, 4, 8, "tanh", np.random.default_rng(15))
    losses = elman.train(lm, sequences, epochs=30, lr=0.1, rng=np.random.default_rng(16))
    assert len(losses) == 30 and all(isinstance(v, float) for v in losses)
    assert losses[-1] < 0.5 * losses[0]
    assert all(b < a for a, b in zip(losses[::5], losses[5::5]))
    assert elman.train(lm, sequences, epochs=0, lr=0.1, rng=np.random.default_rng(0)) == []


def test_train_follows_the_contract_loop(elman):
    rng = np.random.default_rng(17)
    sequences = synthetic_sequences(rng, n=4)
    lm = elman.RNNLM(5, 3, 4, "sigmoid", np.random.default_rng(18))
    replica = copy.deepcopy(lm)
    losses = elman.train(lm, sequences, epochs=3, lr=0.05, rng=np.random.default_rng(19))

    order_rng, expected = np.random.default_rng(19), []
    n_predicted = sum(len(s) - 1 for s in sequences)
    for _ in range(3):
        total = 0.0
        for i in order_rng.permutation(len(sequences)):
            total += replica.loss(sequences[i])
            replica.backward()
            replica.sgd_step(0.05)
        expected.append(total / n_predicted)
    assert losses == expected
    assert all(np.array_equal(lm.params[k], replica.params[k]) for k in lm.params)


# ---------------------------------------------------------------------------
# arguments outside the documented domain


BAD_CALLS = {
    "linear in_features 0": lambda m, e: m.Linear(0, 3, np.random.default_rng(0)),
    "linear out_features -1": lambda m, e: m.Linear(3, -1, np.random.default_rng(0)),
    "linear wrong input width": lambda m, e: m.Linear(3, 2, np.random.default_rng(0))(np.zeros((4, 2))),
    "cross-entropy target out of range": lambda m, e: m.CrossEntropy()(np.full((2, 3), 1 / 3), np.array([0, 3])),
    "cross-entropy negative target": lambda m, e: m.CrossEntropy()(np.full((2, 3), 1 / 3), np.array([0, -1])),
    "cross-entropy targets length": lambda m, e: m.CrossEntropy()(np.full((2, 3), 1 / 3), np.array([0])),
    "cross-entropy float targets": lambda m, e: m.CrossEntropy()(np.full((2, 3), 1 / 3), np.array([0.0, 1.0])),
    "rnn input_size 0": lambda m, e: e.ElmanRNN(0, 2, 2),
    "rnn hidden_size 0": lambda m, e: e.ElmanRNN(2, 0, 2),
    "rnn output_size 0": lambda m, e: e.ElmanRNN(2, 2, 0),
    "rnn unknown activation": lambda m, e: e.ElmanRNN(2, 2, 2, "relu"),
    "rnn x width": lambda m, e: e.ElmanRNN(2, 3, 4).forward(np.zeros((5, 3))),
    "rnn x 1-D": lambda m, e: e.ElmanRNN(2, 3, 4).forward(np.zeros(2)),
    "rnn h0 shape": lambda m, e: e.ElmanRNN(2, 3, 4).forward(np.zeros((5, 2)), np.zeros(2)),
    "rnn target out of range": lambda m, e: e.ElmanRNN(2, 3, 4).loss(np.zeros((2, 2)), np.array([0, 4])),
    "rnn targets length": lambda m, e: e.ElmanRNN(2, 3, 4).loss(np.zeros((2, 2)), np.array([0])),
    "lm vocab_size 0": lambda m, e: e.RNNLM(0, 2, 2),
    "lm embed_dim 0": lambda m, e: e.RNNLM(3, 0, 2),
    "lm hidden_size 0": lambda m, e: e.RNNLM(3, 2, 0),
    "lm unknown activation": lambda m, e: e.RNNLM(3, 2, 2, "Tanh"),
    "lm token out of range": lambda m, e: e.RNNLM(3, 2, 2).loss(np.array([0, 1, 3])),
    "lm negative token": lambda m, e: e.RNNLM(3, 2, 2).loss(np.array([0, -1])),
    "lm single token": lambda m, e: e.RNNLM(3, 2, 2).loss(np.array([0])),
    "lm lr inf": lambda m, e: e.RNNLM(3, 2, 2).sgd_step(float("inf")),
    "lm lr nan": lambda m, e: e.RNNLM(3, 2, 2).sgd_step(float("nan")),
    "sample max_len -1": lambda m, e: e.RNNLM(3, 2, 2).sample(np.random.default_rng(0), 0, -1),
    "sample start out of range": lambda m, e: e.RNNLM(3, 2, 2).sample(np.random.default_rng(0), 3, 5),
    "sample end out of range": lambda m, e: e.RNNLM(3, 2, 2).sample(np.random.default_rng(0), 0, 5, end=-1),
    "train epochs -1": lambda m, e: e.train(e.RNNLM(3, 2, 2), [np.array([0, 1])], -1, 0.1, np.random.default_rng(0)),
    "train lr nan": lambda m, e: e.train(
        e.RNNLM(3, 2, 2), [np.array([0, 1])], 1, float("nan"), np.random.default_rng(0)
    ),
    "train no sequences": lambda m, e: e.train(e.RNNLM(3, 2, 2), [], 1, 0.1, np.random.default_rng(0)),
    "train token out of range": lambda m, e: e.train(
        e.RNNLM(3, 2, 2), [np.array([0, 5])], 1, 0.1, np.random.default_rng(0)
    ),
}


@pytest.mark.parametrize("name", list(BAD_CALLS))
def test_bad_arguments_raise_value_error(mod, elman, name):
    with pytest.raises(ValueError):
        BAD_CALLS[name](mod, elman)


def test_a_bad_sequence_leaves_the_model_untouched(elman):
    lm = elman.RNNLM(3, 2, 2, rng=np.random.default_rng(0))
    before = copy.deepcopy(lm.params)
    with pytest.raises(ValueError):
        elman.train(lm, [np.array([0, 1, 2]), np.array([0, 9])], 1, 0.1, np.random.default_rng(0))
    assert all(np.array_equal(before[k], lm.params[k]) for k in before)
