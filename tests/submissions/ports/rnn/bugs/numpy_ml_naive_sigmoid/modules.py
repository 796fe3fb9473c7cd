"""Module-based autodiff in the manner of numpy-ml's neural_nets package:
activation objects with fn(z) and grad(x) (the derivative taken at the
layer input), layers with _fwd / _bwd helpers and a list X of retained
inputs, a softmax backward through each row's Jacobian
(diagflat(y) - y y^T), and a cross-entropy over one-hot targets."""

from __future__ import annotations

import numpy as np


class Module:
    params: dict[str, np.ndarray]
    grads: dict[str, np.ndarray]

    def __init__(self):
        self.params = {}
        self.grads = {}
        self.X = []

    def forward(self, *inputs):
        raise NotImplementedError(f"{type(self).__name__}.forward")

    def backward(self, grad_out):
        raise NotImplementedError(f"{type(self).__name__}.backward")

    def __call__(self, *inputs):
        return self.forward(*inputs)


class Linear(Module):
    """numpy-ml's FullyConnected without an activation: Z = X W^T + b."""

    def __init__(self, in_features: int, out_features: int, rng: np.random.Generator):
        super().__init__()
        for name, n in (("in_features", in_features), ("out_features", out_features)):
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise ValueError(f"{name} must be a positive integer, got {n!r}")
        self.n_in = int(in_features)
        self.n_out = int(out_features)
        self._init_params(rng)

    def _init_params(self, rng):
        b = 1 / np.sqrt(self.n_in)
        W = rng.uniform(-b, b, size=(self.n_out, self.n_in))
        self.params = {"W": W, "b": np.zeros(self.n_out)}
        self.grads = {"W": np.zeros_like(W), "b": np.zeros(self.n_out)}

    def forward(self, X):
        X = np.array(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_in:
            raise ValueError(f"X must be (n_ex, {self.n_in}), got {X.shape}")
        Y = self._fwd(X)
        self.X = [X]
        return Y

    def _fwd(self, X):
        W = self.params["W"]
        b = self.params["b"]
        return X @ W.T + b

    def backward(self, dLdy):
        dX, dW, dB = self._bwd(np.asarray(dLdy, dtype=np.float64), self.X[0])
        self.grads["W"] = dW
        self.grads["b"] = dB
        return dX

    def _bwd(self, dLdy, X):
        W = self.params["W"]
        dX = dLdy @ W
        dW = dLdy.T @ X
        dB = dLdy.sum(axis=0)
        return dX, dW, dB


class Sigmoid(Module):
    """A logistic sigmoid activation function."""

    def __str__(self):
        return "Sigmoid"

    def fn(self, z):
        return 1 / (1 + np.exp(-z))

    def grad(self, x):
        fn_x = self.fn(x)
        return fn_x * (1 - fn_x)

    def forward(self, z):
        z = np.array(z, dtype=np.float64)
        self.X = [z]
        return self.fn(z)

    def backward(self, dLdy):
        return self.grad(self.X[0]) * dLdy


class Tanh(Module):
    """A hyperbolic tangent activation function."""

    def __str__(self):
        return "Tanh"

    def fn(self, z):
        return np.tanh(z)

    def grad(self, x):
        return 1 - np.tanh(x) ** 2

    def forward(self, z):
        z = np.array(z, dtype=np.float64)
        self.X = [z]
        return self.fn(z)

    def backward(self, dLdy):
        return self.grad(self.X[0]) * dLdy


class Softmax(Module):
    """A softmax nonlinearity over the last axis of a (n_ex, n_in) batch."""

    def forward(self, X):
        X = np.array(X, dtype=np.float64)
        if X.ndim != 2:
            raise ValueError(f"X must be (n_ex, n_in), got {X.shape}")
        self.X = [X]
        return self._fwd(X)

    def _fwd(self, X):
        # center data to avoid overflow
        e_X = np.exp(X - np.max(X, axis=-1, keepdims=True))
        return e_X / e_X.sum(axis=-1, keepdims=True)

    def backward(self, dLdy):
        return self._bwd(np.asarray(dLdy, dtype=np.float64), self.X[0])

    def _bwd(self, dLdy, X):
        dX = []
        for dyi, xi in zip(dLdy, X):
            yi = self._fwd(xi.reshape(1, -1)).reshape(-1, 1)
            dyidxi = np.diagflat(yi) - yi @ yi.T  # jacobian wrt. input sample xi
            dX.append(dyi @ dyidxi)
        return np.array(dX).reshape(*X.shape)


class CrossEntropy(Module):
    """The sum (not the average) of the cross-entropy of every example."""

    def forward(self, probs, targets):
        y_pred = np.array(probs, dtype=np.float64)
        targets = np.asarray(targets)
        if y_pred.ndim != 2:
            raise ValueError(f"probs must be (n, m), got {y_pred.shape}")
        if targets.shape != (y_pred.shape[0],) or not np.issubdtype(targets.dtype, np.integer):
            raise ValueError(f"targets must be {y_pred.shape[0]} integer labels")
        if np.any(targets < 0) or np.any(targets >= y_pred.shape[1]):
            raise ValueError(f"targets must lie in [0, {y_pred.shape[1]})")
        y = np.zeros_like(y_pred)
        y[np.arange(len(targets)), targets] = 1  # one-hot labels
        self.X = [y, y_pred]
        return float(self.loss(y, y_pred))

    @staticmethod
    def loss(y, y_pred):
        # sum the negative log probability of the correct label over all samples
        return -np.sum(np.log(y_pred[y == 1]))

    @staticmethod
    def grad(y, y_pred):
        """The gradient with regard to the probabilities y_pred themselves."""
        grad = np.zeros_like(y_pred)
        grad[y == 1] = -1 / y_pred[y == 1]
        return grad

    def backward(self, dLdy=1.0):
        y, y_pred = self.X
        return dLdy * self.grad(y, y_pred)
