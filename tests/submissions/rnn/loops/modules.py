"""Small module-based autodiff library (numpy, float64)."""

import numpy as np


def _as_float_array(x, name="input"):
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be convertible to a float64 array") from exc
    return arr


class Module:
    def __init__(self):
        self.params = {}
        self.grads = {}
        self._cache = None

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, grad_out):
        raise NotImplementedError

    def __call__(self, *inputs):
        return self.forward(*inputs)

    def _cached(self):
        if self._cache is None:
            raise RuntimeError(f"{type(self).__name__}.backward called before forward")
        return self._cache


class Linear(Module):
    def __init__(self, in_features, out_features, rng):
        super().__init__()
        for name, value in (("in_features", in_features), ("out_features", out_features)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if rng is None:
            rng = np.random.default_rng()
        self.in_features = int(in_features)
        self.out_features = int(out_features)
        bound = 1.0 / np.sqrt(self.in_features)
        self.params["W"] = rng.uniform(-bound, bound, size=(self.out_features, self.in_features))
        self.params["b"] = np.zeros(self.out_features)

    def forward(self, x):
        x = _as_float_array(x, "x")
        W = self.params["W"]
        b = self.params["b"]
        if x.ndim != 2 or x.shape[1] != W.shape[1]:
            raise ValueError(f"Linear expects input of shape (N, {W.shape[1]}), got {x.shape}")
        self._cache = x
        return x @ W.T + b

    def backward(self, grad_out):
        x = self._cached()
        g = _as_float_array(grad_out, "grad_out")
        W = self.params["W"]
        if g.shape != (x.shape[0], W.shape[0]):
            raise ValueError(f"grad_out must have shape {(x.shape[0], W.shape[0])}, got {g.shape}")
        self.grads["W"] = g.T @ x
        self.grads["b"] = g.sum(axis=0)
        return g @ W


class Sigmoid(Module):
    def forward(self, x):
        x = _as_float_array(x, "x")
        e = np.exp(-np.abs(x))
        out = np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        self._cache = out
        return out

    def backward(self, grad_out):
        s = self._cached()
        return _as_float_array(grad_out, "grad_out") * s * (1.0 - s)


class Tanh(Module):
    def forward(self, x):
        out = np.tanh(_as_float_array(x, "x"))
        self._cache = out
        return out

    def backward(self, grad_out):
        t = self._cached()
        return _as_float_array(grad_out, "grad_out") * (1.0 - t * t)


class Softmax(Module):
    def forward(self, x):
        x = _as_float_array(x, "x")
        if x.ndim < 1:
            raise ValueError("Softmax expects an array of shape (N, K)")
        shifted = x - np.max(x, axis=-1, keepdims=True)
        e = np.exp(shifted)
        out = e / np.sum(e, axis=-1, keepdims=True)
        self._cache = out
        return out

    def backward(self, grad_out):
        s = self._cached()
        g = _as_float_array(grad_out, "grad_out")
        if g.shape != s.shape:
            raise ValueError(f"grad_out must have shape {s.shape}, got {g.shape}")
        inner = np.sum(g * s, axis=-1, keepdims=True)
        return s * (g - inner)


class CrossEntropy(Module):
    def forward(self, probs, targets):
        p = _as_float_array(probs, "probs")
        t = np.asarray(targets)
        if p.ndim != 2:
            raise ValueError(f"probs must have shape (N, K), got {p.shape}")
        if t.ndim != 1 or t.shape[0] != p.shape[0]:
            raise ValueError(f"targets must have shape ({p.shape[0]},), got {t.shape}")
        if t.size and not np.issubdtype(t.dtype, np.integer):
            raise ValueError("targets must be integers")
        t = t.astype(np.int64)
        if t.size and (t.min() < 0 or t.max() >= p.shape[1]):
            raise ValueError("targets out of range [0, K)")
        picked = p[np.arange(p.shape[0]), t]
        with np.errstate(divide="ignore"):
            loss = -np.sum(np.log(picked))
        self._cache = (p, t)
        return float(loss)

    def backward(self, grad_out=1.0):
        p, t = self._cached()
        g = float(grad_out)
        grad = np.zeros_like(p)
        rows = np.arange(p.shape[0])
        with np.errstate(divide="ignore"):
            grad[rows, t] = -g / p[rows, t]
        return grad
