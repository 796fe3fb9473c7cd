"""modules.py answered with the filler: every answer shaped like the contract's, none computed."""

from __future__ import annotations

import numpy as np
from fill import _probs, _real


def _check_size(value, name):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


class Module:
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
    def __init__(self, in_features, out_features, rng):
        super().__init__()
        _check_size(in_features, "in_features")
        _check_size(out_features, "out_features")
        bound = 1 / np.sqrt(in_features)
        self.params["W"] = _real((out_features, in_features), "W", lo=-bound, hi=bound)
        self.params["b"] = _real((out_features,), "b", lo=-bound, hi=bound)
        self._x = np.zeros((0, in_features))

    def forward(self, x):
        x = np.array(x, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.params["W"].shape[1]:
            raise ValueError(f"x must be (N, {self.params['W'].shape[1]}), got {x.shape}")
        self._x = x
        return _real((x.shape[0], self.params["W"].shape[0]), x, self.params)

    def backward(self, g):
        g = np.asarray(g, dtype=np.float64)
        self.grads = {key: _real(value.shape, key, g, self._x, self.params) for key, value in self.params.items()}
        return _real(self._x.shape, g, self._x, self.params)


class _Elementwise(Module):
    low, high = -1.0, 1.0

    def forward(self, x):
        self._x = np.array(x, dtype=np.float64)
        return _real(self._x.shape, self._x, type(self).__name__, lo=self.low, hi=self.high)

    def backward(self, g):
        g = np.asarray(g, dtype=np.float64)
        return _real(g.shape, g, self._x, type(self).__name__)


class Sigmoid(_Elementwise):
    low, high = 0.0, 1.0


class Tanh(_Elementwise):
    pass


class Softmax(Module):
    def forward(self, x):
        self._x = np.array(x, dtype=np.float64)
        return _probs(self._x.shape, self._x)

    def backward(self, g):
        g = np.asarray(g, dtype=np.float64)
        return _real(g.shape, g, self._x)


class CrossEntropy(Module):
    def forward(self, probs, targets):
        self._probs = np.array(probs, dtype=np.float64)
        self._targets = np.array(targets)
        if self._probs.ndim != 2 or self._targets.shape != self._probs.shape[:1]:
            raise ValueError("probs must be (N, K) and targets (N,)")
        return _real((), self._probs, self._targets, lo=0.0, hi=10.0 * len(self._targets) + 1)

    def backward(self, g=1.0):
        return _real(self._probs.shape, g, self._probs, self._targets, lo=-5.0, hi=0.0)
