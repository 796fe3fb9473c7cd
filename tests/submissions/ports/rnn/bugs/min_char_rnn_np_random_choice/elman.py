"""Elman RNN and RNN language model in the manner of Karpathy's min-char-rnn:
column vectors, the time steps kept in dicts xs, hs, ys, ps with hs[-1] the
initial state, a forward loop that adds up -log ps[t][target], a reversed
loop carrying dhnext back through time, and a sampler that feeds each
drawn index back in."""

from __future__ import annotations

import math

import numpy as np

ACTIVATIONS = ("sigmoid", "tanh")


def _size(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def _sigmoid(a):
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


class ElmanRNN:
    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        output_size: int,
        activation: str = "sigmoid",
        rng: np.random.Generator | None = None,
    ):
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be 'sigmoid' or 'tanh', got {activation!r}")
        self.activation = activation
        self.input_size = _size("input_size", input_size)
        self.hidden_size = _size("hidden_size", hidden_size)
        self.output_size = _size("output_size", output_size)
        rng = np.random.default_rng() if rng is None else rng
        I, J, K = self.input_size, self.hidden_size, self.output_size
        self.params = {
            "W_ah": rng.uniform(-1, 1, (J, J)) / np.sqrt(J),  # hidden to hidden
            "W_ax": rng.uniform(-1, 1, (J, I)) / np.sqrt(I),  # input to hidden
            "b_a": np.zeros(J),  # hidden bias
            "W_yh": rng.uniform(-1, 1, (K, J)) / np.sqrt(J),  # hidden to output
            "b_y": np.zeros(K),  # output bias
        }
        self.grads = {}

    def _act(self, a):
        return np.tanh(a) if self.activation == "tanh" else _sigmoid(a)

    def _act_grad(self, h):
        # the derivative written in terms of the output h
        return 1 - h * h if self.activation == "tanh" else h * (1 - h)

    def forward(self, x, h0=None):
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.input_size:
            raise ValueError(f"x must be (T, {self.input_size}), got {x.shape}")
        if h0 is None:
            hprev = np.zeros((self.hidden_size, 1))
        else:
            hprev = np.array(h0, dtype=np.float64)
            if hprev.shape != (self.hidden_size,):
                raise ValueError(f"h0 must be ({self.hidden_size},), got {hprev.shape}")
            hprev = hprev.reshape(-1, 1)
        Wxh, Whh, Why = self.params["W_ax"], self.params["W_ah"], self.params["W_yh"]
        bh, by = self.params["b_a"].reshape(-1, 1), self.params["b_y"].reshape(-1, 1)
        xs, hs, ys, ps = {}, {}, {}, {}
        hs[-1] = np.copy(hprev)
        for t in range(len(x)):
            xs[t] = x[t].reshape(-1, 1)
            hs[t] = self._act(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t - 1]) + bh)  # hidden state
            ys[t] = np.dot(Why, hs[t]) + by  # unnormalized log probabilities
            ys[t] = ys[t] - np.max(ys[t])
            ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))  # probabilities
        self.xs, self.hs, self.ys, self.ps = xs, hs, ys, ps
        T = len(x)
        self.hidden = np.array([hs[t].ravel() for t in range(T)]).reshape(T, self.hidden_size)
        return np.array([ps[t].ravel() for t in range(T)]).reshape(T, self.output_size)

    def loss(self, x, targets, h0=None) -> float:
        targets = np.asarray(targets)
        x = np.asarray(x)
        if targets.shape != (len(x),) or not np.issubdtype(targets.dtype, np.integer):
            raise ValueError(f"targets must be {len(x)} integers")
        if np.any(targets < 0) or np.any(targets >= self.output_size):
            raise ValueError(f"targets must lie in [0, {self.output_size})")
        self.forward(x, h0)
        self.targets = targets.copy()
        loss = 0
        for t in range(len(targets)):
            # -log softmax from the shifted scores: finite where ps[t] underflows
            loss += -(self.ys[t][targets[t], 0] - np.log(np.sum(np.exp(self.ys[t]))))
        return float(loss)

    def backward(self) -> dict[str, np.ndarray]:
        xs, hs, ps, targets = self.xs, self.hs, self.ps, self.targets
        Wxh, Whh, Why = self.params["W_ax"], self.params["W_ah"], self.params["W_yh"]
        dWxh, dWhh, dWhy = np.zeros_like(Wxh), np.zeros_like(Whh), np.zeros_like(Why)
        dbh = np.zeros((self.hidden_size, 1))
        dby = np.zeros((self.output_size, 1))
        dhnext = np.zeros_like(hs[-1])
        dxs = np.zeros((len(targets), self.input_size))
        for t in reversed(range(len(targets))):
            dy = np.copy(ps[t])
            dy[targets[t]] -= 1  # backprop into y
            dWhy += np.dot(dy, hs[t].T)
            dby += dy
            dh = np.dot(Why.T, dy) + dhnext  # backprop into h
            dhraw = self._act_grad(hs[t]) * dh  # backprop through the nonlinearity
            dbh += dhraw
            dWxh += np.dot(dhraw, xs[t].T)
            dWhh += np.dot(dhraw, hs[t - 1].T)
            dhnext = np.dot(Whh.T, dhraw)
            dxs[t] = np.dot(Wxh.T, dhraw).ravel()
        self.grad_h0 = dhnext.ravel()
        self.grad_x = dxs
        self.grads = {"W_ah": dWhh, "W_ax": dWxh, "b_a": dbh.ravel(), "W_yh": dWhy, "b_y": dby.ravel()}
        return dict(self.grads)


class RNNLM(ElmanRNN):
    def __init__(
        self,
        vocab_size: int,
        embed_dim: int,
        hidden_size: int,
        activation: str = "sigmoid",
        rng: np.random.Generator | None = None,
    ):
        rng = np.random.default_rng() if rng is None else rng
        super().__init__(embed_dim, hidden_size, vocab_size, activation, rng)
        self.vocab_size = self.output_size
        self.params["E"] = rng.standard_normal((self.vocab_size, self.input_size))

    def _check_ix(self, name, ix):
        if isinstance(ix, bool) or not isinstance(ix, (int, np.integer)) or not 0 <= ix < self.vocab_size:
            raise ValueError(f"{name} must be a token id in [0, {self.vocab_size}), got {ix!r}")

    def loss(self, tokens) -> float:
        tokens = np.array(tokens)
        if tokens.ndim != 1 or len(tokens) < 2 or not np.issubdtype(tokens.dtype, np.integer):
            raise ValueError("tokens must be at least 2 integer token ids")
        if np.any(tokens < 0) or np.any(tokens >= self.vocab_size):
            raise ValueError(f"tokens must lie in [0, {self.vocab_size})")
        inputs, targets = tokens[:-1], tokens[1:]
        self.inputs = inputs
        return super().loss(self.params["E"][inputs], targets)

    def backward(self) -> dict[str, np.ndarray]:
        grads = super().backward()
        dE = np.zeros_like(self.params["E"])
        for t in range(len(self.inputs)):
            dE[self.inputs[t]] += self.grad_x[t]
        grads["E"] = dE
        self.grads = grads
        return dict(grads)

    def sgd_step(self, lr: float) -> None:
        if isinstance(lr, bool) or not isinstance(lr, (int, float, np.number)) or not math.isfinite(lr):
            raise ValueError(f"lr must be a finite number, got {lr!r}")
        for k in self.params:
            self.params[k] = self.params[k] - lr * self.grads[k]

    def sample(self, rng: np.random.Generator, start: int, max_len: int, end: int | None = None) -> list[int]:
        self._check_ix("start", start)
        if end is not None:
            self._check_ix("end", end)
        if isinstance(max_len, bool) or not isinstance(max_len, (int, np.integer)) or max_len < 0:
            raise ValueError(f"max_len must be an integer >= 0, got {max_len!r}")
        E, Wxh, Whh = self.params["E"], self.params["W_ax"], self.params["W_ah"]
        Why = self.params["W_yh"]
        bh, by = self.params["b_a"].reshape(-1, 1), self.params["b_y"].reshape(-1, 1)
        vocab_size = self.vocab_size
        h = np.zeros((self.hidden_size, 1))
        x = E[start].reshape(-1, 1)
        ixes = []
        for _t in range(max_len):
            h = self._act(np.dot(Wxh, x) + np.dot(Whh, h) + bh)
            y = np.dot(Why, h) + by
            p = np.exp(y - np.max(y)) / np.sum(np.exp(y - np.max(y)))
            ix = int(np.random.choice(range(vocab_size), p=p.ravel()))
            x = E[ix].reshape(-1, 1)
            ixes.append(ix)
            if ix == end:
                break
        return ixes


def train(model: RNNLM, sequences: list[np.ndarray], epochs: int, lr: float, rng: np.random.Generator) -> list[float]:
    if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or epochs < 0:
        raise ValueError(f"epochs must be an integer >= 0, got {epochs!r}")
    if isinstance(lr, bool) or not isinstance(lr, (int, float, np.number)) or not math.isfinite(lr):
        raise ValueError(f"lr must be a finite number, got {lr!r}")
    if len(sequences) == 0:
        raise ValueError("sequences must not be empty")
    history = []
    for _ in range(epochs):
        loss_sum, n = 0.0, 0
        for i in rng.permutation(len(sequences)):
            loss = model.loss(sequences[i])
            model.backward()
            model.sgd_step(lr)
            loss_sum += loss
            n += len(sequences[i]) - 1
        history.append(loss_sum / n)
    return history
