import numpy as np


class Module:
    """Base class: parameters and their gradients live in two dictionaries."""

    def __init__(self):
        self.params = {}
        self.grads = {}

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, grad_out):
        raise NotImplementedError

    def __call__(self, *inputs):
        return self.forward(*inputs)

    def _need(self, attr):
        value = getattr(self, attr, None)
        if value is None:
            raise RuntimeError("backward() needs a previous forward() call")
        return value


def _check_size(value, name):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError("%s must be an int, got %r" % (name, value))
    if value <= 0:
        raise ValueError("%s must be positive, got %r" % (name, value))
    return int(value)


class Linear(Module):
    def __init__(self, in_features, out_features, rng):
        super().__init__()
        fan_in = _check_size(in_features, "in_features")
        fan_out = _check_size(out_features, "out_features")
        gen = rng if rng is not None else np.random.default_rng()
        limit = 1.0 / np.sqrt(fan_in)
        self.params["W"] = gen.uniform(low=-limit, high=limit, size=(fan_out, fan_in))
        self.params["b"] = np.zeros((fan_out,), dtype=np.float64)
        self._x = None

    def forward(self, x):
        x = np.array(x, dtype=np.float64, copy=True)
        W, b = self.params["W"], self.params["b"]
        if x.ndim != 2:
            raise ValueError("Linear.forward expects a 2-D input (N, in_features)")
        if x.shape[1] != W.shape[1]:
            raise ValueError("expected %d input features, got %d" % (W.shape[1], x.shape[1]))
        self._x = x
        return np.matmul(x, W.T) + b

    def backward(self, grad_out):
        x = self._need("_x")
        g = np.asarray(grad_out, dtype=np.float64)
        self.grads = {"W": np.matmul(g.T, x), "b": np.sum(g, axis=0)}
        return np.matmul(g, self.params["W"])


class Sigmoid(Module):
    def __init__(self):
        super().__init__()
        self._y = None

    def forward(self, x):
        x = np.asarray(x, dtype=np.float64)
        # 1 / (1 + exp(-x)) = exp(-log(1 + exp(-x)))
        y = np.exp(-np.logaddexp(0.0, -x))
        self._y = y
        return y

    def backward(self, grad_out):
        y = self._need("_y")
        return np.asarray(grad_out, dtype=np.float64) * y * (1.0 - y)


class Tanh(Module):
    def __init__(self):
        super().__init__()
        self._y = None

    def forward(self, x):
        y = np.tanh(np.asarray(x, dtype=np.float64))
        self._y = y
        return y

    def backward(self, grad_out):
        y = self._need("_y")
        return np.asarray(grad_out, dtype=np.float64) * (1.0 - np.square(y))


class Softmax(Module):
    def __init__(self):
        super().__init__()
        self._y = None

    def forward(self, x):
        x = np.asarray(x, dtype=np.float64)
        top = x.max(axis=-1, keepdims=True)
        log_z = top + np.log(np.exp(x - top).sum(axis=-1, keepdims=True))
        y = np.exp(x - log_z)
        self._y = y
        return y

    def backward(self, grad_out):
        y = self._need("_y")
        g = np.asarray(grad_out, dtype=np.float64)
        # J = diag(y) - y y^T per row, applied to g
        return y * g - y * np.sum(y * g, axis=-1, keepdims=True)


class CrossEntropy(Module):
    def __init__(self):
        super().__init__()
        self._probs = None
        self._targets = None

    def forward(self, probs, targets):
        probs = np.asarray(probs, dtype=np.float64)
        targets = np.asarray(targets)
        if probs.ndim != 2:
            raise ValueError("probs must be 2-D (N, K)")
        if targets.shape != (probs.shape[0],):
            raise ValueError("targets must have shape (N,) matching probs")
        if targets.size > 0:
            if not np.issubdtype(targets.dtype, np.integer):
                raise ValueError("targets must hold integer class indices")
            if targets.min() < 0 or targets.max() >= probs.shape[1]:
                raise ValueError("targets must lie in [0, K)")
        targets = targets.astype(np.intp)
        chosen = np.take_along_axis(probs, targets[:, None], axis=1)[:, 0]
        with np.errstate(divide="ignore"):
            value = -np.log(chosen).sum()
        self._probs, self._targets = probs, targets
        return float(value)

    def backward(self, grad_out=1.0):
        probs = self._need("_probs")
        targets = self._targets
        grad = np.zeros(probs.shape, dtype=np.float64)
        idx = np.arange(probs.shape[0])
        with np.errstate(divide="ignore"):
            grad[idx, targets] = -1.0 / probs[idx, targets]
        return grad * float(grad_out)
