"""Reference solution of the `lstm` assignment, file `recurrent.py`: gated, deep and bidirectional RNNs.

Follows spec/student-api.md exactly; the graders compare submissions with it.
numpy only, float64 throughout. The lectures' notation: z_t = [h_{t-1}; x_t]
(h first), so a gate's weight matrix is (J, J + I), its first J columns
acting on h_{t-1} and the last I on x_t.

Shapes: T time steps, I inputs, J hidden units; for the language model V
tokens in the vocabulary and D embedding dimensions.
"""

from __future__ import annotations

import math

import numpy as np


def _check_size(value, name: str) -> int:
    if value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def sigmoid(x):
    """1 / (1 + exp(-x)) elementwise, without overflow for any x."""
    x = np.asarray(x, dtype=np.float64)
    z = np.exp(-np.abs(x))  # in (0, 1]: never overflows, whatever the sign of x
    return np.where(x >= 0, 1.0, z) / (1.0 + z)


def _uniform(rng, J, shape):
    bound = 1.0 / math.sqrt(J)
    return rng.uniform(-bound, bound, size=shape)


class LSTM:
    """f, i, o gates and a candidate g = C~ from z_t = [h_{t-1}; x_t]; C_t = f C_{t-1} + i g; h_t = o tanh(C_t)."""

    def __init__(self, input_size: int, hidden_size: int, rng: np.random.Generator | None = None):
        I = _check_size(input_size, "input_size")
        J = _check_size(hidden_size, "hidden_size")
        rng = np.random.default_rng() if rng is None else rng
        self.params = {
            "W_f": _uniform(rng, J, (J, J + I)), "W_i": _uniform(rng, J, (J, J + I)),
            "W_C": _uniform(rng, J, (J, J + I)), "W_o": _uniform(rng, J, (J, J + I)),
            # A forget-gate bias of 1 keeps C flowing through time at the start of training.
            "b_f": np.ones(J), "b_i": np.zeros(J), "b_C": np.zeros(J), "b_o": np.zeros(J),
        }
        self.grads: dict[str, np.ndarray] = {}

    def forward(self, x, h0=None, C0=None):
        """(T, J) rows h_1 .. h_T; sets self.cell (T, J), rows C_1 .. C_T."""
        p = self.params
        T, J = len(x), p["b_f"].shape[0]
        h_t = np.zeros(J) if h0 is None else np.asarray(h0, dtype=np.float64)
        C_t = np.zeros(J) if C0 is None else np.asarray(C0, dtype=np.float64)
        h0, C0 = h_t, C_t
        z = np.empty((T, J + len(x[0])))  # (T, J + I): z_t = [h_{t-1}; x_t]
        f, i, g, o, C, h = (np.empty((T, J)) for _ in range(6))
        for t in range(T):
            z[t] = np.concatenate([h_t, x[t]])
            f[t] = sigmoid(p["W_f"] @ z[t] + p["b_f"])
            i[t] = sigmoid(p["W_i"] @ z[t] + p["b_i"])
            g[t] = np.tanh(p["W_C"] @ z[t] + p["b_C"])
            o[t] = sigmoid(p["W_o"] @ z[t] + p["b_o"])
            C_t = C[t] = f[t] * C_t + i[t] * g[t]
            h_t = h[t] = o[t] * np.tanh(C_t)
        self._cache = (z, f, i, g, o, C, C0)
        self.cell = C.copy()
        return h

    def backward(self, grad_h):
        """d loss / d x (T, I) for the last forward; sets self.grads, self.grad_h0 and self.grad_C0."""
        p = self.params
        z, f, i, g, o, C, C0 = self._cache
        T, J = C.shape
        C_prev = np.vstack([C0, C[:-1]])  # (T, J): C_{t-1}
        tanh_C = np.tanh(C)
        # Gradients w.r.t. each gate's pre-activation, one row per step.
        d_f, d_i, d_g, d_o = (np.empty((T, J)) for _ in range(4))
        d_z = np.empty_like(z)  # (T, J + I)
        dh_next, dC_next = np.zeros(J), np.zeros(J)  # what flows back from step t + 1
        for t in reversed(range(T)):
            dh = grad_h[t] + dh_next
            # C_t reaches the loss through h_t and through C_{t+1} = f_{t+1} C_t + ...
            dC = dC_next + dh * o[t] * (1.0 - tanh_C[t] ** 2)
            d_o[t] = dh * tanh_C[t] * o[t] * (1.0 - o[t])
            d_f[t] = dC * C_prev[t] * f[t] * (1.0 - f[t])
            d_i[t] = dC * g[t] * i[t] * (1.0 - i[t])
            d_g[t] = dC * i[t] * (1.0 - g[t] ** 2)
            d_z[t] = p["W_f"].T @ d_f[t] + p["W_i"].T @ d_i[t] + p["W_C"].T @ d_g[t] + p["W_o"].T @ d_o[t]
            dh_next, dC_next = d_z[t, :J], dC * f[t]
        self.grads = {
            "W_f": d_f.T @ z, "W_i": d_i.T @ z, "W_C": d_g.T @ z, "W_o": d_o.T @ z,  # (J, J + I)
            "b_f": d_f.sum(axis=0), "b_i": d_i.sum(axis=0), "b_C": d_g.sum(axis=0), "b_o": d_o.sum(axis=0),
        }
        self.grad_h0, self.grad_C0 = dh_next, dC_next  # (J,), (J,)
        return d_z[:, J:]  # (T, I)


class GRU:
    """Reset r and update u from z_t; n_t = tanh(W_n [r_t * h_{t-1}; x_t] + b_n); h_t = (1 - u) h_{t-1} + u n."""

    def __init__(self, input_size: int, hidden_size: int, rng: np.random.Generator | None = None):
        I = _check_size(input_size, "input_size")
        J = _check_size(hidden_size, "hidden_size")
        rng = np.random.default_rng() if rng is None else rng
        self.params = {
            "W_r": _uniform(rng, J, (J, J + I)), "W_u": _uniform(rng, J, (J, J + I)),
            "W_n": _uniform(rng, J, (J, J + I)),
            "b_r": np.zeros(J), "b_u": np.zeros(J), "b_n": np.zeros(J),
        }
        self.grads: dict[str, np.ndarray] = {}

    def forward(self, x, h0=None):
        """(T, J) rows h_1 .. h_T."""
        p = self.params
        T, J = len(x), p["b_r"].shape[0]
        h_t = np.zeros(J) if h0 is None else np.asarray(h0, dtype=np.float64)
        h_prev = np.empty((T, J))
        z, zr = (np.empty((T, J + len(x[0]))) for _ in range(2))  # [h_{t-1}; x_t] and [r_t * h_{t-1}; x_t]
        r, u, n, h = (np.empty((T, J)) for _ in range(4))
        for t in range(T):
            h_prev[t] = h_t
            z[t] = np.concatenate([h_t, x[t]])
            r[t] = sigmoid(p["W_r"] @ z[t] + p["b_r"])
            u[t] = sigmoid(p["W_u"] @ z[t] + p["b_u"])
            # The reset gate scales h_{t-1} before the product (the lectures' GRU, not cuDNN's).
            zr[t] = np.concatenate([r[t] * h_t, x[t]])
            n[t] = np.tanh(p["W_n"] @ zr[t] + p["b_n"])
            h_t = h[t] = (1.0 - u[t]) * h_t + u[t] * n[t]
        self._cache = (h_prev, z, zr, r, u, n)
        return h

    def backward(self, grad_h):
        """d loss / d x (T, I) for the last forward; sets self.grads and self.grad_h0."""
        p = self.params
        h_prev, z, zr, r, u, n = self._cache
        T, J = r.shape
        d_r, d_u, d_n = (np.empty((T, J)) for _ in range(3))
        dx = np.empty((T, z.shape[1] - J))  # (T, I)
        dh_next = np.zeros(J)
        for t in reversed(range(T)):
            dh = grad_h[t] + dh_next
            d_u[t] = dh * (n[t] - h_prev[t]) * u[t] * (1.0 - u[t])
            d_n[t] = dh * u[t] * (1.0 - n[t] ** 2)
            d_zr = p["W_n"].T @ d_n[t]  # (J + I,): d loss / d [r * h_{t-1}; x_t]
            d_r[t] = d_zr[:J] * h_prev[t] * r[t] * (1.0 - r[t])
            d_z = p["W_r"].T @ d_r[t] + p["W_u"].T @ d_u[t]
            dx[t] = d_zr[J:] + d_z[J:]
            dh_next = dh * (1.0 - u[t]) + d_zr[:J] * r[t] + d_z[:J]
        self.grads = {
            "W_r": d_r.T @ z, "W_u": d_u.T @ z, "W_n": d_n.T @ zr,  # (J, J + I)
            "b_r": d_r.sum(axis=0), "b_u": d_u.sum(axis=0), "b_n": d_n.sum(axis=0),
        }
        self.grad_h0 = dh_next
        return dx


_CELLS = {"lstm": LSTM, "gru": GRU}


def _cell_class(cell):
    if cell not in _CELLS:
        raise ValueError(f"cell must be 'lstm' or 'gru', got {cell!r}")
    return _CELLS[cell]


class StackedRNN:
    """A deep RNN: layer l reads layer l - 1's hidden states (layer 0 reads x); zero initial states."""

    def __init__(self, cell: str, input_size: int, hidden_size: int, num_layers: int,
                 rng: np.random.Generator | None = None):
        Cell = _cell_class(cell)
        L = _check_size(num_layers, "num_layers")
        rng = np.random.default_rng() if rng is None else rng
        self.layers = [Cell(input_size if l == 0 else hidden_size, hidden_size, rng) for l in range(L)]

    def forward(self, x):
        """(T, J): the top layer's states."""
        h = x
        for layer in self.layers:
            h = layer.forward(h)
        return h

    def backward(self, grad_h):
        """d loss / d x (T, I); each layer's grads in layers[l].grads."""
        g = grad_h
        for layer in reversed(self.layers):
            g = layer.backward(g)
        return g


class BiRNN:
    """y_t = [h->_t ; h<-_t]: one cell reads x_1 .. x_T, the other x_T .. x_1."""

    def __init__(self, cell: str, input_size: int, hidden_size: int, rng: np.random.Generator | None = None):
        Cell = _cell_class(cell)
        rng = np.random.default_rng() if rng is None else rng
        self.fwd = Cell(input_size, hidden_size, rng)
        self.bwd = Cell(input_size, hidden_size, rng)

    def forward(self, x):
        """(T, 2J): row t holds h->_t then h<-_t."""
        h_fwd = self.fwd.forward(x)  # (T, J)
        h_bwd = self.bwd.forward(x[::-1])[::-1]  # (T, J), back in x's order
        return np.concatenate([h_fwd, h_bwd], axis=1)

    def backward(self, grad_y):
        """d loss / d x (T, I); grads in self.fwd.grads and self.bwd.grads."""
        J = grad_y.shape[1] // 2
        dx_fwd = self.fwd.backward(grad_y[:, :J])
        dx_bwd = self.bwd.backward(grad_y[::-1, J:])[::-1]
        return dx_fwd + dx_bwd


def clip_grad_norm(grads, max_norm):
    """(grads scaled to a total norm of max_norm when it is above it, the total norm before clipping)."""
    if not max_norm > 0:
        raise ValueError(f"max_norm must be > 0, got {max_norm!r}")
    # One norm over every entry of every array: clipping keeps the update's direction.
    total = math.sqrt(sum(float(np.sum(np.square(g))) for g in grads.values()))
    scale = max_norm / total if total > max_norm else 1.0
    return {k: g * scale for k, g in grads.items()}, total


class LSTMLM:
    """x_t = E[tokens[t]]; a StackedRNN of LSTMs; y_t = softmax(W_y h_t + b_y), predicting tokens[t + 1]."""

    def __init__(self, vocab_size: int, embed_dim: int, hidden_size: int, num_layers: int = 1,
                 rng: np.random.Generator | None = None):
        V = _check_size(vocab_size, "vocab_size")
        D = _check_size(embed_dim, "embed_dim")
        J = _check_size(hidden_size, "hidden_size")
        rng = np.random.default_rng() if rng is None else rng
        self.params = {
            "E": rng.standard_normal((V, D)) * 0.1,  # (V, D)
            "W_y": _uniform(rng, J, (V, J)),  # (V, J)
            "b_y": np.zeros(V),  # (V,)
        }
        self.rnn = StackedRNN("lstm", D, J, num_layers, rng)
        self.grads: dict[str, np.ndarray] = {}

    def loss(self, tokens) -> float:
        """Summed cross-entropy (natural log) of predicting tokens[1:] from tokens[:-1]."""
        p = self.params
        tokens = np.asarray(tokens)
        h = self.rnn.forward(p["E"][tokens[:-1]])  # (T, J)
        logits = h @ p["W_y"].T + p["b_y"]  # (T, V)
        # Shifting by the row max keeps exp's argument <= 0; the log of a sum >= 1 stays finite.
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_y = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        self._cache = (tokens, h, np.exp(log_y))
        return float(-log_y[np.arange(len(h)), tokens[1:]].sum())

    def backward(self) -> None:
        """self.grads ("E", "W_y", "b_y") and every layer's grads, for the last loss()."""
        tokens, h, y = self._cache
        d_logits = y.copy()  # (T, V): y_t - onehot(tokens[t + 1])
        d_logits[np.arange(len(h)), tokens[1:]] -= 1.0
        dx = self.rnn.backward(d_logits @ self.params["W_y"])  # (T, D)
        grad_E = np.zeros_like(self.params["E"])
        np.add.at(grad_E, tokens[:-1], dx)  # a repeated token gets the sum of its rows
        self.grads = {"E": grad_E, "W_y": d_logits.T @ h, "b_y": d_logits.sum(axis=0)}

    def named_grads(self) -> dict[str, np.ndarray]:
        """Every gradient under one name: "E", "W_y", "b_y" and "rnn.{l}.{key}"."""
        named = dict(self.grads)
        for l, layer in enumerate(self.rnn.layers):
            named.update({f"rnn.{l}.{k}": layer.grads[k] for k in layer.params})
        return named

    def step(self, lr: float, max_norm: float | None = None) -> float:
        """Clip every gradient jointly (when max_norm is given), then p -= lr * g; the norm before clipping."""
        grads = self.named_grads()
        if max_norm is None:
            total = math.sqrt(sum(float(np.sum(np.square(g))) for g in grads.values()))
        else:
            grads, total = clip_grad_norm(grads, max_norm)
        # New arrays rather than -=: the arrays in params may be someone else's.
        for k in self.params:
            self.params[k] = self.params[k] - lr * grads[k]
        for l, layer in enumerate(self.rnn.layers):
            for k in layer.params:
                layer.params[k] = layer.params[k] - lr * grads[f"rnn.{l}.{k}"]
        return total


def train(model: LSTMLM, sequences: list[np.ndarray], epochs: int, lr: float,
          rng: np.random.Generator, max_norm: float | None = None) -> list[float]:
    """SGD one sequence at a time, with optional clipping; per epoch, the mean loss per predicted token."""
    n_predicted = sum(len(s) - 1 for s in sequences)
    losses = []
    for _ in range(epochs):
        total = 0.0
        for k in rng.permutation(len(sequences)):
            total += model.loss(sequences[k])
            model.backward()
            model.step(lr, max_norm)
        losses.append(total / n_predicted)
    return losses
