"""Module-based autodiff in the manner of Stanford CS231n's layers.py: each
layer is a pair of functions, <layer>_forward returning (out, cache) and
<layer>_backward(dout, cache) returning the gradients, with weights laid
out (D, M) as in affine_forward. The modules below only hold the params and
the cache and call those functions."""

from __future__ import annotations

import numpy as np


def affine_forward(x, w, b):
    """x: (N, D), w: (D, M), b: (M,) -> out (N, M), cache."""
    out = x.reshape(x.shape[0], -1).dot(w) + b
    cache = (x, w, b)
    return out, cache


def affine_backward(dout, cache):
    """dout: (N, M) -> dx (N, D), dw (D, M), db (M,)."""
    x, w, b = cache
    dx = dout.dot(w.T).reshape(x.shape)
    dw = x.reshape(x.shape[0], -1).T.dot(dout)
    db = np.sum(dout, axis=0)
    return dx, dw, db


def sigmoid(x):
    """A numerically stable version of the logistic sigmoid function."""
    pos_mask = x >= 0
    neg_mask = x < 0
    z = np.zeros_like(x)
    z[pos_mask] = np.exp(-x[pos_mask])
    z[neg_mask] = np.exp(x[neg_mask])
    top = np.ones_like(x)
    top[neg_mask] = z[neg_mask]
    return top / (1 + z)


def sigmoid_forward(x):
    out = sigmoid(x)
    return out, out


def sigmoid_backward(dout, cache):
    out = cache
    return dout * out * (1 - out)


def tanh_forward(x):
    out = np.tanh(x)
    return out, out


def tanh_backward(dout, cache):
    out = cache
    return dout * (1 - out**2)


def softmax_forward(x):
    shifted_logits = x - np.max(x, axis=1, keepdims=True)
    Z = np.sum(np.exp(shifted_logits), axis=1, keepdims=True)
    probs = np.exp(shifted_logits - np.log(Z))
    return probs, probs


def softmax_backward(dout, cache):
    probs = cache
    return probs * (dout - np.sum(dout * probs, axis=1, keepdims=True))


def cross_entropy_forward(probs, y):
    """probs: (N, C) probabilities, y: (N,) labels -> summed loss, cache."""
    N = probs.shape[0]
    loss = -np.sum(np.log(probs[np.arange(N), y]))
    cache = (probs, y)
    return loss, cache


def cross_entropy_backward(dout, cache):
    probs, y = cache
    N = probs.shape[0]
    dx = np.zeros_like(probs)
    dx[np.arange(N), y] = -dout / probs[np.arange(N), y]
    return dx


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
        for name, n in (("in_features", in_features), ("out_features", out_features)):
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {n!r}")
        self.in_features, self.out_features = int(in_features), int(out_features)
        bound = 1 / np.sqrt(in_features)
        self.params["W"] = rng.uniform(-bound, bound, size=(out_features, in_features))
        self.params["b"] = np.zeros(out_features)

    def forward(self, x):
        x = np.array(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.in_features:
            raise ValueError(f"x must have shape (N, {self.in_features}), got {x.shape}")
        # affine_forward takes w as (D, M): the course's W is (M, D)
        out, self.cache = affine_forward(x, self.params["W"].T, self.params["b"])
        return out

    def backward(self, g):
        x, _, b = self.cache
        dx, dw, db = affine_backward(np.asarray(g, dtype=np.float64), (x, self.params["W"].T, b))
        self.grads["W"] = dw.T
        self.grads["b"] = db
        return dx


class Sigmoid(Module):
    def forward(self, x):
        out, self.cache = sigmoid_forward(np.array(x, dtype=np.float64))
        return out.copy()

    def backward(self, g):
        return sigmoid_backward(np.asarray(g, dtype=np.float64), self.cache)


class Tanh(Module):
    def forward(self, x):
        out, self.cache = tanh_forward(np.array(x, dtype=np.float64))
        return out.copy()

    def backward(self, g):
        return tanh_backward(np.asarray(g, dtype=np.float64), self.cache)


class Softmax(Module):
    def forward(self, x):
        x = np.array(x, dtype=np.float64)
        if x.ndim != 2:
            raise ValueError(f"x must have shape (N, K), got {x.shape}")
        out, self.cache = softmax_forward(x)
        return out.copy()

    def backward(self, g):
        return softmax_backward(np.asarray(g, dtype=np.float64), self.cache)


class CrossEntropy(Module):
    def forward(self, probs, targets):
        probs = np.array(probs, dtype=np.float64)
        y = np.array(targets)
        if probs.ndim != 2:
            raise ValueError(f"probs must have shape (N, K), got {probs.shape}")
        if y.shape != (probs.shape[0],) or not np.issubdtype(y.dtype, np.integer):
            raise ValueError(f"targets must be {probs.shape[0]} integers")
        if np.any(y < 0) or np.any(y >= probs.shape[1]):
            raise ValueError(f"targets must lie in [0, {probs.shape[1]})")
        loss, self.cache = cross_entropy_forward(probs, y)
        return float(loss)

    def backward(self, g=1.0):
        return cross_entropy_backward(g, self.cache)
