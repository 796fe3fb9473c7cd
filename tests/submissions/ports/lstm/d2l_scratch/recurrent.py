"""Gated RNNs from scratch in the style of Dive into Deep Learning (d2l.ai), in numpy.

d2l keeps one input matrix and one hidden matrix per gate (W_xi, W_hi, b_i,
made by triple()) and writes each step as X @ W_xi + H @ W_hi + b_i, looping
`for X in inputs`. Here W_xi and W_hi are read out of the course's single
(J, J + I) matrix W_i. d2l lets autograd do the backward pass; this file
walks the recurrence back by hand, one step at a time, and then forms every
weight gradient at once as a sum over time of the pre-activation gradients.
"""

from __future__ import annotations

import numpy as np


def sigmoid(x):
    x = np.asarray(x, dtype=np.float64)
    return np.exp(-np.logaddexp(0.0, -x))


def _check_sizes(num_inputs, num_hiddens):
    if int(num_inputs) < 1 or int(num_hiddens) < 1:
        raise ValueError(f"input_size and hidden_size must be >= 1, got {num_inputs} and {num_hiddens}")


class RNNScratchBase:
    """What LSTMScratch and GRUScratch share: the gate parameters, split d2l's way."""

    gates: tuple[str, ...] = ()
    bias_init: dict[str, float] = {}

    def __init__(self, num_inputs, num_hiddens, rng=None):
        _check_sizes(num_inputs, num_hiddens)
        self.num_inputs, self.num_hiddens = int(num_inputs), int(num_hiddens)
        rng = np.random.default_rng() if rng is None else rng
        bound = 1.0 / np.sqrt(self.num_hiddens)
        shape = (self.num_hiddens, self.num_hiddens + self.num_inputs)
        self.params = {}
        for gate in self.gates:
            self.params["W_" + gate] = rng.uniform(-bound, bound, size=shape)
        for gate in self.gates:
            self.params["b_" + gate] = np.full(self.num_hiddens, self.bias_init.get(gate, 0.0))
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def triple(self, gate):
        """(W_x, W_h, b) of one gate, as d2l's triple() lays them out: X @ W_x + H @ W_h + b."""
        W = self.params["W_" + gate]
        return W[:, self.num_hiddens :].T, W[:, : self.num_hiddens].T, self.params["b_" + gate]

    def begin_state(self, state):
        if state is None:
            return np.zeros(self.num_hiddens)
        return np.asarray(state, dtype=np.float64)

    def grads_from(self, dA, Z):
        """dA: {gate: (T, J)} pre-activation gradients, Z: {gate: (T, J + I)} what each gate's W met."""
        grads = {}
        for gate in self.gates:
            grads["W_" + gate] = dA[gate].T @ Z[gate]
            grads["b_" + gate] = dA[gate].sum(axis=0)
        return grads


class LSTM(RNNScratchBase):
    gates = ("f", "i", "C", "o")
    bias_init = {"f": 1.0}

    def forward(self, x, h0=None, C0=None):
        inputs = np.asarray(x, dtype=np.float64)
        W_xf, W_hf, b_f = self.triple("f")
        W_xi, W_hi, b_i = self.triple("i")
        W_xc, W_hc, b_c = self.triple("C")
        W_xo, W_ho, b_o = self.triple("o")
        H, C = self.begin_state(h0), self.begin_state(C0)
        self.inputs, self.H_prev, self.C_prev = inputs, [], []
        self.I, self.F, self.O, self.C_tilda, self.C = [], [], [], [], []
        outputs = []
        for X in inputs:
            self.H_prev.append(H)
            self.C_prev.append(C)
            I = sigmoid(X @ W_xi + H @ W_hi + b_i)
            F = sigmoid(X @ W_xf + H @ W_hf + b_f)
            O = sigmoid(X @ W_xo + H @ W_ho + b_o)
            C_tilda = np.tanh(X @ W_xc + H @ W_hc + b_c)
            C = F * C + I * C_tilda
            H = O * np.tanh(C)
            for store, value in ((self.I, I), (self.F, F), (self.O, O), (self.C_tilda, C_tilda), (self.C, C)):
                store.append(value)
            outputs.append(H)
        T, J = len(inputs), self.num_hiddens
        self.cell = np.array(self.C).reshape(T, J)
        return np.array(outputs).reshape(T, J)

    def backward(self, grad_h):
        grad_h = np.asarray(grad_h, dtype=np.float64)
        W_xf, W_hf, _ = self.triple("f")
        W_xi, W_hi, _ = self.triple("i")
        W_xc, W_hc, _ = self.triple("C")
        W_xo, W_ho, _ = self.triple("o")
        T, J = grad_h.shape
        dA = {gate: np.zeros((T, J)) for gate in self.gates}
        dH = np.zeros(J)
        dC = np.zeros(J)
        for t in reversed(range(T)):
            I, F, O, C_tilda = self.I[t], self.F[t], self.O[t], self.C_tilda[t]
            tanh_C = np.tanh(self.C[t])
            dH = dH + grad_h[t]
            dC = dC + dH * O * (1 - tanh_C**2)
            dA["o"][t] = dH * tanh_C * O * (1 - O)
            dA["f"][t] = dC * self.C_prev[t] * F * (1 - F)
            dA["i"][t] = dC * C_tilda * I * (1 - I)
            dA["C"][t] = dC * I * (1 - C_tilda**2)
            dH = dA["f"][t] @ W_hf.T + dA["i"][t] @ W_hi.T + dA["C"][t] @ W_hc.T + dA["o"][t] @ W_ho.T
            dC = dC * F
        Z = np.hstack((np.array(self.H_prev).reshape(T, J), self.inputs))
        self.grads = self.grads_from(dA, dict.fromkeys(self.gates, Z))
        self.grad_h0, self.grad_C0 = dH, dC
        return dA["f"] @ W_xf.T + dA["i"] @ W_xi.T + dA["C"] @ W_xc.T + dA["o"] @ W_xo.T


class GRU(RNNScratchBase):
    gates = ("r", "u", "n")

    def forward(self, x, h0=None):
        inputs = np.asarray(x, dtype=np.float64)
        W_xr, W_hr, b_r = self.triple("r")
        W_xz, W_hz, b_z = self.triple("u")
        W_xh, W_hh, b_h = self.triple("n")
        H = self.begin_state(h0)
        self.inputs, self.H_prev, self.R, self.Z, self.H_tilda = inputs, [], [], [], []
        outputs = []
        for X in inputs:
            self.H_prev.append(H)
            Z = sigmoid(X @ W_xz + H @ W_hz + b_z)
            R = sigmoid(X @ W_xr + H @ W_hr + b_r)
            H_tilda = np.tanh(X @ W_xh + (R * H) @ W_hh + b_h)
            H = (1 - Z) * H + Z * H_tilda
            self.R.append(R)
            self.Z.append(Z)
            self.H_tilda.append(H_tilda)
            outputs.append(H)
        return np.array(outputs).reshape(len(inputs), self.num_hiddens)

    def backward(self, grad_h):
        grad_h = np.asarray(grad_h, dtype=np.float64)
        W_xr, W_hr, _ = self.triple("r")
        W_xz, W_hz, _ = self.triple("u")
        W_xh, W_hh, _ = self.triple("n")
        T, J = grad_h.shape
        dA = {gate: np.zeros((T, J)) for gate in self.gates}
        dH = np.zeros(J)
        for t in reversed(range(T)):
            R, Z, H_tilda, H_prev = self.R[t], self.Z[t], self.H_tilda[t], self.H_prev[t]
            dH = dH + grad_h[t]
            dH_tilda = dH * Z
            dZ = dH * (H_tilda - H_prev)
            dA["n"][t] = dH_tilda * (1 - H_tilda**2)
            dRH = dA["n"][t] @ W_hh.T
            dA["r"][t] = dRH * H_prev * R * (1 - R)
            dA["u"][t] = dZ * Z * (1 - Z)
            dH = dH * (1 - Z) + dRH * R + dA["r"][t] @ W_hr.T + dA["u"][t] @ W_hz.T
        H_prev_all = np.array(self.H_prev).reshape(T, J)
        Z_gates = np.hstack((H_prev_all, self.inputs))
        Z_reset = np.hstack((np.array(self.R).reshape(T, J) * H_prev_all, self.inputs))
        self.grads = self.grads_from(dA, {"r": Z_gates, "u": Z_gates, "n": Z_reset})
        self.grad_h0 = dH
        return dA["r"] @ W_xr.T + dA["u"] @ W_xz.T + dA["n"] @ W_xh.T


def _rnn_class(cell):
    if cell == "lstm":
        return LSTM
    if cell == "gru":
        return GRU
    raise ValueError(f"cell must be 'lstm' or 'gru', got {cell!r}")


class StackedRNN:
    """d2l's StackedRNNScratch: a list of rnns, each one's outputs the next one's inputs."""

    def __init__(self, cell: str, input_size: int, hidden_size: int, num_layers: int, rng=None):
        rnn_class = _rnn_class(cell)
        if int(num_layers) < 1:
            raise ValueError(f"num_layers must be >= 1, got {num_layers}")
        _check_sizes(input_size, hidden_size)
        rng = np.random.default_rng() if rng is None else rng
        self.num_layers = int(num_layers)
        self.layers = [
            rnn_class(input_size if i == 0 else hidden_size, hidden_size, rng) for i in range(self.num_layers)
        ]

    def forward(self, x):
        outputs = x
        for i in range(self.num_layers):
            outputs = self.layers[i].forward(outputs)
        return outputs

    def backward(self, grad_h):
        grads = grad_h
        for i in reversed(range(self.num_layers)):
            grads = self.layers[i].backward(grads)
        return grads


class BiRNN:
    """d2l's BiRNNScratch: f_rnn reads the inputs, b_rnn reads them reversed."""

    def __init__(self, cell: str, input_size: int, hidden_size: int, rng=None):
        rnn_class = _rnn_class(cell)
        _check_sizes(input_size, hidden_size)
        rng = np.random.default_rng() if rng is None else rng
        self.fwd = rnn_class(input_size, hidden_size, rng)
        self.bwd = rnn_class(input_size, hidden_size, rng)
        self.num_hiddens = int(hidden_size)

    def forward(self, x):
        inputs = np.asarray(x, dtype=np.float64)
        f_outputs = self.fwd.forward(inputs)
        b_outputs = self.bwd.forward(inputs[::-1])
        outputs = [np.concatenate((f, b)) for f, b in zip(f_outputs, b_outputs[::-1])]
        return np.array(outputs).reshape(len(inputs), 2 * self.num_hiddens)

    def backward(self, grad_y):
        grad_y = np.asarray(grad_y, dtype=np.float64)
        f_grads = self.fwd.backward(grad_y[:, : self.num_hiddens])
        b_grads = self.bwd.backward(grad_y[::-1, self.num_hiddens :])
        return f_grads + b_grads[::-1]


def grad_clipping(grads, theta):
    """d2l's grad_clipping: one norm over every gradient, each scaled by theta / norm when above theta.

    d2l scales param.grad in place; here the scaled gradients are new arrays.
    """
    norm = float(np.sqrt(sum(np.sum(g**2) for g in grads.values())))
    grads = {name: np.array(g, dtype=np.float64, copy=True) for name, g in grads.items()}
    if norm > theta:
        for g in grads.values():
            g[:] *= theta / norm
    return grads, norm


def clip_grad_norm(grads, max_norm):
    if not max_norm > 0:
        raise ValueError(f"max_norm must be > 0, got {max_norm}")
    return grad_clipping(grads, max_norm)


class CrossEntropyLoss:
    """nn.CrossEntropyLoss on logits (T, V) and targets (T,), with the same reduction argument."""

    def __init__(self, reduction="mean"):
        if reduction not in ("mean", "sum"):
            raise ValueError(f"reduction must be 'mean' or 'sum', got {reduction!r}")
        self.reduction = reduction

    def __call__(self, y_hat, y):
        shifted = y_hat - y_hat.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        self.scale = 1.0 / len(y) if self.reduction == "mean" else 1.0
        self.dy_hat = np.exp(log_probs)
        self.dy_hat[np.arange(len(y)), y] -= 1.0
        self.dy_hat *= self.scale
        return -log_probs[np.arange(len(y)), y].sum() * self.scale


def sgd(params, grads, lr, batch_size=1):
    """d2l's minibatch stochastic gradient descent (new arrays instead of an in-place update)."""
    for name in params:
        params[name] = params[name] - lr * grads[name] / batch_size


class LSTMLM:
    """d2l's RNNLMScratch, with an embedding E in place of one-hot inputs and W_y (V, J) as the output layer."""

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, num_layers: int = 1, rng=None):
        if int(vocab_size) < 1 or int(embed_dim) < 1 or int(hidden_size) < 1:
            raise ValueError("vocab_size, embed_dim and hidden_size must be >= 1")
        if int(num_layers) < 1:
            raise ValueError(f"num_layers must be >= 1, got {num_layers}")
        rng = np.random.default_rng() if rng is None else rng
        bound = 1.0 / np.sqrt(hidden_size)
        self.params = {}
        self.params["E"] = rng.standard_normal((vocab_size, embed_dim)) * 0.1
        self.params["W_y"] = rng.uniform(-bound, bound, size=(vocab_size, hidden_size))
        self.params["b_y"] = np.zeros(vocab_size)
        self.rnn = StackedRNN("lstm", embed_dim, hidden_size, num_layers, rng)
        self.loss_fn = CrossEntropyLoss(reduction="sum")
        self.grads = {k: np.zeros_like(v) for k, v in self.params.items()}

    def output_layer(self, rnn_outputs):
        return rnn_outputs @ self.params["W_y"].T + self.params["b_y"]

    def loss(self, tokens) -> float:
        tokens = np.asarray(tokens)
        self.X, self.Y = tokens[:-1], tokens[1:]
        self.rnn_outputs = self.rnn.forward(self.params["E"][self.X])
        y_hat = self.output_layer(self.rnn_outputs)
        return float(self.loss_fn(y_hat, self.Y))

    def backward(self) -> None:
        dy_hat = self.loss_fn.dy_hat
        d_outputs = dy_hat @ self.params["W_y"]
        d_embs = self.rnn.backward(d_outputs)
        dE = np.zeros_like(self.params["E"])
        np.add.at(dE, self.X, d_embs)
        self.grads = {"E": dE, "W_y": dy_hat.T @ self.rnn_outputs, "b_y": dy_hat.sum(axis=0)}

    def named_grads(self) -> dict[str, np.ndarray]:
        grads = {name: self.grads[name] for name in ("E", "W_y", "b_y")}
        for i, layer in enumerate(self.rnn.layers):
            grads.update({f"rnn.{i}.{key}": layer.grads[key] for key in layer.params})
        return grads

    def step(self, lr: float, max_norm: float | None = None) -> float:
        grads = self.named_grads()
        if max_norm is not None:
            grads, norm = clip_grad_norm(grads, max_norm)
        else:
            norm = float(np.sqrt(sum(np.sum(g**2) for g in grads.values())))
        sgd(self.params, {name: grads[name] for name in self.params}, lr)
        for i, layer in enumerate(self.rnn.layers):
            sgd(layer.params, {key: grads[f"rnn.{i}.{key}"] for key in layer.params}, lr)
        return norm


class Accumulator:
    """d2l's Accumulator: sums over n variables."""

    def __init__(self, n):
        self.data = [0.0] * n

    def add(self, *args):
        self.data = [a + float(b) for a, b in zip(self.data, args)]

    def __getitem__(self, idx):
        return self.data[idx]


def train_epoch(model, sequences, lr, rng, max_norm):
    metric = Accumulator(2)  # sum of training loss, number of tokens
    for idx in rng.permutation(len(sequences)):
        l = model.loss(sequences[idx])
        model.backward()
        model.step(lr, max_norm)
        metric.add(l, len(sequences[idx]) - 1)
    return metric[0] / metric[1]


def train(model, sequences, epochs, lr, rng, max_norm=None):
    return [train_epoch(model, sequences, lr, rng, max_norm) for _ in range(epochs)]
