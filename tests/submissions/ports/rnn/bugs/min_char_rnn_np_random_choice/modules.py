"""Module-based autodiff in the manner of Karpathy's min-char-rnn: plain
numpy, each backward written from the forward's cached values, the tanh
derivative taken from the output (1 - h * h) and the softmax gradient
built from the probabilities, as in the gist's "dy = ps; dy[target] -= 1"."""

from __future__ import annotations

import numpy as np


def _size(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


class Module:
    params: dict[str, np.ndarray]
    grads: dict[str, np.ndarray]

    def __init__(self):
        self.params = {}
        self.grads = {}

    def forward(self, *inputs):
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def backward(self, grad_out):
        raise NotImplementedError(f"{type(self).__name__}.backward")

    def __call__(self, *inputs):
        return self.forward(*inputs)


class Linear(Module):
    def __init__(self, in_features: int, out_features: int, rng: np.random.Generator):
        super().__init__()
        self.in_features = _size("in_features", in_features)
        self.out_features = _size("out_features", out_features)
        bound = 1.0 / np.sqrt(self.in_features)
        self.params["W"] = rng.uniform(-bound, bound, size=(self.out_features, self.in_features))
        self.params["b"] = np.zeros(self.out_features)

    def forward(self, x):
        x = np.array(x, dtype=np.float64)  # a copy: the caller's array stays untouched
        if x.ndim != 2 or x.shape[1] != self.in_features:
            raise ValueError(f"x must be (N, {self.in_features}), got {x.shape}")
        self.x = x
        return np.dot(x, self.params["W"].T) + self.params["b"]

    def backward(self, g):
        dy = np.asarray(g, dtype=np.float64)
        self.grads["W"] = np.dot(dy.T, self.x)
        self.grads["b"] = np.sum(dy, axis=0)
        return np.dot(dy, self.params["W"])


class Sigmoid(Module):
    def forward(self, x):
        x = np.asarray(x, dtype=np.float64)
        # exp of a non-positive number never overflows
        e = np.exp(-np.abs(x))
        self.h = np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        return self.h.copy()

    def backward(self, g):
        return np.asarray(g, dtype=np.float64) * self.h * (1 - self.h)


class Tanh(Module):
    def forward(self, x):
        self.h = np.tanh(np.asarray(x, dtype=np.float64))
        return self.h.copy()

    def backward(self, g):
        return (1 - self.h * self.h) * np.asarray(g, dtype=np.float64)


class Softmax(Module):
    def forward(self, x):
        ys = np.asarray(x, dtype=np.float64)
        if ys.ndim != 2:
            raise ValueError(f"x must be (N, K), got {ys.shape}")
        e = np.exp(ys - np.max(ys, axis=1, keepdims=True))
        self.ps = e / np.sum(e, axis=1, keepdims=True)
        return self.ps.copy()

    def backward(self, g):
        dp = np.asarray(g, dtype=np.float64)
        ps = self.ps
        return ps * (dp - np.sum(dp * ps, axis=1, keepdims=True))


class CrossEntropy(Module):
    def forward(self, probs, targets):
        ps = np.array(probs, dtype=np.float64)
        targets = np.asarray(targets)
        if ps.ndim != 2:
            raise ValueError(f"probs must be (N, K), got {ps.shape}")
        if targets.shape != (ps.shape[0],) or not np.issubdtype(targets.dtype, np.integer):
            raise ValueError(f"targets must be {ps.shape[0]} integers, got {targets!r}")
        if np.any(targets < 0) or np.any(targets >= ps.shape[1]):
            raise ValueError(f"targets must lie in [0, {ps.shape[1]})")
        self.ps, self.targets = ps, targets.copy()
        loss = 0.0
        for t in range(len(targets)):
            loss += -np.log(ps[t, targets[t]])
        return float(loss)

    def backward(self, g=1.0):
        dps = np.zeros_like(self.ps)
        for t in range(len(self.targets)):
            dps[t, self.targets[t]] = -g / self.ps[t, self.targets[t]]
        return dps
