"""elman.py answered with the filler: every answer shaped like the contract's, none computed."""

from __future__ import annotations

import numpy as np
from fill import _causal, _draw, _real


def _check_size(value, name):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


def _check_activation(activation):
    if activation not in ("sigmoid", "tanh"):
        raise ValueError(f"activation must be 'sigmoid' or 'tanh', got {activation!r}")


def _shapes(I, J, K):
    return {"W_ah": (J, J), "W_ax": (J, I), "b_a": (J,), "W_yh": (K, J), "b_y": (K,)}


class ElmanRNN:
    def __init__(self, input_size, hidden_size, output_size, activation="sigmoid", rng=None):
        for value, name in ((input_size, "input_size"), (hidden_size, "hidden_size"), (output_size, "output_size")):
            _check_size(value, name)
        _check_activation(activation)
        self.activation = activation
        self.params = {
            k: _real(s, k, input_size, hidden_size) for k, s in _shapes(input_size, hidden_size, output_size).items()
        }
        self.grads = {}
        self._seen = ()

    def _run(self, x, h0):
        x = np.array(x, dtype=np.float64)
        J, K = self.params["W_ah"].shape[0], self.params["W_yh"].shape[0]
        h0 = np.zeros(J) if h0 is None else np.array(h0, dtype=np.float64)
        stamp = (h0, self.params, self.activation)
        self.hidden = _causal(x, J, "hidden", *stamp, lo=0.0, hi=1.0)
        probs = _causal(x, K, "probs", *stamp, lo=0.05, hi=1.0)
        return x, h0, probs / probs.sum(axis=-1, keepdims=True)

    def forward(self, x, h0=None):
        return self._run(x, h0)[2]

    def loss(self, x, targets, h0=None):
        x, h0, _ = self._run(x, h0)
        targets = np.array(targets)
        self._seen = (x, h0, targets, self.params)
        return _real((), *self._seen, lo=0.0, hi=3.0 * len(targets) + 1)

    def backward(self):
        self.grads = {key: _real(value.shape, key, *self._seen) for key, value in self.params.items()}
        self.grad_h0 = _real((self.params["W_ah"].shape[0],), "h0", *self._seen)
        return self.grads


class RNNLM(ElmanRNN):
    def __init__(self, vocab_size, embed_dim, hidden_size, activation="sigmoid", rng=None):
        super().__init__(embed_dim, hidden_size, vocab_size, activation, rng)
        self.params["E"] = _real((vocab_size, embed_dim), "E")

    def loss(self, tokens):
        tokens = np.array(tokens)
        V = self.params["E"].shape[0]
        if tokens.ndim != 1 or len(tokens) < 2 or tokens.min() < 0 or tokens.max() >= V:
            raise ValueError("tokens must be at least 2 ids in [0, V)")
        self._seen = (tokens, self.params)
        return _real((), *self._seen, lo=0.0, hi=3.0 * len(tokens))

    def backward(self):
        self.grads = {key: _real(value.shape, key, *self._seen) for key, value in self.params.items()}
        return self.grads

    def sgd_step(self, lr):
        if not np.isfinite(lr):
            raise ValueError(f"lr must be finite, got {lr!r}")
        self.params = {key: _real(value.shape, key, lr, self.params, self.grads) for key, value in self.params.items()}

    def sample(self, rng, start, max_len, end=None):
        V = self.params["E"].shape[0]
        if not 0 <= start < V or (end is not None and not 0 <= end < V) or max_len < 0:
            raise ValueError("start and end must be ids in [0, V) and max_len >= 0")
        drawn = []
        for token in _draw(rng, range(V), max_len):
            drawn.append(token)
            if token == end:
                break
        return drawn


def train(model, sequences, epochs, lr, rng):
    if epochs < 0 or not np.isfinite(lr) or not len(sequences):
        raise ValueError("epochs must be >= 0, lr finite and sequences not empty")
    return [_real((), "epoch", e, [np.asarray(s) for s in sequences], lr, lo=0.5, hi=4.0) for e in range(epochs)]
