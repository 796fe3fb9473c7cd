"""The `lstm` reference against torch autograd on the same equations, central differences,
torch.nn.LSTM with its weights mapped to ours, and the contract."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from helpers import numeric_grad, rel_error
from lmgrade.submissions.loader import load_files

ROOT = Path(__file__).resolve().parents[1]
LSTM_KEYS = ["W_f", "W_i", "W_C", "W_o", "b_f", "b_i", "b_C", "b_o"]
GRU_KEYS = ["W_r", "W_u", "W_n", "b_r", "b_u", "b_n"]


@pytest.fixture(scope="module")
def rec():
    return load_files(ROOT / "reference" / "lstm", ["recurrent.py"])["recurrent"]


def t64(a, grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=torch.float64, requires_grad=grad)


def random_params(rng, keys, I, J, scale=0.7):
    return {k: rng.normal(size=(J, J + I) if k.startswith("W") else (J,)) * scale for k in keys}


# --- the same equations in torch, written out once more ---


def torch_lstm(P, x, h, C):
    hs, Cs = [], []
    for t in range(x.shape[0]):
        z = torch.cat([h, x[t]])
        f = torch.sigmoid(P["W_f"] @ z + P["b_f"])
        i = torch.sigmoid(P["W_i"] @ z + P["b_i"])
        g = torch.tanh(P["W_C"] @ z + P["b_C"])
        o = torch.sigmoid(P["W_o"] @ z + P["b_o"])
        C = f * C + i * g
        h = o * torch.tanh(C)
        hs.append(h)
        Cs.append(C)
    return torch.stack(hs), torch.stack(Cs)


def torch_gru(P, x, h):
    hs = []
    J = h.shape[0]
    for t in range(x.shape[0]):
        z = torch.cat([h, x[t]])
        r = torch.sigmoid(P["W_r"] @ z + P["b_r"])
        u = torch.sigmoid(P["W_u"] @ z + P["b_u"])
        n = torch.tanh(P["W_n"][:, :J] @ (r * h) + P["W_n"][:, J:] @ x[t] + P["b_n"])
        h = (1 - u) * h + u * n
        hs.append(h)
    return torch.stack(hs)


def _torch_cell(kind, P, x):
    J = P["b_f" if kind == "lstm" else "b_r"].shape[0]
    zero = torch.zeros(J, dtype=torch.float64)
    return torch_lstm(P, x, zero, zero)[0] if kind == "lstm" else torch_gru(P, x, zero)


def assign(cell, params):
    for k, v in params.items():
        cell.params[k] = v.copy()


# --- LSTM ---


@pytest.mark.parametrize("T,I,J", [(1, 2, 3), (6, 3, 1), (5, 2, 4)])
@pytest.mark.parametrize("with_state", [False, True])
def test_lstm_matches_torch_autograd(rec, T, I, J, with_state):
    rng = np.random.default_rng(T * 10 + J)
    P = random_params(rng, LSTM_KEYS, I, J)
    x, G = rng.normal(size=(T, I)), rng.normal(size=(T, J))
    h0, C0 = (rng.normal(size=J), rng.normal(size=J)) if with_state else (np.zeros(J), np.zeros(J))
    lstm = rec.LSTM(I, J, np.random.default_rng(0))
    assign(lstm, P)
    h = lstm.forward(x, h0, C0) if with_state else lstm.forward(x)
    dx = lstm.backward(G)

    tP = {k: t64(v, True) for k, v in P.items()}
    tx, th0, tC0 = t64(x, True), t64(h0, True), t64(C0, True)
    th, tC = torch_lstm(tP, tx, th0, tC0)
    (th * t64(G)).sum().backward()
    assert np.allclose(h, th.detach().numpy(), rtol=1e-12, atol=1e-14)
    assert np.allclose(lstm.cell, tC.detach().numpy(), rtol=1e-12, atol=1e-14)
    assert np.allclose(dx, tx.grad.numpy(), rtol=1e-10, atol=1e-13)
    for k in LSTM_KEYS:
        assert np.allclose(lstm.grads[k], tP[k].grad.numpy(), rtol=1e-10, atol=1e-13), k
    assert np.allclose(lstm.grad_h0, th0.grad.numpy(), rtol=1e-10, atol=1e-13)
    assert np.allclose(lstm.grad_C0, tC0.grad.numpy(), rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("T,J", [(1, 1), (4, 3)])
def test_lstm_gradients_match_finite_differences(rec, T, J):
    rng = np.random.default_rng(7)
    I = 2
    P = random_params(rng, LSTM_KEYS, I, J)
    x, G, h0, C0 = rng.normal(size=(T, I)), rng.normal(size=(T, J)), rng.normal(size=J), rng.normal(size=J)
    lstm = rec.LSTM(I, J, np.random.default_rng(0))
    assign(lstm, P)
    lstm.forward(x, h0, C0)
    dx = lstm.backward(G)
    assert rel_error(dx, numeric_grad(lambda v: float((lstm.forward(v, h0, C0) * G).sum()), x)) < 1e-7
    assert rel_error(lstm.grad_h0, numeric_grad(lambda v: float((lstm.forward(x, v, C0) * G).sum()), h0)) < 1e-7
    assert rel_error(lstm.grad_C0, numeric_grad(lambda v: float((lstm.forward(x, h0, v) * G).sum()), C0)) < 1e-7
    analytic = {k: v.copy() for k, v in lstm.grads.items()}
    for k in LSTM_KEYS:

        def f(v, k=k):
            lstm.params[k] = v
            return float((lstm.forward(x, h0, C0) * G).sum())

        assert rel_error(analytic[k], numeric_grad(f, P[k])) < 1e-7, k
        lstm.params[k] = P[k].copy()


def test_lstm_is_torch_nn_lstm_with_its_weights_mapped(rec):
    """torch.nn.LSTM keeps the gates in the order i, f, g, o, stacked in weight_ih_l0 (4J, I) and
    weight_hh_l0 (4J, J) with two biases; ours are one (J, J + I) matrix per gate acting on
    z_t = [h_{t-1}; x_t], h first. So W_f = [W_hh[f]; W_ih[f]] side by side, b_f = b_ih[f] + b_hh[f]."""
    T, I, J = 7, 3, 4
    torch.manual_seed(0)
    net = torch.nn.LSTM(I, J, dtype=torch.float64)
    W_ih, W_hh = net.weight_ih_l0.detach().numpy(), net.weight_hh_l0.detach().numpy()  # (4J, I), (4J, J)
    b = (net.bias_ih_l0 + net.bias_hh_l0).detach().numpy()  # (4J,)
    rows = {gate: slice(k * J, (k + 1) * J) for k, gate in enumerate("ifgo")}  # torch's gate order
    ours = {"i": "i", "f": "f", "g": "C", "o": "o"}
    lstm = rec.LSTM(I, J, np.random.default_rng(0))
    for gate, name in ours.items():
        lstm.params[f"W_{name}"] = np.hstack([W_hh[rows[gate]], W_ih[rows[gate]]])  # (J, J + I): h first
        lstm.params[f"b_{name}"] = b[rows[gate]].copy()

    rng = np.random.default_rng(1)
    x, h0, C0, G = rng.normal(size=(T, I)), rng.normal(size=J), rng.normal(size=J), rng.normal(size=(T, J))
    tx = t64(x, True)
    out, (hT, CT) = net(tx, (t64(h0).view(1, J), t64(C0).view(1, J)))  # unbatched: (T, I) in, (T, J) out
    (out * t64(G)).sum().backward()
    h = lstm.forward(x, h0, C0)
    dx = lstm.backward(G)
    assert np.allclose(h, out.detach().numpy(), rtol=1e-12, atol=1e-14)
    assert np.allclose(lstm.cell[-1], CT.detach().numpy().ravel(), rtol=1e-12, atol=1e-14)
    assert np.allclose(dx, tx.grad.numpy(), rtol=1e-10, atol=1e-13)
    for gate, name in ours.items():
        expected = np.hstack([net.weight_hh_l0.grad[rows[gate]].numpy(), net.weight_ih_l0.grad[rows[gate]].numpy()])
        assert np.allclose(lstm.grads[f"W_{name}"], expected, rtol=1e-10, atol=1e-13), name
        assert np.allclose(lstm.grads[f"b_{name}"], net.bias_ih_l0.grad[rows[gate]].numpy(), rtol=1e-10), name


def test_lstm_construction_follows_the_contract(rec):
    lstm = rec.LSTM(3, 4, np.random.default_rng(0))
    p = lstm.params
    assert sorted(p) == sorted(LSTM_KEYS)
    for k in ("W_f", "W_i", "W_C", "W_o"):
        assert p[k].shape == (4, 7) and np.all(np.abs(p[k]) <= 0.5) and np.ptp(p[k]) > 0
    assert np.array_equal(p["b_f"], np.ones(4))
    assert all(np.array_equal(p[k], np.zeros(4)) for k in ("b_i", "b_C", "b_o"))
    assert rec.LSTM(3, 4).params["W_f"].shape == (4, 7)  # rng left out


def test_lstm_h0_and_C0_none_mean_zeros(rec):
    lstm = rec.LSTM(2, 3, np.random.default_rng(0))
    x = np.random.default_rng(1).normal(size=(4, 2))
    assert np.array_equal(lstm.forward(x), lstm.forward(x, np.zeros(3), np.zeros(3)))
    assert np.array_equal(lstm.forward(x, None, np.zeros(3)), lstm.forward(x, np.zeros(3)))


def test_long_sequence_gradient_reaches_the_first_step(rec):
    """T = 300 with the forget gate near 1: the gradient of the last output w.r.t. x_1 is small, not zero,
    and still matches torch."""
    T, I, J = 300, 2, 3
    rng = np.random.default_rng(3)
    P = random_params(rng, LSTM_KEYS, I, J, scale=0.3)
    P["b_f"] = np.full(J, 6.0)
    x = rng.normal(size=(T, I))
    G = np.zeros((T, J))
    G[-1] = 1.0
    lstm = rec.LSTM(I, J, np.random.default_rng(0))
    assign(lstm, P)
    lstm.forward(x)
    dx = lstm.backward(G)
    tP = {k: t64(v, True) for k, v in P.items()}
    tx = t64(x, True)
    zero = torch.zeros(J, dtype=torch.float64)
    th, _ = torch_lstm(tP, tx, zero, zero)
    th[-1].sum().backward()
    assert 1e-12 < np.abs(dx[0]).max() < 1e-1
    assert np.allclose(dx, tx.grad.numpy(), rtol=1e-9, atol=1e-15)


# --- GRU ---


@pytest.mark.parametrize("T,I,J", [(1, 2, 3), (6, 3, 1), (5, 2, 4)])
@pytest.mark.parametrize("with_h0", [False, True])
def test_gru_matches_torch_autograd(rec, T, I, J, with_h0):
    rng = np.random.default_rng(T + 100 * J)
    P = random_params(rng, GRU_KEYS, I, J)
    x, G = rng.normal(size=(T, I)), rng.normal(size=(T, J))
    h0 = rng.normal(size=J) if with_h0 else np.zeros(J)
    gru = rec.GRU(I, J, np.random.default_rng(0))
    assign(gru, P)
    h = gru.forward(x, h0) if with_h0 else gru.forward(x)
    dx = gru.backward(G)
    tP = {k: t64(v, True) for k, v in P.items()}
    tx, th0 = t64(x, True), t64(h0, True)
    th = torch_gru(tP, tx, th0)
    (th * t64(G)).sum().backward()
    assert np.allclose(h, th.detach().numpy(), rtol=1e-12, atol=1e-14)
    assert np.allclose(dx, tx.grad.numpy(), rtol=1e-10, atol=1e-13)
    for k in GRU_KEYS:
        assert np.allclose(gru.grads[k], tP[k].grad.numpy(), rtol=1e-10, atol=1e-13), k
    assert np.allclose(gru.grad_h0, th0.grad.numpy(), rtol=1e-10, atol=1e-13)


def test_gru_gradients_match_finite_differences(rec):
    rng = np.random.default_rng(8)
    T, I, J = 4, 2, 3
    P = random_params(rng, GRU_KEYS, I, J)
    x, G, h0 = rng.normal(size=(T, I)), rng.normal(size=(T, J)), rng.normal(size=J)
    gru = rec.GRU(I, J, np.random.default_rng(0))
    assign(gru, P)
    gru.forward(x, h0)
    dx = gru.backward(G)
    assert rel_error(dx, numeric_grad(lambda v: float((gru.forward(v, h0) * G).sum()), x)) < 1e-7
    assert rel_error(gru.grad_h0, numeric_grad(lambda v: float((gru.forward(x, v) * G).sum()), h0)) < 1e-7
    analytic = {k: v.copy() for k, v in gru.grads.items()}
    for k in GRU_KEYS:

        def f(v, k=k):
            gru.params[k] = v
            return float((gru.forward(x, h0) * G).sum())

        assert rel_error(analytic[k], numeric_grad(f, P[k])) < 1e-7, k
        gru.params[k] = P[k].copy()


def test_gru_construction_follows_the_contract(rec):
    p = rec.GRU(2, 3, np.random.default_rng(0)).params
    assert sorted(p) == sorted(GRU_KEYS)
    assert all(p[k].shape == (3, 5) and np.all(np.abs(p[k]) <= 1 / np.sqrt(3)) for k in ("W_r", "W_u", "W_n"))
    assert all(np.array_equal(p[k], np.zeros(3)) for k in ("b_r", "b_u", "b_n"))


# --- StackedRNN and BiRNN ---


@pytest.mark.parametrize("cell", ["lstm", "gru"])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_stacked_matches_torch_autograd(rec, cell, depth):
    T, I, J = 5, 3, 2
    keys = LSTM_KEYS if cell == "lstm" else GRU_KEYS
    rng = np.random.default_rng(depth)
    net = rec.StackedRNN(cell, I, J, depth, np.random.default_rng(0))
    assert len(net.layers) == depth
    Ps = [random_params(rng, keys, I if l == 0 else J, J) for l in range(depth)]
    for layer, P in zip(net.layers, Ps):
        assert layer.params[keys[0]].shape == P[keys[0]].shape
        assign(layer, P)
    x, G = rng.normal(size=(T, I)), rng.normal(size=(T, J))
    h = net.forward(x)
    dx = net.backward(G)
    tPs = [{k: t64(v, True) for k, v in P.items()} for P in Ps]
    tx = t64(x, True)
    th = tx
    for tP in tPs:
        th = _torch_cell(cell, tP, th)
    (th * t64(G)).sum().backward()
    assert np.allclose(h, th.detach().numpy(), rtol=1e-12, atol=1e-14)
    assert np.allclose(dx, tx.grad.numpy(), rtol=1e-10, atol=1e-13)
    for layer, tP in zip(net.layers, tPs):
        for k in keys:
            assert np.allclose(layer.grads[k], tP[k].grad.numpy(), rtol=1e-10, atol=1e-13), k
    assert rel_error(dx, numeric_grad(lambda v: float((net.forward(v) * G).sum()), x)) < 1e-7


def test_stacked_layers_are_built_in_order_from_one_rng(rec):
    net = rec.StackedRNN("lstm", 3, 2, 2, np.random.default_rng(5))
    rng = np.random.default_rng(5)
    first, second = rec.LSTM(3, 2, rng), rec.LSTM(2, 2, rng)
    assert np.array_equal(net.layers[0].params["W_o"], first.params["W_o"])
    assert np.array_equal(net.layers[1].params["W_f"], second.params["W_f"])
    assert isinstance(rec.StackedRNN("gru", 3, 2, 1).layers[0], rec.GRU)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_birnn_matches_torch_autograd(rec, cell):
    T, I, J = 6, 2, 3
    keys = LSTM_KEYS if cell == "lstm" else GRU_KEYS
    rng = np.random.default_rng(11)
    net = rec.BiRNN(cell, I, J, np.random.default_rng(0))
    Pf, Pb = random_params(rng, keys, I, J), random_params(rng, keys, I, J)
    assign(net.fwd, Pf)
    assign(net.bwd, Pb)
    x, G = rng.normal(size=(T, I)), rng.normal(size=(T, 2 * J))
    y = net.forward(x)
    dx = net.backward(G)
    tPf, tPb = ({k: t64(v, True) for k, v in P.items()} for P in (Pf, Pb))
    tx = t64(x, True)
    ty = torch.cat([_torch_cell(cell, tPf, tx), _torch_cell(cell, tPb, tx.flip(0)).flip(0)], dim=1)
    (ty * t64(G)).sum().backward()
    assert y.shape == (T, 2 * J)
    assert np.allclose(y, ty.detach().numpy(), rtol=1e-12, atol=1e-14)
    assert np.allclose(dx, tx.grad.numpy(), rtol=1e-10, atol=1e-13)
    for half, tP in ((net.fwd, tPf), (net.bwd, tPb)):
        for k in keys:
            assert np.allclose(half.grads[k], tP[k].grad.numpy(), rtol=1e-10, atol=1e-13), k
    assert rel_error(dx, numeric_grad(lambda v: float((net.forward(v) * G).sum()), x)) < 1e-7


def test_birnn_row_t_depends_on_every_x_and_stacked_only_on_the_past(rec):
    T, I, J = 5, 2, 2
    x = np.random.default_rng(2).normal(size=(T, I))
    bi, deep = (
        rec.BiRNN("lstm", I, J, np.random.default_rng(0)),
        rec.StackedRNN("gru", I, J, 2, np.random.default_rng(0)),
    )
    for s in range(T):
        moved = x.copy()
        moved[s] += 1.0
        changed_bi = np.any(bi.forward(moved) != bi.forward(x), axis=1)
        changed_deep = np.any(deep.forward(moved) != deep.forward(x), axis=1)
        assert changed_bi.all()
        assert list(changed_deep) == [t >= s for t in range(T)]


# --- clip_grad_norm ---


def test_clip_grad_norm_below_at_and_above(rec):
    grads = {"a": np.array([3.0, 0.0]), "b": np.array([[4.0]])}  # total norm 5
    before = {k: v.copy() for k, v in grads.items()}
    for max_norm, scale in [(10.0, 1.0), (5.0, 1.0), (2.5, 0.5)]:
        clipped, total = rec.clip_grad_norm(grads, max_norm)
        assert total == pytest.approx(5.0, rel=1e-15) and sorted(clipped) == ["a", "b"]
        for k in grads:
            assert np.allclose(clipped[k], before[k] * scale, rtol=1e-15)
        assert all(np.array_equal(grads[k], before[k]) for k in grads)
    clipped, _ = rec.clip_grad_norm(grads, 2.5)
    total_after = np.sqrt(sum((v**2).sum() for v in clipped.values()))
    assert total_after == pytest.approx(2.5, rel=1e-14)
    for bad in (0.0, -1.0):
        with pytest.raises(ValueError):
            rec.clip_grad_norm(grads, bad)


def test_clip_grad_norm_agrees_with_torch(rec):
    rng = np.random.default_rng(4)
    grads = {"x": rng.normal(size=(3, 4)), "y": rng.normal(size=5)}
    params = [torch.nn.Parameter(torch.zeros(v.shape, dtype=torch.float64)) for v in grads.values()]
    for p, v in zip(params, grads.values()):
        p.grad = t64(v)
    total_torch = torch.nn.utils.clip_grad_norm_(params, 1.0)
    clipped, total = rec.clip_grad_norm(grads, 1.0)
    assert total == pytest.approx(float(total_torch), rel=1e-14)
    for p, k in zip(params, grads):  # torch divides by (total + 1e-6): equal to about 1e-6
        assert np.allclose(clipped[k], p.grad.numpy(), rtol=1e-5)


# --- LSTMLM, step, train ---


def torch_lm_loss(P, layers, tokens):
    h = P["E"][torch.as_tensor(tokens[:-1])]
    for tP in layers:
        h = _torch_cell("lstm", tP, h)
    logits = h @ P["W_y"].T + P["b_y"]
    return torch.nn.functional.cross_entropy(logits, torch.as_tensor(tokens[1:]), reduction="sum")


def lm_case(rec, V=6, D=3, J=4, L=2, T=7, seed=0):
    rng = np.random.default_rng(seed)
    lm = rec.LSTMLM(V, D, J, L, np.random.default_rng(1))
    P = {"E": rng.normal(size=(V, D)), "W_y": rng.normal(size=(V, J)), "b_y": rng.normal(size=V)}
    Ps = [random_params(rng, LSTM_KEYS, D if l == 0 else J, J) for l in range(L)]
    assign(lm, P)
    for layer, Pl in zip(lm.rnn.layers, Ps):
        assign(layer, Pl)
    tokens = rng.integers(0, V, T + 1)
    tokens[T // 2] = tokens[0]  # a repeated token: E's gradient accumulates
    return lm, P, Ps, tokens


@pytest.mark.parametrize("L,T", [(1, 1), (1, 6), (2, 7), (3, 4)])
def test_lstmlm_matches_torch_autograd(rec, L, T):
    lm, P, Ps, tokens = lm_case(rec, L=L, T=T)
    loss = lm.loss(tokens)
    assert lm.backward() is None
    tP = {k: t64(v, True) for k, v in P.items()}
    tPs = [{k: t64(v, True) for k, v in Pl.items()} for Pl in Ps]
    tloss = torch_lm_loss(tP, tPs, tokens)
    tloss.backward()
    assert loss == pytest.approx(float(tloss.detach()), rel=1e-12)
    named = lm.named_grads()
    assert sorted(named) == sorted(["E", "W_y", "b_y", *(f"rnn.{l}.{k}" for l in range(L) for k in LSTM_KEYS)])
    for k in P:
        assert np.allclose(named[k], tP[k].grad.numpy(), rtol=1e-10, atol=1e-13), k
    for l, tPl in enumerate(tPs):
        for k in LSTM_KEYS:
            assert np.allclose(named[f"rnn.{l}.{k}"], tPl[k].grad.numpy(), rtol=1e-10, atol=1e-13), (l, k)
            assert named[f"rnn.{l}.{k}"] is lm.rnn.layers[l].grads[k]


def test_lstmlm_gradients_match_finite_differences(rec):
    lm, P, Ps, tokens = lm_case(rec, V=4, D=2, J=2, L=2, T=5)
    lm.loss(tokens)
    lm.backward()
    named = {k: v.copy() for k, v in lm.named_grads().items()}
    for k in P:

        def f(v, k=k):
            lm.params[k] = v
            return lm.loss(tokens)

        assert rel_error(named[k], numeric_grad(f, P[k])) < 1e-7, k
        lm.params[k] = P[k].copy()
    layer = lm.rnn.layers[0]

    def f(v):
        layer.params["W_C"] = v
        return lm.loss(tokens)

    assert rel_error(named["rnn.0.W_C"], numeric_grad(f, Ps[0]["W_C"])) < 1e-7


def test_lstmlm_construction_follows_the_contract(rec):
    lm = rec.LSTMLM(7, 3, 4, 2, np.random.default_rng(0))
    assert lm.params["E"].shape == (7, 3) and lm.params["W_y"].shape == (7, 4)
    assert np.array_equal(lm.params["b_y"], np.zeros(7)) and np.all(np.abs(lm.params["W_y"]) <= 0.5)
    assert 0.02 < lm.params["E"].std() < 0.3
    assert [layer.params["W_f"].shape for layer in lm.rnn.layers] == [(4, 7), (4, 8)]
    assert len(rec.LSTMLM(5, 2, 3).rnn.layers) == 1  # num_layers and rng left out


@pytest.mark.parametrize("max_norm", [None, 1e6, 0.05])
def test_step_is_sgd_on_jointly_clipped_gradients(rec, max_norm):
    lm, P, Ps, tokens = lm_case(rec)
    lm.loss(tokens)
    lm.backward()
    named = {k: v.copy() for k, v in lm.named_grads().items()}
    total = np.sqrt(sum((g**2).sum() for g in named.values()))
    scale = 1.0 if max_norm is None or total <= max_norm else max_norm / total
    returned = lm.step(0.1, max_norm)
    assert returned == pytest.approx(total, rel=1e-13)
    for k in P:
        assert np.allclose(lm.params[k], P[k] - 0.1 * scale * named[k], rtol=1e-13, atol=1e-15)
    for l, Pl in enumerate(Ps):
        for k in LSTM_KEYS:
            assert np.allclose(
                lm.rnn.layers[l].params[k], Pl[k] - 0.1 * scale * named[f"rnn.{l}.{k}"], rtol=1e-13, atol=1e-15
            )


def markov(rng, V, count, length=8):
    nexts = np.array([rng.choice(V, size=2, replace=False) for _ in range(V)])
    seqs = []
    for _ in range(count):
        s = [int(rng.integers(V))]
        for _ in range(length - 1):
            s.append(int(nexts[s[-1], rng.integers(2)]))
        seqs.append(np.array(s))
    return seqs


def test_train_follows_the_contract_loop_and_learns(rec):
    rng = np.random.default_rng(6)
    V = 5
    seqs = markov(rng, V, 6)
    lm = rec.LSTMLM(V, 3, 8, 1, np.random.default_rng(2))
    twin = rec.LSTMLM(V, 3, 8, 1, np.random.default_rng(2))
    losses = rec.train(lm, seqs, 3, 0.2, np.random.default_rng(9), max_norm=1.0)
    order_rng, expected = np.random.default_rng(9), []
    for _ in range(3):
        total = 0.0
        for k in order_rng.permutation(len(seqs)):
            total += twin.loss(seqs[k])
            twin.backward()
            twin.step(0.2, 1.0)
        expected.append(total / sum(len(s) - 1 for s in seqs))
    assert losses == expected
    more = rec.train(lm, seqs, 25, 0.2, np.random.default_rng(3), max_norm=1.0)
    assert more[-1] < losses[0] - 0.4  # a chain with two successors per token: ln 2 is reachable
    assert rec.train(lm, seqs, 0, 0.2, np.random.default_rng(0)) == []


# --- arguments ---


def test_no_argument_is_changed(rec):
    rng = np.random.default_rng(0)
    for cls in (rec.LSTM, rec.GRU):
        net = cls(2, 3, rng)
        x, G = rng.normal(size=(4, 2)), rng.normal(size=(4, 3))
        x.flags.writeable = G.flags.writeable = False
        net.forward(x)
        net.backward(G)
    grads = {"a": rng.normal(size=3)}
    grads["a"].flags.writeable = False
    rec.clip_grad_norm(grads, 0.1)


def test_sigmoid_is_stable_at_1e4(rec):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(over="raise", invalid="raise"):
            y = rec.sigmoid(np.array([-1e4, -30.0, 0.0, 30.0, 1e4]))
    assert y[0] == 0.0 and y[2] == 0.5 and y[-1] == 1.0
    assert np.allclose(rec.sigmoid(np.array([-30.0, 2.0])), 1 / (1 + np.exp([30.0, -2.0])), rtol=1e-15)


@pytest.mark.parametrize(
    "call",
    [
        lambda r: r.LSTM(0, 3),
        lambda r: r.LSTM(2, 0),
        lambda r: r.GRU(0, 2),
        lambda r: r.GRU(2, 0),
        lambda r: r.StackedRNN("rnn", 2, 3, 1),
        lambda r: r.StackedRNN("lstm", 2, 3, 0),
        lambda r: r.BiRNN("LSTM", 2, 3),
        lambda r: r.clip_grad_norm({"a": np.ones(2)}, 0.0),
    ],
)
def test_bad_arguments_raise_value_error(rec, call):
    with pytest.raises(ValueError):
        call(rec)
